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

#include "../base/fmt.h"
#include "lbind.h"

void lb_check_gen(lua_State *L, const struct lb_heap *hp, unsigned gen)
{
	if (!hp->ss || !hs_heap(hp->ss) || hs_gen(hp->ss) != gen)
		luaL_error(L, "this value belongs to a heap that was closed or replaced");
}

static struct lb_heap *heap_at(lua_State *L, int idx)
{
	return luaL_checkudata(L, idx, LB_HEAP);
}

/* The objects' metatable, also kept under this address in the registry. */
static const char object_meta_key = 0;

void lb_new_object(lua_State *L, struct lb_heap *hp, int heap_idx, int meta_idx, uint32_t i)
{
	struct lb_object *o = lua_newuserdatauv(L, sizeof *o, 1);
	o->hp = hp;
	o->i = i;
	o->gen = hs_gen(hp->ss);
	lua_pushvalue(L, heap_idx);
	lua_setiuservalue(L, -2, 1);
	lua_pushvalue(L, meta_idx);
	lua_setmetatable(L, -2);
}

void lb_push_object_meta(lua_State *L)
{
	lua_rawgetp(L, LUA_REGISTRYINDEX, &object_meta_key);	/* cheaper than by name */
}

void lb_push_object(lua_State *L, int heap_idx, uint32_t i)
{
	heap_idx = lua_absindex(L, heap_idx);
	lb_push_object_meta(L);
	lb_new_object(L, lua_touserdata(L, heap_idx), heap_idx, lua_gettop(L), i);	/* callers pass a heap */
	lua_remove(L, -2);
}

/*
 * new_list: a list of n objects, idx not set: user value 1 is its heap, 2
 * a userdata of its own indexes when it has them. Lua owns all its memory,
 * so lists need no finalizer (objects with one survive an extra collection
 * and cost a walk of the dominator tree, a list per node, about a quarter
 * of its time: docs/history/performance-journal.md, "Walking the dominator
 * tree from Lua").
 */
static struct lb_list *new_list(lua_State *L, int heap_idx, uint32_t n)
{
	heap_idx = lua_absindex(L, heap_idx);
	struct lb_heap *hp = heap_at(L, heap_idx);
	struct lb_list *l = lua_newuserdatauv(L, sizeof *l, 2);
	l->hp = hp;
	l->idx = NULL;
	l->n = n;
	l->gen = hs_gen(hp->ss);
	lua_pushvalue(L, heap_idx);
	lua_setiuservalue(L, -2, 1);
	luaL_setmetatable(L, LB_LIST);
	return l;
}

void lb_push_list(lua_State *L, int heap_idx, uint32_t *idx, uint32_t n)
{
	if (idx)
		lb_push_slice(L, heap_idx, idx, n);
	else
		new_list(L, heap_idx, n);
	free(idx);
}

struct lb_object *lb_checkobject(lua_State *L, int arg)
{
	struct lb_object *o = luaL_checkudata(L, arg, LB_OBJECT);
	lb_enter(L, o->hp);
	lb_check_gen(L, o->hp, o->gen);
	hs_adopt(o->hp->ss);	/* as lb_checkheap */
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
		uint32_t i = v->v.id ? heap_index(hs_heap(hp->ss), v->v.id) : HEAP_NONE;
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
	struct lb_list *l = new_list(L, heap_idx, n);
	uint32_t *copy = lua_newuserdatauv(L, (size_t)n * sizeof *copy, 0);
	memcpy(copy, a, (size_t)n * sizeof *copy);
	lua_setiuservalue(L, -2, 2);
	l->idx = copy;
}

void lb_push_view(lua_State *L, int heap_idx, const uint32_t *a, uint32_t n)
{
	new_list(L, heap_idx, n)->idx = a;
}

static int obj_refs(lua_State *L)
{
	struct lb_object *o = lb_checkobject(L, 1);
	uint32_t n;
	const uint32_t *out = heap_out(hs_heap(o->hp->ss), o->i, &n);
	lua_getiuservalue(L, 1, 1);
	lb_push_slice(L, -1, out, n);
	return 1;
}

static int obj_referrers(lua_State *L)
{
	struct lb_object *o = lb_checkobject(L, 1);
	uint32_t n;
	const uint32_t *in = heap_in(hs_heap(o->hp->ss), o->i, &n);
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
	const struct heap *h = hs_heap(o->hp->ss);
	if (!heap_field(h, o->i, name, &v)) {
		lua_pushnil(L);
		lua_pushfstring(L, "class %s has no field '%s'", heap_class_name(h, o->i), name);
		return 2;
	}
	lua_getiuservalue(L, 1, 1);
	lb_push_heap_value(L, -1, &v);
	return 1;
}

enum builtin_id {
	B_NONE, B_ID, B_CLASS, B_SIZE, B_RETAINED, B_DYNAMIC, B_KIND, B_LENGTH, B_TEXT, B_REFS,
	B_REFERRERS, B_FIELD, B_HEAP, B_LABEL
};

static const struct {
	const char *name;
	enum builtin_id id;
	bool always;		/* never shadowed by a Java field */
} builtins[] = {
	{"id", B_ID, false}, {"object_id", B_ID, true}, {"class", B_CLASS, false},
	{"size", B_SIZE, false}, {"shallow_size", B_SIZE, true}, {"retained", B_RETAINED, false},
	{"retained_size", B_RETAINED, true}, {"dynamic_size", B_DYNAMIC, true},
	{"kind", B_KIND, false}, {"length", B_LENGTH, false}, {"text", B_TEXT, false},
	{"refs", B_REFS, true}, {"referrers", B_REFERRERS, true}, {"field", B_FIELD, true},
	{"heap", B_HEAP, false}, {"android_heap", B_HEAP, true},
	{"label", B_LABEL, false},
};

static enum builtin_id builtin_of(const char *k, bool *always)
{
	for (size_t b = 0; b < sizeof builtins / sizeof *builtins; b++)
		if (!strcmp(builtins[b].name, k)) {
			*always = builtins[b].always;
			return builtins[b].id;
		}
	*always = false;
	return B_NONE;
}

static int builtin(lua_State *L, struct lb_object *o, enum builtin_id b)
{
	struct hs_session *ss = o->hp->ss;
	const struct heap *h = hs_heap(ss);
	switch (b) {
	case B_ID:
		lua_pushinteger(L, (lua_Integer)heap_id(h, o->i));
		break;
	case B_CLASS:
		lua_pushstring(L, heap_kind(h, o->i) == HEAP_CLASS ? "java.lang.Class"
								    : heap_class_name(h, o->i));
		break;
	case B_SIZE:
		lua_pushinteger(L, (lua_Integer)(h->size[o->i] != HEAP_SIZE_BIG ? h->size[o->i]
								     : heap_shallow(h, o->i)));
		break;
	case B_RETAINED: {
		struct dom_tree *t = hs_dom(ss, hs_get_options(ss).no_weak);
		if (!t)
			return luaL_error(L, "retained sizes are not available: %s", hs_errmsg(ss));
		lua_pushinteger(L, (lua_Integer)dom_retained(t, o->i));
		break;
	}
	case B_DYNAMIC: {
		struct dyn *d = hs_dyn(ss, false);
		uint64_t bytes;
		if (!d || dyn_exact(d, dyn_comp(d, o->i), &bytes) != HS_OK)
			return luaL_error(L, "dynamic sizes are not available: %s",
					  d ? "interrupted" : hs_errmsg(ss));
		lua_pushinteger(L, (lua_Integer)bytes);
		break;
	}
	case B_LABEL: {
		char *l = heap_object_label(h, o->i);
		lua_pushstring(L, l);
		free(l);
		break;
	}
	case B_KIND: {
		static const char *const kinds[] = {"instance", "object array", "primitive array",
						    "class"};
		lua_pushstring(L, kinds[heap_kind(h, o->i)]);
		break;
	}
	case B_LENGTH: {
		enum heap_kind kd = heap_kind(h, o->i);
		if (kd != HEAP_OBJ_ARRAY && kd != HEAP_PRIM_ARRAY)
			return 0;
		lua_pushinteger(L, heap_array_length(h, o->i));
		break;
	}
	case B_TEXT: {
		char *str = heap_string(h, o->i, 1 << 20);
		if (!str)
			return 0;
		lua_pushstring(L, str);
		free(str);
		break;
	}
	case B_HEAP: {	/* Android's heap of the object: app, zygote, image; nil elsewhere */
		const char *hn = heap_android_heap(h, o->i);
		if (!hn)
			return 0;
		lua_pushstring(L, hn);
		break;
	}
	case B_REFS: lua_pushcfunction(L, obj_refs); break;
	case B_REFERRERS: lua_pushcfunction(L, obj_referrers); break;
	case B_FIELD: lua_pushcfunction(L, obj_field); break;
	default: return 0;
	}
	return 1;
}

/*
 * obj[k]: a Java field by name first, then the built-ins; an integer k
 * indexes an array. Unknown names give nil (obj:field(name) says why).
 */
static int obj_index(lua_State *L)
{
	/* The metatable this closure was made for is its upvalue: a cheap type check. */
	struct lb_object *o = lua_touserdata(L, 1);
	if (!o || !lua_getmetatable(L, 1) || !lua_rawequal(L, -1, lua_upvalueindex(1)))
		return luaL_typeerror(L, 1, LB_OBJECT);
	lua_pop(L, 1);
	lb_check_gen(L, o->hp, o->gen);
	hs_adopt(o->hp->ss);	/* as lb_checkheap */
	const struct heap *h = hs_heap(o->hp->ss);
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
	/* Where this class keeps k, remembered per (class, interned key). */
	uint32_t c = h->cls[o->i];
	struct lb_member *m = &o->hp->members[(((uintptr_t)k >> 4) * 31u + c) % LB_MEMBERS];
	if (m->key != k || m->cls != c || m->gen != o->gen) {
		bool always;
		m->key = k;
		m->cls = c;
		m->gen = o->gen;
		m->builtin = (uint8_t)builtin_of(k, &always);
		if (always || heap_kind(h, o->i) != HEAP_INSTANCE ||
		    !heap_field_locate(h, c, k, &m->off, &m->type))
			m->type = 0;
	}
	if (m->type) {
		struct heap_value v = heap_field_at(h, o->i, m->off, m->type);
		lua_getiuservalue(L, 1, 1);
		lb_push_heap_value(L, -1, &v);
		return 1;
	}
	return builtin(L, o, (enum builtin_id)m->builtin);
}

static int obj_eq(lua_State *L)
{
	struct lb_object *a = lb_testobject(L, 1), *b = lb_testobject(L, 2);
	lua_pushboolean(L, a && b && a->hp->ss == b->hp->ss && a->gen == b->gen && a->i == b->i);
	return 1;
}

static int obj_tostring(lua_State *L)
{
	struct lb_object *o = luaL_checkudata(L, 1, LB_OBJECT);
	if (!o->hp->ss || !hs_heap(o->hp->ss) || hs_gen(o->hp->ss) != o->gen) {
		lua_pushstring(L, "<object of a closed heap>");
		return 1;
	}
	const struct heap *h = hs_heap(o->hp->ss);
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

static int list_tostring(lua_State *L)
{
	struct lb_list *l = luaL_checkudata(L, 1, LB_LIST);
	lua_pushfstring(L, "<list of %d object%s>", (int)l->n, fmt_s(l->n));
	return 1;
}

/* The state of l:iter(): upvalue 2 of the closure (1 the list, 3 its heap, 4 the objects' metatable). */
struct list_iter_state {
	struct lb_list *l;
	uint32_t k;		/* next place */
};

static int list_iter_next(lua_State *L)
{
	struct list_iter_state *it = lua_touserdata(L, lua_upvalueindex(2));
	struct lb_list *l = it->l;
	lb_check_gen(L, l->hp, l->gen);
	if (it->k >= l->n)
		return 0;
	uint32_t i = l->idx ? l->idx[it->k] : it->k;
	it->k++;
	lb_new_object(L, l->hp, lua_upvalueindex(3), lua_upvalueindex(4), i);
	return 1;
}
static int list_iter(lua_State *L)
{
	struct lb_list *l = checklist(L, 1);
	lua_settop(L, 1);
	struct list_iter_state *it = lua_newuserdatauv(L, sizeof *it, 0);
	it->l = l;
	it->k = 0;
	lua_getiuservalue(L, 1, 1);
	lb_push_object_meta(L);
	lua_pushcclosure(L, list_iter_next, 4);
	return 1;
}

/* list:ids(): a Lua table of the objects' ids (small lists: the caller's choice). */
static int list_ids(lua_State *L)
{
	struct lb_list *l = checklist(L, 1);
	const struct heap *h = hs_heap(l->hp->ss);
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
		{"__eq", obj_eq}, {"__tostring", obj_tostring}, {NULL, NULL}};
	luaL_newmetatable(L, LB_OBJECT);
	luaL_setfuncs(L, objmeta, 0);
	lua_pushvalue(L, -1);
	lua_pushcclosure(L, obj_index, 1);
	lua_setfield(L, -2, "__index");
	lua_rawsetp(L, LUA_REGISTRYINDEX, &object_meta_key);
	static const luaL_Reg listmeta[] = {
		{"__index", list_index}, {"__len", list_len},
		{"__tostring", list_tostring}, {NULL, NULL}};
	static const luaL_Reg listmethods[] = {{"iter", list_iter}, {"ids", list_ids}, {NULL, NULL}};
	luaL_newmetatable(L, LB_LIST);
	luaL_setfuncs(L, listmeta, 0);
	luaL_newlib(L, listmethods);
	lua_setfield(L, -2, "methods");
	lua_pop(L, 1);
}
