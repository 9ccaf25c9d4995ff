#!/usr/bin/env bash
# AUXTRACE bytes the file's own AUX records disown: a record taken out leaves its
# bytes covered by none (perf 6.1 skips them), a record written twice claims its
# bytes twice (perf decodes them twice). cstrace decodes every byte once and warns,
# naming the records. A synth run with several AUX records (a small sink) is
# mutated with disown.py; each mutation must decode to the very instructions of
# the unmutated file, which are QEMU's, in file order and in time order, on one
# thread and on several, exit 0, with the warning; perf's count shows the loss or
# the double count.
# Usage: disowned_aux.sh ARCH PROG [synth options...]
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
arch=$1; prog=$2; shift 2
need_synth "$arch" "$prog"
. "$CSTRACE_SOURCE_DIR/tests/decode/threads_lib.sh"
. "$CSTRACE_SOURCE_DIR/tests/perfdata/disowned_lib.sh"

disowned_base "$arch" "$prog" "$@"
[ "${records:-0}" -ge 3 ] || fail "$records AUX records: the test needs at least 3"
aux_said='AUXTRACE record \(cpu [0-9]+, aux offset 0x[0-9a-f]+, [0-9]+ bytes\)'

# A record in the middle taken out: its buffer is covered by none; decoded before the
# next record of its ring, in file order too
mut "$TMP/base.data" "$TMP/mid.data" drop-aux 1 > "$TMP/said"
disowned "AUX record 1 taken out" "$TMP/mid.data" "$TMP/base.data" "<" \
	"offset $(one auxtrace): AUXTRACE record \(cpu $(one cpu), aux offset $(one aux_offset), $(one size) bytes\): no AUX record covers its trace; perf skips it, cstrace decodes it"
# The last: decoded at the end of the walk
mut "$TMP/base.data" "$TMP/last.data" drop-aux -1 > "$TMP/said"
disowned "the last AUX record taken out" "$TMP/last.data" "$TMP/base.data" "<" \
	"offset $(one auxtrace): AUXTRACE record \(cpu $(one cpu), aux offset $(one aux_offset), $(one size) bytes\): no AUX record covers its trace; perf skips it, cstrace decodes it"
# A record written twice: its trace decoded once
mut "$TMP/base.data" "$TMP/dup.data" dup-aux 1 > "$TMP/said"
disowned "AUX record 1 twice" "$TMP/dup.data" "$TMP/base.data" ">" \
	"offset $(one dup): AUX record \(cpu [0-9]+, aux offset 0x[0-9a-f]+, $(one size) bytes\): its trace was decoded for the AUX record at offset $(one aux); skipped \(perf decodes it twice\)"

# One AUXTRACE buffer read for two records (two sched-outs, one read of the ring):
# the first half taken out leaves bytes inside the buffer that none covers, and
# the second half moved back over the first repeats part of its trace.
mut "$TMP/base.data" "$TMP/split.data" split-aux 1 > /dev/null
for order in file time; do insns $order "$TMP/split.data"; done
mut "$TMP/split.data" "$TMP/half.data" drop-aux 1 > "$TMP/said"
disowned "half a buffer's records taken out" "$TMP/half.data" "$TMP/split.data" "<" \
	"offset $(one auxtrace): $aux_said: no AUX record covers its $(one size) bytes at aux offset $(one aux_offset); perf skips them, cstrace decodes them"
mut "$TMP/split.data" "$TMP/widen.data" widen-aux 2 > "$TMP/said"
disowned "a record over the one before" "$TMP/widen.data" "$TMP/split.data" ">" \
	"offset $(one dup): AUX record \(cpu [0-9]+, aux offset 0x[0-9a-f]+, [0-9]+ bytes\): its first $(one bytes) bytes were decoded for the AUX record at offset $(one aux); decoding the other [0-9]+ \(perf decodes those $(one bytes) twice\)"
# decode --stats counts them: the bytes decoded though no record covers them, and
# the bytes named again, decoded once
"$CSTRACE" decode --format=none --stats "$TMP/mid.data" 2> "$TMP/stats.err" > /dev/null
check "--stats, a record taken out: the uncovered bytes counted" \
	grep -Eq "^cstrace: [1-9][0-9]* AUXTRACE bytes no AUX record covers, decoded; 0 named again" "$TMP/stats.err"
"$CSTRACE" decode --format=none --stats "$TMP/dup.data" 2> "$TMP/stats.err" > /dev/null
check "--stats, a record twice: the bytes named again counted" \
	grep -Eq "^cstrace: 0 AUXTRACE bytes no AUX record covers, decoded; [1-9][0-9]* named again" "$TMP/stats.err"
"$CSTRACE" decode --format=none --stats "$TMP/base.data" 2> "$TMP/stats.err" > /dev/null
check "--stats, unmutated: no such line" sh -c '! grep -q "AUXTRACE bytes no AUX" "$1"' _ "$TMP/stats.err"
$have_perf || echo "perf not installed: perf's counts not checked"
finish
