#!/usr/bin/env bash
# bench/suspects.sh - leak suspects and the HTML report (issue 16) on the
# bench dumps build/bench/big1.hprof (177 MB) and big2.hprof (341 MB), with
# the index present (made once, untimed, as a second look at a dump has it).
# Run from the repository root by `make bench`, after bench/run.sh (which
# makes the dumps); makes them itself through bench/run.sh when missing.
#
# Each row is two whole heapsh processes, interleaved (A B A B ...), BENCH_RUNS
# runs each, wall seconds and peak RSS by GNU time, medians and the ratio of
# the medians:
#   suspects:  heapsh -c ':suspects' DUMP
#              against the Lua script it replaces: lua/leak_suspects.lua as it
#              was before :suspects (commit 7e18d0e, written out of git to
#              build/bench/old_leak_suspects.lua with its lib/)
#   report:    heapsh --report FILE.html DUMP
#              against the three Lua scripts that gave the same sections
#              (old leak_suspects, duplicate_strings, collections) in one
#              process (-f FILE of :luafile lines)
# Targets (issue 16): :suspects under 2 s, :report under 3 s, on both dumps.
#
# Environment: BENCH_RUNS=N (default 5); HEAPSH=path (default ./heapsh,
# copied to build/bench/heapsh-suspects first).
# Output: build/bench/suspects.txt and a section of build/bench/summary.md.
# Exit status 1 if a run failed; a missed target is reported, not an error.

set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
. bench/lib.sh

R=${BENCH_RUNS:-5}
OUT=build/bench
LOG=$OUT/suspectslog
REPORT=$OUT/suspects.txt
SUM=$OUT/summary.md
FAILURES=()
[[ $R =~ ^[1-9][0-9]*$ ]] || { echo "bench/suspects.sh: BENCH_RUNS must be a positive integer" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench/suspects.sh: GNU time (/usr/bin/time) is needed" >&2; exit 2; }

bench_heapsh suspects src lua Makefile
mkdir -p "$LOG"
rm -f "$LOG"/*
bench_dumps suspects "$OUT/big1.hprof"
DUMPS=("$OUT/big1.hprof")
[ -s "$OUT/big2.hprof" ] && DUMPS+=("$OUT/big2.hprof")

# The Lua script :suspects replaces, as it was, beside its library.
OLD=$OUT/oldlua
mkdir -p "$OLD/lib"
git show 7e18d0e:lua/leak_suspects.lua >"$OLD/leak_suspects.lua"
cp lua/lib/script.lua "$OLD/lib/script.lua"
cp lua/duplicate_strings.lua lua/collections.lua "$OLD/"
printf ':luafile %s\n' "$OLD/leak_suspects.lua" "$OLD/duplicate_strings.lua" \
	"$OLD/collections.lua" >"$OLD/report.hsh"
HAVE_REPORT=no
"$HS" -c ':help report' >/dev/null 2>&1 && HAVE_REPORT=yes

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# run TAG CMD...: one timed run; appends "wall rss_kib" to $LOG/TAG.times.
run() {
	local tag=$1 rc=0
	shift
	/usr/bin/time -f '%e %M' -o "$LOG/$tag.time" "$@" >"$LOG/$tag.out" 2>"$LOG/$tag.err" || rc=$?
	if [ $rc -ne 0 ]; then
		FAILURES+=("$tag: exit $rc ($(head -c 200 "$LOG/$tag.err"))")
		return
	fi
	tail -n 1 "$LOG/$tag.time" >>"$LOG/$tag.times"
}

{
	echo "# bench/suspects.sh: :suspects and :report against the Lua scripts they replace"
	echo
	echo "$BIN_ID; $(date -u +%Y-%m-%dT%H:%MZ); $(nproc) cores; $R interleaved runs per row; GNU time"
	echo
	echo "| dump | what | heapsh median s (min-max) | Lua median s (min-max) | heapsh / Lua | heapsh peak RSS MB | Lua peak RSS MB | target | verdict |"
	echo "|---|---|---|---|---|---|---|---|---|"
} >"$REPORT"

for d in "${DUMPS[@]}"; do
	name=$(basename "$d" .hprof)
	cat "$d" >/dev/null
	[ -s "$d.hsidx" ] || "$HS" -c ':dominators --top 1' "$d" >/dev/null
	rows=(suspects)
	[ $HAVE_REPORT = yes ] && rows+=(report)
	for what in "${rows[@]}"; do
		a=$name-$what-heapsh b=$name-$what-lua
		rm -f "$LOG/$a.times" "$LOG/$b.times"
		for ((i = 0; i < R; i++)); do
			if [ "$what" = suspects ]; then
				run "$a" "$HS" -c ':suspects' "$d"
				run "$b" "$HS" -l "$OLD/leak_suspects.lua" "$d"
			else
				run "$a" "$HS" --report "$LOG/$name.html" "$d"
				run "$b" "$HS" -f "$OLD/report.hsh" "$d"
			fi
		done
		[ -s "$LOG/$a.times" ] && [ -s "$LOG/$b.times" ] || continue
		wa=$(awk '{ print $1 }' "$LOG/$a.times" | median)
		wb=$(awk '{ print $1 }' "$LOG/$b.times" | median)
		spa=$(awk '{ print $1 }' "$LOG/$a.times" | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }')
		spb=$(awk '{ print $1 }' "$LOG/$b.times" | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }')
		ra=$(awk '{ print $2 }' "$LOG/$a.times" | median)
		rb=$(awk '{ print $2 }' "$LOG/$b.times" | median)
		target=$([ "$what" = suspects ] && echo 2 || echo 3)
		verdict=$(awk -v w="$wa" -v t="$target" 'BEGIN { print (w < t) ? "met" : "missed" }')
		printf '| %s | %s | %s (%s) | %s (%s) | %.2f | %.0f | %.0f | < %s s | %s |\n' "$name" ":$what" \
			"$wa" "$spa" "$wb" "$spb" "$(awk -v a="$wa" -v b="$wb" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
			"$(awk -v k="$ra" 'BEGIN { print k / 1024 }')" "$(awk -v k="$rb" 'BEGIN { print k / 1024 }')" \
			"$target" "$verdict" >>"$REPORT"
	done
done
[ $HAVE_REPORT = yes ] || echo "(:report is not in this heapsh: only :suspects measured)" >>"$REPORT"
failures_md >>"$REPORT"
cat "$REPORT"
tail -n +3 "$REPORT" | summary_section suspects "$SUM"
[ ${#FAILURES[@]} -eq 0 ]
