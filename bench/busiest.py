#!/usr/bin/env python3
"""Run a command and say how its CPU time was shared among its threads.

usage: bench/busiest.py CMD [ARGS...]

Prints "BUSIEST TOTAL SHARE": the CPU seconds (user + system) of the thread that
used the most, of all threads together, and the first over the second. On a
machine with more cores than threads a run takes at least the busiest thread's
time, so this is what bounds a run however many cores it gets (a design where
every element passes one thread shows here, not in wall time on two cores).
Threads of the command and of its children are sampled from /proc every 20
ms; a thread's last 20 ms before it ends can be missed. The command's output goes to /dev/null; exit status is its own.
"""
import os
import resource
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def descendants(pid):
    """@pid and the processes under it (cstrace decodes in a child of its own,
    which a crash of OpenCSD ends)."""
    parent = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        parent[int(d)] = int(stat[stat.rfind(")") + 2:].split()[1])
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(c for c, pp in parent.items() if pp == p)
    return out


def thread_times(pid):
    """CPU ticks of each live thread of @pid, by thread ID."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # the fields after the command name, which may hold spaces
        fields = stat[stat.rfind(")") + 2:].split()
        out[tid] = int(fields[11]) + int(fields[12])  # utime, stime
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
    seen = {}
    polls = 0
    while proc.poll() is None:
        # the processes change seldom: looked for every 10th poll, since
        # reading all of /proc every time took CPU from the run measured
        if polls % 10 == 0:
            pids = descendants(proc.pid)
        polls += 1
        for pid in pids:
            for tid, ticks in thread_times(pid).items():
                seen[tid] = max(seen.get(tid, 0), ticks)
        time.sleep(0.02)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if not seen:
        sys.exit("busiest.py: no thread of the command was seen")
    busiest = max(seen.values()) / TICK
    total = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"{busiest:.2f} {total:.2f} {busiest / total if total else 0:.2f}")
    sys.exit(proc.returncode or 0)


if __name__ == "__main__":
    main()
