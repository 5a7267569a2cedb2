# t_layers.sh - the layers of docs/architecture.md hold: the library
# (build/libheapsh.a: src/base, hprof, heap, engine, dsl, attach, alloc,
# session) includes and calls nothing of the front ends (src/out, src/lua,
# src/shell) and prints nothing but its fatal messages of running out of
# memory or disk (src/base); the Lua module does not include the shell; nothing
# under src/ but the shell includes the shell; the front ends reach the
# library through heapsh.h alone, and the session's struct is its own.
LIBDIRS="src/base src/hprof src/heap src/engine src/dsl src/attach src/alloc src/session"
# shellcheck disable=SC2086
check "the library includes no front end" "" \
	"$(grep -rn '#include "\.\./\(out\|lua\|shell\)/' $LIBDIRS | head)"
check "the Lua module does not include the shell" "" "$(grep -rn '#include "\.\./shell/' src/lua | head)"
check "nothing under src/ but the shell includes the shell" "" \
	"$(grep -rln '#include "\.\./shell/' src | grep -v '^src/shell/' | head)"
# The session is the front ends' API (issue 36; lua.c on liblua): the shell and
# the Lua module include of the library only ../heapsh.h (which includes the
# public headers it lists), plus the output modes (../out/out.h), the
# number formats (../base/fmt.h), headers of their own folder, and, for the
# shell, which hosts the Lua module, ../lua/heapsh_lua.h. One exception,
# until the memory budget is the session's: main.c's ../base/big.h
# (big_configure, big_parse_size).
FRONT_INCLUDES='\.\./heapsh\.h|\.\./out/out\.h|\.\./base/fmt\.h|[a-z_]+\.h'
check "the front ends include of the library only heapsh.h, out.h and fmt.h" "" \
	"$(grep -Ho '#include "[^"]*"' src/shell/*.[ch] src/lua/*.[ch] | sed 's/#include "\(.*\)"$/\1/' |
		grep -vE ":($FRONT_INCLUDES)\$" | grep -v '^src/shell/[a-z_]*\.[ch]:\.\./lua/heapsh_lua\.h$' |
		grep -v '^src/shell/main\.c:\.\./base/big\.h$' | grep -v '^src/shell/main\.c:\.\./serve/heapsh_serve\.h$' | head)"
# The exporter (src/serve, heapsh --serve) is a front end too: of the library
# it includes heapsh.h and, as the shell does, fmt.h (its growing text), and
# calls none of its machinery (below).
check "the exporter includes of the library only heapsh.h and fmt.h" "" \
	"$(grep -Ho '#include "[^"]*"' src/serve/*.[ch] | sed 's/#include "\(.*\)"$/\1/' |
		grep -vE ':(\.\./heapsh\.h|\.\./base/fmt\.h|[a-z_]+\.h)$' | head)"
# struct hs_session is opaque: its definition is the session's own (and the unit tests').
check "nothing outside src/session and tests/ includes session_internal.h" "" \
	"$(grep -rln '#include ".*session_internal\.h"' src | grep -v '^src/session/' | head)"
check "libheapsh.a calls no front end (no undefined sh_, out_, lb_, hsl_ or Lua symbol)" "" \
	"$(nm -u build/libheapsh.a 2>/dev/null | grep -E ' (sh_|out_|lb_|hsl_|luaL?_)' | sort -u | head)"
check "libheapsh.a is there and holds the session" yes \
	"$(nm build/libheapsh.a 2>/dev/null | grep -q ' T hs_dom$' && echo yes || echo no)"
# shellcheck disable=SC2086
check "the library writes to stderr or stdout only where documented (a throw with no catch)" \
	"src/base/ctx.c" "$(grep -rln 'stderr\|stdout\|\bprintf(\|\bputs(' $LIBDIRS | sort)"
# The library never ends the process (issue 36): what it cannot go on with
# is a throw (src/base/ctx.h) that a session's call returns as HS_ERR. The
# one exit is ctx.c's, for a program that set no catch; jfr.c's _exit is
# in the child it forks to run the JDK's reader.
# shellcheck disable=SC2086
check "the library calls no exit() nor abort() but ctx.c's fallback" \
	"src/alloc/jfr.c:		_exit(127);
src/base/ctx.c:		exit(3);
src/base/ctx.c:	exit(3);" \
	"$(grep -rn '\b_\?exit(\|\babort()' $LIBDIRS --include=*.c | sed 's/:[0-9]*:/:/' | sort)"
# The session is opaque: session.h declares struct hs_session, it does not define it.
check "session.h does not define struct hs_session's fields" "" \
	"$(grep -n '^struct hs_session {' src/session/session.h)"
# A file passing ~1,500 lines holds two concerns (docs/STYLE: split it along them; issue 36).
check "no file in src/ is over 1,500 lines" "" \
	"$(find src -name '*.[ch]' -exec wc -l {} + | awk '$2 != "total" && $1 > 1500 { print $2 ": " $1 " lines" }')"
# The shell's files call one another in one direction (issue 36): core.c at
# the bottom, the commands over it, the command table over them, main.c on
# top; no circle of files (found from the objects' defined and undefined
# symbols).
SHELL_OBJS=$(ls build/*/src/shell/core.o 2>/dev/null | head -n 1 | xargs -r dirname)
check "the shell's objects are built" yes "$([ -n "$SHELL_OBJS" ] && echo yes || echo no)"
check "no circle of files in src/shell; core.c calls no other file of the shell" "" \
	"$(python3 - "$SHELL_OBJS" <<'PY'
import glob, os, subprocess, sys
d = sys.argv[1]
defs, undef = {}, {}
for o in glob.glob(os.path.join(d, '*.o')):
    n = os.path.basename(o)[:-2]
    if n.startswith('le_'):
        continue
    lines = subprocess.run(['nm', o], capture_output=True, text=True).stdout.splitlines()
    defs[n] = {l.split()[2] for l in lines if len(l.split()) == 3 and l.split()[1] in 'TDBR'}
    undef[n] = {l.split()[-1] for l in lines if l.split()[0] == 'U'}
g = {a: {b for b in defs if b != a and undef[a] & defs[b]} for a in defs}
if g.get('core'):
    print('core.c calls', sorted(g['core']))
state = {}
def visit(v, path):
    state[v] = 1
    for w in sorted(g[v]):
        if state.get(w) == 1:
            print('circle:', ' -> '.join(path[path.index(w):] + [w]))
        elif w not in state:
            visit(w, path + [w])
    state[v] = 2
for v in sorted(g):
    if v not in state:
        visit(v, [v])
PY
)"

# The front ends use the library through its API (issue 36): they call none
# of the machinery the session works with for them: the parser's entry, the
# planner, programs for the agent, push-down, the agent protocol, the
# snapshot reader, the wire codec.
FRONT_OBJS=$(ls "$SHELL_OBJS"/*.o "$SHELL_OBJS"/../serve/*.o build/src/lua/*.o 2>/dev/null)
check "the front ends' objects are built" yes "$([ -n "$FRONT_OBJS" ] && echo yes || echo no)"
# shellcheck disable=SC2086
check "the front ends call no parser entry, planner, program, push-down, protocol, snapshot or wire function" "" \
	"$(nm -u $FRONT_OBJS 2>/dev/null | awk '{print $2}' | grep -E '^(parse_snippet|plan_|pe_|prog_|dsl_pushdown|proto_|snap_|wire_|lq_|att_)' | grep -v '^att_hist_free$' | sort -u | head)"

# One evaluator over two heaps (issue 36): the query language's evaluator
# reads a heap only through the heap-access interface (src/dsl/heapif.h), so
# that the agent's backend can stand in for the dump's; the dump backend
# (src/dsl/heapif_dump.c) is what calls the heap model and the engine.
check "src/dsl/eval*.c read the heap only through heapif.h (no heap_, dom_, dyn_ call, h-> field, view's dump heap, HEAP_, HPROF_ or DYN_ name, heap or engine header)" "" \
	"$(grep -nE '\b(heap|dom|dyn)_[a-z_0-9]*\(|\bh->|(->|\.)dump\b|\bhvd(\.|->)h\b|\b(HEAP|HPROF|DYN)_[A-Z_]+|#include "\.\./(heap|engine)/' src/dsl/eval*.c | head)"
