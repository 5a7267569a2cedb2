# t_install.sh - make install (DESTDIR, PREFIX) puts every file where it
# belongs and the installed heapsh runs and finds its agent; the man page
# documents every option of --help and every command of the command table;
# the bash and zsh completions offer the options of --help (the same list),
# dump files, query files, Lua scripts and the pids of running JVMs.
rm -rf "$T/install"
mkdir -p "$T/install"
I=$(cd "$T/install" && pwd)	# absolute: DESTDIR, and paths used from other directories
INST=$I/inst

# The installed files, against the tree. -o: install what is built, never
# rebuild here (make test builds first).
make --no-print-directory -o heapsh -o libheapsh_agent.so install \
	DESTDIR="$INST" PREFIX=/usr >"$I/make.out" 2>&1
check_status "make install DESTDIR PREFIX=/usr" 0 "$?"
inst_same() {	# inst_same SOURCE INSTALLED
	if [ ! -f "$2" ]; then fail "installed ${2#$INST}" "missing"
	elif cmp -s "$1" "$2"; then ok "installed ${2#$INST}"
	else fail "installed ${2#$INST}" "differs from $1"; fi
}
inst_same heapsh "$INST/usr/bin/heapsh"
inst_same libheapsh_agent.so "$INST/usr/lib/heapsh/libheapsh_agent.so"
inst_same docs/heapsh.1 "$INST/usr/share/man/man1/heapsh.1"
inst_same completions/heapsh.bash "$INST/usr/share/bash-completion/completions/heapsh"
inst_same completions/_heapsh "$INST/usr/share/zsh/site-functions/_heapsh"
for f in queries/*.hq; do inst_same "$f" "$INST/usr/share/heapsh/queries/${f##*/}"; done
for f in lua/*.lua lua/lib/*.lua; do [ -f "$f" ] && inst_same "$f" "$INST/usr/share/heapsh/$f"; done
check "nothing else under share/heapsh" \
	"$( (ls lua/*.lua lua/lib/*.lua queries/*.hq 2>/dev/null) | sort)" \
	"$(cd "$INST/usr/share/heapsh" && find . -type f | sed 's|^\./||' | sort)"
KNOWN_ABS=$(realpath "$KNOWN")
check "an installed script runs from anywhere (require finds the installed lua/lib)" \
	"$($HEAPSH --no-index --format csv -l lua/duplicate_strings.lua "$KNOWN" --top 3)" \
	"$(cd / && "$INST/usr/bin/heapsh" --no-index --format csv -l "$INST/usr/share/heapsh/lua/duplicate_strings.lua" "$KNOWN_ABS" --top 3 2>&1)"
check "installed heapsh is executable" "yes" "$([ -x "$INST/usr/bin/heapsh" ] && echo yes)"
check "installed heapsh --version" "$($HEAPSH --version)" "$("$INST/usr/bin/heapsh" --version 2>&1)"
check "installed heapsh opens a dump" "Order,1000,40000" \
	"$("$INST/usr/bin/heapsh" --no-index --format csv -c ':histogram Order' "$KNOWN" | grep '^Order,')"

# The options of heapsh --help: "  -c COMMAND ..." and "  -h, --help ...".
HELP_OPTS=$($HEAPSH --help | sed -n '/^options:/,/^$/p' |
	grep -oE '^  -[-a-zA-Z]+(, -[-a-zA-Z]+)?' | tr -d ' ' | tr ',' '\n' | sort)
check "--help lists options" "yes" "$([ "$(printf '%s\n' "$HELP_OPTS" | grep -c .)" -ge 10 ] && echo yes)"

# The man page: renders without warnings; every option; every command's usage line.
MAN=$INST/usr/share/man/man1/heapsh.1
if command -v groff >/dev/null; then
	check "man page: groff gives no warnings" "" "$(groff -man -Tascii -ww -z "$MAN" 2>&1)"
	MANTXT=$(groff -man -Tascii -rLL=250n -P-cbou "$MAN" 2>/dev/null)
elif command -v nroff >/dev/null; then
	MANTXT=$(nroff -man -rLL=250n "$MAN" 2>/dev/null | col -bx)
else
	echo "note: neither groff nor nroff is installed; the man page is checked as roff source"
	MANTXT=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' "$MAN")
fi
check_contains "man page: NAME" "heapsh - an interactive shell for Java heaps" "$MANTXT"
for s in SYNOPSIS DESCRIPTION OPTIONS COMMANDS FILES ENVIRONMENT "EXIT STATUS" EXAMPLES "SEE ALSO"; do
	check "man page: section $s" "1" "$(printf '%s\n' "$MANTXT" | grep -c "^$s\$")"
done
for o in $HELP_OPTS; do
	check "man page: option $o" "yes" \
		"$(printf '%s\n' "$MANTXT" | grep -qE -- "^ +([^ ].*, )?$o( |,|\$)" && echo yes)"
done
CMDS=$($HEAPSH -c ':help' | sed -n 's/^  :\([a-z]*\).*/\1/p')
check "the command table has commands" "yes" "$([ "$(printf '%s\n' "$CMDS" | grep -c .)" -ge 20 ] && echo yes)"
for c in $CMDS; do
	u=$($HEAPSH -c ":help $c" | sed -n 's/^usage: //p')
	check_contains "man page: :$c with its usage line" "$u" "$MANTXT"
done
for e in DUMP.hsidx .heapsh_history libheapsh_agent.so TMPDIR XDG_CACHE_HOME HEAPSH_AGENT HOME; do
	check_contains "man page mentions $e" "$e" "$MANTXT"
done

# A JVM to complete the pid of, and to attach the installed heapsh to. It
# waits on a fifo we hold open; it is ended at the end of this file, and by
# the trap if the run stops early.
INST_JPID=
INST_JFD=
inst_cleanup() {
	[ -n "$INST_JFD" ] && { echo quit >&"$INST_JFD"; exec {INST_JFD}>&-; } 2>/dev/null
	if [ -n "$INST_JPID" ]; then
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$INST_JPID" 2>/dev/null || break; sleep 0.2; done
		kill -9 "$INST_JPID" 2>/dev/null && rm -rf "/tmp/.heapsh-$INST_JPID" "/tmp/.java_pid$INST_JPID"
		wait "$INST_JPID" 2>/dev/null
	fi
	INST_JPID=
	INST_JFD=
}
# Chain the EXIT trap an earlier test file set, and put it back at the end.
inst_trap_cmd() { eval "set -- $1"; printf '%s' "${3:-}"; }
INST_PREV_TRAP=$(trap -p EXIT)
trap "inst_cleanup; $(inst_trap_cmd "$INST_PREV_TRAP")" EXIT
mkfifo "$I/jvm.in"
exec {INST_JFD}<>"$I/jvm.in"
java -cp "$JAVA_OUT" KnownHeap wait <"$I/jvm.in" >"$I/jvm.out" 2>"$I/jvm.err" &
INST_JPID=$!
JVM_PID=
for _ in $(seq 300); do
	read -r _ JVM_PID < <(grep '^ready ' "$I/jvm.out" 2>/dev/null)
	[ -n "$JVM_PID" ] && break
	kill -0 "$INST_JPID" 2>/dev/null || break
	sleep 0.2
done
check "KnownHeap wait started" "yes" "$([ -n "$JVM_PID" ] && echo yes || head -3 "$I/jvm.err")"

if [ -n "$JVM_PID" ]; then
	check_contains "installed heapsh attaches with the installed agent" "Order,1000,40000" \
		"$(env -u HEAPSH_AGENT timeout 120 "$INST/usr/bin/heapsh" --format csv \
			-c ':histogram Order' "$JVM_PID" 2>&1)"
fi

# bash completion, as installed: words in, COMPREPLY out, in a directory of
# test files; the installed Lua directory holds the ready scripts and one more.
if command -v bash >/dev/null; then
	C=$I/compl
	mkdir -p "$C/sub"
	: > "$C/a.hprof"; : > "$C/b.hprof.gz"; : > "$C/c.txt"; : > "$C/q.hq"; : > "$C/s.lua"
	mkdir -p "$INST/usr/share/heapsh/lua"
	: > "$INST/usr/share/heapsh/lua/zz_installed.lua"
	# bcomp WORD...: the candidates for the last word, one per line, sorted.
	bcomp() {
		(cd "$C" && bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _heapsh
			printf "%s\n" "${COMPREPLY[@]}" | sort' _ \
			"$INST/usr/share/bash-completion/completions/heapsh" "$@")
	}
	check "bash: the options are --help's" "$HELP_OPTS" "$(bcomp heapsh -)"
	check "bash: --fo completes --format" "--format" "$(bcomp heapsh --fo)"
	check "bash: --format values" "$(printf 'csv\njson\ntable')" "$(bcomp heapsh --format '')"
	check "bash: dumps and directories" "$(printf 'a.hprof\nb.hprof.gz\nsub')" "$(bcomp heapsh '')"
	check "bash: query files for -f" "$(printf 'q.hq\nsub')" "$(bcomp heapsh -f '')"
	check "bash: Lua scripts for -l, installed ones as full paths" \
		"$(printf '%s\n' "$INST/usr/share/heapsh/lua/zz_installed.lua" s.lua sub \
			$(for f in lua/*.lua; do echo "$INST/usr/share/heapsh/lua/${f#lua/}"; done) | sort)" \
		"$(bcomp "$INST/usr/bin/heapsh" -l '')"
	check "bash: an installed Lua script by name" "$INST/usr/share/heapsh/lua/zz_installed.lua" \
		"$(bcomp "$INST/usr/bin/heapsh" -l zz)"
	check "bash: -l SCRIPT then a dump" "$(printf 'a.hprof\nb.hprof.gz\nsub')" "$(bcomp heapsh -l s.lua '')"
	check "bash: one dump at a time" "" "$(bcomp heapsh a.hprof '')"
	if [ -n "$JVM_PID" ]; then
		check "bash: the pid of a running JVM, from its first digit" "$JVM_PID" \
			"$(bcomp heapsh "${JVM_PID:0:1}" | grep -x "$JVM_PID")"
		check "bash: the pid of a running JVM after -l SCRIPT" "$JVM_PID" \
			"$(bcomp heapsh -l s.lua "$JVM_PID")"
	fi
	sleep 300 &
	SLEEP_PID=$!
	check "bash: no pid of a process that is not a JVM" "" "$(bcomp heapsh "$SLEEP_PID")"
	kill "$SLEEP_PID"
	wait "$SLEEP_PID" 2>/dev/null
fi

# zsh completion: the same option list; parsed by zsh when it is installed.
ZOPTS=$(grep -oE "^ +'(\([^)]*\))?\*?-{1,2}[a-zA-Z][-a-zA-Z]*" completions/_heapsh |
	sed -E "s/^ +'(\([^)]*\))?\*?//" | sort)
check "zsh: the options are --help's" "$HELP_OPTS" "$ZOPTS"
if command -v zsh >/dev/null; then
	check "zsh: _heapsh parses (zsh -n)" "" "$(zsh -n "$INST/usr/share/zsh/site-functions/_heapsh" 2>&1)"
	check "zsh: _heapsh loads with compinit" "ok" \
		"$(zsh -f -c 'fpath=("$1" $fpath); autoload -Uz compinit; compinit -u -d "$2"
			autoload +X _heapsh && [[ ${_comps[heapsh]} == _heapsh ]] && echo ok' \
			_ "$INST/usr/share/zsh/site-functions" "$I/zcompdump" 2>&1)"
else
	echo "skip zsh: zsh is not installed; _heapsh's option list was checked as text only"
fi

inst_cleanup
if [ -n "$INST_PREV_TRAP" ]; then eval "$INST_PREV_TRAP"; else trap - EXIT; fi

# make uninstall removes what make install put.
make --no-print-directory uninstall DESTDIR="$INST" PREFIX=/usr >"$I/make.out" 2>&1
check_status "make uninstall" 0 "$?"
check "make uninstall leaves no file" "" "$(find "$INST" -type f)"
