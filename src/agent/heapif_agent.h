/*
 * heapif_agent.h - the agent's backend of the heap-access interface
 * (src/dsl/heapif.h; issue 36, "One evaluator", step 2), prefix hva_: a
 * heap view over the running JVM through JNI and JVMTI, so that the query
 * language's evaluator (src/dsl/eval*.c) runs inside the JVM.
 *
 * It reads the JVM through the request's struct lq (lq.h, lqheap.c): the
 * class table (lq_classes, made before hva_new), fields, loaders, threads,
 * the analysis' tags (entries), its GC, arena and limits.
 *
 * HANDLES (heapif.h's):
 *   object: the index of the analysis' tag entry (lq_new_entry) the object
 *     holds, with a JNI local reference (freed with the request's local
 *     frame), its class and array length. An object met again is found by
 *     its tag: one handle per object. A class object keeps its class tag
 *     (LQ_TAG_CLASS): its handle is an entry no object holds, one per class.
 *   class: the class table's index; thread: lq_threads' index.
 *   transient: HV_TRANSIENT, the object objects_each's IterateThroughHeap
 *     is at, read from what the walk reports (class, size, length,
 *     primitive fields, a String's text); hv_keep tags it, and its
 *     reference comes from GetObjectsWithTags once the walk has returned.
 * What needs the whole graph (referrers, retained and dynamic sizes) and,
 * for now, outgoing references are HV_CANNOT, as are JNI reads during a
 * walk. A failure of lq's functions (lq_raise) is caught in the operation
 * and becomes the view's: LQ_UNSUPPORTED is HV_CANNOT; LQ_LIMIT and
 * LQ_CANCELLED are kept for the request's END (hva_status).
 *
 * Threads: the agent's thread of the request only (JNI, JVMTI's heap
 * functions). No longjmp crosses the VM: a throw (hs_throw) or an lq_raise
 * under a heap-walk callback is caught there.
 *
 * Ownership: hva_new's backend is the caller's, freed by hva_free; its
 * tables are malloc'd and counted in the request's memory (q->mem_used,
 * bounded by q->mem_limit), the rest is the request's arena.
 */
#ifndef HS_HEAPIF_AGENT_H
#define HS_HEAPIF_AGENT_H

#include <signal.h>

#include "../dsl/heapif.h"
#include "lq.h"

struct hva;

/*
 * hva_new: a view of the JVM for request q (its class table made, its
 * agent thread tagged LE_SELF); interrupted: the flag a watcher sets on
 * CANCEL or at the time limit, polled by the heap walks. May lq_raise
 * (LQ_LIMIT: no memory for the tables).
 */
struct hva *hva_new(struct lq *q, volatile sig_atomic_t *interrupted);
/* hva_view: a's heap view (heapif.h), valid until hva_free. */
struct hv *hva_view(struct hva *a);
/* hva_status: LQ_LIMIT or LQ_CANCELLED if an operation met one (END's status), else LQ_OK. */
enum lq_status hva_status(const struct hva *a);
/* hva_free: a and its tables (NULL: nothing); the JNI references go with the request's frame. */
void hva_free(struct hva *a);

#endif
