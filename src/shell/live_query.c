/*
 * live_query.c - queries answered inside an attached JVM (docs/agent.md,
 * "Analyses inside the JVM"): a snippet, with the set types and names of
 * the session it uses, is compiled into a program (src/dsl/prog.h), run by
 * the agent (ANALYZE), and its values shown as a snapshot's would be. What
 * cannot run there (plan.c says why, or the agent does) runs on a snapshot,
 * and heapsh says so. :explain says where a query will run and why; :live
 * sets the limits, or turns this off.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../attach/proto.h"
#include "../base/fmt.h"
#include "../dsl/eval.h"
#include "../dsl/parse.h"
#include "../dsl/plan.h"
#include "../dsl/prog.h"
#include "../out/out.h"
#include "sh.h"


/* ---- building the program ---- */

struct build {
	struct sh *sh;
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
	if (!dsl_global(sh_dsl(b->sh), name, &v))
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
	struct stmt *def = dsl_set_type_stmt(sh_dsl(b->sh), name);
	if (!def)
		return;	/* the agent reports the missing set type as the snapshot would */
	for (int j = 0; j < def->nprops; j++)
		scan(b, def->props[j].value, 0);
	add_pre(b, def);
}

/*
 * compile: the program for the snippet's statements st[0..n): lets for the
 * session's names it uses and set types from earlier snippets first.
 * *npre: how many statements come before the snippet's own.
 */
static int compile(struct sh *sh, struct stmt **st, int n, const char *snippet,
		   struct arena *a, uint8_t **prog, size_t *len, int *npre, char *why, size_t cap)
{
	struct build b = {sh, a, NULL, 0, 0, NULL, 0, 0, why, cap, false};
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

/* ---- showing what came back ---- */

static const char *pv_text(struct arena *a, const struct proto_val *v)
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

/*
 * to_value: a result as the query language's value, to show or to keep;
 * objects (and classes, loaders, threads) become their text. *objects is
 * set when the value holds any.
 */
static struct value to_value(struct arena *a, const struct proto_val *v, bool *objects)
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
			l->v[k] = to_value(a, &v->items[k], objects);
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
			st->vals[k] = to_value(a, &v->items[k], objects);
		}
		r.k = V_STRUCT;
		r.u.st = st;
		break;
	}
	default:
		if (v->k == PV_OBJ || v->k == PV_CLASS || v->k == PV_LOADER || v->k == PV_THREAD)
			*objects = true;
		r.k = V_STR;
		r.u.s = pv_text(a, v);
		break;
	}
	return r;
}

static bool all_objects(const struct proto_val *v)
{
	if (v->k != PV_LIST || !v->n)
		return false;
	for (uint32_t k = 0; k < v->n; k++)
		if (v->items[k].k != PV_OBJ)
			return false;
	return true;
}

/* show: a value as the snapshot's evaluator shows it (query.c). */
static void show(struct sh *sh, const struct proto_val *v, struct arena *a)
{
	if (all_objects(v)) {
		static const char *const cols[] = {"id", "class", "shallow_bytes", "retained_bytes"};
		struct out_table *t = out_table_new(4, cols);
		uint32_t limit = out_mode == OUT_TABLE && v->n > 100 ? 100 : v->n;
		uint64_t shallow = 0;
		for (uint32_t k = 0; k < v->n; k++) {
			const struct proto_val *o = &v->items[k];
			shallow += o->size;
			if (k >= limit)
				continue;
			out_cell_fmt(t, "0x%" PRIx64, o->id);
			if (o->okind == 3)
				out_cell_fmt(t, "class %s", o->s);
			else
				out_cell_str(t, o->s);
			out_cell_u64(t, o->size);
			out_cell_null(t);	/* retained sizes need a snapshot */
		}
		out_table_end(t);
		if (out_mode == OUT_TABLE)
			out_printf("%s%u object%s, %" PRIu64 " shallow bytes\n",
				   limit < v->n ? "... " : "", v->n, v->n == 1 ? "" : "s", shallow);
		return;
	}
	bool objects = false;
	sh_show_value(sh, to_value(a, v, &objects), a);
}

/* ---- running a snippet inside the JVM ---- */

static const char *status_word(int st)
{
	switch (st) {
	case PROTO_ANALYSIS_UNSUPPORTED: return "unsupported";
	case PROTO_ANALYSIS_ERROR: return "error";
	case PROTO_ANALYSIS_LIMIT: return "limit";
	case PROTO_ANALYSIS_CANCELLED: return "cancelled";
	default: return "ok";
	}
}

static void note(struct sh *sh, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct sh *sh, const char *fmt, ...)
{
	(void)sh;
	va_list ap;
	va_start(ap, fmt);
	out_flush();	/* what came before it first, in one file too */
	fprintf(stderr, "heapsh: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

int sh_live_analyze(struct sh *sh, const char *text, const char *where, int first_line,
		    bool *handled)
{
	*handled = false;
	if (sh->live_off || sh->ss->heap || !sh_is_live(sh))
		return HS_OK;
	struct arena a = {0};
	struct stmt **st;
	int n;
	struct hs_error perr;
	if (parse_snippet(text, &a, &st, &n, &perr) != PARSE_OK) {
		arena_free(&a);
		return HS_OK;	/* the snapshot's run reports it */
	}
	if (!n) {	/* only comments: nothing to run, nowhere */
		arena_free(&a);
		*handled = true;
		return HS_OK;
	}
	char why[400];
	uint8_t *prog = NULL;
	size_t len = 0;
	int npre = 0;
	if (compile(sh, st, n, n ? st[0]->snippet : NULL, &a, &prog, &len, &npre, why,
		    sizeof why)) {
		note(sh, "this query cannot run inside JVM %d: %s; taking a snapshot",
		     sh_live_pid(sh), why);
		arena_free(&a);
		return HS_OK;
	}
	struct proto_conn *c = sh_live_conn(sh);
	if (!c) {
		free(prog);
		arena_free(&a);
		*handled = true;
		return HS_ERR;
	}
	struct proto_analysis an;
	struct hs_error err;
	hs_interrupted = 0;
	int rc = proto_analyze(c, prog, len, sh->live_time_s * 1000u, sh->live_mem_mb, &an, &err);
	free(prog);
	if (rc != HS_OK) {
		arena_free(&a);
		if (!strncmp(err.msg, "the agent in JVM", 16)) {
			note(sh, "%s; taking a snapshot", err.msg);
			return HS_OK;
		}
		*handled = true;
		return sh_error(sh, NULL, "the query could not run in JVM %d: %s", sh_live_pid(sh),
				err.msg);
	}
	if (an.status == PROTO_ANALYSIS_UNSUPPORTED || an.status == PROTO_ANALYSIS_LIMIT) {
		note(sh, "this query cannot run inside JVM %d: %s; taking a snapshot",
		     sh_live_pid(sh), an.msg);
		proto_analysis_free(&an);
		arena_free(&a);
		return HS_OK;
	}
	/* Lets keep their values in the session: only values without objects. */
	bool objects = false;
	for (uint32_t k = 0; k < an.nresults; k++)
		if (an.results[k].kind == S_LET && an.results[k].stmt >= npre)
			to_value(&a, &an.results[k].v, &objects);
	if (objects && an.status == PROTO_ANALYSIS_OK) {
		note(sh, "a name of this snippet would hold objects of JVM %d, which live only "
		     "while a query runs inside it; taking a snapshot", sh_live_pid(sh));
		proto_analysis_free(&an);
		arena_free(&a);
		return HS_OK;
	}
	*handled = true;
	int failed_at = an.status == PROTO_ANALYSIS_OK ? INT32_MAX : an.stmt;
	for (uint32_t k = 0; k < an.nresults; k++) {
		struct proto_result *r = &an.results[k];
		if (r->stmt < npre || r->stmt >= failed_at)
			continue;
		if (r->kind == S_LET) {
			bool o = false;
			dsl_bind(sh_dsl(sh), r->name, to_value(&a, &r->v, &o));
		} else {
			show(sh, &r->v, &a);
		}
	}
	out_flush();
	int ret = HS_OK;
	if (an.status == PROTO_ANALYSIS_OK) {
		if (out_mode == OUT_TABLE || sh->timer || isatty(STDERR_FILENO)) {
			out_flush();	/* what came before it first, in one file too */
			fprintf(stderr, "inside JVM %d, no snapshot taken: %" PRIu64 " heap walk%s, "
				"the JVM paused %" PRIu64 " ms (%" PRIu64 " ms of it a full GC), %"
				PRIu64 " ms in all\n", sh_live_pid(sh), an.walks,
				an.walks == 1 ? "" : "s", an.pause_ms + an.gc_ms, an.gc_ms,
				an.total_ms);
		}
	} else if (an.status == PROTO_ANALYSIS_CANCELLED) {
		ret = sh_error(sh, where, "interrupted (the analysis inside JVM %d stopped)",
			       sh_live_pid(sh));
	} else {
		struct hs_error qe;
		hs_error_clear(&qe);
		snprintf(qe.msg, sizeof qe.msg, "%s%s", an.msg, an.earlier ? " (in code from an "
			 "earlier snippet)" : "");
		qe.line = an.earlier ? 0 : an.line;
		qe.col = an.earlier ? 0 : an.col;
		sh_query_report(sh, text, where, first_line, &qe);
		ret = HS_ERR;
	}
	(void)status_word;
	proto_analysis_free(&an);
	arena_free(&a);
	hs_interrupted = 0;
	return ret;
}

/* ---- :explain and :live ---- */

static void explain_set(const struct stmt *set, char *buf, size_t cap)
{
	struct set_plan p;
	plan_set_type(set, &p);
	size_t l = 0;
	if (!p.later) {
		l += (size_t)snprintf(buf + l, cap - l, "the membership is false for certain: the "
				      "roots are all; %s", p.roots_filter ? "one instance's roots "
				      "stream from one heap iteration (no tags), several instances' "
				      "are found and tagged one by one" : "the roots are found through "
				      "JNI");
		return;
	}
	if (!p.order_free) {
		snprintf(buf, cap, "on a snapshot: objects join in the order of the JVM's walk, and "
			 "on_inclusion is not only sums, counts and flags");
		return;
	}
	if (p.membership_reads_props) {
		snprintf(buf, cap, "on a snapshot: the membership reads ENTITY's properties, which "
			 "change as objects join");
		return;
	}
	l += (size_t)snprintf(buf + l, cap - l, "roots through JNI");
	if (p.s3root != TRI_FALSE || p.s3none != TRI_FALSE)
		l += (size_t)snprintf(buf + l, cap - l, "; step 3: one walk of the whole heap (the "
				      "membership may take %s without a referrer)",
				      p.s3none != TRI_FALSE ? "objects" : "GC roots");
	if (p.grow != TRI_FALSE)
		l += (size_t)snprintf(buf + l, cap - l, "; growth: one walk from the members%s",
				      p.grow == TRI_TRUE ? " (every reference from a member is "
				      "followed)" : " (the membership is asked per reference)");
}

static bool explain_next;	/* ":explain" alone: the next query is explained, not run */

bool sh_live_explain_pending(void)
{
	return explain_next;
}

int sh_cmd_explain(struct sh *sh, int argc, char **argv)
{
	if (argc < 2) {
		explain_next = true;
		return HS_OK;
	}
	size_t len = 0;
	for (int k = 1; k < argc; k++)
		len += strlen(argv[k]) + 1;
	char *text = xmalloc(len + 1);
	text[0] = 0;
	for (int k = 1; k < argc; k++) {
		strcat(text, argv[k]);
		if (k + 1 < argc)
			strcat(text, " ");
	}
	int rc = sh_live_explain(sh, text, NULL);
	free(text);
	return rc;
}

int sh_live_explain(struct sh *sh, const char *text, bool *incomplete)
{
	struct arena a = {0};
	struct stmt **st;
	int n;
	struct hs_error perr;
	enum parse_status ps = parse_snippet(text, &a, &st, &n, &perr);
	int rc = HS_OK;
	if (ps == PARSE_INCOMPLETE && incomplete) {
		*incomplete = true;
		goto out;
	}
	explain_next = false;
	if (ps != PARSE_OK) {
		rc = sh_error(sh, NULL, "%s", ps == PARSE_INCOMPLETE ? "the query is not complete "
			      "(give it on one line, or give :explain alone and the query on the "
			      "lines after it)" : perr.msg);
		goto out;
	}
	char why[400];
	if (sh->ss->heap) {
		out_printf("on the %s: %s is loaded, so every query runs on it\n",
			   sh_is_live(sh) ? "snapshot" : "dump", sh_is_live(sh) ? "a snapshot of the "
			   "JVM" : "a heap dump");
		goto out;
	}
	if (!sh_is_live(sh)) {
		out_printf("nowhere: no dump is open and no JVM is attached\n");
		goto out;
	}
	if (!dsl_needs_heap(st, n)) {
		out_printf("in heapsh: it needs no heap (no snapshot is taken)\n");
		goto out;
	}
	if (sh->live_off) {
		out_printf("on a snapshot: :live off\n");
		goto out;
	}
	uint8_t *prog = NULL;
	size_t plen = 0;
	int npre = 0;
	if (compile(sh, st, n, n ? st[0]->snippet : NULL, &a, &prog, &plen, &npre, why,
		    sizeof why)) {
		out_printf("on a snapshot: %s\n", why);
		goto out;
	}
	free(prog);
	bool pushdown = n == 1 && st[0]->kind == S_EXPR && sh_live_pushdown_shape(text);
	out_printf("inside JVM %d%s: the program is %zu bytes\n", sh_live_pid(sh),
		   pushdown ? " (a filter pushed down: one heap iteration)" : "", plen);
	for (int k = 0; k < n; k++) {
		const struct stmt *s = st[k];
		if (s->kind != S_INSTANCES)
			continue;
		struct stmt *set = NULL;
		for (int j = 0; j < k; j++)
			if (st[j]->kind == S_SET_TYPE && !strcmp(st[j]->name, s->name))
				set = st[j];
		if (!set)
			set = dsl_set_type_stmt(sh_dsl(sh), s->name);
		if (!set)
			continue;
		explain_set(set, why, sizeof why);
		out_printf("  instances_for %s: %s\n", s->name, why);
	}
	out_printf("  (the agent may still find something it cannot do, such as a field only a "
		   "snapshot has; heapsh then says so and takes a snapshot)\n");
out:
	arena_free(&a);
	return rc;
}

int sh_cmd_live(struct sh *sh, int argc, char **argv)
{
	for (int k = 1; k < argc; k++) {
		char *end = NULL;
		if (!strcmp(argv[k], "on") || !strcmp(argv[k], "off")) {
			sh->live_off = argv[k][1] == 'f';
		} else if (!strcmp(argv[k], "--time") && k + 1 < argc) {
			long v = strtol(argv[++k], &end, 10);
			if (!end || *end || v < 1 || v > 3600)
				return sh_error(sh, NULL, "--time takes seconds, 1 to 3600");
			sh->live_time_s = (uint32_t)v;
		} else if (!strcmp(argv[k], "--memory") && k + 1 < argc) {
			long v = strtol(argv[++k], &end, 10);
			if (!end || *end || v < 16 || v > 4096)
				return sh_error(sh, NULL, "--memory takes MiB, 16 to 4096");
			sh->live_mem_mb = (uint32_t)v;
		} else {
			return sh_error(sh, NULL, "usage: :live [on|off] [--time SECONDS] [--memory MiB]");
		}
	}
	if (argc == 1)	/* settings are changed silently, as :format does; alone, :live shows them */
		out_printf("queries inside the JVM: %s; time limit %u s, agent memory limit %u MiB\n",
			   sh->live_off ? "off (every query that needs the heap takes a snapshot)" : "on",
			   sh->live_time_s, sh->live_mem_mb);
	return HS_OK;
}
