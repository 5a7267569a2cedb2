# bash completion for heapsh: options, and heap dumps / query files as their
# arguments. Source it (". completions/heapsh.bash") or install it under
# /usr/share/bash-completion/completions/heapsh.
_heapsh()
{
	local cur prev
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	case $prev in
	--format) COMPREPLY=($(compgen -W 'table csv json' -- "$cur")); return ;;
	--oops) COMPREPLY=($(compgen -W '4 8' -- "$cur")); return ;;
	-f) COMPREPLY=($(compgen -f -X '!*.@(hq|hsh)' -- "$cur") $(compgen -d -- "$cur")); return ;;
	-c) return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W '-c -f --format --oops --no-weak --no-index --export-graph
			--echo --version --help' -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -X '!*.@(hprof|hprof.gz)' -- "$cur") $(compgen -d -- "$cur"))
}
shopt -s extglob
complete -o filenames -F _heapsh heapsh
