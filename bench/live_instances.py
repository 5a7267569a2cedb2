#!/usr/bin/env python3
"""live_instances.py - one INSTANCES request (docs/protocol.md) to heapsh's agent, timed.

Usage: python3 bench/live_instances.py SOCKET CLASS FIELD VALUE FLAGS

Sends HELLO, then INSTANCES CLASS with the predicate FIELD = VALUE (a long)
and FLAGS (bit 0: subclasses too; bit 1: walk with IterateThroughHeap
instead of FollowReferences; bit 3: a full GC first), limit 0, and prints one
line:

    examined E matched M seconds S

where S is the time from sending the request to the whole reply. heapsh
itself sends bits 1 and 3 (a full GC, then IterateThroughHeap); bench/live.sh
uses this client to measure the FollowReferences walk (FLAGS 1) the protocol
also offers. Exit status 1 on an ERROR reply or a closed connection.
Python 3 standard library only.
"""

import socket
import struct
import sys
import time

MAGIC = 0x48534147
T_HELLO, T_INSTANCES, T_ERROR = 0x01, 0x05, 0x7F


def frame(ftype, payload=b""):
    return struct.pack(">IB", len(payload) + 1, ftype) + payload


def s_str(text):
    data = text.encode()
    return struct.pack(">I", len(data)) + data


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError("the agent closed the connection")
        buf += chunk
    return buf


def read_frame(s):
    length, ftype = struct.unpack(">IB", recv_exact(s, 5))
    return ftype, recv_exact(s, length - 1)


def main():
    if len(sys.argv) != 6:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    path, cls, field, value, flags = sys.argv[1:]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(600)
    s.connect(path)
    s.sendall(frame(T_HELLO, struct.pack(">IH", MAGIC, 1)))
    t, _ = read_frame(s)
    if t != T_HELLO:
        print("HELLO refused", file=sys.stderr)
        return 1
    # COMPARE node: op 4, field, cmp 0 (=), kind 1 (long), u64 value
    pred = struct.pack(">B", 4) + s_str(field) + struct.pack(">BBq", 0, 1, int(value))
    req = frame(T_INSTANCES, s_str(cls) + struct.pack(">BI", int(flags), 0) + pred)
    t0 = time.monotonic()
    s.sendall(req)
    t, p = read_frame(s)
    dt = time.monotonic() - t0
    if t == T_ERROR:
        (n,) = struct.unpack(">I", p[:4])
        print("ERROR: " + p[4:4 + n].decode(errors="replace"), file=sys.stderr)
        return 1
    examined, matched = struct.unpack(">QQ", p[:16])
    print("examined %d matched %d seconds %.3f" % (examined, matched, dt))
    s.close()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, EOFError) as e:
        print("live_instances.py: %s" % e, file=sys.stderr)
        sys.exit(1)
