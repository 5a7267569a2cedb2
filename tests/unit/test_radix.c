/*
 * test_radix.c - radix_sort_u64 (src/base/radix.c) against qsort on random
 * keys: whole keys and bit ranges, stability within a range, keys that
 * share digits (skipped passes), and the empty and one-key cases; and
 * radix_sort_u64_2 (two threads) against radix_sort_u64, with halves whose
 * keys vary in different bits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/base/radix.h"
#define XORSHIFT_SEED 42
#include "xorshift.h"

static uint64_t r64(void)
{
	return (uint64_t)rnd(UINT32_MAX) << 32 | rnd(UINT32_MAX);
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Whole 64-bit keys, some with few varying bits: same order as qsort. */
static void test_whole_keys(void **state)
{
	(void)state;
	const size_t sizes[] = {0, 1, 2, 17, 1000, 100000};
	const uint64_t masks[] = {~0ULL, 0xffULL, 0xff00000000ULL, 0x8000000000000001ULL};
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
		for (size_t m = 0; m < sizeof masks / sizeof *masks; m++) {
			size_t n = sizes[s];
			uint64_t *k = malloc((n + 1) * sizeof *k), *tmp = malloc((n + 1) * sizeof *k);
			uint64_t *want = malloc((n + 1) * sizeof *k);
			for (size_t i = 0; i < n; i++)
				k[i] = want[i] = (r64() & masks[m]) | 0x1000;
			qsort(want, n, sizeof *want, by_value);
			const uint64_t *got = radix_sort_u64(k, tmp, n, 0, 64);
			assert_true(got == k || got == tmp);
			if (n)
				assert_memory_equal(got, want, n * sizeof *want);
			free(k);
			free(tmp);
			free(want);
		}
}

/* Sorting by the upper 32 bits keeps equal ones in their first order. */
static void test_stable_range(void **state)
{
	(void)state;
	size_t n = 50000;
	uint64_t *k = malloc(n * sizeof *k), *tmp = malloc(n * sizeof *k);
	for (size_t i = 0; i < n; i++)
		k[i] = (r64() % 300) << 32 | i;	/* many equal upper halves */
	const uint64_t *got = radix_sort_u64(k, tmp, n, 32, 64);
	for (size_t i = 1; i < n; i++) {
		assert_true(got[i - 1] >> 32 <= got[i] >> 32);
		if (got[i - 1] >> 32 == got[i] >> 32)
			assert_true((uint32_t)got[i - 1] < (uint32_t)got[i]);
	}
	free(k);
	free(tmp);
}

/*
 * radix_sort_u64_2 gives radix_sort_u64's keys, in the same order (so as
 * stably): whole keys and the upper halves with many equal ones, the halves'
 * keys varying in different digits (one half's passes would be skipped on
 * its own), and the sizes either side of the one-thread cut.
 */
static void test_two_threads(void **state)
{
	(void)state;
	const size_t sizes[] = {1000, 65535, 65536, 200001};
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
		for (int shape = 0; shape < 4; shape++) {
			size_t n = sizes[s];
			uint64_t *k = malloc(n * sizeof *k), *tmp = malloc(n * sizeof *k);
			uint64_t *k1 = malloc(n * sizeof *k), *tmp1 = malloc(n * sizeof *k);
			int lo = shape == 0 ? 0 : 32;
			for (size_t i = 0; i < n; i++) {
				uint64_t hi = shape == 1 ? r64() % 300	/* many equal */
					      : shape == 2 ? (i < n / 2 ? r64() & 0xff : r64() << 40 >> 40)
					      : r64() >> 32;
				k[i] = k1[i] = shape == 0 ? r64() : hi << 32 | i;
			}
			const uint64_t *want = radix_sort_u64(k1, tmp1, n, lo, 64);
			const uint64_t *got = radix_sort_u64_2(k, tmp, n, lo, 64);
			assert_true(got == k || got == tmp);
			for (size_t i = 0; i < n; i++)
				if (got[i] != want[i])
					fail_msg("n %zu, shape %d: key %zu is 0x%llx, one thread's 0x%llx",
						 n, shape, i, (unsigned long long)got[i],
						 (unsigned long long)want[i]);
			free(k);
			free(tmp);
			free(k1);
			free(tmp1);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_keys),
		cmocka_unit_test(test_stable_range),
		cmocka_unit_test(test_two_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
