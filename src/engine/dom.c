/* dom.c - Semi-NCA dominators; see dom.h. */
#include "dom.h"

#include "../base/big.h"

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

/* One node of the link-eval forest: its parent there (0 at a root) and the
 * least semidominator number on its path, as compressed so far. */
struct link {
	uint32_t anc, min;
};

int dom_build(const struct dom_graph *g, uint32_t *idom, uint32_t *order, uint32_t *nreach)
{
	uint32_t n = g->n;
	if (g->max_cross >= UINT32_MAX)
		return HS_ERR;	/* edge offsets are 32-bit (dom.h) */
	/*
	 * Arrays in DFS-number space (numbers start at 1; 0 = unvisited):
	 * num[v] object -> number, vert[k] number -> node, parent[k] becomes
	 * idom[k]; semi and the link-eval forest follow LT. During the DFS,
	 * dfs holds the explicit stack and cursor each stack entry's edge
	 * cursor, and cross the edges outside the DFS tree as they are met.
	 */
	/* num lives in idom, which is free until the end (converted in place) */
	uint32_t *num = idom;
	memset(num, 0, (size_t)n * sizeof *num);
	uint32_t *vert_mem = order ? NULL : big_alloc((size_t)n + 1, sizeof *vert_mem);
	uint32_t *vert = order ? order : vert_mem;	/* vert[k - 1]: node numbered k */
	uint32_t *parent = big_alloc((size_t)n + 2, sizeof *parent);
	uint32_t *cursor = big_alloc((size_t)n + 2, sizeof *cursor);
	uint32_t *dfs = big_alloc((size_t)n + 2, sizeof *dfs);
	/* cross[e]: target number << 32 | source number */
	uint64_t *cross = big_alloc(g->max_cross + 1, sizeof *cross);
	/* These are written and read in order (numbers, a stack, the edges
	 * met): when the forest needs memory they give it up first
	 * (big_settle). num and the forest are written all over and keep
	 * theirs. */
	big_settle(vert);
	big_settle(parent);
	big_settle(cursor);
	big_settle(dfs);
	big_settle(cross);
	uint32_t *semi = NULL, *start = NULL, *head = NULL, *pred = NULL, *stack = NULL;
	struct link *forest = NULL;
	int st = HS_OK;
	struct dom_slices s;

	/* Iterative DFS: preorder numbers, DFS-tree parents, the other edges. */
	uint32_t count = 0, sp = 0;
	uint64_t ncross = 0;
	num[g->root] = ++count;
	vert[count - 1] = g->root;
	parent[count] = 0;
	dfs[sp] = g->root;
	cursor[sp++] = 0;
	while (sp) {
		uint32_t v = dfs[sp - 1], nv = num[v];
		s.count = 0;
		g->succs(g->ctx, v, &s);
		uint32_t k = cursor[sp - 1], w = DOM_NONE;
		for (; (w = nth(&s, k)) != DOM_NONE && num[w]; k++) {
			if (ncross == g->max_cross) {
				st = HS_ERR;	/* the caller's bound is wrong */
				goto done;
			}
			cross[ncross++] = (uint64_t)num[w] << 32 | nv;
		}
		if (w == DOM_NONE) {
			sp--;
			continue;
		}
		cursor[sp - 1] = k + 1;
		num[w] = ++count;
		vert[count - 1] = w;
		parent[count] = nv;
		dfs[sp] = w;
		cursor[sp++] = 0;
		if ((count & 0xfffff) == 0) {
			hs_progress("numbering the objects", count, n);
			if (hs_interrupted) {
				st = HS_INTERRUPTED;
				goto done;
			}
		}
	}
	big_free(cursor);
	cursor = NULL;
	big_free(dfs);
	dfs = NULL;
	cross = big_realloc(cross, ncross + 1, sizeof *cross);	/* shrinks in place */

	/*
	 * Every node's predecessors other than its DFS parent, as numbers
	 * grouped by the node's number: pred[start[k] .. start[k + 1]). The
	 * semidominator pass then reads them in order, with no lookup of a
	 * node's referrers or of their numbers. The edges are sorted by target
	 * in place (a counting sort that moves each edge along its cycle to its
	 * group, as American flag sort does), and their sources packed into
	 * the first half of the same memory: no second array of edges.
	 * start and head are counted into all over, so they are new arrays,
	 * not the stack's settled ones.
	 */
	start = big_alloc((size_t)count + 2, sizeof *start);
	head = big_alloc((size_t)count + 2, sizeof *head);
	for (uint64_t e = 0; e < ncross; e++)
		start[cross[e] >> 32]++;
	uint32_t sum = 0;
	for (uint32_t k = 0; k <= count + 1; k++) {	/* start[k]: where k's group begins */
		uint32_t c = start[k];
		start[k] = head[k] = sum;
		sum += c;
	}
	/*
	 * First by blocks of targets, at most 4,096 of them, so that the
	 * second step's cycles stay within one block's edges (in cache), not
	 * all over the array: sorted in one step, the edges were a chain of
	 * cache misses each.
	 */
	int shift = 0;
	while ((count >> shift) >= 4096)
		shift++;
	uint32_t nblocks = (count >> shift) + 1;
	uint32_t *bhead = xmallocarray(nblocks, sizeof *bhead);
	uint32_t *bend = xmallocarray(nblocks, sizeof *bend);
	for (uint32_t b = 0; b < nblocks; b++) {
		uint64_t lo = (uint64_t)b << shift, hi = (uint64_t)(b + 1) << shift;
		bhead[b] = start[lo < count + 1 ? lo : count + 1];
		bend[b] = start[hi < count + 1 ? hi : count + 1];
	}
	for (uint32_t b = 0; b < nblocks; b++) {
		while (bhead[b] < bend[b]) {
			uint64_t x = cross[bhead[b]];
			uint32_t c = (uint32_t)(x >> 32) >> shift;
			while (c != b) {
				uint64_t y = cross[bhead[c]];
				cross[bhead[c]++] = x;
				x = y;
				c = (uint32_t)(x >> 32) >> shift;
			}
			cross[bhead[b]++] = x;
		}
	}
	free(bhead);
	free(bend);
	/*
	 * Then each block by target, and its sources packed at once, while
	 * its edges are in cache: edge e's source takes the 4 bytes at 4e,
	 * below the 8 of every edge not yet packed (this block's later ones,
	 * the later blocks').
	 */
	for (uint32_t b = 0; b < nblocks; b++) {
		uint64_t lo = (uint64_t)b << shift, hi = (uint64_t)(b + 1) << shift;
		uint32_t klo = lo > 1 ? (uint32_t)lo : 1;
		uint32_t khi = hi < (uint64_t)count + 1 ? (uint32_t)hi : count + 1;
		for (uint32_t k = klo; k < khi; k++) {
			/* head[k]: the first edge of k's group not yet known to be k's */
			while (head[k] < start[k + 1]) {
				uint64_t x = cross[head[k]];
				uint32_t t = (uint32_t)(x >> 32);
				while (t != k) {	/* carry x to its group, taking what was there */
					uint64_t y = cross[head[t]];
					cross[head[t]++] = x;
					x = y;
					t = (uint32_t)(x >> 32);
				}
				cross[head[k]++] = x;
			}
		}
		for (uint32_t e = start[klo]; e < start[khi]; e++) {
			uint32_t u = (uint32_t)cross[e];
			memcpy((char *)cross + 4 * (uint64_t)e, &u, sizeof u);
		}
	}
	big_free(head);
	head = NULL;
	pred = big_realloc(cross, ncross + 1, sizeof *pred);	/* shrinks in place */
	cross = NULL;
	big_settle(pred);	/* both read in order from now on */
	big_settle(start);

	/*
	 * Semidominators, in reverse preorder, with path compression. The
	 * link-eval forest keeps, per number, its forest parent and the least
	 * semidominator on its compressed path (SNCA needs only that value of
	 * LT's label, never the label itself) side by side: one cache line
	 * per step of the compression instead of three.
	 */
	semi = big_alloc((size_t)count + 2, sizeof *semi);
	forest = big_alloc((size_t)count + 2, sizeof *forest);
	for (uint32_t k = 1; k <= count; k++) {
		forest[k].anc = 0;
		forest[k].min = k;
	}
	uint32_t stack_cap = 1024;
	stack = xmallocarray(stack_cap, sizeof *stack);
	for (uint32_t k = count; k >= 2; k--) {
		uint32_t best = parent[k];	/* the DFS parent is a predecessor */
		for (uint32_t e = start[k]; e < start[k + 1]; e++) {
			uint32_t u = pred[e], val;
			if (u <= k) {
				val = u;
			} else {
				/* eval(u): compress the path to the forest root. */
				uint32_t top = 0, x = u;
				while (forest[forest[x].anc].anc) {
					if (top == stack_cap) {
						stack_cap *= 2;
						stack = xreallocarray(stack, stack_cap, sizeof *stack);
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

	/* idom still holds DFS numbers: turn each into the dominator's node */
	for (uint32_t v = 0; v < n; v++) {
		uint32_t k = idom[v];
		idom[v] = !k ? DOM_NONE : k == 1 ? v : vert[parent[k] - 1];
	}
	if (nreach)
		*nreach = count;
done:
	big_free(stack);
	big_free(vert_mem);
	big_free(parent);
	big_free(cursor);
	big_free(dfs);
	big_free(cross);
	big_free(start);
	big_free(head);
	big_free(pred);
	big_free(semi);
	big_free(forest);
	return st;
}
