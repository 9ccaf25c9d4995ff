#!/usr/bin/env bash
# synth perf.data: the same QEMU run written as a snapshot (ground truth, code bytes) and
# as perf.data. cstrace's decode of the perf.data must be exact (MODE exact) or pieces
# of the run (MODE lossy); `perf script --itrace=i1i` must agree with it.
# Usage: perf.sh ARCH PROG MODE [synth options...]
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
arch=$1; prog=$2; mode=$3; shift 3
need_synth "$arch" "$prog"

check "synth snapshot" "$CSTRACE" synth --arch "$arch" -o "$TMP/snap" --truth "$TMP/truth" \
	--keep-log "$TMP/qemu.log" -- "$prog"
# --aux-log: the perf.data also goes through record's ring consumer, which must write
# it byte for byte (synth checks, and fails otherwise); the stream replays into it
check "synth perf.data from the same run, through the ring consumer" sh -c \
	'c=$0 a=$1 t=$2 p=$3; shift 3; "$c" synth --arch "$a" --out perf -o "$t/perf.data" --aux-log "$t/perf.auxlog" --from-log "$t/qemu.log" "$@" -- "$p" 2> "$t/stats"' \
	"$CSTRACE" "$arch" "$TMP" "$prog" "$@"
cat "$TMP/stats"
check "the recorded stream replays into the very perf.data" sh -c \
	'"$0" replay -q -o "$1/replayed.data" "$1/perf.auxlog" && cmp "$1/perf.data" "$1/replayed.data"' \
	"$CSTRACE" "$TMP"
lost=$(sed -n 's/.* \([0-9]*\) lost.*/\1/p' "$TMP/stats")
records=$(sed -n 's/.* \([0-9]*\) AUX records.*/\1/p' "$TMP/stats")
check "cstrace decode perf.data" sh -c '"$0" decode "$1" --format=jsonl > "$2"' "$CSTRACE" \
	"$TMP/perf.data" "$TMP/dec.jsonl"
# --threads: AUX fragments of one trace source cut into chunks decoded side by side
# (chunks this small cut even these small files): the one-thread elements, which
# are compared with QEMU's run below
for t in 2 4; do
	"$CSTRACE" decode --format=jsonl --threads $t --chunk-size 256 "$TMP/perf.data" \
		> "$TMP/dec.t$t.jsonl" 2> /dev/null
	check "decode --threads $t --chunk-size 256: the one-thread elements" \
		cmp -s "$TMP/dec.jsonl" "$TMP/dec.t$t.jsonl"
done
# one ground truth per guest thread (vCPU K: truth.K) on CPU K with trace ID 0x10 + 2K
truths() { for t in "$TMP"/truth "$TMP"/truth.[0-9]*; do [ -f "$t" ] && echo "$t"; done; }
cpuof() { local k=${1##*/truth}; k=${k#.}; echo "${k:-0}"; }
if [ "$mode" = exact ]; then
	[ "${lost:-1}" -eq 0 ] || fail "trace was lost in an exact test"
	for t in $(truths); do
		k=$(cpuof "$t")
		check "cstrace decode of perf.data equals QEMU (cpu $k)" python3 "$here/compare.py" \
			--truth "$t" --jsonl "$TMP/dec.jsonl" --snapshot "$TMP/snap" \
			--trace-id $((0x10 + 2 * k))
	done
else
	[ "${lost:-0}" -gt 0 ] || fail "the sink lost nothing: the test would prove nothing"
	check "cstrace decode of perf.data is pieces of QEMU's run" python3 "$here/compare.py" \
		--mode suffix --truth "$TMP/truth" --jsonl "$TMP/dec.jsonl" --snapshot "$TMP/snap"
fi
if [ -n "${MIN_AUX:-}" ]; then
	[ "${records:-0}" -ge "$MIN_AUX" ] || fail "$records AUX records, expected at least $MIN_AUX"
fi
# --id on perf.data: only that trace ID's elements, exactly as in the full decode
# (it was ignored); an ID the file does not hold is an error naming those it does
ids=$(python3 -c 'import json, sys
print(" ".join(sorted({"0x%x" % json.loads(l)["trace_id"] for l in open(sys.argv[1])})))' "$TMP/dec.jsonl")
for id in $ids; do
	"$CSTRACE" decode --format=jsonl --id "$id" "$TMP/perf.data" > "$TMP/id.jsonl" 2>/dev/null
	check "decode --id $id: that ID's elements of the full decode" python3 -c 'import json, sys
want = [l for l in open(sys.argv[1]) if json.loads(l)["trace_id"] == int(sys.argv[3], 16)]
assert want and want == list(open(sys.argv[2])), (len(want),)' "$TMP/dec.jsonl" "$TMP/id.jsonl" "$id"
done
"$CSTRACE" decode --id 0x7e "$TMP/perf.data" > /dev/null 2> "$TMP/err"
check "decode --id of an absent ID: exit 1" [ $? -eq 1 ]
check "decode --id of an absent ID: one error line naming the IDs held ($(echo $ids | tr ' ' ','))" \
	bash -c '[ "$(grep -vc "warning:" "$0")" -eq 1 ] &&
		grep -q "no trace with the selected IDs; the file holds IDs $1\$" "$0"' \
	"$TMP/err" "$(echo $ids | tr ' ' ',')"
# progress on a terminal: AUXTRACE bytes decoded of all the file holds (script(1)
# gives the run a pty); never on a pipe
if command -v script >/dev/null; then
	script -qec "'$CSTRACE' decode --format=none '$TMP/perf.data'" /dev/null > "$TMP/tty" 2>&1
	total='[0-9.]*'
	# exact runs lose nothing: the file holds all the sink gave
	[ "$mode" = exact ] && total=$(sed -n 's/.* \([0-9]*\) in the sink.*/\1/p' "$TMP/stats" |
		awk '{ printf "%.1f", $1 / 1e6 }')
	check "progress on a tty: decoding N/$total MB" grep -aq $'\rdecoding [0-9.]*/'"$total"' MB (' "$TMP/tty"
	check "progress on a tty: its line is cleared at the end" grep -aq $'\r\033\[K' "$TMP/tty"
	"$CSTRACE" decode --format=none "$TMP/perf.data" 2> "$TMP/notty"
	check "no progress on a pipe" bash -c '! grep -q decoding "$0"' "$TMP/notty"
fi
if command -v perf >/dev/null && perf version >/dev/null 2>&1; then
	perf script -i "$TMP/perf.data" --itrace=i1i -F cpu,ip 2>"$TMP/perf.err" > "$TMP/perf.ips" ||
		{ fail "perf script failed"; head -5 "$TMP/perf.err"; }
	if [ "$mode" = exact ]; then
		for t in $(truths); do
			k=$(cpuof "$t")
			check "perf script equals QEMU (cpu $k)" python3 "$here/compare.py" --truth "$t" \
				--ips "$TMP/perf.ips" --cpu "$k" --perf-queue "$TMP/dec.jsonl" \
				--snapshot "$TMP/snap" --trace-id $((0x10 + 2 * k))
		done
	else
		check "perf script equals cstrace's decode" python3 "$here/compare.py" --mode suffix \
			--truth "$TMP/truth" --jsonl "$TMP/dec.jsonl" --snapshot "$TMP/snap" \
			--also-ips "$TMP/perf.ips" --cpu 0
	fi
else
	echo "perf not installed: perf script check skipped"
fi
finish
