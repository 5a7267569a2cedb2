/*
 * ctx.h - the work context: what the library's long work on a thread
 * answers to, and where it goes when it cannot go on.
 *
 * A context (struct hs_ctx) is one session's: its interrupt flag (SQLite's
 * sqlite3_interrupt(db)), its progress callback (SQLite's progress
 * handler), and its memory pool (big.h: the budget and the spill folder
 * of its big arrays). Work runs under the context entered on its thread
 * (hs_ctx_enter); a thread that entered none runs under the process's own
 * (silent, never interrupted, the default pool). Worker threads made with
 * hs_thread_start run under their starter's.
 *
 * Errors that end a call: where the library cannot go on (no memory, no
 * disk for a big array, an array larger than the machine can address) it
 * calls hs_throw, which returns to the innermost hs_catch of the thread
 * (Lua's luaD_throw to lua_pcall): the call that set it returns HS_ERR
 * with the message, and the front end decides what to do. When that catch
 * is a session's guard (src/session/guard.h), the big arrays the failed
 * call had made go back, memory and spill files (big_pool_release, big.h),
 * but for what it had stored in the session before it failed; its
 * malloc'd memory (arrays under BIG_MIN bytes, names, maps) is not freed,
 * nor is anything after a throw to another catch (the shell's around its
 * own calls of the engine, a worker's): a leak, never a dangling pointer.
 * A front end with an error mechanism of its own sets a catch that raises
 * instead (Lua's lua_error: hs_catch_raise), so that a throw never unwinds
 * its frames but through it. With no catch on the thread, the message goes
 * to standard error and the process exits with status 3.
 *
 * Ownership: contexts and catches are their owner's (usually on its
 * stack, or in its session); nothing here allocates.
 */
#ifndef HS_CTX_H
#define HS_CTX_H

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

struct big_pool;

struct hs_ctx {
	volatile sig_atomic_t interrupted;	/* Ctrl-C: long loops stop with HS_INTERRUPTED */
	/* progress of work that takes seconds (what, done of total); NULL: none */
	void (*progress)(void *ud, const char *what, uint64_t done, uint64_t total);
	void *progress_ud;
	struct big_pool *pool;	/* big arrays' budget and folder (big_pool_new); NULL: the process's */
};

/*
 * hs_ctx_now: the context work on this thread runs under (never NULL).
 * hs_ctx_enter: c becomes it (NULL: the process's own); returns the one it
 * replaces, which the caller gives back to hs_ctx_enter when done.
 */
struct hs_ctx *hs_ctx_now(void);
struct hs_ctx *hs_ctx_enter(struct hs_ctx *c);

/*
 * hs_interrupted: the interrupt flag of the context on this thread, an
 * lvalue. Long loops poll it and stop with HS_INTERRUPTED; whoever
 * started a piece of work clears it first. hs_ctx_interrupt(c) sets c's
 * flag, from any thread or a signal handler.
 */
#define hs_interrupted (hs_ctx_now()->interrupted)
static inline void hs_ctx_interrupt(struct hs_ctx *c)
{
	c->interrupted = 1;
}

/*
 * hs_progress: work that can take seconds (the dominator tree, dynamic
 * sizes, the index) says how far it is: what, done of total (units of its
 * own), on the thread that runs it, where it also polls hs_interrupted.
 */
static inline void hs_progress(const char *what, uint64_t done, uint64_t total)
{
	struct hs_ctx *c = hs_ctx_now();
	if (c->progress)
		c->progress(c->progress_ud, what, done, total);
}

/* A point to return to (hs_catch_push, then setjmp(c.jb); hs_catch_pop when done). */
struct hs_catch {
	jmp_buf jb;
	struct hs_catch *prev;
	char msg[512];		/* after a throw: what went wrong, what to do */
	/* set by hs_catch_raise: a throw calls raise(ud, message) (which must
	 * not return) instead of returning to jb; the catch stays pushed */
	void (*raise)(void *ud, const char *msg);
	void *raise_ud;
};

/*
 * hs_catch_push: c becomes the innermost catch of this thread; the caller
 * then calls setjmp(c->jb): 0 the first time, nonzero after a throw (c is
 * then already popped and c->msg says why). hs_catch_pop: c (innermost)
 * goes, after the protected work returned normally.
 *
 *	struct hs_catch c;
 *	hs_catch_push(&c);
 *	if (setjmp(c.jb))
 *		return fail_with(c.msg);
 *	... work ...
 *	hs_catch_pop(&c);
 */
void hs_catch_push(struct hs_catch *c);
void hs_catch_pop(struct hs_catch *c);
/*
 * hs_catch_raise: push c as a catch that hands a throw to raise(ud, msg)
 * (no setjmp: raise unwinds by the front end's own means, to a point
 * below c); the front end pops c when what it protects has returned.
 */
void hs_catch_raise(struct hs_catch *c, void (*raise)(void *ud, const char *msg), void *ud);

/*
 * hs_throw: end the work under way with message fmt (what, where, what to
 * do): to the thread's innermost catch (or its raise), else to standard
 * error and exit(3). Release locks before calling it. Does not return.
 */
void hs_throw(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/*
 * A worker thread under its starter's context, whose throws come back to
 * the starter: hs_thread_start runs fn(arg) on a new thread (false when
 * none could be made: run fn on this thread instead); hs_thread_join waits
 * for it and, when it threw, throws its message on this thread.
 */
struct hs_thread {
	pthread_t t;
	void *(*fn)(void *);
	void *arg;
	struct hs_ctx *ctx;
	bool threw;
	char msg[512];
};
bool hs_thread_start(struct hs_thread *th, void *(*fn)(void *), void *arg);
void hs_thread_join(struct hs_thread *th);
/*
 * hs_thread_join_caught: for a starter whose own work threw while th ran
 * (its catch: msg): wait for th, then throw msg on. Never unwind past a
 * running worker: it writes into th, on the starter's stack.
 */
void hs_thread_join_caught(struct hs_thread *th, const char *msg) __attribute__((noreturn));
/*
 * hs_run_pair: fa(a) on this thread and fb(b) on a worker (both here, one
 * after the other, when threads is false or no thread could be made);
 * returns when both are done; a throw in either is thrown on after both.
 */
void hs_run_pair(void *(*fa)(void *), void *a, void *(*fb)(void *), void *b, bool threads);

#endif
