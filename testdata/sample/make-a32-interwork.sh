#!/usr/bin/env bash
# Regenerate testdata/sample/a32-interwork, the in-tree ETMv3 fixture
# (tests/decode/etm3_fixture.sh): build testdata/src/a32_interwork.c for AArch32,
# synthesize its ETMv3 trace under QEMU, and keep QEMU's log of that very run reduced
# to what the test compares: a32-interwork.runs.gz, one line per run of instructions
# executed one after the other ("START END COUNT ISA", addresses in hex, END the
# address after the last), read from the log alone (PCs and Thumb state of the exec
# lines, instruction sizes from the bytes of the in_asm lines).
# Usage: make-a32-interwork.sh [path/to/cstrace]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cstrace=${1:-$here/../../build/cstrace}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
arm-linux-gnueabihf-gcc -O1 -fno-inline -marm -nostdlib -static -Wl,--build-id \
	-o "$tmp/a32_interwork" "$here/../src/a32_interwork.c"
rm -rf "$here/a32-interwork"
# periodic syncs every 512 bytes, so that the test's decode on threads has chunks to
# start apart; timestamps, so that it follows those too
"$cstrace" synth --arch arm --timestamps --sync-period 512 -o "$here/a32-interwork" \
	--keep-log "$tmp/qemu.log" -- "$tmp/a32_interwork"
python3 - "$tmp/qemu.log" > "$tmp/runs" <<'EOF'
import re, sys

size = {}   # address -> bytes, from the in_asm lines ("0x00010104:  2205  movs ...")
runs = []   # [start, end, count, isa]
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"0x([0-9a-f]{8}):  ([0-9a-f]{4,8})[ \n]", line)
    if m:
        hw = m.group(2)
        # A32 words print as 8 digits; T32 as halfwords, a 32-bit one as two
        size[int(m.group(1), 16)] = 4 if len(hw) == 8 or int(hw, 16) >> 11 >= 0x1d else 2
        continue
    # "Trace 0: 0x7f.. [00800480/00010142/...]": the PC, and Thumb in bit 23
    m = re.match(r"Trace \d+: 0x[0-9a-f]+ \[([0-9a-f]{8})/([0-9a-f]{8})/", line)
    if not m:
        continue
    pc, isa = int(m.group(2), 16), "T32" if int(m.group(1), 16) >> 23 & 1 else "A32"
    if runs and runs[-1][1] == pc and runs[-1][3] == isa:
        runs[-1][1] += size[pc]
        runs[-1][2] += 1
    else:
        runs.append([pc, pc + size[pc], 1, isa])
for r in runs:
    print("%x %x %d %s" % tuple(r))
EOF
gzip -9n < "$tmp/runs" > "$here/a32-interwork.runs.gz"
echo "$(wc -l < "$tmp/runs") runs, $(awk '{n += $3} END {print n}' "$tmp/runs") instructions"
