#!/usr/bin/env bash
# `cstrace script -F/--itrace` prints perf script's lines byte for byte on the
# perf.data files cstrace synth writes of real programs (static A64 with IFUNCs
# and the PLT perf folds into _init, a PIE with its shared libraries, signals, a
# sink that wraps and loses trace, 4 threads on 4 CPUs, A32/T32 interworking and
# the ETMv3 held-back range): every --itrace choice and -F field Debian's perf 6.1
# knows for cs_etm, against that perf.
# usage: perf_script_exact.sh PROG_DIR (build/testdata: aarch64/ and arm/ programs)
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
. "$CSTRACE_SOURCE_DIR/tests/perfdata/perf_exact_lib.sh"
D=$1
command -v "$PERF" >/dev/null 2>&1 && "$PERF" version >/dev/null 2>&1 || skip "perf does not run here"
need_synth aarch64 "$D/aarch64/recurse"
export HOME=$TMP # perf's build-id cache stays out of the user's

synth() { # name arch prog [synth options]
	local name=$1 arch=$2 prog=$3; shift 3
	"$CSTRACE" synth --arch "$arch" --out perf "$@" -o "$TMP/$name.data" -- "$prog" \
		>/dev/null 2>"$TMP/$name.synth.err" || { fail "$name: synth"; return 1; }
}

# The full set of choices on one program of each ISA
synth recurse aarch64 "$D/aarch64/recurse" --timestamps &&
	perf_exact recurse "$TMP/recurse.data" "${EXACT_CASES[@]}"
# source lines: perf's where DWARF has the line (perf names code without one by
# its compile unit or object, "crtstuff.c:0", "malloc.o:0", or as
# "recurse[4002b0]"; cstrace prints none there)
"$PERF" script -i "$TMP/recurse.data" --itrace=i1i -F ip,srcline 2>/dev/null |
	grep -v -e '^  [^ ]*:0$' -e '^  [^ ]*\[[0-9a-f]*\]$' >"$TMP/p.src"
"$CSTRACE" script --itrace=i1i -F ip,srcline "$TMP/recurse.data" >"$TMP/c.src" 2>/dev/null
check "recurse: -F ip,srcline as perf prints it (lines known to DWARF)" \
	bash -c "grep -q '^  recurse.c:[0-9]*\$' '$TMP/c.src' && cmp -s '$TMP/p.src' '$TMP/c.src'"
SOME=("ib" "i1i -F +flags,+insn,+insnlen" "i5ib -F comm,pid,tid,cpu,time,period,event,flags,ip,sym,symoff,dso,addr")
synth signal aarch64 "$D/aarch64/signal" --timestamps && perf_exact signal "$TMP/signal.data" "${SOME[@]}"
synth longjmp aarch64 "$D/aarch64/longjmp" && perf_exact longjmp "$TMP/longjmp.data" "${SOME[@]}"
synth shlib aarch64 "$D/aarch64/shlib" --timestamps && perf_exact shlib "$TMP/shlib.data" "${SOME[@]}"
# a 2 KiB sink: the trace wraps, AUX records are cut; 'e' is left out (perf 6.1
# gives cs_etm no error samples; cstrace prints lost trace as perf's error lines)
synth lost aarch64 "$D/aarch64/recurse" --timestamps --buffer-size 2K &&
	perf_exact lost "$TMP/lost.data" "${SOME[@]}"
check "lost: the 2 KiB sink lost trace" grep -q "[1-9][0-9]* lost" "$TMP/lost.synth.err"
# ... and synth says so loudly, with the sink size that holds the run
check "lost: synth warns, naming the share lost and the size that holds it" \
	grep -q "^cstrace: warning: synth: LOST [0-9]*% of the trace: the 2K ETR sink dropped .* --buffer-size [0-9]*[KMG] holds the whole run" \
	"$TMP/lost.synth.err"
size=$(sed -n 's/.*--buffer-size \([0-9]*[KMG]\) holds.*/\1/p' "$TMP/lost.synth.err")
synth enough aarch64 "$D/aarch64/recurse" --timestamps --buffer-size "${size:-1}"
check "lost: --buffer-size $size holds it (nothing lost, no warning)" bash -c \
	"grep -q ' 0 lost' '$TMP/enough.synth.err' && ! grep -q warning '$TMP/enough.synth.err'"
# corrupt trace: perf's lines where the decoder lost sync; --itrace=e tells where
python3 "$CSTRACE_SOURCE_DIR/tests/perfdata/scribble_aux.py" "$TMP/recurse.data" "$TMP/bad.data" &&
	perf_exact corrupt "$TMP/bad.data" "b" "i1i -F +flags"
"$CSTRACE" script --itrace=e "$TMP/bad.data" >"$TMP/bad.e" 2>/dev/null
check "corrupt: --itrace=e prints the lost sync as perf prints decoder errors" \
	grep -q "^ instruction trace error type 1 time [0-9.]* cpu 0 pid [0-9]* tid [0-9]* ip 0x0 code 1: Bad packet" \
	"$TMP/bad.e"

# A sync every 256 bytes, in the 1 KiB chunks of perf_exact's second run: the
# branch lines made on the decoding threads meet at many chunk edges, where each
# stretch's packet queue is handed on (cst_pscript_run). No timestamps: the file
# decodes in file order, which is what is split.
JOINS=("b" "b -F +flags,+insn"
	"b -F comm,pid,tid,cpu,period,event,flags,ip,sym,symoff,dso,addr,insnlen")
for p in recurse signal fault; do
	synth "joins-$p" aarch64 "$D/aarch64/$p" --sync-period 256 &&
		perf_exact "joins-$p" "$TMP/joins-$p.data" "${JOINS[@]}"
done

# 4 threads, one CPU each (4 AUX queues merged by time). perf can lose a few
# instructions at a buffer's end (docs/perfdata.md, known differences): the lines
# are compared when perf lost none.
if [ -x "$D/aarch64/threads" ] && synth threads aarch64 "$D/aarch64/threads" --timestamps; then
	n_perf=$("$PERF" script -i "$TMP/threads.data" --itrace=i1i -F ip 2>/dev/null | wc -l)
	n_cst=$("$CSTRACE" script --itrace=i1i -F ip "$TMP/threads.data" 2>/dev/null | wc -l)
	if [ "$n_perf" = "$n_cst" ]; then
		perf_exact threads "$TMP/threads.data" "${SOME[@]}"
	else
		echo "threads: perf lost $((n_cst - n_perf)) instructions at a buffer's end: not compared"
	fi
fi

# AArch32: A32 and T32 (interworking), Thumb IFUNC aliases, a PIE with glibc's
# libraries, a signal; ETMv3 holds a range back until the end, which perf never
# sees (cstrace marks it, and leaves it out of perf's lines)
if [ -x "$D/arm/interwork" ] && command -v qemu-arm >/dev/null; then
	synth interwork arm "$D/arm/interwork" --timestamps &&
		perf_exact interwork "$TMP/interwork.data" "${EXACT_CASES[@]}"
	synth arm-shlib arm "$D/arm/shlib" --timestamps && perf_exact arm-shlib "$TMP/arm-shlib.data" "${SOME[@]}"
	synth arm-fault arm "$D/arm/fault" --timestamps && perf_exact arm-fault "$TMP/arm-fault.data" "${SOME[@]}"
	for p in interwork fault; do
		synth "arm-joins-$p" arm "$D/arm/$p" --sync-period 256 &&
			perf_exact "arm-joins-$p" "$TMP/arm-joins-$p.data" "${JOINS[@]}"
	done
fi
finish
