#!/usr/bin/env python3
"""Resource bounds on every input kind: for each, an input of size N and one of k*N
(the same records, fragments, frames or lines repeated) go through the verbs that
read it, and cstrace's peak RSS must stay under a fixed bound plus a constant times
the input's size, and its CPU time (user + sys, the lower of two runs, so that a
loaded machine does not count) must grow at most linearly: the k*N run may take
k*2.5 times the N run (plus a fixed slack), where a quadratic step would take k*k.
Small files that claim huge sizes or counts are run too, under the fixed bound.
usage: resource_bounds.py PERF_GEN A64_ELF"""
import os
import shutil
import subprocess
import sys
import tempfile

CSTRACE = os.environ["CSTRACE"]
SRC = os.environ["CSTRACE_SOURCE_DIR"]
GEN, A64 = sys.argv[1], sys.argv[2]
K = 8
# Sanitized builds (scripts/sanitize.sh) carry ASan's quarantine and shadow: a larger
# fixed part; the per-byte part and the time ratio are the same.
SANITIZED = os.environ.get("CSTRACE_SANITIZED") == "1"
FIXED_KB = 300_000 if SANITIZED else 60_000
PER_BYTE = 4  # RSS may grow 4 bytes per input byte (mmap'd input, decode buffers)
SLACK_S = 0.15
fails = 0
checks = 0


def fail(msg):
    global fails
    fails += 1
    print("FAIL: " + msg, file=sys.stderr)


def run(args, env=None):
    """(peak RSS in KiB, user+sys seconds) of cstrace ARGS: the lower of two runs."""
    best = None
    for _ in range(2):
        with open(os.devnull, "wb") as null:
            p = subprocess.Popen([CSTRACE] + args, stdout=null, stderr=null,
                                 env=dict(os.environ, **(env or {})))
            _, status, ru = os.wait4(p.pid, 0)
        if os.WIFSIGNALED(status):
            fail("%s: killed by signal %d" % (" ".join(args), os.WTERMSIG(status)))
        m = (ru.ru_maxrss, ru.ru_utime + ru.ru_stime)
        best = m if best is None else (min(best[0], m[0]), min(best[1], m[1]))
    return best


def size_of(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
    return os.path.getsize(path)


def scaled(name, make, verb, per_byte=PER_BYTE):
    """make(n) -> input path; verb(path) -> cstrace args. Checks N against K*N, the
    peak RSS against FIXED_KB + per_byte x the input's size."""
    global checks
    small, big = make(1), make(K)
    (rss1, t1), (rss2, t2) = run(verb(small)), run(verb(big))
    s1, s2 = size_of(small), size_of(big)
    print("%-34s %9d B: %7d KiB %6.2f s | %9d B: %7d KiB %6.2f s (x%.1f)"
          % (name, s1, rss1, t1, s2, rss2, t2, t2 / max(t1, 0.001)))
    checks += 2
    for size, rss in ((s1, rss1), (s2, rss2)):
        if rss > FIXED_KB + per_byte * size / 1024:
            fail("%s: %d KiB peak RSS on %d bytes (bound %d KiB + %g x size)"
                 % (name, rss, size, FIXED_KB, per_byte))
    # the start-up both runs share is taken off first, or it would hide a square
    if t2 - T0 > K * 2.5 * max(t1 - T0, 0.01) + SLACK_S:
        fail("%s: %.2f s CPU on %d x the input that took %.2f s (more than linear; "
             "start-up %.2f s)" % (name, t2, K, t1, T0))


def claim(name, path, verb):
    """A small input claiming something huge: the fixed bound and a second of CPU."""
    global checks
    rss, t = run(verb(path))
    print("%-34s %9d B: %7d KiB %6.2f s" % (name, size_of(path), rss, t))
    checks += 2
    if rss > FIXED_KB + PER_BYTE * size_of(path) / 1024:
        fail("%s: %d KiB peak RSS on a %d-byte input" % (name, rss, size_of(path)))
    if t > 1.0 + SLACK_S:
        fail("%s: %.2f s CPU on a %d-byte input" % (name, t, size_of(path)))


TMP = tempfile.mkdtemp()
try:
    SAMPLE = os.path.join(SRC, "testdata/sample/a64-loop")
    with open(os.path.join(SAMPLE, "cstrace.bin"), "rb") as f:
        FRAMES = f.read()
    IMAGE = os.path.join(SAMPLE, "mem_0.bin")
    T0 = run(["decode", "--format=none", SAMPLE])[1]

    # --- perf.data: AUXTRACE fragments, each with its own AUX record
    def perf(n):
        out = os.path.join(TMP, "f%d.data" % n)
        if not os.path.exists(out):
            subprocess.run([GEN, "--elf", A64, "--out", out, "--proto", "etmv4",
                            "--cpu-wide", "--fragments", str(4000 * n)], check=True,
                           stdout=subprocess.DEVNULL)
        return out
    if os.path.exists(A64):
        for verb in (["decode", "--format=none"], ["script", "--insn"], ["report"],
                     ["dump"]):
            scaled("perf.data " + verb[0], perf, lambda p, v=verb: v + [p])
        # In perf's time order a queue that never gives a timestamp holds all it
        # decodes until it ends: in memory, 316 MB for 60,000 of these fragments.
        # On threads, the queues run ahead of the merge, and what a queue records
        # while it waits for its first timestamp was once unbounded too.
        for verb in (["script", "--raw", "--insn", "--order=time"],
                     ["report", "--order=time"],
                     ["script", "--raw", "--insn", "--order=time", "--threads", "2"],
                     ["decode", "--format=none", "--order=time", "--threads", "2"]):
            scaled("perf.data %s, time order%s" % (verb[0], ", 2 threads" * ("--threads" in verb)),
                   perf, lambda p, v=verb: v + [p])
    else:
        print("no AArch64 test program: perf.data left out")

    # --- snapshot directory: the sample's buffer repeated (frames stay aligned)
    def snap(n):
        d = os.path.join(TMP, "snap%d" % n)
        if not os.path.exists(d):
            shutil.copytree(SAMPLE, d)
            with open(os.path.join(d, "cstrace.bin"), "wb") as f:
                f.write(FRAMES * 200 * n)
        return d
    for verb in (["decode", "--format=none"], ["dump"], ["report"]):
        scaled("snapshot " + verb[0], snap, lambda p, v=verb: v + [p])

    # --- one buffer cut into many chunks for threads: each chunk's head (the
    # elements the worker before compares its overlap with) was kept to the end,
    # up to 20 KB a chunk: 278 MB for 1 GiB in 64 KiB chunks. Nothing else grows
    # with the input here, so the bound is tighter than the input's size.
    def snap_chunks(n):
        d = os.path.join(TMP, "snapchunks%d" % n)
        if not os.path.exists(d):
            shutil.copytree(SAMPLE, d)
            with open(os.path.join(d, "cstrace.bin"), "wb") as f:
                f.write(FRAMES * 200 * 48 * n)
        return d
    scaled("snapshot decode, 1 KiB chunks", snap_chunks,
           lambda p: ["decode", "--format=none", "--threads", "2", "--chunk-size", "1K", p],
           per_byte=0.5)

    # --- snapshot whose device list names one device file many times
    def snap_devices(n):
        d = os.path.join(TMP, "snapdev%d" % n)
        if not os.path.exists(d):
            shutil.copytree(SAMPLE, d)
            with open(os.path.join(d, "snapshot.ini"), "a") as f:
                f.write("[device_list]\n")
                for i in range(6000 * n):
                    f.write("extra%d=cpu_0.ini\n" % i)
        return d
    scaled("snapshot 6000 device entries", snap_devices, lambda p: ["decode", "--format=none", p])

    # --- raw sink dump with an ETMv4 source and the sample's code as an image
    def raw(n):
        out = os.path.join(TMP, "raw%d.bin" % n)
        if not os.path.exists(out):
            with open(out, "wb") as f:
                f.write(FRAMES * 200 * n)
        return out
    RAW = ["--etmv4", "traceid=0x10,trcconfigr=0xc1", "--image", IMAGE + "@0x400000"]
    for verb in (["decode", "--format=none"], ["dump"]):
        scaled("raw dump " + verb[0], raw, lambda p, v=verb: v + RAW + [p])
    for fmt in ("tpiu", "dstream"):
        scaled("raw dump --raw-format " + fmt, raw,
               lambda p, f=fmt: ["decode", "--format=none", "--raw-format", f] + RAW + [p])

    # --- board profile: many devices, and a note continued over many lines
    with open(os.path.join(SRC, "boards/stm32mp157.ini")) as f:
        BOARD = f.read()

    def board(n):
        d = os.path.join(TMP, "boards%d" % n)
        if not os.path.exists(d):
            os.mkdir(d)
            with open(os.path.join(d, "big.ini"), "w") as f:
                f.write(BOARD)
                for i in range(2000 * n):
                    f.write("[cti cti_x%d]\nbase = 0x%x\ncompatible = arm,coresight-cti\n"
                            % (i, 0x60000000 + i * 0x1000))
                f.write("[tpiu tpiu2]\nbase = 0x5fff0000\nnote = a long note\n")
                for i in range(2000 * n):
                    f.write("    continued on line %d\n" % i)
        return d
    scaled("board profile show", board, lambda d: ["boards", "show", "big", "--boards-dir", d])
    scaled("board profile sources", board,
           lambda d: ["boards", "sources", "big", "--boards-dir", d])

    # --- small inputs claiming huge sizes or counts
    d = snap(1) + "-claims"
    shutil.copytree(snap(1), d)
    with open(os.path.join(d, "cpu_0.ini")) as f:
        cpu = f.read()
    with open(os.path.join(d, "cpu_0.ini"), "w") as f:
        f.write(cpu.replace("length=0x194", "length=0xffffffffffff"))
    claim("snapshot dump length 2^48", d, lambda p: ["decode", "--format=none", p])
    raw1 = raw(1)
    claim("raw --image length 2^48", raw1,
          lambda p: ["decode", "--format=none", "--etmv4", "traceid=0x10",
                     "--image", IMAGE + "@0x400000:0:0xffffffffffff", p])
    claim("raw --start-offset 2^60", raw1,
          lambda p: ["decode", "--format=none", "--start-offset", str(1 << 60)] + RAW + [p])
finally:
    shutil.rmtree(TMP, ignore_errors=True)
print("%d checks, %d failed" % (checks, fails))
sys.exit(1 if fails else 0)
