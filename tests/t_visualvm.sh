# t_visualvm.sh - the whole class histogram equals VisualVM's heap library
# (Debian's visualvm) on the same dump, exactly, for the JDK 17 on the machine
# and for every newer JDK under /usr/lib/jvm, but for the bytes of the JDK's
# classes whose layout VisualVM does not know (injected fields, @Contended:
# docs/heap-model.md, "Shallow sizes"). One more documented difference:
# VisualVM does not count class objects (CLASS DUMP records) as instances of
# java.lang.Class; heapsh does (docs/heap-model.md), so that row is checked
# as VisualVM's count plus the number of class objects.
VV_CP=$(sh tests/visualvm-classpath.sh) || { fail "VisualVM heap library" "install visualvm (make deps)"; return; }
V=$T/visualvm
mkdir -p "$V/classes"
javac -cp "$VV_CP" -d "$V/classes" tests/java/VisualVMHistogram.java || { fail "compile VisualVMHistogram"; return; }

compare_with_visualvm() {	# NAME DUMP
	local name=$1 dump=$2
	java -cp "$VV_CP:$V/classes" VisualVMHistogram "$dump" > "$V/vv.csv" 2>"$V/vv.err" \
		|| { fail "$name: VisualVM ran" "$(tail -3 "$V/vv.err")"; return; }
	$HEAPSH --format csv -c ':histogram' "$dump" > "$V/hs.csv"
	local classes
	classes=$($HEAPSH --format csv -c ':info' "$dump" | awk -F, '$1 == "class objects" { print $2 }')
	# Drop headers and VisualVM's zero-instance classes; set java.lang.Class aside.
	tail -n +2 "$V/vv.csv" | awk -F, '$(NF-1) != 0' | grep -v '^java\.lang\.Class,' | sort > "$V/vv.rows"
	tail -n +2 "$V/hs.csv" | grep -v '^java\.lang\.Class,' | sort > "$V/hs.rows"
	local n
	n=$(wc -l < "$V/vv.rows")
	check "$name: $n histogram rows: the classes and instances VisualVM's" \
		"$(cut -d, -f1-2 "$V/vv.rows")" "$(cut -d, -f1-2 "$V/hs.rows")"
	# Bytes: VisualVM sums the declared fields; heapsh lays them out as the
	# dump's JDK does, with the fields the VM injects and @Contended padding
	# (docs/heap-model.md, "Shallow sizes"; t_layout.sh checks them against
	# the JVM's own histogram). Only such classes differ, and by more.
	local lay='^(java\.lang\.(Thread|Module|ClassLoader|String|InternalError|StackFrameInfo|VirtualThread)|java\.lang\.invoke\.(MemberName|ResolvedMethodName|CallSite|MethodHandleNatives\$CallSiteContext)|java\.util\.concurrent\..*(ForkJoinPool|WorkQueue|CounterCell|Cell|Exchanger.*|BufferedSubscription)|[^,]*(Thread|ClassLoader|Loader|CallSite|ReferenceHandler)),'
	check "$name: histogram bytes equal VisualVM's but for the JDK's layout (injected fields, @Contended)" "" \
		"$(join -t, -j1 "$V/vv.rows" "$V/hs.rows" | awk -F, '$3 != $5' | grep -vE "$lay")"
	check "$name: where the bytes differ, heapsh counts more (fields VisualVM does not see)" "" \
		"$(join -t, -j1 "$V/vv.rows" "$V/hs.rows" | awk -F, '$3 > $5')"
	local vvc hsc
	vvc=$(awk -F, '$1 == "java.lang.Class" { print $2 }' "$V/vv.csv")
	hsc=$(awk -F, '$1 == "java.lang.Class" { print $2 }' "$V/hs.csv")
	check "$name: java.lang.Class = VisualVM's instances + class objects" "$((vvc + classes))" "$hsc"
	rm -rf "$dump.hwcache"
}

compare_with_visualvm "JDK 17" "$KNOWN"
for jdk in /usr/lib/jvm/*/; do
	j=$jdk/bin/java
	[ -x "$j" ] || continue
	ver=$("$j" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ { print $2 }')
	[ -n "$ver" ] && [ "${ver%%.*}" -gt 17 ] 2>/dev/null || continue
	d=$V/known-jdk$ver.hprof
	rm -f "$d"
	"$j" -cp "$JAVA_OUT" KnownHeap dump "$d" || { fail "JDK $ver: dump KnownHeap"; continue; }
	compare_with_visualvm "JDK $ver" "$d"
	check "JDK $ver: Order count and bytes" "Order,1000,40000" "$(csv_row "$($HEAPSH --format csv -c ':histogram Order' "$d")" Order)"
done
