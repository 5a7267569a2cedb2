/* mem.c - allocation wrappers and hs_error helpers; see mem.h. */
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t n)
{
	if (n == SIZE_MAX)
		hs_throw("out of memory: an allocation of more bytes than this machine can "
			 "address");
	hs_throw("out of memory allocating %zu bytes; close other programs, lower --memory, "
		 "or use a machine with more memory", n);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);
	if (!p)
		oom(count * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

void *xmallocarray(size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size)
		oom(SIZE_MAX);
	return xmalloc(count * size);
}

void *xreallocarray(void *p, size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size)
		oom(SIZE_MAX);
	return xrealloc(p, count * size);
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

void hs_error_set(struct hs_error *err, int64_t offset, const char *fmt, ...)
{
	if (!err)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	err->offset = offset;
	err->line = err->col = 0;
}

void hs_error_clear(struct hs_error *err)
{
	if (!err)
		return;
	err->msg[0] = 0;
	err->offset = -1;
	err->line = err->col = 0;
}

void *xgrow(void *p, uint64_t *cap, uint64_t need, size_t size)
{
	if (need <= *cap)
		return p;
	uint64_t c = *cap ? *cap * 2 : 1024;
	while (c < need)
		c *= 2;
	*cap = c;
	return xreallocarray(p, (size_t)c, size);
}
