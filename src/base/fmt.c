/* fmt.c - Java-style number formatting; see fmt.h. */
#include "fmt.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

static bool same(double x, const char *s, bool is_float)
{
	double b = strtod(s, NULL);
	return is_float ? (float)b == (float)x : b == x;
}

void fmt_double(char *buf, size_t cap, double x, bool is_float)
{
	if (isnan(x)) {
		snprintf(buf, cap, "NaN");
		return;
	}
	if (isinf(x)) {
		snprintf(buf, cap, x > 0 ? "Infinity" : "-Infinity");
		return;
	}
	double ax = fabs(x);
	int maxp = is_float ? 9 : 17;
	if (x == 0 || (ax >= 1e-3 && ax < 1e7)) {
		/* fewest decimals that round-trip, at least one */
		for (int d = 1; d <= maxp + 3; d++) {
			snprintf(buf, cap, "%.*f", d, x);
			if (same(x, buf, is_float))
				break;
		}
		return;
	}
	/* d.dddE[-]n with the fewest significant digits that round-trip */
	char tmp[64];
	for (int p = 1; p <= maxp; p++) {
		snprintf(tmp, sizeof tmp, "%.*e", p - 1, x);
		if (same(x, tmp, is_float))
			break;
	}
	char *e = strchr(tmp, 'e');
	int exp = atoi(e + 1);
	*e = 0;
	if (!strchr(tmp, '.'))
		snprintf(buf, cap, "%s.0E%d", tmp, exp);
	else
		snprintf(buf, cap, "%sE%d", tmp, exp);
}

char *fmt_count(char *buf, size_t cap, unsigned long long n)
{
	char digits[32];
	int len = snprintf(digits, sizeof digits, "%llu", n);
	size_t o = 0;
	for (int k = 0; k < len && o + 1 < cap; k++) {
		if (k && (len - k) % 3 == 0 && o + 2 < cap)
			buf[o++] = ',';
		buf[o++] = digits[k];
	}
	if (cap)
		buf[o < cap ? o : cap - 1] = 0;
	return buf;
}

char *fmt_bytes(char *buf, size_t cap, unsigned long long n)
{
	static const char *const units[] = {"KB", "MB", "GB", "TB", "PB", "EB"};
	if (n < 1024) {
		snprintf(buf, cap, "%llu byte%s", n, n == 1 ? "" : "s");
		return buf;
	}
	double x = (double)n / 1024;
	int u = 0;
	while (x >= 1023.95 && u < 5) {
		x /= 1024;
		u++;
	}
	snprintf(buf, cap, "%.1f %s", x, units[u]);
	return buf;
}

void fmt_appendf(struct fmt_text *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (t->len + (size_t)n + 1 > t->cap) {
		t->cap = 2 * (t->len + (size_t)n + 1);
		t->s = xrealloc(t->s, t->cap);
	}
	va_start(ap, fmt);
	vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}
