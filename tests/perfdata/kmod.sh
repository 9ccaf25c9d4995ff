#!/usr/bin/env bash
# Kernel modules in perf.data: a .ko is a relocatable object (ET_REL, no program
# headers) whose sections the kernel places at load; perf and simpleperf record
# its kernel MMAP (pid -1) by path or as "[name]", its build-id (here an 8-byte
# --build-id=0x..., as Android modules have) zero-padded to 20 bytes in BUILD_ID.
# The module is found by that build-id in --symdir, under --symfs by its path, by
# name.ko for "[name]" without a build-id; its code is read where the kernel puts
# it (.text at the MMAP's address, .text.unlikely after it at its alignment,
# .init.text not there), with the call into another section relocated; and it is
# symbolized from its symbol table and lines.
# usage: kmod.sh PERF_GEN (the module is built here with the aarch64 toolchain)
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
gen=$1
[ -x "$gen" ] || skip "perf_gen not built"
CC=aarch64-linux-gnu-gcc
LD=aarch64-linux-gnu-ld
command -v $CC >/dev/null && command -v $LD >/dev/null || skip "$CC or $LD not installed"
src=$CSTRACE_SOURCE_DIR/tests/perfdata/kmod.S
base=0xffffffc008a00000

mkdir -p "$TMP/sd/vendor" "$TMP/sfs/vendor/lib/modules" "$TMP/byname" "$TMP/other"
$CC -g -c "$src" -o "$TMP/kmod.o" || { fail "assembling kmod.S"; finish; }
$LD -r --build-id=0x0123456789abcdef "$TMP/kmod.o" -o "$TMP/x.ko" || { fail "ld -r"; finish; }
$LD -r --build-id=0x0123456789abcdee "$TMP/kmod.o" -o "$TMP/other/x.ko"
$LD -r "$TMP/kmod.o" -o "$TMP/byname/x.ko"

# the module recorded as "[x]" and by its path; the expected run (both fragments)
"$gen" --elf "$TMP/x.ko" --kmod $base --build-id-pad --mmap-name '[x]' \
	--out "$TMP/bracket.data" --expect "$TMP/expected" || { fail "perf_gen [x]"; finish; }
"$gen" --elf "$TMP/x.ko" --kmod $base --build-id-pad --mmap-name /vendor/lib/modules/x.ko \
	--out "$TMP/path.data" || fail "perf_gen path"
"$gen" --elf "$TMP/byname/x.ko" --kmod $base --mmap-name '[x]' --out "$TMP/nobid.data" ||
	fail "perf_gen without a build-id"
cp "$TMP/x.ko" "$TMP/sd/vendor/renamed.ko"
cp "$TMP/x.ko" "$TMP/sfs/vendor/lib/modules/x.ko"

# ADDRESSES: the instructions `script --raw --insn` prints, one hex address a line
addresses() { "$CSTRACE" script --raw --insn "$@" 2>"$TMP/err" | awk '{ print $NF }'; }
same_run() {
	local what=$1; shift
	addresses "$@" >"$TMP/got"
	check "$what: every instruction of the run, where the kernel put it ($(head -c 300 "$TMP/err"))" \
		cmp -s "$TMP/expected" "$TMP/got"
}
same_run "[x], --symdir (by its 8-byte build-id, renamed)" --symdir "$TMP/sd" "$TMP/bracket.data"
same_run "the .ko path, --symdir" --symdir "$TMP/sd" "$TMP/path.data"
same_run "the .ko path, --symfs" --symfs "$TMP/sfs" "$TMP/path.data"
same_run "[x] without a build-id: x.ko by name" --symdir "$TMP/byname" "$TMP/nobid.data"

# the call into .text.unlikely is relocated: decode and disassembly agree on it
func=$(sed -n 9p "$TMP/expected")
"$CSTRACE" script --insn --srcline --symdir "$TMP/sd" "$TMP/bracket.data" >"$TMP/insn" 2>"$TMP/err"
check "the bl goes to func at 0x$func, as disassembled" grep -q "_start+0xc .*bl #0x$func\$" "$TMP/insn"
check "func's instructions by the module's symbol table" \
	grep -q "^.* $func func+0 .*kmod.S:[0-9]*	nop\$" "$TMP/insn"
check "no instruction of it unknown" bash -c "! grep -q unknown '$TMP/insn'"
"$CSTRACE" report --format=csv --symdir "$TMP/sd" "$TMP/bracket.data" >"$TMP/report.csv" 2>"$TMP/err"
check "report: _start and func of [x], 24 instructions" bash -c "
	grep -q '^20,.*,\"_start\",\"\\[x\\]\",' '$TMP/report.csv' &&
	grep -q '^4,.*,\"func\",\"\\[x\\]\",' '$TMP/report.csv'"
"$CSTRACE" report --sort srcline --symfs "$TMP/sfs" "$TMP/path.data" >"$TMP/lines" 2>"$TMP/err"
check "lines from its DWARF (func's nop: line 26 of kmod.S)" grep -q ' kmod.S:26$' "$TMP/lines"

# a module of that name but another build-id is not the one that ran
mkdir -p "$TMP/sd2" && cp "$TMP/other/x.ko" "$TMP/sd2/x.ko"
"$CSTRACE" script --raw --insn --symdir "$TMP/sd2" "$TMP/bracket.data" >"$TMP/out" 2>"$TMP/err"
check "another build-id: not used, said once" bash -c "
	[ ! -s '$TMP/out' ] && grep -q '0123456789abcdef.*not found' '$TMP/err'"

# a snapshot's memory dump that happens to bear the module's name is that dump:
# --elf stands for recorded binaries, never for a trace's own images
cp -r "$CSTRACE_SOURCE_DIR/testdata/sample/a64-loop" "$TMP/snap"
chmod -R u+w "$TMP/snap"
mv "$TMP/snap/mem_0.bin" "$TMP/snap/x.ko"
sed -i 's/^file=mem_0.bin/file=x.ko/' "$TMP/snap/cpu_0.ini"
"$CSTRACE" report --format=csv --elf "$TMP/x.ko" "$TMP/snap" >"$TMP/snap.csv" 2>"$TMP/err"
check "a dump named like --elf's module stays the dump ($(head -c 200 "$TMP/err"))" \
	bash -c "grep -q '\"\[unknown\]\",\"x.ko\"' '$TMP/snap.csv' && ! grep -q '_start' '$TMP/snap.csv'"
finish
