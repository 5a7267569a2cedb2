# t_bad_input.sh - damaged and wrong files: a clear message, exit status 2,
# never a crash; a truncated dump loads what is complete.
B=$T/bad
mkdir -p "$B"

# run_bad NAME FILE COMMAND: sets OUT, ERR, ST
run_bad() {
	OUT=$($HEAPSH --format csv -c "$3" "$2" 2>"$B/err"); ST=$?
	ERR=$(cat "$B/err")
}

printf 'hello, I am not a heap dump\n' > "$B/text.hprof"
run_bad "text" "$B/text.hprof" ":info"
check_status "not HPROF: exit 2" 2 "$ST"
check_contains "not HPROF: says so" "not an HPROF heap dump" "$ERR"
check_contains "not HPROF: offset" "byte offset 0" "$ERR"
check_contains "not HPROF: what to do" "jcmd PID GC.heap_dump" "$ERR"

: > "$B/empty.hprof"
run_bad "empty" "$B/empty.hprof" ":info"
check_status "empty file: exit 2" 2 "$ST"
check_contains "empty file: says so" "not an HPROF heap dump" "$ERR"

run_bad "missing" "$B/no-such-file.hprof" ":info"
check_status "missing file: exit 2" 2 "$ST"
check_contains "missing file: says so" "No such file or directory" "$ERR"

run_bad "directory" "$B" ":info"
check_status "directory: exit 2" 2 "$ST"
check_contains "directory: says so" "not a regular file" "$ERR"

# Header only: a valid header with no records.
head -c 31 "$KNOWN" > "$B/header.hprof"
run_bad "header only" "$B/header.hprof" ":info"
check_status "header only: exit 2" 2 "$ST"
check_contains "header only: says no heap dump records" "no heap dump records" "$ERR"

# Bad identifier size.
{ head -c 19 "$KNOWN"; printf '\0\0\0\5'; tail -c +24 "$KNOWN" | head -c 1000; } > "$B/idsize.hprof"
run_bad "id size" "$B/idsize.hprof" ":info"
check_status "id size 5: exit 2" 2 "$ST"
check_contains "id size 5: says so" "identifier size 5 is not supported" "$ERR"

# Truncated in the middle: loads the complete part, warns how much was lost.
SIZE=$(stat -c %s "$KNOWN")
head -c $((SIZE * 2 / 3)) "$KNOWN" > "$B/truncated.hprof"
run_bad "truncated" "$B/truncated.hprof" ":info"
check_status "truncated: exit 2" 2 "$ST"
check_contains "truncated: warns" "truncated" "$ERR"
check_contains "truncated: says bytes lost" "bytes were not read" "$ERR"
check_contains "truncated: gives an offset" "byte offset" "$ERR"
OBJS=$(printf '%s\n' "$OUT" | awk -F, '$1 == "objects" { print $2 }')
ALL=$($HEAPSH --format csv -c ':info' "$KNOWN" | awk -F, '$1 == "objects" { print $2 }')
if [ -n "$OBJS" ] && [ "$OBJS" -gt 0 ] && [ "$OBJS" -lt "$ALL" ]; then
	ok "truncated: loaded $OBJS of $ALL objects"
else
	fail "truncated: loaded part of the objects" "got '$OBJS' of '$ALL'"
fi

# Truncated gzip stream.
gzip -c "$KNOWN" > "$B/known.hprof.gz"
GZ=$(stat -c %s "$B/known.hprof.gz")
head -c $((GZ / 2)) "$B/known.hprof.gz" > "$B/truncated.hprof.gz"
run_bad "truncated gz" "$B/truncated.hprof.gz" ":info"
check_status "truncated gzip: exit 2" 2 "$ST"
check_contains "truncated gzip: warns" "truncated" "$ERR"

# A record whose length runs past the end: the first record's length, huge.
python3 - "$KNOWN" "$B/longrec.hprof" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read(4096))
d[31 + 5:31 + 9] = (0x7ffffff0).to_bytes(4, 'big')
open(sys.argv[2], 'wb').write(d)
PY
run_bad "long record" "$B/longrec.hprof" ":info"
check_status "record past the end: exit 2" 2 "$ST"
check_contains "record past the end: says so" "past the end of the file" "$ERR"
check_contains "record past the end: offset of the record" "byte offset 31" "$ERR"

# An unknown sub-record tag inside a heap dump segment.
python3 - "$KNOWN" "$B/badtag.hprof" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
p = 31
while p < len(d):
    tag, ln = d[p], int.from_bytes(d[p + 5:p + 9], 'big')
    if tag == 0x1c:
        d[p + 9] = 0x77    # the segment's first sub-record
        break
    p += 9 + ln
open(sys.argv[2], 'wb').write(d)
PY
run_bad "bad tag" "$B/badtag.hprof" ":info"
check_status "unknown sub-record: exit 2" 2 "$ST"
check_contains "unknown sub-record: says so" "unknown heap dump sub-record tag 0x77" "$ERR"

# An id that points nowhere.
run_bad "bad id" "$KNOWN" ":show 0xdeadbeef"
check_status "unknown id: exit 2" 2 "$ST"
check_contains "unknown id: says so" "no object with id 0xdeadbeef" "$ERR"
run_bad "not an id" "$KNOWN" ":show banana"
check_status "malformed id: exit 2" 2 "$ST"
check_contains "malformed id: says so" "'banana' is not an object id" "$ERR"

# Random damage: flip bytes all over a dump; heapsh must exit 0 or 2, never
# die of a signal or hang. (The shell is timed out at 20 s per run.)
python3 - "$KNOWN" "$B/fuzz" <<'PY'
import random, sys
src = open(sys.argv[1], 'rb').read()
rnd = random.Random(20261122)
for k in range(40):
    d = bytearray(src)
    for _ in range(rnd.choice([1, 4, 32])):
        d[rnd.randrange(31, len(d))] = rnd.randrange(256)
    if k % 5 == 0:
        d = d[:rnd.randrange(31, len(d))]
    open('%s%02d.hprof' % (sys.argv[2], k), 'wb').write(d)
PY
crashes=0
for f in "$B"/fuzz*.hprof; do
	timeout 20 $HEAPSH -c ':histogram --top 3' "$f" >/dev/null 2>&1
	st=$?
	if [ $st -ne 0 ] && [ $st -ne 2 ]; then
		crashes=$((crashes + 1))
		echo "     $f: exit status $st"
	fi
done
check "randomly damaged dumps: no crash or hang" 0 "$crashes"

# After an error the shell goes on with the next command.
OUT=$(printf ':show 0x1\n:histogram Order\n' | $HEAPSH --format csv "$KNOWN" 2>&1)
check_contains "shell goes on after an error" "Order,1000,40000" "$OUT"
check_contains "error names the input line" "<stdin>:1" "$OUT"

# A dump or index cut short while the shell has it open: reading the part
# that is gone says which file changed and stops with status 2, no crash
# (src/base/filemap.h). The shell reads its commands from a FIFO, so the
# file is cut between two of them.
# cut_while_open FILE KEEP FIRST THEN DUMP: run FIRST, cut FILE to KEEP
# bytes, then THEN; sets OUT, ERR, ST.
cut_while_open() {
	local fifo=$B/cmds
	rm -f "$fifo"
	mkfifo "$fifo"
	timeout 60 $HEAPSH --format csv "$5" <"$fifo" >"$B/cut.out" 2>"$B/cut.err" &
	local pid=$!
	exec 7>"$fifo"
	printf '%s\n"first-done"\n' "$3" >&7
	for _ in $(seq 300); do
		grep -q first-done "$B/cut.out" 2>/dev/null && break
		sleep 0.1
	done
	truncate -s "$2" "$1"
	printf '%s\n' "$4" >&7
	exec 7>&-
	wait "$pid"
	ST=$?
	OUT=$(cat "$B/cut.out")
	ERR=$(cat "$B/cut.err")
}
cp "$KNOWN" "$B/cut.hprof"
cut_while_open "$B/cut.hprof" 4096 ':histogram Order' \
	'objects.exists([it | it is Order and it.status = 7])' "$B/cut.hprof"
check_status "dump cut while open: exit 2" 2 "$ST"
check_contains "dump cut while open: the first command's answer" "Order,1000,40000" "$OUT"
check_contains "dump cut while open: names the file" "$B/cut.hprof changed on disk while heapsh had it open" "$ERR"
check_contains "dump cut while open: the byte read" "reading its byte" "$ERR"
check_contains "dump cut while open: what to do" "open the file again" "$ERR"

cp "$KNOWN" "$B/cut2.hprof"
rm -f "$B/cut2.hprof.hsidx"
$HEAPSH -c ':dominators --top 1' "$B/cut2.hprof" >/dev/null 2>&1	# writes the index
cut_while_open "$B/cut2.hprof.hsidx" 4096 ':dominators --top 1' ':retained Owner' "$B/cut2.hprof"
check_status "index cut while open: exit 2" 2 "$ST"
check_contains "index cut while open: names the index" "$B/cut2.hprof.hsidx changed on disk while heapsh had it open" "$ERR"
