/*
 * dyn.h - dynamic sizes: the total shallow size of everything an object
 * reaches (docs/engine.md, "Dynamic size"; thesis ../shared/seeds/003,
 * chapter 2 and sections 4.3-4.8).
 *
 * The graph is condensed into its SCC DAG (scc.h): every object of a
 * component reaches the same objects, so dynamic sizes are per component.
 * On the DAG, with a virtual root linked to every source, the engine finds
 * the dominating articulation points (DAPs) by the thesis's listing 4.4: a
 * component that dominates everything it reaches. Nothing behind a DAP is
 * reachable except through it, so a traversal that meets a DAP adds the
 * DAP's dynamic size and does not go on. All DAP sizes are computed exactly
 * when the engine is built, in one linear sweep (each component is walked
 * from its nearest DAP only); plain articulation points are not shortcuts
 * (the thesis's figure 4.11: they count shared nodes twice).
 *
 * Exact sizes of other components take one traversal each (memoized), or
 * 64 at a time with bit-parallel propagation (dyn_exact_many). Estimates
 * for every component come from Cohen's size-estimation framework (JCSS
 * 55(3), 1997), weighted: k independent exponential rank assignments with
 * rate = shallow size, each component keeping the minimum rank it reaches;
 * the estimate (k-1)/sum(minima) is unbiased with relative standard error
 * 1/sqrt(k-2). Components whose size is known exactly use it.
 *
 * Ownership: dyn_build / dyn_build_heap / dyn_load return an engine freed
 * with dyn_free. Nothing it returns needs freeing.
 */
#ifndef HS_DYN_H
#define HS_DYN_H

#include <stdbool.h>
#include <stdint.h>

#include "../heap/heap.h"
#include "scc.h"

#define DYN_K 64		/* rank assignments of the estimator */

enum {
	DYN_DAP = 1,		/* a dominating articulation point */
	DYN_AP = 2,		/* an articulation point of the undirected SCC DAG */
	DYN_EXACT = 4,		/* exact[] holds the exact dynamic size */
};

/* Graph statistics, as in the thesis's tables 5.1 and 5.2. */
struct dyn_stats {
	uint32_t nodes;		/* nodes of the graph (for a heap: objects, class objects included) */
	uint64_t refs;		/* references followed, duplicates included */
	uint32_t ncomp;		/* strongly connected components */
	uint32_t nontrivial;	/* components of two nodes or more */
	uint64_t nontrivial_nodes;	/* nodes in them */
	uint32_t largest;	/* nodes in the largest component */
	uint64_t dag_edges;	/* edges of the SCC DAG (no duplicates) */
	uint32_t sources;	/* components nothing refers to */
	uint32_t aps;		/* articulation points of the undirected SCC DAG */
	uint32_t daps;		/* dominating articulation points */
	uint32_t dag_height;	/* components on the longest path */
	uint32_t dag_width;	/* largest level (level: longest path from a source) */
	uint32_t dom_height;	/* levels of the SCC DAG's dominator tree, virtual root excluded */
	uint32_t dom_width;	/* its largest level */
};

struct dyn {
	struct scc s;
	uint32_t *idom;		/* [ncomp] immediate dominator in the SCC DAG; ncomp = the virtual root */
	uint8_t *flags;		/* [ncomp] DYN_* */
	uint64_t *exact;	/* [ncomp] exact dynamic size where flags has DYN_EXACT */
	float *est;		/* [ncomp] estimate (exact where known), NULL before dyn_estimate */
	struct dyn_stats stats;
	bool dirty;		/* exact sizes were added since the engine was built or loaded */
	uint8_t *saved_flags;	/* [ncomp] flags as the index holds the engine whole
				 * (dyn_saved, dyn_load), or NULL */
	bool saved_est;		/* and whether it holds the estimates */
	uint32_t *stamp;	/* traversal scratch: visited marks */
	uint32_t *unsafe;	/* dyn_exact_set: DAPs with a start behind them */
	uint32_t epoch;
	uint32_t *stack;
};

/*
 * dyn_build: the engine for graph g (components, DAG, DAPs with their exact
 * sizes, articulation points, statistics). Time O(n + m) plus the dominator
 * computation on the DAG (near linear); memory kept about 4 bytes per node
 * and per DAG edge plus 49 per component. HS_OK, or HS_INTERRUPTED on
 * Ctrl-C (*out is then NULL).
 */
int dyn_build(const struct scc_graph *g, struct dyn **out);

/*
 * dyn_build_heap: dyn_build on the heap's dynamic-size graph: objects with
 * their instance-field and array-element references; a class object's
 * edges are its static reference fields. The object -> class link, and a
 * class's superclass, loader, signers, protection domain and constant
 * pool, are not followed (docs/engine.md says why). Weights are shallow
 * sizes in bytes.
 */
int dyn_build_heap(const struct heap *h, struct dyn **out);
void dyn_free(struct dyn *d);

/* dyn_comp: the component of node v. */
static inline uint32_t dyn_comp(const struct dyn *d, uint32_t v)
{
	return d->s.comp[v];
}

/*
 * dyn_exact: the exact dynamic size of component c in bytes into *bytes,
 * memoized. One traversal of the DAG from c that stops at DAPs. HS_OK or
 * HS_INTERRUPTED.
 */
int dyn_exact(struct dyn *d, uint32_t c, uint64_t *bytes);

/*
 * dyn_exact_set: the exact total shallow size of everything reachable from
 * any of the components comps[0..n) (the union, each node once). A DAP
 * that dominates a start is not used as a shortcut (its region is not
 * whole any more): the starts' dominator-tree ancestors are marked first,
 * in time linear in the tree at worst. HS_OK or HS_INTERRUPTED.
 */
int dyn_exact_set(struct dyn *d, const uint32_t *comps, uint32_t n, uint64_t *bytes);

/*
 * dyn_exact_many: the exact dynamic size of each component comps[k] into
 * bytes[k] (memoized). Those not known are computed 64 at a time: one sweep
 * of the DAG propagates a 64-bit mask of the starts that reach each
 * component, stopping at DAPs. HS_OK or HS_INTERRUPTED.
 */
int dyn_exact_many(struct dyn *d, const uint32_t *comps, uint32_t n, uint64_t *bytes);

/*
 * dyn_estimate: fill d->est for every component (DYN_K assignments, on two
 * threads). Time O(DYN_K (ncomp + DAG edges)); temporary memory 40 bytes
 * per component. HS_OK or HS_INTERRUPTED (d->est stays NULL).
 */
int dyn_estimate(struct dyn *d);

/*
 * dyn_est_miss: the probability that an estimate is off by more than the
 * fraction eps of the true size (|est/true - 1| > eps), from the estimator's
 * Gamma(DYN_K) distribution. 0 < eps < 1.
 */
double dyn_est_miss(double eps);

/*
 * dyn_save / dyn_load: the engine as one buffer for the index file (this
 * machine's byte order), and back. dyn_save returns a new buffer of *len
 * bytes the caller frees with big_free. dyn_load checks every count and index and
 * returns NULL for a buffer that is not a valid engine for n nodes.
 */
void *dyn_save(const struct dyn *d, uint64_t *len);
struct dyn *dyn_load(const void *buf, uint64_t len, uint32_t n);

/*
 * The exact sizes found after the engine was saved whole, on their own: a
 * session that adds a few need not write the whole engine again (about 9
 * bytes per object) but 16 bytes per size (index section DYNX beside DYNA;
 * docs/engine.md). dyn_saved: the index now holds d whole as it is.
 * dyn_save_exact: every exact size d has that the whole save lacks, as a
 * new buffer of *len bytes (big_free), or NULL when the engine should be
 * saved whole instead: never saved whole, estimates made since, or the
 * sizes past an eighth of the whole save. dyn_load_exact: those sizes
 * onto d as loaded from the whole save; false, nothing applied, when the
 * buffer is not such sizes for d (a count, a component or a size out of
 * range: no size above the whole heap). Layout: u32 magic "DYX1", u32
 * components, u64 count, then count pairs of u64 (component, bytes).
 */
void dyn_saved(struct dyn *d);
void *dyn_save_exact(const struct dyn *d, uint64_t *len);
bool dyn_load_exact(struct dyn *d, const void *buf, uint64_t len);

#endif
