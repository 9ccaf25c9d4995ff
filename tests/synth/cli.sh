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
pass
finish
