# t_gzip.sh - dumps written by jcmd from a running JVM, plain and -gz=1,
# open the same way and hold the same objects.
G=$T/gz
mkdir -p "$G"
rm -f "$G"/live.hprof "$G"/live.hprof.gz
coproc KH { exec java -cp "$JAVA_OUT" KnownHeap wait; }
read -r -t 60 word pid <&"${KH[0]}"
if [ "${word:-}" != ready ]; then
	fail "KnownHeap wait mode started" "got '${word:-} ${pid:-}'"
else
	jcmd "$pid" GC.heap_dump "$PWD/$G/live.hprof" >/dev/null
	jcmd "$pid" GC.heap_dump -gz=1 "$PWD/$G/live.hprof.gz" >/dev/null
	echo quit >&"${KH[1]}"
	wait "$KH_PID" 2>/dev/null
	check "jcmd -gz=1 wrote gzip" "1f8b" "$(head -c 2 "$G/live.hprof.gz" | od -An -tx1 | tr -d ' \n')"
	P=$($HEAPSH --format csv -c ':histogram' "$G/live.hprof")
	Z=$($HEAPSH --format csv -c ':histogram' "$G/live.hprof.gz")
	for c in Order Leaf Shared Owner CycleNode Measure Child Holder; do
		check "gzip and plain agree on $c" "$(csv_row "$P" $c)" "$(csv_row "$Z" $c)"
	done
	check "jcmd dump: Order count" "Order,1000,40000" "$(csv_row "$Z" Order)"
	check_contains "info says gzip" "gzip" "$($HEAPSH --format csv -c ':info' "$G/live.hprof.gz" | grep '^format')"
fi
