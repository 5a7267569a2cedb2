/*
 * live_query.c - the shell's side of queries answered inside an attached
 * JVM (docs/agent.md, "Analyses inside the JVM"; the session runs them,
 * src/session/query.c): their values shown as a snapshot's would be, the
 * JVM's costs, and when one cannot run there, why, before a snapshot
 * answers it. :explain says where a query will run and why; :live sets
 * the limits, or turns this off.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../attach/proto.h"
#include "../base/fmt.h"
#include "../dsl/parse.h"
#include "../dsl/plan.h"
#include "../dsl/prog.h"
#include "../out/out.h"
#include "sh.h"


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
	sh_show_value(sh, hs_jvm_value(a, v, &objects), a);
}

/* ---- running a snippet inside the JVM ---- */

int sh_show_jvm(struct sh *sh, const char *text, const char *where, int first_line,
		struct hs_jvm_query *q)
{
	if (!q->has_analysis)	/* only comments */
		return HS_OK;
	const struct proto_analysis *an = &q->an;
	for (uint32_t k = 0; k < an->nresults; k++) {
		const struct proto_result *r = &an->results[k];
		if (r->stmt >= q->npre && r->stmt < q->failed_at && r->kind != S_LET)
			show(sh, &r->v, &q->a);
	}
	out_flush();
	int ret = HS_OK;
	if (an->status == PROTO_ANALYSIS_OK) {
		if (out_mode == OUT_TABLE || sh->timer || isatty(STDERR_FILENO)) {
			out_flush();	/* what came before it first, in one file too */
			fprintf(stderr, "inside JVM %d, no snapshot taken: %" PRIu64 " heap walk%s, "
				"the JVM paused %" PRIu64 " ms (%" PRIu64 " ms of it a full GC), %"
				PRIu64 " ms in all\n", sh_live_pid(sh), an->walks,
				an->walks == 1 ? "" : "s", an->pause_ms + an->gc_ms, an->gc_ms,
				an->total_ms);
		}
	} else if (an->status == PROTO_ANALYSIS_CANCELLED) {
		ret = sh_error(sh, where, "interrupted (the analysis inside JVM %d stopped)",
			       sh_live_pid(sh));
	} else {
		struct hs_error qe;
		hs_error_clear(&qe);
		snprintf(qe.msg, sizeof qe.msg, "%s%s", an->msg, an->earlier ? " (in code from an "
			 "earlier snippet)" : "");
		qe.line = an->earlier ? 0 : an->line;
		qe.col = an->earlier ? 0 : an->col;
		sh_query_report(sh, text, where, first_line, &qe);
		ret = HS_ERR;
	}
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
	if (hs_heap(sh->ss)) {
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
	if (hs_get_options(sh->ss).live_off) {
		out_printf("on a snapshot: :live off\n");
		goto out;
	}
	uint8_t *prog = NULL;
	size_t plen = 0;
	int npre = 0;
	if (hs_jvm_compile(sh->ss, st, n, n ? st[0]->snippet : NULL, &a, &prog, &plen, &npre, why,
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
	struct hs_options o = hs_get_options(sh->ss);
	for (int k = 1; k < argc; k++) {
		char *end = NULL;
		if (!strcmp(argv[k], "on") || !strcmp(argv[k], "off")) {
			o.live_off = argv[k][1] == 'f';
		} else if (!strcmp(argv[k], "--time") && k + 1 < argc) {
			long v = strtol(argv[++k], &end, 10);
			if (!end || *end || v < 1 || v > 3600)
				return sh_error(sh, NULL, "--time takes seconds, 1 to 3600");
			o.live_time_s = (uint32_t)v;
		} else if (!strcmp(argv[k], "--memory") && k + 1 < argc) {
			long v = strtol(argv[++k], &end, 10);
			if (!end || *end || v < 16 || v > 4096)
				return sh_error(sh, NULL, "--memory takes MiB, 16 to 4096");
			o.live_mem_mb = (uint32_t)v;
		} else {
			return sh_error(sh, NULL, "usage: :live [on|off] [--time SECONDS] [--memory MiB]");
		}
	}
	hs_set_options(sh->ss, &o);
	if (argc == 1)	/* settings are changed silently, as :format does; alone, :live shows them */
		out_printf("queries inside the JVM: %s; time limit %u s, agent memory limit %u MiB\n",
			   o.live_off ? "off (every query that needs the heap takes a snapshot)" : "on",
			   o.live_time_s, o.live_mem_mb);
	return HS_OK;
}
