#!/usr/bin/env python3
"""Check cstrace's call views against the call stacks that QEMU's own run implies.

QEMU's executed addresses (synth --truth: FILE for vCPU 0, FILE.K for thread K) are
walked instruction by instruction with the binary's disassembly (objdump) and sized
function symbols (readelf -s): a call instruction pushes a frame returning after it, a
return or an indirect branch landing on a stacked return address pops to it, a
branch to a function's first instruction replaces the frame (tail call), a branch
into the middle of a function further down unwinds to it (longjmp), a system call
or fault that resumes elsewhere pushes an exception frame, resuming where one was
interrupted pops it, and an instruction logged twice in a row (not a branch to
itself) ran again after an exception without changing the stack. Every instruction counts on the stack it ran with.

Then, against `cstrace report --call-graph --format=json` of the same run: every
stack (a path of function start addresses) has the same self count and call count;
leaf counts sum to the instruction total; the deepest nesting of each function is
the same; the folded output (--folded) has one line per stack with those counts;
Perfetto slices (--perfetto) nest and count each function's calls as QEMU entered it.
"""
import argparse, bisect, collections, json, os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qemu_run  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--readelf", required=True)
ap.add_argument("--objdump", required=True)
ap.add_argument("--binary", required=True, action="append",
                help="PATH[@BASE]: a binary and where it was loaded (repeatable)")
ap.add_argument("--truth", required=True)
ap.add_argument("--graph", required=True)
ap.add_argument("--folded")
ap.add_argument("--perfetto")
ap.add_argument("--call-trace", help="script --call-trace -F tid output of the same run")
ap.add_argument("--deepest", action="append", default=[],
                help="NAME=N: the deepest recursion of NAME must be N (and agree)")
args = ap.parse_args()

# ---- the binaries' functions, as a symbolizer sees them: FUNC, IFUNC and code
# labels; aliases are one function; a local label inside a sized function is part
# of it; an unsized symbol runs to the next symbol or the end of its section; PLT
# entries as objdump labels them (<.plt>, <name@plt>). Functions are keyed by their
# runtime start; code of a binary outside any function by ("?", binary).
funcs, names = {}, {}
loads = []     # (runtime start, end, binary base name)
bases = {}     # binary base name -> load bias
binaries = []  # (path, bias)
for spec in args.binary:
    path, _, b = spec.partition("@")
    binaries.append((path, int(b, 16) if b else 0))


def load_binary(path, bias):
    name = os.path.basename(path)
    bases[name] = bias
    secs = {}
    dynamic = False
    for line in subprocess.run([args.readelf, "-SW", path], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        dynamic = dynamic or " .dynamic " in line
        m = re.match(r"\s*\[\s*(\d+)\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\S+\s+(\S*)", line)
        if m and "X" in m.group(5):
            secs[int(m.group(1))] = (int(m.group(3), 16), int(m.group(4), 16), m.group(2))
    for line in subprocess.run([args.readelf, "-lW", path], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        p = line.split()
        if p and p[0] == "LOAD":
            loads.append((int(p[2], 16) + bias, int(p[2], 16) + int(p[5], 16) + bias, name))
    syms = []
    for line in subprocess.run([args.readelf, "-sW", path], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        p = line.split()
        if len(p) < 8 or not p[0].endswith(":") or p[3] not in ("FUNC", "IFUNC", "NOTYPE"):
            continue
        if not p[6].isdigit() or int(p[6]) not in secs or p[7].startswith("$"):
            continue
        addr, size = int(p[1], 16) & ~1, int(p[2], 0) if not p[2].startswith("0x") else int(p[2], 16)
        label = p[3] == "NOTYPE" and p[4] == "LOCAL"
        syms.append((addr, size, label, p[7].split("@")[0], int(p[6])))
    # PLT stubs have no symbols: objdump's labels name them (a static binary's
    # IFUNC stubs are no PLT a symbolizer can name: they stay unknown code)
    plt = [(a, sz) for a, sz, n in secs.values() if n in (".plt", ".iplt") and dynamic]
    for line in subprocess.run([args.objdump, "-d", path], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if m and any(lo <= int(m.group(1), 16) < lo + sz for lo, sz in plt):
            shndx = [k for k, v in secs.items() if v[2] in (".plt", ".iplt") and
                     v[0] <= int(m.group(1), 16) < v[0] + v[1]][0]
            syms.append((int(m.group(1), 16), 0, False, m.group(2), shndx))
    syms.sort(key=lambda x: (x[0], -x[1], x[2]))
    covered = 0
    addrs_sorted = sorted({x[0] for x in syms})
    seen = set()
    for addr, size, label, fname, shndx in syms:
        if addr in seen or (label and addr < covered):
            continue
        seen.add(addr)
        if not size:
            k = bisect.bisect_right(addrs_sorted, addr)
            sec_end = secs[shndx][0] + secs[shndx][1]
            size = min(addrs_sorted[k] if k < len(addrs_sorted) else sec_end, sec_end) - addr
        else:
            covered = max(covered, addr + size)
        funcs[addr + bias], names[addr + bias] = size, fname


for path, bias in binaries:
    load_binary(path, bias)
starts = sorted(funcs)


def func_of(a):
    i = bisect.bisect_right(starts, a) - 1
    if i >= 0 and a < starts[i] + funcs[starts[i]]:
        return starts[i]
    for lo, hi, name in loads:
        if lo <= a < hi:
            return ("?", name)
    return ("?", None)


CALLS = {"bl", "blx", "blr", "blraa", "blrab", "blraaz", "blrabz"}
RETS = {"ret", "retaa", "retab"}
CONDS = "eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al"
insn = {}  # addr -> (size, kind, unconditional)
disasm = {}
for path, bias in binaries:
    disasm.update({a + bias: v for a, v in qemu_run.disassembly(args.objdump, path).items()})
for a, (size, m, ops) in disasm.items():
    base = m
    cond_m = re.fullmatch(r"(b|bl|blx|bx)(%s)" % CONDS, base)
    uncond = True
    if cond_m:
        base, uncond = cond_m.group(1), cond_m.group(2) == "al"
    if base.startswith("b.") or base in ("cbz", "cbnz", "tbz", "tbnz"):
        kind, uncond = "jump", False
    elif base in CALLS:
        kind = "call"
    elif base in RETS or (base == "bx" and ops == "lr"):
        kind = "ret"
    elif base in ("b",):
        kind = "jump"
    elif base in ("br", "bx", "braa", "brab", "tbb", "tbh"):
        kind = "ind"
    elif re.match(r"(pop|ldm)", base) and "pc" in ops:
        kind, uncond = "ret" if ("sp" in ops or base.startswith("pop")) else "ind", base in ("pop", "ldm", "pop.w", "ldmia")
    elif re.match(r"(ldr|mov|add|sub)", base) and ops.startswith("pc,"):
        kind = "ret" if base.startswith("ldr") and "[sp]" in ops else "ind"
        uncond = len(base) <= 4 or not re.search(CONDS + "$", base)
    elif base in ("svc", "swi"):
        kind = "svc"
    else:
        kind = "other"
    insn[a] = (size, kind, uncond)
to_self = qemu_run.self_branches(disasm)


class Frame:
    __slots__ = ("func", "ret", "exc", "resume", "node")


class Tree:
    def __init__(self):
        self.nodes = {}  # path tuple -> [self, calls]

    def node(self, path):
        return self.nodes.setdefault(path, [0, 0])


tree = Tree()
deepest = collections.Counter()
total = 0


def walk(addrs):
    global total
    stack = []

    def path():
        return tuple(f.func for f in stack)

    def push(func, ret, how, entered, exc=False, resume=None):
        f = Frame()
        f.func, f.ret, f.exc, f.resume = func, ret, exc, resume
        stack.append(f)
        n = tree.node(path())
        if how in ("call", "tail", "exception") or (how == "start" and entered):
            n[1] += 1
        depth = sum(1 for x in stack if x.func == func)
        deepest[func] = max(deepest[func], depth)

    def pop_to(keep):
        del stack[keep:]

    def find(pred):
        for i in range(len(stack) - 1, -1, -1):
            if pred(stack[i]):
                return i
        return -1

    def replace(func, how, entered):
        old = stack.pop()
        push(func, old.ret, how, entered, old.exc, old.resume)

    def settle(b):
        fb = func_of(b)
        if not stack:
            push(fb, None, "return", b == fb)
        elif stack[-1].func != fb:
            replace(fb, "tail" if b == fb else "jump", b == fb)

    def do_jump(b):
        fb = func_of(b)
        if not stack:
            return settle(b)
        if stack[-1].func == fb:
            return
        if b == fb:
            return replace(fb, "tail", True)
        i = find(lambda f: f.func == fb)
        if i >= 0:
            return pop_to(i + 1)
        replace(fb, "jump", False)

    def do_return(b):
        fb = func_of(b)
        i = find(lambda f: f.ret == b)
        if i >= 0:
            return pop_to(i)
        if not stack:
            return settle(b)
        i = find(lambda f: f.func == fb)
        if i >= 0:
            return pop_to(i + 1)
        top = stack.pop()
        if stack and stack[-1].func == fb:
            return
        if top.exc:
            return push(fb, None, "return", False, True, top.resume)
        if not stack:
            return push(fb, None, "return", False)
        replace(fb, "return", False)

    def exception(b, resume):
        if b == resume:
            return settle(b)
        i = find(lambda f: f.exc and f.resume == b)
        if i >= 0:
            pop_to(i)
            return settle(b)
        push(func_of(b), None, "exception", b == func_of(b), True, resume)

    if not addrs:
        return
    a0 = addrs[0]
    push(func_of(a0), None, "start", a0 == func_of(a0))
    for k, a in enumerate(addrs):
        tree.node(path())[0] += 1
        total += 1
        if k + 1 == len(addrs):
            break
        b = addrs[k + 1]
        size, kind, uncond = insn.get(a, (4, "other", True))
        if b == a and a not in to_self:
            settle(b)  # it runs again (qemu_run.self_branches): no stack changes
            continue
        nxt = a + size
        taken = b != nxt or (uncond and kind not in ("other", "svc"))
        if kind == "svc" or (kind == "other" and b != nxt):
            exception(b, nxt)
        elif not taken:
            settle(b)
        elif kind == "call":
            push(func_of(b), nxt, "call", b == func_of(b))
        elif kind == "ret":
            do_return(b)
        elif kind == "ind" and find(lambda f: f.ret == b) >= 0:
            pop_to(find(lambda f: f.ret == b))
        else:
            do_jump(b)


for addrs in qemu_run.truth_files(args.truth):
    walk(addrs)

# ---- cstrace's call graph
g = json.load(open(args.graph))
got = {}
got_deepest = collections.Counter()


def node_key(dso, addr):
    """A cstrace node's function as the reference keys it."""
    name = os.path.basename(dso or "")
    if isinstance(addr, str):
        addr = int(addr, 16)  # report JSON: "0x..."; the timeline: a number
    if addr is not None and name in bases and addr + bases[name] in funcs:
        return addr + bases[name]
    return ("?", name if name in bases else None)


def visit(n, path, counts):
    key = node_key(n.get("dso"), n.get("addr"))
    p = path + (key,)
    e = got.setdefault(p, [0, 0])
    e[0] += n["self"]
    e[1] += n["calls"]
    counts = counts.copy()
    counts[key] += 1
    got_deepest[key] = max(got_deepest[key], counts[key])
    kids = 0
    for c in n["children"]:
        visit(c, p, counts)
        kids += c["total"]
    if n["total"] != n["self"] + kids:
        fail(f"{fmt(p)}: total {n['total']} is not self + children ({n['self']} + {kids})")


fail = qemu_run.Failures()


def fmt(p):
    return ";".join(names.get(x, "[unknown]") for x in p)


for r in g["roots"]:
    visit(r, (), collections.Counter())
want = {p: v for p, v in tree.nodes.items() if v != [0, 0]}
got = {p: v for p, v in got.items() if v != [0, 0]}
for p in sorted(set(want) | set(got), key=fmt):
    w, h = want.get(p, [0, 0]), got.get(p, [0, 0])
    if w != h:
        fail(f"{fmt(p)}: QEMU self {w[0]} calls {w[1]}, cstrace self {h[0]} calls {h[1]}")
if g["total_insns"] != total or sum(v[0] for v in got.values()) != total:
    fail(f"instructions: QEMU {total}, call graph total {g['total_insns']}, "
         f"self sum {sum(v[0] for v in got.values())}")
for f in set(deepest) | set(got_deepest):
    if deepest[f] != got_deepest[f]:
        fail(f"{names.get(f, '[unknown]')}: QEMU nests it {deepest[f]} deep, cstrace {got_deepest[f]}")
by_name = {names.get(f, "[unknown]"): d for f, d in deepest.items()}
for spec in args.deepest:
    name, n = spec.split("=")
    if by_name.get(name) != int(n):
        fail(f"{name}: QEMU nests it {by_name.get(name)} deep, the test expects {n}")

# ---- folded: one line per stack, counts as the graph's self counts
if args.folded:
    folded = collections.Counter()
    for line in open(args.folded):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        folded[stack] += int(n)
    want_f = collections.Counter()
    for p, (s, _) in want.items():
        if s:
            want_f[fmt(p)] += s
    # names: cstrace's choice among aliases may differ from nm's; compare counts
    if sorted(folded.values()) != sorted(want_f.values()) or sum(folded.values()) != total:
        fail(f"folded: {len(folded)} stacks summing to {sum(folded.values())}, QEMU "
             f"{len(want_f)} stacks summing to {total}")

# ---- perfetto: slices nest per thread, and count calls as QEMU entered functions
if args.perfetto:
    doc = json.load(open(args.perfetto))
    evs = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    per_thread = collections.defaultdict(list)
    for e in evs:
        per_thread[(e["pid"], e["tid"])].append(e)
    ns = lambda x: round(x * 1000)  # the file's microseconds carry whole nanoseconds
    for key, lst in per_thread.items():
        lst.sort(key=lambda e: (ns(e["ts"]), -ns(e["dur"])))
        open_ends = []
        for e in lst:
            start, end = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
            while open_ends and open_ends[-1] <= start:
                open_ends.pop()
            if open_ends and end > open_ends[-1]:
                fail(f"perfetto: slice {e['name']} at {e['ts']} overlaps its parent's end")
                break
            open_ends.append(end)
    # the entry address is given only where it is not the function's address
    for e in evs:
        a = e["args"]
        if "entry" in a and "addr" in a and int(a["entry"], 16) == int(a["addr"], 16):
            fail(f"perfetto: slice {e['name']} repeats its function's address as entry")
            break
        if "entry" not in a and "addr" not in a:
            fail(f"perfetto: slice {e['name']} gives neither its function nor its entry")
            break
    # the category says how a frame began; these three count as calls
    hows = {"call", "tail call", "exception", "jump", "returned to", "already running"}
    for e in evs:
        if e.get("cat") not in hows or "call" in e["args"]:
            fail(f"perfetto: slice {e['name']} has category {e.get('cat')!r}, args {e['args']}")
            break
    calls = collections.Counter(node_key(e["args"].get("dso"), e["args"].get("addr"))
                                for e in evs if e["cat"] in ("call", "tail call", "exception"))
    want_calls = collections.Counter()
    for p, (_, c) in want.items():
        want_calls[p[-1]] += c
    for f in set(want_calls) | set(calls):
        if f not in funcs:
            continue
        if want_calls[f] != calls[f]:
            fail(f"perfetto: {names[f]} called {calls[f]} times, QEMU {want_calls[f]}")

# ---- script --call-trace: one unmarked (or tail call / exception) line per call,
# each indented by its depth in QEMU's stack
if args.call_trace:
    by_sym = collections.Counter()

    def sym_calls(n):
        by_sym[n["sym"]] += n["calls"]
        for c in n["children"]:
            sym_calls(c)

    for r in g["roots"]:
        sym_calls(r)
    lines = collections.Counter()
    # each line's depth is its indent (two spaces a level, after the head: -F
    # tid,cpu): the stack it implies, per thread (its tid, or where none is
    # known, a snapshot's, its CPU: its trace ID), by names
    parsed = []
    for line in open(args.call_trace):
        h = re.match(r"(\S+) +(\[\d+\])( +)(.*)$", line.rstrip("\n"))
        if not h:
            continue
        body = h.group(4)
        m = re.match(r"(.*?)(?: (/\S+|\S+\.bin) at 0x[0-9a-f]+)?(?: \((tail call|exception|jump|returned to|already running)\))?$", body)
        if not m or re.match(r"\[trace (lost|gap|off)", body):
            continue
        key = h.group(1) if h.group(1) != "-" else h.group(2)
        parsed.append((key, len(h.group(3)), m.group(1), m.group(3)))
    sep = {}
    for tid, ind, _, _ in parsed:
        sep[tid] = min(sep.get(tid, ind), ind)
    stacks = collections.defaultdict(list)
    paths = collections.Counter()
    for tid, ind, name, how in parsed:
        if (ind - sep[tid]) % 2:
            fail(f"call trace: an indent of {ind - sep[tid]} spaces is no depth")
        d = (ind - sep[tid]) // 2 + 1
        st = stacks[tid]
        if d > len(st) + 1:
            fail(f"call trace: {name} at depth {d} under {len(st)} frames")
        del st[d - 1:]
        st.append(name)
        if how in (None, "tail call", "exception"):
            lines[name] += 1
            paths[tuple(st)] += 1
    for name in set(by_sym) | set(lines):
        if by_sym[name] != lines[name]:
            fail(f"call trace: {name} entered {lines[name]} times, call graph {by_sym[name]}")
    # the call graph's stacks, checked against QEMU's above (in its names:
    # the reference names one alias of each address, cstrace another)
    want_paths = collections.Counter()

    def graph_paths(n, path):
        p = path + (n["sym"],)
        want_paths[p] += n["calls"]
        for c in n["children"]:
            graph_paths(c, p)

    for r in g["roots"]:
        graph_paths(r, ())
    for p in sorted(set(want_paths) | set(paths)):
        if want_paths[p] != paths[p]:
            fail(f"call trace: {';'.join(p)} entered {paths[p]} times at that depth, "
                 f"QEMU's stack {want_paths[p]} times")

fail.finish(f"{len(want)} stacks, {total} instructions, deepest recursion "
            f"{max(deepest.values())}: as QEMU ran them")
