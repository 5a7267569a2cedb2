/*
 * extlib.c - a small native library (build/unit/libhsext.so) that
 * test_extern.c and the query tests (tests/queries/extern_*.hq) bind
 * through src/dsl/extern.c: one function per type the signatures know,
 * int (long), float (double), bool (int) and string (const char *), in
 * and out, plus void and the 16-parameter limit.
 */
#include <stddef.h>
#include <string.h>

long add3(long a, long b, long c);
int is_even(long n);
long str_len(const char *s);
const char *greet(void);
const char *nothing(void);
const char *pick(int first, const char *a, const char *b);
double scale(double x, long k);
int both(int a, int b);
void bump(long by);
long counter(void);
long sum16(long a1, long a2, long a3, long a4, long a5, long a6, long a7, long a8, long a9,
	   long a10, long a11, long a12, long a13, long a14, long a15, long a16);
long id_low16(long id);

long add3(long a, long b, long c)
{
	return a + b + c;
}

int is_even(long n)
{
	return n % 2 == 0;
}

/* -1 for NULL, so a test can see that NULL arrived */
long str_len(const char *s)
{
	return s ? (long)strlen(s) : -1;
}

const char *greet(void)
{
	return "hello from libhsext";
}

const char *nothing(void)
{
	return NULL;
}

const char *pick(int first, const char *a, const char *b)
{
	return first ? a : b;
}

double scale(double x, long k)
{
	return x * (double)k;
}

/* bools arrive as C ints: any nonzero value is true */
int both(int a, int b)
{
	return a && b ? 7 : 0;
}

static long count;

void bump(long by)
{
	count += by;
}

long counter(void)
{
	return count;
}

long sum16(long a1, long a2, long a3, long a4, long a5, long a6, long a7, long a8, long a9,
	   long a10, long a11, long a12, long a13, long a14, long a15, long a16)
{
	return a1 + 2 * a2 + 3 * a3 + 4 * a4 + 5 * a5 + 6 * a6 + 7 * a7 + 8 * a8 + 9 * a9 +
	       10 * a10 + 11 * a11 + 12 * a12 + 13 * a13 + 14 * a14 + 15 * a15 + 16 * a16;
}

/* the low 16 bits of an object id: enough to tell that the id arrived whole */
long id_low16(long id)
{
	return id & 0xffff;
}
