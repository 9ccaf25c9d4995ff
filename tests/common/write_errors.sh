#!/usr/bin/env bash
# Every verb that prints to standard output says so in one line and exits 1 when
# the write fails (/dev/full): decode once blamed "Inappropriate ioctl for device",
# dump said nothing, and `boards list`, `aux` and --help exited 0.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
[ -w /dev/full ] || skip "/dev/full missing"
sample=$CSTRACE_SOURCE_DIR/testdata/sample/a64-loop
runs=("decode $sample" "decode --format=jsonl $sample" "dump $sample" "script $sample"
      "script --raw $sample" "report $sample" "report --format=json $sample"
      "report --format=folded $sample" "boards list" "--help" "decode --help")
prog=$CSTRACE_BUILD_DIR/testdata/aarch64/loop
if [ -x "$prog" ] && command -v qemu-aarch64 >/dev/null &&
   "$CSTRACE" synth --arch aarch64 --out perf -o "$TMP/loop.data" -- "$prog" >/dev/null 2>&1; then
	runs+=("aux $TMP/loop.data" "script $TMP/loop.data")
fi
for r in "${runs[@]}"; do
	# shellcheck disable=SC2086 # each run is a verb and its arguments
	"$CSTRACE" $r > /dev/full 2> "$TMP/err"
	check "$r > /dev/full: exit 1" [ $? -eq 1 ]
	check "$r > /dev/full: one line with the real reason: $(head -c 200 "$TMP/err")" \
		bash -c '[ "$(wc -l < "$0")" -eq 1 ] && grep -q "standard output: write failed: No space left on device" "$0"' "$TMP/err"
done
finish
