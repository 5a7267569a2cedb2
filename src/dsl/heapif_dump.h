/*
 * heapif_dump.h - the dump backend of the heap-access interface
 * (heapif.h): a heap view over the heap model of a dump or a snapshot
 * (src/heap/heap.h), with `retained` and `dynamic_size` answered by the
 * engine a session hands the evaluator (struct dsl_engine's dom and dyn,
 * computed on first use).
 *
 * Ownership: a struct hvd is the caller's (the evaluator's session embeds
 * one); it borrows the heap and the engine's context, which must outlive
 * it. Nothing to free.
 */
#ifndef HS_HEAPIF_DUMP_H
#define HS_HEAPIF_DUMP_H

#include "eval.h"
#include "heapif.h"

struct hvd {
	struct hv view;		/* view.self points back here */
	const struct heap *h;	/* NULL: no heap yet */
	struct dom_tree *(*dom)(void *ctx);	/* dsl_engine's, may be NULL */
	struct dyn *(*dyn)(void *ctx, bool estimates);
	void *ctx;
	uint8_t *tclass;	/* a set type's growth: what a walk follows per class (malloc) */
	struct growth *growth;	/* a set type's growth under way (malloc) */
};

/* hvd_ops: the dump backend's operations (the inline calls of heapif.h shortcut the hot ones). */
extern const struct hv_ops hvd_ops;

/*
 * hvd_init: d a view of heap h (NULL: none yet; hvd_set_heap gives it one
 * later) with the engine eng's dom and dyn (eng NULL or either NULL:
 * `retained`, `dynamic_size` fail with HV_ERROR). inline_calls: the hot
 * operations bypass the table (heapif.h); false sends every operation
 * through hvd_ops, as a backend without inline calls is called (tests).
 */
void hvd_init(struct hvd *d, const struct heap *h, const struct dsl_engine *eng,
	      bool inline_calls);
/* hvd_set_heap: d's heap h (its counts filled in), inline_calls as hvd_init's. */
void hvd_set_heap(struct hvd *d, const struct heap *h, bool inline_calls);
/* hvd_heap: d's heap model (borrowed), NULL for none. */
static inline const struct heap *hvd_heap(const struct hvd *d)
{
	return d->h;
}

#endif
