/*
 * test_packed.c - tests of the packed index arrays (src/base/packed.h):
 * round trips at widths 4 and 5 at the edges of each width, sets that leave
 * their neighbours alone, resizes that keep the prefix, and the proof past
 * 2^32: an array of 2^32 + 1000 elements and a CSR over more than 2^32
 * references, in mappings of sparse files (21 GB each, of which the test
 * writes a few MB), read and written around index 2^32 and at thousands
 * of scattered indexes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/base/packed.h"

#define XORSHIFT_SEED 88172645463325252ULL
#include "xorshift.h"

#define P32 (UINT64_C(1) << 32)
#define P40 (UINT64_C(1) << 40)
#define SPARSE_MAX_TOUCH (64u << 20)	/* the disk a past-2^32 test may write */

/* rnd64: a number in [0, bound): one xorshift step, then its whole state. */
static uint64_t rnd64(uint64_t bound)
{
	(void)rnd(1);
	return rng % bound;
}

static void test_width_for(void **state)
{
	(void)state;
	assert_int_equal(pk_width_for(0), 4);
	assert_int_equal(pk_width_for(P32 - 2), 4);
	assert_int_equal(pk_width_for(P32 - 1), 4);
	assert_int_equal(pk_width_for(P32), 5);
	assert_int_equal(pk_width_for(P40 - 1), 5);
	assert_int_equal(pk_width_for(P40), 0);
	assert_int_equal(pk_width_for(UINT64_MAX), 0);
	/* the heap's rule: n objects pass n + 1, r references pass r */
	assert_int_equal(pk_width_for((P32 - 2) + 1), 4);
	assert_int_equal(pk_width_for((P32 - 1) + 1), 5);
	assert_int_equal(pk_width_for((P40 - 2) + 1), 5);
	assert_int_equal(pk_width_for((P40 - 1) + 1), 0);

	struct pk_array a = {NULL, 0, 4};
	assert_true(pk_none(&a) == P32 - 1);
	a.width = 5;
	assert_true(pk_none(&a) == P40 - 1);
	assert_true(pk_bytes(10, 4) == 40);
	assert_true(pk_bytes(10, 5) == 53);
	assert_true(pk_bytes(P32 + 1000, 5) == 5 * (P32 + 1000) + 3);
}

/* pattern: a value of a's width that depends on i and salt; fill: every element gets it. */
static uint64_t pattern(const struct pk_array *a, uint64_t i, uint64_t salt)
{
	uint64_t v = (i + 1) * UINT64_C(0x9E3779B97F4A7C15) ^ salt;
	return (v >> 11) & pk_none(a);
}

static void fill(struct pk_array *a, uint64_t salt)
{
	for (uint64_t i = 0; i < a->n; i++)
		pk_set(a, i, pattern(a, i, salt));
}

/*
 * Each edge value at each index of a small array whose other elements hold
 * all-zero, all-ones, and mixed bytes: it reads back, the others are unchanged.
 */
static void round_trips(uint8_t width)
{
	const uint64_t edges4[] = {0, 1, P32 - 2, P32 - 1};
	const uint64_t edges5[] = {0, 1, P32 - 2, P32 - 1, P32, P32 + 1, P40 - 2, P40 - 1};
	const uint64_t *edges = width == 4 ? edges4 : edges5;
	size_t nedges = width == 4 ? 4 : 8;
	struct pk_array a;
	pk_new(&a, 11, width);
	assert_int_equal(a.width, width);
	for (uint64_t i = 0; i < a.n; i++)
		assert_true(pk_get(&a, i) == 0);
	for (int s = 0; s < 3; s++) {
		for (uint64_t k = 0; k < a.n; k++) {
			for (size_t e = 0; e < nedges; e++) {
				/* background: zeros, none, or a pattern */
				for (uint64_t i = 0; i < a.n; i++)
					pk_set(&a, i, s == 0 ? 0 : s == 1 ? pk_none(&a)
								   : pattern(&a, i, 7));
				pk_set(&a, k, edges[e]);
				assert_true(pk_get(&a, k) == edges[e]);
				for (uint64_t i = 0; i < a.n; i++) {
					if (i == k)
						continue;
					uint64_t want = s == 0 ? 0 : s == 1 ? pk_none(&a)
									    : pattern(&a, i, 7);
					assert_true(pk_get(&a, i) == want);
				}
			}
		}
	}
	if (width == 5) {
		/* the format: 40-bit little-endian at byte 5i */
		pk_set(&a, 3, UINT64_C(0x0102030405));
		assert_int_equal(a.p[15], 0x05);
		assert_int_equal(a.p[16], 0x04);
		assert_int_equal(a.p[17], 0x03);
		assert_int_equal(a.p[18], 0x02);
		assert_int_equal(a.p[19], 0x01);
	} else {
		/* width 4 is a uint32_t array */
		pk_set(&a, 3, 0xdeadbeefu);
		uint32_t u;
		memcpy(&u, a.p + 12, 4);
		assert_int_equal(u, 0xdeadbeefu);
	}
	pk_free(&a);
	assert_null(a.p);
}

static void test_round_trip_4(void **state)
{
	(void)state;
	round_trips(4);
}

static void test_round_trip_5(void **state)
{
	(void)state;
	round_trips(5);
}

/* A value past the width loses its high bits and nothing else changes. */
static void test_set_masks(void **state)
{
	(void)state;
	for (uint8_t w = 4; w <= 5; w++) {
		struct pk_array a;
		pk_new(&a, 3, w);
		pk_set(&a, 0, pk_none(&a));
		pk_set(&a, 2, pk_none(&a));
		pk_set(&a, 1, (pk_none(&a) + 1) | 5);
		assert_true(pk_get(&a, 1) == 5);
		assert_true(pk_get(&a, 0) == pk_none(&a));
		assert_true(pk_get(&a, 2) == pk_none(&a));
		pk_free(&a);
	}
}

/* pk_set_mt: the same round trips, and neighbours undisturbed. */
static void test_set_mt(void **state)
{
	(void)state;
	for (uint8_t w = 4; w <= 5; w++) {
		struct pk_array a;
		pk_new(&a, 9, w);
		for (uint64_t i = 0; i < a.n; i++)
			pk_set(&a, i, pk_none(&a));
		pk_set_mt(&a, 4, 0);
		pk_set_mt(&a, 8, pk_none(&a) - 1);
		for (uint64_t i = 0; i < a.n; i++)
			assert_true(pk_get(&a, i) == (i == 4 ? 0 : i == 8 ? pk_none(&a) - 1
								 : pk_none(&a)));
		if (w == 5) {
			pk_set_mt(&a, 2, P32 + 7);
			assert_true(pk_get(&a, 2) == P32 + 7);
			assert_true(pk_get(&a, 3) == pk_none(&a));
		}
		pk_free(&a);
	}
}

/* Two threads setting the even and the odd elements of one width-5 array at once. */
struct half {
	struct pk_array *a;
	uint64_t parity;
};

static void *set_half(void *arg)
{
	struct half *h = arg;
	for (int pass = 0; pass < 4; pass++)
		for (uint64_t i = h->parity; i < h->a->n; i += 2)
			pk_set_mt(h->a, i, pattern(h->a, i, (uint64_t)pass));
	return NULL;
}

static void test_set_mt_threads(void **state)
{
	(void)state;
	struct pk_array a;
	pk_new(&a, 1u << 20, 5);
	struct half h[2] = {{&a, 0}, {&a, 1}};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, set_half, &h[1]), 0);
	set_half(&h[0]);
	pthread_join(t, NULL);
	for (uint64_t i = 0; i < a.n; i++)
		assert_true(pk_get(&a, i) == pattern(&a, i, 3));
	pk_free(&a);
}

/*
 * Resizes keep the prefix and give zero elements: malloc'd storage growing
 * past BIG_MIN into a big array, a big array growing, and one shrunk then
 * grown again (width 5 keeps a dropped element's first bytes as padding).
 */
static void test_resize(void **state)
{
	(void)state;
	for (uint8_t w = 4; w <= 5; w++) {
		struct pk_array a;
		pk_new(&a, 100, w);
		fill(&a, 3);
		const uint64_t sizes[] = {50000, 400000, 7, 9, 300000, 5};
		uint64_t kept = a.n;
		for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
			uint64_t n = sizes[s];
			pk_resize(&a, n);
			assert_true(a.n == n);
			assert_int_equal(a.width, w);
			uint64_t keep = kept < n ? kept : n;
			for (uint64_t i = 0; i < keep; i++)
				assert_true(pk_get(&a, i) == pattern(&a, i, 3));
			for (uint64_t i = keep; i < n; i++)
				assert_true(pk_get(&a, i) == 0);
			/* the whole array holds the pattern again, up to n */
			for (uint64_t i = keep; i < n; i++)
				pk_set(&a, i, pattern(&a, i, 3));
			kept = n;
		}
		pk_free(&a);
	}
}

/*
 * A shared mapping of an unlinked sparse file of bytes bytes, as *a of n
 * elements of width 5; *fd stays open to measure the blocks written. False
 * with a message when this machine or its filesystem refuses.
 */
static bool map_sparse(uint64_t n, struct pk_array *a, int *fd, char *why, size_t cap)
{
	uint64_t bytes = pk_bytes(n, 5);
	if (bytes > SIZE_MAX) {
		snprintf(why, cap, "size_t cannot hold %llu bytes", (unsigned long long)bytes);
		return false;
	}
	const char *dir = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/heapsh-test-packed-XXXXXX", dir && *dir ? dir : "/tmp");
	*fd = mkstemp(path);
	if (*fd < 0) {
		snprintf(why, cap, "mkstemp %.256s: %s", path, strerror(errno));
		return false;
	}
	unlink(path);
	struct stat st;
	errno = 0;
	if (ftruncate(*fd, (off_t)bytes) || fstat(*fd, &st) ||
	    (uint64_t)st.st_blocks * 512 > SPARSE_MAX_TOUCH) {
		snprintf(why, cap, "a sparse file of %llu bytes in %.256s: %s",
			 (unsigned long long)bytes, dir && *dir ? dir : "/tmp",
			 errno ? strerror(errno) : "its blocks are allocated");
		close(*fd);
		return false;
	}
	void *p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (p == MAP_FAILED) {
		snprintf(why, cap, "mmap of %llu bytes: %s", (unsigned long long)bytes,
			 strerror(errno));
		close(*fd);
		return false;
	}
	/* no read-ahead: each fault would read (zero) pages of holes around it */
	madvise(p, (size_t)bytes, MADV_RANDOM);
	*a = (struct pk_array){p, n, 5};
	return true;
}

/* unmap_sparse: check that the file took at most SPARSE_MAX_TOUCH of disk, then drop it. */
static void unmap_sparse(struct pk_array *a, int fd, const char *what)
{
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	uint64_t used = (uint64_t)st.st_blocks * 512;
	print_message("%s: %llu elements (%.1f GB mapped), %.1f MB of disk written\n", what,
		      (unsigned long long)a->n, pk_bytes(a->n, 5) / 1e9, used / 1e6);
	assert_true(used <= SPARSE_MAX_TOUCH);
	assert_int_equal(munmap(a->p, (size_t)pk_bytes(a->n, 5)), 0);
	close(fd);
}

struct write {
	uint64_t i, v, seq;	/* index, value, order of the write */
};

static int by_index_then_seq(const void *x, const void *y)
{
	const struct write *a = x, *b = y;
	if (a->i != b->i)
		return a->i < b->i ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int by_index(const void *key, const void *x)
{
	uint64_t i = *(const uint64_t *)key, j = ((const struct write *)x)->i;
	return i < j ? -1 : i > j;
}

/* The value element i has after the writes w[0..nw) (sorted, last kept), or 0. */
static uint64_t expected(const struct write *w, size_t nw, uint64_t i)
{
	const struct write *hit = bsearch(&i, w, nw, sizeof *w, by_index);
	return hit ? hit->v : 0;
}

#define NSCATTER 2000

/*
 * 2^32 + 1000 elements of width 5: the elements around 2^32, the last one
 * (whose 8-byte access reaches into the padding), and NSCATTER elements
 * anywhere read back what was written, in the documented bytes, and their
 * neighbours stay 0.
 */
static void test_past_2_32(void **state)
{
	(void)state;
	uint64_t n = P32 + 1000;
	struct pk_array a;
	int fd;
	char why[512];
	if (!map_sparse(n, &a, &fd, why, sizeof why)) {
		print_message("skipped: %s\n", why);
		skip();
	}
	const uint64_t special[][2] = {
		{0, P40 - 2}, {1, 1}, {P32 - 2, P32 - 2}, {P32 - 1, P32 - 1}, {P32, P40 - 1},
		{P32 + 1, P32 + 1}, {n - 2, P32}, {n - 1, n - 1},
	};
	size_t nspecial = sizeof special / sizeof *special, nw = 0;
	struct write *w = calloc(NSCATTER + nspecial, sizeof *w);
	assert_non_null(w);
	rng = XORSHIFT_SEED;
	for (size_t k = 0; k < NSCATTER; k++) {
		uint64_t i = rnd64(n);
		w[nw] = (struct write){i, rnd64(P40), nw};
		pk_set(&a, i, w[nw].v);
		nw++;
	}
	for (size_t k = 0; k < nspecial; k++) {
		w[nw] = (struct write){special[k][0], special[k][1], nw};
		pk_set(&a, special[k][0], special[k][1]);
		nw++;
	}
	/* sort by index, keep the last write of each */
	qsort(w, nw, sizeof *w, by_index_then_seq);
	size_t m = 0;
	for (size_t k = 0; k < nw; k++) {
		if (m && w[m - 1].i == w[k].i)
			m--;
		w[m++] = w[k];
	}
	nw = m;
	size_t above = 0;
	for (size_t k = 0; k < nw; k++) {
		uint64_t i = w[k].i;
		assert_true(pk_get(&a, i) == w[k].v);
		above += i >= P32;
		if (i > 0)
			assert_true(pk_get(&a, i - 1) == expected(w, nw, i - 1));
		if (i + 1 < n)
			assert_true(pk_get(&a, i + 1) == expected(w, nw, i + 1));
	}
	assert_true(above >= 4);	/* past 2^32: the specials at least */
	/* the bytes themselves: 40-bit little-endian at byte offset 5i */
	for (size_t k = 0; k < nspecial; k++) {
		uint64_t i = special[k][0], v = expected(w, nw, i);
		for (int b = 0; b < 5; b++)
			assert_int_equal(a.p[5 * i + (uint64_t)b], (v >> (8 * b)) & 0xff);
	}
	/* read as a CSR's start array: rows numbered past 2^32 */
	const uint64_t rows[] = {P32 - 2, P32 - 1, P32, n - 2};
	for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
		uint64_t b, e;
		pk_csr_row(&a, rows[k], &b, &e);
		assert_true(b == expected(w, nw, rows[k]) && e == expected(w, nw, rows[k] + 1));
	}
	/* the padding after the last element is untouched */
	for (int b = 0; b < 3; b++)
		assert_int_equal(a.p[5 * n + (uint64_t)b], 0);
	free(w);
	unmap_sparse(&a, fd, "past 2^32");
}

/* A target of the CSR test: a function of the reference's offset. */
static uint64_t target(uint64_t j)
{
	return ((j + 1) * UINT64_C(0xD1B54A32D192ED03) >> 24) & PK_MASK40;
}

/*
 * A CSR of more than 2^32 references, every offset of width 5: 64 wide rows
 * up to 2^32 - 2048, rows of 0 to 4 references through 2^32 (one of them
 * [2^32 - k, 2^32 + j) by construction), 64 wide rows to the end. The start
 * array grows with pk_resize; the target array is a sparse file's mapping.
 * Every reference of the narrow rows and the ends of the wide ones read back.
 */
static void test_csr_past_2_32(void **state)
{
	(void)state;
	uint64_t nrefs = P32 + 4096;
	struct pk_array out, start;
	int fd;
	char why[512];
	if (!map_sparse(nrefs, &out, &fd, why, sizeof why)) {
		print_message("skipped: %s\n", why);
		skip();
	}
	assert_int_equal(pk_width_for(nrefs), 5);
	pk_new(&start, 1, pk_width_for(nrefs));
	uint64_t rows = 0, off = 0;
#define ROW_END(end)                                                      \
	do {                                                              \
		if (rows + 2 > start.n)                                   \
			pk_resize(&start, start.n * 2);                   \
		pk_set(&start, ++rows, (end));                            \
		off = (end);                                              \
	} while (0)
	uint64_t wide_end = P32 - 2048, step = wide_end / 64;
	for (int k = 1; k < 64; k++)
		ROW_END(step * (uint64_t)k);
	ROW_END(wide_end);
	uint64_t narrow_first = rows;
	bool forced = false;
	for (uint64_t k = 0; off < P32 + 2048; k++) {
		if (!forced && off + 4 >= P32 - 1) {
			ROW_END(P32 + 2);	/* straddles 2^32 - 1 | 2^32 */
			forced = true;
			continue;
		}
		ROW_END(off + k % 5);
	}
	uint64_t narrow_end = rows, rest = nrefs - off, from = off;
	for (uint64_t k = 1; k < 64; k++)
		ROW_END(from + rest / 64 * k);
	ROW_END(nrefs);
#undef ROW_END
	pk_resize(&start, rows + 1);
	assert_true(pk_get(&start, 0) == 0 && pk_get(&start, rows) == nrefs);

	/* the targets: every narrow reference, the first and last of each wide row */
	for (uint64_t r = 0; r < rows; r++) {
		uint64_t b, e;
		pk_csr_row(&start, r, &b, &e);
		if (r >= narrow_first && r < narrow_end) {
			for (uint64_t j = b; j < e; j++)
				pk_set(&out, j, target(j));
		} else {
			pk_set(&out, b, target(b));
			pk_set(&out, e - 1, target(e - 1));
		}
	}
	uint64_t total = 0, straddling = 0, past = 0, prev_end = 0;
	for (uint64_t r = 0; r < rows; r++) {
		uint64_t b, e;
		pk_csr_row(&start, r, &b, &e);
		assert_true(b == prev_end && b <= e);
		prev_end = e;
		total += e - b;
		straddling += b < P32 && e > P32;
		past += b >= P32;
		if (r >= narrow_first && r < narrow_end) {
			for (uint64_t j = b; j < e; j++)
				assert_true(pk_get(&out, j) == target(j));
		} else {
			assert_true(pk_get(&out, b) == target(b));
			assert_true(pk_get(&out, e - 1) == target(e - 1));
		}
	}
	assert_true(total == nrefs);
	assert_true(straddling >= 1);
	assert_true(past > 64);
	print_message("CSR: %llu rows, %llu straddling 2^32, %llu starting past it\n",
		      (unsigned long long)rows, (unsigned long long)straddling,
		      (unsigned long long)past);
	pk_free(&start);
	unmap_sparse(&out, fd, "CSR targets");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_width_for),
		cmocka_unit_test(test_round_trip_4),
		cmocka_unit_test(test_round_trip_5),
		cmocka_unit_test(test_set_masks),
		cmocka_unit_test(test_set_mt),
		cmocka_unit_test(test_set_mt_threads),
		cmocka_unit_test(test_resize),
		cmocka_unit_test(test_past_2_32),
		cmocka_unit_test(test_csr_past_2_32),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
