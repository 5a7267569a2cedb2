#!/usr/bin/env bash
# bench/jfr_read.sh - reading a JFR recording of about 100 MB (issue 34):
# heapsh REC.jfr (its bundled reader on the JDK's jdk.jfr.consumer API, then
# the :alloc views) against the JDK's own `jfr summary` of the same file,
# interleaved by farm-bench: wall time and peak memory (the largest process).
#
# The recording: Debian's H2 (bench/java/H2Load.java, 3,000,000 rows, one
# thread) under JDK 17 with JFR's "profile" settings plus the TLAB allocation
# events and no throttle on jdk.ObjectAllocationSample (allocation events
# make up most of the file), its chunks repeated to reach TARGET_MB (a JFR
# file is a sequence of chunks; both readers read every chunk).
#
# Usage: bash bench/jfr_read.sh        (BENCH_RUNS=5, TARGET_MB=100, JDK=...)
set -u
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
me=bench/jfr_read.sh
RUNS=${BENCH_RUNS:-5}
TARGET_MB=${TARGET_MB:-100}
JDK=${JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
OUT=build/bench/jfr_read
mkdir -p "$OUT/java"
missing=()
[ -s /usr/share/java/h2.jar ] || missing+=(libh2-java)
bench_install "$me" "$OUT/apt.log" ${missing[@]+"${missing[@]}"}
command -v farm-bench >/dev/null || { echo "$me: farm-bench (the tool library's timer) is not on PATH" >&2; exit 2; }
"$JDK/bin/javac" -nowarn -d "$OUT/java" bench/java/H2Load.java || exit 2
HEAPSH=${HEAPSH:-./heapsh}
[ -x "$HEAPSH" ] || make -s heapsh || exit 2

jfc=$OUT/alloc.jfc
sed -e '/jdk.ObjectAllocationInNewTLAB/,/<\/event>/ s/\(<setting name="enabled"[^>]*>\)false</\1true</' \
	-e '/jdk.ObjectAllocationOutsideTLAB/,/<\/event>/ s/\(<setting name="enabled"[^>]*>\)false</\1true</' \
	-e 's|<setting name="throttle" control="allocation-profiling">[^<]*</setting>|<setting name="throttle" control="allocation-profiling">off</setting>|' \
	"$JDK/lib/jfr/profile.jfc" >"$jfc"
one=$OUT/h2-once.jfr
rm -f "$one"
"$JDK/bin/java" -XX:StartFlightRecording=filename=$PWD/$one,settings=$PWD/$jfc -Xmx2g \
	-cp /usr/share/java/h2.jar:$OUT/java H2Load 3000000 >"$OUT/h2.out" 2>&1 ||
	{ echo "$me: H2Load failed ($OUT/h2.out)" >&2; exit 2; }
size=$(stat -c %s "$one")
copies=$(( (TARGET_MB * 1048576 + size - 1) / size ))
rec=$OUT/h2.jfr
for ((i = 0; i < copies; i++)); do cat "$one"; done >"$rec"
echo "# bench/jfr_read.sh, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "recording: $(stat -c %s "$rec") bytes ($copies copies of one H2Load recording of $size bytes);" \
	"$("$JDK/bin/jfr" summary "$rec" | awk '$1 == "jdk.ObjectAllocationSample" || $1 == "jdk.ObjectAllocationInNewTLAB" { printf "%s %s events; ", $1, $2 }')"
echo "heapsh: $("$HEAPSH" --version), reading with $JDK/bin/java; jfr: $("$JDK/bin/java" -version 2>&1 | head -1)"
JAVA_HOME=$JDK farm-bench -n "$RUNS" --timeout 3000 --vs "$JDK/bin/jfr summary $rec" -- \
	"$HEAPSH" --format csv -c ':alloc classes --top 10' "$rec"
