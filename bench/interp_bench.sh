#!/usr/bin/env bash
# A realistic workload against the peers, in the same run: Lua 5.4 (Debian's source
# package, upstream tarball, built here with -O2 -g, static) running
# bench/src/interp.lua under `cstrace synth`, as perf.data (ETMv4, one AUX buffer)
# for cstrace and Linux perf, and as a snapshot directory for trc_pkt_lister.
# Prints one table row per command: wall and CPU time, instructions per second,
# the ratio against its peer, peak RSS. Output goes to /dev/null.
#
# usage: bench/interp_bench.sh [path/to/cstrace] [runs] [rounds] [parts]
#   rounds: interp.lua rounds (2: about 92 M instructions, 18 MB of trace)
#   parts: of "a64 timed arm" (all by default). timed: bench/src/luamt.c, four
#   interpreters on four threads (1 round of 500 words per round asked, about
#   100 M instructions at 2), recorded per CPU with timestamps
# Needs a deb-src entry for `apt-get source` (added when missing, as root) and the
# aarch64 cross compiler; the armhf build (Thumb-2, ETMv3.5) runs when
# arm-linux-gnueabihf-gcc is installed, on 300 words a round instead of 2000
# (QEMU's exec log is its ground truth there, 30x slower than the aarch64 plugin).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
CSTRACE=${1:-$here/build/cstrace}
RUNS=${2:-1}
ROUNDS=${3:-2}
PARTS=${4:-a64 timed arm} # a64: one CPU; timed: four CPUs in time order; arm: armhf
# sources, binaries and traces are kept here between runs (remove it to remake them)
work=${CSTRACE_BENCH_DIR:-$(dirname "$CSTRACE")/bench/interp}
command -v qemu-aarch64 >/dev/null || { echo "SKIP: qemu-aarch64 not installed"; exit 0; }
command -v aarch64-linux-gnu-gcc >/dev/null || { echo "SKIP: aarch64-linux-gnu-gcc not installed"; exit 0; }
have_perf=0
command -v perf >/dev/null && perf version >/dev/null 2>&1 && have_perf=1
mkdir -p "$work"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export HOME=$tmp # no ~/.debug cache on either side

# --- the interpreter, from Debian's source package
src=$(ls -d "$work"/lua-5.4*/src 2>/dev/null | head -1 || true)
if [ -z "$src" ]; then
	if ! grep -rqs '^Types: deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		[ "$(id -u)" = 0 ] || { echo "SKIP: no deb-src entry, and not root to add one"; exit 0; }
		cat >/etc/apt/sources.list.d/cstrace-bench-src.sources <<-EOF
		Types: deb-src
		URIs: http://deb.debian.org/debian
		Suites: bookworm bookworm-updates
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		EOF
		apt-get update -qq
	fi
	(cd "$work" && apt-get source -qq --download-only lua5.4 >/dev/null 2>&1) ||
		{ echo "SKIP: apt-get source lua5.4 failed"; exit 0; }
	# the upstream tarball: Debian's patches expect the package's own build
	tar xzf "$(ls "$work"/lua5.4_*.orig.tar.gz | head -1)" -C "$work"
	src=$(ls -d "$work"/lua-5.4*/src | head -1)
fi
build_lua() { # compiler output
	[ -x "$2" ] && return 0
	local srcs=() f
	for f in "$src"/*.c; do [ "${f##*/}" = luac.c ] || srcs+=("$f"); done
	"$1" -O2 -g -DLUA_USE_POSIX -static -o "$2" "${srcs[@]}" -lm
}
build_lua aarch64-linux-gnu-gcc "$work/lua-a64"
# four interpreters on four threads (bench/src/luamt.c): a per-CPU recording
build_luamt() { # compiler output
	[ -x "$2" ] && return 0
	local srcs=() f
	for f in "$src"/*.c; do
		case "${f##*/}" in lua.c | luac.c) ;; *) srcs+=("$f") ;; esac
	done
	"$1" -O2 -g -DLUA_USE_POSIX -static -I"$src" -o "$2" "$here/bench/src/luamt.c" \
		"${srcs[@]}" -lm -lpthread
}
build_luamt aarch64-linux-gnu-gcc "$work/luamt-a64"

# --- the traces: perf.data for cstrace and perf, a snapshot for trc_pkt_lister
synth() { # arch lua "rounds size" out kind [synth options]
	local arch=$1 lua=$2 args=$3 out=$4 kind=$5
	shift 5
	[ -e "$out" ] && return 0
	# shellcheck disable=SC2086 # args is "rounds size"
	"$CSTRACE" synth --arch "$arch" "$@" --out "$kind" --buffer-size 512M -o "$out" \
		-- "$lua" "$here/bench/src/interp.lua" $args >/dev/null 2>"$out.err" ||
		{ cat "$out.err" >&2; exit 1; }
}

# measure out-array command...: best wall of RUNS runs; "wall cpu rss_kib"
measure() {
	local best="" cpu="" rss="" w u s r
	for _ in $(seq "$RUNS"); do
		/usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" ||
			{ echo "bench: '$*' failed: $(tail -1 "$tmp/err")" >&2; echo "fail fail fail"; return; }
		read -r w u s r <"$tmp/time"
		if [ -z "$best" ] || awk "BEGIN{exit !($w < $best)}"; then
			best=$w cpu=$(awk "BEGIN{print $u + $s}") rss=$r
		fi
	done
	echo "$best $cpu $rss"
}

row() { # label insns peer_wall wall cpu rss
	awk -v l="$1" -v n="$2" -v p="$3" -v w="$4" -v c="$5" -v r="$6" 'BEGIN {
		ratio = (p == "-") ? "-" : sprintf("%.2fx", p / w)
		printf "| %-52s | %8.2f s | %8.2f s | %7.2f M/s | %7s | %7.1f MiB |\n",
			l, w, c, n / w / 1e6, ratio, r / 1024 }'
}

# table_head DATA TITLE: sets insns (what synth said of DATA) and prints the title
# with the trace's size, then the table's head
table_head() {
	local mb
	insns=$(sed -n 's/^cstrace: synth: \([0-9]*\) instructions.*/\1/p' "$1.err")
	mb=$(awk -v b="$(sed -n 's/.* \([0-9]*\) trace bytes.*/\1/p' "$1.err")" 'BEGIN{printf "%.1f", b / 1048576}')
	echo
	echo "$2: $insns instructions, $mb MB of trace"
	echo
	echo "| command | wall | CPU | instructions/s | vs peer | peak RSS |"
	echo "|---|---|---|---|---|---|"
}

bench_arch() { # arch lua "rounds size" [synth options]
	local arch=$1 lua=$2 args=$3 data snap insns w c r pw w1
	shift 3
	data=$work/$arch-${args// /-}.data snap=$work/$arch-${args// /-}.snap
	synth "$arch" "$lua" "$args" "$data" perf "$@"
	synth "$arch" "$lua" "$args" "$snap" snapshot "$@"
	table_head "$data" "$arch: lua interp.lua $args"
	if [ "$have_perf" = 1 ]; then
		read -r pw c r < <(measure perf report -i "$data" --itrace=i1i --stdio)
		row "perf report --itrace=i1i --stdio (peer)" "$insns" - "$pw" "$c" "$r"
		read -r w c r < <(measure "$CSTRACE" report "$data")
		row "cstrace report" "$insns" "$pw" "$w" "$c" "$r"
		# each verb's default lines against the peer's (#39's goals)
		read -r pw c r < <(measure perf script -i "$data" --itrace=b)
		row "perf script --itrace=b (peer)" "$insns" - "$pw" "$c" "$r"
		read -r w c r < <(measure "$CSTRACE" script "$data")
		row "cstrace script (symbolized branches)" "$insns" "$pw" "$w" "$c" "$r"
		read -r w c r < <(measure "$CSTRACE" script --raw "$data")
		row "cstrace script --raw (perf's samples)" "$insns" "$pw" "$w" "$c" "$r"
		# the same samples and fields on both sides: perf's lines, byte for byte
		# (without --itrace, cstrace script -F adds perf's default instruction
		# samples, one every 100,000 instructions)
		read -r pw c r < <(measure perf script -i "$data" --itrace=b -F ip,addr,sym,dso)
		row "perf script --itrace=b -F ip,addr,sym,dso (peer)" "$insns" - "$pw" "$c" "$r"
		read -r w c r < <(measure "$CSTRACE" script --itrace=b -F ip,addr,sym,dso "$data")
		row "cstrace script --itrace=b -F ip,addr,sym,dso (the peer's lines)" "$insns" "$pw" "$w" "$c" "$r"
		# every instruction: perf's --itrace=i1i lines against script --insn's
		read -r pw c r < <(measure perf script -i "$data" --itrace=i1i)
		row "perf script --itrace=i1i (peer)" "$insns" - "$pw" "$c" "$r"
		read -r w c r < <(measure "$CSTRACE" script --insn "$data")
		row "cstrace script --insn" "$insns" "$pw" "$w" "$c" "$r"
		# one thread: the decoder and the symbolizing on the caller's thread
		read -r pw c r < <(measure perf script -i "$data" --itrace=b)
		row "perf script --itrace=b (peer, again)" "$insns" - "$pw" "$c" "$r"
		read -r w c r < <(measure "$CSTRACE" script --threads 1 "$data")
		row "cstrace script --threads 1" "$insns" "$pw" "$w" "$c" "$r"
	fi
	# one thread, then the CPUs online: the scaling of a single-CPU recording,
	# with each ETMv4 decoder (the default, auto, is cstrace's on every thread)
	read -r w1 c r < <(measure "$CSTRACE" decode --format=none --threads 1 --decoder=opencsd "$data")
	row "cstrace decode --format=none --threads 1 --decoder=opencsd" "$insns" - "$w1" "$c" "$r"
	read -r w c r < <(measure "$CSTRACE" decode --format=none --decoder=opencsd "$data")
	row "  the same, $(nproc) threads" "$insns" "$w1" "$w" "$c" "$r"
	read -r w1 c r < <(measure "$CSTRACE" decode --format=none --threads 1 --decoder=cstrace "$data")
	row "cstrace decode --format=none --threads 1 --decoder=cstrace" "$insns" - "$w1" "$c" "$r"
	read -r w c r < <(measure "$CSTRACE" decode --format=none --decoder=cstrace "$data")
	row "  the same, $(nproc) threads" "$insns" "$w1" "$w" "$c" "$r"
	# the call graph, whose call model follows each stretch on its worker
	read -r w1 c r < <(measure "$CSTRACE" report -g --threads 1 "$data")
	row "cstrace report -g --threads 1" "$insns" - "$w1" "$c" "$r"
	read -r w c r < <(measure "$CSTRACE" report -g "$data")
	row "  the same, $(nproc) threads" "$insns" "$w1" "$w" "$c" "$r"
	if command -v trc_pkt_lister >/dev/null; then
		read -r pw c r < <(measure trc_pkt_lister -ss_dir "$snap" -decode -logfilename /dev/null)
		row "trc_pkt_lister -decode (peer, snapshot)" "$insns" - "$pw" "$c" "$r"
		read -r w c r < <(measure "$CSTRACE" decode --format=elements "$snap")
		row "cstrace decode --format=elements (snapshot)" "$insns" "$pw" "$w" "$c" "$r"
		read -r w c r < <(measure "$CSTRACE" decode --format=none "$snap")
		row "cstrace decode --format=none (snapshot)" "$insns" "$pw" "$w" "$c" "$r"
	fi
}

# A per-CPU recording with timestamps (four guest threads, four CPUs), merged in
# time order: symbolizing verbs with one thread and with the CPUs online.
bench_timed() { # "rounds size"
	local args=$1 data insns w c r pw
	data=$work/aarch64-4cpu-${args// /-}.data
	synth aarch64 "$work/luamt-a64" "$args" "$data" perf --plugin --timestamps
	table_head "$data" "aarch64, 4 CPUs in time order: luamt interp.lua $args"
	if [ "$have_perf" = 1 ]; then
		read -r pw c r < <(measure perf report -i "$data" --itrace=i1i --stdio)
		row "perf report --itrace=i1i --stdio (peer)" "$insns" - "$pw" "$c" "$r"
		read -r w c r < <(measure "$CSTRACE" report --threads 1 "$data")
		row "cstrace report --threads 1" "$insns" "$pw" "$w" "$c" "$r"
		read -r w c r < <(measure "$CSTRACE" report "$data")
		row "cstrace report ($(nproc) threads)" "$insns" "$pw" "$w" "$c" "$r"
		read -r pw c r < <(measure perf script -i "$data" --itrace=b -F ip,addr,sym)
		row "perf script --itrace=b -F ip,addr,sym (peer)" "$insns" - "$pw" "$c" "$r"
		read -r w c r < <(measure "$CSTRACE" script --threads 1 "$data")
		row "cstrace script --threads 1" "$insns" "$pw" "$w" "$c" "$r"
		read -r w c r < <(measure "$CSTRACE" script "$data")
		row "cstrace script ($(nproc) threads)" "$insns" "$pw" "$w" "$c" "$r"
	fi
	read -r pw c r < <(measure "$CSTRACE" decode --format=none --threads 1 "$data")
	row "cstrace decode --format=none --threads 1" "$insns" - "$pw" "$c" "$r"
	read -r w c r < <(measure "$CSTRACE" decode --format=none "$data")
	row "cstrace decode --format=none ($(nproc) threads)" "$insns" "$pw" "$w" "$c" "$r"
	busiest_table "$data"
}

# busiest_table DATA: how the CPU of script and report on DATA is shared among
# their threads (bench/busiest.py), on two threads and on four: with as many
# cores as threads, the busiest thread bounds the run. Best of RUNS.
busiest_table() {
	local t verb b c best
	echo
	echo "Per thread: the busiest thread's CPU, which bounds a run on as many cores as threads"
	echo
	echo "| command | busiest thread | all threads | share |"
	echo "|---|---|---|---|"
	for t in 2 4; do
		for verb in report "script -F ip,addr,sym"; do
			best=""
			for _ in $(seq "$RUNS"); do
				# shellcheck disable=SC2086 # verb holds its options
				read -r b c _ < <(python3 "$here/bench/busiest.py" "$CSTRACE" $verb \
					--threads $t "$1")
				if [ -z "$best" ] || awk "BEGIN{exit !($b < ${best%% *})}"; then
					best="$b $c"
				fi
			done
			awk -v l="cstrace $verb --threads $t" -v b="${best%% *}" -v c="${best#* }" \
				'BEGIN { printf "| %-44s | %6.2f s | %6.2f s | %3.0f%% |\n", l, b, c, 100 * b / c }'
		done
	done
}

echo "interp_bench: $(nproc) CPUs, $(date -u +%Y-%m-%d), best wall of $RUNS run(s)"
case " $PARTS " in *" a64 "*) bench_arch aarch64 "$work/lua-a64" "$ROUNDS 2000" --plugin ;; esac
case " $PARTS " in *" timed "*) bench_timed "1 $((ROUNDS * 500))" ;; esac
if [[ " $PARTS " = *" arm "* ]] && command -v arm-linux-gnueabihf-gcc >/dev/null &&
	command -v qemu-arm >/dev/null; then
	build_lua arm-linux-gnueabihf-gcc "$work/lua-armhf"
	bench_arch arm "$work/lua-armhf" "$ROUNDS 300"
fi
