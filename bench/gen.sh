#!/usr/bin/env bash
# bench/gen.sh - synthetic dumps (issue 18): bench/gen_hprof makes
# build/bench/syn4g.hprof (4 GiB) and, with BENCH_BIG=1 and enough free disk,
# build/bench/syn36g.hprof (36 GiB, 1.5x this machine's memory); heapsh is
# measured on the 4 GiB one. Run from the repository root by `make bench`.
#
# Measured (GNU time -v: wall time and peak RSS; median of BENCH_RUNS runs,
# the dump read into the page cache first):
#   - open + class histogram:   heapsh --no-index -c ':histogram'
#   - open + all retained sizes: heapsh --no-index -c ':dominators --top 5'
#   - once each: :dominators writing DUMP.hsidx, then reading it (reopen).
#
# Environment: BENCH_RUNS=N (default 3); BENCH_BIG=1 also makes the 36 GiB
# dump (it needs its size plus about 30% for the index, and 4 GiB to spare,
# free under build/; checked with df first); GEN_SEED=N (default 1);
# HEAPSH=path (default ./heapsh; copied to build/bench/heapsh-gen first).
# The dumps are made once and reused, made again when bench/gen_hprof is
# newer; delete them to force it.
#
# Output: build/bench/gen.txt (the report), a section of build/bench/summary.md,
# each run's output and timing in build/bench/genlog/. Exit status 1 if a
# run failed.

set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
. bench/lib.sh

R=${BENCH_RUNS:-3}
[[ $R =~ ^[1-9][0-9]*$ ]] || { echo "bench/gen.sh: BENCH_RUNS must be a positive integer" >&2; exit 2; }
SEED=${GEN_SEED:-1}
OUT=build/bench
LOG=$OUT/genlog
REPORT=$OUT/gen.txt
SUM=$OUT/summary.md
GEN=$OUT/gen_hprof
SYN4=$OUT/syn4g.hprof
SYN36=$OUT/syn36g.hprof
[ -x /usr/bin/time ] || { echo "bench/gen.sh: needs GNU time (/usr/bin/time)" >&2; exit 2; }

make -s "$GEN"
bench_heapsh gen src bench/gen_hprof.c Makefile
mkdir -p "$LOG"
rm -f "$LOG"/*
FAILURES=()

free_bytes() { df -B1 --output=avail "$OUT" | tail -1 | tr -d ' '; }
gib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1073741824 }'; }

# make_dump FILE SIZE: generate FILE (SIZE as gen_hprof takes it) unless it
# is there and newer than the generator; its summary goes to FILE.gen.txt.
make_dump() {
	local f=$1 size=$2
	if [ -s "$f" ] && [ "$f" -nt "$GEN" ] && [ -s "$f.gen.txt" ]; then
		echo "== $f: made before ($(cat "$f.gen.txt"))"
		return 0
	fi
	rm -f "$f" "$f.hsidx" "$f.gen.txt"
	echo "== making $f ($size, seed $SEED)"
	if /usr/bin/time -v -o "$f.gen.time" "$GEN" "$f" --size "$size" --seed "$SEED" \
		--manifest "$f.manifest.csv" 2>"$f.gen.txt.tmp"; then
		tail -1 "$f.gen.txt.tmp" | sed 's/^gen_hprof: //' >"$f.gen.txt"
		echo "   $(cat "$f.gen.txt"); peak RSS $(rss_mb "$f.gen.time") MB"
	else
		FAILURES+=("gen_hprof $f --size $size: $(tail -1 "$f.gen.txt.tmp")")
		rm -f "$f"
	fi
	rm -f "$f.gen.txt.tmp"
}

# wall_s / rss_mb TIMEFILE: from GNU time -v.
wall_s() {
	awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, a, ":"); s = 0
		for (i = 1; i <= n; i++) s = s * 60 + a[i]; printf "%.2f", s }' "$1"
}
rss_mb() { awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$1"; }

# measure NAME RUNS CMD...: RUNS runs; sets WALL and RSS to the medians
# and RANGE to the walls' min-max.
measure() {
	local name=$1 runs=$2 i rc
	shift 2
	for ((i = 1; i <= runs; i++)); do
		rc=0
		/usr/bin/time -v -o "$LOG/$name.$i.time" "$@" >"$LOG/$name.$i.out" 2>"$LOG/$name.$i.err" || rc=$?
		if [ $rc -ne 0 ]; then
			FAILURES+=("$name: exit status $rc: $*")
			echo "!! FAILED ($rc): $*" >&2
			tail -5 "$LOG/$name.$i.err" >&2
		fi
		echo "   $name run $i: $(wall_s "$LOG/$name.$i.time") s, peak RSS $(rss_mb "$LOG/$name.$i.time") MB"
	done
	WALL=$(for ((i = 1; i <= runs; i++)); do wall_s "$LOG/$name.$i.time"; echo; done | median)
	RSS=$(for ((i = 1; i <= runs; i++)); do rss_mb "$LOG/$name.$i.time"; echo; done | median)
	RANGE=$(for ((i = 1; i <= runs; i++)); do wall_s "$LOG/$name.$i.time"; echo; done |
		sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }')
}

make_dump "$SYN4" 4G
BIG_NOTE="not made (BENCH_BIG=1 makes it)"
if [ "${BENCH_BIG:-0}" = 1 ]; then
	need=$((36 * 1073741824 * 13 / 10 + 4 * 1073741824))
	have=$(free_bytes)
	[ ! -f "$SYN36" ] || have=$((have + $(stat -c %s "$SYN36")))
	if [ "$have" -ge "$need" ]; then
		make_dump "$SYN36" 36G
		BIG_NOTE=$(cat "$SYN36.gen.txt" 2>/dev/null || echo "failed")
		BIG_NOTE+="; written in $(wall_s "$SYN36.gen.time") s"
	else
		BIG_NOTE="not made: $(gib "$have") GiB free under $OUT, $(gib "$need") GiB needed"
		echo "== $SYN36: $BIG_NOTE"
	fi
fi

{
	echo "# Synthetic dumps (bench/gen.sh)"
	echo
	echo "heapsh: $BIN_ID"
	echo "$(nproc) cores, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) of memory; median of $R runs"
	echo
} >"$REPORT"

if [ -s "$SYN4" ]; then
	echo "== reading $SYN4 into the page cache"
	cat "$SYN4" >/dev/null
	INFO=$("$HS" --no-index --format csv -c ':info' "$SYN4")
	info() { printf '%s\n' "$INFO" | awk -F, -v k="$1" '$1 == k { print $2 }'; }
	BYTES=$(stat -c %s "$SYN4")
	OBJS=$(info objects)
	REFS=$(info references)
	echo "   $OBJS objects, $REFS references"
	echo "== open + :histogram, $R runs"
	measure hist "$R" "$HS" --no-index -c ':histogram' "$SYN4"
	HW=$WALL HR=$RSS HRANGE=$RANGE
	echo "== --no-index open + :dominators, $R runs"
	measure dom "$R" "$HS" --no-index -c ':dominators --top 5' "$SYN4"
	DW=$WALL DR=$RSS DRANGE=$RANGE
	echo "== :dominators writing the index, then reading it"
	rm -f "$SYN4.hsidx"
	measure domw 1 "$HS" -c ':dominators --top 5' "$SYN4"
	WW=$WALL WR=$RSS
	IDX=$(stat -c %s "$SYN4.hsidx" 2>/dev/null || echo 0)
	measure domr 1 "$HS" -c ':dominators --top 5' "$SYN4"
	RW=$WALL RR=$RSS
	cmp -s "$LOG/dom.1.out" "$LOG/domr.1.out" ||
		FAILURES+=(":dominators from the index prints something else than --no-index")
	rm -f "$SYN4.hsidx"
	per() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "n/a" }'; }
	gbps() { awk -v b="$BYTES" -v s="$1" 'BEGIN { if (s > 0) printf "%.2f", b / s / 1e9; else print "n/a" }'; }
	budget() { awk -v m="$1" -v o="$OBJS" -v r="$REFS" 'BEGIN { printf "%.2f", m * 1048576 / (32 * o + 8 * r) }'; }
	{
		echo "Dump: $SYN4, $(cat "$SYN4.gen.txt")"
		echo "Dump bytes per object $(per "$BYTES" "$OBJS"), references per object $(per "$REFS" "$OBJS")"
		echo
		echo "| what | wall s (min-max) | GB/s of dump | peak RSS MB | peak RSS / (32 B/object + 8 B/reference) |"
		echo "|---|---|---|---|---|"
		echo "| open + :histogram (--no-index) | $HW ($HRANGE) | $(gbps "$HW") | $HR | $(budget "$HR") |"
		echo "| open + :dominators (--no-index, all retained sizes) | $DW ($DRANGE) | $(gbps "$DW") | $DR | $(budget "$DR") |"
		echo "| :dominators writing the index (1 run) | $WW | $(gbps "$WW") | $WR | index $IDX bytes |"
		echo "| :dominators reading the index (1 run) | $RW | | $RR | |"
		echo
		echo "Peak RSS per object: open + histogram $(per "$((HR * 1048576))" "$OBJS") B, with dominators $(per "$((DR * 1048576))" "$OBJS") B"
		echo
		echo "36 GiB dump: $BIG_NOTE"
	} >>"$REPORT"
else
	echo "$SYN4 could not be made." >>"$REPORT"
fi
failures_md >>"$REPORT"
echo
cat "$REPORT"
sed 1d "$REPORT" | summary_section gen "$SUM"
[ ${#FAILURES[@]} -eq 0 ]
