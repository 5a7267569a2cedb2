# t_lua.sh - Lua scripting: the API (module heapsh, heaps, classes, objects,
# lists) checked against KnownHeap's facts and the shell's own commands;
# :lua, :lua ... :end, :luafile and -l with their arguments; expected
# failures (nil, message), errors that leave the session running, values of a
# replaced heap, native functions, print_table's output modes, Ctrl-C; and the
# ready scripts in lua/ on the three dumps of tests/java/LuaHeap.java (its
# KNOWN FACTS), each answer worked out again from the shell's commands.
LU=$T/lua
mkdir -p "$LU" "$JAVA_OUT/luaheap"
cp "$KNOWN" "$LU/k.hprof"
K=$LU/k.hprof
rm -f "$K.hsidx" "$LU"/lua-[123].hprof "$LU"/lua-[123].hprof.hsidx
javac -d "$JAVA_OUT/luaheap" tests/java/LuaHeap.java &&
	java -cp "$JAVA_OUT/luaheap" LuaHeap dump "$LU/lua"
check_status "LuaHeap dumps its heap three times" 0 $?
L1=$LU/lua-1.hprof
L2=$LU/lua-2.hprof
L3=$LU/lua-3.hprof

# hk / hl CMD: one command, csv, on the KnownHeap copy / on the third LuaHeap dump.
hk() { $HEAPSH --format csv -c "$1" "$K"; }
hl() { $HEAPSH --format csv -c "$1" "${2:-$L3}"; }
# field NAME CSV: the second column of the row whose first is NAME.
field() { printf '%s\n' "$2" | awk -F, -v k="$1" '$1 == k { print $2; exit }'; }
# qsum FILTER EXPR: the query language's sum of EXPR (of o) over the objects of
# the third LuaHeap dump that FILTER (of it) keeps.
qsum() { hl "objects.filter([it | $1]).sum([o | $2])" | tail -1; }
# kv NAME: the value the API script printed as NAME=value.
kv() { printf '%s\n' "$API" | awk -v k="$1" 'index($0, k "=") == 1 { print substr($0, length(k) + 2); exit }'; }

# ---------------------------------------------------------------- the API on KnownHeap
cat >"$LU/api.lua" <<'EOF'
local h = assert(heapsh.current())
local function out(k, v) print(k .. "=" .. tostring(v)) end
local function short(o) return (tostring(o):match("^%S+ (.*)$")) end

local order = assert(h:class("Order"))
out("class name", order.name)
out("class count", order.count)
out("class shallow", order.shallow)
out("class instance_size", order.instance_size)
out("class id", string.format("0x%x", order.id))
out("class super", order.super.name)
out("class loader", order.loader.class)
out("class object", short(order.object))
out("class instances", #order:instances())
out("class eq", order == h:class("Order"))
out("tostring class", tostring(order))
local nc, ncm = h:class("NoSuchClass")
out("no class", tostring(nc) .. " / " .. ncm)
local kh = h:class("KnownHeap")
out("static greeting", kh.greeting.text)
out("static orders", kh.orders.length)
out("static nope", kh.nope)

local hist = {}
for _, r in ipairs(h:histogram()) do hist[r.class] = r end
out("histogram Order", hist.Order.count .. "," .. hist.Order.bytes)
out("classes", #h:classes())

local n, sum = 0, 0
for o in h:objects("Order") do n, sum = n + 1, sum + o.status end
out("objects Order", n)
out("sum status", sum)
n = 0 for _ in h:objects(order) do n = n + 1 end
out("objects class value", n)
n = 0 for _ in h:objects("Order*") do n = n + 1 end
out("objects glob", n)
n = 0 for _ in h:objects() do n = n + 1 end
out("objects all", n)
n = 0 for _ in h:objects(nil) do n = n + 1 end
out("objects nil", n)
n = 0 for _ in h:objects("NoSuchClass") do n = n + 1 end
out("objects none", n)

local o7 = kh.orders[8]
out("o7", o7.id .. "," .. o7.status .. "," .. o7.amount .. "," .. o7.customer.text .. "," ..
	tostring(o7.next) .. "," .. o7.class .. "," .. o7.kind)
out("o7 size", o7.size)
out("o7 object_id", string.format("0x%x", o7.object_id))
out("object(id)", h:object(o7.object_id) == o7)
out("object(hex)", h:object(string.format("0x%x", o7.object_id)) == o7)
local no, nom = h:object(12345)
out("no object", tostring(no) .. " / " .. nom)
local nf, nfm = o7:field("nope")
out("no field", tostring(nf) .. " / " .. nfm)
out("field status", o7:field("status"))
out("unknown member", o7.nope)

local primes = kh.primes
out("primes", primes.length .. "," .. primes[1] .. "," .. primes[100] .. "," .. tostring(primes[101]))
local ps = 0
for k = 1, primes.length do ps = ps + primes[k] end
out("primes sum", ps)
out("blob[130]", kh.blob[130])
out("longs[10]", kh.longs[10])
out("chars", kh.chars[1] .. kh.chars[2] .. kh.chars[3])
out("mixed", tostring(kh.mixed[3]) .. "," .. tostring(kh.mixed[4] == kh.orders[1]) .. "," ..
	kh.mixed[1].text)
out("kinds", o7.kind .. "," .. kh.orders.kind .. "," .. primes.kind .. "," .. order.object.kind)
local c2 = kh.children[3]
out("inherited fields", c2.g .. "," .. c2.p .. "," .. c2.c.text)
local m = 0
for k = 1, kh.measures.length do
	local v = kh.measures[k].value
	if v >= 3.141 and v <= 3.142 then m = m + 1 end
end
out("measures", m)

local shared = kh.ownerA.shared
local rc = {}
for r in shared:referrers():iter() do rc[#rc + 1] = r.class end
table.sort(rc)
out("shared referrers", table.concat(rc, ","))
out("owner refs", #kh.ownerA:refs())
out("orders[1] referrers", #kh.orders[1]:referrers())

out("retained Owner class", h:retained(h:class("Owner")))
local owners = h:query("objects.filter([it | it is Owner])")
out("query owners", #owners)
out("retained owners list", h:retained(owners))
out("retained arrays", h:retained({h:class("Owner")}) .. "," .. h:retained({kh.ownerA, kh.ownerB}) .. "," ..
	h:retained({owners, kh.ownerA, h:class("Owner")}) .. "," .. h:retained({}))
out("retained several", table.concat({h:retained(h:class("Owner"), {kh.ownerA}, owners, kh.leaves)}, ","))
out("retained several is each alone", table.concat({h:retained(h:class("Owner"))}, ",") .. "," ..
	h:retained({kh.ownerA}) .. "," .. h:retained(owners) .. "," .. h:retained(kh.leaves))
out("retained bad item", select(2, pcall(h.retained, h, {kh.ownerA, 7})))
out("owner alone", kh.ownerA.retained == kh.ownerA.size and kh.ownerB.retained_size == kh.ownerB.shallow_size)
out("retained object", h:retained(kh.leaves) == kh.leaves.retained)
local leaves, ed = kh.leaves, kh.leaves.elementData
out("leaves size field", leaves.size)
out("leaves retained", leaves.retained_size == leaves.shallow_size + ed.shallow_size + h:class("Leaf").shallow)
out("dominators(leaves)", #h:dominators(leaves) .. "," .. tostring(h:dominators(leaves)[1] == ed))
out("dominators(elementData)", #h:dominators(ed))
local d = h:dominators()
out("dominators first", string.format("0x%x,%d", d[1].object_id, d[1].retained))
local sorted, prev = true, math.huge
for x in d:iter() do
	sorted = sorted and x.retained_size <= prev
	prev = x.retained_size
end
out("dominators sorted", sorted)
out("dominators count", #d)

local p = assert(h:path(o7))
local steps = {}
for s in p:iter() do steps[#steps + 1] = short(s) end
out("path", table.concat(steps, ">"))
out("path ends at the object", p[#p] == o7)

out("query 1+2", h:query("1+2"))
local sevens = h:query("objects.filter([it | it is Order and it.status = 7])")
local st7 = 0
for s in sevens:iter() do st7 = st7 + s.status end
out("query sevens", #sevens .. "," .. st7 .. "," .. tostring(sevens[101]))
local a, b = h:query("1 + 1 2 * 3")
out("query two values", tostring(a) .. "," .. tostring(b))
local qi, qim = h:query("(1 +")
out("query incomplete", tostring(qi) .. " / " .. qim)
local qe, qem = h:query("1 + * 2")
out("query error", tostring(qe) .. " / " .. qem)

local roots = h:roots()
out("roots", #roots)
local hr = {}
for _, r in ipairs(roots) do
	if r.object.class == "Holder" then hr[#hr + 1] = r.kind .. "/" .. tostring(r.thread) end
end
out("holder roots", table.concat(hr, ","))
for _, t in ipairs(h:threads()) do
	if t.name == "heapsh-holder" then
		out("holder thread", t.object.class .. "," ..
			tostring(table.concat(t.frames, ";"):find("HolderThread.run", 1, true) ~= nil))
	end
end
local gs = h:graphstats()
out("graphstats", gs.nodes .. "," .. gs.references .. "," .. gs.gc_roots)
out("dynamic ownerA", kh.ownerA.dynamic_size)
out("list ids", #owners:ids() .. "," .. tostring(owners:ids()[1] == owners[1].object_id))
out("tostring list", tostring(owners))
out("tostring heap", tostring(h):match("^<heap .*: %d+ objects>$") ~= nil)
local ok, cm = pcall(h.close, h)
out("close current", tostring(ok) .. " / " .. cm)
EOF
API=$($HEAPSH -l "$LU/api.lua" "$K" 2>&1)
check_status "the API script runs" 0 $?
OCLS=$(hk ':classes Order' | sed -n 2p)
check "class: name, count (1000 Orders), shallow" "Order 1000 40000" \
	"$(kv 'class name') $(kv 'class count') $(kv 'class shallow')"
check "class: instance_size as :classes" "$(echo "$OCLS" | cut -d, -f4)" "$(kv 'class instance_size')"
check "class: id as :classes" "$(echo "$OCLS" | cut -d, -f1)" "$(kv 'class id')"
check "class: super" "java.lang.Object" "$(kv 'class super')"
check "class: loader (an object)" 'jdk.internal.loader.ClassLoaders$AppClassLoader' "$(kv 'class loader')"
check "class: object, instances(), ==, tostring" "class Order 1000 true class Order" \
	"$(kv 'class object') $(kv 'class instances') $(kv 'class eq') $(kv 'tostring class')"
check "class(name) of no class: nil, message" "nil / no class named 'NoSuchClass'" "$(kv 'no class')"
check "class statics by name: a String, an array, none" "hello heapsh 1000 nil" \
	"$(kv 'static greeting') $(kv 'static orders') $(kv 'static nope')"
check "histogram(): the Order row as :histogram" "$(hk ':histogram Order' | sed -n 2p | cut -d, -f2,3)" \
	"$(kv 'histogram Order')"
check "classes(): every class" "$(field classes "$(hk ':info')")" "$(kv classes)"
check "objects(name): 1000 Orders, status adding up to 4500" "1000 4500" "$(kv 'objects Order') $(kv 'sum status')"
check "objects(class), objects(glob: Order and Order[]), objects(none)" "1000 1001 0" \
	"$(kv 'objects class value') $(kv 'objects glob') $(kv 'objects none')"
check "objects() and objects(nil): every object" "$(field objects "$(hk ':info')") $(field objects "$(hk ':info')")" \
	"$(kv 'objects all') $(kv 'objects nil')"
check "orders[7]: fields (id shadows the built-in), class, kind" "7,7,10.5,customer-7,nil,Order,instance" "$(kv o7)"
O7=$(kv 'o7 object_id')
check "orders[7]: size as :show" "$(field 'shallow size' "$(hk ":show $O7")")" "$(kv 'o7 size')"
KHC=$(hk ':classes KnownHeap' | awk -F, 'NR == 2 { print $1 }')
ORDERS=$(hk ":show $KHC" | awk -F, '$1 == "orders" { split($3, a, " "); print a[1] }')
check "orders[7]: object_id is the id in KnownHeap.orders[7]" \
	"$(hk ":refs $ORDERS" | awk -F, '$1 == "[7]" { print $2 }')" "$O7"
check "object(id) and object(\"0x...\") find it" "true true" "$(kv 'object(id)') $(kv 'object(hex)')"
check "object(id) of no object: nil, message" "nil / no object with id 0x3039 in this heap" "$(kv 'no object')"
check "field(name): nil, message; the value" "nil / class Order has no field 'nope' 7" "$(kv 'no field') $(kv 'field status')"
check "an unknown member is nil" "nil" "$(kv 'unknown member')"
check "arrays: length, o[1], o[100], past the end; 100 primes adding up to 24133" "100,2,541,nil 24133" \
	"$(kv primes) $(kv 'primes sum')"
check "arrays: byte, long, char elements" "-127 9 abc" "$(kv 'blob[130]') $(kv 'longs[10]') $(kv chars)"
check "arrays: null, an object (==), a String" "nil,true,hello heapsh" "$(kv mixed)"
check "kinds" "instance,object array,primitive array,class" "$(kv kinds)"
check "inherited fields (Child extends Parent extends Grandparent)" "2,200,child-2" "$(kv 'inherited fields')"
check "two Measures in 3.141 .. 3.142" 2 "$(kv measures)"
check "referrers(): the two Owners hold the Shared" "Owner,Owner" "$(kv 'shared referrers')"
check "refs(): an Owner's Shared and name; orders[0] has 3 referrers" "2 3" \
	"$(kv 'owner refs') $(kv 'orders[1] referrers')"
OWNER_RET=$(hk ':retained Owner' | awk -F, 'NR == 2 { print $NF }')
check ":retained Owner is the README's 1104" 1104 "$OWNER_RET"
check "retained(class Owner) as :retained Owner" "$OWNER_RET" "$(kv 'retained Owner class')"
check "retained(list of the 2 Owners from a query) as :retained Owner" "2 $OWNER_RET" \
	"$(kv 'query owners') $(kv 'retained owners list')"
check "retained(array): a class, the two Owners, a list + an object + a class (the union), empty" \
	"$OWNER_RET,$OWNER_RET,$OWNER_RET,0" "$(kv 'retained arrays')"
check "retained(a, b, ...): one result per argument, each its own set (the Owner class and the Owners list: :retained Owner)" \
	"$OWNER_RET $OWNER_RET" "$(kv 'retained several' | cut -d, -f1,3 | tr , ' ')"
check "retained(a, b, ...) equals a call each" "$(kv 'retained several is each alone')" "$(kv 'retained several')"

# heap:histogram{by = ..., top = N} (issue 36): the retained histogram as
# :histogram --by retained, the other orders as :histogram's own.
cat >"$LU/histo.lua" <<'EOF2'
local h = heapsh.open(arg[1])
local function rows(t, col)
	local out = {}
	for _, r in ipairs(t) do out[#out + 1] = r.class .. "," .. r.count .. "," .. r.bytes .. (col and "," .. r[col] or "") end
	return table.concat(out, "\n")
end
print(rows(h:histogram{by = "retained", top = 8}, "retained"))
print("--")
print(rows(h:histogram{by = "bytes", top = 5}))
print("--")
print(#h:histogram(), #h:histogram{top = 3})
print(select(2, pcall(h.histogram, h, {by = "size"})))
EOF2
HISTO=$($HEAPSH -l "$LU/histo.lua" "$K" 2>&1)
check "histogram{by = 'retained'}: as :histogram --by retained" \
	"$(hk ':histogram --by retained --top 8' | awk 'NR > 1 && !/^total/')" "$(printf '%s\n' "$HISTO" | sed -n '1,/^--$/p' | sed '$d')"
check "histogram{by = 'bytes'}: as :histogram --by bytes" \
	"$(hk ':histogram --by bytes --top 5' | awk 'NR > 1 && !/^total/')" \
	"$(printf '%s\n' "$HISTO" | awk '/^--$/ { n++; next } n == 1')"
check "histogram(): a row per class with instances; top cuts" \
	"$(hk ':histogram' | awk 'NR > 1 && !/^total/' | wc -l) 3" "$(printf '%s\n' "$HISTO" | awk '/^--$/ { n++; next } n == 2 && NR { print; exit }' | awk '{ print $1 " " $2 }')"
check_contains "histogram{by = 'size'}: says what it takes" "bad option by = 'size' to 'histogram' (count, bytes or retained expected)" "$HISTO"
check_contains "retained(array) with a number in it: the item and what is expected" \
	"bad argument #1 to 'retained' (item 2: an object, a list of objects, a class or an array of them expected, got number)" \
	"$(kv 'retained bad item')"
check "each Owner alone retains itself only; retained(object) = o.retained" "true true" \
	"$(kv 'owner alone') $(kv 'retained object')"
check "leaves: the size field (500); retains itself, its Object[500] and the 500 Leafs" "500 true" \
	"$(kv 'leaves size field') $(kv 'leaves retained')"
check "dominators(object): the ArrayList dominates its array, the array the 500 Leafs" "1,true 500" \
	"$(kv 'dominators(leaves)') $(kv 'dominators(elementData)')"
check "dominators(): the first as :dominators --top 1" \
	"$(hk ':dominators --top 1' | awk -F, 'NR == 2 { print $1 "," $4 }')" "$(kv 'dominators first')"
check "dominators(): largest first, every directly dominated object" \
	"true $(hk ':dominators --top 1000000' | awk 'NR > 1' | wc -l)" "$(kv 'dominators sorted') $(kv 'dominators count')"
check "path(object): as :path, root first" \
	"$(hk ":path $O7" | awk -F, 'NR > 1 && $1 == 1 { printf "%s%s", (n++ ? ">" : ""), $5 }') true" \
	"$(kv path) $(kv 'path ends at the object')"
check "query: a value; 100 Orders of status 7 as a list" "3 100,700,nil" "$(kv 'query 1+2') $(kv 'query sevens')"
check "query: two expressions, two values" "2,6" "$(kv 'query two values')"
check "query: incomplete gives nil, message" \
	"nil / the query is incomplete (an open bracket or a dangling operator)" "$(kv 'query incomplete')"
check_contains "query: an error gives nil, message with line:column" "nil / query error at 1:5:" "$(kv 'query error')"
check "roots(): every GC root" "$(field 'gc roots' "$(hk ':info')")" "$(kv roots)"
check "roots(): the Holder's only root is a Java frame of heapsh-holder" "Java frame/heapsh-holder" "$(kv 'holder roots')"
check "threads(): heapsh-holder, a HolderThread in HolderThread.run" "HolderThread,true" "$(kv 'holder thread')"
GS=$(hk ':graphstats')
check "graphstats() as :graphstats" "$(field nodes "$GS"),$(field 'references followed' "$GS"),$(field 'gc roots' "$GS")" \
	"$(kv graphstats)"
check "dynamic_size as :dynsize" "$(hk ':dynsize Owner' | awk -F, 'NR == 2 { print $5 }')" "$(kv 'dynamic ownerA')"
check "list:ids(), tostring of lists and heaps" "2,true <list of 2 objects> true" \
	"$(kv 'list ids') $(kv 'tostring list') $(kv 'tostring heap')"
check "close() of the shell's heap is an error" \
	"false / the shell's current heap is closed by the shell (:open), not by a script" "$(kv 'close current')"

# ---------------------------------------------------------------- :lua, :luafile, -l
cat >"$LU/args.lua" <<'EOF'
print("arg0=" .. arg[0], "n=" .. select("#", ...), "args=" .. table.concat({...}, "|"))
print("arg1=" .. tostring(arg[1]), "arg2=" .. tostring(arg[2]), "arg3=" .. tostring(arg[3]))
local h, msg = heapsh.current()
print("current=" .. (h and h:class("Order") and h:class("Order").count or tostring(msg)))
print("own=" .. table.concat(heapsh.args(), "|"))
EOF
check "-l: arg[0], arg[1..] (the dump first) and ...; heapsh.args() without the dump" \
	"$(printf 'arg0=%s\tn=3\targs=%s|x y|z\narg1=%s\targ2=x y\targ3=z\ncurrent=1000\nown=x y|z' "$LU/args.lua" "$K" "$K")" \
	"$($HEAPSH -l "$LU/args.lua" "$K" 'x y' z 2>&1)"
check "-l without a dump: heapsh.current() is nil, message; heapsh.args() all the words" \
	"$(printf 'arg0=%s\tn=1\targs=-v\narg1=-v\targ2=nil\targ3=nil\ncurrent=no heap is open in the shell\nown=-v' "$LU/args.lua")" \
	"$($HEAPSH -l "$LU/args.lua" -v 2>&1)"
cat >"$LU/session.hsh" <<'EOF'
:lua x = 41
:lua print("one-liner", x + 1, heapsh.current():class("Order").count)
:lua
local h = heapsh.current()
local n = 0
for o in h:objects("Order") do
  if o.status == 7 then n = n + 1 end
end
print("block", n, x)
:end
:luafile LUDIR/args.lua a "b c"
:lua local function f() error("boom") end f()
:lua print("after the error")
:lua keep = heapsh.current():class("Owner"):instances()[1]
:lua print("before :open", keep.class)
:open LUDIR/lua-1.hprof
:lua print("closed", tostring(keep))
:lua print(keep.size)
:lua print(pcall(function() return keep.size end))
:lua print("new heap", heapsh.current():class("LuaList").count)
objects.count([it | it is LuaGrowing])
:lua print("args after the script", #heapsh.args())
EOF
sed -i "s|LUDIR|$LU|g" "$LU/session.hsh"
$HEAPSH -f "$LU/session.hsh" "$K" >"$LU/session.out" 2>"$LU/session.err"
check_status "a -f session with Lua errors exits with status 2" 2 $?
SOUT=$(cat "$LU/session.out")
SERR=$(cat "$LU/session.err")
check ":lua one-liners, globals kept; a :lua ... :end block; :luafile with arguments (heapsh.args() empty after it); errors leave the session running" \
	"$(printf 'one-liner\t42\t1000\nblock\t100\t41\narg0=%s\tn=2\targs=a|b c\narg1=a\targ2=b c\targ3=nil\ncurrent=1000\nown=a|b c\nafter the error\nbefore :open\tOwner\nclosed\t<object of a closed heap>\nfalse\t%s:19:1: this value belongs to a heap that was closed or replaced\nnew heap\t69\n1000\nargs after the script\t0' "$LU/args.lua" "$LU/session.hsh")" \
	"$SOUT"
check_contains "an error names the line and says why" "$LU/session.hsh:12: lua: $LU/session.hsh:12:1: boom" "$SERR"
check_contains "an error has a traceback" "stack traceback:" "$SERR"
check_contains "the traceback names the function" "in local 'f'" "$SERR"
check_contains "an object of the heap :open replaced: a clear error" \
	"$LU/session.hsh:18: lua: $LU/session.hsh:18:1: this value belongs to a heap that was closed or replaced" "$SERR"

# heapsh.open, close, extern, print_table
printf 'this is not a heap dump\n' >"$LU/garbage.hprof"
cat >"$LU/open.lua" <<'EOF'
local dir = arg[2]
local h, msg = heapsh.open(dir .. "/nosuch.hprof")
print("missing", tostring(h), msg:find(dir .. "/nosuch.hprof", 1, true) ~= nil and
	msg:find("cannot open: No such file or directory", 1, true) ~= nil)
h, msg = heapsh.open(dir .. "/garbage.hprof")
print("garbage", tostring(h), msg ~= nil and msg:find(dir .. "/garbage.hprof", 1, true) ~= nil)
h = assert(heapsh.open(dir .. "/lua-1.hprof"))
local g = h:class("LuaGrowing")
print("open", g.count, h:retained(g) > 0, tostring(h):find("lua-1.hprof", 1, true) ~= nil)
local one = g:instances()[1]
h:close()
print("closed", tostring(h), pcall(function() return one.n end))
print("after close", pcall(function() return h:class("LuaGrowing") end))
local cos = assert(heapsh.extern("libm.so.6", "cos", "(float) : float"))
print("cos", cos(0.0), cos(math.pi))
local bad, bmsg = heapsh.extern("libnosuch.so.9", "cos", "(float) : float")
print("badlib", tostring(bad), bmsg:find("libnosuch.so.9", 1, true) ~= nil)
local nos, nmsg = heapsh.extern("libm.so.6", "no_such_function", "(float) : float")
print("badsym", tostring(nos), nmsg ~= nil)
EOF
check "heapsh.open: nil, message; a heap; close(); extern: libm's cos, nil, message for a bad library or name" \
	"$(printf 'missing\tnil\ttrue\ngarbage\tnil\ttrue\nopen\t1000\ttrue\ttrue\nclosed\t<heap (closed)>\tfalse\t%s:12: this value belongs to a heap that was closed or replaced\nafter close\tfalse\t%s:13: no heap is open here\ncos\t1.0\t-1.0\nbadlib\tnil\ttrue\nbadsym\tnil\ttrue' "$LU/open.lua" "$LU/open.lua")" \
	"$($HEAPSH -l "$LU/open.lua" "$K" "$LU" 2>&1)"
# A heap a script opens uses what it wrote to the index from there, as the
# shell's session after a command (hs_adopt): after the tree is computed,
# the next call maps the tree and the model from the index file.
cp "$KNOWN" "$LU/adopt.hprof"
rm -f "$LU/adopt.hprof.hsidx"
cat >"$LU/adopt.lua" <<'EOF'
local path = arg[2]
local h = assert(heapsh.open(path))
local top = h:dominators()[1]
local ino = io.popen("stat -c %i " .. path .. ".hsidx"):read("l")
local function mapped()	-- mappings of the index file (its inode: it was written unnamed)
	local n = 0
	for l in io.lines("/proc/self/maps") do
		if l:match("^%S+ %S+ %S+ %S+ (%d+)") == ino then n = n + 1 end
	end
	return n
end
local before = mapped()
print(h:dominators()[1] == top, top.retained == h:retained(top), mapped() > before)
EOF
check "heapsh.open: the tree and model it wrote are then mapped from the index" "true	true	true" \
	"$($HEAPSH -l "$LU/adopt.lua" "$K" "$LU/adopt.hprof" 2>&1)"
cat >"$LU/table.lua" <<'EOF'
heapsh.print_table({{name = "a,b", n = 1, x = 2.5}, {name = 'say "hi"', n = -3}, {"third", 7, 0.125}},
	{"name", "n", "x"})
EOF
check "print_table: csv (quoting, nil empty, positional rows)" \
	"$(printf 'name,n,x\n"a,b",1,2.5\n"say ""hi""",-3,\nthird,7,0.125')" "$($HEAPSH --format csv -l "$LU/table.lua" 2>&1)"
check "print_table: json (numbers stay numbers, nil is null)" \
	"$(printf '[\n {"name": "a,b", "n": 1, "x": 2.5},\n {"name": "say \\"hi\\"", "n": -3, "x": null},\n {"name": "third", "n": 7, "x": 0.125}\n]')" \
	"$($HEAPSH --format json -l "$LU/table.lua" 2>&1)"
check "print_table: :format in a session" "$(printf 'name,n,x\n"a,b",1,2.5')" \
	"$(printf ':format csv\n:luafile %s\n' "$LU/table.lua" | $HEAPSH 2>&1 | head -2)"

# Ctrl-C stops a Lua loop; the next command runs.
cat >"$LU/loop.hsh" <<'EOF'
:lua io.stdout:write("looping\n") io.stdout:flush() while true do end
:lua print("after the loop")
objects.count([it | it is Order])
EOF
$HEAPSH -f "$LU/loop.hsh" "$K" >"$LU/loop.out" 2>"$LU/loop.err" &
LOOP_PID=$!
for _ in $(seq 100); do grep -q looping "$LU/loop.out" 2>/dev/null && break; sleep 0.1; done
sleep 0.3
kill -INT "$LOOP_PID" 2>/dev/null
for _ in $(seq 100); do kill -0 "$LOOP_PID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$LOOP_PID" 2>/dev/null; then
	kill "$LOOP_PID"
	fail "Ctrl-C stops a Lua loop" "heapsh still runs 10 s after SIGINT"
else
	wait "$LOOP_PID"
	check "Ctrl-C stops a Lua loop, then the next commands run" "$(printf 'looping\nafter the loop\n1000')" \
		"$(cat "$LU/loop.out")"
	check_contains "Ctrl-C: the loop's error says so" "lua: interrupted" "$(cat "$LU/loop.err")"
fi

# ---------------------------------------------------------------- walking the dominator tree
# h:dominators(o) for every node of the third LuaHeap dump, with an explicit
# stack: every reachable object exactly once; each node's retained size is
# its shallow size plus its children's; the children come largest first, in
# :dominators' order (ties too: the 20,000 LuaEntry of the cache's array
# retain the same each); what the GC roots' children retain adds up to
# every reachable byte.
cat >"$LU/walk.lua" <<'EOF'
local h = assert(heapsh.current())
local top = h:dominators()
local stack, sp, top_bytes, top_ids = {}, 0, 0, {}
for k = 1, #top do
	top_bytes = top_bytes + top[k].retained_size
	top_ids[k] = string.format("0x%x", top[k].object_id)
	sp = sp + 1
	stack[sp] = top[k]
end
local nodes, seen, distinct, bad_sums, widest, wide = 0, {}, 0, 0, nil, -1
while sp > 0 do
	local o = stack[sp]
	stack[sp] = nil
	sp = sp - 1
	nodes = nodes + 1
	if not seen[o.object_id] then
		seen[o.object_id] = true
		distinct = distinct + 1
	end
	local kids = h:dominators(o)
	local sum = o.shallow_size
	for k = 1, #kids do
		sum = sum + kids[k].retained_size
		sp = sp + 1
		stack[sp] = kids[k]
	end
	if sum ~= o.retained_size then bad_sums = bad_sums + 1 end
	if #kids > wide then widest, wide = o, #kids end
end
print("walk", nodes, distinct, top_bytes, bad_sums)
print("top", table.concat(top_ids, " "))
local ids = {}
for c in h:dominators(widest):iter() do ids[#ids + 1] = string.format("0x%x", c.object_id) end
print("widest", string.format("0x%x", widest.object_id), table.concat(ids, " "))
EOF
WALK=$($HEAPSH -l "$LU/walk.lua" "$L3" 2>&1)
WINFO=$(printf ':dominators --top 1\n:info\n' | $HEAPSH --format csv "$L3" | awk -F'"' '/^dominator tree,/ { print $2 }')
WREACH=$(printf '%s\n' "$WINFO" | sed -n 's/.*; \([0-9]*\) objects reachable, \([0-9]*\) bytes$/\1 \1 \2/p')
check "dominator tree walk from Lua: every reachable object once, the roots' children retain every reachable byte, each retained size its shallow size plus its children's" \
	"walk $WREACH 0" "$(printf '%s\n' "$WALK" | awk -F'\t' '$1 == "walk" { print $1, $2, $3, $4, $5 }')"
check "dominator tree walk: h:dominators() in :dominators' order" \
	"$(hl ':dominators --top 1000000' | awk -F, 'NR > 1 { printf "%s%s", (n++ ? " " : ""), $1 }')" \
	"$(printf '%s\n' "$WALK" | awk -F'\t' '$1 == "top" { print $2 }')"
WIDEST=$(printf '%s\n' "$WALK" | awk -F'\t' '$1 == "widest" { print $2 }')
check "dominator tree walk: the node with most children ($WIDEST, 20000 LuaEntry) in :dominators' order, ties included" \
	"20000 $(hl ":dominators $WIDEST --top 1000000" | awk -F, 'NR > 1 { printf "%s%s", (n++ ? " " : ""), $1 }')" \
	"$(printf '%s\n' "$WALK" | awk -F'\t' '$1 == "widest" { print split($3, a, " "), $3 }')"
# Lists from h:dominators are views of the engine's arrays: once their heap
# is closed or replaced they refuse to be read, and so does h:dominators
# with an object of such a heap, or of another heap.
cat >"$LU/views.lua" <<'EOF'
local dir = arg[2]
local h = assert(heapsh.open(dir .. "/lua-1.hprof"))
local top = h:dominators()
local first = top[1]
local kids = h:dominators(first)
print("before", #top > 0, #kids > 0, kids[1] ~= nil)
local other = assert(heapsh.open(dir .. "/lua-2.hprof"))
print("other heap", pcall(other.dominators, other, first))
h:close()
collectgarbage()
print("len", pcall(function() return #top end))
print("index", pcall(function() return kids[1] end))
print("iter", pcall(function() for _ in top:iter() do end end))
print("stale object", pcall(other.dominators, other, first))
EOF
VIEWS=$($HEAPSH -l "$LU/views.lua" "$L3" "$LU" 2>&1)
check "views of the dominator tree: refused once their heap is closed, as objects are" \
	"$(printf 'before\ttrue\ttrue\ttrue\nlen\tfalse\t%s:11: this value belongs to a heap that was closed or replaced\nindex\tfalse\t%s:12: this value belongs to a heap that was closed or replaced\niter\tfalse\t%s:13: this value belongs to a heap that was closed or replaced\nstale object\tfalse\tthis value belongs to a heap that was closed or replaced' \
		"$LU/views.lua" "$LU/views.lua" "$LU/views.lua")" \
	"$(printf '%s\n' "$VIEWS" | grep -v '^other heap')"
check_contains "h:dominators(an object of another heap): an error" "an object of another heap" \
	"$(printf '%s\n' "$VIEWS" | grep '^other heap')"
# h:path and h:retained take objects, lists and classes of their own heap only:
# the indexes of another heap would read other objects, or past the end.
cat >"$LU/other.lua" <<'EOF'
local dir = arg[2]
local a = assert(heapsh.open(dir .. "/lua-1.hprof"))
local b = assert(heapsh.open(dir .. "/lua-3.hprof"))
local o = b:dominators()[1]
local list = b:dominators()
local cls = assert(b:class("LuaEntry"))
for _, t in ipairs({{"path", o}, {"retained", o}, {"retained", list}, {"retained", cls},
                    {"retained", {o, list}}}) do
  local ok, msg = pcall(a[t[1]], a, t[2])
  print(t[1], ok, (tostring(msg):gsub("^.*: ", "")))
end
print("own heap", b:path(o) ~= nil, b:retained(cls) > 0)
EOF
check "h:path and h:retained refuse an object, list or class of another heap" \
"path	false	an object, list or class of another heap
retained	false	an object, list or class of another heap
retained	false	an object, list or class of another heap
retained	false	an object, list or class of another heap
retained	false	an object, list or class of another heap
own heap	true	true" "$($HEAPSH -l "$LU/other.lua" "$L3" "$LU" 2>&1)"

# ---------------------------------------------------------------- lua/leak_suspects.lua
# The script prints h:suspects(), the rows of the built-in :suspects
# (tests/t_suspects.sh tests the finding itself); here: the two agree, and
# the Lua API hands out what the rows say.
for args in "" "--threshold 5" "--threshold 5 --child 60" "--threshold 0.5"; do
	for d in "$L3" "$K"; do
		# shellcheck disable=SC2086
		check "leak_suspects $args on $(basename "$d"): the rows of :suspects" \
			"$($HEAPSH --format csv -c ":suspects $args" "$d")" \
			"$($HEAPSH --format csv -l lua/leak_suspects.lua "$d" $args)"
	done
done
REGION=$(hl 'objects.filter([it | it is LuaRegion])' | awk -F, 'NR == 2 { print $1 }')
ENTRIES=$(hl ":refs $REGION" | awk -F, '$1 == "entries" { print $2 }')
ELEMENTS=$(hl ":refs $ENTRIES" | awk -F, '$1 == "elementData" { print $2 }')
LHC=$(hl ':classes LuaHeap' | awk -F, 'NR == 2 { print $1 }')
CLASS_RET=$(hl ":retained $LHC" | awk -F, 'NR == 2 { print $NF }')
# the suspect is class LuaHeap (dominated by the GC roots), its chain of
# dominators ends at the ArrayList's array
check "leak_suspects: LuaHeap's suspect: 20,000 LuaEntry in the ArrayList of static LuaHeap.cache.region.entries" \
	"1,$CLASS_RET,20000,$ELEMENTS java.lang.Object[],$ENTRIES java.util.ArrayList,static LuaHeap.cache.region.entries" \
	"$($HEAPSH --format csv -l lua/leak_suspects.lua "$L3" | awk 'NR == 2' | sed 's/^[0-9]*,"[^"]*",/&/' |
		awk -F'",' '{ split($2, r, ","); print "1," r[1] "," r[3] "," r[4] "," r[5] "," r[6] }')"
cat > "$LU/sus.lua" <<'LUA'
local h = heapsh.current()
local s = assert(h:suspects({threshold = 5}))
local first = s[1]
print(#s > 0, first.rank, first.piled, first.objects)
print(first.path[#first.path].object_id == first.accumulation_point.object_id, #first.members)
print(first.accumulation_point.label)
print(pcall(h.suspects, h, {threshold = 0}))
LUA
check "h:suspects(): rank, pile, path ending at the accumulation point, members, label; a bad percentage is an error" \
"true	1	LuaEntry	20000
true	1
java.lang.Object[]
false	suspects: threshold must be a percentage above 0 and up to 100" \
	"$($HEAPSH -l "$LU/sus.lua" "$L3" 2>&1)"
check_contains "leak_suspects: a bad option is an error" "unknown argument '--bogus'" \
	"$($HEAPSH -l lua/leak_suspects.lua "$K" --bogus 2>&1)"
check_contains "options (lua/lib/script.lua): a percentage out of range, with the usage" \
	"$(printf -- '--threshold takes a percentage (0 to 100)\nusage: heapsh -l lua/collections.lua')" \
	"$($HEAPSH -l lua/collections.lua "$K" --threshold 200 2>&1)"
check_contains "options: a count that is not a whole number" "--top takes a whole number" \
	"$($HEAPSH -l lua/duplicate_strings.lua "$K" --top 2.5 2>&1)"
check_contains "options: a word where a script takes none" "unknown argument 'extra'" \
	"$($HEAPSH -l lua/collections.lua "$K" extra 2>&1)"
check_contains "options: an option classloaders does not know (its other words are patterns)" \
	"unknown argument '--x'" "$($HEAPSH -l lua/classloaders.lua "$K" 'Order*' --x 2>&1)"

# ---------------------------------------------------------------- lua/classloaders.lua
CL=$($HEAPSH --format csv -l lua/classloaders.lua "$K" 'Order*' Owner java.util 'java.util.*' 2>&1)
INFO=$(hk ':info')
acct() { printf '%s\n' "$CL" | awk -F, -v k="$1" '$1 == "account" && $2 == k { print $3 "," $4 "," $5 "," $6 }'; }
check "classloaders: account Owner = :retained Owner (2 Owners, 1104 bytes together)" \
	"1,$(hk ':retained Owner' | awk -F, 'NR == 2 { print $1 "," $3 "," $4 }')" "$(acct Owner)"
check "classloaders: account Order* = :retained 'Order*' (Order and Order[])" \
	"2,$(hk ':retained Order*' | awk -F, 'NR == 2 { print $1 "," $3 "," $4 }')" "$(acct 'Order*' | cut -d, -f1-4)"
UTIL=$(hk ':classes java.util.*' | awk -F, 'NR > 1 { n = substr($2, 11); if (index(n, ".")) { s++; si += $3 } else { d++; di += $3 } } END { print d "," di " " s "," si }')
check "classloaders: 'java.util' takes the package's own classes, 'java.util.*' its subpackages" \
	"$UTIL" "$(acct java.util | cut -d, -f1,2) $(acct 'java.util.*' | cut -d, -f1,2)"
check "classloaders: accounts and (other) add up to every object and every shallow byte" \
	"$(field objects "$INFO"),$(field 'shallow bytes' "$INFO")" \
	"$(printf '%s\n' "$CL" | awk -F, '$1 == "account" { n += $4; b += $5 } END { print n "," b }')"
check "classloaders: the loaders add up to every class and object" \
	"$(field classes "$INFO"),$(field objects "$INFO"),$(field 'shallow bytes' "$INFO")" \
	"$(printf '%s\n' "$CL" | awk -F, '$1 == "loader" { c += $3; n += $4; b += $5 } END { print c "," n "," b }')"
APP=$(hk ':classes' | awk -F, 'NR > 1 && $6 ~ /AppClassLoader/ { n++; i += $3; split($6, a, " "); id = a[1] } END { print id "," n "," i }')
APP_ID=${APP%%,*}
check "classloaders: the app loader: name, classes and instances as :classes, its own retained size as :retained" \
	"$APP_ID jdk.internal.loader.ClassLoaders\$AppClassLoader (app),${APP#*,},$(hk ":retained $APP_ID" | awk -F, 'NR == 2 { print $NF }')" \
	"$(printf '%s\n' "$CL" | awk -F, '$1 == "loader" && $2 ~ /AppClassLoader/ { print $2 "," $3 "," $4 "," $8 }')"

# ---------------------------------------------------------------- lua/duplicate_strings.lua
DS=$($HEAPSH --format csv -l lua/duplicate_strings.lua "$L3" --top 0 2>&1)
dup_row() {  # TEXT SHOWN LENGTH COUNT: the row duplicate_strings.lua must print
	local total=$(hl "objects.filter([it | it is java.lang.String and it = \"$1\"]).sum([s | s.shallow_size + s.value.shallow_size])" | tail -1)
	echo "$2,$3,$4,$((total / $4)),$total,$((total - total / $4))"
}
LONG=long-$(printf 'x%.0s' $(seq 95))
check "duplicate_strings: 40 copies of dup-40 (bytes as the query language adds them)" \
	"$(dup_row dup-40 dup-40 6 40)" "$(printf '%s\n' "$DS" | grep '^dup-40,')"
check "duplicate_strings: 7 copies of dup-7" "$(dup_row dup-7 dup-7 5 7)" "$(printf '%s\n' "$DS" | grep '^dup-7,')"
check "duplicate_strings: a long text, cut at 40 characters" \
	"$(dup_row "$LONG" "${LONG:0:40}..." 100 3)" "$(printf '%s\n' "$DS" | grep '^long-')"
S4=$(qsum 'it is java.lang.String and it = "shared-4"' 'o.shallow_size')
A4=$(hl 'objects.first([it | it is java.lang.String and it = "shared-4"]).value.shallow_size' | tail -1)
check "duplicate_strings: 4 copies of shared-4 sharing one byte[]: the array counted once" \
	"shared-4,8,4,$((S4 / 4 + A4)),$((S4 + A4)),$((S4 * 3 / 4))" "$(printf '%s\n' "$DS" | grep '^shared-4,')"
check "duplicate_strings: most wasted first, only texts with 2 copies or more" "ok" \
	"$(printf '%s\n' "$DS" | awk -F, 'NR > 1 { if ((NR > 2 && $NF > prev) || $3 < 2) bad = 1; prev = $NF } END { print bad ? "bad" : "ok" }')"
check "duplicate_strings --top 2 --width 3" "$(printf 'text,length,count,copy_bytes,total_bytes,wasted_bytes\n%s\n%s' \
	"$(printf '%s\n' "$DS" | sed -n 2p | awk -F, -v OFS=, '{ if (length($1) > 3) $1 = substr($1, 1, 3) "..."; print }')" \
	"$(printf '%s\n' "$DS" | sed -n 3p | awk -F, -v OFS=, '{ if (length($1) > 3) $1 = substr($1, 1, 3) "..."; print }')")" \
	"$($HEAPSH --format csv -l lua/duplicate_strings.lua "$L3" --top 2 --width 3 2>&1)"

# ---------------------------------------------------------------- lua/collections.lua
CO=$($HEAPSH --format csv -l lua/collections.lua "$L3" 2>&1)
OOP=$(field 'object header' "$(hl ':info')" | sed 's/.*(oops \([48]\) bytes.*/\1/')
crow() { printf '%s\n' "$CO" | grep "^$1,"; }
check "collections: LuaList: 30 empty (their Object[10]) and 5 (a shared Object[0]), 20 under 25% (95 slots each)" \
	"LuaList,ArrayList,69,35,20,2200,$(( $(qsum 'it is LuaList and it.size = 0 and it.elementData.length = 10' 'o.elementData.shallow_size') + 20 * 95 * OOP ))" \
	"$(crow LuaList)"
check "collections: LuaMap: 8 empty without a table, 12 with 1 entry in 16 slots" \
	"LuaMap,HashMap,20,8,12,180,$((12 * 15 * OOP))" "$(crow LuaMap)"
check "collections: LuaLinkedMap: 2 with 1 entry in 16 slots" \
	"LuaLinkedMap,LinkedHashMap,2,0,2,30,$((2 * 15 * OOP))" "$(crow LuaLinkedMap)"
check "collections: LuaSet: 5 empty with their map's table" \
	"LuaSet,HashSet,5,5,0,80,$(qsum 'it is LuaSet' 'o.map.table.shallow_size')" "$(crow LuaSet)"
check "collections: LuaDeque: 4 empty with their elements array, 3 with 2 elements (head wrapped around)" \
	"LuaDeque,ArrayDeque,7,4,3,$(( $(qsum 'it is LuaDeque' 'o.elements.length') - 6 )),$(( $(qsum 'it is LuaDeque and it.head = it.tail' 'o.elements.shallow_size') + ($(qsum 'it is LuaDeque and it.head != it.tail' 'o.elements.length') - 6) * OOP ))" \
	"$(crow LuaDeque)"
check "collections: LuaVector: 6 empty with their Object[10]" \
	"LuaVector,Vector,6,6,0,60,$(qsum 'it is LuaVector' 'o.elementData.shallow_size')" "$(crow LuaVector)"
check "collections: LuaConcMap: 2 empty without a table, 3 with 1 entry in 16 slots" \
	"LuaConcMap,ConcurrentHashMap,5,2,3,45,$((3 * 15 * OOP))" "$(crow LuaConcMap)"
check "collections: the JDK's empty ArrayLists as the query language counts them" \
	"$(hl 'objects.count([it | it.class.name = "java.util.ArrayList" and it.size = 0])' | tail -1)" \
	"$(crow java.util.ArrayList | cut -d, -f4)"
check "collections: the total row adds up the rows" "ok" \
	"$(printf '%s\n' "$CO" | awk -F, 'NR > 1 && $1 != "total" { for (i = 3; i <= 7; i++) s[i] += $i } $1 == "total" { for (i = 3; i <= 7; i++) if ($i != s[i]) bad = 1; t = 1 } END { print (t && !bad) ? "ok" : "bad" }')"

# ---------------------------------------------------------------- lua/diff.lua
DF=$($HEAPSH --format csv -l lua/diff.lua "$L1" "$L2" "$L3" --all 2>"$LU/diff.err")
check_status "diff of three dumps runs" 0 $?
hsum() { hl ":histogram $1" "$2" | awk -F, -v c="$1" '$1 == c { print $3 }'; }
rsum() { hl ":retained $1" "$2" | awk -F, 'NR == 2 { print $NF }'; }
drow() {  # CLASS COUNTS... TREND: the row diff.lua must print
	local c=$1 c1=$2 c2=$3 c3=$4 tr=$5 s1 s2 s3 r1 r2 r3
	s1=$(hsum "$c" "$L1"); s2=$(hsum "$c" "$L2"); s3=$(hsum "$c" "$L3")
	r1=$(rsum "$c" "$L1"); r2=$(rsum "$c" "$L2"); r3=$(rsum "$c" "$L3")
	echo "$c,$c1,$c2,$c3,$s1,$s2,$s3,$r1,$r2,$r3,$((c3 - c1)),$((s3 - s1)),$((r3 - r1)),$tr,$tr"
}
check "diff: LuaGrowing, 1000 more at every step, comes first" "$(drow LuaGrowing 1000 2000 3000 grows)" \
	"$(printf '%s\n' "$DF" | sed -n 2p)"
check "diff: LuaShrinking shrinks" "$(drow LuaShrinking 300 200 100 shrinks)" "$(printf '%s\n' "$DF" | grep '^LuaShrinking,')"
check "diff: LuaSteady is flat" "$(drow LuaSteady 50 50 50 flat)" "$(printf '%s\n' "$DF" | grep '^LuaSteady,')"
check "diff: LuaBumpy is mixed" "$(drow LuaBumpy 10 30 20 mixed)" "$(printf '%s\n' "$DF" | grep '^LuaBumpy,')"
check "diff: the dumps named on stderr" "$(printf 'dump 1: %s\ndump 2: %s\ndump 3: %s' "$L1" "$L2" "$L3")" "$(cat "$LU/diff.err")"
check "diff: in a session, the current heap is the first dump; --no-retained" \
	"LuaGrowing,1000,3000,$(hsum LuaGrowing "$L1"),$(hsum LuaGrowing "$L3"),-,-,2000,$(( $(hsum LuaGrowing "$L3") - $(hsum LuaGrowing "$L1") )),-,grows,grows" \
	"$(printf ':format csv\n:luafile lua/diff.lua %s --no-retained --top 1\n' "$L3" | $HEAPSH "$L1" 2>/dev/null | sed -n 2p)"
check_contains "diff: one dump is not enough" "diff needs two dumps or more" "$($HEAPSH -l lua/diff.lua "$L1" 2>&1)"
check_contains "diff: a dump that cannot be read" "cannot open dump 2: $LU/nosuch.hprof" \
	"$($HEAPSH -l lua/diff.lua "$L1" "$LU/nosuch.hprof" 2>&1)"
