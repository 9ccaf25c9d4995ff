#!/usr/bin/env bash
# A callback that stops a time-ordered run with 1 (tests/perfdata/time_stop.c):
# two queues, decoded on this thread and ahead on threads; the run must end with
# that value at once, at the first sideband record or the first element.
# usage: time_stop.sh PERF_GEN A64_ELF TIME_STOP
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
GEN=$1 A64=$2 STOP=$3
[ -f "$A64" ] || skip "no AArch64 test program (aarch64-linux-gnu-gcc missing at build time)"
"$GEN" --elf "$A64" --out "$TMP/one.data" --proto etmv4 --no-ctxid --dump "$TMP/one.bin" \
	> /dev/null || { fail "perf_gen --dump"; finish; }
load=$(readelf -lW "$A64" | awk '$1 == "LOAD" && $NF == "0x10000" {print $3 ":" $2 ":" $5; exit}')
"$GEN" --out "$TMP/queues.data" --raw --traceid 0x10 --trcconfigr 0xc1 \
	--trace-file "$TMP/one.bin" --trace-queue 1 --trace-file "$TMP/one.bin" \
	--image "$A64@${load%%:*}:0:${load##*:}" || { fail "perf_gen --trace-queue"; finish; }
for threads in 1 2; do
	for cb in sb elem; do
		out=$("$STOP" "$TMP/queues.data" $threads $cb 2>&1)
		check "$threads thread(s): the $cb callback's stop ends the run: $out" \
			"$STOP" "$TMP/queues.data" $threads $cb
	done
done
finish
