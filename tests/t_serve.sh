# t_serve.sh - heapsh --serve, the exporter (docs/fleet.md), scraped by a
# real Prometheus (Debian's prometheus, on a loopback port, its own TSDB
# under $T): two KnownHeap JVMs (wait mode; tests/java/KnownHeap.java's
# KNOWN FACTS are the expectations), a watch file of queries about their
# objects, PromQL through Prometheus's HTTP API giving each JVM's values;
# watch queries that fail (syntax, no such class, a time limit, only a
# heap dump could answer) as heapsh_errors_total by reason and a log line;
# one JVM killed while the other's series go on; /metrics itself (content
# types, # EOF, promtool check metrics on the 0.0.4 text, 404 and 405); a
# process of another user refused; SIGTERM detaching cleanly; --all under a
# throwaway user (so that it never attaches to other engineers' JVMs on this
# machine) picking up a JVM started later and forgetting one that exited.
# Everything started here is killed at the end (trap), failed checks or not.
SV=$T/serve
SV_PIDS=()	# everything started here
SV_FDS=()	# write ends of the JVMs' stdin
SV_USER=	# the throwaway user of the --all checks, while it exists

serve_cleanup() {
	local fd p
	for fd in ${SV_FDS[@]+"${SV_FDS[@]}"}; do exec {fd}>&-; done
	for p in ${SV_PIDS[@]+"${SV_PIDS[@]}"}; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
		rm -rf "/tmp/.heapsh-$p" "/tmp/.java_pid$p"
	done
	SV_FDS=()
	SV_PIDS=()
	if [ -n "$SV_USER" ]; then
		rm -rf "/tmp/hsperfdata_$SV_USER"
		userdel "$SV_USER" 2>/dev/null
		SV_USER=
	fi
}
trap serve_cleanup EXIT
trap 'serve_cleanup; exit 130' INT TERM

# serve_jvm NAME [FLAGS...]: KnownHeap in wait mode (stdin held open by us); SV_JVM its pid.
# With SV_AS set (a setpriv command line), it runs as that user.
serve_jvm() {
	local name=$1 fd i
	shift
	SV_JVM=
	rm -f "$SV/$name.in" "$SV/$name.out"
	mkfifo "$SV/$name.in"
	exec {fd}<>"$SV/$name.in"
	SV_FDS+=("$fd")
	${SV_AS:-} java "$@" -cp "$JAVA_OUT" KnownHeap wait <"$SV/$name.in" >"$SV/$name.out" 2>"$SV/$name.err" &
	SV_PIDS+=("$!")
	for ((i = 0; i < 600; i++)); do
		read -r _ SV_JVM < <(grep '^ready ' "$SV/$name.out" 2>/dev/null)
		[ -n "$SV_JVM" ] && return 0
		sleep 0.1
	done
	fail "$name: KnownHeap started" "$(head -5 "$SV/$name.err")"
	return 1
}

# free_port: a loopback port nobody listens on now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# promql QUERY: the instant vector's samples, "label=value,... value" a line, sorted;
# labels pid, key, reason and jvm only (the ones the checks tell apart).
promql() {
	curl -s --max-time 10 "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" |
		python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = []
for r in d.get("data", {}).get("result", []):
    m = r["metric"]
    lab = ",".join("%s=%s" % (k, m[k]) for k in ("pid", "jvm", "key", "reason") if k in m)
    rows.append("%s %s" % (lab, r["value"][1]))
print("\n".join(sorted(rows)))'
}

# om_value NAME PID PORT: the value of NAME's sample of JVM PID at the exporter's /metrics.
om_value() {
	curl -s --max-time 5 "http://127.0.0.1:$3/metrics" | grep "^$1{pid=\"$2\"" | awk '{ print $2 }'
}

# wait_for QUERY N: until QUERY gives N series (or 60 s); prints how many it gave.
# prom_start NAME EXPORTER_PORT: a Prometheus scraping 127.0.0.1:EXPORTER_PORT
# every second, its TSDB in $SV/prom-NAME; sets PROM_PORT (the caller's local)
# once it is ready.
prom_start() {
	local name=$1 ep=$2 i
	PROM_PORT=$(free_port)
	printf 'global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: heapsh\n    static_configs:\n      - targets: [%s]\n' \
		"'127.0.0.1:$ep'" >"$SV/prometheus-$name.yml"
	prometheus --config.file="$SV/prometheus-$name.yml" --storage.tsdb.path="$SV/prom-$name" \
		--web.listen-address="127.0.0.1:$PROM_PORT" >"$SV/prom-$name.log" 2>&1 &
	SV_PIDS+=("$!")
	for ((i = 0; i < 100; i++)); do
		curl -sf "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null && break
		sleep 0.2
	done
}

wait_for() {
	local i n=0
	for ((i = 0; i < 120; i++)); do
		n=$(promql "$1" | grep -c .)
		[ "$n" -ge "$2" ] && break
		sleep 0.5
	done
	echo "$n"
}

serve_main() {
	if ! command -v prometheus >/dev/null; then
		echo "skip t_serve: no prometheus binary (Debian's prometheus package; make deps)"
		return
	fi
	rm -rf "$SV"
	mkdir -p "$SV"
	serve_jvm one -Xlog:safepoint:file="$SV/one.safepoint" || return
	local P1=$SV_JVM
	serve_jvm two -Dheapsh.name=second || return
	local P2=$SV_JVM

	# The watch file: KnownHeap's known objects, and four queries that fail.
	local HEAVY='objects.filter([it | it is Order]).map([o | objects.count([p | p is Leaf and p.a < o.id]) + objects.count([p | p is Leaf and p.a > o.id])]).sum'
	HEAVY="#[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map([k | $HEAVY + k]).sum"
	cat >"$SV/watch.hq" <<EOF
# KnownHeap's facts (tests/java/KnownHeap.java)
orders7: objects.count([it | it is Order and it.status = 7])
status_sum: objects.filter([it | it is Order]).map([o | o.status]).sum
by_status: objects.filter([it | it is Order]).group_by([o | o.status])
leaves: objects.filter([it | it is Leaf]).count

broken: objects.count([it | it is Order and ])
noclass: objects.count([it | it is NoSuchClass])
retained: objects.filter([it | it is Order]).map([o | o.retained]).sum
heavy: $HEAVY
EOF
	local EP PROM_PORT
	EP=$(free_port)
	timeout 300 "$HEAPSH" --serve "127.0.0.1:$EP" --watch "$SV/watch.hq" --every 1s --time-limit 1s \
		--top 12 "$P1" "$P2" 2>"$SV/serve.err" &
	local XP=$!
	SV_PIDS+=("$XP")
	check_contains "a syntax error in the watch file: file:line on stderr, at start" \
		"$SV/watch.hq:7: broken: syntax error: expected an expression, found ']'; the other queries are served" \
		"$(sleep 1; cat "$SV/serve.err")"

	# Prometheus, scraping the exporter every second.
	prom_start main "$EP"

	check "Prometheus has both JVMs' heapsh_up" 2 "$(wait_for 'heapsh_up == 1' 2)"
	wait_for 'heapsh_query{query="leaves"}' 2 >/dev/null
	check "watch query: Orders with status 7, in each JVM" "pid=$P1,jvm=KnownHeap 100
pid=$P2,jvm=second 100" "$(promql 'heapsh_query{query="orders7"}')"
	check "watch query: the sum of the Orders' statuses" "pid=$P1,jvm=KnownHeap 4500
pid=$P2,jvm=second 4500" "$(promql 'heapsh_query{query="status_sum"}')"
	check "watch query: Leafs" "pid=$P1,jvm=KnownHeap 500
pid=$P2,jvm=second 500" "$(promql 'heapsh_query{query="leaves"}')"
	check "watch query: group_by, a series per key (10 statuses x 2 JVMs)" 20 \
		"$(promql 'heapsh_query{query="by_status"}' | grep -c ' 100$')"
	check "watch query: group_by's key 7" "pid=$P1,jvm=KnownHeap,key=7 100
pid=$P2,jvm=second,key=7 100" "$(promql 'heapsh_query{query="by_status",key="7"}')"
	check "class histogram: Order 1000 instances in each JVM" "pid=$P1,jvm=KnownHeap 1000
pid=$P2,jvm=second 1000" "$(promql 'heapsh_class_instances{class="Order"}')"
	check "class histogram: Order 40000 bytes" "pid=$P1,jvm=KnownHeap 40000
pid=$P2,jvm=second 40000" "$(promql 'heapsh_class_bytes{class="Order"}')"
	check "heap used is there and positive, per JVM" 2 "$(promql 'heapsh_heap_used_bytes > 0' | grep -c .)"

	# The failures: counted by reason, said on stderr, the exporter up.
	wait_for 'heapsh_errors_total{reason="timeout"} > 0' 2 >/dev/null
	check "errors: the syntax error once per JVM" "pid=$P1,jvm=KnownHeap,reason=query_syntax 1
pid=$P2,jvm=second,reason=query_syntax 1" "$(promql 'heapsh_errors_total{reason="query_syntax"}')"
	check "errors: no such class: query_failed, per JVM" 2 \
		"$(promql 'heapsh_errors_total{reason="query_failed"} > 0' | grep -c .)"
	check "errors: retained needs a heap dump: query_unsupported, per JVM" 2 \
		"$(promql 'heapsh_errors_total{reason="query_unsupported"} > 0' | grep -c .)"
	check "errors: the time limit: timeout, per JVM" 2 \
		"$(promql 'heapsh_errors_total{reason="timeout"} > 0' | grep -c .)"
	check "errors: no attach error" "" "$(promql 'heapsh_errors_total{reason="attach"} > 0')"
	check_contains "log: no such class" "JVM $P1 (KnownHeap): query noclass ($SV/watch.hq:8): no class named 'NoSuchClass' in this heap [query_failed]" \
		"$(cat "$SV/serve.err")"
	check_contains "log: the time limit" "JVM $P2 (second): query heavy ($SV/watch.hq:10): this query cannot run inside JVM $P2: the analysis reached its time limit; no snapshot taken [timeout]" \
		"$(cat "$SV/serve.err")"
	check_contains "log: only a heap dump could answer, and none is taken" \
		"it reads 'retained', which needs the whole object graph (a heap dump); no snapshot taken [query_unsupported]" \
		"$(cat "$SV/serve.err")"
	check "no snapshot was taken (no heap dump in the JVMs' temporary folders)" "" \
		"$(ls -d /tmp/heapsh-snap-"$P1"-* /tmp/heapsh-snap-"$P2"-* 2>/dev/null)"
	check "the pauses heapsh caused are counted" 2 "$(promql 'heapsh_jvm_pause_seconds_total > 0' | grep -c .)"
	# One full GC a round: the class histogram's (GC_HeapInspection); the
	# watch queries after it make none of their own (HS_QUERY_NO_GC), where
	# each made one before (G1CollectFull, with JDK 17's default G1).
	local insp full
	insp=$(grep -c 'Safepoint "GC_HeapInspection"' "$SV/one.safepoint")
	full=$(grep -c 'Safepoint "G1CollectFull"' "$SV/one.safepoint")
	check "one full GC a round: the queries make none after the histogram's ($insp rounds, $full forced GCs)" \
		yes "$([ "$insp" -ge 2 ] && [ "$full" -lt "$insp" ] && echo yes || echo no)"

	# /metrics itself.
	local H B
	B=$(curl -s -D "$SV/headers" "http://127.0.0.1:$EP/metrics")
	check_contains "OpenMetrics by default: its content type" \
		"Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8" "$(cat "$SV/headers")"
	check "OpenMetrics: the text ends in # EOF" "# EOF" "$(printf '%s\n' "$B" | tail -1)"
	check "OpenMetrics: checked family by family (tests below)" "ok" "$(printf '%s\n' "$B" | python3 -c '
import re, sys
lines = sys.stdin.read().split("\n")
assert lines[-1] == "" and lines[-2] == "# EOF", "no # EOF at the end"
types, units, seen = {}, {}, []
for l in lines[:-2]:
    if l.startswith("# TYPE "):
        _, _, name, t = l.split(" ", 3)
        assert name not in types, "family twice: " + name
        types[name] = t
        seen.append(name)
    elif l.startswith("# UNIT "):
        _, _, name, u = l.split(" ", 3)
        assert name.endswith("_" + u), "unit not a suffix: " + l
    elif l.startswith("# HELP "):
        assert l.split(" ")[2] == seen[-1], "HELP of another family: " + l
    else:
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\} (\S+)$", l)
        assert m, "not a sample: " + l
        name, fam = m.group(1), seen[-1]
        want = fam + "_total" if types[fam] == "counter" else fam
        assert name == want, "sample %s in family %s (%s)" % (name, fam, types[fam])
        assert "pid=" in m.group(2) or fam == "heapsh_jvms", "no pid label: " + l
        float(m.group(3))
print("ok")' 2>&1 | tail -1)"
	H=$(curl -s -D - -o "$SV/p004.txt" -H 'Accept: text/plain;version=0.0.4' "http://127.0.0.1:$EP/metrics")
	check_contains "Prometheus text 0.0.4 when asked only for it" "Content-Type: text/plain; version=0.0.4" "$H"
	check "0.0.4: no # EOF" "" "$(grep -c '^# EOF' "$SV/p004.txt" | grep -v '^0$')"
	if command -v promtool >/dev/null; then
		check "promtool check metrics: the 0.0.4 text lints clean" "" \
			"$(promtool check metrics <"$SV/p004.txt" 2>&1)"
	fi
	check "POST /metrics: 405" 405 "$(curl -s -o /dev/null -w '%{http_code}' -X POST -d 'q=1' "http://127.0.0.1:$EP/metrics")"
	check "GET /api: 404 (no query from HTTP)" 404 "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$EP/api?q=objects")"
	check_contains "GET /: a page linking /metrics" 'href="/metrics"' "$(curl -s "http://127.0.0.1:$EP/")"

	# No recording runs in KnownHeap: no allocation series, and the exporter started none.
	check "no allocation recording: no heapsh_alloc_ series" "" "$(printf '%s\n' "$B" | grep '^heapsh_alloc_' | head -3)"
	check_contains "no allocation recording: the exporter started none" "recording,none" \
		"$(timeout 60 "$HEAPSH" --keep-agent --format csv -c ':alloc status' "$P2" 2>&1)"

	# A hung JVM (stopped) holds up only its own series: the watchdog stops
	# the call past its time limit, the JVM is down, the other's rounds go on;
	# once it runs again it is measured again.
	kill -STOP "$P1"
	local l1 l2 i
	l1=$(om_value heapsh_last_success_timestamp_seconds "$P2" "$EP")
	for ((i = 0; i < 80; i++)); do	# the limit, the watchdog's grace, a cancel's wait
		[ "$(om_value heapsh_up "$P1" "$EP")" = 0 ] && break
		sleep 0.5
	done
	check "a stopped JVM: heapsh_up 0 after its time limit" 0 "$(om_value heapsh_up "$P1" "$EP")"
	check "a stopped JVM: the other JVM is up" 1 "$(om_value heapsh_up "$P2" "$EP")"
	l2=$(om_value heapsh_last_success_timestamp_seconds "$P2" "$EP")
	check "a stopped JVM: the other JVM's rounds go on" yes \
		"$(python3 -c "print('yes' if float('${l2:-0}') > float('${l1:-0}') + 1 else 'no: $l1 $l2')")"
	kill -CONT "$P1"
	for ((i = 0; i < 60; i++)); do
		[ "$(om_value heapsh_up "$P1" "$EP")" = 1 ] && break
		sleep 0.5
	done
	check "a stopped JVM, running again: heapsh_up 1" 1 "$(om_value heapsh_up "$P1" "$EP")"
	check_contains "a stopped JVM: the watchdog's timeout is logged" "JVM $P1 (KnownHeap): " \
		"$(grep -E '\[timeout\]$' "$SV/serve.err" | grep -v 'query heavy')"

	# One JVM exits: the exporter stays up, the other's series go on.
	kill -9 "$P1"
	wait "$P1" 2>/dev/null
	sleep 3
	check "the exporter is alive after a JVM exited" alive "$(kill -0 "$XP" 2>/dev/null && echo alive || echo dead)"
	check_contains "log: the JVM exited" "JVM $P1 (KnownHeap) exited" "$(cat "$SV/serve.err")"
	# (killed, most likely, in the heavy query: a zombie until reaped, it is exited all the same)
	check "a JVM killed in a call: its exit is no failure of the call" "" \
		"$(grep "JVM $P1 (KnownHeap): .* exited .*\[[a-z_]*\]$" "$SV/serve.err")"
	check "errors: exited, counted once" "pid=$P1,jvm=KnownHeap,reason=exited 1" \
		"$(promql "max_over_time(heapsh_errors_total{reason=\"exited\",pid=\"$P1\"}[1m])")"
	local t1 t2
	t1=$(promql "timestamp(heapsh_query{query=\"orders7\",pid=\"$P2\"})" | awk '{ print $2 }')
	sleep 3
	t2=$(promql "timestamp(heapsh_query{query=\"orders7\",pid=\"$P2\"})" | awk '{ print $2 }')
	check "the other JVM's series go on: newer samples" yes \
		"$(python3 -c "print('yes' if float('${t2:-0}') > float('${t1:-0}') > 0 else 'no: $t1 $t2')")"
	check "... still the right value" "pid=$P2,jvm=second 100" "$(promql "heapsh_query{query=\"orders7\"}")"
	check "... and heapsh_up 1" "pid=$P2,jvm=second 1" "$(promql 'heapsh_up')"
	check "the exited JVM's series are gone from /metrics" "" \
		"$(curl -s "http://127.0.0.1:$EP/metrics" | grep "pid=\"$P1\"" | head -3)"

	# Another user's process is refused, even as root.
	if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
		setpriv --reuid 65534 --regid 65534 --clear-groups sleep 30 &
		local OP=$!
		SV_PIDS+=("$OP")
		sleep 0.3
		local OPORT
		OPORT=$(free_port)
		timeout 10 "$HEAPSH" --serve "127.0.0.1:$OPORT" --every 1s "$OP" 2>"$SV/other.err" &
		local OX=$!
		sleep 2
		kill -TERM "$OX"
		wait "$OX"
		check "another user's process: exit 0 after SIGTERM" 0 $?
		check_contains "another user's process: refused" \
			"JVM $OP belongs to uid 65534: heapsh --serve follows only the JVMs of its own user (uid 0), even as root; not followed" \
			"$(cat "$SV/other.err")"
	fi

	# Bad options: status 2 and why.
	"$HEAPSH" --serve 127.0.0.1:1 --every soon 1 2>"$SV/opt.err"
	check "--every soon: status 2" 2 $?
	check_contains "--every soon: says what a duration is" "takes a duration such as 500ms" "$(cat "$SV/opt.err")"
	"$HEAPSH" --serve 9400 2>"$SV/opt.err"
	check "neither --all nor PIDs: status 2" 2 $?

	# SIGTERM: stop serving, detach (the agent removes its socket), exit 0.
	check "the agent's socket is there before SIGTERM" yes "$([ -S "/tmp/.heapsh-$P2/agent.sock" ] && echo yes || echo no)"
	kill -TERM "$XP"
	local st
	wait "$XP"
	st=$?
	check "SIGTERM: exit status 0" 0 "$st"
	check_contains "SIGTERM: detached from the JVM" "detached from JVM $P2 (second)" "$(cat "$SV/serve.err")"
	# (a round takes about a second here, most of it the heavy query: the
	# signal nearly always interrupts a call, which is no failure of the JVM's)
	check "SIGTERM: the calls it interrupted are not logged as failures" "" \
		"$(sed -n '/: stopping$/,$p' "$SV/serve.err" | grep ' \[[a-z_]*\]$')"
	check "SIGTERM: the agent removed its socket" no "$([ -e "/tmp/.heapsh-$P2/agent.sock" ] && echo yes || echo no)"
	check "SIGTERM: the endpoint is closed" 000 "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$EP/metrics")"
	check "the JVM goes on after heapsh left" alive "$(kill -0 "$P2" 2>/dev/null && echo alive || echo dead)"
}

# An allocation recording a person started (tests/java/alloc/AllocWork.java,
# as t_alloc.sh runs it: exact, with accounts; accounts-A.csv its KNOWN
# FACTS): the exporter serves its accounts, allocated as counters and live
# as gauges, per account and class; the recording goes on after it leaves.
serve_alloc() {
	local AWD=$SV/aw fd i P=
	mkdir -p "$AWD"
	# shellcheck disable=SC2046
	if ! javac --release 11 -d "$AWD" $(find tests/java/alloc -name '*.java') 2>"$SV/aw.javac"; then
		fail "alloc: javac AllocWork" "$(head -3 "$SV/aw.javac")"
		return
	fi
	rm -f "$SV/aw.in" "$SV/aw.out"
	mkfifo "$SV/aw.in"
	exec {fd}<>"$SV/aw.in"
	SV_FDS+=("$fd")
	java -cp "$AWD" AllocWork wait <"$SV/aw.in" >"$SV/aw.out" 2>"$SV/aw.err" &
	SV_PIDS+=("$!")
	for ((i = 0; i < 300; i++)); do
		read -r _ P < <(grep '^ready ' "$SV/aw.out" 2>/dev/null)
		[ -n "$P" ] && break
		sleep 0.1
	done
	[ -n "$P" ] || { fail "alloc: AllocWork started" "$(head -5 "$SV/aw.err")"; return; }
	timeout 120 "$HEAPSH" --format csv -c ':alloc start --interval exact --depth 64 --live all --accounts com.acme.web,com.acme.xml.*' \
		"$P" >"$SV/aw.start" 2>&1
	check_contains "alloc: a recording started by a heapsh shell" "recording,running" "$(cat "$SV/aw.start")"
	local cmd
	for cmd in warm run; do
		echo "$cmd" >&"$fd"
		for ((i = 0; i < 600; i++)); do
			grep -q "^done $cmd" "$SV/aw.out" && break
			sleep 0.05
		done
	done
	# And a JVM that cannot be attached to: down, counted, and named from the start.
	serve_jvm noattach -XX:+DisableAttachMechanism || return
	local D=$SV_JVM
	local EP
	EP=$(free_port)
	timeout 120 "$HEAPSH" --serve "127.0.0.1:$EP" --every 1s --top 100 "$P" "$D" 2>"$SV/aw.serve.err" &
	local XP=$!
	SV_PIDS+=("$XP")
	for ((i = 0; i < 60; i++)); do
		curl -s "http://127.0.0.1:$EP/metrics" >"$SV/aw.metrics"
		grep -q '^heapsh_alloc_live_bytes{' "$SV/aw.metrics" && break
		sleep 0.5
	done
	# The four families of each accounted row, as account,class,objects,bytes,live objects,live bytes.
	check "alloc: the recording's accounts, exactly (accounts-A.csv)" "$(sort tests/java/alloc/accounts-A.csv)" \
		"$(python3 - "$SV/aw.metrics" "$P" <<'PY'
import re, sys
rows = {}
cols = {"heapsh_alloc_objects_total": 0, "heapsh_alloc_bytes_total": 1,
        "heapsh_alloc_live_objects": 2, "heapsh_alloc_live_bytes": 3}
for l in open(sys.argv[1]):
    m = re.match(r'^(heapsh_alloc_\w+)\{pid="(\d+)",jvm="[^"]*",host="[^"]*",account="([^"]*)",class="([^"]*)"\} (\S+)$', l)
    if not m or m.group(2) != sys.argv[2] or m.group(3) == "(none)":
        continue
    rows.setdefault((m.group(3), m.group(4)), [None] * 4)[cols[m.group(1)]] = m.group(5)
print("\n".join(sorted("%s,%s,%s" % (a, c, ",".join(str(v) for v in vs)) for (a, c), vs in rows.items())))
PY
)"
	# The same through Prometheus: PromQL over what it scraped, per account and class.
	local PROM_PORT
	prom_start alloc "$EP"
	wait_for "heapsh_alloc_live_objects{pid=\"$P\"}" 1 >/dev/null
	check "alloc, through Prometheus (PromQL): objects allocated and live per account and class" \
		"$(cut -d, -f1-3,5 tests/java/alloc/accounts-A.csv | sort)" \
		"$(for m in heapsh_alloc_objects_total heapsh_alloc_live_objects; do
			curl -s --max-time 10 "http://127.0.0.1:$PROM_PORT/api/v1/query" \
				--data-urlencode "query=$m{pid=\"$P\",account!=\"(none)\"}"; echo; done | python3 -c '
import json, sys
rows = {}
for k, line in enumerate(sys.stdin.read().split("\n")[:2]):
    for r in json.loads(line)["data"]["result"]:
        m = r["metric"]
        rows.setdefault((m["account"], m["class"]), [None, None])[k] = r["value"][1]
print("\n".join(sorted("%s,%s,%s,%s" % (a, c, v[0], v[1]) for (a, c), v in rows.items())))')"
	check_contains "alloc: counters are counters (# TYPE heapsh_alloc_bytes counter)" "# TYPE heapsh_alloc_bytes counter" \
		"$(cat "$SV/aw.metrics")"
	check_contains "alloc: live is a gauge" "# TYPE heapsh_alloc_live_bytes gauge" "$(cat "$SV/aw.metrics")"
	local H
	H=$(hostname)
	check "attach disabled: heapsh_up 0, the jvm label its main class all the same" \
		"heapsh_up{pid=\"$D\",jvm=\"KnownHeap\",host=\"$H\"} 0" "$(grep "^heapsh_up{pid=\"$D\"" "$SV/aw.metrics")"
	check "attach disabled: counted as attach errors" yes \
		"$(grep "^heapsh_errors_total{pid=\"$D\",jvm=\"KnownHeap\",host=\"$H\",reason=\"attach\"} [1-9]" "$SV/aw.metrics" >/dev/null && echo yes || echo no)"
	check_contains "attach disabled: logged with its reason" "JVM $D (KnownHeap): attach: " "$(cat "$SV/aw.serve.err")"
	kill -TERM "$XP"
	wait "$XP"
	check "alloc: SIGTERM: exit status 0" 0 $?
	check_contains "alloc: the recording goes on after the exporter left" "recording,running" \
		"$(timeout 60 "$HEAPSH" --keep-agent --format csv -c ':alloc status' "$P" 2>&1)"
	echo exit >&"$fd"
}

# metric_pids NAME PORT: the pids of NAME's samples at the exporter's /metrics, sorted.
metric_pids() {
	curl -s --max-time 5 "http://127.0.0.1:$2/metrics" | grep "^$1{" |
		sed 's/.*pid="\([0-9]*\)".*/\1/' | sort -n | tr '\n' ' ' | sed 's/ $//'
}

# until_pids NAME PORT WANT: metric_pids until it is WANT (or 30 s); prints the last.
until_pids() {
	local i got=
	for ((i = 0; i < 60; i++)); do
		got=$(metric_pids "$1" "$2")
		[ "$got" == "$3" ] && break
		sleep 0.5
	done
	printf '%s' "$got"
}

# A JVM whose agent closes idle connections after 1.5 s (HEAPSH_AGENT_IDLE_MS;
# a minute by default) while rounds come every 3 s: every round finds its
# connection closed, connects again and answers, and SIGTERM still tells
# the agent to leave (its socket removed), on a new connection.
serve_idle() {
	command -v prometheus >/dev/null || return
	local P EP XP i
	HEAPSH_AGENT_IDLE_MS=1500 serve_jvm idle || return
	P=$SV_JVM
	printf 'orders7: objects.count([it | it is Order and it.status = 7])\n' >"$SV/idle.hq"
	EP=$(free_port)
	timeout 120 "$HEAPSH" --serve "127.0.0.1:$EP" --watch "$SV/idle.hq" --every 3s "$P" 2>"$SV/idle.err" &
	XP=$!
	SV_PIDS+=("$XP")
	sleep 11	# the first round, then three after the agent closed the connection
	local M
	M=$(curl -s "http://127.0.0.1:$EP/metrics")
	check "idle connections closed by the agent: the JVM is still up" \
		"heapsh_up{pid=\"$P\",jvm=\"KnownHeap\",host=\"$(hostname)\"} 1" "$(printf '%s\n' "$M" | grep '^heapsh_up{')"
	check "idle connections closed by the agent: no error counted" "" \
		"$(printf '%s\n' "$M" | grep '^heapsh_errors_total{' | grep -v ' 0$')"
	check_contains "idle connections closed by the agent: the query still answers" \
		'query="orders7"} 100' "$M"
	check "idle connections closed by the agent: nothing logged of a lost connection" "" \
		"$(grep -i 'lost the connection' "$SV/idle.err")"
	kill -TERM "$XP"
	for ((i = 0; i < 100; i++)); do kill -0 "$XP" 2>/dev/null || break; sleep 0.1; done
	check "idle connections closed by the agent: SIGTERM, the agent removed its socket" "gone" \
		"$([ -e "/tmp/.heapsh-$P" ] && echo present || echo gone)"
}

# --all: every JVM of the exporter's user, found by a rescan every --every.
# The exporter and its JVMs run as a throwaway user, so that the JVMs other
# tests (or engineers) run as root on this machine are neither attached to
# nor counted; the policy that --all follows only its own user is what keeps
# them out, and the checks below say so.
serve_all() {
	if [ "$(id -u)" != 0 ] || ! command -v useradd >/dev/null || ! command -v setpriv >/dev/null; then
		ok "--all ... skipped (needs root, useradd and setpriv)"
		return
	fi
	SV_USER=heapsh-s$$
	if ! useradd -M -s /usr/sbin/nologin "$SV_USER" 2>"$SV/useradd.err"; then
		fail "useradd $SV_USER" "$(cat "$SV/useradd.err")"
		SV_USER=
		return
	fi
	local uid
	uid=$(id -u "$SV_USER")
	local SV_AS="setpriv --reuid=$uid --regid=$(id -g "$SV_USER") --clear-groups"
	serve_jvm all-a -Dheapsh.name=all-a || return
	local A=$SV_JVM
	printf 'orders7: objects.count([it | it is Order and it.status = 7])\n' >"$SV/all.hq"
	chmod 644 "$SV/all.hq"
	local EP
	EP=$(free_port)
	# A bare PORT: the exporter listens on 127.0.0.1 only.
	$SV_AS timeout 300 "$HEAPSH" --serve "$EP" --all --watch "$SV/all.hq" --every 1s \
		2>"$SV/all.err" &
	local XP=$!
	SV_PIDS+=("$XP")
	check "--all: follows the JVM of its user" "$A" "$(until_pids heapsh_up "$EP" "$A")"
	check_contains "a bare PORT: the log names 127.0.0.1" "serving http://127.0.0.1:$EP/metrics; all JVMs of this user" \
		"$(cat "$SV/all.err")"
	if command -v ss >/dev/null; then
		check "a bare PORT: listening on 127.0.0.1 only" "127.0.0.1:$EP" \
			"$(ss -Hltn "sport = :$EP" | awk '{ print $4 }')"
	fi
	check "--all: its watch query answers" 'heapsh_query{pid="'"$A"'",jvm="all-a",host="'"$(hostname)"'",query="orders7"} 100' \
		"$(for ((i = 0; i < 30; i++)); do
			curl -s "http://127.0.0.1:$EP/metrics" | grep -q "^heapsh_query{pid=\"$A\"" && break
			sleep 0.5
		done; curl -s "http://127.0.0.1:$EP/metrics" | grep "^heapsh_query{pid=\"$A\"")"
	serve_jvm all-b -Dheapsh.name=all-b || return
	local B=$SV_JVM
	check "--all: a JVM started later is picked up by the rescan" "$A $B" \
		"$(until_pids heapsh_up "$EP" "$A $B")"
	local p others=
	for p in $(metric_pids heapsh_up "$EP"); do
		[ "$(stat -c %u "/proc/$p" 2>/dev/null)" = "$uid" ] || others+=" $p"
	done
	check "--all: no JVM of another user (root's, of other tests, are running now)" "" "$others"
	check "--all: heapsh_jvms counts them" "heapsh_jvms{host=\"$(hostname)\"} 2" \
		"$(curl -s "http://127.0.0.1:$EP/metrics" | grep '^heapsh_jvms{')"
	kill -9 "$A"
	wait "$A" 2>/dev/null
	rm -rf "/tmp/.heapsh-$A" "/tmp/.java_pid$A"
	check "--all: an exited JVM is forgotten, the other followed on" "$B" \
		"$(until_pids heapsh_up "$EP" "$B")"
	check_contains "--all: log: the exited JVM" "JVM $A (all-a) exited" "$(cat "$SV/all.err")"
	check "--all: the exporter never attached to another user's JVM" "" \
		"$(grep 'following JVM' "$SV/all.err" | grep -vE "following JVM ($A|$B) ")"
	kill -TERM "$XP"
	wait "$XP"
	check "--all: SIGTERM: exit status 0" 0 $?
	check "--all: SIGTERM: the agent removed its socket" no \
		"$([ -e "/tmp/.heapsh-$B/agent.sock" ] && echo yes || echo no)"
}

serve_main
serve_alloc
serve_idle
serve_all
serve_cleanup
trap - EXIT INT TERM
