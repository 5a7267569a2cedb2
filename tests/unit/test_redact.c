/*
 * test_redact.c - heapsh --redact's rewriter (src/hprof/redact.c) on dumps
 * written byte by byte with hprof_writer.h: the copy must be, byte for
 * byte, the same dump written with the values the redactor promises
 * (zeros; 'x' filler with --keep-lengths; kept values with --keep), for
 * ids of 4 and 8 bytes, an instance before its class's CLASS DUMP, a
 * gzip'd input and output; and bad input must fail at the right offset
 * and leave no file behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <cmocka.h>

#include "hprof_writer.h"
#include "props_heap.h"
#include "../../src/hprof/redact.h"

enum mode { ORIG, ZEROED, LENGTHS, KEEP };

/* Offsets into the dump of what the error tests break. */
struct where {
	size_t instance, array;
};

/*
 * secret_dump: the test dump, its values as mode says they must read:
 * class Secretive extends Base extends java.lang.Object;
 * Secretive { int a; Object ref; static long s; constant pool: int },
 * Base { long b }; one Secretive (written before the CLASS DUMPs) whose
 * ref is a char[] "hi"; a byte[], an int[], an Object[] holding the
 * Secretive; a UTF8 record no record names anything with (a literal).
 */
static void secret_dump(struct hw *w, int ids, enum mode m, struct where *at)
{
	bool keep = m == KEEP, orig = m == ORIG;
	hw_init(w, ids, 2, 1234);
	hw_utf8(w, 1, "java/lang/Object");
	hw_utf8(w, 2, "Base");
	hw_utf8(w, 3, "Secretive");
	hw_utf8(w, 4, "a");
	hw_utf8(w, 5, "ref");
	hw_utf8(w, 6, "b");
	hw_utf8(w, 7, "s");
	static const char zeros[14];
	hw_rec_begin(w, HPROF_UTF8);	/* a literal: 14 bytes, zeroed in a copy */
	hw_id(w, 8);
	hw_bytes(w, orig ? "literal-SECRET" : zeros, 14);
	hw_rec_end(w);
	hw_load_class(w, 1, 0x100, 0, 1);
	hw_load_class(w, 2, 0x200, 0, 2);
	hw_load_class(w, 3, 0x300, 0, 3);
	hw_dump_begin(w, HPROF_HEAP_DUMP_SEGMENT);
	at->instance = hw_instance(w, 0x1000, 0x300, 3, (struct hw_value[]){
		HW_INT(orig || keep ? 0x11223344 : 0), HW_OBJ(0x2000),
		HW_LONG(orig ? 0x5566778899AABBCCULL : 0)});
	struct hw_cp cp = {1, HW_INT(orig || keep ? 0xAABBCCDD : 0)};
	struct hw_static st = {7, HW_LONG(orig || keep ? 0x5EC5EC5EC5EC5EC5ULL : 0)};
	struct hw_field fs[2] = {{4, HPROF_INT}, {5, HPROF_OBJECT}}, fb = {6, HPROF_LONG};
	hw_class_dump(w, &(struct hw_class){.id = 0x300, .super = 0x200, .ncp = 1, .cp = &cp,
					    .nstatics = 1, .statics = &st, .nfields = 2,
					    .fields = fs});
	hw_class_dump(w, &(struct hw_class){.id = 0x200, .super = 0x100, .nfields = 1,
					    .fields = &fb});
	hw_class_dump(w, &(struct hw_class){.id = 0x100});
	uint64_t hi[2] = {'h', 'i'}, x2[2] = {'x', 'x'}, z[3] = {0, 0, 0};
	at->array = hw_prim_array_vals(w, 0x2000, HPROF_CHAR, 2,
				       orig || keep ? hi : m == LENGTHS ? x2 : z);
	uint64_t b3[3] = {1, 2, 3}, x3[3] = {'x', 'x', 'x'}, i2[2] = {7, 8};
	hw_prim_array_vals(w, 0x3000, HPROF_BYTE, 3, orig ? b3 : m == LENGTHS ? x3 : z);
	hw_prim_array_vals(w, 0x4000, HPROF_INT, 2, orig ? i2 : z);
	hw_obj_array(w, 0x5000, 0, 1, (uint64_t[]){0x1000});
	hw_root(w, HPROF_GC_ROOT_STICKY_CLASS, 0x300);
	hw_root_jni_global(w, 0x5000, 0x77);
	hw_dump_end(w);
	hw_dump_end_record(w);
}

static char dir[64];

static int files_in_dir(void)
{
	DIR *d = opendir(dir);
	int n = 0;
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/heapsh-unit-redact-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* slurp: the file's bytes (gunzipped if gzip'd); *n its length. */
static uint8_t *slurp(const char *path, size_t *n)
{
	gzFile gz = gzopen(path, "rb");
	assert_non_null(gz);
	size_t cap = 1 << 16;
	uint8_t *b = malloc(cap);
	int got = gzread(gz, b, (unsigned)cap);
	assert_true(got >= 0 && (size_t)got < cap);
	gzclose(gz);
	*n = (size_t)got;
	return b;
}

static void redact_ok(const char *in, const char *out, const struct hprof_redact_opts *o)
{
	struct hs_error err;
	memset(&err, 0, sizeof err);
	int st = hprof_redact(in, out, o, NULL, &err);
	if (st != HS_OK)
		fail_msg("hprof_redact(%s): %s (offset %lld)", in, err.msg, (long long)err.offset);
}

static void expect_same(const char *path, const struct hw *want)
{
	size_t n;
	uint8_t *got = slurp(path, &n);
	unlink(path);	/* a failure here leaves nothing for the next test to find */
	assert_int_equal(n, want->len);
	for (size_t i = 0; i < n; i++)
		if (got[i] != want->b[i])
			fail_msg("%s: byte %zu is 0x%02x, expected 0x%02x", path, i, got[i],
				 want->b[i]);
	free(got);
}

static void run_mode(int ids, enum mode m, bool gz_in, const char *out_name)
{
	struct hw orig, want;
	struct where at;
	secret_dump(&orig, ids, ORIG, &at);
	secret_dump(&want, ids, m, &at);
	static const char *const keep[] = {"Secretive"};
	struct hprof_redact_opts o = {0};
	o.keep_lengths = m == LENGTHS;
	if (m == KEEP) {
		o.keep = keep;
		o.nkeep = 1;
	}
	char out[128];
	snprintf(out, sizeof out, "%s/%s", dir, out_name);
	redact_ok(gz_in ? hw_save_gz(&orig, 100) : hw_save(&orig), out, &o);
	expect_same(out, &want);
	unlink(out);
	assert_int_equal(files_in_dir(), 0);
	hw_free(&orig);
	hw_free(&want);
}

static void test_zeroed_id8(void **state)
{
	(void)state;
	run_mode(8, ZEROED, false, "copy.hprof");
}

static void test_zeroed_id4(void **state)
{
	(void)state;
	run_mode(4, ZEROED, false, "copy.hprof");
}

static void test_keep_lengths(void **state)
{
	(void)state;
	run_mode(8, LENGTHS, false, "copy.hprof");
	run_mode(4, LENGTHS, false, "copy.hprof");
}

static void test_keep_class(void **state)
{
	(void)state;
	run_mode(8, KEEP, false, "copy.hprof");
	run_mode(4, KEEP, false, "copy.hprof");
}

static void test_gzip_in_and_out(void **state)
{
	(void)state;
	run_mode(8, ZEROED, true, "copy.hprof");
	run_mode(8, ZEROED, true, "copy.hprof.gz");
	run_mode(8, ZEROED, false, "copy.hprof.gz");
	char out[128];
	struct hw orig;
	struct where at;
	secret_dump(&orig, 8, ORIG, &at);
	snprintf(out, sizeof out, "%s/copy.hprof.gz", dir);
	redact_ok(hw_save(&orig), out, NULL);
	FILE *f = fopen(out, "rb");
	assert_non_null(f);
	assert_int_equal(fgetc(f), 0x1f);
	assert_int_equal(fgetc(f), 0x8b);
	fclose(f);
	unlink(out);
	hw_free(&orig);
}

/*
 * fails: hprof_redact must fail with a message holding text, at offset
 * (ANY: wherever the gzip stream ends); no file left.
 */
#define ANY (-2)
static void fails(const char *in, const char *text, int64_t offset)
{
	char out[128];
	snprintf(out, sizeof out, "%s/copy.hprof", dir);
	struct hs_error err;
	memset(&err, 0, sizeof err);
	assert_int_equal(hprof_redact(in, out, NULL, NULL, &err), HS_ERR);
	if (!strstr(err.msg, text))
		fail_msg("expected '%s' in: %s", text, err.msg);
	if (offset != ANY)
		assert_int_equal(err.offset, offset);
	assert_int_equal(files_in_dir(), 0);
}

static void test_truncated(void **state)
{
	(void)state;
	struct hw w;
	struct where at;
	secret_dump(&w, 8, ORIG, &at);
	fails(hw_save_prefix(&w, at.instance + 10), "is cut off", (int64_t)at.instance);
	fails(hw_save_prefix(&w, at.array + 20), "truncated", (int64_t)at.array);
	fails(hw_save_prefix(&w, 20), "not an HPROF heap dump", 0);
	fails(hw_save_gz(&w, 60), "truncated", ANY);
	hw_free(&w);
}

static void test_unknown_sub_record(void **state)
{
	(void)state;
	struct hw w;
	struct where at;
	secret_dump(&w, 8, ORIG, &at);
	w.b[at.array] = 0x42;
	fails(hw_save(&w), "unknown heap dump sub-record tag 0x42", (int64_t)at.array);
	hw_free(&w);
}

static void test_instance_layout_mismatch(void **state)
{
	(void)state;
	struct hw w;
	struct where at;
	secret_dump(&w, 8, ORIG, &at);
	/* The instance says its class is Base (8 field bytes), and has 20. */
	hw_put_u4(w.b + at.instance + 1 + 8 + 4 + 4, 0x200);
	fails(hw_save(&w), "lays out 8", (int64_t)at.instance);
	hw_free(&w);
}

/*
 * A property heapsh's model reads (java.version) keeps its key and value,
 * followed from System.props through objects in either of props_heap's
 * orders; another (db.password) is zeroed.
 */
static void test_system_properties(void **state)
{
	(void)state;
	for (int k = 0; k < 4; k++) {
		int ids = k & 1 ? 4 : 8, order = k >> 1;
		struct hw orig, want;
		props_heap(&orig, ids, false, order);
		props_heap(&want, ids, true, order);
		char out[128];
		snprintf(out, sizeof out, "%s/props.hprof", dir);
		struct hprof_redact_stats st;
		struct hs_error err;
		memset(&err, 0, sizeof err);
		if (hprof_redact(hw_save(&orig), out, NULL, &st, &err) != HS_OK)
			fail_msg("hprof_redact: %s", err.msg);
		assert_true(st.passes >= 3);	/* the chain steps back in the file */
		expect_same(out, &want);
		hw_free(&orig);
		hw_free(&want);
	}
}

static void test_same_file(void **state)
{
	(void)state;
	struct hw w;
	struct where at;
	secret_dump(&w, 8, ORIG, &at);
	const char *p = hw_save(&w);
	struct hs_error err;
	assert_int_equal(hprof_redact(p, p, NULL, NULL, &err), HS_ERR);
	assert_non_null(strstr(err.msg, "cannot replace the dump"));
	hw_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zeroed_id8),
		cmocka_unit_test(test_zeroed_id4),
		cmocka_unit_test(test_keep_lengths),
		cmocka_unit_test(test_keep_class),
		cmocka_unit_test(test_gzip_in_and_out),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_unknown_sub_record),
		cmocka_unit_test(test_instance_layout_mismatch),
		cmocka_unit_test(test_system_properties),
		cmocka_unit_test(test_same_file),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
