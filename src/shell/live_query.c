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

#include "../base/fmt.h"
#include "../out/out.h"
#include "sh.h"


/* show: a value as the snapshot's evaluator shows it (query.c). */
static void show(struct sh *sh, const struct hs_jvm_result *r, void *arena)
{
	if (r->nobjs) {
		static const char *const cols[] = {"id", "class", "shallow_bytes", "retained_bytes"};
		struct out_table *t = out_table_new(4, cols);
		uint32_t n = r->nobjs, limit = out_mode == OUT_TABLE && n > 100 ? 100 : n;
		uint64_t shallow = 0;
		for (uint32_t k = 0; k < n; k++) {
			const struct hs_jvm_obj *o = &r->objs[k];
			shallow += o->size;
			if (k >= limit)
				continue;
			out_cell_fmt(t, "0x%" PRIx64, o->id);
			if (o->is_class)
				out_cell_fmt(t, "class %s", o->name);
			else
				out_cell_str(t, o->name);
			out_cell_u64(t, o->size);
			out_cell_null(t);	/* retained sizes need a snapshot */
		}
		out_table_end(t);
		if (out_mode == OUT_TABLE)
			out_printf("%s%u object%s, %" PRIu64 " shallow bytes\n",
				   limit < n ? "... " : "", n, n == 1 ? "" : "s", shallow);
		return;
	}
	sh_show_value(sh, r->v, arena);
}

/* ---- running a snippet inside the JVM ---- */

int sh_show_jvm(struct sh *sh, const char *text, const char *where, int first_line,
		const struct hs_answer *a)
{
	struct arena scratch = {NULL, 0};	/* texts made while printing */
	for (uint32_t k = 0; k < a->nresults; k++)
		show(sh, &a->results[k], &scratch);
	out_flush();
	arena_free(&scratch);
	int ret = HS_OK;
	if (a->cancelled) {
		ret = sh_error(sh, where, "interrupted (the analysis inside JVM %d stopped)",
			       sh_live_pid(sh));
	} else if (a->error) {
		sh_query_report(sh, text, where, first_line, &a->err);
		ret = HS_ERR;
	} else if (a->has_costs && (out_mode == OUT_TABLE || sh->timer || isatty(STDERR_FILENO))) {
		out_flush();	/* what came before it first, in one file too */
		fprintf(stderr, "inside JVM %d, no snapshot taken: %" PRIu64 " heap walk%s, "
			"the JVM paused %" PRIu64 " ms (%" PRIu64 " ms of it a full GC), %"
			PRIu64 " ms in all\n", sh_live_pid(sh), a->walks,
			a->walks == 1 ? "" : "s", a->pause_ms + a->gc_ms, a->gc_ms, a->total_ms);
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
	bool more = false;
	char *out = NULL;
	int rc = hs_explain(sh->ss, text, &more, &out);
	if (rc == HS_OK && more && incomplete) {
		*incomplete = true;
		return HS_OK;
	}
	explain_next = false;
	if (rc != HS_OK)
		return sh_error(sh, NULL, "%s", hs_errmsg(sh->ss));
	if (more)
		return sh_error(sh, NULL, "the query is not complete (give it on one line, or give "
				":explain alone and the query on the lines after it)");
	out_printf("%s", out);
	free(out);
	return HS_OK;
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
