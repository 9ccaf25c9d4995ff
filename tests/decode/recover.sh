#!/usr/bin/env bash
# OpenCSD 1.3.3's ETMv4 decoder crashes on a Mispredict packet in trace recorded
# without speculation (mispredictAtom follows a null pointer). The crash is
# contained; then, once, the run starts again from where the crashed child
# began, past what it printed, with cstrace's own decoders recovering
# (--decoder=recover): they do not run OpenCSD's decoder, take the packet as bad
# data, say so, and find sync again. Before, the bytes after the crash point
# were skipped, and with them the next sync and everything after it.
# The input: the bundled sample's trace with one byte made a Mispredict packet,
# then the sample's trace again (the sync where decoding goes on).
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
sample=$CSTRACE_SOURCE_DIR/testdata/sample/a64-loop
s=$TMP/bad
cp -r "$sample" "$s"
chmod -R u+w "$s"
python3 - "$sample/cstrace.bin" "$s/cstrace.bin" <<'PY'
import sys
good = open(sys.argv[1], 'rb').read()
bad = bytearray(good)
bad[331] = 0x30  # I_MISPREDICT, inside the 21st frame
open(sys.argv[2], 'wb').write(bytes(bad) + good)
PY
n=$(stat -c %s "$sample/cstrace.bin")
"$CSTRACE" decode "$sample" > "$TMP/good" 2>/dev/null
"$CSTRACE" script "$sample" > "$TMP/good.script" 2>/dev/null
ranges() { grep ' range ' "$1" | sed 's/^ *[0-9]* //'; }

for threads in 1 2; do
	"$CSTRACE" decode --threads $threads "$s" > "$TMP/out" 2> "$TMP/err"
	rc=$?
	t="decode, $threads thread(s)"
	check "$t: exit 0 (rc $rc: $(head -c 300 "$TMP/err"))" [ $rc -eq 0 ]
	check "$t: says OpenCSD crashed and who decodes again" \
		grep -q "^cstrace: warning: .*/bad: the OpenCSD decoder crashed (signal [0-9]*) near byte [0-9]*; decoding again with cstrace's own decoder, which goes on past bad packets$" "$TMP/err"
	check "$t: names the bad packet" \
		grep -q "bad/cstrace.bin: offset 330: trace ID 0x10 holds a packet of type 0x30, where OpenCSD's decoder crashed: cstrace's decoder resynchronises after it; trace skipped" "$TMP/err"
	check "$t: no bytes skipped" sh -c '! grep -q "is skipped and decoding resumes" "$1"' _ "$TMP/err"
	# before the bad packet: what a good run printed, once
	k=$(grep -n "GAP no-sync (resync)" "$TMP/out" | cut -d: -f1)
	check "$t: one gap where the packet was" test -n "$k"
	head -n $((${k:-1} - 1)) "$TMP/out" > "$TMP/before"
	check "$t: the elements before the bad packet, each once" \
		cmp -s "$TMP/before" <(head -n $((${k:-1} - 1)) "$TMP/good")
	# after it: the second copy, from its sync, whole
	tail -n +$((${k:-1} + 1)) "$TMP/out" > "$TMP/after"
	check "$t: every range of the trace after the next sync ($(ranges "$TMP/good" | wc -l))" \
		cmp -s <(ranges "$TMP/after") <(ranges "$TMP/good")
	check "$t: offsets go on past the first copy" grep -q "^ *$((n + 17)) " "$TMP/after"
done

"$CSTRACE" script "$s" > "$TMP/script" 2> "$TMP/err"
check "script: exit 0" [ $? -eq 0 ]
g=$(wc -l < "$TMP/good.script")
check "script: the second copy's branches, whole, at the end ($g lines)" \
	cmp -s <(tail -n "$g" "$TMP/script") "$TMP/good.script"
check "script: nothing printed twice ($(wc -l < "$TMP/script") lines)" \
	test "$(wc -l < "$TMP/script")" -lt $((2 * g))

# an output file the crashed child was writing is gone: written again whole
"$CSTRACE" decode -o "$TMP/o.txt" "$s" 2>/dev/null
check "decode -o: the file holds what standard output gets" cmp -s "$TMP/o.txt" "$TMP/out"

# OpenCSD's decoder asked for, or its element text: bytes skipped, as before
for args in "--decoder=opencsd" "--format=elements"; do
	"$CSTRACE" decode $args "$s" > /dev/null 2> "$TMP/err"
	check "decode $args: exit 0" [ $? -eq 0 ]
	check "decode $args: OpenCSD's decoder again, past skipped bytes" \
		grep -q "trace up to byte [0-9]* is skipped and decoding resumes there" "$TMP/err"
	check "decode $args: not cstrace's decoder" sh -c '! grep -q "decoding again with" "$1"' _ "$TMP/err"
done
finish
