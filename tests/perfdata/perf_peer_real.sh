#!/usr/bin/env bash
# Peer test on real hardware trace: Juno ETMv4 captures from the shared OpenCSD
# snapshots, wrapped by perf_gen as perf.data (one per-thread AUX fragment, memory
# dumps mapped by MMAP2), must give the same samples in Debian's perf and cstrace.
# usage: perf_peer_real.sh PERF_GEN
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
. "$CSTRACE_SOURCE_DIR/tests/perfdata/perf_exact_lib.sh"
GEN=$1
PERF=${PERF:-perf}
need_shared
command -v "$PERF" >/dev/null 2>&1 || skip "perf (linux-perf) is not installed"
export HOME=$TMP
norm() { awk '{$1=$1; print}'; }

# uname on a Juno (trace ID 0x16): every instruction and every branch
J=$SHARED/opencsd/test-file-mem-offsets
"$GEN" --out "$TMP/u.data" --trace-file "$J/trace.bin" --traceid 0x16 --trcidr1 0x4100F400 \
	--image "$J/uname.bin@0x400000:0:0x69f8" --image "$J/libc-2.21.bin@0x7f8e446000:0:0x137120" \
	--image "$J/ld-2.21.bin@0x7f8e58f000:0:0x11000" \
	--image "$J/ld-2.21.bin@0x7f8e5a0000:0x11000:0xdb40" \
	--image "$J/vdso.bin@0x7f8e5ba000:0:0x1000" || fail "perf_gen failed on $J"
"$PERF" script -i "$TMP/u.data" --itrace=i1i -F pid,tid,cpu,ip 2>/dev/null | norm >"$TMP/p.insn"
"$CSTRACE" script --raw --insn "$TMP/u.data" 2>/dev/null | norm >"$TMP/c.insn"
"$PERF" script -i "$TMP/u.data" --itrace=b -F pid,tid,cpu,ip,addr 2>/dev/null | norm >"$TMP/p.br"
"$CSTRACE" script --raw "$TMP/u.data" 2>/dev/null | norm >"$TMP/c.br"
check "uname: perf decodes thousands of instructions" test "$(wc -l <"$TMP/p.insn")" -gt 10000
check "uname: same instruction samples as perf" cmp -s "$TMP/p.insn" "$TMP/c.insn"
check "uname: same branch samples as perf" cmp -s "$TMP/p.br" "$TMP/c.br"
echo "uname: $(wc -l <"$TMP/c.insn") instruction and $(wc -l <"$TMP/c.br") branch samples"
# and perf's own lines, byte for byte, for every --itrace and -F choice
perf_exact uname "$TMP/u.data" "${EXACT_CASES[@]}"

# cc1 on a Juno, 1 MiB of ETR trace (trace ID 0x12): every branch
J=$SHARED/opencsd/bugfix-exact-match
"$GEN" --out "$TMP/cc1.data" --trace-file "$J/cstrace.bin" --traceid 0x12 --trcidr1 0x4100F400 \
	--image "$J/cc1.init_dump.bin@0x4001D8" --image "$J/cc1.text_dump.bin@0x400200" \
	--image "$J/cc1__libc_freeres_fn_dump.bin@0x5CE9C0" \
	--image "$J/cc1__libc_thread_freeres_fn_dump.bin@0x5CF610" \
	--image "$J/cc1.fini_dump.bin@0x5CF700" || fail "perf_gen failed on $J"
"$PERF" script -i "$TMP/cc1.data" --itrace=b -F pid,tid,cpu,ip,addr 2>/dev/null | norm >"$TMP/p.br"
"$CSTRACE" script --raw "$TMP/cc1.data" 2>/dev/null | norm >"$TMP/c.br"
check "cc1: perf decodes about a million branches" test "$(wc -l <"$TMP/p.br")" -gt 500000
check "cc1: same branch samples as perf" cmp -s "$TMP/p.br" "$TMP/c.br"
echo "cc1: $(wc -l <"$TMP/c.br") branch samples"
perf_exact cc1 "$TMP/cc1.data" "b" "b -F ip,sym,symoff,addr,flags,insn"
[ "$fails" -eq 0 ] || diff "$TMP/p.br" "$TMP/c.br" | head -10

# TC2: Cortex-A7 ETMv3.5 (IDs 0x10-0x12, cycle-accurate) and Cortex-A15 PTM (0x13),
# a Thumb-2 kernel mapped at 0xc0008000: T32 ranges are split into instructions.
J=$SHARED/opencsd/TC2
v3=0x10001860,0x410CF250,0x344008F2 ptm=0x10001000,0x411CF312,0x34C01AC2
wrap_tc2() {
	"$GEN" --out "$TMP/tc2.data" --trace-file "$J/cstrace.bin" --traceid "$1" \
		--etmv3-regs "$2" --image "$J/kernel_dump.bin@0xC0008000" || fail "perf_gen failed on $J"
	"$PERF" script -i "$TMP/tc2.data" --itrace=i1i -F pid,tid,cpu,ip 2>/dev/null | norm >"$TMP/p.insn"
	"$CSTRACE" script --raw --insn "$TMP/tc2.data" 2>/dev/null | norm >"$TMP/c.insn"
	"$PERF" script -i "$TMP/tc2.data" --itrace=b -F pid,tid,cpu,ip,addr 2>/dev/null | norm >"$TMP/p.br"
	"$CSTRACE" script --raw "$TMP/tc2.data" 2>/dev/null | norm >"$TMP/c.br"
}
for id in 0x11 0x12; do
	wrap_tc2 $id $v3
	check "TC2 ETMv3 $id: perf decodes T32 instructions" test "$(wc -l <"$TMP/p.insn")" -gt 1000
	check "TC2 ETMv3 $id: same instruction samples as perf" cmp -s "$TMP/p.insn" "$TMP/c.insn"
	check "TC2 ETMv3 $id: same branch samples as perf" cmp -s "$TMP/p.br" "$TMP/c.br"
	perf_exact "TC2 $id" "$TMP/tc2.data" "${EXACT_CASES[@]}"
done
# 0x10 ends on an instruction range OpenCSD holds back until the end of trace, which
# perf never signals: perf's samples are all of cstrace's but that last range.
wrap_tc2 0x10 $v3
n=$(wc -l <"$TMP/p.insn")
check "TC2 ETMv3 0x10: perf's instruction samples begin cstrace's" \
	cmp -s "$TMP/p.insn" <(head -n "$n" "$TMP/c.insn")
check "TC2 ETMv3 0x10: cstrace adds only the held-back range" \
	test $(($(wc -l <"$TMP/c.insn") - n)) -le 16
check "TC2 ETMv3 0x10: same branch samples as perf" cmp -s "$TMP/p.br" "$TMP/c.br"
perf_exact "TC2 0x10" "$TMP/tc2.data" "b" "b -F +flags,+insn"
perf script -i "$TMP/tc2.data" --itrace=i1i -F ip,sym,flags,insn >"$TMP/p.i" 2>/dev/null
"$CSTRACE" script --itrace=i1i -F ip,sym,flags,insn "$TMP/tc2.data" >"$TMP/c.i" 2>/dev/null
check "TC2 ETMv3 0x10: perf's instruction lines begin cstrace's, to the byte" \
	cmp -s "$TMP/p.i" <(head -n "$(wc -l <"$TMP/p.i")" "$TMP/c.i")
# PTM 0x13: perf 6.1 decodes another stretch than OpenCSD's reference listing does;
# the perf.data path of cstrace gives exactly the ranges of the snapshot path.
wrap_tc2 0x13 $ptm
"$CSTRACE" decode "$TMP/tc2.data" 2>/dev/null | awk '$3 == "range" {print $4}' >"$TMP/r.perf"
"$CSTRACE" decode --id 0x13 "$J" 2>/dev/null | awk '$3 == "range" {print $4}' >"$TMP/r.snap"
check "TC2 PTM 0x13: ranges through perf.data are those of the snapshot" \
	cmp -s "$TMP/r.perf" "$TMP/r.snap"
check "TC2 PTM 0x13: over a thousand ranges" test "$(wc -l <"$TMP/r.perf")" -gt 1000
finish
