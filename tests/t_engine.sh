# t_engine.sh - dominators, retained sizes, paths and the index file, against
# what tests/java/KnownHeap.java built (sizes from the 64-bit layout with
# compressed oops: 12-byte header, 4-byte references, 8-byte alignment).
E=$T/engine
mkdir -p "$E"
cp "$KNOWN" "$E/k.hprof"
K=$E/k.hprof
rm -f "$K.hsidx"
hs() { $HEAPSH --format csv -c "$1" "$K"; }
retained_of() { hs ":retained $1" | awk -F, 'NR == 2 { print $NF }'; }
static_id() { hs ":show $KH" | awk -F, -v f="$1" '$1 == f { split($3, a, " "); print a[1] }'; }
KH=$(hs ':classes KnownHeap' | awk -F, 'NR == 2 { print $1 }')

# Objects and sets with retained sizes known from the structure.
check "Leaf set retains its 500 instances" 16000 "$(retained_of Leaf)"
LEAVES=$(static_id leaves)
check "ArrayList retains itself + Object[500] + 500 Leafs" $((24 + 2016 + 16000)) "$(retained_of "$LEAVES")"
check "Owner set retains both owners + Shared + int[256]" $((2 * 24 + 16 + 1040)) "$(retained_of Owner)"
check "one Owner retains only itself" 24 "$(retained_of "$(static_id ownerA)")"
check "Shared retains itself and its int[256]" $((16 + 1040)) "$(retained_of Shared)"
SHARED=$(hs ":refs $(static_id ownerA)" | awk -F, '$1 == "shared" { print $2 }')
check "Shared is dominated by class KnownHeap" "1,$KH,class KnownHeap" \
	"$(hs ":idom $SHARED" | awk -F, '$1 == 1 { print $1 "," $2 "," $3 }')"
check "Holder retains itself and byte[4096]" $((16 + 4112)) "$(retained_of Holder)"
# orders[0..9] are also held by byCustomer, and so are customer strings 0..9.
# The array class Order[] (a 72-byte class object with no statics) has no
# other instance and no loader link, so its only instance retains it too.
check "Order[] retains the 990 Orders only it holds, 40 strings, its class" \
	$((4016 + 990 * 40 + 40 * (24 + 32) + 72)) "$(retained_of "$(static_id orders)")"
C1=$(static_id cycle)
C2=$(hs ":refs $C1" | awk -F, '$1 == "next" { print $2 }')
C3=$(hs ":refs $C2" | awk -F, '$1 == "next" { print $2 }')
check "cycle: node 1 retains all three" 72 "$(retained_of "$C1")"
check "cycle: node 2 retains two" 48 "$(retained_of "$C2")"
check "cycle: node 3 retains itself" 24 "$(retained_of "$C3")"
check "histogram --retained: Orders with their own customer strings" \
	"class,instances,shallow_bytes,retained_bytes
Order,1000,40000,$((40000 + 50 * 56))" "$(hs ':histogram Order --retained')"

# :dominators
DOMS=$(hs ":dominators $LEAVES")
check "dominators csv header" "id,class,shallow_bytes,retained_bytes" "$(printf '%s\n' "$DOMS" | head -1)"
check "dominators of the ArrayList: its Object[500]" "java.lang.Object[],2016,18016" \
	"$(printf '%s\n' "$DOMS" | awk -F, 'NR == 2 { print $2 "," $3 "," $4 }')"
TOP=$(hs ':dominators --top 100000')
SUM=$(printf '%s\n' "$TOP" | awk -F, 'NR > 1 { s += $4 } END { print s }')
INFO=$(printf ':dominators --top 1\n:info\n' | $HEAPSH --format csv "$K")
REACH=$(printf '%s\n' "$INFO" | grep '^dominator tree,' | sed 's/.* reachable, \([0-9]*\) bytes.*/\1/')
TOTAL=$(printf '%s\n' "$INFO" | awk -F, '$1 == "shallow bytes" { print $2 }')
UNREACH=$(printf '%s\n' "$INFO" | grep '^unreachable,' | sed 's/.*objects, \([0-9]*\) bytes.*/\1/')
check "top-level retained sizes add up to all reachable bytes" "$REACH" "$SUM"
check "reachable + unreachable = all shallow bytes" "$TOTAL" "$((REACH + UNREACH))"
check ":info in a table gives sizes for a person, CSV the bytes" "shallow bytes $(awk -v b="$TOTAL" 'BEGIN { printf "%.1f MB", b / 1048576 }')" \
	"$($HEAPSH -c ':info' "$K" | sed -n 's/^\(shallow bytes\) *\(.*\)$/\1 \2/p')"
check_contains "dominators --by-class" "Holder,1,16,4128" "$(hs ':dominators --by-class --top 500')"

# :dominators --pprof, read by Go's own pprof: the whole reachable heap, a
# class's flat value its reachable instances, its cum what they retain.
hs ":dominators --pprof $E/dom.pb.gz" >"$E/pprof.out"
check_contains "dominators --pprof: written" "wrote $E/dom.pb.gz" "$(cat "$E/pprof.out")"
if ! command -v go >/dev/null; then
	fail "dominators --pprof: go tool pprof is installed (make deps: golang-go)"
else
	gp() { go tool pprof -unit=B -nodefraction=0 "$@" "$E/dom.pb.gz" 2>/dev/null; }
	check "dominators --pprof: the total is the reachable bytes" "${REACH}B total" "$(gp -top | grep -o '[0-9]*B total')"
	check "dominators --pprof: Leaf's flat and cum, its 500 instances" "16000B 16000B" \
		"$(gp -top -nodecount=100000 | awk '$6 == "Leaf" { print $1, $4 }')"
	check "dominators --pprof: Holder's cum is its retained size" "$(retained_of Holder)B" \
		"$(gp -top -nodecount=100000 | awk '$6 == "Holder" { print $4 }')"
	check "dominators --pprof: String's cum is what :histogram --retained says" \
		"$(hs ':histogram java.lang.String --retained' | awk -F, 'NR == 2 { print $4 "B" }')" \
		"$(gp -top -nodecount=100000 | awk '$6 == "java.lang.String" { print $4 }')"
	check_contains "dominators --pprof: the Orders under Order[] under class KnownHeap" \
		"$(printf '%s\n' "$((990 * 40))B   Order" "Order[]" "class KnownHeap")" \
		"$(gp -traces | sed -E 's/^ +//')"
fi
check_contains "dominators --pprof: no ID with it" "--pprof writes the whole tree" \
	"$($HEAPSH -c ":dominators $LEAVES --pprof $E/x.pb.gz" "$K" 2>&1)"

# Weak and soft references: Cached is held only by a SoftReference.
check "Cached retained through its SoftReference" $((16 + 2064)) "$(retained_of Cached)"
check "--no-weak: Cached is unreachable" 0 "$($HEAPSH --no-weak --format csv -c ':retained Cached' "$K" | awk -F, 'NR == 2 { print $NF }')"
CACHED_PATH=$(hs ':path Cached --weak')
check_contains "path to Cached goes through referent" ",referent," "$CACHED_PATH"
check_contains "merged paths follow strong references by default, as MAT's" \
	"1 unreachable; through strong references (--weak to follow" "$($HEAPSH -c ':path Cached' "$K")"
check_contains "--no-weak merged path: Cached unreachable" "1 unreachable" "$($HEAPSH -c ':path Cached --no-weak' "$K")"
# Merged paths (issue 16): one row per node of the merged tree, the objects of
# one class at one step merged, with the number of set members each leads to.
# KnownHeap's 1,000 Orders: 999 in the static Order[] (the 1,000th hangs off
# another Order's next... is reached from the static mixed Object[]).
check ":path Order --merged: rows and counts" "0,,class sun.launcher.LauncherHelper,1,1000
1,static appClass,class KnownHeap,1,1000
2,static orders,Order[],1,999
3,[*],999 x Order,999,999
2,static mixed,java.lang.Object[],1,1
3,[3],Order,1,1" "$($HEAPSH --no-index --format csv -c ':path Order --merged' "$K" | tail -n +2 | cut -d, -f1,2,4,5,6)"
check ":path Leaf --merged: 500 Leafs are one row" "5" \
	"$($HEAPSH --no-index --format csv -c ':path Leaf --merged' "$K" | tail -n +2 | wc -l | tr -d ' ')"
CID=$(printf '%s\n' "$CACHED_PATH" | tail -1 | cut -d, -f3)
$HEAPSH --format csv --no-weak -c ":path $CID" "$K" >/dev/null 2>"$E/err"; st=$?
check_status "--no-weak path to Cached: exit 2" 2 "$st"
check_contains "--no-weak path to Cached: unreachable" "unreachable from the GC roots through strong references" "$(cat "$E/err")"

# Paths: the Holder is held by a stack frame of heapsh-holder.
HP=$(hs ':path Holder')
check "Holder's path is one frame root" "0,,Holder,1,Java frame" "$(printf '%s\n' "$HP" | awk -F, 'NR == 2 { print $1 "," $2 "," $4 "," $6 "," $7 }')"
O7=$(hs ":show $(static_id orders) --all" | awk -F, '$1 == "7" { split($2, a, " "); print a[1] }')
P7=$(hs ":path $O7 --all 3")
check "path to orders[7] ends at it" "$O7" "$(printf '%s\n' "$P7" | awk -F, '$1 == 1' | tail -1 | cut -d, -f4)"
check "path to orders[7] goes through element [7]" "[7]" "$(printf '%s\n' "$P7" | awk -F, '$1 == 1' | tail -1 | cut -d, -f3)"
check_contains "path starts at a GC root" "system class" "$(printf '%s\n' "$P7" | awk -F, '$1 == 1 && $2 == 0')"
O0=$(hs ":show $(static_id orders) --all" | awk -F, '$1 == "0" { split($2, a, " "); print a[1] }')
NP=$(hs ":path $O0 --all 5" | awk -F, 'NR > 1 { print $1 }' | sort -u | wc -l)
if [ "$NP" -ge 1 ]; then ok "--all gives paths from distinct roots ($NP)"; else fail "--all paths" "got $NP"; fi

# The index file: written, reused, and never trusted when stale or corrupt.
rm -f "$K.hsidx"
hs ':dominators --top 1' >/dev/null
if [ -s "$K.hsidx" ]; then ok "index written next to the dump"; else fail "index written next to the dump"; fi
check_contains "reopen reads the index" "read from the index" \
	"$(printf ':dominators --top 1\n:info\n' | $HEAPSH --format csv "$K")"
# The heap model goes into the index with the tree: a reopen maps it instead
# of reading the dump again, and every answer is the dump's.
check_contains "reopen maps the heap model from the index" "read from the index" \
	"$(hs ':info' | grep '^model,')"
check "... and :info says the index holds it and the tree, nothing unused" "yes yes no" \
	"$(hs ':info' | grep '^index,' | awk '{ print (/heap model/ ? "yes" : "no"), (/dominator tree/ ? "yes" : "no"), (/no longer used/ ? "yes" : "no") }')"
check_contains "--no-index reads the dump" "model,read from the dump" \
	"$($HEAPSH --no-index --format csv -c ':info' "$K")"
MODEL_CMDS=(':histogram' ':classes' ':dominators --top 40' ':dominators --by-class --top 40'
	":retained $LEAVES" ":refs $LEAVES" ":referrers $SHARED" ":show $KH --all"
	":path $SHARED --all 3" ':roots' ':roots all' ':threads' ':suspects' ':duplicates'
	':collections --all' ':top --by retained --top 30' ':graphstats' ":idom $SHARED"
	'objects.filter(o -> o.class.name == "Order").size()'
	':lua local n = 0; for o in heapsh.instances("Leaf") do n = n + 1 end; print(n)')
for c in "${MODEL_CMDS[@]}"; do
	check "mapped model: $c" "$($HEAPSH --no-index --format csv -c "$c" "$K" 2>&1)" \
		"$(hs "$c" 2>&1)"
done
# The session that writes the index uses the model and the tree from there
# once that command is done (hs_rest), giving its own arrays back: the
# same answers, in the same session.
rm -f "$K.hsidx"
check_contains "the writing session maps the model it wrote" "model,read from the index" \
	"$($HEAPSH --format csv -c ':dominators --top 1' -c ':info' "$K")"
rm -f "$K.hsidx"
ARGS=(-c ':dominators --top 5')
for c in "${MODEL_CMDS[@]}"; do ARGS+=(-c "$c"); done
check "the writing session's answers are the dump's" \
	"$($HEAPSH --no-index --format csv "${ARGS[@]}" "$K" 2>&1)" \
	"$($HEAPSH --format csv "${ARGS[@]}" "$K" 2>&1)"
# Trust (idx.h): the process that writes the index, or one that checks it
# in full, leaves a seal in the user's private seal folder; while the index
# and the dump are unchanged, the next reopens skip the checks (checksum,
# records, tree) and answer the same.
SEALS=$XDG_CACHE_HOME/heapsh/seals
INFO2=':dominators --top 1\n:dominators --top 1 --no-weak\n:info\n'
TRUSTED='not checked again'
rm -f "$K.hsidx"
printf "$INFO2" | $HEAPSH --format csv "$K" >/dev/null 2>&1	# writes both trees
check "the writer leaves a seal" "yes" "$(ls "$SEALS"/*.seal >/dev/null 2>&1 && echo yes)"
OUT=$(printf "$INFO2" | $HEAPSH --format csv "$K" 2>&1)
check_contains "sealed reopen: the model is trusted" \
	'model,"read from the index (mapped; the dump'"'"'s records are read when asked for); not checked again' "$OUT"
check_contains "sealed reopen: the tree is trusted" 'dominator tree,"read from the index; not checked again' "$OUT"
check_contains "sealed reopen: the --no-weak tree is trusted" 'dominator tree (no weak),"read from the index; not checked again' "$OUT"
for c in "${MODEL_CMDS[@]}"; do
	check "sealed reopen: $c" "$($HEAPSH --no-index --format csv -c "$c" "$K" 2>&1)" \
		"$(hs "$c" 2>&1)"
done
# (:graphstats and :top above appended the dynamic-size engine to the
# index, which its writer sealed again with the sections it had.)
check_contains "rewritten index: sealed by its writer" "$TRUSTED" "$(hs ':info')"
# The seal names the files as they were: any change to either is checked
# again, and the check seals the file again.
touch -r "$K.hsidx" "$K.hsidx"	# same mtime, new ctime
check "index touched: checked in full again" "" \
	"$(printf "$INFO2" | $HEAPSH --format csv "$K" 2>&1 | grep "$TRUSTED")"
check_contains "... and sealed again by that check" "$TRUSTED" "$(hs ':info')"
touch -r "$K" "$K"	# the dump: same mtime and contents, new ctime
check "dump touched: checked in full again" "" "$(hs ':info' | grep "$TRUSTED")"
check_contains "... and sealed again" "$TRUSTED" "$(hs ':info')"
# A file another user may write is sealed only once its last change is more
# than a second old (git's racy-clean rule: a write in the same clock tick
# could leave its ctime as it was).
chmod g+w "$K.hsidx"
check "index others may write, just changed: checked" "" "$(hs ':info' | grep "$TRUSTED")"
check "... and not sealed by that check" "" "$(hs ':info' | grep "$TRUSTED")"
sleep 2.1
hs ':info' >/dev/null
check_contains "... sealed by a check a second later" "$TRUSTED" "$(hs ':info')"
chmod g-w "$K.hsidx"
hs ':info' >/dev/null
cp "$K.hsidx" "$E/sealed.hsidx"
python3 - "$K.hsidx" <<'PY'
import sys  # a byte of the sealed index changed in place, its mtime put back
with open(sys.argv[1], 'r+b') as f:
    f.seek(8192); b = f.read(1); f.seek(8192); f.write(bytes([b[0] ^ 0xff]))
PY
touch -r "$E/sealed.hsidx" "$K.hsidx"
OUT=$(printf ':dominators --top 1\n:info\n' | $HEAPSH --format csv "$K" 2>&1)
check_contains "sealed index changed in place: its checksum is read again" "checksum mismatch" "$OUT"
check_contains "... and the tree computed again" 'dominator tree,"computed' "$OUT"
rm -f "$K.hsidx"
hs ':dominators --top 1' >/dev/null
chmod g+w "$SEALS"
check "a seal folder others can write to is not used" "" "$(hs ':info' | grep "$TRUSTED")"
chmod 700 "$SEALS"
check_contains "... a private one is" "$TRUSTED" "$(hs ':info')"
check "no seals without HOME or XDG_CACHE_HOME" "" \
	"$(env -u HOME XDG_CACHE_HOME= $HEAPSH --format csv -c ':info' "$K" | grep 'not checked again')"
# A model that does not fit the dump (its objects' classes swapped here),
# with a valid checksum, is refused with a reason and the dump is read.
python3 - "$K.hsidx" "$E/badmodel.hsidx" <<'PY'
import struct, sys
sys.path.insert(0, 'tests')
import index_file
d = bytearray(open(sys.argv[1], 'rb').read())
p, ln = index_file.payload(d, 0x4d4f444c)  # MODL: header, then pos_lo[n+1], pos_base, cls[n], ...
n, = struct.unpack_from('<I', d, p + 32)
# an array of 64 KiB or more starts at a page, others at 8 bytes (array_align)
start = lambda off, ln: -(-off // (4096 if ln >= 65536 else 8)) * (4096 if ln >= 65536 else 8)
off = 232  # the header's size (struct mhdr, src/heap/heap_model.c)
for sz in ((n + 1) * 4, ((n >> 12) + 1) * 8):  # pos_lo, pos_base
    off = start(off, sz) + sz
at = p + start(off, n * 4)  # cls
a, b = struct.unpack_from('<II', d, at + 4 * (n - 2))  # cls of the last two objects
struct.pack_into('<II', d, at + 4 * (n - 2), *((b, a) if a != b else (a, a + 1)))
open(sys.argv[2], 'wb').write(index_file.fix(d))
PY
cp "$E/badmodel.hsidx" "$K.hsidx"
INODE=$(stat -c %i "$K.hsidx")
OUT=$(printf ':info\n' | $HEAPSH --format csv "$K" 2>&1)
check_contains "crafted model: refused, with the reason" "the index's heap model is not usable (" "$OUT"
check_contains "... the reason: its classes" "the objects by class are not the classes' objects" "$OUT"
check_contains "crafted model: the dump is read" "reading the dump, whose model the index then keeps" "$OUT"
# The index holds a tree: the dump's model is appended at once, superseding
# the refused one, and the next open maps it.
check "... and appended to the index in its place (same inode, two models)" "$INODE 2" \
	"$(stat -c %i "$K.hsidx") $(python3 -c "import sys; sys.path.insert(0, 'tests'); import index_file as x; print([t for t, r, p, n in x.sections(open('$K.hsidx', 'rb').read())].count(0x4d4f444c))")"
check_contains "... which the next open maps" 'model,"read from the index (mapped' "$(hs ':info' 2>&1)"
check "crafted model: same answers" "$($HEAPSH --no-index --format csv -c ':histogram' "$K")" \
	"$(cp "$E/badmodel.hsidx" "$K.hsidx"; hs ':histogram' 2>/dev/null)"
rm -f "$K.hsidx"
hs ':dominators --top 1' >/dev/null
cp "$K.hsidx" "$E/good.hsidx"
# A damaged section is left out and computed again; the others are used.
damage() {	# damage FILE TAG: a byte in the middle of section TAG's payload
	python3 - "$1" "$2" <<'PY'
import sys
sys.path.insert(0, 'tests')
import index_file
p = sys.argv[1]; d = bytearray(open(p, 'rb').read())
off, ln = index_file.payload(d, int(sys.argv[2], 16)); d[off + ln // 2] ^= 0xff
open(p, 'wb').write(d)
PY
}
damage "$K.hsidx" 0x444f4d41	# DOMA
OUT=$(printf ':dominators --top 1\n:info\n' | $HEAPSH --format csv "$K" 2>&1)
check_contains "damaged tree: detected" "its dominator tree is damaged (checksum mismatch)" "$OUT"
check_contains "damaged tree: recomputed" "dominator tree,\"computed" "$OUT"
check_contains "... the model still mapped from the index" "model,read from the index" "$OUT"
check_contains "damaged tree: same answer" "18040" "$($HEAPSH --format csv -c ":retained $LEAVES" "$K")"
check_contains "... and replaced: the next open reads it" "dominator tree,\"read from the index" \
	"$(printf ':dominators --top 1\n:info\n' | $HEAPSH --format csv "$K" 2>&1)"
cp "$E/good.hsidx" "$K.hsidx"
damage "$K.hsidx" 0x4d4f444c	# MODL
OUT=$(printf ':dominators --top 1\n:info\n' | $HEAPSH --format csv "$K" 2>&1)
check_contains "damaged model: detected" "its heap model is damaged (checksum mismatch)" "$OUT"
check_contains "... the tree still read from the index" "dominator tree,\"read from the index" "$OUT"
check_contains "damaged model: same answer" "18040" "$($HEAPSH --format csv -c ":retained $LEAVES" "$K")"
check_contains "... and replaced: the next open maps it" 'model,"read from the index (mapped' "$(hs ':info' 2>&1)"
cp "$E/good.hsidx" "$K.hsidx"
python3 - "$K.hsidx" <<'PY'
import sys  # the header's count of sections damaged: the whole file is refused
p = sys.argv[1]; d = bytearray(open(p, 'rb').read()); d[48] ^= 0x40; open(p, 'wb').write(d)
PY
OUT=$(printf ':dominators --top 1\n:info\n' | $HEAPSH --format csv "$K" 2>&1)
check_contains "corrupt header: detected" "checksum mismatch" "$OUT"
check_contains "corrupt header: recomputed" "dominator tree,\"computed" "$OUT"
head -c 100 "$E/good.hsidx" > "$K.hsidx"
check_contains "truncated index: detected" "truncated" "$(hs ':dominators --top 1' 2>&1 >/dev/null)"
# A valid checksum proves an index undamaged, not sane: a dominator "tree"
# with a cycle, a chain to an unreachable object, or retained sizes that do
# not add up, rewritten with good checksums, is refused and computed again.
for bad in cycle unreachable sum; do
	python3 - "$E/good.hsidx" "$K.hsidx" "$bad" <<'PY'
import struct, sys
sys.path.insert(0, 'tests')
import index_file
src, dst, how = sys.argv[1:]
d = bytearray(open(src, 'rb').read())
p, ln = index_file.payload(d, 0x444f4d41)  # DOMA: u32 magic, u32 n, u64 nbig, (n+1) idom, (n+1) u32 retained
n, = struct.unpack_from('<I', d, p + 4)
idom = list(struct.unpack_from('<%dI' % (n + 1), d, p + 16))
ret_at = p + 16 + 4 * (n + 1)
reach = [v for v in range(n) if idom[v] != 0xffffffff and idom[v] != n]
a, b = reach[0], reach[1]
if how == 'cycle':
    idom[a], idom[b] = b, a
elif how == 'unreachable':
    idom[a] = next(v for v in range(n) if idom[v] == 0xffffffff)
else:
    r, = struct.unpack_from('<I', d, ret_at + 4 * a)
    struct.pack_into('<I', d, ret_at + 4 * a, r + 1)
struct.pack_into('<%dI' % (n + 1), d, p + 16, *idom)
open(dst, 'wb').write(index_file.fix(d))
PY
	OUT=$(printf ':graphstats\n:idom %s\n:info\n' "$O0" | timeout 60 $HEAPSH --format csv "$K" 2>&1)
	check_contains "index with a crafted dominator tree ($bad): refused" \
		"the index's dominator tree is not a tree of this heap; computing it again" "$OUT"
	check_contains "... and computed" "dominator tree,\"computed" "$OUT"
	check "... the same retained sizes" "$($HEAPSH --format csv -c ":retained $LEAVES" "$K")" \
		"$(cp "$E/good.hsidx" "$K.hsidx"; $HEAPSH --format csv -c ":retained $LEAVES" "$K")"
done
cp "$E/good.hsidx" "$K.hsidx"
touch -d '2001-01-01' "$K"
OUT=$(printf ':dominators --top 1\n:info\n' | $HEAPSH --format csv "$K" 2>&1)
check_contains "stale index: detected" "stale" "$OUT"
check_contains "stale index: recomputed" "dominator tree,\"computed" "$OUT"
# No writable place next to the dump: the index goes to $XDG_CACHE_HOME/heapsh.
rm -f "$K.hsidx"; mkdir "$K.hsidx"
OUT=$(printf ':dominators --top 1\n:info\n' | XDG_CACHE_HOME=$E/xdg $HEAPSH --format csv "$K" 2>&1)
check_contains "index falls back to XDG_CACHE_HOME" "index file,$E/xdg/heapsh/k.hprof." "$OUT"
check_contains "fallback index is reused" "read from the index" \
	"$(printf ':dominators --top 1\n:info\n' | XDG_CACHE_HOME=$E/xdg $HEAPSH --format csv "$K" 2>&1)"
rmdir "$K.hsidx"
if ls "$E"/*.tmp.* >/dev/null 2>&1; then fail "no temporary index files left"; else ok "no temporary index files left"; fi
# Killed while writing its index (here by SIGXFSZ, past a file size limit
# of half the index): no file is left, named or temporary, next to the
# dump or in the cache folder; the next open computes and writes it whole.
rm -f "$K.hsidx"
HALF=$(( $(stat -c %s "$E/good.hsidx") / 2048 ))
( ulimit -f "$HALF"; XDG_CACHE_HOME=$E/xdg2 exec $HEAPSH -c ':dominators --top 1' "$K" ) >/dev/null 2>&1
check "killed while writing the index: it died of the file size limit" "$?" "153"
check "... and left no file" "$(ls "$K".hsidx* "$E"/*.tmp.* "$E"/xdg2/heapsh/* 2>/dev/null)" ""
OUT=$(printf ':dominators --top 1\n:info\n' | $HEAPSH --format csv "$K" 2>&1)
check_contains "... the next open writes it" "index file,$K.hsidx" "$OUT"
check_contains "... whole: the next open reads its tree" "dominator tree,\"read from the index" \
	"$(printf ':dominators --top 1\n:info\n' | $HEAPSH --format csv "$K" 2>&1)"

# A section the index does not hold yet is appended in place: the file
# keeps its inode and its bytes so far, the header counts one more section,
# and a session that had the index mapped before goes on using it.
rm -f "$K.hsidx"
hs ':dominators --top 1' >/dev/null
INODE=$(stat -c %i "$K.hsidx")
SIZE=$(stat -c %s "$K.hsidx")
cp "$K.hsidx" "$E/before-append.hsidx"
rm -f "$E/cmds"; mkfifo "$E/cmds"
$HEAPSH --format csv "$K" <"$E/cmds" >"$E/mapped.out" 2>&1 &
MAPPED=$!
exec 8>"$E/cmds"
printf ':dominators --top 3\n"first-done"\n' >&8
for _ in $(seq 300); do grep -q first-done "$E/mapped.out" && break; sleep 0.1; done
$HEAPSH --no-weak --format csv -c ':dominators --top 1' "$K" >/dev/null
check "appended: the same file (inode)" "$INODE" "$(stat -c %i "$K.hsidx")"
check "appended: its bytes so far unchanged but the header's count and checksum" "same" \
	"$(python3 - "$E/before-append.hsidx" "$K.hsidx" <<'PY'
import sys
sys.path.insert(0, 'tests')
import index_file
a, b = (open(p, 'rb').read() for p in sys.argv[1:])
h = index_file.HEADER
ok = len(b) > len(a) and a[:h - 8] == b[:h - 8] and a[h:] == b[h:len(a)]
ok = ok and len(index_file.sections(b)) == len(index_file.sections(a)) + 1
print('same' if ok else 'differ')
PY
)"
printf ':retained %s\n:info\n:graphstats\n' "$LEAVES" >&8
exec 8>&-
wait "$MAPPED"
check_contains "appended: a session that mapped the index before goes on" "$((24 + 2016 + 16000))" \
	"$(cat "$E/mapped.out")"
# That session then added the dynamic-size engine (:graphstats): after the
# other's tree, in the same file, so that both are kept.
check "appended by two sessions: both sections kept, the same file" "$INODE DOMA MODL DOMS DYNA" \
	"$(stat -c %i "$K.hsidx") $(python3 -c "import sys; sys.path.insert(0, 'tests'); import index_file as x; print(*[t.to_bytes(4, 'big').decode() for t, r, p, n in x.sections(open('$K.hsidx', 'rb').read())])")"
# Two sessions on a dump with no index yet: the one that writes second
# appends to the file the first made, so both trees are kept.
cp "$K.hsidx" "$E/kept.hsidx"
rm -f "$K.hsidx" "$E/cmds2"; mkfifo "$E/cmds2"
$HEAPSH --no-weak --format csv "$K" <"$E/cmds2" >"$E/second.out" 2>&1 &
SECOND=$!
exec 9>"$E/cmds2"
printf '"opened"\n' >&9
for _ in $(seq 300); do grep -q opened "$E/second.out" && break; sleep 0.1; done
hs ':dominators --top 1' >/dev/null	# the first: makes the file
printf ':dominators --top 1\n' >&9	# the second: computes its tree, then writes
exec 9>&-
wait "$SECOND"
check "two sessions on a fresh dump: both trees in the one file" "DOMA MODL DOMS MODL" \
	"$(python3 -c "import sys; sys.path.insert(0, 'tests'); import index_file as x; print(*[t.to_bytes(4, 'big').decode() for t, r, p, n in x.sections(open('$K.hsidx', 'rb').read())])")"
cp "$E/kept.hsidx" "$K.hsidx"
OUT=$(printf ':dominators --top 1\n:info\n' | $HEAPSH --no-weak --format csv "$K" 2>&1)
check_contains "appended: the --no-weak tree is read from the index" "dominator tree (no weak),\"read from the index" "$OUT"
check "appended: both trees answer as without the index" \
	"$($HEAPSH --no-index --format csv -c ':dominators --top 5' "$K"; $HEAPSH --no-index --no-weak --format csv -c ':dominators --top 5' "$K")" \
	"$(hs ':dominators --top 5'; $HEAPSH --no-weak --format csv -c ':dominators --top 5' "$K")"
# An append cut short leaves bytes after the last section: not read, and
# written over by the next append; a damaged appended section is caught.
cp "$K.hsidx" "$E/two-trees.hsidx"
head -c 5000 /dev/urandom >>"$K.hsidx"
OUT=$(printf ':dominators --top 1\n:info\n' | $HEAPSH --format csv "$K" 2>&1)
check_contains "bytes after the last section: the index is used" "dominator tree,\"read from the index" "$OUT"
INODE=$(stat -c %i "$K.hsidx")
hs ':dynsize Leaf' >/dev/null
check "... and the next append writes over them" \
	"$(python3 -c "import sys; sys.path.insert(0, 'tests'); import index_file as x; d = open('$K.hsidx', 'rb').read(); t, r, p, n = x.sections(d)[-1]; print(len(d) == p + n, hex(t))")" \
	"True 0x44594e41"
# That session saved the dynamic-size engine's memo of exact sizes again
# at its end: a replacement, appended too (the file keeps its inode; the
# first is superseded, not read).
check "a section replaced: appended, the same file" "$INODE DOMA MODL DOMS DYNA DYNA" \
	"$(stat -c %i "$K.hsidx") $(python3 -c "import sys; sys.path.insert(0, 'tests'); import index_file as x; print(*[t.to_bytes(4, 'big').decode() for t, r, p, n in x.sections(open('$K.hsidx', 'rb').read())])")"
check "... and the next open answers from the last" "$($HEAPSH --no-index --format csv -c ':dynsize Leaf' "$K")" \
	"$(hs ':dynsize Leaf')"
# Exact sizes found later go on their own (DYNX, 16 bytes a size), not with
# the whole engine again; the next open answers with them.
hs ':dynsize java.util.HashMap$Node --exact' >/dev/null
check "exact sizes found later: appended on their own" "$INODE DOMA MODL DOMS DYNA DYNA DYNX" \
	"$(stat -c %i "$K.hsidx") $(python3 -c "import sys; sys.path.insert(0, 'tests'); import index_file as x; print(*[t.to_bytes(4, 'big').decode() for t, r, p, n in x.sections(open('$K.hsidx', 'rb').read())])")"
check "... and the next open answers with them" \
	"$($HEAPSH --no-index --format csv -c ':dynsize java.util.HashMap$Node --exact' "$K")" \
	"$(hs ':dynsize java.util.HashMap$Node')"
OUT=$(hs ':info' | grep '^index,')
check_contains ":info says what the index holds" "dominator tree without weak references (--no-weak) " "$OUT"
check_contains "... and what it no longer uses (the first dynamic-size section)" \
	"no longer used, given back when the file is next written whole" "$OUT"
cp "$E/two-trees.hsidx" "$K.hsidx"
python3 - "$K.hsidx" <<'PY'
import sys
sys.path.insert(0, 'tests')
import index_file
p = sys.argv[1]
d = bytearray(open(p, 'rb').read())
off, ln = index_file.payload(d, 0x444f4d53)  # DOMS, the appended tree
d[off + ln // 2] ^= 0xff
open(p, 'wb').write(d)
PY
OUT=$(printf ':dominators --top 1\n:info\n' | $HEAPSH --no-weak --format csv "$K" 2>&1)
check_contains "a damaged appended section: detected" "checksum mismatch" "$OUT"
check_contains "... and the tree computed again" "dominator tree (no weak),\"computed" "$OUT"

# --export-graph, checked with networkx's immediate_dominators when present.
$HEAPSH --export-graph "$K" "$E/graph.txt"
check_status "--export-graph exit 0" 0 $?
if python3 -c 'import networkx' 2>/dev/null; then
	NX=$(python3 - "$E/graph.txt" "$K" "$HEAPSH" <<'PY'
import subprocess, sys
import networkx as nx
g = nx.DiGraph(); size = {}; ids = {}
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] == 'root': root = int(w[1]); g.add_node(root)
    elif w[0] == 'node': size[int(w[1])] = int(w[3]); ids[int(w[1])] = w[2]
    elif w[0] == 'edge': g.add_edge(int(w[1]), int(w[2]))
idom = nx.immediate_dominators(g, root)
children = {}
for v, d in idom.items():
    if v != d: children.setdefault(d, []).append(v)
ret = {}
order = list(nx.dfs_preorder_nodes(nx.DiGraph([(d, v) for d, l in children.items() for v in l]), root))
for v in reversed(order):
    ret[v] = size.get(v, 0) + sum(ret[c] for c in children.get(v, []))
top = sorted(children.get(root, []), key=lambda v: (-ret[v], v))[:20]
out = subprocess.run([sys.argv[3], '--format', 'csv', '--no-index', '-c', ':dominators --top 20', sys.argv[2]],
                     capture_output=True, text=True).stdout.split('\n')[1:21]
mine = [(r.split(',')[0], int(r.split(',')[3])) for r in out if r]
theirs = [(ids[v], ret[v]) for v in top]
print('same' if mine == theirs and ret[root] - 0 == sum(size[v] for v in idom if v != root) else 'differ %s %s' % (mine[:3], theirs[:3]))
PY
)
	check "networkx immediate_dominators agrees (top 20 and totals)" same "$NX"
else
	echo "skip networkx check: python3-networkx is not installed"
fi
