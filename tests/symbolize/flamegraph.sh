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

browse() { # url -> DOM after scripts ran
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
    --dump-dom "$1" 2>/dev/null
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
check "zoom: main is as wide as the graph" grep -q 'data-name="main"[^>]*><title>[^<]*</title><rect x="10.00" y="[0-9]*" width="1199.50"' "$TMP/zoom.txt"
check "zoom: what main did not call is hidden" \
  grep -q 'data-name="__tunables_init"[^>]*style="display: none;"' "$TMP/zoom.txt"
browse "file://$TMP/r.svg#search=^fib\$" >"$TMP/search.txt"
want=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); f=[x for x in r["rows"] if x["sym"]=="fib"][0]; print("%.2f" % (100.0*f["children"]/r["total_insns"]))' "$TMP/r.json")
check "search: fib matches $want% (its children share)" grep -q "Matched: $want%" "$TMP/search.txt"
finish
