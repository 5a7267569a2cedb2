/* dom.c - Semi-NCA dominators; see dom.h. */
#include "dom.h"

#include "../base/big.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Successor k of v across the slices, or DOM_NONE past the end. */
static inline uint32_t nth(const struct dom_slices *s, uint32_t k)
{
	for (int i = 0; i < s->count; i++) {
		if (k < s->n[i])
			return s->a[i][k];
		k -= s->n[i];
	}
	return DOM_NONE;
}

/*
 * next_succ: v's first successor from its cursor on that the DFS has not
 * numbered, its cursor moved past it; DOM_NONE when none is left. The
 * cursor starts at 0. With g->csr, an object's cursor is 0 before its
 * extra successor was tried, else 1 + the index in adj to look at next;
 * the root's is the index in root_succ.
 */
static inline uint32_t next_succ(const struct dom_graph *g, const uint32_t *num, uint32_t v,
				 uint32_t *cursor)
{
	const struct dom_csr *c = g->csr;
	uint32_t k = *cursor, w;
	if (!c) {
		struct dom_slices s;
		s.count = 0;
		g->succs(g->ctx, v, &s);
		while ((w = nth(&s, k)) != DOM_NONE && num[w])
			k++;
		*cursor = k + 1;
		return w;
	}
	if (v == g->root) {
		while (k < c->nroot_succ && num[c->root_succ[k]])
			k++;
		*cursor = k + 1;
		return k < c->nroot_succ ? c->root_succ[k] : DOM_NONE;
	}
	if (k == 0) {
		k = c->start[v] + 1;
		w = c->cls ? c->extra[c->cls[v]] : DOM_NONE;
		if (w != DOM_NONE && !num[w]) {
			*cursor = k;
			return w;
		}
	}
	uint32_t end = c->start[v + 1];
	for (k--; k < end; k++)
		if (!num[c->adj[k]]) {
			*cursor = k + 2;
			return c->adj[k];
		}
	return DOM_NONE;
}

/* Nodes [from, to) of dom_build's last step: DFS numbers to dominators. */
struct to_nodes {
	uint32_t *idom;
	const uint32_t *vert, *parent;
	uint32_t from, to;
};

static void *to_nodes_work(void *arg)
{
	struct to_nodes *w = arg;
	for (uint32_t v = w->from; v < w->to; v++) {
		uint32_t k = w->idom[v];
		w->idom[v] = !k ? DOM_NONE : k == 1 ? v : w->vert[w->parent[k] - 1];
	}
	return NULL;
}

static void *prepare_work(void *arg)
{
	const struct dom_graph *g = arg;
	g->prepare(g->ctx);
	return NULL;
}

/* One node of the link-eval forest: its parent there (0 at a root) and the
 * least semidominator number on its path, as compressed so far. */
struct link {
	uint32_t anc, min;
};

int dom_build(const struct dom_graph *g, uint32_t *idom, uint32_t *order, uint32_t *nreach)
{
	uint32_t n = g->n;
	/*
	 * Arrays in DFS-number space (numbers start at 1; 0 = unvisited):
	 * num[v] object -> number, vert[k] number -> node, parent[k] becomes
	 * idom[k]; semi and the link-eval forest follow LT. During the DFS,
	 * dfs holds the explicit stack and semi each stack entry's edge cursor.
	 */
	/* num lives in idom, which is free until the end (converted in place) */
	uint32_t *num = idom;
	memset(num, 0, (size_t)n * sizeof *num);
	uint32_t *vert_mem = order ? NULL : big_alloc((size_t)n + 1, sizeof *vert_mem);
	uint32_t *vert = order ? order : vert_mem;	/* vert[k - 1]: node numbered k */
	uint32_t *parent = big_alloc((size_t)n + 2, sizeof *parent);
	uint32_t *semi = big_alloc((size_t)n + 2, sizeof *semi);
	uint32_t *dfs = big_alloc((size_t)n + 2, sizeof *dfs);
	/* These are written and read in order (numbers, a stack): when the
	 * forest needs memory they give it up first (big_settle). num and the
	 * forest are written all over and keep theirs. */
	big_settle(vert);
	big_settle(parent);
	big_settle(semi);
	big_settle(dfs);
	struct link *forest = NULL;
	uint32_t *stack = NULL;
	int st = HS_OK;
	struct dom_slices s;
	/* The predecessors are made on another thread during the DFS, which
	 * reads only successors (the two cores of a laptop both busy). */
	pthread_t prep;
	bool preparing = g->prepare && pthread_create(&prep, NULL, prepare_work,
						      (void *)g) == 0;

	/* Iterative DFS: preorder numbers and DFS-tree parents. */
	uint32_t count = 0, sp = 0;
	num[g->root] = ++count;
	vert[count - 1] = g->root;
	parent[count] = 0;
	dfs[sp] = g->root;
	semi[sp++] = 0;
	while (sp) {
		uint32_t v = dfs[sp - 1];
		uint32_t w = next_succ(g, num, v, &semi[sp - 1]);
		if (w == DOM_NONE) {
			sp--;
			continue;
		}
		num[w] = ++count;
		vert[count - 1] = w;
		parent[count] = num[v];
		dfs[sp] = w;
		semi[sp++] = 0;
		if ((count & 0xfffff) == 0) {
			hs_progress("numbering the objects", count, n);
			if (hs_interrupted) {
				st = HS_INTERRUPTED;
				goto done;
			}
		}
	}

	big_free(dfs);
	dfs = NULL;
	if (preparing) {
		pthread_join(prep, NULL);
		preparing = false;
	} else if (g->prepare) {
		g->prepare(g->ctx);
	}
	/*
	 * Semidominators, in reverse preorder, with path compression. The
	 * link-eval forest keeps, per number, its forest parent and the least
	 * semidominator on its compressed path (SNCA needs only that value of
	 * LT's label, never the label itself) side by side: one cache line
	 * per step of the compression instead of three.
	 */
	forest = big_alloc((size_t)count + 2, sizeof *forest);
	for (uint32_t k = 1; k <= count; k++) {
		forest[k].anc = 0;
		forest[k].min = k;
	}
	uint32_t stack_cap = 1024;
	stack = xmallocarray(stack_cap, sizeof *stack);
	for (uint32_t k = count; k >= 2; k--) {
		/*
		 * The DFS parent is a predecessor numbered below k, so semi[k]
		 * starts there; 1 (the root) is the least there is, so the scan
		 * stops when a predecessor or an eval gives 1. In a heap most
		 * objects with several referrers get there early: big1's build
		 * reads 2.3 M of its 10.7 M predecessors.
		 */
		uint32_t best = parent[k];
		s.count = 0;
		if (best > 1)
			g->preds(g->ctx, vert[k - 1], &s);
		for (int i = 0; i < s.count && best > 1; i++)
			for (uint32_t e = 0; e < s.n[i] && best > 1; e++) {
				uint32_t u = num[s.a[i][e]];
				if (!u)
					continue;	/* unreachable predecessor */
				uint32_t val;
				if (u <= k) {
					val = u;
				} else {
					/* eval(u): compress the path to the forest root. */
					uint32_t top = 0, x = u;
					while (forest[forest[x].anc].anc) {
						if (top == stack_cap) {
							stack_cap *= 2;
							stack = xreallocarray(stack, stack_cap,
									      sizeof *stack);
						}
						stack[top++] = x;
						x = forest[x].anc;
					}
					while (top) {
						struct link *y = &forest[stack[--top]];
						const struct link *a = &forest[y->anc];
						if (a->min < y->min)
							y->min = a->min;
						y->anc = a->anc;
					}
					/* u > k was linked, so eval(u) is its path's least. */
					val = forest[u].min;
				}
				if (val < best)
					best = val;
			}
		semi[k] = best;
		forest[k].min = best;
		forest[k].anc = parent[k];	/* link(parent, k) */
		if ((k & 0xfffff) == 0)
			hs_progress("finding the dominators", count - k, count);
		if ((k & 0xfffff) == 0 && hs_interrupted) {
			st = HS_INTERRUPTED;
			goto done;
		}
	}

	/* NCA: climb from the DFS parent to the first ancestor <= semi. */
	for (uint32_t k = 2; k <= count; k++) {
		uint32_t d = parent[k];
		while (d > semi[k])
			d = parent[d];
		parent[k] = d;
	}

	/* idom still holds DFS numbers: turn each into the dominator's node,
	 * each half of the nodes on a thread */
	struct to_nodes half[2] = {{idom, vert, parent, 0, n / 2}, {idom, vert, parent, n / 2, n}};
	pthread_t th;
	bool two = n > 100000 && pthread_create(&th, NULL, to_nodes_work, &half[1]) == 0;
	to_nodes_work(&half[0]);
	if (two)
		pthread_join(th, NULL);
	else
		to_nodes_work(&half[1]);
	if (nreach)
		*nreach = count;
done:
	if (preparing)
		pthread_join(prep, NULL);
	big_free(stack);
	big_free(vert_mem);
	big_free(parent);
	big_free(semi);
	big_free(dfs);
	big_free(forest);
	return st;
}
