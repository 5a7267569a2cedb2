# t_model.sh - the known contents of tests/java/KnownHeap.java, through the shell.
hs() { $HEAPSH --format csv -c "$1" "$KNOWN"; }

# Shallow sizes from the 64-bit HotSpot layout with compressed oops:
# 12-byte header, 4-byte references, rounded up to 8.
check "histogram Order"     "Order,1000,40000"    "$(csv_row "$(hs ':histogram Order')" Order)"
check "histogram Leaf"      "Leaf,500,16000"      "$(csv_row "$(hs ':histogram Leaf')" Leaf)"
check "histogram Shared"    "Shared,1,16"         "$(csv_row "$(hs ':histogram Shared')" Shared)"
check "histogram Owner"     "Owner,2,48"          "$(csv_row "$(hs ':histogram Owner')" Owner)"
check "histogram CycleNode" "CycleNode,3,72"      "$(csv_row "$(hs ':histogram CycleNode')" CycleNode)"
check "histogram Measure"   "Measure,4,96"        "$(csv_row "$(hs ':histogram Measure')" Measure)"
check "histogram Child"     "Child,7,224"         "$(csv_row "$(hs ':histogram Child')" Child)"
check "histogram Holder"    "Holder,1,16"         "$(csv_row "$(hs ':histogram Holder')" Holder)"
check "histogram csv header" "class,instances,shallow_bytes" "$(hs ':histogram Order' | head -1)"
check "histogram glob" "Grandparent Parent" \
	"$(hs ':classes *arent' | tail -n +2 | cut -d, -f2 | sort | tr '\n' ' ' | sed 's/ $//')"

# Statics of class KnownHeap, and what they point to.
static_of() { hs ':show '"$KH" | awk -F, -v f="$1" '$1 == f { print $3 }'; }
KH=$(hs ':classes KnownHeap' | awk -F, 'NR == 2 { print $1 }')
check_contains "class KnownHeap found" "0x" "$KH"
check_contains "static greeting is the string" 'java.lang.String ""hello heapsh""' "$(static_of greeting)"

ORDERS=$(static_of orders | cut -d' ' -f1)
check_contains "orders array" "Order[]" "$(static_of orders)"
check "orders length" "1000" "$(hs ":show $ORDERS" | awk -F, '$1 == "length" { print $2 }')"
O7=$(hs ":show $ORDERS --all" | awk -F, '$1 == "7" { print $2 }' | cut -d' ' -f1)
O7SHOW=$(hs ":show $O7")
check "order 7 id"     "id,long,7,Order"        "$(printf '%s\n' "$O7SHOW" | grep '^id,long,')"
check "order 7 status" "status,int,7,Order"     "$(printf '%s\n' "$O7SHOW" | grep '^status,')"
check "order 7 amount" "amount,double,10.5,Order" "$(printf '%s\n' "$O7SHOW" | grep '^amount,')"
check_contains "order 7 customer" 'java.lang.String ""customer-7""' "$(printf '%s\n' "$O7SHOW" | grep '^customer,')"
check "order 7 shallow size" "shallow size,40" "$(printf '%s\n' "$O7SHOW" | grep '^shallow size,')"

PRIMES=$(static_of primes | cut -d' ' -f1)
check "primes length" "100" "$(hs ":show $PRIMES" | awk -F, '$1 == "length" { print $2 }')"
check "primes[0..4]" "2 3 5 7 11" "$(hs ":show $PRIMES" | awk -F, '$1 ~ /^[0-4]$/ { print $2 }' | tr '\n' ' ' | sed 's/ $//')"
check "primes[99]" "541" "$(hs ":show $PRIMES" | awk -F, '$1 == "99" { print $2 }')"
check "int[100] shallow" "shallow size,416" "$(hs ":show $PRIMES" | grep '^shallow size,')"
BLOB=$(static_of blob | cut -d' ' -f1)
check "byte[1000] shallow" "shallow size,1016" "$(hs ":show $BLOB" | grep '^shallow size,')"
check "blob[200] is (byte)200" "-56" "$(hs ":show $BLOB --all" | awk -F, '$1 == "200" { print $2 }')"
CHARS=$(static_of chars | cut -d' ' -f1)
check "chars" "'a' 'b' 'c'" "$(hs ":show $CHARS" | awk -F, '$1 ~ /^[0-2]$/ { print $2 }' | tr '\n' ' ' | sed 's/ $//')"
MIXED=$(static_of mixed | cut -d' ' -f1)
check "mixed[2] is null" "null" "$(hs ":show $MIXED" | awk -F, '$1 == "2" { print $2 }')"

# References: the cycle 1 -> 2 -> 3 -> 1, seen from both ends.
C1=$(static_of cycle | cut -d' ' -f1)
C2=$(hs ":refs $C1" | awk -F, '$1 == "next" { print $2 }')
C3=$(hs ":refs $C2" | awk -F, '$1 == "next" { print $2 }')
check "cycle closes" "$C1" "$(hs ":refs $C3" | awk -F, '$1 == "next" { print $2 }')"
check "cycle n values" "n,int,1,CycleNode n,int,2,CycleNode n,int,3,CycleNode" \
	"$(for c in $C1 $C2 $C3; do hs ":show $c" | grep '^n,'; done | tr '\n' ' ' | sed 's/ $//')"
check "referrers of node 1" "next,$C3 static cycle,$KH" \
	"$(hs ":referrers $C1" | tail -n +2 | cut -d, -f1,2 | sort | tr '\n' ' ' | sed 's/ $//')"

# Shared has two owners; inherited fields of Child.
SHARED=$(hs ":refs $(static_of ownerA | cut -d' ' -f1)" | awk -F, '$1 == "shared" { print $2 }')
check "Shared has two referrers" "2" "$(hs ":referrers $SHARED" | tail -n +2 | grep -c '^shared,')"
CHILDREN=$(static_of children | cut -d' ' -f1)
CH0=$(hs ":show $CHILDREN" | awk -F, '$1 == "0" { print $2 }' | cut -d' ' -f1)
check "Child fields with declaring classes" "c String Child|p long Parent|g int Grandparent" \
	"$(hs ":show $CH0" | awk -F, 'f { printf "%s%s %s %s", s, $1, ($2 == "object" ? "String" : $2), $4; s = "|" } $1 == "field" { f = 1 }')"

# The holder thread's stack frame holds the Holder.
HOLDER_ROOT=$(hs ':roots frame' | grep ',Holder,heapsh-holder,')
check_contains "Holder is a frame root of heapsh-holder" "HolderThread.run" "$HOLDER_ROOT"
check_contains "thread listed" "heapsh-holder" "$(hs ':threads')"

# :info
INFO=$(hs ':info')
check_contains "info format" "format,JAVA PROFILE 1.0.2" "$INFO"
check_contains "info jdk" "jdk,\"17." "$INFO"
check_contains "info oops" "object header,12 bytes (oops 4 bytes" "$INFO"
check_contains "info dangling count" "dangling references," "$INFO"

# Forced oop size changes the layout: 16-byte header, 8-byte references.
# JDK 17 (layout of JDK 15 on): 8-byte references keep the 12-byte header
# (compressed class pointers), as -XX:-UseCompressedOops does: 48 bytes.
check "--oops 8 Order size" "Order,1000,48000" "$(csv_row "$($HEAPSH --oops 8 --format csv -c ':histogram Order' "$KNOWN")" Order)"

# JSON output parses and holds the same numbers.
check "json histogram" "Order 1000 40000" \
	"$($HEAPSH --format json -c ':histogram Order' "$KNOWN" | python3 -c 'import json,sys; r=json.load(sys.stdin)[0]; print(r["class"], r["instances"], r["shallow_bytes"])')"
