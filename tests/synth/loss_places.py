#!/usr/bin/env python3
# Where `script --insn -F ip` says "[trace lost: ...]", against QEMU's run of the very
# capture (synth --truth): the instructions between two such lines must be one run of
# QEMU's, with nothing left out, and at each such line QEMU's run must have
# instructions the trace does not (before the first piece too: the program began
# before the trace did). So the lines are where trace was lost, and only there.
# The last piece ends where the program ended.
import argparse, struct, sys


def read_pieces(path):
    """Pieces of instruction addresses, split at the loss lines; whether the
    output began with one."""
    pieces, cur, lead = [], [], False
    with open(path) as f:
        for line in f:
            if "[trace lost: " in line:
                if not pieces and not cur:
                    lead = True
                if cur:
                    pieces.append(cur)
                cur = []
                continue
            w = line.split()
            if w:
                cur.append(int(w[-1], 16))
    if cur:
        pieces.append(cur)
    return pieces, lead


def pack(seq):
    return struct.pack(">%dQ" % len(seq), *seq)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", required=True)
    ap.add_argument("--insns", required=True, help="script --insn -F ip output")
    ap.add_argument("--places", type=int, required=True, help="loss lines expected")
    a = ap.parse_args()
    with open(a.truth) as f:
        truth = [int(x, 16) for x in f if x.strip()]
    pieces, lead = read_pieces(a.insns)
    lines = len(pieces) - 1 + lead
    if lines != a.places:
        print("FAIL: %d loss lines between the instructions, expected %d" % (lines, a.places))
        return 1
    hay = pack(truth)
    limit = len(truth)
    starts = []
    # from the end: each piece is the latest run of QEMU's that ends before the next
    for n, p in enumerate(reversed(pieces)):
        needle = pack(p)
        pos = hay.rfind(needle, 0, limit * 8)
        while pos >= 0 and pos % 8:
            pos = hay.rfind(needle, 0, pos + len(needle) - 1)
        if pos < 0:
            print("FAIL: piece %d (%d instructions from 0x%x) is not one run of QEMU's: "
                  "instructions are missing inside it with no loss line"
                  % (len(pieces) - n, len(p), p[0]))
            return 1
        at = pos // 8
        if n == 0 and at + len(p) != len(truth):
            print("FAIL: the last piece does not end where the program ended")
            return 1
        if n and at + len(p) >= limit:
            print("FAIL: at loss line %d QEMU's run goes on with no instruction left out"
                  % (len(pieces) - n))
            return 1
        starts.append((at, len(p)))
        limit = at
    if lead and limit == 0:
        print("FAIL: the first loss line comes before QEMU's first instruction")
        return 1
    if not lead and limit != 0:
        print("FAIL: the trace begins %d instructions into QEMU's run with no loss line" % limit)
        return 1
    starts.reverse()
    missing = [starts[0][0]] + [starts[i + 1][0] - sum(starts[i]) for i in range(len(starts) - 1)]
    print("%d loss lines, %d pieces; QEMU instructions left out at each: %s; %d of %d decoded"
          % (lines, len(pieces), " ".join(str(m) for m in (missing if lead else missing[1:])),
             sum(n for _, n in starts), len(truth)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
