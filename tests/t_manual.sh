# t_manual.sh - the manual's examples run as tests (issue 36, as jq's
# man.test): each input at a `heapsh demo.hprof>` prompt in docs/manual.md runs
# on a dump of the demo program, and must give the pasted answer, or a table
# of the pasted header and length (tests/manual_check.py says what is compared).
MANUAL_OUT=$(python3 tests/manual_check.py "$HEAPSH" "$KNOWN" docs/manual.md 2>&1)
MANUAL_ST=$?
while IFS= read -r line; do
	case $line in
	ok\ *) ok "manual: ${line#ok }" ;;
	FAIL\ *) fail "manual: ${line#FAIL }" ;;
	esac
done <<<"$MANUAL_OUT"
check "the manual's examples run: at least 9 of them" "yes" \
	"$([ "$(grep -c '^ok ' <<<"$MANUAL_OUT")" -ge 9 ] && echo yes || echo "$MANUAL_OUT")"
check_status "manual_check.py's status" 0 "$MANUAL_ST"
