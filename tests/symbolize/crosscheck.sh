#!/usr/bin/env bash
# Cross-check the symbolizer with binutils on the test programs: function, inline
# chain and line of every instruction (addr2line -f -i), and disassembly sizes and
# mnemonics (objdump) for A64, A32 and T32, including a stripped binary whose
# debug info is found by build-id.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
Q=${SYM_QUERY:?}
P=${SYM_PROGS:?}
[ -f "$P/.missing" ] && skip "cross compilers missing"
[ -x "$P/prog-a64" ] || skip "test programs not built"
FUNCS="main sum_mixed fact report"

# instruction addresses of $FUNCS in objdump order: "addr mnemonic size"
insns() { # triplet binary
  local t=$1 b=$2
  for f in $FUNCS; do
    $t-objdump -d --disassemble=$f "$b" | awk -F'\t' '/^ *[0-9a-f]+:\t/ {
      a=$1; sub(/^ */,"",a); sub(/:$/,"",a); n=split($2,by," "); sz=0;
      for(i=1;i<=n;i++) sz+=length(by[i])/2; m=$3; sub(/ .*/,"",m);
      if (m !~ /^\./) print "0x" a, m, sz }'  # .word: literal pools ($d) are data
  done
}
norm() { sed -e 's/ (discriminator [0-9]*)//' -e 's|^.*/||'; }

crosscheck_lines() { # name triplet reference-binary query-args...
  local name=$1 t=$2 ref=$3; shift 3
  local addrs; addrs=$(insns $t "$ref" | cut -d' ' -f1)
  [ -n "$addrs" ] || { fail "$name: no instructions found in $ref"; return; }
  $t-addr2line -f -i -e "$ref" $addrs | norm >"$TMP/$name.want"
  "$Q" "$@" a2l $addrs 2>"$TMP/$name.err" | norm >"$TMP/$name.got"
  checks=$((checks + 1))
  if ! diff -u "$TMP/$name.want" "$TMP/$name.got" >"$TMP/$name.diff"; then
    fail "$name: differs from addr2line"; head -30 "$TMP/$name.diff" >&2
  fi
  echo "$name: $(echo $addrs | wc -w) addresses compared"
}

crosscheck_disasm() { # name triplet binary isa
  local name=$1 t=$2 b=$3 isa=$4
  insns $t "$b" | sed 's/\.[nw]$//;s/\.[nw] / /' >"$TMP/$name.dwant"
  "$Q" "$b" dis $isa $(cut -d' ' -f1 "$TMP/$name.dwant") |
    awk '{ m=$3; sub(/\.[nw]$/,"",m); if (m ~ /^mov[zn]$/) m="mov"; print "0x" $1, m, $2 }' \
      >"$TMP/$name.dgot"
  # sizes must agree exactly; mnemonics may differ only by assembler aliases
  checks=$((checks + 1))
  if ! diff <(cut -d' ' -f1,3 "$TMP/$name.dwant") <(cut -d' ' -f1,3 "$TMP/$name.dgot") >/dev/null; then
    fail "$name: instruction sizes differ from objdump"
    diff <(cut -d' ' -f1,3 "$TMP/$name.dwant") <(cut -d' ' -f1,3 "$TMP/$name.dgot") | head >&2
  fi
  local total same
  total=$(wc -l <"$TMP/$name.dwant")
  same=$(paste -d' ' "$TMP/$name.dwant" "$TMP/$name.dgot" | awk '$2==$5' | wc -l)
  checks=$((checks + 1))
  # aliases (e.g. mov/orr) are few: most mnemonics must be identical
  [ $((same * 10)) -ge $((total * 9)) ] || fail "$name: only $same of $total mnemonics agree"
  echo "$name: $total instructions, $same mnemonics identical"
}

crosscheck_lines a64 aarch64-linux-gnu "$P/prog-a64" "$P/prog-a64"
crosscheck_lines a32 arm-linux-gnueabihf "$P/prog-a32" "$P/prog-a32"
crosscheck_lines t32 arm-linux-gnueabihf "$P/prog-t32" "$P/prog-t32"
crosscheck_lines stripped aarch64-linux-gnu "$P/prog-a64" --debug-dir "$P/debug" "$P/prog-a64.stripped"
crosscheck_disasm a64 aarch64-linux-gnu "$P/prog-a64" a64
crosscheck_disasm a32 arm-linux-gnueabihf "$P/prog-a32" a32
crosscheck_disasm t32 arm-linux-gnueabihf "$P/prog-t32" t32

# Thumb code must not decode as Arm: the same bytes as A32 give other sizes.
fact=$(insns arm-linux-gnueabihf "$P/prog-t32" | awk '$3==2' | head -1 | cut -d' ' -f1)
check "t32 has 16-bit instructions" test -n "$fact"
check "t32 2-byte instruction is 2 bytes" \
  bash -c "'$Q' '$P/prog-t32' dis t32 $fact | grep -q '^[0-9a-f]* 2 '"
finish
