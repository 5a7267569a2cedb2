/* heap_internal.h - what heap_load.c and heap.c share; not for other modules. */
#ifndef HS_HEAP_INTERNAL_H
#define HS_HEAP_INTERNAL_H

#include "../base/u64map.h"
#include "heap.h"

struct heap_names {
	struct u64map strings;	/* UTF8 record id -> offset of its tag byte */
	struct u64map interned;	/* UTF8 record id -> (uintptr_t) NUL-terminated copy */
	char **allocs;		/* every string the heap allocated, freed with it */
	size_t nallocs, cap;
};

/* heap_name: the text of UTF8 record sid, interned; "?" when absent. */
const char *heap_name(struct heap *h, uint64_t sid);
/* heap_keep: hand an allocated string to the heap to free with it. */
const char *heap_keep(struct heap *h, char *s);
/* heap_record_shallow: object i's shallow size computed from its record,
 * as the loader computes it (heap_shallow, for sizes of HEAP_SIZE_BIG or more). */
uint64_t heap_record_shallow(const struct heap *h, uint32_t i);

/* heap_forget_mapped: NULL the arrays a heap from heap_model_load has in
 * the index's mapping (heap_free must not free them). */
void heap_forget_mapped(struct heap *h);

/* heap_run2: fn(a) and fn(b), b on another thread when threads is true
 * (and a thread can be made). */
void heap_run2(void *(*fn)(void *), void *a, void *b, bool threads);

/* heap_build_directory: the id -> index directory (heap.h) of h->n
 * objects from their sorted, distinct ids in h->ids; big arrays. */
void heap_build_directory(struct heap *h);

#endif
