#!/usr/bin/env python3
"""Compare `cstrace script -F flags,ip,addr` (perf's branch samples) of an A64 trace with
QEMU's executed addresses (synth --truth) of the very run that was encoded: every
control transfer QEMU made must be one branch line, in the same order, and no other
branch line may appear. A transfer is a next address other than the one after the
4-byte instruction, or an unconditional branch (objdump names it) that happens to
target the next instruction. Exceptions, gaps and the end of trace are not branches;
ISBs and other range-ending instructions are not either."""
import subprocess, sys

truth_path, script_path, objdump, binary = sys.argv[1:5]
uncond = {"b", "bl", "br", "blr", "ret", "braa", "brab", "blraa", "blrab", "retaa", "retab"}
always = set()
for line in subprocess.run([objdump, "-d", binary], capture_output=True, text=True,
                           check=True).stdout.splitlines():
    f = line.split("\t")
    if len(f) >= 3 and f[0].strip().endswith(":"):
        try:
            a = int(f[0].strip()[:-1], 16)
        except ValueError:
            continue
        if f[2].split()[0] in uncond if f[2].split() else False:
            always.add(a)
addrs = [int(l, 16) for l in open(truth_path) if l.strip()]
want = [(a, b) for a, b in zip(addrs, addrs[1:]) if b != a + 4 or a in always]
got = []
for line in open(script_path):
    # perf's branch samples (-F flags,ip,addr): "  FLAGS  IP => ADDR", the flags
    # one or more words; 0 on either side is where trace stopped or started
    f = line.split()
    if "=>" not in f or f.index("=>") < 1 or f.index("=>") + 1 >= len(f):
        print(f"unexpected line: {line.rstrip()}", file=sys.stderr)
        sys.exit(1)
    i = f.index("=>")
    ip, addr = int(f[i - 1], 16), int(f[i + 1], 16)
    if ip and addr:
        got.append((ip, addr))
for i, (w, g) in enumerate(zip(want, got)):
    if w != g:
        print(f"branch {i}: QEMU {w[0]:#x} => {w[1]:#x}, script {g[0]:#x} => {g[1]:#x}",
              file=sys.stderr)
        sys.exit(1)
if len(want) != len(got):
    print(f"QEMU took {len(want)} branches, script printed {len(got)}", file=sys.stderr)
    sys.exit(1)
print(f"{len(got)} taken branches, as QEMU took them")
