#!/usr/bin/env bash
# --elf FILE: the binary named is the binary used, on every verb that reads code.
# A perf.data recorded on a device names /data/local/tmp/prog, which is not on this
# host; --elf /abs/path/prog stands for it by its build-id, or by its base name
# when the recording has none, for the code (decode) and the symbols alike; an
# absolute --elf is used as given under --symfs too (never re-rooted below it);
# `decode` takes --elf as `report` and `script` do; a binary of that name but
# another build-id is used as named, with a warning.
# usage: elf_given.sh PERF_GEN A64_ELF A64_MD5_ELF (the same code, another build-id)
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
gen=$1 elf=$2 md5=$3
[ -x "$gen" ] && [ -f "$elf" ] && [ -f "$md5" ] || skip "perf_gen or the test programs not built"

mkdir -p "$TMP/here" "$TMP/symfs/data/local/tmp" "$TMP/other"
cp "$elf" "$TMP/here/prog"
cp "$md5" "$TMP/other/prog"
"$gen" --elf "$elf" --out "$TMP/bid.data" --mmap-name /data/local/tmp/prog --mmap-build-id \
	--expect "$TMP/expected" || { fail "perf_gen with a build-id"; finish; }
"$gen" --elf "$elf" --out "$TMP/nobid.data" --mmap-name /data/local/tmp/prog ||
	fail "perf_gen without a build-id"
"$gen" --elf "$elf" --out "$TMP/renamed.data" --mmap-name /data/local/tmp/app --mmap-build-id ||
	fail "perf_gen under another name"

addresses() { "$CSTRACE" script --raw --insn "$@" 2>"$TMP/err" | awk '{ print $NF }'; }
check "the recorded binary is not on this host: nothing decodes" \
	bash -c "! '$CSTRACE' report '$TMP/bid.data' >/dev/null 2>&1"
addresses --elf "$TMP/here/prog" "$TMP/bid.data" >"$TMP/got"
check "--elf by build-id: every instruction ($(head -c 200 "$TMP/err"))" cmp -s "$TMP/expected" "$TMP/got"
addresses --elf "$TMP/here/prog" "$TMP/renamed.data" >"$TMP/got"
check "--elf by build-id, whatever the recorded name" cmp -s "$TMP/expected" "$TMP/got"
addresses --elf "$TMP/here/prog" "$TMP/nobid.data" >"$TMP/got"
check "--elf by base name when nothing recorded a build-id" cmp -s "$TMP/expected" "$TMP/got"
check "--elf of another name and build-id: not that binary" \
	bash -c "! '$CSTRACE' report --elf '$TMP/other/prog' '$TMP/renamed.data' >/dev/null 2>&1"

# under --symfs (which holds no prog), an absolute --elf is still the file named
addresses --symfs "$TMP/symfs" --elf "$TMP/here/prog" "$TMP/bid.data" >"$TMP/got"
check "--symfs: an absolute --elf is used as given" cmp -s "$TMP/expected" "$TMP/got"
"$CSTRACE" report --format=csv --symfs "$TMP/symfs" --elf "$TMP/here/prog" "$TMP/bid.data" \
	>"$TMP/r.csv" 2>"$TMP/err"
check "report: its symbols, 24 instructions ($(head -c 200 "$TMP/err"))" bash -c "
	grep -q '^16,.*\"loop\"' '$TMP/r.csv' && grep -q '^4,.*\"func\"' '$TMP/r.csv'"
check "report: never looked for below --symfs" bash -c "! grep -q '$TMP/symfs$TMP' '$TMP/err'"

# decode takes --elf too, with the same meaning
"$CSTRACE" decode --elf "$TMP/here/prog" "$TMP/bid.data" >"$TMP/decode" 2>"$TMP/err"
check "decode --elf: decodes ($(head -c 200 "$TMP/err"))" bash -c "
	[ \$(grep -c ' range ' '$TMP/decode') -eq 14 ]"

# the name recorded, another build-id: used as named, and said so
addresses --elf "$TMP/other/prog" "$TMP/bid.data" >"$TMP/got"
check "same name, another build-id: used as named" cmp -s "$TMP/expected" "$TMP/got"
check "... with a warning naming both ids" grep -q "build-id .*, not the recorded .*: used, as --elf names it" "$TMP/err"
finish
