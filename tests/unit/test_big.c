/*
 * test_big.c - big arrays (src/base/big.c): anonymous within the memory
 * budget, file-backed past it, with the same contents either way; growth
 * that crosses the budget keeps what was there; malloc'd memory goes
 * through big_realloc and big_free; sizes parse; the plan says what goes
 * to disk; freed arrays are reused as spares until trimmed; the spill
 * folder keeps no file.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/base/big.h"

static char dir[256];

static int files_in_dir(void)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "%s/heapsh-test-big-XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rmdir(dir);
	return 0;
}

static void fill(uint32_t *a, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		a[i] = (uint32_t)(i * 2654435761u) ^ seed;
}

static void check(const uint32_t *a, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != ((uint32_t)(i * 2654435761u) ^ seed))
			fail_msg("element %zu: %u", i, a[i]);
}

/* Within the budget: anonymous memory; past it: files; zeroed either way. */
static void test_budget_places_arrays(void **state)
{
	(void)state;
	big_configure(4u << 20, dir);	/* 4 MiB */
	struct big_stats s0, s1;
	big_stats(&s0);
	assert_int_equal(s0.budget, 4u << 20);
	size_t n = (3u << 20) / 4;	/* 3 MiB */
	uint32_t *a = big_alloc(n, 4);
	big_stats(&s1);
	assert_int_equal(s1.anon - s0.anon, 3u << 20);
	assert_int_equal(s1.file, s0.file);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(a[i], 0);
	uint32_t *b = big_alloc(n, 4);	/* past the budget: a file */
	big_stats(&s1);
	assert_int_equal(s1.file - s0.file, 3u << 20);
	assert_int_equal(s1.files, s0.files + 1);
	assert_string_equal(s1.dir, dir);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(b[i], 0);
	fill(a, n, 1);
	fill(b, n, 2);
	check(a, n, 1);
	check(b, n, 2);
	assert_int_equal(files_in_dir(), 0);	/* unlinked when made */
	big_free(a);
	big_free(b);
	big_trim();	/* the freed arrays kept as spares go too */
	big_stats(&s1);
	assert_int_equal(s1.anon, s0.anon);
	assert_int_equal(s1.file, s0.file);
	assert_int_equal(s1.files, s0.files);
}

/* Growth in memory, then past the budget (the array moves to a file),
 * then in its file, then shrinking: the prefix stays, new bytes are zero. */
static void test_realloc_across_the_budget(void **state)
{
	(void)state;
	big_configure(2u << 20, dir);
	struct big_stats s;
	size_t n = (1u << 20) / 4;
	uint32_t *a = big_alloc(n, 4);
	fill(a, n, 7);
	a = big_realloc(a, n + n / 2, 4);	/* 1.5 MiB: still in memory */
	check(a, n, 7);
	for (size_t i = n; i < n + n / 2; i++)
		assert_int_equal(a[i], 0);
	big_stats(&s);
	assert_int_equal(s.files, 0);
	a = big_realloc(a, 4 * n, 4);	/* 4 MiB: past the budget */
	big_stats(&s);
	assert_int_equal(s.files, 1);
	check(a, n, 7);
	for (size_t i = n; i < 4 * n; i++)
		assert_int_equal(a[i], 0);
	fill(a, 4 * n, 9);
	a = big_realloc(a, 8 * n, 4);	/* grows in its file */
	check(a, 4 * n, 9);
	for (size_t i = 4 * n; i < 8 * n; i++)
		assert_int_equal(a[i], 0);
	a = big_realloc(a, n, 4);	/* shrinks */
	check(a, n, 9);
	big_free(a);
	big_stats(&s);
	assert_int_equal(s.files, 0);
	assert_int_equal(files_in_dir(), 0);
}

/* More file-backed arrays than a process may hold descriptors (1,024 here by
 * default): each mapping keeps its file, not a descriptor. */
static void test_many_files(void **state)
{
	(void)state;
	big_configure(1u << 20, dir);
	enum { N = 1500 };
	static uint32_t *a[N];
	for (int k = 0; k < N; k++) {
		a[k] = big_alloc(BIG_MIN / 4, 4);
		a[k][0] = (uint32_t)k;
		a[k][BIG_MIN / 4 - 1] = (uint32_t)k * 3;
	}
	struct big_stats s;
	big_stats(&s);
	assert_true(s.files >= N - 16);
	for (int k = 0; k < N; k++) {
		assert_int_equal(a[k][0], k);
		assert_int_equal(a[k][BIG_MIN / 4 - 1], k * 3);
		big_free(a[k]);
	}
	assert_int_equal(files_in_dir(), 0);
}

/* big_demote: an array in memory moves to a file when others need the room. */
static void test_demote(void **state)
{
	(void)state;
	big_configure(8u << 20, dir);
	struct big_stats s0, s1;
	big_stats(&s0);
	size_t n = (6u << 20) / 4;
	uint32_t *a = big_alloc(n, 4);
	fill(a, n, 5);
	assert_ptr_equal(big_demote(a, 1u << 20), a);	/* room enough: stays */
	a = big_demote(a, 4u << 20);	/* 6 + 4 > 8: to a file */
	big_trim();	/* the freed arrays kept as spares go too */
	big_stats(&s1);
	assert_int_equal(s1.anon, s0.anon);
	assert_int_equal(s1.file - s0.file, 6u << 20);
	check(a, n, 5);
	uint32_t *b = big_alloc((4u << 20) / 4, 4);	/* now in memory */
	big_stats(&s1);
	assert_int_equal(s1.anon - s0.anon, 4u << 20);
	assert_ptr_equal(big_demote(a, 8u << 20), a);	/* already in a file */
	big_free(b);
	big_free(a);
	assert_int_equal(files_in_dir(), 0);
}

/* mapped_file: the file the mapping holding p maps ("" for none), from
 * /proc/self/maps. */
static void mapped_file(const void *p, char *out, size_t cap)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	out[0] = 0;
	while (f && fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		int at = 0;
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &at) >= 2 &&
		    (unsigned long)p >= lo && (unsigned long)p < hi) {
			snprintf(out, cap, "%s", line + at);
			out[strcspn(out, "\n")] = 0;
			break;
		}
	}
	if (f)
		fclose(f);
}

/* in_file: whether the mapping that holds p is a spill file's. */
static bool in_file(const void *p)
{
	char name[1024];
	mapped_file(p, name, sizeof name);
	return strstr(name, "heapsh-big-") != NULL;
}

/*
 * big_settle: settled arrays leave memory for files, the first settled
 * first and only as many as the new array needs, at the same address with
 * the same contents; arrays not settled stay.
 */
static void test_settle(void **state)
{
	(void)state;
	big_configure(8u << 20, dir);
	struct big_stats s0, s1;
	big_stats(&s0);
	size_t n3 = (3u << 20) / 4, n2 = (2u << 20) / 4;
	uint32_t *b = big_alloc(n3, 4), *a = big_alloc(n3, 4), *c = big_alloc(n2, 4);
	fill(a, n3, 11);
	fill(b, n3, 12);
	fill(c, n2, 13);
	big_settle(a);
	big_settle(b);	/* after a: leaves after it */
	big_settle(a);	/* settling again keeps a's place */
	big_settle(NULL);
	assert_false(in_file(a) || in_file(b) || in_file(c));
	uint32_t *d = big_alloc(n2, 4);	/* 8 + 2 > 8: a goes, 5 + 2 fits */
	big_stats(&s1);
	assert_true(in_file(a));
	assert_false(in_file(b) || in_file(c) || in_file(d));
	assert_int_equal(s1.anon - s0.anon, 7u << 20);
	assert_int_equal(s1.file - s0.file, 3u << 20);
	check(a, n3, 11);
	check(b, n3, 12);
	check(c, n2, 13);
	fill(a, n3, 14);	/* a file-backed array is still written in place */
	check(a, n3, 14);
	uint32_t *e = big_alloc((4u << 20) / 4, 4);	/* b goes; c and d are not settled */
	assert_true(in_file(b));
	assert_false(in_file(c) || in_file(d) || in_file(e));
	check(b, n3, 12);
	uint32_t *f = big_alloc(n2, 4);	/* nothing left to move: a file */
	assert_true(in_file(f));
	assert_false(in_file(c) || in_file(d) || in_file(e));
	big_free(a);
	big_free(b);
	big_free(c);
	big_free(d);
	big_free(e);
	big_free(f);
	big_trim();	/* the freed arrays kept as spares go too */
	big_stats(&s1);
	assert_int_equal(s1.anon, s0.anon);
	assert_int_equal(s1.file, s0.file);
	assert_int_equal(files_in_dir(), 0);
}

static bool zero(const uint32_t *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i])
			return false;
	return true;
}

/*
 * Spares: a freed anonymous array's pages serve the next big_alloc, cut to
 * its size or grown, zeroed either way; spares count in the budget, go
 * first when room is needed, and big_trim releases them.
 */
static void test_spares(void **state)
{
	(void)state;
	big_configure(64u << 20, dir);
	struct big_stats s0, s1;
	big_stats(&s0);
	size_t n4 = (4u << 20) / 4, n1 = (1u << 20) / 4;
	uint32_t *a = big_alloc(n4, 4);
	fill(a, n4, 21);
	big_free(a);
	big_stats(&s1);
	assert_int_equal(s1.anon - s0.anon, 4u << 20);	/* kept, and counted */
	uint32_t *b = big_alloc(n1, 4);	/* the spare, cut: its first MiB */
	assert_ptr_equal(b, a);
	assert_true(zero(b, n1));
	uint32_t *c = big_alloc(n1 * 3, 4);	/* the rest of it */
	assert_ptr_equal(c, (uint32_t *)a + n1);
	assert_true(zero(c, n1 * 3));
	fill(b, n1, 22);
	fill(c, n1 * 3, 23);
	big_free(c);
	uint32_t *d = big_alloc(n4 * 2, 4);	/* no spare holds it: the 3 MiB one grows */
	assert_true(zero(d, n4 * 2));
	fill(d, n4 * 2, 24);
	check(b, n1, 22);
	big_free(b);
	big_free(d);
	big_trim();
	big_stats(&s1);
	assert_int_equal(s1.anon, s0.anon);

	/* Under a short budget a spare goes before an array moves to a file. */
	big_configure(4u << 20, dir);
	big_stats(&s0);
	uint32_t *e = big_alloc(n1 * 3, 4), *f = big_alloc(n1, 4);
	big_settle(f);
	big_free(e);	/* 3 MiB spare + 1 MiB settled f: the budget is full */
	uint32_t *g = big_alloc(n1 * 2, 4);	/* cut from the spare: f stays */
	assert_false(in_file(f) || in_file(g));
	assert_true(zero(g, n1 * 2));
	uint32_t *h = big_alloc(n1, 4);	/* the spare's last MiB */
	assert_false(in_file(f) || in_file(g) || in_file(h));
	big_free(h);
	big_free(g);	/* spares of 1 and 2 MiB; f: 1 MiB live */
	uint32_t *i = big_alloc(n1 * 3, 4);	/* none holds it, none may grow: both go */
	big_stats(&s1);
	assert_false(in_file(f) || in_file(i));
	assert_true(zero(i, n1 * 3));
	assert_int_equal(s1.anon - s0.anon, 4u << 20);
	uint32_t *j = big_alloc(n1, 4);	/* no spare left: f goes to a file */
	big_stats(&s1);
	assert_true(in_file(f));
	assert_false(in_file(i) || in_file(j));
	assert_int_equal(s1.anon - s0.anon, 4u << 20);
	big_free(f);
	big_free(i);
	big_free(j);
	big_trim();
	big_stats(&s1);
	assert_int_equal(s1.anon, s0.anon);
	assert_int_equal(s1.file, s0.file);
	assert_int_equal(files_in_dir(), 0);
}

/* rss_kb: this process's resident KiB of the mapping that starts at p, or -1. */
static long rss_kb(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	long rss = -1;
	bool in = false;
	while (f && fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = lo == (unsigned long)p;
		else if (in && sscanf(line, "Rss: %ld kB", &rss) == 1)
			break;
	}
	if (f)
		fclose(f);
	return rss;
}

/* big_evict: to a file at once, out of this process's memory, contents kept. */
static void test_evict(void **state)
{
	(void)state;
	big_configure(64u << 20, dir);
	struct big_stats s0, s1;
	big_stats(&s0);
	size_t n = (6u << 20) / 4;
	uint32_t *a = big_alloc(n, 4);
	fill(a, n, 7);
	assert_true(rss_kb(a) >= 6 * 1024);
	uint32_t *e = big_evict(a);	/* room in the budget: moves all the same */
	assert_non_null(e);
	big_trim();	/* the freed arrays kept as spares go too */
	big_stats(&s1);
	assert_int_equal(s1.anon, s0.anon);
	assert_int_equal(s1.file - s0.file, 6u << 20);
	assert_int_equal(rss_kb(e), 0);
	check(e, n, 7);	/* read back from the file */
	assert_true(rss_kb(e) >= 6 * 1024);
	assert_ptr_equal(big_evict(e), e);	/* already in a file: dropped again */
	assert_int_equal(rss_kb(e), 0);
	check(e, n, 7);
	big_free(e);
	assert_int_equal(files_in_dir(), 0);

	/* Not a big array, or no folder to put it in: NULL, nothing changed. */
	uint32_t *small = big_alloc(16, 4);
	assert_null(big_evict(small));
	big_free(small);
	big_configure(64u << 20, "/nonexistent/heapsh-test");
	uint32_t *b = big_alloc(n, 4);
	fill(b, n, 9);
	assert_null(big_evict(b));
	check(b, n, 9);
	big_free(b);
	big_configure(64u << 20, dir);
}

/*
 * big_rehome: an array in a spill file, written into another file at a
 * page, is mapped from there: the same contents, its spill file gone (the
 * mapping names the other file), writes kept from that file; refused for
 * an array in memory, a malloc'd one, or an offset off a page.
 */
static void test_rehome(void **state)
{
	(void)state;
	big_configure(1u << 20, dir);
	size_t n = (6u << 20) / 4;
	uint32_t *a = big_alloc(n, 4);
	assert_true(big_spilled_bytes(a) >= n * 4);
	fill(a, n, 11);
	char after[1024], path[300];
	assert_true(in_file(a));	/* its unlinked spill file */
	snprintf(path, sizeof path, "%s/rehome", dir);
	FILE *f = fopen(path, "w+b");
	assert_non_null(f);
	static uint8_t junk[4096];
	memset(junk, 0xab, sizeof junk);
	assert_int_equal(fwrite(junk, 1, sizeof junk, f), sizeof junk);
	assert_int_equal(fwrite(a, 4, n, f), n);
	fflush(f);
	int fd = fileno(f);
	assert_false(big_rehome(a, fd, 100));	/* not at a page */
	uint32_t *small = big_alloc(16, 4);
	assert_false(big_rehome(small, fd, 4096));	/* malloc'd */
	assert_int_equal(big_spilled_bytes(small), 0);
	big_free(small);
	assert_true(big_rehome(a, fd, 4096));
	mapped_file(a, after, sizeof after);
	assert_string_equal(after, path);
	check(a, n, 11);
	a[0] = 0;	/* private: not written to the file */
	uint32_t first;
	assert_int_equal(pread(fd, &first, 4, 4096), 4);
	assert_int_equal(first, (uint32_t)0 ^ 11);
	fclose(f);
	unlink(path);
	a[0] = (uint32_t)0 ^ 11;
	check(a, n, 11);	/* still mapped, the file unlinked */
	big_free(a);
	assert_int_equal(files_in_dir(), 0);
	big_configure(64u << 20, dir);
	uint32_t *m = big_alloc(n, 4);	/* within the budget: in memory */
	assert_int_equal(big_spilled_bytes(m), 0);
	assert_false(big_rehome(m, 0, 4096));
	big_free(m);
	big_trim();
}

/* Small arrays are malloc'd; big_realloc and big_free take malloc'd memory. */
static void test_malloc_memory(void **state)
{
	(void)state;
	big_configure(1u << 20, dir);
	uint8_t *p = big_alloc(100, 1);
	for (int i = 0; i < 100; i++)
		assert_int_equal(p[i], 0);
	memset(p, 0xab, 100);
	p = big_realloc(p, BIG_MIN * 4, 1);	/* becomes a big array */
	for (int i = 0; i < 100; i++)
		assert_int_equal(p[i], 0xab);
	big_free(p);
	char *q = malloc(10);
	strcpy(q, "malloc'd");
	q = big_realloc(q, 20, 1);
	assert_string_equal(q, "malloc'd");
	big_free(q);
	big_free(NULL);
}

static void test_parse_size(void **state)
{
	(void)state;
	assert_int_equal(big_parse_size("8G"), 8ULL << 30);
	assert_int_equal(big_parse_size("512M"), 512ULL << 20);
	assert_int_equal(big_parse_size("512MiB"), 512ULL << 20);
	assert_int_equal(big_parse_size("1.5g"), 3ULL << 29);
	assert_int_equal(big_parse_size("300000K"), 300000ULL << 10);
	assert_int_equal(big_parse_size("1T"), 1ULL << 40);
	assert_int_equal(big_parse_size("4096"), 4096);
	assert_int_equal(big_parse_size(""), 0);
	assert_int_equal(big_parse_size(NULL), 0);
	assert_int_equal(big_parse_size("lots"), 0);
	assert_int_equal(big_parse_size("8X"), 0);
	assert_int_equal(big_parse_size("-1G"), 0);
	assert_int_equal(big_parse_size("1e30"), 0);
	assert_int_equal(big_parse_size("nan"), 0);
	assert_int_equal(big_parse_size("inf"), 0);
	assert_int_equal(big_parse_size("1e-30"), 0);
	assert_int_equal(big_parse_size("0x10M"), 16ULL << 20);	/* strtod reads hex */
	assert_int_equal(big_parse_size("8 G"), 0);
}

/* The plan: what does not fit goes to disk; more than the folder holds is an error. */
static void test_plan(void **state)
{
	(void)state;
	big_configure(8u << 20, dir);
	uint64_t spill = 1;
	struct hs_error err;
	assert_int_equal(big_plan(4u << 20, 0, &spill, &err), HS_OK);
	assert_int_equal(spill, 0);
	assert_int_equal(big_plan(10u << 20, 0, &spill, &err), HS_OK);
	assert_int_equal(spill, 2u << 20);
	/* arrays the work already holds leave room */
	uint8_t *held = big_alloc(6u << 20, 1);
	assert_int_equal(big_plan(10u << 20, 0, &spill, &err), HS_OK);
	assert_int_equal(spill, 8u << 20);
	assert_int_equal(big_plan(10u << 20, 6u << 20, &spill, &err), HS_OK);
	assert_int_equal(spill, 2u << 20);
	big_free(held);
	uint64_t avail = big_disk_free(dir);
	assert_true(avail > 0);
	assert_int_equal(big_plan((8u << 20) + avail + (1u << 30), 0, &spill, &err), HS_ERR);
	assert_non_null(strstr(err.msg, "of disk in"));
	assert_non_null(strstr(err.msg, dir));
	assert_non_null(strstr(err.msg, "--spill-dir"));
}

static void test_default_budget(void **state)
{
	(void)state;
	uint64_t d = big_default_budget();
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	assert_true(d > 0);
	assert_true(d <= (uint64_t)pages * (uint64_t)psize / 2);
	big_configure(0, NULL);
	struct big_stats s;
	big_stats(&s);
	assert_int_equal(s.budget, d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_places_arrays),
		cmocka_unit_test(test_realloc_across_the_budget),
		cmocka_unit_test(test_many_files),
		cmocka_unit_test(test_demote),
		cmocka_unit_test(test_settle),
		cmocka_unit_test(test_spares),
		cmocka_unit_test(test_evict),
		cmocka_unit_test(test_rehome),
		cmocka_unit_test(test_malloc_memory),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_default_budget),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
