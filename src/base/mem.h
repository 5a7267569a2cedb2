/*
 * mem.h - allocation wrappers and the error record shared by every module.
 *
 * Ownership: every x* allocator returns memory the caller frees with free().
 * On exhaustion they print what could not be allocated and exit(3): a heap
 * analyser that silently runs on with half its index is worse than one that
 * stops and says why.
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

/*
 * Interruption: SIGINT sets hs_interrupted; long loops poll it and stop
 * with status HS_INTERRUPTED (SQLite's seenInterrupt).
 */
#include <signal.h>
extern volatile sig_atomic_t hs_interrupted;

/*
 * Progress: work that can take seconds (the dominator tree, dynamic sizes)
 * calls hs_progress(what, done, total) now and then, on the thread that
 * runs it, where it polls hs_interrupted. A front end that shows progress
 * sets hs_progress_fn for the work it starts and clears it after (the
 * shell: on a terminal only, src/shell/main.c); NULL shows nothing. Like
 * hs_interrupted, one per process (SQLite's progress handler).
 */
#include <stdint.h>
typedef void (*hs_progress_fn_t)(const char *what, uint64_t done, uint64_t total);
extern hs_progress_fn_t hs_progress_fn;
static inline void hs_progress(const char *what, uint64_t done, uint64_t total)
{
	if (hs_progress_fn)
		hs_progress_fn(what, done, total);
}

enum hs_status {
	HS_OK = 0,
	HS_ERR = -1,		/* failure described in the hs_error */
	HS_INTERRUPTED = -2	/* Ctrl-C */
};

#endif
