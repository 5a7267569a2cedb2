/*
 * test_dom.c - property tests of dom_build (src/engine/dom.c): on thousands
 * of random graphs (cycles, self loops, unreachable parts, long chains) the
 * immediate dominators equal the definition, computed by brute force:
 * v dominates w iff removing v cuts w off from the root. Half of them
 * hand dom_build their predecessors pruned as dom.h allows (none for a
 * node with one, the root alone when it is one), as the heap graph does.
 * A quarter have their predecessors made by dom_graph.prepare, which
 * dom_build runs on another thread during its DFS.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/engine/dom.h"

struct g {
	uint32_t n, m;
	uint32_t *from, *to;		/* edge list */
	uint32_t *s_start, *s;		/* successors CSR */
	uint32_t *p_start, *p;		/* predecessors CSR */
	int split;			/* present lists as two slices */
	int prune;			/* leave out predecessors as dom.h allows */
	int late;			/* the predecessors CSR made by prepare */
	_Atomic int prepared;		/* prepare has run (late) */
	uint32_t root;
};

#define XORSHIFT_SEED 88172645463325252ULL
#include "xorshift.h"

static void csr(uint32_t n, uint32_t m, const uint32_t *a, const uint32_t *b,
		uint32_t **start, uint32_t **adj)
{
	*start = calloc(n + 1, sizeof **start);
	*adj = malloc((m + 1) * sizeof **adj);
	for (uint32_t e = 0; e < m; e++)
		(*start)[a[e] + 1]++;
	for (uint32_t v = 0; v < n; v++)
		(*start)[v + 1] += (*start)[v];
	uint32_t *fill = malloc((n + 1) * sizeof *fill);
	memcpy(fill, *start, (n + 1) * sizeof *fill);
	for (uint32_t e = 0; e < m; e++)
		(*adj)[fill[a[e]]++] = b[e];
	free(fill);
}

static void slices(const struct g *g, const uint32_t *start, const uint32_t *adj,
		   uint32_t v, struct dom_slices *s)
{
	uint32_t lo = start[v], cnt = start[v + 1] - lo;
	if (g->split && cnt > 1) {
		uint32_t half = cnt / 2;
		s->a[0] = adj + lo;
		s->n[0] = half;
		s->a[1] = adj + lo + half;
		s->n[1] = cnt - half;
		s->count = 2;
	} else {
		s->a[0] = adj + lo;
		s->n[0] = cnt;
		s->count = 1;
	}
}

static void succs(void *ctx, uint32_t v, struct dom_slices *s)
{
	struct g *g = ctx;
	slices(g, g->s_start, g->s, v, s);
}

/* prepare: the predecessors CSR, on dom_build's second thread (g->late). */
static void prepare(void *ctx)
{
	struct g *g = ctx;
	csr(g->n, g->m, g->to, g->from, &g->p_start, &g->p);
	g->prepared = 1;
}

static void preds(void *ctx, uint32_t v, struct dom_slices *s)
{
	struct g *g = ctx;
	if (g->late && !g->prepared)
		fail_msg("preds of %u before prepare had finished", v);
	slices(g, g->p_start, g->p, v, s);
	if (!g->prune)
		return;
	uint32_t cnt = g->p_start[v + 1] - g->p_start[v];
	for (uint32_t e = g->p_start[v]; e < g->p_start[v + 1]; e++)
		if (g->p[e] == g->root) {	/* the root alone */
			s->a[0] = &g->root;
			s->n[0] = 1;
			s->count = 1;
			return;
		}
	if (cnt == 1)
		s->count = 0;	/* the one predecessor: the DFS parent */
}

/* free_graph: the edge list and both CSRs. */
static void free_graph(struct g *g)
{
	free(g->from);
	free(g->to);
	free(g->s_start);
	free(g->s);
	free(g->p_start);
	free(g->p);
}

/* reach: nodes reachable from root without passing cut (cut = n: none). */
static void reach(const struct g *g, uint32_t root, uint32_t cut, uint8_t *seen)
{
	uint32_t *stack = malloc((g->n + 1) * sizeof *stack), sp = 0;
	memset(seen, 0, g->n);
	if (root == cut)
		goto done;
	seen[root] = 1;
	stack[sp++] = root;
	while (sp) {
		uint32_t v = stack[--sp];
		for (uint32_t e = g->s_start[v]; e < g->s_start[v + 1]; e++) {
			uint32_t w = g->s[e];
			if (w != cut && !seen[w]) {
				seen[w] = 1;
				stack[sp++] = w;
			}
		}
	}
done:
	free(stack);
}

/*
 * same_with_csr: dom_build reading the successors as arrays (dom_csr)
 * gives what it gave through succs: the CSR as it is, and with each node's
 * first successor moved to its extra one (cls the identity), so both parts
 * of the arrays' walk are taken.
 */
static void same_with_csr(struct g *g, uint32_t root, const uint32_t *idom,
			  const uint32_t *order, uint32_t nreach)
{
	uint32_t n = g->n, *start2 = calloc(n + 1, sizeof *start2);
	uint32_t *adj2 = malloc((g->m + 1) * sizeof *adj2), *cls = malloc(n * sizeof *cls);
	uint32_t *extra = malloc(n * sizeof *extra), m2 = 0;
	for (uint32_t v = 0; v < n; v++) {
		uint32_t lo = g->s_start[v], hi = g->s_start[v + 1];
		cls[v] = v;
		extra[v] = lo < hi ? g->s[lo] : DOM_NONE;
		start2[v] = m2;
		for (uint32_t e = lo + (lo < hi); e < hi; e++)
			adj2[m2++] = g->s[e];
	}
	start2[n] = m2;
	const uint32_t *rs = g->s + g->s_start[root];
	uint32_t nrs = g->s_start[root + 1] - g->s_start[root];
	struct dom_csr plain = {g->s_start, g->s, NULL, NULL, rs, nrs};
	struct dom_csr moved = {start2, adj2, cls, extra, rs, nrs};
	const struct dom_csr *way[2] = {&plain, &moved};
	uint32_t *idom2 = malloc(n * sizeof *idom2), *order2 = malloc(n * sizeof *order2), nr2;
	for (int k = 0; k < 2; k++) {
		struct dom_graph dg = {n, root, g, succs, preds, NULL, way[k]};
		assert_int_equal(dom_build(&dg, idom2, order2, &nr2), HS_OK);
		assert_int_equal(nr2, nreach);
		assert_memory_equal(idom2, idom, n * sizeof *idom);
		assert_memory_equal(order2, order, nreach * sizeof *order);
	}
	free(idom2);
	free(order2);
	free(start2);
	free(adj2);
	free(cls);
	free(extra);
}

static void check_graph(struct g *g, uint32_t root)
{
	uint32_t n = g->n;
	csr(n, g->m, g->from, g->to, &g->s_start, &g->s);
	if (!g->late)
		csr(n, g->m, g->to, g->from, &g->p_start, &g->p);
	uint32_t *idom = malloc(n * sizeof *idom), *order = malloc(n * sizeof *order), nreach;
	struct dom_graph dg = {n, root, g, succs, preds, g->late ? prepare : NULL, NULL};
	assert_int_equal(dom_build(&dg, idom, order, &nreach), HS_OK);
	assert_int_equal(g->prepared, g->late);
	same_with_csr(g, root, idom, order, nreach);

	/* dom[v][w]: v dominates w (brute force). */
	uint8_t *base = malloc(n), *seen = malloc(n);
	uint8_t *dom = calloc((size_t)n * n, 1);
	reach(g, root, n, base);
	for (uint32_t v = 0; v < n; v++) {
		reach(g, root, v, seen);
		for (uint32_t w = 0; w < n; w++)
			dom[(size_t)v * n + w] = base[w] && !seen[w];
	}
	uint32_t count = 0;
	for (uint32_t w = 0; w < n; w++) {
		count += base[w];
		if (!base[w]) {
			assert_int_equal(idom[w], DOM_NONE);
			continue;
		}
		if (w == root) {
			assert_int_equal(idom[w], root);
			continue;
		}
		/* The immediate dominator: the strict dominator every other one dominates. */
		uint32_t want = DOM_NONE;
		for (uint32_t d = 0; d < n; d++) {
			if (d == w || !dom[(size_t)d * n + w])
				continue;
			uint32_t ok = 1;
			for (uint32_t e = 0; e < n && ok; e++)
				if (e != w && e != d && dom[(size_t)e * n + w] && !dom[(size_t)e * n + d])
					ok = 0;
			if (ok)
				want = d;
		}
		assert_int_equal(idom[w], want);
	}
	assert_int_equal(nreach, count);
	/* order: preorder, every node after its immediate dominator */
	uint32_t *pos = malloc(n * sizeof *pos);
	for (uint32_t k = 0; k < nreach; k++)
		pos[order[k]] = k;
	assert_int_equal(order[0], root);
	for (uint32_t k = 1; k < nreach; k++)
		assert_true(pos[idom[order[k]]] < k);
	free(pos);
	free(base);
	free(seen);
	free(dom);
	free(idom);
	free(order);
}

static void add(struct g *g, uint32_t a, uint32_t b, uint32_t cap)
{
	if (g->m < cap) {
		g->from[g->m] = a;
		g->to[g->m++] = b;
	}
}

/* empty_graph: n nodes, room for cap edges; split: lists as two slices. */
static struct g empty_graph(uint32_t n, uint32_t cap, int split)
{
	struct g g;
	memset(&g, 0, sizeof g);
	g.n = n;
	g.from = malloc(cap * sizeof *g.from);
	g.to = malloc(cap * sizeof *g.to);
	g.split = split;
	return g;
}

static void random_graphs(void **state)
{
	(void)state;
	for (int iter = 0; iter < 3000; iter++) {
		uint32_t n = 1 + rnd(48), cap = n * 6 + 64;
		struct g g = empty_graph(n, cap, iter & 1);
		int shape = iter % 4;
		if (shape == 0 || shape == 3)	/* a long chain through many nodes */
			for (uint32_t v = 0; v + 1 < g.n; v++)
				add(&g, v, v + 1, cap);
		uint32_t extra = rnd(g.n * (shape == 2 ? 4 : 2) + 1);
		for (uint32_t e = 0; e < extra; e++) {
			uint32_t a = rnd(g.n), b = rnd(g.n);
			if (shape == 1 && b < a && rnd(4))	/* mostly forward: DAG-like */
				continue;
			add(&g, a, b, cap);	/* self loops and back edges included */
		}
		if (shape == 3 && g.n > 2)	/* close the chain into one big cycle */
			add(&g, g.n - 1, 0, cap);
		uint32_t root = iter % 5 == 0 ? rnd(g.n) : 0;
		g.prune = (iter >> 1) & 1;
		g.late = (iter >> 2) & 1;
		g.root = root;
		check_graph(&g, root);
		free_graph(&g);
	}
}

/* What the build reported through hs_progress (issue 16: progress on long work). */
static struct {
	int calls, numbering, dominators;
	uint64_t last_done, last_total;
	bool backwards, over;
} seen;

static void record_progress(void *ud, const char *what, uint64_t done, uint64_t total)
{
	(void)ud;
	bool numbering = !strcmp(what, "numbering the objects");
	bool dominators = !strcmp(what, "finding the dominators");
	if ((numbering && seen.dominators) ||
	    ((numbering || dominators) && seen.calls && done < seen.last_done &&
	     (numbering ? seen.numbering : seen.dominators)))
		seen.backwards = true;	/* phases in order, each forwards */
	seen.over |= done > total;
	seen.numbering += numbering;
	seen.dominators += dominators;
	seen.calls++;
	seen.last_done = done;
	seen.last_total = total;
}

/*
 * A linked list of 2.2 million nodes: no recursion, no quadratic climb;
 * and the build says how far it is (every 2^20 nodes of each phase).
 */
static void long_chain(void **state)
{
	(void)state;
	struct g g;
	memset(&g, 0, sizeof g);
	g.n = 2200000;
	g.from = malloc(g.n * sizeof *g.from);
	g.to = malloc(g.n * sizeof *g.to);
	for (uint32_t v = 0; v + 1 < g.n; v++) {
		g.from[g.m] = v;
		g.to[g.m++] = v + 1;
	}
	g.from[g.m] = g.n - 1;	/* and back to the start */
	g.to[g.m++] = 0;
	csr(g.n, g.m, g.from, g.to, &g.s_start, &g.s);
	csr(g.n, g.m, g.to, g.from, &g.p_start, &g.p);
	uint32_t *idom = malloc(g.n * sizeof *idom);
	struct dom_graph dg = {g.n, 0, &g, succs, preds, NULL, NULL};
	struct hs_ctx ctx = {.progress = record_progress};
	struct hs_ctx *prev = hs_ctx_enter(&ctx);
	assert_int_equal(dom_build(&dg, idom, NULL, NULL), HS_OK);
	hs_ctx_enter(prev);
	for (uint32_t v = 1; v < g.n; v++)
		assert_int_equal(idom[v], v - 1);
	assert_int_equal(seen.numbering, 2);	/* at 2^20 and 2^21 nodes numbered */
	assert_true(seen.dominators >= 2);
	assert_false(seen.backwards);
	assert_false(seen.over);
	assert_int_equal(seen.last_total, g.n);
	free(idom);
	free_graph(&g);
}

/*
 * The reference for graphs too big for brute force: Cooper, Harvey and
 * Kennedy, "A Simple, Fast Dominance Algorithm" (2001), which iterates the
 * immediate dominators over a reverse postorder until none changes.
 */
static uint32_t meet(const uint32_t *idom, const uint32_t *po, uint32_t a, uint32_t b)
{
	while (a != b) {
		while (po[a] < po[b])
			a = idom[a];
		while (po[b] < po[a])
			b = idom[b];
	}
	return a;
}

static void iterative_idom(const struct g *g, uint32_t root, uint32_t *idom)
{
	uint32_t n = g->n, *p_start, *p;
	csr(n, g->m, g->to, g->from, &p_start, &p);
	uint32_t *po = malloc(n * sizeof *po), *rpo = malloc(n * sizeof *rpo), nrpo = 0;
	uint32_t *stack = malloc((g->m + 2) * sizeof *stack), *next = calloc(n, sizeof *next);
	uint8_t *visited = calloc(n, 1);
	uint32_t sp = 0, count = 0;
	stack[sp++] = root;
	visited[root] = 1;
	while (sp) {	/* postorder numbers by an iterative DFS */
		uint32_t v = stack[sp - 1];
		if (g->s_start[v] + next[v] < g->s_start[v + 1]) {
			uint32_t w = g->s[g->s_start[v] + next[v]++];
			if (!visited[w]) {
				visited[w] = 1;
				stack[sp++] = w;
			}
			continue;
		}
		po[v] = count++;
		rpo[nrpo++] = v;
		sp--;
	}
	for (uint32_t v = 0; v < n; v++)
		idom[v] = DOM_NONE;
	idom[root] = root;
	for (bool changed = true; changed;) {
		changed = false;
		for (uint32_t k = nrpo; k-- > 0;) {	/* reverse postorder */
			uint32_t v = rpo[k], d = DOM_NONE;
			if (v == root)
				continue;
			for (uint32_t e = p_start[v]; e < p_start[v + 1]; e++) {
				uint32_t u = p[e];
				if (idom[u] == DOM_NONE)
					continue;
				d = d == DOM_NONE ? u : meet(idom, po, u, d);
			}
			if (d != idom[v]) {
				idom[v] = d;
				changed = true;
			}
		}
	}
	free(p_start);
	free(p);
	free(po);
	free(rpo);
	free(stack);
	free(next);
	free(visited);
}

/*
 * Graphs of tens of thousands of nodes (one of 150,000) with hubs that many
 * nodes point to (as to a class object), against the iterative reference.
 */
static void large_graphs(void **state)
{
	(void)state;
	for (int iter = 0; iter < 6; iter++) {
		/* the last past dom_build's two-thread cut (100,000 nodes) */
		uint32_t n = iter == 5 ? 150000 : 20000 + rnd(40000), cap = n * 8 + 64;
		struct g g = empty_graph(n, cap, iter & 1);
		g.prune = iter >= 2;
		for (uint32_t v = 1; v < g.n; v++)	/* a random tree: everything reachable */
			add(&g, rnd(v), v, cap);
		uint32_t hubs = 1 + rnd(8);
		for (uint32_t v = 0; v < g.n; v++) {
			if (rnd(3) == 0)
				add(&g, v, rnd(hubs), cap);	/* many referrers of a few */
			for (uint32_t e = rnd(5); e-- > 0;)
				add(&g, v, rnd(g.n), cap);	/* cross, forward and back edges */
		}
		csr(g.n, g.m, g.from, g.to, &g.s_start, &g.s);
		csr(g.n, g.m, g.to, g.from, &g.p_start, &g.p);
		uint32_t *idom = malloc(g.n * sizeof *idom), *want = malloc(g.n * sizeof *want);
		struct dom_graph dg = {g.n, 0, &g, succs, preds, NULL, NULL};
		assert_int_equal(dom_build(&dg, idom, NULL, NULL), HS_OK);
		iterative_idom(&g, 0, want);
		for (uint32_t v = 0; v < g.n; v++)
			if (idom[v] != want[v])
				fail_msg("graph %d, node %u: idom %u, want %u", iter, v, idom[v], want[v]);
		free(idom);
		free(want);
		free_graph(&g);
	}
}

/*
 * A root with 300,000 successors, each also linked to the next: the DFS's
 * stack of waiting nodes grows far past its first 4,096 entries (the root
 * pushes all of them), and all but the first are reached from their
 * neighbour first, so most entries come off already visited.
 */
static void wide_root(void **state)
{
	(void)state;
	uint32_t n = 300001, cap = 2 * n;
	struct g g = empty_graph(n, cap, 0);
	for (uint32_t v = 1; v < n; v++)
		add(&g, 0, v, cap);
	for (uint32_t v = 1; v + 1 < n; v++)
		add(&g, v, v + 1, cap);
	csr(g.n, g.m, g.from, g.to, &g.s_start, &g.s);
	csr(g.n, g.m, g.to, g.from, &g.p_start, &g.p);
	uint32_t *idom = malloc(g.n * sizeof *idom), *order = malloc(g.n * sizeof *order), nreach;
	struct dom_csr arrays = {g.s_start, g.s, NULL, NULL, g.s + g.s_start[0],
				 g.s_start[1] - g.s_start[0]};
	for (int way = 0; way < 2; way++) {	/* through succs, then the arrays */
		struct dom_graph dg = {g.n, 0, &g, succs, preds, NULL, way ? &arrays : NULL};
		assert_int_equal(dom_build(&dg, idom, order, &nreach), HS_OK);
		assert_int_equal(nreach, n);
		for (uint32_t v = 0; v < n; v++) {
			assert_int_equal(idom[v], 0);	/* the root links to each */
			assert_int_equal(order[v], v);	/* 1, then 2 through 1's link, ... */
		}
	}
	free(idom);
	free(order);
	free_graph(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(random_graphs),
		cmocka_unit_test(long_chain),
		cmocka_unit_test(large_graphs),
		cmocka_unit_test(wide_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
