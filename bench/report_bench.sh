#!/usr/bin/env bash
# Symbolize share: `cstrace report` against `cstrace decode --format=none` on the same
# trace in the same run; the difference is what symbolizing and the report add.
# Usage: report_bench.sh [path/to/cstrace] [runs]   (prints a markdown table)
set -eu
cstrace=${1:-$(dirname "$0")/../build/cstrace}
runs=${2:-5}
shared=${CSTRACE_SHARED_TESTDATA:-$(dirname "$0")/../../shared/testdata}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# best wall time of $runs runs, in seconds
best() {
  local b="" t
  for _ in $(seq "$runs"); do
    t=$( { /usr/bin/env TIMEFORMAT=%R bash -c 'time "$@" >/dev/null 2>&1' _ "$@"; } 2>&1 | tail -1)
    if [ -z "$b" ] || awk -v a="$t" -v b="$b" 'BEGIN{exit !(a<b)}'; then b=$t; fi
  done
  echo "$b"
}

row() { # label base-seconds command...
  local label=$1 base=$2; shift 2
  local t; t=$(best "$@")
  awk -v l="$label" -v t="$t" -v b="$base" 'BEGIN {
    share = t > 0 ? (t - b) / t * 100 : 0; if (share < 0) share = 0;
    printf "| %-46s | %6.2f s | %5.1f%% |\n", l, t, share }'
}

table() { # name trace [view options...]
  local name=$1 trace=$2; shift 2
  local base; base=$(best "$cstrace" decode --format=none "$trace")
  echo
  echo "$name (best of $runs)"
  echo
  echo "| command | time | symbolize share |"
  echo "|---|---|---|"
  printf "| %-46s | %6.2f s | %6s |\n" "cstrace decode --format=none (peer)" "$base" "-"
  row "cstrace report" "$base" "$cstrace" report "$@" "$trace"
  row "cstrace report --sort dso,sym,srcline" "$base" "$cstrace" report --sort dso,sym,srcline "$@" "$trace"
  row "cstrace report --format=json" "$base" "$cstrace" report --format=json "$@" "$trace"
  row "cstrace script (branches)" "$base" "$cstrace" script "$@" "$trace"
  "$cstrace" report --stats "$@" "$trace" 2>&1 >/dev/null | grep -o '[0-9]* ranges symbolized.*' | sed 's/^/    /'
}

big=$shared/opencsd/bugfix-exact-match
if [ -d "$big" ]; then
  table "bugfix-exact-match (1 MiB ETMv4, 1.74 M ranges; memory dumps, no symbols)" "$big"
else
  echo "bugfix-exact-match not found under $shared: skipped"
fi

# A trace with full symbols and DWARF: QEMU ground truth of a statically linked
# program (libc included), so that every range goes through symbols and lines.
if command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null; then
  src=$(dirname "$0")/../testdata/src/bigloop.c
  aarch64-linux-gnu-gcc -g -O1 -static -Wl,--build-id -o "$tmp/bigloop" "$src"
  "$cstrace" synth --arch aarch64 -o "$tmp/bigloop.snap" -- "$tmp/bigloop" 200000 >/dev/null 2>&1
  table "synth bigloop 200000 (A64, static, -g: every range has symbols and lines)" \
    "$tmp/bigloop.snap" --elf "$tmp/bigloop"
else
  echo "aarch64 cross compiler or qemu-aarch64 missing: symbolized case skipped"
fi
