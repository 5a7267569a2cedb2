#!/usr/bin/env bash
# tests/fuzz/run.sh - seed corpora and runs of the libFuzzer harnesses
# (docs/fuzzing.md). Built by `make fuzz` into build/fuzz.
#   run.sh corpus          make build/fuzz/corpus/TARGET from the test dumps,
#                          queries and the harnesses' own seed writers
#   run.sh check           every harness on its corpus and its regression
#                          files (tests/fuzz/regress/TARGET, and the HPROF
#                          ones make_regress.py writes into build/fuzz/regress/hprof), then a short
#                          time-boxed run each (FUZZ_SECONDS, default 8);
#                          any crash, leak, timeout or sanitizer report fails
#   run.sh campaign T S    fuzz target T for S seconds into its corpus, the
#                          log in build/fuzz/logs/campaign-T.log (a longer campaign)
#   run.sh coverage T      line coverage of T's sources by its campaign's corpus
#                          (make fuzz-cov first; needs llvm-cov)
set -euo pipefail
cd "$(dirname "$0")/../.."
F=build/fuzz
TARGETS="hprof index query wire lua jfr redact"
DICT_redact=tests/fuzz/hprof.dict
DICT_hprof=tests/fuzz/hprof.dict
DICT_query=tests/fuzz/query.dict
DICT_lua=tests/fuzz/query.dict
DICT_wire=tests/fuzz/wire.dict
# Bounds: 2 GiB of memory (beyond that is a finding), 10 s per input.
OPTS="-rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10"

dict() { local v="DICT_$1"; [ -n "${!v:-}" ] && echo "-dict=$PWD/${!v}" || true; }

# regress_dirs T: T's regression files: kept in tests/fuzz/regress, or
# written (the HPROF ones: the project keeps no HPROF files) into build.
regress_dirs() {
	[ -d "tests/fuzz/regress/$1" ] && printf ' %s' "tests/fuzz/regress/$1"
	[ -d "$F/regress/$1" ] && printf ' %s' "$F/regress/$1"
	return 0
}

corpus() {
	for t in $TARGETS; do mkdir -p "$F/corpus/$t"; done
	python3 tests/fuzz/make_regress.py --hprof "$F/regress" >/dev/null
	# HPROF: the tiny heap (ids of 4 and 8 bytes, plain and gzip), and
	# every dump the unit tests write (HEAPSH_KEEP_DUMPS keeps them).
	HEAPSH_FUZZ_SEEDS="$F/corpus/hprof" "$F/fuzz_hprof" >/dev/null 2>&1
	HEAPSH_FUZZ_SEEDS="$F/corpus/index" "$F/fuzz_index" >/dev/null 2>&1
	HEAPSH_FUZZ_SEEDS="$F/corpus/jfr" "$F/fuzz_jfr" >/dev/null 2>&1
	HEAPSH_FUZZ_SEEDS="$F/corpus/redact" "$F/fuzz_redact" >/dev/null 2>&1
	# Queries: every query file of queries/ and tests/queries, and seeds for
	# the tiny heap's own classes (tests/fuzz/seeds/query); their
	# programs (prog_encode) go to the wire corpus as ANALYZE requests.
	for q in queries/*.hq tests/queries/*.hq tests/fuzz/seeds/query/*.hq; do
		cp "$q" "$F/corpus/query/$(basename "$q")"
	done
	HEAPSH_FUZZ_SEEDS="$F/corpus/wire" "$F/fuzz_query" "$F/corpus/query" \
		>/dev/null 2>&1
	# Replies, requests, snapshot records and codec scripts (fuzz_wire's modes).
	HEAPSH_FUZZ_SEEDS="$F/corpus/wire" "$F/fuzz_wire" >/dev/null 2>&1
	for w in Order String java.lang.Thread 'shop.*' 'objects.size()' \
		'classes.filter(c -> c.name == "shop.Order")' '0x205' 'alpha'; do
		printf '%s' "$w" >"$F/corpus/lua/$(printf '%s' "$w" | md5sum | cut -c1-12)"
	done
	for t in $TARGETS; do
		echo "fuzz corpus $t: $(ls "$F/corpus/$t" | wc -l) inputs"
	done
}

check() {
	local fail=0 t dirs log d
	mkdir -p "$F/logs"
	for t in $TARGETS; do
		dirs="$F/corpus/$t$(regress_dirs "$t")"
		log="$F/logs/check-$t.log"
		# shellcheck disable=SC2086
		if ! "$F/fuzz_$t" $OPTS -runs=0 $dirs >"$log" 2>&1; then
			echo "FAIL fuzz $t: an input of its corpus or regression files fails:"
			tail -40 "$log"
			fail=1
			continue
		fi
		echo "ok   fuzz $t: corpus and regression files ($(grep -o 'INITED.*' "$log" | head -1))"
		# A short run from the corpus, into a scratch copy (the corpus stays as made).
		rm -rf "$F/scratch/$t" && mkdir -p "$F/scratch/$t" && cp "$F/corpus/$t"/* "$F/scratch/$t/"
		# shellcheck disable=SC2086
		d=$(dict "$t")
		if ! (cd "$F/scratch" && "../fuzz_$t" $OPTS $d \
			-seed=1 -max_total_time="${FUZZ_SECONDS:-8}" -artifact_prefix="$t-" "$t") \
			>"$log" 2>&1; then
			echo "FAIL fuzz $t: a short run found a failing input (in $F/scratch/):"
			tail -40 "$log"
			fail=1
			continue
		fi
		echo "ok   fuzz $t: $(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$log")"
	done
	return $fail
}

campaign() {
	# A copy of the harness, so that rebuilding during a campaign changes nothing;
	# fork mode goes on after a crash, leak, out-of-memory or timeout and keeps
	# each failing input in build/fuzz/campaign/T/artifacts.
	local t=$1 secs=$2 c="$F/campaign/$1"
	mkdir -p "$c/corpus" "$c/artifacts" "$F/logs"
	cp "$F/fuzz_$t" "$c/fuzz_$t"
	cp -n "$F/corpus/$t"/* "$c/corpus/" 2>/dev/null || true
	local r
	for r in $(regress_dirs "$t"); do cp -n "$r"/* "$c/corpus/" 2>/dev/null || true; done
	# shellcheck disable=SC2046
	nice -n 5 "$c/fuzz_$t" $OPTS $(dict "$t") -fork=1 -ignore_crashes=1 -ignore_ooms=1 \
		-ignore_timeouts=1 -max_total_time="$secs" -print_final_stats=1 \
		-artifact_prefix="$c/artifacts/" "$c/corpus" >"$F/logs/campaign-$t.log" 2>&1 || true
	grep -E '^#[0-9]+: cov' "$F/logs/campaign-$t.log" | tail -1
	echo "artifacts: $(ls "$c/artifacts" | wc -l)"
}

# coverage T: line coverage of target T's sources by its campaign's corpus (or
# its seed corpus), with harnesses built for it (make fuzz-cov) and llvm-cov.
coverage() {
	local t=$1 c="$F/campaign/$1/corpus" dir="build/fuzz-cov" prof
	[ -d "$c" ] || c="$F/corpus/$1"
	prof="$dir/$t.profraw"
	rm -f "$dir/$t".prof*
	LLVM_PROFILE_FILE="$prof" "$dir/fuzz_$t" -runs=0 -rss_limit_mb=4096 "$c" >/dev/null 2>&1 || true
	llvm-profdata merge -sparse "$prof" -o "$dir/$t.profdata"
	local srcs
	case $t in
	hprof) srcs="src/hprof src/heap src/engine/domtree.c src/engine/dyn.c src/engine/path.c src/engine/scc.c src/engine/dom.c" ;;
	index) srcs="src/engine/idx.c src/engine/domtree.c src/engine/dyn.c" ;;
	query) srcs="src/dsl/parse.c src/dsl/builtins.c src/dsl/eval.c src/dsl/eval_builtin.c src/dsl/eval_settype.c src/dsl/eval_session.c src/dsl/eval_allocations.c src/dsl/heapif_dump.c src/dsl/prog.c" ;;
	wire) srcs="src/base/wire.c src/attach/proto.c src/attach/snapshot.c src/agent/req.c src/dsl/prog.c" ;;
	lua) srcs="src/lua" ;;
	jfr) srcs="src/alloc/jfr.c src/alloc/alloc.c" ;;
	esac
	# shellcheck disable=SC2086
	llvm-cov report "$dir/fuzz_$t" -instr-profile="$dir/$t.profdata" $srcs | tail -n +3 |
		awk -v t="$t" '{ print t ": " $0 }'
}

case "${1:-}" in
corpus) corpus ;;
check) check ;;
campaign) campaign "$2" "$3" ;;
coverage) coverage "$2" ;;
*) echo "usage: $0 corpus | check | campaign TARGET SECONDS | coverage TARGET" >&2; exit 2 ;;
esac
