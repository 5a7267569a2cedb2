# t_waste.sh - :duplicates and :collections (src/engine/waste.c) against the
# Lua scripts whose definitions they take (lua/duplicate_strings.lua,
# lua/collections.lua): the same CSV, byte for byte, with every option, on
# KnownHeap's dump, on dumps of tests/java/LeakShop.java and
# tests/java/ReportHeap.java (and LuaHeap's third dump when t_lua.sh made it);
# then ReportHeap's KNOWN FACTS and the commands' errors.
W=$T/waste
mkdir -p "$W"
rm -f "$W/leak.hprof" "$W/report.hprof"
javac -d "$JAVA_OUT" tests/java/LeakShop.java tests/java/ReportHeap.java &&
	java -cp "$JAVA_OUT" LeakShop dump "$W/leak.hprof" &&
	java -cp "$JAVA_OUT" ReportHeap dump "$W/report.hprof"
check_status "LeakShop and ReportHeap dump their heaps" 0 $?

# w_same NAME DUMP COMMAND SCRIPT ARGS...: the command and the script print the same CSV.
w_same() {
	local name=$1 dump=$2 cmd=$3 script=$4 c l
	shift 4
	c=$($HEAPSH --no-index --format csv -c "$cmd $*" "$dump" 2>&1)
	l=$($HEAPSH --no-index --format csv -l "$script" "$dump" "$@" 2>&1)
	if [ "$(printf '%s\n' "$c" | wc -l)" -lt 2 ]; then
		fail "$name: rows" "$c"
	else
		check "$name" "$l" "$c"
	fi
}
W_DUMPS=("$KNOWN" "$W/leak.hprof" "$W/report.hprof")
[ -f "$T/lua/lua-3.hprof" ] && W_DUMPS+=("$T/lua/lua-3.hprof")
for d in "${W_DUMPS[@]}"; do
	b=$(basename "$d")
	for a in "" "--top 0" "--top 0 --min-count 1" "--top 5 --width 3" "--min-count 5 --top 0" \
		 "--width 0 --top 4"; do
		w_same ":duplicates $a = duplicate_strings.lua on $b" "$d" :duplicates \
			lua/duplicate_strings.lua $a
	done
	for a in "" "--all" "--threshold 50" "--threshold 0 --all" "--threshold 100" "--threshold 12.5"; do
		w_same ":collections $a = collections.lua on $b" "$d" :collections lua/collections.lua $a
	done
done
check "JSON too: :duplicates = duplicate_strings.lua on ReportHeap" \
	"$($HEAPSH --no-index --format json -l lua/duplicate_strings.lua "$W/report.hprof" --top 3)" \
	"$($HEAPSH --no-index --format json -c ':duplicates --top 3' "$W/report.hprof")"

# ReportHeap's facts (its texts at the edges of UTF-8 are compared with the script above).
RH=$W/report.hprof
OOP=$($HEAPSH --no-index --format csv -c ':info' "$RH" | sed -n 's/^object header,.*(oops \([48]\) bytes.*/\1/p')
check "ReportHeap: the reference size is known" yes "$(case $OOP in 4|8) echo yes;; esac)"
read -r STR ARR < <($HEAPSH --no-index -c ':lua local s = heapsh.current():class("ReportHeap").COPIES[1]; print(s.shallow_size, s.value.shallow_size)' "$RH")
DUP=$($HEAPSH --no-index --format csv -c ':duplicates --width 100' "$RH")
HOSTILE="<script>alert('heapsh')</script> & \"\"quoted\"\" <b>bold</b>"
check "ReportHeap: the hostile text is the most wasted, 50 copies, each String and its byte[]" \
	"\"$HOSTILE\",55,50,$((STR + ARR)),$((50 * (STR + ARR))),$((49 * (STR + ARR)))" \
	"$(printf '%s\n' "$DUP" | sed -n 2p)"
check "ReportHeap: sorted by wasted bytes, then count" ok \
	"$(printf '%s\n' "$DUP" | awk -F, 'NR > 2 { if ($NF > p || ($NF == p && $(NF-3) > c)) bad = 1 } NR > 1 { p = $NF; c = $(NF-3) } END { print bad ? "bad" : "ok" }')"
check "ReportHeap: a surrogate pair is one character; control characters escaped" \
	"$(printf 'emoji \360\237\230\200 pair,12,3\nline\\nbreak\\ttab\\rret\\x01ctl\\x7Fdel,26,3')" \
	"$(printf '%s\n' "$DUP" | grep -aE '^(emoji|line)' | cut -d, -f1-3 | sort)"
check "ReportHeap: a text with a lone surrogate is not UTF-8: its length in bytes, as Lua's" \
	"$(printf 'lone \355\240\200 surrogate \355\260\200,22,3')" "$(printf '%s\n' "$DUP" | grep -a '^lone' | cut -d, -f1-3)"
check ":duplicates --min-count 51: no text has 51 copies in this small heap" \
	"text,length,count,copy_bytes,total_bytes,wasted_bytes" \
	"$($HEAPSH --no-index --format csv -c ':duplicates --min-count 51' "$RH")"
COLL=$($HEAPSH --no-index --format csv -c ':collections' "$RH")
check "ReportHeap: 30 empty Bags on the shared empty array (no waste), 20 with 1 element in 100 slots" \
	"ReportHeap\$Bag,ArrayList,50,30,20,1980,$((1980 * OOP))" "$(csv_row "$COLL" 'ReportHeap$Bag')"
check "ReportHeap: 5 empty Indexes without a table, 10 with 1 entry in 64 slots" \
	"ReportHeap\$Index,HashMap,15,5,10,630,$((630 * OOP))" "$(csv_row "$COLL" 'ReportHeap$Index')"
check "ReportHeap: at 1%, 1 element in 100 slots is not sparse" \
	"ReportHeap\$Bag,ArrayList,50,30,0,0,0" \
	"$(csv_row "$($HEAPSH --no-index --format csv -c ':collections --threshold 1 --all' "$RH")" 'ReportHeap$Bag')"
check "ReportHeap: the total adds up the rows" ok \
	"$(printf '%s\n' "$COLL" | awk -F, 'NR > 1 && $1 != "total" { for (i = 3; i <= 7; i++) s[i] += $i } $1 == "total" { for (i = 3; i <= 7; i++) if ($i != s[i]) bad = 1; t = 1 } END { print (t && !bad) ? "ok" : "bad" }')"
TAB=$($HEAPSH --no-index -c ':duplicates --top 1' "$RH")
check_contains ":duplicates in a table says what the rows add up to" \
	"texts held by 2 or more Strings waste" "$TAB"

# Errors: said, status 2, the session goes on.
for bad in ':duplicates --top' ':duplicates --top -1' ':duplicates --top x' ':duplicates --frob' \
	   ':collections --threshold 101' ':collections --threshold' ':collections extra'; do
	out=$(printf '%s\n:info\n' "$bad" | $HEAPSH --no-index --format csv "$RH" 2>"$W/err")
	st=$?
	check_status "$bad: exit 2" 2 "$st"
	check "$bad: one error on stderr" 1 "$(grep -c . "$W/err")"
	check_contains "$bad: the session goes on" "gc roots," "$out"
done
check_contains ":collections --threshold 101 says what it takes" "--threshold takes a percentage (0 to 100)" \
	"$($HEAPSH --no-index -c ':collections --threshold 101' "$RH" 2>&1)"
check_contains ":duplicates without a heap" "no heap" "$($HEAPSH -c ':duplicates' 2>&1)"
