/* io.c - see io.h. */
#include "io.h"

#include <unistd.h>

bool io_write_full(int fd, const void *p, size_t n)
{
	const char *b = p;
	while (n) {
		ssize_t w = write(fd, b, n > (1u << 30) ? (1u << 30) : n);
		if (w <= 0)
			return false;
		b += w;
		n -= (size_t)w;
	}
	return true;
}

bool io_read_full(int fd, void *p, size_t n)
{
	char *b = p;
	while (n) {
		ssize_t r = read(fd, b, n > (1u << 30) ? (1u << 30) : n);
		if (r <= 0)
			return false;
		b += r;
		n -= (size_t)r;
	}
	return true;
}
