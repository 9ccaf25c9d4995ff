#!/usr/bin/env bash
# Each library exports only what its public header declares, or names carrying
# its own prefix: internal helpers of two libraries can never collide when the
# binary links them all, and a reader knows from a name where it lives.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
B=${CSTRACE_BUILD_DIR:?}
command -v nm >/dev/null || skip "nm not installed"

declare -A prefix=(
  [common]=cst_ [source]=src_ [snapshot]=snap_ [perfdata]=pd_ [boards]=brd_ [decode]=dec_
  [symbolize]=sym_ [capture]=cap_ [synth]=synth_ [auxlog]=auxlog_ [export]=exp_
)
declared=$(cat "$CSTRACE_SOURCE_DIR"/include/cstrace/*.h)
for lib in "${!prefix[@]}"; do
  a="$B/$lib/libcstrace_$lib.a"
  [ -f "$a" ] || { fail "$lib: $a not built"; continue; }
  while read -r name; do
    case "$name" in
      "${prefix[$lib]}"*) pass; continue ;;
    esac
    if grep -qw -- "$name" <<<"$declared"; then
      pass
    else
      fail "$lib exports $name: neither in include/cstrace/ nor ${prefix[$lib]}-prefixed"
    fi
  done < <(nm -g --defined-only "$a" 2>/dev/null | awk '$2 ~ /^[TDBRC]$/ {print $3}' | sort -u)
done
finish
