#!/usr/bin/env bash
# perf's options where perf means the same: -i/--input, ./perf.data when no TRACE
# is given, -k/--vmlinux, report -g with perf's arguments (caller, callee, a
# threshold), --no-children, --stdio; 'cstrace help VERB'; a bad option is one line
# naming the closest one, in every verb.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
A64=$CSTRACE_BUILD_DIR/tests/perfdata/a64.elf
[ -x "${PERF_GEN:-}" ] && [ -f "$A64" ] || skip "perf_gen or its A64 program not built"
"$PERF_GEN" --elf "$A64" --out "$TMP/t.data" --proto etmv4 --cpu-wide || fail "perf_gen"

"$CSTRACE" report --format=csv "$TMP/t.data" >"$TMP/a.csv" 2>/dev/null
check "report -i FILE is report FILE" bash -c "'$CSTRACE' report --format=csv -i '$TMP/t.data' 2>/dev/null | cmp -s - '$TMP/a.csv'"
check "report --input FILE is report FILE" bash -c "'$CSTRACE' report --format=csv --input '$TMP/t.data' 2>/dev/null | cmp -s - '$TMP/a.csv'"
mkdir -p "$TMP/here" "$TMP/empty"
cp "$TMP/t.data" "$TMP/here/perf.data"
check "report with no TRACE reads ./perf.data" bash -c "cd '$TMP/here' && '$CSTRACE' report --format=csv 2>/dev/null | cmp -s - '$TMP/a.csv'"
check "script with no TRACE reads ./perf.data" bash -c "cd '$TMP/here' && '$CSTRACE' script --itrace=b -F ip,addr 2>/dev/null | grep -q '=>'"
(cd "$TMP/empty" && "$CSTRACE" report >"$TMP/out" 2>"$TMP/err"); rc=$?
check "no TRACE and no ./perf.data: exit 2" test "$rc" = 2
check "... in one line that says so" bash -c "[ \$(wc -l <'$TMP/err') = 1 ] && grep -q 'no ./perf.data here' '$TMP/err'"
check "... and no usage on standard output" test ! -s "$TMP/out"
"$CSTRACE" report -i "$TMP/t.data" "$TMP/t.data" >/dev/null 2>"$TMP/err"
check "-i and a TRACE: refused in one line" bash -c "[ \$? ] && [ \$(wc -l <'$TMP/err') = 1 ]"

# -k is perf's --vmlinux: the same warning for a file that is no kernel ELF
"$CSTRACE" report -k /dev/null "$TMP/t.data" >/dev/null 2>"$TMP/k1"
"$CSTRACE" report --vmlinux /dev/null "$TMP/t.data" >/dev/null 2>"$TMP/k2"
check "-k is --vmlinux" cmp -s "$TMP/k1" "$TMP/k2"

# help VERB is VERB --help
for v in report script decode doctor synth; do
	check "help $v is $v --help" bash -c "cmp -s <('$CSTRACE' help $v) <('$CSTRACE' $v --help)"
done
check "help of no verb: exit 2" bash -c "! '$CSTRACE' help nosuch 2>/dev/null"

# one line, with the closest option or command
did() { # want cmd...
	local want=$1; shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	[ "$rc" = 2 ] && [ "$(wc -l <"$TMP/err")" = 1 ] && grep -q -- "$want" "$TMP/err" && [ ! -s "$TMP/out" ]
}
check "report --symfss: did you mean --symfs" did "did you mean --symfs?" "$CSTRACE" report --symfss x "$TMP/t.data"
check "script --itrce: did you mean --itrace" did "did you mean --itrace?" "$CSTRACE" script --itrce=b "$TMP/t.data"
check "doctor --bord: did you mean --board" did "did you mean --board?" "$CSTRACE" doctor --bord juno-r2
check "synth --buffersize: did you mean --buffer-size" did "did you mean --buffer-size?" "$CSTRACE" synth --buffersize 4M
check "record --snapshop: did you mean --snapshot" did "did you mean --snapshot?" "$CSTRACE" record --snapshop
check "report -x: one line naming -x" did "unknown option '-x'" "$CSTRACE" report -x "$TMP/t.data"
check "synth --arch without a value: one line" did "needs a value" "$CSTRACE" synth --arch
check "'scrip': did you mean script" did "did you mean 'script'?" "$CSTRACE" scrip "$TMP/t.data"
check "--itrace=i7b: perf's rule, in one line" did "after i7 comes its unit" "$CSTRACE" script --itrace=i7b "$TMP/t.data"
check "-F nosuch: one line naming perf's fields" did "'nosuch' is not one of perf's fields" \
	"$CSTRACE" script -F ip,nosuch "$TMP/t.data"

# report -g with perf's arguments
"$CSTRACE" report -g "$TMP/t.data" >"$TMP/g" 2>/dev/null
check "-g caller (the next word) is -g" bash -c "'$CSTRACE' report -g caller '$TMP/t.data' 2>/dev/null | cmp -s - '$TMP/g'"
check "--call-graph=graph,0.5,caller is -g" bash -c "'$CSTRACE' report --call-graph=graph,0.5,caller '$TMP/t.data' 2>/dev/null | cmp -s - '$TMP/g'"
"$CSTRACE" report -g callee "$TMP/t.data" >"$TMP/callee" 2>/dev/null
check "-g callee: callee first, func's caller loop under it" \
	bash -c "grep -q 'callee first' '$TMP/callee' && grep -A1 '^ *[0-9.]*% *[0-9]*  func\$' '$TMP/callee' | grep -q '    <- loop\$'"
check "-g callee: the roots' shares add up to 100%" python3 - "$TMP/callee" <<'PY'
import re, sys
roots = [float(m.group(1)) for l in open(sys.argv[1]) if (m := re.match(r"\s*([0-9.]+)%\s+\d+  (?!<-)\S", l))]
assert roots and abs(sum(roots) - 100) < 0.05, roots
PY
"$CSTRACE" report "$TMP/t.data" >"$TMP/plain" 2>/dev/null
check "--stdio --no-children is the plain table" bash -c "'$CSTRACE' report --stdio --no-children '$TMP/t.data' 2>/dev/null | cmp -s - '$TMP/plain'"
check "-g none: no call graph" bash -c "'$CSTRACE' report -g none '$TMP/t.data' 2>/dev/null | cmp -s - '$TMP/plain'"
check "-g folded is --format=folded" bash -c "cmp -s <('$CSTRACE' report -g folded '$TMP/t.data' 2>/dev/null) <('$CSTRACE' report --format=folded '$TMP/t.data' 2>/dev/null)"
finish
