# cstrace record running its command for real: Ctrl-C, a full disk and SIGUSR2 with
# --sideband-only (perf_event_open, without cs_etm), and sysfs mode against a fixture
# tree (the command runs under ptrace). QEMU user mode emulates neither system call:
# host-only.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"

"$CSTRACE" boards fixture stm32mp157 "$TMP/stm" >/dev/null || fail "boards fixture stm32mp157"

# Ctrl-C: the file is finished, the summary says it, the command does not linger.
"$CSTRACE" record --sideband-only -o "$TMP/int.data" -- sleep 60 2>"$TMP/int.err" &
pid=$!
child=""
for _ in $(seq 1 200); do
  child=$(pgrep -P "$pid" -x sleep || true)
  [ -n "$child" ] && break
  sleep 0.05
done
check "the command started" test -n "$child"
kill -INT "$pid"
wait "$pid"; rc=$?
check "interrupted record exits 0" test "$rc" -eq 0
check "summary says interrupted" grep -q "interrupted" "$TMP/int.err"
check "the command is gone" bash -c "! kill -0 $child 2>/dev/null"
if command -v perf >/dev/null; then
  check "perf reads the interrupted file" bash -c "perf report -D -i '$TMP/int.data' 2>&1 | grep -q 'PERF_RECORD_COMM exec: sleep'"
fi
check "aux on a file without AUX" bash -c '"$0" aux "$1" | grep -q "no AUX records"' "$CSTRACE" "$TMP/int.data"

# The file system "fills" (ulimit -f): writing stops early, the file is finished,
# the summary counts what was not written and the exit status says it.
bash -c 'ulimit -f 64; exec "$0" record --sideband-only -o "$1" -- ls /' \
  "$CSTRACE" "$TMP/full.data" >/dev/null 2>"$TMP/full.err"
check "out of space exits 1" test $? -eq 1
check "summary: ran out of space" grep -q "ran out of space: the file is finished" "$TMP/full.err"
check "summary: bytes not written" grep -q "LOST: [1-9][0-9]* byte(s) not written" "$TMP/full.err"
if command -v perf >/dev/null; then
  check "perf reads the cut-short file" bash -c "perf report -D -i '$TMP/full.data' 2>&1 | grep -q 'TOTAL events'"
fi

# SIGUSR2 takes a snapshot and recording goes on (the exec after it is recorded).
"$CSTRACE" record --sideband-only --snapshot -o "$TMP/usr2.data" -- \
  sh -c 'kill -USR2 $PPID; sleep 0.3; exec ls / >/dev/null' 2>"$TMP/usr2.err"
check "SIGUSR2 record exits 0" test $? -eq 0
if command -v perf >/dev/null; then
  check "recording went on after SIGUSR2" bash -c "perf script -D -i '$TMP/usr2.data' 2>&1 | grep -q 'PERF_RECORD_COMM exec: ls'"
fi

# Sysfs mode against the STM32MP157 fixture; a regular file stands for /dev/tmc_etf0.
# With the shared TC2 capture the buffer holds real ETMv3.5 trace of ETM_0 (ID 0x10).
FX=$TMP/stm
mkdir -p "$FX/dev"
etm=$FX/sys/bus/coresight/devices/etm0
if [ -f "$SHARED/opencsd/TC2/cstrace.bin" ]; then
  head -c 65536 "$SHARED/opencsd/TC2/cstrace.bin" >"$FX/dev/tmc_etf0"
  echo 0x10001860 >"$etm/mgmt/etmcr"
  echo 0x10 >"$etm/traceid"
  real=1
else
  head -c 4096 /dev/urandom >"$FX/dev/tmc_etf0"
  real=0
fi
idr=$(cat "$etm/mgmt/etmidr")
# --root promises a dry run: no write below it, no command run, no output
echo 7 >"$FX/sys/bus/coresight/devices/tmc_etf0/enable_sink"
"$CSTRACE" record --sysfs --sink tmc_etf0 --root "$FX" -C 0 -o "$TMP/dry" -- \
  touch "$TMP/ran" 2>"$TMP/dry.err"
check "sysfs dry run succeeds" test $? -eq 0
check "dry run: the command did not run" test ! -e "$TMP/ran"
check "dry run: no output" test ! -e "$TMP/dry"
check "dry run: the sink was not written" grep -qx 7 "$FX/sys/bus/coresight/devices/tmc_etf0/enable_sink"
check "dry run: says so" grep -q "dry run" "$TMP/dry.err"
check "dry run: names the sink write" grep -q "would write 1 to $FX/sys/bus/coresight/devices/tmc_etf0/enable_sink" "$TMP/dry.err"
check "dry run: the source with its ETMIDR" grep -qi "etm0/enable_source: cpu 0, .*ETMIDR $(printf '0x%08x' "$idr")" "$TMP/dry.err"
check "dry run: --run only with --sysfs" bash -c "! '$CSTRACE' record --run --root '$FX' -- /bin/true 2>/dev/null"
# --run: the writes below the fixture and the command, for real
"$CSTRACE" record --sysfs --run --sink tmc_etf0 --root "$FX" -C 0 -o "$TMP/snap" -- /bin/true 2>"$TMP/sysfs.err"
check "sysfs record succeeds" test $? -eq 0 || cat "$TMP/sysfs.err" >&2
for f in snapshot.ini trace.ini cpu_0.ini etm_0.ini tmc_etf0.bin; do
  check "snapshot has $f" test -s "$TMP/snap/$f"
done
check "buffer copied from /dev/tmc_etf0" cmp -s "$FX/dev/tmc_etf0" "$TMP/snap/tmc_etf0.bin"
check "ETMIDR from sysfs" grep -qi "ETMIDR(0x079)=$(printf '0x%08X' "$idr")" "$TMP/snap/etm_0.ini"
check "sink disabled again" grep -qx 0 "$FX/sys/bus/coresight/devices/tmc_etf0/enable_sink"
check "source disabled again" grep -qx 0 "$etm/enable_source"
check "etm1 left alone (-C 0)" test ! -e "$TMP/snap/etm_1.ini"
check "memory image of the command" bash -c "ls '$TMP/snap'/mem_*.bin >/dev/null && grep -q '^\[dump1\]' '$TMP/snap/cpu_0.ini'"
check "summary names the snapshot" grep -q "wrote snapshot" "$TMP/sysfs.err"
if [ "$real" = 1 ] && command -v trc_pkt_lister >/dev/null; then
  (cd "$TMP" && trc_pkt_lister -ss_dir "$TMP/snap" -id 0x10 >"$TMP/tpl.txt" 2>&1) # its log file lands in $TMP
  check "trc_pkt_lister syncs on the snapshot" grep -q "ID:10;.*A_SYNC" "$TMP/tpl.txt"
  "$CSTRACE" dump "$TMP/snap" >"$TMP/dump.txt" 2>&1
  check "cstrace dump finds the same sync points" bash -c "diff <(grep -o 'Idx:[0-9]*; ID:10;.*A_SYNC' '$TMP/tpl.txt' | cut -d';' -f1) <(grep -o 'Idx:[0-9]*; ID:10;.*A_SYNC' '$TMP/dump.txt' | cut -d';' -f1) && grep -q A_SYNC '$TMP/dump.txt'"
  check "cstrace decode reads the snapshot" bash -c '"$0" decode "$1" | grep -q "timestamp"' "$CSTRACE" "$TMP/snap"
fi
# --filter in sysfs mode, run for real: a program built here without PIE, so that
# nm's addresses are where it runs; its entries placed on its mapping at the exec,
# the comparators of the pair and of the point written, reset again after the run
if command -v cc >/dev/null && printf '%s\n' '__attribute__((noinline)) int work(int x) { return x * 3 + 1; }' \
	'int main(int c, char **v) { int s = 0; for (int i = 0; i < 5; i++) s += work(i + c); return s == 1; }' \
	> "$TMP/hp.c" && cc -O1 -no-pie -o "$TMP/hp" "$TMP/hp.c" 2>/dev/null; then
  work=$(nm "$TMP/hp" | awk '$3 == "work" {print $1}'); wsize=$(nm -S "$TMP/hp" | awk '$4 == "work" {print $2}')
  main=$(nm "$TMP/hp" | awk '$3 == "main" {print $1}')
  for f in addr_idx addr_range addr_stop reset; do : > "$etm/$f"; done
  "$CSTRACE" record --sysfs --run --sink tmc_etf0 --root "$FX" -C 0 -o "$TMP/fsnap" \
    --filter "filter work @ $TMP/hp, stop main @ $TMP/hp" -- "$TMP/hp" 2>"$TMP/f.err"
  check "sysfs --filter: recorded" test $? -eq 0 || cat "$TMP/f.err" >&2
  check "sysfs --filter: the range at work's address, its size long" grep -qx "$(printf '0x%x 0x%x' $((0x$work)) $((0x$work + 0x$wsize)))" "$etm/addr_range"
  check "sysfs --filter: the stop point at main, in comparator 2" \
    bash -c 'grep -qx "$(printf "0x%x" $((0x$1)))" "$0/addr_stop" && grep -qx 0x2 "$0/addr_idx"' "$etm" "$main"
  check "sysfs --filter: reset after the run" grep -qx 1 "$etm/reset"
  check "sysfs --filter: says where each entry went" grep -q "filter work @ $TMP/hp: file offset 0x[0-9a-f]* at $(printf '0x%x' $((0x$work)))" "$TMP/f.err"
  # --trigger on the real kernel's uprobe PMU (root or CAP_PERFMON): work runs five
  # times, so the fifth entry fires and a sixth never comes
  "$CSTRACE" record --sideband-only --snapshot --trigger work --trigger-count 5 -o "$TMP/t5.data" \
    -- "$TMP/hp" 2>"$TMP/t5.err"
  if grep -q "uprobe events need root\|needs the uprobe PMU" "$TMP/t5.err"; then
    echo "no uprobe events here: --trigger's live check skipped"
  else
    check "trigger: the fifth entry fires, at work's address" grep -q "the trigger fired (work @ $TMP/hp, entry 5) at $(printf '0x%x' $((0x$work)))" "$TMP/t5.err"
    "$CSTRACE" record --sideband-only --snapshot --trigger work@"$TMP/hp" --trigger-count 6 \
      -o "$TMP/t6.data" -- "$TMP/hp" 2>"$TMP/t6.err"
    check "trigger: no sixth entry, said so" grep -q "the trigger (work @ $TMP/hp, entry 6) never fired" "$TMP/t6.err"
  fi
else
  echo "no host C compiler: sysfs --filter and --trigger live checks skipped"
fi
"$CSTRACE" record --sysfs --run --sink tmc_nope --root "$FX" -o "$TMP/snap2" -- /bin/true 2>"$TMP/err"
check "sysfs: unknown sink lists sinks" grep -q "the sinks there are: tmc_etf0" "$TMP/err"
"$CSTRACE" record --sysfs --root "$FX" -- /bin/true 2>"$TMP/err"
check "sysfs needs --sink" grep -q "needs --sink" "$TMP/err"

finish
