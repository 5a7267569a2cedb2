/*
 * xorshift.h - the random numbers of the property tests and of the
 * benchmark driver: Marsaglia's xorshift64 ("Xorshift RNGs", Journal of
 * Statistical Software 8(14), 2003), the same sequence from the same seed
 * on every machine. Define XORSHIFT_SEED (non-zero) before including; rng
 * is the state, which a caller may reseed.
 */
#ifndef HS_XORSHIFT_H
#define HS_XORSHIFT_H

#include <stdint.h>

static uint64_t rng = XORSHIFT_SEED;

/* rnd: a number in [0, bound); bound > 0. */
static uint32_t rnd(uint32_t bound)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % bound);
}

#endif
