#!/usr/bin/env bash
# cstrace export against perf's own export-to-sqlite.py ("branches calls", the
# peer) on the same perf.data, runs interleaved so that machine load hits all
# alike: CPU time (user + sys), best of N, branch samples per CPU second, and the
# ratio to perf. The one-core row decodes with cstrace's decoder on the calling
# thread (--threads 1 --decoder cstrace): everything on one core. Peak RSS comes
# from one more run each; memory must not grow with the trace (the 8x row).
# Usage: export_bench.sh [path/to/cstrace] [runs] [iterations]   (markdown tables)
set -eu
cstrace=${1:-$(dirname "$0")/../build/cstrace}
runs=${2:-3}
iters=${3:-250000}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/lib.sh"

script=$(dpkg -L linux-perf 2>/dev/null | grep '/export-to-sqlite.py$' | head -1)
if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v qemu-aarch64 >/dev/null ||
   ! command -v perf >/dev/null || [ ! -f "$script" ] ||
   ! /usr/bin/python3 -c 'import PySide2.QtSql' 2>/dev/null; then
  echo "aarch64 cross compiler, qemu-aarch64, perf or its export script (python3-pyside2.qtsql) missing: skipped"
  exit 0
fi
aarch64-linux-gnu-gcc -g -O1 -static -Wl,--build-id -o "$tmp/bigloop" "$here/../testdata/src/bigloop.c"
# QEMU's plugin makes the runs fast; the sink holds all of each run (no loss)
"$cstrace" synth --plugin --buffer-size 256M --arch aarch64 --out perf -o "$tmp/x1.data" -- \
  "$tmp/bigloop" "$iters" >/dev/null 2>&1
"$cstrace" synth --plugin --buffer-size 512M --arch aarch64 --out perf -o "$tmp/x8.data" -- \
  "$tmp/bigloop" $((iters * 8)) >/dev/null 2>&1

# each command starts from no database
cat >"$tmp/perf.sh" <<EOF
rm -f "$tmp/p.db"; cd "$tmp" && HOME="$tmp" exec perf script -i "\$1" --itrace=bep -s "$script" "$tmp/p.db" branches calls
EOF
cat >"$tmp/cst.sh" <<EOF
rm -f "$tmp/c.db"; f=\$1; shift; exec "$cstrace" export "\$@" -o "$tmp/c.db" "\$f"
EOF
samples() { "$cstrace" export --stats -f -o "$tmp/s.db" "$1" 2>&1 | awk '/ samples,/ {print $1}'; }
rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }

n1=$(samples "$tmp/x1.data")
n8=$(samples "$tmp/x8.data")
labels=("perf script -s export-to-sqlite.py (peer)" "cstrace export (2 threads)"
  "cstrace export, one core (--threads 1)")
cmds=("bash $tmp/perf.sh $tmp/x1.data" "bash $tmp/cst.sh $tmp/x1.data"
  "bash $tmp/cst.sh $tmp/x1.data --threads 1 --decoder cstrace")
declare -a cpu wall
best_of "$runs" cmds cpu wall
mem=()
for i in "${!cmds[@]}"; do mem[$i]=$(rss ${cmds[$i]}); done
echo
echo "synth bigloop $iters (A64, static, -g): $(du -h "$tmp/x1.data" | cut -f1) perf.data, $n1 branch samples (CPU time, best of $runs, interleaved)"
echo
echo "| command | CPU | wall | samples/s (CPU) | vs perf | peak RSS |"
echo "|---|---|---|---|---|---|"
for i in "${!cmds[@]}"; do
  awk -v l="${labels[$i]}" -v t="${cpu[$i]}" -v w="${wall[$i]}" -v b="${cpu[0]}" -v n="$n1" \
    -v m="${mem[$i]}" -v i="$i" 'BEGIN {
    r = t > 0 ? n / t : 0;
    printf "| %-44s | %7.2f s | %7.2f s | %8.3f M/s | %s | %6.1f MiB |\n", l, t, w, r / 1e6,
      (i == 0 ? "-" : sprintf("%.1fx", t > 0 ? b / t : 0)), m / 1024 }'
done
"$cstrace" export --stats -f -o "$tmp/s.db" "$tmp/x1.data" 2>&1 | sed 's/^/\n/'
echo "database: $(du -h "$tmp/s.db" | cut -f1)"

# the same, eight times the trace: time in proportion, memory the same
cmds8=("bash $tmp/cst.sh $tmp/x8.data --threads 1 --decoder cstrace")
declare -a cpu8 wall8
best_of 1 cmds8 cpu8 wall8
m8=$(rss ${cmds8[0]})
echo
echo "| eight times the trace: $n8 samples | CPU | samples/s (CPU) | peak RSS |"
echo "|---|---|---|---|"
awk -v t="${cpu8[0]}" -v n="$n8" -v m="$m8" 'BEGIN {
  printf "| cstrace export, one core | %7.2f s | %8.3f M/s | %6.1f MiB |\n", t, (t > 0 ? n / t : 0) / 1e6, m / 1024 }'
