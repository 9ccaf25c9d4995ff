#!/usr/bin/env bash
# The HTML report in a real browser: headless Chromium renders the page (a
# screenshot is kept); its DOM has the function table with the hottest function,
# the call graph naming classify under main, the flame graph's script started
# inside the page (it styles every box), the coverage table and cov.c annotated
# with never_called's line marked as missed; the page loads nothing from outside.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || skip "chromium missing (scripts/setup.sh installs it)"
command -v aarch64-linux-gnu-gcc >/dev/null || skip "aarch64-linux-gnu-gcc missing"
command -v qemu-aarch64 >/dev/null || skip "qemu-aarch64 missing"

bin=$TMP/cov
check "build cov.c" aarch64-linux-gnu-gcc -g -O1 -static -o "$bin" "$here/cov.c"
check "synth" bash -c "'$CSTRACE' synth --arch aarch64 -o '$TMP/cov.snap' -- '$bin' >/dev/null 2>&1"
check "report --format=html" "$CSTRACE" report --format=html -o "$TMP/report.html" --elf "$bin" "$TMP/cov.snap"
check "report --format=json" "$CSTRACE" report --format=json -o "$TMP/report.json" --elf "$bin" "$TMP/cov.snap"
check "nothing is loaded from outside the page" bash -c \
  "! grep -Eo '(src|href)=\"[a-z]+:' '$TMP/report.html' | grep -v '^href=\"#'"
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
  --dump-dom "file://$TMP/report.html" >"$TMP/dom.txt" 2>/dev/null
hot=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rows"][0]["sym"])' "$TMP/report.json")
check "the table names the hottest function ($hot)" grep -q "<td class=\"l\">$hot</td>" "$TMP/dom.txt"
check "the call graph shows main calling classify" \
  python3 - "$TMP/dom.txt" <<'PY'
import re, sys
dom = open(sys.argv[1]).read()
i = dom.find("calls  main</summary>")
j = dom.find("calls  classify</summary>", i)
sys.exit(0 if i >= 0 and j > i else 1)
PY
check "the flame graph's script ran in the page" grep -q 'data-name="main"[^>]*><title>[^<]*</title><rect[^>]*style="opacity: 1;"' "$TMP/dom.txt"
check "the coverage table lists cov.c" grep -q 'cov.c</a></td>' "$TMP/dom.txt"
check "never_called's body is marked as missed" \
  grep -q '<span class="miss"><span class="cnt">0</span>    8  ' "$TMP/dom.txt"
check "classify's loop line ran 10 times" \
  grep -q '<span class="hit"><span class="cnt">10</span>   13  ' "$TMP/dom.txt"
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
  --window-size=1300,3200 --screenshot="$TMP/report.png" "file://$TMP/report.html" >/dev/null 2>&1
check "a screenshot was taken ($TMP/report.png)" test -s "$TMP/report.png"
finish
