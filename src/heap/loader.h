/*
 * loader.h - what the loader's files share (heap_load.c: the passes over the
 * records; heap_sort.c: the objects in id order and the id directory;
 * heap_classes.c: classes, their layouts and sizes); not for other modules.
 * The loader's raw records and state (struct loader) live from heap_load's
 * start to its end.
 */
#ifndef HS_LOADER_H
#define HS_LOADER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "heap_internal.h"

struct objpos {
	uint64_t id;
	uint64_t pos;
};

struct rawroot {
	uint64_t id;
	uint8_t tag;
	uint32_t thread_serial;
	int32_t frame;
};

struct rawframe {
	uint64_t id, method, sig, source;
	uint32_t class_serial;
	int32_t line;
};

struct rawthread {
	uint64_t id;
	uint32_t serial, trace;
};

/* A HEAP DUMP INFO record (Android): objects after it are in that heap. */
struct heapmark {
	size_t off;
	uint32_t type;
	uint64_t name;		/* string id */
};

/* The lowest and highest of some ids, and all of them ORed and ANDed. */
struct idstats {
	uint64_t lo, hi, or_, and_;
};

struct loader {
	struct heap *h;
	struct heapmark *marks;
	size_t nmarks;
	uint32_t want_dump;	/* the heap dump to read, from 1 */
	struct hprof *hp;
	const struct heap_load_opts *opts;
	/* pass 1's object records: nobjs in all, the first nobjs - nobjs2 in
	 * objs, the second walk's nobjs2 in objs2 (heap_join_objs: all in objs) */
	struct objpos *objs, *objs2;
	size_t nobjs, capobjs, nobjs2, capobjs2;
	uint64_t ref_slots;	/* id-sized slots of instance fields and object arrays */
	struct idstats ids;	/* of the objects' ids (walk_dump) */
	size_t *classpos;	/* CLASS DUMP positions */
	size_t nclasspos;
	struct rawroot *roots;
	size_t nroots;
	struct rawframe *frames;
	size_t nframes, capframes;
	struct rawthread *threads;
	size_t nthreads;
	_Atomic uint64_t walked;	/* heap dump bytes walked (walk_segment) */
	struct u64map class_names;	/* class id -> name string id */
	struct u64map class_serials;	/* class serial -> class id */
	struct u64map traces;		/* trace serial -> record offset */
	struct u64map class_index;	/* class id -> class index */
	uint32_t prim[16];	/* primitive array classes by type (HEAP_NONE: none yet) */
	bool assigned;		/* every object's class is known before pass 2 */
	size_t next_progress;
	struct hs_error *err;	/* heap_load's */
};

#define PUSH(arr, len, cap) \
	do { \
		if ((len) == (cap)) { \
			(cap) = (cap) ? (cap) * 2 : 1024; \
			(arr) = xreallocarray((arr), (cap), sizeof *(arr)); \
		} \
	} while (0)

/*
 * heap_order_objects (heap_sort.c): L->objs (pass 1's records) as the
 * heap's objects in id order (h->n, h->ids, h->pos; duplicates dropped and
 * counted) and the id -> index directory: a sort of packed keys on two
 * threads, or of HotSpot's region runs, else an LSD radix sort.
 */
void heap_order_objects(struct loader *L);
/* heap_join_objs: L->objs2's records moved after L->objs's (big_realloc, a
 * copy; past the budget, disk the size of objs2's records more). */
void heap_join_objs(struct loader *L);

/*
 * Classes (heap_classes.c), in heap_load's order: heap_read_classes decodes
 * every CLASS DUMP (names from LOAD CLASS, fields, statics);
 * heap_layout_classes gives each its reference field offsets over the
 * hierarchy; heap_prepare_classes makes java.lang.Class and the primitive
 * array classes to be and h->cls; heap_size_classes decides the reference
 * size (docs/heap-model.md) and every class's instance size, assigning the
 * objects' classes first (L->assigned) when that needs fields read.
 * heap_class_name_for: a class id's Java name, "?" when unknown.
 */
void heap_read_classes(struct loader *L);
void heap_layout_classes(struct heap *h);
void heap_prepare_classes(struct loader *L);
void heap_size_classes(struct loader *L);
const char *heap_class_name_for(struct loader *L, uint64_t id);
/* heap_array_size / heap_class_object_size: shallow sizes, bytes. */
uint64_t heap_array_size(const struct heap *h, uint8_t elem, uint64_t len);
uint64_t heap_class_object_size(const struct heap *h, const struct heap_class *c);
/* heap_merge_kinds: per class, the kinds two workers saw (kind[c], c < nc). */
void heap_merge_kinds(struct heap *h, uint32_t nc, const uint8_t *k0, const uint8_t *k1);
/*
 * heap_assign_missing: the objects left without a class get nameless
 * classes, on one thread in object order; with counted, their count and
 * shallow bytes are added to those classes'. heap_layout_added: classes
 * made after heap_layout_classes get a (field-less) layout.
 */
void heap_assign_missing(struct loader *L, bool counted);
void heap_layout_added(struct heap *h);

/* heap_note_kind: kind[c] with k seen among class c's objects. */
static inline void heap_note_kind(uint8_t *kind, uint32_t c, uint8_t k)
{
	if (kind[c] == HEAP_KIND_NONE)
		kind[c] = k;
	else if (kind[c] != k)
		kind[c] = HEAP_KIND_MIXED;
}

/*
 * heap_record_class: the class of the object whose record is at p, from the
 * class maps only (HEAP_NONE for a class id without a CLASS DUMP, or a
 * primitive array type without its class yet), and in *kind its kind.
 * *last_cid and *last_c remember the last instance's class id: records of
 * one class come in runs.
 */
static inline uint32_t heap_record_class(const struct loader *L, size_t p, uint64_t *last_cid,
				    uint32_t *last_c, uint8_t *kind)
{
	const struct hprof *hp = L->hp;
	const uint8_t *d = hp->data;
	size_t ids = (size_t)hp->id_size;
	uint64_t ci;
	switch (d[p]) {
	case HPROF_GC_INSTANCE_DUMP: {
		uint64_t cid = hprof_id(hp, d + p + 1 + ids + 4);
		if (cid != *last_cid || *last_c == HEAP_NONE) {
			*last_cid = cid;
			*last_c = u64map_get(&L->class_index, cid, &ci) ? (uint32_t)ci : HEAP_NONE;
		}
		*kind = HEAP_INSTANCE;
		return *last_c;
	}
	case HPROF_GC_OBJ_ARRAY_DUMP:
		*kind = HEAP_OBJ_ARRAY;
		return u64map_get(&L->class_index, hprof_id(hp, d + p + 1 + ids + 8), &ci)
			       ? (uint32_t)ci : HEAP_NONE;
	case HPROF_GC_PRIM_ARRAY_DUMP: case HPROF_GC_PRIM_ARRAY_NODATA:
		*kind = HEAP_PRIM_ARRAY;
		return L->prim[d[p + 1 + ids + 8] & 15];
	default:
		*kind = HEAP_CLASS;
		return L->h->class_class;
	}
}

#endif
