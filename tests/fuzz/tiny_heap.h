/*
 * tiny_heap.h - the small heap the index, query and Lua harnesses run on,
 * and a seed of the HPROF corpus: 17 objects of the shapes queries meet
 * (Strings with text, a chain of Orders with a cycle and a shared child,
 * an Object[] with a null, a Thread with a name, a class loader, static
 * fields), written with tests/unit/hprof_writer.h.
 *
 * tiny_heap: the dump's bytes in w (hw_free releases them); ids is 4 or 8.
 * tiny_heap_android: the same as Android writes it (1.0.3, ids of 4 bytes,
 * HEAP DUMP INFO, Android's roots, UNREACHABLE, PRIMITIVE ARRAY NODATA).
 * tiny_heap_several: the heap twice in one file, as two HEAP DUMP records.
 * tiny_heap_file: tiny_heap (ids of 8 bytes) written to dir/tiny.hprof, dir
 * a new directory made from the mkdtemp template dir (64 bytes), into
 * path (128 bytes); false if it could not be written. The caller removes
 * both (unlink, rmdir).
 */
#ifndef HS_TINY_HEAP_H
#define HS_TINY_HEAP_H

#include <stdbool.h>

#include "../unit/hprof_writer.h"

enum {
	TH_OBJECT = 0x100, TH_STRING, TH_BYTES, TH_ORDER, TH_THREAD, TH_OBJARR, TH_LOADER,
	TH_CLASS,
	TH_S1 = 0x200, TH_S2, TH_B1, TH_B2, TH_O1, TH_O2, TH_O3, TH_O4, TH_ARR, TH_T1, TH_L1,
	TH_SN, TH_BN
};

static inline void tiny_heap_ex(struct hw *w, int ids, int variant)
{
	bool android = variant == 1, several = variant == 2;
	static const char *const names[] = {
		"java/lang/Object", "java/lang/String", "[B", "shop/Order", "java/lang/Thread",
		"[Ljava/lang/Object;", "java/lang/ClassLoader", "java/lang/Class",
		"value", "coder", "hash", "next", "other", "status", "name", "COUNT", "FIRST",
		"parent", "main", "run", "()V", "Order.java", "app", "image"};
	hw_init(w, ids, android ? 3 : 2, 1700000000000ULL);
	for (unsigned k = 0; k < sizeof names / sizeof *names; k++)
		hw_utf8(w, 1 + k, names[k]);
	for (unsigned k = 0; k < 8; k++)
		hw_load_class(w, 1 + k, TH_OBJECT + k, 0, 1 + k);
	hw_frame(w, 0x900, 19, 21, 22, 4, 17);
	hw_trace(w, 1, 1, 1, (uint64_t[]){0x900});
	struct hw body;
	hw_init_body(&body, ids);
	struct hw_field sf[] = {{9, HPROF_OBJECT}, {10, HPROF_BYTE}, {11, HPROF_INT}};
	struct hw_field of[] = {{12, HPROF_OBJECT}, {13, HPROF_OBJECT}, {14, HPROF_INT},
				{15, HPROF_OBJECT}};
	struct hw_field tf[] = {{15, HPROF_OBJECT}};
	struct hw_field lf[] = {{18, HPROF_OBJECT}};
	struct hw_static os[] = {{16, HW_INT(4)}, {17, HW_OBJ(TH_O1)}};
	int ref = ids == 4 ? 4 : 8;
	struct hw_class cls[] = {
		{TH_OBJECT, 0, 0, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL},
		{TH_STRING, TH_OBJECT, 0, 0, 0, (uint32_t)ref + 5, 0, 0, 3, NULL, NULL, sf},
		{TH_BYTES, TH_OBJECT, 0, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL},
		{TH_ORDER, TH_OBJECT, TH_L1, 0, 0, (uint32_t)ref * 3 + 4, 0, 2, 4, NULL, os, of},
		{TH_THREAD, TH_OBJECT, 0, 0, 0, (uint32_t)ref, 0, 0, 1, NULL, NULL, tf},
		{TH_OBJARR, TH_OBJECT, 0, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL},
		{TH_LOADER, TH_OBJECT, 0, 0, 0, (uint32_t)ref, 0, 0, 1, NULL, NULL, lf},
		{TH_CLASS, TH_OBJECT, 0, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL},
	};
	if (android)
		hw_heap_dump_info(&body, 'I', 24);
	for (unsigned k = 0; k < sizeof cls / sizeof *cls; k++)
		hw_class_dump(&body, &cls[k]);
	if (android) {
		hw_heap_dump_info(&body, 'A', 23);
		hw_root(&body, HPROF_GC_ROOT_INTERNED_STRING, TH_S1);
		hw_root(&body, HPROF_GC_ROOT_VM_INTERNAL, TH_L1);
		hw_root_frame(&body, HPROF_GC_ROOT_JNI_MONITOR, TH_O4, 1, 0);
		hw_root(&body, HPROF_GC_UNREACHABLE, TH_O3);
		hw_prim_array_nodata(&body, 0x2ff, HPROF_INT, 100);
	}
	hw_root(&body, HPROF_GC_ROOT_STICKY_CLASS, TH_ORDER);
	hw_root_thread_obj(&body, TH_T1, 1, 1);
	hw_root_frame(&body, HPROF_GC_ROOT_JAVA_FRAME, TH_O2, 1, 0);
	hw_root_jni_global(&body, TH_ARR, 0x77);
	hw_prim_array_vals(&body, TH_B1, HPROF_BYTE, 5, (uint64_t[]){'a', 'l', 'p', 'h', 'a'});
	hw_prim_array_vals(&body, TH_B2, HPROF_BYTE, 4, (uint64_t[]){'b', 'e', 't', 'a'});
	hw_prim_array_vals(&body, TH_BN, HPROF_BYTE, 4, (uint64_t[]){'m', 'a', 'i', 'n'});
	hw_instance(&body, TH_S1, TH_STRING, 3,
		    (struct hw_value[]){HW_OBJ(TH_B1), HW_BYTE(0), HW_INT(0)});
	hw_instance(&body, TH_S2, TH_STRING, 3,
		    (struct hw_value[]){HW_OBJ(TH_B2), HW_BYTE(0), HW_INT(7)});
	hw_instance(&body, TH_SN, TH_STRING, 3,
		    (struct hw_value[]){HW_OBJ(TH_BN), HW_BYTE(0), HW_INT(0)});
	/* O1 -> O2 -> O3 -> O1 (a cycle); O4 is shared by O2 and O3. */
	hw_instance(&body, TH_O1, TH_ORDER, 4, (struct hw_value[]){
		HW_OBJ(TH_O2), HW_OBJ(TH_S1), HW_INT(7), HW_OBJ(TH_S1)});
	hw_instance(&body, TH_O2, TH_ORDER, 4, (struct hw_value[]){
		HW_OBJ(TH_O3), HW_OBJ(TH_O4), HW_INT(3), HW_OBJ(TH_S2)});
	hw_instance(&body, TH_O3, TH_ORDER, 4, (struct hw_value[]){
		HW_OBJ(TH_O1), HW_OBJ(TH_O4), HW_INT(-1), HW_OBJ(0)});
	hw_instance(&body, TH_O4, TH_ORDER, 4, (struct hw_value[]){
		HW_OBJ(0), HW_OBJ(TH_ARR), HW_INT(7), HW_OBJ(TH_S2)});
	hw_obj_array(&body, TH_ARR, TH_OBJARR, 3, (uint64_t[]){TH_S1, 0, TH_O3});
	hw_instance(&body, TH_T1, TH_THREAD, 1, (struct hw_value[]){HW_OBJ(TH_SN)});
	hw_instance(&body, TH_L1, TH_LOADER, 1, (struct hw_value[]){HW_OBJ(0)});
	if (several) {
		hw_record_from(w, HPROF_HEAP_DUMP, &body);
		hw_record_from(w, HPROF_HEAP_DUMP, &body);
	} else {
		hw_record_from(w, HPROF_HEAP_DUMP_SEGMENT, &body);
		hw_dump_end_record(w);
	}
	hw_free(&body);
}

static inline void tiny_heap(struct hw *w, int ids)
{
	tiny_heap_ex(w, ids, 0);
}

static inline bool tiny_heap_file(char dir[64], char path[128])
{
	struct hw w;
	tiny_heap(&w, 8);
	FILE *f = NULL;
	bool ok = mkdtemp(dir) && snprintf(path, 128, "%s/tiny.hprof", dir) < 128 &&
		  (f = fopen(path, "wb")) && fwrite(w.b, 1, w.len, f) == w.len;
	if (f && fclose(f))
		ok = false;
	hw_free(&w);
	return ok;
}

#endif
