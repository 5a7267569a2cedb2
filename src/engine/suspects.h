/*
 * suspects.h - leak suspects (Eclipse MAT's "Leak Suspects" report,
 * FindLeaksQuery, done so that a suspect names what piles up and where):
 * the places in the dominator tree where a large share of the heap fans
 * out into many similar objects, with the field chain that holds them.
 *
 * How (docs/leak-suspects.md): from the super-root, the dominator tree is
 * followed down through every object retaining at least the threshold
 * share of the reachable heap. An object whose largest dominator child
 * retains child_pct or more of it passes the descent on to that child (it
 * is a link of a chain, not where memory accumulates). Otherwise its
 * children retaining the threshold or more are followed on their own, and
 * what is left to it is its own suspect when it still retains the
 * threshold: it is an accumulation point, and the class of its children
 * that together retain the most is what piles up there. The children of
 * the super-root (the objects the GC roots dominate directly) that each
 * stay below the threshold but, by class, reach it together are one group
 * suspect (four pooled threads each holding a ThreadLocal buffer); each
 * member then descends to its own accumulation point. Class objects are
 * never grouped: each class's static fields are its own.
 *
 * Ownership: sus_find returns an array freed with sus_free; it points into
 * the heap, which must outlive it.
 */
#ifndef HS_SUSPECTS_H
#define HS_SUSPECTS_H

#include <stdbool.h>
#include <stdint.h>

#include "domtree.h"
#include "path.h"

struct sus_opts {
	double threshold_pct;	/* a suspect retains at least this % of the reachable heap (MAT: 10) */
	double child_pct;	/* a child retaining this % of its parent continues the chain (80) */
};

/* One step of a field chain: a field, an array element, or a link. */
struct sus_step {
	enum heap_ref_kind kind;	/* HEAP_REF_SUPER: the link to the object's class */
	const char *name;	/* field name (the heap's string), or NULL */
	uint32_t index;		/* element index */
};

/*
 * Where a field chain starts: a class's static field (the first step),
 * a thread (by name), or any other GC root object (by class).
 */
enum sus_start { SUS_STATIC, SUS_THREAD, SUS_OBJECT };

struct sus_chain {
	enum sus_start start;
	const char *class_name;	/* the static field's class, or the root object's class */
	char *thread;		/* SUS_THREAD: the thread's name (owned) */
	uint32_t nsteps;
	struct sus_step *steps;	/* from the GC root object to the holder */
	uint64_t retained;	/* what the holder it leads to retains */
};

struct suspect {
	bool group;		/* several similar suspects (members) as one */
	uint32_t nmembers;
	uint32_t *members;	/* the objects that keep the memory, largest first */
	uint32_t *accs;		/* [nmembers] each one's accumulation point */
	uint64_t retained;	/* bytes kept alive (a group: its members' sum; suspects listed
				 * on their own below an object are not counted in it) */
	uint32_t acc;		/* the accumulation point (a group: members[0]'s) */
	uint64_t acc_retained;
	uint32_t holder;	/* what holds the pile: acc, or the object whose backing array acc is */
	const char *piled;	/* class name of what piles up at acc, NULL if nothing does */
	bool chain;		/* the pile is a linked chain of objects of that class */
	uint64_t npiled;	/* objects of that class piled up (a group: over all members) */
	uint64_t piled_bytes;	/* what they retain together */
	const char *holds;	/* what each piled object mostly retains (a class name), or NULL */
	uint32_t largest;	/* no pile: acc's largest dominator child, else HEAP_NONE */
	uint64_t largest_bytes;
	uint32_t nloaders;	/* class loaders other than the JDK's of the piled objects' classes */
	uint32_t loader;	/* one of them (an object), HEAP_NONE when none */
	bool loader_on_way;	/* the loaders are of the classes on the way to the pile */
	struct path path;	/* shortest path from a GC root to acc over g; len 0 if none */
	uint32_t nchains;	/* chains[] of the first members (up to SUS_CHAINS) */
	struct sus_chain *chains;
	char *where;		/* chains as text: "static ShopServer.BUS.listeners" */
	char *description;	/* one sentence */
	/* sus_baseline: */
	bool has_base;		/* a field chain leads to an object in the baseline */
	uint64_t base_retained;	/* what the holders the chains lead to retained there */
	int64_t growth;		/* what the holders retain now (chains[].retained) - base_retained */
};

#define SUS_CHAINS 16

/*
 * sus_find: the leak suspects of t's heap, largest retained first (ties:
 * description). g is a graph of the same heap with class edges, for the
 * paths (strong references only, as MAT's "exclude weak"). *out and *n
 * receive the suspects (none when nothing reaches the threshold). Cost:
 * one scan of the tree for the children lists (O(n), 8 bytes per object
 * while it runs), plus one breadth-first search per suspect for its path.
 * Returns HS_OK, or HS_INTERRUPTED on Ctrl-C (nothing returned).
 */
int sus_find(struct dom_tree *t, struct hgraph *g, const struct sus_opts *o,
	     struct suspect **out, uint32_t *n);
void sus_free(struct suspect *s, uint32_t n);

/*
 * sus_baseline: the growth of each suspect since an older dump of the same
 * program (base: its dominator tree): the suspect's field chain (where) is
 * followed in the older heap from the same static field or the thread of
 * the same name (an array index as it is); what the holder reached
 * retains there is base_retained, and the growth is what the holders
 * retain now less that (a chain that leads nowhere there counts 0). The
 * suspects are then sorted by growth, largest first. Cost: one field walk
 * per chain (at most SUS_CHAINS per suspect).
 */
void sus_baseline(struct suspect *s, uint32_t n, struct dom_tree *base);

/*
 * sus_class_growth: the growth of each suspect told by an allocation
 * recording instead of an older dump: growth_of(ctx, class name) gives the
 * live bytes of a class's recorded objects now less at the recording's mark
 * (0 for a class it does not know); a suspect's growth is its share of
 * the growth of its piled class and, when different, of the class each
 * piled object mostly retains (holds): a class's growth is split among the
 * suspects naming it in proportion to their piled bytes, so that it counts
 * once. has_base is set when it has a piled class, and base_retained is
 * retained less the growth (at least 0). The suspects are then sorted by
 * growth, largest first. An estimate: a recording counts only objects
 * allocated since it began, in shallow bytes, and cannot tell which
 * suspect's objects of a shared class (byte[]) grew. O(n^2) for n suspects.
 */
void sus_class_growth(struct suspect *s, uint32_t n, int64_t (*growth_of)(void *ctx, const char *cls),
		      void *ctx);

/*
 * sus_growing: after sus_baseline on suspects found with a lower threshold
 * than the user's, keep those that retain threshold_pct or more of the
 * reachable heap (reachable bytes) and, below it, those that grew: growing
 * candidates first, small ones included. Frees what it drops; *n shrinks.
 */
void sus_growing(struct suspect *s, uint32_t *n, double threshold_pct, uint64_t reachable);

/*
 * What lies under the threshold (sus_under): the objects retaining between
 * low_pct and threshold_pct of the reachable heap whose immediate
 * dominator retains the threshold or more (or is the GC roots): the
 * places the suspects' descent stopped at, none inside another, so their
 * bytes add up. largest is the one retaining the most (HEAP_NONE: none).
 */
struct sus_under {
	double low_pct;
	uint32_t n;
	uint64_t bytes;
	uint32_t largest;
	uint64_t largest_bytes;
};
/* sus_under: that summary for t's heap, in one pass over the objects (O(n)). */
void sus_under(const struct dom_tree *t, double threshold_pct, double low_pct,
	       struct sus_under *u);

/*
 * sus_path_text: path p as one line: the GC root object with its root kind
 * in brackets, then " -field-> object" for each step ("[i]" for
 * elements). short_names writes classes without their package; max_steps
 * (0 = all) keeps the first 2 and the last max_steps-3 steps with "(N
 * more)" between. Returns a new string the caller frees.
 */
char *sus_path_text(const struct heap *h, const struct path *p, bool short_names,
		    uint32_t max_steps);

#endif
