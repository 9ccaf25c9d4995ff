# What the tests of trace a perf.data's own records disown share (sourced after
# tests/lib.sh and tests/decode/threads_lib.sh): a synth run (QEMU's ground truth)
# written as perf.data, the faults disown.py makes of it, and the checks each
# mutated file must pass.

mut() { python3 "$CSTRACE_SOURCE_DIR/tests/perfdata/disown.py" "$@"; }
# one KEY: KEY's value in what disown.py said ($TMP/said)
one() { sed -n "s/.*$1=\\([^ ]*\\).*/\\1/p" "$TMP/said"; }
have_perf=false
command -v perf >/dev/null && perf version >/dev/null 2>&1 && have_perf=true
pcount() { perf script -i "$1" --itrace=i1i -F ip 2> /dev/null | wc -l; }

# ORDER FILE: the instruction lines of FILE (script --raw --insn), kept in
# FILE.ORDER.insn, its messages in .err and exit status in .rc
insns() {
	"$CSTRACE" script --raw --insn --order "$1" "$2" > "$2.$1.insn" 2> "$2.$1.err"
	echo $? > "$2.$1.rc"
}

# disowned_base ARCH PROG [synth options...]: $TMP/base.data, a perf.data of a QEMU
# run that loses no trace, which decodes to QEMU's $qemu instructions and says
# nothing; $records AUX records
disowned_base() {
	local arch=$1 prog=$2 order n
	shift 2
	check "synth snapshot (QEMU's ground truth)" "$CSTRACE" synth --arch "$arch" -o "$TMP/snap" \
		--truth "$TMP/truth" --keep-log "$TMP/qemu.log" -- "$prog"
	check "synth perf.data from the same run" sh -c \
		'c=$0 a=$1 t=$2 p=$3; shift 3; "$c" synth --arch "$a" --out perf -o "$t/base.data" --from-log "$t/qemu.log" "$@" -- "$p" 2> "$t/stats"' \
		"$CSTRACE" "$arch" "$TMP" "$prog" "$@"
	cat "$TMP/stats"
	qemu=$(cat "$TMP"/truth "$TMP"/truth.[0-9]* 2>/dev/null | wc -l)
	records=$(sed -n 's/.* \([0-9]*\) AUX records.*/\1/p' "$TMP/stats")
	check "no trace lost: the decode can be QEMU's" grep -q " 0 lost" "$TMP/stats"
	for order in file time; do
		insns $order "$TMP/base.data"
		n=$(wc -l < "$TMP/base.data.$order.insn")
		check "unmutated, $order order: QEMU's $qemu instructions ($n)" [ "$n" -eq "$qemu" ]
		check "unmutated, $order order: nothing said: $(head -c 300 "$TMP/base.data.$order.err")" \
			test ! -s "$TMP/base.data.$order.err"
	done
}

# disowned NAME FILE BASE PERF WARNING: FILE decodes to BASE's instructions (the
# same lines in time order, the same set of lines in file order, where bytes no
# record covers come at the end), exit 0, saying WARNING (a grep -E pattern) and
# nothing else, on 1 to 4 threads alike; perf's count is lower (PERF "<") or
# higher (">") than BASE's
disowned() {
	local name=$1 f=$2 base=$3 cmp=$4 warning=$5 order n p
	for order in time file; do
		insns $order "$f"
		n=$(wc -l < "$f.$order.insn")
		check "$name, $order order: exit 0" [ "$(cat "$f.$order.rc")" -eq 0 ]
		check "$name, $order order: the unmutated file's $(wc -l < "$base.$order.insn") instructions ($n)" \
			[ "$n" -eq "$(wc -l < "$base.$order.insn")" ]
		check "$name, $order order: warned: $(head -c 400 "$f.$order.err")" \
			grep -Eq "^cstrace: warning: $f: $warning\$" "$f.$order.err"
		check "$name, $order order: nothing else said" [ "$(wc -l < "$f.$order.err")" -eq 1 ]
	done
	check "$name, time order: the same lines in the same order" \
		cmp -s "$f.time.insn" "$base.time.insn"
	check "$name, file order: the same lines, none twice" \
		cmp -s <(sort "$f.file.insn") <(sort "$base.file.insn")
	if $have_perf; then
		p=$(pcount "$f")
		check "$name: perf 6.1 counts $p, $cmp the $(pcount "$base") it counts unmutated" \
			[ "$p" "$([ "$cmp" = "<" ] && echo -lt || echo -gt)" "$(pcount "$base")" ]
	fi
	same "$name" "$f" "decode --format=none --stats,script --raw --insn,report,report -g" "256" --order time
	same "$name" "$f" "decode --format=jsonl,script" "256" --order file
}
