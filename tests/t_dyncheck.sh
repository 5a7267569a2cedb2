# t_dyncheck.sh - the dynamic-size engine against brute force on real dumps:
# exact sizes of every object of the KnownHeap dump (and of sets), and the
# estimator's error against exact sizes (tests/unit/dyn_dump_check.c).

make -s "${BUILD:-build}/unit/dyn_dump_check" >/dev/null || fail "dyn_dump_check builds"
DC=${BUILD:-build}/unit/dyn_dump_check

out=$($DC "$KNOWN" 2>&1); st=$?
echo "$out" | sed 's/^/     /'
check_status "dynamic sizes of every KnownHeap object equal brute force; estimates within bound" 0 $st
line=$(echo "$out" | grep -E "^$KNOWN: ([0-9]+) objects, .*; ([0-9]+) objects and")
n_all=$(echo "$line" | sed -E 's/^[^:]*: ([0-9]+) objects.*/\1/')
n_checked=$(echo "$line" | sed -E 's/.*; ([0-9]+) objects and.*/\1/')
check "KnownHeap: every object was checked" "$n_all" "$n_checked"
check_contains "KnownHeap: none wrong" ", 0 wrong" "$line"
