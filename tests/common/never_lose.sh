#!/usr/bin/env bash
# No output replaces a file the command reads, whichever option named either and
# however it is spelt (the same name, a symlink, a hard link): one line naming
# both, exit 1, the input as it was. Before, `report --elf prog -o prog`,
# `decode --image F@A -o F`, `decode -o SNAP/cstrace.bin SNAP` (or its mem_0.bin,
# snapshot.ini) and `aux --timeline X.data X.data` destroyed the input and exited 0.
# Outputs written with plain fopen (aux --timeline, synth --truth and --keep-log,
# synth's code pages beside a perf.data) followed a symlink at their name and were
# 0644: now a symlink there is replaced, never written through, and what holds a
# program's trace, code or run is 0600.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
SAMPLE=$CSTRACE_SOURCE_DIR/testdata/sample/a64-loop
sum() { find "$@" -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum; }

# refused DESC INPUT... -- CMD...: CMD exits 1 with one line naming the output as
# an input, and every INPUT (file or directory) is as it was
refused() {
	local d=$1 before
	shift
	local inputs=()
	while [ "$1" != -- ]; do inputs+=("$1"); shift; done
	shift
	before=$(sum "${inputs[@]}")
	"$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	checks=$((checks + 3))
	[ "$rc" -eq 1 ] || fail "$d: exit $rc, expected 1"
	# warnings about the inputs may come first; the error is one line
	[ "$(grep -vc '^cstrace: warning:' "$TMP/err")" -eq 1 ] &&
		grep -q "is the input.*refusing to overwrite it" "$TMP/err" ||
		fail "$d: not one line saying so: $(head -c 300 "$TMP/err")"
	[ "$(sum "${inputs[@]}")" = "$before" ] || fail "$d: an input changed"
}

cp -r "$SAMPLE" "$TMP/snap"
chmod -R u+w "$TMP/snap"
for f in cstrace.bin mem_0.bin snapshot.ini trace.ini cpu_0.ini device_1.ini; do
	refused "decode -o SNAP/$f SNAP" "$TMP/snap" -- "$CSTRACE" decode -o "$TMP/snap/$f" "$TMP/snap"
done
refused "script -o SNAP/mem_0.bin SNAP" "$TMP/snap" -- "$CSTRACE" script -o "$TMP/snap/mem_0.bin" "$TMP/snap"
refused "report -o SNAP/cstrace.bin SNAP" "$TMP/snap" -- \
	"$CSTRACE" report --format=lcov -o "$TMP/snap/cstrace.bin" "$TMP/snap"
# a snapshot that names its dump through a symlink: the file behind it is an input
mkdir -p "$TMP/dumps"
mv "$TMP/snap/mem_0.bin" "$TMP/dumps/code.bin"
ln -s ../dumps/code.bin "$TMP/snap/mem_0.bin"
refused "decode -o DUMP (named by the snapshot through a symlink)" "$TMP/dumps" -- \
	"$CSTRACE" decode -o "$TMP/dumps/code.bin" "$TMP/snap"

# a raw dump with --image: the image file, by its name and by a hard link
regs=traceid=0x10,trcconfigr=0x41,trcidr0=0x28000EA1,trcidr1=0x4100F403,trcidr2=0x488,core=Cortex-A53
cp "$SAMPLE/cstrace.bin" "$TMP/raw.bin"
cp "$SAMPLE/mem_0.bin" "$TMP/image.bin"
ln "$TMP/image.bin" "$TMP/image.hard"
refused "decode --image F@A -o F" "$TMP/image.bin" -- \
	"$CSTRACE" decode --etmv4 "$regs" --image "$TMP/image.bin@0x400000" -o "$TMP/image.bin" "$TMP/raw.bin"
refused "decode --image F@A -o HARDLINK" "$TMP/image.bin" -- \
	"$CSTRACE" decode --etmv4 "$regs" --image "$TMP/image.bin@0x400000" -o "$TMP/image.hard" "$TMP/raw.bin"
refused "decode -o TRACE TRACE" "$TMP/raw.bin" -- \
	"$CSTRACE" decode --etmv4 "$regs" -o "$TMP/raw.bin" "$TMP/raw.bin"

# --elf, --kallsyms, --vmlinux and --symdir files
elf=$CSTRACE_BUILD_DIR/tests/perfdata/a64.elf
if [ -f "$elf" ]; then
	cp "$elf" "$TMP/prog"
	refused "report --elf prog -o prog" "$TMP/prog" -- \
		"$CSTRACE" report --elf "$TMP/prog" -o "$TMP/prog" "$SAMPLE"
	refused "report --elf prog@ADDR -o prog (json)" "$TMP/prog" -- \
		"$CSTRACE" report --format=json --elf "$TMP/prog@0x400000" -o "$TMP/prog" "$SAMPLE"
	ln -s prog "$TMP/prog.link"
	refused "script --elf prog -o SYMLINK-TO-prog" "$TMP/prog" -- \
		"$CSTRACE" script --elf "$TMP/prog" -o "$TMP/prog.link" "$SAMPLE"
	mkdir -p "$TMP/symdir/sub"
	cp "$elf" "$TMP/symdir/sub/prog"
	refused "report --symdir D -o D/sub/prog" "$TMP/symdir" -- \
		"$CSTRACE" report --symdir "$TMP/symdir" -o "$TMP/symdir/sub/prog" "$SAMPLE"
fi
printf 'ffffffc010000000 T _stext\n' >"$TMP/kallsyms"
refused "report --kallsyms K -o K" "$TMP/kallsyms" -- \
	"$CSTRACE" report --kallsyms "$TMP/kallsyms" -o "$TMP/kallsyms" "$SAMPLE"

# aux --timeline over the perf.data, the stream or the ftrace text it reads
quiet "$CSTRACE" replay -q -o "$TMP/n.data" "$CSTRACE_SOURCE_DIR/testdata/auxlog/normal.auxlog" ||
	fail "replay"
ln -s n.data "$TMP/n.link"
refused "aux --timeline X.data X.data" "$TMP/n.data" -- "$CSTRACE" aux --timeline "$TMP/n.data" "$TMP/n.data"
refused "aux --timeline SYMLINK X.data" "$TMP/n.data" -- "$CSTRACE" aux --timeline "$TMP/n.link" "$TMP/n.data"
cp "$CSTRACE_SOURCE_DIR/testdata/auxlog/normal.auxlog" "$TMP/s.auxlog"
refused "aux --timeline STREAM STREAM" "$TMP/s.auxlog" -- \
	"$CSTRACE" aux --timeline "$TMP/s.auxlog" "$TMP/s.auxlog"

# merge: any of its inputs
printf 'main;f 10\n' >"$TMP/a.folded"
printf 'main;g 5\n' >"$TMP/b.folded"
refused "merge -o IN2 IN1 IN2" "$TMP/a.folded" "$TMP/b.folded" -- \
	"$CSTRACE" merge -o "$TMP/b.folded" "$TMP/a.folded" "$TMP/b.folded"

# record: the program it runs (checked before any event is opened: no hardware needed)
cp "$CSTRACE_SOURCE_DIR/testdata/sample/make-a64-loop.sh" "$TMP/p"
chmod +x "$TMP/p"
ln "$TMP/p" "$TMP/p.hard"
refused "record -o PROG -- PROG" "$TMP/p" -- "$CSTRACE" record -o "$TMP/p.hard" -- "$TMP/p"
refused "record --aux-log PROG -- PROG" "$TMP/p" -- \
	"$CSTRACE" record --aux-log "$TMP/p" -o "$TMP/r.data" -- "$TMP/p"

# synth's outputs against what it reads (checked before QEMU runs: no QEMU needed)
refused "synth -o PROG -- PROG" "$TMP/p" -- "$CSTRACE" synth --arch aarch64 -o "$TMP/p" -- "$TMP/p"
refused "synth --truth PROG" "$TMP/p" -- \
	"$CSTRACE" synth --arch aarch64 --truth "$TMP/p.hard" -o "$TMP/x" -- "$TMP/p"
refused "synth --keep-log PROG" "$TMP/p" -- \
	"$CSTRACE" synth --arch aarch64 --keep-log "$TMP/p" -o "$TMP/x" -- "$TMP/p"
printf 'not a log\n' >"$TMP/old.log"
refused "synth --out perf -o LOG --from-log LOG" "$TMP/old.log" -- \
	"$CSTRACE" synth --arch aarch64 --out perf --from-log "$TMP/old.log" -o "$TMP/old.log" -- "$TMP/p"

# a symlink at an output's name is replaced, never written through
echo precious >"$TMP/victim"
ln -s victim "$TMP/t.svg"
"$CSTRACE" aux --timeline "$TMP/t.svg" "$TMP/n.data" >/dev/null 2>"$TMP/err"
check "aux --timeline over a symlink: exit 0 ($(head -1 "$TMP/err"))" test $? -eq 0
check "aux --timeline over a symlink: its target untouched" grep -qx precious "$TMP/victim"
check "aux --timeline over a symlink: the SVG replaced the link" \
	bash -c "[ ! -L '$TMP/t.svg' ] && grep -q '<svg' '$TMP/t.svg'"

# synth's side outputs: 0600, never through a symlink (needs QEMU and the test program)
prog=$CSTRACE_BUILD_DIR/testdata/aarch64/signal
if [ -x "$prog" ] && command -v qemu-aarch64 >/dev/null; then
	for f in truth keep.log out.data; do
		echo precious >"$TMP/victim.$f"
		ln -s "victim.$f" "$TMP/$f"
	done
	"$CSTRACE" synth --arch aarch64 --out perf --truth "$TMP/truth" --keep-log "$TMP/keep.log" \
		-o "$TMP/out.data" -- "$prog" >/dev/null 2>"$TMP/err"
	check "synth: exit 0 ($(grep -v '^cstrace: synth: [0-9]' "$TMP/err" | head -1))" test $? -eq 0
	for f in truth keep.log out.data; do
		check "synth $f over a symlink: its target untouched" grep -qx precious "$TMP/victim.$f"
		check "synth $f: a file of its own, 0600" \
			bash -c "[ ! -L '$TMP/$f' ] && [ \"\$(stat -c %a '$TMP/$f')\" = 600 ] && [ -s '$TMP/$f' ]"
	done
	code=$(ls "$TMP"/out.data.code-*.bin 2>/dev/null | head -1)
	check "synth: the code page beside the perf.data exists" test -n "$code"
	[ -n "$code" ] && check "synth: the code page is 0600" test "$(stat -c %a "$code")" = 600
	check "synth: no temporary left" bash -c "! ls '$TMP' | grep -q '\\.tmp\\.'"
else
	echo "note: synth's side outputs not checked (no $prog or qemu-aarch64)"
fi
finish
