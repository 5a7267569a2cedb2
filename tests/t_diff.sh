# t_diff.sh - heapsh diff OLD NEW and :diff OLDER (issue 38) on two dumps of
# tests/java/DiffLeak.java, ROUNDS=1 then ROUNDS=2: its leak (2000 * ROUNDS
# com.acme.DiffLeak$Entry in the static HashMap CACHE) doubles (and a
# thread's local holds the map during the second dump), a bigger look-alike
# (com.acme.Stable) stays, com.acme.Session halves, a tree of TreeNode grows
# a level, Blobs of byte[2048] double. The expectations are what the program
# made; sizes are JDK 17's with compressed oops: an Entry 24 bytes, its
# byte[200] and char[100] 216 each.
DDIR=$T/diff
DIFF_JAVA25=${JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java	# JDK25: a JDK folder, as the other tests take it
mkdir -p "$DDIR" "$JAVA_OUT/diffleak"
rm -f "$DDIR"/*.hprof "$DDIR"/*.hsidx
javac --release 17 -d "$JAVA_OUT/diffleak" tests/java/DiffLeak.java &&
	java -cp "$JAVA_OUT/diffleak" com.acme.DiffLeak "$DDIR/r1.hprof" 1 >/dev/null &&
	java -cp "$JAVA_OUT/diffleak" com.acme.DiffLeak "$DDIR/r2.hprof" 2 >/dev/null
check_status "DiffLeak dumps its heap at ROUNDS 1 and 2" 0 $?
R1=$DDIR/r1.hprof
R2=$DDIR/r2.hprof
HEADER="objects_before,objects_after,retained_before,retained_after,retained_growth"
ENTRY_ROW='com.acme.DiffLeak$Entry,2000,4000,912000,1824000,912000'
LEAK_PATH='class com.acme.DiffLeak -static CACHE-> java.util.HashMap -table-> java.util.HashMap$Node[] -[]-> java.util.HashMap$Node -value-> com.acme.DiffLeak$Entry'

# By class: the leak's class first, with the objects the program made and
# the bytes they retain (2000 * (24 + 216 + 216) a round).
DCLS=$($HEAPSH --no-index --format csv diff "$R1" "$R2")
check "by class: CSV header" "class,$HEADER" "$(printf '%s\n' "$DCLS" | head -1)"
check "by class: the leak's class is the first row, its objects and retained bytes exact" \
	"$ENTRY_ROW" "$(printf '%s\n' "$DCLS" | sed -n 2p)"
check "by class: what holds the leak follows it (HashMap\$Node, its array, HashMap)" \
	'java.util.HashMap$Node java.util.HashMap$Node[] java.util.HashMap' \
	"$(printf '%s\n' "$DCLS" | sed -n 3,5p | cut -d, -f1 | tr '\n' ' ' | sed 's/ $//')"
check "by class: the look-alike that did not grow is no row" "" "$(csv_row "$DCLS" com.acme.Stable)"
check "by class: what shrank is a row of negative growth, its objects exact" \
	"com.acme.Session,600,300,57600,28800,-28800" "$(csv_row "$DCLS" com.acme.Session)"
check "by class: lambdas match across runs (their addresses dropped: no row)" "" \
	"$(printf '%s\n' "$DCLS" | grep -F 'Lambda')"
check "by class: rows by growth of their chain's end, the largest first (no row above the leak's grows more than 1.2x it)" "" \
	"$(printf '%s\n' "$DCLS" | tail -n +3 | awk -F, '$6 > 912000 * 1.2 { print }')"

# By package: com.acme first; primitive arrays a row per type.
DPKG=$($HEAPSH --format csv diff "$R1" "$R2" --by package)
check "by package: CSV header" "package,$HEADER" "$(printf '%s\n' "$DPKG" | head -1)"
check "by package: com.acme first, its objects exact (2000 Entry + 3000 Stable + 600 Session + 10 lambdas + 21 TreeNode + 5 TreeNode[] + 20 Blob, then 4000 + 3000 + 300 + 10 + 85 + 21 + 40)" \
	"com.acme,5656,7456" "$(printf '%s\n' "$DPKG" | sed -n 2p | cut -d, -f1-3)"
check "by package: byte[] and char[] are rows of their own" "byte[] char[]" \
	"$(printf '%s\n' "$DPKG" | cut -d, -f1 | grep -E '^(byte|char)\[\]$' | sort | tr '\n' ' ' | sed 's/ $//')"

# By path: the first row is the leak's whole path, from its static field.
DPATH=$($HEAPSH --format csv diff "$R1" "$R2" --by path)
check "by path: CSV header" "path,$HEADER" "$(printf '%s\n' "$DPATH" | head -1)"
check "by path: the first row is the leak's path from static CACHE of its holder class" \
	"$LEAK_PATH,2000,4000,912000,1824000,912000" "$(printf '%s\n' "$DPATH" | sed -n 2p)"
check_contains "by path: the chain stops at Entry, its payload is a row of its own" \
	"$LEAK_PATH -payload-> byte[],2000,4000,432000,864000,432000" "$DPATH"
# The tree grew a level: its nodes at every depth are one step (a class
# already on the path folds back to its first step), 21 then 85 of them.
check "by path: a recursive structure is one step whatever its depth" \
	"class com.acme.DiffLeak -static tree-> com.acme.TreeNode,21,85" \
	"$(printf '%s\n' "$DPATH" | grep -F 'static tree-> com.acme.TreeNode,' | cut -d, -f1-3)"
# A Session's byte[64] is 83% of its bytes, but a chain never ends in a
# primitive array: the data of the holder, which names what shrank.
check "by path: a chain of shrinking stops at Session, not at the byte[] it holds" \
	"class com.acme.DiffLeak -static SESSIONS-> java.util.ArrayList -elementData-> java.lang.Object[] -[]-> com.acme.Session,600,300,57600,28800,-28800" \
	"$(printf '%s\n' "$DPATH" | grep -F 'com.acme.Session,')"
check "by class: a class whose growth is its byte[]s ranks by its own growth (it passes nothing on to primitive arrays)" \
	'byte[] char[] com.acme.DiffLeak$Blob' \
	"$(printf '%s\n' "$DCLS" | sed -n 6,8p | cut -d, -f1 | tr '\n' ' ' | sed 's/ $//')"
check "by class: what shrank comes last, apart from chains of growth (java.lang.Class lost the cache a thread holds)" \
	"com.acme.Session java.lang.Class" \
	"$(printf '%s\n' "$DCLS" | tail -2 | cut -d, -f1 | tr '\n' ' ' | sed 's/ $//')"

# --fail-if: exit 1 beyond the limit with the failed condition on stderr, 0 under it, 2 on an error.
DERR=$($HEAPSH --format csv diff "$R1" "$R2" --fail-if 'com.acme.*:+20%' 2>&1 >/dev/null)
check_status "--fail-if 'com.acme.*:+20%': exit 1 (com.acme grew 46%)" 1 $?
check "--fail-if: the failed condition's line on stderr" \
	"heapsh: --fail-if 'com.acme.*:+20%' failed: com.acme.* retained 2046616 bytes before, 2981144 after, growth +934528 bytes (+45.7%), limit +20%" \
	"$DERR"
$HEAPSH diff "$R1" "$R2" --fail-if 'com.acme.*:+50%' >/dev/null 2>&1
check_status "--fail-if 'com.acme.*:+50%': exit 0" 0 $?
$HEAPSH diff "$R1" "$R2" --fail-if 'DiffLeak$Entry:+99.5%' >/dev/null 2>&1
check_status "--fail-if 'DiffLeak\$Entry:+99.5%' (it grew 100%): exit 1" 1 $?
$HEAPSH diff "$R1" "$R2" --fail-if 'DiffLeak$Entry:+100%' >/dev/null 2>&1
check_status "--fail-if 'DiffLeak\$Entry:+100%' (it grew 100%, not more): exit 0" 0 $?
$HEAPSH diff "$R1" "$R2" --fail-if 'com.acme.DiffLeak$Entry:+800K' >/dev/null 2>&1
check_status "--fail-if ':+800K' (it grew 891 KiB): exit 1" 1 $?
$HEAPSH diff "$R1" "$R2" --fail-if 'com.acme.DiffLeak$Entry:+1MB' >/dev/null 2>&1
check_status "--fail-if ':+1MB': exit 0" 0 $?
DERR=$($HEAPSH diff "$R1" "$R2" --fail-if 'com.acme.*:+50%' --fail-if 'com.acme.Session:+0%' \
	--fail-if 'Entry:+1K' 2>&1 >/dev/null)
check_status "several --fail-if, one failing: exit 1" 1 $?
check "several --fail-if: only the failed one is said" "Entry:+1K" \
	"$(printf '%s\n' "$DERR" | sed -n "s/^heapsh: --fail-if '\([^']*\)' failed.*/\1/p")"
DERR=$($HEAPSH diff "$R1" "$R2" --fail-if 'com.acme.DifLeak$Entry:+20%' 2>&1 >/dev/null)
check_status "--fail-if with a typo: exit 2" 2 $?
check "--fail-if with a typo: says so and suggests the class" \
	"heapsh: --fail-if 'com.acme.DifLeak\$Entry:+20%': no class in either dump is named 'com.acme.DifLeak\$Entry'; did you mean com.acme.DiffLeak\$Entry?" "$DERR"
DERR=$($HEAPSH diff "$R1" "$R2" --fail-if 'com.acme.*:20%' 2>&1 >/dev/null)
check_status "--fail-if without '+': exit 2" 2 $?
check_contains "--fail-if without '+': the forms allowed" "want PATTERN:+PCT% (com.acme.*:+20%) or PATTERN:+SIZE" "$DERR"
DERR=$($HEAPSH diff "$R1" 2>&1 >/dev/null)
check_status "one dump: exit 2" 2 $?
check_contains "one dump: the usage" "usage: heapsh [--format table|csv|json] diff OLD NEW" "$DERR"
DERR=$($HEAPSH -c ':info' diff "$R1" "$R2" 2>&1 >/dev/null)
check "diff with -c: refused" "heapsh: diff compares two dumps; it does not go with -c, -f, --mcp, --report or --export-graph" "$DERR"
$HEAPSH diff "$R1" "$R2" --by size >/dev/null 2>&1
check_status "--by size: exit 2" 2 $?
DERR=$($HEAPSH diff "$DDIR/nothere.hprof" "$R2" 2>&1 >/dev/null)
check_status "a missing OLD: exit 2" 2 $?
check_contains "a missing OLD: says so" "OLD: $DDIR/nothere.hprof: cannot open: No such file or directory" "$DERR"

# Options before and after the dumps; the shell's :diff; warm index.
DA=$($HEAPSH --format csv diff --top 5 --by package "$R1" "$R2")
DB=$($HEAPSH diff "$R1" "$R2" --by package --top 5 --format csv)
check "options before or after the dumps: the same output" "$DA" "$DB"
check "--top 5: five rows" 6 "$(printf '%s\n' "$DA" | wc -l)"
check ":diff OLDER in the shell: the CLI's rows" "$DCLS" \
	"$($HEAPSH --format csv -c ":diff $R1" "$R2")"
check "a second run from the index files: the same rows" "$DCLS" "$($HEAPSH --format csv diff "$R1" "$R2")"
DTAB=$($HEAPSH diff "$R1" "$R2" --top 2)
check_contains "table: a summary line first" "$R1 -> $R2: reachable " "$(printf '%s\n' "$DTAB" | head -1)"
check "table: the leak's row first" 'com.acme.DiffLeak$Entry 2000 4000 912000 1824000 912000' \
	"$(printf '%s\n' "$DTAB" | sed -n 4p | tr -s ' ')"

# JSON: one object of schema heapsh-diff/1.
DJSON=$($HEAPSH --format json diff "$R1" "$R2" --top 3 --fail-if 'com.acme.*:+20%' 2>/dev/null)
check "JSON: the schema's keys and types" \
	"heapsh-diff/1 class 3 file,jdk,objects,reachable_bytes class,objects_after,objects_before,retained_after,retained_before,retained_growth condition,pattern,limit,limit_unit,before,after,growth,failed com.acme.DiffLeak\$Entry 912000 True percent 20" \
	"$(printf '%s' "$DJSON" | python3 -c '
import json, sys
d = json.load(sys.stdin)
r, c = d["rows"], d["conditions"][0]
assert all(isinstance(d[s]["objects"], int) and isinstance(d[s]["reachable_bytes"], int) for s in ("old", "new"))
print(d["schema"], d["by"], len(r), ",".join(sorted(d["old"])), ",".join(sorted(r[0])), ",".join(c),
      r[0]["class"], r[0]["retained_growth"], c["failed"], c["limit_unit"], c["limit"])')"

# The same dump twice: no growth.
DSAME=$($HEAPSH --format csv diff "$R2" "$R2" --fail-if 'com.acme.*:+0%')
check_status "the same dump twice with --fail-if ':+0%': exit 0" 0 $?
check "the same dump twice: no rows" "class,$HEADER" "$DSAME"
check "the same dump twice by path: no rows" "path,$HEADER" "$($HEAPSH --format csv diff "$R2" "$R2" --by path)"

# Bad input: another JDK, a truncated dump, a file that is no dump.
if [ -x "$DIFF_JAVA25" ]; then
	"$DIFF_JAVA25" -cp "$JAVA_OUT/diffleak" com.acme.DiffLeak "$DDIR/j25.hprof" 2 >/dev/null
	DERR=$($HEAPSH diff "$R1" "$DDIR/j25.hprof" 2>&1 >/dev/null)
	check_status "JDK 17 against JDK 25: exit 2" 2 $?
	check_contains "JDK 17 against JDK 25: says so" \
		"is of JDK 17 (17." "$DERR"
	check_contains "JDK 17 against JDK 25: ... and NEW of JDK 25" "$DDIR/j25.hprof of JDK 25 (25." "$DERR"
	check_contains "JDK 17 against JDK 25: ... and what to do" \
		"): object sizes and the JDK's own classes differ between JDKs, so growth would mix the program's with the JDK's; compare dumps of one JDK (--mixed-jdk compares anyway)" "$DERR"
	DERR=$($HEAPSH --format csv diff "$R1" "$DDIR/j25.hprof" --mixed-jdk 2>&1 >/dev/null)
	check_status "--mixed-jdk: exit 0" 0 $?
	check_contains "--mixed-jdk: a warning" "heapsh: warning: OLD $R1 is of JDK 17" "$DERR"
	# Two dumps of JDK 25: the same leak first, its lambdas (named otherwise) matched.
	"$DIFF_JAVA25" -cp "$JAVA_OUT/diffleak" com.acme.DiffLeak "$DDIR/j25a.hprof" 1 >/dev/null
	D25=$($HEAPSH --format csv diff "$DDIR/j25a.hprof" "$DDIR/j25.hprof")
	check "JDK 25 against JDK 25: the leak's class first, the same objects and bytes" "$ENTRY_ROW" \
		"$(printf '%s\n' "$D25" | sed -n 2p)"
	check "JDK 25 against JDK 25: lambdas match across runs" "" "$(printf '%s\n' "$D25" | grep -F Lambda)"
fi
head -c 3000000 "$R2" >"$DDIR/cut.hprof"
DERR=$($HEAPSH diff "$R1" "$DDIR/cut.hprof" 2>&1 >/dev/null)
check_status "a truncated NEW: exit 2" 2 $?
check_contains "a truncated NEW: says so" \
	"heapsh: NEW $DDIR/cut.hprof is damaged (cut short or malformed): what was lost would count as shrinkage; compare whole dumps" "$DERR"
DERR=$($HEAPSH diff "$DDIR/cut.hprof" "$R2" 2>&1 >/dev/null)
check_status "a truncated OLD: exit 2" 2 $?
check_contains "a truncated OLD: says so" "heapsh: OLD $DDIR/cut.hprof is damaged (cut short or malformed)" "$DERR"
printf 'hello\n' >"$DDIR/not.hprof"
DERR=$($HEAPSH diff "$DDIR/not.hprof" "$R2" 2>&1 >/dev/null)
check_status "a file that is no dump: exit 2" 2 $?
check_contains "a file that is no dump: says so" \
	"heapsh: OLD: $DDIR/not.hprof: not an HPROF heap dump (no \"JAVA PROFILE 1.0.x\" header)" "$DERR"
DERR=$($HEAPSH diff "$R1" "$DDIR/not.hprof" 2>&1 >/dev/null)
check_status "a NEW that is no dump: exit 2" 2 $?
check_contains "a NEW that is no dump: says so" "not an HPROF heap dump" "$DERR"

# The manual's CI example ("In CI"): one running JVM dumped with jcmd before
# and after its load; heapsh diff --fail-if is the step's status. Between
# the first two dumps the program leaks 2000 more Entries (+100%); between
# the last two nothing.
rm -f "$DDIR/ci.in"
mkfifo "$DDIR/ci.in"
exec 9<>"$DDIR/ci.in"
java -cp "$JAVA_OUT/diffleak" com.acme.DiffLeak serve <"$DDIR/ci.in" >"$DDIR/ci.out" 2>&1 &
CIPID=$!
for ((i = 0; i < 60; i++)); do grep -q '^ready' "$DDIR/ci.out" 2>/dev/null && break; sleep 0.5; done
jcmd "$CIPID" GC.heap_dump "$PWD/$DDIR/before.hprof" >/dev/null
echo grow >&9
for ((i = 0; i < 60; i++)); do grep -q '^grew' "$DDIR/ci.out" 2>/dev/null && break; sleep 0.5; done
jcmd "$CIPID" GC.heap_dump "$PWD/$DDIR/after.hprof" >/dev/null
jcmd "$CIPID" GC.heap_dump "$PWD/$DDIR/later.hprof" >/dev/null
echo exit >&9
exec 9>&-
wait "$CIPID" 2>/dev/null
check "CI example: the JVM leaked 2000 Entries between the dumps" "grew 4000" "$(grep '^grew' "$DDIR/ci.out")"
CIERR=$($HEAPSH diff --fail-if 'com.acme.*:+20%' --fail-if 'com.acme.DiffLeak*:+50MB' \
	"$DDIR/before.hprof" "$DDIR/after.hprof" 2>&1 >/dev/null)
CIST=$?
check_status "CI example: the leak between jcmd's dumps fails the step (exit 1)" 1 $CIST
check_contains "CI example: the failed condition is on the log, the absolute one passed" \
	"heapsh: --fail-if 'com.acme.*:+20%' failed: com.acme.* retained" "$CIERR"
check_contains "CI example: ... with the leak's growth, 2000 Entries of 456 bytes" "growth +912000 bytes" "$CIERR"
check "CI example: one condition failed, the absolute one (+50MB) not" 1 "$(printf '%s\n' "$CIERR" | grep -c failed)"
$HEAPSH diff --fail-if 'com.acme.*:+20%' "$DDIR/after.hprof" "$DDIR/later.hprof" >/dev/null 2>&1
check_status "CI example: no growth between the last two dumps passes (exit 0)" 0 $?
check "CI example: the leak's class leads the JSON kept on failure" 'com.acme.DiffLeak$Entry 2000 4000' \
	"$($HEAPSH --format json diff "$DDIR/before.hprof" "$DDIR/after.hprof" --by class | python3 -c '
import json, sys
r = json.load(sys.stdin)["rows"][0]
print(r["class"], r["objects_before"], r["objects_after"])')"

# :diff previous in a running JVM: the snapshot before this one (:refresh keeps it).
if [ -f libheapsh_agent.so ]; then
	mkdir -p "$JAVA_OUT/leakshop"
	javac --release 17 -d "$JAVA_OUT/leakshop" tests/java/LeakShop.java tests/java/ShopServer.java
	rm -f "$DDIR/ls.in"
	mkfifo "$DDIR/ls.in"
	exec 8<>"$DDIR/ls.in"
	java -cp "$JAVA_OUT/leakshop" LeakShop wait 1 <"$DDIR/ls.in" >"$DDIR/ls.out" 2>&1 &
	LSPID=$!
	for ((i = 0; i < 60; i++)); do grep -q '^ready' "$DDIR/ls.out" 2>/dev/null && break; sleep 0.5; done
	DERR=$(HEAPSH_AGENT=$PWD/libheapsh_agent.so $HEAPSH -c ':diff previous' "$LSPID" 2>&1 >/dev/null)
	check "JVM: :diff previous with one snapshot: says there is none" \
		"heapsh: no earlier snapshot of this JVM to compare with" "$DERR"
	DOUT=$(HEAPSH_AGENT=$PWD/libheapsh_agent.so $HEAPSH --format json -c ':refresh' -c ':refresh' \
		-c ':diff previous --fail-if LeakShop*:+1%' "$LSPID" 2>&1)
	check_status "JVM: two snapshots, :diff previous" 0 $?
	check "JVM: the older side is the previous snapshot, the program's classes did not grow" \
		"the previous snapshot (taken, snapshot of JVM $LSPID (LeakShop, False" \
		"$(printf '%s' "$DOUT" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["old"]["file"][:28] + ",", d["new"]["file"][:len("snapshot of JVM 1 (LeakShop") + len(sys.argv[1]) - 1] + ",",
      d["conditions"][0]["failed"])' "$LSPID")"
	exec 8>&-
	kill "$LSPID" 2>/dev/null
	wait "$LSPID" 2>/dev/null
fi

# heap:diff in Lua: the same object as the CLI's JSON.
cat >"$DDIR/diff.lua" <<'LUA'
local h = heapsh.current()
local d = assert(h:diff(arg[2], {by = arg[3], top = 4, fail_if = {"com.acme.*:+20%"}}))
local keys = {"objects_before", "objects_after", "retained_before", "retained_after", "retained_growth"}
for _, r in ipairs(d.rows) do
	local t = {r[d.by]}
	for _, k in ipairs(keys) do t[#t + 1] = tostring(r[k]) end
	print(table.concat(t, ","))
end
local c = d.conditions[1]
print(d.schema, d.old.file, d.new.objects > d.old.objects, c.before, c.after, c.failed)
print(pcall(h.diff, h, arg[2], {by = "size"}))
print(h:diff(arg[2] .. ".missing"))
LUA
for by in class path; do
	check "Lua: h:diff{by = $by}: the CLI's rows" "$($HEAPSH --format csv diff "$R1" "$R2" --by $by --top 4 | tail -n +2)" \
		"$($HEAPSH -l "$DDIR/diff.lua" "$R2" "$R1" $by | head -4)"
done
DLUA=$($HEAPSH -l "$DDIR/diff.lua" "$R2" "$R1" class)
check "Lua: h:diff's schema, sides and condition" "heapsh-diff/1	$R1	true	2046616	2981144	true" "$(printf '%s\n' "$DLUA" | sed -n 5p)"
check_contains "Lua: a wrong by raises an error" "by: class, package or path, not 'size'" "$(printf '%s\n' "$DLUA" | sed -n 6p)"
check "Lua: a missing dump is nil and a message" "nil	OLD: $R1.missing: cannot open: No such file or directory" "$(printf '%s\n' "$DLUA" | sed -n 7p)"
