/*
 * lua_cmds.c - the shell as a host of the Lua module (src/lua/heapsh_lua.h):
 * :lua, :lua ... :end, :luafile and -l run in one Lua state per shell,
 * made on first use, whose heapsh.current() is the shell's session.
 */
#include <stdlib.h>

#include "../lua/heapsh_lua.h"
#include "sh.h"

static lua_State *state(struct sh *sh)
{
	if (!sh->lua)
		sh->lua = hsl_open(sh->ss);
	return sh->lua;
}

int sh_lua_run(struct sh *sh, const char *code, const char *name)
{
	lua_State *L = state(sh);
	if (!L)
		return sh_error(sh, NULL, "cannot create a Lua state (out of memory)");
	char err[2048];
	if (hsl_run(L, code, name, err, sizeof err) != HS_OK)
		return sh_error(sh, NULL, "%s", err);
	return HS_OK;
}

int sh_lua_file(struct sh *sh, const char *path, int argc, char **argv, int own)
{
	lua_State *L = state(sh);
	if (!L)
		return sh_error(sh, NULL, "cannot create a Lua state (out of memory)");
	char err[2048];
	if (hsl_run_file(L, path, argc, argv, own, err, sizeof err) != HS_OK)
		return sh_error(sh, NULL, "%s", err);
	return HS_OK;
}

void sh_lua_close(struct sh *sh)
{
	hsl_close(sh->lua);
	sh->lua = NULL;
}

int sh_cmd_lua(struct sh *sh, int argc, char **argv)
{
	(void)argv;
	if (argc < 2)
		return sh_error(sh, NULL, "usage: :lua CODE, or :lua alone on a line, then the code, "
				"then :end");
	return sh_error(sh, NULL, "internal: :lua is run from the raw line");
}

int sh_cmd_luafile(struct sh *sh, int argc, char **argv)
{
	if (argc < 2)
		return sh_error(sh, NULL, "usage: :luafile FILE [ARGS...]");
	return sh_lua_file(sh, argv[1], argc - 1, argv + 1, 1);
}
