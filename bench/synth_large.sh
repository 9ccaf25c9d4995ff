#!/usr/bin/env bash
# Synthesize a large real-format ETMv4 trace (default 256 MB) for decoder performance
# work: bigloop under QEMU with synth's TCG plugin, into a snapshot directory or perf.data.
# Usage: bench/synth_large.sh [-s SIZE_MB] [-o OUT] [-b BUILD_DIR] [--perf]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
size=256 out="" build="$root/build" perf=0
while [ $# -gt 0 ]; do
	case $1 in
	-s) size=$2; shift 2 ;;
	-o) out=$2; shift 2 ;;
	-b) build=$2; shift 2 ;;
	--perf) perf=1; shift ;;
	-h|--help) sed -n '2,4p' "$0"; exit 0 ;;
	*) echo "synth_large.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
cstrace=$build/cstrace
[ -x "$cstrace" ] || { echo "synth_large.sh: build cstrace first ($cstrace)" >&2; exit 1; }
prog=$build/testdata/aarch64/bigloop
if [ ! -x "$prog" ]; then
	# the test programs target builds it; without it, build it here
	mkdir -p "$build/bench"
	prog=$build/bench/bigloop
	aarch64-linux-gnu-gcc -O2 -g -fno-optimize-sibling-calls -static -o "$prog" \
		"$root/testdata/src/bigloop.c"
fi
# bigloop emits about 3.5 bytes of formatted ETMv4 trace per iteration (measured)
iters=$((size * 1024 * 1024 * 10 / 35))
if [ "$perf" = 1 ]; then
	out=${out:-$build/bench/synth-large.data}
	extra=(--out perf)
else
	out=${out:-$build/bench/synth-large}
	rm -rf "$out"
	extra=()
fi
mkdir -p "$(dirname "$out")"
echo "synthesizing about $size MB: bigloop $iters -> $out"
start=$(date +%s.%N)
"$cstrace" synth --arch aarch64 --plugin --buffer-size $((size * 2))M "${extra[@]}" \
	-o "$out" -- "$prog" "$iters"
end=$(date +%s.%N)
bytes=$(if [ -d "$out" ]; then stat -c %s "$out/cstrace.bin"; else stat -c %s "$out"; fi)
awk -v b="$bytes" -v s="$start" -v e="$end" \
	'BEGIN { printf "%.1f MB of trace in %.1f s (%.1f MB/s)\n", b / 1048576, e - s, b / 1048576 / (e - s) }'
echo "decode it: $cstrace decode $out --format=jsonl > /dev/null"
