#!/usr/bin/env bash
# cstrace's own ETMv3 decoder (decode/engine/etm3_follow.c) on the in-tree fixture
# testdata/sample/a32-interwork (made by testdata/sample/make-a32-interwork.sh), with
# no QEMU and no cross compiler: on one thread it gives OpenCSD's elements, every
# one of them its own; both decode to what QEMU executed in that very run (its log
# reduced to runs of instructions, a32-interwork.runs.gz); and on threads, where the
# workers use it by default, the output is one thread's (OpenCSD's) byte for byte.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
sample=$CSTRACE_SOURCE_DIR/testdata/sample
snap=$sample/a32-interwork
if [ ! -d "$snap" ] || [ ! -f "$sample/a32-interwork.runs.gz" ]; then
	fail "no fixture at $snap"
	finish
fi

"$CSTRACE" decode --format=jsonl --threads 1 --decoder=opencsd "$snap" > "$TMP/ocsd" 2> "$TMP/ocsd.err"
"$CSTRACE" decode --format=jsonl --threads 1 --decoder=cstrace "$snap" > "$TMP/own" 2> "$TMP/own.err"
check "cstrace's decoder gives OpenCSD's elements: $(diff "$TMP/ocsd" "$TMP/own" | head -4)" \
	cmp -s "$TMP/ocsd" "$TMP/own"
check "the same messages: $(head -c 300 "$TMP/own.err")" cmp -s "$TMP/ocsd.err" "$TMP/own.err"

# what the fixture is there for: ETMv3 trace of A32 and T32 code with exceptions
check "the fixture's source is an ETMv3" grep -q "^type=ETM3" "$snap/device_1.ini"
for what in '"isa":"A32"' '"isa":"T32"' '"type":"exception"' '"type":"timestamp"' \
	'"last":"branch"' '"last":"indirect"' '"executed":false'; do
	check "the fixture's trace holds $what" grep -q "$what" "$TMP/ocsd"
done

# every element by cstrace's decoder, so that the comparison cannot pass by
# OpenCSD's decoding both
"$CSTRACE" decode --format=none --stats --threads 1 --decoder=cstrace "$snap" 2> "$TMP/stats" > /dev/null
n=$(sed -n "s/^cstrace: \([0-9]*\) of the elements by cstrace's own decoder$/\1/p" "$TMP/stats")
total=$(grep -c . "$TMP/ocsd")
check "every element by cstrace's decoder ($total elements, ${n:-none} its)" [ "${n:-0}" -eq "$total" ]
check "some trace at all ($total elements)" [ "$total" -gt 1000 ]

# runs JSONL: the decoded instruction ranges joined where one ends where the next
# starts in the same instruction set, as the ground truth's runs are cut
runs() {
	awk 'function num(k,   m) { m = match($0, "\"" k "\":[0-9]+"); return substr($0, RSTART + length(k) + 3, RLENGTH - length(k) - 3) + 0 }
	/"type":"instr_range"/ {
		s = num("start"); e = num("end"); c = num("insns")
		isa = $0; sub(/.*"isa":"/, "", isa); sub(/".*/, "", isa)
		if (n && s == end && isa == cur) { end = e; cnt += c; next }
		if (n) printf "%x %x %d %s\n", start, end, cnt, cur
		start = s; end = e; cnt = c; cur = isa; n++
	}
	END { if (n) printf "%x %x %d %s\n", start, end, cnt, cur }' "$1"
}
gzip -dc "$sample/a32-interwork.runs.gz" > "$TMP/truth"
want=$(awk '{n += $3} END {print n}' "$TMP/truth")
for d in own ocsd; do
	runs "$TMP/$d" > "$TMP/$d.runs"
	check "$d: QEMU's run, instruction for instruction ($want in $(wc -l < "$TMP/truth") runs; decoded $(awk '{n += $3} END {print n + 0}' "$TMP/$d.runs")): $(diff "$TMP/truth" "$TMP/$d.runs" | head -4)" \
		cmp -s "$TMP/truth" "$TMP/$d.runs"
done

# on threads the workers decode with cstrace's decoder (the default), and with it
# asked for; one thread's output (OpenCSD's) either way
for dec in auto cstrace; do
	"$CSTRACE" decode --format=jsonl --threads 2 --chunk-size 1K --decoder=$dec "$snap" \
		> "$TMP/many" 2> "$TMP/many.err"
	check "--threads 2 --chunk-size 1K --decoder=$dec: one thread's output: $(diff "$TMP/ocsd" "$TMP/many" | head -4)" \
		cmp -s "$TMP/ocsd" "$TMP/many"
	check "--threads 2 --decoder=$dec: no messages: $(head -c 300 "$TMP/many.err")" \
		[ ! -s "$TMP/many.err" ]
	"$CSTRACE" decode --format=none --stats --threads 2 --chunk-size 1K --decoder=$dec \
		"$snap" 2> "$TMP/stats" > /dev/null
	check "--threads 2 --decoder=$dec: chunks by cstrace's decoder: $(tail -1 "$TMP/stats")" \
		grep -q " [1-9][0-9]* by cstrace.s own decoder$" "$TMP/stats"
done
finish
