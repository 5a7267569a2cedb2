/*
 * fmt.h - numbers as text the way Java writes them, so heapsh shows field
 * values as the program would print them.
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

#endif
