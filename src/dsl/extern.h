/*
 * extern.h - native extensions: a function of a shared library, bound by
 * name and a declared signature, called through libffi (issue 7). The query
 * language's `extern` statement and the Lua bindings both use it; it knows
 * nothing of the evaluator.
 *
 * Signatures: "(TYPES) : TYPE", e.g. "(float) : float", "(int, int) : int",
 * "() : bool", "(string) : int", "(int) : void". Blanks are free. Types and
 * the C types they are passed as:
 *
 *   int     int64_t (a C long on LP64 Linux)   object ids are ints
 *   float   double
 *   bool    int (0 false, anything else true)
 *   string  const char * (NUL-terminated UTF-8)
 *   void    nothing (result only)
 *
 * At most EXT_MAX_PARAMS parameters.
 *
 * Safety: the bound function is native code. heapsh trusts the signature;
 * a wrong one, or a function that crashes, takes the process down. Strings
 * passed in are valid only during the call.
 *
 * Ownership: ext_bind returns an ext_fn freed with ext_free (which drops its
 * reference to the library, dlclose). A string result of ext_call is a
 * malloc'd copy the caller frees with free().
 *
 * Errors: functions return EXT_OK or a negative ext_status and fill the
 * caller's hs_error with a message naming the library, the function and,
 * for a signature, the character where it goes wrong (also in err->offset,
 * 0-based into the signature; -1 for other errors).
 *
 * Source: the libffi manual (ffi_prep_cif, ffi_call, "The Basics"), and
 * dlopen(3)/dlsym(3).
 */
#ifndef HS_EXTERN_H
#define HS_EXTERN_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/mem.h"

#define EXT_MAX_PARAMS 16

enum ext_type { EXT_VOID, EXT_INT, EXT_FLOAT, EXT_BOOL, EXT_STRING };

enum ext_status {
	EXT_OK = 0,
	EXT_ERR_LIB = -1,	/* the library could not be loaded */
	EXT_ERR_SYM = -2,	/* the library has no such symbol */
	EXT_ERR_SIG = -3,	/* the signature is malformed or names an unknown type */
	EXT_ERR_CALL = -4	/* wrong argument count or kind (ext_call) */
};

/*
 * An argument or result. type EXT_STRING with s == NULL is a C NULL (a
 * result: the function returned NULL; an argument: passed as NULL).
 */
struct ext_value {
	enum ext_type type;
	union {
		int64_t i;
		double f;
		bool b;
		const char *s;
	} u;
};

struct ext_fn;

/*
 * ext_bind: load lib (dlopen, RTLD_NOW | RTLD_LOCAL; a name without '/'
 * such as "libm.so.6" goes through the dynamic linker's search, one with
 * '/' is a path, relative to the working directory), find the symbol name
 * in it, parse signature and prepare the libffi call interface. *out gets
 * the function (NULL on failure).
 * Returns EXT_OK, EXT_ERR_SIG (checked first, nothing is loaded),
 * EXT_ERR_LIB (the message carries dlerror's text) or EXT_ERR_SYM.
 */
enum ext_status ext_bind(const char *lib, const char *name, const char *signature,
			 struct ext_fn **out, struct hs_error *err);

/*
 * ext_call: call f with args[0..nargs). Each argument's type must be the
 * declared one, except that an int converts to a float parameter. *ret gets
 * the result with the declared result type (EXT_VOID: nothing); a string
 * result is copied (the caller frees ret->u.s), NULL stays NULL.
 * Returns EXT_OK or EXT_ERR_CALL (count or type mismatch; nothing was called).
 */
enum ext_status ext_call(const struct ext_fn *f, const struct ext_value *args, int nargs,
			 struct ext_value *ret, struct hs_error *err);

/* ext_free: release f and its reference to the library; f may be NULL. */
void ext_free(struct ext_fn *f);

/* The bound function's name, parameter count and types, and result type. */
const char *ext_name(const struct ext_fn *f);
int ext_nparams(const struct ext_fn *f);
enum ext_type ext_param(const struct ext_fn *f, int k);
enum ext_type ext_result(const struct ext_fn *f);

/*
 * ext_type_parse: the type named by s[0..len) ("int", "float", "bool",
 * "string", "void"); false when it names none.
 */
bool ext_type_parse(const char *s, size_t len, enum ext_type *t);

/* ext_type_name: "int", "float", "bool", "string" or "void". */
const char *ext_type_name(enum ext_type t);

#endif
