/*
 * domtree.h - the dominator tree of the whole heap and retained sizes
 * (docs/engine.md; thesis ../shared/seeds/003, chapter 4 "GC size").
 *
 * An object's retained size is the total shallow size of its dominator
 * subtree: what the garbage collector frees if that object goes away. The
 * super-root (index h->n) dominates everything reachable; unreachable
 * objects have no dominator (HEAP_NONE) and retain nothing.
 *
 * Ownership: dom_tree_build returns a tree freed with dom_tree_free; it
 * points into the heap, which must outlive it. Arrays it hands out live
 * as long as the tree.
 */
#ifndef HS_DOMTREE_H
#define HS_DOMTREE_H

#include "hgraph.h"

struct dom_tree {
	const struct heap *h;
	struct hgraph g;	/* the graph the tree was built on */
	uint32_t *idom;		/* [n+1] immediate dominator; n = super-root */
	/* retained bytes (dom_retained): [n+1], [n] = all reachable; values of
	 * DOM_RETAINED_BIG or more are in retained_big, keyed by index + 1 */
	uint32_t *retained32;
	struct u64map retained_big;
	uint32_t nreach;	/* reachable objects (super-root excluded) */
	uint32_t *depth;	/* [n+1] lazily: depth in the tree, root 0 */
	uint32_t *pre;		/* [n+1] lazily: place in a depth-first order, UINT32_MAX unreachable */
	uint32_t *order;	/* [npre] lazily: the objects in that order, super-root first */
	uint32_t *span;		/* [n+1] lazily: objects in v's subtree, v included */
	uint32_t npre;
	uint32_t *kid_first;	/* [n+2] lazily (dom_children_view): v's children are kids[kid_first[v] .. kid_first[v+1]) */
	uint32_t *kids;		/* [nreach] lazily: the children, each node's largest retained first */
	bool from_index;	/* loaded from the index file, not computed */
	bool trusted;		/* and not checked again (dom_tree_load) */
	void *map;		/* the index section idom and retained32 lie in, or NULL */
	size_t maplen;
};

#define DOM_RETAINED_BIG UINT32_MAX

/* dom_retained: the retained size of v in bytes (v = n: all reachable). */
static inline uint64_t dom_retained(const struct dom_tree *t, uint32_t v)
{
	uint32_t r = t->retained32[v];
	if (r != DOM_RETAINED_BIG)
		return r;
	uint64_t big = 0;
	u64map_get(&t->retained_big, (uint64_t)v + 1, &big);
	return big;
}

/*
 * dom_tree_build: compute the tree and all retained sizes for h. no_weak
 * ignores Reference.referent edges. With spill, the heap's record
 * positions go to a file in the spill folder for the build (heap_spill)
 * and are read back from it when next used, which lowers the build's peak
 * memory by 4 bytes per object. Returns HS_OK, or
 * HS_INTERRUPTED on Ctrl-C (*out is then NULL). Time O((n + m) log n)
 * worst case, near linear in practice; memory 8 bytes per object kept
 * (idom, and retained sizes in 32 bits with the rare larger ones in a
 * map), 33 at the peak.
 */
int dom_tree_build(struct heap *h, bool no_weak, bool spill, struct dom_tree **out);

void dom_tree_free(struct dom_tree *t);

/*
 * dom_tree_save / dom_tree_load: a tree of an n-object heap as one index
 * section, in this machine's byte order:
 *   u32 DOM_SECTION_MAGIC, u32 n, u64 nbig,
 *   idom[n+1] u32 (byte 16), retained32[n+1] u32 (byte 16 + 4(n+1)),
 *   nbig pairs of u64 (object index + 1, retained bytes) for the sizes of
 *   DOM_RETAINED_BIG or more (byte 16 + 8(n+1), 8-aligned).
 * The arrays are the tree's own, so a section at an 8-aligned address can
 * be used where it lies. dom_tree_save returns len bytes the caller frees
 * with big_free.
 *
 * dom_tree_load checks the section against h: NULL when it is not of h
 * (another layout, count or size: a stale index); NULL with *insane set
 * when it is of h's size but not a dominator tree of h with consistent
 * retained sizes (a checksum proves an index undamaged, not sane): every
 * reachable object's chain of dominators ends at the super-root, without
 * a cycle or an unreachable object, and each retained size is the shallow
 * size plus the children's. Checking costs O(n) time and 9 bytes per
 * object for a while. With map (a read-only mapping of maplen bytes that
 * p lies in, 8-aligned), the tree uses the arrays where they lie and takes
 * the mapping, unmapped by dom_tree_free (on NULL the caller keeps it);
 * without, it copies them and only reads p. trusted (a section checked in
 * full by an earlier load and unchanged since, idx_trusted) skips the
 * check of the tree, its O(n) memory and its reads of the heap's sizes
 * and references.
 */
#define DOM_SECTION_MAGIC 0x32544f44u	/* "DOT2" */
uint8_t *dom_tree_save(const struct dom_tree *t, uint32_t n, size_t *len);
struct dom_tree *dom_tree_load(const struct heap *h, bool no_weak, const uint8_t *p,
			       uint64_t len, void *map, size_t maplen, bool trusted,
			       bool *insane);
/*
 * dom_tree_adopt: t, as built, uses the section dom_tree_save wrote of it
 * (p, len, in map of maplen bytes, read-only, from the index file this
 * process has just written) for its immediate dominators and retained
 * sizes, and gives its own arrays back. Only the section's shape is
 * checked (header, length, 8-aligned): the bytes are t's. True, and t
 * owns the mapping; false and nothing changed otherwise.
 */
bool dom_tree_adopt(struct dom_tree *t, const uint8_t *p, uint64_t len, void *map,
		    size_t maplen);

/*
 * dom_children: v's children in the dominator tree (v may be the
 * super-root), largest retained first (equal sizes: lower index first), in
 * a new array the caller frees. Cost: a copy of v's children when the
 * children index is built (dom_children_view); otherwise one scan of the
 * tree, O(n), plus sorting the children, and no index is kept (a command
 * that looks at one node need not hold 8 bytes per object afterwards).
 */
uint32_t *dom_children(struct dom_tree *t, uint32_t v, uint32_t *count);

/*
 * dom_children_top: the first min(limit, *count) of dom_children's list,
 * in its order, in a new array the caller frees; *count is the number of
 * all v's children. Without the children index: one scan of the tree,
 * keeping the limit first in a heap (O(n + k log limit), limit entries of
 * memory) instead of sorting all k children (the super-root has hundreds
 * of thousands).
 */
uint32_t *dom_children_top(struct dom_tree *t, uint32_t v, uint32_t limit, uint32_t *count);

/*
 * dom_children_view: v's children (v an object index or the super-root
 * h->n), in dom_children's order, as *count entries of an array the tree
 * owns: valid as long as the tree (for a session's tree, until its heap is
 * closed or replaced), read only. The first call builds the
 * children index of every node at once, kept with the tree (8 bytes per
 * object): O(n) plus sorting each node's children (O(n log k) at worst, k
 * the most children of one node); each call after is O(1).
 */
const uint32_t *dom_children_view(struct dom_tree *t, uint32_t v, uint32_t *count);

/*
 * dom_retained_set: the bytes freed if every object in objs[0..n) went
 * away together (not the sum of their retained sizes: objects kept alive
 * only by several members count too). Objects unreachable from the GC
 * roots are ignored. Cost: one traversal of the dominator subtree of the
 * members' lowest common dominator (the first call also numbers the tree
 * depth-first: O(n), 12 bytes per object kept). Returns HS_OK or
 * HS_INTERRUPTED.
 */
int dom_retained_set(struct dom_tree *t, const uint32_t *objs, uint32_t n, uint64_t *bytes);

/*
 * dom_retained_sets: dom_retained_set for k sets, each on its own: set j
 * is objs[j][0..n[j]), its bytes go to bytes[j] (k entries). A set under a
 * small dominator subtree is one traversal of that subtree; the others are
 * taken 64 at a time in one traversal of the reachable graph each, with a
 * 64-bit mask per object ("still reachable without set j"; an object is
 * visited again only when it gains bits). Memory: 21 bytes per object
 * while it runs. Returns HS_OK or HS_INTERRUPTED.
 */
int dom_retained_sets(struct dom_tree *t, uint32_t k, const uint32_t *const *objs,
		      const uint32_t *n, uint64_t *bytes);

/*
 * dom_class_retained_lower: for every class c (h->nclasses entries of own),
 * the retained sizes of its instances that no other instance of c
 * dominates, added up: what the instances keep alive each on its own, a
 * lower bound of the class's retained size (dom_retained_sets of all its
 * instances), equal to it unless some objects are kept alive only by
 * several instances together (Eclipse MAT's "approximate retained size").
 * Class objects count under java.lang.Class. Cost: one pass over the tree
 * in depth-first order, O(n), 4 bytes per object while it runs. Returns
 * HS_OK or HS_INTERRUPTED.
 */
int dom_class_retained_lower(struct dom_tree *t, uint64_t *own);

/*
 * dom_classes_retained: ret[k] = the bytes freed if all instances of class
 * classes[k] went away together (Eclipse MAT's retained size of a class,
 * exact: dom_retained_sets of the instances, n classes in one go), for k <
 * n; hid >= 0 (Android dumps): only the instances in that heap (h->heap_of).
 * ret has n entries. HS_OK or HS_INTERRUPTED (Ctrl-C).
 */
int dom_classes_retained(struct dom_tree *t, const uint32_t *classes, uint32_t n, int hid,
			 uint64_t *ret);

/*
 * dom_classes_by_retained: the classes of classes[0..*n) (class indices,
 * reordered in place) sorted by their retained size (dom_classes_retained),
 * largest first, ties in the order given; *ret gets the sizes (*n entries,
 * malloc'd, caller frees; NULL on error). With candidates below *n, only
 * the candidates classes whose instances keep the most each on their own
 * (dom_class_retained_lower) are computed exactly and kept, and *n becomes
 * candidates: for a ranking of the largest, at a fraction of the cost.
 * HS_OK or HS_INTERRUPTED.
 */
int dom_classes_by_retained(struct dom_tree *t, uint32_t *classes, uint32_t *n,
			    uint32_t candidates, uint64_t **ret);

/* dom_sort_by_retained: classes and ret (n each) by ret, largest first; ties keep their order. */
void dom_sort_by_retained(uint32_t *classes, uint64_t *ret, uint32_t n);

/*
 * dom_class_paths: the dominator tree merged by paths of classes (as
 * Eclipse MAT's "merge by class" of the dominator tree, and as pprof's
 * stacks read it): each reachable object's path is the classes of its
 * chain of immediate dominators from the GC roots down to it, a class
 * object being "class com.acme.Foo" rather than java.lang.Class; a run of
 * one class (a linked list's nodes) is one step, and paths are cut at
 * max_depth steps (deeper objects count in the path of their dominator at
 * that depth). Every reachable object counts in exactly one path, so the
 * objects and shallow bytes of the paths add up to the reachable heap,
 * and a path's own figures plus those of the paths under it are what the
 * objects at its end retain together.
 *
 * *paths gets *n entries in a new array (free()), each path after its
 * parent. Returns HS_OK, or HS_INTERRUPTED on Ctrl-C (*paths NULL). Time
 * O(n): each object's path from its immediate dominator's, found by
 * climbing to a dominator whose path is known (no depth-first numbering of
 * the tree); memory 4 bytes per object while it runs, a stack as deep as the
 * tree, plus the paths.
 */
struct dom_cpath {
	uint32_t parent;	/* the path one step shorter; UINT32_MAX: dominated by the GC roots */
	uint32_t cls;		/* the class of the objects at its end (class objects: the class they are) */
	bool class_object;	/* the objects at its end are class objects (statics) */
	uint32_t depth;		/* steps: 1 for a path of one class */
	uint64_t objects, shallow;	/* objects whose path this is, and their shallow bytes */
};
int dom_class_paths(struct dom_tree *t, uint32_t max_depth, struct dom_cpath **paths,
		    uint32_t *n);

/*
 * dom_tree_shape: the tree's height (the deepest object's depth; objects
 * dominated directly by the GC roots have depth 1) and width (most objects
 * at one depth). Unreachable objects are not in the tree. Cost O(n) once.
 */
void dom_tree_shape(struct dom_tree *t, uint32_t *height, uint32_t *width);

#endif
