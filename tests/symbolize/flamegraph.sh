#!/usr/bin/env bash
# The flame graph SVG in a real browser: headless Chromium renders it (a
# screenshot is kept in the test's directory), its DOM names the hottest
# functions, "#zoom=main" gives main the full width and hides what main did not
# call, "#search=^fib$" reports the share that report --children gives fib.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || skip "chromium missing (scripts/setup.sh installs it)"
bin=$CSTRACE_BUILD_DIR/testdata/aarch64/recurse
[ -x "$bin" ] || skip "$bin not built"
command -v qemu-aarch64 >/dev/null || skip "qemu-aarch64 missing"

browse() { # url -> DOM after scripts ran, in a 1000-pixel window taller than the graph
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
    --window-size=1000,1000 --dump-dom "$1" 2>/dev/null
}
check "synth" bash -c "'$CSTRACE' synth --arch aarch64 -o '$TMP/r.snap' -- '$bin' >/dev/null 2>&1"
o=(--elf "$bin" "$TMP/r.snap")
check "flame graph" "$CSTRACE" report --format=flamegraph -o "$TMP/r.svg" "${o[@]}"
check "report --children" "$CSTRACE" report --children --format=json -o "$TMP/r.json" "${o[@]}"
browse "file://$TMP/r.svg" >"$TMP/dom.txt"
check "Chromium rendered the SVG" grep -q '<svg' "$TMP/dom.txt"
check "no XML error" bash -c "! grep -qi 'error on line' '$TMP/dom.txt'"
# the three functions with the most instructions of their own are labelled
for f in $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rows"]; print(" ".join(x["sym"] for x in r[:3]))' "$TMP/r.json"); do
  check "the DOM names hot function $f" grep -q ">$f<" "$TMP/dom.txt"
done
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
  --window-size=1240,830 --screenshot="$TMP/flamegraph.png" "file://$TMP/r.svg" >/dev/null 2>&1
check "a screenshot was taken ($TMP/flamegraph.png)" test -s "$TMP/flamegraph.png"
browse "file://$TMP/r.svg#zoom=main" >"$TMP/zoom.txt"
# the graph fills the window (1000 pixels: 980 inside the margins)
W=$(sed -n 's/.*<svg [^>]*id="cstflame"[^>]* data-width="\([0-9]*\)".*/\1/p' "$TMP/zoom.txt" | head -1)
check "the graph is as wide as the window ($W of 1000 pixels)" test "${W:-0}" = 980
check "zoom: main is as wide as the graph" grep -q "data-name=\"main\"[^>]*><title>[^<]*</title><rect x=\"10.00\" y=\"[0-9]*\" width=\"$((W - 1)).50\"" "$TMP/zoom.txt"
check "zoom: what main did not call is hidden" \
  grep -q 'data-name="__tunables_init"[^>]*style="display: none;"' "$TMP/zoom.txt"
browse "file://$TMP/r.svg#search=^fib\$" >"$TMP/search.txt"
want=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); f=[x for x in r["rows"] if x["sym"]=="fib"][0]; print("%.2f" % (100.0*f["children"]/r["total_insns"]))' "$TMP/r.json")
check "search: fib matches $want% (its children share)" grep -q "Matched: $want%" "$TMP/search.txt"
browse "file://$TMP/r.svg#search=^FIB\$" >"$TMP/search2.txt"
check "search is case-insensitive: ^FIB\$ matches $want%" grep -q "Matched: $want%" "$TMP/search2.txt"
check "Ctrl-F opens the search" grep -q -F "(e.ctrlKey||e.metaKey)&&(e.key==='f'||e.key==='F')){e.preventDefault(); search();}" "$TMP/r.svg"
check "a box entered once says '1 call'" grep -q 'data-name="_start"[^>]*data-info="_start ([0-9]* instructions, 100.00%, 1 call)"' "$TMP/dom.txt"
check "no '1 calls' anywhere" bash -c "! grep -q ' 1 calls' '$TMP/dom.txt'"
# a wider window, a fixed width, a title, the icicle view
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
  --window-size=1600,1000 --dump-dom "file://$TMP/r.svg" >"$TMP/wide.txt" 2>/dev/null
check "a 1600-pixel window: a 1580-pixel graph" grep -q '<svg [^>]*id="cstflame"[^>]* data-width="1580"' "$TMP/wide.txt"
check "flamegraph --width 900 --title" "$CSTRACE" report --format=flamegraph --width 900 \
  --title "fib, recursively" -o "$TMP/w.svg" "${o[@]}"
browse "file://$TMP/w.svg#zoom=main" >"$TMP/w.txt"
check "--width 900: fixed whatever the window" grep -q 'data-name="main"[^>]*><title>[^<]*</title><rect x="10.00" y="[0-9]*" width="899.50"' "$TMP/w.txt"
check "--title: the graph's title" grep -q '<text id="title"[^>]*>fib, recursively</text>' "$TMP/w.txt"
browse "file://$TMP/r.svg#inverted" >"$TMP/inv.txt"
check "#inverted: an icicle graph, _start at the top (y 56)" \
  grep -q 'data-name="_start"[^>]*><title>[^<]*</title><rect x="10.00" y="56"' "$TMP/inv.txt"
check "--inverted draws it so from the start" "$CSTRACE" report --format=flamegraph --inverted -o "$TMP/i.svg" "${o[@]}"
check "--inverted: _start at the top in the file" grep -q 'data-name="_start"[^>]*><title>[^<]*</title><rect x="10.00" y="56"' "$TMP/i.svg"
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
  --window-size=1600,900 --screenshot="$TMP/icicle.png" "file://$TMP/r.svg#inverted" >/dev/null 2>&1
check "an icicle screenshot ($TMP/icicle.png)" test -s "$TMP/icicle.png"
finish
