#!/usr/bin/env bash
# bench/redact.sh - heapsh --redact against gzip -1 of the same dump, the
# speed of the disk the issue names (issue 38; docs/performance.md,
# "Redacting dumps").
#
# On build/bench/big1.hprof (178 MB; made with BigHeap as bench/run.sh does
# when missing), big2.hprof (341 MB, to show the memory does not grow with
# the dump) and h2.hprof (a real program's: Debian's H2 database with
# H2ROWS rows, bench/java/H2Leak.java, dumped with jcmd), RUNS rounds, each
# in turn:
#   redact  heapsh --redact DUMP OUT.hprof           (plain out)
#   gzip    gzip -1 -c DUMP > OUT.gz                  (the bound)
#   redactz heapsh --redact DUMP OUT.hprof.gz         (gzip -1 out)
#   redactzz heapsh --redact OUT.gz OUT2.hprof.gz     (gzip'd in and out: one
#           inflate per read pass)
# each timed as a whole process (/usr/bin/time: wall seconds, peak RSS).
# Prints per command the median, min and max wall seconds, MB/s of the
# dump, the median ratio to gzip -1 of the same round, and the peak RSS.
# The copies are checked: the histogram of the plain copy is the dump's.
#
# Usage: bash bench/redact.sh   (BENCH_RUNS=5, DUMPS="big1 big2 h2", H2ROWS=300000)
set -u
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
export LC_ALL=C
FAILURES=()
R=${BENCH_RUNS:-5}
OUT=build/bench
W=$OUT/redact
mkdir -p "$W" "$OUT/java"
bench_heapsh redact src/hprof/redact.c src/shell/redact_cmd.c
DUMPS=${DUMPS:-big1 big2 h2}
for n in $DUMPS; do
	d=$OUT/$n.hprof
	if [ "$n" = h2 ] && [ ! -s "$d" ]; then
		[ -s /usr/share/java/h2.jar ] || { echo "bench/redact.sh: h2 needs libh2-java" >&2; exit 2; }
		javac -nowarn -cp /usr/share/java/h2.jar -d "$OUT/java" bench/java/H2Leak.java || exit 2
		coproc H2 { exec java -Xmx2g -cp "/usr/share/java/h2.jar:$OUT/java" H2Leak "${H2ROWS:-300000}" 2000 2>"$W/h2.err"; }
		read -r word pid <&"${H2[0]}"
		[ "$word" = ready ] || { echo "bench/redact.sh: H2Leak did not start" >&2; exit 2; }
		sleep 10	# a few thousand operations: the leak has begun
		jcmd "$pid" GC.heap_dump "$PWD/$d" >/dev/null || exit 2
		exec {H2[1]}>&-
		wait "$H2_PID" 2>/dev/null
	elif [ ! -s "$d" ]; then
		javac -d "$OUT/java" bench/java/BigHeap.java || exit 2
		echo "making $d (BigHeap SCALE ${n#big}, 10-20 s)"
		java -Xmx4g -cp "$OUT/java" BigHeap "$d" "${n#big}" || exit 2
	fi
done

# timed NAME CMD...: run CMD under /usr/bin/time; append "wall rss_kb" to $W/NAME.t
timed() {
	local name=$1
	shift
	/usr/bin/time -f '%e %M' -o "$W/time.tmp" "$@" 2>"$W/$name.err" || {
		FAILURES+=("$name: exit $? ($(tail -1 "$W/$name.err"))")
	}
	cat "$W/time.tmp" >>"$W/$name.t"
}

echo "heapsh: $BIN_ID"
echo "| dump | command | wall s median (min-max) | MB/s | ratio to gzip -1 (median of rounds) | peak RSS |"
echo "|---|---|---|---|---|---|"
for n in $DUMPS; do
	d=$OUT/$n.hprof
	mb=$(awk -v b="$(stat -c %s "$d")" 'BEGIN { printf "%.0f", b / 1e6 }')
	rm -f "$W"/*.t
	cat "$d" >/dev/null	# the page cache, as for every round after
	for ((i = 0; i < R; i++)); do
		timed redact "$HS" --redact "$d" "$W/$n-red.hprof"
		timed gzip sh -c "gzip -1 -c '$d' > '$W/$n.gz'"
		timed redactz "$HS" --redact "$d" "$W/$n-red.hprof.gz"
		timed redactzz "$HS" --redact "$W/$n.gz" "$W/$n-red2.hprof.gz"
	done
	for c in redact redactz redactzz gzip; do
		case $c in
		redact) what="heapsh --redact $n.hprof OUT.hprof" ;;
		redactz) what="heapsh --redact $n.hprof OUT.hprof.gz" ;;
		redactzz) what="heapsh --redact $n.hprof.gz OUT.hprof.gz" ;;
		gzip) what="gzip -1 -c $n.hprof > OUT.gz" ;;
		esac
		med=$(cut -d' ' -f1 "$W/$c.t" | median)
		lo=$(cut -d' ' -f1 "$W/$c.t" | sort -n | head -1)
		hi=$(cut -d' ' -f1 "$W/$c.t" | sort -n | tail -1)
		rss=$(cut -d' ' -f2 "$W/$c.t" | sort -n | tail -1)
		ratio=$(paste -d' ' "$W/$c.t" "$W/gzip.t" | awk '$3 > 0 { print $1 / $3 }' | median)
		printf '| %s | `%s` | %s (%s-%s) | %.0f | %.2f | %.1f MB |\n' "$n" "$what" "$med" "$lo" "$hi" \
			"$(awk -v m="$mb" -v s="$med" 'BEGIN { print (s > 0 ? m / s : 0) }')" "$ratio" \
			"$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
	done
	a=$("$HS" --no-index --format csv -c ':histogram' "$d" | md5sum)
	b=$("$HS" --no-index --format csv -c ':histogram' "$W/$n-red.hprof" | md5sum)
	[ "$a" = "$b" ] || FAILURES+=("$n: the copy's histogram is not the dump's")
	rm -f "$W/$n-red.hprof" "$W/$n-red.hprof.gz" "$W/$n-red2.hprof.gz" "$W/$n.gz"
done
failures_md
[ ${#FAILURES[@]} -eq 0 ]
