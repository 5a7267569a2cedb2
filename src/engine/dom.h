/*
 * dom.h - dominator trees of directed graphs, by the Semi-NCA algorithm
 * (Georgiadis, "Linear-Time Algorithms for Dominators and Related
 * Problems", PhD thesis, Princeton 2005, section 2.2; semidominators as in
 * Lengauer & Tarjan, TOPLAS 1979, with iterative path compression).
 * Everything is int arrays and explicit stacks: no recursion, so heap
 * graphs with million-long chains (linked lists) are fine.
 *
 * The graph is given by a callback that hands out each node's successors
 * as up to DOM_SLICES arrays, so a caller can present implicit edges (an
 * object's link to its class, the super-root's edges to the GC roots)
 * without building another adjacency structure. Predecessors are not
 * asked for: the DFS keeps the edges outside its tree as it meets them,
 * and an in-place counting sort groups them by target for the
 * semidominator pass.
 *
 * Ownership: dom_build fills a caller-allocated idom array.
 */
#ifndef HS_DOM_H
#define HS_DOM_H

#include <stdint.h>

#include "../base/mem.h"

#define DOM_NONE UINT32_MAX
#define DOM_SLICES 3

struct dom_slices {
	const uint32_t *a[DOM_SLICES];
	uint32_t n[DOM_SLICES];
	int count;		/* slices in use */
};

struct dom_graph {
	uint32_t n;		/* nodes 0..n-1 */
	uint32_t root;
	/*
	 * At least the number of edges out of the nodes reachable from root
	 * less the number of those nodes other than root: a bound on the edges
	 * outside any DFS tree, which dom_build keeps (8 bytes each). Below
	 * 2^32 - 1.
	 */
	uint64_t max_cross;
	void *ctx;
	/* succs: fill s with v's successors. */
	void (*succs)(void *ctx, uint32_t v, struct dom_slices *s);
};

/*
 * dom_build: the immediate dominator of every node into idom[n]: idom[root]
 * = root, DOM_NONE for nodes unreachable from root. If order is not NULL
 * (n entries) it receives the reachable nodes in DFS preorder (order[0] =
 * root) and *nreach their count; a dominator always precedes the nodes it
 * dominates in that order, so a reverse sweep is bottom-up.
 * Temporary memory, in big arrays: during the DFS 12 bytes per node (16
 * when order is NULL) and 8 per edge of max_cross; while the edges are
 * grouped 8 per edge met outside the tree and 12 per node (16); from then
 * on 4 per such edge and 20 per node (24). idom holds the DFS
 * numbers until the end. Returns HS_OK; HS_INTERRUPTED when hs_interrupted
 * was set; HS_ERR when more than max_cross edges were met (a caller's
 * wrong bound). idom is incomplete unless HS_OK.
 */
int dom_build(const struct dom_graph *g, uint32_t *idom, uint32_t *order, uint32_t *nreach);

#endif
