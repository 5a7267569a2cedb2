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

#include "../heapsh.h"
#include "../base/fmt.h"
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
	struct hs_plan p;
	int rc = hs_explain(sh->ss, text, &p);
	if (p.where == HS_WHERE_INCOMPLETE && incomplete) {
		*incomplete = true;
		return HS_OK;
	}
	explain_next = false;
	switch (p.where) {
	case HS_WHERE_INCOMPLETE:
		return sh_error(sh, NULL, "the query is not complete (give it on one line, or give "
				":explain alone and the query on the lines after it)");
	case HS_WHERE_ERROR:
		return sh_error(sh, NULL, "%s", hs_err(sh->ss)->msg);
	case HS_WHERE_HEAP:
		out_printf("on the %s: %s is loaded, so every query runs on it\n",
			   sh_is_live(sh) ? "snapshot" : "dump", sh_is_live(sh) ? "a snapshot of the "
			   "JVM" : "a heap dump");
		break;
	case HS_WHERE_NOWHERE:
		out_printf("nowhere: no dump is open and no JVM is attached\n");
		break;
	case HS_WHERE_HEAPSH:
		out_printf("in heapsh: it needs no heap (no snapshot is taken)\n");
		break;
	case HS_WHERE_SNAPSHOT:
		out_printf("on a snapshot: %s\n", p.why);
		break;
	case HS_WHERE_JVM:
		out_printf("inside JVM %d%s: the program is %zu bytes\n", sh_live_pid(sh),
			   p.pushdown ? " (a filter pushed down: one heap iteration)" : "",
			   p.program_bytes);
		for (int k = 0; k < p.nsets; k++)
			out_printf("  instances_for %s: %s\n", p.sets[k].name, p.sets[k].how);
		out_printf("  (the agent may still find something it cannot do, such as a field "
			   "only a snapshot has; heapsh then says so and takes a snapshot)\n");
		break;
	}
	return rc;
}

int sh_cmd_live(struct sh *sh, int argc, char **argv)
{
	for (int k = 1; k < argc; k++) {
		char *end = NULL;
		if (!strcmp(argv[k], "on") || !strcmp(argv[k], "off")) {
			hs_options(sh->ss)->live_off = argv[k][1] == 'f';
		} else if (!strcmp(argv[k], "--time") && k + 1 < argc) {
			long v = strtol(argv[++k], &end, 10);
			if (!end || *end || v < 1 || v > 3600)
				return sh_error(sh, NULL, "--time takes seconds, 1 to 3600");
			hs_options(sh->ss)->live_time_s = (uint32_t)v;
		} else if (!strcmp(argv[k], "--memory") && k + 1 < argc) {
			long v = strtol(argv[++k], &end, 10);
			if (!end || *end || v < 16 || v > 4096)
				return sh_error(sh, NULL, "--memory takes MiB, 16 to 4096");
			hs_options(sh->ss)->live_mem_mb = (uint32_t)v;
		} else {
			return sh_error(sh, NULL, "usage: :live [on|off] [--time SECONDS] [--memory MiB]");
		}
	}
	if (argc == 1)	/* settings are changed silently, as :format does; alone, :live shows them */
		out_printf("queries inside the JVM: %s; time limit %u s, agent memory limit %u MiB\n",
			   hs_options(sh->ss)->live_off ? "off (every query that needs the heap takes a snapshot)" : "on",
			   hs_options(sh->ss)->live_time_s, hs_options(sh->ss)->live_mem_mb);
	return HS_OK;
}
