/*
 * fuzz_lua.c - libFuzzer harness for the Lua module's entry points that
 * take text from outside (src/lua; docs/lua.md): the input, as a Lua
 * string, goes to h:query, h:class, h:classes, h:histogram, h:object,
 * h:path, h:dominators and h:retained of a session on the tiny heap
 * (tiny_heap.h), each under pcall, as a script would pass what a user
 * typed. (The input is data, not Lua code: running arbitrary code would
 * fuzz Lua itself, and os.execute.) Built with the shell's objects, its
 * main renamed, since the Lua module still lives on the shell (issue 17).
 */
#include "fuzz.h"
#include "tiny_heap.h"

#include <lauxlib.h>
#include <lua.h>

#include "../../src/shell/sh.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int sh_lua_run(struct sh *sh, const char *code, const char *name);

static struct sh sh;

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
	sh_current = &sh;
	sh.quiet = true;
	sh.no_index = true;
	if (sh_open(&sh, hw_save(&w)) != HS_OK || sh_lua_run(&sh, "", "init") != HS_OK)
		abort();
	hw_free(&w);	/* deletes the file; the heap keeps its mapping */
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lua_pushlstring((lua_State *)sh.lua, (const char *)data, size);
	lua_setglobal((lua_State *)sh.lua, "FUZZ");
	sh_lua_run(&sh, script, "fuzz");
	lua_gc((lua_State *)sh.lua, LUA_GCCOLLECT);
	return 0;
}
