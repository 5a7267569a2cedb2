#!/usr/bin/env python3
"""layout_check.py HISTOGRAM HEAPSH_CSV: the classes whose shallow sizes differ
between a JVM's class histogram (jmap -histo or jcmd GC.class_histogram, one
class a line: [N:] instances bytes name [(module)]) and heapsh's :histogram of
a dump (CSV), by the rules of Eclipse MAT's TestInstanceSizes: entries named
<...> (the VM's own) and java.lang.Class (its instances vary in size) are left
out, and so are classes absent from either side; an instance class differs
when its bytes per instance do; an array class is compared only when both
count the same arrays, by their total bytes. --skip NAME leaves a class out
(one of variable size). Prints each difference, then "compared N differ M"."""
import csv
import re
import sys

PRIM = {'B': 'byte', 'C': 'char', 'D': 'double', 'F': 'float', 'I': 'int', 'J': 'long', 'S': 'short',
        'Z': 'boolean'}


def java_name(name):
    m = re.match(r'^(\[+)(.*)$', name)
    if m:
        e = m.group(2)
        e = PRIM.get(e, e[1:-1] if e.startswith('L') and e.endswith(';') else e)
        name = e + '[]' * len(m.group(1))
    return name.replace('/0x', '+0x')   # a hidden class as HPROF names it


def main():
    args = sys.argv[1:]
    skip = set()
    while '--skip' in args:
        i = args.index('--skip')
        skip.add(args[i + 1])
        del args[i:i + 2]
    hist = {}
    with open(args[0], encoding='utf-8', errors='replace') as f:
        for line in f:
            t = line.split()
            if t and ':' in t[0]:
                t = t[1:]
            if len(t) < 3 or not t[0].isdigit() or not t[1].isdigit():
                continue
            name = java_name(t[2])
            if t[2].startswith('<') or name == 'java.lang.Class' or name in skip:
                continue
            n, b = hist.get(name, (0, 0))
            hist[name] = (n + int(t[0]), b + int(t[1]))
    ours = {}
    with open(args[1]) as f:
        r = csv.reader(f)
        head = next(r)
        ci, ni, bi = head.index('class'), head.index('instances'), head.index('shallow_bytes')
        for row in r:
            ours[row[ci]] = (int(row[ni]), int(row[bi]))
    compared = differ = 0
    for name, (n, b) in sorted(hist.items()):
        if name not in ours or not n or not ours[name][0]:
            continue
        hn, hb = ours[name]
        if name.endswith('[]'):
            if hn != n:
                continue
            compared += 1
            if hb != b:
                differ += 1
                print('array %s: %d arrays, %d bytes in the JVM, %d in heapsh' % (name, n, b, hb))
        else:
            compared += 1
            if b // n != hb // hn:
                differ += 1
                print('%s: %d bytes an instance in the JVM, %d in heapsh' % (name, b // n, hb // hn))
    print('compared %d differ %d' % (compared, differ))


main()
