#!/usr/bin/env bash
# bench/alloc_start.sh - how long `:alloc start --interval exact` and
# `:alloc stop` take in a running JVM (issue 33: "start within 2 s for 2,000
# loaded classes"), on two real programs nobody here wrote:
#
#   jetty  Jetty 9.4 (Debian's libjetty9-java) embedded in
#          bench/java/AllocServer.java, warmed by 15 s of wrk load, then idle
#          while the recording starts and stops.
#   h2     bench/java/H2Load.java 3000000 on H2 (Debian's libh2-java), under
#          its own one-thread load: the recording starts 6 s after the JVM,
#          while the load runs (one core busy of the machine's two).
#
# Configurations: exact (`:alloc start --interval exact`), depth64 (the
# same with `--depth 64`, which rewrites every class with code) and floor
# (the exact start with HEAPSH_AGENT_DEBUG=norewrite: the same classes
# retransformed, each returned as it is by the class-file hook, which is what
# the JVM itself costs, without ASM's work or the rewritten classes' bigger
# constant pools and recompilation). Each run is
# a fresh JVM with HEAPSH_AGENT_DEBUG=1, whose agent logs the classes it
# rewrote, those it left until the JVM links them (not linked yet), and the
# time in the class-file hook (ASM); the start and stop commands are timed
# whole (wall), the agent's loading included. Runs interleave workloads and
# configurations; the report gives medians and ranges.
#
# Usage: bash bench/alloc_start.sh
#   BENCH_RUNS=N                  repetitions (default 3)
#   ALLOC_START_WORKLOADS="..."   (default "jetty h2")
#   ALLOC_START_CONFIGS="..."     (default "exact depth64 floor")
#   HEAPSH=FILE                   heapsh (default ./heapsh, made when missing)
#   JDK=DIR                       the JDK (default /usr/lib/jvm/java-17-openjdk-amd64)
# Missing packages (libjetty9-java, libh2-java, wrk) are installed with
# apt-get when run as root. Output: build/bench/alloc_start/summary.md and
# the JVMs' logs in build/bench/alloc_start/log/.
set -u
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
me=bench/alloc_start.sh
RUNS=${BENCH_RUNS:-3}
read -r -a WORKLOADS <<<"${ALLOC_START_WORKLOADS:-jetty h2}"
read -r -a CONFIGS <<<"${ALLOC_START_CONFIGS:-exact depth64 floor}"
JDK=${JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
OUT=build/bench/alloc_start
LOG=$OUT/log
mkdir -p "$OUT/java" "$OUT/bin" "$LOG"
JARS=/usr/share/java
JETTY=(jetty9-server jetty9-http jetty9-io jetty9-util jetty9-util-ajax jetty9-servlet jetty9-security servlet-api)
START=$(date -u '+%Y-%m-%d %H:%M UTC')
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

missing=()
for j in "${JETTY[@]}"; do [ -s "$JARS/$j.jar" ] || { missing+=(libjetty9-java); break; }; done
[ -s "$JARS/h2.jar" ] || missing+=(libh2-java)
command -v wrk >/dev/null || missing+=(wrk)
bench_install "$me" "$LOG/apt.log" ${missing[@]+"${missing[@]}"}
CP=
for j in "${JETTY[@]}"; do CP+="$JARS/$j.jar:"; done
CP+=$OUT/java
"$JDK/bin/javac" -nowarn -cp "$CP" -d "$OUT/java" bench/java/AllocServer.java bench/java/H2Load.java ||
	{ echo "$me: bench/java/AllocServer.java or H2Load.java does not compile" >&2; exit 2; }
cp bench/alloc_load.lua "$OUT/load.lua" || exit 2

HEAPSH=${HEAPSH:-./heapsh}
if [ ! -x "$HEAPSH" ] || [ ! -f libheapsh_agent.so ]; then
	make -s heapsh libheapsh_agent.so || { echo "$me: make failed" >&2; exit 2; }
fi
cp "$HEAPSH" "$OUT/bin/heapsh" && cp "$(dirname "$HEAPSH")/libheapsh_agent.so" "$OUT/bin/" || exit 2
HS=$OUT/bin/heapsh
export HEAPSH_AGENT=$PWD/$OUT/bin/libheapsh_agent.so
ID="$("$HS" --version 2>&1 | head -n 1), agent sha256 $(sha256sum "$HEAPSH_AGENT" | cut -c1-12), commit $(git rev-parse --short HEAD 2>/dev/null)"

now() { date +%s.%N; }
# opts CONFIG: the start command's options.
opts() { case $1 in exact | floor) echo "--interval exact" ;; depth64) echo "--interval exact --depth 64" ;; esac; }
# debug CONFIG: the JVM's HEAPSH_AGENT_DEBUG.
debug() { case $1 in floor) echo norewrite ;; *) echo 1 ;; esac; }

# one WORKLOAD CONFIG RUN: a fresh JVM, the recording started and stopped;
# appends "workload config run start_s stop_s considered rewritten deferred hook_ms" to $OUT/runs.tsv.
one() {
	local w=$1 c=$2 r=$3 base=$LOG/$1.$2.$3 pid port k t0 t1 t2 line
	case $w in
	jetty)
		HEAPSH_AGENT_DEBUG=$(debug "$c") "$JDK/bin/java" -Xms1g -Xmx1g -XX:+UseG1GC -cp "$CP" AllocServer 2 600 >"$base.out" 2>"$base.err" &
		pid=$!
		for ((k = 0; k < 300; k++)); do
			port=$(awk '$1 == "port" { print $2; exit }' "$base.out" 2>/dev/null)
			[ -n "$port" ] && break
			sleep 0.2
		done
		[ -n "$port" ] || { echo "$me: $w run $r: the server did not start ($base.err)" >&2; kill "$pid"; return; }
		wrk -t1 -c4 -d15s -s "$OUT/load.lua" "http://127.0.0.1:$port/" >"$base.wrk" 2>&1
		sleep 3 ;;
	h2)
		HEAPSH_AGENT_DEBUG=$(debug "$c") "$JDK/bin/java" -Xmx2g -cp "$JARS/h2.jar:$OUT/java" H2Load 3000000 >"$base.out" 2>"$base.err" &
		pid=$!
		sleep 6 ;;
	esac
	# shellcheck disable=SC2046
	t0=$(now); timeout 600 "$HS" -c ":alloc start $(opts "$c")" "$pid" >"$base.start" 2>&1; t1=$(now)
	timeout 600 "$HS" -c ':alloc stop' "$pid" >"$base.stop" 2>&1; t2=$(now)
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	line=$(grep -m1 -o 'instrumented [0-9]* of [0-9]* loaded classes in [0-9]* ms ([0-9]* not linked yet[^)]*, [0-9]* ms in the class-file hook' "$base.err")
	if [ -z "$line" ]; then
		echo "$me: $w $c run $r: no start line in the agent's log ($base.err)" >&2
		return
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$c" "$r" \
		"$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)" \
		"$(sed -E 's/instrumented ([0-9]+) of ([0-9]+) loaded classes in [0-9]+ ms \(([0-9]+) not linked.*, ([0-9]+) ms in the class-file hook/\2\t\1\t\3\t\4/' <<<"$line")" >>"$OUT/runs.tsv"
	echo "   $w $c run $r: start $(echo "$t1 - $t0" | bc | cut -c1-5) s, stop $(echo "$t2 - $t1" | bc | cut -c1-5) s; $line"
}

: >"$OUT/runs.tsv"
for ((r = 1; r <= RUNS; r++)); do
	for w in "${WORKLOADS[@]}"; do
		for c in "${CONFIGS[@]}"; do
			one "$w" "$c" "$r"
		done
	done
done

# stat COLUMN WORKLOAD CONFIG [SCALE]: "median (min-max)" of a column of
# runs.tsv, divided by SCALE (default 1); counts (SCALE 0) as integers.
stat() {
	awk -F'\t' -v col="$1" -v w="$2" -v c="$3" '$1 == w && $2 == c { print $col }' "$OUT/runs.tsv" | sort -g |
		awk -v scale="${4:-1}" '{ v[NR] = scale ? $1 / scale : $1 } END { if (!NR) { print "-"; exit }
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			f = scale ? "%.2f (%.2f-%.2f)" : "%d (%d-%d)"
			printf f, m, v[1], v[NR] }'
}
{
	echo "# bench/alloc_start.sh, $START to $(date -u '+%H:%M UTC')"
	echo
	echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), nproc=$(nproc); load average $LOAD0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
	echo "JDK: $("$JDK/bin/java" -version 2>&1 | head -n 1); heapsh: $ID; $RUNS runs, interleaved."
	echo "jetty: AllocServer (2 workers) after 15 s of wrk, idle; h2: H2Load 3000000 under its own load, 6 s after its start."
	echo
	echo "| workload | configuration | classes retransformed | rewritten by the hook | not linked yet (left until linked) | start s | in the class-file hook s | stop s |"
	echo "|---|---|---|---|---|---|---|---|"
	for w in "${WORKLOADS[@]}"; do
		for c in "${CONFIGS[@]}"; do
			echo "| $w | $c | $(stat 6 "$w" "$c" 0) | $(stat 7 "$w" "$c" 0) | $(stat 8 "$w" "$c" 0) | $(stat 4 "$w" "$c") | $(stat 9 "$w" "$c" 1000) | $(stat 5 "$w" "$c") |"
		done
	done
	echo
	echo "Runs: $OUT/runs.tsv (workload, configuration, run, start s, stop s, classes, rewritten, not linked, hook ms); logs: $LOG/."
} >"$OUT/summary.md"
cat "$OUT/summary.md"
