#!/usr/bin/env bash
# Ranges and missing debug info: a range crossing two functions splits at the symbol
# boundary nm reports; per-line instruction counts match addr2line; the range cache
# answers the same; a binary with another build-id or no debug info warns once and
# shows [unknown] with dso+offset instead of a wrong symbol.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
Q=${SYM_QUERY:?}
P=${SYM_PROGS:?}
[ -f "$P/.missing" ] && skip "cross compilers missing"
[ -x "$P/prog-a64" ] || skip "test programs not built"

sym_addr() { $1-nm -S "$2" | awk -v f="$3" '$4==f {print "0x" $1}'; }
sym_size() { $1-nm -S "$2" | awk -v f="$3" '$4==f {print "0x" $2}'; }

# --- a range from the last two instructions of fact into report's first two
A=aarch64-linux-gnu B=$P/prog-a64
fact=$(sym_addr $A $B fact) fsz=$(sym_size $A $B fact) rep=$(sym_addr $A $B report)
check "fact ends where report starts" test $((fact + fsz)) -eq $((rep))
"$Q" "$B" range a64 $((rep - 8)) $((rep + 8)) 4 >"$TMP/split" 2>&1
grep '^piece' "$TMP/split" >"$TMP/pieces"
check "two pieces, twice (cache)" test "$(wc -l <"$TMP/pieces")" -eq 4
check "first piece is fact, 2 insns" \
  grep -q "^piece $(printf '%#x' $((rep - 8))) $(printf '%#x' $rep) 2 fact " "$TMP/pieces"
check "second piece enters report, 2 insns" \
  grep -q "^piece $(printf '%#x' $rep) $(printf '%#x' $((rep + 8))) 2 report .* entry$" "$TMP/pieces"
check "cached answer equals the first" \
  bash -c "[ \"\$(sed -n 1,2p '$TMP/pieces')\" = \"\$(sed -n 3,4p '$TMP/pieces')\" ]"

# --- per-line counts over a whole function equal addr2line's innermost lines
linecheck() { # name triplet binary isa func
  local name=$1 t=$2 b=$3 isa=$4 f=$5 start size addrs n
  start=$(sym_addr $t "$b" $f) size=$(sym_size $t "$b" $f)
  addrs=$($t-objdump -d --disassemble=$f "$b" |
    awk -F'\t' '/^ *[0-9a-f]+:\t/ && $3 !~ /^\./ {a=$1; sub(/^ */,"",a); sub(/:$/,"",a); print "0x" a}')
  n=$(echo $addrs | wc -w)
  # the range ends after the last instruction (literal pools after it are data)
  local last; last=$(echo $addrs | tr ' ' '\n' | tail -1)
  local lastsz; lastsz=$("$Q" "$b" dis $isa $last | cut -d' ' -f2)
  "$Q" "$b" range $isa $start $((last + lastsz)) $n >"$TMP/$name.r"
  head -n $(( $(wc -l <"$TMP/$name.r") / 2 )) "$TMP/$name.r" | grep '^line' |
    awk '{print $2, $3}' | sort >"$TMP/$name.got"
  $t-addr2line -a -f -i -e "$b" $addrs | awk '/^0x/ {want=2; next} want==2 {want=1; next}
    want==1 {sub(/ \(discriminator.*/,""); sub(/.*\//,""); print; want=0}' |
    sort | uniq -c | awk '{print $2, $1}' | sort >"$TMP/$name.want"
  checks=$((checks + 1))
  if ! diff -u "$TMP/$name.want" "$TMP/$name.got" >&2; then fail "$name: line counts"; fi
  check "$name: one piece of $n instructions" grep -q "^piece $(printf %#x $((start))) .* $n $f " "$TMP/$name.r"
}
linecheck sum_mixed-a64 $A $B a64 sum_mixed
linecheck main-a64 $A $B a64 main
linecheck fact-t32 arm-linux-gnueabihf "$P/prog-t32" t32 fact
linecheck main-t32 arm-linux-gnueabihf "$P/prog-t32" t32 main
linecheck main-a32 arm-linux-gnueabihf "$P/prog-a32" a32 main

# --- PLT stubs are named name@plt as objdump labels them (A64, A32, T32 programs)
for pair in aarch64-linux-gnu:prog-a64 arm-linux-gnueabihf:prog-a32 arm-linux-gnueabihf:prog-t32; do
  t=${pair%%:*} b=$P/${pair#*:}
  $t-objdump -d -j .plt "$b" | sed -n 's/^0*\([0-9a-f]*\) <\(.*@plt\)>:$/0x\1 \2/p' >"$TMP/plt"
  check "${pair#*:}: objdump lists PLT stubs" test -s "$TMP/plt"
  while read -r addr name; do
    got=$("$Q" "$b" a2l $((addr + 4)) | head -1)
    check "${pair#*:}: $name at $addr+4" test "$got" = "$name"
  done <"$TMP/plt"
done

# --- a vmlinux names kernel addresses for every pid, at its link addresses
"$Q" --vmlinux "$B" - a2l $fact $((rep + 4)) >"$TMP/vml.out" 2>&1
check "vmlinux: fact" bash -c "sed -n 1p '$TMP/vml.out' | grep -qx fact"
check "vmlinux: report" bash -c "sed -n 3p '$TMP/vml.out' | grep -qx report"

# --- the trace's ISA against the binary's mapping symbols: A32 code traced as T32
# means a wrong image; one warning, and none for the right ISA
m32=$(sym_addr arm-linux-gnueabihf "$P/prog-a32" main)
"$Q" "$P/prog-a32" range t32 $m32 $((m32 + 8)) 4 >/dev/null 2>"$TMP/isa.err"
check "isa mismatch: one warning naming \$a" test "$(grep -c 'marks \$a' "$TMP/isa.err")" -eq 1
"$Q" "$P/prog-a32" range a32 $m32 $((m32 + 8)) 2 >/dev/null 2>"$TMP/isa2.err"
check "isa match: no warning" test ! -s "$TMP/isa2.err"

# --- a recorded build-id that the file does not have: warn once, name nothing
addrs="$fact $rep $((fact + 4)) $((rep + 4))"
"$Q" --build-id 00112233445566778899aabbccddeeff00112233 --map 400000:10000:0 "$B" \
  a2l $((0x400000 + fact)) $((0x400000 + rep)) $((0x400004 + rep)) >"$TMP/bid.out" 2>"$TMP/bid.err"
check "mismatch: every address [unknown]" test "$(grep -c '^\[unknown\] ' "$TMP/bid.out")" -eq 3
check "mismatch: dso+offset printed" grep -q "prog-a64+$(printf '%#x' $((rep)))" "$TMP/bid.out"
check "mismatch: no symbol named" bash -c "! grep -q 'fact\|report' '$TMP/bid.out'"
check "mismatch: exactly one warning" test "$(grep -c warning "$TMP/bid.err")" -eq 1
check "mismatch: warning names both build-ids" \
  bash -c "grep -q 00112233445566778899aabbccddeeff00112233 '$TMP/bid.err' && grep -q \$(cat '$P/prog-a64.buildid') '$TMP/bid.err'"

# --- stripped, debug file not found: warn once, [unknown] for local functions
sm=$(sym_addr $A $B sum_mixed)
"$Q" "$P/prog-a64.stripped" a2l $sm $((sm + 4)) $((sm + 8)) >"$TMP/strip.out" 2>"$TMP/strip.err"
check "stripped: [unknown] without debug info" test "$(grep -c '^\[unknown\] ' "$TMP/strip.out")" -eq 3
check "stripped: one warning" test "$(grep -c warning "$TMP/strip.err")" -eq 1
check "stripped: warning says what was looked for" grep -q "build-id $(cat "$P/prog-a64.buildid")" "$TMP/strip.err"
# ... and with --debug-dir the same addresses are named
"$Q" --debug-dir "$P/debug" "$P/prog-a64.stripped" a2l $sm >"$TMP/strip2.out" 2>&1
check "stripped + debug dir: sum_mixed" grep -qx sum_mixed "$TMP/strip2.out"
# ... and through .gnu_debuglink to a file beside the binary
"$Q" "$P/linked/prog-a64" a2l $sm >"$TMP/strip3.out" 2>&1
check "stripped + debuglink: sum_mixed" grep -qx sum_mixed "$TMP/strip3.out"
check "stripped + debuglink: line found" grep -q '^prog.c:[1-9]' "$TMP/strip3.out"
# --- FILE@ADDR moves every segment so that the first PT_LOAD starts at ADDR, "@0"
# included (the symbolizer once kept link addresses for @0 while decode moved the
# code: the rule now has one home, cst_elf_place_bias)
first=$(aarch64-linux-gnu-readelf -lW "$B" | awk '$1 == "LOAD" {print $3; exit}')
main=$(sym_addr $A $B main)
for at in 0 0x10000000; do
  "$Q" "$B@$at" a2l $((main - first + at)) >"$TMP/placed" 2>&1
  check "$B@$at: main is found where the first segment moved it" \
    bash -c "head -1 '$TMP/placed' | grep -qx main"
done
finish
