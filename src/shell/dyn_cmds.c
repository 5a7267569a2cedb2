/*
 * dyn_cmds.c - the shell's dynamic-size commands: :dynsize, :top,
 * :graphstats, :sizediff, and the dynamic-size engine cache (sh_dyn).
 * Estimates are always shown as "~N"; a plain number is exact.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/fmt.h"
#include "../out/out.h"
#include "sh.h"

/* ---- the engine and its cache ---- */

/* u64_of: a non-negative estimate rounded to bytes, saturating (a cast of
 * a double out of range, or NaN, is undefined). */
static uint64_t u64_of(double x)
{
	if (!(x > 0))
		return 0;
	if (x >= 18446744073709549568.0)
		return UINT64_MAX;
	return (uint64_t)(x + 0.5);
}

void sh_dyn_save(struct sh *sh)
{
	hs_dyn_save(sh->ss);
}

struct dyn *sh_dyn(struct sh *sh, bool estimates)
{
	struct dyn *d = hs_dyn(sh->ss, estimates);
	if (!d)
		sh_error(sh, NULL, "%s", hs_errmsg(sh->ss));
	return d;
}

/* ---- helpers ---- */

/* value: object v's dynamic size, exact if known (*exact), else the estimate. */
static uint64_t value(const struct dyn *d, uint32_t v, bool *exact)
{
	uint32_t c = dyn_comp(d, v);
	*exact = d->flags[c] & DYN_EXACT;
	if (*exact)
		return d->exact[c];
	return d->est ? u64_of((double)d->est[c]) : 0;
}

static void size_cell(struct out_table *t, uint64_t v, bool exact)
{
	if (exact)
		out_cell_u64(t, v);
	else
		out_cell_fmt(t, "~%" PRIu64, v);
}

static int by_key_desc(const void *a, const void *b, void *keys)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const uint64_t *k = keys;
	if (k[x] != k[y])
		return k[x] < k[y] ? 1 : -1;
	return x < y ? -1 : x > y;
}

/*
 * top_k: positions of the (at most) k largest keys[0..n), largest first,
 * into out (k entries); returns how many. A min-heap of k: O(n log k).
 */
static uint32_t top_k(const uint64_t *keys, uint32_t n, uint32_t k, uint32_t *out)
{
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (m < k) {
			uint32_t j = m++;	/* sift up */
			while (j && keys[out[(j - 1) / 2]] > keys[i]) {
				out[j] = out[(j - 1) / 2];
				j = (j - 1) / 2;
			}
			out[j] = i;
		} else if (k && keys[i] > keys[out[0]]) {
			uint32_t j = 0;	/* replace the smallest, sift down */
			for (;;) {
				uint32_t l = 2 * j + 1, r = l + 1, s = j;
				uint64_t ks = keys[i];
				if (l < m && keys[out[l]] < ks)
					s = l, ks = keys[out[l]];
				if (r < m && keys[out[r]] < ks)
					s = r;
				if (s == j)
					break;
				out[j] = out[s];
				j = s;
			}
			out[j] = i;
		}
	}
	qsort_r(out, m, sizeof *out, by_key_desc, (void *)keys);
	return m;
}

struct dopts {
	const char *target, *by, *cls;
	uint32_t top;
	bool exact;
};

static int parse(struct sh *sh, int argc, char **argv, const char *usage, const char *allowed,
		 struct dopts *o)
{
	memset(o, 0, sizeof *o);
	o->top = 25;
	for (int a = 1; a < argc; a++) {
		const char *w = argv[a];
		bool ok = w[0] == '-' && strstr(allowed, w);
		bool arg = ok && (!strcmp(w, "--top") || !strcmp(w, "--by") || !strcmp(w, "--class"));
		if (arg && a + 1 >= argc)
			return sh_error(sh, NULL, "%s wants a value; usage: %s", w, usage);
		if (arg && !strcmp(w, "--top")) {
			char *end;
			long v = strtol(argv[++a], &end, 10);
			if (*end || v <= 0 || v > 1000000)
				return sh_error(sh, NULL, "--top wants a number from 1 to 1000000, "
						"not '%s'", argv[a]);
			o->top = (uint32_t)v;
		} else if (arg) {
			*(w[2] == 'b' ? &o->by : &o->cls) = argv[++a];
		} else if (ok && !strcmp(w, "--exact")) {
			o->exact = true;
		} else if (w[0] == '-' && w[1] == '-') {
			return sh_error(sh, NULL, "unknown option '%s'; usage: %s", w, usage);
		} else if (!o->target && strstr(usage, "ID")) {
			o->target = w;
		} else {
			return sh_error(sh, NULL, "unexpected '%s'; usage: %s", w, usage);
		}
	}
	return HS_OK;
}

static const char *const obj_cols[] = {"id", "class", "shallow_bytes", "retained_bytes",
				       "dynamic_bytes"};

static void object_row(struct out_table *tb, const struct heap *h, const struct dom_tree *t,
		       uint32_t v, uint64_t dyn, bool exact)
{
	sh_object_cells(tb, h, v);
	out_cell_u64(tb, heap_shallow(h, v));
	out_cell_u64(tb, dom_retained(t, v));
	size_cell(tb, dyn, exact);
}

/*
 * rank_dynamic: the top objects of objs[0..n) by dynamic size into out
 * (at most k). Exact: every object's exact size (64 at a time). Else the
 * estimates rank them (exact values where known). Returns how many.
 */
static int rank_dynamic(struct sh *sh, struct dyn *d, const uint32_t *objs, uint32_t n,
			uint32_t k, bool exact, uint32_t *out, uint32_t *count)
{
	uint64_t *keys = hs_array(sh->ss, (size_t)n + 1, sizeof *keys);
	if (exact) {
		uint32_t *comps = hs_array(sh->ss, (size_t)n + 1, sizeof *comps);
		for (uint32_t i = 0; i < n; i++)
			comps[i] = dyn_comp(d, objs[i]);
		sh_progress_begin("the exact dynamic size of %u objects", n);
		int st = dyn_exact_many(d, comps, n, keys);
		sh_progress_end();
		hs_array_free(sh->ss, comps);
		if (st != HS_OK) {
			hs_array_free(sh->ss, keys);
			return sh_error(sh, NULL, "interrupted");
		}
	} else {
		for (uint32_t i = 0; i < n; i++) {
			bool ex;
			keys[i] = value(d, objs[i], &ex);
		}
	}
	*count = top_k(keys, n, k, out);
	for (uint32_t i = 0; i < *count; i++)
		out[i] = objs[out[i]];
	hs_array_free(sh->ss, keys);
	return HS_OK;
}

/* ---- :dynsize ---- */

/* Classes with at most this many instances get exact sizes without --exact. */
#define EXACT_UP_TO 256

int sh_cmd_dynsize(struct sh *sh, int argc, char **argv)
{
	static const char usage[] = ":dynsize ID|CLASS [--exact] [--top N]";
	struct dopts o;
	if (parse(sh, argc, argv, usage, "--exact --top", &o))
		return HS_ERR;
	if (!o.target)
		return sh_error(sh, NULL, "usage: %s", usage);
	if (sh_need_heap(sh))
		return HS_ERR;
	uint32_t *objs, n;
	char *label;
	if (sh_target_set(sh, o.target, &objs, &n, &label))
		return HS_ERR;
	bool single = n == 1 && label[0] == '0';
	struct dom_tree *t = sh_dom(sh, hs_get_options(sh->ss).no_weak);
	struct dyn *d = t ? sh_dyn(sh, !single && !o.exact && n > EXACT_UP_TO) : NULL;
	int st = HS_ERR;
	if (!d)
		goto done;
	const struct heap *h = hs_heap(sh->ss);
	if (single) {
		uint32_t c = dyn_comp(d, objs[0]);
		uint64_t bytes;
		if (dyn_exact(d, c, &bytes) != HS_OK) {
			sh_error(sh, NULL, "interrupted");
			goto done;
		}
		struct out_table *tb = out_table_new(5, obj_cols);
		object_row(tb, h, t, objs[0], bytes, true);
		out_table_end(tb);
		if (out_mode == OUT_TABLE) {
			out_printf("exact: the shallow sizes of everything 0x%" PRIx64 " reaches",
				   heap_id(h, objs[0]));
			if (d->s.size[c] > 1)
				out_printf("; it is in a cycle of %u objects (one strongly connected "
					   "component) that all reach the same", d->s.size[c]);
			if (d->flags[c] & DYN_DAP)
				out_printf("; it dominates all it reaches (a dominating articulation "
					   "point)");
			out_printf("\n");
		}
		st = HS_OK;
		goto done;
	}
	uint32_t *top = xmallocarray((size_t)o.top + 1, sizeof *top), shown = 0;
	if (rank_dynamic(sh, d, objs, n, o.top, o.exact || n <= EXACT_UP_TO, top, &shown)) {
		free(top);
		goto done;
	}
	uint32_t *comps = hs_array(sh->ss, (size_t)n + 1, sizeof *comps), estimated = 0;
	for (uint32_t i = 0; i < n; i++)
		comps[i] = dyn_comp(d, objs[i]);
	uint64_t together;
	if (dyn_exact_set(d, comps, n, &together) != HS_OK) {
		free(top);
		hs_array_free(sh->ss, comps);
		sh_error(sh, NULL, "interrupted");
		goto done;
	}
	hs_array_free(sh->ss, comps);
	struct out_table *tb = out_table_new(5, obj_cols);
	for (uint32_t i = 0; i < shown; i++) {
		bool ex;
		uint64_t v = value(d, top[i], &ex);
		estimated += !ex;
		object_row(tb, h, t, top[i], v, ex);
	}
	out_table_end(tb);
	free(top);
	if (out_mode == OUT_TABLE) {
		out_printf("%s %s %" PRIu64 " bytes (exact)\n", label,
			   n == 1 ? "reaches" : "together reach", together);
		if (shown < n)
			out_printf("the %u largest shown (--top N for more)\n", shown);
		if (estimated)
			out_printf("~ marks an estimate (within 25%% with probability %.0f%%); "
				   "--exact computes every instance exactly\n",
				   100 * (1 - dyn_est_miss(0.25)));
	}
	st = HS_OK;
done:
	free(objs);
	free(label);
	return st;
}

/* ---- :top ---- */

static int by_comp_key(const void *a, const void *b, void *keys)
{
	return by_key_desc(a, b, keys);
}

/*
 * top_dynamic: the k objects of objs[0..n) (all objects when objs is NULL)
 * with the largest exact dynamic sizes, into out. Objects of a component
 * share its size, so components are ranked: by estimate (exact where
 * known), the one that brings the count to k sets the bar est_k; every
 * component with an estimate of at least est_k / 3 is a candidate (an
 * estimate is below half or above 1.5 times the true size with
 * probability under 0.1%), capped at 65536; their exact sizes are
 * computed 64 at a time and the objects ranked by them.
 */
static int top_dynamic(struct dyn *d, const uint32_t *objs, uint32_t n, uint32_t k, uint32_t *out,
		       uint32_t *count, uint32_t *ncand)
{
	uint32_t nc = d->s.ncomp;
	uint32_t *members = xcalloc((size_t)nc + 1, sizeof *members);
	for (uint32_t i = 0; i < n; i++)
		members[dyn_comp(d, objs ? objs[i] : i)]++;
	uint64_t *key = xcalloc((size_t)nc + 1, sizeof *key);
	uint32_t *order = xmallocarray((size_t)nc + 1, sizeof *order), m = 0;
	for (uint32_t c = 0; c < nc; c++) {
		if (!members[c])
			continue;
		key[c] = d->flags[c] & DYN_EXACT ? d->exact[c] : u64_of((double)d->est[c]);
		order[m++] = c;
	}
	qsort_r(order, m, sizeof *order, by_comp_key, key);
	uint64_t acc = 0, bar = 0;
	for (uint32_t i = 0; i < m; i++) {
		acc += members[order[i]];
		bar = key[order[i]];
		if (acc >= k)
			break;
	}
	uint32_t nsel = 0;
	while (nsel < m && nsel < 65536 && key[order[nsel]] >= bar / 3)
		nsel++;
	uint64_t *exact = xmallocarray((size_t)nsel + 1, sizeof *exact);
	sh_progress_begin("the exact dynamic size of %u components", nsel);
	int st = dyn_exact_many(d, order, nsel, exact);
	sh_progress_end();
	if (st == HS_OK) {
		/* Objects of the candidate components, ranked by exact size. */
		uint8_t *cand = xcalloc((size_t)nc + 1, 1);
		for (uint32_t i = 0; i < nsel; i++)
			cand[order[i]] = 1;
		uint32_t nobj = 0;
		for (uint32_t i = 0; i < nsel; i++)
			nobj += members[order[i]];
		uint32_t *who = xmallocarray((size_t)nobj + 1, sizeof *who), w = 0;
		uint64_t *okey = xmallocarray((size_t)nobj + 1, sizeof *okey);
		for (uint32_t i = 0; i < n; i++) {
			uint32_t v = objs ? objs[i] : i, c = dyn_comp(d, v);
			if (cand[c]) {
				who[w] = v;
				okey[w++] = d->exact[c];
			}
		}
		*count = top_k(okey, w, k, out);
		for (uint32_t i = 0; i < *count; i++)
			out[i] = who[out[i]];
		free(who);
		free(okey);
		free(cand);
	}
	*ncand = nsel;
	free(exact);
	free(members);
	free(key);
	free(order);
	return st;
}

int sh_cmd_top(struct sh *sh, int argc, char **argv)
{
	static const char usage[] = ":top [--by dynamic|retained|shallow] [--class C] [--top N]";
	struct dopts o;
	if (parse(sh, argc, argv, usage, "--by --class --top", &o))
		return HS_ERR;
	const char *by = o.by ? o.by : "retained";
	if (strcmp(by, "dynamic") && strcmp(by, "retained") && strcmp(by, "shallow"))
		return sh_error(sh, NULL, "--by takes dynamic, retained or shallow, not '%s'", by);
	if (sh_need_heap(sh))
		return HS_ERR;
	const struct heap *h = hs_heap(sh->ss);
	uint32_t *objs = NULL, n = h->n;
	char *label = NULL;
	if (o.cls) {
		uint32_t *cls, nc = heap_find_classes(h, o.cls, &cls);
		free(cls);
		if (!nc || sh_target_set(sh, o.cls, &objs, &n, &label)) {
			char sug[512];
			heap_suggest_class(h, o.cls, sug, sizeof sug);
			return sh_error(sh, NULL, "no class matches '%s'%s", o.cls, sug);
		}
	}
	int st = HS_ERR;
	struct dom_tree *t = sh_dom(sh, hs_get_options(sh->ss).no_weak);
	bool dynamic = !strcmp(by, "dynamic");
	struct dyn *d = t ? sh_dyn(sh, true) : NULL;	/* every row shows a dynamic size */
	if (!d)
		goto done;
	uint32_t *top = xmallocarray((size_t)o.top + 1, sizeof *top), m = 0, ncand = 0;
	uint64_t *keys = NULL;
	if (dynamic) {
		if (top_dynamic(d, objs, n, o.top, top, &m, &ncand) != HS_OK) {
			free(top);
			st = sh_error(sh, NULL, "interrupted");
			goto done;
		}
	} else {
		keys = hs_array(sh->ss, (size_t)n + 1, sizeof *keys);
		for (uint32_t i = 0; i < n; i++) {
			uint32_t v = objs ? objs[i] : i;
			keys[i] = by[0] == 'r' ? dom_retained(t, v) : heap_shallow(h, v);
		}
		m = top_k(keys, n, o.top, top);
		for (uint32_t i = 0; i < m; i++)
			top[i] = objs ? objs[top[i]] : top[i];
	}
	hs_array_free(sh->ss, keys);
	struct out_table *tb = out_table_new(5, obj_cols);
	for (uint32_t i = 0; i < m; i++) {
		bool ex;
		uint64_t v = value(d, top[i], &ex);
		object_row(tb, h, t, top[i], v, ex);
	}
	out_table_end(tb);
	if (out_mode == OUT_TABLE && dynamic)
		out_printf("dynamic sizes exact; candidates: the %u strongly connected components whose "
			   "estimate is at least a third of the %u%s largest\n", ncand, o.top,
			   fmt_ordinal((unsigned long long)o.top));
	free(top);
	st = HS_OK;
done:
	free(objs);
	free(label);
	return st;
}

/* ---- :graphstats ---- */

static void stat_row(struct out_table *t, const char *name, uint64_t v)
{
	out_cell_str(t, name);
	out_cell_u64(t, v);
}

int sh_cmd_graphstats(struct sh *sh, int argc, char **argv)
{
	(void)argv;
	if (argc > 1)
		return sh_error(sh, NULL, "usage: :graphstats");
	struct dom_tree *t = sh_dom(sh, hs_get_options(sh->ss).no_weak);
	struct dyn *d = t ? sh_dyn(sh, false) : NULL;
	if (!d)
		return HS_ERR;
	const struct heap *h = hs_heap(sh->ss);
	const struct dyn_stats *s = &d->stats;
	uint32_t classes = 0, height, width;
	for (uint32_t c = 0; c < h->nclasses; c++)
		classes += h->classes[c].obj != HEAP_NONE;
	dom_tree_shape(t, &height, &width);
	static const char *const cols[] = {"statistic", "value"};
	struct out_table *tb = out_table_new(2, cols);
	stat_row(tb, "nodes", s->nodes);
	stat_row(tb, "classes", classes);
	stat_row(tb, "objects", s->nodes - classes);
	stat_row(tb, "references followed", s->refs);
	stat_row(tb, "gc roots", h->nroots);
	stat_row(tb, "sccs", s->ncomp);
	stat_row(tb, "non-trivial sccs", s->nontrivial);
	out_cell_str(tb, "average non-trivial scc size");
	out_cell_fmt(tb, "%.2f", s->nontrivial ? (double)s->nontrivial_nodes / s->nontrivial : 0);
	stat_row(tb, "largest scc", s->largest);
	stat_row(tb, "scc dag edges", s->dag_edges);
	stat_row(tb, "articulation points", s->aps);
	stat_row(tb, "dominating articulation points", s->daps);
	stat_row(tb, "scc dag height", s->dag_height);
	stat_row(tb, "scc dag width", s->dag_width);
	stat_row(tb, "scc dag dominator tree height", s->dom_height);
	stat_row(tb, "scc dag dominator tree width", s->dom_width);
	stat_row(tb, "dominator tree height", height);
	stat_row(tb, "dominator tree width", width);
	out_table_end(tb);
	return HS_OK;
}

/* ---- :sizediff ---- */

/* The thesis's table 5.3 buckets of dynamic - retained, upper bounds in KiB. */
static const struct {
	const char *name;
	uint64_t below;
} buckets[] = {
	{"to 1 KB", 1 << 10},		{"1 to 10 KB", 10 << 10},
	{"10 to 100 KB", 100 << 10},	{"100 KB to 1 MB", 1 << 20},
	{"1 to 10 MB", 10 << 20},	{"10 to 25 MB", 25 << 20},
	{"25 to 50 MB", 50 << 20},	{"50 to 75 MB", 75 << 20},
	{"75 to 100 MB", 100 << 20},	{"greater 100 MB", UINT64_MAX},
};
#define NBUCKETS (sizeof buckets / sizeof *buckets)

int sh_cmd_sizediff(struct sh *sh, int argc, char **argv)
{
	static const char usage[] = ":sizediff [--exact]";
	struct dopts o;
	if (parse(sh, argc, argv, usage, "--exact", &o))
		return HS_ERR;
	struct dom_tree *t = sh_dom(sh, hs_get_options(sh->ss).no_weak);
	struct dyn *d = t ? sh_dyn(sh, !o.exact) : NULL;
	if (!d)
		return HS_ERR;
	const struct heap *h = hs_heap(sh->ss);
	if (o.exact) {
		uint32_t nc = d->s.ncomp;
		uint32_t *all = xmallocarray((size_t)nc + 1, sizeof *all);
		uint64_t *bytes = xmallocarray((size_t)nc + 1, sizeof *bytes);
		for (uint32_t c = 0; c < nc; c++)
			all[c] = c;
		sh_progress_begin("the exact dynamic size of %u components", nc);
		int st = dyn_exact_many(d, all, nc, bytes);
		sh_progress_end();
		free(all);
		free(bytes);
		if (st != HS_OK)
			return sh_error(sh, NULL, "interrupted");
	}
	uint64_t count[NBUCKETS] = {0}, exact[NBUCKETS] = {0};
	for (uint32_t v = 0; v < h->n; v++) {
		bool ex;
		uint64_t dyn = value(d, v, &ex), ret = dom_retained(t, v);
		uint64_t diff = dyn > ret ? dyn - ret : 0;
		size_t b = 0;
		while (b + 1 < NBUCKETS && diff >= buckets[b].below)
			b++;
		count[b]++;
		exact[b] += ex;
	}
	static const char *const cols[] = {"dynamic_minus_retained", "objects", "exact"};
	struct out_table *tb = out_table_new(3, cols);
	uint64_t estimated = 0;
	for (size_t b = 0; b < NBUCKETS; b++) {
		out_cell_str(tb, buckets[b].name);
		out_cell_u64(tb, count[b]);
		out_cell_u64(tb, exact[b]);
		estimated += count[b] - exact[b];
	}
	out_table_end(tb);
	if (out_mode == OUT_TABLE && estimated)
		out_printf("%" PRIu64 " objects are counted by their estimated dynamic size "
			   "(within 25%% with probability %.0f%%); --exact computes every one\n",
			   estimated, 100 * (1 - dyn_est_miss(0.25)));
	return HS_OK;
}
