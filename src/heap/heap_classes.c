/*
 * heap_classes.c - the loader's classes: CLASS DUMP records decoded, Java
 * names, reference field layouts, the reference size and every class's
 * instance size (docs/heap-model.md), and the classes of the objects. See
 * loader.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/big.h"
#include "../base/classname.h"
#include "loader.h"

/* java_name: a JVM class name ("java/lang/String", "[[I") as Java's (malloc'd). */
static char *java_name(const char *s)
{
	char *out = xmalloc(CN_JAVA_NAME_MAX(s));
	cn_java_name(s, false, out, CN_JAVA_NAME_MAX(s));
	return out;
}

static uint8_t prim_elem_type(const char *name)
{
	static const struct { const char *n; uint8_t t; } prims[] = {
		{"boolean[]", HPROF_BOOLEAN}, {"char[]", HPROF_CHAR},
		{"float[]", HPROF_FLOAT}, {"double[]", HPROF_DOUBLE},
		{"byte[]", HPROF_BYTE}, {"short[]", HPROF_SHORT},
		{"int[]", HPROF_INT}, {"long[]", HPROF_LONG}};
	for (size_t i = 0; i < sizeof prims / sizeof *prims; i++)
		if (!strcmp(name, prims[i].n))
			return prims[i].t;
	return 0;
}

/* add_class: append a class with no CLASS DUMP (named only by its users). */
static uint32_t add_class(struct loader *L, uint64_t id, const char *name)
{
	struct heap *h = L->h;
	h->classes = xreallocarray(h->classes, h->nclasses + 1, sizeof *h->classes);
	struct heap_class *c = &h->classes[h->nclasses];
	memset(c, 0, sizeof *c);
	c->id = id;
	c->obj = HEAP_NONE;
	c->super = HEAP_NONE;
	c->loader = HEAP_NONE;
	c->name = heap_keep(h, xstrdup(name));
	c->obj_kind = HEAP_KIND_NONE;
	c->elem_type = prim_elem_type(name);
	if (!c->elem_type && strlen(name) > 2 && !strcmp(name + strlen(name) - 2, "[]"))
		c->elem_type = HPROF_OBJECT;
	if (id)
		u64map_put(&L->class_index, id, h->nclasses);
	return h->nclasses++;
}

const char *heap_class_name_for(struct loader *L, uint64_t id)
{
	uint64_t sid;
	if (u64map_get(&L->class_names, id, &sid))
		return heap_keep(L->h, java_name(heap_name(L->h, sid)));
	return heap_keep(L->h, xasprintf("<class 0x%llx>", (unsigned long long)id));
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

void heap_read_classes(struct loader *L)
{
	struct heap *h = L->h;
	struct hprof *hp = L->hp;
	size_t ids = (size_t)hp->id_size;
	/*
	 * The class objects: the CLASS DUMP records pass 1 noted whose id kept
	 * its record (a duplicate id keeps one record), found by id rather than
	 * by reading every record's tag, which out of core reads the whole dump
	 * again. In object order: class indexes follow object indexes, so binary
	 * search finds them (heap_class_of_object).
	 */
	uint32_t *objs = xmalloc((L->nclasspos + 1) * sizeof *objs), nobjs = 0;
	for (size_t k = 0; k < L->nclasspos; k++) {
		uint32_t i = heap_index(h, hprof_id(hp, hp->data + L->classpos[k] + 1));
		if (i != HEAP_NONE && h->pos[i] == L->classpos[k])
			objs[nobjs++] = i;
	}
	qsort(objs, nobjs, sizeof *objs, cmp_u32);
	uint32_t nc = 0;
	h->classes = xcalloc(L->nclasspos + 1, sizeof *h->classes);
	u64map_init(&L->class_index, L->nclasspos + 16);
	for (uint32_t j = 0; j < nobjs; j++) {
		uint32_t i = objs[j];
		if (j && i == objs[j - 1])
			continue;
		struct hprof_class_dump cd;
		/* Already bounds-checked in pass 1. */
		hprof_class_dump_read(hp, h->pos[i], hp->size, &cd, NULL);
		struct heap_class *c = &h->classes[nc];
		c->id = cd.id;
		c->obj = i;
		c->hprof_size = cd.instance_size;
		c->obj_kind = HEAP_KIND_NONE;
		c->name = heap_class_name_for(L, cd.id);
		c->elem_type = prim_elem_type(c->name);
		if (!c->elem_type && strlen(c->name) > 2 &&
		    !strcmp(c->name + strlen(c->name) - 2, "[]"))
			c->elem_type = HPROF_OBJECT;
		c->nstatics = cd.nstatics;
		c->statics = xcalloc(cd.nstatics + 1u, sizeof *c->statics);
		size_t p = cd.statics;
		for (unsigned k = 0; k < cd.nstatics; k++) {
			c->statics[k].name = heap_name(h, hprof_id(hp, hp->data + p));
			c->statics[k].type = hp->data[p + ids];
			c->statics[k].value_pos = p + ids + 1;
			p += ids + 1 + (size_t)hprof_type_size(hp, c->statics[k].type);
		}
		c->nfields = cd.nfields;
		c->fields = xcalloc(cd.nfields + 1u, sizeof *c->fields);
		p = cd.fields;
		for (unsigned k = 0; k < cd.nfields; k++) {
			c->fields[k].name = heap_name(h, hprof_id(hp, hp->data + p));
			c->fields[k].type = hp->data[p + ids];
			p += ids + 1;
		}
		/* super and loader ids are resolved below; park them. */
		c->count = cd.super_id;
		c->shallow = cd.loader_id;
		u64map_put(&L->class_index, cd.id, nc);
		nc++;
	}
	free(objs);
	h->nclasses = nc;
	for (uint32_t k = 0; k < nc; k++) {
		struct heap_class *c = &h->classes[k];
		uint64_t ci;
		c->super = c->count && u64map_get(&L->class_index, c->count, &ci)
				   ? (uint32_t)ci : HEAP_NONE;
		c->loader = c->shallow ? heap_index(h, c->shallow) : HEAP_NONE;
		c->count = c->shallow = 0;
	}
}

/* Field layout over the hierarchy: data size and reference offsets. */
void heap_layout_classes(struct heap *h)
{
	int ids = h->hp->id_size;
	for (uint32_t k = 0; k < h->nclasses; k++) {
		struct heap_class *c = &h->classes[k];
		uint32_t off = 0, nrefs = 0, depth = 0;
		for (uint32_t s = k; s != HEAP_NONE && depth < 4096; s = h->classes[s].super, depth++)
			for (unsigned f = 0; f < h->classes[s].nfields; f++) {
				uint8_t t = h->classes[s].fields[f].type;
				nrefs += t == HPROF_OBJECT;
				off += (uint32_t)hprof_type_size(h->hp, t);
			}
		c->data_size = off;
		c->nref_offsets = nrefs;
		c->ref_offsets = xcalloc(nrefs + 1, sizeof *c->ref_offsets);
		off = nrefs = depth = 0;
		for (uint32_t s = k; s != HEAP_NONE && depth < 4096; s = h->classes[s].super, depth++)
			for (unsigned f = 0; f < h->classes[s].nfields; f++) {
				uint8_t t = h->classes[s].fields[f].type;
				if (t == HPROF_OBJECT)
					c->ref_offsets[nrefs++] = off;
				off += (uint32_t)(t == HPROF_OBJECT ? ids : hprof_type_size(h->hp, t));
			}
	}
}

/* oops_from_statics: VisualVM's guess from Unsafe field offsets (JDK 8). */
static int oops_from_statics(struct heap *h, const char *cls, const char *f1, const char *f2)
{
	uint32_t c = heap_class_by_name(h, cls);
	struct heap_value a, b;
	if (c == HEAP_NONE || !heap_static(h, c, f1, &a) || !heap_static(h, c, f2, &b) ||
	    a.type != HPROF_LONG || b.type != HPROF_LONG)
		return 0;
	int64_t d = b.v.i - a.v.i;
	return d == 4 || d == 8 ? (int)d : 0;
}

/*
 * Shallow sizes follow VisualVM's heap library (ObjectSizeSettings), so
 * the two agree to the byte; see docs/heap-model.md. An instance is
 * align8(header + fields), header = id size + oop size, references of oop
 * size; an array align8(header + 4 + length * element size).
 */
/* A Java object has at most 65 535 fields of at most 8 bytes (JVMS 4.1). */
#define MAX_INSTANCE_SIZE (1u << 20)

/*
 * Android's sizes, as Android Studio's memory profiler (perflib) and Shark
 * report them: an instance is its CLASS DUMP's instance size, which ART's
 * writer (art/runtime/hprof/hprof.cc) sets to the object's size in memory,
 * its 8-byte header included; an array is its elements (4 bytes per
 * reference), without ART's 12 or 16 bytes of header and length. Class
 * objects have java.lang.Class's size; ART's dumps give a class's static
 * fields a byte[] of their own ("$classOverhead"), counted there.
 */
static bool is_art(struct loader *L)
{
	return L->hp->minor == 3 || L->nmarks ||
	       heap_class_by_name(L->h, "java.lang.DexCache") != HEAP_NONE;
}

static void size_classes_art(struct heap *h)
{
	h->oop_size = 4;
	h->header_size = 8;
	h->oop_source = "Android (ART): compressed references";
	for (uint32_t k = 0; k < h->nclasses; k++) {
		struct heap_class *c = &h->classes[k];
		if (c->elem_type || c->obj == HEAP_NONE)
			continue;
		c->inst_size = c->hprof_size >= 8 && c->hprof_size <= MAX_INSTANCE_SIZE
				       ? c->hprof_size : 8;
	}
}

static void assign_classes(struct loader *L);

/* has_field: class name (by Java name) declares an instance field called field. */
static bool has_field(const struct heap *h, const char *name, const char *field)
{
	uint32_t k = heap_class_by_name(h, name);
	if (k == HEAP_NONE)
		return false;
	for (unsigned f = 0; f < h->classes[k].nfields; f++)
		if (h->classes[k].fields[f].name && !strcmp(h->classes[k].fields[f].name, field))
			return true;
	return false;
}

/*
 * What the objects' addresses tell (HotSpot's object ids are addresses): a
 * sample of runs of consecutive objects in address order, each object's
 * distance to the next one, which is at least its size and usually equal
 * to it. coops: an object array closer to the next object than 8-byte
 * references allow (Eclipse MAT's test of JDK 6 dumps, Pass1Parser); gcd:
 * of the distances, the object alignment when it is over 8; mingap[c]: the
 * least distance after an instance of class c (UINT32_MAX: none seen),
 * which no instance size may exceed.
 */
struct addr_ev {
	bool not_addresses;	/* ids that cannot be addresses (a crafted dump): nothing told */
	bool coops;
	uint64_t gcd;
	uint32_t *mingap;
	uint64_t pairs;
};

#define EV_RUNS 4096
#define EV_RUN 64

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static void address_evidence(struct loader *L, struct addr_ev *ev)
{
	struct heap *h = L->h;
	const uint8_t *d = L->hp->data;
	size_t ids = (size_t)L->hp->id_size;
	memset(ev, 0, sizeof *ev);
	ev->mingap = xmallocarray((size_t)h->nclasses + 1, sizeof *ev->mingap);
	memset(ev->mingap, 0xff, ((size_t)h->nclasses + 1) * sizeof *ev->mingap);
	if (!h->ids || !h->pos || h->n < 2)
		return;
	uint64_t runs = h->n / EV_RUN < EV_RUNS ? h->n / EV_RUN + 1 : EV_RUNS;
	uint64_t step = h->n / runs;
	uint64_t last_cid = 0;
	uint32_t last_c = HEAP_NONE;
	for (uint64_t r = 0; r < runs; r++)
		for (uint64_t i = r * step; i < r * step + EV_RUN && i + 1 < h->n; i++) {
			uint64_t gap = h->ids[i + 1] - h->ids[i];
			if (!gap || gap >= (1u << 30))
				continue;	/* not addresses, or another region */
			ev->pairs++;
			ev->gcd = gcd64(ev->gcd, gap);
			size_t p = (size_t)h->pos[i];
			if (!d || p + 1 + 2 * ids + 8 > L->hp->size)
				continue;
			uint8_t tag = d[p];
			if (gap < 8 || (gap & 7)) {
				ev->not_addresses = true;	/* no object is that small */
			} else if (tag == HPROF_GC_OBJ_ARRAY_DUMP || tag == HPROF_GC_PRIM_ARRAY_DUMP) {
				uint64_t len = hprof_u4(d + p + 1 + ids + 4);
				uint64_t es = tag == HPROF_GC_OBJ_ARRAY_DUMP ? 4
					      : (uint64_t)hprof_type_size(L->hp, d[p + 1 + ids + 8]);
				if (gap < 12 + es * len)	/* smaller than any header allows */
					ev->not_addresses = true;
				else if (tag == HPROF_GC_OBJ_ARRAY_DUMP && ids == 8 && len &&
					 gap < 16 + 4 + 8 * len)
					ev->coops = true;
			} else if (tag == HPROF_GC_INSTANCE_DUMP) {
				uint8_t k;
				uint32_t c = heap_record_class(L, p, &last_cid, &last_c, &k);
				if (c < h->nclasses && gap < ev->mingap[c])
					ev->mingap[c] = (uint32_t)gap;
			}
		}
	if (ev->not_addresses) {
		ev->coops = false;
		ev->gcd = 0;
		ev->pairs = 0;
	}
}

/*
 * fit: how well cfg's sizes fit the addresses: classes whose size equals
 * the least distance after one of their instances, less four times those
 * whose size exceeds it (impossible).
 */
static int64_t fit(const struct heap *h, const struct layout_cfg *cfg, const struct addr_ev *ev,
		   uint32_t *size)
{
	layout_sizes(h, cfg, size);
	int64_t f = 0;
	for (uint32_t k = 0; k < h->nclasses; k++)
		if (size[k] && ev->mingap[k] != UINT32_MAX)
			f += size[k] == ev->mingap[k] ? 1 : size[k] > ev->mingap[k] ? -4 : 0;
	return f;
}

/*
 * choose_layout: h->layout for a HotSpot dump, from h->oop_size and the
 * JDK's generation, which the fields of its own classes tell (HPROF names
 * no version): String.coder and Class.module from JDK 9, Class.classData from 15 (the new
 * field layout, JDK-8237767), Thread.holder from 19 (virtual threads),
 * Thread without inheritedAccessControlContext from 24; Class.reflectionData
 * tells JDK 8, String.count or hash32 JDK 7 and before; false when the dump has none of the JDK's
 * classes to tell (a crafted dump: VisualVM's rule then). jdk (from
 * --layout) overrides. The header is
 * the mark word and the class pointer: 8 on 32-bit; before JDK 15 the class
 * pointer is compressed with the oops (12, else 16); from JDK 15 it is
 * compressed by default whatever the oops (12; -XX:-UseCompressedClassPointers
 * and compact headers are not told by the dump: docs/heap-model.md).
 */
static bool choose_layout(struct heap *h, int jdk, const struct addr_ev *ev)
{
	struct layout_cfg *c = &h->layout;
	int ids = h->hp->id_size;
	if (jdk) {
		h->layout_source = "set with --layout";
		h->layout_forced = true;
	} else if (has_field(h, "java.lang.Thread", "holder")) {
		bool acc = has_field(h, "java.lang.Thread", "inheritedAccessControlContext");
		jdk = acc ? 21 : 25;
		h->layout_source = acc ? "JDK 19-23 (java.lang.Thread.holder)"
				       : "JDK 24 or later (java.lang.Thread.holder, no "
					 "inheritedAccessControlContext)";
	} else if (has_field(h, "java.lang.Class", "classData")) {
		jdk = 17;
		h->layout_source = "JDK 15-18 (java.lang.Class.classData)";
	} else if (has_field(h, "java.lang.String", "coder") && has_field(h, "java.lang.Class", "module")) {
		jdk = 11;
		h->layout_source = "JDK 9-14 (java.lang.String.coder, java.lang.Class.module)";
	} else if (has_field(h, "java.lang.Class", "reflectionData") &&
		   !has_field(h, "java.lang.String", "coder")) {
		jdk = 8;
		h->layout_source = "JDK 8 (java.lang.Class.reflectionData)";
	} else if (has_field(h, "java.lang.String", "count") || has_field(h, "java.lang.String", "hash32")) {
		jdk = 7;
		h->layout_source = "JDK 7 or before (java.lang.String.count or hash32)";
	} else {
		return false;	/* no JDK's classes to tell: VisualVM's rule */
	}
	c->jdk = jdk;
	c->gen15 = jdk >= 15;
	c->oop = h->oop_size;
	c->word = ids == 4 ? 4 : 8;
	c->align = 8;
	c->header = ids == 4 ? 8 : c->gen15 || h->oop_size == 4 ? 12 : 16;
	if (ev && ev->gcd >= 16 && ev->gcd <= 256 && !(ev->gcd & (ev->gcd - 1)))
		c->align = (int)ev->gcd;	/* -XX:ObjectAlignmentInBytes */
	if (ev && ids == 8 && ev->pairs) {
		/* The header: 12 by default; 16 without compressed class pointers; 8 with
		 * compact headers (JDK 24 on). The one the addresses fit best. */
		uint32_t *size = xcalloc((size_t)h->nclasses + 1, sizeof *size);
		int cand[3] = {c->header, c->header == 12 ? 16 : 12, 8}, best = c->header;
		int64_t bestf = INT64_MIN;
		for (int i = 0; i < (c->jdk >= 24 ? 3 : 2); i++) {
			c->header = cand[i];
			int64_t f = fit(h, c, ev, size);
			if (f > bestf) {
				bestf = f;
				best = cand[i];
			}
		}
		c->header = best;
		layout_sizes(h, c, size);
		h->layout_misfits = 0;
		for (uint32_t k = 0; k < h->nclasses; k++)
			h->layout_misfits += size[k] && ev->mingap[k] != UINT32_MAX && size[k] > ev->mingap[k];
		free(size);
	}
	h->header_size = c->header;
	h->use_layout = true;
	return true;
}

void heap_size_classes(struct loader *L)
{
	struct heap *h = L->h;
	int ids = h->hp->id_size;
	if (!(L->opts && L->opts->oop_size) && (h->art_layout = is_art(L))) {
		size_classes_art(h);
		return;
	}
	struct addr_ev ev;
	address_evidence(L, &ev);
	uint32_t obj = heap_class_by_name(h, "java.lang.Object");
	/* Real instance sizes: java.lang.Object's is then its header, 8 to 32
	 * bytes in every JVM; anything else is not a size to build on. */
	bool new_size = obj != HEAP_NONE && h->classes[obj].hprof_size >= 8 &&
			h->classes[obj].hprof_size <= 32;
	int min_inst = 0;
	if (L->opts && (L->opts->oop_size == 4 || L->opts->oop_size == 8)) {
		h->oop_size = L->opts->oop_size;
		h->oop_size_forced = true;
		h->oop_source = "set with --oops";
		h->oops_conflict = h->oop_size == 8 && ev.coops;
	} else if (ids == 4) {
		h->oop_size = 4;
		h->oop_source = "identifier size 4";
	} else if (new_size) {
		min_inst = (int)h->classes[obj].hprof_size;
		h->oop_size = min_inst - ids;
		h->oop_source = "java.lang.Object's instance size in the dump";
	} else {
		int g = oops_from_statics(h, "java.lang.Class$Atomic", "annotationDataOffset",
					  "annotationTypeOffset");
		if (!g)
			g = oops_from_statics(h, "java.util.concurrent.FutureTask", "runnerOffset",
					      "waitersOffset");
		if (g) {
			h->oop_size = g;
			h->oop_source = "Unsafe field offsets in the dump";
			h->oops_conflict = g == 8 && ev.coops;
		} else if (ev.coops) {
			h->oop_size = 4;
			h->oop_source = "an object array closer to the next object than 8-byte "
					"references allow";
		} else {
			/* reads fields, so every object's class first */
			assign_classes(L);
			char *mode = heap_system_property(h, "java.vm.compressedOopsMode");
			h->oop_size = mode ? 4 : ids;
			h->oop_source = mode ? "system property java.vm.compressedOopsMode"
					     : "no compressed oops found in the dump";
			free(mode);
		}
	}
	if (h->oop_size != 4 && h->oop_size != 8)
		h->oop_size = ids;
	if (!min_inst || h->oop_size_forced)
		min_inst = ids + h->oop_size;
	h->header_size = min_inst;
	if ((!new_size || h->oop_size_forced) && choose_layout(h, L->opts ? L->opts->layout_jdk : 0, &ev)) {
		/* HotSpot's dumps give no instance sizes: lay the fields out as its JDK did. */
		free(ev.mingap);
		uint32_t *size = xcalloc((size_t)h->nclasses + 1, sizeof *size);
		layout_sizes(h, &h->layout, size);
		for (uint32_t k = 0; k < h->nclasses; k++)
			if (!h->classes[k].elem_type && h->classes[k].obj != HEAP_NONE)
				h->classes[k].inst_size = size[k] && size[k] <= MAX_INSTANCE_SIZE + 4096
								  ? size[k] : (uint32_t)h->header_size;
		free(size);
		return;
	}
	for (uint32_t k = 0; k < h->nclasses; k++) {
		struct heap_class *c = &h->classes[k];
		if (c->elem_type || c->obj == HEAP_NONE)
			continue;	/* arrays, and classes known only by name */
		if (new_size && !h->oop_size_forced && c->hprof_size >= (uint32_t)min_inst &&
		    c->hprof_size <= MAX_INSTANCE_SIZE) {
			c->inst_size = c->hprof_size;
			continue;
		}
		uint64_t sz = (uint64_t)min_inst, depth = 0;
		for (uint32_t s = k; s != HEAP_NONE && depth < 4096; s = h->classes[s].super, depth++)
			for (unsigned f = 0; f < h->classes[s].nfields; f++) {
				uint8_t t = h->classes[s].fields[f].type;
				sz += t == HPROF_OBJECT ? (uint64_t)h->oop_size
							: (uint64_t)hprof_type_size(h->hp, t);
			}
		c->inst_size = (uint32_t)((sz + 7) & ~7ULL);
	}
	free(ev.mingap);
}

uint64_t heap_array_size(const struct heap *h, uint8_t elem, uint64_t len)
{
	if (h->art_layout)	/* the elements, as Android Studio and Shark count an array */
		return (elem == HPROF_OBJECT ? 4 : (uint64_t)hprof_type_size(h->hp, elem)) * len;
	uint64_t es = elem == HPROF_OBJECT ? (uint64_t)h->oop_size
					   : (uint64_t)hprof_type_size(h->hp, elem);
	if (h->use_layout)
		return layout_array_size(&h->layout, (uint32_t)es, len);
	return ((uint64_t)h->header_size + 4 + es * len + 7) & ~7ULL;
}

/*
 * heap_class_object_size: a class mirror is a java.lang.Class plus the static
 * fields the class declares. The pseudo-statics HotSpot's dumps add
 * (<resolved_references>, <init_lock>) are not in the mirror and do not
 * count: a running JVM's agent computes the same size (docs/heap-model.md).
 */
uint64_t heap_class_object_size(const struct heap *h, const struct heap_class *c)
{
	/* Without a CLASS DUMP for java.lang.Class, a mirror is at least a header. */
	uint64_t sz = h->class_class != HEAP_NONE && h->classes[h->class_class].obj != HEAP_NONE
			      ? h->classes[h->class_class].inst_size : (uint64_t)h->header_size;
	if (h->use_layout && h->class_class != HEAP_NONE && h->classes[h->class_class].obj != HEAP_NONE) {
		/* A mirror is a model, not the VM's object: VisualVM's rule for its
		 * java.lang.Class part, as the agent counts it in a running JVM. */
		sz = (uint64_t)h->hp->id_size + (uint64_t)h->oop_size;
		uint32_t depth = 0;
		for (uint32_t s = h->class_class; s != HEAP_NONE && depth < 64; s = h->classes[s].super, depth++)
			for (unsigned f = 0; f < h->classes[s].nfields; f++) {
				uint8_t t = h->classes[s].fields[f].type;
				sz += t == HPROF_OBJECT ? (uint64_t)h->oop_size
							: (uint64_t)hprof_type_size(h->hp, t);
			}
		sz = (sz + 7) & ~7ULL;
	}
	if (h->art_layout)
		return sz;	/* the statics are in the class's "$classOverhead" byte[] */
	for (unsigned k = 0; k < c->nstatics; k++) {
		if (c->statics[k].name && c->statics[k].name[0] == '<')
			continue;
		uint8_t t = c->statics[k].type;
		sz += t == HPROF_OBJECT ? (uint64_t)h->oop_size
					: (uint64_t)hprof_type_size(h->hp, t);
	}
	return (sz + 7) & ~7ULL;
}

uint64_t heap_record_shallow(const struct heap *h, uint32_t i)
{
	const uint8_t *d = h->hp->data;
	size_t ids = (size_t)h->hp->id_size, p = heap_pos(h, i);
	switch (d[p]) {
	case HPROF_GC_INSTANCE_DUMP: {
		const struct heap_class *k = &h->classes[h->cls[i]];
		uint32_t len = hprof_u4(d + p + 1 + 2 * ids + 4);
		return k->obj == HEAP_NONE && !k->inst_size
			       ? ((uint64_t)h->header_size + len + 7) & ~7ULL : k->inst_size;
	}
	case HPROF_GC_OBJ_ARRAY_DUMP:
		return heap_array_size(h, HPROF_OBJECT, hprof_u4(d + p + 1 + ids + 4));
	case HPROF_GC_PRIM_ARRAY_DUMP: case HPROF_GC_PRIM_ARRAY_NODATA:
		return heap_array_size(h, d[p + 1 + ids + 8], hprof_u4(d + p + 1 + ids + 4));
	default: {
		uint32_t c = heap_class_of_object(h, i);
		return c == HEAP_NONE ? (uint64_t)h->header_size : heap_class_object_size(h, &h->classes[c]);
	}
	}
}

/* class_for_id: class index of a class id, adding a nameless class if needed. */
static uint32_t class_for_id(struct loader *L, uint64_t cid)
{
	uint64_t ci;
	if (u64map_get(&L->class_index, cid, &ci))
		return (uint32_t)ci;
	return add_class(L, cid, heap_class_name_for(L, cid));
}

static uint32_t prim_array_class(struct loader *L, uint8_t t, uint32_t *cache)
{
	if (cache[t] != HEAP_NONE)
		return cache[t];
	char name[32];
	snprintf(name, sizeof name, "%s[]", hprof_type_name(t));
	uint32_t c = heap_class_by_name(L->h, name);
	if (c == HEAP_NONE)
		c = add_class(L, 0, name);
	return cache[t] = c;
}

struct assign_half {
	struct loader *L;
	uint32_t from, to;
	uint8_t *kind;		/* per class: the kind of its objects seen here */
	uint64_t misses;	/* class ids not yet known (left HEAP_NONE) */
};

/* assign_work: classes of objects [from, to), reading the class maps only. */
static void *assign_work(void *arg)
{
	struct assign_half *w = arg;
	struct loader *L = w->L;
	struct heap *h = L->h;
	uint64_t last_cid = 0;
	uint32_t last_c = HEAP_NONE;
	for (uint32_t i = w->from; i < w->to; i++) {
		uint8_t k;
		uint32_t c = heap_record_class(L, h->pos[i], &last_cid, &last_c, &k);
		h->cls[i] = c;
		if (c == HEAP_NONE)
			w->misses++;
		else
			heap_note_kind(w->kind, c, k);
	}
	return NULL;
}

/* heap_layout_added: classes made after heap_layout_classes get a (field-less) layout. */
void heap_layout_added(struct heap *h)
{
	for (uint32_t k = 0; k < h->nclasses; k++)
		if (!h->classes[k].ref_offsets)
			h->classes[k].ref_offsets = xcalloc(1, sizeof(uint32_t));
}

/*
 * heap_prepare_classes: java.lang.Class (made when the dump has no CLASS DUMP
 * for it) and the primitive array classes that exist, before any object's
 * class is looked up.
 */
void heap_prepare_classes(struct loader *L)
{
	struct heap *h = L->h;
	for (int t = 0; t < 16; t++)
		L->prim[t] = HEAP_NONE;
	h->class_class = heap_class_by_name(h, "java.lang.Class");
	if (h->class_class == HEAP_NONE)
		h->class_class = add_class(L, 0, "java.lang.Class");
	static const uint8_t ptypes[] = {HPROF_BOOLEAN, HPROF_CHAR, HPROF_FLOAT, HPROF_DOUBLE,
					 HPROF_BYTE, HPROF_SHORT, HPROF_INT, HPROF_LONG};
	for (size_t t = 0; t < sizeof ptypes; t++) {
		/* only classes that exist: a missing one is made when first needed */
		char name[32];
		snprintf(name, sizeof name, "%s[]", hprof_type_name(ptypes[t]));
		L->prim[ptypes[t]] = heap_class_by_name(h, name);
	}
	heap_layout_added(h);
	h->cls = big_alloc(h->n + 1, sizeof *h->cls);
}

/* heap_merge_kinds: per class, the kinds two workers saw (kind[c], c < nc). */
void heap_merge_kinds(struct heap *h, uint32_t nc, const uint8_t *k0, const uint8_t *k1)
{
	for (uint32_t c = 0; c < nc; c++) {
		h->classes[c].obj_kind = HEAP_KIND_NONE;
		if (k0[c] != HEAP_KIND_NONE)
			heap_note_kind(&h->classes[c].obj_kind, 0, k0[c]);
		if (k1[c] != HEAP_KIND_NONE)
			heap_note_kind(&h->classes[c].obj_kind, 0, k1[c]);
	}
}

/*
 * heap_assign_missing: the objects left without a class (a class id without a
 * CLASS DUMP, a primitive array type without its class) get nameless
 * classes, made here on one thread in object order; with counted, their
 * count and shallow bytes are added to those classes' (pass 2 could not).
 */
void heap_assign_missing(struct loader *L, bool counted)
{
	struct heap *h = L->h;
	struct hprof *hp = L->hp;
	const uint8_t *d = hp->data;
	size_t ids = (size_t)hp->id_size;
	uint32_t prim_cache[16];
	for (int t = 0; t < 16; t++)
		prim_cache[t] = HEAP_NONE;
	for (uint32_t i = 0; i < h->n; i++) {
		if (h->cls[i] != HEAP_NONE)
			continue;
		size_t p = h->pos[i];
		uint32_t c;
		uint8_t k;
		if (d[p] == HPROF_GC_PRIM_ARRAY_DUMP || d[p] == HPROF_GC_PRIM_ARRAY_NODATA) {
			c = prim_array_class(L, d[p + 1 + ids + 8], prim_cache);
			k = HEAP_PRIM_ARRAY;
		} else {
			bool inst = d[p] == HPROF_GC_INSTANCE_DUMP;
			c = class_for_id(L, hprof_id(hp, d + p + 1 + ids + (inst ? 4 : 8)));
			k = inst ? HEAP_INSTANCE : HEAP_OBJ_ARRAY;
		}
		h->cls[i] = c;
		heap_note_kind(&h->classes[c].obj_kind, 0, k);
		if (counted) {
			uint64_t sz = heap_record_shallow(h, i);
			h->classes[c].count++;
			h->classes[c].shallow += sz;
		}
	}
}

/*
 * assign_classes: every object's class before pass 2, for a dump whose
 * sizes cannot be decided without reading fields (size_classes's last
 * resort, which needs the classes). Otherwise pass 2 assigns them as it
 * reads each record, which saves a walk of every record: out of core, a
 * read of the whole dump. Two threads look classes up; ids of classes with
 * no CLASS DUMP are rare and get their nameless classes afterwards, on one
 * thread.
 */
static void assign_classes(struct loader *L)
{
	struct heap *h = L->h;
	if (L->assigned)
		return;
	uint32_t nc = h->nclasses;
	struct assign_half w[2] = {
		{L, 0, h->n / 2, xmalloc(nc + 1), 0},
		{L, h->n / 2, h->n, xmalloc(nc + 1), 0}};
	memset(w[0].kind, HEAP_KIND_NONE, nc + 1);
	memset(w[1].kind, HEAP_KIND_NONE, nc + 1);
	heap_run2(assign_work, &w[0], &w[1], h->n > 100000);
	heap_merge_kinds(h, nc, w[0].kind, w[1].kind);
	free(w[0].kind);
	free(w[1].kind);
	if (w[0].misses + w[1].misses)
		heap_assign_missing(L, false);
	heap_layout_added(h);
	L->assigned = true;
}
