#!/usr/bin/env python3
"""render_svg.py FILE.svg OUT.png - check that an SVG draws something.

Renders FILE.svg with headless Chromium (a screenshot of 1200x800), decodes
the PNG in pure Python (zlib; no PIL), prints what it found, and exits:
  0   a clear share of the pixels is not white and several colours appear
  1   the picture is (nearly) blank, or rendering failed
  2   usage, or FILE.svg missing
  77  Chromium is not installed (the test harness's "skipped")
CHROMIUM in the environment names another binary than /usr/bin/chromium.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

MIN_INK = 0.02      # share of pixels not white
MIN_COLOURS = 4     # distinct colours, white included
TIMEOUT = 120       # seconds for Chromium


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode_png(path):
    """(width, height, channels, rows): rows are bytearrays of 8-bit samples."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, ihdr = 8, [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    if ihdr is None:
        raise ValueError("no IHDR")
    width, height, depth, ctype, _, _, interlace = ihdr
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(ctype)
    if depth != 8 or channels is None or interlace:
        raise ValueError("unsupported PNG: depth %d, colour type %d, interlace %d"
                         % (depth, ctype, interlace))
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows, prev, at = [], bytearray(stride), 0
    for _ in range(height):
        ftype, line = raw[at], bytearray(raw[at + 1:at + 1 + stride])
        at += 1 + stride
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = prev[i]
            if ftype == 1:
                line[i] = (line[i] + left) & 0xff
            elif ftype == 2:
                line[i] = (line[i] + up) & 0xff
            elif ftype == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 0xff
            elif ftype == 4:
                ul = prev[i - channels] if i >= channels else 0
                line[i] = (line[i] + paeth(left, up, ul)) & 0xff
            elif ftype != 0:
                raise ValueError("bad filter %d" % ftype)
        rows.append(line)
        prev = line
    return width, height, channels, rows


def census(width, height, channels, rows):
    """(pixels not white, distinct colours); alpha 0 counts as white."""
    ink, colours = 0, set()
    for line in rows:
        for x in range(width):
            px = tuple(line[x * channels:(x + 1) * channels])
            if channels in (2, 4) and px[-1] == 0:
                px = (255,) * channels
            rgb = px[:3] if channels >= 3 else px[:1] * 3
            colours.add(rgb)
            if min(rgb) < 245:
                ink += 1
    return ink, colours


def main(argv):
    if len(argv) != 3:
        print("usage: render_svg.py FILE.svg OUT.png", file=sys.stderr)
        return 2
    svg, out = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    if not os.path.isfile(svg):
        print("render_svg.py: no such file: %s" % svg, file=sys.stderr)
        return 2
    chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    if not (os.path.isfile(chromium) and os.access(chromium, os.X_OK)):
        print("render_svg.py: %s is not installed; skipped" % chromium)
        return 77
    profile = tempfile.mkdtemp(prefix="render_svg.")
    try:
        if os.path.exists(out):
            os.unlink(out)
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync",
               "--user-data-dir=" + profile, "--screenshot=" + out,
               "--window-size=1200,800", "file://" + svg]
        try:
            run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            print("render_svg.py: chromium took over %d s" % TIMEOUT, file=sys.stderr)
            return 1
        if not os.path.isfile(out) or os.path.getsize(out) == 0:
            print("render_svg.py: chromium wrote no screenshot (exit %d):\n%s"
                  % (run.returncode, run.stderr.decode(errors="replace")[-2000:]),
                  file=sys.stderr)
            return 1
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    try:
        width, height, channels, rows = decode_png(out)
    except (ValueError, zlib.error, struct.error) as e:
        print("render_svg.py: %s: %s" % (out, e), file=sys.stderr)
        return 1
    ink, colours = census(width, height, channels, rows)
    share = ink / float(width * height)
    ok = share >= MIN_INK and len(colours) >= MIN_COLOURS
    print("%s: %dx%d, %d of %d pixels not white (%.1f%%), %d colours: %s"
          % (out, width, height, ink, width * height, 100 * share, len(colours),
             "ok" if ok else "blank"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
