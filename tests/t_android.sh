# t_android.sh - Android heap dumps (raw ART, and after hprof-conv) and files
# holding several heap dumps, written by tests/unit/write_dumps.c (sizes by
# ART's layout are worked out in its opening comment and below).
make -s "${BUILD:-build}/unit/write_dumps" >/dev/null || fail "write_dumps builds"
WD=${BUILD:-build}/unit/write_dumps
AD=$T/android
rm -rf "$AD" && mkdir -p "$AD"
$WD android "$AD/art.hprof" && $WD converted "$AD/conv.hprof" && $WD several "$AD/several.hprof" \
	|| fail "write_dumps writes the test dumps"
ART=$AD/art.hprof CONV=$AD/conv.hprof SEV=$AD/several.hprof
ahs() { $HEAPSH --format csv -c "$1" "${2:-$ART}" 2>&1; }

# :info: the 1.0.3 header, Android's sizes (arrays count their elements), the
# three heaps with their objects and bytes (image: 7 classes of 120 bytes, a
# 16-byte $classOverhead, the 300,000-byte boot image array; zygote: the
# loader and its class, four Strings with their char[], a 256-int NODATA
# array; app: the rest).
info=$(ahs ':info')
check_contains "android: 1.0.3 header" "format,JAVA PROFILE 1.0.3" "$info"
check_contains "android: ART layout" "object layout,\"Android (instance sizes from the dump" "$info"
check_contains "android: image heap" "heap image,\"9 objects, 300856 shallow bytes\"" "$info"
check_contains "android: zygote heap" "heap zygote,\"11 objects, 1300 shallow bytes\"" "$info"
check_contains "android: app heap" "heap app,\"89 objects, 401148 shallow bytes\"" "$info"
check_contains "android: UNREACHABLE counted, not a root" "unreachable marks,1" "$info"
check_contains "android: 7 GC roots" "gc roots,7" "$info"
check_contains "android: total" "shallow bytes,703304" "$info"

# :histogram --heap NAME: that heap's objects only, per class.
check "android: histogram --heap zygote" "class,instances,shallow_bytes
int[],1,1024
java.lang.Class,1,120
char[],4,68
java.lang.String,4,64
dalvik.system.PathClassLoader,1,24" "$(ahs ':histogram --heap zygote')"
check "android: histogram --heap app --retained" "class,instances,shallow_bytes,retained_bytes
byte[],41,400008,400008
com.example.LeakActivity,40,640,400760" \
	"$(ahs ':histogram --heap app --retained --top 2')"
check "android: histogram --heap image PATTERN" "class,instances,shallow_bytes
byte[],2,300016" "$(ahs ':histogram byte[] --heap image')"
out=$(ahs ':histogram --heap nope'); st=$?
check_status "android: unknown heap is an error" 2 $st
check_contains "android: unknown heap names the heaps" "no heap 'nope' in this dump; its heaps are image, zygote, app" "$out"
out=$($HEAPSH -c ':histogram --heap app' "$KNOWN" 2>&1); st=$?
check_status "android: --heap on a HotSpot dump is an error" 2 $st
check_contains "android: --heap on a HotSpot dump says why" "this dump names no heaps" "$out"

# Objects: the heap, ART's sizes, NODATA, String text from a char[] value.
show=$(ahs ':show 0x38000')
check_contains "android: NODATA is an int[]" "class,int[]" "$show"
check_contains "android: NODATA size 256 x 4" "shallow size,1024" "$show"
check_contains "android: NODATA in zygote" "heap,zygote" "$show"
check_contains "android: NODATA has no values" "length,256 (the dump holds no values" "$show"
check "android: no elements listed for NODATA" "" "$(ahs ':show 0x38000' | grep '^index')"
check_contains "android: String text from ART's char[]" 'text,"""android"""' "$(ahs ':show 0x20100')"
check_contains "android: instance size from the dump" "shallow size,16" "$(ahs ':show 0x50000')"
check_contains "android: object array of 40 4-byte refs" "shallow size,160" "$(ahs ':show 0x40100')"
check_contains "android: class object is java.lang.Class's size" "shallow size,120" "$(ahs ':show 0x10600')"

# The query language and Lua select by heap.
check "android: query by heap" "89" "$($HEAPSH -c 'objects.filter([o | o.heap = "app"]).size()' "$ART")"
check "android: query heap of a String" "zygote" "$($HEAPSH -c 'objects.filter([o | o.id = 0x20100]).first().heap' "$ART")"
check "android: a HotSpot dump's objects have no heap" "true" \
	"$($HEAPSH -c 'objects.first().heap = null' "$KNOWN")"
check "android: Lua android_heap" "zygote app image nil" "$(printf '%s\n' \
	'local h = heapsh.current()' \
	'print(h:object(0x38000).android_heap, h:object(0x50000).heap, h:object(0x20000).android_heap, h:object(0x50000).nothere)' \
	| $HEAPSH -l /dev/stdin "$ART" | tr '\t' ' ')"

# Android's roots by kind; after hprof-conv they are ROOT UNKNOWN.
check "android: root kinds" "kind,roots
system class,2
thread,1
interned string,1
debugger,1
VM internal,1
JNI monitor,1" "$(ahs ':roots')"
check "android: converted root kinds" "kind,roots
system class,2
thread,1
unknown,4" "$(ahs ':roots' "$CONV")"

# hprof-conv's output: a 1.0.2 header, no heaps, the same sizes (ART's
# layout, told by ART's classes), NODATA turned into zeros.
cinfo=$(ahs ':info' "$CONV")
check_contains "converted: 1.0.2" "format,JAVA PROFILE 1.0.2" "$cinfo"
check_contains "converted: still ART's layout" "object layout,\"Android (instance sizes from the dump" "$cinfo"
check "converted: no heaps" "" "$(printf '%s\n' "$cinfo" | grep '^heap ')"
check "converted: same histogram as the raw dump" "$(ahs ':histogram')" "$(ahs ':histogram' "$CONV")"
check "converted: same retained sizes" "$(ahs ':dominators --top 5' | tr -d '\r')" "$(ahs ':dominators --top 5' "$CONV" | tr -d '\r')"
check "converted: objects have no heap" "109" "$($HEAPSH -c 'objects.filter([o | o.heap = null]).size()' "$CONV")"

# Leak suspects leave the zygote and image heaps out: the boot image's
# 300 KB byte[] (42% of the heap, under java.lang.String's class) is no
# suspect; the ArrayList of LeakActivity objects is.
sus=$($HEAPSH --format csv -l lua/leak_suspects.lua "$ART" --threshold 5 2>&1)
check "android: one suspect" "1" "$(printf '%s\n' "$sus" | tail -n +2 | wc -l | tr -d ' ')"
check_contains "android: the suspect is the app's list" "0x40000 java.util.ArrayList" "$sus"
check "android: the image heap is no suspect" "" "$(printf '%s\n' "$sus" | grep -E '0x20000|0x10200')"
csus=$($HEAPSH --format csv -l lua/leak_suspects.lua "$CONV" --threshold 5 2>&1)
check_contains "converted: without heaps the boot image is a suspect" "java.lang.String" "$csus"

# Several heap dumps in one file: the first by default, said on stderr;
# --dump N and :open FILE --dump N choose; no index for dumps after the first.
out=$($HEAPSH --format csv -c ':histogram Node' "$SEV" 2>"$AD/err"); st=$?
check_status "several: opens" 0 $st
check "several: the first dump" "class,instances,shallow_bytes
Node,2,48" "$out"
check_contains "several: says how many" "holds 3 heap dumps; this is dump 1 (open another with --dump N" "$(cat "$AD/err")"
check "several: --dump 2" "Node,3,72" "$($HEAPSH --format csv --dump 2 -c ':histogram Node' "$SEV" 2>/dev/null | tail -1)"
check_contains "several: --dump 2 info" "heap dumps in the file,3; this is dump 2" "$($HEAPSH --format csv --dump 2 -c ':info' "$SEV" 2>/dev/null)"
check "several: --dump 2 roots are its own" "2" "$($HEAPSH --format csv --dump 2 -c ':info' "$SEV" 2>/dev/null | awk -F, '$1 == "gc roots" { print $2 }')"
rm -f "$SEV.hsidx"
$HEAPSH --dump 2 -c ':dominators' "$SEV" >/dev/null 2>&1
check "several: no index written for dump 2" "no" "$([ -e "$SEV.hsidx" ] && echo yes || echo no)"
out=$($HEAPSH --dump 4 -c ':info' "$SEV" 2>&1); st=$?
check_status "several: --dump past the last fails" 2 $st
check_contains "several: --dump past the last says why" "holds 3 heap dumps; there is no dump 4 (choose one with --dump 1..3)" "$out"
out=$($HEAPSH --dump x -c ':info' "$SEV" 2>&1); st=$?
check_status "several: --dump x fails" 2 $st
check "several: :open --dump" "Node,1,24
Node,2,48" "$(printf ':open %s --dump 3\n:histogram Node\n:open %s\n:histogram Node\n' "$SEV" "$SEV" \
	| $HEAPSH --format csv -f /dev/stdin 2>/dev/null | grep '^Node')"
check "several: a one-dump file says nothing" "" "$($HEAPSH -c ':info' "$ART" 2>&1 >/dev/null)"

# Tab completes the heap names after --heap.
if command -v tmux >/dev/null; then
	SCREEN=$(tmux_screen "HOME=$T $HEAPSH --no-index $ART" "':histogram --heap zy' Tab Enter")
	check_contains "android: --heap completes heap names" ":histogram --heap zygote" "$SCREEN"
	check_contains "android: the completed command ran" "dalvik.system.PathClassLoader" "$SCREEN"
else
	fail "android: --heap completion" "tmux is not installed (make deps installs it)"
fi
