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

#endif
