#!/usr/bin/env bash
# script and report over real and synthesized traces: report's instruction total
# equals the decoder's, in every format and grouping; script --insn prints one line
# per decoded instruction (T32 included); per-function counts equal QEMU's ground
# truth exactly for synthesized A64 and ARM/Thumb interworking programs.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)

decoded_insns() { # trace [opts] -> instructions the decoder counted
  "$CSTRACE" decode --format=none --stats "$@" 2>&1 | sed -n 's/.* ranges, \([0-9]*\) instructions.*/\1/p'
}
json_total() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["total_insns"], sum(r["insns"] for r in d["rows"]))' "$1"; }
csv_sum() { awk -F, 'NR>1 {s+=$1} END {print s+0}' "$1"; }
csv_cols() { awk -F, 'NR>1 {e+=$3; t+=$4; n+=$5} END {print e+0, t+0, n+0}' "$1"; }


consistency() { # name trace [view options...]
  local name=$1 trace=$2; shift 2
  set -- "$@" "$trace"
  local n; n=$(decoded_insns "$trace")
  [ -n "$n" ] || { fail "$name: decode gave no instruction count"; return; }
  if [ "$n" = 0 ]; then
    # a capture whose code is missing (juno-uname-001 lacks ld.so's dump) decodes
    # to gaps only: the views exit 1 saying so, never print an empty profile
    local v
    for v in "report --format=json" report "script --symbols" "script --call-trace"; do
      $CSTRACE $v -o "$TMP/$name.none" "$@" > /dev/null 2> "$TMP/err"
      check "$name (0 instructions): $v exits 1" test $? -eq 1
      check "$name (0 instructions): $v says the code could not be read" \
        grep -q "no instructions decoded: the code at the traced addresses could not be read" "$TMP/err"
    done
    echo "$name: 0 instructions (its code is missing)"
    return
  fi
  check "$name: report json" quiet "$CSTRACE" report --format=json -o "$TMP/$name.json" "$@"
  check "$name: json total == decoded ($n)" test "$(json_total "$TMP/$name.json")" = "$n $n"
  check "$name: report csv" quiet "$CSTRACE" report --format=csv -o "$TMP/$name.csv" "$@"
  check "$name: csv rows sum to decoded" test "$(csv_sum "$TMP/$name.csv")" = "$n"
  check "$name: report by srcline" quiet "$CSTRACE" report --sort srcline --format=csv -o "$TMP/$name.src.csv" "$@"
  check "$name: srcline rows sum to decoded" test "$(csv_sum "$TMP/$name.src.csv")" = "$n"
  check "$name: entries and branches add up the same by line as by function" \
    test "$(csv_cols "$TMP/$name.src.csv")" = "$(csv_cols "$TMP/$name.csv")"
  check "$name: text report" quiet "$CSTRACE" report -o "$TMP/$name.txt" "$@"
  check "$name: text report names the total" grep -q "^# $n instructions" "$TMP/$name.txt"
  check "$name: script" quiet "$CSTRACE" script --symbols -o "$TMP/$name.script" "$@"
  check "$name: script --call-trace" quiet "$CSTRACE" script --call-trace -o "$TMP/$name.calls" "$@"
  check "$name: script --insn" quiet "$CSTRACE" script --insn --disasm -o "$TMP/$name.insn" "$@"
  if ! grep -q "no code bytes" "$TMP/$name.insn"; then
    check "$name: one --insn line per decoded instruction" test "$(wc -l <"$TMP/$name.insn")" = "$n"
  fi
  echo "$name: $n instructions"
}

if [ -d "$SHARED/opencsd" ]; then
  S=$SHARED/opencsd
  consistency juno_r1_1 "$S/juno_r1_1"
  consistency tc2-ptm-rstk-t32 "$S/tc2-ptm-rstk-t32"
  consistency TC2 "$S/TC2"
  consistency a57_single_step "$S/a57_single_step"
  consistency test-file-mem-offsets "$S/test-file-mem-offsets"
  consistency juno-uname-001 "$S/juno-uname-001"
  # T32: the PTM capture is Thumb-2 code; its instructions must disassemble as T32
  check "t32 capture shows 16-bit Thumb instructions" \
    grep -qE '	(push|pop|movs|adds|cmp|b|bx|ldr|str)' "$TMP/tc2-ptm-rstk-t32.insn"
  # an ISB ends a range but control goes on: the kernel's ISB at ffffffc000096a0c
  # once printed as a branch ("gap") in the branch view
  check "juno_r1_1: no branch line from a range that ends in an ISB" \
    bash -c "! grep -q 'ffffffc000096a0c' '$TMP/juno_r1_1.script'"
  check "juno_r1_1: the ISB is in the trace" \
    bash -c "'$CSTRACE' decode '$S/juno_r1_1' 2>/dev/null | grep -q '0xffffffc000096a00-0xffffffc000096a10 .* isb'"
  # raw memory dumps carry no symbols: unknown code, never a made-up name
  check "dumps: every row is [unknown]" \
    bash -c "! grep -v '^insns' '$TMP/juno_r1_1.csv' | grep -v '\"\[unknown\]\"'"
else
  echo "SKIP (part): shared captures not found at $SHARED/opencsd"
fi

# --- exact per-function counts against QEMU (cstrace synth --truth)
exact() { # name arch triplet src [gcc flags]
  local name=$1 arch=$2 t=$3 src=$4; shift 4
  command -v $t-gcc >/dev/null || { echo "SKIP (part): $t-gcc missing"; return; }
  command -v qemu-$arch >/dev/null || { echo "SKIP (part): qemu-$arch missing"; return; }
  $t-gcc -g -O1 -fno-optimize-sibling-calls -static -Wl,--build-id "$@" -o "$TMP/$name" "$src" ||
    { fail "$name: build"; return; }
  local core=cortex-a53; [ "$arch" = arm ] && core=cortex-a7
  check "$name: synth" quiet "$CSTRACE" synth --arch $arch --core $core -o "$TMP/$name.snap" \
    --truth "$TMP/$name.truth" -- "$TMP/$name" >/dev/null
  check "$name: report" quiet "$CSTRACE" report --format=json -o "$TMP/$name.json" --elf "$TMP/$name" "$TMP/$name.snap"
  # A64 also checks taken / not-taken branches (AArch32 conditions make that harder)
  local od=; [ "$arch" = aarch64 ] && od=$t-objdump
  check "$name: per-function counts, entries, lines hit (A64: branches) equal QEMU" \
    python3 "$here/exact_counts.py" $t-nm "$TMP/$name" "$TMP/$name.truth" "$TMP/$name.json" \
    $t-addr2line $od
  if [ -n "$od" ]; then
    check "$name: script branches" quiet "$CSTRACE" script -F flags,ip,addr \
      -o "$TMP/$name.branches" --elf "$TMP/$name" "$TMP/$name.snap"
    check "$name: every branch script prints is one QEMU took, in QEMU's order" \
      python3 "$here/branches_vs_qemu.py" "$TMP/$name.truth" "$TMP/$name.branches" $od "$TMP/$name"
  fi
  consistency "$name-views" "$TMP/$name.snap" --elf "$TMP/$name"
}

# call trace: recurse.c's functions are only ever called (no sibling calls), so the
# call trace names each as often as QEMU entered it (report's entries, checked above)
calls_vs_entries() { # name func...
  local name=$1 f; shift
  for f in "$@"; do
    local want got
    want=$(python3 -c 'import json,sys; print(sum(r["entries"] for r in json.load(open(sys.argv[1]))["rows"] if r.get("sym")==sys.argv[2]))' "$TMP/$name.json" "$f")
    got=$(awk -v f="$f" '$NF == f' "$TMP/$name-views.calls" | wc -l)
    check "$name: call trace shows $f as often as it was entered ($want)" test "$got" = "$want"
  done
}
if command -v python3 >/dev/null; then
  exact recurse-a64 aarch64 aarch64-linux-gnu "$CSTRACE_SOURCE_DIR/testdata/src/recurse.c"
  [ -f "$TMP/recurse-a64-views.calls" ] && calls_vs_entries recurse-a64 fib depth
  # --time: ranges take the latest timestamp of their trace ID; two windows that
  # split the timestamps at T keep every instruction exactly once
  if [ -x "$TMP/recurse-a64" ]; then
    check "timestamps: synth" quiet "$CSTRACE" synth --arch aarch64 --timestamps \
      -o "$TMP/ts.snap" -- "$TMP/recurse-a64"
    T=$("$CSTRACE" decode "$TMP/ts.snap" 2>/dev/null | awk '$3 == "timestamp" {print $4}' |
      awk '{a[NR]=$1} END {print a[int(NR/2)]}')
    all=$(decoded_insns "$TMP/ts.snap")
    a=$("$CSTRACE" report --format=csv --time ",$T" "$TMP/ts.snap" 2>/dev/null | awk -F, 'NR>1{s+=$1} END{print s+0}')
    b=$("$CSTRACE" report --format=csv --time "$((T + 1))," "$TMP/ts.snap" 2>/dev/null | awk -F, 'NR>1{s+=$1} END{print s+0}')
    check "--time: a middle timestamp ($T) splits the trace" test "$a" -gt 0 -a "$b" -gt 0
    check "--time: the two windows add up to all ($a + $b = $all)" test $((a + b)) = "$all"
  fi
  exact interwork-arm arm arm-linux-gnueabihf "$CSTRACE_SOURCE_DIR/testdata/src/interwork.c"
  exact loop-thumb arm arm-linux-gnueabihf "$CSTRACE_SOURCE_DIR/testdata/src/loop.c" -mthumb
fi
# --- perf.data: binaries found through MMAP2 sideband (with build-id) name the same
# symbol for every instruction as Debian's perf does
PG=${CSTRACE_BUILD_DIR:-}/tests/perfdata/perf_gen
if [ -x "$PG" ]; then
  for pair in etmv4:a64.elf ptm:a32.elf; do
    proto=${pair%%:*} elf=${pair#*:}
    [ -f "$CSTRACE_BUILD_DIR/tests/perfdata/$elf" ] || continue
    cp "$CSTRACE_BUILD_DIR/tests/perfdata/$elf" "$TMP/$elf"
    "$PG" --elf "$TMP/$elf" --out "$TMP/$proto.data" --proto $proto --expect "$TMP/$proto.expect" ||
      { fail "perf_gen $proto"; continue; }
    check "perf.data $proto: report" quiet "$CSTRACE" report --format=json -o "$TMP/$proto.json" "$TMP/$proto.data"
    check "perf.data $proto: total equals the known path" \
      test "$(json_total "$TMP/$proto.json")" = "$(wc -l <"$TMP/$proto.expect") $(wc -l <"$TMP/$proto.expect")"
    check "perf.data $proto: symbols from the recorded ELF" \
      bash -c "! grep -q unknown '$TMP/$proto.json'"
    # filters: the generator's thread is the only one; another tid keeps nothing
    tid=$("$CSTRACE" script --raw "$TMP/$proto.data" 2>/dev/null | awk 'NR==1 {split($1, a, "/"); print a[2]}')
    check "perf.data $proto: --tid of the thread keeps all" \
      bash -c "'$CSTRACE' report --format=csv --tid $tid '$TMP/$proto.data' 2>/dev/null | awk -F, 'NR>1{s+=\$1} END{exit s!=$(wc -l <"$TMP/$proto.expect")}'"
    check "perf.data $proto: another --tid keeps none" \
      bash -c "'$CSTRACE' report --format=csv --tid $((tid + 1)) '$TMP/$proto.data' 2>/dev/null | awk -F, 'NR>1{s+=\$1} END{exit s!=0}'"
    if command -v perf >/dev/null && HOME=$TMP perf version >/dev/null 2>&1; then
      HOME=$TMP perf script -i "$TMP/$proto.data" --itrace=i1i -F ip,sym 2>/dev/null |
        awk '{$1=$1; print}' >"$TMP/$proto.perf"
      "$CSTRACE" script --insn -F ip,sym "$TMP/$proto.data" 2>/dev/null |
        awk '{$1=$1; print}' >"$TMP/$proto.cst"
      check "perf.data $proto: same symbol per instruction as perf" \
        cmp -s "$TMP/$proto.perf" "$TMP/$proto.cst"
    fi
  done
fi
# --- a dynamically linked PIE and its shared library through perf.data: MMAP2 with
# build-ids place each binary; every function's count equals perf's own
# attribution, except the PLT header perf folds into _init (we name it .plt)
perf_ok() { command -v perf >/dev/null && HOME=$TMP perf version >/dev/null 2>&1; }
if command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null && perf_ok; then
  src=$CSTRACE_SOURCE_DIR/testdata/src
  aarch64-linux-gnu-gcc -O2 -g -fPIC -shared -Wl,--build-id -o "$TMP/libsynthlib.so" "$src/shlib_lib.c" &&
  aarch64-linux-gnu-gcc -O2 -g -Wl,--build-id -o "$TMP/shlib" "$src/shlib.c" -L"$TMP" -lsynthlib \
    -Wl,-rpath,"$TMP" || fail "shlib: build"
  check "shlib: synth perf.data" quiet "$CSTRACE" synth --arch aarch64 --out perf -o "$TMP/shlib.data" \
    -- "$TMP/shlib"
  HOME=$TMP perf script -i "$TMP/shlib.data" --itrace=i1i -F ip,sym,dso 2>/dev/null >"$TMP/shlib.perf.insn"
  symdso() { awk '{d=$NF; gsub(/[()]/,"",d); n=split(d,p,"/"); print $2 "@" p[n]}'; }
  symdso <"$TMP/shlib.perf.insn" | sort | uniq -c |
    awk '{print $2, $1}' | grep -v -e '^_init@' -e '^\[unknown\]@' -e '^\.plt@' -e '@plt@' | sort >"$TMP/shlib.perf"
  # perf may lose the run's last few instructions (its packet queue filling on the
  # buffer's last bytes, see tests/synth/compare.py): only that exact loss is taken
  # off cstrace's counts before comparing.
  "$CSTRACE" script --insn -F ip,sym,dso "$TMP/shlib.data" 2>/dev/null >"$TMP/shlib.cst.insn"
  lost=$(( $(wc -l <"$TMP/shlib.cst.insn") - $(wc -l <"$TMP/shlib.perf.insn") ))
  : >"$TMP/shlib.lost"
  if [ "$lost" -gt 0 ]; then
    awk '{print $1}' "$TMP/shlib.cst.insn" >"$TMP/shlib.cst.ips"
    awk '{print $1}' "$TMP/shlib.perf.insn" >"$TMP/shlib.perf.ips"
    "$CSTRACE" decode --format=jsonl "$TMP/shlib.data" >"$TMP/shlib.jsonl" 2>/dev/null
    check "shlib: perf's shorter output is its known end-of-buffer loss" python3 \
      "$CSTRACE_SOURCE_DIR/tests/synth/compare.py" --truth "$TMP/shlib.cst.ips" \
      --ips "$TMP/shlib.perf.ips" --perf-queue "$TMP/shlib.jsonl"
    tail -n "$lost" "$TMP/shlib.cst.insn" | symdso >"$TMP/shlib.lost"
  fi
  "$CSTRACE" report --format=csv "$TMP/shlib.data" 2>/dev/null |
    awk -F, 'NR>1 {gsub(/"/,"",$8); gsub(/"/,"",$9); n=split($9,p,"/"); print $8 "@" p[n], $1}' |
    awk -v lf="$TMP/shlib.lost" 'BEGIN {while ((getline l < lf) > 0) lost[l]++}
      {print $1, $2 - lost[$1]}' |
    awk '$2 > 0' | grep -v -e '^_init@' -e '^\[unknown\]@' -e '^\.plt@' -e '@plt@' | sort >"$TMP/shlib.cst"
  check "shlib: perf named functions" test "$(wc -l <"$TMP/shlib.perf")" -gt 10
  check "shlib: per-function counts equal perf's" cmp -s "$TMP/shlib.perf" "$TMP/shlib.cst"
  check "shlib: the library function is named" grep -q '^synth_lib_mix@libsynthlib.so ' "$TMP/shlib.cst"
  echo "shlib: $(wc -l <"$TMP/shlib.cst") functions compared with perf"
  [ "$fails" -eq 0 ] || diff "$TMP/shlib.perf" "$TMP/shlib.cst" | head >&2
fi
[ "$checks" -gt 0 ] || skip "nothing to check here (no shared captures, no cross tools)"
finish
