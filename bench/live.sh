#!/usr/bin/env bash
# bench/live.sh - heapsh on running JVMs (issue 6), side by side with jcmd, in
# one run. Run from the repository root by `make bench`, or on its own.
#
# A JVM holding about 1 GB of live objects (bench/java/LiveBench.java, wait
# mode: 4,000,000 Orders, 4,000 of them planted with status 7, and other
# data), started with -Xlog:safepoint so that every pause is read from the
# JVM's own log:
#  1. live histogram: `heapsh -f (:timer on, :histogram --top 20) PID` (the
#     VM's GC.class_histogram through the attach socket) versus `jcmd PID
#     GC.class_histogram`, and the agent's own IterateThroughHeap histogram
#     (`--via agent`), interleaved (target: heapsh no slower than jcmd);
#  2. snapshot and load: `heapsh -f (:timer on, :refresh) PID` versus
#     `jcmd PID GC.heap_dump FILE` then `heapsh --no-index -c :info FILE`,
#     interleaved; then one check session each that the snapshot and the dump
#     give the same `:histogram Order --retained` row and status-7 count;
#  3. push-down: `objects.exists(...)` and `objects.count(...)` of the Orders
#     with status 7, no snapshot (target: under 1 s and faster than any full
#     dump; the count must be the planted number), and an exists with no
#     match (status 11, the whole walk). Run before the snapshots of 2, and
#     again after them; also the protocol's FollowReferences
#     walk from the roots (no GC; heapsh does not use it) through
#     bench/live_instances.py, for comparison;
#  4. the throughput cost of an idle agent: three LiveBench workload JVMs
#     (none: never attached; dyn: attached later with `heapsh -c :info PID`;
#     start: -agentpath:libheapsh_agent.so) take turns running the same loop
#     (the others idle, blocked reading stdin), in rounds with the order
#     rotated. Phase A: before dyn is attached; phase B: after (`:info` sent
#     to dyn and start once, then idle). Cost = 1 - (ops/s of X) / (ops/s of
#     none), per round; dyn's is given net of its own phase-A ratio
#     (difference in differences: two JVMs differ by a few % by themselves,
#     JIT decisions and all). Several generations of three new JVMs, so no
#     single JVM decides. The agent thread's own CPU time is read from /proc.
#     Target: under 1 %; met / not met / not resolved from the 95 % interval
#     of the mean ratio over the generations.
#  5. analyses inside the JVM (issue 14): each listing of queries/ run inside
#     the JVM (`heapsh -f (:timer on, LISTING) PID`: no snapshot) against the
#     same on a snapshot (`:live off`: HotSpot's dumper, load, evaluate) and
#     against `jcmd PID GC.heap_dump` then `heapsh --no-index -f LISTING
#     FILE`, interleaved; the three answers must be equal. Targets: the JVM
#     paused no longer than the untagged FollowReferences walk of 3 (q_refs)
#     plus 20 %, and the listing done in under 5 s.
#
# Environment:
#   BENCH_RUNS=N            runs of each measurement of 1 and 3 (default 5)
#   BENCH_SNAP_RUNS=N       runs of each side of 2 (default BENCH_RUNS)
#   LIVE_MB=N               live megabytes (MiB) of the big JVM (default 1024)
#   LIVE_XMX=SIZE           its -Xms/-Xmx (default 3g)
#   LIVE_GENERATIONS=N      sets of three new workload JVMs, one after the other (6)
#   LIVE_ROUNDS_A=N, LIVE_ROUNDS_B=N  rounds per generation before / after attaching (3, 3)
#   LIVE_INTERVALS=N, LIVE_INTERVAL_MS=MS  intervals per turn and their length (3, 1000)
#   LIVE_SECTIONS="1 2 3 4 5"  the sections to run (default all); 5 needs 3
#                           for its reference walk
#   LIVE_LISTINGS="..."     the listings of 5 (default pi_check order_check
#                           reachable_from_threads top_components; not
#                           hashmap_entries: LiveBench has a million HashMap
#                           entries with an Order, so a million instances)
#   BENCH_LISTING_RUNS=N    runs of each side of 5 (default 3)
#   HEAPSH=path             the heapsh binary (default ./heapsh); it and the
#                           libheapsh_agent.so next to it are copied to
#                           build/bench/live/bin first
#
# Output: build/bench/live.txt (the report, printed at the end), a section
# in build/bench/summary.md if it exists (replacing an earlier one), every
# run's stdout/stderr and the JVMs' logs in build/bench/live/log/. Exit
# status 1 if a run or a check failed (targets missed are not failures).
# Every JVM started here is killed at the end, on failure or interrupt too.

set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
. bench/lib.sh

R=${BENCH_RUNS:-5}
RS=${BENCH_SNAP_RUNS:-$R}
MB=${LIVE_MB:-1024}
XMX=${LIVE_XMX:-3g}
GN=${LIVE_GENERATIONS:-6}
RA=${LIVE_ROUNDS_A:-3}
RB=${LIVE_ROUNDS_B:-3}
SECTIONS=" ${LIVE_SECTIONS:-1 2 3 4 5} "
RL=${BENCH_LISTING_RUNS:-3}
LISTINGS=${LIVE_LISTINGS:-pi_check order_check reachable_from_threads top_components}
section() { [[ $SECTIONS == *" $1 "* ]]; }	# section N: run section N?
WN=${LIVE_INTERVALS:-3}
WMS=${LIVE_INTERVAL_MS:-1000}
HEAPSH=${HEAPSH:-./heapsh}
for v in "$R" "$RS" "$MB" "$GN" "$RA" "$RB" "$WN" "$WMS" "$RL"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "bench/live.sh: BENCH_RUNS, BENCH_SNAP_RUNS, LIVE_MB, LIVE_GENERATIONS, LIVE_ROUNDS_A/B, LIVE_INTERVALS and LIVE_INTERVAL_MS must be positive integers" >&2; exit 2; }
done
OUT=build/bench
L=$OUT/live
LOG=$L/log
REPORT=$OUT/live.txt
SUM=$OUT/summary.md
TMO=900		# seconds: no single command may take longer

if [ "$HEAPSH" = ./heapsh ]; then
	make -s heapsh libheapsh_agent.so || echo "bench/live.sh: make failed; using the binaries as they are" >&2
fi
AGENT_SRC=$(dirname "$HEAPSH")/libheapsh_agent.so
[ -x "$HEAPSH" ] || { echo "bench/live.sh: $HEAPSH not found; run 'make'" >&2; exit 2; }
[ -f "$AGENT_SRC" ] || { echo "bench/live.sh: $AGENT_SRC not found; run 'make'" >&2; exit 2; }
command -v jcmd >/dev/null || { echo "bench/live.sh: jcmd not found (a JDK is needed)" >&2; exit 2; }
mkdir -p "$L/bin" "$L/java" "$LOG"
rm -f "$LOG"/* "$L"/*.hprof
# One binary and one agent for every number (a rebuild meanwhile changes nothing).
cp "$HEAPSH" "$L/bin/heapsh.tmp" && mv -f "$L/bin/heapsh.tmp" "$L/bin/heapsh"
cp "$AGENT_SRC" "$L/bin/agent.tmp" && mv -f "$L/bin/agent.tmp" "$L/bin/libheapsh_agent.so"
HS=$L/bin/heapsh
AGENT=$PWD/$L/bin/libheapsh_agent.so
BIN_ID="$("$HS" --version), sha256 $(sha256sum "$HS" | cut -c1-12); agent sha256 $(sha256sum "$AGENT" | cut -c1-12); copied from $HEAPSH"
if git rev-parse --git-dir >/dev/null 2>&1; then
	BIN_ID+="; the working tree was at commit $(git rev-parse --short HEAD)"
	[ -z "$(git status --porcelain -- src Makefile 2>/dev/null)" ] || BIN_ID+=" with uncommitted changes in src/ or Makefile"
fi
javac -d "$L/java" bench/java/LiveBench.java

GNU_TIME=0
if [ -x /usr/bin/time ] && /usr/bin/time -f '%M' -o /dev/null true 2>/dev/null; then GNU_TIME=1; fi
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- processes
PIDS=()		# every JVM started here
FDS=()		# the write ends of their stdin
cleanup() {
	local fd p
	for fd in ${FDS[@]+"${FDS[@]}"}; do exec {fd}>&- 2>/dev/null || true; done
	for p in ${PIDS[@]+"${PIDS[@]}"}; do
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
		rm -rf "/tmp/.heapsh-$p" "/tmp/.java_pid$p"
	done
	FDS=(); PIDS=()
	rm -f "$L"/*.hprof "$L"/*.in
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

# launch NAME ARGS...: java ARGS in the background, stdin a FIFO held open
# here; sets JBG (its pid) and JFD (its stdin).
launch() {
	local name=$1 fd
	shift
	rm -f "$L/$name.in"
	mkfifo "$L/$name.in"
	exec {fd}<>"$L/$name.in"
	FDS+=("$fd")
	java "$@" <"$L/$name.in" >"$LOG/$name.out" 2>"$LOG/$name.err" &
	PIDS+=("$!")
	JBG=$!; JFD=$fd
}
# await NAME PID: wait for its "ready PID" line; sets JPID.
await() {
	local i
	JPID=
	for ((i = 0; i < 3000; i++)); do
		JPID=$(awk '/^ready / { print $2 }' "$LOG/$1.out")
		[ -n "$JPID" ] && break
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	if [ -z "$JPID" ] || [ "$JPID" != "$2" ]; then
		echo "bench/live.sh: $1 did not start (java, see $LOG/$1.err):" >&2
		tail -n 20 "$LOG/$1.err" >&2
		exit 1
	fi
}
start() { launch "$@"; await "$1" "$JBG"; }	# start NAME ARGS...: launch and await
# stop NAME PID FD: end a JVM with a "quit" line (any line ends wait mode);
# kill it if it does not exit. (Closing the FIFO is not enough: JVMs started
# later hold its write end too.)
stop() {
	local fd=$3 i
	echo quit >&"$fd" || true
	exec {fd}>&-
	for ((i = 0; i < 100; i++)); do kill -0 "$2" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$2" 2>/dev/null || true
	wait "$2" 2>/dev/null || true
	rm -rf "/tmp/.heapsh-$2" "/tmp/.java_pid$2"
}

# ---------------------------------------------------------------- statistics
median() {	# median of the numbers in $1 ("n/a" if none)
	printf '%s\n' $1 | awk 'NF { a[++n] = $1 } END {
		if (!n) { print "n/a"; exit }
		for (i = 2; i <= n; i++) { v = a[i]; for (j = i - 1; j >= 1 && a[j] > v; j--) a[j+1] = a[j]; a[j+1] = v }
		print (n % 2) ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }'
}
spread() {	# "min q1 q3 max n" of the numbers in $1 (quartiles interpolated)
	printf '%s\n' $1 | sort -g | awk 'NF { a[++n] = $1 } END {
		if (!n) { print "n/a n/a n/a n/a 0"; exit }
		q1 = 1 + (n - 1) * 0.25; q3 = 1 + (n - 1) * 0.75
		printf "%s %.4g %.4g %s %d\n", a[1], a[int(q1)] + (q1 - int(q1)) * (a[int(q1)+1] - a[int(q1)]),
			a[int(q3)] + (q3 - int(q3)) * (a[int(q3)+1] - a[int(q3)]), a[n], n }'
}
# boot_ci "LIST_B" ["LIST_A"]: a 95 % bootstrap interval (2000 resamples, fixed
# seed) of median(B), or of median(B) / median(A) when A is given: "lo-hi".
boot_ci() {
	awk -v lb="$1" -v la="${2:-}" '
		function med(x, n,   i, j, v) {
			for (i = 2; i <= n; i++) { v = x[i]; for (j = i - 1; j >= 1 && x[j] > v; j--) x[j+1] = x[j]; x[j+1] = v }
			return (n % 2) ? x[(n+1)/2] : (x[n/2] + x[n/2+1]) / 2
		}
		function draw(src, n, dst,   i) { for (i = 1; i <= n; i++) dst[i] = src[1 + int(rand() * n)] }
		BEGIN {
			srand(1); nb = split(lb, b, " "); na = split(la, a, " ")
			if (!nb) { print "n/a"; exit }
			for (k = 1; k <= 2000; k++) {
				draw(b, nb, xb); v = med(xb, nb)
				if (na) { draw(a, na, xa); v /= med(xa, na) }
				r[k] = v
			}
			for (i = 2; i <= 2000; i++) { v = r[i]; for (j = i - 1; j >= 1 && r[j] > v; j--) r[j+1] = r[j]; r[j+1] = v }
			printf "%.4f-%.4f\n", r[50], r[1951]
		}'
}
# tci "LIST": "MEAN LO HI N", the mean and its 95 % t-interval (n >= 2).
tci() {
	printf '%s\n' $1 | awk 'NF { x[++n] = $1; s += $1 } END {
		if (n < 2) { print (n ? x[1] : "n/a"), "n/a n/a", n; exit }
		split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086", t, " ")
		m = s / n; for (i = 1; i <= n; i++) v += (x[i] - m) ^ 2
		q = (n - 1 <= 20) ? t[n - 1] : 2.0
		h = q * sqrt(v / (n - 1)) / sqrt(n)
		printf "%.4f %.4f %.4f %d\n", m, m - h, m + h, n }'
}
calc() {	# calc FMT EXPR a [b [c]]: awk arithmetic; n/a if an argument is
	local fmt=$1 expr=$2 v; shift 2
	for v in "$@"; do [[ -z $v || $v == n/a ]] && { echo n/a; return; }; done
	awk -v a="${1:-0}" -v b="${2:-0}" -v c="${3:-0}" "BEGIN { printf \"$fmt\", $expr }"
}
s2() { calc '%.2f' 'a / 1000' "$1"; }	# ms -> s
mb() { calc '%.0f' 'a / 1024' "$1"; }	# KiB -> MiB

# ---------------------------------------------------------------- timing
SPLOG=$LOG/big.safepoint.log
sp_lines() { if [ -f "$SPLOG" ]; then wc -l <"$SPLOG"; else echo 0; fi; }
# sp_since N: the safepoints logged after line N: "TOTAL_MS NAME MS + NAME MS ..."
# (pauses of 1 ms or more named; all summed; Total = reaching + cleanup + at safepoint).
sp_since() {
	awk -v n="$1" 'NR > n && /Safepoint "/ {
		name = $0; sub(/.*Safepoint "/, "", name); sub(/".*/, "", name)
		t = $0; sub(/.*Total: /, "", t); sub(/ ns.*/, "", t); t /= 1e6
		sum += t
		if (t >= 1) { list = list (list ? " + " : "") sprintf("%s %.0f", name, t) }
	} END { printf "%.1f %s\n", sum, list ? list : "-" }' "$SPLOG"
}

declare -A WALL CMD SP SPN PAUSE RSS NRUN
FAILURES=()
fail() { FAILURES+=("$1"); echo "!! FAILED: $1" >&2; }

# timed NAME CMD...: one run, under a timeout; appends wall ms, peak RSS
# (KiB) and the JVM's safepoint ms during the run to NAME's lists. Sets
# RUN_BASE (the log file prefix) and RUN_OK (1, or 0 after a failure).
timed() {
	local name=$1 rc=0 t0 t1 sp0 w rss sp; shift
	local n=$(( ${NRUN[$name]:-0} + 1 ))
	NRUN[$name]=$n
	RUN_BASE=$LOG/$name.$n
	sp0=$(sp_lines)
	t0=$(date +%s%N)
	if [ "$GNU_TIME" = 1 ]; then
		/usr/bin/time -f '%M' -o "$RUN_BASE.rss" timeout "$TMO" "$@" >"$RUN_BASE.out" 2>"$RUN_BASE.err" || rc=$?
		rss=$(tail -n 1 "$RUN_BASE.rss")
	else
		timeout "$TMO" "$@" >"$RUN_BASE.out" 2>"$RUN_BASE.err" || rc=$?
		rss=n/a
	fi
	t1=$(date +%s%N)
	w=$(( (t1 - t0) / 1000000 ))
	sleep 0.3	# the VM thread logs a safepoint just after it ends
	sp=$(sp_since "$sp0")
	if [ "$rc" != 0 ]; then
		RUN_OK=0
		fail "$name run $n: exit status $rc: $* (output in $RUN_BASE.out/.err: $(tail -n 3 "$RUN_BASE.err" | tr '\n' ' '))"
		return 0
	fi
	RUN_OK=1
	WALL[$name]+="$w "; RSS[$name]+="$rss "
	SP[$name]+="${sp%% *} "; SPN[$name]=${sp#* }
	local c
	c=$(awk '/^time: / { t = $2 } END { print t }' "$RUN_BASE.err")
	[ -z "$c" ] || CMD[$name]+="$c "
	printf '   %-14s run %d: %7s ms wall%s, JVM safepoints %s ms (%s)\n' "$name" "$n" "$w" \
		"${c:+, command $c ms}" "${sp%% *}" "${sp#* }"
}
med() { median "${WALL[$1]:-}"; }
medc() { median "${CMD[$1]:-}"; }
meds() { median "${SP[$1]:-}"; }
medp() { median "${PAUSE[$1]:-}"; }
medr() { median "${RSS[$1]:-}"; }
runs() { wc -w <<<"${WALL[$1]:-}"; }
list() { local x="${!1}"; echo "${x% }"; }

# ---------------------------------------------------------------- machine
MACHINE="$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), nproc=$(nproc), $(free -g | awk '/^Mem:/ { print $2 " GB total, " $7 " GB available" }'), $(uname -sr)"
JAVA_V=$(java -version 2>&1 | head -n 1)
echo "== bench/live.sh: $MACHINE; $JAVA_V"
echo "heapsh: $BIN_ID"
echo "load average at the start: $LOAD0"

# ================================================================ the big JVM
echo "== starting LiveBench wait $MB (-Xms$XMX -Xmx$XMX, -Xlog:safepoint to $SPLOG)"
start big -Xms"$XMX" -Xmx"$XMX" -Xlog:safepoint:file="$SPLOG" -cp "$L/java" LiveBench wait "$MB"
BP=$JPID; BFD=$JFD
read -r _ NORD _ K7 _ OBJS _ LIVEB < <(grep '^orders ' "$LOG/big.out")
echo "   pid $BP: $NORD Orders, $K7 planted with status 7, about $OBJS objects of the program, $LIVEB bytes used after a full GC"

# The first attach loads the agent; every later heapsh only connects.
timed attach_first "$HS" -c ':info' "$BP"
ATTACH1=$(med attach_first)
HEAPUSED=$(awk '$1 == "heap" && $2 == "used" { print $3 }' "$LOG/attach_first.1.out")

# ---------------------------------------------------------------- 1. histogram
printf ':timer on\n:histogram --top 20\n' >"$L/hist.hsh"
printf ':timer on\n:histogram --top 20 --via agent\n' >"$L/hist_agent.hsh"
order_row() {	# order_row FILE hs|jcmd: "instances bytes" of class Order
	if [ "$2" = hs ]; then awk '$1 == "Order" { print $2, $3; exit }' "$1"
	else awk '$1 ~ /^[0-9]+:$/ && $4 == "Order" { print $2, $3; exit }' "$1"; fi
}
HIST_ORDER=
hist_round() {	# hist_round SUFFIX: heapsh (the VM's inspection), jcmd, heapsh --via agent; order rotated
	local sfx=$1 i=$2 w
	for w in $(case $((i % 3)) in 1) echo "hs jcmd agent" ;; 2) echo "jcmd agent hs" ;; *) echo "agent hs jcmd" ;; esac); do
		if [ "$w" = hs ]; then
			timed "hs_hist$sfx" "$HS" -f "$L/hist.hsh" "$BP"
		elif [ "$w" = agent ]; then
			timed "hs_hist_agent$sfx" "$HS" -f "$L/hist_agent.hsh" "$BP"
		else
			timed "jcmd_hist$sfx" jcmd "$BP" GC.class_histogram
		fi
		[ "$RUN_OK" = 1 ] || continue
		local row
		row=$(order_row "$RUN_BASE.out" "$( [ "$w" = jcmd ] && echo jcmd || echo hs)")
		[ -n "$HIST_ORDER" ] || HIST_ORDER=$row
		[ "$row" = "$HIST_ORDER" ] || fail "$w histogram run $i: Order row '$row', expected '$HIST_ORDER' ($RUN_BASE.out)"
	done
}
if section 1; then
echo "== 1. live histogram: heapsh :histogram --top 20 (and --via agent) vs jcmd GC.class_histogram, $R runs each, interleaved"
for ((i = 1; i <= R; i++)); do hist_round "" "$i"; done
[ "${HIST_ORDER%% *}" = "$NORD" ] || fail "histogram: $HIST_ORDER Orders, LiveBench made $NORD"
fi

# ---------------------------------------------------------------- 3. push-down (before any snapshot)
EXISTS='objects.exists([it | it is Order and it.status = 7])'
COUNT='objects.count([it | it is Order and it.status = 7])'
printf ':timer on\n%s\n' "$EXISTS" >"$L/exists.hsh"
printf ':timer on\n%s\n' "$COUNT" >"$L/count.hsh"
EXISTS_NO='objects.exists([it | it is Order and it.status = 11])'	# no match: the whole walk
printf ':timer on\n%s\n' "$EXISTS_NO" >"$L/exists_no.hsh"
SOCK=/tmp/.heapsh-$BP/agent.sock
push_round() {	# push_round SUFFIX: exists, count (heapsh), and the FollowReferences walk (client)
	local sfx=$1 a
	timed "q_exists$sfx" "$HS" -f "$L/exists.hsh" "$BP"
	if [ "$RUN_OK" = 1 ]; then
		a=$(awk 'NF { print; exit }' "$RUN_BASE.out")
		[ "$a" = true ] || fail "push-down exists: answered '$a', not true ($RUN_BASE.out)"
		grep -q "no snapshot taken" "$RUN_BASE.err" || fail "push-down exists: not evaluated inside the JVM ($RUN_BASE.err)"
	fi
	timed "q_exists_no$sfx" "$HS" -f "$L/exists_no.hsh" "$BP"
	if [ "$RUN_OK" = 1 ]; then
		a=$(awk 'NF { print; exit }' "$RUN_BASE.out")
		[ "$a" = false ] || fail "push-down exists (no match): answered '$a', not false ($RUN_BASE.out)"
	fi
	timed "q_count$sfx" "$HS" -f "$L/count.hsh" "$BP"
	if [ "$RUN_OK" = 1 ]; then
		a=$(awk 'NF { print; exit }' "$RUN_BASE.out")
		[ "$a" = "$K7" ] || fail "push-down count: answered '$a', planted $K7 ($RUN_BASE.out)"
		grep -q "no snapshot taken" "$RUN_BASE.err" || fail "push-down count: not evaluated inside the JVM ($RUN_BASE.err)"
	fi
	# heapsh detaches the agent when it leaves: load it for the protocol client, then let it go
	"$HS" --keep-agent -c ':info' "$BP" >/dev/null 2>&1 || fail "heapsh --keep-agent -c :info $BP failed"
	timed "q_refs$sfx" python3 bench/live_instances.py "$SOCK" Order status 7 1
	"$HS" -c ':info' "$BP" >/dev/null 2>&1 || true
	if [ "$RUN_OK" = 1 ]; then
		read -r _ _ _ a _ < "$RUN_BASE.out"
		[ "$a" = "$K7" ] || fail "FollowReferences walk: matched '$a', planted $K7 ($RUN_BASE.out)"
	fi
}
QINFO=n/a
if section 3; then
echo "== 3. push-down, no snapshot: exists and count of the Orders with status 7, $R runs each"
for ((i = 1; i <= R; i++)); do push_round ""; done
QINFO=$(grep -h 'evaluated inside JVM' "$LOG"/q_count.1.err | head -n 1 | sed 's/^evaluated inside JVM [0-9]*: //')
fi

# ---------------------------------------------------------------- 2. snapshot and load
answer() { awk -v n="$2" '/^heapsh[^>]*> / { k++; next } k == n && NF' "$1"; }
CHK=()
check() {	# check WHAT EXPECTED GOT
	if [ "$2" = "$3" ]; then CHK+=("$1: $3: ok"); echo "   $1: $3: ok"
	else CHK+=("$1: expected '$2', got '$3' (FAILED)"); fail "check $1: expected '$2', got '$3'"; fi
}
TOTAL_DUMP=
DUMPF=$L/dump.hprof	# section 5's dumps too, when 2 does not run
DUMPB=n/a
if section 2; then
printf ':timer on\n:refresh\n' >"$L/snap.hsh"
echo "== 2. snapshot and load: heapsh :refresh vs jcmd GC.heap_dump + heapsh --no-index -c :info, $RS runs each, interleaved"
for ((i = 1; i <= RS; i++)); do
	for w in $( ((i % 2)) && echo "hs jcmd" || echo "jcmd hs"); do
		if [ "$w" = hs ]; then
			timed hs_snap "$HS" -f "$L/snap.hsh" "$BP"
			if [ "$RUN_OK" = 1 ]; then
				# HotSpot's dumper (the default): "(jcmd GC.heap_dump: D s; loaded in L s)";
				# the agent's walk (--via agent): "(the JVM paused about P ms)"
				p=$(sed -n 's/.*the JVM paused about \([0-9]*\) ms.*/\1/p' "$RUN_BASE.err" | tail -n 1)
				[ -z "$p" ] || PAUSE[hs_snap]+="$p "
				SNAP_OBJS=$(sed -n 's/^snapshot of JVM [0-9]*: \([0-9]*\) objects.*/\1/p' "$RUN_BASE.err" | tail -n 1)
				[ -n "$SNAP_OBJS" ] || fail "hs_snap run $i: no 'snapshot of JVM' line ($RUN_BASE.err)"
				echo "      heapsh says: $(grep -h '^snapshot of JVM' "$RUN_BASE.err" | tail -n 1)"
			fi
		else
			rm -f "$DUMPF"
			timed jcmd_dump jcmd "$BP" GC.heap_dump "$PWD/$DUMPF"
			if [ "$RUN_OK" = 1 ] && [ -s "$DUMPF" ]; then
				DUMPB=$(stat -c %s "$DUMPF")
				p=$(sed -n 's/.* bytes in \([0-9.]*\) secs.*/\1/p' "$RUN_BASE.out")
				[ -z "$p" ] || PAUSE[jcmd_dump]+="$(calc '%.0f' 'a * 1000' "$p") "
				echo "      jcmd says: $(grep -o 'Heap dump file created.*' "$RUN_BASE.out")"
				timed hs_open "$HS" --no-index -c ':info' "$DUMPF"
				if [ "$RUN_OK" = 1 ]; then DUMP_OBJS=$(awk '$1 == "objects" { print $2 }' "$RUN_BASE.out"); fi
			elif [ "$RUN_OK" = 1 ]; then
				fail "jcmd_dump run $i: $DUMPF was not written ($RUN_BASE.out)"
			fi
			[ "$i" = "$RS" ] || rm -f "$DUMPF"
		fi
	done
done
# Dump + open, pair by pair.
TOTAL_DUMP=$(paste -d' ' <(printf '%s\n' ${WALL[jcmd_dump]:-}) <(printf '%s\n' ${WALL[hs_open]:-}) |
	awk 'NF == 2 { printf "%d ", $1 + $2 }')

echo "== checks: the snapshot and the last dump give the same Order rows and status-7 count"
CHECKQ=(':histogram Order --retained' "$COUNT")
printf ':refresh\n%s\n%s\n:histogram Order\n' "${CHECKQ[@]}" >"$L/check_snap.hsh"
printf '%s\n%s\n' "${CHECKQ[@]}" >"$L/check_dump.hsh"
timed check_snap "$HS" --echo --format csv -f "$L/check_snap.hsh" "$BP"
SNAP_ORDER=$(answer "$RUN_BASE.out" 2 | grep '^Order,' || true)
SNAP_K7=$(answer "$RUN_BASE.out" 3)
LIVE_ORDER=$(answer "$RUN_BASE.out" 4 | grep '^Order,' || true)
if [ -s "$DUMPF" ]; then
	timed check_dump "$HS" --no-index --echo --format csv -f "$L/check_dump.hsh" "$DUMPF"
	DUMP_ORDER=$(answer "$RUN_BASE.out" 1 | grep '^Order,' || true)
	DUMP_K7=$(answer "$RUN_BASE.out" 2)
	rm -f "$DUMPF"
else
	DUMP_ORDER="(no dump)"; DUMP_K7="(no dump)"
fi
check ":histogram Order --retained (class,instances,shallow_bytes,retained_bytes), snapshot = jcmd dump" "$DUMP_ORDER" "$SNAP_ORDER"
check "Orders in the snapshot = LiveBench's count" "$NORD" "$(cut -d, -f2 <<<"$SNAP_ORDER")"
check "status-7 Orders counted on the snapshot = planted" "$K7" "$SNAP_K7"
check "status-7 Orders counted on the jcmd dump = planted" "$K7" "$DUMP_K7"
check "live :histogram Order (agent, after the snapshot) = the snapshot's instances and bytes" \
	"$(cut -d, -f1-3 <<<"$SNAP_ORDER")" "$LIVE_ORDER"

fi

# ---------------------------------------------------------------- 5. analyses inside the JVM
declare -A LANS LSNAP LDUMP LTOT	# per listing: the answers inside the JVM, on a snapshot, on a dump; dump + open ms
if section 5; then
echo "== 5. the listings of queries/ inside the JVM vs on a snapshot vs jcmd GC.heap_dump + open, $RL runs each, interleaved"
for q in $LISTINGS; do
	{ echo ':timer on'; cat "queries/$q.hq"; } >"$L/$q.live.hsh"
	{ echo ':timer on'; echo ':live off'; cat "queries/$q.hq"; } >"$L/$q.snap.hsh"
	for ((i = 1; i <= RL; i++)); do
		for w in $(case $((i % 3)) in 1) echo "live snap dump" ;; 2) echo "snap dump live" ;; *) echo "dump live snap" ;; esac); do
			case $w in
			live)
				timed "an_live_$q" "$HS" --format csv -f "$L/$q.live.hsh" "$BP"
				[ "$RUN_OK" = 1 ] || continue
				# "inside JVM P, no snapshot taken: N heap walk(s), the JVM paused X ms (Y ms of it a full GC), Z ms in all"
				p=$(sed -n 's/.*no snapshot taken: .* the JVM paused \([0-9]*\) ms (\([0-9]*\) ms of it.*/\1 \2/p' "$RUN_BASE.err" | tail -n 1)
				if [ -z "$p" ]; then
					fail "an_live_$q run $i: not evaluated inside the JVM ($RUN_BASE.err)"
				else
					PAUSE[an_live_$q]+="${p%% *} "; PAUSE[an_gc_$q]+="${p#* } "
					echo "      heapsh says: $(grep -h 'no snapshot taken' "$RUN_BASE.err" | tail -n 1)"
				fi
				a=$(tr '\n' ' ' <"$RUN_BASE.out")
				[ -n "${LANS[$q]:-}" ] || LANS[$q]=$a
				[ "$a" = "${LANS[$q]}" ] || fail "an_live_$q run $i: answered '$a', earlier '${LANS[$q]}'"
				;;
			snap)
				timed "an_snap_$q" "$HS" --format csv -f "$L/$q.snap.hsh" "$BP"
				[ "$RUN_OK" = 1 ] || continue
				LSNAP[$q]=$(tr '\n' ' ' <"$RUN_BASE.out")
				;;
			dump)
				rm -f "$DUMPF"
				timed "an_jcmd_$q" jcmd "$BP" GC.heap_dump "$PWD/$DUMPF"
				[ "$RUN_OK" = 1 ] && [ -s "$DUMPF" ] || { fail "an_jcmd_$q run $i: no dump"; continue; }
				timed "an_open_$q" "$HS" --no-index --format csv -f "queries/$q.hq" "$DUMPF"
				rm -f "$DUMPF"
				[ "$RUN_OK" = 1 ] || continue
				LDUMP[$q]=$(tr '\n' ' ' <"$RUN_BASE.out")
				;;
			esac
		done
	done
	# dump + open, pair by pair
	LTOT[$q]=$(paste -d' ' <(printf '%s\n' ${WALL[an_jcmd_$q]:-}) <(printf '%s\n' ${WALL[an_open_$q]:-}) |
		awk 'NF == 2 { printf "%d ", $1 + $2 }')
	check "$q inside the JVM = on a snapshot" "${LSNAP[$q]:-}" "${LANS[$q]:-}"
	check "$q inside the JVM = on a jcmd dump" "${LDUMP[$q]:-}" "${LANS[$q]:-}"
done
fi

# ---------------------------------------------------------------- after the snapshots
if section 2; then
echo "== the same JVM after the snapshots: histogram ($R runs each, interleaved) and push-down ($R runs)"
section 1 && for ((i = 1; i <= R; i++)); do hist_round _after "$i"; done
section 3 && for ((i = 1; i <= R; i++)); do push_round _after; done
fi
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
stop big "$BP" "$BFD"

# ================================================================ 4. idle agent
if ! section 4; then GN=0; fi
echo "== 4. throughput of LiveBench workload: none / dyn (attached later) / start (-agentpath), $GN generations of three new JVMs"
WFLAGS=(-Xms256m -Xmx256m -cp "$L/java")
OPS=$LOG/ops.tsv	# generation phase round config interval ops/s
: >"$OPS"
SEQ=0
turn() {	# turn GEN PHASE ROUND CONFIG: one turn of WN intervals of WMS ms
	local g=$1 ph=$2 r=$3 c=$4 fdv="WF_$4" i
	SEQ=$((SEQ + 1))
	echo "run $SEQ $WN $WMS" >&"${!fdv}"
	for ((i = 0; i < (WN * WMS) / 50 + 1200; i++)); do
		grep -q "^done $SEQ\$" "$LOG/w_$c.$g.out" && break
		sleep 0.05
	done
	grep -q "^done $SEQ\$" "$LOG/w_$c.$g.out" || { fail "workload $c (generation $g): no answer to 'run $SEQ'"; return 0; }
	awk -v s="$SEQ" -v g="$g" -v p="$ph" -v r="$r" -v c="$c" '$1 == "ops" && $2 == s { print g, p, r, c, $3, $4 }' \
		"$LOG/w_$c.$g.out" >>"$OPS"
}
rmed() {	# rmed GEN PHASE ROUND CONFIG: the median ops/s of that turn
	median "$(awk -v g="$1" -v p="$2" -v r="$3" -v c="$4" '$1 == g && $2 == p && $3 == r && $4 == c { print $6 }' "$OPS")"
}
rounds() {	# rounds GEN PHASE N: N rounds, each JVM one turn, the order rotated
	local g=$1 ph=$2 n=$3 r k
	local cs=(none dyn start)
	for ((r = 1; r <= n; r++)); do
		for ((k = 0; k < 3; k++)); do turn "$g" "$ph" "$r" "${cs[(r + k) % 3]}"; done
		printf '   generation %d phase %s round %d: none %s, dyn %s, start %s ops/s (median of %d intervals each)\n' \
			"$g" "$ph" "$r" "$(rmed "$g" "$ph" "$r" none)" "$(rmed "$g" "$ph" "$r" dyn)" "$(rmed "$g" "$ph" "$r" start)" "$WN"
	done
}
# agent_cpu PID: "TICKS SWITCHES" of its heapsh-agent thread (utime + stime in
# clock ticks; voluntary + involuntary context switches)
agent_cpu() {
	local f t
	f=$(grep -l '^heapsh-agent$' /proc/"$1"/task/*/comm 2>/dev/null | head -n 1) || true
	[ -n "$f" ] || { echo "n/a n/a"; return; }
	t=${f%/comm}
	echo "$(awk '{ sub(/.*\) /, ""); print $12 + $13 }' "$t/stat") $(awk '/ctxt_switches/ { n += $2 } END { print n }' "$t/status")"
}
declare -A ACPU ASW
ACPU[dyn]=0; ACPU[start]=0; ASW[dyn]=0; ASW[start]=0
TB_S=0; AG_THREADS=
HZ=$(getconf CLK_TCK)
for ((g = 1; g <= GN; g++)); do
	# The three warm up together; then they take turns.
	launch "w_none.$g" "${WFLAGS[@]}" LiveBench workload; WB_none=$JBG; WF_none=$JFD
	launch "w_dyn.$g" "${WFLAGS[@]}" LiveBench workload; WB_dyn=$JBG; WF_dyn=$JFD
	launch "w_start.$g" -agentpath:"$AGENT" "${WFLAGS[@]}" LiveBench workload; WB_start=$JBG; WF_start=$JFD
	for c in none dyn start; do bv="WB_$c"; await "w_$c.$g" "${!bv}"; done
	echo "   generation $g: pids none $WB_none, dyn $WB_dyn, start $WB_start; phase A (before attaching): $RA rounds of $WN x $WMS ms per JVM"
	rounds "$g" A "$RA"
	timed attach_dyn "$HS" -c ':info' "$WB_dyn"
	timed attach_start "$HS" -c ':info' "$WB_start"
	[ -S "/tmp/.heapsh-$WB_dyn/agent.sock" ] || fail "generation $g: dyn's agent socket is missing after the attach"
	AG_THREADS+="$(grep -l '^heapsh-agent$' /proc/"$WB_dyn"/task/*/comm 2>/dev/null | wc -l) "
	read -r c0d s0d < <(agent_cpu "$WB_dyn"); read -r c0s s0s < <(agent_cpu "$WB_start")
	t0=$(date +%s%N)
	echo "   generation $g: phase B (attached and idle): $RB rounds"
	rounds "$g" B "$RB"
	read -r c1d s1d < <(agent_cpu "$WB_dyn"); read -r c1s s1s < <(agent_cpu "$WB_start")
	TB_S=$(calc '%.1f' 'c + (a - b) / 1e9' "$(date +%s%N)" "$t0" "$TB_S")
	ACPU[dyn]=$(calc '%d' 'c + a - b' "$c1d" "$c0d" "${ACPU[dyn]}"); ASW[dyn]=$(calc '%d' 'c + a - b' "$s1d" "$s0d" "${ASW[dyn]}")
	ACPU[start]=$(calc '%d' 'c + a - b' "$c1s" "$c0s" "${ACPU[start]}"); ASW[start]=$(calc '%d' 'c + a - b' "$s1s" "$s0s" "${ASW[start]}")
	for c in none dyn start; do fv="WF_$c"; bv="WB_$c"; stop "w_$c.$g" "${!bv}" "${!fv}"; done
done
LOAD2=$(cut -d' ' -f1-3 /proc/loadavg)
agent_line() {	# agent_line C: the agent thread's CPU during the phases B
	echo "$(calc '%.0f' 'a * 1000 / b' "${ACPU[$1]}" "$HZ") ms CPU and ${ASW[$1]} context switches in $TB_S s"
}

# ratios GEN PHASE CONFIG: the per-round ratios CONFIG / none (median of each
# turn's intervals), GEN "all" for every generation.
ratios() {
	awk -v g="$1" -v p="$2" -v c="$3" '
		function med(s,   a, n, i, j, v) {
			n = split(s, a, " ")
			for (i = 2; i <= n; i++) { v = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > v; j--) a[j+1] = a[j]; a[j+1] = v }
			return (n % 2) ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
		}
		(g == "all" || $1 == g) && $2 == p && $4 == c { x[$1 " " $3] = x[$1 " " $3] " " $6 }
		(g == "all" || $1 == g) && $2 == p && $4 == "none" { y[$1 " " $3] = y[$1 " " $3] " " $6 }
		END { for (k in x) if (k in y) printf "%.4f ", med(x[k]) / med(y[k]) }' "$OPS"
}
allops() { awk -v p="$1" -v c="$2" '$2 == p && $4 == c { printf "%s ", $6 }' "$OPS"; }
declare -A OPSMED OPSN RAT RATMED RATSP GR
for ph in A B; do
	for c in none dyn start; do
		OPSMED[$ph$c]=$(median "$(allops $ph $c)"); OPSN[$ph$c]=$(wc -w <<<"$(allops $ph $c)")
	done
	for c in dyn start; do
		RAT[$ph$c]=$(ratios all $ph $c); RATMED[$ph$c]=$(calc '%.4f' 'a' "$(median "${RAT[$ph$c]}")"); RATSP[$ph$c]=$(spread "${RAT[$ph$c]}")
		for ((g = 1; g <= GN; g++)); do GR[$g$ph$c]=$(calc '%.4f' 'a' "$(median "$(ratios $g $ph $c)")"); done
	done
done
# dyn, net of its own phase A: each phase-B ratio over its generation's phase-A median.
NDID=""; GDID=""; CTRL=""
for ((g = 1; g <= GN; g++)); do
	for v in $(ratios $g B dyn); do NDID+="$(calc '%.4f' 'a / b' "$v" "${GR[${g}Adyn]}") "; done
	GDID+="$(calc '%.4f' 'a / b' "${GR[${g}Bdyn]}" "${GR[${g}Adyn]}") "
	CTRL+="${GR[${g}Adyn]} "
done
GBS=""
for ((g = 1; g <= GN; g++)); do GBS+="${GR[${g}Bstart]} "; done
read -r DM DLO DHI DN <<<"$(tci "$GDID")"
read -r SM SLO SHI SN <<<"$(tci "$GBS")"
DID=$(calc '%.4f' 'a' "$(median "$NDID")")
DIDCI=$(boot_ci "$NDID")
read -r CMIN _ _ CMAX _ <<<"$(spread "$CTRL")"
cost() { calc '%.2f' '(1 - a) * 100' "$1"; }
ratio_line() {	# ratio_line PH C: "median r (cost x %), 95 % CI, IQR q1-q3, min-max, n rounds"
	local mn q1 q3 mx n
	read -r mn q1 q3 mx n <<<"${RATSP[$1$2]}"
	echo "${RATMED[$1$2]} (cost $(cost "${RATMED[$1$2]}") %), bootstrap 95 % CI over rounds $(boot_ci "${RAT[$1$2]}"); IQR $q1-$q3, min-max $mn-$mx; $n rounds"
}

# ================================================================ the report
yes_no() { case $1 in 1) echo "**met**";; 0) echo "**not met**";; 4) echo "**not resolved** at this noise (the 95 % interval contains both 0.99 and ratios above it)";; *) echo n/a;; esac; }
lt() { calc '%d' '(a < b) ? 1 : 0' "$1" "$2"; }
le() { calc '%d' '(a <= b) ? 1 : 0' "$1" "$2"; }
row() {	# row LABEL NAME [extra]: a measurement table row
	local n=$2
	echo "| $1 | $(s2 "$(med "$n")") | $(s2 "$(medc "$n")") | $(s2 "$(meds "$n")") | $(mb "$(medr "$n")") | $(runs "$n") | $(list "WALL[$n]") | ${SPN[$n]:-} |"
}
HDR="| measurement | median wall s | median command s (:timer) | median JVM safepoints s | median peak RSS MB | runs | wall ms per run | safepoints of the last run (ms) |
|---|---:|---:|---:|---:|---:|---|---|"

h_hs=$(med hs_hist); h_j=$(med jcmd_hist); h_hsc=$(medc hs_hist)
ok1=$(le "$h_hs" "$h_j")
AFTERP=$(median "$(paste -d' ' <(printf '%s\n' ${CMD[hs_snap]:-}) <(printf '%s\n' ${SP[hs_snap]:-}) | awk 'NF == 2 { printf "%.1f ", $1 - $2 }')")
snap=$(med hs_snap); dump=$(med jcmd_dump); opn=$(med hs_open); tdump=$(median "$TOTAL_DUMP")
sp_snap=$(meds hs_snap); sp_dump=$(meds jcmd_dump)
qe=$(medc q_exists); qc=$(medc q_count); qew=$(med q_exists); qcw=$(med q_count)
qmax=$(calc '%s' '(a > b) ? a : b' "$qe" "$qc"); qmaxw=$(calc '%s' '(a > b) ? a : b' "$qew" "$qcw")
fastest_dump=$(calc '%s' '(a < b) ? a : b' "$dump" "$(medc hs_snap)")
ok3a=$(lt "$qmax" 1000); ok3b=$(lt "$qmax" "$fastest_dump")
WRONG=$(printf '%s\n' ${FAILURES[@]+"${FAILURES[@]}"} | grep -c 'push-down \(count\|exists\)[^:]*: answered' || true)
# Over generations (each has new JVMs): met if the whole 95 % interval of the
# mean ratio is above 0.99, not met if it is all below, otherwise not resolved.
verdict3() { calc '%d' '(a > 0.99) ? 1 : (b < 0.99) ? 0 : 4' "$1" "$2"; }
ok4d=$(verdict3 "$DLO" "$DHI"); ok4s=$(verdict3 "$SLO" "$SHI")

{
echo "# bench/live.sh, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "machine: $MACHINE; load average $LOAD0 at the start, $LOAD1 after 1-3, $LOAD2 at the end (shared machine: other builds and tests ran meanwhile)"
echo "java: $JAVA_V"
echo "binaries: $BIN_ID"
echo
echo "## The live JVM"
echo
echo "\`java -Xms$XMX -Xmx$XMX -Xlog:safepoint:file=... LiveBench wait $MB\`: $NORD Orders (\`long id; int status; double amount; String customer\`), $K7 planted with status 7; about $OBJS objects of the program; $LIVEB bytes used after a full GC ($(calc '%.0f' 'a / 1048576' "$LIVEB") MiB; heapsh :info says heap used $HEAPUSED)."
echo "Snapshot: ${SNAP_OBJS:-n/a} objects; jcmd dump: ${DUMP_OBJS:-n/a} objects, $DUMPB bytes."
echo "JVM pauses are the safepoints in the JVM's own log (-Xlog:safepoint, Total = reaching + cleanup + at the safepoint) during each command."
echo "First attach (heapsh -c ':info' PID, loads libheapsh_agent.so): $ATTACH1 ms wall."
echo
echo "## Measurements (medians; the runs of each pair alternate)"
echo
echo "$HDR"
row "1. heapsh -f (:timer on, :histogram --top 20) PID" hs_hist
row "1. jcmd PID GC.class_histogram" jcmd_hist
row "1. heapsh -f (:timer on, :histogram --top 20 --via agent) PID: the agent's IterateThroughHeap" hs_hist_agent
row "2. heapsh -f (:timer on, :refresh) PID: snapshot (HotSpot's dumper into a private file), loaded, removed" hs_snap
row "2. jcmd PID GC.heap_dump FILE" jcmd_dump
row "2. heapsh --no-index -c ':info' FILE (opening that dump)" hs_open
row "3. heapsh -f (:timer on, objects.exists(...)) PID" q_exists
row "3. heapsh -f (:timer on, objects.count(...)) PID" q_count
row "3. heapsh -f (:timer on, objects.exists(... it.status = 11)) PID: no match, so the whole walk" q_exists_no
row "3. for comparison: the same count walking the references from the roots (FollowReferences, no GC; bench/live_instances.py, flag bit 1 clear; heapsh does not use it)" q_refs
echo
echo "Push-down: $QINFO (count run 1)."
echo
echo "Snapshot-and-load versus dump-and-open:"
echo
echo "| | heapsh snapshot (:refresh) | jcmd GC.heap_dump + heapsh open | ratio heapsh / jcmd |"
echo "|---|---:|---:|---:|"
echo "| total wall s (median) | $(s2 "$snap") | $(s2 "$tdump") (dump $(s2 "$dump") + open $(s2 "$opn")) | $(calc '%.1fx' 'a / b' "$snap" "$tdump") |"
echo "| JVM paused s: safepoint log (median) | $(s2 "$sp_snap") | $(s2 "$sp_dump") | $(calc '%.1fx' 'a / b' "$sp_snap" "$sp_dump") |"
echo "| JVM paused s: as the tools say (median) | $(s2 "$(medp hs_snap)") (heapsh: only with --via agent) | $(s2 "$(medp jcmd_dump)") (jcmd: 'Heap dump file created ... in N secs') | |"
echo "| heapsh after the pause s (median): writing the dump out, loading it = :refresh command - safepoints | $(s2 "$AFTERP") | open $(s2 "$opn") | |"
echo "| runs (wall ms) | $(list 'WALL[hs_snap]') | ${TOTAL_DUMP% } | |"
echo "| heapsh peak RSS MB (median) | $(mb "$(medr hs_snap)") | $(mb "$(medr hs_open)") (open) | |"
echo
echo "Checks (one more snapshot session and the last dump, untimed):"
echo
printf -- '- %s\n' "${CHK[@]}"
echo
echo "### The same JVM after the snapshots"
echo
echo "$HDR"
row "1. heapsh :histogram --top 20, after the snapshots" hs_hist_after
row "1. jcmd GC.class_histogram, after the snapshots" jcmd_hist_after
row "1. heapsh :histogram --top 20 --via agent, after the snapshots" hs_hist_agent_after
row "3. heapsh objects.exists(...), after the snapshots" q_exists_after
row "3. heapsh objects.count(...), after the snapshots" q_count_after
row "3. heapsh objects.exists(... status = 11) (no match), after the snapshots" q_exists_no_after
row "3. FollowReferences walk (client), after the snapshots" q_refs_after
echo
echo "## 4. Throughput of an idle agent (LiveBench workload, -Xms256m -Xmx256m)"
echo
echo "$GN generations, one after the other, of three new JVMs that warm up together and then take turns" \
     "($WN intervals of $WMS ms per turn, the order rotated each round; the other two idle, blocked reading stdin):" \
     "none (never attached), dyn (no agent in phase A; \`heapsh -c ':info' PID\` before phase B loads the agent through the attach mechanism, then idle)," \
     "start (-agentpath:libheapsh_agent.so; \`heapsh -c ':info' PID\` before phase B connects, then idle). $RA rounds in phase A, $RB in phase B, per generation." \
     "Ratio: per round, the median ops/s of the turn of X over that of none."
echo "Agent threads named heapsh-agent in dyn, per generation: ${AG_THREADS% }; attach wall (median): dyn $(med attach_dyn) ms (loads the agent), start $(med attach_start) ms (connects)."
echo
echo "| phase | JVM | median ops/s | intervals | ratio to none, all rounds: median (cost), 95 % CI, IQR, min-max |"
echo "|---|---|---:|---:|---|"
for ph in A B; do
	echo "| $ph | none | ${OPSMED[${ph}none]} | ${OPSN[${ph}none]} | |"
	echo "| $ph | dyn | ${OPSMED[${ph}dyn]} | ${OPSN[${ph}dyn]} | $(ratio_line $ph dyn) |"
	echo "| $ph | start | ${OPSMED[${ph}start]} | ${OPSN[${ph}start]} | $(ratio_line $ph start) |"
done
echo
echo "Per generation (medians of its rounds):"
echo
echo "| generation | A: dyn / none (both without agent) | A: start / none | B: dyn / none | B: start / none | dyn net of its phase A (B / A) |"
echo "|---:|---:|---:|---:|---:|---:|"
for ((g = 1; g <= GN; g++)); do
	echo "| $g | ${GR[${g}Adyn]} | ${GR[${g}Astart]} | ${GR[${g}Bdyn]} | ${GR[${g}Bstart]} | $(calc '%.4f' 'a / b' "${GR[${g}Bdyn]}" "${GR[${g}Adyn]}") |"
done
echo
echo "- dyn, net of its own phase A, per generation (last column): mean $DM (cost $(cost "$DM") %), 95 % t-interval $DLO-$DHI over $DN generations; over all rounds (each phase-B round over its generation's phase-A median): median $DID, bootstrap 95 % CI $DIDCI (rounds are not independent of their generation: this one is too narrow)."
echo "- start / none in phase B, per generation: mean $SM (cost $(cost "$SM") %), 95 % t-interval $SLO-$SHI over $SN generations."
echo "- Two JVMs without any agent (phase A, dyn / none) differ by themselves: per generation $CTRL(range $CMIN-$CMAX). start is compared across JVMs, so its ratio carries that much besides any cost of the agent."
echo "- The agent thread itself during the phases B: dyn $(agent_line dyn); start $(agent_line start)."
echo "- Verdicts use the generations (new JVMs each): met when the whole 95 % interval of the mean ratio is above 0.99, not met when it is all below, not resolved otherwise."
echo
echo "## 5. Analyses inside the JVM (the listings of queries/)"
echo
echo "Each listing: inside the JVM (\`heapsh -f (:timer on, LISTING) PID\`, which attaches, evaluates with no snapshot and detaches); on a snapshot (\`:live off\` first: HotSpot's dumper into a private file, loaded, evaluated); \`jcmd PID GC.heap_dump FILE\` then \`heapsh --no-index -f LISTING FILE\`. $RL runs of each, interleaved (order rotated). Wall: the whole process (medians); paused: the JVM's safepoints during it (medians); reference: the untagged FollowReferences walk of 3, JVM paused $(s2 "$(meds q_refs)") s (median)."
echo
echo "| listing | inside the JVM: wall s | paused s (log) | heapsh says paused s (of it full GC) | on a snapshot: wall s | paused s | jcmd dump + open: wall s (dump + open) | paused s | answer inside the JVM | = snapshot, = dump |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"
for q in $LISTINGS; do
	echo "| $q | $(s2 "$(med an_live_$q)") | $(s2 "$(meds an_live_$q)") | $(s2 "$(medp an_live_$q)") ($(s2 "$(medp an_gc_$q)")) | $(s2 "$(med an_snap_$q)") | $(s2 "$(meds an_snap_$q)") | $(s2 "$(median "${LTOT[$q]:-}")") ($(s2 "$(med an_jcmd_$q)") + $(s2 "$(med an_open_$q)")) | $(s2 "$(meds an_jcmd_$q)") | ${LANS[$q]:-n/a} | $( [ "${LANS[$q]:-x}" = "${LSNAP[$q]:-y}" ] && echo yes || echo NO), $( [ "${LANS[$q]:-x}" = "${LDUMP[$q]:-y}" ] && echo yes || echo NO) |"
done
echo
echo "Runs (wall ms; paused ms from the log):"
echo
for q in $LISTINGS; do
	echo "- $q: inside $(list "WALL[an_live_$q]") (paused $(list "SP[an_live_$q]")); snapshot $(list "WALL[an_snap_$q]") (paused $(list "SP[an_snap_$q]")); dump + open ${LTOT[$q]:-} (paused $(list "SP[an_jcmd_$q]"))"
done
echo
echo "## Targets"
echo
echo "| target | measured | verdict |"
echo "|---|---|---|"
echo "| 1. live histogram no slower than jcmd GC.class_histogram (whole process, median of $(runs hs_hist)) | heapsh $(s2 "$h_hs") s (command $(s2 "$h_hsc") s, JVM paused $(s2 "$(meds hs_hist)") s) vs jcmd $(s2 "$h_j") s (JVM paused $(s2 "$(meds jcmd_hist)") s): $(calc '%.2fx' 'a / b' "$h_hs" "$h_j"); after the snapshots $(s2 "$(med hs_hist_after)") s vs $(s2 "$(med jcmd_hist_after)") s; the agent's own histogram (--via agent) $(s2 "$(med hs_hist_agent)") s (JVM paused $(s2 "$(meds hs_hist_agent)") s) | $(yes_no "$ok1") |"
echo "| 2. snapshot-and-load versus dump-and-open (no target set) | $(s2 "$snap") s vs $(s2 "$tdump") s total ($(calc '%.1fx' 'a / b' "$snap" "$tdump")); JVM paused $(s2 "$sp_snap") s vs $(s2 "$sp_dump") s ($(calc '%.1fx' 'a / b' "$sp_snap" "$sp_dump")) | - |"
echo "| 3. push-down exists under 1 s (the command, :timer) | $(s2 "$qe") s (whole process $(s2 "$qew") s, JVM paused $(s2 "$(meds q_exists)") s); with no match (status = 11, the whole walk) $(s2 "$(medc q_exists_no)") s; after the snapshots $(s2 "$(medc q_exists_after)") s | $(yes_no "$(lt "$qe" 1000)") |"
echo "| 3. push-down count under 1 s (the command, :timer) | $(s2 "$qc") s (whole process $(s2 "$qcw") s, JVM paused $(s2 "$(meds q_count)") s); after the snapshots $(s2 "$(medc q_count_after)") s; the FollowReferences walk heapsh does not use: $(s2 "$(med q_refs)") s | $(yes_no "$(lt "$qc" 1000)") |"
echo "| 3. push-down faster than any full dump | slower of the two $(s2 "$qmax") s vs jcmd GC.heap_dump $(s2 "$dump") s and the snapshot's :refresh $(s2 "$(medc hs_snap)") s | $(yes_no "$ok3b") |"
echo "| 3. right answers: count = planted ($K7), exists true, the no-match exists false | $WRONG wrong answers in $(( $(runs q_exists) + $(runs q_count) + $(runs q_exists_no) + $(runs q_exists_after) + $(runs q_count_after) + $(runs q_exists_no_after) )) runs | $( [ "$WRONG" = 0 ] && echo '**met**' || echo '**not met**') |"
echo "| 4. idle agent costs under 1 % (dyn: attached, then idle; net of its own phase A) | mean over $DN generations $DM (cost $(cost "$DM") %), 95 % interval $DLO-$DHI; per generation ${GDID% }; median over all $(wc -w <<<"$NDID") rounds $DID; agent thread $(agent_line dyn) | $(yes_no "$ok4d") |"
echo "| 4. idle agent costs under 1 % (start: -agentpath, phase B, against none) | mean over $SN generations $SM (cost $(cost "$SM") %), 95 % interval $SLO-$SHI; per generation ${GBS% }; median over all rounds ${RATMED[Bstart]}; two JVMs without an agent differ by $CMIN-$CMAX; agent thread $(agent_line start) | $(yes_no "$ok4s") |"
if section 5; then
	refp=$(meds q_refs)
	for q in $LISTINGS; do
		lp=$(meds an_live_$q); lw=$(med an_live_$q)
		echo "| 5. $q inside the JVM: paused no longer than the untagged FollowReferences walk + 20 % ($(s2 "$(calc '%.0f' 'a * 1.2' "$refp")") s) | paused $(s2 "$lp") s ($(calc '%.2fx' 'a / b' "$lp" "$refp") the walk); snapshot then evaluate $(s2 "$(meds an_snap_$q)") s; jcmd dump $(s2 "$(meds an_jcmd_$q)") s | $(yes_no "$(le "$lp" "$(calc '%.0f' 'a * 1.2' "$refp")")") |"
		echo "| 5. $q inside the JVM: done in under 5 s | $(s2 "$lw") s whole process (snapshot then evaluate $(s2 "$(med an_snap_$q)") s; dump, open, evaluate $(s2 "$(median "${LTOT[$q]:-}")") s) | $(yes_no "$(lt "$lw" 5000)") |"
	done
fi
failures_md
} >"$REPORT"

# ---------------------------------------------------------------- summary.md
if [ -f "$SUM" ]; then
	{
	echo "### Live JVMs (issue 6, bench/live.sh; the full report is in $REPORT)"
	echo
	echo "$(date -u '+%Y-%m-%d'), $MACHINE; a JVM with $(calc '%.0f' 'a / 1048576' "$LIVEB") MiB live ($NORD Orders). Binaries: $BIN_ID."
	echo
	sed -n '/^## Targets/,$p' "$REPORT" | sed '1,2d'
	echo
	} | summary_section bench/live.sh "$SUM"
fi

echo
echo "== report (also in $REPORT$( [ -f "$SUM" ] && echo "; a section appended to $SUM"))"
echo
cat "$REPORT"
[ ${#FAILURES[@]} -eq 0 ] || exit 1
