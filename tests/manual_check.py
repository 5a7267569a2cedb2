#!/usr/bin/env python3
"""manual_check.py - the examples of docs/manual.md run as tests (issue 36,
as jq's man.test): every input at a `heapsh demo.hprof> ` prompt in the
manual's code blocks is run on a dump of the demo program (KnownHeap), and
its output must agree with the pasted one.

Usage: manual_check.py HEAPSH DUMP MANUAL
Prints one line per example: "ok INPUT" or "FAIL INPUT: why"; exits 1 when
any failed.

What must agree, so that the manual stays true without tying the test to
one JDK build's exact byte counts:
  - the command or query runs without an error;
  - a table's header (its column names) and its number of lines (rows,
    total and the lines said under it);
  - a one-line answer (true, 75300.0), exactly.
An object id in an input (ids differ from run to run) is replaced by an
instance of the class the pasted output shows next to that id. Examples on
other dumps (shop.hprof) and live JVMs (pid prompts) are not run here; the
count of those left out is printed.
"""
import re
import subprocess
import sys

PROMPT = re.compile(r'^heapsh ([^>]*)> (.*)$')
ID = re.compile(r'0x[0-9a-f]+')


def examples(text):
    """(input, expected lines, dump name) of each prompt in a code block, in order."""
    out, block, inside = [], [], False
    for line in text.split('\n'):
        if line.startswith('```'):
            if inside:
                out.extend(block_examples(block))
            inside, block = not inside, []
        elif inside:
            block.append(line)
    return out


def block_examples(lines):
    ex = []
    for line in lines:
        m = PROMPT.match(line)
        if m:
            ex.append([m.group(2).split('  #')[0].rstrip(), [], m.group(1)])
        elif ex:
            ex[-1][1].append(line)
    return ex


def run(heapsh, dump, inputs):
    """Run inputs in one session; (status, stdout, stderr)."""
    args = [heapsh, '--no-index']
    for i in inputs:
        args += ['-c', i]
    p = subprocess.run(args + [dump], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def instance_of(heapsh, dump, cls):
    st, out, _ = run(heapsh, dump, ['objects.filter([it | it is %s]).top(1, [o | o.size])' % cls])
    ids = ID.findall(out)
    return ids[0] if st == 0 and ids else None


def shape(lines):
    """(header, rows) of a table, or None when the lines are not one."""
    lines = [l for l in lines if l.strip()]
    for i in range(1, len(lines)):
        if re.fullmatch(r'[- ]+', lines[i]) and '-' in lines[i]:
            return lines[i - 1].split(), len(lines) - i - 1
    return None


def main():
    heapsh, dump, manual = sys.argv[1:4]
    failed = skipped = 0
    lets = []           # the `let`s of the session so far, run again before each query
    for inp, expected, where in examples(open(manual, encoding='utf-8').read()):
        if where != 'demo.hprof':
            skipped += 1
            continue
        real = inp
        for i in ID.findall(inp):
            cls = next((l.split()[l.split().index(i) + 1] for l in expected
                        if i in l.split() and l.split().index(i) + 1 < len(l.split())), None)
            sub = instance_of(heapsh, dump, cls) if cls else None
            if not sub:
                print('FAIL %s: no instance of the class shown next to %s (%s)' % (inp, i, cls))
                failed += 1
                real = None
                break
            real = real.replace(i, sub)
        if real is None:
            continue
        if real.startswith('let '):
            lets.append(real)
        st, out, err = run(heapsh, dump, lets + ([] if real.startswith('let ') else [real]))
        why = None
        if st != 0 or 'heapsh:' in err:
            why = 'exit status %d: %s' % (st, err.strip()[:300])
        elif real.startswith('let '):
            pass
        elif shape(expected):
            want, got = shape(expected), shape(out.split('\n'))
            if got is None or want[0] != got[0]:
                why = 'header %s, the manual has %s' % (got and got[0], want[0])
            elif want[1] != got[1]:
                why = '%d rows, the manual has %d' % (got[1], want[1])
        else:
            want = [l for l in expected if l.strip()]
            got = [l for l in out.split('\n') if l.strip()]
            if want != got:
                why = 'answer %r, the manual has %r' % (got, want)
        if why:
            print('FAIL %s: %s' % (inp, why))
            failed += 1
        else:
            print('ok %s' % inp)
    print('left out (other dumps, live JVMs): %d' % skipped)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
