"""scribble_aux.py IN OUT: OUT is perf.data IN with random bytes (the same each
run) over the middle half of its largest AUXTRACE payload, at most 2,000 of them:
corrupt trace, never a record header (random bytes over the middle of the file
may hit one in a file of many small records, and then the file is cut short, not
its trace)."""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pdfile  # noqa: E402

b = bytearray(open(sys.argv[1], "rb").read())
best = None
for payload in pdfile.auxtrace_payloads(b, sys.argv[1]):
    if best is None or payload[1] > best[1]:
        best = payload
if best is None:
    sys.exit("%s: no AUXTRACE payload" % sys.argv[1])
start, size = best
n = min(2000, size // 2)
random.seed(1)
for i in range(n):
    b[start + (size - n) // 2 + i] = random.randrange(256)
open(sys.argv[2], "wb").write(b)
