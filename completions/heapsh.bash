# bash completion for heapsh: options, heap dumps (*.hprof, *.hprof.gz,
# directories), pids of running JVMs, query files for -f and Lua scripts for
# -l. Source it (". completions/heapsh.bash"), or install it as
# share/bash-completion/completions/heapsh (make install does).
#
# The option list is heapsh --help's; tests/t_install.sh checks that they agree.

_heapsh_options='-c -f -l --report --mcp --format --oops --layout --dump --echo --no-weak --no-index --no-spill --memory --spill-dir --keep-agent
	--export-graph --redact --serve --version -h --help'

# _heapsh_jvm_pids: the pids of the current user's JVMs: processes whose
# command name is java or that have libjvm.so mapped.
_heapsh_jvm_pids()
{
	local f p
	{
		grep -lsx java /proc/[0-9]*/comm
		grep -lsF libjvm.so /proc/[0-9]*/maps
	} 2>/dev/null | while IFS= read -r f; do
		p=${f#/proc/}
		p=${p%%/*}
		[ -O "/proc/$p" ] && echo "$p"
	done | sort -nu
}

# _heapsh_lua_dir: the installed Lua scripts, share/heapsh/lua next to the
# bin directory of the heapsh being completed.
_heapsh_lua_dir()
{
	local bin=$1
	[[ $bin == */* ]] || bin=$(type -P -- "$bin" 2>/dev/null)
	[ -n "$bin" ] || return
	bin=${bin/#\~/$HOME}
	bin=$(readlink -f -- "$bin" 2>/dev/null) || return
	local dir=${bin%/*}/../share/heapsh/lua
	[ -d "$dir" ] && (cd "$dir" && pwd)
}

_heapsh()
{
	local cur prev w i dump_seen=0 skip=0 diff=0	# diff: heapsh diff OLD NEW
	local lua=0	# with -l SCRIPT: the index of the word after SCRIPT
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	COMPREPLY=()

	# What the words before this one are: option values skipped, a dump or
	# pid seen. -l SCRIPT ends heapsh's options: the words after SCRIPT are
	# the script's, the first of them a dump or pid to open.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [ $skip -gt 0 ]; then skip=$((skip - 1)); continue; fi
		case $w in
		-c | -f | --report | --format | --oops | --layout | --dump | --memory | --spill-dir) skip=1 ;;
		-l) lua=$((i + 2)); break ;;
		--by | --top | --fail-if) [ $diff = 1 ] && skip=1 ;;
		diff) if [ $dump_seen = 0 ] && [ $diff = 0 ]; then diff=1; else dump_seen=$((dump_seen + 1)); fi ;;
		--export-graph) skip=2; dump_seen=1 ;;
		-*) ;;
		*) dump_seen=$((dump_seen + 1)) ;;
		esac
	done
	if [ $lua -gt 0 ] && [ "$COMP_CWORD" -gt $lua ]; then
		COMPREPLY=($(compgen -f -- "$cur"))	# the script's arguments
		return
	fi
	if [ $lua -gt 0 ] && [ "$COMP_CWORD" -eq $lua ]; then
		_heapsh_targets
		return
	fi

	# Arguments of options.
	if [ "$COMP_CWORD" -ge 2 ] && [ "${COMP_WORDS[COMP_CWORD-2]}" = --export-graph ]; then
		COMPREPLY=($(compgen -f -- "$cur"))	# OUT: any file
		return
	fi
	if [ $diff = 1 ]; then
		case $prev in
		--by) COMPREPLY=($(compgen -W 'class package path' -- "$cur")); return ;;
		--top | --fail-if) return ;;
		esac
	fi
	case $prev in
	--format) COMPREPLY=($(compgen -W 'table csv json' -- "$cur")); return ;;
	--oops) COMPREPLY=($(compgen -W '4 8' -- "$cur")); return ;;
	--layout) COMPREPLY=($(compgen -W '8 11 17 21 25' -- "$cur")); return ;;
	--dump) return ;;	# a number
	--memory) COMPREPLY=($(compgen -W '1G 2G 4G 8G 16G 512M' -- "$cur")); return ;;
	--spill-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	-f) COMPREPLY=($(compgen -f -X '!*.@(hq|hsh)' -- "$cur") $(compgen -d -- "$cur")); return ;;
	-l)
		# Scripts here, and the installed ones by name (inserted as a full path).
		local dir s
		COMPREPLY=($(compgen -f -X '!*.lua' -- "$cur") $(compgen -d -- "$cur"))
		dir=$(_heapsh_lua_dir "${COMP_WORDS[0]}")
		if [ -n "$dir" ] && [[ $cur != */* ]]; then
			for s in "$dir"/*.lua; do
				[ -f "$s" ] && [[ ${s##*/} == "$cur"* ]] && COMPREPLY+=("$s")
			done
		fi
		return ;;
	-c) return ;;
	--report) COMPREPLY=($(compgen -f -X '!*.html' -- "$cur") $(compgen -d -- "$cur")); return ;;
	--export-graph)
		COMPREPLY=($(compgen -f -X '!*.@(hprof|hprof.gz)' -- "$cur") $(compgen -d -- "$cur"))
		return ;;
	esac

	if [ $diff = 1 ]; then	# heapsh diff OLD NEW [its options]
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--by --top --fail-if --mixed-jdk --no-weak --no-index --format' -- "$cur"))
		elif [ $dump_seen -lt 2 ]; then
			COMPREPLY=($(compgen -f -X '!*.@(hprof|hprof.gz)' -- "$cur") $(compgen -d -- "$cur"))
		fi
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$_heapsh_options" -- "$cur"))
		return
	fi
	[ $dump_seen -ge 1 ] && return	# one dump at a time
	_heapsh_targets
	[[ diff == "$cur"* ]] && [ -n "$cur" ] && COMPREPLY+=(diff)
}

# _heapsh_targets: what heapsh opens: dumps and directories, and JVM pids
# once a digit is typed (a bare Tab lists dumps only).
_heapsh_targets()
{
	COMPREPLY=($(compgen -f -X '!*.@(hprof|hprof.gz)' -- "$cur") $(compgen -d -- "$cur"))
	if [[ $cur == [0-9]* ]]; then
		COMPREPLY+=($(compgen -W "$(_heapsh_jvm_pids)" -- "$cur"))
	fi
}
shopt -s extglob
complete -o filenames -F _heapsh heapsh
