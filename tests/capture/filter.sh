#!/usr/bin/env bash
# record --filter and --trigger on boards fixtures (dry runs): the exact string
# PERF_EVENT_IOC_SET_FILTER would get, with each symbol's file offset computed by
# binutils' readelf (tests/elfsym.py) rather than by cstrace; the uprobe's attributes;
# the ETM's comparator limits refused with a message naming them; sysfs mode's
# comparator writes. Usage: filter.sh DIR (the cross-built test programs)
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
progs=$1
A64=$progs/aarch64/fptr A32=$progs/arm/fptr LIB=$progs/aarch64/libsynthlib.so
for p in "$A64" "$A32" "$LIB"; do
	[ -f "$p" ] || skip "test program $p not built (cross compiler missing?)"
done
command -v readelf >/dev/null && command -v python3 >/dev/null || skip "readelf, python3 needed"
sym() { python3 "$CSTRACE_SOURCE_DIR/tests/elfsym.py" "$@"; }
abs() { readlink -f "$1"; }

"$CSTRACE" boards fixture juno-r1 "$TMP/juno" >/dev/null || fail "boards fixture juno-r1"
"$CSTRACE" boards fixture stm32mp157 "$TMP/stm" >/dev/null || fail "boards fixture stm32mp157"
dry() { "$CSTRACE" record --root "$@" 2>&1; }

# file-backed ranges: offsets in the file, the absolute path after @
read -r o1 s1 _ < <(sym "$A64" cmp)
read -r o2 s2 _ < <(sym "$A64" op_add)
want="filter 0x$o1/0x$s1@$(abs "$A64"),filter 0x$o2/0x$s2@$(abs "$A64")"
dry "$TMP/juno" --filter "filter cmp @ $A64, filter op_add@$A64" -- "$A64" > "$TMP/out"
check "A64: the string sent: $want" grep -qxF "cstrace: address filter, sent with PERF_EVENT_IOC_SET_FILTER to every cs_etm event: $want" "$TMP/out"
check "A64: every ETM's TRCIDR4 in the plan" grep -q "cpu 5: ETMv4 .*TRCIDR4 0x11170004" "$TMP/out"
# a shared library: its offsets, however it is mapped; ADDR/SIZE passes through
read -r o3 s3 _ < <(sym "$LIB" synth_lib_mix)
dry "$TMP/juno" --filter "filter synth_lib_mix @ $LIB filter 0x400/0x20 @ $LIB" -- "$A64" > "$TMP/out"
check "shared library: file offset and size" grep -qF "event: filter 0x$o3/0x$s3@$(abs "$LIB"),filter 0x400/0x20@$(abs "$LIB")" "$TMP/out"
# T32: the Thumb bit of the symbol's value is not part of the offset
read -r o4 _ _ < <(sym "$A32" main)
dry "$TMP/stm" -e cs_etm/@tmc_etf0/ --filter "start main @ $A32,stop 0xc0008000" -- "$A32" > "$TMP/out"
check "A32: start at main's offset (Thumb bit clear), stop at a kernel address" grep -qF "event: start 0x$o4@$(abs "$A32"),stop 0xc0008000" "$TMP/out"
check "A32: ETMCCR in the plan" grep -q "cpu 0: ETMv3 .*ETMCCR 0x8d014024 ETMCR" "$TMP/out"
# kernel symbols from the root's kallsyms, sized up to the next symbol
mkdir -p "$TMP/juno/proc"
printf 'ffff800008010000 T _text\nffff800008310a00 T do_sys_openat2\nffff800008310c40 t do_sys_open\n' > "$TMP/juno/proc/kallsyms"
dry "$TMP/juno" --filter "filter do_sys_openat2" -- "$A64" > "$TMP/out"
check "kernel symbol from kallsyms" grep -qF "event: filter 0xffff800008310a00/0x240" "$TMP/out"

# the trigger: a uprobe at the function's file offset, sampled at the Nth entry
read -r o5 _ _ < <(sym "$A64" op_mul)
dry "$TMP/juno" --snapshot=8K --trigger op_mul --trigger-count 3 -- "$A64" > "$TMP/out"
check "trigger: the uprobe's attributes" grep -qF "trigger: uprobe PMU type $(cat "$TMP/juno/sys/bus/event_source/devices/uprobe/type"), config 0x0 (function entry), config1 \"$(abs "$A64")\", config2 0x$o5 (file offset of op_mul), sample_period 3 (entry 3 fires), wakeup_events 1" "$TMP/out"
dry "$TMP/juno" --snapshot --trigger "synth_lib_mix@$LIB" -- "$A64" > "$TMP/out"
check "trigger in a library named by @FILE" grep -qF "config1 \"$(abs "$LIB")\", config2 0x$o3" "$TMP/out"
"$CSTRACE" record --root "$TMP/juno" --trigger op_mul -- "$A64" 2> "$TMP/err"
check "trigger without --snapshot: usage error" test $? -eq 2
check "...saying it needs --snapshot" grep -q "needs --snapshot" "$TMP/err"

# limits: one comparator pair refuses a second range, naming the register
printf '0x11170001\n' > "$TMP/juno/sys/bus/event_source/devices/cs_etm/cpu2/trcidr/trcidr4"
"$CSTRACE" record --root "$TMP/juno" --filter "filter cmp @ $A64, filter op_add @ $A64" -- "$A64" 2> "$TMP/err"
check "two ranges, one pair: refused" test $? -eq 1
check "...naming the ETM, its TRCIDR4 and its pairs" grep -q "do not fit cpu 2's ETM (TRCIDR4 0x11170001): it has 1 address comparator pair(s)" "$TMP/err"
dry "$TMP/juno" --filter "start cmp @ $A64, stop op_add @ $A64" -- "$A64" > "$TMP/out"
check "two points fit one pair" grep -q "event: start 0x$o1@.*,stop 0x$o2@" "$TMP/out"
printf '0x8d014021\n' > "$TMP/stm/sys/bus/event_source/devices/cs_etm/cpu1/mgmt/etmccr"
"$CSTRACE" record --root "$TMP/stm" -e cs_etm/@tmc_etf0/ --filter "start main @ $A32, stop cmp @ $A32, stop 0x10" -- "$A32" 2> "$TMP/err"
check "ETMv3: three points, one pair: refused naming ETMCCR" grep -q "cpu 1's ETM (ETMCCR 0x8d014021): it has 1 address comparator pair(s)" "$TMP/err"
"$CSTRACE" record --root "$TMP/stm" -e cs_etm/@tmc_etf0/ --filter "filter main @ $A32, stop cmp @ $A32" -- "$A32" 2> "$TMP/err"
check "ranges with start/stop: the perf driver's rule" grep -q "takes one kind or the other" "$TMP/err"
"$CSTRACE" record --root "$TMP/stm" -e cs_etm/@tmc_etf0/ --filter "$(for i in 1 2 3 4 5 6 7 8 9; do printf 'stop %d,' $i; done)" -- "$A32" 2> "$TMP/err"
check "nine entries: more than the driver takes" grep -q "takes at most 8 (ETM_ADDR_CMP_MAX)" "$TMP/err"

# bad input: one line naming what and where
bad() { local f=$1 m=$2; shift 2
	"$CSTRACE" record --root "$TMP/juno" "$@" --filter "$f" -- "$A64" 2> "$TMP/err"; [ $? -eq 1 ] && [ "$(wc -l < "$TMP/err")" -eq 1 ] && grep -q "$m" "$TMP/err"; }
check "unknown symbol" bad "filter nosuch @ $A64" "$(abs "$A64") has no function 'nosuch'"
check "missing file" bad "filter main @ /nonexistent/prog" "/nonexistent/prog: No such file"
check "tracestop is not cs_etm's" bad "tracestop main @ $A64" "tracestop (a range where tracing stops) is not for cs_etm"
check "a start with a size" bad "start main/4 @ $A64" "start takes one address, not a range"
check "a range without a size" bad "filter 0x400 @ $A64" "needs a size"
check "no trace to filter" bad "filter main @ $A64" "there is none with --sideband-only" --sideband-only
check "not a file of code" bad "filter main @ $CSTRACE_SOURCE_DIR/README.md" "is not an ELF file"
check "no such kernel symbol" bad "filter nosuch_kfn" "has no kernel function 'nosuch_kfn'"

# sysfs mode: the comparator files of every source, in order, after a reset
"$CSTRACE" record --sysfs --sink tmc_etf0 --root "$TMP/stm" -C 0 \
	--filter "filter cmp @ $A32, filter main @ $A32" -- "$A32" > "$TMP/out" 2>&1
read -r _ s6 v6 < <(sym "$A32" cmp)
read -r _ s7 v7 < <(sym "$A32" main)
d="$TMP/stm/sys/bus/coresight/devices/etm0"
printf 'would write %s to %s/%s\n' 1 "$d" reset 0x0 "$d" addr_idx \
	"$(printf '0x%x 0x%x' $((0x$v6)) $((0x$v6 + 0x$s6)))" "$d" addr_range 0x2 "$d" addr_idx \
	"$(printf '0x%x 0x%x' $((0x$v7)) $((0x$v7 + 0x$s7)))" "$d" addr_range > "$TMP/want"
check "sysfs dry run: reset, addr_idx, addr_range per pair (ETMv3)" \
	diff "$TMP/want" <(sed -n 's/^cstrace: \(would write .* to .*etm0\/\(reset\|addr_.*\)\)$/\1/p' "$TMP/out")
check "sysfs dry run: the comparators before the source is enabled" \
	bash -c 'grep -n "" "$0" | grep -m1 "etm0/addr_range" | cut -d: -f1 | { read a; b=$(grep -n "etm0/enable_source" "$0" | cut -d: -f1); [ "$a" -lt "$b" ]; }' "$TMP/out"
"$CSTRACE" record --sysfs --sink tmc_etr0 --root "$TMP/juno" -C 1 --filter "start op_mul @ $A64" -- "$A64" > "$TMP/out" 2>&1
check "sysfs dry run ETMv4: addr_instdatatype instr, addr_start" grep -qzF "would write 0x0 to $TMP/juno/sys/bus/coresight/devices/etm1/addr_idx
cstrace: would write instr to $TMP/juno/sys/bus/coresight/devices/etm1/addr_instdatatype
cstrace: would write 0x$(sym "$A64" op_mul | cut -d' ' -f3) to $TMP/juno/sys/bus/coresight/devices/etm1/addr_start" "$TMP/out"
finish
