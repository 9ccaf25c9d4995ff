#!/usr/bin/env bash
# cstrace merge: the outputs of several captures (folded, autofdo, profgen, lcov,
# report json)
# merge into one whose counts are the sums (checked independently in Python);
# merging is order-independent and associative (byte-identical results); the
# fleet recipe (GNU parallel runs report per capture, then one merge) gives the
# same file as one process doing it all; a merged lcov file is accepted by genhtml;
# bad input gets a one-line error naming the file and line, exit 1.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
progs=$CSTRACE_BUILD_DIR/testdata
bin=$progs/aarch64/recurse
[ -x "$bin" ] || skip "$bin not built"
command -v qemu-aarch64 >/dev/null || skip "qemu-aarch64 missing"

# three captures: the same program run three times, and another program
for i in 1 2 3; do
  check "synth $i" quiet "$CSTRACE" synth --arch aarch64 -o "$TMP/c$i.snap" -- "$bin"
done
check "synth fptr" quiet "$CSTRACE" synth --arch aarch64 -o "$TMP/c4.snap" -- "$progs/aarch64/fptr"
elf() { case $1 in 4) echo "$progs/aarch64/fptr" ;; *) echo "$bin" ;; esac; }

sum_check() { # format files... : the merge's counts are the inputs' sums
  python3 - "$@" <<'PY'
import collections, re, sys
fmt, merged, inputs = sys.argv[1], sys.argv[2], sys.argv[3:]
def counts(path):
    c = collections.Counter()
    binary = ""
    if fmt == "json":
        import json
        d = json.load(open(path))
        c["total"] += d["total_insns"]
        for r in d["rows"]:
            k = (r.get("sym"), r.get("dso"), r.get("srcline"))
            c[k + ("insns",)] += r["insns"]
            c[k + ("entries",)] += r["entries"]
            c[k + ("taken",)] += r["taken"]
    elif fmt == "folded":
        for l in open(path):
            s, _, n = l.rstrip("\n").rpartition(" ")
            c[s] += int(n)
    elif fmt == "lcov":
        f = None
        for l in open(path):
            l = l.strip()
            if l.startswith("SF:"): f = l[3:]
            elif l.startswith("DA:"):
                ln, n = l[3:].split(",")[:2]; c[(f, "DA", ln)] += int(n)
            elif l.startswith("FNDA:"):
                n, name = l[5:].split(",", 1); c[(f, "FNDA", name)] += int(n)
            elif l.startswith("BRDA:"):
                ln, blk, br, n = l[5:].split(","); c[(f, "BRDA", ln, blk, br)] += 0 if n == "-" else int(n)
    else:
        lines = [l.rstrip("\n") for l in open(path)]
        block = []
        for l in lines:
            m = re.fullmatch(r"([0-9a-f]+)(-|->)([0-9a-f]+):(\d+)", l)
            if m:
                block.append(((m.group(1), m.group(2), m.group(3)), int(m.group(4))))
            elif l.startswith("// build_id:"):
                binary = l
            elif l.startswith("// "):
                for k, n in block: c[(binary + l, k)] += n
                block = []
        for k, n in block: c[("", k)] += n
    return c
want = collections.Counter()
for p in inputs: want.update(counts(p))
got = counts(sys.argv[2])
if want != got:
    diff = [k for k in set(want) | set(got) if want[k] != got[k]][:5]
    print(f"{fmt}: merged counts differ from the sums at {diff}", file=sys.stderr); sys.exit(1)
PY
}

for fmt in folded autofdo lcov profgen json; do
  extra=(); [ $fmt = profgen ] && extra=(--dso recurse)
  n=3; [ $fmt = profgen ] || n=4  # profgen is one binary's profile
  files=()
  for i in $(seq $n); do
    check "$fmt: report $i" quiet "$CSTRACE" report --format=$fmt "${extra[@]}" -o "$TMP/c$i.$fmt" \
      --elf "$(elf $i)" "$TMP/c$i.snap"
    files+=("$TMP/c$i.$fmt")
  done
  check "$fmt: merge" quiet "$CSTRACE" merge -o "$TMP/all.$fmt" "${files[@]}"
  check "$fmt: the merged counts are the sums" sum_check $fmt "$TMP/all.$fmt" "${files[@]}"
  rev=(); for ((k=${#files[@]}-1; k>=0; k--)); do rev+=("${files[$k]}"); done
  check "$fmt: order does not matter" quiet "$CSTRACE" merge -o "$TMP/rev.$fmt" "${rev[@]}"
  check "$fmt: ... byte for byte" cmp -s "$TMP/all.$fmt" "$TMP/rev.$fmt"
  check "$fmt: grouping does not matter" quiet "$CSTRACE" merge -o "$TMP/ab.$fmt" "${files[0]}" "${files[1]}"
  rest=("${files[@]:2}")
  check "$fmt: ((a b) c ...)" quiet "$CSTRACE" merge -o "$TMP/grouped.$fmt" "$TMP/ab.$fmt" "${rest[@]}"
  check "$fmt: ... byte for byte" cmp -s "$TMP/all.$fmt" "$TMP/grouped.$fmt"
done
if command -v genhtml >/dev/null; then
  check "genhtml accepts the merged tracefile" quiet genhtml -q -o "$TMP/html" "$TMP/all.lcov"
fi
# the fleet recipe, locally: GNU parallel runs one report per capture, then merge
if command -v parallel >/dev/null; then
  check "parallel: one report per capture" quiet parallel --will-cite -j2 \
    "'$CSTRACE' report --format=folded -o '$TMP/p{}.folded' --elf {= \$_ = \$_ == 4 ? '$progs/aarch64/fptr' : '$bin' =} '$TMP/c{}.snap'" ::: 1 2 3 4
  check "parallel: merged" quiet "$CSTRACE" merge -o "$TMP/fleet.folded" "$TMP"/p[1-4].folded
  check "GNU parallel + merge equals the single-process merge" cmp -s "$TMP/fleet.folded" "$TMP/all.folded"
else
  echo "SKIP (part): GNU parallel missing (scripts/setup.sh installs it)"
fi
# lcov branches: "-" (never ran) stays "-" only where no capture ran the branch
printf 'TN:\nSF:/x.c\nBRDA:3,0,0,-\nBRDA:3,0,1,-\nBRDA:5,0,0,2\nBRDA:5,0,1,0\nDA:3,0\nDA:5,2\nend_of_record\n' >"$TMP/m1.info"
printf 'TN:\nSF:/x.c\nBRDA:3,0,0,1\nBRDA:3,0,1,4\nBRDA:5,0,0,-\nBRDA:5,0,1,-\nDA:3,5\nDA:5,0\nend_of_record\n' >"$TMP/m2.info"
check "lcov branches: merge" quiet "$CSTRACE" merge -o "$TMP/m12.info" "$TMP/m1.info" "$TMP/m2.info"
check "lcov branches: counts summed, '-' only where nothing ran" test \
  "$(grep '^BR' "$TMP/m12.info" | tr '\n' ' ')" = "BRDA:3,0,0,1 BRDA:3,0,1,4 BRDA:5,0,0,2 BRDA:5,0,1,0 BRF:4 BRH:3 "
check "lcov branches: merge with itself" quiet "$CSTRACE" merge -o "$TMP/m11.info" "$TMP/m1.info" "$TMP/m1.info"
check "lcov branches: never-run stays '-'" grep -q '^BRDA:3,0,0,-$' "$TMP/m11.info"

# AutoFDO text as simpleperf writes several binaries (a first line asking to split
# the file), one binary's build-id written short (8 bytes) in one and zero-padded
# in the other: one binary, counts summed; binaries by path, the first line kept
printf '%s\n' '// Please split this file. AutoFDO only accepts profile for one binary.' \
  1 10-14:2 0 1 14-\>0:2 '// build_id: 0x0123456789ABCDEF' '// /vendor/lib/modules/x.ko' '' \
  1 0-4:1 0 0 '// build_id: 0xaa00000000000000000000000000000000000000' '// /bin/a' '' >"$TMP/s1.afdo"
printf '%s\n' 1 10-14:3 0 0 '// build_id: 0x0123456789abcdef000000000000000000000000' \
  '// /vendor/lib/modules/x.ko' '' >"$TMP/s2.afdo"
printf '%s\n' '// Please split this file. AutoFDO only accepts profile for one binary.' \
  1 0-4:1 0 0 '// build_id: 0xaa00000000000000000000000000000000000000' '// /bin/a' '' \
  1 10-14:5 0 1 14-\>0:2 '// build_id: 0x0123456789abcdef000000000000000000000000' \
  '// /vendor/lib/modules/x.ko' '' >"$TMP/s12.want"
check "autofdo: simpleperf's split line and short build-ids: merge" quiet \
  "$CSTRACE" merge -o "$TMP/s12.afdo" "$TMP/s1.afdo" "$TMP/s2.afdo"
check "autofdo: ... one binary of the two ids, by path, as simpleperf writes them" \
  cmp -s "$TMP/s12.want" "$TMP/s12.afdo"

# bad input: one line naming file and line, exit 1, no output file
printf 'main;f 3\nmain;g x\n' >"$TMP/bad.folded"
"$CSTRACE" merge -o "$TMP/out.folded" "$TMP/all.folded" "$TMP/bad.folded" 2>"$TMP/err" >/dev/null
check "a bad count fails" test $? -eq 1
check "... naming file and line" grep -q "bad.folded:2: expected" "$TMP/err"
check "... in one line" test "$(wc -l <"$TMP/err")" -eq 1
check "... and leaves no output" test ! -e "$TMP/out.folded"
"$CSTRACE" merge -o "$TMP/out" "$TMP/all.folded" "$TMP/all.lcov" 2>"$TMP/err" >/dev/null
check "formats do not mix" bash -c "[ $? -eq 1 ] && grep -q 'one format' '$TMP/err'"
cp "$TMP/all.folded" "$TMP/keep.folded"
"$CSTRACE" merge -o "$TMP/keep.folded" "$TMP/keep.folded" "$TMP/c1.folded" 2>/dev/null
check "an input is never the output" cmp -s "$TMP/keep.folded" "$TMP/all.folded"
finish
