#!/usr/bin/env python3
"""Check `cstrace report --format=llvm-sample` against QEMU's executed addresses of
the very run that was encoded (synth --truth), symbolized by LLVM's own
llvm-symbolizer (inline frames with line, start line and discriminator).

The expected profile follows llvm-profgen's rules for a line-number profile:
every instruction of a function that ran counts (0 if it never ran) for each
profile of its inline chain (outermost first: each frame at (line - start line)
& 0xffff and its base discriminator): the chain's totals get count x size, the
innermost location's body count is the most any of its instructions ran (times
the discriminator's duplication factor); every taken branch QEMU made to a
function's first instruction is a call from the branch's location and a head
sample of the callee; a top-level location counts at least its calls. Totals,
head samples, body lines, call targets and inlinees must all be equal.
"""
import argparse, bisect, collections, json, os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qemu_run  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--readelf", required=True)
ap.add_argument("--objdump", required=True)
ap.add_argument("--nm", required=True)
ap.add_argument("--symbolizer", required=True)
ap.add_argument("--binary", required=True)
ap.add_argument("--truth", required=True)
ap.add_argument("--profile", required=True)
ap.add_argument("--expect", default="", help="comma-separated functions that must be in it")
args = ap.parse_args()

segs = qemu_run.load_segments(args.readelf, args.binary)
inside = lambda a: a is not None and any(lo <= a < hi for lo, hi in segs)

disasm = qemu_run.disassembly(args.objdump, args.binary)
threads = qemu_run.truth_files(args.truth)
_, branches = qemu_run.profile_counts(disasm, threads, inside)
ran = collections.Counter(a for addrs in threads for a in addrs)

# functions: sized code symbols (a -g C function's DWARF range is its symbol's)
funcs = []
for line in subprocess.run([args.nm, "-S", "--defined-only", args.binary], capture_output=True,
                           text=True, check=True).stdout.splitlines():
    p = line.split()
    if len(p) == 4 and p[2] in "tTwW":
        a, n = int(p[0], 16) & ~1, int(p[1], 16)
        if n:
            funcs.append((a, a + n, p[3]))
funcs.sort()
los = [lo for lo, _, _ in funcs]


def func_of(a):
    i = bisect.bisect_right(los, a) - 1
    return funcs[i] if i >= 0 and a < funcs[i][1] else None


# llvm-profgen counts every instruction of a function a range starts in
executed = {func_of(a) for a in ran} - {None}
insns = sorted(a for a in disasm if func_of(a) in executed)

out = subprocess.run([args.symbolizer, "--output-style=JSON", "--inlines", "--obj", args.binary],
                     input="".join(f"{a:#x}\n" for a in insns), capture_output=True, text=True,
                     check=True).stdout.splitlines()
frames = {}
for a, line in zip(insns, out):
    fr, sym = [], json.loads(line)
    for s in reversed((sym[0] if isinstance(sym, list) else sym)["Symbol"]):  # outermost first
        # llvm-profgen symbolizes from DWARF only; llvm-symbolizer-19 cannot be told
        # to, and names code without DWARF from the symbol table, with neither
        # a line nor a start line
        if s["FunctionName"] in ("", "<invalid>") or not (s["Line"] or s["StartLine"]):
            break
        fr.append((s["FunctionName"], (s["Line"] - s["StartLine"]) & 0xffff, s["Discriminator"]))
    frames[a] = fr


# flow-sensitive discriminators (clang's FS-AFDO) are kept whole and unscaled
fs = "__llvm_fs_discriminator__" in subprocess.run([args.nm, args.binary], capture_output=True,
                                                   text=True, check=True).stdout


def prefix_decode(u):
    if u & 1:
        return 0
    u >>= 1
    return ((u >> 1) & 0xfe0) | (u & 0x1f) if u & 0x20 else u & 0x1f


def base_disc(d):
    if fs:
        return d
    if d & 7 == 7:
        return (d >> 16) & 7 if d & 0x10000000 else (d >> 3) & 0xffff
    return prefix_decode(d)


def dup_factor(d):
    if fs:
        return 1
    d = d >> (14 if d & 0x40 else 7) if not d & 1 else d >> 1
    return prefix_decode(d) or 1


def profile():
    return {"total": 0, "head": 0, "body": {}, "calls": collections.defaultdict(
        collections.Counter), "inl": collections.defaultdict(profile)}


want = collections.defaultdict(profile)


def leaf(fr, total):
    p = want[fr[0][0]]
    p["total"] += total
    for (_, off, disc), (name, _, _) in zip(fr, fr[1:]):
        p = p["inl"][(off, base_disc(disc), name)]
        p["total"] += total
    return p


for a in insns:
    fr = frames[a]
    if not fr:
        continue
    n = ran[a]
    p = leaf(fr, n * disasm[a][0])
    loc = (fr[-1][1], base_disc(fr[-1][2]))
    p["body"][loc] = max(p["body"].get(loc, 0), n * dup_factor(fr[-1][2]))
names = {lo: name for lo, _, name in funcs}
for (a, b), n in branches.items():
    if not b or b not in names or not frames.get(b):
        continue  # not a call of a function (with DWARF) of this binary
    callee = frames[b][0][0]
    fr = frames.get(a, [])  # code outside the functions: no frames
    if fr:
        p = leaf(fr, 0)
        loc = (fr[-1][1], base_disc(fr[-1][2]))
        p["body"].setdefault(loc, 0)
        p["calls"][loc][callee] += n
    want[callee]["head"] += n
for p in want.values():
    for loc, c in p["calls"].items():
        p["body"][loc] = max(p["body"][loc], sum(c.values()))

# cstrace's profile, read back by its indentation
got = collections.defaultdict(profile)
stack = []
for line in open(args.profile):
    line = line.rstrip("\n")
    depth = len(line) - len(line.lstrip(" "))
    text = line.strip()
    if depth == 0:
        name, total, head = text.rsplit(":", 2)
        cur = got[name]
        cur["total"], cur["head"] = int(total), int(head)
        stack = [cur]
        continue
    m = re.fullmatch(r"(\d+)(?:\.(\d+))?: (.*)", text)
    loc = (int(m[1]), int(m[2] or 0))
    del stack[depth:]
    rest = m[3].split()
    if re.fullmatch(r"\d+", rest[0]):
        stack[-1]["body"][loc] = int(rest[0])
        for t in rest[1:]:
            callee, n = t.rsplit(":", 1)
            stack[-1]["calls"][loc][callee] = int(n)
    else:
        name, total = rest[0].rsplit(":", 1)
        sub = stack[-1]["inl"][loc + (name,)]
        sub["total"] = int(total)
        stack.append(sub)

fail = qemu_run.Failures()


def compare(path, w, g):
    if w["total"] != g["total"] or w["head"] != g["head"]:
        fail(f"{path}: QEMU total {w['total']} head {w['head']}, "
             f"profile total {g['total']} head {g['head']}")
    for loc in sorted(set(w["body"]) | set(g["body"])):
        if w["body"].get(loc) != g["body"].get(loc):
            fail(f"{path} line {loc}: QEMU {w['body'].get(loc)}, profile {g['body'].get(loc)}")
    for loc in sorted(set(w["calls"]) | set(g["calls"])):
        if dict(w["calls"].get(loc, {})) != dict(g["calls"].get(loc, {})):
            fail(f"{path} calls at {loc}: QEMU {dict(w['calls'].get(loc, {}))}, "
                 f"profile {dict(g['calls'].get(loc, {}))}")
    for k in sorted(set(w["inl"]) | set(g["inl"])):
        compare(f"{path} > {k[2]}@{k[0]}.{k[1]}", w["inl"].get(k, profile()),
                g["inl"].get(k, profile()))


for name in sorted(set(want) | set(got)):
    compare(name, want.get(name, profile()), got.get(name, profile()))
for name in filter(None, args.expect.split(",")):
    if name not in got:
        fail(f"{name}: not in the profile")


def count(p):
    return 1 + sum(count(s) for s in p["inl"].values())


fail.finish(f"{len(want)} functions ({sum(count(p) for p in want.values()) - len(want)} inlinees, "
            f"{sum(len(p['body']) for p in want.values())} top-level lines, "
            f"{sum(p['total'] for p in want.values())} samples): as QEMU ran them")
