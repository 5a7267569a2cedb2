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
T_ALLOC_START, T_ALLOC_STATUS = 0x07, 0x09
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
        "over-limit": lambda s: expect_close(s, "over-limit", struct.pack(">IB", 65537, 1) + b"x" * 64),
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
    }
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
