#!/usr/bin/env bash
# Run on an Arm board with CoreSight: records a test program with cstrace in per-thread,
# per-CPU, snapshot and sysfs modes, decodes each with cstrace and Linux perf, compares.
#
# usage: scripts/board-test.sh [--cstrace PATH] [--sink NAME] [--out DIR] [-- CMD...]
#   --cstrace PATH  the cstrace binary (default: ./build/cstrace, else cstrace in PATH)
#   --sink NAME     perf sink (default: tmc_etr0 if present, else the first in cs_etm/sinks)
#   --out DIR       where recordings go (default: ./board-test-<date>)
#   CMD             program to trace (default: a loop compiled here, else /bin/ls /)
# Exit status: 0 when every step passed, 1 otherwise. Needs perf_event_paranoid <= 0
# (or root) for the per-CPU mode and root for sysfs mode; those steps are skipped otherwise.
set -u

CSTRACE=""
SINK=""
OUT="board-test-$(date +%Y%m%d-%H%M%S)"
while [ $# -gt 0 ]; do
  case $1 in
    --cstrace) CSTRACE=$2; shift 2 ;;
    --sink) SINK=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -z "$CSTRACE" ]; then
  here=$(cd "$(dirname "$0")/.." && pwd)
  if [ -x "$here/build/cstrace" ]; then CSTRACE=$here/build/cstrace; else CSTRACE=$(command -v cstrace || true); fi
fi
[ -x "$CSTRACE" ] || { echo "cstrace not found: build it or pass --cstrace" >&2; exit 2; }
mkdir -p "$OUT"
LOG=$OUT/board-test.log
pass=0; failed=0; skipped=0
say() { echo "$*" | tee -a "$LOG"; }
ok() { pass=$((pass + 1)); say "PASS $*"; }
ko() { failed=$((failed + 1)); say "FAIL $*"; }
skip() { skipped=$((skipped + 1)); say "SKIP $*"; }

PMU=/sys/bus/event_source/devices/cs_etm
if [ ! -d "$PMU" ]; then
  say "no cs_etm PMU on this system; what cstrace says about it:"
  "$CSTRACE" record -- /bin/true 2>&1 | tee -a "$LOG"
  "$CSTRACE" doctor 2>&1 | tee -a "$LOG" || true
  exit 1
fi
say "kernel $(uname -r), $(nproc) CPUs, sinks: $(ls "$PMU/sinks" | tr '\n' ' ')"
if [ -z "$SINK" ]; then
  if [ -e "$PMU/sinks/tmc_etr0" ]; then SINK=tmc_etr0; else SINK=$(ls "$PMU/sinks" | head -1); fi
fi
[ -n "$SINK" ] || { say "cs_etm lists no sinks"; exit 1; }

# ETMv3 (Cortex-A7 on the STM32MP157) takes only cycacc, timestamp and retstack.
TERMS=""
[ -e "$PMU/cpu0/mgmt/etmidr" ] && TERMS=",timestamp=0"
EVENT="cs_etm/@$SINK$TERMS/u"
say "event: $EVENT"

# The traced program: a loop with a known shape when a compiler is here.
if [ $# -gt 0 ]; then
  PROG=("$@")
elif command -v cc >/dev/null; then
  cat >"$OUT/loop.c" <<'EOF'
#include <stdio.h>
static int __attribute__((noinline)) step(int i) { return (i * 7) ^ (i >> 3); }
int main(void) { int s = 0; for (int i = 0; i < 200000; i++) s += step(i); printf("%d\n", s); return 0; }
EOF
  cc -O1 -g -o "$OUT/loop" "$OUT/loop.c" && PROG=("$OUT/loop") || PROG=(/bin/ls /)
else
  PROG=(/bin/ls /)
fi
say "program: ${PROG[*]}"

# Decode a perf.data with cstrace and with perf; compare instruction counts.
compare() {
  local name=$1 file=$2
  "$CSTRACE" aux --summary "$file" >"$OUT/$name.aux.txt" 2>&1 || ko "$name: cstrace aux"
  sed 's/^/    /' "$OUT/$name.aux.txt" | tee -a "$LOG" >/dev/null
  if ! "$CSTRACE" decode --stats --format=none "$file" 2>"$OUT/$name.cstrace.stats"; then
    ko "$name: cstrace decode"; return
  fi
  local ci pi
  ci=$(sed -n 's/.* \([0-9]*\) instructions.*/\1/p' "$OUT/$name.cstrace.stats" | tail -1)
  if ! command -v perf >/dev/null; then skip "$name: perf not installed"; return; fi
  pi=$(perf script -i "$file" --itrace=i1i -F ip 2>"$OUT/$name.perf.err" | wc -l)
  say "  $name: cstrace decoded ${ci:-?} instructions, perf ${pi}"
  if [ -z "$ci" ] || [ "$ci" -eq 0 ]; then ko "$name: cstrace decoded no instructions"
  elif [ "$pi" -eq 0 ]; then ko "$name: perf decoded nothing (see $OUT/$name.perf.err)"
  elif [ "$ci" -eq "$pi" ]; then ok "$name: cstrace and perf agree ($ci instructions)"
  else
    local diff=$(( ci > pi ? ci - pi : pi - ci ))
    if [ $((diff * 100)) -le "$ci" ]; then ok "$name: within 1% ($ci vs $pi)"
    else ko "$name: cstrace $ci vs perf $pi instructions"; fi
  fi
}

record() {
  local name=$1; shift
  if "$CSTRACE" record "$@" -o "$OUT/$name.data" -- "${PROG[@]}" >"$OUT/$name.out" 2>"$OUT/$name.err"; then
    ok "$name: record"
    sed 's/^/    /' "$OUT/$name.err" | tee -a "$LOG" >/dev/null
    compare "$name" "$OUT/$name.data"
  else
    ko "$name: record"; sed 's/^/    /' "$OUT/$name.err" | tee -a "$LOG"
  fi
}

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)

# 1. per-thread: follows the program across CPUs; one AUX ring
record per-thread -e "$EVENT" --per-thread
# 2. per-CPU: the program pinned to CPU 0, one ring for that CPU
if [ "$(id -u)" -eq 0 ] || [ "$paranoid" -le 0 ]; then
  PROG_SAVED=("${PROG[@]}")
  command -v taskset >/dev/null && PROG=(taskset -c 0 "${PROG[@]}")
  record per-cpu -e "$EVENT" -C 0
  PROG=("${PROG_SAVED[@]}")
else
  skip "per-cpu: perf_event_paranoid is $paranoid (needs <= 0 or root)"
fi
# 3. snapshot: only the newest trace, taken at exit (and on SIGUSR2)
record snapshot -e "$EVENT" --per-thread --snapshot=256K
# 4. sysfs mode: no perf; a snapshot directory for cstrace and trc_pkt_lister
if [ "$(id -u)" -eq 0 ]; then
  ssink=${SINK}
  if "$CSTRACE" record --sysfs --sink "$ssink" -o "$OUT/sysfs" -- "${PROG[@]}" >"$OUT/sysfs.out" 2>"$OUT/sysfs.err"; then
    ok "sysfs: record"
    if "$CSTRACE" decode --stats --format=none "$OUT/sysfs" 2>"$OUT/sysfs.stats"; then ok "sysfs: cstrace decode ($(tail -1 "$OUT/sysfs.stats"))"
    else ko "sysfs: cstrace decode"; fi
    if command -v trc_pkt_lister >/dev/null; then
      (cd "$OUT" && trc_pkt_lister -ss_dir sysfs -decode >sysfs.tpl 2>&1) && ok "sysfs: trc_pkt_lister" || ko "sysfs: trc_pkt_lister"
    fi
  else
    ko "sysfs: record"; sed 's/^/    /' "$OUT/sysfs.err" | tee -a "$LOG"
  fi
else
  skip "sysfs: needs root"
fi
# 5. perf's own recording of the same program, decoded by both, as a reference
if command -v perf >/dev/null; then
  if perf record -e "$EVENT" --per-thread -o "$OUT/perf-ref.data" -- "${PROG[@]}" >/dev/null 2>"$OUT/perf-ref.err"; then
    compare perf-ref "$OUT/perf-ref.data"
  else
    skip "perf-ref: perf record failed (see $OUT/perf-ref.err)"
  fi
fi

say "board test: $pass passed, $failed failed, $skipped skipped; files in $OUT"
[ "$failed" -eq 0 ]
