#!/usr/bin/env bash
# perf.data files that are well formed but extreme or hostile, made by perf_gen:
# numbers taken from the file must not size memory or time beyond what the file
# holds, and recorded names must not reach the terminal raw. (perf_input_bad.sh
# sweeps damaged bytes; this one asks for one thing each.)
# usage: perf_input_limits.sh PERF_GEN A64_ELF A64_MD5_ELF
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
GEN=$1 A64=$2 A64_MD5=$3
[ -f "$A64" ] || skip "no AArch64 test program (aarch64-linux-gnu-gcc missing at build time)"
export HOME=$TMP

# AUXTRACE idx is a queue number: huge or all-ones values must give the same
# instructions as idx 1, in time order too, within 1 GB of address space.
"$GEN" --elf "$A64" --out "$TMP/idx1.data" --proto etmv4 --cpu-wide || fail "perf_gen failed"
"$CSTRACE" script --order=time --insn "$TMP/idx1.data" >"$TMP/idx1.out" 2>/dev/null
check "idx 1: script gives instructions" test -s "$TMP/idx1.out"
for idx in 0xffffffff 40000000; do
	"$GEN" --elf "$A64" --out "$TMP/idx.data" --proto etmv4 --cpu-wide --auxtrace-idx $idx ||
		fail "perf_gen --auxtrace-idx $idx failed"
	for order in time file; do
		(ulimit -v $((1000000 + ${CSTRACE_VM_ALLOWANCE_KB:-0})); timeout 60 "$CSTRACE" script --order=$order --insn "$TMP/idx.data" \
			>"$TMP/idx.out" 2>"$TMP/idx.err")
		rc=$?
		check "idx $idx, order $order: exit 0 within 1 GB (rc $rc)" test $rc -eq 0
		check "idx $idx, order $order: same instructions as idx 1" cmp -s "$TMP/idx1.out" "$TMP/idx.out"
	done
done

# Recorded code files and --elf / --symfs that are not regular files: an MMAP2
# of /dev/zero hung decode, script and report; each now says so and goes on.
for dev in /dev/zero /dev/urandom; do
	"$GEN" --elf "$A64" --out "$TMP/dev.data" --proto etmv4 --cpu-wide --mmap-name "$dev" ||
		fail "perf_gen --mmap-name failed"
	for verb in "script --insn" "report" "decode --format=none"; do
		timeout 20 "$CSTRACE" $verb "$TMP/dev.data" >/dev/null 2>"$TMP/dev.err"
		rc=$?
		check "MMAP2 of $dev, $verb: ends (rc $rc)" test $rc -le 1
		check "MMAP2 of $dev, $verb: says why" grep -q "^cstrace: warning: $dev: not a regular file" "$TMP/dev.err"
	done
	timeout 20 "$CSTRACE" report --elf "$dev" "$TMP/idx1.data" >/dev/null 2>"$TMP/dev.err"
	rc=$?
	check "--elf $dev: exit 1 (rc $rc)" test $rc -eq 1
	check "--elf $dev: says why" grep -q "$dev.*not a regular file" "$TMP/dev.err"
done
mkdir -p "$TMP/symfs$A64"
rmdir "$TMP/symfs$A64"
ln -s /dev/zero "$TMP/symfs$A64"
timeout 20 "$CSTRACE" script --insn --symfs "$TMP/symfs" "$TMP/idx1.data" >"$TMP/symfs.out" 2>"$TMP/symfs.err"
rc=$?
check "--symfs holding /dev/zero: ends (rc $rc)" test $rc -le 1
# the recorded path (whose build-id matches) holds the code and the symbols alike:
# the instructions are named, not "[unknown]" with "(no code bytes)" as when only
# decode looked there
check "--symfs holding /dev/zero: code and symbols from the recorded file" \
	grep -q " 400000 _start+0	movz x0, #0x3$" "$TMP/symfs.out"
check "--symfs holding /dev/zero: no instruction without its bytes" \
	sh -c '! grep -q "no code bytes" "$1"' _ "$TMP/symfs.out"

# An MMAP2 whose name has no NUL inside the record (over the program's range)
# was read as a mapping of whatever the bytes said; it is skipped with one
# warning naming its offset, and the program decodes as without it.
"$GEN" --elf "$A64" --out "$TMP/unterm.data" --proto etmv4 --cpu-wide --mmap-unterminated ||
	fail "perf_gen --mmap-unterminated failed"
"$CSTRACE" script --order=time --insn "$TMP/unterm.data" >"$TMP/unterm.out" 2>"$TMP/unterm.err"
check "unterminated MMAP2 name: one warning with the offset" test "$(grep -c \
	"unterm.data: offset [0-9]*: MMAP2 record: the file name has no terminating NUL within the record's 88 bytes; record skipped" \
	"$TMP/unterm.err")" -eq 1
check "unterminated MMAP2 name: record skipped, same instructions" cmp -s "$TMP/idx1.out" "$TMP/unterm.out"

# Offsets near 2^63: an AUX record 2^63 bytes past the previous one (aux negated
# the gap, INT64_MIN) and an MMAP2 pgoff of 2^63 (the symbolizer's signed
# pgoff - addr overflowed). Undefined behaviour, which a build with
# -fsanitize=undefined -fno-sanitize-recover=undefined stops on ("runtime
# error", exit 1); the gap is told in full in the summary, saturated per record.
"$GEN" --elf "$A64" --out "$TMP/gap.data" --proto etmv4 --aux-gap 0x8000000000000000 ||
	fail "perf_gen --aux-gap failed"
"$CSTRACE" aux "$TMP/gap.data" >"$TMP/gap.out" 2>"$TMP/gap.err"
rc=$?
check "AUX gap of 2^63: aux exits 0 (rc $rc)" test $rc -eq 0
check "AUX gap of 2^63: no undefined behaviour" bash -c "! grep -q 'runtime error' '$TMP/gap.err'"
check "AUX gap of 2^63: summary has the gap in bytes" grep -q "gaps 1 (9223372036854775808 bytes)" "$TMP/gap.out"
# wraps are unknown without the ring's size: "?", not "?0"; with it, a count
check "aux summary: wraps unknown without --aux-size" grep -q "wraps ?, lost bytes" "$TMP/gap.out"
"$CSTRACE" aux --aux-size 4096 "$TMP/gap.data" >"$TMP/gap4k.out" 2>/dev/null
check "aux summary: wraps counted with --aux-size" grep -q "wraps [0-9][0-9]*, lost bytes" "$TMP/gap4k.out"
check "AUX gap of 2^63: the record's gap saturates, positive" \
	grep -q "^1 .* 9223372036854775807 " "$TMP/gap.out"
"$GEN" --elf "$A64" --out "$TMP/pgoff.data" --proto etmv4 --cpu-wide --mmap-pgoff 0x8000000000000000 ||
	fail "perf_gen --mmap-pgoff failed"
for verb in "script --insn" "report"; do
	"$CSTRACE" $verb "$TMP/pgoff.data" >/dev/null 2>"$TMP/pgoff.err"
	rc=$?
	check "MMAP2 pgoff 2^63, $verb: ends (rc $rc)" test $rc -le 1
	check "MMAP2 pgoff 2^63, $verb: no undefined behaviour" bash -c "! grep -q 'runtime error' '$TMP/pgoff.err'"
done

# A 16-byte build-id (ld --build-id=md5; Android), recorded as perf.data's
# 20 bytes with zero padding: the right binary was rejected ("does not match",
# 0 instructions). Recorded with its size it always matched.
for pad in "" --build-id-pad; do
	"$GEN" --elf "$A64_MD5" --out "$TMP/md5.data" --proto etmv4 --cpu-wide $pad ||
		fail "perf_gen on the md5 build-id program failed"
	"$CSTRACE" script --order=time --insn "$TMP/md5.data" >"$TMP/md5.out" 2>"$TMP/md5.err"
	check "16-byte build-id ${pad:-with its size}: no mismatch" bash -c "! grep -q 'match' '$TMP/md5.err'"
	check "16-byte build-id ${pad:-with its size}: same instructions and symbols" \
		cmp -s "$TMP/idx1.out" "$TMP/md5.out"
	n=$("$CSTRACE" report "$TMP/md5.data" 2>/dev/null | sed -n 's/^# \([0-9]*\) instructions executed/\1/p')
	check "16-byte build-id ${pad:-with its size}: report counts 24 instructions (got $n)" test "$n" = 24
done
# ... and a build-id with other bytes in the padding is still another binary's
"$GEN" --elf "$A64_MD5" --out "$TMP/md5.data" --proto etmv4 --cpu-wide --build-id-pad ||
	fail "perf_gen failed"
python3 - "$TMP/md5.data" "$A64_MD5" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
bid = bytes.fromhex(__import__("subprocess").check_output(
    ["readelf", "-n", sys.argv[2]], text=True).split("Build ID:")[1].split()[0])
i = b.find(bid + bytes(4))
while i >= 0:
    b[i + 19] = 1
    i = b.find(bid + bytes(4), i + 1)
open(sys.argv[1], "wb").write(b)
PY
"$CSTRACE" script --insn "$TMP/md5.data" >/dev/null 2>"$TMP/md5.err"
check "16-byte build-id with non-zero padding: not taken" grep -q "does not match" "$TMP/md5.err"

# Feature sections cstrace does not read (simpleperf's own, from 128; one of
# them pointing past EOF) are skipped quietly: output as without them.
cp "$TMP/idx1.data" "$TMP/feat.data"
python3 "$CSTRACE_SOURCE_DIR/tests/perfdata/add_feature.py" "$TMP/feat.data" 128 &&
	python3 "$CSTRACE_SOURCE_DIR/tests/perfdata/add_feature.py" "$TMP/feat.data" 131 far ||
	fail "add_feature.py failed"
"$CSTRACE" script --order=time --insn "$TMP/feat.data" >"$TMP/feat.out" 2>"$TMP/feat.err"
check "simpleperf features: same instructions" cmp -s "$TMP/idx1.out" "$TMP/feat.out"
check "simpleperf features: nothing said about them" bash -c "! grep -q 'feature' '$TMP/feat.err'"

# The AUXTRACE index as simpleperf writes it (no count; each size the record's
# 48-byte header) is read, not called malformed: the same instructions, no word
# about the index; moving one entry off its record shows the index is read.
for v in good bad; do
	cp "$TMP/idx1.data" "$TMP/sp-$v.data"
	python3 "$CSTRACE_SOURCE_DIR/tests/perfdata/simpleperf_index.py" "$TMP/sp-$v.data" $v ||
		fail "simpleperf_index.py failed"
	"$CSTRACE" script --order=time --insn "$TMP/sp-$v.data" >"$TMP/sp-$v.out" 2>"$TMP/sp-$v.err"
	check "simpleperf index ($v): same instructions" cmp -s "$TMP/idx1.out" "$TMP/sp-$v.out"
done
check "simpleperf index: nothing said about it" bash -c "! grep -q -i 'auxtrace' '$TMP/sp-good.err'"
check "simpleperf index with an entry off its record: said" \
	grep -q "AUXTRACE index entry 0 does not point at an AUXTRACE record" "$TMP/sp-bad.err"

# Recorded names holding terminal escapes (a file name with ESC [31m, a command
# setting the window title) are shown with \xNN for control characters, on
# stdout and stderr alike; they reached the terminal raw.
esc=$(printf '\033')
cp "$A64" "$TMP/a${esc}[31mred.elf"
"$GEN" --elf "$TMP/a${esc}[31mred.elf" --out "$TMP/esc.data" --proto etmv4 --cpu-wide \
	--comm "p${esc}]0;x$(printf '\007')" || fail "perf_gen with escapes failed"
for verb in "script" "script --insn" "script -F comm,tid,dso,sym,ip" "script --call-trace" \
	"report" "report --sort=dso" "report --format=autofdo"; do
	"$CSTRACE" $verb "$TMP/esc.data" >"$TMP/esc.out" 2>"$TMP/esc.err"
	check "names with escapes, $verb: no control characters out" \
		bash -c "! LC_ALL=C grep -q -P '[\\x00-\\x08\\x0b-\\x1f\\x7f]' '$TMP/esc.out' '$TMP/esc.err'"
done
"$CSTRACE" script -F comm,dso,ip "$TMP/esc.data" >"$TMP/esc.out" 2>/dev/null
check "names with escapes: the command shown as p\\x1b]0;x\\x07" grep -q -F 'p\x1b]0;x\x07 ' "$TMP/esc.out"
check "names with escapes: the file shown as a\\x1b[31mred.elf" grep -q -F '/a\x1b[31mred.elf)' "$TMP/esc.out"

# Many fragments: matching each AUX record to its AUXTRACE buffer was a linear
# search, 70 s for 300k fragments; it must take well under the timeout (7 s
# here) and every fragment must give its 12 instructions. The limits are for
# native speed: an emulated run (a cross build's tests) scales them.
# A sanitized build (scripts/sanitize.sh) takes some 70 times as long a fragment
# (ASan maps and unmaps each fragment's buffer): it decodes a hundredth as many,
# for memory errors; the time limits are the ordinary build's to check.
scale=${CSTRACE_TIME_SCALE:-1} many=300000 many_t=60000
if [ "${CSTRACE_SANITIZED:-0}" = 1 ]; then
	many=3000 many_t=600
fi
"$GEN" --elf "$A64" --out "$TMP/many.data" --proto etmv4 --cpu-wide --fragments $many ||
	fail "perf_gen --fragments failed"
n=$(timeout $((45 * scale)) "$CSTRACE" script --insn "$TMP/many.data" 2>/dev/null | wc -l)
check "$many fragments: all decoded within $((45 * scale)) s ($n instructions)" test "$n" -eq $((12 * many))
# The same in perf's time order, which a file without timestamps makes hold every
# element: each fragment end re-marked all of them (20k fragments: 4.7 s, 60k:
# about 40 s); now a fragment end costs nothing per element held.
"$GEN" --elf "$A64" --out "$TMP/many.data" --proto etmv4 --cpu-wide --fragments $many_t ||
	fail "perf_gen --fragments failed"
n=$(timeout $((20 * scale)) "$CSTRACE" script --raw --insn --order=time "$TMP/many.data" \
	2>"$TMP/many.err" | wc -l)
check "$many_t fragments in time order: all decoded within $((20 * scale)) s ($n instructions)" \
	test "$n" -eq $((12 * many_t))
check "$many_t fragments in time order: nothing said" test ! -s "$TMP/many.err"
rm -f "$TMP/many.data"
finish
