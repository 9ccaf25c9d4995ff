#!/usr/bin/env bash
# Loss in every view (issue 34): a capture whose small ETF sink overflows before each
# read-out (TRUNCATED AUX records), one from the same QEMU run in snapshot mode (the
# AUX ring overwrote bytes perf.data counts) and one that lost nothing. Every view
# says what was lost, where, and nothing when nothing was: the report's header,
# the HTML and flame graph banners (in headless Chromium), `[trace lost: ...]` lines
# in script, --insn and --call-trace where QEMU's run has instructions the trace
# does not (loss_places.py), Perfetto instants, a comment in llvm-sample, and stderr
# and --stats for the formats with no place to say it, whose readers still read them;
# the profiles on the decoding threads as on one.
# Usage: loss_views.sh ARCH PROG [PROG ARGS...]
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
. "$CSTRACE_SOURCE_DIR/tests/decode/threads_lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
arch=$1; prog=$2; shift 2
need_synth "$arch" "$prog"
base=$(basename "$prog")

# a small sink: read out at system calls once half full, overflowing before each
check "synth: a 16K ETF sink, perf.data" sh -c 'c=$0 a=$1 t=$2 p=$3; shift 3; "$c" synth --arch "$a" --out perf --sink etf --buffer-size 16K --keep-log "$t/qemu.log" --truth "$t/truth" -o "$t/etf.data" -- "$p" "$@" 2> "$t/stats"' \
	"$CSTRACE" "$arch" "$TMP" "$prog" "$@"
cat "$TMP/stats"
lost=$(sed -n 's/.* \([0-9]*\) lost.*/\1/p' "$TMP/stats")
[ "${lost:-0}" -gt 0 ] || fail "the sink lost nothing: the test would prove nothing"
t=$("$CSTRACE" aux "$TMP/etf.data" | sed -n 's/^cpu 0: .*, truncated \([0-9]*\) (.*/\1/p')
[ "${t:-0}" -ge 2 ] || fail "only ${t:-0} TRUNCATED AUX records: the test wants several"
echo "perf.data: $t TRUNCATED AUX records"
# the same run, lossless (the default 4M ETR) and in snapshot mode (a 16K ring:
# the AUX positions before the snapshot were overwritten; synth flags the record
# TRUNCATED too, so the bytes are a lower bound)
check "synth: the same run, nothing lost" "$CSTRACE" synth --arch "$arch" --out perf \
	--from-log "$TMP/qemu.log" -o "$TMP/whole.data" -- "$prog" "$@"
check "synth: the same run, snapshot mode" sh -c 'c=$0 a=$1 t=$2 p=$3; shift 3; "$c" synth --arch "$a" --out perf --snapshot=16K --from-log "$t/qemu.log" -o "$t/snap.data" -- "$p" "$@" 2> "$t/snap.stats"' \
	"$CSTRACE" "$arch" "$TMP" "$prog" "$@"
snap_lost=$(sed -n 's/.* \([0-9]*\) lost.*/\1/p' "$TMP/snap.stats")
[ "${snap_lost:-0}" -gt 0 ] || fail "snapshot mode lost nothing: the test would prove nothing"
comma() { python3 -c 'import sys; print("{:,}".format(int(sys.argv[1])))' "${1:-0}"; }
# the lossless file cut short halfway through its trace: the rest is AUX data the
# file does not hold, known to the byte, lost at the end
chunk=$("$CSTRACE" aux "$TMP/whole.data" | awk '$1 == "0" && $2 == "cpu" && NF == 7 {print $4, $6}')
read -r chunk_off chunk_size <<<"$chunk"
held=$((chunk_size / 2))
cut_lost=$((chunk_size - held))
head -c $((chunk_off + 48 + held)) "$TMP/whole.data" > "$TMP/cut.data"
# and cut inside a 16-byte frame: one decoder warns of the bytes left over (CI
# once cut there by chance, and the threads left the warning out)
head -c $((chunk_off + 48 + held / 16 * 16 + 5)) "$TMP/whole.data" > "$TMP/cutframe.data"
echo "cut short: $held of the $chunk_size trace bytes kept, $cut_lost lost"

r() { "$CSTRACE" "$@" 2>>"$TMP/stderr.log"; }

# --- report (text): the header line, with the numbers
what="trace lost in $t places ($t TRUNCATED AUX records, sizes unknown)"
r report "$TMP/etf.data" > "$TMP/report.txt"
check "report: first line \"# $what: counts below are lower bounds\"" \
	test "$(head -1 "$TMP/report.txt")" = "# $what: counts below are lower bounds"
"$CSTRACE" report --stats "$TMP/etf.data" 2> "$TMP/stats.txt" > /dev/null
check "report --stats: the loss line" grep -q "^cstrace: trace lost in $t places, 0 bytes known ($t places of no count): $t TRUNCATED AUX records" "$TMP/stats.txt"
r report "$TMP/snap.data" > "$TMP/snap.txt"
snap_what="trace lost in 1 place (at least $(comma "$snap_lost") bytes; 1 TRUNCATED AUX record, size unknown)"
check "report (snapshot mode): \"$snap_what\"" \
	test "$(head -1 "$TMP/snap.txt")" = "# $snap_what: counts below are lower bounds"
r report "$TMP/cut.data" > "$TMP/cut.txt"
check "report (cut short): \"trace lost in 1 place ($(comma $cut_lost) bytes)\"" \
	test "$(head -1 "$TMP/cut.txt")" = "# trace lost in 1 place ($(comma $cut_lost) bytes): counts below are lower bounds"
r report "$TMP/whole.data" > "$TMP/whole.txt"
check "report (nothing lost): no header" bash -c "head -1 '$TMP/whole.txt' | grep -q '^# [0-9]* instructions executed$'"

# --- script, --insn, --call-trace: a line in place at each loss
r script --insn -F ip "$TMP/etf.data" > "$TMP/insns.txt"
check "script --insn: the loss lines are where QEMU's run has instructions the trace has not, and only there" \
	python3 "$here/loss_places.py" --truth "$TMP/truth" --insns "$TMP/insns.txt" --places "$t"
r script "$TMP/etf.data" > "$TMP/branches.txt"
r script --call-trace "$TMP/etf.data" > "$TMP/calls.txt"
for v in insns branches calls; do
	check "$v: $t lines \"[trace lost: size unknown (TRUNCATED)]\"" test \
		"$(grep -c '\[trace lost: size unknown (TRUNCATED)\]$' "$TMP/$v.txt")" = "$t"
	check "$v: no other loss line" test "$(grep -c '\[trace lost' "$TMP/$v.txt")" = "$t"
done
# across a loss the call trace invents no return: the frame after it starts a new stack
check "call trace: after each loss line a frame at depth 0, already running" python3 - "$TMP/calls.txt" <<'EOF'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
bad = [i for i, l in enumerate(lines) if "[trace lost" in l and i + 1 < len(lines)
       and not re.search(r": \S.*\(already running\)$", lines[i + 1])]
print("lines after loss lines:", [lines[i + 1] for i, l in enumerate(lines) if "[trace lost" in l][:3])
sys.exit(1 if bad else 0)
EOF
# in the branch view the line comes after the branch the gap cut (the exception
# of the system call that read the sink out), in order with the instructions
check "script: the loss lines in the insn view's order" python3 - "$TMP/branches.txt" "$TMP/insns.txt" <<'EOF'
import sys
def order(path):
    return [l.split("[trace lost")[1] for l in open(path) if "[trace lost" in l]
sys.exit(0 if order(sys.argv[1]) == order(sys.argv[2]) else 1)
EOF
r script --call-trace "$TMP/snap.data" > "$TMP/snap.calls"
check "call trace (snapshot mode): \"[trace lost: at least $snap_lost bytes (TRUNCATED)]\" first" \
	test "$(head -1 "$TMP/snap.calls" | sed 's/.*\[/[/')" = "[trace lost: at least $snap_lost bytes (TRUNCATED)]"
for v in "" --insn --call-trace; do
	for o in file time; do
		check "script $v --order $o (cut short): \"[trace lost: $cut_lost bytes]\" last, and only there" bash -c \
			"'$CSTRACE' script $v --order $o '$TMP/cut.data' 2>/dev/null > '$TMP/cut.out' && test \"\$(tail -1 '$TMP/cut.out' | sed 's/.*\[/[/')\" = '[trace lost: $cut_lost bytes]' && test \$(grep -c 'trace lost' '$TMP/cut.out') = 1"
	done
done
for v in "" --insn --call-trace; do
	check "script $v (nothing lost): no loss line" bash -c "! '$CSTRACE' script $v '$TMP/whole.data' 2>/dev/null | grep -q 'trace lost'"
done

# --- Perfetto: an instant "trace lost" at each place, on the program's thread and CPU 0
r report --format=perfetto -o "$TMP/t.json" "$TMP/etf.data"
check "perfetto: $t instants \"trace lost\" on the thread and CPU" python3 - "$TMP/t.json" "$t" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
lost = [e for e in ev if e.get("ph") == "i" and e["name"] == "trace lost"]
tids = {e["tid"] for e in ev if e.get("ph") == "X"}
print("instants:", [(e["ts"], e["tid"], e["args"]) for e in lost])
ok = len(lost) == int(sys.argv[2]) and all(
    e["tid"] in tids and e["args"]["cpu"] == 0 and e["args"]["lost"] == "size unknown (TRUNCATED)"
    for e in lost)
ts = [e["ts"] for e in lost]
ok = ok and ts == sorted(ts) and len(set(ts)) == len(ts)
sys.exit(0 if ok else 1)
EOF
r report --format=perfetto -o "$TMP/snap.json" "$TMP/snap.data"
r report --format=perfetto -o "$TMP/cut.json" "$TMP/cut.data"
check "perfetto (snapshot mode, cut short): the instants count $snap_lost and $cut_lost bytes" python3 -c '
import json, sys
def lost(path):
    ev = json.load(open(path))["traceEvents"]
    end = max(e["ts"] + e.get("dur", 0) for e in ev if "ts" in e)
    return [(e["args"].get("at_least_bytes", e["args"].get("bytes")), e["s"], abs(e["ts"] - end) < 0.002)
            for e in ev if e.get("ph") == "i" and e["name"] == "trace lost"]
s, c = lost(sys.argv[1]), lost(sys.argv[3])
print("snapshot:", s, "cut short:", c)
# the snapshot lost before its trace, on its thread; the cut file at its end, on every track
ok = s == [(int(sys.argv[2]), "t", False)] and c == [(int(sys.argv[4]), "g", True)]
sys.exit(0 if ok else 1)' "$TMP/snap.json" "$snap_lost" "$TMP/cut.json" "$cut_lost"
r report --format=perfetto -o "$TMP/whole.json" "$TMP/whole.data"
check "perfetto (nothing lost): no instant \"trace lost\"" bash -c "! grep -q 'trace lost' '$TMP/whole.json'"

# --- formats with a comment: llvm-sample, still LLVM's to read
r report --format=llvm-sample --dso "$base" -o "$TMP/p.sample" "$TMP/etf.data"
check "llvm-sample: the header comment" test "$(head -1 "$TMP/p.sample")" = "# $what: counts below are lower bounds"
if command -v llvm-profdata-19 >/dev/null; then
	check "llvm-profdata-19 reads the llvm-sample profile with its comment" quiet \
		llvm-profdata-19 merge --sample --text -o "$TMP/p.merged" "$TMP/p.sample"
	check "... and finds main in it" grep -q '^main:' "$TMP/p.merged"
else
	echo "SKIP (part): llvm-profdata-19 missing"
fi
r report --format=coverage "$TMP/etf.data" > "$TMP/cov.txt"
check "coverage: the header comment" test "$(head -1 "$TMP/cov.txt")" = "# $what: counts below are lower bounds"

# --- formats with no place to say it: stderr and --stats, the file its reader's
for f in folded autofdo profgen lcov csv json; do
	dso=(); [ "$f" = profgen ] && dso=(--dso "$base")
	"$CSTRACE" report --format=$f "${dso[@]}" -o "$TMP/out.$f" "$TMP/etf.data" 2> "$TMP/err.$f"
	check "$f: stderr says \"$what\"" grep -q "^cstrace: warning: $what: counts are lower bounds (the $f format has no place to say so)$" "$TMP/err.$f"
	check "$f: the file does not" bash -c "! grep -q 'trace lost' '$TMP/out.$f'"
	"$CSTRACE" report --format=$f "${dso[@]}" -o "$TMP/whole.$f" "$TMP/whole.data" 2> "$TMP/werr.$f"
	check "$f (nothing lost): stderr says nothing of loss" bash -c "! grep -q 'trace lost' '$TMP/werr.$f'"
done
check "cstrace merge reads the folded stacks" quiet "$CSTRACE" merge -o "$TMP/m.folded" "$TMP/out.folded" "$TMP/whole.folded"
check "cstrace merge reads the autofdo profile" quiet "$CSTRACE" merge -o "$TMP/m.afdo" "$TMP/out.autofdo" "$TMP/whole.autofdo"
if command -v llvm-profgen-19 >/dev/null; then
	check "llvm-profgen-19 reads the profgen file" quiet llvm-profgen-19 --binary="$prog" \
		--unsymbolized-profile="$TMP/out.profgen" --output="$TMP/p.prof"
fi
if command -v genhtml >/dev/null; then
	check "genhtml reads the lcov tracefile" quiet genhtml -q -o "$TMP/lcov" "$TMP/out.lcov"
fi

# the sample profiles, the table and perf's samples made on the decoding
# threads: a gap inside a stretch is the caller's to count, from the models as
# they were before it, and the stretch's own models go on past it
APART="report --format=autofdo,report --format=profgen --dso $base,report --format=lcov,report"
APART+=",script -F ip,sym,dso,script --itrace=i1000ibe"
for d in etf snap cut cutframe; do
	same "$d.data on threads" "$TMP/$d.data" "$APART" "1K 4K"
done

# --- the HTML page and the flame graph: a banner, seen in a browser
r report --format=html -o "$TMP/r.html" "$TMP/etf.data"
r report --format=flamegraph -o "$TMP/r.svg" "$TMP/etf.data"
r report --format=flamegraph -o "$TMP/whole.svg" "$TMP/whole.data"
r report --format=html -o "$TMP/whole.html" "$TMP/whole.data"
banner="${what^}"
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$chromium" ]; then
	browse() { # url -> DOM after scripts ran
		timeout 120 "$chromium" --headless --no-sandbox --disable-gpu \
			--disable-background-networking --disable-component-update --disable-sync \
			--no-first-run --user-data-dir="$TMP/profile" --dump-dom "$1" 2>/dev/null
	}
	shoot() { # url png
		timeout 120 "$chromium" --headless --no-sandbox --disable-gpu \
			--disable-background-networking --disable-component-update --disable-sync \
			--no-first-run --user-data-dir="$TMP/profile" --window-size=1240,420 \
			--screenshot="$2" "$1" >/dev/null 2>&1
	}
	browse "file://$TMP/r.html" > "$TMP/html.dom"
	check "HTML: Chromium shows the banner \"$banner\"" grep -q "<p id=\"loss\" class=\"loss\"><b>$banner:</b> every count on this page is a lower bound.</p>" "$TMP/html.dom"
	check "HTML: the page still has its parts" grep -q 'id="flame"' "$TMP/html.dom"
	browse "file://$TMP/r.svg" > "$TMP/svg.dom"
	check "flame graph: Chromium rendered the SVG" grep -q '<svg' "$TMP/svg.dom"
	check "flame graph: the banner \"$banner\"" grep -q "<g id=\"loss\">.*>$banner: every box is a lower bound</text></g>" "$TMP/svg.dom"
	check "flame graph: main is still drawn" grep -q 'data-name="main"' "$TMP/svg.dom"
	browse "file://$TMP/whole.html" > "$TMP/whole.dom"
	check "HTML (nothing lost): no banner" bash -c "! grep -q 'id=\"loss\"' '$TMP/whole.dom'"
	check "flame graph (nothing lost): no banner" bash -c "! grep -q 'id=\"loss\"' '$TMP/whole.svg'"
	# screenshots to look at (kept with LOSS_SHOTS=DIR)
	shoot "file://$TMP/r.html" "$TMP/html.png"
	shoot "file://$TMP/r.svg" "$TMP/flamegraph.png"
	check "screenshots taken" test -s "$TMP/html.png" -a -s "$TMP/flamegraph.png"
	if [ -n "${LOSS_SHOTS:-}" ]; then
		mkdir -p "$LOSS_SHOTS" && cp "$TMP/html.png" "$TMP/flamegraph.png" "$LOSS_SHOTS/"
	fi
else
	echo "SKIP (part): chromium missing"
	check "HTML: the banner" grep -q "<b>$banner:</b>" "$TMP/r.html"
	check "flame graph: the banner" grep -q ">$banner: every box" "$TMP/r.svg"
fi
finish
