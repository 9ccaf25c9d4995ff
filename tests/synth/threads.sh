#!/usr/bin/env bash
# decode --threads on a synth run: a long loop traced into one formatted buffer is
# cut into chunks decoded side by side; every thread count and chunk size must give
# exactly the one-thread output, which must equal what QEMU executed, and chunks
# must really have been decoded apart. Usage: threads.sh ARCH PROG COUNT
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/synth_run.sh"
synth_long_run "$1" "$2" "$3"
"$CSTRACE" decode --threads 1 --format=jsonl "$TMP/snap" > "$TMP/one.jsonl"
check "one thread equals QEMU" python3 "$here/compare.py" --truth "$TMP/truth" \
	--jsonl "$TMP/one.jsonl" --snapshot "$TMP/snap"
apart=0
for t in 2 3 4; do
	for cs in 4K 64K; do
		"$CSTRACE" decode --threads $t --chunk-size $cs --stats --format=jsonl "$TMP/snap" \
			> "$TMP/many.jsonl" 2> "$TMP/many.err"
		check "--threads $t --chunk-size $cs: the one-thread output" \
			cmp -s "$TMP/one.jsonl" "$TMP/many.jsonl"
		n=$(sed -n 's/.* chunks, \([0-9]*\) decoded apart.*/\1/p' "$TMP/many.err")
		[ "${n:-0}" -gt "$apart" ] && apart=${n:-0}
	done
done
# how many depends on how soon each worker starts on a loaded machine: the best run
check "chunks decoded apart (best of the runs: $apart)" [ "$apart" -ge 4 ]
for v in script report; do
	"$CSTRACE" $v --threads 1 "$TMP/snap" > "$TMP/one.$v" 2>&1
	"$CSTRACE" $v --threads 3 --chunk-size 4K "$TMP/snap" > "$TMP/many.$v" 2>&1
	check "$v --threads 3: the one-thread output" cmp -s "$TMP/one.$v" "$TMP/many.$v"
done
finish
