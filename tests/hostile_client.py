#!/usr/bin/env python3
"""hostile_client.py - misbehaving clients of heapsh's agent (docs/protocol.md).

Usage: python3 tests/hostile_client.py SOCKET CASE

Connects to the agent's Unix-domain socket (/tmp/.heapsh-PID/agent.sock),
plays one CASE and prints one line saying what the agent did. Exit status 0
when the agent behaved as the protocol says, 1 when it did not, 2 on a usage
error. Python 3 standard library only.

Cases where the agent must close the connection (and nothing else):
  random          4 KiB of (seeded) random bytes
  truncated       the first half of a HELLO frame, then the client closes
  zero-length     a frame whose length is 0
  huge-length     a frame whose length is 0xFFFFFFFF
  over-limit      a frame whose length is 65 537 (requests are at most 65 536)
  unknown-type    a valid HELLO, then a frame of type 0x3e
  long-string     HELLO, then INSTANCES whose class string is longer than the frame
  deep-predicate  HELLO, then INSTANCES with a predicate nested 1000 deep
  before-hello    INFO before HELLO
  bad-magic       HELLO with the wrong magic
  slow            half a frame, then silence: the agent's frame timeout (10 s)
                  must close it; prints how long that took
  peer            HELLO from another user (run as that user): closed at once,
                  without a reply (SO_PEERCRED)
Cases where the agent must answer (controls: the client speaks the protocol):
  valid           HELLO then INFO; prints the JVM's pid
  nested-ok       HELLO then INSTANCES Order with NOT nested 30 deep over TRUE
                  (within the 32-level limit); prints instances examined and matched
Query programs (ANALYZE, src/dsl/prog.h): malformed ones close the connection
  analyze-magic   a program with the wrong magic
  analyze-forward a node that refers to a node after it (a cycle, if allowed)
  analyze-deep    NOT nested 1000 deep (the decoder allows 200)
  analyze-cut     a valid program cut in the middle of a node
  analyze-counts  65535 strings announced, none sent
  analyze-random  a valid header, then 2 KiB of random bytes
  analyze-trailing a valid program with bytes after its last statement
and well-formed ones are answered, the connection staying open:
  analyze-ok      1 + 2: END status 0, the value 3, then INFO answered
  analyze-cancel  a long program (10^9 steps), CANCEL after 1 s: END status 4
                  (cancelled) within 20 s, then INFO answered
  analyze-time    the long program with a 1 s time limit: END status 3 (limit)
  analyze-memory  a program that builds lists without end, 16 MiB allowed: END
                  status 3 (limit), then INFO answered
Other:
  connect         only connect(); prints "denied: ERRNO" or "connected"
"""

import errno
import os
import random
import socket
import struct
import sys
import time

MAGIC = 0x48534147
T_HELLO, T_INFO, T_INSTANCES = 0x01, 0x02, 0x05
T_ERROR = 0x7F
T_ALLOC_START, T_ALLOC_STATUS, T_ALLOC_LEAKS = 0x07, 0x09, 0x12
T_ANALYZE, T_CANCEL, T_END = 0x10, 0x11, 0x41

# Query programs (src/dsl/prog.h): node kinds and operators of src/dsl/ast.h.
N_INT, N_BOOL, N_IDENT, N_LIST, N_LAMBDA, N_CALL, N_NOT, N_BIN = 0, 3, 5, 6, 8, 10, 12, 13
OP_ADD, OP_LT = 0, 6
S_EXPR = 0


class Prog:
    """A tiny encoder of programs: strings, nodes (children first), statements."""

    def __init__(self):
        self.strings, self.nodes, self.stmts = [], [], []

    def s(self, text):
        if text not in self.strings:
            self.strings.append(text)
        return self.strings.index(text) + 1

    def node(self, kind, op=0, name=0, a=0, b=0, result=0, extra=b"", items=(), params=()):
        body = struct.pack(">BBBHHHHHH", kind, op, 0, 1, 1, name, a, b, result) + extra
        body += struct.pack(">H", len(items)) + b"".join(struct.pack(">H", i) for i in items)
        if kind == N_LAMBDA:
            body += struct.pack(">B", len(params)) + b"".join(
                struct.pack(">HH", self.s(p), 0) for p in params)
        self.nodes.append(body)
        return len(self.nodes)

    def int(self, v):
        return self.node(N_INT, extra=struct.pack(">q", v))

    def expr(self, n):
        self.stmts.append(struct.pack(">BHHHHH", S_EXPR, 1, 1, 0, n, 0))

    def bytes(self):
        out = struct.pack(">IHH", 0x48535150, 1, 0) + struct.pack(">H", len(self.strings))
        for t in self.strings:
            d = t.encode()
            out += struct.pack(">H", len(d)) + d
        out += struct.pack(">H", len(self.nodes)) + b"".join(self.nodes)
        return out + struct.pack(">H", len(self.stmts)) + b"".join(self.stmts)


def analyze_frame(prog, time_ms=0, mem_mb=0):
    return frame(T_ANALYZE, struct.pack(">III", 0, time_ms, mem_mb) + prog)


def prog_sum():
    p = Prog()
    p.expr(p.node(N_BIN, OP_ADD, a=p.int(1), b=p.int(2)))
    return p.bytes()


def prog_long():
    """#[0..999].map([a | #[0..999].map([b | #[0..999].count([c | c < a + b])]).sum]).sum"""
    p = Prog()
    lst = p.node(N_LIST, items=[p.int(i) for i in range(1000)])
    a, b, c = p.s("a"), p.s("b"), p.s("c")
    lt = p.node(N_BIN, OP_LT, a=p.node(N_IDENT, name=c),
                b=p.node(N_BIN, OP_ADD, a=p.node(N_IDENT, name=a), b=p.node(N_IDENT, name=b)))
    inner = p.node(N_CALL, name=p.s("count"), a=lst, items=[p.node(N_LAMBDA, result=lt, params=["c"])])
    mid = p.node(N_CALL, name=p.s("map"), a=lst, items=[p.node(N_LAMBDA, result=inner, params=["b"])])
    mid_sum = p.node(9, name=p.s("sum"), a=mid)   # N_MEMBER
    outer = p.node(N_CALL, name=p.s("map"), a=lst, items=[p.node(N_LAMBDA, result=mid_sum, params=["a"])])
    p.expr(p.node(9, name=p.s("sum"), a=outer))
    return p.bytes()


def prog_memory():
    """#[0..999].map([a | #[0..999].map([b | #[0..999].map([c | c + a])])]) : about 10^9 values"""
    p = Prog()
    lst = p.node(N_LIST, items=[p.int(i) for i in range(1000)])
    a, c = p.s("a"), p.s("c")
    add = p.node(N_BIN, OP_ADD, a=p.node(N_IDENT, name=c), b=p.node(N_IDENT, name=a))
    inner = p.node(N_CALL, name=p.s("map"), a=lst, items=[p.node(N_LAMBDA, result=add, params=["c"])])
    mid = p.node(N_CALL, name=p.s("map"), a=lst, items=[p.node(N_LAMBDA, result=inner, params=["b"])])
    outer = p.node(N_CALL, name=p.s("map"), a=lst, items=[p.node(N_LAMBDA, result=mid, params=["a"])])
    p.expr(outer)
    return p.bytes()


def read_end(s, limit):
    """Frames until END: (status, message, [DATA payloads]) or None if closed."""
    s.settimeout(limit)
    datas = []
    while True:
        f = read_frame(s)
        if f is None:
            return None
        if f[0] == 0x40:
            datas.append(f[1])
            continue
        if f[0] != T_END:
            return ("type 0x%02x" % f[0], b"", datas)
        st = f[1][0]
        n = struct.unpack(">I", f[1][8:12])[0]
        return (st, f[1][12:12 + n].decode("utf-8", "replace"), datas)


def info_ok(s):
    send(s, frame(T_INFO))
    r = read_frame(s)
    return r is not None and r[0] == T_INFO


def case_analyze_ok(s):
    problem = hello(s)
    if problem:
        return False, problem
    send(s, analyze_frame(prog_sum()))
    r = read_end(s, WAIT_S)
    if r is None or r[0] != 0:
        return False, "analyze-ok: END %r" % (r,)
    data = b"".join(r[2])
    # a RESULT record: tag 1, stmt, kind, name "", then INT (2) 3
    if data != struct.pack(">BHBIBq", 1, 0, S_EXPR, 0, 2, 3):
        return False, "analyze-ok: records %r" % data
    if not info_ok(s):
        return False, "analyze-ok: INFO not answered after"
    return True, "analyze-ok: 3, then INFO answered"


def case_analyze_cancel(s):
    problem = hello(s)
    if problem:
        return False, problem
    send(s, analyze_frame(prog_long()))
    time.sleep(1.0)
    t0 = time.monotonic()
    send(s, frame(T_CANCEL))
    r = read_end(s, WAIT_S)
    if r is None or r[0] != 4:
        return False, "analyze-cancel: END %r" % (r,)
    t = time.monotonic() - t0
    if not info_ok(s):
        return False, "analyze-cancel: INFO not answered after"
    return True, "analyze-cancel: cancelled %.2f s after CANCEL (%s), then INFO answered" % (t, r[1])


def case_analyze_time(s):
    problem = hello(s)
    if problem:
        return False, problem
    t0 = time.monotonic()
    send(s, analyze_frame(prog_long(), time_ms=1000))
    r = read_end(s, WAIT_S)
    if r is None or r[0] != 3:
        return False, "analyze-time: END %r" % (r,)
    return True, "analyze-time: limit after %.2f s (%s)" % (time.monotonic() - t0, r[1])


def case_analyze_memory(s):
    problem = hello(s)
    if problem:
        return False, problem
    send(s, analyze_frame(prog_memory(), mem_mb=16))
    r = read_end(s, 120)
    if r is None or r[0] != 3:
        return False, "analyze-memory: END %r" % (r,)
    if not info_ok(s):
        return False, "analyze-memory: INFO not answered after"
    return True, "analyze-memory: limit (%s), then INFO answered" % r[1]


def bad_programs():
    good = prog_sum()
    p = Prog()
    p.nodes.append(struct.pack(">BBBHHHHHH", N_NOT, 0, 0, 1, 1, 0, 2, 0, 0) + struct.pack(">H", 0))
    p.node(N_BOOL, extra=b"\1")
    p.expr(1)
    forward = p.bytes()
    p = Prog()
    n = p.node(N_BOOL, extra=b"\1")
    for _ in range(1000):
        n = p.node(N_NOT, a=n)
    p.expr(n)
    deep = p.bytes()
    rnd = random.Random(99)
    return {
        "analyze-magic": b"XXXX" + good[4:],
        "analyze-forward": forward,
        "analyze-deep": deep,
        "analyze-cut": good[:len(good) - 9],
        "analyze-counts": struct.pack(">IHHH", 0x48535150, 1, 0, 65535),
        "analyze-random": good[:8] + bytes(rnd.getrandbits(8) for _ in range(2048)),
        "analyze-trailing": good + b"\0\0\0",
    }
WAIT_S = 20.0   # longest wait for the agent to close a connection


def frame(ftype, payload=b""):
    return struct.pack(">IB", len(payload) + 1, ftype) + payload


def s_str(text):
    data = text.encode()
    return struct.pack(">I", len(data)) + data


def hello_frame(magic=MAGIC, version=1):
    return frame(T_HELLO, struct.pack(">IH", magic, version))


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(WAIT_S)
    s.connect(path)
    return s


def send(s, data):
    """Sends data; False when the agent has already closed the connection."""
    try:
        s.sendall(data)
        return True
    except (BrokenPipeError, ConnectionResetError):
        return False


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def read_frame(s):
    """The next frame as (type, payload), or None if the connection closed."""
    try:
        head = recv_exact(s, 5)
        if head is None:
            return None
        length, ftype = struct.unpack(">IB", head)
        payload = recv_exact(s, length - 1)
        if payload is None:
            return None
        return ftype, payload
    except ConnectionResetError:
        return None


def wait_closed(s, limit=WAIT_S):
    """Seconds until the agent closed the connection, or None if it did not
    within limit (it sent data instead, or stayed silent)."""
    t0 = time.monotonic()
    s.settimeout(limit)
    try:
        while True:
            data = s.recv(65536)
            if not data:
                return time.monotonic() - t0
            return None             # the agent answered something
    except ConnectionResetError:
        return time.monotonic() - t0
    except socket.timeout:
        return None


def hello(s):
    """Sends a valid HELLO; returns an error text, or None when it was answered."""
    if not send(s, hello_frame()):
        return "the agent closed the connection before HELLO was sent"
    reply = read_frame(s)
    if reply is None:
        return "the agent closed the connection instead of answering HELLO"
    ftype, payload = reply
    if ftype != T_HELLO or struct.unpack(">I", payload[:4])[0] != MAGIC:
        return "unexpected HELLO reply: type 0x%02x" % ftype
    return None


def instances_frame(cls, pred, limit=0, flags=1):
    return frame(T_INSTANCES, s_str(cls) + struct.pack(">BI", flags, limit) + pred)


def expect_close(s, what, before=b"", need_hello=False):
    if need_hello:
        problem = hello(s)
        if problem:
            return False, problem
    send(s, before)
    t = wait_closed(s)
    if t is None:
        return False, "%s: the agent did not close the connection within %.0f s" % (what, WAIT_S)
    return True, "%s: closed by the agent after %.2f s" % (what, t)


def case_valid(s):
    problem = hello(s)
    if problem:
        return False, problem
    send(s, frame(T_INFO))
    reply = read_frame(s)
    if reply is None or reply[0] != T_INFO:
        return False, "valid: no INFO reply"
    p = reply[1]
    at = 0
    for _ in range(3):              # vm name, version, vendor
        n = struct.unpack(">I", p[at:at + 4])[0]
        at += 4 + n
    pid = struct.unpack(">Q", p[at:at + 8])[0]
    return True, "valid: INFO answered, pid %d" % pid


def case_nested_ok(s):
    problem = hello(s)
    if problem:
        return False, problem
    pred = bytes([3]) * 30 + bytes([0])   # NOT^30 TRUE = TRUE
    send(s, instances_frame("Order", pred))
    reply = read_frame(s)
    if reply is None:
        return False, "nested-ok: the agent closed the connection"
    ftype, p = reply
    if ftype != T_INSTANCES:
        return False, "nested-ok: reply of type 0x%02x" % ftype
    examined, matched = struct.unpack(">QQ", p[:16])
    return True, "nested-ok: examined %d matched %d" % (examined, matched)


def case_slow(s):
    send(s, hello_frame()[:3])
    t = wait_closed(s, 30.0)
    if t is None:
        return False, "slow: the agent kept a half-sent frame open for 30 s"
    if t < 5:
        return False, "slow: closed after %.2f s, before the 10 s frame timeout" % t
    return True, "slow: closed by the agent after %.1f s" % t


def case_peer(s):
    send(s, hello_frame())
    reply = read_frame(s)
    if reply is not None:
        return False, "peer: the agent answered another user (type 0x%02x)" % reply[0]
    return True, "peer: closed without a reply"


def case_alloc_bad(s):
    """A well-formed ALLOC_START with a bad pattern: an ERROR, and the connection stays."""
    problem = hello(s)
    if problem:
        return False, problem
    send(s, frame(T_ALLOC_START, struct.pack(">BQI", 0, 524288, 64) + s_str("com..acme")))
    reply = read_frame(s)
    if reply is None or reply[0] != T_ERROR or b"bad account pattern" not in reply[1]:
        return False, "alloc-bad: no ERROR for a bad pattern (%r)" % (reply,)
    send(s, frame(T_ALLOC_STATUS))
    reply = read_frame(s)
    if reply is None or reply[0] != T_ALLOC_STATUS:
        return False, "alloc-bad: the connection did not go on after the ERROR"
    return True, "alloc-bad: ERROR, then ALLOC_STATUS answered (flags %d)" % reply[1][0]


def run(path, case):
    if case == "connect":
        try:
            connect(path).close()
            return False, "connected"
        except OSError as e:
            return True, "denied: %s" % errno.errorcode.get(e.errno, str(e.errno))
    rnd = random.Random(1234)
    cases = {
        "random": lambda s: expect_close(s, "random", bytes(rnd.getrandbits(8) for _ in range(4096))),
        "zero-length": lambda s: expect_close(s, "zero-length", b"\0\0\0\0" + b"\x01hello"),
        "huge-length": lambda s: expect_close(s, "huge-length", b"\xff\xff\xff\xff\x01" + b"x" * 64),
        "over-limit": lambda s: expect_close(s, "over-limit", struct.pack(">IB", (4 << 20) + 1, 1) + b"x" * 64),
        # ALLOC_LEAKS's class histogram: more rows than the request could hold; a row cut short.
        "leaks-rows": lambda s: expect_close(
            s, "leaks-rows", frame(T_ALLOC_LEAKS, struct.pack(">IQQII", 0, 1000, 1 << 20, 0, 0x7FFFFFFF)),
            need_hello=True),
        "leaks-row-short": lambda s: expect_close(
            s, "leaks-row-short",
            frame(T_ALLOC_LEAKS, struct.pack(">IQQIII", 0, 1000, 1 << 20, 0, 2, 5) + b"byte[]" + b"\0" * 9),
            need_hello=True),
        "unknown-type": lambda s: expect_close(s, "unknown-type", frame(0x3E, b"abc"), need_hello=True),
        "long-string": lambda s: expect_close(
            s, "long-string",
            frame(T_INSTANCES, struct.pack(">I", 0x1000) + b"Order" + struct.pack(">BI", 1, 0) + b"\0"),
            need_hello=True),
        "deep-predicate": lambda s: expect_close(
            s, "deep-predicate", instances_frame("Order", bytes([3]) * 1000 + bytes([0])), need_hello=True),
        "before-hello": lambda s: expect_close(s, "before-hello", frame(T_INFO)),
        "alloc-short": lambda s: expect_close(s, "alloc-short", frame(T_ALLOC_START, b"\0"), need_hello=True),
        "alloc-long-string": lambda s: expect_close(
            s, "alloc-long-string",
            frame(T_ALLOC_START, struct.pack(">BQII", 0, 524288, 64, 0x7FFFFFFF) + b"com.acme"),
            need_hello=True),
        "alloc-extra": lambda s: expect_close(s, "alloc-extra", frame(T_ALLOC_STATUS, b"x"), need_hello=True),
        "alloc-bad": case_alloc_bad,
        "bad-magic": lambda s: expect_close(s, "bad-magic", hello_frame(magic=0x12345678)),
        "slow": case_slow,
        "peer": case_peer,
        "valid": case_valid,
        "nested-ok": case_nested_ok,
        "analyze-ok": case_analyze_ok,
        "analyze-cancel": case_analyze_cancel,
        "analyze-time": case_analyze_time,
        "analyze-memory": case_analyze_memory,
    }
    for name, prog in bad_programs().items():
        cases[name] = (lambda n, p: lambda s: expect_close(s, n, analyze_frame(p), need_hello=True))(name, prog)
    if case == "truncated":
        s = connect(path)
        send(s, hello_frame()[:5])
        s.close()
        return True, "truncated: sent 5 of 11 bytes and closed"
    if case not in cases:
        print("unknown case %s" % case, file=sys.stderr)
        sys.exit(2)
    s = connect(path)
    try:
        return cases[case](s)
    finally:
        s.close()


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
    try:
        good, text = run(sys.argv[1], sys.argv[2])
    except OSError as e:
        good, text = False, "%s: %s" % (sys.argv[2], e)
    print(text)
    sys.exit(0 if good else 1)


if __name__ == "__main__":
    main()
