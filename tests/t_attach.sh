# t_attach.sh - the HotSpot attach client (src/attach) against real JVMs:
# KnownHeap in its wait mode, driven by build/unit/attach_cli. jcmd output
# (VM.version, GC.class_histogram), a second attach on the same socket, a JDK
# newer than 17 when one is installed, and the refusals: not a JVM (the
# process survives), attach disabled, no such process, another user's JVM.
# Every process started here is killed at the end, failed checks or not.
A=$T/attach
ATT_CLI=build/unit/attach_cli
mkdir -p "$A"
ATT_PIDS=()	# everything started here
ATT_FDS=()	# write ends of the JVMs' stdin

att_cleanup() {
	local fd p
	for fd in "${ATT_FDS[@]}"; do exec {fd}>&-; done
	for p in "${ATT_PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
		rm -f "/tmp/.java_pid$p"	# left by JVMs killed with -9
	done
	ATT_FDS=()
	ATT_PIDS=()
}
trap att_cleanup EXIT
trap 'att_cleanup; exit 130' INT TERM

# att_start NAME JAVA [FLAGS...]: KnownHeap wait under JAVA, stdin held open
# by us. Sets ATT_PID to the pid it printed ("" when it did not start).
att_start() {
	local name=$1 java=$2 fd i
	shift 2
	ATT_PID=
	rm -f "$A/$name.in" "$A/$name.out" "$A/$name.err"
	mkfifo "$A/$name.in"
	exec {fd}<>"$A/$name.in"	# read-write: never blocks, even if java does not start
	ATT_FDS+=("$fd")
	"$java" "$@" -cp "$JAVA_OUT" KnownHeap wait <"$A/$name.in" >"$A/$name.out" 2>"$A/$name.err" &
	ATT_PIDS+=("$!")
	for ((i = 0; i < 300; i++)); do
		read -r _ ATT_PID < <(grep '^ready ' "$A/$name.out" 2>/dev/null)
		[ -n "$ATT_PID" ] && return 0
		kill -0 "${ATT_PIDS[-1]}" 2>/dev/null || break
		sleep 0.2
	done
	fail "$name: KnownHeap wait started" "$(cat "$A/$name.err" 2>/dev/null | head -5)"
	return 1
}

# att_run ARGS...: run attach_cli; sets ATT_OUT, ATT_ERR, ATT_ST.
att_run() {
	ATT_OUT=$("$ATT_CLI" "$@" 2>"$A/cli.err")
	ATT_ST=$?
	ATT_ERR=$(cat "$A/cli.err")
}

# att_kind: the kind attach_cli reported ("ok" when it succeeded).
att_kind() {
	if [ "$ATT_ST" = 0 ]; then echo ok; else sed -n 's/^attach_cli: \([a-z-]*\): .*/\1/p' <<<"$ATT_ERR"; fi
}

# att_jdk_version JAVA: "17.0.15" from `java -version`.
att_jdk_version() { "$1" -version 2>&1 | sed -n '1s/.*version "\([^"]*\)".*/\1/p'; }

# att_jvm_checks NAME PID JAVA: jcmd on a JVM of that JDK.
att_jvm_checks() {
	local name=$1 pid=$2 ver
	ver=$(att_jdk_version "$3")
	att_run "$pid" jcmd VM.version
	check "$name: jcmd VM.version succeeds" "ok" "$(att_kind)"
	check_contains "$name: VM.version names JDK $ver" "JDK $ver" "$ATT_OUT"
	att_run "$pid" jcmd GC.class_histogram
	check "$name: GC.class_histogram has 1000 Order" "1000" \
		"$(awk '$4 == "Order" { print $2 }' <<<"$ATT_OUT")"
}

if ! make -s "$ATT_CLI" >"$A/make.log" 2>&1; then
	fail "attach_cli builds" "$(tail -5 "$A/make.log")"
else
	JAVA17=$(command -v java)

	# JDK 17: the listener is started on demand, then reused.
	if att_start k17 "$JAVA17"; then
		K17=$ATT_PID
		SOCK=$("$ATT_CLI" "$K17" tmpdir)/.java_pid$("$ATT_CLI" "$K17" nspid)
		check "k17: no attach socket before the first attach" "absent" \
			"$([ -S "$SOCK" ] && echo present || echo absent)"
		att_jvm_checks k17 "$K17" "$JAVA17"
		check "k17: the first attach started the listener" "present" \
			"$([ -S "$SOCK" ] && echo present || echo absent)"
		att_run "$K17" jcmd VM.version
		check "k17: a second attach on the same socket works" "ok" "$(att_kind)"
		check_contains "k17: second VM.version" "JDK $(att_jdk_version "$JAVA17")" "$ATT_OUT"
		att_run "$K17" cmd properties
		check_contains "k17: the properties command" "java.vm.specification.version=17" "$ATT_OUT"
		att_run "$K17" jcmd No.such.command
		check "k17: an unknown diagnostic command is refused" "refused" "$(att_kind)"
		check_contains "k17: with the JVM's reason" "Unknown diagnostic command" "$ATT_ERR"
		: >"$A/libempty.so"
		att_run "$K17" load "$PWD/$A/libempty.so"
		check "k17: a library that is no agent is refused" "refused" "$(att_kind)"
		check_contains "k17: load failure says what to do" "-agentpath:" "$ATT_ERR"
		att_run "$K17" load relative/libx.so
		check "k17: a relative agent path is a bad request" "bad-request" "$(att_kind)"
		# SIGQUIT went only with the trigger file: a stray one prints a thread dump
		if grep -q "Full thread dump" "$A/k17.out"; then
			fail "k17: no stray SIGQUIT" "the JVM printed a thread dump"
		else
			ok "k17: no stray SIGQUIT"
		fi
	fi

	# A JVM with attach disabled: refused, and not signalled.
	if att_start disabled "$JAVA17" -XX:+DisableAttachMechanism; then
		att_run "$ATT_PID" jcmd VM.version
		check "disabled: kind" "disabled" "$(att_kind)"
		check_contains "disabled: says which flag" "-XX:+DisableAttachMechanism" "$ATT_ERR"
		sleep 0.3
		if grep -q "Full thread dump" "$A/disabled.out"; then
			fail "disabled: not sent SIGQUIT" "the JVM printed a thread dump"
		else
			ok "disabled: not sent SIGQUIT"
		fi
		check "disabled: JVM still running" "alive" "$(kill -0 "$ATT_PID" 2>/dev/null && echo alive)"
	fi

	# Not a JVM: refused before any signal (SIGQUIT would kill sleep).
	sleep 100 &
	SLEEPER=$!
	ATT_PIDS+=("$SLEEPER")
	att_run "$SLEEPER" jcmd VM.version
	check "sleep: not-a-JVM kind" "not-jvm" "$(att_kind)"
	check_contains "sleep: message" "is not a HotSpot JVM" "$ATT_ERR"
	sleep 0.2
	check "sleep: still alive afterwards" "alive" "$(kill -0 "$SLEEPER" 2>/dev/null && echo alive)"

	# A process that exited.
	sleep 0 &
	GONE=$!
	wait "$GONE"
	att_run "$GONE" jcmd VM.version
	check "exited pid: no-process kind" "no-process" "$(att_kind)"

	# Another user's JVM: root attaches as that user; that user cannot attach to root's.
	if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
		ok "other users ... skipped (needs root and setpriv)"
	else
		if att_start nobody setpriv --reuid=65534 --regid=65534 --clear-groups "$JAVA17"; then
			att_run "$ATT_PID" jcmd VM.version
			check "root attaches to nobody's JVM" "ok" "$(att_kind)"
			check_contains "nobody's JVM: VM.version" "JDK " "$ATT_OUT"
		fi
		if [ -n "${K17:-}" ]; then
			ATT_OUT=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$ATT_CLI" "$K17" jcmd VM.version 2>"$A/cli.err")
			ATT_ST=$?
			ATT_ERR=$(cat "$A/cli.err")
			check "nobody attaching to root's JVM: other-user" "other-user" "$(att_kind)"
			check_contains "other-user: says what to do" "run heapsh as that user" "$ATT_ERR"
		fi
	fi

	# A JDK newer than 17, when one is installed (CI has only 17).
	NEWER=
	if [ -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/java ]; then
		NEWER=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
	else
		for j in /usr/lib/jvm/*/bin/java; do
			[ -x "$j" ] || continue
			major=$(att_jdk_version "$j" | cut -d. -f1)
			[[ "$major" =~ ^[0-9]+$ ]] && [ "$major" -gt 17 ] && NEWER=$j
		done
	fi
	if [ -z "$NEWER" ]; then
		ok "newer JDK ... skipped (no JDK newer than 17 under /usr/lib/jvm)"
	elif att_start newer "$NEWER"; then
		att_jvm_checks "JDK $(att_jdk_version "$NEWER" | cut -d. -f1)" "$ATT_PID" "$NEWER"
	fi
fi

att_cleanup
trap - EXIT INT TERM
