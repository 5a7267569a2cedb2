/*
 * packed.h - arrays of unsigned integers of a per-heap width (4 or 5 bytes):
 * the object indexes and CSR offsets of heaps past 2^32 objects or
 * references (docs/format-limits.md).
 *
 * Why: the model numbers objects with 32 bits, so a heap holds at most
 * 2^32 - 2 objects and fewer than 2^32 references, which production heaps
 * pass at about 200 GB and 100 GB. 64-bit indexes everywhere would cost
 * 4 bytes more per object per index array (and per reference) on every
 * heap, which the memory budget (32 B per object + 8 B per reference)
 * cannot afford. So an array's width is chosen per heap: 4 bytes, a plain
 * uint32_t array as today, for every heap below the 32-bit limits, and
 * 5 bytes (40 bits, up to 2^40 - 1) only past them.
 *
 * Shapes: a width-4 array of n elements is 4n bytes holding native-order
 * uint32_t (the same bytes as a uint32_t[n], so code not yet converted can
 * be handed a->p as one). A width-5 array is 5n + 3 bytes: element i is
 * the 40-bit little-endian value at byte offset 5i; it is read with one
 * unaligned 8-byte load masked to 40 bits, so 3 bytes of padding follow
 * the last element (pk_bytes). Values are counts and indexes, no unit.
 * "None" is the all-ones value of the width, 2^32 - 1 or 2^40 - 1
 * (pk_none): an array that uses it stores real values below it.
 *
 * Storage: pk_new and pk_resize take it from big_alloc / big_realloc
 * (big.h), so a huge array goes to a file past the memory budget. pk_get,
 * pk_set, pk_set_mt and pk_csr_row accept any storage of pk_bytes(n, width) bytes
 * (a caller's own mapping, an index file's section) wrapped in a struct
 * pk_array; only pk_free and pk_resize need big.h's.
 *
 * Threads: reads are safe from any number of threads. pk_set of width 5
 * rewrites the 8 bytes from 5i, which hold the next elements' first bytes
 * too: two threads must not pk_set elements less than 8 bytes apart at
 * once. pk_set_mt stores the element's own bytes only, so threads may set
 * distinct elements at once (a scatter such as the transpose of a CSR).
 * Width 4 stores 4 bytes either way, as a uint32_t array.
 *
 * Errors and ownership: allocation never fails (big.h exits(3) with what
 * could not be had). An array from pk_new is released with pk_free; indexes
 * are not checked (as with a C array).
 */
#ifndef HS_PACKED_H
#define HS_PACKED_H

#include <stdint.h>
#include <string.h>

#define PK_MASK40 ((UINT64_C(1) << 40) - 1)

struct pk_array {
	uint8_t *p;		/* pk_bytes(n, width) bytes */
	uint64_t n;		/* elements */
	uint8_t width;		/* bytes per element: 4 or 5 */
};

/*
 * pk_width_for: the width whose values hold every value in [0, max_value]:
 * 4 up to 2^32 - 1, 5 up to 2^40 - 1, 0 past (no width: refuse the heap).
 * An array that uses none passes one more than its largest real value, so
 * none stays apart: a heap of n objects, whose index arrays hold 0..n
 * (n: a CSR end, the dominator tree's super-root) and none, passes n + 1
 * (width 4 up to 2^32 - 2 objects); CSR offsets over r references, which
 * hold 0..r and no none, pass r (width 4 below 2^32 references).
 */
uint8_t pk_width_for(uint64_t max_value);

/* pk_bytes: the storage of n elements of width (4 or 5), padding included. */
static inline uint64_t pk_bytes(uint64_t n, uint8_t width)
{
	return n * width + (width == 5 ? 3 : 0);
}

/*
 * pk_new: *a becomes n elements of width (4 or 5), all 0, in storage from
 * big_alloc. Released with pk_free.
 */
void pk_new(struct pk_array *a, uint64_t n, uint8_t width);

/* pk_free: release a's storage (from pk_new or pk_resize) and empty *a. */
void pk_free(struct pk_array *a);

/*
 * pk_resize: a holds n elements of its width, keeping the first
 * min(n, a->n); elements past the old end are 0 (growing writes their
 * bytes). a's storage is from pk_new or pk_resize, and may move.
 */
void pk_resize(struct pk_array *a, uint64_t n);

/* pk_none: the all-ones value of a's width, 2^32 - 1 or 2^40 - 1. */
static inline uint64_t pk_none(const struct pk_array *a)
{
	return (UINT64_C(1) << (8 * a->width)) - 1;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define PK_LE64(x) __builtin_bswap64(x)
#else
#define PK_LE64(x) (x)
#endif

/* pk_get: element i (< a->n). */
static inline uint64_t pk_get(const struct pk_array *a, uint64_t i)
{
	if (__builtin_expect(a->width == 4, 1)) {
		uint32_t v;
		memcpy(&v, a->p + 4 * i, 4);
		return v;
	}
	uint64_t w;
	memcpy(&w, a->p + 5 * i, 8);
	return PK_LE64(w) & PK_MASK40;
}

/*
 * pk_set: element i (< a->n) becomes v (<= pk_none(a); higher bits are
 * dropped). Width 5 is not safe against threads setting elements within
 * 8 bytes (see the top of this file).
 */
static inline void pk_set(struct pk_array *a, uint64_t i, uint64_t v)
{
	if (__builtin_expect(a->width == 4, 1)) {
		uint32_t u = (uint32_t)v;
		memcpy(a->p + 4 * i, &u, 4);
		return;
	}
	uint64_t w;
	memcpy(&w, a->p + 5 * i, 8);
	w = PK_LE64((PK_LE64(w) & ~PK_MASK40) | (v & PK_MASK40));
	memcpy(a->p + 5 * i, &w, 8);
}

/*
 * pk_set_mt: pk_set for an array that several threads set at once: width 5
 * stores exactly the 5 bytes of element i, so threads setting distinct
 * elements do not race. A little slower than pk_set (two stores, not one).
 */
static inline void pk_set_mt(struct pk_array *a, uint64_t i, uint64_t v)
{
	if (__builtin_expect(a->width == 4, 1)) {
		uint32_t u = (uint32_t)v;
		memcpy(a->p + 4 * i, &u, 4);
		return;
	}
	uint64_t w = PK_LE64(v & PK_MASK40);
	memcpy(a->p + 5 * i, &w, 5);
}

/*
 * pk_csr_row: row i of a CSR whose start array is start (n + 1 offsets for
 * n rows, i < n): the row is [*begin, *end) of its target array.
 */
static inline void pk_csr_row(const struct pk_array *start, uint64_t i, uint64_t *begin,
			      uint64_t *end)
{
	*begin = pk_get(start, i);
	*end = pk_get(start, i + 1);
}

#endif
