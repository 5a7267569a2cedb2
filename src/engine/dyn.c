/* dyn.c - dynamic sizes: DAPs, exact sizes, Cohen estimates; see dyn.h. */
#include "dyn.h"

#include "../base/big.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dom.h"

/* ---- the heap as a dynamic-size graph ---- */

struct hview {
	const struct heap *h;
	uint8_t *is_class;	/* [n] 1 for class objects */
	uint32_t *static_start;	/* [nclasses+1] */
	uint32_t *statics;	/* objects the static reference fields point to */
};

static const uint32_t *hview_succs(void *ctx, uint32_t v, uint32_t *count)
{
	const struct hview *hv = ctx;
	if (hv->is_class[v]) {
		uint32_t c = heap_class_of_object(hv->h, v);
		*count = hv->static_start[c + 1] - hv->static_start[c];
		return hv->statics + hv->static_start[c];
	}
	return heap_out(hv->h, v, count);
}

static uint64_t hview_weight(void *ctx, uint32_t v)
{
	const struct hview *hv = ctx;
	return hv->h->size[v] == HEAP_SIZE_BIG ? heap_shallow(hv->h, v) : hv->h->size[v];
}

static void hview_init(struct hview *hv, const struct heap *h)
{
	hv->h = h;
	hv->is_class = big_alloc((size_t)h->n + 1, 1);
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
			/* HotSpot's pseudo-statics (<resolved_references>, <init_lock>) are VM
			 * internals, not fields a program holds. */
			if (k->statics[s].type != HPROF_OBJECT || (k->statics[s].name && k->statics[s].name[0] == '<'))
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
}

static void hview_free(struct hview *hv)
{
	big_free(hv->is_class);
	big_free(hv->static_start);
	big_free(hv->statics);
}

int dyn_build_heap(const struct heap *h, struct dyn **out)
{
	struct hview hv;
	hview_init(&hv, h);
	struct scc_graph g = {h->n, &hv, hview_succs, hview_weight};
	int st = dyn_build(&g, out);
	hview_free(&hv);
	return st;
}

/* ---- building: the DAG's dominators, DAPs, articulation points ---- */

/* The SCC DAG plus a virtual root (ncomp) linked to every source. */
struct dagview {
	const struct scc *s;
	const uint32_t *in_start, *in;
	const uint32_t *sources;
	uint32_t nsources;
};

static void dag_succs(void *ctx, uint32_t v, struct dom_slices *sl)
{
	const struct dagview *g = ctx;
	sl->count = 1;
	if (v == g->s->ncomp) {
		sl->a[0] = g->sources;
		sl->n[0] = g->nsources;
		return;
	}
	sl->a[0] = g->s->out + g->s->out_start[v];
	sl->n[0] = g->s->out_start[v + 1] - g->s->out_start[v];
}

static void dag_preds(void *ctx, uint32_t v, struct dom_slices *sl)
{
	const struct dagview *g = ctx;
	sl->count = 0;
	if (v == g->s->ncomp)
		return;
	uint32_t k = g->in_start[v + 1] - g->in_start[v];
	sl->count = 1;
	sl->a[0] = g->in + g->in_start[v];
	sl->n[0] = k;
	if (!k) {
		sl->a[0] = &g->s->ncomp;	/* a source: its only predecessor is the root */
		sl->n[0] = 1;
	}
}

/*
 * mark_daps: the thesis's listing 4.4. Sweeping children first, val[c] is
 * the highest-numbered immediate dominator among c and everything c
 * reaches; c dominates all it reaches exactly when that maximum over its
 * children is c itself (a child's immediate dominator is c or dominates c,
 * so it is never lower).
 */
static uint32_t mark_daps(struct dyn *d, const uint32_t *idom)
{
	const struct scc *s = &d->s;
	uint32_t *val = big_alloc((size_t)s->ncomp + 1, sizeof *val), daps = 0;
	for (uint32_t c = 0; c < s->ncomp; c++) {
		uint32_t mx = 0, b = s->out_start[c], e = s->out_start[c + 1];
		for (uint32_t k = b; k < e; k++)
			if (val[s->out[k]] > mx)
				mx = val[s->out[k]];
		if (e > b && mx == c) {
			d->flags[c] |= DYN_DAP;
			daps++;
		}
		val[c] = e > b && mx > idom[c] ? mx : idom[c];
	}
	big_free(val);
	return daps;
}

struct apframe {
	uint32_t v, parent, pos;
};

/*
 * mark_aps: articulation points of the DAG taken as an undirected graph
 * (its edges are unique and never come in both directions), by the
 * Hopcroft-Tarjan low-point method, iteratively.
 */
static uint32_t mark_aps(struct dyn *d, const uint32_t *in_start, const uint32_t *in)
{
	const struct scc *s = &d->s;
	uint32_t nc = s->ncomp, t = 0, aps = 0;
	uint32_t *disc = big_alloc((size_t)nc + 1, sizeof *disc);
	uint32_t *low = big_alloc((size_t)nc + 1, sizeof *low);
	struct apframe *st = big_alloc((size_t)nc + 1, sizeof *st);
	memset(disc, 0xff, (size_t)nc * sizeof *disc);
	for (uint32_t r = 0; r < nc; r++) {
		if (disc[r] != UINT32_MAX)
			continue;
		uint32_t sp = 0, root_children = 0;
		disc[r] = low[r] = t++;
		st[sp++] = (struct apframe){r, UINT32_MAX, 0};
		while (sp) {
			struct apframe *f = &st[sp - 1];
			uint32_t v = f->v, nout = s->out_start[v + 1] - s->out_start[v];
			uint32_t deg = nout + in_start[v + 1] - in_start[v];
			bool descended = false;
			while (f->pos < deg) {
				uint32_t k = f->pos++;
				uint32_t w = k < nout ? s->out[s->out_start[v] + k] : in[in_start[v] + k - nout];
				if (w == f->parent)
					continue;
				if (disc[w] == UINT32_MAX) {
					disc[w] = low[w] = t++;
					st[sp++] = (struct apframe){w, v, 0};
					descended = true;
					break;
				}
				if (disc[w] < low[v])
					low[v] = disc[w];
			}
			if (descended)
				continue;
			sp--;
			if (!sp)
				break;
			uint32_t u = st[sp - 1].v;
			if (low[v] < low[u])
				low[u] = low[v];
			if (u == r)
				root_children++;
			else if (low[v] >= disc[u] && !(d->flags[u] & DYN_AP)) {
				d->flags[u] |= DYN_AP;
				aps++;
			}
		}
		if (root_children >= 2) {
			d->flags[r] |= DYN_AP;
			aps++;
		}
	}
	big_free(disc);
	big_free(low);
	big_free(st);
	return aps;
}

/* levels: the number of levels and the largest one, given each node's level. */
static void level_shape(const uint32_t *level, uint32_t n, uint32_t *height, uint32_t *width)
{
	uint32_t h = 0;
	for (uint32_t c = 0; c < n; c++)
		if (level[c] + 1 > h)
			h = level[c] + 1;
	uint32_t *count = xcalloc((size_t)h + 1, sizeof *count), w = 0;
	for (uint32_t c = 0; c < n; c++)
		if (++count[level[c]] > w)
			w = count[level[c]];
	big_free(count);
	*height = h;
	*width = w;
}

static void shape_stats(struct dyn *d, const uint32_t *idom)
{
	const struct scc *s = &d->s;
	uint32_t nc = s->ncomp;
	struct dyn_stats *t = &d->stats;
	uint32_t *level = big_alloc((size_t)nc + 1, sizeof *level);
	/* Sources first (descending numbers): a level is the longest path from a source. */
	for (uint32_t c = nc; c-- > 0;)
		for (uint32_t k = s->out_start[c]; k < s->out_start[c + 1]; k++)
			if (level[s->out[k]] < level[c] + 1)
				level[s->out[k]] = level[c] + 1;
	level_shape(level, nc, &t->dag_height, &t->dag_width);
	/* A dominator has a higher number than the nodes it dominates. */
	for (uint32_t c = nc; c-- > 0;)
		level[c] = idom[c] == nc ? 0 : level[idom[c]] + 1;
	level_shape(level, nc, &t->dom_height, &t->dom_width);
	big_free(level);
	t->nodes = s->n;
	t->refs = s->nrefs;
	t->ncomp = nc;
	t->dag_edges = s->out_start[nc];
	for (uint32_t c = 0; c < nc; c++) {
		if (s->size[c] > t->largest)
			t->largest = s->size[c];
		if (s->size[c] > 1) {
			t->nontrivial++;
			t->nontrivial_nodes += s->size[c];
		}
	}
}

static void ensure_scratch(struct dyn *d)
{
	if (!d->stamp) {
		/* d is older than the call under way: its scratch outlives a
		 * throw later in the call (big_keep); stamp, the test, last. */
		uint32_t *unsafe = big_alloc((size_t)d->s.ncomp + 1, sizeof *d->unsafe);
		uint32_t *stack = big_alloc((size_t)d->s.ncomp + 1, sizeof *d->stack);
		uint32_t *stamp = big_alloc((size_t)d->s.ncomp + 1, sizeof *d->stamp);
		d->unsafe = big_keep(unsafe);
		d->stack = big_keep(stack);
		d->stamp = big_keep(stamp);
		d->epoch = 0;
	}
	if (++d->epoch == 0) {
		memset(d->stamp, 0, (size_t)d->s.ncomp * sizeof *d->stamp);
		memset(d->unsafe, 0, (size_t)d->s.ncomp * sizeof *d->unsafe);
		d->epoch = 1;
	}
}

/*
 * walk: the total weight reached from the starts already on d->stack (and
 * stamped), stopping at DAPs other than skip and not marked unsafe, whose
 * exact sizes are used.
 * Returns false when interrupted.
 */
static bool walk(struct dyn *d, uint32_t sp, uint32_t skip, uint64_t *sum)
{
	const struct scc *s = &d->s;
	uint64_t steps = 0;
	while (sp) {
		uint32_t x = d->stack[--sp];
		if (x != skip && (d->flags[x] & DYN_DAP) && d->unsafe[x] != d->epoch) {
			*sum += d->exact[x];
			continue;
		}
		*sum += s->weight[x];
		for (uint32_t k = s->out_start[x]; k < s->out_start[x + 1]; k++) {
			uint32_t y = s->out[k];
			if (d->stamp[y] != d->epoch) {
				d->stamp[y] = d->epoch;
				d->stack[sp++] = y;
			}
		}
		if ((++steps & 0xffff) == 0 && hs_interrupted)
			return false;
	}
	return true;
}

/* walk_from: the weight reached from c alone, stopping at DAPs other than c. */
static bool walk_from(struct dyn *d, uint32_t c, uint64_t *sum)
{
	ensure_scratch(d);
	d->stamp[c] = d->epoch;
	d->stack[0] = c;
	*sum = 0;
	return walk(d, 1, c, sum);
}

/*
 * exact_sweep: exact sizes of every leaf and every DAP, and of components
 * whose only successor's size is known. Children first, so the DAPs a
 * DAP's walk meets are done; each component is walked only from its
 * nearest DAP above, so the sweep is linear.
 */
static int exact_sweep(struct dyn *d)
{
	const struct scc *s = &d->s;
	for (uint32_t c = 0; c < s->ncomp; c++) {
		uint32_t b = s->out_start[c], e = s->out_start[c + 1];
		if (e == b) {
			d->exact[c] = s->weight[c];
		} else if (d->flags[c] & DYN_DAP) {
			if (!walk_from(d, c, &d->exact[c]))
				return HS_INTERRUPTED;
		} else if (e == b + 1 && (d->flags[s->out[b]] & DYN_EXACT)) {
			d->exact[c] = s->weight[c] + d->exact[s->out[b]];
		} else {
			continue;
		}
		d->flags[c] |= DYN_EXACT;
	}
	return HS_OK;
}

int dyn_build(const struct scc_graph *g, struct dyn **out)
{
	*out = NULL;
	struct dyn *d = xcalloc(1, sizeof *d);
	if (scc_build(g, &d->s) != HS_OK) {
		big_free(d);
		return HS_INTERRUPTED;
	}
	const struct scc *s = &d->s;
	uint32_t nc = s->ncomp;
	d->flags = big_alloc((size_t)nc + 1, 1);
	d->exact = big_alloc((size_t)nc + 1, sizeof *d->exact);
	uint32_t *in_start, *in;
	scc_preds(s, &in_start, &in);
	struct dagview dv = {s, in_start, in, NULL, 0};
	uint32_t *sources = big_alloc((size_t)nc + 1, sizeof *sources);
	for (uint32_t c = nc; c-- > 0;)
		if (in_start[c + 1] == in_start[c])
			sources[dv.nsources++] = c;
	dv.sources = sources;
	d->stats.sources = dv.nsources;
	uint32_t *idom = big_alloc((size_t)nc + 2, sizeof *idom);
	struct dom_graph dg = {nc + 1, nc, &dv, dag_succs, dag_preds, NULL, NULL};
	int st = dom_build(&dg, idom, NULL, NULL);
	d->idom = idom;
	if (st == HS_OK) {
		d->stats.daps = mark_daps(d, idom);
		d->stats.aps = mark_aps(d, in_start, in);
		shape_stats(d, idom);
	}
	big_free(sources);
	big_free(in_start);
	big_free(in);
	if (st == HS_OK)
		st = exact_sweep(d);
	if (st != HS_OK) {
		dyn_free(d);
		return HS_INTERRUPTED;
	}
	*out = d;
	return HS_OK;
}

void dyn_free(struct dyn *d)
{
	if (!d)
		return;
	scc_free(&d->s);
	big_free(d->flags);
	big_free(d->exact);
	big_free(d->est);
	big_free(d->stamp);
	big_free(d->unsafe);
	big_free(d->stack);
	big_free(d->idom);
	big_free(d->saved_flags);
	big_free(d);
}

/* ---- exact sizes ---- */

int dyn_exact(struct dyn *d, uint32_t c, uint64_t *bytes)
{
	if (d->flags[c] & DYN_EXACT) {
		*bytes = d->exact[c];
		return HS_OK;
	}
	uint64_t sum;
	if (!walk_from(d, c, &sum))
		return HS_INTERRUPTED;
	d->exact[c] = sum;
	d->flags[c] |= DYN_EXACT;
	d->dirty = true;
	*bytes = sum;
	return HS_OK;
}

static int by_desc(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

int dyn_exact_set(struct dyn *d, const uint32_t *comps, uint32_t n, uint64_t *bytes)
{
	uint32_t *c = big_alloc((size_t)n + 1, sizeof *c);
	memcpy(c, comps, (size_t)n * sizeof *c);
	qsort(c, n, sizeof *c, by_desc);
	ensure_scratch(d);
	for (uint32_t k = 0; k < n; k++)
		for (uint32_t a = d->idom[c[k]]; a != d->s.ncomp && d->unsafe[a] != d->epoch;
		     a = d->idom[a])
			d->unsafe[a] = d->epoch;
	uint64_t sum = 0;
	int st = HS_OK;
	for (uint32_t k = 0; k < n && st == HS_OK; k++) {
		if (d->stamp[c[k]] == d->epoch)
			continue;
		d->stamp[c[k]] = d->epoch;
		d->stack[0] = c[k];
		if (!walk(d, 1, UINT32_MAX, &sum))
			st = HS_INTERRUPTED;
	}
	big_free(c);
	*bytes = sum;
	return st;
}

/* charge: add val to the sum of every start whose bit is in mask. */
static void charge(uint64_t *acc, uint64_t mask, uint64_t val)
{
	while (mask) {
		acc[__builtin_ctzll(mask)] += val;
		mask &= mask - 1;
	}
}

/*
 * batch: exact sizes of up to 64 components start[0..n) at once. mask[x]
 * holds the starts that reach x; a sweep in descending numbers sees every
 * component after all its predecessors. Runs of equal masks are charged
 * together. mask[] is all zero before and after.
 */
static bool batch(struct dyn *d, uint64_t *mask, const uint32_t *start, uint32_t n,
		  uint64_t *acc)
{
	const struct scc *s = &d->s;
	uint32_t hi = 0;
	for (uint32_t k = 0; k < n; k++) {
		mask[start[k]] |= 1ULL << k;
		acc[k] = 0;
		if (start[k] > hi)
			hi = start[k];
	}
	uint64_t run_mask = 0, run_val = 0;
	for (uint32_t x = hi + 1; x-- > 0;) {
		uint64_t b = mask[x];
		if (!b)
			continue;
		mask[x] = 0;
		uint64_t val;
		if (d->flags[x] & DYN_DAP) {
			val = d->exact[x];
		} else {
			val = s->weight[x];
			for (uint32_t k = s->out_start[x]; k < s->out_start[x + 1]; k++)
				mask[s->out[k]] |= b;
		}
		if (b != run_mask) {
			charge(acc, run_mask, run_val);
			run_mask = b;
			run_val = 0;
		}
		run_val += val;
		if ((x & 0xffff) == 0 && hs_interrupted) {
			memset(mask, 0, (size_t)x * sizeof *mask);
			return false;
		}
	}
	charge(acc, run_mask, run_val);
	return true;
}

int dyn_exact_many(struct dyn *d, const uint32_t *comps, uint32_t n, uint64_t *bytes)
{
	uint32_t *todo = big_alloc((size_t)n + 1, sizeof *todo), nt = 0;
	for (uint32_t k = 0; k < n; k++)
		if (!(d->flags[comps[k]] & DYN_EXACT))
			todo[nt++] = comps[k];
	qsort(todo, nt, sizeof *todo, by_desc);
	uint32_t u = 0;
	for (uint32_t k = 0; k < nt; k++)
		if (!u || todo[u - 1] != todo[k])
			todo[u++] = todo[k];
	int st = HS_OK;
	if (u) {
		uint64_t *mask = big_alloc((size_t)d->s.ncomp + 1, sizeof *mask), acc[64];
		for (uint32_t k = 0; k < u && st == HS_OK; k += 64) {
			uint32_t m = u - k < 64 ? u - k : 64;
			hs_progress("exact dynamic sizes", k, u);
			if (!batch(d, mask, todo + k, m, acc)) {
				st = HS_INTERRUPTED;
				break;
			}
			for (uint32_t j = 0; j < m; j++) {
				d->exact[todo[k + j]] = acc[j];
				d->flags[todo[k + j]] |= DYN_EXACT;
			}
			d->dirty = true;
		}
		big_free(mask);
	}
	big_free(todo);
	for (uint32_t k = 0; k < n; k++)
		bytes[k] = d->exact[comps[k]];
	return st;
}

/* ---- estimates ---- */

#define LANES 4
#define LOG_BITS 12

static float log1p_tab[(1 << LOG_BITS) + 1];
static pthread_once_t log_once = PTHREAD_ONCE_INIT;

static void log_init(void)
{
	for (int i = 0; i <= 1 << LOG_BITS; i++)
		log1p_tab[i] = (float)log1p((double)i / (1 << LOG_BITS));
}

static inline uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/*
 * exp1: -ln(u) for u = r / 2^64 (r made non-zero): an Exp(1) variate.
 * ln(u) = -(z+1) ln 2 + ln(1+f) for r = 2^(63-z) (1+f); ln(1+f) is
 * interpolated in a 4096-entry table (error below 1e-8).
 */
static inline float exp1(uint64_t r)
{
	r |= 1;
	int z = __builtin_clzll(r);
	uint64_t f = (r << z) << 1;
	uint32_t i = (uint32_t)(f >> (64 - LOG_BITS));
	float frac = (float)((f << LOG_BITS) >> 40) * (1.0f / (1 << 24));
	float l = log1p_tab[i] + (log1p_tab[i + 1] - log1p_tab[i]) * frac;
	return (float)(z + 1) * 0.69314718f - l;
}

struct est_work {
	const struct dyn *d;
	uint32_t j0, j1;	/* rank assignments [j0, j1) */
	float *acc;		/* [ncomp] sum of the minima */
	bool interrupted;
};

static void *est_run(void *arg)
{
	struct est_work *w = arg;
	const struct scc *s = &w->d->s;
	uint32_t nc = s->ncomp;
	float *m = big_alloc((size_t)nc * LANES + LANES, sizeof *m);
	for (uint32_t j = w->j0; j < w->j1 && !w->interrupted; j += LANES) {
		for (uint32_t c = 0; c < nc; c++) {
			float v[LANES];
			float inv = 1.0f / (float)s->weight[c];
			uint64_t seed = mix(((uint64_t)c << 8) ^ j);
			for (int l = 0; l < LANES; l++)
				v[l] = exp1(mix(seed + (uint64_t)l)) * inv;
			for (uint32_t k = s->out_start[c]; k < s->out_start[c + 1]; k++) {
				const float *o = m + (size_t)s->out[k] * LANES;
				for (int l = 0; l < LANES; l++)
					v[l] = o[l] < v[l] ? o[l] : v[l];
			}
			float sum = 0;
			for (int l = 0; l < LANES; l++) {
				m[(size_t)c * LANES + l] = v[l];
				sum += v[l];
			}
			w->acc[c] += sum;
			if ((c & 0xffff) == 0 && hs_interrupted)
				w->interrupted = true;
		}
	}
	big_free(m);
	return NULL;
}

int dyn_estimate(struct dyn *d)
{
	if (d->est)
		return HS_OK;
	pthread_once(&log_once, log_init);
	uint32_t nc = d->s.ncomp;
	struct est_work w[2] = {
		{d, 0, DYN_K / 2, big_alloc((size_t)nc + 1, sizeof(float)), false},
		{d, DYN_K / 2, DYN_K, big_alloc((size_t)nc + 1, sizeof(float)), false},
	};
	hs_run_pair(est_run, &w[0], est_run, &w[1], nc > 10000);
	int st = w[0].interrupted || w[1].interrupted ? HS_INTERRUPTED : HS_OK;
	if (st == HS_OK) {
		/* kept, as ensure_scratch's */
		d->est = big_keep(big_alloc((size_t)nc + 1, sizeof *d->est));
		for (uint32_t c = 0; c < nc; c++)
			d->est[c] = d->flags[c] & DYN_EXACT
					    ? (float)d->exact[c]
					    : (float)(DYN_K - 1) / (w[0].acc[c] + w[1].acc[c]);
		d->dirty = true;
	}
	big_free(w[0].acc);
	big_free(w[1].acc);
	return st;
}

/* gamma_cdf: P(G <= x) for G ~ Gamma(k, 1), k a positive integer. */
static double gamma_cdf(int k, double x)
{
	if (x <= 0)
		return 0;
	double term = 1, sum = 1;
	for (int i = 1; i < k; i++) {
		term *= x / i;
		sum += term;
	}
	return 1 - exp(-x + log(sum));
}

double dyn_est_miss(double eps)
{
	/* est/true = (k-1)/G with G ~ Gamma(k, 1). */
	double k1 = DYN_K - 1;
	return gamma_cdf(DYN_K, k1 / (1 + eps)) + (1 - gamma_cdf(DYN_K, k1 / (1 - eps)));
}

/* ---- the index file ---- */

#define DYN_MAGIC 0x314e5944u	/* "DYN1" */

struct dyn_head {
	uint32_t magic, n, ncomp, has_est;
	uint64_t edges;
	struct dyn_stats stats;
};

static size_t saved_size(const struct dyn_head *hd)
{
	size_t nc = hd->ncomp;
	return sizeof *hd + (size_t)hd->n * 4 + nc * 4 + nc * 4 + nc * 8 + (nc + 1) * 4 +
	       (size_t)hd->edges * 4 + nc + nc * 8 + (hd->has_est ? nc * 4 : 0);
}

void *dyn_save(const struct dyn *d, uint64_t *len)
{
	const struct scc *s = &d->s;
	struct dyn_head hd = {DYN_MAGIC, s->n, s->ncomp, d->est != NULL, s->out_start[s->ncomp],
			      d->stats};
	size_t total = saved_size(&hd), nc = s->ncomp;
	uint8_t *buf = big_alloc(total, 1), *p = buf;
#define PUT(src, bytes) (memcpy(p, (src), (bytes)), p += (bytes))
	PUT(&hd, sizeof hd);
	PUT(s->comp, (size_t)s->n * 4);
	PUT(s->size, nc * 4);
	PUT(d->idom, nc * 4);
	PUT(s->weight, nc * 8);
	PUT(s->out_start, (nc + 1) * 4);
	PUT(s->out, (size_t)hd.edges * 4);
	PUT(d->flags, nc);
	PUT(d->exact, nc * 8);
	if (d->est)
		PUT(d->est, nc * 4);
#undef PUT
	*len = total;
	return buf;
}

static void *take(const uint8_t **p, size_t bytes)
{
	void *a = big_alloc(bytes + 8, 1);
	memcpy(a, *p, bytes);
	*p += bytes;
	return a;
}

struct dyn *dyn_load(const void *buf, uint64_t len, uint32_t n)
{
	struct dyn_head hd;
	if (len < sizeof hd)
		return NULL;
	memcpy(&hd, buf, sizeof hd);
	if (hd.magic != DYN_MAGIC || hd.n != n || hd.ncomp > n || hd.has_est > 1 ||
	    hd.edges > (uint64_t)hd.ncomp * hd.ncomp || len != saved_size(&hd))
		return NULL;
	const uint8_t *p = (const uint8_t *)buf + sizeof hd;
	size_t nc = hd.ncomp;
	struct dyn *d = xcalloc(1, sizeof *d);
	struct scc *s = &d->s;
	s->n = n;
	s->ncomp = hd.ncomp;
	s->nrefs = hd.stats.refs;
	s->comp = take(&p, (size_t)n * 4);
	s->size = take(&p, nc * 4);
	d->idom = take(&p, nc * 4);
	s->weight = take(&p, nc * 8);
	s->out_start = take(&p, (nc + 1) * 4);
	s->out = take(&p, (size_t)hd.edges * 4);
	d->flags = take(&p, nc);
	d->exact = take(&p, nc * 8);
	if (hd.has_est)
		d->est = take(&p, nc * 4);
	d->stats = hd.stats;
	/* Every index in range, and every DAG edge going to a lower number. */
	bool ok = s->out_start[0] == 0 && s->out_start[nc] == hd.edges;
	/* the offsets first, all of them: a row is read only once every
	 * offset is known to lie within the edges */
	for (uint32_t c = 0; ok && c < nc; c++)
		ok = s->out_start[c] <= s->out_start[c + 1];
	uint64_t members = 0;
	for (uint32_t c = 0; ok && c < nc; c++) {
		ok = d->flags[c] < 8 && s->size[c] && d->idom[c] > c && d->idom[c] <= nc;
		for (uint32_t k = s->out_start[c]; ok && k < s->out_start[c + 1]; k++)
			ok = s->out[k] < c;
		members += s->size[c];
	}
	for (uint32_t v = 0; ok && v < n; v++)
		ok = s->comp[v] < nc;
	/* no component keeps alive more than the whole heap */
	uint64_t total = 0;
	for (uint32_t c = 0; ok && c < nc; c++)
		ok = !__builtin_add_overflow(total, s->weight[c], &total);
	for (uint32_t c = 0; ok && c < nc; c++)
		ok = !(d->flags[c] & DYN_EXACT) || d->exact[c] <= total;
	if (!ok || members != n) {
		dyn_free(d);
		return NULL;
	}
	dyn_saved(d);
	return d;
}

void dyn_saved(struct dyn *d)
{
	size_t nc = d->s.ncomp;
	if (!d->saved_flags)	/* kept, as ensure_scratch's */
		d->saved_flags = big_keep(big_alloc(nc + 1, 1));
	memcpy(d->saved_flags, d->flags, nc);
	d->saved_est = d->est != NULL;
}

#define DYX_MAGIC 0x31585944u	/* "DYX1" */

struct dyx_head {
	uint32_t magic, ncomp;
	uint64_t count;
};

void *dyn_save_exact(const struct dyn *d, uint64_t *len)
{
	size_t nc = d->s.ncomp;
	if (!d->saved_flags || (d->est && !d->saved_est))
		return NULL;
	uint64_t count = 0;
	for (size_t c = 0; c < nc; c++)
		count += (d->flags[c] & DYN_EXACT) && !(d->saved_flags[c] & DYN_EXACT);
	struct dyn_head hd = {DYN_MAGIC, d->s.n, d->s.ncomp, d->est != NULL,
			      d->s.out_start[nc], d->stats};
	if (16 * count > saved_size(&hd) / 8)
		return NULL;
	struct dyx_head xh = {DYX_MAGIC, d->s.ncomp, count};
	*len = sizeof xh + 16 * count;
	uint8_t *buf = big_alloc(*len, 1);
	memcpy(buf, &xh, sizeof xh);
	uint64_t *pair = (uint64_t *)(buf + sizeof xh);
	for (size_t c = 0; c < nc; c++)
		if ((d->flags[c] & DYN_EXACT) && !(d->saved_flags[c] & DYN_EXACT)) {
			*pair++ = c;
			*pair++ = d->exact[c];
		}
	return buf;
}

bool dyn_load_exact(struct dyn *d, const void *buf, uint64_t len)
{
	struct dyx_head xh;
	if (len < sizeof xh)
		return false;
	memcpy(&xh, buf, sizeof xh);
	size_t nc = d->s.ncomp;
	if (xh.magic != DYX_MAGIC || xh.ncomp != nc || xh.count > nc ||
	    len != sizeof xh + 16 * xh.count)
		return false;
	const uint8_t *p = (const uint8_t *)buf + sizeof xh;
	uint64_t total = 0;	/* no overflow: dyn_load checked the sum */
	for (size_t c = 0; c < nc; c++)
		total += d->s.weight[c];
	for (uint64_t k = 0; k < xh.count; k++) {
		uint64_t c, bytes;
		memcpy(&c, p + 16 * k, 8);
		memcpy(&bytes, p + 16 * k + 8, 8);
		if (c >= nc || bytes > total)
			return false;
	}
	for (uint64_t k = 0; k < xh.count; k++) {
		uint64_t c, bytes;
		memcpy(&c, p + 16 * k, 8);
		memcpy(&bytes, p + 16 * k + 8, 8);
		d->exact[c] = bytes;
		d->flags[c] |= DYN_EXACT;
	}
	return true;
}
