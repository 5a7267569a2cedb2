#!/usr/bin/env python3
"""check_report.py - what a browser made of heapsh's HTML report (tests/t_report.sh).

  check_report.py dom DOM.html
      DOM.html is the page as Chromium serialised it (chromium --dump-dom):
      prints key=value lines: the sections found, the suspects table's rows,
      the pie chart's slices, the legend's rows, elements a page made of
      escaped text must not have (script, img, link, iframe, b), and the
      first duplicate string's text as the browser shows it.
  check_report.py png SHOT.png WIDTH HEIGHT RRGGBB...
      SHOT.png is Chromium's screenshot: prints its size, the share of
      pixels that are not white, the distinct colours, and which of the
      given colours (the pie's) appear; exits 1 when it is not a PNG of
      WIDTH x HEIGHT, is nearly blank, or lacks one of the colours.
No PIL: the PNG is decoded with tests/render_svg.py's pure-Python decoder.
"""
import os
import sys
from html.parser import HTMLParser

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from render_svg import decode_png  # noqa: E402


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack = []          # (tag, id, classes) of the open elements
        self.sections = []
        self.suspects = 0
        self.slices = 0
        self.legend = 0
        self.banned = {}
        self.dup_text = None
        self.in_dup_cell = False
        self.dup_buf = []

    def within(self, tag=None, ident=None, cls=None):
        for t, i, c in self.stack:
            if (tag is None or t == tag) and (ident is None or i == ident) and \
               (cls is None or cls in c):
                return True
        return False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        ident, classes = a.get("id"), (a.get("class") or "").split()
        if tag in ("script", "img", "link", "iframe", "b", "object", "embed"):
            self.banned[tag] = self.banned.get(tag, 0) + 1
        if tag == "section" and ident:
            self.sections.append(ident)
        if tag == "tr" and "suspect" in classes and self.within("table", "suspects-table"):
            self.suspects += 1
        if tag == "tr" and "legend" in classes and self.within("table", "dominator-legend"):
            self.legend += 1
        if "slice" in classes and self.within("svg"):
            self.slices += 1
        if tag == "td" and self.dup_text is None and self.within("tr", cls="dup") and \
           not self.in_dup_cell:
            self.in_dup_cell = True
        if tag not in ("meta", "br", "hr", "input", "img", "link", "path", "circle"):
            self.stack.append((tag, ident, classes))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if self.stack and self.stack[-1][0] == tag:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag == "td" and self.in_dup_cell:
            self.in_dup_cell = False
            self.dup_text = "".join(self.dup_buf)
        for k in range(len(self.stack) - 1, -1, -1):
            if self.stack[k][0] == tag:
                del self.stack[k:]
                break

    def handle_data(self, data):
        if self.in_dup_cell:
            self.dup_buf.append(data)


def dom(path):
    p = Page()
    with open(path, encoding="utf-8", errors="replace") as f:
        p.feed(f.read())
    p.close()
    print("sections=%s" % ",".join(p.sections))
    print("suspects=%d" % p.suspects)
    print("slices=%d" % p.slices)
    print("legend=%d" % p.legend)
    print("banned=%s" % ",".join("%s:%d" % kv for kv in sorted(p.banned.items())))
    print("first_duplicate=%s" % (p.dup_text if p.dup_text is not None else ""))
    return 0


def png(path, width, height, colours):
    try:
        w, h, channels, rows = decode_png(path)
    except Exception as e:  # not a PNG, or one the decoder cannot read
        print("png: %s: %s" % (path, e))
        return 1
    want = {c.lower(): tuple(int(c[k:k + 2], 16) for k in (0, 2, 4)) for c in colours}
    seen, ink = set(), 0
    for line in rows[::2]:       # every other row: the same answer, half the time
        for x in range(0, w, 2):
            px = tuple(line[x * channels:x * channels + 3]) if channels >= 3 else \
                 (line[x * channels],) * 3
            seen.add(px)
            if min(px) < 245:
                ink += 1
    share = ink / float(((h + 1) // 2) * ((w + 1) // 2))
    missing = [c for c, rgb in sorted(want.items()) if rgb not in seen]
    print("size=%dx%d" % (w, h))
    print("ink=%.3f" % share)
    print("colours=%d" % len(seen))
    print("missing=%s" % ",".join(missing))
    ok = (w, h) == (width, height) and share >= 0.03 and len(seen) >= 16 and not missing
    print("verdict=%s" % ("ok" if ok else "bad"))
    return 0 if ok else 1


def main(argv):
    if len(argv) == 3 and argv[1] == "dom":
        return dom(argv[2])
    if len(argv) >= 5 and argv[1] == "png":
        return png(argv[2], int(argv[3]), int(argv[4]), argv[5:])
    print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
