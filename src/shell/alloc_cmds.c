/*
 * alloc_cmds.c - the :alloc command: allocation recordings in the attached
 * JVM (docs/agent.md, "Allocation recordings"). It starts, stops, resets
 * and marks the agent's recording, reads it (the session's hs_alloc_*) and shows
 * the views of src/alloc/alloc.h as tables in the current output mode, as
 * folded stacks or as a flame graph.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "../base/fmt.h"
#include "../out/out.h"
#include "sh.h"

#define DEFAULT_INTERVAL (512u * 1024)
#define DEFAULT_DEPTH 64

static const char NEED_LIVE[] = ":alloc needs a live JVM: attach with 'heapsh PID' or ':attach PID' "
				"(a heap dump records no allocations), or a JFR recording: "
				"':open REC.jfr'";

/* parse_bytes: "524288", "512k", "4m", "1g" -> bytes; false when not a whole number. */
static bool parse_bytes(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	if (*s < '0' || *s > '9')
		return false;
	unsigned long long v = strtoull(s, &end, 10);
	uint64_t mul = 1;
	if (*end == 'k' || *end == 'K')
		mul = 1024;
	else if (*end == 'm' || *end == 'M')
		mul = 1024 * 1024;
	else if (*end == 'g' || *end == 'G')
		mul = 1024 * 1024 * 1024;
	if (mul > 1)
		end++;
	if (errno || *end || (v && mul > UINT64_MAX / v))
		return false;
	*out = v * mul;
	return true;
}

/* when: a wall-clock time in ms since the epoch as local "YYYY-MM-DD HH:MM:SS". */
static void when(uint64_t ms, char *buf, size_t cap)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(buf, cap, "%Y-%m-%d %H:%M:%S", &tm);
}

/* show_status: a recording's state as rows of property, value. */
static void show_status(struct sh *sh, const struct alc_status *st)
{
	static const char *const cols[] = {"property", "value"};
	struct out_table *t = out_table_new(2, cols);
	char buf[64];
	const char *rec_path;
	if (!sh_is_live(sh) && hs_recording(sh->ss, &rec_path)) {
		out_cell_str(t, "file");
		out_cell_str(t, rec_path);
		out_cell_str(t, "recording");
		out_cell_str(t, "read from a JFR recording (events; estimates)");
		out_cell_str(t, "depth");
		out_cell_fmt(t, "%u frame%s at most", st->depth, fmt_s(st->depth));
		when(st->started_ms, buf, sizeof buf);
		out_cell_str(t, "first event");
		out_cell_str(t, buf);
		when(st->stopped_ms, buf, sizeof buf);
		out_cell_str(t, "last event");
		out_cell_str(t, buf);
		out_cell_str(t, "allocation events read");
		out_cell_u64(t, st->events);
		out_cell_str(t, "live objects");
		out_cell_str(t, st->no_live ? "unknown: no jdk.OldObjectSample events"
					    : "jdk.OldObjectSample events");
		out_table_end(t);
		return;
	}
	out_cell_str(t, "jvm");
	out_cell_fmt(t, "pid %d", sh_live_pid(sh));
	out_cell_str(t, "recording");
	out_cell_str(t, !st->exists ? "none" : st->recording ? "running" : "stopped");
	if (st->exists) {
		out_cell_str(t, "mode");
		if (st->exact && st->bytecode)
			out_cell_str(t, "exact, by bytecode instrumentation");
		else if (st->exact)
			out_cell_str(t, "exact, by JVMTI events");
		else
			out_cell_fmt(t, "sampled, one per %" PRIu64 " bytes on average (estimates)",
				     st->interval);
		out_cell_str(t, "cost (measured, docs/performance.md)");
		out_cell_str(t, alc_cost(st));
		out_cell_str(t, "accounts");
		out_cell_str(t, st->accounts ? st->accounts : "(none given)");
		out_cell_str(t, "depth");
		out_cell_fmt(t, "%u frame%s", st->depth, fmt_s(st->depth));
		when(st->started_ms, buf, sizeof buf);
		out_cell_str(t, "since");
		out_cell_str(t, buf);
		if (st->stopped_ms) {
			when(st->stopped_ms, buf, sizeof buf);
			out_cell_str(t, "stopped");
			out_cell_str(t, buf);
		}
		out_cell_str(t, st->exact ? "allocations recorded" : "samples recorded");
		out_cell_u64(t, st->events);
		out_cell_str(t, "dropped (tables full)");
		out_cell_u64(t, st->dropped);
		out_cell_str(t, "agent memory (bytes)");
		out_cell_u64(t, st->agent_bytes);
		out_cell_str(t, "tracked objects alive at the last read");
		if (st->no_live)
			out_cell_str(t, "none: objects not followed (--live none)");
		else
			out_cell_u64(t, st->tracked);
		if (st->exact && st->bytecode) {
			out_cell_str(t, "live counts");
			out_cell_str(t, st->no_live ? "none (--live none)"
				      : st->live_sampled ? "estimated: each key's first 256 objects per thread, "
							   "then one in 64 at random (--live sampled)"
				      : "exact: every object followed (--live all)");
		}
		if (st->bytecode) {
			out_cell_str(t, "classes instrumented");
			out_cell_u64(t, st->classes_instrumented);
			out_cell_str(t, "classes left as they were");
			out_cell_u64(t, st->classes_failed);
			if (st->seen_bytes) {
				out_cell_str(t, "not seen by the rewritten code (estimated)");
				out_cell_fmt(t, "~%" PRIu64 " of ~%" PRIu64 " bytes allocated since the start "
					     "(%.1f %%): the VM's own objects, JNI, hidden classes, methods "
					     "running old code", st->missed_bytes, st->seen_bytes,
					     100.0 * (double)st->missed_bytes / (double)st->seen_bytes);
			}
			/* Each method running its code from before the start: not counted yet. */
			for (const char *u = st->uncovered; u && *u;) {
				const char *nl = strchr(u, '\n');
				int n = nl ? (int)(nl - u) : (int)strlen(u);
				out_cell_str(t, "not counted until it returns");
				out_cell_fmt(t, "%.*s", n, u);
				u += n + (nl ? 1 : 0);
			}
		}
		out_cell_str(t, "mark");
		if (st->has_mark) {
			when(st->mark_ms, buf, sizeof buf);
			out_cell_str(t, buf);
		} else {
			out_cell_str(t, "none");
		}
	}
	out_table_end(t);
	hs_alloc_bounds(sh->ss, st);
}

/* start_progress: classes rewritten so far by an exact recording's start (on a terminal). */
static void start_progress(void *ctx, uint32_t done, uint32_t total)
{
	(void)ctx;
	char what[64];
	snprintf(what, sizeof what, "classes rewritten %u of %u,", done, total);
	hs_progress(what, done, total);
}

static int cmd_start(struct sh *sh, int argc, char **argv)
{
	struct alc_opts o = {false, false, ALC_LIVE_SAMPLED, DEFAULT_INTERVAL, 0, NULL};
	const char *live = NULL;
	const char *via = NULL;
	for (int a = 2; a < argc; a++) {
		const char *opt = argv[a];
		if (a + 1 >= argc && (!strcmp(opt, "--interval") || !strcmp(opt, "--accounts") ||
				      !strcmp(opt, "--depth") || !strcmp(opt, "--via") ||
				      !strcmp(opt, "--live")))
			return sh_error(sh, NULL, "%s needs a value", opt);
		if (!strcmp(opt, "--interval")) {
			const char *v = argv[++a];
			if (!strcmp(v, "exact")) {
				o.exact = true;
			} else if (!parse_bytes(v, &o.interval) || o.interval < 1 ||
				   o.interval > INT32_MAX) {
				return sh_error(sh, NULL, "--interval takes 'exact' or a number of bytes "
						"from 1 to 2147483647 (512k, 4m), not '%s'", v);
			}
		} else if (!strcmp(opt, "--accounts")) {
			/* The agent checks the patterns (it takes them from its options too). */
			o.accounts = argv[++a];
		} else if (!strcmp(opt, "--depth")) {
			char *end;
			long d = strtol(argv[++a], &end, 10);
			if (*end || d < 1 || d > 1024)
				return sh_error(sh, NULL, "--depth takes a number of frames from 1 to "
						"1024, not '%s'", argv[a]);
			o.depth = (uint32_t)d;
		} else if (!strcmp(opt, "--live")) {
			live = argv[++a];
			if (!strcmp(live, "sampled"))
				o.live = ALC_LIVE_SAMPLED;
			else if (!strcmp(live, "all"))
				o.live = ALC_LIVE_ALL;
			else if (!strcmp(live, "none"))
				o.live = ALC_LIVE_NONE;
			else
				return sh_error(sh, NULL, "--live takes sampled, all or none, not '%s'", live);
		} else if (!strcmp(opt, "--via")) {
			via = argv[++a];
			if (strcmp(via, "bytecode") && strcmp(via, "jvmti"))
				return sh_error(sh, NULL, "--via takes bytecode or jvmti, not '%s'", via);
		} else {
			return sh_error(sh, NULL, "unknown option '%s' of :alloc start (--interval, "
					"--accounts, --depth, --via, --live)", opt);
		}
	}
	if (live && (!o.exact || (via && !strcmp(via, "jvmti"))) && o.live != ALC_LIVE_NONE)
		return sh_error(sh, NULL, "--live sampled and --live all choose how an exact recording "
				"by bytecode follows its objects; a sampled or JVMTI recording follows each "
				"object it records (--live none leaves them out)");
	if (via && !o.exact)
		return sh_error(sh, NULL, "--via chooses how an exact recording is made: give "
				"--interval exact too (a sampled recording always uses JVMTI)");
	o.jvmti = via && !strcmp(via, "jvmti");
	/* An exact recording counts sites unless told otherwise; a sampled one keeps stacks. */
	if (!o.depth)
		o.depth = o.exact ? 1 : DEFAULT_DEPTH;
	if (!sh_is_live(sh))
		return sh_error(sh, NULL, "%s", NEED_LIVE);
	struct alc_status st;
	if (o.exact && !o.jvmti)
		sh_progress_begin("starting the recording (Ctrl-C cancels)");
	int rc = hs_alloc_start(sh->ss, &o, start_progress, NULL, &st);
	if (o.exact && !o.jvmti)
		sh_progress_end();
	if (rc)
		return sh_error(sh, NULL, "%s", hs_errmsg(sh->ss));
	show_status(sh, &st);
	alc_status_free(&st);
	return HS_OK;
}

int sh_alloc_fetch(struct sh *sh, struct alc_rec **out)
{
	if (!sh_is_live(sh) && !hs_recording(sh->ss, NULL))
		return sh_error(sh, NULL, "%s", NEED_LIVE);
	if (hs_alloc_fetch(sh->ss, out) != HS_OK)
		return sh_error(sh, NULL, "%s", hs_errmsg(sh->ss));
	return HS_OK;
}

/* count: a counter cell, "~N" in table mode when it is an estimate. */
static void count(struct out_table *t, const struct alc_rec *r, double v)
{
	uint64_t n = (uint64_t)llround(v);
	if (r->st.exact || out_mode != OUT_TABLE)
		out_cell_u64(t, n);
	else
		out_cell_fmt(t, "~%" PRIu64, n);
}

/* live: a live-count cell: an estimate also in an exact recording that follows a sample. */
static void live(struct out_table *t, const struct alc_rec *r, double v)
{
	uint64_t n = (uint64_t)llround(v);
	if ((r->st.exact && !r->st.live_sampled) || out_mode != OUT_TABLE)
		out_cell_u64(t, n);
	else
		out_cell_fmt(t, "~%" PRIu64, n);
}

/* opts: --live, --top N, --objects, --min PCT after argv[from]; HS_ERR reported. */
struct view_opts {
	bool live, objects;
	long top;
	double min_pct;
	const char *file;
};

/* listed: opt is one of the space-separated words of allowed. */
static bool listed(const char *allowed, const char *opt)
{
	size_t n = strlen(opt);
	for (const char *p = allowed; (p = strstr(p, opt)); p += n)
		if ((p == allowed || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

static int view_opts(struct sh *sh, int argc, char **argv, const char *allowed, bool file,
		     struct view_opts *o)
{
	memset(o, 0, sizeof *o);
	o->top = -1;
	for (int a = 2; a < argc; a++) {
		const char *opt = argv[a];
		if (opt[0] != '-' && file && !o->file) {
			o->file = opt;
			continue;
		}
		if (!*opt || !listed(allowed, opt))
			return sh_error(sh, NULL, "unknown argument '%s' of :alloc %s (%s)", opt,
					argv[1], allowed);
		if (!strcmp(opt, "--live")) {
			o->live = true;
		} else if (!strcmp(opt, "--objects")) {
			o->objects = true;
		} else if (!strcmp(opt, "--top") || !strcmp(opt, "--min")) {
			if (a + 1 >= argc)
				return sh_error(sh, NULL, "%s needs a value", opt);
			char *end;
			const char *v = argv[++a];
			if (opt[2] == 't') {
				o->top = strtol(v, &end, 10);
				if (*end || o->top < 1)
					return sh_error(sh, NULL, "--top takes a number of rows from 1, "
							"not '%s'", v);
			} else {
				o->min_pct = strtod(v, &end);
				if (*end || !(o->min_pct >= 0 && o->min_pct <= 100))
					return sh_error(sh, NULL, "--min takes a percentage from 0 to "
							"100, not '%s'", v);
			}
		}
	}
	if (file && !o->file)
		return sh_error(sh, NULL, "usage: :alloc %s FILE", argv[1]);
	return HS_OK;
}

/* more: the "N of M rows shown" note when rows were cut. */
static void more(uint32_t shown, uint32_t n)
{
	if (shown < n && out_mode == OUT_TABLE)
		out_printf("(%u of %u rows shown; --top N for more)\n", shown, n);
}

static uint32_t cut(const struct view_opts *o, uint32_t n, uint32_t dflt)
{
	uint64_t top = o->top > 0 ? (uint64_t)o->top : dflt;
	return top < n ? (uint32_t)top : n;
}

static int show_rows(struct sh *sh, const char *what, const struct view_opts *o,
		     const struct alc_rec *r)
{
	(void)sh;
	uint32_t n = 0;
	struct alc_row *rows;
	bool acc = !strcmp(what, "accounts"), site = !strcmp(what, "sites");
	if (acc)
		rows = alc_by_account(r, o->live, &n);
	else if (site)
		rows = alc_by_site(r, o->live, &n);
	else
		rows = alc_by_class(r, o->live, &n);
	static const char *const acols[] = {"account", "class", "allocated_objects",
					    "allocated_bytes", "live_objects", "live_bytes"};
	static const char *const ccols[] = {"class", "allocated_objects", "allocated_bytes",
					    "live_objects", "live_bytes", "array_elements"};
	static const char *const scols[] = {"site", "class", "allocated_objects", "allocated_bytes",
					    "live_objects", "live_bytes", "array_elements"};
	struct out_table *t = acc ? out_table_new(6, acols) : site ? out_table_new(7, scols)
								   : out_table_new(6, ccols);
	uint32_t shown = cut(o, n, acc ? UINT32_MAX : 50);
	for (uint32_t i = 0; i < shown; i++) {
		const struct alc_row *w = &rows[i];
		if (acc) {
			out_cell_str(t, w->account);
		} else if (site) {
			char frame[1024];
			alc_frame_text(r, w->node, frame, sizeof frame);
			out_cell_str(t, frame);
		}
		out_cell_str(t, w->cls);
		count(t, r, w->objs);
		count(t, r, w->bytes);
		live(t, r, w->live_objs);
		live(t, r, w->live_bytes);
		if (!acc)
			count(t, r, w->elems);
	}
	out_table_end(t);
	more(shown, n);
	free(rows);
	return HS_OK;
}

static int show_tree(const struct view_opts *o, const struct alc_rec *r)
{
	uint32_t n = 0;
	struct alc_tree_row *rows = alc_tree(r, o->min_pct, &n);
	static const char *const cols[] = {"depth", "frame", "self_objects", "self_bytes",
					   "total_objects", "total_bytes", "live_objects",
					   "live_bytes", "array_elements"};
	struct out_table *t = out_table_new(9, cols);
	for (uint32_t i = 0; i < n; i++) {
		const struct alc_tree_row *w = &rows[i];
		char frame[1100], text[1024];
		if (w->cls)
			snprintf(text, sizeof text, "new %s", w->cls);
		else
			alc_frame_text(r, w->node, text, sizeof text);
		/* Indentation shows the tree in a table; CSV and JSON have the depth column. */
		int ind = out_mode == OUT_TABLE ? (w->depth < 40 ? w->depth : 40) * 2 : 0;
		snprintf(frame, sizeof frame, "%*s%s", ind, "", text);
		out_cell_i64(t, w->depth);
		out_cell_str(t, frame);
		count(t, r, w->self_objs);
		count(t, r, w->self_bytes);
		count(t, r, w->total_objs);
		count(t, r, w->total_bytes);
		live(t, r, w->live_objs);
		live(t, r, w->live_bytes);
		count(t, r, w->elems);
	}
	out_table_end(t);
	free(rows);
	return HS_OK;
}

static int show_diff(const struct view_opts *o, const struct alc_rec *r, struct sh *sh)
{
	if (!r->st.has_mark)
		return sh_error(sh, NULL, "no mark to compare with: ':alloc mark' remembers the live "
				"objects now, ':alloc diff' later shows what grew");
	uint32_t n = 0;
	struct alc_row *rows = alc_diff(r, &n);
	static const char *const cols[] = {"account", "site", "class", "live_objects", "live_bytes",
					   "mark_objects", "mark_bytes", "growth_objects",
					   "growth_bytes"};
	struct out_table *t = out_table_new(9, cols);
	uint32_t shown = cut(o, n, 50);
	for (uint32_t i = 0; i < shown; i++) {
		const struct alc_row *w = &rows[i];
		char frame[1024];
		alc_frame_text(r, w->node, frame, sizeof frame);
		out_cell_str(t, w->account);
		out_cell_str(t, frame);
		out_cell_str(t, w->cls);
		live(t, r, w->live_objs);
		live(t, r, w->live_bytes);
		live(t, r, w->mark_objs);
		live(t, r, w->mark_bytes);
		double go = w->live_objs - w->mark_objs, gb = w->live_bytes - w->mark_bytes;
		if ((r->st.exact && !r->st.live_sampled) || out_mode != OUT_TABLE) {
			out_cell_i64(t, (int64_t)llround(go));
			out_cell_i64(t, (int64_t)llround(gb));
		} else {
			out_cell_fmt(t, "~%+" PRId64, (int64_t)llround(go));
			out_cell_fmt(t, "~%+" PRId64, (int64_t)llround(gb));
		}
	}
	out_table_end(t);
	more(shown, n);
	char buf[64];
	when(r->st.mark_ms, buf, sizeof buf);
	if (out_mode == OUT_TABLE)
		out_printf("(live objects now against the mark of %s)\n", buf);
	free(rows);
	return HS_OK;
}

/* A row of the agent's leak search with its site's growth (NULL: none) and place in alc_growth. */
struct ranked {
	struct alc_leak_row row;
	uint32_t rank;
	const struct alc_growth *g;
};

/* by_rank: the site that grew most first, then most samples, then path. */
static int by_rank(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->row.samples != y->row.samples)
		return x->row.samples < y->row.samples ? 1 : -1;
	return strcmp(x->row.path, y->row.path);
}

/*
 * show_live_leaks: :alloc leaks in a running JVM: the agent's search for
 * paths from GC roots to the leak sample of the classes of the sites that
 * grew most (hs_alloc_leaks), one row per class, path and site, with the
 * site's live objects, bytes and growth and the samples' mean age in GCs.
 */
static int show_live_leaks(struct sh *sh, const struct view_opts *o, struct alc_rec *r)
{
	if (r->st.no_live)
		return sh_error(sh, NULL, "this recording does not follow its objects (--live none): "
				":alloc start without --live none to find leaks");
	uint32_t secs = hs_get_options(sh->ss).live_time_s, mib = hs_get_options(sh->ss).live_mem_mb;
	struct hs_leak_search ls;	/* what the search did: hs_alloc_leaks says it in notices */
	if (hs_alloc_leaks(sh->ss, r, (uint64_t)secs * 1000, (uint64_t)mib << 20, &ls) != HS_OK)
		return sh_error(sh, NULL, "%s", hs_errmsg(sh->ss));
	uint32_t ng = 0, n = 0;
	struct alc_growth *g = alc_growth(r, &ng);
	struct alc_leak_row *rows = alc_leaks(r, &n);
	struct ranked *rk = xcalloc((size_t)n + 1, sizeof *rk);
	for (uint32_t i = 0; i < n; i++) {
		rk[i].row = rows[i];
		rk[i].rank = UINT32_MAX;
		for (uint32_t k = 0; k < ng && rk[i].rank == UINT32_MAX; k++)
			if (g[k].node == rows[i].node && !strcmp(g[k].name, rows[i].cls))
				rk[i].rank = k;
		rk[i].g = rk[i].rank < ng ? &g[rk[i].rank] : NULL;
	}
	qsort(rk, n, sizeof *rk, by_rank);
	static const char *const cols[] = {"class",	   "samples",	 "path",	  "allocated_at",
					   "live_objects", "live_bytes", "growth_bytes", "age_gcs"};
	struct out_table *t = out_table_new(8, cols);
	uint32_t shown = cut(o, n, 25);
	for (uint32_t i = 0; i < shown; i++) {
		const struct alc_leak_row *w = &rk[i].row;
		char frame[1024];
		alc_frame_text(r, w->node, frame, sizeof frame);
		out_cell_str(t, w->cls);
		out_cell_u64(t, w->samples);
		out_cell_str(t, w->path);
		out_cell_str(t, frame);
		if (rk[i].g) {
			count(t, r, rk[i].g->live_objs);
			sh_bytes_cell(t, (uint64_t)llround(rk[i].g->live_bytes));
			out_cell_i64(t, (int64_t)llround(rk[i].g->growth_bytes));
		} else {
			out_cell_null(t);
			out_cell_null(t);
			out_cell_null(t);
		}
		if (w->aged)
			out_cell_u64(t, (w->age_sum + w->aged / 2) / w->aged);
		else
			out_cell_null(t);
	}
	out_table_end(t);
	more(shown, n);
	free(rk);
	free(rows);
	free(g);
	return HS_OK;
}

/*
 * show_leaks: the recording's sampled live objects with their paths from GC
 * roots, merged (alc_leaks): in a running JVM the agent's search
 * (show_live_leaks); from a JFR recording, what its jdk.OldObjectSample
 * events with path-to-gc-roots=true hold.
 */
static int show_leaks(struct sh *sh, const struct view_opts *o, struct alc_rec *r)
{
	if (sh_is_live(sh))
		return show_live_leaks(sh, o, r);
	const char *rec_path;
	hs_recording(sh->ss, &rec_path);
	if (!r->nleaks)
		return sh_error(sh, NULL, "%s has no old object samples with paths to GC roots: JFR "
				"writes them with path-to-gc-roots=true (JFR.dump, JFR.stop or "
				"-XX:StartFlightRecording)", rec_path);
	uint32_t n = 0;
	struct alc_leak_row *rows = alc_leaks(r, &n);
	static const char *const cols[] = {"class", "samples", "path", "allocated_at"};
	struct out_table *t = out_table_new(4, cols);
	uint32_t shown = cut(o, n, 25);
	uint64_t skipped = 0;
	for (uint32_t i = 0; i < shown; i++) {
		char frame[1024];
		alc_frame_text(r, rows[i].node, frame, sizeof frame);
		out_cell_str(t, rows[i].cls);
		out_cell_u64(t, rows[i].samples);
		out_cell_str(t, rows[i].path);
		out_cell_str(t, frame);
		skipped += rows[i].skipped;
	}
	out_table_end(t);
	more(shown, n);
	if (out_mode == OUT_TABLE)
		out_printf("(%u live object%s sampled by JFR, with their paths from GC roots%s)\n",
			   r->nleaks, r->nleaks == 1 ? "" : "s",
			   skipped ? "; \"links JFR left out\": JFR keeps the ends of long chains" : "");
	free(rows);
	return HS_OK;
}

static int write_file(struct sh *sh, const char *what, const struct view_opts *o,
		      const struct alc_rec *r)
{
	if (!strcmp(what, "pprof")) {
		struct hs_error err;
		char *note = hs_recording_label(sh->ss);
		int rc = alc_pprof(r, o->file, note, &err);
		free(note);
		if (rc != HS_OK)
			return sh_error(sh, NULL, "%s", err.msg);
		out_printf("wrote %s (pprof: go tool pprof -sample_index=alloc_space %s)\n", o->file,
			   o->file);
		return HS_OK;
	}
	FILE *f = fopen(o->file, "w");
	if (!f)
		return sh_error(sh, NULL, "cannot write %s: %s", o->file, strerror(errno));
	size_t len = strlen(o->file);
	bool html = len > 5 && !strcasecmp(o->file + len - 5, ".html");
	int rc = !strcmp(what, "collapsed") ? alc_collapsed(r, f, o->objects, o->live)
		 : html ? alc_flamegraph_html(r, f, "heapsh: allocations")
			: alc_flamegraph(r, f, "heapsh: allocated bytes");
	if (fclose(f) != 0 || rc != 0)
		return sh_error(sh, NULL, "writing %s failed: %s", o->file, strerror(errno));
	out_printf("wrote %s\n", o->file);
	return HS_OK;
}

int sh_cmd_alloc(struct sh *sh, int argc, char **argv)
{
	if (argc < 2)
		return sh_error(sh, NULL, "usage: :alloc start|stop|status|reset|mark|accounts|classes|"
				"sites|tree|diff|collapsed|flamegraph|pprof|leaks (:help alloc)");
	const char *sub = argv[1];
	const char *rec_path;
	const struct alc_rec *rec = hs_recording(sh->ss, &rec_path);
	if (!sh_is_live(sh) && !rec)
		return sh_error(sh, NULL, "%s", NEED_LIVE);
	bool from_file = !sh_is_live(sh);
	if (from_file && !strcmp(sub, "status") && argc == 2) {
		show_status(sh, &rec->st);
		return HS_OK;
	}
	if (from_file && (!strcmp(sub, "start") || !strcmp(sub, "stop") || !strcmp(sub, "reset") ||
			  !strcmp(sub, "mark")))
		return sh_error(sh, NULL, ":alloc %s: %s is a recording read from a file; attach to a "
				"JVM ('heapsh PID', ':attach PID') to record", sub, rec_path);
	if (!strcmp(sub, "start"))
		return cmd_start(sh, argc, argv);
	static const struct {
		const char *name;
		enum hs_alloc_op op;
	} ctl[] = {{"stop", HS_ALLOC_STOP}, {"status", HS_ALLOC_STATUS},
		   {"reset", HS_ALLOC_RESET}, {"mark", HS_ALLOC_MARK}};
	for (size_t k = 0; k < sizeof ctl / sizeof *ctl; k++) {
		if (strcmp(sub, ctl[k].name))
			continue;
		if (argc != 2)
			return sh_error(sh, NULL, "usage: :alloc %s", sub);
		struct alc_status st;
		if (hs_alloc_control(sh->ss, ctl[k].op, &st))
			return sh_error(sh, NULL, "%s", hs_errmsg(sh->ss));
		show_status(sh, &st);
		alc_status_free(&st);
		return HS_OK;
	}
	static const struct {
		const char *name, *opts;
		bool file;
	} views[] = {{"accounts", "--live --top", false}, {"classes", "--live --top", false},
		     {"sites", "--live --top", false},	  {"tree", "--min", false},
		     {"diff", "--top", false},		  {"collapsed", "--objects --live", true},
		     {"flamegraph", "", true},		  {"pprof", "", true},
		     {"leaks", "--top", false}};
	for (size_t k = 0; k < sizeof views / sizeof *views; k++) {
		if (strcmp(sub, views[k].name))
			continue;
		struct view_opts o;
		if (view_opts(sh, argc, argv, views[k].opts, views[k].file, &o))
			return HS_ERR;
		struct alc_rec *r;
		if (sh_alloc_fetch(sh, &r))
			return HS_ERR;
		int rc;
		if (views[k].file)
			rc = write_file(sh, sub, &o, r);
		else if (!strcmp(sub, "tree"))
			rc = show_tree(&o, r);
		else if (!strcmp(sub, "diff"))
			rc = show_diff(&o, r, sh);
		else if (!strcmp(sub, "leaks"))
			rc = show_leaks(sh, &o, r);
		else
			rc = show_rows(sh, sub, &o, r);
		alc_free(r);
		return rc;
	}
	return sh_error(sh, NULL, "unknown :alloc subcommand '%s' (start, stop, status, reset, "
			"mark, accounts, classes, sites, tree, diff, collapsed, flamegraph, pprof, leaks)", sub);
}
