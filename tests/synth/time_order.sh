#!/usr/bin/env bash
# Per-CPU perf.data recorded with timestamps: perf 6.1 merges the CPUs by its time
# estimate, and `cstrace script` must print the same lines in the same order (less
# exactly what cstrace marks perf_unseen, see order_check.py). A multi-threaded
# QEMU run gives one CPU per guest thread; its threads run concurrently, so every
# run is a new interleaving.
# Usage: time_order.sh ARCH PROG [synth options...]
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
arch=$1; prog=$2; shift 2
need_synth "$arch" "$prog"
command -v perf >/dev/null && perf version >/dev/null 2>&1 || skip "perf not installed"

check "synth timestamped per-CPU perf.data" sh -c \
	'c=$0 a=$1 o=$2 p=$3; shift 3; "$c" synth --arch "$a" --out perf --timestamps -o "$o" "$@" -- "$p" 2>"$o.stats"' \
	"$CSTRACE" "$arch" "$TMP/perf.data" "$prog" "$@"
cat "$TMP/perf.data.stats"
perf script -i "$TMP/perf.data" --itrace=i1i -F pid,tid,cpu,ip 2>"$TMP/perf.err" >"$TMP/p.insn" ||
	fail "perf script failed: $(head -3 "$TMP/perf.err")"
perf script -i "$TMP/perf.data" --itrace=b -F pid,tid,cpu,ip,addr 2>>"$TMP/perf.err" >"$TMP/p.br" ||
	fail "perf script --itrace=b failed"

for order in auto time file; do
	"$CSTRACE" script --raw --insn --order=$order "$TMP/perf.data" >"$TMP/c.$order.insn" ||
		fail "cstrace script --insn --order=$order failed"
	"$CSTRACE" decode --format=jsonl --order=$order "$TMP/perf.data" >"$TMP/c.$order.jsonl" ||
		fail "cstrace decode --order=$order failed"
done
check "time order is the default for a timestamped recording" \
	cmp -s "$TMP/c.auto.insn" "$TMP/c.time.insn"
check "cstrace's instructions come in perf's order" \
	python3 "$here/order_check.py" "$TMP/p.insn" "$TMP/c.time.insn" "$TMP/c.time.jsonl"
# the check can fail: file order (each CPU's AUX record whole) is not perf's order
if python3 "$here/order_check.py" "$TMP/p.insn" "$TMP/c.file.insn" "$TMP/c.file.jsonl" \
	>"$TMP/file.out" 2>&1; then
	fail "file order passed the order check: the test proves nothing"
else
	echo "file order, as expected, is not perf's: $(tail -1 "$TMP/file.out")"
fi
switches=$(python3 "$here/order_check.py" "$TMP/p.insn" "$TMP/c.time.insn" "$TMP/c.time.jsonl" |
	sed -n 's/.* \([0-9]*\) CPU switches.*/\1/p')
[ "${switches:-0}" -ge 4 ] || fail "perf switched CPUs ${switches:-0} times: no interleaving to check"

# branches: where no instruction was excused the branch lines are identical
"$CSTRACE" script --raw "$TMP/perf.data" >"$TMP/c.br" || fail "cstrace script --raw failed"
norm() { awk '{$1=$1; print}' "$1"; }
if python3 "$here/order_check.py" "$TMP/p.insn" "$TMP/c.time.insn" "$TMP/c.time.jsonl" |
	grep -q '; 0 cstrace lines perf_unseen'; then
	check "branch samples identical, in the same order" cmp -s <(norm "$TMP/p.br") <(norm "$TMP/c.br")
else
	# perf ends a cut fragment with a branch from its last kept range to 0 (the
	# discontinuity that follows), a line cstrace has with the range perf lost
	check "perf's branch samples are cstrace's, in order" python3 -c '
import sys
p = [" ".join(l.split()) for l in open(sys.argv[1])]
c = [" ".join(l.split()) for l in open(sys.argv[2])]
have = set(c)
ends = [l for l in p if l.endswith("=> 0") and l not in have]
if len(ends) > int(sys.argv[3]):
    sys.exit("%d branches to 0 only perf has, more than the %s AUX records" % (len(ends), sys.argv[3]))
p = [l for l in p if l not in ends]
j = 0
for l in c:
    if j < len(p) and p[j] == l:
        j += 1
sys.exit(0 if j == len(p) else "perf branch line %d not found in order: %s" % (j + 1, p[j]))
' "$TMP/p.br" "$TMP/c.br" "$(sed -n 's/.* \([0-9]*\) AUX records.*/\1/p' "$TMP/perf.data.stats")"
fi

# --threads: the queues are decoded ahead of the merge on threads (and decode's
# lines printed beside it, in batches); every verb must print what one thread
# prints, and the runs must really have decoded ahead.
. "$CSTRACE_SOURCE_DIR/tests/decode/threads_lib.sh"
same time-order "$TMP/perf.data" \
	"decode,decode --format=elements,decode --format=jsonl,decode --format=none --stats,script,script --raw --insn,report,report -g,script -F ip,addr,sym,script --call-trace,report --format=folded" "4K"
# from four threads on, the views ran on the workers, in stretches of the
# merge's stream (on fewer, the caller's thread runs them)
for verb in script report "report -g" "script --call-trace" "script -F ip,addr,sym"; do
	viewed time-order "$TMP/perf.data" "$verb" --threads 4
	# shellcheck disable=SC2086 # verb holds its options
	check "time order: $verb: stretches went to the views on the workers" sh -c \
		'CSTRACE_DEBUG=1 "$0" $1 --threads 4 "$2" 2>&1 >/dev/null | grep -q "stretches: [1-9][0-9]* to the views"' \
		"$CSTRACE" "$verb" "$TMP/perf.data"
done
# and perf's lines and cstrace's learnt each stretch's trace ID from the
# elements before it: a time-ordered merge leaves a CPU after its timestamp,
# and without them the view would defer its stretch up to the next one
for verb in script "script -F ip,addr,sym"; do
	# shellcheck disable=SC2086 # verb holds its options
	said=$(CSTRACE_DEBUG=1 "$CSTRACE" $verb --threads 4 "$TMP/perf.data" 2>&1 >/dev/null | grep "stretches:")
	printed=$(sed -n 's/.*, \([0-9]*\) elements printed there, \([0-9]*\) deferred.*/\1 \2/p' <<< "$said")
	check "time order: $verb: views learnt what came before their stretches ($said)" \
		test "${printed% *}" -gt $((${printed#* } * 20))
done
check "decode --threads 2: the queues were decoded ahead" sh -c \
	'"$0" decode --format=none --stats --threads 2 "$1" 2>&1 | grep -q "queues decoded ahead of the time order$"' \
	"$CSTRACE" "$TMP/perf.data"
# The queues ahead go through cstrace's own decoders (the one-thread runs above,
# through OpenCSD's, printed the same)
check "decode --threads 2: the queues ahead decoded by cstrace's own decoder" sh -c \
	'"$0" decode --format=none --stats --threads 2 "$1" 2>&1 | grep -q "of the elements by cstrace.s own decoder$"' \
	"$CSTRACE" "$TMP/perf.data"
# Random bytes in the middle of a CPU's trace: ETMv3 decoders report errors. A
# worker's decoder that has something to say sends the run back to one thread,
# which passes what went out already; ETMv4 ones resync without a word.
python3 "$CSTRACE_SOURCE_DIR/tests/perfdata/scribble_aux.py" "$TMP/perf.data" "$TMP/corrupt.data" ||
	fail "scribble over the trace"
"$CSTRACE" decode --format=none --stats --threads 1 "$TMP/corrupt.data" 2> "$TMP/corrupt.err"
if grep -q "trace decoder error" "$TMP/corrupt.err"; then
	check "corrupt: the run on threads went back to one thread" sh -c \
		'"$0" decode --format=none --stats --threads 2 "$1" 2>&1 | grep -q "taken again on one thread"' \
		"$CSTRACE" "$TMP/corrupt.data"
elif [ "$arch" = arm ]; then
	fail "corrupt: no decoder error to fall back on: $(head -c 300 "$TMP/corrupt.err")"
fi
same time-order-corrupt "$TMP/corrupt.data" "decode,decode --format=elements,decode --format=none --stats,script,report" "4K"
# ETMv3 exceptions that cancel an instruction (set_cancel.py sets the bit of every
# SVC): OpenCSD gives the exception out with the packet after the cancel, which
# the time order can see, so cstrace's decoder declines there and the queue is
# decoded again on one thread, the same as one thread decodes it.
if [ "$arch" = arm ]; then
	"$CSTRACE" dump "$TMP/perf.data" > "$TMP/dump" 2>/dev/null
	n=$(python3 "$CSTRACE_SOURCE_DIR/tests/synth/set_cancel.py" "$TMP/perf.data" \
		"$TMP/dump" "$TMP/cancel.data")
	check "cancel: exceptions set to cancel (${n:-none})" [ "${n:-0}" -gt 0 ]
	"$CSTRACE" decode --format=none --stats --threads 1 "$TMP/cancel.data" \
		> /dev/null 2> "$TMP/cancel.err"
	check "cancel: no decoder error: $(head -c 300 "$TMP/cancel.err")" \
		sh -c '! grep -q "error" "$0"' "$TMP/cancel.err"
	check "cancel: cstrace's decoder declined, the queues went back to one thread" sh -c \
		'"$0" decode --format=none --stats --threads 2 "$1" 2>&1 | grep -q "taken again on one thread"' \
		"$CSTRACE" "$TMP/cancel.data"
	same time-order-cancel "$TMP/cancel.data" "decode --format=elements,script,report" "4K"
fi
# A program that is gone since the recording: code memory warns about it where it
# is first read, which on workers would be wherever one got first; the queues stay
# on one thread, and the warning comes where it always did.
cp "$prog" "$TMP/gone"
"$CSTRACE" synth --arch "$arch" --out perf --timestamps -o "$TMP/gone.data" "$@" -- "$TMP/gone" \
	> /dev/null 2>&1 || fail "synth of a copy of the program"
rm -f "$TMP/gone"
"$CSTRACE" decode --format=none --stats --threads 2 "$TMP/gone.data" > /dev/null 2> "$TMP/gone.err"
check "program gone: warned about, and not decoded ahead: $(head -c 300 "$TMP/gone.err")" sh -c \
	'grep -q "gone (build-id [0-9a-f]*): not found" "$0" && ! grep -q "decoded ahead" "$0"' "$TMP/gone.err"
same time-order-gone "$TMP/gone.data" "decode --format=none --stats,script" "4K"
finish
