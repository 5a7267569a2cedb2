/*
 * radix.h - LSD radix sort of 64-bit keys (11 bits a pass), for the id
 * sort of the loader and the ordering of many dominator-tree children.
 * Stable; a pass whose digit every key shares is skipped.
 */
#ifndef HS_RADIX_H
#define HS_RADIX_H

#include <stddef.h>
#include <stdint.h>

/*
 * radix_sort_u64: sort keys[n] ascending by their bits [lo_bit, hi_bit)
 * (0 <= lo_bit < hi_bit <= 64), using tmp[n] as scratch. Returns the buffer
 * that holds the sorted keys: keys or tmp (which one depends on the passes
 * taken); the other holds garbage. O(n) per pass, at most
 * ceil((hi_bit - lo_bit) / 11) passes; 16 KiB of counts on the heap.
 */
uint64_t *radix_sort_u64(uint64_t *keys, uint64_t *tmp, size_t n, int lo_bit, int hi_bit);

/*
 * radix_sort_u64_2: radix_sort_u64 on two threads, the same result: each
 * pass, each thread counts the digits of its half of the keys, then
 * scatters them after every smaller digit and, within a digit, the second
 * half's after the first's (so it stays stable); a barrier between. One
 * thread below 65,536 keys or when a thread cannot be had. 32 KiB of
 * counts.
 */
uint64_t *radix_sort_u64_2(uint64_t *keys, uint64_t *tmp, size_t n, int lo_bit, int hi_bit);

#endif
