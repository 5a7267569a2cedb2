/* dom.c - Semi-NCA dominators; see dom.h. */
#include "dom.h"

#include "../base/big.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The DFS's stack: a node to visit and the number of the node whose edge
 * led there, which becomes its DFS parent if it is visited from there. */
static inline uint64_t entry(uint32_t from, uint32_t node)
{
	return (uint64_t)from << 32 | node;
}

/*
 * push_succs: v's (numbered from) unvisited successors onto the stack, in
 * reverse, so that they come off in order: extra first, then adj with
 * csr. *cap grows as needed (big_realloc). With csr, each pushed node's row
 * start is prefetched, and so is the row of the node below the top (it is
 * visited after the top one's subtree).
 */
static uint64_t *push_succs(const struct dom_graph *g, const uint32_t *num, uint32_t v,
			    uint32_t from, uint64_t *stack, size_t *sp, size_t *cap)
{
	const struct dom_csr *c = g->csr;
	struct dom_slices s;
	s.count = 0;
	uint32_t extra = DOM_NONE;
	if (!c) {
		g->succs(g->ctx, v, &s);
	} else if (v == g->root) {
		s.a[0] = c->root_succ;
		s.n[0] = c->nroot_succ;
		s.count = 1;
	} else {
		s.a[0] = c->adj + c->start[v];
		s.n[0] = c->start[v + 1] - c->start[v];
		s.count = 1;
		if (c->cls)
			extra = c->extra[c->cls[v]];
	}
	size_t more = 1;
	for (int i = 0; i < s.count; i++)
		more += s.n[i];
	if (*sp + more > *cap) {
		*cap = *sp + more > 2 * *cap ? *sp + more : 2 * *cap;
		stack = big_realloc(stack, *cap, sizeof *stack);
	}
	uint64_t e = entry(from, 0);
	size_t top = *sp;
	for (int i = s.count; i-- > 0;)
		for (uint32_t k = s.n[i]; k-- > 0;) {
			uint32_t x = s.a[i][k];
			if (!num[x]) {
				stack[top++] = e | x;
				if (c)
					__builtin_prefetch(&c->start[x]);
			}
		}
	if (extra != DOM_NONE && !num[extra])
		stack[top++] = e | extra;
	if (c && top >= 2)
		__builtin_prefetch(&c->adj[c->start[(uint32_t)stack[top - 2]]]);
	*sp = top;
	return stack;
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

/* build: dom_build's work, the predecessors made on thread prep while *preparing. */
static int build(const struct dom_graph *g, uint32_t *idom, uint32_t *order, uint32_t *nreach,
		 struct hs_thread *prep, volatile bool *preparing)
{
	uint32_t n = g->n;
	/*
	 * Arrays in DFS-number space (numbers start at 1; 0 = unvisited):
	 * num[v] object -> number, vert[k] number -> node, parent[k] becomes
	 * idom[k]; semi and the link-eval forest follow LT.
	 */
	/* num lives in idom, which is free until the end (converted in place) */
	uint32_t *num = idom;
	memset(num, 0, (size_t)n * sizeof *num);
	uint32_t *vert_mem = order ? NULL : big_alloc((size_t)n + 1, sizeof *vert_mem);
	uint32_t *vert = order ? order : vert_mem;	/* vert[k - 1]: node numbered k */
	uint32_t *parent = big_alloc((size_t)n + 2, sizeof *parent);
	uint32_t *semi = big_alloc((size_t)n + 2, sizeof *semi);
	uint64_t *dfs = NULL;	/* the DFS's stack of entries */
	/* These are written and read in order (numbers): when the forest
	 * needs memory they give it up first (big_settle). num and the forest
	 * are written all over and keep theirs. */
	big_settle(vert);
	big_settle(parent);
	big_settle(semi);
	struct link *forest = NULL;
	uint32_t *stack = NULL;
	int st = HS_OK;
	struct dom_slices s;

	/*
	 * Iterative DFS: preorder numbers and DFS-tree parents. A node is
	 * numbered when it comes off the stack unvisited, its unvisited
	 * successors pushed in reverse: the recursive DFS's preorder, whose
	 * tree parent is the node that pushed the entry. The stack holds the
	 * nodes waiting, not the path (a list's nodes leave it as they are
	 * visited); with csr the next nodes' rows are prefetched (about a
	 * fifth of the DFS's time on big1).
	 */
	uint32_t count = 1;
	size_t sp = 0, cap = 4096;
	dfs = big_alloc(cap, sizeof *dfs);
	num[g->root] = 1;
	vert[0] = g->root;
	parent[1] = 0;
	dfs = push_succs(g, num, g->root, 1, dfs, &sp, &cap);
	while (sp) {
		uint64_t e = dfs[--sp];
		uint32_t w = (uint32_t)e;
		if (num[w])
			continue;
		num[w] = ++count;
		vert[count - 1] = w;
		parent[count] = (uint32_t)(e >> 32);
		dfs = push_succs(g, num, w, count, dfs, &sp, &cap);
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
	if (*preparing) {
		*preparing = false;
		hs_thread_join(prep);
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

	/* NCA: climb from the DFS parent to the first ancestor <= semi; the
	 * root (1) is everyone's, so a semidominator of 1 is the idom. */
	for (uint32_t k = 2; k <= count; k++) {
		uint32_t d = parent[k], sd = semi[k];
		if (sd == 1)
			d = 1;
		while (d > sd)
			d = parent[d];
		parent[k] = d;
	}

	/* idom still holds DFS numbers: turn each into the dominator's node,
	 * each half of the nodes on a thread */
	struct to_nodes half[2] = {{idom, vert, parent, 0, n / 2}, {idom, vert, parent, n / 2, n}};
	hs_run_pair(to_nodes_work, &half[0], to_nodes_work, &half[1], n > 100000);
	if (nreach)
		*nreach = count;
done:
	if (*preparing) {
		*preparing = false;
		hs_thread_join(prep);
	}
	big_free(stack);
	big_free(vert_mem);
	big_free(parent);
	big_free(semi);
	big_free(dfs);
	big_free(forest);
	return st;
}

int dom_build(const struct dom_graph *g, uint32_t *idom, uint32_t *order, uint32_t *nreach)
{
	/* The predecessors are made on another thread during the DFS, which
	 * reads only successors (the two cores of a laptop both busy); a
	 * throw waits for that thread before it goes on. */
	struct hs_thread prep;
	volatile bool preparing = g->prepare && hs_thread_start(&prep, prepare_work, (void *)g);
	struct hs_catch c;
	hs_catch_push(&c);
	if (setjmp(c.jb)) {
		if (preparing)
			hs_thread_join_caught(&prep, c.msg);
		hs_throw("%s", c.msg);
	}
	int st = build(g, idom, order, nreach, &prep, &preparing);
	hs_catch_pop(&c);
	return st;
}
