/*
 * test_snapshot.c - the shell's reader of the agent's SNAPSHOT records
 * (src/attach/snapshot.c, docs/protocol.md) against a broken or hostile
 * agent: records that claim more than the JVM's heap can hold are refused
 * without allocating for them (fuzz findings of issue 15), a malformed
 * THREAD record frees only what it read, and a well-formed stream with an
 * instance of a class without fields becomes a dump heapsh opens; the same
 * records cut into frames of any size make the same file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sys/resource.h>
#include <unistd.h>

#include "../../src/attach/snapshot.h"
#include "../../src/heap/heap.h"

struct rec {
	uint8_t b[4096];
	size_t n;
};

static void u8(struct rec *r, uint8_t v)
{
	r->b[r->n++] = v;
}

static void be(struct rec *r, uint64_t v, int bytes)
{
	for (int k = bytes - 1; k >= 0; k--)
		u8(r, (uint8_t)(v >> (8 * k)));
}

static void str(struct rec *r, const char *s)
{
	be(r, strlen(s), 4);
	memcpy(r->b + r->n, s, strlen(s));
	r->n += strlen(s);
}

/* CLASS: id, super, loader, interface fields, signature, no fields. */
static void class_rec(struct rec *r, uint64_t id, uint64_t super, const char *sig)
{
	u8(r, 1);
	be(r, id, 8);
	be(r, super, 8);
	be(r, 0, 8);
	be(r, 0, 4);
	str(r, sig);
	be(r, 0, 2);
}

/* OBJECT: id, class id, size, array length (-1: not an array). */
static void object_rec(struct rec *r, uint64_t id, uint64_t cls, int32_t len)
{
	u8(r, 2);
	be(r, id, 8);
	be(r, cls, 8);
	be(r, 16, 8);
	be(r, (uint32_t)len, 4);
}

static struct snap_builder *with_classes(struct rec *r)
{
	struct snap_builder *b = snap_new();
	snap_heap_bound(b, 1 << 20);	/* a 1 MiB heap */
	r->n = 0;
	class_rec(r, 1, 0, "Ljava/lang/Object;");
	class_rec(r, 2, 1, "[Ljava/lang/Object;");
	class_rec(r, 3, 1, "LEmpty;");
	return b;
}

/* Address space capped, so that an allocation for the claimed sizes fails loudly. */
static void cap_memory(void)
{
	struct rlimit rl = {1ULL << 31, 1ULL << 31};
	setrlimit(RLIMIT_AS, &rl);
}

static void test_object_id_beyond_heap(void **state)
{
	(void)state;
	struct rec r;
	struct snap_builder *b = with_classes(&r);
	object_rec(&r, 0xFFFFFFFDull, 1, -1);	/* 2^32 - 3: once 36 GB of arrays */
	struct hs_error err;
	assert_int_equal(snap_feed(b, r.b, r.n, &err), HS_ERR);
	assert_non_null(strstr(err.msg, "OBJECT record with id 4294967293"));
	snap_free(b);
	/* within the heap's bound, an id is fine */
	b = with_classes(&r);
	object_rec(&r, 4, 1, -1);
	assert_int_equal(snap_feed(b, r.b, r.n, &err), HS_OK);
	snap_free(b);
}

static void test_array_beyond_heap(void **state)
{
	(void)state;
	struct rec r;
	struct snap_builder *b = with_classes(&r);
	object_rec(&r, 4, 2, 0x7FFFFFFF);	/* once a 32 GB realloc when written */
	struct hs_error err;
	assert_int_equal(snap_feed(b, r.b, r.n, &err), HS_ERR);
	assert_non_null(strstr(err.msg, "length 2147483647"));
	snap_free(b);
	/* a primitive array of more bytes than the heap */
	b = with_classes(&r);
	u8(&r, 6);
	be(&r, 4, 8);
	u8(&r, 'J');
	be(&r, 1u << 20, 4);	/* 8 MiB of longs in a 1 MiB heap */
	assert_int_equal(snap_feed(b, r.b, r.n, &err), HS_ERR);
	snap_free(b);
}

static void test_bad_thread(void **state)
{
	(void)state;
	struct rec r;
	struct snap_builder *b = with_classes(&r);
	u8(&r, 7);
	be(&r, 4, 8);
	be(&r, 1, 4);
	str(&r, "worker");
	be(&r, 70000, 4);	/* frames over the limit: nothing read, nothing freed */
	struct hs_error err;
	assert_int_equal(snap_feed(b, r.b, r.n, &err), HS_ERR);
	assert_non_null(strstr(err.msg, "THREAD"));
	snap_free(b);
	/* a name longer than the stream */
	b = with_classes(&r);
	u8(&r, 7);
	be(&r, 4, 8);
	be(&r, 1, 4);
	be(&r, 2u << 20, 4);
	memset(r.b + r.n, 'x', 64);
	r.n += 64;
	be(&r, 0, 4);
	int st = snap_feed(b, r.b, r.n, &err);
	(void)st;	/* refused now, or left for more data: either way no crash */
	snap_free(b);
}

/* An instance of a class with no field bytes, written and opened. */
static void test_empty_instance(void **state)
{
	(void)state;
	struct rec r;
	struct snap_builder *b = with_classes(&r);
	object_rec(&r, 4, 3, -1);
	u8(&r, 4);		/* ROOT: JNI global */
	u8(&r, 2);
	be(&r, 4, 8);
	be(&r, 0, 8);
	be(&r, (uint32_t)-1, 4);
	struct hs_error err;
	assert_int_equal(snap_feed(b, r.b, r.n, &err), HS_OK);
	char path[] = "/tmp/heapsh-test-snap-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(snap_write_hprof(b, path, 1, &err), HS_OK);
	snap_free(b);
	struct heap *h = NULL;
	assert_int_equal(heap_load(path, NULL, &h, &err), HS_OK);
	assert_int_not_equal(heap_index(h, 4), HEAP_NONE);
	heap_free(h);
	unlink(path);
}

/* write_fed: the records r fed in frames of `frame` bytes (0: one), written to a new file. */
static void write_fed(const struct rec *r, size_t frame, char *path)
{
	struct snap_builder *b = snap_new();
	snap_heap_bound(b, 1 << 20);
	struct hs_error err;
	for (size_t off = 0; off < r->n;) {
		size_t n = frame && r->n - off > frame ? frame : r->n - off;
		assert_int_equal(snap_feed(b, r->b + off, n, &err), HS_OK);
		off += n;
	}
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(snap_write_hprof(b, path, 2, &err), HS_OK);
	snap_free(b);
}

/*
 * The same records give the same HPROF file however the frames cut them:
 * whole, a byte a frame (each record cut many times; read again only as
 * its bytes double), seven bytes a frame.
 */
static void test_frames(void **state)
{
	(void)state;
	struct rec r;
	snap_free(with_classes(&r));
	u8(&r, 1);	/* a class of 40 fields */
	be(&r, 4, 8);
	be(&r, 1, 8);
	be(&r, 0, 8);
	be(&r, 0, 4);
	str(&r, "LWide;");
	be(&r, 40, 2);
	for (int k = 0; k < 40; k++) {
		char name[8];
		snprintf(name, sizeof name, "f%d", k);
		str(&r, name);
		str(&r, "I");
		u8(&r, 0);
	}
	object_rec(&r, 5, 4, -1);
	object_rec(&r, 6, 3, -1);
	u8(&r, 5);	/* PRIMITIVE: 5.f3 = 42 */
	be(&r, 5, 8);
	u8(&r, 2);
	be(&r, 3, 4);
	u8(&r, 'I');
	be(&r, 42, 8);
	u8(&r, 7);	/* THREAD with two frames */
	be(&r, 6, 8);
	be(&r, 1, 4);
	str(&r, "main");
	be(&r, 2, 4);
	for (int k = 0; k < 2; k++) {
		str(&r, "LMain;");
		str(&r, k ? "main" : "run");
		str(&r, "()V");
	}
	static const size_t frames[] = {0, 1, 7};
	char path[3][32];
	for (int k = 0; k < 3; k++) {
		snprintf(path[k], sizeof path[k], "/tmp/heapsh-test-snap-XXXXXX");
		write_fed(&r, frames[k], path[k]);
	}
	uint8_t *f[3];
	size_t n[3];
	for (int k = 0; k < 3; k++) {
		FILE *fp = fopen(path[k], "rb");
		assert_non_null(fp);
		static uint8_t buf[3][1 << 16];
		f[k] = buf[k];
		n[k] = fread(f[k], 1, sizeof buf[k], fp);
		fclose(fp);
		unlink(path[k]);
		memset(f[k] + 23, 0, 8);	/* the header's time in ms */
	}
	assert_true(n[0] > 100);
	assert_int_equal(n[1], n[0]);
	assert_int_equal(n[2], n[0]);
	assert_memory_equal(f[1], f[0], n[0]);
	assert_memory_equal(f[2], f[0], n[0]);
}

int main(void)
{
	cap_memory();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_object_id_beyond_heap),
		cmocka_unit_test(test_array_beyond_heap),
		cmocka_unit_test(test_bad_thread),
		cmocka_unit_test(test_empty_instance),
		cmocka_unit_test(test_frames),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
