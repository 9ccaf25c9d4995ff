#!/usr/bin/env bash
# cstrace's own ETMv4 decoder (decode/etm4_follow.c) against OpenCSD's, on one
# thread: every element the same (JSON lines print every field a view uses) on
# the bundled sample and on each real ETMv4 capture, with its share counted
# (decode --stats) so that the test cannot pass by the decoder not being used;
# trace it does not cover is an error with --decoder=cstrace and is decoded by
# OpenCSD's, the same as one thread, with the default on threads; trace of other
# protocols is OpenCSD's whatever the choice.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"

# follow_same NAME TRACE [ARGS...]: the same elements from both decoders, and
# cstrace's made them all
follow_same() {
	local name=$1 trace=$2 n
	shift 2
	"$CSTRACE" decode --format=jsonl --threads 1 --decoder=opencsd "$@" "$trace" \
		> "$TMP/ocsd" 2> "$TMP/ocsd.err"
	"$CSTRACE" decode --format=jsonl --threads 1 --decoder=cstrace "$@" "$trace" \
		> "$TMP/own" 2> "$TMP/own.err"
	check "$name: cstrace's decoder gives OpenCSD's elements: $(diff "$TMP/ocsd" "$TMP/own" | head -4)" \
		cmp -s "$TMP/ocsd" "$TMP/own"
	check "$name: the same messages" cmp -s "$TMP/ocsd.err" "$TMP/own.err"
	"$CSTRACE" decode --format=none --stats --threads 1 --decoder=cstrace "$@" "$trace" \
		2> "$TMP/stats" > /dev/null
	n=$(sed -n "s/^cstrace: \([0-9]*\) of the elements by cstrace's own decoder$/\1/p" \
		"$TMP/stats")
	check "$name: every element by cstrace's decoder ($(grep -c . "$TMP/ocsd") elements, ${n:-none} its)" \
		[ "${n:-0}" -eq "$(grep -c . "$TMP/ocsd")" ]
	check "$name: some trace at all" [ "${n:-0}" -gt 5 ]
}

follow_same sample "$CSTRACE_SOURCE_DIR/testdata/sample/a64-loop"

if [ ! -d "$SHARED/opencsd" ]; then
	echo "note: shared captures not found at $SHARED/opencsd: the sample only"
	finish
fi
o=$SHARED/opencsd
# Juno (four A53/A57 ETMs, kernel and user, overflows, exception returns), the
# exact-match address bug's trace (1.7 M elements), single stepping, short
# addresses after sync
follow_same juno_r1_1 "$o/juno_r1_1"
follow_same juno-uname-001 "$o/juno-uname-001"
follow_same test-file-mem-offsets "$o/test-file-mem-offsets"
follow_same bugfix-exact-match "$o/bugfix-exact-match"
follow_same a57_single_step "$o/a57_single_step"
follow_same init-short-addr "$o/init-short-addr"

# A reserved packet header (a55-test-tpiu, 13708 bytes in): an error naming the
# offset and what was met, and the default on threads decodes as one thread does.
"$CSTRACE" decode --format=none --decoder=cstrace --threads 1 "$o/a55-test-tpiu" \
	> /dev/null 2> "$TMP/err"
rc=$?
check "reserved header: an error: $(grep error "$TMP/err" | head -c 300)" \
	sh -c '[ "$0" -eq 1 ] && grep -q "offset 13708: trace ID 0x1 holds a packet of type 0x302, which cstrace.s decoder does not cover" "$1"' \
	"$rc" "$TMP/err"
for v in "decode --format=jsonl" script; do
	# shellcheck disable=SC2086 # v holds its options
	"$CSTRACE" $v --threads 1 "$o/a55-test-tpiu" > "$TMP/one" 2>&1
	# shellcheck disable=SC2086
	"$CSTRACE" $v --threads 3 --chunk-size 1K "$o/a55-test-tpiu" > "$TMP/many" 2>&1
	check "reserved header: $v on threads as on one" cmp -s "$TMP/one" "$TMP/many"
done

# ETMv3, PTM and STM: OpenCSD's decoders whatever is asked
for c in TC2 tc2-ptm-rstk-t32 stm_only; do
	"$CSTRACE" decode --format=jsonl --decoder=opencsd "$o/$c" > "$TMP/ocsd" 2>&1
	"$CSTRACE" decode --format=jsonl --decoder=cstrace "$o/$c" > "$TMP/own" 2>&1
	check "$c: other protocols decode as before" cmp -s "$TMP/ocsd" "$TMP/own"
done

# OpenCSD's own element print needs OpenCSD's decoder
"$CSTRACE" decode --format=elements --decoder=cstrace "$o/juno_r1_1" > /dev/null 2> "$TMP/err"
rc=$?
check "--format=elements with --decoder=cstrace: a usage error: $(head -c 200 "$TMP/err")" \
	sh -c '[ "$0" -eq 2 ] && grep -q "not with --decoder=cstrace" "$1"' "$rc" "$TMP/err"
"$CSTRACE" decode --format=elements --decoder=recover "$o/juno_r1_1" > /dev/null 2> "$TMP/err"
rc=$?
check "--format=elements --decoder=recover: a usage error: $(head -c 200 "$TMP/err")" \
	sh -c '[ "$0" -eq 2 ] && grep -q "not with --decoder=recover" "$1"' "$rc" "$TMP/err"
"$CSTRACE" decode --decoder=fast "$o/juno_r1_1" > /dev/null 2> "$TMP/err"
rc=$?
check "--decoder=fast: a usage error: $(head -c 200 "$TMP/err")" \
	sh -c '[ "$0" -eq 2 ] && grep -q "expected auto, opencsd, cstrace or recover" "$1"' "$rc" "$TMP/err"
finish
