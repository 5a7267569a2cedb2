# t_shell.sh - the shell itself: help, modes, scripts, the plain line reader,
# completion.
HELP=$($HEAPSH -c ':help' "$KNOWN")
for c in info histogram classes show refs referrers roots threads format open load help quit; do
	check_contains ":help lists :$c" ":$c" "$HELP"
	check_contains ":help $c explains it" "usage: :$c" "$($HEAPSH -c ":help $c" "$KNOWN")"
done
$HEAPSH -c ':frobnicate' "$KNOWN" 2>"$T/err"; st=$?
check_status "unknown command: exit 2" 2 "$st"
check_contains "unknown command: says so" "unknown command ':frobnicate'" "$(cat "$T/err")"

# -f FILE with :format and :load; errors carry file:line.
cat > "$T/inner.hsh" <<'HSH'
:histogram Leaf
:show 0x2
HSH
cat > "$T/outer.hsh" <<HSH
:format csv
:load $T/inner.hsh
:histogram CycleNode
HSH
OUT=$($HEAPSH -f "$T/outer.hsh" "$KNOWN" 2>"$T/err"); st=$?
check_status "-f with a failing command: exit 2" 2 "$st"
check "-f runs every line" "class,instances,shallow_bytes
Leaf,500,16000
class,instances,shallow_bytes
CycleNode,3,72" "$OUT"
check_contains "error location is file:line" "$T/inner.hsh:2" "$(cat "$T/err")"

# --format json on the command line is the same as :format json.
check "--format = :format" "$($HEAPSH --format json -c ':histogram Order' "$KNOWN")" \
	"$(printf ':format json\n:histogram Order\n' | $HEAPSH "$KNOWN")"

# No prompt when stdin is not a terminal; the plain (no readline) build works.
check "no prompt on a pipe" "Order,1000,40000" \
	"$(printf ':format csv\n:histogram Order\n' | $HEAPSH "$KNOWN" | grep Order)"
if [ -x build/heapsh-plain ]; then
	check "plain line reader build" "Order,1000,40000" \
		"$(printf ':format csv\n:histogram Order\n' | build/heapsh-plain "$KNOWN" | grep Order)"
else
	fail "plain line reader build" "build/heapsh-plain is missing (make READLINE=no)"
fi

# Golden session: commands whose output depends only on KnownHeap.
golden "known-heap session" tests/sessions/known.hsh "$KNOWN"

# Tab completion, typed into a real terminal (tmux).
if command -v tmux >/dev/null; then
	S=heapsh-test-$$
	tmux new-session -d -s $S -x 200 -y 50 "HOME=$T $HEAPSH $KNOWN"
	sleep 1
	tmux send-keys -t $S ':histo' Tab 'CycleN' Tab Enter
	sleep 1
	SCREEN=$(tmux capture-pane -t $S -p)
	tmux send-keys -t $S ':quit' Enter
	sleep 0.3
	tmux kill-session -t $S 2>/dev/null
	check_contains "completion of command and class name" ":histogram CycleNode" "$SCREEN"
	check_contains "completed command ran" "CycleNode          3" "$SCREEN"
else
	fail "completion test" "tmux is not installed (make deps installs it)"
fi
