/*
 * hprof.h - the HPROF binary heap dump format, read-only.
 *
 * Format: "JAVA PROFILE 1.0.1"/"1.0.2" as written by HotSpot's heapDumper.cpp
 * (and documented in the JDK's demo/jvmti/hprof/manual.html): a header, then
 * records of u1 tag, u4 time, u4 length, body. All integers are big-endian;
 * identifiers are 4 or 8 bytes as the header says.
 *
 * The file is memory-mapped (or, for gzip'd dumps, inflated once into
 * memory); every reader checks the bytes left before it reads. Nothing here
 * allocates per record. Ownership: hprof_open returns a struct the caller
 * releases with hprof_close; all pointers into ->data live until then.
 */
#ifndef HS_HPROF_H
#define HS_HPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/mem.h"

/* Top-level record tags. */
enum {
	HPROF_UTF8 = 0x01,		/* "STRING" in the manual */
	HPROF_LOAD_CLASS = 0x02,
	HPROF_UNLOAD_CLASS = 0x03,
	HPROF_FRAME = 0x04,		/* STACK FRAME */
	HPROF_TRACE = 0x05,		/* STACK TRACE */
	HPROF_ALLOC_SITES = 0x06,
	HPROF_HEAP_SUMMARY = 0x07,
	HPROF_START_THREAD = 0x0A,
	HPROF_END_THREAD = 0x0B,
	HPROF_HEAP_DUMP = 0x0C,
	HPROF_CPU_SAMPLES = 0x0D,
	HPROF_CONTROL_SETTINGS = 0x0E,
	HPROF_HEAP_DUMP_SEGMENT = 0x1C,
	HPROF_HEAP_DUMP_END = 0x2C
};

/* HEAP DUMP sub-record tags, HotSpot's and Android's. */
enum {
	HPROF_GC_ROOT_UNKNOWN = 0xFF,
	HPROF_GC_ROOT_JNI_GLOBAL = 0x01,
	HPROF_GC_ROOT_JNI_LOCAL = 0x02,
	HPROF_GC_ROOT_JAVA_FRAME = 0x03,
	HPROF_GC_ROOT_NATIVE_STACK = 0x04,
	HPROF_GC_ROOT_STICKY_CLASS = 0x05,
	HPROF_GC_ROOT_THREAD_BLOCK = 0x06,
	HPROF_GC_ROOT_MONITOR_USED = 0x07,
	HPROF_GC_ROOT_THREAD_OBJ = 0x08,
	HPROF_GC_CLASS_DUMP = 0x20,
	HPROF_GC_INSTANCE_DUMP = 0x21,
	HPROF_GC_OBJ_ARRAY_DUMP = 0x22,
	HPROF_GC_PRIM_ARRAY_DUMP = 0x23,
	/* Android extensions (libcore's hprof), skipped or read as roots. */
	HPROF_GC_ROOT_INTERNED_STRING = 0x89,
	HPROF_GC_ROOT_FINALIZING = 0x8A,
	HPROF_GC_ROOT_DEBUGGER = 0x8B,
	HPROF_GC_ROOT_REFERENCE_CLEANUP = 0x8C,
	HPROF_GC_ROOT_VM_INTERNAL = 0x8D,
	HPROF_GC_ROOT_JNI_MONITOR = 0x8E,
	HPROF_GC_UNREACHABLE = 0x90,
	HPROF_GC_PRIM_ARRAY_NODATA = 0xC3,
	HPROF_GC_HEAP_DUMP_INFO = 0xFE
};

/* Basic types of fields and array elements. */
enum {
	HPROF_OBJECT = 2, HPROF_BOOLEAN = 4, HPROF_CHAR = 5, HPROF_FLOAT = 6,
	HPROF_DOUBLE = 7, HPROF_BYTE = 8, HPROF_SHORT = 9, HPROF_INT = 10,
	HPROF_LONG = 11
};

struct hprof {
	const uint8_t *data;	/* the whole (inflated) file */
	size_t size;		/* bytes in data */
	size_t file_size;	/* bytes on disk (compressed size for .gz) */
	size_t body;		/* offset of the first record */
	int id_size;		/* 4 or 8 */
	int minor;		/* 1, 2 or 3 for "JAVA PROFILE 1.0.1", 1.0.2, Android's 1.0.3 */
	uint64_t timestamp_ms;	/* header time, ms since the epoch */
	bool gzip;		/* data was inflated from a gzip file */
	bool truncated;		/* gzip stream ended early */
	char *path;
};

/*
 * hprof_open: map (or inflate) the dump at path and check its header.
 * On success *out is set and HS_OK returned. Errors: file missing or
 * unreadable, not an HPROF file, unsupported id size; err says which and
 * where. The caller frees *out with hprof_close.
 */
int hprof_open(const char *path, struct hprof **out, struct hs_error *err);
void hprof_close(struct hprof *h);

/* Big-endian readers; the caller has checked the bytes are there. */
static inline uint16_t hprof_u2(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}
static inline uint32_t hprof_u4(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t hprof_u8(const uint8_t *p)
{
	return (uint64_t)hprof_u4(p) << 32 | hprof_u4(p + 4);
}
static inline uint64_t hprof_id(const struct hprof *h, const uint8_t *p)
{
	return h->id_size == 8 ? hprof_u8(p) : hprof_u4(p);
}

/* hprof_type_size: bytes of a value of basic type t, 0 if t is invalid. */
int hprof_type_size(const struct hprof *h, int t);

/* hprof_type_name: Java name of basic type t ("int", "boolean"...). */
const char *hprof_type_name(int t);

/* A top-level record: body is data + body, len bytes. */
struct hprof_rec {
	uint8_t tag;
	size_t off;		/* offset of the tag byte */
	size_t body;		/* offset of the body */
	uint32_t len;
};

/*
 * hprof_record_next: read the record at *pos and advance *pos past it.
 * Returns 1 with *r filled, 0 at the end of the file, HS_ERR when the
 * record header or body runs past the end (err->offset is the record's).
 */
int hprof_record_next(const struct hprof *h, size_t *pos,
		      struct hprof_rec *r, struct hs_error *err);

/* A HEAP DUMP sub-record. */
struct hprof_sub {
	uint8_t tag;
	size_t off;		/* offset of the tag byte */
	size_t end;		/* offset just past the sub-record */
	uint64_t id;		/* object id (object records and roots) */
	uint32_t thread_serial;	/* roots with a thread, else 0 */
	int32_t frame;		/* frame depth for frame roots, else -1 */
	uint32_t trace_serial;	/* ROOT THREAD OBJECT's stack trace */
	uint64_t extra_id;	/* JNI GLOBAL's global ref id */
};

/*
 * hprof_sub_next: read the sub-record at *pos within a heap dump record
 * ending at end, advancing *pos. Returns 1 with *s filled, 0 when *pos ==
 * end, HS_ERR on an unknown tag or a sub-record that runs past end.
 */
int hprof_sub_next(const struct hprof *h, size_t *pos, size_t end,
		   struct hprof_sub *s, struct hs_error *err);

/* A CLASS DUMP sub-record, decoded in place. */
struct hprof_class_dump {
	uint64_t id, super_id, loader_id, signers_id, domain_id;
	uint32_t instance_size;	/* HPROF's field byte count (ids as id_size) */
	uint16_t ncp, nstatics, nfields;
	size_t cp;		/* offset of the first constant pool entry */
	size_t statics;		/* offset of the first static field */
	size_t fields;		/* offset of the first instance field */
	size_t end;		/* offset just past the record */
};

/*
 * hprof_class_dump_read: decode the CLASS DUMP whose tag byte is at off,
 * bounded by end. Returns HS_OK, or HS_ERR for a malformed record.
 */
int hprof_class_dump_read(const struct hprof *h, size_t off, size_t end,
			  struct hprof_class_dump *cd, struct hs_error *err);

/* The fixed part of INSTANCE DUMP / OBJ ARRAY / PRIM ARRAY sub-records. */
struct hprof_object_rec {
	uint8_t tag;
	uint64_t id;
	uint64_t class_id;	/* instance and object array; 0 for prim arrays */
	uint32_t length;	/* array elements, or instance field bytes */
	uint8_t elem_type;	/* prim arrays; HPROF_OBJECT for object arrays */
	size_t values;		/* offset of the field bytes or elements; 0 for NODATA */
};

/*
 * hprof_object_read: decode the fixed part of the object record at off.
 * The record was bounds-checked when it was first walked with
 * hprof_sub_next; this only decodes. Works for INSTANCE, OBJ ARRAY and
 * PRIM ARRAY dumps and Android's PRIM ARRAY NODATA (length and type, no
 * values); CLASS DUMP gives tag and id only.
 */
void hprof_object_read(const struct hprof *h, size_t off,
		       struct hprof_object_rec *o);

#endif
