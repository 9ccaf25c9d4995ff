#!/usr/bin/env bash
# Times on perf's clock: a perf.data whose ETMs count the kernel's counter (every
# TS_SOURCE 1) and which carries TIME_CONV shows its timestamps converted the way
# perf converts them (tsc_to_perf_time), in seconds, and --time takes seconds.
# Without them, times stay raw ticks and --time needs the 't' suffix.
# The timestamped recording comes from synth; time_conv.py turns it into the
# board-style file (and converts ticks on its own, for comparison).
# usage: time_conv.sh PROG
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
prog=$1
need_synth aarch64 "$prog"
conv() { python3 "$here/time_conv.py" "$@"; }

"$CSTRACE" synth --arch aarch64 --out perf --timestamps -o "$TMP/raw.data" -- "$prog" \
	>/dev/null 2>"$TMP/synth.err" || { cat "$TMP/synth.err" >&2; fail "synth failed"; finish; }
# 40 ns a tick (a 25 MHz counter) in the kernel's mult/shift form, zero at 1234.5 s
SHIFT=20 MULT=$((40 << 20)) ZERO=1234500000567
check "TIME_CONV added" conv "$TMP/raw.data" "$TMP/tc.data" $SHIFT $MULT $ZERO
# a 32-bit counter that wrapped just before the run (cap_user_time_short)
check "short-counter TIME_CONV added" conv "$TMP/raw.data" "$TMP/short.data" 0 1 0 \
	$(((1 << 32) - 1000)) 0xffffffff

# cstrace's own lines (insncnt is cstrace's field): the time of each branch
"$CSTRACE" script -F time,ip,insncnt "$TMP/raw.data" >"$TMP/raw.txt" || fail "script on the raw file"
"$CSTRACE" script -F time,ip,insncnt --ns "$TMP/tc.data" >"$TMP/tc.txt" ||
	fail "script on the converted file"
"$CSTRACE" script -F time,ip,insncnt "$TMP/tc.data" >"$TMP/tc_us.txt" || fail "script (µs) failed"
n=$(wc -l <"$TMP/raw.txt")
check "the trace has branches ($n)" test "$n" -gt 100
check "the raw file's times are ticks (no dot), marked 't'" \
	bash -c "! grep -q '^ *[0-9]*\.' '$TMP/raw.txt' && ! grep -v -q '^ *[0-9]*t: ' '$TMP/raw.txt'"
# every line: the same address, and its time is the raw line's ticks converted
awk -F: '{print $1+0}' "$TMP/raw.txt" | conv --ticks-to-ns $SHIFT $MULT $ZERO |
	awk '{printf "%5d.%09d\n", int($1 / 1e9), $1 % 1e9}' >"$TMP/expect.t"
paste -d: "$TMP/expect.t" <(cut -d: -f2- "$TMP/raw.txt") >"$TMP/expect.txt"
check "each time is perf's conversion of its ticks (ns)" cmp -s "$TMP/expect.txt" "$TMP/tc.txt"
awk -F: '{r = substr($0, length($1) + 2); split($1, a, ".")
	printf "%s.%s:%s\n", a[1], substr(a[2], 1, 6), r}' "$TMP/expect.txt" >"$TMP/expect_us.txt"
check "each time is perf's conversion of its ticks (µs, as perf prints)" \
	cmp -s "$TMP/expect_us.txt" "$TMP/tc_us.txt"
"$CSTRACE" script -F time,ip,insncnt --ns "$TMP/short.data" >"$TMP/short.txt" ||
	fail "script (short counter)"
awk -F: '{print $1+0}' "$TMP/raw.txt" | conv --ticks-to-ns 0 1 0 $(((1 << 32) - 1000)) 0xffffffff |
	awk '{printf "%5d.%09d\n", int($1 / 1e9), $1 % 1e9}' >"$TMP/expect_s.t"
paste -d: "$TMP/expect_s.t" <(cut -d: -f2- "$TMP/raw.txt") >"$TMP/expect_s.txt"
check "a wrapped short counter is put back above time_cycles" cmp -s "$TMP/expect_s.txt" "$TMP/short.txt"
check "its times lie past 4 s (2^32 ns)" bash -c "head -1 '$TMP/short.txt' | grep -q '^ *4\.'"

# --time in seconds: a middle time splits the trace in two windows that add up,
# and they equal the same window given in ticks
all=$("$CSTRACE" report --format=csv "$TMP/tc.data" | awk -F, 'NR>1{s+=$1} END{print s+0}')
mid=$(awk -F: -v n="$n" 'NR == int(n / 2) {gsub(/ /, "", $1); print $1}' "$TMP/tc.txt")
ticks=$(awk -F: -v n="$n" 'NR == int(n / 2) {print $1 + 0}' "$TMP/raw.txt")
a=$("$CSTRACE" report --format=csv --time ",$mid" "$TMP/tc.data" | awk -F, 'NR>1{s+=$1} END{print s+0}')
next=$(python3 -c "import sys; s, f = sys.argv[1].split('.'); print('%s.%09d' % (s, int(f) + 1))" "$mid")
b=$("$CSTRACE" report --format=csv --time "$next," "$TMP/tc.data" | awk -F, 'NR>1{s+=$1} END{print s+0}')
at=$("$CSTRACE" report --format=csv --time ",${ticks}t" "$TMP/tc.data" | awk -F, 'NR>1{s+=$1} END{print s+0}')
check "--time ,$mid keeps part ($a of $all)" test "$a" -gt 0 -a "$a" -lt "$all"
check "--time $next, keeps the rest ($a + $b = $all)" test $((a + b)) = "$all"
check "--time in ticks (,${ticks}t) keeps the same ($at = $a)" test "$at" = "$a"
whole=$("$CSTRACE" report --format=csv --time 1234,1235 "$TMP/tc.data" | awk -F, 'NR>1{s+=$1} END{print s+0}')
check "--time 1234,1235 (whole seconds) keeps everything ($whole)" test "$whole" = "$all"
none=$("$CSTRACE" report --format=csv --time 1235, "$TMP/tc.data" 2>/dev/null | awk -F, 'NR>1{s+=$1} END{print s+0}')
check "--time 1235, keeps nothing ($none)" test "$none" = 0

# a trace without a clock: seconds are refused in one line, ticks work
if "$CSTRACE" report --time 1.5,2 "$TMP/raw.data" >/dev/null 2>"$TMP/err"; then
	fail "--time in seconds on a trace with no clock was accepted"
else
	check "the refusal names the 't' suffix" grep -q "5000t" "$TMP/err"
	check "the refusal is one line" test "$(wc -l <"$TMP/err")" = 1
fi
check "--time in ticks works without a clock" quiet "$CSTRACE" report --time ",${ticks}t" "$TMP/raw.data"
for bad in "5t,1.5" "abc," "1.5" "1.0000000001,"; do
	check "--time $bad refused" bash -c "! '$CSTRACE' report --time '$bad' '$TMP/tc.data' >/dev/null 2>&1"
done

# the timeline says which clock it used, and its times are perf's
"$CSTRACE" report --format=perfetto -o "$TMP/t.json" "$TMP/tc.data" || fail "perfetto"
check "the timeline names perf's clock" grep -q "perf's clock (TIME_CONV)" "$TMP/t.json"
check "its slices start at perf's time (1234.5 s)" python3 -c '
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") in ("B", "X")]
ts = [e["ts"] for e in ev]
sys.exit(not ts or not all(1234.5e6 <= t < 1235e6 for t in ts))' "$TMP/t.json"

# perf itself reads the file with the record put in (Debian's perf 6.1 keeps the
# kernel's time for ETM samples; its lines but for the time are unchanged)
if command -v perf >/dev/null && perf version >/dev/null 2>&1; then
	perf script -i "$TMP/raw.data" --itrace=b -F ip,addr >"$TMP/p.raw" 2>/dev/null
	perf script -i "$TMP/tc.data" --itrace=b -F ip,addr >"$TMP/p.tc" 2>/dev/null
	check "perf reads the file with TIME_CONV as before" \
		bash -c "[ -s '$TMP/p.tc' ] && cmp -s '$TMP/p.raw' '$TMP/p.tc'"
	# perf's lines: without a clock for the trace, perf 6.1's time (the latest
	# AUX record's), byte for byte; with one, the trace's times converted
	perf script -i "$TMP/raw.data" -F time,ip >"$TMP/p.time" 2>/dev/null
	"$CSTRACE" script -F time,ip "$TMP/raw.data" >"$TMP/c.time" 2>/dev/null
	check "-F time,ip without a clock: perf's lines, byte for byte" \
		bash -c "[ -s '$TMP/p.time' ] && cmp -s '$TMP/p.time' '$TMP/c.time'"
	"$CSTRACE" script -F time,ip "$TMP/tc.data" | awk '{print $1}' | sort -u >"$TMP/c.tc_time"
	awk '{print $1}' "$TMP/tc_us.txt" | sort -u >"$TMP/own.tc_time"
	check "-F time,ip with TIME_CONV: the trace's converted times, as cstrace's lines" \
		bash -c "[ \$(wc -l <'$TMP/c.tc_time') -gt 10 ] && comm -23 '$TMP/c.tc_time' '$TMP/own.tc_time' | grep -c . | grep -qx 0"
fi
finish
