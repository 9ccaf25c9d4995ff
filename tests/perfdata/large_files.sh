#!/usr/bin/env bash
# Files past 4 GiB, as long captures make them, read through 64-bit offsets on a
# 32-bit build too (the armhf cross tests run this under QEMU):
#  - a perf.data whose data section starts past 4 GiB (move_data.py): the same
#    instructions as the file it was moved from, AUX offsets printed in full;
#  - a snapshot whose memory dump holds the code past 4 GiB ([dump] offset=), and
#    the same dump given as --image FILE@ADDR:OFFSET: the same decode as the sample;
#  - a trace buffer of more than 4 GiB with the trace at 5 GiB, decoded from there
#    with --start-offset: the sample's elements at offsets past 5 GiB.
# The files are sparse (a hole up to the data: no disk) and go with $TMP.
# usage: large_files.sh PERF_GEN A64_ELF
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
GEN=$1 A64=$2
FAR=$((0x140000000)) # 5 GiB
[ -f "$A64" ] || skip "no AArch64 test program (aarch64-linux-gnu-gcc missing at build time)"
# a file system without holes would really write 5 GiB
truncate -s $((FAR + 4096)) "$TMP/probe" && [ "$(du -k "$TMP/probe" | cut -f1)" -lt 1024 ] ||
  skip "$TMP cannot hold sparse files"
rm -f "$TMP/probe"

# --- perf.data with its data past 4 GiB
"$GEN" --elf "$A64" --out "$TMP/near.data" --proto etmv4 --cpu-wide --expect "$TMP/expect" ||
  fail "perf_gen failed"
check "move the data section to 5 GiB" \
  python3 "$CSTRACE_SOURCE_DIR/tests/perfdata/move_data.py" "$TMP/near.data" "$TMP/far.data" $FAR
check "the moved file is past 4 GiB" test "$(stat -c %s "$TMP/far.data")" -gt $FAR
for v in "script --insn" "report --format=csv"; do
  # shellcheck disable=SC2086 # a verb and its options
  "$CSTRACE" $v "$TMP/near.data" >"$TMP/near.out" 2>"$TMP/near.err"
  # shellcheck disable=SC2086
  "$CSTRACE" $v "$TMP/far.data" >"$TMP/far.out" 2>"$TMP/far.err"
  check "$v: exits 0 on the moved file" test $? -eq 0
  check "$v: the same output as before the move" cmp -s "$TMP/near.out" "$TMP/far.out"
done
# decode's first column is the packet's file offset: moved on by exactly the move
# (but an end of trace without a packet of its own (index 0): offset 0 in both;
# past 4 GiB it once read 4294967296)
"$CSTRACE" decode "$TMP/near.data" >"$TMP/near.out" 2>"$TMP/near.err"
"$CSTRACE" decode "$TMP/far.data" >"$TMP/far.out" 2>"$TMP/far.err"
check "decode: exits 0 on the moved file" test $? -eq 0
delta=$((FAR - $(python3 -c 'import struct,sys; print(struct.unpack_from("<Q", open(sys.argv[1], "rb").read(48), 40)[0])' "$TMP/near.data")))
check "decode: the same elements, each at its offset + $delta" cmp -s \
  <(awk -v d="$delta" '{if ($3 != "end-of-trace" || $1 != 0) $1 = sprintf("%.0f", $1 + d); $1 = $1; print}' "$TMP/near.out") \
  <(awk '{$1 = $1; print}' "$TMP/far.out")
n=$("$CSTRACE" script --insn "$TMP/far.data" 2>/dev/null | wc -l)
check "all $(wc -l <"$TMP/expect") instructions decoded past 4 GiB ($n)" test "$n" -eq "$(wc -l <"$TMP/expect")"
"$CSTRACE" aux "$TMP/far.data" >"$TMP/aux.out" 2>&1
check "aux: exits 0" test $? -eq 0
check "aux: AUX records at their 64-bit file offsets" grep -qE '^0 +cpu 0 +0x1400002' "$TMP/aux.out"
[ "$fails" -eq 0 ] || diff <(awk -v d="$delta" '{if ($3 != "end-of-trace" || $1 != 0) $1 = sprintf("%.0f", $1 + d); $1 = $1; print}' "$TMP/near.out") <(awk '{$1 = $1; print}' "$TMP/far.out") | head -5 >&2
rm -f "$TMP"/*.data

# sparse_at SRC DST OFFSET: DST holds SRC's bytes at OFFSET, a hole before them
sparse_at() {
  rm -f "$2" && truncate -s "$3" "$2" && cat "$1" >>"$2"
}

# --- memory dumps whose code lies past 4 GiB
sample=$CSTRACE_SOURCE_DIR/testdata/sample/a64-loop
"$CSTRACE" decode "$sample" >"$TMP/sample.out" 2>&1 || fail "decode the sample"
cp -r "$sample" "$TMP/snap"
sparse_at "$sample/mem_0.bin" "$TMP/snap/mem_0.bin" $FAR || fail "write the sparse dump"
printf 'offset=0x%x\n' $FAR >>"$TMP/snap/cpu_0.ini"
"$CSTRACE" decode "$TMP/snap" >"$TMP/snap.out" 2>&1
check "snapshot, code at 5 GiB of its dump: exits 0" test $? -eq 0
check "snapshot, code at 5 GiB of its dump: the sample's decode" cmp -s "$TMP/sample.out" "$TMP/snap.out"
# the same dump named on the command line, the snapshot's own section gone
sed -i '/^\[dump0\]/,$d' "$TMP/snap/cpu_0.ini"
"$CSTRACE" decode --image "$TMP/snap/mem_0.bin@0x400000:$FAR" "$TMP/snap" >"$TMP/image.out" 2>&1
check "--image FILE@ADDR:5GiB: exits 0" test $? -eq 0
check "--image FILE@ADDR:5GiB: the sample's decode" cmp -s "$TMP/sample.out" "$TMP/image.out"
rm -rf "$TMP/snap"

# --- a trace buffer larger than 4 GiB, its trace at 5 GiB: --start-offset goes there
cp -r "$sample" "$TMP/big"
sparse_at "$sample/cstrace.bin" "$TMP/big/cstrace.bin" $FAR || fail "write the sparse buffer"
"$CSTRACE" decode --start-offset 5G "$TMP/big" >"$TMP/big.out" 2>"$TMP/big.err"
check "buffer of 5 GiB + trace, --start-offset 5G: exits 0" test $? -eq 0
check "buffer past 4 GiB: the sample's elements, each at its offset + 5 GiB" cmp -s \
  <(awk -v d=$FAR '/^ *[0-9]+ / {$1 = sprintf("%.0f", $1 + d)} {$1 = $1; print}' "$TMP/sample.out") \
  <(awk '{$1 = $1; print}' "$TMP/big.out")
[ "$fails" -eq 0 ] || diff <(awk -v d=$FAR '/^ *[0-9]+ / {$1 = sprintf("%.0f", $1 + d)} {$1 = $1; print}' "$TMP/sample.out") <(awk '{$1 = $1; print}' "$TMP/big.out") | head -5 >&2
"$CSTRACE" dump --start-offset 5G "$TMP/big" >"$TMP/big.dump" 2>&1
check "dump --start-offset 5G: packets at offsets past 5 GiB" grep -q "^Idx:53687091[0-9][0-9];" "$TMP/big.dump"
"$CSTRACE" decode --start-offset 5X "$TMP/big" 2>"$TMP/err" >/dev/null
check "--start-offset 5X: a usage error" test $? -eq 2
rm -rf "$TMP/big"
finish
