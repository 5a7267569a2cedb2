/*
 * u64map.h - open-addressing hash map from nonzero uint64 keys to uint64
 * values (linear probing, power-of-two capacity, load <= 1/2). Used for
 * HPROF identifiers (string ids, class ids), which are never 0.
 * Ownership: the map owns its table; u64map_free releases it.
 */
#ifndef HS_U64MAP_H
#define HS_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64map {
	uint64_t *keys;		/* 0 marks an empty slot */
	uint64_t *vals;
	size_t cap, len;
};

void u64map_init(struct u64map *m, size_t expected);
void u64map_free(struct u64map *m);
/* u64map_put: insert or overwrite key (nonzero). */
void u64map_put(struct u64map *m, uint64_t key, uint64_t val);
/* u64map_get: true and *val set when key is present. */
bool u64map_get(const struct u64map *m, uint64_t key, uint64_t *val);

/*
 * u64_fnv1a_n: the 64-bit FNV-1a hash (Fowler, Noll, Vo) of the len bytes
 * at p, continuing from h (U64_FNV_BASIS to start a new hash); u64_fnv1a
 * the same of the NUL-terminated s. The one string hash of heapsh's tables.
 */
#define U64_FNV_BASIS 0xcbf29ce484222325ULL
static inline uint64_t u64_fnv1a_n(const void *p, size_t len, uint64_t h)
{
	const unsigned char *b = p;
	for (size_t k = 0; k < len; k++)
		h = (h ^ b[k]) * 0x100000001b3ULL;
	return h;
}
static inline uint64_t u64_fnv1a(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

#endif
