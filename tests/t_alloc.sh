# t_alloc.sh - allocation recordings in running JVMs (docs/agent.md,
# "Allocation recordings"; issue 13): tests/java/alloc/AllocWork.java
# allocates objects known by construction (its KNOWN FACTS are the
# expectations), and heapsh records them: exact counts per account, class,
# site and calling context with live counts, memory accounts charged to the
# nearest accounted frame, sampled estimates within a stated bound, a mark
# and a diff, folded stacks and a flame graph that renders, a recording that
# outlives detach and is read by a later heapsh, two readers at once, a JVM
# that exits while recording, the start-up agent option on JDK 25, and the
# errors. Every JVM started here is killed at the end.
A=$T/alloc
AW=$JAVA_OUT/alloc
mkdir -p "$A" "$AW"
ALLOC_PIDS=()
ALLOC_JDK25=${JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}
AGENT_SO=$(realpath libheapsh_agent.so 2>/dev/null)

alloc_cleanup() {
	local p
	for p in ${ALLOC_PIDS[@]+"${ALLOC_PIDS[@]}"}; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
		rm -rf "/tmp/.heapsh-$p" "/tmp/.java_pid$p"
	done
	ALLOC_PIDS=()
	{ exec 8>&- 9>&-; } 2>/dev/null
}
trap alloc_cleanup EXIT

javac --release 11 -d "$AW" $(find tests/java/alloc -name '*.java') || fail "alloc: javac AllocWork"

# aw_start FD JAVA [FLAGS...]: AllocWork wait under JAVA with its stdin on a
# fifo held open as file descriptor FD (8 or 9); sets AW_PID (empty on failure).
aw_start() {
	local fd=$1 java=$2 i
	shift 2
	rm -f "$A/in$fd" "$A/out$fd"
	mkfifo "$A/in$fd"
	eval "exec $fd<>\"\$A/in$fd\""
	"$java" "$@" -cp "$AW" AllocWork wait <"$A/in$fd" >"$A/out$fd" 2>"$A/err$fd" &
	ALLOC_PIDS+=("$!")
	AW_PID=
	for ((i = 0; i < 300; i++)); do
		read -r _ AW_PID < <(grep '^ready ' "$A/out$fd" 2>/dev/null)
		[ -n "$AW_PID" ] && return 0
		sleep 0.1
	done
	fail "alloc: AllocWork started under $java" "$(head -5 "$A/err$fd")"
	return 1
}
# aw FD CMD: send CMD to the AllocWork on FD and wait for its "done" line.
aw() {
	local fd=$1 n i
	n=$(grep -c '^done' "$A/out$fd")
	echo "$2" >&"$fd"
	for ((i = 0; i < 600; i++)); do
		[ "$(grep -c '^done' "$A/out$fd")" -gt "$n" ] && return 0
		sleep 0.05
	done
	fail "alloc: AllocWork answered '$2'"
}
# ha PID ARGS...: heapsh on JVM PID in CSV under a timeout; stderr to $A/err.
ha() { local p=$1; shift; timeout 120 "$HEAPSH" --format csv "$@" "$p" 2>"$A/err"; }
# acme: the rows of a CSV table about com.acme classes and AllocWork's own.
acme() { grep -E 'com\.acme|AllocWork\$Loose|^com.acme.xml.\*,(int|java)' | sort; }
# site_line FILE CLASS: the line of the allocation site of CLASS in FILE (its "// SITE" comment).
site_line() { grep -nE "// SITE $2\$" "tests/java/alloc/$1" | cut -d: -f1; }

# ---- :alloc needs a live JVM ----
out=$("$HEAPSH" -c ':alloc accounts' "$KNOWN" 2>&1)
st=$?
check "alloc: on a dump" ":alloc needs a live JVM: attach with 'heapsh PID' or ':attach PID' (a heap dump records no allocations), or a JFR recording: ':open REC.jfr'" \
	"$(printf '%s' "$out" | sed 's/^[^:]*: //; s/^error: //')"
check_status "alloc: on a dump exits 2" 2 "$st"

# ---- exact mode, started in a running JVM (JDK 17), with accounts ----
if aw_start 8 java; then
	P=$AW_PID
	ha "$P" -c ':alloc start --interval exact --depth 64 --live all --accounts com.acme.web,com.acme.xml.*' >"$A/start"
	check_contains "alloc exact: started" "recording,running" "$(cat "$A/start")"
	check_contains "alloc exact: mode" 'mode,"exact, by bytecode instrumentation"' "$(cat "$A/start")"
	n=$(grep '^classes instrumented,' "$A/start" | cut -d, -f2)
	if [ -n "$n" ] && [ "$n" -ge 100 ]; then ok "alloc exact: the loaded classes were instrumented ($n)"
	else fail "alloc exact: the loaded classes were instrumented" "$(cat "$A/start")"; fi
	aw 8 warm
	aw 8 run
	ha "$P" -c ':alloc accounts' >"$A/acc"
	check "alloc exact: accounts header" "account,class,allocated_objects,allocated_bytes,live_objects,live_bytes" \
		"$(head -1 "$A/acc")"
	# KNOWN FACTS, accounts A: Buffers via Pool.make charged to their callers' accounts.
	check "alloc exact: accounts rows" "$(sort tests/java/alloc/accounts-A.csv)" "$(grep -v '^(none),' "$A/acc" | sed 1d | sort)"
	check "alloc exact: (none) gets the unaccounted frame's objects" \
		"(none),AllocWork\$Loose,250,4000,250,4000" "$(grep '^(none),AllocWork\$Loose,' "$A/acc")"
	check "alloc exact: no account for the helper's package" "" "$(grep '^com.acme.util,' "$A/acc")"
	check "alloc exact: largest allocated bytes first" "$(sed 1d "$A/acc" | cut -d, -f4 | sort -rn)" \
		"$(sed 1d "$A/acc" | cut -d, -f4)"
	check "alloc exact: --live sorts by live bytes" "com.acme.web,com.acme.web.Session,1000,24000,1000,24000" \
		"$(ha "$P" -c ':alloc accounts --live' | grep -v '^(none)' | sed -n 2p)"
	# Sites: Pool.make's Buffers from both callers are one site.
	L=$(site_line com/acme/util/Pool.java com.acme.util.Buffer)
	ha "$P" -c ':alloc sites --top 1000' >"$A/sites"
	check "alloc exact: site of the helper, both callers" \
		"com.acme.util.Pool.make(Pool.java:$L),com.acme.util.Buffer,900,28800,900,28800,0" \
		"$(grep "^com.acme.util.Pool.make(Pool.java:$L),com.acme.util.Buffer," "$A/sites")"
	L=$(site_line com/acme/xml/parse/Parser.java 'int\[\]')
	check "alloc exact: array site with elements" \
		"com.acme.xml.parse.Parser.parse(Parser.java:$L),int[],100,16800,100,16800,3700" \
		"$(grep "^com.acme.xml.parse.Parser.parse(Parser.java:$L),int\[\]," "$A/sites")"
	ha "$P" -c ':alloc classes --top 1000' >"$A/classes"
	check "alloc exact: classes row" "com.acme.web.Session,1000,24000,1000,24000,0" \
		"$(grep '^com.acme.web.Session,' "$A/classes")"
	# The calling-context tree: main > runOnce > handle > make > new Buffer.
	ha "$P" -c ':alloc tree' >"$A/tree"
	check "alloc exact: tree, the helper under WebHandler" \
		"5,new com.acme.util.Buffer,700,22400,700,22400,700,22400,0" \
		"$(grep -A3 'com.acme.util.Pool.make(Pool.java:21)' "$A/tree" | grep '^5,new com.acme.util.Buffer,700,')"
	check_contains "alloc exact: tree path" "3,com.acme.web.WebHandler.handle(WebHandler.java:" "$(cat "$A/tree")"
	# Folded stacks and a flame graph.
	ha "$P" -c ":alloc collapsed $A/stacks.txt" >/dev/null
	check_contains "alloc exact: folded stacks" \
		"com.acme.web.WebHandler.handle:$(site_line com/acme/web/WebHandler.java com.acme.web.Session);com.acme.web.Session_[i] 24000" \
		"$(cat "$A/stacks.txt" 2>/dev/null)"
	ha "$P" -c ":alloc flamegraph $A/flame.svg" >/dev/null
	check_contains "alloc exact: flame graph written" "com.acme.util.Pool.make" "$(cat "$A/flame.svg" 2>/dev/null)"
	if python3 -c 'import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])' "$A/flame.svg" 2>"$A/xmlerr"; then
		ok "alloc exact: flame graph is well-formed XML"
	else
		fail "alloc exact: flame graph is well-formed XML" "$(head -3 "$A/xmlerr")"
	fi
	python3 tests/render_svg.py "$A/flame.svg" "$A/flame.png" >"$A/render" 2>&1
	case $? in
	0) ok "alloc exact: flame graph renders in Chromium" ;;
	77) echo "skip alloc exact: flame graph rendering (no chromium)" ;;
	*) fail "alloc exact: flame graph renders in Chromium" "$(tail -3 "$A/render")" ;;
	esac
	# The interactive flame graph page, driven in Chromium as a person would (tests/flame_check.js).
	ha "$P" -c ':alloc classes --top 1000' >"$A/classes1"
	ha "$P" -c ":alloc flamegraph $A/flame.html" >/dev/null
	if [ ! -f build/node/node_modules/puppeteer-core/package.json ]; then
		fail "alloc flame graph page: puppeteer-core is installed (make test installs it into build/node)"
	else
		node tests/flame_check.js "$A/flame.html" "$A/flame-page.png" '^com\.acme\.web\.Session$' \
			com.acme.web.WebHandler.handle 600 >"$A/flame.json" 2>"$A/flame.err"
		fj() { python3 -c 'import json, sys; v = json.load(open(sys.argv[1])).get(sys.argv[2]); print(v if isinstance(v, str) else json.dumps(v))' "$A/flame.json" "$1" 2>/dev/null; }
		check "alloc flame graph page: no script error" "[]" "$(fj errors)"
		check "alloc flame graph page: frames drawn" "yes" "$([ "$(fj frames)" -gt 10 ] 2>/dev/null && echo yes)"
		check "alloc flame graph page: every label fits its box" "[]" "$(fj overflowing)"
		check "alloc flame graph page: no label cut that fitted whole" "[]" "$(fj cut_needlessly)"
		check_contains "alloc flame graph page: packages cut to initials where the name does not fit" '"c.a.' "$(fj shortened)"
		# grouped N: N with thousands separators, as the page shows numbers
		grouped() { python3 -c 'import sys; print(f"{int(float(sys.argv[1])):,}")' "$1"; }
		sb=$(grouped "$(awk -F, '$1 == "com.acme.web.Session" { print $3 }' "$A/classes1")")
		check_contains "alloc flame graph page: search, matches and their share" \
			"match: $sb bytes allocated, " "$(fj search_status)"
		check "alloc flame graph page: a zoomed frame is as wide as the graph" "$(fj full_width)" "$(fj zoom_width)"
		check_contains "alloc flame graph page: zoomed, it says where" "zoomed to com.acme.web.WebHandler.handle" "$(fj zoom_total)"
		check "alloc flame graph page: reset" "$(grouped "$(awk -F, 'NR > 1 { s += $3 } END { print s }' "$A/classes1")") bytes allocated" "$(fj reset_total)"
		check "alloc flame graph page: objects instead of bytes" \
			"$(grouped "$(awk -F, 'NR > 1 { s += $2 } END { print s }' "$A/classes1")") objects allocated" "$(fj objects_total)"
		if python3 -c 'import sys; sys.path.insert(0, "tests"); import render_svg as r; w, h, c, rows = r.decode_png(sys.argv[1]); ink, colours = r.census(w, h, c, rows); sys.exit(0 if ink / (w * h) > r.MIN_INK and len(colours) >= r.MIN_COLOURS else 1)' "$A/flame-page.png" 2>"$A/png.err"; then
			ok "alloc flame graph page: the screenshot shows a graph"
		else
			fail "alloc flame graph page: the screenshot shows a graph" "$(tail -2 "$A/png.err")"
		fi
	fi
	check "alloc leaks in a running JVM: AllocWork's recording answers" \
		"class,samples,path,allocated_at,live_objects,live_bytes,growth_bytes,age_gcs" \
		"$(ha "$P" -c ':alloc leaks' | head -1)"
	# pprof, read by Go's own pprof: totals, top classes, accounts and frames as heapsh's tables say.
	ha "$P" -c ':alloc classes --top 1000' >"$A/classes2"
	ha "$P" -c ":alloc pprof $A/alloc.pb.gz" >"$A/pprof.out"
	check_contains "alloc pprof: written" "wrote $A/alloc.pb.gz" "$(cat "$A/pprof.out")"
	if ! command -v go >/dev/null; then
		fail "alloc pprof: go tool pprof is installed (make deps: golang-go)"
	else
		gp() { go tool pprof -unit=B -nodefraction=0 "$@" "$A/alloc.pb.gz" 2>/dev/null; }
		check "alloc pprof: total allocated bytes as :alloc classes" \
			"$(awk -F, 'NR > 1 { s += $3 } END { print s "B total" }' "$A/classes2")" \
			"$(gp -sample_index=alloc_space -top | grep -o '[0-9]*B total')"
		check "alloc pprof: total allocated objects as :alloc classes" \
			"$(awk -F, 'NR > 1 { s += $2 } END { print s " total" }' "$A/classes2")" \
			"$(go tool pprof -sample_index=alloc_objects -top "$A/alloc.pb.gz" 2>/dev/null | grep -o '[0-9]* total')"
		check "alloc pprof: top classes by allocated bytes as :alloc classes" \
			"$(grep -E '^com\.acme\.' "$A/classes2" | head -4 | awk -F, '{ print $3 "B " $1 }')" \
			"$(gp -sample_index=alloc_space -top -nodecount=100000 | grep -E ' com\.acme\.[A-Za-z.]*$' | head -4 | awk '{ print $1, $6 }')"
		check "alloc pprof: live bytes of a class as :alloc classes" \
			"$(grep '^com.acme.web.Session,' "$A/classes2" | cut -d, -f5)B" \
			"$(gp -sample_index=inuse_space -top -nodecount=100000 | awk '$6 == "com.acme.web.Session" { print $1 }')"
		check "alloc pprof: an account's bytes as :alloc accounts" \
			"$(ha "$P" -c ':alloc accounts' | awk -F, '$1 == "com.acme.web" { s += $4 } END { print s }')" \
			"$(gp -sample_index=alloc_space -raw | awk '/^Samples:/ { on = 1; next } on && /^ *[0-9]+ +[0-9]+ / { b = $2 } on && /account:\[com.acme.web\]/ { s += b } END { print s }')"
		L=$(site_line com/acme/util/Pool.java com.acme.util.Buffer)
		check_contains "alloc pprof: the calling context, with files and lines" \
			"$(printf '%s\n' "com.acme.util.Buffer" "com.acme.util.Pool.make com/acme/util/Pool.java:$L" \
				"com.acme.web.WebHandler.handle com/acme/web/WebHandler.java:")" \
			"$(gp -lines -traces | sed -E 's/^ +[0-9.]+[kMG]?B +//; s/^ +//')"
	fi
	ha "$P" -c ":alloc pprof $A/no/such/dir/x.pb.gz" >/dev/null
	check_contains "alloc pprof: a folder that is not there" "cannot write $A/no/such/dir/x.pb.gz: No such file or directory" "$(cat "$A/err")"
	# The recording goes on after detach; a later heapsh reads it; a mark and a diff.
	ha "$P" -c ':detach' >/dev/null
	check_contains "alloc exact: detach says the recording goes on" "goes on without heapsh" "$(cat "$A/err")"
	aw 8 run
	check "alloc exact: a later heapsh reads it" "com.acme.web,com.acme.web.Session,2000,48000,1000,24000" \
		"$(ha "$P" -c ':alloc accounts' | grep '^com.acme.web,com.acme.web.Session,')"
	ha "$P" -c ':alloc mark' >/dev/null
	aw 8 drop
	ha "$P" -c ':alloc diff --top 1000' >"$A/diff"
	check "alloc exact: diff header" "account,site,class,live_objects,live_bytes,mark_objects,mark_bytes,growth_objects,growth_bytes" \
		"$(head -1 "$A/diff")"
	check "alloc exact: diff, dropped sessions" \
		"com.acme.web,com.acme.web.WebHandler.handle(WebHandler.java:$(site_line com/acme/web/WebHandler.java com.acme.web.Session)),com.acme.web.Session,0,0,1000,24000,-1000,-24000" \
		"$(grep ',com.acme.web.Session,' "$A/diff")"
	check "alloc exact: diff, growth first" "$(sed 1d "$A/diff" | cut -d, -f9 | sort -rn)" "$(sed 1d "$A/diff" | cut -d, -f9)"
	# Two readers at once: the agent serves them in turn.
	ha "$P" -c ':alloc accounts' >"$A/r1" &
	r1=$!
	ha "$P" -c ':alloc accounts' >"$A/r2.tmp" 2>/dev/null
	wait $r1
	check "alloc exact: two readers at once" "$(acme <"$A/r1")" "$(acme <"$A/r2.tmp")"
	check_contains "alloc exact: two readers, rows" "com.acme.web,com.acme.web.Session,2000,48000,0,0" "$(cat "$A/r1")"
	# Errors.
	ha "$P" -c ':alloc start' >/dev/null
	check_contains "alloc: start twice" "a recording is already running" "$(cat "$A/err")"
	ha "$P" -c ':alloc start --accounts com..acme' >/dev/null
	check_contains "alloc: bad pattern" "the agent says: bad account pattern 'com..acme': a package name (a.b) or a package and its subpackages (a.b.*)" "$(cat "$A/err")"
	ha "$P" -c ':alloc start --accounts com.acme.*.web' >/dev/null
	check_contains "alloc: bad wildcard" "bad account pattern 'com.acme.*.web'" "$(cat "$A/err")"
	ha "$P" -c ':alloc start --interval 0' >/dev/null
	check_contains "alloc: interval 0" "--interval takes 'exact' or a number of bytes from 1 to 2147483647 (512k, 4m), not '0'" "$(cat "$A/err")"
	ha "$P" -c ':alloc start --interval lots' >/dev/null
	check_contains "alloc: interval not a number" "not 'lots'" "$(cat "$A/err")"
	ha "$P" -c ':alloc start --depth 0' >/dev/null
	check_contains "alloc: depth 0" "--depth takes a number of frames from 1 to 1024, not '0'" "$(cat "$A/err")"
	ha "$P" -c ':alloc accounts --l' >/dev/null
	check_contains "alloc: an abbreviated option is refused" "unknown argument '--l' of :alloc accounts" "$(cat "$A/err")"
	ha "$P" -c ':alloc frobnicate' >/dev/null
	check_contains "alloc: unknown subcommand" "unknown :alloc subcommand 'frobnicate'" "$(cat "$A/err")"
	# Reset of a running recording: counting starts afresh, with every class instrumented anew.
	ha "$P" -c ':alloc reset' >/dev/null
	aw 8 run
	check "alloc exact: reset while running, then one run" "com.acme.web,com.acme.web.Session,1000,24000,1000,24000" \
		"$(ha "$P" -c ':alloc accounts' | grep '^com.acme.web,com.acme.web.Session,')"
	aw 8 drop
	# Stop: nothing more is recorded, what was recorded stays readable.
	check_contains "alloc: stop" "recording,stopped" "$(ha "$P" -c ':alloc stop')"
	aw 8 run
	# The recorded sessions were dropped; the new run's are not recorded: live 0.
	check "alloc: nothing recorded after stop" "com.acme.web,com.acme.web.Session,1000,24000,0,0" \
		"$(ha "$P" -c ':alloc accounts' | grep '^com.acme.web,com.acme.web.Session,')"
	ha "$P" -c ':alloc start --accounts 9lives' >/dev/null
	check_contains "alloc: bad pattern on a stopped recording" "bad account pattern '9lives'" "$(cat "$A/err")"
	check "alloc: a bad start keeps the stopped recording" "com.acme.web,com.acme.web.Session,1000,24000,0,0" \
		"$(ha "$P" -c ':alloc accounts' | grep '^com.acme.web,com.acme.web.Session,')"
	ha "$P" -c ':alloc start --via jvmti' >/dev/null
	check_contains "alloc: --via without exact" "--via chooses how an exact recording is made" "$(cat "$A/err")"
	ha "$P" -c ':alloc start --interval exact --via magic' >/dev/null
	check_contains "alloc: --via what" "--via takes bytecode or jvmti, not 'magic'" "$(cat "$A/err")"
	# A new exact recording with another account after a stop: the classes put back
	# at the stop are instrumented again, with the new account.
	ha "$P" -c ':alloc start --interval exact --accounts com.acme.util --depth 1 --live all' >/dev/null
	aw 8 run
	check "alloc exact: restarted with another account" "$(sort <<'EOF2'
com.acme.util,com.acme.util.Buffer,900,28800,900,28800
com.acme.util,com.acme.util.Buffer[],2,3632,2,3632
EOF2
)" "$(ha "$P" -c ':alloc accounts' | grep -v '^(none),' | sed 1d | sort)"
	check "alloc exact: restarted, the rest goes to (none)" "(none),com.acme.web.Session,1000,24000,1000,24000" \
		"$(ha "$P" -c ':alloc accounts' | grep '^(none),com.acme.web.Session,')"
	ha "$P" -c ':alloc stop' >/dev/null
	# Reset of a stopped recording drops it.
	check_contains "alloc: reset" "recording,none" "$(ha "$P" -c ':alloc reset')"
	ha "$P" -c ':alloc accounts' >/dev/null
	check_contains "alloc: no recording" "this JVM has no allocation recording; start one with :alloc start" "$(cat "$A/err")"
	# A JVM that exits while recording: the session says so and goes on.
	ha "$P" -c ':alloc start --interval 64k' >/dev/null
	rm -f "$A/sess.in"
	mkfifo "$A/sess.in"
	exec 9<>"$A/sess.in"
	timeout 60 "$HEAPSH" --format csv "$P" <"$A/sess.in" >"$A/sess.out" 2>"$A/sess.err" &
	hs=$!
	echo ':alloc status' >&9
	sleep 1
	echo exit >&8
	for ((i = 0; i < 100; i++)); do kill -0 "$P" 2>/dev/null || break; sleep 0.1; done
	printf ':alloc accounts\n:format\n:quit\n' >&9
	wait $hs
	st=$?
	exec 9>&-
	check_contains "alloc: JVM exits while recording" "exited" "$(cat "$A/sess.err")"
	check_contains "alloc: the shell goes on after the JVM exits" "csv" "$(cat "$A/sess.out")"
	check_status "alloc: the session ends on its own" 2 "$st"
fi

# ---- sampled estimates (JDK 17, started in the running JVM) ----
if aw_start 8 java; then
	P=$AW_PID
	ha "$P" -c ':alloc start --interval 4k --accounts com.acme.web,com.acme.xml.*' >/dev/null
	aw 8 "run 100"
	ha "$P" -c ':alloc accounts' >"$A/sacc"
	# Sessions: 100 000 objects of 24 bytes at 4 KB: p = 1 - exp(-24/4096), about 585 samples,
	# relative standard deviation 4.1 %; the bound is 6 standard deviations (25 %).
	row=$(grep '^com.acme.web,com.acme.web.Session,' "$A/sacc")
	objs=$(cut -d, -f3 <<<"$row")
	live=$(cut -d, -f5 <<<"$row")
	if [ -n "$objs" ] && [ "$objs" -ge 75000 ] && [ "$objs" -le 125000 ]; then
		ok "alloc sampled: allocated estimate within 25 % of 100000 ($objs)"
	else fail "alloc sampled: allocated estimate within 25 % of 100000" "row: $row"; fi
	# Live: 1000 sessions, about 6 samples: only the order of magnitude is sure.
	if [ -n "$live" ] && [ "$live" -le 6000 ]; then
		ok "alloc sampled: live estimate small ($live of 1000)"
	else fail "alloc sampled: live estimate small" "row: $row"; fi
	check_contains "alloc sampled: estimates shown with ~" "~" \
		"$(timeout 60 "$HEAPSH" -c ':alloc accounts' "$P" 2>/dev/null | grep 'com.acme.web.Session ')"
	check_contains "alloc sampled: status" "mode,\"sampled, one per 4096 bytes on average (estimates)\"" \
		"$(ha "$P" -c ':alloc status')"
	echo exit >&8
fi

# ---- sampled live counts from the JVM's ObjectFree events (JDK 17 and 25) ----
# At --interval 4 (JDK 17 records nothing at 1 or 2) nearly every allocation
# of AllocWork's is a sample, of weight 1 / (1 - exp(-size / 4)): 1.0025 for a
# Session's 24 bytes, 1.0003 for a Buffer's 32, 1.00005 for a Node's 40. So
# after runs of which all but the last died (their deaths heard one by one, no
# pass over the heap), the live estimates are AllocWork's table within 1 %;
# what died is 0 exactly.
for of_java in "${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java" "$ALLOC_JDK25/bin/java"; do
	[ -x "$of_java" ] || { echo "skip alloc sampled deaths: no $of_java"; continue; }
	aw_start 8 "$of_java" || continue
	P=$AW_PID
	v=$("$of_java" -version 2>&1 | awk -F'"' '/version/ { split($2, a, "."); print a[1]; exit }')
	ha "$P" -c ':alloc start --interval 4' >/dev/null || fail "alloc sampled deaths $v: start" "$(cat "$A/err")"
	# JDK 17 takes a new interval for a thread at its next sample, drawn at the
	# 512 KB default: 5 MB of runs first (all dead by the end) pass it.
	aw 8 "run 50"
	aw 8 "run 3"
	ha "$P" -c ':alloc classes --top 1000' >"$A/ofc"
	check "alloc sampled deaths $v: live estimates within 1 % of what stays (Session, Buffer, Node)" \
		"com.acme.util.Buffer 900
com.acme.web.Session 1000
com.acme.xml.parse.Node 300" \
		"$(awk -F, -v want='com.acme.web.Session=1000 com.acme.util.Buffer=900 com.acme.xml.parse.Node=300' '
			BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) { split(w[i], kv, "="); e[kv[1]] = kv[2] } }
			$1 in e { d = $4 - e[$1]; if (d < 0) d = -d; print $1, (d <= e[$1] / 100 ? e[$1] : $4) }' "$A/ofc" | sort)"
	check "alloc sampled deaths $v: what died lives 0 (Temp)" "com.acme.web.Temp,0,0" \
		"$(awk -F, '$1 == "com.acme.web.Temp" && $2 > 0 { print $1 "," $4 "," $5 }' "$A/ofc")"
	aw 8 drop
	check "alloc sampled deaths $v: after drop, no Session lives" "com.acme.web.Session,0" \
		"$(ha "$P" -c ':alloc classes --top 1000' | awk -F, '$1 == "com.acme.web.Session" { print $1 "," $4 }')"
	echo exit >&8
done

# ---- exact by bytecode instrumentation: what is not a plain `new` (Kinds.java's table) ----
# kinds_check JDK LABEL: AllocWork `kinds` under an exact recording with the
# account com.acme.kinds, started in the running JVM; Kinds is loaded after
# the start, so its classes are instrumented as they load.
kinds_check() {
	local java=$1 label=$2 k kl
	aw_start 9 "$java" || return
	P=$AW_PID
	ha "$P" -c ':alloc start --interval exact --accounts com.acme.kinds' >/dev/null
	aw 9 kinds
	ha "$P" -c ':alloc accounts' >"$A/kacc"
	ha "$P" -c ':alloc sites --top 100000' >"$A/ksites"
	k=tests/java/alloc/com/acme/kinds/Kinds.java
	kl() { grep -nE "// SITE $1\$" "$k" | cut -d: -f1; }
	check "alloc kinds $label: new and clone() of each kind, counted once" "$(cat <<'EOF2'
com.acme.kinds,com.acme.kinds.Kinds$Deep,2,32,0,0
com.acme.kinds,com.acme.kinds.Kinds$DeepChild,2,32,0,0
com.acme.kinds,com.acme.kinds.Kinds$Made,20,320,0,0
com.acme.kinds,com.acme.kinds.Kinds$Oops,1,40,0,0
com.acme.kinds,com.acme.kinds.Kinds$Plain,2,32,0,0
com.acme.kinds,com.acme.kinds.Kinds$PlainChild,2,32,0,0
EOF2
)" "$(grep -E '^com\.acme\.kinds,com\.acme\.kinds\.Kinds\$[A-Za-z]+,' "$A/kacc" | sort)"
	check "alloc kinds $label: the clones' sites" "$(cat <<EOF2
com.acme.kinds.Kinds\$Deep.clone(Kinds.java:$(kl 'com.acme.kinds.Kinds\$Deep')),com.acme.kinds.Kinds\$Deep,1,16,0,0,0
com.acme.kinds.Kinds\$Deep.clone(Kinds.java:$(kl 'com.acme.kinds.Kinds\$Deep')),com.acme.kinds.Kinds\$DeepChild,1,16,0,0,0
com.acme.kinds.Kinds\$Plain.copy(Kinds.java:$(kl 'com.acme.kinds.Kinds\$Plain')),com.acme.kinds.Kinds\$Plain,1,16,0,0,0
com.acme.kinds.Kinds\$PlainChild.clone(Kinds.java:$(kl 'com.acme.kinds.Kinds\$PlainChild')),com.acme.kinds.Kinds\$PlainChild,1,16,0,0,0
com.acme.kinds.Kinds.make(Kinds.java:$(kl 'int\[\]')),int[],1,56,0,0,10
EOF2
)" "$(grep -E '^com\.acme\.kinds\.Kinds(\$[A-Za-z]+\.(clone|copy)\(|\.make\(Kinds\.java:'"$(kl 'int\[\]')"'\),int\[\])' "$A/ksites" | sort)"
	check "alloc kinds $label: Arrays.copyOf compiled by C2 (an intrinsic), counted at its call" \
		"com.acme.kinds.Kinds.make(Kinds.java:$(kl 'java.lang.Object\[\]')),java.lang.Object[],20000,640000,0,0,80000" \
		"$(grep "^com.acme.kinds.Kinds.make(Kinds.java:$(kl 'java.lang.Object\[\]')),java.lang.Object\[\]," "$A/ksites")"
	check "alloc kinds $label: multianewarray and the arrays inside" "$(cat <<EOF2
com.acme.kinds.Kinds.make(Kinds.java:$(kl 'long\[\]\[\]')),long[],3,144,0,0,12
com.acme.kinds.Kinds.make(Kinds.java:$(kl 'long\[\]\[\]')),long[][],1,32,0,0,3
EOF2
)" "$(grep "^com.acme.kinds.Kinds.make(Kinds.java:$(kl 'long\[\]\[\]'))," "$A/ksites" | sort)"
	check "alloc kinds $label: Array.newInstance(int.class, 2, 3)" "com.acme.kinds,int[][],1,24,0,0" \
		"$(grep '^com.acme.kinds,int\[\]\[\],' "$A/kacc")"
	if grep -qE '^java\.lang\.reflect\.Array\.newInstance\(Array\.java:[0-9]+\),int\[\],2,64,0,0,6$' "$A/ksites" &&
	   grep -qE '^java\.lang\.reflect\.Array\.newInstance\(Array\.java:[0-9]+\),java\.lang\.String\[\],1,48,0,0,7$' "$A/ksites"; then
		ok "alloc kinds $label: reflective arrays, counted where Array.newInstance calls the VM"
	else fail "alloc kinds $label: reflective arrays, counted where Array.newInstance calls the VM" \
		"$(grep 'reflect.Array' "$A/ksites")"; fi
	check "alloc kinds $label: a capturing lambda, 5 times" "5,80" \
		"$(grep -E '^com\.acme\.kinds,com\.acme\.kinds\.Kinds\$\$Lambda' "$A/kacc" | cut -d, -f3,4)"
	check "alloc kinds $label: an exception leaving an accounted frame leaves its account" "$(cat <<'EOF2'
(none),com.acme.util.Buffer,5,160,5,160
(none),com.acme.util.Buffer[],1,40,1,40
EOF2
)" "$(grep -E '^(\(none\)|com\.acme\.kinds),com\.acme\.util\.Buffer' "$A/kacc" | sort)"
	check "alloc kinds $label: Integer.valueOf compiled by C2 still counts its boxes" "20000,320000" \
		"$(grep -E '^java\.lang\.Integer\.valueOf\(Integer\.java:[0-9]+\),java\.lang\.Integer,' "$A/ksites" | cut -d, -f3,4)"
	ha "$P" -c ':alloc status' >"$A/kstatus"
	check_contains "alloc kinds $label: nothing dropped" "dropped (tables full),0" "$(cat "$A/kstatus")"
	echo exit >&9
}
# intrinsics_check JAVA LABEL: the running JDK's intrinsics that may return a
# new object are all known to the agent (tests/java/IntrinsicCheck.java).
# Counted at their call sites: Arrays.copyOf/copyOfRange with a class,
# Unsafe.allocateUninitializedArray0. Bodies compiled code still runs (C2
# parses boxing methods and the string-concatenation helpers as bytecode):
# the valueOf family, Integer.toString, StringBuffer/StringBuilder.toString.
# Allocating only an exception: Class.cast. Not counted (docs/agent.md):
# BigInteger.implMultiplyToLen; the incubating Vector API is left out.
intrinsics_check() {
	local known=$A/intrinsics.known out
	cat >"$known" <<'EOF2'
java/lang/Character.valueOf (C)Ljava/lang/Character;
java/lang/Class.cast (Ljava/lang/Object;)Ljava/lang/Object;
java/lang/Double.valueOf (D)Ljava/lang/Double;
java/lang/Float.valueOf (F)Ljava/lang/Float;
java/lang/Integer.toString (I)Ljava/lang/String;
java/lang/Integer.valueOf (I)Ljava/lang/Integer;
java/lang/Long.valueOf (J)Ljava/lang/Long;
java/lang/Short.valueOf (S)Ljava/lang/Short;
java/lang/StringBuffer.toString ()Ljava/lang/String;
java/lang/StringBuilder.toString ()Ljava/lang/String;
java/math/BigInteger.implMultiplyToLen ([II[II[I)[I
java/util/Arrays.copyOf ([Ljava/lang/Object;ILjava/lang/Class;)[Ljava/lang/Object;
java/util/Arrays.copyOfRange ([Ljava/lang/Object;IILjava/lang/Class;)[Ljava/lang/Object;
jdk/internal/misc/Unsafe.allocateUninitializedArray0 (Ljava/lang/Class;I)Ljava/lang/Object;
EOF2
	out=$("$1" -cp "/usr/share/java/asm.jar:$JAVA_OUT" IntrinsicCheck 2>&1 | grep -v '^jdk/internal/vm/vector/')
	if [ -z "$out" ]; then
		fail "alloc: $2's allocating intrinsics" "IntrinsicCheck printed nothing"
	else
		check "alloc: $2's allocating intrinsics are all known to the agent" "" \
			"$(printf '%s\n' "$out" | grep -vxF -f "$known")"
	fi
}
if [ -r /usr/share/java/asm.jar ] && javac -cp /usr/share/java/asm.jar -d "$JAVA_OUT" tests/java/IntrinsicCheck.java; then
	intrinsics_check java "JDK 17"
	[ -x "$ALLOC_JDK25/bin/java" ] && intrinsics_check "$ALLOC_JDK25/bin/java" "JDK 25"
else
	fail "alloc: IntrinsicCheck builds (ASM, Debian's libasm-java)"
fi
kinds_check java "JDK 17"
if [ -x "$ALLOC_JDK25/bin/java" ]; then
	kinds_check "$ALLOC_JDK25/bin/java" "JDK 25"
fi

# ---- the agent option at start-up, exact, on JDK 25 ----
if [ -x "$ALLOC_JDK25/bin/java" ]; then
	if aw_start 9 "$ALLOC_JDK25/bin/java" \
		"-agentpath:$AGENT_SO=alloc=exact,accounts=com.acme.web;com.acme.xml,depth=16,live=all"; then
		P=$AW_PID
		aw 9 run
		ha "$P" -c ':alloc accounts' >"$A/acc25"
		# KNOWN FACTS, accounts B: the Parser's rows go to (none); Doc's to com.acme.xml.
		check "alloc start-up JDK 25: accounts rows" "$(sort <<'EOF'
com.acme.web,com.acme.util.Buffer,700,22400,700,22400
com.acme.web,com.acme.util.Buffer[],1,2816,1,2816
com.acme.web,com.acme.web.Session,1000,24000,1000,24000
com.acme.web,com.acme.web.Session[],1,4016,1,4016
com.acme.web,com.acme.web.Temp,500,8000,0,0
com.acme.web,com.acme.web.Temp[],1,2016,0,0
com.acme.xml,com.acme.xml.Doc$Attr,40,640,40,640
com.acme.xml,com.acme.xml.Doc$Attr[],1,176,1,176
EOF
)" "$(grep -v '^(none),' "$A/acc25" | sed 1d | sort)"
		check "alloc start-up JDK 25: the parser's nodes go to (none)" \
			"(none),com.acme.xml.parse.Node,300,12000,300,12000" \
			"$(grep '^(none),com.acme.xml.parse.Node,' "$A/acc25")"
		check_contains "alloc start-up JDK 25: status" "depth,16 frames" "$(ha "$P" -c ':alloc status')"
		echo exit >&9
	fi
	rm -f "$A/out9"
	"$ALLOC_JDK25/bin/java" "-agentpath:$AGENT_SO=alloc=sometimes" -cp "$AW" AllocWork once \
		>"$A/out9" 2>"$A/err9"
	check_contains "alloc start-up: a bad option is logged, the JVM runs" "done run" "$(cat "$A/out9")"
	check_contains "alloc start-up: the bad option's message" \
		"heapsh agent: no allocation recording: alloc=sometimes: say alloc=exact or alloc=BYTES" "$(cat "$A/err9")"
	"$ALLOC_JDK25/bin/java" "-agentpath:$AGENT_SO=alloc=exact,via=magic" -cp "$AW" AllocWork once \
		>"$A/out9" 2>"$A/err9"
	check_contains "alloc start-up: a bad via= is logged" \
		"heapsh agent: no allocation recording: via=magic: say via=bytecode or via=jvmti, with alloc=exact" "$(cat "$A/err9")"
else
	echo "skip alloc: JDK 25 not installed at $ALLOC_JDK25"
fi

# ---- :alloc leaks in a running JVM (issue 34): tests/java/jfr/JfrLeak.java's
# three leaks (a static map grown in main's running loop, a listener list, a
# ThreadLocal), each path found by the agent inside the JVM without a dump,
# on JDK 17 and 25, sampled and exact (its byte[]s come from the constructors
# and growLocal, methods that start after the recording, so exact counts them).
LK=$AW/leak
mkdir -p "$LK"
javac --release 11 -d "$LK" tests/java/jfr/JfrLeak.java || fail "alloc leaks: javac JfrLeak"
# lk_start JAVA [OPTION...]: JfrLeak wait under JAVA, stdin on a fifo held as fd 9; sets LK_PID.
lk_start() {
	local i
	{ exec 9>&-; } 2>/dev/null
	rm -f "$A/lkin" "$A/lkout"
	mkfifo "$A/lkin"
	exec 9<>"$A/lkin"
	"$@" -cp "$LK" JfrLeak wait <"$A/lkin" >"$A/lkout" 2>"$A/lkerr" &
	ALLOC_PIDS+=("$!")
	LK_PID=
	for ((i = 0; i < 300; i++)); do
		read -r _ LK_PID < <(grep '^ready ' "$A/lkout" 2>/dev/null)
		[ -n "$LK_PID" ] && return 0
		sleep 0.1
	done
	fail "alloc leaks: JfrLeak started under $1" "$(head -5 "$A/lkerr")"
	return 1
}
LK_CACHE='[static field] class JfrLeak.CACHE → java.util.HashMap.table → java.util.HashMap$Node[] → java.util.HashMap$Node.value → JfrLeak$Entry.data → byte[],JfrLeak$Entry.<init>(JfrLeak.java:'
LK_LISTENERS='[static field] class JfrLeak.LISTENERS → java.util.ArrayList.elementData → java.lang.Object[] → JfrLeak$Listener.buffer → byte[],JfrLeak$Listener.<init>(JfrLeak.java:'
LK_LOCAL='java.lang.Thread.threadLocals → java.lang.ThreadLocal$ThreadLocalMap.table → java.lang.ThreadLocal$ThreadLocalMap$Entry[] → java.lang.ThreadLocal$ThreadLocalMap$Entry.value → java.util.ArrayList.elementData → java.lang.Object[] → byte[],JfrLeak.growLocal(JfrLeak.java:'
for lk_java in "${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java" "$ALLOC_JDK25/bin/java"; do
	[ -x "$lk_java" ] || { echo "skip alloc leaks: no $lk_java"; continue; }
	v=$("$lk_java" -version 2>&1 | awk -F'"' '/version/ { split($2, a, "."); print a[1]; exit }')
	for mode in sampled exact; do
		lk_start "$lk_java" || continue
		if [ "$mode" = sampled ]; then
			check_contains "alloc leaks $v: no recording" "has no allocation recording" \
				"$(ha "$LK_PID" -c ':alloc leaks' 2>&1; cat "$A/err")"
			ha "$LK_PID" -c ':alloc start --interval 1024' >/dev/null ||
				fail "alloc leaks $v: sampled start" "$(cat "$A/err")"
		else
			ha "$LK_PID" -c ':alloc start --interval exact' >/dev/null ||
				fail "alloc leaks $v: exact start" "$(cat "$A/err")"
		fi
		sleep 5
		out=$(ha "$LK_PID" -c ':alloc leaks --top 1000')
		check "alloc leaks $v $mode: columns" \
			"class,samples,path,allocated_at,live_objects,live_bytes,growth_bytes,age_gcs" \
			"$(printf '%s\n' "$out" | head -1)"
		check_contains "alloc leaks $v $mode: the static map grown in main's loop" "$LK_CACHE" "$out"
		check_contains "alloc leaks $v $mode: the listener list" "$LK_LISTENERS" "$out"
		check_contains "alloc leaks $v $mode: the ThreadLocal" "$LK_LOCAL" "$out"
		check "alloc leaks $v $mode: the class that grew most (byte[]) comes first" "byte[]" \
			"$(printf '%s\n' "$out" | sed -n 2p | cut -d, -f1)"
		check "alloc leaks $v $mode: no class has more samples than its sample (64)" "" \
			"$(printf '%s\n' "$out" | sed 1d | awk -F, '{ n[$1] += $2 } END { for (c in n) if (n[c] > 64) print c, n[c] }')"
		check "alloc leaks $v $mode: no path through a weak referent" "" \
			"$(printf '%s\n' "$out" | grep -F 'Reference.referent')"
		check "alloc leaks $v $mode: every age is a count of GCs" "" \
			"$(printf '%s\n' "$out" | sed 1d | awk -F, '$NF !~ /^[0-9]+$/')"
		table=$(timeout 120 "$HEAPSH" -c ':alloc leaks' "$LK_PID" 2>&1)
		check_contains "alloc leaks $v $mode: the note says how the paths were found" \
			"found inside the JVM in one walk of its heap: JVM paused" "$table"
		check_contains "alloc leaks $v $mode: the walk was pruned by the JVM's class histogram" \
			"(its class histogram and the walk)" "$table"
		if [ "$mode" = sampled ] && [ "$v" = 17 ]; then
			# :suspects in a running JVM: growth since the snapshot before (issue 34).
			sus=$(timeout 300 "$HEAPSH" -c ':suspects' -c ':lua os.execute("sleep 3")' -c ':refresh' \
				-c ':suspects' "$LK_PID" 2>&1)
			check_contains "alloc leaks: :suspects on a first snapshot says how to see growth" \
				"a later snapshot (:refresh), or an allocation recording's mark (:alloc mark), ranks what grew" \
				"$(printf '%s' "$sus" | tr '\n' ' ')"
			check_contains "alloc leaks: :suspects after :refresh ranks growth since the snapshot before" \
				"largest growth since the snapshot of" "$sus"
			check "alloc leaks: the first suspect after :refresh says its growth since the snapshot before" "1" \
				"$(printf '%s\n' "$sus" | grep -cE '^1\. .*(; [-+].* since the snapshot of|; not in the previous snapshot)')"
			check_contains "alloc leaks: --baseline none: no growth" "each keeps at least" \
				"$(timeout 300 "$HEAPSH" -c ':refresh' -c ':refresh' -c ':suspects --baseline none' "$LK_PID" 2>&1)"
		fi
		if [ "$mode" = exact ] && [ "$v" = 25 ]; then
			# :suspects in a running JVM with a marked recording: growth since the mark (issue 34).
			sus=$(timeout 300 "$HEAPSH" -c ':alloc mark' -c ':lua os.execute("sleep 2")' -c ':suspects' \
				"$LK_PID" 2>&1)
			check_contains "alloc leaks: :suspects ranks growth since the recording's mark" \
				"largest growth since the allocation recording's mark of" "$sus"
			check "alloc leaks: the first suspect grew since the mark" "1" \
				"$(printf '%s\n' "$sus" | grep -c "^1\. .*; +.* since the allocation recording's mark of")"
		fi
		if [ "$mode" = exact ] && [ "$v" = 17 ]; then
			ha "$LK_PID" -c ':alloc stop' -c ':alloc start --interval exact --live none' >/dev/null
			check_contains "alloc leaks: a recording that follows no object" \
				"does not follow its objects (--live none)" \
				"$(ha "$LK_PID" -c ':alloc leaks' 2>&1; cat "$A/err")"
		fi
		echo quit >&9
		{ exec 9>&-; } 2>/dev/null
	done
done
# The attach mechanism off, the agent and a sampled recording from start-up:
# no class histogram for the shell to take, the agent counts the instances.
if lk_start "${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java" "-agentpath:$AGENT_SO=alloc=1024" \
	-XX:+DisableAttachMechanism; then
	sleep 5
	table=$(timeout 120 "$HEAPSH" --format csv -c ':alloc leaks --top 1000' "$LK_PID" 2>"$A/err")
	check_contains "alloc leaks, attach off: the static map grown in main's loop" "$LK_CACHE" "$table"
	check_contains "alloc leaks, attach off: the agent counted the instances" \
		"(a count of its objects and the walk)" "$(cat "$A/err")"
	check_contains "alloc leaks, attach off: says why" "the JVM's class histogram failed" "$(cat "$A/err")"
	echo quit >&9
	{ exec 9>&-; } 2>/dev/null
fi
check_contains "alloc leaks: a dump has no recording" "allocation" \
	"$("$HEAPSH" -c ':alloc leaks' "$KNOWN" 2>&1)"

alloc_cleanup
trap - EXIT
