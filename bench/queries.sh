#!/usr/bin/env bash
# bench/queries.sh - the query language on the benchmark heap (issue 4):
# a class-and-field filter over all objects (target < 50 ms, it should visit
# only that class's instances) and the paper's "reachable from threads"
# set-type traversal (target < 1 s). Times come from heapsh's own :timer, so
# they exclude opening the dump. Medians of BENCH_RUNS runs (default 5).
set -euo pipefail
cd "$(dirname "$0")/.."
DUMP=${1:-build/bench/big1.hprof}
RUNS=${BENCH_RUNS:-5}
[ -f "$DUMP" ] || { echo "bench/queries.sh: $DUMP is missing; run bench/run.sh first" >&2; exit 1; }
mkdir -p build/bench
Q=build/bench/queries.hq
cat > "$Q" <<'HQ'
:timer on
objects.filter([it | it is com.sun.tools.javac.code.Symbol$VarSymbol and it.adr = 3]).count
objects.count([it | it is java.util.HashMap$Node and it.hash = 0])
set_type all:
	roots <- threads
	membership <- THIS in Unassigned and REFERRER in ENTITY
	on_inclusion <- [
		nbObjects <- nbObjects + 1
		nbSize <- nbSize + THIS.shallow_size
	]
	nbObjects : int <- 0
	nbSize : int <- 0
instances_for all have_names = "all-jvm"
HQ
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
: > build/bench/q.times
for r in $(seq "$RUNS"); do
	./heapsh --no-index -f "$Q" "$DUMP" 2>&1 >build/bench/q.out | awk '/^time:/ { printf "%s ", $2 } END { print "" }' >> build/bench/q.times
done
F1=$(awk '{ print $1 }' build/bench/q.times | median)
F2=$(awk '{ print $2 }' build/bench/q.times | median)
T=$(awk '{ print $3 }' build/bench/q.times | median)
OBJS=$(./heapsh --format csv -c ':info' "$DUMP" | awk -F, '$1 == "objects" { print $2 }')
echo
echo "### Query language on $DUMP ($OBJS objects), medians of $RUNS runs"
echo
echo "| query | median ms | target | met |"
echo "|---|---|---|---|"
printf '| VarSymbol with adr = 3 (48 263 instances) | %s | < 50 ms | %s |\n' "$F1" "$(awk -v t="$F1" 'BEGIN { print (t < 50) ? "yes" : "no" }')"
printf '| HashMap$Node with hash = 0 (138 174 instances) | %s | < 50 ms | %s |\n' "$F2" "$(awk -v t="$F2" 'BEGIN { print (t < 50) ? "yes" : "no" }')"
printf '| set type: everything reachable from threads | %s | < 1000 ms | %s |\n' "$T" "$(awk -v t="$T" 'BEGIN { print (t < 1000) ? "yes" : "no" }')"
echo
echo "raw (ms per run: filter1 filter2 traversal):"
sed 's/^/    /' build/bench/q.times
