/* ctx.c - the work context: interrupt, progress, pool, and throws; see ctx.h. */
#include "ctx.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct hs_ctx process_ctx;
static _Thread_local struct hs_ctx *cur;
static _Thread_local struct hs_catch *catches;

struct hs_ctx *hs_ctx_now(void)
{
	return cur ? cur : &process_ctx;
}

struct hs_ctx *hs_ctx_enter(struct hs_ctx *c)
{
	struct hs_ctx *prev = cur;
	cur = c;
	return prev;
}

void hs_catch_push(struct hs_catch *c)
{
	c->prev = catches;
	c->msg[0] = 0;
	c->raise = NULL;
	c->raise_ud = NULL;
	catches = c;
}

void hs_catch_raise(struct hs_catch *c, void (*raise)(void *ud, const char *msg), void *ud)
{
	hs_catch_push(c);
	c->raise = raise;
	c->raise_ud = ud;
}

void hs_catch_pop(struct hs_catch *c)
{
	if (catches == c)
		catches = c->prev;
}

void hs_throw(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	struct hs_catch *c = catches;
	if (c && c->raise) {
		memcpy(c->msg, msg, sizeof msg);
		c->raise(c->raise_ud, c->msg);	/* does not return */
		fprintf(stderr, "heapsh: %s\n", msg);
		exit(3);
	}
	if (c) {
		catches = c->prev;
		memcpy(c->msg, msg, sizeof msg);
		longjmp(c->jb, 1);
	}
	fprintf(stderr, "heapsh: %s\n", msg);
	exit(3);
}

/* run: a worker's body, under its starter's context, its throw kept for the join. */
static void *run(void *arg)
{
	struct hs_thread *th = arg;
	hs_ctx_enter(th->ctx);
	struct hs_catch c;
	hs_catch_push(&c);
	if (setjmp(c.jb)) {
		th->threw = true;
		memcpy(th->msg, c.msg, sizeof th->msg);
		return NULL;
	}
	void *r = th->fn(th->arg);
	hs_catch_pop(&c);
	return r;
}

bool hs_thread_start(struct hs_thread *th, void *(*fn)(void *), void *arg)
{
	th->fn = fn;
	th->arg = arg;
	th->ctx = cur;
	th->threw = false;
	th->msg[0] = 0;
	return pthread_create(&th->t, NULL, run, th) == 0;
}

void hs_thread_join(struct hs_thread *th)
{
	pthread_join(th->t, NULL);
	if (th->threw)
		hs_throw("%s", th->msg);
}

void hs_thread_join_caught(struct hs_thread *th, const char *msg)
{
	pthread_join(th->t, NULL);
	hs_throw("%s", msg);
}

void hs_run_pair(void *(*fa)(void *), void *a, void *(*fb)(void *), void *b, bool threads)
{
	struct hs_thread th;
	bool two = threads && hs_thread_start(&th, fb, b);
	struct hs_catch c;
	hs_catch_push(&c);
	if (setjmp(c.jb)) {
		if (two)
			hs_thread_join_caught(&th, c.msg);
		hs_throw("%s", c.msg);
	}
	fa(a);
	hs_catch_pop(&c);
	if (two)
		hs_thread_join(&th);
	else
		fb(b);
}
