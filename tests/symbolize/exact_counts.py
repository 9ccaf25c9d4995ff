#!/usr/bin/env python3
"""Compare `cstrace report --format=json` per-function instruction counts, entries
and lines hit with QEMU's executed addresses (synth --truth), attributing each
address to the sized function symbol (nm -S) that holds it. Functions are matched by start address, so aliases
need not agree on a name. Exit 0 when every sized function agrees exactly."""
import bisect, json, subprocess, sys

nm, binary, truth_path, report_path = sys.argv[1:5]
addr2line = sys.argv[5] if len(sys.argv) > 5 else None
objdump = sys.argv[6] if len(sys.argv) > 6 else None  # A64 only: branch outcomes
funcs = {}
for line in subprocess.run([nm, "-S", "--defined-only", binary], capture_output=True,
                           text=True, check=True).stdout.splitlines():
    parts = line.split()
    if len(parts) != 4 or parts[2] not in "tTwWiI":
        continue
    start, size = int(parts[0], 16) & ~1, int(parts[1], 16)
    if size:
        funcs[start] = max(size, funcs.get(start, 0))
starts = sorted(funcs)
truth = {}
entered = {}   # function start -> times its first instruction ran
executed = {}  # function start -> set of executed addresses
for line in open(truth_path):
    line = line.strip()
    if not line:
        continue
    a = int(line, 16) & ~1
    i = bisect.bisect_right(starts, a) - 1
    if i >= 0 and a < starts[i] + funcs[starts[i]]:
        truth[starts[i]] = truth.get(starts[i], 0) + 1
        if a == starts[i]:
            entered[a] = entered.get(a, 0) + 1
        executed.setdefault(starts[i], set()).add(a)
rep = json.load(open(report_path))
for r in rep["rows"]:
    if "addr" in r:
        r["addr"] = int(r["addr"], 16)  # "0x...": exact for any 64-bit address
got = {}
got_entries = {}
for r in rep["rows"]:
    if "addr" in r and r["addr"] in funcs:
        got[r["addr"]] = got.get(r["addr"], 0) + r["insns"]
        got_entries[r["addr"]] = got_entries.get(r["addr"], 0) + r["entries"]
bad = 0
for a in sorted(set(truth) | set(got)):
    if truth.get(a, 0) != got.get(a, 0):
        bad += 1
        print(f"{a:#x}: QEMU {truth.get(a, 0)} report {got.get(a, 0)}", file=sys.stderr)
for a in sorted(set(entered) | set(got_entries)):
    if entered.get(a, 0) != got_entries.get(a, 0):
        bad += 1
        print(f"{a:#x}: QEMU entered {entered.get(a, 0)} times, report {got_entries.get(a, 0)}",
              file=sys.stderr)
# line coverage: distinct source lines (innermost, as the line table has them) of
# the executed addresses, by addr2line, against the report's lines_hit
if addr2line:
    hit = {r["addr"]: r["lines_hit"] for r in rep["rows"]
           if r.get("lines_total") and r.get("addr") in executed}
    checked = 0
    for a, n in hit.items():
        addrs = sorted(executed[a])
        out = subprocess.run([addr2line, "-e", binary] + [hex(x) for x in addrs],
                             capture_output=True, text=True, check=True).stdout.split("\n")
        lines = {l.split(" (")[0].rsplit("/", 1)[-1] for l in out if l and not l.startswith("??")}
        lines = {l for l in lines if not l.endswith(":0")}
        checked += 1
        if len(lines) != n:
            bad += 1
            print(f"{a:#x}: addr2line {len(lines)} lines executed, report {n}", file=sys.stderr)
    print(f"line coverage checked for {checked} functions")
# A64 branch outcomes: every executed branch ends one decoded range; taken when the
# next executed address is not the following instruction (unconditional: always)
if objdump:
    mnem = {}
    for line in subprocess.run([objdump, "-d", "--no-show-raw-insn", binary], capture_output=True,
                               text=True, check=True).stdout.splitlines():
        parts = line.split("\t")
        if len(parts) >= 2 and parts[0].strip().endswith(":"):
            try:
                mnem[int(parts[0].strip()[:-1], 16)] = parts[1].split()[0] if parts[1].split() else ""
            except ValueError:
                pass
    seq = [int(l, 16) for l in open(truth_path) if l.strip()]
    want = {}
    for a, b in zip(seq, seq[1:]):
        m = mnem.get(a, "")
        cond = m in ("cbz", "cbnz", "tbz", "tbnz") or m.startswith("b.")
        if not (cond or m in ("b", "bl", "br", "blr", "ret")):
            continue
        i = bisect.bisect_right(starts, a) - 1
        if i < 0 or a >= starts[i] + funcs[starts[i]]:
            continue
        t, n = want.get(starts[i], (0, 0))
        want[starts[i]] = (t + 1, n) if (not cond or b != a + 4) else (t, n + 1)
    have = {}
    for r in rep["rows"]:
        if r.get("addr") in funcs:
            t, n = have.get(r["addr"], (0, 0))
            have[r["addr"]] = (t + r["taken"], n + r["not_taken"])
    for a in sorted(set(want) | set(have)):
        if want.get(a, (0, 0)) != have.get(a, (0, 0)):
            bad += 1
            print(f"{a:#x}: QEMU taken/not-taken {want.get(a, (0, 0))}, report {have.get(a, (0, 0))}",
                  file=sys.stderr)
    print(f"branch outcomes checked for {len(want)} functions")
total_truth = sum(1 for l in open(truth_path) if l.strip())
if rep["total_insns"] != total_truth:
    bad += 1
    print(f"total: QEMU {total_truth} report {rep['total_insns']}", file=sys.stderr)
print(f"{len(truth)} functions, {sum(truth.values())} of {total_truth} instructions "
      f"in sized functions, {bad} mismatches")
sys.exit(1 if bad else 0)
