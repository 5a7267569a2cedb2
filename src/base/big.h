/*
 * big.h - arrays that may live beyond memory: the per-object and
 * per-reference arrays of the heap model and the engine.
 *
 * A big array is anonymous memory while the process's big arrays fit
 * the memory budget; past it, it is a shared mapping of an unlinked file
 * in the spill folder, whose pages the kernel writes back and reclaims
 * under pressure instead of swapping or killing the process
 * (docs/out-of-core.md). Either way it is plain memory to the code that
 * uses it. The file's blocks are reserved when the array is made
 * (posix_fallocate), so a full disk is an error up front, never a SIGBUS
 * later; they are released when the array is freed or the process ends.
 *
 * The budget counts the big arrays only: what a heap needs beyond them
 * (classes, names, maps) is a few bytes per class and string. A budget,
 * its spill folder and the arrays made under it are a pool (struct
 * big_pool); a session has its own (hs_session_set_memory), entered with
 * its context (ctx.h) for its calls: arrays made under a context count in
 * its pool, and only that pool's arrays move to files to make room in it.
 * Work under no session's context uses the process's pool.
 *
 * Ownership: big_alloc and big_realloc return memory the caller releases
 * with big_free, never free(); big_free also takes memory from malloc
 * (arrays under BIG_MIN bytes are malloc'd), so a field that is sometimes
 * one and sometimes the other is always freed with big_free. Exhaustion of
 * memory or disk throws (hs_throw, ctx.h), as xmalloc: the call under way
 * ends with HS_ERR saying what could not be had and what to do, and the
 * big arrays it had made go back (big_pool_release, below): code that
 * stores an array it made into an object older than the call under way
 * keeps it (big_keep), else a throw later in the same call gives it back
 * and the object faults on its next use.
 */
#ifndef HS_BIG_H
#define HS_BIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mem.h"

#define BIG_MIN (64u << 10)	/* smaller arrays are malloc'd, outside the budget */

/*
 * big_pool_new: a pool with a memory budget in bytes (0: the default, half
 * of the physical memory or of the cgroup's limit when lower) and a spill
 * folder (NULL: $TMPDIR, else /var/tmp, else /tmp, skipping tmpfs, whose
 * pages are memory); the caller frees it with big_pool_free, after the
 * arrays made in it (any left count in the process's pool from then on).
 * big_pool_configure: a new budget and folder for pool (NULL: the
 * process's), for arrays made after the call. big_configure: the same for
 * the pool of the context on this thread.
 */
struct big_pool;
struct big_pool *big_pool_new(uint64_t budget, const char *dir);
void big_pool_configure(struct big_pool *pool, uint64_t budget, const char *dir);
void big_pool_free(struct big_pool *pool);
void big_configure(uint64_t budget, const char *dir);

/* big_default_budget: what budget 0 means on this machine, in bytes. */
uint64_t big_default_budget(void);

/* big_parse_size: "8G", "512M", "1.5g", "300000K", "1T", bytes without a unit;
 * 0 when text is not a size. */
uint64_t big_parse_size(const char *text);

/* big_alloc: count * size bytes, zeroed, in the pool of the context on this
 * thread. Never NULL (throws on exhaustion). */
void *big_alloc(size_t count, size_t size);
/*
 * big_realloc: resize p (from big_alloc, big_realloc, malloc, or NULL) to
 * count * size bytes, keeping the common prefix; new bytes are zero when p
 * was a big array, unspecified when it was malloc'd.
 */
void *big_realloc(void *p, size_t count, size_t size);
/*
 * big_free: release p (a big array, malloc'd memory or NULL). An anonymous
 * array of 1 MiB or more is kept, up to 8 of them, as a spare: a later
 * big_alloc reuses its pages (zeroed by memset, not cleared by the kernel on
 * first touch). Spares count in the budget, go first when room is needed,
 * and are released by big_trim.
 */
void big_free(void *p);
/* big_trim: release every spare (big_free) of the context's pool: call
 * when the work is done and the session will wait, so memory at rest holds
 * only live arrays. */
void big_trim(void);

/*
 * big_demote: move big array p (from big_alloc or big_realloc) out of
 * memory into a file, when the budget is short of room for need more bytes
 * of arrays that will be used in random order; returns where p now is (p
 * itself when it stays). For an array about to be read only in order while
 * others are written all over: they get the memory, it gets the file.
 */
void *big_demote(void *p, uint64_t need);
/*
 * big_evict: move big array p into a file now, whatever the budget, and
 * drop its pages from this process: they stay in the file (the kernel
 * writes them back and may reclaim them) and are read again when touched.
 * For an array a long computation does not use, so its memory goes to the
 * computation. Returns where p now is (use it from now on), or NULL with p
 * unchanged when p is not a big array or no file could be made.
 */
void *big_evict(void *p);

/*
 * big_spilled_bytes: the bytes of the file big array p is in (its mapped
 * length), or 0 when it is in memory or not a big array.
 *
 * big_rehome: big array p, in a spill file, is the same bytes as file fd
 * from offset off on (a multiple of the page size), as far as p's length:
 * map that over it, private (a write to p goes to memory, never to fd's
 * file), so that its spill file, and that file's blocks on disk, go. For
 * an array just written into another file (the index, idx_put_parts), so
 * that the disk holds it once. The caller keeps fd's file at least that
 * long while p is used; pages of p past it are not to be touched. True
 * when done; false, p unchanged, when p is not an array in a spill file
 * or off is not aligned. Ownership is unchanged (big_free unmaps it).
 */
uint64_t big_spilled_bytes(const void *p);
bool big_rehome(void *p, int fd, uint64_t off);

/*
 * big_settle: big array p (from big_alloc or big_realloc; anything else is
 * ignored) is read from now on, or written only in order: when a later
 * array needs room in the budget, settled arrays in memory move to files
 * first, the first settled first, so memory goes to arrays written in
 * random order (a tree's links, a path compression's forest), whose pages
 * in a file the kernel would write back again and again. The array keeps
 * its address and contents: the file is mapped over it. So a settled
 * array must not be written by another thread while this one may make a
 * big array. Ownership is unchanged.
 */
void big_settle(void *p);

/*
 * Giving back what a failed call made (ctx.h: a throw to a session's
 * guard, src/session/guard.h). Every big array is born with a count of
 * the arrays made so far, in every pool; an array moved or resized
 * (big_realloc, big_demote, big_evict) keeps its count, an array grown out
 * of malloc'd memory gets a new one.
 *
 * big_mark: that count now, taken when a call begins (inline: every
 * guarded call takes it, and a query asks hs_dom once per object).
 *
 * big_pool_release: every array of pool (NULL: the process's) born after
 * mark and not kept gives back its memory and its spill file (and the
 * file's blocks on disk): for a call that failed, whose work made them.
 * Their addresses stay taken, unreadable, until big_free: a pointer the
 * call left behind faults, never reads another array, and freeing it
 * works (resizing it throws: keeping such a pointer is a bug). What the
 * call freed itself is gone already; what it made under another pool
 * (another session's) is that pool's. The pool's arrays born after mark
 * must all be the call's: a session's calls run one at a time, and their
 * worker threads have ended before a throw reaches the guard (hs_run_pair,
 * hs_thread_join, ctx.h).
 *
 * big_keep: array p outlives the call under way, so big_pool_release
 * leaves it: for a cache the call stores in an object older than itself
 * (the heap's incoming references, a dominator tree's depths), made whole
 * before it is stored, and kept as it is stored. Returns p (malloc'd
 * memory and NULL pass through).
 *
 * big_pool_keep: every array of pool born so far outlives the call under
 * way: for a call that has stored what it made in its session (the heap it
 * opened, the tree it computed) and goes on, and at the end of each call.
 * Keeping more than what was stored costs memory, never correctness.
 */
extern uint64_t big_made;	/* the count (big.c); read it with big_mark */
static inline uint64_t big_mark(void)
{
	return __atomic_load_n(&big_made, __ATOMIC_RELAXED);
}
void big_pool_release(struct big_pool *pool, uint64_t mark);
void *big_keep(void *p);
void big_pool_keep(struct big_pool *pool);

/* What the big arrays hold now and held at most, in bytes. */
struct big_stats {
	uint64_t budget;	/* the budget in force */
	uint64_t anon, anon_peak;	/* in anonymous memory */
	uint64_t file, file_peak;	/* in file-backed mappings */
	uint64_t files;		/* file-backed arrays now */
	const char *dir;	/* the spill folder, or NULL before the first file */
};
void big_stats(struct big_stats *st);

/*
 * big_plan: before work whose big arrays will take need bytes at their
 * peak, counted of them already made (arrays in memory the work will
 * reuse or free: they leave room in the budget), say how many go to disk
 * (*spill, 0 when all fit the budget) and check that the spill folder has
 * that much free. HS_ERR with err saying how much disk, where, and what to
 * do when it has not; HS_OK otherwise.
 */
int big_plan(uint64_t need, uint64_t counted, uint64_t *spill, struct hs_error *err);

/* big_spill_dir: the spill folder big_plan and file-backed arrays use. */
const char *big_spill_dir(void);
/* big_disk_free: bytes free to this user in folder dir (0 if unknown). */
uint64_t big_disk_free(const char *dir);

#endif
