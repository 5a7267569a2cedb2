# lib.sh - the shell test harness: checks, counting, and test heaps.
# Sourced by tests/run.sh. Every check prints "ok" or "FAIL" with what differed.

export LC_ALL=C
PASS=0
FAIL=0
FAILED_NAMES=()
HEAPSH=${HEAPSH:-./heapsh}
T=${T:-build/test}
JAVA_OUT=${JAVA_OUT:-build/java}
mkdir -p "$T"
# The index's seals (idx.h) and cache files go under the run's folder, not
# the user's ~/.cache.
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$(cd "$T" && pwd)/cache}

ok()   { PASS=$((PASS + 1)); echo "ok   $1"; }
fail() { FAIL=$((FAIL + 1)); FAILED_NAMES+=("$1"); echo "FAIL $1"; shift; [ $# -gt 0 ] && printf '     %s\n' "$@"; }

# check NAME EXPECTED ACTUAL: exact equality.
check() {
	if [ "$2" == "$3" ]; then ok "$1"; else
		fail "$1" "expected:" "$(printf '%s' "$2" | head -20 | sed 's/^/       /')" \
		     "actual:" "$(printf '%s' "$3" | head -20 | sed 's/^/       /')"
	fi
}

# check_contains NAME NEEDLE HAYSTACK
check_contains() {
	if printf '%s' "$3" | grep -qF -- "$2"; then ok "$1"; else
		fail "$1" "expected to contain: $2" "actual:" "$(printf '%s' "$3" | head -20 | sed 's/^/       /')"
	fi
}

# check_status NAME EXPECTED_STATUS ACTUAL_STATUS
check_status() {
	if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "exit status $3, expected $2"; fi
}

# golden NAME FILE.hsh DUMP: the session's stdout equals FILE.out exactly.
# UPDATE=1 rewrites FILE.out (review the diff before committing it).
golden() {
	local out="${2%.hsh}.out" got
	got=$($HEAPSH -f "$2" --echo "$3" 2>&1)
	if [ "${UPDATE:-}" = 1 ]; then
		printf '%s\n' "$got" > "$out"
		ok "$1 (rewritten: $out)"
		return
	fi
	if [ "$got" == "$(cat "$out" 2>/dev/null)" ]; then ok "$1"; else
		fail "$1" "session output differs from $out:" \
		     "$(diff <(printf '%s\n' "$got") "$out" | head -30)"
	fi
}

# tmux_screen COMMAND STEP...: run COMMAND in a real terminal (tmux, 200 x 50),
# send each STEP as tmux keys (a shell-quoted word list: "':help' Enter"), a
# second apart, and print the screen; the caller checks tmux is installed.
tmux_screen() {
	local s=heapsh-t-$$-$RANDOM cmd=$1 step
	shift
	tmux new-session -d -s "$s" -x 200 -y 50 "$cmd"
	sleep 1
	for step in "$@"; do
		eval "tmux send-keys -t \"\$s\" $step"
		sleep 1
	done
	tmux capture-pane -t "$s" -p
	tmux send-keys -t "$s" ':quit' Enter
	sleep 0.3
	tmux kill-session -t "$s" 2>/dev/null
}

# csv_row CSV_TEXT FIRST_FIELD: the row whose first field is FIRST_FIELD.
csv_row() { printf '%s\n' "$1" | awk -F, -v k="$2" '$1 == k'; }

summary() {
	echo
	if [ $FAIL -gt 0 ]; then
		echo "failed:"
		printf '  %s\n' "${FAILED_NAMES[@]}"
	fi
	echo "shell tests: $PASS passed, $FAIL failed"
	[ $FAIL -eq 0 ]
}
