#!/usr/bin/env bash
# Filters a perf user expects, on a synthesized run: --symbols keeps exactly the
# listed functions' rows (same counts as unfiltered), their folded stacks end in
# them and sum to their instructions; --dsos by base name keeps the binary,
# another name keeps nothing; --comm (perf.data COMM sideband) keeps the program
# and drops another name; script --symbols=LIST prints only those functions.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
bin=$CSTRACE_BUILD_DIR/testdata/aarch64/recurse
[ -x "$bin" ] || skip "$bin not built"
command -v qemu-aarch64 >/dev/null || skip "qemu-aarch64 missing"
csv_rows() { awk -F, 'NR>1 {gsub(/"/, "", $8); print $8, $1}' "$1" | sort; }
csv_sum() { awk -F, 'NR>1 {s+=$1} END {print s+0}' "$1"; }

check "synth snapshot" quiet "$CSTRACE" synth --arch aarch64 -o "$TMP/r.snap" -- "$bin"
check "synth perf.data" quiet "$CSTRACE" synth --arch aarch64 --out perf -o "$TMP/r.data" -- "$bin"
o=(--elf "$bin" "$TMP/r.snap")
check "report" quiet "$CSTRACE" report --format=csv -o "$TMP/all.csv" "${o[@]}"
# CSV and JSON give the same share (a fraction: CSV once gave a percent)
check "report --format=json" quiet "$CSTRACE" report --format=json -o "$TMP/all.json" "${o[@]}"
check "CSV and JSON share agree" python3 - "$TMP/all.csv" "$TMP/all.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
js = json.load(open(sys.argv[2]))["rows"]
assert len(rows) == len(js) > 1
for c, j in zip(rows, js):
    assert c["sym"] == j["sym"] and abs(float(c["share"]) - j["share"]) < 1e-6, (c, j)
assert abs(sum(float(c["share"]) for c in rows) - 1) < 1e-4
PY
check "report --symbols fib,depth" quiet "$CSTRACE" report --format=csv --symbols fib,depth \
  -o "$TMP/sym.csv" "${o[@]}"
check "--symbols keeps exactly those rows, counts unchanged" \
  test "$(csv_rows "$TMP/sym.csv")" = "$(csv_rows "$TMP/all.csv" | grep -E '^(fib|depth) ')"
check "folded --symbols fib" quiet "$CSTRACE" report --format=folded --symbols fib \
  -o "$TMP/fib.folded" "${o[@]}"
check "every kept stack ends in fib" bash -c "! grep -v ';fib [0-9]*$' '$TMP/fib.folded'"
fib=$(awk -F, 'NR>1 && $8 == "\"fib\"" {print $1}' "$TMP/all.csv")
check "and they sum to fib's $fib instructions" \
  test "$(awk '{s+=$NF} END {print s}' "$TMP/fib.folded")" = "$fib"
check "report --dsos recurse" quiet "$CSTRACE" report --format=csv --dsos recurse -o "$TMP/dso.csv" "${o[@]}"
check "--dsos by base name keeps the binary" \
  test "$(csv_sum "$TMP/dso.csv")" -gt $(( $(csv_sum "$TMP/all.csv") * 9 / 10 ))
check "report --dsos nosuch" quiet "$CSTRACE" report --format=csv --dsos nosuch -o "$TMP/none.csv" "${o[@]}"
check "--dsos of another binary keeps nothing" test "$(csv_sum "$TMP/none.csv")" = 0
check "script --symbols=depth" quiet "$CSTRACE" script --symbols=depth -F ip,sym -o "$TMP/depth.txt" "${o[@]}"
check "script prints only depth's branches" bash -c "[ -s '$TMP/depth.txt' ] && ! awk '{print \$2}' '$TMP/depth.txt' | grep -vx depth"
check "script --symbols=depth (cstrace's lines)" quiet "$CSTRACE" script --symbols=depth -o "$TMP/depth_own.txt" "${o[@]}"
check "cstrace's lines: only depth's branches" bash -c "[ -s '$TMP/depth_own.txt' ] && ! grep -v ' depth+' '$TMP/depth_own.txt'"
p=(--elf "$bin" "$TMP/r.data")
check "perf.data report" quiet "$CSTRACE" report --format=csv -o "$TMP/perf.csv" "${p[@]}"
check "report --comm recurse" quiet "$CSTRACE" report --format=csv --comm recurse -o "$TMP/comm.csv" "${p[@]}"
check "--comm of the program keeps all" test "$(csv_sum "$TMP/comm.csv")" = "$(csv_sum "$TMP/perf.csv")"
check "report --comm other" quiet "$CSTRACE" report --format=csv --comm other -o "$TMP/other.csv" "${p[@]}"
check "--comm of another name keeps nothing" test "$(csv_sum "$TMP/other.csv")" = 0
# ... and says why, naming the threads the trace has; so for the other filters
"$CSTRACE" report --comm other "${p[@]}" >/dev/null 2>"$TMP/note"
check "--comm other: a note names the trace's threads" \
  grep -q "^cstrace: note: --comm matched no thread; the trace's threads: recurse (tid [0-9]*)$" "$TMP/note"
"$CSTRACE" script --tid 1 --cpu 7 --dsos libnothing.so "${p[@]}" >/dev/null 2>"$TMP/note"
check "--tid/--cpu/--dsos that match nothing: each says what the trace has" bash -c "
  grep -q '^cstrace: note: --tid matched nothing; the trace has [0-9]*$' '$TMP/note' &&
  grep -q '^cstrace: note: --cpu matched nothing; the trace has 0$' '$TMP/note' &&
  grep -q '^cstrace: note: --dsos matched no binary; instructions ran in recurse$' '$TMP/note'"
"$CSTRACE" report "${p[@]}" >/dev/null 2>"$TMP/note"
check "a run that keeps something gets no note" bash -c "! grep -q note: '$TMP/note'"
# code without symbols: which binary, and what to give
"$CSTRACE" report "$CSTRACE_SOURCE_DIR/testdata/sample/a64-loop" >/dev/null 2>"$TMP/note"
check "a snapshot without --elf: the dump named, --elf suggested" \
  grep -q "^cstrace: note: 100% of the instructions ran in mem_0.bin without a function name (a memory dump, bytes only: give the program with --elf FILE" "$TMP/note"
# nothing decoded: every verb exits 1 with one line naming the input (report and
# script once printed an empty table and exited 0: regress/not-trace.bin)
junk=$CSTRACE_SOURCE_DIR/tests/symbolize/regress/not-trace.bin
for v in report script "script --raw" "report --format=perfetto -o $TMP/none.json"; do
  $CSTRACE $v --etmv4 traceid=0x10,core=Cortex-A53 "$junk" >/dev/null 2>"$TMP/err"
  check "$v on no trace data exits 1" test $? -eq 1
  check "$v says so in one line naming the file" \
    bash -c "[ \$(wc -l <'$TMP/err') -eq 1 ] && grep -q 'not-trace.bin: no trace decoded' '$TMP/err'"
done
check "and leaves no half-written timeline" test ! -e "$TMP/none.json"
# a raw dump with --elf: the ELF is its code too (it once gave symbols but no
# code: 0 instructions), so the raw buffer of the snapshot reports as the snapshot
reg() { sed -n "s/^$1([^)]*)=//p" "$TMP/r.snap/device_1.ini"; }
etm="trcconfigr=$(reg TRCCONFIGR),traceid=$(reg TRCTRACEIDR),trcidr0=$(reg TRCIDR0)"
etm="$etm,trcidr1=$(reg TRCIDR1),trcidr2=$(reg TRCIDR2),core=Cortex-A53"
check "raw dump + --elf: report" quiet "$CSTRACE" report --format=csv --etmv4 "$etm" \
  --elf "$bin" -o "$TMP/raw.csv" "$TMP/r.snap/cstrace.bin"
check "raw dump + --elf: the same profile as the snapshot" cmp -s "$TMP/all.csv" "$TMP/raw.csv"
# placed at its own first segment's address: the same (decode places the code and
# the symbolizer the symbols by one rule)
first=$(aarch64-linux-gnu-readelf -lW "$bin" 2>/dev/null | awk '$1 == "LOAD" {print $3; exit}')
if [ -n "$first" ]; then
  check "raw dump + --elf FILE@$first: report" quiet "$CSTRACE" report --format=csv --etmv4 "$etm" \
    --elf "$bin@$first" -o "$TMP/raw-at.csv" "$TMP/r.snap/cstrace.bin"
  check "raw dump + --elf FILE@$first: the same profile" cmp -s "$TMP/all.csv" "$TMP/raw-at.csv"
fi
# without any code, trace decodes to gaps only: report and script say why and exit
# 1 (report printed "0 instructions executed" and exited 0)
for v in report script "script --raw"; do
  $CSTRACE $v --etmv4 "$etm" "$TMP/r.snap/cstrace.bin" > /dev/null 2> "$TMP/err"
  check "raw dump, no code, $v: exit 1" test $? -eq 1
  check "raw dump, no code, $v: says the code could not be read" \
    grep -q "cstrace.bin: no instructions decoded: the code at the traced addresses could not be read" "$TMP/err"
done
"$CSTRACE" report --etmv4 "$etm" --elf "$bin@zz" "$TMP/r.snap/cstrace.bin" >/dev/null 2>"$TMP/err"
check "raw dump + --elf FILE@zz: refused" test $? -ne 0
check "raw dump + --elf FILE@zz: says what was expected" grep -q "expected FILE\[@ADDR\]" "$TMP/err"
# --symbols and --dsos narrow profiles and coverage too: the profile of fib is the
# full profile's ranges and addresses that lie in fib (nm's bounds) and its
# branches that leave fib, nothing else; coverage lists fib alone
fib=$(aarch64-linux-gnu-nm -S "$bin" 2>/dev/null | awk '$4 == "fib" {print $1, $2}')
# AutoFDO text's addresses are offsets from the first loadable segment
base=$(aarch64-linux-gnu-readelf -lW "$bin" 2>/dev/null | awk '$1 == "LOAD" {print $3; exit}')
if [ -n "$fib" ] && [ -n "$base" ]; then
  check "autofdo: whole" quiet "$CSTRACE" report --format=autofdo -o "$TMP/all.afdo" "${o[@]}"
  check "autofdo --symbols fib" quiet "$CSTRACE" report --format=autofdo --symbols fib \
    -o "$TMP/fib.afdo" "${o[@]}"
  check "autofdo --symbols fib: fib's part of the whole profile, exactly" python3 - \
    "$TMP/all.afdo" "$TMP/fib.afdo" $fib $base <<'PY'
import sys
def sections(path):
    lines = [l.strip() for l in open(path) if l.strip() and not l.startswith("//")]
    out, i = [], 0
    while i < len(lines):
        n = int(lines[i]); out.append(lines[i + 1:i + 1 + n]); i += 1 + n
    return out
whole, part = sections(sys.argv[1]), sections(sys.argv[2])
lo = int(sys.argv[3], 16) - int(sys.argv[5], 16); hi = lo + int(sys.argv[4], 16)
inside = lambda a: lo <= int(a, 16) < hi
want = [[l for l in whole[0] if all(inside(x) for x in l.split(":")[0].split("-"))],
        [l for l in whole[1] if inside(l.split(":")[0])],
        [l for l in whole[2] if inside(l.split("->")[0])]]
assert want[0] and want[2], "fib has ranges and branches in the whole profile"
assert part == want, (part, want)
PY
  check "lcov --symbols fib" quiet "$CSTRACE" report --format=lcov --symbols fib -o "$TMP/fib.info" "${o[@]}"
  check "lcov --symbols fib: fib's function record alone" \
    bash -c "[ \"\$(grep '^FN:' '$TMP/fib.info' | cut -d, -f2)\" = fib ]"
  check "coverage --symbols fib: one function" \
    bash -c "'$CSTRACE' report --format=coverage --symbols fib ${o[*]} | grep -q ' 1/1 '"
  check "autofdo --dsos other: no binary" \
    bash -c "! '$CSTRACE' report --format=autofdo --dsos other ${o[*]} | grep -q '^//'"
fi
# script -o appears whole and only on success, never over its input
"$CSTRACE" script "${o[@]}" > "$TMP/script.stdout" 2>/dev/null
check "script -o: the same bytes as standard output" bash -c \
  "'$CSTRACE' script -o '$TMP/script.out' $(printf "'%s' " "${o[@]}") 2>/dev/null && cmp -s '$TMP/script.out' '$TMP/script.stdout'"
echo previous > "$TMP/script.out"
"$CSTRACE" script -o "$TMP/script.out" --etmv4 traceid=0x10,core=Cortex-A53 "$junk" 2>/dev/null
check "script -o that failed: exit 1" test $? -eq 1
check "script -o that failed: the previous file is untouched" test "$(cat "$TMP/script.out")" = previous
cp "$TMP/r.data" "$TMP/copy.data"
"$CSTRACE" script -o "$TMP/copy.data" "$TMP/copy.data" 2>/dev/null
check "script -o INPUT INPUT: refused" test $? -ne 0
check "script -o INPUT INPUT: the input is intact" cmp -s "$TMP/r.data" "$TMP/copy.data"
finish
