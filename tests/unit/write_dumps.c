/*
 * write_dumps.c - writes the dumps of tests/t_android.sh with the unit
 * tests' HPROF writer (hprof_writer.h), as no producer of them runs here:
 *
 *   write_dumps android OUT    an ART heap dump as Android writes it (JAVA
 *                              PROFILE 1.0.3, 4-byte ids; art/runtime/hprof/
 *                              hprof.cc): HEAP DUMP INFO switching between the
 *                              image, zygote and app heaps, Android's roots,
 *                              PRIMITIVE ARRAY NODATA, UNREACHABLE, Strings with
 *                              a char[] value, classes' "$classOverhead" byte[]
 *   write_dumps converted OUT  the same heap after hprof-conv: 1.0.2, Android's
 *                              roots as ROOT UNKNOWN, no HEAP DUMP INFO, NODATA
 *                              as a zero-filled PRIMITIVE ARRAY, UNREACHABLE gone
 *   write_dumps several OUT    three heap dumps in one file, as the old HPROF
 *                              agent (-agentlib:hprof) writes one per request
 *
 * The heap: an app whose static com.example.Cache.INSTANCE holds an
 * ArrayList of 40 LeakActivity objects, each with a 10,000-byte buffer
 * (the leak), a 300,000-byte byte[] in the image heap held by an interned
 * String's class (not a leak: the boot image), and a zygote heap of
 * preloaded Strings. Sizes are Android Studio's; t_android.sh checks them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "hprof_writer.h"

enum { S_BASE = 0x1000 };
static const char *const names[] = {
	"java/lang/Object", "java/lang/Class", "java/lang/String", "java/lang/DexCache",
	"dalvik/system/PathClassLoader", "com/example/LeakActivity", "com/example/Cache",
	"java/util/ArrayList", "java/lang/Thread", "[Ljava/lang/Object;",
	"count", "hash", "value", "elementData", "size", "buffer", "title", "INSTANCE",
	"$classOverhead", "name", "app", "zygote", "image", "BOOT", "main", "run", "()V",
	"LeakActivity.java"};
static uint64_t sid(const char *s)
{
	for (size_t k = 0; k < sizeof names / sizeof *names; k++)
		if (!strcmp(names[k], s))
			return S_BASE + k;
	abort();
}

enum {
	C_OBJECT = 0x10000, C_CLASS = 0x10100, C_STRING = 0x10200, C_DEXCACHE = 0x10300,
	C_LOADER = 0x10400, C_ACTIVITY = 0x10500, C_CACHE = 0x10600, C_LIST = 0x10700,
	C_THREAD = 0x10800, C_OBJARR = 0x10900,
	O_IMAGE_BYTES = 0x20000, O_INTERNED = 0x20100, O_INTERNED_CHARS = 0x20110,
	O_ZSTR = 0x30000,	/* + 0x100 * k: zygote Strings, their chars at + 0x10 */
	O_NODATA = 0x38000, O_LOADER = 0x39000,
	O_LIST = 0x40000, O_ELEMS = 0x40100, O_THREAD = 0x40200, O_TNAME = 0x40300,
	O_TNAME_CHARS = 0x40310, O_ACT = 0x50000,	/* + 0x100 * k, buffer at + 0x10 */
	O_GONE = 0x60000
};
#define NACT 40

/* A String of ART's dump: count, hash, and the fake value field. */
static void string(struct hw *b, uint64_t id, uint64_t chars, const char *text, bool nodata)
{
	uint32_t n = (uint32_t)strlen(text);
	hw_instance(b, id, C_STRING, 3,
		    (struct hw_value[]){HW_INT(n), HW_INT(0), HW_OBJ(chars)});
	if (nodata) {
		hw_prim_array(b, chars, HPROF_CHAR, n, NULL);
		for (uint32_t k = 0; k < n; k++)
			hw_u2(b, 0);
		return;
	}
	uint64_t v[64];
	for (uint32_t k = 0; k < n && k < 64; k++)
		v[k] = (uint8_t)text[k];
	hw_prim_array_vals(b, chars, HPROF_CHAR, n, v);
}

/* A class as ART dumps it: statics in a "$classOverhead" byte[] of id klass | 1. */
static void klass(struct hw *b, uint64_t id, uint64_t super, uint64_t loader, uint32_t size,
		  uint16_t nfields, const struct hw_field *fields, uint16_t nstatics,
		  const struct hw_static *statics, uint32_t overhead)
{
	struct hw_static st[8];
	uint16_t ns = 0;
	if (overhead) {
		hw_prim_array(b, id | 1, HPROF_BYTE, overhead, NULL);
		for (uint32_t k = 0; k < overhead; k++)
			hw_u1(b, 0);
		st[ns++] = (struct hw_static){sid("$classOverhead"), HW_OBJ(id | 1)};
		for (uint16_t k = 0; k < nstatics && ns < 8; k++)
			st[ns++] = statics[k];
	}
	hw_class_dump(b, &(struct hw_class){id, super, loader, 0, 0, size, 0, ns, nfields, NULL,
					     ns ? st : NULL, fields});
}

static void heap_info(struct hw *b, bool android, uint32_t type, const char *name)
{
	if (android)
		hw_heap_dump_info(b, type, sid(name));
}

static void write_android(const char *out, bool android)
{
	struct hw w, b;
	hw_init(&w, 4, android ? 3 : 2, 1700000000000ULL);
	for (size_t k = 0; k < sizeof names / sizeof *names; k++)
		hw_utf8(&w, S_BASE + k, names[k]);
	static const uint64_t classes[] = {C_OBJECT, C_CLASS, C_STRING, C_DEXCACHE, C_LOADER,
					   C_ACTIVITY, C_CACHE, C_LIST, C_THREAD, C_OBJARR};
	for (size_t k = 0; k < sizeof classes / sizeof *classes; k++)
		hw_load_class(&w, (uint32_t)k + 1, classes[k], 0, S_BASE + k);
	hw_frame(&w, 0x900, sid("run"), sid("()V"), sid("LeakActivity.java"), 6, 42);
	hw_trace(&w, 1, 1, 1, (uint64_t[]){0x900});
	hw_init_body(&b, 4);
	uint8_t unknown = HPROF_GC_ROOT_UNKNOWN;
	/* Roots first, as ART writes them. */
	hw_root(&b, android ? HPROF_GC_ROOT_INTERNED_STRING : unknown, O_INTERNED);
	hw_root(&b, HPROF_GC_ROOT_STICKY_CLASS, C_STRING);
	hw_root(&b, HPROF_GC_ROOT_STICKY_CLASS, C_CACHE);
	hw_root(&b, android ? HPROF_GC_ROOT_VM_INTERNAL : unknown, O_ZSTR);
	hw_root(&b, android ? HPROF_GC_ROOT_DEBUGGER : unknown, O_ZSTR + 0x100);
	if (android)
		hw_root_frame(&b, HPROF_GC_ROOT_JNI_MONITOR, O_LIST, 1, 0);
	else
		hw_root(&b, unknown, O_LIST);
	hw_root_thread_obj(&b, O_THREAD, 1, 1);
	/* The image heap: java.lang's classes and a big byte[] the String class holds. */
	heap_info(&b, android, 'I', "image");
	klass(&b, C_OBJECT, 0, 0, 8, 0, NULL, 0, NULL, 0);
	klass(&b, C_CLASS, C_OBJECT, 0, 120, 0, NULL, 0, NULL, 0);
	klass(&b, C_STRING, C_OBJECT, 0, 16, 3,
	      (struct hw_field[]){{sid("count"), HPROF_INT}, {sid("hash"), HPROF_INT},
				  {sid("value"), HPROF_OBJECT}},
	      1, (struct hw_static[]){{sid("BOOT"), HW_OBJ(O_IMAGE_BYTES)}}, 16);
	klass(&b, C_DEXCACHE, C_OBJECT, 0, 48, 0, NULL, 0, NULL, 0);
	klass(&b, C_OBJARR, C_OBJECT, 0, 0, 0, NULL, 0, NULL, 0);
	klass(&b, C_LIST, C_OBJECT, 0, 16, 2,
	      (struct hw_field[]){{sid("elementData"), HPROF_OBJECT}, {sid("size"), HPROF_INT}},
	      0, NULL, 0);
	klass(&b, C_THREAD, C_OBJECT, 0, 12, 1, (struct hw_field[]){{sid("name"), HPROF_OBJECT}},
	      0, NULL, 0);
	hw_prim_array(&b, O_IMAGE_BYTES, HPROF_BYTE, 300000, NULL);
	for (int k = 0; k < 300000; k++)
		hw_u1(&b, 0);
	/* The zygote heap: preloaded Strings, an interned one, a NODATA array, the loader. */
	heap_info(&b, android, 'Z', "zygote");
	klass(&b, C_LOADER, C_OBJECT, 0, 24, 0, NULL, 0, NULL, 0);
	hw_instance(&b, O_LOADER, C_LOADER, 0, NULL);
	string(&b, O_INTERNED, O_INTERNED_CHARS, "android", false);
	for (int k = 0; k < 3; k++)
		string(&b, O_ZSTR + 0x100 * k, O_ZSTR + 0x100 * k + 0x10, "preloaded", false);
	if (android)
		hw_prim_array_nodata(&b, O_NODATA, HPROF_INT, 256);
	else {
		hw_prim_array(&b, O_NODATA, HPROF_INT, 256, NULL);
		for (int k = 0; k < 256; k++)
			hw_u4(&b, 0);
	}
	/* The app heap: the leak. */
	heap_info(&b, android, 'A', "app");
	klass(&b, C_ACTIVITY, C_OBJECT, C_LOADER, 16, 2,
	      (struct hw_field[]){{sid("buffer"), HPROF_OBJECT}, {sid("title"), HPROF_OBJECT}},
	      0, NULL, 0);
	klass(&b, C_CACHE, C_OBJECT, C_LOADER, 8, 0, NULL, 1,
	      (struct hw_static[]){{sid("INSTANCE"), HW_OBJ(O_LIST)}}, 8);
	uint64_t elems[NACT];
	for (int k = 0; k < NACT; k++) {
		uint64_t a = O_ACT + 0x100 * (uint64_t)k;
		elems[k] = a;
		hw_instance(&b, a, C_ACTIVITY, 2,
			    (struct hw_value[]){HW_OBJ(a + 0x10), HW_OBJ(O_INTERNED)});
		hw_prim_array(&b, a + 0x10, HPROF_BYTE, 10000, NULL);
		for (int j = 0; j < 10000; j++)
			hw_u1(&b, (uint8_t)j);
	}
	hw_obj_array(&b, O_ELEMS, C_OBJARR, NACT, elems);
	hw_instance(&b, O_LIST, C_LIST, 2, (struct hw_value[]){HW_OBJ(O_ELEMS), HW_INT(NACT)});
	hw_instance(&b, O_THREAD, C_THREAD, 1, (struct hw_value[]){HW_OBJ(O_TNAME)});
	string(&b, O_TNAME, O_TNAME_CHARS, "main", false);
	hw_instance(&b, O_GONE, C_DEXCACHE, 0, NULL);
	if (android)
		hw_root(&b, HPROF_GC_UNREACHABLE, O_GONE);
	hw_record_from(&w, HPROF_HEAP_DUMP_SEGMENT, &b);
	hw_dump_end_record(&w);
	FILE *f = fopen(out, "wb");
	if (!f || fwrite(w.b, 1, w.len, f) != w.len || fclose(f))
		abort();
	hw_free(&b);
	hw_free(&w);
}

/* Three dumps of one program: 2, 3 and 1 instances of Node, each with a root. */
static void write_several(const char *out)
{
	struct hw w;
	hw_init(&w, 8, 2, 1700000000000ULL);
	hw_utf8(&w, 1, "java/lang/Object");
	hw_utf8(&w, 2, "Node");
	hw_utf8(&w, 3, "next");
	hw_load_class(&w, 1, 0x100, 0, 1);
	hw_load_class(&w, 2, 0x200, 0, 2);
	static const int counts[] = {2, 3, 1};
	for (int d = 0; d < 3; d++) {
		bool segments = d == 1;
		hw_dump_begin(&w, segments ? HPROF_HEAP_DUMP_SEGMENT : HPROF_HEAP_DUMP);
		hw_class_dump(&w, &(struct hw_class){.id = 0x100});
		hw_class_dump(&w, &(struct hw_class){.id = 0x200, .super = 0x100, .instance_size = 8,
						     .nfields = 1,
						     .fields = (struct hw_field[]){{3, HPROF_OBJECT}}});
		hw_root(&w, HPROF_GC_ROOT_STICKY_CLASS, 0x200);
		for (int k = 0; k < counts[d]; k++) {
			if (segments && k == 1) {	/* a second segment of the same dump */
				hw_dump_end(&w);
				hw_dump_begin(&w, HPROF_HEAP_DUMP_SEGMENT);
			}
			uint64_t id = 0x1000 + 0x10 * (uint64_t)k;
			hw_instance(&w, id, 0x200, 1,
				    (struct hw_value[]){HW_OBJ(k + 1 < counts[d] ? id + 0x10 : 0)});
		}
		hw_root(&w, HPROF_GC_ROOT_UNKNOWN, 0x1000);
		hw_dump_end(&w);
		if (segments)
			hw_dump_end_record(&w);
	}
	FILE *f = fopen(out, "wb");
	if (!f || fwrite(w.b, 1, w.len, f) != w.len || fclose(f))
		abort();
	hw_free(&w);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: write_dumps android|converted|several OUT\n");
		return 2;
	}
	if (!strcmp(argv[1], "android") || !strcmp(argv[1], "converted"))
		write_android(argv[2], !strcmp(argv[1], "android"));
	else if (!strcmp(argv[1], "several"))
		write_several(argv[2]);
	else
		return 2;
	return 0;
}
