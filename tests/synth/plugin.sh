#!/usr/bin/env bash
# synth TCG plugin: its ground truth must equal the exec log's, instruction for
# instruction, and its snapshot must decode exactly; threads that shared a vCPU are
# said, as without it; a program that dies of a signal keeps its trace's end.
# Usage: plugin.sh PROG... (the threads and crash programs are taken from the
# first one's directory)
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
command -v qemu-aarch64 >/dev/null || skip "qemu-aarch64 not installed"
command -v python3 >/dev/null || skip "python3 not installed"
for prog in "$@"; do
	[ -x "$prog" ] || skip "test program $prog not built"
	n=$(basename "$prog")
	check "$n: synth with the plugin" "$CSTRACE" synth --arch aarch64 --plugin -o "$TMP/p-$n" \
		--truth "$TMP/p-$n.truth" -- "$prog"
	check "$n: synth with the exec log" "$CSTRACE" synth --arch aarch64 -o "$TMP/e-$n" \
		--truth "$TMP/e-$n.truth" -- "$prog"
	check "$n: plugin and exec log agree" cmp "$TMP/p-$n.truth" "$TMP/e-$n.truth"
	check "$n: decode" sh -c '"$0" decode "$1" --format=jsonl > "$2"' "$CSTRACE" "$TMP/p-$n" "$TMP/p-$n.jsonl"
	check "$n: decode equals the plugin's truth" python3 "$here/compare.py" \
		--truth "$TMP/p-$n.truth" --jsonl "$TMP/p-$n.jsonl"
done
# a crash after more than the plugin holds (its stream several MiB): the FIFO
# brought most of it, the tail file the rest, and together they are the exec
# log's run, instruction for instruction
crash=$(dirname "$1")/crash
if [ -x "$crash" ]; then
	check "crash after 100000 calls: synth with the plugin" sh -c \
		'"$0" synth --arch aarch64 --plugin -o "$1" --truth "$2" -- "$3" 100000 2> "$4"' \
		"$CSTRACE" "$TMP/p-crash-long" "$TMP/p-crash-long.truth" "$crash" "$TMP/p-crash-long.err"
	check "crash after 100000 calls: the end came from the tail: $(head -c 300 "$TMP/p-crash-long.err")" \
		grep -q "came from its tail file" "$TMP/p-crash-long.err"
	# the same way as the plugin's run: the environment shapes the instructions
	check "crash after 100000 calls: synth with the exec log" sh -c \
		'"$0" synth --arch aarch64 -o "$1" --truth "$2" -- "$3" 100000 2> "$4"' \
		"$CSTRACE" "$TMP/e-crash-long" "$TMP/e-crash-long.truth" "$crash" "$TMP/e-crash-long.err"
	check "crash after 100000 calls: plugin and exec log agree" \
		cmp "$TMP/p-crash-long.truth" "$TMP/e-crash-long.truth"
fi
# threads made one after another share a vCPU: said with the plugin too
threads=$(dirname "$1")/threads
if [ -x "$threads" ]; then
	check "threads one after another: synth with the plugin" sh -c \
		'"$0" synth --arch aarch64 --plugin -o "$1" -- "$2" 3000 serial 2> "$3"' \
		"$CSTRACE" "$TMP/p-serial" "$threads" "$TMP/p-serial.err"
	check "threads one after another: the plugin run says they shared a vCPU: $(head -c 300 "$TMP/p-serial.err")" \
		grep -q "^cstrace: warning: 4 threads ran on 2 vCPUs: " "$TMP/p-serial.err"
fi
finish
