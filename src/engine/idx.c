/* idx.c - the on-disk index; see idx.h. */
#include "idx.h"

#include "../base/big.h"
#include "../base/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define MAGIC "HEAPSHIX"
#define VERSION 2u
#define BOM 0x01020304u

struct key {
	uint64_t size, mtime_s, mtime_ns, head_hash;
};

struct section {
	uint32_t tag;
	uint64_t len;
	const uint8_t *data;	/* in the file's mapping, or owned */
	bool owned;		/* a big array of its own (not yet in a file) */
};

struct idx {
	char *path;		/* index file */
	char *alt_path;		/* cache-dir location, if different */
	struct key key;
	bool have_key;
	struct section *sec;
	int nsec;
	const uint8_t *map;	/* the index file, mapped read-only, or NULL */
	size_t maplen;
	char note[512];
};

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static bool dump_key(const char *path, struct key *k)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return false;
	k->size = (uint64_t)st.st_size;
	k->mtime_s = (uint64_t)st.st_mtim.tv_sec;
	k->mtime_ns = (uint64_t)st.st_mtim.tv_nsec;
	uint8_t buf[65536];
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	ssize_t got = read(fd, buf, sizeof buf);
	close(fd);
	k->head_hash = got > 0 ? fnv1a(buf, (size_t)got) : 0;
	return true;
}

static char *cache_path(const char *dump_path)
{
	char *abs = realpath(dump_path, NULL);
	const char *p = abs ? abs : dump_path;
	uint64_t h = fnv1a((const uint8_t *)p, strlen(p));
	const char *base = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char *dir = xdg && *xdg ? xasprintf("%s/heapsh", xdg)
				: xasprintf("%s/.cache/heapsh", home ? home : "/tmp");
	char *r = xasprintf("%s/%s.%016llx.hsidx", dir, base, (unsigned long long)h);
	free(dir);
	free(abs);
	return r;
}

static void drop_sections(struct idx *x)
{
	for (int i = 0; i < x->nsec; i++)
		if (x->sec[i].owned)
			big_free((void *)x->sec[i].data);
	free(x->sec);
	x->sec = NULL;
	x->nsec = 0;
	if (x->map)
		munmap((void *)x->map, x->maplen);
	x->map = NULL;
	x->maplen = 0;
}

/*
 * load: map and check the file at path; false (and a note) if unusable.
 * The sections stay in the mapping: file pages the kernel reads on demand
 * and may drop, not a copy in memory. check_crc is false only for a file
 * this process has just written.
 */
static bool load(struct idx *x, const char *path, bool check_crc)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	size_t len = (size_t)st.st_size;
	const uint8_t *buf = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	close(fd);
	if (buf == MAP_FAILED) {
		snprintf(x->note, sizeof x->note, "ignoring index %s: %s; it will be rebuilt", path,
			 len ? strerror(errno) : "not a heapsh index or truncated");
		return false;
	}
	x->map = buf;
	x->maplen = len;
	const char *why = NULL;
	size_t hdr = 8 + 4 + 4 + sizeof(struct key) + 4;
	struct key k;
	uint32_t v, bom, nsec;
	if (len < hdr + 4 || memcmp(buf, MAGIC, 8)) {
		why = "not a heapsh index or truncated";
		goto bad;
	}
	uint32_t crc_stored;
	memcpy(&crc_stored, buf + len - 4, 4);
	if (check_crc && (uint32_t)crc32_z(0, buf, len - 4) != crc_stored) {
		why = "checksum mismatch (truncated or corrupt)";
		goto bad;
	}
	memcpy(&v, buf + 8, 4);
	memcpy(&bom, buf + 12, 4);
	memcpy(&k, buf + 16, sizeof k);
	memcpy(&nsec, buf + 16 + sizeof k, 4);
	if (v != VERSION || bom != BOM) {
		why = "written by another heapsh version or machine";
		goto bad;
	}
	if (memcmp(&k, &x->key, sizeof k)) {
		why = "stale: the dump has changed since it was written";
		goto bad;
	}
	size_t p = hdr;
	for (uint32_t i = 0; i < nsec; i++) {
		struct section s;
		if (len - 4 - p < 12) {
			why = "section table cut short";
			goto bad;
		}
		memcpy(&s.tag, buf + p, 4);
		memcpy(&s.len, buf + p + 4, 8);
		p += 12;
		if (s.len > len - 4 - p) {
			why = "section runs past the end";
			goto bad;
		}
		s.data = buf + p;
		s.owned = false;
		p += s.len;
		x->sec = xreallocarray(x->sec, (size_t)x->nsec + 1, sizeof *x->sec);
		x->sec[x->nsec++] = s;
	}
	return true;
bad:
	snprintf(x->note, sizeof x->note, "ignoring index %s: %s; it will be rebuilt", path, why);
	drop_sections(x);
	return false;
}

struct idx *idx_open(const char *dump_path)
{
	struct idx *x = xcalloc(1, sizeof *x);
	x->path = xasprintf("%s.hsidx", dump_path);
	x->alt_path = cache_path(dump_path);
	x->have_key = dump_key(dump_path, &x->key);
	if (!x->have_key)
		return x;
	if (!load(x, x->path, true) && !x->nsec) {
		char keep[512];
		memcpy(keep, x->note, sizeof keep);
		if (load(x, x->alt_path, true)) {
			char *t = x->path;
			x->path = x->alt_path;
			x->alt_path = t;
		} else if (!x->note[0]) {
			memcpy(x->note, keep, sizeof keep);
		}
	}
	return x;
}

void idx_close(struct idx *x)
{
	if (!x)
		return;
	drop_sections(x);
	free(x->path);
	free(x->alt_path);
	free(x);
}

const char *idx_note(const struct idx *x)
{
	return x->note[0] ? x->note : NULL;
}

const char *idx_file(const struct idx *x)
{
	return x->path;
}

const void *idx_section(const struct idx *x, uint32_t tag, uint64_t *len)
{
	for (int i = 0; i < x->nsec; i++)
		if (x->sec[i].tag == tag) {
			*len = x->sec[i].len;
			return x->sec[i].data;
		}
	return NULL;
}

static bool write_all(int fd, const void *p, size_t n, uLong *crc)
{
	*crc = crc32_z(*crc, p, n);
	return io_write_full(fd, p, n);
}

static bool write_file(const struct idx *x, const char *path)
{
	/* The cache folder and its parents; fine if they exist. */
	char *dir = xstrdup(path);
	for (char *p = dir + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(dir, 0700);
			*p = '/';
		}
	free(dir);
	char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		free(tmp);
		return false;
	}
	uLong crc = crc32(0, NULL, 0);
	uint32_t v = VERSION, bom = BOM, nsec = (uint32_t)x->nsec;
	bool ok = write_all(fd, MAGIC, 8, &crc) && write_all(fd, &v, 4, &crc) &&
		  write_all(fd, &bom, 4, &crc) && write_all(fd, &x->key, sizeof x->key, &crc) &&
		  write_all(fd, &nsec, 4, &crc);
	for (int i = 0; ok && i < x->nsec; i++)
		ok = write_all(fd, &x->sec[i].tag, 4, &crc) && write_all(fd, &x->sec[i].len, 8, &crc) &&
		     write_all(fd, x->sec[i].data, x->sec[i].len, &crc);
	uint32_t c = (uint32_t)crc;
	uLong dummy = 0;
	ok = ok && write_all(fd, &c, 4, &dummy) && fsync(fd) == 0;
	ok = close(fd) == 0 && ok;
	if (ok && rename(tmp, path) != 0)
		ok = false;
	if (!ok)
		unlink(tmp);
	free(tmp);
	return ok;
}

/*
 * remap: after the file at x->path was written from the sections, map it
 * and let the sections point there, so that none is kept in memory. Keeps
 * the sections as they are when the file cannot be mapped.
 */
static void remap(struct idx *x)
{
	struct idx y;
	memset(&y, 0, sizeof y);
	y.key = x->key;
	if (!load(&y, x->path, false) || y.nsec != x->nsec) {
		drop_sections(&y);
		return;
	}
	drop_sections(x);
	x->sec = y.sec;
	x->nsec = y.nsec;
	x->map = y.map;
	x->maplen = y.maplen;
}

int idx_put(struct idx *x, uint32_t tag, const void *data, uint64_t len, struct hs_error *err)
{
	int i;
	for (i = 0; i < x->nsec && x->sec[i].tag != tag; i++)
		;
	if (i == x->nsec) {
		x->sec = xreallocarray(x->sec, (size_t)x->nsec + 1, sizeof *x->sec);
		x->nsec++;
	} else if (x->sec[i].owned) {
		big_free((void *)x->sec[i].data);
	}
	uint8_t *copy = big_alloc(len ? len : 1, 1);
	memcpy(copy, data, len);
	x->sec[i] = (struct section){tag, len, copy, true};
	if (!x->have_key) {
		hs_error_set(err, -1, "cannot index: the dump file cannot be read for its key");
		return HS_ERR;
	}
	if (write_file(x, x->path)) {
		remap(x);
		return HS_OK;
	}
	if (write_file(x, x->alt_path)) {
		char *t = x->path;
		x->path = x->alt_path;
		x->alt_path = t;
		remap(x);
		return HS_OK;
	}
	hs_error_set(err, -1, "cannot write the index %s or %s: %s; results are kept for "
		     "this session only", x->path, x->alt_path, strerror(errno));
	return HS_ERR;
}
