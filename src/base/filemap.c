/* filemap.c - the mapped files others can change; see filemap.h. */
#include "filemap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A noted mapping: base is set last and cleared first, so a reader that
 * sees it non-zero sees the rest (a handler on the thread that faulted). */
struct slot {
	_Atomic uintptr_t base;
	size_t len;
	uint64_t off;
	char path[FM_PATH];
};

static struct slot slots[FM_SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void fm_note(const void *p, size_t len, uint64_t off, const char *path)
{
	if (!p || !len)
		return;
	pthread_mutex_lock(&lock);
	for (int k = 0; k < FM_SLOTS; k++) {
		struct slot *s = &slots[k];
		if (atomic_load(&s->base))
			continue;
		s->len = len;
		s->off = off;
		snprintf(s->path, sizeof s->path, "%s", path ? path : "a mapped file");
		atomic_store(&s->base, (uintptr_t)p);
		break;
	}
	pthread_mutex_unlock(&lock);
}

void fm_note_fd(const void *p, size_t len, uint64_t off, int fd)
{
	char link[64], path[FM_PATH];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	path[n > 0 ? n : 0] = 0;
	fm_note(p, len, off, n > 0 ? path : NULL);
}

void fm_forget(const void *p, size_t len)
{
	uintptr_t lo = (uintptr_t)p, hi = lo + len;
	pthread_mutex_lock(&lock);
	for (int k = 0; k < FM_SLOTS; k++) {
		struct slot *s = &slots[k];
		uintptr_t b = atomic_load(&s->base);
		if (b && b < hi && lo < b + s->len)
			atomic_store(&s->base, 0);
	}
	pthread_mutex_unlock(&lock);
}

/* put: text at *at in buf, as far as cap allows (keeping the NUL's byte). */
static void put(char *buf, size_t cap, size_t *at, const char *text)
{
	while (*text && *at + 1 < cap)
		buf[(*at)++] = *text++;
}

static void put_u64(char *buf, size_t cap, size_t *at, uint64_t v)
{
	char digits[24];
	int n = 0;
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	char text[24];
	for (int i = 0; i < n; i++)
		text[i] = digits[n - 1 - i];
	text[n] = 0;
	put(buf, cap, at, text);
}

bool fm_explain(const void *addr, char *buf, size_t cap)
{
	uintptr_t a = (uintptr_t)addr;
	if (!cap)
		return false;
	for (int k = 0; k < FM_SLOTS; k++) {
		const struct slot *s = &slots[k];
		uintptr_t b = atomic_load(&s->base);
		if (!b || a < b || a >= b + s->len)
			continue;
		size_t at = 0;
		put(buf, cap, &at, "heapsh: ");
		put(buf, cap, &at, s->path);
		put(buf, cap, &at, " changed on disk while heapsh had it open: reading its byte ");
		put_u64(buf, cap, &at, s->off + (a - b));
		put(buf, cap, &at, " failed, as the file no longer reaches it (it was cut short, or "
			"is being written again in place). heapsh stops here: open the file again "
			"once nothing writes to it.\n");
		buf[at] = 0;
		return true;
	}
	return false;
}
