#!/usr/bin/env python3
"""Copy perf.data IN to OUT with a decoy mapping: a copy of the MMAP2 record of the
file NAME (the traced program), put right after it, that maps DECOY over the same
addresses for process PID (another process, or the program's own with --own). Code
is read from the traced process's maps first, then from any process's, newest first:
a decoder that loses track of whose trace it decodes reads the decoy. The records
after it, the AUXTRACE index and the feature sections move on by its size.
usage: decoy_mmap.py IN OUT NAME DECOY PID"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pdfile import data_section, move_features  # noqa: E402

MMAP2, AUXTRACE = 10, 71
MISC_MMAP_BUILD_ID = 1 << 14

src, dst, name, decoy, pid = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
b = bytearray(open(src, "rb").read())
data_off, data_size = data_section(b)
pos, found = data_off, None
while pos < data_off + data_size:
    typ, misc, size = struct.unpack_from("<IHH", b, pos)
    if size < 8:
        sys.exit("decoy_mmap.py: bad record at %d" % pos)
    if typ == MMAP2 and found is None:
        fn = b[pos + 72:pos + size].split(b"\0")[0].decode()
        if fn == name:
            found = (pos, misc, size)
    pos += size + (struct.unpack_from("<Q", b, pos + 8)[0] if typ == AUXTRACE else 0)
if found is None:
    sys.exit("decoy_mmap.py: no MMAP2 of %s" % name)
pos, misc, size = found
old = bytes(b[pos:pos + size])
name_len = len(old[72:].split(b"\0")[0])
fixed_end = 72 + (name_len + 8) // 8 * 8   # the name, NUL-padded to 8 bytes
trailer = old[fixed_end:]                  # sample_id
fname = decoy.encode() + b"\0"
fname += b"\0" * (-len(fname) % 8)
rec = bytearray(old[:72]) + fname + trailer
struct.pack_into("<IHH", rec, 0, MMAP2, misc & ~MISC_MMAP_BUILD_ID, len(rec))
struct.pack_into("<II", rec, 8, pid, pid)
rec[40:64] = bytes(24)  # maj, min, ino, ino_generation: no build-id for the decoy
at = pos + size
move_features(b, len(rec), index_from=at)
struct.pack_into("<Q", b, 48, data_size + len(rec))
open(dst, "wb").write(bytes(b[:at]) + bytes(rec) + bytes(b[at:]))
