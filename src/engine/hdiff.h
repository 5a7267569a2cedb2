/*
 * hdiff.h - what grew between two heap dumps of one program (issue 38;
 * docs/manual.md, "Comparing dumps"): the dominator trees of an older and
 * a newer dump compared by class, by package, or by merged dominator path,
 * and growth conditions over classes (heapsh diff --fail-if). Object ids
 * change between dumps, so everything is matched by name: classes by their
 * Java name (hidden classes' and lambdas' address suffixes dropped,
 * hdiff_class_key), paths by their classes and the fields between them.
 *
 * Units: bytes and object counts; growth is after - before, signed.
 * Ownership: hdiff_groups and hdiff_paths fill a struct hdiff_result the
 * caller frees with hdiff_free (rows, their text, the conditions);
 * nothing points into the heaps, which may go first.
 */
#ifndef HS_HDIFF_H
#define HS_HDIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/mem.h"
#include "domtree.h"

/* What a row is (heapsh diff --by). */
enum hdiff_by { HDIFF_CLASS, HDIFF_PACKAGE, HDIFF_PATH };

/* One row: a class, a package or a merged dominator path, in both dumps. */
struct hdiff_row {
	char *key;		/* class name, package, or the path as text */
	uint64_t objects[2];	/* [0] older, [1] newer: instances (paths: objects at the step) */
	uint64_t retained[2];	/* bytes freed if all of them went away together */
	int64_t growth;		/* retained[1] - retained[0] */
	/* the order of rows (hdiff_groups): the growth of the row its chain ends at, that
	 * row's number, and the steps from it (0: the row is where the chain ends) */
	int64_t order;
	uint32_t end, dist;
};

/* A --fail-if condition: "PATTERN:+PCT%" or "PATTERN:+SIZE". */
struct hdiff_cond {
	char *text;		/* as given */
	char *pattern;		/* class pattern (base/classname.h rules) */
	bool pct;		/* the limit is a percentage of before, else bytes */
	double limit;		/* percent, or bytes */
	uint64_t classes[2];	/* classes the pattern names in each dump */
	uint64_t before, after;	/* retained bytes of all their instances together */
	int64_t growth;
	bool failed;		/* growth beyond the limit */
};

struct hdiff_result {
	struct hdiff_row *rows;
	uint32_t nrows;
	struct hdiff_cond *conds;
	uint32_t nconds;
	uint32_t candidates;	/* rows computed exactly (class, package) or merged paths compared */
};

/*
 * hdiff_class_key: the name under which class name is matched across dumps,
 * into buf (cap bytes, cut to fit, NUL-terminated): name without the
 * address of a hidden class ("/0x0000000801001234") and without a lambda's
 * number ("Foo$$Lambda$123" -> "Foo$$Lambda"), which differ from run to
 * run; so all the lambdas of one class are one row. Returns buf.
 */
char *hdiff_class_key(const char *name, char *buf, size_t cap);

/*
 * hdiff_package: the package row of class name, into buf (cap bytes):
 * the package of the class, of an array class that of its element class;
 * an array of primitives is a row of its own type (byte[]: data, not a
 * package), "<default package>" for
 * a class without one. Returns buf.
 */
char *hdiff_package(const char *name, char *buf, size_t cap);

/*
 * hdiff_groups: the classes (by HDIFF_CLASS) or packages (HDIFF_PACKAGE)
 * of the older tree t[0] and the newer t[1] (each tree's heap is read),
 * matched by name, largest retained growth first (ties by name). Exact
 * retained sizes (all instances of the row together, dom_retained_sets,
 * as Eclipse MAT's retained size of a class) are computed for candidates
 * only: the 4 * top rows of most changed approximate retained size (the
 * instances' own, dom_class_retained_lower: O(n)) and the 4 * top of most
 * changed shallow size, in both dumps; top 0: every row whose objects,
 * shallow or approximate retained size changed (slow on big heaps: 64
 * rows per traversal of each heap). Rows whose objects and retained sizes
 * are equal in both are left out. Order: a row passes its growth on to
 * another when the instances of the other that its instances hold (their
 * nearest dominator among the candidates' instances is one of its) carry
 * 80% or more of it, never to primitive arrays (a HashMap to its
 * HashMap$Node[], on to the nodes, on to the leaking class: the chain
 * MAT's accumulation point follows); rows go by the growth of the row
 * their chain ends at, a chain together from its end up (the leaking
 * class first, then what holds it), then by name. The first top (0: all)
 * are kept.
 * Fills r->rows, r->nrows, r->candidates. HS_OK or HS_INTERRUPTED.
 */
int hdiff_groups(struct dom_tree *t[2], enum hdiff_by by, uint32_t top, struct hdiff_result *r);

/*
 * hdiff_paths: the dominator trees t[0] (older) and t[1] (newer) merged by
 * path and compared. Each reachable object's step is its class (a class
 * object: "class NAME") and the label of the reference by which its parent
 * refers to it (a field name, "[]" for an array element, "static NAME";
 * none when the parent does not refer to it directly). Its parent is its
 * immediate dominator, but for an object the GC roots dominate (not a
 * class object) that objects of the heap refer to: where it would be
 * were it not for what threads hold at the moment (a running method's
 * local variable, an open transaction): of its referrers not under it nor
 * under what a thread holds, the one whose field holds the most objects
 * of its step elsewhere in the dump, else their lowest common dominator
 * (a circle of such parents is cut where it closes). Its path is
 * its parent's path and its step, so siblings of one class reached by one
 * field merge (Eclipse MAT's dominator tree grouped by class); a class
 * already on the path (a run of one class, a linked list, a tree's pages,
 * a map in a map) folds back to its first step, so the depth of a
 * recursive structure does not split it; paths are cut at 64 steps. A
 * path of the GC roots found in one dump only is merged into the path of
 * its class found in the other dump only (the one of most objects), with
 * its children: a structure that moved. Per path and dump: the objects at
 * its end, and what it retains: their shallow bytes and those of the paths
 * under it. Growth runs down a chain while one child carries 80% or more
 * of its parent's growth (as MAT's suspects look for the accumulation
 * point), but not into primitive arrays (the data of their holder, which
 * names the leak); a row is where such a chain ends, shown with its whole
 * path ("class com.acme.Cache -static MAP-> java.util.HashMap -table->
 * ..."), so the row naming a leak is the one at the top. Rows of no growth
 * are left out; largest growth first (ties by text), the first top (0:
 * all). Time O(n + m) per dump (one walk of the references of objects that
 * dominate others, for the labels; the incoming references of the heap,
 * heap_in, built if need be and kept with it, for objects the roots
 * dominate); memory 8 bytes per object while it runs, plus the paths.
 * HS_OK or HS_INTERRUPTED.
 */
int hdiff_paths(struct dom_tree *t[2], uint32_t top, struct hdiff_result *r);

/*
 * hdiff_cond_parse: text "PATTERN:+PCT%" (PCT a decimal number, fractions
 * allowed) or "PATTERN:+SIZE" (512K, 50MB, 1.5G, bytes without a unit;
 * big_parse_size) into *c (freed by hdiff_free with the result it joins,
 * or hdiff_cond_free). HS_ERR with err saying what is wrong and the
 * forms allowed.
 */
int hdiff_cond_parse(const char *text, struct hdiff_cond *c, struct hs_error *err);
void hdiff_cond_free(struct hdiff_cond *c);

/*
 * hdiff_conds: evaluate conditions c[0..k) on the older tree t[0] and the
 * newer t[1]: before and after are the bytes freed if every instance of
 * every class the pattern names went away together (dom_retained_sets,
 * all conditions in one batch per dump); failed when growth is more than
 * the limit: limit bytes, or limit percent of before (when before is 0,
 * any growth fails a percentage). HS_ERR with err when a pattern names no
 * class in either dump (with the closest names, heap_suggest_class: a
 * typo must not pass a check silently); HS_INTERRUPTED.
 */
int hdiff_conds(struct dom_tree *t[2], struct hdiff_cond *c, uint32_t k, struct hs_error *err);

/* hdiff_free: everything r holds (r itself is the caller's). */
void hdiff_free(struct hdiff_result *r);

#endif
