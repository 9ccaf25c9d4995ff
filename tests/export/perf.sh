#!/usr/bin/env bash
# cstrace export against the real thing: Debian perf's own export-to-sqlite.py
# ("branches calls", as perf script --itrace=bep -s runs it) on the same perf.data
# files, synthesized from programs run under QEMU (A64 static and dynamic, four
# threads, signals; ARM/Thumb interworking and a dynamic armhf program, whose
# ETMv3 ranges are one instruction each). compare_perf.py compares the two
# databases table by table (samples with their symbols, calls, call paths, the
# fixed tables) and allows only docs/export.md's differences; the schema must be
# perf's statement for statement (`.schema`), for both column layouts; with
# --insn, the instruction samples of --itrace=i1i too. A call or a sample one
# field off fails the comparison (checked on a copy).
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
progs=$CSTRACE_BUILD_DIR/testdata
command -v perf >/dev/null && HOME=$TMP perf version >/dev/null 2>&1 || skip "perf not installed"
command -v sqlite3 >/dev/null || skip "sqlite3 not installed (scripts/setup.sh installs it)"
script=$(dpkg -L linux-perf 2>/dev/null | grep '/export-to-sqlite.py$' | head -1)
[ -f "$script" ] || skip "perf's export-to-sqlite.py not found (package linux-perf)"
# Debian's Python, whose packages perf's scripts use (not a python3 earlier in PATH)
sys_python=/usr/bin/python3
[ -x "$sys_python" ] || sys_python=python3
"$sys_python" -c 'from PySide2.QtSql import QSqlDatabase; import sys
sys.exit(0 if "QSQLITE" in QSqlDatabase.drivers() else 1)' 2>/dev/null ||
  skip "PySide2's SQLite driver missing (python3-pyside2.qtsql, libqt5sql5-sqlite)"
need_synth aarch64 "$progs/aarch64/recurse"
cd "$TMP" || exit 1

# perf's export of NAME.data into NAME.perf.db (OPTS: perf script's --itrace)
perf_export() { # name itrace [columns]
  HOME=$TMP perf script -i "$1.data" --itrace="$2" -s "$script" "$1.perf.db" "${3:-branches}" \
    calls >"$1.perf.log" 2>&1 && grep -q "Done" "$1.perf.log"
}

run() { # arch prog [compare options...]
  local arch=$1 prog=$2 n=$1-$2; shift 2
  [ -x "$progs/$arch/$prog" ] || { echo "SKIP (part): $progs/$arch/$prog not built"; return; }
  check "$n: synth perf.data" quiet "$CSTRACE" synth --arch "$arch" --out perf -o "$n.data" \
    -- "$progs/$arch/$prog"
  check "$n: perf's export-to-sqlite.py" perf_export "$n" bep
  check "$n: cstrace export" quiet "$CSTRACE" export -o "$n.cst.db" "$n.data"
  check "$n: the same tables as perf's" python3 "$here/compare_perf.py" "$@" "$n.perf.db" \
    "$n.cst.db" --report "$TMP/report"
}

run aarch64 recurse
run aarch64 shlib
run aarch64 signal
# perf 6.1 decodes each thread's trace when the thread exits (no timestamps)
run aarch64 threads --any-order
run arm interwork
run arm shlib
sed 's/^/  /' "$TMP/report"

# the schema, statement for statement (cstrace_captures is cstrace's own)
schema() { sqlite3 "$1" .schema | grep -v '^CREATE TABLE cstrace_captures '; }
check "the schema is perf's" cmp -s <(schema aarch64-recurse.perf.db) <(schema aarch64-recurse.cst.db)
check "... and the values' types" cmp -s \
  <(sqlite3 aarch64-recurse.perf.db "SELECT typeof(id), typeof(ip), typeof(in_tx) FROM samples GROUP BY 1, 2, 3")\
  <(sqlite3 aarch64-recurse.cst.db "SELECT typeof(id), typeof(ip), typeof(in_tx) FROM samples GROUP BY 1, 2, 3")
mv aarch64-recurse.perf.db branches.perf.db
check "perf's \"all\" columns: export" perf_export aarch64-recurse bep all
mv aarch64-recurse.perf.db all.perf.db
check "cstrace export --all-columns" quiet "$CSTRACE" export --all-columns -o all.cst.db aarch64-recurse.data
check "... the schema is perf's" cmp -s <(schema all.perf.db) <(schema all.cst.db)
check "... the same tables as perf's" python3 "$here/compare_perf.py" all.perf.db all.cst.db

# without calls: perf's "branches" export without "calls"
HOME=$TMP perf script -i aarch64-recurse.data --itrace=bep -s "$script" nocalls.perf.db branches \
  >/dev/null 2>&1
check "--no-calls: perf's export without calls" test -s nocalls.perf.db
check "--no-calls: cstrace export --no-calls" quiet "$CSTRACE" export --no-calls -o nocalls.cst.db \
  aarch64-recurse.data
check "--no-calls: the schema is perf's" cmp -s <(schema nocalls.perf.db) <(schema nocalls.cst.db)
check "--no-calls: the same tables as perf's" python3 "$here/compare_perf.py" nocalls.perf.db \
  nocalls.cst.db

# instruction samples (perf's --itrace=i1i): A64, and ETMv3 ranges of one
# instruction each, whose flags are those of the range before each
for n in aarch64-recurse arm-interwork; do
  [ -f "$n.data" ] || continue
  mv "$n.data" "$n.i.data"
  check "$n --insn: perf's export with i1i" perf_export "$n.i" bei1i
  check "$n --insn: cstrace export --insn" quiet "$CSTRACE" export --insn -o "$n.i.cst.db" "$n.i.data"
  check "$n --insn: the same tables as perf's" python3 "$here/compare_perf.py" "$n.i.perf.db" "$n.i.cst.db"
  check "$n --insn: instruction samples there" test \
    "$(sqlite3 "$n.i.cst.db" "SELECT count(*) FROM samples s JOIN selected_events e ON e.id = evsel_id WHERE e.name = 'instructions:u'")" -gt 10000
done

# with timestamps: perf 6.1 gives every sample its AUX record's time
check "timestamps: synth" quiet "$CSTRACE" synth --arch aarch64 --out perf --timestamps \
  -o ts.data -- "$progs/aarch64/recurse"
check "timestamps: perf's export" perf_export ts bep
check "timestamps: cstrace export" quiet "$CSTRACE" export -o ts.cst.db ts.data
check "timestamps: the same tables but for the times" python3 "$here/compare_perf.py" \
  --ignore-time ts.perf.db ts.cst.db
check "timestamps: cstrace's times are the trace's (several)" test \
  "$(sqlite3 ts.cst.db 'SELECT count(DISTINCT time) FROM samples')" -gt 10

# the comparison fails on one field off: a call's flags, a sample's target
cp aarch64-shlib.cst.db bad.db
main_paths="SELECT id FROM call_paths WHERE symbol_id IN (SELECT id FROM symbols WHERE name = 'main')"
sqlite3 bad.db "UPDATE calls SET flags = flags + 1 WHERE id = (SELECT max(id) FROM calls WHERE call_path_id IN ($main_paths))"
python3 "$here/compare_perf.py" aarch64-shlib.perf.db bad.db >/dev/null 2>&1
check "a call's flags one off: the comparison fails" test $? -eq 1
cp aarch64-shlib.cst.db bad.db
sqlite3 bad.db "UPDATE samples SET to_sym_offset = to_sym_offset + 4 WHERE id = (SELECT min(s.id) FROM samples s JOIN symbols y ON y.id = s.to_symbol_id WHERE y.name = 'main')"
python3 "$here/compare_perf.py" aarch64-shlib.perf.db bad.db >/dev/null 2>&1
check "a sample's target offset one instruction off: the comparison fails" test $? -eq 1
cp aarch64-shlib.cst.db bad.db
sqlite3 bad.db "DELETE FROM call_paths WHERE id IN ($main_paths)"
python3 "$here/compare_perf.py" aarch64-shlib.perf.db bad.db >/dev/null 2>&1
check "a call path missing: the comparison fails" test $? -eq 1
finish
