/*
 * heapsh_lua.h - the `heapsh` Lua module for a host (docs/manual.md,
 * "Scripting with Lua"; docs/architecture.md): a Lua state with the module
 * loaded, whose heapsh.current() is the host's session, and running code
 * and script files in it. The shell is one host (its :lua, :luafile and
 * -l); the module never calls its host.
 *
 * Errors come back as HS_ERR with the message ("lua: ..." and Lua's
 * traceback) in err (cap bytes); Ctrl-C (hs_interrupted) stops a running
 * script with "interrupted". Script output goes through src/out.
 *
 * Ownership: hsl_open returns a state closed with hsl_close; host must
 * outlive it (a borrowed session: the state never frees it).
 */
#ifndef HS_HEAPSH_LUA_H
#define HS_HEAPSH_LUA_H

#include <stddef.h>

#include <lua.h>

struct hs_session;

/* hsl_open: a Lua state with the standard libraries and heapsh; NULL when out of memory. */
lua_State *hsl_open(struct hs_session *host);
void hsl_close(lua_State *L);
/* hsl_run: run code as a chunk named name (":lua" when NULL). */
int hsl_run(lua_State *L, const char *code, const char *name, char *err, size_t cap);
/*
 * hsl_run_file: run the script at path with arg[0..argc-1] = argv and
 * argv[1..] as its arguments (...); heapsh.args() gives argv[own..].
 */
int hsl_run_file(lua_State *L, const char *path, int argc, char **argv, int own, char *err,
		 size_t cap);

#endif
