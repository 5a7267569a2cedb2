/*
 * arena.h - bump allocation for the query language: a snippet's syntax
 * tree and the values computed from it live in arenas freed all at once.
 * Ownership: arena_free releases every block handed out by arena_alloc.
 */
#ifndef HS_ARENA_H
#define HS_ARENA_H

#include <stddef.h>

struct arena_block;
struct arena {
	struct arena_block *head;
	size_t used;		/* bytes handed out, for statistics */
};

void *arena_alloc(struct arena *a, size_t n);	/* zeroed, 16-byte aligned */
char *arena_strndup(struct arena *a, const char *s, size_t n);
void arena_free(struct arena *a);
/* arena_adopt: src's blocks become dst's (freed with it); src is left empty. */
void arena_adopt(struct arena *dst, struct arena *src);
/*
 * arena_live_bytes: the bytes of every arena's blocks in the process now,
 * from any thread (the agent's watch bounds an analysis' memory by it).
 */
size_t arena_live_bytes(void);

#endif
