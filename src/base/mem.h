/*
 * mem.h - allocation wrappers and the error record shared by every module.
 *
 * Ownership: every x* allocator returns memory the caller frees with free().
 * On exhaustion they throw (hs_throw, ctx.h): the call under way ends with
 * HS_ERR saying what could not be allocated, since a heap analyser that
 * silently runs on with half its index is worse than one that stops and
 * says why; the session and the process go on.
 */
#ifndef HS_MEM_H
#define HS_MEM_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/* xmallocarray: count * size bytes, checking the product for overflow. */
void *xmallocarray(size_t count, size_t size);
void *xreallocarray(void *p, size_t count, size_t size);
/*
 * xgrow: array p of *cap elements of size bytes made room for need of them
 * (doubling, at least 1024; *cap updated): the array, moved perhaps.
 */
void *xgrow(void *p, uint64_t *cap, uint64_t need, size_t size);

/* xasprintf: a freshly allocated formatted string; the caller frees it. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * struct hs_error - where and why an operation failed.
 * offset is a byte offset into the input file (or -1 when not about a file
 * position); line/col locate errors in query text (0 when unused). The shell
 * formats it; modules below the shell never print.
 */
struct hs_error {
	char msg[512];
	int64_t offset;
	int line, col;
};

/* hs_error_set: fill err (may be NULL) with a formatted message at offset. */
void hs_error_set(struct hs_error *err, int64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void hs_error_clear(struct hs_error *err);

/* Interruption (hs_interrupted) and progress (hs_progress) are the work context's: ctx.h. */
#include "ctx.h"

enum hs_status {
	HS_OK = 0,
	HS_ERR = -1,		/* failure described in the hs_error */
	HS_INTERRUPTED = -2	/* Ctrl-C */
};

#endif
