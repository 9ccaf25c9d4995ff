#!/usr/bin/env bash
# cstrace synth's command line: help, usage errors (exit 2), a missing program (exit 1).
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
expect() { # expect STATUS DESC CMD...
	local want=$1 d=$2; shift 2
	"$@" > "$TMP/out" 2> "$TMP/err"
	local got=$?
	checks=$((checks + 1))
	[ "$got" -eq "$want" ] || fail "$d: exit $got, expected $want ($(head -1 "$TMP/err"))"
}
expect 0 "--help" "$CSTRACE" synth --help
grep -q -- "--arch aarch64|arm" "$TMP/out" || fail "--help does not describe --arch"
expect 2 "no arguments" "$CSTRACE" synth
expect 2 "no program" "$CSTRACE" synth --arch aarch64 -o "$TMP/x"
expect 2 "bad arch" "$CSTRACE" synth --arch mips -o "$TMP/x" -- /bin/true
expect 2 "core of the other arch" "$CSTRACE" synth --arch arm --core cortex-a53 -o "$TMP/x" -- /bin/true
expect 2 "bad sink" "$CSTRACE" synth --arch aarch64 --sink tpiu -o "$TMP/x" -- /bin/true
expect 2 "bad size" "$CSTRACE" synth --arch aarch64 --buffer-size 12Q -o "$TMP/x" -- /bin/true
expect 2 "snapshot without perf" "$CSTRACE" synth --arch aarch64 --snapshot -o "$TMP/x" -- /bin/true
expect 1 "a missing log" "$CSTRACE" synth --arch aarch64 --from-log "$TMP/none" -o "$TMP/x" -- /bin/true
grep -q "synth" "$TMP/err" || fail "no message for a missing log"
"$CSTRACE" --help | grep -q "synth" || fail "synth is not in cstrace --help"

# A program that is missing, not executable or a directory: one line naming it, at
# once, with and without the plugin (--plugin waited for ever on the plugin's FIFO;
# the exec log said only "QEMU logged no instructions"). Checked before QEMU starts.
touch "$TMP/noexec"
chmod 644 "$TMP/noexec"
for prog in /no/such/program "$TMP/noexec" "$TMP"; do
	for plugin in "" --plugin; do
		start=$(date +%s)
		timeout 30 "$CSTRACE" synth --arch aarch64 $plugin -o "$TMP/np" -- "$prog" \
			>/dev/null 2>"$TMP/err"
		rc=$?
		checks=$((checks + 3))
		[ "$rc" -eq 1 ] || fail "synth $plugin -- $prog: exit $rc, expected 1"
		[ $(($(date +%s) - start)) -le 5 ] || fail "synth $plugin -- $prog: not at once"
		[ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q "^cstrace: synth: $prog: cannot run it: " "$TMP/err" ||
			fail "synth $plugin -- $prog: not one line naming it: $(head -c 300 "$TMP/err")"
	done
done

# Ctrl-C (SIGINT) or SIGTERM while QEMU runs, through the exec log (arm) and the
# plugin (aarch64): exit 128+signal, QEMU gone at once, no temporary left in
# $TMPDIR, no output. (QEMU kept running and a log of hundreds of MB stayed.)
interrupt() { # arch sig [synth options]
	local arch=$1 sig=$2 q=qemu-aarch64 prog pid rc
	shift 2
	[ "$arch" = arm ] && q=qemu-arm
	prog=$CSTRACE_BUILD_DIR/testdata/$arch/bigloop
	[ -x "$prog" ] && command -v $q >/dev/null || { echo "skip: $arch bigloop or $q missing"; return; }
	rm -rf "$TMP/tmp" "$TMP/int.out"
	mkdir -p "$TMP/tmp"
	# timeout passes the signal on, and ends a synth that would not stop
	TMPDIR=$TMP/tmp timeout 60 "$CSTRACE" synth --arch "$arch" "$@" -o "$TMP/int.out" -- \
		"$prog" 100000000 >/dev/null 2>"$TMP/int.err" &
	pid=$!
	for _ in $(seq 100); do
		pgrep -f "[q]emu.*$TMP/tmp" >/dev/null && break
		sleep 0.1
	done
	sleep 0.5 # QEMU is running and logging
	kill -"$sig" "$pid"
	wait "$pid"
	rc=$?
	check "synth --arch $arch $*, SIG$sig: exit $((128 + $(kill -l "$sig")))" \
		[ $rc -eq $((128 + $(kill -l "$sig"))) ]
	sleep 0.2
	check "synth --arch $arch $*, SIG$sig: QEMU stopped" bash -c '! pgrep -f "[q]emu.*$0" >/dev/null' "$TMP/tmp"
	check "synth --arch $arch $*, SIG$sig: no temporary left" bash -c '[ -z "$(ls -A "$0")" ]' "$TMP/tmp"
	check "synth --arch $arch $*, SIG$sig: no output" [ ! -e "$TMP/int.out" ]
	check "synth --arch $arch $*, SIG$sig: says so" grep -q "synth: interrupted" "$TMP/int.err"
	pkill -KILL -f "[q]emu.*$TMP/tmp" # only when the checks above failed
}
interrupt arm INT
interrupt aarch64 INT --plugin
interrupt aarch64 TERM --out perf
pass
finish
