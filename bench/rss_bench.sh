#!/usr/bin/env bash
# Peak memory against input size: a synthesized bigloop trace grown by repetition
# (bench/src/grow_trace.py) to 64 MiB, 256 MiB and 1 GiB, as a snapshot (a raw sink
# buffer) and as perf.data, through decode --format=none, dump, script --raw and
# report. Peak RSS must not grow with the input (the goal: under 100 MiB for any
# input); perf script on the same perf.data is the peer (up to 256 MiB). Prints one
# row per input and command: size, wall time, peak RSS.
# usage: bench/rss_bench.sh [path/to/cstrace] [sizes in MiB, e.g. "64 256 1024"]
#                           [commands, e.g. "decode --format=none|report"]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
CSTRACE=${1:-$here/build/cstrace}
SIZES=${2:-64 256 1024}
CMDS=${3:-decode --format=none|dump|script --raw|report}
build=$(cd "$(dirname "$CSTRACE")" && pwd)
prog=$build/testdata/aarch64/bigloop
[ -x "$prog" ] || { echo "SKIP: $prog not built"; exit 0; }
command -v qemu-aarch64 >/dev/null || { echo "SKIP: qemu-aarch64 missing"; exit 0; }
tmp=${TMPDIR:-/tmp}/rss_bench.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

# a seed of about 4 MiB of trace, both ways (one AUX buffer for perf.data)
"$CSTRACE" synth --arch aarch64 --plugin --buffer-size 16M -o "$tmp/seed.snap" -- "$prog" 1200000 \
	>/dev/null 2>&1
"$CSTRACE" synth --arch aarch64 --plugin --buffer-size 16M --out perf -o "$tmp/seed.data" -- \
	"$prog" 1200000 >/dev/null 2>&1

printf '%-10s %-8s %-40s %10s %12s\n' input MiB command wall "peak RSS"
for mib in $SIZES; do
	python3 "$here/bench/src/grow_trace.py" snap "$tmp/seed.snap" "$tmp/g.snap" $((mib << 20)) >/dev/null
	python3 "$here/bench/src/grow_trace.py" perf "$tmp/seed.data" "$tmp/g.data" $((mib << 20)) >/dev/null
	for input in snapshot perf.data; do
		f=$tmp/g.snap
		[ $input = perf.data ] && f=$tmp/g.data
		IFS='|' read -r -a cmds <<<"$CMDS"
		for cmd in "${cmds[@]}"; do
			/usr/bin/time -f "%e %M" -o "$tmp/time" $CSTRACE $cmd "$f" >/dev/null 2>&1 || true
			read -r t rss <"$tmp/time"
			printf '%-10s %-8s %-40s %9.1fs %8.1f MiB\n' $input "$mib" "cstrace $cmd" "$t" \
				"$(awk -v k="$rss" 'BEGIN{print k / 1024}')"
		done
	done
	# the peer, on perf.data up to 256 MiB (beyond, it runs for many minutes)
	if [ "$mib" -le 256 ] && command -v perf >/dev/null; then
		/usr/bin/time -f "%e %M" -o "$tmp/time" perf script -i "$tmp/g.data" --itrace=b -F ip \
			>/dev/null 2>&1 || true
		read -r t rss <"$tmp/time"
		printf '%-10s %-8s %-40s %9.1fs %8.1f MiB\n' perf.data "$mib" "perf script --itrace=b (peer)" \
			"$t" "$(awk -v k="$rss" 'BEGIN{print k / 1024}')"
	fi
	rm -rf "$tmp/g.snap" "$tmp/g.data"
done
