/* packed.c - arrays of 4- or 5-byte unsigned integers in big arrays; see packed.h. */
#include "packed.h"

#include <assert.h>

#include "big.h"

uint8_t pk_width_for(uint64_t max_value)
{
	if (max_value <= UINT32_MAX)
		return 4;
	if (max_value <= PK_MASK40)
		return 5;
	return 0;
}

/* storage: pk_bytes as a size_t, or a throw as big.h's when it cannot be one. */
static size_t storage(uint64_t n, uint8_t width)
{
	assert(width == 4 || width == 5);
	if (n > (UINT64_MAX - 3) / width || pk_bytes(n, width) > SIZE_MAX)
		hs_throw("an array of %llu items of %u bytes is larger than this machine can "
			 "address", (unsigned long long)n, width);
	return (size_t)pk_bytes(n, width);
}

void pk_new(struct pk_array *a, uint64_t n, uint8_t width)
{
	a->p = big_alloc(storage(n, width), 1);
	a->n = n;
	a->width = width;
}

void pk_free(struct pk_array *a)
{
	big_free(a->p);
	a->p = NULL;
	a->n = 0;
}

void pk_resize(struct pk_array *a, uint64_t n)
{
	uint64_t old = a->n;
	a->p = big_realloc(a->p, storage(n, a->width), 1);
	a->n = n;
	/*
	 * big_realloc leaves new bytes unspecified when the storage was
	 * malloc'd, and a width-5 array shrunk then grown again keeps the first
	 * 3 bytes of a dropped element as padding: zero the new elements.
	 */
	if (n > old)
		memset(a->p + old * a->width, 0, (size_t)((n - old) * a->width));
}
