"""What the scripts that rewrite perf.data files share: the data section and its
records, the feature table (one {offset, size} entry per set bit, after the data
section), moving the feature sections, with the AUXTRACE index's record offsets,
when bytes are put in before them, and putting in or taking out bytes of the data
section (splice)."""
import struct

FEAT_AUXTRACE = 18
PERF_RECORD_MMAP2 = 10
PERF_RECORD_AUX = 11
PERF_RECORD_AUXTRACE_INFO = 70
PERF_RECORD_AUXTRACE = 71


def data_section(b):
    """(offset, size) of the data section."""
    return struct.unpack_from("<QQ", b, 40)


def records(b, name):
    """(offset, type, header size, payload size) of each record of the data section,
    in file order (only an AUXTRACE record has a payload: the trace after it);
    @name is the file's, for the error of a bad record."""
    data_off, data_size = data_section(b)
    pos, end = data_off, data_off + data_size
    while pos + 8 <= end:
        rtype, _misc, hsize = struct.unpack_from("<IHH", b, pos)
        if hsize < 8:
            raise SystemExit("%s: record at %d has size %d" % (name, pos, hsize))
        psize = struct.unpack_from("<Q", b, pos + 8)[0] if rtype == PERF_RECORD_AUXTRACE else 0
        yield pos, rtype, hsize, psize
        pos += hsize + psize


def auxtrace_payloads(b, name):
    """(offset, size) of each AUXTRACE record's payload (the trace that follows the
    record), in file order; @name is the file's, for the error of a bad record."""
    for pos, _rtype, hsize, psize in records(b, name):
        if psize:
            yield pos + hsize, psize


def features(b):
    """(bit, table entry position, section offset, section size) of each feature."""
    data_off, data_size = data_section(b)
    bits = struct.unpack_from("<4Q", b, 72)
    table, k = data_off + data_size, 0
    for bit in range(256):
        if (bits[bit // 64] >> (bit % 64)) & 1:
            ent = table + 16 * k
            off, size = struct.unpack_from("<QQ", b, ent)
            yield bit, ent, off, size
            k += 1


def move_features(b, delta, index_from=0):
    """Feature sections move on by @delta; so do the AUXTRACE index's record offsets
    at or after @index_from (perf's layout: a count, then {offset, size} pairs)."""
    for bit, ent, off, _size in list(features(b)):
        if bit == FEAT_AUXTRACE:
            n = struct.unpack_from("<Q", b, off)[0]
            for i in range(n):
                pos = off + 8 + 16 * i
                o = struct.unpack_from("<Q", b, pos)[0]
                if o >= index_from:
                    struct.pack_into("<Q", b, pos, o + delta)
        struct.pack_into("<Q", b, ent, off + delta)


def splice(b, at, remove, insert=b""):
    """@b (a bytearray) with the @remove bytes of its data section at @at replaced by
    @insert: the data section's size, the feature sections and the AUXTRACE index's
    offsets of the records after them move by the difference. Whole records only
    (no AUXTRACE record may be taken out: its index entry would point nowhere)."""
    delta = len(insert) - remove
    data_off, data_size = data_section(b)
    move_features(b, delta, index_from=at + remove)
    struct.pack_into("<Q", b, 48, data_size + delta)
    b[at:at + remove] = insert
