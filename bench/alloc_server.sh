#!/usr/bin/env bash
# bench/alloc_server.sh - what an allocation recording started in a running
# server costs (issue 33, the third workload of the allocation benchmark): a
# real server nobody here wrote, under steady load, its throughput measured
# second by second before, during and after a recording started and stopped
# in the running JVM. Run from the repository root.
#
# The server: Jetty 9.4 from Debian's libjetty9-java, embedded in
# bench/java/AllocServer.java (one servlet doing what a small JSON API does:
# query parameters, a customer map, BigDecimal prices, a catalogue search, a
# bounded LRU cache of recent orders, the answer written by Jetty's JSON).
# It listens on 127.0.0.1 only; a pool of ALLOC_SERVER_THREADS worker
# threads plus one acceptor and one selector; the JVM runs with
#   -Xms$XMX -Xmx$XMX -XX:+UseG1GC -Xlog:gc:file=LOG/CONFIG.RUN.gc
# and HEAPSH_AGENT_DEBUG=1 (the agent logs what it instrumented and, at exit,
# what it recorded). It counts the requests it completed and prints the count
# with the wall clock every second; the rate between two of those lines is the
# throughput of that second (a line the JVM printed late still gives the
# right rate). The load: wrk (Debian's wrk), one thread and
# ALLOC_SERVER_CONNECTIONS keep-alive connections to 127.0.0.1 only, cycling
# through 1000 different order requests, bounded by wrk's own -d (the run's
# longest possible length) and stopped with SIGINT at the end of the run.
#
# One run (a fresh JVM each time), with W = ALLOC_SERVER_WINDOW:
#   warm-up    ALLOC_SERVER_WARMUP s under load
#   baseline   ALLOC_SERVER_BASELINE s: the JVM's own throughput without a
#              recording (requests / s, JVM CPU from /proc/PID/stat)
#   start      the configuration's start command, timed (wall s)
#   recording  W s from the command's return; "steady" is its second half
#   status     `:alloc status` (heapsh configurations): allocations (or
#              samples) recorded
#   stop       the stop command, timed
#   after      ALLOC_SERVER_AFTER s; "after" is its second half
# Configurations (ALLOC_SERVER_CONFIGS, default "none sampled exact nolive
# liveall depth64 jfr"), each started with heapsh attached to the running JVM:
#   none     no recording; the same phases, no command
#   sampled  heapsh -c ':alloc start' PID            (sampled, 512k)
#   exact    heapsh -c ':alloc start --interval exact' PID (the default: exact
#            counts, live counts from a sample of the objects)
#   nolive   heapsh -c ':alloc start --interval exact --live none' PID (a
#            heapsh that does not know it: reported unavailable, not run again)
#   liveall  heapsh -c ':alloc start --interval exact --live all' PID (every
#            object followed: exact live counts)
#   depth64  heapsh -c ':alloc start --interval exact --depth 64' PID
#   jfr      jcmd PID JFR.start name=alloc_server settings=profile filename=F
#            and jcmd PID JFR.stop name=alloc_server (F in a temporary
#            directory; its jdk.ObjectAllocationSample events are counted and
#            it is deleted)
#   and heapsh -c ':alloc stop' PID for the heapsh ones. The first heapsh
#   command loads the agent into the JVM: that is part of the start time.
# Order: repetition 1: none, sampled, ...; repetition 2: ... (interleaved).
#
# Reported per configuration, median and min-max over the repetitions:
# baseline and steady throughput; steady / the same JVM's baseline; steady /
# the steady throughput of `none` of the same repetition; JVM CPU time per
# request, steady / baseline (and CPU in cores); the start and stop commands'
# wall seconds; "settle": seconds from issuing the start until the throughput
# reaches and stays within ALLOC_SERVER_TOLERANCE % of its steady value for
# the rest of the recording window; "recover": seconds from issuing the stop
# until it is back within the tolerance of the baseline for the rest of the
# after window; after / baseline. Settle and recover are read from the
# per-second series smoothed by a centred median of ALLOC_SERVER_SMOOTH
# seconds, so that one second with a GC pause does not count as leaving the
# band; `none` shows what noise alone gives (on a loaded machine, often
# ">N": never within the window of N s).
#
# Environment:
#   BENCH_RUNS=N                  repetitions (default 3)
#   ALLOC_SERVER_CONFIGS="..."    configurations, of the six above, in run order
#   ALLOC_SERVER_WARMUP=S         warm-up under load (default 60)
#   ALLOC_SERVER_BASELINE=S       baseline window (default 30)
#   ALLOC_SERVER_WINDOW=S         recording window (default 180: its second half,
#                                 90-180 s after the start, is steady; after a
#                                 --depth 64 start the JIT compiles the rewritten
#                                 code for about 100 s)
#   ALLOC_SERVER_AFTER=S          window after the stop (default 30)
#   ALLOC_SERVER_TOLERANCE=P      the band of settle and recover, % (default 10)
#   ALLOC_SERVER_SMOOTH=N         the seconds of the centred median they read
#                                 (default 5; 1 reads the raw seconds)
#   ALLOC_SERVER_XMX=SIZE         the server's -Xms and -Xmx (default 1g)
#   ALLOC_SERVER_THREADS=N        its worker threads (default 2)
#   ALLOC_SERVER_CONNECTIONS=N    wrk's connections (default 4; one wrk thread)
#   ALLOC_SERVER_CMD_TIMEOUT=S    longest start, status or stop command (default 600)
#   ALLOC_SERVER_JARS=DIR         where Jetty's jars are (default /usr/share/java)
#   ALLOC_JDK=DIR                 the JDK (default: the one of javac on PATH)
#   HEAPSH=FILE                   heapsh (default ./heapsh, made with make when
#                                 missing); its agent is libheapsh_agent.so next
#                                 to it, or ALLOC_AGENT. Both are copied to
#                                 build/bench/alloc_server/bin (HEAPSH_AGENT
#                                 names the copy), so a rebuild meanwhile
#                                 changes nothing.
# Missing packages (libjetty9-java, wrk) are installed with apt-get when run
# as root; otherwise the script prints the command and exits 2.
#
# Output in build/bench/alloc_server/: summary.md (the report, printed at the
# end), series/CONFIG.RUN.tsv (the per-second throughput: seconds from issuing
# the start, requests / s, phase) with CONFIG.RUN.marks (the phases' clock
# times), log/ (each JVM's stdout, stderr and GC log, wrk's output, each
# command's output). A run that fails (the server does not start or dies, a
# command fails or times out) is reported with the command's message and left
# out of the figures; the others go on; the exit status is then 1.
#
# Length: about 3 + WARMUP + BASELINE + WINDOW + AFTER s plus the commands per
# run: with the defaults, 6 configurations x 3 repetitions, about an hour.

set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
. bench/lib.sh

R=${BENCH_RUNS:-3}
read -r -a CONFIGS <<<"${ALLOC_SERVER_CONFIGS:-none sampled exact nolive liveall depth64 jfr}"
WARMUP=${ALLOC_SERVER_WARMUP:-60}
BASELINE=${ALLOC_SERVER_BASELINE:-30}
WINDOW=${ALLOC_SERVER_WINDOW:-180}
AFTER=${ALLOC_SERVER_AFTER:-30}
TOL=${ALLOC_SERVER_TOLERANCE:-10}
SMOOTH=${ALLOC_SERVER_SMOOTH:-5}
XMX=${ALLOC_SERVER_XMX:-1g}
THREADS=${ALLOC_SERVER_THREADS:-2}
CONNS=${ALLOC_SERVER_CONNECTIONS:-4}
CMD_TMO=${ALLOC_SERVER_CMD_TIMEOUT:-600}
JARS=${ALLOC_SERVER_JARS:-/usr/share/java}
JDK=${ALLOC_JDK:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}
me=bench/alloc_server.sh
for v in "$R" "$WARMUP" "$BASELINE" "$WINDOW" "$AFTER" "$TOL" "$SMOOTH" "$THREADS" "$CONNS" "$CMD_TMO"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "$me: BENCH_RUNS and the ALLOC_SERVER_ numbers must be positive integers, not '$v'" >&2; exit 2; }
done
for c in "${CONFIGS[@]}"; do
	case $c in none|sampled|exact|nolive|liveall|depth64|jfr) ;; *) echo "$me: unknown configuration '$c' in ALLOC_SERVER_CONFIGS (none sampled exact nolive liveall depth64 jfr)" >&2; exit 2;; esac
done
[ ${#CONFIGS[@]} -gt 0 ] || { echo "$me: no configuration" >&2; exit 2; }
[ -x "$JDK/bin/java" ] && [ -x "$JDK/bin/javac" ] && [ -x "$JDK/bin/jcmd" ] ||
	{ echo "$me: no JDK with java, javac and jcmd at $JDK (set ALLOC_JDK)" >&2; exit 2; }

OUT=build/bench/alloc_server
LOG=$OUT/log
SER=$OUT/series
REPORT=$OUT/summary.md
mkdir -p "$OUT/bin" "$OUT/java" "$LOG" "$SER"
rm -f "$LOG"/* "$SER"/*
FAILURES=()
fail() { FAILURES+=("$1"); echo "!! FAILED: $1" >&2; }
NOTES=()
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
START=$(date -u '+%Y-%m-%d %H:%M UTC')
HZ=$(getconf CLK_TCK)

# ---------------------------------------------------------------- packages
JETTY=(jetty9-server jetty9-http jetty9-io jetty9-util jetty9-util-ajax jetty9-servlet jetty9-security servlet-api)
missing=()
for j in "${JETTY[@]}"; do [ -s "$JARS/$j.jar" ] || { missing+=(libjetty9-java); break; }; done
command -v wrk >/dev/null || missing+=(wrk)
bench_install "$me" "$LOG/apt.log" ${missing[@]+"${missing[@]}"}
CP=
for j in "${JETTY[@]}"; do
	[ -s "$JARS/$j.jar" ] || { echo "$me: no $JARS/$j.jar (libjetty9-java; or set ALLOC_SERVER_JARS)" >&2; exit 2; }
	CP+="$JARS/$j.jar:"
done
"$JDK/bin/javac" -nowarn -cp "$CP" -d "$OUT/java" bench/java/AllocServer.java ||
	{ echo "$me: bench/java/AllocServer.java does not compile against $JARS" >&2; exit 2; }
CP+=$OUT/java
JETTY_ID="Jetty $(dpkg-query -W -f='${Version}' libjetty9-java 2>/dev/null || echo "(version unknown)")"
WRK_ID=$(wrk --version 2>&1 | head -n 1 | cut -d' ' -f1-2 || true)
JDK_VERSION=$("$JDK/bin/java" -version 2>&1 | head -n 1)

# The load: 1000 different orders (users, line counts, coupons, searches), in turn.
cp bench/alloc_load.lua "$OUT/load.lua" || exit 2

# ---------------------------------------------------------------- heapsh
HS=
HEAPSH_ID="not used (no configuration of heapsh selected)"
uses_heapsh=0
for c in "${CONFIGS[@]}"; do case $c in none|jfr) ;; *) uses_heapsh=1;; esac; done
if [ "$uses_heapsh" = 1 ]; then
	HEAPSH=${HEAPSH:-./heapsh}
	AGENT_SRC=${ALLOC_AGENT:-$(dirname "$HEAPSH")/libheapsh_agent.so}
	if [ ! -x "$HEAPSH" ] || [ ! -f "$AGENT_SRC" ]; then
		if [ "$HEAPSH" = ./heapsh ]; then
			echo "== make heapsh libheapsh_agent.so"
			make -s heapsh libheapsh_agent.so || echo "$me: make failed" >&2
		fi
	fi
	[ -x "$HEAPSH" ] && [ -f "$AGENT_SRC" ] ||
		{ echo "$me: no $HEAPSH or no $AGENT_SRC (run make, or set HEAPSH / ALLOC_AGENT)" >&2; exit 2; }
	cp "$HEAPSH" "$OUT/bin/heapsh.tmp" && mv -f "$OUT/bin/heapsh.tmp" "$OUT/bin/heapsh"
	cp "$AGENT_SRC" "$OUT/bin/agent.tmp" && mv -f "$OUT/bin/agent.tmp" "$OUT/bin/libheapsh_agent.so"
	HS=$OUT/bin/heapsh
	export HEAPSH_AGENT=$PWD/$OUT/bin/libheapsh_agent.so
	HEAPSH_ID="$("$HS" --version 2>&1 | head -n 1), sha256 $(sha256sum "$HS" | cut -c1-12) (copied from $HEAPSH);"
	HEAPSH_ID+=" agent sha256 $(sha256sum "$HEAPSH_AGENT" | cut -c1-12) (copied from $AGENT_SRC)"
	if git rev-parse --git-dir >/dev/null 2>&1; then
		HEAPSH_ID+="; the working tree was at commit $(git rev-parse --short HEAD)"
		[ -z "$(git status --porcelain -- src Makefile 2>/dev/null)" ] || HEAPSH_ID+=" with uncommitted changes in src/ or Makefile"
	fi
fi

# ---------------------------------------------------------------- helpers
TMPD=$(mktemp -d /tmp/alloc_server.XXXXXX)
JVM_PID=; WRK_PID=; SLEEP_PID=
# stop_pid PID: end a process this script started (TERM, then KILL after 10 s).
stop_pid() {
	local p=$1 k
	[ -n "$p" ] || return 0
	kill -0 "$p" 2>/dev/null || { wait "$p" 2>/dev/null || true; return 0; }
	kill -TERM "$p" 2>/dev/null || true
	for ((k = 0; k < 100; k++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$p" 2>/dev/null || true
	wait "$p" 2>/dev/null || true
}
cleanup() {
	[ -z "$SLEEP_PID" ] || kill "$SLEEP_PID" 2>/dev/null || true
	[ -z "$WRK_PID" ] || stop_pid "$WRK_PID"
	[ -z "$JVM_PID" ] || { stop_pid "$JVM_PID"; rm -rf "/tmp/.heapsh-$JVM_PID"; }
	rm -rf "$TMPD"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { echo "$EPOCHREALTIME"; }
# sleep_until CLOCK: sleep in the background and wait, so that a signal is heard at once.
sleep_until() {
	sleep "$(awk -v t="$1" -v n="$EPOCHREALTIME" 'BEGIN { d = t - n; printf "%.3f", (d > 0) ? d : 0 }')" &
	SLEEP_PID=$!
	wait "$SLEEP_PID"
	SLEEP_PID=
}
add() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", a + b }'; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# cpu_ticks: user + system time of the JVM so far, in clock ticks.
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$JVM_PID/stat" 2>/dev/null || echo 0; }
said() { { cat "$@" 2>/dev/null | grep -v '^note: ' | tr -s '\n ' ' ' | cut -c1-300; } || true; }

# start_cmd CONFIG RUN / stop_cmd CONFIG: the command, one word a line.
start_cmd() {
	case $1 in
		sampled) printf '%s\n' "$HS" -c ':alloc start' "$JVM_PID" ;;
		exact) printf '%s\n' "$HS" -c ':alloc start --interval exact' "$JVM_PID" ;;
		nolive) printf '%s\n' "$HS" -c ':alloc start --interval exact --live none' "$JVM_PID" ;;
		liveall) printf '%s\n' "$HS" -c ':alloc start --interval exact --live all' "$JVM_PID" ;;
		depth64) printf '%s\n' "$HS" -c ':alloc start --interval exact --depth 64' "$JVM_PID" ;;
		jfr) printf '%s\n' "$JDK/bin/jcmd" "$JVM_PID" JFR.start name=alloc_server settings=profile "filename=$TMPD/$1.$2.jfr" ;;
	esac
}
stop_cmd() {
	case $1 in
		none) ;;
		jfr) printf '%s\n' "$JDK/bin/jcmd" "$JVM_PID" JFR.stop name=alloc_server ;;
		*) printf '%s\n' "$HS" -c ':alloc stop' "$JVM_PID" ;;
	esac
}
# describe CONFIG: its commands as the report shows them.
describe() {
	case $1 in
		none) echo "no command" ;;
		jfr) echo "\`jcmd PID JFR.start name=alloc_server settings=profile filename=TMP/jfr.RUN.jfr\`, \`jcmd PID JFR.stop name=alloc_server\`" ;;
		*) echo "\`heapsh -c '$(start_cmd "$1" | sed -n 3p)' PID\`, \`heapsh -c ':alloc stop' PID\`" ;;
	esac
}

# timed NAME BASE CMD...: run CMD (its output in BASE.NAME.out/.err), bounded
# by ALLOC_SERVER_CMD_TIMEOUT; sets T0 and T1 (clock before and after) and RC.
timed() {
	local name=$1 base=$2
	shift 2
	RC=0
	T0=$(now)
	timeout "$CMD_TMO" "$@" >"$base.$name.out" 2>"$base.$name.err" || RC=$?
	T1=$(now)
}

declare -A BASE STEADY AFTERR R_OWN CPU_B CPU_W CPUREQ START_S STOP_S SETTLE RECOVER AFT_OWN ALLOCS NOK UNAVAIL AGENT_SAID JFR_EVENTS WRK_SAID

# analyse BASE: reads BASE.out (tick lines) and BASE.marks; writes the
# per-second series and prints "baseline steady after settle recover
# req_baseline req_steady" (requests / s; seconds, 999999 for never).
analyse() {
	local base=$1 series=$2
	# shellcheck disable=SC1090
	. "$base.marks"
	awk -v B0="$B0" -v B1="$B1" -v S0="$S0" -v S1="$S1" -v W0="$W0" -v W1="$W1" -v P0="$P0" -v P1="$P1" \
	    -v A0="$A0" -v E="$E" -v tol="$TOL" -v sm="$SMOOTH" -v series="$series" '
	$1 == "tick" { n++; T[n] = $2 / 1000; C[n] = $3 }
	function at(t,   i) {	# requests completed by clock t, linear between ticks
		if (n == 0) return 0
		if (t <= T[1]) return C[1]
		for (i = 2; i <= n; i++)
			if (T[i] >= t) return C[i-1] + (C[i] - C[i-1]) * (t - T[i-1]) / (T[i] - T[i-1])
		return C[n]
	}
	function rate(a, b) { return (b > a) ? (at(b) - at(a)) / (b - a) : 0 }
	function phase(t) {
		if (t <= B0) return "warmup"; if (t <= B1) return "baseline"; if (t <= S0) return "-"
		if (t <= S1) return "starting"; if (t <= W1) return "recording"; if (t <= P0) return "status"
		if (t <= P1) return "stopping"; if (t <= E) return "after"; return "end"
	}
	function med(k, lo, hi,   i, m, v, j, x) {	# median of the sm buckets around k within lo..hi
		m = 0
		for (i = k - int(sm / 2); i <= k + int((sm - 1) / 2); i++) if (i >= lo && i <= hi) v[++m] = R[i]
		for (i = 2; i <= m; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j+1] = v[j]; v[j+1] = x }
		return (m % 2) ? v[(m+1)/2] : (v[m/2] + v[m/2+1]) / 2
	}
	# settle(from, to, ref): seconds from "from" until the smoothed rate of the
	# buckets ending in (from, to] enters the band around ref and stays there.
	function settle(from, to, ref,   lo, hi, k, j) {
		lo = 0; hi = 0
		for (k = 2; k <= n; k++) { if (T[k] > from && !lo) lo = k; if (T[k] <= to) hi = k }
		if (!lo || hi < lo || ref <= 0) return 999999
		j = 0
		for (k = hi; k >= lo; k--) {
			if (med(k, lo, hi) < ref * (1 - tol / 100) || med(k, lo, hi) > ref * (1 + tol / 100)) break
			j = k
		}
		if (!j) return 999999
		return (T[j-1] > from) ? T[j-1] - from : 0
	}
	END {
		for (k = 2; k <= n; k++) R[k] = (T[k] > T[k-1]) ? (C[k] - C[k-1]) / (T[k] - T[k-1]) : 0
		print "# t_s (end of the second, from issuing the start)\treq_per_s\tphase" >series
		for (k = 2; k <= n; k++) printf "%.3f\t%.1f\t%s\n", T[k] - S0, R[k], phase(T[k]) >series
		b = rate(B0, B1); s = rate(W0, W1); a = rate(A0, E)
		printf "%.1f %.1f %.1f %.2f %.2f %.0f %.0f\n", b, s, a, settle(S0, W1, s), settle(P0, E, b),
			at(B1) - at(B0), at(W1) - at(W0)
	}' "$base.out"
}

# ---------------------------------------------------------------- one run
LIFETIME=$((WARMUP + BASELINE + WINDOW + AFTER + 3 * CMD_TMO + 120))
run() {
	local c=$1 i=$2 base=$LOG/$1.$2 port="" k t tb0 tb1 tw0 tw1 res why
	local -a cmd
	local B0 B1 S0 S1 W0 W1 P0 P1 A0 E
	echo "== $c, run $i"
	HEAPSH_AGENT_DEBUG=1 "$JDK/bin/java" -Xms"$XMX" -Xmx"$XMX" -XX:+UseG1GC -Xlog:gc:file="$base.gc" \
		-cp "$CP" AllocServer "$THREADS" "$LIFETIME" >"$base.out" 2>"$base.err" &
	JVM_PID=$!
	for ((k = 0; k < 600; k++)); do
		port=$(awk '$1 == "port" { print $2; exit }' "$base.out" 2>/dev/null || true)
		[ -z "$port" ] || break
		kill -0 "$JVM_PID" 2>/dev/null || break
		sleep 0.1
	done
	if [ -z "$port" ]; then
		fail "$c run $i: the server did not start: $(said "$base.err") (output in $base.out/.err)"
		stop_pid "$JVM_PID"; JVM_PID=
		return 0
	fi
	wrk -t1 -c"$CONNS" -d"${LIFETIME}s" --timeout 10s -s "$OUT/load.lua" "http://127.0.0.1:$port/" >"$base.wrk" 2>&1 &
	WRK_PID=$!
	t=$(now)
	sleep_until "$(add "$t" "$WARMUP")"
	B0=$(now); tb0=$(cpu_ticks)
	sleep_until "$(add "$B0" "$BASELINE")"
	B1=$(now); tb1=$(cpu_ticks)

	why=
	mapfile -t cmd < <(start_cmd "$c" "$i")
	if [ ${#cmd[@]} -gt 0 ]; then
		timed start "$base" "${cmd[@]}"
		S0=$T0; S1=$T1
		if [ "$RC" != 0 ]; then
			why="start failed (exit status $RC$([ "$RC" != 124 ] || echo ", timed out after $CMD_TMO s")): $(said "$base.start.err" "$base.start.out")"
			if [ "$c" = nolive ] && grep -q -- "--live" "$base.start.err"; then
				UNAVAIL[$c]="heapsh says: $(said "$base.start.err")"
			fi
		fi
	else
		S0=$(now); S1=$S0
	fi
	if [ -z "$why" ]; then
		W0=$(add "$S1" "$(awk -v w="$WINDOW" 'BEGIN { print w / 2 }')")
		sleep_until "$W0"
		W0=$(now); tw0=$(cpu_ticks)
		sleep_until "$(add "$S1" "$WINDOW")"
		W1=$(now); tw1=$(cpu_ticks)
		case $c in none|jfr) ;; *)
			timed status "$base" "$HS" -c ':alloc status' "$JVM_PID"
			ALLOCS[$c,$i]=$(awk '/^(allocations|samples) recorded/ { print $NF }' "$base.status.out")
		esac
		P0=$(now); P1=$P0
		mapfile -t cmd < <(stop_cmd "$c")
		if [ ${#cmd[@]} -gt 0 ]; then
			timed stop "$base" "${cmd[@]}"
			P0=$T0; P1=$T1
			[ "$RC" = 0 ] || why="stop failed (exit status $RC$([ "$RC" != 124 ] || echo ", timed out after $CMD_TMO s")): $(said "$base.stop.err" "$base.stop.out")"
		fi
		if [ -z "$why" ]; then
			A0=$(add "$P1" "$(awk -v w="$AFTER" 'BEGIN { print w / 2 }')")
			sleep_until "$(add "$P1" "$AFTER")"
			E=$(now)
		fi
	fi
	kill -0 "$JVM_PID" 2>/dev/null || why="${why:+$why; }the server died: $(said "$base.err")"
	kill -INT "$WRK_PID" 2>/dev/null || true
	for ((k = 0; k < 50; k++)); do kill -0 "$WRK_PID" 2>/dev/null || break; sleep 0.1; done
	stop_pid "$WRK_PID"; WRK_PID=
	stop_pid "$JVM_PID"; rm -rf "/tmp/.heapsh-$JVM_PID"; JVM_PID=
	[ -n "${AGENT_SAID[$c]:-}" ] || AGENT_SAID[$c]=$(grep '^heapsh agent' "$base.err" | tr '\n' ' ' | cut -c1-400 || true)
	WRK_SAID[$c,$i]=$(grep -E 'Socket errors|Non-2xx' "$base.wrk" | tr -s ' \n' ' ' || true)
	if [ "$c" = jfr ] && [ -s "$TMPD/$c.$i.jfr" ]; then
		JFR_EVENTS[$i]=$("$JDK/bin/jfr" summary "$TMPD/$c.$i.jfr" 2>/dev/null | awk '$1 == "jdk.ObjectAllocationSample" { print $2 }' || true)
	fi
	rm -f "$TMPD/$c.$i.jfr"
	if [ -n "$why" ]; then
		[ -n "${UNAVAIL[$c]:-}" ] || fail "$c run $i: $why (output in $base.*)"
		[ -z "${UNAVAIL[$c]:-}" ] || echo "   $c: unavailable: ${UNAVAIL[$c]}"
		return 0
	fi
	printf 'B0=%s\nB1=%s\nS0=%s\nS1=%s\nW0=%s\nW1=%s\nP0=%s\nP1=%s\nA0=%s\nE=%s\n' \
		"$B0" "$B1" "$S0" "$S1" "$W0" "$W1" "$P0" "$P1" "$A0" "$E" >"$base.marks"
	cp "$base.marks" "$SER/$c.$i.marks"
	res=$(analyse "$base" "$SER/$c.$i.tsv")
	local b s a st rc rb rs
	read -r b s a st rc rb rs <<<"$res"
	if awk -v b="$b" -v s="$s" 'BEGIN { exit !(b <= 0 || s <= 0) }'; then
		fail "$c run $i: no requests counted (baseline $b, steady $s req/s; wrk said: $(said "$base.wrk"))"
		return 0
	fi
	BASE[$c,$i]=$b; STEADY[$c,$i]=$s; AFTERR[$c,$i]=$a; SETTLE[$c,$i]=$st; RECOVER[$c,$i]=$rc
	R_OWN[$c,$i]=$(awk -v a="$s" -v b="$b" 'BEGIN { printf "%.4f", a / b }')
	AFT_OWN[$c,$i]=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f", a / b }')
	CPU_B[$c,$i]=$(awk -v t="$((tb1 - tb0))" -v hz="$HZ" -v a="$B0" -v b="$B1" 'BEGIN { printf "%.3f", t / hz / (b - a) }')
	CPU_W[$c,$i]=$(awk -v t="$((tw1 - tw0))" -v hz="$HZ" -v a="$W0" -v b="$W1" 'BEGIN { printf "%.3f", t / hz / (b - a) }')
	CPUREQ[$c,$i]=$(awk -v tb="$((tb1 - tb0))" -v tw="$((tw1 - tw0))" -v rb="$rb" -v rs="$rs" \
		'BEGIN { if (tb > 0 && rs > 0) printf "%.4f", (tw / rs) / (tb / rb) }')
	[ "$c" = none ] || START_S[$c,$i]=$(secs "$S0" "$S1")
	[ "$c" = none ] || STOP_S[$c,$i]=$(secs "$P0" "$P1")
	NOK[$c]=$(( ${NOK[$c]:-0} + 1 ))
	printf '   baseline %s req/s, steady %s (%s of baseline), after %s; JVM CPU %s -> %s cores; start %s s, settle %s s, stop %s s, recover %s s\n' \
		"$b" "$s" "${R_OWN[$c,$i]}" "$a" "${CPU_B[$c,$i]}" "${CPU_W[$c,$i]}" "${START_S[$c,$i]:--}" \
		"$(never "$st" "$WINDOW")" "${STOP_S[$c,$i]:--}" "$(never "$rc" "$AFTER")"
}
never() { awk -v v="$1" -v w="$2" 'BEGIN { if (v >= 999999) print ">" w; else printf "%.1f\n", v }'; }

# ---------------------------------------------------------------- runs
per_run=$((WARMUP + BASELINE + WINDOW + AFTER + 5))
echo "== $R repetitions of: ${CONFIGS[*]} (load average $LOAD0; about $((per_run * R * ${#CONFIGS[@]} / 60)) minutes plus the commands)"
for ((i = 1; i <= R; i++)); do
	for c in "${CONFIGS[@]}"; do
		[ -z "${UNAVAIL[$c]:-}" ] || continue
		run "$c" "$i"
	done
done

# ---------------------------------------------------------------- statistics
# vals ARRAY C: the values of C over the runs that succeeded.
vals() {
	local -n arr=$1
	local i
	for ((i = 1; i <= R; i++)); do [ -z "${arr[$2,$i]:-}" ] || printf '%s ' "${arr[$2,$i]}"; done
}
# ratios_none ARRAY C: ARRAY[C,i] / ARRAY[none,i] for each repetition where both succeeded.
ratios_none() {
	local -n arr=$1
	local i
	for ((i = 1; i <= R; i++)); do
		[ -n "${arr[$2,$i]:-}" ] && [ -n "${arr[none,$i]:-}" ] || continue
		awk -v a="${arr[$2,$i]}" -v b="${arr[none,$i]}" 'BEGIN { if (b > 0) printf "%.4f ", a / b }'
	done
}
# mm "VALUES" FORMAT [NEVER]: "median (min-max)"; with NEVER, values >= 999999 show as >NEVER.
mm() {
	printf '%s\n' $1 | sort -g | awk -v f="$2" -v nv="${3:-}" '
	function p(x) { return (nv != "" && x >= 999999) ? ">" nv : sprintf(f, x) }
	NF { a[++n] = $1 } END {
		if (!n) { print "n/a"; exit }
		# the middle of an even count: their mean, or "never" when one of them is
		m = (n % 2) ? a[(n+1)/2] : (a[n/2+1] >= 999999 ? a[n/2+1] : (a[n/2] + a[n/2+1]) / 2)
		if (n == 1) print p(m); else print p(m) " (" p(a[1]) "-" p(a[n]) ")" }'
}
has() { local x; for x in "${CONFIGS[@]}"; do [ "$x" = "$1" ] && return 0; done; return 1; }

TABLE=$OUT/table.md
{
echo "| configuration | runs ok | baseline req/s | steady req/s | steady / own baseline | steady / none | after / own baseline | JVM CPU cores, baseline -> steady | CPU per request, steady / baseline |"
echo "|---|---:|---|---|---|---|---|---|---|"
for c in "${CONFIGS[@]}"; do
	if [ -n "${UNAVAIL[$c]:-}" ]; then echo "| $c | unavailable: ${UNAVAIL[$c]//|/\\|} | | | | | | | |"; continue; fi
	rn=n/a
	[ "$c" = none ] || ! has none || rn=$(mm "$(ratios_none STEADY "$c")" '%.3f')
	echo "| $c | ${NOK[$c]:-0}/$R | $(mm "$(vals BASE "$c")" '%.0f') | $(mm "$(vals STEADY "$c")" '%.0f') |" \
	     "$(mm "$(vals R_OWN "$c")" '%.3f') | $rn | $(mm "$(vals AFT_OWN "$c")" '%.3f') |" \
	     "$(mm "$(vals CPU_B "$c")" '%.2f') -> $(mm "$(vals CPU_W "$c")" '%.2f') | $(mm "$(vals CPUREQ "$c")" '%.3f') |"
done
echo
echo "| configuration | start s | settle s (from issuing the start) | stop s | recover s (from issuing the stop) | allocations (sampled: samples) recorded, :alloc status at the end of the window |"
echo "|---|---|---|---|---|---|"
for c in "${CONFIGS[@]}"; do
	[ -z "${UNAVAIL[$c]:-}" ] || continue
	echo "| $c | $(mm "$(vals START_S "$c")" '%.2f') | $(mm "$(vals SETTLE "$c")" '%.1f' "$WINDOW") |" \
	     "$(mm "$(vals STOP_S "$c")" '%.2f') | $(mm "$(vals RECOVER "$c")" '%.1f' "$AFTER") | $(mm "$(vals ALLOCS "$c")" '%.0f') |"
done
} >"$TABLE"

RAW=$OUT/raw.md
{
echo "| configuration | run | baseline req/s | steady req/s | after req/s | cores base -> steady | start s | settle s | stop s | recover s |"
echo "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|"
for ((i = 1; i <= R; i++)); do
	for c in "${CONFIGS[@]}"; do
		[ -n "${BASE[$c,$i]:-}" ] || continue
		echo "| $c | $i | ${BASE[$c,$i]} | ${STEADY[$c,$i]} | ${AFTERR[$c,$i]} | ${CPU_B[$c,$i]} -> ${CPU_W[$c,$i]} |" \
		     "${START_S[$c,$i]:--} | $(never "${SETTLE[$c,$i]}" "$WINDOW") | ${STOP_S[$c,$i]:--} | $(never "${RECOVER[$c,$i]}" "$AFTER") |"
	done
done
} >"$RAW"

for k in "${!WRK_SAID[@]}"; do
	[ -z "${WRK_SAID[$k]}" ] || NOTES+=("wrk, ${k/,/ run }: ${WRK_SAID[$k]}")
done

{
echo "# bench/alloc_server.sh, $START to $(date -u '+%H:%M UTC')"
echo
echo "machine: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), nproc=$(nproc)," \
     "$(free -g | awk '/^Mem:/ { print $2 " GB total" }'), $(uname -sr);" \
     "load average $LOAD0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo
echo "Server: $JETTY_ID (libjetty9-java, $JARS) embedded in bench/java/AllocServer.java, $THREADS worker threads," \
     "-Xms$XMX -Xmx$XMX -XX:+UseG1GC; $JDK_VERSION. Load: $WRK_ID, 1 thread, $CONNS connections, 127.0.0.1."
echo "heapsh: $HEAPSH_ID."
echo "Per run: warm-up $WARMUP s, baseline $BASELINE s, recording window $WINDOW s (steady: its second half)," \
     "after the stop $AFTER s (after: its second half); $R repetitions, interleaved (${CONFIGS[*]});" \
     "settle and recover: within $TOL % ($SMOOTH-second centred median of the per-second series)."
echo
echo "Commands:"
echo
for c in "${CONFIGS[@]}"; do echo "- $c: $(describe "$c")"; done
echo
cat "$TABLE"
echo
for c in "${CONFIGS[@]}"; do
	[ -z "${AGENT_SAID[$c]:-}" ] || echo "- the agent's log ($c, first run): ${AGENT_SAID[$c]}"
done
[ -z "${JFR_EVENTS[*]:-}" ] || echo "- jfr: jdk.ObjectAllocationSample events per recording: ${JFR_EVENTS[*]}"
echo
echo "## Runs"
echo
cat "$RAW"
echo
echo "Per-second series: $SER/CONFIG.RUN.tsv; logs: $LOG/."
if [ ${#NOTES[@]} -gt 0 ]; then
	echo
	echo "**Notes:**"
	echo
	printf -- '- %s\n' "${NOTES[@]}"
fi
failures_md "Failures (left out of the figures):"
} >"$REPORT"

echo
echo "== report (also in $REPORT)"
echo
cat "$REPORT"
[ ${#FAILURES[@]} -eq 0 ] || exit 1
