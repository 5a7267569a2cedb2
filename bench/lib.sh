# bench/lib.sh - what the benchmark scripts share, sourced by bench/dyn.sh,
# bench/live.sh and bench/lua.sh (after they set FAILURES, an array of
# "what failed" lines).

# failures_md [TITLE]: the failures as a Markdown list under TITLE (default
# "Failures:"); nothing when there were none.
failures_md() {
	[ ${#FAILURES[@]} -gt 0 ] || return 0
	echo
	echo "**${1:-Failures:}**"
	echo
	printf -- '- %s\n' "${FAILURES[@]}"
}

# summary_section SCRIPT FILE: replace SCRIPT's section of the Markdown FILE
# (the lines between "<!-- SCRIPT begin -->" and "<!-- SCRIPT end -->") with
# the text on stdin, appended at the end; the file is made if missing. Ends
# with a line on the failures, if any.
summary_section() {
	local begin="<!-- $1 begin -->" end="<!-- $1 end -->" file=$2
	if [ -f "$file" ]; then
		awk -v b="$begin" -v e="$end" '$0 == b { skip = 1 } !skip { print } $0 == e { skip = 0 }' \
			"$file" >"$file.tmp" && mv -f "$file.tmp" "$file"
	fi
	{
		echo "$begin"
		echo
		cat
		[ ${#FAILURES[@]} -eq 0 ] || { echo "**${#FAILURES[@]} failure(s)**: see the end of the full report."; echo; }
		echo "$end"
	} >>"$file"
}
