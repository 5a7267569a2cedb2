/*
 * test_classname.c - cn_java_name (src/base/classname.c): JVM class names
 * (HPROF's LOAD CLASS, internal form) and type signatures (JVMTI) to Java
 * names, the one conversion the loader and the live snapshot share.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/base/classname.h"

static void check(const char *name, bool signature, const char *want)
{
	char out[128];
	size_t n = cn_java_name(name, signature, out, sizeof out);
	assert_string_equal(out, want);
	assert_int_equal(n, strlen(want));
	assert_true(CN_JAVA_NAME_MAX(name) > n);
}

static void names(void **state)
{
	(void)state;
	check("java/lang/String", false, "java.lang.String");
	check("com/acme/Shop$Order", false, "com.acme.Shop$Order");
	check("[[I", false, "int[][]");
	check("[Z", false, "boolean[]");
	check("[J", false, "long[]");
	check("[Ljava/lang/Object;", false, "java.lang.Object[]");
	check("[[[Lcom/a/B$C;", false, "com.a.B$C[][][]");
	check("[Lfoo", false, "foo[]");	/* no ';': taken as it is */
	check("[Ix", false, "Ix[]");	/* not a primitive: one letter only */
	check("", false, "");
	/* an internal name starting with L is a class's (default package) */
	check("Lonely", false, "Lonely");
}

static void signatures(void **state)
{
	(void)state;
	check("Ljava/lang/String;", true, "java.lang.String");
	check("[Ljava/lang/String;", true, "java.lang.String[]");
	check("[[D", true, "double[][]");
	check("I", true, "int");	/* int.class's signature */
	check("V", true, "void");
	check("[V", true, "V[]");	/* no void arrays: taken as it is */
	check("I", false, "I");	/* an internal name: a class named I */
}

static void cut_to_fit(void **state)
{
	(void)state;
	char out[5];
	assert_int_equal(cn_java_name("[[I", false, out, sizeof out), 7);
	assert_string_equal(out, "int[");
	assert_int_equal(cn_java_name("java/util/List", false, out, 1), 14);
	assert_string_equal(out, "");
	assert_int_equal(cn_java_name("java/util/List", false, NULL, 0), 14);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names),
		cmocka_unit_test(signatures),
		cmocka_unit_test(cut_to_fit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
