/*
 * eval_internal.h - what the files of the query language's evaluator share
 * (src/dsl/eval*.c only; the public API is eval.h): the session and the
 * state of a running snippet, the value constructors, and the functions
 * one of them calls in another. The evaluator is split as jq's is
 * (execute / builtins):
 *   eval.c              the core: values, names, scopes, lambdas, expressions
 *   eval_builtin.c      the heap's lists and the members of every kind of value
 *   eval_allocations.c  the list `allocations` (an attached JVM's recording)
 *   eval_settype.c      set type analyses (instances_for)
 *   eval_session.c      sessions: dsl_run, the statements, what a session keeps
 * They read the heap only through the heap-access interface (heapif.h,
 * e->hv); tests/t_layers.sh checks that.
 *
 * A runtime error (eval_rt_error) longjmps to the dsl_run under way, so a
 * function here that takes a struct ev may not return. Values live in the
 * snippet's arena (e->a) unless said otherwise; nothing here is freed by
 * its caller.
 */
#ifndef HS_EVAL_INTERNAL_H
#define HS_EVAL_INTERNAL_H

#include "builtins.h"
#include "eval.h"
#include "heapif_dump.h"

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

struct binding {
	const char *name;
	struct value v;
	struct binding *next;
};

struct settype {
	const char *name;
	struct stmt *st;
	struct settype *next;
};

struct typedecl {
	const char *name;
	struct stmt *st;
	struct typedecl *next;
};

/* A native function declared with extern (src/dsl/extern.h). */
struct externdecl {
	const char *name;
	struct ext_fn *fn;	/* freed by dsl_free, or when the name is declared again */
	struct externdecl *next;
};

struct frame {
	struct frame *up;
	int n, cap;
	const char **names;
	struct value *vals;
};

struct dsl {
	struct hv *hv;		/* the heap read through (heapif.h), NULL: none yet */
	struct hvd hvd;		/* the dump backend, when the session was made on a heap */
	struct dsl_engine eng;
	struct arena keep;	/* snippets that define names live here */
	struct binding *globals;
	struct settype *sets;
	struct typedecl *types;
	struct externdecl *externs;
	const char **names;	/* for completion */
	int nnames;
	bool cannot;		/* the last run ended with "cannot answer here" (dsl_cannot_here) */
};

struct ev {
	struct dsl *d;
	struct hv *hv;		/* d->hv; NULL: no heap */
	struct arena *a;
	struct hs_error *err;
	jmp_buf fail;
	/* the traversal context: THIS, REFERRER, ENTITY, ref_kind */
	bool in_trav;
	struct value this_v, referrer;
	struct instance *entity;
	enum refkind rk;
	struct arena *run_a;	/* the run's arena (e->a outside steps) */
	struct arena scratch;	/* a step's allocations, released after it (eval_step_begin) */
	bool in_step;		/* a step under way allocates in scratch */
	bool owners;		/* a set type's analysis holds the heap view's owners (hv_owners) */
	int caught;		/* eval_guarded caught: 1 a runtime error, 2 a throw (caught_msg) */
	char caught_msg[512];
	struct analysis *an;	/* the running analysis, freed if it fails */
	const char *snippet;	/* the text being run */
	int calls;		/* lambda calls under way: bounded, recursion is an error */
	const char *stack_base;	/* the C stack where the snippet began (dsl_run) */
	size_t stack_budget;	/* bytes of C stack below stack_base lambdas may use */
	struct instance *cur;	/* whose properties names refer to */
	uint64_t steps;
	struct value allocs;	/* `allocations` once read in this snippet, else null */
};

/* The analysis of eval_settype.c, under way while a set type's instances are built. */
struct analysis;

static const struct value VNULL = {V_NULL, {0}};

static inline struct value vint(int64_t i)
{
	struct value v = {V_INT, {.i = i}};
	return v;
}
static inline struct value vbool(bool b)
{
	struct value v = {V_BOOL, {.b = b}};
	return v;
}
static inline struct value vfloat(double f)
{
	struct value v = {V_FLOAT, {.f = f}};
	return v;
}
static inline struct value vstr(const char *s)
{
	struct value v = {V_STR, {.s = s}};
	return v;
}
static inline struct value vidx(enum vkind k, uint32_t i)
{
	struct value v = {k, {.idx = i}};
	return v;
}

static inline struct value list_get(const struct list *l, uint32_t k)
{
	if (l->kind == L_VALUES)
		return l->v[k];
	return vidx(V_OBJ, l->kind == L_OBJS ? l->objs[k] : k);
}

static inline bool has_bit(const uint8_t *bits, uint32_t c)
{
	return bits[c / 8] & (1u << (c % 8));
}

static inline bool is_num(const struct value *v)
{
	return v->k == V_INT || v->k == V_FLOAT;
}

static inline double num(const struct value *v)
{
	return v->k == V_INT ? (double)v->u.i : v->u.f;
}

/* A list builder that keeps object lists compact. */
struct builder {
	struct value *v;
	uint32_t *objs;
	uint32_t n, cap;
	bool all_objs;
};

/* ---- eval.c: the core ---- */

/*
 * eval_rt_error: a runtime error at node at (NULL: no place) with the
 * printf-style message, into e->err; does not return (longjmp to e->fail).
 */
void eval_rt_error(struct ev *e, const struct node *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
/* eval_vlist: a new list of kind k and length n (L_ALL: no elements stored). */
struct value eval_vlist(struct ev *e, enum list_kind k, uint32_t n);
/* eval_build_add: append v to b. eval_build_done: b's list (of object indexes if all are). */
void eval_build_add(struct ev *e, struct builder *b, struct value v);
struct value eval_build_done(struct ev *e, struct builder *b);
/*
 * eval_guarded: fn(ctx)'s answer, run where nothing may unwind past the
 * caller (a backend's walk callback: JVMTI below it): a runtime error or a
 * throw (no memory) inside is caught, and false returned; once the backend
 * has returned, eval_raise_caught raises what was caught (nothing if none).
 */
bool eval_guarded(struct ev *e, bool (*fn)(void *ctx), void *ctx);
/* eval_keep_needed: whether eval_keep(e, at, v, from) could change v (its fast test). */
static inline bool eval_keep_needed(struct value v)
{
	switch (v.k) {
	case V_OBJ: case V_LOADER: return (v.u.idx & 0x80000000u) && v.u.idx != UINT32_MAX;
	case V_STR: case V_LIST: case V_STRUCT: case V_LAMBDA: return true;
	default: return false;
	}
}
void eval_raise_caught(struct ev *e);
/* eval_poll: counts a step; an "interrupted" error at `at` after Ctrl-C. */
void eval_poll(struct ev *e, const struct node *at);
/* eval_need_heap: an error at `at` saying `what` needs a heap, when the session has none. */
void eval_need_heap(struct ev *e, const struct node *at, const char *what);
/*
 * eval_hv_check: after a heap operation that may fail (heapif.h), a
 * runtime error at `at` if it failed: "cannot answer here" (what
 * dsl_cannot_here reports), the backend's message, or "interrupted".
 */
void eval_hv_fail(struct ev *e, const struct node *at) __attribute__((noreturn));
static inline void eval_hv_check(struct ev *e, const struct node *at)
{
	if (hv_failed(e->hv))
		eval_hv_fail(e, at);
}
/* eval_resolve_class: the bit set of classes that are instanceof name, cached in at. */
const uint8_t *eval_resolve_class(struct ev *e, struct node *at, const char *name);
/* eval_obj_text: the text of java.lang.String object i, or NULL. */
const char *eval_obj_text(struct ev *e, uint32_t i);
/* eval_equal, eval_compare: the language's == and its order (<0, 0, >0; an error if none). */
bool eval_equal(struct ev *e, struct value a, struct value b);
int eval_compare(struct ev *e, const struct node *at, struct value a, struct value b);
/* eval_truth: v, which must be a bool (else an error naming what it is). */
bool eval_truth(struct ev *e, const struct node *at, struct value v, const char *what);
/* eval_prop_find: the property name of set type instance in, or NULL (also for in NULL). */
struct value *eval_prop_find(struct instance *in, const char *name);
/* eval_global_find, eval_extern_find: the session's named value, native function, or NULL. */
struct binding *eval_global_find(struct dsl *d, const char *name);
struct externdecl *eval_extern_find(struct dsl *d, const char *name);
/* eval_value_persist: a deep copy of v in arena a. */
struct value eval_value_persist(struct arena *a, struct value v);
/*
 * eval_keep: v with every transient object handle in it kept (hv_keep;
 * heapif.h HANDLES), and what of it lies in arena from (NULL: all its
 * lists, structs and closures) copied into e->a: what a step stores beyond
 * itself. A failure (no memory for the backend's table) is an error at `at`.
 */
struct value eval_keep(struct ev *e, const struct node *at, struct value v,
		       const struct arena *from);
/*
 * Steps: work repeated per element (a list member's lambda, a set type's
 * membership) allocates in e->scratch, given back after each element, so
 * that it runs in the memory one element needs. eval_step_begin: if no
 * step is under way, the mark m is taken and e->a becomes the scratch
 * (true); eval_step_end(e, m, began) puts the run's arena back and
 * releases. What a step keeps goes through eval_keep(..., &e->scratch)
 * with e->a the run's (e->run_a). A runtime error inside a step leaves
 * e->a to the run's error path (dsl_run), which puts it back.
 */
static inline bool eval_step_begin(struct ev *e, struct arena_mark *m)
{
	if (e->in_step)
		return false;
	arena_mark(&e->scratch, m);
	e->a = &e->scratch;
	e->in_step = true;
	return true;
}
static inline void eval_step_end(struct ev *e, const struct arena_mark *m, bool began)
{
	if (!began)
		return;
	e->a = e->run_a;
	e->in_step = false;
	arena_release(&e->scratch, m);
}
/* eval_apply, eval_call1: call lambda fn with nargs arguments, or with one. */
struct value eval_apply(struct ev *e, const struct node *at, struct value fn, int nargs,
			const struct value *args);
struct value eval_call1(struct ev *e, const struct node *at, struct value fn, struct value x);
/* eval_expr: the value of expression n in scope f (NULL: the session's names only). */
struct value eval_expr(struct ev *e, struct frame *f, struct node *n);

/* ---- eval_builtin.c ---- */

/* eval_builtin_list: the heap's list at names: id BI_OBJECTS, _CLASSES, _CLASSLOADERS or _THREADS. */
struct value eval_builtin_list(struct ev *e, const struct node *at, enum bi_id id);
/*
 * eval_filter_stream: each(e, ctx, x) for every object x lambda f accepts,
 * in id order, as objects.filter(f) would list them (its `it is C` visiting
 * only C's instances), without the list: each runs in f's step (a walk's
 * handle; what it keeps, it keeps with eval_keep). Errors at `at`.
 */
void eval_filter_stream(struct ev *e, struct node *at, struct value f,
			void (*each)(struct ev *e, void *ctx, struct value x), void *ctx);
/* eval_list_contains: whether x equals an element of l (the list member contains, 'in'). */
struct value eval_list_contains(struct ev *e, struct node *at, const struct list *l,
				struct value x);
/*
 * eval_roots: the objects of the GC roots thread t holds (its frames and
 * locals, not its Thread object), or with t HV_NONE of every GC root, in
 * the heap's order, duplicates kept: a list of objects.
 */
struct value eval_roots(struct ev *e, const struct node *at, uint32_t t);
/* eval_member: member n->name of recv, called with nargs arguments (0 for recv.name). */
struct value eval_member(struct ev *e, struct node *n, struct value recv, int nargs,
			 struct value *args);

/* ---- eval_allocations.c ---- */

/* eval_allocations: the list `allocations`, read once per snippet. */
struct value eval_allocations(struct ev *e, const struct node *at);

/* ---- eval_settype.c ---- */

/* eval_run_instances: the statement instances_for s->name: a struct per instance. */
struct value eval_run_instances(struct ev *e, struct stmt *s);
/* eval_analysis_free: frees an analysis (after a runtime error left it in e->an). */
void eval_analysis_free(struct analysis *an);

/* ---- eval_session.c ---- */

/* eval_typed: v as a value of the declared type, or an error at (line, col). */
struct value eval_typed(struct ev *e, int line, int col, const char *name, const char *type,
			struct value v);

#endif
