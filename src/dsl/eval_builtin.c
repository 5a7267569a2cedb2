/*
 * eval_builtin.c - the query language's built-ins (docs/dsl.md "Values and
 * members"): the heap's lists (objects, classes, classloaders, threads)
 * and the members of every kind of value: list members (filter, map,
 * sort_by, group_by, ...), object members (a Java field first, then size,
 * retained, refs, ...), class, classloader and thread members, struct
 * fields, ENTITY's properties and a string's length.
 */
#include "eval_internal.h"

#include "../base/suggest.h"
#include "../base/u64map.h"
#include "builtins.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- heap values ---- */

/* from_heap: a field's, static's or element's value (heapif.h) as a value of the language. */
static struct value from_heap(struct ev *e, struct hv_value hv)
{
	switch (hv.type) {
	case HV_T_OBJECT: return hv.v.obj == HV_NONE ? VNULL : vidx(V_OBJ, hv.v.obj);
	case HV_T_BOOLEAN: return vbool(hv.v.i != 0);
	case HV_T_CHAR: {
		char *s = arena_alloc(e->a, 8);
		uint32_t c = (uint32_t)hv.v.i;
		if (c < 0x80) {
			s[0] = (char)c;
		} else if (c < 0x800) {
			s[0] = (char)(0xC0 | c >> 6);
			s[1] = (char)(0x80 | (c & 0x3F));
		} else {
			s[0] = (char)(0xE0 | c >> 12);
			s[1] = (char)(0x80 | ((c >> 6) & 0x3F));
			s[2] = (char)(0x80 | (c & 0x3F));
		}
		return vstr(s);
	}
	case HV_T_FLOAT: return vfloat(hv.v.d);
	case HV_T_INT: return vint(hv.v.i);
	default: return VNULL;
	}
}

static struct value obj_list(struct ev *e, const uint32_t *v, uint32_t n)
{
	struct value l = eval_vlist(e, L_OBJS, n);
	memcpy(l.u.l->objs, v, (size_t)n * sizeof *v);
	return l;
}

struct by_id {
	uint64_t id;
	uint32_t obj;
};

static int cmp_by_id(const void *a, const void *b)
{
	const struct by_id *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* sort_by_id: objs in increasing id order (the order of `objects`), for handles not in it. */
static void sort_by_id(struct ev *e, uint32_t *objs, uint32_t n)
{
	struct by_id *t = arena_alloc(e->a, ((size_t)n + 1) * sizeof *t);
	for (uint32_t k = 0; k < n; k++)
		t[k] = (struct by_id){hv_id(e->hv, objs[k]), objs[k]};
	eval_hv_check(e, NULL);
	qsort(t, n, sizeof *t, cmp_by_id);
	for (uint32_t k = 0; k < n; k++)
		objs[k] = t[k].obj;
}

/* ---- built-in lists ---- */

struct value eval_builtin_list(struct ev *e, const struct node *at, enum bi_id id)
{
	char what[32];
	snprintf(what, sizeof what, "'%s'", at->name);
	eval_need_heap(e, at, what);
	struct hv *v = e->hv;
	if (id == BI_OBJECTS)	/* its elements are visited, never stored */
		return eval_vlist(e, L_ALL, v->nobjects);
	if (id == BI_CLASSES) {
		struct value l = eval_vlist(e, L_VALUES, v->nclasses);
		for (uint32_t c = 0; c < v->nclasses; c++)
			l.u.l->v[c] = vidx(V_CLASS, c);
		return l;
	}
	if (id == BI_THREADS) {
		struct value l = eval_vlist(e, L_VALUES, v->nthreads);
		for (uint32_t t = 0; t < v->nthreads; t++)
			l.u.l->v[t] = vidx(V_THREAD, t);
		return l;
	}
	/* classloaders: bootstrap first, then each loader object once, in id order */
	uint32_t *ld = arena_alloc(e->a, ((size_t)v->nclasses + 1) * sizeof *ld), n = 0;
	for (uint32_t c = 0; c < v->nclasses; c++) {
		struct hv_class k;
		hv_class_info(v, c, &k);
		if (k.loader != HV_NONE)
			ld[n++] = k.loader;
	}
	sort_by_id(e, ld, n);
	struct value l = eval_vlist(e, L_VALUES, n + 1);
	l.u.l->v[0] = vidx(V_LOADER, HV_NONE);
	uint32_t k = 1;
	for (uint32_t i = 0; i < n; i++)
		if (i == 0 || ld[i] != ld[i - 1])
			l.u.l->v[k++] = vidx(V_LOADER, ld[i]);
	l.u.l->n = k;
	return l;
}

/* ---- list members ---- */

/*
 * class_filter: when fn's result is "P is C" or an 'and' chain holding it
 * (P its parameter), the class bits of C: a filter over all objects then
 * visits only the instances of C and its subclasses.
 */
static const uint8_t *class_filter(struct ev *e, struct value fn)
{
	if (fn.k != V_LAMBDA || fn.u.fn->lam->nparams != 1 || fn.u.fn->lam->nitems)
		return NULL;
	const char *p = fn.u.fn->lam->params[0].name;
	struct node *r = fn.u.fn->lam->result;
	while (r) {
		struct node *c = r->kind == N_BIN && r->op == OP_AND ? r->a : r;
		if (r->kind == N_BIN && r->op == OP_AND) {
			/* leftmost conjunct first */
			while (c->kind == N_BIN && c->op == OP_AND)
				c = c->a;
		}
		if (c->kind == N_IS && c->a->kind == N_IDENT && !strcmp(c->a->name, p))
			return eval_resolve_class(e, c, c->name);
		if (r->kind == N_BIN && r->op == OP_AND && r->b->kind == N_IS &&
		    r->b->a->kind == N_IDENT && !strcmp(r->b->a->name, p))
			return eval_resolve_class(e, r->b, r->b->name);
		return NULL;
	}
	return NULL;
}

/*
 * How a list member visits a list: element by element, each handed to the
 * member's step, which returns false to stop. The elements come from the
 * list, from the instances of the classes a filter names (class_filter),
 * or, for every object of a heap whose objects are not numbered, from the
 * backend's objects_each (a walk): its handles may be transient, so a step
 * keeps (eval_keep) what it stores, and a runtime error in a step is caught
 * there and raised again once the walk has returned (never a longjmp past
 * the backend).
 */
struct visit {
	struct ev *e;
	struct node *n;		/* the member, for errors */
	struct value fn;	/* its lambda, or null */
	bool walk;		/* the elements come from objects_each */
	bool scoped;		/* each step in e->scratch (the outermost visit) */
	struct arena *main;	/* where what steps keep goes: e->a when the visit began */
	bool (*step)(struct visit *w, struct value x);
	/* the member's own state */
	struct builder b;
	struct value acc, arg;
	int64_t k;
	int which;		/* sum 0, min 1, max 2 */
	bool found;
	struct sort_item *items;
	uint32_t nitems, capitems;
	struct group_table *groups;
	void (*each)(struct ev *e, void *ctx, struct value x);	/* eval_filter_stream's */
	void *each_ctx;
};

struct sort_item {
	struct value key, item;
};

struct walk_step {
	struct visit *w;
	uint32_t obj;
};

/* run_step: w's step on x, in the scratch arena when the visit is scoped. */
static inline bool run_step(struct visit *w, struct value x)
{
	struct arena_mark m;
	bool began = w->scoped && eval_step_begin(w->e, &m);
	bool go = w->step(w, x);
	eval_step_end(w->e, &m, began);
	return go;
}

static bool walk_step(void *ctx)
{
	struct walk_step *s = ctx;
	return run_step(s->w, vidx(V_OBJ, s->obj));
}

/* walk_one: objects_each's callback: the step, whose errors wait until the walk returned. */
static bool walk_one(void *ctx, uint32_t obj)
{
	struct walk_step s = {ctx, obj};
	return eval_guarded(s.w->e, walk_step, &s);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * visit: the elements of l handed to w->step. filter: w->fn may restrict
 * every object to the classes it tests (class_filter).
 */
static void visit(struct visit *w, const struct list *l, bool filter)
{
	struct ev *e = w->e;
	struct hv *v = e->hv;
	const uint8_t *bits = NULL;
	w->main = e->a;
	w->scoped = !e->in_step;
	if (l->kind == L_ALL && filter)
		bits = class_filter(e, w->fn);
	if (l->kind == L_ALL && (!bits || w->each) && !v->dense) {	/* a stream walks, even C's */
		w->walk = true;
		hv_objects_each(v, bits, walk_one, w);
		w->walk = false;
		if (w->scoped) {	/* after a step's error too */
			e->a = w->main;
			e->in_step = false;
		}
		eval_raise_caught(e);
		eval_hv_check(e, w->n);
		return;
	}
	if (bits) {	/* the instances of the classes, gathered */
		uint32_t *objs = NULL, got = 0, cap = 0;
		if (v->dense) {	/* sized first (counting inside a JVM is a walk: not there) */
			uint64_t total = 0;
			for (uint32_t k = 0; k < v->nclasses; k++)
				if (has_bit(bits, k)) {
					uint64_t cnt, bytes;
					hv_class_totals(v, k, &cnt, &bytes);
					total += cnt;
				}
			eval_hv_check(e, w->n);
			cap = total < UINT32_MAX - 1 ? (uint32_t)total : UINT32_MAX - 1;
			objs = arena_alloc(e->a, ((size_t)cap + 1) * sizeof *objs);
		}
		for (uint32_t k = 0; k < v->nclasses; k++)
			if (has_bit(bits, k)) {
				uint32_t cnt;
				const uint32_t *inst = hv_instances(v, k, &cnt);
				eval_hv_check(e, w->n);
				if (!cnt)
					continue;
				if ((uint64_t)got + cnt > UINT32_MAX - 1)
					eval_rt_error(e, w->n, "more than 4 billion objects");
				if (got + cnt > cap) {
					uint32_t *n = arena_alloc(e->a, ((size_t)got + cnt) * 2 * sizeof *n);
					if (got)
						memcpy(n, objs, (size_t)got * sizeof *n);
					objs = n;
					cap = (got + cnt) * 2;
				}
				memcpy(objs + got, inst, (size_t)cnt * sizeof *inst);
				got += cnt;
			}
		if (v->dense)	/* handles in id order */
			qsort(objs, got, sizeof *objs, cmp_u32);
		else
			sort_by_id(e, objs, got);
		for (uint32_t k = 0; k < got; k++) {
			eval_poll(e, w->n);
			if (!run_step(w, vidx(V_OBJ, objs[k])))
				return;
		}
		return;
	}
	for (uint32_t k = 0; k < l->n; k++) {
		eval_poll(e, w->n);
		if (!run_step(w, list_get(l, k)))
			return;
	}
}

/*
 * keep: x as a step stores it beyond itself, in w->main (eval_keep: what
 * is in the scratch arena copied, transient handles kept). Steps store
 * between to_main and back, so that what they grow is in w->main too.
 */
static inline struct value keep(struct visit *w, struct value x)
{
	if ((!w->scoped && !w->walk) || !eval_keep_needed(x))
		return x;	/* nothing to copy or keep */
	return eval_keep(w->e, w->n, x, w->scoped ? &w->e->scratch : NULL);
}

static struct arena *to_main(struct visit *w)
{
	struct arena *a = w->e->a;
	w->e->a = w->main;
	return a;
}

static void back(struct visit *w, struct arena *a)
{
	w->e->a = a;
}

static bool step_filter(struct visit *w, struct value x)
{
	if (!eval_truth(w->e, w->n, eval_call1(w->e, w->n, w->fn, x), "the filter's result"))
		return true;
	w->found = true;
	if (w->which == 1)	/* exists */
		return false;
	struct arena *a = to_main(w);
	if (w->which == 2) {	/* first */
		w->acc = keep(w, x);
		back(w, a);
		return false;
	}
	eval_build_add(w->e, &w->b, keep(w, x));
	back(w, a);
	return true;
}

static bool step_first(struct visit *w, struct value x)
{
	struct arena *a = to_main(w);
	w->acc = keep(w, x);
	back(w, a);
	return false;
}

static bool step_map(struct visit *w, struct value x)
{
	struct value y = eval_call1(w->e, w->n, w->fn, x);
	struct arena *a = to_main(w);
	eval_build_add(w->e, &w->b, keep(w, y));
	back(w, a);
	return true;
}

static bool step_foreach(struct visit *w, struct value x)
{
	eval_call1(w->e, w->n, w->fn, x);
	return true;
}

static bool step_count(struct visit *w, struct value x)
{
	if (w->fn.k == V_NULL)
		w->k++;
	else
		w->k += eval_truth(w->e, w->n, eval_call1(w->e, w->n, w->fn, x),
				   "the count's condition");
	return true;
}

static bool step_sum(struct visit *w, struct value x)
{
	struct ev *e = w->e;
	struct value y = w->fn.k != V_NULL ? eval_call1(e, w->n, w->fn, x) : x;
	if (w->which == 0) {
		if (!is_num(&y))
			eval_rt_error(e, w->n, "sum adds numbers, not %s", value_kind_name(y.k));
		w->acc = w->acc.k == V_INT && y.k == V_INT
				 ? vint((int64_t)((uint64_t)w->acc.u.i + (uint64_t)y.u.i))
				 : vfloat(num(&w->acc) + num(&y));
	} else if (w->acc.k == V_NULL || (w->which == 1 ? eval_compare(e, w->n, y, w->acc) < 0
							: eval_compare(e, w->n, y, w->acc) > 0)) {
		struct arena *a = to_main(w);
		w->acc = keep(w, y);
		back(w, a);
	}
	return true;
}

static bool step_sort(struct visit *w, struct value x)
{
	struct ev *e = w->e;
	struct value key = eval_call1(e, w->n, w->fn, x);
	struct arena *a = to_main(w);
	w->items = arena_grow(e->a, w->items, w->nitems, &w->capitems, sizeof *w->items, 64);
	w->items[w->nitems].item = keep(w, x);
	w->items[w->nitems++].key = keep(w, key);
	back(w, a);
	return true;
}

static bool step_contains(struct visit *w, struct value x)
{
	if (!eval_equal(w->e, x, w->arg))
		return true;
	w->found = true;
	return false;
}

/* key_hash: a hash that agrees with eval_equal() (Strings hash by their text). */
static uint64_t key_hash(struct ev *e, struct value v)
{
	switch (v.k) {
	case V_INT: return (uint64_t)v.u.i * 0x9E3779B97F4A7C15ULL;
	case V_FLOAT:
		/* eval_equal() compares floats and ints by value: hash whole floats as ints
		 * (those in int64's range: a cast of any other is undefined) */
		if (v.u.f >= -9223372036854775808.0 && v.u.f < 9223372036854775808.0 &&
		    v.u.f == (double)(int64_t)v.u.f)
			return (uint64_t)(int64_t)v.u.f * 0x9E3779B97F4A7C15ULL;
		return 7;
	case V_STR: return u64_fnv1a(v.u.s, U64_FNV_BASIS);
	case V_OBJ: {
		const char *t = eval_obj_text(e, v.u.idx);
		return t ? u64_fnv1a(t, U64_FNV_BASIS) : (uint64_t)v.u.idx * 0x9E3779B97F4A7C15ULL;
	}
	case V_BOOL: return v.u.b ? 1 : 2;
	case V_CLASS: case V_LOADER: case V_THREAD: return (uint64_t)v.u.idx * 31 + v.k;
	case V_REFKIND: return (uint64_t)v.u.rk + 11;
	default: return 3;
	}
}

/* The groups of group_by: keys hashed (key_hash), in order of first appearance. */
struct group_table {
	struct value *keys;
	struct builder *groups;
	uint32_t ng, cap, hcap;
	uint32_t *slots;	/* group + 1, 0 empty; in the arena, so that a failing lambda leaks nothing */
};

static bool step_group(struct visit *w, struct value x)
{
	struct ev *e = w->e;
	struct group_table *t = w->groups;
	struct value key = eval_call1(e, w->n, w->fn, x);
	uint64_t hv = key_hash(e, key);
	uint32_t g = UINT32_MAX, s = (uint32_t)hv & (t->hcap - 1);
	while (t->slots[s]) {
		if (eval_equal(e, t->keys[t->slots[s] - 1], key)) {
			g = t->slots[s] - 1;
			break;
		}
		s = (s + 1) & (t->hcap - 1);
	}
	struct arena *a = to_main(w);
	if (g == UINT32_MAX) {
		uint32_t cap = t->cap;
		t->keys = arena_grow(e->a, t->keys, t->ng, &cap, sizeof *t->keys, 16);
		t->groups = arena_grow(e->a, t->groups, t->ng, &t->cap, sizeof *t->groups, 16);
		g = t->ng++;
		t->keys[g] = keep(w, key);
		t->groups[g] = (struct builder){NULL, NULL, 0, 0, true};
		t->slots[s] = g + 1;
		if (t->ng * 2 > t->hcap) {	/* grow and rehash */
			t->hcap *= 2;
			t->slots = arena_alloc(e->a, t->hcap * sizeof *t->slots);
			for (uint32_t k = 0; k < t->ng; k++) {
				uint32_t u = (uint32_t)key_hash(e, t->keys[k]) & (t->hcap - 1);
				while (t->slots[u])
					u = (u + 1) & (t->hcap - 1);
				t->slots[u] = k + 1;
			}
		}
	}
	eval_build_add(e, &t->groups[g], keep(w, x));
	back(w, a);
	return true;
}

/* qsort has no context argument: the evaluator sorting on this thread (threads may evaluate at once, src/serve). */
static _Thread_local struct ev *sort_ev;
static _Thread_local const struct node *sort_at;

static int by_key(const void *a, const void *b)
{
	const struct sort_item *x = a, *y = b;
	return eval_compare(sort_ev, sort_at, x->key, y->key);
}

static bool step_stream(struct visit *w, struct value x)
{
	if (eval_truth(w->e, w->n, eval_call1(w->e, w->n, w->fn, x), "the filter's result"))
		w->each(w->e, w->each_ctx, x);
	return true;
}

void eval_filter_stream(struct ev *e, struct node *at, struct value f,
			void (*each)(struct ev *e, void *ctx, struct value x), void *ctx)
{
	struct list all = {L_ALL, e->hv->nobjects, NULL, NULL};
	struct visit w = {.e = e, .n = at, .fn = f, .step = step_stream, .each = each,
			  .each_ctx = ctx};
	visit(&w, &all, true);
}

struct value eval_list_contains(struct ev *e, struct node *at, const struct list *l,
				struct value x)
{
	struct visit w = {.e = e, .n = at, .fn = VNULL, .step = step_contains, .arg = x};
	visit(&w, l, false);
	return vbool(w.found);
}

static struct value list_member(struct ev *e, struct node *n, struct value recv, int nargs,
				struct value *args)
{
	const char *m = n->name;
	struct list *l = recv.u.l;
	const struct bi_row *r = bi_of(n, BI_R_LIST);
	if (!r) {
		const char *names[64];
		char sug[200], all[300];
		hs_suggest(sug, sizeof sug, m, names, bi_names(BI_R_LIST, names, 64), NULL);
		eval_rt_error(e, n, "a list has no member '%s'%s (members: %s)", m, sug,
			      bi_list(BI_R_LIST, all, sizeof all));
	}
	if (r->lambda && r->min_args == 1 && r->max_args == 1 && nargs != 1)
		eval_rt_error(e, n, "%s takes one lambda, e.g. %s([it | ...])", m, m);
	struct visit w = {.e = e, .n = n, .fn = nargs ? args[0] : VNULL, .acc = VNULL};
	w.b = (struct builder){NULL, NULL, 0, 0, true};
	switch (r->id) {
	case BI_LIST_FILTER: case BI_LIST_EXISTS: case BI_LIST_FIRST: {
		w.which = r->id == BI_LIST_EXISTS ? 1 : r->id == BI_LIST_FIRST ? 2 : 0;
		w.step = w.which == 2 && !nargs ? step_first : step_filter;
		visit(&w, l, nargs != 0);
		if (w.which == 1)
			return vbool(w.found);
		if (w.which == 2)
			return w.acc;
		return eval_build_done(e, &w.b);
	}
	case BI_LIST_MAP:
		w.step = step_map;
		visit(&w, l, false);
		return eval_build_done(e, &w.b);
	case BI_LIST_FOREACH:
		w.step = step_foreach;
		visit(&w, l, false);
		return VNULL;
	case BI_LIST_COUNT: case BI_LIST_LENGTH:
		if (!nargs && (l->kind != L_ALL || e->hv->dense))
			return vint(l->n);
		w.step = step_count;
		visit(&w, l, nargs != 0);
		return vint(w.k);
	case BI_LIST_SUM: case BI_LIST_MIN: case BI_LIST_MAX:
		w.which = r->id == BI_LIST_SUM ? 0 : r->id == BI_LIST_MIN ? 1 : 2;
		w.acc = w.which ? VNULL : vint(0);
		w.step = step_sum;
		visit(&w, l, false);
		return w.acc;
	case BI_LIST_SORT_BY: case BI_LIST_TOP: {
		bool top = r->id == BI_LIST_TOP;
		int64_t limit = -1;
		if (top) {
			if (nargs != 2 || args[0].k != V_INT)
				eval_rt_error(e, n, "top takes a count and a lambda: top(10, [it | it.size])");
			limit = args[0].u.i;
			w.fn = args[1];
		}
		w.step = step_sort;
		if (l->kind != L_ALL || e->hv->dense) {	/* its length known: no growing */
			w.capitems = l->n;
			w.items = arena_alloc(e->a, ((size_t)l->n + 1) * sizeof *w.items);
		}
		visit(&w, l, false);
		sort_ev = e;
		sort_at = n;
		qsort(w.items, w.nitems, sizeof *w.items, by_key);
		uint32_t k = w.nitems;
		if (top)
			for (uint32_t j = 0; j < k && (int64_t)j < limit; j++)
				eval_build_add(e, &w.b, w.items[k - 1 - j].item);
		else
			for (uint32_t j = 0; j < k; j++)
				eval_build_add(e, &w.b, w.items[j].item);
		return eval_build_done(e, &w.b);
	}
	case BI_LIST_GROUP_BY: {
		/* [{key, count, items}] in order of first appearance */
		struct group_table t = {NULL, NULL, 0, 0, 64, NULL};
		t.slots = arena_alloc(e->a, t.hcap * sizeof *t.slots);
		w.groups = &t;
		w.step = step_group;
		visit(&w, l, false);
		struct value out = eval_vlist(e, L_VALUES, t.ng);
		static const char *const names[] = {"key", "count", "items"};
		for (uint32_t g = 0; g < t.ng; g++) {
			struct vstruct *st = arena_alloc(e->a, sizeof *st);
			st->n = 3;
			st->names = (const char **)names;
			st->vals = arena_alloc(e->a, 3 * sizeof *st->vals);
			st->vals[0] = t.keys[g];
			st->vals[1] = vint(t.groups[g].n);
			st->vals[2] = eval_build_done(e, &t.groups[g]);
			out.u.l->v[g].k = V_STRUCT;
			out.u.l->v[g].u.st = st;
		}
		return out;
	}
	case BI_LIST_CONTAINS:
		if (nargs != 1)
			eval_rt_error(e, n, "contains takes one value");
		return eval_list_contains(e, n, l, args[0]);
	default:
		break;
	}
	eval_rt_error(e, n, "the list member '%s' has no case in the evaluator", m);
}

/* ---- heap members ---- */

/* Names for a message's suggestion: at most cap of them. */
struct field_names {
	const char *v[300];
	int n, cap;
};

static void collect_name(void *ctx, const char *name)
{
	struct field_names *fn = ctx;
	if (fn->n < fn->cap)
		fn->v[fn->n++] = name;
}

static void add_root(void *ctx, uint32_t obj)
{
	void **c = ctx;	/* the evaluator, the builder */
	eval_build_add(c[0], c[1], vidx(V_OBJ, obj));
}

struct value eval_roots(struct ev *e, const struct node *at, uint32_t t)
{
	struct builder b = {NULL, NULL, 0, 0, true};
	void *c[2] = {e, &b};
	hv_roots_each(e->hv, t, add_root, c);
	eval_hv_check(e, at);
	return eval_build_done(e, &b);
}

/* checked: n (an int read from the heap) as a value, after the check that its read worked. */
static struct value checked(struct ev *e, const struct node *at, int64_t n)
{
	eval_hv_check(e, at);
	return vint(n);
}

static struct value object_member(struct ev *e, struct node *n, uint32_t i)
{
	struct hv *v = e->hv;
	const char *m = n->name;
	/* A Java field shadows a built-in; where it is, is cached per class. */
	uint32_t c = hv_class_of(v, i);
	if (n->cache_cls1 != c + 1) {
		struct hv_slot slot = {0, 0};
		if (hv_kind(v, i) != HV_INSTANCE || !hv_field_locate(v, c, m, &slot))
			slot.type = 0;
		n->cache_cls1 = c + 1;
		n->cache_off = slot.off;
		n->cache_type = slot.type;
	}
	if (n->cache_type) {
		struct hv_slot slot = {n->cache_off, n->cache_type};
		struct hv_value hv = hv_field_at(v, i, slot);
		eval_hv_check(e, n);
		if (hv.type)
			return from_heap(e, hv);
	}
	const struct bi_row *r = bi_of(n, BI_R_OBJECT);
	enum hv_obj_kind k;
	switch (r ? r->id : BI_NIDS) {
	case BI_OBJ_CLASS:
		return vidx(V_CLASS, c);
	case BI_OBJ_SIZE:
		return vint((int64_t)hv_shallow(v, i));
	case BI_OBJ_ID:
		return checked(e, n, (int64_t)hv_id(v, i));
	case BI_OBJ_RETAINED:
		return checked(e, n, (int64_t)hv_retained(v, i));
	case BI_OBJ_DYNAMIC_SIZE: case BI_OBJ_DYNAMIC_SIZE_EST:
		return checked(e, n, (int64_t)hv_dynamic_size(v, i, r->id == BI_OBJ_DYNAMIC_SIZE_EST));
	case BI_OBJ_REFS: case BI_OBJ_REFERRERS: {
		uint32_t cnt;
		const uint32_t *refs = r->id == BI_OBJ_REFS ? hv_refs_out(v, i, &cnt)
							    : hv_refs_in(v, i, &cnt);
		eval_hv_check(e, n);
		return obj_list(e, refs, cnt);
	}
	case BI_OBJ_LENGTH:
		if ((k = hv_kind(v, i)) == HV_OBJ_ARRAY || k == HV_PRIM_ARRAY)
			return vint(hv_array_length(v, i));
		break;
	case BI_OBJ_ELEMENTS:
		if ((k = hv_kind(v, i)) == HV_OBJ_ARRAY || k == HV_PRIM_ARRAY) {
			uint32_t len = hv_array_length(v, i);
			struct builder b = {NULL, NULL, 0, 0, true};
			for (uint32_t j = 0; j < len; j++) {
				struct hv_value x = hv_array_elem(v, i, j);
				eval_hv_check(e, n);
				eval_build_add(e, &b, from_heap(e, x));
			}
			return eval_build_done(e, &b);
		}
		break;
	case BI_OBJ_TEXT: {
		const char *s = eval_obj_text(e, i);
		if (s)
			return vstr(s);
		break;
	}
	case BI_OBJ_KIND:
		k = hv_kind(v, i);
		return vstr(k == HV_INSTANCE ? "instance" : k == HV_OBJ_ARRAY ? "object array"
			    : k == HV_PRIM_ARRAY ? "primitive array" : "class");
	case BI_OBJ_HEAP: {	/* Android: app, zygote, image; null elsewhere */
		const char *hn = hv_heap_name(v, i);
		return hn ? vstr(hn) : VNULL;
	}
	default:
		break;
	}
	struct field_names fn = {{0}, 0, 256};
	hv_field_names(v, i, collect_name, &fn);
	fn.n += bi_names(BI_R_OBJECT, fn.v + fn.n, 256 - fn.n);
	char sug[200];
	hs_suggest(sug, sizeof sug, m, fn.v, fn.n, NULL);
	eval_rt_error(e, n, "class %s has no field '%s'%s", hv_class_name(v, c), m, sug);
}

static struct value class_member(struct ev *e, struct node *n, uint32_t c)
{
	struct hv *v = e->hv;
	const char *m = n->name;
	const struct bi_row *r = bi_of(n, BI_R_CLASS);
	if (r && r->id == BI_CLASS_NAME)	/* the hot one (group_by's key): inline */
		return vstr(hv_class_name(v, c));
	struct hv_class k;
	hv_class_info(v, c, &k);
	uint64_t count, bytes;
	switch (r ? r->id : BI_NIDS) {
	case BI_CLASS_LOADER:
		return vidx(V_LOADER, k.loader);
	case BI_CLASS_SUPER:
		return k.super == HV_NONE ? VNULL : vidx(V_CLASS, k.super);
	case BI_CLASS_INSTANCES: {
		uint32_t cnt;
		const uint32_t *inst = hv_instances(v, c, &cnt);
		eval_hv_check(e, n);
		return obj_list(e, inst, cnt);
	}
	case BI_CLASS_COUNT: case BI_CLASS_SHALLOW:
		hv_class_totals(v, c, &count, &bytes);
		return checked(e, n, (int64_t)(r->id == BI_CLASS_COUNT ? count : bytes));
	case BI_CLASS_OBJECT:
		return k.object == HV_NONE ? VNULL : vidx(V_OBJ, k.object);
	case BI_CLASS_ID:
		return vint((int64_t)k.id);
	case BI_CLASS_INSTANCE_SIZE:
		return vint(k.inst_size);
	default:
		break;
	}
	struct hv_value hv;
	bool found = hv_static_value(v, c, m, &hv);
	eval_hv_check(e, n);
	if (found)
		return from_heap(e, hv);
	struct field_names cands = {{0}, 0, 300};
	cands.n = bi_names(BI_R_CLASS, cands.v, 300);
	hv_static_names(v, c, collect_name, &cands);
	char sug[200];
	hs_suggest(sug, sizeof sug, m, cands.v, cands.n, NULL);
	eval_rt_error(e, n, "class %s has no static or member '%s'%s", k.name, m, sug);
}

static struct value loader_member(struct ev *e, struct node *n, uint32_t ld)
{
	struct hv *v = e->hv;
	const char *m = n->name;
	char all[300];
	const struct bi_row *r = bi_of(n, BI_R_LOADER);
	switch (r ? r->id : BI_NIDS) {
	case BI_LOADER_ID:
		return checked(e, n, ld == HV_NONE ? 0 : (int64_t)hv_id(v, ld));
	case BI_LOADER_OBJECT:
		return ld == HV_NONE ? VNULL : vidx(V_OBJ, ld);
	case BI_LOADER_NAME: {
		if (ld == HV_NONE)
			return vstr("<bootstrap>");
		uint32_t c = hv_class_of(v, ld);
		struct hv_slot slot;
		if (hv_kind(v, ld) == HV_INSTANCE && hv_field_locate(v, c, "name", &slot)) {
			struct hv_value hv = hv_field_at(v, ld, slot);
			eval_hv_check(e, n);
			const char *t = hv.type == HV_T_OBJECT && hv.v.obj != HV_NONE
						? eval_obj_text(e, hv.v.obj) : NULL;
			if (t)
				return vstr(t);
		}
		return vstr(hv_class_name(v, c));
	}
	case BI_LOADER_CLASSES: {
		struct builder b = {NULL, NULL, 0, 0, false};
		for (uint32_t c = 0; c < v->nclasses; c++) {
			struct hv_class k;
			hv_class_info(v, c, &k);
			if (k.loader == ld && k.object != HV_NONE)
				eval_build_add(e, &b, vidx(V_CLASS, c));
		}
		return eval_build_done(e, &b);
	}
	default:
		eval_rt_error(e, n, "a classloader has no member '%s' (members: %s)", m,
			      bi_list(BI_R_LOADER, all, sizeof all));
	}
}

static struct value thread_member(struct ev *e, struct node *n, uint32_t t)
{
	struct hv *v = e->hv;
	const char *m = n->name;
	char all[300];
	const struct bi_row *r = bi_of(n, BI_R_THREAD);
	uint32_t obj = hv_thread_object(v, t);
	switch (r ? r->id : BI_NIDS) {
	case BI_THREAD_NAME: {
		char *s = hv_thread_name(v, t);
		eval_hv_check(e, n);
		struct value x = s ? vstr(arena_strndup(e->a, s, strlen(s))) : VNULL;
		free(s);
		return x;
	}
	case BI_THREAD_OBJECT:
		return obj == HV_NONE ? VNULL : vidx(V_OBJ, obj);
	case BI_THREAD_ROOTS:
		return eval_roots(e, n, t);
	case BI_THREAD_ID:
		return checked(e, n, obj == HV_NONE ? 0 : (int64_t)hv_id(v, obj));
	case BI_THREAD_FRAMES:
		return vint(hv_thread_frames(v, t));
	default:
		eval_rt_error(e, n, "a thread has no member '%s' (members: %s)", m,
			      bi_list(BI_R_THREAD, all, sizeof all));
	}
}

struct value eval_member(struct ev *e, struct node *n, struct value recv, int nargs,
			   struct value *args)
{
	const char *m = n->name;
	enum bi_recv r = BI_NRECV;
	switch (recv.k) {
	case V_LIST: r = BI_R_LIST; break;
	case V_OBJ: r = BI_R_OBJECT; break;
	case V_CLASS: r = BI_R_CLASS; break;
	case V_LOADER: r = BI_R_LOADER; break;
	case V_THREAD: r = BI_R_THREAD; break;
	case V_ENTITY: r = BI_R_ENTITY; break;
	case V_STR: r = BI_R_STRING; break;
	default: break;
	}
	char why[128];
	const char *bad;
	if (nargs && r != BI_NRECV && (bad = bi_arity(bi_of(n, r), nargs, why, sizeof why)))
		eval_rt_error(e, n, "%s", bad);
	switch (recv.k) {
	case V_LIST:
		return list_member(e, n, recv, nargs, args);
	case V_OBJ:
		return object_member(e, n, recv.u.idx);
	case V_CLASS:
		return class_member(e, n, recv.u.idx);
	case V_LOADER:
		return loader_member(e, n, recv.u.idx);
	case V_THREAD:
		return thread_member(e, n, recv.u.idx);
	case V_ENTITY: {
		enum bi_id id = bi_of(n, BI_R_ENTITY) ? n->bi->id : BI_NIDS;
		if (id == BI_ENTITY_NAME)
			return recv.u.ent->name;
		if (id == BI_ENTITY_MEMBERS)
			return vint((int64_t)recv.u.ent->members);
		struct value *p = eval_prop_find(recv.u.ent, m);
		if (p)
			return *p;
		eval_rt_error(e, n, "ENTITY has no property '%s'", m);
	}
	case V_STRUCT: {
		for (int k = 0; k < recv.u.st->n; k++)
			if (!strcmp(recv.u.st->names[k], m))
				return recv.u.st->vals[k];
		char sug[200];
		hs_suggest(sug, sizeof sug, m, recv.u.st->names, recv.u.st->n, NULL);
		eval_rt_error(e, n, "struct %s has no field '%s'%s",
			 recv.u.st->type ? recv.u.st->type : "", m, sug);
	}
	case V_STR:
		if (bi_of(n, BI_R_STRING) && n->bi->id == BI_STR_LENGTH) {
			/* characters: UTF-8 lead bytes (NUL is C0 80, one character) */
			int64_t c = 0;
			for (const unsigned char *p = (const unsigned char *)recv.u.s; *p; p++)
				c += (*p & 0xC0) != 0x80;
			return vint(c);
		}
		break;
	case V_NULL:
		eval_rt_error(e, n, "null has no member '%s' (a null reference was dereferenced)", m);
	default:
		break;
	}
	eval_rt_error(e, n, "%s has no member '%s'", value_kind_name(recv.k), m);
}
