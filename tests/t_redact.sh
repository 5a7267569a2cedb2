# t_redact.sh - heapsh --redact: the secrets tests/java/SecretHeap.java plants
# (Strings Latin-1 and UTF-16, a char[], a byte[], long fields, a static long,
# a thread's name) are in its jcmd dumps and gone from the redacted copies in
# every encoding (tests/redact_search.py), but for what --keep keeps; every
# structural answer is the same on the copy as on the dump, in heapsh and in
# VisualVM's heap library; gzip in and out; bad input and bad OUT fail
# cleanly, leaving nothing behind. JDK 17 and, when installed, JDK 25.
R=$T/redact
rm -rf "$R"
mkdir -p "$R"
javac --release 17 -d "$JAVA_OUT" tests/java/SecretHeap.java || { fail "compile SecretHeap"; return; }

# secrets FILE: redact_search.py's "NAME COUNT" lines, as one line.
secrets() { python3 tests/redact_search.py "$1" | tr '\n' ' '; }
# zero LINE: the names whose count is 0.
zero() { printf '%s\n' $1 | paste - - | awk '$2 == 0 { printf "%s ", $1 }'; }
# not_zero LINE [NAMES...]: the names whose count is not 0, but for NAMES.
not_zero() {
	local line=$1 skip=" ${*:2} "
	printf '%s\n' $line | paste - - | while read -r n c; do
		[ "$c" != 0 ] && [ "${skip/ $n /}" = "$skip" ] && printf '%s ' "$n"
	done
	true
}
# ask DUMP COMMAND: the command's csv output (the index left alone).
ask() { $HEAPSH --no-index --format csv -c "$2" "$1" 2>&1; }
# unquoted: csv on stdin with the Java strings heapsh quotes in its text
# ("app", a String's start) as "…": text is what a copy does not keep.
unquoted() {
	python3 -c '
import csv, re, sys
w = csv.writer(sys.stdout, lineterminator="\n")
for row in csv.reader(sys.stdin):
    w.writerow([re.sub(r"\"(?:[^\"\\]|\\.)*\"", "\"…\"", f) for f in row])'
}

redact_jdk() {	# NAME JAVA_HOME_BIN
	local v=$1 bin=$2 word pid
	local D=$R/$v
	mkdir -p "$D"
	coproc SH { exec "$bin/java" -cp "$JAVA_OUT" SecretHeap; }
	read -r -t 60 word pid <&"${SH[0]}"
	if [ "${word:-}" != ready ]; then
		fail "$v: SecretHeap started" "got '${word:-} ${pid:-}'"
		return
	fi
	"$bin/jcmd" "$pid" GC.heap_dump "$PWD/$D/orig.hprof" >/dev/null
	"$bin/jcmd" "$pid" GC.heap_dump -gz=1 "$PWD/$D/orig.hprof.gz" >/dev/null
	echo quit >&"${SH[1]}"
	wait "$SH_PID" 2>/dev/null

	# The secrets are there to find: every search below could fail.
	check "$v: every planted secret is in the dump" "" "$(zero "$(secrets "$D/orig.hprof")")"
	check "$v: every planted secret is in the gzip'd dump" "" "$(zero "$(secrets "$D/orig.hprof.gz")")"

	local in out
	for in in orig.hprof orig.hprof.gz; do
		for out in red.hprof red.hprof.gz; do
			local o=$D/${in%%.*}-${in#*.}-$out
			$HEAPSH --redact "$D/$in" "$o" 2>"$D/err"
			check_status "$v: --redact $in $out exits 0" 0 $?
			check_contains "$v: --redact $in $out says what it did" "value bytes zeroed" "$(cat "$D/err")"
			check "$v: no secret in $in redacted to $out (Latin-1, UTF-8, UTF-16BE/LE, long BE)" \
				"" "$(not_zero "$(secrets "$o")")"
		done
	done
	gzip -dc "$D/orig.hprof.gz" > "$D/gunzipped.hprof"
	$HEAPSH --redact "$D/gunzipped.hprof" "$D/gunzipped-red.hprof" 2>/dev/null
	check "$v: a gzip'd dump gives the copy its gunzipped self gives" "" \
		"$(cmp "$D/gunzipped-red.hprof" "$D/orig-hprof.gz-red.hprof" 2>&1)"
	check "$v: the .gz copy is gzip" "1f8b" "$(head -c 2 "$D/orig-hprof-red.hprof.gz" | od -An -tx1 | tr -d ' \n')"
	check "$v: the .gz copy holds the plain copy" "" \
		"$(gzip -dc "$D/orig-hprof-red.hprof.gz" | cmp - "$D/orig-hprof-red.hprof" 2>&1)"
	check "$v: the copy is as long as the dump (every record in place)" \
		"$(stat -c %s "$D/orig.hprof")" "$(stat -c %s "$D/orig-hprof-red.hprof")"
	local red=$D/orig-hprof-red.hprof

	$HEAPSH --redact --keep-lengths "$D/orig.hprof" "$D/len.hprof" 2>/dev/null
	check "$v: --keep-lengths: no secret" "" "$(not_zero "$(secrets "$D/len.hprof")")"
	local vault
	vault=$($HEAPSH --no-index -c ':path SecretHeap$Vault' "$D/len.hprof" | grep -o '0x[0-9a-f]*  SecretHeap\$Vault' | cut -d' ' -f1)
	check_contains "$v: --keep-lengths: a Latin-1 String's length shows (21 x's)" \
		'java.lang.String "xxxxxxxxxxxxxxxxxxxxx"' "$($HEAPSH --no-index -c ":show $vault" "$D/len.hprof" | grep -a token)"
	check_contains "$v: --keep-lengths: a UTF-16 String's length shows (19 chars: String.coder kept)" \
		'java.lang.String "硸硸硸硸硸硸硸硸硸硸硸硸硸硸硸硸硸硸硸"' "$($HEAPSH --no-index -c ":show $vault" "$D/len.hprof" | grep -a password)"
	local pin
	pin=$($HEAPSH --no-index -c ":show $vault" "$D/len.hprof" | grep -a '^pin' | grep -o '0x[0-9a-f]*')
	check "$v: --keep-lengths: the char[] holds 15 'x'" "15 'x'" \
		"$($HEAPSH --no-index --format csv -c ":show $pin --all" "$D/len.hprof" | awk -F, '$1 ~ /^[0-9]+$/ { n++; v = v == "" || v == $2 ? $2 : "mixed" } END { print n, v }')"
	check "$v: zeroed, the card long is 0" "card,long,0" \
		"$($HEAPSH --no-index --format csv -c ":show $vault" "$red" | grep -a '^card' | cut -d, -f1-3)"

	$HEAPSH --redact "$D/orig.hprof" "$D/keep.hprof" --keep 'SecretHeap$KeptBox' \
		--keep 'java.lang.Thread*' 2>/dev/null
	check "$v: --keep: KeptBox's String and long and the thread's name stay, nothing else" \
		"label thread number " "$(not_zero "$(secrets "$D/keep.hprof")" NONE)"
	check_contains "$v: --keep with a pattern no class matches says so" \
		"no class of the dump matched --keep" \
		"$($HEAPSH --redact "$D/orig.hprof" "$D/keep-none.hprof" --keep 'java/lang/Thread' 2>&1)"
	check "$v: --keep 'java.lang.Thread*': thread names read as in the dump" \
		"$(ask "$D/orig.hprof" ':threads')" "$(ask "$D/keep.hprof" ':threads')"

	# Every structural answer is the same on the copy.
	local c
	for c in ':histogram' ':histogram --retained' ':dominators --top 40' \
		 ':dominators --by-class --top 40' ':retained SecretHeap$Holder' \
		 ':retained SecretHeap$Vault' ':path SecretHeap$Vault' \
		 ':path SecretHeap$Holder --all 5' ':roots'; do
		check "$v: '$c' is the same on the copy" "$(ask "$D/orig.hprof" "$c")" "$(ask "$red" "$c")"
	done
	# Suspects name objects by their text too (a loader's name, a String's
	# start): the same but for the text in quotes, and all the same where
	# --keep kept the strings it shows.
	check "$v: ':suspects --threshold 1' is the same on the copy but for quoted strings" \
		"$(ask "$D/orig.hprof" ':suspects --threshold 1' | unquoted)" \
		"$(ask "$red" ':suspects --threshold 1' | unquoted)"
	check_contains "$v: ... and that leaves text to compare (entry counts: kept)" "entries (" \
		"$(ask "$red" ':suspects --threshold 1' | unquoted)"
	check "$v: ':suspects' is the same on the copy" \
		"$(ask "$D/orig.hprof" ':suspects')" "$(ask "$red" ':suspects')"
	# :info but its first lines (file name, size on disk): oop size, layout, JDK.
	check "$v: :info is the same on the copy (oops, layout, JDK)" \
		"$(ask "$D/orig.hprof" ':info' | grep -v '^file')" "$(ask "$red" ':info' | grep -v '^file')"
	check_contains "$v: :info on the copy still tells the JDK" "jdk," "$(ask "$red" ':info')"
	check "$v: the gzip'd copy opens with the same histogram" \
		"$(ask "$D/orig.hprof.gz" ':histogram')" "$(ask "$D/orig-hprof.gz-red.hprof.gz" ':histogram')"

	# VisualVM's heap library reads the copy and counts the same.
	if [ -n "${VV_CP:-}" ]; then
		java -cp "$VV_CP:$R/vv" VisualVMHistogram "$D/orig.hprof" > "$D/vv-orig.csv" 2>/dev/null
		java -cp "$VV_CP:$R/vv" VisualVMHistogram "$red" > "$D/vv-red.csv" 2>"$D/vv.err"
		check_status "$v: VisualVM opens the copy" 0 $?
		check "$v: VisualVM's histogram of the copy is the dump's" "" \
			"$(diff "$D/vv-orig.csv" "$D/vv-red.csv" | head -5)"
		check_contains "$v: VisualVM's histogram has our classes" 'SecretHeap$Vault,1,' \
			"$(cat "$D/vv-red.csv")"
	fi
}

VV_CP=$(sh tests/visualvm-classpath.sh 2>/dev/null) || VV_CP=
if [ -n "$VV_CP" ]; then
	mkdir -p "$R/vv"
	javac -cp "$VV_CP" -d "$R/vv" tests/java/VisualVMHistogram.java || VV_CP=
fi
[ -n "$VV_CP" ] || fail "VisualVM's heap library for t_redact" "install visualvm (make deps)"

redact_jdk jdk17 "$(dirname "$(readlink -f "$(command -v java)")")"
if [ -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/java ]; then
	redact_jdk jdk25 /usr/lib/jvm/temurin-25-jdk-amd64/bin
else
	echo "skip jdk25: /usr/lib/jvm/temurin-25-jdk-amd64 not installed"
fi

# Bad input and bad OUT: exit 2, a message that says what and where, no OUT left.
D=$R/jdk17
head -c 1000000 "$D/orig.hprof" > "$R/cut.hprof"
out=$($HEAPSH --redact "$R/cut.hprof" "$R/cut-red.hprof" 2>&1)
check_status "truncated dump: exit 2" 2 $?
check_contains "truncated dump: says truncated" "truncated" "$out"
check_contains "truncated dump: says where" "at byte " "$out"
check "truncated dump: no OUT and no temporary file left" "" "$(ls "$R" | grep cut-red)"
head -c 300000 "$D/orig.hprof.gz" > "$R/cut.hprof.gz"
out=$($HEAPSH --redact "$R/cut.hprof.gz" "$R/cut-red.hprof.gz" 2>&1)
check_status "truncated gzip'd dump: exit 2" 2 $?
check_contains "truncated gzip'd dump: says truncated" "truncated" "$out"
check "truncated gzip'd dump: no OUT left" "" "$(ls "$R" | grep cut-red)"
printf 'this is not a heap dump, only text\n%.0s' {1..10} > "$R/text.hprof"
out=$($HEAPSH --redact "$R/text.hprof" "$R/text-red.hprof" 2>&1)
check_status "not a dump: exit 2" 2 $?
check_contains "not a dump: says so, at byte 0" "not an HPROF heap dump (no \"JAVA PROFILE 1.0.x\" header); make one with 'jcmd PID GC.heap_dump FILE' (at byte 0" "$out"
check "not a dump: no OUT left" "" "$(ls "$R" | grep text-red)"
# A record tag no dump has, in an otherwise good dump: refused, not copied.
python3 - "$D/orig.hprof" "$R/tag.hprof" <<'EOF'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
d[31] = 0x77    # the first record's tag
open(sys.argv[2], "wb").write(d)
EOF
out=$($HEAPSH --redact "$R/tag.hprof" "$R/tag-red.hprof" 2>&1)
check_status "unknown record tag: exit 2" 2 $?
check_contains "unknown record tag: refused, at its offset" "unknown record tag 0x77: heapsh --redact copies only records it knows hold no values (this one could hold anything) (at byte 31" "$out"
out=$($HEAPSH --redact "$D/orig.hprof" "$R/no/such/folder/red.hprof" 2>&1)
check_status "OUT in a folder that does not exist: exit 2" 2 $?
check_contains "OUT in a folder that does not exist: says so" "cannot create the copy: No such file or directory" "$out"
cp "$D/orig.hprof" "$R/same.hprof"
out=$($HEAPSH --redact "$R/same.hprof" "$R/./same.hprof" 2>&1)
check_status "IN == OUT: exit 2" 2 $?
check_contains "IN == OUT: refused" "the copy cannot replace the dump it is made from" "$out"
check "IN == OUT: the dump is untouched" "" "$(cmp "$R/same.hprof" "$D/orig.hprof" 2>&1)"
echo "OUT was here" > "$R/kept.hprof"
$HEAPSH --redact "$R/cut.hprof" "$R/kept.hprof" 2>/dev/null
check "a failed run leaves an existing OUT as it was" "OUT was here" "$(cat "$R/kept.hprof")"
out=$($HEAPSH --redact "$D/orig.hprof" 2>&1)
check_status "--redact without OUT: exit 2" 2 $?
check_contains "--redact without OUT: usage" "usage: heapsh --redact IN OUT" "$out"

# Android's dumps (tests/unit/write_dumps.c: raw ART with its HEAP DUMP INFO
# and NODATA arrays, after hprof-conv, several dumps in one file): the same
# answers on the copy.
make -s "${BUILD:-build}/unit/write_dumps" >/dev/null || fail "write_dumps builds"
for k in android converted several; do
	"${BUILD:-build}/unit/write_dumps" "$k" "$R/$k.hprof" || { fail "write_dumps $k"; continue; }
	$HEAPSH --redact "$R/$k.hprof" "$R/$k-red.hprof" 2>/dev/null
	check_status "$k dump: --redact exits 0" 0 $?
	for c in ':histogram' ':histogram --retained' ':dominators' ':roots'; do
		check "$k dump: '$c' is the same on the copy" "$(ask "$R/$k.hprof" "$c")" \
			"$(ask "$R/$k-red.hprof" "$c" | sed "s|$R/$k-red.hprof|$R/$k.hprof|g")"
	done
	check "$k dump: :info is the same on the copy" "$(ask "$R/$k.hprof" ':info' | grep -v '^file')" \
		"$(ask "$R/$k-red.hprof" ':info' | grep -v '^file' | sed "s|$R/$k-red.hprof|$R/$k.hprof|g")"
done
