#!/usr/bin/env bash
# script and report over real traces (the shared captures) and perf_gen's perf.data:
# report's instruction total equals the decoder's, in every format and grouping;
# script --insn prints one line per decoded instruction (T32 included). The same
# views on synthesized traces, against QEMU's ground truth: views_synth.sh.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/views_lib.sh"

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

# --- perf.data: binaries found through MMAP2 sideband (with build-id) name the same
# symbol for every instruction as Debian's perf does
PG=${PERF_GEN:-${CSTRACE_BUILD_DIR:-}/tests/perfdata/perf_gen}
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
[ "$checks" -gt 0 ] || skip "nothing to check here (no shared captures, no cross tools)"
finish
