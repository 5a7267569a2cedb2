/*
 * dyn_bench.c - the dynamic-size engine's benchmark (issue 5) on a real
 * dump, run by bench/dyn.sh on build/bench/big1.hprof (docs/performance.md).
 *
 *   dyn_bench [-r RUNS] [-b BFS_RUNS] [-s SAMPLES] [-t TOP] [-k TOP_SAMPLES]
 *             [-S SEED] DUMP
 *
 * Each measurement is repeated RUNS times (default 5) and the median is
 * reported; clock_gettime(CLOCK_MONOTONIC) around the library call only.
 *
 *  - heap_load, and dyn_build_heap (SCCs, SCC DAG, the DAG's dominators,
 *    DAPs with their exact sizes, articulation points, statistics);
 *  - dyn_estimate (every component);
 *  - dyn_exact for SAMPLES (default 200) random objects, twice: objects
 *    drawn uniformly, and objects whose component the build left without
 *    an exact size (the ones that need a traversal). Each call sees the
 *    engine as built: the memo of the object's component is reset before
 *    the call, so no answer comes from an earlier query or run;
 *  - dyn_exact_many on the components of the TOP (default 1000) objects with
 *    the largest estimates, on the engine as built (all memos reset first),
 *    and, for comparison, dyn_exact on each of those components in turn.
 *
 * The baseline is the thesis's SimpleObjectsDynamicSize (../shared/seeds/
 * 003, section 4.3, listing 4.2): one traversal of the object graph per
 * object with a visited array, summing shallow sizes; no SCCs. Made
 * iterative (as the thesis says it must be for heaps), with the start
 * marked visited, and the visited marks cleared by walking the queue rather
 * than the whole array (both in the baseline's favour). It follows the same
 * edges as dyn.c's hview: an instance's fields and an array's elements
 * (heap_out), a class object's static reference fields instead. It runs on
 * both samples (BFS_RUNS times, default RUNS) and on TOP_SAMPLES (default
 * 20) of the TOP objects, and every answer must equal the engine's.
 *
 * Output: a report in Markdown on stdout, ending with a "### Targets"
 * table. Exit status 0; 1 when a cross-check fails (the mismatches are
 * printed on stderr); 2 on bad usage or an unreadable dump.
 */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../src/engine/dyn.h"

/* ---- timing and statistics ---- */

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* quantile: the q-quantile (nearest rank; q = 0.5: the median) of a[0..n). */
static double quantile(const double *a, uint32_t n, double q)
{
	if (!n)
		return 0;
	double *c = xmallocarray(n, sizeof *c);
	memcpy(c, a, (size_t)n * sizeof *c);
	qsort(c, n, sizeof *c, cmp_double);
	double r;
	if (q == 0.5 && n % 2 == 0)
		r = (c[n / 2 - 1] + c[n / 2]) / 2;
	else
		r = c[(uint32_t)(q * (n - 1) + 0.5)];
	free(c);
	return r;
}

static double median(const double *a, uint32_t n)
{
	return quantile(a, n, 0.5);
}

static double maximum(const double *a, uint32_t n)
{
	double m = 0;
	for (uint32_t k = 0; k < n; k++)
		if (a[k] > m)
			m = a[k];
	return m;
}

static double mean(const double *a, uint32_t n)
{
	double s = 0;
	for (uint32_t k = 0; k < n; k++)
		s += a[k];
	return n ? s / n : 0;
}

/* runs_line: "a b c" of the runs' times in ms. */
static void print_runs(const double *t, uint32_t n, int decimals)
{
	for (uint32_t k = 0; k < n; k++)
		printf("%s%.*f", k ? " " : "", decimals, t[k]);
}

/* peak_rss_mb: this process's peak resident set so far, in MiB. */
static double peak_rss_mb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024;
}

#define XORSHIFT_SEED 0x9E3779B97F4A7C15ULL
#include "../tests/unit/xorshift.h"

/* ---- SimpleObjectsDynamicSize, over dyn.c's graph of the heap ---- */

/*
 * The same edges and weights as dyn.c's struct hview: a copy of its logic,
 * which must follow any change there (a difference shows as mismatches).
 */
struct view {
	const struct heap *h;
	uint8_t *is_class;	/* [n] 1 for class objects */
	uint32_t *static_start;	/* [nclasses+1] */
	uint32_t *statics;	/* objects the static reference fields point to */
	uint8_t *visited;	/* [n] all zero between traversals */
	uint32_t *queue;	/* [n] */
};

static void view_init(struct view *hv, const struct heap *h)
{
	hv->h = h;
	hv->is_class = xcalloc((size_t)h->n + 1, 1);
	hv->static_start = xcalloc((size_t)h->nclasses + 2, sizeof *hv->static_start);
	uint32_t len = 0, cap = 64;
	hv->statics = xmallocarray(cap, sizeof *hv->statics);
	for (uint32_t c = 0; c < h->nclasses; c++) {
		const struct heap_class *k = &h->classes[c];
		hv->static_start[c] = len;
		if (k->obj == HEAP_NONE)
			continue;
		hv->is_class[k->obj] = 1;
		for (unsigned s = 0; s < k->nstatics; s++) {
			/* As dyn.c: HotSpot's pseudo-statics (<resolved_references>,
			 * <init_lock>) are not followed. */
			if (k->statics[s].type != HPROF_OBJECT ||
			    (k->statics[s].name && k->statics[s].name[0] == '<'))
				continue;
			struct heap_value val = heap_read_value(h, HPROF_OBJECT, k->statics[s].value_pos);
			uint32_t t = val.v.id ? heap_index(h, val.v.id) : HEAP_NONE;
			if (t == HEAP_NONE)
				continue;
			if (len == cap) {
				cap *= 2;
				hv->statics = xreallocarray(hv->statics, cap, sizeof *hv->statics);
			}
			hv->statics[len++] = t;
		}
	}
	hv->static_start[h->nclasses] = len;
	hv->visited = xcalloc((size_t)h->n + 1, 1);
	hv->queue = xmallocarray((size_t)h->n + 1, sizeof *hv->queue);
}

static void view_free(struct view *hv)
{
	free(hv->is_class);
	free(hv->static_start);
	free(hv->statics);
	free(hv->visited);
	free(hv->queue);
}

static inline const uint32_t *view_succs(const struct view *hv, uint32_t v, uint32_t *count)
{
	if (hv->is_class[v]) {
		uint32_t c = heap_class_of_object(hv->h, v);
		*count = hv->static_start[c + 1] - hv->static_start[c];
		return hv->statics + hv->static_start[c];
	}
	return heap_out(hv->h, v, count);
}

static inline uint64_t view_weight(const struct view *hv, uint32_t v)
{
	return hv->h->size[v] == UINT32_MAX ? heap_shallow(hv->h, v) : hv->h->size[v];
}

/*
 * simple_dyn: SimpleObjectsDynamicSize of object v: the shallow bytes of
 * everything v reaches, by breadth-first search; *reached = objects visited.
 */
static uint64_t simple_dyn(struct view *hv, uint32_t v, uint32_t *reached)
{
	uint32_t head = 0, tail = 0;
	uint64_t sum = 0;
	hv->visited[v] = 1;
	hv->queue[tail++] = v;
	while (head < tail) {
		uint32_t x = hv->queue[head++], cnt;
		sum += view_weight(hv, x);
		const uint32_t *s = view_succs(hv, x, &cnt);
		for (uint32_t k = 0; k < cnt; k++)
			if (!hv->visited[s[k]]) {
				hv->visited[s[k]] = 1;
				hv->queue[tail++] = s[k];
			}
	}
	for (uint32_t k = 0; k < tail; k++)
		hv->visited[hv->queue[k]] = 0;
	*reached = tail;
	return sum;
}

/* ---- the engine's memo as built ---- */

struct memo {
	uint8_t *flags;		/* [ncomp] d->flags right after dyn_build_heap */
	uint64_t *exact;	/* [ncomp] d->exact then */
};

static void memo_take(struct memo *m, const struct dyn *d)
{
	size_t nc = d->s.ncomp;
	m->flags = xmallocarray(nc + 1, 1);
	m->exact = xmallocarray(nc + 1, sizeof *m->exact);
	memcpy(m->flags, d->flags, nc);
	memcpy(m->exact, d->exact, nc * sizeof *m->exact);
}

/* memo_reset: forget every exact size computed after the build. */
static void memo_reset(const struct memo *m, struct dyn *d)
{
	size_t nc = d->s.ncomp;
	memcpy(d->flags, m->flags, nc);
	memcpy(d->exact, m->exact, nc * sizeof *m->exact);
}

/* memo_reset_one: the same for component c alone (all dyn_exact changes). */
static void memo_reset_one(const struct memo *m, struct dyn *d, uint32_t c)
{
	d->flags[c] = m->flags[c];
	d->exact[c] = m->exact[c];
}

/* ---- the benchmark ---- */

struct opts {
	uint32_t runs, bfs_runs, samples, top, top_samples;
	uint64_t seed;
	const char *dump;
};

static int mismatches;

/* mismatch: what = "A vs B", the two answers for object v. */
static void mismatch(const struct heap *h, const char *what, uint32_t v, uint64_t a,
		     uint64_t b)
{
	if (mismatches++ < 20)
		fprintf(stderr, "MISMATCH %s: object 0x%" PRIx64 " (index %u, %s): %" PRIu64
			" vs %" PRIu64 " bytes\n", what, heap_id(h, v), v, heap_class_name(h, v), a,
			b);
}

static int by_u64_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* One sample of objects, timed with dyn_exact and with the baseline. */
struct sample {
	const char *name;
	uint32_t n;
	uint32_t *obj;
	double *t_dyn;		/* [n * runs] ms */
	double *t_bfs;		/* [n * bfs_runs] ms */
	double *med_dyn, *med_bfs, *ratio;	/* [n] per-object medians, their ratio */
	uint32_t *reached;	/* [n] objects the baseline visits */
	uint64_t *bytes;	/* [n] the engine's answer */
	uint32_t precomputed;	/* objects whose component the build sized exactly */
};

static void sample_init(struct sample *s, const char *name, uint32_t n, const struct opts *o)
{
	s->name = name;
	s->n = n;
	s->obj = xcalloc((size_t)n + 1, sizeof *s->obj);
	s->t_dyn = xcalloc((size_t)n * o->runs + 1, sizeof *s->t_dyn);
	s->t_bfs = xcalloc((size_t)n * o->bfs_runs + 1, sizeof *s->t_bfs);
	s->med_dyn = xcalloc((size_t)n + 1, sizeof *s->med_dyn);
	s->med_bfs = xcalloc((size_t)n + 1, sizeof *s->med_bfs);
	s->ratio = xcalloc((size_t)n + 1, sizeof *s->ratio);
	s->reached = xcalloc((size_t)n + 1, sizeof *s->reached);
	s->bytes = xcalloc((size_t)n + 1, sizeof *s->bytes);
	s->precomputed = 0;
}

static void sample_free(struct sample *s)
{
	free(s->obj);
	free(s->t_dyn);
	free(s->t_bfs);
	free(s->med_dyn);
	free(s->med_bfs);
	free(s->ratio);
	free(s->reached);
	free(s->bytes);
}

/*
 * pick: n distinct random objects into s->obj; uncomputed: only objects
 * whose component has no exact size after the build. Returns how many
 * (fewer when the heap has fewer such objects).
 */
static uint32_t pick(struct sample *s, const struct heap *h, const struct dyn *d,
		     const struct memo *m, bool uncomputed)
{
	uint8_t *taken = xcalloc((size_t)h->n + 1, 1);
	uint32_t got = 0;
	for (uint64_t tries = 0; got < s->n && tries < 100ULL * h->n; tries++) {
		uint32_t v = rnd(h->n);
		if (taken[v] || (uncomputed && (m->flags[dyn_comp(d, v)] & DYN_EXACT)))
			continue;
		taken[v] = 1;
		s->obj[got++] = v;
	}
	free(taken);
	s->n = got;
	return got;
}

/*
 * run_sample: every run, every object: dyn_exact on the engine as built,
 * then the baseline (in the first bfs_runs runs), and the two compared.
 */
static int run_sample(struct sample *s, struct dyn *d, const struct memo *m, struct view *hv,
		      const struct opts *o)
{
	const struct heap *h = hv->h;
	uint64_t *first = s->bytes;
	s->precomputed = 0;
	for (uint32_t k = 0; k < s->n; k++)
		s->precomputed += (m->flags[dyn_comp(d, s->obj[k])] & DYN_EXACT) != 0;
	for (uint32_t r = 0; r < o->runs; r++) {
		for (uint32_t k = 0; k < s->n; k++) {
			uint32_t v = s->obj[k], c = dyn_comp(d, v);
			uint64_t bytes;
			memo_reset_one(m, d, c);
			double t0 = now_ms();
			int st = dyn_exact(d, c, &bytes);
			s->t_dyn[(size_t)k * o->runs + r] = now_ms() - t0;
			memo_reset_one(m, d, c);
			if (st != HS_OK)
				return st;
			if (r == 0)
				first[k] = bytes;
			else if (bytes != first[k])
				mismatch(h, "dyn_exact: first run vs a later run", v, first[k], bytes);
			if (r >= o->bfs_runs)
				continue;
			t0 = now_ms();
			uint64_t want = simple_dyn(hv, v, &s->reached[k]);
			s->t_bfs[(size_t)k * o->bfs_runs + r] = now_ms() - t0;
			if (want != bytes)
				mismatch(h, "SimpleObjectsDynamicSize vs dyn_exact", v, want, bytes);
		}
	}
	for (uint32_t k = 0; k < s->n; k++) {
		s->med_dyn[k] = median(s->t_dyn + (size_t)k * o->runs, o->runs);
		s->med_bfs[k] = median(s->t_bfs + (size_t)k * o->bfs_runs, o->bfs_runs);
		s->ratio[k] = s->med_bfs[k] / (s->med_dyn[k] > 1e-6 ? s->med_dyn[k] : 1e-6);
	}
	return HS_OK;
}

static void report_sample(const struct sample *s, const struct opts *o)
{
	uint32_t n = s->n;
	double *reached = xcalloc((size_t)n + 1, sizeof *reached);
	for (uint32_t k = 0; k < n; k++)
		reached[k] = s->reached[k];
	printf("#### %s: %u objects (%u of them in components the build already sized "
	       "exactly)\n\n", s->name, n, s->precomputed);
	printf("Per-object medians over the runs (dyn_exact: %u runs; SimpleObjectsDynamicSize: "
	       "%u runs), then over the objects:\n\n", o->runs, o->bfs_runs);
	printf("| | median ms | p90 ms | max ms | mean ms | total ms |\n");
	printf("|---|---:|---:|---:|---:|---:|\n");
	printf("| dyn_exact | %.4f | %.4f | %.4f | %.4f | %.1f |\n", median(s->med_dyn, n),
	       quantile(s->med_dyn, n, 0.9), maximum(s->med_dyn, n), mean(s->med_dyn, n),
	       mean(s->med_dyn, n) * n);
	printf("| SimpleObjectsDynamicSize | %.4f | %.4f | %.4f | %.4f | %.1f |\n",
	       median(s->med_bfs, n), quantile(s->med_bfs, n, 0.9), maximum(s->med_bfs, n),
	       mean(s->med_bfs, n), mean(s->med_bfs, n) * n);
	printf("\nslowest single dyn_exact call of all %u x %u: %.4f ms\n", n, o->runs,
	       maximum(s->t_dyn, n * o->runs));
	printf("objects reached (SimpleObjectsDynamicSize visits): median %.0f, p90 %.0f, max %.0f\n",
	       median(reached, n), quantile(reached, n, 0.9), maximum(reached, n));
	printf("speed-up over SimpleObjectsDynamicSize: per-object ratio of medians: median "
	       "%.1fx (p10 %.1fx, min %.1fx); ratio of the totals %.1fx\n\n",
	       median(s->ratio, n), quantile(s->ratio, n, 0.1), quantile(s->ratio, n, 0.0),
	       mean(s->med_bfs, n) / (mean(s->med_dyn, n) > 0 ? mean(s->med_dyn, n) : 1e-9));
	uint32_t slower = 0, most = 0;
	double slow_ms = 0;
	for (uint32_t k = 0; k < n; k++)
		if (s->ratio[k] < 1) {
			slower++;
			most = s->reached[k] > most ? s->reached[k] : most;
			slow_ms = s->med_dyn[k] > slow_ms ? s->med_dyn[k] : slow_ms;
		}
	if (slower)
		printf("dyn_exact was the slower on %u object%s: %s at most %u objects, and its "
		       "median time there is at most %.4f ms.\n\n", slower, slower == 1 ? "" : "s",
		       slower == 1 ? "it reaches" : "they reach", most, slow_ms);
	free(reached);
}

struct cand {
	float est;
	uint32_t v;
};

static int by_est_desc(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->est != y->est)
		return x->est < y->est ? 1 : -1;
	return x->v < y->v ? -1 : x->v > y->v;
}

/* top_objects: the k objects with the largest estimates (ties: lower index). */
static uint32_t top_objects(const struct heap *h, const struct dyn *d, uint32_t k, uint32_t *out)
{
	struct cand *c = xmallocarray((size_t)h->n + 1, sizeof *c);
	for (uint32_t v = 0; v < h->n; v++)
		c[v] = (struct cand){d->est[dyn_comp(d, v)], v};
	qsort(c, h->n, sizeof *c, by_est_desc);
	if (k > h->n)
		k = h->n;
	for (uint32_t i = 0; i < k; i++)
		out[i] = c[i].v;
	free(c);
	return k;
}

static void usage(void)
{
	fprintf(stderr, "usage: dyn_bench [-r RUNS] [-b BFS_RUNS] [-s SAMPLES] [-t TOP] "
		"[-k TOP_SAMPLES] [-S SEED] DUMP\n");
}

static bool parse_opts(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){5, 0, 200, 1000, 20, 1, NULL};
	int c;
	while ((c = getopt(argc, argv, "r:b:s:t:k:S:")) != -1) {
		if (c == '?' || !optarg || !*optarg)
			return false;
		char *end;
		unsigned long long v = strtoull(optarg, &end, 10);
		if (*end || (c != 'S' && (v == 0 || v > 100000000)))
			return false;
		switch (c) {
		case 'r': o->runs = (uint32_t)v; break;
		case 'b': o->bfs_runs = (uint32_t)v; break;
		case 's': o->samples = (uint32_t)v; break;
		case 't': o->top = (uint32_t)v; break;
		case 'k': o->top_samples = (uint32_t)v; break;
		case 'S': o->seed = v; break;
		default: return false;
		}
	}
	if (optind + 1 != argc)
		return false;
	o->dump = argv[optind];
	if (!o->bfs_runs || o->bfs_runs > o->runs)
		o->bfs_runs = o->runs;
	if (o->top_samples > o->top)
		o->top_samples = o->top;
	return true;
}

static const char *verdict(bool met)
{
	return met ? "**met**" : "**not met**";
}

int main(int argc, char **argv)
{
	struct opts o;
	if (!parse_opts(argc, argv, &o)) {
		usage();
		return 2;
	}
	/* As heapsh does: big buffers go back to the system when freed. */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	rng ^= o.seed * 0xD1B54A32D192ED03ULL;
	if (!rng)
		rng = 1;
	uint32_t R = o.runs;
	double *t = xcalloc((size_t)R + 1, sizeof *t);
	int st = HS_OK;

	/* heap_load, R times; the last heap is kept. */
	struct heap *h = NULL;
	for (uint32_t r = 0; r < R; r++) {
		heap_free(h);
		h = NULL;
		struct hs_error err;
		double t0 = now_ms();
		if (heap_load(o.dump, NULL, &h, &err) != HS_OK) {
			fprintf(stderr, "dyn_bench: %s: %s (offset %" PRId64 ")\n", o.dump, err.msg,
				err.offset);
			return 2;
		}
		t[r] = now_ms() - t0;
	}
	double load_ms = median(t, R), rss_load = peak_rss_mb();
	printf("## Dynamic sizes (issue 5): the engine on %s\n\n", o.dump);
	printf("%u objects, %" PRIu64 " references, %" PRIu64 " shallow bytes%s; "
	       "median of %u runs unless said otherwise; seed %" PRIu64 "\n\n", h->n, h->nrefs,
	       h->total_shallow, h->damaged ? " (DAMAGED dump)" : "", R, o.seed);
	printf("### Engine build\n\n");
	printf("| measurement | median ms | runs (ms) |\n|---|---:|---|\n");
	printf("| heap_load (not part of the targets) | %.1f | ", load_ms);
	print_runs(t, R, 1);
	printf(" |\n");

	/* dyn_build_heap, R times; the last engine is kept. */
	struct dyn *d = NULL;
	for (uint32_t r = 0; r < R; r++) {
		dyn_free(d);
		d = NULL;
		double t0 = now_ms();
		if (dyn_build_heap(h, &d) != HS_OK) {
			fprintf(stderr, "dyn_bench: dyn_build_heap interrupted\n");
			return 2;
		}
		t[r] = now_ms() - t0;
	}
	double build_ms = median(t, R), rss_build = peak_rss_mb();
	printf("| dyn_build_heap: SCCs, SCC DAG, DAG dominators, DAPs and their exact sizes, "
	       "articulation points, statistics | %.1f | ", build_ms);
	print_runs(t, R, 1);
	printf(" |\n");
	struct memo m;
	memo_take(&m, d);
	uint32_t nc = d->s.ncomp, known = 0;
	for (uint32_t c = 0; c < nc; c++)
		known += (m.flags[c] & DYN_EXACT) != 0;

	/* dyn_estimate, R times, each on the engine as built. */
	for (uint32_t r = 0; r < R; r++) {
		free(d->est);
		d->est = NULL;
		double t0 = now_ms();
		if (dyn_estimate(d) != HS_OK) {
			fprintf(stderr, "dyn_bench: dyn_estimate interrupted\n");
			return 2;
		}
		t[r] = now_ms() - t0;
	}
	double est_ms = median(t, R);
	printf("| dyn_estimate: all %u components (every object's estimate) | %.1f | ", nc, est_ms);
	print_runs(t, R, 1);
	printf(" |\n\n");
	const struct dyn_stats *ds = &d->stats;
	printf("Graph: %u nodes, %" PRIu64 " references followed; %u components (%u of two "
	       "objects or more, holding %" PRIu64 " objects; the largest %u); SCC DAG: %" PRIu64
	       " edges, %u sources, height %u, width %u; %u articulation points, %u DAPs; "
	       "DAG dominator tree height %u, width %u.\n",
	       ds->nodes, ds->refs, ds->ncomp, ds->nontrivial, ds->nontrivial_nodes, ds->largest,
	       ds->dag_edges, ds->sources, ds->dag_height, ds->dag_width, ds->aps, ds->daps,
	       ds->dom_height, ds->dom_width);
	printf("After the build, %u of %u components (%.1f%%) have an exact size (leaves, DAPs, "
	       "single-successor chains).\n", known, nc, 100.0 * known / (nc ? nc : 1));
	printf("Peak RSS: %.0f MB after the loads, %.0f MB after the builds.\n\n", rss_load,
	       rss_build);

	/* Single objects. */
	struct view hv;
	view_init(&hv, h);
	struct sample su, sn;
	sample_init(&sn, "Objects whose component the build did not size", o.samples, &o);
	sample_init(&su, "Objects drawn uniformly", o.samples, &o);
	pick(&sn, h, d, &m, true);
	pick(&su, h, d, &m, false);
	printf("### Exact dynamic size of a single object (dyn_exact, target < 100 ms median)\n\n");
	printf("Each dyn_exact call sees the engine as built (the component's memo is reset "
	       "before the call). SimpleObjectsDynamicSize (the thesis's listing 4.2, "
	       "breadth-first, over the same edges) runs right after it on the same object, and "
	       "its answer must be the same.\n\n");
	st = run_sample(&sn, d, &m, &hv, &o);
	if (st == HS_OK)
		st = run_sample(&su, d, &m, &hv, &o);
	if (st != HS_OK) {
		fprintf(stderr, "dyn_bench: interrupted\n");
		return 2;
	}
	report_sample(&sn, &o);
	report_sample(&su, &o);

	/* The TOP objects with the largest estimates. */
	uint32_t *top = xmallocarray((size_t)o.top + 1, sizeof *top);
	uint32_t ntop = top_objects(h, d, o.top, top);
	uint32_t *comps = xmallocarray((size_t)ntop + 1, sizeof *comps);
	uint64_t *bytes = xmallocarray((size_t)ntop + 1, sizeof *bytes);
	uint64_t *first = xmallocarray((size_t)ntop + 1, sizeof *first);
	for (uint32_t i = 0; i < ntop; i++)
		comps[i] = dyn_comp(d, top[i]);
	/* Their distinct components, and where each object's is among them. */
	uint32_t *uniq = xmallocarray((size_t)ntop + 1, sizeof *uniq), nu = 0, todo = 0;
	uint32_t *slot = xmallocarray((size_t)nc + 1, sizeof *slot);
	uint32_t *at = xmallocarray((size_t)ntop + 1, sizeof *at);
	memset(slot, 0xff, (size_t)nc * sizeof *slot);
	for (uint32_t i = 0; i < ntop; i++) {
		if (slot[comps[i]] == UINT32_MAX) {
			slot[comps[i]] = nu;
			uniq[nu++] = comps[i];
			todo += !(m.flags[comps[i]] & DYN_EXACT);
		}
		at[i] = slot[comps[i]];
	}
	free(slot);
	double *t_one = xcalloc((size_t)R + 1, sizeof *t_one);
	double *t_each = xcalloc((size_t)nu * R + 1, sizeof *t_each);
	uint64_t *one = xmallocarray((size_t)nu + 1, sizeof *one);
	/* TOP_SAMPLES of them for the baseline. */
	struct sample stp;
	sample_init(&stp, "top", o.top_samples, &o);
	{
		uint8_t *taken = xcalloc((size_t)ntop + 1, 1);
		uint32_t got = 0;
		while (got < stp.n && got < ntop) {
			uint32_t i = rnd(ntop);
			if (!taken[i]) {
				taken[i] = 1;
				stp.obj[got++] = i;	/* a position in top[] */
			}
		}
		stp.n = got;
		free(taken);
	}
	for (uint32_t r = 0; r < R; r++) {
		memo_reset(&m, d);
		double t0 = now_ms();
		if (dyn_exact_many(d, comps, ntop, bytes) != HS_OK) {
			fprintf(stderr, "dyn_bench: interrupted\n");
			return 2;
		}
		t[r] = now_ms() - t0;
		for (uint32_t i = 0; i < ntop; i++) {
			if (r == 0)
				first[i] = bytes[i];
			else if (bytes[i] != first[i])
				mismatch(h, "dyn_exact_many: first run vs a later run", top[i],
					 first[i], bytes[i]);
		}
		/* The same components one at a time. */
		memo_reset(&m, d);
		double t1 = now_ms();
		for (uint32_t u = 0; u < nu; u++) {
			double t2 = now_ms();
			if (dyn_exact(d, uniq[u], &one[u]) != HS_OK) {
				fprintf(stderr, "dyn_bench: interrupted\n");
				return 2;
			}
			t_each[(size_t)u * R + r] = now_ms() - t2;
		}
		t_one[r] = now_ms() - t1;
		for (uint32_t i = 0; i < ntop; i++)
			if (one[at[i]] != bytes[i])
				mismatch(h, "dyn_exact (one at a time) vs dyn_exact_many", top[i],
					 one[at[i]], bytes[i]);
		/* The baseline on the sample. */
		if (r >= o.bfs_runs)
			continue;
		for (uint32_t k = 0; k < stp.n; k++) {
			uint32_t i = stp.obj[k];
			double t2 = now_ms();
			uint64_t want = simple_dyn(&hv, top[i], &stp.reached[k]);
			stp.t_bfs[(size_t)k * o.bfs_runs + r] = now_ms() - t2;
			if (want != bytes[i])
				mismatch(h, "SimpleObjectsDynamicSize vs dyn_exact_many", top[i], want,
					 bytes[i]);
		}
	}
	double many_ms = median(t, R), one_ms = median(t_one, R);
	for (uint32_t k = 0; k < stp.n; k++) {
		uint32_t u = at[stp.obj[k]];
		stp.med_bfs[k] = median(stp.t_bfs + (size_t)k * o.bfs_runs, o.bfs_runs);
		stp.med_dyn[k] = median(t_each + (size_t)u * R, R);
		stp.ratio[k] = stp.med_bfs[k] / (stp.med_dyn[k] > 1e-6 ? stp.med_dyn[k] : 1e-6);
	}
	/* The estimates of these objects against their exact sizes. */
	uint32_t estimated = 0, w10 = 0, w25 = 0;
	double lo = 1e300, hi = 0;
	for (uint32_t u = 0; u < nu; u++) {
		uint32_t c = uniq[u];
		if (m.flags[c] & DYN_EXACT)
			continue;
		double r = d->est[c] / (double)one[u];
		estimated++;
		w10 += r >= 0.9 && r <= 1.1;
		w25 += r >= 0.75 && r <= 1.25;
		lo = r < lo ? r : lo;
		hi = r > hi ? r : hi;
	}
	double bfs_mean = mean(stp.med_bfs, stp.n), bfs_extra = bfs_mean * ntop;
	printf("### Exact dynamic sizes of the %u objects with the largest estimates "
	       "(target < 10 s)\n\n", ntop);
	printf("dyn_estimate ranks every object; the %u largest are in %u distinct components, "
	       "%u of which the build had not sized. Each run starts from the engine as built "
	       "(all memos reset).\n\n", ntop, nu, todo);
	printf("| measurement | median ms | runs (ms) |\n|---|---:|---|\n");
	printf("| dyn_exact_many on their components (64 at a time) | %.1f | ", many_ms);
	print_runs(t, R, 1);
	printf(" |\n| dyn_exact on each distinct component in turn (for comparison) | %.1f | ",
	       one_ms);
	print_runs(t_one, R, 1);
	printf(" |\n\n");
	uint64_t big = 0, small = UINT64_MAX;
	for (uint32_t i = 0; i < ntop; i++) {
		big = first[i] > big ? first[i] : big;
		small = first[i] < small ? first[i] : small;
	}
	printf("Exact sizes: largest %" PRIu64 " bytes, smallest %" PRIu64 " bytes. Estimates of "
	       "the %u components that were estimated: %u within 10%%, %u within 25%%; "
	       "estimate/exact from %.3f to %.3f.\n\n", big, ntop ? small : 0, estimated, w10,
	       w25, estimated ? lo : 1, estimated ? hi : 1);
	double *reached = xcalloc((size_t)stp.n + 1, sizeof *reached);
	for (uint32_t k = 0; k < stp.n; k++)
		reached[k] = stp.reached[k];
	printf("SimpleObjectsDynamicSize on %u of the %u objects (chosen at random; %u runs "
	       "each, per-object medians): median %.2f ms, mean %.2f ms, max %.2f ms; objects "
	       "reached: median %.0f, max %.0f.\n", stp.n, ntop, o.bfs_runs,
	       median(stp.med_bfs, stp.n), bfs_mean, maximum(stp.med_bfs, stp.n),
	       median(reached, stp.n), maximum(reached, stp.n));
	printf("Per-object speed-up against dyn_exact on the same object's component (from the "
	       "one-at-a-time runs): median %.1fx (min %.1fx).\n", median(stp.ratio, stp.n),
	       quantile(stp.ratio, stp.n, 0.0));
	printf("**Extrapolated** SimpleObjectsDynamicSize time for all %u objects: %u x %.2f ms "
	       "(the sample's mean) = %.0f ms, against %.1f ms measured for dyn_exact_many: "
	       "%.0fx (%.0fx against dyn_exact one at a time).\n\n", ntop, ntop, bfs_mean,
	       bfs_extra, many_ms, bfs_extra / (many_ms > 0 ? many_ms : 1e-9),
	       bfs_extra / (one_ms > 0 ? one_ms : 1e-9));
	free(reached);

	/*
	 * Every component exactly (dyn_exact_many on all), and with it the true
	 * TOP objects by exact size: how well did the estimates pick them?
	 */
	uint32_t *all = xmallocarray((size_t)nc + 1, sizeof *all);
	uint64_t *allx = xmallocarray((size_t)nc + 1, sizeof *allx);
	uint64_t *allx0 = xmallocarray((size_t)nc + 1, sizeof *allx0);
	for (uint32_t c = 0; c < nc; c++)
		all[c] = c;
	for (uint32_t r = 0; r < R; r++) {
		memo_reset(&m, d);
		double t0 = now_ms();
		if (dyn_exact_many(d, all, nc, allx) != HS_OK) {
			fprintf(stderr, "dyn_bench: interrupted\n");
			return 2;
		}
		t[r] = now_ms() - t0;
		if (r == 0)
			memcpy(allx0, allx, (size_t)nc * sizeof *allx);
		for (uint32_t c = 0; r && c < nc; c++)
			if (allx[c] != allx0[c] && mismatches++ < 20)
				fprintf(stderr, "MISMATCH dyn_exact_many on all components: component "
					"%u is %" PRIu64 " bytes in the first run, %" PRIu64 " later\n",
					c, allx0[c], allx[c]);
	}
	double all_ms = median(t, R);
	for (uint32_t k = 0; k < sn.n; k++)
		if (allx[dyn_comp(d, sn.obj[k])] != sn.bytes[k])
			mismatch(h, "dyn_exact vs dyn_exact_many on all", sn.obj[k], sn.bytes[k],
				 allx[dyn_comp(d, sn.obj[k])]);
	for (uint32_t k = 0; k < su.n; k++)
		if (allx[dyn_comp(d, su.obj[k])] != su.bytes[k])
			mismatch(h, "dyn_exact vs dyn_exact_many on all", su.obj[k], su.bytes[k],
				 allx[dyn_comp(d, su.obj[k])]);
	for (uint32_t i = 0; i < ntop; i++)
		if (allx[comps[i]] != first[i])
			mismatch(h, "dyn_exact_many on the top vs on all", top[i], first[i],
				 allx[comps[i]]);
	uint64_t *val = xmallocarray((size_t)h->n + 1, sizeof *val);
	for (uint32_t v = 0; v < h->n; v++)
		val[v] = allx[dyn_comp(d, v)];
	qsort(val, h->n, sizeof *val, by_u64_desc);
	uint64_t kth = ntop ? val[ntop - 1] : 0;
	free(val);
	uint32_t above = 0, equal = 0, picked_at_least = 0, picked_above = 0, tied = 0, higher = 0;
	float e_last = ntop ? d->est[comps[ntop - 1]] : 0;
	for (uint32_t v = 0; v < h->n; v++) {
		uint64_t x = allx[dyn_comp(d, v)];
		above += x > kth;
		equal += x == kth;
		tied += d->est[dyn_comp(d, v)] == e_last;
		higher += d->est[dyn_comp(d, v)] > e_last;
	}
	for (uint32_t i = 0; i < ntop; i++) {
		picked_at_least += first[i] >= kth;
		picked_above += first[i] > kth;
	}
	printf("### Every component exactly, and the true %u largest\n\n", ntop);
	printf("| measurement | median ms | runs (ms) |\n|---|---:|---|\n");
	printf("| dyn_exact_many on all %u components (from the engine as built) | %.1f | ", nc,
	       all_ms);
	print_runs(t, R, 1);
	printf(" |\n\n");
	printf("By exact size, the object ranked %u has %" PRIu64 " bytes; %u objects are "
	       "larger and %u have exactly that size. Of the %u objects with the largest "
	       "estimates (above), %u are at least that large, and %u of the %u larger objects "
	       "are not among them. The estimate ranked %u, %.0f, is shared by %u objects "
	       "(%u have a larger one), so which of them count as the %u largest by estimate "
	       "is decided by object index (the lower first, as in heapsh's :top).\n\n",
	       ntop, kth, above, equal, ntop, picked_at_least, above - picked_above, above, ntop,
	       (double)e_last, tied, higher, ntop);
	printf("<!-- true-top %u %" PRIu64 " %u -->\n\n", ntop, kth, above);
	free(all);
	free(allx);
	free(allx0);

	double rss_end = peak_rss_mb();
	printf("Peak RSS of this process (getrusage): %.0f MB (after the loads %.0f MB, after "
	       "the builds %.0f MB).\n\n", rss_end, rss_load, rss_build);
	printf("Cross-checks: every sampled object's SimpleObjectsDynamicSize against the engine "
	       "(%u + %u + %u objects), dyn_exact_many against dyn_exact on those %u components "
	       "and on every sampled object, each run against the first: %d mismatch%s.\n\n",
	       sn.n, su.n, stp.n, nu, mismatches, mismatches == 1 ? "" : "es");

	double single_med = median(sn.med_dyn, sn.n);
	printf("### Targets\n\n");
	printf("| target (issue 5) | measured (median of %u runs) | verdict |\n|---|---|---|\n", R);
	printf("| exact dynamic size of a single object < 100 ms median | %.3f ms median over %u "
	       "objects the build did not size (max %.2f ms); %.4f ms over %u uniform objects "
	       "(max %.2f ms) | %s |\n", single_med, sn.n, maximum(sn.med_dyn, sn.n),
	       median(su.med_dyn, su.n), su.n, maximum(su.med_dyn, su.n),
	       verdict(single_med < 100 && median(su.med_dyn, su.n) < 100));
	printf("| exact sizes of the %u largest by estimate < 10 s | %.1f ms (dyn_exact_many; "
	       "%u components to compute) | %s |\n", ntop, many_ms, todo, verdict(many_ms < 10000));
	printf("| estimates for all objects < 2 s | %.1f ms (dyn_estimate) | %s |\n", est_ms,
	       verdict(est_ms < 2000));
	printf("| SCC condensation + DAPs < 1 s | %.1f ms (dyn_build_heap; heap_load %.1f ms "
	       "besides) | %s |\n", build_ms, load_ms, verdict(build_ms < 1000));
	printf("| speed-up over SimpleObjectsDynamicSize, single objects | median per-object "
	       "ratio %.1fx over the objects the build did not size (SimpleObjectsDynamicSize "
	       "%.2f ms median), %.1fx over the uniform ones (%.2f ms) | |\n",
	       median(sn.ratio, sn.n), median(sn.med_bfs, sn.n), median(su.ratio, su.n),
	       median(su.med_bfs, su.n));
	printf("| speed-up over SimpleObjectsDynamicSize, top %u | %.0f ms **extrapolated** from "
	       "%u objects vs %.1f ms measured: %.0fx | |\n", ntop, bfs_extra, stp.n, many_ms,
	       bfs_extra / (many_ms > 0 ? many_ms : 1e-9));
	printf("| (not a target) exact sizes of all %u components | %.1f ms (dyn_exact_many) | |\n",
	       nc, all_ms);
	printf("| (not a target) the %u largest by estimate against the true %u largest | %u of "
	       "%u at least as large as the true number %u (%" PRIu64 " bytes); %u of the %u larger "
	       "objects missed; the estimate ranked %u is shared by %u objects | |\n", ntop, ntop,
	       picked_at_least, ntop, ntop, kth, above - picked_above, above, ntop, tied);
	printf("| cross-checks against SimpleObjectsDynamicSize | %d mismatches | %s |\n",
	       mismatches, mismatches ? "**FAILED**" : "ok");
	printf("| peak RSS (dyn_bench process) | %.0f MB | |\n", rss_end);

	sample_free(&sn);
	sample_free(&su);
	sample_free(&stp);
	view_free(&hv);
	free(top);
	free(comps);
	free(bytes);
	free(first);
	free(uniq);
	free(at);
	free(t_one);
	free(t_each);
	free(one);
	free(m.flags);
	free(m.exact);
	free(t);
	dyn_free(d);
	heap_free(h);
	return mismatches ? 1 : 0;
}
