/*
 * test_ctx.c - the work context (src/base/ctx.h) and the memory pools
 * (src/base/big.h): what the library cannot go on with (no memory, no
 * folder for a big array, an array larger than the machine) returns to the
 * innermost catch with its message instead of ending the process; a
 * worker's throw comes back to its starter; interrupt flags, progress and
 * memory budgets are each context's own (issue 36).
 */
#include <setjmp.h>
#include <stdarg.h>
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
