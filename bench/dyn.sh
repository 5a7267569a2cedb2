#!/usr/bin/env bash
# bench/dyn.sh - the dynamic-size engine (issue 5) on build/bench/big1.hprof.
# Run from the repository root by `make bench`, after bench/run.sh (which
# makes the dump); makes the dump itself through bench/run.sh when missing.
#
# Two parts, in one run:
#  - build/bench/dyn_bench (bench/dyn_bench.c): the engine's library calls
#    timed in-process (dyn_build_heap, dyn_estimate, dyn_exact on 200 random
#    objects, dyn_exact_many on the 1000 largest by estimate) against the
#    thesis's SimpleObjectsDynamicSize, with every answer cross-checked;
#  - the shell: `heapsh -f` with `:timer on` and `:top --by dynamic --top 1000`,
#    cold (--no-index: dominators, dynamic-size engine, estimates and exact
#    sizes all computed) and warm (reading DUMP.hsidx), next to the
#    `:dominators --top 5` that the cold :top has to do first.
#
# Environment: BENCH_RUNS=N runs per measurement, the median is reported
# (default 5); BENCH_BFS_RUNS=N runs of the baseline (default BENCH_RUNS);
# HEAPSH=path (default ./heapsh; copied to build/bench/heapsh-dyn first).
#
# Output: build/bench/dyn.txt (the report), a section appended to
# build/bench/summary.md (replacing an earlier one), each shell run's output
# in build/bench/dynlog/. Exit status 1 if a cross-check or a run failed.

set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
. bench/lib.sh

R=${BENCH_RUNS:-5}
RB=${BENCH_BFS_RUNS:-$R}
OUT=build/bench
LOG=$OUT/dynlog
DUMP=$OUT/big1.hprof
REPORT=$OUT/dyn.txt
SUM=$OUT/summary.md
for v in "$R" "$RB"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "bench/dyn.sh: BENCH_RUNS and BENCH_BFS_RUNS must be positive integers" >&2; exit 2; }
done

make -s "$OUT/dyn_bench"
bench_heapsh dyn src bench/dyn_bench.c Makefile
BIN_ID+="; dyn_bench sha256 $(sha256sum "$OUT/dyn_bench" | cut -c1-12)"
mkdir -p "$LOG"
rm -f "$LOG"/*
bench_dumps dyn "$DUMP"
cat "$DUMP" >/dev/null   # every run reads the dump from the page cache

FAILURES=()

# ---------------------------------------------------------------- the driver
echo "== dyn_bench: $R runs per measurement, $RB of SimpleObjectsDynamicSize (about 3 minutes)"
DRV=$LOG/dyn_bench.out
drc=0
if [ -x /usr/bin/time ] && /usr/bin/time -f '%e %M' -o /dev/null true 2>/dev/null; then
	/usr/bin/time -f '%e %M' -o "$LOG/dyn_bench.time" "$OUT/dyn_bench" -r "$R" -b "$RB" "$DUMP" \
		>"$DRV" 2>"$LOG/dyn_bench.err" || drc=$?
	DRV_TIME="$(cut -d' ' -f1 "$LOG/dyn_bench.time") s, peak RSS $(awk '{ printf "%.0f", $2 / 1024 }' "$LOG/dyn_bench.time") MB (GNU time)"
	GNU_TIME=1
else
	"$OUT/dyn_bench" -r "$R" -b "$RB" "$DUMP" >"$DRV" 2>"$LOG/dyn_bench.err" || drc=$?
	DRV_TIME="n/a"
	GNU_TIME=0
fi
if [ "$drc" != 0 ]; then
	FAILURES+=("dyn_bench exited with status $drc (1: a cross-check failed): $OUT/dyn_bench -r $R -b $RB $DUMP")
	echo "!! dyn_bench: exit status $drc; stderr:" >&2
	head -n 30 "$LOG/dyn_bench.err" | sed 's/^/!!   /' >&2
fi

# ---------------------------------------------------------------- the shell
declare -A WALL RSS CMD NRUN
# run NAME COMMAND [--no-index]: heapsh -f with :timer on and COMMAND, timed;
# records wall s, peak RSS KiB and the command's own ms (from :timer).
run() {
	local name=$1 cmd=$2 rc=0 line wall rss ms; shift 2
	local n=$(( ${NRUN[$name]:-0} + 1 ))
	NRUN[$name]=$n
	local base=$LOG/$name.$n
	printf ':timer on\n%s\n' "$cmd" >"$base.hsh"
	if [ "$GNU_TIME" = 1 ]; then
		/usr/bin/time -f '%e %M' -o "$base.time" "$HS" "$@" -f "$base.hsh" "$DUMP" \
			>"$base.out" 2>"$base.err" || rc=$?
		line=$(tail -n 1 "$base.time"); wall=${line% *}; rss=${line#* }
	else
		local TIMEFORMAT=%R
		{ time "$HS" "$@" -f "$base.hsh" "$DUMP" >"$base.out" 2>"$base.err"; } 2>"$base.time" || rc=$?
		wall=$(tail -n 1 "$base.time"); rss=n/a
	fi
	ms=$(awk '/^time:/ { print $2 }' "$base.err" | tail -n 1)
	if [ "$rc" != 0 ] || [ -z "$ms" ]; then
		FAILURES+=("$name run $n: exit status $rc: $HS $* -f $base.hsh $DUMP")
		echo "!! FAILED: $name run $n (exit status $rc); stderr:" >&2
		tail -n 20 "$base.err" | sed 's/^/!!   /' >&2
		return 0
	fi
	WALL[$name]+="$wall "; RSS[$name]+="$rss "; CMD[$name]+="$ms "
	printf '   %-16s run %d: %6s s wall, command %8s ms, %s MB\n' "$name" "$n" "$wall" "$ms" \
		"$( [ "$rss" = n/a ] && echo n/a || echo $((rss / 1024)))"
}
TOP=':top --by dynamic --top 1000'
DOM=':dominators --top 5'
echo "== the shell: '$TOP', cold (--no-index) and warm (index), and '$DOM' cold"
for ((i = 1; i <= R; i++)); do
	run top_cold "$TOP" --no-index
	run dom_cold "$DOM" --no-index
done
rm -f "$DUMP.hsidx"
run top_idx_write "$TOP"
for ((i = 1; i <= R; i++)); do
	run top_warm "$TOP"
done
IDXB=$( [ -f "$DUMP.hsidx" ] && stat -c %s "$DUMP.hsidx" || echo n/a)

# Is :top's answer the true one? dyn_bench computed every object's exact size:
# the TOP-th largest is K bytes and A objects are larger. A correct
# ':top --by dynamic --top TOP' lists all A of them and nothing below K.
CHECKS=()
check() { CHECKS+=("$1"); echo "   $1"; }
read -r _ _ TT K A _ < <(grep -m1 '^<!-- true-top ' "$DRV") || true
for name in top_cold top_idx_write top_warm; do
	f=$LOG/$name.1.out
	[ -f "$f" ] || continue
	for g in "$LOG/$name".*.out; do
		cmp -s "$f" "$g" || check "$name: run $(basename "$g" .out | sed 's/.*\.//') prints something else than run 1 (FAILED)"
	done
	[ -n "${K:-}" ] || continue
	read -r rows big small < <(awk -v k="$K" 'NR > 2 && $NF ~ /^[0-9]+$/ { n++; if ($NF + 0 > k + 0) a++; if ($NF + 0 < k + 0) b++ }
		END { print n + 0, a + 0, b + 0 }' "$f")
	if [ "$rows" = "$TT" ] && [ "$big" = "$A" ] && [ "$small" = 0 ]; then
		check "$name: the $TT rows are the true $TT largest (all $A objects larger than $K bytes, the rest $K): ok"
	else
		check "$name: NOT the true $TT largest: $rows rows, $big of the $A objects larger than $K bytes, $small rows below $K (FAILED)"
	fi
done
if [ -f "$LOG/top_cold.1.out" ] && [ -f "$LOG/top_warm.1.out" ]; then
	if cmp -s "$LOG/top_cold.1.out" "$LOG/top_warm.1.out"; then
		check "warm (index) output = cold (--no-index) output: ok"
	else
		check "warm (index) output differs from the cold (--no-index) one: $(diff "$LOG/top_cold.1.out" "$LOG/top_warm.1.out" | grep -c '^>') rows differ (FAILED)"
	fi
fi
for c in "${CHECKS[@]}"; do
	[[ $c != *FAILED* ]] || FAILURES+=("'$TOP': ${c% (FAILED)} (outputs in $LOG)")
done

med() { printf '%s\n' ${1:-} | median; }
mb() { case $1 in n/a|'') echo n/a;; *) awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }';; esac; }
row() {  # row NAME LABEL
	local k=$1 w=${WALL[$1]:-} c=${CMD[$1]:-}
	echo "| $2 | $(med "$w") | $(med "$c") | $(mb "$(med "${RSS[$k]:-}")") | $(wc -w <<<"$w") | ${w% } | ${c% } |"
}
SHELL_MD=$LOG/shell.md
{
echo "### The shell on $DUMP: '$TOP'"
echo
echo "Whole heapsh processes (\`heapsh [--no-index] -f FILE $DUMP\`, FILE = \`:timer on\` and the command);" \
     "wall and peak RSS from GNU time, the command's own time from :timer (without opening the dump)."
echo
echo "| measurement | median wall s | median command ms | median peak RSS MB | runs | wall s per run | command ms per run |"
echo "|---|---:|---:|---:|---:|---|---|"
row top_cold "cold: --no-index $TOP (dominator tree, dynamic-size engine, estimates, exact sizes of :top's candidates)"
row dom_cold "for comparison: --no-index $DOM (the dominator tree :top builds first)"
row top_idx_write "writing the index: $TOP (after deleting DUMP.hsidx)"
row top_warm "warm: $TOP reading DUMP.hsidx (dominator tree, engine, estimates and the candidates' exact sizes cached)"
echo
echo "Index file: $IDXB bytes. heapsh's own note under the cold table: $(tail -n 1 "$LOG/top_cold.1.out" 2>/dev/null || echo n/a)"
echo
echo "Checks of the shell's answer (first run of each, against dyn_bench's exact sizes of every object):"
echo
printf -- '- %s\n' "${CHECKS[@]}"
echo
tc=$(med "${CMD[top_cold]:-}"); dc=$(med "${CMD[dom_cold]:-}")
if [[ $tc != n/a && $dc != n/a ]]; then
	echo "Cold :top minus cold :dominators (medians of the command times): $(awk -v a="$tc" -v b="$dc" 'BEGIN { printf "%.1f", a - b }') ms for the dynamic-size part."
fi
} >"$SHELL_MD"

# ---------------------------------------------------------------- report
{
echo "# bench/dyn.sh, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "machine: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), nproc=$(nproc)," \
     "$(free -g | awk '/^Mem:/ { print $2 " GB total, " $7 " GB available" }'), $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "binaries: $BIN_ID"
echo "dump: $DUMP, $(stat -c %s "$DUMP") bytes"
echo "dyn_bench process: $DRV_TIME"
echo
cat "$DRV"
echo
cat "$SHELL_MD"
failures_md
} >"$REPORT"

# ---------------------------------------------------------------- summary.md
{
echo "### Dynamic sizes (issue 5, bench/dyn.sh; the full report is in $REPORT)"
echo
echo "Binaries: $BIN_ID."
echo
sed -n '/^### Targets/,$p' "$DRV" | sed '1,2d'
echo
sed -n '/^| measurement/,/^$/p' "$SHELL_MD"
echo "Checks of the shell's answer:"
echo
printf -- '- %s\n' "${CHECKS[@]}"
echo
} | summary_section bench/dyn.sh "$SUM"

echo
echo "== report (also in $REPORT; a section appended to $SUM)"
echo
cat "$REPORT"
[ ${#FAILURES[@]} -eq 0 ] || exit 1
