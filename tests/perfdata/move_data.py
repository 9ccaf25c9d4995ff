#!/usr/bin/env python3
"""Copy perf.data IN to OUT with its data section moved to file offset OFFSET, as
a recording that ran long would have it: the header and attributes stay at the
start, the records, the feature table and the feature sections after it move on
(their offsets, and the AUXTRACE index's record offsets, fixed up), the bytes in
between are a hole. OUT is sparse: it costs no disk for the hole.
usage: move_data.py IN OUT OFFSET"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pdfile import data_section, move_features  # noqa: E402

src, dst, new_off = sys.argv[1], sys.argv[2], int(sys.argv[3], 0)
b = bytearray(open(src, "rb").read())
data_off, data_size = data_section(b)
attr_off, attr_size = struct.unpack_from("<QQ", b, 24)
if attr_off + attr_size > data_off or new_off < data_off:
    sys.exit("move_data.py: attributes after the data, or OFFSET before it")
move_features(b, new_off - data_off)
struct.pack_into("<Q", b, 40, new_off)
with open(dst, "wb") as f:
    f.write(b[:data_off])
    f.seek(new_off)
    f.write(b[data_off:])
