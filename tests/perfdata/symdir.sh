#!/usr/bin/env bash
# --symdir DIR: recorded binaries found in a directory tree by build-id (whatever
# their name or place there), or by base name when the recording has none; the
# file with code is used for decoding, a debug file can give the symbols; a file of
# the right name but another build-id is not used; links and FIFOs in the tree are
# not followed or opened.
# usage: symdir.sh PROG (an AArch64 test program with a build-id)
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
prog=$1
[ -x "$prog" ] || skip "test program $prog not built"
command -v qemu-aarch64 >/dev/null || skip "qemu-aarch64 not installed"
OBJCOPY=aarch64-linux-gnu-objcopy
command -v $OBJCOPY >/dev/null || skip "$OBJCOPY not installed"
rep() { "$CSTRACE" report --format=csv "$@"; }

mkdir -p "$TMP/rec" "$TMP/sd/a/b" "$TMP/nobid"
cp "$prog" "$TMP/rec/recurse"
"$CSTRACE" synth --arch aarch64 --out perf -o "$TMP/p.data" -- "$TMP/rec/recurse" \
	>/dev/null 2>"$TMP/synth.err" || { cat "$TMP/synth.err" >&2; fail "synth"; finish; }
rep "$TMP/p.data" >"$TMP/base.csv" 2>/dev/null || fail "report with the binary in place"
"$CSTRACE" script "$TMP/p.data" >"$TMP/base.script" 2>/dev/null || fail "script with the binary in place"
check "the baseline names recurse's functions" grep -q '"fib"' "$TMP/base.csv"

# the binary moves away and is renamed, deep in a tree
mv "$TMP/rec/recurse" "$TMP/sd/a/b/renamed.elf"
check "without --symdir nothing decodes" bash -c "! '$CSTRACE' report '$TMP/p.data' >/dev/null 2>&1"
rep --symdir "$TMP/sd" "$TMP/p.data" >"$TMP/sd.csv" 2>"$TMP/sd.err"
check "--symdir: found by build-id, the same profile" cmp -s "$TMP/base.csv" "$TMP/sd.csv"
"$CSTRACE" script --symdir "$TMP/sd" "$TMP/p.data" >"$TMP/sd.script" 2>/dev/null
check "--symdir: the same branches" cmp -s "$TMP/base.script" "$TMP/sd.script"
check "--symdir: decode too" bash -c "'$CSTRACE' decode --symdir '$TMP/sd' '$TMP/p.data' | grep -q ' range '"

# a stripped binary (code) and its debug file (symbols), both with the build-id
$OBJCOPY --only-keep-debug "$TMP/sd/a/b/renamed.elf" "$TMP/sd/a/recurse.debug"
$OBJCOPY --strip-all "$TMP/sd/a/b/renamed.elf" "$TMP/sd/a/b/stripped"
rm "$TMP/sd/a/b/renamed.elf"
rep --symdir "$TMP/sd" "$TMP/p.data" >"$TMP/split.csv" 2>/dev/null
check "stripped binary + debug file: code from one, symbols from the other" \
	cmp -s "$TMP/base.csv" "$TMP/split.csv"
rm "$TMP/sd/a/b/stripped"
check "a debug file alone gives no code" bash -c "! '$CSTRACE' report --symdir '$TMP/sd' '$TMP/p.data' >/dev/null 2>&1"

# the recorded name, another build-id: not used
cp "$(dirname "$prog")/loop" "$TMP/sd/recurse"
check "a wrong build-id under the recorded name is not used" \
	bash -c "! '$CSTRACE' report --symdir '$TMP/sd' '$TMP/p.data' >/dev/null 2>&1"

# a recording without build-ids: found by base name
$OBJCOPY --remove-section .note.gnu.build-id "$prog" "$TMP/nobid/recurse"
chmod +x "$TMP/nobid/recurse"
"$CSTRACE" synth --arch aarch64 --out perf -o "$TMP/n.data" -- "$TMP/nobid/recurse" \
	>/dev/null 2>&1 || fail "synth of the program without a build-id"
rep "$TMP/n.data" >"$TMP/nbase.csv" 2>/dev/null
rm -rf "$TMP/sd2"; mkdir -p "$TMP/sd2/x"
mv "$TMP/nobid/recurse" "$TMP/sd2/x/recurse"
rep --symdir "$TMP/sd2" "$TMP/n.data" >"$TMP/n.csv" 2>/dev/null
check "no build-id recorded: found by name" bash -c "[ -s '$TMP/n.csv' ] && cmp -s '$TMP/nbase.csv' '$TMP/n.csv'"

# hostile trees: a link loop and a FIFO neither hang nor get opened
ln -s .. "$TMP/sd2/x/loop"
mkfifo "$TMP/sd2/x/fifo"
check "a link loop and a FIFO in the tree: no hang" \
	timeout 30 bash -c "'$CSTRACE' report --symdir '$TMP/sd2' '$TMP/n.data' >/dev/null 2>&1"
"$CSTRACE" report --symdir "$TMP/none" "$TMP/p.data" >/dev/null 2>"$TMP/err"
check "a missing --symdir is refused" test $? -ne 0
check "in one line naming it" bash -c "[ \$(wc -l <'$TMP/err') = 1 ] && grep -q -- '--symdir $TMP/none' '$TMP/err'"
finish
