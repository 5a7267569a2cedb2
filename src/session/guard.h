/*
 * guard.h - the session's calls run guarded (src/session only): under the
 * session's context (ctx.h: its interrupt flag, progress and memory pool),
 * with a catch, so that what the library cannot go on with (no memory, no
 * disk for a big array) ends the call with HS_ERR (or NULL) and the
 * message in s->err, never the process (issue 36; Lua's lua_pcall). A
 * front end's stage callback hears that the work ended.
 *
 * After a throw the big arrays the failed call made in s's pool go back,
 * memory and spill files (big_pool_release, src/base/big.h), but for what
 * it had stored in the session before: where a call stores what it made
 * (the heap it opened, a tree it computed) and goes on with more work, it
 * calls guard_keep(s) right after the store. A call that returns keeps
 * what it made (its caller, or the session, holds it now), so a guarded
 * call inside another (hs_dom in hs_suspects, hs_open in hs_snapshot)
 * gives back only its own work when it fails, and the outer one keeps
 * what the inner one finished.
 *
 * GUARDED(s, fail, call): return call's value, or fail after a throw.
 * GUARDED_VOID(s, call): the same for a call with no value.
 */
#ifndef HS_SESSION_GUARD_H
#define HS_SESSION_GUARD_H

#include <setjmp.h>

#include "../base/big.h"
#include "../base/ctx.h"

struct hs_session;
/*
 * guard_caught: after a throw to c: the big arrays of s's pool born after
 * mark given back (but those kept), s's context left (for prev), s->err
 * set, the stage ended.
 */
void guard_caught(struct hs_session *s, struct hs_ctx *prev, const struct hs_catch *c,
		  uint64_t mark);
struct hs_ctx *guard_enter(struct hs_session *s);
/* guard_keep: what s's calls under way have made so far is kept, whatever throws later. */
void guard_keep(struct hs_session *s);

/* GUARD_BEGIN: s's context entered, the mark taken, a catch pushed; after a throw, fail (a statement). */
#define GUARD_BEGIN(s, fail)                                    \
	struct hs_catch c_;                                     \
	struct hs_ctx *prev_ = guard_enter(s);                  \
	uint64_t mark_ = big_mark();                            \
	hs_catch_push(&c_);                                     \
	if (setjmp(c_.jb)) {                                    \
		guard_caught((s), prev_, &c_, mark_);           \
		fail;                                           \
	}
/* GUARD_END: after the work returned, what it made kept, the catch popped and the context left. */
#define GUARD_END(s)                                            \
	if (big_mark() != mark_)                                \
		guard_keep(s);                                  \
	hs_catch_pop(&c_);                                      \
	hs_ctx_enter(prev_)

#define GUARDED(s, fail, call)                                  \
	do {                                                    \
		GUARD_BEGIN(s, return fail)                     \
		__typeof__(call) r_ = call;                     \
		GUARD_END(s);                                   \
		return r_;                                      \
	} while (0)

#define GUARDED_VOID(s, call)                                   \
	do {                                                    \
		GUARD_BEGIN(s, return)                          \
		call;                                           \
		GUARD_END(s);                                   \
	} while (0)

#endif
