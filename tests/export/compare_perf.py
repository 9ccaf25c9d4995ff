#!/usr/bin/env python3
"""Compare cstrace's export with the database perf's export-to-sqlite.py made
of the same perf.data, table by table, allowing only the differences
docs/export.md lists:

  - insn_count: cstrace counts instructions (a sample: since the sample
    before it; a call: during it), perf 6.1 leaves 0 for cs_etm;
  - symbols cstrace's symbolizer names otherwise than perf 6.1
    (docs/symbolize.md): perf names a local code label inside a sized
    function (glibc's __wrap_main inside _start), or another alias of a
    symbol (memcpy_ifunc for memcpy): compared as cstrace's symbol, offsets
    from its start; perf stretches a symbol without a size to the next one
    across sections (_init over a static binary's .iplt stubs, _fini), names
    PLT entries of layouts cstrace leaves unnamed (some armhf libraries),
    leaves the PLT header without a symbol where cstrace names it ".plt", and
    keeps the Thumb bit of armhf IFUNC symbols (their first instruction has
    none): in such "disputed" code only the addresses of samples are
    compared; the calls a sample with an end there began or ended are left
    out (the call/return processor's choices there follow the symbols), and
    the calls below them are compared without the call path above them (a
    symbol with disputed code names a "[disputed]" call path node on both
    sides);
  - the cstrace_captures table, cstrace's own.

Everything else must be equal: the fixed tables (events, machines, threads,
comms, comm_threads, dsos, branch_types), every sample (id, event, thread,
comm, addresses, time, CPU, flags, symbols and offsets), and the calls (call
path as names, times, branch count, the samples that called and returned,
flags, thread, comm) with the call paths they use.

With --any-order, rows are compared by content, ids left out (a sample's id
replaced by its content where a call names it): for recordings perf 6.1
decodes in another order than cstrace (several threads traced per thread,
without timestamps: perf decodes each thread's trace when the thread exits).
With --ignore-time, times are left out: with timestamps, perf 6.1 gives every
cs_etm sample the time of its AUX record, cstrace the trace's own times.

Usage: compare_perf.py [--any-order] [--ignore-time] PERF.db CSTRACE.db [--report FILE]
Prints one summary line; exit 1 with the first differences on stderr."""
import collections
import sqlite3
import sys


def load(path):
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    return db


def main():
    args = sys.argv[1:]
    any_order = "--any-order" in args
    no_time = "--ignore-time" in args
    args = [a for a in args if a not in ("--any-order", "--ignore-time")]
    perf, cst = load(args[0]), load(args[1])
    report = args[3] if len(args) > 3 and args[2] == "--report" else None
    errors = []
    err = errors.append

    # --- the fixed tables, row for row (in any order: by content, ids left out)
    def has_calls(db):
        return db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'calls'").fetchone()[0]
    calls_on = has_calls(perf) and has_calls(cst)
    hc = ", has_calls" if calls_on else ""
    hc2 = ", c.has_calls" if calls_on else ""
    for t, cols, q in (
            ("branch_types", "id, name", "SELECT id, name FROM branch_types"),
            ("selected_events", "id, name", "SELECT name FROM selected_events"),
            ("machines", "id, pid, root_dir", "SELECT pid, root_dir FROM machines"),
            ("threads", "id, machine_id, process_id, pid, tid",
             "SELECT t.pid, t.tid, m.pid, m.tid FROM threads t LEFT JOIN threads m "
             "ON m.id = t.process_id"),
            ("comms", "id, comm, c_thread_id, c_time, exec_flag" + hc,
             "SELECT c.comm, t.pid, t.tid, c.c_time, c.exec_flag" + hc2 + " FROM comms c "
             "JOIN threads t ON t.id = c.c_thread_id"),
            ("comm_threads", "id, comm_id, thread_id",
             "SELECT c.comm, u.tid, t.pid, t.tid FROM comm_threads x JOIN comms c ON "
             "c.id = x.comm_id JOIN threads t ON t.id = x.thread_id JOIN threads u ON "
             "u.id = c.c_thread_id"),
            ("dsos", "id, machine_id, short_name, long_name, build_id",
             "SELECT short_name, long_name, build_id FROM dsos")):
        if any_order:
            a = collections.Counter(tuple(x) for x in perf.execute(q))
            b = collections.Counter(tuple(x) for x in cst.execute(q))
        else:
            a = [tuple(x) for x in perf.execute(f"SELECT {cols} FROM {t} ORDER BY id")]
            b = [tuple(x) for x in cst.execute(f"SELECT {cols} FROM {t} ORDER BY id")]
        if a != b:
            err(f"{t}: perf {list(a)[:6]} cstrace {list(b)[:6]}")

    # --- symbols: (binary, name, start, end) on each side
    def syms(db):
        d = {r["id"]: r["long_name"] for r in db.execute("SELECT * FROM dsos")}
        return {r["id"]: (d[r["dso_id"]], r["name"], r["sym_start"], r["sym_end"])
                for r in db.execute("SELECT * FROM symbols") if r["id"]}
    ps, cs = syms(perf), syms(cst)
    pset, cset = set(ps.values()), set(cs.values())
    disputed = []  # (binary, lo, hi): code the two name differently, by rule
    labels = {}    # perf's label symbol -> the cstrace function it is part of
    # cstrace names the PLT header ".plt"; perf leaves it without a symbol or
    # stretches the symbol before over it
    for d, name, lo, hi in cset - pset:
        if name == ".plt":
            disputed.append((d, lo, hi))

    def in_disputed(d, a):
        return any(d == x and lo <= a < hi for x, lo, hi in disputed)
    def arm32(path):
        try:
            with open(path, "rb") as f:
                return f.read(20)[18] == 40  # e_machine EM_ARM
        except OSError:
            return False

    for d, name, lo, hi in pset - cset:
        if name == "unknown" and in_disputed(d, lo):
            continue
        if name == "unknown" and arm32(d) and any(k[0] == d and k[2] == lo for k in cset):
            # perf 6.1 keeps the Thumb bit of an armhf IFUNC symbol: the
            # function's first instruction has no symbol there
            disputed.append((d, lo, lo + 2))
            continue
        narrower = [k for k in cset if k[:3] == (d, name, lo) and k[3] < hi]
        alias = [k for k in cset if k[0] == d and k[2] == lo and k[1] != name and
                 name != "unknown"]
        inside = [k for k in cset if k[0] == d and k[2] < lo < k[3] and k[3] > k[2] + 4 and
                  name != "unknown"]
        if narrower:  # stretched across sections by perf
            disputed.append((d, narrower[0][3], hi))
        elif name.endswith("@plt"):  # a PLT layout cstrace does not name
            disputed.append((d, lo, hi))
        elif alias or inside:
            # another name of the same code (perf chose another alias), or a
            # label inside a sized function: cstrace names the function
            labels[(d, name, lo, hi)] = (alias or inside)[0]
        else:
            err(f"perf's symbol {name} {lo:#x}-{hi:#x} of {d} is not cstrace's")

    for d, name, lo, hi in cset - pset:
        if any(k[:3] == (d, name, lo) and k[3] > hi for k in pset):
            continue  # perf's is the stretched one
        if (d, name, lo, hi) in labels.values():
            continue  # perf names it otherwise
        if in_disputed(d, lo) or name == "unknown":
            continue  # (an unknown one is checked where samples name it)
        err(f"cstrace's symbol {name} {lo:#x}-{hi:#x} of {d} is not perf's")

    def where(s, i, off):
        """name and offset of a sample's end, or '[disputed]'"""
        if not i:
            return (None, 0)
        d, name, lo, hi = s[i]
        if s[i] in labels:
            f = labels[s[i]]
            return (f[1], lo + off - f[2])
        return ("[disputed]", 0) if in_disputed(d, lo + off) else (name, off)

    # a symbol any of whose code is disputed (on either side, and its twin of
    # the same name and start on the other) names a "[disputed]" call path node
    disputed_names = set()
    for k in pset | cset:
        d, name, lo, hi = labels.get(k, k)
        if any(d == x and lo < h2 and l2 < max(hi, lo + 1) for x, l2, h2 in disputed):
            disputed_names.add((d, name, lo))

    def named(s, i):
        d, name, lo, hi = labels.get(s[i], s[i])
        return "[disputed]" if (d, name, lo) in disputed_names else name

    # --- samples: the same sequence, naming the same symbols
    q = ("SELECT s.id, e.name AS ev, t.pid, t.tid, c.comm, s.ip, s.to_ip, s.time, s.cpu, "
         "s.branch_type, s.in_tx, s.flags, s.call_path_id, s.cyc_count, s.symbol_id, s.sym_offset, "
         "s.to_symbol_id, s.to_sym_offset, s.insn_count FROM samples s "
         "JOIN selected_events e ON e.id = s.evsel_id JOIN threads t ON t.id = s.thread_id "
         "JOIN comms c ON c.id = s.comm_id ORDER BY s.id")
    a, b = perf.execute(q).fetchall(), cst.execute(q).fetchall()
    if len(a) != len(b):
        err(f"samples: perf {len(a)}, cstrace {len(b)}")
    ndisputed = 0

    def canonical(s, x):
        """a sample's content, with its symbols as compared"""
        f = where(s, x["symbol_id"], x["sym_offset"])
        t = where(s, x["to_symbol_id"], x["to_sym_offset"])
        row = list(tuple(x)[1:14])
        if no_time:
            row[6] = None
        return tuple(row) + f + t
    psamp = {x["id"]: canonical(ps, x) for x in a}
    csamp = {y["id"]: canonical(cs, y) for y in b}
    for x in a:
        ndisputed += "[disputed]" in (psamp[x["id"]][13], psamp[x["id"]][15])
        if x["insn_count"]:
            err(f"sample {x['id']}: perf counted {x['insn_count']} instructions")
            break
    if any_order:
        d1 = collections.Counter(psamp.values()) - collections.Counter(csamp.values())
        d2 = collections.Counter(csamp.values()) - collections.Counter(psamp.values())
        if d1 or d2:
            err(f"samples: {sum(d1.values())} perf only {list(d1)[:2]}, "
                f"{sum(d2.values())} cstrace only {list(d2)[:2]}")
    else:
        for x, y in zip(a, b):
            if x["id"] != y["id"] or psamp[x["id"]] != csamp[y["id"]]:
                err(f"sample {x['id']}: perf {psamp[x['id']]} cstrace {csamp.get(x['id'])}")
                if len(errors) > 20:
                    break

    # --- calls, and the call paths they use, as paths of names. A call that began
    # with a sample with an end in disputed code is left out, and so is all it called.
    def ends_disputed(db, s):
        out = {}
        for r in db.execute("SELECT id, symbol_id, sym_offset, to_symbol_id, to_sym_offset "
                            "FROM samples"):
            out[r[0]] = "[disputed]" in (where(s, r[1], r[2])[0], where(s, r[3], r[4])[0])
        return out

    def paths(db, s):
        rows = {r["id"]: (r["parent_id"], r["symbol_id"], r["ip"])
                for r in db.execute("SELECT * FROM call_paths")}
        memo = {}

        def walk(i):
            chain = []
            while i not in memo:
                p, sym, ip = rows.get(i, (0, 0, 0))  # (a missing path: the root)
                if not p:
                    memo[i] = ()
                    break
                chain.append((i, named(s, sym) if sym else f"{ip:#x}"))
                i = p
            for c, label in reversed(chain):
                memo[c] = memo[i] + (label,)
                i = c
            return memo[i]
        return walk

    def calls(db, s, samp):
        bad = ends_disputed(db, s)
        path = paths(db, s)
        rows = {r["id"]: r for r in db.execute("SELECT * FROM calls WHERE id > 0")}

        def disputed(i):
            r = rows[i]
            return bad.get(r["call_id"], False) or bad.get(r["return_id"], False)
        out, used, left = collections.Counter(), set(), 0
        for i, r in rows.items():
            if disputed(i):
                left += 1
                continue
            p = path(r["call_path_id"])
            if "[disputed]" in p:
                # below disputed code the nodes above may differ: the call itself
                # must not
                p = ("[below disputed]", p[-1])
            else:
                used.add(p)
            who = (threads[db][r["thread_id"]], comms[db][r["comm_id"]])
            ends = ((samp.get(r["call_id"]), samp.get(r["return_id"])) if any_order
                    else (r["call_id"], r["return_id"]))
            times = (None, None) if no_time else (r["call_time"], r["return_time"])
            out[(p,) + times + (r["branch_count"],) + ends +
                (r["flags"], r["cyc_count"]) + who] += 1
        return out, used, left
    threads = {db: {r[0]: (r[1], r[2]) for r in db.execute("SELECT id, pid, tid FROM threads")}
               for db in (perf, cst)}
    comms = {db: {r[0]: r[1] for r in db.execute("SELECT id, comm FROM comms")}
             for db in (perf, cst)}
    if has_calls(perf) != has_calls(cst):
        err("one database has calls, the other none")
    if has_calls(perf) and has_calls(cst):
        pc, pused, pleft = calls(perf, ps, psamp)
        cc, cused, cleft = calls(cst, cs, csamp)
    else:
        pc = cc = collections.Counter()
        pused, cused, pleft, cleft = set(), set(), 0, 0
    if pused != cused:
        err(f"call paths: {len(pused - cused)} perf only {[p[-5:] for p in sorted(pused - cused)[:3]]}, "
            f"{len(cused - pused)} cstrace only {[p[-5:] for p in sorted(cused - pused)[:3]]}")
    if pc != cc:
        def short(c):
            return [(k[0][-5:],) + k[1:] for k in sorted(c.elements())[:3]]
        err(f"calls: {sum((pc - cc).values())} perf only {short(pc - cc)}, "
            f"{sum((cc - pc).values())} cstrace only {short(cc - pc)}")
    pok = pused
    if has_calls(perf) and perf.execute(
            "SELECT count(*) FROM calls WHERE insn_count > 0").fetchone()[0]:
        err("perf's calls count instructions")
    summary = (f"{len(a)} samples equal ({ndisputed} with an end in disputed code); "
               f"{sum(pc.values())} calls equal ({pleft} perf, {cleft} cstrace left out); "
               f"{len(pok)} call paths equal; {len(disputed)} disputed ranges, {len(labels)} labels")
    print(summary)
    if report:
        with open(report, "a") as f:
            print(summary, file=f)
    for e in errors[:20]:
        print("DIFF:", e, file=sys.stderr)
    return 1 if errors else 0


sys.exit(main())
