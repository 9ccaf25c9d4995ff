#!/usr/bin/env python3
"""Copy perf.data IN to OUT with its data section moved to file offset OFFSET, as
a recording that ran long would have it: the header and attributes stay at the
start, the records, the feature table and the feature sections after it move on
(their offsets, and the AUXTRACE index's record offsets, fixed up), the bytes in
between are a hole. OUT is sparse: it costs no disk for the hole.
usage: move_data.py IN OUT OFFSET"""
import struct
import sys

FEAT_AUXTRACE = 18

src, dst, new_off = sys.argv[1], sys.argv[2], int(sys.argv[3], 0)
b = bytearray(open(src, "rb").read())
data_off, data_size = struct.unpack_from("<QQ", b, 40)
attr_off, attr_size = struct.unpack_from("<QQ", b, 24)
if attr_off + attr_size > data_off or new_off < data_off:
    sys.exit("move_data.py: attributes after the data, or OFFSET before it")
delta = new_off - data_off
bits = struct.unpack_from("<4Q", b, 72)
table = data_off + data_size
nfeat = 0
for bit in range(256):
    if not (bits[bit // 64] >> (bit % 64)) & 1:
        continue
    ent = table + 16 * nfeat
    off, size = struct.unpack_from("<QQ", b, ent)
    if bit == FEAT_AUXTRACE:  # u64 count, then {file offset, size} per AUXTRACE record
        n = struct.unpack_from("<Q", b, off)[0]
        for i in range(n):
            pos = off + 8 + 16 * i
            struct.pack_into("<Q", b, pos, struct.unpack_from("<Q", b, pos)[0] + delta)
    struct.pack_into("<Q", b, ent, off + delta)
    nfeat += 1
struct.pack_into("<Q", b, 40, new_off)
with open(dst, "wb") as f:
    f.write(b[:data_off])
    f.seek(new_off)
    f.write(b[data_off:])
