/* heapif.c - what every backend of the heap-access interface shares (heapif.h). */
#include "heapif.h"

#include <stdarg.h>
#include <stdio.h>

void hv_set_fail(struct hv *v, enum hv_fail f, const char *fmt, ...)
{
	if (v->fail != HV_OK)
		return;
	v->fail = f;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->why, sizeof v->why, fmt, ap);
	va_end(ap);
}
