#!/usr/bin/env python3
# Is perf script's instruction order cstrace's? Both print one line per executed
# instruction ("pid/tid [cpu] ip"), CPUs interleaved by time. perf 6.1 lacks what its
# decoder still held when an AUX fragment's bytes ran out (it resets OpenCSD instead
# of ending the trace): those lines, and only those, may be missing from perf's
# output. Everything else must be the same lines in the same order.
#
# Usage: order_check.py PERF_LINES CSTRACE_LINES CSTRACE_JSONL
#   CSTRACE_JSONL: `cstrace decode --format=jsonl` of the same file, in the same
#   order, so that each cstrace line is known by the element (fragment and byte
#   offset) it came from.
import json, sys

# what perf can lose sits in the last packets of a fragment: within this many bytes
# of the fragment's last packet (two formatter frames)
TAIL_BYTES = 32


def lines(path):
    with open(path) as f:
        return [" ".join(l.split()) for l in f if l.strip()]


def main():
    perf, cst = lines(sys.argv[1]), lines(sys.argv[2])
    slots, last = [], {}
    with open(sys.argv[3]) as f:
        for l in f:
            e = json.loads(l)
            frag = e.get("fragment", 0)
            last[frag] = max(last.get(frag, 0), e["offset"])
            if e["type"] == "instr_range":
                slots += [(frag, e["offset"])] * e["insns"]
    if len(slots) != len(cst):
        sys.exit("cstrace printed %d lines for %d decoded instructions" % (len(cst), len(slots)))

    def cpu(line):
        return line.split()[1]

    # per CPU: perf's lines are cstrace's, less a suffix of some fragments
    perf_by_cpu = {}
    for l in perf:
        perf_by_cpu.setdefault(cpu(l), []).append(l)
    pos = {c: 0 for c in perf_by_cpu}
    dropped = [False] * len(cst)
    cut_frag = {}  # cpu -> fragment being cut
    for i, l in enumerate(cst):
        c, (frag, off) = cpu(l), slots[i]
        p = perf_by_cpu.get(c, [])
        if cut_frag.get(c) == frag:
            ok = True
        elif pos.get(c, 0) < len(p) and p[pos[c]] == l:
            pos[c] += 1
            continue
        else:
            ok = False
            cut_frag[c] = frag
        if off < last[frag] - TAIL_BYTES:
            sys.exit("cpu %s: cstrace line %d (%s, fragment %d offset %d) is missing from "
                     "perf and is not in the last packets of its fragment (last at %d)%s"
                     % (c, i + 1, l, frag, off, last[frag],
                        "" if ok else "; perf has next: %s" %
                        (p[pos[c]] if pos.get(c, 0) < len(p) else "nothing")))
        dropped[i] = True
    for c, p in perf_by_cpu.items():
        if pos.get(c, 0) != len(p):
            sys.exit("cpu %s: perf has %d lines cstrace does not (first: %s)"
                     % (c, len(p) - pos.get(c, 0), p[pos.get(c, 0)]))
    kept = [l for i, l in enumerate(cst) if not dropped[i]]
    for k, (a, b) in enumerate(zip(kept, perf)):
        if a != b:
            sys.exit("order differs at perf line %d: perf %s, cstrace %s" % (k + 1, b, a))
    if len(kept) != len(perf):
        sys.exit("perf has %d lines, cstrace %d after the excused ones" % (len(perf), len(kept)))
    switches = sum(1 for a, b in zip(perf, perf[1:]) if cpu(a) != cpu(b))
    print("%d lines in the same order, %d CPU switches; %d cstrace lines perf lost at "
          "fragment ends" % (len(perf), switches, sum(dropped)))


main()
