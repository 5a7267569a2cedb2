#!/usr/bin/env bash
# bench/leaks.sh - finding a growing leak in a running JVM without a heap
# dump (issue 34): heapsh's `:alloc leaks` (the agent's own search for paths
# from GC roots, docs/agent.md "Leaks in a running JVM") against
# `jcmd GC.heap_dump` and against JFR's old object sample with
# path-to-gc-roots=true at `jcmd JFR.dump`, on one JVM, interleaved, in one
# run: wall time of each command and the JVM's pauses it caused.
#
# The JVM: Debian's H2 (bench/java/H2Leak.java: ROWS rows in memory, one
# thread inserting, deleting, reading and updating; every 500th operation
# also puts an H2Leak$Cached with a byte[2048] into the static map
# H2Leak.CACHE, which is never emptied), -Xms$XMX -Xmx$XMX (G1), with
# -Xlog:safepoint to a file and JFR recording with its "profile" settings
# (jdk.OldObjectSample on) from the start. After WARMUP s, heapsh starts a
# sampled allocation recording (`:alloc start`, the default 512 KB), after
# SETTLE s more sets a mark (`:alloc mark`: growth is counted from it), and
# after GROW s more the rounds begin: each round runs the three commands in a
# rotated order, GAP s apart:
#   heapsh   heapsh -c ':alloc leaks --top 20' PID
#   dump     jcmd PID GC.heap_dump FILE (then FILE removed)
#   jfr      jcmd PID JFR.dump name=leakbench path-to-gc-roots=true filename=FILE,
#            then heapsh FILE -c ':alloc leaks' (not timed: how JFR names it)
# A command's pause: the "Total" of every safepoint the JVM logged while it
# ran, except the program's own collections (G1CollectForAllocation,
# G1PauseRemark, G1PauseCleanup, G1TryInitiateConcMark, Cleanup).
# Each round checks that heapsh's rows name the leak's path
# (class H2Leak.CACHE → ... → H2Leak$Cached.digest → byte[]).
#
# Usage: bash bench/leaks.sh  (BENCH_RUNS=5 ROWS=1000000 XMX=1g WARMUP=20
#        SETTLE=40 GROW=30 GAP=5 JDK=/usr/lib/jvm/java-17-openjdk-amd64)
set -u
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
me=bench/leaks.sh
RUNS=${BENCH_RUNS:-5}
ROWS=${ROWS:-1000000}
XMX=${XMX:-1g}
WARMUP=${WARMUP:-20}
SETTLE=${SETTLE:-40}
GROW=${GROW:-30}
GAP=${GAP:-5}
JDK=${JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
OUT=build/bench/leaks
FAILURES=()
rm -rf "$OUT"
mkdir -p "$OUT/java"
missing=()
[ -s /usr/share/java/h2.jar ] || missing+=(libh2-java)
bench_install "$me" "$OUT/apt.log" ${missing[@]+"${missing[@]}"}
"$JDK/bin/javac" -nowarn -cp /usr/share/java/h2.jar -d "$OUT/java" bench/java/H2Leak.java || exit 2
bench_heapsh leaks src
make -s libheapsh_agent.so || exit 2
export HEAPSH_AGENT=$PWD/libheapsh_agent.so

SP=$PWD/$OUT/safepoint.log
mkfifo "$OUT/in"
exec 7<>"$OUT/in"
"$JDK/bin/java" -Xms"$XMX" -Xmx"$XMX" -Xlog:safepoint:file="$SP" \
	-XX:StartFlightRecording=name=leakbench,settings=profile \
	-cp /usr/share/java/h2.jar:"$OUT/java" H2Leak "$ROWS" <"$OUT/in" >"$OUT/h2.out" 2>"$OUT/h2.err" &
JVM=$!
trap 'kill $JVM 2>/dev/null; wait $JVM 2>/dev/null' EXIT
PID=
for ((i = 0; i < 600; i++)); do
	read -r _ PID < <(grep '^ready ' "$OUT/h2.out" 2>/dev/null)
	[ -z "$PID" ] || break
	sleep 0.5
done
[ -n "$PID" ] || { echo "$me: H2Leak did not start ($OUT/h2.err)" >&2; exit 2; }
echo "# bench/leaks.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "JVM: $("$JDK/bin/java" -version 2>&1 | head -1), -Xmx$XMX, H2Leak $ROWS rows; heapsh: $BIN_ID"
sleep "$WARMUP"
"$HS" -c ':alloc start' "$PID" >"$OUT/start.out" 2>&1 || { echo "$me: :alloc start failed" >&2; exit 2; }
sleep "$SETTLE"
"$HS" -c ':alloc mark' "$PID" >"$OUT/mark.out" 2>&1 || { echo "$me: :alloc mark failed" >&2; exit 2; }
sleep "$GROW"
echo "heap: $("$HS" -c ':info' "$PID" 2>/dev/null | awk '$1 == "heap" && $2 == "used" { print $3, $4 }') used at the first round"

# pauses FROM: the safepoints logged after line FROM, the program's own collections left out: "ms names".
pauses() {
	tail -n +"$(($1 + 1))" "$SP" | grep -o 'Safepoint "[A-Za-z0-9_]*".*Total: [0-9]*' |
		awk '{ n = $2; gsub(/[",]/, "", n); if (n ~ /^(G1CollectForAllocation|G1PauseRemark|G1PauseCleanup|G1TryInitiateConcMark|Cleanup)$/) next;
		       t += $NF; c[n] += $NF } END { s = ""; for (k in c) s = s k "=" int(c[k] / 1e6) " "; printf "%.0f %s\n", t / 1e6, s }'
}
# one WHAT ROUND: run WHAT, record "what round wall_s pause_ms names" in $OUT/runs.
one() {
	local what=$1 r=$2 from t0 t1 p
	from=$(wc -l <"$SP")
	t0=$(date +%s.%N)
	case $what in
	heapsh) "$HS" --format csv -c ':alloc leaks --top 20' "$PID" >"$OUT/leaks.$r.csv" 2>"$OUT/leaks.$r.err" ;;
	dump) "$JDK/bin/jcmd" "$PID" GC.heap_dump "$PWD/$OUT/h.$r.hprof" >"$OUT/dump.$r.out" 2>&1 ;;
	jfr) "$JDK/bin/jcmd" "$PID" JFR.dump name=leakbench path-to-gc-roots=true filename="$PWD/$OUT/r.$r.jfr" >"$OUT/jfr.$r.out" 2>&1 ;;
	esac
	t1=$(date +%s.%N)
	sleep 1	# the log is written as the safepoints end
	p=$(pauses "$from")
	echo "$what $r $(echo "$t1 - $t0" | bc) $p" >>"$OUT/runs"
	case $what in
	dump) ls -l "$OUT/h.$r.hprof" | awk '{ print $5 }' >"$OUT/dump.$r.size"; rm -f "$OUT/h.$r.hprof" ;;
	jfr) "$HS" --format csv "$OUT/r.$r.jfr" -c ':alloc leaks --top 20' >"$OUT/jfr.$r.csv" 2>&1; rm -f "$OUT/r.$r.jfr" ;;
	esac
}
LEAK='class H2Leak.CACHE → java.util.HashMap.table → java.util.HashMap$Node[] → java.util.HashMap$Node.value → H2Leak$Cached.digest → byte[]'
for ((r = 1; r <= RUNS; r++)); do
	case $((r % 3)) in 1) order="heapsh dump jfr" ;; 2) order="dump jfr heapsh" ;; *) order="jfr heapsh dump" ;; esac
	for w in $order; do
		one "$w" "$r"
		sleep "$GAP"
	done
	grep -qF "$LEAK" "$OUT/leaks.$r.csv" || FAILURES+=("round $r: heapsh's :alloc leaks does not name the leak ($OUT/leaks.$r.csv)")
done
echo "ops done: $(tail -1 "$OUT/h2.out")"
echo
echo "| command | wall s (median, range) | JVM paused ms (median, range) | what paused it |"
echo "|---|---|---|---|"
for w in heapsh dump jfr; do
	wall=$(awk -v w=$w '$1 == w { print $3 }' "$OUT/runs")
	pz=$(awk -v w=$w '$1 == w { print $4 }' "$OUT/runs")
	names=$(awk -v w=$w '$1 == w { $1 = $2 = $3 = $4 = ""; print }' "$OUT/runs" | tr -s ' ' '\n' | sed -n 's/=.*//p' | sort -u | tr '\n' ' ')
	echo "| $w | $(echo "$wall" | median) ($(echo "$wall" | sort -n | head -1)-$(echo "$wall" | sort -n | tail -1)) | $(echo "$pz" | median) ($(echo "$pz" | sort -n | head -1)-$(echo "$pz" | sort -n | tail -1)) | $names|"
done
echo
echo "heap dump size: $(cat "$OUT"/dump.*.size 2>/dev/null | median) bytes"
echo "heapsh names the leak in $(grep -lF "$LEAK" "$OUT"/leaks.*.csv 2>/dev/null | wc -l) of $RUNS rounds; JFR's old object samples in $(grep -lF "$LEAK" "$OUT"/jfr.*.csv 2>/dev/null | wc -l) of $RUNS"
echo "heapsh's note of the last round: $(grep -h 'paused' "$OUT"/leaks.$RUNS.err "$OUT"/leaks.$RUNS.csv 2>/dev/null | head -1)"
echo "runs (what round wall_s pause_ms names): $OUT/runs"
failures_md
[ ${#FAILURES[@]} -eq 0 ]
