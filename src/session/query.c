/*
 * query.c - queries answered inside the attached JVM (docs/agent.md,
 * "Analyses inside the JVM"): a snippet, with the set types and names of
 * the session it uses, is compiled into a program (src/dsl/prog.h), run by
 * the agent (ANALYZE), and its values given back as a snapshot's evaluator
 * would give them; or the reason it cannot run there (plan.c says why, or
 * the agent does), so that the front end takes a snapshot instead. The
 * shell and the Lua module both route queries through hs_query_jvm.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../attach/proto.h"
#include "../base/fmt.h"
#include "../dsl/eval.h"
#include "../dsl/parse.h"
#include "../dsl/plan.h"
#include "../dsl/prog.h"
#include "../dsl/pushdown.h"
#include "../attach/snapshot.h"
#include "session_internal.h"
#include "guard.h"

/* ---- building the program ---- */

struct build {
	struct hs_session *ss;
	struct arena *a;
	struct stmt **pre;	/* lets for the session's names, set types from earlier snippets */
	int npre, cap;
	const char **seen;	/* names already looked at */
	int nseen, capseen;
	char *why;
	size_t whycap;
	bool failed;
};

static bool seen_name(struct build *b, const char *name)
{
	for (int k = 0; k < b->nseen; k++)
		if (!strcmp(b->seen[k], name))
			return true;
	if (b->nseen == b->capseen) {
		b->capseen = b->capseen ? b->capseen * 2 : 16;
		b->seen = xreallocarray(b->seen, (size_t)b->capseen, sizeof *b->seen);
	}
	b->seen[b->nseen++] = name;
	return false;
}

static void add_pre(struct build *b, struct stmt *s)
{
	if (b->npre == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 8;
		b->pre = xreallocarray(b->pre, (size_t)b->cap, sizeof *b->pre);
	}
	b->pre[b->npre++] = s;
}

/* literal: a node for a session value that is a constant, or NULL. */
static struct node *literal(struct build *b, struct value v, int depth)
{
	struct node *n = arena_alloc(b->a, sizeof *n);
	switch (v.k) {
	case V_NULL: n->kind = N_NULL; return n;
	case V_BOOL: n->kind = N_BOOL; n->i = v.u.b; return n;
	case V_INT: n->kind = N_INT; n->i = v.u.i; return n;
	case V_FLOAT: n->kind = N_FLOAT; n->f = v.u.f; return n;
	case V_STR: n->kind = N_STR; n->s = v.u.s; return n;
	case V_LIST:
		if (depth > 8 || v.u.l->kind != L_VALUES || v.u.l->n > PROG_MAX_ITEMS)
			return NULL;
		n->kind = N_LIST;
		n->nitems = (int)v.u.l->n;
		n->items = arena_alloc(b->a, ((size_t)v.u.l->n + 1) * sizeof *n->items);
		for (uint32_t k = 0; k < v.u.l->n; k++)
			if (!(n->items[k] = literal(b, v.u.l->v[k], depth + 1)))
				return NULL;
		return n;
	case V_LAMBDA:
		if (!dsl_lambda_plain(v))
			return NULL;	/* a closure over values of its own */
		return v.u.fn->lam;
	default:
		return NULL;
	}
}

static void scan(struct build *b, const struct node *n, int depth);

/* name_use: an identifier; a session name becomes a let before the snippet. */
static void name_use(struct build *b, const char *name)
{
	if (b->failed || seen_name(b, name))
		return;
	struct value v;
	if (!dsl_global(hs_dsl(b->ss), name, &v))
		return;
	struct node *lit = literal(b, v, 0);
	if (!lit) {
		b->failed = true;
		snprintf(b->why, b->whycap, "it uses the name '%s', which holds %s of this session "
			 "(only numbers, strings, lists of them and lambdas go into the JVM)", name,
			 v.k == V_LIST ? "a list of objects" : value_kind_name(v.k));
		return;
	}
	scan(b, lit, 0);
	struct stmt *s = arena_alloc(b->a, sizeof *s);
	s->kind = S_LET;
	s->name = name;
	s->e = lit;
	add_pre(b, s);
}

static void scan(struct build *b, const struct node *n, int depth)
{
	if (!n || depth > 500 || b->failed)
		return;
	if (n->kind == N_IDENT && n->name)
		name_use(b, n->name);
	if (n->kind == N_ASSIGN && n->name)
		name_use(b, n->name);
	scan(b, n->a, depth + 1);
	scan(b, n->b, depth + 1);
	scan(b, n->result, depth + 1);
	for (int k = 0; k < n->nitems; k++)
		scan(b, n->items[k], depth + 1);
}

/* set_use: the set type of an instances_for, from this snippet or an earlier one. */
static void set_use(struct build *b, struct stmt *const *st, int upto, const char *name)
{
	for (int k = 0; k < upto; k++)
		if (st[k]->kind == S_SET_TYPE && !strcmp(st[k]->name, name))
			return;
	char key[300];
	snprintf(key, sizeof key, "set_type %s", name);
	char *kept = arena_strndup(b->a, key, strlen(key));
	if (seen_name(b, kept))
		return;
	struct stmt *def = dsl_set_type_stmt(hs_dsl(b->ss), name);
	if (!def)
		return;	/* the agent reports the missing set type as the snapshot would */
	for (int j = 0; j < def->nprops; j++)
		scan(b, def->props[j].value, 0);
	add_pre(b, def);
}

/*
 * hs_jvm_compile (session.h): lets for the session's names the statements
 * use and set types from earlier snippets go first, then the snippet's own.
 */
static int p_jvm_compile(struct hs_session *ss, struct stmt **st, int n, const char *snippet,
		   struct arena *a, uint8_t **prog, size_t *len, int *npre, char *why, size_t cap)
{
	struct build b = {ss, a, NULL, 0, 0, NULL, 0, 0, why, cap, false};
	if (plan_live_reason(st, n, why, cap))
		return -1;
	for (int k = 0; k < n && !b.failed; k++) {
		const struct stmt *s = st[k];
		if (s->kind == S_SET_TYPE) {
			for (int j = 0; j < s->nprops; j++)
				scan(&b, s->props[j].value, 0);
		} else {
			scan(&b, s->e, 0);
			if (s->kind == S_INSTANCES)
				set_use(&b, st, k, s->name);
		}
	}
	/* the set types from earlier snippets may use names of their own */
	for (int k = 0; k < b.npre && !b.failed; k++)
		if (b.pre[k]->kind == S_SET_TYPE && plan_live_reason(&b.pre[k], 1, why, cap))
			b.failed = true;
	int rc = -1;
	if (!b.failed) {
		struct stmt **all = xcalloc((size_t)(b.npre + n) + 1, sizeof *all);
		/* lets first, in the order met, then set types, then the snippet */
		int m = 0;
		for (int k = 0; k < b.npre; k++)
			if (b.pre[k]->kind == S_LET)
				all[m++] = b.pre[k];
		for (int k = 0; k < b.npre; k++)
			if (b.pre[k]->kind != S_LET)
				all[m++] = b.pre[k];
		*npre = m;
		for (int k = 0; k < n; k++)
			all[m++] = st[k];
		rc = prog_encode(all, m, snippet, prog, len, why, cap);
		free(all);
	}
	free(b.pre);
	free(b.seen);
	return rc;
}

static int jvm_compile_guarded(struct hs_session *ss, struct stmt **st, int n,
			       const char *snippet, struct arena *a, uint8_t **prog, size_t *len,
			       int *npre, char *why, size_t cap)
{
	GUARDED(ss, HS_ERR, p_jvm_compile(ss, st, n, snippet, a, prog, len, npre, why, cap));
}

int hs_jvm_compile(struct hs_session *ss, struct stmt **st, int n, const char *snippet,
		   struct arena *a, uint8_t **prog, size_t *len, int *npre, char *why, size_t cap)
{
	if (cap)
		why[0] = 0;
	int rc = jvm_compile_guarded(ss, st, n, snippet, a, prog, len, npre, why, cap);
	if (rc && cap && !why[0])	/* a throw: what it said is the reason */
		snprintf(why, cap, "%s", ss->err.msg);
	return rc;
}

/* ---- what came back ---- */

const char *hs_jvm_text(struct arena *a, const struct proto_val *v)
{
	char buf[300];
	switch (v->k) {
	case PV_NULL: return "null";
	case PV_BOOL: return v->b ? "true" : "false";
	case PV_INT: snprintf(buf, sizeof buf, "%" PRId64, v->i); break;
	case PV_FLOAT: fmt_double(buf, sizeof buf, v->f, false); break;
	case PV_STR: return v->s;
	case PV_OBJ:
		if (v->okind == 3)
			snprintf(buf, sizeof buf, "0x%" PRIx64 " java.lang.Class", v->id);
		else if (v->text)
			snprintf(buf, sizeof buf, "0x%" PRIx64 " java.lang.String \"%.60s%s\"", v->id,
				 v->text, strlen(v->text) > 60 ? "..." : "");
		else
			snprintf(buf, sizeof buf, "0x%" PRIx64 " %s", v->id, v->s);
		break;
	case PV_CLASS: snprintf(buf, sizeof buf, "class %s", v->s); break;
	case PV_LOADER:
		if (!v->id)
			return "<bootstrap>";
		snprintf(buf, sizeof buf, "0x%" PRIx64 " %s", v->id, v->s);
		break;
	case PV_THREAD: snprintf(buf, sizeof buf, "thread \"%s\"", v->s); break;
	case PV_LIST: snprintf(buf, sizeof buf, "<list of %u>", v->n); break;
	case PV_STRUCT: return "<struct >";
	case PV_REFKIND: {
		static const char *const rk[] = {"root", "field", "array", "static", "super",
						 "loader", "other", "none"};
		return v->i >= 0 && v->i < 8 ? rk[v->i] : "?";
	}
	default: return "<lambda>";
	}
	return arena_strndup(a, buf, strlen(buf));
}

struct value hs_jvm_value(struct arena *a, const struct proto_val *v, bool *objects)
{
	struct value r;
	memset(&r, 0, sizeof r);
	switch (v->k) {
	case PV_NULL: r.k = V_NULL; break;
	case PV_BOOL: r.k = V_BOOL; r.u.b = v->b; break;
	case PV_INT: r.k = V_INT; r.u.i = v->i; break;
	case PV_FLOAT: r.k = V_FLOAT; r.u.f = v->f; break;
	case PV_STR: r.k = V_STR; r.u.s = arena_strndup(a, v->s, strlen(v->s)); break;
	case PV_LIST: {
		struct list *l = arena_alloc(a, sizeof *l);
		l->kind = L_VALUES;
		l->n = v->n;
		l->v = arena_alloc(a, ((size_t)v->n + 1) * sizeof *l->v);
		for (uint32_t k = 0; k < v->n; k++)
			l->v[k] = hs_jvm_value(a, &v->items[k], objects);
		r.k = V_LIST;
		r.u.l = l;
		break;
	}
	case PV_STRUCT: {
		struct vstruct *st = arena_alloc(a, sizeof *st);
		st->n = (int)v->n;
		st->names = arena_alloc(a, ((size_t)v->n + 1) * sizeof *st->names);
		st->vals = arena_alloc(a, ((size_t)v->n + 1) * sizeof *st->vals);
		for (uint32_t k = 0; k < v->n; k++) {
			st->names[k] = arena_strndup(a, v->names[k], strlen(v->names[k]));
			st->vals[k] = hs_jvm_value(a, &v->items[k], objects);
		}
		r.k = V_STRUCT;
		r.u.st = st;
		break;
	}
	default:
		if (v->k == PV_OBJ || v->k == PV_CLASS || v->k == PV_LOADER || v->k == PV_THREAD)
			*objects = true;
		r.k = V_STR;
		r.u.s = hs_jvm_text(a, v);
		break;
	}
	return r;
}

/* ---- running a snippet inside the JVM ---- */

void hs_jvm_query_free(struct hs_jvm_query *q)
{
	if (q->has_analysis)
		proto_analysis_free(&q->an);
	q->has_analysis = false;
	arena_free(&q->a);
}

static int p_query_jvm(struct hs_session *s, struct stmt **st, int n, unsigned flags,
		       struct hs_jvm_query *q, char *why,
		 size_t cap)
{
	memset(q, 0, sizeof *q);
	why[0] = 0;
	if (s->live_off || s->heap || !s->live) {
		snprintf(why, cap, "%s", s->live_off ? "queries inside the JVM are off (:live)"
			 : s->heap ? "a snapshot is loaded" : "no JVM is attached");
		return HS_OK;
	}
	if (!n) {	/* only comments: nothing to run, nowhere */
		q->ran = true;
		return HS_OK;
	}
	uint8_t *prog = NULL;
	size_t len = 0;
	if (hs_jvm_compile(s, st, n, st[0]->snippet, &q->a, &prog, &len, &q->npre, why, cap))
		return HS_OK;
	struct proto_conn *c = hs_live_conn(s);
	if (!c) {
		free(prog);
		return HS_ERR;
	}
	struct hs_error err;
	hs_interrupted = 0;
	int rc = proto_analyze(c, prog, len, s->live_time_s * 1000u, s->live_mem_mb,
			       flags & HS_QUERY_NO_GC ? PROTO_ANALYZE_NO_GC : 0, &q->an, &err);
	free(prog);
	if (rc != HS_OK) {
		if (!strncmp(err.msg, "the agent in JVM", 16)) {
			snprintf(why, cap, "%s", err.msg);
			return HS_OK;
		}
		return hs_fail(s, "the query could not run in JVM %d: %s", s->live->pid, err.msg);
	}
	q->has_analysis = true;
	if (q->an.status == PROTO_ANALYSIS_UNSUPPORTED || q->an.status == PROTO_ANALYSIS_LIMIT) {
		snprintf(why, cap, "%s", q->an.msg);
		return HS_OK;
	}
	/* Lets keep their values in the session: only values without objects. */
	bool objects = false;
	for (uint32_t k = 0; k < q->an.nresults; k++)
		if (q->an.results[k].kind == S_LET && q->an.results[k].stmt >= q->npre)
			hs_jvm_value(&q->a, &q->an.results[k].v, &objects);
	if (objects && q->an.status == PROTO_ANALYSIS_OK) {
		snprintf(why, cap, "a name of this snippet would hold objects of JVM %d, which live "
			 "only while a query runs inside it", s->live->pid);
		return HS_OK;
	}
	q->ran = true;
	q->failed_at = q->an.status == PROTO_ANALYSIS_OK ? INT32_MAX : q->an.stmt;
	for (uint32_t k = 0; k < q->an.nresults; k++) {
		struct proto_result *r = &q->an.results[k];
		if (r->kind == S_LET && r->stmt >= q->npre && r->stmt < q->failed_at) {
			bool o = false;
			dsl_bind(hs_dsl(s), r->name, hs_jvm_value(&q->a, &r->v, &o));
		}
	}
	return HS_OK;
}

int hs_query_jvm(struct hs_session *s, struct stmt **st, int n, unsigned flags,
		 struct hs_jvm_query *q, char *why,
		 size_t cap)
{
	GUARDED(s, HS_ERR, p_query_jvm(s, st, n, flags, q, why, cap));
}

/* ---- a filter over one class, in the agent's heap iteration ---- */

static struct proto_pred *convert(const struct dsl_pred *d)
{
	struct proto_pred *p = xcalloc(1, sizeof *p);
	p->op = (enum proto_op)d->op;
	p->n = d->n;
	p->kids = d->n ? xcalloc((size_t)d->n, sizeof *p->kids) : NULL;
	for (int k = 0; k < d->n; k++)
		p->kids[k] = convert(d->kids[k]);
	p->field = d->field;
	p->cmp = (enum proto_cmp)d->cmp;
	p->lit = (enum proto_lit)d->lit;
	p->l = d->l;
	p->d = d->d;
	p->s = d->s;
	return p;
}

static void pred_free(struct proto_pred *p)
{
	for (int k = 0; k < p->n; k++)
		pred_free(p->kids[k]);
	free(p->kids);
	free(p);
}

void hs_pushdown_free(struct hs_pushdown *q)
{
	if (q->has_pd)
		dsl_pushdown_free(&q->pd);
	if (q->has_r)
		proto_instances_free(&q->r);
	q->has_pd = q->has_r = false;
}

static int p_query_pushdown(struct hs_session *s, struct stmt **st, int n, unsigned flags,
			    struct hs_pushdown *q,
		      char *why, size_t cap)
{
	memset(q, 0, sizeof *q);
	why[0] = 0;
	if (!s->live || s->heap || !dsl_pushdown_stmts(st, n, &q->pd))
		return HS_OK;
	q->has_pd = true;
	if (!hs_live_conn(s))
		return HS_ERR;
	struct proto_pred *pred = convert(q->pd.pred);
	struct hs_error err;
	uint32_t limit = q->pd.op == PD_FILTER ? 100 : q->pd.op == PD_FIRST ? 1 : 0;
	hs_interrupted = 0;
	int rc = proto_instances(&s->live->conn, q->pd.cls, true,
				 flags & HS_QUERY_NO_GC ? PROTO_WALK_HEAP : PROTO_WALK_GC_HEAP,
				 q->pd.op == PD_EXISTS, limit, pred, &q->r, &err);
	pred_free(pred);
	if (rc != HS_OK && rc != HS_INTERRUPTED && !strncmp(err.msg, "the agent says: ", 16) &&
	    proto_alive(&s->live->conn)) {
		/* What the agent cannot evaluate (a member that is not a field, ...) a snapshot can. */
		snprintf(why, cap, "the agent cannot evaluate this query in JVM %d (%s)", s->live->pid,
			 err.msg + 16);
		return HS_OK;
	}
	if (rc != HS_OK)
		return hs_fail(s, "the query could not run in JVM %d: %s", s->live->pid, err.msg);
	q->has_r = true;
	q->ran = true;
	return HS_OK;
}

int hs_query_pushdown(struct hs_session *s, struct stmt **st, int n, unsigned flags,
		      struct hs_pushdown *q, char *why, size_t cap)
{
	GUARDED(s, HS_ERR, p_query_pushdown(s, st, n, flags, q, why, cap));
}

/* ---- routing: where a query runs ---- */

void hs_answer_free(struct hs_session *s, struct hs_answer *a)
{
	struct hs_query_priv *q = a->priv;
	if (a->has_out)
		dsl_output_done(hs_dsl(s), &a->out);
	a->has_out = false;
	if (!q)
		return;
	hs_pushdown_free(&q->pd);	/* first: its predicate names the tree's strings */
	hs_jvm_query_free(&q->jvm);
	arena_free(&q->parsed);
	arena_free(&q->view);
	free(q);
	a->priv = NULL;
}

/* ---- the answers as the front ends read them ---- */

/* pushdown_cell: a field's value the agent found, as a table shows it. */
static struct hs_cell pushdown_cell(struct arena *a, const struct proto_value *v)
{
	struct hs_cell c = {HS_CELL_TEXT, NULL, 0};
	char buf[64];
	double d;
	float f;
	uint32_t lo = (uint32_t)v->bits;
	switch (v->kind) {
	case 'N': c.kind = HS_CELL_NULL; return c;
	case 'T': c.text = arena_strndup(a, v->text, strlen(v->text)); return c;
	case 'L': {
		char *n = snap_java_name(v->text);
		snprintf(buf, sizeof buf, "<%s>", n);
		free(n);
		break;
	}
	case 'Z': c.text = v->bits ? "true" : "false"; return c;
	case 'C': snprintf(buf, sizeof buf, "%c", (int)(v->bits & 0x7f)); break;
	case 'F': memcpy(&f, &lo, 4); snprintf(buf, sizeof buf, "%g", f); break;
	case 'D': memcpy(&d, &v->bits, 8); snprintf(buf, sizeof buf, "%g", d); break;
	default: c.kind = HS_CELL_INT; c.i = (int64_t)v->bits; return c;
	}
	c.text = arena_strndup(a, buf, strlen(buf));
	return c;
}

/* pushdown_view: a->pd from what the agent's heap iteration found (q->pd). */
static void pushdown_view(struct hs_answer *a, struct hs_query_priv *q)
{
	static const enum hs_pd_op ops[] = {[PD_FILTER] = HS_PD_FILTER, [PD_EXISTS] = HS_PD_EXISTS,
					    [PD_COUNT] = HS_PD_COUNT, [PD_FIRST] = HS_PD_FIRST};
	const struct proto_instances *r = &q->pd.r;
	struct hs_pushdown_answer *v = &a->pd;
	v->op = ops[q->pd.pd.op];
	v->cls = q->pd.pd.cls;
	v->examined = r->examined;
	v->matched = r->matched;
	v->nrows = r->nrows;
	if (!r->nrows)
		return;
	int nc = r->rows[0].n + 1;
	const char **cols = arena_alloc(&q->view, (size_t)nc * sizeof *cols);
	struct hs_cell *cells = arena_alloc(&q->view, (size_t)r->nrows * (size_t)nc * sizeof *cells);
	cols[0] = "class";
	for (int k = 1; k < nc; k++)
		cols[k] = r->rows[0].v[k - 1].field;
	for (uint32_t i = 0; i < r->nrows; i++) {
		struct hs_cell *row = cells + (size_t)i * (size_t)nc;
		char *cn = snap_java_name(r->rows[i].cls);
		row[0] = (struct hs_cell){HS_CELL_TEXT, arena_strndup(&q->view, cn, strlen(cn)), 0};
		free(cn);
		for (int k = 1; k < nc; k++)
			row[k] = k - 1 < r->rows[i].n ? pushdown_cell(&q->view, &r->rows[i].v[k - 1])
						      : (struct hs_cell){HS_CELL_NULL, NULL, 0};
	}
	v->ncols = nc;
	v->cols = cols;
	v->cells = cells;
}

/* jvm_view: a's results, costs and error from the program the agent ran (q->jvm). */
static void jvm_view(struct hs_answer *a, struct hs_query_priv *q)
{
	struct hs_jvm_query *j = &q->jvm;
	if (!j->has_analysis)	/* only comments */
		return;
	const struct proto_analysis *an = &j->an;
	a->has_costs = an->status == PROTO_ANALYSIS_OK;
	a->walks = an->walks;
	a->pause_ms = an->pause_ms;
	a->gc_ms = an->gc_ms;
	a->total_ms = an->total_ms;
	a->cancelled = an->status == PROTO_ANALYSIS_CANCELLED;
	if (an->status != PROTO_ANALYSIS_OK && !a->cancelled) {
		a->error = true;
		hs_error_clear(&a->err);
		snprintf(a->err.msg, sizeof a->err.msg, "%s", an->msg);
		a->err.line = an->line;	/* 0 in an earlier snippet's code: the message says where */
		a->err.col = an->col;
	}
	struct hs_jvm_result *res = arena_alloc(&q->view, ((size_t)an->nresults + 1) * sizeof *res);
	uint32_t n = 0;
	for (uint32_t k = 0; k < an->nresults; k++) {
		const struct proto_result *r = &an->results[k];
		if (r->stmt < j->npre || r->stmt >= j->failed_at || r->kind == S_LET)
			continue;
		struct hs_jvm_result *x = &res[n++];
		x->v = hs_jvm_value(&j->a, &r->v, &x->has_objects);
		const struct proto_val *v = &r->v;
		bool all = v->k == PV_LIST && v->n;
		for (uint32_t i = 0; all && i < v->n; i++)
			all = v->items[i].k == PV_OBJ;
		if (!all)
			continue;
		struct hs_jvm_obj *o = arena_alloc(&q->view, (size_t)v->n * sizeof *o);
		for (uint32_t i = 0; i < v->n; i++)
			o[i] = (struct hs_jvm_obj){v->items[i].id, v->items[i].s, v->items[i].okind == 3,
						   v->items[i].size};
		x->objs = o;
		x->nobjs = v->n;
	}
	a->results = res;
	a->nresults = n;
}

/*
 * keep_definitions: the set types and types a snippet that ran inside the
 * JVM defined (those before the statement that failed), defined in the
 * session too, as a run on the heap defines them, so that a later snippet
 * can use them. The session keeps the parsed snippet (q->parsed).
 */
static void keep_definitions(struct hs_session *s, struct hs_query_priv *q, struct stmt **st, int n)
{
	struct stmt **defs = xcalloc((size_t)n + 1, sizeof *defs);
	int m = 0;
	for (int k = 0; k < n && q->jvm.npre + k < q->jvm.failed_at; k++)
		if (st[k]->kind == S_SET_TYPE || st[k]->kind == S_TYPE)
			defs[m++] = st[k];
	if (m) {
		struct dsl_output out;
		struct hs_error err;
		memset(&err, 0, sizeof err);
		dsl_run_parsed(hs_dsl(s), &q->parsed, defs, m, &out, &err);
		dsl_output_done(hs_dsl(s), &out);
	}
	free(defs);
}

static int p_query(struct hs_session *s, const char *text, unsigned flags, struct hs_answer *a)
{
	memset(a, 0, sizeof *a);
	hs_error_clear(&a->err);
	struct hs_query_priv *q = a->priv = xcalloc(1, sizeof *q);
	/* Parsed once: the routing reads the tree, and the query language runs it. */
	struct stmt **st;
	int ns;
	enum parse_status ps = parse_snippet(text, &q->parsed, &st, &ns, &a->err);
	if (ps == PARSE_INCOMPLETE) {
		a->incomplete = true;
		return HS_OK;
	}
	if (ps == PARSE_ERROR) {	/* said without a snapshot */
		a->ran = HS_RAN_HEAP;
		a->error = true;
		return HS_OK;
	}
	bool heapless = false;	/* run with no snapshot: the snippet needs no heap */
	if (!s->heap && (s->live || s->recording)) {
		/*
		 * Maybe the JVM can answer it without a snapshot, or it needs no
		 * heap (allocations of a JVM or of a recording read from a file).
		 */
		heapless = dsl_heapless_stmts(hs_dsl(s), st, ns);
		if (!heapless && s->live && !(flags & HS_QUERY_NO_PUSHDOWN)) {
			if (hs_query_pushdown(s, st, ns, flags, &q->pd, a->why_pushdown,
					      sizeof a->why_pushdown) != HS_OK)
				return HS_ERR;
			if (q->pd.ran) {
				a->ran = HS_RAN_PUSHDOWN;
				pushdown_view(a, q);
				return HS_OK;
			}
			if (a->why_pushdown[0] && !(flags & HS_QUERY_JVM_ONLY))
				hs_notify(s, HS_NOTICE_TIMER, "heapsh: %s; taking a snapshot", a->why_pushdown);
		}
		if (!heapless && s->live && !s->live_off) {
			if (hs_query_jvm(s, st, ns, flags, &q->jvm, a->why_jvm, sizeof a->why_jvm) != HS_OK)
				return HS_ERR;
			if (q->jvm.ran) {
				a->ran = HS_RAN_JVM;
				jvm_view(a, q);
				keep_definitions(s, q, st, ns);
				return HS_OK;
			}
			if (flags & HS_QUERY_JVM_ONLY) {
				a->at_limit = q->jvm.has_analysis &&
					      q->jvm.an.status == PROTO_ANALYSIS_LIMIT;
				return hs_fail(s, "this query cannot run inside JVM %d: %s; no snapshot "
					       "taken", s->live->pid, a->why_jvm[0] ? a->why_jvm :
					       a->why_pushdown[0] ? a->why_pushdown : "no reason given");
			}
			if (a->why_jvm[0])
				hs_notify(s, HS_NOTICE_ALWAYS, "heapsh: this query cannot run inside JVM %d: %s; "
					  "taking a snapshot", s->live->pid, a->why_jvm);
		}
	}
	if (!s->heap && !heapless && (flags & HS_QUERY_JVM_ONLY))
		return hs_fail(s, "this query needs a heap, and no snapshot is taken: %s",
			       !s->live ? "no JVM is attached" : s->live_off ?
			       "queries inside the JVM are off (:live)" : "the JVM cannot answer it");
	if (!s->heap && !heapless && hs_need_heap(s) != HS_OK)
		return HS_ERR;
	hs_interrupted = 0;
	a->error = dsl_run_parsed(hs_dsl(s), &q->parsed, st, ns, &a->out, &a->err) == PARSE_ERROR;
	a->has_out = true;
	a->ran = HS_RAN_HEAP;
	return HS_OK;
}

int hs_query(struct hs_session *s, const char *text, unsigned flags, struct hs_answer *a)
{
	GUARDED(s, HS_ERR, p_query(s, text, flags, a));
}

