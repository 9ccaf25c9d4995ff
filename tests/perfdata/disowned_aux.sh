#!/usr/bin/env bash
# AUXTRACE bytes the file's own AUX records disown: a record taken out leaves its
# bytes covered by none (perf 6.1 skips them), a record written twice claims its
# bytes twice (perf decodes them twice). cstrace decodes every byte once and warns,
# naming the records. A synth run with several AUX records (a small sink) is
# mutated with disown.py; each mutation must decode to the very instructions of
# the unmutated file, which are QEMU's, in file order and in time order, on one
# thread and on several, exit 0, with the warning; perf's count shows the loss or
# the double count.
# Usage: disowned_aux.sh ARCH PROG [synth options...]
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
arch=$1; prog=$2; shift 2
need_synth "$arch" "$prog"
. "$CSTRACE_SOURCE_DIR/tests/decode/threads_lib.sh"
mut() { python3 "$CSTRACE_SOURCE_DIR/tests/perfdata/disown.py" "$@"; }
have_perf=false
command -v perf >/dev/null && perf version >/dev/null 2>&1 && have_perf=true

check "synth snapshot (QEMU's ground truth)" "$CSTRACE" synth --arch "$arch" -o "$TMP/snap" \
	--truth "$TMP/truth" --keep-log "$TMP/qemu.log" -- "$prog"
check "synth perf.data from the same run" sh -c \
	'c=$0 a=$1 t=$2 p=$3; shift 3; "$c" synth --arch "$a" --out perf -o "$t/base.data" --from-log "$t/qemu.log" "$@" -- "$p" 2> "$t/stats"' \
	"$CSTRACE" "$arch" "$TMP" "$prog" "$@"
cat "$TMP/stats"
qemu=$(cat "$TMP"/truth "$TMP"/truth.[0-9]* 2>/dev/null | wc -l)
records=$(sed -n 's/.* \([0-9]*\) AUX records.*/\1/p' "$TMP/stats")
check "no trace lost: the decode can be QEMU's" grep -q " 0 lost" "$TMP/stats"
[ "${records:-0}" -ge 3 ] || fail "$records AUX records: the test needs at least 3"

# ORDER FILE: the instruction lines of FILE (script --raw --insn), kept in
# FILE.ORDER.insn, its messages in .err and exit status in .rc
insns() {
	"$CSTRACE" script --raw --insn --order "$1" "$2" > "$2.$1.insn" 2> "$2.$1.err"
	echo $? > "$2.$1.rc"
}
for order in file time; do
	insns $order "$TMP/base.data"
	n=$(wc -l < "$TMP/base.data.$order.insn")
	check "unmutated, $order order: QEMU's $qemu instructions ($n)" [ "$n" -eq "$qemu" ]
	check "unmutated, $order order: nothing said: $(head -c 300 "$TMP/base.data.$order.err")" \
		test ! -s "$TMP/base.data.$order.err"
done
pcount() { perf script -i "$1" --itrace=i1i -F ip 2> /dev/null | wc -l; }
$have_perf && pbase=$(pcount "$TMP/base.data")

# disowned NAME FILE BASE PERF WARNING: FILE decodes to BASE's instructions (the
# same lines in time order, the same set of lines in file order, where bytes no
# record covers come at the end), exit 0, saying WARNING (a grep -E pattern); perf's
# count is lower (PERF "<") or higher (">") than BASE's
disowned() {
	local name=$1 f=$2 base=$3 cmp=$4 warning=$5 order n p
	for order in time file; do
		insns $order "$f"
		n=$(wc -l < "$f.$order.insn")
		check "$name, $order order: exit 0" [ "$(cat "$f.$order.rc")" -eq 0 ]
		check "$name, $order order: the unmutated file's $(wc -l < "$base.$order.insn") instructions ($n)" \
			[ "$n" -eq "$(wc -l < "$base.$order.insn")" ]
		check "$name, $order order: warned: $(head -c 400 "$f.$order.err")" \
			grep -Eq "^cstrace: warning: $f: $warning\$" "$f.$order.err"
		check "$name, $order order: nothing else said" [ "$(wc -l < "$f.$order.err")" -eq 1 ]
	done
	check "$name, time order: the same lines in the same order" \
		cmp -s "$f.time.insn" "$base.time.insn"
	check "$name, file order: the same lines, none twice" \
		cmp -s <(sort "$f.file.insn") <(sort "$base.file.insn")
	if $have_perf; then
		p=$(pcount "$f")
		check "$name: perf 6.1 counts $p, $cmp the $(pcount "$base") it counts unmutated" \
			[ "$p" "$([ "$cmp" = "<" ] && echo -lt || echo -gt)" "$(pcount "$base")" ]
	fi
	same "$name" "$f" "decode --format=none --stats,script --raw --insn,report" "256" --order time
	same "$name" "$f" "decode --format=jsonl,script" "256" --order file
}
one() { sed -n "s/.*$1=\\([^ ]*\\).*/\\1/p" "$TMP/said"; }
aux_said='AUXTRACE record \(cpu [0-9]+, aux offset 0x[0-9a-f]+, [0-9]+ bytes\)'

# A record in the middle taken out: its buffer is covered by none; decoded before the
# next record of its ring, in file order too
mut "$TMP/base.data" "$TMP/mid.data" drop-aux 1 > "$TMP/said"
disowned "AUX record 1 taken out" "$TMP/mid.data" "$TMP/base.data" "<" \
	"offset $(one auxtrace): AUXTRACE record \(cpu $(one cpu), aux offset $(one aux_offset), $(one size) bytes\): no AUX record covers its trace; perf skips it, cstrace decodes it"
# The last: decoded at the end of the walk
mut "$TMP/base.data" "$TMP/last.data" drop-aux -1 > "$TMP/said"
disowned "the last AUX record taken out" "$TMP/last.data" "$TMP/base.data" "<" \
	"offset $(one auxtrace): AUXTRACE record \(cpu $(one cpu), aux offset $(one aux_offset), $(one size) bytes\): no AUX record covers its trace; perf skips it, cstrace decodes it"
# A record written twice: its trace decoded once
mut "$TMP/base.data" "$TMP/dup.data" dup-aux 1 > "$TMP/said"
disowned "AUX record 1 twice" "$TMP/dup.data" "$TMP/base.data" ">" \
	"offset $(one dup): AUX record \(cpu [0-9]+, aux offset 0x[0-9a-f]+, $(one size) bytes\): its trace was decoded for the AUX record at offset $(one aux); skipped \(perf decodes it twice\)"

# One AUXTRACE buffer read for two records (two sched-outs, one read of the ring):
# the first half taken out leaves bytes inside the buffer that none covers, and
# the second half moved back over the first repeats part of its trace.
mut "$TMP/base.data" "$TMP/split.data" split-aux 1 > /dev/null
for order in file time; do insns $order "$TMP/split.data"; done
mut "$TMP/split.data" "$TMP/half.data" drop-aux 1 > "$TMP/said"
disowned "half a buffer's records taken out" "$TMP/half.data" "$TMP/split.data" "<" \
	"offset $(one auxtrace): $aux_said: no AUX record covers its $(one size) bytes at aux offset $(one aux_offset); perf skips them, cstrace decodes them"
mut "$TMP/split.data" "$TMP/widen.data" widen-aux 2 > "$TMP/said"
disowned "a record over the one before" "$TMP/widen.data" "$TMP/split.data" ">" \
	"offset $(one dup): AUX record \(cpu [0-9]+, aux offset 0x[0-9a-f]+, [0-9]+ bytes\): its first $(one bytes) bytes were decoded for the AUX record at offset $(one aux); decoding the other [0-9]+ \(perf decodes those $(one bytes) twice\)"
$have_perf || echo "perf not installed: perf's counts not checked"
finish
