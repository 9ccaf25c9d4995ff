# cstrace replay over the recorded AUX streams in testdata/auxlog (made by the kernel
# model through the consumer record runs, see test_replay.c --write, and by synth
# --aux-log from QEMU runs of the test programs): each replay
# must write the very perf.data that capture wrote, whatever machine runs it; a
# stream cut short replays into what was consumed; bad streams fail in one line.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
D=$CSTRACE_SOURCE_DIR/testdata/auxlog

check "replay --help" bash -c '"$0" replay --help | grep -q -- "--aux-log"' "$CSTRACE"
for s in normal slow-consumer wrap32 snapshot synth-arm-threads-etf synth-a64-recurse-snapshot; do
  quiet "$CSTRACE" replay -o "$TMP/$s.data" "$D/$s.auxlog"
  check "$s: replay exits 0" test $? -eq 0
  got=$(sha256sum <"$TMP/$s.data" | cut -d' ' -f1)
  check "$s: the perf.data the capture wrote (sha256 $got)" test "$got" = "$(cat "$D/$s.sha256")"
  check "$s: perf.data is 0600" test "$(stat -c %a "$TMP/$s.data")" = 600
  check "$s: cstrace aux reads it" quiet "$CSTRACE" aux "$TMP/$s.data"
done
# the summary says what the rings saw, as record's does
"$CSTRACE" replay -o "$TMP/s.data" "$D/slow-consumer.auxlog" 2>"$TMP/err"
check "summary counts the truncations" grep -q "TRUNCATED" "$TMP/err"

# Cut short (a board that died mid-capture): the perf.data of what was consumed.
size=$(stat -c %s "$D/normal.auxlog")
head -c $((size / 2 + 5)) "$D/normal.auxlog" >"$TMP/cut.auxlog"
"$CSTRACE" replay -o "$TMP/cut.data" "$TMP/cut.auxlog" 2>"$TMP/err"
check "cut stream: exit 0" test $? -eq 0
check "cut stream: says where it ends" grep -q "ends at offset 0x[0-9a-f]* without an end event" "$TMP/err"
check "cut stream: a perf.data cstrace aux reads" quiet "$CSTRACE" aux "$TMP/cut.data"
check "cut stream: smaller than the whole" test "$(stat -c %s "$TMP/cut.data")" -lt "$(stat -c %s "$TMP/normal.data")"

# cstrace aux on a stream: events in time order, a verdict per ring, an SVG timeline.
"$CSTRACE" aux --timeline "$TMP/slow.svg" "$D/slow-consumer.auxlog" >"$TMP/aux.txt" 2>"$TMP/err"
check "aux on a stream: exit 0" test $? -eq 0
check "aux: one line per write (27 AUX records)" test "$(grep -c ' write ' "$TMP/aux.txt")" -eq 27
check "aux: the verdict blames the late consumer" grep -q "^cpu 0: .*9 truncation(s).*consumer was late" "$TMP/aux.txt"
check "aux: exact byte counts" grep -q "^cpu 0: the kernel wrote 27 time(s), 73584 bytes (71.9 KiB); the consumer read 9 time(s), copying 73584 bytes" "$TMP/aux.txt"
check "aux: the SVG parses, one bar per write and read" python3 -c '
import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]); ns = "{http://www.w3.org/2000/svg}"
titles = [e.findtext(ns + "title") or "" for e in t.iter(ns + "rect")]
w = sum(x.startswith("write at") for x in titles); r = sum(x.startswith("read at") for x in titles)
sys.exit(0 if (w, r) == (27, 9) else 1)' "$TMP/slow.svg"
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$chromium" ]; then
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
    --dump-dom "file://$TMP/slow.svg" >"$TMP/dom.txt" 2>/dev/null
  check "Chromium renders the timeline" grep -q '<svg' "$TMP/dom.txt"
  check "timeline: no XML error" bash -c "! grep -qi 'error on line' '$TMP/dom.txt'"
  check "timeline: the DOM names the CPU lane" grep -q 'ring 0, cpu 0, AUX 8 KiB, normal mode' "$TMP/dom.txt"
  check "timeline: the DOM names the loss" grep -q 'TRUNCATED at [0-9.]* s: the sink dropped trace' "$TMP/dom.txt"
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
    --window-size=1000,330 --screenshot="$TMP/timeline.png" "file://$TMP/slow.svg" >/dev/null 2>&1
  check "timeline: a screenshot was taken" test -s "$TMP/timeline.png"
fi
"$CSTRACE" aux --summary "$D/snapshot.auxlog" >"$TMP/aux.txt"
check "aux: snapshot overwrites told" grep -q "overwritten before a snapshot read it" "$TMP/aux.txt"
"$CSTRACE" aux --summary "$TMP/cut.auxlog" >"$TMP/aux.txt"
check "aux: a cut stream says where it stops" grep -q "stops at offset 0x[0-9a-f]* without an end event" "$TMP/aux.txt"
head -c 40 "$D/normal.auxlog" >"$TMP/head.auxlog"
"$CSTRACE" aux "$TMP/head.auxlog" >/dev/null 2>"$TMP/err"
check "aux: a stream without rings fails" test $? -eq 1

# The drawings: an x-axis label, what was lost in bytes, and no label over
# another or over a line (measured in Chromium; the perf.data drawing once put
# its legend on the head curve)
. "$CSTRACE_SOURCE_DIR/tests/capture/svg_layout.sh"
"$CSTRACE" aux --timeline "$TMP/snap.svg" "$D/snapshot.auxlog" >/dev/null 2>&1
"$CSTRACE" aux --timeline "$TMP/etf.svg" "$D/synth-arm-threads-etf.auxlog" >/dev/null 2>&1
"$CSTRACE" replay -q -o "$TMP/n.data" "$D/normal.auxlog"
"$CSTRACE" aux --timeline "$TMP/ndata.svg" "$TMP/n.data" >/dev/null 2>&1
check "timeline: the lane says what was lost (9 truncations)" \
  grep -q "lost: 9 truncation(s), bytes not counted by the kernel" "$TMP/slow.svg"
check "timeline: a snapshot lane says the bytes overwritten" \
  grep -q "lost: [0-9.]* \(bytes\|KiB\) overwritten before a snapshot" "$TMP/snap.svg"
check "timeline: the x axis has its label" grep -q ">time since the capture started" "$TMP/slow.svg"
check "perf.data drawing: the x axis has its label" grep -q ">AUX and AUXTRACE records in file order" "$TMP/ndata.svg"
check "perf.data drawing: each queue's losses in bytes" \
  grep -q "AUX records, [0-9.]* \(bytes\|KiB\); lost: [0-9.]* bytes in no chunk, [0-9.]* bytes in gaps, [0-9]* truncated" "$TMP/ndata.svg"
for svg in slow snap etf ndata; do
  layout=$(svg_layout "$TMP/$svg.svg")
  [ "$layout" = skip ] && break
  check "$svg.svg: no label over another or over a line ($layout)" \
    bash -c "[[ '$layout' =~ ^[1-9][0-9]*\ 0\ *$ ]]"
done

# replay's summary and aux give one diagnosis: wrap32's sink filled its own buffer
# (replay once blamed the AUX area, -m), the slow consumer let the ring fill
"$CSTRACE" replay -o "$TMP/w.data" "$D/wrap32.auxlog" 2>"$TMP/err" >/dev/null
"$CSTRACE" aux --summary "$D/wrap32.auxlog" >"$TMP/aux.txt" 2>&1
check "replay wrap32: the sink's own buffer filled, as aux says" bash -c "
  grep -q \"with room in the ring: the sink's own buffer filled\" '$TMP/err' &&
  ! grep -q 'consumer was late\|bigger AUX area' '$TMP/err' &&
  grep -q \"with room in the ring: the sink's own buffer filled\" '$TMP/aux.txt'"
"$CSTRACE" replay -o "$TMP/s.data" "$D/slow-consumer.auxlog" 2>"$TMP/err" >/dev/null
check "replay slow-consumer: the late consumer, as aux says" grep -q "consumer was late (a bigger AUX area, -m" "$TMP/err"

# Never over the input; bad streams fail in one line naming the file and offset.
cp "$D/wrap32.auxlog" "$TMP/in.auxlog"
"$CSTRACE" replay -o "$TMP/in.auxlog" "$TMP/in.auxlog" 2>"$TMP/err"
check "refuses to write over the stream" test $? -eq 2
check "the stream is untouched" cmp -s "$D/wrap32.auxlog" "$TMP/in.auxlog"
printf 'not a stream at all' >"$TMP/bad.auxlog"
"$CSTRACE" replay -o "$TMP/bad.data" "$TMP/bad.auxlog" 2>"$TMP/err"
check "not a stream: exit 1" test $? -eq 1
check "not a stream: one line with file and offset" \
  bash -c '[ $(wc -l <"$0") -eq 1 ] && grep -q "bad.auxlog: offset 0x0: expected a recorded AUX stream" "$0"' "$TMP/err"
head -c 40 "$D/normal.auxlog" >"$TMP/head.auxlog"
"$CSTRACE" replay -o "$TMP/head.data" "$TMP/head.auxlog" 2>"$TMP/err"
check "stream without rings: exit 1" test $? -eq 1
check "stream without rings: said so" grep -q "before its rings were set up" "$TMP/err"
"$CSTRACE" replay -o "$TMP/x.data" "$TMP/missing.auxlog" 2>"$TMP/err"
check "missing stream: exit 1" test $? -eq 1
# A stream whose AUX record carries a time past 2^63 (the stream fuzzer's find):
# placing writes on the consumer's clock overflowed a signed subtraction, which the
# sanitizer stage (this test is labelled hostile) reports; the times now wrap.
python3 - "$D/synth-arm-threads-etf.auxlog" "$TMP/ktime.auxlog" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
at = b.find(b"\x0b\x00\x00\x00\x00\x00\x40\x00")  # the first AUX record, 64 bytes
assert at > 0
struct.pack_into("<Q", b, at + 40, 0x8000000000001000)  # its sample time
open(sys.argv[2], "wb").write(b)
PY
check "a write time past 2^63: aux reads the stream" quiet "$CSTRACE" aux "$TMP/ktime.auxlog"

finish
