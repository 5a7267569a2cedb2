# t_mcp.sh - heapsh --mcp (src/shell/mcp.c, docs/manual.md "heapsh as an MCP
# server"): the official MCP TypeScript SDK's client (tests/mcp_client.mjs,
# installed by make test under build/node) drives the server over stdio:
# initialize, tools/list with the schemas, open on KnownHeap's dump, run of
# queries and :commands whose JSON is KnownHeap's KNOWN FACTS and exactly what
# heapsh --format json -c prints, heapsh's own error messages as tool errors,
# bad tool names and arguments as JSON-RPC errors, help from the command
# table. Then raw bytes written to the server (malformed JSON, bad UTF-8,
# requests before initialize, batches, version negotiation, stray writes to
# fd 1), and a live JVM (KnownHeap wait) opened by its pid, whose query is
# answered inside the JVM, and a server ended by SIGTERM mid-command, which
# lets go of the JVM. Every process started here is killed at the end.
M=$T/mcp
mkdir -p "$M"
MCP_PIDS=()	# JVMs started here
MCP_FDS=()	# write ends of their stdin
MCP_SDK=build/node/node_modules/@modelcontextprotocol/sdk/package.json

mcp_cleanup() {
	local fd p
	for fd in ${MCP_FDS[@]+"${MCP_FDS[@]}"}; do exec {fd}>&-; done
	for p in ${MCP_PIDS[@]+"${MCP_PIDS[@]}"}; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
		rm -rf "/tmp/.heapsh-$p" "/tmp/.java_pid$p"	# left by JVMs killed with -9
	done
	MCP_FDS=()
	MCP_PIDS=()
}
trap mcp_cleanup EXIT
trap 'mcp_cleanup; exit 130' INT TERM

# mcp_mj FILE N EXPR: the Python expression EXPR over r, the Nth JSON line of FILE
# (from 0), printed (a string as it is, anything else as sorted JSON).
mcp_mj() {
	python3 - "$@" <<-'EOF'
	import json, sys
	lines = open(sys.argv[1], encoding='utf-8').read().splitlines()
	try:
	    r = json.loads(lines[int(sys.argv[2])])
	    v = eval(sys.argv[3])
	except Exception as e:
	    v = 'mcp_mj: %s: %s' % (type(e).__name__, e)
	print(v if isinstance(v, str) else json.dumps(v, sort_keys=True))
	EOF
}
# mcp_text FILE N: the text of the Nth line's tool result (its blocks, joined).
mcp_text() { mcp_mj "$1" "$2" "''.join(c['text'] for c in r['result']['content'])"; }
# mcp_same_json A B: "same" when texts A and B are the same JSON value.
mcp_same_json() {
	python3 -c 'import json, sys; print("same" if json.loads(sys.argv[1]) == json.loads(sys.argv[2]) else "differ")' "$1" "$2" 2>&1
}
# mcp_client STEPS OUT ARGS...: the SDK client on heapsh --mcp ARGS; stdout to OUT, stderr to OUT.err.
mcp_client() {
	local steps=$1 out=$2
	shift 2
	timeout 300 node tests/mcp_client.mjs "$steps" "$HEAPSH" --mcp "$@" >"$out" 2>"$out.err"
}

mcp_tests() {
	if ! command -v node >/dev/null || [ ! -f "$MCP_SDK" ]; then
		fail "mcp: node and the MCP SDK are installed (make test installs @modelcontextprotocol/sdk into build/node)"
		return
	fi
	local KNOWN_M=$M/known.hprof COUNT7='objects.count([it | it is Order and it.status = 7])'
	cp "$KNOWN" "$KNOWN_M"	# other runs may rewrite $KNOWN meanwhile
	local STRUCTQ='R : struct id : int, customer : string end
objects.filter([it | it is Order and it.id < 3]).map([o | struct R o.id, o.customer.text end])'
	printf '%s\n' "$STRUCTQ" >"$M/struct.hq"
	python3 - "$M/steps.json" "$KNOWN_M" "$COUNT7" "$STRUCTQ" <<-'EOF'
	import json, sys
	out, dump, count7, structq = sys.argv[1:5]
	steps = [
	    {"list": True},                                                  # 1
	    {"call": "open", "args": {"target": dump}},                      # 2
	    {"call": "run", "args": {"input": count7}},                      # 3
	    {"call": "run", "args": {"input": ":histogram Order"}},          # 4
	    {"call": "run", "args": {"input": structq}},                     # 5
	    {"call": "run", "args": {"input": "foo bar"}},                   # 6
	    {"call": "run", "args": {"input": ":nosuchcommand"}},            # 7
	    {"call": "nosuchtool", "args": {}},                              # 8
	    {"call": "run", "args": {"input": 5}},                           # 9
	    {"call": "run", "args": {}},                                     # 10
	    {"call": "run", "args": {"input": ":info", "limit": 3}},         # 11
	    {"call": "open", "args": {"target": dump + ".missing"}},         # 12
	    {"call": "help", "args": {}},                                    # 13
	    {"call": "help", "args": {"command": ":histogram"}},             # 14
	    {"call": "help", "args": {"command": "nosuch"}},                 # 15
	    {"call": "run", "args": {"input": ':lua print("from lua", 42)'}},  # 16
	    {"call": "run", "args": {"input": ":histogram Order", "max_chars": 10}},  # 17
	    {"call": "run", "args": {"input": ":quit"}},                     # 18
	    {"call": "run", "args": {"input": ":classes Order"}},            # 19
	]
	json.dump(steps, open(out, 'w'))
	EOF
	mcp_client "$M/steps.json" "$M/dump.out"
	check_status "mcp: the SDK client connected and ran every step" 0 $?
	local F=$M/dump.out
	check "mcp: one answer per step" 20 "$(grep -c . "$F")"
	check "mcp: initialize: serverInfo" '{"name": "heapsh", "title": "heapsh, a shell for Java heaps", "version": "0.1.0"}' \
		"$(mcp_mj "$F" 0 "r['server']")"
	check "mcp: initialize: the tools capability" '{"tools": {"listChanged": false}}' "$(mcp_mj "$F" 0 "r['capabilities']")"
	check_contains "mcp: initialize: instructions name the tools" "call run with heapsh commands" \
		"$(mcp_mj "$F" 0 "r['instructions']")"
	check "mcp: tools/list: open, run, help" '["open", "run", "help"]' "$(mcp_mj "$F" 1 "[t['name'] for t in r['tools']]")"
	check "mcp: tools/list: every tool has a description and an object schema" '[true, true, true]' \
		"$(mcp_mj "$F" 1 "[len(t['description']) > 40 and t['inputSchema']['type'] == 'object' and t['inputSchema']['additionalProperties'] == False for t in r['tools']]")"
	check "mcp: tools/list: open's schema requires target, a string" '[["target"], "string"]' \
		"$(mcp_mj "$F" 1 "[r['tools'][0]['inputSchema']['required'], r['tools'][0]['inputSchema']['properties']['target']['type']]")"
	check "mcp: tools/list: run's schema: input (required), max_chars" '[["input"], ["input", "max_chars"], "string", "integer"]' \
		"$(mcp_mj "$F" 1 "[r['tools'][1]['inputSchema']['required'], sorted(r['tools'][1]['inputSchema']['properties']), r['tools'][1]['inputSchema']['properties']['input']['type'], r['tools'][1]['inputSchema']['properties']['max_chars']['type']]")"
	check "mcp: tools/list: help's command is optional" '[false, "string"]' \
		"$(mcp_mj "$F" 1 "['required' in r['tools'][2]['inputSchema'], r['tools'][2]['inputSchema']['properties']['command']['type']]")"

	# open, then queries and commands: KnownHeap's facts, as heapsh -c says them
	local info
	info=$($HEAPSH --format csv -c ':info' "$KNOWN_M" 2>/dev/null)
	check "mcp: open: the dump, with :info's object and class counts" \
		"$(printf '{"classes": %s, "isError": false, "objects": %s, "opened": "heap dump %s"}' \
			"$(csv_row "$info" classes | cut -d, -f2)" "$(csv_row "$info" objects | cut -d, -f2)" "$KNOWN_M")" \
		"$(mcp_mj "$F" 2 "dict(json.loads(r['result']['content'][0]['text']), isError=r['result']['isError'])")"
	check "mcp: run: a query: 100 Orders with status 7" 100 "$(mcp_text "$F" 3)"
	check "mcp: run: the query's answer is heapsh -c's" "$($HEAPSH --format json -c "$COUNT7" "$KNOWN_M")" "$(mcp_text "$F" 3)"
	check "mcp: run: :histogram Order as JSON" '[{"class": "Order", "instances": 1000, "shallow_bytes": 40000}]' \
		"$(mcp_mj "$F" 4 "json.loads(r['result']['content'][0]['text'])")"
	check "mcp: run: :histogram Order is heapsh --format json -c's, byte for byte" \
		"$($HEAPSH --format json -c ':histogram Order' "$KNOWN_M")" "$(mcp_text "$F" 4)"
	check "mcp: run: two lines (a struct type, then a query): its table as JSON" \
		'[{"customer": "customer-0", "id": 0}, {"customer": "customer-1", "id": 1}, {"customer": "customer-2", "id": 2}]' \
		"$(mcp_mj "$F" 5 "json.loads(r['result']['content'][0]['text'])")"
	check "mcp: run: the two lines as heapsh -f runs them" same \
		"$(mcp_same_json "$($HEAPSH --format json -f "$M/struct.hq" "$KNOWN_M")" "$(mcp_text "$F" 5)")"

	# failures: heapsh's messages as tool errors; bad calls as JSON-RPC errors
	check "mcp: run: a bad query is a tool error" true "$(mcp_mj "$F" 6 "r['result']['isError']")"
	check "mcp: run: with heapsh's message and where" "heapsh: input:1:1: unknown name 'foo'" "$(mcp_text "$F" 6)"
	check_contains "mcp: run: the message is the shell's" "unknown name 'foo'" \
		"$($HEAPSH -c 'foo bar' "$KNOWN_M" 2>&1 >/dev/null | head -1)"
	check "mcp: run: an unknown :command is a tool error with the shell's suggestion" \
		"heapsh: input:1: $($HEAPSH -c ':nosuchcommand' "$KNOWN_M" 2>&1 >/dev/null | sed 's/^heapsh: //')" \
		"$(mcp_text "$F" 7)"
	check "mcp: an unknown tool: JSON-RPC invalid params" -32602 "$(mcp_mj "$F" 8 "r['error']['code']")"
	check_contains "mcp: an unknown tool: says which" "Unknown tool: nosuchtool" "$(mcp_mj "$F" 8 "r['error']['message']")"
	check "mcp: run with a number for input: invalid params" -32602 "$(mcp_mj "$F" 9 "r['error']['code']")"
	check_contains "mcp: run with a number for input: says what is wrong" "'input' must be a string" \
		"$(mcp_mj "$F" 9 "r['error']['message']")"
	check_contains "mcp: run without input: invalid params, input is missing" "-32602 'input' is missing" \
		"$(mcp_mj "$F" 10 "str(r['error']['code']) + ' ' + r['error']['message'].split(': ', 2)[-1]")"
	check_contains "mcp: run with an unknown argument: invalid params, named" "not 'limit'" \
		"$(mcp_mj "$F" 11 "str(r['error']['code']) + ' ' + r['error']['message']")"
	check "mcp: open of a missing file: a tool error with heapsh's message" \
		"true $($HEAPSH "$KNOWN_M.missing" 2>&1 </dev/null | head -1)" \
		"$(mcp_mj "$F" 12 "str(r['result']['isError']).lower()") $(mcp_text "$F" 12)"

	# help: the command table of :help
	check "mcp: help: every command of :help" \
		"$($HEAPSH -c ':help' 2>/dev/null | awk 'NR > 1 { print $1 }' | sort)" \
		"$(mcp_mj "$F" 13 "'\n'.join(sorted(c['command'] for c in json.loads(r['result']['content'][0]['text'])))")"
	check "mcp: help histogram: :help histogram's usage and text" \
		"$($HEAPSH -c ':help histogram' 2>/dev/null)" \
		"$(mcp_mj "$F" 14 "(lambda h: 'usage: ' + h['usage'] + '\n\n' + h['help'])(json.loads(r['result']['content'][0]['text']))")"
	check "mcp: help of no such command: a tool error" \
		"True heapsh: no command ':nosuch'; help without a command lists them" \
		"$(mcp_mj "$F" 15 "str(r['result']['isError']) + ' ' + r['result']['content'][0]['text']")"

	# output capture, cuts, :quit, and the server still serving after all that
	check "mcp: run: Lua's print is captured" "$(printf 'from lua\t42')" "$(mcp_text "$F" 16)"
	check "mcp: run: max_chars cuts the output and says so" \
		"$(printf '[\n {"class\n... (cut at 10 of %s bytes: ask for less' \
			"$($HEAPSH --format json -c ':histogram Order' "$KNOWN_M" | wc -c)")" \
		"$(mcp_text "$F" 17 | sed 's/: ask for less.*/: ask for less/')"
	check "mcp: run :quit: a tool error, the server goes on" \
		"True heapsh: :quit does not end an MCP server: it ends when its client closes its input" \
		"$(mcp_mj "$F" 18 "str(r['result']['isError']) + ' ' + r['result']['content'][0]['text']")"
	check "mcp: after every error, :classes Order still answers" '[1000, "Order"]' \
		"$(mcp_mj "$F" 19 "(lambda t: [t[0]['instances'], t[0]['class']])(json.loads(r['result']['content'][0]['text']))")"
	check "mcp: stderr has heapsh's messages (the log), with the caret" "  foo bar
  ^" "$(grep -A2 "unknown name 'foo'" "$F.err" | tail -2)"

	mcp_raw "$KNOWN_M" "$COUNT7"
	mcp_live "$COUNT7"
}

# mcp_raw DUMP COUNT7: bytes written to the server as they are, not through the SDK.
mcp_raw() {
	local R=$M/raw.out v want got
	mcp_init() { printf '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}\n' "$1"; }
	{
		printf '%s\n' '{"jsonrpc":"2.0","id":"early","method":"tools/list"}'	# 0: before initialize
		printf '%s\n' '{"jsonrpc":"2.0","id":"p0","method":"ping"}'		# 1: ping is fine
		printf '%s\n' 'this is not json'					# 2
		printf '\xff\xfe{"jsonrpc":"2.0"}\n'					# 3: not UTF-8
		mcp_init 2024-11-05								# 4
		printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}'	# (no answer)
		printf '%s\n' '{"jsonrpc":"2.0","id":2,"method":"resources/list"}'	# 5
		printf '%s\n' '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":"run"}'	# 6
		printf '%s\n' '{"jsonrpc":"2.0","id":null,"method":"ping"}'		# 7
		printf '%s\n' '{"jsonrpc":"1.0","id":4,"method":"ping"}'		# 8
		printf '%s\n' '[]'							# 9
		printf '%s\n' '[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}]'	# 10
		printf '%s\n' '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"run","arguments":{"input":":lua io.stdout:write(\"stray\\n\") print(\"a\\255b\")"}}}'	# 11
		printf '%s\n' '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run","arguments":{"input":":format csv\n:histogram Order"}}}'	# 12
		printf '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"run","arguments":{"input":"%s"}}}\n' "$2"	# 13
		mcp_init 2025-06-18								# 14: again
		printf '%s\n' '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"run","arguments":{"input":"objects.count("}}}'	# 15
		printf '%s\n' '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"open","arguments":{"target":"'"$1"'"}}}'	# 16
	} | timeout 120 "$HEAPSH" --mcp "$1" >"$R" 2>"$R.err"
	check_status "mcp raw: the end of the input ends the server, status 0" 0 $?
	check "mcp raw: every line on stdout is a JSON-RPC message (17 answers)" 17 \
		"$(python3 -c 'import json, sys
n = 0
for l in open(sys.argv[1], encoding="utf-8"):
    m = json.loads(l)
    for x in (m if isinstance(m, list) else [m]):
        assert x["jsonrpc"] == "2.0" and ("result" in x) != ("error" in x)
    n += 1
print(n)' "$R" 2>&1)"
	check "mcp raw: a request before initialize: an error" '[-32000, "early"]' "$(mcp_mj "$R" 0 "[r['error']['code'], r['id']]")"
	check "mcp raw: ping before initialize: answered" '{"id": "p0", "jsonrpc": "2.0", "result": {}}' "$(mcp_mj "$R" 1 "r")"
	check "mcp raw: not JSON: parse error, id null" '[-32700, null]' "$(mcp_mj "$R" 2 "[r['error']['code'], r['id']]")"
	check "mcp raw: not UTF-8: parse error" -32700 "$(mcp_mj "$R" 3 "r['error']['code']")"
	check "mcp raw: initialize 2024-11-05: that version" 2024-11-05 "$(mcp_mj "$R" 4 "r['result']['protocolVersion']")"
	check "mcp raw: unknown method: -32601" '[-32601, 2]' "$(mcp_mj "$R" 5 "[r['error']['code'], r['id']]")"
	check "mcp raw: params not an object: -32602" '[-32602, 3]' "$(mcp_mj "$R" 6 "[r['error']['code'], r['id']]")"
	check "mcp raw: id null: invalid request" '[-32600, null]' "$(mcp_mj "$R" 7 "[r['error']['code'], r['id']]")"
	check "mcp raw: jsonrpc 1.0: invalid request" '[-32600, 4]' "$(mcp_mj "$R" 8 "[r['error']['code'], r['id']]")"
	check "mcp raw: an empty batch: invalid request" -32600 "$(mcp_mj "$R" 9 "r['error']['code']")"
	check "mcp raw: a batch of a ping and a notification: one answer" '[{"id": 5, "jsonrpc": "2.0", "result": {}}]' \
		"$(mcp_mj "$R" 10 "r")"
	check "mcp raw: Lua's print captured, bad UTF-8 as U+FFFD; io.stdout not on the protocol's stream" \
		"$(printf 'a\xef\xbf\xbdb')" "$(mcp_mj "$R" 11 "r['result']['content'][0]['text'].rstrip()")"
	check "mcp raw: the stray write went to stderr" stray "$(grep -x stray "$R.err")"
	check "mcp raw: :format csv then a command, in one input" "class,instances,shallow_bytes
Order,1000,40000" "$(mcp_mj "$R" 12 "r['result']['content'][0]['text'].rstrip()")"
	check "mcp raw: the query after all that" 100 "$(mcp_mj "$R" 13 "r['result']['content'][0]['text'].rstrip()")"
	check "mcp raw: initialize twice: invalid request" -32600 "$(mcp_mj "$R" 14 "r['error']['code']")"
	check_contains "mcp raw: an unfinished query: a tool error that says so" "True heapsh: input:1: the input ends inside an unfinished query" \
		"$(mcp_mj "$R" 15 "str(r['result']['isError']) + ' ' + r['result']['content'][0]['text']")"
	check_contains "mcp raw: open of the dump already open (given on the command line)" '"objects":' \
		"$(mcp_mj "$R" 16 "r['result']['content'][0]['text']")"
	for v in 2025-03-26:2025-03-26 2025-06-18:2025-06-18 2025-11-25:2025-06-18 1999-01-01:2025-06-18; do
		want=${v#*:}
		mcp_init "${v%%:*}" | timeout 60 "$HEAPSH" --mcp >"$M/version.out" 2>/dev/null
		check "mcp raw: initialize ${v%%:*}: answered $want" "$want" \
			"$(mcp_mj "$M/version.out" 0 "r['result']['protocolVersion']")"
	done
	check "mcp raw: --mcp with -c is refused" 2 "$("$HEAPSH" --mcp -c ':info' </dev/null >/dev/null 2>&1; echo $?)"
}

# mcp_live COUNT7: a running KnownHeap (wait mode) opened by its pid.
mcp_live() {
	local fd i KP=
	rm -f "$M/k.in" "$M/k.out" "$M/k.err"
	mkfifo "$M/k.in"
	exec {fd}<>"$M/k.in"	# read-write: never blocks, even if java does not start
	MCP_FDS+=("$fd")
	java -cp "$JAVA_OUT" KnownHeap wait <"$M/k.in" >"$M/k.out" 2>"$M/k.err" &
	MCP_PIDS+=("$!")
	for ((i = 0; i < 600; i++)); do
		read -r _ KP < <(grep '^ready ' "$M/k.out" 2>/dev/null)
		[ -n "$KP" ] && break
		kill -0 "${MCP_PIDS[-1]}" 2>/dev/null || break
		sleep 0.1
	done
	if [ -z "$KP" ]; then
		fail "mcp live: KnownHeap wait started" "$(head -5 "$M/k.err")"
		return
	fi
	python3 - "$M/live.json" "$KP" "$1" <<-'EOF'
	import json, sys
	out, pid, count7 = sys.argv[1:4]
	json.dump([
	    {"call": "open", "args": {"target": pid}},
	    {"call": "run", "args": {"input": count7}},
	    {"call": "run", "args": {"input": ":info"}},
	    {"call": "run", "args": {"input": ":explain " + count7}},
	], open(out, 'w'))
	EOF
	mcp_client "$M/live.json" "$M/live.out"
	check_status "mcp live: the SDK client ran every step" 0 $?
	local F=$M/live.out
	check "mcp live: open PID attaches to that JVM" "[false, $KP]" \
		"$(mcp_mj "$F" 1 "[r['result']['isError'], json.loads(r['result']['content'][0]['text'])['attached']]")"
	check "mcp live: the query's answer: the 100 live Orders with status 7" 100 "$(mcp_text "$F" 2)"
	check "mcp live: answered inside the JVM: no snapshot was taken" \
		"none yet (the first command that needs the object graph takes it)" \
		"$(mcp_mj "$F" 3 "[x['value'] for x in json.loads(r['result']['content'][0]['text']) if x['property'] == 'snapshot'][0]")"
	check_contains "mcp live: :explain says it runs inside the JVM" "inside JVM $KP" "$(mcp_text "$F" 4)"
	for ((i = 0; i < 50; i++)); do [ -e "/tmp/.heapsh-$KP" ] || break; sleep 0.1; done
	check "mcp live: the client gone, the agent left the JVM (its socket directory is gone)" absent \
		"$([ -e "/tmp/.heapsh-$KP" ] && echo present || echo absent)"
	check "mcp live: the JVM lives on" alive "$(kill -0 "$KP" 2>/dev/null && echo alive || echo dead)"
	mcp_term "$KP"
}

# mcp_term KP: heapsh --mcp KP ended by SIGTERM (how clients end a server that
# does not end when its input closes) in the middle of a command: the command
# stops, is answered, and heapsh lets go of the JVM as at the end of its input.
mcp_term() {
	local KP=$1 fd hp i st R=$M/term.out
	rm -f "$M/term.in"
	mkfifo "$M/term.in"
	exec {fd}<>"$M/term.in"
	MCP_FDS+=("$fd")
	"$HEAPSH" --mcp "$KP" <"$M/term.in" >"$R" 2>"$R.err" &
	hp=$!
	MCP_PIDS+=("$hp")
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}' \
		'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run","arguments":{"input":":lua local n = 0 while true do n = n + 1 end"}}}' >&"$fd"
	for ((i = 0; i < 600; i++)); do grep -q '"id":1' "$R" && break; sleep 0.1; done
	sleep 0.5	# into the loop
	check "mcp term: attached to the JVM (its agent's socket directory)" present \
		"$([ -e "/tmp/.heapsh-$KP" ] && echo present || echo absent)"
	kill -TERM "$hp"
	for ((i = 0; i < 100; i++)); do kill -0 "$hp" 2>/dev/null || break; sleep 0.1; done
	wait "$hp"
	st=$?
	check "mcp term: SIGTERM ends the server, status 0" 0 "$st"
	check "mcp term: the command under way was stopped and answered" "[2, true, true]" \
		"$(mcp_mj "$R" 1 "[r['id'], r['result']['isError'], 'interrupted' in r['result']['content'][0]['text']]")"
	check "mcp term: stdout: two JSON-RPC messages, nothing else" 2 \
		"$(python3 -c 'import json, sys; print(sum(json.loads(l)["jsonrpc"] == "2.0" for l in open(sys.argv[1])))' "$R" 2>&1)"
	check "mcp term: heapsh let go of the JVM (its agent's socket directory is gone)" absent \
		"$([ -e "/tmp/.heapsh-$KP" ] && echo present || echo absent)"
	check "mcp term: the JVM lives on" alive "$(kill -0 "$KP" 2>/dev/null && echo alive || echo dead)"
}

mcp_tests
mcp_cleanup
trap - EXIT INT TERM
