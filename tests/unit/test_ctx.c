/*
 * test_ctx.c - the work context (src/base/ctx.h) and the memory pools
 * (src/base/big.h): what the library cannot go on with (no memory, no
 * folder for a big array, an array larger than the machine) returns to the
 * innermost catch with its message instead of ending the process; a
 * worker's throw comes back to its starter; interrupt flags, progress and
 * memory budgets are each context's own (issue 36); after a throw, the big
 * arrays made since a mark go back, memory and spill files, but for those
 * kept or committed before it, those made before the mark (moved or not)
 * and those of another pool.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <unistd.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/base/big.h"
#include "../../src/base/ctx.h"
#include "../../src/base/mem.h"

/* caught: run fn(arg) under a catch; true with msg set when it threw. */
static bool caught(void (*fn)(void *), void *arg, char *msg, size_t cap)
{
	struct hs_catch c;
	hs_catch_push(&c);
	if (setjmp(c.jb)) {
		snprintf(msg, cap, "%s", c.msg);
		return true;
	}
	fn(arg);
	hs_catch_pop(&c);
	msg[0] = 0;
	return false;
}

static void *volatile sink;

static void huge_malloc(void *arg)
{
	(void)arg;
	sink = xmalloc(SIZE_MAX / 2);
}

static void huge_array(void *arg)
{
	(void)arg;
	sink = big_alloc(SIZE_MAX / 4, 8);
}

static void big_past_budget(void *arg)
{
	sink = big_alloc(*(size_t *)arg, 1);
}

static void test_out_of_memory_throws(void **state)
{
	(void)state;
	char msg[512];
	assert_true(caught(huge_malloc, NULL, msg, sizeof msg));
	assert_non_null(strstr(msg, "out of memory allocating"));
	assert_true(caught(huge_array, NULL, msg, sizeof msg));
	assert_non_null(strstr(msg, "larger than this machine can address"));
	/* the catch is gone: a later throw goes to the next one out */
	assert_true(caught(huge_malloc, NULL, msg, sizeof msg));
}

static void test_no_disk_throws_and_pool_goes_on(void **state)
{
	(void)state;
	struct big_pool *p = big_pool_new(1 << 20, "/nonexistent/heapsh-spill");
	struct hs_ctx c = {.pool = p};
	struct hs_ctx *prev = hs_ctx_enter(&c);
	size_t in_budget = 512 << 10, past = 4u << 20;
	char msg[512];
	assert_false(caught(big_past_budget, &in_budget, msg, sizeof msg));
	void *kept = sink;
	assert_true(caught(big_past_budget, &past, msg, sizeof msg));
	assert_non_null(strstr(msg, "cannot make a 4.0 MB array"));
	assert_non_null(strstr(msg, "/nonexistent/heapsh-spill"));
	assert_non_null(strstr(msg, "--spill-dir"));
	/* the lock was given back and the pool still works */
	big_pool_configure(p, 64u << 20, NULL);
	assert_false(caught(big_past_budget, &past, msg, sizeof msg));
	big_free(sink);
	big_free(kept);
	hs_ctx_enter(prev);
	big_pool_free(p);
}

static void test_pools_count_apart(void **state)
{
	(void)state;
	struct big_pool *pa = big_pool_new(8u << 20, NULL), *pb = big_pool_new(8u << 20, NULL);
	struct hs_ctx a = {.pool = pa}, b = {.pool = pb};
	struct hs_ctx *prev = hs_ctx_enter(&a);
	void *x = big_alloc(6u << 20, 1);
	struct big_stats sa, sb;
	big_stats(&sa);
	hs_ctx_enter(&b);
	void *y = big_alloc(6u << 20, 1);	/* fits b's budget: a's array is not b's */
	big_stats(&sb);
	assert_int_equal(sa.budget, 8u << 20);
	assert_true(sa.anon >= (6u << 20) && sa.anon < (8u << 20));
	assert_true(sb.anon >= (6u << 20) && sb.anon < (8u << 20));
	assert_int_equal(sb.files, 0);
	/* an array freed under another context goes back to its own pool */
	big_free(x);
	hs_ctx_enter(&a);
	big_trim();
	big_stats(&sa);
	assert_int_equal(sa.anon, 0);
	hs_ctx_enter(&b);
	big_free(y);
	big_trim();
	big_stats(&sb);
	assert_int_equal(sb.anon, 0);
	hs_ctx_enter(prev);
	big_pool_free(pa);
	big_pool_free(pb);
}

static void test_interrupt_is_the_contexts(void **state)
{
	(void)state;
	struct hs_ctx a = {0}, b = {0};
	struct hs_ctx *prev = hs_ctx_enter(&a);
	hs_ctx_interrupt(&b);
	assert_false(hs_interrupted);
	hs_ctx_enter(&b);
	assert_true(hs_interrupted);
	hs_interrupted = 0;
	assert_false(b.interrupted);
	hs_ctx_enter(prev);
}

struct work {
	bool throws;
	bool interrupted;	/* what the worker saw */
	bool done;
};

static void *work(void *arg)
{
	struct work *w = arg;
	w->interrupted = hs_interrupted;
	if (w->throws)
		sink = xmalloc(SIZE_MAX / 2);
	w->done = true;
	return NULL;
}

static void pair(void *arg)
{
	struct work *w = arg;
	hs_run_pair(work, &w[0], work, &w[1], true);
}

static void test_worker_throw_comes_back(void **state)
{
	(void)state;
	struct hs_ctx c = {0};
	struct hs_ctx *prev = hs_ctx_enter(&c);
	hs_ctx_interrupt(&c);
	struct work w[2] = {{false, false, false}, {true, false, false}};
	char msg[512];
	assert_true(caught(pair, w, msg, sizeof msg));
	assert_non_null(strstr(msg, "out of memory"));
	assert_true(w[0].done);
	assert_false(w[1].done);
	assert_true(w[0].interrupted && w[1].interrupted);	/* the worker ran under c */
	/* the starter's own throw waits for the worker first */
	struct work v[2] = {{true, false, false}, {false, false, false}};
	assert_true(caught(pair, v, msg, sizeof msg));
	assert_true(v[1].done);
	hs_ctx_enter(prev);
}

static void progress(void *ud, const char *what, uint64_t done, uint64_t total)
{
	(void)what;
	*(uint64_t *)ud = done * 100 + total;
}

static void test_progress_is_the_contexts(void **state)
{
	(void)state;
	uint64_t heard = 0;
	struct hs_ctx c = {.progress = progress, .progress_ud = &heard};
	hs_progress("x", 1, 2);	/* the process's context: nobody listens */
	assert_int_equal(heard, 0);
	struct hs_ctx *prev = hs_ctx_enter(&c);
	hs_progress("x", 3, 4);
	hs_ctx_enter(prev);
	assert_int_equal(heard, 304);
}

static bool raised;
static jmp_buf front_end;

static void raise_here(void *ud, const char *msg)
{
	(void)ud;
	raised = strstr(msg, "out of memory") != NULL;
	longjmp(front_end, 1);
}

static void test_raise_catch(void **state)
{
	(void)state;
	struct hs_catch c;
	hs_catch_raise(&c, raise_here, NULL);
	if (!setjmp(front_end))
		huge_malloc(NULL);
	hs_catch_pop(&c);
	assert_true(raised);
}

/* ---- giving back what a failed call made (big_mark, big_pool_release) ---- */

static char spill[256];

static int make_spill(void **state)
{
	(void)state;
	snprintf(spill, sizeof spill, "%s/heapsh-test-ctx-XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(spill));
	return 0;
}

static int remove_spill(void **state)
{
	(void)state;
	rmdir(spill);
	return 0;
}

/* readable: whether p's page is mapped readable (/proc/self/maps). */
static bool readable(const void *p)
{
	FILE *f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	char line[512];
	bool r = false;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 &&
		    (uintptr_t)p >= lo && (uintptr_t)p < hi) {
			r = perms[0] == 'r';
			break;
		}
	}
	fclose(f);
	return r;
}

#define KB (1u << 10)
#define MB (1u << 20)

static void fill(uint8_t *a, size_t n, uint8_t v)
{
	memset(a, v, n);
}

static bool holds(const uint8_t *a, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != v)
			return false;
	return true;
}

/* What a call makes before it fails (big_past_budget's throw at the end). */
struct call {
	struct big_pool *p, *other;
	uint8_t *old;		/* made before the mark; the call moves it to a file */
	uint8_t *committed;	/* stored in the session before more work (big_pool_keep) */
	uint8_t *kept;		/* a cache the call stored in an older object (big_keep) */
	uint8_t *file, *anon;	/* made by the call, after the commit: in a file, in memory */
	uint8_t *freed;		/* made and freed by the call itself */
	uint8_t *elsewhere;	/* made under another pool's context */
};

static void failing_call(void *arg)
{
	struct call *c = arg;
	c->old = big_evict(c->old);	/* moved: still the array made before the mark */
	assert_non_null(c->old);
	c->committed = big_alloc(512 * KB, 1);
	fill(c->committed, 512 * KB, 5);
	big_pool_keep(c->p);
	c->freed = big_alloc(256 * KB, 1);
	big_free(c->freed);
	c->anon = big_alloc(128 * KB, 1);	/* 640 KB of the 1 MB budget used */
	fill(c->anon, 128 * KB, 3);
	c->kept = big_keep(big_alloc(128 * KB, 1));
	fill(c->kept, 128 * KB, 4);
	c->file = big_alloc(2 * MB, 1);	/* past the budget: a spill file */
	fill(c->file, 2 * MB, 2);
	struct hs_ctx o = {.pool = c->other};
	struct hs_ctx *mine = hs_ctx_enter(&o);
	c->elsewhere = big_alloc(128 * KB, 1);
	fill(c->elsewhere, 128 * KB, 7);
	hs_ctx_enter(mine);
	size_t huge = SIZE_MAX / 4;
	big_past_budget(&huge);	/* throws */
}

static void test_release_gives_back_since_the_mark(void **state)
{
	(void)state;
	struct big_pool *p = big_pool_new(1 * MB, spill);
	struct big_pool *other = big_pool_new(8 * MB, spill);
	struct hs_ctx c = {.pool = p};
	struct hs_ctx *prev = hs_ctx_enter(&c);
	struct call call = {.p = p, .other = other};
	call.old = big_alloc(256 * KB, 1);
	fill(call.old, 256 * KB, 1);
	uint64_t mark = big_mark();
	char msg[512];
	assert_true(caught(failing_call, &call, msg, sizeof msg));
	struct big_stats failed;
	big_stats(&failed);
	assert_int_equal(failed.files, 2);	/* old, moved there, and file */
	big_pool_release(p, mark);
	struct big_stats st;
	big_stats(&st);
	/* The call's spill file and memory are gone; what it stored is not. */
	assert_true(holds(call.old, 256 * KB, 1));
	assert_true(holds(call.committed, 512 * KB, 5));
	assert_true(holds(call.kept, 128 * KB, 4));
	assert_true(readable(call.old) && readable(call.committed) && readable(call.kept));
	assert_false(readable(call.file));
	assert_false(readable(call.anon));
	assert_int_equal(big_spilled_bytes(call.file), 0);
	assert_int_equal(st.files, 1);	/* old */
	assert_int_equal(st.anon + st.file, (uint64_t)256 * KB + 512 * KB + 128 * KB);
	/* another pool's array, made during the call, is that pool's */
	assert_true(holds(call.elsewhere, 128 * KB, 7));
	/* given back, their addresses stay taken until big_free, which works */
	big_free(call.file);
	big_free(call.anon);
	struct big_stats freed;
	big_stats(&freed);
	assert_int_equal(freed.anon + freed.file, st.anon + st.file);
	/* a second release from the same mark finds nothing more */
	big_pool_release(p, mark);
	assert_true(holds(call.kept, 128 * KB, 4));
	big_free(call.old);
	big_free(call.committed);
	big_free(call.kept);
	big_free(call.elsewhere);
	big_trim();
	big_stats(&st);
	assert_int_equal(st.anon + st.file, 0);
	assert_int_equal(st.files, 0);
	hs_ctx_enter(prev);
	big_pool_free(p);
	big_pool_free(other);
}

/* A call that commits the heap it opened, then fails computing more. */
struct open_then_fail {
	uint8_t *heap[3];
	uint8_t *tree;
	struct big_pool *p;
	uint64_t inner_mark;
	bool inner_threw;
};

static void inner_call(void *arg)
{
	struct open_then_fail *o = arg;
	o->tree = big_alloc(3 * MB, 1);
	fill(o->tree, 3 * MB, 9);
	size_t huge = SIZE_MAX / 4;
	big_past_budget(&huge);
}

static void outer_call(void *arg)
{
	struct open_then_fail *o = arg;
	for (int k = 0; k < 3; k++) {
		o->heap[k] = big_alloc(1 * MB, 1);
		fill(o->heap[k], 1 * MB, (uint8_t)(10 + k));
	}
	big_pool_keep(o->p);	/* the heap is the session's now */
	/* a guarded call inside: it fails and gives back its own work only */
	o->inner_mark = big_mark();
	char msg[512];
	o->inner_threw = caught(inner_call, o, msg, sizeof msg);
	big_pool_release(o->p, o->inner_mark);
	size_t huge = SIZE_MAX / 4;
	big_past_budget(&huge);
}

static void test_release_keeps_what_was_committed(void **state)
{
	(void)state;
	struct big_pool *p = big_pool_new(2 * MB, spill);
	struct hs_ctx c = {.pool = p};
	struct hs_ctx *prev = hs_ctx_enter(&c);
	struct open_then_fail o = {.p = p};
	uint64_t mark = big_mark();
	char msg[512];
	assert_true(caught(outer_call, &o, msg, sizeof msg));
	assert_true(o.inner_threw);
	assert_false(readable(o.tree));	/* the inner call's tree went with it */
	big_pool_release(p, mark);
	for (int k = 0; k < 3; k++) {
		assert_true(readable(o.heap[k]));
		assert_true(holds(o.heap[k], 1 * MB, (uint8_t)(10 + k)));
	}
	struct big_stats st;
	big_stats(&st);
	assert_int_equal(st.anon + st.file, 3 * MB);
	big_free(o.tree);
	for (int k = 0; k < 3; k++)
		big_free(o.heap[k]);
	hs_ctx_enter(prev);
	big_pool_free(p);
}

/* Workers allocate in their starter's pool; their arrays go back with the call's. */
struct half {
	uint8_t *a;
	bool throws;
};

static void *half_work(void *arg)
{
	struct half *h = arg;
	h->a = big_alloc(2 * MB, 1);
	fill(h->a, 2 * MB, 1);
	if (h->throws) {
		size_t huge = SIZE_MAX / 4;
		big_past_budget(&huge);
	}
	return NULL;
}

static void two_halves(void *arg)
{
	struct half *h = arg;
	hs_run_pair(half_work, &h[0], half_work, &h[1], true);
}

static void test_release_takes_the_workers_arrays(void **state)
{
	(void)state;
	struct big_pool *p = big_pool_new(1 * MB, spill);
	struct hs_ctx c = {.pool = p};
	struct hs_ctx *prev = hs_ctx_enter(&c);
	struct half h[2] = {{NULL, false}, {NULL, true}};
	uint64_t mark = big_mark();
	char msg[512];
	assert_true(caught(two_halves, h, msg, sizeof msg));
	big_pool_release(p, mark);
	assert_false(readable(h[0].a));
	assert_false(readable(h[1].a));
	struct big_stats st;
	big_stats(&st);
	assert_int_equal(st.anon + st.file, 0);
	assert_int_equal(st.files, 0);
	big_free(h[0].a);
	big_free(h[1].a);
	hs_ctx_enter(prev);
	big_pool_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_out_of_memory_throws),
		cmocka_unit_test(test_no_disk_throws_and_pool_goes_on),
		cmocka_unit_test(test_pools_count_apart),
		cmocka_unit_test(test_interrupt_is_the_contexts),
		cmocka_unit_test(test_worker_throw_comes_back),
		cmocka_unit_test(test_progress_is_the_contexts),
		cmocka_unit_test(test_raise_catch),
		cmocka_unit_test_setup_teardown(test_release_gives_back_since_the_mark, make_spill,
						remove_spill),
		cmocka_unit_test_setup_teardown(test_release_keeps_what_was_committed, make_spill,
						remove_spill),
		cmocka_unit_test_setup_teardown(test_release_takes_the_workers_arrays, make_spill,
						remove_spill),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
