# t_dynsize.sh - dynamic sizes through the shell: :dynsize, :top, :graphstats,
# :sizediff, it.dynamic_size and it.dynamic_size_est, the index cache and bad
# input, on the heap of tests/java/DynamicHeap.java (and KnownHeap's facts).
# An expected dynamic size is the sum of the shallow sizes heapsh reports for
# exactly the objects the Java program made reachable from that object (its
# KNOWN FACTS); no byte count of the JVM's object layout is written here.
DZ=$T/dynsize
mkdir -p "$DZ" "$JAVA_OUT/dynamic"
DZD=$DZ/dynamic.hprof
rm -f "$DZD" "$DZD.hsidx"
javac -d "$JAVA_OUT/dynamic" tests/java/DynamicHeap.java &&
	java -cp "$JAVA_OUT/dynamic" DynamicHeap dump "$DZD"
check_status "DynamicHeap dumps its heap" 0 $?

# dz CMD: one command on the DynamicHeap dump, csv. --no-index: every run
# starts with nothing computed (the index cache has its own checks below).
# dzs: the commands on stdin, one session.
dz() { $HEAPSH --no-index --format csv -c "$1" "$DZD"; }
dzs() { $HEAPSH --no-index --format csv "$DZD"; }
dz_size() { dz ":show $1" | awk -F, '$1 == "shallow size" { print $2 }'; }
dz_ref() { dz ":refs $1" | awk -F, -v f="$2" '$1 == f { print $2; exit }'; }
dz_dyn() { dz ":dynsize $1" | awk -F, 'NR == 2 { print $5 }'; }
dz_ret() { dz ":dynsize $1" | awk -F, 'NR == 2 { print $4 }'; }
dz_static() { dz ":show $DZH" | awk -F, -v f="$1" '$1 == f && $2 == "object" { split($3, a, " "); print a[1] }'; }
# dz_sum FILTER: the shallow bytes of the objects the query filter keeps.
dz_sum() { dz "objects.filter([it | $1]).sum([o | o.size])" | tail -1; }
# dz_first FILTER: the id of the first object the query filter keeps.
dz_first() { dz "objects.first([it | $1])" | cut -d' ' -f1; }
# dz_sumsizes ID...: the shallow sizes of the objects, added up.
dz_sumsizes() { local s=0 v; for v in "$@"; do s=$((s + $(dz_size "$v"))); done; echo $s; }
DZH=$(dz ':classes DynamicHeap' | awk -F, 'NR == 2 { print $1 }')
check_contains "class DynamicHeap found" "0x" "$DZH"

# ---- the thesis's figure 2.3: a buffer and an analysis list share 100 Data ----
FIG23=$(dz_static figure23)
BUF=$(dz_ref "$FIG23" buffer)
AL=$(dz_ref "$FIG23" analysis)
SLOTS=$(dz_ref "$BUF" slots)
ELEMS=$(dz_ref "$AL" elements)
DATA=$(dz_sum 'it is Data')
DATA_IDS=$(dz 'objects.filter([it | it is Data])' | awk -F, 'NR > 1 { print $1 }' | sort)
check "100 Data" 100 "$(printf '%s\n' "$DATA_IDS" | grep -c '^0x')"
check "Buffer.slots holds exactly the 100 Data" "$DATA_IDS" \
	"$(dz ":refs $SLOTS" | awk -F, 'NR > 1 { print $2 }' | sort)"
check "AnalysisList.elements holds exactly the same 100 Data" "$DATA_IDS" \
	"$(dz ":refs $ELEMS" | awk -F, 'NR > 1 { print $2 }' | sort)"
EXP_BUF=$(( $(dz_sumsizes "$BUF" "$SLOTS") + DATA ))
EXP_AL=$(( $(dz_sumsizes "$AL" "$ELEMS") + DATA ))
EXP_UNION=$(( $(dz_sumsizes "$BUF" "$AL" "$SLOTS" "$ELEMS") + DATA ))
check "fig 2.3: dynamic(Buffer) = Buffer + Data[100] + 100 Data" "$EXP_BUF" "$(dz_dyn "$BUF")"
check "fig 2.3: dynamic(AnalysisList) = AnalysisList + Object[100] + 100 Data" "$EXP_AL" "$(dz_dyn "$AL")"
check "fig 2.3: AnalysisList retains only itself and its array" "$(dz_sumsizes "$AL" "$ELEMS")" "$(dz_ret "$AL")"
R=$(dz_ret "$BUF")
if [ "$R" -lt "$DATA" ]; then ok "fig 2.3: Buffer retains less than the shared Data ($R < $DATA)"
else fail "fig 2.3: Buffer retains less than the shared Data" "retained $R, Data $DATA"; fi
check "fig 2.3: dynamic(Figure23) = Figure23 + the union of both (the Data once)" \
	"$(( $(dz_size "$FIG23") + EXP_UNION ))" "$(dz_dyn "$FIG23")"
DATA_ROWS=$(dz ':dynsize Data --top 1000')
check "dynsize Data: 100 rows, each reaching only itself" "100 100" \
	"$(printf '%s\n' "$DATA_ROWS" | awk -F, 'NR > 1 { n++; if ($5 == $3) m++ } END { print n + 0, m + 0 }')"
check_contains "dynsize Data: union line" "all 100 instances of Data together reach $DATA bytes (exact)" \
	"$($HEAPSH --no-index -c ':dynsize Data' "$DZD")"
check_contains "dynsize Buffer: union line is its dynamic size" \
	"the one instance of Buffer reaches $EXP_BUF bytes (exact)" "$($HEAPSH --no-index -c ':dynsize Buffer' "$DZD")"
check_contains "dynsize AnalysisList: union line is its dynamic size" \
	"the one instance of AnalysisList reaches $EXP_AL bytes (exact)" "$($HEAPSH --no-index -c ':dynsize AnalysisList' "$DZD")"
check_contains "dynsize 'Data*' (Data and Data[]): union counts each Data once" \
	"all 101 instances of 2 classes matching Data* together reach $(( DATA + $(dz_size "$SLOTS") )) bytes (exact)" \
	"$($HEAPSH --no-index -c ':dynsize Data*' "$DZD")"

# ---- the thesis's figure 4.11: A -> B, A -> D, B -> C, B -> D ----
FA=$(dz_static figA)
FB=$(dz_ref "$FA" b)
FD=$(dz_ref "$FA" d)
FC=$(dz_ref "$FB" c)
check "fig 4.11: B.d is A.d" "$FD" "$(dz_ref "$FB" d)"
check "fig 4.11: dynamic(A) = A + B + C + D (D once)" "$(dz_sumsizes "$FA" "$FB" "$FC" "$FD")" "$(dz_dyn "$FA")"
check "fig 4.11: dynamic(B) = B + C + D" "$(dz_sumsizes "$FB" "$FC" "$FD")" "$(dz_dyn "$FB")"
check "fig 4.11: dynamic(C) = C" "$(dz_size "$FC")" "$(dz_dyn "$FC")"
check "fig 4.11: dynamic(D) = D" "$(dz_size "$FD")" "$(dz_dyn "$FD")"
check_contains "fig 4.11: :dynsize Fig? (A, B, C, D together) reach A + B + C + D" \
	"all 4 instances of 4 classes matching Fig? together reach $(dz_sumsizes "$FA" "$FB" "$FC" "$FD") bytes (exact)" \
	"$($HEAPSH --no-index -c ':dynsize Fig?' "$DZD")"
check "fig 4.11: B retains B + C (not the shared D)" "$(dz_sumsizes "$FB" "$FC")" "$(dz_ret "$FB")"

# ---- a cycle of 5000 Rings with a RingTail hanging off ring 2500 ----
RINGS=$(dz 'objects.filter([it | it is Ring]).sort_by([o | o.n])' | awk -F, 'NR > 1 { print $1 }')
check "5000 Rings" 5000 "$(printf '%s\n' "$RINGS" | grep -c '^0x')"
R0=$(printf '%s\n' "$RINGS" | sed -n 1p)
RMID=$(printf '%s\n' "$RINGS" | sed -n 2501p)
RLAST=$(printf '%s\n' "$RINGS" | sed -n 5000p)
check "the ring starts at static DynamicHeap.ring" "$R0" "$(dz_static ring)"
check "ring 4999.next is ring 0" "$R0" "$(dz_ref "$RLAST" next)"
RT=$(dz_ref "$RMID" tail)
RTD=$(dz_ref "$RT" data)
EXP_RING=$(( $(dz_sum 'it is Ring') + $(dz_sumsizes "$RT" "$RTD") ))
check "cycle: dynamic(ring 0) = 5000 Rings + RingTail + byte[100]" "$EXP_RING" "$(dz_dyn "$R0")"
check "cycle: dynamic(ring 2500) is the same" "$EXP_RING" "$(dz_dyn "$RMID")"
check "cycle: dynamic(ring 4999) is the same" "$EXP_RING" "$(dz_dyn "$RLAST")"
check "cycle: all 5000 Rings have that dynamic size (--exact)" "5000 $EXP_RING" \
	"$(dz ':dynsize Ring --exact --top 5000' | awk -F, 'NR > 1 { n++; v[$5]++ } END { for (k in v) print n, k }')"
check_contains "cycle: :dynsize says the ring is one SCC" "it is in a cycle of 5000 objects" \
	"$($HEAPSH --no-index -c ":dynsize $RMID" "$DZD")"
check_contains "cycle: :dynsize Ring: the 5000 together reach what one reaches" \
	"all 5000 instances of Ring together reach $EXP_RING bytes (exact)" "$($HEAPSH --no-index -c ':dynsize Ring' "$DZD")"
check "cycle: the RingTail reaches only its byte[100]" "$(dz_sumsizes "$RT" "$RTD")" "$(dz_dyn "$RT")"

# ---- a chain of 10000 Links (deep: no recursion in the engine) ----
LH=$(dz_static chain)
LMID=$(dz_first 'it is Link and it.n = 5000')
LLAST=$(dz_first 'it is Link and it.n = 9999')
check "chain: the head is link 0" "$LH" "$(dz_first 'it is Link and it.n = 0')"
EXP_LH=$(dz_sum 'it is Link')
check "chain: dynamic(head) = all 10000 Links" "$EXP_LH" "$(dz_dyn "$LH")"
check "chain: dynamic(link 5000) = links 5000..9999" "$(dz_sum 'it is Link and it.n >= 5000')" "$(dz_dyn "$LMID")"
check "chain: link 5000 reaches half the chain" "$((EXP_LH / 2))" "$(dz_dyn "$LMID")"
check "chain: dynamic(last link) = itself" "$(dz_size "$LLAST")" "$(dz_dyn "$LLAST")"
check "chain: every link n reaches 10000 - n Links (query)" 10000 \
	"$(dz 'objects.filter([it | it is Link]).count([o | o.dynamic_size = (10000 - o.n) * o.size])' | tail -1)"

# ---- a ladder of 300 Rungs: n -> n+1, n -> n+2 (estimates are used here) ----
check "ladder: every rung n reaches 300 - n Rungs (query)" 300 \
	"$(dz 'objects.filter([it | it is Rung]).count([o | o.dynamic_size = (300 - o.n) * o.size])' | tail -1)"
RUNGS=$(dz 'objects.filter([it | it is Rung]).sort_by([o | o.n])' | awk -F, 'NR > 1 { print $1 }')
RUNG0=$(printf '%s\n' "$RUNGS" | sed -n 1p)
RUNG5=$(printf '%s\n' "$RUNGS" | sed -n 6p)
check "ladder: dynamic(rung 0) = all 300 Rungs" "$(dz_sum 'it is Rung')" "$(dz_dyn "$RUNG0")"
check "ladder: dynamic(rung 5) = rungs 5..299" "$(dz_sum 'it is Rung and it.n >= 5')" "$(dz_dyn "$RUNG5")"
check_contains "ladder: :dynsize Rung: the 300 together reach all 300" \
	"all 300 instances of Rung together reach $(dz_sum 'it is Rung') bytes (exact)" "$($HEAPSH --no-index -c ':dynsize Rung' "$DZD")"

# ---- statics through a Class object: ClassHolder.k = Payloaded.class ----
CH=$(dz_static classHolder)
PLAIN=$(dz_static plain)
PC=$(dz ':classes Payloaded' | awk -F, 'NR == 2 { print $1 }')
PAY=$(dz_ref "$PC" "static payload")
check "ClassHolder.k is the class object of Payloaded" "$PC" "$(dz_ref "$CH" k)"
check_contains "Payloaded.payload is the byte[5000]" "byte[]" "$(dz ":show $PAY" | grep '^class,')"
check "class holder: dynamic = ClassHolder + class Payloaded + its static byte[5000]" \
	"$(dz_sumsizes "$CH" "$PC" "$PAY")" "$(dz_dyn "$CH")"
check "class object: dynamic(class Payloaded) = itself + its static payload" \
	"$(dz_sumsizes "$PC" "$PAY")" "$(dz_dyn "$PC")"
check "plain Payloaded: dynamic = itself (no object -> class link)" "$(dz_size "$PLAIN")" "$(dz_dyn "$PLAIN")"

# ---- it.dynamic_size equals :dynsize ----
for q in "Buffer:$BUF" "AnalysisList:$AL" "Figure23:$FIG23" "FigA:$FA" "FigB:$FB" "FigC:$FC" \
	 "FigD:$FD" "RingTail:$RT" "ClassHolder:$CH" "Payloaded:$PLAIN" \
	 "Ring and it.n = 2500:$RMID" "Link and it.n = 5000:$LMID" "Rung and it.n = 5:$RUNG5"; do
	check "query it.dynamic_size = :dynsize (${q%%:*})" "$(dz_dyn "${q#*:}")" \
		"$(dz "objects.first([it | it is ${q%%:*}]).dynamic_size" | tail -1)"
done

# ---- dynamic_size_est and the ~ marks ----
# dz_marks CLASS: one session: the query's estimates first (nothing computed
# exactly yet), then :top's rows, estimates marked ~, then the exact sizes.
# Prints "rows=N unmarked=U unmarked_ok=U' marked=M consistent=M' in25=A
# in50=B": unmarked_ok counts unmarked rows whose value, dynamic_size_est and
# dynamic_size agree; consistent, marked rows showing dynamic_size_est.
dz_marks() {
	printf '%s\n' 'DZR : struct id : int, v : int end' \
		"objects.filter([it | it is $1]).map([o | struct DZR o.id, o.dynamic_size_est end])" \
		":top --by shallow --class $1 --top 1000000" \
		"objects.filter([it | it is $1]).map([o | struct DZR o.id, o.dynamic_size end])" |
	dzs | python3 -c '
import sys
blocks, cur = [], None
for line in sys.stdin.read().split("\n"):
    if line in ("id,v", "id,class,shallow_bytes,retained_bytes,dynamic_bytes"):
        cur = []; blocks.append(cur)
    elif line and cur is not None:
        cur.append(line.split(","))
est = {"0x%x" % int(r[0]): int(r[1]) for r in blocks[0]}
exact = {"0x%x" % int(r[0]): int(r[1]) for r in blocks[2]}
c = dict(rows=0, unmarked=0, unmarked_ok=0, marked=0, consistent=0, in25=0, in50=0)
for r in blocks[1]:
    c["rows"] += 1
    i, v = r[0], r[4]
    if v.startswith("~"):
        c["marked"] += 1
        c["consistent"] += int(v[1:]) == est[i]
        c["in25"] += abs(est[i] / exact[i] - 1) <= 0.25
        c["in50"] += abs(est[i] / exact[i] - 1) <= 0.50
    else:
        c["unmarked"] += 1
        c["unmarked_ok"] += int(v) == est[i] == exact[i]
print(" ".join("%s=%d" % kv for kv in c.items()))
'
}
# dz_mv KEY: the value of KEY=N in $M.
dz_mv() { printf '%s\n' "$M" | tr ' ' '\n' | awk -F= -v k="$1" '$1 == k { print $2 }'; }
for cn in Buffer:1 AnalysisList:1 FigB:1 Figure23:1 FigA:1 ClassHolder:1 Payloaded:1 Data:100 \
	  Ring:5000 Link:10000 Rung:300; do
	cls=${cn%:*}
	M=$(dz_marks "$cls")
	check "dynamic_size_est: $cls: ${cn#*:} rows; unmarked values exact, marked ones the estimate" \
		"${cn#*:} ${cn#*:}" "$(( $(dz_mv unmarked_ok) + $(dz_mv consistent) )) $(dz_mv rows)"
	case $cls in
	Buffer | AnalysisList | FigB)
		# Within 25% with probability 95.4% (docs/engine.md). The estimator
		# is seeded by component numbers, so this is deterministic for a
		# given JDK build and flags; another heap layout redraws it.
		check "dynamic_size_est: $cls (shared reach) is an estimate, within 25%" \
			"rows=1 marked=1 in25=1" "rows=$(dz_mv rows) marked=$(dz_mv marked) in25=$(dz_mv in25)" ;;
	Rung)
		if [ "$(dz_mv marked)" -ge 200 ]; then ok "dynamic_size_est: most rungs are estimated ($(dz_mv marked))"
		else fail "dynamic_size_est: most rungs are estimated" "$M"; fi
		# The rungs reach nested sets, so their errors are correlated: how
		# many lie beyond 25% depends on the component numbering (none with
		# JDK 17's default flags; up to 86 of 297 in other layouts tried),
		# but none went beyond 50%, the bound with probability 99.9%.
		check "dynamic_size_est: every rung's estimate within 50%" "$(dz_mv marked)" "$(dz_mv in50)" ;;
	*)
		check "dynamic_size_est: $cls: the engine knows every size exactly (no ~)" 0 "$(dz_mv marked)" ;;
	esac
done

# Table mode: ~ only where the engine does not know the value exactly.
RT_TABLE=$($HEAPSH --no-index -c ':dynsize Rung --top 300' "$DZD")
check_contains "table: estimates are marked ~" "~" "$RT_TABLE"
check_contains "table: the estimate note" "~ marks an estimate" "$RT_TABLE"
check_contains "table: rung 5 is an estimate (~) at first" "~" \
	"$(printf '%s\n' "$RT_TABLE" | awk -v id="$RUNG5" '$1 == id { print $5 }')"
check "table: rung 0 (dominates all it reaches) is exact, not ~" "$(dz_sum 'it is Rung')" \
	"$(printf '%s\n' "$RT_TABLE" | awk -v id="$RUNG0" '$1 == id { print $5 }')"
RT_TABLE=$(printf ':dynsize %s\n:dynsize Rung --top 300\n' "$RUNG5" | $HEAPSH --no-index "$DZD")
check "table: rung 5 is not ~ once :dynsize ID computed it" "$(dz_sum 'it is Rung and it.n >= 5')" \
	"$(printf '%s\n' "$RT_TABLE" | awk -v id="$RUNG5" '$1 == id { print $5 }' | tail -1)"
RT_TABLE=$($HEAPSH --no-index -c ':dynsize Rung --exact --top 300' "$DZD")
if printf '%s\n' "$RT_TABLE" | grep -q '~'; then fail "table: :dynsize Rung --exact shows no ~" "$RT_TABLE"
else ok "table: :dynsize Rung --exact shows no ~"; fi
check "--exact: rungs largest first, rung n = (300 - n) Rungs" \
	"$(dz 'objects.filter([it | it is Rung]).sort_by([o | o.n]).map([o | (300 - o.n) * o.size])' | tail -n +2)" \
	"$(dz ':dynsize Rung --exact --top 300' | awk -F, 'NR > 1 { print $5 }')"
check "--exact: rungs in ladder order" "$RUNGS" "$(dz ':dynsize Rung --exact --top 300' | awk -F, 'NR > 1 { print $1 }')"

# ---- :top ----
# dz_ge DUMP TOP_CSV...: for every row of the :top outputs, its exact dynamic
# size (:dynsize ID) against its retained size. Dynamic >= retained, except
# that what an object retains only through class links (a class object held
# by its instances' object -> class link, and what that class retains) is not
# reached (docs/engine.md): each row is allowed the retained sizes of the
# class objects it dominates (the topmost ones, found with :idom); class
# objects themselves are skipped (their retained size counts resolved
# constants, which dynamic size does not follow). Prints
# "rows=N exact_same=E violations=V" and the violations.
dz_ge() {
	local dump=$1 rows
	shift
	rows=$(printf '%s\n' "$@" | grep '^0x')
	printf '%s\n' "$rows" | cut -d, -f1 | sed 's/^/:dynsize /' |
		$HEAPSH --no-index --format csv "$dump" > "$DZ/ge_exact.csv"
	$HEAPSH --no-index --format csv -c 'objects.filter([it | it.kind = "class"])' "$dump" |
		awk -F, 'NR > 1 { print ":idom " $1 }' |
		$HEAPSH --no-index --format csv "$dump" > "$DZ/ge_idom.csv" 2>/dev/null
	printf '%s\n' "$rows" | python3 -c '
import sys
d = sys.argv[1]
exact = {}
for l in open(d + "/ge_exact.csv"):
    r = l.rstrip("\n").split(",")
    if r[0].startswith("0x"):
        exact[r[0]] = int(r[-1])
allow, chain = {}, []
for l in list(open(d + "/ge_idom.csv")) + ["depth,"]:
    r = l.rstrip("\n").split(",")
    if r[0] == "depth":
        for v in chain[1:]:
            allow[v[1]] = allow.get(v[1], 0) + int(chain[0][4])
            if v[2].startswith("class "):
                break
        chain = []
    else:
        chain.append(r)
n = same = 0
bad = []
for l in sys.stdin:
    r = l.rstrip("\n").split(",")
    n += 1
    shown = r[4]
    if not shown.startswith("~"):
        same += int(shown) == exact[r[0]]
    else:
        same += 1
    # A class object retains what the HotSpot pseudo-statics (<resolved_references>)
    # hold, which dynamic size does not follow (docs/engine.md).
    if r[1].startswith("class "):
        continue
    if exact[r[0]] < int(r[3]) - allow.get(r[0], 0):
        bad.append("%s %s retained %s dynamic %d allowed %d" % (r[0], r[1], r[3], exact[r[0]], allow.get(r[0], 0)))
print("rows=%d exact_same=%d violations=%d" % (n, same, len(bad)))
print("\n".join(bad))
' "$DZ"
}
TOPD=$(dz ':top --by dynamic --top 50')
TOPR=$(dz ':top --by retained --top 50')
check "top --by dynamic: csv header" "id,class,shallow_bytes,retained_bytes,dynamic_bytes" "$(printf '%s\n' "$TOPD" | head -1)"
check "top --by dynamic: 50 rows, all exact, largest first" "50 0 sorted" \
	"$(printf '%s\n' "$TOPD" | awk -F, 'NR > 1 { n++; if ($5 ~ /~/) e++; if (NR > 2 && $5 + 0 > p) u++; p = $5 + 0 }
		END { print n + 0, e + 0, u ? "unsorted" : "sorted" }')"
check "top --by dynamic: the largest is the chain head or larger" 1 \
	"$(printf '%s\n' "$TOPD" | awk -F, -v h="$EXP_LH" 'NR == 2 { print ($5 >= h) }')"
check "top --by retained: 50 rows, largest retained first" "50 sorted" \
	"$(printf '%s\n' "$TOPR" | awk -F, 'NR > 1 { n++; if (NR > 2 && $4 + 0 > p) u++; p = $4 + 0 }
		END { print n + 0, u ? "unsorted" : "sorted" }')"
check "top --by retained: the first is the largest retained size of all" \
	"$(dz 'objects.max([o | o.retained])' | tail -1)" "$(printf '%s\n' "$TOPR" | awk -F, 'NR == 2 { print $4 }')"
GE=$(dz_ge "$DZD" "$TOPD" "$TOPR")
check "top: dynamic >= retained for all 100 rows (less what only class links retain)" \
	"rows=100 exact_same=100 violations=0" "$GE"
check "top --by retained: dynamic sizes shown are estimates or exact, never ~0" "" \
	"$(printf '%s\n' "$TOPR" | awk -F, 'NR > 1 && $5 == "~0"' | head -3)"
TOPS=$(dz ':top --by shallow --top 5')
check "top --by shallow: 5 rows, largest shallow first" "5 sorted" \
	"$(printf '%s\n' "$TOPS" | awk -F, 'NR > 1 { n++; if (NR > 2 && $3 + 0 > p) u++; p = $3 + 0 }
		END { print n + 0, u ? "unsorted" : "sorted" }')"
check "top --by shallow: the first is the largest shallow size of all" \
	"$(dz 'objects.max([o | o.size])' | tail -1)" "$(printf '%s\n' "$TOPS" | awk -F, 'NR == 2 { print $3 }')"
check "top --by shallow --class Rung: 5 Rungs" "5 Rung" \
	"$(dz ':top --by shallow --class Rung --top 5' | awk -F, 'NR > 1 { n++; c[$2] = 1 } END { for (k in c) printf "%d %s", n, k }')"
check "top --by dynamic --class Link --top 3: links 0, 1, 2 exactly" \
	"$LH,$EXP_LH $(dz_first 'it is Link and it.n = 1'),$(dz_sum 'it is Link and it.n >= 1') $(dz_first 'it is Link and it.n = 2'),$(dz_sum 'it is Link and it.n >= 2')" \
	"$(dz ':top --by dynamic --class Link --top 3' | awk -F, 'NR > 1 { printf "%s%s,%s", (NR > 2 ? " " : ""), $1, $5 }')"
check "top --by retained --class Figure23: only it, all it reaches" "$FIG23,Figure23,$(dz_dyn "$FIG23")" \
	"$(dz ':top --by retained --class Figure23' | awk -F, 'NR > 1 { print $1 "," $2 "," $5 }')"
check "top --class Fig? (a glob): FigA..FigD only" "FigA FigB FigC FigD" \
	"$(dz ':top --by shallow --class Fig? --top 100' | awk -F, 'NR > 1 { print $2 }' | sort | tr '\n' ' ' | sed 's/ $//')"
# Estimates in :top --by shallow|retained (nothing else computed first).
check "top --by shallow --class Rung: each dynamic size within 50% of its (300 - n) Rungs" 300 \
	"$(dz ':top --by shallow --class Rung --top 300' | awk -F, -v ids="$(printf '%s\n' "$RUNGS" | tr '\n' ' ')" \
		-v unit="$(dz_size "$RUNG0")" '
		BEGIN { n = split(ids, a, " "); for (k = 1; k <= n; k++) want[a[k]] = (301 - k) * unit }
		NR > 1 { v = $5; sub(/^~/, "", v); v += 0; if (v >= want[$1] * 0.5 && v <= want[$1] * 1.5) c++ }
		END { print c + 0 }')"

# ---- :graphstats ----
GS=$(dz ':graphstats')
dz_gs() { printf '%s\n' "$GS" | awk -F, -v k="$1" '$1 == k { print $2 }'; }
DZINFO=$(dz ':info')
check "graphstats: nodes = objects of :info" "$(printf '%s\n' "$DZINFO" | awk -F, '$1 == "objects" { print $2 }')" "$(dz_gs nodes)"
check "graphstats: classes = class objects of :info" \
	"$(printf '%s\n' "$DZINFO" | awk -F, '$1 == "class objects" { print $2 }')" "$(dz_gs classes)"
check "graphstats: objects = nodes - classes" "$(( $(dz_gs nodes) - $(dz_gs classes) ))" "$(dz_gs objects)"
check "graphstats: gc roots = :info" "$(printf '%s\n' "$DZINFO" | awk -F, '$1 == "gc roots" { print $2 }')" "$(dz_gs 'gc roots')"
GSOK=$(awk -v n="$(dz_gs nodes)" -v s="$(dz_gs sccs)" -v nt="$(dz_gs 'non-trivial sccs')" -v l="$(dz_gs 'largest scc')" \
	-v h="$(dz_gs 'scc dag height')" -v dh="$(dz_gs 'dominator tree height')" -v dp="$(dz_gs 'dominating articulation points')" \
	-v avg="$(dz_gs 'average non-trivial scc size')" 'BEGIN {
	if (!(s <= n)) print "sccs " s " > nodes " n
	if (!(s <= n - 4999)) print "sccs " s " > nodes - 4999 (the ring is one)"
	if (!(nt >= 1)) print "non-trivial sccs " nt
	if (!(l >= 5000)) print "largest scc " l " < 5000 (the ring)"
	if (!(avg >= 2 && avg <= l)) print "average non-trivial scc size " avg
	if (!(h >= 10000)) print "scc dag height " h " < 10000 (the chain)"
	if (!(dh >= 10000)) print "dominator tree height " dh " < 10000 (the chain)"
	if (!(dp >= 9999)) print "dominating articulation points " dp " < 9999 (the chain links)"
	}')
check "graphstats: sccs <= nodes - 4999, a non-trivial scc, largest >= 5000, heights >= 10000, DAPs >= 9999" "" "$GSOK"
check "graphstats: 18 statistics" 18 "$(printf '%s\n' "$GS" | tail -n +2 | grep -c .)"

# ---- :sizediff ----
# dz_buckets: objects per bucket of dynamic - retained (one value a line), in
# :sizediff's order: to 1 KB, 1-10 KB, 10-100 KB, 100-1000 KB, 1-10 MB, 10-25,
# 25-50, 50-75, 75-100 MB, greater.
dz_buckets() {
	awk '/^-?[0-9]+$/ { d = $1 < 0 ? 0 : $1
		split("1024 10240 102400 1024000 10485760 26214400 52428800 78643200 104857600", u, " ")
		for (b = 1; b <= 9 && d >= u[b] + 0; b++) ;
		c[b]++ }
		END { for (b = 1; b <= 10; b++) print c[b] + 0 }'
}
NOBJ=$(printf '%s\n' "$DZINFO" | awk -F, '$1 == "objects" { print $2 }')
SD=$(printf '%s\n' ':sizediff' 'objects.map([o | o.dynamic_size_est - o.retained])' | dzs)
SDT=$(printf '%s\n' "$SD" | awk -F, 'NR > 1 && NF == 3')
check "sizediff: 10 buckets" 10 "$(printf '%s\n' "$SDT" | grep -c .)"
check "sizediff: the objects add up to the objects of :info" "$NOBJ" \
	"$(printf '%s\n' "$SDT" | awk -F, '{ s += $2 } END { print s }')"
check "sizediff: exact <= objects in every bucket" "" "$(printf '%s\n' "$SDT" | awk -F, '$3 > $2')"
check "sizediff: objects per bucket = dynamic_size_est - retained of every object, bucketed" \
	"$(printf '%s\n' "$SD" | dz_buckets)" "$(printf '%s\n' "$SDT" | cut -d, -f2)"
SDE=$(printf '%s\n' ':sizediff --exact' 'objects.map([o | o.dynamic_size - o.retained])' | dzs)
SDET=$(printf '%s\n' "$SDE" | awk -F, 'NR > 1 && NF == 3')
check "sizediff --exact: the objects add up to the objects of :info" "$NOBJ" \
	"$(printf '%s\n' "$SDET" | awk -F, '{ s += $2 } END { print s }')"
check "sizediff --exact: exact = objects in every bucket" "" "$(printf '%s\n' "$SDET" | awk -F, '$3 != $2')"
check "sizediff --exact: objects per bucket = dynamic_size - retained of every object, bucketed" \
	"$(printf '%s\n' "$SDE" | dz_buckets)" "$(printf '%s\n' "$SDET" | cut -d, -f2)"
EST=$(printf '%s\n' "$SDT" | awk -F, '{ s += $2 - $3 } END { print s }')
if [ "$EST" -ge 297 ]; then ok "sizediff: estimated objects counted ($EST, the rungs among them)"
else fail "sizediff: estimated objects counted" "$SDT"; fi
check_contains "sizediff table: says how many are estimated" "$EST objects are counted by their estimated dynamic size" \
	"$($HEAPSH --no-index -c ':sizediff' "$DZD")"
check "sizediff --exact table: no estimate note" "" "$($HEAPSH --no-index -c ':sizediff --exact' "$DZD" | grep estimated)"

# ---- csv and json ----
dz_csv() {
	$HEAPSH --no-index --format csv -c "$1" "$DZD" | python3 -c '
import csv, sys
rows = list(csv.reader(sys.stdin))
assert rows[0] == sys.argv[1].split(","), rows[0]
assert len(rows) > 1 and all(len(r) == len(rows[0]) for r in rows), rows
print(len(rows) - 1)
' "$2" 2>&1
}
OBJH=id,class,shallow_bytes,retained_bytes,dynamic_bytes
check "csv: :dynsize ID parses" 1 "$(dz_csv ":dynsize $BUF" $OBJH)"
check "csv: :dynsize Rung (estimates) parses" 300 "$(dz_csv ':dynsize Rung --top 300' $OBJH)"
check "csv: :dynsize Ring --exact parses" 5000 "$(dz_csv ':dynsize Ring --exact --top 5000' $OBJH)"
check "csv: :top parses" 25 "$(dz_csv ':top' $OBJH)"
check "csv: :top --by dynamic parses" 10 "$(dz_csv ':top --by dynamic --top 10' $OBJH)"
check "csv: :graphstats parses" 18 "$(dz_csv ':graphstats' statistic,value)"
check "csv: :sizediff parses" 10 "$(dz_csv ':sizediff' dynamic_minus_retained,objects,exact)"
# dz_json CMD: the rows as "id,class,shallow,retained,dynamic" with exact
# numbers as numbers and estimates as "~N" strings, or the parse error.
dz_json() {
	$HEAPSH --no-index --format json -c "$1" "$DZD" | python3 -c '
import json, sys
rows = json.load(sys.stdin)
keys = ["id", "class", "shallow_bytes", "retained_bytes", "dynamic_bytes"]
for r in rows:
    assert list(r) == keys, r
    d = r["dynamic_bytes"]
    assert type(d) is int or (type(d) is str and d[0] == "~" and d[1:].isdigit()), r
    assert type(r["shallow_bytes"]) is int and type(r["retained_bytes"]) is int, r
    print("%s,%s,%d,%d,%s" % (r["id"], r["class"], r["shallow_bytes"], r["retained_bytes"], d))
' 2>&1
}
check "json: :dynsize ID parses, the exact size a number" "$(dz ":dynsize $BUF" | tail -1)" "$(dz_json ":dynsize $BUF")"
check "json: :dynsize Rung parses, estimates as ~N strings" "$(dz ':dynsize Rung --top 300')" \
	"$OBJH
$(dz_json ':dynsize Rung --top 300')"
check "json: :top --by dynamic parses" "$(dz ':top --by dynamic --top 10' | tail -n +2)" "$(dz_json ':top --by dynamic --top 10')"
check "json: :top --by retained parses" "$(dz ':top --by retained --top 10' | tail -n +2)" "$(dz_json ':top --by retained --top 10')"
for c in ':graphstats' ':sizediff' ':sizediff --exact'; do
	check "json: $c parses" ok "$($HEAPSH --no-index --format json -c "$c" "$DZD" |
		python3 -c 'import json, sys; r = json.load(sys.stdin); assert len(r) >= 10; print("ok")' 2>&1)"
done

# ---- KnownHeap's facts ----
dz_kh() { $HEAPSH --no-index --format csv -c "$1" "$KNOWN"; }
dz_kh_size() { dz_kh ":show $1" | awk -F, '$1 == "shallow size" { print $2 }'; }
dz_kh_ref() { dz_kh ":refs $1" | awk -F, -v f="$2" '$1 == f { print $2; exit }'; }
KHC=$(dz_kh ':classes KnownHeap' | awk -F, 'NR == 2 { print $1 }')
dz_kh_static() { dz_kh ":show $KHC" | awk -F, -v f="$1" '$1 == f && $2 == "object" { split($3, a, " "); print a[1] }'; }
KSHARED=$(dz_kh_ref "$(dz_kh_static ownerA)" shared)
KPAY=$(dz_kh_ref "$KSHARED" payload)
for o in ownerA ownerB; do
	OW=$(dz_kh_static $o)
	NAME=$(dz_kh_ref "$OW" name)
	ROW=$(dz_kh ":dynsize $OW" | tail -1)
	check "KnownHeap $o: dynamic = itself + Shared + int[256] + its name String and bytes" \
		"$(( $(dz_kh_size "$OW") + $(dz_kh_size "$KSHARED") + $(dz_kh_size "$KPAY") + $(dz_kh_size "$NAME") + $(dz_kh_size "$(dz_kh_ref "$NAME" value)") ))" \
		"$(printf '%s\n' "$ROW" | cut -d, -f5)"
	check "KnownHeap $o: retained (itself) < dynamic" "$(dz_kh_size "$OW") 1" \
		"$(printf '%s\n' "$ROW" | awk -F, '{ print $4, ($4 < $5) }')"
done
check "KnownHeap: the 3 CycleNodes reach the same, 3 CycleNodes" \
	"3 $(dz_kh ':histogram CycleNode' | awk -F, 'NR == 2 { print $3 }')" \
	"$(dz_kh ':dynsize CycleNode' | awk -F, 'NR > 1 { n++; v[$5]++ } END { for (k in v) print n, k }')"
check "KnownHeap: a CycleNode's dynamic size is 3 times its shallow size" 1 \
	"$(dz_kh ':dynsize CycleNode' | awk -F, 'NR == 2 { print ($5 == 3 * $3) }')"
KLEAVES=$(dz_kh_static leaves)
check "KnownHeap: the leaves ArrayList: dynamic = retained = itself + Object[500] + 500 Leafs" \
	"$(( $(dz_kh_size "$KLEAVES") + $(dz_kh_size "$(dz_kh_ref "$KLEAVES" elementData)") + $(dz_kh ':histogram Leaf' | awk -F, 'NR == 2 { print $3 }') ))" \
	"$(dz_kh ":dynsize $KLEAVES" | awk -F, 'NR == 2 && $4 == $5 { print $5 }')"
check "KnownHeap top: dynamic >= retained for all 100 rows (less what only class links retain)" \
	"rows=100 exact_same=100 violations=0" \
	"$(dz_ge "$KNOWN" "$(dz_kh ':top --by dynamic --top 50')" "$(dz_kh ':top --by retained --top 50')")"

# ---- the index cache ----
IX=$DZ/index
mkdir -p "$IX"
cp "$DZD" "$IX/d.hprof"
rm -f "$IX/d.hprof.hsidx"
IXS=$(printf '%s\n' ":dynsize $BUF" ":dynsize $RUNG5" ':dynsize Rung --top 20' ':graphstats' ':info')
IX1=$(printf '%s\n' "$IXS" | $HEAPSH --format csv "$IX/d.hprof")
IX2=$(printf '%s\n' "$IXS" | $HEAPSH --format csv "$IX/d.hprof")
check_contains "index: the first run computes the engine" 'dynamic-size engine,"computed' "$IX1"
if [ -s "$IX/d.hprof.hsidx" ]; then ok "index: written next to the dump"; else fail "index: written next to the dump"; fi
check_contains "index: the second run reads it" 'dynamic-size engine,"read from the index' "$IX2"
check "index: same :dynsize and :graphstats output" "$(printf '%s\n' "$IX1" | sed '/^property,value$/,$d')" \
	"$(printf '%s\n' "$IX2" | sed '/^property,value$/,$d')"
check_contains "index: the output has estimates (~) to compare" "~" "$IX2"
rm -f "$IX/d.hprof.hsidx"
check_contains "index: rungs are estimated in a new index" "~" "$($HEAPSH -c ':dynsize Rung --top 300' "$IX/d.hprof")"
$HEAPSH -c ':dynsize Rung --exact --top 1' "$IX/d.hprof" >/dev/null
IX3=$(printf '%s\n' ':dynsize Rung --top 300' ':info' | $HEAPSH "$IX/d.hprof")
check_contains "index: the next session reads the index" "read from the index" "$IX3"
check "index: exact sizes from --exact in an earlier session stay exact (no ~)" "" "$(printf '%s\n' "$IX3" | grep '~')"
check "index: and right" "$(dz 'objects.filter([it | it is Rung]).sort_by([o | o.n]).map([o | (300 - o.n) * o.size])' | tail -n +2)" \
	"$($HEAPSH --format csv -c ':dynsize Rung --top 300' "$IX/d.hprof" | awk -F, 'NR > 1 { print $5 }')"
mkdir -p "$DZ/noindex"
cp "$DZD" "$DZ/noindex/d.hprof"
$HEAPSH --no-index -c ':graphstats' "$DZ/noindex/d.hprof" >/dev/null
if [ -e "$DZ/noindex/d.hprof.hsidx" ]; then fail "--no-index: no index file written"; else ok "--no-index: no index file written"; fi

# ---- bad input: a clear error, and the session goes on ----
cat > "$DZ/bad.hsh" <<HSH
:dynsize
"after-1"
:dynsize Buffer --bogus
"after-2"
:dynsize 0x1234
"after-3"
:top --by nonsense
"after-4"
:top --top 0
"after-5"
:top --class NoSuchClass
"after-6"
:dynsize NoSuchClass
"after-7"
:sizediff --top 3
"after-8"
:graphstats extra
"after-9"
:top --top
"after-10"
:dynsize $BUF
HSH
BADOUT=$($HEAPSH --no-index --format csv -f "$DZ/bad.hsh" "$DZD" 2>"$DZ/bad.err"); st=$?
BADERR=$(cat "$DZ/bad.err")
check_status "bad input: exit 2 (a command failed), no crash" 2 "$st"
check "bad input: every next command ran" "$(seq -f 'after-%g' 1 10)
$(dz ":dynsize $BUF" | tail -1)" "$(printf '%s\n' "$BADOUT" | grep -e '^after-' -e '^0x')"
check "bad input: one error per bad command" 10 "$(printf '%s\n' "$BADERR" | grep -c "^heapsh: $DZ/bad.hsh:")"
check_contains ":dynsize with no argument" "bad.hsh:1: usage: :dynsize ID|CLASS" "$BADERR"
check_contains ":dynsize --bogus" "bad.hsh:3: unknown option '--bogus'" "$BADERR"
check_contains ":dynsize of a missing id" "bad.hsh:5: no object with id 0x1234" "$BADERR"
check_contains ":top --by nonsense" "bad.hsh:7: --by takes dynamic, retained or shallow, not 'nonsense'" "$BADERR"
check_contains ":top --top 0" "bad.hsh:9: --top wants a number from 1 to 1000000, not '0'" "$BADERR"
check_contains ":top --class NoSuchClass" "bad.hsh:11: no class matches 'NoSuchClass'" "$BADERR"
check_contains ":dynsize NoSuchClass" "bad.hsh:13: no class matches 'NoSuchClass'" "$BADERR"
check_contains ":sizediff --top" "bad.hsh:15: unknown option '--top'" "$BADERR"
check_contains ":graphstats extra" "bad.hsh:17: usage: :graphstats" "$BADERR"
check_contains ":top --top without a value" "bad.hsh:19: --top wants a value" "$BADERR"
printf '%s\n' ':dynsize 0x10' ':help dynsize' ':top --by dynamic' ':graphstats' ':sizediff --exact' \
	':dynsize Buffer --exact' ':help top' > "$DZ/noheap.hsh"
NOOUT=$($HEAPSH -f "$DZ/noheap.hsh" 2>"$DZ/noheap.err"); st=$?
check_status "no heap open: exit 2, no crash" 2 "$st"
check "no heap open: each command says so" 5 "$(grep -c 'noheap.hsh:[0-9]*: no heap is open' "$DZ/noheap.err")"
check "no heap open: the session goes on (:help runs)" 2 "$(printf '%s\n' "$NOOUT" | grep -c '^usage: :')"
for c in ':dynsize 0x10' ':top' ':graphstats' ':sizediff'; do
	$HEAPSH -c "$c" >/dev/null 2>"$DZ/noheap.err"; st=$?
	check "no heap open: heapsh -c '$c': exit 2 and a message" "2 1" "$st $(grep -c 'no heap is open' "$DZ/noheap.err")"
done
