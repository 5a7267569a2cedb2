/*
 * test_heap.c - the heap model (src/heap) on synthetic dumps written with
 * hprof_writer.h whose every object, reference, root and size is known.
 *
 * The main "model" dump is built for id size 4 and 8 and loaded with and
 * without a forced oop size. Smaller dumps cover strings, Android records,
 * damage, and files with nothing to load.
 *
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <cmocka.h>

#include "hprof_writer.h"
#include "../../src/base/big.h"
#include "../../src/heap/heap.h"

/* ---- interned UTF8 strings ---- */

struct names {
	const char *s[128];	/* string literals */
	size_t n;
	uint64_t base;		/* sid of s[k] is base + k + 1 */
};

static uint64_t sid(struct names *nm, const char *text)
{
	for (size_t k = 0; k < nm->n; k++)
		if (!strcmp(nm->s[k], text))
			return nm->base + k + 1;
	assert_true(nm->n < sizeof nm->s / sizeof *nm->s);
	nm->s[nm->n] = text;
	return nm->base + ++nm->n;
}

static void write_names(struct hw *w, const struct names *nm)
{
	for (size_t k = 0; k < nm->n; k++)
		hw_utf8(w, nm->base + k + 1, nm->s[k]);
}

static uint64_t align8(uint64_t n)
{
	return (n + 7) & ~7ULL;
}

static uint32_t type_size(uint8_t t, int ids)
{
	switch (t) {
	case HPROF_OBJECT: return (uint32_t)ids;
	case HPROF_BOOLEAN: case HPROF_BYTE: return 1;
	case HPROF_CHAR: case HPROF_SHORT: return 2;
	case HPROF_FLOAT: case HPROF_INT: return 4;
	default: return 8;
	}
}

/* ---- the model dump ---- */

enum key {
	/* classes, each with a CLASS DUMP */
	K_OBJECT, K_CLASS, K_STRING, K_THREAD, K_LOADER, K_BASE, K_DERIVED, K_DUP1, K_DUP2,
	K_BYTES, K_INTS, K_INTS2, K_OBJARR,
	NCLASSES,
	/* instances and arrays */
	T1 = NCLASSES, S_MAIN, S_LAT, B_MAIN, B_LAT, D1, D2, BASE1, A1, IA, IE, II, L1, L2,
	DUP1A, DUP1B, DUP2A, CA, LA, ZA,
	/* ids with no record: references to them dangle */
	GHOST1, GHOST2, GHOST3, GHOST4,
	NKEYS
};

static const struct {
	const char *jvm, *java;
} class_names[NCLASSES] = {
	[K_OBJECT] = {"java/lang/Object", "java.lang.Object"},
	[K_CLASS] = {"java/lang/Class", "java.lang.Class"},
	[K_STRING] = {"java/lang/String", "java.lang.String"},
	[K_THREAD] = {"java/lang/Thread", "java.lang.Thread"},
	[K_LOADER] = {"com/example/MyLoader", "com.example.MyLoader"},
	[K_BASE] = {"com/example/Base", "com.example.Base"},
	[K_DERIVED] = {"com/example/Derived", "com.example.Derived"},
	[K_DUP1] = {"com/example/Dup", "com.example.Dup"},
	[K_DUP2] = {"com/example/Dup", "com.example.Dup"},
	[K_BYTES] = {"[B", "byte[]"},
	[K_INTS] = {"[I", "int[]"},
	[K_INTS2] = {"[[I", "int[][]"},
	[K_OBJARR] = {"[Ljava/lang/Object;", "java.lang.Object[]"},
};

/* A class with no CLASS DUMP, added by the loader for primitive arrays. */
#define ADDED (-1)
#define NONE (-1)

/* What one object record should become in the model. */
struct xobj {
	int key;
	int cls;		/* class key, or ADDED */
	const char *cls_name;	/* Java name of its class */
	enum heap_kind kind;
	uint32_t prim, nref;	/* instances: primitive field bytes and references over the
				   hierarchy; class objects: the same for its statics */
	uint32_t len;		/* arrays: elements */
	uint8_t elem;		/* arrays: element type */
	int out[8];		/* outgoing references (keys), in record order */
	int nout;
	int seg;		/* which HEAP DUMP SEGMENT holds it */
	size_t at, end;		/* its bytes within that segment's body */
};

struct model {
	int ids;
	struct names nm;
	struct hw recs;		/* top-level records other than UTF8 and heap dumps */
	struct hw seg[2];	/* bodies of the two HEAP DUMP SEGMENTs */
	int cur;		/* the segment being written */
	size_t seg_body[2];	/* file offsets of the segment bodies */
	size_t seg_end[2];
	struct hw w;		/* the assembled dump */
	struct xobj obj[64];	/* every object, in write order (duplicates once) */
	size_t nobj;
	int super[NCLASSES];	/* class key of each class's superclass, or NONE */
	uint32_t own_prim[NCLASSES], own_nref[NCLASSES];	/* own instance fields */
};

static uint64_t oid(const struct model *m, int key)
{
	/* 37 is invertible mod 61, so the ids are distinct and out of key order. */
	uint64_t base = m->ids == 8 ? 0x00007F3A00000000ULL : 0x20000000u;
	return base + 0x40 + (uint64_t)((key * 37) % 61) * 0x18;
}

static uint64_t fid(const struct model *m, int k)
{
	return (m->ids == 8 ? 0x0000700000000000ULL : 0x40000000u) + (uint64_t)k;
}

static uint32_t serial_of(int class_key)
{
	return (uint32_t)class_key + 1;
}
#define BASE_SERIAL2 60u	/* com.example.Base's second LOAD CLASS */
#define THREAD_SERIAL 1u
#define TRACE_SERIAL 5u

static struct xobj *reg(struct model *m, int key, int cls, const char *cls_name,
			enum heap_kind kind)
{
	assert_true(m->nobj < sizeof m->obj / sizeof *m->obj);
	struct xobj *x = &m->obj[m->nobj++];
	memset(x, 0, sizeof *x);
	x->key = key;
	x->cls = cls;
	x->cls_name = cls_name;
	x->kind = kind;
	x->seg = m->cur;
	x->at = m->seg[m->cur].len;
	return x;
}

/* done: the object's record is written; note where it ends. */
static void done(struct model *m, struct xobj *x)
{
	x->end = m->seg[m->cur].len;
}

static void out(struct xobj *x, int key)
{
	x->out[x->nout++] = key;
}

struct mfield {
	const char *name;
	uint8_t type;
};

/*
 * mclass: the CLASS DUMP of class key, registered as a class object whose
 * references so far are its superclass and loader; the caller adds the
 * signers, domain, statics and constant pool ones in that order.
 */
static struct xobj *mclass(struct model *m, int key, int super, int loader, int signers,
			   int domain, const struct mfield *f, uint16_t nf,
			   const struct hw_static *st, uint16_t nst, const struct hw_cp *cp,
			   uint16_t ncp)
{
	struct hw_field fields[8];
	uint32_t hprof_size = 0;
	m->super[key] = super;
	for (unsigned k = 0; k < nf; k++) {
		fields[k] = (struct hw_field){sid(&m->nm, f[k].name), f[k].type};
		hprof_size += type_size(f[k].type, m->ids);
		if (f[k].type == HPROF_OBJECT)
			m->own_nref[key]++;
		else
			m->own_prim[key] += type_size(f[k].type, m->ids);
	}
	struct xobj *x = reg(m, key, K_CLASS, "java.lang.Class", HEAP_CLASS);
	for (unsigned k = 0; k < nst; k++) {
		if (st[k].v.type == HPROF_OBJECT)
			x->nref++;
		else
			x->prim += type_size(st[k].v.type, m->ids);
	}
	struct hw_class c = {
		.id = oid(m, key),
		.super = super == NONE ? 0 : oid(m, super),
		.loader = loader == NONE ? 0 : oid(m, loader),
		.signers = signers == NONE ? 0 : oid(m, signers),
		.domain = domain == NONE ? 0 : oid(m, domain),
		.instance_size = hprof_size,
		.ncp = ncp, .cp = cp, .nstatics = nst, .statics = st,
		.nfields = nf, .fields = fields};
	hw_class_dump(&m->seg[m->cur], &c);
	done(m, x);
	if (super != NONE)
		out(x, super);
	if (loader != NONE)
		out(x, loader);
	if (signers != NONE)
		out(x, signers);
	if (domain != NONE)
		out(x, domain);
	return x;
}

/* minst: an INSTANCE DUMP of class cls with the given values. */
static struct xobj *minst(struct model *m, int key, int cls, size_t n,
			  const struct hw_value *vals)
{
	struct xobj *x = reg(m, key, cls, class_names[cls].java, HEAP_INSTANCE);
	for (int c = cls; c != NONE; c = m->super[c]) {
		x->prim += m->own_prim[c];
		x->nref += m->own_nref[c];
	}
	hw_instance(&m->seg[m->cur], oid(m, key), oid(m, cls), n, vals);
	done(m, x);
	return x;
}

/* mobjarr: an OBJECT ARRAY DUMP of element keys (NONE for null). */
static struct xobj *mobjarr(struct model *m, int key, int cls, uint32_t n, const int *elems)
{
	struct xobj *x = reg(m, key, cls, class_names[cls].java, HEAP_OBJ_ARRAY);
	uint64_t ids[16];
	for (uint32_t k = 0; k < n; k++) {
		ids[k] = elems[k] == NONE ? 0 : oid(m, elems[k]);
		if (elems[k] != NONE && elems[k] < GHOST1)
			out(x, elems[k]);
	}
	x->len = n;
	x->elem = HPROF_OBJECT;
	hw_obj_array(&m->seg[m->cur], oid(m, key), oid(m, cls), n, ids);
	done(m, x);
	return x;
}

static struct xobj *mprim(struct model *m, int key, int cls, const char *cls_name, uint8_t t,
			  uint32_t n, const uint64_t *vals)
{
	struct xobj *x = reg(m, key, cls, cls_name, HEAP_PRIM_ARRAY);
	x->len = n;
	x->elem = t;
	hw_prim_array_vals(&m->seg[m->cur], oid(m, key), t, n, vals);
	done(m, x);
	return x;
}

static const struct mfield string_fields[] = {
	{"value", HPROF_OBJECT}, {"coder", HPROF_BYTE}, {"hash", HPROF_INT}};
static const struct mfield thread_fields[] = {{"name", HPROF_OBJECT}, {"tid", HPROF_LONG}};
static const struct mfield loader_fields[] = {{"parent", HPROF_OBJECT}};
static const struct mfield base_fields[] = {
	{"shared", HPROF_INT}, {"next", HPROF_OBJECT}, {"tag", HPROF_OBJECT}};
static const struct mfield derived_fields[] = {
	{"shared", HPROF_LONG}, {"own", HPROF_OBJECT}, {"flag", HPROF_BOOLEAN}};
static const struct mfield dup_fields[] = {{"v", HPROF_INT}};

#define TIMESTAMP 1700000000123ULL

/*
 * build_model: the model dump. Classes and roots go to the first HEAP DUMP
 * SEGMENT, instances and arrays to the second, each in an order that is
 * not their id order.
 */
static void build_model(struct model *m, int ids)
{
	memset(m, 0, sizeof *m);
	m->ids = ids;
	m->nm.base = ids == 8 ? 0x0000600000000000ULL : 0x30000000u;
	for (int k = 0; k < NCLASSES; k++)
		m->super[k] = NONE;
	hw_init_body(&m->recs, ids);
	hw_init_body(&m->seg[0], ids);
	hw_init_body(&m->seg[1], ids);
	struct names *nm = &m->nm;
	struct hw *r = &m->recs;

	/* LOAD CLASS for every class; Base twice, as a class can be. */
	for (int k = 0; k < NCLASSES; k++)
		hw_load_class(r, serial_of(k), oid(m, k), 0, sid(nm, class_names[k].jvm));
	hw_load_class(r, BASE_SERIAL2, oid(m, K_BASE), 0, sid(nm, class_names[K_BASE].jvm));

	/* Stack frames and the main thread's trace, innermost first. */
	hw_frame(r, fid(m, 1), sid(nm, "run"), sid(nm, "()V"), sid(nm, "Base.java"),
		 BASE_SERIAL2, 42);
	hw_frame(r, fid(m, 2), sid(nm, "main"), sid(nm, "([Ljava/lang/String;)V"),
		 sid(nm, "Derived.java"), serial_of(K_DERIVED), -3);
	hw_frame(r, fid(m, 3), sid(nm, "<init>"), sid(nm, "()V"), sid(nm, "Gone.java"), 999, -1);
	hw_trace(r, TRACE_SERIAL, THREAD_SERIAL, 3,
		 (uint64_t[]){fid(m, 1), fid(m, 2), fid(m, 3)});
	hw_trace(r, 6, 2, 0, NULL);

	/* Segment 1: the classes, then the roots. */
	m->cur = 0;
	struct xobj *x;
	struct hw_static dstat[] = {
		{sid(nm, "INSTANCE"), HW_OBJ(oid(m, D1))},
		{sid(nm, "COUNT"), HW_INT(42)},
		{sid(nm, "BIG"), HW_LONG(-7)},
		{sid(nm, "RATIO"), hw_double(1.5)},
		{sid(nm, "F"), hw_float(0.25f)},
		{sid(nm, "C"), HW_CHAR('x')},
		{sid(nm, "S"), HW_SHORT(-2)},
		{sid(nm, "B"), HW_BYTE(-3)},
		{sid(nm, "Z"), HW_BOOL(1)},
		{sid(nm, "NOTHING"), HW_OBJ(0)},
		{sid(nm, "LOST"), HW_OBJ(oid(m, GHOST4))},
	};
	struct hw_cp dcp[] = {{3, HW_OBJ(oid(m, S_MAIN))}, {7, HW_INT(99)}};
	/* Superclasses first in the model's bookkeeping, not in the file. */
	m->super[K_BASE] = K_OBJECT;
	m->super[K_DERIVED] = K_BASE;
	x = mclass(m, K_DERIVED, K_BASE, L1, NONE, NONE, derived_fields, 3, dstat, 11, dcp, 2);
	out(x, D1);		/* static INSTANCE */
	out(x, S_MAIN);		/* constant pool #3 */
	mclass(m, K_OBJECT, NONE, NONE, NONE, NONE, NULL, 0, NULL, 0, NULL, 0);
	mclass(m, K_STRING, K_OBJECT, NONE, NONE, NONE, string_fields, 3, NULL, 0, NULL, 0);
	mclass(m, K_BYTES, K_OBJECT, NONE, NONE, NONE, NULL, 0, NULL, 0, NULL, 0);
	mclass(m, K_BASE, K_OBJECT, NONE, NONE, NONE, base_fields, 3, NULL, 0, NULL, 0);
	mclass(m, K_CLASS, K_OBJECT, NONE, NONE, NONE, NULL, 0, NULL, 0, NULL, 0);
	mclass(m, K_THREAD, K_OBJECT, NONE, NONE, BASE1, thread_fields, 2, NULL, 0, NULL, 0);
	mclass(m, K_INTS2, K_OBJECT, NONE, NONE, NONE, NULL, 0, NULL, 0, NULL, 0);
	mclass(m, K_LOADER, K_OBJECT, NONE, IA, NONE, loader_fields, 1, NULL, 0, NULL, 0);
	mclass(m, K_DUP2, K_OBJECT, L2, NONE, NONE, dup_fields, 1, NULL, 0, NULL, 0);
	mclass(m, K_OBJARR, K_OBJECT, NONE, NONE, NONE, NULL, 0, NULL, 0, NULL, 0);
	mclass(m, K_DUP1, K_OBJECT, L1, NONE, NONE, dup_fields, 1, NULL, 0, NULL, 0);
	mclass(m, K_INTS, K_OBJECT, NONE, NONE, NONE, NULL, 0, NULL, 0, NULL, 0);

	struct hw *s = &m->seg[0];
	hw_root(s, HPROF_GC_ROOT_UNKNOWN, oid(m, BASE1));
	hw_root_jni_global(s, oid(m, D1), 0xABCDEF);
	hw_root_frame(s, HPROF_GC_ROOT_JNI_LOCAL, oid(m, D2), THREAD_SERIAL, 0);
	hw_root_frame(s, HPROF_GC_ROOT_JAVA_FRAME, oid(m, A1), THREAD_SERIAL, 1);
	hw_root_thread(s, HPROF_GC_ROOT_NATIVE_STACK, oid(m, S_MAIN), THREAD_SERIAL);
	hw_root(s, HPROF_GC_ROOT_STICKY_CLASS, oid(m, K_STRING));
	hw_root_thread(s, HPROF_GC_ROOT_THREAD_BLOCK, oid(m, L1), THREAD_SERIAL);
	hw_root(s, HPROF_GC_ROOT_MONITOR_USED, oid(m, L2));
	hw_root_thread_obj(s, oid(m, T1), THREAD_SERIAL, TRACE_SERIAL);
	hw_root(s, HPROF_GC_ROOT_UNKNOWN, oid(m, GHOST3));
	hw_root_frame(s, HPROF_GC_ROOT_JAVA_FRAME, oid(m, IA), 99, 0);

	/* Segment 2: instances and arrays. */
	m->cur = 1;
	x = minst(m, D1, K_DERIVED, 6, (struct hw_value[]){
		HW_LONG(0x1122334455667788ULL), HW_OBJ(oid(m, A1)), HW_BOOL(1),
		HW_INT(7), HW_OBJ(oid(m, D2)), HW_OBJ(oid(m, S_MAIN))});
	out(x, A1);
	out(x, D2);
	out(x, S_MAIN);
	x = minst(m, T1, K_THREAD, 2, (struct hw_value[]){HW_OBJ(oid(m, S_MAIN)), HW_LONG(1)});
	out(x, S_MAIN);
	mobjarr(m, A1, K_OBJARR, 5, (int[]){D2, NONE, S_MAIN, GHOST2, D1});
	x = minst(m, S_LAT, K_STRING, 3,
		  (struct hw_value[]){HW_OBJ(oid(m, B_LAT)), HW_BYTE(0), HW_INT(12345)});
	out(x, B_LAT);
	struct hw_value base1[] = {HW_INT(99), HW_OBJ(oid(m, D1)), HW_OBJ(0)};
	x = minst(m, BASE1, K_BASE, 3, base1);
	out(x, D1);
	mprim(m, B_MAIN, K_BYTES, "byte[]", HPROF_BYTE, 4, (uint64_t[]){'m', 'a', 'i', 'n'});
	mobjarr(m, II, K_INTS2, 2, (int[]){IA, IE});
	x = minst(m, S_MAIN, K_STRING, 3,
		  (struct hw_value[]){HW_OBJ(oid(m, B_MAIN)), HW_BYTE(0), HW_INT(0)});
	out(x, B_MAIN);
	x = minst(m, L2, K_LOADER, 1, (struct hw_value[]){HW_OBJ(oid(m, L1))});
	out(x, L1);
	mprim(m, IA, K_INTS, "int[]", HPROF_INT, 3, (uint64_t[]){1, (uint32_t)-2, 3});
	x = minst(m, D2, K_DERIVED, 6, (struct hw_value[]){
		HW_LONG(-1), HW_OBJ(0), HW_BOOL(0),
		HW_INT(-5), HW_OBJ(oid(m, GHOST1)), HW_OBJ(oid(m, S_LAT))});
	out(x, S_LAT);
	mprim(m, B_LAT, K_BYTES, "byte[]", HPROF_BYTE, 5, (uint64_t[]){'G', 'r', 0xFC, 0xDF, 'e'});
	minst(m, DUP1A, K_DUP1, 1, (struct hw_value[]){HW_INT(1)});
	mprim(m, IE, K_INTS, "int[]", HPROF_INT, 0, NULL);
	minst(m, L1, K_LOADER, 1, (struct hw_value[]){HW_OBJ(0)});
	minst(m, DUP2A, K_DUP2, 1, (struct hw_value[]){HW_INT(3)});
	mprim(m, CA, ADDED, "char[]", HPROF_CHAR, 2, (uint64_t[]){'h', 'i'});
	/* BASE1 again: the same id twice, which the loader keeps once. */
	hw_instance(&m->seg[1], oid(m, BASE1), oid(m, K_BASE), 3, base1);
	minst(m, DUP1B, K_DUP1, 1, (struct hw_value[]){HW_INT(2)});
	mprim(m, LA, ADDED, "long[]", HPROF_LONG, 2, (uint64_t[]){5, (uint64_t)-6});
	mprim(m, ZA, ADDED, "boolean[]", HPROF_BOOLEAN, 3, (uint64_t[]){1, 0, 1});

	/* Assemble: header, strings, the other records, the segments, the end. */
	hw_init(&m->w, ids, 2, TIMESTAMP);
	write_names(&m->w, nm);
	hw_bytes(&m->w, m->recs.b, m->recs.len);
	for (int k = 0; k < 2; k++) {
		m->seg_body[k] = hw_record_from(&m->w, HPROF_HEAP_DUMP_SEGMENT, &m->seg[k]) + 9;
		m->seg_end[k] = m->w.len;
	}
	hw_dump_end_record(&m->w);
	hw_save(&m->w);
}

static void free_model(struct model *m)
{
	hw_free(&m->w);
	hw_free(&m->recs);
	hw_free(&m->seg[0]);
	hw_free(&m->seg[1]);
}

static struct heap *load_ok(const char *path, const struct heap_load_opts *opts)
{
	struct heap *h = NULL;
	struct hs_error err;
	memset(&err, 0, sizeof err);
	int st = heap_load(path, opts, &h, &err);
	if (st != HS_OK)
		fail_msg("heap_load(%s): %s (offset %lld)", path, err.msg, (long long)err.offset);
	assert_non_null(h);
	return h;
}

static uint32_t idx(const struct heap *h, const struct model *m, int key)
{
	uint32_t i = heap_index(h, oid(m, key));
	assert_int_not_equal(i, HEAP_NONE);
	return i;
}

/* class_index: the heap's class index for class key k. */
static uint32_t class_index(const struct heap *h, const struct model *m, int k)
{
	uint32_t c = heap_class_of_object(h, idx(h, m, k));
	assert_int_not_equal(c, HEAP_NONE);
	return c;
}

static uint32_t xclass(const struct heap *h, const struct model *m, const struct xobj *x)
{
	if (x->cls == ADDED) {
		uint32_t c = heap_class_by_name(h, x->cls_name);
		assert_int_not_equal(c, HEAP_NONE);
		return c;
	}
	return class_index(h, m, x->cls);
}

/* want_size: the shallow size the rules in heap_load.c's size_classes give. */
static uint64_t want_size(const struct xobj *x, int ids, int header, int oop)
{
	switch (x->kind) {
	case HEAP_INSTANCE:
		return align8((uint64_t)header + x->prim + (uint64_t)x->nref * (uint64_t)oop);
	case HEAP_OBJ_ARRAY:
		return align8((uint64_t)header + 4 + (uint64_t)x->len * (uint64_t)oop);
	case HEAP_PRIM_ARRAY:
		return align8((uint64_t)header + 4 + (uint64_t)x->len * type_size(x->elem, ids));
	case HEAP_CLASS:
		/* A java.lang.Class (no fields here) plus the statics. */
		return align8(align8((uint64_t)header) + x->prim + (uint64_t)x->nref * (uint64_t)oop);
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* ---- checks on the loaded model ---- */

static void check_index(const struct heap *h, const struct model *m)
{
	assert_int_equal(h->n, m->nobj);
	uint64_t want[64];
	bool written_sorted = true;
	for (size_t k = 0; k < m->nobj; k++) {
		want[k] = oid(m, m->obj[k].key);
		if (k && want[k] < want[k - 1])
			written_sorted = false;
	}
	assert_false(written_sorted);	/* the sort has work to do */
	qsort(want, m->nobj, sizeof *want, cmp_u64);
	for (uint32_t i = 0; i < h->n; i++) {
		assert_true(heap_id(h, i) == want[i]);
		assert_true(heap_id(h, i) == want[i]);
		assert_int_equal(heap_index(h, heap_id(h, i)), i);
	}
	assert_true(h->id_min == want[0]);
	assert_true(h->id_max == want[m->nobj - 1]);
	/* Absent ids: below, above, between, and the ghosts. */
	assert_int_equal(heap_index(h, want[0] - 8), HEAP_NONE);
	assert_int_equal(heap_index(h, want[0] - 1), HEAP_NONE);
	assert_int_equal(heap_index(h, 0), HEAP_NONE);
	assert_int_equal(heap_index(h, want[m->nobj - 1] + 1), HEAP_NONE);
	assert_int_equal(heap_index(h, want[m->nobj - 1] + 0x1000), HEAP_NONE);
	assert_int_equal(heap_index(h, UINT64_MAX), HEAP_NONE);
	for (size_t k = 0; k + 1 < m->nobj; k++) {
		assert_int_equal(heap_index(h, want[k] + 8), HEAP_NONE);
		assert_int_equal(heap_index(h, want[k + 1] - 1), HEAP_NONE);
	}
	for (int g = GHOST1; g <= GHOST4; g++)
		assert_int_equal(heap_index(h, oid(m, g)), HEAP_NONE);
}

static void check_objects(const struct heap *h, const struct model *m, int header, int oop)
{
	uint64_t total = 0;
	for (size_t k = 0; k < m->nobj; k++) {
		const struct xobj *x = &m->obj[k];
		uint32_t i = idx(h, m, x->key);
		assert_int_equal(heap_kind(h, i), x->kind);
		assert_string_equal(heap_class_name(h, i), x->cls_name);
		if (x->kind == HEAP_CLASS) {
			assert_int_equal(h->cls[i], h->class_class);
			assert_int_not_equal(heap_class_of_object(h, i), HEAP_NONE);
		} else {
			assert_int_equal(h->cls[i], xclass(h, m, x));
			assert_int_equal(heap_class_of_object(h, i), HEAP_NONE);
		}
		uint64_t sz = want_size(x, m->ids, header, oop);
		if (heap_shallow(h, i) != sz)
			fail_msg("key %d (%s): shallow %llu, want %llu", x->key, x->cls_name,
				 (unsigned long long)heap_shallow(h, i), (unsigned long long)sz);
		total += sz;
		uint32_t n;
		const uint32_t *o = heap_out(h, i, &n);
		if (n != (uint32_t)x->nout)
			fail_msg("key %d (%s): %u references, want %d", x->key, x->cls_name, n,
				 x->nout);
		for (uint32_t e = 0; e < n; e++)
			assert_int_equal(o[e], idx(h, m, x->out[e]));
		if (x->kind == HEAP_OBJ_ARRAY || x->kind == HEAP_PRIM_ARRAY)
			assert_int_equal(heap_array_length(h, i), x->len);
	}
	assert_true(h->total_shallow == total);
}

/* keep_some: objects with two referrers or more, and the odd ones. */
static bool keep_some(void *ctx, uint32_t i, uint32_t count)
{
	uint32_t *next = ctx;
	assert_int_equal(i, *next);	/* every object, in order */
	(*next)++;
	return count > 1 || (i & 1);
}

/* heap_incoming_some: heap_in's lists for the objects kept, empty ones for
 * the rest, on one thread or two. */
static void check_incoming_some_on(const struct heap *h, bool threads)
{
	uint32_t next = 0, *start, *in;
	uint64_t kept = heap_incoming_some(h, threads, keep_some, &next, &start, &in), sum = 0;
	assert_int_equal(next, h->n);
	for (uint32_t t = 0; t < h->n; t++) {
		uint32_t n, m = start[t + 1] - start[t];
		const uint32_t *all = heap_in(h, t, &n);
		if (n > 1 || (t & 1)) {
			assert_int_equal(m, n);
			assert_memory_equal(in + start[t], all, n * sizeof *all);
		} else {
			assert_int_equal(m, 0);
		}
		sum += m;
	}
	assert_true(sum == kept && kept < h->nrefs);
	big_free(start);
	big_free(in);
}

static void check_incoming_some(const struct heap *h)
{
	check_incoming_some_on(h, false);
	check_incoming_some_on(h, true);
}

/* check_incoming: heap_in is exactly the transpose of heap_out; so is
 * heap_incoming_some where it keeps a list. */
static void check_incoming(const struct heap *h)
{
	uint64_t nrefs = 0;
	uint32_t *want = calloc(h->nrefs + 1, sizeof *want);
	uint64_t *fill = calloc(h->n + 1, sizeof *fill);
	uint64_t *start = calloc(h->n + 2, sizeof *start);
	for (uint32_t i = 0; i < h->n; i++) {
		uint32_t n;
		const uint32_t *o = heap_out(h, i, &n);
		nrefs += n;
		for (uint32_t e = 0; e < n; e++)
			start[o[e] + 1]++;
	}
	assert_true(nrefs == h->nrefs);
	for (uint32_t i = 0; i < h->n; i++)
		start[i + 1] += start[i];
	for (uint32_t i = 0; i < h->n; i++) {
		uint32_t n;
		const uint32_t *o = heap_out(h, i, &n);
		for (uint32_t e = 0; e < n; e++)
			want[start[o[e]] + fill[o[e]]++] = i;
	}
	for (uint32_t t = 0; t < h->n; t++) {
		uint32_t n;
		const uint32_t *in = heap_in(h, t, &n);
		assert_int_equal(n, start[t + 1] - start[t]);
		uint32_t got[64];
		assert_true(n <= 64);
		memcpy(got, in, n * sizeof *in);
		qsort(got, n, sizeof *got, cmp_u32);
		qsort(want + start[t], n, sizeof *want, cmp_u32);
		assert_memory_equal(got, want + start[t], n * sizeof *got);
	}
	free(want);
	free(fill);
	free(start);
	check_incoming_some(h);
}

static void check_classes(const struct heap *h, const struct model *m, int header, int oop)
{
	/* Every CLASS DUMP once (Base's second LOAD CLASS adds none), plus the
	 * three primitive array classes the dump has no CLASS DUMP for. */
	assert_int_equal(h->nclasses, NCLASSES + 3);
	for (int k = 0; k < NCLASSES; k++) {
		uint32_t c = class_index(h, m, k);
		const struct heap_class *hc = &h->classes[c];
		assert_true(hc->id == oid(m, k));
		assert_int_equal(hc->obj, idx(h, m, k));
		assert_string_equal(hc->name, class_names[k].java);
		if (m->super[k] == NONE)
			assert_int_equal(hc->super, HEAP_NONE);
		else
			assert_int_equal(hc->super, class_index(h, m, m->super[k]));
	}
	assert_int_equal(h->class_class, class_index(h, m, K_CLASS));
	assert_int_equal(h->classes[class_index(h, m, K_DERIVED)].loader, idx(h, m, L1));
	assert_int_equal(h->classes[class_index(h, m, K_DUP1)].loader, idx(h, m, L1));
	assert_int_equal(h->classes[class_index(h, m, K_DUP2)].loader, idx(h, m, L2));
	assert_int_equal(h->classes[class_index(h, m, K_BASE)].loader, HEAP_NONE);
	assert_int_equal(h->classes[class_index(h, m, K_DERIVED)].nfields, 3);
	assert_int_equal(h->classes[class_index(h, m, K_DERIVED)].nstatics, 11);
	assert_int_equal(h->classes[class_index(h, m, K_BASE)].nstatics, 0);
	assert_int_equal(h->classes[class_index(h, m, K_BYTES)].elem_type, HPROF_BYTE);
	assert_int_equal(h->classes[class_index(h, m, K_INTS)].elem_type, HPROF_INT);
	assert_int_equal(h->classes[class_index(h, m, K_INTS2)].elem_type, HPROF_OBJECT);
	assert_int_equal(h->classes[class_index(h, m, K_OBJARR)].elem_type, HPROF_OBJECT);
	assert_int_equal(h->classes[class_index(h, m, K_STRING)].elem_type, 0);
	assert_int_equal(h->classes[heap_class_by_name(h, "char[]")].elem_type, HPROF_CHAR);
	assert_int_equal(h->classes[heap_class_by_name(h, "char[]")].obj, HEAP_NONE);
	assert_int_equal(h->classes[heap_class_by_name(h, "long[]")].elem_type, HPROF_LONG);
	assert_int_equal(h->classes[heap_class_by_name(h, "boolean[]")].elem_type,
			 HPROF_BOOLEAN);

	/* Instance sizes over the hierarchy, references of oop size. */
	assert_int_equal(h->classes[class_index(h, m, K_DERIVED)].inst_size,
			 align8((uint64_t)header + 13 + 3 * (uint64_t)oop));
	assert_int_equal(h->classes[class_index(h, m, K_BASE)].inst_size,
			 align8((uint64_t)header + 4 + 2 * (uint64_t)oop));
	assert_int_equal(h->classes[class_index(h, m, K_OBJECT)].inst_size, align8((uint64_t)header));
	/* HPROF's own field bytes count references at the id size. */
	assert_int_equal(h->classes[class_index(h, m, K_DERIVED)].hprof_size, 9 + m->ids);

	/* Same name, different loaders: two classes. */
	uint32_t *found = NULL;
	assert_int_equal(heap_find_classes(h, "com.example.Dup", &found), 2);
	assert_int_not_equal(found[0], found[1]);
	free(found);
	assert_int_equal(heap_find_classes(h, "com.example.Base", &found), 1);
	free(found);
	assert_int_equal(heap_find_classes(h, "int[]", &found), 1);
	free(found);

	/* Histogram: count and shallow bytes per class. */
	uint64_t count[NCLASSES + 8] = {0}, bytes[NCLASSES + 8] = {0};
	for (size_t k = 0; k < m->nobj; k++) {
		const struct xobj *x = &m->obj[k];
		uint32_t c = h->cls[idx(h, m, x->key)];
		assert_true(c < NCLASSES + 8);
		count[c]++;
		bytes[c] += want_size(x, m->ids, header, oop);
	}
	for (uint32_t c = 0; c < h->nclasses; c++) {
		assert_true(h->classes[c].count == count[c]);
		assert_true(h->classes[c].shallow == bytes[c]);
	}
	assert_int_equal(h->classes[class_index(h, m, K_DUP1)].count, 2);
	assert_int_equal(h->classes[class_index(h, m, K_DUP2)].count, 1);
	assert_int_equal(h->classes[class_index(h, m, K_DERIVED)].count, 2);
	assert_int_equal(h->classes[class_index(h, m, K_BASE)].count, 1);
	assert_int_equal(h->classes[h->class_class].count, NCLASSES);
	assert_int_equal(h->classes[class_index(h, m, K_BYTES)].count, 2);
	assert_int_equal(h->classes[class_index(h, m, K_BYTES)].shallow,
			 align8((uint64_t)header + 4 + 4) + align8((uint64_t)header + 4 + 5));
}

/* fields_each collects (declaring class, name, value) triples. */
struct field_seen {
	uint32_t decl[16];
	const char *name[16];
	struct heap_value v[16];
	int n;
};

static void collect_field(void *ctx, uint32_t decl_class, const struct heap_field *f,
			  struct heap_value v)
{
	struct field_seen *s = ctx;
	assert_true(s->n < 16);
	s->decl[s->n] = decl_class;
	s->name[s->n] = f->name;
	s->v[s->n++] = v;
}

static void check_fields(const struct heap *h, const struct model *m)
{
	struct heap_value v;
	uint32_t d1 = idx(h, m, D1);
	/* Derived.shared (long) shadows Base.shared (int): the nearest wins. */
	assert_true(heap_field(h, d1, "shared", &v));
	assert_int_equal(v.type, HPROF_LONG);
	assert_true(v.v.i == 0x1122334455667788LL);
	assert_true(heap_field(h, d1, "own", &v));
	assert_int_equal(v.type, HPROF_OBJECT);
	assert_true(v.v.id == oid(m, A1));
	assert_true(heap_field(h, d1, "flag", &v));
	assert_int_equal(v.type, HPROF_BOOLEAN);
	assert_int_equal(v.v.i, 1);
	/* Inherited from Base. */
	assert_true(heap_field(h, d1, "next", &v));
	assert_true(v.v.id == oid(m, D2));
	assert_true(heap_field(h, d1, "tag", &v));
	assert_true(v.v.id == oid(m, S_MAIN));
	uint32_t d2 = idx(h, m, D2);
	assert_true(heap_field(h, d2, "shared", &v));
	assert_true(v.v.i == -1);
	assert_true(heap_field(h, d2, "own", &v));
	assert_true(v.v.id == 0);
	assert_true(heap_field(h, d2, "next", &v));
	assert_true(v.v.id == oid(m, GHOST1));	/* the raw value, dangling or not */
	assert_true(heap_field(h, idx(h, m, BASE1), "shared", &v));
	assert_int_equal(v.type, HPROF_INT);
	assert_int_equal(v.v.i, 99);
	assert_true(heap_field(h, idx(h, m, T1), "tid", &v));
	assert_int_equal(v.type, HPROF_LONG);
	assert_int_equal(v.v.i, 1);
	assert_false(heap_field(h, d1, "nosuchfield", &v));
	assert_false(heap_field(h, idx(h, m, A1), "shared", &v));
	assert_false(heap_field(h, idx(h, m, K_DERIVED), "COUNT", &v));

	struct field_seen s;
	memset(&s, 0, sizeof s);
	heap_fields_each(h, d1, collect_field, &s);
	assert_int_equal(s.n, 6);
	static const char *const names[] = {"shared", "own", "flag", "shared", "next", "tag"};
	for (int k = 0; k < 6; k++) {
		assert_string_equal(s.name[k], names[k]);
		assert_int_equal(s.decl[k], class_index(h, m, k < 3 ? K_DERIVED : K_BASE));
	}
	assert_int_equal(s.v[3].type, HPROF_INT);
	assert_int_equal(s.v[3].v.i, 7);

	/* Statics of several types. */
	uint32_t c = class_index(h, m, K_DERIVED);
	assert_true(heap_static(h, c, "INSTANCE", &v));
	assert_int_equal(v.type, HPROF_OBJECT);
	assert_true(v.v.id == oid(m, D1));
	assert_true(heap_static(h, c, "COUNT", &v));
	assert_int_equal(v.type, HPROF_INT);
	assert_int_equal(v.v.i, 42);
	assert_true(heap_static(h, c, "BIG", &v));
	assert_int_equal(v.type, HPROF_LONG);
	assert_true(v.v.i == -7);
	assert_true(heap_static(h, c, "RATIO", &v));
	assert_int_equal(v.type, HPROF_DOUBLE);
	assert_true(v.v.d == 1.5);
	assert_true(heap_static(h, c, "F", &v));
	assert_int_equal(v.type, HPROF_FLOAT);
	assert_true(v.v.d == 0.25);
	assert_true(heap_static(h, c, "C", &v));
	assert_int_equal(v.type, HPROF_CHAR);
	assert_int_equal(v.v.i, 'x');
	assert_true(heap_static(h, c, "S", &v));
	assert_int_equal(v.type, HPROF_SHORT);
	assert_true(v.v.i == -2);
	assert_true(heap_static(h, c, "B", &v));
	assert_int_equal(v.type, HPROF_BYTE);
	assert_true(v.v.i == -3);
	assert_true(heap_static(h, c, "Z", &v));
	assert_int_equal(v.type, HPROF_BOOLEAN);
	assert_int_equal(v.v.i, 1);
	assert_true(heap_static(h, c, "NOTHING", &v));
	assert_true(v.v.id == 0);
	assert_false(heap_static(h, c, "shared", &v));
	assert_false(heap_static(h, class_index(h, m, K_BASE), "COUNT", &v));

	/* Array elements. */
	v = heap_array_elem(h, idx(h, m, IA), 1);
	assert_int_equal(v.type, HPROF_INT);
	assert_true(v.v.i == -2);
	v = heap_array_elem(h, idx(h, m, A1), 3);
	assert_int_equal(v.type, HPROF_OBJECT);
	assert_true(v.v.id == oid(m, GHOST2));
	v = heap_array_elem(h, idx(h, m, A1), 5);
	assert_int_equal(v.type, 0);
	v = heap_array_elem(h, idx(h, m, LA), 1);
	assert_true(v.v.i == -6);
	assert_int_equal(heap_array_length(h, idx(h, m, IE)), 0);
	assert_int_equal(heap_array_length(h, d1), 0);
}

/* refs_seen collects what heap_refs reports. */
struct refs_seen {
	struct heap_ref r[16];
	int n;
	int stop_after;		/* return false after this many; 0 = never */
};

static bool collect_ref(void *ctx, const struct heap_ref *r)
{
	struct refs_seen *s = ctx;
	assert_true(s->n < 16);
	s->r[s->n++] = *r;
	return !(s->stop_after && s->n >= s->stop_after);
}

static void expect_ref(const struct refs_seen *s, int k, enum heap_ref_kind kind,
		       const char *name, uint32_t index, uint32_t target)
{
	assert_true(k < s->n);
	assert_int_equal(s->r[k].kind, kind);
	if (name)
		assert_string_equal(s->r[k].name, name);
	else
		assert_null(s->r[k].name);
	assert_int_equal(s->r[k].index, index);
	assert_int_equal(s->r[k].target, target);
}

static void check_refs(const struct heap *h, const struct model *m)
{
	/* heap_refs follows heap_out exactly, for every object. */
	for (uint32_t i = 0; i < h->n; i++) {
		struct refs_seen s;
		memset(&s, 0, sizeof s);
		heap_refs(h, i, collect_ref, &s);
		uint32_t n;
		const uint32_t *o = heap_out(h, i, &n);
		assert_int_equal((uint32_t)s.n, n);
		for (int k = 0; k < s.n; k++)
			assert_int_equal(s.r[k].target, o[k]);
	}
	struct refs_seen s;
	memset(&s, 0, sizeof s);
	heap_refs(h, idx(h, m, D1), collect_ref, &s);
	assert_int_equal(s.n, 3);
	expect_ref(&s, 0, HEAP_REF_FIELD, "own", 0, idx(h, m, A1));
	expect_ref(&s, 1, HEAP_REF_FIELD, "next", 0, idx(h, m, D2));
	expect_ref(&s, 2, HEAP_REF_FIELD, "tag", 0, idx(h, m, S_MAIN));

	memset(&s, 0, sizeof s);
	heap_refs(h, idx(h, m, A1), collect_ref, &s);
	assert_int_equal(s.n, 3);
	expect_ref(&s, 0, HEAP_REF_ELEMENT, NULL, 0, idx(h, m, D2));
	expect_ref(&s, 1, HEAP_REF_ELEMENT, NULL, 2, idx(h, m, S_MAIN));
	expect_ref(&s, 2, HEAP_REF_ELEMENT, NULL, 4, idx(h, m, D1));

	memset(&s, 0, sizeof s);
	heap_refs(h, idx(h, m, K_DERIVED), collect_ref, &s);
	assert_int_equal(s.n, 4);
	expect_ref(&s, 0, HEAP_REF_SUPER, "<super>", 0, idx(h, m, K_BASE));
	expect_ref(&s, 1, HEAP_REF_LOADER, "<classloader>", 0, idx(h, m, L1));
	expect_ref(&s, 2, HEAP_REF_STATIC, "INSTANCE", 0, idx(h, m, D1));
	assert_int_equal(s.r[3].kind, HEAP_REF_CONSTANT);
	assert_int_equal(s.r[3].index, 3);
	assert_int_equal(s.r[3].target, idx(h, m, S_MAIN));

	memset(&s, 0, sizeof s);
	heap_refs(h, idx(h, m, K_THREAD), collect_ref, &s);
	assert_int_equal(s.n, 2);
	expect_ref(&s, 0, HEAP_REF_SUPER, "<super>", 0, idx(h, m, K_OBJECT));
	assert_int_equal(s.r[1].kind, HEAP_REF_DOMAIN);
	assert_int_equal(s.r[1].target, idx(h, m, BASE1));

	memset(&s, 0, sizeof s);
	heap_refs(h, idx(h, m, K_LOADER), collect_ref, &s);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.r[1].kind, HEAP_REF_SIGNERS);
	assert_int_equal(s.r[1].target, idx(h, m, IA));

	/* The callback can stop the walk. */
	memset(&s, 0, sizeof s);
	s.stop_after = 1;
	heap_refs(h, idx(h, m, D1), collect_ref, &s);
	assert_int_equal(s.n, 1);

	/* Specific incoming references, as a set. */
	uint32_t n;
	const uint32_t *in = heap_in(h, idx(h, m, S_MAIN), &n);
	uint32_t want[] = {idx(h, m, T1), idx(h, m, D1), idx(h, m, A1), idx(h, m, K_DERIVED)};
	qsort(want, 4, sizeof *want, cmp_u32);
	assert_int_equal(n, 4);
	assert_memory_equal(in, want, sizeof want);	/* ascending per object */
	heap_in(h, idx(h, m, T1), &n);
	assert_int_equal(n, 0);
}

static void check_roots_threads(const struct heap *h, const struct model *m)
{
	static const struct {
		int key;
		uint8_t kind;
		bool thread;
		int32_t frame;
	} want[] = {
		{BASE1, HPROF_GC_ROOT_UNKNOWN, false, -1},
		{D1, HPROF_GC_ROOT_JNI_GLOBAL, false, -1},
		{D2, HPROF_GC_ROOT_JNI_LOCAL, true, 0},
		{A1, HPROF_GC_ROOT_JAVA_FRAME, true, 1},
		{S_MAIN, HPROF_GC_ROOT_NATIVE_STACK, true, -1},
		{K_STRING, HPROF_GC_ROOT_STICKY_CLASS, false, -1},
		{L1, HPROF_GC_ROOT_THREAD_BLOCK, true, -1},
		{L2, HPROF_GC_ROOT_MONITOR_USED, false, -1},
		{T1, HPROF_GC_ROOT_THREAD_OBJ, true, -1},
		/* GHOST3's root is dropped */
		{IA, HPROF_GC_ROOT_JAVA_FRAME, false, 0},	/* thread serial 99: none */
	};
	assert_int_equal(h->nroots, sizeof want / sizeof *want);
	assert_int_equal(h->dangling_roots, 1);
	for (size_t k = 0; k < h->nroots; k++) {
		assert_int_equal(h->roots[k].obj, idx(h, m, want[k].key));
		assert_int_equal(h->roots[k].kind, want[k].kind);
		assert_int_equal(h->roots[k].thread, want[k].thread ? 0 : HEAP_NONE);
		assert_int_equal(h->roots[k].frame, want[k].frame);
	}

	assert_int_equal(h->nthreads, 1);
	const struct heap_thread *t = &h->threads[0];
	assert_int_equal(t->obj, idx(h, m, T1));
	assert_int_equal(t->serial, THREAD_SERIAL);
	char *name = heap_thread_name(h, 0);
	assert_non_null(name);
	assert_string_equal(name, "main");
	free(name);

	assert_int_equal(h->nframes, 3);
	assert_int_equal(t->nframes, 3);
	const struct heap_frame *f = &h->frames[t->frames[0]];
	assert_true(f->id == fid(m, 1));
	assert_string_equal(f->method, "run");
	assert_string_equal(f->signature, "()V");
	assert_string_equal(f->source, "Base.java");
	assert_string_equal(f->class_name, "com.example.Base");	/* via the 2nd LOAD CLASS */
	assert_int_equal(f->line, 42);
	f = &h->frames[t->frames[1]];
	assert_string_equal(f->method, "main");
	assert_string_equal(f->signature, "([Ljava/lang/String;)V");
	assert_string_equal(f->class_name, "com.example.Derived");
	assert_int_equal(f->line, -3);
	f = &h->frames[t->frames[2]];
	assert_string_equal(f->method, "<init>");
	assert_string_equal(f->class_name, "?");	/* unknown class serial */
	assert_int_equal(f->line, -1);
}

static void check_strings(const struct heap *h, const struct model *m)
{
	char *s = heap_string(h, idx(h, m, S_MAIN), 0);
	assert_non_null(s);
	assert_string_equal(s, "main");
	free(s);
	s = heap_string(h, idx(h, m, S_LAT), 0);
	assert_non_null(s);
	assert_string_equal(s, "Gr\xC3\xBC\xC3\x9F" "e");	/* Latin-1 to UTF-8 */
	free(s);
	s = heap_string(h, idx(h, m, S_LAT), 3);
	assert_non_null(s);
	assert_string_equal(s, "Gr\xC3\xBC...");
	free(s);
	assert_null(heap_string(h, idx(h, m, D1), 0));
	assert_null(heap_string(h, idx(h, m, B_MAIN), 0));
}

/* check_model: everything about one load of the model dump. */
static void check_model(const struct heap *h, const struct model *m, int oop)
{
	int header = m->ids + oop;
	assert_int_equal(h->oop_size, oop);
	assert_int_equal(h->header_size, header);
	assert_true(h->hp->timestamp_ms == TIMESTAMP);
	assert_false(h->damaged);
	assert_int_equal(h->lost_bytes, 0);
	assert_int_equal(h->duplicate_ids, 1);
	/* D2.next, A1[3] and Derived.LOST point at ids with no record. */
	assert_int_equal(h->dangling_refs, 3);
	assert_int_equal(h->unknown_class_objs, 0);
	check_index(h, m);
	check_objects(h, m, header, oop);
	assert_null(h->in);	/* the loader leaves referrers to the first heap_in */
	check_incoming(h);
	check_classes(h, m, header, oop);
	check_fields(h, m);
	check_refs(h, m);
	check_roots_threads(h, m);
	check_strings(h, m);
}

static void test_model_id4(void **state)
{
	(void)state;
	struct model m;
	build_model(&m, 4);
	struct heap *h = load_ok(m.w.path, NULL);
	assert_false(h->oop_size_forced);
	check_model(h, &m, 4);
	heap_free(h);
	free_model(&m);
}

static void test_model_id8(void **state)
{
	(void)state;
	struct model m;
	build_model(&m, 8);
	/* No hint in the dump: 8-byte ids mean 8-byte references. */
	struct heap *h = load_ok(m.w.path, NULL);
	assert_false(h->oop_size_forced);
	check_model(h, &m, 8);
	heap_free(h);
	struct heap_load_opts opts = {0, NULL, NULL, 0, NULL, 0};
	h = load_ok(m.w.path, &opts);
	check_model(h, &m, 8);
	heap_free(h);
	free_model(&m);
}

static void test_model_id8_oops4(void **state)
{
	(void)state;
	struct model m;
	build_model(&m, 8);
	struct heap_load_opts opts = {4, NULL, NULL, 0, NULL, 0};
	struct heap *h = load_ok(m.w.path, &opts);
	assert_true(h->oop_size_forced);
	check_model(h, &m, 4);
	heap_free(h);
	free_model(&m);
}

static void progress_cb(void *ctx, double fraction)
{
	double *last = ctx;
	assert_true(fraction >= *last);
	assert_true(fraction <= 1.0);
	*last = fraction;
}

static void test_model_gzip(void **state)
{
	(void)state;
	struct model m;
	build_model(&m, 8);
	hw_save_gz(&m.w, 100);
	double last = 0;
	struct heap_load_opts opts = {0, progress_cb, &last, 0, NULL, 0};
	struct heap *h = load_ok(m.w.path, &opts);
	assert_true(h->hp->gzip);
	assert_true(last == 1.0);
	check_model(h, &m, 8);
	heap_free(h);
	free_model(&m);
}

/* ---- the model in the index (heap_model_save, heap_model_load) ---- */

/* A saved model: its parts one after another, as the index file holds them. */
struct saved {
	uint8_t *b;
	uint64_t len;
	struct heap_model m;
};

static void save(const struct heap *h, struct saved *sv)
{
	assert_int_equal(heap_model_save(h, &sv->m), HS_OK);
	sv->b = malloc(sv->m.len);
	uint64_t at = 0;
	for (int k = 0; k < sv->m.nparts; k++) {
		memcpy(sv->b + at, sv->m.parts[k].data, sv->m.parts[k].len);
		at += sv->m.parts[k].len;
	}
	assert_true(at == sv->m.len);
	sv->len = at;
}

/* at: where part data is in the saved bytes. */
static uint64_t at(const struct saved *sv, const void *data)
{
	uint64_t off = 0;
	for (int k = 0; k < sv->m.nparts; k++) {
		if (sv->m.parts[k].data == data)
			return off;
		off += sv->m.parts[k].len;
	}
	fail_msg("no such part");
	return 0;
}

/* map_copy: len bytes of b in a read-only mapping of their own (of at
 * least one byte), as the index gives a section. */
static uint8_t *map_copy(const uint8_t *b, uint64_t len)
{
	size_t maplen = len ? (size_t)len : 1;
	uint8_t *map = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		fail_msg("mmap of %zu bytes: %s", maplen, strerror(errno));
	memcpy(map, b, len);
	assert_int_equal(mprotect(map, maplen, PROT_READ), 0);	/* not to be written */
	return map;
}

/* model_load_as: load bytes b (len) as the model of the dump at path, from
 * a mapping of its own as the index gives it, trusted or checked; NULL (and
 * *why) if refused. model_load: checked. */
static struct heap *model_load_as(const char *path, const struct heap_load_opts *opts,
				  const uint8_t *b, uint64_t len, bool trusted, const char **why)
{
	size_t maplen = len ? (size_t)len : 1;
	uint8_t *map = map_copy(b, len);
	struct heap_model_src src = {map, len, map, maplen, trusted};
	struct heap *h = NULL;
	*why = NULL;
	if (heap_model_load(path, opts, &src, &h, why) != HS_OK) {
		assert_null(h);
		assert_non_null(*why);
		munmap(map, maplen);
		return NULL;
	}
	assert_ptr_equal(h->model_map, map);
	return h;
}

static struct heap *model_load(const char *path, const struct heap_load_opts *opts,
			       const uint8_t *b, uint64_t len, const char **why)
{
	return model_load_as(path, opts, b, len, false, why);
}

/* The model mapped back is the model read from the dump, to every check. */
static void test_model_saved(void **state)
{
	(void)state;
	for (int ids = 4; ids <= 8; ids += 4) {
		struct model m;
		build_model(&m, ids);
		struct heap *h = load_ok(m.w.path, NULL);
		struct saved sv;
		save(h, &sv);
		const char *why;
		struct heap *h2 = model_load(m.w.path, NULL, sv.b, sv.len, &why);
		if (!h2)
			fail_msg("model refused: %s", why);
		check_model(h2, &m, ids);
		assert_int_equal(h2->n, h->n);
		assert_true(h2->nrefs == h->nrefs);
		assert_true(h2->total_shallow == h->total_shallow);
		assert_string_equal(h2->oop_source, h->oop_source);
		for (uint32_t i = 0; i < h->n; i++) {
			assert_true(heap_id(h2, i) == heap_id(h, i));
			assert_true(heap_pos(h2, i) == heap_pos(h, i));
			assert_int_equal(heap_index(h2, heap_id(h, i)), i);
		}
		/* trusted (idx_trusted: checked before, unchanged since): the same
		 * heap, with no id read until lookups need them: binary searches
		 * at first, then the directory, with the same answers */
		struct heap *h3 = model_load_as(m.w.path, NULL, sv.b, sv.len, true, &why);
		if (!h3)
			fail_msg("trusted model refused: %s", why);
		assert_null(h3->chunks);
		check_model(h3, &m, ids);
		for (int round = 0; round < 2; round++)
			for (uint32_t i = 0; i < h->n; i++) {
				assert_true(heap_pos(h3, i) == heap_pos(h, i));
				assert_int_equal(heap_index(h3, heap_id(h, i)), i);
				assert_int_equal(heap_index(h3, heap_id(h, i) + 1), HEAP_NONE);
				assert_int_equal(heap_index(h3, heap_id(h, i) - 1),
						 heap_index(h, heap_id(h, i) - 1));
			}
		assert_non_null(h3->chunks);	/* 4n lookups: built by now */
		assert_true(h3->id_min == h->id_min && h3->id_max == h->id_max);
		heap_free(h3);
		/* a model saved from a mapped model is the same bytes */
		struct saved again;
		save(h2, &again);
		assert_true(again.len == sv.len);
		assert_memory_equal(again.b, sv.b, sv.len);
		heap_model_save_free(&again.m);
		free(again.b);
		heap_free(h2);
		/* made with other options: refused, not misread */
		struct heap_load_opts oops4 = {4, NULL, NULL, 0, NULL, 0};
		assert_null(model_load(m.w.path, &oops4, sv.b, sv.len, &why));
		assert_string_equal(why, "made with other options (--oops, --layout, --dump)");
		heap_model_save_free(&sv.m);
		free(sv.b);
		heap_free(h);
		free_model(&m);
	}
}

/*
 * heap_model_adopt: the heap loaded from the dump uses the section saved
 * of it where it lies, with every answer the same; a section of another
 * shape is refused and changes nothing, and a heap adopts once.
 */
static void test_model_adopt(void **state)
{
	(void)state;
	for (int ids = 4; ids <= 8; ids += 4) {
		struct model m;
		build_model(&m, ids);
		struct heap *h = load_ok(m.w.path, NULL), *ref = load_ok(m.w.path, NULL);
		struct saved sv;
		save(h, &sv);
		uint32_t *cls0 = h->cls;
		/* cut inside its arrays, or of another heap (n differs): refused,
		 * nothing changed */
		uint64_t cutlen = at(&sv, h->inst) + 4;
		uint8_t *cut = map_copy(sv.b, cutlen);
		struct heap_model_src src = {cut, cutlen, cut, cutlen, false};
		assert_int_equal(heap_model_adopt(h, &src), HS_ERR);
		munmap(cut, cutlen);
		uint8_t *other = malloc(sv.len);
		memcpy(other, sv.b, sv.len);
		other[32] ^= 1;	/* struct mhdr: n after magic, version, id size, dump size, nrefs */
		uint8_t *map = map_copy(other, sv.len);
		src = (struct heap_model_src){map, sv.len, map, sv.len, false};
		assert_int_equal(heap_model_adopt(h, &src), HS_ERR);
		munmap(map, sv.len);
		free(other);
		assert_ptr_equal(h->cls, cls0);
		assert_null(h->model_map);

		map = map_copy(sv.b, sv.len);
		src = (struct heap_model_src){map, sv.len, map, sv.len, false};
		assert_int_equal(heap_model_adopt(h, &src), HS_OK);
		assert_ptr_equal(h->model_map, map);
		assert_true((uint8_t *)h->cls > map && (uint8_t *)h->cls < map + sv.len);
		assert_int_equal(heap_model_adopt(h, &src), HS_ERR);	/* once */
		check_model(h, &m, ids);
		for (uint32_t i = 0; i < h->n; i++) {
			uint32_t n1, n2;
			const uint32_t *o1 = heap_out(h, i, &n1), *o2 = heap_out(ref, i, &n2);
			assert_int_equal(n1, n2);
			assert_memory_equal(o1, o2, n1 * sizeof *o1);
			assert_int_equal(h->cls[i], ref->cls[i]);
			assert_true(heap_shallow(h, i) == heap_shallow(ref, i));
			assert_true(heap_pos(h, i) == heap_pos(ref, i));
			assert_true(heap_id(h, i) == heap_id(ref, i));
		}
		for (uint32_t c = 0; c < h->nclasses; c++) {
			uint32_t n1, n2;
			const uint32_t *a = heap_instances(h, c, &n1), *b = heap_instances(ref, c, &n2);
			assert_int_equal(n1, n2);
			assert_memory_equal(a, b, n1 * sizeof *a);
		}
		heap_model_save_free(&sv.m);
		free(sv.b);
		heap_free(h);	/* unmaps */
		heap_free(ref);
		free_model(&m);
	}
}

/* A hostile or damaged model is refused with a reason, never used. */
static void test_model_refused(void **state)
{
	(void)state;
	struct model m;
	build_model(&m, 8);
	struct heap *h = load_ok(m.w.path, NULL);
	struct saved sv;
	save(h, &sv);
	uint8_t *b = malloc(sv.len);
	const char *why;
	uint32_t v32;
	struct {
		const char *what, *why;
		const void *part;	/* the array changed */
		uint64_t elem;		/* its element */
		int size;		/* 2 or 4 bytes */
		uint32_t value;
	} cases[] = {
		{"a reference out of range", "a reference's target is out of range", h->out, 0, 4,
		 h->n},
		{"a class out of range", "the objects by class are not the classes' objects",
		 h->cls, 1, 4, h->nclasses},
		{"an object in another class's list", "the objects by class are not the classes' objects",
		 h->inst, 0, 4, h->inst[1]},
		{"references' offsets falling", "the references' offsets fall", h->out_start, 1, 4,
		 UINT32_MAX - 1},
		{"a record offset past the dump", "a record offset is outside the dump", h->pos_lo,
		 3, 4, (uint32_t)h->hp->size},
		{"a record offset inside a record", NULL, h->pos_lo, 5, 4, h->pos_lo[5] + 1},
		{"two records swapped", NULL, h->pos_lo, 6, 4, h->pos_lo[7]},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		memcpy(b, sv.b, sv.len);
		uint64_t off = at(&sv, cases[k].part) + cases[k].elem * (uint64_t)cases[k].size;
		if (cases[k].size == 4) {
			v32 = cases[k].value;
			memcpy(b + off, &v32, 4);
		}
		assert_null(model_load(m.w.path, NULL, b, sv.len, &why));
		if (cases[k].why && strcmp(why, cases[k].why))
			fail_msg("%s: refused for \"%s\", not \"%s\"", cases[k].what, why,
				 cases[k].why);
	}
	/* cut short anywhere: refused or loaded, never a crash */
	for (uint64_t len = 0; len < sv.len; len += 1 + len / 16) {
		struct heap *h2 = model_load(m.w.path, NULL, sv.b, len, &why);
		assert_null(h2);
	}
	/* strings that do not end */
	memcpy(b, sv.b, sv.len);
	b[sv.len - 1] = 'x';
	assert_null(model_load(m.w.path, NULL, b, sv.len, &why));
	/* a model of another dump (its size differs) */
	memcpy(b, sv.b, sv.len);
	b[16] ^= 1;	/* struct mhdr: dump_size after magic, version, id size */
	assert_null(model_load(m.w.path, NULL, b, sv.len, &why));
	assert_string_equal(why, "it does not fit the dump");
	free(b);
	heap_model_save_free(&sv.m);
	free(sv.b);
	heap_free(h);
	free_model(&m);
}

/* ---- id lookup on many ids ---- */

static uint64_t rng_next(uint64_t *s)
{
	/* xorshift64*: deterministic, good enough to scatter ids. */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/*
 * check_many_ids: n empty int[] objects at the given ids (written in a
 * shuffled order; with halves, the first half of want shuffled in the first
 * half of the file and the second in the second); every id maps to its
 * rank, and the ids around each one are absent.
 */
static void check_ids_written(int ids, uint64_t *want, size_t n, uint64_t seed, bool halves)
{
	struct hw w;
	hw_init(&w, ids, 2, 0);
	hw_dump_begin(&w, HPROF_HEAP_DUMP_SEGMENT);
	size_t *order = malloc(n * sizeof *order);
	for (size_t k = 0; k < n; k++)
		order[k] = k;
	for (size_t k = n - 1; k > 0; k--) {
		size_t from = halves && k >= n / 2 ? n / 2 : 0;
		size_t j = from + (size_t)(rng_next(&seed) % (k + 1 - from)), t = order[k];
		order[k] = order[j];
		order[j] = t;
	}
	for (size_t k = 0; k < n; k++)
		hw_prim_array(&w, want[order[k]], HPROF_INT, 0, "");
	hw_dump_end(&w);
	free(order);
	struct heap *h = load_ok(hw_save(&w), NULL);
	qsort(want, n, sizeof *want, cmp_u64);
	assert_int_equal(h->n, n);
	for (size_t k = 0; k < n; k++) {
		if (heap_index(h, want[k]) != k)
			fail_msg("id 0x%llx: index %u, want %zu", (unsigned long long)want[k],
				 heap_index(h, want[k]), k);
		assert_true(heap_id(h, (uint32_t)k) == want[k]);
		if (want[k] > 0 && (k == 0 || want[k - 1] != want[k] - 1))
			assert_int_equal(heap_index(h, want[k] - 1), HEAP_NONE);
		if (want[k] < UINT64_MAX && (k + 1 == n || want[k + 1] != want[k] + 1))
			assert_int_equal(heap_index(h, want[k] + 1), HEAP_NONE);
		if (k + 1 < n && want[k + 1] - want[k] > 2)
			assert_int_equal(heap_index(h, want[k] + (want[k + 1] - want[k]) / 2),
					 HEAP_NONE);
	}
	if (want[0] > 1)
		assert_int_equal(heap_index(h, 1), HEAP_NONE);
	if (want[n - 1] < UINT64_MAX)
		assert_int_equal(heap_index(h, UINT64_MAX), HEAP_NONE);
	heap_free(h);
	hw_free(&w);
}

static void check_many_ids(int ids, uint64_t *want, size_t n, uint64_t seed)
{
	check_ids_written(ids, want, n, seed, false);
}

/*
 * sort_packed's halves: each half of the file's records is keyed and sorted
 * on its own, merged only when the halves overlap, and laid out in halves;
 * of two records with one id the first in the file stays, wherever the two
 * fall. The arrays' lengths tell the records apart.
 */
static void test_sort_halves(void **state)
{
	(void)state;
	enum { N = 1000, MID = N / 2 };
	static const uint32_t zero[4];
	for (int shape = 0; shape < 4; shape++) {
		struct hw w;
		hw_init(&w, 8, 2, 0);
		hw_dump_begin(&w, HPROF_HEAP_DUMP_SEGMENT);
		uint64_t base = 0x7C0000000ULL;
		size_t dups = 0;
		for (size_t k = 0; k < N; k++) {
			/* 0: in order; 1: each half in order, the second's ids first;
			 * 2: in order, with repeated ids in each half and across the middle;
			 * 3: in order, one id repeated across the middle alone */
			size_t rank = shape == 1 ? (k < MID ? k + MID : k - MID) : k;
			uint32_t len = 1;
			if ((shape == 2 && (k == 100 || k == MID || k == MID + 200)) ||
			    (shape == 3 && k == MID)) {
				rank = k - 1;	/* the id of the record before */
				len = 2;
				dups++;
			}
			hw_prim_array(&w, base + 8 * rank, HPROF_INT, len, zero);
		}
		hw_dump_end(&w);
		struct heap *h = load_ok(hw_save(&w), NULL);
		assert_int_equal(h->duplicate_ids, dups);
		for (size_t r = 0; r < N; r++) {
			uint32_t i = heap_index(h, base + 8 * r);
			bool absent = (shape == 2 && (r == 100 || r == MID || r == MID + 200)) ||
				      (shape == 3 && r == MID);
			if (absent) {
				assert_int_equal(i, HEAP_NONE);
				continue;
			}
			assert_int_not_equal(i, HEAP_NONE);
			assert_true(heap_id(h, i) == base + 8 * r);
			assert_int_equal(heap_array_length(h, i), 1);	/* the first record */
		}
		heap_free(h);
		hw_free(&w);
	}
}

/*
 * Natural merging (heap_sort.c, merge_keys): a prefix of scattered ids (the
 * class objects of a HotSpot dump: short runs, pooled) and then long
 * ascending runs whose ranges interleave, as regions or dumping threads
 * give them; some prefix ids come again in the runs, where the prefix's
 * record (the first in the file) must stay. Sizes on both sides of the
 * two-thread cut (100,000 records), and with more long runs than are
 * merged (RUNS_MAX: the radix sort instead).
 */
static void check_runs(size_t nruns, size_t per_run, size_t nprefix)
{
	static const uint32_t zero[4];
	size_t n = nruns * per_run;	/* distinct ids: base + 8 * rank */
	uint64_t base = 0x7C0000000ULL, seed = 0x5EED + n;
	struct hw w;
	hw_init(&w, 8, 2, 0);
	hw_dump_begin(&w, HPROF_HEAP_DUMP_SEGMENT);
	uint8_t *in_prefix = calloc(n, 1);
	for (size_t k = 0; k < nprefix; k++) {	/* scattered, some twice in it */
		size_t rank = (size_t)(rng_next(&seed) % n);
		hw_prim_array(&w, base + 8 * rank, HPROF_INT, in_prefix[rank] ? 3 : 1, zero);
		in_prefix[rank] = 1;
	}
	for (size_t r = 0; r < nruns; r++)	/* run r: ranks r, r + nruns, ... */
		for (size_t j = 0; j < per_run; j++)
			hw_prim_array(&w, base + 8 * (j * nruns + r), HPROF_INT, 2, zero);
	hw_dump_end(&w);
	struct heap *h = load_ok(hw_save(&w), NULL);
	assert_int_equal(h->n, n);
	size_t dups = nprefix;	/* every prefix record repeats an id after it, or before */
	assert_int_equal(h->duplicate_ids, dups);
	for (size_t rank = 0; rank < n; rank++) {
		uint32_t i = heap_index(h, base + 8 * rank);
		if (i != rank)
			fail_msg("%zu runs of %zu: rank %zu at index %u", nruns, per_run, rank, i);
		/* the first record of the id in the file: the prefix's, else the run's */
		assert_int_equal(heap_array_length(h, i), in_prefix[rank] ? 1 : 2);
	}
	free(in_prefix);
	heap_free(h);
	hw_free(&w);
}

static void test_sort_runs(void **state)
{
	(void)state;
	check_runs(4, 40000, 500);	/* 160,000 records: two threads merge */
	check_runs(3, 6000, 300);	/* one thread */
	check_runs(1, 150000, 2000);	/* one long run and the pool */
	check_runs(40, 3000, 100);	/* past RUNS_MAX: radix sorted */
	check_runs(5, 30000, 0);	/* long runs only */
}

static void test_index_many_ids(void **state)
{
	(void)state;
	enum { N = 6000 };
	uint64_t *want = malloc(N * sizeof *want);
	for (int ids = 4; ids <= 8; ids += 4) {
		uint64_t seed = 0x9E3779B97F4A7C15ULL + (uint64_t)ids;
		/* Dense runs, sparse stretches and far-apart clusters, as heaps have. */
		uint64_t id = ids == 8 ? 0x00000007C0000000ULL : 0x10000000u;
		for (size_t k = 0; k < N; k++) {
			uint64_t r = rng_next(&seed);
			if (k == N / 2)
				id += ids == 8 ? 0x0000100000000000ULL : 0x40000000u;
			else if (r % 100 < 60)
				id += 0x10;
			else if (r % 100 < 95)
				id += 0x10 + ((r >> 8) % 64) * 8;
			else
				id += ((r >> 8) % 100000) * 8 + 8;
			want[k] = id;
		}
		check_many_ids(ids, want, N, seed);
		/* Consecutive ids, step 1. */
		for (size_t k = 0; k < N; k++)
			want[k] = 0x1000 + k;
		check_many_ids(ids, want, N, seed);
	}
	/* The ends of the 8-byte id space. */
	uint64_t ends[] = {1, 2, 0x100, 0x8000000000000000ULL, UINT64_MAX - 0x100,
			   UINT64_MAX - 1, UINT64_MAX};
	check_many_ids(8, ends, sizeof ends / sizeof *ends, 7);
	uint64_t ends4[] = {1, 0x18, 0x7FFFFFF8u, 0xFFFFFFF0u, 0xFFFFFFFFu};
	check_many_ids(4, ends4, sizeof ends4 / sizeof *ends4, 7);
	/* The file's first half close together, its second spread wide: the
	 * loader's two half sorts take different numbers of radix passes. */
	uint64_t seed = 11;
	for (size_t k = 0; k < N / 2; k++)
		want[k] = 0x100000 + 8 * k;
	for (size_t k = N / 2; k < N; k++)
		want[k] = want[k - 1] + 8 * (1 + rng_next(&seed) % 100000);
	check_ids_written(8, want, N, seed, true);
	free(want);
}

/* ---- damage and files with nothing to load ---- */

static void test_truncated_segment(void **state)
{
	(void)state;
	for (int ids = 4; ids <= 8; ids += 4) {
		struct model m;
		build_model(&m, ids);
		/* Cut in the middle of the sixth object of the second segment. */
		const struct xobj *cut = NULL;
		int nth = 0;
		for (size_t k = 0; k < m.nobj && !cut; k++)
			if (m.obj[k].seg == 1 && ++nth == 6)
				cut = &m.obj[k];
		assert_non_null(cut);
		size_t cut_off = m.seg_body[1] + cut->at;
		size_t file_size = cut_off + (cut->end - cut->at) / 2;
		hw_save_prefix(&m.w, file_size);
		struct heap *h = load_ok(m.w.path, NULL);
		assert_true(h->damaged);
		assert_non_null(strstr(h->damage, "truncated"));
		/* At least what is missing from the file, at most all from the cut object on. */
		assert_true(h->lost_bytes >= m.seg_end[1] - file_size);
		assert_true(h->lost_bytes <= m.seg_end[1] - cut_off);
		uint32_t present = 0;
		for (size_t k = 0; k < m.nobj; k++) {
			const struct xobj *x = &m.obj[k];
			bool whole = x->seg == 0 || m.seg_body[1] + x->end <= cut_off;
			uint32_t i = heap_index(h, oid(&m, x->key));
			if (whole) {
				assert_int_not_equal(i, HEAP_NONE);
				assert_int_equal(heap_kind(h, i), x->kind);
				present++;
			} else {
				assert_int_equal(i, HEAP_NONE);
			}
		}
		assert_int_equal(h->n, present);
		assert_int_equal(present, NCLASSES + 5);
		/* The objects that were read are whole: D1 is first in the segment. */
		struct heap_value v;
		assert_true(heap_field(h, heap_index(h, oid(&m, D1)), "shared", &v));
		assert_true(v.v.i == 0x1122334455667788LL);
		heap_free(h);
		free_model(&m);
	}
}

/*
 * An unknown sub-record tag in each of the two segments, which pass 1 walks
 * on two threads: both are lost from there to their segment's end, the
 * objects before each are read, and the first in the file is the one told.
 */
static void test_damage_in_both_segments(void **state)
{
	(void)state;
	struct model m;
	build_model(&m, 8);
	const struct xobj *bad[2] = {NULL, NULL};
	int nth = 0;
	for (size_t k = 0; k < m.nobj; k++) {
		if (m.obj[k].seg == 0)
			bad[0] = &m.obj[k];	/* the last of the first segment */
		else if (++nth == 6)
			bad[1] = &m.obj[k];
	}
	assert_non_null(bad[0]);
	assert_non_null(bad[1]);
	size_t off[2];
	for (int k = 0; k < 2; k++) {
		off[k] = m.seg_body[k] + bad[k]->at;
		m.w.b[off[k]] = 0xee;	/* no such tag */
	}
	hw_save(&m.w);
	struct heap *h = load_ok(m.w.path, NULL);
	assert_true(h->damaged);
	char want[96];
	snprintf(want, sizeof want, "(at byte offset %zu)", off[0]);
	if (!strstr(h->damage, "malformed heap dump record") || !strstr(h->damage, want))
		fail_msg("damage told: %s; want the first segment's, %s", h->damage, want);
	assert_true(h->lost_bytes == (m.seg_end[0] - off[0]) + (m.seg_end[1] - off[1]));
	uint32_t present = 0;
	for (size_t k = 0; k < m.nobj; k++) {
		const struct xobj *x = &m.obj[k];
		bool whole = m.seg_body[x->seg] + x->at < off[x->seg];
		uint32_t i = heap_index(h, oid(&m, x->key));
		if (whole)
			present++;
		if (whole)
			assert_int_not_equal(i, HEAP_NONE);
		else
			assert_int_equal(i, HEAP_NONE);
	}
	assert_int_equal(h->n, present);
	heap_free(h);
	free_model(&m);
}

static void test_truncated_record_header(void **state)
{
	(void)state;
	struct model m;
	build_model(&m, 8);
	/* The file ends 4 bytes into the HEAP DUMP END record's header. */
	hw_save_prefix(&m.w, m.seg_end[1] + 4);
	struct heap *h = load_ok(m.w.path, NULL);
	assert_true(h->damaged);
	assert_int_equal(h->n, m.nobj);
	heap_free(h);
	free_model(&m);
}

static void test_truncated_gzip(void **state)
{
	(void)state;
	struct model m;
	build_model(&m, 8);
	hw_save_gz(&m.w, 90);
	struct heap *h = load_ok(m.w.path, NULL);
	assert_true(h->hp->gzip);
	assert_true(h->hp->truncated);
	assert_true(h->damaged);
	assert_true(h->n > NCLASSES);
	assert_true(h->n < m.nobj);
	heap_free(h);
	free_model(&m);
}

static void load_err(const char *path, int64_t want_offset)
{
	static struct heap sentinel;
	struct heap *h = &sentinel;
	struct hs_error err;
	memset(&err, 0, sizeof err);
	assert_int_equal(heap_load(path, NULL, &h, &err), HS_ERR);
	assert_null(h);
	assert_true(err.msg[0] != 0);
	assert_int_equal(err.offset, want_offset);
}

static void test_nothing_to_load(void **state)
{
	(void)state;
	struct hw w;
	/* Only a header. */
	hw_init(&w, 8, 2, 0);
	load_err(hw_save(&w), HW_HEADER_SIZE);
	/* Records, but no heap dump. */
	hw_utf8(&w, 1, "java/lang/Object");
	hw_load_class(&w, 1, 0x100, 0, 1);
	load_err(hw_save(&w), HW_HEADER_SIZE);
	hw_free(&w);
	/* Not HPROF at all. */
	memset(&w, 0, sizeof w);
	w.ids = 4;
	hw_bytes(&w, "PK\3\4 a zip file, say", 20);
	load_err(hw_save(&w), 0);
	hw_free(&w);
	/* The first heap dump record cut in its first sub-record. */
	hw_init(&w, 4, 2, 0);
	hw_dump_begin(&w, HPROF_HEAP_DUMP);
	hw_instance(&w, 0x100, 0x200, 1, (struct hw_value[]){HW_INT(1)});
	hw_dump_end(&w);
	hw_save_prefix(&w, w.len - 2);
	load_err(w.path, HW_HEADER_SIZE);
	hw_free(&w);
}

/* ---- Android ---- */

/*
 * An ART dump (JAVA PROFILE 1.0.3, ids of 4 bytes): every Android root
 * sub-record, UNREACHABLE (no GC root), PRIMITIVE ARRAY NODATA (an array
 * with a length and no elements), and HEAP DUMP INFO switching heaps:
 * app, then zygote, then app again. Sizes as Android Studio reports them:
 * a class's instance size is the object's size (ART's, header included);
 * an array is its elements, references 4 bytes.
 */
static void test_android_records(void **state)
{
	(void)state;
	struct hw w, body;
	struct names nm = {.base = 0x5000};
	hw_init(&w, 4, 3, 0);
	hw_init_body(&body, 4);
	hw_heap_dump_info(&body, 'A', sid(&nm, "app"));
	hw_class_dump(&body, &(struct hw_class){.id = 0x100, .instance_size = 8});
	hw_class_dump(&body, &(struct hw_class){.id = 0x110, .super = 0x100,
				.instance_size = 20, .nfields = 2,
				.fields = (struct hw_field[]){{sid(&nm, "next"), HPROF_OBJECT},
							      {sid(&nm, "n"), HPROF_LONG}}});
	hw_instance(&body, 0x200, 0x100, 0, NULL);
	static const uint8_t id_roots[] = {
		HPROF_GC_ROOT_INTERNED_STRING, HPROF_GC_ROOT_FINALIZING, HPROF_GC_ROOT_DEBUGGER,
		HPROF_GC_ROOT_REFERENCE_CLEANUP, HPROF_GC_ROOT_VM_INTERNAL};
	for (size_t k = 0; k < sizeof id_roots; k++)
		hw_root(&body, id_roots[k], 0x200);
	hw_root_frame(&body, HPROF_GC_ROOT_JNI_MONITOR, 0x100, 3, 2);
	hw_root(&body, HPROF_GC_UNREACHABLE, 0x500);
	hw_prim_array_nodata(&body, 0x300, HPROF_INT, 1000);
	hw_heap_dump_info(&body, 'Z', sid(&nm, "zygote"));
	hw_prim_array_vals(&body, 0x400, HPROF_CHAR, 2, (uint64_t[]){'o', 'k'});
	hw_prim_array_vals(&body, 0x410, HPROF_LONG, 3, (uint64_t[]){1, 2, 3});
	hw_heap_dump_info(&body, 'A', sid(&nm, "app"));
	hw_instance(&body, 0x500, 0x110, 2, (struct hw_value[]){HW_OBJ(0x200), HW_LONG(7)});
	hw_obj_array(&body, 0x600, 0x120, 3, (uint64_t[]){0x200, 0, 0x500});
	hw_utf8(&w, 0x6000, "java/lang/Object");
	hw_utf8(&w, 0x6001, "shop/Order");
	hw_utf8(&w, 0x6002, "[Ljava/lang/Object;");
	hw_load_class(&w, 1, 0x100, 0, 0x6000);
	hw_load_class(&w, 2, 0x110, 0, 0x6001);
	hw_load_class(&w, 3, 0x120, 0, 0x6002);
	write_names(&w, &nm);
	hw_record_from(&w, HPROF_HEAP_DUMP_SEGMENT, &body);
	hw_dump_end_record(&w);
	struct heap *h = load_ok(hw_save(&w), NULL);
	assert_false(h->damaged);
	assert_int_equal(h->hp->minor, 3);
	assert_true(h->art_layout);
	assert_int_equal(h->n, 8);	/* 2 classes, 6 objects: NODATA is an object */
	uint32_t nd = heap_index(h, 0x300);
	assert_int_not_equal(nd, HEAP_NONE);
	assert_int_equal(heap_kind(h, nd), HEAP_PRIM_ARRAY);
	assert_string_equal(heap_class_name(h, nd), "int[]");
	assert_int_equal(heap_array_length(h, nd), 1000);
	assert_int_equal(heap_array_elem(h, nd, 0).type, 0);	/* no values to read */
	/* Roots: the six Android ones; UNREACHABLE is counted, not a root. */
	assert_int_equal(h->nroots, 6);
	for (size_t k = 0; k < 5; k++) {
		assert_int_equal(h->roots[k].kind, id_roots[k]);
		assert_int_equal(h->roots[k].obj, heap_index(h, 0x200));
	}
	assert_int_equal(h->roots[5].kind, HPROF_GC_ROOT_JNI_MONITOR);
	assert_int_equal(h->roots[5].obj, heap_index(h, 0x100));
	assert_int_equal(h->roots[5].frame, 2);
	assert_int_equal(h->roots[5].thread, HEAP_NONE);
	assert_int_equal(h->unreachable_marks, 1);
	assert_string_equal(heap_root_kind_name(HPROF_GC_ROOT_INTERNED_STRING), "interned string");
	assert_string_equal(heap_root_kind_name(HPROF_GC_ROOT_JNI_MONITOR), "JNI monitor");
	assert_string_equal(heap_root_kind_name(HPROF_GC_UNREACHABLE), "unreachable");
	/* Heaps, in the order the dump names them. */
	assert_int_equal(h->nheaps, 2);
	assert_string_equal(h->heap_names[0], "app");
	assert_string_equal(h->heap_names[1], "zygote");
	assert_int_equal(heap_android_heap_index(h, "zygote"), 1);
	assert_int_equal(heap_android_heap_index(h, "image"), -1);
	assert_string_equal(heap_android_heap(h, heap_index(h, 0x100)), "app");
	assert_string_equal(heap_android_heap(h, heap_index(h, 0x200)), "app");
	assert_string_equal(heap_android_heap(h, nd), "app");
	assert_string_equal(heap_android_heap(h, heap_index(h, 0x400)), "zygote");
	assert_string_equal(heap_android_heap(h, heap_index(h, 0x410)), "zygote");
	assert_string_equal(heap_android_heap(h, heap_index(h, 0x500)), "app");
	/* ART's layout. */
	assert_int_equal(heap_shallow(h, heap_index(h, 0x200)), 8);
	assert_int_equal(heap_shallow(h, heap_index(h, 0x500)), 20);
	assert_int_equal(heap_shallow(h, nd), 4000);
	assert_int_equal(heap_shallow(h, heap_index(h, 0x400)), 4);
	assert_int_equal(heap_shallow(h, heap_index(h, 0x410)), 24);
	assert_int_equal(heap_shallow(h, heap_index(h, 0x600)), 12);
	heap_free(h);
	hw_free(&w);
	hw_free(&body);
}

/*
 * The same kind of dump after hprof-conv: a 1.0.2 header, Android's roots
 * made ROOT UNKNOWN, no HEAP DUMP INFO. ART's classes (java.lang.DexCache)
 * still say whose layout it is; no heaps are named.
 */
static void test_android_converted(void **state)
{
	(void)state;
	struct hw w, body;
	hw_init(&w, 4, 2, 0);
	hw_init_body(&body, 4);
	hw_class_dump(&body, &(struct hw_class){.id = 0x100, .instance_size = 8});
	hw_class_dump(&body, &(struct hw_class){.id = 0x110, .super = 0x100, .instance_size = 28});
	hw_instance(&body, 0x200, 0x110, 0, NULL);
	hw_root(&body, HPROF_GC_ROOT_UNKNOWN, 0x200);
	hw_prim_array_vals(&body, 0x300, HPROF_BYTE, 3, (uint64_t[]){1, 2, 3});
	hw_utf8(&w, 0x6000, "java/lang/Object");
	hw_utf8(&w, 0x6001, "java/lang/DexCache");
	hw_load_class(&w, 1, 0x100, 0, 0x6000);
	hw_load_class(&w, 2, 0x110, 0, 0x6001);
	hw_record_from(&w, HPROF_HEAP_DUMP_SEGMENT, &body);
	hw_dump_end_record(&w);
	struct heap *h = load_ok(hw_save(&w), NULL);
	assert_true(h->art_layout);
	assert_int_equal(h->nheaps, 0);
	assert_null(h->heap_of);
	assert_null(heap_android_heap(h, 0));
	assert_int_equal(heap_shallow(h, heap_index(h, 0x200)), 28);
	assert_int_equal(heap_shallow(h, heap_index(h, 0x300)), 3);
	heap_free(h);
	/* Without ART's classes the same file is HotSpot's: a header, aligned sizes. */
	hw_free(&w);
	hw_init(&w, 4, 2, 0);
	hw_utf8(&w, 0x6000, "java/lang/Object");
	hw_load_class(&w, 1, 0x100, 0, 0x6000);
	hw_record_from(&w, HPROF_HEAP_DUMP_SEGMENT, &body);
	hw_dump_end_record(&w);
	h = load_ok(hw_save(&w), NULL);
	assert_false(h->art_layout);
	assert_int_equal(heap_shallow(h, heap_index(h, 0x300)), align8(8 + 4 + 3));
	heap_free(h);
	hw_free(&w);
	hw_free(&body);
}

/* Headers: 1.0.1, 1.0.2 and Android's 1.0.3 are read; others are not HPROF we know. */
static void test_headers(void **state)
{
	(void)state;
	for (int minor = 1; minor <= 3; minor++) {
		struct hw w;
		hw_init(&w, 8, minor, 0);
		hw_dump_begin(&w, HPROF_HEAP_DUMP);
		hw_root(&w, HPROF_GC_ROOT_UNKNOWN, 0x10);
		hw_prim_array_vals(&w, 0x10, HPROF_INT, 1, (uint64_t[]){5});
		hw_dump_end(&w);
		struct heap *h = load_ok(hw_save(&w), NULL);
		assert_int_equal(h->hp->minor, minor);
		assert_int_equal(h->n, 1);
		heap_free(h);
		hw_free(&w);
	}
	static const char *const bad[] = {"JAVA PROFILE 1.0.4", "JAVA PROFILE 1.0.0",
					  "JAVA PROFILE 1.1.2", "JAVA PROFILE 1.0.22"};
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
		struct hw w;
		memset(&w, 0, sizeof w);
		w.ids = 8;
		hw_bytes(&w, bad[k], strlen(bad[k]) + 1);
		hw_u4(&w, 8);
		hw_u8(&w, 0);
		hw_dump_begin(&w, HPROF_HEAP_DUMP);
		hw_prim_array_vals(&w, 0x10, HPROF_INT, 1, (uint64_t[]){5});
		hw_dump_end(&w);
		load_err(hw_save(&w), 0);
		hw_free(&w);
	}
}

/*
 * A file with several heap dumps, as the old HPROF agent writes one per
 * request: a HEAP DUMP record, then SEGMENTs closed by HEAP DUMP END, then
 * another HEAP DUMP. The first is read by default; opts.dump picks another;
 * one past the last is an error naming how many there are.
 */
static void test_several_dumps(void **state)
{
	(void)state;
	struct hw w;
	hw_init(&w, 8, 2, 0);
	hw_utf8(&w, 0x6000, "java/lang/Object");
	hw_load_class(&w, 1, 0x100, 0, 0x6000);
	/* dump 1: the class, two objects, a root */
	hw_dump_begin(&w, HPROF_HEAP_DUMP);
	hw_class_dump(&w, &(struct hw_class){.id = 0x100});
	hw_instance(&w, 0x200, 0x100, 0, NULL);
	hw_instance(&w, 0x210, 0x100, 0, NULL);
	hw_root(&w, HPROF_GC_ROOT_STICKY_CLASS, 0x100);
	hw_dump_end(&w);
	/* dump 2, in two segments: the class, one object kept, one new, two roots */
	hw_dump_begin(&w, HPROF_HEAP_DUMP_SEGMENT);
	hw_class_dump(&w, &(struct hw_class){.id = 0x100});
	hw_instance(&w, 0x200, 0x100, 0, NULL);
	hw_dump_end(&w);
	hw_dump_begin(&w, HPROF_HEAP_DUMP_SEGMENT);
	hw_instance(&w, 0x300, 0x100, 0, NULL);
	hw_root(&w, HPROF_GC_ROOT_STICKY_CLASS, 0x100);
	hw_root(&w, HPROF_GC_ROOT_UNKNOWN, 0x300);
	hw_dump_end(&w);
	hw_dump_end_record(&w);
	/* dump 3 */
	hw_dump_begin(&w, HPROF_HEAP_DUMP);
	hw_class_dump(&w, &(struct hw_class){.id = 0x100});
	hw_dump_end(&w);
	const char *path = hw_save(&w);
	struct heap *h = load_ok(path, NULL);
	assert_int_equal(h->ndumps, 3);
	assert_int_equal(h->dump, 1);
	assert_int_equal(h->n, 3);
	assert_int_equal(h->nroots, 1);
	assert_int_equal(h->duplicate_ids, 0);
	assert_int_equal(heap_index(h, 0x300), HEAP_NONE);
	heap_free(h);
	struct heap_load_opts opts = {0, NULL, NULL, 2, NULL, 0};
	h = load_ok(path, &opts);
	assert_int_equal(h->ndumps, 3);
	assert_int_equal(h->dump, 2);
	assert_int_equal(h->n, 3);
	assert_int_equal(h->nroots, 2);
	assert_int_equal(heap_index(h, 0x210), HEAP_NONE);
	assert_int_not_equal(heap_index(h, 0x300), HEAP_NONE);
	heap_free(h);
	opts.dump = 4;
	struct hs_error err;
	h = NULL;
	assert_int_equal(heap_load(path, &opts, &h, &err), HS_ERR);
	assert_null(h);
	assert_non_null(strstr(err.msg, "holds 3 heap dumps; there is no dump 4"));
	hw_free(&w);
}

/* ---- strings ---- */

/* A dump of Strings (and optionally java.lang.System's properties). */
struct sdump {
	int ids;
	bool jdk8;		/* String(char[] value, int hash), else (byte[] value, byte coder, int hash) */
	bool utf16_le;		/* UTF-16 byte[] values in little-endian order, as x86 HotSpot */
	struct names nm;
	struct hw w, body, recs;
	uint64_t next_id;
	uint64_t cls_string, cls_array;
	uint64_t str[8];	/* the test strings' object ids */
};

static uint64_t snew(struct sdump *d)
{
	return d->next_id += 0x10;
}

/* Crafted variants of the string dump (fuzz findings, issue 15). */
static uint32_t object_size_override;	/* java.lang.Object's CLASS DUMP instance size */
static bool props_self_linked;		/* 1000 buckets, all one entry whose next is itself */

static uint64_t sclass(struct sdump *d, const char *jvm, uint64_t super,
		       const struct mfield *f, uint16_t nf, const struct hw_static *st,
		       uint16_t nst)
{
	uint64_t id = snew(d);
	struct hw_field fields[8];
	uint32_t size = 0;
	for (unsigned k = 0; k < nf; k++) {
		fields[k] = (struct hw_field){sid(&d->nm, f[k].name), f[k].type};
		size += type_size(f[k].type, d->ids);
	}
	if (!strcmp(jvm, "java/lang/Object") && object_size_override)
		size = object_size_override;
	hw_load_class(&d->recs, (uint32_t)(id >> 4), id, 0, sid(&d->nm, jvm));
	hw_class_dump(&d->body, &(struct hw_class){.id = id, .super = super, .instance_size = size,
						   .nstatics = nst, .statics = st,
						   .nfields = nf, .fields = fields});
	return id;
}

/* sstring: a String of n UTF-16 code units; returns its id. */
static uint64_t sstring(struct sdump *d, const uint16_t *u, uint32_t n)
{
	uint64_t arr = snew(d), s = snew(d);
	bool latin1 = !d->jdk8;
	for (uint32_t k = 0; k < n; k++)
		latin1 = latin1 && u[k] < 0x100;
	if (d->jdk8) {
		uint64_t v[64];
		for (uint32_t k = 0; k < n; k++)
			v[k] = u[k];
		hw_prim_array_vals(&d->body, arr, HPROF_CHAR, n, v);
		hw_instance(&d->body, s, d->cls_string, 2,
			    (struct hw_value[]){HW_OBJ(arr), HW_INT(0)});
		return s;
	}
	uint8_t b[128];
	for (uint32_t k = 0; k < n; k++) {
		if (latin1) {
			b[k] = (uint8_t)u[k];
		} else {
			b[2 * k + (d->utf16_le ? 1 : 0)] = (uint8_t)(u[k] >> 8);
			b[2 * k + (d->utf16_le ? 0 : 1)] = (uint8_t)u[k];
		}
	}
	hw_prim_array(&d->body, arr, HPROF_BYTE, latin1 ? n : 2 * n, b);
	hw_instance(&d->body, s, d->cls_string, 3,
		    (struct hw_value[]){HW_OBJ(arr), HW_BYTE(latin1 ? 0 : 1), HW_INT(0)});
	return s;
}

static uint64_t sascii(struct sdump *d, const char *text)
{
	uint16_t u[64];
	uint32_t n = (uint32_t)strlen(text);
	for (uint32_t k = 0; k < n; k++)
		u[k] = (uint8_t)text[k];
	return sstring(d, u, n);
}

/* The strings every string dump holds, as UTF-16 and as the UTF-8 expected. */
static const uint16_t str_latin1[] = {'c', 'a', 'f', 0xE9};
static const uint16_t str_utf16[] = {'Q', 0x20AC, 'Z', 0xE9, 0xD83D, 0xDE00, 0x4E2D};
#define STR_LATIN1_UTF8 "caf\xC3\xA9"
#define STR_UTF16_UTF8 "Q\xE2\x82\xACZ\xC3\xA9\xF0\x9F\x98\x80\xE4\xB8\xAD"

/*
 * build_strings: Object, String, its array class, the test strings, and
 * when props is non-NULL (key, value, ..., NULL) a java.lang.System whose
 * static props is a Properties (Hashtable entries chained through next).
 */
static void build_strings(struct sdump *d, int ids, bool jdk8, bool utf16_le,
			  const char *const *props)
{
	memset(d, 0, sizeof *d);
	d->ids = ids;
	d->jdk8 = jdk8;
	d->utf16_le = utf16_le;
	d->nm.base = ids == 8 ? 0x0000500000000000ULL : 0x50000000u;
	d->next_id = ids == 8 ? 0x00007F0000001000ULL : 0x1000u;
	hw_init(&d->w, ids, 2, 0);
	hw_init_body(&d->body, ids);
	hw_init_body(&d->recs, ids);
	uint64_t obj = sclass(d, "java/lang/Object", 0, NULL, 0, NULL, 0);
	static const struct mfield jdk8_fields[] = {{"value", HPROF_OBJECT}, {"hash", HPROF_INT}};
	d->cls_string = jdk8 ? sclass(d, "java/lang/String", obj, jdk8_fields, 2, NULL, 0)
			     : sclass(d, "java/lang/String", obj, string_fields, 3, NULL, 0);
	d->cls_array = sclass(d, jdk8 ? "[C" : "[B", obj, NULL, 0, NULL, 0);
	d->str[0] = sstring(d, str_latin1, 4);
	d->str[1] = sstring(d, str_utf16, 7);
	d->str[2] = sstring(d, NULL, 0);
	/* A String whose value is null. */
	d->str[3] = snew(d);
	hw_instance(&d->body, d->str[3], d->cls_string, jdk8 ? 2 : 3,
		    (struct hw_value[]){HW_OBJ(0), HW_INT(0), HW_INT(0)});
	if (props) {
		static const struct mfield props_fields[] = {
			{"defaults", HPROF_OBJECT}, {"table", HPROF_OBJECT}};
		static const struct mfield entry_fields[] = {
			{"hash", HPROF_INT}, {"key", HPROF_OBJECT}, {"value", HPROF_OBJECT},
			{"next", HPROF_OBJECT}};
		uint64_t pcls = sclass(d, "java/util/Properties", obj, props_fields, 2, NULL, 0);
		uint64_t ecls = sclass(d, "java/util/Hashtable$Entry", obj, entry_fields, 4, NULL, 0);
		uint64_t acls = sclass(d, "[Ljava/util/Hashtable$Entry;", obj, NULL, 0, NULL, 0);
		size_t n = 0;
		while (props[2 * n])
			n++;
		uint64_t entries[8], p = snew(d), table = snew(d);
		for (size_t k = 0; k < n; k++)
			entries[k] = snew(d);
		for (size_t k = 0; k < n; k++) {
			uint64_t key = sascii(d, props[2 * k]), val = sascii(d, props[2 * k + 1]);
			uint64_t next = props_self_linked ? entries[k] : k + 1 < n ? entries[k + 1] : 0;
			hw_instance(&d->body, entries[k], ecls, 4, (struct hw_value[]){
				HW_INT((int32_t)k), HW_OBJ(key), HW_OBJ(val), HW_OBJ(next)});
		}
		if (props_self_linked) {
			static uint64_t buckets[1000];
			for (int k = 0; k < 1000; k++)
				buckets[k] = entries[0];
			hw_obj_array(&d->body, table, acls, 1000, buckets);
		} else {
			hw_obj_array(&d->body, table, acls, 3, (uint64_t[]){0, entries[0], 0});
		}
		hw_instance(&d->body, p, pcls, 2, (struct hw_value[]){HW_OBJ(0), HW_OBJ(table)});
		struct hw_static st = {sid(&d->nm, "props"), HW_OBJ(p)};
		sclass(d, "java/lang/System", obj, NULL, 0, &st, 1);
	}
	write_names(&d->w, &d->nm);
	hw_bytes(&d->w, d->recs.b, d->recs.len);
	hw_record_from(&d->w, HPROF_HEAP_DUMP, &d->body);
	hw_save(&d->w);
}

static void free_strings(struct sdump *d)
{
	hw_free(&d->w);
	hw_free(&d->body);
	hw_free(&d->recs);
}

static void want_string(const struct heap *h, uint64_t id, size_t max, const char *want)
{
	uint32_t i = heap_index(h, id);
	assert_int_not_equal(i, HEAP_NONE);
	char *s = heap_string(h, i, max);
	assert_non_null(s);
	assert_string_equal(s, want);
	free(s);
}

static void test_strings_jdk8_char_array(void **state)
{
	(void)state;
	for (int ids = 4; ids <= 8; ids += 4) {
		struct sdump d;
		build_strings(&d, ids, true, false, NULL);
		struct heap *h = load_ok(d.w.path, NULL);
		want_string(h, d.str[0], 0, STR_LATIN1_UTF8);
		want_string(h, d.str[1], 0, STR_UTF16_UTF8);
		want_string(h, d.str[1], 4, "Q\xE2\x82\xACZ\xC3\xA9...");
		want_string(h, d.str[2], 0, "");
		want_string(h, d.str[3], 0, "");
		heap_free(h);
		free_strings(&d);
	}
}

static const char *const props_big[] = {
	"java.version", "17.0.15", "sun.cpu.endian", "big", "file.encoding", "UTF-8", NULL};
static const char *const props_little[] = {
	"java.version", "17.0.15", "sun.cpu.endian", "little", NULL};

/*
 * Fuzz findings (issue 15): java.lang.Object with an absurd instance size
 * (0xF9000000) is not taken for a header; a property table of 1000 buckets
 * that all hold one entry linked to itself is searched in bounded time.
 */
static void test_crafted_sizes_and_props(void **state)
{
	(void)state;
	struct sdump d;
	object_size_override = 0xF9000000u;
	build_strings(&d, 8, false, false, props_big);
	object_size_override = 0;
	struct heap *h = load_ok(d.w.path, NULL);
	assert_true(h->header_size == 12 || h->header_size == 16);
	for (uint32_t i = 0; i < h->n; i++)
		assert_true(heap_shallow(h, i) < 4096);
	heap_free(h);
	free_strings(&d);

	props_self_linked = true;
	build_strings(&d, 8, false, false, props_big);
	props_self_linked = false;
	h = load_ok(d.w.path, NULL);
	char *v = heap_system_property(h, "java.version");
	assert_non_null(v);
	assert_string_equal(v, "17.0.15");
	free(v);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_null(heap_system_property(h, "no.such.property"));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* a few thousand steps, not 1000 x 100 000 (37 s before the fix) */
	assert_true(t1.tv_sec - t0.tv_sec < 2);
	heap_free(h);
	free_strings(&d);
}

/* Compact strings (JDK 9+): Latin-1 and UTF-16 from a big-endian VM. */
static void test_strings_compact_big_endian(void **state)
{
	(void)state;
	struct sdump d;
	build_strings(&d, 4, false, false, props_big);
	struct heap *h = load_ok(d.w.path, NULL);
	want_string(h, d.str[0], 0, STR_LATIN1_UTF8);
	want_string(h, d.str[1], 0, STR_UTF16_UTF8);
	want_string(h, d.str[1], 2, "Q\xE2\x82\xAC...");
	want_string(h, d.str[2], 0, "");
	want_string(h, d.str[3], 0, "");
	/* The properties, found through System.props and the entry chain. */
	char *v = heap_system_property(h, "sun.cpu.endian");
	assert_non_null(v);
	assert_string_equal(v, "big");
	free(v);
	v = heap_system_property(h, "file.encoding");
	assert_non_null(v);
	assert_string_equal(v, "UTF-8");
	free(v);
	assert_null(heap_system_property(h, "no.such.property"));
	heap_free(h);
	free_strings(&d);
}

/*
 * Regression (fixed): heap_string decodes UTF-16 compact strings (coder 1) as
 * big-endian, but HotSpot keeps their byte[] in the VM's native order
 * (StringUTF16.HI_BYTE_SHIFT) and writes byte arrays raw, so dumps from
 * x86-64 and aarch64 (sun.cpu.endian=little) hold little-endian UTF-16.
 * Seen on a real JDK 17 dump: "Q\u20acZ\u00e9" shows as "\u5100\uac20\u5a00\ue900".
 */
static void test_strings_compact_little_endian(void **state)
{
	(void)state;
	struct sdump d;
	build_strings(&d, 4, false, true, props_little);
	struct heap *h = load_ok(d.w.path, NULL);
	want_string(h, d.str[0], 0, STR_LATIN1_UTF8);
	want_string(h, d.str[1], 0, STR_UTF16_UTF8);
	heap_free(h);
	free_strings(&d);
}

/*
 * Regression (fixed): with 8-byte ids and no other hint, size_classes() asks
 * heap_system_property("java.vm.compressedOopsMode") before pass2 has
 * allocated h->cls; heap_field then reads h->cls[i] through NULL and the
 * load crashes (SIGSEGV) on any such dump whose java.lang.System has props.
 */
static void test_oops_from_system_property(void **state)
{
	(void)state;
	static const char *const props[] = {
		"java.vm.compressedOopsMode", "Zero based", NULL};
	struct sdump d;
	build_strings(&d, 8, false, false, props);
	struct heap *h = load_ok(d.w.path, NULL);
	assert_int_equal(h->oop_size, 4);
	assert_int_equal(h->header_size, 12);
	heap_free(h);
	free_strings(&d);
}

/*
 * Regression (fixed): in a dump without a CLASS DUMP for java.lang.Class, class
 * objects get a shallow size of only their statics (0 with none). pass2
 * adds a nameless java.lang.Class (inst_size 0) before sizing, so the
 * header_size fallback in class_object_size() is never taken.
 */
static void test_class_object_size_without_java_lang_class(void **state)
{
	(void)state;
	struct hw w;
	hw_init(&w, 8, 2, 0);
	hw_utf8(&w, 1, "java/lang/Object");
	hw_load_class(&w, 1, 0x100, 0, 1);
	hw_dump_begin(&w, HPROF_HEAP_DUMP);
	hw_class_dump(&w, &(struct hw_class){.id = 0x100});
	hw_dump_end(&w);
	struct heap *h = load_ok(hw_save(&w), NULL);
	assert_int_equal(h->n, 1);
	assert_int_equal(heap_shallow(h, 0), align8((uint64_t)h->header_size));
	heap_free(h);
	hw_free(&w);
}

/*
 * Objects whose class has no CLASS DUMP: instances and an object array whose
 * class ids are only LOAD CLASS names, and a char[] with no char[] class.
 * Pass 2 reads their records before those classes exist; they get nameless
 * classes afterwards, with their counts and shallow bytes, no references
 * from an instance without a layout, the array's references all the same.
 */
static void test_class_without_dump(void **state)
{
	(void)state;
	struct hw w;
	hw_init(&w, 8, 2, 0);
	hw_utf8(&w, 1, "java/lang/Object");
	hw_utf8(&w, 2, "com/example/Known");
	hw_utf8(&w, 3, "com/example/Ghost");
	hw_utf8(&w, 4, "[Lcom/example/Ghost;");
	hw_utf8(&w, 5, "g");
	hw_load_class(&w, 1, 0x100, 0, 1);
	hw_load_class(&w, 2, 0x200, 0, 2);
	hw_load_class(&w, 3, 0x300, 0, 3);
	hw_load_class(&w, 4, 0x400, 0, 4);
	hw_dump_begin(&w, HPROF_HEAP_DUMP);
	/* java.lang.Object's 12 bytes: a 12-byte header, 4-byte references */
	hw_class_dump(&w, &(struct hw_class){.id = 0x100, .instance_size = 12});
	const struct hw_field g = {.name = 5, .type = HPROF_OBJECT};
	hw_class_dump(&w, &(struct hw_class){.id = 0x200, .super = 0x100, .instance_size = 8,
					     .nfields = 1, .fields = &g});
	for (uint64_t k = 0; k < 3; k++) {
		/* 20 bytes whose first 8 are a Known's id: not a reference, no layout */
		uint8_t raw[20] = {0, 0, 0, 0, 0, 0, 0x20, 0x00};
		hw_instance_begin(&w, 0x1000 + 0x10 * k, 0x300);
		hw_bytes(&w, raw, sizeof raw);
		hw_instance_end(&w);
	}
	for (uint64_t k = 0; k < 2; k++)
		hw_instance(&w, 0x2000 + 0x10 * k, 0x200, 1,
			    &(struct hw_value){.type = HPROF_OBJECT, .bits = 0x1000 + 0x10 * k});
	const uint64_t elems[2] = {0x2000, 0x2010};
	hw_obj_array(&w, 0x3000, 0x400, 2, elems);
	hw_prim_array(&w, 0x4000, HPROF_CHAR, 3, "\0a\0b\0c");
	hw_dump_end(&w);
	struct heap *h = load_ok(hw_save(&w), NULL);
	assert_int_equal(h->header_size, 12);
	assert_int_equal(h->oop_size, 4);
	assert_int_equal(h->n, 9);
	assert_int_equal(h->unknown_class_objs, 4);	/* three Ghosts and the Ghost[] */

	uint32_t ghost = heap_class_by_name(h, "com.example.Ghost");
	uint32_t ghosts = heap_class_by_name(h, "com.example.Ghost[]");
	uint32_t chars = heap_class_by_name(h, "char[]");
	uint32_t known = heap_class_by_name(h, "com.example.Known");
	assert_int_not_equal(ghost, HEAP_NONE);
	assert_int_not_equal(ghosts, HEAP_NONE);
	assert_int_not_equal(chars, HEAP_NONE);
	assert_int_equal(h->classes[ghost].obj, HEAP_NONE);
	assert_int_equal(h->classes[ghost].count, 3);
	assert_int_equal(h->classes[ghost].shallow, 3 * 32);	/* align8(12 + 20) */
	assert_int_equal(h->classes[ghost].obj_kind, HEAP_INSTANCE);
	assert_int_equal(h->classes[ghosts].count, 1);
	assert_int_equal(h->classes[ghosts].shallow, 24);	/* align8(12 + 4 + 2 * 4) */
	assert_int_equal(h->classes[ghosts].obj_kind, HEAP_OBJ_ARRAY);
	assert_int_equal(h->classes[chars].count, 1);
	assert_int_equal(h->classes[chars].shallow, 24);	/* align8(12 + 4 + 3 * 2) */
	assert_int_equal(h->classes[chars].obj_kind, HEAP_PRIM_ARRAY);
	assert_int_equal(h->classes[known].count, 2);
	assert_int_equal(h->classes[known].shallow, 2 * 16);
	assert_int_equal(h->cls[heap_index(h, 0x1010)], ghost);
	assert_int_equal(h->cls[heap_index(h, 0x3000)], ghosts);
	assert_int_equal(h->cls[heap_index(h, 0x4000)], chars);

	uint64_t count = 0, shallow = 0;
	for (uint32_t c = 0; c < h->nclasses; c++) {
		count += h->classes[c].count;
		shallow += h->classes[c].shallow;
	}
	assert_int_equal(count, h->n);
	assert_int_equal(shallow, h->total_shallow);

	uint32_t n;
	const uint32_t *out = heap_out(h, heap_index(h, 0x1000), &n);
	assert_int_equal(n, 0);
	out = heap_out(h, heap_index(h, 0x2010), &n);
	assert_int_equal(n, 1);
	assert_int_equal(out[0], heap_index(h, 0x1010));
	out = heap_out(h, heap_index(h, 0x3000), &n);
	assert_int_equal(n, 2);
	assert_int_equal(out[0], heap_index(h, 0x2000));
	assert_int_equal(out[1], heap_index(h, 0x2010));
	heap_free(h);
	hw_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model_id4),
		cmocka_unit_test(test_model_id8),
		cmocka_unit_test(test_model_id8_oops4),
		cmocka_unit_test(test_model_gzip),
		cmocka_unit_test(test_model_saved),
		cmocka_unit_test(test_model_adopt),
		cmocka_unit_test(test_model_refused),
		cmocka_unit_test(test_index_many_ids),
		cmocka_unit_test(test_sort_halves),
		cmocka_unit_test(test_sort_runs),
		cmocka_unit_test(test_truncated_segment),
		cmocka_unit_test(test_damage_in_both_segments),
		cmocka_unit_test(test_truncated_record_header),
		cmocka_unit_test(test_truncated_gzip),
		cmocka_unit_test(test_nothing_to_load),
		cmocka_unit_test(test_android_records),
		cmocka_unit_test(test_android_converted),
		cmocka_unit_test(test_headers),
		cmocka_unit_test(test_several_dumps),
		cmocka_unit_test(test_strings_jdk8_char_array),
		cmocka_unit_test(test_strings_compact_big_endian),
		cmocka_unit_test(test_crafted_sizes_and_props),
		cmocka_unit_test(test_strings_compact_little_endian),
		cmocka_unit_test(test_oops_from_system_property),
		cmocka_unit_test(test_class_object_size_without_java_lang_class),
		cmocka_unit_test(test_class_without_dump),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
