/*
 * lq.c - the agent's evaluator of query programs: values, names, lambdas,
 * list and object members, statements (lq.h). It follows src/dsl/eval.c
 * for everything it supports, so that a query gives inside the JVM what it
 * gives on a snapshot.
 */
#include "lq.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../base/classname.h"
#include "../base/fmt.h"
#include "../dsl/builtins.h"
#include "../dsl/value.h"
#include "ag.h"

struct lq_block {
	struct lq_block *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

struct lbind {
	const char *name;
	struct lval v;
	struct lbind *next;
};

struct lstmt_set {
	const char *name;
	struct stmt *st;
	struct lstmt_set *next;
};

static const struct lval LNULL = {LK_NULL, {0}};

/* ---- failure, memory, limits ---- */

void lq_raise(struct lq *q, enum lq_status st, const struct node *at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(q->msg, sizeof q->msg, fmt, ap);
	va_end(ap);
	q->status = st;
	q->line = at ? at->line : 0;
	q->col = at ? at->col : 0;
	q->earlier = at && PROG_NODE_EARLIER(at);
	longjmp(*q->fail, 1);
}

void lq_failure_keep(const struct lq *q, struct lq_failure *f)
{
	f->status = q->status;
	snprintf(f->msg, sizeof f->msg, "%s", q->msg);
	f->line = q->line;
	f->col = q->col;
	f->earlier = q->earlier;
}

void lq_failure_raise(struct lq *q, const struct lq_failure *f)
{
	q->status = f->status;
	snprintf(q->msg, sizeof q->msg, "%s", f->msg);
	q->line = f->line;
	q->col = f->col;
	q->earlier = f->earlier;
	longjmp(*q->fail, 1);
}

void *lq_alloc(struct lq *q, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (!n)
		n = 16;
	struct lq_block *b = q->blocks;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > 60000 ? n : 65536 - sizeof *b;
		if (q->mem_used + cap + sizeof *b > q->mem_limit)
			lq_raise(q, LQ_LIMIT, NULL, "the analysis needs more than the agent's memory "
				 "limit of %" PRIu64 " MiB", q->mem_limit >> 20);
		b = malloc(sizeof *b + cap);
		if (!b)
			lq_raise(q, LQ_LIMIT, NULL, "the agent ran out of memory");
		q->mem_used += cap + sizeof *b;
		b->cap = cap;
		b->used = 0;
		b->next = q->blocks;
		q->blocks = b;
	}
	void *p = b->data + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

char *lq_strdup(struct lq *q, const char *s, size_t n)
{
	char *d = lq_alloc(q, n + 1);
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

void lq_free_arena(struct lq *q)
{
	while (q->blocks) {
		struct lq_block *n = q->blocks->next;
		free(q->blocks);
		q->blocks = n;
	}
	while (q->kept) {
		struct lq_block *n = q->kept->next;
		free(q->kept);
		q->kept = n;
	}
	q->mem_used = 0;
}

void lq_mark(struct lq *q, struct lq_mark *m)
{
	m->b = q->blocks;
	m->used = q->blocks ? q->blocks->used : 0;
	m->mem = q->mem_used;
}

void lq_release(struct lq *q, const struct lq_mark *m)
{
	while (q->blocks && q->blocks != m->b) {
		struct lq_block *n = q->blocks->next;
		q->mem_used -= q->blocks->cap + sizeof *q->blocks;
		free(q->blocks);
		q->blocks = n;
	}
	if (q->blocks)
		q->blocks->used = m->used;
}

/* copy: a deep copy of v with memory from alloc (the arena, or malloc). */
struct copier {
	struct lq *q;
	void *(*alloc)(struct copier *c, size_t n);
	void **mallocs;	/* malloc'd pieces, to free */
	size_t n, cap;
};

static void *copier_arena(struct copier *c, size_t n)
{
	return lq_alloc(c->q, n);
}

static void *copier_malloc(struct copier *c, size_t n)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		void **p = realloc(c->mallocs, cap * sizeof *p);
		if (!p)
			lq_raise(c->q, LQ_LIMIT, NULL, "the agent ran out of memory");
		c->mallocs = p;
		c->cap = cap;
	}
	void *p = calloc(1, n ? n : 1);
	if (!p)
		lq_raise(c->q, LQ_LIMIT, NULL, "the agent ran out of memory");
	c->mallocs[c->n++] = p;
	return p;
}

static struct lframe *copy_frame(struct copier *c, const struct lframe *f, int depth);

static struct lval copy_value(struct copier *c, struct lval v, int depth)
{
	if (depth > 200)
		lq_raise(c->q, LQ_LIMIT, NULL, "a value nests more than 200 deep");
	switch (v.k) {
	case LK_STR: {
		size_t n = strlen(v.u.s);
		char *s = c->alloc(c, n + 1);
		memcpy(s, v.u.s, n + 1);
		v.u.s = s;
		break;
	}
	case LK_OBJ: {
		struct lobj *o = c->alloc(c, sizeof *o);
		*o = *v.u.o;
		o->w = NULL;	/* a walk's object does not outlive its callbacks */
		v.u.o = o;
		break;
	}
	case LK_LIST: {
		struct llist *l = c->alloc(c, sizeof *l);
		*l = *v.u.l;
		if (!l->all) {
			l->v = c->alloc(c, ((size_t)l->n + 1) * sizeof *l->v);
			for (uint32_t k = 0; k < l->n; k++)
				l->v[k] = copy_value(c, v.u.l->v[k], depth + 1);
		}
		v.u.l = l;
		break;
	}
	case LK_STRUCT: {
		struct lstruct *st = c->alloc(c, sizeof *st);
		*st = *v.u.st;
		st->names = c->alloc(c, ((size_t)st->n + 1) * sizeof *st->names);
		st->vals = c->alloc(c, ((size_t)st->n + 1) * sizeof *st->vals);
		for (int k = 0; k < st->n; k++) {
			size_t n = strlen(v.u.st->names[k]);
			char *nm = c->alloc(c, n + 1);
			memcpy(nm, v.u.st->names[k], n + 1);
			st->names[k] = nm;
			st->vals[k] = copy_value(c, v.u.st->vals[k], depth + 1);
		}
		v.u.st = st;
		break;
	}
	case LK_LAMBDA: {
		struct lclosure *cl = c->alloc(c, sizeof *cl);
		cl->lam = v.u.fn->lam;
		cl->env = copy_frame(c, v.u.fn->env, depth + 1);
		v.u.fn = cl;
		break;
	}
	default:
		break;	/* scalars, classes, loaders, threads, entities, ref kinds */
	}
	return v;
}

static struct lframe *copy_frame(struct copier *c, const struct lframe *f, int depth)
{
	if (!f)
		return NULL;
	struct lframe *n = c->alloc(c, sizeof *n);
	n->n = n->cap = f->n;
	n->names = c->alloc(c, ((size_t)f->n + 1) * sizeof *n->names);
	n->vals = c->alloc(c, ((size_t)f->n + 1) * sizeof *n->vals);
	for (int k = 0; k < f->n; k++) {
		n->names[k] = f->names[k];	/* names are the program's: never released */
		n->vals[k] = copy_value(c, f->vals[k], depth + 1);
	}
	n->up = copy_frame(c, f->up, depth + 1);
	return n;
}

static bool scalar(const struct lval *v)
{
	return v->k != LK_STR && v->k != LK_OBJ && v->k != LK_LIST && v->k != LK_STRUCT &&
	       v->k != LK_LAMBDA;
}

struct lval lq_keep_value(struct lq *q, struct lval v, const struct lq_mark *m)
{
	if (scalar(&v)) {
		lq_release(q, m);
		return v;
	}
	struct copier tmp = {q, copier_malloc, NULL, 0, 0};
	struct lval t = copy_value(&tmp, v, 0);
	lq_release(q, m);
	struct copier back = {q, copier_arena, NULL, 0, 0};
	struct lval r = copy_value(&back, t, 0);
	for (size_t k = 0; k < tmp.n; k++)
		free(tmp.mallocs[k]);
	free(tmp.mallocs);
	return r;
}

void *lq_alloc_keep(struct lq *q, size_t n)
{
	struct lq_block *save = q->blocks;
	q->blocks = q->kept;
	void *p = lq_alloc(q, n);	/* a failure (longjmp) leaves kept blocks in blocks: */
	q->kept = q->blocks;		/* lq_free_arena frees both lists anyway */
	q->blocks = save;
	return p;
}

char *lq_strdup_keep(struct lq *q, const char *s, size_t n)
{
	char *d = lq_alloc_keep(q, n + 1);
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

struct lval lq_persist(struct lq *q, struct lval v)
{
	if (scalar(&v))
		return v;
	/* allocate from the kept blocks: swap them in while copying */
	struct lq_block *save = q->blocks;
	q->blocks = q->kept;
	struct copier c = {q, copier_arena, NULL, 0, 0};
	struct lval r = copy_value(&c, v, 0);
	q->kept = q->blocks;
	q->blocks = save;
	return r;
}

/* cancelled: a CANCEL frame (or the end of the connection) waits on q->fd. */
static bool cancelled(struct lq *q)
{
	return q->fd >= 0 && ag_cancel_waiting(q->fd);
}

void lq_poll(struct lq *q, const struct node *at)
{
	if ((++q->steps & 0xfff) != 0)
		return;
	if ((uint64_t)ag_now_ms() > q->deadline_ms)
		lq_raise(q, LQ_LIMIT, at, "the analysis reached its time limit");
	if (cancelled(q))
		lq_raise(q, LQ_CANCELLED, at, "cancelled");
}

/* ---- values ---- */

static inline struct lval lint(int64_t i)
{
	struct lval v = {LK_INT, {.i = i}};
	return v;
}
static inline struct lval lbool(bool b)
{
	struct lval v = {LK_BOOL, {.b = b}};
	return v;
}
static inline struct lval lfloat(double f)
{
	struct lval v = {LK_FLOAT, {.f = f}};
	return v;
}
static inline struct lval lstr(const char *s)
{
	struct lval v = {LK_STR, {.s = s}};
	return v;
}
static inline struct lval lidx(int k, uint32_t i)
{
	struct lval v = {(uint8_t)k, {.idx = i}};
	return v;
}
static inline struct lval lobjv(struct lobj *o)
{
	struct lval v = {LK_OBJ, {.o = o}};
	return v;
}

static struct lval llistv(struct lq *q, uint32_t n)
{
	struct llist *l = lq_alloc(q, sizeof *l);
	l->n = n;
	l->v = lq_alloc(q, ((size_t)n + 1) * sizeof *l->v);
	struct lval v = {LK_LIST, {.l = l}};
	return v;
}

const char *lq_kind_name(int k)
{
	static const char *const names[] = {"null", "bool", "int", "float", "string", "object",
					    "class", "classloader", "thread", "list", "struct",
					    "lambda", "entity", "ref_kind"};
	return k >= 0 && k <= LK_REFKIND ? names[k] : "?";
}

static const char *rk_name(int rk)
{
	return bi_refkind_name(rk);
}

/* lq_value_text: v as text, as eval_session.c's dsl_value_text writes it. */
const char *lq_value_text(struct lq *q, struct lval v)
{
	char buf[300];
	switch (v.k) {
	case LK_NULL: return "null";
	case LK_BOOL: return v.u.b ? "true" : "false";
	case LK_INT: snprintf(buf, sizeof buf, "%" PRId64, v.u.i); break;
	case LK_FLOAT: fmt_double(buf, sizeof buf, v.u.f, false); break;
	case LK_STR: return v.u.s;
	case LK_OBJ: {
		const struct lobj *o = v.u.o;
		uint64_t id = o->ref ? lq_address(o->ref) : 0;
		const char *t = lq_text(q, o);
		if (t) {
			char cut[200];
			snprintf(cut, sizeof cut, "%.60s%s", t, strlen(t) > 60 ? "..." : "");
			snprintf(buf, sizeof buf, "0x%" PRIx64 " java.lang.String \"%s\"", id, cut);
		} else {
			snprintf(buf, sizeof buf, "0x%" PRIx64 " %s", id,
				 o->cls < q->ncls ? q->cls[o->cls].name : "?");
		}
		break;
	}
	case LK_CLASS: snprintf(buf, sizeof buf, "class %s", q->cls[v.u.idx].name); break;
	case LK_LOADER:
		if (!v.u.idx)
			return "<bootstrap>";
		snprintf(buf, sizeof buf, "0x%" PRIx64 " %s", q->loaders[v.u.idx].id,
			 q->loaders[v.u.idx].name ? q->loaders[v.u.idx].name : "?");
		break;
	case LK_THREAD: {
		char *nm = lq_thread_name(q, v.u.idx);
		snprintf(buf, sizeof buf, "thread \"%s\"", nm ? nm : "?");
		break;
	}
	case LK_LIST: snprintf(buf, sizeof buf, "<list of %u>", v.u.l->n); break;
	case LK_STRUCT: return "<struct >";
	case LK_LAMBDA: return "<lambda>";
	case LK_ENTITY: return lq_value_text(q, v.u.ent->name);
	case LK_REFKIND: return rk_name(v.u.rk);
	default: return "?";
	}
	return lq_strdup(q, buf, strlen(buf));
}

static bool is_num(const struct lval *v)
{
	return v->k == LK_INT || v->k == LK_FLOAT;
}

static double num(const struct lval *v)
{
	return v->k == LK_INT ? (double)v->u.i : v->u.f;
}

/* obj_text: the text of a String object, or NULL (also for walk objects with none). */
static const char *obj_text(struct lq *q, const struct lobj *o)
{
	return lq_text(q, o);
}

static bool same_object(struct lq *q, const struct lobj *a, const struct lobj *b)
{
	if (a == b)
		return true;
	if (a->mirror || b->mirror)
		return a->mirror == b->mirror;
	if (a->ref && b->ref) {
		if (q->in_walk)
			lq_raise(q, LQ_UNSUPPORTED, NULL, "comparing objects during a heap walk");
		return (*q->jni)->IsSameObject(q->jni, a->ref, b->ref);
	}
	if (a->tag && a->tag == b->tag)
		return true;
	lq_raise(q, LQ_UNSUPPORTED, NULL, "comparing two objects a heap walk reports without "
		 "their identity");
}

static bool equal(struct lq *q, struct lval a, struct lval b)
{
	if (is_num(&a) && is_num(&b))
		return a.k == LK_INT && b.k == LK_INT ? a.u.i == b.u.i : num(&a) == num(&b);
	if (a.k == LK_OBJ && b.k == LK_STR) {
		struct lval t = a;
		a = b;
		b = t;
	}
	if (a.k == LK_STR && b.k == LK_OBJ) {
		const char *s = obj_text(q, b.u.o);
		return s && !strcmp(a.u.s, s);
	}
	if (a.k != b.k)
		return false;
	switch (a.k) {
	case LK_NULL: return true;
	case LK_BOOL: return a.u.b == b.u.b;
	case LK_STR: return !strcmp(a.u.s, b.u.s);
	case LK_OBJ: return same_object(q, a.u.o, b.u.o);
	case LK_CLASS: case LK_LOADER: case LK_THREAD: return a.u.idx == b.u.idx;
	case LK_ENTITY: return a.u.ent == b.u.ent;
	case LK_REFKIND: return a.u.rk == b.u.rk;
	default: return false;
	}
}

int lq_compare(struct lq *q, const struct node *at, struct lval a, struct lval b)
{
	if (is_num(&a) && is_num(&b)) {
		if (a.k == LK_INT && b.k == LK_INT)
			return a.u.i < b.u.i ? -1 : a.u.i > b.u.i;
		double x = num(&a), y = num(&b);
		return x < y ? -1 : x > y;
	}
	const char *sa = a.k == LK_STR ? a.u.s : a.k == LK_OBJ ? obj_text(q, a.u.o) : NULL;
	const char *sb = b.k == LK_STR ? b.u.s : b.k == LK_OBJ ? obj_text(q, b.u.o) : NULL;
	if (sa && sb && (a.k == LK_STR || b.k == LK_STR))
		return strcmp(sa, sb);
	lq_raise(q, LQ_ERROR, at, "cannot order %s and %s", lq_kind_name(a.k), lq_kind_name(b.k));
}

bool lq_truth(struct lq *q, const struct node *at, struct lval v, const char *what)
{
	if (v.k != LK_BOOL)
		lq_raise(q, LQ_ERROR, at, "%s must be a bool, not %s", what, lq_kind_name(v.k));
	return v.u.b;
}

/* ---- scopes ---- */

static struct lval *frame_find(struct lframe *f, const char *name)
{
	for (; f; f = f->up)
		for (int k = 0; k < f->n; k++)
			if (!strcmp(f->names[k], name))
				return &f->vals[k];
	return NULL;
}

static void frame_set(struct lq *q, struct lframe *f, const char *name, struct lval v)
{
	for (int k = 0; k < f->n; k++)
		if (!strcmp(f->names[k], name)) {
			f->vals[k] = v;
			return;
		}
	if (f->n == f->cap) {
		int cap = f->cap ? f->cap * 2 : 4;
		const char **nn = lq_alloc(q, (size_t)cap * sizeof *nn);
		struct lval *nv = lq_alloc(q, (size_t)cap * sizeof *nv);
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

static struct lframe *frame_copy(struct lq *q, const struct lframe *f)
{
	if (!f)
		return NULL;
	struct lframe *c = lq_alloc(q, sizeof *c);
	c->n = c->cap = f->n;
	c->names = lq_alloc(q, (size_t)f->n * sizeof *c->names + 1);
	c->vals = lq_alloc(q, (size_t)f->n * sizeof *c->vals + 1);
	if (f->n) {
		memcpy(c->names, f->names, (size_t)f->n * sizeof *c->names);
		memcpy(c->vals, f->vals, (size_t)f->n * sizeof *c->vals);
	}
	c->up = frame_copy(q, f->up);
	return c;
}

static struct lval *prop_find(struct linst *in, const char *name)
{
	if (!in)
		return NULL;
	for (int k = 0; k < in->nprops; k++)
		if (!strcmp(in->prop_names[k], name))
			return &in->props[k];
	return NULL;
}

static struct lbind *global_find(struct lq *q, const char *name)
{
	for (struct lbind *b = q->globals; b; b = b->next)
		if (!strcmp(b->name, name))
			return b;
	return NULL;
}

static void name_set(struct lq *q, const char *name, struct lval v)
{
	struct lbind *b = global_find(q, name);
	if (!b) {
		b = lq_alloc(q, sizeof *b);
		b->name = name;
		b->next = q->globals;
		q->globals = b;
	}
	b->v = v;
}

static struct lval ident(struct lq *q, struct lframe *f, struct node *n)
{
	const char *name = n->name;
	if (n->ctx && n->ctx < 5 && q->in_trav) {
		switch (n->ctx) {
		case 1: return q->this_v;
		case 2: return q->referrer;
		case 3: if (q->entity.k == LK_ENTITY) return q->entity; break;
		default: { struct lval r = {LK_REFKIND, {.rk = q->rk}}; return r; }
		}
	}
	struct lval *v = frame_find(f, name);
	if (v)
		return *v;
	if ((v = prop_find(q->cur, name)))
		return *v;
	const struct bi_row *bi = bi_of(n, BI_R_GLOBAL);
	enum bi_id id = bi ? bi->id : BI_NIDS;
	if (id >= BI_THIS && id <= BI_REF_KIND) {
		n->ctx = (uint8_t)(id - BI_THIS + 1);
		if (id == BI_ENTITY && q->entity.k == LK_ENTITY)
			return q->entity;
		if (!q->in_trav)
			lq_raise(q, LQ_ERROR, n, "%s is only defined while a set type's instances "
				 "are built (in roots, membership, on_inclusion)", name);
		if (id == BI_THIS)
			return q->this_v;
		if (id == BI_REFERRER)
			return q->referrer;
		return (struct lval){LK_REFKIND, {.rk = q->rk}};
	}
	struct lbind *b = global_find(q, name);
	if (b)
		return b->v;
	if (bi && bi->where != BI_ANYWHERE)	/* allocations */
		lq_raise(q, LQ_UNSUPPORTED, n, "the allocation recording is read by heapsh");
	if (bi)
		return lq_heap_list(q, n, bi);
	for (int k = 0; k <= RK_NONE; k++)
		if (!strcmp(name, rk_name(k))) {
			struct lval r = {LK_REFKIND, {.rk = k}};
			return r;
		}
	/* heapsh names what it knows; this is a name the program did not carry */
	lq_raise(q, LQ_UNSUPPORTED, n, "the name '%s' is not part of the program", name);
}

/* ---- lambdas ---- */

struct lval lq_apply(struct lq *q, const struct node *at, struct lval fn, int nargs,
		     const struct lval *args)
{
	if (fn.k != LK_LAMBDA)
		lq_raise(q, LQ_ERROR, at, "expected a lambda [it | ...], not %s", lq_kind_name(fn.k));
	struct node *lam = fn.u.fn->lam;
	if (q->calls >= LQ_MAX_FRAMES)
		lq_raise(q, LQ_ERROR, at, "lambdas call each other more than 1000 deep (a lambda "
			 "that calls itself?)");
	if (lam->nparams != nargs && !(lam->nparams == 0 && nargs == 1))
		lq_raise(q, LQ_ERROR, lam, "this lambda takes %d parameter%s, but is called with %d",
			 lam->nparams, lam->nparams == 1 ? "" : "s", nargs);
	struct lframe fr = {fn.u.fn->env, 0, 0, NULL, NULL};
	const char *names[8];
	struct lval vals[8];
	if (lam->nparams <= 8) {
		fr.names = names;
		fr.vals = vals;
		fr.cap = 8;
	}
	for (int k = 0; k < lam->nparams; k++)
		frame_set(q, &fr, lam->params[k].name, args[k]);
	q->calls++;
	for (int k = 0; k < lam->nitems; k++) {
		struct node *s = lam->items[k];
		if (s->kind == N_ASSIGN) {
			struct lval v = lq_eval(q, &fr, s->a);
			struct lval *slot = frame_find(&fr, s->name);
			if (!slot)
				slot = prop_find(q->cur, s->name);
			if (!slot) {
				struct lbind *b = global_find(q, s->name);
				if (b)
					lq_raise(q, LQ_UNSUPPORTED, s, "it assigns the session's name "
						 "'%s', which lives in heapsh", s->name);
			}
			if (slot && q->order_free && v.k == LK_FLOAT && s->a->kind == N_BIN &&
			    s->a->op == OP_ADD && prop_find(q->cur, s->name) == slot)
				lq_raise(q, LQ_UNSUPPORTED, s, "on_inclusion adds floats into %s in an "
					 "order the JVM's walk decides (floating-point sums depend on "
					 "it)", s->name);
			bool local = false;
			for (int j = 0; slot && j < fr.n; j++)
				local |= &fr.vals[j] == slot;
			if (slot)
				*slot = local ? v : lq_persist(q, v);	/* it outlives this call */
			else
				frame_set(q, &fr, s->name, v);
		} else {
			lq_eval(q, &fr, s);
		}
	}
	struct lval r = lam->result ? lq_eval(q, &fr, lam->result) : LNULL;
	q->calls--;
	return r;
}

static struct lval call1(struct lq *q, const struct node *at, struct lval fn, struct lval x)
{
	return lq_apply(q, at, fn, 1, &x);
}

/* ---- list members ---- */

struct builder {
	struct lval *v;
	uint32_t n, cap;
};

static void build_add(struct lq *q, struct builder *b, struct lval v)
{
	if (b->n == b->cap) {
		uint32_t cap = b->cap ? b->cap * 2 : 16;
		struct lval *nv = lq_alloc(q, (size_t)cap * sizeof *nv);
		if (b->n)
			memcpy(nv, b->v, (size_t)b->n * sizeof *nv);
		b->v = nv;
		b->cap = cap;
	}
	b->v[b->n++] = v;
}

static struct lval build_done(struct lq *q, struct builder *b)
{
	struct llist *l = lq_alloc(q, sizeof *l);
	l->n = b->n;
	l->v = b->v ? b->v : lq_alloc(q, sizeof *l->v);
	struct lval v = {LK_LIST, {.l = l}};
	return v;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static uint64_t key_hash(struct lq *q, struct lval v)
{
	switch (v.k) {
	case LK_INT: return (uint64_t)v.u.i * 0x9E3779B97F4A7C15ULL;
	case LK_FLOAT:
		if (v.u.f >= -9223372036854775808.0 && v.u.f < 9223372036854775808.0 &&
		    v.u.f == (double)(int64_t)v.u.f)
			return (uint64_t)(int64_t)v.u.f * 0x9E3779B97F4A7C15ULL;
		return 7;
	case LK_STR: return str_hash(v.u.s);
	case LK_OBJ: {
		const char *t = obj_text(q, v.u.o);
		return t ? str_hash(t) : 5;
	}
	case LK_BOOL: return v.u.b ? 1 : 2;
	case LK_CLASS: case LK_LOADER: case LK_THREAD: return (uint64_t)v.u.idx * 31 + v.k;
	case LK_REFKIND: return (uint64_t)v.u.rk + 11;
	default: return 3;
	}
}

struct sort_item {
	struct lval key, item;
};

static struct lq *sort_q;
static const struct node *sort_at;

static int by_key(const void *a, const void *b)
{
	const struct sort_item *x = a, *y = b;
	return lq_compare(sort_q, sort_at, x->key, y->key);
}

/*
 * lq_list_member: m applied to a list of values (the heap's objects go to
 * lq_objects). Exported for lqheap.c, which applies members to the lists it
 * builds.
 */
struct lval lq_list_member(struct lq *q, struct node *n, const struct bi_row *r,
			   struct llist *l, int nargs, struct lval *args)
{
	const char *m = n->name;
	struct lval fn = nargs ? args[0] : LNULL, x;
	if (!r) {
		char all[300];
		lq_raise(q, LQ_ERROR, n, "a list has no member '%s' (members: %s)", m,
			 bi_list(BI_R_LIST, all, sizeof all));
	}
	if (r->lambda && r->min_args == 1 && r->max_args == 1 && nargs != 1)
		lq_raise(q, LQ_ERROR, n, "%s takes one lambda, e.g. %s([it | ...])", m, m);
	if (l->all)
		return lq_objects(q, n, r, nargs, args);
	switch (r->id) {
	case BI_LIST_FILTER: case BI_LIST_EXISTS: case BI_LIST_FIRST: {
		bool first = r->id == BI_LIST_FIRST, exists = r->id == BI_LIST_EXISTS;
		if (first && !nargs)
			return l->n ? l->v[0] : LNULL;
		struct builder b = {NULL, 0, 0};
		for (uint32_t k = 0; k < l->n; k++) {
			x = l->v[k];
			lq_poll(q, n);
			struct lq_mark mk;
			lq_mark(q, &mk);
			bool yes = lq_truth(q, n, call1(q, n, fn, x), "the filter's result");
			lq_release(q, &mk);
			if (yes) {
				if (exists)
					return lbool(true);
				if (first)
					return x;
				build_add(q, &b, x);
			}
		}
		if (exists)
			return lbool(false);
		if (first)
			return LNULL;
		return build_done(q, &b);
	}
	case BI_LIST_MAP: {
		struct builder b = {NULL, 0, 0};
		build_add(q, &b, LNULL);	/* room before the first mark */
		b.n = 0;
		for (uint32_t k = 0; k < l->n; k++) {
			lq_poll(q, n);
			if (b.n == b.cap) {	/* grow the result outside the element's mark */
				struct lval *nv = lq_alloc(q, (size_t)b.cap * 2 * sizeof *nv);
				memcpy(nv, b.v, (size_t)b.n * sizeof *nv);
				b.v = nv;
				b.cap *= 2;
			}
			struct lq_mark mk;
			lq_mark(q, &mk);
			b.v[b.n++] = lq_keep_value(q, call1(q, n, fn, l->v[k]), &mk);
		}
		return build_done(q, &b);
	}
	case BI_LIST_FOREACH:
		for (uint32_t k = 0; k < l->n; k++) {
			lq_poll(q, n);
			struct lq_mark mk;
			lq_mark(q, &mk);
			call1(q, n, fn, l->v[k]);
			lq_release(q, &mk);
		}
		return LNULL;
	case BI_LIST_COUNT: case BI_LIST_LENGTH: {
		if (!nargs)
			return lint(l->n);
		int64_t c = 0;
		for (uint32_t k = 0; k < l->n; k++) {
			lq_poll(q, n);
			struct lq_mark mk;
			lq_mark(q, &mk);
			c += lq_truth(q, n, call1(q, n, fn, l->v[k]), "the count's condition");
			lq_release(q, &mk);
		}
		return lint(c);
	}
	case BI_LIST_SUM: case BI_LIST_MIN: case BI_LIST_MAX: {
		int which = r->id == BI_LIST_SUM ? 0 : r->id == BI_LIST_MIN ? 1 : 2;
		struct lval acc = which ? LNULL : lint(0);
		for (uint32_t k = 0; k < l->n; k++) {
			lq_poll(q, n);
			struct lq_mark mk;
			lq_mark(q, &mk);
			struct lval y = nargs ? lq_keep_value(q, call1(q, n, fn, l->v[k]), &mk)
					      : l->v[k];
			if (which == 0) {
				if (!is_num(&y))
					lq_raise(q, LQ_ERROR, n, "sum adds numbers, not %s",
						 lq_kind_name(y.k));
				acc = acc.k == LK_INT && y.k == LK_INT
					      ? lint((int64_t)((uint64_t)acc.u.i + (uint64_t)y.u.i))
					      : lfloat(num(&acc) + num(&y));
			} else if (acc.k == LK_NULL || (which == 1 ? lq_compare(q, n, y, acc) < 0
								   : lq_compare(q, n, y, acc) > 0)) {
				acc = y;
			}
		}
		return acc;
	}
	case BI_LIST_SORT_BY: case BI_LIST_TOP: {
		bool top = r->id == BI_LIST_TOP;
		int64_t limit = -1;
		if (top) {
			if (nargs != 2 || args[0].k != LK_INT)
				lq_raise(q, LQ_ERROR, n, "top takes a count and a lambda: top(10, "
					 "[it | it.size])");
			limit = args[0].u.i;
			fn = args[1];
		}
		struct sort_item *items = lq_alloc(q, ((size_t)l->n + 1) * sizeof *items);
		for (uint32_t k = 0; k < l->n; k++) {
			lq_poll(q, n);
			items[k].item = l->v[k];
			struct lq_mark mk;
			lq_mark(q, &mk);
			items[k].key = lq_keep_value(q, call1(q, n, fn, l->v[k]), &mk);
		}
		sort_q = q;
		sort_at = n;
		qsort(items, l->n, sizeof *items, by_key);
		struct builder b = {NULL, 0, 0};
		if (top)
			for (uint32_t j = 0; j < l->n && (int64_t)j < limit; j++)
				build_add(q, &b, items[l->n - 1 - j].item);
		else
			for (uint32_t j = 0; j < l->n; j++)
				build_add(q, &b, items[j].item);
		return build_done(q, &b);
	}
	case BI_LIST_GROUP_BY: {
		struct lval *keys = NULL;
		struct builder *groups = NULL;
		uint32_t ng = 0, cap = 0, hcap = 64;
		uint32_t *slots = lq_alloc(q, hcap * sizeof *slots);
		for (uint32_t k = 0; k < l->n; k++) {
			lq_poll(q, n);
			struct lval key = call1(q, n, fn, l->v[k]);
			uint64_t hv = key_hash(q, key);
			uint32_t g = UINT32_MAX, s = (uint32_t)hv & (hcap - 1);
			while (slots[s]) {
				if (equal(q, keys[slots[s] - 1], key)) {
					g = slots[s] - 1;
					break;
				}
				s = (s + 1) & (hcap - 1);
			}
			if (g == UINT32_MAX) {
				if (ng == cap) {
					cap = cap ? cap * 2 : 16;
					struct lval *nk = lq_alloc(q, cap * sizeof *nk);
					struct builder *nb = lq_alloc(q, cap * sizeof *nb);
					if (ng) {
						memcpy(nk, keys, ng * sizeof *nk);
						memcpy(nb, groups, ng * sizeof *nb);
					}
					keys = nk;
					groups = nb;
				}
				g = ng++;
				keys[g] = key;
				slots[s] = g + 1;
				if (ng * 2 > hcap) {
					hcap *= 2;
					slots = lq_alloc(q, hcap * sizeof *slots);
					for (uint32_t j = 0; j < ng; j++) {
						uint32_t t = (uint32_t)key_hash(q, keys[j]) & (hcap - 1);
						while (slots[t])
							t = (t + 1) & (hcap - 1);
						slots[t] = j + 1;
					}
				}
			}
			build_add(q, &groups[g], l->v[k]);
		}
		struct lval out = llistv(q, ng);
		static const char *const names[] = {"key", "count", "items"};
		for (uint32_t g = 0; g < ng; g++) {
			struct lstruct *st = lq_alloc(q, sizeof *st);
			st->n = 3;
			st->names = (const char **)names;
			st->vals = lq_alloc(q, 3 * sizeof *st->vals);
			st->vals[0] = keys[g];
			st->vals[1] = lint(groups[g].n);
			st->vals[2] = build_done(q, &groups[g]);
			out.u.l->v[g].k = LK_STRUCT;
			out.u.l->v[g].u.st = st;
		}
		return out;
	}
	case BI_LIST_CONTAINS:
		if (nargs != 1)
			lq_raise(q, LQ_ERROR, n, "contains takes one value");
		for (uint32_t k = 0; k < l->n; k++)
			if (equal(q, l->v[k], args[0]))
				return lbool(true);
		return lbool(false);
	default:
		break;
	}
	lq_raise(q, LQ_UNSUPPORTED, n, "the list member '%s' inside the JVM", m);
}

/* ---- object, class, loader and thread members ---- */

static struct lval object_member(struct lq *q, struct node *n, struct lobj *o)
{
	const char *m = n->name;
	if (!o->mirror && o->cls < q->ncls && !q->cls[o->cls].elem) {
		struct lfield *f = lq_field(q, o->cls, m);
		if (f)
			return lq_field_value(q, n, o, f);
	}
	bool array = !o->mirror && o->cls < q->ncls && q->cls[o->cls].elem;
	const struct bi_row *r = bi_of(n, BI_R_OBJECT);
	if (r && r->where != BI_ANYWHERE)
		lq_raise(q, LQ_UNSUPPORTED, n, "'%s' needs the whole heap graph (a snapshot)", m);
	switch (r ? r->id : BI_NIDS) {
	case BI_OBJ_CLASS:
		return lidx(LK_CLASS, o->cls);
	case BI_OBJ_SIZE:
		return lint((int64_t)lq_shallow(q, o));
	case BI_OBJ_ID:
		if (o->mirror)
			return lint((int64_t)q->cls[o->mirror - 1].id);
		if (!o->ref)
			lq_raise(q, LQ_UNSUPPORTED, n, "an object's id during a heap walk");
		return lint((int64_t)lq_address(o->ref));
	case BI_OBJ_LENGTH:
		if (array)
			return lint(o->length);
		break;
	case BI_OBJ_TEXT: {
		const char *s = obj_text(q, o);
		if (s)
			return lstr(s);
		break;
	}
	case BI_OBJ_KIND:
		return lstr(o->mirror ? "class" : !array ? "instance"
			    : q->cls[o->cls].elem == 'L' || q->cls[o->cls].elem == '[' ? "object array"
			    : "primitive array");
	case BI_OBJ_HEAP:
		return LNULL;	/* Android's heaps; a HotSpot JVM has one heap, as on its dumps */
	default:
		break;
	}
	lq_raise(q, LQ_ERROR, n, "class %s has no field '%s'", q->cls[o->cls].name, m);
}

static struct lval class_member(struct lq *q, struct node *n, uint32_t c)
{
	struct lclass *k = &q->cls[c];
	const char *m = n->name;
	const struct bi_row *r = bi_of(n, BI_R_CLASS);
	if (q->in_walk && (!r || !(r->flags & BI_WALK)))
		lq_raise(q, LQ_UNSUPPORTED, n, "'%s' of a class during a heap walk", m);
	switch (r ? r->id : BI_NIDS) {
	case BI_CLASS_NAME:
		return lstr(k->name);
	case BI_CLASS_LOADER:
		return lidx(LK_LOADER, k->loader);
	case BI_CLASS_SUPER:
		return k->super == LQ_NONE ? LNULL : lidx(LK_CLASS, k->super);
	case BI_CLASS_ID:
		return lint((int64_t)k->id);
	case BI_CLASS_OBJECT: {
		struct lobj *o = lq_alloc(q, sizeof *o);
		o->ref = k->ref;
		o->cls = q->c_class;
		o->mirror = c + 1;
		o->length = -1;
		return lobjv(o);
	}
	case BI_CLASS_INSTANCE_SIZE:
		lq_class_fields(q, c);
		return lint(k->elem ? 0 : k->jvm_size ? k->jvm_size : k->inst_size);
	case BI_CLASS_INSTANCES:
		return lq_instances(q, n, c);
	case BI_CLASS_COUNT: case BI_CLASS_SHALLOW: {
		uint64_t cnt, bytes;
		lq_class_count(q, c, &cnt, &bytes);
		return lint((int64_t)(r->id == BI_CLASS_COUNT ? cnt : bytes));
	}
	default:
		break;
	}
	lq_class_fields(q, c);
	for (uint32_t s = 0; s < k->nstatics; s++)
		if (!strcmp(k->statics[s].name, m))
			return lq_static_value(q, n, c, &k->statics[s]);
	lq_raise(q, LQ_ERROR, n, "class %s has no static or member '%s'", k->name, m);
}

static struct lval loader_member(struct lq *q, struct node *n, uint32_t ld)
{
	const char *m = n->name;
	struct lloader *l = &q->loaders[ld];
	char all[300];
	switch (bi_of(n, BI_R_LOADER) ? n->bi->id : BI_NIDS) {
	case BI_LOADER_ID:
		return lint((int64_t)l->id);
	case BI_LOADER_OBJECT:
		if (!l->ref)
			return LNULL;
		return lobjv(lq_obj_of_ref(q, l->ref));
	case BI_LOADER_NAME:
		return lstr(l->name ? l->name : "?");
	case BI_LOADER_CLASSES: {
		struct builder b = {NULL, 0, 0};
		for (uint32_t c = 0; c < q->ncls; c++)
			if (q->cls[c].loader == ld)
				build_add(q, &b, lidx(LK_CLASS, c));
		return build_done(q, &b);
	}
	default:
		lq_raise(q, LQ_ERROR, n, "a classloader has no member '%s' (members: %s)", m,
			 bi_list(BI_R_LOADER, all, sizeof all));
	}
}

static struct lval thread_member(struct lq *q, struct node *n, uint32_t t)
{
	const char *m = n->name;
	char all[300];
	const struct bi_row *r = bi_of(n, BI_R_THREAD);
	if (r && r->where != BI_ANYWHERE)	/* roots */
		lq_raise(q, LQ_UNSUPPORTED, n, "a thread's %s are read from a heap dump", m);
	switch (r ? r->id : BI_NIDS) {
	case BI_THREAD_NAME: {
		char *s = lq_thread_name(q, t);
		return s ? lstr(s) : LNULL;
	}
	case BI_THREAD_OBJECT:
		return lobjv(lq_obj_of_ref(q, q->threads[t]));
	case BI_THREAD_ID:
		return lint((int64_t)lq_address(q->threads[t]));
	case BI_THREAD_FRAMES: {
		jint c = 0;
		if ((*q->jv)->GetFrameCount(q->jv, q->threads[t], &c) != JVMTI_ERROR_NONE)
			c = 0;
		return lint(c);
	}
	default:
		lq_raise(q, LQ_ERROR, n, "a thread has no member '%s' (members: %s)", m,
			 bi_list(BI_R_THREAD, all, sizeof all));
	}
}

static struct lval member(struct lq *q, struct node *n, struct lval recv, int nargs,
			  struct lval *args)
{
	const char *m = n->name;
	enum bi_recv r = BI_NRECV;
	switch (recv.k) {
	case LK_LIST: r = BI_R_LIST; break;
	case LK_OBJ: r = BI_R_OBJECT; break;
	case LK_CLASS: r = BI_R_CLASS; break;
	case LK_LOADER: r = BI_R_LOADER; break;
	case LK_THREAD: r = BI_R_THREAD; break;
	case LK_ENTITY: r = BI_R_ENTITY; break;
	case LK_STR: r = BI_R_STRING; break;
	default: break;
	}
	char why[128];
	const char *bad;
	if (nargs && r != BI_NRECV && (bad = bi_arity(bi_of(n, r), nargs, why, sizeof why)))
		lq_raise(q, LQ_ERROR, n, "%s", bad);
	if (q->in_walk && recv.k != LK_OBJ && recv.k != LK_ENTITY && recv.k != LK_STR &&
	    recv.k != LK_CLASS && recv.k != LK_LIST && recv.k != LK_STRUCT && recv.k != LK_NULL)
		lq_raise(q, LQ_UNSUPPORTED, n, "'%s' of a %s during a heap walk", m,
			 lq_kind_name(recv.k));
	switch (recv.k) {
	case LK_LIST:
		return lq_list_member(q, n, bi_of(n, BI_R_LIST), recv.u.l, nargs, args);
	case LK_OBJ:
		return object_member(q, n, recv.u.o);
	case LK_CLASS:
		return class_member(q, n, recv.u.idx);
	case LK_LOADER:
		return loader_member(q, n, recv.u.idx);
	case LK_THREAD:
		return thread_member(q, n, recv.u.idx);
	case LK_ENTITY: {
		enum bi_id id = bi_of(n, BI_R_ENTITY) ? n->bi->id : BI_NIDS;
		if (id == BI_ENTITY_NAME)
			return recv.u.ent->name;
		if (id == BI_ENTITY_MEMBERS)
			return lint((int64_t)recv.u.ent->members);
		struct lval *p = prop_find(recv.u.ent, m);
		if (p)
			return *p;
		lq_raise(q, LQ_ERROR, n, "ENTITY has no property '%s'", m);
	}
	case LK_STRUCT:
		for (int k = 0; k < recv.u.st->n; k++)
			if (!strcmp(recv.u.st->names[k], m))
				return recv.u.st->vals[k];
		lq_raise(q, LQ_ERROR, n, "struct has no field '%s'", m);
	case LK_STR:
		if (bi_of(n, BI_R_STRING) && n->bi->id == BI_STR_LENGTH) {
			int64_t c = 0;
			for (const unsigned char *p = (const unsigned char *)recv.u.s; *p; p++)
				c += (*p & 0xC0) != 0x80;
			return lint(c);
		}
		break;
	case LK_NULL:
		lq_raise(q, LQ_ERROR, n, "null has no member '%s' (a null reference was "
			 "dereferenced)", m);
	default:
		break;
	}
	lq_raise(q, LQ_ERROR, n, "%s has no member '%s'", lq_kind_name(recv.k), m);
}

/* ---- expressions ---- */

static struct lval arith(struct lq *q, struct node *n, struct lval a, struct lval b)
{
	if (n->op == OP_ADD && (a.k == LK_STR || b.k == LK_STR)) {
		const char *x = a.k == LK_STR ? a.u.s : lq_value_text(q, a);
		const char *y = b.k == LK_STR ? b.u.s : lq_value_text(q, b);
		size_t lx = strlen(x), ly = strlen(y);
		char *s = lq_alloc(q, lx + ly + 1);
		memcpy(s, x, lx);
		memcpy(s + lx, y, ly);
		return lstr(s);
	}
	if (!is_num(&a) || !is_num(&b))
		lq_raise(q, LQ_ERROR, n, "cannot %s %s and %s", n->op == OP_ADD ? "add"
			 : n->op == OP_SUB ? "subtract" : n->op == OP_MUL ? "multiply" : "divide",
			 lq_kind_name(a.k), lq_kind_name(b.k));
	if (a.k == LK_INT && b.k == LK_INT) {
		uint64_t x = (uint64_t)a.u.i, y = (uint64_t)b.u.i;
		switch (n->op) {
		case OP_ADD: return lint((int64_t)(x + y));
		case OP_SUB: return lint((int64_t)(x - y));
		case OP_MUL: return lint((int64_t)(x * y));
		default:
			if (b.u.i == 0)
				lq_raise(q, LQ_ERROR, n->b, "division by zero");
			if (b.u.i == -1)
				return lint((int64_t)(0 - x));
			return lint(a.u.i / b.u.i);
		}
	}
	double x = num(&a), y = num(&b);
	switch (n->op) {
	case OP_ADD: return lfloat(x + y);
	case OP_SUB: return lfloat(x - y);
	case OP_MUL: return lfloat(x * y);
	default:
		if (y == 0)
			lq_raise(q, LQ_ERROR, n->b, "division by zero");
		return lfloat(x / y);
	}
}

/* owner: the instance id that holds object o, 0 none. */
static uint32_t owner(struct lq *q, const struct lobj *o)
{
	if (o->mirror)
		return q->cls[o->mirror - 1].owner;
	jlong t = o->tag;
	if (!t && o->ref) {
		if (q->in_walk)
			lq_raise(q, LQ_UNSUPPORTED, NULL, "membership of an object during a heap walk");
		(*q->jv)->GetTag(q->jv, o->ref, &t);
	}
	struct lentry *e = lq_entry(q, t);
	return e ? e->inst : 0;
}

static bool in_entity(struct lq *q, struct lval v, struct linst *ent)
{
	switch (v.k) {
	case LK_OBJ:
		return owner(q, v.u.o) == ent->id;
	case LK_CLASS:
		return q->cls[v.u.idx].owner == ent->id;
	case LK_LOADER: {
		if (!v.u.idx)
			return false;
		struct lloader *l = &q->loaders[v.u.idx];
		struct lobj o = {l->ref, 0, 0, -1, l->tag, NULL};
		return owner(q, &o) == ent->id;
	}
	case LK_THREAD: {
		struct lobj o = {q->threads[v.u.idx], 0, 0, -1,
				 q->thread_tags ? q->thread_tags[v.u.idx] : 0, NULL};
		return owner(q, &o) == ent->id;
	}
	default:
		return false;
	}
}

/* class_set: which classes `is name` accepts (cached in the node); an error if none or ambiguous. */
static const uint8_t *class_set(struct lq *q, struct node *at, const char *name)
{
	if (at->class_bits)
		return at->class_bits;
	const char **names = lq_alloc_keep(q, ((size_t)q->ncls + 1) * sizeof *names);
	uint32_t *m = lq_alloc_keep(q, ((size_t)q->ncls + 1) * sizeof *m);
	for (uint32_t c = 0; c < q->ncls; c++)
		names[c] = q->cls[c].name;
	uint32_t n = cn_select(name, names, q->ncls, m);
	if (!n)
		lq_raise(q, LQ_ERROR, at, "no class named '%s' in this heap", name);
	for (uint32_t k = 1; k < n; k++)
		if (strcmp(q->cls[m[k]].name, q->cls[m[0]].name))
			lq_raise(q, LQ_ERROR, at, "'%s' is ambiguous: %s, %s, ...; write the full name",
				 name, q->cls[m[0]].name, q->cls[m[k]].name);
	uint8_t *bits = lq_alloc_keep(q, (size_t)q->ncls / 8 + 1);
	for (uint32_t c = 0; c < q->ncls; c++)
		for (uint32_t k = 0; k < n; k++)
			if (lq_is_subclass(q, c, m[k])) {
				bits[c / 8] |= (uint8_t)(1u << (c % 8));
				break;
			}
	at->class_bits = bits;
	return bits;
}

const uint8_t *lq_class_set(struct lq *q, struct node *at, const char *name)
{
	return class_set(q, at, name);
}

struct lval lq_eval(struct lq *q, struct lframe *f, struct node *n)
{
	switch (n->kind) {
	case N_INT: return lint(n->i);
	case N_FLOAT: return lfloat(n->f);
	case N_STR: return lstr(n->s);
	case N_BOOL: return lbool(n->i != 0);
	case N_NULL: return LNULL;
	case N_IDENT: return ident(q, f, n);
	case N_LIST: {
		struct builder b = {NULL, 0, 0};
		for (int k = 0; k < n->nitems; k++)
			build_add(q, &b, lq_eval(q, f, n->items[k]));
		return build_done(q, &b);
	}
	case N_LAMBDA: {
		struct lclosure *c = lq_alloc(q, sizeof *c);
		c->lam = n;
		c->env = frame_copy(q, f);
		struct lval v = {LK_LAMBDA, {.fn = c}};
		return v;
	}
	case N_MEMBER: {
		struct lval r = lq_eval(q, f, n->a);
		return member(q, n, r, 0, NULL);
	}
	case N_CALL: {
		struct lval r = lq_eval(q, f, n->a);
		struct lval args[8];
		if (n->nitems > 8)
			lq_raise(q, LQ_ERROR, n, "too many arguments");
		for (int k = 0; k < n->nitems; k++)
			args[k] = lq_eval(q, f, n->items[k]);
		return member(q, n, r, n->nitems, args);
	}
	case N_NEG: {
		struct lval v = lq_eval(q, f, n->a);
		if (v.k == LK_INT)
			return lint((int64_t)(0 - (uint64_t)v.u.i));
		if (v.k == LK_FLOAT)
			return lfloat(-v.u.f);
		lq_raise(q, LQ_ERROR, n, "cannot negate %s", lq_kind_name(v.k));
	}
	case N_NOT:
		return lbool(!lq_truth(q, n, lq_eval(q, f, n->a), "the operand of 'not'"));
	case N_BIN: {
		if (n->op == OP_AND)
			return lbool(lq_truth(q, n->a, lq_eval(q, f, n->a), "the left side of 'and'") &&
				     lq_truth(q, n->b, lq_eval(q, f, n->b), "the right side of 'and'"));
		if (n->op == OP_OR)
			return lbool(lq_truth(q, n->a, lq_eval(q, f, n->a), "the left side of 'or'") ||
				     lq_truth(q, n->b, lq_eval(q, f, n->b), "the right side of 'or'"));
		struct lval a = lq_eval(q, f, n->a), b = lq_eval(q, f, n->b);
		switch (n->op) {
		case OP_EQ: return lbool(equal(q, a, b));
		case OP_NE: return lbool(!equal(q, a, b));
		case OP_LT: return lbool(lq_compare(q, n, a, b) < 0);
		case OP_LE: return lbool(lq_compare(q, n, a, b) <= 0);
		case OP_GT: return lbool(lq_compare(q, n, a, b) > 0);
		case OP_GE: return lbool(lq_compare(q, n, a, b) >= 0);
		default: return arith(q, n, a, b);
		}
	}
	case N_IS: {
		struct lval v = lq_eval(q, f, n->a);
		const uint8_t *bits = class_set(q, n, n->name);
		if (v.k == LK_NULL)
			return lbool(false);
		if (v.k != LK_OBJ)
			lq_raise(q, LQ_ERROR, n->a, "'is' tests objects, not %s", lq_kind_name(v.k));
		uint32_t c = v.u.o->cls;
		return lbool(c < q->ncls && (bits[c / 8] & (1u << (c % 8))));
	}
	case N_IN_UNASSIGNED: {
		struct lval v = lq_eval(q, f, n->a);
		if (!q->in_trav)
			lq_raise(q, LQ_ERROR, n, "'in Unassigned' is only defined while a set type's "
				 "instances are built");
		if (v.k != LK_OBJ)
			return lbool(v.k == LK_NULL ? false : true);
		return lbool(owner(q, v.u.o) == 0);
	}
	case N_IN: {
		struct lval v = lq_eval(q, f, n->a), set = lq_eval(q, f, n->b);
		if (set.k == LK_ENTITY)
			return lbool(in_entity(q, v, set.u.ent));
		if (set.k == LK_LIST) {
			if (set.u.l->all)
				lq_raise(q, LQ_UNSUPPORTED, n->b, "'in objects'");
			for (uint32_t k = 0; k < set.u.l->n; k++)
				if (equal(q, v, set.u.l->v[k]))
					return lbool(true);
			return lbool(false);
		}
		lq_raise(q, LQ_ERROR, n->b, "'in' wants ENTITY, Unassigned or a list, not %s",
			 lq_kind_name(set.k));
	}
	case N_ASSIGN:
		lq_raise(q, LQ_ERROR, n, "an assignment is only allowed inside a lambda");
	default:
		lq_raise(q, LQ_UNSUPPORTED, n, "this kind of expression");
	}
}

/* ---- statements ---- */

static struct lval default_of(const char *type)
{
	if (!strcmp(type, "int"))
		return lint(0);
	if (!strcmp(type, "float"))
		return lfloat(0);
	if (!strcmp(type, "bool"))
		return lbool(false);
	if (!strcmp(type, "string"))
		return lstr("");
	return LNULL;
}

struct lval lq_typed(struct lq *q, int line, int col, const char *name, const char *type,
		     struct lval v)
{
	static const struct { const char *t; int k; } prims[] = {
		{"int", LK_INT}, {"float", LK_FLOAT}, {"bool", LK_BOOL}, {"string", LK_STR}};
	for (size_t k = 0; k < sizeof prims / sizeof *prims; k++)
		if (!strcmp(type, prims[k].t)) {
			if (v.k == prims[k].k)
				return v;
			if (prims[k].k == LK_FLOAT && v.k == LK_INT)
				return lfloat((double)v.u.i);
			struct node at;
			memset(&at, 0, sizeof at);
			at.line = line;
			at.col = col;
			lq_raise(q, LQ_ERROR, &at, "%s is declared %s but its value is %s", name, type,
				 lq_kind_name(v.k));
		}
	return v;
}

struct stmt *lq_set_type(struct lq *q, const char *name)
{
	for (struct lstmt_set *s = q->sets; s; s = s->next)
		if (!strcmp(s->name, name))
			return s->st;
	return NULL;
}

void lq_run(struct lq *q, void (*emit)(void *ctx, int stmt, int kind, struct lval v,
				       const char *name), void *ctx)
{
	for (int k = 0; k < q->prog.nstmts; k++) {
		struct stmt *s = q->prog.stmts[k];
		q->stmt = k;
		switch (s->kind) {
		case S_EXPR:
			emit(ctx, k, S_EXPR, lq_eval(q, NULL, s->e), NULL);
			break;
		case S_LET: {
			struct lval v = s->e ? lq_eval(q, NULL, s->e) : default_of(s->type ? s->type : "");
			if (s->type)
				v = lq_typed(q, s->line, s->col, s->name, s->type, v);
			name_set(q, s->name, v);
			emit(ctx, k, S_LET, v, s->name);
			break;
		}
		case S_SET_TYPE: {
			struct lstmt_set *t = lq_alloc(q, sizeof *t);
			t->name = s->name;
			t->st = s;
			t->next = q->sets;
			q->sets = t;
			break;
		}
		case S_INSTANCES: {
			struct stmt *set = lq_set_type(q, s->name);
			if (!set) {
				struct node at;
				memset(&at, 0, sizeof at);
				at.line = s->line;
				at.col = s->col;
				lq_raise(q, LQ_ERROR, &at, "no set type named '%s' (define it with "
					 "'set_type %s: ...')", s->name, s->name);
			}
			emit(ctx, k, S_INSTANCES, lq_run_instances(q, set, s), s->name);
			break;
		}
		default:
			break;
		}
	}
}
