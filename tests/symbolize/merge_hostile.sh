#!/usr/bin/env bash
# cstrace merge on inputs its fuzzer (tests/symbolize/fuzz_merge.c) broke it with:
# empty files and profiles with no records (the sum sorted a NULL table,
# qsort(NULL, 0): undefined behaviour), JSON with no rows (the same), and a line
# that starts with a NUL byte (the format sniffer read before its buffer). Each
# merge exits 0 or 1 with one line naming the file; labelled hostile, so that the
# sanitizer stage, where those were fatal, runs it.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
run() { # DESC FILE...
	local d=$1
	shift
	"$CSTRACE" merge "$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	checks=$((checks + 1))
	if grep -qE 'runtime error|AddressSanitizer' "$TMP/err" || [ "$rc" -gt 1 ]; then
		fail "$d: exit $rc: $(grep -m2 -E 'ERROR|runtime error' "$TMP/err" | tr '\n' ' ')"
	elif [ "$rc" -eq 1 ] && [ "$(wc -l <"$TMP/err")" -ne 1 ]; then
		fail "$d: exit 1 without one line: $(head -c 300 "$TMP/err")"
	fi
}
: >"$TMP/empty"
printf '\n\n' >"$TMP/blank"
printf '0\n0\n0\n// build_id: 0x1\n// /bin/x\n' >"$TMP/none.autofdo"
printf '0\n0\n' >"$TMP/none.profgen"
printf 'TN:\nend_of_record\n' >"$TMP/none.lcov"
printf '{"total_insns": 0, "ranges": 0, "rows": []}\n' >"$TMP/none.json"
printf '\0001 2\n' >"$TMP/nul"
printf '\000' >"$TMP/nul-only"
for fmt in auto folded autofdo profgen lcov json; do
	run "--format=$fmt empty" --format=$fmt "$TMP/empty" "$TMP/empty"
	run "--format=$fmt blank lines" --format=$fmt "$TMP/blank"
	run "--format=$fmt a NUL first" --format=$fmt "$TMP/nul" "$TMP/nul-only"
done
for f in none.autofdo none.profgen none.lcov none.json; do
	run "$f: no records" "$TMP/$f" "$TMP/$f"
done
check "an empty profgen merge: an empty profile" quiet "$CSTRACE" merge -o "$TMP/m" "$TMP/none.profgen"
finish
