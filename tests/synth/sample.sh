#!/usr/bin/env bash
# The committed sample testdata/sample/a64-loop must decode to what its program executes
# under QEMU today (load addresses are fixed, so the instruction stream is too).
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
prog=$1
sample=$CSTRACE_SOURCE_DIR/testdata/sample/a64-loop
[ -d "$sample" ] || { fail "no sample at $sample"; finish; }
[ -x "$prog" ] || skip "a64_loop not built"
command -v qemu-aarch64 >/dev/null || skip "qemu-aarch64 not installed"
check "synth the sample's program" "$CSTRACE" synth --arch aarch64 -o "$TMP/snap" --truth "$TMP/truth" -- "$prog"
check "decode the committed sample" sh -c '"$0" decode "$1" --format=jsonl > "$2"' "$CSTRACE" "$sample" "$TMP/dec.jsonl"
check "the sample decodes to QEMU's run" python3 "$here/compare.py" --truth "$TMP/truth" --jsonl "$TMP/dec.jsonl"
finish
