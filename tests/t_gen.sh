# t_gen.sh - bench/gen_hprof writes valid dumps: heapsh opens a small one and
# finds exactly what the generator says it wrote (its summary line and its
# per-class manifest), in several segments, with 8- and 4-byte ids.
GEN=build/bench/gen_hprof
D=$T/gen
mkdir -p "$D"
rm -f "$D"/syn*
if ! make -s "$GEN" >/dev/null; then
	fail "gen: make $GEN"
else
	# gen_count SUMMARY WORD: the number before WORD in the generator's summary
	gen_count() { printf '%s' "$1" | grep -oE "[0-9]+ $2" | head -1 | cut -d' ' -f1; }
	# info_value INFO_CSV PROPERTY
	info_value() { printf '%s\n' "$1" | awk -F, -v k="$2" '$1 == k { print $2 }'; }

	S=$("$GEN" "$D/syn.hprof" --size 20M --seed 7 --segment 4M --manifest "$D/syn.csv" 2>&1)
	check_status "gen: 20M dump written" 0 $?
	bytes=$(stat -c %s "$D/syn.hprof")
	check "gen: summary gives the file size" "$bytes" "$(gen_count "$S" bytes)"
	check "gen: size within 2% of 20M" 1 \
		"$(awk -v b="$bytes" 'BEGIN { d = b / 20971520 - 1; print (d < 0.02 && d > -0.02) }')"
	check "gen: several segments" 1 "$(awk -v n="$(gen_count "$S" segments)" 'BEGIN { print (n >= 4) }')"

	I=$($HEAPSH --format csv -c ':info' "$D/syn.hprof")
	for w in objects instances "object arrays" "primitive arrays" "class objects" references "gc roots"; do
		check "gen: :info $w" "$(gen_count "$S" "$w")" "$(info_value "$I" "$w")"
	done
	check "gen: :info classes" "$(gen_count "$S" classes)" "$(info_value "$I" classes)"
	check "gen: no dangling references" 0 "$(info_value "$I" "dangling references")"
	check "gen: threads" 4 "$(info_value "$I" threads)"

	# dominators: every object reachable or counted unreachable; some garbage
	DI=$($HEAPSH --no-index --format csv -c ':dominators --top 3' -c ':info' "$D/syn.hprof")
	check_status "gen: :dominators" 0 $?
	reach=$(printf '%s\n' "$DI" | sed -n 's/^dominator tree,"computed; \([0-9]*\) objects reachable.*/\1/p')
	unreach=$(printf '%s\n' "$DI" | sed -n 's/^unreachable,"\([0-9]*\) objects.*/\1/p')
	check "gen: reachable + unreachable = objects" "$(gen_count "$S" objects)" "$((reach + ${unreach:-0}))"
	check "gen: some garbage" 1 "$([ "${unreach:-0}" -gt 0 ] && echo 1)"
	check_contains "gen: a registry class dominates a module" "class app." "$DI"

	H=$($HEAPSH --no-index --format csv -c ':histogram' "$D/syn.hprof")
	M=$(cat "$D/syn.csv")
	for c in java.lang.String 'byte[]' java.util.HashMap 'java.util.HashMap$Node' \
		 'java.util.HashMap$Node[]' java.util.ArrayList 'java.lang.Object[]' \
		 'java.util.LinkedList$Node' 'long[]' app.pkg0.Class1 app.pkg7.Class300; do
		check "gen: :histogram $c as written" "$(csv_row "$M" "$c")" "$(csv_row "$H" "$c")"
	done

	"$GEN" "$D/syn2.hprof" --size 20M --seed 7 --segment 4M 2>/dev/null
	check "gen: a seed gives the same bytes" "" "$(cmp "$D/syn.hprof" "$D/syn2.hprof" 2>&1)"
	rm -f "$D/syn2.hprof"

	S4=$("$GEN" "$D/syn4.hprof" --size 3M --seed 3 --ids 4 --classes 300 2>&1)
	I4=$($HEAPSH --no-index --format csv -c ':info' "$D/syn4.hprof")
	check "gen: 4-byte ids: id size" 4 "$(info_value "$I4" "id size")"
	check "gen: 4-byte ids: objects" "$(gen_count "$S4" objects)" "$(info_value "$I4" objects)"
	check "gen: 4-byte ids: references" "$(gen_count "$S4" references)" "$(info_value "$I4" references)"
	rm -f "$D"/syn*.hprof "$D"/syn*.hsidx
fi
