/*
 * heap.h - the heap model: every object of a dump under a dense index,
 * its class and shallow size, outgoing and incoming references in CSR form,
 * GC roots, threads and stack frames.
 *
 * Objects are numbered 0..n-1 in increasing id order (HotSpot ids are
 * addresses). Field values are not copied: they are read from the dump's
 * mapping when asked for, through the record position kept per object.
 *
 * Ownership: heap_load returns a heap the caller releases with heap_free;
 * every pointer and name the heap hands out lives until then.
 */
#ifndef HS_HEAP_H
#define HS_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/mem.h"
#include "../base/u64map.h"
#include "../hprof/hprof.h"
#include "layout.h"

#define HEAP_NONE UINT32_MAX
#define HEAP_MAX_HEAPS 16	/* Android heaps told apart; more share the last name */

enum heap_kind {
	HEAP_INSTANCE,
	HEAP_OBJ_ARRAY,
	HEAP_PRIM_ARRAY,
	HEAP_CLASS	/* a class object, from a CLASS DUMP record */
};
#define HEAP_KIND_MIXED 4	/* heap_class.obj_kind: its objects differ: read the record */
#define HEAP_KIND_NONE 5	/* heap_class.obj_kind: no objects */

/* An instance field as a CLASS DUMP declares it. */
struct heap_field {
	const char *name;
	uint8_t type;		/* HPROF basic type */
};

/* A static field: its value lives in the dump at value_pos. */
struct heap_static {
	const char *name;
	uint8_t type;
	size_t value_pos;	/* file offset of the value */
};

/* One class object (CLASS DUMP), or a class only named by instances. */
struct heap_class {
	uint64_t id;		/* the class object's id */
	uint32_t obj;		/* its object index; HEAP_NONE if it has no record */
	uint32_t super;		/* class index of the superclass, or HEAP_NONE */
	uint32_t loader;	/* object index of the class loader, HEAP_NONE = bootstrap */
	const char *name;	/* Java name: java.lang.String, byte[], a.B$C[] */
	uint32_t hprof_size;	/* CLASS DUMP instance size (HPROF's field bytes) */
	uint32_t inst_size;	/* shallow size of one instance; 0 for arrays */
	uint32_t data_size;	/* bytes of field values in its INSTANCE DUMPs */
	uint8_t elem_type;	/* arrays: element basic type; 0 for non-arrays */
	uint8_t obj_kind;	/* enum heap_kind of all its objects, or HEAP_KIND_MIXED */
	uint16_t nfields;	/* own declared instance fields */
	uint16_t nstatics;
	struct heap_field *fields;
	struct heap_static *statics;
	uint32_t nref_offsets;	/* reference fields over the whole hierarchy */
	uint32_t *ref_offsets;	/* their byte offsets in the instance data */
	uint64_t count;		/* histogram: objects of this class */
	uint64_t shallow;	/* histogram: their shallow bytes */
};

struct heap_root {
	uint32_t obj;
	uint8_t kind;		/* HPROF root sub-record tag */
	uint32_t thread;	/* index into heap.threads, or HEAP_NONE */
	int32_t frame;		/* depth in the thread's stack, or -1 */
};

struct heap_frame {
	uint64_t id;
	const char *method, *signature, *source;
	const char *class_name;	/* Java name of the frame's class, or "?" */
	int32_t line;		/* >0 line, 0 none, -1 unknown, -2 compiled, -3 native */
};

struct heap_thread {
	uint32_t obj;		/* the java.lang.Thread object, or HEAP_NONE */
	uint32_t serial;
	uint32_t nframes;
	uint32_t *frames;	/* indexes into heap.frames, innermost first */
};

/* What a reference is: the kind and the field or element it comes from. */
enum heap_ref_kind {
	HEAP_REF_FIELD,		/* instance field */
	HEAP_REF_ELEMENT,	/* object array element */
	HEAP_REF_STATIC,	/* static field of a class */
	HEAP_REF_SUPER,		/* class -> superclass */
	HEAP_REF_LOADER,	/* class -> class loader */
	HEAP_REF_SIGNERS,
	HEAP_REF_DOMAIN,	/* class -> protection domain */
	HEAP_REF_CONSTANT	/* class -> constant pool entry */
};

struct heap_ref {
	enum heap_ref_kind kind;
	const char *name;	/* field name, or NULL */
	uint32_t index;		/* array index or constant pool index */
	uint32_t target;	/* object index */
};

struct heap_chunk {
	uint32_t start, end;	/* objects [start, end) fall in this chunk */
	uint32_t sub;		/* offset of its sub-directory in heap.sub, or of its
				 * bitmap in heap.idmap (bits HEAP_CHUNK_BITMAP) */
	uint8_t shift;		/* id bits below one sub-directory bucket */
	uint8_t bits;		/* log2 of its bucket count; 0 = no sub-directory */
};

/* heap_popcount: set bits of x, inline on any x86-64 (the builtin calls
 * libgcc without -mpopcnt). */
static inline uint32_t heap_popcount(uint64_t x)
{
	x -= (x >> 1) & 0x5555555555555555ULL;
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (uint32_t)((x * 0x0101010101010101ULL) >> 56);
}

/* heap_chunk.bits of a chunk whose directory is a bitmap. */
#define HEAP_CHUNK_BITMAP 0xff

/* 64 slots of 8 bytes of a bitmap chunk: which hold an object, and the
 * index of the first object in them. */
struct heap_idmap {
	uint64_t bits;
	uint32_t before;
	uint32_t unused;
};

struct heap_load_opts {
	int oop_size;		/* 4 or 8 to force; 0 to detect from the dump */
	/* progress: called now and then with the fraction read; may be NULL */
	void (*progress)(void *ctx, double fraction);
	void *progress_ctx;
	/* which heap dump of a file that holds several (the old HPROF agent
	 * writes one per request), from 1; 0 is the first, as VisualVM opens */
	uint32_t dump;
	/* plan: called once the objects are counted, before the arrays are
	 * built, with their count, the references guessed (pass 1: 3/4 of
	 * the id-sized slots), the bytes of big arrays (big.h) the heap
	 * and its dominator tree are expected to take (heap_estimate_bytes),
	 * and how many of those go beyond the memory budget to files in the
	 * spill folder (0 when all fit); with progress_ctx; may be NULL */
	void (*plan)(void *ctx, uint64_t objects, uint64_t refs, uint64_t need, uint64_t spill);
	int layout_jdk;		/* the JDK whose object layout to use (6 to 99); 0 to detect */
};

struct heap {
	struct hprof *hp;
	uint32_t n;		/* objects */
	/*
	 * ids and record positions. While the dump loads: ids[n] (sorted) and
	 * pos[n] (file offsets). After, neither (heap_id reads an id from its
	 * record, 8 bytes per object less): a position is its block's base
	 * (HEAP_POS_BLOCK objects a block) plus a 32-bit offset in pos_lo, or,
	 * for a record more than 4 GiB before or after the base (class objects,
	 * whose records come first), HEAP_POS_FAR and an entry in pos_far.
	 */
	uint64_t *ids;		/* [n] while loading, else NULL */
	uint64_t *pos;		/* [n] while loading, else NULL */
	uint32_t *pos_lo;	/* [n] after loading: offset from pos_base, or HEAP_POS_FAR */
	uint64_t *pos_base;	/* [n / HEAP_POS_BLOCK + 1] */
	struct u64map pos_far;	/* object index + 1 -> record offset */
	uint32_t *cls;		/* [n] class index (class objects: java.lang.Class) */
	uint16_t *size;		/* [n] shallow size; HEAP_SIZE_BIG or more: see heap_shallow */
	uint32_t *out_start;	/* [n+1] CSR offsets into out (< 2^32 references) */
	uint32_t *out;		/* [nrefs] targets, per object in record order */
	uint32_t *in_start;	/* [n+1] CSR offsets into in; NULL until heap_in */
	uint32_t *in;		/* [nrefs] sources, ascending per object; NULL until heap_in */
	uint64_t nrefs;

	/*
	 * id -> index directory (see heap_build_directory): chunks of the id range.
	 * A chunk dense with 8-byte aligned ids (HotSpot's regions) has a
	 * bitmap, a bit per 8-byte slot, with the index of each 64 slots'
	 * first object: a lookup reads one entry and compares no ids. Any
	 * other chunk has a sub-directory sized to its objects, whose last
	 * few candidates are compared by reading their ids.
	 */
	uint64_t id_min, id_max;
	int top_shift;
	struct heap_chunk *chunks;	/* NULL until built, in a trusted model (heap_index) */
	uint32_t *sub;
	struct heap_idmap *idmap;
	uint64_t searches;	/* lookups answered without the directory */

	uint32_t nclasses;
	struct heap_class *classes;
	uint32_t *inst_start;	/* [nclasses+1] CSR offsets into inst */
	uint32_t *inst;		/* [n] objects grouped by class, ascending */
	uint32_t class_class;	/* class index of java.lang.Class, or HEAP_NONE */
	/* java.lang.String, Thread and ClassLoader, for names (heap_object_label); HEAP_NONE if absent */
	uint32_t string_class, thread_class, loader_class;

	uint32_t nroots;
	struct heap_root *roots;
	uint32_t nthreads;
	struct heap_thread *threads;
	uint32_t nframes;
	struct heap_frame *frames;

	int oop_size;		/* 4 with compressed oops, else 8 */
	int header_size;	/* instance header bytes: id size + oop size (VisualVM's rule) */
	bool oop_size_forced;
	bool utf16_be;		/* byte[] UTF-16 strings are big-endian (sun.cpu.endian) */
	const char *oop_source;	/* how oop_size was decided, for :info */
	/*
	 * HotSpot's layout (layout.h), when the dump is HotSpot's (not ART's,
	 * not one that gives real instance sizes): use_layout, the layout used
	 * and what in the dump chose its generation, for :info.
	 */
	bool use_layout, layout_forced;
	struct layout_cfg layout;
	const char *layout_source;
	/* evidence against the choice: classes bigger than the distance after one
	 * of their instances to the next object; 8-byte references while an
	 * object array lies closer to the next object than they allow */
	uint32_t layout_misfits;
	bool oops_conflict;

	/* Counts of what the loader dropped or repaired. */
	uint64_t dangling_refs;	/* references to ids with no record */
	uint64_t dangling_roots;
	uint64_t duplicate_ids;
	uint64_t unknown_class_objs;	/* objects whose class has no CLASS DUMP */
	uint64_t total_shallow;

	/*
	 * Android (docs/heap-model.md, "Android dumps"): art_layout when the
	 * dump is ART's (a 1.0.3 header, HEAP DUMP INFO records, or ART's
	 * classes in an hprof-conv'd file): shallow sizes are Android Studio's
	 * (docs/heap-model.md). The heaps HEAP DUMP INFO names (app, image, zygote) and the
	 * heap of each object: heap_of is NULL when the dump names none.
	 */
	bool art_layout;
	uint32_t nheaps;
	const char *heap_names[HEAP_MAX_HEAPS];
	uint8_t *heap_of;	/* [n] index into heap_names */
	uint64_t unreachable_marks;	/* Android's UNREACHABLE (0x90): listed, not GC roots */

	/* Heap dumps in the file (the old HPROF agent writes one per request),
	 * and which one this heap is, from 1. */
	uint32_t ndumps, dump;

	/* Damage: the dump was cut short or malformed; lost_bytes were unread. */
	bool damaged;
	uint64_t lost_bytes;
	char damage[512];

	struct heap_names *names;	/* interned strings (private) */

	/* A heap from heap_model_load: its per-object arrays are in this
	 * mapping of the index, which heap_free unmaps; NULL otherwise. */
	void *model_map;
	size_t model_maplen;
};

/*
 * heap_load: read the dump at path into a new heap. Returns HS_OK with *out
 * set; a damaged dump that still yielded a heap is HS_OK with ->damaged set
 * and ->damage saying what was lost. HS_ERR when nothing usable could be
 * read (err says what and the byte offset), HS_INTERRUPTED on Ctrl-C.
 * Cost: one pass over the records, sorting the ids (a merge of HotSpot's
 * per-region runs, else a radix sort), one pass over the objects on two
 * threads; memory about 22 bytes per object and 8 per reference at rest
 * once the incoming references are built (heap_in builds them on first
 * use: 4 bytes per object and per reference fewer until then; 40 per
 * object while loading), in big arrays (big.h) that go to files
 * past the memory budget. HS_ERR before
 * the arrays are built when the spill folder cannot hold what goes beyond
 * the budget (big_plan). Heaps of 2^32 references or more are refused
 * with an error.
 */
int heap_load(const char *path, const struct heap_load_opts *opts,
	      struct heap **out, struct hs_error *err);
void heap_free(struct heap *h);

/*
 * The model in the index (docs/out-of-core.md, "The model in the index"),
 * so that a reopen maps it instead of reading the dump again.
 *
 * heap_model_save: the model of a loaded heap as the parts of one index
 * section, to be written in order: a header, the heap's own per-object
 * and per-reference arrays (pointed to, not copied: about 18 bytes per
 * object and 4 per reference) and a buffer of the small tables (classes,
 * fields, GC roots, threads, frames, strings). The parts point into h and
 * *m; they live until heap_model_save_free or heap_free. HS_ERR when the
 * heap cannot be saved: damaged, still loading, or 4 GiB of names.
 */
struct heap_part {
	const void *data;
	uint64_t len;
};
struct heap_model {
	struct heap_part parts[32];
	int nparts;
	uint64_t len;		/* bytes of all parts */
	void *hdr, *meta, *strings;	/* owned */
};
int heap_model_save(const struct heap *h, struct heap_model *m);
void heap_model_save_free(struct heap_model *m);

/*
 * heap_model_load: the heap of the dump at path from a section written by
 * heap_model_save, in a read-only mapping (data, len bytes, at map of
 * maplen). The per-object arrays stay in the mapping (file pages, read
 * when touched). Unless src->trusted, everything is checked first against
 * the section and the dump: every count, offset and index in range, every
 * record offset at an object record of the dump of its class's kind, ids
 * rising, references and objects by class consistent: O(objects +
 * references); the id directory is then built from the ids the check read.
 * A trusted model reads nothing of O(objects): its directory is built when
 * lookups need it (heap_index).
 * HS_OK with *out set, and the heap owns the mapping (heap_free unmaps
 * it). HS_ERR with *why saying what did not fit (a static string), and the
 * caller keeps the mapping: load the dump instead (heap_load). A model
 * made with other --oops or --dump options is refused the same way.
 */
struct heap_model_src {
	const uint8_t *data;
	uint64_t len;
	void *map;
	size_t maplen;
	/* trusted: this section and the dump are unchanged since a load of
	 * them checked everything (idx_trusted): only the header and the small
	 * tables are checked, O(classes + roots + threads + frames) */
	bool trusted;
};
int heap_model_load(const char *path, const struct heap_load_opts *opts,
		    const struct heap_model_src *src, struct heap **out, const char **why);
/*
 * heap_model_adopt: h, loaded from the dump, uses the section heap_model_save
 * wrote of it (src, mapped read-only from the index file this process has
 * just written) for its per-object arrays, and gives its own back: their
 * memory, and their files when they were past the budget. The arrays are
 * the same bytes, so nothing is checked again but the section's shape: its
 * header must be h's (counts, dump size) and hold every array. HS_OK, and
 * the heap owns the mapping (heap_free unmaps it); HS_ERR and nothing
 * changed otherwise, the mapping the caller's. Pointers into the old
 * arrays (heap_out, heap_instances) do not survive it.
 */
int heap_model_adopt(struct heap *h, const struct heap_model_src *src);

/*
 * heap_estimate_bytes: the bytes of big arrays (big.h) a heap of n objects
 * and r references takes at its peak with its dominator tree, 53 per
 * object and 8 per reference: the model at rest (22 per object, 8 per
 * reference), the tree's build (33 per object) less the 4 per object of
 * record positions it spills meanwhile, and room for the directory
 * (docs/out-of-core.md, where the figures are measured); loading itself
 * peaks lower. heap_load plans with r guessed from pass 1, as references
 * are counted only in pass 2: 3/4 of the id-sized slots of instance fields
 * and object arrays.
 */
uint64_t heap_estimate_bytes(uint64_t n, uint64_t r);
/*
 * heap_index_bytes: the size of the index file with the heap model and one
 * dominator tree for n objects and r references, 26 bytes per object and
 * 4 per reference: the model's arrays (heap_model_save: 18 and 4) and the
 * tree's (immediate dominators and retained sizes, 8); its small tables
 * are left out. With the references counted: 96.8 MB for big1's index of
 * 97.4 MB, 23.3 GB for the 36 GiB synthetic dump's of 23.3 GB.
 */
uint64_t heap_index_bytes(uint64_t n, uint64_t r);

/*
 * heap_android_heap: the name of the heap object i is in, as the dump's
 * HEAP DUMP INFO records say ("app", "zygote", "image"; Android), or NULL
 * for dumps that name no heaps. heap_android_heap_index: the name's index
 * in h->heap_names, or -1 when the dump has no heap of that name.
 */
static inline const char *heap_android_heap(const struct heap *h, uint32_t i)
{
	return h->heap_of ? h->heap_names[h->heap_of[i]] : NULL;
}
int heap_android_heap_index(const struct heap *h, const char *name);

/* heap_index: object index of id, or HEAP_NONE. O(1) expected; in a
 * trusted model (heap_model_load), O(log n) record reads until the lookups
 * have cost about as much as building the directory, which the lookup
 * that tips it then does (O(n) record reads, 8 bytes per object for a
 * while, about 2 at rest). Safe from several threads. */
uint32_t heap_index(const struct heap *h, uint64_t id);

#define HEAP_SIZE_BIG UINT16_MAX	/* heap.size: read the size from the record */
#define HEAP_POS_BLOCK_SHIFT 12
#define HEAP_POS_BLOCK (1u << HEAP_POS_BLOCK_SHIFT)
#define HEAP_POS_FAR UINT32_MAX

/* heap_pos: the file offset of object i's record (its sub-record tag). */
static inline size_t heap_pos(const struct heap *h, uint32_t i)
{
	if (h->pos)
		return h->pos[i];
	uint32_t lo = h->pos_lo[i];
	if (lo != HEAP_POS_FAR)
		return h->pos_base[i >> HEAP_POS_BLOCK_SHIFT] + lo;
	uint64_t v = 0;
	u64map_get(&h->pos_far, (uint64_t)i + 1, &v);
	return v;
}

/* heap_id: object i's id, from the loader's array or from its record. */
static inline uint64_t heap_id(const struct heap *h, uint32_t i)
{
	if (h->ids)
		return h->ids[i];
	return hprof_id(h->hp, h->hp->data + heap_pos(h, i) + 1);
}

/* heap_kind: what object i is; from its class when that is unambiguous. */
static inline enum heap_kind heap_kind(const struct heap *h, uint32_t i)
{
	uint8_t k = h->classes[h->cls[i]].obj_kind;
	if (k < HEAP_KIND_MIXED)
		return (enum heap_kind)k;
	switch (h->hp->data[heap_pos(h, i)]) {
	case HPROF_GC_INSTANCE_DUMP: return HEAP_INSTANCE;
	case HPROF_GC_OBJ_ARRAY_DUMP: return HEAP_OBJ_ARRAY;
	case HPROF_GC_PRIM_ARRAY_DUMP: case HPROF_GC_PRIM_ARRAY_NODATA: return HEAP_PRIM_ARRAY;
	default: return HEAP_CLASS;
	}
}

/* heap_shallow: shallow size of object i in bytes (see docs/heap-model.md). */
uint64_t heap_shallow(const struct heap *h, uint32_t i);

/* heap_class_name: Java name of object i's class. */
static inline const char *heap_class_name(const struct heap *h, uint32_t i)
{
	return h->classes[h->cls[i]].name;
}

/* heap_class_of_object: for a class object, its class index; else HEAP_NONE. */
uint32_t heap_class_of_object(const struct heap *h, uint32_t i);

/* Outgoing / incoming references of i: *count targets (sources). */
static inline const uint32_t *heap_out(const struct heap *h, uint32_t i, uint32_t *count)
{
	*count = h->out_start[i + 1] - h->out_start[i];
	return h->out + h->out_start[i];
}
/*
 * heap_build_incoming: the incoming references (in_start, in), the
 * transpose of the outgoing ones, 4 bytes per object and per reference in
 * big arrays, on two threads. The loader leaves them unbuilt, so an open
 * that only lists classes (:histogram) skips them: the first heap_in
 * builds them (tens of milliseconds per million objects). Not safe to call
 * while another thread reads the heap.
 */
void heap_build_incoming(struct heap *h);
/*
 * heap_incoming_some: the incoming references of the objects keep accepts,
 * as heap_build_incoming makes them but into *start (n + 1 entries, object
 * i's list is (*in)[(*start)[i] .. (*start)[i + 1])) and *in; an object
 * keep refuses gets an empty list. keep(ctx, i, count) is called for every
 * object in order, on the calling thread, with its number of referrers
 * (references to it, one per reference); NULL keeps every list. On two
 * threads when threads is true (8 bytes per object of counts while it
 * runs), else on the calling thread alone (4). Only reads the heap: other
 * threads may read it meanwhile. Returns the references kept. The caller
 * frees both arrays with big_free.
 */
typedef bool heap_keep_fn(void *ctx, uint32_t i, uint32_t count);
uint64_t heap_incoming_some(const struct heap *h, bool threads, heap_keep_fn *keep, void *ctx,
			    uint32_t **start, uint32_t **in);
/* heap_free_incoming: give the incoming references back (the next heap_in
 * builds them again). Not safe while another thread reads the heap. */
void heap_free_incoming(struct heap *h);

static inline const uint32_t *heap_in(const struct heap *h, uint32_t i, uint32_t *count)
{
	if (!h->in)	/* built on first use: the model, not its meaning, changes */
		heap_build_incoming((struct heap *)h);
	*count = h->in_start[i + 1] - h->in_start[i];
	return h->in + h->in_start[i];
}

/*
 * heap_refs: describe object i's outgoing references in the order of
 * heap_out, calling fn for each; stops early if fn returns false.
 */
void heap_refs(const struct heap *h, uint32_t i,
	       bool (*fn)(void *ctx, const struct heap_ref *r), void *ctx);

/* A field value as read from the dump. */
struct heap_value {
	uint8_t type;		/* HPROF basic type; 0 = no such value */
	union {
		uint64_t id;	/* HPROF_OBJECT: object id, 0 = null */
		int64_t i;	/* boolean, byte, char, short, int, long */
		double d;	/* float, double */
	} v;
};

/* heap_read_value: decode a value of basic type t at file offset pos. */
struct heap_value heap_read_value(const struct heap *h, uint8_t t, size_t pos);

/*
 * heap_field: the value of instance field name of object i, searching the
 * class then its superclasses (the nearest declaration wins). Returns false
 * when i is not an instance or has no such field.
 */
bool heap_field(const struct heap *h, uint32_t i, const char *name, struct heap_value *v);

/*
 * heap_field_locate: where instances of class c hold field name (the
 * nearest declaration): its byte offset in the INSTANCE DUMP values and
 * its type. False when c has no such field.
 */
bool heap_field_locate(const struct heap *h, uint32_t c, const char *name, uint32_t *off,
		       uint8_t *type);
/* heap_field_at: the value at offset off of instance i's fields, or type 0. */
struct heap_value heap_field_at(const struct heap *h, uint32_t i, uint32_t off, uint8_t type);

/* heap_static: static field name of class c (not its superclasses). */
bool heap_static(const struct heap *h, uint32_t c, const char *name, struct heap_value *v);

/*
 * heap_fields_each: every instance field of object i, the object's own
 * class first, then superclasses, with the declaring class index.
 */
void heap_fields_each(const struct heap *h, uint32_t i,
		      void (*fn)(void *ctx, uint32_t decl_class, const struct heap_field *f,
				 struct heap_value v),
		      void *ctx);

/* Arrays: element count, and element k (object ids or primitive values). */
uint32_t heap_array_length(const struct heap *h, uint32_t i);
struct heap_value heap_array_elem(const struct heap *h, uint32_t i, uint32_t k);

/*
 * heap_string: the text of java.lang.String object i as UTF-8 in a new
 * string (caller frees), at most max_chars characters (0 = all), with
 * "..." appended when cut. NULL if i is not a String or has no value.
 * Handles JDK 9+ compact strings (byte[] + coder) and JDK 8 char[].
 */
char *heap_string(const struct heap *h, uint32_t i, size_t max_chars);

/*
 * heap_find_classes: indexes of classes whose name matches pattern, into
 * out (caller frees), returning the count. A pattern is a Java name
 * (exact), or contains '*' wildcards, or is a simple / nested name
 * (Order, HashMap.Entry, HashMap$Node) matching the tail of the name.
 */
uint32_t heap_find_classes(const struct heap *h, const char *pattern, uint32_t **out);

/*
 * heap_suggest_class: "; did you mean a.B, c.B?" (into buf, cap bytes) with
 * the classes whose names are closest to pattern, at most two edits away:
 * their simple names (after the last '.') when pattern has no '.', else
 * their full names; "" when none is close. For the errors of commands that
 * take a class name. O(classes).
 */
void heap_suggest_class(const struct heap *h, const char *pattern, char *buf, size_t cap);

/*
 * heap_object_label: what tables call object i, in a new string (caller
 * frees): its class name; "class X" for the class object of X; a String
 * with its text (java.lang.String "GET /cart", at most 40 characters, then
 * "..."), a thread with its name (java.lang.Thread "http-worker-12"), a
 * class loader with its name when it has one (JDK 9+); no id.
 */
char *heap_object_label(const struct heap *h, uint32_t i);

/* heap_class_by_name: the first class with exactly this Java name, or HEAP_NONE. */
uint32_t heap_class_by_name(const struct heap *h, const char *name);

/* heap_instances: the objects of class c (not subclasses), ascending. */
static inline const uint32_t *heap_instances(const struct heap *h, uint32_t c, uint32_t *count)
{
	*count = h->inst_start[c + 1] - h->inst_start[c];
	return h->inst + h->inst_start[c];
}

/* heap_is_subclass: true when class c is sup or inherits from it. */
bool heap_is_subclass(const struct heap *h, uint32_t c, uint32_t sup);

/* heap_system_property: value of a java.lang.System property (caller frees), or NULL. */
char *heap_system_property(const struct heap *h, const char *key);

/* heap_root_kind_name: "JNI global", "Java frame", ... for a root tag. */
const char *heap_root_kind_name(uint8_t kind);
/* heap_root_kind_parse: tag for a name ("frame", "jni-global", ...), or -1. */
int heap_root_kind_parse(const char *name);

/*
 * heap_spill: move the objects' record offsets (pos_lo, 4 bytes per
 * object) to a file in the spill folder (big_evict; --spill-dir) and drop
 * them from memory, for a computation that reads none: the dominator
 * tree's build, whose peak memory is lower by as much. They stay readable:
 * a later read brings pages back from the file. Returns false, with
 * nothing changed, when the offsets are small enough to be malloc'd, no
 * file could be made, or the heap is still loading.
 */
bool heap_spill(struct heap *h);

/* heap_thread_name: the name of thread t (caller frees), or NULL. */
char *heap_thread_name(const struct heap *h, uint32_t t);

/*
 * heap_forget_thread: thread t is not the program's (the heapsh agent's own,
 * in a dump of a JVM it is attached to): its GC roots (its Thread object's,
 * its frames' locals, its JNI locals) and its entry in h->threads go, and
 * the other threads' indexes shift down. Call before the engine runs.
 */
void heap_forget_thread(struct heap *h, uint32_t t);

#endif
