/*
 * dom.h - dominator trees of directed graphs, by the Semi-NCA algorithm
 * (Georgiadis, "Linear-Time Algorithms for Dominators and Related
 * Problems", PhD thesis, Princeton 2005, section 2.2; semidominators as in
 * Lengauer & Tarjan, TOPLAS 1979, with iterative path compression).
 * Everything is int arrays and explicit stacks: no recursion, so heap
 * graphs with million-long chains (linked lists) are fine.
 *
 * The graph is given by callbacks that hand out each node's successors and
 * predecessors as up to DOM_SLICES arrays, so a caller can present implicit
 * edges (an object's link to its class, the super-root's edges to the GC
 * roots) without building another adjacency structure.
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

/*
 * dom_csr: the successors as arrays, which dom_build's DFS reads without a
 * call per step (a third of its time on big1 went to succs): node v's are
 * extra[cls[v]] first when cls is not NULL and that is not DOM_NONE (a heap
 * object's class object), then adj[start[v] .. start[v + 1]); the root's
 * are root_succ[0 .. nroot_succ). start has n + 1 entries, its last below
 * UINT32_MAX. The same successors in the same order as succs gives.
 */
struct dom_csr {
	const uint32_t *start, *adj;
	const uint32_t *cls, *extra;
	const uint32_t *root_succ;
	uint32_t nroot_succ;
};

struct dom_graph {
	uint32_t n;		/* nodes 0..n-1 */
	uint32_t root;
	void *ctx;
	/*
	 * succs/preds: fill s with v's successors / predecessors. preds may
	 * leave out what cannot change v's semidominator: a node's only
	 * predecessor (it is the node's DFS parent), or every predecessor
	 * but the root when the root is one (dom_build stops at the root).
	 */
	void (*succs)(void *ctx, uint32_t v, struct dom_slices *s);
	void (*preds)(void *ctx, uint32_t v, struct dom_slices *s);
	/*
	 * prepare (NULL: none): makes what preds reads. dom_build calls it
	 * once, before the first preds: on a second thread while its DFS
	 * calls succs when a thread can be had, else after the DFS. So it may
	 * read what succs reads, but write nothing succs reads.
	 */
	void (*prepare)(void *ctx);
	const struct dom_csr *csr;	/* NULL: the DFS calls succs */
};

/*
 * dom_build: the immediate dominator of every node into idom[n]: idom[root]
 * = root, DOM_NONE for nodes unreachable from root. If order is not NULL
 * (n entries) it receives the reachable nodes in DFS preorder (order[0] =
 * root) and *nreach their count; a dominator always precedes the nodes it
 * dominates in that order, so a reverse sweep is bottom-up.
 * Temporary memory: 16 bytes per node (20 when order is NULL), and the
 * DFS's stack of nodes waiting, 8 bytes each (at most one per edge; 47 k
 * at most on big1); idom holds the DFS numbers until the end. Returns HS_OK, or HS_INTERRUPTED
 * when hs_interrupted was set (idom is then incomplete).
 */
int dom_build(const struct dom_graph *g, uint32_t *idom, uint32_t *order, uint32_t *nreach);

#endif
