# t_live.sh - heapsh on running JVMs (docs/agent.md, docs/protocol.md): the
# live histogram against jcmd GC.class_histogram, a snapshot against a HotSpot
# dump of the same quiescent process, queries pushed down into the JVM, the
# failures (not a JVM, attach disabled, no such process, a JVM killed in the
# middle of a snapshot), :detach / :attach / :dump, hostile clients of the
# agent's socket (tests/hostile_client.py), other users, and JDK 25 when it is
# installed. The JVMs run tests/java/KnownHeap.java (wait mode) and
# tests/java/BigLive.java; their KNOWN FACTS are the expectations. Every
# process started here is killed at the end, failed checks or not, and every
# heapsh, jcmd and client runs under a timeout.
L=$T/live
mkdir -p "$L"
LIVE_PIDS=()	# everything started here
LIVE_FDS=()	# write ends of the JVMs' stdin
LIVE_USER=	# the throwaway user, while it exists
JDK25=${JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}

live_cleanup() {
	local fd p
	for fd in ${LIVE_FDS[@]+"${LIVE_FDS[@]}"}; do exec {fd}>&-; done
	for p in ${LIVE_PIDS[@]+"${LIVE_PIDS[@]}"}; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
		rm -rf "/tmp/.heapsh-$p" "/tmp/.java_pid$p"	# left by JVMs killed with -9
	done
	LIVE_FDS=()
	LIVE_PIDS=()
	if [ -n "$LIVE_USER" ]; then
		userdel "$LIVE_USER" 2>/dev/null
		LIVE_USER=
	fi
}
trap live_cleanup EXIT
trap 'live_cleanup; exit 130' INT TERM

# live_start NAME MAIN JAVA [FLAGS...]: java class MAIN (waiting on stdin,
# held open by us) under JAVA. Sets LIVE_PID to the pid it printed on its
# "ready PID" line ("" when it did not start).
live_start() {
	local name=$1 main=$2 java=$3 fd i
	shift 3
	LIVE_PID=
	rm -f "$L/$name.in" "$L/$name.out" "$L/$name.err"
	mkfifo "$L/$name.in"
	exec {fd}<>"$L/$name.in"	# read-write: never blocks, even if java does not start
	LIVE_FDS+=("$fd")
	"$java" "$@" -cp "$JAVA_OUT" "$main" wait <"$L/$name.in" >"$L/$name.out" 2>"$L/$name.err" &
	LIVE_PIDS+=("$!")
	for ((i = 0; i < 600; i++)); do
		read -r _ LIVE_PID < <(grep '^ready ' "$L/$name.out" 2>/dev/null)
		[ -n "$LIVE_PID" ] && return 0
		kill -0 "${LIVE_PIDS[-1]}" 2>/dev/null || break
		sleep 0.1
	done
	fail "$name: $main started" "$(head -5 "$L/$name.err" 2>/dev/null)"
	return 1
}

# hsl ARGS...: heapsh under a timeout; stderr goes to $L/err.
hsl() { timeout 120 "$HEAPSH" "$@" 2>"$L/err"; }
# hs_session FILE [PID|DUMP]: the commands in FILE with --echo, csv, on JVM
# PID or DUMP or nothing; stdout to FILE.out, stderr to FILE.err, status in HS_ST.
hs_session() {
	timeout 120 "$HEAPSH" --echo --format csv -f "$1" ${2:+"$2"} >"$1.out" 2>"$1.err"
	HS_ST=$?
}
# answer OUT N: the output of the Nth command (from 1) of a --echo session.
answer() {
	awk -v n="$2" '/^heapsh> / { k++; next } k == n && NF' "$1"
}
alive() { kill -0 "$1" 2>/dev/null && echo alive || echo dead; }
# info_ok PID: "yes" when heapsh -c ':info' PID names the JVM.
info_ok() {
	hsl --keep-agent --format csv -c ":info" "$1" | grep -q "^jvm,\"pid $1, " && echo yes || echo no
}
# ours: the rows of KnownHeap's own classes (and their arrays) of a csv histogram, sorted.
ours() {
	grep -E '^(Order|Leaf|Shared|Owner|CycleNode|Measure|Child|Holder|HolderThread)(\[\])*,' | sort
}
COUNT7='objects.count([it | it is Order and it.status = 7])'

live_main() {
	local i s e ms
	javac -d "$JAVA_OUT" tests/java/BigLive.java
	check_status "BigLive compiles" 0 $?
	cp "$KNOWN" "$L/known.hprof"	# other runs may rewrite $KNOWN meanwhile
	live_start k17 KnownHeap java || return
	local KP=$LIVE_PID

	# 0. Before anything collects: 50 garbage Orders with status 7 are still
	# in the heap (the protocol's heap walk without a GC sees 150); heapsh's
	# push-down collects first and counts the 100 live ones.
	check "agent loaded by :info" yes "$(info_ok "$KP")"
	check "the heap holds 50 garbage Orders with status 7 (walk without a GC: 150)" 150 \
		"$(timeout 60 python3 bench/live_instances.py "/tmp/.heapsh-$KP/agent.sock" Order status 7 3 |
			awk '{ print $4 }')"
	check "push-down counts the live Orders only (a GC first)" 100 \
		"$(hsl -c "$COUNT7" "$KP")"

	# 1. The live histogram is jcmd GC.class_histogram's, class by class.
	local JH MINE
	JH=$(timeout 60 jcmd "$KP" GC.class_histogram | awk '$1 ~ /^[0-9]+:$/ {
		n = $4; while (n ~ /^\[/) { n = substr(n, 2); a = a "[]" }
		if (n ~ /^L.*;$/) n = substr(n, 2, length(n) - 2)
		print n a "," $2 "," $3; a = "" }' | ours)
	MINE=$(hsl --format csv -c ':histogram' "$KP" | ours)
	check "live histogram has KnownHeap's 12 classes" 12 "$(printf '%s\n' "$MINE" | grep -c .)"
	check_contains "live histogram: Order 1000 instances, 40000 bytes" "Order,1000,40000" "$MINE"
	check "live histogram = jcmd GC.class_histogram (instances and bytes)" "$JH" "$MINE"
	check "live histogram csv header" "class,instances,shallow_bytes" \
		"$(hsl --format csv -c ':histogram --top 1' "$KP" | head -1)"
	check "live histogram from HotSpot's heap inspection" \
		"live histogram of JVM $KP after a full GC, from HotSpot's heap inspection (as jcmd GC.class_histogram)" \
		"$(hsl -c ':histogram --top 1' "$KP" | tail -1)"
	check "the agent's histogram (--via agent) = jcmd GC.class_histogram" "$JH" \
		"$(hsl --format csv -c ':histogram --via agent' "$KP" | ours)"
	check "--via agent says where it counted" \
		"live histogram of JVM $KP after a full GC, from the agent's heap iteration (bytes as GetObjectSize)" \
		"$(hsl -c ':histogram --via agent --top 1' "$KP" | tail -1)"
	check "--via on a dump is an error" "heapsh: --via applies to the histogram of an attached JVM, without --retained" \
		"$(hsl -c ':histogram --via vm' "$L/known.hprof" >/dev/null; cat "$L/err")"

	# 2. A snapshot and a HotSpot dump of the same quiescent process agree.
	local CLASSES="Order Order[] Leaf Shared Owner CycleNode Measure Measure[] Child Child[] Holder HolderThread"
	local c
	{
		echo ':histogram --retained'
		for c in $CLASSES; do
			echo "objects.filter([it | it.class.name = \"$c\"]).map([it | it.retained])"
		done
	} >"$L/cmp.hsh"
	hs_session "$L/cmp.hsh" "$KP"
	mv "$L/cmp.hsh.out" "$L/cmp.snapshot"
	check_status "snapshot session: exit 0" 0 "$HS_ST"
	rm -f "$L/k17.hprof" "$L/k17.hprof.hsidx"
	timeout 120 jcmd "$KP" GC.heap_dump "$PWD/$L/k17.hprof" >/dev/null
	hs_session "$L/cmp.hsh" "$L/k17.hprof"
	mv "$L/cmp.hsh.out" "$L/cmp.dump"
	check_status "dump session: exit 0" 0 "$HS_ST"
	local SH DH
	SH=$(answer "$L/cmp.snapshot" 1 | ours)
	DH=$(answer "$L/cmp.dump" 1 | ours)
	check_contains "snapshot: Order 1000 instances, 40000 shallow, 42800 retained" "Order,1000,40000,42800" "$SH"
	check "snapshot and dump: same histogram with retained sizes for KnownHeap's classes" "$DH" "$SH"
	# A report of a snapshot names the JVM, not the snapshot's temporary file.
	hsl -c ":report $L/snap.html" "$KP" >/dev/null
	check_contains "report of a snapshot names the JVM" "<title>Heap report: snapshot of JVM $KP (KnownHeap, " \
		"$(cat "$L/snap.html" 2>/dev/null)"
	check "report of a snapshot: no temporary file named" "" "$(grep -o 'heapsh-snap[^<]*' "$L/snap.html" | head -1)"
	i=2
	for c in $CLASSES; do
		s=$(answer "$L/cmp.snapshot" $i | grep -v '^value$' | sort -n)
		e=$(answer "$L/cmp.dump" $i | grep -v '^value$' | sort -n)
		if [ -n "$s" ]; then
			check "snapshot and dump: retained sizes of each $c" "$e" "$s"
		else
			fail "snapshot and dump: retained sizes of each $c" "no values from the snapshot"
		fi
		i=$((i + 1))
	done
	check "snapshot: Order[] retains its 990 Orders, 40 strings and its class" \
		$((4016 + 990 * 40 + 40 * (24 + 32) + 72)) "$(answer "$L/cmp.snapshot" 3 | tail -1)"

	# 3. Push-down: evaluated inside the JVM, no snapshot; then the graph.
	cat >"$L/push.hsh" <<-EOF
		:format table
		:timer on
		$COUNT7
		objects.count([it | it is Order and it.status = 7 and it.customer = "customer-7"])
		objects.count([it | it is Order and (it.status = 7 or it.status = 3)])
		objects.count([it | it is Order and not (it.status = 7)])
		objects.count([it | it is Order and it.status = 7 and not (it.customer = "customer-7")])
		objects.exists([it | it is Order and it.status = 11])
		objects.exists([it | it is Order and it.status = 7])
		objects.count([it | it is Order and it.amount >= 1000.5])
		objects.count([it | it is Grandparent and it.g >= 3])
		:format csv
		objects.filter([it | it is Order and it.status = 7 and it.customer = "customer-7"])
		:info
		:retained Owner
		:info
	EOF
	hs_session "$L/push.hsh" "$KP"
	local P=$L/push.hsh.out
	check_status "push-down session: exit 0" 0 "$HS_ST"
	check "push-down: 100 Orders with status 7" 100 "$(answer "$P" 3)"
	check "push-down: 20 with status 7 and customer-7" 20 "$(answer "$P" 4)"
	check "push-down: or" 200 "$(answer "$P" 5)"
	check "push-down: not" 900 "$(answer "$P" 6)"
	check "push-down: and not on a String field" 80 "$(answer "$P" 7)"
	check "push-down: exists status 11 is false" false "$(answer "$P" 8)"
	check "push-down: exists status 7 is true" true "$(answer "$P" 9)"
	check "push-down: a double comparison (amount >= 1000.5)" 333 "$(answer "$P" 10)"
	check "push-down: subclasses and an inherited field (Grandparent.g)" 4 "$(answer "$P" 11)"
	check "push-down: filter rows show the field values" \
		"$(echo class,id,status,amount,customer,next
		   awk 'BEGIN { for (i = 7; i < 1000; i += 50) printf "Order,%d,7,%g,customer-7,\n", i, i * 1.5 }' | sort)" \
		"$(answer "$P" 13 | head -1; answer "$P" 13 | tail -n +2 | sort)"
	check "push-down: evaluated inside the JVM, 9 times" 9 \
		"$(grep -c "^evaluated inside JVM $KP: .* no snapshot taken" "$L/push.hsh.err")"
	check_contains "push-down: Orders examined in the JVM" "1000 instances of Order examined, 100 matched" "$(cat "$L/push.hsh.err")"
	check "push-down: :info still says no snapshot" \
		'snapshot,none yet (the first command that needs the object graph takes it)' \
		"$(answer "$P" 14 | grep '^snapshot,')"
	check "push-down, then :retained Owner takes a snapshot in the same session" \
		"2,all 2 instances of Owner,48,1104" "$(answer "$P" 15 | tail -1)"
	check "exactly one snapshot in the push-down session" 1 "$(grep -c "^snapshot of JVM $KP: " "$L/push.hsh.err")"
	check_contains "then :info shows the snapshot" "snapshot,taken " "$(answer "$P" 16)"

	# 3b. Lua's heap:query routes as the shell's (issue 36): inside the JVM,
	# no snapshot, its lets kept; a query that needs the graph takes one.
	cat >"$L/query.lua" <<-'EOF'
		local h = assert(heapsh.current())
		print("before=" .. tostring(h))
		print("count7=" .. tostring(h:query("objects.count([it | it is Order and it.status = 7])")))
		print("let=" .. select("#", h:query("let sevens = objects.count([it | it is Order and it.status = 7])")))
		print("sevens=" .. tostring(h:query("sevens + 1")))
		print("exists=" .. tostring(h:query("objects.exists([it | it is Order and it.status = 11])")))
		print("between=" .. tostring(h))
		print("retained=" .. tostring(h:query("objects.filter([it | it is Owner]).map([o | o.retained]).sum()")))
		print("after=" .. tostring(h))
	EOF
	local LQ
	LQ=$(timeout 120 "$HEAPSH" -l "$L/query.lua" "$KP" 2>"$L/query.lua.err")
	lkv() { printf '%s\n' "$LQ" | awk -v k="$1" 'index($0, k "=") == 1 { print substr($0, length(k) + 2); exit }'; }
	check "Lua heap:query on a JVM: inside it, no snapshot" \
		"<heap: JVM $KP, no snapshot> 100 0 101 false <heap: JVM $KP, no snapshot>" \
		"$(lkv before) $(lkv count7) $(lkv let) $(lkv sevens) $(lkv exists) $(lkv between)"
	check "Lua heap:query on a JVM: a query of retained sizes takes a snapshot (each Owner retains itself)" \
		"48 yes" "$(lkv retained) $(lkv after | grep -q "^<heap: JVM $KP, a snapshot of [0-9]* objects>$" && echo yes || echo no: "$(lkv after)")"

	# 4. Failures, each followed by a command of the same session.
	sleep 300 &
	local SP=$!
	LIVE_PIDS+=("$SP")
	for ((i = 0; i < 100; i++)); do [ "$(cat /proc/$SP/comm 2>/dev/null)" = sleep ] && break; sleep 0.02; done
	printf ':attach %s\n:attach %s\n%s\n' "$SP" "$KP" "$COUNT7" >"$L/nojvm.hsh"
	hs_session "$L/nojvm.hsh"
	check_contains "not a JVM: said so" "is not a HotSpot JVM" "$(cat "$L/nojvm.hsh.err")"
	check "not a JVM: the next commands run (:attach, a query)" 100 "$(answer "$L/nojvm.hsh.out" 3)"
	check_status "not a JVM: exit 2" 2 "$HS_ST"
	sleep 0.2
	check "not a JVM: sleep is still alive" alive "$(alive "$SP")"

	if live_start disabled KnownHeap java -XX:+DisableAttachMechanism; then
		local DP=$LIVE_PID
		printf ':attach %s\n:attach %s\n%s\n' "$DP" "$KP" "$COUNT7" >"$L/disabled.hsh"
		hs_session "$L/disabled.hsh"
		check_contains "attach disabled: names the flag" "-XX:+DisableAttachMechanism" "$(cat "$L/disabled.hsh.err")"
		check "attach disabled: the next commands run" 100 "$(answer "$L/disabled.hsh.out" 3)"
		check "attach disabled: the JVM is still alive" alive "$(alive "$DP")"
	fi

	# The agent loaded at start-up in a JVM whose attach mechanism is off:
	# heapsh connects to the agent's socket; the histogram is the agent's.
	local AGENT_SO
	AGENT_SO=$(cd "$(dirname "$HEAPSH")" && pwd)/libheapsh_agent.so
	if live_start agentonly KnownHeap java "-agentpath:$AGENT_SO" -XX:+DisableAttachMechanism; then
		local AP=$LIVE_PID
		check "attach off, agent at start-up: the histogram = jcmd's of the same program" "$JH" \
			"$(hsl --format csv -c ':histogram' "$AP" | ours)"
		check_contains "attach off: says the agent counted instead" "the agent counted instead" \
			"$(cat "$L/err")"
		check_contains "attach off: --via vm says why it cannot" "-XX:+DisableAttachMechanism" \
			"$(hsl -c ':histogram --via vm' "$AP"; cat "$L/err")"
		check "attach off: push-down" 100 "$(hsl -c "$COUNT7" "$AP")"
		check "attach off: an agent loaded at start-up stays when heapsh leaves" present \
			"$([ -e "/tmp/.heapsh-$AP" ] && echo present || echo absent)"
		printf ':timer on\n:retained Owner\n' >"$L/off.hsh"
		hs_session "$L/off.hsh" "$AP"
		check "attach off: a snapshot all the same: :retained Owner" "2,all 2 instances of Owner,48,1104" \
			"$(answer "$L/off.hsh.out" 2 | tail -1)"
		check_contains "attach off: the agent had HotSpot dump the heap" \
			"HotSpotDiagnosticMXBean.dumpHeap, through the agent" "$(cat "$L/off.hsh.err")"
	fi

	local NP
	NP=$(cat /proc/sys/kernel/pid_max)	# pids are below pid_max: never a process
	printf ':attach %s\n:attach %s\n%s\n' "$NP" "$KP" "$COUNT7" >"$L/nopid.hsh"
	hs_session "$L/nopid.hsh"
	check_contains "no such process: said so" "no process $NP" "$(cat "$L/nopid.hsh.err")"
	check "no such process: the next commands run" 100 "$(answer "$L/nopid.hsh.out" 3)"
	check "no such process: exit 2 from heapsh PID" 2 "$(hsl -c ':info' "$NP" >/dev/null; echo $?)"

	# A JVM killed with -9 in the middle of a snapshot (HotSpot writing its dump).
	if live_start big BigLive java -Xmx1g; then
		local BP=$LIVE_PID
		hsl -c ':info' "$BP" >/dev/null
		# A list of 2,000,000 objects is more than the agent can gather in
		# time (HotSpot's GetObjectsWithTags compares every tagged object with
		# every tag, in a call no cancel stops: it ran for minutes): the agent
		# says so at once, and a snapshot answers.
		check "BigLive: a list of 2,000,000 Cells: the snapshot's answer" 2000000 \
			"$(hsl -c 'objects.filter([it | it is Cell and it.n >= 0]).map([c | c.n]).length' "$BP")"
		check_contains "BigLive: ... the agent said why it left the list to a snapshot" \
			"a list of 2000000 objects is more than the agent can gather from the JVM in time" "$(cat "$L/err")"
		mkdir -p "$L/tmpd"
		rm -rf "$L/tmpd"/*
		printf ':retained Cell\n:open %s\n:histogram Order\n:attach %s\n%s\n' \
			"$L/known.hprof" "$KP" "$COUNT7" >"$L/kill.hsh"
		TMPDIR=$PWD/$L/tmpd timeout 120 "$HEAPSH" --echo --format csv -f "$L/kill.hsh" "$BP" \
			>"$L/kill.hsh.out" 2>"$L/kill.hsh.err" &
		local HP=$!
		# The JVM creates the dump's file in heapsh's private directory as it starts to write.
		for ((i = 0; i < 3000; i++)); do
			compgen -G "$L/tmpd/heapsh-snap-*/snapshot.hprof" >/dev/null && break
			sleep 0.005
		done
		if compgen -G "$L/tmpd/heapsh-snap-*/snapshot.hprof" >/dev/null; then
			ok "BigLive: the dump's file appeared in heapsh's private directory"
		else fail "BigLive: the dump's file appeared in heapsh's private directory" "$(ls -R "$L/tmpd")"; fi
		{ kill -9 "$BP"; wait "$BP"; } 2>/dev/null	# no "Killed" job notice
		wait "$HP"
		local KE
		KE=$(cat "$L/kill.hsh.err")
		check_contains "JVM killed during a snapshot: the snapshot failed" "snapshot of JVM $BP failed" "$KE"
		check_contains "JVM killed during a snapshot: says the JVM exited" "JVM $BP exited" "$KE"
		check "JVM killed during a snapshot: no temporary file or directory left" "" "$(ls "$L/tmpd")"
		check "JVM killed: the next command (:open DUMP) runs" "" "$(grep "kill.hsh:2:" <<<"$KE")"
		check "JVM killed: after :open DUMP, :histogram shows the dump, not the dead JVM" \
			"class,instances,shallow_bytes
Order,1000,40000" "$(answer "$L/kill.hsh.out" 3 | head -2)"
		check "JVM killed: then :attach to another JVM and a query work" 100 "$(answer "$L/kill.hsh.out" 5)"
	fi

	# :detach removes the socket; :attach again; :dump opens what it wrote.
	hsl -c ':detach' "$KP" >/dev/null
	check "detach: the agent removed its socket directory" absent \
		"$([ -e "/tmp/.heapsh-$KP" ] && echo present || echo absent)"
	rm -f "$L/dumped.hprof"
	cat >"$L/detach.hsh" <<-EOF
		$COUNT7
		:detach
		:attach $KP
		$COUNT7
		:dump $L/dumped.hprof
		:histogram Order --retained
		:info
	EOF
	hs_session "$L/detach.hsh" "$KP"
	local D=$L/detach.hsh.out
	check_status "detach session: exit 0" 0 "$HS_ST"
	check "after :detach of the previous session, heapsh PID attaches again" 100 "$(answer "$D" 1)"
	check "detach: says so" "detached from JVM $KP; the agent stopped and removed its socket" "$(answer "$D" 2)"
	check "detach, then :attach again: the query runs" 100 "$(answer "$D" 4)"
	check ":dump: then the dump's histogram with retained sizes" \
		"class,instances,shallow_bytes,retained_bytes
Order,1000,40000,42800" "$(answer "$D" 6)"
	check_contains ":dump: the session has the dump open" "file,$PWD/$L/dumped.hprof" "$(answer "$D" 7)"
	check_contains ":dump: says what it wrote" "wrote $PWD/$L/dumped.hprof: $(stat -c %s "$L/dumped.hprof") bytes, " \
		"$(cat "$D.err" 2>/dev/null; cat "$L/detach.hsh.err" 2>/dev/null)"
	check "the file :dump wrote opens on its own" "Order,1000,40000" \
		"$(hsl --no-index --format csv -c ':histogram Order' "$L/dumped.hprof" | grep '^Order,')"

	# 5. Hostile clients: each leaves the agent serving and the JVM alive.
	local SOCK=/tmp/.heapsh-$KP/agent.sock out
	check "hostile clients: the agent is there to meet them" yes "$(info_ok "$KP")"
	for c in valid nested-ok random truncated zero-length huge-length over-limit unknown-type \
		long-string deep-predicate before-hello bad-magic alloc-short alloc-long-string alloc-extra \
		leaks-rows leaks-row-short \
		alloc-bad analyze-magic analyze-forward analyze-deep analyze-cut analyze-counts \
		analyze-random analyze-trailing analyze-ok analyze-cancel analyze-time analyze-memory; do
		out=$(timeout 60 python3 tests/hostile_client.py "$SOCK" "$c" 2>&1)
		check "hostile client $c: exit 0 ($out)" 0 $?
		[ "$c" = valid ] && check_contains "hostile client valid: INFO has the pid" "pid $KP" "$out"
		[ "$c" = nested-ok ] && check_contains "hostile client nested-ok: all Orders" "examined 1000 matched 1000" "$out"
		[ "$c" = analyze-ok ] && check_contains "hostile client analyze-ok: the value" "3, then INFO answered" "$out"
		check "after $c: heapsh -c :info still works" yes "$(info_ok "$KP")"
		check "after $c: the JVM is alive" alive "$(alive "$KP")"
	done
	# A slow client (half a request) holds the agent, which serves requests one
	# at a time, until its 10 s frame timeout: heapsh started meanwhile is
	# answered once it is dropped.
	timeout 60 python3 tests/hostile_client.py "$SOCK" slow >"$L/slow.out" 2>&1 &
	local SC=$!
	sleep 1
	check "slow client: heapsh is answered after the agent drops it" yes "$(info_ok "$KP")"
	wait "$SC"
	check "slow client: closed by the frame timeout ($(cat "$L/slow.out"))" 0 $?
	check "after the slow client: the JVM is alive" alive "$(alive "$KP")"

	# Other users: the socket's directory is private, the JVM refuses them,
	# and a connection that gets through is closed (SO_PEERCRED).
	local PY=/usr/bin/python3
	if [ "$(id -u)" != 0 ] || ! command -v useradd >/dev/null || ! command -v setpriv >/dev/null ||
		[ ! -x "$PY" ]; then
		ok "other users ... skipped (needs root, useradd, setpriv and $PY)"
	else
		LIVE_USER=heapsh-t$$
		if ! useradd -M -s /usr/sbin/nologin "$LIVE_USER" 2>"$L/useradd.err"; then
			fail "useradd $LIVE_USER" "$(cat "$L/useradd.err")"
			LIVE_USER=
		else
			local AS="setpriv --reuid=$(id -u "$LIVE_USER") --regid=$(id -g "$LIVE_USER") --clear-groups"
			check "socket directory mode" 700 "$(stat -c %a "/tmp/.heapsh-$KP")"
			out=$(timeout 30 $AS "$PY" tests/hostile_client.py "$SOCK" connect 2>&1)
			check "another user cannot connect to the socket ($out)" "denied: EACCES" "$out"
			out=$(timeout 60 $AS "$HEAPSH" -c ':info' "$KP" 2>&1)
			check "another user cannot attach: exit 2" 2 $?
			check_contains "another user cannot attach: says why" "a JVM accepts attach requests only from its own user or root" "$out"
			local DM SM
			DM=$(stat -c %a "/tmp/.heapsh-$KP")
			SM=$(stat -c %a "$SOCK")
			chmod 711 "/tmp/.heapsh-$KP" && chmod 777 "$SOCK"
			out=$(timeout 30 $AS "$PY" tests/hostile_client.py "$SOCK" peer 2>&1)
			check "another user's connection is closed unanswered ($out)" 0 $?
			chmod "$SM" "$SOCK"
			chmod "$DM" "/tmp/.heapsh-$KP"
			check "after the other user: heapsh -c :info still works" yes "$(info_ok "$KP")"
			userdel "$LIVE_USER"
			LIVE_USER=
		fi
	fi

	# 6. JDK 25: push-down, and a JVM that forbids loading agents.
	if [ ! -x "$JDK25/bin/java" ]; then
		ok "JDK 25 ... (skipped: no JDK 25)"
	else
		if live_start k25 KnownHeap "$JDK25/bin/java"; then
			local P25=$LIVE_PID
			printf '%s\n%s\n' "$COUNT7" ':retained Owner' >"$L/k25.hsh"
			hs_session "$L/k25.hsh" "$P25"
			check "JDK 25: push-down finds the 100 Orders with status 7" 100 "$(answer "$L/k25.hsh.out" 1)"
			check "JDK 25: then a snapshot: :retained Owner" "2,all 2 instances of Owner,48,1104" \
				"$(answer "$L/k25.hsh.out" 2 | tail -1)"
		fi
		if live_start noload KnownHeap "$JDK25/bin/java" -XX:-EnableDynamicAgentLoading; then
			local NL=$LIVE_PID
			out=$(hsl -c ':info' "$NL"; cat "$L/err")
			check_contains "JDK 25 -XX:-EnableDynamicAgentLoading: tells to use -agentpath" "agentpath" "$out"
			check_contains "JDK 25 -XX:-EnableDynamicAgentLoading: or the flag" "-XX:+EnableDynamicAgentLoading" "$out"
			check "JDK 25 -XX:-EnableDynamicAgentLoading: the JVM is alive" alive "$(alive "$NL")"
		fi
	fi
}

# A live snapshot tells the truth: on ShopServer (tests/java/ShopServer.java),
# whose leaking EventBus is held by the static field ShopServer.BUS, the snapshot
# heapsh takes and a jcmd GC.heap_dump of the same quiescent process (taken
# after :detach, so that the agent's thread is gone) give the same roots, the
# same path to the bus through the static field, the same retained sizes; the
# agent's own thread is not among the snapshot's threads or roots.
live_shop() {
	javac -d "$JAVA_OUT" tests/java/ShopServer.java || { fail "ShopServer compiles"; return; }
	live_start shop ShopServer java || return
	local SP=$LIVE_PID
	cat >"$L/shop.hsh" <<-'EOF'
		:roots
		:path ShopServer$EventBus
		:retained ShopServer$EventBus
		:histogram ShopServer* --retained
		:threads
		:roots thread
		:suspects
	EOF
	# :timer on first: the snapshot's line says where it came from (the answers move up one).
	{ echo ':timer on'; cat "$L/shop.hsh"; } >"$L/shop-t.hsh"
	hs_session "$L/shop-t.hsh" "$SP"
	awk '/^heapsh> / { k++ } k >= 2' "$L/shop-t.hsh.out" >"$L/shop.live"
	cp "$L/shop-t.hsh.err" "$L/shop.hsh.err"
	check_status "ShopServer: live session, exit 0" 0 "$HS_ST"
	check_contains "ShopServer: the snapshot came from HotSpot's heap dumper" \
		"from HotSpot's heap dump (jcmd GC.heap_dump" "$(cat "$L/shop.hsh.err")"
	check "ShopServer: the path to the bus goes through the static field BUS" \
		"2,static BUS,ShopServer\$EventBus" "$(answer "$L/shop.live" 2 | cut -d, -f1,2,4 | tail -1)"
	check "ShopServer: no JNI local on the path" "" "$(answer "$L/shop.live" 2 | grep -i 'jni')"
	check "ShopServer: the agent's thread is not among the threads" "" \
		"$(answer "$L/shop.live" 5 | grep heapsh-agent)"
	check "ShopServer: the four workers are" 4 "$(answer "$L/shop.live" 5 | grep -c ',shop-worker-')"
	# The dump right after (the session left, detaching the agent): what later
	# sessions do (an allocation recording, say) loads classes and adds roots.
	rm -f "$L/shop.hprof"
	timeout 120 jcmd "$SP" GC.heap_dump "$PWD/$L/shop.hprof" >/dev/null
	hs_session "$L/shop.hsh" "$L/shop.hprof"
	mv "$L/shop.hsh.out" "$L/shop.dump"
	# :roots: HotSpot holds a JNI global per compiler thread, and starts and
	# stops compiler threads as it likes (UseDynamicNumberOfCompilerThreads),
	# so that count may move by a few between two dumps; the other kinds may not.
	check "ShopServer: snapshot = dump: :roots but JNI globals" \
		"$(answer "$L/shop.dump" 1 | grep -v '^JNI global,')" "$(answer "$L/shop.live" 1 | grep -v '^JNI global,')"
	check "ShopServer: snapshot = dump: JNI globals within the compiler threads' churn" yes \
		"$(awk -F, '$1 == "JNI global" { v[n++] = $2 } END { d = v[0] - v[1]; print (n == 2 && d <= 2 && d >= -2) ? "yes" : "no: " v[0] " vs " v[1] }' \
			<(answer "$L/shop.dump" 1) <(answer "$L/shop.live" 1))"
	local n
	for n in 2 3 4 6; do
		check "ShopServer: snapshot = dump: $(sed -n "${n}p" "$L/shop.hsh")" \
			"$(answer "$L/shop.dump" $n | sed 's/0x[0-9a-f]*//g')" "$(answer "$L/shop.live" $n | sed 's/0x[0-9a-f]*//g')"
	done
	check_contains "ShopServer: live :suspects names the listeners' field" \
		'are held by `CopyOnWriteArrayList` in `static ShopServer.BUS.listeners`' "$(answer "$L/shop.live" 7)"
	check "ShopServer: snapshot = dump: the suspects of the program's own leaks" \
		"$(answer "$L/shop.dump" 7 | grep -E 'ShopServer|shop-worker' | sed 's/0x[0-9a-f]*//g')" \
		"$(answer "$L/shop.live" 7 | grep -E 'ShopServer|shop-worker' | sed 's/0x[0-9a-f]*//g')"
	check "ShopServer: snapshot = dump: the threads by name" \
		"$(answer "$L/shop.dump" 5 | cut -d, -f2 | sort)" "$(answer "$L/shop.live" 5 | cut -d, -f2 | sort)"
	check_contains "ShopServer: 2600 leaked listeners" "2600,all 2600 instances" \
		"$(hsl --format csv -c ':retained ShopServer$CustomerSession$1' "$L/shop.hprof")"
	# One class-name matcher, live or not (src/base/classname.h); checked against the dump below.
	local pat
	for pat in '*Shop*' CustomerSession ShopServer.Product 'ShopServer$Product' '*Session*1'; do
		hsl --format csv -c ":histogram $pat" "$SP" | cut -d, -f1,2 >"$L/shop.pat.$(echo "$pat" | tr -c 'A-Za-z0-9\n' _)"
	done
	check "ShopServer: live :histogram CustomerSession is the session class only" \
		"$(printf 'class,instances\nShopServer$CustomerSession,2600')" "$(cat "$L/shop.pat.CustomerSession")"
	check "ShopServer: live push-down with a nested name" 10 \
		"$(printf ':timer on\nobjects.count([it | it is ShopServer.Product and it.sku < 10])\n' |
			timeout 120 "$HEAPSH" "$SP" 2>"$L/err")"
	check_contains "ShopServer: live push-down, evaluated inside the JVM" "no snapshot taken" "$(cat "$L/err")"
	check "ShopServer: a member the agent cannot read (text) is answered from a snapshot" 1 \
		"$(printf ':timer on\nobjects.count([it | it is java.lang.String and it.text = \"product-7\"])\n' |
			timeout 120 "$HEAPSH" "$SP" 2>"$L/err")"
	check_contains "ShopServer: ... and says so" "the agent cannot evaluate this query in JVM $SP" "$(cat "$L/err")"
	# Leaving detaches the agent, unless something needs it (docs/agent.md, "Leaving").
	hsl -c ':info' "$SP" >/dev/null
	check "leaving: heapsh -c PID detached the agent (its socket went)" absent \
		"$([ -e "/tmp/.heapsh-$SP" ] && echo present || echo absent)"
	hsl --keep-agent -c ':info' "$SP" >/dev/null
	check "leaving: --keep-agent keeps it" present "$([ -e "/tmp/.heapsh-$SP" ] && echo present || echo absent)"
	rm -f "$L/shop1.in"
	mkfifo "$L/shop1.in"
	exec {fd1}<>"$L/shop1.in"
	timeout 120 "$HEAPSH" "$SP" <"$L/shop1.in" >"$L/shop1.out" 2>"$L/shop1.err" &
	local S1=$!
	echo ':info' >&"$fd1"
	for ((i = 0; i < 100; i++)); do grep -q 'heap used' "$L/shop1.out" 2>/dev/null && break; sleep 0.1; done
	check "two shells at once: the second is answered while the first stays connected" \
		"$(printf 'class,instances\nShopServer$EventBus,1')" \
		"$(hsl --format csv -c ':histogram ShopServer.EventBus' "$SP" | cut -d, -f1,2)"
	check_contains "two shells: leaving, the second says the first still uses the agent" \
		"heapsh's agent stays in JVM $SP: heapsh pid $(pgrep -P "$S1" | head -1) is using it" "$(cat "$L/err")"
	echo ':quit' >&"$fd1"
	wait "$S1"
	exec {fd1}>&-
	check "two shells: when the first quits too, the agent is gone" absent \
		"$([ -e "/tmp/.heapsh-$SP" ] && echo present || echo absent)"
	hsl -c ':alloc start --interval 64k' "$SP" >/dev/null
	check "leaving: an allocation recording keeps the agent" present \
		"$([ -e "/tmp/.heapsh-$SP" ] && echo present || echo absent)"
	check_contains "... and heapsh says so" "goes on without heapsh" "$(cat "$L/err")"
	hsl -c ':alloc stop' "$SP" >/dev/null
	check_contains "leaving: a stopped recording keeps it too" "for its stopped allocation recording" "$(cat "$L/err")"
	hsl -c ':alloc reset' "$SP" >/dev/null
	check "leaving: once the recording is dropped, the agent goes" absent \
		"$([ -e "/tmp/.heapsh-$SP" ] && echo present || echo absent)"
	for pat in '*Shop*' CustomerSession ShopServer.Product 'ShopServer$Product' '*Session*1'; do
		check "ShopServer: :histogram $pat, live = dump (classes and instances)" \
			"$(hsl --format csv -c ":histogram $pat" "$L/shop.hprof" | cut -d, -f1,2)" \
			"$(cat "$L/shop.pat.$(echo "$pat" | tr -c 'A-Za-z0-9\n' _)")"
	done
	check "ShopServer: the same count on the dump" 10 \
		"$(hsl -c 'objects.count([it | it is ShopServer.Product and it.sku < 10])' "$L/shop.hprof")"
}

# live_analyze NAME JAVA [FLAGS...]: analyses inside the JVM (issue 14). The
# paper's five listings (queries/) and other queries run inside a KnownHeap
# JVM and give, number for number and object for object, what they give on a
# dump taken right after with jcmd GC.heap_dump -all (no GC: the analysis'
# own full GC left the heap as the dump finds it). Then what does not run
# there (it falls back to a snapshot and says why), :explain, errors, the
# time limit, Ctrl-C, names of the session, and an oversized program.
live_analyze() {
	local name=$1 java=$2 q out
	shift 2
	local jcmd_bin
	jcmd_bin="$(dirname "$(readlink -f "$(command -v "$java")")")/jcmd"
	live_start "$name" KnownHeap "$java" "$@" || return
	local P=$LIVE_PID
	# The first attach loads the agent, whose first analysis makes objects
	# (management beans, class-loading locks) that the next GC may drop.
	hsl --keep-agent -c 'classes.count([c | c.name = "Order"])' "$P" >/dev/null
	for q in pi_check order_check reachable_from_threads hashmap_entries top_components; do
		# leaving detaches the agent: its thread is not in the dump either
		hsl --format csv -f "queries/$q.hq" "$P" >"$L/$name.$q.live"
		check "$name: listing $q runs inside the JVM (no snapshot, nothing refused)" "" \
			"$(grep -E 'taking a snapshot|error' "$L/err")"
		rm -f "$L/$name.$q.hprof"
		timeout 120 "$jcmd_bin" "$P" GC.heap_dump -all "$PWD/$L/$name.$q.hprof" >/dev/null
		hsl --format csv -f "queries/$q.hq" "$L/$name.$q.hprof" >"$L/$name.$q.dump"
		check "$name: listing $q inside the JVM = on a dump of it" \
			"$(cat "$L/$name.$q.dump")" "$(cat "$L/$name.$q.live")"
		# and on heapsh's own snapshot (:live off: the query takes one)
		{ echo ':live off'; cat "queries/$q.hq"; } >"$L/$name.$q.snap.hq"
		check "$name: listing $q inside the JVM = on a snapshot of it" \
			"$(cat "$L/$name.$q.live")" "$(hsl --format csv -f "$L/$name.$q.snap.hq" "$P")"
	done
	check "$name: pi_check: two Measures between 3.141 and 3.142" "all-jvm,true,2" \
		"$(tail -1 "$L/$name.pi_check.live")"
	check "$name: order_check: 1000 Orders, one with status 7" "all-jvm,true,1000" \
		"$(tail -1 "$L/$name.order_check.live")"
	check "$name: hashmap_entries: 10 rows of 6 objects, 176 bytes" \
		"$(for i in 0 1 2 3 4 5 6 7 8 9; do echo "$i,6,176"; done)" \
		"$(tail -n +2 "$L/$name.hashmap_entries.live")"
	check_contains "$name: top_components: the application loader's row" ",app," \
		"$(cat "$L/$name.top_components.live")"
	check "$name: reachable_from_threads: one row" 2 "$(grep -c . "$L/$name.reachable_from_threads.live")"
	# the note of an answer from inside the JVM
	hsl --keep-agent -f queries/reachable_from_threads.hq "$P" >/dev/null
	check_contains "$name: the answer says no snapshot was taken" \
		"inside JVM $P, no snapshot taken: 1 heap walk" "$(cat "$L/err")"
	# 33 set types in one request, one after the other on the same tags
	# (hva_settype.c: what joins is not tagged; the owners start afresh)
	local st i
	st="$(grep -v '^//' queries/reachable_from_threads.hq | grep -v instances_for)"
	for i in $(seq 33); do st+=" instances_for all have_names = \"r$i\""; done
	hsl --format csv -c "$st" "$P" >"$L/$name.gens"
	check "$name: 33 set types in one request: 33 answers, all the same" "33 1" \
		"$(grep -c '^r' "$L/$name.gens") $(grep '^r' "$L/$name.gens" | cut -d, -f2- | sort -u | wc -l)"
	# a set type defined by a snippet that ran inside the JVM serves the next one
	{ grep -v '^//' queries/reachable_from_threads.hq; echo 'instances_for all have_names = "again"'; } \
		>"$L/$name.again.hq"
	hsl --format csv -f "$L/$name.again.hq" "$P" >"$L/$name.again"
	check "$name: a set type of an earlier snippet that ran inside the JVM: no error, no snapshot" \
		"" "$(grep -E 'error|no set type|snapshot' "$L/err")"
	check_contains "$name: ... its instance" "again," "$(cat "$L/$name.again")"

	# Other queries: lists (ids are addresses, as the dump's), classes, loaders, threads.
	local QF=$L/$name.other.hq
	cat >"$QF" <<'EOF2'
objects.filter([it | it is Measure]).map([m | m.value])
objects.filter([it | it is Order and it.status = 3 and it.amount > 1400]).map([o | o.id])
objects.filter([it | it is Order and it.customer = "customer-7"]).map([o | o.id]).sum
objects.filter([it | it is Shared or it is Owner])
objects.filter([it | it is Order and it.status = 7]).sort_by([o | 0 - o.id]).first.id
classes.filter([c | c.name = "Order" or c.name = "Order[]" or c.name = "Leaf"]).map([c | c.name + " " + c.count + " " + c.shallow])
classloaders.map([l | l.name])
threads.map([t | t.name])
objects.count([it | it is java.lang.String and it.text = "owner-a"])
objects.filter([it | it is Child]).group_by([c | c.g]).map([g | g.key + ":" + g.count])
objects.count([it | it is java.lang.Class])
EOF2
	hs_session "$QF" "$P"
	check "$name: other queries run inside the JVM" "" "$(grep -E 'taking a snapshot|error' "$QF.err")"
	mv "$QF.out" "$L/$name.other.live"
	rm -f "$L/$name.other.hprof"
	timeout 120 "$jcmd_bin" "$P" GC.heap_dump -all "$PWD/$L/$name.other.hprof" >/dev/null
	hs_session "$QF" "$L/$name.other.hprof"
	local n
	for n in 1 2 3 5 6 7 8 9 10 11; do
		check "$name: inside the JVM = on the dump: $(sed -n "${n}p" "$QF")" \
			"$(answer "$QF.out" $n)" "$(answer "$L/$name.other.live" $n)"
	done
	check "$name: a list of objects: ids, classes and sizes as the dump's" \
		"$(answer "$QF.out" 4 | cut -d, -f1-3)" "$(answer "$L/$name.other.live" 4 | cut -d, -f1-3)"
	check "$name: Shared and two Owners" 4 "$(answer "$L/$name.other.live" 4 | wc -l | tr -d ' ')"

	# Every built-in the table says runs inside a JVM (src/dsl/builtins.c) does:
	# tests/data/builtins.txt has a query per row (test_builtins checks it
	# against the table and runs it on a dump).
	local recv names where bq
	while read -r recv names where bq; do
		case $recv in '#'*|'') continue ;; esac
		[ "$where" = anywhere ] || continue
		printf '%b\n' "$bq" >"$L/$name.bi.hq"
		hsl --keep-agent -f "$L/$name.bi.hq" "$P" >"$L/$name.bi.out"
		check "$name: builtins.txt: $names of a $recv runs inside the JVM" "" \
			"$(grep -E 'snapshot|error|cannot' "$L/err" | grep -v 'no snapshot taken')"
	done <tests/data/builtins.txt

	# What cannot run inside the JVM runs on a snapshot, and heapsh says why.
	out=$(hsl -c 'objects.filter([it | it is Order]).map([o | o.retained]).sum' "$P")
	check "$name: retained sizes: on a snapshot" "$((1000 * 40))" "$out"
	check_contains "$name: ... and heapsh says why" \
		"this query cannot run inside JVM $P: it reads 'retained', which needs the whole object graph (a heap dump); taking a snapshot" \
		"$(cat "$L/err")"
	out=$(hsl --keep-agent -c "#[$(seq -s, 1 2000)].count + classes.count([c | c.name = \"Order\"])" "$P")
	check "$name: an oversized program: on a snapshot, the same answer" 2001 "$out"
	check_contains "$name: ... refused before it is sent" "has more than 1024 items; taking a snapshot" \
		"$(cat "$L/err")"

	# :explain says where a query runs and why, and runs nothing.
	out=$(hsl --keep-agent -c ':explain objects.filter([it | it is Order]).map([o | o.status]).sum' "$P")
	check_contains "$name: :explain: inside the JVM" "inside JVM $P: the program is" "$out"
	out=$(hsl --keep-agent -c ':explain objects.filter([it | it is Order]).map([o | o.retained]).sum' "$P")
	check "$name: :explain: on a snapshot, and why" \
		"on a snapshot: it reads 'retained', which needs the whole object graph (a heap dump)" "$out"
	check "$name: :explain: a query without the heap" "in heapsh: it needs no heap (no snapshot is taken)" \
		"$(hsl --keep-agent -c ':explain 1 + 2' "$P")"
	check_contains "$name: :explain: a push-down" "(a filter pushed down: one heap iteration)" \
		"$(hsl --keep-agent -c ":explain $COUNT7" "$P")"
	cat >"$L/$name.explain.hq" <<'EOF2'
:explain
set_type Component:
	roots <- classloaders.filter([it | it.id = ENTITY.name])
	membership <- THIS in Unassigned and ((ref_kind = root and THIS.class.classloader in ENTITY) or (ref_kind != root and REFERRER in ENTITY))
	on_inclusion <- [ nbSize <- nbSize + THIS.shallow_size ]
	nbSize : int <- 0
instances_for Component have_names = classloaders.map([it | it.id])
:explain
set_type Last:
	roots <- threads
	membership <- THIS in Unassigned and REFERRER in ENTITY
	on_inclusion <- [ last <- THIS.shallow_size ]
	last : int <- 0
instances_for Last have_names = "x"
set_type Last:
	roots <- threads
	membership <- THIS in Unassigned and REFERRER in ENTITY
	on_inclusion <- [ last <- THIS.shallow_size ]
	last : int <- 0
instances_for Last have_names = "x"
EOF2
	hsl --keep-agent -f "$L/$name.explain.hq" "$P" >"$L/$name.explain.out"
	check_contains "$name: :explain of a set type: GC roots in step 3, growth in one walk" \
		"instances_for Component: roots through JNI; step 3: one walk of the whole heap (the membership may take GC roots without a referrer); growth: one walk from the members (every reference from a member is followed)" \
		"$(cat "$L/$name.explain.out")"
	check_contains "$name: :explain of an order-dependent on_inclusion: on a snapshot" \
		"instances_for Last: on a snapshot: objects join in the order of the JVM's walk" \
		"$(cat "$L/$name.explain.out")"
	check_contains "$name: ... and running it takes a snapshot, saying why" \
		"on_inclusion depends on the order objects join" "$(cat "$L/err")"

	# Names of the session go into the JVM; a name gets its value back from it.
	cat >"$L/$name.names.hq" <<'EOF2'
let k = 7
let byStatus = [o | o.status = k]
objects.filter([it | it is Order]).count(byStatus)
let total = objects.filter([it | it is Order]).map([o | o.status]).sum
total + 1
EOF2
	hs_session "$L/$name.names.hq" "$P"
	check "$name: session names inside the JVM: a constant and a lambda" 100 "$(answer "$L/$name.names.hq.out" 3)"
	check "$name: a let computed inside the JVM keeps its value" 4501 "$(answer "$L/$name.names.hq.out" 5)"
	check "$name: ... all without a snapshot" "" "$(grep 'snapshot' "$L/$name.names.hq.err")"

	# A runtime error inside the JVM: the snapshot's message and caret; the shell goes on.
	out=$(hsl --keep-agent -c 'objects.filter([it | it is Order and it.id / 0 = 1]).count' "$P")
	check "$name: a runtime error inside the JVM: exit status 2" 2 $?
	check "$name: ... reported as on a dump" \
		"$(hsl -c 'objects.filter([it | it is Order and it.id / 0 = 1]).count' "$L/$name.other.hprof"; cat "$L/err")" \
		"$(hsl --keep-agent -c 'objects.filter([it | it is Order and it.id / 0 = 1]).count' "$P"; cat "$L/err")"

	# A member called with too many arguments: the same error inside the JVM as on a dump.
	check "$name: arity: inside the JVM as on a dump" \
		"$(hsl -c 'objects.first([it | it is Order]).size(3)' "$L/$name.other.hprof"; cat "$L/err")" \
		"$(hsl --keep-agent -c 'objects.first([it | it is Order]).size(3)' "$P"; cat "$L/err")"

	# An error in a lambda of an earlier snippet: the same message (where in
	# that snippet) inside the JVM as on a dump.
	printf 'let f = [o | o.id / 0]\nobjects.filter([it | it is Order]).map(f).length\n' \
		>"$L/$name.earlier.hq"
	check "$name: an error in an earlier snippet's code: inside the JVM as on a dump" \
		"$(hsl -f "$L/$name.earlier.hq" "$L/$name.other.hprof"; cat "$L/err")" \
		"$(hsl --keep-agent -f "$L/$name.earlier.hq" "$P"; cat "$L/err")"
	check_contains "$name: ... it says where" "(in code from an earlier snippet, its line 1, column 21)" \
		"$(cat "$L/err")"

	# The time limit: the analysis stops in the JVM, a snapshot answers instead.
	# (a million steps, ten times: seconds inside the JVM, as on the snapshot)
	local HEAVY='objects.filter([it | it is Order]).map([o | objects.count([p | p is Leaf and p.a < o.id]) + objects.count([p | p is Leaf and p.a > o.id])]).sum'
	HEAVY="#[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map([k | $HEAVY + k]).sum"
	printf ':live --time 1\n%s\n' "$HEAVY" >"$L/$name.limit.hq"
	hsl --keep-agent -f "$L/$name.limit.hq" "$P" >"$L/$name.limit.out"
	check "$name: time limit: the answer from a snapshot" 4995055 "$(tail -1 "$L/$name.limit.out")"
	check_contains "$name: time limit: heapsh says so" \
		"cannot run inside JVM $P: the analysis reached its time limit; taking a snapshot" "$(cat "$L/err")"

	# Ctrl-C stops an analysis inside the JVM; the session and the agent go on.
	local CF=$L/$name.ctrlc fd hp t0 t1
	rm -f "$CF.in"
	mkfifo "$CF.in"
	exec {fd}<>"$CF.in"
	timeout 120 "$HEAPSH" --keep-agent "$P" <"$CF.in" >"$CF.out" 2>"$CF.err" {fd}>&- &
	hp=$!
	echo "#[1, 2, 3, 4, 5].map([j | $HEAVY + objects.filter([it | it is Leaf]).map([l | objects.count([o | o is Order and o.id < l.a])]).sum]).sum" >&$fd
	sleep 1.5
	t0=$(date +%s%N)
	kill -INT "$hp"
	echo 'classes.count([c | c.name = "Order"])' >&$fd
	exec {fd}>&-
	wait "$hp"
	t1=$(date +%s%N)
	check_contains "$name: Ctrl-C: the analysis inside the JVM stops" \
		"interrupted (the analysis inside JVM $P stopped)" "$(cat "$CF.err")"
	check "$name: Ctrl-C: the next query is answered inside the JVM" 1 "$(grep -c '^1$' "$CF.out")"
	check "$name: Ctrl-C: stopped within 10 s" yes "$( [ $(( (t1 - t0) / 1000000 )) -lt 10000 ] && echo yes || echo no)"
	check "$name: the JVM is alive after it all" alive "$(alive "$P")"
	rm -f "$L/$name".*.hprof
}

live_main
live_shop
live_analyze a17 java
if [ -x "$JDK25/bin/java" ]; then
	live_analyze a25 "$JDK25/bin/java" -XX:+EnableDynamicAgentLoading
fi
live_cleanup
trap - EXIT INT TERM
