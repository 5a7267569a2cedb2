/*
 * filemap.h - the files heapsh maps that other processes can change: heap
 * dumps and index files. A file cut short (or rewritten in place, which
 * truncates it first) while mapped makes a read of a page past its new end
 * raise SIGBUS. The mappings are noted here, so that a front end's SIGBUS
 * handler can say which file changed and where, and stop cleanly instead
 * of crashing (src/shell/main.c).
 *
 * Up to FM_SLOTS mappings are noted at once; past that, a mapping is not
 * noted and its SIGBUS is the default crash. Ownership: nothing is
 * allocated; a noted path is copied (truncated to FM_PATH bytes).
 */
#ifndef HS_FILEMAP_H
#define HS_FILEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FM_SLOTS 64
#define FM_PATH 240

/* fm_note: [p, p + len) maps file path from byte off on. */
void fm_note(const void *p, size_t len, uint64_t off, const char *path);
/* fm_note_fd: the same, the path read from the descriptor fd (/proc/self/fd). */
void fm_note_fd(const void *p, size_t len, uint64_t off, int fd);
/* fm_forget: no noted mapping overlaps [p, p + len) any more (call before
 * munmap of anything that may have been noted). */
void fm_forget(const void *p, size_t len);

/*
 * fm_explain: when addr lies in a noted mapping, a message for the user in
 * buf (cap bytes, NUL-terminated): the file, the byte offset read, what
 * happened and what to do; true. False when addr is in none. Async-signal
 * safe: it takes no lock and allocates nothing, for a SIGBUS handler.
 */
bool fm_explain(const void *addr, char *buf, size_t cap);

#endif
