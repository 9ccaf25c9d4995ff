#!/usr/bin/env bash
# Decode throughput on the largest shared capture (bugfix-exact-match: 1 MiB of
# ETR trace, ~1.74 M instruction ranges), as ratios against OpenCSD's own
# trc_pkt_lister run in the same benchmark run. All output goes to /dev/null.
# usage: bench/decode_bench.sh [path/to/cstrace] [runs]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
CSTRACE=${1:-$here/build/cstrace}
RUNS=${2:-3}
SNAP=${CSTRACE_SHARED_TESTDATA:-$here/../shared/testdata}/opencsd/bugfix-exact-match
[ -d "$SNAP" ] || { echo "SKIP: $SNAP not found"; exit 0; }
command -v trc_pkt_lister >/dev/null || { echo "SKIP: trc_pkt_lister (libopencsd-bin) not installed"; exit 0; }

bytes=$(stat -c %s "$SNAP/cstrace.bin")
ranges=$("$CSTRACE" decode --format=none --stats "$SNAP" 2>&1 | sed -n 's/.* \([0-9]*\) ranges.*/\1/p')

# best wall time of RUNS runs, and peak RSS (KiB) of the last, for a command
measure() {
  local best="" t rss
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" > /dev/null 2>&1
    read -r t rss < "$tmp/time"
    if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
  done
  echo "$best $rss"
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

read -r t_peer rss_peer < <(measure trc_pkt_lister -ss_dir "$SNAP" -decode -logfilename /dev/null)
read -r t_peer_only rss_peer_only < <(measure trc_pkt_lister -ss_dir "$SNAP" -decode_only -logfilename /dev/null)
read -r t_elem rss_elem < <(measure "$CSTRACE" decode --format=elements -o /dev/null "$SNAP")
read -r t_text rss_text < <(measure "$CSTRACE" decode --format=text -o /dev/null "$SNAP")
read -r t_none rss_none < <(measure "$CSTRACE" decode --format=none "$SNAP")

row() { # name seconds rss
  awk -v n="$1" -v t="$2" -v r="$3" -v b="$bytes" -v g="$ranges" -v p="$t_peer" \
    'BEGIN { printf "| %-44s | %6.2f s | %7.2f MB/s | %9.0f ranges/s | %5.2fx | %6.1f MiB |\n",
             n, t, b / 1e6 / t, g / t, p / t, r / 1024 }'
}
echo "bugfix-exact-match: $bytes bytes of trace, $ranges instruction ranges; best of $RUNS runs"
echo "| command | time | trace | ranges | speed vs trc_pkt_lister -decode | peak RSS |"
echo "|---|---|---|---|---|---|"
row "trc_pkt_lister -decode (peer)" "$t_peer" "$rss_peer"
row "trc_pkt_lister -decode_only (peer)" "$t_peer_only" "$rss_peer_only"
row "cstrace decode --format=elements" "$t_elem" "$rss_elem"
row "cstrace decode --format=text" "$t_text" "$rss_text"
row "cstrace decode --format=none" "$t_none" "$rss_none"
