/*
 * test_hdiff.c - the parts of heapsh diff (src/engine/hdiff.c) that need no
 * heap: the names classes are matched by across dumps (hidden classes'
 * addresses and lambdas' numbers dropped), the package rows, and the
 * --fail-if conditions as typed. The comparison itself runs on real dumps
 * in tests/t_diff.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/engine/hdiff.h"

static void key(const char *name, const char *want)
{
	char buf[256];
	assert_string_equal(hdiff_class_key(name, buf, sizeof buf), want);
}

static void class_keys(void **state)
{
	(void)state;
	key("com.acme.Order", "com.acme.Order");
	key("com.acme.Order$$Lambda$14/0x0000000800c03000", "com.acme.Order$$Lambda");
	key("com.acme.Order$$Lambda+0x00007f691c001000", "com.acme.Order$$Lambda");
	key("com.acme.Order$$Lambda/0x000001000c0a3c58[]", "com.acme.Order$$Lambda[]");
	key("jdk.internal.reflect.GeneratedMethodAccessor12", "jdk.internal.reflect.GeneratedMethodAccessor12");
	key("a/0xZZ", "a/0xZZ");	/* no hex digit after 0x: kept */
	char small[8];
	assert_string_equal(hdiff_class_key("com.acme.Order", small, sizeof small), "com.acm");
	assert_string_equal(hdiff_class_key("X$$Lambda$1", small, sizeof small), "X$$Lamb");
}

static void packages(void **state)
{
	(void)state;
	char buf[64];
	assert_string_equal(hdiff_package("com.acme.Order", buf, sizeof buf), "com.acme");
	assert_string_equal(hdiff_package("com.acme.Order$Line[][]", buf, sizeof buf), "com.acme");
	assert_string_equal(hdiff_package("byte[]", buf, sizeof buf), "byte[]");
	assert_string_equal(hdiff_package("int[][]", buf, sizeof buf), "int[][]");
	assert_string_equal(hdiff_package("Main", buf, sizeof buf), "<default package>");
	assert_string_equal(hdiff_package("Main[]", buf, sizeof buf), "<default package>");
}

static void conditions(void **state)
{
	(void)state;
	struct hdiff_cond c;
	struct hs_error err;
	assert_int_equal(hdiff_cond_parse("com.acme.*:+20%", &c, &err), HS_OK);
	assert_string_equal(c.pattern, "com.acme.*");
	assert_true(c.pct);
	assert_true(c.limit == 20.0);
	hdiff_cond_free(&c);
	assert_int_equal(hdiff_cond_parse("Entry:+2.5%", &c, &err), HS_OK);
	assert_true(c.pct && c.limit == 2.5);
	hdiff_cond_free(&c);
	assert_int_equal(hdiff_cond_parse("com.acme.*:+50MB", &c, &err), HS_OK);
	assert_false(c.pct);
	assert_true(c.limit == 50.0 * 1024 * 1024);
	hdiff_cond_free(&c);
	assert_int_equal(hdiff_cond_parse("a.B:+0", &c, &err), HS_OK);
	assert_true(!c.pct && c.limit == 0);
	hdiff_cond_free(&c);
	/* the last colon splits: a pattern may not hold one, but the limit never does */
	assert_int_equal(hdiff_cond_parse("a:b:+1K", &c, &err), HS_OK);
	assert_string_equal(c.pattern, "a:b");
	hdiff_cond_free(&c);
	const char *bad[] = {"com.acme.*", "com.acme.*:20%", ":+20%", "x:+", "x:+20%%", "x:+-5%",
			     "x:+lots", "x:+50XB", "x:+nan%"};
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
		assert_int_equal(hdiff_cond_parse(bad[k], &c, &err), HS_ERR);
		assert_non_null(strstr(err.msg, "--fail-if '"));
		assert_null(c.text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(class_keys),
		cmocka_unit_test(packages),
		cmocka_unit_test(conditions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
