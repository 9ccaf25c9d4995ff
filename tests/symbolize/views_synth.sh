#!/usr/bin/env bash
# script and report over synthesized traces: per-function counts equal QEMU's ground
# truth exactly for synthesized A64 and ARM/Thumb interworking programs, and a
# dynamically linked program's per-function counts equal Debian perf's. Runs QEMU
# (cstrace synth) and perf: host-only.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/views_lib.sh"

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
    a=$("$CSTRACE" report --format=csv --time ",${T}t" "$TMP/ts.snap" 2>/dev/null | awk -F, 'NR>1{s+=$1} END{print s+0}')
    b=$("$CSTRACE" report --format=csv --time "$((T + 1))t," "$TMP/ts.snap" 2>/dev/null | awk -F, 'NR>1{s+=$1} END{print s+0}')
    check "--time: a middle timestamp ($T) splits the trace" test "$a" -gt 0 -a "$b" -gt 0
    check "--time: the two windows add up to all ($a + $b = $all)" test $((a + b)) = "$all"
  fi
  exact interwork-arm arm arm-linux-gnueabihf "$CSTRACE_SOURCE_DIR/testdata/src/interwork.c"
  exact loop-thumb arm arm-linux-gnueabihf "$CSTRACE_SOURCE_DIR/testdata/src/loop.c" -mthumb
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
