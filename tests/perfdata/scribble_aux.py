"""scribble_aux.py IN OUT: OUT is perf.data IN with random bytes (the same each
run) over the middle half of its largest AUXTRACE payload, at most 2,000 of them:
corrupt trace, never a record header (random bytes over the middle of the file
may hit one in a file of many small records, and then the file is cut short, not
its trace)."""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pdfile  # noqa: E402

PERF_RECORD_AUXTRACE = 71

b = bytearray(open(sys.argv[1], "rb").read())
data_off, data_size = pdfile.data_section(b)
pos, end, best = data_off, data_off + data_size, None
while pos + 8 <= end:
    rtype, _misc, hsize = struct.unpack_from("<IHH", b, pos)
    if hsize < 8:
        sys.exit("%s: record at %d has size %d" % (sys.argv[1], pos, hsize))
    psize = struct.unpack_from("<Q", b, pos + 8)[0] if rtype == PERF_RECORD_AUXTRACE else 0
    if psize and (best is None or psize > best[1]):
        best = (pos + hsize, psize)
    pos += hsize + psize
if best is None:
    sys.exit("%s: no AUXTRACE payload" % sys.argv[1])
start, size = best
n = min(2000, size // 2)
random.seed(1)
for i in range(n):
    b[start + (size - n) // 2 + i] = random.randrange(256)
open(sys.argv[2], "wb").write(b)
