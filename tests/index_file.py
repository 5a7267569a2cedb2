"""index_file.py - read heapsh index files and set their checksums again, for
the tests that craft damaged ones (tests/t_engine.sh, tests/fuzz/make_regress.py).

The layout (src/engine/idx.c, version 5, this machine's byte order): a header
of the magic, the version, a byte order mark, the dump's key (32 bytes), the
count of sections and a CRC-32 of all that; then each section: a record of its
tag (u32), length (u64) and a CRC-32 of both and the payload, and the payload
from the next multiple of 4096 bytes. Bytes after the last section counted are
not read.
"""
import struct
import zlib

HEADER = 8 + 4 + 4 + 32 + 4 + 4
RECORD = 4 + 8 + 4
ALIGN = 4096


def sections(d):
    """[(tag, record offset, payload offset, length)] of the sections that fit d."""
    nsec, = struct.unpack_from("<I", d, HEADER - 8)
    p, out = HEADER, []
    for _ in range(nsec):
        if p + RECORD > len(d):
            break
        tag, ln = struct.unpack_from("<IQ", d, p)
        data = (p + RECORD + ALIGN - 1) // ALIGN * ALIGN
        if data > len(d) or ln > len(d) - data:
            break
        out.append((tag, p, data, ln))
        p = data + ln
    return out


def payload(d, tag):
    """(offset, length) of section tag's payload."""
    for t, _, data, ln in sections(d):
        if t == tag:
            return data, ln
    raise KeyError(hex(tag))


def fix(d, key=None):
    """d (a bytearray) with every checksum set again, after key (32 bytes) when given."""
    if key is not None:
        d[16:48] = key
    for tag, rec, data, ln in sections(d):
        crc = zlib.crc32(bytes(d[rec:rec + 12]))
        crc = zlib.crc32(bytes(d[data:data + ln]), crc)
        struct.pack_into("<I", d, rec + 12, crc)
    struct.pack_into("<I", d, HEADER - 4, zlib.crc32(bytes(d[:HEADER - 4])))
    return d
