/*
 * hgraph.h - the heap as the engine's graph (docs/engine.md): the objects
 * 0..n-1 plus a super-root n with an edge to every GC root. An object's
 * edges are its references (heap_out) and, as in Eclipse MAT, a link to
 * its class object. With no_weak, the referent field of
 * java.lang.ref.Reference instances (weak, soft, phantom and final
 * references) is not an edge.
 *
 * hg_succs and hg_preds present this graph to dom_build without copying
 * the adjacency: predecessors are the heap's incoming references, the
 * instances of a class for its class object, and the super-root for GC
 * roots. Ownership: hg_init allocates, hg_free releases.
 */
#ifndef HS_HGRAPH_H
#define HS_HGRAPH_H

#include <stdbool.h>

#include "../heap/heap.h"
#include "dom.h"

struct hgraph {
	const struct heap *h;
	uint32_t root;		/* the super-root: h->n */
	bool no_weak;
	bool class_edges;	/* object -> class links (off for dynamic size) */
	uint32_t nroots;
	uint32_t *roots;	/* distinct GC root objects, ascending */
	uint8_t *bits;		/* per object: HG_ROOT | HG_CLASS | HG_REFERENT */
	uint8_t *ref_class;	/* per class: 1 if a java.lang.ref.Reference subclass */
	uint32_t *scratch;	/* filtered edge lists (no_weak) */
	uint32_t scratch_cap;
	uint32_t *scratch2;
	uint32_t scratch2_cap;
	uint32_t *dom_start;	/* the referrers dom_build reads (hg_dom_graph) */
	uint32_t *dom_in;
	struct dom_csr csr;	/* the successors as arrays for dom_build (hg_dom_graph) */
	uint32_t *class_obj;	/* per class: its object index (csr.extra) */
	struct heap *spill;	/* hg_dom_prepare then sends its record positions to disk (heap_spill) */
};

enum { HG_ROOT = 1, HG_CLASS = 2 };

/* hg_init: the graph of h; no_weak drops Reference.referent edges. */
void hg_init(struct hgraph *g, const struct heap *h, bool no_weak, bool class_edges);
void hg_free(struct hgraph *g);

/* The dom_graph callbacks; ctx is the struct hgraph. */
void hg_succs(void *ctx, uint32_t v, struct dom_slices *s);
void hg_preds(void *ctx, uint32_t v, struct dom_slices *s);

/*
 * hg_dom_graph: a dom_graph view of g rooted at the super-root. Its
 * predecessors leave out what dom_build does not need (dom.h): their lists
 * (heap_incoming_some; about 8 bytes per object and 4 per reference kept,
 * 82% of big1's) are kept until hg_dom_done or hg_free gives them back.
 * They are made now on two threads, or when later is true by dom_build's
 * prepare, on one thread while dom_build's DFS runs on another: faster,
 * but both at once need their memory at once (4 bytes per object more at
 * the peak): for when it all fits the memory budget.
 */
struct dom_graph hg_dom_graph(struct hgraph *g, bool later);
void hg_dom_done(struct hgraph *g);

/* hg_referent: the object i's Reference.referent target, or HEAP_NONE. */
uint32_t hg_referent(const struct hgraph *g, uint32_t i);

#endif
