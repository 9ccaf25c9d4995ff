#!/usr/bin/env bash
# LLVM sample profiles made by cstrace itself: `report --format=llvm-sample --dso`
# holds what QEMU's run implies (llvm_sample_vs_qemu.py: every function's total and
# head samples, body lines, call targets and inlinees, from QEMU's executed
# addresses and LLVM's own llvm-symbolizer), on A64 and A32/T32 programs, inline
# (static functions -O2 inlined into a loop, one inside another) among them; on
# A64 (GCC and clang builds, flow-sensitive discriminators too) it is the very
# profile llvm-profgen-19 makes from cstrace's --format=profgen output (both
# normalised by llvm-profdata-19: every line equal, and the function totals `show`
# lists); llvm-profdata-19 merges it and clang applies it.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
progs=$CSTRACE_BUILD_DIR/testdata
command -v python3 >/dev/null || skip "python3 missing"
command -v llvm-symbolizer-19 >/dev/null || skip "llvm-symbolizer-19 missing (scripts/setup.sh installs llvm-19)"

sample() { # name arch triplet core binary expected-functions
  local name=$1 arch=$2 t=$3 core=$4 bin=$5 expect=$6 prog=${5##*/}
  [ -x "$bin" ] || { echo "SKIP (part): $bin not built"; return; }
  command -v qemu-$arch >/dev/null || { echo "SKIP (part): qemu-$arch missing"; return; }
  check "$name: synth" quiet "$CSTRACE" synth --arch $arch --core $core -o "$TMP/$name.snap" \
    --truth "$TMP/$name.truth" -- "$bin"
  check "$name: llvm-sample" quiet "$CSTRACE" report --format=llvm-sample --dso "$prog" \
    -o "$TMP/$name.sample" --elf "$bin" "$TMP/$name.snap"
  check "$name: totals, heads, lines, calls and inlinees equal QEMU's" \
    python3 "$here/llvm_sample_vs_qemu.py" --readelf $t-readelf --objdump $t-objdump --nm $t-nm \
    --symbolizer llvm-symbolizer-19 --binary "$bin" --truth "$TMP/$name.truth" \
    --profile "$TMP/$name.sample" --expect "$expect"
  check "$name: llvm-profdata-19 merges it" quiet llvm-profdata-19 merge --sample \
    -o "$TMP/$name.merged" "$TMP/$name.sample" "$TMP/$name.sample"
}

# llvm-profgen-19 on cstrace's profgen output makes the same profile (A64 only:
# it disassembles Arm binaries in A32 state, so it misreads T32 code)
same_as_profgen() { # name binary
  local name=$1 bin=$2 prog=${2##*/}
  [ -f "$TMP/$name.sample" ] || return
  check "$name: profgen" quiet "$CSTRACE" report --format=profgen --dso "$prog" \
    -o "$TMP/$name.prof" --elf "$bin" "$TMP/$name.snap"
  check "$name: llvm-profgen-19 reads the profgen file" quiet llvm-profgen-19 --binary="$bin" \
    --unsymbolized-profile="$TMP/$name.prof" --format=text --output="$TMP/$name.llvm"
  llvm-profdata-19 merge --sample --text -o "$TMP/$name.llvm.txt" "$TMP/$name.llvm"
  llvm-profdata-19 merge --sample --text -o "$TMP/$name.sample.txt" "$TMP/$name.sample"
  check "$name: every line equals llvm-profgen-19's ($(wc -l <"$TMP/$name.llvm.txt") lines)" \
    diff "$TMP/$name.llvm.txt" "$TMP/$name.sample.txt"
  llvm-profdata-19 show --sample --all-functions "$TMP/$name.llvm" | grep '^Function:' | sort \
    >"$TMP/$name.llvm.fn"
  llvm-profdata-19 show --sample --all-functions "$TMP/$name.sample" | grep '^Function:' | sort \
    >"$TMP/$name.sample.fn"
  check "$name: llvm-profdata-19 shows the same $(wc -l <"$TMP/$name.llvm.fn") function totals" \
    bash -c "[ -s '$TMP/$name.llvm.fn' ] && diff '$TMP/$name.llvm.fn' '$TMP/$name.sample.fn'"
}

A64=(aarch64 aarch64-linux-gnu cortex-a53)
A32=(arm arm-linux-gnueabihf cortex-a7)
if command -v aarch64-linux-gnu-objdump >/dev/null; then
  sample A64-inline "${A64[@]}" "$progs/aarch64/inline" outer,main
  sample A64-recurse "${A64[@]}" "$progs/aarch64/recurse" fib,depth,main
  sample A64-fptr "${A64[@]}" "$progs/aarch64/fptr" main
  sample A64-threads "${A64[@]}" "$progs/aarch64/threads" main
  sample A64-signal "${A64[@]}" "$progs/aarch64/signal" main
  # clang's DWARF: line 0 rows, LLVM's discriminator encoding, no .debug_aranges;
  # and flow-sensitive discriminators, which LLVM keeps whole
  if command -v clang >/dev/null; then
    for v in "clang:" "clangfs:-fdebug-info-for-profiling -mllvm -enable-fs-discriminator=true"; do
      n=${v%%:*}
      # shellcheck disable=SC2086
      if clang -O2 -g ${v#*:} --target=aarch64-linux-gnu -c "$CSTRACE_SOURCE_DIR/testdata/src/inline.c" \
           -o "$TMP/$n.o" && aarch64-linux-gnu-gcc -static -o "$TMP/$n-inline" "$TMP/$n.o"; then
        sample A64-$n "${A64[@]}" "$TMP/$n-inline" outer,main
      else
        fail "$n: build inline.c"
      fi
    done
    [ -f "$TMP/A64-clangfs.sample" ] && check "clangfs: discriminators kept whole" \
      grep -q '^ *[0-9]*\.[0-9][0-9][0-9][0-9]*: ' "$TMP/A64-clangfs.sample"
  else
    echo "SKIP (part): clang missing"
  fi
  if command -v llvm-profgen-19 >/dev/null; then
    for p in inline recurse fptr threads signal; do same_as_profgen A64-$p "$progs/aarch64/$p"; done
    for n in clang clangfs; do same_as_profgen A64-$n "$TMP/$n-inline"; done
  else
    echo "SKIP (part): llvm-profgen-19 missing (scripts/setup.sh installs llvm-19)"
  fi
fi
if command -v arm-linux-gnueabihf-objdump >/dev/null; then
  sample A32-inline "${A32[@]}" "$progs/arm/inline" outer,main
  sample A32-interwork "${A32[@]}" "$progs/arm/interwork" main,a_calls_t,t_calls_a
fi

if [ -f "$TMP/A64-inline.sample" ]; then
  s=$TMP/A64-inline.sample
  check "inline: step is nested in outer at its call site" grep -q '^ [0-9.]*: step:[1-9]' "$s"
  check "inline: mix is nested in step, twice" test "$(grep -c '^  [0-9.]*: mix:[1-9]' "$s")" = 2
  check "inline: main's call of outer is a call target" grep -q '^ [0-9.]*: 5 outer:5$' "$s"
  if command -v clang >/dev/null; then
    clang -O2 -g --target=aarch64-linux-gnu -fprofile-sample-use="$s" -Rpass-analysis=sample-profile \
      -c "$CSTRACE_SOURCE_DIR/testdata/src/inline.c" -o "$TMP/inline.o" 2>"$TMP/remarks.txt"
    check "clang -fprofile-sample-use applies it, inlinees included" \
      grep -q "inlining reattempted for hotness: 'step' into 'outer'" "$TMP/remarks.txt"
    check "clang applies outer's loop counts" grep -q "Applied 1510 samples from profile" \
      "$TMP/remarks.txt"
  else
    echo "SKIP (part): clang missing"
  fi
  # the comparison can fail: one body count off, one inlinee total off
  awk '/^ [0-9.]*: [0-9]+$/ && !done {$2 = $2 + 1; $0 = " " $0; done = 1} {print}' "$s" >"$TMP/bad1"
  awk '/^  [0-9.]*: mix:/ && !done {split($2, a, ":"); $2 = a[1] ":" a[2] + 4; $0 = "  " $0; done = 1} {print}' \
    "$s" >"$TMP/bad2"
  for b in bad1 bad2; do
    check "a profile one count off fails the comparison ($b)" bash -c "! cmp -s '$s' '$TMP/$b' &&
      ! python3 '$here/llvm_sample_vs_qemu.py' --readelf aarch64-linux-gnu-readelf \
      --objdump aarch64-linux-gnu-objdump --nm aarch64-linux-gnu-nm --symbolizer llvm-symbolizer-19 \
      --binary '$progs/aarch64/inline' --truth '$TMP/A64-inline.truth' --profile '$TMP/$b' 2>/dev/null"
  done
  check "--format=llvm-sample without --dso is refused" bash -c \
    "! '$CSTRACE' report --format=llvm-sample '$TMP/A64-inline.snap' 2>'$TMP/err' && grep -q -- '--dso' '$TMP/err'"
  check "--dso naming no binary of the trace is refused" bash -c \
    "! '$CSTRACE' report --format=llvm-sample --dso nosuch --elf '$progs/aarch64/inline' '$TMP/A64-inline.snap' 2>/dev/null"
fi
bin=$progs/aarch64/a64_loop # built without -g
if [ -x "$bin" ] && command -v qemu-aarch64 >/dev/null; then
  check "a64_loop: synth" quiet "$CSTRACE" synth --arch aarch64 --core cortex-a53 \
    -o "$TMP/nodwarf.snap" -- "$bin"
  check "a binary without DWARF is refused, saying so, and no file is left" bash -c \
    "! '$CSTRACE' report --format=llvm-sample --dso a64_loop --elf '$bin' -o '$TMP/nodwarf.txt' \
      '$TMP/nodwarf.snap' 2>'$TMP/err' && grep -q 'no DWARF found' '$TMP/err' && [ ! -e '$TMP/nodwarf.txt' ]"
fi
[ "$checks" -gt 0 ] || skip "no test programs or QEMU"
finish
