/* classname.c - class-name patterns (see classname.h). */
#include "classname.h"

#include <string.h>

bool cn_wild(const char *pattern)
{
	return strpbrk(pattern, "*?") != NULL;
}

bool cn_glob(const char *p, const char *s)
{
	const char *star = NULL, *back = NULL;
	while (*s) {
		if (*p == '*') {
			star = p++;
			back = s;
		} else if (*p == '?' || *p == *s) {
			p++;
			s++;
		} else if (star) {
			p = star + 1;
			s = ++back;
		} else {
			return false;
		}
	}
	while (*p == '*')
		p++;
	return !*p;
}

bool cn_tail(const char *name, const char *tail)
{
	size_t nl = strlen(name), tl = strlen(tail);
	if (tl > nl || !tl)
		return false;
	const char *s = name + nl - tl;
	for (size_t k = 0; k < tl; k++) {
		char a = s[k], b = tail[k];
		if (a == b || (b == '.' && a == '$'))
			continue;
		return false;
	}
	return s == name || s[-1] == '.' || s[-1] == '$';
}

uint32_t cn_select(const char *pattern, const char *const *names, uint32_t n, uint32_t *out)
{
	uint32_t m = 0;
	bool wild = cn_wild(pattern);
	for (uint32_t k = 0; k < n; k++)
		if (wild ? cn_glob(pattern, names[k]) : !strcmp(pattern, names[k]))
			out[m++] = k;
	if (!m && !wild)
		for (uint32_t k = 0; k < n; k++)
			if (cn_tail(names[k], pattern))
				out[m++] = k;
	return m;
}

/* put: text, n bytes, at *at in out as far as cap allows (keeping the NUL's byte). */
static void put(char *out, size_t cap, size_t *at, const char *text, size_t n)
{
	for (size_t i = 0; i < n; i++, (*at)++)
		if (*at + 1 < cap)
			out[*at] = text[i] == '/' ? '.' : text[i];
}

size_t cn_java_name(const char *name, bool signature, char *out, size_t cap)
{
	size_t dims = 0, at = 0;
	while (name[dims] == '[')
		dims++;
	const char *e = name + dims;
	const char *prim = NULL;
	/* a primitive type: an array's elements, or a signature's own (int.class: I) */
	switch ((dims || signature) && e[0] && !e[1] ? e[0] : 0) {
	case 'Z': prim = "boolean"; break;
	case 'B': prim = "byte"; break;
	case 'C': prim = "char"; break;
	case 'S': prim = "short"; break;
	case 'I': prim = "int"; break;
	case 'J': prim = "long"; break;
	case 'F': prim = "float"; break;
	case 'D': prim = "double"; break;
	case 'V': prim = dims ? NULL : "void"; break;
	default: break;
	}
	if (prim) {
		put(out, cap, &at, prim, strlen(prim));
	} else if (*e == 'L' && (dims || signature)) {	/* Lpkg/Name; */
		size_t n = strlen(e + 1);
		put(out, cap, &at, e + 1, n && e[n] == ';' ? n - 1 : n);
	} else {
		put(out, cap, &at, e, strlen(e));
	}
	for (size_t d = 0; d < dims; d++)
		put(out, cap, &at, "[]", 2);
	if (cap)
		out[at < cap ? at : cap - 1] = 0;
	return at;
}
