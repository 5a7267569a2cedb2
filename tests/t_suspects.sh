# t_suspects.sh - :suspects on dumps of tests/java/LeakShop.java (four planted
# leaks and two look-alikes, its KNOWN FACTS) and tests/java/ShopServer.java
# (the issue's example), on JDK 17 and 25: each leak in the top rows with the
# field that holds it, no look-alike above a leak, the figures against
# :retained and :dominators, growth against --baseline, the output modes and
# the errors.
SU=$T/suspects
mkdir -p "$SU" "$JAVA_OUT/leakshop"
rm -f "$SU"/*.hprof "$SU"/*.hsidx
SU_JAVA25=${JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java	# JDK25: a JDK folder, as the other tests take it
javac --release 17 -d "$JAVA_OUT/leakshop" tests/java/LeakShop.java tests/java/ShopServer.java &&
	java -cp "$JAVA_OUT/leakshop" LeakShop dump "$SU/r1.hprof" 1 &&
	java -cp "$JAVA_OUT/leakshop" LeakShop dump "$SU/r2.hprof" 2 &&
	java -cp "$JAVA_OUT/leakshop" ShopServer dump "$SU/shop.hprof" >/dev/null
check_status "LeakShop (ROUNDS 1 and 2) and ShopServer dump their heaps" 0 $?
DUMPS="$SU/r1.hprof $SU/r2.hprof"
if [ -x "$SU_JAVA25" ]; then
	"$SU_JAVA25" -cp "$JAVA_OUT/leakshop" LeakShop dump "$SU/j25.hprof" 2
	check_status "LeakShop dumps its heap on JDK 25" 0 $?
	DUMPS="$DUMPS $SU/j25.hprof"
fi

# sus DUMP [ARGS]: :suspects in CSV without its header.
sus() { local d=$1; shift; $HEAPSH --format csv -c ":suspects $*" "$d" | tail -n +2; }
# static_value DUMP FIELD: the id of what static LeakShop.FIELD refers to.
static_value() { $HEAPSH --format csv -c ":refs $($HEAPSH --format csv -c ':classes LeakShop' "$1" |
	awk -F, 'NR == 2 { print $1 }')" "$1" | awk -F, -v f="static $2" '$1 == f { print $2 }'; }
# rowcols CSV WHERE COLS: columns COLS (1-based, "3,6") of the first row
# whose where column starts with WHERE, joined by commas (a real CSV reader:
# descriptions hold commas and quotes).
rowcols() {
	printf '%s\n' "$1" | python3 -c '
import csv, sys
want, cols = sys.argv[1], [int(c) - 1 for c in sys.argv[2].split(",")]
for r in csv.reader(sys.stdin):
    if len(r) > 7 and r[7].startswith(want):
        print(",".join(r[c] for c in cols))
        break' "$2" "$3"
}
retained() { $HEAPSH --format csv -c ":retained $2" "$1" | awk -F, 'NR == 2 { print $NF }'; }

for d in $DUMPS; do
	n=$(basename "$d" .hprof)
	S=$(sus "$d")
	# rank of the row whose where column (8th, after the quoted description) matches
	check "$n: the four leaks are the four top rows" "1 2 3 4" "$(for w in \
		'static LeakShop.PRICE_CACHE' 'static LeakShop.BUS.listeners' 'static LeakShop.PLUGINS' \
		'Thread.threadLocals.table[' ; do rowcols "$S" "$w" 1; done | sort -n | tr '\n' ' ' | sed 's/ $//')"
	S5=$(sus "$d" --threshold 5)
	low=$( (rowcols "$S5" 'static LeakShop.CATALOG' 1; rowcols "$S5" 'static LeakShop.LRU' 1) | sort -n | head -1)
	check "$n: at 5% no look-alike (CATALOG, LRU) ranks above a leak" yes \
		"$([ -z "$low" ] || [ "$low" -gt 4 ] && echo yes || echo "no: rank $low")"
	# the cache: the HashMap of PRICE_CACHE holds it; 2000 * ROUNDS entries
	map=$(static_value "$d" PRICE_CACHE)
	rounds=$([ "$n" = r1 ] && echo 1 || echo 2)
	row=$(rowcols "$S" 'static LeakShop.PRICE_CACHE' 2)
	check_contains "$n: the cache's sentence: its entries, what each holds" \
		"$([ $rounds = 1 ] && echo 2,000 || echo 4,000) entries (\`HashMap\$Node\`), each holding a \`LeakShop\$Quote\`" "$row"
	check_contains "$n: ... held by HashMap in static LeakShop.PRICE_CACHE" \
		'are held by `HashMap` in `static LeakShop.PRICE_CACHE`' "$row"
	check "$n: the cache's holder is the map in the static field, and it retains what :retained says" \
		"$map java.util.HashMap,$(retained "$d" "$map")" \
		"$(rowcols "$S" 'static LeakShop.PRICE_CACHE' 7,3)"
	# the listeners: 1500 * ROUNDS, in the CopyOnWriteArrayList of BUS.listeners
	row=$(rowcols "$S" 'static LeakShop.BUS.listeners' 2)
	check "$n: the listeners: count, holder class, accumulation point an Object[]" \
		"$((1500 * rounds)),java.util.concurrent.CopyOnWriteArrayList,java.lang.Object[]" \
		"$(rowcols "$S" 'static LeakShop.BUS.listeners' 5,7,6 | sed -E 's/0x[0-9a-f]+ //g')"
	check_contains "$n: ... each holding a session" 'instances of `LeakShop$SessionListener`, each holding a `LeakShop$Session`' "$row"
	# the class-loader leak: 2 * ROUNDS plugins, each of its own loader
	row=$(rowcols "$S" 'static LeakShop.PLUGINS' 2)
	check_contains "$n: the plugins, of their own class loaders" \
		"$((2 * rounds)) instances of \`LeakShop\$Plugin\`" "$row"
	check_contains "$n: ... and their class loaders" '(`LeakShop$PluginLoader "plugin-loader"`' "$row"
	# the ThreadLocal leak: the four pooled threads are one row
	row=$(rowcols "$S" 'Thread.threadLocals.table[' 2)
	check_contains "$n: the four worker threads are one suspect, by name" \
		'4 instances of `java.lang.Thread` ("leak-worker-0", "leak-worker-1", "leak-worker-2", ...) hold' "$row"
	check_contains "$n: ... through the ThreadLocal's auditTrail" 'through `threadLocals.table[' "$row"
	check_contains "$n: ... field chain" '].value.auditTrail`' "$row"
	tsum=0
	for id in $($HEAPSH --format csv -c ':threads' "$d" | awk -F, '$2 ~ /^leak-worker-/ { print $1 }'); do
		tsum=$((tsum + $(retained "$d" "$id")))
	done
	check "$n: the group's retained bytes are the four threads' (:dominators); its byte[] count" \
		"$tsum,$((2000 * rounds))" \
		"$(rowcols "$S" 'Thread.threadLocals.table[' 3,5)"
	# the path goes from a GC root to the accumulation point, with fields
	check_contains "$n: the listeners' path names the fields" \
		'-static BUS-> LeakShop$EventBus -listeners-> java.util.concurrent.CopyOnWriteArrayList -array-> java.lang.Object[]' \
		"$(rowcols "$S" 'static LeakShop.BUS.listeners' 9)"
done

# The issue's example: ShopServer's two leaks, as a MAT user reads them.
SH=$($HEAPSH -c ':suspects' "$SU/shop.hprof")
check_contains "ShopServer: the listeners as one sentence" \
	'2,600 instances of `ShopServer$CustomerSession$1`, each holding a' "$SH"
check_contains "ShopServer: ... held by the bus's CopyOnWriteArrayList" \
	'are held by `CopyOnWriteArrayList` in `static ShopServer.BUS.listeners`' "$(printf '%s\n' "$SH" | tr '\n' ' ' | tr -s ' ')"
check_contains "ShopServer: the four workers as one group" \
	'4 instances of `java.lang.Thread` ("shop-worker-0",' "$SH"
check "ShopServer: table rows fit 80 columns" "" "$(printf '%s\n' "$SH" | awk 'length > 80')"
check "LeakShop: table rows fit 80 columns" "" "$($HEAPSH -c ':suspects --threshold 1' "$SU/r2.hprof" | awk 'length > 80')"
if command -v tmux >/dev/null; then
	SCREEN=$(tmux_screen "HOME=$T $HEAPSH $SU/r2.hprof" "':suspects' Enter")
	check_contains "a terminal of 200 columns: the suspects are shown" "suspects; each keeps at least 10%" "$SCREEN"
	check "a terminal of 200 columns: rows fit 100" "" "$(printf '%s\n' "$SCREEN" | sed 's/ *$//' | awk 'length > 100')"
fi

# CSV and JSON columns
check "CSV header" "rank,description,retained_bytes,heap_pct,objects,accumulation_point,holder,where,path" \
	"$($HEAPSH --format csv -c ':suspects' "$SU/r2.hprof" | head -1)"
J=$($HEAPSH --format json -c ':suspects' "$SU/r2.hprof")
check "JSON: rank and bytes are numbers, the text strings" "1 number string string" \
	"$(printf '%s' "$J" | python3 -c 'import json,sys; r=json.load(sys.stdin)[0]; print(r["rank"], type(r["retained_bytes"]).__name__.replace("int","number"), type(r["description"]).__name__.replace("str","string"), type(r["path"]).__name__.replace("str","string"))')"
check "JSON: heap_pct of the first row agrees with retained_bytes" yes \
	"$(printf '%s' "$J" | python3 -c 'import json,sys; r=json.load(sys.stdin)[0]; print("yes" if r["retained_bytes"] > 0 and float(r["heap_pct"]) > 10 else r)')"

# Growth since a baseline: ROUNDS=1 then ROUNDS=2: each leak doubled, the
# look-alikes did not move.
B=$($HEAPSH --format csv -c ":suspects --threshold 5 --baseline $SU/r1.hprof" "$SU/r2.hprof")
check "--baseline: two more columns" "rank,description,retained_bytes,heap_pct,objects,accumulation_point,holder,where,path,base_retained_bytes,growth_bytes" \
	"$(printf '%s\n' "$B" | head -1)"
order=$(printf '%s\n' "$B" | tail -n +2 | awk -F, '{ g = $NF; w = "?" }
	/static LeakShop.PRICE_CACHE,/ { w = "PRICE_CACHE" } /,Thread.threadLocals/ { w = "Thread" }
	/static LeakShop.BUS.listeners,/ { w = "BUS" } /static LeakShop.PLUGINS[,.]/ { w = "PLUGINS" }
	/static LeakShop.CATALOG,/ { w = "CATALOG" } /static LeakShop.LRU,/ { w = "LRU" }
	{ print w ":" (g > 0 ? "+" : g) }')
# Below the four leaks, a suspect of the JVM's own (its JNI global Object[])
# may have moved a few bytes between the two runs (96 once): only the
# look-alikes' rows are checked there.
check "--baseline: the four leaks grew and rank first, the look-alikes grew 0 and rank after" \
	"BUS:+ PLUGINS:+ PRICE_CACHE:+ Thread:+ | CATALOG:0 LRU:0" \
	"$(printf '%s\n' "$order" | head -4 | sort | tr '\n' ' ')| $(printf '%s\n' "$order" | tail -n +5 | grep -v '^?:' | sort | tr '\n' ' ' | sed 's/ $//')"
cache_then=$(retained "$SU/r1.hprof" "$(static_value "$SU/r1.hprof" PRICE_CACHE)")
cache_now=$(retained "$SU/r2.hprof" "$(static_value "$SU/r2.hprof" PRICE_CACHE)")
check "--baseline: the cache's growth is its map's retained size now less then" \
	"$cache_then,$((cache_now - cache_then))" \
	"$(printf '%s\n' "$B" | grep ',static LeakShop.PRICE_CACHE,' | awk -F, '{ print $(NF-1) "," $NF }')"
check_contains "--baseline in table mode: growth in each heading" "since the baseline" \
	"$($HEAPSH -c ":suspects --baseline $SU/r1.hprof" "$SU/r2.hprof")"
# The same from Lua (the session's hs_suspects for both front ends).
check "Lua suspects{baseline}: each suspect's retained size then and growth, as :suspects --baseline" \
	"$(printf '%s\n' "$B" | tail -n +2 | awk -F, '{ print $1, ($(NF-1) == "" ? "nil" : $(NF-1)), $NF }')" \
	"$($HEAPSH -c ":lua for _, s in ipairs(heapsh.current():suspects{threshold = 5, baseline = '$SU/r1.hprof'}) do print(s.rank, s.base_retained_bytes, s.growth_bytes) end" "$SU/r2.hprof" | tr '\t' ' ')"
check "Lua suspects{baseline}: a baseline that is not there is nil and the message" \
	"nil --baseline $SU/nothing.hprof:" \
	"$($HEAPSH -c ":lua local s, m = heapsh.current():suspects{baseline = '$SU/nothing.hprof'} print(s, m:sub(1, #'--baseline $SU/nothing.hprof:'))" "$SU/r2.hprof" | tr '\t' ' ')"

# Errors: each says what and the shell goes on.
out=$($HEAPSH -c ':suspects --threshold 0' -c ':suspects --threshold abc' -c ':suspects --child' \
	-c ":suspects --baseline $SU/nothing.hprof" -c ':suspects --bogus' -c ':info' "$SU/r2.hprof" 2>&1); st=$?
check_status "errors: exit 2" 2 $st
check_contains "errors: --threshold 0" "--threshold wants a percentage above 0 and up to 100" "$out"
check_contains "errors: --child without a value" "--child wants a percentage" "$out"
check_contains "errors: a baseline that is not there" "--baseline $SU/nothing.hprof:" "$out"
check_contains "errors: an unknown option" "unexpected '--bogus'; usage: :suspects" "$out"
check_contains "errors: the shell went on" "objects" "$out"
printf 'not a dump' > "$SU/bad.hprof"
check_contains "errors: a baseline that is not a dump" "--baseline $SU/bad.hprof:" \
	"$($HEAPSH -c ":suspects --baseline $SU/bad.hprof" "$SU/r2.hprof" 2>&1)"
check_contains "nothing reaches the threshold: said so, and what lies under it" \
	"no leak suspects: nothing keeps 100% or more of the 1.1 MB reachable. Under the 100% threshold: 1 place each keeping 10% to 100%" \
	"$($HEAPSH -c ':suspects --threshold 100' "$KNOWN" 2>/dev/null | tr '\n' ' ' | sed 's/ *$//; s/of the [0-9.]* [KM]B/of the 1.1 MB/')"

# Growth points: under a threshold of 20%, two of the leaks (18-19% each)
# are no suspects; what lies under the threshold is said, and with a
# baseline the growing ones come back, ranked by growth, and the stable
# look-alikes (6% and 7%) do not.
T20=$($HEAPSH -c ':suspects --threshold 20' "$SU/r2.hprof" | tr '\n' ' ')
check_contains "under the threshold: what lies there and how to see it" \
	"Under the 20% threshold: " "$T20"
check_contains "under the threshold: --threshold and --baseline named" \
	"--threshold 2 looks at them; --baseline OLDER.hprof ranks what grew first, small ones included" "$T20"
G20=$($HEAPSH --format csv -c ":suspects --threshold 20 --baseline $SU/r1.hprof" "$SU/r2.hprof" | tail -n +2 | awk -F, '{ w = "?" }
	/static LeakShop.PRICE_CACHE,/ { w = "PRICE_CACHE" } /,Thread.threadLocals/ { w = "Thread" }
	/static LeakShop.BUS.listeners,/ { w = "BUS" } /static LeakShop.PLUGINS[,.]/ { w = "PLUGINS" }
	/static LeakShop.CATALOG,/ { w = "CATALOG" } /static LeakShop.LRU,/ { w = "LRU" }
	{ print w ":" ($NF > 0 ? "+" : $NF) }' | sort | tr '\n' ' ')
check "with a baseline, the growing ones under the threshold are listed, the stable ones not" \
	"BUS:+ PLUGINS:+ PRICE_CACHE:+ Thread:+ " "$G20"
check_contains "with a baseline, a small one says it is under the threshold" "(under the threshold); +" \
	"$($HEAPSH -c ":suspects --threshold 20 --baseline $SU/r1.hprof" "$SU/r2.hprof")"

# Merged paths on a class with thousands of instances (MAT's "merge shortest
# paths to GC roots"): one row per step, the 3,000 listeners one row.
check ":path LeakShop\$SessionListener --merged: one row per node, the objects reached through each" \
"0,,class sun.launcher.LauncherHelper,1,3000
1,static appClass,class LeakShop,1,3000
2,static BUS,LeakShop\$EventBus,1,3000
3,listeners,java.util.concurrent.CopyOnWriteArrayList,1,3000
4,array,java.lang.Object[],1,3000
5,[*],3000 x LeakShop\$SessionListener,3000,3000" \
	"$($HEAPSH --format csv -c ':path LeakShop$SessionListener --merged' "$SU/r2.hprof" | tail -n +2 | cut -d, -f1,2,4,5,6)"
check ":path LeakShop\$Quote --merged: 4,000 quotes through the map's table and its chained entries, counted per row" \
	"4000 4000" \
	"$($HEAPSH --format csv -c ':path LeakShop$Quote --merged' "$SU/r2.hprof" | awk -F, 'NR > 1 && $4 ~ /LeakShop\$Quote$/ { m += $5; c += $6 } END { print m, c }')"
