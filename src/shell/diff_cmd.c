/*
 * diff_cmd.c - comparing two dumps (hs_diff; docs/manual.md, "Comparing
 * dumps"): `heapsh diff OLD NEW` from the command line and `:diff OLDER`
 * in the shell, the same options and the same output: a table (CSV), or
 * one JSON object of schema heapsh-diff/1, and the --fail-if conditions
 * that failed on stderr.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/fmt.h"
#include "../out/out.h"
#include "sh.h"

#define DIFF_SCHEMA "heapsh-diff/1"

static const char cli_usage[] =
	"heapsh [--format table|csv|json] diff OLD NEW [--by class|package|path] [--top N]\n"
	"       [--fail-if PATTERN:+PCT%|PATTERN:+SIZE ...] [--mixed-jdk] [--no-weak] [--no-index]";

static const char shell_usage[] =
	":diff OLDER|previous [--by class|package|path] [--top N] [--fail-if PATTERN:+PCT%|PATTERN:+SIZE] "
	"[--mixed-jdk] [--no-weak]";

/* What the command line and :diff share: options and the dumps named. */
struct diff_args {
	struct hs_diff_opts o;
	const char *fail_if[64];
	const char *dumps[2];
	int ndumps;
	bool no_index;
};

/*
 * parse: argv[0..argc) (options anywhere, dumps in order) into *a; cli
 * allows --format and --no-index too. NULL, or what is wrong.
 */
static const char *parse(int argc, char **argv, bool cli, struct diff_args *a, char *msg, size_t cap)
{
	a->o.top = 25;
	a->o.fail_if = a->fail_if;
	for (int k = 0; k < argc; k++) {
		const char *w = argv[k], *v = k + 1 < argc ? argv[k + 1] : NULL;
		if (!strcmp(w, "--by")) {
			if (!v || (strcmp(v, "class") && strcmp(v, "package") && strcmp(v, "path")))
				return "--by takes class, package or path";
			a->o.by = !strcmp(v, "class") ? HDIFF_CLASS : !strcmp(v, "package") ? HDIFF_PACKAGE
											: HDIFF_PATH;
			k++;
		} else if (!strcmp(w, "--top")) {
			char *end;
			long n = v ? strtol(v, &end, 10) : -1;
			if (!v || *end || !*v || n < 0 || n > 1000000)
				return "--top takes a number of rows (0: all)";
			a->o.top = (uint32_t)n;
			k++;
		} else if (!strcmp(w, "--fail-if")) {
			if (!v)
				return "--fail-if takes PATTERN:+PCT% or PATTERN:+SIZE";
			if (a->o.nfail_if == sizeof a->fail_if / sizeof *a->fail_if)
				return "at most 64 --fail-if conditions";
			a->fail_if[a->o.nfail_if++] = v;
			k++;
		} else if (!strcmp(w, "--mixed-jdk")) {
			a->o.mixed_jdk = true;
		} else if (!strcmp(w, "--no-weak")) {
			a->o.no_weak = true;
		} else if (cli && !strcmp(w, "--no-index")) {
			a->no_index = true;
		} else if (cli && !strcmp(w, "--format")) {
			int m = v ? out_mode_parse(v) : -1;
			if (m < 0)
				return "--format takes table, csv or json";
			out_mode = (enum out_mode)m;
			k++;
		} else if (w[0] == '-' && w[1]) {
			snprintf(msg, cap, "unknown option '%s'", w);
			return msg;
		} else if (a->ndumps < 2) {
			a->dumps[a->ndumps++] = w;
		} else {
			snprintf(msg, cap, "'%s' is extra", w);
			return msg;
		}
	}
	return NULL;
}

static const char *const by_name[] = {"class", "package", "path"};

static void json_side(const char *name, const struct hs_diff_side *s)
{
	FILE *f = out_stream();
	out_printf("\"%s\":{\"file\":", name);
	out_flush();
	out_json_string(f, s->file);
	out_printf(",\"objects\":%" PRIu64 ",\"reachable_bytes\":%" PRIu64 ",\"jdk\":", s->objects,
		   s->reachable_bytes);
	if (s->jdk)
		out_printf("%d", s->jdk);
	else
		out_printf("null");
	out_printf("}");
}

/* print: the rows in the output mode; with JSON, one object with the conditions too. */
static void print(const struct hs_diff *d, enum hdiff_by by)
{
	const char *cols[] = {by_name[by], "objects_before", "objects_after", "retained_before",
			      "retained_after", "retained_growth"};
	if (out_mode == OUT_JSON) {
		FILE *f = out_stream();
		out_printf("{\"schema\":\"" DIFF_SCHEMA "\",");
		json_side("old", &d->side[0]);
		out_printf(",");
		json_side("new", &d->side[1]);
		out_printf(",\"by\":\"%s\",\"candidates\":%u,\"rows\":[", by_name[by], d->r.candidates);
		for (uint32_t k = 0; k < d->r.nrows; k++) {
			const struct hdiff_row *r = &d->r.rows[k];
			out_printf("%s{\"%s\":", k ? "," : "", by_name[by]);
			out_flush();
			out_json_string(f, r->key);
			out_printf(",\"objects_before\":%" PRIu64 ",\"objects_after\":%" PRIu64
				   ",\"retained_before\":%" PRIu64 ",\"retained_after\":%" PRIu64
				   ",\"retained_growth\":%" PRId64 "}", r->objects[0], r->objects[1],
				   r->retained[0], r->retained[1], r->growth);
		}
		out_printf("],\"conditions\":[");
		for (uint32_t k = 0; k < d->r.nconds; k++) {
			const struct hdiff_cond *c = &d->r.conds[k];
			out_printf("%s{\"condition\":", k ? "," : "");
			out_flush();
			out_json_string(f, c->text);
			out_printf(",\"pattern\":");
			out_flush();
			out_json_string(f, c->pattern);
			out_printf(",\"limit\":%.17g,\"limit_unit\":\"%s\",\"before\":%" PRIu64
				   ",\"after\":%" PRIu64 ",\"growth\":%" PRId64 ",\"failed\":%s}",
				   c->limit, c->pct ? "percent" : "bytes", c->before, c->after, c->growth,
				   c->failed ? "true" : "false");
		}
		out_printf("]}\n");
		return;
	}
	if (out_mode == OUT_TABLE) {
		char a[32], b[32], g[32];
		int64_t grew = (int64_t)d->side[1].reachable_bytes - (int64_t)d->side[0].reachable_bytes;
		fmt_bytes(a, sizeof a, d->side[0].reachable_bytes);
		fmt_bytes(b, sizeof b, d->side[1].reachable_bytes);
		fmt_bytes(g, sizeof g, (unsigned long long)(grew < 0 ? -grew : grew));
		out_printf("%s -> %s: reachable %s -> %s (%s%s); %u %s%s compared\n", d->side[0].file,
			   d->side[1].file, a, b, grew < 0 ? "-" : "+", g, d->r.candidates,
			   by == HDIFF_PATH ? "merged path" : by_name[by],
			   d->r.candidates == 1 ? "" : by == HDIFF_CLASS ? "es" : "s");
		if (!d->r.nrows) {
			out_printf("no growth\n");
			return;
		}
	}
	struct out_table *t = out_table_new(6, cols);
	for (uint32_t k = 0; k < d->r.nrows; k++) {
		const struct hdiff_row *r = &d->r.rows[k];
		out_cell_str(t, r->key);
		out_cell_u64(t, r->objects[0]);
		out_cell_u64(t, r->objects[1]);
		out_cell_u64(t, r->retained[0]);
		out_cell_u64(t, r->retained[1]);
		out_cell_i64(t, r->growth);
	}
	out_table_end(t);
}

/* conditions: each failed one as a line on stderr; true when any failed. */
static bool conditions(const struct hs_diff *d)
{
	bool any = false;
	for (uint32_t k = 0; k < d->r.nconds; k++) {
		const struct hdiff_cond *c = &d->r.conds[k];
		if (!c->failed)
			continue;
		char lim[40], pct[48] = "";
		if (c->pct)
			snprintf(lim, sizeof lim, "+%g%%", c->limit);
		else
			snprintf(lim, sizeof lim, "+%.0f bytes", c->limit);
		if (c->before)
			snprintf(pct, sizeof pct, " (+%.1f%%)", 100.0 * (double)c->growth / (double)c->before);
		out_flush();
		fprintf(stderr, "heapsh: --fail-if '%s' failed: %s retained %" PRIu64 " bytes before, "
			"%" PRIu64 " after, growth +%" PRId64 " bytes%s, limit %s\n", c->text, c->pattern,
			c->before, c->after, c->growth, pct, lim);
		any = true;
	}
	return any;
}

/* run: the comparison of older with the session's heap, printed; 0, 1 (a condition failed) or 2. */
static int run(struct sh *sh, const char *older, const struct diff_args *a)
{
	struct hs_diff d;
	int st = hs_diff(sh->ss, older, &a->o, &d);
	if (st != HS_OK) {
		sh_error(sh, NULL, "%s", hs_errmsg(sh->ss));
		hs_diff_free(&d);
		return 2;
	}
	print(&d, a->o.by);
	bool failed = conditions(&d);
	hs_diff_free(&d);
	return failed ? 1 : 0;
}

int sh_diff_main(struct sh *sh, int argc, char **argv)
{
	struct diff_args a;
	char msg[300];
	memset(&a, 0, sizeof a);
	const char *bad = parse(argc, argv, true, &a, msg, sizeof msg);
	if (!bad && a.ndumps < 2)
		bad = "diff wants two dumps, the older first";
	if (bad) {
		fprintf(stderr, "heapsh: %s\nusage: %s\n", bad, cli_usage);
		return 2;
	}
	struct hs_options opt = hs_get_options(sh->ss);
	opt.no_index |= a.no_index;
	hs_set_options(sh->ss, &opt);
	if (sh_open(sh, a.dumps[1]) != HS_OK)
		return 2;
	int st = run(sh, a.dumps[0], &a);
	out_flush();
	return st;
}

int sh_cmd_diff(struct sh *sh, int argc, char **argv)
{
	struct diff_args a;
	char msg[300];
	memset(&a, 0, sizeof a);
	const char *bad = parse(argc - 1, argv + 1, false, &a, msg, sizeof msg);
	if (!bad && a.ndumps != 1)
		bad = a.ndumps ? "one older dump: the open heap is the newer" : "which older dump?";
	if (bad)
		return sh_error(sh, NULL, "%s; usage: %s", bad, shell_usage);
	const char *older = !strcmp(a.dumps[0], "previous") ? HS_PREVIOUS : a.dumps[0];
	if (!hs_heap(sh->ss) && !hs_live_pid(sh->ss))
		return sh_error(sh, NULL, "no heap open: :open NEW first, then :diff OLDER");
	return run(sh, older, &a) == 2 ? HS_ERR : HS_OK;
}
