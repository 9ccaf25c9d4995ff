#!/usr/bin/env python3
"""Rewrite the AUXTRACE index (feature 18) of perf.data FILE in place into the
layout simpleperf writes: no leading count, then {file offset, 48} per AUXTRACE
record (the record header's size; perf gives the size with the payload). With
'bad', the first offset is moved 8 bytes, off its record.
usage: simpleperf_index.py FILE [bad]"""
import struct
import sys

FEAT_AUXTRACE = 18
path = sys.argv[1]
bad = len(sys.argv) > 2 and sys.argv[2] == "bad"
b = bytearray(open(path, "rb").read())
data_off, data_size = struct.unpack_from("<QQ", b, 40)
bits = struct.unpack_from("<4Q", b, 72)
table, k = data_off + data_size, 0
for bit in range(256):
    if not (bits[bit // 64] >> (bit % 64)) & 1:
        continue
    if bit == FEAT_AUXTRACE:
        ent = table + 16 * k
        off, size = struct.unpack_from("<QQ", b, ent)
        n = struct.unpack_from("<Q", b, off)[0]
        if size != 8 + 16 * n:
            sys.exit("simpleperf_index.py: not perf's layout")
        pairs = [struct.unpack_from("<Q", b, off + 8 + 16 * i)[0] for i in range(n)]
        if bad and pairs:
            pairs[0] += 8
        for i, o in enumerate(pairs):
            struct.pack_into("<QQ", b, off + 16 * i, o, 48)
        struct.pack_into("<Q", b, ent + 8, 16 * n)
        open(path, "wb").write(b)
        sys.exit(0)
    k += 1
sys.exit("simpleperf_index.py: no AUXTRACE index")
