#!/usr/bin/env bash
# A binary without section headers (sstrip, or an image a linker script made)
# still has its loaded segments: its code is read from them, as the decoder
# reads it. script --insn printed "(no code bytes)" and one line per range
# where perf prints every instruction; now it prints what perf prints, and the
# same instructions as with the headers.
#   elf_no_sections.sh PERF_GEN A64_ELF
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
GEN=$1 A64=$2
command -v python3 >/dev/null || skip "python3 not installed"
"$GEN" --elf "$A64" --out "$TMP/t.data" --proto etmv4 --cpu-wide || fail "perf_gen failed"
# the same file, its section header table gone (e_shoff, e_shnum, e_shstrndx 0)
mkdir -p "$TMP/symfs$(dirname "$A64")"
python3 - "$A64" "$TMP/symfs$A64" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
assert b[4] == 2, "a 64-bit ELF"
b[0x28:0x30] = bytes(8)  # e_shoff
b[0x3c:0x40] = bytes(4)  # e_shnum, e_shstrndx
open(sys.argv[2], 'wb').write(b)
PY
"$CSTRACE" script --insn -F ip,insn "$TMP/t.data" > "$TMP/with.out" 2>/dev/null
"$CSTRACE" script --insn -F ip,insn --symfs "$TMP/symfs" "$TMP/t.data" > "$TMP/without.out" 2>/dev/null
check "the stripped file gives the same instructions as the whole one" \
	cmp -s "$TMP/with.out" "$TMP/without.out"
check "no instruction without its bytes" sh -c '! grep -q "no code bytes" "$1"' _ "$TMP/without.out"
check "instructions were printed ($(wc -l < "$TMP/without.out"))" test -s "$TMP/without.out"
if command -v perf >/dev/null && perf version >/dev/null 2>&1; then
	perf script -i "$TMP/t.data" --itrace=i1i -F ip --symfs "$TMP/symfs" 2>/dev/null |
		awk '{print $1}' > "$TMP/perf.ips"
	awk '{print $1}' "$TMP/without.out" > "$TMP/cst.ips"
	check "the instructions perf 6.1 prints for the stripped file ($(wc -l < "$TMP/perf.ips"))" \
		cmp -s "$TMP/perf.ips" "$TMP/cst.ips"
fi
finish
