#!/usr/bin/env bash
# perf's exported-sql-viewer.py (Debian's, with PySide2, offscreen) opens what
# cstrace export wrote, as a user would: the main window, Reports > Call Tree and
# Reports > Context-Sensitive Call Graph. Expanded along its heaviest path, the
# call graph and the call tree of recurse.c show main, fib and depth with their
# call counts; a screenshot of the call graph is kept in the build directory
# (tests/export/viewer-call-graph.png) to be looked at. A database with the
# calls of another program does not pass (the check can fail).
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
progs=$CSTRACE_BUILD_DIR/testdata
viewer=$(dpkg -L linux-perf 2>/dev/null | grep '/exported-sql-viewer.py$' | head -1)
[ -f "$viewer" ] || skip "perf's exported-sql-viewer.py not found (package linux-perf)"
sys_python=/usr/bin/python3
[ -x "$sys_python" ] || sys_python=python3
"$sys_python" -c 'from PySide2.QtSql import QSqlDatabase; from PySide2.QtWidgets import QApplication
import sys; sys.exit(0 if "QSQLITE" in QSqlDatabase.drivers() else 1)' 2>/dev/null ||
  skip "PySide2 with Qt's SQLite driver missing (python3-pyside2.qtsql, libqt5sql5-sqlite)"
need_synth aarch64 "$progs/aarch64/recurse"
cd "$TMP" || exit 1
export QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR=$TMP

check "synth recurse" quiet "$CSTRACE" synth --arch aarch64 --out perf -o rec.data -- "$progs/aarch64/recurse"
check "cstrace export" quiet "$CSTRACE" export -o rec.db rec.data
check "synth fptr" quiet "$CSTRACE" synth --arch aarch64 --out perf -o fptr.data -- "$progs/aarch64/fptr"
shot=$CSTRACE_BUILD_DIR/tests/export/viewer-call-graph.png
mkdir -p "$(dirname "$shot")"
rm -f "$shot"
timeout 300 "$sys_python" "$here/viewer_shot.py" "$viewer" rec.db "$shot" main fib depth \
  >viewer.out 2>&1
check "the viewer shows main, fib and depth in its call graph and call tree" test $? -eq 0
grep -v XDG_RUNTIME viewer.out | sed 's/^/  /' | tail -14
check "a screenshot of the call graph ($shot)" test -s "$shot"
check "... a PNG image" bash -c "head -c 8 '$shot' | od -An -c | grep -q 'P   N   G'"

# a database of two captures (--append): one branches event, as the viewer needs
check "--append a second capture" bash -c "cp rec.db both.db && '$CSTRACE' export --append -o both.db fptr.data 2>/dev/null"
timeout 300 "$sys_python" "$here/viewer_shot.py" "$viewer" both.db both.png main fib \
  >both.out 2>&1
check "two captures: the viewer starts and shows recurse's calls" test $? -eq 0

# the check can fail: fptr.c has no fib
check "cstrace export fptr" quiet "$CSTRACE" export -o fptr.db fptr.data
timeout 300 "$sys_python" "$here/viewer_shot.py" "$viewer" fptr.db other.png main fib >/dev/null 2>&1
check "a call graph without fib does not pass" test $? -eq 1
finish
