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
