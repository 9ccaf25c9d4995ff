#!/usr/bin/env bash
# perf.data decode against Linux perf, run in the same benchmark run: a timestamped
# per-CPU recording (QEMU run of the 4-thread test program, one CPU per thread, as
# `perf record -e cs_etm//` makes them) printed one line per instruction and one
# per branch by `perf script` and by `cstrace script --raw` in perf's time order
# (the merge of decode/perf/order.c) and in file order. All output goes to files
# that are compared afterwards: the ratios are for the same lines.
# usage: bench/perf_bench.sh [path/to/cstrace] [runs] [iterations per thread]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
CSTRACE=${1:-$here/build/cstrace}
RUNS=${2:-3}
ITER=${3:-100000}
PROG=$(dirname "$CSTRACE")/testdata/aarch64/threads
command -v perf >/dev/null && perf version >/dev/null 2>&1 || { echo "SKIP: perf not installed"; exit 0; }
command -v qemu-aarch64 >/dev/null || { echo "SKIP: qemu-aarch64 not installed"; exit 0; }
[ -x "$PROG" ] || { echo "SKIP: $PROG not built"; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export HOME=$tmp # no ~/.debug cache on either side

"$CSTRACE" synth --arch aarch64 --out perf --timestamps -o "$tmp/t.data" -- "$PROG" "$ITER" \
	2>"$tmp/synth.err" >/dev/null || { cat "$tmp/synth.err"; exit 1; }
stats=$(sed -n 's/^cstrace: synth: //p' "$tmp/synth.err")

# best wall time of RUNS runs and peak RSS (KiB) of the best: prints "seconds rss"
measure() { # out-file command...
	local out=$1 best="" rss="" t r
	shift
	for _ in $(seq "$RUNS"); do
		/usr/bin/time -f "%e %M" -o "$tmp/time" "$@" >"$out" 2>/dev/null
		read -r t r <"$tmp/time"
		if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t rss=$r; fi
	done
	echo "$best $rss"
}

read -r t_pi r_pi < <(measure "$tmp/p.insn" perf script -i "$tmp/t.data" --itrace=i1i -F pid,tid,cpu,ip)
read -r t_ci r_ci < <(measure "$tmp/c.insn" "$CSTRACE" script --raw --insn "$tmp/t.data")
read -r t_fi r_fi < <(measure "$tmp/f.insn" "$CSTRACE" script --raw --insn --order=file "$tmp/t.data")
read -r t_pb r_pb < <(measure "$tmp/p.br" perf script -i "$tmp/t.data" --itrace=b -F pid,tid,cpu,ip,addr)
read -r t_cb r_cb < <(measure "$tmp/c.br" "$CSTRACE" script --raw "$tmp/t.data")
read -r t_dn r_dn < <(measure /dev/null "$CSTRACE" decode --format=none "$tmp/t.data")
# the same on one thread: in time order, the CPUs' queues decode ahead of the merge
# on the other threads (the default: the CPUs online)
read -r t_cb1 r_cb1 < <(measure "$tmp/c1.br" "$CSTRACE" script --raw --threads 1 "$tmp/t.data")
read -r t_dn1 r_dn1 < <(measure /dev/null "$CSTRACE" decode --format=none --threads 1 "$tmp/t.data")

# the same lines in the same order, less those cstrace marks perf_unseen
"$CSTRACE" decode --format=jsonl "$tmp/t.data" >"$tmp/c.jsonl"
same_insn() {
	python3 "$here/tests/synth/order_check.py" "$tmp/p.insn" "$tmp/c.insn" "$tmp/c.jsonl" 2>&1 |
		sed -n 's/.* \([0-9]*\) cstrace lines perf_unseen.*/yes (cstrace: +\1 perf_unseen)/p;
			s/^\(line\|perf has\|cstrace\).*/NO: &/p'
}
same() { cmp -s <(awk '{$1=$1; print}' "$1") <(awk '{$1=$1; print}' "$2") && echo yes ||
	echo "no: $(cmp <(awk '{$1=$1; print}' "$1") <(awk '{$1=$1; print}' "$2") | head -1)"; }
lines=$(wc -l <"$tmp/p.insn")
row() { # name seconds rss peer-seconds peer-rss same
	awk -v n="$1" -v t="$2" -v r="$3" -v p="$4" -v pr="$5" -v s="$6" -v l="$lines" \
		'BEGIN { printf "| %-52s | %7.2f s | %6.2fx | %7.1f MiB | %5.2fx | %s |\n",
		         n, t, p / t, r / 1024, pr / r, s }'
}
echo "synth threads $ITER (AArch64, 4 CPUs, timestamps): $stats"
echo "$lines instruction samples; best of $RUNS runs; ratios: perf's time (or RSS) / this one"
echo
echo "| command | wall | speed vs perf | peak RSS | RSS vs perf | same lines as perf |"
echo "|---|---|---|---|---|---|"
row "perf script --itrace=i1i -F pid,tid,cpu,ip (peer)" "$t_pi" "$r_pi" "$t_pi" "$r_pi" -
row "cstrace script --raw --insn (time order)" "$t_ci" "$r_ci" "$t_pi" "$r_pi" "$(same_insn)"
row "cstrace script --raw --insn --order=file" "$t_fi" "$r_fi" "$t_pi" "$r_pi" "no (file order)"
row "perf script --itrace=b -F pid,tid,cpu,ip,addr (peer)" "$t_pb" "$r_pb" "$t_pb" "$r_pb" -
row "cstrace script --raw (branches, time order)" "$t_cb" "$r_cb" "$t_pb" "$r_pb" "$(same "$tmp/p.br" "$tmp/c.br")"
row "cstrace decode --format=none (time order, no output)" "$t_dn" "$r_dn" "$t_pi" "$r_pi" -
row "cstrace script --raw (branches, time order, 1 thread)" "$t_cb1" "$r_cb1" "$t_pb" "$r_pb" "$(same "$tmp/p.br" "$tmp/c1.br")"
row "cstrace decode --format=none (time order, 1 thread)" "$t_dn1" "$r_dn1" "$t_pi" "$r_pi" -
echo
echo "$(nproc) CPUs online: the runs without --threads use that many threads"
