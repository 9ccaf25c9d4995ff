#!/usr/bin/env bash
# A full disk, for real: every output on a tmpfs filled to the last byte. Each verb
# exits 1 with one line naming the output and the cause ("No space left on
# device"), and nothing of the output remains. Before: synth --keep-log exited 0
# with a perf.data of a fifth of the run (QEMU's log was cut and nobody said);
# synth --out perf, --aux-log, --truth and boards fixture left partial files under
# their final names; aux --timeline left an empty file; report's formats and merge
# said "input/output error" without the file.
# Mounting needs root: without it the stream outputs are checked on /dev/full and
# the rest is skipped (exit 77).
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
SAMPLE=$CSTRACE_SOURCE_DIR/testdata/sample/a64-loop
FULL=$TMP/full
mkdir -p "$FULL"
mounted=0
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=64k,nr_inodes=1k tmpfs "$FULL" 2>/dev/null; then
	mounted=1
	trap 'umount "$FULL"; rm -rf "$TMP"' EXIT
	# to the last block: any write now fails (creating a file still works)
	dd if=/dev/zero of="$FULL/fill" bs=4k 2>/dev/null
	[ "$(df --output=avail "$FULL" | tail -1)" -eq 0 ] || fail "the tmpfs is not full"
fi
ls_full() { ls -A "$FULL" | grep -v '^fill$'; }

# full DESC OUT CMD...: exit 1, one line naming OUT with ENOSPC, nothing left
full() {
	local d=$1 out=$2
	shift 2
	"$@" >"$TMP/stdout" 2>"$TMP/err"
	local rc=$?
	checks=$((checks + 3))
	[ "$rc" -eq 1 ] || fail "$d: exit $rc, expected 1"
	[ "$(grep -vc '^cstrace: warning:' "$TMP/err")" -eq 1 ] &&
		grep -q "$out.*No space left on device" "$TMP/err" ||
		fail "$d: not one line naming $out and the cause: $(head -c 400 "$TMP/err")"
	if [ "$mounted" = 1 ] && [ -n "$(ls_full)" ]; then
		fail "$d: left $(ls_full | tr '\n' ' ')"
		find "$FULL" -mindepth 1 -maxdepth 1 ! -name fill -exec rm -rf {} +
	fi
}

quiet "$CSTRACE" replay -q -o "$TMP/n.data" "$CSTRACE_SOURCE_DIR/testdata/auxlog/normal.auxlog" ||
	fail "replay"
printf 'main;f 10\nmain;g 5\n' >"$TMP/a.folded"

# stream outputs: on /dev/full whether or not a tmpfs could be mounted
if [ -w /dev/full ]; then
	for f in text json csv folded lcov html coverage perfetto flamegraph; do
		full "report --format=$f -o /dev/full" /dev/full \
			"$CSTRACE" report --format=$f -o /dev/full "$SAMPLE"
	done
	full "merge -o /dev/full" /dev/full "$CSTRACE" merge -o /dev/full "$TMP/a.folded" "$TMP/a.folded"
	full "aux --timeline /dev/full" /dev/full "$CSTRACE" aux --summary --timeline /dev/full "$TMP/n.data"
	full "decode -o /dev/full" /dev/full "$CSTRACE" decode -o /dev/full "$SAMPLE"
fi
if [ "$mounted" = 0 ]; then
	[ "$fails" -eq 0 ] || finish
	skip "no tmpfs could be mounted (needs root): only /dev/full was checked"
fi

for f in text json csv folded lcov html coverage perfetto flamegraph; do
	full "report --format=$f -o FULL" "$FULL/r.$f" \
		"$CSTRACE" report --format=$f -o "$FULL/r.$f" "$SAMPLE"
done
full "decode -o FULL" "$FULL/d.txt" "$CSTRACE" decode -o "$FULL/d.txt" "$SAMPLE"
full "script -o FULL" "$FULL/s.txt" "$CSTRACE" script -o "$FULL/s.txt" "$SAMPLE"
full "merge -o FULL" "$FULL/m.folded" "$CSTRACE" merge -o "$FULL/m.folded" "$TMP/a.folded" "$TMP/a.folded"
full "aux --timeline FULL (perf.data)" "$FULL/t.svg" \
	"$CSTRACE" aux --summary --timeline "$FULL/t.svg" "$TMP/n.data"
full "aux --timeline FULL (stream)" "$FULL/t.svg" "$CSTRACE" aux --summary --timeline "$FULL/t.svg" \
	"$CSTRACE_SOURCE_DIR/testdata/auxlog/normal.auxlog"
full "boards fixture FULL" "$FULL/fx" "$CSTRACE" boards fixture juno-r1 "$FULL/fx"

prog=$CSTRACE_BUILD_DIR/testdata/aarch64/loop
if [ -x "$prog" ] && command -v qemu-aarch64 >/dev/null; then
	s() { "$CSTRACE" synth --arch aarch64 "$@"; }
	full "synth --keep-log FULL" "$FULL/q.log" s --keep-log "$FULL/q.log" -o "$TMP/s1" -- "$prog"
	check "synth --keep-log FULL: no snapshot either" test ! -e "$TMP/s1"
	full "synth --out perf -o FULL" "$FULL/x.data" s --out perf -o "$FULL/x.data" -- "$prog"
	full "synth --truth FULL" "$FULL/t" s --truth "$FULL/t" -o "$TMP/s2" -- "$prog"
	check "synth --truth FULL: no snapshot either" test ! -e "$TMP/s2"
	full "synth --plugin --keep-log FULL" "$FULL/p.log" \
		s --plugin --keep-log "$FULL/p.log" -o "$TMP/s3" -- "$prog"
	full "synth with TMPDIR full" "QEMU's log" env TMPDIR="$FULL" \
		"$CSTRACE" synth --arch aarch64 -o "$TMP/s4" -- "$prog"
	# the perf.data is whole and stays; the stream that could not be written goes
	"$CSTRACE" synth --arch aarch64 --out perf --aux-log "$FULL/a.log" -o "$TMP/y.data" \
		-- "$prog" >/dev/null 2>"$TMP/err"
	check "synth --aux-log FULL: exit 1" test $? -eq 1
	check "synth --aux-log FULL: names it and why" \
		grep -q "$FULL/a.log.*No space left on device" "$TMP/err"
	check "synth --aux-log FULL: nothing left there" test -z "$(ls_full)"
else
	echo "note: synth not checked (no $prog or qemu-aarch64)"
fi
finish
