# t_queries.sh - the query files in queries/ and the data-driven query tests in
# tests/queries/, checked against what tests/java/KnownHeap.java put in the
# heap. Sizes come from the 64-bit HotSpot layout with compressed oops: 12-byte
# header, 4-byte references, 8-byte alignment (Order 40, Leaf 32, Measure 24,
# Holder 16, byte[4096] 4112, String 24, HashMap$Node 32).
Q=$T/queries
mkdir -p "$Q"
# An index left by an earlier dump is stale, and saying so goes to stderr,
# which the checks below want empty: start without one.
rm -f "$KNOWN.hsidx"

# runq NAME FILE: run a query file; stdout in $OUT, stderr in $ERR, status in $ST.
runq() {
	$HEAPSH --format csv -f "$2" "$KNOWN" > "$Q/$1.stdout" 2> "$Q/$1.stderr"
	ST=$?
	OUT=$(cat "$Q/$1.stdout")
	ERR=$(cat "$Q/$1.stderr")
}
# runq_ok NAME FILE: runq, and the run must succeed without messages.
runq_ok() {
	runq "$@"
	check_status "$1: exit 0" 0 "$ST"
	check "$1: nothing on stderr" "" "$ERR"
}
# csv_get CSV KEYCOL KEY COL: column COL of the row whose column KEYCOL is KEY
# (columns named by the CSV's header line).
csv_get() {
	printf '%s\n' "$1" | awk -F, -v kc="$2" -v k="$3" -v c="$4" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col[kc] == k { print $col[c] }'
}
# variant NAME FILE SED_SCRIPT: FILE edited by sed, as $Q/NAME.hq; runq_ok on it.
variant() {
	sed "$3" "$2" > "$Q/$1.hq"
	runq_ok "$1" "$Q/$1.hq"
}

# ---- queries/*.hq: the paper's listings ----

# Listing 1: Measure values 3.1415 and 3.1416 lie in 3.141 .. 3.142.
runq_ok pi_check queries/pi_check.hq
check "pi_check: fault, two matches" "name,fault,matches
all-jvm,true,2" "$OUT"
variant pi_check_none queries/pi_check.hq 's/3\.141 and it\.value < 3\.142/3.2 and it.value < 3.3/'
check "pi_check: no value in 3.2 .. 3.3" "name,fault,matches
all-jvm,false,0" "$OUT"

# Listing 2: 100 of the 1000 Orders have status 7.
runq_ok order_check queries/order_check.hq
check "order_check: fault, 1000 Orders seen" "name,fault,orders
all-jvm,true,1000" "$OUT"
variant order_check_none queries/order_check.hq 's/THIS\.status = 7/THIS.status = 10/'
check "order_check: no Order has status 10" "name,fault,orders
all-jvm,false,1000" "$OUT"

# Listing 3: objects reachable from the Thread objects.
runq_ok reachable_from_threads queries/reachable_from_threads.hq
check "reachable_from_threads: one row" "name,nbObjects,nbSize" "$(printf '%s\n' "$OUT" | head -1)"
check_contains "reachable_from_threads: instance all-jvm" "all-jvm," "$OUT"
# Roots restricted to the Holder that a stack frame of heapsh-holder holds:
# the Holder (16) and its byte[4096] (4112), nothing else.
variant reachable_holder queries/reachable_from_threads.hq \
	's/roots <- threads$/roots <- threads.filter([t | t.name = "heapsh-holder"]).first.roots.filter([o | o is Holder])/'
check "reachable from the Holder of heapsh-holder: 2 objects, 16 + 4112 bytes" \
	"name,nbObjects,nbSize
all-jvm,2,$((16 + 4112))" "$OUT"
# The Holder is held only by a local variable, not by a reference from its
# Thread object: it is not reachable from the threads.
variant reachable_no_holder queries/reachable_from_threads.hq \
	's/nbSize <- nbSize + THIS.shallow_size \]/nbSize <- nbSize + THIS.shallow_size  holders <- holders + #[THIS].count([o | o is Holder]) ]\n\tholders : int <- 0/'
check "reachable from the threads: not the Holder" "0" "$(csv_get "$OUT" name all-jvm holders)"
# The same count by breadth-first search in Python over --export-graph, the
# roots (ROOT_THREAD_OBJECT records), classes and class objects' references
# read from the dump itself.
# The export has an edge from each object to its class object, which the
# query language does not follow: one such edge per object is dropped. Sizes
# are compared with THIS.shallow_size (the listing's own spelling: THIS.size
# would read a Java field named `size` where there is one).
variant reachable_shallow queries/reachable_from_threads.hq 's/THIS\.shallow_size/THIS.shallow_size/'
MINE_SHALLOW=$(csv_get "$OUT" name all-jvm nbObjects),$(csv_get "$OUT" name all-jvm nbSize)
MINE_LISTING=$(csv_get "$(cat "$Q/reachable_from_threads.stdout")" name all-jvm nbObjects)
$HEAPSH --export-graph "$KNOWN" "$Q/graph.txt"
check_status "--export-graph for the reachability check" 0 $?
PY=$(python3 - "$KNOWN" "$Q/graph.txt" <<'PY'
import struct, sys
from collections import deque
dump, graph = sys.argv[1], sys.argv[2]
# 1. The dump: thread objects (ROOT_THREAD_OBJECT) and each object's class object.
f = open(dump, 'rb').read()
p = f.index(b'\0') + 1
idsize = struct.unpack('>I', f[p:p + 4])[0]
p += 12
fmt = '>I' if idsize == 4 else '>Q'
rid = lambda o: struct.unpack_from(fmt, f, o)[0]
u4 = lambda o: struct.unpack_from('>I', f, o)[0]
u2 = lambda o: struct.unpack_from('>H', f, o)[0]
size = {2: idsize, 4: 1, 5: 2, 6: 4, 7: 8, 8: 1, 9: 2, 10: 4, 11: 8}
prim_name = {4: '[Z', 5: '[C', 6: '[F', 7: '[D', 8: '[B', 9: '[S', 10: '[I', 11: '[J'}
root_size = {0xff: idsize, 0x01: 2 * idsize, 0x02: idsize + 8, 0x03: idsize + 8, 0x04: idsize + 4,
             0x05: idsize, 0x06: idsize + 4, 0x07: idsize, 0x08: idsize + 8}
names, class_name, class_refs = {}, {}, {}
threads, class_of, prim_of, class_objs = [], {}, {}, []
while p < len(f):
    tag, ln = f[p], u4(p + 5)
    q, end = p + 9, p + 9 + ln
    p = end
    if tag == 0x01:                             # UTF8
        names[rid(q)] = f[q + idsize:end].decode('utf-8', 'replace')
    elif tag == 0x02:                           # LOAD CLASS
        class_name[rid(q + 4)] = names.get(rid(q + 8 + idsize))
    elif tag in (0x0c, 0x1c):                   # HEAP DUMP (SEGMENT)
        while q < end:
            st = f[q]; q += 1
            if st in root_size:
                if st == 0x08:
                    threads.append(rid(q))
                q += root_size[st]
            elif st == 0x20:                    # CLASS DUMP
                class_objs.append(rid(q))
                q += 7 * idsize + 10
                cid = rid(q - 7 * idsize - 10)
                # super, loader, signers, protection domain
                heads = [rid(q - 7 * idsize - 10 + idsize + 4 + j * idsize) for j in range(4)]
                for _ in range(u2(q - 2)):      # constant pool
                    q += 3 + size[f[q + 2]]
                q += 2
                statics = []
                for _ in range(u2(q - 2)):      # statics
                    if f[q + idsize] == 2:
                        statics.append((names.get(rid(q), ''), rid(q + idsize + 1)))
                    q += idsize + 1 + size[f[q + idsize]]
                class_refs[cid] = (heads, statics)
                q += 2 + u2(q) * (idsize + 1)   # instance fields
            elif st == 0x21:                    # INSTANCE DUMP
                class_of[rid(q)] = rid(q + idsize + 4)
                q += 2 * idsize + 8 + u4(q + 2 * idsize + 4)
            elif st == 0x22:                    # OBJECT ARRAY DUMP
                class_of[rid(q)] = rid(q + idsize + 8)
                q += 2 * idsize + 8 + u4(q + idsize + 4) * idsize
            elif st == 0x23:                    # PRIMITIVE ARRAY DUMP
                t = f[q + idsize + 8]
                prim_of[rid(q)] = t
                q += idsize + 9 + u4(q + idsize + 4) * size[t]
            else:
                sys.exit('unknown heap dump sub-record 0x%x' % st)
by_name = {n: c for c, n in class_name.items()}
for o, t in prim_of.items():
    class_of[o] = by_name[prim_name[t]]
for c in class_objs:
    class_of[c] = by_name['java/lang/Class']
# 2. The exported graph, without each object's edge to its class object.
index, shallow, succ = {}, {}, {}
missing = 0
for line in open(graph):
    w = line.split()
    if w[0] == 'node':
        v = int(w[1]); index[int(w[2], 16)] = v; shallow[v] = int(w[3])
    elif w[0] == 'edge':
        succ.setdefault(int(w[1]), []).append(int(w[2]))
for oid, v in index.items():
    out = succ.get(v, [])
    c = index.get(class_of.get(oid))
    if c in out:
        out.remove(c)       # one edge: a real reference to the class stays
    else:
        missing += 1
# The set type traversal's graph (docs/dsl.md): a class object's references are
# its superclass unless java.lang.Object, loader, signers, protection domain and
# declared statics (not <resolved_references> nor <init_lock>); array classes and
# primitive-type class objects (instances of java.lang.Class) have none.
obj_class = by_name['java/lang/Object']
for cid, (heads, statics) in class_refs.items():
    v = index.get(cid)
    if v is None:
        continue
    nm = class_name.get(cid) or ''
    keep = []
    if not nm.startswith('['):
        sup, ld, sg, pd = heads
        for t in ([sup] if sup != obj_class else []) + [ld, sg, pd] + \
                 [o for n, o in statics if not n.startswith('<')]:
            if t and t in index:
                keep.append(index[t])
    succ[v] = keep
for oid, c in class_of.items():
    if c == by_name['java/lang/Class'] and oid not in class_refs and oid in index:
        succ[index[oid]] = []
# 3. Breadth-first from the Thread objects.
seen = set(index[t] for t in threads if t in index)
queue = deque(seen)
while queue:
    for w in succ.get(queue.popleft(), ()):
        if w not in seen:
            seen.add(w); queue.append(w)
print('%d,%d' % (len(seen), sum(shallow[v] for v in seen)))
print('threads %d, objects without a class edge %d' % (len(threads), missing))
PY
)
check "Python over --export-graph: the graph has a class edge for every object" "0" \
	"$(printf '%s\n' "$PY" | sed -n 's/.*without a class edge \([0-9]*\)$/\1/p')"
check "reachable_from_threads nbObjects, nbSize (shallow_size) = BFS in Python over --export-graph" \
	"$(printf '%s\n' "$PY" | head -1)" "$MINE_SHALLOW"
check "reachable_from_threads (the listing) nbObjects = BFS in Python" \
	"$(printf '%s\n' "$PY" | head -1 | cut -d, -f1)" "$MINE_LISTING"

# Listing 4: orders[0..9] are the values of KnownHeap.byCustomer; each gets
# its Order (40), customer String (24) + byte[10] (32), its HashMap$Node (32)
# and the key "key-N": String (24) + byte[5] (24).
runq_ok hashmap_entries queries/hashmap_entries.hq
check "hashmap_entries: one row per Order in byCustomer, 6 objects, 176 bytes each" \
	"name,nbObjects,nbSize
$(for i in 0 1 2 3 4 5 6 7 8 9; do echo "$i,6,$((40 + 24 + 32 + 32 + 24 + 24))"; done)" "$OUT"

# Listing 5: the bootstrap loader is no object, so its row stays 0; what the
# test program made belongs to the application class loader.
runq_ok top_components queries/top_components.hq
check "top_components: header" "name,loader,nbSize" "$(printf '%s\n' "$OUT" | head -1)"
check "top_components: the bootstrap row" "0,<bootstrap>,0" "$(csv_row "$OUT" 0)"
check "top_components: one row per class loader" \
	"$($HEAPSH --format csv -c 'classloaders.count' "$KNOWN")" "$(printf '%s\n' "$OUT" | tail -n +2 | wc -l | tr -d ' ')"
KNOWN_CLASSES='o is Order or o is Leaf or o is Measure or o is Grandparent or o is CycleNode or o is Owner or o is Shared or o is Holder or o is Cached'
variant top_components_known queries/top_components.hq \
	"s/on_inclusion <- \[ nbSize <- nbSize + THIS.shallow_size \]/on_inclusion <- [ nbSize <- nbSize + THIS.shallow_size  known <- known + #[THIS].count([o | $KNOWN_CLASSES])  knownSize <- knownSize + #[THIS].count([o | $KNOWN_CLASSES]) * THIS.shallow_size  holders <- holders + #[THIS].count([o | o is Holder]) ]\n\tknown : int <- 0\n\tknownSize : int <- 0\n\tholders : int <- 0/"
# 1000 Order 40, 500 Leaf 32, 4 Measure 24, 7 Child 32, 3 CycleNode 24,
# 2 Owner 24, Shared 16, Holder 16, Cached 16.
KNOWN_N=$((1000 + 500 + 4 + 7 + 3 + 2 + 1 + 1 + 1))
KNOWN_BYTES=$((1000 * 40 + 500 * 32 + 4 * 24 + 7 * 32 + 3 * 24 + 2 * 24 + 16 + 16 + 16))
check "top_components: the app loader has all of KnownHeap's objects, the Holder too" \
	"$KNOWN_N,$KNOWN_BYTES,1" "$(for c in known knownSize holders; do csv_get "$OUT" loader app $c; done | paste -sd,)"
check "top_components: the bootstrap loader has none" "0,0,0,0" \
	"$(for c in nbSize known knownSize holders; do csv_get "$OUT" loader "<bootstrap>" $c; done | paste -sd,)"
APP_BYTES=$(csv_get "$OUT" loader app nbSize)
if [ "${APP_BYTES:-0}" -ge "$KNOWN_BYTES" ]; then ok "top_components: app bytes >= KnownHeap's ($APP_BYTES)"
else fail "top_components: app bytes >= KnownHeap's" "got '$APP_BYTES', want >= $KNOWN_BYTES"; fi

# ---- queries/*.hq: everyday queries ----

# The ArrayList KnownHeap.leaves has the most elements: 500, retaining
# 24 + Object[500] 2016 + 500 Leafs of 32.
runq_ok biggest_collections queries/biggest_collections.hq
check "biggest_collections: header" "collection,elements,retained" "$(printf '%s\n' "$OUT" | head -1)"
check "biggest_collections: KnownHeap.leaves first" "java.util.ArrayList,500,$((24 + 2016 + 500 * 32))" \
	"$(printf '%s\n' "$OUT" | awk 'NR == 2' | cut -d' ' -f2-)"
check "biggest_collections: at most 20 rows, by decreasing elements" "ok" \
	"$(printf '%s\n' "$OUT" | awk -F, 'NR > 1 { if (NR > 21 || (NR > 2 && $2 > last)) bad = 1; last = $2 } END { print bad ? "bad" : "ok" }')"

# No string the test program made is duplicated (the customer strings are one
# object each, shared by 20 Orders); the JDK's duplicates are not known facts,
# so those rows are checked for consistency only.
runq_ok duplicate_strings queries/duplicate_strings.hq
check "duplicate_strings: header" "text,copies,wasted" "$(printf '%s\n' "$OUT" | head -1)"
check "duplicate_strings: none of KnownHeap's strings" "" \
	"$(printf '%s\n' "$OUT" | grep -E '^"?(customer-|key-|child-|owner-|pi-|hello heapsh)')"
check "duplicate_strings: at most 20 rows, copies > 1, by decreasing waste" "ok" \
	"$(printf '%s\n' "$OUT" | awk -F, 'NR > 1 { if (NR > 21 || $(NF-1) < 2 || (NR > 2 && $NF > last)) bad = 1; last = $NF } END { print bad ? "bad" : "ok" }')"
DUP=$(printf '%s\n' "$OUT" | awk -F, 'NR > 1 && NF == 3 && $1 ~ /^[A-Za-z][A-Za-z0-9_]*$/ { print $1 "," $2; exit }')
if [ -n "$DUP" ]; then
	check "duplicate_strings: copies of '${DUP%,*}' = Strings with that text" "${DUP#*,}" \
		"$($HEAPSH --format csv -c "objects.count([it | it is java.lang.String and it.text = \"${DUP%,*}\"])" "$KNOWN")"
fi

# 100 Orders have status 7: ids 7, 17, ..., 997, 40 bytes each.
runq_ok instances_with_field queries/instances_with_field.hq
check "instances_with_field: 100 Orders of 40 bytes" "100 Order,40,40" \
	"$(printf '%s\n' "$OUT" | tail -n +2 | cut -d, -f2- | sort | uniq -c | sed 's/^ *//')"
check "instances_with_field: their ids add up to 7 + 17 + ... + 997" "$((100 * 7 + 10 * 4950))" \
	"$($HEAPSH --format csv -c "$(grep -v '^//' queries/instances_with_field.hq | tr -d '\n').sum([o | o.id])" "$KNOWN")"

# Orders by status: 100 of each value 0..9.
runq_ok field_histogram queries/field_histogram.hq
check "field_histogram: 100 Orders, 4000 bytes per status" "value,instances,bytes
$(for i in 0 1 2 3 4 5 6 7 8 9; do echo "$i,100,4000"; done)" "$OUT"

# Every query file has a comment header.
for f in queries/*.hq; do
	check "$f starts with a comment header" "// $(basename "$f") - " "$(head -1 "$f" | cut -d' ' -f1-3) "
done

# ---- tests/queries/NAME.hq: stdout = NAME.out, stderr = NAME.err ----
# Exit status 0, or 2 when NAME.err exists; without NAME.err, stderr is empty.
# The extern_*.hq cases bind build/unit/libhsext.so (tests/unit/extlib.c) by
# that path, relative to the top of the tree, where the tests run.
make -s build/unit/libhsext.so > /dev/null
check_status "the test library for extern_*.hq is built" 0 $?
for q in tests/queries/*.hq; do
	n=${q%.hq}
	name=query/$(basename "$n")
	$HEAPSH --format csv -f "$q" "$KNOWN" > "$Q/got.out" 2> "$Q/got.err"
	st=$?
	want_st=0 want_err=/dev/null
	if [ -f "$n.err" ]; then want_st=2 want_err=$n.err; fi
	problems=()
	[ "$st" = "$want_st" ] || problems+=("exit status $st, expected $want_st")
	if ! cmp -s "$Q/got.out" "$n.out"; then
		problems+=("stdout differs from $n.out:" "$(diff "$Q/got.out" "$n.out" | head -20)")
	fi
	if ! cmp -s "$Q/got.err" "$want_err"; then
		problems+=("stderr differs from $want_err:" "$(diff "$Q/got.err" "$want_err" | head -20)")
	fi
	if [ ${#problems[@]} -eq 0 ]; then ok "$name"; else fail "$name" "${problems[@]}"; fi
done

# The issue's own example: one command line, one value.
check "heapsh -c: an Order with status 7 is alive" "true" \
	"$($HEAPSH -c 'objects.exists([it | it is Order and it.status = 7])' "$KNOWN")"
check "heapsh -c: no Order with status 11" "false" \
	"$($HEAPSH -c 'objects.exists([it | it is Order and it.status = 11])' "$KNOWN")"
$HEAPSH -c 'objects.exists([it | it is Order and' "$KNOWN" 2>"$T/err"; st=$?
check_status "heapsh -c: an unfinished query exits 2" 2 "$st"
check_contains "heapsh -c: an unfinished query says so" "the query is incomplete" "$(cat "$T/err")"
