# Sourced by the synth tests of long runs (long.sh, threads.sh), after tests/lib.sh:
# synth_long_run ARCH PROG COUNT runs PROG COUNT under QEMU through `cstrace synth`,
# the snapshot in $TMP/snap, QEMU's executed instructions in $TMP/truth, QEMU's log
# in $TMP/qemu.log (for another output of the very run: synth --from-log) and
# synth's totals in $TMP/stats; it skips the test where PROG, QEMU or python3 is
# missing.
synth_long_run() {
	local arch=$1 prog=$2 count=$3
	need_synth "$arch" "$prog"
	check "synth runs" sh -c '"$0" synth --arch "$1" -o "$2/snap" --truth "$2/truth" --keep-log "$2/qemu.log" -- "$3" "$4" 2> "$2/stats"' \
		"$CSTRACE" "$arch" "$TMP" "$prog" "$count"
}
