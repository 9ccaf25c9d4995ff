#!/usr/bin/env bash
# The layering of docs/architecture.md, checked on every include of a public
# header: a library's sources and its header include only the headers of the
# layers below it (and its own).
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
cd "$CSTRACE_SOURCE_DIR" || exit 1

declare -A allowed=(
  [common]="common"
  [source]="common source"
  [perfdata]="common source perfdata"
  [snapshot]="common source snapshot"
  [auxlog]="common source perfdata auxlog"
  [boards]="common source boards"
  [decode]="common source perfdata snapshot decode"
  [symbolize]="common source perfdata snapshot decode symbolize"
  [export]="common source perfdata snapshot decode symbolize export"
  [capture]="common source perfdata auxlog snapshot boards capture"
  [synth]="common source perfdata snapshot synth"
)

for lib in "${!allowed[@]}"; do
  files=$(find "$lib" -name "*.[ch]" 2>/dev/null; ls "include/cstrace/$lib.h" 2>/dev/null)
  [ -n "$files" ] || { fail "$lib: no sources found"; continue; }
  while IFS=: read -r file line inc; do
    h=$(sed -n 's/.*#include "cstrace\/\([a-z]*\)\.h".*/\1/p' <<<"$inc")
    [ -n "$h" ] || continue
    case " ${allowed[$lib]} " in
      *" $h "*) pass ;;
      *) fail "$file:$line: $lib includes cstrace/$h.h, which is not below it" ;;
    esac
  done < <(grep -n '#include "cstrace/' $files)
done
# every public header belongs to a layer
for h in include/cstrace/*.h; do
  b=$(basename "$h" .h)
  check "include/cstrace/$b.h has a layer" test -n "${allowed[$b]:-}"
done
finish
