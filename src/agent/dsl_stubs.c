/*
 * dsl_stubs.c - what the query language's evaluator (src/dsl/eval*.c),
 * which runs every ANALYZE request's program (analyze.c), calls and the
 * agent does not link:
 *   `allocations` (eval_allocations.c, src/alloc): read by heapsh, never
 *     sent to the JVM (prog.h);
 *   native functions (extern.c, libffi) and the parser (parse.c): a
 *     program arrives parsed, without externs (prog.h).
 * Each is a runtime error of the query, never a crash.
 */
#include <stdlib.h>

#include "../dsl/eval_internal.h"
#include "../dsl/extern.h"

struct value eval_allocations(struct ev *e, const struct node *at)
{
	eval_rt_error(e, at, "'allocations' is read by heapsh, not inside the JVM");
}

enum parse_status parse_snippet(const char *text, struct arena *a, struct stmt ***stmts, int *n,
				struct hs_error *err)
{
	(void)text;
	(void)a;
	*stmts = NULL;
	*n = 0;
	hs_error_set(err, -1, "the agent runs programs, not text");
	return PARSE_ERROR;
}

enum ext_status ext_bind(const char *lib, const char *name, const char *signature,
			 struct ext_fn **out, struct hs_error *err)
{
	(void)lib;
	(void)name;
	(void)signature;
	*out = NULL;
	hs_error_set(err, -1, "native functions run in heapsh, not inside the JVM");
	return EXT_ERR_LIB;
}

enum ext_status ext_call(const struct ext_fn *f, const struct ext_value *args, int nargs,
			 struct ext_value *ret, struct hs_error *err)
{
	(void)f;
	(void)args;
	(void)nargs;
	(void)ret;
	hs_error_set(err, -1, "native functions run in heapsh, not inside the JVM");
	return EXT_ERR_CALL;
}

void ext_free(struct ext_fn *f)
{
	(void)f;
}

const char *ext_name(const struct ext_fn *f)
{
	(void)f;
	return "?";
}

int ext_nparams(const struct ext_fn *f)
{
	(void)f;
	return 0;
}

enum ext_type ext_param(const struct ext_fn *f, int k)
{
	(void)f;
	(void)k;
	return EXT_VOID;
}

const char *ext_type_name(enum ext_type t)
{
	(void)t;
	return "?";
}
