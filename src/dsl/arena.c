/* arena.c - see arena.h. */
#include "arena.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"

static _Atomic size_t live;	/* bytes of every arena's blocks, for arena_live_bytes */

struct arena_block {
	struct arena_block *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};

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

size_t arena_live_bytes(void)
{
	return atomic_load_explicit(&live, memory_order_relaxed);
}
