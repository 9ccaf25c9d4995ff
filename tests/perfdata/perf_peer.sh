#!/usr/bin/env bash
# Peer test: perf.data files written by cstrace's writer around hand-encoded ETMv4,
# ETE, ETMv3 and PTM trace of a known program must decode, in Debian's perf and in
# `cstrace script`, to the same samples in the same order for the same threads;
# and `cstrace script -F/--itrace` must print perf script's lines byte for byte.
# usage: perf_peer.sh PERF_GEN A64_ELF A32_ELF
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
. "$CSTRACE_SOURCE_DIR/tests/perfdata/perf_exact_lib.sh"
GEN=$1 A64=$2 A32=$3
PERF=${PERF:-perf}
command -v "$PERF" >/dev/null 2>&1 || skip "perf (linux-perf) is not installed"
"$PERF" version >/dev/null 2>&1 || skip "perf does not run here"
[ -f "$A64" ] || skip "no AArch64 test program (aarch64-linux-gnu-gcc missing at build time)"
[ -f "$A32" ] || skip "no A32 test program (arm-linux-gnueabihf-gcc missing at build time)"
# perf keeps a build-id cache under HOME: keep it out of the user's
export HOME=$TMP
cp "$A64" "$TMP/a64.elf"
cp "$A32" "$TMP/a32.elf"

norm() { awk '{$1=$1; print}'; }
# perf's per-sample line without the cpu column (for raw per-CPU data, see below)
nocpu() { awk '{$2=""; $1=$1; print}'; }

run_case() {
	local proto=$1 elf=$2; shift 2
	local name="$proto${*:+ $*}" f="$TMP/t.data"
	"$GEN" --elf "$elf" --out "$f" --proto "$proto" --expect "$TMP/expect" "$@" ||
		{ fail "$name: perf_gen failed"; return; }
	"$PERF" script -i "$f" --itrace=i1i -F pid,tid,cpu,ip 2>"$TMP/perf.err" | norm >"$TMP/p.insn"
	"$PERF" script -i "$f" --itrace=b -F pid,tid,cpu,ip,addr 2>>"$TMP/perf.err" | norm >"$TMP/p.br"
	"$PERF" script -i "$f" --itrace=i1i -F ip,sym 2>>"$TMP/perf.err" >"$TMP/p.sym"
	"$CSTRACE" script --raw --insn "$f" 2>"$TMP/c.err" | norm >"$TMP/c.insn" ||
		fail "$name: cstrace script --insn failed: $(head -3 "$TMP/c.err")"
	"$CSTRACE" script --raw "$f" 2>>"$TMP/c.err" | norm >"$TMP/c.br" ||
		fail "$name: cstrace script failed"
	# both decoders against the program's known path
	check "$name: perf decodes the known path" \
		cmp -s <(awk '{print $3}' "$TMP/p.insn") "$TMP/expect"
	check "$name: cstrace decodes the known path" \
		cmp -s <(awk '{print $3}' "$TMP/c.insn") "$TMP/expect"
	# perf found the program through MMAP2 + build-id: symbols resolve
	check "$name: perf resolved symbols from the recorded ELF" \
		grep -q ' func$' "$TMP/p.sym"
	if [[ " $* " == *" --raw "* && " $* " == *" --cpu-wide "* ]]; then
		# perf 6.1 reports CPU 0 for every unformatted per-CPU buffer; cstrace the
		# CPU of the buffer. Compare everything else.
		check "$name: same instruction samples (cpu aside)" \
			cmp -s <(nocpu <"$TMP/p.insn") <(nocpu <"$TMP/c.insn")
		check "$name: same branch samples (cpu aside)" \
			cmp -s <(nocpu <"$TMP/p.br") <(nocpu <"$TMP/c.br")
	else
		check "$name: same instruction samples as perf" cmp -s "$TMP/p.insn" "$TMP/c.insn"
		check "$name: same branch samples as perf" cmp -s "$TMP/p.br" "$TMP/c.br"
	fi
	# perf's own lines (-F, --itrace), byte for byte; perf 6.1 prints CPU 0 for
	# every unformatted per-CPU buffer, cstrace its CPU: those drop the cpu column
	if [[ " $* " == *" --raw "* && " $* " == *" --cpu-wide "* ]]; then
		perf_exact "$name" "$f" "b -F -cpu" "i1i -F -cpu,+flags,+insn"
	else
		perf_exact "$name" "$f" "${EXACT_CASES[@]}"
	fi
	if [ "$fails" -gt 0 ] && [ -z "${shown:-}" ]; then
		shown=1
		echo "--- $name: perf | cstrace (insn)"; paste "$TMP/p.insn" "$TMP/c.insn" | head -30
		echo "--- branches"; paste "$TMP/p.br" "$TMP/c.br" | head -20
		head -5 "$TMP/perf.err" "$TMP/c.err"
	fi
}

for proto in etmv4 ete; do
	for mode in "" "--cpu-wide"; do
		for snap in "" "--snapshot"; do
			run_case "$proto" "$TMP/a64.elf" $mode $snap
			run_case "$proto" "$TMP/a64.elf" --raw $mode $snap
		done
	done
done
for proto in etmv3 ptm; do
	for mode in "" "--cpu-wide"; do
		for snap in "" "--snapshot"; do
			run_case "$proto" "$TMP/a32.elf" $mode $snap
		done
	done
done

# Trace IDs only AUX_OUTPUT_HW_ID records tell (perf 6.1 predates them): cstrace
# must take the IDs from those records, not from the metadata.
for mode in "" "--cpu-wide"; do
	"$GEN" --elf "$TMP/a64.elf" --out "$TMP/hw.data" --proto etmv4 --hw-id $mode \
		--expect "$TMP/expect"
	"$CSTRACE" script --raw --insn "$TMP/hw.data" 2>/dev/null | awk '{print $3}' >"$TMP/hw.ips"
	check "HW_ID trace IDs${mode:+ $mode}: decoded through the IDs the records give" \
		cmp -s "$TMP/hw.ips" "$TMP/expect"
done

# OpenCSD's packet listing of our hand-encoded streams: every packet is known.
# (ETE is left out: `cstrace dump` lists no ETE packets yet, a decode-stage gap.)
for proto in etmv4; do
	"$GEN" --elf "$TMP/a64.elf" --out "$TMP/d.data" --proto $proto --cpu-wide
	"$CSTRACE" dump "$TMP/d.data" >"$TMP/dump.txt" 2>&1
	check "$proto packets: no bad or reserved packets" \
		bash -c "! grep -q -E 'BAD|RESERVED|ERROR' '$TMP/dump.txt'"
	check "$proto packets: start address and context as encoded" \
		grep -q "I_ADDR_CTXT_L_64IS0.*Addr=0x0000000000400000; Ctxt: AArch64,EL0, NS; CID=0x00001092" "$TMP/dump.txt"
done
for proto in etmv3 ptm; do
	"$GEN" --elf "$TMP/a32.elf" --out "$TMP/d.data" --proto $proto
	"$CSTRACE" dump "$TMP/d.data" >"$TMP/dump.txt" 2>&1
	check "$proto packets: no bad or reserved packets" \
		bash -c "! grep -q -E 'BAD|RESERVED|ERROR' '$TMP/dump.txt'"
	check "$proto packets: I-sync at _start" grep -q -E "I_?SYNC.*Addr=0x00010000" "$TMP/dump.txt"
done

# No MMAP2 for the program. Its file, which the BUILD_ID feature names, is read
# at its ELF addresses (a position-dependent executable loads there), with a
# warning; once the file is gone, only --kernel (a vmlinux or kcore) can give its
# code.
cp "$TMP/a64.elf" "$TMP/unmapped.elf"
"$GEN" --elf "$TMP/unmapped.elf" --out "$TMP/k.data" --proto etmv4 --no-mmap --expect "$TMP/expect"
"$CSTRACE" script --raw --insn "$TMP/k.data" 2>"$TMP/k.err" | awk '{print $3}' >"$TMP/k.ips"
check "no MMAP2: the program read at its ELF addresses" cmp -s "$TMP/k.ips" "$TMP/expect"
check "no MMAP2: said: $(head -c 300 "$TMP/k.err")" \
	grep -q "no MMAP record maps $TMP/unmapped.elf (build-id [0-9a-f]*, in the BUILD_ID feature): reading its code at its ELF addresses" "$TMP/k.err"
rm "$TMP/unmapped.elf"
"$CSTRACE" script --raw --insn "$TMP/k.data" 2>/dev/null | awk '{print $3}' >"$TMP/k0.ips"
"$CSTRACE" script --raw --insn --kernel "$TMP/a64.elf" "$TMP/k.data" 2>/dev/null |
	awk '{print $3}' >"$TMP/k1.ips"
check "--kernel: nothing decoded without it" test ! -s "$TMP/k0.ips"
check "--kernel: code read from the ELF at its addresses" cmp -s "$TMP/k1.ips" "$TMP/expect"

# Per-CPU trace without context IDs: perf 6.1 prints nothing for it; cstrace takes
# the threads from ITRACE_START (4242 on CPU 0, 4243 on CPU 1).
"$GEN" --elf "$TMP/a64.elf" --out "$TMP/nc.data" --proto etmv4 --cpu-wide --no-ctxid \
	--expect "$TMP/expect"
"$CSTRACE" script --raw --insn "$TMP/nc.data" 2>/dev/null | norm >"$TMP/nc.txt"
awk 'NR <= 12 {print "4242/4242 [000] " $1} NR > 12 {print "4242/4243 [001] " $1}' \
	"$TMP/expect" >"$TMP/nc.want"
check "per-CPU without context IDs: threads from ITRACE_START" cmp -s "$TMP/nc.txt" "$TMP/nc.want"

# A writer that never finished: cstrace recovers every record and decodes them.
"$GEN" --elf "$TMP/a64.elf" --out "$TMP/inc.data" --proto etmv4 --expect "$TMP/expect" --no-finish
"$CSTRACE" script --raw --insn "$TMP/inc.data" 2>"$TMP/inc.err" | awk '{print $3}' >"$TMP/inc.ips"
check "unfinished file: warned as incomplete with a record count" \
	grep -q 'incomplete file, [0-9]* records recovered' "$TMP/inc.err"
check "unfinished file: every fragment decoded" cmp -s "$TMP/inc.ips" "$TMP/expect"

# The program gone from disk and from the build-id cache: one warning naming its
# build-id, the trace still walks (as gaps), and as no instruction could be read
# at all, exit 1 saying so (it exited 0 having printed nothing).
"$GEN" --elf "$TMP/a64.elf" --out "$TMP/gone.data" --proto etmv4
bid=$(readelf -n "$TMP/a64.elf" | awk '/Build ID/ {print $3}')
mv "$TMP/a64.elf" "$TMP/a64.moved"
"$CSTRACE" script --raw --insn "$TMP/gone.data" >"$TMP/gone.out" 2>"$TMP/gone.err"
check "missing image: exit status 1" test $? -eq 1
check "missing image: the last line says no code could be read" \
	bash -c 'tail -1 "$0" | grep -q "gone.data: no instructions decoded: the code at the traced addresses could not be read"' "$TMP/gone.err"
check "missing image: warned once with its build-id" \
	test "$(grep -c "build-id $bid" "$TMP/gone.err")" -eq 1
# ... and found again through the build-id cache
mkdir -p "$HOME/.debug/.build-id/${bid:0:2}/${bid:2}"
cp "$TMP/a64.moved" "$HOME/.debug/.build-id/${bid:0:2}/${bid:2}/elf"
"$CSTRACE" script --raw --insn "$TMP/gone.data" 2>/dev/null | awk '{print $3}' >"$TMP/cache.ips"
"$GEN" --elf "$TMP/a64.moved" --out /dev/null --proto etmv4 --expect "$TMP/expect2"
check "build-id cache: the moved program is found by its build-id" \
	cmp -s "$TMP/cache.ips" "$TMP/expect2"
finish
