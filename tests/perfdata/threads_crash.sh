#!/usr/bin/env bash
# A decoder crash in a perf.data fragment decoded on threads: the child is run
# again on one thread past what was printed, and the run ends exactly as a
# one-thread run, which resumes past each crash, ends (before, a crash on threads
# printed nothing and exited 1, as a perf.data was taken to decode on one thread).
# The fragment is OpenCSD 1.3.3's crash input for ETMv4, repeated 2000 times, as
# unformatted trace (--raw).
# usage: threads_crash.sh PERF_GEN A64_ELF
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
. "$CSTRACE_SOURCE_DIR/tests/decode/threads_lib.sh"
GEN=$1 A64=$2
[ -f "$A64" ] || skip "no AArch64 test program (aarch64-linux-gnu-gcc missing at build time)"
crash=$CSTRACE_SOURCE_DIR/tests/decode/data/opencsd133-etmv4-crash.bin
for _ in $(seq 2000); do cat "$crash"; done > "$TMP/crash.bin"
"$GEN" --elf "$A64" --out "$TMP/crash.data" --proto etmv4 --raw --trcconfigr 0xc1 \
	--trace-file "$TMP/crash.bin" || { fail "perf_gen"; finish; }
"$CSTRACE" decode --format=elements --threads 1 "$TMP/crash.data" > "$TMP/one" 2> "$TMP/one.err"
check "one thread: the decoder crashes and decoding resumes past it: $(head -c 300 "$TMP/one.err")" \
	grep -q "crashed (signal .*decoding resumes there" "$TMP/one.err"
check "one thread: elements from before the crash are printed" [ -s "$TMP/one" ]
same perf-crash "$TMP/crash.data" "decode --format=elements,script --raw" "4K 64K"

# The symbolizing verbs decode a perf.data on a thread of their own and symbolize
# and print on the other (cst_session_opts.pipe). A crash between two good
# fragments: what the printing thread still held of the first one (elements, and
# the warnings queued with them) is printed before the child dies, as a one-thread
# run prints it, and the crash is reported the same way.
"$GEN" --elf "$A64" --out "$TMP/one.data" --proto etmv4 --no-ctxid --dump "$TMP/one.bin" \
	> /dev/null || fail "perf_gen --dump"
load=$(readelf -lW "$A64" | awk '$1 == "LOAD" && $NF == "0x10000" {print $3 ":" $2 ":" $5; exit}')
"$GEN" --out "$TMP/between.data" --raw --traceid 0x10 --trcconfigr 0xc1 \
	--trace-file "$TMP/one.bin" --trace-file "$crash" --trace-file "$TMP/one.bin" \
	--image "$A64@${load%%:*}:0:${load##*:}" --image "$crash@0" || fail "perf_gen --trace-file"
for _ in $(seq 200); do cat "$TMP/one.bin"; done > "$TMP/many.bin"
"$CSTRACE" script --threads 1 "$TMP/between.data" > "$TMP/between.one" 2> "$TMP/one.err"
check "one thread: the first fragment's branches, then the crash: $(head -c 300 "$TMP/one.err")" \
	sh -c '[ -s "$0" ] && grep -q "decoder crashed" "$1"' "$TMP/between.one" "$TMP/one.err"
# then cstrace's decoders decode it again, past the crash input, to the end: the
# third fragment's branches too (the first's, twice over)
"$CSTRACE" script --threads 1 --decoder=opencsd "$TMP/between.data" > "$TMP/between.ocsd" 2> /dev/null
check "one thread: recovering, the branches after the crash input too ($(wc -l < "$TMP/between.one") lines, not $(wc -l < "$TMP/between.ocsd"))" \
	test "$(wc -l < "$TMP/between.one")" -gt "$(wc -l < "$TMP/between.ocsd")"
same perf-crash-between "$TMP/between.data" "script,script --insn,report,script --raw" "1K 64K"
# The same in time order: decode's queues run ahead of the merge on a worker, which
# crashes while the merge prints; the run ends as one thread's does (time order
# resumes nowhere, and says no byte position: its decoders take turns)
same perf-crash-time "$TMP/between.data" "decode --format=elements,script,report" "64K" --order=time
# Two queues, the crash in the first: a worker decodes the second while another
# crashes, and behind the pipe (script, report) the merge goes on until its next
# element (tests/decode/test_pipe_crash.c); every verb ends as one thread's does
"$GEN" --out "$TMP/queues.data" --raw --traceid 0x10 --trcconfigr 0xc1 \
	--trace-file "$TMP/one.bin" --trace-file "$crash" --trace-file "$TMP/one.bin" \
	--trace-queue 1 --trace-file "$TMP/many.bin" \
	--image "$A64@${load%%:*}:0:${load##*:}" --image "$crash@0" || fail "perf_gen --trace-queue"
"$CSTRACE" script --threads 1 --order=time "$TMP/queues.data" > /dev/null 2> "$TMP/one.err"
check "one thread, two queues: the decoder crashes: $(head -c 300 "$TMP/one.err")" \
	grep -q "decoder crashed" "$TMP/one.err"
same perf-crash-queues "$TMP/queues.data" "decode --format=elements,script,report" "64K" --order=time

# The crash input at the start of a fragment after a long one: the decoder that
# ran through the first fragment (reset, as perf resets it) gets past it, a new
# and reset one crashes there. With OpenCSD's decoder on the workers
# (--decoder=opencsd) a worker's crashes, behind the pipe or the replay; with
# cstrace's own (the default) the workers find packets it does not decode, and
# the fragment goes to one thread, whose new OpenCSD decoder crashes on the
# printing thread. Either way the child that crashed is run again on one thread,
# leaving out what the crashed one printed, and ends as a one-thread run does,
# with no crash at all.
cat "$crash" "$TMP/many.bin" > "$TMP/crash-many.bin"
"$GEN" --out "$TMP/after.data" --raw --traceid 0x10 --trcconfigr 0xc1 \
	--trace-file "$TMP/many.bin" --trace-file "$TMP/crash-many.bin" \
	--trace-file "$TMP/many.bin" \
	--image "$A64@${load%%:*}:0:${load##*:}" --image "$crash@0" || fail "perf_gen --trace-file"
"$CSTRACE" script --threads 1 --decoder=opencsd "$TMP/after.data" > "$TMP/after.ocsd" 2> "$TMP/one.err"
check "one thread, OpenCSD's decoder: no crash after a long fragment: $(head -c 300 "$TMP/one.err")" \
	sh -c '[ -s "$0" ] && ! grep -q "crashed" "$1"' "$TMP/after.ocsd" "$TMP/one.err"
# cstrace's decoder (the default) declines the crash input; OpenCSD's, new for
# the fragment, decodes it again and crashes; the run goes on recovering
"$CSTRACE" script --threads 1 "$TMP/after.data" > "$TMP/after.one" 2> "$TMP/one.err"
check "one thread: the crash is OpenCSD's, and the run recovers: $(head -c 300 "$TMP/one.err")" \
	sh -c '[ -s "$0" ] && grep -q "decoding again with cstrace'"'"'s own decoder" "$1"' \
	"$TMP/after.one" "$TMP/one.err"
case "$(uname -m)" in
x86_64) native="X86-64" ;;
aarch64) native="AArch64" ;;
*) native="ARM" ;;
esac
on_host=false
readelf -h "$CSTRACE" | grep -q "Machine: *.*$native" && on_host=true
tries=8
$on_host && tries=100
for decoder in opencsd auto; do
	# Whether a worker's decoder crashes depends on which worker meets the crash
	# input with a decoder new for the fragment (thread timing: about a third of
	# the runs on an idle host, a tenth under load) and on what OpenCSD reads
	# through a bad pointer (under qemu-user, the cross stages, rarer still).
	# Up to 100 runs (40 ms each) on the host, where a crash is required; eight
	# under emulation, where it is told.
	crashed=0
	for _ in $(seq $tries); do
		CSTRACE_DEBUG=1 "$CSTRACE" script --threads 2 --chunk-size 1K --decoder=$decoder \
			"$TMP/after.data" > /dev/null 2> "$TMP/many.err"
		if grep -q "debug: .*crashed on threads; again on one thread" "$TMP/many.err"; then
			crashed=1
			break
		fi
	done
	if $on_host; then
		check "two threads, --decoder=$decoder: a decoder crashed, and the child ran again: $(head -c 300 "$TMP/many.err")" \
			[ $crashed = 1 ]
	elif [ $crashed = 0 ]; then
		echo "note: --decoder=$decoder: no crash in $tries runs under emulation; the outputs are compared below"
	fi
	same perf-crash-after-$decoder "$TMP/after.data" \
		"script,script --insn,report,decode --format=jsonl,script --raw,script --raw --insn" "1K" \
		--decoder=$decoder
done

# With -o, each child writes the file whole under a temporary name, and the
# parent removes the one a dead child left: the file is the one-thread output,
# and nothing else is left beside it. After OpenCSD's decoder crashed on one
# thread, the child that decodes again with cstrace's decoders (recovering)
# writes the whole file anew: what standard output gets.
mkdir "$TMP/o"
"$CSTRACE" script --threads 2 --chunk-size 1K -o "$TMP/o/after.txt" "$TMP/after.data" 2> /dev/null
check "-o after a crash on threads: the one-thread output" cmp -s "$TMP/after.one" "$TMP/o/after.txt"
"$CSTRACE" script --threads 1 -o "$TMP/o/between.txt" "$TMP/between.data" 2> /dev/null
check "-o after a crash on one thread: what standard output gets" \
	cmp -s "$TMP/between.one" "$TMP/o/between.txt"
check "-o: nothing left beside the files after crashes: $(ls "$TMP/o" | tr '\n' ' ')" \
	[ "$(ls -A "$TMP/o" | tr '\n' ' ')" = "after.txt between.txt " ]
finish
