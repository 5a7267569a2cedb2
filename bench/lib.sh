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

# median: the median of the numbers on stdin, "n/a" when there are none.
median() {
	sort -n | awk 'NF { a[++n] = $1 } END { if (n == 0) print "n/a"; else if (n % 2) print a[(n + 1) / 2]; else print (a[n / 2] + a[n / 2 + 1]) / 2 }'
}

# sample_run LOGFILE OUTPREFIX CMD...: run CMD (stdout and stderr to
# OUTPREFIX.out and .err), sampling /proc/PID/status every 0.2 s, and append
# "wall_s rss_mib anon_mib file_mib status" to LOGFILE. CMD may be a
# wrapper that execs heapsh (the pid is the same). With SAMPLE_MIN_FREE_DIR
# and SAMPLE_MIN_FREE (bytes) set, the run is killed when that folder's free
# space falls below the minimum, and the status is "nodisk".
sample_run() {
	local log=$1 pre=$2 pid rss=0 anon=0 fil=0 t0 t1 st=0 a b c
	shift 2
	t0=$(date +%s.%N)
	"$@" >"$pre.out" 2>"$pre.err" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if [ -r "/proc/$pid/status" ]; then
			read -r a b c < <(awk '/^VmRSS/ { r = $2 } /^RssAnon/ { a = $2 } /^RssFile/ { f = $2 }
				END { print r + 0, a + 0, f + 0 }' "/proc/$pid/status" 2>/dev/null || echo "0 0 0")
			[ "${a:-0}" -gt "$rss" ] && rss=$a
			[ "${b:-0}" -gt "$anon" ] && anon=$b
			[ "${c:-0}" -gt "$fil" ] && fil=$c
		fi
		if [ -n "${SAMPLE_MIN_FREE_DIR:-}" ] &&
			[ "$(df -B1 --output=avail "$SAMPLE_MIN_FREE_DIR" | tail -1 | tr -d ' ')" -lt "${SAMPLE_MIN_FREE:-0}" ]; then
			kill "$pid"
			st=nodisk
		fi
		sleep 0.2
	done
	if [ "$st" = nodisk ]; then wait "$pid" || true; else wait "$pid" || st=$?; fi
	t1=$(date +%s.%N)
	awk -v t0="$t0" -v t1="$t1" -v r="$rss" -v a="$anon" -v f="$fil" -v s="$st" \
		'BEGIN { printf "%.2f %.0f %.0f %.0f %s\n", t1 - t0, r / 1024, a / 1024, f / 1024, s }' >>"$log"
}

# bench_install ME LOG PACKAGE...: the Debian packages installed with apt-get
# (as root; its output in LOG), or the script ME ends (exit 2) saying which
# are missing and how to install them.
bench_install() {
	local me=$1 log=$2
	shift 2
	[ $# -gt 0 ] || return 0
	if [ "$(id -u)" != 0 ]; then
		echo "$me: missing $*; run: sudo apt-get install -y $*" >&2
		exit 2
	fi
	echo "== installing $* (apt-get)"
	if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"; } >"$log" 2>&1; then
		echo "$me: apt-get install $* failed ($log)" >&2
		exit 2
	fi
}
