/* radix.c - LSD radix sort of 64-bit keys; see radix.h. */
#include "radix.h"

#include "mem.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define DIGIT_BITS 11
#define DIGITS (1u << DIGIT_BITS)

uint64_t *radix_sort_u64(uint64_t *keys, uint64_t *tmp, size_t n, int lo_bit, int hi_bit)
{
	uint64_t all_or = 0, all_and = ~0ULL;
	for (size_t i = 0; i < n; i++) {
		all_or |= keys[i];
		all_and &= keys[i];
	}
	uint64_t varying = all_or ^ all_and;	/* bits that differ between keys */
	size_t *count = xmallocarray(DIGITS, sizeof *count);
	uint64_t *src = keys, *dst = tmp;
	for (int shift = lo_bit; shift < hi_bit; shift += DIGIT_BITS) {
		int width = hi_bit - shift < DIGIT_BITS ? hi_bit - shift : DIGIT_BITS;
		uint64_t mask = (1ULL << width) - 1;
		if (!((varying >> shift) & mask))
			continue;
		memset(count, 0, DIGITS * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[(src[i] >> shift) & mask]++;
		size_t sum = 0;
		for (size_t d = 0; d <= mask; d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i] >> shift) & mask]++] = src[i];
		uint64_t *t = src;
		src = dst;
		dst = t;
	}
	free(count);
	return src;
}

/* One of radix_sort_u64_2's two threads: its part [from, to) of each pass. */
struct radix_part {
	uint64_t *keys, *tmp;
	size_t from, to;
	int lo_bit, hi_bit;
	int t;				/* 0 or 1 */
	size_t *count[2];		/* both parts' digit counts, DIGITS each */
	uint64_t or_, and_;		/* this part's keys ORed and ANDed */
	const struct radix_part *other;
	pthread_barrier_t *barrier;
	uint64_t *sorted;		/* where the keys ended (part 0 sets it) */
};

static void *radix_part_work(void *arg)
{
	struct radix_part *w = arg;
	uint64_t o = 0, a = ~0ULL;
	for (size_t i = w->from; i < w->to; i++) {
		o |= w->keys[i];
		a &= w->keys[i];
	}
	w->or_ = o;
	w->and_ = a;
	pthread_barrier_wait(w->barrier);
	const struct radix_part *x = w->other;
	uint64_t varying = (o | x->or_) ^ (a & x->and_);
	/* an empty part has ~0 as its AND and 0 as its OR: neutral */
	size_t *mine = w->count[w->t], *first = w->count[0], *second = w->count[1];
	uint64_t *src = w->keys, *dst = w->tmp;
	for (int shift = w->lo_bit; shift < w->hi_bit; shift += DIGIT_BITS) {
		int width = w->hi_bit - shift < DIGIT_BITS ? w->hi_bit - shift : DIGIT_BITS;
		uint64_t mask = (1ULL << width) - 1;
		if (!((varying >> shift) & mask))
			continue;
		memset(mine, 0, DIGITS * sizeof *mine);
		for (size_t i = w->from; i < w->to; i++)
			mine[(src[i] >> shift) & mask]++;
		pthread_barrier_wait(w->barrier);
		/* digit d of part 0 goes first, then part 1's, after every smaller digit */
		size_t sum = 0, at[DIGITS];
		for (size_t d = 0; d <= mask; d++) {
			at[d] = sum + (w->t ? first[d] : 0);
			sum += first[d] + second[d];
		}
		for (size_t i = w->from; i < w->to; i++)
			dst[at[(src[i] >> shift) & mask]++] = src[i];
		/* both have scattered before the next pass reads dst or counts again */
		pthread_barrier_wait(w->barrier);
		uint64_t *t = src;
		src = dst;
		dst = t;
	}
	w->sorted = src;
	return NULL;
}

uint64_t *radix_sort_u64_2(uint64_t *keys, uint64_t *tmp, size_t n, int lo_bit, int hi_bit)
{
	pthread_barrier_t barrier;
	if (n < 65536 || pthread_barrier_init(&barrier, NULL, 2) != 0)
		return radix_sort_u64(keys, tmp, n, lo_bit, hi_bit);
	size_t *count = xmallocarray(2 * (size_t)DIGITS, sizeof *count);
	struct radix_part w[2];
	for (int t = 0; t < 2; t++)
		w[t] = (struct radix_part){keys, tmp, t ? n / 2 : 0, t ? n : n / 2, lo_bit, hi_bit,
					   t, {count, count + DIGITS}, 0, 0, &w[!t], &barrier, NULL};
	pthread_t th;
	uint64_t *sorted;
	if (pthread_create(&th, NULL, radix_part_work, &w[1]) == 0) {
		radix_part_work(&w[0]);
		pthread_join(th, NULL);
		sorted = w[0].sorted;
	} else {
		sorted = radix_sort_u64(keys, tmp, n, lo_bit, hi_bit);
	}
	pthread_barrier_destroy(&barrier);
	free(count);
	return sorted;
}
