# t_layers.sh - the layers of docs/architecture.md hold: the library
# (build/libheapsh.a: src/base, hprof, heap, engine, dsl, attach, alloc,
# session) includes and calls nothing of the front ends (src/out, src/lua,
# src/shell) and prints nothing but its fatal messages of running out of
# memory or disk (src/base); the Lua module does not include the shell; nothing
# under src/ but the shell includes the shell.
LIBDIRS="src/base src/hprof src/heap src/engine src/dsl src/attach src/alloc src/session"
# shellcheck disable=SC2086
check "the library includes no front end" "" \
	"$(grep -rn '#include "\.\./\(out\|lua\|shell\)/' $LIBDIRS | head)"
check "the Lua module does not include the shell" "" "$(grep -rn '#include "\.\./shell/' src/lua | head)"
check "nothing under src/ but the shell includes the shell" "" \
	"$(grep -rln '#include "\.\./shell/' src | grep -v '^src/shell/' | head)"
check "libheapsh.a calls no front end (no undefined sh_, out_, lb_, hsl_ or Lua symbol)" "" \
	"$(nm -u build/libheapsh.a 2>/dev/null | grep -E ' (sh_|out_|lb_|hsl_|luaL?_)' | sort -u | head)"
check "libheapsh.a is there and holds the session" yes \
	"$(nm build/libheapsh.a 2>/dev/null | grep -q ' T hs_dom$' && echo yes || echo no)"
# shellcheck disable=SC2086
check "the library writes to stderr or stdout only where documented (out of memory or disk)" \
	"src/base/big.c
src/base/mem.c
src/base/packed.c" "$(grep -rln 'stderr\|stdout\|\bprintf(\|\bputs(' $LIBDIRS | sort)"
# A file passing ~1,500 lines holds two concerns (docs/STYLE: split it along them; issue 36).
check "no file in src/ is over 1,500 lines" "" \
	"$(find src -name '*.[ch]' -exec wc -l {} + | awk '$2 != "total" && $1 > 1500 { print $2 ": " $1 " lines" }')"
