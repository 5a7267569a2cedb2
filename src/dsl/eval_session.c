/*
 * eval_session.c - query-language sessions (eval.h): a struct dsl and what
 * it keeps between snippets (named values, struct and set types, native
 * functions), dsl_run and the statements it runs, whether statements need
 * a heap, and values as text.
 */
#include "eval_internal.h"
#include "../base/big.h"

#include "../base/fmt.h"
#include "extern.h"

#include <inttypes.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* ---- sessions ---- */

struct dsl *dsl_new(const struct heap *h, const struct dsl_engine *eng)
{
	struct dsl *d = xcalloc(1, sizeof *d);
	if (eng)
		d->eng = *eng;
#ifndef HV_NO_DUMP
	hvd_init(&d->hvd, h, eng, true);
	d->hv = h ? &d->hvd.view : NULL;
#else
	(void)h;	/* a build without the dump backend (the agent's): dsl_new_on's views only */
#endif
	return d;
}

struct dsl *dsl_new_on(struct hv *view, const struct dsl_engine *eng)
{
	struct dsl *d = dsl_new(NULL, eng);
	d->hv = view;
	return d;
}

const struct heap *dsl_heap(const struct dsl *d)
{
	return d->hv ? hvd_heap(&d->hvd) : NULL;
}

void dsl_set_heap(struct dsl *d, const struct heap *h)
{
#ifndef HV_NO_DUMP
	if (!d->hv && h) {
		hvd_set_heap(&d->hvd, h, true);
		d->hv = &d->hvd.view;
	}
#else
	(void)d;
	(void)h;
#endif
}

bool dsl_cannot_here(const struct dsl *d)
{
	return d->cannot;
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
		/* the heap's lists, and the names of a set type's traversal */
		const struct bi_row *g = name ? NULL : bi_lookup(n->name, BI_R_GLOBAL);
		if (g && (g->flags & BI_HEAP))
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
	bool r = parse_snippet(text, &a, &st, &n, &err) == PARSE_OK && dsl_heapless_stmts(d, st, n);
	arena_free(&a);
	return r;
}

bool dsl_heapless_stmts(const struct dsl *d, struct stmt *const *st, int n)
{
	return !dsl_needs_heap(st, n) && ((d && !d->hv) || dsl_mentions(st, n, "allocations"));
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

/* walked: whether v holds the list of every object of a heap whose objects are not numbered. */
static bool walked(struct ev *e, struct value v)
{
	if (v.k == V_STRUCT) {
		for (int k = 0; k < v.u.st->n; k++)
			if (walked(e, v.u.st->vals[k]))
				return true;
		return false;
	}
	if (v.k != V_LIST)
		return false;
	if (v.u.l->kind == L_ALL)
		return true;
	if (v.u.l->kind == L_VALUES)
		for (uint32_t k = 0; k < v.u.l->n; k++)
			if (walked(e, v.u.l->v[k]))
				return true;
	return false;
}

static void add_output(struct ev *e, struct dsl_output *out, struct value v, const char *label)
{
	if (e->hv && !e->hv->dense && walked(e, v)) {
		hv_set_fail(e->hv, HV_CANNOT, "the list of every object as a result");
		eval_hv_check(e, NULL);
	}
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
	struct binding *b = eval_global_find(d, name);
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
		eval_rt_error(e, &at, "%s", xerr.msg);
	}
	struct dsl *d = e->d;
	struct externdecl *x = eval_extern_find(d, s->name);
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
struct value eval_typed(struct ev *e, int line, int col, const char *name, const char *type,
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
			eval_rt_error(e, &at, "%s is declared %s but its value is %s", name, type,
				 value_kind_name(v.k));
		}
	return v;
}

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

enum parse_status dsl_run(struct dsl *d, const char *text, struct dsl_output *out,
			  struct hs_error *err)
{
	memset(out, 0, sizeof *out);
	struct arena parsed = {NULL, 0};
	struct stmt **stmts;
	int n;
	enum parse_status st = parse_snippet(text, &parsed, &stmts, &n, err);
	if (st != PARSE_OK) {
		arena_free(&parsed);
		return st;
	}
	return dsl_run_parsed(d, &parsed, stmts, n, out, err);
}

enum parse_status dsl_run_parsed(struct dsl *d, struct arena *parsed, struct stmt **stmts, int n,
				 struct dsl_output *out, struct hs_error *err)
{
	memset(out, 0, sizeof *out);
	volatile enum parse_status st = PARSE_OK;
	/* Snippets that define names are kept whole: their trees and values live on. */
	struct arena *tmp = NULL, *a;
	if (defines(stmts, n)) {
		a = &d->keep;
	} else {
		a = tmp = xcalloc(1, sizeof *tmp);
	}
	arena_adopt(a, parsed);
	out->priv = a == tmp ? tmp : NULL;
	struct ev *e = xcalloc(1, sizeof *e);
	e->d = d;
	e->hv = d->hv;
	d->cannot = false;
	if (e->hv)
		hv_clear(e->hv);
	e->a = e->run_a = a;
	e->err = err;
	e->snippet = n ? stmts[0]->snippet : NULL;
	char base;
	e->stack_base = &base;
	e->stack_budget = stack_budget();
	int k = 0;
	if (setjmp(e->fail)) {
		e->calls = 0;
		e->a = a;
		e->in_step = false;
		if (e->owners) {
			hv_owners(e->hv, false);
			e->owners = false;
		}
		if (e->an) {
			eval_analysis_free(e->an);
			e->an = NULL;
		}
		st = PARSE_ERROR;
		goto done;
	}
	for (; k < n; k++) {
		struct stmt *s = stmts[k];
		switch (s->kind) {
		case S_EXPR:
			add_output(e, out, eval_expr(e, NULL, s->e), NULL);
			break;
		case S_LET: {
			struct value v = s->e ? eval_expr(e, NULL, s->e)
					      : default_of(s->type ? s->type : "");
			if (s->type)
				v = eval_typed(e, s->line, s->col, s->name, s->type, v);
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
			add_output(e, out, eval_run_instances(e, s), label);
			break;
		}
		}
	}
done:
	arena_free(&e->scratch);
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
	struct binding *b = eval_global_find(d, name);
	if (b)
		*v = b->v;
	return b != NULL;
}

void dsl_bind(struct dsl *d, const char *name, struct value v)
{
	const char *kept = arena_strndup(&d->keep, name, strlen(name));
	bind(d, NULL, kept, eval_value_persist(&d->keep, v));
}

const char **dsl_names(struct dsl *d, int *n)
{
	*n = d->nnames;
	return d->names;
}

const char *dsl_value_text(struct dsl *d, struct value v, void *arena)
{
	struct arena *a = arena;
	struct hv *hv = d->hv;	/* a heap value comes from a session with a heap */
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
		char *t = hv_text(hv, v.u.idx, 60);
		if (t)
			snprintf(buf, sizeof buf, "0x%" PRIx64 " java.lang.String \"%s\"",
				 hv_id(hv, v.u.idx), t);
		else
			snprintf(buf, sizeof buf, "0x%" PRIx64 " %s", hv_id(hv, v.u.idx),
				 hv_class_name(hv, hv_class_of(hv, v.u.idx)));
		free(t);
		break;
	}
	case V_CLASS: snprintf(buf, sizeof buf, "class %s", hv_class_name(hv, v.u.idx)); break;
	case V_LOADER:
		if (v.u.idx == HV_NONE)
			snprintf(buf, sizeof buf, "<bootstrap>");
		else
			snprintf(buf, sizeof buf, "0x%" PRIx64 " %s", hv_id(hv, v.u.idx),
				 hv_class_name(hv, hv_class_of(hv, v.u.idx)));
		break;
	case V_THREAD: {
		char *nm = hv_thread_name(hv, v.u.idx);
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
