# cstrace record / cstrace aux from the command line: the clear failure without cs_etm,
# errors and dry runs against boards fixtures. Recording that runs a command (Ctrl-C,
# a full disk, SIGUSR2, sysfs mode): record_live.sh.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"

# --help of both verbs
check "record --help" bash -c '"$0" record --help | grep -q -- "--snapshot"' "$CSTRACE"
check "aux --help" bash -c '"$0" aux --help | grep -q -- "--timeline"' "$CSTRACE"

# No cs_etm on this machine: the message names the kernel options.
if [ ! -e /sys/bus/event_source/devices/cs_etm ]; then
  "$CSTRACE" record -o "$TMP/x.data" -- /bin/true 2>"$TMP/err"; rc=$?
  check "record without cs_etm fails" test "$rc" -eq 1
  check "message: no cs_etm" grep -q "no cs_etm PMU" "$TMP/err"
  check "message: kernel options" grep -q "CONFIG_CORESIGHT_SOURCE_ETM4X" "$TMP/err"
  check "no file left claiming trace" test ! -s "$TMP/x.data"
fi

if [ ! -e /sys/bus/coresight ]; then
  "$CSTRACE" record --sysfs --sink tmc_etf0 -o "$TMP/none" -- /bin/true 2>"$TMP/err"
  check "sysfs without CoreSight fails" test $? -eq 1
  check "sysfs message names the options" grep -q "no /sys/bus/coresight/devices: .*CONFIG_CORESIGHT" "$TMP/err"
fi

# Fixtures from the boards stage.
"$CSTRACE" boards fixture juno-r1 "$TMP/juno" >/dev/null || fail "boards fixture juno-r1"
"$CSTRACE" boards fixture stm32mp157 "$TMP/stm" >/dev/null || fail "boards fixture stm32mp157"
"$CSTRACE" boards fixture stm32mp157 "$TMP/nopmu" --fault no-pmu >/dev/null || fail "fixture no-pmu"

"$CSTRACE" record --root "$TMP/juno" -e 'cs_etm/@tmc_nope/' -- /bin/true 2>"$TMP/err"
check "unknown sink fails" test $? -eq 1
check "unknown sink lists the sinks" grep -q "sinks here are: tmc_etf0, tmc_etf1, tmc_etr0" "$TMP/err"
"$CSTRACE" record --root "$TMP/juno" -e 'cs_etm/cycacc,turbo/' -- /bin/true 2>"$TMP/err"
check "unknown term lists the terms" grep -q "no term 'turbo'.*cycacc" "$TMP/err"
"$CSTRACE" record --root "$TMP/stm" -e 'cs_etm/@tmc_etf0,contextid/' -- /bin/true 2>"$TMP/err"
check "ETMv3 rejects contextid" grep -q "ETMv3/PTM driver accepts only cycacc, timestamp and retstack" "$TMP/err"
"$CSTRACE" record --root "$TMP/nopmu" -- /bin/true 2>"$TMP/err"
check "no-pmu fixture names the options" grep -q "CONFIG_CORESIGHT_LINK_AND_SINK_TMC" "$TMP/err"
"$CSTRACE" record -m 3 -- /bin/true 2>"$TMP/err"
check "-m must be a power of two" grep -q "power-of-two" "$TMP/err"

# A fixture root means a dry run: the plan, checked against the fixture's own files.
"$CSTRACE" record --root "$TMP/juno" -e 'cs_etm/@tmc_etr0,timestamp,cycacc,retstack/u' -C 0-1 \
  -m 256 -- /bin/true 2>"$TMP/dry.err"
check "dry run exits 0" test $? -eq 0
hash=$(cat "$TMP/juno/sys/bus/event_source/devices/cs_etm/sinks/tmc_etr0")
type=$(cat "$TMP/juno/sys/bus/event_source/devices/cs_etm/type")
check "dry run: type, config, sink hash" grep -q "cs_etm type $type, config 0x30001000, config2 $hash (sink tmc_etr0), user only" "$TMP/dry.err"
check "dry run: two rings of 1 MiB" grep -q "per-CPU, 2 ring(s), AUX 1024 KiB each, normal mode" "$TMP/dry.err"
idr1=$(cat "$TMP/juno/sys/bus/event_source/devices/cs_etm/cpu1/trcidr/trcidr1")
check "dry run: cpu 1 registers and TRCCONFIGR" grep -q "cpu 1: ETMv4 .*TRCIDR1 $(printf '0x%08x' "$idr1") .*TRCCONFIGR 0x00001810 trace ID 0x12" "$TMP/dry.err"
check "dry run writes no file" test ! -e perf.data
"$CSTRACE" record --root "$TMP/stm" -e 'cs_etm/@tmc_etf0,timestamp,cycacc/' --snapshot=64K -- /bin/true 2>"$TMP/dry.err"
check "dry run ETMv3: ETMCR is the config" grep -q "cpu 0: ETMv3 .*ETMCR 0x10001000 trace ID 0x10" "$TMP/dry.err"
check "dry run snapshot size" grep -q "AUX 64 KiB each, snapshot mode" "$TMP/dry.err"

finish
