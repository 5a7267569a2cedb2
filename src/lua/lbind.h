/*
 * lbind.h - the `heapsh` Lua module (docs/manual.md, "Scripting"), shared
 * between its files: lbind_heap.c (the module, heaps, classes, running
 * scripts), lbind_object.c (objects and lists of objects), lbind_diff.c
 * (heap:diff). Written in the
 * manner of Lua's liolib.c: luaL_Reg tables, one metatable per userdata
 * type made once, expected failures returning nil and a message, misuse
 * raising errors.
 *
 * A heap is userdata around a session (src/session/session.h): the
 * host's own (heapsh.current(), borrowed) or one opened by the script
 * (heapsh.open, heapsh.attach; closed by __gc or __close). Objects and lists keep their
 * heap alive through a user value, and remember the session's generation:
 * once that heap is closed or replaced (:open), using them is an error.
 */
#ifndef HS_LBIND_H
#define HS_LBIND_H

#include <lauxlib.h>
#include <lua.h>

#include "../heapsh.h"

#define LB_HEAP "heapsh.heap"
#define LB_OBJECT "heapsh.object"
#define LB_LIST "heapsh.list"
#define LB_CLASS "heapsh.class"

/* A member lookup remembered: class + interned key -> a field's place, or a built-in. */
struct lb_member {
	const char *key;	/* Lua's interned string (pointer identity) */
	uint32_t cls;
	uint32_t off;		/* field: offset in the instance values */
	uint8_t type;		/* field: HPROF type; 0 = not a field (a built-in) */
	uint8_t builtin;	/* the built-in k names (lbind_object.c), when not a field */
	unsigned gen;
};

#define LB_MEMBERS 1024

struct lb_heap {
	struct hs_session *ss;
	bool owned;		/* closed by __gc / __close */
	struct lb_member members[LB_MEMBERS];
};

struct lb_object {
	struct lb_heap *hp;
	uint32_t i;		/* object index */
	unsigned gen;		/* hp->ss->gen when made */
};

struct lb_list {
	struct lb_heap *hp;
	uint32_t n;
	const uint32_t *idx;	/* object indexes, or NULL for 0..n-1: the list's own copy
				 * (user value 2, so no finalizer), or a view (lb_push_view) */
	unsigned gen;
};

struct lb_class {
	struct lb_heap *hp;
	uint32_t c;		/* class index */
	unsigned gen;
};

/* lb_checkheap: argument arg as a heap with a heap loaded (or an error). */
struct lb_heap *lb_checkheap(lua_State *L, int arg);
/*
 * lb_enter: a binding of L works on hp from here: its session's context is
 * entered (its memory budget, its Ctrl-C), and a throw of the library
 * becomes a Lua error in L (lb_checkheap and lb_checkobject call it).
 */
void lb_enter(lua_State *L, const struct lb_heap *hp);
/* lb_heap_valid: raise an error unless hp still has the heap of generation gen. */
void lb_check_gen(lua_State *L, const struct lb_heap *hp, unsigned gen);

/* lb_push_object / lb_push_list / lb_push_class: new userdata; heap_idx is the heap's stack index. */
void lb_push_object(lua_State *L, int heap_idx, uint32_t i);
void lb_push_list(lua_State *L, int heap_idx, uint32_t *idx, uint32_t n);	/* copies and frees idx */
void lb_push_class(lua_State *L, int heap_idx, uint32_t c);
/*
 * lb_new_object: lb_push_object for loops: hp is the heap at heap_idx,
 * meta_idx holds the objects' metatable (lb_push_object_meta), both
 * absolute or upvalue indexes.
 */
void lb_new_object(lua_State *L, struct lb_heap *hp, int heap_idx, int meta_idx, uint32_t i);
void lb_push_object_meta(lua_State *L);
/* lb_push_slice: a list of a copy of a[0..n) (the heap's arrays are borrowed, not kept). */
void lb_push_slice(lua_State *L, int heap_idx, const uint32_t *a, uint32_t n);
/*
 * lb_push_view: a list of a[0..n) itself, not copied: a must live as long
 * as the heap's generation (an array of the heap or of its engine results,
 * freed only when the heap is closed or replaced, which makes the list
 * refuse to be read: lb_check_gen).
 */
void lb_push_view(lua_State *L, int heap_idx, const uint32_t *a, uint32_t n);
struct lb_object *lb_checkobject(lua_State *L, int arg);
struct lb_object *lb_testobject(lua_State *L, int arg);

/* lb_push_value: a heap value of type t (as heap_field returns it): nil, boolean, number, object. */
void lb_push_heap_value(lua_State *L, int heap_idx, const struct heap_value *v);

/* heap:diff (lbind_diff.c), a method of heaps. */
int lb_heap_diff(lua_State *L);

/* The metatables of objects and lists (lbind_object.c). */
void lb_object_meta(lua_State *L);

#endif
