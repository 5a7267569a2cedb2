#!/usr/bin/env bash
# bench/serve.sh - issue 37's fleet benchmark: one `heapsh --serve --all`
# watching JVMS (default 20) small JVMs of a real program nobody here wrote
# for MINUTES (default 10), with 3 watch queries each, evaluated inside each
# JVM every EVERY (default 60s).
#
# The JVMs: Debian's H2 (bench/java/H2Leak.java: ROWS rows in memory, OPS
# operations a second, every 500th leaking an H2Leak$Cached), JDK 17,
# -Xmx$XMX, -Xlog:safepoint to a file each.
#
# Measured:
#   - heapsh's CPU over the run (utime + stime of the exporter, /proc) and its
#     peak memory (VmHWM);
#   - scrape latency: `curl /metrics` every SCRAPE seconds (default 2), as a
#     Prometheus would; median, p99, max, and the size of a scrape;
#   - each JVM's pauses (its -Xlog:safepoint) caused by the exporter's
#     evaluations: the VM operations heapsh starts (heap walks and
#     iterations, the class histogram's heap inspection, forced full GCs),
#     per evaluation, and the longest one; against, after the run, one
#     `jcmd PID GC.class_histogram` of each JVM, read from the same logs;
#   - the exporter's own view (heapsh_jvm_pause_seconds_total,
#     heapsh_errors_total) from its last scrape.
#
# Usage: bash bench/serve.sh      (as make bench does not: it takes MINUTES)
#   JVMS=N MINUTES=M EVERY=DURATION SCRAPE=S ROWS=R OPS=O XMX=SIZE PORT=P
# Writes build/bench/serve/report.md and prints it.
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
me=bench/serve.sh
JVMS=${JVMS:-20}
MINUTES=${MINUTES:-10}
EVERY=${EVERY:-60s}
SCRAPE=${SCRAPE:-2}
ROWS=${ROWS:-20000}
OPS=${OPS:-100}
XMX=${XMX:-128m}
PORT=${PORT:-19437}
JDK=${JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
OUT=build/bench/serve
FAILURES=()
rm -rf "$OUT"
mkdir -p "$OUT/java" "$OUT/jvm"
missing=()
[ -s /usr/share/java/h2.jar ] || missing+=(libh2-java)
command -v curl >/dev/null || missing+=(curl)
bench_install "$me" "$OUT/apt.log" ${missing[@]+"${missing[@]}"}
"$JDK/bin/javac" -nowarn -cp /usr/share/java/h2.jar -d "$OUT/java" bench/java/H2Leak.java || exit 2
bench_heapsh serve src
make -s libheapsh_agent.so || exit 2
export HEAPSH_AGENT=$PWD/libheapsh_agent.so

PIDS=()
SERVE=
cleanup() {
	[ -z "$SERVE" ] || { kill -TERM "$SERVE" 2>/dev/null; wait "$SERVE" 2>/dev/null; }
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

# The JVMs, each with stdin held open (H2Leak runs until its stdin ends).
JPID=()
for ((j = 0; j < JVMS; j++)); do
	mkfifo "$OUT/jvm/$j.in"
	exec {fd}<>"$OUT/jvm/$j.in"
	"$JDK/bin/java" -Xmx"$XMX" -Xlog:safepoint:file="$PWD/$OUT/jvm/$j.safepoint" \
		-Dheapsh.name=h2-$j -cp /usr/share/java/h2.jar:"$OUT/java" H2Leak "$ROWS" "$OPS" \
		<"$OUT/jvm/$j.in" >"$OUT/jvm/$j.out" 2>"$OUT/jvm/$j.err" &
	PIDS+=("$!")
done
for ((j = 0; j < JVMS; j++)); do
	p=
	for ((i = 0; i < 600; i++)); do
		read -r _ p < <(grep '^ready ' "$OUT/jvm/$j.out" 2>/dev/null)
		[ -z "$p" ] || break
		sleep 0.5
	done
	[ -n "$p" ] || { echo "$me: JVM $j did not start ($OUT/jvm/$j.err)" >&2; exit 2; }
	JPID[j]=$p
done

cat >"$OUT/watch.txt" <<'EOF'
# bench/serve.sh's watch queries: the leak, its bytes, and H2's sessions
cached: objects.count([it | it is H2Leak.Cached])
cached_bytes: objects.filter([it | it is H2Leak.Cached]).sum([c | c.digest.shallow_size])
sessions: objects.count([it | it is org.h2.engine.SessionLocal])
EOF

echo "# bench/serve.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >"$OUT/report.md"
"$HS" --serve "127.0.0.1:$PORT" --all --watch "$OUT/watch.txt" --every "$EVERY" \
	>"$OUT/serve.out" 2>"$OUT/serve.err" &
SERVE=$!
# ticks: the exporter's utime + stime, clock ticks.
ticks() { awk '{ print $14 + $15 }' "/proc/$SERVE/stat" 2>/dev/null || echo 0; }
HZ=$(getconf CLK_TCK)
for ((i = 0; i < 100; i++)); do
	curl -s -o /dev/null "http://127.0.0.1:$PORT/metrics" && break
	sleep 0.2
done
T0=$(date +%s.%N)
C0=$(ticks)
# Scrapes until the end; the first minute is the exporter finding and
# attaching to the JVMs, and counts like the rest.
END=$(($(date +%s) + MINUTES * 60))
: >"$OUT/scrapes.txt"
while (($(date +%s) < END)); do
	kill -0 "$SERVE" 2>/dev/null || { FAILURES+=("the exporter exited during the run (see $OUT/serve.err)"); break; }
	curl -s -o "$OUT/last.metrics" -w '%{time_total} %{size_download} %{http_code}\n' \
		"http://127.0.0.1:$PORT/metrics" >>"$OUT/scrapes.txt"
	sleep "$SCRAPE"
done
C1=$(ticks)
T1=$(date +%s.%N)
HWM=$(awk '/^VmHWM/ { print $2 }' "/proc/$SERVE/status" 2>/dev/null)
RSS=$(awk '/^VmRSS/ { print $2 }' "/proc/$SERVE/status" 2>/dev/null)
kill -TERM "$SERVE" 2>/dev/null
wait "$SERVE" 2>/dev/null
SERVE_RC=$?
SERVE=
[ "$SERVE_RC" = 0 ] || FAILURES+=("the exporter exited with status $SERVE_RC on SIGTERM")

# heapsh's pauses: the VM operations it starts (the report's Python reads
# the logs' lines: Safepoint "OP", ..., Total: N ns).
OPS_RE='"(HeapWalkOperation|HeapIterateOperation|GC_HeapInspection|G1CollectFull|HeapDumper|GetAllStackTraces|RedefineClasses)"'
for ((j = 0; j < JVMS; j++)); do
	cp "$OUT/jvm/$j.safepoint" "$OUT/jvm/$j.during"
done
# One jcmd GC.class_histogram of each JVM, after the run: its pauses are the new lines.
for ((j = 0; j < JVMS; j++)); do
	n=$(wc -l <"$OUT/jvm/$j.safepoint")
	"$JDK/bin/jcmd" "${JPID[j]}" GC.class_histogram >/dev/null 2>&1 ||
		FAILURES+=("jcmd GC.class_histogram of JVM $j failed")
	sleep 0.2
	tail -n +$((n + 1)) "$OUT/jvm/$j.safepoint" >"$OUT/jvm/$j.jcmd"
done

EVAL_S=$(python3 - "$EVERY" <<'EOF'
import re, sys
m = re.fullmatch(r'(\d+)(ms|s|m|h)?', sys.argv[1])
n, u = int(m.group(1)), m.group(2) or 's'
print(n * {'ms': 0.001, 's': 1, 'm': 60, 'h': 3600}[u])
EOF
)
python3 - "$OUT" "$JVMS" "$EVAL_S" "$T0" "$T1" "$C0" "$C1" "$HZ" "${HWM:-0}" "${RSS:-0}" "$OPS_RE" <<'EOF' >>"$OUT/report.md"
import re, statistics, sys, os
out, jvms, eval_s, t0, t1, c0, c1, hz, hwm, rss, ops_re = sys.argv[1:]
jvms, eval_s, t0, t1, c0, c1, hz = int(jvms), float(eval_s), float(t0), float(t1), int(c0), int(c1), int(hz)
wall = t1 - t0
rx = re.compile(r'Safepoint ' + ops_re + r'.*Total: (\d+) ns')
def pauses(path):
    p = []
    for line in open(path, errors='replace'):
        m = rx.search(line)
        if m:
            p.append((m.group(1), int(m.group(2)) / 1e6))
    return p
sc = [l.split() for l in open(os.path.join(out, 'scrapes.txt')) if l.strip()]
lat = sorted(float(s[0]) * 1000 for s in sc if s[2] == '200')
bad = sum(1 for s in sc if s[2] != '200')
size = statistics.median(int(s[1]) for s in sc if s[2] == '200') if lat else 0
def pct(v, q):
    return v[min(len(v) - 1, int(q * len(v)))] if v else float('nan')
print()
print(f"{jvms} JVMs (H2Leak), one `heapsh --serve --all`, 3 watch queries each every {eval_s:g} s, "
      f"{wall / 60:.1f} min; scrapes every few seconds by curl.")
print()
print("| | |")
print("|---|---|")
print(f"| exporter CPU | {(c1 - c0) / hz:.1f} s over {wall:.0f} s = {(c1 - c0) / hz / wall * 100:.1f} % of one core |")
print(f"| exporter memory | peak {int(hwm) / 1024:.1f} MiB (VmHWM), {int(rss) / 1024:.1f} MiB at the end |")
print(f"| scrape latency | median {statistics.median(lat) if lat else float('nan'):.1f} ms, p99 {pct(lat, 0.99):.1f} ms, "
      f"max {lat[-1] if lat else float('nan'):.1f} ms ({len(lat)} scrapes, {bad} failed; {size / 1024:.0f} KiB each) |")
per_eval, longest, jc, jc_long, ops = [], [], [], [], {}
for j in range(jvms):
    p = pauses(os.path.join(out, 'jvm', f'{j}.during'))
    for op, ms in p:
        ops[op] = ops.get(op, 0) + ms
    n_eval = max(1, int(wall // eval_s))
    per_eval.append(sum(ms for _, ms in p) / n_eval)
    longest.append(max((ms for _, ms in p), default=0))
    q = pauses(os.path.join(out, 'jvm', f'{j}.jcmd'))
    jc.append(sum(ms for _, ms in q))
    jc_long.append(max((ms for _, ms in q), default=0))
def spread(v):
    return f"{statistics.median(v):.1f} ms ({min(v):.1f}-{max(v):.1f})"
print(f"| a JVM's pause per evaluation (its safepoint log; median over JVMs, range) | {spread(per_eval)} |")
print(f"| a JVM's longest single pause in the run | {spread(longest)} |")
print(f"| one `jcmd GC.class_histogram` of the same JVM, after the run | {spread(jc)} |")
print(f"| ratio: pause per evaluation / jcmd's | {statistics.median(per_eval) / statistics.median(jc):.2f} |")
print()
print("Pauses by VM operation, all JVMs, the whole run: " +
      ", ".join(f"{op} {ms / 1000:.2f} s" for op, ms in sorted(ops.items(), key=lambda kv: -kv[1])) + ".")
m = open(os.path.join(out, 'last.metrics'), errors='replace').read() if os.path.exists(os.path.join(out, 'last.metrics')) else ''
errs = [l for l in m.splitlines() if l.startswith('heapsh_errors_total{') and float(l.split()[-1]) != 0]
ups = [l for l in m.splitlines() if l.startswith('heapsh_up{') and float(l.split()[-1]) == 1]
print(f"The last scrape: {len(ups)} JVMs up; errors other than 0: " + ("; ".join(errs) if errs else "none") + ".")
EOF
echo >>"$OUT/report.md"
echo "heapsh: $BIN_ID; JVMs: $("$JDK/bin/java" -version 2>&1 | head -1), -Xmx$XMX, H2Leak $ROWS rows at $OPS ops/s" >>"$OUT/report.md"
failures_md >>"$OUT/report.md"
cat "$OUT/report.md"
[ ${#FAILURES[@]} -eq 0 ]
