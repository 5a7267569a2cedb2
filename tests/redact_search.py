#!/usr/bin/env python3
"""redact_search.py FILE: how often each secret tests/java/SecretHeap.java
plants occurs in FILE (gunzipped first if it is gzip'd), in every encoding a
dump could hold it in: Latin-1, UTF-8, UTF-16BE and UTF-16LE for text, the
big-endian bytes for longs. One line per secret: NAME COUNT (the sum).
Used by tests/t_redact.sh."""
import gzip
import sys

TEXT = {
    "password": "P\u00e4ssw\u00f6rd-\u03a9mega-7731",
    "token": "tok3n-ASCII-only-91aa",
    "pin": "cHaRsEcReT-4410",
    "key": "bYtEsEcReT-8829",
    "label": "keptlabel-\u00dc-3302",
    "thread": "secret-thread-\u03a9x",
}
LONG = {
    "card": 0x5EC2E7C0FFEE1234,
    "static": 0x51A71C5EC2E70042,
    "number": 0x0B0E0C0D0E0F1122,
}

data = open(sys.argv[1], "rb").read()
if data[:2] == b"\x1f\x8b":
    data = gzip.decompress(data)
for name, s in TEXT.items():
    n = 0
    for enc in ("latin-1", "utf-8", "utf-16-be", "utf-16-le"):
        try:
            n += data.count(s.encode(enc))
        except UnicodeEncodeError:
            pass
    print(name, n)
for name, v in LONG.items():
    print(name, data.count(v.to_bytes(8, "big")))
