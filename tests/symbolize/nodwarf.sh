#!/usr/bin/env bash
# Profiles and coverage of code without DWARF lines (the repository's sample
# snapshot: memory dumps, no ELF): every format that reads line tables gives its
# empty form, exit 0. The coverage model sorted its empty (NULL) tables with
# qsort(NULL, 0), undefined behaviour that stopped the sanitizer build here; this
# test is labelled hostile so that the sanitizer stage runs it.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
SAMPLE=$CSTRACE_SOURCE_DIR/testdata/sample/a64-loop
for f in lcov coverage html autofdo; do
	"$CSTRACE" report --format=$f -o "$TMP/out.$f" "$SAMPLE" 2>"$TMP/err"
	rc=$?
	check "report --format=$f: exit 0 ($(head -1 "$TMP/err"))" test "$rc" -eq 0
	check "report --format=$f: no sanitizer report" \
		bash -c "! grep -qE 'runtime error|AddressSanitizer' '$TMP/err'"
done
check "lcov: an empty tracefile" grep -qx 'TN:' "$TMP/out.lcov"
check "coverage: no lines" grep -q '^# all: 0 of 0 lines' "$TMP/out.coverage"
check "html: a page" grep -q '</html>' "$TMP/out.html"
finish
