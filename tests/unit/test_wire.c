/*
 * test_wire.c - the codec (src/base/wire.h): what a writer writes is
 * big-endian byte for byte and reads back; a writer's bound, a length its
 * field cannot hold and a failing sink are sticky errors that drop later
 * writes; a sink's writer drains whole and passes long writes through; a
 * reader returns 0 past the end with the offset of the read that failed,
 * bounds strings by what is left and keeps its first error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/base/wire.h"

static void round_trip(void **state)
{
	(void)state;
	struct wire_w w = {0};
	wire_put8(&w, 0x01);
	wire_put16(&w, 0x0203);
	wire_put32(&w, 0x04050607u);
	wire_put64(&w, 0x08090a0b0c0d0e0fULL);
	wire_put_str(&w, "hi");
	wire_put_str(&w, NULL);
	wire_put_str16(&w, "abc", 3);
	wire_put_f64(&w, -2.5);
	wire_put_bytes(&w, NULL, 0);
	static const uint8_t want[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
				       0, 0, 0, 2, 'h', 'i', 0, 0, 0, 0, 0, 3, 'a', 'b', 'c',
				       0xc0, 0x04, 0, 0, 0, 0, 0, 0};
	assert_int_equal(w.err, WIRE_OK);
	assert_int_equal(w.len, sizeof want);
	assert_memory_equal(w.p, want, sizeof want);
	assert_int_equal(wire_w_pos(&w), sizeof want);

	struct wire_r r = wire_reader(w.p, w.len);
	assert_int_equal(wire_get8(&r), 1);
	assert_int_equal(wire_get16(&r), 0x0203);
	assert_int_equal(wire_get32(&r), 0x04050607u);
	assert_true(wire_get64(&r) == 0x08090a0b0c0d0e0fULL);
	size_t n;
	const char *s = wire_get_str(&r, &n);
	assert_non_null(s);
	assert_int_equal(n, 2);
	assert_memory_equal(s, "hi", 2);
	char *e = wire_get_strdup(&r, 10);
	assert_string_equal(e, "");
	free(e);
	s = wire_get_str16(&r, &n);
	assert_int_equal(n, 3);
	assert_memory_equal(s, "abc", 3);
	assert_true(wire_get_f64(&r) == -2.5);
	assert_true(wire_done(&r));
	assert_int_equal(wire_offset(&r), sizeof want);
	wire_w_free(&w);
	assert_null(w.p);
	assert_int_equal(w.len, 0);
}

static void loads_and_stores(void **state)
{
	(void)state;
	uint8_t b[8];
	wire_store_be(b, 0x123456, 3);
	assert_int_equal(b[0], 0x12);
	assert_int_equal(b[2], 0x56);
	wire_store_be(b, 0xab, 1);
	assert_int_equal(b[0], 0xab);
	wire_store64(b, 0x1122334455667788ULL);
	assert_true(wire_load64(b) == 0x1122334455667788ULL);
	assert_int_equal(wire_load32(b + 4), 0x55667788u);
	assert_int_equal(wire_load16(b + 6), 0x7788);
	wire_store16(b, 0xbeef);
	wire_store32(b + 2, 0xcafef00du);
	assert_int_equal(wire_load16(b), 0xbeef);
	assert_int_equal(wire_load32(b + 2), 0xcafef00du);
}

static void bounded_writer(void **state)
{
	(void)state;
	struct wire_w w = {0};
	w.max = 10;
	wire_put64(&w, 1);
	wire_put16(&w, 2);
	assert_int_equal(w.err, WIRE_OK);
	assert_int_equal(w.len, 10);
	wire_put8(&w, 3);
	assert_int_equal(w.err, WIRE_LIMIT);
	assert_int_equal(w.len, 10);
	w.max = 0;
	wire_put8(&w, 3);	/* sticky: dropped even with room */
	assert_int_equal(w.len, 10);
	wire_w_reset(&w);
	assert_int_equal(w.err, WIRE_OK);
	assert_int_equal(w.len, 0);
	wire_put_str16(&w, "x", 70000);	/* a length a u16 cannot hold */
	assert_int_equal(w.err, WIRE_LIMIT);
	assert_int_equal(w.len, 0);
	wire_w_free(&w);
	/* growth: many small writes keep every byte */
	for (uint32_t k = 0; k < 100000; k++)
		wire_put32(&w, k);
	assert_int_equal(w.err, WIRE_OK);
	assert_int_equal(w.len, 400000);
	struct wire_r r = wire_reader(w.p, w.len);
	uint32_t bad = 0;
	for (uint32_t k = 0; k < 100000; k++)
		bad += wire_get32(&r) != k;
	assert_int_equal(bad, 0);
	assert_true(wire_done(&r));
	wire_w_free(&w);
}

struct sink {
	uint8_t got[4096];
	size_t n, calls, fail_after;
};

static bool to_mem(void *ctx, const void *p, size_t n)
{
	struct sink *k = ctx;
	if (k->fail_after && k->calls >= k->fail_after)
		return false;
	k->calls++;
	assert_true(k->n + n <= sizeof k->got);
	memcpy(k->got + k->n, p, n);
	k->n += n;
	return true;
}

static void sink_writer(void **state)
{
	(void)state;
	struct sink k;
	memset(&k, 0, sizeof k);
	struct wire_w w;
	assert_true(wire_w_sink(&w, 64, to_mem, &k));
	uint8_t big[300];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (uint8_t)i;
	for (uint32_t i = 0; i < 20; i++)
		wire_put32(&w, i);	/* 80 bytes: one drain of 64 */
	assert_int_equal(k.n, 64);
	wire_put_bytes(&w, big, sizeof big);	/* longer than the buffer: straight through */
	assert_int_equal(k.n, 80 + 300);
	wire_put8(&w, 0xee);
	assert_int_equal(wire_w_pos(&w), 80 + 300 + 1);
	assert_true(wire_w_drain(&w));
	assert_int_equal(k.n, 381);
	assert_int_equal(w.len, 0);
	struct wire_r r = wire_reader(k.got, k.n);
	for (uint32_t i = 0; i < 20; i++)
		assert_int_equal(wire_get32(&r), i);
	const uint8_t *b = wire_get_bytes(&r, sizeof big);
	assert_memory_equal(b, big, sizeof big);
	assert_int_equal(wire_get8(&r), 0xee);
	assert_true(wire_done(&r));
	wire_w_free(&w);

	/* a failing sink: WIRE_IO, and nothing more reaches it */
	memset(&k, 0, sizeof k);
	k.fail_after = 1;
	assert_true(wire_w_sink(&w, 64, to_mem, &k));
	for (uint32_t i = 0; i < 40; i++)
		wire_put32(&w, i);
	assert_int_equal(w.err, WIRE_IO);
	assert_int_equal(k.n, 64);
	assert_false(wire_w_drain(&w));
	wire_w_free(&w);
}

static void short_reads(void **state)
{
	(void)state;
	static const uint8_t b[] = {0, 0, 0, 9, 'a', 'b', 0x12, 0x34, 0x56};
	struct wire_r r = wire_reader(b, sizeof b);
	size_t n = 7;
	assert_null(wire_get_str(&r, &n));	/* claims 9 bytes, 5 are left */
	assert_int_equal(n, 0);
	assert_int_equal(r.err, WIRE_SHORT);
	assert_int_equal(r.err_at, 4);
	assert_int_equal(wire_get8(&r), 0);	/* sticky */
	assert_int_equal(r.err_at, 4);
	assert_false(wire_done(&r));

	r = wire_reader(b + 6, 3);
	assert_int_equal(wire_get16(&r), 0x1234);
	assert_int_equal(wire_get32(&r), 0);
	assert_int_equal(r.err, WIRE_SHORT);
	assert_int_equal(r.err_at, 2);
	assert_int_equal(wire_left(&r), 1);	/* a failed read takes nothing */

	/* a string over its bound is malformed whether or not its bytes came */
	r = wire_reader(b, sizeof b);
	assert_null(wire_get_strdup(&r, 8));
	assert_int_equal(r.err, WIRE_BAD);
	assert_int_equal(r.err_at, 0);

	/* the caller's own finding keeps the first error */
	r = wire_reader(b, sizeof b);
	wire_get32(&r);
	wire_r_fail(&r, WIRE_BAD);
	assert_int_equal(r.err_at, 4);
	wire_r_fail(&r, WIRE_NOMEM);
	assert_int_equal(r.err, WIRE_BAD);
	assert_null(wire_get_bytes(&r, 1));

	/* no bytes at all (NULL) */
	r = wire_reader(NULL, 0);
	assert_true(wire_done(&r));
	assert_int_equal(wire_get64(&r), 0);
	assert_int_equal(r.err, WIRE_SHORT);
	assert_string_equal(wire_strerror(WIRE_SHORT), "it ends early");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(loads_and_stores),
		cmocka_unit_test(bounded_writer),
		cmocka_unit_test(sink_writer),
		cmocka_unit_test(short_reads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
