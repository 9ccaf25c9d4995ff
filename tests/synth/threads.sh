#!/usr/bin/env bash
# decode --threads on a synth run: a long loop traced into one formatted buffer is
# cut into chunks decoded side by side; every thread count and chunk size must give
# exactly the one-thread output, which must equal what QEMU executed, and chunks
# must really have been decoded apart. The same run as perf.data (file order, one
# CPU, context IDs naming the thread): each AUX fragment is cut the same way, every
# verb prints what one thread prints, and one thread equals QEMU; also with a decoy
# mapping of another process over the program (a worker that lost track of whose
# code it reads would read it) and with corrupt bytes in the fragment (decoder
# errors: decoded again on one thread, past what went out). perf's branch lines,
# perf's instruction samples, cstrace's own branch and instruction lines, report's
# table, sample profiles and call views, made on the decoding threads (and they
# must have been), are the one thread's too, also where the trace has timestamps; and
# decode --stats counts what cstrace's own decoder made on the threads as on one.
# Usage: threads.sh ARCH PROG COUNT
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
. "$CSTRACE_SOURCE_DIR/tests/decode/threads_lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/synth_run.sh"
synth_long_run "$1" "$2" "$3"
"$CSTRACE" decode --threads 1 --format=jsonl "$TMP/snap" > "$TMP/one.jsonl"
check "one thread equals QEMU" python3 "$here/compare.py" --truth "$TMP/truth" \
	--jsonl "$TMP/one.jsonl" --snapshot "$TMP/snap"
# cstrace's own ETMv4 decoder, which the threads use (OpenCSD's decodes ETMv3)
"$CSTRACE" decode --threads 1 --decoder=cstrace --format=jsonl "$TMP/snap" > "$TMP/own.jsonl"
check "one thread, --decoder=cstrace: equals QEMU" python3 "$here/compare.py" \
	--truth "$TMP/truth" --jsonl "$TMP/own.jsonl" --snapshot "$TMP/snap"
for t in 2 3 4; do
	for cs in 4K 64K; do
		"$CSTRACE" decode --threads $t --chunk-size $cs --format=jsonl "$TMP/snap" \
			> "$TMP/many.jsonl"
		check "--threads $t --chunk-size $cs: the one-thread output" \
			cmp -s "$TMP/one.jsonl" "$TMP/many.jsonl"
	done
done
apart snap 4 4K "$TMP/snap"
# script's perf lines and report's table are made on the decoding threads
# (cst_pscript_run, cst_report_view_run); with times printed, a trace without
# timestamps keeps its views learning, and they give up
same snap "$TMP/snap" "script,report,script --itrace=b -F +flags,report --format=json" "4K"
same snap-time "$TMP/snap" "script --itrace=b -F ip,addr,sym,dso,time" "4K"
# cstrace's own lines on the threads too (cst_script_run): branches, instructions,
# the instructions since the branch before (a stretch's first range may join the
# range before it); times without timestamps (the source's programming turns
# them off: no stretch waits for one)
OWN_VERBS="script --insn,script -F tid,time,ip,sym,dso,flags,addr,insncnt"
same snap-own "$TMP/snap" "$OWN_VERBS" "4K"
for v in "script" "script --insn" "report"; do viewed snap "$TMP/snap" "$v"; done
# a timestamp every few thousand elements: a stretch waits for one before it prints
check "synth snapshot with timestamps from the same run" sh -c \
	'"$0" synth --arch "$1" --timestamps -o "$2" --from-log "$3" -- "$4" "$5" > /dev/null 2>&1' \
	"$CSTRACE" "$1" "$TMP/tsnap" "$TMP/qemu.log" "$2" "$3"
same snap-ts "$TMP/tsnap" "script,$OWN_VERBS" "4K 64K"
viewed snap-ts "$TMP/tsnap" "script"
# a time window: the filter reads the last timestamp, which a stretch learns
"$CSTRACE" script --time 100000t,300000t "$TMP/tsnap" > "$TMP/window" 2>/dev/null
check "snapshot with timestamps: the window keeps some lines, not all: $(wc -l < "$TMP/window")" \
	sh -c '[ -s "$0" ] && [ "$(wc -l < "$0")" -lt 200000 ]' "$TMP/window"
same snap-ts-window "$TMP/tsnap" \
	"script --time 100000t,300000t,script --insn --time 100000t,300000t,script --call-trace --time 100000t,300000t" "4K 64K"
viewed snap-ts-window "$TMP/tsnap" "script --time 100000t,300000t"
# report's views keep a window once their stretch has seen a timestamp of the
# range's trace ID (a worker's views go from stretch to stretch: what the one
# before saw is not this one's)
REPORT_WINDOWS="report --time 100000t,300000t,report --format=csv --time 250000t,1200000t"
REPORT_WINDOWS+=",report --time 0t,150000t --sort srcline"
# (and the call views: a stretch learns a thread from a range only where it
# knows the window's verdict)
REPORT_WINDOWS+=",report -g --time 100000t,300000t"
same snap-ts-window-report "$TMP/tsnap" "$REPORT_WINDOWS" "1K 4K 16K"
viewed snap-ts-window "$TMP/tsnap" "report --time 100000t,300000t"
# windows that end at every tenth timestamp of the trace: a stretch that took
# the last timestamp of a stretch before it for its own keeps or drops ranges
# that one thread does otherwise, wherever a window's end falls between the two
stamps=$("$CSTRACE" decode --format=jsonl "$TMP/tsnap" |
	sed -n 's/.*"type":"timestamp".*"timestamp":\([0-9]*\).*/\1/p')
n=0 windows=0 differ=""
for t in $stamps; do
	n=$((n + 1))
	[ $((n % 10)) -eq 5 ] || continue
	windows=$((windows + 1))
	"$CSTRACE" report --time "0t,${t}t" --threads 1 "$TMP/tsnap" > "$TMP/w1" 2>&1
	for tc in 3:1K 4:4K 2:16K; do
		"$CSTRACE" report --time "0t,${t}t" --threads "${tc%:*}" --chunk-size "${tc#*:}" \
			"$TMP/tsnap" > "$TMP/wn" 2>&1
		cmp -s "$TMP/w1" "$TMP/wn" || differ+=" 0t,${t}t@$tc"
	done
done
check "report --time: $windows windows to the trace's timestamps on threads as on one:${differ:- all the same}" \
	sh -c '[ "$0" -ge 8 ] && [ -z "$1" ]' "$windows" "$differ"
# timestamps where TRCCONFIGR says there are none (ETMv4's are packets of their
# own): a stretch prints times of 0 at once, and what it printed after the
# caller had seen a timestamp is refused and printed again on one thread
if [ "$1" = aarch64 ]; then
	cp -r "$TMP/tsnap" "$TMP/tslie"
	python3 - "$TMP/tslie" <<'PY'
import glob, re, sys
for ini in glob.glob(sys.argv[1] + "/device_*.ini"):
    text = open(ini).read()
    new = re.sub(r"(TRCCONFIGR\([^)]*\)=)0x([0-9A-Fa-f]+)",
                 lambda m: m.group(1) + "0x%08X" % (int(m.group(2), 16) & ~0x800), text)
    open(ini, "w").write(new)
PY
	check "TRCCONFIGR.TS cleared" grep -q "TRCCONFIGR.*=0x00000041" "$TMP/tslie/device_1.ini"
	same snap-ts-lie "$TMP/tslie" "script,report --time 100000t,300000t" "1K 4K 64K"
fi

pd=$TMP/perf.data
check "synth perf.data from the same run" sh -c \
	'"$0" synth --arch "$1" --out perf -o "$2" --from-log "$3" -- "$4" "$5" > /dev/null 2>&1' \
	"$CSTRACE" "$1" "$pd" "$TMP/qemu.log" "$2" "$3"
"$CSTRACE" decode --threads 1 --format=jsonl "$pd" > "$TMP/perf.jsonl"
check "perf.data: one thread equals QEMU" python3 "$here/compare.py" --truth "$TMP/truth" \
	--jsonl "$TMP/perf.jsonl" --snapshot "$TMP/snap"
"$CSTRACE" decode --threads 1 --decoder=cstrace --format=jsonl "$pd" > "$TMP/perf-own.jsonl"
check "perf.data, --decoder=cstrace: the elements of OpenCSD's decoder" \
	cmp -s "$TMP/perf.jsonl" "$TMP/perf-own.jsonl"
PERF_VERBS="decode --format=jsonl,decode --format=none --stats,script,script --raw,report"
PERF_VERBS+=",script --itrace=b -F +flags,script --itrace=be,report --format=csv"
PERF_VERBS+=",report --sort srcline,$OWN_VERBS"
same perf "$pd" "$PERF_VERBS" "4K"
for v in "script" "script --insn" "script --itrace=b -F +flags"; do viewed perf "$pd" "$v"; done
# perf's instruction samples on the threads: each block lists its ranges and
# the caller, which knows the count through the stream, prints the samples that
# fall in them in place (perf's default period with -F; a short one, T32's
# sizes walked on armhf; instruction samples alone)
INSN_VERBS="script -F ip,sym,dso,script --itrace=i1000ib -F ip,sym,symoff,dso,insn,flags"
INSN_VERBS+=",script --itrace=i1013ibe -F +flags,script --itrace=i5000i"
same perf-insn "$pd" "$INSN_VERBS" "1K 4K"
for v in "script -F ip,sym,dso" "script --itrace=i1000ib" "script --itrace=i5000i"; do
	viewed perf-insn "$pd" "$v"
done
# filters on the threads too: by function, binary and pid (a stretch of script
# learns from a range the filters keep; report's tables count what they keep;
# perf's queue moves only with what they keep)
pid=$(sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' "$TMP/perf.jsonl" | head -1)
same perf-filters "$pd" \
	"script --symbols=step,script --insn --dsos=$(basename "$2") --symbols=main,step,script --pid $pid,report --symbols=step,report --pid $pid --format=csv,report --dsos=$(basename "$2") --symbols=main,step --sort srcline" "4K"
same perf-filters-perf "$pd" \
	"script --itrace=b -F +flags --pid $pid,script --itrace=be -F ip,sym --symbols=step" "4K"
for v in "script --symbols=step" "report --symbols=step" "script --itrace=b --pid $pid"; do
	viewed perf-filters "$pd" "$v"
done
same perf-64K "$pd" "decode --format=jsonl" "64K"
# the call views on the threads: a stretch follows each thread's calls from a
# range the caller's model follows (call_threads.sh has programs with more)
same perf-calls "$pd" "report -g,report --format=folded,report --children" "1K 4K"
viewed perf-calls "$pd" "report -g"
# sample profiles on the threads: their models (the range running on, the
# branch held, the range before) learnt by each stretch, handed over block by
# block, and counts added in the stream's order (binaries are listed in the
# order first counted); with the filters too
prog=$(basename "$2")
PROFILE_VERBS="report --format=autofdo,report --format=profgen --dso $prog,report --format=lcov"
PROFILE_VERBS+=",report --format=llvm-sample --dso $prog,report --format=coverage"
PROFILE_VERBS+=",report --format=autofdo --symbols=step,report --format=lcov --pid $pid"
# with --stats: what the symbolizer counted, deferred elements once (a stretch
# that learnt from one once threw away the counts of the block before it)
PROFILE_VERBS+=",report --format=lcov --stats"
same perf-profiles "$pd" "$PROFILE_VERBS" "1K 4K"
for v in "report --format=autofdo" "report --format=profgen --dso $prog"; do
	viewed perf-profiles "$pd" "$v"
done
# what was symbolized is counted once, on whichever thread (only the cache's
# share is each thread's own)
for t in 1 3; do
	"$CSTRACE" report --stats --threads $t --chunk-size 4K "$pd" 2>&1 >/dev/null |
		sed 's/ ([0-9]* from the cache)//' > "$TMP/stats.$t"
done
check "perf.data: report --stats on 3 threads counts what one thread counts: $(head -c 200 "$TMP/stats.3")" \
	cmp -s "$TMP/stats.1" "$TMP/stats.3"
same perf-dump "$pd" "dump" "4K"
apart perf 16 4K "$pd"
# and the chunks by cstrace's own decoder (ETMv4 and ETMv3)
check "perf.data on threads: chunks decoded by cstrace's own decoder" sh -c \
	'"$0" decode --stats --format=none --threads 4 --chunk-size 4K "$1" 2>&1 |
		grep -q " [1-9][0-9]* by cstrace.s own decoder$"' "$CSTRACE" "$pd"
# what cstrace's own decoder made is counted on the workers too (only the
# calling thread's elements were: 366 of 12 million on a long loop)
for src in snap perf.data; do
	for t in 1 4; do
		"$CSTRACE" decode --stats --format=none --threads $t --chunk-size 4K "$TMP/$src" 2>&1 |
			grep "of the elements by cstrace's own decoder" > "$TMP/own-count.$t"
	done
	check "$src: the elements by cstrace's own decoder, on 4 threads as on one: $(cat "$TMP/own-count.4")" \
		sh -c '[ -s "$0" ] && cmp -s "$0" "$1"' "$TMP/own-count.1" "$TMP/own-count.4"
done
# progress on a terminal goes on through a fragment decoded on threads (it was told
# once, at the fragment's end): a line short of 100%
if command -v script >/dev/null; then
	script -qec "'$CSTRACE' decode --format=none --threads 2 --chunk-size 4K '$pd'" /dev/null \
		> "$TMP/tty" 2>&1
	check "perf.data on threads: progress before the fragment's end: $(tr '\r' '\n' < "$TMP/tty" | head -c 200)" \
		grep -aqE $'\rdecoding [0-9.]+/[0-9.]+ MB \\([0-9]{1,2}%\\)' "$TMP/tty"
fi

# the decoy: branches to themselves (quick to decode, unlike zeros, which the
# decoder walks to the end of the mapping at every atom) mapped at the program's
# addresses by another process, after it
python3 -c 'import sys
word = b"\x00\x00\x00\x14" if sys.argv[1] == "aarch64" else b"\xfe\xe7\xfe\xe7"  # A64, T32 "b ."
open(sys.argv[3], "wb").write(word * (int(sys.argv[2]) // 4 + 1))' "$1" "$(stat -c %s "$2")" "$TMP/decoy"
python3 "$CSTRACE_SOURCE_DIR/tests/perfdata/decoy_mmap.py" "$pd" "$TMP/own.data" "$2" \
	"$TMP/decoy" "$(sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' "$TMP/perf.jsonl" | head -1)"
python3 "$CSTRACE_SOURCE_DIR/tests/perfdata/decoy_mmap.py" "$pd" "$TMP/decoy.data" "$2" \
	"$TMP/decoy" 4000000
# (offsets are file offsets: the record put in moves them)
nooff() { "$CSTRACE" decode --threads 1 --format=jsonl "$1" 2>/dev/null | sed 's/"offset":[0-9]*,//'; }
nooff "$pd" > "$TMP/perf.nooff"
nooff "$TMP/own.data" > "$TMP/own.nooff"
check "decoy as the program's own mapping: its zeros change the decode" \
	bash -c '! cmp -s "$0" "$1"' "$TMP/perf.nooff" "$TMP/own.nooff"
nooff "$TMP/decoy.data" > "$TMP/decoy.nooff"
check "decoy of another process: one thread decodes the program's own code" \
	cmp -s "$TMP/perf.nooff" "$TMP/decoy.nooff"
same perf-decoy "$TMP/decoy.data" "decode --format=jsonl,script" "4K"
apart perf-decoy 16 4K "$TMP/decoy.data"

# random bytes in the middle of the fragment: ETMv3 decoders report errors there
# (a worker's error sends the fragment to one thread, which leaves out what went
# out); ETMv4 ones resync without a word
scribble "$pd" "$TMP/corrupt.data"
"$CSTRACE" decode --format=none --stats --threads 1 "$TMP/corrupt.data" 2> "$TMP/corrupt.err"
"$CSTRACE" decode --format=none --stats --threads 1 "$pd" 2> "$TMP/clean.err"
check "perf.data corrupt: the bytes change the decode: $(head -c 300 "$TMP/corrupt.err")" \
	bash -c '! cmp -s "$0" "$1"' "$TMP/clean.err" "$TMP/corrupt.err"
[ "$1" = arm ] && check "perf.data corrupt: OpenCSD reports errors: $(head -c 300 "$TMP/corrupt.err")" \
	grep -q "trace decoder error" "$TMP/corrupt.err"
same perf-corrupt "$TMP/corrupt.data" \
	"decode --format=jsonl,decode --format=none --stats,script,report,script --itrace=be,report -g" "4K"
finish
