/*
 * path.h - paths from GC roots to objects over the engine graph
 * (hgraph.h): the shortest ones by breadth-first search over incoming
 * edges, and MAT-style merged paths for a set of objects.
 *
 * Ownership: results are malloc'd; free them with path_free /
 * free(rows). Both honour the graph's no_weak setting.
 */
#ifndef HS_PATH_H
#define HS_PATH_H

#include "hgraph.h"

struct path {
	uint32_t len;
	uint32_t *nodes;	/* GC root object first, the target last */
};

/*
 * path_to_roots: up to max shortest paths from distinct GC roots to
 * target, shortest first (breadth-first search backwards from target).
 * *npaths is 0 when target is unreachable. Returns HS_OK or
 * HS_INTERRUPTED. Cost O(objects and references visited).
 */
int path_to_roots(struct hgraph *g, uint32_t target, uint32_t max,
		  struct path **paths, uint32_t *npaths);
void path_free(struct path *paths, uint32_t npaths);

/*
 * One row of a merged-paths tree, in display order (depth-first): the
 * objects at one step of the paths that are siblings in the tree and of one
 * class, merged (Eclipse MAT's grouping "from GC roots by class"), so a
 * set of 2,600 listeners held by one array is one row below the array, not
 * 2,600. Class objects, and members of the set apart from the others, are
 * never merged with anything else.
 */
struct path_row {
	uint32_t obj;		/* the row's first object (the only one when nobjs is 1) */
	uint32_t from;		/* the object obj is reached from on its path (the heap's n for roots) */
	uint32_t nobjs;		/* objects merged into the row */
	uint32_t depth;		/* 0 for GC roots */
	uint32_t count;		/* set members whose shortest path passes here */
	bool member;		/* the objects are themselves in the set */
};

/*
 * path_merged: the shortest root paths of every object in objs, merged
 * into one tree from the GC roots (Eclipse MAT's "merge shortest paths to
 * GC roots", grouped by class: struct path_row); children ordered by
 * count, then class name. Members unreachable from the roots are counted
 * in *unreachable. Returns HS_OK or HS_INTERRUPTED. Cost: one
 * breadth-first search of the heap, then O(m log m) for the m objects on
 * the paths.
 */
int path_merged(struct hgraph *g, const uint32_t *objs, uint32_t n,
		struct path_row **rows, uint32_t *nrows, uint32_t *unreachable);

/*
 * path_parents: a breadth-first search of g from the super-root: parent[v]
 * (h->n + 1 entries, the caller's) is v's predecessor on a shortest path
 * from the GC roots (the super-root's is itself, UINT32_MAX for objects not
 * reached). With wanted (h->n + 1 flags, nwanted of them set) the search
 * stops once every wanted object is reached. Returns HS_OK or
 * HS_INTERRUPTED. Cost O(objects and references visited), 4 bytes per
 * object while it runs.
 */
int path_parents(struct hgraph *g, const uint8_t *wanted, uint32_t nwanted, uint32_t *parent);

/*
 * path_step: the reference by which from refers to to, into *r (kind,
 * field name, element index): the first such in heap_out order; the link
 * to its class (the engine's class edge) is kind HEAP_REF_SUPER with name
 * "<class>". False when from does not refer to to.
 */
bool path_step(const struct heap *h, uint32_t from, uint32_t to, struct heap_ref *r);
/*
 * path_via: the same as text, for tables: "name" for a field, "static
 * NAME", "[i]" for an element, "<class>" for the class link, else "?";
 * into buf (cap bytes, truncated to fit).
 */
void path_via(const struct heap *h, uint32_t from, uint32_t to, char *buf, size_t cap);

#endif
