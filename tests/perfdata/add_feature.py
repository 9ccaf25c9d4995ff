#!/usr/bin/env python3
"""Add feature section BIT to a finished perf.data file, as another recorder
would (simpleperf numbers its own from 128): the bit in the header, an entry at
the end of the section table (the sections after it move 16 bytes on) and a
payload at the end of the file; with 'far', an entry pointing past EOF and
larger than any section cstrace reads.
usage: add_feature.py FILE BIT [far]"""
import struct
import sys

path, bit = sys.argv[1], int(sys.argv[2])
far = len(sys.argv) > 3 and sys.argv[3] == "far"
b = bytearray(open(path, "rb").read())
data_off, data_size = struct.unpack_from("<QQ", b, 40)
bits = list(struct.unpack_from("<4Q", b, 72))
n = sum(bin(w).count("1") for w in bits)
if any((bits[i // 64] >> (i % 64)) & 1 for i in range(bit, 256)):
    sys.exit("add_feature.py: only adds a bit above every one set")
table = data_off + data_size
end = table + 16 * n
for i in range(n):
    off, size = struct.unpack_from("<QQ", b, table + 16 * i)
    if off >= end:
        struct.pack_into("<Q", b, table + 16 * i, off + 16)
payload = bytes(range(256)) * 2
entry = (len(b) + 16 + (1 << 40), 1 << 30) if far else (len(b) + 16, len(payload))
b[end:end] = struct.pack("<QQ", *entry)
if not far:
    b += payload
bits[bit // 64] |= 1 << (bit % 64)
struct.pack_into("<4Q", b, 72, *bits)
open(path, "wb").write(b)
