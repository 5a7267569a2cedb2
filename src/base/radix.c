/* radix.c - LSD radix sort of 64-bit keys; see radix.h. */
#include "radix.h"

#include "mem.h"

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
