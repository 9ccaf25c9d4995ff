#!/usr/bin/env python3
# A function symbol of an ELF file as the kernel's address filters and uprobes take
# it, from binutils' readelf alone (independent of cstrace's libelf code): its
# file offset (through the PT_LOAD holding it), size and virtual address, in hex.
# Usage: elfsym.py FILE SYM   ->   OFFSET SIZE VADDR
import re, subprocess, sys


def readelf(*args):
    return subprocess.run(["readelf", "-W"] + list(args), check=True, capture_output=True,
                          text=True).stdout


def main():
    path, name = sys.argv[1], sys.argv[2]
    arm = "ARM" in readelf("-h", path).split("Machine:")[1].split("\n")[0]
    loads = []
    for l in readelf("-l", path).splitlines():
        w = l.split()
        if w and w[0] == "LOAD":
            loads.append((int(w[2], 16), int(w[1], 16), int(w[4], 16)))  # vaddr, off, filesz
    syms = set()
    # .symtab when there is one (readelf prints it after .dynsym)
    text = readelf("-s", path)
    tables = re.split(r"\nSymbol table '", text)
    table = [t for t in tables if t.startswith(".symtab")] or tables
    for l in table[-1].splitlines():
        w = l.split()
        if len(w) >= 8 and w[3] == "FUNC" and w[7] == name and w[6] != "UND":
            v = int(w[1], 16)
            syms.add((v & ~1 if arm else v, int(w[2], 0)))
    if len(syms) != 1:
        sys.exit("%s: %d function(s) %s" % (path, len(syms), name))
    v, size = syms.pop()
    for lv, off, sz in loads:
        if lv <= v < lv + sz:
            print("%x %x %x" % (v - lv + off, size, v))
            return
    sys.exit("%s: %s at 0x%x is in no PT_LOAD" % (path, name, v))


main()
