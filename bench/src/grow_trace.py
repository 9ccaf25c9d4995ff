#!/usr/bin/env python3
"""Grow a synthesized trace to SIZE bytes by repeating its trace: for memory
benchmarks that need a 1 GiB input without a 1 GiB QEMU run.
  grow_trace.py snap DIR OUT_DIR SIZE   a snapshot: its buffer file repeated
  grow_trace.py perf IN OUT SIZE        a perf.data with one AUX record and one
                                        AUXTRACE buffer: the payload repeated, the
                                        records and the feature sections fixed up
Each copy of the trace starts with the same synchronisation, so a decoder reads it
as that run again and again: the work and the output grow with SIZE."""
import os
import shutil
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "tests", "perfdata"))
from pdfile import data_section, move_features  # noqa: E402

AUX, AUXTRACE = 11, 71
mode, src, dst, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4], 0)


def repeat_to(payload, out, size):
    n = max(1, size // len(payload))
    for _ in range(n):
        out.write(payload)
    return n * len(payload)


if mode == "snap":
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    buf = os.path.join(dst, "cstrace.bin")
    payload = open(os.path.join(src, "cstrace.bin"), "rb").read()
    payload = payload[:len(payload) // 16 * 16]  # whole frames
    with open(buf, "wb") as f:
        got = repeat_to(payload, f, size)
    print(got)
    sys.exit(0)

b = bytearray(open(src, "rb").read())
data_off, data_size = data_section(b)
pos, aux, at = data_off, None, None
while pos < data_off + data_size:
    typ, _misc, rsize = struct.unpack_from("<IHH", b, pos)
    if typ == AUX:
        if aux is not None:
            sys.exit("grow_trace.py: more than one AUX record")
        aux = pos
    if typ == AUXTRACE:
        if at is not None:
            sys.exit("grow_trace.py: more than one AUXTRACE buffer")
        at = pos
        pos += struct.unpack_from("<Q", b, pos + 8)[0]
    pos += rsize
if aux is None or at is None:
    sys.exit("grow_trace.py: no AUX record or AUXTRACE buffer")
plen = struct.unpack_from("<Q", b, at + 8)[0]
payload = bytes(b[at + 48:at + 48 + plen])
n = max(1, size // plen)
grown = n * plen
delta = grown - plen
struct.pack_into("<Q", b, at + 8, grown)           # AUXTRACE size
struct.pack_into("<Q", b, aux + 16, grown)         # AUX aux_size
move_features(b, delta, index_from=at + 1)
struct.pack_into("<Q", b, 48, data_size + delta)
with open(dst, "wb") as f:
    f.write(b[:at + 48])
    for _ in range(n):
        f.write(payload)
    f.write(b[at + 48 + plen:])
print(grown)
