#!/usr/bin/env bash
# bench/run.sh - heapsh against VisualVM's heap library on big real heap dumps.
# Run from the repository root by `make bench` (which builds ./heapsh first).
# What is measured and why: bench/README.md and docs/performance.md.
#
# Environment:
#   BENCH_RUNS=N               runs per measurement, the median is reported (default 5)
#   BENCH_VV_RETAINED_RUNS=N   runs of VisualVM's slow `retained` mode (default 3)
#   BENCH_SKIP_VV_RETAINED=1   skip VisualVM `retained` (~75 s and 6-11 GB per run)
#   HEAPSH=path                the heapsh binary (default ./heapsh); it is copied to
#                              build/bench/heapsh first, so a rebuild during the run
#                              does not mix two binaries in one set of numbers
#
# Output: progress and per-run lines, then a Markdown summary, also written to
# build/bench/summary.md. Every run's stdout/stderr/timing is kept in
# build/bench/log/. Exit status 1 if any run failed (each failure is printed
# with its command, exit status and output).

set -euo pipefail
export LC_ALL=C

HEAPSH=${HEAPSH:-./heapsh}
R=${BENCH_RUNS:-5}
RVV=${BENCH_VV_RETAINED_RUNS:-3}
SKIP_VV_RET=${BENCH_SKIP_VV_RETAINED:-0}
OUT=build/bench
CLS=$OUT/java
LOG=$OUT/log
BIG1=$OUT/big1.hprof
BIG2=$OUT/big2.hprof

for v in "$R" "$RVV"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "bench: BENCH_RUNS and BENCH_VV_RETAINED_RUNS must be positive integers" >&2; exit 2; }
done
[ -x "$HEAPSH" ] || { echo "bench: $HEAPSH not found; run 'make' (or 'make bench') first" >&2; exit 2; }
VVCP=$(sh tests/visualvm-classpath.sh)
mkdir -p "$CLS" "$LOG"
cp "$HEAPSH" "$OUT/heapsh.tmp" && mv -f "$OUT/heapsh.tmp" "$OUT/heapsh"
HEAPSH_FROM=$HEAPSH
HEAPSH=$OUT/heapsh
BIN_ID="$("$HEAPSH" --version), sha256 $(sha256sum "$HEAPSH" | cut -c1-12), copied from $HEAPSH_FROM"
if git rev-parse --git-dir >/dev/null 2>&1; then
	BIN_ID+="; the working tree was at commit $(git rev-parse --short HEAD)"
	[ -z "$(git status --porcelain -- src Makefile 2>/dev/null)" ] || BIN_ID+=" with uncommitted changes in src/ or Makefile"
fi
rm -f "$LOG"/*

# ---------------------------------------------------------------- timing
# GNU time gives wall seconds and peak RSS (KiB); without it, bash's `time`
# gives the wall time only and RSS is reported as n/a.
if [ -x /usr/bin/time ] && /usr/bin/time -f '%e %M' -o /dev/null true 2>/dev/null; then
	GNU_TIME=1
else
	GNU_TIME=0
	echo "bench: GNU time (/usr/bin/time) not found: wall time from bash, peak RSS n/a" >&2
fi

declare -A WALL RSS VVSEC NRUN
FAILURES=()

# run NAME CMD...: one timed run of CMD; appends its wall time (s), peak RSS
# (KiB) and, for VisualVMBench, its reported seconds to NAME's lists. A failed
# run is printed in full and recorded, and left out of the medians.
run() {
	local name=$1; shift
	local n=$(( ${NRUN[$name]:-0} + 1 )) rc=0 wall rss line
	NRUN[$name]=$n
	local base=$LOG/$name.$n
	if [ "$GNU_TIME" = 1 ]; then
		/usr/bin/time -f '%e %M' -o "$base.time" "$@" >"$base.out" 2>"$base.err" || rc=$?
		line=$(tail -n 1 "$base.time")
		wall=${line% *}; rss=${line#* }
	else
		local TIMEFORMAT=%R
		{ time "$@" >"$base.out" 2>"$base.err"; } 2>"$base.time" || rc=$?
		wall=$(tail -n 1 "$base.time"); rss=n/a
	fi
	if [ "$rc" != 0 ]; then
		FAILURES+=("$name run $n: exit status $rc: $*")
		{
			echo "!! FAILED: $name run $n"
			echo "!! command: $*"
			echo "!! exit status: $rc"
			echo "!! time: $(cat "$base.time")"
			echo "!! stdout (last 30 lines):"; tail -n 30 "$base.out" | sed 's/^/!!   /'
			echo "!! stderr (last 30 lines):"; tail -n 30 "$base.err" | sed 's/^/!!   /'
		} >&2
		return 0
	fi
	if [ -s "$base.err" ]; then
		echo "   (stderr of $name run $n: $(head -c 300 "$base.err" | tr '\n' ' '))"
	fi
	WALL[$name]+="$wall "
	RSS[$name]+="$rss "
	local extra=""
	if [[ $1 == java ]]; then
		local vs
		vs=$(sed -n 's/^visualvm .* seconds=\([0-9.]*\) .*/\1/p' "$base.out")
		VVSEC[$name]+="${vs:-n/a} "
		extra=" work=${vs:-n/a}s ($(sed -n 's/^visualvm .* \(objects=[0-9]*\).*/\1/p' "$base.out"))"
	fi
	printf '   %-22s run %d: %6s s  %s MB%s\n' "$name" "$n" "$wall" "$(mb "$rss")" "$extra"
}

# median LIST: the median of space-separated numbers ("n/a" if none or any n/a).
median() {
	printf '%s\n' $1 | awk '
		$1 == "n/a" { na = 1 } $1 != "n/a" && $1 != "" { a[++n] = $1 }
		END {
			if (na || n == 0) { print "n/a"; exit }
			for (i = 2; i <= n; i++) { v = a[i]; for (j = i - 1; j >= 1 && a[j] > v; j--) a[j+1] = a[j]; a[j+1] = v }
			if (n % 2) print a[(n+1)/2]; else print (a[n/2] + a[n/2+1]) / 2
		}'
}

# calc FMT EXPR [a [b [c [d]]]]: printf FMT of the awk expression EXPR over the
# variables a b c d; "n/a" if any of them is n/a or empty.
calc() {
	local fmt=$1 expr=$2; shift 2
	local v
	for v in "$@"; do [[ -z $v || $v == n/a ]] && { echo n/a; return; }; done
	awk -v a="${1:-0}" -v b="${2:-0}" -v c="${3:-0}" -v d="${4:-0}" "BEGIN { printf \"$fmt\", $expr }"
}

mb() { calc '%.0f' 'a / 1024' "$1"; }             # KiB -> MB (MiB)
list_mb() { local x o=""; for x in $1; do o+="$(mb "$x") "; done; echo "${o% }"; }
x() { case $1 in n/a) echo n/a;; *) echo "${1}x";; esac; }   # a ratio
verdict() { case $1 in n/a) echo "n/a";; 1) echo "**met**";; *) echo "**not met**";; esac; }

# info DUMP KEY: a row of `heapsh --format csv -c :info`.
info() { "$HEAPSH" --format csv -c ':info' "$1" | awk -F, -v k="$2" '$1 == k { print $2 }'; }

# ---------------------------------------------------------------- machine
echo "== machine"
echo "date:    $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "cpu:     $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), nproc=$(nproc)"
echo "memory:  $(free -g | awk '/^Mem:/ { print $2 " GB total, " $7 " GB available" }')"
echo "kernel:  $(uname -sr)"
echo "java:    $(java -version 2>&1 | head -n 1)"
echo "visualvm heap library: $VVCP ($(dpkg-query -W -f='${Version}' visualvm 2>/dev/null || echo '?'))"
echo "heapsh:  $BIN_ID"
echo "runs:    $R per measurement (median), VisualVM retained: $( [ "$SKIP_VV_RET" = 1 ] && echo skipped || echo "$RVV")"

# ---------------------------------------------------------------- dumps
echo "== dumps"
stamp=$CLS/.stamp
if [ ! -f "$stamp" ] || [ -n "$(find bench/java -name '*.java' -newer "$stamp")" ]; then
	echo "compiling bench/java/*.java into $CLS"
	javac -cp "$VVCP" -d "$CLS" bench/java/*.java
	touch "$stamp"
fi
make_dump() {  # make_dump OUT SCALE
	if [ -s "$1" ]; then
		echo "reusing $1"
	else
		echo "making $1 (BigHeap SCALE $2, 10-20 s)"
		java -Xmx4g -cp "$CLS" BigHeap "$1" "$2"
	fi
}
make_dump "$BIG1" 1
make_dump "$BIG2" 2

declare -A FILEB OBJS REFS
for d in "$BIG1" "$BIG2"; do
	FILEB[$d]=$(stat -c %s "$d")
	OBJS[$d]=$(info "$d" objects)
	REFS[$d]=$(info "$d" references)
	[[ ${OBJS[$d]} =~ ^[0-9]+$ && ${REFS[$d]} =~ ^[0-9]+$ ]] || {
		echo "bench: cannot read object/reference counts of $d with: $HEAPSH --format csv -c :info $d" >&2
		"$HEAPSH" --format csv -c ':info' "$d" >&2 || true
		exit 1
	}
	printf '%s: %s bytes (%.1f MB), %s objects, %s references\n' "$d" "${FILEB[$d]}" \
		"$(calc '%.1f' 'a / 1e6' "${FILEB[$d]}")" "${OBJS[$d]}" "${REFS[$d]}"
	cat "$d" >/dev/null   # warm the page cache: every run below reads a cached file
done
N1=${OBJS[$BIG1]}; N2=${OBJS[$BIG2]}

VV=(java -Xmx16g -cp "$VVCP:$CLS" VisualVMBench)
DOM=(-c ':dominators --top 5')

# ---------------------------------------------------------------- issue 2
# --no-index: the open reads the dump, as VisualVM does (an index left by an
# earlier run would hand heapsh its model ready-made).
echo "== issue 2: open + full class histogram (--no-index), $BIG1 (heapsh and VisualVM alternate)"
for ((i = 1; i <= R; i++)); do
	run hs_hist_big1 "$HEAPSH" --no-index -c ':histogram' "$BIG1"
	run vv_hist_big1 "${VV[@]}" histogram "$BIG1"
done

# ---------------------------------------------------------------- issue 3
echo "== issue 3: open + dominator tree + all retained sizes (--no-index), $BIG1"
for ((i = 1; i <= R; i++)); do
	run hs_dom_big1 "$HEAPSH" --no-index "${DOM[@]}" "$BIG1"
done
if [ "$SKIP_VV_RET" = 1 ]; then
	echo "   VisualVM retained: skipped (BENCH_SKIP_VV_RETAINED=1)"
else
	echo "== issue 3: VisualVM retained, $BIG1 (slow: ~75 s and 6-11 GB per run)"
	for ((i = 1; i <= RVV; i++)); do
		run vv_ret_big1 "${VV[@]}" retained "$BIG1"
	done
fi

echo "== issue 3: linear growth, $BIG2"
for ((i = 1; i <= R; i++)); do
	run hs_hist_big2 "$HEAPSH" --no-index -c ':histogram' "$BIG2"
	run hs_dom_big2 "$HEAPSH" --no-index "${DOM[@]}" "$BIG2"
done

echo "== issue 3: reopening with a valid index, $BIG1"
rm -f "$BIG1.hsidx"
run hs_idx_write_big1 "$HEAPSH" "${DOM[@]}" "$BIG1"
if [ -f "$BIG1.hsidx" ]; then
	echo "   index: $BIG1.hsidx, $(stat -c %s "$BIG1.hsidx") bytes"
	IDXB=$(stat -c %s "$BIG1.hsidx")
else
	echo "!! the first run without --no-index did not write $BIG1.hsidx" >&2
	FAILURES+=("index: $BIG1.hsidx not written by: $HEAPSH ${DOM[*]} $BIG1")
	IDXB=n/a
fi
for ((i = 1; i <= R; i++)); do
	run hs_idx_read_big1 "$HEAPSH" "${DOM[@]}" "$BIG1"
done
# The cached answer must be the computed one.
if [ -f "$LOG/hs_dom_big1.1.out" ] && [ -f "$LOG/hs_idx_read_big1.1.out" ]; then
	if cmp -s "$LOG/hs_dom_big1.1.out" "$LOG/hs_idx_read_big1.1.out"; then
		echo "   cached output = computed output: ok"
	else
		echo "!! the cached run prints something else than the --no-index run:" >&2
		diff "$LOG/hs_dom_big1.1.out" "$LOG/hs_idx_read_big1.1.out" | head -20 >&2 || true
		FAILURES+=("index: cached :dominators output differs from the computed one")
	fi
fi

# ---------------------------------------------------------------- steady state
# A cross-check of the peak-RSS arithmetic: heapsh reads its commands from a
# pipe, runs one, and while it waits for the next (blocked in read(0), seen in
# /proc/PID/syscall) its anonymous memory (RssAnon: the heap model, plus the
# engine after :dominators) and mapped file pages (RssFile: the dump) are read
# from /proc/PID/status. Linux only; "n/a" elsewhere.
declare -A ANON FILEKB HWM
steady() {  # steady NAME DUMP COMMAND [index]: with "index", the session writes DUMP.hsidx
	local name=$1 dump=$2 cmd=$3 fifo=$LOG/steady.fifo pid fd t sc flags=(--no-index)
	ANON[$name]=n/a; FILEKB[$name]=n/a; HWM[$name]=n/a
	[ -r /proc/self/syscall ] || return 0
	if [ "${4:-}" = index ]; then flags=(); rm -f "$dump.hsidx"; fi
	rm -f "$fifo"; mkfifo "$fifo"
	"$HEAPSH" "${flags[@]}" "$dump" <"$fifo" >"$LOG/$name.out" 2>"$LOG/$name.err" &
	pid=$!
	exec {fd}>"$fifo"
	echo "$cmd" >&$fd
	local size prev=-1 still=0
	for ((t = 0; t < 1200; t++)); do   # up to 120 s; done when blocked in read(0) twice, output unchanged
		sleep 0.1
		sc=$(cat "/proc/$pid/syscall" 2>/dev/null) || break
		size=$(stat -c %s "$LOG/$name.out")
		if [[ $sc == "0 0x0 "* ]] && [ "$size" -gt 0 ] && [ "$size" = "$prev" ]; then
			still=$((still + 1)); [ $still -ge 2 ] && break
		else
			still=0
		fi
		prev=$size
	done
	if [[ ${sc:-} == "0 0x0 "* ]]; then
		ANON[$name]=$(awk '/^RssAnon:/ { print $2 }' "/proc/$pid/status")
		FILEKB[$name]=$(awk '/^RssFile:/ { print $2 }' "/proc/$pid/status")
		HWM[$name]=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
	fi
	exec {fd}>&-
	local rc=0; wait "$pid" || rc=$?
	rm -f "$fifo"
	[ ${#flags[@]} = 1 ] || rm -f "$dump.hsidx"
	if [ "$rc" != 0 ]; then
		FAILURES+=("$name: exit status $rc: $HEAPSH ${flags[*]} $dump <<< '$cmd'")
		echo "!! FAILED: $HEAPSH ${flags[*]} $dump with '$cmd' on stdin: exit status $rc" >&2
		tail -n 30 "$LOG/$name.err" | sed 's/^/!!   /' >&2
	fi
	printf '   %-22s RssAnon %s MB, RssFile %s MB, VmHWM %s MB\n' "$name" \
		"$(mb "${ANON[$name]}")" "$(mb "${FILEKB[$name]}")" "$(mb "${HWM[$name]}")"
}
echo "== memory at rest (after the command, waiting for the next one)"
steady ss_hist_big1 "$BIG1" ':histogram'
steady ss_dom_big1 "$BIG1" ':dominators --top 5'
steady ss_hist_big2 "$BIG2" ':histogram'
steady ss_dom_big2 "$BIG2" ':dominators --top 5'
steady ss_domix_big1 "$BIG1" ':dominators --top 5' index
steady ss_domix_big2 "$BIG2" ':dominators --top 5' index

# ---------------------------------------------------------------- results
med() { median "${WALL[$1]:-}"; }
medrss() { median "${RSS[$1]:-}"; }           # KiB
medvv() { median "${VVSEC[$1]:-}"; }

h1=$(med hs_hist_big1);   h1m=$(medrss hs_hist_big1)
v1=$(med vv_hist_big1);   v1w=$(medvv vv_hist_big1); v1m=$(medrss vv_hist_big1)
d1=$(med hs_dom_big1);    d1m=$(medrss hs_dom_big1)
vr=$(med vv_ret_big1);    vrw=$(medvv vv_ret_big1);  vrm=$(medrss vv_ret_big1)
h2=$(med hs_hist_big2);   h2m=$(medrss hs_hist_big2)
d2=$(med hs_dom_big2);    d2m=$(medrss hs_dom_big2)
iw=$(med hs_idx_write_big1); iwm=$(medrss hs_idx_write_big1)
ir=$(med hs_idx_read_big1);  irm=$(medrss hs_idx_read_big1)

# Ratios (VisualVM / heapsh): whole process, and VisualVM's own work seconds
# (without JVM start-up) against heapsh's whole process.
r2=$(calc '%.1f' 'a / b' "$v1" "$h1");  r2w=$(calc '%.1f' 'a / b' "$v1w" "$h1")
r3=$(calc '%.1f' 'a / b' "$vr" "$d1");  r3w=$(calc '%.1f' 'a / b' "$vrw" "$d1")
# Seconds per million objects, and big2/big1 growth.
pm1=$(calc '%.3f' 'a / (b / 1e6)' "$d1" "$N1"); pm2=$(calc '%.3f' 'a / (b / 1e6)' "$d2" "$N2")
gt=$(calc '%.2f' 'a / b' "$d2" "$d1"); go=$(calc '%.2f' 'a / b' "$N2" "$N1")
gpm=$(calc '%.2f' 'a / b' "$pm2" "$pm1")
e1=$(calc '%.2f' 'a - b' "$d1" "$h1"); e2=$(calc '%.2f' 'a - b' "$d2" "$h2")
ge=$(calc '%.2f' '(a / d) / (b / c)' "$e2" "$e1" "$N1" "$N2")
# The incoming references (KiB): part of the heap model (issue 2's 8 B per
# reference is 4 out and 4 in), built when first used (heap_in): neither
# the histogram run nor, since stop 30, the dominators run keeps them. Added
# to the model; the engine's extra memory is counted against that whole
# model, as before, and also plainly against the histogram run (xd).
hraw1=$h1m; hraw2=$h2m
hrest1=${ANON[ss_hist_big1]}; hrest2=${ANON[ss_hist_big2]}
inc1=$(calc '%.0f' '(4 * (a + 2) + 4 * (b + 1)) / 1024' "$N1" "${REFS[$BIG1]}")
inc2=$(calc '%.0f' '(4 * (a + 2) + 4 * (b + 1)) / 1024' "$N2" "${REFS[$BIG2]}")
h1m=$(calc '%.0f' 'a + b' "$h1m" "$inc1"); h2m=$(calc '%.0f' 'a + b' "$h2m" "$inc2")
ANON[ss_hist_big1]=$(calc '%.0f' 'a + b' "${ANON[ss_hist_big1]}" "$inc1")
ANON[ss_hist_big2]=$(calc '%.0f' 'a + b' "${ANON[ss_hist_big2]}" "$inc2")
# Engine memory: dominators peak RSS - the whole model's, per object; and
# dominators peak RSS - histogram peak RSS.
x1=$(calc '%.1f' '(a - b) * 1024 / c' "$d1m" "$h1m" "$N1")
x2=$(calc '%.1f' '(a - b) * 1024 / c' "$d2m" "$h2m" "$N2")
xd1=$(calc '%.1f' '(a - b) * 1024 / c' "$d1m" "$hraw1" "$N1")
xd2=$(calc '%.1f' '(a - b) * 1024 / c' "$d2m" "$hraw2" "$N2")
# Heap model memory: histogram peak RSS - mapped dump bytes.
model() {  # model RSS_KIB FILE_BYTES OBJECTS REFS -> "bytes per-object per-obj-after-8/ref budget ratio"
	local m
	m=$(calc '%.0f' 'a * 1024 - b' "$1" "$2")
	echo "$m $(calc '%.1f' 'a / b' "$m" "$3") $(calc '%.1f' '(a - 8 * c) / b' "$m" "$3" "$4") \
	      $(calc '%.0f' '48 * a + 8 * b' "$3" "$4") $(calc '%.2f' 'a / (48 * b + 8 * c)' "$m" "$3" "$4")"
}
read -r m1 m1po m1rest b1 m1r <<<"$(model "$h1m" "${FILEB[$BIG1]}" "$N1" "${REFS[$BIG1]}")"
read -r m2 m2po m2rest b2 m2r <<<"$(model "$h2m" "${FILEB[$BIG2]}" "$N2" "${REFS[$BIG2]}")"

# The same from RssAnon at rest (KiB).
sa1=$(calc '%.1f' 'a * 1024 / b' "${ANON[ss_hist_big1]}" "$N1")
sa2=$(calc '%.1f' 'a * 1024 / b' "${ANON[ss_hist_big2]}" "$N2")
sr1=$(calc '%.2f' 'a * 1024 / (48 * b + 8 * c)' "${ANON[ss_hist_big1]}" "$N1" "${REFS[$BIG1]}")
sr2=$(calc '%.2f' 'a * 1024 / (48 * b + 8 * c)' "${ANON[ss_hist_big2]}" "$N2" "${REFS[$BIG2]}")
# The engine at rest: RssAnon after :dominators minus after :histogram
# (neither keeps the incoming references); and the model and engine at rest
# against issue 18's 32 B/object + 8 B/reference.
se1=$(calc '%.1f' '(a - b) * 1024 / c' "${ANON[ss_dom_big1]}" "$hrest1" "$N1")
se2=$(calc '%.1f' '(a - b) * 1024 / c' "${ANON[ss_dom_big2]}" "$hrest2" "$N2")
rr1=$(calc '%.3f' 'a * 1024 / (32 * b + 8 * c)' "${ANON[ss_dom_big1]}" "$N1" "${REFS[$BIG1]}")
rr2=$(calc '%.3f' 'a * 1024 / (32 * b + 8 * c)' "${ANON[ss_dom_big2]}" "$N2" "${REFS[$BIG2]}")
ri1=$(calc '%.3f' 'a * 1024 / (32 * b + 8 * c)' "${ANON[ss_domix_big1]}" "$N1" "${REFS[$BIG1]}")
ri2=$(calc '%.3f' 'a * 1024 / (32 * b + 8 * c)' "${ANON[ss_domix_big2]}" "$N2" "${REFS[$BIG2]}")

# Verdicts (1 met, 0 not met, n/a).
lt() { calc '%d' '(a < b) ? 1 : 0' "$1" "$2"; }    # "under": strict
le() { calc '%d' '(a <= b) ? 1 : 0' "$1" "$2"; }
ge_() { calc '%d' '(a >= b) ? 1 : 0' "$1" "$2"; }
ok_h1=$(lt "$h1" 1); ok_r2=$(ge_ "$r2" 3)
ok_d1=$(lt "$d1" 1); ok_r3=$(ge_ "$r3" 40)
ok_x1=$(le "$x1" 16)
ok_lin=$(calc '%d' '(a >= 0.8 && a <= 1.25) ? 1 : 0' "$gpm")
ok_m1=$(le "$m1r" 1)

MB1=$(calc '%.0f' 'a / 1e6' "${FILEB[$BIG1]}"); MB2=$(calc '%.0f' 'a / 1e6' "${FILEB[$BIG2]}")
SUM=$OUT/summary.md
{
echo "### Results ($(date -u '+%Y-%m-%d'), $(nproc) cores, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), median of $R runs; VisualVM retained: $( [ "$SKIP_VV_RET" = 1 ] && echo skipped || echo "median of $RVV"))"
echo
echo "Binary: $BIN_ID."
echo
echo "Dumps: big1 = ${FILEB[$BIG1]} bytes ($MB1 MB), $N1 objects, ${REFS[$BIG1]} references;" \
     "big2 = ${FILEB[$BIG2]} bytes ($MB2 MB), $N2 objects, ${REFS[$BIG2]} references."
echo
echo "| measurement | median wall s | median peak RSS MB | notes |"
echo "|---|---:|---:|---|"
echo "| heapsh open + :histogram, big1 | $h1 | $(mb "$hraw1") | |"
echo "| VisualVM histogram, big1 | $v1 | $(mb "$v1m") | VisualVM's own work seconds: $v1w |"
echo "| heapsh --no-index open + :dominators (all retained sizes), big1 | $d1 | $(mb "$d1m") | $pm1 s per million objects |"
echo "| VisualVM retained, big1 | $vr | $(mb "$vrm") | VisualVM's own work seconds: $vrw |"
echo "| heapsh open + :histogram, big2 | $h2 | $(mb "$hraw2") | |"
echo "| heapsh --no-index open + :dominators, big2 | $d2 | $(mb "$d2m") | $pm2 s per million objects |"
echo "| heapsh :dominators writing the index (1 run), big1 | $iw | $(mb "$iwm") | index file $IDXB bytes |"
echo "| heapsh :dominators reading the index, big1 | $ir | $(mb "$irm") | |"
echo
echo "| target | measured | verdict |"
echo "|---|---|---|"
echo "| issue 2: open + histogram < 1 s (big1, $MB1 MB) | $h1 s | $(verdict "$ok_h1") |"
echo "| issue 2: >= 3x faster than VisualVM histogram | $(x "$r2") whole process ($(x "$r2w") against VisualVM's work seconds only) | $(verdict "$ok_r2") |"
echo "| issue 3: all retained sizes < 1 s (big1, whole process: open + dominators) | $d1 s (dominators alone, minus the histogram run: $e1 s) | $(verdict "$ok_d1") |"
echo "| issue 3: >= 40x faster than VisualVM retained | $(x "$r3") whole process ($(x "$r3w") against VisualVM's work seconds only) | $(verdict "$ok_r3") |"
echo "| issue 3: extra memory <= 16 bytes/object | beyond the whole model: big1 $x1 B/object, big2 $x2 B/object (beyond the histogram run's peak: big1 $xd1, big2 $xd2) | $(verdict "$ok_x1") |"
echo "| issue 3: linear growth | big2/big1: objects ${go}x, time ${gt}x; s per million objects $pm1 -> $pm2 (${gpm}x); dominators minus histogram ${e1} -> ${e2} s (${ge}x per object) | $(verdict "$ok_lin") (per-object time within 0.8-1.25x) |"
echo "| heap model <= 48 B/object + 8 B/reference | big1: $m1 B = $m1po B/object ($m1rest B/object after 8 B/reference), $(x "$m1r") the budget of $b1 B; big2: $m2 B = $m2po B/object, $(x "$m2r") the budget | $(verdict "$ok_m1") |"
echo
echo "Heap model = peak RSS of the histogram run minus the dump's size (the dump is mmap'd and its pages count in RSS)," \
     "plus the incoming references (4 bytes per object and per reference: big1 $(mb "$inc1") MB, big2 $(mb "$inc2") MB), which heapsh builds when first used, so a histogram run does not have them;" \
     "engine extra memory = peak RSS of the dominators run minus that whole model (the dominators run builds its own lists of referrers, most of the incoming references, and gives them back after; the figure in brackets is its peak minus the histogram run's)." \
     "The heap model figure also holds heapsh's own fixed start-up memory (a few MB: libc, Lua, readline)."
echo
echo "At rest (after the command, waiting for the next one; /proc/PID/status): heap model = RssAnon after :histogram plus the incoming references:" \
     "big1 $(mb "${ANON[ss_hist_big1]}") MB = $sa1 B/object ($(x "$sr1") the budget), big2 $(mb "${ANON[ss_hist_big2]}") MB = $sa2 B/object ($(x "$sr2"));" \
     "engine = RssAnon after :dominators minus after :histogram (neither keeps the incoming references): big1 $se1 B/object, big2 $se2 B/object;" \
     "model and engine after :dominators: big1 $(mb "${ANON[ss_dom_big1]}") MB = $(x "$rr1") issue 18's 32 B/object + 8 B/reference, big2 $(mb "${ANON[ss_dom_big2]}") MB = $(x "$rr2");" \
     "after a first :dominators that writes the index (the session then maps the model and tree it wrote): big1 $(mb "${ANON[ss_domix_big1]}") MB = $(x "$ri1"), big2 $(mb "${ANON[ss_domix_big2]}") MB = $(x "$ri2");" \
     "dump pages (RssFile): big1 $(mb "${FILEKB[ss_hist_big1]}") MB, big2 $(mb "${FILEKB[ss_hist_big2]}") MB."
echo
echo "Raw runs (wall seconds; peak RSS MB; VisualVM's work seconds):"
echo
echo "| measurement | wall s | peak RSS MB | VisualVM work s |"
echo "|---|---|---|---|"
for k in hs_hist_big1 vv_hist_big1 hs_dom_big1 vv_ret_big1 hs_hist_big2 hs_dom_big2 hs_idx_write_big1 hs_idx_read_big1; do
	[ -n "${NRUN[$k]:-}" ] || continue
	w=${WALL[$k]:-}; v=${VVSEC[$k]:-}
	echo "| $k | ${w% } | $(list_mb "${RSS[$k]:-}") | ${v% } |"
done
if [ ${#FAILURES[@]} -gt 0 ]; then
	echo
	echo "**Failed runs** (left out of the medians; details in build/bench/log/):"
	echo
	printf -- '- %s\n' "${FAILURES[@]}"
fi
} >"$SUM"

echo
echo "== summary (also in $SUM)"
echo
cat "$SUM"
[ ${#FAILURES[@]} -eq 0 ] || exit 1
