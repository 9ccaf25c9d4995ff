#!/usr/bin/env bash
# Address filters and the snapshot trigger, against QEMU's log of the very run: synth
# encodes one run unfiltered (its decode must equal QEMU's), then filtered (--from-log
# the same log). The filtered decode must be exactly QEMU's instructions in ViewInst
# (filter_truth.py: in the ranges, as often as they ran; nothing before a start point;
# ETMv4 leaving out what follows a stretch's last waypoint), with OpenCSD's decoder
# and cstrace's own (which may decline; then the fallback must give the same), as a
# snapshot and as perf.data, and Linux perf must decode the perf.data to the same.
# A trigger's snapshot holds the last SIZE bytes before the Nth entry: the decode is
# pieces of QEMU's run cut there, the last piece ending right before the entry.
# Usage: filter.sh ARCH DIR (the cross-built test programs)
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
arch=$1; dir=$2/$1
need_synth "$arch" "$dir/fptr"
command -v readelf >/dev/null || skip "readelf not installed"
have_perf=0
command -v perf >/dev/null && perf version >/dev/null 2>&1 && have_perf=1
sym() { python3 "$CSTRACE_SOURCE_DIR/tests/elfsym.py" "$@"; }
# runtime address and size of SYM in a static program (linked where it runs)
rng() { sym "$1" "$2" | awk '{ printf "0x%s:0x%s", $3, $2 }'; }
addr() { sym "$1" "$2" | awk '{ printf "0x%s", $3 }'; }
[ "$arch" = aarch64 ] && v4=1 || v4=0

# unfiltered: the run, its ground truth and its decode (the waypoints ETMv4 keeps)
run() { # NAME PROG
	check "$1: synth runs" "$CSTRACE" synth --arch "$arch" -o "$TMP/$1.snap" --truth "$TMP/$1.truth" \
		--keep-log "$TMP/$1.log" -- "$2"
	"$CSTRACE" decode "$TMP/$1.snap" --format=jsonl > "$TMP/$1.jsonl"
	check "$1: the unfiltered decode equals QEMU" python3 "$here/compare.py" --truth "$TMP/$1.truth" \
		--jsonl "$TMP/$1.jsonl" --snapshot "$TMP/$1.snap"
}

# CASE NAME PROG FILTER EXPECT-ARGS...: the filtered run against the filtered truth
case_() {
	local name=$1 base=$2 prog=$3 filter=$4; shift 4
	local t=$TMP/$name wp=()
	[ $v4 = 1 ] && wp=(--waypoints "$TMP/$base.jsonl")
	python3 "$here/filter_truth.py" --truth "$TMP/$base.truth" "$@" "${wp[@]}" > "$t.want" 2> "$t.n"
	local n; n=$(wc -l < "$t.want")
	check "$name: the filter keeps some of the run, not all ($(cat "$t.n"))" \
		test "$n" -gt 0 -a "$n" -lt "$(wc -l < "$TMP/$base.truth")"
	check "$name: synth --filter" "$CSTRACE" synth --arch "$arch" -o "$t.snap" --from-log "$TMP/$base.log" \
		--filter "$filter" -- "$prog"
	"$CSTRACE" decode "$t.snap" --format=jsonl --decoder=opencsd --threads 1 > "$t.ocsd" 2> "$t.err"
	check "$name: OpenCSD's decode equals QEMU's filtered run" python3 "$here/compare.py" \
		--truth "$t.want" --jsonl "$t.ocsd" --snapshot "$TMP/$base.snap"
	check "$name: a trace-on (filter) at each re-entry, no loss" python3 -c '
import json, re, sys
ons = [e for e in map(json.loads, open(sys.argv[1])) if e["type"] == "trace_on"]
k = int(re.search(r"in (\d+) stretch", open(sys.argv[2]).read()).group(1))
print("%d trace-on elements, %d stretches of ViewInst" % (len(ons), k))
sys.exit(len(ons) < k - 1 or any(e["gap"] != "filter" for e in ons))' "$t.ocsd" "$t.n"
	if "$CSTRACE" decode "$t.snap" --format=jsonl --decoder=cstrace --threads 1 > "$t.own" 2> "$t.own.err"; then
		check "$name: cstrace's decoder gives OpenCSD's elements" cmp -s "$t.ocsd" "$t.own"
	else
		echo "$name: cstrace's decoder declines: $(head -1 "$t.own.err")"
	fi
	"$CSTRACE" decode "$t.snap" --format=jsonl --threads 2 --chunk-size 256 > "$t.thr" 2> /dev/null
	check "$name: on threads (cstrace's decoder or its fallback): the same elements" cmp -s "$t.ocsd" "$t.thr"
	check "$name: decode --stats counts no gap" bash -c '"$0" decode --format=none --stats "$1" 2>&1 | grep -q " 0 gaps "' "$CSTRACE" "$t.snap"
	# the same as perf.data, and Linux perf's decode of it
	check "$name: synth --filter --out perf" "$CSTRACE" synth --arch "$arch" --out perf -o "$t.data" \
		--from-log "$TMP/$base.log" --filter "$filter" -- "$prog"
	"$CSTRACE" decode "$t.data" --format=jsonl > "$t.pjsonl"
	check "$name: cstrace's decode of the perf.data equals QEMU's filtered run" python3 "$here/compare.py" \
		--truth "$t.want" --jsonl "$t.pjsonl" --snapshot "$TMP/$base.snap"
	if [ $have_perf = 1 ]; then
		perf script -i "$t.data" --itrace=i1i -F ip > "$t.ips" 2> /dev/null
		python3 "$here/compare.py" --truth "$t.want" --ips "$t.ips" --perf-queue "$t.pjsonl" \
			--snapshot "$TMP/$base.snap" > "$TMP/cmp.$name.log"
		check "$name: perf script equals QEMU's filtered run ($(tail -1 "$TMP/cmp.$name.log"))" \
			grep -q "^exact" "$TMP/cmp.$name.log"
		# perf's branch samples (a filter's gaps as branches from and to 0) are
		# script --raw's, but where perf lost its last held instruction (above)
		perf script -i "$t.data" --itrace=b -F pid,tid,cpu,ip,addr 2> /dev/null |
			awk '{$1=$1; print}' > "$t.pbr"
		"$CSTRACE" script --raw "$t.data" 2> /dev/null | awk '{$1=$1; print}' > "$t.cbr"
		check "$name: script --raw gives perf's branch samples" bash -c \
			'cmp -s "$0" "$1" || { [ "$(head -n -1 "$1")" = "$(cat "$0")" ] && grep -q "known loss" "$2"; }' \
			"$t.pbr" "$t.cbr" "$TMP/cmp.$name.log"
	fi
}

# VIEWS NAME BASE PROG FUNC...: what the filter left out is no lost trace, and the
# call model makes no call up and drops none: each FUNC's calls in report -g are its
# entries in QEMU's run (all of which the filter keeps)
views() {
	local name=$1 base=$2 prog=$3; shift 3
	local t=$TMP/$name
	"$CSTRACE" report -g --percent-limit 0 --stats "$t.data" > "$t.g" 2> "$t.gerr"
	check "$name: report -g: no stack emptied by lost trace" grep -q " 0 stacks emptied by lost trace" "$t.gerr"
	check "$name: report -g: says where the filter turned tracing off" \
		grep -q "an address filter turned tracing off [1-9][0-9]* time(s): no trace lost" "$t.gerr"
	for fn in "$@"; do
		local want got
		want=$(grep -cx "$(sym "$prog" "$fn" | cut -d' ' -f3)" "$TMP/$base.truth")
		got=$(awk -v f="$fn" '$NF == f && $5 ~ /^[0-9]+$/ { n += $5 } END { print n + 0 }' "$t.g")
		check "$name: report -g: $fn called $got times, QEMU entered it $want times" test "$got" -eq "$want"
	done
	"$CSTRACE" script --call-trace "$t.data" > "$t.calls" 2> /dev/null
	check "$name: script --call-trace: trace off marked, no trace lost" bash -c \
		'grep -q "\[trace off: filter\]" "$0" && ! grep -q "trace lost" "$0"' "$t.calls"
}

F=$dir/fptr R=$dir/recurse S=$dir/shlib L=$dir/libsynthlib.so
run fptr "$F"
# a callback qsort (untraced) calls: entered and left from outside the range
case_ cmp fptr "$F" "filter cmp @ $F" --range "$(rng "$F" cmp)"
views cmp fptr "$F" cmp
# two ranges, the functions called through a table
case_ ops fptr "$F" "filter op_add @ $F, filter op_mul@$F" --range "$(rng "$F" op_add)" --range "$(rng "$F" op_mul)"
views ops fptr "$F" op_add op_mul
run recurse "$R"
# a recursion inside its range
case_ fib recurse "$R" "filter fib @ $R" --range "$(rng "$R" fib)"
"$CSTRACE" report -g --percent-limit 0 "$TMP/fib.data" 2>/dev/null | awk '$NF == "fib" { n += $5 } END { print n + 0 }' > "$TMP/fib.n"
check "fib: report -g: every call of the recursion ($(cat "$TMP/fib.n"), QEMU $(grep -cx "$(sym "$R" fib | cut -d' ' -f3)" "$TMP/recurse.truth"))" \
	test "$(cat "$TMP/fib.n")" -eq "$(grep -cx "$(sym "$R" fib | cut -d' ' -f3)" "$TMP/recurse.truth")"
# main alone: its calls go to code the filter leaves out and come back; main stays
# one frame (one stack in the call graph, not one per return into it)
case_ mainonly recurse "$R" "filter main @ $R" --range "$(rng "$R" main)"
views mainonly recurse "$R" main
check "mainonly: report -g: main is one stack" test "$(grep -vc '^#' "$TMP/mainonly.g")" -eq 1
# start main: nothing before main, all of main and what follows
case_ main recurse "$R" "start main @ $R" --start "$(addr "$R" main)"
check "start main: all of main is there" bash -c 'grep -c . "$0" >/dev/null && \
	[ "$(head -1 "$0")" = "${1#0x}" ] && grep -qx "${2#0x}" "$0"' "$TMP/main.want" \
	"$(addr "$R" main)" "$(addr "$R" main)"
# start at fib, stop at depth: on at the first, off after the second's entry
case_ fibdepth recurse "$R" "start fib @ $R, stop depth @ $R" --start "$(addr "$R" fib)" --stop "$(addr "$R" depth)"
# a library's function: placed where ld.so maps the library
if [ -x "$S" ] && [ -f "$L" ]; then
	run shlib "$S"
	base=$(python3 "$here/filter_truth.py" --base-of "$L" --snapshot "$TMP/shlib.snap")
	read -r off size _ < <(sym "$L" synth_lib_mix)
	case_ lib shlib "$S" "filter synth_lib_mix @ $L" --range "$(printf '0x%x:0x%s' $((0x$base + 0x$off)) "$size")"
fi

# the trigger: the snapshot at op_mul's third entry holds the last 1 KiB before it
op_mul=$(addr "$F" op_mul)
python3 "$here/filter_truth.py" --truth "$TMP/fptr.truth" --trigger "$op_mul" --count 3 > "$TMP/cut" 2>/dev/null
check "trigger: synth --snapshot --trigger" sh -c '"$0" synth --arch "$1" --out perf --snapshot=1024 \
	--sync-period 128 -o "$2/trig.data" --from-log "$2/fptr.log" --trigger op_mul --trigger-count 3 -- "$3" 2> "$2/trig.err"' \
	"$CSTRACE" "$arch" "$TMP" "$F"
check "trigger: it fired at the third entry" grep -q "the trigger fired after $(wc -l < "$TMP/cut") instructions" "$TMP/trig.err"
"$CSTRACE" decode "$TMP/trig.data" --format=jsonl > "$TMP/trig.jsonl"
check "trigger: the snapshot is the run's last instructions before the entry" python3 "$here/compare.py" \
	--mode suffix --truth "$TMP/cut" --jsonl "$TMP/trig.jsonl" --snapshot "$TMP/fptr.snap"
check "trigger: the snapshot lost the older trace (a 1 KiB ring)" bash -c \
	'[ "$(grep -c instr_range "$0")" -gt 0 ] && ! grep -q "\"start\":$((0x$(head -1 "$1")))," "$0"' "$TMP/trig.jsonl" "$TMP/fptr.truth"
if [ $have_perf = 1 ]; then
	perf script -i "$TMP/trig.data" --itrace=i1i -F ip > "$TMP/trig.ips" 2> /dev/null
	check "trigger: perf script gives the decode's instructions" python3 "$here/compare.py" --mode suffix \
		--truth "$TMP/cut" --jsonl "$TMP/trig.jsonl" --snapshot "$TMP/fptr.snap" --also-ips "$TMP/trig.ips"
fi
# a trigger with a filter: only op_mul's callers' ... the filtered trace up to the entry
python3 "$here/filter_truth.py" --truth "$TMP/fptr.truth" --trigger "$op_mul" --count 3 \
	--range "$(rng "$F" op_add)" $([ $v4 = 1 ] && echo --waypoints "$TMP/fptr.jsonl") > "$TMP/fcut" 2>/dev/null
check "trigger with a filter" "$CSTRACE" synth --arch "$arch" --out perf --snapshot=64K -o "$TMP/ftrig.data" \
	--from-log "$TMP/fptr.log" --trigger op_mul --trigger-count 3 --filter "filter op_add @ $F" -- "$F"
"$CSTRACE" decode "$TMP/ftrig.data" --format=jsonl > "$TMP/ftrig.jsonl"
check "trigger with a filter: exactly the filtered run up to the entry" python3 "$here/compare.py" \
	--truth "$TMP/fcut" --jsonl "$TMP/ftrig.jsonl" --snapshot "$TMP/fptr.snap"
"$CSTRACE" synth --arch "$arch" --out perf --snapshot -o "$TMP/never.data" --from-log "$TMP/fptr.log" \
	--trigger op_mul --trigger-count 1000 -- "$F" 2> "$TMP/never.err"
check "a trigger that never fires: said so" grep -q "the trigger never fired (50 entries of op_mul)" "$TMP/never.err"

# bad input: one line naming what is wrong
bad() { "$CSTRACE" synth --arch "$arch" -o "$TMP/bad" --from-log "$TMP/fptr.log" "$@" -- "$F" 2> "$TMP/err";
	[ $? -ne 0 ] && [ "$(grep -vc '^cstrace: synth: [a-z ]*$' "$TMP/err")" -ge 1 ]; }
check "a kernel filter in synth is refused" bad --filter "filter 0x1000/0x10"
check "...saying why" grep -q "synth traces user space only" "$TMP/err"
check "an unknown symbol" bad --filter "filter nosuch @ $F"
check "...naming it" grep -q "has no function 'nosuch'" "$TMP/err"
check "a trigger without --snapshot" bad --trigger op_mul
check "...saying it needs it" grep -q "needs --out perf --snapshot" "$TMP/err"
finish
