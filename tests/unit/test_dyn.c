/*
 * test_dyn.c - property tests of the dynamic-size engine (src/engine/scc.c,
 * src/engine/dyn.c) against brute force on thousands of random graphs:
 * components, DAG order, DAPs by their definition, exact dynamic sizes of
 * every node, of sets, and 64 at a time; the thesis's figure 4.11; the
 * estimator's error; the index round trip; a million-long chain.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/base/big.h"
#include "../../src/engine/dyn.h"

struct g {
	uint32_t n;
	uint32_t *start, *adj;	/* successors CSR */
	uint64_t *w;
};

#define XORSHIFT_SEED 0x2545F4914F6CDD1DULL
#include "xorshift.h"

static const uint32_t *g_succs(void *ctx, uint32_t v, uint32_t *count)
{
	const struct g *g = ctx;
	*count = g->start[v + 1] - g->start[v];
	return g->adj + g->start[v];
}

static uint64_t g_weight(void *ctx, uint32_t v)
{
	return ((const struct g *)ctx)->w[v];
}

/* make: a graph from an edge list a[k] -> b[k]. */
static struct g make(uint32_t n, uint32_t m, const uint32_t *a, const uint32_t *b)
{
	struct g g = {n, calloc(n + 1, 4), malloc((m + 1) * 4), malloc((n + 1) * 8)};
	for (uint32_t e = 0; e < m; e++)
		g.start[a[e] + 1]++;
	for (uint32_t v = 0; v < n; v++)
		g.start[v + 1] += g.start[v];
	uint32_t *fill = malloc((n + 1) * 4);
	memcpy(fill, g.start, (n + 1) * 4);
	for (uint32_t e = 0; e < m; e++)
		g.adj[fill[a[e]]++] = b[e];
	free(fill);
	for (uint32_t v = 0; v < n; v++)
		g.w[v] = 8 + 8 * rnd(20);
	return g;
}

/* built: the engine of graph g (n nodes), which the caller keeps and unmakes. */
static struct dyn *built(struct g *g, uint32_t n)
{
	struct scc_graph sg = {n, g, g_succs, g_weight};
	struct dyn *d;
	assert_int_equal(dyn_build(&sg, &d), HS_OK);
	return d;
}

static void unmake(struct g *g)
{
	free(g->start);
	free(g->adj);
	free(g->w);
}

/* reach: mark everything reachable from the marked nodes, never entering banned. */
static void reach(const struct g *g, uint8_t *seen, uint32_t banned)
{
	uint32_t *st = malloc((g->n + 1) * 4), sp = 0;
	for (uint32_t v = 0; v < g->n; v++)
		if (seen[v])
			st[sp++] = v;
	while (sp) {
		uint32_t v = st[--sp];
		for (uint32_t k = g->start[v]; k < g->start[v + 1]; k++) {
			uint32_t w = g->adj[k];
			if (!seen[w] && w != banned) {
				seen[w] = 1;
				st[sp++] = w;
			}
		}
	}
	free(st);
}

static uint64_t brute(const struct g *g, const uint32_t *starts, uint32_t n)
{
	uint8_t *seen = calloc(g->n + 1, 1);
	for (uint32_t k = 0; k < n; k++)
		seen[starts[k]] = 1;
	reach(g, seen, UINT32_MAX);
	uint64_t sum = 0;
	for (uint32_t v = 0; v < g->n; v++)
		if (seen[v])
			sum += g->w[v];
	free(seen);
	return sum;
}

static struct g random_graph(uint32_t n, uint32_t m)
{
	uint32_t *a = malloc((m + 1) * 4), *b = malloc((m + 1) * 4);
	int shape = (int)rnd(3);
	for (uint32_t e = 0; e < m; e++) {
		a[e] = rnd(n);
		/* Mostly forward edges (tree- and DAG-like, as heaps are), some back. */
		if (shape && a[e] + 1 < n && rnd(10) < 8)
			b[e] = a[e] + 1 + rnd(shape == 1 && n - a[e] - 1 > 3 ? 3 : n - a[e] - 1);
		else
			b[e] = rnd(n);
	}
	struct g g = make(n, m, a, b);
	free(a);
	free(b);
	return g;
}

/* check_structure: components, DAG edges going down, DAPs by definition. */
static void check_structure(const struct g *g, const struct dyn *d)
{
	const struct scc *s = &d->s;
	uint8_t *seen = calloc(g->n + 1, 1), *back = calloc(g->n + 1, 1);
	/* Same component iff mutually reachable (checked from each node). */
	for (uint32_t v = 0; v < g->n; v++) {
		memset(seen, 0, g->n);
		seen[v] = 1;
		reach(g, seen, UINT32_MAX);
		for (uint32_t w = 0; w < g->n; w++) {
			if (!seen[w])
				continue;
			memset(back, 0, g->n);
			back[w] = 1;
			reach(g, back, UINT32_MAX);
			assert_int_equal(back[v], s->comp[v] == s->comp[w]);
			if (s->comp[v] != s->comp[w])
				assert_true(s->comp[w] < s->comp[v]);	/* reverse topological */
		}
	}
	/*
	 * A DAP: a component with successors that dominates everything it
	 * reaches, the virtual root being linked to every source node: with
	 * its nodes removed, nothing else it reaches is reachable from the
	 * sources (nodes in components no other component refers to).
	 */
	uint8_t *hasin = calloc(s->ncomp + 1, 1);
	for (uint32_t k = 0; k < s->out_start[s->ncomp]; k++)
		hasin[s->out[k]] = 1;
	for (uint32_t c = 0; c < s->ncomp; c++) {
		bool want = false;
		if (s->out_start[c + 1] > s->out_start[c]) {
			uint32_t v0 = 0;
			while (s->comp[v0] != c)
				v0++;
			memset(seen, 0, g->n);
			seen[v0] = 1;
			reach(g, seen, UINT32_MAX);	/* what c reaches */
			memset(back, 0, g->n);
			for (uint32_t v = 0; v < g->n; v++)
				back[v] = !hasin[s->comp[v]] && s->comp[v] != c;
			/* Ban all of c: walk from the sources avoiding c's nodes. */
			uint32_t *st = malloc((g->n + 1) * 4), sp = 0;
			for (uint32_t v = 0; v < g->n; v++)
				if (back[v])
					st[sp++] = v;
			while (sp) {
				uint32_t v = st[--sp];
				for (uint32_t k = g->start[v]; k < g->start[v + 1]; k++) {
					uint32_t w = g->adj[k];
					if (!back[w] && s->comp[w] != c) {
						back[w] = 1;
						st[sp++] = w;
					}
				}
			}
			free(st);
			want = true;
			for (uint32_t v = 0; v < g->n; v++)
				if (seen[v] && s->comp[v] != c && back[v])
					want = false;
		}
		assert_int_equal(want, (d->flags[c] & DYN_DAP) != 0);
	}
	free(hasin);
	free(seen);
	free(back);
}

static void random_graphs(void **state)
{
	(void)state;
	for (int round = 0; round < 3000; round++) {
		uint32_t n = 1 + rnd(40), m = rnd(3 * n + 1);
		struct g g = random_graph(n, m);
		struct dyn *d = built(&g, n);
		if (round < 600)
			check_structure(&g, d);
		/* Every node, one at a time and all at once. */
		uint32_t *comps = malloc((n + 1) * 4);
		uint64_t *many = malloc((n + 1) * 8);
		for (uint32_t v = 0; v < n; v++)
			comps[v] = dyn_comp(d, v);
		if (round & 1)
			assert_int_equal(dyn_exact_many(d, comps, n, many), HS_OK);
		for (uint32_t v = 0; v < n; v++) {
			uint64_t got, want = brute(&g, &v, 1);
			assert_int_equal(dyn_exact(d, comps[v], &got), HS_OK);
			assert_int_equal(got, want);
			if (round & 1)
				assert_int_equal(many[v], want);
		}
		/* A random set. */
		uint32_t k = 1 + rnd(n), *set = malloc((k + 1) * 4), *cs = malloc((k + 1) * 4);
		for (uint32_t j = 0; j < k; j++) {
			set[j] = rnd(n);
			cs[j] = dyn_comp(d, set[j]);
		}
		uint64_t got;
		assert_int_equal(dyn_exact_set(d, cs, k, &got), HS_OK);
		assert_int_equal(got, brute(&g, set, k));
		free(set);
		free(cs);
		free(comps);
		free(many);
		dyn_free(d);
		unmake(&g);
	}
}

/* Many starts in one graph: several 64-start batches of dyn_exact_many. */
static void many_batches(void **state)
{
	(void)state;
	uint32_t n = 3000;
	struct g g = random_graph(n, 4000);
	struct dyn *d = built(&g, n);
	uint32_t *comps = malloc(n * 4);
	uint64_t *got = malloc(n * 8);
	for (uint32_t v = 0; v < n; v++)
		comps[v] = dyn_comp(d, v);
	assert_int_equal(dyn_exact_many(d, comps, n, got), HS_OK);
	for (uint32_t v = 0; v < n; v++)
		assert_int_equal(got[v], brute(&g, &v, 1));
	free(comps);
	free(got);
	dyn_free(d);
	unmake(&g);
}

/*
 * The thesis's figure 4.11: 1 -> 2, 1 -> 4, 2 -> 3, 2 -> 4 (here 0..3).
 * Node 2 is an articulation point (it alone connects 3), so the original
 * algorithm used its dynamic size for node 1 and counted node 4 twice.
 * Node 2 does not dominate 4, so it is no DAP, and the size is right.
 */
static void thesis_figure_4_11(void **state)
{
	(void)state;
	uint32_t a[] = {0, 0, 1, 1}, b[] = {1, 3, 2, 3};
	struct g g = make(4, 4, a, b);
	uint64_t w[] = {16, 24, 32, 40};
	memcpy(g.w, w, sizeof w);
	struct scc_graph sg = {4, &g, g_succs, g_weight};
	struct dyn *d;
	assert_int_equal(dyn_build(&sg, &d), HS_OK);
	uint32_t c1 = dyn_comp(d, 0), c2 = dyn_comp(d, 1);
	assert_true(d->flags[c2] & DYN_AP);
	assert_false(d->flags[c2] & DYN_DAP);
	assert_int_equal(d->stats.aps, 1);
	assert_int_equal(d->stats.daps, 1);	/* node 1, the source, dominates all */
	assert_true(d->flags[c1] & DYN_DAP);
	uint64_t s1, s2;
	assert_int_equal(dyn_exact(d, c2, &s2), HS_OK);
	assert_int_equal(s2, 24 + 32 + 40);
	assert_int_equal(dyn_exact(d, c1, &s1), HS_OK);
	assert_int_equal(s1, 16 + 24 + 32 + 40);
	/* What the articulation-point shortcut gave: node 4 twice. */
	assert_int_not_equal(16 + s2 + 40, s1);
	dyn_free(d);
	unmake(&g);
}

/* A DAP shortcut is used: a chain head over a shared-free tree. */
static void daps_in_a_tree(void **state)
{
	(void)state;
	/* 0 -> 1 -> {2, 3}; 2 -> 4; 3 -> 5 <-> 6 (a cycle). */
	uint32_t a[] = {0, 1, 1, 2, 3, 5, 6}, b[] = {1, 2, 3, 4, 5, 6, 5};
	struct g g = make(7, 7, a, b);
	struct scc_graph sg = {7, &g, g_succs, g_weight};
	struct dyn *d;
	assert_int_equal(dyn_build(&sg, &d), HS_OK);
	assert_int_equal(d->stats.ncomp, 6);
	assert_int_equal(d->stats.nontrivial, 1);
	assert_int_equal(d->stats.largest, 2);
	assert_int_equal(d->stats.daps, 4);	/* 0, 1, 2, 3: each dominates its subtree */
	assert_int_equal(d->stats.dag_height, 4);
	for (uint32_t v = 0; v < 7; v++) {
		uint32_t c = dyn_comp(d, v);
		assert_true(d->flags[c] & DYN_EXACT);	/* all known after the build */
		assert_int_equal(d->exact[c], brute(&g, &v, 1));
	}
	dyn_free(d);
	unmake(&g);
}

/*
 * The estimator: on a random heap-like graph, the share of components
 * whose estimate is within 25% must be at least what the Gamma bound
 * promises, less 5 points for the correlation between nested sets.
 */
static void estimates(void **state)
{
	(void)state;
	uint32_t n = 20000;
	struct g g = random_graph(n, 26000);
	struct dyn *d = built(&g, n);
	assert_int_equal(dyn_estimate(d), HS_OK);
	uint32_t nc = d->s.ncomp, within = 0, estimated = 0;
	uint32_t *all = malloc(nc * 4);
	uint64_t *exact = malloc(nc * 8);
	uint8_t *was_exact = malloc(nc);
	for (uint32_t c = 0; c < nc; c++) {
		all[c] = c;
		was_exact[c] = (d->flags[c] & DYN_EXACT) != 0;
	}
	assert_int_equal(dyn_exact_many(d, all, nc, exact), HS_OK);
	for (uint32_t c = 0; c < nc; c++) {
		double r = d->est[c] / (double)exact[c];
		if (was_exact[c]) {
			assert_true(r > 0.999999 && r < 1.000001);
			continue;
		}
		estimated++;
		within += r >= 0.75 && r <= 1.25;
	}
	double miss = dyn_est_miss(0.25);
	assert_true(miss > 0.01 && miss < 0.10);
	assert_true(estimated > 1000);
	printf("estimates: %u of %u estimated components within 25%% (bound: %.1f%%)\n", within,
	       estimated, 100 * (1 - miss));
	assert_true((double)within / estimated >= 1 - miss - 0.05);
	free(all);
	free(exact);
	free(was_exact);
	dyn_free(d);
	unmake(&g);
}

static void index_round_trip(void **state)
{
	(void)state;
	uint32_t n = 500;
	struct g g = random_graph(n, 900);
	struct dyn *d = built(&g, n);
	assert_int_equal(dyn_estimate(d), HS_OK);
	uint64_t len;
	uint8_t *buf = dyn_save(d, &len);
	struct dyn *e = dyn_load(buf, len, n);
	assert_non_null(e);
	assert_int_equal(e->s.ncomp, d->s.ncomp);
	assert_memory_equal(e->est, d->est, d->s.ncomp * 4);
	for (uint32_t v = 0; v < n; v++) {
		uint64_t x, y;
		assert_int_equal(dyn_exact(d, dyn_comp(d, v), &x), HS_OK);
		assert_int_equal(dyn_exact(e, dyn_comp(e, v), &y), HS_OK);
		assert_int_equal(x, y);
	}
	assert_null(dyn_load(buf, len, n + 1));		/* another heap */
	assert_null(dyn_load(buf, len - 1, n));		/* truncated */
	/* A DAG edge pointing upwards (to a higher component) is refused. */
	size_t edges_at = len - (size_t)d->s.ncomp * (1 + 8 + 4) -
			  (size_t)d->s.out_start[d->s.ncomp] * 4;
	if (d->s.out_start[d->s.ncomp]) {
		uint32_t big = UINT32_MAX - 1;
		memcpy(buf + edges_at, &big, 4);
		assert_null(dyn_load(buf, len, n));
	}
	big_free(buf);
	/* An exact dynamic size larger than the whole heap is refused (a crafted
	 * index once ran :sizediff past its table). */
	buf = dyn_save(d, &len);
	size_t nc = d->s.ncomp, flags_at = len - nc * (1 + 8 + 4), exact_at = flags_at + nc;
	uint64_t huge = UINT64_MAX;
	buf[flags_at] |= DYN_EXACT;
	memcpy(buf + exact_at, &huge, 8);
	assert_null(dyn_load(buf, len, n));
	big_free(buf);
	dyn_free(d);
	dyn_free(e);
	unmake(&g);
}

/*
 * The exact sizes found after a whole save, saved on their own and loaded
 * onto the whole one: the same sizes as the engine that found them; a
 * buffer that does not fit (another engine, a count, component or size
 * out of range, cut short) changes nothing; a whole save is asked for
 * when there is none yet, estimates were made since, or the sizes are
 * many.
 */
static void exact_sizes_on_their_own(void **state)
{
	(void)state;
	uint32_t n = 500;
	struct g g = random_graph(n, 900);
	struct dyn *d = built(&g, n);
	uint64_t len, xlen, bytes;
	assert_null(dyn_save_exact(d, &xlen));	/* never saved whole */
	uint8_t *whole = dyn_save(d, &len);
	dyn_saved(d);
	uint32_t nc = d->s.ncomp, was = 0, fresh = 0;
	for (uint32_t k = 0; k < nc; k++)
		was += (d->flags[k] & DYN_EXACT) != 0;
	for (uint32_t k = 0; k < nc && fresh < 3; k += 7)	/* three not known yet */
		if (!(d->flags[k] & DYN_EXACT)) {
			assert_int_equal(dyn_exact(d, k, &bytes), HS_OK);
			fresh++;
		}
	assert_int_equal(fresh, 3);
	uint8_t *x = dyn_save_exact(d, &xlen);
	assert_non_null(x);
	uint32_t now = 0;
	for (uint32_t k = 0; k < nc; k++)
		now += (d->flags[k] & DYN_EXACT) != 0;
	assert_true(xlen == 16 + 16 * (uint64_t)(now - was) && now > was);
	struct dyn *e = dyn_load(whole, len, n);
	assert_non_null(e);
	assert_true(dyn_load_exact(e, x, xlen));
	assert_memory_equal(e->flags, d->flags, nc);
	for (uint32_t k = 0; k < nc; k++)
		if (d->flags[k] & DYN_EXACT)
			assert_true(e->exact[k] == d->exact[k]);
	dyn_free(e);
	/* what does not fit changes nothing */
	uint64_t total = 0;
	for (uint32_t k = 0; k < nc; k++)
		total += d->s.weight[k];
	for (int how = 0; how < 6; how++) {
		uint8_t *bad = malloc(xlen);
		memcpy(bad, x, xlen);
		uint64_t blen = xlen, v;
		switch (how) {
		case 0: bad[0] ^= 1; break;			/* not such sizes */
		case 1: v = nc + 1; memcpy(bad + 4, &v, 4); break;	/* another engine */
		case 2: v = nc + 1; memcpy(bad + 8, &v, 8); break;	/* count past the components */
		case 3: v = nc; memcpy(bad + 16, &v, 8); break;	/* a component out of range */
		case 4: v = total + 1; memcpy(bad + 24, &v, 8); break;	/* above the whole heap */
		default: blen--; break;			/* cut short */
		}
		e = dyn_load(whole, len, n);
		uint8_t *before = malloc(nc);
		memcpy(before, e->flags, nc);
		assert_false(dyn_load_exact(e, bad, blen));
		assert_memory_equal(before, e->flags, nc);
		free(before);
		free(bad);
		dyn_free(e);
	}
	big_free(x);
	/* estimates made since: a whole save */
	assert_int_equal(dyn_estimate(d), HS_OK);
	assert_null(dyn_save_exact(d, &xlen));
	dyn_saved(d);
	x = dyn_save_exact(d, &xlen);	/* nothing found since */
	assert_non_null(x);
	assert_true(xlen == 16);
	big_free(x);
	/* many sizes: a whole save */
	for (uint32_t k = 0; k < nc; k++)
		assert_int_equal(dyn_exact(d, k, &bytes), HS_OK);
	assert_null(dyn_save_exact(d, &xlen));
	big_free(whole);
	dyn_free(d);
	unmake(&g);
}

/* A million-long chain and a million-long cycle: no recursion, exact sizes. */
static void long_chain(void **state)
{
	(void)state;
	uint32_t n = 1000000;
	uint32_t *a = malloc(n * 4), *b = malloc(n * 4);
	for (uint32_t v = 0; v + 1 < n; v++) {
		a[v] = v;
		b[v] = v + 1;
	}
	for (int cyc = 0; cyc < 2; cyc++) {
		uint32_t m = n - 1;
		if (cyc) {
			a[m] = n - 1;
			b[m++] = 0;
		}
		struct g g = make(n, m, a, b);
		for (uint32_t v = 0; v < n; v++)
			g.w[v] = 16;
		struct scc_graph sg = {n, &g, g_succs, g_weight};
		struct dyn *d;
		assert_int_equal(dyn_build(&sg, &d), HS_OK);
		assert_int_equal(d->s.ncomp, cyc ? 1 : n);
		uint64_t got;
		assert_int_equal(dyn_exact(d, dyn_comp(d, 0), &got), HS_OK);
		assert_int_equal(got, 16ULL * n);
		assert_int_equal(dyn_exact(d, dyn_comp(d, n / 2), &got), HS_OK);
		assert_int_equal(got, cyc ? 16ULL * n : 16ULL * (n - n / 2));
		dyn_free(d);
		unmake(&g);
	}
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(random_graphs),     cmocka_unit_test(many_batches),
		cmocka_unit_test(thesis_figure_4_11), cmocka_unit_test(daps_in_a_tree),
		cmocka_unit_test(estimates),         cmocka_unit_test(index_round_trip),
		cmocka_unit_test(exact_sizes_on_their_own),
		cmocka_unit_test(long_chain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
