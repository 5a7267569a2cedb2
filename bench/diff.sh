#!/usr/bin/env bash
# bench/diff.sh - heapsh diff (issue 38) on two dumps of a real program,
# against VisualVM's comparison of two dumps.
#
# The program: Debian's H2 under load (bench/java/H2Leak.java: ROWS rows in
# an in-memory table, one thread inserting, deleting, reading and updating,
# and every 500th operation an H2Leak$Cached with a byte[2048] put into the
# static map H2Leak.CACHE, never emptied), dumped with `jcmd PID
# GC.heap_dump` after SETTLE seconds and again GROW seconds later: two dumps
# of about 175 and 181 MB at the defaults (178 on average).
#
# Measured, RUNS rounds, each in turn (A B C D E A B C D E ...; each a whole process,
# /usr/bin/time's wall seconds and peak resident memory):
#   cold      heapsh --no-index diff OLD NEW (no index: both dumps read and
#             both dominator trees computed)
#   warm      heapsh diff OLD NEW with both index files there (written by
#             one untimed run first)
#   cold-path, warm-path  the same with --by path
#   visualvm  bench/java/VisualVMBench diff OLD NEW: VisualVM's heap library
#             (HeapFactory.createHeap on both, its caches removed first, as
#             its viewer's "Compare with another heap dump": per class name
#             instance count and size differences, sorted); no retained
#             sizes: its comparison has none
# and checked: heapsh's first class row and first path row name the leak.
# Prints medians (min-max), max RSS, and the ratios of the medians.
#
# Usage: bash bench/diff.sh   (RUNS=5 ROWS=310000 SETTLE=10 GROW=25 XMX=1g)
# Takes about 3 minutes on 2 cores.
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
me=bench/diff.sh
RUNS=${RUNS:-5}
ROWS=${ROWS:-310000}
SETTLE=${SETTLE:-10}
GROW=${GROW:-25}
XMX=${XMX:-1g}
JDK=${JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
OUT=build/bench/diff
FAILURES=()
rm -rf "$OUT"
mkdir -p "$OUT/java" "$OUT/log"
missing=()
[ -s /usr/share/java/h2.jar ] || missing+=(libh2-java)
bench_install "$me" "$OUT/apt.log" ${missing[@]+"${missing[@]}"}
VVCP=$(sh tests/visualvm-classpath.sh) || exit 2
"$JDK/bin/javac" -nowarn -cp /usr/share/java/h2.jar -d "$OUT/java" bench/java/H2Leak.java || exit 2
"$JDK/bin/javac" -nowarn -cp "$VVCP" -d "$OUT/java" bench/java/VisualVMBench.java || exit 2
bench_heapsh diff src

# The two dumps.
OLD=$PWD/$OUT/old.hprof
NEW=$PWD/$OUT/new.hprof
mkfifo "$OUT/in"
exec 7<>"$OUT/in"
"$JDK/bin/java" -Xms"$XMX" -Xmx"$XMX" -cp /usr/share/java/h2.jar:"$OUT/java" H2Leak "$ROWS" \
	<"$OUT/in" >"$OUT/h2.out" 2>"$OUT/h2.err" &
JVM=$!
trap 'kill $JVM 2>/dev/null; wait $JVM 2>/dev/null' EXIT
PID=
for ((i = 0; i < 600; i++)); do
	read -r _ PID < <(grep '^ready ' "$OUT/h2.out" 2>/dev/null)
	[ -z "$PID" ] || break
	sleep 0.5
done
[ -n "$PID" ] || { echo "$me: H2Leak did not start ($OUT/h2.err)" >&2; exit 2; }
sleep "$SETTLE"
"$JDK/bin/jcmd" "$PID" GC.heap_dump "$OLD" >"$OUT/log/dump1.out" 2>&1 || exit 2
sleep "$GROW"
"$JDK/bin/jcmd" "$PID" GC.heap_dump "$NEW" >"$OUT/log/dump2.out" 2>&1 || exit 2
exec 7>&-
kill "$JVM" 2>/dev/null
wait "$JVM" 2>/dev/null
trap - EXIT

echo "# bench/diff.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "JVM: $("$JDK/bin/java" -version 2>&1 | head -1), -Xmx$XMX, H2Leak $ROWS rows, dumps $SETTLE s and $((SETTLE + GROW)) s after the load"
echo "heapsh: $BIN_ID"
echo "OLD $(stat -c %s "$OLD") bytes, NEW $(stat -c %s "$NEW") bytes"

# What heapsh says (and the index files written, for the warm runs).
"$HS" --format csv diff "$OLD" "$NEW" --top 5 >"$OUT/class.csv" 2>"$OUT/log/class.err"
"$HS" --format csv diff "$OLD" "$NEW" --by path --top 3 >"$OUT/path.csv" 2>"$OUT/log/path.err"
echo
echo "heapsh diff, first rows by class:"
sed -n 1,4p "$OUT/class.csv"
echo "by path, first row:"
sed -n 2p "$OUT/path.csv"
grep -q '^H2Leak\$Cached,' <(sed -n 2p "$OUT/class.csv") ||
	FAILURES+=("the first class row is not H2Leak\$Cached: $(sed -n 2p "$OUT/class.csv")")
grep -qF 'class H2Leak -static CACHE-> java.util.HashMap -table-> java.util.HashMap$Node[] -[]-> java.util.HashMap$Node -value-> H2Leak$Cached,' \
	<(sed -n 2p "$OUT/path.csv") || FAILURES+=("the first path row is not the leak's")

# The rounds.
timed() {	# NAME CMD...: one run, "wall_s rss_kib" appended to $OUT/log/NAME
	local name=$1
	shift
	/usr/bin/time -f '%e %M' -o "$OUT/log/$name.time" "$@" >"$OUT/log/$name.out" 2>"$OUT/log/$name.err" ||
		FAILURES+=("$name: exit $? ($OUT/log/$name.err)")
	cat "$OUT/log/$name.time" >>"$OUT/log/$name"
}
VV=("$JDK/bin/java" -Xmx8g -cp "$VVCP:$OUT/java" VisualVMBench diff "$OLD" "$NEW")
for ((r = 1; r <= RUNS; r++)); do
	timed cold "$HS" --no-index --format csv diff "$OLD" "$NEW"
	timed warm "$HS" --format csv diff "$OLD" "$NEW"
	timed visualvm "${VV[@]}"
	timed cold-path "$HS" --no-index --format csv diff "$OLD" "$NEW" --by path
	timed warm-path "$HS" --format csv diff "$OLD" "$NEW" --by path
done
cmp -s "$OUT/log/cold.out" "$OUT/log/warm.out" || FAILURES+=("cold and warm runs printed different rows")

stat_of() {	# NAME COLUMN: "median (min-max)"
	local v
	v=$(awk -v c="$2" '{ print $c }' "$OUT/log/$1" | sort -n)
	printf '%s (%s-%s)' "$(printf '%s\n' "$v" | median)" "$(printf '%s\n' "$v" | head -1)" "$(printf '%s\n' "$v" | tail -1)"
}
med() { awk -v c="$2" '{ print $c }' "$OUT/log/$1" | median; }
echo
echo "| $RUNS runs, interleaved | wall s, median (min-max) | peak RSS MiB, median (max) |"
echo "|---|---|---|"
for n in cold warm visualvm cold-path warm-path; do
	echo "| $n | $(stat_of $n 1) | $(awk '{ print $2 / 1024 }' "$OUT/log/$n" | median | xargs printf '%.0f') ($(awk '{ print $2 / 1024 }' "$OUT/log/$n" | sort -n | tail -1 | xargs printf '%.0f')) |"
done
echo
echo "ratios of the medians: cold/visualvm $(awk -v a="$(med cold 1)" -v b="$(med visualvm 1)" 'BEGIN { printf "%.2f", a / b }')," \
	"warm/visualvm $(awk -v a="$(med warm 1)" -v b="$(med visualvm 1)" 'BEGIN { printf "%.2f", a / b }')," \
	"warm/cold $(awk -v a="$(med warm 1)" -v b="$(med cold 1)" 'BEGIN { printf "%.2f", a / b }')"
echo "VisualVM's first row (size difference): $(sed -n 's/^visualvm diff first=//p' "$OUT/log/visualvm.err")"
failures_md
[ ${#FAILURES[@]} -eq 0 ]
