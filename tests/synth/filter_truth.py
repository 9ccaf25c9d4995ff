#!/usr/bin/env python3
# QEMU's run as a filtered ETM traces it: the ground truth (--truth, one executed
# address a line) kept where ViewInst is active: inside an include range (when there
# are ranges), with the start/stop logic started (on at a start point, the
# instruction included; off after a stop point's instruction), cut before the Nth
# run of a trigger's address. ETMv4 traces P0 elements only: a stretch that ends
# without a waypoint (a stop point, falling out of a range) loses the instructions
# after its last waypoint, which are taken from the unfiltered decode of the same run
# (--waypoints: every range there ends at a waypoint or an exception).
#
#   filter_truth.py --truth T [--range ADDR:SIZE]... [--start ADDR]... [--stop ADDR]...
#                   [--trigger ADDR [--count N]] [--waypoints JSONL --trace-id ID] > OUT
#   filter_truth.py --base-of FILE --snapshot DIR   (where the snapshot's memory dumps
#                   hold FILE from its first byte: a library's load address)
import argparse, configparser, json, os, sys


def base_of(path, snap):
    data = open(path, "rb").read()
    c = configparser.ConfigParser(strict=False, interpolation=None)
    c.read(os.path.join(snap, "cpu_0.ini"))
    for s in c.sections():
        if s.lower().startswith("dump"):
            d = open(os.path.join(snap, c[s]["file"]), "rb").read()
            if len(d) > 256 and data.startswith(d):
                return int(c[s]["address"], 0)
    sys.exit("%s: no memory dump of the snapshot holds it from its start" % path)


def waypoints(path, trace_id, n):
    """Indices of the run's instructions that end a range of the unfiltered decode."""
    ends, i = set(), 0
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            if e.get("type") == "instr_range" and (trace_id is None or e["trace_id"] == trace_id):
                i += e["insns"]
                ends.add(i - 1)
    if i != n:
        sys.exit("the unfiltered decode has %d instructions, QEMU %d" % (i, n))
    return ends


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth")
    ap.add_argument("--range", action="append", default=[])
    ap.add_argument("--start", action="append", default=[])
    ap.add_argument("--stop", action="append", default=[])
    ap.add_argument("--trigger")
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--waypoints")
    ap.add_argument("--trace-id", type=lambda x: int(x, 0))
    ap.add_argument("--base-of")
    ap.add_argument("--snapshot")
    a = ap.parse_args()
    if a.base_of:
        print("%x" % base_of(a.base_of, a.snapshot))
        return 0
    truth = [int(x, 16) for x in open(a.truth) if x.strip()]
    ranges = [(int(lo, 0), int(lo, 0) + int(n, 0)) for lo, n in (r.split(":") for r in a.range)]
    starts = {int(x, 0) for x in a.start}
    stops = {int(x, 0) for x in a.stop}
    ends = waypoints(a.waypoints, a.trace_id, len(truth)) if a.waypoints else None
    end = len(truth)
    if a.trigger:
        hits = [i for i, pc in enumerate(truth) if pc == int(a.trigger, 0)]
        if len(hits) < a.count:
            sys.exit("the trigger address runs %d times, not %d" % (len(hits), a.count))
        end = hits[a.count - 1]
    started = not starts
    traced = []
    for pc in truth[:end]:
        if pc in starts:
            started = True
        traced.append(started and (not ranges or any(lo <= pc < hi for lo, hi in ranges)))
        if pc in stops:
            started = False
    out, i, k = [], 0, 0
    while i < end:
        if not traced[i]:
            i += 1
            continue
        j = i
        while j + 1 < end and traced[j + 1]:
            j += 1
        last = j
        if ends is not None and not (j == len(truth) - 1 or j in ends):
            last = max([k for k in range(i, j + 1) if k in ends], default=i - 1)
        out.extend(truth[i:last + 1])
        k += 1
        i = j + 1
    sys.stdout.write("".join("%x\n" % pc for pc in out))
    print("%d of %d instructions traced in %d stretches" % (len(out), len(truth), k),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
