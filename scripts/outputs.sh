#!/usr/bin/env bash
# Record what every verb prints on a fixed set of inputs, so that a refactoring can be
# shown to change nothing: run it before and after, then `diff -r BEFORE AFTER`.
#
#   scripts/outputs.sh inputs IN             make the synthesized inputs once (QEMU runs)
#   scripts/outputs.sh run CSTRACE IN OUT     every verb on the shared captures, the bundled
#                                             sample and IN's traces; one file per command
#
# The inputs must be made once and reused: a second QEMU run is a different run.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
shared=${CSTRACE_SHARED_TESTDATA:-$here/../shared/testdata}

make_inputs() {
	local in=$1 progs=$here/build/testdata
	[ -d "$progs/aarch64" ] || { echo "build the test programs first (cmake --build build)" >&2; exit 1; }
	mkdir -p "$in/bin"
	cp -r "$progs/aarch64" "$progs/arm" "$in/bin/"
	local arch prog
	for arch in aarch64 arm; do
		for prog in recurse longjmp signal fptr shlib threads; do
			local p=$in/bin/$arch/$prog o=$in/$arch-$prog
			"$here/build/cstrace" synth --arch "$arch" -o "$o.snap" --keep-log "$o.log" -- "$p" ||
				{ echo "synth $arch $prog failed" >&2; exit 1; }
			"$here/build/cstrace" synth --arch "$arch" --out perf -o "$o.perf" \
				--from-log "$o.log" -- "$p" 2>/dev/null
			"$here/build/cstrace" synth --arch "$arch" --out perf --timestamps -o "$o.ts.perf" \
				--from-log "$o.log" -- "$p" 2>/dev/null
			"$here/build/cstrace" synth --arch "$arch" --out perf --sink etf --buffer-size 4K \
				--sync-period 512 -o "$o.etf.perf" --from-log "$o.log" -- "$p" 2>/dev/null
		done
	done
	rm -f "$in"/*.log
	# the test programs' debug info names this checkout's sources: a run from another
	# checkout replaces that path too
	echo "$here" > "$in/srcdir"
}

# run NAME CMD...: stdout, stderr and exit status of one command, under NAME
run1() {
	local name=$1; shift
	"$@" > "$out/$name.out" 2> "$out/$name.err" < /dev/null
	echo "exit $?" >> "$out/$name.err"
	# temporary directories and the checkout's own path differ from run to run
	sed -i -e "s#$tmp#TMP#g" -e "s#$here#SRC#g" -e "s#$insrc#SRC#g" "$out/$name.err" "$out/$name.out"
}

run_all() {
	local c=$1 in=$2
	out=$3
	insrc=$(cat "$in/srcdir" 2>/dev/null || echo "$here")
	mkdir -p "$out"
	tmp=$(mktemp -d)
	local snaps=() s n
	for s in "$shared"/opencsd/*/; do
		[ -f "$s/snapshot.ini" ] && snaps+=("${s%/}")
	done
	snaps+=("$here/testdata/sample/a64-loop")
	for s in "${snaps[@]}" "$in"/*.snap; do
		n=$(basename "$s")
		run1 "$n.decode" "$c" decode "$s"
		run1 "$n.elements" "$c" decode --format=elements --buffer all "$s"
		run1 "$n.jsonl" "$c" decode --format=jsonl "$s"
		run1 "$n.stats" "$c" decode --format=none --stats "$s"
		run1 "$n.dump" "$c" dump --buffer all "$s"
		run1 "$n.script" "$c" script "$s"
		run1 "$n.script-insn" "$c" script --insn --srcline "$s"
		run1 "$n.call-trace" "$c" script --call-trace "$s"
		run1 "$n.report" "$c" report --sort dso,sym,srcline "$s"
		run1 "$n.report-json" "$c" report --format=json "$s"
	done
	for s in "$in"/*.perf; do
		n=$(basename "$s")
		run1 "$n.decode" "$c" decode "$s"
		run1 "$n.jsonl" "$c" decode --format=jsonl "$s"
		run1 "$n.decode-file" "$c" decode --order file "$s"
		run1 "$n.dump" "$c" dump "$s"
		run1 "$n.script" "$c" script "$s"
		run1 "$n.script-F" "$c" script -F comm,pid,tid,cpu,time,ip,sym,symoff,dso,addr,insncnt "$s"
		run1 "$n.script-insn" "$c" script --insn --srcline "$s"
		run1 "$n.call-trace" "$c" script --call-trace "$s"
		run1 "$n.raw" "$c" script --raw "$s"
		run1 "$n.raw-insn" "$c" script --raw --insn "$s"
		run1 "$n.report" "$c" report --sort dso,sym,srcline "$s"
		run1 "$n.report-csv" "$c" report --format=csv "$s"
		run1 "$n.aux" "$c" aux --aux-size 4M "$s"
		run1 "$n.aux-svg" "$c" aux --timeline "$tmp/aux.svg" "$s"
		cp "$tmp/aux.svg" "$out/$n.aux.svg" 2>/dev/null
	done
	# raw dumps with sources on the command line and from a board profile
	local juno=$shared/opencsd/juno_r1_1
	if [ -d "$juno" ]; then
		run1 raw-etmv4.decode "$c" decode --etmv4 trcidr0=0x28000ea1,trcidr1=0x4100f403,trcidr2=0x00000488,trcconfigr=0x1,traceid=0x10,core=Cortex-A57 "$juno/cstrace.bin"
		run1 raw-board.decode "$c" decode --board juno-r1 "$juno/cstrace.bin"
		run1 raw-board.dump "$c" dump --board juno-r1 "$juno/cstrace.bin"
	fi
	local b
	run1 boards-list "$c" boards list
	for b in juno-r0 juno-r1 juno-r2 stm32mp157; do
		run1 "boards-show-$b" "$c" boards show "$b"
		run1 "boards-sources-$b" "$c" boards sources "$b" --stm
		rm -rf "$tmp/fx"
		run1 "boards-fixture-$b" "$c" boards fixture "$b" "$tmp/fx"
		run1 "doctor-$b" "$c" doctor --board "$b" --root "$tmp/fx"
		run1 "doctor-auto-$b" "$c" doctor --root "$tmp/fx"
		rm -rf "$tmp/fx"
		run1 "doctor-fault-$b" sh -c '"$0" boards fixture "$1" "$2" --fault wrong-etm-arch --fault paranoid >/dev/null && "$0" doctor --board "$1" --root "$2"' "$c" "$b" "$tmp/fx"
		rm -rf "$tmp/fx"
	done
	rm -rf "$tmp"
}

case "${1:-}" in
inputs) make_inputs "$2" ;;
run) run_all "$2" "$3" "$4" ;;
*) sed -n '2,9p' "$0" >&2; exit 2 ;;
esac
