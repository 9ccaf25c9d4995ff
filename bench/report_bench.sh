#!/usr/bin/env bash
# Symbolize share: `cstrace report` (and script) against `cstrace decode --format=none`
# on the same trace, runs interleaved so that machine load hits both alike; the
# difference is what symbolizing and the views add. Times are CPU (user+sys), best
# of N, plus wall time of the best run.
# Usage: report_bench.sh [path/to/cstrace] [runs]   (prints markdown tables)
set -eu
cstrace=${1:-$(dirname "$0")/../build/cstrace}
runs=${2:-5}
shared=${CSTRACE_SHARED_TESTDATA:-$(dirname "$0")/../../shared/testdata}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# one run: prints "cpu wall" in seconds
. "$(dirname "$0")/lib.sh"

table() { # name trace [view options...]
  local name=$1 trace=$2; shift 2
  local labels=("cstrace decode --format=none (peer)" "cstrace report"
    "cstrace report --sort dso,sym,srcline" "cstrace report --format=json"
    "cstrace script --symbols (one line per branch)")
  local -a cmds
  cmds[0]="$cstrace decode --format=none $trace"
  cmds[1]="$cstrace report $* $trace"
  cmds[2]="$cstrace report --sort dso,sym,srcline $* $trace"
  cmds[3]="$cstrace report --format=json $* $trace"
  cmds[4]="$cstrace script --symbols $* $trace"
  local -a cpu wall
  best_of "$runs" cmds cpu wall
  echo
  echo "$name (CPU time, best of $runs, interleaved)"
  echo
  echo "| command | CPU | wall | symbolize + view share |"
  echo "|---|---|---|---|"
  for i in "${!cmds[@]}"; do
    awk -v l="${labels[$i]}" -v t="${cpu[$i]}" -v w="${wall[$i]}" -v b="${cpu[0]}" -v i="$i" 'BEGIN {
      share = t > 0 ? (t - b) / t * 100 : 0; if (share < 0) share = 0;
      if (i == 0) printf "| %-46s | %6.2f s | %6.2f s | - |\n", l, t, w;
      else printf "| %-46s | %6.2f s | %6.2f s | %5.1f%% |\n", l, t, w, share }'
  done
  "$cstrace" report --stats "$@" "$trace" 2>&1 >/dev/null | grep -o '[0-9]* ranges symbolized.*' |
    sed 's/^/\n/'
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
