#!/usr/bin/env python3
"""embed.py - the agent's Java classes as C data (src/agent/instrument.c reads them).

Usage: embed.py [--name=SYMBOL] OUT.c CLASSDIR JAR[:CLASS,CLASS...]...

Writes OUT.c defining ag_classes (a sequence of records: u32 name length,
the class's internal name, u32 class-file length, the class file; big-endian)
and ag_classes_len (SYMBOL and SYMBOL_len with --name; src/alloc/jfr.c's
reader is embedded so), holding every .class file under CLASSDIR and in each JAR
(module-info and META-INF entries left out), or only the classes named after
a JAR's colon (internal names; their inner classes come along). Rt comes first; the agent
defines the rest, superclasses first, in a class loader of its own.
"""
import os
import struct
import sys
import zipfile


def classes(out_dir, jars):
    found = []
    for root, _, files in os.walk(out_dir):
        for f in sorted(files):
            if f.endswith('.class'):
                path = os.path.join(root, f)
                name = os.path.relpath(path, out_dir)[:-len('.class')].replace(os.sep, '/')
                with open(path, 'rb') as fh:
                    found.append((name, fh.read()))
    for spec in jars:
        jar, _, only = spec.partition(':')
        wanted = [c for c in only.split(',') if c]
        with zipfile.ZipFile(jar) as z:
            for entry in sorted(z.namelist()):
                name = entry[:-len('.class')]
                if not entry.endswith('.class') or entry.startswith('META-INF/') \
                        or entry.endswith('module-info.class'):
                    continue
                if wanted and not any(name == c or name.startswith(c + '$') for c in wanted):
                    continue
                found.append((name, z.read(entry)))
    found.sort(key=lambda c: (c[0] != 'heapsh/agent/Rt', c[0]))
    return found


def main(argv):
    symbol = 'ag_classes'
    if len(argv) > 1 and argv[1].startswith('--name='):
        symbol = argv[1][len('--name='):]
        argv = argv[:1] + argv[2:]
    if len(argv) < 3:
        sys.stderr.write('usage: embed.py OUT.c CLASSDIR JAR...\n')
        return 2
    blob = bytearray()
    for name, data in classes(argv[2], argv[3:]):
        n = name.encode('utf-8')
        blob += struct.pack('>I', len(n)) + n + struct.pack('>I', len(data)) + data
    tmp = argv[1] + '.tmp'
    with open(tmp, 'w') as out:
        out.write('/* Made by src/agent/java/embed.py from Java classes: do not edit. */\n')
        out.write('const unsigned char %s[] = {\n' % symbol)
        for i in range(0, len(blob), 24):
            out.write(','.join(str(b) for b in blob[i:i + 24]) + ',\n')
        out.write('};\nconst unsigned long %s_len = %d;\n' % (symbol, len(blob)))
    os.replace(tmp, argv[1])
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
