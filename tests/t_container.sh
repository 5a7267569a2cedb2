# t_container.sh - heapsh on JVMs in their own pid and mount namespaces, as in
# a container (docs/agent.md, "JVMs in containers"): KnownHeap wait under
# `unshare --pid --mount --fork`, with a private /tmp and heapsh's own folder
# hidden inside, so that the JVM can open none of heapsh's files. heapsh
# attaches with no HEAPSH_AGENT (its agent copied into the container's /tmp),
# a query runs inside the JVM, a snapshot and :dump work through the
# container's /tmp; --keep-agent leaves the agent's socket there and a later
# heapsh uses it; loading the agent again reuses the copy the JVM has mapped;
# afterwards nothing of heapsh's is left there or in heapsh's own temporary
# folders. JDK 17 as root, and JDK 25 (when installed) as uid 65534. Then a
# container whose /tmp is noexec, and one whose /tmp is too small for a dump:
# the errors say why and what to do. Skipped when not root or when unshare
# is not allowed. Every process started here is killed at the end, failed
# checks or not.
C=$T/container
CTR_PIDS=()	# the unshare processes and the JVMs in them
CTR_FDS=()	# write ends of the JVMs' stdin
JDK25=${JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}

ctr_cleanup() {
	local fd p
	for fd in ${CTR_FDS[@]+"${CTR_FDS[@]}"}; do exec {fd}>&-; done
	for p in ${CTR_PIDS[@]+"${CTR_PIDS[@]}"}; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	CTR_FDS=()
	CTR_PIDS=()
}
trap ctr_cleanup EXIT
trap 'ctr_cleanup; exit 130' INT TERM

# ctr_start NAME JAVA TMPOPTS [AS]: KnownHeap wait under JAVA in new pid and
# mount namespaces, its /tmp a new tmpfs mounted with TMPOPTS, heapsh's folder
# ($CBIN) hidden under another; AS (optional) is a command the JVM runs under
# (setpriv, to run it as another user). Sets CTR_PID to the JVM's pid as we
# see it ("" when it did not start).
ctr_start() {
	local name=$1 java=$2 opts=$3 as=${4:-} fd i u
	CTR_PID=
	rm -f "$C/$name.in" "$C/$name.out" "$C/$name.err"
	mkfifo "$C/$name.in"
	exec {fd}<>"$C/$name.in"	# read-write: never blocks, even if java does not start
	CTR_FDS+=("$fd")
	# The classes are copied into the new /tmp from the working folder,
	# entered before /tmp is covered: a checkout under /tmp (a clone there)
	# is hidden by the new /tmp, which hides heapsh's folder too.
	unshare --pid --mount --fork --mount-proc sh -c "cd '$CCP' && mount -t tmpfs -o $opts tmpfs /tmp &&
		mkdir /tmp/classes && cp -R . /tmp/classes && chmod -R a+rX /tmp/classes && cd / &&
		{ [ ! -d '$CBIN' ] || mount -t tmpfs tmpfs '$CBIN'; } && exec $as '$java' -cp /tmp/classes KnownHeap wait" \
		<"$C/$name.in" >"$C/$name.out" 2>"$C/$name.err" &
	u=$!
	CTR_PIDS+=("$u")
	for ((i = 0; i < 300; i++)); do
		if grep -q '^ready ' "$C/$name.out" 2>/dev/null; then
			read -r CTR_PID _ < "/proc/$u/task/$u/children"
			[ -n "$CTR_PID" ] && CTR_PIDS+=("$CTR_PID") && return 0
		fi
		kill -0 "$u" 2>/dev/null || break
		sleep 0.1
	done
	fail "$name: KnownHeap wait started in a container" "$(head -5 "$C/$name.err" 2>/dev/null)"
	return 1
}

# ctr_answer OUT N: the output of the Nth command (from 1) of a --echo session.
ctr_answer() { awk -v n="$2" '/^heapsh> / { k++; next } k == n && NF' "$1"; }

# ctr_ours: heapsh's names in a listing of a /tmp, for one JVM (pid $1 as we
# see it, $2 in its namespace): what heapsh and its agent make there.
ctr_ours() {
	grep -E "^(heapsh-agent-|heapsh-(snap|dump|live)-($1|$2)-|\.heapsh-($1|$2)$|\.attach_pid($1|$2)$)" || true
}

# ctr_copies PID: how many copies of heapsh's agent JVM PID has mapped.
ctr_copies() {
	grep -o ' /tmp/heapsh-agent-[A-Za-z0-9]\{6\}/libheapsh_agent.so (deleted)$' "/proc/$1/maps" |
		sort -u | wc -l
}

# ctr_checks NAME JAVA [UID]: a session on a JVM of that JDK in a container,
# the JVM run as UID (its group the same number) when given, else as root.
ctr_checks() {
	local name=$1 java=$2 uid=${3:-} as= P NS S before after q
	[ -n "$uid" ] && as="setpriv --reuid=$uid --regid=$uid --clear-groups"
	ctr_start "$name" "$java" mode=1777 "$as" || return
	P=$CTR_PID
	NS=$(awk '/^NSpid:/ { print $NF }' "/proc/$P/status")
	check "$name: the JVM has its own pid namespace (pid 1 in it)" 1 "$NS"
	[ -n "$uid" ] && check "$name: the JVM runs as uid $uid" "$uid" \
		"$(awk '/^Uid:/ { print $3 }' "/proc/$P/status")"
	check "$name: heapsh's folder is hidden from the JVM" absent \
		"$([ -e "/proc/$P/root$CBIN/libheapsh_agent.so" ] && echo present || echo absent)"
	before=$(ls -A /tmp | ctr_ours "$P" "$NS")
	S=$C/$name.hsh
	rm -rf "$C/htmp" "$C/$name.hprof"
	mkdir -p "$C/htmp"
	cat >"$S" <<-EOF
		:timer on
		:format table
		objects.count([it | it is Order and it.status = 7])
		:format csv
		:retained Owner
		:refresh --via agent
		:retained Owner
		:dump $PWD/$C/$name.hprof
		:histogram Order
	EOF
	env -u HEAPSH_AGENT TMPDIR="$PWD/$C/htmp" timeout 120 "$CBIN/heapsh" --echo --format csv \
		-f "$S" "$P" >"$S.out" 2>"$S.err"
	check_status "$name: the session on the JVM in a container: exit 0" 0 "$?"
	check "$name: a query inside the JVM: 100 Orders with status 7" 100 "$(ctr_answer "$S.out" 3)"
	check_contains "$name: ... evaluated inside the JVM, no snapshot" \
		"no snapshot taken" "$(grep "^evaluated inside JVM $P: " "$S.err")"
	check "$name: :retained Owner on HotSpot's dump, written in the container's /tmp" \
		"2,all 2 instances of Owner,48,1104" "$(ctr_answer "$S.out" 5 | tail -1)"
	check_contains "$name: ... the snapshot is HotSpot's dump" \
		"snapshot of JVM $P: " "$(grep "jcmd GC.heap_dump" "$S.err")"
	check "$name: :retained Owner on the agent's own walk" \
		"2,all 2 instances of Owner,48,1104" "$(ctr_answer "$S.out" 7 | tail -1)"
	check "$name: :dump FILE copies the dump out of the container to FILE" \
		"class,instances,shallow_bytes Order,1000,40000" \
		"$(ctr_answer "$S.out" 9 | head -2 | tr '\n' ' ' | sed 's/ $//')"
	check "$name: ... FILE is a dump in heapsh's folder" "JAVA PROFILE" \
		"$(head -c 12 "$C/$name.hprof" 2>/dev/null)"
	check "$name: the JVM loaded the copy in its /tmp, removed since" yes \
		"$(grep -q " /tmp/heapsh-agent-[A-Za-z0-9]\{6\}/libheapsh_agent.so (deleted)$" \
			"/proc/$P/maps" && echo yes || echo no)"

	# Attached again and again: --keep-agent leaves the agent's socket, a
	# later session uses it (through the container's /tmp) and detaches it,
	# and loading the agent once more reuses the copy the JVM has mapped.
	q='objects.count([it | it is Order and it.status = 7])'
	check "$name: --keep-agent: the query" 100 \
		"$(env -u HEAPSH_AGENT timeout 60 "$CBIN/heapsh" --keep-agent -c "$q" "$P" 2>/dev/null)"
	check "$name: ... the agent's socket stays in the container's /tmp" present \
		"$([ -S "/proc/$P/root/tmp/.heapsh-$NS/agent.sock" ] && echo present || echo absent)"
	check "$name: heapsh PID again: the kept agent answers" 100 \
		"$(env -u HEAPSH_AGENT timeout 60 "$CBIN/heapsh" -c "$q" "$P" 2>/dev/null)"
	check "$name: ... and leaving detached it (its socket went)" absent \
		"$([ -e "/proc/$P/root/tmp/.heapsh-$NS" ] && echo present || echo absent)"
	check "$name: heapsh PID once more: the agent loaded again" 100 \
		"$(env -u HEAPSH_AGENT timeout 60 "$CBIN/heapsh" -c "$q" "$P" 2>/dev/null)"
	check "$name: ... from the copy the JVM has mapped: one copy for three loads" 1 \
		"$(ctr_copies "$P")"
	check "$name: nothing of heapsh's is left in the container's /tmp" "" \
		"$(ls -A "/proc/$P/root/tmp" | ctr_ours "$P" "$NS")"
	after=$(ls -A /tmp | ctr_ours "$P" "$NS")
	check "$name: nothing of heapsh's is left in heapsh's /tmp" "$before" "$after"
	check "$name: nothing is left in heapsh's TMPDIR" "" "$(ls -A "$C/htmp")"
	check "$name: the JVM is still alive" alive "$(kill -0 "$P" 2>/dev/null && echo alive)"
}

if [ "$(id -u)" != 0 ]; then
	ok "containers ... skipped (needs root for unshare --pid --mount)"
elif ! command -v unshare >/dev/null; then
	ok "containers ... skipped (no unshare: util-linux)"
elif ! unshare --pid --mount --fork --mount-proc sh -c 'mount -t tmpfs tmpfs /tmp' 2>/dev/null; then
	ok "containers ... skipped (unshare --pid --mount is not allowed here)"
else
	mkdir -p "$C"
	# heapsh and its agent in a folder the containers do not see.
	CBIN=$PWD/$C/bin
	# KnownHeap alone (the test classes of other tests would not fit a small /tmp)
	mkdir -p "$C/classes" && javac -d "$C/classes" tests/java/KnownHeap.java
	CCP=$(cd "$C/classes" && pwd)
	mkdir -p "$CBIN"
	cp "$HEAPSH" "$(dirname "$HEAPSH")/libheapsh_agent.so" "$CBIN/"

	ctr_checks k17 "$(command -v java)"
	if [ -x "$JDK25/bin/java" ]; then
		# As an unprivileged user, as containers often run: what heapsh makes is given to it.
		if command -v setpriv >/dev/null &&
			setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$CCP/KnownHeap.class"; then
			ctr_checks k25 "$JDK25/bin/java" 65534
		else
			ok "JDK 25 as uid 65534 ... skipped (no setpriv, or uid 65534 cannot read $CCP)"
			ctr_checks k25 "$JDK25/bin/java"
		fi
	else
		ok "JDK 25 in a container ... skipped (no JDK 25)"
	fi

	# A /tmp the JVM cannot load a library from: said so, with what to do.
	if ctr_start noexec "$(command -v java)" mode=1777,noexec; then
		P=$CTR_PID
		out=$(env -u HEAPSH_AGENT timeout 120 "$CBIN/heapsh" -c ':info' "$P" 2>&1)
		check_contains "noexec /tmp: says why heapsh's copy cannot be loaded" \
			"the /tmp of JVM $P is mounted noexec" "$out"
		check_contains "noexec /tmp: what to do (HEAPSH_AGENT, a shared path)" \
			"HEAPSH_AGENT names the path heapsh uses" "$out"
		check_contains "noexec /tmp: or -agentpath" "-agentpath:" "$out"
		check "noexec /tmp: nothing left in the container's /tmp" "" \
			"$(ls -A "/proc/$P/root/tmp" | ctr_ours "$P" 1)"
		check "noexec /tmp: the JVM is still alive" alive "$(kill -0 "$P" 2>/dev/null && echo alive)"
	fi

	# A /tmp too small for the dump (the agent's copy fits, and stays mapped
	# there): the snapshot fails saying so, and leaves no partial dump.
	lib_kb=$(( $(stat -c %s "$CBIN/libheapsh_agent.so") / 1024 ))
	if ctr_start small "$(command -v java)" "mode=1777,size=$((lib_kb + 512))k"; then
		P=$CTR_PID
		out=$(env -u HEAPSH_AGENT timeout 120 "$CBIN/heapsh" -c ':retained Owner' "$P" 2>&1)
		check_contains "small /tmp: the snapshot fails with HotSpot's reason" \
			"Dump file is incomplete: No space left on device" "$out"
		check_contains "small /tmp: ... where and what to do" \
			"writes into its own /tmp (/proc/$P/root/tmp to heapsh), which has" "$out"
		check_contains "small /tmp: ... what to do" "give the container a larger /tmp" "$out"
		check "small /tmp: no partial dump is left in the container's /tmp" "" \
			"$(ls -A "/proc/$P/root/tmp" | ctr_ours "$P" 1)"
		check "small /tmp: the JVM is still alive" alive "$(kill -0 "$P" 2>/dev/null && echo alive)"
	fi
fi

ctr_cleanup
trap - EXIT INT TERM
