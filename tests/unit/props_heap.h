/*
 * props_heap.h - a dump holding System.props as JDK 9 and later hold it
 * (Properties -> ConcurrentHashMap -> Node[] -> Node -> String -> byte[]),
 * written with hprof_writer.h for heapsh --redact's unit test
 * (test_redact.c) and as a seed of its fuzz harness (fuzz_redact.c).
 *
 * Two properties: java.version = "17.0.15", a property heapsh's model reads
 * (redact.h keeps its key and value), and db.password = "hunter2", one it
 * does not. Every object comes before the objects that reference it, and
 * the CLASS DUMPs after all of them: the worst order for a streaming
 * reader, one more pass at each step back.
 *
 * props_heap(w, ids, redacted, order): redacted writes the dump as a redacted
 * copy must read: the unlisted property's bytes, every String's hash but
 * the listed value's, the Node's hash zeroed; String.coder kept.
 * Header-only (static inline), as hprof_writer.h.
 */
#ifndef HS_TEST_PROPS_HEAP_H
#define HS_TEST_PROPS_HEAP_H

#include "hprof_writer.h"

static inline void props_bytes(struct hw *w, uint64_t id, const char *s, bool zero)
{
	size_t n = strlen(s);
	hw_prim_array(w, id, HPROF_BYTE, (uint32_t)n, NULL);
	for (size_t i = 0; i < n; i++)
		hw_u1(w, zero ? 0 : (uint8_t)s[i]);
}

static inline void props_arrays(struct hw *w, bool z)
{
	props_bytes(w, 0x3001, "java.version", false);
	props_bytes(w, 0x3002, "17.0.15", false);
	props_bytes(w, 0x3003, "db.password", z);
	props_bytes(w, 0x3004, "hunter2", z);
}

/* String { byte[] value; byte coder; int hash } */
static inline void props_strings(struct hw *w, bool z)
{
	hw_instance(w, 0x2001, 0x600, 3, (struct hw_value[]){HW_OBJ(0x3001), HW_BYTE(0),
							      HW_INT(z ? 0 : 111)});
	hw_instance(w, 0x2002, 0x600, 3, (struct hw_value[]){HW_OBJ(0x3002), HW_BYTE(0),
							      HW_INT(222)});
	hw_instance(w, 0x2003, 0x600, 3, (struct hw_value[]){HW_OBJ(0x3003), HW_BYTE(0),
							      HW_INT(z ? 0 : 333)});
	hw_instance(w, 0x2004, 0x600, 3, (struct hw_value[]){HW_OBJ(0x3004), HW_BYTE(1),
							      HW_INT(z ? 0 : 444)});
}

/* ConcurrentHashMap$Node { int hash; Object key, val; Node next } */
static inline void props_nodes(struct hw *w, bool z)
{
	hw_instance(w, 0x1402, 0x500, 4, (struct hw_value[]){HW_INT(z ? 0 : 6), HW_OBJ(0x2003),
							      HW_OBJ(0x2004), HW_OBJ(0)});
	hw_instance(w, 0x1401, 0x500, 4, (struct hw_value[]){HW_INT(z ? 0 : 5), HW_OBJ(0x2001),
							      HW_OBJ(0x2002), HW_OBJ(0x1402)});
}

static inline void props_maps(struct hw *w)
{
	hw_obj_array(w, 0x1301, 0, 2, (uint64_t[]){0x1401, 0});
	hw_instance(w, 0x1201, 0x400, 1, (struct hw_value[]){HW_OBJ(0x1301)});
}

static inline void props_object(struct hw *w)
{
	hw_instance(w, 0x1000, 0x300, 1, (struct hw_value[]){HW_OBJ(0x1201)});
}

static inline void props_system(struct hw *w)
{
	struct hw_static props = {7, HW_OBJ(0x1000)};
	hw_class_dump(w, &(struct hw_class){.id = 0x200, .super = 0x100, .nstatics = 1,
					    .statics = &props});
}

static inline void props_classes(struct hw *w)
{
	struct hw_field fmap = {8, HPROF_OBJECT}, ftable = {9, HPROF_OBJECT};
	struct hw_field fnode[4] = {{15, HPROF_INT}, {10, HPROF_OBJECT}, {11, HPROF_OBJECT},
				    {12, HPROF_OBJECT}};
	struct hw_field fstr[3] = {{13, HPROF_OBJECT}, {14, HPROF_BYTE}, {15, HPROF_INT}};
	hw_class_dump(w, &(struct hw_class){.id = 0x100});
	hw_class_dump(w, &(struct hw_class){.id = 0x300, .super = 0x100, .nfields = 1,
					    .fields = &fmap});
	hw_class_dump(w, &(struct hw_class){.id = 0x400, .super = 0x100, .nfields = 1,
					    .fields = &ftable});
	hw_class_dump(w, &(struct hw_class){.id = 0x500, .super = 0x100, .nfields = 4,
					    .fields = fnode});
	hw_class_dump(w, &(struct hw_class){.id = 0x600, .super = 0x100, .nfields = 3,
					    .fields = fstr});
}

/*
 * order 0: every object before what references it, the CLASS DUMPs last;
 * order 1: the CLASS DUMPs first, then the Properties, System's CLASS DUMP,
 * and the rest after what references it: a pass that met the Properties
 * before where System wanted it must read on to meet what it wants.
 */
static inline void props_heap(struct hw *w, int ids, bool redacted, int order)
{
	static const char *const names[] = {
		NULL, "java/lang/Object", "java/lang/System", "java/util/Properties",
		"java/util/concurrent/ConcurrentHashMap",
		"java/util/concurrent/ConcurrentHashMap$Node", "java/lang/String",
		"props", "map", "table", "key", "val", "next", "value", "coder", "hash"
	};
	bool z = redacted;
	hw_init(w, ids, 2, 0);
	for (uint64_t k = 1; k < sizeof names / sizeof *names; k++)
		hw_utf8(w, k, names[k]);
	for (uint32_t k = 1; k <= 6; k++)
		hw_load_class(w, k, 0x100 * k, 0, k);
	hw_dump_begin(w, HPROF_HEAP_DUMP_SEGMENT);
	if (order == 0) {
		props_arrays(w, z);
		props_strings(w, z);
		props_nodes(w, z);
		props_maps(w);
		props_object(w);
		props_classes(w);
		props_system(w);
	} else {
		props_classes(w);
		props_object(w);
		props_system(w);
		hw_instance(w, 0x1201, 0x400, 1, (struct hw_value[]){HW_OBJ(0x1301)});
		hw_obj_array(w, 0x1301, 0, 2, (uint64_t[]){0x1401, 0});
		hw_instance(w, 0x1401, 0x500, 4, (struct hw_value[]){HW_INT(z ? 0 : 5),
			    HW_OBJ(0x2001), HW_OBJ(0x2002), HW_OBJ(0x1402)});
		hw_instance(w, 0x1402, 0x500, 4, (struct hw_value[]){HW_INT(z ? 0 : 6),
			    HW_OBJ(0x2003), HW_OBJ(0x2004), HW_OBJ(0)});
		props_strings(w, z);
		props_arrays(w, z);
	}
	hw_root(w, HPROF_GC_ROOT_STICKY_CLASS, 0x200);
	hw_dump_end(w);
	hw_dump_end_record(w);
}

#endif
