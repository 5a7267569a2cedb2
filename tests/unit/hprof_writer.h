/*
 * hprof_writer.h - a tiny in-memory HPROF writer for the unit tests.
 *
 * Builds a dump byte by byte, big-endian, in the layout HotSpot's
 * heapDumper.cpp writes (and Android's hprof for its extra sub-records):
 * a header, top-level records of u1 tag, u4 time, u4 length, body, and the
 * HEAP DUMP (SEGMENT) sub-records inside. The tests write exactly the
 * objects they then expect the reader and the heap model to find.
 *
 * Header-only (static inline) because the Makefile links each
 * tests/unit/test_*.c alone against the library objects.
 *
 * Ownership: struct hw owns its buffer and, after hw_save*, a temporary
 * file; hw_free releases both (and deletes the file). Allocation failure
 * aborts the test program.
 */
#ifndef HS_TEST_HPROF_WRITER_H
#define HS_TEST_HPROF_WRITER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../../src/hprof/hprof.h"

struct hw {
	uint8_t *b;
	size_t len, cap;
	int ids;		/* identifier size, 4 or 8 */
	size_t rec_len_at;	/* offset of the open record's u4 length, or 0 */
	size_t inst_len_at;	/* offset of the open INSTANCE DUMP's u4 length, or 0 */
	char path[64];		/* temporary file, "" until saved */
};

/* A value of an HPROF basic type: the raw bits, written big-endian. */
struct hw_value {
	uint8_t type;
	uint64_t bits;		/* ids, integers; floats and doubles as their bits */
};

/* Constant pool entry, static field, instance field descriptor. */
struct hw_cp {
	uint16_t index;
	struct hw_value v;
};
struct hw_static {
	uint64_t name;		/* UTF8 string id */
	struct hw_value v;
};
struct hw_field {
	uint64_t name;		/* UTF8 string id */
	uint8_t type;
};

/* A CLASS DUMP; ids of 0 mean none. */
struct hw_class {
	uint64_t id, super, loader, signers, domain;
	uint32_t instance_size;		/* HPROF's field bytes */
	uint16_t ncp, nstatics, nfields;
	const struct hw_cp *cp;
	const struct hw_static *statics;
	const struct hw_field *fields;
};

static inline void hw_grow(struct hw *w, size_t n)
{
	if (w->cap - w->len >= n)
		return;
	while (w->cap - w->len < n)
		w->cap = w->cap ? w->cap * 2 : 4096;
	w->b = realloc(w->b, w->cap);
	if (!w->b)
		abort();
}

static inline void hw_bytes(struct hw *w, const void *p, size_t n)
{
	hw_grow(w, n);
	if (n)
		memcpy(w->b + w->len, p, n);
	w->len += n;
}

static inline void hw_u1(struct hw *w, uint8_t v)
{
	hw_bytes(w, &v, 1);
}

static inline void hw_u2(struct hw *w, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
	hw_bytes(w, b, 2);
}

static inline void hw_put_u4(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void hw_u4(struct hw *w, uint32_t v)
{
	uint8_t b[4];
	hw_put_u4(b, v);
	hw_bytes(w, b, 4);
}

static inline void hw_u8(struct hw *w, uint64_t v)
{
	hw_u4(w, (uint32_t)(v >> 32));
	hw_u4(w, (uint32_t)v);
}

/* hw_id: an identifier of the dump's id size (4-byte ids keep the low half). */
static inline void hw_id(struct hw *w, uint64_t id)
{
	if (w->ids == 8)
		hw_u8(w, id);
	else
		hw_u4(w, (uint32_t)id);
}

/* hw_type_size: bytes of basic type t in this dump (ids for HPROF_OBJECT). */
static inline size_t hw_type_size(const struct hw *w, uint8_t t)
{
	switch (t) {
	case HPROF_OBJECT: return (size_t)w->ids;
	case HPROF_BOOLEAN: case HPROF_BYTE: return 1;
	case HPROF_CHAR: case HPROF_SHORT: return 2;
	case HPROF_FLOAT: case HPROF_INT: return 4;
	case HPROF_DOUBLE: case HPROF_LONG: return 8;
	default: abort();
	}
}

/* hw_value: a value of basic type v.type, v.bits truncated to its size. */
static inline void hw_value(struct hw *w, struct hw_value v)
{
	switch (hw_type_size(w, v.type)) {
	case 1: hw_u1(w, (uint8_t)v.bits); break;
	case 2: hw_u2(w, (uint16_t)v.bits); break;
	case 4: hw_u4(w, (uint32_t)v.bits); break;
	default: hw_u8(w, v.bits); break;
	}
}

/*
 * hw_init: start a dump: "JAVA PROFILE 1.0.<minor>" (1, 3 = Android, else 2), NUL, u4 id size,
 * u8 timestamp in ms. ids is written as given (so 5 makes a bad header)
 * but values are then written 8 bytes wide unless ids is 4.
 */
static inline void hw_init(struct hw *w, int ids, int minor, uint64_t timestamp_ms)
{
	memset(w, 0, sizeof *w);
	w->ids = ids == 4 ? 4 : 8;
	const char *magic = minor == 1 ? "JAVA PROFILE 1.0.1"
			    : minor == 3 ? "JAVA PROFILE 1.0.3" : "JAVA PROFILE 1.0.2";
	hw_bytes(w, magic, strlen(magic) + 1);
	hw_u4(w, (uint32_t)ids);
	hw_u8(w, timestamp_ms);
}

/* HW_HEADER_SIZE: bytes of the header hw_init writes. */
#define HW_HEADER_SIZE 31u

/*
 * hw_init_body: a headerless buffer for sub-records, so a test can write
 * objects in any order and copy the buffer into a record with hw_record_from.
 */
static inline void hw_init_body(struct hw *w, int ids)
{
	memset(w, 0, sizeof *w);
	w->ids = ids == 4 ? 4 : 8;
}

/* hw_rec_begin / hw_rec_end: a top-level record; the end patches its u4 length. */
static inline size_t hw_rec_begin(struct hw *w, uint8_t tag)
{
	size_t off = w->len;
	hw_u1(w, tag);
	hw_u4(w, 0);		/* microseconds since the header's time */
	w->rec_len_at = w->len;
	hw_u4(w, 0);
	return off;
}

static inline void hw_rec_end(struct hw *w)
{
	hw_put_u4(w->b + w->rec_len_at, (uint32_t)(w->len - w->rec_len_at - 4));
	w->rec_len_at = 0;
}

/* hw_utf8: a UTF8 ("STRING") record; returns its offset. */
static inline size_t hw_utf8(struct hw *w, uint64_t sid, const char *text)
{
	size_t off = hw_rec_begin(w, HPROF_UTF8);
	hw_id(w, sid);
	hw_bytes(w, text, strlen(text));
	hw_rec_end(w);
	return off;
}

static inline size_t hw_load_class(struct hw *w, uint32_t serial, uint64_t class_id,
				   uint32_t trace_serial, uint64_t name_sid)
{
	size_t off = hw_rec_begin(w, HPROF_LOAD_CLASS);
	hw_u4(w, serial);
	hw_id(w, class_id);
	hw_u4(w, trace_serial);
	hw_id(w, name_sid);
	hw_rec_end(w);
	return off;
}

/* hw_frame: a STACK FRAME record; line >0, or 0 / -1 / -2 / -3 as HPROF says. */
static inline size_t hw_frame(struct hw *w, uint64_t frame_id, uint64_t method_sid,
			      uint64_t sig_sid, uint64_t source_sid, uint32_t class_serial,
			      int32_t line)
{
	size_t off = hw_rec_begin(w, HPROF_FRAME);
	hw_id(w, frame_id);
	hw_id(w, method_sid);
	hw_id(w, sig_sid);
	hw_id(w, source_sid);
	hw_u4(w, class_serial);
	hw_u4(w, (uint32_t)line);
	hw_rec_end(w);
	return off;
}

/* hw_trace: a STACK TRACE record of nframes frame ids, innermost first. */
static inline size_t hw_trace(struct hw *w, uint32_t serial, uint32_t thread_serial,
			      uint32_t nframes, const uint64_t *frame_ids)
{
	size_t off = hw_rec_begin(w, HPROF_TRACE);
	hw_u4(w, serial);
	hw_u4(w, thread_serial);
	hw_u4(w, nframes);
	for (uint32_t k = 0; k < nframes; k++)
		hw_id(w, frame_ids[k]);
	hw_rec_end(w);
	return off;
}

/* hw_record_from: a record of tag whose body is all of body's bytes. */
static inline size_t hw_record_from(struct hw *w, uint8_t tag, const struct hw *body)
{
	size_t off = hw_rec_begin(w, tag);
	hw_bytes(w, body->b, body->len);
	hw_rec_end(w);
	return off;
}

/* hw_dump_begin: open a HEAP DUMP (0x0C) or HEAP DUMP SEGMENT (0x1C) record. */
static inline size_t hw_dump_begin(struct hw *w, uint8_t tag)
{
	return hw_rec_begin(w, tag);
}

static inline void hw_dump_end(struct hw *w)
{
	hw_rec_end(w);
}

/* hw_dump_end_record: the empty HEAP DUMP END record that closes segments. */
static inline void hw_dump_end_record(struct hw *w)
{
	hw_rec_begin(w, HPROF_HEAP_DUMP_END);
	hw_rec_end(w);
}

/*
 * Roots. Each returns the sub-record's offset.
 * hw_root: the kinds that are an id alone: 0xFF unknown, 0x05 sticky
 * class, 0x07 monitor used, and Android's 0x89..0x8D and 0x90.
 */
static inline size_t hw_root(struct hw *w, uint8_t tag, uint64_t id)
{
	size_t off = w->len;
	hw_u1(w, tag);
	hw_id(w, id);
	return off;
}

static inline size_t hw_root_jni_global(struct hw *w, uint64_t id, uint64_t global_ref)
{
	size_t off = w->len;
	hw_u1(w, HPROF_GC_ROOT_JNI_GLOBAL);
	hw_id(w, id);
	hw_id(w, global_ref);
	return off;
}

/* hw_root_frame: 0x02 JNI local, 0x03 Java frame, Android's 0x8E JNI monitor. */
static inline size_t hw_root_frame(struct hw *w, uint8_t tag, uint64_t id,
				   uint32_t thread_serial, uint32_t frame)
{
	size_t off = w->len;
	hw_u1(w, tag);
	hw_id(w, id);
	hw_u4(w, thread_serial);
	hw_u4(w, frame);
	return off;
}

/* hw_root_thread: 0x04 native stack, 0x06 thread block. */
static inline size_t hw_root_thread(struct hw *w, uint8_t tag, uint64_t id,
				    uint32_t thread_serial)
{
	size_t off = w->len;
	hw_u1(w, tag);
	hw_id(w, id);
	hw_u4(w, thread_serial);
	return off;
}

static inline size_t hw_root_thread_obj(struct hw *w, uint64_t id, uint32_t thread_serial,
					uint32_t trace_serial)
{
	size_t off = w->len;
	hw_u1(w, HPROF_GC_ROOT_THREAD_OBJ);
	hw_id(w, id);
	hw_u4(w, thread_serial);
	hw_u4(w, trace_serial);
	return off;
}

/* hw_class_dump: a CLASS DUMP sub-record; returns its offset. */
static inline size_t hw_class_dump(struct hw *w, const struct hw_class *c)
{
	size_t off = w->len;
	hw_u1(w, HPROF_GC_CLASS_DUMP);
	hw_id(w, c->id);
	hw_u4(w, 0);		/* stack trace serial */
	hw_id(w, c->super);
	hw_id(w, c->loader);
	hw_id(w, c->signers);
	hw_id(w, c->domain);
	hw_id(w, 0);		/* reserved */
	hw_id(w, 0);
	hw_u4(w, c->instance_size);
	hw_u2(w, c->ncp);
	for (unsigned k = 0; k < c->ncp; k++) {
		hw_u2(w, c->cp[k].index);
		hw_u1(w, c->cp[k].v.type);
		hw_value(w, c->cp[k].v);
	}
	hw_u2(w, c->nstatics);
	for (unsigned k = 0; k < c->nstatics; k++) {
		hw_id(w, c->statics[k].name);
		hw_u1(w, c->statics[k].v.type);
		hw_value(w, c->statics[k].v);
	}
	hw_u2(w, c->nfields);
	for (unsigned k = 0; k < c->nfields; k++) {
		hw_id(w, c->fields[k].name);
		hw_u1(w, c->fields[k].type);
	}
	return off;
}

/*
 * hw_instance_begin / hw_instance_end: an INSTANCE DUMP; between them the
 * caller writes the field values (the class's own fields first, then its
 * superclass's, as HotSpot does) with hw_id / hw_u4 / hw_value...
 */
static inline size_t hw_instance_begin(struct hw *w, uint64_t id, uint64_t class_id)
{
	size_t off = w->len;
	hw_u1(w, HPROF_GC_INSTANCE_DUMP);
	hw_id(w, id);
	hw_u4(w, 0);		/* stack trace serial */
	hw_id(w, class_id);
	w->inst_len_at = w->len;
	hw_u4(w, 0);
	return off;
}

static inline void hw_instance_end(struct hw *w)
{
	hw_put_u4(w->b + w->inst_len_at, (uint32_t)(w->len - w->inst_len_at - 4));
	w->inst_len_at = 0;
}

/* hw_instance: an INSTANCE DUMP whose values are n typed values, in order. */
static inline size_t hw_instance(struct hw *w, uint64_t id, uint64_t class_id,
				 size_t n, const struct hw_value *vals)
{
	size_t off = hw_instance_begin(w, id, class_id);
	for (size_t k = 0; k < n; k++)
		hw_value(w, vals[k]);
	hw_instance_end(w);
	return off;
}

static inline size_t hw_obj_array(struct hw *w, uint64_t id, uint64_t array_class_id,
				  uint32_t n, const uint64_t *elems)
{
	size_t off = w->len;
	hw_u1(w, HPROF_GC_OBJ_ARRAY_DUMP);
	hw_id(w, id);
	hw_u4(w, 0);
	hw_u4(w, n);
	hw_id(w, array_class_id);
	for (uint32_t k = 0; k < n; k++)
		hw_id(w, elems[k]);
	return off;
}

/*
 * hw_prim_array: a PRIMITIVE ARRAY DUMP of n elements of type t whose
 * values are raw, already big-endian (n * size bytes); raw NULL writes
 * only the fixed part so the caller can append the elements.
 */
static inline size_t hw_prim_array(struct hw *w, uint64_t id, uint8_t t, uint32_t n,
				   const void *raw)
{
	size_t off = w->len;
	hw_u1(w, HPROF_GC_PRIM_ARRAY_DUMP);
	hw_id(w, id);
	hw_u4(w, 0);
	hw_u4(w, n);
	hw_u1(w, t);
	if (raw)
		hw_bytes(w, raw, (size_t)n * hw_type_size(w, t));
	return off;
}

/* hw_prim_array_vals: a PRIMITIVE ARRAY DUMP from n values, each of type t. */
static inline size_t hw_prim_array_vals(struct hw *w, uint64_t id, uint8_t t, uint32_t n,
					const uint64_t *vals)
{
	size_t off = hw_prim_array(w, id, t, n, NULL);
	for (uint32_t k = 0; k < n; k++)
		hw_value(w, (struct hw_value){t, vals[k]});
	return off;
}

/* Android: 0xC3 PRIMITIVE ARRAY NODATA (no elements follow). */
static inline size_t hw_prim_array_nodata(struct hw *w, uint64_t id, uint8_t t, uint32_t n)
{
	size_t off = w->len;
	hw_u1(w, HPROF_GC_PRIM_ARRAY_NODATA);
	hw_id(w, id);
	hw_u4(w, 0);
	hw_u4(w, n);
	hw_u1(w, t);
	return off;
}

/* Android: 0xFE HEAP DUMP INFO: u4 heap type, id heap name string. */
static inline size_t hw_heap_dump_info(struct hw *w, uint32_t heap_type, uint64_t name_sid)
{
	size_t off = w->len;
	hw_u1(w, HPROF_GC_HEAP_DUMP_INFO);
	hw_u4(w, heap_type);
	hw_id(w, name_sid);
	return off;
}

/* hw_tmpfile: a new empty temporary file; its name goes to w->path. */
static inline int hw_tmpfile(struct hw *w)
{
	snprintf(w->path, sizeof w->path, "/tmp/heapsh-unit-XXXXXX");
	int fd = mkstemp(w->path);
	if (fd < 0)
		abort();
	return fd;
}

/* hw_save_prefix: write the first n bytes of the dump to a temporary file. */
static inline const char *hw_save_prefix(struct hw *w, size_t n)
{
	if (w->path[0])
		unlink(w->path);
	int fd = hw_tmpfile(w);
	for (size_t done = 0; done < n;) {
		ssize_t k = write(fd, w->b + done, n - done);
		if (k <= 0)
			abort();
		done += (size_t)k;
	}
	close(fd);
	return w->path;
}

/* hw_save: write the whole dump to a temporary file; returns its path. */
static inline const char *hw_save(struct hw *w)
{
	return hw_save_prefix(w, w->len);
}

/*
 * hw_save_gz: write the dump gzip-compressed as two concatenated gzip
 * members split at the middle, as HotSpot's -gz writes many; with
 * cut_at_pct < 100 the compressed file is then cut to that percentage.
 * Returns the path.
 */
static inline const char *hw_save_gz(struct hw *w, int cut_at_pct)
{
	if (w->path[0])
		unlink(w->path);
	close(hw_tmpfile(w));
	size_t half = w->len / 2;
	const char *modes[2] = {"wb9", "ab9"};
	size_t from[2] = {0, half}, to[2] = {half, w->len};
	for (int m = 0; m < 2; m++) {
		gzFile gz = gzopen(w->path, modes[m]);
		if (!gz || gzwrite(gz, w->b + from[m], (unsigned)(to[m] - from[m])) !=
				   (int)(to[m] - from[m]) || gzclose(gz) != Z_OK)
			abort();
	}
	if (cut_at_pct < 100) {
		FILE *f = fopen(w->path, "rb");
		if (!f || fseek(f, 0, SEEK_END))
			abort();
		long size = ftell(f);
		fclose(f);
		if (truncate(w->path, size * cut_at_pct / 100))
			abort();
	}
	return w->path;
}

static inline void hw_free(struct hw *w)
{
	if (w->path[0])
		unlink(w->path);
	free(w->b);
	memset(w, 0, sizeof *w);
}

/* Shorthands for hw_value. */
#define HW_OBJ(x) ((struct hw_value){HPROF_OBJECT, (uint64_t)(x)})
#define HW_INT(x) ((struct hw_value){HPROF_INT, (uint64_t)(uint32_t)(int32_t)(x)})
#define HW_LONG(x) ((struct hw_value){HPROF_LONG, (uint64_t)(x)})
#define HW_BOOL(x) ((struct hw_value){HPROF_BOOLEAN, (uint64_t)(x)})
#define HW_BYTE(x) ((struct hw_value){HPROF_BYTE, (uint64_t)(uint8_t)(x)})
#define HW_CHAR(x) ((struct hw_value){HPROF_CHAR, (uint64_t)(x)})
#define HW_SHORT(x) ((struct hw_value){HPROF_SHORT, (uint64_t)(uint16_t)(x)})

static inline struct hw_value hw_float(float f)
{
	uint32_t bits;
	memcpy(&bits, &f, sizeof bits);
	return (struct hw_value){HPROF_FLOAT, bits};
}

static inline struct hw_value hw_double(double d)
{
	uint64_t bits;
	memcpy(&bits, &d, sizeof bits);
	return (struct hw_value){HPROF_DOUBLE, bits};
}

#endif
