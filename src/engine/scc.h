/*
 * scc.h - strongly connected components and the condensed graph (the "SCC
 * DAG") of a directed graph (docs/engine.md, "Dynamic size"; thesis
 * ../shared/seeds/003, section 4.4).
 *
 * Components are found by Tarjan's algorithm ("Depth-first search and
 * linear graph algorithms", SIAM J. Comput. 1972), made iterative with an
 * explicit stack so million-long reference chains are fine. Components
 * are numbered in the order Tarjan completes them, which is a reverse
 * topological order: every DAG edge goes from a higher number to a lower
 * one, so a sweep from 0 upwards sees every component after all the
 * components it reaches (the thesis, section 4.8, step 1).
 *
 * Ownership: scc_build fills a caller-owned struct scc whose arrays
 * scc_free releases.
 */
#ifndef HS_SCC_H
#define HS_SCC_H

#include <stdint.h>

#include "../base/mem.h"

/* A directed graph given by callbacks; nodes are 0..n-1. */
struct scc_graph {
	uint32_t n;
	void *ctx;
	/* succs: v's successors (may repeat, may include v); borrowed. */
	const uint32_t *(*succs)(void *ctx, uint32_t v, uint32_t *count);
	/* weight: v's weight (for the heap: shallow size in bytes). */
	uint64_t (*weight)(void *ctx, uint32_t v);
};

struct scc {
	uint32_t n;		/* nodes of the graph */
	uint32_t ncomp;		/* components */
	uint32_t *comp;		/* [n] each node's component */
	uint32_t *size;		/* [ncomp] nodes in each component */
	uint64_t *weight;	/* [ncomp] total weight of each component */
	uint32_t *out_start;	/* [ncomp+1] DAG edges of c: out[out_start[c]..out_start[c+1]) */
	uint32_t *out;		/* successor components, no duplicates, no self edges */
	uint64_t nrefs;		/* edges of the graph (duplicates and self edges counted) */
};

/*
 * scc_build: the components of g and the DAG between them. Time O(n + m)
 * (m = edges); memory at the peak 24 bytes per node plus 4 per DAG edge,
 * 4 per node plus 20 per component and 4 per DAG edge kept. Returns HS_OK,
 * or HS_INTERRUPTED on Ctrl-C (s is then empty).
 */
int scc_build(const struct scc_graph *g, struct scc *s);
void scc_free(struct scc *s);

/*
 * scc_preds: the DAG's reverse edges in CSR form: in_start[ncomp+1] and
 * in[edges], new arrays the caller frees. Time O(ncomp + edges).
 */
void scc_preds(const struct scc *s, uint32_t **in_start, uint32_t **in);

#endif
