"""What the *_vs_qemu.py checks share: QEMU's executed addresses of a synth run,
the binary's disassembly, and a failure counter."""
import collections, glob, os, re, subprocess, sys


def truth_files(path):
    """The executed addresses of each thread (synth --truth writes FILE for vCPU 0
    and FILE.K for thread K), Thumb bit cleared."""
    out = []
    for p in [path] + sorted(glob.glob(path + ".[0-9]*")):
        out.append([int(l, 16) & ~1 for l in open(p) if l.strip()])
    return out


def load_segments(readelf, binary):
    """The binary's PT_LOAD segments as (start, end) addresses."""
    segs = []
    for line in subprocess.run([readelf, "-lW", binary], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        p = line.split()
        if p and p[0] == "LOAD":
            segs.append((int(p[2], 16), int(p[2], 16) + int(p[5], 16)))
    return segs


def disassembly(objdump, binary):
    """addr -> (size, mnemonic without a .w/.n width suffix, operands), from objdump -d."""
    insn = {}
    for line in subprocess.run([objdump, "-d", binary], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        f = line.split("\t")
        if len(f) < 3 or not f[0].strip().endswith(":"):
            continue
        try:
            a = int(f[0].strip()[:-1], 16)
        except ValueError:
            continue
        text = " ".join(f[2:]).split(";")[0].split("//")[0].split("@")[0].strip()
        words = text.split()
        m = re.sub(r"\.(w|n)$", "", words[0]) if words else ""
        ops = text[len(words[0]):].strip() if words else ""
        insn[a] = (len(f[1].replace(" ", "")) // 2, m, ops)
    return insn


WAYPOINT = re.compile(r"^(b|bl|blr|br|ret|cbz|cbnz|tbz|tbnz|isb|svc|bx|blx|b\.\w+|"
                      r"braa|brab|blraa|blrab|retaa|retab|tbb|tbh|eret)$")
UNCOND = {"b", "bl", "blr", "br", "ret", "bx", "blx", "braa", "brab", "blraa", "blrab", "retaa", "retab"}


def self_branches(disasm):
    """The direct branches to themselves (`b .`): the only instructions QEMU logs
    twice in a row when they ran twice in a row. Any other instruction logged twice
    ran again after an exception (QEMU stops a thread before an instruction it has
    already logged, and runs it later; the kernel restarts a system call at its
    SVC): it changes no call stack and is no branch."""
    out = set()
    for a, (size, m, ops) in disasm.items():
        t = re.match(r"\s*([0-9a-f]+)\b", ops)
        if t and int(t.group(1), 16) == a:
            out.add(a)
    return out


def profile_counts(disasm, threads, inside):
    """QEMU's run cut as sample profiles count it: (ranges, branches) Counters.
    A range ends after every taken branch, every system call, and wherever
    execution jumps without a branch (an exception); not-taken branches and ISBs
    stay inside one. An instruction logged twice in a row that does not branch
    to itself ran again (self_branches): the range ends there, with no branch. A
    range counts once for (first, last) instruction; a taken branch for (branch, target), the target 0 when
    @inside rejects it. Only code @inside counts."""
    insn, to_self = {}, self_branches(disasm)
    for a, (size, m, ops) in disasm.items():
        writes_pc = bool(re.match(r"(pop|ldm)", m) and "pc" in ops) or \
            bool(re.match(r"(ldr|mov|add|sub)", m) and ops.strip().startswith("pc,"))
        cond_b = re.fullmatch(r"(b|bl|blx|bx)(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le)", m)
        way = bool(WAYPOINT.match(m)) or writes_pc or bool(cond_b)
        branch = way and m not in ("isb", "svc", "eret")
        insn[a] = (size, m in ("svc", "swi"), branch, m in UNCOND)
    ranges, branches = collections.Counter(), collections.Counter()
    for addrs in threads:
        start = addrs[0] if addrs else None
        for k, a in enumerate(addrs):
            size, syscall, branch, uncond = insn.get(a, (4, False, False, False))
            b = addrs[k + 1] if k + 1 < len(addrs) else None
            taken = b is not None and branch and (b != a + size or uncond) and \
                (b != a or a in to_self)
            if b is not None and not taken and not syscall and b == a + size:
                continue  # the range goes on (past not-taken branches and ISBs)
            if inside(start) and inside(a):
                ranges[(start, a)] += 1
            if taken and inside(a):
                branches[(a, b if inside(b) else 0)] += 1
            start = b
    return ranges, branches


DIRECT = re.compile(r"^(b|bl|cbz|cbnz|tbz|tbnz|b\.\w+)$")


def simpleperf_counts(disasm, threads, inside, per_insn=False):
    """QEMU's run cut as simpleperf's inject counts ETM trace for AutoFDO
    (ETMDecoder's InstrRangeParser, cmd_inject's AddInstrRange): one range per
    range the decoder gives, never joined: OpenCSD's ETMv4 decoder ends one at
    every waypoint (a branch, taken or not; an ISB, SVC, ERET) and wherever
    execution jumps without one (an exception); its ETMv3 decoder after every
    instruction (@per_insn). A range counts once for (first, last) when @inside
    its first; when it ends in a branch that was taken, the branch counts for
    (branch, target) where the target is a fixed place (a direct branch: where it
    went), else (a return, an indirect call) 0."""
    insn, to_self = {}, self_branches(disasm)
    for a, (size, m, ops) in disasm.items():
        writes_pc = bool(re.match(r"(pop|ldm)", m) and "pc" in ops) or \
            bool(re.match(r"(ldr|mov|add|sub)", m) and ops.strip().startswith("pc,"))
        cond_b = re.fullmatch(r"(b|bl|blx|bx)(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le)", m)
        way = bool(WAYPOINT.match(m)) or writes_pc or bool(cond_b)
        branch = way and m not in ("isb", "svc", "eret")
        # A32/T32 direct branches name their target (b, bl, blx label, cbz)
        direct = bool(DIRECT.match(m)) or (bool(re.match(r"(b|bl|blx|cbz|cbnz)", m)) and
                                           bool(re.match(r"\s*(\w+,\s*)?[0-9a-f]+\b", ops)))
        insn[a] = (size, way, branch, m in UNCOND, direct)
    ranges, branches = collections.Counter(), collections.Counter()
    for addrs in threads:
        start = addrs[0] if addrs else None
        for k, a in enumerate(addrs):
            size, way, branch, uncond, direct = insn.get(a, (4, False, False, False, False))
            b = addrs[k + 1] if k + 1 < len(addrs) else None
            taken = b is not None and branch and (b != a + size or uncond) and \
                (b != a or a in to_self)
            if b is not None and not way and not per_insn and b == a + size:
                continue  # the range goes on
            if inside(start):
                ranges[(start, a)] += 1
                if taken:
                    branches[(a, b if direct else 0)] += 1
            start = b
    return ranges, branches


class Failures:
    """Count failures, print the first few (CALLS_VS_QEMU_SHOW raises the limit)."""

    def __init__(self):
        self.n = 0
        self.show = int(os.environ.get("CALLS_VS_QEMU_SHOW", "20"))

    def __call__(self, msg):
        self.n += 1
        if self.n <= self.show:
            print(msg, file=sys.stderr)

    def finish(self, summary):
        if self.n:
            print(f"{self.n} differences", file=sys.stderr)
            sys.exit(1)
        print(summary)
