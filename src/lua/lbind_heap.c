/*
 * lbind_heap.c - the `heapsh` Lua module: heaps, classes, queries, an
 * attached JVM's allocation recording, tables, native functions, and
 * running scripts in the shell (see lbind.h and docs/manual.md,
 * "Scripting").
 */
#include <errno.h>
#include <inttypes.h>
#include <lualib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../out/out.h"
#include "heapsh_lua.h"
#include "lbind.h"

#define CURRENT_KEY "heapsh.current"
#define ARGS_KEY "heapsh.args"
#define SESSION_KEY "heapsh.session"

/* ---- heaps ---- */

struct lb_heap *lb_checkheap(lua_State *L, int arg)
{
	struct lb_heap *hp = luaL_checkudata(L, arg, LB_HEAP);
	lb_enter(L, hp);
	if (!hp->ss || !hs_heap(hp->ss)) {
		if (hp->ss && hs_live_pid(hp->ss) && hs_need_heap(hp->ss) == HS_OK)
			return hp;
		luaL_error(L, "no heap is open here%s%s", hp->ss && hs_errmsg(hp->ss)[0] ? ": " : "",
			   hp->ss ? hs_errmsg(hp->ss) : "");
	}
	/* What an earlier call wrote to the index is used from there: calls
	 * keep no pointer into the heap's or the tree's arrays (lb_push_view's
	 * children index stays), so between two is as safe as a command's end. */
	hs_adopt(hp->ss);
	return hp;
}

/* host_of: the session of the host that made this Lua state (heapsh.current()'s). */
static struct hs_session *host_of(lua_State *L)
{
	lua_getfield(L, LUA_REGISTRYINDEX, SESSION_KEY);
	struct hs_session *ss = lua_touserdata(L, -1);
	lua_pop(L, 1);
	return ss;
}

static struct lb_heap *new_heap(lua_State *L, struct hs_session *ss, bool owned)
{
	struct lb_heap *hp = lua_newuserdatauv(L, sizeof *hp, 0);
	hp->ss = ss;
	hp->owned = owned;
	luaL_setmetatable(L, LB_HEAP);
	return hp;
}

static void close_owned(struct lb_heap *hp)
{
	if (hp->owned && hp->ss)
		hs_session_free(hp->ss);	/* the connection is dropped without a word */
	hp->ss = NULL;
}

static int heap_gc(lua_State *L)
{
	close_owned(luaL_checkudata(L, 1, LB_HEAP));
	return 0;
}

/* heap:close(): give the heap back now (only heaps the script opened). */
static int heap_close(lua_State *L)
{
	struct lb_heap *hp = luaL_checkudata(L, 1, LB_HEAP);
	if (!hp->owned)
		return luaL_error(L, "the shell's current heap is closed by the shell (:open), not "
				  "by a script");
	close_owned(hp);
	return 0;
}

static int heap_tostring(lua_State *L)
{
	struct lb_heap *hp = luaL_checkudata(L, 1, LB_HEAP);
	if (hp->ss && !hs_heap(hp->ss) && hs_live_pid(hp->ss))
		lua_pushfstring(L, "<heap: JVM %d, no snapshot>", hs_live_pid(hp->ss));
	else if (hp->ss && hs_heap(hp->ss) && hs_live_pid(hp->ss))
		lua_pushfstring(L, "<heap: JVM %d, a snapshot of %d objects>", hs_live_pid(hp->ss),
				(int)hs_heap(hp->ss)->n);
	else if (!hp->ss || !hs_heap(hp->ss))
		lua_pushstring(L, "<heap (closed)>");
	else
		lua_pushfstring(L, "<heap %s: %d objects>",
				hs_dump_path(hp->ss) ? hs_dump_path(hp->ss) : "(live snapshot)",
				(int)hs_heap(hp->ss)->n);
	return 1;
}

/* new_session: a session of the script's own, with the host's settings; silent. */
static struct hs_session *new_session(lua_State *L)
{
	struct hs_session *cur = host_of(L), *s = hs_session_new();
	if (cur) {
		struct hs_options o = hs_get_options(s), c = hs_get_options(cur);
		o.no_weak = c.no_weak;
		o.no_index = c.no_index;
		o.no_spill = c.no_spill;
		o.oop_size = c.oop_size;
		o.layout_jdk = c.layout_jdk;
		hs_set_options(s, &o);
	}
	return s;
}

/* heapsh.open(path) -> heap | nil, message */
static int lb_open(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	struct hs_session *s = new_session(L);
	/* the session's open: the heap model from the index when it has one */
	if (hs_open(s, path) != HS_OK) {
		lua_pushnil(L);
		lua_pushfstring(L, "%s: %s", path, hs_errmsg(s));
		hs_session_free(s);
		return 2;
	}
	hs_rest(s);	/* as the shell after its open: the loader's arrays go */
	new_heap(L, s, true);
	return 1;
}

/* heapsh.attach(pid) -> heap | nil, message */
static int lb_attach(lua_State *L)
{
	lua_Integer pid = luaL_checkinteger(L, 1);
	struct hs_session *s = new_session(L);
	if (pid <= 0 || pid > INT32_MAX || hs_attach(s, (int)pid) != HS_OK) {
		lua_pushnil(L);
		lua_pushstring(L, pid > 0 && pid <= INT32_MAX ? hs_errmsg(s) : "not a process id");
		hs_session_free(s);
		return 2;
	}
	new_heap(L, s, true);
	return 1;
}

/* heapsh.current() -> the shell's heap (nil, message when none is open) */
static int lb_current(lua_State *L)
{
	struct hs_session *ss = host_of(L);
	if (!ss || (!hs_heap(ss) && !hs_live_pid(ss))) {
		lua_pushnil(L);
		lua_pushstring(L, "no heap is open in the shell");
		return 2;
	}
	lua_getfield(L, LUA_REGISTRYINDEX, CURRENT_KEY);
	return 1;
}

/* by_count, by_bytes: qsort orders of class indices for heap:histogram, largest first, then by index. */
static const struct heap *sort_heap;

static int larger_first(uint64_t x, uint64_t y, uint32_t a, uint32_t b)
{
	return x < y ? 1 : x > y ? -1 : (a > b) - (a < b);
}

static int by_count(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	return larger_first(sort_heap->classes[i].count, sort_heap->classes[j].count, i, j);
}

static int by_bytes(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	return larger_first(sort_heap->classes[i].shallow, sort_heap->classes[j].shallow, i, j);
}

/*
 * heap:histogram([{by = "count"|"bytes"|"retained", top = N}]) -> an array
 * of rows {class, count, bytes[, retained]}, one per class object with
 * instances: in class order without options, else largest first by `by`,
 * the first top of them (default all). by = "retained" adds what all the
 * instances of each class keep alive together (the retained size of the
 * class, exact for every class: dom_classes_by_retained, as :histogram
 * --by retained); it needs the dominator tree (nil, message when it cannot
 * be had). Errors: a bad option.
 */
static int heap_histogram(lua_State *L)
{
	struct lb_heap *hp = lb_checkheap(L, 1);
	const struct heap *h = hs_heap(hp->ss);
	const char *by = NULL;
	lua_Integer top = 0;
	if (!lua_isnoneornil(L, 2)) {
		luaL_checktype(L, 2, LUA_TTABLE);
		lua_getfield(L, 2, "by");
		by = lua_isnil(L, -1) ? "count" : luaL_checkstring(L, -1);
		lua_getfield(L, 2, "top");
		top = lua_isnil(L, -1) ? 0 : luaL_checkinteger(L, -1);
		lua_pop(L, 2);
		if (strcmp(by, "count") && strcmp(by, "bytes") && strcmp(by, "retained"))
			return luaL_error(L, "bad option by = '%s' to 'histogram' (count, bytes or retained expected)", by);
		if (top < 0)
			return luaL_error(L, "bad option top = %d to 'histogram' (0 or more expected)", (int)top);
	}
	/* the classes with instances, in a buffer Lua owns */
	uint32_t *v = lua_newuserdatauv(L, ((size_t)h->nclasses + 1) * sizeof *v, 0);
	uint32_t n = 0;
	for (uint32_t c = 0; c < h->nclasses; c++)
		if (h->classes[c].count)
			v[n++] = c;
	uint64_t *ret = NULL;
	if (by && !strcmp(by, "retained")) {
		struct dom_tree *t = hs_dom(hp->ss, hs_get_options(hp->ss).no_weak);
		if (!t) {
			lua_pushnil(L);
			lua_pushstring(L, hs_errmsg(hp->ss));
			return 2;
		}
		uint64_t *r;
		if (dom_classes_by_retained(t, v, &n, 0, &r) != HS_OK)
			return luaL_error(L, "interrupted");
		ret = lua_newuserdatauv(L, ((size_t)n + 1) * sizeof *ret, 0);	/* Lua's: no leak on an error */
		memcpy(ret, r, (size_t)n * sizeof *ret);
		free(r);
	} else if (by) {
		sort_heap = h;
		qsort(v, n, sizeof *v, !strcmp(by, "bytes") ? by_bytes : by_count);
	}
	uint32_t shown = top > 0 && (uint64_t)top < n ? (uint32_t)top : n;
	lua_createtable(L, (int)shown, 0);
	for (uint32_t k = 0; k < shown; k++) {
		uint32_t c = v[k];
		lua_createtable(L, 0, 4);
		lua_pushstring(L, h->classes[c].name);
		lua_setfield(L, -2, "class");
		lua_pushinteger(L, (lua_Integer)h->classes[c].count);
		lua_setfield(L, -2, "count");
		lua_pushinteger(L, (lua_Integer)h->classes[c].shallow);
		lua_setfield(L, -2, "bytes");
		if (ret) {
			lua_pushinteger(L, (lua_Integer)ret[k]);
			lua_setfield(L, -2, "retained");
		}
		lua_rawseti(L, -2, (lua_Integer)k + 1);
	}
	return 1;
}

/* ---- classes ---- */

void lb_push_class(lua_State *L, int heap_idx, uint32_t c)
{
	heap_idx = lua_absindex(L, heap_idx);
	struct lb_heap *hp = luaL_checkudata(L, heap_idx, LB_HEAP);
	struct lb_class *k = lua_newuserdatauv(L, sizeof *k, 1);
	k->hp = hp;
	k->c = c;
	k->gen = hs_gen(hp->ss);
	lua_pushvalue(L, heap_idx);
	lua_setiuservalue(L, -2, 1);
	luaL_setmetatable(L, LB_CLASS);
}

static struct lb_class *checkclass(lua_State *L, int arg)
{
	struct lb_class *k = luaL_checkudata(L, arg, LB_CLASS);
	lb_check_gen(L, k->hp, k->gen);
	return k;
}

static int class_instances(lua_State *L)
{
	struct lb_class *k = checkclass(L, 1);
	uint32_t n;
	const uint32_t *inst = heap_instances(hs_heap(k->hp->ss), k->c, &n);
	lua_getiuservalue(L, 1, 1);
	lb_push_slice(L, -1, inst, n);
	return 1;
}

static int class_index(lua_State *L)
{
	struct lb_class *k = checkclass(L, 1);
	const char *key = luaL_checkstring(L, 2);
	const struct heap *h = hs_heap(k->hp->ss);
	const struct heap_class *c = &h->classes[k->c];
	if (!strcmp(key, "name")) {
		lua_pushstring(L, c->name);
	} else if (!strcmp(key, "count")) {
		lua_pushinteger(L, (lua_Integer)c->count);
	} else if (!strcmp(key, "shallow")) {
		lua_pushinteger(L, (lua_Integer)c->shallow);
	} else if (!strcmp(key, "instance_size")) {
		lua_pushinteger(L, c->inst_size);
	} else if (!strcmp(key, "id")) {
		lua_pushinteger(L, (lua_Integer)c->id);
	} else if (!strcmp(key, "super")) {
		if (c->super == HEAP_NONE)
			return 0;
		lua_getiuservalue(L, 1, 1);
		lb_push_class(L, -1, c->super);
	} else if (!strcmp(key, "loader") || !strcmp(key, "object")) {
		uint32_t o = key[0] == 'l' ? c->loader : c->obj;
		if (o == HEAP_NONE)
			return 0;
		lua_getiuservalue(L, 1, 1);
		lb_push_object(L, -1, o);
	} else if (!strcmp(key, "instances")) {
		lua_pushcfunction(L, class_instances);
	} else {
		struct heap_value v;
		if (!heap_static(h, k->c, key, &v))
			return 0;
		lua_getiuservalue(L, 1, 1);
		lb_push_heap_value(L, -1, &v);
	}
	return 1;
}

static int class_tostring(lua_State *L)
{
	struct lb_class *k = luaL_checkudata(L, 1, LB_CLASS);
	if (!k->hp->ss || !hs_heap(k->hp->ss) || hs_gen(k->hp->ss) != k->gen)
		lua_pushstring(L, "<class of a closed heap>");
	else
		lua_pushfstring(L, "class %s", hs_heap(k->hp->ss)->classes[k->c].name);
	return 1;
}

static int class_eq(lua_State *L)
{
	struct lb_class *a = luaL_testudata(L, 1, LB_CLASS), *b = luaL_testudata(L, 2, LB_CLASS);
	lua_pushboolean(L, a && b && a->hp->ss == b->hp->ss && a->gen == b->gen && a->c == b->c);
	return 1;
}

static int heap_classes(lua_State *L)
{
	struct lb_heap *hp = lb_checkheap(L, 1);
	const struct heap *h = hs_heap(hp->ss);
	lua_createtable(L, (int)h->nclasses, 0);
	for (uint32_t c = 0; c < h->nclasses; c++) {
		lb_push_class(L, 1, c);
		lua_rawseti(L, -2, (lua_Integer)c + 1);
	}
	return 1;
}

/* heap:class(name) -> class | nil, message */
static int heap_class(lua_State *L)
{
	struct lb_heap *hp = lb_checkheap(L, 1);
	const char *name = luaL_checkstring(L, 2);
	uint32_t c = heap_class_by_name(hs_heap(hp->ss), name);
	if (c == HEAP_NONE) {
		uint32_t *v, n = heap_find_classes(hs_heap(hp->ss), name, &v);
		c = n == 1 ? v[0] : HEAP_NONE;
		free(v);
		if (c == HEAP_NONE) {
			lua_pushnil(L);
			lua_pushfstring(L, n ? "'%s' matches %d classes" : "no class named '%s'", name,
					(int)n);
			return 2;
		}
	}
	lb_push_class(L, 1, c);
	return 1;
}

/* heap:object(id) -> object | nil, message */
static int heap_object(lua_State *L)
{
	struct lb_heap *hp = lb_checkheap(L, 1);
	uint64_t id;
	if (lua_type(L, 2) == LUA_TSTRING) {
		char *end;
		const char *s = lua_tostring(L, 2);
		errno = 0;
		id = strtoull(s, &end, 0);
		if (*end || errno)
			return luaL_argerror(L, 2, "an object id (a number or \"0x...\")");
	} else {
		id = (uint64_t)luaL_checkinteger(L, 2);
	}
	uint32_t i = heap_index(hs_heap(hp->ss), id);
	if (i == HEAP_NONE) {
		char msg[64];
		snprintf(msg, sizeof msg, "no object with id 0x%" PRIx64 " in this heap", id);
		lua_pushnil(L);
		lua_pushstring(L, msg);
		return 2;
	}
	lb_push_object(L, 1, i);
	return 1;
}

/*
 * The state of h:objects(): a userdata the iterator closure holds (its
 * upvalue 2; upvalue 1 is the heap, 3 the objects' metatable), one lookup
 * per step.
 */
struct objects_iter {
	struct lb_heap *hp;
	unsigned gen;
	bool all;		/* every object: place k is object k */
	uint32_t k, n;		/* next place, places */
	uint32_t set[];		/* the objects of the classes asked for; empty for all */
};

static int objects_next(lua_State *L)
{
	struct objects_iter *it = lua_touserdata(L, lua_upvalueindex(2));
	lb_check_gen(L, it->hp, it->gen);
	if ((it->k & 0xfff) == 0 && hs_interrupted)
		return luaL_error(L, "interrupted");
	if (it->k >= it->n)
		return 0;
	uint32_t i = it->all ? it->k : it->set[it->k];
	it->k++;
	lb_new_object(L, it->hp, lua_upvalueindex(1), lua_upvalueindex(3), i);
	return 1;
}

/*
 * heap:objects([class]) -> an iterator over every object, or over the
 * instances of the classes a name or pattern matches (or of a class value).
 */
static int heap_objects(lua_State *L)
{
	struct lb_heap *hp = lb_checkheap(L, 1);
	const struct heap *h = hs_heap(hp->ss);
	bool all = lua_isnoneornil(L, 2);
	lua_settop(L, 2);
	lua_pushvalue(L, 1);
	struct objects_iter *it;
	if (all) {
		it = lua_newuserdatauv(L, sizeof *it + sizeof it->set[0], 0);
		it->n = h->n;
	} else {
		uint32_t *cls, nc;
		struct lb_class *kc = luaL_testudata(L, 2, LB_CLASS);
		if (kc) {
			cls = xmalloc(sizeof *cls);
			cls[0] = kc->c;
			nc = 1;
		} else {
			nc = heap_find_classes(h, luaL_checkstring(L, 2), &cls);
		}
		uint64_t total = 0;
		for (uint32_t k = 0; k < nc; k++)
			total += h->classes[cls[k]].count;
		it = lua_newuserdatauv(L, sizeof *it + (total + 1) * sizeof it->set[0], 0);
		it->n = 0;
		for (uint32_t k = 0; k < nc; k++) {
			uint32_t cnt;
			const uint32_t *inst = heap_instances(h, cls[k], &cnt);
			memcpy(it->set + it->n, inst, (size_t)cnt * sizeof *inst);
			it->n += cnt;
		}
		free(cls);
	}
	it->hp = hp;
	it->gen = hs_gen(hp->ss);
	it->all = all;
	it->k = 0;
	lb_push_object_meta(L);
	lua_pushcclosure(L, objects_next, 3);
	return 1;
}

static const char *root_kind(uint8_t k)
{
	return heap_root_kind_name(k);
}

static int heap_roots(lua_State *L)
{
	struct lb_heap *hp = lb_checkheap(L, 1);
	const struct heap *h = hs_heap(hp->ss);
	lua_createtable(L, (int)h->nroots, 0);
	for (uint32_t r = 0; r < h->nroots; r++) {
		lua_createtable(L, 0, 3);
		lb_push_object(L, 1, h->roots[r].obj);
		lua_setfield(L, -2, "object");
		lua_pushstring(L, root_kind(h->roots[r].kind));
		lua_setfield(L, -2, "kind");
		if (h->roots[r].thread != HEAP_NONE) {
			char *name = heap_thread_name(h, h->roots[r].thread);
			lua_pushstring(L, name ? name : "?");
			free(name);
			lua_setfield(L, -2, "thread");
		}
		if (h->roots[r].frame >= 0) {
			lua_pushinteger(L, h->roots[r].frame);
			lua_setfield(L, -2, "frame");
		}
		lua_rawseti(L, -2, (lua_Integer)r + 1);
	}
	return 1;
}

static int heap_threads(lua_State *L)
{
	struct lb_heap *hp = lb_checkheap(L, 1);
	const struct heap *h = hs_heap(hp->ss);
	lua_createtable(L, (int)h->nthreads, 0);
	for (uint32_t t = 0; t < h->nthreads; t++) {
		const struct heap_thread *th = &h->threads[t];
		lua_createtable(L, 0, 3);
		char *name = heap_thread_name(h, t);
		lua_pushstring(L, name ? name : "?");
		free(name);
		lua_setfield(L, -2, "name");
		if (th->obj != HEAP_NONE) {
			lb_push_object(L, 1, th->obj);
			lua_setfield(L, -2, "object");
		}
		lua_createtable(L, (int)th->nframes, 0);
		for (uint32_t f = 0; f < th->nframes; f++) {
			const struct heap_frame *fr = &h->frames[th->frames[f]];
			lua_pushfstring(L, "%s.%s", fr->class_name, fr->method);
			lua_rawseti(L, -2, (lua_Integer)f + 1);
		}
		lua_setfield(L, -2, "frames");
		lua_rawseti(L, -2, (lua_Integer)t + 1);
	}
	return 1;
}

/*
 * heap:dominators([id | object]) -> list of the objects dominated directly
 * (largest first): a view of the tree's children index (dom_children_view),
 * not a copy, so a walk of the whole tree costs O(1) per call. The first
 * call for an object builds the index (8 bytes per object, kept with the
 * tree); the GC roots' children alone are one scan and a copy, as the
 * shell's :dominators takes them, so a script that reads only the top of
 * the tree holds no more memory than before.
 */
static int heap_dominators(lua_State *L)
{
	struct lb_heap *hp = lb_checkheap(L, 1);
	struct dom_tree *t = hs_dom(hp->ss, hs_get_options(hp->ss).no_weak);
	if (!t) {
		lua_pushnil(L);
		lua_pushstring(L, hs_errmsg(hp->ss));
		return 2;
	}
	uint32_t v = hs_heap(hp->ss)->n;
	if (!lua_isnoneornil(L, 2)) {
		struct lb_object *o = lb_testobject(L, 2);
		if (o) {
			lb_check_gen(L, o->hp, o->gen);
			if (o->hp->ss != hp->ss)
				return luaL_argerror(L, 2, "an object of another heap");
			v = o->i;
		} else {
			v = heap_index(hs_heap(hp->ss), (uint64_t)luaL_checkinteger(L, 2));
			if (v == HEAP_NONE) {
				lua_pushnil(L);
				lua_pushstring(L, "no such object");
				return 2;
			}
		}
	}
	uint32_t n;
	if (v == hs_heap(hp->ss)->n && !t->kids) {
		uint32_t *copy = dom_children(t, v, &n);
		lb_push_list(L, 1, copy, n);
		return 1;
	}
	const uint32_t *ch = dom_children_view(t, v, &n);
	lb_push_view(L, 1, ch, n);
	return 1;
}

/* opt_pct: the percentage opts[key] in (0, 100], or dflt when absent. */
static double opt_pct(lua_State *L, int opts, const char *key, double dflt)
{
	if (lua_isnoneornil(L, opts))
		return dflt;
	lua_getfield(L, opts, key);
	double v = lua_isnil(L, -1) ? dflt : luaL_checknumber(L, -1);
	lua_pop(L, 1);
	if (!(v > 0 && v <= 100))
		luaL_error(L, "suspects: %s must be a percentage above 0 and up to 100", key);
	return v;
}

/*
 * heap:suspects([{threshold = PCT, child = PCT, baseline = OLDER_DUMP}])
 * -> list of suspects, largest first (the rows of :suspects;
 * src/engine/suspects.h, hs_suspects), each a table: rank, description,
 * retained_bytes, heap_pct, objects (what piles up), piled (its class name
 * or nil), accumulation_point and holder (objects), members (the objects
 * that keep the memory), where (the field chain), path (the shortest path
 * from a GC root to the accumulation point, a list of objects), path_text;
 * with a baseline also base_retained_bytes (nil when the suspect is not in
 * the older dump) and growth_bytes | nil, message.
 */
static int heap_suspects(lua_State *L)
{
	struct lb_heap *hp = lb_checkheap(L, 1);
	if (!lua_isnoneornil(L, 2))
		luaL_checktype(L, 2, LUA_TTABLE);
	struct sus_opts o = {opt_pct(L, 2, "threshold", 10), opt_pct(L, 2, "child", 80)};
	const char *baseline = NULL;
	if (!lua_isnoneornil(L, 2)) {
		lua_getfield(L, 2, "baseline");	/* left on the stack while in use */
		baseline = lua_isnil(L, -1) ? NULL : luaL_checkstring(L, -1);
	}
	struct suspect *s;
	uint32_t n;
	if (hs_suspects(hp->ss, &o, hs_get_options(hp->ss).no_weak, baseline, &s, &n, NULL) != HS_OK) {
		lua_pushnil(L);
		lua_pushstring(L, hs_errmsg(hp->ss));
		return 2;
	}
	struct dom_tree *t = hs_dom(hp->ss, hs_get_options(hp->ss).no_weak);	/* made by hs_suspects */
	const struct heap *h = hs_heap(hp->ss);
	uint64_t reachable = dom_retained(t, h->n);
	lua_createtable(L, (int)n, 0);
	for (uint32_t i = 0; i < n; i++) {
		lua_createtable(L, 0, 14);
		lua_pushinteger(L, i + 1);
		lua_setfield(L, -2, "rank");
		lua_pushstring(L, s[i].description);
		lua_setfield(L, -2, "description");
		lua_pushinteger(L, (lua_Integer)s[i].retained);
		lua_setfield(L, -2, "retained_bytes");
		lua_pushnumber(L, reachable ? 100.0 * (double)s[i].retained / (double)reachable : 0);
		lua_setfield(L, -2, "heap_pct");
		lua_pushinteger(L, (lua_Integer)s[i].npiled);
		lua_setfield(L, -2, "objects");
		if (s[i].piled)
			lua_pushstring(L, s[i].piled);
		else
			lua_pushnil(L);
		lua_setfield(L, -2, "piled");
		lb_push_object(L, 1, s[i].acc);
		lua_setfield(L, -2, "accumulation_point");
		lb_push_object(L, 1, s[i].holder);
		lua_setfield(L, -2, "holder");
		uint32_t *m = xmallocarray(s[i].nmembers + 1, sizeof *m);
		memcpy(m, s[i].members, s[i].nmembers * sizeof *m);
		lb_push_list(L, 1, m, s[i].nmembers);
		lua_setfield(L, -2, "members");
		lua_pushstring(L, s[i].where);
		lua_setfield(L, -2, "where");
		uint32_t *p = xmallocarray(s[i].path.len + 1, sizeof *p);
		memcpy(p, s[i].path.nodes, s[i].path.len * sizeof *p);
		lb_push_list(L, 1, p, s[i].path.len);
		lua_setfield(L, -2, "path");
		char *text = sus_path_text(h, &s[i].path, false, 0);
		lua_pushstring(L, text);
		free(text);
		lua_setfield(L, -2, "path_text");
		if (baseline) {
			if (s[i].has_base)
				lua_pushinteger(L, (lua_Integer)s[i].base_retained);
			else
				lua_pushnil(L);
			lua_setfield(L, -2, "base_retained_bytes");
			lua_pushinteger(L, (lua_Integer)s[i].growth);
			lua_setfield(L, -2, "growth_bytes");
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	sus_free(s, n);
	return 1;
}

/*
 * same_heap: a value of heap of (made at generation gen) may be used with
 * heap hp: still of its heap, and of that heap (indexes of another heap
 * would read the wrong objects, or past the end).
 */
static void same_heap(lua_State *L, const struct lb_heap *hp, const struct lb_heap *of,
		      unsigned gen)
{
	lb_check_gen(L, of, gen);
	if (of->ss != hp->ss)
		luaL_error(L, "an object, list or class of another heap");
}

/* heap:path(id | object) -> list from a GC root to the object | nil, message */
static int heap_path(lua_State *L)
{
	struct lb_heap *hp = lb_checkheap(L, 1);
	struct lb_object *o = lb_testobject(L, 2);
	if (o)
		same_heap(L, hp, o->hp, o->gen);
	uint32_t v = o ? o->i : heap_index(hs_heap(hp->ss), (uint64_t)luaL_checkinteger(L, 2));
	if (v == HEAP_NONE) {
		lua_pushnil(L);
		lua_pushstring(L, "no such object");
		return 2;
	}
	struct hgraph g;
	hg_init(&g, hs_heap(hp->ss), hs_get_options(hp->ss).no_weak, true);
	struct path *p;
	uint32_t np;
	int st = path_to_roots(&g, v, 1, &p, &np);
	hg_free(&g);
	if (st != HS_OK)
		return luaL_error(L, "interrupted");
	if (!np) {
		lua_pushnil(L);
		lua_pushstring(L, "the object is unreachable from the GC roots");
		return 2;
	}
	lb_push_slice(L, 1, p[0].nodes, p[0].len);
	path_free(p, np);
	return 1;
}

/*
 * The members heap:retained takes: counted first (a == NULL), then copied
 * into a buffer Lua owns, so an error raised half way leaks nothing.
 */
struct members {
	uint32_t *a;
	size_t n;
};

static void members_add(struct members *m, const uint32_t *objs, size_t n)
{
	if (m->a && objs)
		memcpy(m->a + m->n, objs, n * sizeof *objs);
	else if (m->a)
		for (size_t i = 0; i < n; i++)	/* a list of every object: 0..n-1 */
			m->a[m->n + i] = (uint32_t)i;
	m->n += n;
}

/*
 * add_members: the objects the value at stack index idx names (an object,
 * a list of objects, or a class: all its instances) added to m. False
 * when it is none of those.
 */
static bool add_members(lua_State *L, struct lb_heap *hp, int idx, struct members *m)
{
	struct lb_object *o = lb_testobject(L, idx);
	struct lb_list *l = luaL_testudata(L, idx, LB_LIST);
	struct lb_class *k = luaL_testudata(L, idx, LB_CLASS);
	if (o) {
		same_heap(L, hp, o->hp, o->gen);
		members_add(m, &o->i, 1);
	} else if (l) {
		same_heap(L, hp, l->hp, l->gen);
		members_add(m, l->idx, l->n);
	} else if (k) {
		same_heap(L, hp, k->hp, k->gen);
		uint32_t n;
		const uint32_t *inst = heap_instances(hs_heap(hp->ss), k->c, &n);
		members_add(m, inst, n);
	} else {
		return false;
	}
	return true;
}

/* add_arg: argument arg (one value or an array of them) added to m, or an error. */
static void add_arg(lua_State *L, struct lb_heap *hp, int arg, struct members *m)
{
	const char *what = "an object, a list of objects, a class or an array of them";
	if (lua_type(L, arg) != LUA_TTABLE) {
		if (!add_members(L, hp, arg, m))
			luaL_argerror(L, arg, what);
		return;
	}
	lua_Integer len = luaL_len(L, arg);
	for (lua_Integer i = 1; i <= len; i++) {
		lua_geti(L, arg, i);
		if (!add_members(L, hp, -1, m))
			luaL_error(L, "bad argument #%d to 'retained' (item %d: %s expected, got %s)",
				   arg - 1, (int)i, what, luaL_typename(L, -1));
		lua_pop(L, 1);
	}
}

/*
 * heap:retained(x, ...) -> for each argument, the bytes freed if it went
 * away: an object, a list of objects, a class (all its instances
 * together), or a Lua array of any of those (all of them together: their
 * union as one set, not the sum of the parts). Each argument is a set of
 * its own; several are computed together (dom_retained_sets), far faster
 * than one call each.
 */
static int heap_retained(lua_State *L)
{
	struct lb_heap *hp = lb_checkheap(L, 1);
	int k = lua_gettop(L) - 1;
	luaL_argcheck(L, k >= 1, 2, "an object, a list of objects, a class or an array of them expected");
	struct dom_tree *t = hs_dom(hp->ss, hs_get_options(hp->ss).no_weak);
	if (!t) {
		lua_pushnil(L);
		lua_pushstring(L, hs_errmsg(hp->ss));
		return 2;
	}
	luaL_checkstack(L, 2 * k + 4, "too many arguments");
	/* the sets' members and their counts, in buffers Lua owns */
	const uint32_t **objs = lua_newuserdatauv(L, (size_t)k * sizeof *objs, 0);
	uint32_t *n = lua_newuserdatauv(L, (size_t)k * sizeof *n, 0);
	uint64_t *bytes = lua_newuserdatauv(L, (size_t)k * sizeof *bytes, 0);
	for (int j = 0; j < k; j++) {
		struct members m = {0};
		add_arg(L, hp, j + 2, &m);	/* count */
		size_t cnt = m.n;
		if (cnt > UINT32_MAX)
			return luaL_error(L, "bad argument #%d to 'retained' (over 2^32 objects)", j + 1);
		m = (struct members){lua_newuserdatauv(L, (cnt + 1) * sizeof *m.a, 0), 0};
		add_arg(L, hp, j + 2, &m);	/* copy */
		objs[j] = m.a;
		n[j] = (uint32_t)m.n;
	}
	if (dom_retained_sets(t, (uint32_t)k, objs, n, bytes) != HS_OK)
		return luaL_error(L, "interrupted");
	for (int j = 0; j < k; j++)
		lua_pushinteger(L, (lua_Integer)bytes[j]);
	return k;
}

static int heap_graphstats(lua_State *L)
{
	struct lb_heap *hp = lb_checkheap(L, 1);
	struct dyn *d = hs_dyn(hp->ss, false);
	if (!d) {
		lua_pushnil(L);
		lua_pushstring(L, hs_errmsg(hp->ss));
		return 2;
	}
	const struct dyn_stats *s = &d->stats;
	lua_createtable(L, 0, 16);
#define F(name, v) (lua_pushinteger(L, (lua_Integer)(v)), lua_setfield(L, -2, name))
	F("nodes", s->nodes);
	F("references", s->refs);
	F("gc_roots", hs_heap(hp->ss)->nroots);
	F("sccs", s->ncomp);
	F("nontrivial_sccs", s->nontrivial);
	F("largest_scc", s->largest);
	F("scc_dag_edges", s->dag_edges);
	F("articulation_points", s->aps);
	F("dominating_articulation_points", s->daps);
	F("scc_dag_height", s->dag_height);
	F("scc_dag_width", s->dag_width);
#undef F
	return 1;
}

/* ---- query: the language's values as Lua values ---- */

static void push_value(lua_State *L, int heap_idx, const struct value *v);

static void push_list(lua_State *L, int heap_idx, const struct list *l)
{
	if (l->kind == L_ALL) {
		lb_push_list(L, heap_idx, NULL, l->n);
		return;
	}
	if (l->kind == L_OBJS) {
		lb_push_slice(L, heap_idx, l->objs, l->n);
		return;
	}
	bool objs = l->n > 0;
	for (uint32_t k = 0; k < l->n && objs; k++)
		objs = l->v[k].k == V_OBJ;
	if (objs) {
		uint32_t *copy = xmallocarray((size_t)l->n + 1, sizeof *copy);
		for (uint32_t k = 0; k < l->n; k++)
			copy[k] = l->v[k].u.idx;
		lb_push_list(L, heap_idx, copy, l->n);
		return;
	}
	lua_createtable(L, (int)l->n, 0);
	for (uint32_t k = 0; k < l->n; k++) {
		push_value(L, heap_idx, &l->v[k]);
		lua_rawseti(L, -2, (lua_Integer)k + 1);
	}
}

static void push_value(lua_State *L, int heap_idx, const struct value *v)
{
	heap_idx = lua_absindex(L, heap_idx);
	const struct lb_heap *hp = luaL_checkudata(L, heap_idx, LB_HEAP);
	switch (v->k) {
	case V_NULL: lua_pushnil(L); break;
	case V_BOOL: lua_pushboolean(L, v->u.b); break;
	case V_INT: lua_pushinteger(L, v->u.i); break;
	case V_FLOAT: lua_pushnumber(L, v->u.f); break;
	case V_STR: lua_pushstring(L, v->u.s); break;
	case V_OBJ: lb_push_object(L, heap_idx, v->u.idx); break;
	case V_CLASS: lb_push_class(L, heap_idx, v->u.idx); break;
	case V_LOADER:
		if (v->u.idx == HEAP_NONE)
			lua_pushstring(L, "<bootstrap>");
		else
			lb_push_object(L, heap_idx, v->u.idx);
		break;
	case V_THREAD: {
		char *name = heap_thread_name(hs_heap(hp->ss), v->u.idx);
		lua_pushstring(L, name ? name : "?");
		free(name);
		break;
	}
	case V_LIST: push_list(L, heap_idx, v->u.l); break;
	case V_STRUCT:
		lua_createtable(L, 0, v->u.st->n);
		for (int k = 0; k < v->u.st->n; k++) {
			push_value(L, heap_idx, &v->u.st->vals[k]);
			lua_setfield(L, -2, v->u.st->names[k]);
		}
		break;
	case V_ENTITY: {
		const struct instance *e = v->u.ent;
		lua_createtable(L, 0, e->nprops + 2);
		push_value(L, heap_idx, &e->name);
		lua_setfield(L, -2, "name");
		lua_pushinteger(L, (lua_Integer)e->members);
		lua_setfield(L, -2, "members");
		for (int k = 0; k < e->nprops; k++) {
			push_value(L, heap_idx, &e->props[k]);
			lua_setfield(L, -2, e->prop_names[k]);
		}
		break;
	}
	default:
		lua_pushstring(L, value_kind_name(v->k));
		break;
	}
}

/* A query's answer (hs_query) while heap:query pushes it: freed once pushed, or by __gc after an error. */
#define LB_ANSWER "heapsh.answer"

struct lb_answer {
	struct hs_session *ss;
	struct hs_answer a;
	bool held;		/* a is to be freed */
};

static int answer_gc(lua_State *L)
{
	struct lb_answer *x = luaL_checkudata(L, 1, LB_ANSWER);
	if (x->held)
		hs_answer_free(x->ss, &x->a);
	x->held = false;
	return 0;
}

/* push_jvm_answer: the values of a program the agent ran (HS_RAN_JVM), or nil, message. */
static int push_jvm_answer(lua_State *L, struct hs_session *ss, const struct hs_answer *a)
{
	if (a->cancelled) {
		lua_pushnil(L);
		lua_pushfstring(L, "interrupted (the analysis inside JVM %d stopped)", hs_live_pid(ss));
		return 2;
	}
	if (a->error) {
		lua_pushnil(L);
		lua_pushfstring(L, "query error at %d:%d: %s", a->err.line, a->err.col, a->err.msg);
		return 2;
	}
	luaL_checkstack(L, (int)a->nresults + 1, "too many results");
	for (uint32_t k = 0; k < a->nresults; k++)
		push_value(L, 1, &a->results[k].v);
	if (a->has_costs)
		hs_notify(ss, HS_NOTICE_TIMER, "inside JVM %d, no snapshot taken: %" PRIu64 " heap "
			  "walk%s, the JVM paused %" PRIu64 " ms", hs_live_pid(ss), a->walks,
			  a->walks == 1 ? "" : "s", a->pause_ms + a->gc_ms);
	return (int)a->nresults;
}

/*
 * heap:query(text) -> the values of its expressions | nil, message. Run
 * where the session routes it, as the shell's (hs_query): on an attached
 * JVM with no snapshot yet, inside the JVM when the agent can evaluate it
 * (its objects come back as their text, "0x7f3a8c10 Order"), without a
 * heap when it needs none (allocations, also of a JFR recording), and
 * otherwise on a snapshot it takes first.
 */
static int heap_query(lua_State *L)
{
	struct lb_heap *hp = luaL_checkudata(L, 1, LB_HEAP);
	const char *text = luaL_checkstring(L, 2);
	struct hs_session *ss = hp->ss;
	if (!ss || hs_heap(ss) || (!hs_live_pid(ss) && !hs_recording(ss, NULL)))
		lb_checkheap(L, 1);
	struct lb_answer *x = lua_newuserdatauv(L, sizeof *x, 0);
	memset(x, 0, sizeof *x);
	x->ss = ss;
	if (luaL_newmetatable(L, LB_ANSWER)) {
		lua_pushcfunction(L, answer_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	x->held = true;
	struct hs_answer *a = &x->a;
	if (hs_query(ss, text, HS_QUERY_NO_PUSHDOWN, a) != HS_OK) {
		lua_pushnil(L);
		lua_pushstring(L, hs_errmsg(ss));
		return 2;
	}
	if (a->incomplete) {
		lua_pushnil(L);
		lua_pushstring(L, "the query is incomplete (an open bracket or a dangling operator)");
		return 2;
	}
	int n;
	if (a->ran == HS_RAN_JVM) {
		n = push_jvm_answer(L, ss, a);
	} else if (a->error) {
		lua_pushnil(L);
		lua_pushfstring(L, "query error at %d:%d: %s", a->err.line, a->err.col, a->err.msg);
		n = 2;
	} else {
		luaL_checkstack(L, a->out.n + 1, "too many results");
		for (int k = 0; k < a->out.n; k++)
			push_value(L, 1, &a->out.vals[k]);
		n = a->out.n;
	}
	/* pushed: the answer goes now, while its session's query language is the one it came from */
	hs_answer_free(ss, a);
	x->held = false;
	return n;
}

/* ---- allocations: the attached JVM's recording ---- */

static void set_count(lua_State *L, bool exact, double x, const char *name)
{
	if (exact)
		lua_pushinteger(L, (lua_Integer)llround(x));
	else
		lua_pushnumber(L, x);
	lua_setfield(L, -2, name);
}

/* push_allocations(rec): the rows of the recording (a light userdata), in key order. */
static int push_allocations(lua_State *L)
{
	const struct alc_rec *r = lua_touserdata(L, 1);
	bool exact = r->st.exact;
	char buf[1024];
	lua_createtable(L, (int)r->nkeys, 0);
	for (uint32_t k = 0; k < r->nkeys; k++) {
		const struct alc_key *key = &r->keys[k];
		bool framed = key->node != ALC_NONE && key->node < r->nnodes;
		lua_createtable(L, 0, 11);
		lua_pushstring(L, key->cls < r->nclasses && r->classes[key->cls]
				  ? r->classes[key->cls] : "?");
		lua_setfield(L, -2, "class");
		alc_frame_text(r, framed ? key->node : ALC_NONE, buf, sizeof buf);
		lua_pushstring(L, buf);
		lua_setfield(L, -2, "site");
		const struct alc_node *nd = framed ? &r->nodes[key->node] : NULL;
		if (nd && nd->method < r->nmethods) {
			const struct alc_method *m = &r->methods[nd->method];
			lua_pushfstring(L, "%s.%s", m->cls ? m->cls : "?", m->name ? m->name : "?");
			lua_setfield(L, -2, "method");
		} else if (nd) {
			lua_pushstring(L, "?");
			lua_setfield(L, -2, "method");
		}
		lua_pushinteger(L, nd && nd->line >= 0 ? nd->line : -1);
		lua_setfield(L, -2, "line");
		lua_pushstring(L, key->account < r->naccounts && r->accounts[key->account]
				  ? r->accounts[key->account] : "?");
		lua_setfield(L, -2, "account");
		/* the stack, innermost first; parents lead to the root, bounded all the same */
		lua_newtable(L);
		uint32_t v = framed ? key->node : ALC_NONE;
		for (lua_Integer d = 1; v != ALC_NONE && v < r->nnodes && d <= r->nnodes; d++) {
			alc_frame_text(r, v, buf, sizeof buf);
			lua_pushstring(L, buf);
			lua_rawseti(L, -2, d);
			v = r->nodes[v].parent;
		}
		lua_setfield(L, -2, "stack");
		set_count(L, exact, key->objs, "objects");
		set_count(L, exact, key->bytes, "bytes");
		set_count(L, exact, key->live_objs, "live_objects");
		set_count(L, exact, key->live_bytes, "live_bytes");
		set_count(L, exact, key->elems, "elements");
		lua_rawseti(L, -2, (lua_Integer)k + 1);
	}
	return 1;
}

/*
 * heap:allocations() -> the attached JVM's allocation recording as read
 * now: an array of tables with the query language's members of an
 * allocation (docs/dsl.md, "Allocations") | nil, message when the heap is
 * not an attached JVM or the JVM has no recording. Takes no snapshot.
 */
static int heap_allocations(lua_State *L)
{
	struct lb_heap *hp = luaL_checkudata(L, 1, LB_HEAP);
	struct hs_session *ss = hp->ss;
	if (!ss)
		return luaL_error(L, "this heap was closed");
	if (!hs_live_pid(ss)) {
		lua_pushnil(L);
		lua_pushstring(L, "allocations need an attached JVM (heapsh.attach(pid)) with a "
			       "recording (:alloc start)");
		return 2;
	}
	/* an expected failure is the caller's to report: the session prints nothing */
	struct alc_rec *r = NULL;
	int st = hs_alloc_fetch(ss, &r);
	if (st != HS_OK || !r) {
		lua_pushnil(L);
		lua_pushstring(L, st != HS_OK ? hs_errmsg(ss) : "no allocation recording");
		return 2;
	}
	/* built in a protected call, so that the recording is freed whatever happens */
	lua_pushcfunction(L, push_allocations);
	lua_pushlightuserdata(L, r);
	int ok = lua_pcall(L, 1, 1, 0);
	alc_free(r);
	if (ok != LUA_OK)
		return lua_error(L);
	return 1;
}

/* ---- heapsh.print_table(rows, columns) ---- */

static int lb_print_table(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	luaL_checktype(L, 2, LUA_TTABLE);
	int nc = (int)luaL_len(L, 2);
	if (nc <= 0 || nc > 64)
		return luaL_argerror(L, 2, "a list of 1 to 64 column names");
	const char *cols[64];
	for (int c = 0; c < nc; c++) {
		lua_geti(L, 2, c + 1);
		cols[c] = lua_tostring(L, -1);
		if (!cols[c])
			return luaL_argerror(L, 2, "column names must be strings");
		lua_pop(L, 1);	/* the table keeps the string alive */
	}
	struct out_table *t = out_table_new(nc, cols);
	lua_Integer nr = luaL_len(L, 1);
	for (lua_Integer r = 1; r <= nr; r++) {
		lua_geti(L, 1, r);
		if (!lua_istable(L, -1)) {
			out_table_end(t);
			return luaL_error(L, "row %d is not a table", (int)r);
		}
		for (int c = 0; c < nc; c++) {
			lua_getfield(L, -1, cols[c]);
			if (lua_isnil(L, -1))
				lua_pop(L, 1), lua_geti(L, -1, c + 1);
			switch (lua_type(L, -1)) {
			case LUA_TNIL: out_cell_null(t); break;
			case LUA_TNUMBER:
				if (lua_isinteger(L, -1))
					out_cell_i64(t, lua_tointeger(L, -1));
				else {
					char num[40];
					snprintf(num, sizeof num, "%.15g", lua_tonumber(L, -1));
					out_cell_num(t, num);
				}
				break;
			case LUA_TBOOLEAN: out_cell_str(t, lua_toboolean(L, -1) ? "true" : "false"); break;
			default: out_cell_str(t, luaL_tolstring(L, -1, NULL)); lua_pop(L, 1); break;
			}
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
	out_table_end(t);
	return 0;
}

/* ---- heapsh.extern(lib, name, signature) ---- */

static int ext_gc(lua_State *L)
{
	struct ext_fn **f = luaL_checkudata(L, 1, "heapsh.extern");
	ext_free(*f);
	*f = NULL;
	return 0;
}

static int ext_lua_call(lua_State *L)
{
	struct ext_fn **f = luaL_checkudata(L, lua_upvalueindex(1), "heapsh.extern");
	int n = lua_gettop(L);
	if (n > EXT_MAX_PARAMS)
		return luaL_error(L, "too many arguments");
	struct ext_value args[EXT_MAX_PARAMS], ret;
	for (int k = 0; k < n; k++) {
		struct lb_object *o = lb_testobject(L, k + 1);
		memset(&args[k], 0, sizeof args[k]);
		if (o) {	/* an object passes as its id */
			args[k].type = EXT_INT;
			args[k].u.i = (int64_t)heap_id(hs_heap(o->hp->ss), o->i);
		} else if (lua_isinteger(L, k + 1)) {
			args[k].type = EXT_INT;
			args[k].u.i = lua_tointeger(L, k + 1);
		} else if (lua_type(L, k + 1) == LUA_TNUMBER) {
			args[k].type = EXT_FLOAT;
			args[k].u.f = lua_tonumber(L, k + 1);
		} else if (lua_isboolean(L, k + 1)) {
			args[k].type = EXT_BOOL;
			args[k].u.b = lua_toboolean(L, k + 1);
		} else if (lua_type(L, k + 1) == LUA_TSTRING || lua_isnil(L, k + 1)) {
			args[k].type = EXT_STRING;
			args[k].u.s = lua_tostring(L, k + 1);
		} else {
			return luaL_argerror(L, k + 1, "an integer, number, boolean, string or object");
		}
	}
	struct hs_error err;
	hs_error_clear(&err);
	if (ext_call(*f, args, n, &ret, &err) != EXT_OK)
		return luaL_error(L, "%s", err.msg);
	switch (ret.type) {
	case EXT_INT: lua_pushinteger(L, ret.u.i); break;
	case EXT_FLOAT: lua_pushnumber(L, ret.u.f); break;
	case EXT_BOOL: lua_pushboolean(L, ret.u.b); break;
	case EXT_STRING:
		if (ret.u.s)
			lua_pushstring(L, ret.u.s);
		else
			lua_pushnil(L);
		free((void *)ret.u.s);
		break;
	default: return 0;
	}
	return 1;
}

static int lb_extern(lua_State *L)
{
	const char *lib = luaL_checkstring(L, 1), *name = luaL_checkstring(L, 2);
	const char *sig = luaL_checkstring(L, 3);
	struct ext_fn **slot = lua_newuserdatauv(L, sizeof *slot, 0);
	*slot = NULL;
	if (luaL_newmetatable(L, "heapsh.extern")) {
		lua_pushcfunction(L, ext_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	struct hs_error err;
	hs_error_clear(&err);
	if (ext_bind(lib, name, sig, slot, &err) != EXT_OK) {
		lua_pushnil(L);
		lua_pushstring(L, err.msg);
		return 2;
	}
	lua_pushcclosure(L, ext_lua_call, 1);
	return 1;
}

/* ---- the module and the state ---- */

/*
 * heapsh.args() -> the running script's own words in a new table: those
 * after the script, less the dump or pid heapsh -l opened from the first
 * of them; an empty table outside a script file (:lua, or once the script
 * has ended).
 */
static int lb_args(lua_State *L)
{
	lua_newtable(L);
	if (lua_getfield(L, LUA_REGISTRYINDEX, ARGS_KEY) == LUA_TTABLE) {
		lua_Integer n = luaL_len(L, -1);
		for (lua_Integer k = 1; k <= n; k++) {
			lua_geti(L, -1, k);
			lua_seti(L, -3, k);
		}
	}
	lua_pop(L, 1);
	return 1;
}

static int luaopen_heapsh(lua_State *L)
{
	static const luaL_Reg funcs[] = {
		{"open", lb_open}, {"attach", lb_attach}, {"current", lb_current},
		{"print_table", lb_print_table}, {"extern", lb_extern}, {"args", lb_args},
		{NULL, NULL}};
	static const luaL_Reg heapmeta[] = {
		{"__gc", heap_gc}, {"__close", heap_gc}, {"__tostring", heap_tostring}, {NULL, NULL}};
	static const luaL_Reg heapmethods[] = {
		{"histogram", heap_histogram}, {"classes", heap_classes}, {"class", heap_class},
		{"object", heap_object}, {"objects", heap_objects}, {"roots", heap_roots},
		{"threads", heap_threads}, {"query", heap_query}, {"dominators", heap_dominators}, {"suspects", heap_suspects},
		{"path", heap_path}, {"graphstats", heap_graphstats}, {"close", heap_close},
		{"retained", heap_retained}, {"allocations", heap_allocations}, {"diff", lb_heap_diff},
		{NULL, NULL}};
	luaL_newmetatable(L, LB_HEAP);
	luaL_setfuncs(L, heapmeta, 0);
	luaL_newlib(L, heapmethods);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
	static const luaL_Reg classmeta[] = {
		{"__index", class_index}, {"__tostring", class_tostring}, {"__eq", class_eq},
		{NULL, NULL}};
	luaL_newmetatable(L, LB_CLASS);
	luaL_setfuncs(L, classmeta, 0);
	lua_pop(L, 1);
	lb_object_meta(L);
	luaL_newlib(L, funcs);
	return 1;
}

/* The count hook: Ctrl-C stops a running script. */
static void hook(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	if (hs_interrupted)
		luaL_error(L, "interrupted");
}

static int traceback(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);
	if (!msg)
		msg = luaL_tolstring(L, 1, NULL);
	luaL_traceback(L, L, msg, 1);
	return 1;
}

/*
 * print: Lua's print (lbaselib.c's luaB_print: each argument through
 * __tostring, tabs between, a newline), but through src/out, so that a
 * script's lines and its tables (print_table, the host's commands) go to
 * one stream in order, and a host that captures its output
 * (out_redirect: heapsh --mcp) captures them too.
 */
static int print(lua_State *L)
{
	int n = lua_gettop(L);
	for (int k = 1; k <= n; k++) {
		size_t len;
		const char *s = luaL_tolstring(L, k, &len);
		if (k > 1)
			fputc('\t', out_stream());
		fwrite(s, 1, len, out_stream());
		lua_pop(L, 1);
	}
	fputc('\n', out_stream());
	return 0;
}

lua_State *hsl_open(struct hs_session *host)
{
	lua_State *L = luaL_newstate();
	if (!L)
		return NULL;
	luaL_openlibs(L);
	lua_register(L, "print", print);
	lua_pushlightuserdata(L, host);
	lua_setfield(L, LUA_REGISTRYINDEX, SESSION_KEY);
	luaL_requiref(L, "heapsh", luaopen_heapsh, 1);
	lua_pop(L, 1);
	new_heap(L, host, false);
	lua_setfield(L, LUA_REGISTRYINDEX, CURRENT_KEY);
	/* require finds the ready scripts: lua/ here, next to the binary, and installed. */
	char exe[4096] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "path");
	const char *path = lua_tostring(L, -1);
	lua_pushfstring(L, "%s;./lua/?.lua;%s/lua/?.lua;%s/../share/heapsh/lua/?.lua",
			path ? path : "", exe, exe);
	lua_setfield(L, -3, "path");	/* package.path */
	lua_pop(L, 2);
	lua_sethook(L, hook, LUA_MASKCOUNT, 10000);
	return L;
}

void hsl_close(lua_State *L)
{
	if (L)
		lua_close(L);
}

/*
 * The Lua state whose binding runs now (lb_enter), for raise: a throw of
 * the library in a binding (out of memory, no disk: src/base/ctx.h)
 * becomes a Lua error there, so that it unwinds through Lua's own frames
 * to the script's lua_pcall, never past them.
 */
static lua_State *running;

static void raise_in_lua(void *ud, const char *msg)
{
	luaL_error(running ? running : ud, "%s", msg);
}

void lb_enter(lua_State *L, const struct lb_heap *hp)
{
	running = L;
	if (hp->ss)
		hs_enter(hp->ss);
}

/* run: call the function on top of the stack with nargs arguments below it. */
static int run(lua_State *L, int nargs, char *err, size_t cap)
{
	int base = lua_gettop(L) - nargs;
	lua_pushcfunction(L, traceback);
	lua_insert(L, base);
	hs_interrupted = 0;
	struct hs_ctx *host = hs_ctx_now();
	struct hs_catch c;
	hs_catch_raise(&c, raise_in_lua, L);
	running = L;
	int st = lua_pcall(L, nargs, 0, base);
	hs_catch_pop(&c);
	running = NULL;
	hs_ctx_enter(host);	/* the bindings entered their heaps' sessions */
	lua_remove(L, base);
	out_flush();
	if (st != LUA_OK) {
		const char *msg = lua_tostring(L, -1);
		snprintf(err, cap, "lua: %s", msg ? msg : "(error object is not a string)");
		lua_pop(L, 1);
		return HS_ERR;
	}
	return HS_OK;
}

int hsl_run(lua_State *L, const char *code, const char *name, char *err, size_t cap)
{
	char chunk[256];
	snprintf(chunk, sizeof chunk, "=%s", name ? name : ":lua");
	if (luaL_loadbuffer(L, code, strlen(code), chunk) != LUA_OK) {
		snprintf(err, cap, "lua: %s", lua_tostring(L, -1));
		lua_pop(L, 1);
		return HS_ERR;
	}
	return run(L, 0, err, cap);
}

int hsl_run_file(lua_State *L, const char *path, int argc, char **argv, int own, char *err,
		 size_t cap)
{
	lua_createtable(L, argc, 1);
	for (int k = 0; k < argc; k++) {
		lua_pushstring(L, argv[k]);
		lua_rawseti(L, -2, k);
	}
	lua_setglobal(L, "arg");
	if (luaL_loadfile(L, path) != LUA_OK) {
		snprintf(err, cap, "lua: %s", lua_tostring(L, -1));
		lua_pop(L, 1);
		return HS_ERR;
	}
	lua_createtable(L, argc, 0);
	for (int k = own; k < argc; k++) {
		lua_pushstring(L, argv[k]);
		lua_rawseti(L, -2, k - own + 1);
	}
	lua_setfield(L, LUA_REGISTRYINDEX, ARGS_KEY);
	for (int k = 1; k < argc; k++)
		lua_pushstring(L, argv[k]);
	int st = run(L, argc > 1 ? argc - 1 : 0, err, cap);
	lua_pushnil(L);
	lua_setfield(L, LUA_REGISTRYINDEX, ARGS_KEY);	/* the words were the script's only */
	return st;
}
