#!/usr/bin/env python3
"""Copy perf.data IN to OUT as a recording on a board whose ETMs count the kernel's
clock would be: every ETMv4/ETE block's TS_SOURCE set to 1, and a TIME_CONV record
(perf record copies it from the event's mmap page) put before AUXTRACE_INFO, where
perf record writes it and where perf must have read it. The records after it, the
AUXTRACE index and the feature sections move on by its size.
usage: time_conv.py IN OUT SHIFT MULT ZERO [CYCLES MASK]   (CYCLES MASK: a short counter)
With --ticks-to-ns SHIFT MULT ZERO [CYCLES MASK] it reads tick values on standard
input and prints perf's time of each in ns instead (tsc_to_perf_time, written out
here on its own for the tests to compare with)."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pdfile import data_section, move_features  # noqa: E402

AUXTRACE_INFO, AUXTRACE, TIME_CONV = 70, 71, 79
ETMV4_MAGIC, ETE_MAGIC = 0x4040404040404040, 0x5050505050505050
M64 = (1 << 64) - 1


def to_ns(t, shift, mult, zero, cycles=None, mask=None):
    if cycles is not None:
        t = (cycles + ((t - cycles) & mask)) & M64
    mult &= 0xFFFFFFFF
    quot, rem = t >> shift, t & ((1 << shift) - 1)
    return (zero + quot * mult + ((rem * mult) >> shift)) & M64


if sys.argv[1] == "--ticks-to-ns":
    a = [int(x, 0) for x in sys.argv[2:]]
    for line in sys.stdin:
        print(to_ns(int(line), *a))
    sys.exit(0)

src, dst = sys.argv[1], sys.argv[2]
shift, mult, zero = (int(x, 0) for x in sys.argv[3:6])
short = len(sys.argv) > 6
cycles, mask = (int(x, 0) for x in sys.argv[6:8]) if short else (0, 0)
b = bytearray(open(src, "rb").read())
data_off, data_size = data_section(b)

# find AUXTRACE_INFO, set TS_SOURCE (the 8th ETMv4 parameter, the 9th of ETE)
pos, at, patched = data_off, None, 0
while pos < data_off + data_size:
    typ, misc, size = struct.unpack_from("<IHH", b, pos)
    if size < 8:
        sys.exit("time_conv.py: bad record at %d" % pos)
    if typ == AUXTRACE_INFO and at is None:
        at = pos
        priv = pos + 16
        version = struct.unpack_from("<Q", b, priv)[0]
        nr_cpu = struct.unpack_from("<Q", b, priv + 8)[0] & 0xFFFFFFFF
        if version not in (1, 2):
            sys.exit("time_conv.py: AUXTRACE_INFO version %d has no TS_SOURCE" % version)
        w = priv + 24
        for _ in range(nr_cpu):
            magic, _cpu, nparams = struct.unpack_from("<QQQ", b, w)
            k = {ETMV4_MAGIC: 7, ETE_MAGIC: 8}.get(magic)
            if k is not None and nparams > k:
                struct.pack_into("<Q", b, w + 24 + 8 * k, 1)
                patched += 1
            w += 24 + 8 * nparams
    pos += size + (struct.unpack_from("<Q", b, pos + 8)[0] if typ == AUXTRACE else 0)
if at is None or not patched:
    sys.exit("time_conv.py: no ETMv4/ETE AUXTRACE_INFO to patch")

rec = struct.pack("<IHHQQQQQBB6x", TIME_CONV, 0, 56, shift, mult, zero, cycles, mask,
                  1, 1 if short else 0)
n = len(rec)
move_features(b, n, index_from=at)
struct.pack_into("<Q", b, 48, data_size + n)
open(dst, "wb").write(bytes(b[:at]) + rec + bytes(b[at:]))
