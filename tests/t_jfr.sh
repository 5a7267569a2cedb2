# t_jfr.sh - JFR recordings in (issue 34): recordings written by JDK 17 and
# 25 of tests/java/jfr/JfrWork.java, opened by heapsh (the bundled reader on
# the JDK's jdk.jfr.consumer), read equal to the JDK's own `jfr print`:
# per class the number of jdk.ObjectAllocationSample events and the sum of
# their weights; the sites, the views, pprof and the query language on it;
# a truncated or corrupt recording and a missing JDK give clear errors.
J=$T/jfr
JW=$JAVA_OUT/jfr
mkdir -p "$J" "$JW"
JFR_JDK17=${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}
JFR_JDK25=${JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}
javac --release 11 -d "$JW" tests/java/jfr/JfrWork.java || fail "jfr: javac JfrWork"
JFR_SITE=$(grep -n '// SITE long\[\]$' tests/java/jfr/JfrWork.java | cut -d: -f1)

# jfr_sums JDK FILE: "class,events,bytes" per allocated class, as that JDK's jfr print --json reads FILE.
jfr_sums() {
	"$1/bin/jfr" print --json --events jdk.ObjectAllocationSample "$2" | python3 -c '
import collections, json, sys
prim = dict(Z="boolean", B="byte", C="char", S="short", I="int", J="long", F="float", D="double")
def java(n):
    dims = len(n) - len(n.lstrip("["))
    e = n[dims:]
    if dims:
        e = prim.get(e, e[1:-1] if e.startswith("L") and e.endswith(";") else e)
    return e.replace("/", ".") + "[]" * dims
count, weight = collections.Counter(), collections.Counter()
for e in json.load(sys.stdin)["recording"]["events"]:
    v = e["values"]
    c = java(v["objectClass"]["name"])
    count[c] += 1
    weight[c] += v["weight"]
for c in sorted(count):
    print("%s,%d,%d" % (c, count[c], weight[c]))' | LC_ALL=C sort
}
# hj FILE ARGS...: heapsh on a recording in CSV; stderr to $J/err.
hj() { local f=$1; shift; timeout 120 "$HEAPSH" --format csv "$@" "$f" 2>"$J/err"; }

for v in 17 25; do
	jdk=JFR_JDK$v
	jdk=${!jdk}
	if [ ! -x "$jdk/bin/java" ]; then
		fail "jfr: JDK $v at $jdk"
		continue
	fi
	rec=$J/work$v.jfr
	rm -f "$rec"
	"$jdk/bin/java" -XX:StartFlightRecording=filename=$rec,settings=profile -cp "$JW" JfrWork 3 \
		>"$J/run$v.out" 2>&1 || fail "jfr $v: JfrWork ran" "$(tail -3 "$J/run$v.out")"
	[ -s "$rec" ] || { fail "jfr $v: the JVM wrote a recording"; continue; }
	want=$(jfr_sums "$jdk" "$rec")
	got=$(hj "$rec" -c ':alloc classes --top 1000000' | awk -F, 'NR > 1 { print $1 "," $2 "," $3 }' | LC_ALL=C sort)
	check "jfr $v: per class, the events and the sum of their weights as jfr print" "$want" "$got"
	check_contains "jfr $v: long[] was sampled" "long[]," "$got"
	check_contains "jfr $v: the notes say what the numbers are" \
		"allocation events from jdk.ObjectAllocationSample: objects are events (samples), bytes the sum of their weights" \
		"$(cat "$J/err")"
	check_contains "jfr $v: the first samples' weight is named" "note: the first sample of each of" "$(cat "$J/err")"
	check_contains "jfr $v: the site of long[]" "JfrWork.make(line $JFR_SITE),long[]," \
		"$(hj "$rec" -c ':alloc sites --top 1000000')"
	check_contains "jfr $v: the calling context, main > make" "JfrWork.main(line" \
		"$(hj "$rec" -c ':alloc tree')"
	total=$(printf '%s\n' "$want" | awk -F, '{ s += $3 } END { printf "%.0f", s }')
	check "jfr $v: the query language's allocations" "$total" \
		"$(hj "$rec" -c 'allocations.sum([a | a.bytes])' | awk 'NR == 1 { printf "%.0f", $1 }')"
	check_contains "jfr $v: status" "read from a JFR recording" "$(hj "$rec" -c ':alloc status')"
	hj "$rec" -c ":alloc pprof $J/work$v.pb.gz" >/dev/null
	if command -v go >/dev/null; then
		check "jfr $v: pprof's total" "${total}B total" \
			"$(go tool pprof -unit=B -sample_index=alloc_space -top "$J/work$v.pb.gz" 2>/dev/null | grep -o '[0-9]*B total')"
	else
		fail "jfr $v: go tool pprof is installed (make deps: golang-go)"
	fi
	check_contains "jfr $v: recording is read only" ":alloc start: $rec is a recording read from a file" \
		"$(hj "$rec" -c ':alloc start'; cat "$J/err")"
done

# Leaks: JFR's old object samples with their paths from GC roots
# (path-to-gc-roots=true), merged: JfrLeak's three leaks, each by its path.
javac --release 11 -d "$JW" tests/java/jfr/JfrLeak.java || fail "jfr: javac JfrLeak"
for v in 17 25; do
	jdk=JFR_JDK$v
	jdk=${!jdk}
	[ -x "$jdk/bin/java" ] || continue
	rec=$J/leak$v.jfr
	rm -f "$rec"
	"$jdk/bin/java" -XX:FlightRecorderOptions:old-object-queue-size=4096 \
		-XX:StartFlightRecording=filename=$rec,settings=profile,path-to-gc-roots=true \
		-cp "$JW" JfrLeak 3 >"$J/leak$v.out" 2>&1 || fail "jfr $v: JfrLeak ran" "$(tail -3 "$J/leak$v.out")"
	out=$(hj "$rec" -c ':alloc leaks --top 1000')
	check "jfr $v leaks: columns" "class,samples,path,allocated_at" "$(printf '%s\n' "$out" | head -1)"
	check_contains "jfr $v leaks: the static map grown in main's loop" \
		"class JfrLeak.CACHE → java.util.HashMap.table → java.util.HashMap\$Node[] → java.util.HashMap\$Node.value → JfrLeak\$Entry.data → byte[],JfrLeak\$Entry.<init>(line " "$out"
	check_contains "jfr $v leaks: the listener list" \
		"class JfrLeak.LISTENERS → java.util.ArrayList.elementData → java.lang.Object[] → JfrLeak\$Listener.buffer → byte[],JfrLeak\$Listener.<init>(line " "$out"
	check_contains "jfr $v leaks: the ThreadLocal" \
		"java.lang.Thread.threadLocals → java.lang.ThreadLocal\$ThreadLocalMap.table → java.lang.ThreadLocal\$ThreadLocalMap\$Entry[] → java.lang.ThreadLocal\$ThreadLocalMap\$Entry.value → java.util.ArrayList.elementData → java.lang.Object[] → byte[],JfrLeak.growLocal(line " "$out"
	check "jfr $v leaks: samples add up to the old object samples with paths" \
		"$(printf '%s\n' "$out" | python3 -c 'import csv, sys; print(sum(int(r[1]) for r in list(csv.reader(sys.stdin))[1:]))')" \
		"$("$jdk/bin/jfr" print --json --events jdk.OldObjectSample "$rec" | python3 -c 'import json, sys; print(sum(1 for e in json.load(sys.stdin)["recording"]["events"] if (e["values"].get("object") or {}).get("referrer")))')"
done
hj "$J/work17.jfr" -c ':alloc leaks' >/dev/null
check_contains "jfr: leaks of a recording without paths" "has no old object samples with paths to GC roots: JFR writes them with path-to-gc-roots=true" "$(cat "$J/err")"

# :open a recording in a session on a dump; the dump stays.
out=$(printf ':open %s\n:alloc classes --top 1\n:histogram --top 1\n' "$J/work17.jfr" | "$HEAPSH" --format csv "$KNOWN" 2>"$J/err")
check_contains "jfr: :open REC.jfr in a session" "long[]," "$out"
check_contains "jfr: the dump stays open" "class,instances,shallow_bytes" "$out"

# Bad recordings: cut short, corrupt, and no JDK to read them with.
head -c 30000 "$J/work17.jfr" >"$J/cut.jfr"
hj "$J/cut.jfr" -c ':alloc classes' >/dev/null
st=$?
check_contains "jfr: a cut recording" "heapsh: cannot read $J/cut.jfr as a JFR recording: " "$(cat "$J/err")"
check_status "jfr: a cut recording exits 2" 2 "$st"
{ printf 'FLR\0'; head -c 5000 /dev/urandom; } >"$J/junk.jfr"
hj "$J/junk.jfr" -c ':alloc classes' >/dev/null
check_contains "jfr: a corrupt recording" "heapsh: cannot read $J/junk.jfr as a JFR recording: " "$(cat "$J/err")"
JAVA_HOME= PATH=/nonexistent "$HEAPSH" -c ':alloc classes' "$J/work17.jfr" >/dev/null 2>"$J/err"
check "jfr: no JDK" "heapsh: reading $J/work17.jfr needs a JDK's java (11 or later, with jdk.jfr): set JAVA_HOME or put java on PATH" \
	"$(cat "$J/err")"
check "jfr: the reader's folder is removed" "" "$(find "${TMPDIR:-/tmp}" -maxdepth 1 -name 'heapsh-jfr-*' -newer "$J/work17.jfr" 2>/dev/null)"
