#!/usr/bin/env bash
# run.sh - heapsh's shell tests: real dumps of tests/java programs, made now,
# and the shell's output checked against what those programs put in the heap.
# Usage: bash tests/run.sh [t_name ...]    UPDATE=1 rewrites golden files.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh

mkdir -p "$JAVA_OUT" "$T"
javac -d "$JAVA_OUT" tests/java/KnownHeap.java || { echo "javac failed"; exit 1; }
KNOWN=$T/known.hprof
rm -f "$KNOWN"
java -cp "$JAVA_OUT" KnownHeap dump "$KNOWN" || { echo "could not make $KNOWN"; exit 1; }

tests=("$@")
[ ${#tests[@]} -eq 0 ] && tests=(tests/t_*.sh)
for t in "${tests[@]}"; do
	[ -f "$t" ] || t=tests/$t.sh
	echo "== $t"
	. "$t"
done
summary
