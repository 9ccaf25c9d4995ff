#!/usr/bin/env bash
# The timeline's size: every slice by default (under 100 MB), the smallest left
# out as far as --max-size needs with a note of how many and how small (in the
# file and on standard error), --min-insns and --max-depth; what is kept still
# nests, and addresses are hex strings throughout.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
bin=$CSTRACE_BUILD_DIR/testdata/aarch64/recurse
need_synth aarch64 "$bin"
check "synth" bash -c "'$CSTRACE' synth --arch aarch64 --out perf -o '$TMP/r.data' -- '$bin' >/dev/null 2>&1"
tl() { "$CSTRACE" report --format=perfetto "$@" "$TMP/r.data"; }
check "perfetto, all slices" tl -o "$TMP/all.json"
tl --max-size 100K -o "$TMP/cut.json" 2>"$TMP/cut.err"
check "perfetto --max-size 100K" test $? = 0
tl --min-insns 50 -o "$TMP/min.json" 2>/dev/null
tl --max-depth 3 -o "$TMP/deep.json" 2>/dev/null
check "the files as the UI wants them" python3 - "$TMP" <<'PY'
import json, os, sys
d = sys.argv[1]
def load(n):
    doc = json.load(open(os.path.join(d, n)))
    return doc, [e for e in doc["traceEvents"] if e["ph"] == "X"]
def depth_ok(ev, limit=None):  # slices nest per thread; depth at most limit
    per = {}
    for e in ev:
        per.setdefault((e["pid"], e["tid"]), []).append(e)
    for lst in per.values():
        lst.sort(key=lambda e: (round(e["ts"] * 1000), -round(e["dur"] * 1000)))
        ends = []
        for e in lst:
            s, t = round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)
            while ends and ends[-1] <= s:
                ends.pop()
            assert not ends or t <= ends[-1], ("overlap", e)
            ends.append(t)
            assert limit is None or len(ends) <= limit, ("deeper", len(ends), e)
all_doc, all_ev = load("all.json")
assert all_doc["otherData"]["left_out"] == "nothing", all_doc["otherData"]
for e in all_ev:  # hex strings, both
    a = e["args"]
    assert all(isinstance(a[k], str) and a[k].startswith("0x") for k in ("addr", "entry") if k in a), a
depth_ok(all_ev)
cut_doc, cut_ev = load("cut.json")
size = os.path.getsize(os.path.join(d, "cut.json"))
assert size <= 100 * 1024, size
note = cut_doc["otherData"]["left_out"]
n = int(note.split()[0])
assert n > 0 and len(cut_ev) + n == len(all_ev), (note, len(cut_ev), len(all_ev))
assert "to keep the file under 100 KiB" in note, note
depth_ok(cut_ev)
kept = {(e["name"], e["ts"]) for e in cut_ev}
assert kept <= {(e["name"], e["ts"]) for e in all_ev}
min_doc, min_ev = load("min.json")
assert 0 < len(min_ev) < len(all_ev) and "under --min-insns 50" in min_doc["otherData"]["left_out"]
deep_doc, deep_ev = load("deep.json")
depth_ok(deep_ev, 3)
assert "deeper than --max-depth 3" in deep_doc["otherData"]["left_out"]
PY
check "a note on standard error too" grep -q "^cstrace: note: .*cut.json: [0-9]* slices, .* MB; left out [0-9]* slices of fewer than [0-9]* instructions" "$TMP/cut.err"
check "--max-size nonsense: one line, exit 2" bash -c "'$CSTRACE' report --format=perfetto --max-size 12Q -o /dev/null '$TMP/r.data' 2>&1 >/dev/null | wc -l | grep -qx 1"
finish
