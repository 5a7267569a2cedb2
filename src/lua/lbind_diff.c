/*
 * lbind_diff.c - heap:diff in Lua (see lbind.h): the comparison of an older
 * dump with the heap (hs_diff; docs/manual.md, "Comparing dumps"), as the
 * same table `heapsh --format json diff` prints, schema heapsh-diff/1.
 */
#include <string.h>

#include "lbind.h"

/* side: the table of one dump of a comparison. */
static void side(lua_State *L, const struct hs_diff_side *s)
{
	lua_createtable(L, 0, 4);
	lua_pushstring(L, s->file);
	lua_setfield(L, -2, "file");
	lua_pushinteger(L, (lua_Integer)s->objects);
	lua_setfield(L, -2, "objects");
	lua_pushinteger(L, (lua_Integer)s->reachable_bytes);
	lua_setfield(L, -2, "reachable_bytes");
	if (s->jdk)
		lua_pushinteger(L, s->jdk);
	else
		lua_pushnil(L);
	lua_setfield(L, -2, "jdk");
}

/* push: the result d, rows by by_name, as heapsh --format json diff prints it. */
static void push(lua_State *L, const struct hs_diff *d, const char *by_name)
{
	lua_createtable(L, 0, 7);
	lua_pushstring(L, "heapsh-diff/1");
	lua_setfield(L, -2, "schema");
	side(L, &d->side[0]);
	lua_setfield(L, -2, "old");
	side(L, &d->side[1]);
	lua_setfield(L, -2, "new");
	lua_pushstring(L, by_name);
	lua_setfield(L, -2, "by");
	lua_pushinteger(L, d->r.candidates);
	lua_setfield(L, -2, "candidates");
	lua_createtable(L, (int)d->r.nrows, 0);
	for (uint32_t k = 0; k < d->r.nrows; k++) {
		const struct hdiff_row *r = &d->r.rows[k];
		lua_createtable(L, 0, 6);
		lua_pushstring(L, r->key);
		lua_setfield(L, -2, by_name);
		lua_pushinteger(L, (lua_Integer)r->objects[0]);
		lua_setfield(L, -2, "objects_before");
		lua_pushinteger(L, (lua_Integer)r->objects[1]);
		lua_setfield(L, -2, "objects_after");
		lua_pushinteger(L, (lua_Integer)r->retained[0]);
		lua_setfield(L, -2, "retained_before");
		lua_pushinteger(L, (lua_Integer)r->retained[1]);
		lua_setfield(L, -2, "retained_after");
		lua_pushinteger(L, (lua_Integer)r->growth);
		lua_setfield(L, -2, "retained_growth");
		lua_rawseti(L, -2, (lua_Integer)k + 1);
	}
	lua_setfield(L, -2, "rows");
	lua_createtable(L, (int)d->r.nconds, 0);
	for (uint32_t k = 0; k < d->r.nconds; k++) {
		const struct hdiff_cond *c = &d->r.conds[k];
		lua_createtable(L, 0, 8);
		lua_pushstring(L, c->text);
		lua_setfield(L, -2, "condition");
		lua_pushstring(L, c->pattern);
		lua_setfield(L, -2, "pattern");
		lua_pushnumber(L, c->limit);
		lua_setfield(L, -2, "limit");
		lua_pushstring(L, c->pct ? "percent" : "bytes");
		lua_setfield(L, -2, "limit_unit");
		lua_pushinteger(L, (lua_Integer)c->before);
		lua_setfield(L, -2, "before");
		lua_pushinteger(L, (lua_Integer)c->after);
		lua_setfield(L, -2, "after");
		lua_pushinteger(L, (lua_Integer)c->growth);
		lua_setfield(L, -2, "growth");
		lua_pushboolean(L, c->failed);
		lua_setfield(L, -2, "failed");
		lua_rawseti(L, -2, (lua_Integer)k + 1);
	}
	lua_setfield(L, -2, "conditions");
}

/*
 * heap:diff(OLDER [, {by = "class"|"package"|"path", top = N, fail_if =
 * {"PATTERN:+PCT%", ...}, mixed_jdk = bool}]) -> the comparison of the
 * older dump OLDER ("previous": the previous snapshot of the attached JVM)
 * with this heap, a table as heapsh --format json diff prints (schema,
 * old, new, by, candidates, rows, conditions) | nil, message. top defaults
 * to 25 (0: all). Misuse (a wrong by, top or fail_if) raises an error.
 */
int lb_heap_diff(lua_State *L)
{
	struct lb_heap *hp = lb_checkheap(L, 1);
	const char *older = luaL_checkstring(L, 2);
	static const char *const by_names[] = {"class", "package", "path", NULL};
	struct hs_diff_opts o = {.top = 25, .no_weak = hs_get_options(hp->ss).no_weak};
	const char *conds[64];
	if (!lua_isnoneornil(L, 3)) {
		luaL_checktype(L, 3, LUA_TTABLE);
		lua_getfield(L, 3, "by");
		const char *by = luaL_optstring(L, -1, "class");
		int k = 0;
		while (by_names[k] && strcmp(by_names[k], by))
			k++;
		if (!by_names[k])
			return luaL_argerror(L, 3, lua_pushfstring(L, "by: class, package or path, not '%s'", by));
		o.by = (enum hdiff_by)k;
		lua_getfield(L, 3, "top");
		lua_Integer top = luaL_optinteger(L, -1, 25);
		luaL_argcheck(L, top >= 0 && top <= 1000000, 3, "top: a number of rows, 0 for all");
		o.top = (uint32_t)top;
		lua_getfield(L, 3, "mixed_jdk");
		o.mixed_jdk = lua_toboolean(L, -1);
		lua_getfield(L, 3, "fail_if");	/* left on the stack while its strings are in use */
		if (!lua_isnil(L, -1)) {
			luaL_argcheck(L, lua_istable(L, -1), 3, "fail_if: a list of \"PATTERN:+PCT%\" or \"PATTERN:+SIZE\"");
			lua_Integer n = luaL_len(L, -1);
			luaL_argcheck(L, n <= 64, 3, "fail_if: at most 64 conditions");
			for (lua_Integer j = 1; j <= n; j++) {
				lua_rawgeti(L, -1 - (int)(j - 1), j);
				conds[j - 1] = luaL_checkstring(L, -1);
			}
			o.fail_if = conds;
			o.nfail_if = (uint32_t)n;
		}
	}
	struct hs_diff d;
	if (hs_diff(hp->ss, !strcmp(older, "previous") ? HS_PREVIOUS : older, &o, &d) != HS_OK) {
		hs_diff_free(&d);
		lua_pushnil(L);
		lua_pushstring(L, hs_errmsg(hp->ss));
		return 2;
	}
	push(L, &d, by_names[o.by]);
	hs_diff_free(&d);
	return 1;
}
