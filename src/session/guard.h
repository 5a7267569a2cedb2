/*
 * guard.h - the session's calls run guarded (src/session only): under the
 * session's context (ctx.h: its interrupt flag, progress and memory pool),
 * with a catch, so that what the library cannot go on with (no memory, no
 * disk for a big array) ends the call with HS_ERR (or NULL) and the
 * message in s->err, never the process (issue 36; Lua's lua_pcall). A
 * front end's stage callback hears that the work ended.
 *
 * GUARDED(s, fail, call): return call's value, or fail after a throw.
 * GUARDED_VOID(s, call): the same for a call with no value.
 */
#ifndef HS_SESSION_GUARD_H
#define HS_SESSION_GUARD_H

#include <setjmp.h>

#include "../base/ctx.h"

struct hs_session;
/* guard_caught: after a throw to c: s's context left (for prev), s->err set, the stage ended. */
void guard_caught(struct hs_session *s, struct hs_ctx *prev, const struct hs_catch *c);
struct hs_ctx *guard_enter(struct hs_session *s);

/* GUARD_BEGIN: s's context entered and a catch pushed; after a throw, fail (a statement). */
#define GUARD_BEGIN(s, fail)                                    \
	struct hs_catch c_;                                     \
	struct hs_ctx *prev_ = guard_enter(s);                  \
	hs_catch_push(&c_);                                     \
	if (setjmp(c_.jb)) {                                    \
		guard_caught((s), prev_, &c_);                  \
		fail;                                           \
	}
/* GUARD_END: the catch popped and the context left, after the work returned. */
#define GUARD_END()                                             \
	hs_catch_pop(&c_);                                      \
	hs_ctx_enter(prev_)

#define GUARDED(s, fail, call)                                  \
	do {                                                    \
		GUARD_BEGIN(s, return fail)                     \
		__typeof__(call) r_ = call;                     \
		GUARD_END();                                    \
		return r_;                                      \
	} while (0)

#define GUARDED_VOID(s, call)                                   \
	do {                                                    \
		GUARD_BEGIN(s, return)                          \
		call;                                           \
		GUARD_END();                                    \
	} while (0)

#endif
