# bench/lib.sh - what the benchmark scripts share, sourced by bench/dyn.sh,
# bench/live.sh and bench/lua.sh (after they set FAILURES, an array of
# "what failed" lines).

# failures_md [TITLE]: the failures as a Markdown list under TITLE (default
# "Failures:"); nothing when there were none.
failures_md() {
	[ ${#FAILURES[@]} -gt 0 ] || return 0
	echo
	echo "**${1:-Failures:}**"
	echo
	printf -- '- %s\n' "${FAILURES[@]}"
}

# summary_section SCRIPT FILE: replace SCRIPT's section of the Markdown FILE
# (the lines between "<!-- SCRIPT begin -->" and "<!-- SCRIPT end -->") with
# the text on stdin, appended at the end; the file is made if missing. Ends
# with a line on the failures, if any.
summary_section() {
	local begin="<!-- $1 begin -->" end="<!-- $1 end -->" file=$2
	if [ -f "$file" ]; then
		awk -v b="$begin" -v e="$end" '$0 == b { skip = 1 } !skip { print } $0 == e { skip = 0 }' \
			"$file" >"$file.tmp" && mv -f "$file.tmp" "$file"
	fi
	{
		echo "$begin"
		echo
		cat
		[ ${#FAILURES[@]} -eq 0 ] || { echo "**${#FAILURES[@]} failure(s)**: see the end of the full report."; echo; }
		echo "$end"
	} >>"$file"
}

# bench_heapsh NAME PATH...: the heapsh to measure ($HEAPSH, default ./heapsh,
# built first) copied to build/bench/heapsh-NAME, so a rebuild during the run
# cannot mix two binaries. Sets HS (the copy) and BIN_ID (its version, hash,
# and the commit, with a warning when PATH... have uncommitted changes).
bench_heapsh() {
	local name=$1
	shift
	HEAPSH=${HEAPSH:-./heapsh}
	[ "$HEAPSH" != ./heapsh ] || make -s heapsh
	[ -x "$HEAPSH" ] || { echo "bench/$name.sh: $HEAPSH not found" >&2; exit 2; }
	HS=build/bench/heapsh-$name
	mkdir -p build/bench
	cp "$HEAPSH" "$HS.tmp" && mv -f "$HS.tmp" "$HS"
	BIN_ID="$("$HS" --version), sha256 $(sha256sum "$HS" | cut -c1-12), copied from $HEAPSH"
	if git rev-parse --git-dir >/dev/null 2>&1; then
		BIN_ID+="; the working tree was at commit $(git rev-parse --short HEAD)"
		[ -z "$(git status --porcelain -- "$@" 2>/dev/null)" ] ||
			BIN_ID+=" with uncommitted changes in $*"
	fi
}

# bench_dumps NAME DUMP: make the benchmark dumps (bench/run.sh's make_dump,
# BigHeap SCALE 1 and 2) with bench/run.sh's quickest settings when DUMP is
# missing; about a minute more.
bench_dumps() {
	[ ! -s "$2" ] || return 0
	echo "bench/$1.sh: $2 is missing; making it with a quick bench/run.sh"
	BENCH_RUNS=1 BENCH_SKIP_VV_RETAINED=1 bash bench/run.sh
}
