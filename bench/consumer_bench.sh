#!/usr/bin/env bash
# The consumer log's cost in CPU time against the consumer without it (same run),
# through the kernel model. usage: bench/consumer_bench.sh [path/to/cstrace] [runs] [MiB]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
CSTRACE=${1:-$here/build/cstrace}
BIN=$(dirname "$CSTRACE")/bench/consumer_bench
[ -x "$BIN" ] || { echo "SKIP: $BIN not built"; exit 0; }
# tmpfs: the disk would add the same noise to every mode
TMPDIR=${TMPDIR:-/dev/shm} "$BIN" "${2:-7}" "${3:-128}"
