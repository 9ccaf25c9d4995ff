#!/usr/bin/python3
"""Open a database in perf's exported-sql-viewer.py as a user would (main
window, Reports > Context-Sensitive Call Graph and Call Tree), expand the call
graph along its heaviest path, print what its rows say, and save a screenshot.

Usage: viewer_shot.py VIEWER.py DATABASE SHOT.png [NAME...]
Exit 0 when every NAME appears in the expanded call graph (its column 0, "Call
Path"), with nonzero call counts; 1 otherwise. Runs offscreen
(QT_QPA_PLATFORM=offscreen unless a display is set)."""
import os
import sys

if not os.environ.get("DISPLAY"):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

viewer, dbname, shot = sys.argv[1:4]
want = sys.argv[4:]
sys.argv = [viewer, dbname]
sys.path.insert(0, os.path.dirname(os.path.abspath(viewer)))  # its libxed.py
ns = {"__name__": "exported_sql_viewer", "__file__": viewer}
with open(viewer) as f:
    exec(compile(f.read(), viewer, "exec"), ns)
QApplication = ns["QApplication"]
QModelIndex = ns["QModelIndex"]
Qt = ns["Qt"]

try:  # as the viewer tells a file from a PostgreSQL connection
    with open(dbname, "rb") as f:
        is_sqlite3 = f.read(15) == b"SQLite format 3"
except OSError:
    is_sqlite3 = False
dbref = ns["DBRef"](is_sqlite3, dbname)
db, name = dbref.Open("main")
glb = ns["Glb"](dbref, db, name)
app = QApplication(sys.argv)
glb.app = app
win = ns["MainWindow"](glb)
glb.mainwindow = win
win.resize(1280, 800)
win.show()

# Reports > Call Tree, then Context-Sensitive Call Graph (on top, maximized)
win.NewCallTree()
tree = win.mdi_area.subWindowList()[-1]
win.NewCallGraph()
sub = win.mdi_area.subWindowList()[-1]
sub.showMaximized()
view, model = sub.view, sub.model
view.setColumnWidth(0, 420)  # room for the names of a deep stack

seen, rows = set(), []


def text(index, col):
    return str(model.data(model.index(index.row(), col, model.parent(index)), Qt.DisplayRole))


def walk(parent, depth):
    """rows under @parent, in order; the first levels' first children and,
    below them, the heaviest child (column "Insn Cnt (%)") expanded"""
    n = model.rowCount(parent)
    children = []
    for r in range(n):
        i = model.index(r, 0, parent)
        label, count = text(i, 0), text(i, 2)
        seen.add((label, count))
        try:
            w = float(text(i, 6) or 0)
        except ValueError:
            w = 0
        children.append((i, label, count, w))
    best = max(children, key=lambda c: c[3])[0] if children else None
    for r, (i, label, count, w) in enumerate(children):
        rows.append(f"{'  ' * depth}{label} | calls {count} | insns {text(i, 5)}")
        if (depth < 2 and r < 3) or (depth >= 2 and i == best and depth < 14):
            view.expand(i)
            walk(i, depth + 1)


walk(QModelIndex(), 0)

# the call tree (calls by parent_id): its first levels name the same functions
tm, tree_names = tree.model, set()


def walk_tree(parent, depth):
    for r in range(min(tm.rowCount(parent), 50)):
        i = tm.index(r, 0, parent)
        tree_names.add(str(tm.data(i, Qt.DisplayRole)))
        if depth < 8:
            walk_tree(i, depth + 1)


walk_tree(QModelIndex(), 0)
rows.append("call tree: " + ", ".join(sorted(n for n in tree_names if n in want)))
for _ in range(20):
    app.processEvents()
win.grab().save(shot)
print("\n".join(rows))
missing = [w for w in want if not any(label == w and count not in ("", "0") for label, count in seen)]
missing += [f"{w} (call tree)" for w in want if w not in tree_names]
if missing:
    print("not in the call graph:", ", ".join(missing), file=sys.stderr)
glb.ShutdownInstances()
sys.exit(1 if missing or not os.path.getsize(shot) else 0)
