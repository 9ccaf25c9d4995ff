#!/usr/bin/env bash
# An output over a file the command found only while decoding: the binary a
# perf.data's mapping names, read for its code and its symbols, at its recorded
# path or under --symfs. No option named it, so it was not refused when the output
# was opened; it is when the output would be put in place: one line, exit 1, the
# binary as it was, no temporary left.
#   outputs_found.sh PERF_GEN A64_ELF
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
GEN=$1 A64=$2
cp "$A64" "$TMP/prog"
"$GEN" --elf "$TMP/prog" --out "$TMP/t.data" --proto etmv4 --cpu-wide > /dev/null ||
	{ fail "perf_gen"; finish; }
mkdir -p "$TMP/sym$TMP"
cp "$A64" "$TMP/sym$TMP/prog"

# refused DESC TARGET CMD...: exit 1, one error line naming TARGET as an input,
# TARGET unchanged, nothing left beside it
refused() {
	local d=$1 target=$2 before
	shift 2
	before=$(sha256sum < "$target")
	"$@" > /dev/null 2> "$TMP/err"
	local rc=$?
	check "$d: exit 1 (rc $rc)" [ $rc -eq 1 ]
	check "$d: one error saying so: $(grep -v '^cstrace: warning' "$TMP/err" | head -c 300)" \
		sh -c '[ "$(grep -vc "^cstrace: warning" "$1")" -eq 1 ] && grep -q "$2: is the input; refusing to overwrite it" "$1"' \
		_ "$TMP/err" "$target"
	check "$d: the binary as it was" [ "$(sha256sum < "$target")" = "$before" ]
	check "$d: no temporary left" sh -c '! ls "$1" | grep -q "\.tmp\."' _ "$(dirname "$target")"
}
refused "script -o BINARY" "$TMP/prog" "$CSTRACE" script -o "$TMP/prog" "$TMP/t.data"
refused "script --insn -o BINARY" "$TMP/prog" "$CSTRACE" script --insn -o "$TMP/prog" "$TMP/t.data"
refused "report -o BINARY" "$TMP/prog" "$CSTRACE" report -o "$TMP/prog" "$TMP/t.data"
refused "decode -o BINARY" "$TMP/prog" "$CSTRACE" decode -o "$TMP/prog" "$TMP/t.data"
refused "report --symfs -o SYMFS/BINARY" "$TMP/sym$TMP/prog" \
	"$CSTRACE" report --symfs "$TMP/sym" -o "$TMP/sym$TMP/prog" "$TMP/t.data"
# an output elsewhere is written as ever
"$CSTRACE" report -o "$TMP/r.txt" "$TMP/t.data" 2> /dev/null
check "report -o elsewhere: written" test -s "$TMP/r.txt"
finish
