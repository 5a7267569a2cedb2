/*
 * test_extern.c - native extensions (src/dsl/extern.c): functions of libm
 * and of the test library build/unit/libhsext.so (tests/unit/extlib.c,
 * found next to this program) bound with ext_bind and called with
 * ext_call; every declaration error (library, symbol, signature) and call
 * error with its exact message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/dsl/extern.h"

static char extlib[256];	/* the test library's path */

static struct ext_value vi(int64_t i)
{
	struct ext_value v = {EXT_INT, {.i = i}};
	return v;
}

static struct ext_value vf(double f)
{
	struct ext_value v = {EXT_FLOAT, {.f = f}};
	return v;
}

static struct ext_value vb(bool b)
{
	struct ext_value v = {EXT_BOOL, {.b = b}};
	return v;
}

static struct ext_value vs(const char *s)
{
	struct ext_value v = {EXT_STRING, {.s = s}};
	return v;
}

static struct ext_fn *bind_ok(const char *lib, const char *name, const char *sig)
{
	struct ext_fn *f = NULL;
	struct hs_error err;
	hs_error_clear(&err);
	enum ext_status st = ext_bind(lib, name, sig, &f, &err);
	if (st != EXT_OK)
		fail_msg("ext_bind %s %s %s: %s", lib, name, sig, err.msg);
	assert_non_null(f);
	return f;
}

/* call_ok: f(args) must succeed; its result. */
static struct ext_value call_ok(struct ext_fn *f, int n, const struct ext_value *args)
{
	struct ext_value r;
	struct hs_error err;
	hs_error_clear(&err);
	if (ext_call(f, args, n, &r, &err) != EXT_OK)
		fail_msg("ext_call %s: %s", ext_name(f), err.msg);
	return r;
}

static void libm_functions(void **state)
{
	(void)state;
	struct ext_fn *c = bind_ok("libm.so.6", "cos", "(float) : float");
	assert_string_equal(ext_name(c), "cos");
	assert_int_equal(ext_nparams(c), 1);
	assert_int_equal(ext_param(c, 0), EXT_FLOAT);
	assert_int_equal(ext_result(c), EXT_FLOAT);
	struct ext_value a = vf(0.0), r = call_ok(c, 1, &a);
	assert_int_equal(r.type, EXT_FLOAT);
	assert_true(r.u.f == 1.0);
	a = vf(3.141592653589793);
	r = call_ok(c, 1, &a);
	assert_true(r.u.f > -1.0000001 && r.u.f < -0.9999999);
	a = vi(0);	/* an int converts to a float parameter */
	assert_true(call_ok(c, 1, &a).u.f == 1.0);
	ext_free(c);

	struct ext_fn *p = bind_ok("libm.so.6", "pow", " ( float ,float ):float ");
	struct ext_value two[2] = {vi(2), vf(10)};
	assert_true(call_ok(p, 2, two).u.f == 1024.0);
	two[0] = vf(9);
	two[1] = vf(0.5);
	assert_true(call_ok(p, 2, two).u.f == 3.0);
	ext_free(p);

	struct ext_fn *fl = bind_ok("libm.so.6", "floor", "(float) : float");
	a = vf(2.7);
	assert_true(call_ok(fl, 1, &a).u.f == 2.0);
	a = vf(-2.5);
	assert_true(call_ok(fl, 1, &a).u.f == -3.0);
	ext_free(fl);
}

static void test_library(void **state)
{
	(void)state;
	struct ext_fn *f = bind_ok(extlib, "add3", "(int, int, int) : int");
	struct ext_value three[3] = {vi(1), vi(20), vi(300)};
	struct ext_value r = call_ok(f, 3, three);
	assert_int_equal(r.type, EXT_INT);
	assert_int_equal(r.u.i, 321);
	three[0] = vi(INT64_C(5000000000));	/* wider than a C int: int is 64 bits */
	three[1] = vi(-1);
	three[2] = vi(0);
	assert_int_equal(call_ok(f, 3, three).u.i, INT64_C(4999999999));
	ext_free(f);

	f = bind_ok(extlib, "is_even", "(int) : bool");
	struct ext_value a = vi(42);
	r = call_ok(f, 1, &a);
	assert_int_equal(r.type, EXT_BOOL);
	assert_true(r.u.b);
	a = vi(-7);
	assert_false(call_ok(f, 1, &a).u.b);
	ext_free(f);

	f = bind_ok(extlib, "both", "(bool, bool) : bool");
	struct ext_value bb[2] = {vb(true), vb(true)};
	assert_true(call_ok(f, 2, bb).u.b);	/* C's 7 is true */
	bb[1] = vb(false);
	assert_false(call_ok(f, 2, bb).u.b);
	ext_free(f);

	f = bind_ok(extlib, "str_len", "(string) : int");
	a = vs("heapsh \xc3\xa9");	/* bytes, not characters */
	assert_int_equal(call_ok(f, 1, &a).u.i, 9);
	a = vs(NULL);
	assert_int_equal(call_ok(f, 1, &a).u.i, -1);
	ext_free(f);

	f = bind_ok(extlib, "greet", "() : string");
	r = call_ok(f, 0, NULL);
	assert_int_equal(r.type, EXT_STRING);
	assert_string_equal(r.u.s, "hello from libhsext");
	free((char *)r.u.s);	/* a copy: the library's own string is static */
	ext_free(f);

	f = bind_ok(extlib, "nothing", "() : string");
	r = call_ok(f, 0, NULL);
	assert_int_equal(r.type, EXT_STRING);
	assert_null(r.u.s);
	ext_free(f);

	/* a string result that is an argument: copied before the call's strings go */
	f = bind_ok(extlib, "pick", "(bool, string, string) : string");
	char buf[] = "first";
	struct ext_value pk[3] = {vb(true), vs(buf), vs("second")};
	r = call_ok(f, 3, pk);
	buf[0] = 'F';
	assert_string_equal(r.u.s, "first");
	free((char *)r.u.s);
	pk[0] = vb(false);
	r = call_ok(f, 3, pk);
	assert_string_equal(r.u.s, "second");
	free((char *)r.u.s);
	ext_free(f);

	f = bind_ok(extlib, "scale", "(float, int) : float");
	struct ext_value sc[2] = {vf(1.25), vi(4)};
	assert_true(call_ok(f, 2, sc).u.f == 5.0);
	ext_free(f);

	struct ext_fn *bump = bind_ok(extlib, "bump", "(int) : void");
	struct ext_fn *cnt = bind_ok(extlib, "counter", "() : int");
	a = vi(5);
	r = call_ok(bump, 1, &a);
	assert_int_equal(r.type, EXT_VOID);
	call_ok(bump, 1, &a);
	assert_int_equal(call_ok(cnt, 0, NULL).u.i, 10);
	ext_free(bump);
	ext_free(cnt);

	/* the most parameters a signature may have */
	f = bind_ok(extlib, "sum16", "(int, int, int, int, int, int, int, int, int, int, int, "
				     "int, int, int, int, int) : int");
	struct ext_value many[16];
	int64_t want = 0;
	for (int k = 0; k < 16; k++) {
		many[k] = vi(k + 1);
		want += (int64_t)(k + 1) * (k + 1);
	}
	assert_int_equal(call_ok(f, 16, many).u.i, want);
	ext_free(f);
}

/* bind_fails: ext_bind must fail with status st and exactly message msg. */
static void bind_fails(const char *lib, const char *name, const char *sig, enum ext_status st,
		       const char *msg, int64_t offset)
{
	struct ext_fn *f = (struct ext_fn *)&f;	/* must become NULL */
	struct hs_error err;
	hs_error_clear(&err);
	assert_int_equal(ext_bind(lib, name, sig, &f, &err), st);
	assert_null(f);
	assert_string_equal(err.msg, msg);
	assert_int_equal(err.offset, offset);
}

static void declaration_errors(void **state)
{
	(void)state;
	bind_fails("libnope-heapsh.so.1", "cos", "(float) : float", EXT_ERR_LIB,
		   "cannot load \"libnope-heapsh.so.1\": libnope-heapsh.so.1: cannot open shared "
		   "object file: No such file or directory", -1);
	bind_fails("./no/such/dir/libx.so", "f", "() : int", EXT_ERR_LIB,
		   "cannot load \"./no/such/dir/libx.so\": ./no/such/dir/libx.so: cannot open "
		   "shared object file: No such file or directory", -1);
	bind_fails("libm.so.6", "cosine", "(float) : float", EXT_ERR_SYM,
		   "no function 'cosine' in \"libm.so.6\"", -1);
	char msg[600];
	snprintf(msg, sizeof msg, "no function 'add4' in \"%s\"", extlib);
	bind_fails(extlib, "add4", "(int) : int", EXT_ERR_SYM, msg, -1);

	static const struct {
		const char *sig, *what;
		int64_t at;
	} bad[] = {
		{"(flot) : float", "unknown type 'flot' (types: int, float, bool, string; void "
				   "as the result)", 1},
		{"(float) : double", "unknown type 'double' (types: int, float, bool, string; "
				     "void as the result)", 10},
		{"float : float", "expected '(' to open the parameters", 0},
		{"", "expected '(' to open the parameters", 0},
		{"(float) float", "expected ':' and the result type", 8},
		{"(float)", "expected ':' and the result type", 7},
		{"(float) :", "expected a type, found the end", 9},
		{"(float,) : float", "expected a type, found ')'", 7},
		{"(, float) : float", "expected a type, found ','", 1},
		{"(float : float", "expected ',' or ')' after a parameter type", 7},
		{"(float float) : float", "expected ',' or ')' after a parameter type", 7},
		{"(void) : float", "void is only a result type (write () for no parameters)", 1},
		{"(float) : float;", "unexpected text after the result type", 15},
		{"(int,int,int,int,int,int,int,int,int,int,int,int,int,int,int,int,int) : int",
		 "more than 16 parameters", 65},
	};
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
		snprintf(msg, sizeof msg, "bad signature \"%s\" for cos in \"libm.so.6\": %s at "
			 "character %d", bad[k].sig, bad[k].what, (int)bad[k].at + 1);
		bind_fails("libm.so.6", "cos", bad[k].sig, EXT_ERR_SIG, msg, bad[k].at);
	}
	/* the signature is checked before anything is loaded */
	bind_fails("libnope-heapsh.so.1", "f", "(flot) : int", EXT_ERR_SIG,
		   "bad signature \"(flot) : int\" for f in \"libnope-heapsh.so.1\": unknown type "
		   "'flot' (types: int, float, bool, string; void as the result) at character 2", 1);
}

/* call_fails: f(args) must fail with exactly msg. */
static void call_fails(struct ext_fn *f, int n, const struct ext_value *args, const char *msg)
{
	struct ext_value r;
	struct hs_error err;
	hs_error_clear(&err);
	assert_int_equal(ext_call(f, args, n, &r, &err), EXT_ERR_CALL);
	assert_string_equal(err.msg, msg);
}

static void call_errors(void **state)
{
	(void)state;
	struct ext_fn *f = bind_ok(extlib, "add3", "(int, int, int) : int");
	struct ext_value args[3] = {vi(1), vi(2), vi(3)};
	call_fails(f, 2, args, "add3 takes 3 arguments, not 2");
	call_fails(f, 0, NULL, "add3 takes 3 arguments, not 0");
	args[1] = vf(2.0);	/* floats do not narrow to ints */
	call_fails(f, 3, args, "argument 2 of add3 must be an int, not a float");
	args[1] = vs("2");
	call_fails(f, 3, args, "argument 2 of add3 must be an int, not a string");
	args[1] = vb(true);
	call_fails(f, 3, args, "argument 2 of add3 must be an int, not a bool");
	ext_free(f);

	f = bind_ok("libm.so.6", "cos", "(float) : float");
	call_fails(f, 1, (struct ext_value[]){vs("0")}, "argument 1 of cos must be a float, not a "
		   "string");
	ext_free(f);
	f = bind_ok(extlib, "greet", "() : string");
	call_fails(f, 1, (struct ext_value[]){vi(1)}, "greet takes 0 arguments, not 1");
	ext_free(f);
	f = bind_ok(extlib, "is_even", "(int) : bool");
	call_fails(f, 1, (struct ext_value[]){vb(false)}, "argument 1 of is_even must be an int, "
		   "not a bool");
	ext_free(f);
	ext_free(NULL);
}

int main(int argc, char **argv)
{
	(void)argc;
	/* the test library is built next to this program (Makefile: build/unit/libhsext.so) */
	const char *slash = strrchr(argv[0], '/');
	int dir = slash ? (int)(slash - argv[0]) : 1;
	snprintf(extlib, sizeof extlib, "%.*s/libhsext.so", dir, slash ? argv[0] : ".");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(libm_functions),
		cmocka_unit_test(test_library),
		cmocka_unit_test(declaration_errors),
		cmocka_unit_test(call_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
