"""What the *_vs_qemu.py checks share: QEMU's executed addresses of a synth run,
the binary's disassembly, and a failure counter."""
import glob, os, re, subprocess, sys


def truth_files(path):
    """The executed addresses of each thread (synth --truth writes FILE for vCPU 0
    and FILE.K for thread K), Thumb bit cleared."""
    out = []
    for p in [path] + sorted(glob.glob(path + ".[0-9]*")):
        out.append([int(l, 16) & ~1 for l in open(p) if l.strip()])
    return out


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
