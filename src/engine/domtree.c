/* domtree.c - dominator tree, retained sizes and set retention; see domtree.h. */
#include "domtree.h"

#include <stdlib.h>
#include <string.h>

static struct dom_tree *new_tree(const struct heap *h, bool no_weak)
{
	struct dom_tree *t = xcalloc(1, sizeof *t);
	t->h = h;
	hg_init(&t->g, h, no_weak, true);
	return t;
}

int dom_tree_build(struct heap *h, bool no_weak, bool spill, struct dom_tree **out)
{
	*out = NULL;
	struct dom_tree *t = new_tree(h, no_weak);
	uint32_t n = h->n;
	/* Arrays over 4 GiB have no 32-bit size; their sizes are read now, while
	 * the records are at hand (they are rare). */
	uint32_t nbig = 0, *big = NULL;
	uint64_t *bigsize = NULL;
	for (uint32_t v = 0; v < n; v++)
		if (h->size[v] == UINT32_MAX) {
			big = xreallocarray(big, nbig + 1, sizeof *big);
			bigsize = xreallocarray(bigsize, nbig + 1, sizeof *bigsize);
			big[nbig] = v;
			bigsize[nbig++] = heap_shallow(h, v);
		}
	t->idom = xmallocarray((size_t)n + 1, sizeof *t->idom);
	uint32_t *order = xmallocarray((size_t)n + 1, sizeof *order);
	uint32_t nreach = 0;
	struct dom_graph dg = hg_dom_graph(&t->g);
	/*
	 * The build and the sums read only references, classes, instance lists
	 * and sizes: ids and record positions can wait on disk meanwhile (not
	 * with no_weak, which reads Reference.referent fields).
	 */
	bool spilled = spill && !no_weak && heap_spill(h);
	int st = dom_build(&dg, t->idom, order, &nreach);
	if (st == HS_OK) {
		/* Bottom-up in reverse preorder: each subtree is done before its root. */
		t->retained = xcalloc((size_t)n + 1, sizeof *t->retained);
		for (uint32_t k = nreach; k-- > 1;) {
			uint32_t v = order[k];
			uint64_t sz = h->size[v];
			if (sz == UINT32_MAX)
				for (uint32_t b = 0; b < nbig; b++)
					if (big[b] == v)
						sz = bigsize[b];
			t->retained[v] += sz;
			t->retained[t->idom[v]] += t->retained[v];
		}
	}
	free(order);
	free(big);
	free(bigsize);
	if (spilled)
		heap_unspill(h);
	if (st != HS_OK) {
		dom_tree_free(t);
		return HS_INTERRUPTED;
	}
	for (uint32_t v = 0; v <= n; v++)
		if (t->idom[v] == DOM_NONE)
			t->idom[v] = HEAP_NONE;
	t->nreach = nreach - 1;
	*out = t;
	return HS_OK;
}

struct dom_tree *dom_tree_adopt(const struct heap *h, bool no_weak, uint32_t *idom,
				uint64_t *retained)
{
	struct dom_tree *t = new_tree(h, no_weak);
	t->idom = idom;
	t->retained = retained;
	for (uint32_t v = 0; v < h->n; v++)
		t->nreach += idom[v] != HEAP_NONE;
	t->from_index = true;
	return t;
}

void dom_tree_free(struct dom_tree *t)
{
	if (!t)
		return;
	hg_free(&t->g);
	free(t->idom);
	free(t->retained);
	free(t->depth);
	free(t);
}

static const struct dom_tree *sort_tree;

static int by_retained(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t rx = sort_tree->retained[x], ry = sort_tree->retained[y];
	if (rx != ry)
		return rx < ry ? 1 : -1;
	return x < y ? -1 : x > y;
}

uint32_t *dom_children(struct dom_tree *t, uint32_t v, uint32_t *count)
{
	/* A scan of idom: a few milliseconds per million objects, no index kept. */
	uint32_t n = t->h->n, k = 0, cap = 64;
	uint32_t *run = xmallocarray(cap, sizeof *run);
	for (uint32_t w = 0; w < n; w++)
		if (t->idom[w] == v) {
			if (k == cap) {
				cap *= 2;
				run = xreallocarray(run, cap, sizeof *run);
			}
			run[k++] = w;
		}
	sort_tree = t;
	qsort(run, k, sizeof *run, by_retained);
	*count = k;
	return run;
}

static void ensure_depth(struct dom_tree *t)
{
	uint32_t n = t->h->n;
	if (t->depth)
		return;
	t->depth = xmallocarray((size_t)n + 1, sizeof *t->depth);
	for (uint32_t v = 0; v <= n; v++)
		t->depth[v] = UINT32_MAX;
	t->depth[n] = 0;
	/* Walk up to a node of known depth, then fill the path on the way back. */
	uint32_t *stack = xmallocarray((size_t)n + 1, sizeof *stack);
	for (uint32_t v = 0; v < n; v++) {
		if (t->depth[v] != UINT32_MAX || t->idom[v] == HEAP_NONE)
			continue;
		uint32_t sp = 0, x = v;
		while (t->depth[x] == UINT32_MAX) {
			stack[sp++] = x;
			x = t->idom[x];
		}
		while (sp) {
			uint32_t y = stack[--sp];
			t->depth[y] = t->depth[t->idom[y]] + 1;
		}
	}
	free(stack);
}

static uint32_t lca(struct dom_tree *t, uint32_t a, uint32_t b)
{
	while (t->depth[a] > t->depth[b])
		a = t->idom[a];
	while (t->depth[b] > t->depth[a])
		b = t->idom[b];
	while (a != b) {
		a = t->idom[a];
		b = t->idom[b];
	}
	return a;
}

int dom_retained_set(struct dom_tree *t, const uint32_t *objs, uint32_t n, uint64_t *bytes)
{
	const struct heap *h = t->h;
	*bytes = 0;
	ensure_depth(t);
	uint32_t top = HEAP_NONE;
	for (uint32_t k = 0; k < n; k++) {
		if (t->idom[objs[k]] == HEAP_NONE)
			continue;
		top = top == HEAP_NONE ? objs[k] : lca(t, top, objs[k]);
	}
	if (top == HEAP_NONE)
		return HS_OK;
	/* mark: 1 member, 3 under top, 2 reached; 0 elsewhere */
	uint8_t *mark = xcalloc((size_t)h->n + 1, 1);
	for (uint32_t k = 0; k < n; k++)
		mark[objs[k]] = 1;
	if (top != h->n && mark[top]) {
		free(mark);
		*bytes = t->retained[top];
		return HS_OK;
	}
	/*
	 * Everything the members keep alive lies under top, and every path
	 * from a root to it passes top; so it is what top retains minus what
	 * top still reaches, inside its subtree, when the members are gone.
	 */
	/*
	 * Mark top's subtree: walk each object's dominator chain up until it
	 * meets top (inside), the super-root (outside), or a node already
	 * decided, then mark the walked chain the same way.
	 */
	uint32_t *chain = xmallocarray((size_t)h->n + 2, sizeof *chain);
	if (top == h->n) {
		/* under the super-root: everything reachable */
		for (uint32_t v = 0; v < h->n; v++)
			if (!mark[v] && t->idom[v] != HEAP_NONE)
				mark[v] = 3;
		goto search;
	}
	uint8_t *side = xcalloc((size_t)h->n + 1, 1);	/* 0 unknown, 1 in, 2 out */
	side[top] = 1;
	if (top != h->n)
		side[h->n] = 2;
	for (uint32_t v = 0; v < h->n; v++) {
		if (side[v] || t->idom[v] == HEAP_NONE)
			continue;
		uint32_t len = 0, x = v;
		while (!side[x]) {
			chain[len++] = x;
			x = t->idom[x];
		}
		uint8_t s = side[x];
		while (len)
			side[chain[--len]] = s;
	}
	for (uint32_t v = 0; v <= h->n; v++)
		if (side[v] == 1 && !mark[v])
			mark[v] = 3;
	free(side);
search:;
	uint32_t *queue = chain;
	uint32_t qh = 0, qt = 0;
	qh = qt = 0;
	uint64_t still = 0;
	queue[qt++] = top;
	mark[top] = 2;
	struct dom_slices s;
	int st = HS_OK;
	while (qh < qt) {
		uint32_t v = queue[qh++];
		if (v != h->n)
			still += heap_shallow(h, v);
		hg_succs(&t->g, v, &s);
		for (int i = 0; i < s.count; i++)
			for (uint32_t e = 0; e < s.n[i]; e++) {
				uint32_t w = s.a[i][e];
				if (mark[w] == 3) {
					mark[w] = 2;
					queue[qt++] = w;
				}
			}
		if ((qh & 0xfffff) == 0 && hs_interrupted) {
			st = HS_INTERRUPTED;
			break;
		}
	}
	uint64_t under = top == h->n ? t->retained[h->n] : t->retained[top];
	*bytes = under - still;
	free(queue);
	free(mark);
	return st;
}

void dom_tree_shape(struct dom_tree *t, uint32_t *height, uint32_t *width)
{
	uint32_t n = t->h->n, hmax = 0, wmax = 0;
	ensure_depth(t);
	for (uint32_t v = 0; v < n; v++)
		if (t->idom[v] != HEAP_NONE && t->depth[v] > hmax)
			hmax = t->depth[v];
	uint32_t *count = xcalloc((size_t)hmax + 1, sizeof *count);
	for (uint32_t v = 0; v < n; v++)
		if (t->idom[v] != HEAP_NONE && ++count[t->depth[v]] > wmax)
			wmax = count[t->depth[v]];
	free(count);
	*height = hmax;
	*width = wmax;
}
