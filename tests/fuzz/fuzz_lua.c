/*
 * fuzz_lua.c - libFuzzer harness for the Lua module's entry points that
 * take text from outside (src/lua; docs/lua.md): the input, as a Lua
 * string, goes to h:query, h:class, h:classes, h:histogram, h:object,
 * h:path, h:dominators and h:retained of a session on the tiny heap
 * (tiny_heap.h), each under pcall, as a script would pass what a user
 * typed. (The input is data, not Lua code: running arbitrary code would
 * fuzz Lua itself, and os.execute.) The Lua module runs on a session
 * (src/session) as its own host, without the shell.
 */
#include "fuzz.h"
#include "tiny_heap.h"

#include <lauxlib.h>
#include <lua.h>

#include "../../src/lua/heapsh_lua.h"
#include "../../src/session/session.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct hs_session *ss;
static lua_State *L;

static const char script[] =
	"local t, h = FUZZ, heapsh.current()\n"
	"for _, f in ipairs({'query', 'class', 'classes', 'histogram', 'object', 'path',\n"
	"                    'dominators', 'retained'}) do\n"
	"  local ok, r = pcall(h[f], h, t)\n"
	"  if ok and type(r) == 'table' then for _ in pairs(r) do end end\n"
	"end\n"
	"FUZZ = nil\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_quiet();
	struct hw w;
	tiny_heap(&w, 8);
	ss = hs_session_new();
	struct hs_options o = hs_get_options(ss);
	o.no_index = true;
	hs_set_options(ss, &o);
	if (hs_open(ss, hw_save(&w)) != HS_OK || !(L = hsl_open(ss)))
		abort();
	hw_free(&w);	/* deletes the file; the heap keeps its mapping */
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[2048];
	lua_pushlstring(L, (const char *)data, size);
	lua_setglobal(L, "FUZZ");
	hsl_run(L, script, "fuzz", err, sizeof err);
	lua_gc(L, LUA_GCCOLLECT);
	return 0;
}
