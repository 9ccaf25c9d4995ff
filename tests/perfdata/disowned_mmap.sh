#!/usr/bin/env bash
# Code no recorded mapping covers. The MMAP2 record of a position-dependent
# program taken out: perf 6.1 cannot read its code; cstrace reads it at its ELF
# addresses (the file is in the BUILD_ID feature) and decodes all of QEMU's
# instructions, in both orders, on 1 to 4 threads, saying so. The same for a
# position-independent program (its load address is unknown) leaves gaps, which
# a warning at the end of the run counts and places (only --stats told them); so
# does a snapshot whose memory dump is gone.
# Usage: disowned_mmap.sh ARCH STATIC_PROG PIE_PROG
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
arch=$1; prog=$2; pie=$3
need_synth "$arch" "$prog"
[ -x "$pie" ] || skip "test program $pie not built"
. "$CSTRACE_SOURCE_DIR/tests/decode/threads_lib.sh"
. "$CSTRACE_SOURCE_DIR/tests/perfdata/disowned_lib.sh"

disowned_base "$arch" "$prog" --timestamps
mut "$TMP/base.data" "$TMP/static.data" drop-mmap "/$(basename "$prog")" > "$TMP/said"
disowned "a position-dependent program's MMAP2 taken out" "$TMP/static.data" "$TMP/base.data" "<" \
	"no MMAP record maps $(one file) \(build-id [0-9a-f]+, in the BUILD_ID feature\): reading its code at its ELF addresses 0x[0-9a-f]+-0x[0-9a-f]+, where a position-dependent executable loads \(perf does not read it\)"
# the code read there is symbolized as the program's
"$CSTRACE" script "$TMP/static.data" > "$TMP/static.script" 2> /dev/null
check "its branches name its functions" grep -q "main+0x[0-9a-f]* ($(basename "$prog"))" "$TMP/static.script"

# A position-independent program: where it was is not known
"$CSTRACE" synth --arch "$arch" --out perf -o "$TMP/pie.data" -- "$pie" > /dev/null 2>&1 ||
	fail "synth of $pie"
mut "$TMP/pie.data" "$TMP/pie-nommap.data" drop-mmap "/$(basename "$pie")" > "$TMP/said"
insns file "$TMP/pie.data"
insns file "$TMP/pie-nommap.data"
n=$(wc -l < "$TMP/pie-nommap.data.file.insn")
check "PIE program's MMAP2 taken out: exit 0" [ "$(cat "$TMP/pie-nommap.data.file.rc")" -eq 0 ]
check "PIE program's MMAP2 taken out: fewer instructions ($n)" \
	[ "$n" -gt 0 -a "$n" -lt "$(wc -l < "$TMP/pie.data.file.insn")" ]
check "PIE program's MMAP2 taken out: said where it is: $(head -c 300 "$TMP/pie-nommap.data.file.err")" \
	grep -Eq "^cstrace: warning: $TMP/pie-nommap.data: no MMAP record maps $(one file) \(build-id [0-9a-f]+, in the BUILD_ID feature\): where it was loaded is not known \(not a position-dependent executable\); its code is not decoded \(gaps\)$" \
	"$TMP/pie-nommap.data.file.err"
gaps='[0-9]+ inaccessible-memory gaps: the code at 0x[0-9a-f]+(-0x[0-9a-f]+)?(, 0x[0-9a-f]+(-0x[0-9a-f]+)?)*( and elsewhere)? was not followed \(no memory image or mapped file could give it\)'
check "PIE program's MMAP2 taken out: the gaps counted and placed at the end" \
	grep -Eq "^cstrace: warning: $TMP/pie-nommap.data: $gaps$" "$TMP/pie-nommap.data.file.err"
nacc=$("$CSTRACE" decode --format=none --stats "$TMP/pie-nommap.data" 2>&1 |
	sed -n 's/.* gaps (\([0-9]*\) inaccessible memory).*/\1/p')
check "the count is --stats' ($nacc)" grep -q ": $nacc inaccessible-memory gaps:" "$TMP/pie-nommap.data.file.err"
if $have_perf; then
	check "perf 6.1 loses the same: $(pcount "$TMP/pie-nommap.data")" [ "$(pcount "$TMP/pie-nommap.data")" -eq "$n" ]
fi
same "PIE program's MMAP2 taken out" "$TMP/pie-nommap.data" \
	"decode --format=none --stats,script --raw --insn,report" "256"

# A snapshot whose memory dump is gone: the same warning at the end, and since no
# code could be read, nothing decoded: exit 1, saying why (the one exit rule)
"$CSTRACE" synth --arch "$arch" -o "$TMP/nodump" -- "$prog" > /dev/null 2>&1 || fail "synth snapshot"
dump=$(sed -n "s/^file *= *\\(mem_.*\\)$/\\1/p" "$TMP/nodump/cpu_0.ini" | head -1)
rm -f "$TMP/nodump/$dump"
"$CSTRACE" decode --format=none "$TMP/nodump" > /dev/null 2> "$TMP/nodump.err"
check "snapshot without its dump: exit 1" [ $? -eq 1 ]
check "snapshot without its dump: why nothing decoded" \
	grep -q "^cstrace: $TMP/nodump: no instructions decoded: the code at the traced addresses could not be read" "$TMP/nodump.err"
check "snapshot without its dump: the gaps counted and placed: $(tail -c 300 "$TMP/nodump.err")" \
	grep -Eq "^cstrace: warning: $TMP/nodump: $gaps$" "$TMP/nodump.err"
same "snapshot without its dump" "$TMP/nodump" "decode --format=none --stats,script,report" "256"
$have_perf || echo "perf not installed: perf's counts not checked"
finish
