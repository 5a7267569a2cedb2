# t_report.sh - the HTML report (:report, heapsh --report): written by both,
# one self-contained page (nothing outside it: no URL, no src=, no <link>, no
# script), every section, each figure as the shell's own commands give it,
# the texts of tests/java/ReportHeap.java (hostile to HTML) escaped, errors;
# then what a real browser makes of it: headless Chromium's DOM (the suspects
# table's rows, the pie chart's slices, no element from the heap's texts) and
# its screenshot (a PNG of the size asked for, not blank, the chart's colours).
R=$T/report
mkdir -p "$R"
rm -f "$R"/*.hprof "$R"/*.hsidx "$R"/*.html "$R"/*.png
javac -d "$JAVA_OUT" tests/java/LeakShop.java tests/java/ReportHeap.java &&
	java -cp "$JAVA_OUT" LeakShop dump "$R/leak.hprof" &&
	java -cp "$JAVA_OUT" ReportHeap dump "$R/hostile.hprof"
check_status "LeakShop and ReportHeap dump their heaps" 0 $?

out=$($HEAPSH --no-index -c ":report $R/leak.html" -c ':info' "$R/leak.hprof" 2>"$R/err")
check_status ":report: exit 0" 0 $?
check_contains ":report: says where it wrote" "report written to $R/leak.html" "$out"
check_contains ":report: the session goes on" "gc roots" "$out"
check ":report: nothing on stderr" "" "$(cat "$R/err")"
$HEAPSH --no-index --report "$R/hostile.html" "$R/hostile.hprof" >"$R/out" 2>"$R/err"
check_status "--report: exit 0" 0 $?
check "--report: nothing on stderr" "" "$(cat "$R/err")"
check "--report: says where it wrote" "report written to $R/hostile.html" "$(cat "$R/out")"

for p in leak hostile; do
	H=$R/$p.html
	check "$p: an HTML page" "<!DOCTYPE html>" "$(head -1 "$H")"
	check "$p: it ends" "</html>" "$(tail -1 "$H")"
	check "$p: self-contained: no URL" "" "$(grep -oiE '(https?|ftp|file|data):' "$H" | sort -u)"
	check "$p: self-contained: no src=, <link>, <script>, <iframe>, @import, url()" "" \
		"$(grep -oiE '<[a-z][^>]*[[:space:]]src=|<link|<script|<iframe|<object|<embed|@import|url\(' "$H" | sort -u)"
	check "$p: links only to its own sections" "" "$(grep -oE 'href="[^"]*"' "$H" | grep -v '^href="#')"
	for s in summary dominators suspects classes duplicates collections; do
		check "$p: section $s" 1 "$(grep -c "<section id=\"$s\">" "$H")"
		check_contains "$p: the contents link to $s" "href=\"#$s\"" "$(cat "$H")"
	done
done

# The figures are the shell's.
L=$R/leak.hprof
lk() { $HEAPSH --format csv -c "$1" "$L"; }
commas() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'; }
LH=$(cat "$R/leak.html")
check_contains "summary: the objects, as :info counts them" \
	"<tr><th>Objects</th><td>$(lk ':info' | awk -F, '$1 == "objects" { print $2 }' | commas)<" "$LH"
check_contains "summary: the GC roots" \
	"<tr><th>GC roots</th><td>$(lk ':info' | awk -F, '$1 == "gc roots" { print $2 }' | commas)<" "$LH"
check_contains "summary: the JDK" "$(lk ':info' | awk -F, '$1 == "jdk" { print $2 }' | tr -d '"')" "$LH"
check "suspects: one row per suspect of :suspects" \
	"$(( $(lk ':suspects' | wc -l) - 1 ))" "$(grep -c '<tr class="suspect">' "$R/leak.html")"
check "suspects: LeakShop's four leaks" 4 "$(grep -c '<tr class="suspect">' "$R/leak.html")"
check_contains "suspects: the cache's path ends in the field table" \
	"<li><code>table</code> &rarr; <code>" "$LH"
check_contains "suspects: the path starts at a GC root" "(GC root: system class)" "$LH"
check_contains "suspects: the description, \`...\` as code" \
	"are held by <code>HashMap</code> in <code>static LeakShop.PRICE_CACHE</code>" "$LH"
TOPDOM=$(lk ':dominators --top 1' | sed -n 2p | cut -d, -f1)
check_contains "dominators: the largest first, as :dominators" \
	"<tr class=\"legend\"><td><span class=\"sw\" style=\"background:#4e79a7\"></span><code>$TOPDOM</code>" "$LH"
check "dominators: 10 slices and other" 11 "$(grep -c 'class="slice"' "$R/leak.html")"
check_contains "classes: the largest as :histogram --by retained" \
	"<tr class=\"class\"><td><code>$(lk ':histogram --by retained --top 1' | sed -n 2p | cut -d, -f1)</code>" "$LH"
check "classes: 20 rows" 20 "$(grep -c '<tr class="class">' "$R/leak.html")"
check "collections: one row per row of :collections, and the total" \
	"$(( $(lk ':collections' | wc -l) - 2 ))" "$(grep -c '<tr class="coll">' "$R/leak.html")"

# Texts from the heap are escaped.
HH=$(cat "$R/hostile.html")
check_contains "hostile: the duplicate text, escaped" \
	"<code>&lt;script&gt;alert(&#39;heapsh&#39;)&lt;/script&gt; &amp; &quot;quoted&quot; &lt;b&gt;bold&lt;/b&gt;</code>" "$HH"
check_contains "hostile: the thread's name in the dominators, escaped" \
	"ReportHeap\$Hoarder &quot;&lt;img src=x onerror=alert(1)&gt; &amp; worker&quot;" "$HH"
check "hostile: no tag of the heap's texts" "" "$(grep -oiE '<(script|img|b)[ >]' "$R/hostile.html" | sort -u)"
check "hostile: the suspect is the hoarding thread" 1 "$(grep -c '<tr class="suspect">' "$R/hostile.html")"

# Errors: said, status 2, the session goes on; no half-written page.
out=$(printf ':report /nonexistent-dir/x.html\n:info\n' | $HEAPSH --no-index "$L" 2>"$R/err")
check_status ":report to an unwritable path: exit 2" 2 $?
check_contains ":report to an unwritable path: says why" \
	"cannot write the report to '/nonexistent-dir/x.html': No such file or directory" "$(cat "$R/err")"
check_contains ":report to an unwritable path: the session goes on" "gc roots" "$out"
$HEAPSH --no-index --report /nonexistent-dir/x.html "$L" >/dev/null 2>"$R/err"
check_status "--report to an unwritable path: exit 2" 2 $?
check_contains "--report to an unwritable path: says why" "cannot write the report" "$(cat "$R/err")"
$HEAPSH --report "$R/none.html" 2>"$R/err"
check_status "--report without a dump: exit 2" 2 $?
check_contains "--report without a dump: says so" "--report needs a dump" "$(cat "$R/err")"
check "--report without a dump: no file" no "$([ -e "$R/none.html" ] && echo yes || echo no)"
$HEAPSH --no-index -c ':report' "$L" 2>"$R/err"
check_status ":report without a file: exit 2" 2 $?
check_contains ":report without a file: the usage" "usage: :report FILE.html" "$(cat "$R/err")"
check_contains ":report without a heap" "no heap" "$($HEAPSH -c ":report $R/x.html" 2>&1)"

# A real browser: Chromium's DOM and screenshot.
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
	echo "skip t_report.sh browser checks: $CHROMIUM is not installed (make deps installs chromium)"
	return 0 2>/dev/null || exit 0
fi
# chromium_run ARGS...: headless, no sandbox (containers), a throwaway profile, 60 s at most.
chromium_run() {
	local prof
	prof=$(mktemp -d "${TMPDIR:-/tmp}/heapsh-chromium.XXXXXX")
	HOME=$prof timeout 60 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$prof" "$@" 2>"$R/chromium.err"
	local st=$?
	rm -rf "$prof"
	return $st
}
for p in leak hostile; do
	chromium_run --dump-dom "file://$PWD/$R/$p.html" >"$R/$p.dom"
	check_status "chromium: $p: the DOM dumped" 0 $?
	python3 tests/check_report.py dom "$R/$p.dom" >"$R/$p.facts"
	fact() { awk -v k="$1" 'index($0, k "=") == 1 { print substr($0, length(k) + 2); exit }' "$R/$p.facts"; }
	check "chromium: $p: every section" "summary,dominators,suspects,classes,duplicates,collections" \
		"$(fact sections)"
	check "chromium: $p: the pie chart has 10 slices and other" 11 "$(fact slices)"
	check "chromium: $p: the legend has a row per slice" 11 "$(fact legend)"
	check "chromium: $p: no script, img, link, iframe or b element" "" "$(fact banned)"
done
p=leak
check "chromium: leak: the suspects table has a row per suspect" 4 "$(fact suspects)"
p=hostile
check "chromium: hostile: one suspect" 1 "$(fact suspects)"
check "chromium: hostile: the duplicate text shows as text" \
	"<script>alert('heapsh')</script> & \"quoted\" <b>bold</b>" "$(fact first_duplicate)"
chromium_run --screenshot="$PWD/$R/leak.png" --window-size=1200,2000 "file://$PWD/$R/leak.html" >/dev/null
check_status "chromium: the screenshot taken" 0 $?
SHOT=$(python3 tests/check_report.py png "$R/leak.png" 1200 2000 4e79a7 f28e2b e15759 76b7b2 59a14f)
check_status "chromium: a 1200x2000 PNG, not blank, with the chart's colours" 0 $?
check_contains "chromium: the screenshot's verdict" "verdict=ok" "$SHOT"
