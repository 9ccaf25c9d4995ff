#!/usr/bin/env bash
# The call views on the decoding threads (report -g, folded stacks, --children, a
# flame graph, the HTML page, script's call trace): each stretch follows the call
# model from the ranges the caller's
# model follows, and the caller checks and takes its blocks, or refuses one and
# decodes the rest on one thread. Programs with recursion, longjmp, signal
# handlers, calls through the PLT, function pointers, switches, threads and a
# fault, as perf.data: every thread count and chunk size prints what one thread
# prints, and the views did run on the decoding threads with no block refused
# (the threads' recording may be one per CPU, in time order: its stream is cut
# into stretches after the merge, from four threads on).
# Usage: call_threads.sh ARCH PROGDIR
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
. "$CSTRACE_SOURCE_DIR/tests/decode/threads_lib.sh"
arch=$1 dir=$2
need_synth "$arch" "$dir/recurse"
VERBS="report -g,report --format=folded,report --children --sort dso,sym"
VERBS+=",report --format=flamegraph,report -g --symbols=main,report -g --stats"
# the page: a call tree and a sample profile (coverage) from the same stretches
VERBS+=",report --format=html"
# the call trace: each line indented by the depth the caller's model knows
VERBS+=",script --call-trace,script --call-trace -F tid,time,sym,dso --ns"
for prog in recurse longjmp signal shlib fptr switch threads fault; do
	pd=$TMP/$prog.data
	check "synth $prog" sh -c '"$0" synth --arch "$1" --out perf -o "$2" -- "$3" > /dev/null 2>&1' \
		"$CSTRACE" "$arch" "$pd" "$dir/$prog"
	same "$prog" "$pd" "$VERBS" "256 1K 4K"
	# (the threads' recording may be in time order, whose views run on workers
	# from four threads on)
	t=2
	[ $prog = threads ] && t=4
	for verb in "report -g" "script --call-trace"; do
		viewed "$prog" "$pd" "$verb" --chunk-size 1K --threads $t
		# and what the stretches took for granted held: a refused block sends
		# the rest of its buffer to one thread. But for one block on fault,
		# whose siglongjmp does land in a frame below what its stretch knew,
		# and on shlib, where ld.so's code has no symbols: a jump into it
		# matches the thread's first frame, in ld.so too.
		# shellcheck disable=SC2086 # verb holds its options
		said=$(CSTRACE_DEBUG=1 "$CSTRACE" $verb --threads $t --chunk-size 1K "$pd" 2>&1 \
			>/dev/null | grep "call views:")
		case $prog in fault | shlib) refused="[01]" ;; *) refused=0 ;; esac
		check "$prog: $verb: blocks of the call model taken, $refused refused: ${said:-(none said)}" \
			grep -q "call views: [1-9][0-9]* blocks from the decoding threads taken, $refused refused" \
			<<< "$said"
	done
done
finish
