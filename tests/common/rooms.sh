#!/usr/bin/env bash
# The rooms of decode/ (decode/decode_int.h, docs/architecture.md), checked: each
# room includes only its own headers and the doors of the rooms below it
# (engine/engine.h, run/run.h, perf/perf_input.h); only engine/ calls OpenCSD;
# decode/ itself keeps at most ten .c files; cli/ (options and wiring only) no
# file over 450 lines; and no file of a library calls into
# another that calls back, through a circle of three or more files (from the
# built objects' symbols: who defines what, who uses it).
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
cd "$CSTRACE_SOURCE_DIR" || exit 1
B=${CSTRACE_BUILD_DIR:?}

# the headers a file in ROOM may include, besides its room's own and decode_int.h
declare -A doors=(
  [engine]=""
  [run]="engine/engine.h"
  [perf]="engine/engine.h run/run.h"
  [.]="engine/engine.h run/run.h perf/perf_input.h"
)
for room in "${!doors[@]}"; do
  while IFS=: read -r file line inc; do
    h=$(sed -n 's/.*#include "\([^"]*\)".*/\1/p' <<<"$inc")
    case "$h" in
      cstrace/*|decode_int.h|elf_build_id.h) pass; continue ;;
    esac
    if [ "$room" != . ] && [ -f "decode/$room/$h" ] && [ "${h#*/}" = "$h" ]; then
      pass # a header of its own room
      continue
    fi
    case " ${doors[$room]} " in
      *" $h "*) pass ;;
      *) fail "$file:$line: decode/$room includes \"$h\", not its own nor a door below it" ;;
    esac
  done < <(if [ "$room" = . ]; then grep -n '#include "' decode/*.[ch]
           else grep -n '#include "' decode/"$room"/*.[ch]; fi)
done

# OpenCSD is called from engine/ only (its types may be seen through engine.h)
while IFS= read -r hit; do
  fail "OpenCSD called outside decode/engine/: $hit"
done < <(grep -nE '\bocsd_[a-z_]+\(' decode/*.c decode/run/*.c decode/perf/*.c)
pass

n=$(ls decode/*.c | wc -l)
check "decode/ keeps at most ten .c files ($n)" test "$n" -le 10
for f in cli/*.c; do
  n=$(wc -l < "$f")
  check "$f: $n lines, at most 450 (a model grown in the CLI belongs in a library)" \
    test "$n" -le 450
done

# circles of files: an edge a -> b when a's object uses a symbol b's defines
command -v nm >/dev/null || skip "nm not installed"
command -v python3 >/dev/null || skip "python3 not installed"
for lib in decode symbolize export capture perfdata snapshot synth boards auxlog common source; do
  a="$B/$lib/libcstrace_$lib.a"
  [ -f "$a" ] || continue
  # "archive:member.o:value type name", or "archive:member.o:   U name"
  if ! out=$(nm -A "$a" 2>/dev/null | python3 -c '
import sys
defs, uses = {}, {}
for line in sys.stdin:
    _, member, rest = line.rstrip("\n").split(":", 2)
    w = rest.split()
    uses.setdefault(member, set())
    if len(w) == 3 and w[1] in "TDBRC":
        defs[w[2]] = member
    elif len(w) == 2 and w[0] == "U":
        uses[member].add(w[1])
edges = {n: {defs[s] for s in u if s in defs and defs[s] != n} for n, u in uses.items()}
index, low, stack, on, comps = {}, {}, [], set(), []
def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v); on.add(v)
    for w in edges[v]:
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v:
                break
        comps.append(c)
sys.setrecursionlimit(10000)
for v in list(edges):
    if v not in index:
        visit(v)
bad = [" ".join(sorted(c)) for c in comps if len(c) >= 3]
print("\n".join(bad))
sys.exit(1 if bad else 0)
'); then
    while IFS= read -r circle; do
      fail "$lib: files call each other in a circle: $circle"
    done <<<"$out"
  else
    pass
  fi
done
finish
