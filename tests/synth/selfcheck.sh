#!/usr/bin/env bash
# The comparison must be able to fail: a changed, a missing or an extra instruction in
# the ground truth, or a decoded piece that is not in the run, are all reported.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
prog=$1
need_synth aarch64 "$prog"
"$CSTRACE" synth --arch aarch64 -o "$TMP/snap" --truth "$TMP/truth" -- "$prog" 2>/dev/null
"$CSTRACE" decode "$TMP/snap" --format=jsonl > "$TMP/dec.jsonl"
cmp() { python3 "$here/compare.py" --truth "$1" --jsonl "$TMP/dec.jsonl" ${2:+--mode $2} > /dev/null; }
check "the real truth matches" cmp "$TMP/truth"
n=$(wc -l < "$TMP/truth")
mid=$((n / 2))
python3 - "$TMP" "$mid" <<'PY'
import sys
d, m = sys.argv[1], int(sys.argv[2])
t = open(d + "/truth").read().split()
variants = {
    "changed": t[:m] + ["%x" % (int(t[m], 16) + 4)] + t[m + 1:],
    "missing": t[:m] + t[m + 1:],
    "extra": t[:m + 1] + t[m:],
}
for name, v in variants.items():
    assert len(v) != len(t) or v != t
    open("%s/%s" % (d, name), "w").write("\n".join(v) + "\n")
PY
for t in changed missing extra; do
	checks=$((checks + 1))
	if cmp "$TMP/$t"; then fail "a $t instruction went unnoticed (exact)"; fi
	checks=$((checks + 1))
	if cmp "$TMP/$t" suffix; then fail "a $t instruction went unnoticed (suffix)"; fi
done
# a truth that ends later than the decode: the decode is no longer a suffix
{ cat "$TMP/truth"; echo 400000; } > "$TMP/longer"
checks=$((checks + 1))
if cmp "$TMP/longer" suffix; then fail "a decode ending early passed as a suffix"; fi
# perf's output cut short is excused only as its own end-of-buffer loss: cut inside
# the last range of several instructions (perf loses whole elements), it must fail.
cut=$(python3 - "$TMP/dec.jsonl" <<'PY'
import json, sys
n = last = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["type"] == "instr_range":
        if e["insns"] >= 2:
            last = n + 1
        n += e["insns"]
print(last)
PY
)
head -n "$cut" "$TMP/truth" > "$TMP/cut.ips"
checks=$((checks + 1))
if python3 "$here/compare.py" --truth "$TMP/truth" --ips "$TMP/cut.ips" --perf-queue "$TMP/dec.jsonl" \
	--snapshot "$TMP/snap" > /dev/null; then
	fail "perf output cut inside a range passed as perf's end-of-buffer loss"
fi
finish
