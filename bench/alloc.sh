#!/usr/bin/env bash
# bench/alloc.sh - what recording allocations costs (issue 13): heapsh's agent
# loaded at start-up in its recording modes, against no agent and against JDK
# Flight Recorder, on real workloads nobody here wrote, in one run with the
# repetitions interleaved. Run from the repository root (by `make bench`, or on
# its own).
#
# Workloads (BENCH_WORKLOADS, default "javac h2"):
#   javac  The JDK's javac compiling part of java.base from the JDK's own
#          sources: the directories ALLOC_JAVAC_DIRS of java.base in src.zip
#          (default java/util, about 350 files and 25 s on this 2-core
#          machine), unpacked once into build/bench/alloc/src, compiled with
#            javac -J-Xmx$ALLOC_XMX --patch-module java.base=SRC -d OUT
#                  -nowarn -XDignore.symbol.file -implicit:none @FILES
#          (the rest of java.base comes from the JDK's own image). A first,
#          untimed compile finds the files that do not compile against the
#          running JDK (sources of another update release; see below) and
#          leaves them out; it also sets the number of class files every
#          timed run must write. The JVM options below go to javac's JVM
#          with -J.
#          src.zip: ALLOC_SRC_ZIP, else ALLOC_JDK/lib/src.zip, else the one
#          unpacked earlier into build/bench/alloc/srcdeb, else (a JDK 17 whose
#          src.zip is missing: Debian's openjdk-17-jdk without
#          openjdk-17-source) `apt-get download openjdk-17-source` into
#          build/bench/alloc/srcdeb and its src.zip, which may be of a later
#          17 update than the JDK (hence the files left out).
#   h2     bench/java/H2Load.java on an in-memory H2 database (Debian's
#          libh2-java, ALLOC_H2_JAR, default /usr/share/java/h2.jar):
#          ALLOC_H2_ROWS rows (default 500000) inserted through JDBC, then
#          aggregates, point lookups, index scans and an update (about 30 s
#          here). Every run must print the same checksum. Skipped, with a
#          note, when the jar is missing.
#
# Configurations (BENCH_CONFIGS, default "none sampled exact nolive accounts stacks jfr"):
#   none      no agent
#   sampled   -agentpath:AGENT=alloc=524288            (JVMTI sampling, mean 512 KiB)
#   sampled4k -agentpath:AGENT=alloc=4096: 128 times the samples, so that the
#             cost of a sample can be measured (not in the default list)
#   exact     -agentpath:AGENT=alloc=exact: exact by bytecode instrumentation,
#             counts per site, live counts from a sample (the default)
#   nolive    -agentpath:AGENT=alloc=exact,live=no: the same, no live counts
#   liveall   -agentpath:AGENT=alloc=exact,live=all: every object followed
#             (not in the default list)
#   accounts  -agentpath:AGENT=alloc=exact,accounts=P,depth=1
#             (P = com.sun.tools.javac.* for javac, org.h2.* for h2): the
#             default with memory accounts
#   stacks    -agentpath:AGENT=alloc=exact,depth=64
#   events    -agentpath:AGENT=alloc=exact,via=jvmti,accounts=P,depth=1: exact
#             with accounts by JVMTI events, for comparison (not in the default
#             list: 7 to 10 times as long as none)
#   jfr       -XX:StartFlightRecording=settings=profile,filename=F.jfr: the
#             recording `jcmd PID JFR.start settings=profile` makes, from
#             start-up; profile.jfc enables jdk.ObjectAllocationSample
#             (throttled to 300/s). The events in each file are counted (jfr
#             summary): a run without any is a failure.
# Order: repetition 1: javac none, javac sampled, ..., h2 none, ...; then
# repetition 2, and so on (A B C D E A B C D E ...).
#
# Per run (the agent's runs with HEAPSH_AGENT_DEBUG=1, so that it logs the
# allocations or samples it recorded at exit, listed in the report): CPU time (user + system of the JVM and anything it started, from
# GNU time's rusage of the waited-for children), wall time and peak RSS.
# Reported: medians, min-max, and ratios to no agent as the median of the
# per-repetition ratios (run i of X / run i of none), with a 95 % t-interval
# of their mean; the issue's targets are judged on CPU time.
#
# Environment:
#   BENCH_RUNS=N            repetitions (default 5)
#   BENCH_CONFIGS="..."     configurations, of the seven above, in run order
#   BENCH_WORKLOADS="..."   workloads, of javac and h2
#   ALLOC_JDK=DIR           the JDK running both workloads (default: the one of
#                           javac on PATH)
#   ALLOC_JAVAC_DIRS="..."  directories of java.base to compile (default
#                           java/util; java/util/concurrent/atomic for a quick try)
#   ALLOC_SRC_ZIP=FILE      the src.zip to unpack them from
#   ALLOC_H2_ROWS=N         rows of the H2 workload (default 500000)
#   ALLOC_H2_JAR=FILE       H2's jar (default /usr/share/java/h2.jar)
#   ALLOC_XMX=SIZE          -Xmx of both workloads (default 2g)
#   ALLOC_TIMEOUT=S         longest single run (default 1800 s)
#   ALLOC_HOLD=N            objects AllocHold keeps for the memory figures
#                           (default 2000000; 0 leaves them out)
#   ALLOC_HOLD_RUNS=N       its runs per configuration (default 3)
#   ALLOC_AGENT=FILE        the agent (default libheapsh_agent.so next to
#                           $HEAPSH, ./heapsh by default; made first with make
#                           when it is ./libheapsh_agent.so); copied to
#                           build/bench/alloc/bin, so a rebuild meanwhile
#                           changes nothing. Needed only by the agent's
#                           configurations.
#
# Output: build/bench/alloc/summary.md (the report, printed at the end), a
# section in build/bench/summary.md (replacing an earlier one), every run's
# stdout, stderr and times in build/bench/alloc/log/. A run that fails (exit
# status, timeout, wrong output, an agent that does not load) is recorded and
# left out of the figures, and the benchmark goes on; the exit status is then
# 1. Targets missed are reported, not failures.

set -euo pipefail
export LC_ALL=C
# The agent logs what it recorded when the JVM exits (docs/agent.md): the report lists it.
export HEAPSH_AGENT_DEBUG=1
cd "$(dirname "$0")/.."
. bench/lib.sh

R=${BENCH_RUNS:-5}
read -r -a CONFIGS <<<"${BENCH_CONFIGS:-none sampled exact nolive accounts stacks jfr}"
read -r -a WORKLOADS <<<"${BENCH_WORKLOADS:-javac h2}"
read -r -a JAVAC_DIRS <<<"${ALLOC_JAVAC_DIRS:-java/util}"
H2_ROWS=${ALLOC_H2_ROWS:-500000}
H2_JAR=${ALLOC_H2_JAR:-/usr/share/java/h2.jar}
XMX=${ALLOC_XMX:-2g}
TMO=${ALLOC_TIMEOUT:-1800}
JDK=${ALLOC_JDK:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}
for v in "$R" "$H2_ROWS" "$TMO"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "bench/alloc.sh: BENCH_RUNS, ALLOC_H2_ROWS and ALLOC_TIMEOUT must be positive integers" >&2; exit 2; }
done
for c in "${CONFIGS[@]}"; do
	case $c in none|sampled|sampled4k|accounts|exact|nolive|liveall|stacks|events|jfr) ;; *) echo "bench/alloc.sh: unknown configuration '$c' in BENCH_CONFIGS (none sampled sampled4k accounts exact nolive liveall stacks events jfr)" >&2; exit 2;; esac
done
for w in "${WORKLOADS[@]}"; do
	case $w in javac|h2) ;; *) echo "bench/alloc.sh: unknown workload '$w' in BENCH_WORKLOADS (javac h2)" >&2; exit 2;; esac
done
[ ${#CONFIGS[@]} -gt 0 ] && [ ${#WORKLOADS[@]} -gt 0 ] || { echo "bench/alloc.sh: no configuration or no workload" >&2; exit 2; }
[ -x "$JDK/bin/java" ] && [ -x "$JDK/bin/javac" ] || { echo "bench/alloc.sh: no JDK at $JDK (set ALLOC_JDK)" >&2; exit 2; }

OUT=build/bench
A=$OUT/alloc
LOG=$A/log
REPORT=$A/summary.md
SUM=$OUT/summary.md
mkdir -p "$A/bin" "$A/java" "$LOG"
rm -f "$LOG"/*
FAILURES=()
fail() { FAILURES+=("$1"); echo "!! FAILED: $1" >&2; }
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
START=$(date -u '+%Y-%m-%d %H:%M UTC')
JDK_VERSION=$("$JDK/bin/java" -version 2>&1 | head -n 1)
NOTES=()	# what the reader should know that is not a failure

GNU_TIME=0
if [ -x /usr/bin/time ] && /usr/bin/time -f '%e %U %S %M' -o /dev/null true 2>/dev/null; then GNU_TIME=1; fi

# ---------------------------------------------------------------- the agent
AGENT=
AGENT_ID="not used (no configuration of the agent selected)"
uses_agent=0
for c in "${CONFIGS[@]}"; do case $c in sampled|sampled4k|accounts|exact|nolive|liveall|stacks|events) uses_agent=1;; esac; done
if [ "$uses_agent" = 1 ]; then
	AGENT_SRC=${ALLOC_AGENT:-$(dirname "${HEAPSH:-./heapsh}")/libheapsh_agent.so}
	if [ "$AGENT_SRC" = ./libheapsh_agent.so ]; then
		make -s libheapsh_agent.so || echo "bench/alloc.sh: make failed; using the agent as it is" >&2
	fi
	if [ -f "$AGENT_SRC" ]; then
		cp "$AGENT_SRC" "$A/bin/agent.tmp" && mv -f "$A/bin/agent.tmp" "$A/bin/libheapsh_agent.so"
		AGENT=$PWD/$A/bin/libheapsh_agent.so
		AGENT_ID="sha256 $(sha256sum "$AGENT" | cut -c1-12), copied from $AGENT_SRC"
		if git rev-parse --git-dir >/dev/null 2>&1; then
			AGENT_ID+="; the working tree was at commit $(git rev-parse --short HEAD)"
			[ -z "$(git status --porcelain -- src Makefile 2>/dev/null)" ] || AGENT_ID+=" with uncommitted changes in src/ or Makefile"
		fi
	else
		fail "no agent at $AGENT_SRC (run 'make' or set ALLOC_AGENT): the configurations of the agent are left out"
		keep=()
		for c in "${CONFIGS[@]}"; do case $c in sampled|sampled4k|accounts|exact|nolive|liveall|stacks|events) ;; *) keep+=("$c");; esac; done
		CONFIGS=(${keep[@]+"${keep[@]}"})
		[ ${#CONFIGS[@]} -gt 0 ] || { echo "bench/alloc.sh: nothing left to run" >&2; exit 1; }
	fi
fi

# opts WORKLOAD CONFIG RUN: the JVM options of CONFIG, one a line.
opts() {
	case $2 in
		none) ;;
		sampled) echo "-agentpath:$AGENT=alloc=524288" ;;
		sampled4k) echo "-agentpath:$AGENT=alloc=4096" ;;
		accounts) echo "-agentpath:$AGENT=alloc=exact,accounts=$([ "$1" = javac ] && echo 'com.sun.tools.javac.*' || echo 'org.h2.*'),depth=1" ;;
		exact) echo "-agentpath:$AGENT=alloc=exact" ;;
		nolive) echo "-agentpath:$AGENT=alloc=exact,live=no" ;;
		liveall) echo "-agentpath:$AGENT=alloc=exact,live=all" ;;
		stacks) echo "-agentpath:$AGENT=alloc=exact,depth=64" ;;
		events) echo "-agentpath:$AGENT=alloc=exact,via=jvmti,accounts=$([ "$1" = javac ] && echo 'com.sun.tools.javac.*' || echo 'org.h2.*'),depth=1" ;;
		jfr) echo "-XX:StartFlightRecording=settings=profile,filename=$PWD/$LOG/$1.jfr.$3.jfr" ;;
	esac
}
# shown OPTS: the options as the report shows them (paths shortened).
shown() { sed -e "s|$PWD/$A/bin/libheapsh_agent.so|AGENT|" -e "s|$PWD/$LOG/|LOG/|" -e 's|\.jfr\.[0-9]*\.jfr|.jfr.RUN.jfr|' <<<"$1"; }
# jfc_alloc: what the JDK's profile.jfc says of jdk.ObjectAllocationSample.
jfc_alloc() {
	awk '/<event name="jdk.ObjectAllocationSample">/ { on = 1 } on && /<setting/ {
		n = $0; sub(/.*name="/, "", n); sub(/".*/, "", n)
		v = $0; sub(/.*">/, "", v); sub(/<.*/, "", v)
		out = out (out ? ", " : "") n " " v
	} on && /<\/event>/ { on = 0 } END { print out ? out : "not found" }' "$JDK/lib/jfr/profile.jfc" 2>/dev/null || echo "not found"
}

# ---------------------------------------------------------------- workloads
SRC=$A/src
JOUT=$A/javac-out
LIST=$A/javac-files.txt
JAVAC_FILES=0; JAVAC_CLASSES=0; JAVAC_LEFT_OUT=(); SRC_DESC=n/a
H2_SUM=; H2_DESC=n/a
declare -A READY

# find_src_zip: sets SRC_ZIP and SRC_DESC, or says why not and returns 1.
find_src_zip() {
	local deb f
	if [ -n "${ALLOC_SRC_ZIP:-}" ]; then
		SRC_ZIP=$ALLOC_SRC_ZIP
		SRC_DESC="$SRC_ZIP (ALLOC_SRC_ZIP)"
	elif [ -s "$JDK/lib/src.zip" ]; then
		SRC_ZIP=$JDK/lib/src.zip
		SRC_DESC="$SRC_ZIP, the running JDK's own"
	else
		SRC_ZIP=$(find "$A/srcdeb" -name src.zip 2>/dev/null | head -n 1)
		if [ -z "$SRC_ZIP" ]; then
			if ! "$JDK/bin/java" -version 2>&1 | grep -q '"17\.'; then
				fail "javac: $JDK/lib/src.zip is missing (set ALLOC_SRC_ZIP): the javac workload is left out"
				return 1
			fi
			echo "== $JDK/lib/src.zip is missing: apt-get download openjdk-17-source (about 47 MB) into $A/srcdeb"
			rm -rf "$A/srcdeb" && mkdir -p "$A/srcdeb"
			if ! (cd "$A/srcdeb" && apt-get download openjdk-17-source) >"$LOG/srcdeb.log" 2>&1; then
				fail "javac: $JDK/lib/src.zip is missing and 'apt-get download openjdk-17-source' failed ($LOG/srcdeb.log; apt-get update first?): the javac workload is left out"
				return 1
			fi
			for f in "$A"/srcdeb/*.deb; do
				dpkg-deb -f "$f" Version >"$A/srcdeb/version"
				dpkg-deb -x "$f" "$A/srcdeb/x"
			done
			rm -f "$A"/srcdeb/*.deb
			SRC_ZIP=$(find "$A/srcdeb" -name src.zip | head -n 1)
			[ -n "$SRC_ZIP" ] || { fail "javac: no src.zip in openjdk-17-source: the javac workload is left out"; return 1; }
		fi
		deb=$(cat "$A/srcdeb/version" 2>/dev/null || true)
		SRC_DESC="src.zip of Debian's openjdk-17-source ${deb:-(version unknown)} (apt-get download; the JDK's own src.zip is missing)"
	fi
	[ -s "$SRC_ZIP" ] || { fail "javac: $SRC_ZIP is not a file: the javac workload is left out"; return 1; }
}

# javac_cmd CONFIG RUN: the javac command line of one run, one word a line.
javac_cmd() {
	local o
	echo "$JDK/bin/javac"
	echo "-J-Xmx$XMX"
	while read -r o; do [ -z "$o" ] || echo "-J$o"; done < <(opts javac "$1" "$2")
	printf '%s\n' --patch-module "java.base=$SRC/java.base" -d "$JOUT" -nowarn -XDignore.symbol.file \
		-implicit:none -Xmaxerrs 10000 "@$LIST"
}
h2_cmd() {
	echo "$JDK/bin/java"
	echo "-Xmx$XMX"
	opts h2 "$1" "$2"
	printf '%s\n' -cp "$H2_JAR:$A/java" H2Load "$H2_ROWS"
}

prepare_javac() {
	local stamp tries rc d
	local -a bad cmd
	find_src_zip || return 1
	stamp="$(readlink -f "$SRC_ZIP") $(stat -c '%s %Y' "$SRC_ZIP") ${JAVAC_DIRS[*]}"
	if [ "$(cat "$SRC/.stamp" 2>/dev/null)" != "$stamp" ]; then
		echo "== unpacking java.base/{${JAVAC_DIRS[*]}} of $SRC_ZIP into $SRC"
		rm -rf "$SRC" && mkdir -p "$SRC"
		for d in "${JAVAC_DIRS[@]}"; do
			unzip -q -o "$SRC_ZIP" "java.base/${d%/}/*" -d "$SRC" ||
				{ fail "javac: no java.base/$d in $SRC_ZIP: the javac workload is left out"; return 1; }
		done
		echo "$stamp" >"$SRC/.stamp"
	fi
	find "$SRC/java.base" -name '*.java' ! -name module-info.java | sort >"$LIST"
	JAVAC_FILES=$(wc -l <"$LIST")
	[ "$JAVAC_FILES" -gt 0 ] || { fail "javac: no sources under $SRC: the javac workload is left out"; return 1; }
	# Untimed: leave out what does not compile against this JDK, count the classes.
	for ((tries = 1; tries <= 6; tries++)); do
		rm -rf "$JOUT"
		echo "== javac, untimed (files that do not compile against $JDK are left out): $(wc -l <"$LIST") files"
		rc=0
		mapfile -t cmd < <(javac_cmd none 0)
		timeout "$TMO" "${cmd[@]}" >"$LOG/javac.prepare.$tries.out" 2>"$LOG/javac.prepare.$tries.err" || rc=$?
		[ "$rc" != 0 ] || break
		mapfile -t bad < <(grep -oE '^[^:]+\.java:[0-9]+: error:' "$LOG/javac.prepare.$tries.err" | cut -d: -f1 | sort -u)
		if [ ${#bad[@]} -eq 0 ]; then
			fail "javac: the untimed compile failed (exit status $rc) without an error in a file ($LOG/javac.prepare.$tries.err): the javac workload is left out"
			return 1
		fi
		JAVAC_LEFT_OUT+=("${bad[@]}")
		grep -vxF -f <(printf '%s\n' "${bad[@]}") "$LIST" >"$LIST.tmp" && mv -f "$LIST.tmp" "$LIST"
	done
	[ "$rc" = 0 ] || { fail "javac: still errors after leaving out ${#JAVAC_LEFT_OUT[@]} files: the javac workload is left out"; return 1; }
	JAVAC_FILES=$(wc -l <"$LIST")
	JAVAC_CLASSES=$(find "$JOUT" -name '*.class' | wc -l)
	rm -rf "$JOUT"
	echo "   $JAVAC_FILES files, $JAVAC_CLASSES class files; left out: ${#JAVAC_LEFT_OUT[@]} (${JAVAC_LEFT_OUT[*]:-none})"
}

prepare_h2() {
	if [ ! -s "$H2_JAR" ]; then
		NOTES+=("h2 left out: no $H2_JAR (Debian's libh2-java: apt-get install libh2-java)")
		echo "bench/alloc.sh: no $H2_JAR; the h2 workload is left out" >&2
		return 1
	fi
	"$JDK/bin/javac" -d "$A/java" bench/java/H2Load.java ||
		{ fail "h2: bench/java/H2Load.java does not compile: the h2 workload is left out"; return 1; }
	H2_DESC="$(readlink -f "$H2_JAR"), $H2_ROWS rows"
}

for w in "${WORKLOADS[@]}"; do
	READY[$w]=0
	if "prepare_$w"; then READY[$w]=1; fi
done

# ---------------------------------------------------------------- runs
declare -A CPU WALL RSS NOK AGENT_SAID JFR_EVENTS JFR_BYTES CMDLINE EVENTS TABLES_MB
# check_run WORKLOAD CONFIG RUN BASE: sets WHY to what is wrong with the
# run's output ("" when it is right); keeps the JFR event counts.
check_run() {
	local w=$1 c=$2 i=$3 base=$4 n s ev f
	WHY=
	if [ "$w" = javac ]; then
		n=$(find "$JOUT" -name '*.class' 2>/dev/null | wc -l)
		[ "$n" = "$JAVAC_CLASSES" ] || { WHY="wrote $n class files, not $JAVAC_CLASSES"; return 0; }
	else
		s=$(awk '$1 == "rows" && $3 == "checksum" { print $4 }' "$base.out")
		[ -n "$s" ] || { WHY="no 'rows N checksum C' line"; return 0; }
		[ -n "$H2_SUM" ] || H2_SUM=$s
		[ "$s" = "$H2_SUM" ] || { WHY="checksum $s, not $H2_SUM as before"; return 0; }
	fi
	if [ "$c" = jfr ]; then
		f=$LOG/$w.jfr.$i.jfr
		[ -s "$f" ] || { WHY="no recording $f"; return 0; }
		ev=$("$JDK/bin/jfr" summary "$f" 2>/dev/null | awk '$1 == "jdk.ObjectAllocationSample" { print $2 }' || true)
		[[ $ev =~ ^[1-9][0-9]*$ ]] || { WHY="no jdk.ObjectAllocationSample event in $f"; return 0; }
		JFR_EVENTS[$w]+="$ev "; JFR_BYTES[$w]+="$(stat -c %s "$f") "
		[ "$i" = 1 ] || rm -f "$f"	# the first is kept to look at
	fi
}

# run WORKLOAD CONFIG RUN: one timed run.
run() {
	local w=$1 c=$2 i=$3 rc=0 line wall usr sys rss cpu why d p
	local base=$LOG/$w.$c.$i
	local -a cmd before
	mapfile -t cmd < <("${w}_cmd" "$c" "$i")
	CMDLINE[$w,$c]=$(shown "${cmd[*]}")
	[ "$w" != javac ] || rm -rf "$JOUT"
	before=(/tmp/.heapsh-*)
	if [ "$GNU_TIME" = 1 ]; then
		/usr/bin/time -f '%e %U %S %M' -o "$base.time" timeout "$TMO" "${cmd[@]}" >"$base.out" 2>"$base.err" || rc=$?
		line=$(tail -n 1 "$base.time")
		read -r wall usr sys rss <<<"$line"
	else
		local TIMEFORMAT='%R %U %S'
		{ time timeout "$TMO" "${cmd[@]}" >"$base.out" 2>"$base.err"; } 2>"$base.time" || rc=$?
		read -r wall usr sys <<<"$(tail -n 1 "$base.time")"
		rss=n/a
	fi
	# A JVM with the agent that did not exit normally may leave its socket directory.
	for d in /tmp/.heapsh-*; do
		[ -e "$d" ] || continue
		p=${d##*-}
		[[ " ${before[*]} " == *" $d "* ]] || kill -0 "$p" 2>/dev/null || rm -rf "$d"
	done
	case $c in sampled|sampled4k|accounts|exact|nolive|liveall|stacks|events)
		EVENTS[$w,$c]+="$(awk '$3 == "recording:" { print $4 }' "$base.err" | tail -n 1) "
		TABLES_MB[$w,$c]+="$(awk '$3 == "recording:" { printf "%.1f", $9 / 1048576 }' "$base.err" | tail -n 1) "
		[ -n "${AGENT_SAID[$w,$c]:-}" ] ||
			AGENT_SAID[$w,$c]=$(cat "$base.err" "$base.out" | grep -iE 'heapsh|agent|alloc' | head -n 3 | tr '\n' ' ' | cut -c1-300 || true)
		;;
	esac
	if [ "$rc" != 0 ]; then
		why="exit status $rc"
		[ "$rc" != 124 ] || why+=" (timed out after $TMO s)"
		# the JVM says why it could not start (an agent that failed) on stdout
		fail "$w $c run $i: $why: $({ tail -n 3 "$base.err"; [ -s "$base.err" ] || tail -n 3 "$base.out"; } |
			tr '\n' ' ' | cut -c1-400) (output in $base.out/.err)"
		rm -f "$LOG/$w.jfr.$i.jfr"
		return 0
	fi
	check_run "$w" "$c" "$i" "$base"
	if [ -n "$WHY" ]; then
		fail "$w $c run $i: $WHY (output in $base.out/.err)"
		return 0
	fi
	cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
	CPU[$w,$c,$i]=$cpu; WALL[$w,$c,$i]=$wall; RSS[$w,$c,$i]=$rss
	NOK[$w,$c]=$(( ${NOK[$w,$c]:-0} + 1 ))
	printf '   %-5s %-8s run %d: CPU %7s s, wall %7s s, peak RSS %s MB\n' "$w" "$c" "$i" "$cpu" "$wall" \
		"$([ "$rss" = n/a ] && echo n/a || echo $((rss / 1024)))"
}

echo "== $R repetitions of: ${WORKLOADS[*]} x ${CONFIGS[*]} (load average $LOAD0)"
for ((i = 1; i <= R; i++)); do
	for w in "${WORKLOADS[@]}"; do
		[ "${READY[$w]}" = 1 ] || continue
		for c in "${CONFIGS[@]}"; do run "$w" "$c" "$i"; done
	done
done
rm -rf "$JOUT"

# ---------------------------------------------------------------- statistics
# vals ARRAY W C: the values of W,C over the runs that succeeded, in run order.
vals() {
	local -n arr=$1
	local i
	for ((i = 1; i <= R; i++)); do [ -z "${arr[$2,$3,$i]:-}" ] || printf '%s ' "${arr[$2,$3,$i]}"; done
}
median() {	# median of the numbers in $1 ("n/a" if none)
	printf '%s\n' $1 | awk 'NF { a[++n] = $1 } END {
		if (!n) { print "n/a"; exit }
		for (i = 2; i <= n; i++) { v = a[i]; for (j = i - 1; j >= 1 && a[j] > v; j--) a[j+1] = a[j]; a[j+1] = v }
		print (n % 2) ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }'
}
range() { printf '%s\n' $1 | sort -g | awk 'NF { a[++n] = $1 } END { print n ? a[1] "-" a[n] : "n/a" }'; }
# ratios ARRAY W C BASE: X run i / BASE run i for each repetition where both succeeded.
ratios() {
	local -n arr=$1
	local i
	for ((i = 1; i <= R; i++)); do
		[ -n "${arr[$2,$3,$i]:-}" ] && [ -n "${arr[$2,$4,$i]:-}" ] || continue
		awk -v a="${arr[$2,$3,$i]}" -v b="${arr[$2,$4,$i]}" 'BEGIN { if (b > 0) printf "%.4f ", a / b }'
	done
}
# tci "LIST": "LO-HI", the 95 % t-interval of the mean (n/a for fewer than 2).
tci() {
	printf '%s\n' $1 | awk 'NF { x[++n] = $1; s += $1 } END {
		if (n < 2) { print "n/a"; exit }
		split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086", t, " ")
		m = s / n; for (i = 1; i <= n; i++) v += (x[i] - m) ^ 2
		h = ((n - 1 <= 20) ? t[n - 1] : 2.0) * sqrt(v / (n - 1)) / sqrt(n)
		printf "%.3f-%.3f\n", m - h, m + h }'
}
fmt() { [ "$1" = n/a ] && echo n/a || awk -v a="$1" -v f="$2" 'BEGIN { printf f, a }'; }
rx() { fmt "$(median "$1")" '%.3fx'; }	# rx "RATIOS": their median as "1.234x"
mbs() { printf '%s\n' $1 | awk 'NF && $1 != "n/a" { printf "%d ", $1 / 1024 }'; }
has() { local x; for x in "${CONFIGS[@]}"; do [ "$x" = "$1" ] && return 0; done; return 1; }
# verdict RATIOS LIMIT: met / MISSED / not resolved, from the median and the interval of the mean.
verdict() {
	local m ci lo hi
	m=$(median "$1"); ci=$(tci "$1")
	[ "$m" != n/a ] || { echo "n/a"; return; }
	if [ "$ci" = n/a ]; then
		awk -v m="$m" -v l="$2" 'BEGIN { print (m <= l) ? "met (one pair; no interval)" : "MISSED (one pair; no interval)" }'
		return
	fi
	lo=${ci%-*}; hi=${ci#*-}
	awk -v lo="$lo" -v hi="$hi" -v l="$2" 'BEGIN {
		if (hi <= l) print "met"; else if (lo > l) print "MISSED"; else print "not resolved (the interval holds " l ")" }'
}

TABLES=$LOG/tables.md
{
for w in "${WORKLOADS[@]}"; do
	[ "${READY[$w]}" = 1 ] || continue
	if [ "$w" = javac ]; then
		echo "### javac: $JAVAC_FILES files of java.base/{${JAVAC_DIRS[*]}} compiled to $JAVAC_CLASSES class files"
	else
		echo "### h2: H2Load, $H2_ROWS rows (checksum ${H2_SUM:-n/a})"
	fi
	echo
	echo "| configuration | runs ok | CPU s median (min-max) | wall s median (min-max) | CPU / none | its 95 % interval | wall / none | peak RSS MB median (min-max) | RSS - none MB |"
	echo "|---|---:|---|---|---:|---|---:|---|---:|"
	rn=$(median "$(vals RSS "$w" none)")
	for c in "${CONFIGS[@]}"; do
		cv=$(vals CPU "$w" "$c"); wv=$(vals WALL "$w" "$c"); rv=$(vals RSS "$w" "$c")
		cr=n/a; ci=n/a; wr=n/a; rd=n/a
		if [ "$c" != none ] && has none; then
			cr=$(fmt "$(median "$(ratios CPU "$w" "$c" none)")" '%.3f')
			ci=$(tci "$(ratios CPU "$w" "$c" none)")
			wr=$(fmt "$(median "$(ratios WALL "$w" "$c" none)")" '%.3f')
			rm_=$(median "$rv")
			[[ $rm_ == n/a || $rn == n/a ]] || rd=$(awk -v a="$rm_" -v b="$rn" 'BEGIN { printf "%+d", (a - b) / 1024 }')
		fi
		rmb=$(mbs "$rv")
		echo "| $c | ${NOK[$w,$c]:-0}/$R | $(median "$cv") ($(range "$cv")) | $(median "$wv") ($(range "$wv")) | $cr | $ci | $wr | $(fmt "$(median "$rmb")" %.0f) ($(range "$rmb")) | $rd |"
	done
	echo
	echo "Command lines (AGENT = the agent's copy, LOG = $LOG/):"
	echo
	for c in "${CONFIGS[@]}"; do echo "- $c: \`${CMDLINE[$w,$c]:-}\`"; done
	echo
	if has jfr && [ -n "${JFR_EVENTS[$w]:-}" ]; then
		echo "JFR: $JDK/lib/jfr/profile.jfc sets jdk.ObjectAllocationSample to: $(jfc_alloc)" \
		     "(\"throttle\" is the most samples per second); events per recording $(median "${JFR_EVENTS[$w]}") (runs: ${JFR_EVENTS[$w]% });" \
		     "recording size $(median "$(printf '%s\n' ${JFR_BYTES[$w]} | awk '{ printf "%.1f ", $1 / 1048576 }')") MB median."
		echo
	fi
	for c in sampled sampled4k accounts stacks events; do
		has "$c" || continue
		echo "- the agent's stderr ($c, first run): ${AGENT_SAID[$w,$c]:-(nothing about heapsh, the agent or alloc)}"
		[ -z "${EVENTS[$w,$c]// /}" ] || echo "- allocations or samples the agent recorded ($c, per run, its count at exit): ${EVENTS[$w,$c]% }; its tables, MB: ${TABLES_MB[$w,$c]% }"
	done
	has sampled || has sampled4k || has accounts || has stacks || has events && echo
done
} >"$TABLES"

TARGETS=$LOG/targets.md
{
echo "| target (issue 13) | workload | measured (CPU time, median of per-repetition ratios; 95 % interval of their mean) | verdict |"
echo "|---|---|---|---|"
for w in "${WORKLOADS[@]}"; do
	[ "${READY[$w]}" = 1 ] || continue
	if has sampled && has none; then
		r=$(ratios CPU "$w" sampled none)
		echo "| sampled at 512k within 2 % of no agent | $w | $(rx "$r") ($(tci "$r")) | $(verdict "$r" 1.02) |"
	fi
	if has sampled && has jfr; then
		r=$(ratios CPU "$w" sampled jfr)
		echo "| sampled no costlier than JFR (settings=profile) | $w | sampled / JFR $(rx "$r") ($(tci "$r")) | $(verdict "$r" 1.0) |"
	fi
	if has accounts && has none; then
		r=$(ratios CPU "$w" accounts none)
		echo "| exact with accounts at most 3x | $w | $(rx "$r") ($(tci "$r")) | $(verdict "$r" 3) |"
	fi
	if has stacks && has none; then
		r=$(ratios CPU "$w" stacks none)
		echo "| (no target) exact with full stacks | $w | $(rx "$r") ($(tci "$r")) | - |"
	fi
	if has events && has none; then
		r=$(ratios CPU "$w" events none)
		echo "| (no target) exact with accounts by JVMTI events | $w | $(rx "$r") ($(tci "$r")) | - |"
	fi
	if has jfr && has none; then
		r=$(ratios CPU "$w" jfr none)
		echo "| (the peer) JFR settings=profile | $w | $(rx "$r") ($(tci "$r")) | - |"
	fi
done
} >"$TARGETS"

# Memory per recorded object still alive: AllocHold keeps ALLOC_HOLD objects of
# 16 bytes (and, for the fixed costs, 1) and reports its RSS after a full GC;
# the agent logs its tables' size at exit. Three configurations, interleaved,
# ALLOC_HOLD_RUNS times each.
MEMORY=$LOG/memory.md
HOLD=${ALLOC_HOLD:-2000000}
HOLD_RUNS=${ALLOC_HOLD_RUNS:-3}
: >"$MEMORY"
if [ "$HOLD" != 0 ] && [ -n "${AGENT:-}" ] && "$JDK/bin/javac" -d "$A/java" bench/java/AllocHold.java; then
	declare -A HRSS HTAB
	for ((i = 1; i <= HOLD_RUNS; i++)); do
		for c in none bytecode jvmti; do
			case $c in
			none) opt=() ;;
			bytecode) opt=("-agentpath:$AGENT=alloc=exact,depth=1") ;;
			jvmti) opt=("-agentpath:$AGENT=alloc=exact,via=jvmti,depth=1") ;;
			esac
			for n in 1 "$HOLD"; do
				base=$LOG/hold.$c.$n.$i
				timeout "$TMO" "$JDK/bin/java" -Xms3g -Xmx3g ${opt[@]+"${opt[@]}"} -cp "$A/java" AllocHold "$n" \
					>"$base.out" 2>"$base.err" || fail "memory: AllocHold $n, $c, run $i: exit status $?"
				HRSS[$c,$n]+="$(awk '$1 == "held" { print $4 }' "$base.out") "
				[ "$n" = 1 ] || HTAB[$c]+="$(awk '$3 == "recording:" { print $9 }' "$base.err") "
			done
			echo "   memory $c run $i: RSS $(awk '$1 == "held" { print $4 }' "$LOG/hold.$c.1.$i.out") KB with 1 object," \
				"$(awk '$1 == "held" { print $4 }' "$LOG/hold.$c.$HOLD.$i.out") KB with $HOLD"
		done
	done
	{
	echo "| configuration | RSS with 1 object, MB median (min-max) | RSS with $HOLD objects, MB median (min-max) | RSS per held object, bytes | agent's tables per held object, bytes |"
	echo "|---|---|---|---:|---:|"
	for c in none bytecode jvmti; do
		awk -v c="$c" -v r1="$(median "${HRSS[$c,1]}")" -v rn="$(median "${HRSS[$c,$HOLD]}")" \
		    -v g1="$(range "${HRSS[$c,1]}")" -v gn="$(range "${HRSS[$c,$HOLD]}")" \
		    -v t="$(median "${HTAB[$c]:-}")" -v n="$HOLD" 'BEGIN {
			split(g1, x, "-"); split(gn, y, "-")
			per = (r1 == "n/a" || rn == "n/a") ? "n/a" : sprintf("%.1f", (rn - r1) * 1024 / n)
			tb = (c == "none" || t == "n/a" || t == "") ? "-" : sprintf("%.1f", t / n)
			printf "| %s | %.0f (%.0f-%.0f) | %.0f (%.0f-%.0f) | %s | %s |\n", c, r1 / 1024, x[1] / 1024, x[2] / 1024,
				rn / 1024, y[1] / 1024, y[2] / 1024, per, tb }'
	done
	} >"$MEMORY"
fi

RAW=$LOG/raw.md
{
echo "| workload | configuration | CPU s per run | wall s per run | peak RSS MB per run |"
echo "|---|---|---|---|---|"
for w in "${WORKLOADS[@]}"; do
	[ "${READY[$w]}" = 1 ] || continue
	for c in "${CONFIGS[@]}"; do
		l=; m=; n=
		for ((i = 1; i <= R; i++)); do
			l+="${CPU[$w,$c,$i]:--} "; m+="${WALL[$w,$c,$i]:--} "
			x=${RSS[$w,$c,$i]:--}; [[ $x == - || $x == n/a ]] && n+="$x " || n+="$((x / 1024)) "
		done
		echo "| $w | $c | ${l% } | ${m% } | ${n% } |"
	done
done
} >"$RAW"

# ---------------------------------------------------------------- report
{
echo "# bench/alloc.sh, $START to $(date -u '+%H:%M UTC')"
echo
echo "machine: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), nproc=$(nproc)," \
     "$(free -g | awk '/^Mem:/ { print $2 " GB total, " $7 " GB available" }'), $(uname -sr);" \
     "load average $LOAD0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo
echo "JDK: $JDK ($JDK_VERSION), -Xmx$XMX for both workloads."
echo "Agent: $AGENT_ID."
echo "Repetitions: $R, interleaved (for each repetition: ${WORKLOADS[*]}, each in the order ${CONFIGS[*]})." \
     "CPU = user + system time of the whole process tree (GNU time's rusage of the waited-for children);" \
     "ratios are medians of the per-repetition ratios (run i against run i of the same workload)$([ "$GNU_TIME" = 1 ] || echo "; no GNU time here: no peak RSS")."
for w in "${WORKLOADS[@]}"; do
	case $w in
		javac) [ "${READY[javac]}" = 1 ] && echo "javac: sources $SRC_DESC; java.base/{${JAVAC_DIRS[*]}}: $JAVAC_FILES files compiled$([ ${#JAVAC_LEFT_OUT[@]} -eq 0 ] || echo ", ${#JAVAC_LEFT_OUT[@]} left out because they do not compile against this JDK's java.base: ${JAVAC_LEFT_OUT[*]#$SRC/java.base/}")." ;;
		h2) [ "${READY[h2]}" = 1 ] && echo "h2: $H2_DESC, bench/java/H2Load.java." ;;
	esac
done
echo
echo "## Targets"
echo
cat "$TARGETS"
echo
cat "$TABLES"
if [ -s "$MEMORY" ]; then
	echo "## Memory per recorded object alive"
	echo
	echo "AllocHold keeps $HOLD objects of 16 bytes, or 1 (bench/java/AllocHold.java), -Xms3g -Xmx3g, $HOLD_RUNS runs interleaved; exact recordings with depth 1 and no account, by bytecode instrumentation and by JVMTI events. RSS is the JVM's own (VmRSS) after a full GC: with 1 object, the fixed cost; per held object, the difference over $HOLD (the object itself is 16 bytes, and 4 more in the array holding it). The agent's tables are its count at exit (HEAPSH_AGENT_DEBUG)."
	echo
	cat "$MEMORY"
	echo
fi
echo "## Raw runs"
echo
cat "$RAW"
if [ ${#NOTES[@]} -gt 0 ]; then
	echo
	echo "**Notes:**"
	echo
	printf -- '- %s\n' "${NOTES[@]}"
fi
failures_md "Failures (left out of the figures; output in $LOG/):"
} >"$REPORT"

{
echo "### Allocation recording (issue 13, bench/alloc.sh; the full report is in $REPORT)"
echo
echo "JDK $JDK_VERSION; agent $AGENT_ID; $R repetitions, interleaved."
echo
cat "$TARGETS"
echo
sed -n '/^### /p; /^|/p; /^$/p' "$TABLES" | cat -s
} | summary_section bench/alloc.sh "$SUM"

echo
echo "== report (also in $REPORT; a section in $SUM)"
echo
cat "$REPORT"
[ ${#FAILURES[@]} -eq 0 ] || exit 1
