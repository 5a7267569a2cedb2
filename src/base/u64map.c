/* u64map.c - see u64map.h. */
#include "u64map.h"

#include <stdlib.h>

#include "mem.h"

static size_t slot(uint64_t key, size_t mask)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;	/* murmur3 finalizer */
	key ^= key >> 33;
	return (size_t)key & mask;
}

void u64map_init(struct u64map *m, size_t expected)
{
	size_t cap = 16;
	while (cap < expected * 2)
		cap *= 2;
	m->keys = xcalloc(cap, sizeof *m->keys);
	m->vals = xmallocarray(cap, sizeof *m->vals);
	m->cap = cap;
	m->len = 0;
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = m->vals = NULL;
	m->cap = m->len = 0;
}

static void grow(struct u64map *m)
{
	struct u64map n;
	u64map_init(&n, m->cap);
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			u64map_put(&n, m->keys[i], m->vals[i]);
	u64map_free(m);
	*m = n;
}

void u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	if ((m->len + 1) * 2 > m->cap)
		grow(m);
	size_t mask = m->cap - 1, i = slot(key, mask);
	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & mask;
	if (!m->keys[i]) {
		m->keys[i] = key;
		m->len++;
	}
	m->vals[i] = val;
}

bool u64map_get(const struct u64map *m, uint64_t key, uint64_t *val)
{
	if (!m->cap || !key)
		return false;
	size_t mask = m->cap - 1, i = slot(key, mask);
	while (m->keys[i]) {
		if (m->keys[i] == key) {
			*val = m->vals[i];
			return true;
		}
		i = (i + 1) & mask;
	}
	return false;
}
