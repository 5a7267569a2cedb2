/*
 * io.h - whole-buffer reads and writes on file descriptors, retrying short
 * transfers (the index file, the engine's temporary spill file).
 */
#ifndef HS_IO_H
#define HS_IO_H

#include <stdbool.h>
#include <stddef.h>

/* io_write_full / io_read_full: all n bytes, or false (errno says why). */
bool io_write_full(int fd, const void *p, size_t n);
bool io_read_full(int fd, void *p, size_t n);

#endif
