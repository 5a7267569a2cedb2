#!/usr/bin/env bash
# bench/huge.sh - a dump bigger than this machine's memory (issue 18): the
# 36 GiB synthetic dump (1.5x the 24 GiB here, bench/gen_hprof) on the whole
# machine with heapsh's default memory budget, once each (each run takes
# minutes):
#   - open + :histogram          heapsh --no-index -c ':histogram --top 5'
#   - the whole index            heapsh -c ':dominators --top 5' -c ':info'  (writes DUMP.hsidx;
#     :info shows what the session holds once it uses the index it wrote)
#   - reopen with the index      heapsh -c ':dominators --top 5' -c ':info'
#     (the heap model is mapped from the index when the index step had the
#     disk to keep it there: docs/out-of-core.md, "The model in the index";
#     the first open after the index is written checks it in full, and
#     seals it: docs/out-of-core.md, "Reopening at once")
#   - sealed: the same, once more: the seal spares the checks
#   - sealed-info: heapsh -c ':info' -c ':histogram --top 5', sealed: what
#     a reopen costs before the engine's work
# Wall time, peak RSS with its anonymous and file parts (sampled every
# 0.2 s), what heapsh said it would put on disk, and the disk left.
#
# Disk: the dump (36 GiB) plus what does not fit the budget (heapsh says
# how much before it builds anything, and stops if the folder cannot hold
# it) plus the index (12 bytes per object, and with the heap model 18 more
# per object and 4 per reference). HUGE_MIN_FREE (bytes, default
# 1 GiB) is kept free: a run that would go below is killed and reported.
# (heapsh writes an index only with 1/16 of it to spare: at 36 GiB, about
# 1.4 GB; a 2 GiB floor killed a run that was writing its index.)
#
# Environment: HUGE_SIZE (default 36G), GEN_SEED (default 1), HEAPSH,
# HUGE_KEEP=1 keeps the dump and its index after (default: deleted),
# HUGE_STEPS (default "hist index reopen sealed sealed-info"): the steps to
# run, for a rerun on a kept dump (hist and index remove the index first).
# Output: build/bench/huge.txt, a section of build/bench/summary.md, the
# runs' output in build/bench/hugelog/.

set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
. bench/lib.sh

OUT=build/bench
LOG=$OUT/hugelog
REPORT=$OUT/huge.txt
SIZE=${HUGE_SIZE:-36G}
DUMP=$OUT/syn-huge.hprof
GEN=$OUT/gen_hprof
export SAMPLE_MIN_FREE_DIR=$OUT SAMPLE_MIN_FREE=${HUGE_MIN_FREE:-1073741824}
FAILURES=()
make -s "$GEN"
bench_heapsh huge src Makefile
mkdir -p "$LOG"
rm -f "$LOG"/*
gib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1073741824 }'; }
avail() { df -B1 --output=avail "$OUT" | tail -1 | tr -d ' '; }

if [ ! -s "$DUMP" ]; then
	echo "== making $DUMP ($SIZE)"
	t0=$(date +%s)
	"$GEN" "$DUMP" --size "$SIZE" --seed "${GEN_SEED:-1}" 2>"$LOG/gen.err"
	echo "   $(tail -1 "$LOG/gen.err"); $(($(date +%s) - t0)) s"
fi
BYTES=$(stat -c %s "$DUMP")
STEPS=${HUGE_STEPS:-hist index reopen sealed sealed-info}
case " $STEPS " in *" hist "* | *" index "*) rm -f "$DUMP.hsidx" ;; esac

step() {	# step NAME CMD...
	local name=$1
	shift
	echo "== $name: $*"
	sync
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
	local before
	before=$(avail)
	sample_run "$LOG/$name" "$LOG/$name" "$@"
	local r
	r=$(tail -1 "$LOG/$name")
	echo "   $r (wall s, rss anon file MiB, status); disk free before $(gib "$before") GiB, after $(gib "$(avail)") GiB"
	[ "$(echo "$r" | awk '{ print $5 }')" = 0 ] || FAILURES+=("$name: status $(echo "$r" | awk '{ print $5 }'): $(tail -3 "$LOG/$name.err")")
}

has() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
! has hist || step hist "$HS" --no-index -c ':histogram --top 5' "$DUMP"
! has index || step index "$HS" -c ':dominators --top 5' -c ':info' "$DUMP"
! has reopen || step reopen "$HS" -c ':dominators --top 5' -c ':info' "$DUMP"
! has sealed || step sealed "$HS" -c ':dominators --top 5' -c ':info' "$DUMP"
! has sealed-info || step sealed-info "$HS" -c ':info' -c ':histogram --top 5' "$DUMP"

field() { awk -v k="$2" '{ print $k }' "$LOG/$1"; }
{
	echo "# A dump bigger than the machine (bench/huge.sh)"
	echo
	echo "heapsh: $BIN_ID"
	echo "$(nproc) cores, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) of memory; one run each, page cache emptied before each"
	echo
	echo "Dump: $DUMP, $(gib "$BYTES") GiB; $(grep -m1 -o '[0-9]* objects;.*' "$LOG/${STEPS%% *}.err" | cut -c1-300 || true)"
	echo
	echo "| step | wall s | GB/s of dump | peak RSS MiB | anonymous MiB | file MiB |"
	echo "|---|---|---|---|---|---|"
	for s in $STEPS; do
		printf '| %s | %s | %s | %s | %s | %s |\n' "$s" "$(field $s 1)" \
			"$(awk -v b="$BYTES" -v w="$(field $s 1)" 'BEGIN { printf "%.3f", b / w / 1e9 }')" \
			"$(field $s 2)" "$(field $s 3)" "$(field $s 4)"
	done
	echo
	echo "Index file: $(stat -c %s "$DUMP.hsidx" 2>/dev/null || echo none) bytes."
	for s in reopen sealed sealed-info; do
		[ -s "$LOG/$s.out" ] || continue
		echo "What the $s step said: $(grep -E '^(model|dominator tree|arrays|memory budget)' "$LOG/$s.out" | tr -s ' ' | tr '\n' ';')"
	done
	echo "What the index step's session held after it (its :info): $(grep -E '^(model|dominator tree|arrays)' "$LOG/index.out" 2>/dev/null | tr -s ' ' | tr '\n' ';' || true)"
	echo "What the index step said about the model: $(grep -h 'heap model' "$LOG/index.err" "$LOG/reopen.err" 2>/dev/null | tr '\n' ';' || true)"
	failures_md
} >"$REPORT"
cat "$REPORT"
summary_section huge "$OUT/summary.md" <"$REPORT"
[ "${HUGE_KEEP:-0}" = 1 ] || rm -f "$DUMP" "$DUMP.hsidx"
[ ${#FAILURES[@]} -eq 0 ]
