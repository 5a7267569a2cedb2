/*
 * lq.c - the failures and the memory of an ANALYZE request (lq.h): how an
 * error ends the request (lq_raise, to the innermost guard), and the
 * bounded arena the request's tables and the heap view's scratch come
 * from (lq_alloc, lq_alloc_keep, marks). The JVM's side of the request
 * is lqheap.c.
 */
#include "lq.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lq_block {
	struct lq_block *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

/* ---- failure ---- */

void lq_raise(struct lq *q, enum lq_status st, const struct node *at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(q->msg, sizeof q->msg, fmt, ap);
	va_end(ap);
	q->status = st;
	q->line = at ? at->line : 0;
	q->col = at ? at->col : 0;
	longjmp(*q->fail, 1);
}

/* ---- memory ---- */

void *lq_alloc(struct lq *q, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (!n)
		n = 16;
	struct lq_block *b = q->blocks;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > 60000 ? n : 65536 - sizeof *b;
		if (q->mem_used + cap + sizeof *b > q->mem_limit)
			lq_raise(q, LQ_LIMIT, NULL, "the analysis needs more than the agent's memory "
				 "limit of %" PRIu64 " MiB", q->mem_limit >> 20);
		b = malloc(sizeof *b + cap);
		if (!b)
			lq_raise(q, LQ_LIMIT, NULL, "the agent ran out of memory");
		q->mem_used += cap + sizeof *b;
		b->cap = cap;
		b->used = 0;
		b->next = q->blocks;
		q->blocks = b;
	}
	void *p = b->data + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

void lq_free_arena(struct lq *q)
{
	while (q->blocks) {
		struct lq_block *n = q->blocks->next;
		free(q->blocks);
		q->blocks = n;
	}
	while (q->kept) {
		struct lq_block *n = q->kept->next;
		free(q->kept);
		q->kept = n;
	}
	q->mem_used = 0;
}

void lq_mark(struct lq *q, struct lq_mark *m)
{
	m->b = q->blocks;
	m->used = q->blocks ? q->blocks->used : 0;
}

void lq_release(struct lq *q, const struct lq_mark *m)
{
	while (q->blocks && q->blocks != m->b) {
		struct lq_block *n = q->blocks->next;
		q->mem_used -= q->blocks->cap + sizeof *q->blocks;
		free(q->blocks);
		q->blocks = n;
	}
	if (q->blocks)
		q->blocks->used = m->used;
}

void *lq_alloc_keep(struct lq *q, size_t n)
{
	struct lq_block *save = q->blocks;
	q->blocks = q->kept;
	void *p = lq_alloc(q, n);	/* a failure (longjmp) leaves kept blocks in blocks: */
	q->kept = q->blocks;		/* lq_free_arena frees both lists anyway */
	q->blocks = save;
	return p;
}

char *lq_strdup_keep(struct lq *q, const char *s, size_t n)
{
	char *d = lq_alloc_keep(q, n + 1);
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}
