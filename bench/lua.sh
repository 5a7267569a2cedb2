#!/usr/bin/env bash
# bench/lua.sh - Lua scripting (issue 7) on build/bench/big1.hprof (2.46 M
# objects). Run from the repository root by `make bench`, after bench/run.sh
# (which makes the dumps); makes them itself through bench/run.sh when missing.
#
# Two parts, in one run:
#  1. a loop over objects in Lua against the same sum in the query language,
#     each a whole heapsh process (`heapsh -f FILE big1.hprof`, FILE =
#     `:timer on` and the command; the command's own time is read from
#     :timer, so opening the dump is left out), the two interleaved, BENCH_RUNS
#     runs each, medians compared (target: Lua at most 3x the query):
#       strings:  for o in h:objects("java.lang.String") do s = s + o.hash end
#                 objects.filter([it | it is java.lang.String]).sum([o | o.hash])
#       all:      for o in h:objects() do s = s + o.size end
#                 objects.sum([o | o.size])
#       all_shallow: the same with o.shallow_size (a built-in name that no
#                 Java field shadows, so no field lookup comes first)
#     Both sides must print the same sum (a field named size, as in
#     ArrayList, shadows the built-in on both sides alike).
#  2. each ready script in lua/ on big1, wall time of the whole process (GNU
#     time), BENCH_RUNS runs, median (target: under 5 s each); diff.lua on
#     big1 twice (the second opened separately) and, when it exists, on big1
#     and big2.
#  3. a walk of the whole dominator tree from Lua (issue 17): h:dominators(o)
#     for every node, with an explicit stack, counting the nodes and summing
#     their retained and shallow sizes; checked against :info (every
#     reachable object once, their bytes) and :dominators (what the GC
#     roots' children retain). Each run a whole process, wall time and peak
#     RSS (GNU time) and the walk's own time (:timer). With BENCH_OLD, an
#     earlier binary walks the first BENCH_WALK_OLD_NODES nodes (default
#     20000: its h:dominators scanned the whole tree, about 0.75 ms a call on
#     big1, 30 minutes for the whole walk; 0 walks it all), interleaved with
#     the new binary on the same nodes, and its whole walk is extrapolated.
#     No dump of the issue's size (787 k objects) is made here: big1 has 3.1x
#     its nodes, and the target (a whole walk under 2 s at 787 k nodes) is
#     checked per node: the walk's :timer time on big1 times 787 k / nodes.
# With perf installed (and BENCH_PERF not 0), a profile of the "all" loop says
# where the Lua side's time goes.
#
# Environment: BENCH_RUNS=N (default 5); HEAPSH=path (default ./heapsh; copied
# to build/bench/heapsh-lua first, so a rebuild during the run cannot mix two
# binaries); BENCH_PERF=0 skips the profile; BENCH_LUA_PARTS (default "loops
# scripts walk") the parts to run; BENCH_OLD, BENCH_WALK_OLD_NODES (part 3).
#
# Output: build/bench/lua.txt (the report), a section in build/bench/summary.md
# (replacing an earlier one), every run's output in build/bench/lualog/. Exit
# status 1 if a run failed or the two sides of a loop disagree; a missed
# target is reported, not an error.

set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
. bench/lib.sh

R=${BENCH_RUNS:-5}
OUT=build/bench
LOG=$OUT/lualog
BIG1=$OUT/big1.hprof
BIG2=$OUT/big2.hprof
REPORT=$OUT/lua.txt
SUM=$OUT/summary.md
[[ $R =~ ^[1-9][0-9]*$ ]] || { echo "bench/lua.sh: BENCH_RUNS must be a positive integer" >&2; exit 2; }

bench_heapsh lua src lua Makefile
mkdir -p "$LOG"
rm -f "$LOG"/*
bench_dumps lua "$BIG1"
DUMPS=("$BIG1")
[ -s "$BIG2" ] && DUMPS+=("$BIG2")
for d in "${DUMPS[@]}"; do
	cat "$d" >/dev/null   # every run reads the dump from the page cache
	# The scripts use the dominator tree: make the index once, untimed, so
	# every run below reads it (as a second look at a dump does).
	[ -s "$d.hsidx" ] || "$HS" -c ':dominators --top 1' "$d" >/dev/null
done

GNU_TIME=0
if [ -x /usr/bin/time ] && /usr/bin/time -f '%e %M' -o /dev/null true 2>/dev/null; then
	GNU_TIME=1
fi
FAILURES=()
med() { printf '%s\n' ${1:-} | median; }
want() { [[ " ${BENCH_LUA_PARTS:-loops scripts walk} " == *" $1 "* ]]; }

# ---------------------------------------------------------------- 1. loops
declare -A CODE MS RESULT NRUN WALLS RSS
CODE[strings_lua]=':luafile LOG/strings.lua'
CODE[strings_query]='objects.filter([it | it is java.lang.String]).sum([o | o.hash])'
CODE[all_lua]=':luafile LOG/all.lua'
CODE[all_query]='objects.sum([o | o.size])'
CODE[all_shallow_lua]=':luafile LOG/all_shallow.lua'
CODE[all_shallow_query]='objects.sum([o | o.shallow_size])'
cat >"$LOG/strings.lua" <<'EOF'
local s = 0
for o in heapsh.current():objects("java.lang.String") do s = s + o.hash end
print(s)
EOF
cat >"$LOG/all.lua" <<'EOF'
local s = 0
for o in heapsh.current():objects() do s = s + o.size end
print(s)
EOF
cat >"$LOG/all_shallow.lua" <<'EOF'
local s = 0
for o in heapsh.current():objects() do s = s + o.shallow_size end
print(s)
EOF

# loop NAME: one process, :timer on and NAME's command; its :timer ms and result.
loop() {
	local name=$1 rc=0 ms n=$(( ${NRUN[$1]:-0} + 1 ))
	NRUN[$name]=$n
	local base=$LOG/$name.$n
	printf ':timer on\n%s\n' "${CODE[$name]//LOG/$LOG}" >"$base.hsh"
	"$HS" -f "$base.hsh" "$BIG1" >"$base.out" 2>"$base.err" || rc=$?
	ms=$(awk '/^time:/ { print $2 }' "$base.err" | tail -n 1)
	if [ "$rc" != 0 ] || [ -z "$ms" ]; then
		FAILURES+=("$name run $n: exit status $rc: $HS -f $base.hsh $BIG1")
		echo "!! FAILED: $name run $n (exit status $rc); stderr:" >&2
		tail -n 20 "$base.err" | sed 's/^/!!   /' >&2
		return 0
	fi
	MS[$name]+="$ms "
	RESULT[$name]=$(tail -n 1 "$base.out")
	printf '   %-18s run %d: %9s ms  (sum %s)\n' "$name" "$n" "$ms" "${RESULT[$name]}"
}
want loops && echo "== Lua loops against the query language on $BIG1: $R runs each, interleaved"
want loops && for ((i = 1; i <= R; i++)); do
	for b in strings all all_shallow; do
		if ((i % 2)); then loop "${b}_lua"; loop "${b}_query"; else loop "${b}_query"; loop "${b}_lua"; fi
	done
done

LOOP_MD=$LOG/loops.md
: >"$LOOP_MD"
want loops && {
echo "### 1. Lua against the query language: the same sum over the objects of big1"
echo
echo "Each run is a whole heapsh process on the dump (the index read, as a second look at a dump);" \
     "the time is the command's own, from \`:timer\` (opening the dump excluded). The two sides" \
     "alternate which goes first. Target: Lua at most 3x the query's time."
echo
echo "| loop | Lua median ms | query median ms | Lua / query | verdict | Lua ms per run | query ms per run | sums agree |"
echo "|---|---:|---:|---:|---|---|---|---|"
for b in strings all all_shallow; do
	lm=$(med "${MS[${b}_lua]:-}"); qm=$(med "${MS[${b}_query]:-}")
	ratio=n/a verdict=n/a
	if [[ $lm != n/a && $qm != n/a ]]; then
		ratio=$(awk -v a="$lm" -v b="$qm" 'BEGIN { printf "%.2f", a / b }')
		verdict=$(awk -v r="$ratio" 'BEGIN { if (r <= 3) print "met"; else printf "MISSED by %.2fx (%.2f against 3)", r / 3, r }')
	fi
	agree=no
	[ -n "${RESULT[${b}_lua]:-}" ] && [ "${RESULT[${b}_lua]:-}" = "${RESULT[${b}_query]:-x}" ] && agree="yes (${RESULT[${b}_lua]})"
	[[ $agree == yes* ]] || FAILURES+=("$b: the Lua loop printed '${RESULT[${b}_lua]:-}', the query '${RESULT[${b}_query]:-}'")
	case $b in
		strings) what='`for o in h:objects("java.lang.String") do s = s + o.hash end` / `objects.filter([it | it is java.lang.String]).sum([o | o.hash])`';;
		all) what='`for o in h:objects() do s = s + o.size end` / `objects.sum([o | o.size])`';;
		all_shallow) what='`... s = s + o.shallow_size ...` / `objects.sum([o | o.shallow_size])`';;
	esac
	lr=${MS[${b}_lua]:-}; qr=${MS[${b}_query]:-}
	echo "| $what | $lm | $qm | $ratio | $verdict | ${lr% } | ${qr% } | $agree |"
done
echo
} >"$LOOP_MD"

# ---------------------------------------------------------------- 2. scripts
# script NAME ARGS...: one timed `heapsh -l` run (wall s, peak RSS KiB).
script() {
	local name=$1 rc=0 line wall rss; shift
	local n=$(( ${NRUN[$name]:-0} + 1 ))
	NRUN[$name]=$n
	local base=$LOG/$name.$n
	if [ "$GNU_TIME" = 1 ]; then
		/usr/bin/time -f '%e %M' -o "$base.time" "$HS" --format csv -l "$@" >"$base.out" 2>"$base.err" || rc=$?
		line=$(tail -n 1 "$base.time"); wall=${line% *}; rss=${line#* }
	else
		local TIMEFORMAT=%R
		{ time "$HS" --format csv -l "$@" >"$base.out" 2>"$base.err"; } 2>"$base.time" || rc=$?
		wall=$(tail -n 1 "$base.time"); rss=n/a
	fi
	if [ "$rc" != 0 ] || [ ! -s "$base.out" ]; then
		FAILURES+=("$name run $n: exit status $rc: $HS --format csv -l $*")
		echo "!! FAILED: $name run $n (exit status $rc); stderr:" >&2
		tail -n 20 "$base.err" | sed 's/^/!!   /' >&2
		return 0
	fi
	WALLS[$name]+="$wall "
	RSS[$name]+="$rss "
	printf '   %-22s run %d: %6s s, %s MB, %d rows\n' "$name" "$n" "$wall" \
		"$([ "$rss" = n/a ] && echo n/a || echo $((rss / 1024)))" "$(($(wc -l <"$base.out") - 1))"
}
declare -A ARGS
SCRIPTS=(leak_suspects classloaders duplicate_strings collections diff_big1_big1)
ARGS[leak_suspects]="lua/leak_suspects.lua $BIG1"
ARGS[classloaders]="lua/classloaders.lua $BIG1 java.util.* java.lang *Node"
ARGS[duplicate_strings]="lua/duplicate_strings.lua $BIG1"
ARGS[collections]="lua/collections.lua $BIG1"
ARGS[diff_big1_big1]="lua/diff.lua $BIG1 $BIG1"
if [ -s "$BIG2" ]; then
	SCRIPTS+=(diff_big1_big2 diff_big1_big2_noret)
	ARGS[diff_big1_big2]="lua/diff.lua $BIG1 $BIG2"
	ARGS[diff_big1_big2_noret]="lua/diff.lua $BIG1 $BIG2 --no-retained"
fi
want scripts && echo "== the ready scripts on $BIG1: $R runs each"
set -f   # the patterns stay words
want scripts && for ((i = 1; i <= R; i++)); do
	for s in "${SCRIPTS[@]}"; do
		# shellcheck disable=SC2086
		script "$s" ${ARGS[$s]}
	done
done
set +f

SCRIPT_MD=$LOG/scripts.md
: >"$SCRIPT_MD"
want scripts && {
echo "### 2. The ready scripts: whole \`heapsh --format csv -l lua/SCRIPT.lua ...\` processes"
echo
echo "Wall time and peak RSS from GNU time, the dump's index read (DUMP.hsidx). Target: under 5 s each."
echo
echo "| script and arguments | median wall s | verdict | median peak RSS MB | rows | wall s per run |"
echo "|---|---:|---|---:|---:|---|"
for s in "${SCRIPTS[@]}"; do
	w=$(med "${WALLS[$s]:-}")
	verdict=n/a
	[ "$w" = n/a ] || verdict=$(awk -v w="$w" 'BEGIN { if (w < 5) print "met"; else printf "MISSED by %.1f s (%.2fx)", w - 5, w / 5 }')
	r=$(med "${RSS[$s]:-}")
	rows=$( [ -f "$LOG/$s.1.out" ] && echo $(($(wc -l <"$LOG/$s.1.out") - 1)) || echo n/a)
	ws=${WALLS[$s]:-}
	echo "| \`${ARGS[$s]}\` | $w | $verdict | $([ "$r" = n/a ] && echo n/a || echo $((${r%.*} / 1024))) | $rows | ${ws% } |"
done
echo
} >"$SCRIPT_MD"

# ---------------------------------------------------------------- 3. the dominator tree
cat >"$LOG/domwalk.lua" <<'EOF'
-- Every node of the dominator tree: h:dominators(o) for each, an explicit
-- stack; the first LIMIT nodes only when given (heapsh.args()[1]).
local h = assert(heapsh.current())
local limit = tonumber(heapsh.args()[1]) or math.huge
local top = h:dominators()
local stack, sp, top_retained = {}, 0, 0
for k = 1, #top do
	local o = top[k]
	top_retained = top_retained + o.retained_size
	sp = sp + 1
	stack[sp] = o
end
local nodes, retained, shallow = 0, 0, 0
while sp > 0 and nodes < limit do
	local o = stack[sp]
	stack[sp] = nil
	sp = sp - 1
	nodes = nodes + 1
	retained = retained + o.retained_size
	shallow = shallow + o.shallow_size
	local kids = h:dominators(o)
	for k = 1, #kids do
		sp = sp + 1
		stack[sp] = kids[k]
	end
end
print(string.format("nodes=%d top_retained=%d retained_sum=%d shallow_sum=%d", nodes, top_retained,
	retained, shallow))
EOF
OLD_NODES=${BENCH_WALK_OLD_NODES:-20000}
[[ $OLD_NODES =~ ^[0-9]+$ ]] || { echo "bench/lua.sh: BENCH_WALK_OLD_NODES must be a whole number" >&2; exit 2; }
[ "$OLD_NODES" != 0 ] || OLD_NODES=
declare -A WMS WRES
# walk NAME BINARY [LIMIT]: one process, `:timer on` and `:luafile domwalk.lua [LIMIT]`.
walk() {
	local name=$1 bin=$2 limit=${3:-} rc=0 line wall=n/a rss=n/a ms
	local n=$(( ${NRUN[$name]:-0} + 1 ))
	NRUN[$name]=$n
	local base=$LOG/$name.$n
	printf ':timer on\n:luafile %s %s\n' "$LOG/domwalk.lua" "$limit" >"$base.hsh"
	if [ "$GNU_TIME" = 1 ]; then
		/usr/bin/time -f '%e %M' -o "$base.time" "$bin" -f "$base.hsh" "$BIG1" >"$base.out" 2>"$base.err" || rc=$?
		line=$(tail -n 1 "$base.time"); wall=${line% *}; rss=${line#* }
	else
		local TIMEFORMAT=%R
		{ time "$bin" -f "$base.hsh" "$BIG1" >"$base.out" 2>"$base.err"; } 2>"$base.time" || rc=$?
		wall=$(tail -n 1 "$base.time")
	fi
	ms=$(awk '/^time:/ { print $2 }' "$base.err" | tail -n 1)
	if [ "$rc" != 0 ] || [ -z "$ms" ] || ! grep -q '^nodes=' "$base.out"; then
		FAILURES+=("$name run $n: exit status $rc: $bin -f $base.hsh $BIG1")
		echo "!! FAILED: $name run $n (exit status $rc); stderr:" >&2
		tail -n 20 "$base.err" | sed 's/^/!!   /' >&2
		return 0
	fi
	WMS[$name]+="$ms "
	WALLS[$name]+="$wall "
	RSS[$name]+="$rss "
	WRES[$name]=$(grep '^nodes=' "$base.out")
	[ "$n" = 1 ] || [ "$(grep '^nodes=' "$LOG/$name.1.out")" = "${WRES[$name]}" ] ||
		FAILURES+=("$name run $n printed '${WRES[$name]}', run 1 '$(grep '^nodes=' "$LOG/$name.1.out")'")
	printf '   %-12s run %d: %9s ms, %6s s, %s MB  (%s)\n' "$name" "$n" "$ms" "$wall" \
		"$([ "$rss" = n/a ] && echo n/a || echo $((rss / 1024)))" "${WRES[$name]}"
}
# spread: "median (min-max)" of the numbers in $1.
spread() {
	[ -n "${1// /}" ] || { echo n/a; return; }
	printf '%s (%s-%s)' "$(med "$1")" "$(printf '%s\n' $1 | sort -n | head -n 1)" "$(printf '%s\n' $1 | sort -n | tail -n 1)"
}
WALK_MD=$LOG/walk.md
: >"$WALK_MD"
if want walk; then
	# What a whole walk must find, from the shell's commands (untimed).
	WINFO=$(printf ':dominators --top 1\n:info\n' | "$HS" --format csv "$BIG1" | awk -F'"' '/^dominator tree,/ { print $2 }')
	W_NODES=$(printf '%s\n' "$WINFO" | sed -n 's/.*; \([0-9]*\) objects reachable, [0-9]* bytes$/\1/p')
	W_BYTES=$(printf '%s\n' "$WINFO" | sed -n 's/.*; [0-9]* objects reachable, \([0-9]*\) bytes$/\1/p')
	W_TOP=$("$HS" -c ':dominators --top 1' "$BIG1" | sed -n 's/.* objects are dominated directly by the GC roots; \([0-9]*\) bytes retained.*/\1/p')
	OLD=${BENCH_OLD:-}
	if [ -n "$OLD" ]; then
		[ -x "$OLD" ] || { echo "bench/lua.sh: BENCH_OLD=$OLD is not a program" >&2; exit 2; }
		cp "$OLD" "$OUT/heapsh-lua-old.tmp" && mv -f "$OUT/heapsh-lua-old.tmp" "$OUT/heapsh-lua-old"
		OLD_ID="$("$OUT/heapsh-lua-old" --version), sha256 $(sha256sum "$OUT/heapsh-lua-old" | cut -c1-12), copied from $OLD"
	fi
	echo "== a walk of the whole dominator tree of $BIG1 from Lua ($W_NODES nodes): $R runs${OLD:+, interleaved with $OLD on ${OLD_NODES:-all} nodes}"
	for ((i = 1; i <= R; i++)); do
		walk walk_new "$HS"
		if [ -n "$OLD" ]; then
			if ((i % 2)); then walk part_old "$OUT/heapsh-lua-old" "$OLD_NODES"; walk part_new "$HS" "$OLD_NODES"
			else walk part_new "$HS" "$OLD_NODES"; walk part_old "$OUT/heapsh-lua-old" "$OLD_NODES"; fi
		fi
	done
	expect="nodes=$W_NODES top_retained=$W_TOP retained_sum="
	case ${WRES[walk_new]:-} in
		"$expect"*" shallow_sum=$W_BYTES") ;;
		*) FAILURES+=("the whole walk printed '${WRES[walk_new]:-}'; :info and :dominators say $W_NODES objects reachable, $W_BYTES bytes, $W_TOP bytes retained by the GC roots' children") ;;
	esac
	[ -z "$OLD" ] || [ "${WRES[part_old]:-x}" = "${WRES[part_new]:-y}" ] ||
		FAILURES+=("on the first ${OLD_NODES:-all} nodes the old binary printed '${WRES[part_old]:-}', the new '${WRES[part_new]:-}'")
	{
	echo "### 3. A walk of the whole dominator tree from Lua (issue 17)"
	echo
	echo "\`h:dominators(o)\` for every node of big1's dominator tree ($W_NODES nodes: every reachable object)," \
	     "an explicit stack, each node's retained and shallow size summed; each run a whole heapsh process" \
	     "(\`:timer on\`, \`:luafile domwalk.lua\`; the dump's index read). Medians (min-max) of $R runs." \
	     "Target: a whole walk under 2 s on the issue's heap of 787 k objects; no dump of that size is made" \
	     "here, so the verdict takes big1's time per node times 787 k (big1's own time is in the table too)."
	echo
	echo "| walk | binary | nodes | :timer ms | wall s | peak RSS MB | µs per node | verdict | checks |"
	echo "|---|---|---:|---|---|---:|---:|---|---|"
	wm=$(med "${WMS[walk_new]:-}")
	verdict=n/a
	[ "$wm" = n/a ] || verdict=$(awk -v m="$wm" -v n="$W_NODES" 'BEGIN { s = m * 787000 / n / 1000
		if (s < 2) printf "met: %.2f s at 787 k nodes", s; else printf "MISSED: %.2f s at 787 k nodes", s }')
	r=$(med "${RSS[walk_new]:-}")
	ok=no
	case ${WRES[walk_new]:-} in "$expect"*" shallow_sum=$W_BYTES") ok="every reachable object once; top $W_TOP = shallow sum $W_BYTES bytes" ;; esac
	echo "| whole tree | new | $W_NODES | $(spread "${WMS[walk_new]:-}") | $(spread "${WALLS[walk_new]:-}") | $([ "$r" = n/a ] && echo n/a || echo $((${r%.*} / 1024))) | $(awk -v m="$wm" -v n="$W_NODES" 'BEGIN { if (m == "n/a") print "n/a"; else printf "%.2f", m * 1000 / n }') | $verdict | $ok |"
	if [ -n "$OLD" ]; then
		on=${OLD_NODES:-$W_NODES}
		same=no
		[ "${WRES[part_old]:-x}" != "${WRES[part_new]:-y}" ] || same="the two print the same sums"
		for b in part_old part_new; do
			m=$(med "${WMS[$b]:-}"); r=$(med "${RSS[$b]:-}")
			echo "| first $on nodes | $([ $b = part_old ] && echo old || echo new) | $on | $(spread "${WMS[$b]:-}") | $(spread "${WALLS[$b]:-}") | $([ "$r" = n/a ] && echo n/a || echo $((${r%.*} / 1024))) | $(awk -v m="$m" -v n="$on" 'BEGIN { if (m == "n/a") print "n/a"; else printf "%.2f", m * 1000 / n }') | | $same |"
		done
		om=$(med "${WMS[part_old]:-}"); pm=$(med "${WMS[part_new]:-}")
		echo
		echo "Old binary: $OLD_ID."
		echo
		awk -v o="$om" -v p="$pm" -v w="$wm" -v on="$on" -v n="$W_NODES" 'BEGIN {
			if (o == "n/a" || p == "n/a" || w == "n/a") exit
			x = w + (o - p) * n / on
			printf "On the first %d nodes the old binary took %.0f ms, the new %.0f ms (both include the walk\x27s start: h:dominators() of the GC roots, their objects on the stack). The old binary\x27s extra cost per node, %.3f ms (a scan of the whole tree per call, the same for every node), over the whole tree: a whole walk of about %.0f s (%.1f min) against %.2f s measured, %.0fx.\n", on, o, p, (o - p) / on, x / 1000, x / 60000, w / 1000, x / w
		}'
	fi
	echo
	} >"$WALK_MD"
fi

# ---------------------------------------------------------------- where the time goes
PERF_MD=$LOG/perf.md
: >"$PERF_MD"
if [ "${BENCH_PERF:-1}" != 0 ] && want loops && command -v perf >/dev/null &&
	perf record -o "$LOG/perf.probe" true >/dev/null 2>&1; then
	cat >"$LOG/all5.lua" <<'EOF'
local s = 0
for _ = 1, 5 do
	for o in heapsh.current():objects() do s = s + o.size end
end
print(s)
EOF
	if perf record -q -F 1000 --call-graph dwarf,8192 -o "$LOG/perf.data" "$HS" -l "$LOG/all5.lua" "$BIG1" \
		>/dev/null 2>"$LOG/perf.err"; then
		{
		echo "### Where the Lua loop's time goes"
		echo
		echo "\`perf record --call-graph dwarf\` of \`heapsh -l\` running the \"all\" loop 5 times over big1."
		echo "Share of all samples spent in each function and what it calls (\"children\"), for the script"
		echo "(lua_pcallk), opening the dump (sh_open), and the parts of the loop:"
		echo
		echo '```'
		perf report -i "$LOG/perf.data" --children --stdio -g none --sort symbol --percent-limit 0.5 2>/dev/null |
			grep '%' | grep -E ' (lua_pcallk|sh_open|objects_next|lb_push_object|lb_new_object|lua_newuserdatauv|obj_index|lua_rawgetp|__GI___libc_malloc|__GI___libc_free|lua_touserdata|builtin|heap_field_at|heap_shallow)( |$)' |
			sed 's/[[:space:]]*$//' | sed 's/ *-  *-$//'
		echo '```'
		echo
		echo "The functions with 1% of the samples or more, self time (opening the dump included:"
		echo "heap_load, pass2_range, heap_index, incoming_work, radix_work, hprof_* are the loading):"
		echo
		echo '```'
		perf report -i "$LOG/perf.data" --no-children --stdio -g none --sort symbol --percent-limit 1 2>/dev/null |
			grep '%' | sed 's/[[:space:]]*$//' | sed 's/ *-  *-$//' | head -n 25
		echo '```'
		echo
		} >"$PERF_MD"
	fi
	rm -f "$LOG/perf.data"
	rm -f "$LOG/perf.probe"
fi

# ---------------------------------------------------------------- report
{
echo "# bench/lua.sh, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "machine: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), nproc=$(nproc)," \
     "$(free -g | awk '/^Mem:/ { print $2 " GB total, " $7 " GB available" }'), $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "binary: $BIN_ID"
for d in "${DUMPS[@]}"; do
	echo "dump: $d, $(stat -c %s "$d") bytes"
done
echo
cat "$LOOP_MD" "$SCRIPT_MD" "$WALK_MD" "$PERF_MD"
failures_md
} >"$REPORT"

{
echo "### Lua scripting (issue 7, bench/lua.sh; the full report is in $REPORT)"
echo
echo "Binary: $BIN_ID."
echo
sed -n '/^|/p' "$LOOP_MD"
echo
sed -n '/^|/p' "$SCRIPT_MD"
echo
sed -n '/^|/p' "$WALK_MD"
echo
} | summary_section bench/lua.sh "$SUM"

echo
echo "== report (also in $REPORT; a section in $SUM)"
echo
cat "$REPORT"
[ ${#FAILURES[@]} -eq 0 ] || exit 1
