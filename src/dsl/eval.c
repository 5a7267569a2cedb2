/*
 * eval.c - the query language's evaluator: expressions, lambdas, list
 * members, heap members, the list of allocations, and set type analyses
 * (docs/dsl.md).
 */
#include "eval.h"

#include "../base/fmt.h"
#include "../base/suggest.h"
#include "extern.h"
#include "plan.h"

#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

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
	const struct heap *h;
	struct dsl_engine eng;
	struct arena keep;	/* snippets that define names live here */
	struct binding *globals;
	struct settype *sets;
	struct typedecl *types;
	struct externdecl *externs;
	const char **names;	/* for completion */
	int nnames;
};

struct ev {
	struct dsl *d;
	const struct heap *h;
	struct arena *a;
	struct hs_error *err;
	jmp_buf fail;
	/* the traversal context: THIS, REFERRER, ENTITY, ref_kind */
	bool in_trav;
	struct value this_v, referrer;
	struct instance *entity;
	enum refkind rk;
	uint32_t *owner;	/* object -> instance id, 0 = Unassigned */
	struct analysis *an;	/* the running analysis, freed if it fails */
	const char *snippet;	/* the text being run */
	int calls;		/* lambda calls under way: bounded, recursion is an error */
	const char *stack_base;	/* the C stack where the snippet began (dsl_run) */
	size_t stack_budget;	/* bytes of C stack below stack_base lambdas may use */
	struct instance *cur;	/* whose properties names refer to */
	uint64_t steps;
	struct value allocs;	/* `allocations` once read in this snippet, else null */
};

static const struct value VNULL = {V_NULL, {0}};

const char *value_kind_name(enum vkind k)
{
	static const char *const names[] = {"null", "bool", "int", "float", "string", "object",
					    "class", "classloader", "thread", "list", "struct",
					    "lambda", "entity", "ref_kind"};
	return names[k];
}

const char *refkind_name(enum refkind k)
{
	static const char *const names[] = {"root", "field", "array", "static", "super",
					    "loader", "other", "none"};
	return names[k];
}

static void rt_error(struct ev *e, const struct node *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
static void rt_error(struct ev *e, const struct node *at, const char *fmt, ...)
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

static struct value vlist(struct ev *e, enum list_kind k, uint32_t n)
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

static uint32_t list_len(const struct list *l)
{
	return l->n;
}

static struct value list_get(const struct list *l, uint32_t k)
{
	if (l->kind == L_VALUES)
		return l->v[k];
	return vidx(V_OBJ, l->kind == L_OBJS ? l->objs[k] : k);
}

static void poll(struct ev *e, const struct node *at)
{
	if ((++e->steps & 0xffff) == 0 && hs_interrupted)
		rt_error(e, at, "interrupted");
}

/* ---- names ---- */

/*
 * need_heap: a runtime error at `at` unless the session has a heap (one
 * without, on an attached JVM before its snapshot, runs only snippets that
 * dsl_needs_heap passes; this catches the rest).
 */
static void need_heap(struct ev *e, const struct node *at, const char *what)
{
	if (!e->h)
		rt_error(e, at, "%s needs a heap, and this query runs without one (no dump is open "
			 "and no snapshot of the JVM was taken)", what);
}

/* ---- class names ---- */

/* resolve_class: the bit set of classes that are instanceof name (cached in the node). */
static const uint8_t *resolve_class(struct ev *e, struct node *at, const char *name)
{
	if (at->class_bits)
		return at->class_bits;
	need_heap(e, at, "'is'");
	const struct heap *h = e->h;
	uint32_t *m, n = heap_find_classes(h, name, &m);
	if (!n) {
		free(m);
		rt_error(e, at, "no class named '%s' in this heap", name);
	}
	for (uint32_t k = 1; k < n; k++)
		if (strcmp(h->classes[m[k]].name, h->classes[m[0]].name)) {
			char list[400];
			size_t len = 0;
			for (uint32_t j = 0; j < n && len + 80 < sizeof list; j++)
				if (!strstr(list, h->classes[m[j]].name) || !len)
					len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
								len ? ", " : "", h->classes[m[j]].name);
			free(m);
			rt_error(e, at, "'%s' is ambiguous: %s; write the full name", name, list);
		}
	/* in the session's arena: the node may outlive this snippet */
	uint8_t *bits = arena_alloc(&e->d->keep, (size_t)h->nclasses / 8 + 1);
	for (uint32_t c = 0; c < h->nclasses; c++)
		for (uint32_t k = 0; k < n; k++)
			if (heap_is_subclass(h, c, m[k])) {
				bits[c / 8] |= (uint8_t)(1u << (c % 8));
				break;
			}
	free(m);
	at->class_bits = bits;
	return bits;
}

static inline bool has_bit(const uint8_t *bits, uint32_t c)
{
	return bits[c / 8] & (1u << (c % 8));
}

/* ---- heap values ---- */

static struct value from_heap(struct ev *e, struct heap_value hv)
{
	switch (hv.type) {
	case HPROF_OBJECT: {
		if (!hv.v.id)
			return VNULL;
		uint32_t i = heap_index(e->h, hv.v.id);
		return i == HEAP_NONE ? VNULL : vidx(V_OBJ, i);
	}
	case HPROF_BOOLEAN: return vbool(hv.v.i != 0);
	case HPROF_CHAR: {
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
	case HPROF_FLOAT: case HPROF_DOUBLE: return vfloat(hv.v.d);
	case 0: return VNULL;
	default: return vint(hv.v.i);
	}
}

/* The text of a java.lang.String object, or NULL. */
static const char *obj_text(struct ev *e, uint32_t i)
{
	char *s = heap_string(e->h, i, 0);
	if (!s)
		return NULL;
	const char *r = arena_strndup(e->a, s, strlen(s));
	free(s);
	return r;
}

static struct value obj_list(struct ev *e, const uint32_t *v, uint32_t n)
{
	struct value l = vlist(e, L_OBJS, n);
	memcpy(l.u.l->objs, v, (size_t)n * sizeof *v);
	return l;
}

/* ---- equality and comparison ---- */

static bool is_num(const struct value *v)
{
	return v->k == V_INT || v->k == V_FLOAT;
}

static double num(const struct value *v)
{
	return v->k == V_INT ? (double)v->u.i : v->u.f;
}

static bool equal(struct ev *e, struct value a, struct value b)
{
	if (is_num(&a) && is_num(&b))
		return a.k == V_INT && b.k == V_INT ? a.u.i == b.u.i : num(&a) == num(&b);
	if (a.k == V_OBJ && b.k == V_STR) {
		struct value t = a;
		a = b;
		b = t;
	}
	if (a.k == V_STR && b.k == V_OBJ) {
		const char *s = obj_text(e, b.u.idx);
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

static int compare(struct ev *e, const struct node *at, struct value a, struct value b)
{
	if (is_num(&a) && is_num(&b)) {
		if (a.k == V_INT && b.k == V_INT)
			return a.u.i < b.u.i ? -1 : a.u.i > b.u.i;
		double x = num(&a), y = num(&b);
		return x < y ? -1 : x > y;
	}
	const char *sa = a.k == V_STR ? a.u.s : a.k == V_OBJ ? obj_text(e, a.u.idx) : NULL;
	const char *sb = b.k == V_STR ? b.u.s : b.k == V_OBJ ? obj_text(e, b.u.idx) : NULL;
	if (sa && sb && (a.k == V_STR || b.k == V_STR))
		return strcmp(sa, sb);
	rt_error(e, at, "cannot order %s and %s", value_kind_name(a.k), value_kind_name(b.k));
}

static bool truth(struct ev *e, const struct node *at, struct value v, const char *what)
{
	if (v.k != V_BOOL)
		rt_error(e, at, "%s must be a bool, not %s", what, value_kind_name(v.k));
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

static struct value *prop_find(struct instance *in, const char *name)
{
	if (!in)
		return NULL;
	for (int k = 0; k < in->nprops; k++)
		if (!strcmp(in->prop_names[k], name))
			return &in->props[k];
	return NULL;
}

static struct binding *global_find(struct dsl *d, const char *name)
{
	for (struct binding *b = d->globals; b; b = b->next)
		if (!strcmp(b->name, name))
			return b;
	return NULL;
}

static struct externdecl *extern_find(struct dsl *d, const char *name)
{
	for (struct externdecl *x = d->externs; x; x = x->next)
		if (!strcmp(x->name, name))
			return x;
	return NULL;
}

static struct value eval(struct ev *e, struct frame *f, struct node *n);
static struct value typed(struct ev *e, int line, int col, const char *name, const char *type,
			  struct value v);

/* value_persist: a deep copy of v in arena a (lists, structs, strings, scopes). */
static struct value value_persist(struct arena *a, struct value v)
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
				l->v[k] = value_persist(a, v.u.l->v[k]);
		}
		v.u.l = l;
		break;
	}
	case V_STRUCT: {
		struct vstruct *st = arena_alloc(a, sizeof *st);
		*st = *v.u.st;
		st->vals = arena_alloc(a, (size_t)st->n * sizeof *st->vals + 1);
		for (int k = 0; k < st->n; k++)
			st->vals[k] = value_persist(a, v.u.st->vals[k]);
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

/* The built-in lists that are the heap's, and the names of a set type's traversal. */
static const char *const heap_names[] = {"objects", "classes", "classloaders", "threads",
					 "THIS", "REFERRER", "ENTITY", "ref_kind"};

static struct value builtin_list(struct ev *e, const struct node *at, const char *name)
{
	char what[32];
	snprintf(what, sizeof what, "'%s'", name);
	need_heap(e, at, what);
	const struct heap *h = e->h;
	if (!strcmp(name, "objects"))
		return vlist(e, L_ALL, h->n);
	if (!strcmp(name, "classes")) {
		struct value l = vlist(e, L_VALUES, h->nclasses);
		for (uint32_t c = 0; c < h->nclasses; c++)
			l.u.l->v[c] = vidx(V_CLASS, c);
		return l;
	}
	if (!strcmp(name, "threads")) {
		struct value l = vlist(e, L_VALUES, h->nthreads);
		for (uint32_t t = 0; t < h->nthreads; t++)
			l.u.l->v[t] = vidx(V_THREAD, t);
		return l;
	}
	/* classloaders: bootstrap first, then each loader object once */
	uint8_t *seen = arena_alloc(e->a, (size_t)h->n / 8 + 1);
	uint32_t count = 1;
	for (uint32_t c = 0; c < h->nclasses; c++) {
		uint32_t ld = h->classes[c].loader;
		if (ld != HEAP_NONE && !(seen[ld / 8] & (1u << (ld % 8)))) {
			seen[ld / 8] |= (uint8_t)(1u << (ld % 8));
			count++;
		}
	}
	struct value l = vlist(e, L_VALUES, count);
	l.u.l->v[0] = vidx(V_LOADER, HEAP_NONE);
	uint32_t k = 1;
	for (uint32_t i = 0; i < h->n && k < count; i++)
		if (seen[i / 8] & (1u << (i % 8)))
			l.u.l->v[k++] = vidx(V_LOADER, i);
	return l;
}

/* ---- allocations (src/alloc/alloc.h) ---- */

/* An allocation's members, in the order tables show them (docs/dsl.md). */
static const char *const alloc_members[] = {
	"class", "site", "method", "line", "account", "stack", "objects", "bytes",
	"live_objects", "live_bytes", "elements"};
#define ALLOC_MEMBERS ((int)(sizeof alloc_members / sizeof *alloc_members))

/*
 * What the elements share, made once per recording in the snippet's
 * arena: the text of each frame (node) and the stack list of each
 * allocating frame, and the class and account names.
 */
struct alloc_build {
	struct ev *e;
	const struct alc_rec *r;
	const char **frame;	/* [nnodes] alc_frame_text, NULL until needed */
	struct value *stack;	/* [nnodes] the stack from the node, V_NULL until needed */
	const char **cls;	/* [nclasses] */
	const char **account;	/* [naccounts] */
};

static const char *arena_str(struct ev *e, const char *s)
{
	return arena_strndup(e->a, s, strlen(s));
}

static const char *frame_text(struct alloc_build *b, uint32_t node)
{
	if (b->frame[node])
		return b->frame[node];
	char buf[1024];
	alc_frame_text(b->r, node, buf, sizeof buf);
	return b->frame[node] = arena_str(b->e, buf);
}

/* node_stack: the frames from node to its outermost kept caller, innermost first. */
static struct value node_stack(struct alloc_build *b, uint32_t node)
{
	if (b->stack[node].k == V_LIST)
		return b->stack[node];
	const struct alc_rec *r = b->r;
	uint32_t depth = 0;
	/* a recording's parents lead to the root; bounded all the same */
	for (uint32_t v = node; v != ALC_NONE && v < r->nnodes && depth < r->nnodes; depth++)
		v = r->nodes[v].parent;
	struct value l = vlist(b->e, L_VALUES, depth);
	uint32_t v = node;
	for (uint32_t k = 0; k < depth; k++) {
		l.u.l->v[k] = vstr(frame_text(b, v));
		v = r->nodes[v].parent;
	}
	return b->stack[node] = l;
}

/* The name at index i of names[0..n), copied once into *memo; "?" out of range. */
static const char *memo_name(struct ev *e, const char **memo, char *const *names, uint32_t n,
			     uint32_t i)
{
	if (i >= n || !names[i])
		return "?";
	if (!memo[i])
		memo[i] = arena_str(e, names[i]);
	return memo[i];
}

/*
 * alloc_list: the recording as a list of structs "allocation", one per
 * key in key order. Counters are ints in exact mode and floats (the
 * estimates) in sampled mode. Everything is copied: the list outlives r.
 * No runtime error can happen here, so the caller frees r afterwards.
 */
static struct value alloc_list(struct ev *e, const struct alc_rec *r)
{
	struct alloc_build b = {e, r, NULL, NULL, NULL, NULL};
	b.frame = arena_alloc(e->a, ((size_t)r->nnodes + 1) * sizeof *b.frame);
	b.stack = arena_alloc(e->a, ((size_t)r->nnodes + 1) * sizeof *b.stack);
	b.cls = arena_alloc(e->a, ((size_t)r->nclasses + 1) * sizeof *b.cls);
	b.account = arena_alloc(e->a, ((size_t)r->naccounts + 1) * sizeof *b.account);
	bool exact = r->st.exact;
	struct value l = vlist(e, L_VALUES, r->nkeys);
	struct value nostack = vlist(e, L_VALUES, 0);
	for (uint32_t k = 0; k < r->nkeys; k++) {
		const struct alc_key *key = &r->keys[k];
		struct vstruct *st = arena_alloc(e->a, sizeof *st);
		st->type = "allocation";
		st->n = ALLOC_MEMBERS;
		st->names = (const char **)alloc_members;
		st->vals = arena_alloc(e->a, ALLOC_MEMBERS * sizeof *st->vals);
		struct value *v = st->vals;
		bool framed = key->node != ALC_NONE && key->node < r->nnodes;
		const struct alc_node *nd = framed ? &r->nodes[key->node] : NULL;
		v[0] = vstr(memo_name(e, b.cls, r->classes, r->nclasses, key->cls));
		if (framed) {
			v[1] = vstr(frame_text(&b, key->node));
			const struct alc_method *m = nd->method < r->nmethods ? &r->methods[nd->method]
									      : NULL;
			if (m) {
				const char *c = m->cls ? m->cls : "?", *nm = m->name ? m->name : "?";
				size_t lc = strlen(c), ln = strlen(nm);
				char *t = arena_alloc(e->a, lc + ln + 2);
				memcpy(t, c, lc);
				t[lc] = '.';
				memcpy(t + lc + 1, nm, ln);
				v[2] = vstr(t);
			} else {
				v[2] = vstr("?");
			}
			v[3] = vint(nd->line >= 0 ? nd->line : -1);
			v[5] = node_stack(&b, key->node);
		} else {
			char buf[256];
			alc_frame_text(r, ALC_NONE, buf, sizeof buf);
			v[1] = vstr(arena_str(e, buf));
			v[2] = VNULL;
			v[3] = vint(-1);
			v[5] = nostack;
		}
		v[4] = vstr(memo_name(e, b.account, r->accounts, r->naccounts, key->account));
		const double counters[] = {key->objs, key->bytes, key->live_objs, key->live_bytes,
					   key->elems};
		for (int c = 0; c < 5; c++)
			v[6 + c] = exact ? vint((int64_t)llround(counters[c])) : vfloat(counters[c]);
		l.u.l->v[k].k = V_STRUCT;
		l.u.l->v[k].u.st = st;
	}
	return l;
}

/*
 * allocations: the list `allocations`, read from the engine once per
 * snippet (a read makes the JVM collect garbage: the live counts are then
 * exact), the record freed as soon as it is copied.
 */
static struct value allocations(struct ev *e, const struct node *at)
{
	if (e->allocs.k == V_LIST)
		return e->allocs;
	struct hs_error aerr;
	hs_error_clear(&aerr);
	const struct dsl_engine *eng = &e->d->eng;
	struct alc_rec *r = eng->allocations ? eng->allocations(eng->ctx, &aerr) : NULL;
	if (!r)
		rt_error(e, at, "allocations need an attached JVM with a recording (:alloc start)%s%s",
			 aerr.msg[0] ? ": " : "", aerr.msg);
	e->allocs = alloc_list(e, r);
	alc_free(r);
	return e->allocs;
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
	if ((v = prop_find(e->cur, name)))
		return *v;
	if (!strcmp(name, "THIS") || !strcmp(name, "REFERRER") || !strcmp(name, "ENTITY") ||
	    !strcmp(name, "ref_kind")) {
		n->ctx = name[0] == 'T' ? 1 : name[0] == 'R' ? 2 : name[0] == 'E' ? 3 : 4;
		if (!strcmp(name, "ENTITY") && e->entity) {
			struct value r = {V_ENTITY, {.ent = e->entity}};
			return r;
		}
		if (!e->in_trav)
			rt_error(e, n, "%s is only defined while a set type's instances are built "
				 "(in roots, membership, on_inclusion)", name);
		if (!strcmp(name, "THIS"))
			return e->this_v;
		if (!strcmp(name, "REFERRER"))
			return e->referrer;
		struct value r = {V_REFKIND, {.rk = e->rk}};
		return r;
	}
	struct binding *b = global_find(e->d, name);
	if (b)
		return b->v;
	if (!strcmp(name, "objects") || !strcmp(name, "classes") || !strcmp(name, "threads") ||
	    !strcmp(name, "classloaders"))
		return builtin_list(e, n, name);
	if (!strcmp(name, "allocations"))
		return allocations(e, n);
	for (int k = 0; k <= RK_NONE; k++)
		if (!strcmp(name, refkind_name((enum refkind)k))) {
			struct value r = {V_REFKIND, {.rk = (enum refkind)k}};
			return r;
		}
	if (extern_find(e->d, name))
		rt_error(e, n, "'%s' is a native function: call it, %s(...)", name, name);
	const char *cands[64];
	int nc = 0;
	static const char *const fixed[] = {"objects", "classes", "classloaders", "threads",
					    "allocations", "THIS", "REFERRER", "ENTITY",
					    "ref_kind"};
	for (size_t k = 0; k < sizeof fixed / sizeof *fixed; k++)
		cands[nc++] = fixed[k];
	for (struct frame *g = f; g; g = g->up)
		for (int k = 0; k < g->n && nc < 64; k++)
			cands[nc++] = g->names[k];
	for (struct binding *gb = e->d->globals; gb && nc < 64; gb = gb->next)
		cands[nc++] = gb->name;
	char sug[200];
	hs_suggest(sug, sizeof sug, name, cands, nc, NULL);
	rt_error(e, n, "unknown name '%s'%s", name, sug);
}

/* ---- lambdas ---- */

/*
 * stack_budget: the C stack a snippet's lambda calls may take: the soft
 * limit less 1 MiB for the shell, Lua and libraries above and below (8 MiB
 * when unlimited or unknown), at least 256 KiB.
 */
static size_t stack_budget(void)
{
	struct rlimit rl;
	size_t lim = 8u << 20;
	if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < lim)
		lim = (size_t)rl.rlim_cur;
	return lim > (1280u << 10) ? lim - (1u << 20) : 256u << 10;
}

static struct value apply(struct ev *e, const struct node *at, struct value fn, int nargs,
			  const struct value *args)
{
	if (fn.k != V_LAMBDA)
		rt_error(e, at, "expected a lambda [it | ...], not %s", value_kind_name(fn.k));
	struct node *lam = fn.u.fn->lam;
	if (e->calls >= 1000)
		rt_error(e, at, "lambdas call each other more than 1000 deep (a lambda that "
			 "calls itself?)");
	/* Each call takes a few KiB of C stack (more under sanitizers): stop before it ends. */
	char here;
	if (e->stack_base > &here && (size_t)(e->stack_base - &here) > e->stack_budget)
		rt_error(e, at, "lambdas call each other %d deep, too deep for the C stack (a "
			 "lambda that calls itself?)", e->calls);
	if (lam->nparams != nargs && !(lam->nparams == 0 && nargs == 1))
		rt_error(e, lam, "this lambda takes %d parameter%s, but is called with %d",
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
			struct value v = eval(e, &fr, s->a);
			struct value *slot = frame_find(&fr, s->name);
			if (!slot)
				slot = prop_find(e->cur, s->name);
			if (!slot) {
				struct binding *b = global_find(e->d, s->name);
				if (b) {
					/* a session name outlives this snippet: copy */
					slot = &b->v;
					v = value_persist(&e->d->keep, v);
				}
			}
			if (slot)
				*slot = v;
			else
				frame_set(e, &fr, s->name, v);
		} else {
			eval(e, &fr, s);
		}
	}
	struct value r = lam->result ? eval(e, &fr, lam->result) : VNULL;
	e->calls--;
	return r;
}

static struct value call1(struct ev *e, const struct node *at, struct value fn, struct value x)
{
	return apply(e, at, fn, 1, &x);
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
			return resolve_class(e, c, c->name);
		if (r->kind == N_BIN && r->op == OP_AND && r->b->kind == N_IS &&
		    r->b->a->kind == N_IDENT && !strcmp(r->b->a->name, p))
			return resolve_class(e, r->b, r->b->name);
		return NULL;
	}
	return NULL;
}

/* The objects a list visits: all of it, or, for L_ALL with a class filter, fewer. */
struct cursor {
	const struct list *l;
	uint32_t k;
	uint32_t *objs;		/* restricted object set (ascending) */
	uint32_t n;
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static void cursor_init(struct ev *e, struct cursor *c, const struct list *l, struct value fn)
{
	memset(c, 0, sizeof *c);
	c->l = l;
	c->n = l->n;
	const uint8_t *bits;
	if (l->kind != L_ALL || !(bits = class_filter(e, fn)))
		return;
	const struct heap *h = e->h;
	uint32_t total = 0;
	for (uint32_t k = 0; k < h->nclasses; k++)
		if (has_bit(bits, k))
			total += (uint32_t)h->classes[k].count;
	c->objs = arena_alloc(e->a, ((size_t)total + 1) * sizeof *c->objs);
	for (uint32_t k = 0; k < h->nclasses; k++)
		if (has_bit(bits, k)) {
			uint32_t cnt;
			const uint32_t *inst = heap_instances(h, k, &cnt);
			memcpy(c->objs + (c->k), inst, (size_t)cnt * sizeof *inst);
			c->k += cnt;
		}
	qsort(c->objs, total, sizeof *c->objs, cmp_u32);
	c->n = total;
	c->k = 0;
}

static bool cursor_next(struct cursor *c, struct value *v)
{
	if (c->k >= c->n)
		return false;
	*v = c->objs ? vidx(V_OBJ, c->objs[c->k]) : list_get(c->l, c->k);
	c->k++;
	return true;
}

/* A list builder that keeps object lists compact. */
struct builder {
	struct value *v;
	uint32_t *objs;
	uint32_t n, cap;
	bool all_objs;
};

static void build_add(struct ev *e, struct builder *b, struct value v)
{
	if (b->n == b->cap) {
		uint32_t cap = b->cap ? b->cap * 2 : 16;
		struct value *nv = arena_alloc(e->a, (size_t)cap * sizeof *nv);
		if (b->n)
			memcpy(nv, b->v, (size_t)b->n * sizeof *nv);
		b->v = nv;
		b->cap = cap;
	}
	if (v.k != V_OBJ)
		b->all_objs = false;
	b->v[b->n++] = v;
}

static struct value build_done(struct ev *e, struct builder *b)
{
	if (b->all_objs && b->n) {
		struct value l = vlist(e, L_OBJS, b->n);
		for (uint32_t k = 0; k < b->n; k++)
			l.u.l->objs[k] = b->v[k].u.idx;
		return l;
	}
	struct value l = vlist(e, L_VALUES, 0);
	l.u.l->v = b->v;
	l.u.l->n = b->n;
	return l;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* key_hash: a hash that agrees with equal() (Strings hash by their text). */
static uint64_t key_hash(struct ev *e, struct value v)
{
	switch (v.k) {
	case V_INT: return (uint64_t)v.u.i * 0x9E3779B97F4A7C15ULL;
	case V_FLOAT:
		/* equal() compares floats and ints by value: hash whole floats as ints
		 * (those in int64's range: a cast of any other is undefined) */
		if (v.u.f >= -9223372036854775808.0 && v.u.f < 9223372036854775808.0 &&
		    v.u.f == (double)(int64_t)v.u.f)
			return (uint64_t)(int64_t)v.u.f * 0x9E3779B97F4A7C15ULL;
		return 7;
	case V_STR: return str_hash(v.u.s);
	case V_OBJ: {
		const char *t = obj_text(e, v.u.idx);
		return t ? str_hash(t) : (uint64_t)v.u.idx * 0x9E3779B97F4A7C15ULL;
	}
	case V_BOOL: return v.u.b ? 1 : 2;
	case V_CLASS: case V_LOADER: case V_THREAD: return (uint64_t)v.u.idx * 31 + v.k;
	case V_REFKIND: return (uint64_t)v.u.rk + 11;
	default: return 3;
	}
}

struct sort_item {
	struct value key, item;
};

static struct ev *sort_ev;
static const struct node *sort_at;

static int by_key(const void *a, const void *b)
{
	const struct sort_item *x = a, *y = b;
	return compare(sort_ev, sort_at, x->key, y->key);
}

static struct value list_member(struct ev *e, struct node *n, struct value recv, int nargs,
				struct value *args)
{
	const char *m = n->name;
	struct list *l = recv.u.l;
	struct value fn = nargs ? args[0] : VNULL, x;
	struct cursor c;
	bool need_fn = !strcmp(m, "filter") || !strcmp(m, "map") || !strcmp(m, "exists") ||
		       !strcmp(m, "foreach") || !strcmp(m, "sort_by") || !strcmp(m, "group_by");
	if (need_fn && nargs != 1)
		rt_error(e, n, "%s takes one lambda, e.g. %s([it | ...])", m, m);
	if (!strcmp(m, "filter") || !strcmp(m, "exists") || !strcmp(m, "first")) {
		bool first = !strcmp(m, "first"), exists = !strcmp(m, "exists");
		if (first && !nargs)
			return l->n ? list_get(l, 0) : VNULL;
		cursor_init(e, &c, l, fn);
		struct builder b = {NULL, NULL, 0, 0, true};
		while (cursor_next(&c, &x)) {
			poll(e, n);
			if (truth(e, n, call1(e, n, fn, x), "the filter's result")) {
				if (exists)
					return vbool(true);
				if (first)
					return x;
				build_add(e, &b, x);
			}
		}
		if (exists)
			return vbool(false);
		if (first)
			return VNULL;
		return build_done(e, &b);
	}
	if (!strcmp(m, "map")) {
		struct builder b = {NULL, NULL, 0, 0, true};
		cursor_init(e, &c, l, VNULL);
		while (cursor_next(&c, &x)) {
			poll(e, n);
			build_add(e, &b, call1(e, n, fn, x));
		}
		return build_done(e, &b);
	}
	if (!strcmp(m, "foreach")) {
		cursor_init(e, &c, l, VNULL);
		while (cursor_next(&c, &x)) {
			poll(e, n);
			call1(e, n, fn, x);
		}
		return VNULL;
	}
	if (!strcmp(m, "count") || !strcmp(m, "length") || !strcmp(m, "size")) {
		if (!nargs)
			return vint(list_len(l));
		int64_t k = 0;
		cursor_init(e, &c, l, fn);
		while (cursor_next(&c, &x)) {
			poll(e, n);
			k += truth(e, n, call1(e, n, fn, x), "the count's condition");
		}
		return vint(k);
	}
	if (!strcmp(m, "sum") || !strcmp(m, "min") || !strcmp(m, "max")) {
		int which = m[1] == 'u' ? 0 : m[1] == 'i' ? 1 : 2;
		struct value acc = which ? VNULL : vint(0);
		cursor_init(e, &c, l, VNULL);
		while (cursor_next(&c, &x)) {
			poll(e, n);
			struct value y = nargs ? call1(e, n, fn, x) : x;
			if (which == 0) {
				if (!is_num(&y))
					rt_error(e, n, "sum adds numbers, not %s", value_kind_name(y.k));
				acc = acc.k == V_INT && y.k == V_INT
					      ? vint((int64_t)((uint64_t)acc.u.i + (uint64_t)y.u.i))
								       : vfloat(num(&acc) + num(&y));
			} else if (acc.k == V_NULL || (which == 1 ? compare(e, n, y, acc) < 0
								  : compare(e, n, y, acc) > 0)) {
				acc = y;
			}
		}
		return acc;
	}
	if (!strcmp(m, "sort_by") || !strcmp(m, "top")) {
		bool top = m[0] == 't';
		int64_t limit = -1;
		if (top) {
			if (nargs != 2 || args[0].k != V_INT)
				rt_error(e, n, "top takes a count and a lambda: top(10, [it | it.size])");
			limit = args[0].u.i;
			fn = args[1];
		}
		uint32_t len = list_len(l);
		struct sort_item *items = arena_alloc(e->a, ((size_t)len + 1) * sizeof *items);
		cursor_init(e, &c, l, VNULL);
		uint32_t k = 0;
		while (cursor_next(&c, &x)) {
			poll(e, n);
			items[k].item = x;
			items[k++].key = call1(e, n, fn, x);
		}
		sort_ev = e;
		sort_at = n;
		qsort(items, k, sizeof *items, by_key);
		struct builder b = {NULL, NULL, 0, 0, true};
		if (top)
			for (uint32_t j = 0; j < k && (int64_t)j < limit; j++)
				build_add(e, &b, items[k - 1 - j].item);
		else
			for (uint32_t j = 0; j < k; j++)
				build_add(e, &b, items[j].item);
		return build_done(e, &b);
	}
	if (!strcmp(m, "group_by")) {
		/* [{key, count, items}] in order of first appearance; keys hashed */
		struct value *keys = NULL;
		struct builder *groups = NULL;
		uint32_t ng = 0, cap = 0, hcap = 64;
		/* group + 1, 0 empty; in the arena, so that a failing lambda leaks nothing */
		uint32_t *slots = arena_alloc(e->a, hcap * sizeof *slots);
		cursor_init(e, &c, l, VNULL);
		while (cursor_next(&c, &x)) {
			poll(e, n);
			struct value key = call1(e, n, fn, x);
			uint64_t hv = key_hash(e, key);
			uint32_t g = UINT32_MAX, s = (uint32_t)hv & (hcap - 1);
			while (slots[s]) {
				if (equal(e, keys[slots[s] - 1], key)) {
					g = slots[s] - 1;
					break;
				}
				s = (s + 1) & (hcap - 1);
			}
			if (g == UINT32_MAX) {
				if (ng == cap) {
					cap = cap ? cap * 2 : 16;
					struct value *nk = arena_alloc(e->a, cap * sizeof *nk);
					struct builder *nb = arena_alloc(e->a, cap * sizeof *nb);
					if (ng) {
						memcpy(nk, keys, ng * sizeof *nk);
						memcpy(nb, groups, ng * sizeof *nb);
					}
					keys = nk;
					groups = nb;
				}
				g = ng++;
				keys[g] = key;
				groups[g] = (struct builder){NULL, NULL, 0, 0, true};
				slots[s] = g + 1;
				if (ng * 2 > hcap) {	/* grow and rehash */
					hcap *= 2;
					slots = arena_alloc(e->a, hcap * sizeof *slots);
					for (uint32_t k = 0; k < ng; k++) {
						uint32_t t = (uint32_t)key_hash(e, keys[k]) & (hcap - 1);
						while (slots[t])
							t = (t + 1) & (hcap - 1);
						slots[t] = k + 1;
					}
				}
			}
			build_add(e, &groups[g], x);
		}
		struct value out = vlist(e, L_VALUES, ng);
		static const char *const names[] = {"key", "count", "items"};
		for (uint32_t g = 0; g < ng; g++) {
			struct vstruct *st = arena_alloc(e->a, sizeof *st);
			st->n = 3;
			st->names = (const char **)names;
			st->vals = arena_alloc(e->a, 3 * sizeof *st->vals);
			st->vals[0] = keys[g];
			st->vals[1] = vint(groups[g].n);
			st->vals[2] = build_done(e, &groups[g]);
			out.u.l->v[g].k = V_STRUCT;
			out.u.l->v[g].u.st = st;
		}
		return out;
	}
	if (!strcmp(m, "contains")) {
		if (nargs != 1)
			rt_error(e, n, "contains takes one value");
		for (uint32_t k = 0; k < l->n; k++)
			if (equal(e, list_get(l, k), args[0]))
				return vbool(true);
		return vbool(false);
	}
	static const char *const members[] = {"filter", "map", "exists", "foreach", "count",
					      "sum", "min", "max", "sort_by", "top", "first",
					      "group_by", "contains", "length"};
	char sug[200];
	hs_suggest(sug, sizeof sug, m, members, (int)(sizeof members / sizeof *members), NULL);
	rt_error(e, n, "a list has no member '%s'%s (members: filter, map, exists, foreach, "
		 "count, sum, min, max, sort_by, top, first, group_by, contains, length)", m, sug);
}

/* ---- heap members ---- */

struct field_names {
	const char *v[256];
	int n;
};

static void collect_field(void *ctx, uint32_t decl, const struct heap_field *f,
			  struct heap_value v)
{
	struct field_names *fn = ctx;
	(void)decl;
	(void)v;
	if (fn->n < 256)
		fn->v[fn->n++] = f->name;
}

static struct value thread_roots(struct ev *e, uint32_t t)
{
	const struct heap *h = e->h;
	struct builder b = {NULL, NULL, 0, 0, true};
	for (uint32_t r = 0; r < h->nroots; r++)
		if (h->roots[r].thread == t && h->roots[r].kind != HPROF_GC_ROOT_THREAD_OBJ)
			build_add(e, &b, vidx(V_OBJ, h->roots[r].obj));
	return build_done(e, &b);
}

static struct value object_member(struct ev *e, struct node *n, uint32_t i)
{
	const struct heap *h = e->h;
	const char *m = n->name;
	/* A Java field shadows a built-in; where it is, is cached per class. */
	uint32_t c = h->cls[i];
	if (n->cache_cls1 != c + 1) {
		uint32_t off = 0;
		uint8_t type = 0;
		if (heap_kind(h, i) != HEAP_INSTANCE || !heap_field_locate(h, c, m, &off, &type))
			type = 0;
		n->cache_cls1 = c + 1;
		n->cache_off = off;
		n->cache_type = type;
	}
	if (n->cache_type) {
		struct heap_value hv = heap_field_at(h, i, n->cache_off, n->cache_type);
		if (hv.type)
			return from_heap(e, hv);
	}
	if (!strcmp(m, "class")) {
		if (heap_kind(h, i) == HEAP_CLASS)
			return vidx(V_CLASS, h->cls[i]);
		return vidx(V_CLASS, h->cls[i]);
	}
	if (!strcmp(m, "size") || !strcmp(m, "shallow_size"))
		return vint((int64_t)heap_shallow(h, i));
	if (!strcmp(m, "id") || !strcmp(m, "object_id"))
		return vint((int64_t)heap_id(h, i));
	if (!strcmp(m, "retained") || !strcmp(m, "retained_size")) {
		struct dom_tree *t = e->d->eng.dom ? e->d->eng.dom(e->d->eng.ctx) : NULL;
		if (!t)
			rt_error(e, n, "retained sizes are not available (the dominator tree could "
				 "not be computed)");
		return vint((int64_t)t->retained[i]);
	}
	if (!strcmp(m, "dynamic_size") || !strcmp(m, "dynamic_size_est")) {
		bool est = m[12] == '_';
		struct dyn *dy = e->d->eng.dyn ? e->d->eng.dyn(e->d->eng.ctx, est) : NULL;
		if (!dy)
			rt_error(e, n, "dynamic sizes are not available (the engine could not be "
				 "built)");
		uint32_t sc = dyn_comp(dy, i);
		if (est && !(dy->flags[sc] & DYN_EXACT))
			return vint((int64_t)((double)dy->est[sc] + 0.5));
		uint64_t bytes;
		if (dyn_exact(dy, sc, &bytes) != HS_OK)
			rt_error(e, n, "interrupted");
		return vint((int64_t)bytes);
	}
	if (!strcmp(m, "refs")) {
		uint32_t cnt;
		const uint32_t *out = heap_out(h, i, &cnt);
		return obj_list(e, out, cnt);
	}
	if (!strcmp(m, "referrers")) {
		uint32_t cnt;
		const uint32_t *in = heap_in(h, i, &cnt);
		return obj_list(e, in, cnt);
	}
	enum heap_kind k = heap_kind(h, i);
	if (!strcmp(m, "length") && (k == HEAP_OBJ_ARRAY || k == HEAP_PRIM_ARRAY))
		return vint(heap_array_length(h, i));
	if (!strcmp(m, "elements") && (k == HEAP_OBJ_ARRAY || k == HEAP_PRIM_ARRAY)) {
		uint32_t len = heap_array_length(h, i);
		struct builder b = {NULL, NULL, 0, 0, true};
		for (uint32_t j = 0; j < len; j++)
			build_add(e, &b, from_heap(e, heap_array_elem(h, i, j)));
		return build_done(e, &b);
	}
	if (!strcmp(m, "text") || !strcmp(m, "toString")) {
		const char *s = obj_text(e, i);
		if (s)
			return vstr(s);
	}
	if (!strcmp(m, "kind"))
		return vstr(k == HEAP_INSTANCE ? "instance" : k == HEAP_OBJ_ARRAY ? "object array"
			    : k == HEAP_PRIM_ARRAY ? "primitive array" : "class");
	if (!strcmp(m, "heap")) {	/* Android: app, zygote, image; null elsewhere */
		const char *hn = heap_android_heap(h, i);
		return hn ? vstr(hn) : VNULL;
	}
	struct field_names fn = {{0}, 0};
	heap_fields_each(h, i, collect_field, &fn);
	static const char *const builtins[] = {"class", "size", "id", "retained", "dynamic_size",
					       "dynamic_size_est", "refs", "referrers", "length",
					       "elements", "text", "kind", "heap"};
	for (size_t b = 0; b < sizeof builtins / sizeof *builtins && fn.n < 256; b++)
		fn.v[fn.n++] = builtins[b];
	char sug[200];
	hs_suggest(sug, sizeof sug, m, fn.v, fn.n, NULL);
	rt_error(e, n, "class %s has no field '%s'%s", heap_class_name(h, i), m, sug);
}

static struct value class_member(struct ev *e, struct node *n, uint32_t c)
{
	const struct heap *h = e->h;
	const struct heap_class *k = &h->classes[c];
	const char *m = n->name;
	if (!strcmp(m, "name"))
		return vstr(k->name);
	if (!strcmp(m, "classloader") || !strcmp(m, "loader"))
		return vidx(V_LOADER, k->loader);
	if (!strcmp(m, "super"))
		return k->super == HEAP_NONE ? VNULL : vidx(V_CLASS, k->super);
	if (!strcmp(m, "instances")) {
		uint32_t cnt;
		const uint32_t *inst = heap_instances(h, c, &cnt);
		return obj_list(e, inst, cnt);
	}
	if (!strcmp(m, "count"))
		return vint((int64_t)k->count);
	if (!strcmp(m, "object"))
		return k->obj == HEAP_NONE ? VNULL : vidx(V_OBJ, k->obj);
	if (!strcmp(m, "id"))
		return vint((int64_t)k->id);
	if (!strcmp(m, "instance_size"))
		return vint(k->inst_size);
	if (!strcmp(m, "shallow"))
		return vint((int64_t)k->shallow);
	struct heap_value hv;
	if (heap_static(h, c, m, &hv))
		return from_heap(e, hv);
	const char *cands[300];
	int nc = 0;
	static const char *const builtins[] = {"name", "classloader", "super", "instances",
					       "count", "object", "id", "instance_size", "shallow"};
	for (size_t b = 0; b < sizeof builtins / sizeof *builtins; b++)
		cands[nc++] = builtins[b];
	for (unsigned s = 0; s < k->nstatics && nc < 300; s++)
		cands[nc++] = k->statics[s].name;
	char sug[200];
	hs_suggest(sug, sizeof sug, m, cands, nc, NULL);
	rt_error(e, n, "class %s has no static or member '%s'%s", k->name, m, sug);
}

static struct value loader_member(struct ev *e, struct node *n, uint32_t ld)
{
	const struct heap *h = e->h;
	const char *m = n->name;
	if (!strcmp(m, "id"))
		return vint(ld == HEAP_NONE ? 0 : (int64_t)heap_id(h, ld));
	if (!strcmp(m, "object"))
		return ld == HEAP_NONE ? VNULL : vidx(V_OBJ, ld);
	if (!strcmp(m, "name")) {
		if (ld == HEAP_NONE)
			return vstr("<bootstrap>");
		struct heap_value hv;
		if (heap_field(h, ld, "name", &hv) && hv.type == HPROF_OBJECT && hv.v.id) {
			uint32_t s = heap_index(h, hv.v.id);
			const char *t = s != HEAP_NONE ? obj_text(e, s) : NULL;
			if (t)
				return vstr(t);
		}
		return vstr(heap_class_name(h, ld));
	}
	if (!strcmp(m, "classes")) {
		struct builder b = {NULL, NULL, 0, 0, false};
		for (uint32_t c = 0; c < h->nclasses; c++)
			if (h->classes[c].loader == ld && h->classes[c].obj != HEAP_NONE)
				build_add(e, &b, vidx(V_CLASS, c));
		return build_done(e, &b);
	}
	rt_error(e, n, "a classloader has no member '%s' (members: id, name, classes, object)", m);
}

static struct value thread_member(struct ev *e, struct node *n, uint32_t t)
{
	const struct heap *h = e->h;
	const char *m = n->name;
	if (!strcmp(m, "name")) {
		char *s = heap_thread_name(h, t);
		struct value v = s ? vstr(arena_strndup(e->a, s, strlen(s))) : VNULL;
		free(s);
		return v;
	}
	if (!strcmp(m, "object"))
		return h->threads[t].obj == HEAP_NONE ? VNULL : vidx(V_OBJ, h->threads[t].obj);
	if (!strcmp(m, "roots"))
		return thread_roots(e, t);
	if (!strcmp(m, "id"))
		return vint(h->threads[t].obj == HEAP_NONE ? 0 : (int64_t)heap_id(h, h->threads[t].obj));
	if (!strcmp(m, "frames"))
		return vint(h->threads[t].nframes);
	rt_error(e, n, "a thread has no member '%s' (members: name, object, roots, id, frames)", m);
}

static struct value member(struct ev *e, struct node *n, struct value recv, int nargs,
			   struct value *args)
{
	const char *m = n->name;
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
		if (!strcmp(m, "name"))
			return recv.u.ent->name;
		if (!strcmp(m, "members") || !strcmp(m, "count"))
			return vint((int64_t)recv.u.ent->members);
		struct value *p = prop_find(recv.u.ent, m);
		if (p)
			return *p;
		rt_error(e, n, "ENTITY has no property '%s'", m);
	}
	case V_STRUCT: {
		for (int k = 0; k < recv.u.st->n; k++)
			if (!strcmp(recv.u.st->names[k], m))
				return recv.u.st->vals[k];
		char sug[200];
		hs_suggest(sug, sizeof sug, m, recv.u.st->names, recv.u.st->n, NULL);
		rt_error(e, n, "struct %s has no field '%s'%s",
			 recv.u.st->type ? recv.u.st->type : "", m, sug);
	}
	case V_STR:
		if (!strcmp(m, "length")) {
			/* characters: UTF-8 lead bytes (NUL is C0 80, one character) */
			int64_t c = 0;
			for (const unsigned char *p = (const unsigned char *)recv.u.s; *p; p++)
				c += (*p & 0xC0) != 0x80;
			return vint(c);
		}
		break;
	case V_NULL:
		rt_error(e, n, "null has no member '%s' (a null reference was dereferenced)", m);
	default:
		break;
	}
	rt_error(e, n, "%s has no member '%s'", value_kind_name(recv.k), m);
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
		rt_error(e, n, "cannot %s %s and %s", n->op == OP_ADD ? "add" : n->op == OP_SUB ? "subtract"
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
				rt_error(e, n->b, "division by zero");
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
			rt_error(e, n->b, "division by zero");
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
			obj = e->h->threads[v.u.idx].obj;
		else
			obj = v.u.idx;
		if (obj == HEAP_NONE)
			return false;
		break;
	case V_CLASS: obj = e->h->classes[v.u.idx].obj; if (obj == HEAP_NONE) return false; break;
	default: return false;
	}
	return e->owner && e->owner[obj] == ent->id;
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
			x.u.i = (int64_t)heap_id(e->h, v.u.idx);
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
		if (v.k == V_OBJ && (x.u.s = obj_text(e, v.u.idx)))
			return x;
		if (v.k == V_OBJ)
			rt_error(e, at, "argument %d of %s is declared string but its value is an "
				 "object of class %s, not a java.lang.String", k + 1, ext_name(fn),
				 heap_class_name(e->h, v.u.idx));
		break;
	case EXT_VOID:
		break;
	}
	rt_error(e, at, "argument %d of %s is declared %s but its value is %s", k + 1, ext_name(fn),
		 ext_type_name(want), value_kind_name(v.k));
}

/* extern_call: name(args), a native function declared with extern. */
static struct value extern_call(struct ev *e, struct frame *f, struct node *n)
{
	struct externdecl *x = extern_find(e->d, n->name);
	if (!x) {
		const char *cands[64];
		int nc = 0;
		for (struct externdecl *c = e->d->externs; c && nc < 64; c = c->next)
			cands[nc++] = c->name;
		char sug[200];
		hs_suggest(sug, sizeof sug, n->name, cands, nc, NULL);
		if (sug[0])
			rt_error(e, n, "no native function named '%s'%s", n->name, sug);
		rt_error(e, n, "no native function named '%s' (declare one with extern \"LIB\" "
			 "%s(TYPES) : TYPE)", n->name, n->name);
	}
	const struct ext_fn *fn = x->fn;
	int np = ext_nparams(fn);
	if (n->nitems != np)
		rt_error(e, n, "%s takes %d argument%s, but is called with %d", n->name, np,
			 np == 1 ? "" : "s", n->nitems);
	struct ext_value args[EXT_MAX_PARAMS];
	for (int k = 0; k < np; k++)
		args[k] = native_arg(e, n->items[k], fn, k, eval(e, f, n->items[k]));
	struct ext_value r;
	struct hs_error xerr;
	if (ext_call(fn, args, np, &r, &xerr) != EXT_OK)
		rt_error(e, n, "%s", xerr.msg);
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

static struct value eval(struct ev *e, struct frame *f, struct node *n)
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
			build_add(e, &b, eval(e, f, n->items[k]));
		struct value l = build_done(e, &b);
		return l;
	}
	case N_STRUCT: {
		struct typedecl *t;
		for (t = e->d->types; t && strcmp(t->name, n->name); t = t->next)
			;
		if (!t || !t->st->is_struct)
			rt_error(e, n, "no struct type named '%s'; declare it with '%s : struct ... end'",
				 n->name, n->name);
		if (t->st->nfields != n->nitems)
			rt_error(e, n, "struct %s has %d fields, but %d values are given", n->name,
				 t->st->nfields, n->nitems);
		struct vstruct *st = arena_alloc(e->a, sizeof *st);
		st->type = t->name;
		st->n = n->nitems;
		st->names = arena_alloc(e->a, (size_t)st->n * sizeof *st->names + 1);
		st->vals = arena_alloc(e->a, (size_t)st->n * sizeof *st->vals + 1);
		for (int k = 0; k < st->n; k++) {
			st->names[k] = t->st->fields[k].name;
			st->vals[k] = eval(e, f, n->items[k]);
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
		struct value r = eval(e, f, n->a);
		return member(e, n, r, 0, NULL);
	}
	case N_CALL: {
		struct value r = eval(e, f, n->a);
		struct value args[8];
		if (n->nitems > 8)
			rt_error(e, n, "too many arguments");
		for (int k = 0; k < n->nitems; k++)
			args[k] = eval(e, f, n->items[k]);
		return member(e, n, r, n->nitems, args);
	}
	case N_NEG: {
		struct value v = eval(e, f, n->a);
		if (v.k == V_INT)
			return vint((int64_t)(0 - (uint64_t)v.u.i));
		if (v.k == V_FLOAT)
			return vfloat(-v.u.f);
		rt_error(e, n, "cannot negate %s", value_kind_name(v.k));
	}
	case N_NOT:
		return vbool(!truth(e, n, eval(e, f, n->a), "the operand of 'not'"));
	case N_BIN: {
		if (n->op == OP_AND)
			return vbool(truth(e, n->a, eval(e, f, n->a), "the left side of 'and'") &&
				     truth(e, n->b, eval(e, f, n->b), "the right side of 'and'"));
		if (n->op == OP_OR)
			return vbool(truth(e, n->a, eval(e, f, n->a), "the left side of 'or'") ||
				     truth(e, n->b, eval(e, f, n->b), "the right side of 'or'"));
		struct value a = eval(e, f, n->a), b = eval(e, f, n->b);
		switch (n->op) {
		case OP_EQ: return vbool(equal(e, a, b));
		case OP_NE: return vbool(!equal(e, a, b));
		case OP_LT: return vbool(compare(e, n, a, b) < 0);
		case OP_LE: return vbool(compare(e, n, a, b) <= 0);
		case OP_GT: return vbool(compare(e, n, a, b) > 0);
		case OP_GE: return vbool(compare(e, n, a, b) >= 0);
		default: return arith(e, n, a, b);
		}
	}
	case N_IS: {
		struct value v = eval(e, f, n->a);
		const uint8_t *bits = resolve_class(e, n, n->name);
		if (v.k == V_NULL)
			return vbool(false);
		if (v.k != V_OBJ)
			rt_error(e, n->a, "'is' tests objects, not %s", value_kind_name(v.k));
		return vbool(has_bit(bits, e->h->cls[v.u.idx]));
	}
	case N_IN_UNASSIGNED: {
		struct value v = eval(e, f, n->a);
		if (!e->in_trav)
			rt_error(e, n, "'in Unassigned' is only defined while a set type's instances "
				 "are built");
		if (v.k != V_OBJ)
			return vbool(v.k == V_NULL ? false : true);
		return vbool(e->owner[v.u.idx] == 0);
	}
	case N_IN: {
		struct value v = eval(e, f, n->a), set = eval(e, f, n->b);
		if (set.k == V_ENTITY)
			return vbool(in_entity(e, v, set.u.ent));
		if (set.k == V_LIST) {
			for (uint32_t k = 0; k < set.u.l->n; k++)
				if (equal(e, v, list_get(set.u.l, k)))
					return vbool(true);
			return vbool(false);
		}
		rt_error(e, n->b, "'in' wants ENTITY, Unassigned or a list, not %s",
			 value_kind_name(set.k));
	}
	case N_EXTERN_CALL:
		return extern_call(e, f, n);
	case N_ASSIGN:
		rt_error(e, n, "an assignment is only allowed inside a lambda");
	default:
		rt_error(e, n, "cannot evaluate this");
	}
}

/* ---- set types ---- */

/* to_object: the object behind a root value (objects, classes, loaders, threads). */
static uint32_t to_object(struct ev *e, const struct node *at, struct value v)
{
	switch (v.k) {
	case V_OBJ: return v.u.idx;
	case V_CLASS: return e->h->classes[v.u.idx].obj;
	case V_LOADER: return v.u.idx;
	case V_THREAD: return e->h->threads[v.u.idx].obj;
	case V_NULL: return HEAP_NONE;
	default:
		rt_error(e, at, "roots must be objects, classes, classloaders or threads, not %s",
			 value_kind_name(v.k));
	}
}

/*
 * An analysis under way (docs/dsl.md, "Set types: semantics"): the
 * members in inclusion order with their instances, and the stack of
 * step 4's depth-first growth.
 */
struct analysis {
	struct ev *e;
	struct stmt *st;
	struct instance **insts;
	int ninst;
	struct node *membership, *on_inclusion;
	struct value on_inclusion_fn;	/* evaluated once per analysis */
	uint32_t *members, *member_inst;	/* [nmembers] object, instance index */
	uint64_t nmembers, mcap;
	uint32_t *stack;
	uint64_t sp, scap;
	uint32_t *pending, *pending_inst;	/* step 3: included at its end */
	uint64_t npending, pcap;
	uint8_t *isroot;	/* step 3: a bit per object that is a GC root */
	uint64_t *order;	/* step 3: the offers that joined, by id */
	uint8_t *tclass;	/* per class: TC_* (what step 4 follows from its objects) */
	uint32_t object_mirror;	/* java.lang.Object's class object, or HEAP_NONE */
};

/* What step 4 follows from an object of a class (see trav_refs). */
enum { TC_FIELDS, TC_NONE, TC_FILTERED };

static void *grow(void *p, uint64_t *cap, uint64_t need, size_t size)
{
	if (need <= *cap)
		return p;
	uint64_t c = *cap ? *cap * 2 : 1024;
	while (c < need)
		c *= 2;
	*cap = c;
	return xreallocarray(p, (size_t)c, size);
}

static void include(struct analysis *an, int k, uint32_t obj)
{
	struct ev *e = an->e;
	struct instance *in = an->insts[k];
	e->owner[obj] = in->id;
	in->members++;
	an->members = grow(an->members, &an->mcap, an->nmembers + 1, sizeof *an->members);
	an->member_inst = xreallocarray(an->member_inst, (size_t)an->mcap, sizeof *an->member_inst);
	an->members[an->nmembers] = obj;
	an->member_inst[an->nmembers++] = (uint32_t)k;
	if (an->on_inclusion) {
		struct instance *save = e->cur;
		e->cur = in;
		e->entity = in;
		e->this_v = vidx(V_OBJ, obj);
		struct value fn = an->on_inclusion_fn;
		if (fn.k != V_LAMBDA)	/* not a lambda: an expression evaluated each time */
			fn = eval(e, NULL, an->on_inclusion);
		if (fn.k == V_LAMBDA)
			apply(e, an->on_inclusion, fn, fn.u.fn->lam->nparams ? 1 : 0, &e->this_v);
		e->cur = save;
	}
}

/* ask: instance k's membership for THIS = obj, REFERRER, ref_kind. */
static bool ask(struct analysis *an, int k, uint32_t referrer, uint32_t obj, enum refkind rk)
{
	struct ev *e = an->e;
	struct instance *in = an->insts[k];
	e->this_v = vidx(V_OBJ, obj);
	e->referrer = referrer == HEAP_NONE ? VNULL : vidx(V_OBJ, referrer);
	e->rk = rk;
	e->entity = in;
	e->cur = in;
	bool yes = truth(e, an->membership, eval(e, NULL, an->membership), "membership");
	e->cur = NULL;
	return yes;
}

/* step 3: obj, in no instance, offered with no referrer; the first instance that answers. */
static void offer_alone(struct analysis *an, uint32_t obj, enum refkind rk)
{
	for (int k = 0; k < an->ninst; k++)
		if (ask(an, k, HEAP_NONE, obj, rk)) {
			an->pending = grow(an->pending, &an->pcap, an->npending + 1,
					   sizeof *an->pending);
			an->pending_inst = xreallocarray(an->pending_inst, (size_t)an->pcap,
							 sizeof *an->pending_inst);
			/* the instance, and whether it was offered as a GC root (high bit) */
			an->pending[an->npending] = obj;
			an->pending_inst[an->npending++] = (uint32_t)k | (rk == RK_ROOT ? 1u << 31 : 0);
			return;
		}
}

static int cmp_pending(const void *x, const void *y)
{
	const uint64_t *a = x, *b = y;
	return *a < *b ? -1 : *a > *b;
}

/* step 4: referrer (a member of instance k) -> obj. */
static void offer_growth(struct analysis *an, int k, uint32_t referrer, uint32_t obj,
			 enum refkind rk)
{
	if (an->e->owner[obj] || !ask(an, k, referrer, obj, rk))
		return;
	include(an, k, obj);
	an->stack = grow(an->stack, &an->scap, an->sp + 1, sizeof *an->stack);
	an->stack[an->sp++] = obj;
}

struct trav_ctx {
	struct analysis *an;
	int k;
	uint32_t from;
	bool filtered;		/* an instance of a class HotSpot hides two fields of */
};

static bool trav_ref(void *ctx, const struct heap_ref *r)
{
	struct trav_ctx *t = ctx;
	enum refkind rk;
	switch (r->kind) {
	case HEAP_REF_FIELD:
		if (t->filtered && r->name &&
		    (!strcmp(r->name, "constantPoolOop") || !strcmp(r->name, "base")))
			return true;
		rk = RK_FIELD;
		break;
	case HEAP_REF_ELEMENT: rk = RK_ARRAY; break;
	case HEAP_REF_STATIC:
		if (r->name && r->name[0] == '<')	/* <resolved_references>, <init_lock> */
			return true;
		rk = RK_STATIC;
		break;
	case HEAP_REF_SUPER:
		if (r->target == t->an->object_mirror)
			return true;
		rk = RK_SUPER;
		break;
	case HEAP_REF_LOADER: rk = RK_LOADER; break;
	case HEAP_REF_SIGNERS: case HEAP_REF_DOMAIN: rk = RK_OTHER; break;
	default: return true;	/* constant pool entries */
	}
	offer_growth(t->an, t->k, t->from, r->target, rk);
	return true;
}

/*
 * trav_refs: offer what step 4 follows from v, a member of instance k
 * (docs/dsl.md, "The traversal's graph", which is what HotSpot's heap walk
 * reports): instance fields (but not the two reflection fields HotSpot
 * hides from it), object array elements, and for a class object that is
 * not an array class its superclass (unless java.lang.Object), loader,
 * signers, protection domain and declared static fields. Primitive-type
 * class objects (instances of java.lang.Class in the dump) have none.
 */
static void trav_refs(struct analysis *an, int k, uint32_t v)
{
	const struct heap *h = an->e->h;
	enum heap_kind kind = heap_kind(h, v);
	struct trav_ctx t = {an, k, v, false};
	switch (kind) {
	case HEAP_PRIM_ARRAY:
		return;
	case HEAP_CLASS: {
		uint32_t c = heap_class_of_object(h, v);
		if (c == HEAP_NONE || h->classes[c].elem_type)
			return;
		heap_refs(h, v, trav_ref, &t);
		return;
	}
	case HEAP_INSTANCE: {
		uint8_t tc = an->tclass[h->cls[v]];
		if (tc == TC_NONE)
			return;
		if (tc == TC_FILTERED) {
			t.filtered = true;
			heap_refs(h, v, trav_ref, &t);
			return;
		}
		break;
	}
	default:
		break;
	}
	uint32_t cnt;
	const uint32_t *out = heap_out(h, v, &cnt);
	enum refkind rk = kind == HEAP_OBJ_ARRAY ? RK_ARRAY : RK_FIELD;
	for (uint32_t j = 0; j < cnt; j++)
		offer_growth(an, k, v, out[j], rk);
}

/* classify: TC_* for every class of the heap. */
static uint8_t *classify(const struct heap *h)
{
	uint8_t *tc = xcalloc((size_t)h->nclasses + 1, 1);
	static const char *const filtered[] = {
		"jdk.internal.reflect.ConstantPool", "sun.reflect.ConstantPool",
		"jdk.internal.reflect.UnsafeStaticFieldAccessorImpl",
		"sun.reflect.UnsafeStaticFieldAccessorImpl"};
	uint32_t fc[4];
	for (int k = 0; k < 4; k++)
		fc[k] = heap_class_by_name(h, filtered[k]);
	for (uint32_t c = 0; c < h->nclasses; c++) {
		if (c == h->class_class)
			tc[c] = TC_NONE;
		for (int k = 0; k < 4; k++)
			if (fc[k] != HEAP_NONE && heap_is_subclass(h, c, fc[k]))
				tc[c] = TC_FILTERED;
	}
	return tc;
}

static void analysis_free(struct analysis *an)
{
	free(an->members);
	free(an->member_inst);
	free(an->stack);
	free(an->pending);
	free(an->pending_inst);
	free(an->tclass);
	free(an->isroot);
	free(an->order);
	free(an);
}

static struct value run_instances(struct ev *e, struct stmt *s)
{
	struct settype *t;
	for (t = e->d->sets; t && strcmp(t->name, s->name); t = t->next)
		;
	if (!t) {
		struct node at;
		memset(&at, 0, sizeof at);
		at.line = s->line;
		at.col = s->col;
		rt_error(e, &at, "no set type named '%s' (define it with 'set_type %s: ...')",
			 s->name, s->name);
	}
	struct node at0;
	memset(&at0, 0, sizeof at0);
	at0.line = s->line;
	at0.col = s->col;
	need_heap(e, &at0, "a set type's instances");
	const struct heap *h = e->h;
	/* on the heap, so that a runtime error (a longjmp) can still free it */
	struct analysis *anp = xcalloc(1, sizeof *anp);
	e->an = anp;
	anp->e = e;
	anp->st = t->st;
	struct node *roots = NULL;
	int nuser = 0;
	for (int k = 0; k < t->st->nprops; k++) {
		struct property *p = &t->st->props[k];
		if (p->kind == P_ROOTS)
			roots = p->value;
		else if (p->kind == P_MEMBERSHIP)
			anp->membership = p->value;
		else if (p->kind == P_ON_INCLUSION)
			anp->on_inclusion = p->value;
		else
			nuser++;
	}
	if (anp->on_inclusion && anp->on_inclusion->kind == N_LAMBDA)
		anp->on_inclusion_fn = eval(e, NULL, anp->on_inclusion);
	/* 1. The names: one instance per element (or one for a single value). */
	struct value names = eval(e, NULL, s->e);
	uint32_t nn = names.k == V_LIST ? names.u.l->n : 1;
	anp->insts = arena_alloc(e->a, ((size_t)nn + 1) * sizeof *anp->insts);
	e->owner = xcalloc((size_t)h->n + 1, sizeof *e->owner);
	anp->tclass = classify(h);
	uint32_t oc = heap_class_by_name(h, "java.lang.Object");
	anp->object_mirror = oc == HEAP_NONE ? HEAP_NONE : h->classes[oc].obj;
	e->in_trav = true;
	for (uint32_t k = 0; k < nn; k++) {
		struct instance *in = arena_alloc(e->a, sizeof *in);
		in->name = names.k == V_LIST ? list_get(names.u.l, k) : names;
		in->id = k + 1;
		in->nprops = 0;
		in->prop_names = arena_alloc(e->a, ((size_t)nuser + 1) * sizeof *in->prop_names);
		in->props = arena_alloc(e->a, ((size_t)nuser + 1) * sizeof *in->props);
		e->entity = in;
		e->cur = in;
		for (int j = 0; j < t->st->nprops; j++) {
			struct property *p = &t->st->props[j];
			if (p->kind != P_USER)
				continue;
			in->prop_names[in->nprops] = p->decl.name;
			struct value pv = eval(e, NULL, p->value);
			if (p->decl.type)
				pv = typed(e, p->decl.line, p->decl.col, p->decl.name, p->decl.type, pv);
			in->props[in->nprops++] = pv;
		}
		e->cur = NULL;
		anp->insts[anp->ninst++] = in;
	}
	/* 2. Roots, instance by instance (an object joins the first that claims it). */
	for (int k = 0; k < anp->ninst; k++) {
		if (!roots)
			break;
		struct instance *in = anp->insts[k];
		e->entity = in;
		e->this_v = VNULL;
		e->referrer = VNULL;
		e->rk = RK_ROOT;
		struct value r = eval(e, NULL, roots);
		uint32_t len = r.k == V_LIST ? r.u.l->n : 1;
		for (uint32_t j = 0; j < len; j++) {
			uint32_t o = to_object(e, roots, r.k == V_LIST ? list_get(r.u.l, j) : r);
			if (o == HEAP_NONE || e->owner[o])
				continue;
			e->rk = RK_ROOT;
			e->referrer = VNULL;
			include(anp, k, o);
			poll(e, roots);
		}
	}
	/*
	 * 3. Offers without a referrer: the GC roots (ref_kind root), then every
	 * other object (ref_kind none), each once, against the instances as
	 * step 2 left them; what they include joins at the end. Skipped where
	 * the membership is false for certain (plan.h).
	 */
	if (anp->membership && anp->ninst) {
		struct pe_ctx pr = {PE_REF_NULL, RK_ROOT}, pn = {PE_REF_NULL, RK_NONE};
		bool roots_may = pe_membership(anp->membership, &pr) != TRI_FALSE;
		bool others_may = pe_membership(anp->membership, &pn) != TRI_FALSE;
		uint8_t *isroot = anp->isroot = xcalloc((size_t)h->n / 8 + 1, 1);
		for (uint32_t r = 0; r < h->nroots; r++) {
			uint32_t o = h->roots[r].obj;
			if (isroot[o / 8] & (1u << (o % 8)))
				continue;
			isroot[o / 8] |= (uint8_t)(1u << (o % 8));
			if (roots_may && !e->owner[o]) {
				poll(e, anp->membership);
				offer_alone(anp, o, RK_ROOT);
			}
		}
		for (uint32_t o = 0; others_may && o < h->n; o++) {
			poll(e, anp->membership);
			if (!e->owner[o] && !(isroot[o / 8] & (1u << (o % 8))))
				offer_alone(anp, o, RK_NONE);
		}
		free(isroot);
		anp->isroot = NULL;
		/* they join in the order of their ids (index order) */
		uint64_t *order = anp->order = xcalloc((size_t)anp->npending + 1, sizeof *order);
		for (uint64_t j = 0; j < anp->npending; j++)
			order[j] = (uint64_t)anp->pending[j] << 32 | j;
		qsort(order, (size_t)anp->npending, sizeof *order, cmp_pending);
		for (uint64_t j = 0; j < anp->npending; j++) {
			uint32_t p = (uint32_t)order[j];
			uint32_t ki = anp->pending_inst[p];
			e->rk = ki >> 31 ? RK_ROOT : RK_NONE;
			e->referrer = VNULL;
			include(anp, (int)(ki & 0x7fffffffu), anp->pending[p]);
		}
		free(order);
		anp->order = NULL;
	}
	/*
	 * 4. Growth, instance by instance: from each member, depth first, the
	 * references to objects in no instance are offered to that instance's
	 * membership only.
	 */
	struct pe_ctx pg = {PE_REF_MEMBER, PE_RK_NOT_ROOT};
	if (anp->membership && pe_membership(anp->membership, &pg) != TRI_FALSE) {
		uint64_t n0 = anp->nmembers;
		for (int k = 0; k < anp->ninst; k++) {
			for (uint64_t j = 0; j < n0; j++) {
				if (anp->member_inst[j] != (uint32_t)k)
					continue;
				anp->stack = grow(anp->stack, &anp->scap, anp->sp + 1,
						  sizeof *anp->stack);
				anp->stack[anp->sp++] = anp->members[j];
				while (anp->sp) {
					uint32_t v = anp->stack[--anp->sp];
					poll(e, s->e);
					trav_refs(anp, k, v);
				}
			}
		}
	}
	e->in_trav = false;
	e->entity = NULL;
	free(e->owner);
	e->owner = NULL;
	e->an = NULL;
	/* The result: a row per instance, its name and its properties. */
	struct value out = vlist(e, L_VALUES, (uint32_t)anp->ninst);
	for (int k = 0; k < anp->ninst; k++) {
		struct instance *in = anp->insts[k];
		struct vstruct *st = arena_alloc(e->a, sizeof *st);
		st->type = t->name;
		st->n = in->nprops + 1;
		st->names = arena_alloc(e->a, (size_t)st->n * sizeof *st->names);
		st->vals = arena_alloc(e->a, (size_t)st->n * sizeof *st->vals);
		st->names[0] = "name";
		st->vals[0] = in->name;
		for (int j = 0; j < in->nprops; j++) {
			st->names[j + 1] = in->prop_names[j];
			st->vals[j + 1] = in->props[j];
		}
		out.u.l->v[k].k = V_STRUCT;
		out.u.l->v[k].u.st = st;
	}
	analysis_free(anp);
	return out;
}

/* ---- sessions ---- */

struct dsl *dsl_new(const struct heap *h, const struct dsl_engine *eng)
{
	struct dsl *d = xcalloc(1, sizeof *d);
	d->h = h;
	if (eng)
		d->eng = *eng;
	return d;
}

const struct heap *dsl_heap(const struct dsl *d)
{
	return d->h;
}

void dsl_set_heap(struct dsl *d, const struct heap *h)
{
	if (!d->h)
		d->h = h;
}

/* node_mentions: whether identifier name (or, name NULL, one that needs a heap) is in n's tree. */
static bool node_mentions(const struct node *n, const char *name)
{
	if (!n)
		return false;
	if (!name && (n->kind == N_IS || n->kind == N_IN_UNASSIGNED))
		return true;
	if (n->kind == N_IDENT) {
		if (name && !strcmp(n->name, name))
			return true;
		for (size_t k = 0; !name && k < sizeof heap_names / sizeof *heap_names; k++)
			if (!strcmp(n->name, heap_names[k]))
				return true;
	}
	if (node_mentions(n->a, name) || node_mentions(n->b, name) ||
	    node_mentions(n->result, name))
		return true;
	for (int k = 0; k < n->nitems; k++)
		if (node_mentions(n->items[k], name))
			return true;
	return false;
}

bool dsl_needs_heap(struct stmt *const *stmts, int n)
{
	for (int k = 0; k < n; k++) {
		const struct stmt *s = stmts[k];
		if (s->kind == S_SET_TYPE || s->kind == S_INSTANCES)
			return true;
		if ((s->kind == S_EXPR || s->kind == S_LET) && node_mentions(s->e, NULL))
			return true;
	}
	return false;
}

bool dsl_mentions(struct stmt *const *stmts, int n, const char *name)
{
	for (int k = 0; k < n; k++)
		if ((stmts[k]->kind == S_EXPR || stmts[k]->kind == S_LET) &&
		    node_mentions(stmts[k]->e, name))
			return true;
	return false;
}

bool dsl_heapless(const struct dsl *d, const char *text)
{
	struct arena a = {NULL, 0};
	struct stmt **st;
	int n;
	struct hs_error err;
	bool r = parse_snippet(text, &a, &st, &n, &err) == PARSE_OK &&
		 !dsl_needs_heap(st, n) &&
		 ((d && !d->h) || dsl_mentions(st, n, "allocations"));
	arena_free(&a);
	return r;
}

void dsl_free(struct dsl *d)
{
	if (!d)
		return;
	for (struct externdecl *x = d->externs; x; x = x->next)
		ext_free(x->fn);
	arena_free(&d->keep);
	free(d->names);
	free(d);
}

static bool defines(struct stmt **stmts, int n)
{
	for (int k = 0; k < n; k++)
		if (stmts[k]->kind == S_LET || stmts[k]->kind == S_TYPE ||
		    stmts[k]->kind == S_SET_TYPE || stmts[k]->kind == S_EXTERN)
			return true;
	return false;
}

static void add_output(struct ev *e, struct dsl_output *out, struct value v, const char *label)
{
	struct value *nv = arena_alloc(e->a, ((size_t)out->n + 1) * sizeof *nv);
	const char **nl = arena_alloc(e->a, ((size_t)out->n + 1) * sizeof *nl);
	if (out->n) {
		memcpy(nv, out->vals, (size_t)out->n * sizeof *nv);
		memcpy(nl, out->labels, (size_t)out->n * sizeof *nl);
	}
	nv[out->n] = v;
	nl[out->n] = label;
	out->vals = nv;
	out->labels = nl;
	out->n++;
}

/* remember_name: name among the session's names (completion), once. */
static void remember_name(struct dsl *d, const char *name)
{
	for (int k = 0; k < d->nnames; k++)
		if (!strcmp(d->names[k], name))
			return;
	d->names = xreallocarray(d->names, (size_t)d->nnames + 2, sizeof *d->names);
	d->names[d->nnames++] = name;
	d->names[d->nnames] = NULL;
}

static void bind(struct dsl *d, struct ev *e, const char *name, struct value v)
{
	struct binding *b = global_find(d, name);
	if (!b) {
		b = arena_alloc(&d->keep, sizeof *b);
		b->name = name;
		b->next = d->globals;
		d->globals = b;
		remember_name(d, name);
	}
	(void)e;
	b->v = v;
}

/*
 * declare_extern: bind the native function of an extern statement; an
 * error points at the library when it cannot be loaded, else at the name.
 * Declaring a name again replaces its function.
 */
static void declare_extern(struct ev *e, struct stmt *s)
{
	struct ext_fn *fn;
	struct hs_error xerr;
	enum ext_status st = ext_bind(s->lib.name, s->name, s->sig, &fn, &xerr);
	if (st != EXT_OK) {
		struct node at;
		memset(&at, 0, sizeof at);
		at.line = st == EXT_ERR_LIB ? s->lib.line : s->name_line;
		at.col = st == EXT_ERR_LIB ? s->lib.col : s->name_col;
		rt_error(e, &at, "%s", xerr.msg);
	}
	struct dsl *d = e->d;
	struct externdecl *x = extern_find(d, s->name);
	if (x) {
		ext_free(x->fn);
	} else {
		x = arena_alloc(&d->keep, sizeof *x);
		x->name = s->name;
		x->next = d->externs;
		d->externs = x;
		remember_name(d, s->name);
	}
	x->fn = fn;
}

static struct value default_of(const char *type)
{
	if (!strcmp(type, "int"))
		return vint(0);
	if (!strcmp(type, "float"))
		return vfloat(0);
	if (!strcmp(type, "bool"))
		return vbool(false);
	if (!strcmp(type, "string"))
		return vstr("");
	return VNULL;
}

/*
 * typed: v as a value of the declared type (an int becomes a float where a
 * float is declared); a runtime error at (line, col) when it is not one.
 */
static struct value typed(struct ev *e, int line, int col, const char *name, const char *type,
			  struct value v)
{
	static const struct { const char *t; enum vkind k; } prims[] = {
		{"int", V_INT}, {"float", V_FLOAT}, {"bool", V_BOOL}, {"string", V_STR}};
	for (size_t k = 0; k < sizeof prims / sizeof *prims; k++)
		if (!strcmp(type, prims[k].t)) {
			if (v.k == prims[k].k)
				return v;
			if (prims[k].k == V_FLOAT && v.k == V_INT)
				return vfloat((double)v.u.i);
			struct node at;
			memset(&at, 0, sizeof at);
			at.line = line;
			at.col = col;
			rt_error(e, &at, "%s is declared %s but its value is %s", name, type,
				 value_kind_name(v.k));
		}
	return v;
}

enum parse_status dsl_run(struct dsl *d, const char *text, struct dsl_output *out,
			  struct hs_error *err)
{
	memset(out, 0, sizeof *out);
	struct arena *tmp = xcalloc(1, sizeof *tmp);
	struct stmt **stmts;
	int n;
	enum parse_status st = parse_snippet(text, tmp, &stmts, &n, err);
	if (st != PARSE_OK) {
		arena_free(tmp);
		free(tmp);
		return st;
	}
	/* Snippets that define names are kept whole: their trees and values live on. */
	struct arena *a = tmp;
	if (defines(stmts, n)) {
		arena_free(tmp);
		free(tmp);
		a = &d->keep;
		st = parse_snippet(text, a, &stmts, &n, err);
		if (st != PARSE_OK)
			return st;
	}
	out->priv = a == tmp ? tmp : NULL;
	struct ev *e = xcalloc(1, sizeof *e);
	e->d = d;
	e->h = d->h;
	e->a = a;
	e->err = err;
	e->snippet = n ? stmts[0]->snippet : NULL;
	char base;
	e->stack_base = &base;
	e->stack_budget = stack_budget();
	int k = 0;
	if (setjmp(e->fail)) {
		e->calls = 0;
		free(e->owner);
		e->owner = NULL;
		if (e->an) {
			analysis_free(e->an);
			e->an = NULL;
		}
		st = PARSE_ERROR;
		goto done;
	}
	for (; k < n; k++) {
		struct stmt *s = stmts[k];
		switch (s->kind) {
		case S_EXPR:
			add_output(e, out, eval(e, NULL, s->e), NULL);
			break;
		case S_LET: {
			struct value v = s->e ? eval(e, NULL, s->e)
					      : default_of(s->type ? s->type : "");
			if (s->type)
				v = typed(e, s->line, s->col, s->name, s->type, v);
			bind(d, e, s->name, v);
			break;
		}
		case S_TYPE: {
			struct typedecl *t = arena_alloc(&d->keep, sizeof *t);
			t->name = s->name;
			t->st = s;
			t->next = d->types;
			d->types = t;
			break;
		}
		case S_SET_TYPE: {
			struct settype *t = arena_alloc(&d->keep, sizeof *t);
			t->name = s->name;
			t->st = s;
			t->next = d->sets;
			d->sets = t;
			break;
		}
		case S_EXTERN:
			declare_extern(e, s);
			break;
		case S_INSTANCES: {
			struct node at = {0};
			at.line = s->line;
			at.col = s->col;
			(void)at;
			char *label = arena_alloc(e->a, strlen(s->name) + 32);
			sprintf(label, "instances_for %s", s->name);
			add_output(e, out, run_instances(e, s), label);
			break;
		}
		}
	}
done:
	free(e);
	return st;
}

void dsl_output_done(struct dsl *d, struct dsl_output *out)
{
	(void)d;
	if (out->priv) {
		arena_free(out->priv);
		free(out->priv);
	}
	memset(out, 0, sizeof *out);
}

struct stmt *dsl_set_type_stmt(struct dsl *d, const char *name)
{
	for (struct settype *t = d->sets; t; t = t->next)
		if (!strcmp(t->name, name))
			return t->st;
	return NULL;
}

bool dsl_lambda_plain(struct value v)
{
	if (v.k != V_LAMBDA)
		return false;
	for (const struct frame *f = v.u.fn->env; f; f = f->up)
		if (f->n)
			return false;
	return true;
}

bool dsl_global(struct dsl *d, const char *name, struct value *v)
{
	struct binding *b = global_find(d, name);
	if (b)
		*v = b->v;
	return b != NULL;
}

void dsl_bind(struct dsl *d, const char *name, struct value v)
{
	const char *kept = arena_strndup(&d->keep, name, strlen(name));
	bind(d, NULL, kept, value_persist(&d->keep, v));
}

const char **dsl_names(struct dsl *d, int *n)
{
	*n = d->nnames;
	return d->names;
}

const char *dsl_value_text(struct dsl *d, struct value v, void *arena)
{
	struct arena *a = arena;
	char buf[256];
	switch (v.k) {
	case V_NULL: return "null";
	case V_BOOL: return v.u.b ? "true" : "false";
	case V_INT: snprintf(buf, sizeof buf, "%" PRId64, v.u.i); break;
	case V_FLOAT:
		fmt_double(buf, sizeof buf, v.u.f, false);
		break;
	case V_STR: return v.u.s;
	case V_OBJ: {
		char *t = heap_string(d->h, v.u.idx, 60);
		if (t)
			snprintf(buf, sizeof buf, "0x%" PRIx64 " java.lang.String \"%s\"",
				 heap_id(d->h, v.u.idx), t);
		else
			snprintf(buf, sizeof buf, "0x%" PRIx64 " %s", heap_id(d->h, v.u.idx),
				 heap_class_name(d->h, v.u.idx));
		free(t);
		break;
	}
	case V_CLASS: snprintf(buf, sizeof buf, "class %s", d->h->classes[v.u.idx].name); break;
	case V_LOADER:
		if (v.u.idx == HEAP_NONE)
			snprintf(buf, sizeof buf, "<bootstrap>");
		else
			snprintf(buf, sizeof buf, "0x%" PRIx64 " %s", heap_id(d->h, v.u.idx),
				 heap_class_name(d->h, v.u.idx));
		break;
	case V_THREAD: {
		char *nm = heap_thread_name(d->h, v.u.idx);
		snprintf(buf, sizeof buf, "thread \"%s\"", nm ? nm : "?");
		free(nm);
		break;
	}
	case V_LIST: snprintf(buf, sizeof buf, "<list of %u>", v.u.l->n); break;
	case V_STRUCT: snprintf(buf, sizeof buf, "<struct %s>", v.u.st->type ? v.u.st->type : ""); break;
	case V_LAMBDA: return "<lambda>";
	case V_ENTITY: return dsl_value_text(d, v.u.ent->name, arena);
	case V_REFKIND: return refkind_name(v.u.rk);
	}
	return arena_strndup(a, buf, strlen(buf));
}
