/*
 * lbind_object.c - objects and lists of objects in Lua (see lbind.h).
 * An object answers its Java fields by name (a field shadows a built-in
 * of the same name, as in the query language) and the built-ins id,
 * class, size, retained, dynamic_size, kind, length, text, refs(),
 * referrers(), field(name); object_id, shallow_size and retained_size
 * always mean the built-ins. Lists are indexed lazily from C arrays.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lbind.h"

void lb_check_gen(lua_State *L, const struct lb_heap *hp, unsigned gen)
{
	if (!hp->sh || !hp->sh->heap || hp->sh->gen != gen)
		luaL_error(L, "this value belongs to a heap that was closed or replaced");
}

static struct lb_heap *heap_at(lua_State *L, int idx)
{
	return luaL_checkudata(L, idx, LB_HEAP);
}

void lb_push_object(lua_State *L, int heap_idx, uint32_t i)
{
	heap_idx = lua_absindex(L, heap_idx);
	struct lb_heap *hp = heap_at(L, heap_idx);
	struct lb_object *o = lua_newuserdatauv(L, sizeof *o, 1);
	o->hp = hp;
	o->i = i;
	o->gen = hp->sh->gen;
	lua_pushvalue(L, heap_idx);
	lua_setiuservalue(L, -2, 1);
	luaL_setmetatable(L, LB_OBJECT);
}

void lb_push_list(lua_State *L, int heap_idx, uint32_t *idx, uint32_t n)
{
	heap_idx = lua_absindex(L, heap_idx);
	struct lb_heap *hp = heap_at(L, heap_idx);
	struct lb_list *l = lua_newuserdatauv(L, sizeof *l, 1);
	l->hp = hp;
	l->idx = idx;
	l->n = n;
	l->gen = hp->sh->gen;
	lua_pushvalue(L, heap_idx);
	lua_setiuservalue(L, -2, 1);
	luaL_setmetatable(L, LB_LIST);
}

struct lb_object *lb_checkobject(lua_State *L, int arg)
{
	struct lb_object *o = luaL_checkudata(L, arg, LB_OBJECT);
	lb_check_gen(L, o->hp, o->gen);
	return o;
}

struct lb_object *lb_testobject(lua_State *L, int arg)
{
	return luaL_testudata(L, arg, LB_OBJECT);
}

void lb_push_heap_value(lua_State *L, int heap_idx, const struct heap_value *v)
{
	struct lb_heap *hp = heap_at(L, heap_idx);
	switch (v->type) {
	case HPROF_OBJECT: {
		uint32_t i = v->v.id ? heap_index(hp->sh->heap, v->v.id) : HEAP_NONE;
		if (i == HEAP_NONE)
			lua_pushnil(L);
		else
			lb_push_object(L, heap_idx, i);
		break;
	}
	case HPROF_BOOLEAN:
		lua_pushboolean(L, v->v.i != 0);
		break;
	case HPROF_FLOAT:
	case HPROF_DOUBLE:
		lua_pushnumber(L, v->v.d);
		break;
	case HPROF_CHAR: {
		char c[8];
		uint32_t x = (uint32_t)v->v.i;
		if (x < 0x80) {
			c[0] = (char)x;
			c[1] = 0;
		} else if (x < 0x800) {
			c[0] = (char)(0xc0 | x >> 6);
			c[1] = (char)(0x80 | (x & 0x3f));
			c[2] = 0;
		} else {
			c[0] = (char)(0xe0 | x >> 12);
			c[1] = (char)(0x80 | ((x >> 6) & 0x3f));
			c[2] = (char)(0x80 | (x & 0x3f));
			c[3] = 0;
		}
		lua_pushstring(L, c);
		break;
	}
	case 0:
		lua_pushnil(L);
		break;
	default:
		lua_pushinteger(L, (lua_Integer)v->v.i);
		break;
	}
}

/* ---- objects ---- */

void lb_push_slice(lua_State *L, int heap_idx, const uint32_t *a, uint32_t n)
{
	uint32_t *copy = xmallocarray((size_t)n + 1, sizeof *copy);
	memcpy(copy, a, (size_t)n * sizeof *copy);
	lb_push_list(L, heap_idx, copy, n);
}

static int obj_refs(lua_State *L)
{
	struct lb_object *o = lb_checkobject(L, 1);
	uint32_t n;
	const uint32_t *out = heap_out(o->hp->sh->heap, o->i, &n);
	lua_getiuservalue(L, 1, 1);
	lb_push_slice(L, -1, out, n);
	return 1;
}

static int obj_referrers(lua_State *L)
{
	struct lb_object *o = lb_checkobject(L, 1);
	uint32_t n;
	const uint32_t *in = heap_in(o->hp->sh->heap, o->i, &n);
	lua_getiuservalue(L, 1, 1);
	lb_push_slice(L, -1, in, n);
	return 1;
}

/* obj:field(name): the field's value, or nil and a message when there is none. */
static int obj_field(lua_State *L)
{
	struct lb_object *o = lb_checkobject(L, 1);
	const char *name = luaL_checkstring(L, 2);
	struct heap_value v;
	const struct heap *h = o->hp->sh->heap;
	if (!heap_field(h, o->i, name, &v)) {
		lua_pushnil(L);
		lua_pushfstring(L, "class %s has no field '%s'", heap_class_name(h, o->i), name);
		return 2;
	}
	lua_getiuservalue(L, 1, 1);
	lb_push_heap_value(L, -1, &v);
	return 1;
}

static int builtin(lua_State *L, struct lb_object *o, const char *k)
{
	struct sh *sh = o->hp->sh;
	const struct heap *h = sh->heap;
	if (!strcmp(k, "id") || !strcmp(k, "object_id")) {
		lua_pushinteger(L, (lua_Integer)heap_id(h, o->i));
	} else if (!strcmp(k, "class")) {
		if (heap_kind(h, o->i) == HEAP_CLASS) {
			lua_pushstring(L, "java.lang.Class");
		} else {
			lua_pushstring(L, heap_class_name(h, o->i));
		}
	} else if (!strcmp(k, "size") || !strcmp(k, "shallow_size")) {
		lua_pushinteger(L, (lua_Integer)heap_shallow(h, o->i));
	} else if (!strcmp(k, "retained") || !strcmp(k, "retained_size")) {
		struct dom_tree *t = sh_dom(sh, sh->no_weak);
		if (!t)
			return luaL_error(L, "retained sizes are not available: %s", sh->last_error);
		lua_pushinteger(L, (lua_Integer)t->retained[o->i]);
	} else if (!strcmp(k, "dynamic_size")) {
		struct dyn *d = sh_dyn(sh, false);
		uint64_t bytes;
		if (!d || dyn_exact(d, dyn_comp(d, o->i), &bytes) != HS_OK)
			return luaL_error(L, "dynamic sizes are not available: %s",
					  d ? "interrupted" : sh->last_error);
		lua_pushinteger(L, (lua_Integer)bytes);
	} else if (!strcmp(k, "kind")) {
		static const char *const kinds[] = {"instance", "object array", "primitive array",
						    "class"};
		lua_pushstring(L, kinds[heap_kind(h, o->i)]);
	} else if (!strcmp(k, "length")) {
		enum heap_kind kd = heap_kind(h, o->i);
		if (kd != HEAP_OBJ_ARRAY && kd != HEAP_PRIM_ARRAY)
			return 0;
		lua_pushinteger(L, heap_array_length(h, o->i));
	} else if (!strcmp(k, "text")) {
		char *s = heap_string(h, o->i, 1 << 20);
		if (!s)
			return 0;
		lua_pushstring(L, s);
		free(s);
	} else if (!strcmp(k, "refs")) {
		lua_pushcfunction(L, obj_refs);
	} else if (!strcmp(k, "referrers")) {
		lua_pushcfunction(L, obj_referrers);
	} else if (!strcmp(k, "field")) {
		lua_pushcfunction(L, obj_field);
	} else {
		return 0;
	}
	return 1;
}

/*
 * obj[k]: a Java field by name first, then the built-ins; an integer k
 * indexes an array. Unknown names give nil (obj:field(name) says why).
 */
static int obj_index(lua_State *L)
{
	struct lb_object *o = lb_checkobject(L, 1);
	const struct heap *h = o->hp->sh->heap;
	if (lua_type(L, 2) == LUA_TNUMBER) {
		lua_Integer k = luaL_checkinteger(L, 2);
		enum heap_kind kd = heap_kind(h, o->i);
		if ((kd != HEAP_OBJ_ARRAY && kd != HEAP_PRIM_ARRAY) || k < 1 ||
		    k > (lua_Integer)heap_array_length(h, o->i))
			return 0;
		struct heap_value v = heap_array_elem(h, o->i, (uint32_t)(k - 1));
		lua_getiuservalue(L, 1, 1);
		lb_push_heap_value(L, -1, &v);
		return 1;
	}
	const char *k = luaL_checkstring(L, 2);
	bool always_builtin = !strcmp(k, "object_id") || !strcmp(k, "shallow_size") ||
			      !strcmp(k, "retained_size") || !strcmp(k, "dynamic_size") ||
			      !strcmp(k, "refs") || !strcmp(k, "referrers") || !strcmp(k, "field");
	struct heap_value v;
	if (!always_builtin && heap_field(h, o->i, k, &v)) {
		lua_getiuservalue(L, 1, 1);
		lb_push_heap_value(L, -1, &v);
		return 1;
	}
	return builtin(L, o, k);
}

static int obj_eq(lua_State *L)
{
	struct lb_object *a = lb_testobject(L, 1), *b = lb_testobject(L, 2);
	lua_pushboolean(L, a && b && a->hp->sh == b->hp->sh && a->gen == b->gen && a->i == b->i);
	return 1;
}

static int obj_tostring(lua_State *L)
{
	struct lb_object *o = luaL_checkudata(L, 1, LB_OBJECT);
	if (!o->hp->sh || !o->hp->sh->heap || o->hp->sh->gen != o->gen) {
		lua_pushstring(L, "<object of a closed heap>");
		return 1;
	}
	const struct heap *h = o->hp->sh->heap;
	if (heap_kind(h, o->i) == HEAP_CLASS) {
		uint32_t c = heap_class_of_object(h, o->i);
		char id[32];
		snprintf(id, sizeof id, "0x%" PRIx64, heap_id(h, o->i));
		lua_pushfstring(L, "%s class %s", id, c != HEAP_NONE ? h->classes[c].name : "?");
		return 1;
	}
	char id[32];
	snprintf(id, sizeof id, "0x%" PRIx64, heap_id(h, o->i));
	lua_pushfstring(L, "%s %s", id, heap_class_name(h, o->i));
	return 1;
}

/* ---- lists ---- */

static struct lb_list *checklist(lua_State *L, int arg)
{
	struct lb_list *l = luaL_checkudata(L, arg, LB_LIST);
	lb_check_gen(L, l->hp, l->gen);
	return l;
}

static int list_index(lua_State *L)
{
	struct lb_list *l = checklist(L, 1);
	if (lua_type(L, 2) != LUA_TNUMBER) {
		const char *k = luaL_checkstring(L, 2);
		luaL_getmetafield(L, 1, "methods");
		lua_getfield(L, -1, k);
		return 1;
	}
	lua_Integer k = luaL_checkinteger(L, 2);
	if (k < 1 || k > (lua_Integer)l->n)
		return 0;
	uint32_t i = l->idx ? l->idx[k - 1] : (uint32_t)(k - 1);
	lua_getiuservalue(L, 1, 1);
	lb_push_object(L, -1, i);
	return 1;
}

static int list_len(lua_State *L)
{
	struct lb_list *l = checklist(L, 1);
	lua_pushinteger(L, l->n);
	return 1;
}

static int list_gc(lua_State *L)
{
	struct lb_list *l = luaL_checkudata(L, 1, LB_LIST);
	free(l->idx);
	l->idx = NULL;
	l->n = 0;
	return 0;
}

static int list_tostring(lua_State *L)
{
	struct lb_list *l = luaL_checkudata(L, 1, LB_LIST);
	lua_pushfstring(L, "<list of %d objects>", (int)l->n);
	return 1;
}

static int list_iter_next(lua_State *L)
{
	struct lb_list *l = checklist(L, lua_upvalueindex(1));
	lua_Integer k = lua_tointeger(L, lua_upvalueindex(2));
	if (k >= (lua_Integer)l->n)
		return 0;
	lua_pushinteger(L, k + 1);
	lua_replace(L, lua_upvalueindex(2));
	uint32_t i = l->idx ? l->idx[k] : (uint32_t)k;
	lua_getiuservalue(L, lua_upvalueindex(1), 1);
	lb_push_object(L, -1, i);
	return 1;
}

/* list:iter(): for o in list:iter() do ... end */
static int list_iter(lua_State *L)
{
	checklist(L, 1);
	lua_pushvalue(L, 1);
	lua_pushinteger(L, 0);
	lua_pushcclosure(L, list_iter_next, 2);
	return 1;
}

/* list:ids(): a Lua table of the objects' ids (small lists: the caller's choice). */
static int list_ids(lua_State *L)
{
	struct lb_list *l = checklist(L, 1);
	const struct heap *h = l->hp->sh->heap;
	lua_createtable(L, (int)l->n, 0);
	for (uint32_t k = 0; k < l->n; k++) {
		lua_pushinteger(L, (lua_Integer)heap_id(h, l->idx ? l->idx[k] : k));
		lua_rawseti(L, -2, (lua_Integer)k + 1);
	}
	return 1;
}

void lb_object_meta(lua_State *L)
{
	static const luaL_Reg objmeta[] = {
		{"__index", obj_index}, {"__eq", obj_eq}, {"__tostring", obj_tostring}, {NULL, NULL}};
	luaL_newmetatable(L, LB_OBJECT);
	luaL_setfuncs(L, objmeta, 0);
	lua_pop(L, 1);
	static const luaL_Reg listmeta[] = {
		{"__index", list_index}, {"__len", list_len}, {"__gc", list_gc},
		{"__tostring", list_tostring}, {NULL, NULL}};
	static const luaL_Reg listmethods[] = {{"iter", list_iter}, {"ids", list_ids}, {NULL, NULL}};
	luaL_newmetatable(L, LB_LIST);
	luaL_setfuncs(L, listmeta, 0);
	luaL_newlib(L, listmethods);
	lua_setfield(L, -2, "methods");
	lua_pop(L, 1);
}
