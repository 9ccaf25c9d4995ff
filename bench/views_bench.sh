#!/usr/bin/env bash
# Cost of the views: `cstrace report` with each view against `cstrace report`
# alone (the peer) on the same trace, runs interleaved so that machine load hits all
# alike. CPU time (user + sys), best of N. The goal (docs/performance.md): any view
# at most 1.3x report alone.
# Usage: views_bench.sh [path/to/cstrace] [runs]   (prints markdown tables)
set -eu
cstrace=${1:-$(dirname "$0")/../build/cstrace}
runs=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/lib.sh"

table() { # name trace dso [options...]
  local name=$1 trace=$2 dso=$3; shift 3
  local labels=("cstrace report (peer)" "cstrace report -g" "cstrace report --children"
    "cstrace report --format=folded" "cstrace report --format=flamegraph"
    "cstrace report --format=perfetto" "cstrace script --call-trace"
    "cstrace report --format=autofdo" "cstrace report --format=llvm-sample"
    "cstrace report --format=lcov" "cstrace report --format=html")
  local -a cmds cpu wall
  cmds[0]="$cstrace report $* $trace"
  cmds[1]="$cstrace report -g $* $trace"
  cmds[2]="$cstrace report --children $* $trace"
  cmds[3]="$cstrace report --format=folded $* $trace"
  cmds[4]="$cstrace report --format=flamegraph -o $tmp/f.svg $* $trace"
  cmds[5]="$cstrace report --format=perfetto -o $tmp/t.json $* $trace"
  cmds[6]="$cstrace script --call-trace $* $trace"
  cmds[7]="$cstrace report --format=autofdo $* $trace"
  cmds[8]="$cstrace report --format=llvm-sample --dso $dso $* $trace"
  cmds[9]="$cstrace report --format=lcov $* $trace"
  cmds[10]="$cstrace report --format=html -o $tmp/r.html $* $trace"
  best_of "$runs" cmds cpu wall
  echo
  echo "$name (CPU time, best of $runs, interleaved)"
  echo
  echo "| command | CPU | wall | vs report alone |"
  echo "|---|---|---|---|"
  for i in "${!cmds[@]}"; do
    awk -v l="${labels[$i]}" -v t="${cpu[$i]}" -v w="${wall[$i]}" -v b="${cpu[0]}" 'BEGIN {
      printf "| %-36s | %6.2f s | %6.2f s | %5.2fx |\n", l, t, w, (b > 0 ? t / b : 0) }'
  done
  "$cstrace" report -g --stats "$@" "$trace" 2>&1 >/dev/null | grep -o '[0-9]* threads.*' |
    sed 's/^/\n/'
  echo "perfetto file: $(du -h "$tmp/t.json" | cut -f1), flame graph: $(du -h "$tmp/f.svg" | cut -f1)"
}

if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
  echo "aarch64 cross compiler or qemu-aarch64 missing: skipped"
  exit 0
fi
aarch64-linux-gnu-gcc -g -O1 -static -Wl,--build-id -o "$tmp/bigloop" "$here/../testdata/src/bigloop.c"
# QEMU's plugin makes these runs fast; the sink holds all of each run (no loss)
"$cstrace" synth --plugin --buffer-size 64M --arch aarch64 -o "$tmp/bigloop.snap" -- \
  "$tmp/bigloop" 2000000 >/dev/null 2>&1
table "synth bigloop 2000000 (A64, static, -g: a call every ~12 instructions)" \
  "$tmp/bigloop.snap" bigloop --elf "$tmp/bigloop"
aarch64-linux-gnu-gcc -g -O2 -fno-optimize-sibling-calls -static -Wl,--build-id \
  -o "$tmp/callheavy" "$here/src/callheavy.c"
"$cstrace" synth --plugin --buffer-size 64M --arch aarch64 -o "$tmp/callheavy.snap" -- \
  "$tmp/callheavy" 50000 24 >/dev/null 2>&1
table "synth callheavy 50000 24 (A64: qsort callbacks, recursion 24 deep, mutual recursion 120 deep)" \
  "$tmp/callheavy.snap" callheavy --elf "$tmp/callheavy"
