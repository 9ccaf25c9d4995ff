# Doctor against fixture trees of every board profile: healthy trees pass, and each
# injected fault gives its own problem line, the fix, and exit status 1.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
BOARDS="$CSTRACE_SOURCE_DIR/boards"
export CSTRACE_BOARDS_DIR="$BOARDS"

# doctor_on BOARD [fixture options...]: write a fixture, run doctor on it; sets $out, $rc.
doctor_on() {
	local board=$1; shift
	local dir="$TMP/$board-$RANDOM$RANDOM"
	"$CSTRACE" boards fixture "$board" "$dir" "$@" || { fail "fixture $board $*"; out=; rc=99; return; }
	out=$("$CSTRACE" doctor --root "$dir" 2>&1)
	rc=$?
}
# has LINE-REGEX: the doctor output has a line matching it.
has() { printf '%s\n' "$out" | grep -Eq -- "$1"; }
expect() { # expect DESC RC REGEX...: exit status and lines
	local d=$1 want=$2; shift 2
	checks=$((checks + 1))
	if [ "$rc" != "$want" ]; then fail "$d: exit $rc, expected $want"; printf '%s\n' "$out" >&2; fi
	for re in "$@"; do
		checks=$((checks + 1))
		has "$re" || { fail "$d: no line matching '$re'"; printf '%s\n' "$out" >&2; }
	done
}
expect_not() { local d=$1; shift; for re in "$@"; do checks=$((checks + 1)); if has "$re"; then fail "$d: unexpected '$re'"; fi; done; }

for board in stm32mp157 juno-r0 juno-r1 juno-r2; do
	case $board in
	stm32mp157) sink=tmc_etf0; sink_base=0x50092000; etmdrv=ETM3X; first_etm=etm0; idle=keep
		want_arch=ETMv3.5; seen_arch=ETMv4.0 ;;
	*) sink=tmc_etr0; sink_base=0x20070000; etmdrv=ETM4X; first_etm=etm_little0; idle=lose
		want_arch=ETMv4.0; seen_arch=ETMv3.5 ;;
	esac

	doctor_on $board
	expect "$board healthy" 0 "^ok +board +$board:" "^ok +kconfig" "^ok +pmu" "^ok +device +topology" \
		"^ok +sink .*use perf record -e cs_etm/@$sink/" "^ok +etm " "^ok +paranoid" \
		"^ok +cpuidle" "^ok +debugfs" "all checks passed"
	expect_not "$board healthy" "^problem"

	# Names follow probe order; verdicts must not.
	doctor_on $board --reverse-probe
	expect "$board reverse probe" 0 "^ok +sink .*@$sink/"
	expect_not "$board reverse probe" "^problem"

	doctor_on $board --fault missing-sink
	expect "$board missing-sink" 1 "^problem +sink .*@ $sink_base: the board's perf sink is missing" \
		"^problem +device .*@ $sink_base: not on /sys/bus/coresight" "fix: make the TMC at $sink_base probe" \
		"^ok +etm " "^ok +paranoid"
	[ $board = stm32mp157 ] && expect "$board missing-sink" 1 "until then perf can only use: nothing"
	[ $board = juno-r1 ] && expect "$board missing-sink" 1 "until then perf can only use: tmc_etf0 tmc_etf1"

	doctor_on $board --fault wrong-etm-arch
	expect "$board wrong-etm-arch" 1 "^problem +etm +$first_etm @ .*: etm0 is $seen_arch: .*unreadable" \
		"fix: the unit at 0x[0-9a-f]+ shows itself as $seen_arch, not $want_arch" "^ok +sink"
	# only the first ETM is wrong
	checks=$((checks + 1))
	[ "$(printf '%s\n' "$out" | grep -c '^problem')" = 1 ] || fail "$board wrong-etm-arch: more than one problem"

	doctor_on $board --fault paranoid
	expect "$board paranoid" 1 "^problem +paranoid +perf_event_paranoid: 3" \
		"fix: sudo sysctl -w kernel.perf_event_paranoid=-1"

	doctor_on $board --fault cpuidle-on
	if [ $idle = lose ]; then
		expect "$board cpuidle-on" 1 "^problem +cpuidle .*12 deep idle states enabled" \
			"fix: for f in /sys/devices/system/cpu/cpu\*/cpuidle/state\[1-9\]\*/disable"
	else
		# The A7 keeps its ETM state in idle: enabled idle states are fine there.
		expect "$board cpuidle-on" 0 "^ok +cpuidle .*keeps ETM state in idle"
	fi

	doctor_on $board --fault kconfig-etm-off
	expect "$board kconfig-etm-off" 1 "^problem +kconfig .*1 option not set: CONFIG_CORESIGHT_SOURCE_$etmdrv" \
		"fix: scripts/config -e CORESIGHT_SOURCE_$etmdrv"

	doctor_on $board --fault no-kconfig
	expect "$board no-kconfig" 1 "^problem +kconfig .*cannot see the kernel configuration"

	# A kernel built without CoreSight: the cause once, its consequences under it
	# (no PMU, no device probed), not a problem per device
	doctor_on $board --fault no-coresight
	expect "$board no-coresight" 1 "^problem +kconfig .*CONFIG_CORESIGHT," "fix: scripts/config -e CORESIGHT " \
		"^  so +pmu +cs_etm PMU: no " "^  so +device +topology: ([0-9]+) of the profile's \\1 devices did not probe" \
		"^1 problem found \\(2 more follow from it, listed under it\\)"
	expect_not "$board no-coresight" "^problem +(device|pmu|etm)" "^skip +etm .*@"
	checks=$((checks + 1))
	[ "$(printf '%s\n' "$out" | wc -l)" -le 14 ] || fail "$board no-coresight: $(printf '%s\n' "$out" | wc -l) lines"

	doctor_on $board --fault no-debugfs
	expect "$board no-debugfs" 1 "^problem +debugfs" "fix: sudo mount -t debugfs none /sys/kernel/debug"

	doctor_on $board --fault no-pmu
	expect "$board no-pmu" 1 "^problem +pmu " "^problem +device "

	# Several faults at once: each reported.
	doctor_on $board --fault paranoid --fault no-debugfs --fault missing-sink
	expect "$board three faults" 1 "^problem +paranoid" "^problem +debugfs" "^problem +sink"
done

# A Juno with the DT property that makes the driver save ETM state needs no idle fix.
dir="$TMP/juno-dtprop"
"$CSTRACE" boards fixture juno-r1 "$dir" --fault cpuidle-on
for u in "$dir"/sys/devices/platform/2[23]?40000.etm/uevent; do
	node=$(sed -n 's/^OF_FULLNAME=//p' "$u")
	: > "$dir/proc/device-tree$node/arm,coresight-loses-context-with-cpu"
done
out=$("$CSTRACE" doctor --root "$dir" 2>&1); rc=$?
expect "juno dt property" 0 "^ok +cpuidle .*arm,coresight-loses-context-with-cpu"

# The ETF's size comes from the device (mgmt/rsz, in words), not from the profile.
dir="$TMP/mp1-rsz"
"$CSTRACE" boards fixture stm32mp157 "$dir"
out=$("$CSTRACE" doctor --root "$dir" 2>&1); rc=$?
expect "stm32mp157 etf size" 0 "^ok +sink .*is tmc_etf0 \(4 KiB of trace RAM\)"
echo 0x800 > "$dir/sys/devices/platform/soc/50092000.etf/tmc_etf0/mgmt/rsz"
out=$("$CSTRACE" doctor --root "$dir" 2>&1); rc=$?
expect "stm32mp157 etf size from rsz" 0 "^ok +sink .*is tmc_etf0 \(8 KiB of trace RAM\)"

# An ETM bound to another logical CPU than the profile says (a different boot CPU):
# capture is fine, decode --board would mislabel, so it is a problem with that fix.
dir="$TMP/juno-cpus"
"$CSTRACE" boards fixture juno-r1 "$dir"
echo 3 > "$dir/sys/devices/platform/23040000.etm/etm0/cpu"
out=$("$CSTRACE" doctor --root "$dir" 2>&1); rc=$?
expect "juno etm cpu" 1 "^problem +etm +etm_little0 @ 0x23040000 .*etm0 traces cpu3, the profile says cpu0" \
	"fix: logical CPU numbers follow the boot CPU"

# --board overrides detection: a Juno tree checked as an STM32MP157 fails on what differs.
dir="$TMP/juno-as-stm"
"$CSTRACE" boards fixture juno-r1 "$dir"
out=$("$CSTRACE" doctor --root "$dir" --board stm32mp157 2>&1); rc=$?
# (its ETMs need the ETMv3 driver the Juno kernel lacks: they follow from that)
expect "juno checked as stm32mp157" 1 "^ok +board +stm32mp157: .*given with --board" \
	"^  so +device +topology: .*drivers not built: .*etm0" "^problem +kconfig .*CONFIG_CORESIGHT_SOURCE_ETM3X"

finish
