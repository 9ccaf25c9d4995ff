"""Write ftrace text for `cstrace aux --ftrace` from a perf.data's own AUX records.

usage: ftrace.py PERF.DATA REMOVE LATE FORM OUT_TEXT OUT_DATA
       ftrace.py --kernel-only PERF.DATA OUT_TEXT
The second form writes only the kernel's writes, each at its AUX record's own sample
time (the kernel's clock, as ftrace's): the consumer's side then comes from cstrace's
consumer log.
Every AUX record becomes a perf_aux_output_end kprobe line (old_head, size), 1 ms
apart; the consumer (pid 4242) is woken and reads after every second write, except
that from write LATE it sleeps for six writes (its read comes too late: the unread
backlog passes the ring). AUX record number REMOVE is taken out of OUT_DATA (its type
becomes one no reader knows), so that write is one no AUX record reports.
FORM is 'line' (the trace file: one line per event) or 'wrapped' (trace-cmd report,
fields wrapped onto a second line). Prints the expected findings as lines of
"key value" for the test to compare."""
import struct
import sys

kernel_only = sys.argv[1] == "--kernel-only"
if kernel_only:
    perf, out_text = sys.argv[2], sys.argv[3]
else:
    perf, remove, late, form, out_text, out_data = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
d = bytearray(open(perf, "rb").read())
data_off, data_size = struct.unpack_from("<QQ", d, 40)
pos, recs = data_off, []
while pos + 8 <= data_off + data_size:
    typ, misc, size = struct.unpack_from("<IHH", d, pos)
    if size < 8:
        break
    if typ == 11:
        off, sz, flags = struct.unpack_from("<QQQ", d, pos + 8)
        # trailer: tid, time, cpu, identifier
        recs.append((pos, off, sz, struct.unpack_from("<Q", d, pos + size - 24)[0]))
    if typ == 71:  # AUXTRACE: its payload follows the record
        pos += struct.unpack_from("<Q", d, pos + 8)[0]
    pos += size
if kernel_only:
    with open(out_text, "w") as f:
        f.write("# tracer: nop\n")
        for _, off, sz, t in recs:
            f.write("         prog-42 [000] d..1. %d.%09d: aux_end: (perf_aux_output_end+0x0/0x1c8) "
                    "old_head=0x%x size=0x%x\n" % (t // 10**9, t % 10**9, off, sz))
    print("writes %d" % len(recs))
    print("bytes %d" % sum(r[2] for r in recs))
    sys.exit(0)
struct.pack_into("<I", d, recs[remove][0], 0x7ead)
open(out_data, "wb").write(d)

lines, t, tail, reads = [], 100.0, recs[0][1], 0
def emit(comm_pid, cpu, ts, name, fields):
    if form == "line":
        lines.append("%16s [%03d] d..1. %.6f: %s: %s" % (comm_pid, cpu, ts, name, fields))
    else:
        lines.append("%16s [%03d] %.6f: %s:" % (comm_pid, cpu, ts, name))
        lines.append("      " + fields)

lines.append("# tracer: nop")
overflow_at = None
sleep_until = late + 6
for i, (_, off, sz, _t) in enumerate(recs):
    t += 0.001
    emit("prog-77", 0, t, "aux_end", "(perf_aux_output_end+0x0/0x1c8) old_head=0x%x size=0x%x" % (off, sz))
    if overflow_at is None and off + sz - tail >= 16384:
        overflow_at = t
    if i % 2 == 1 and not (late <= i < sleep_until):
        emit("prog-77", 0, t + 0.0001, "sched_waking", "comm=cstrace pid=4242 prio=120 target_cpu=001")
        emit("<idle>-0", 1, t + 0.0002, "sched_wakeup", "comm=cstrace pid=4242 prio=120 target_cpu=001")
        emit("cstrace-4242", 1, t + 0.0003, "tracing_mark_write",
             "__auxtrace_mmap__read: old_offset=0x%x head_offset=0x%x size=0x%x" % (tail, off + sz, off + sz - tail))
        tail = off + sz
        reads += 1
open(out_text, "w").write("\n".join(lines) + "\n")
print("removed_time %.6f" % (100.0 + 0.001 * (remove + 1)))
print("removed_old 0x%x" % recs[remove][1])
print("overflow_time %.6f" % overflow_at)
print("writes %d" % len(recs))
print("reads %d" % reads)
