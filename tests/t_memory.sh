# t_memory.sh - arrays beyond the memory budget (docs/out-of-core.md): with
# --memory 1M every array of the heap model and the engine that is not tiny
# lives in a file-backed mapping instead of anonymous memory. On KnownHeap,
# a LeakShop heap, a synthetic dump and its gzip'd copy, every answer
# (:info, :histogram, :dominators, :retained, :path, :suspects, dynamic
# sizes, queries, Lua scripts) is identical either way, with and without an
# index written by the other; the plan is said before the arrays are built,
# the spill folder is empty after, bad budgets or folders are refused, and a
# command the disk fills under gives back what it made, so that with room
# again it works.
ME=$T/memory
mkdir -p "$ME" "$JAVA_OUT/leakshop"
rm -rf "${ME:?}"/*
mkdir -p "$ME/spill"
javac --release 17 -d "$JAVA_OUT/leakshop" tests/java/LeakShop.java &&
	java -cp "$JAVA_OUT/leakshop" LeakShop dump "$ME/leak.hprof" 1 >/dev/null
check_status "memory: LeakShop dumps its heap" 0 $?
make -s build/bench/gen_hprof >/dev/null &&
	build/bench/gen_hprof "$ME/syn.hprof" --size 24M --seed 11 >/dev/null &&
	gzip -k -c "$ME/syn.hprof" > "$ME/sgz.hprof.gz"
check_status "memory: a 24M synthetic dump and its gzip'd copy" 0 $?
cp "$KNOWN" "$ME/known.hprof"
# walk.lua: the whole dominator tree from Lua, objects and retained bytes summed
cat > "$ME/walk.lua" <<'EOF'
local h = heapsh.open(arg[1])
local n, s = 0, 0
local function walk(o)
	n = n + 1
	s = s + h:retained(o)
	for _, c in ipairs(h:dominators(o)) do walk(c) end
end
for _, r in ipairs(h:dominators()) do walk(r) end
print(n, s)
EOF

# battery DUMP OUT [HEAPSH ARGS]: the answers, one file, in CSV. :info
# without its memory rows, which differ by design.
battery() {
	local d=$1 out=$2
	shift 2
	{
		$HEAPSH "$@" --format csv -c ':info' "$d" | grep -v '^memory budget,\|^arrays,\|^index file,\|^index,\|^model,\|^dominator tree,\|^dynamic-size engine,'
		$HEAPSH "$@" --format csv -c ':histogram --top 30' -c ':histogram --by retained --top 20' \
			-c ':dominators --top 25' -c ':dominators --by-class --top 15' \
			-c ':retained java.lang.String' -c ':retained java.util.HashMap' \
			-c ':path java.util.ArrayList --all 3' -c ':path java.lang.String --merged' \
			-c ':suspects' -c ':duplicates --top 10' -c ':collections' \
			-c ':dominators --no-weak --top 10' -c ':top --by dynamic --top 10' \
			-c ':graphstats' "$d"
		$HEAPSH "$@" --format csv -f queries/biggest_collections.hq "$d"
		$HEAPSH "$@" --format csv -f queries/top_components.hq "$d"
		$HEAPSH "$@" -l lua/leak_suspects.lua "$d"
		$HEAPSH "$@" -l lua/classloaders.lua "$d"
		$HEAPSH "$@" -l "$ME/walk.lua" "$d"
	} > "$out" 2> "$out.err"
}

for d in known leak syn sgz; do
	f=$ME/$d.hprof
	[ "$d" = sgz ] && f=$ME/sgz.hprof.gz
	battery "$f" "$ME/$d.mem" --no-index
	battery "$f" "$ME/$d.file" --no-index --memory 1M --spill-dir "$ME/spill"
	check "memory: $d: answers within 1M equal those in memory" "" \
		"$(diff "$ME/$d.mem" "$ME/$d.file" | head -20)"
	check "memory: $d: answers are not empty" 1 "$([ "$(wc -l < "$ME/$d.file")" -gt 100 ] && echo 1)"
	check "memory: $d: within 1M: the same messages, and the plan" "$(cat "$ME/$d.mem.err")" \
		"$(grep -v 'more than the memory budget (1.0 MB, --memory): about .* go to files in' "$ME/$d.file.err")"
	check_contains "memory: $d: the plan said before the arrays" "go to files in $ME/spill" \
		"$(cat "$ME/$d.file.err")"
	# the arrays really went to files: :info says how many bytes
	arr=$($HEAPSH --no-index --memory 1M --spill-dir "$ME/spill" --format csv \
		-c ':dominators --top 1' -c ':info' "$f" 2>/dev/null | grep '^arrays,')
	check "memory: $d: :info shows arrays in files, at most 1M in memory" 1 \
		"$(printf '%s' "$arr" | grep -qE 'in memory \(peak ([0-9]+ bytes|[0-9.]+ KB|1\.0 MB)\), [0-9.]+ (KB|MB) in files' && echo 1)"
	check "memory: $d: the spill folder is empty after" "" "$(ls -A "$ME/spill")"
done

# The index: written within 1M, read in memory, and the other way round.
for way in "--memory 1M|" "|--memory 1M"; do
	w=${way%%|*} r=${way##*|}
	rm -f "$ME"/leak.hprof.hsidx
	# shellcheck disable=SC2086
	battery "$ME/leak.hprof" "$ME/leak.w" $w --spill-dir "$ME/spill"
	# shellcheck disable=SC2086
	battery "$ME/leak.hprof" "$ME/leak.r" $r --spill-dir "$ME/spill"
	check "memory: index written with [$w] read with [$r]: answers as without an index" "" \
		"$(diff "$ME/leak.mem" "$ME/leak.r" | head -20)"
	check_contains "memory: index written with [$w] was read" "read from the index" \
		"$($HEAPSH $r --spill-dir "$ME/spill" -c ':dominators --top 1' -c ':info' "$ME/leak.hprof")"
done

# Bad budgets and folders: refused with a message, exit 2.
# Past the budget, the plan also says what the index will take next to the
# dump, when the session writes one.
rm -f "$ME/known.hprof.hsidx"
out=$($HEAPSH --memory 1M --spill-dir "$ME/spill" -c ':dominators --top 1' "$ME/known.hprof" 2>&1 >/dev/null)
check_contains "memory: the plan counts the index" "go to files in $ME/spill (" "$out"
check_contains "memory: ... with the model, on the same disk" \
	"; the index, with the heap model, takes about" "$out"
rm -f "$ME/known.hprof.hsidx"
out=$($HEAPSH --no-index --memory 1M --spill-dir "$ME/spill" -c ':info' "$ME/known.hprof" 2>&1 >/dev/null)
check "memory: --no-index: no index in the plan" "" "$(printf '%s\n' "$out" | grep 'the index, with')"
out=$($HEAPSH --memory lots "$ME/known.hprof" -c ':info' 2>&1)
check_status "memory: --memory lots refused" 2 $?
check_contains "memory: --memory says what it takes" "--memory takes a size of at least 1M" "$out"
out=$($HEAPSH --memory 100K "$ME/known.hprof" -c ':info' 2>&1)
check_status "memory: --memory 100K refused" 2 $?
out=$($HEAPSH --spill-dir "$ME/nowhere" "$ME/known.hprof" -c ':info' 2>&1)
check_status "memory: --spill-dir to a missing folder refused" 2 $?
check_contains "memory: --spill-dir says why" "is not a folder heapsh can write to" "$out"
check "memory: HEAPSH_MEMORY is the budget" "memory budget,512.0 MB (--memory; docs/out-of-core.md)" \
	"$(HEAPSH_MEMORY=512M $HEAPSH --format csv -c ':info' "$ME/known.hprof" | grep '^memory budget,')"
check "memory: --memory wins over HEAPSH_MEMORY" "memory budget,2.0 GB (--memory; docs/out-of-core.md)" \
	"$(HEAPSH_MEMORY=512M $HEAPSH --memory 2G --format csv -c ':info' "$ME/known.hprof" | grep '^memory budget,')"

# Not enough disk for what goes beyond the budget: said before the arrays are
# built, and the shell still starts (a 1 MiB tmpfs as the spill folder; root only).
mkdir -p "$ME/tiny"
if mount -t tmpfs -o size=1M tmpfs "$ME/tiny" 2>/dev/null; then
	out=$($HEAPSH --no-index --memory 8M --spill-dir "$ME/tiny" "$ME/syn.hprof" -c ':info' 2>&1)
	check_status "memory: no room in the spill folder: exit 2" 2 $?
	check_contains "memory: no room: how much, where" \
		"of disk in $ME/tiny for what does not fit the memory budget (--memory 8.0 MB)" "$out"
	check_contains "memory: no room: what to do" "choose another folder with --spill-dir, or raise --memory" "$out"
	out=$(printf ':open %s\n:info\n' "$ME/syn.hprof" |
		$HEAPSH --no-index --memory 8M --spill-dir "$ME/tiny" --format csv "$ME/known.hprof" 2>&1)
	check_contains "memory: no room for another dump: said" "of disk in $ME/tiny" "$out"
	check_contains "memory: no room for another dump: the shell keeps the first" \
		"file,$ME/known.hprof" "$out"
	umount "$ME/tiny"
	# The disk fills while the engine works (after the plan said yes): the
	# command ends with the message, the session goes on (issue 36: the
	# library never ends the process), and what the failed command had made
	# goes back, memory and spill files (src/session/guard.h): its arrays
	# hold as much as before it, no spill file is left of it, and with room
	# again the same command works in the same 1 MiB.
	mount -t tmpfs -o size=1M tmpfs "$ME/tiny"
	tiny=$(cd "$ME/tiny" && pwd)
	# spill_files.lua: how many spill files heapsh has in $ME/tiny (unlinked
	# and mapped: one inode each in /proc/self/maps)
	cat > "$ME/spill_files.lua" <<LUA
local seen, n = {}, 0
for l in io.lines('/proc/self/maps') do
	local ino = l:match('^%S+ %S+ %S+ %S+ (%d+)')
	if l:find('$tiny/heapsh-big-', 1, true) and not seen[ino] then seen[ino] = true; n = n + 1 end
end
print('spill files: ' .. n)
LUA
	fill="os.execute('dd if=/dev/zero of=$ME/tiny/fill bs=64k 2>/dev/null')"
	out=$($HEAPSH --no-index --memory 1M --spill-dir "$ME/tiny" --format csv "$ME/known.hprof" \
		-c ":lua dofile('$ME/spill_files.lua')" -c ':info' -c ":lua $fill" -c ':dominators --top 1' \
		-c ":lua dofile('$ME/spill_files.lua')" -c ':info' -c ":lua os.remove('$ME/tiny/fill')" \
		-c ':dominators --top 1' -c ':info' 2>&1)
	check_status "memory: disk full mid-command: an error (exit 2), not the end (3)" 2 $?
	check_contains "memory: disk full mid-command: what, where, what to do" \
		"array: the memory budget (--memory 1.0 MB) is used, and there is no room for it in $ME/tiny (0 bytes free); free space there, choose another folder with --spill-dir, or raise --memory" "$out"
	files=$(printf '%s\n' "$out" | grep '^spill files: ')
	check "memory: disk full mid-command: no spill file of it is left" \
		"$(printf '%s\n' "$files" | head -1)" "$(printf '%s\n' "$files" | sed -n 2p)"
	arrays=$(printf '%s\n' "$out" | grep '^arrays,' | sed 's/ (peak [^)]*)//g')
	check "memory: disk full mid-command: its arrays went back, memory and files" \
		"$(printf '%s\n' "$arrays" | head -1)" "$(printf '%s\n' "$arrays" | sed -n 2p)"
	check "memory: disk full mid-command: the next command runs (one table of dominators)" 1 \
		"$(printf '%s\n' "$out" | grep -c '^id,class,shallow_bytes,retained_bytes$')"
	check_contains "memory: disk full mid-command: the session goes on" "dominator tree,\"computed; " "$out"
	printf '%s\n' "local h = require('heapsh').open('$ME/known.hprof')" "$fill" \
		"local ok, v, err = pcall(h.dominators, h)" "print('full', ok, v, err)" \
		"os.remove('$ME/tiny/fill')" "print('again', #h:dominators())" > "$ME/full.lua"
	out=$($HEAPSH --no-index --memory 1M --spill-dir "$ME/tiny" -l "$ME/full.lua" 2>&1)
	check_contains "memory: disk full in Lua: nil and the message (heapsh.open's session has the budget)" \
		"$(printf 'full\ttrue\tnil\tcannot make a')" "$out"
	check_contains "memory: disk full in Lua: the script goes on, and the call works again" \
		"$(printf 'again\t')" "$out"
	umount "$ME/tiny"
	# Past the budget from the start (the synthetic dump's model is 11.5 MB
	# in files), the failed build had put arrays of its own in spill files:
	# they go too. Settled arrays of the heap may move from memory to files
	# to make room for the build, which changes where they are, not how much.
	mount -t tmpfs -o size=48M tmpfs "$ME/tiny"
	out=$($HEAPSH --no-index --memory 1M --spill-dir "$ME/tiny" --format csv "$ME/syn.hprof" \
		-c ':info' -c ":lua os.execute('dd if=/dev/zero of=$ME/tiny/fill bs=1M count=28 2>/dev/null')" \
		-c ':dominators --top 1' -c ':info' -c ":lua os.remove('$ME/tiny/fill')" \
		-c ':dominators --top 1' 2>&1)
	check_contains "memory: disk full mid-build past the budget: said" \
		"array: the memory budget (--memory 1.0 MB) is used, and there is no room for it in $ME/tiny" "$out"
	# KB in memory plus in files, at each :info (whose rows show 0.1 MB)
	kb=$(printf '%s\n' "$out" |
		sed -n 's/^arrays,"\([0-9.]*\) \([a-zA-Z]*\) in memory[^,]*, \([0-9.]*\) \([a-zA-Z]*\) in files.*/\1 \2 \3 \4/p' |
		awk 'function kb(v, u) { return u ~ /^byte/ ? v / 1024 : u == "KB" ? v : u == "MB" ? v * 1024 : v * 1048576 }
		     { printf "%.0f ", kb($1, $2) + kb($3, $4) }')
	check "memory: disk full mid-build past the budget: its spill files went back" "same" \
		"$(echo "$kb" | awk '{ d = $2 - $1; if (d < 0) d = -d; print (NF == 2 && d < 103) ? "same" : $2 " KB after, " $1 " KB before" }')"
	check "memory: disk full mid-build past the budget: with room again, the tree" 1 \
		"$(printf '%s\n' "$out" | grep -c '^id,class,shallow_bytes,retained_bytes$')"
	umount "$ME/tiny"
else
	echo "skip memory: no room in the spill folder (needs root to mount a tmpfs)"
fi
rm -f "$ME"/*.hprof "$ME"/*.gz "$ME"/*.hsidx
