#!/usr/bin/env python3
"""Rewrite the AUXTRACE index (feature 18) of perf.data FILE in place into the
layout simpleperf writes: no leading count, then {file offset, 48} per AUXTRACE
record (48: the record header's size, as in perf's layout). With
'bad', the first offset is moved 8 bytes, off its record.
usage: simpleperf_index.py FILE [bad]"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pdfile import FEAT_AUXTRACE, features  # noqa: E402

path = sys.argv[1]
bad = len(sys.argv) > 2 and sys.argv[2] == "bad"
b = bytearray(open(path, "rb").read())
for bit, ent, off, size in features(b):
    if bit != FEAT_AUXTRACE:
        continue
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
sys.exit("simpleperf_index.py: no AUXTRACE index")
