#!/usr/bin/env python3
"""Check `cstrace report --format=autofdo` (and --format=profgen) against QEMU's
executed addresses of the very run that was encoded (synth --truth: FILE, and
FILE.K for thread K).

The AutoFDO text is simpleperf's (qemu_run.simpleperf_counts): one range per
range the decoder gives (ETMv4: cut at every waypoint, taken or not; ETMv3,
--per-insn: at every instruction), a taken branch to where it went when it is
direct, else to 0; as offsets from the binary's first loadable segment.

The profgen file cuts QEMU's instruction stream as profiles define it: after
every taken branch, every system call, and wherever execution jumps without a
branch (an exception); not-taken branches and ISBs stay inside a range. A range
counts once for (first, last) instruction; a taken branch counts for (branch,
target), left out when the target lies outside the binary. Only code inside the
binary's loadable segments counts (static binaries: runtime addresses are the
binary's own); addresses are less the load base.
"""
import argparse, collections, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qemu_run  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--readelf", required=True)
ap.add_argument("--objdump", required=True)
ap.add_argument("--binary", required=True)
ap.add_argument("--truth", required=True)
ap.add_argument("--autofdo", required=True)
ap.add_argument("--profgen")
ap.add_argument("--per-insn", action="store_true", help="ETMv3: a range per instruction")
args = ap.parse_args()

segs = qemu_run.load_segments(args.readelf, args.binary)
base = min(s[0] for s in segs)
inside = lambda a: any(lo <= a < hi for lo, hi in segs)

disasm = qemu_run.disassembly(args.objdump, args.binary)
threads = qemu_run.truth_files(args.truth)
ranges, branches = qemu_run.profile_counts(disasm, threads, inside)
sp_ranges, sp_branches = qemu_run.simpleperf_counts(disasm, threads, inside, args.per_insn)


def read_profile(path, sections):
    lines = [l.rstrip("\n") for l in open(path)]
    out, i = [], 0
    for _ in range(sections):
        n = int(lines[i]); i += 1
        out.append(lines[i:i + n]); i += n
    return out, lines[i:]


fail = qemu_run.Failures()


def compare(what, want, got):
    for k in sorted(set(want) | set(got)):
        if want.get(k, 0) != got.get(k, 0):
            fail(f"{what} {k[0]:#x},{k[1]:#x}: QEMU {want.get(k, 0)}, profile {got.get(k, 0)}")


def offsets(counts, branch):
    """simpleperf's AutoFDOWriter: less the base; what lies below it left out (a
    branch target below it is 0)."""
    out = collections.Counter()
    for (a, b), n in counts.items():
        if a >= base and (branch or b >= base):
            out[(a - base, b - base if b >= base else 0)] += n
    return out


(rs, _addrs, bs), rest = read_profile(args.autofdo, 3)
got_r = collections.Counter()
for l in rs:
    a, b, n = re.fullmatch(r"([0-9a-f]+)-([0-9a-f]+):(\d+)", l).groups()
    got_r[(int(a, 16), int(b, 16))] += int(n)
got_b = collections.Counter()
for l in bs:
    a, b, n = re.fullmatch(r"([0-9a-f]+)->([0-9a-f]+):(\d+)", l).groups()
    got_b[(int(a, 16), int(b, 16))] += int(n)
if not rest or not rest[0].startswith("// build_id: 0x") or rest[1] != "// " + args.binary:
    fail(f"autofdo: the binary's block does not end with its build-id and path: {rest[:2]}")
compare("range", offsets(sp_ranges, False), got_r)
compare("branch", offsets(sp_branches, True), got_b)
sp_branches_to_0 = sum(n for (a, b), n in sp_branches.items() if not b)
if args.profgen:
    (prs, pbs), _ = read_profile(args.profgen, 2)
    want_r = collections.Counter({(a - base, b - base): n for (a, b), n in ranges.items()})
    want_b = collections.Counter({(a - base, b - base): n for (a, b), n in branches.items() if b})
    pr = collections.Counter()
    for l in prs:
        a, b, n = re.fullmatch(r"([0-9a-f]+)-([0-9a-f]+):(\d+)", l).groups()
        pr[(int(a, 16), int(b, 16))] += int(n)
    pb = collections.Counter()
    for l in pbs:
        a, b, n = re.fullmatch(r"([0-9a-f]+)->([0-9a-f]+):(\d+)", l).groups()
        pb[(int(a, 16), int(b, 16))] += int(n)
    compare("profgen range", want_r, pr)
    compare("profgen branch", want_b, pb)
fail.finish(f"autofdo {len(sp_ranges)} ranges ({sum(sp_ranges.values())} runs), {len(sp_branches)} "
            f"branches ({sum(sp_branches.values())} taken, {sp_branches_to_0} to 0); profgen "
            f"{len(ranges)} ranges, {len(branches)} branches: as QEMU ran them")
