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

# "did you mean" for commands and classes (issue 16), not for what is far from everything.
check "did you mean a command" "heapsh: unknown command ':histgram'; did you mean :histogram? (:help lists the commands)" \
	"$($HEAPSH -c ':histgram' "$KNOWN" 2>&1)"
check "did you mean a class" "heapsh: no class with instances matches 'Lef'; did you mean Leaf?" \
	"$($HEAPSH -c ':histogram Lef' "$KNOWN" 2>&1)"
check "did you mean a full class name" "heapsh: no class matches 'java.lang.Strin'; did you mean java.lang.String?" \
	"$($HEAPSH -c ':classes java.lang.Strin' "$KNOWN" 2>&1)"
check "no suggestion when nothing is close" "heapsh: no class matches 'Qwertyuiop' (and it is not an object id)" \
	"$($HEAPSH --no-index -c ':retained Qwertyuiop' "$KNOWN" 2>&1)"

# Names where people look (issue 16): in tables, a thread with its name and a
# String with its text; CSV and JSON keep the class alone, for grouping.
TBL=$($HEAPSH --no-index -c 'threads.map([t | t.object])' "$KNOWN")
check_contains "table: a thread with its name" 'java.lang.Thread "main"' "$TBL"
check_contains "table: the thread :roots lists with its name" 'java.lang.Thread "main"' \
	"$($HEAPSH --no-index -c ':roots thread' "$KNOWN")"
check_contains "table: a String with its text" 'java.lang.String "' \
	"$($HEAPSH --no-index -c 'objects.filter([o | o is java.lang.String]).top(3, [o | o.size])' "$KNOWN")"
check "csv: the class alone" "java.lang.Thread" \
	"$($HEAPSH --no-index --format csv -c 'threads.map([t | t.object])' "$KNOWN" | awk -F, '$1 ~ /^0x/ { print $2 }' | grep -x java.lang.Thread | sort -u)"

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

# Several -c and -f run in the order given, each whatever failed before;
# the exit status says that one failed (issue 16: only the last one ran).
OUT=$($HEAPSH --format csv -c ':histogram Leaf' -c ':nosuch' -f "$T/inner.hsh" -c ':histogram CycleNode' \
	"$KNOWN" 2>"$T/err"); st=$?
check_status "several -c and -f: exit 2 after a failure" 2 "$st"
check "several -c and -f: each runs, in order" "class,instances,shallow_bytes
Leaf,500,16000
class,instances,shallow_bytes
Leaf,500,16000
class,instances,shallow_bytes
CycleNode,3,72" "$OUT"
check "several -c and -f: both failures said" "2" "$(grep -c 'nosuch\|inner.hsh:2' "$T/err")"
check_status "several -c: exit 0 when all succeed" 0 \
	"$($HEAPSH -c ':histogram Leaf' -c ':roots' "$KNOWN" >/dev/null 2>&1; echo $?)"

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

# Completion of simple and nested class names after a command (issue 16): what the
# commands accept (ConcurrentHashMap for java.util.concurrent.ConcurrentHashMap,
# HashMap.Node for java.util.HashMap$Node).
if command -v tmux >/dev/null; then
	SCREEN=$(tmux_screen "HOME=$T $HEAPSH --no-index $KNOWN" \
		"':histogram HashMap.No' Tab Enter" "':classes ConcurrentHashM' Tab Enter")
	check_contains "completion of a nested class name" ":histogram HashMap.Node" "$SCREEN"
	check_contains "completed nested name ran" "java.util.HashMap\$Node" "$SCREEN"
	check_contains "completion of a simple class name" ":classes ConcurrentHashMap" "$SCREEN"
	check_contains "completed simple name ran" "java.util.concurrent.ConcurrentHashMap " "$SCREEN"
else
	fail "class name completion test" "tmux is not installed (make deps installs it)"
fi

# Completion of a command's options and of an option's values, from the command table.
if command -v tmux >/dev/null; then
	S=heapsh-opt-$$
	tmux new-session -d -s $S -x 200 -y 50 "HOME=$T $HEAPSH --no-index $KNOWN"
	sleep 1
	tmux send-keys -t $S ':top --b' Tab 'dyn' Tab '--cl' Tab 'CycleN' Tab '--to' Tab '2' Enter
	sleep 2
	SCREEN=$(tmux capture-pane -t $S -p)
	tmux send-keys -t $S ':quit' Enter
	sleep 0.3
	tmux kill-session -t $S 2>/dev/null
	check_contains "completion of options and option values" \
		":top --by dynamic --class CycleNode --top 2" "$SCREEN"
	check "completed :top ran: two CycleNodes" "2" "$(printf '%s\n' "$SCREEN" | grep -c '^0x[0-9a-f]* *CycleNode ')"
else
	fail "option completion test" "tmux is not installed (make deps installs it)"
fi

# Query language in a terminal: completion of keywords, class and field names;
# a multi-line snippet with a continuation prompt; Ctrl-C stops a long query.
if command -v tmux >/dev/null; then
	S=heapsh-query-$$
	tmux new-session -d -s $S -x 220 -y 50 "HOME=$T $HEAPSH $KNOWN"
	sleep 1
	tmux send-keys -t $S 'objects.filter([it | it is Ord' Tab ' and it.sta' Tab '= 7]).cou' Tab Enter
	sleep 1
	tmux send-keys -t $S 'objects.exists([it |' Enter
	sleep 0.3
	tmux send-keys -t $S 'it is Leaf and it.b = 998])' Enter
	sleep 1
	tmux send-keys -t $S 'objects.map([a | objects.count([b | b.size > 0])]).count' Enter
	sleep 2
	tmux send-keys -t $S C-c
	sleep 1
	tmux send-keys -t $S 'objects.count([it | it is CycleNode])' Enter
	sleep 1
	printf '%s\n' 'while true do end' >"$T/spin.lua"
	tmux send-keys -t $S ":luafile $T/spin.lua" Enter
	sleep 1
	tmux send-keys -t $S C-c
	sleep 1
	SCREEN=$(tmux capture-pane -t $S -p -S -100)
	tmux send-keys -t $S ':quit' Enter
	sleep 0.3
	tmux kill-session -t $S 2>/dev/null
	check_contains "completion: class, field and member" \
		"objects.filter([it | it is Order and it.status = 7]).count" "$SCREEN"
	check_contains "completed query ran" "$(printf '100\n')" "$SCREEN"
	check_contains "continuation prompt" "   ...> it is Leaf and it.b = 998])" "$SCREEN"
	check_contains "multi-line snippet ran" "true" "$SCREEN"
	check_contains "Ctrl-C stops a query" "interrupted" "$SCREEN"
	check_contains "Ctrl-C stops a command" "interrupted" "$(printf '%s\n' "$SCREEN" | grep -A3 ':luafile')"
	check "one \"interrupted\" per Ctrl-C (a query, then :luafile)" 2 \
		"$(printf '%s\n' "$SCREEN" | grep -c 'interrupted')"
	check "shell usable after Ctrl-C" "3" "$(printf '%s\n' "$SCREEN" | grep -A1 'it is CycleNode' | tail -1 | tr -d ' ')"
else
	fail "query completion test" "tmux is not installed (make deps installs it)"
fi

# bash completion: options and dump files.
if command -v bash >/dev/null; then
	mkdir -p "$T/compl"; : > "$T/compl/a.hprof"; : > "$T/compl/b.txt"
	OUT=$(top=$PWD; cd "$T/compl" && bash -c '. '"$top"'/completions/heapsh.bash; COMP_WORDS=(heapsh --for); COMP_CWORD=1; _heapsh; echo "${COMPREPLY[*]}"; COMP_WORDS=(heapsh ""); COMP_CWORD=1; _heapsh; echo "${COMPREPLY[*]}"')
	check "bash completion: options and dumps" "--format
a.hprof" "$OUT"
fi

# The progress bar: on a terminal's stderr only, never on a pipe.
PROG=$( $HEAPSH -c ':quit' "$KNOWN" 2>&1 >/dev/null )
check "no progress bar when stderr is not a terminal" "" "$PROG"
if command -v script >/dev/null; then
	PROG=$(script -qec "$HEAPSH -c ':quit' $KNOWN" /dev/null 2>/dev/null | tr '\r' '\n')
	check_contains "progress bar on a terminal" "loading $KNOWN [" "$PROG"
	# writing the index says so, with how far it is (minutes at 36 GiB)
	mkdir -p "$T/shell-progress" && cp "$KNOWN" "$T/shell-progress/p.hprof" &&
		rm -f "$T/shell-progress/p.hprof.hsidx"
	PROG=$(script -qec "$HEAPSH -c ':dominators --top 1' $T/shell-progress/p.hprof" /dev/null 2>/dev/null | tr '\r' '\n')
	check_contains "... and writing the index: what, then how far" "writing the index (" "$PROG"
	check_contains "... to the end" "written 100%" "$PROG"
fi

# Output in scripts: with both streams in one file, notes and timer lines come
# after the results they belong to and before the next command's.
"$HEAPSH" -c ':timer on' -c ':histogram --top 2' -c ':info' "$KNOWN" >"$T/mixed.txt" 2>&1
check "one file for both streams: each timer line follows its command's output" \
	"class time property time" \
	"$(awk '/^class +instances/ { printf "class " } /^time: / { printf "time " } /^property +value/ { printf "property " }' "$T/mixed.txt" | sed 's/ $//')"

# The command table is the one source of the commands (issue 36): every
# command :help lists has a row in README.md's command table and an entry in
# the man page's COMMANDS section with the same usage line, and neither names
# a command the table does not have (:end closes a :lua block and :exit is
# :quit's other name: both are words of the docs, not rows of the table).
CMDS=$(printf '%s\n' "$HELP" | awk '$1 ~ /^:[a-z]+$/ { print substr($1, 2) }' | sort -u)
README_CMDS=$(awk '/^\| command \|/ { t = 1; next } t && !/^\|/ { t = 0 } t' README.md |
	grep -o '`:[a-z]*' | cut -c3- | grep -vx end | sort -u)
# man_usages: the man page's COMMANDS entries, one usage line each, unescaped
# (an entry is a line starting with \fB:name\fR, or .B :name for one alone).
man_usages() {
	awk '/^\.SH COMMANDS/ { t = 1; next } /^\.SH / { t = 0 } t' docs/heapsh.1 |
		sed -n -e 's/^\.B \(:[a-z]*\)$/\1/p' -e '/^\\fB:[a-z]*\\fR/p' |
		sed -e 's/\\fB//g' -e 's/\\fR//g' -e 's/\\-/-/g' -e 's/\\://g'
}
MAN_CMDS=$(man_usages | awk '$1 != ":exit" { print substr($1, 2) }' | sort -u)
check "README's command table lists every command" "" "$(comm -23 <(echo "$CMDS") <(echo "$README_CMDS") | tr '\n' ' ')"
check "README's command table names no other command" "" "$(comm -13 <(echo "$CMDS") <(echo "$README_CMDS") | tr '\n' ' ')"
check "the man page lists every command" "" "$(comm -23 <(echo "$CMDS") <(echo "$MAN_CMDS") | tr '\n' ' ')"
check "the man page names no other command" "" "$(comm -13 <(echo "$CMDS") <(echo "$MAN_CMDS") | tr '\n' ' ')"
# man's usage line of each command, unescaped, against the table's.
bad=
for c in $CMDS; do
	usage=$($HEAPSH -c ":help $c" "$KNOWN" | sed -n '1s/^usage: //p')
	man=$(man_usages | awk -v c=":$c" '$1 == c { print; exit }')
	[ "$usage" = "$man" ] || bad+=":$c (table: '$usage'; man: '$man') "
done
check "the man page's usage lines are the table's" "" "$bad"
