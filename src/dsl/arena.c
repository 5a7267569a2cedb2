/* arena.c - see arena.h. */
#include "arena.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"

static _Atomic size_t live;	/* bytes of every arena's blocks, for arena_live_bytes */

void *arena_alloc(struct arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	struct arena_block *b = a->head;
	if (!b || b->size - b->used < n) {
		size_t size = n > 65536 ? n : 65536;
		b = xmalloc(sizeof *b + size);
		atomic_fetch_add_explicit(&live, sizeof *b + size, memory_order_relaxed);
		b->size = size;
		b->used = 0;
		b->next = a->head;
		a->head = b;
	}
	void *p = b->data + b->used;
	b->used += n;
	a->used += n;
	memset(p, 0, n);
	return p;
}

void *arena_grow(struct arena *a, void *p, uint32_t n, uint32_t *cap, size_t size,
		 uint32_t first)
{
	if (n < *cap)
		return p;
	uint32_t c = *cap ? *cap * 2 : first;
	void *q = arena_alloc(a, (size_t)c * size);
	if (n)
		memcpy(q, p, (size_t)n * size);
	*cap = c;
	return q;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *d = arena_alloc(a, n + 1);
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

void arena_free(struct arena *a)
{
	struct arena_block *b = a->head;
	while (b) {
		struct arena_block *next = b->next;
		atomic_fetch_sub_explicit(&live, sizeof *b + b->size, memory_order_relaxed);
		free(b);
		b = next;
	}
	a->head = NULL;
	a->used = 0;
}

void arena_adopt(struct arena *dst, struct arena *src)
{
	if (!src->head)
		return;
	if (!dst->head) {
		dst->head = src->head;
	} else {
		struct arena_block *b = dst->head;
		while (b->next)
			b = b->next;
		b->next = src->head;	/* after dst's own: dst goes on allocating in its head */
	}
	dst->used += src->used;
	src->head = NULL;
	src->used = 0;
}

void arena_first_block(struct arena *a)
{
	arena_alloc(a, 0);
}

void arena_release_blocks(struct arena *a, const struct arena_mark *m)
{
	while (a->head && a->head != m->head) {
		struct arena_block *next = a->head->next;
		atomic_fetch_sub_explicit(&live, sizeof *a->head + a->head->size,
					  memory_order_relaxed);
		free(a->head);
		a->head = next;
	}
}

int arena_owns(const struct arena *a, const void *p)
{
	const unsigned char *c = p;
	for (const struct arena_block *b = a->head; b; b = b->next)
		if (c >= b->data && c < b->data + b->used)
			return 1;
	return 0;
}

size_t arena_live_bytes(void)
{
	return atomic_load_explicit(&live, memory_order_relaxed);
}
