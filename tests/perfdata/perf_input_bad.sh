#!/usr/bin/env bash
# The whole perf.data path (reader, perf input, decoder, script) on damaged files:
# cut at every 4th byte and with bytes flipped, `cstrace script` must end normally
# (status 0 or 1, never a signal or a hang), and what it says must name the file.
# usage: perf_input_bad.sh PERF_GEN A64_ELF
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
GEN=$1 A64=$2
[ -f "$A64" ] || skip "no AArch64 test program (aarch64-linux-gnu-gcc missing at build time)"
export HOME=$TMP
"$GEN" --elf "$A64" --out "$TMP/good.data" --proto etmv4 --cpu-wide || fail "perf_gen failed"
size=$(stat -c %s "$TMP/good.data")
crashes=0 unnamed=0 runs=0
# A sanitized build (scripts/sanitize.sh) takes about a second a run (leak checks
# in two processes): it cuts at every 64th byte and flips 20 times, not every 4th
# and 200 times; the ordinary build runs the whole sweep.
step=4 flips=200
if [ "${CSTRACE_SANITIZED:-0}" = 1 ]; then
	step=64 flips=20
fi
try() {
	local f=$1 rc
	timeout 20 "$CSTRACE" script --raw --insn "$f" >/dev/null 2>"$TMP/err"
	rc=$?
	runs=$((runs + 1))
	cat "$TMP/err" >>"$TMP/allerr"
	if [ $rc -gt 1 ]; then
		crashes=$((crashes + 1))
		echo "exit $rc on $(basename "$f") ($2)" >&2
		head -3 "$TMP/err" >&2
	fi
	# every message is about this file, or about a program image it names (a
	# damaged MMAP2 name is not found): nothing unprintable, nothing else
	if [ -s "$TMP/err" ] && grep -a -v "$(basename "$f")" "$TMP/err" |
		grep -a -v -E "build-id [0-9a-f]*\): not found|does not match the recorded" | grep -a -q .; then
		unnamed=$((unnamed + 1))
		[ $unnamed -le 3 ] && { echo "message without the file name ($2):" >&2; grep -a -v "$(basename "$f")" "$TMP/err" | head -2 >&2; }
	fi
}
for ((cut = 0; cut < size; cut += step)); do
	head -c $cut "$TMP/good.data" >"$TMP/cut.data"
	try "$TMP/cut.data" "cut at $cut"
done
# cut before the first AUXTRACE payload (its 48-byte record header whole): every
# verb exits 1 saying the trace is not in the file (it once blamed "no sync in 0
# bytes", not trace data), and the clipped payload is told once though the file
# is read twice
chunk=$("$CSTRACE" aux "$TMP/good.data" 2>/dev/null | awk '/^chunk#/ {getline; print $4; exit}')
payload=$((chunk + 48))
head -c $payload "$TMP/good.data" >"$TMP/short.data"
for verb in decode script "script --raw" report; do
	"$CSTRACE" $verb "$TMP/short.data" >/dev/null 2>"$TMP/err"
	check "cut before its trace, $verb: exit 1" test $? -eq 1
	check "cut before its trace, $verb: says the trace is not in the file: $(tail -1 "$TMP/err")" \
		grep -q "short.data: no trace decoded: the file does not hold the trace of its [0-9]* AUX record" "$TMP/err"
	check "cut before its trace, $verb: the clipped payload is told once" \
		test "$(grep -c 'AUXTRACE payload of [0-9]* bytes runs past the end' "$TMP/err")" -eq 1
done
# cut inside the first payload (56 of its 64 bytes): that part is decoded (the
# whole fragment was skipped), and its ranges begin the full decode's
head -c $((payload + 56)) "$TMP/good.data" >"$TMP/half.data"
"$CSTRACE" decode --format=jsonl "$TMP/half.data" >"$TMP/half.jsonl" 2>"$TMP/err"
check "cut inside its trace: decoded, exit 0" test $? -eq 0
check "cut inside its trace: says how much is there: $(grep -m1 'only' "$TMP/err")" \
	grep -q "AUX record: only 56 of its 64 trace bytes (aux offset 0x0) are in the file; decoding those" "$TMP/err"
"$CSTRACE" decode --format=jsonl "$TMP/good.data" >"$TMP/good.jsonl" 2>/dev/null
check "cut inside its trace: its ranges begin the full decode's" python3 - "$TMP/half.jsonl" "$TMP/good.jsonl" <<'PY'
import json, sys
def ranges(p):
    return [(j["start"], j["end"]) for j in map(json.loads, open(p)) if j["type"] == "instr_range"]
half, full = ranges(sys.argv[1]), ranges(sys.argv[2])
# the last range before the cut may end early (its atoms are cut): compare the rest
assert len(half) >= 3 and half[:-1] == full[:len(half) - 1], (half, full)
PY
# flipped bytes: a fixed pseudo-random sequence, so that a failure repeats
seed=7
for ((i = 0; i < flips; i++)); do
	cp "$TMP/good.data" "$TMP/flip.data"
	for k in 1 2 3; do
		seed=$(((seed * 1103515245 + 12345) % 2147483648))
		off=$((seed % size))
		printf "\\x$(printf %02x $(((seed >> 8) & 255)))" |
			dd of="$TMP/flip.data" bs=1 seek=$off conv=notrunc status=none
	done
	try "$TMP/flip.data" "flip run $i"
done

# A fragment that crashes OpenCSD 1.3.3 (tests/decode/data, found by fuzzing) between
# two good ones: the crash is reported with the file and offset, decoding resumes in
# that fragment past the bad bytes, and the fragment after it is decoded in full.
# (Should a fixed OpenCSD decode the bad fragment, the good ones still must be.)
crash=$CSTRACE_SOURCE_DIR/tests/decode/data/opencsd133-etmv4-crash.bin
"$GEN" --elf "$A64" --out "$TMP/one.data" --proto etmv4 --no-ctxid --dump "$TMP/one.bin" \
  --expect "$TMP/both" || fail "perf_gen --dump failed"
load=$(readelf -lW "$A64" | awk '$1 == "LOAD" && $NF == "0x10000" {print $3 ":" $2 ":" $5; exit}')
"$GEN" --out "$TMP/crash.data" --raw --traceid 0x10 --trcconfigr 0xc1 --trace-file "$TMP/one.bin" \
  --trace-file "$crash" --trace-file "$TMP/one.bin" --image "$A64@${load%%:*}:0:${load##*:}" \
  --image "$crash@0" || fail "perf_gen --trace-file failed"
for verb in "decode --format=none" "dump" "script --raw --insn"; do
  timeout 60 "$CSTRACE" $verb "$TMP/crash.data" >"$TMP/crash.out" 2>"$TMP/crash.err"
  rc=$?
  check "crashing fragment, $verb: ends normally (rc $rc)" test $rc -le 1
  if grep -q crashed "$TMP/crash.err"; then
    # decoded again by cstrace's decoders (recovering), or OpenCSD's past skipped bytes
    check "crashing fragment, $verb: the crash names file and offset" \
      grep -qE "crash.data: the OpenCSD decoder crashed \(signal [0-9]+\) near byte [0-9]+; (.*resumes there|decoding again with cstrace's own decoder)" "$TMP/crash.err"
  fi
done
check "crashing fragment: script gives both good fragments' instructions" \
  cmp -s <(awk '{print $3}' "$TMP/crash.out") "$TMP/both"

check "no crash or hang in $runs runs on damaged files" test $crashes -eq 0
check "every message names the damaged file" test $unnamed -eq 0
check "messages are printable text" bash -c "! LC_ALL=C grep -q -P '[^\\x09\\x20-\\x7e]' '$TMP/allerr'"
finish
