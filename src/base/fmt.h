/*
 * fmt.h - numbers as text the way Java writes them, so heapsh shows field
 * values as the program would print them; counts in English.
 */
#ifndef HS_FMT_H
#define HS_FMT_H

#include <stdbool.h>
#include <stddef.h>

/*
 * fmt_double: x as Java's Double.toString (or Float.toString when
 * is_float): the shortest digits that read back as the same value, plain
 * ("749250.0", "0.001") for 1e-3 <= |x| < 1e7, else "1.0E7". buf holds
 * at least 32 bytes.
 */
void fmt_double(char *buf, size_t cap, double x, bool is_float);

/*
 * fmt_count: n with a comma every three digits ("2,600"), into buf (cap
 * bytes, 32 are always enough); returns buf.
 */
char *fmt_count(char *buf, size_t cap, unsigned long long n);

/*
 * fmt_bytes: a byte count as people read it, binary units with one decimal
 * from 1 KB ("512 bytes", "1.5 KB", "137.2 MB", "2.0 GB"), into buf (cap
 * bytes, 32 are always enough); returns buf.
 */
char *fmt_bytes(char *buf, size_t cap, unsigned long long n);

/*
 * A growing text: fmt_appendf adds printf-style text to t (s NUL-terminated,
 * len bytes, cap allocated; start from {0}); out of memory ends the work
 * as every allocation does (mem.h). t->s is the caller's to free().
 */
struct fmt_text {
	char *s;
	size_t len, cap;
};
void fmt_appendf(struct fmt_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* fmt_s: "s" after a count of n other than 1 ("1 instance", "2 instances"). */
static inline const char *fmt_s(unsigned long long n)
{
	return n == 1 ? "" : "s";
}

/* fmt_ordinal: the English ordinal suffix of n: 1st, 2nd, 3rd, 4th, 11th, 22nd. */
static inline const char *fmt_ordinal(unsigned long long n)
{
	if (n % 100 >= 11 && n % 100 <= 13)
		return "th";
	return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

#endif
