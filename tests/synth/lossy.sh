#!/usr/bin/env bash
# synth lossy sink: a small ETF keeps only the newest bytes; the decode must be a
# suffix of QEMU's run that starts after a gap, never a wrong instruction.
# Usage: lossy.sh ARCH PROG SINK-OPTIONS...
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
arch=$1; prog=$2; shift 2
need_synth "$arch" "$prog"

check "synth runs" sh -c 'c=$0 a=$1 t=$2; shift 2; "$c" synth --arch "$a" -o "$t/snap" --truth "$t/truth" "$@" 2> "$t/stats"' \
	"$CSTRACE" "$arch" "$TMP" "$@" -- "$prog"
cat "$TMP/stats"
lost=$(sed -n 's/.* \([0-9]*\) lost.*/\1/p' "$TMP/stats")
[ "${lost:-0}" -gt 0 ] || fail "the sink lost nothing: the test would prove nothing"
check "decode runs" sh -c '"$0" decode "$1" --format=jsonl > "$2"' "$CSTRACE" "$TMP/snap" "$TMP/dec.jsonl"
head -1 "$TMP/dec.jsonl" | grep -q '"no_sync"' || fail "the decode does not start with a gap"
check "decode is a suffix of QEMU's run" python3 "$here/compare.py" --mode suffix \
	--truth "$TMP/truth" --jsonl "$TMP/dec.jsonl" --snapshot "$TMP/snap"
finish
