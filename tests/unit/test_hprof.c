/*
 * test_hprof.c - the HPROF reader (src/hprof) on dumps written byte by byte
 * with hprof_writer.h: header, big-endian readers, records, every
 * sub-record kind, CLASS DUMP decoding, gzip'd and cut-off files.
 *
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

#include "hprof_writer.h"

static struct hprof *open_ok(const char *path)
{
	struct hprof *h = NULL;
	struct hs_error err;
	memset(&err, 0, sizeof err);
	int st = hprof_open(path, &h, &err);
	if (st != HS_OK)
		fail_msg("hprof_open(%s): %s", path, err.msg);
	assert_non_null(h);
	return h;
}

/* open_err: hprof_open must fail; returns the error's offset. */
static int64_t open_err(const char *path, char *msg, size_t msgsize)
{
	static struct hprof sentinel;
	struct hprof *h = &sentinel;	/* must be reset to NULL */
	struct hs_error err;
	memset(&err, 0, sizeof err);
	err.offset = 12345;
	assert_int_equal(hprof_open(path, &h, &err), HS_ERR);
	assert_null(h);
	assert_true(err.msg[0] != 0);
	if (msg)
		snprintf(msg, msgsize, "%s", err.msg);
	return err.offset;
}

/* ---- header ---- */

static void test_header_versions_and_id_sizes(void **state)
{
	(void)state;
	for (int minor = 1; minor <= 3; minor++)
		for (int ids = 4; ids <= 8; ids += 4) {
			struct hw w;
			hw_init(&w, ids, minor, 0x0000018B2C3D4E5FULL);
			size_t rec = hw_utf8(&w, 0x77, "hello");
			struct hprof *h = open_ok(hw_save(&w));
			assert_int_equal(h->minor, minor);
			assert_int_equal(h->id_size, ids);
			assert_int_equal(h->timestamp_ms, 0x0000018B2C3D4E5FULL);
			assert_int_equal(h->body, HW_HEADER_SIZE);
			assert_int_equal(rec, HW_HEADER_SIZE);
			assert_int_equal(h->size, w.len);
			assert_int_equal(h->file_size, w.len);
			assert_false(h->gzip);
			assert_false(h->truncated);
			assert_string_equal(h->path, w.path);
			assert_memory_equal(h->data, w.b, w.len);
			hprof_close(h);
			hw_free(&w);
		}
}

static void save_text(struct hw *w, const char *text)
{
	memset(w, 0, sizeof *w);
	w->ids = 4;
	hw_bytes(w, text, strlen(text));
	hw_save(w);
}

static void test_header_rejects_non_hprof(void **state)
{
	(void)state;
	struct hw w;
	char msg[512];
	save_text(&w, "this is certainly not a heap dump, just some text\n");
	assert_int_equal(open_err(w.path, msg, sizeof msg), 0);
	assert_non_null(strstr(msg, "not an HPROF"));
	hw_free(&w);

	/* A near miss: the wrong version (1.0.3 is Android's, read; 1.0.4 is no one's). */
	hw_init(&w, 4, 2, 0);
	w.b[17] = '4';
	hw_utf8(&w, 1, "x");
	hw_save(&w);
	assert_int_equal(open_err(w.path, NULL, 0), 0);
	hw_free(&w);

	/* A real header cut before the timestamp ends. */
	hw_init(&w, 8, 2, 0);
	hw_save_prefix(&w, HW_HEADER_SIZE - 1);
	assert_int_equal(open_err(w.path, NULL, 0), 0);
	hw_free(&w);

	/* An empty file. */
	save_text(&w, "");
	assert_int_equal(open_err(w.path, NULL, 0), 0);
	hw_free(&w);

	/* No file at all: an error about the path, not a file position. */
	assert_int_equal(open_err("/nonexistent/heapsh/dump.hprof", NULL, 0), -1);
}

static void test_header_rejects_id_size_5(void **state)
{
	(void)state;
	struct hw w;
	char msg[512];
	hw_init(&w, 5, 2, 0);
	hw_utf8(&w, 1, "x");
	hw_save(&w);
	/* The offset is that of the u4 identifier size, after the magic and NUL. */
	assert_int_equal(open_err(w.path, msg, sizeof msg), 19);
	assert_non_null(strstr(msg, "5"));
	hw_free(&w);
}

/* ---- big-endian readers and basic types ---- */

static void test_big_endian_readers(void **state)
{
	(void)state;
	static const uint8_t b[] = {0x81, 0x02, 0xF3, 0x04, 0x95, 0x06, 0xA7, 0xFF, 0x00};
	assert_int_equal(hprof_u2(b), 0x8102);
	assert_int_equal(hprof_u2(b + 6), 0xA7FF);
	assert_int_equal(hprof_u4(b), 0x8102F304u);
	assert_int_equal(hprof_u4(b + 5), 0x06A7FF00u);
	assert_true(hprof_u8(b) == 0x8102F3049506A7FFULL);
	assert_true(hprof_u8(b + 1) == 0x02F3049506A7FF00ULL);

	struct hprof h4, h8;
	memset(&h4, 0, sizeof h4);
	memset(&h8, 0, sizeof h8);
	h4.id_size = 4;
	h8.id_size = 8;
	assert_true(hprof_id(&h4, b) == 0x8102F304u);
	assert_true(hprof_id(&h8, b) == 0x8102F3049506A7FFULL);
}

static void test_basic_types(void **state)
{
	(void)state;
	struct hprof h;
	memset(&h, 0, sizeof h);
	static const struct { int t, size; const char *name; } types[] = {
		{HPROF_BOOLEAN, 1, "boolean"}, {HPROF_CHAR, 2, "char"},
		{HPROF_FLOAT, 4, "float"}, {HPROF_DOUBLE, 8, "double"},
		{HPROF_BYTE, 1, "byte"}, {HPROF_SHORT, 2, "short"},
		{HPROF_INT, 4, "int"}, {HPROF_LONG, 8, "long"}};
	for (int ids = 4; ids <= 8; ids += 4) {
		h.id_size = ids;
		for (size_t k = 0; k < sizeof types / sizeof *types; k++) {
			assert_int_equal(hprof_type_size(&h, types[k].t), types[k].size);
			assert_string_equal(hprof_type_name(types[k].t), types[k].name);
		}
		assert_int_equal(hprof_type_size(&h, HPROF_OBJECT), ids);
		assert_int_equal(hprof_type_size(&h, 0), 0);
		assert_int_equal(hprof_type_size(&h, 3), 0);
		assert_int_equal(hprof_type_size(&h, 12), 0);
	}
	assert_string_equal(hprof_type_name(HPROF_OBJECT), "object");
}

/* ---- top-level records ---- */

static void test_record_next(void **state)
{
	(void)state;
	for (int ids = 4; ids <= 8; ids += 4) {
		struct hw w;
		hw_init(&w, ids, 2, 0);
		size_t r1 = hw_utf8(&w, 5, "java/lang/Object");
		size_t r2 = hw_load_class(&w, 1, 0x1000, 0, 5);
		size_t r3 = hw_rec_begin(&w, HPROF_HEAP_DUMP_SEGMENT);
		hw_rec_end(&w);	/* empty body */
		/* A record claiming 100 bytes with only 10 in the file. */
		size_t r4 = hw_rec_begin(&w, HPROF_UTF8);
		hw_put_u4(w.b + w.rec_len_at, 100);
		w.rec_len_at = 0;
		hw_bytes(&w, "0123456789", 10);
		struct hprof *h = open_ok(hw_save(&w));

		size_t pos = h->body;
		struct hprof_rec r;
		struct hs_error err;
		assert_int_equal(hprof_record_next(h, &pos, &r, &err), 1);
		assert_int_equal(r.tag, HPROF_UTF8);
		assert_int_equal(r.off, r1);
		assert_int_equal(r.body, r1 + 9);
		assert_int_equal(r.len, (size_t)ids + strlen("java/lang/Object"));
		assert_int_equal(pos, r2);
		assert_int_equal(hprof_record_next(h, &pos, &r, &err), 1);
		assert_int_equal(r.tag, HPROF_LOAD_CLASS);
		assert_int_equal(r.off, r2);
		assert_int_equal(r.len, 8 + 2 * (size_t)ids);
		assert_int_equal(hprof_record_next(h, &pos, &r, &err), 1);
		assert_int_equal(r.tag, HPROF_HEAP_DUMP_SEGMENT);
		assert_int_equal(r.off, r3);
		assert_int_equal(r.len, 0);
		assert_int_equal(pos, r4);

		memset(&err, 0, sizeof err);
		assert_int_equal(hprof_record_next(h, &pos, &r, &err), HS_ERR);
		assert_int_equal(err.offset, r4);
		assert_non_null(strstr(err.msg, "truncated"));
		assert_int_equal(pos, r4);	/* not advanced past the bad record */
		hprof_close(h);

		/* The file ends inside a record's 9-byte header. */
		hw_save_prefix(&w, r4 + 5);
		h = open_ok(w.path);
		pos = r4;
		memset(&err, 0, sizeof err);
		assert_int_equal(hprof_record_next(h, &pos, &r, &err), HS_ERR);
		assert_int_equal(err.offset, r4);
		hprof_close(h);

		/* And exactly at a record boundary: the end, no error. */
		hw_save_prefix(&w, r4);
		h = open_ok(w.path);
		pos = r3;
		assert_int_equal(hprof_record_next(h, &pos, &r, &err), 1);
		assert_int_equal(hprof_record_next(h, &pos, &r, &err), 0);
		hprof_close(h);
		hw_free(&w);
	}
}

/* ---- HEAP DUMP sub-records ---- */

struct want_sub {
	uint8_t tag;
	size_t off, end;
	uint64_t id;
	uint32_t thread_serial;
	int32_t frame;
	uint32_t trace_serial;
	uint64_t extra_id;
};

struct sub_dump {
	struct hw w;
	size_t body, end;	/* the HEAP DUMP record's body */
	struct want_sub want[40];
	size_t nwant;
	size_t class_off;	/* the CLASS DUMP */
	size_t inst_off, objarr_off, primarr_off;
};

/* add: the sub-record just written from off, with what it should decode to. */
static void add(struct sub_dump *d, size_t off, uint64_t id, uint32_t thread, int32_t frame,
		uint32_t trace, uint64_t extra)
{
	struct want_sub *s = &d->want[d->nwant++];
	s->tag = d->w.b[off];
	s->off = off;
	s->end = d->w.len;
	s->id = id;
	s->thread_serial = thread;
	s->frame = frame;
	s->trace_serial = trace;
	s->extra_id = extra;
}

/* Ids that use the whole width: high bits set for 8-byte ids. */
static uint64_t big_id(int ids, uint64_t low)
{
	return ids == 8 ? 0xC1D2E3F400000000ULL | low : 0x80000000u | low;
}

static const struct hw_cp sample_cp[] = {
	{3, {HPROF_OBJECT, 0}}, {7, {HPROF_INT, 0x01020304}}, {9, {HPROF_LONG, 0x1122334455667788ULL}}};
static const struct hw_field sample_fields[] = {
	{0x31, HPROF_INT}, {0x32, HPROF_OBJECT}, {0x33, HPROF_BOOLEAN}};

/* sample_class: a CLASS DUMP with every part filled in. */
static struct hw_class sample_class(int ids, struct hw_cp *cp, struct hw_static *st)
{
	memcpy(cp, sample_cp, sizeof sample_cp);
	cp[0].v.bits = big_id(ids, 0x500);
	st[0] = (struct hw_static){0x21, {HPROF_OBJECT, big_id(ids, 0x510)}};
	st[1] = (struct hw_static){0x22, HW_INT(-2)};
	st[2] = (struct hw_static){0x23, HW_LONG(0x8000000000000001ULL)};
	st[3] = (struct hw_static){0x24, hw_double(2.5)};
	st[4] = (struct hw_static){0x25, hw_float(-0.75f)};
	st[5] = (struct hw_static){0x26, HW_CHAR(0x20AC)};
	st[6] = (struct hw_static){0x27, HW_SHORT(-3)};
	st[7] = (struct hw_static){0x28, HW_BYTE(-1)};
	st[8] = (struct hw_static){0x29, HW_BOOL(1)};
	return (struct hw_class){
		.id = big_id(ids, 0x100), .super = big_id(ids, 0x110),
		.loader = big_id(ids, 0x120), .signers = big_id(ids, 0x130),
		.domain = big_id(ids, 0x140),
		.instance_size = 4 + (uint32_t)ids + 1,
		.ncp = 3, .cp = cp, .nstatics = 9, .statics = st,
		.nfields = 3, .fields = sample_fields};
}

/* build_sub_dump: one HEAP DUMP with every sub-record kind heapsh reads. */
static void build_sub_dump(struct sub_dump *d, int ids)
{
	memset(d, 0, sizeof *d);
	struct hw *w = &d->w;
	hw_init(w, ids, 2, 0);
	hw_utf8(w, 0x31, "a");
	hw_dump_begin(w, HPROF_HEAP_DUMP);
	d->body = w->len;
	size_t o;
	o = hw_root(w, HPROF_GC_ROOT_UNKNOWN, big_id(ids, 0x11));
	add(d, o, big_id(ids, 0x11), 0, -1, 0, 0);
	o = hw_root_jni_global(w, big_id(ids, 0x12), big_id(ids, 0xABC));
	add(d, o, big_id(ids, 0x12), 0, -1, 0, big_id(ids, 0xABC));
	o = hw_root_frame(w, HPROF_GC_ROOT_JNI_LOCAL, big_id(ids, 0x13), 7, 2);
	add(d, o, big_id(ids, 0x13), 7, 2, 0, 0);
	o = hw_root_frame(w, HPROF_GC_ROOT_JAVA_FRAME, big_id(ids, 0x14), 0x01020304, 0x7FFFFFFF);
	add(d, o, big_id(ids, 0x14), 0x01020304, 0x7FFFFFFF, 0, 0);
	o = hw_root_frame(w, HPROF_GC_ROOT_JAVA_FRAME, big_id(ids, 0x15), 8, 0xFFFFFFFF);
	add(d, o, big_id(ids, 0x15), 8, -1, 0, 0);
	o = hw_root_thread(w, HPROF_GC_ROOT_NATIVE_STACK, big_id(ids, 0x16), 9);
	add(d, o, big_id(ids, 0x16), 9, -1, 0, 0);
	o = hw_root(w, HPROF_GC_ROOT_STICKY_CLASS, big_id(ids, 0x17));
	add(d, o, big_id(ids, 0x17), 0, -1, 0, 0);
	o = hw_root_thread(w, HPROF_GC_ROOT_THREAD_BLOCK, big_id(ids, 0x18), 10);
	add(d, o, big_id(ids, 0x18), 10, -1, 0, 0);
	o = hw_root(w, HPROF_GC_ROOT_MONITOR_USED, big_id(ids, 0x19));
	add(d, o, big_id(ids, 0x19), 0, -1, 0, 0);
	o = hw_root_thread_obj(w, big_id(ids, 0x1A), 11, 0xCAFE);
	add(d, o, big_id(ids, 0x1A), 11, -1, 0xCAFE, 0);

	struct hw_cp cp[3];
	struct hw_static st[9];
	struct hw_class c = sample_class(ids, cp, st);
	d->class_off = o = hw_class_dump(w, &c);
	add(d, o, c.id, 0, -1, 0, 0);
	d->inst_off = o = hw_instance(w, big_id(ids, 0x200), c.id, 3,
				      (struct hw_value[]){HW_INT(5), HW_OBJ(big_id(ids, 0x201)),
							  HW_BOOL(1)});
	add(d, o, big_id(ids, 0x200), 0, -1, 0, 0);
	d->objarr_off = o = hw_obj_array(w, big_id(ids, 0x300), big_id(ids, 0x301), 3,
					 (uint64_t[]){big_id(ids, 0x200), 0, big_id(ids, 0x1A)});
	add(d, o, big_id(ids, 0x300), 0, -1, 0, 0);
	d->primarr_off = o = hw_prim_array_vals(w, big_id(ids, 0x400), HPROF_SHORT, 4,
						(uint64_t[]){1, 0xFFFF, 0x8000, 0x7FFF});
	add(d, o, big_id(ids, 0x400), 0, -1, 0, 0);
	o = hw_prim_array(w, big_id(ids, 0x401), HPROF_LONG, 0, "");
	add(d, o, big_id(ids, 0x401), 0, -1, 0, 0);

	/* Android's extensions. */
	static const uint8_t id_only[] = {
		HPROF_GC_ROOT_INTERNED_STRING, HPROF_GC_ROOT_FINALIZING, HPROF_GC_ROOT_DEBUGGER,
		HPROF_GC_ROOT_REFERENCE_CLEANUP, HPROF_GC_ROOT_VM_INTERNAL, HPROF_GC_UNREACHABLE};
	for (size_t k = 0; k < sizeof id_only; k++) {
		o = hw_root(w, id_only[k], big_id(ids, 0x600 + k));
		add(d, o, big_id(ids, 0x600 + k), 0, -1, 0, 0);
	}
	o = hw_root_frame(w, HPROF_GC_ROOT_JNI_MONITOR, big_id(ids, 0x610), 12, 3);
	add(d, o, big_id(ids, 0x610), 12, 3, 0, 0);
	o = hw_prim_array_nodata(w, big_id(ids, 0x620), HPROF_INT, 1000);
	add(d, o, big_id(ids, 0x620), 0, -1, 0, 0);
	o = hw_heap_dump_info(w, 0x41, 0x31);
	/* Its "id" is whatever the first bytes are; only the bounds matter. */
	add(d, o, 0, 0, -1, 0, 0);
	d->end = w->len;
	hw_dump_end(w);
	hw_save(w);
}

static void check_sub_records(int ids)
{
	struct sub_dump d;
	build_sub_dump(&d, ids);
	struct hprof *h = open_ok(d.w.path);
	size_t pos = d.body;
	struct hprof_sub s;
	struct hs_error err;
	size_t seen = 0;
	int r;
	bool tags[256] = {false};
	while ((r = hprof_sub_next(h, &pos, d.end, &s, &err)) == 1) {
		assert_true(seen < d.nwant);
		const struct want_sub *e = &d.want[seen++];
		assert_int_equal(s.tag, e->tag);
		assert_int_equal(s.off, e->off);
		assert_int_equal(s.end, e->end);
		assert_int_equal(pos, e->end);
		if (e->tag != HPROF_GC_HEAP_DUMP_INFO)
			assert_true(s.id == e->id);
		assert_int_equal(s.thread_serial, e->thread_serial);
		assert_int_equal(s.frame, e->frame);
		assert_int_equal(s.trace_serial, e->trace_serial);
		assert_true(s.extra_id == e->extra_id);
		tags[s.tag] = true;
	}
	assert_int_equal(r, 0);
	assert_int_equal(seen, d.nwant);
	assert_int_equal(pos, d.end);
	/* Every kind was there. */
	static const uint8_t all[] = {
		0xFF, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x20, 0x21, 0x22, 0x23,
		0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x8E, 0x90, 0xC3, 0xFE};
	for (size_t k = 0; k < sizeof all; k++)
		assert_true(tags[all[k]]);
	hprof_close(h);
	hw_free(&d.w);
}

static void test_sub_records_id4(void **state)
{
	(void)state;
	check_sub_records(4);
}

static void test_sub_records_id8(void **state)
{
	(void)state;
	check_sub_records(8);
}

/* sub_err: the single sub-record in [body, end) of the saved dump must fail. */
static void sub_err(struct hw *w, size_t body, size_t end, int64_t want_offset,
		    const char *want_text)
{
	struct hprof *h = open_ok(hw_save(w));
	size_t pos = body;
	struct hprof_sub s;
	struct hs_error err;
	memset(&err, 0, sizeof err);
	assert_int_equal(hprof_sub_next(h, &pos, end, &s, &err), HS_ERR);
	assert_int_equal(err.offset, want_offset);
	if (want_text && !strstr(err.msg, want_text))
		fail_msg("error \"%s\" does not say \"%s\"", err.msg, want_text);
	hprof_close(h);
}

static void test_sub_unknown_tag(void **state)
{
	(void)state;
	struct hw w;
	hw_init(&w, 8, 2, 0);
	hw_dump_begin(&w, HPROF_HEAP_DUMP_SEGMENT);
	size_t body = w.len;
	hw_root(&w, HPROF_GC_ROOT_UNKNOWN, 0x10);
	size_t bad = w.len;
	hw_u1(&w, 0x42);
	hw_u8(&w, 0x20);
	size_t end = w.len;
	hw_dump_end(&w);
	struct hprof *h = open_ok(hw_save(&w));
	size_t pos = body;
	struct hprof_sub s;
	struct hs_error err;
	memset(&err, 0, sizeof err);
	assert_int_equal(hprof_sub_next(h, &pos, end, &s, &err), 1);
	assert_int_equal(hprof_sub_next(h, &pos, end, &s, &err), HS_ERR);
	assert_int_equal(err.offset, bad);
	assert_non_null(strstr(err.msg, "0x42"));
	hprof_close(h);
	hw_free(&w);
}

/* Sub-records whose own lengths run past the end of the HEAP DUMP record. */
static void test_sub_runs_past_record(void **state)
{
	(void)state;
	for (int ids = 4; ids <= 8; ids += 4) {
		struct hw w;
		size_t body, off;

		/* An INSTANCE DUMP whose field bytes are longer than the record. */
		hw_init(&w, ids, 2, 0);
		hw_dump_begin(&w, HPROF_HEAP_DUMP);
		body = w.len;
		off = hw_instance_begin(&w, 0x10, 0x20);
		hw_u4(&w, 1);
		hw_instance_end(&w);
		hw_put_u4(w.b + off + 1 + 2 * (size_t)ids + 4, 5);
		hw_dump_end(&w);
		sub_err(&w, body, w.len, (int64_t)off, "runs past");
		hw_free(&w);

		/* An OBJECT ARRAY DUMP with more elements than bytes. */
		hw_init(&w, ids, 2, 0);
		hw_dump_begin(&w, HPROF_HEAP_DUMP);
		body = w.len;
		off = hw_obj_array(&w, 0x10, 0x20, 2, (uint64_t[]){0x30, 0x40});
		hw_put_u4(w.b + off + 1 + (size_t)ids + 4, 3);
		hw_dump_end(&w);
		sub_err(&w, body, w.len, (int64_t)off, "runs past");
		hw_free(&w);

		/* A PRIMITIVE ARRAY DUMP of ints one byte short. */
		hw_init(&w, ids, 2, 0);
		hw_dump_begin(&w, HPROF_HEAP_DUMP);
		body = w.len;
		off = hw_prim_array(&w, 0x10, HPROF_INT, 2, "\0\0\0\1\0\0\0");
		w.len--;	/* hw_prim_array wrote 8 bytes of the 7 given + NUL */
		hw_dump_end(&w);
		sub_err(&w, body, w.len, (int64_t)off, "runs past");
		hw_free(&w);

		/* A PRIMITIVE ARRAY DUMP with an invalid element type (object). */
		hw_init(&w, ids, 2, 0);
		hw_dump_begin(&w, HPROF_HEAP_DUMP);
		body = w.len;
		off = hw_prim_array(&w, 0x10, HPROF_INT, 1, "\0\0\0\1");
		w.b[off + 1 + (size_t)ids + 8] = HPROF_OBJECT;
		hw_dump_end(&w);
		sub_err(&w, body, w.len, (int64_t)(off + 1 + (size_t)ids + 8), "element type");
		hw_free(&w);

		/* A root cut in its id, and a JAVA FRAME root cut in its frame number. */
		hw_init(&w, ids, 2, 0);
		hw_dump_begin(&w, HPROF_HEAP_DUMP);
		body = w.len;
		off = hw_root(&w, HPROF_GC_ROOT_STICKY_CLASS, 0x10);
		hw_dump_end(&w);
		sub_err(&w, body, w.len - 1, (int64_t)off, NULL);
		hw_free(&w);
		hw_init(&w, ids, 2, 0);
		hw_dump_begin(&w, HPROF_HEAP_DUMP);
		body = w.len;
		off = hw_root_frame(&w, HPROF_GC_ROOT_JAVA_FRAME, 0x10, 1, 2);
		hw_dump_end(&w);
		sub_err(&w, body, w.len - 2, (int64_t)off, NULL);
		hw_free(&w);
	}
}

/* ---- CLASS DUMP ---- */

static void check_class_dump(int ids)
{
	struct sub_dump d;
	build_sub_dump(&d, ids);
	struct hprof *h = open_ok(d.w.path);
	struct hprof_class_dump cd;
	struct hs_error err;
	size_t off = d.class_off, id = (size_t)ids;
	assert_int_equal(hprof_class_dump_read(h, off, d.end, &cd, &err), HS_OK);
	assert_true(cd.id == big_id(ids, 0x100));
	assert_true(cd.super_id == big_id(ids, 0x110));
	assert_true(cd.loader_id == big_id(ids, 0x120));
	assert_true(cd.signers_id == big_id(ids, 0x130));
	assert_true(cd.domain_id == big_id(ids, 0x140));
	assert_int_equal(cd.instance_size, 5 + id);
	assert_int_equal(cd.ncp, 3);
	assert_int_equal(cd.nstatics, 9);
	assert_int_equal(cd.nfields, 3);
	/* Fixed part: tag, id, u4 serial, 6 ids, u4 size, u2 ncp. */
	assert_int_equal(cd.cp, off + 1 + 7 * id + 4 + 4 + 2);
	const uint8_t *p = h->data + cd.cp;
	assert_int_equal(hprof_u2(p), 3);
	assert_int_equal(p[2], HPROF_OBJECT);
	assert_true(hprof_id(h, p + 3) == big_id(ids, 0x500));
	p += 3 + id;
	assert_int_equal(hprof_u2(p), 7);
	assert_int_equal(hprof_u4(p + 3), 0x01020304);
	p += 3 + 4;
	assert_int_equal(hprof_u2(p), 9);
	assert_true(hprof_u8(p + 3) == 0x1122334455667788ULL);
	p += 3 + 8;
	assert_int_equal(hprof_u2(p), 9);	/* nstatics */
	assert_int_equal(cd.statics, (size_t)(p + 2 - h->data));
	/* Statics: walk them by their declared types. */
	p = h->data + cd.statics;
	static const uint8_t st_types[] = {HPROF_OBJECT, HPROF_INT, HPROF_LONG, HPROF_DOUBLE,
					   HPROF_FLOAT, HPROF_CHAR, HPROF_SHORT, HPROF_BYTE,
					   HPROF_BOOLEAN};
	for (unsigned k = 0; k < 9; k++) {
		assert_true(hprof_id(h, p) == 0x21 + k);
		assert_int_equal(p[id], st_types[k]);
		if (k == 0)
			assert_true(hprof_id(h, p + id + 1) == big_id(ids, 0x510));
		if (k == 2)
			assert_true(hprof_u8(p + id + 1) == 0x8000000000000001ULL);
		if (k == 5)
			assert_int_equal(hprof_u2(p + id + 1), 0x20AC);
		p += id + 1 + (size_t)hprof_type_size(h, st_types[k]);
	}
	assert_int_equal(hprof_u2(p), 3);	/* nfields */
	assert_int_equal(cd.fields, (size_t)(p + 2 - h->data));
	p += 2;
	for (unsigned k = 0; k < 3; k++, p += id + 1) {
		assert_true(hprof_id(h, p) == sample_fields[k].name);
		assert_int_equal(p[id], sample_fields[k].type);
	}
	assert_int_equal(cd.end, (size_t)(p - h->data));
	assert_int_equal(cd.end, d.inst_off);
	hprof_close(h);
	hw_free(&d.w);
}

static void test_class_dump_id4(void **state)
{
	(void)state;
	check_class_dump(4);
}

static void test_class_dump_id8(void **state)
{
	(void)state;
	check_class_dump(8);
}

/*
 * in_value: does a record bounded at file offset x end where a constant
 * pool or static field value of the sample class should be (cut positions
 * there hit the regression below)?
 */
static bool in_value(const struct hprof *h, const struct hprof_class_dump *cd, size_t x)
{
	size_t ids = (size_t)h->id_size, p = cd->cp;
	for (unsigned k = 0; k < cd->ncp; k++) {
		size_t v = p + 3, sz = (size_t)hprof_type_size(h, h->data[p + 2]);
		if (x >= v && x < v + sz)
			return true;
		p = v + sz;
	}
	p = cd->statics;
	for (unsigned k = 0; k < cd->nstatics; k++) {
		size_t v = p + ids + 1, sz = (size_t)hprof_type_size(h, h->data[p + ids]);
		if (x >= v && x < v + sz)
			return true;
		p = v + sz;
	}
	return false;
}

/*
 * cut_class_dump: hprof_class_dump_read bounded at every length short of the
 * whole record must fail with the record's offset (values positions only
 * when in_values, else all others).
 */
static void cut_class_dump(int ids, bool in_values)
{
	struct sub_dump d;
	build_sub_dump(&d, ids);
	struct hprof *h = open_ok(d.w.path);
	struct hprof_class_dump full, cd;
	struct hs_error err;
	size_t off = d.class_off;
	assert_int_equal(hprof_class_dump_read(h, off, d.end, &full, &err), HS_OK);
	size_t tried = 0;
	for (size_t end = off + 1; end < full.end; end++) {
		if (in_value(h, &full, end) != in_values)
			continue;
		tried++;
		memset(&err, 0, sizeof err);
		memset(&cd, 0, sizeof cd);
		int st = hprof_class_dump_read(h, off, end, &cd, &err);
		if (st != HS_ERR)
			fail_msg("id size %d: CLASS DUMP cut %zu bytes in (of %zu) was accepted "
				 "(end %zu past the cut at %zu)", ids, end - off, full.end - off,
				 cd.end, end);
		assert_int_equal(err.offset, off);
		/* And as a sub-record. */
		size_t pos = off;
		struct hprof_sub s;
		assert_int_equal(hprof_sub_next(h, &pos, end, &s, &err), HS_ERR);
		assert_int_equal(pos, off);
	}
	assert_true(tried > 10);
	hprof_close(h);
	hw_free(&d.w);
}

static void test_class_dump_cut(void **state)
{
	(void)state;
	cut_class_dump(4, false);
	cut_class_dump(8, false);
}

/*
 * Regression (fixed): a CLASS DUMP cut inside a constant pool or static value is
 * accepted. hprof_class_dump_read checks the 3-byte cp entry head and the
 * static's name+type, then skips the value unchecked; the next NEED(p, end, n)
 * computes end - p with p > end, which wraps, so the check passes and the
 * record is read past end (cd.end > end).
 */
static void test_class_dump_cut_in_value(void **state)
{
	(void)state;
	cut_class_dump(4, true);
	cut_class_dump(8, true);
}

static void test_class_dump_bad_type(void **state)
{
	(void)state;
	struct sub_dump d;
	build_sub_dump(&d, 8);
	struct hprof_class_dump full;
	struct hs_error err;
	struct hprof *h = open_ok(d.w.path);
	assert_int_equal(hprof_class_dump_read(h, d.class_off, d.end, &full, &err), HS_OK);
	hprof_close(h);
	/* Break the type of the second instance field. */
	size_t at = full.fields + 9 + 8;
	d.w.b[at] = 3;
	h = open_ok(hw_save(&d.w));
	memset(&err, 0, sizeof err);
	assert_int_equal(hprof_class_dump_read(h, d.class_off, d.end, &full, &err), HS_ERR);
	assert_int_equal(err.offset, at);
	assert_non_null(strstr(err.msg, "invalid basic type"));
	hprof_close(h);
	hw_free(&d.w);
}

static void test_object_read(void **state)
{
	(void)state;
	for (int ids = 4; ids <= 8; ids += 4) {
		struct sub_dump d;
		build_sub_dump(&d, ids);
		struct hprof *h = open_ok(d.w.path);
		struct hprof_object_rec o;
		size_t id = (size_t)ids;

		hprof_object_read(h, d.inst_off, &o);
		assert_int_equal(o.tag, HPROF_GC_INSTANCE_DUMP);
		assert_true(o.id == big_id(ids, 0x200));
		assert_true(o.class_id == big_id(ids, 0x100));
		assert_int_equal(o.length, 4 + id + 1);
		assert_int_equal(o.values, d.inst_off + 1 + 2 * id + 8);
		assert_int_equal(hprof_u4(h->data + o.values), 5);
		assert_true(hprof_id(h, h->data + o.values + 4) == big_id(ids, 0x201));

		hprof_object_read(h, d.objarr_off, &o);
		assert_int_equal(o.tag, HPROF_GC_OBJ_ARRAY_DUMP);
		assert_true(o.id == big_id(ids, 0x300));
		assert_true(o.class_id == big_id(ids, 0x301));
		assert_int_equal(o.length, 3);
		assert_int_equal(o.elem_type, HPROF_OBJECT);
		assert_true(hprof_id(h, h->data + o.values) == big_id(ids, 0x200));
		assert_true(hprof_id(h, h->data + o.values + 2 * id) == big_id(ids, 0x1A));

		hprof_object_read(h, d.primarr_off, &o);
		assert_int_equal(o.tag, HPROF_GC_PRIM_ARRAY_DUMP);
		assert_true(o.id == big_id(ids, 0x400));
		assert_true(o.class_id == 0);
		assert_int_equal(o.length, 4);
		assert_int_equal(o.elem_type, HPROF_SHORT);
		assert_int_equal(hprof_u2(h->data + o.values + 2), 0xFFFF);
		assert_int_equal(hprof_u2(h->data + o.values + 6), 0x7FFF);

		hprof_object_read(h, d.class_off, &o);
		assert_int_equal(o.tag, HPROF_GC_CLASS_DUMP);
		assert_true(o.id == big_id(ids, 0x100));
		hprof_close(h);
		hw_free(&d.w);
	}
}

/* ---- gzip ---- */

/* walk: count records and sub-records of a whole file; HS_ERR on a bad one. */
static int walk(const struct hprof *h, size_t *nrec, size_t *nsub)
{
	size_t pos = h->body;
	struct hprof_rec r;
	struct hs_error err;
	int got;
	*nrec = *nsub = 0;
	while ((got = hprof_record_next(h, &pos, &r, &err)) == 1) {
		(*nrec)++;
		if (r.tag != HPROF_HEAP_DUMP && r.tag != HPROF_HEAP_DUMP_SEGMENT)
			continue;
		size_t p = r.body;
		struct hprof_sub s;
		int k;
		while ((k = hprof_sub_next(h, &p, r.body + r.len, &s, &err)) == 1)
			(*nsub)++;
		if (k != 0)
			return HS_ERR;
	}
	return got;
}

/* big_dump: a dump large enough that gzip members and cuts fall mid-record. */
static void big_dump(struct hw *w)
{
	hw_init(w, 8, 2, 1700000000000ULL);
	for (int k = 1; k <= 200; k++) {
		char name[64];
		snprintf(name, sizeof name, "com/example/Class%03d", k);
		hw_utf8(w, (uint64_t)k, name);
	}
	hw_dump_begin(w, HPROF_HEAP_DUMP_SEGMENT);
	for (uint64_t k = 0; k < 3000; k++) {
		hw_instance(w, 0x7000000000ULL + 16 * k, 0x100, 2,
			    (struct hw_value[]){HW_LONG(k * 2654435761ULL), HW_OBJ(k)});
		hw_prim_array_vals(w, 0x8000000000ULL + 16 * k, HPROF_INT, 2,
				   (uint64_t[]){k, k * 7});
	}
	hw_dump_end(w);
	hw_dump_end_record(w);
}

static void test_gzip_two_members(void **state)
{
	(void)state;
	struct hw w;
	big_dump(&w);
	struct hprof *plain = open_ok(hw_save(&w));
	size_t nrec, nsub, grec, gsub;
	assert_int_equal(walk(plain, &nrec, &nsub), 0);
	assert_int_equal(nrec, 202);
	assert_int_equal(nsub, 6000);
	hprof_close(plain);

	struct hprof *h = open_ok(hw_save_gz(&w, 100));
	/* Two gzip members: inflating the first stops halfway, at the second's magic. */
	FILE *f = fopen(w.path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size_t got = (size_t)ftell(f);
	rewind(f);
	uint8_t *gz = malloc(got), *out = malloc(w.len);
	assert_int_equal(fread(gz, 1, got, f), got);
	fclose(f);
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	assert_int_equal(inflateInit2(&zs, 16 + MAX_WBITS), Z_OK);
	zs.next_in = gz;
	zs.avail_in = (uInt)got;
	zs.next_out = out;
	zs.avail_out = (uInt)w.len;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	assert_int_equal(zs.total_out, w.len / 2);
	assert_true(zs.avail_in > 18);
	assert_int_equal(zs.next_in[0], 0x1f);
	assert_int_equal(zs.next_in[1], 0x8b);
	inflateEnd(&zs);
	free(gz);
	free(out);

	assert_true(h->gzip);
	assert_false(h->truncated);
	assert_int_equal(h->file_size, got);
	assert_true(h->file_size < w.len);
	assert_int_equal(h->size, w.len);
	assert_memory_equal(h->data, w.b, w.len);
	assert_int_equal(h->id_size, 8);
	assert_true(h->timestamp_ms == 1700000000000ULL);
	assert_int_equal(walk(h, &grec, &gsub), 0);
	assert_int_equal(grec, nrec);
	assert_int_equal(gsub, nsub);
	hprof_close(h);
	hw_free(&w);
}

static void test_gzip_truncated(void **state)
{
	(void)state;
	struct hw w;
	big_dump(&w);
	struct hprof *h = open_ok(hw_save_gz(&w, 50));
	assert_true(h->gzip);
	assert_true(h->truncated);
	assert_true(h->size > HW_HEADER_SIZE);
	assert_true(h->size < w.len);
	/* What was inflated is the dump's beginning. */
	assert_memory_equal(h->data, w.b, h->size);
	size_t nrec, nsub;
	assert_int_equal(walk(h, &nrec, &nsub), HS_ERR);
	hprof_close(h);
	hw_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_versions_and_id_sizes),
		cmocka_unit_test(test_header_rejects_non_hprof),
		cmocka_unit_test(test_header_rejects_id_size_5),
		cmocka_unit_test(test_big_endian_readers),
		cmocka_unit_test(test_basic_types),
		cmocka_unit_test(test_record_next),
		cmocka_unit_test(test_sub_records_id4),
		cmocka_unit_test(test_sub_records_id8),
		cmocka_unit_test(test_sub_unknown_tag),
		cmocka_unit_test(test_sub_runs_past_record),
		cmocka_unit_test(test_class_dump_id4),
		cmocka_unit_test(test_class_dump_id8),
		cmocka_unit_test(test_class_dump_cut),
		cmocka_unit_test(test_class_dump_cut_in_value),
		cmocka_unit_test(test_class_dump_bad_type),
		cmocka_unit_test(test_object_read),
		cmocka_unit_test(test_gzip_two_members),
		cmocka_unit_test(test_gzip_truncated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
