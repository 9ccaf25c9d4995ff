# Helpers of views.sh and views_synth.sh (sourced after tests/lib.sh): the views of
# one trace against the decoder's own instruction count.
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
    # and a line where trace was lost (test-file-mem-offsets overflows)
    check "$name: one --insn line per decoded instruction" \
      test "$(grep -vc '^.*\[trace lost: [^]]*\]$' "$TMP/$name.insn")" = "$n"
  fi
  echo "$name: $n instructions"
}
