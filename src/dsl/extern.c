/*
 * extern.c - native extensions through libffi (extern.h). A bound function
 * keeps its library handle, its declared types and a prepared ffi_cif; a
 * call converts the arguments into C storage and goes through ffi_call.
 */
#include "extern.h"

#include <ctype.h>
#include <dlfcn.h>
#include <ffi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ext_fn {
	char *lib, *name;
	void *handle;		/* dlopen's; closed by ext_free */
	void *sym;		/* the function's address */
	int nparams;
	enum ext_type params[EXT_MAX_PARAMS], ret;
	ffi_type *atypes[EXT_MAX_PARAMS];	/* the cif points here */
	ffi_cif cif;
};

static const char *const type_names[] = {"void", "int", "float", "bool", "string"};

const char *ext_type_name(enum ext_type t)
{
	return type_names[t];
}

bool ext_type_parse(const char *s, size_t len, enum ext_type *t)
{
	for (size_t k = 0; k < sizeof type_names / sizeof *type_names; k++)
		if (strlen(type_names[k]) == len && !strncmp(s, type_names[k], len)) {
			*t = (enum ext_type)k;
			return true;
		}
	return false;
}

/* "an int", "a float", ... for messages. */
static const char *with_article(enum ext_type t)
{
	static const char *const a[] = {"void", "an int", "a float", "a bool", "a string"};
	return a[t];
}

static ffi_type *ffi_of(enum ext_type t)
{
	switch (t) {
	case EXT_INT: return &ffi_type_sint64;
	case EXT_FLOAT: return &ffi_type_double;
	case EXT_BOOL: return &ffi_type_sint;
	case EXT_STRING: return &ffi_type_pointer;
	default: return &ffi_type_void;
	}
}

/* ---- signatures ---- */

struct sig {
	const char *lib, *name, *text;
	const char *p;		/* the parse position in text */
	struct hs_error *err;
};

static enum ext_status sig_fail(struct sig *s, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static enum ext_status sig_fail(struct sig *s, const char *at, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	int64_t off = at - s->text;
	hs_error_set(s->err, off, "bad signature \"%s\" for %s in \"%s\": %s at character %d",
		     s->text, s->name, s->lib, what, (int)off + 1);
	return EXT_ERR_SIG;
}

static void blanks(struct sig *s)
{
	while (*s->p == ' ' || *s->p == '\t')
		s->p++;
}

/* One type name at s->p into *t; void_ok for the result. */
static enum ext_status sig_type(struct sig *s, enum ext_type *t, bool void_ok)
{
	blanks(s);
	const char *w = s->p;
	while (isalnum((unsigned char)*s->p) || *s->p == '_')
		s->p++;
	size_t len = (size_t)(s->p - w);
	if (!len && *w)
		return sig_fail(s, w, "expected a type, found '%c'", *w);
	if (!len)
		return sig_fail(s, w, "expected a type, found the end");
	if (!ext_type_parse(w, len, t))
		return sig_fail(s, w, "unknown type '%.*s' (types: int, float, bool, string; "
				"void as the result)", (int)len, w);
	if (*t == EXT_VOID && !void_ok)
		return sig_fail(s, w, "void is only a result type (write () for no parameters)");
	return EXT_OK;
}

/* parse_sig: "(T, ...) : T" into f's parameter and result types. */
static enum ext_status parse_sig(struct sig *s, struct ext_fn *f)
{
	enum ext_status st;
	blanks(s);
	if (*s->p != '(')
		return sig_fail(s, s->p, "expected '(' to open the parameters");
	s->p++;
	blanks(s);
	if (*s->p == ')') {
		s->p++;
	} else {
		for (;;) {
			const char *at = s->p;
			enum ext_type t;
			if ((st = sig_type(s, &t, false)) != EXT_OK)
				return st;
			if (f->nparams == EXT_MAX_PARAMS)
				return sig_fail(s, at, "more than %d parameters", EXT_MAX_PARAMS);
			f->params[f->nparams++] = t;
			blanks(s);
			if (*s->p == ')') {
				s->p++;
				break;
			}
			if (*s->p != ',')
				return sig_fail(s, s->p, "expected ',' or ')' after a parameter type");
			s->p++;
		}
	}
	blanks(s);
	if (*s->p != ':')
		return sig_fail(s, s->p, "expected ':' and the result type");
	s->p++;
	if ((st = sig_type(s, &f->ret, true)) != EXT_OK)
		return st;
	blanks(s);
	if (*s->p)
		return sig_fail(s, s->p, "unexpected text after the result type");
	return EXT_OK;
}

/* ---- binding and calling ---- */

enum ext_status ext_bind(const char *lib, const char *name, const char *signature,
			 struct ext_fn **out, struct hs_error *err)
{
	enum ext_status st;
	struct ext_fn *f = xcalloc(1, sizeof *f);
	*out = NULL;
	struct sig s = {lib, name, signature, signature, err};
	if ((st = parse_sig(&s, f)) != EXT_OK)
		goto fail;
	dlerror();
	f->handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!f->handle) {
		const char *why = dlerror();
		hs_error_set(err, -1, "cannot load \"%s\": %s", lib, why ? why : "dlopen failed");
		st = EXT_ERR_LIB;
		goto fail;
	}
	dlerror();
	f->sym = dlsym(f->handle, name);
	/* dlerror's text names the library's resolved path: the message keeps to what was written */
	if (dlerror() || !f->sym) {
		hs_error_set(err, -1, "no function '%s' in \"%s\"", name, lib);
		st = EXT_ERR_SYM;
		goto fail;
	}
	for (int k = 0; k < f->nparams; k++)
		f->atypes[k] = ffi_of(f->params[k]);
	if (ffi_prep_cif(&f->cif, FFI_DEFAULT_ABI, (unsigned)f->nparams, ffi_of(f->ret),
			 f->atypes) != FFI_OK) {
		hs_error_set(err, -1, "libffi cannot call %s in \"%s\" with signature \"%s\"", name,
			     lib, signature);
		st = EXT_ERR_SIG;
		goto fail;
	}
	f->lib = xstrdup(lib);
	f->name = xstrdup(name);
	*out = f;
	return EXT_OK;
fail:
	ext_free(f);
	return st;
}

enum ext_status ext_call(const struct ext_fn *f, const struct ext_value *args, int nargs,
			 struct ext_value *ret, struct hs_error *err)
{
	union {
		int64_t i;
		double f;
		int b;
		const char *s;
	} slot[EXT_MAX_PARAMS];
	void *ptrs[EXT_MAX_PARAMS];
	memset(ret, 0, sizeof *ret);
	if (nargs != f->nparams) {
		hs_error_set(err, -1, "%s takes %d argument%s, not %d", f->name, f->nparams,
			     f->nparams == 1 ? "" : "s", nargs);
		return EXT_ERR_CALL;
	}
	for (int k = 0; k < nargs; k++) {
		enum ext_type want = f->params[k], got = args[k].type;
		if (want == EXT_FLOAT && got == EXT_INT)
			slot[k].f = (double)args[k].u.i;
		else if (want != got) {
			hs_error_set(err, -1, "argument %d of %s must be %s, not %s", k + 1, f->name,
				     with_article(want), with_article(got));
			return EXT_ERR_CALL;
		} else if (want == EXT_INT)
			slot[k].i = args[k].u.i;
		else if (want == EXT_FLOAT)
			slot[k].f = args[k].u.f;
		else if (want == EXT_BOOL)
			slot[k].b = args[k].u.b;
		else
			slot[k].s = args[k].u.s;
		ptrs[k] = &slot[k];
	}
	/* libffi widens integral results narrower than a register to ffi_arg */
	union {
		ffi_arg a;
		ffi_sarg sa;
		int64_t i;
		double f;
		void *p;
	} rv;
	memset(&rv, 0, sizeof rv);
	ffi_call((ffi_cif *)&f->cif, FFI_FN(f->sym), &rv, ptrs);
	ret->type = f->ret;
	switch (f->ret) {
	case EXT_INT: ret->u.i = rv.i; break;
	case EXT_FLOAT: ret->u.f = rv.f; break;
	case EXT_BOOL: ret->u.b = (int)rv.sa != 0; break;
	case EXT_STRING: ret->u.s = rv.p ? xstrdup(rv.p) : NULL; break;
	case EXT_VOID: break;
	}
	return EXT_OK;
}

void ext_free(struct ext_fn *f)
{
	if (!f)
		return;
	if (f->handle)
		dlclose(f->handle);
	free(f->lib);
	free(f->name);
	free(f);
}

const char *ext_name(const struct ext_fn *f)
{
	return f->name;
}

int ext_nparams(const struct ext_fn *f)
{
	return f->nparams;
}

enum ext_type ext_param(const struct ext_fn *f, int k)
{
	return f->params[k];
}

enum ext_type ext_result(const struct ext_fn *f)
{
	return f->ret;
}
