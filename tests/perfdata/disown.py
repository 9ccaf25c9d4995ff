#!/usr/bin/env python3
"""disown.py IN OUT FAULT [ARG]: OUT is perf.data IN with one fault of the kind
where the file's own records disown some of its trace, and prints what the
warning about it must name (key=value lines, offsets in OUT):

  drop-aux N      AUX record N (counting those with trace, from 0; -1: the last)
                  taken out: its AUXTRACE bytes are covered by no AUX record
                  (prints auxtrace=OFFSET cpu= aux_offset= size=)
  dup-aux N       a copy of AUX record N right after it: its trace claimed twice
                  (prints aux=OFFSET of the first, dup=OFFSET of the copy, size=)
  widen-aux N     AUX record N starts as far back as the one before it starts:
                  over all of it, in the same buffer (prints aux=, dup=, bytes=)
  split-aux N     AUX record N cut in two at the middle frame, as two sched-outs
                  read in one AUXTRACE buffer (not a fault: the base of a drop
                  inside a buffer)
  traceid CPU ID  CPU's TRCTRACEIDR/ETMTRACEIDR in AUXTRACE_INFO set to ID
                  (prints cpu= old=ID new=ID auxtrace=OFFSET of its first buffer)
  drop-cpu CPU    CPU's block taken out of AUXTRACE_INFO, nr_cpu one less
                  (prints cpu= old=ID nr_cpu= auxtrace=)
  drop-mmap NAME  the MMAP2 record of the file whose path ends in NAME taken out

Record offsets move with what is put in or taken out (pdfile.splice)."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pdfile  # noqa: E402

ETMV3_MAGIC = 0x3030303030303030


def aux_records(b, name):
    """(offset, header size) of each AUX record that has trace, in file order."""
    return [(pos, h) for pos, t, h, _p in pdfile.records(b, name)
            if t == pdfile.PERF_RECORD_AUX and struct.unpack_from("<Q", b, pos + 16)[0]]


def auxtrace_holding(b, name, aux_off, size, after):
    """The first AUXTRACE record at or after file offset @after whose payload holds
    aux offsets [aux_off, +size): perf record writes a ring's buffer after its AUX
    records (every ring's offsets start at 0)."""
    for pos, t, h, p in pdfile.records(b, name):
        if t == pdfile.PERF_RECORD_AUXTRACE and pos >= after:
            o = struct.unpack_from("<Q", b, pos + 16)[0]
            if o <= aux_off and aux_off + size <= o + p:
                return pos, struct.unpack_from("<i", b, pos + 40)[0]
    sys.exit("%s: no AUXTRACE record holds aux offset %d" % (name, aux_off))


def first_auxtrace(b, name, cpu):
    """The file offset of the first AUXTRACE record of @cpu's ring."""
    for pos, t, _h, _p in pdfile.records(b, name):
        if t == pdfile.PERF_RECORD_AUXTRACE and struct.unpack_from("<i", b, pos + 40)[0] == cpu:
            return pos
    sys.exit("%s: no AUXTRACE record of cpu %d" % (name, cpu))


def cpu_blocks(b, name):
    """AUXTRACE_INFO's record offset, and (word index, words, cpu, magic) of each
    CPU block of its priv[] words (header versions 0 and 1)."""
    for pos, t, h, _p in pdfile.records(b, name):
        if t != pdfile.PERF_RECORD_AUXTRACE_INFO:
            continue
        priv = pos + 16
        n = (h - 16) // 8
        w = lambda i: struct.unpack_from("<Q", b, priv + 8 * i)[0]  # noqa: E731
        version, ncpu = w(0), w(1) & 0xffffffff
        blocks, i = [], 3
        for _ in range(ncpu):
            magic, cpu = w(i), w(i + 1)
            if version == 0:
                words = 6 if magic == ETMV3_MAGIC else 9
            else:
                words = 3 + w(i + 2)
            blocks.append((i, words, cpu, magic))
            i += words
        if i > n:
            sys.exit("%s: AUXTRACE_INFO shorter than its blocks" % name)
        return pos, priv, version, blocks
    sys.exit("%s: no AUXTRACE_INFO" % name)


def main():
    src, dst, fault, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    b = bytearray(open(src, "rb").read())
    if fault in ("drop-aux", "dup-aux", "widen-aux", "split-aux"):
        auxs = aux_records(b, src)
        pos, hsize = auxs[int(args[0])]
        aux_off, size, flags = struct.unpack_from("<QQQ", b, pos + 8)
        rec = bytes(b[pos:pos + hsize])
        if fault == "drop-aux":
            pdfile.splice(b, pos, hsize)
            at, cpu = auxtrace_holding(b, src, aux_off, size, pos)
            print("auxtrace=%d cpu=%d aux_offset=0x%x size=%d" % (at, cpu, aux_off, size))
        elif fault == "dup-aux":
            pdfile.splice(b, pos + hsize, 0, rec)
            print("aux=%d dup=%d size=%d" % (pos, pos + hsize, size))
        elif fault == "widen-aux":
            before = auxs[int(args[0]) - 1][0]
            more = aux_off - struct.unpack_from("<Q", b, before + 8)[0]
            struct.pack_into("<QQ", b, pos + 8, aux_off - more, size + more)
            print("aux=%d dup=%d bytes=%d" % (before, pos, more))
        else:
            half = size // 32 * 16
            second = bytearray(rec)
            struct.pack_into("<QQ", b, pos + 8, aux_off, half)
            struct.pack_into("<QQ", second, 8, aux_off + half, size - half)
            pdfile.splice(b, pos + hsize, 0, bytes(second))
            print("aux=%d second=%d" % (pos, pos + hsize))
    elif fault in ("traceid", "drop-cpu"):
        pos, priv, version, blocks = cpu_blocks(b, src)
        cpu = int(args[0], 0)
        blk = [x for x in blocks if x[2] == cpu]
        if not blk:
            sys.exit("%s: no CPU %d in AUXTRACE_INFO" % (src, cpu))
        i, words, _cpu, magic = blk[0]
        # the second parameter: TRCTRACEIDR (ETMv4, ETE) or ETMTRACEIDR (ETMv3)
        at = priv + 8 * (i + (2 if version == 0 else 3) + 1)
        old = struct.unpack_from("<Q", b, at)[0] & 0x7f
        if fault == "traceid":
            struct.pack_into("<Q", b, at, int(args[1], 0))
            print("cpu=%d old=0x%x new=0x%x" % (cpu, old, int(args[1], 0)))
        else:
            hdr = struct.unpack_from("<IHH", b, pos)
            struct.pack_into("<IHH", b, pos, hdr[0], hdr[1], hdr[2] - 8 * words)
            w1 = struct.unpack_from("<Q", b, priv + 8)[0]
            struct.pack_into("<Q", b, priv + 8, w1 - 1)
            pdfile.splice(b, priv + 8 * i, 8 * words)
            print("cpu=%d old=0x%x nr_cpu=%d" % (cpu, old, len(blocks) - 1))
        print("auxtrace=%d" % first_auxtrace(b, src, cpu))
    elif fault == "drop-mmap":
        for pos, t, h, _p in pdfile.records(b, src):
            fn = bytes(b[pos + 72:pos + h]).split(b"\0")[0].decode(errors="replace")
            if t == pdfile.PERF_RECORD_MMAP2 and fn.endswith(args[0]):
                pdfile.splice(b, pos, h)
                print("mmap=%d file=%s" % (pos, fn))
                break
        else:
            sys.exit("%s: no MMAP2 record of %s" % (src, args[0]))
    else:
        sys.exit(__doc__)
    open(dst, "wb").write(b)


main()
