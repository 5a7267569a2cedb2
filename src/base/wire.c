/*
 * wire.c - the codec's slow paths (wire.h): growing or draining a writer's
 * buffer, and the string forms. Built into heapsh and into the agent.
 */
#include "wire.h"

#include <stdio.h>
#include <stdlib.h>

#define FIRST_CAP 4096	/* a growable writer's first buffer */

const char *wire_strerror(int err)
{
	switch (err) {
	case WIRE_OK: return "no error";
	case WIRE_SHORT: return "it ends early";
	case WIRE_BAD: return "malformed";
	case WIRE_NOMEM: return "out of memory";
	case WIRE_LIMIT: return "too large";
	case WIRE_IO: return "a write failed";
	default: return "unknown error";
	}
}

static void w_fail(struct wire_w *w, int err)
{
	if (!w->err)
		w->err = err;
}

bool wire_w_sink(struct wire_w *w, size_t cap, bool (*sink)(void *ctx, const void *p, size_t n),
		 void *ctx)
{
	memset(w, 0, sizeof *w);
	w->sink = sink;
	w->ctx = ctx;
	w->cap = cap < 64 ? 64 : cap;
	w->p = malloc(w->cap);
	if (!w->p) {
		w->cap = 0;
		w_fail(w, WIRE_NOMEM);
		return false;
	}
	return true;
}

bool wire_file_sink(void *ctx, const void *p, size_t n)
{
	return fwrite(p, 1, n, ctx) == n;
}

bool wire_w_drain(struct wire_w *w)
{
	if (w->err)
		return false;
	if (!w->sink || !w->len)
		return true;
	if (!w->sink(w->ctx, w->p, w->len)) {
		w_fail(w, WIRE_IO);
		return false;
	}
	w->drained += w->len;
	w->len = 0;
	return true;
}

bool wire_w_room(struct wire_w *w, size_t n)
{
	if (w->err)
		return false;
	if (w->cap - w->len >= n)
		return true;
	if (w->sink) {
		if (!wire_w_drain(w))
			return false;
		if (w->cap >= n)
			return true;
	}
	if (n > SIZE_MAX / 2 - w->len || (w->max && w->len + n > w->max)) {
		w_fail(w, WIRE_LIMIT);
		return false;
	}
	size_t need = w->len + n, cap = w->cap ? w->cap : FIRST_CAP;
	while (cap < need)
		cap *= 2;
	if (w->max && cap > w->max)
		cap = w->max;
	uint8_t *q = realloc(w->p, cap);
	if (!q) {
		w_fail(w, WIRE_NOMEM);
		return false;
	}
	w->p = q;
	w->cap = cap;
	return true;
}

void wire_put_bytes_slow(struct wire_w *w, const void *src, size_t n)
{
	if (w->err)
		return;
	/* A sink's writer passes what its buffer cannot hold straight through. */
	if (w->sink && n > w->cap) {
		if (!wire_w_drain(w))
			return;
		if (!w->sink(w->ctx, src, n)) {
			w_fail(w, WIRE_IO);
			return;
		}
		w->drained += n;
		return;
	}
	uint8_t *q = wire_w_at(w, n);
	if (q)
		memcpy(q, src, n);
}

void wire_put_str(struct wire_w *w, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n > UINT32_MAX) {
		w_fail(w, WIRE_LIMIT);
		return;
	}
	wire_put32(w, (uint32_t)n);
	wire_put_bytes(w, s, n);
}

void wire_put_str16(struct wire_w *w, const char *s, size_t n)
{
	if (n > UINT16_MAX) {
		w_fail(w, WIRE_LIMIT);
		return;
	}
	wire_put16(w, (uint16_t)n);
	wire_put_bytes(w, s, n);
}

void wire_w_reset(struct wire_w *w)
{
	w->len = 0;
	w->err = WIRE_OK;
}

void wire_w_free(struct wire_w *w)
{
	free(w->p);
	memset(w, 0, sizeof *w);
}

const char *wire_get_str(struct wire_r *r, size_t *n)
{
	uint32_t k = wire_get32(r);
	const uint8_t *s = wire_get_bytes(r, k);
	*n = s ? k : 0;
	return (const char *)s;
}

const char *wire_get_str16(struct wire_r *r, size_t *n)
{
	uint16_t k = wire_get16(r);
	const uint8_t *s = wire_get_bytes(r, k);
	*n = s ? k : 0;
	return (const char *)s;
}

char *wire_get_strdup(struct wire_r *r, size_t max)
{
	size_t at = wire_offset(r);
	uint32_t k = wire_get32(r);
	if (k > max && !r->err) {
		r->err = WIRE_BAD;
		r->err_at = at;	/* the length's offset */
		return NULL;
	}
	const uint8_t *s = wire_get_bytes(r, k);
	if (!s)
		return NULL;
	char *c = malloc((size_t)k + 1);
	if (!c) {
		wire_r_fail(r, WIRE_NOMEM);
		return NULL;
	}
	memcpy(c, s, k);
	c[k] = 0;
	return c;
}
