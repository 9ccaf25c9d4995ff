#!/usr/bin/env python3
# Is perf script's instruction order cstrace's? Both print one line per executed
# instruction ("pid/tid [cpu] ip"), CPUs interleaved by time. cstrace also prints
# what perf 6.1 never reports (what OpenCSD still held when perf's decoder stopped
# on a fragment's last bytes, packets perf throws away); `decode --format=jsonl`
# marks those elements "perf_unseen". Exactly those lines may be missing from
# perf's output, and they must all be missing; everything else must be the same
# lines in the same order.
#
# Usage: order_check.py PERF_LINES CSTRACE_LINES CSTRACE_JSONL
#   CSTRACE_JSONL: `cstrace decode --format=jsonl` of the same file, in the same
#   order, so that each cstrace line is known by the element it came from.
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
                slots += [(frag, e["offset"], e.get("perf_unseen", False))] * e["insns"]
    if len(slots) != len(cst):
        sys.exit("cstrace printed %d lines for %d decoded instructions" % (len(cst), len(slots)))

    def cpu(line):
        return line.split()[1]

    kept, unseen, tails = [], 0, set()
    for l, (frag, off, perf_unseen) in zip(cst, slots):
        if not perf_unseen:
            kept.append(l)
            continue
        unseen += 1
        tails.add(frag)
        if off < last[frag] - TAIL_BYTES:
            # only the end of a fragment is lost that way in these runs: a mark
            # anywhere else is a model that stops perf's decoder too early
            sys.exit("cstrace line %s (fragment %d offset %d) is marked perf_unseen but is "
                     "not in the last packets of its fragment (last at %d)"
                     % (l, frag, off, last[frag]))
    for k, (a, b) in enumerate(zip(kept, perf)):
        if a != b:
            # say whether a line is missing on one side, or the order differs
            more = "perf lacks it" if a not in perf[k:k + 2000] else \
                   "cstrace lacks perf's" if b not in kept[k:k + 2000] else "order differs"
            sys.exit("line %d of perf's: perf %s [cpu %s], cstrace %s [cpu %s]: %s"
                     % (k + 1, b, cpu(b), a, cpu(a), more))
    if len(kept) != len(perf):
        sys.exit("perf has %d lines, cstrace %d less the %d perf_unseen"
                 % (len(perf), len(kept), unseen))
    switches = sum(1 for a, b in zip(perf, perf[1:]) if cpu(a) != cpu(b))
    print("%d lines in the same order, %d CPU switches; %d cstrace lines perf_unseen in %d "
          "fragments" % (len(perf), switches, unseen, len(tails)))


main()
