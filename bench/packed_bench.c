/*
 * packed_bench.c - what a packed index array costs to read
 * (src/base/packed.h, docs/format-limits.md): nanoseconds per element read
 * from a plain uint32_t array, a packed array of width 4 and one of width 5,
 * all holding the same random cyclic permutation of n elements (Sattolo's
 * algorithm; default n = 100 M), in big arrays (big.h) within the memory
 * budget.
 *
 *   seq     sum of every element in order, 3 passes (throughput)
 *   random  sum of n elements at random indexes (xorshift64, the same
 *           stream for every array; independent loads, so several misses
 *           overlap)
 *   chase   20 M steps of i = a[i] (each read waits for the previous one:
 *           the latency a graph traversal sees)
 *
 * Usage: packed_bench [n]. Prints one line per array and access, and a
 * checksum that the three arrays must agree on.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/base/big.h"
#include "../src/base/packed.h"

#define SEQ_PASSES 3
#define CHASE_STEPS 20000000u

static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* below: a number in [0, bound) by multiply-shift (no division in the loop). */
static inline uint64_t below(uint64_t bound)
{
	return (uint64_t)(((unsigned __int128)next() * bound) >> 64);
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The three accesses, once over a uint32_t array and once over a pk_array. */
#define ACCESSES(GET)                                                               \
	do {                                                                        \
		uint64_t sum = 0;                                                   \
		double t0 = now();                                                  \
		for (int pass = 0; pass < SEQ_PASSES; pass++)                       \
			for (uint64_t i = 0; i < n; i++)                            \
				sum += GET(i);                                      \
		r->seq = (now() - t0) * 1e9 / ((double)n * SEQ_PASSES);             \
		rng = 88172645463325252ULL;                                         \
		t0 = now();                                                         \
		for (uint64_t k = 0; k < n; k++)                                    \
			sum += GET(below(n));                                       \
		r->random = (now() - t0) * 1e9 / (double)n;                         \
		uint64_t i = 0;                                                     \
		t0 = now();                                                         \
		for (uint32_t k = 0; k < CHASE_STEPS; k++)                          \
			i = GET(i);                                                 \
		r->chase = (now() - t0) * 1e9 / CHASE_STEPS;                        \
		r->check = sum ^ i;                                                 \
	} while (0)

struct result {
	double seq, random, chase;	/* ns per element read */
	uint64_t check;
};

static void plain(const uint32_t *a, uint64_t n, struct result *r)
{
#define GET(i) a[i]
	ACCESSES(GET);
#undef GET
}

static void packed(const struct pk_array *a, uint64_t n, struct result *r)
{
#define GET(i) pk_get(a, i)
	ACCESSES(GET);
#undef GET
}

static void show(const char *what, const struct result *r)
{
	printf("%-9s seq %6.3f ns  random %6.2f ns  chase %6.1f ns  (check %016llx)\n", what,
	       r->seq, r->random, r->chase, (unsigned long long)r->check);
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000000u;
	if (n < 2 || n > UINT32_MAX) {
		fprintf(stderr, "packed_bench: n from 2 to 2^32 - 1\n");
		return 2;
	}
	/* a single cycle through every element (Sattolo) */
	uint32_t *a = big_alloc(n, sizeof *a);
	for (uint64_t i = 0; i < n; i++)
		a[i] = (uint32_t)i;
	rng = 2463534242u;
	for (uint64_t i = n - 1; i > 0; i--) {
		uint64_t j = below(i);
		uint32_t t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
	printf("n = %llu\n", (unsigned long long)n);
	struct result r;
	plain(a, n, &r);
	show("uint32_t", &r);
	uint64_t check = r.check;
	for (uint8_t w = 4; w <= 5; w++) {
		struct pk_array p;
		pk_new(&p, n, w);
		for (uint64_t i = 0; i < n; i++)
			pk_set(&p, i, a[i]);
		packed(&p, n, &r);
		show(w == 4 ? "width 4" : "width 5", &r);
		if (r.check != check) {
			fprintf(stderr, "packed_bench: width %u read other values\n", w);
			return 1;
		}
		pk_free(&p);
	}
	big_free(a);
	return 0;
}
