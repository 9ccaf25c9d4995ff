# cstrace aux --ftrace: the kernel's writes from ftrace text (both the trace file's
# one-line form and trace-cmd's wrapped form), made from a perf.data's own AUX records
# with one record taken out of the perf.data (a real loss) and one consumer read late
# enough to overflow the ring: the report names that loss and that overflow, at their
# times, and nothing else.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
D=$CSTRACE_SOURCE_DIR/testdata/auxlog
quiet "$CSTRACE" replay -q -o "$TMP/n.data" "$D/normal.auxlog" || fail "replay"

for form in line wrapped; do
  python3 "$CSTRACE_SOURCE_DIR/tests/capture/ftrace.py" "$TMP/n.data" 5 20 "$form" \
    "$TMP/$form.ftrace" "$TMP/$form.data" >"$TMP/want" || { fail "$form: generator"; continue; }
  want() { sed -n "s/^$1 //p" "$TMP/want"; }
  "$CSTRACE" aux --ftrace "$TMP/$form.ftrace" --aux-size 16K "$TMP/$form.data" >"$TMP/out" 2>"$TMP/err"
  check "$form: exit 0" test $? -eq 0
  check "$form: every write on the axis" test "$(grep -cE '^[0-9.]+ +0 +write ' "$TMP/out")" -eq "$(want writes)"
  check "$form: exactly one write not reported" test "$(grep -c 'NOT REPORTED' "$TMP/out")" -eq 1
  check "$form: the removed one, at its time" \
    grep -q "^$(want removed_time) .* write  $(want removed_old) .*NOT REPORTED" "$TMP/out"
  check "$form: named with its heads in the summary" \
    grep -q "^  not reported: the write at $(want removed_time) s, heads $(want removed_old) -> " "$TMP/out"
  check "$form: one overflow, at its time" \
    grep -q "^cpu 0: .*; 1 overflow(s), the first at $(want overflow_time) s: the consumer was late" "$TMP/out"
  check "$form: the first overflowing write is the one at that time" \
    bash -c "grep OVERFLOW '$TMP/out' | head -1 | grep -q '^$(want overflow_time) '"
  check "$form: nothing else lost" \
    grep -q "; 1 write(s) (3000 bytes) no AUX record reports; 0 bytes no AUXTRACE record holds$" "$TMP/out"
  check "$form: reads paired with the ring, wake-up to read" \
    bash -c "grep ' read ' '$TMP/out' | grep -c 'ring cpu 0, drained .* 200.0 us after the wake-up' | grep -qx $(want reads)"
  sed -e "s|$TMP/$form.data|DATA|" -e 's/, line [0-9]*$//' "$TMP/out" >"$TMP/$form.out"
done
check "both forms give the same report" cmp -s "$TMP/line.out" "$TMP/wrapped.out"

# The same drawn: the lane, the loss and the overflow named in the SVG, Chromium renders it.
python3 "$CSTRACE_SOURCE_DIR/tests/capture/ftrace.py" "$TMP/n.data" 5 20 line \
  "$TMP/line.ftrace" "$TMP/line.data" >"$TMP/want"
"$CSTRACE" aux --summary --ftrace "$TMP/line.ftrace" --aux-size 16K --timeline "$TMP/ft.svg" "$TMP/line.data" >/dev/null
check "timeline: exit 0" test $? -eq 0
check "timeline: the SVG parses, a bar per write and read" python3 -c '
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
t = [e.findtext(ns + "title") or "" for e in ET.parse(sys.argv[1]).iter(ns + "rect")]
sys.exit(0 if (sum(x.startswith("write at") for x in t), sum(x.startswith("read at") for x in t)) == (40, 17) else 1)' "$TMP/ft.svg"
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$chromium" ]; then
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
    --dump-dom "file://$TMP/ft.svg" >"$TMP/dom.txt" 2>/dev/null
  check "timeline: Chromium renders it" grep -q '<svg' "$TMP/dom.txt"
  check "timeline: the DOM names the CPU lane" grep -q 'cpu 0: 40 kernel writes, 17 consumer reads' "$TMP/dom.txt"
  check "timeline: the DOM names the loss at its time" grep -q "NOT REPORTED at $(sed -n 's/^removed_time //p' "$TMP/want") s" "$TMP/dom.txt"
  check "timeline: the DOM names the overflow at its time" grep -q "OVERFLOW at $(sed -n 's/^overflow_time //p' "$TMP/want") s" "$TMP/dom.txt"
  check "timeline: the lane says the bytes lost (3000 not reported)" \
    grep -q "lost: 3000 bytes no AUX record reports (1 write(s)), 0 no AUXTRACE record holds, 1 overflow(s)" "$TMP/dom.txt"
  check "timeline: the x axis has its label" grep -q ">time (the kernel's clock" "$TMP/dom.txt"
  . "$CSTRACE_SOURCE_DIR/tests/capture/svg_layout.sh"
  layout=$(svg_layout "$TMP/ft.svg")
  check "timeline: no label over another or over a line ($layout)" \
    bash -c "[[ '$layout' =~ ^[1-9][0-9]*\ 0\ *$ ]]"
fi

# The text alone: the kernel's and the consumer's sides, no pairing.
"$CSTRACE" aux --ftrace "$TMP/line.ftrace" --aux-size 16K >"$TMP/alone" 2>&1
check "ftrace alone: exit 0" test $? -eq 0
check "ftrace alone: the overflow" grep -q "1 overflow(s)" "$TMP/alone"
check "ftrace alone: no pairing claims" bash -c "! grep -q 'NOT REPORTED\|AUX record' '$TMP/alone'"
check "ftrace alone: exact bytes" grep -q "^cpu 0: kernel writes 40 (120000 bytes), consumer reads 17 (120000 bytes), peak unread backlog 24000 bytes" "$TMP/alone"

# The kernel's writes from ftrace (at their AUX records' own times: the kernel's clock)
# and the consumer's reads from cstrace's consumer log (record's perf.data.auxlog) on
# one axis: the slow consumer of the kernel model, which read every 3 writes.
quiet "$CSTRACE" replay -q -o "$TMP/sc.data" "$D/slow-consumer.auxlog" || fail "replay slow-consumer"
cp "$D/slow-consumer.auxlog" "$TMP/sc.data.auxlog"
python3 "$CSTRACE_SOURCE_DIR/tests/capture/ftrace.py" --kernel-only "$TMP/sc.data" "$TMP/k.ftrace" >"$TMP/want"
"$CSTRACE" aux --ftrace "$TMP/k.ftrace" "$TMP/sc.data" >"$TMP/out" 2>&1
check "with the consumer log: exit 0" test $? -eq 0
check "with the consumer log: said where the reads come from" grep -q "^# the consumer's reads come from $TMP/sc.data.auxlog" "$TMP/out"
check "with the consumer log: its 9 reads, each draining the 3 writes before it" \
  bash -c "[ \$(grep -c 'read .*consumer log, ring cpu 0, drained 3 write(s)' '$TMP/out') -eq 9 ]"
check "with the consumer log: every write reported, the ring size from the log" \
  grep -q "^cpu 0: kernel writes 27 (73584 bytes), consumer reads 9 (73584 bytes), peak unread backlog 8176 bytes at [0-9.]* s (ring 8192 bytes); 0 write(s) (0 bytes) no AUX record reports; 0 bytes no AUXTRACE record holds$" "$TMP/out"
check "with the consumer log: reads after the writes they drain" python3 -c '
import sys
last_write = 0.0
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) > 2 and f[2] == "write": last_write = float(f[0])
    if len(f) > 2 and f[2] == "read" and float(f[0]) < last_write: sys.exit(1)' "$TMP/out"

# --probes: the commands that make such a trace
"$CSTRACE" aux --probes >"$TMP/probes"
check "probes: kprobe on perf_aux_output_end" grep -q "^echo 'p:cstrace/aux_end perf_aux_output_end old_head=handle->head:x64" "$TMP/probes"
check "probes: arm64 and x86-64 registers" bash -c "grep -q '%x0' '$TMP/probes' && grep -q '%di' '$TMP/probes'"
check "probes: sched tracepoints" grep -q "events/sched/sched_wakeup/enable" "$TMP/probes"

# Text with none of our events: one line, exit 1.
printf '# tracer: nop\n  bash-1 [000] d..1. 1.000000: sys_enter: NR 1\n' >"$TMP/none.ftrace"
"$CSTRACE" aux --ftrace "$TMP/none.ftrace" 2>"$TMP/err" >/dev/null
check "no events: exit 1" test $? -eq 1
check "no events: one line naming the file" bash -c "[ \$(wc -l <'$TMP/err') -eq 1 ] && grep -q 'none.ftrace: no perf_aux_output_end' '$TMP/err'"
# A long recording: 200k writes and 100k reads. Counting each read's drained writes
# scanned every earlier event (about 75 s here); sorted per-ring heads make it a
# second or two, well inside a bound a quadratic walk cannot meet. Times are for
# native speed: an emulated run (a cross build's tests) scales them.
scale=${CSTRACE_TIME_SCALE:-1}
python3 - "$TMP/big.ftrace" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("# tracer: nop\n")
    t, head, tail = 100.0, 0, 0
    for i in range(200000):
        t += 0.0001
        f.write("         prog-77 [000] d..1. %.6f: aux_end: (perf_aux_output_end+0x0/0x1c8) "
                "old_head=0x%x size=0x100\n" % (t, head))
        head += 0x100
        if i % 2:
            f.write("    cstrace-4242 [001] d..1. %.6f: tracing_mark_write: __auxtrace_mmap__read: "
                    "old_offset=0x%x head_offset=0x%x size=0x%x\n" % (t + 0.00003, tail, head, head - tail))
            tail = head
PY
timeout $((30 * scale)) "$CSTRACE" aux --ftrace "$TMP/big.ftrace" --aux-size 64K >"$TMP/big.out" 2>&1
check "200k writes: done within $((30 * scale)) s" test $? -eq 0
check "200k writes: each read drained two" \
  test "$(grep -c 'ring cpu 0, drained 2 write(s)' "$TMP/big.out")" -eq 100000
check "200k writes: the summary counts them all" \
  grep -q "^cpu 0: kernel writes 200000 (51200000 bytes), consumer reads 100000" "$TMP/big.out"
finish
