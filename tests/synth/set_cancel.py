#!/usr/bin/env python3
# Sets the cancel bit of every ETMv3 exception in a CoreSight-formatted buffer:
# QEMU's runs never cancel an instruction, so this makes the trace of a core whose
# exceptions cut the P-header's last instruction short, for the decoders to agree on.
#
# usage: set_cancel.py BUFFER DUMP OUT
#   BUFFER: a snapshot's trace buffer, or a perf.data (its AUXTRACE payloads)
#   DUMP: `cstrace dump` of BUFFER's snapshot or of the perf.data ("Idx:N; ID:I;
#   [0x.. ...]; text" lines, N counting from the start of the file); the
#   branch-address packets with "Exception=" there name where each starts.
# Prints how many exception bytes it changed.
import os, re, sys

buf_path, dump_path, out_path = sys.argv[1:4]
buf = bytearray(open(buf_path, "rb").read())

# where frames start: the whole buffer, or each AUXTRACE record's payload
regions = [(0, len(buf))]
if buf[:8] == b"PERFILE2":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "perfdata"))
    import pdfile
    regions = list(pdfile.auxtrace_payloads(buf, buf_path))

# the data bytes of each trace ID, with where each sits in the buffer (16-byte frames:
# bytes 0-14, with byte 15 holding bit 0 of the data bytes at even positions)
data = {}
frames = [f for start, size in regions for f in range(start, start + size - 15, 16)]
cur = None
for f in frames:
    flags = buf[f + 15]
    for i in range(15):
        b = buf[f + i]
        if i % 2 == 0 and b & 1:
            nxt = b >> 1
            # flag set: the next byte is still the old ID's
            if flags >> (i // 2) & 1 and i + 1 < 15 and cur is not None:
                data.setdefault(cur, []).append((f + i + 1, buf[f + i + 1]))
                cur = nxt
                continue
            cur = nxt
            continue
        if i % 2 == 1 and i >= 1 and buf[f + i - 1] & 1 and flags >> ((i - 1) // 2) & 1:
            continue  # taken above, for the ID before
        val = (b & 0xFE) | (flags >> (i // 2) & 1) if i % 2 == 0 else b
        if cur is not None:
            data.setdefault(cur, []).append((f + i, val))

pkt = re.compile(r"^Idx:(\d+); ID:([0-9a-fA-F]+); \[([^\]]*)\];.*Exception=")
changed = 0
for line in open(dump_path):
    m = pkt.match(line)
    if not m:
        continue
    idx, tid = int(m.group(1)), int(m.group(2), 16)
    raw = [int(x, 16) for x in m.group(3).split()]
    seq = data.get(tid, [])
    # OpenCSD's index of a packet in formatted data is near its first byte, not
    # always on it: the run of the packet's bytes nearest to it
    near = [k for k, (off, _) in enumerate(seq) if abs(off - idx) <= 16 and
            [v for _, v in seq[k:k + len(raw)]] == raw]
    if not near:
        sys.exit("%s: the packet at %d is not where the frames put it" % (buf_path, idx))
    start = min(near, key=lambda k: abs(seq[k][0] - idx))
    # the exception byte: the first after the address whose byte 5 (or the last
    # address byte) says exception bytes follow; for the plain 5-byte address form
    # synth writes, the last byte of the packet
    off, val = seq[start + len(raw) - 1]
    if val & 0x80:
        sys.exit("%s: the packet at %d has more exception bytes" % (buf_path, idx))
    buf[off] |= 0x20  # bit 5 of exception byte 0: cancel (bit 0 of even bytes is elsewhere)
    changed += 1

open(out_path, "wb").write(buf)
print(changed)
