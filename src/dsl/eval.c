/*
 * eval.c - the query language's evaluator, its core (docs/dsl.md): values
 * and runtime errors, names and scopes, equality and comparison, lambdas
 * and their calls, and the evaluation of expressions (operators, `is`,
 * `in`, struct literals, calls of native functions declared with extern).
 * What a name or member means beyond that is elsewhere: the built-in
 * lists and members in eval_builtin.c, `allocations` in
 * eval_allocations.c, set types in eval_settype.c, statements and
 * sessions in eval_session.c (eval_internal.h says what they share).
 */
#include "eval_internal.h"

#include "../base/suggest.h"
#include "extern.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *value_kind_name(enum vkind k)
{
	static const char *const names[] = {"null", "bool", "int", "float", "string", "object",
					    "class", "classloader", "thread", "list", "struct",
					    "lambda", "entity", "ref_kind"};
	return names[k];
}

const char *refkind_name(enum refkind k)
{
	return bi_refkind_name((int)k);
}

void eval_rt_error(struct ev *e, const struct node *at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->err->msg, sizeof e->err->msg, fmt, ap);
	va_end(ap);
	e->err->line = at ? at->line : 0;
	e->err->col = at ? at->col : 0;
	e->err->offset = -1;
	if (at && at->snippet && e->snippet && at->snippet != e->snippet) {
		/* a lambda or set type from an earlier snippet: its line is not here */
		size_t l = strlen(e->err->msg);
		snprintf(e->err->msg + l, sizeof e->err->msg - l,
			 " (in code from an earlier snippet, its line %d, column %d)", at->line,
			 at->col);
		e->err->line = e->err->col = 0;
	}
	longjmp(e->fail, 1);
}

void eval_hv_fail(struct ev *e, const struct node *at)
{
	struct hv *v = e->hv;
	char why[sizeof v->why];
	memcpy(why, v->why, sizeof why);
	enum hv_fail f = v->fail;
	hv_clear(v);
	if (f == HV_CANNOT) {
		e->d->cannot = true;
		eval_rt_error(e, at, "cannot answer here: %s (a snapshot of the heap can)", why);
	}
	eval_rt_error(e, at, "%s", f == HV_INTERRUPTED ? "interrupted" : why);
}

struct value eval_vlist(struct ev *e, enum list_kind k, uint32_t n)
{
	struct list *l = arena_alloc(e->a, sizeof *l);
	l->kind = k;
	l->n = n;
	if (k == L_VALUES)
		l->v = arena_alloc(e->a, ((size_t)n + 1) * sizeof *l->v);
	else if (k == L_OBJS)
		l->objs = arena_alloc(e->a, ((size_t)n + 1) * sizeof *l->objs);
	struct value v = {V_LIST, {.l = l}};
	return v;
}

void eval_build_add(struct ev *e, struct builder *b, struct value v)
{
	b->v = arena_grow(e->a, b->v, b->n, &b->cap, sizeof *b->v, 16);
	if (v.k != V_OBJ)
		b->all_objs = false;
	b->v[b->n++] = v;
}

struct value eval_build_done(struct ev *e, struct builder *b)
{
	if (b->all_objs && b->n) {
		struct value l = eval_vlist(e, L_OBJS, b->n);
		for (uint32_t k = 0; k < b->n; k++)
			l.u.l->objs[k] = b->v[k].u.idx;
		return l;
	}
	struct value l = eval_vlist(e, L_VALUES, 0);
	l.u.l->v = b->v;
	l.u.l->n = b->n;
	return l;
}

bool eval_guarded(struct ev *e, bool (*fn)(void *ctx), void *ctx)
{
	if (e->hv->unwinds)	/* nothing of the backend's on the stack to lose */
		return fn(ctx);
	jmp_buf outer;
	memcpy(outer, e->fail, sizeof outer);
	struct hs_catch c;
	hs_catch_push(&c);
	if (setjmp(c.jb)) {	/* a throw (no memory): c is popped */
		memcpy(e->fail, outer, sizeof outer);
		e->caught = 2;
		snprintf(e->caught_msg, sizeof e->caught_msg, "%s", c.msg);
		return false;
	}
	if (setjmp(e->fail)) {	/* a runtime error: e->err holds it */
		hs_catch_pop(&c);
		memcpy(e->fail, outer, sizeof outer);
		e->caught = 1;
		return false;
	}
	bool go = fn(ctx);
	hs_catch_pop(&c);
	memcpy(e->fail, outer, sizeof outer);
	return go;
}

void eval_raise_caught(struct ev *e)
{
	int k = e->caught;
	e->caught = 0;
	if (k == 2)
		hs_throw("%s", e->caught_msg);
	if (k == 1)
		longjmp(e->fail, 1);
}

void eval_poll(struct ev *e, const struct node *at)
{
	if ((++e->steps & 0xffff) == 0 && hs_interrupted)
		eval_rt_error(e, at, "interrupted");
}

/* ---- names ---- */

/*
 * need_heap: a runtime error at `at` unless the session has a heap (one
 * without, on an attached JVM before its snapshot, runs only snippets that
 * dsl_needs_heap passes; this catches the rest).
 */
void eval_need_heap(struct ev *e, const struct node *at, const char *what)
{
	if (!e->hv)
		eval_rt_error(e, at, "%s needs a heap, and this query runs without one (no dump is open "
			 "and no snapshot of the JVM was taken)", what);
}

/* ---- class names ---- */

/* resolve_class: the bit set of classes that are instanceof name (cached in the node). */
const uint8_t *eval_resolve_class(struct ev *e, struct node *at, const char *name)
{
	if (at->class_bits)
		return at->class_bits;
	eval_need_heap(e, at, "'is'");
	struct hv *v = e->hv;
	uint32_t *m, n = hv_find_classes(v, name, &m);
	if (!n) {
		free(m);
		eval_rt_error(e, at, "no class named '%s' in this heap", name);
	}
	for (uint32_t k = 1; k < n; k++)
		if (strcmp(hv_class_name(v, m[k]), hv_class_name(v, m[0]))) {
			char list[400];
			size_t len = 0;
			for (uint32_t j = 0; j < n && len + 80 < sizeof list; j++)
				if (!strstr(list, hv_class_name(v, m[j])) || !len)
					len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
								len ? ", " : "", hv_class_name(v, m[j]));
			free(m);
			eval_rt_error(e, at, "'%s' is ambiguous: %s; write the full name", name, list);
		}
	/* in the session's arena: the node may outlive this snippet */
	uint8_t *bits = arena_alloc(&e->d->keep, (size_t)v->nclasses / 8 + 1);
	for (uint32_t c = 0; c < v->nclasses; c++)
		for (uint32_t k = 0; k < n; k++)
			if (hv_is_subclass(v, c, m[k])) {
				bits[c / 8] |= (uint8_t)(1u << (c % 8));
				break;
			}
	free(m);
	at->class_bits = bits;
	return bits;
}

/* ---- heap values ---- */

/* The text of a java.lang.String object, or NULL. */
const char *eval_obj_text(struct ev *e, uint32_t i)
{
	char *s = hv_text(e->hv, i, 0);
	if (!s) {
		eval_hv_check(e, NULL);
		return NULL;
	}
	const char *r = arena_strndup(e->a, s, strlen(s));
	free(s);
	return r;
}

/* ---- equality and comparison ---- */

bool eval_equal(struct ev *e, struct value a, struct value b)
{
	if (is_num(&a) && is_num(&b))
		return a.k == V_INT && b.k == V_INT ? a.u.i == b.u.i : num(&a) == num(&b);
	if (a.k == V_OBJ && b.k == V_STR) {
		struct value t = a;
		a = b;
		b = t;
	}
	if (a.k == V_STR && b.k == V_OBJ) {
		const char *s = eval_obj_text(e, b.u.idx);
		return s && !strcmp(a.u.s, s);
	}
	if (a.k != b.k)
		return false;
	switch (a.k) {
	case V_NULL: return true;
	case V_BOOL: return a.u.b == b.u.b;
	case V_STR: return !strcmp(a.u.s, b.u.s);
	case V_OBJ: case V_CLASS: case V_LOADER: case V_THREAD: return a.u.idx == b.u.idx;
	case V_ENTITY: return a.u.ent == b.u.ent;
	case V_REFKIND: return a.u.rk == b.u.rk;
	default: return false;
	}
}

int eval_compare(struct ev *e, const struct node *at, struct value a, struct value b)
{
	if (is_num(&a) && is_num(&b)) {
		if (a.k == V_INT && b.k == V_INT)
			return a.u.i < b.u.i ? -1 : a.u.i > b.u.i;
		double x = num(&a), y = num(&b);
		return x < y ? -1 : x > y;
	}
	const char *sa = a.k == V_STR ? a.u.s : a.k == V_OBJ ? eval_obj_text(e, a.u.idx) : NULL;
	const char *sb = b.k == V_STR ? b.u.s : b.k == V_OBJ ? eval_obj_text(e, b.u.idx) : NULL;
	if (sa && sb && (a.k == V_STR || b.k == V_STR))
		return strcmp(sa, sb);
	eval_rt_error(e, at, "cannot order %s and %s", value_kind_name(a.k), value_kind_name(b.k));
}

bool eval_truth(struct ev *e, const struct node *at, struct value v, const char *what)
{
	if (v.k != V_BOOL)
		eval_rt_error(e, at, "%s must be a bool, not %s", what, value_kind_name(v.k));
	return v.u.b;
}

/* ---- scopes ---- */

static struct value *frame_find(struct frame *f, const char *name)
{
	for (; f; f = f->up)
		for (int k = 0; k < f->n; k++)
			if (!strcmp(f->names[k], name))
				return &f->vals[k];
	return NULL;
}

static void frame_set(struct ev *e, struct frame *f, const char *name, struct value v)
{
	for (int k = 0; k < f->n; k++)
		if (!strcmp(f->names[k], name)) {
			f->vals[k] = v;
			return;
		}
	if (f->n == f->cap) {
		int cap = f->cap ? f->cap * 2 : 4;
		const char **nn = arena_alloc(e->a, (size_t)cap * sizeof *nn);
		struct value *nv = arena_alloc(e->a, (size_t)cap * sizeof *nv);
		if (f->n) {
			memcpy(nn, f->names, (size_t)f->n * sizeof *nn);
			memcpy(nv, f->vals, (size_t)f->n * sizeof *nv);
		}
		f->names = nn;
		f->vals = nv;
		f->cap = cap;
	}
	f->names[f->n] = name;
	f->vals[f->n++] = v;
}

/* frame_copy: a scope chain copied into arena a, for closures to keep. */
static struct frame *frame_copy(struct arena *a, const struct frame *f)
{
	if (!f)
		return NULL;
	struct frame *c = arena_alloc(a, sizeof *c);
	c->n = c->cap = f->n;
	c->names = arena_alloc(a, (size_t)f->n * sizeof *c->names + 1);
	c->vals = arena_alloc(a, (size_t)f->n * sizeof *c->vals + 1);
	if (f->n) {
		memcpy(c->names, f->names, (size_t)f->n * sizeof *c->names);
		memcpy(c->vals, f->vals, (size_t)f->n * sizeof *c->vals);
	}
	c->up = frame_copy(a, f->up);
	return c;
}

struct value *eval_prop_find(struct instance *in, const char *name)
{
	if (!in)
		return NULL;
	for (int k = 0; k < in->nprops; k++)
		if (!strcmp(in->prop_names[k], name))
			return &in->props[k];
	return NULL;
}

struct binding *eval_global_find(struct dsl *d, const char *name)
{
	for (struct binding *b = d->globals; b; b = b->next)
		if (!strcmp(b->name, name))
			return b;
	return NULL;
}

struct externdecl *eval_extern_find(struct dsl *d, const char *name)
{
	for (struct externdecl *x = d->externs; x; x = x->next)
		if (!strcmp(x->name, name))
			return x;
	return NULL;
}

/* value_persist: a deep copy of v in arena a (lists, structs, strings, scopes). */
struct value eval_value_persist(struct arena *a, struct value v)
{
	switch (v.k) {
	case V_STR:
		v.u.s = arena_strndup(a, v.u.s, strlen(v.u.s));
		break;
	case V_LIST: {
		struct list *l = arena_alloc(a, sizeof *l);
		*l = *v.u.l;
		if (l->kind == L_OBJS) {
			l->objs = arena_alloc(a, ((size_t)l->n + 1) * sizeof *l->objs);
			memcpy(l->objs, v.u.l->objs, (size_t)l->n * sizeof *l->objs);
		} else if (l->kind == L_VALUES) {
			l->v = arena_alloc(a, ((size_t)l->n + 1) * sizeof *l->v);
			for (uint32_t k = 0; k < l->n; k++)
				l->v[k] = eval_value_persist(a, v.u.l->v[k]);
		}
		v.u.l = l;
		break;
	}
	case V_STRUCT: {
		struct vstruct *st = arena_alloc(a, sizeof *st);
		*st = *v.u.st;
		st->vals = arena_alloc(a, (size_t)st->n * sizeof *st->vals + 1);
		for (int k = 0; k < st->n; k++)
			st->vals[k] = eval_value_persist(a, v.u.st->vals[k]);
		v.u.st = st;
		break;
	}
	case V_LAMBDA: {
		struct closure *c = arena_alloc(a, sizeof *c);
		c->lam = v.u.fn->lam;
		c->env = frame_copy(a, v.u.fn->env);
		v.u.fn = c;
		break;
	}
	default:
		break;
	}
	return v;
}

static struct frame *frame_keep(struct ev *e, const struct node *at, const struct frame *f,
			       const struct arena *from)
{
	if (!f || (from && !arena_owns(from, f)))
		return (struct frame *)f;	/* made before the step: holds nothing of it */
	struct frame *c = arena_alloc(e->a, sizeof *c);
	c->n = c->cap = f->n;
	c->names = f->names;
	if (!from || arena_owns(from, f->names)) {
		c->names = arena_alloc(e->a, (size_t)f->n * sizeof *c->names + 1);
		for (int k = 0; k < f->n; k++)
			c->names[k] = from && arena_owns(from, f->names[k])
					      ? arena_strndup(e->a, f->names[k], strlen(f->names[k]))
					      : f->names[k];
	}
	c->vals = arena_alloc(e->a, (size_t)f->n * sizeof *c->vals + 1);
	for (int k = 0; k < f->n; k++)
		c->vals[k] = eval_keep(e, at, f->vals[k], from);
	c->up = frame_keep(e, at, f->up, from);
	return c;
}

struct value eval_keep(struct ev *e, const struct node *at, struct value v,
		       const struct arena *from)
{
	struct hv *hv = e->hv;
	switch (v.k) {
	case V_OBJ: case V_LOADER:
		if (v.u.idx != HV_NONE && (v.u.idx & HV_TRANSIENT) && hv && !hv->dense) {
			v.u.idx = hv_keep(hv, v.u.idx);
			eval_hv_check(e, at);
		}
		break;
	case V_STR:
		if (from && arena_owns(from, v.u.s))
			v.u.s = arena_strndup(e->a, v.u.s, strlen(v.u.s));
		break;
	case V_LIST: {
		if (from && !arena_owns(from, v.u.l))
			break;	/* made before the step: holds nothing of it */
		struct list *l = arena_alloc(e->a, sizeof *l);
		*l = *v.u.l;
		if (l->kind == L_OBJS) {
			l->objs = arena_alloc(e->a, ((size_t)l->n + 1) * sizeof *l->objs);
			for (uint32_t k = 0; k < l->n; k++)
				l->objs[k] = eval_keep(e, at, vidx(V_OBJ, v.u.l->objs[k]), from).u.idx;
		} else if (l->kind == L_VALUES) {
			l->v = arena_alloc(e->a, ((size_t)l->n + 1) * sizeof *l->v);
			for (uint32_t k = 0; k < l->n; k++)
				l->v[k] = eval_keep(e, at, v.u.l->v[k], from);
		}
		v.u.l = l;
		break;
	}
	case V_STRUCT: {
		if (from && !arena_owns(from, v.u.st))
			break;
		struct vstruct *st = arena_alloc(e->a, sizeof *st);
		*st = *v.u.st;
		if (from && arena_owns(from, st->names)) {
			const char **nm = arena_alloc(e->a, (size_t)st->n * sizeof *nm + 1);
			for (int k = 0; k < st->n; k++)
				nm[k] = arena_owns(from, st->names[k])
						? arena_strndup(e->a, st->names[k], strlen(st->names[k]))
						: st->names[k];
			st->names = nm;
		}
		st->vals = arena_alloc(e->a, (size_t)st->n * sizeof *st->vals + 1);
		for (int k = 0; k < st->n; k++)
			st->vals[k] = eval_keep(e, at, v.u.st->vals[k], from);
		v.u.st = st;
		break;
	}
	case V_LAMBDA: {
		if (from && !arena_owns(from, v.u.fn))
			break;
		struct closure *c = arena_alloc(e->a, sizeof *c);
		c->lam = v.u.fn->lam;
		c->env = frame_keep(e, at, v.u.fn->env, from);
		v.u.fn = c;
		break;
	}
	default:
		break;
	}
	return v;
}

static struct value ident(struct ev *e, struct frame *f, struct node *n)
{
	const char *name = n->name;
	if (n->ctx && n->ctx < 5 && e->in_trav) {
		/* THIS, REFERRER, ENTITY, ref_kind: resolved once for this node */
		switch (n->ctx) {
		case 1: return e->this_v;
		case 2: return e->referrer;
		case 3: if (e->entity) return (struct value){V_ENTITY, {.ent = e->entity}}; break;
		default: return (struct value){V_REFKIND, {.rk = e->rk}};
		}
	}
	struct value *v = frame_find(f, name);
	if (v)
		return *v;
	if ((v = eval_prop_find(e->cur, name)))
		return *v;
	const struct bi_row *bi = bi_of(n, BI_R_GLOBAL);
	enum bi_id id = bi ? bi->id : BI_NIDS;
	if (id >= BI_THIS && id <= BI_REF_KIND) {
		n->ctx = (uint8_t)(id - BI_THIS + 1);
		if (id == BI_ENTITY && e->entity)
			return (struct value){V_ENTITY, {.ent = e->entity}};
		if (!e->in_trav)
			eval_rt_error(e, n, "%s is only defined while a set type's instances are built "
				 "(in roots, membership, on_inclusion)", name);
		if (id == BI_THIS)
			return e->this_v;
		if (id == BI_REFERRER)
			return e->referrer;
		return (struct value){V_REFKIND, {.rk = e->rk}};
	}
	struct binding *b = eval_global_find(e->d, name);
	if (b)
		return b->v;
	if (id == BI_ALLOCATIONS)
		return eval_allocations(e, n);
	if (bi)
		return eval_builtin_list(e, n, id);
	int rk = bi_refkind_of(name);
	if (rk >= 0) {
		struct value r = {V_REFKIND, {.rk = (enum refkind)rk}};
		return r;
	}
	if (eval_extern_find(e->d, name))
		eval_rt_error(e, n, "'%s' is a native function: call it, %s(...)", name, name);
	const char *cands[64];
	int nc = bi_names(BI_R_GLOBAL, cands, 64);
	for (struct frame *g = f; g; g = g->up)
		for (int k = 0; k < g->n && nc < 64; k++)
			cands[nc++] = g->names[k];
	for (struct binding *gb = e->d->globals; gb && nc < 64; gb = gb->next)
		cands[nc++] = gb->name;
	char sug[200];
	hs_suggest(sug, sizeof sug, name, cands, nc, NULL);
	eval_rt_error(e, n, "unknown name '%s'%s", name, sug);
}

/* ---- lambdas ---- */

struct value eval_apply(struct ev *e, const struct node *at, struct value fn, int nargs,
			  const struct value *args)
{
	if (fn.k != V_LAMBDA)
		eval_rt_error(e, at, "expected a lambda [it | ...], not %s", value_kind_name(fn.k));
	struct node *lam = fn.u.fn->lam;
	if (e->calls >= 1000)
		eval_rt_error(e, at, "lambdas call each other more than 1000 deep (a lambda that "
			 "calls itself?)");
	/* Each call takes a few KiB of C stack (more under sanitizers): stop before it ends. */
	char here;
	if (e->stack_base > &here && (size_t)(e->stack_base - &here) > e->stack_budget)
		eval_rt_error(e, at, "lambdas call each other %d deep, too deep for the C stack (a "
			 "lambda that calls itself?)", e->calls);
	if (lam->nparams != nargs && !(lam->nparams == 0 && nargs == 1))
		eval_rt_error(e, lam, "this lambda takes %d parameter%s, but is called with %d",
			 lam->nparams, lam->nparams == 1 ? "" : "s", nargs);
	struct frame fr = {fn.u.fn->env, 0, 0, NULL, NULL};
	const char *names[8];
	struct value vals[8];
	if (lam->nparams <= 8) {
		fr.names = names;
		fr.vals = vals;
		fr.cap = 8;
	}
	for (int k = 0; k < lam->nparams; k++)
		frame_set(e, &fr, lam->params[k].name, args[k]);
	e->calls++;
	for (int k = 0; k < lam->nitems; k++) {
		struct node *s = lam->items[k];
		if (s->kind == N_ASSIGN) {
			struct value v = eval_expr(e, &fr, s->a);
			struct value *slot = frame_find(&fr, s->name);
			if (!slot)
				slot = eval_prop_find(e->cur, s->name);
			if (!slot) {
				struct binding *b = eval_global_find(e->d, s->name);
				if (b) {
					/* a session name outlives this snippet: copy */
					slot = &b->v;
					v = eval_value_persist(&e->d->keep, v);
				}
			}
			if (slot)
				*slot = v;
			else
				frame_set(e, &fr, s->name, v);
		} else {
			eval_expr(e, &fr, s);
		}
	}
	struct value r = lam->result ? eval_expr(e, &fr, lam->result) : VNULL;
	e->calls--;
	return r;
}

struct value eval_call1(struct ev *e, const struct node *at, struct value fn, struct value x)
{
	return eval_apply(e, at, fn, 1, &x);
}

/* ---- expressions ---- */

static struct value arith(struct ev *e, struct node *n, struct value a, struct value b)
{
	if (n->op == OP_ADD && (a.k == V_STR || b.k == V_STR)) {
		const char *x = a.k == V_STR ? a.u.s : dsl_value_text(e->d, a, e->a);
		const char *y = b.k == V_STR ? b.u.s : dsl_value_text(e->d, b, e->a);
		size_t lx = strlen(x), ly = strlen(y);
		char *s = arena_alloc(e->a, lx + ly + 1);
		memcpy(s, x, lx);
		memcpy(s + lx, y, ly);
		return vstr(s);
	}
	if (!is_num(&a) || !is_num(&b))
		eval_rt_error(e, n, "cannot %s %s and %s", n->op == OP_ADD ? "add" : n->op == OP_SUB ? "subtract"
			 : n->op == OP_MUL ? "multiply" : "divide", value_kind_name(a.k),
			 value_kind_name(b.k));
	if (a.k == V_INT && b.k == V_INT) {
		/* Java's long arithmetic: two's complement wrap-around */
		uint64_t x = (uint64_t)a.u.i, y = (uint64_t)b.u.i;
		switch (n->op) {
		case OP_ADD: return vint((int64_t)(x + y));
		case OP_SUB: return vint((int64_t)(x - y));
		case OP_MUL: return vint((int64_t)(x * y));
		default:
			if (b.u.i == 0)
				eval_rt_error(e, n->b, "division by zero");
			if (b.u.i == -1)
				return vint((int64_t)(0 - x));
			return vint(a.u.i / b.u.i);
		}
	}
	double x = num(&a), y = num(&b);
	switch (n->op) {
	case OP_ADD: return vfloat(x + y);
	case OP_SUB: return vfloat(x - y);
	case OP_MUL: return vfloat(x * y);
	default:
		if (y == 0)
			eval_rt_error(e, n->b, "division by zero");
		return vfloat(x / y);
	}
}

/* in_entity: does v (an object, class or loader) belong to instance ent? */
static bool in_entity(struct ev *e, struct value v, struct instance *ent)
{
	uint32_t obj;
	switch (v.k) {
	case V_OBJ: obj = v.u.idx; break;
	case V_LOADER: case V_THREAD:
		if (v.k == V_THREAD)
			obj = hv_thread_object(e->hv, v.u.idx);
		else
			obj = v.u.idx;
		if (obj == HV_NONE)
			return false;
		break;
	case V_CLASS: {
		struct hv_class c;
		hv_class_info(e->hv, v.u.idx, &c);
		obj = c.object;
		if (obj == HV_NONE)
			return false;
		break;
	}
	default: return false;
	}
	return e->owners && hv_owner(e->hv, obj) == ent->id;
}

/* ---- native functions (extern) ---- */

/*
 * native_arg: v as argument k (0-based) of fn, whose type is declared; an
 * object is its id where an int is wanted and a java.lang.String its text
 * where a string is. Strings stay in the snippet's arena, past the call.
 */
static struct ext_value native_arg(struct ev *e, const struct node *at, const struct ext_fn *fn,
				   int k, struct value v)
{
	enum ext_type want = ext_param(fn, k);
	struct ext_value x;
	memset(&x, 0, sizeof x);
	x.type = want;
	switch (want) {
	case EXT_INT:
		if (v.k == V_INT) {
			x.u.i = v.u.i;
			return x;
		}
		if (v.k == V_OBJ) {
			x.u.i = (int64_t)hv_id(e->hv, v.u.idx);
			eval_hv_check(e, at);
			return x;
		}
		break;
	case EXT_FLOAT:
		if (is_num(&v)) {
			x.u.f = num(&v);
			return x;
		}
		break;
	case EXT_BOOL:
		if (v.k == V_BOOL) {
			x.u.b = v.u.b;
			return x;
		}
		break;
	case EXT_STRING:
		if (v.k == V_STR) {
			x.u.s = v.u.s;
			return x;
		}
		if (v.k == V_OBJ && (x.u.s = eval_obj_text(e, v.u.idx)))
			return x;
		if (v.k == V_OBJ)
			eval_rt_error(e, at, "argument %d of %s is declared string but its value is an "
				 "object of class %s, not a java.lang.String", k + 1, ext_name(fn),
				 hv_class_name(e->hv, hv_class_of(e->hv, v.u.idx)));
		break;
	case EXT_VOID:
		break;
	}
	eval_rt_error(e, at, "argument %d of %s is declared %s but its value is %s", k + 1, ext_name(fn),
		 ext_type_name(want), value_kind_name(v.k));
}

/* extern_call: name(args), a native function declared with extern. */
static struct value extern_call(struct ev *e, struct frame *f, struct node *n)
{
	struct externdecl *x = eval_extern_find(e->d, n->name);
	if (!x) {
		const char *cands[64];
		int nc = 0;
		for (struct externdecl *c = e->d->externs; c && nc < 64; c = c->next)
			cands[nc++] = c->name;
		char sug[200];
		hs_suggest(sug, sizeof sug, n->name, cands, nc, NULL);
		if (sug[0])
			eval_rt_error(e, n, "no native function named '%s'%s", n->name, sug);
		eval_rt_error(e, n, "no native function named '%s' (declare one with extern \"LIB\" "
			 "%s(TYPES) : TYPE)", n->name, n->name);
	}
	const struct ext_fn *fn = x->fn;
	int np = ext_nparams(fn);
	if (n->nitems != np)
		eval_rt_error(e, n, "%s takes %d argument%s, but is called with %d", n->name, np,
			 np == 1 ? "" : "s", n->nitems);
	struct ext_value args[EXT_MAX_PARAMS];
	for (int k = 0; k < np; k++)
		args[k] = native_arg(e, n->items[k], fn, k, eval_expr(e, f, n->items[k]));
	struct ext_value r;
	struct hs_error xerr;
	if (ext_call(fn, args, np, &r, &xerr) != EXT_OK)
		eval_rt_error(e, n, "%s", xerr.msg);
	switch (r.type) {
	case EXT_INT: return vint(r.u.i);
	case EXT_FLOAT: return vfloat(r.u.f);
	case EXT_BOOL: return vbool(r.u.b);
	case EXT_STRING: {
		if (!r.u.s)
			return VNULL;
		const char *t = arena_strndup(e->a, r.u.s, strlen(r.u.s));
		free((char *)r.u.s);
		return vstr(t);
	}
	default: return VNULL;
	}
}

struct value eval_expr(struct ev *e, struct frame *f, struct node *n)
{
	switch (n->kind) {
	case N_INT: return vint(n->i);
	case N_FLOAT: return vfloat(n->f);
	case N_STR: return vstr(n->s);
	case N_BOOL: return vbool(n->i != 0);
	case N_NULL: return VNULL;
	case N_IDENT: return ident(e, f, n);
	case N_LIST: {
		struct builder b = {NULL, NULL, 0, 0, true};
		for (int k = 0; k < n->nitems; k++)
			eval_build_add(e, &b, eval_expr(e, f, n->items[k]));
		struct value l = eval_build_done(e, &b);
		return l;
	}
	case N_STRUCT: {
		struct typedecl *t;
		for (t = e->d->types; t && strcmp(t->name, n->name); t = t->next)
			;
		if (!t || !t->st->is_struct)
			eval_rt_error(e, n, "no struct type named '%s'; declare it with '%s : struct ... end'",
				 n->name, n->name);
		if (t->st->nfields != n->nitems)
			eval_rt_error(e, n, "struct %s has %d fields, but %d values are given", n->name,
				 t->st->nfields, n->nitems);
		struct vstruct *st = arena_alloc(e->a, sizeof *st);
		st->type = t->name;
		st->n = n->nitems;
		st->names = arena_alloc(e->a, (size_t)st->n * sizeof *st->names + 1);
		st->vals = arena_alloc(e->a, (size_t)st->n * sizeof *st->vals + 1);
		for (int k = 0; k < st->n; k++) {
			st->names[k] = t->st->fields[k].name;
			st->vals[k] = eval_expr(e, f, n->items[k]);
		}
		struct value v = {V_STRUCT, {.st = st}};
		return v;
	}
	case N_LAMBDA: {
		struct closure *c = arena_alloc(e->a, sizeof *c);
		c->lam = n;
		c->env = frame_copy(e->a, f);	/* frames live on the C stack */
		struct value v = {V_LAMBDA, {.fn = c}};
		return v;
	}
	case N_MEMBER: {
		struct value r = eval_expr(e, f, n->a);
		return eval_member(e, n, r, 0, NULL);
	}
	case N_CALL: {
		struct value r = eval_expr(e, f, n->a);
		struct value args[8];
		if (n->nitems > 8)
			eval_rt_error(e, n, "too many arguments");
		for (int k = 0; k < n->nitems; k++)
			args[k] = eval_expr(e, f, n->items[k]);
		return eval_member(e, n, r, n->nitems, args);
	}
	case N_NEG: {
		struct value v = eval_expr(e, f, n->a);
		if (v.k == V_INT)
			return vint((int64_t)(0 - (uint64_t)v.u.i));
		if (v.k == V_FLOAT)
			return vfloat(-v.u.f);
		eval_rt_error(e, n, "cannot negate %s", value_kind_name(v.k));
	}
	case N_NOT:
		return vbool(!eval_truth(e, n, eval_expr(e, f, n->a), "the operand of 'not'"));
	case N_BIN: {
		if (n->op == OP_AND)
			return vbool(eval_truth(e, n->a, eval_expr(e, f, n->a), "the left side of 'and'") &&
				     eval_truth(e, n->b, eval_expr(e, f, n->b), "the right side of 'and'"));
		if (n->op == OP_OR)
			return vbool(eval_truth(e, n->a, eval_expr(e, f, n->a), "the left side of 'or'") ||
				     eval_truth(e, n->b, eval_expr(e, f, n->b), "the right side of 'or'"));
		struct value a = eval_expr(e, f, n->a), b = eval_expr(e, f, n->b);
		switch (n->op) {
		case OP_EQ: return vbool(eval_equal(e, a, b));
		case OP_NE: return vbool(!eval_equal(e, a, b));
		case OP_LT: return vbool(eval_compare(e, n, a, b) < 0);
		case OP_LE: return vbool(eval_compare(e, n, a, b) <= 0);
		case OP_GT: return vbool(eval_compare(e, n, a, b) > 0);
		case OP_GE: return vbool(eval_compare(e, n, a, b) >= 0);
		default: return arith(e, n, a, b);
		}
	}
	case N_IS: {
		struct value v = eval_expr(e, f, n->a);
		const uint8_t *bits = eval_resolve_class(e, n, n->name);
		if (v.k == V_NULL)
			return vbool(false);
		if (v.k != V_OBJ)
			eval_rt_error(e, n->a, "'is' tests objects, not %s", value_kind_name(v.k));
		return vbool(has_bit(bits, hv_class_of(e->hv, v.u.idx)));
	}
	case N_IN_UNASSIGNED: {
		struct value v = eval_expr(e, f, n->a);
		if (!e->in_trav)
			eval_rt_error(e, n, "'in Unassigned' is only defined while a set type's instances "
				 "are built");
		if (v.k != V_OBJ)
			return vbool(v.k == V_NULL ? false : true);
		return vbool(hv_owner(e->hv, v.u.idx) == 0);
	}
	case N_IN: {
		struct value v = eval_expr(e, f, n->a), set = eval_expr(e, f, n->b);
		if (set.k == V_ENTITY)
			return vbool(in_entity(e, v, set.u.ent));
		if (set.k == V_LIST)
			return eval_list_contains(e, n, set.u.l, v);
		eval_rt_error(e, n->b, "'in' wants ENTITY, Unassigned or a list, not %s",
			 value_kind_name(set.k));
	}
	case N_EXTERN_CALL:
		return extern_call(e, f, n);
	case N_ASSIGN:
		eval_rt_error(e, n, "an assignment is only allowed inside a lambda");
	default:
		eval_rt_error(e, n, "cannot evaluate this");
	}
}
