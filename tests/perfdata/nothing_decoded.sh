#!/usr/bin/env bash
# One exit-status rule on every verb that decodes: nothing decoded (no instruction
# and no software trace) is exit 1 with one line saying why, whatever the reason:
# trace with sync but only timestamps (with or without an address to start from),
# code that could not be read, trace zeroed out, atoms without sync. Something
# decoded is exit 0, also software trace alone (STM) and a run that decoded.
# usage: nothing_decoded.sh PERF_GEN A64_ELF
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
gen=$1 elf=$2
[ -x "$gen" ] && [ -f "$elf" ] || skip "perf_gen or a64.elf not built"
command -v python3 >/dev/null || skip "python3 missing"

# hand-made ETMv4 streams (unformatted): async, trace info, then ...
python3 - "$TMP" <<'PY'
import sys
d, a = sys.argv[1], 0x400000
sync = bytes(11) + b"\x80" + b"\x01\x01\x00"
addr = bytes([0x85, (a >> 2) & 0x7f, (a >> 9) & 0x7f]) + \
    bytes((a >> (8 * i)) & 0xff for i in range(2, 8)) + b"\x30"
open(d + "/ts.bin", "wb").write(sync + b"\x02\x05" + addr + b"\x02\x06")  # timestamps
open(d + "/addr_ts.bin", "wb").write(sync + addr + b"\x02\x07")  # an address, a timestamp
open(d + "/atoms.bin", "wb").write(sync + b"\xf7\xf7\xf6")  # atoms, never an address
PY
for t in ts addr_ts atoms; do
	"$gen" --out "$TMP/$t.data" --trace-file "$TMP/$t.bin" --raw --image "$elf@0x3f0000" ||
		fail "perf_gen $t"
done
"$gen" --elf "$elf" --out "$TMP/ok.data" || fail "perf_gen"
# no MMAP, and the binary its BUILD_ID feature names gone: no code to read
cp "$elf" "$TMP/gone.elf"
"$gen" --elf "$TMP/gone.elf" --out "$TMP/nocode.data" --no-mmap || fail "perf_gen --no-mmap"
rm "$TMP/gone.elf"
python3 - "$TMP/ok.data" "$TMP/zeros.data" "$CSTRACE_SOURCE_DIR/tests/perfdata" <<'PY'
import sys
sys.path.insert(0, sys.argv[3])
import pdfile
b = bytearray(open(sys.argv[1], "rb").read())
for off, size in pdfile.auxtrace_payloads(b, sys.argv[1]):
    b[off:off + size] = bytes(size)
open(sys.argv[2], "wb").write(b)
PY

verbs=("decode" "decode --format=none" "script" "script --raw" "script --raw --insn" "report"
       "report --format=json" "report --format=autofdo")
# RUN VERB FILE: the exit status, standard error kept in $TMP/err
run() { local v=$1 f=$2; "$CSTRACE" $v "$f" >"$TMP/out" 2>"$TMP/err"; echo $?; }
for f in ts addr_ts nocode zeros atoms; do
	for v in "${verbs[@]}"; do
		rc=$(run "$v" "$TMP/$f.data")
		why=$(grep -c "^cstrace: $TMP/$f.data: no \(instructions\|trace\) decoded: " "$TMP/err")
		check "$f: $v: exit 1 (got $rc) with one line saying why ($(head -c 200 "$TMP/err"))" \
			[ "$rc" = 1 ] && [ "$why" = 1 ]
	done
done
run report "$TMP/ts.data" >/dev/null
check "timestamps only: the reason" grep -q "sync but no executed instruction" "$TMP/err"
run report "$TMP/nocode.data" >/dev/null
check "no code: the reason" grep -q "could not be read" "$TMP/err"
for v in "${verbs[@]}"; do
	check "a run that decoded: $v: exit 0" [ "$(run "$v" "$TMP/ok.data")" = 0 ]
done
# software trace without instructions is trace decoded
stm=$SHARED/opencsd/stm_only
if [ -d "$stm" ]; then
	check "STM alone: decode exit 0" [ "$(run decode "$stm")" = 0 ]
else
	echo "SKIP (part): $stm not found"
fi
finish
