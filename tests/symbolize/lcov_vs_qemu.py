#!/usr/bin/env python3
"""Check `cstrace report --format=lcov` against QEMU's executed addresses of the
very run that was encoded (synth --truth, and FILE.K per thread).

addr2line names the source line of every address QEMU executed. A line ran as often
as its most executed instruction within a function (the sized symbol holding the
address), summed over functions. Every line that ran must be a DA line with that
count; every other DA line must be 0; FNDA must be the times QEMU executed the
function's first instruction; with --objdump, every conditional branch's BRDA pair
must be how often QEMU went past it and away from it (or "-" if it never ran). Only source files the lcov file lists are compared
(the others have no debug information)."""
import argparse, bisect, collections, os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qemu_run  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--nm", required=True)
ap.add_argument("--addr2line", required=True)
ap.add_argument("--binary", required=True)
ap.add_argument("--truth", required=True)
ap.add_argument("--lcov", required=True)
ap.add_argument("--objdump", help="also check BRDA: conditional branches taken / not taken")
args = ap.parse_args()

funcs = {}
names = {}
for line in subprocess.run([args.nm, "-S", "--defined-only", args.binary], capture_output=True,
                           text=True, check=True).stdout.splitlines():
    p = line.split()
    if len(p) == 4 and p[2] in "tTwWiI" and int(p[1], 16):
        a = int(p[0], 16) & ~1
        funcs[a] = max(funcs.get(a, 0), int(p[1], 16))
        names.setdefault(a, p[3])
starts = sorted(funcs)


def func_of(a):
    i = bisect.bisect_right(starts, a) - 1
    return starts[i] if i >= 0 and a < starts[i] + funcs[starts[i]] else None


runs, taken = collections.Counter(), collections.Counter()
threads = qemu_run.truth_files(args.truth)
for addrs in threads:
    runs.update(addrs)

# lcov: per file, DA and FNDA
da, fnda, brda, cur = {}, {}, collections.defaultdict(list), None
for l in open(args.lcov):
    l = l.strip()
    if l.startswith("SF:"):
        cur = l[3:]
    elif l.startswith("DA:"):
        ln, n = l[3:].split(",")[:2]
        da[(cur, int(ln))] = int(n)
    elif l.startswith("BRDA:"):
        ln, block, br, n = l[5:].split(",")
        brda[(cur, int(ln))].append(n)
    elif l.startswith("FNDA:"):
        n, name = l[5:].split(",", 1)
        fnda[name] = int(n)
files = {f for f, _ in da}

addrs = sorted(runs)
out = subprocess.run([args.addr2line, "-e", args.binary] + [hex(a) for a in addrs],
                     capture_output=True, text=True, check=True).stdout.splitlines()
per_func = collections.defaultdict(int)  # (func, file, line) -> max count
for a, where in zip(addrs, out):
    where = where.split(" (")[0]
    if where.startswith("??") or where.endswith(":0") or ":" not in where:
        continue
    f, ln = where.rsplit(":", 1)
    if f not in files:
        continue
    key = (func_of(a), f, int(ln))
    per_func[key] = max(per_func[key], runs[a])
want = collections.Counter()
for (_, f, ln), n in per_func.items():
    want[(f, ln)] += n

fail = qemu_run.Failures()

for k in sorted(set(want) | {k for k, v in da.items() if v}):
    if want.get(k, 0) != da.get(k, 0):
        fail(f"{k[0]}:{k[1]}: QEMU ran it {want.get(k, 0)} times, lcov says {da.get(k, 'nothing')}")
for a, name in names.items():
    if name in fnda and fnda[name] != runs.get(a, 0):
        fail(f"{name}: QEMU entered it {runs.get(a, 0)} times, FNDA {fnda[name]}")
hit = sum(1 for v in da.values() if v)
# conditional branches: as QEMU went, taken when the next address is not the next
# instruction; per line, in address order, (taken, not taken) or (-, -) if never run
if args.objdump:
    dis = qemu_run.disassembly(args.objdump, args.binary)
    cond = re.compile(r"^(b\.\w+|cbz|cbnz|tbz|tbnz|(b|bx)(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le))$")
    branches = sorted(a for a, (size, m, ops) in dis.items() if cond.match(m))
    for addrs in threads:
        for a, b in zip(addrs, addrs[1:]):
            if a in dis and b != a + dis[a][0]:
                taken[a] += 1
    where = subprocess.run([args.addr2line, "-e", args.binary] + [hex(a) for a in branches],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    want_br = collections.defaultdict(list)
    for a, w in zip(branches, where):
        w = w.split(" (")[0]
        if w.startswith("??") or ":" not in w:
            continue
        f, ln = w.rsplit(":", 1)
        if f not in files or not ln.isdigit():
            continue
        r = runs.get(a, 0)
        want_br[(f, int(ln))] += [str(taken[a]), str(r - taken[a])] if r else ["-", "-"]
    for k in sorted(set(want_br) | set(brda)):
        if want_br.get(k) != brda.get(k):
            fail(f"{k[0]}:{k[1]}: QEMU's branches {want_br.get(k)}, BRDA {brda.get(k)}")
    if not brda:
        fail("no BRDA lines")
if not hit:
    fail("no line ran")
fail.finish(f"{hit} of {len(da)} lines ran, counts as QEMU ran them")
