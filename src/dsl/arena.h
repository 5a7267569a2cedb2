/*
 * arena.h - bump allocation for the query language: a snippet's syntax
 * tree and the values computed from it live in arenas freed all at once.
 * Ownership: arena_free releases every block handed out by arena_alloc.
 */
#ifndef HS_ARENA_H
#define HS_ARENA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct arena_block {
	struct arena_block *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};
struct arena {
	struct arena_block *head;
	size_t used;		/* bytes handed out, for statistics */
};

void *arena_alloc(struct arena *a, size_t n);	/* zeroed, 16-byte aligned */
/*
 * arena_grow: array p of n elements of size bytes, whose room is *cap, with
 * room for one more: p itself, or a copy in a with twice the room (first
 * when *cap is 0); *cap updated. The old room stays in a, unused.
 */
void *arena_grow(struct arena *a, void *p, uint32_t n, uint32_t *cap, size_t size,
		 uint32_t first);
char *arena_strndup(struct arena *a, const char *s, size_t n);
void arena_free(struct arena *a);
/* arena_adopt: src's blocks become dst's (freed with it); src is left empty. */
void arena_adopt(struct arena *dst, struct arena *src);
/*
 * arena_live_bytes: the bytes of every arena's blocks in the process now,
 * from any thread (the agent's watch bounds an analysis' memory by it).
 */
size_t arena_live_bytes(void);

/*
 * Marks: arena_mark notes where a is; arena_release gives back what was
 * allocated since (blocks made since are freed, the head block is reused),
 * so that work repeated per element runs in the memory one element needs.
 * Marks nest (released in the reverse order); a gets its first block at
 * its first mark, so that a release keeps it. arena_owns: whether p lies
 * in a block of a (a walk of its blocks: cheap for an arena kept small).
 */
struct arena_mark {
	struct arena_block *head;
	size_t head_used, used;
};
void arena_first_block(struct arena *a);
void arena_release_blocks(struct arena *a, const struct arena_mark *m);
int arena_owns(const struct arena *a, const void *p);
static inline void arena_mark(struct arena *a, struct arena_mark *m)
{
	if (!a->head)
		arena_first_block(a);
	m->head = a->head;
	m->head_used = a->head->used;
	m->used = a->used;
}
static inline void arena_release(struct arena *a, const struct arena_mark *m)
{
	if (a->head != m->head)
		arena_release_blocks(a, m);
	/* the first bytes poisoned (allocations are 16-byte multiples): a value kept by
	 * mistake reads as garbage */
	size_t n = a->head->used - m->head_used;
	if (n) {
		uint64_t *p = (uint64_t *)(void *)(a->head->data + m->head_used);
		p[0] = p[1] = 0xA5A5A5A5A5A5A5A5u;
		if (n >= 32)
			p[2] = p[3] = 0xA5A5A5A5A5A5A5A5u;
	}
	a->head->used = m->head_used;
	a->used = m->used;
}

#endif
