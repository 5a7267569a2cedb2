#!/usr/bin/env bash
# bench/outofcore.sh - heaps bigger than the machine (issue 18,
# docs/out-of-core.md): heapsh on a synthetic dump inside a memory cgroup
# smaller than the dump, against the same commands with the whole machine,
# interleaved. A cgroup is a machine with less memory that the kernel
# enforces: past its limit the kernel reclaims page cache and file-backed
# pages, and kills the process only if anonymous memory does not fit.
#
# Cases (BENCH_RUNS runs each, default 3, interleaved with the unconstrained
# run; the unconstrained runs start with the dump in the page cache, the
# constrained ones with an empty page cache, so the dump's pages count
# against the limit and are read from disk):
#   - open + :histogram                  heapsh --no-index -c ':histogram'
#   - open + all retained sizes          heapsh --no-index -c ':dominators --top 5'
#   - once each, constrained: :dominators writing DUMP.hsidx, then a reopen
#     that reads it.
# For each run: wall time, peak RSS and its anonymous and file parts
# (sampled from /proc/PID/status every 0.2 s), the cgroup's peak usage and
# its OOM kills. The answers (:histogram and :dominators, top 30) must be
# identical constrained and not.
#
# Environment:
#   BENCH_RUNS=N         runs per case (default 3)
#   OOC_DUMP=FILE        the dump (default build/bench/syn4g.hprof, made by bench/gen.sh)
#   OOC_LIMIT=SIZE       the cgroup's memory limit (default 4G)
#   OOC_BIG=1            also a 12 GiB dump (build/bench/syn12g.hprof, made here
#                        when 40 GiB are free) in an 8 GiB cgroup: 1.5x its memory,
#                        as a 36 GiB dump is on this 24 GiB machine; once each
#   HEAPSH=path          the heapsh binary (default ./heapsh, copied first)
# Needs root and the cgroup memory controller (v1 or v2); says so and exits 2
# without them.
#
# Output: build/bench/outofcore.txt, a section of build/bench/summary.md,
# each run's output in build/bench/ooclog/. Exit status 1 if a run failed.

set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
. bench/lib.sh

R=${BENCH_RUNS:-3}
OUT=build/bench
LOG=$OUT/ooclog
REPORT=$OUT/outofcore.txt
DUMP=${OOC_DUMP:-$OUT/syn4g.hprof}
LIMIT=${OOC_LIMIT:-4G}
[[ $R =~ ^[1-9][0-9]*$ ]] || { echo "bench/outofcore.sh: BENCH_RUNS must be a positive integer" >&2; exit 2; }
[ -s "$DUMP" ] || { echo "bench/outofcore.sh: $DUMP is missing; run bench/gen.sh first" >&2; exit 2; }
bench_heapsh ooc src Makefile
mkdir -p "$LOG"
rm -f "$LOG"/*
FAILURES=()

bytes_of() { numfmt --from=iec "$1"; }
gib() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1073741824 }'; }

# ---------------------------------------------------------------- the cgroup
CG=""
CGV=0
if [ -w /sys/fs/cgroup/memory ] && [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
	CGV=1
	CG=/sys/fs/cgroup/memory/heapsh-bench-$$
elif [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers &&
	[ -w /sys/fs/cgroup ]; then
	CGV=2
	CG=/sys/fs/cgroup/heapsh-bench-$$
else
	echo "bench/outofcore.sh: needs root and a writable cgroup memory controller" >&2
	exit 2
fi
mkdir -p "$CG"
trap 'rmdir "$CG" 2>/dev/null || true' EXIT

# cg_limit BYTES: set the limit (and, v1, reset the peak); cg_peak and
# cg_ooms: the peak usage in bytes and the OOM kills so far.
cg_limit() {
	if [ $CGV = 1 ]; then
		echo "$1" >"$CG/memory.limit_in_bytes"
		echo 0 >"$CG/memory.max_usage_in_bytes"
	else
		echo "$1" >"$CG/memory.max"
		echo 0 >"$CG/memory.swap.max" 2>/dev/null || true
	fi
}
cg_peak() {
	if [ $CGV = 1 ]; then cat "$CG/memory.max_usage_in_bytes"
	elif [ -f "$CG/memory.peak" ]; then cat "$CG/memory.peak"
	else echo 0; fi
}
cg_ooms() {
	if [ $CGV = 1 ]; then awk '$1 == "oom_kill" { print $2 }' "$CG/memory.oom_control"
	else awk '$1 == "oom_kill" { print $2 }' "$CG/memory.events"; fi
}

# run NAME CGROUP(0|1) CMD...: run CMD (in the cgroup when 1) with
# sample_run (bench/lib.sh); appends "wall rss anon file cgpeak ooms status"
# (seconds, MiB) to $LOG/NAME.
run() {
	local name=$1 incg=$2 i=1 o0 peak=0 ooms=0 wall rss anon fil st
	shift 2
	[ -f "$LOG/$name" ] && i=$(($(wc -l <"$LOG/$name") + 1))
	o0=$(cg_ooms)
	[ "$incg" = 1 ] && [ $CGV = 1 ] && echo 0 >"$CG/memory.max_usage_in_bytes"
	if [ "$incg" = 1 ]; then
		sample_run "$LOG/$name.raw" "$LOG/$name.$i" \
			sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$CG" "$@"
		peak=$(cg_peak)
		ooms=$(($(cg_ooms) - o0))
	else
		sample_run "$LOG/$name.raw" "$LOG/$name.$i" "$@"
	fi
	read -r wall rss anon fil st < <(tail -1 "$LOG/$name.raw")
	[ "$st" = 0 ] || FAILURES+=("$name run $i: exit status $st: $* (see $LOG/$name.$i.err)")
	echo "$wall $rss $anon $fil $((peak / 1048576)) $ooms $st" >>"$LOG/$name"
	echo "   $name run $i: $(tail -1 "$LOG/$name") (wall s, rss anon file cgroup-peak MiB, ooms, status)"
}

# col NAME K: the median of column K of NAME's runs; range NAME: the walls' min-max.
col() { awk -v k="$2" '{ print $k }' "$LOG/$1" | median; }
range() { awk '{ print $1 }' "$LOG/$1" | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }'; }
row() {	# row LABEL NAME
	printf '| %s | %s s (%s) | %s MiB | %s MiB | %s MiB | %s MiB | %s |\n' "$1" "$(col "$2" 1)" "$(range "$2")" \
		"$(col "$2" 2)" "$(col "$2" 3)" "$(col "$2" 4)" "$(col "$2" 5)" "$(awk '{ s += $6 } END { print s + 0 }' "$LOG/$2")"
}

# warm DUMP: the dump in the page cache (the whole machine's runs); cold:
# no page cache, so that a constrained run reads the dump into pages charged
# to its cgroup (a dump cached before would be charged to the root group,
# outside the limit).
warm() { cat "$1" >/dev/null; }
cold() { sync; echo 3 >/proc/sys/vm/drop_caches; }

# case_set DUMP LIMIT RUNS TAG: the cases on DUMP, constrained to LIMIT.
case_set() {
	local d=$1 lim=$2 runs=$3 tag=$4 k
	cg_limit "$(bytes_of "$lim")"
	rm -f "$d.hsidx"
	for ((k = 1; k <= runs; k++)); do
		warm "$d"
		run "$tag-hist-free" 0 "$HS" --no-index -c ':histogram' "$d"
		cold
		run "$tag-hist-cg" 1 "$HS" --no-index -c ':histogram' "$d"
		warm "$d"
		run "$tag-dom-free" 0 "$HS" --no-index -c ':dominators --top 5' "$d"
		cold
		run "$tag-dom-cg" 1 "$HS" --no-index -c ':dominators --top 5' "$d"
	done
	cold
	run "$tag-index-cg" 1 "$HS" -c ':dominators --top 5' "$d"
	cold
	run "$tag-reopen-cg" 1 "$HS" -c ':dominators --top 5' -c ':info' "$d"
	run "$tag-answers-free" 0 "$HS" --no-index -c ':histogram --top 30' -c ':dominators --top 30' "$d"
	run "$tag-answers-cg" 1 "$HS" --no-index -c ':histogram --top 30' -c ':dominators --top 30' "$d"
	rm -f "$d.hsidx"
	local same=no
	cmp -s "$LOG/$tag-answers-free.1.out" "$LOG/$tag-answers-cg.1.out" && same=yes
	[ $same = yes ] || FAILURES+=("$tag: the answers differ within $lim ($LOG/$tag-answers-*.1.out)")
	grep -q "read from the index" "$LOG/$tag-reopen-cg.1.out" ||
		FAILURES+=("$tag: the reopen did not read the index")
	local info objs refs bytes
	info=$("$HS" --no-index --format csv -c ':info' "$d")
	objs=$(printf '%s\n' "$info" | awk -F, '$1 == "objects" { print $2 }')
	refs=$(printf '%s\n' "$info" | awk -F, '$1 == "references" { print $2 }')
	bytes=$(stat -c %s "$d")
	{
		echo "### $d: $(gib "$bytes") GiB, $objs objects, $refs references; cgroup limit $lim"
		echo
		echo "| command | wall (range) | peak RSS | anonymous | file | cgroup peak | OOM kills |"
		echo "|---|---|---|---|---|---|---|"
		row "open + :histogram, whole machine" "$tag-hist-free"
		row "open + :histogram, within $lim" "$tag-hist-cg"
		row "open + :dominators, whole machine" "$tag-dom-free"
		row "open + :dominators, within $lim" "$tag-dom-cg"
		row ":dominators writing the index, within $lim" "$tag-index-cg"
		row "reopen reading the index, within $lim" "$tag-reopen-cg"
		echo
		echo "Answers (:histogram and :dominators, top 30) identical within $lim and with the whole machine: $same."
		echo "Throughput of open + :dominators within $lim: $(awk -v b="$bytes" -v w="$(col "$tag-dom-cg" 1)" \
			'BEGIN { printf "%.2f GB/s", b / w / 1e9 }')."
		echo
	} >>"$REPORT"
}

{
	echo "# Heaps bigger than the machine (bench/outofcore.sh)"
	echo
	echo "heapsh: $BIN_ID"
	echo "$(nproc) cores, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) of memory, cgroup v$CGV;" \
		"median of $R runs, interleaved; RSS sampled every 0.2 s"
	echo
} >"$REPORT"

case_set "$DUMP" "$LIMIT" "$R" small
if [ "${OOC_BIG:-0}" = 1 ]; then
	BIG=$OUT/syn12g.hprof
	if [ ! -s "$BIG" ]; then
		have=$(df -B1 --output=avail "$OUT" | tail -1 | tr -d ' ')
		if [ "$have" -lt $((40 * 1073741824)) ]; then
			FAILURES+=("$BIG not made: $(gib "$have") GiB free under $OUT, 40 GiB needed")
		else
			make -s "$OUT/gen_hprof"
			echo "== making $BIG"
			"$OUT/gen_hprof" "$BIG" --size 12G --seed "${GEN_SEED:-1}" >/dev/null
		fi
	fi
	[ -s "$BIG" ] && case_set "$BIG" 8G 1 big
fi
failures_md >>"$REPORT"
cat "$REPORT"
summary_section outofcore "$OUT/summary.md" <"$REPORT"
[ ${#FAILURES[@]} -eq 0 ]
