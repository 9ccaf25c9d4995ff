#!/usr/bin/env bash
# The HTML report in a real browser: headless Chromium renders the page (a
# screenshot is kept); its DOM has what was captured (the binary's build-id, the
# trace and its size, the loss slot), the function table with the hottest
# function, sorted by any column, the call graph naming classify under main, the
# flame graph's script started inside the page (it styles every box), the
# coverage table with lcov's branch counts and cov.c annotated with
# never_called's line marked as missed; system headers folded away (inline.c's
# atoi and stdlib.h); the page as wide as the window; nothing loaded from outside.
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
i = re.search(r"calls? +main</summary>", dom)
j = re.search(r"calls? +classify</summary>", dom[i.end():]) if i else None
sys.exit(0 if i and j else 1)
PY
check "one call is '1 call'" bash -c "grep -q ' 1 call  *main</summary>' '$TMP/dom.txt' && ! grep -q ' 1 calls ' '$TMP/dom.txt'"
# what was captured: the binary with its build-id, the trace and its size, the
# loss (the loss model's words; this run lost none)
bid=$(readelf -n "$bin" | awk '/Build ID/ {print $3}')
check "the page names the binary and its build-id" grep -q "<dd>$bin (100.0% of the instructions, build-id $bid)</dd>" "$TMP/dom.txt"
check "the page names the trace" grep -q "<dt>trace</dt><dd>$TMP/cov.snap</dd>" "$TMP/dom.txt"
check "the page says what was lost: none" grep -q '<dt>loss</dt><dd id="lost">none</dd>' "$TMP/dom.txt"
check "the page names its maker" grep -q '<dt>made by</dt><dd>cstrace ' "$TMP/dom.txt"
# sorted by a column: #sort=N clicks its heading (numbers most first, names A-Z)
cat >"$TMP/first.py" <<'PY'
import re, sys
d = open(sys.argv[1]).read()
t = d[d.find('id="functable"'):d.find("</table>", d.find('id="functable"'))]
rows = re.findall(r'<tr(?: class="([^"]*)")?><td>(.*?)</tr>', t, re.S)
if sys.argv[2] == "folded":  # the first 25 shown, the rest folded
    sys.exit(0 if len(rows) > 25 and all("more" not in c for c, _ in rows[:25])
             and all("more" in c for c, _ in rows[25:]) else 1)
sys.exit(0 if sys.argv[2] in rows[0][1] else 1)
PY
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
  --dump-dom "file://$TMP/report.html#sort=3" >"$TMP/sort3.txt" 2>/dev/null
most=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rows"]; print(max(r, key=lambda x: x["entries"])["entries"])' "$TMP/report.json")
check "#sort=3: the function entered most ($most times) first" \
  python3 "$TMP/first.py" "$TMP/sort3.txt" "</td><td>$most</td>"
check "#sort=3: the heading says it sorted down" grep -q '<th class="desc">entered</th>' "$TMP/sort3.txt"
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
  --dump-dom "file://$TMP/report.html#sort=7" >"$TMP/sort7.txt" 2>/dev/null
az=$(python3 -c 'import json,sys; print(sorted((x["sym"] for x in json.load(open(sys.argv[1]))["rows"]), key=str.lower)[0])' "$TMP/report.json")
check "#sort=7: by name, $az first" python3 "$TMP/first.py" "$TMP/sort7.txt" "<td class=\"l\">$az</td>"
check "... and the rows past the 25th folded again" python3 "$TMP/first.py" "$TMP/sort7.txt" folded
# branches as lcov counts them
"$CSTRACE" report --format=lcov -o "$TMP/cov.info" --elf "$bin" "$TMP/cov.snap"
br=$(awk '/^SF:.*cov.c$/ {on=1} on && /^BRF:/ {f=substr($0,5)} on && /^BRH:/ {h=substr($0,5)} /end_of_record/ {on=0} END {print h "/" f}' "$TMP/cov.info")
check "the coverage table gives cov.c's branches as lcov ($br)" \
  grep -q "<td data-v=\"[0-9]*\">$br</td><td class=\"l\"><a href=\"#src-[0-9]*\">[^<]*cov.c</a>" "$TMP/dom.txt"
check "the flame graph's script ran in the page" grep -q 'data-name="main"[^>]*><title>[^<]*</title><rect[^>]*style="opacity: 1;"' "$TMP/dom.txt"
check "the coverage table lists cov.c" grep -q 'cov.c</a></td>' "$TMP/dom.txt"
check "never_called's body is marked as missed" \
  grep -q '<span class="miss"><span class="cnt">0</span><span class="br"></span>    8  ' "$TMP/dom.txt"
check "classify's loop line ran 10 times, its branch both ways" \
  grep -q '<span class="hit"><span class="cnt">10</span><span class="br all"[^>]*>2/2</span>   13  ' "$TMP/dom.txt"
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
  --window-size=1300,3200 --screenshot="$TMP/report.png" "file://$TMP/report.html" >/dev/null 2>&1
check "a screenshot was taken ($TMP/report.png)" test -s "$TMP/report.png"

# sizes, measured in the page by a script added to a copy: the table and the
# flame graph as wide as the window, the rows past 25 and the folds closed
sizes() { # page window-width -> "body table svg row26 sysdetails" in pixels
  { sed 's|</body>|<script>window.addEventListener("load",function(){var t=document.getElementById("functable"),r=t.tBodies[0].rows,s=document.getElementById("sysfiles");document.body.setAttribute("data-sizes",[document.body.clientWidth,t.offsetWidth,document.getElementById("cstflame").getBoundingClientRect().width,r.length>25?r[25].offsetHeight:-1,s?s.offsetHeight:-1].join(" "));});</script></body>|' "$1"; } >"$1.sized.html"
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
    --window-size="$2",3000 --dump-dom "file://$1.sized.html" 2>/dev/null |
    sed -n 's/.*<body data-sizes="\([^"]*\)".*/\1/p'
}
read -r body table svg row26 sysh <<<"$(sizes "$TMP/report.html" 1600)"
check "1600-pixel window: the table spans the page ($table of $body)" test "${table:-0}" = "${body:-1}"
check "... and so does the flame graph (${svg%.*} of $body)" test "${svg%.*}" = "${body:-1}"
check "... the rows past the 25th are folded (${row26}px)" test "${row26:--1}" = 0

# inline.c: atoi brings /usr/include/stdlib.h; it is folded away, shown near its
# code only, and the program's own file comes first and whole
inl=$TMP/inline
check "build inline.c" aarch64-linux-gnu-gcc -g -O2 -static -o "$inl" "$CSTRACE_SOURCE_DIR/testdata/src/inline.c"
check "synth inline" bash -c "'$CSTRACE' synth --arch aarch64 -o '$TMP/inl.snap' -- '$inl' >/dev/null 2>&1"
check "report inline" "$CSTRACE" report --format=html -o "$TMP/inl.html" --elf "$inl" "$TMP/inl.snap"
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
  --dump-dom "file://$TMP/inl.html" >"$TMP/inl.txt" 2>/dev/null
check "system headers: folded, closed, stdlib.h in the fold only" python3 - "$TMP/inl.txt" <<'PY'
import re, sys
d = open(sys.argv[1]).read()
fold = d.find('<details class="fold" id="sysfiles">')
main = d[d.find('id="coverage"'):fold]
assert fold > 0 and "stdlib.h" in d[fold:d.find("</details>", fold)], "stdlib.h not in the fold"
assert "stdlib.h" not in main and "inline.c" in main, "the program's table"
src = d.find('<details class="fold" id="syssrc">')
assert src > 0 and d.find("stdlib.h</h3>") < 0 or d.find("stdlib.h", src) > src
body = d[src:d.find("</details>", src)]
assert "     ...</span>" in body, "not cut to the lines near code"
assert body.count("\n") < 120, body.count("\n")
PY
read -r body table svg row26 sysh <<<"$(sizes "$TMP/inl.html" 1300)"
check "the system fold is closed (${sysh}px, one line)" test "${sysh:-99}" -lt 30
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
  --window-size=1400,3000 --screenshot="$TMP/inline.png" "file://$TMP/inl.html" >/dev/null 2>&1
check "a screenshot of the inline page ($TMP/inline.png)" test -s "$TMP/inline.png"
finish
