#!/usr/bin/env python3
# Compares decoded instruction addresses with QEMU's ground truth, instruction for
# instruction: exact (whole run) or suffix (a lossy sink: pieces between gaps).
import argparse, configparser, json, os, re, struct, sys

GAPS = {"no_sync", "addr_nacc", "addr_unknown"}


class Memory:
    """The snapshot's memory dumps: T32 instruction sizes need the first halfword."""

    def __init__(self, snap):
        self.regions = []
        if not snap:
            return
        c = configparser.ConfigParser(strict=False, interpolation=None)
        c.read(os.path.join(snap, "cpu_0.ini"))
        for s in c.sections():
            if s.lower().startswith("dump"):
                with open(os.path.join(snap, c[s]["file"]), "rb") as f:
                    self.regions.append((int(c[s]["address"], 0), f.read()))

    def t32_size(self, a):
        for base, b in self.regions:
            if base <= a and a + 2 <= base + len(b):
                hw = b[a - base] | (b[a - base + 1] << 8)
                return 4 if (hw >> 11) >= 0x1D else 2
        raise SystemExit("no code bytes for T32 address 0x%x" % a)


def expand(start, end, isa, mem, out):
    a = start
    while a < end:
        out.append(a)
        a += mem.t32_size(a) if isa == "T32" else 4


def read_jsonl(path, mem, trace_id=None):
    """Segments of addresses split at gap elements (of one trace ID if given)."""
    segs, cur = [], []
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            if trace_id is not None and e.get("trace_id") != trace_id:
                continue
            t = e.get("type")
            if t == "instr_range":
                expand(e["start"], e["end"], e["isa"], mem, cur)
            elif t in GAPS or (t == "trace_on" and e.get("gap") not in (None, "filter", "none")):
                if cur:
                    segs.append(cur)
                cur = []
    if cur:
        segs.append(cur)
    return segs


RANGE_RE = re.compile(r"exec range=0x([0-9a-f]+):\[0x([0-9a-f]+)\].*\(ISA=(\w+)\)")


def read_lister(path, mem, trace_id=None):
    segs, cur = [], []
    tag = None if trace_id is None else "ID:%x;" % trace_id
    with open(path) as f:
        for line in f:
            if tag and tag not in line:
                continue
            m = RANGE_RE.search(line)
            if m:
                expand(int(m.group(1), 16), int(m.group(2), 16), m.group(3), mem, cur)
            elif "OCSD_GEN_TRC_ELEM_NO_SYNC" in line or "ADDR_NACC" in line or "ADDR_UNKNOWN" in line:
                if cur:
                    segs.append(cur)
                cur = []
    if cur:
        segs.append(cur)
    return segs


def read_ips(path, cpu=None):
    """perf script -F ip (or -F cpu,ip: "[001] 4005c0", kept for @cpu only)."""
    out = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0].startswith("["):
                if cpu is not None and int(w[0].strip("[]")) != cpu:
                    continue
                w = w[1:]
            out.append(int(w[0], 16))
    return [out]


# Element kinds Linux perf's cs-etm decoder puts in its per-trace-ID packet queue
# (tools/perf/util/cs-etm-decoder/cs-etm-decoder.c); the queue holds 1024 slots and
# perf answers OpenCSD with WAIT when the 1023rd is filled.
PERF_QUEUED = {"no_sync", "trace_on", "end_of_trace", "instr_range", "exception",
               "exception_return"}
PERF_QUEUE_WAIT = 1023


def perf_tail_loss(path, mem, trace_id, kept, total):
    """Whether perf stopping after @kept of @total instructions is its known loss.

    perf decodes an AUX buffer with OCSD_OP_DATA until OpenCSD has consumed every
    byte; if OpenCSD is told WAIT (queue full) while handling the buffer's last
    bytes, perf drains the queue and never sends the FLUSH that would release the
    elements OpenCSD still holds: they are lost (perf has no EOT either).  That
    happens only when the last kept instruction ends the element that filled the
    queue, and the lost elements all come from the last frame of trace.  Without
    timestamps only (perf may also WAIT on those) and for one AUX buffer."""
    elems = []
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            if trace_id is not None and e.get("trace_id") != trace_id:
                continue
            if e.get("type") == "timestamp":
                return None
            if e.get("type") in PERF_QUEUED:
                elems.append(e)
    done = 0
    for k, e in enumerate(elems, 1):
        if e["type"] == "instr_range":
            n = []
            expand(e["start"], e["end"], e["isa"], mem, n)
            done += len(n)
        if done < kept:
            continue
        if done > kept or k % PERF_QUEUE_WAIT:
            return None
        lost = [x for x in elems[k:] if x["type"] == "instr_range"]
        last = max(x["offset"] for x in elems)
        if any(x["offset"] < e["offset"] or x["offset"] < last - 16 for x in lost):
            return None
        return "perf lost the last %d instructions: its packet queue filled (element #%d) " \
               "on the buffer's last bytes and it never flushed OpenCSD" % (total - kept, k)
    return None


def perf_held_loss(path, trace_id, kept, total):
    """Whether perf stopping one instruction short is OpenCSD's held instruction.

    OpenCSD 1.3.3's ETMv3 decoder holds a P-header's last instruction back in case
    the next packet cancels it; only the next packet or the end of trace releases it.
    perf 6.1 sends no end of trace, so where an AUX buffer's trace ends in a P-header
    (a filter's last stretch leaving ViewInst at a branch) that instruction never
    comes out there; cstrace's decode has it as its last range."""
    last = None
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            if trace_id is not None and e.get("trace_id") != trace_id:
                continue
            if e.get("type") not in ("end_of_trace", "timestamp"):
                last = e
    if kept + 1 == total and last and last["type"] == "instr_range" and \
            last["isa"] in ("A32", "T32") and last["insns"] == 1:
        return "perf lost the last instruction: OpenCSD holds an ETMv3 P-header's last " \
               "instruction for a cancel and perf never ends the trace to release it"
    return None


def pack(seq):
    return struct.pack(">%dQ" % len(seq), *seq)


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", required=True)
    ap.add_argument("--jsonl")
    ap.add_argument("--lister")
    ap.add_argument("--ips")
    ap.add_argument("--snapshot")
    ap.add_argument("--mode", choices=["exact", "suffix"], default="exact")
    ap.add_argument("--min-segments", type=int, default=1)
    ap.add_argument("--also-ips", help="perf script ips that must equal the decode")
    ap.add_argument("--trace-id", type=lambda x: int(x, 0), help="only this trace ID")
    ap.add_argument("--cpu", type=int, help="perf script lines of this CPU only")
    ap.add_argument("--perf-queue", metavar="JSONL",
                    help="cstrace's decode of the perf.data given to --ips: excuses only "
                         "perf's own end-of-buffer loss (see perf_tail_loss)")
    a = ap.parse_args()
    mem = Memory(a.snapshot)
    with open(a.truth) as f:
        truth = [int(x, 16) for x in f if x.strip()]
    if a.jsonl:
        segs = read_jsonl(a.jsonl, mem, a.trace_id)
    elif a.lister:
        segs = read_lister(a.lister, mem, a.trace_id)
    else:
        segs = read_ips(a.ips, a.cpu)
    if a.also_ips:
        flat = [x for s in segs for x in s]
        ips = read_ips(a.also_ips, a.cpu)[0]
        if ips == flat:
            print("perf script: the same %d instructions" % len(ips))
        elif a.mode == "exact":
            i = first_diff(ips, flat)
            print("MISMATCH: perf script gave %d instructions, the decode %d; first difference at #%d"
                  % (len(ips), len(flat), i))
            return 1
        else:
            # Around losses perf may drop the instructions OpenCSD still held when a
            # fragment ended (it resets without flushing): its output must still be
            # the decode's instructions in order, with only a few of them left out.
            j = 0
            for x in ips:
                while j < len(flat) and flat[j] != x:
                    j += 1
                if j == len(flat):
                    print("MISMATCH: perf script's instructions are not the decode's, in order")
                    return 1
                j += 1
            dropped = len(flat) - len(ips)
            print("perf script: %d instructions, %d fewer than the decode, none different"
                  % (len(ips), dropped))
            if dropped > max(64, len(flat) // 20):
                print("FAIL: perf script dropped too many instructions")
                return 1
    if a.mode == "exact":
        got = [x for s in segs for x in s]
        if got == truth:
            print("exact: %d instructions identical" % len(truth))
            return 0
        i = first_diff(got, truth)
        why = None
        if a.perf_queue and i == len(got) < len(truth):
            why = perf_tail_loss(a.perf_queue, mem, a.trace_id, len(got), len(truth)) or \
                perf_held_loss(a.perf_queue, a.trace_id, len(got), len(truth))
        if why:
            print("exact but for perf's known loss: %s" % why)
            return 0
        print("MISMATCH: decoded %d, QEMU %d, first difference at #%d" % (len(got), len(truth), i))
        print("  decoded: %s" % " ".join("%x" % x for x in got[max(0, i - 3):i + 4]))
        print("  QEMU:    %s" % " ".join("%x" % x for x in truth[max(0, i - 3):i + 4]))
        return 1
    # suffix: every piece is a contiguous run of the truth, pieces in order, the last
    # one ends where the program ended.
    segs = [s for s in segs if s]
    if len(segs) < a.min_segments:
        print("FAIL: %d decoded pieces, expected at least %d" % (len(segs), a.min_segments))
        return 1
    hay = pack(truth)
    limit = len(truth)
    covered = 0
    for n, s in enumerate(reversed(segs)):
        needle = pack(s)
        end = limit * 8
        pos = hay.rfind(needle, 0, end)
        while pos >= 0 and pos % 8:
            pos = hay.rfind(needle, 0, pos + len(needle) - 1)
        if pos < 0:
            print("FAIL: decoded piece %d (%d instructions from 0x%x) is not in QEMU's run"
                  % (len(segs) - n, len(s), s[0]))
            return 1
        if n == 0 and pos // 8 + len(s) != len(truth):
            print("FAIL: the last piece does not end where the program ended")
            return 1
        limit = pos // 8
        covered += len(s)
    print("suffix: %d pieces, %d of %d instructions decoded (%.1f%%), first at #%d"
          % (len(segs), covered, len(truth), 100.0 * covered / max(1, len(truth)), limit))
    return 0


if __name__ == "__main__":
    sys.exit(main())
