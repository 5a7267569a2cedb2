#!/usr/bin/env python3
"""make_regress.py - the regression inputs of the fuzz findings issue 15 lists
(a campaign found them before the harnesses were in the project; their fixes
have unit tests too), written as the inputs of tests/fuzz's harnesses:

  hprof/  a CLASS DUMP of java.lang.Object with an instance size of 0xF9000000
          (finding 1); System.props with 1,000 buckets on a self-linked entry
          (finding 2); a heap with no GC roots, so no leak suspects (finding 12)
  index/  index files (fuzz_index sets their checksums and key) of the
          tiny heap whose DOMA section has an immediate-dominator cycle, or a
          chain to an unreachable object (finding 3), or whose dynamic-size
          section claims an exact size of 2^64-1 (finding 4)
  query/  group_by whose lambda fails, a float key beyond int64 (finding 5)
  wire/   SNAPSHOT replies naming object id 2^32-3, an array of 2^31-1
          elements, a THREAD of 70,000 frames, an instance without field bytes
          (finding 6)

Usage: make_regress.py TINY_INDEX OUT_DIR, where TINY_INDEX is the seed
fuzz_index writes (build/fuzz/corpus/index/tiny.hsidx). The files but the
HPROF ones are kept in tests/fuzz/regress; this script says how they were
made. make_regress.py --hprof OUT_DIR writes only OUT_DIR/hprof/: tests/fuzz/
run.sh writes them into build/fuzz/regress on every run, since the project
keeps no HPROF files, however small.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import index_file  # noqa: E402  (tests/index_file.py: the index file's layout)

be = lambda fmt, *v: struct.pack(">" + fmt, *v)


# ---- HPROF, ids of 8 bytes ----
class Hprof:
    def __init__(self):
        self.b = bytearray(b"JAVA PROFILE 1.0.2\0" + be("I", 8) + be("Q", 0))
        self.names = {}

    def rec(self, tag, body):
        self.b += be("BII", tag, 0, len(body)) + body

    def name(self, s):
        if s not in self.names:
            self.names[s] = 0x1000 + len(self.names)
            self.rec(0x01, be("Q", self.names[s]) + s.encode())
        return self.names[s]

    def load_class(self, serial, cid, name):
        self.rec(0x02, be("IQIQ", serial, cid, 0, self.name(name)))


def class_dump(cid, sup, size, statics=(), fields=()):
    b = be("BQIQQQQQQI", 0x20, cid, 0, sup, 0, 0, 0, 0, 0, size) + be("H", 0)
    b += be("H", len(statics))
    for n, t, v in statics:
        b += be("QB", n, t) + (be("Q", v) if t == 2 else be("I", v))
    b += be("H", len(fields))
    for n, t in fields:
        b += be("QB", n, t)
    return b


def instance(oid, cid, vals):
    data = b"".join(be("Q", v) for v in vals)
    return be("BQIQI", 0x21, oid, 0, cid, len(data)) + data


def obj_array(oid, cid, elems):
    return be("BQIIQ", 0x22, oid, 0, len(elems), cid) + b"".join(be("Q", e) for e in elems)


def hprof_object_size():
    h = Hprof()
    h.load_class(1, 0x100, "java/lang/Object")
    h.load_class(2, 0x200, "Foo")
    body = class_dump(0x100, 0, 0xF9000000) + class_dump(0x200, 0x100, 8, fields=[(h.name("x"), 2)])
    body += instance(0x300, 0x200, [0]) + be("BQ", 0xFF, 0x300)
    h.rec(0x1C, body)
    h.rec(0x2C, b"")
    return bytes(h.b)


def hprof_props_cycle():
    h = Hprof()
    for serial, (cid, n) in enumerate([(0x100, "java/lang/Object"), (0x200, "java/lang/System"),
                                       (0x300, "java/util/Properties"),
                                       (0x400, "java/util/Hashtable$Entry"),
                                       (0x500, "[Ljava/lang/Object;")]):
        h.load_class(serial + 1, cid, n)
    body = class_dump(0x100, 0, 0)
    body += class_dump(0x200, 0x100, 0, statics=[(h.name("props"), 2, 0x1000)])
    body += class_dump(0x300, 0x100, 8, fields=[(h.name("table"), 2)])
    body += class_dump(0x400, 0x100, 24, fields=[(h.name("key"), 2), (h.name("value"), 2),
                                                 (h.name("next"), 2)])
    body += class_dump(0x500, 0x100, 0)
    body += instance(0x1000, 0x300, [0x2000])
    body += obj_array(0x2000, 0x500, [0x3000] * 1000)
    body += instance(0x3000, 0x400, [0, 0, 0x3000])  # next = itself
    body += be("BQ", 0x05, 0x200)
    h.rec(0x1C, body)
    h.rec(0x2C, b"")
    return bytes(h.b)


def hprof_no_suspects():
    # java.lang.Object's CLASS DUMP and nothing reachable: sus_find sorted an
    # empty (NULL) array of suspects
    h = Hprof()
    h.load_class(1, 0x100, "java/lang/Object")
    h.rec(0x1C, class_dump(0x100, 0, 0) + instance(0x300, 0x100, []))
    h.rec(0x2C, b"")
    return bytes(h.b)


def hprof_files():
    return {"hprof/object-instance-size.hprof": hprof_object_size(),
            "hprof/props-self-linked.hprof": hprof_props_cycle(),
            "hprof/no-suspects.hprof": hprof_no_suspects()}


# ---- index files (this machine's byte order, as heapsh writes them) ----
def sections(idx):
    return {tag: (data, ln) for tag, _, data, ln in index_file.sections(idx)}


DOMA, DYNA = 0x444F4D41, 0x44594E41


def index_variants(tiny):
    tiny = bytearray(tiny)  # fuzz_index sets every input's checksums
    secs = sections(tiny)
    off, ln = secs[DOMA]
    n = struct.unpack_from("<I", tiny, off + 4)[0]  # after the layout's magic
    idom = off + 16
    cycle = bytearray(tiny)
    struct.pack_into("<II", cycle, idom, 1, 0)  # idom[0] = 1, idom[1] = 0
    chain = bytearray(tiny)
    struct.pack_into("<I", chain, idom, 0xFFFFFFFF)  # object 0 unreachable...
    struct.pack_into("<I", chain, idom + 4, 0)  # ...and object 1 dominated by it
    off, ln = secs[DYNA]
    magic, nn, ncomp, has_est, edges = struct.unpack_from("<IIIIQ", tiny, off)
    head = 4 * 4 + 8 + 8 * ((ln - (24 + nn * 4 + ncomp * 4 * 2 + ncomp * 8 + (ncomp + 1) * 4 +
                                   edges * 4 + ncomp + ncomp * 8 + (ncomp * 4 if has_est else 0))) // 8)
    flags = off + head + nn * 4 + ncomp * 4 * 2 + ncomp * 8 + (ncomp + 1) * 4 + edges * 4
    exact = flags + ncomp
    big = bytearray(tiny)
    big[flags] |= 1  # DYN_EXACT
    struct.pack_into("<Q", big, exact, 0xFFFFFFFFFFFFFFFF)
    # finding 13: one component's offset far past the edges, mid-table (the
    # rows before it used to be read before it was checked)
    out_start = flags - edges * 4 - (ncomp + 1) * 4
    past = bytearray(tiny)
    struct.pack_into("<I", past, out_start + 4 * (ncomp // 2), edges + 100000)
    return {"idom-cycle": bytes(cycle), "idom-unreachable-chain": bytes(chain),
            "dyn-exact-max": bytes(big), "dyn-out-start-past-edges": bytes(past)}


# ---- agent replies (fuzz_wire's modes 0-9: the request byte, then the reply stream) ----
def s(text):
    return be("I", len(text)) + text.encode()


def frame(t, payload):
    return be("IB", len(payload) + 1, t) + payload


def info(heap_max=1 << 20):
    return frame(2, s("VM") + s("17") + s("Debian") + be("QQQQI", 1, 1 << 19, 1 << 20, heap_max, 2) +
                 s("heapsh-agent 1.2"))


def cls(cid, sup, sig, fields=()):
    b = be("BQQQI", 1, cid, sup, 0, 0) + s(sig) + be("H", len(fields))
    for n, sg in fields:
        b += s(n) + s(sg) + be("B", 0)
    return b


def snapshot(records, objects):
    return bytes([2]) + info() + frame(0x40, records) + frame(0x41, be("QQ", objects, 10))


BASE = cls(1, 0, "Ljava/lang/Object;") + cls(2, 1, "[Ljava/lang/Object;") + cls(3, 1, "LEmpty;")


def replies():
    huge_id = BASE + be("BQQQI", 2, 2**32 - 3, 3, 16, 0xFFFFFFFF)
    long_array = BASE + be("BQQQI", 2, 4, 2, 16, 2**31 - 1)
    thread = BASE + be("BQI", 7, 0, 1) + s("main") + be("I", 70000) + (s("LA;") + s("m") + s("()V")) * 3
    empty = BASE + be("BQQQI", 2, 4, 3, 16, 0xFFFFFFFF) + be("BBQQI", 4, 21, 4, 0, 0xFFFFFFFF)
    return {"snapshot-huge-id": snapshot(huge_id, 1), "snapshot-long-array": snapshot(long_array, 1),
            "snapshot-thread-frames": snapshot(thread, 0), "snapshot-empty-instance": snapshot(empty, 1)}


def write(out, files):
    import os
    for name, data in files.items():
        os.makedirs(os.path.dirname(f"{out}/{name}"), exist_ok=True)
        with open(f"{out}/{name}", "wb") as f:
            f.write(data)
        print(f"{out}/{name}: {len(data)} bytes")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out = sys.argv[2]
    if sys.argv[1] == "--hprof":
        write(out, hprof_files())
        return
    files = dict(hprof_files())
    files.update({"query/group-by-failing-lambda.hq": b"objects.group_by([o | o.no_such_field]).length\n",
                  "query/group-by-float-key.hq": b"[1, 2].group_by([x | 1e300 * x]).length\n"
                                                 b"[1].group_by([x | 0 - 1e19]).length\n"})
    with open(sys.argv[1], "rb") as f:
        for k, v in index_variants(f.read()).items():
            files["index/" + k] = v
    for k, v in replies().items():
        files["wire/" + k] = v
    write(out, files)


main()
