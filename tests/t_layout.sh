# t_layout.sh - shallow sizes equal the JVM's own (issue 35; docs/heap-model.md,
# "Shallow sizes"): Eclipse MAT's TestInstanceSizes on MAT's own five dumps of
# JDK 5 and 6 (tests/data/mat, EPL-2.0: SOURCE.md there), with at most MAT's
# errors; and tests/java/LayoutHeap.java on JDK 17 and 25, its heap dumped by
# `jcmd GC.heap_dump -all` right after `jcmd GC.class_histogram -all` (no GC
# between, so both see the same objects): every class's size equal, the
# JDK's classes with injected fields and @Contended padding included.
LY=$T/layout
mkdir -p "$LY/classes"

# MAT's test: (histogram, dump, the errors MAT expects). JDK 5's one error is
# byte[]: the histogram's 16 arrays are 8 bytes fewer than the dump's (taken
# at another moment); MAT and HotSpot's own formula count the dump's the same.
while read -r histo dump expect; do
	$HEAPSH --no-index --format csv -c ':histogram' "tests/data/mat/$dump.hprof.gz" >"$LY/$dump.csv" 2>"$LY/$dump.err" ||
		{ fail "MAT $dump: heapsh read it" "$(head -3 "$LY/$dump.err")"; continue; }
	out=$(python3 tests/layout_check.py "tests/data/mat/$histo" "$LY/$dump.csv")
	n=$(printf '%s\n' "$out" | tail -1 | awk '{ print $4 }')
	compared=$(printf '%s\n' "$out" | tail -1 | awk '{ print $2 }')
	if [ -n "$n" ] && [ "$n" -le "$expect" ] && [ "$compared" -ge 100 ]; then
		ok "MAT TestInstanceSizes $dump: $compared classes compared, $n differ (MAT expects $expect)"
	else
		fail "MAT TestInstanceSizes $dump: at most $expect of the classes differ" "$out"
	fi
done <<'EOF'
histogram_sun_jdk5_13_x32.txt sun_jdk5_13_x32 1
histogram_sun_jdk6_18_x32.txt sun_jdk6_18_x32 0
histogram_sun_jdk6_18_x64.txt sun_jdk6_18_x64 0
sun_jdk6_30_x64_compressedOops.notes.txt sun_jdk6_30_x64_compressedOops 0
sun_jdk6_30_x64_nocompressedOops.notes.txt sun_jdk6_30_x64_nocompressedOops 0
EOF
info=$($HEAPSH --no-index --format csv -c ':info' tests/data/mat/sun_jdk6_30_x64_compressedOops.hprof.gz 2>&1)
check_contains "MAT's JDK 6 dump with compressed oops: :info says how they were found" \
	"object header,12 bytes (oops 4 bytes: an object array closer to the next object than 8-byte references allow)" "$info"
check_contains "MAT's JDK 6 dump: :info names the layout" "HotSpot, field layout of JDK 6-14" "$info"
check_contains "MAT's JDK 6 dump without compressed oops: header 16, references 8" "object header,16 bytes (oops 8" \
	"$($HEAPSH --no-index --format csv -c ':info' tests/data/mat/sun_jdk6_30_x64_nocompressedOops.hprof.gz 2>&1)"
check "MAT's JDK 6 x64 dump: java.util.ArrayList is 40 bytes (5 instances, 200 bytes)" "java.util.ArrayList,5,200" \
	"$(grep '^java.util.ArrayList,' "$LY/sun_jdk6_30_x64_nocompressedOops.csv")"
conflict=$($HEAPSH --no-index --oops 8 --format csv -c ':info' tests/data/mat/sun_jdk6_30_x64_compressedOops.hprof.gz 2>&1)
check_contains "--oops 8 on a dump with compressed oops: :info says the addresses contradict it" \
	'oops conflict,"8-byte references, but an object array lies closer' "$conflict"
check_contains "--oops 8 on a dump with compressed oops: and that classes do not fit" "layout conflict," "$conflict"
check "MAT's dumps: no conflict said where the layout fits" "0" \
	"$(for d in tests/data/mat/*.hprof.gz; do $HEAPSH --no-index --format csv -c ':info' "$d" 2>&1; done | grep -c conflict)"
check_contains "--layout: an unknown JDK is refused" "--layout takes" \
	"$($HEAPSH --layout 3 -c ':info' tests/data/mat/sun_jdk6_18_x64.hprof.gz 2>&1)"
check_contains "--layout 17 on a JDK 6 dump: the layout said so" "set with --layout" \
	"$($HEAPSH --no-index --layout 17 -c ':info' tests/data/mat/sun_jdk6_18_x64.hprof.gz 2>&1)"

# LayoutHeap on the JDKs here.
javac --release 17 -d "$LY/classes" tests/java/LayoutHeap.java || { fail "layout: javac LayoutHeap"; return; }
for jdk in "${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}" "${JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}"; do
	[ -x "$jdk/bin/java" ] || { echo "skip layout: no $jdk"; continue; }
	v=$("$jdk/bin/java" -version 2>&1 | awk -F'"' '/version/ { split($2, a, "."); print a[1]; exit }')
	compact=
	[ "$v" -ge 25 ] 2>/dev/null && compact=-XX:+UseCompactObjectHeaders
	for flags in "" "-XX:-UseCompressedOops" "-XX:ObjectAlignmentInBytes=16" "-XX:-UseCompressedClassPointers" \
		$compact; do
		name="JDK $v${flags:+ $flags}"
		f=$LY/jdk$v${flags//[^A-Za-z0-9]/_}
		rm -f "$f.in" "$f.hprof"
		mkfifo "$f.in"
		exec 7<>"$f.in"
		# shellcheck disable=SC2086
		"$jdk/bin/java" -Xmx128m $flags -cp "$LY/classes" LayoutHeap <"$f.in" >"$f.out" 2>"$f.err" &
		jp=$!
		pid=
		for ((i = 0; i < 300; i++)); do
			read -r _ pid < <(grep '^ready ' "$f.out" 2>/dev/null)
			[ -n "$pid" ] && break
			sleep 0.1
		done
		if [ -z "$pid" ]; then
			fail "layout $name: LayoutHeap started" "$(head -3 "$f.err")"
			kill "$jp" 2>/dev/null
			exec 7>&-
			continue
		fi
		# jcmd's attach can time out on a loaded machine: tried up to three times each.
		for ((i = 0; i < 3; i++)); do
			"$jdk/bin/jcmd" "$pid" GC.class_histogram -all >"$f.histo" 2>&1
			grep -q '^Total ' "$f.histo" && break
		done
		for ((i = 0; i < 3; i++)); do
			"$jdk/bin/jcmd" "$pid" GC.heap_dump -all "$PWD/$f.hprof" >"$f.dumpout" 2>&1
			[ -s "$f.hprof" ] && break
		done
		if [ -z "$flags" ]; then
			# A live :histogram (the JVM's own) and heapsh's snapshot of the same JVM.
			timeout 120 $HEAPSH --format csv -c ':histogram' "$pid" 2>/dev/null |
				awk -F, 'NR > 1 { print $2, $3, $1 }' >"$f.live"
			timeout 300 $HEAPSH --format csv -c ':live off' -c ':histogram' "$pid" >"$f.snap.csv" 2>"$f.snap.err"
			out=$(python3 tests/layout_check.py --skip jdk.internal.vm.StackChunk "$f.live" "$f.snap.csv")
			compared=$(printf '%s\n' "$out" | tail -1 | awk '{ print $2 }')
			if [ "$(printf '%s\n' "$out" | tail -1 | awk '{ print $4 }')" = 0 ] && [ "${compared:-0}" -ge 300 ]; then
				ok "layout $name: a live :histogram equals heapsh's snapshot of the JVM ($compared classes)"
			else
				fail "layout $name: a live :histogram equals heapsh's snapshot of the JVM" \
					"$(printf '%s\n' "$out" | tail -12)" "$(head -3 "$f.snap.err")"
			fi
		fi
		echo done >&7
		exec 7>&-
		wait "$jp" 2>/dev/null
		$HEAPSH --no-index --format csv -c ':histogram' "$f.hprof" >"$f.csv" 2>"$f.hserr"
		# jdk.internal.vm.StackChunk: a virtual thread's stack, its size its own.
		out=$(python3 tests/layout_check.py --skip jdk.internal.vm.StackChunk "$f.histo" "$f.csv")
		compared=$(printf '%s\n' "$out" | tail -1 | awk '{ print $2 }')
		if [ "$(printf '%s\n' "$out" | tail -1 | awk '{ print $4 }')" = 0 ] && [ "${compared:-0}" -ge 300 ]; then
			ok "layout $name: every class's size equals the JVM's ($compared classes)"
		else
			fail "layout $name: every class's size equals the JVM's" "$(printf '%s\n' "$out" | tail -12)" \
				"jcmd GC.class_histogram: $(tail -2 "$f.histo")" "jcmd GC.heap_dump: $(tail -2 "$f.dumpout")" \
				"heapsh: $(head -3 "$f.hserr")"
		fi
		if [ -z "$flags" ]; then
			for c in java.util.concurrent.ForkJoinPool 'java.util.concurrent.ConcurrentHashMap$CounterCell' \
				java.lang.Module 'LayoutHeap$LongThenInt' 'LayoutHeap$Worker'; do
				check "layout $name: $c as in the JVM's histogram" \
					"$(awk -v c="$c" '$4 == c { print $3 / $2 }' "$f.histo" | head -1)" \
					"$(awk -F, -v c="$c" '$1 == c && $2 > 0 { print $3 / $2 }' "$f.csv")"
			done
			check_contains "layout $name: :info names the layout" "HotSpot, field layout of JDK 15+" \
				"$($HEAPSH --no-index -c ':info' "$f.hprof" 2>&1)"
		fi
		rm -f "$f.hprof" "$f.in"
	done
done
