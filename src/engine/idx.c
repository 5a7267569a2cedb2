/* idx.c - the on-disk index; see idx.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* O_TMPFILE */
#endif
#include "idx.h"

#include "../base/big.h"
#include "../base/filemap.h"
#include "../base/fmt.h"
#include "../base/io.h"
#include "../base/u64map.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define MAGIC "HEAPSHIX"
#define VERSION 6u	/* 6: shallow sizes by HotSpot's layout per JDK (issue 35): the
			 * sizes and everything built on them in a file of 5 are
			 * recomputed; 5: a checksum per section, and sections appended
			 * in place; a tag's last section counts */
#define ALIGN 4096u	/* each section's payload starts at a multiple of this */
#define BOM 0x01020304u
#define APPENDS_MAX 256	/* sections a file may hold before it is written again */

struct key {
	uint64_t size, mtime_s, mtime_ns, head_hash;
};

/* A file as stat(2) sees it: any write, truncation, rename, chmod or
 * replacement changes its ctime, which no unprivileged process can set. */
struct stamp {
	uint64_t dev, ino, size, mtime_s, mtime_ns, ctime_s, ctime_ns;
};

/* The seal of an index (idx_vouch), in the user's private seal folder. */
#define SEAL_MAGIC "HSSEAL01"
#define SEAL_MARGIN_S 1	/* a file changed less than this before it was read
			 * may change again within its ctime's tick: not sealed */
struct seal {
	char magic[8];
	struct stamp file, dump;
	uint32_t crc;		/* the file's stored checksum */
	uint32_t mask;		/* sections vouched for (tag_bit) */
	uint32_t pathlen, pad;	/* then the index's path, pathlen bytes */
};

/* The header: magic, version, byte order mark, the dump's key, the count of
 * sections and a CRC-32 of all that; then each section: a record (its tag,
 * length and a CRC-32 of both and the payload) and, from the next multiple
 * of ALIGN, the payload. Bytes after the last section counted are not
 * read (an append cut short). A tag may come more than once: its last
 * section counts, the ones before are superseded (idx_put_parts appends
 * a replacement rather than writing the file again). */
#define HEADER (8 + 4 + 4 + sizeof(struct key) + 4 + 4)
#define RECORD (4 + 8 + 4)

/* A section as the file holds it: in use, superseded by a later one of its
 * tag (dead bytes until the file is written again), or damaged (its
 * checksum does not match; ignored, the rest of the file used). */
enum sec_state { SEC_LIVE, SEC_OLD, SEC_BAD };

struct section {
	uint32_t tag;
	enum sec_state state;
	uint64_t len;
	uint32_t crc;		/* of the tag, the length and the payload */
	const uint8_t *data;	/* in the file's mapping */
	uint64_t off;		/* where data is in the file */
	const struct idx_part *parts;	/* a section being written: the caller's */
	int nparts;
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
	int fd;			/* the mapped file, for idx_map_section; -1 if none */
	char note[512];
	/* trust (idx_trusted, idx_vouch) */
	char *dump_path;
	struct stamp dump_st;	/* the dump at idx_open */
	struct timespec dump_at;	/* when that was */
	bool have_dump_st;	/* and the dump was read after it (idx_dump_read_earlier) */
	bool from_disk;		/* the mapped file was loaded, else written here */
	struct stamp file_st;	/* the mapped file, before it was read */
	struct timespec read_at;	/* when that was */
	uint32_t crc;		/* its stored checksum */
	uint32_t trusted;	/* sections its seal vouches for */
	uint32_t vouched;	/* those, and the ones checked in full since */
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

static struct stamp stamp_of(const struct stat *st)
{
	return (struct stamp){(uint64_t)st->st_dev, (uint64_t)st->st_ino,
			      (uint64_t)st->st_size, (uint64_t)st->st_mtim.tv_sec,
			      (uint64_t)st->st_mtim.tv_nsec, (uint64_t)st->st_ctim.tv_sec,
			      (uint64_t)st->st_ctim.tv_nsec};
}

static bool same_stamp(const struct stamp *a, const struct stamp *b)
{
	return !memcmp(a, b, sizeof *a);
}

/* cache_dir: $XDG_CACHE_HOME/heapsh, else ~/.cache/heapsh, else (no HOME)
 * /tmp/.cache/heapsh; *shared says it is the last (no seals there). */
static char *cache_dir(bool *shared)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	*shared = !(xdg && *xdg) && !(home && *home);
	return xdg && *xdg ? xasprintf("%s/heapsh", xdg)
			   : xasprintf("%s/.cache/heapsh", home && *home ? home : "/tmp");
}

static char *cache_path(const char *dump_path)
{
	char *abs = realpath(dump_path, NULL);
	const char *p = abs ? abs : dump_path;
	uint64_t h = fnv1a((const uint8_t *)p, strlen(p));
	const char *base = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
	bool shared;
	char *dir = cache_dir(&shared);
	char *r = xasprintf("%s/%s.%016llx.hsidx", dir, base, (unsigned long long)h);
	free(dir);
	free(abs);
	return r;
}

/* ---- seals (idx_trusted, idx_vouch) ---- */

static uint32_t tag_bit(uint32_t tag)
{
	switch (tag) {
	case IDX_MODEL: return 1;
	case IDX_DOM_ALL: return 2;
	case IDX_DOM_STRONG: return 4;
	case IDX_DYN: return 8;
	case IDX_DYN_EXACT: return 16;
	default: return 0;
	}
}

/* private_dir: dir exists (made 0700 if not, with its parents) as a
 * folder of this user's that no one else may write to or read. */
static bool private_dir(const char *dir)
{
	char *p = xstrdup(dir);
	for (char *q = p + 1; *q; q++)
		if (*q == '/') {
			*q = 0;
			(void)mkdir(p, 0700);
			*q = '/';
		}
	(void)mkdir(p, 0700);
	free(p);
	struct stat st;
	return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	       !(st.st_mode & 077);
}

/* seal_path: the seal of the index at path, in the seal folder (made
 * here), or NULL when there is no private one. */
static char *seal_path(const char *path, char **abs_out)
{
	bool shared;
	char *dir = cache_dir(&shared);
	char *seals = xasprintf("%s/seals", dir);
	free(dir);
	char *abs = realpath(path, NULL);
	char *r = NULL;
	if (!shared && abs && private_dir(seals))
		r = xasprintf("%s/%016llx.seal", seals,
			      (unsigned long long)fnv1a((const uint8_t *)abs, strlen(abs)));
	free(seals);
	if (r && abs_out)
		*abs_out = abs;
	else
		free(abs);
	return r;
}

/* seal_read: the seal of the index at path, if there is one of this user's
 * naming that path; false otherwise. */
static bool seal_read(const char *path, struct seal *out)
{
	char *abs = NULL, *sp = seal_path(path, &abs);
	if (!sp)
		return false;
	bool ok = false;
	int fd = open(sp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	size_t alen = strlen(abs);
	char name[4096];
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    (uint64_t)st.st_size == sizeof *out + alen && alen < sizeof name &&
	    pread(fd, out, sizeof *out, 0) == (ssize_t)sizeof *out &&
	    !memcmp(out->magic, SEAL_MAGIC, 8) && out->pathlen == alen &&
	    pread(fd, name, alen, sizeof *out) == (ssize_t)alen && !memcmp(name, abs, alen))
		ok = true;
	if (fd >= 0)
		close(fd);
	free(sp);
	free(abs);
	return ok;
}

/* older: a time of s seconds is more than SEAL_MARGIN_S before t. */
static bool older(uint64_t s, const struct timespec *t)
{
	return (int64_t)t->tv_sec - (int64_t)s > SEAL_MARGIN_S;
}

/* writable_by_others: a file others than this user could write in place
 * (a change that could share a ctime tick with this process's reading). */
static bool writable_by_others(const struct stat *st)
{
	return st->st_uid != geteuid() || (st->st_mode & 022);
}

/*
 * seal_write: record that the file x maps, with the dump as it was, is
 * sane in the sections x->vouched says; nothing when either changed since
 * it was read (or, the index, written), or when another user could have
 * changed it so shortly before that a write in the same clock tick would
 * leave no trace in its ctime (git's "racy clean" rule: more than a second
 * before). This user's own processes are trusted as the seal folder is.
 */
static void seal_write(struct idx *x)
{
	struct stat st;
	if (!x->have_dump_st || x->fd < 0 || !x->vouched || fstat(x->fd, &st) < 0)
		return;
	struct stamp now = stamp_of(&st);
	if (!same_stamp(&now, &x->file_st) || !S_ISREG(st.st_mode) ||
	    (writable_by_others(&st) &&
	     (!x->from_disk || !older(x->file_st.ctime_s, &x->read_at))) ||
	    stat(x->dump_path, &st) < 0)
		return;
	now = stamp_of(&st);
	if (!same_stamp(&now, &x->dump_st) ||
	    (writable_by_others(&st) && !older(x->dump_st.ctime_s, &x->dump_at)))
		return;
	char *abs = NULL, *sp = seal_path(x->path, &abs);
	if (!sp)
		return;
	struct seal sl;
	memset(&sl, 0, sizeof sl);
	memcpy(sl.magic, SEAL_MAGIC, 8);
	sl.file = x->file_st;
	sl.dump = x->dump_st;
	sl.crc = x->crc;
	sl.mask = x->vouched;
	sl.pathlen = (uint32_t)strlen(abs);
	char *tmp = xasprintf("%s.XXXXXX", sp);	/* a mkstemp template */
	int fd = mkstemp(tmp);
	if (fd >= 0) {
		bool ok = io_write_full(fd, &sl, sizeof sl) && io_write_full(fd, abs, sl.pathlen);
		ok = close(fd) == 0 && ok;
		if (!ok || rename(tmp, sp) < 0)
			unlink(tmp);
	}
	free(tmp);
	free(sp);
	free(abs);
}

void idx_dump_read_earlier(struct idx *x)
{
	if (x)
		x->have_dump_st = false;
}

bool idx_trusted(const struct idx *x, uint32_t tag)
{
	return x && (x->trusted & tag_bit(tag));
}

void idx_vouch(struct idx *x, uint32_t tag)
{
	if (!x || !tag_bit(tag) || (x->vouched & tag_bit(tag)))
		return;
	x->vouched |= tag_bit(tag);
	seal_write(x);
}

static void drop_sections(struct idx *x)
{
	free(x->sec);
	x->sec = NULL;
	x->nsec = 0;
	if (x->map) {
		fm_forget(x->map, x->maplen);
		munmap((void *)x->map, x->maplen);
	}
	x->map = NULL;
	x->maplen = 0;
	if (x->fd >= 0)
		close(x->fd);
	x->fd = -1;
}

static uint64_t align_up(uint64_t p)
{
	return (p + ALIGN - 1) / ALIGN * ALIGN;
}

struct crc_half {
	const uint8_t *p;
	size_t n;
	uLong crc;
};

static void *crc_work(void *arg)
{
	struct crc_half *c = arg;
	c->crc = crc32_z(0, c->p, c->n);
	return NULL;
}

/* crc_of: CRC-32 of n bytes at p, the halves on two threads when it pays
 * (zlib's crc32_combine joins them). */
static uint32_t crc_of(const uint8_t *p, size_t n)
{
	if (n < ((size_t)8 << 20))
		return (uint32_t)crc32_z(0, p, n);
	struct crc_half a = {p, n / 2, 0}, b = {p + n / 2, n - n / 2, 0};
	hs_run_pair(crc_work, &a, crc_work, &b, true);
	return (uint32_t)crc32_combine(a.crc, b.crc, (z_off_t)b.n);
}

/* section_name: what section tag holds, for messages. */
static const char *section_name(uint32_t tag)
{
	switch (tag) {
	case IDX_MODEL: return "heap model";
	case IDX_DOM_ALL: return "dominator tree";
	case IDX_DOM_STRONG: return "dominator tree without weak references (--no-weak)";
	case IDX_DYN: return "dynamic-size engine";
	case IDX_DYN_EXACT: return "exact dynamic sizes found later";
	default: return "section of a newer heapsh";
	}
}

/* record_crc: the CRC-32 of a section's tag and length, to go on over its payload. */
static uLong record_crc(uint32_t tag, uint64_t len)
{
	uint8_t r[12];
	memcpy(r, &tag, 4);
	memcpy(r + 4, &len, 8);
	return crc32_z(0, r, sizeof r);
}

/* section_crc: a mapped section's checksum as its record should hold it. */
static uint32_t section_crc(const struct section *s)
{
	return (uint32_t)crc32_combine(record_crc(s->tag, s->len), crc_of(s->data, s->len),
				       (z_off_t)s->len);
}

/*
 * load: map and check the file at path (open on fd, or opened here when fd
 * is -1); false (and a note) if unusable, fd closed. The sections stay in
 * the mapping: file pages the kernel reads on demand and may drop, not a
 * copy in memory. check_crc is false only for the file this process has
 * just written, handed over on the descriptor it was written with (so
 * what is mapped is what was written, whatever the path names by then).
 * The file stays open (x->fd) for idx_map_section.
 */
static bool load(struct idx *x, const char *path, int fd, bool check_crc)
{
	int fd_given = fd;
	clock_gettime(CLOCK_REALTIME, &x->read_at);
	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	x->file_st = stamp_of(&st);
	size_t len = (size_t)st.st_size;
	const uint8_t *buf = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	if (buf == MAP_FAILED) {
		close(fd);
		snprintf(x->note, sizeof x->note, "ignoring index %s: %s; it will be rebuilt", path,
			 len ? strerror(errno) : "not a heapsh index or truncated");
		return false;
	}
	fm_note_fd(buf, len, 0, fd);
	x->map = buf;
	x->maplen = len;
	x->fd = fd;
	x->from_disk = fd_given < 0;
	const char *why = NULL;
	struct key k;
	uint32_t v, bom, nsec, hcrc;
	if (len < HEADER || memcmp(buf, MAGIC, 8)) {
		why = "not a heapsh index or truncated";
		goto bad;
	}
	memcpy(&v, buf + 8, 4);
	memcpy(&bom, buf + 12, 4);
	memcpy(&k, buf + 16, sizeof k);
	memcpy(&nsec, buf + 16 + sizeof k, 4);
	memcpy(&hcrc, buf + HEADER - 4, 4);
	if (v != VERSION || bom != BOM) {
		why = "written by another heapsh version or machine";
		goto bad;
	}
	if ((uint32_t)crc32_z(0, buf, HEADER - 4) != hcrc) {
		why = "checksum mismatch (truncated or corrupt)";
		goto bad;
	}
	if (memcmp(&k, &x->key, sizeof k)) {
		why = "stale: the dump has changed since it was written";
		goto bad;
	}
	/* The sections' records; the file's digest (the seal's checksum): the
	 * header and every record, each of which holds its payload's CRC. */
	uLong digest = crc32_z(0, buf, HEADER);
	size_t p = HEADER;
	for (uint32_t i = 0; i < nsec; i++) {
		struct section s = {0};
		if (len - p < RECORD) {
			why = "truncated: its section table is cut short";
			goto bad;
		}
		memcpy(&s.tag, buf + p, 4);
		memcpy(&s.len, buf + p + 4, 8);
		memcpy(&s.crc, buf + p + 12, 4);
		digest = crc32_z(digest, buf + p, RECORD);
		p += RECORD;
		if (align_up(p) > len || s.len > len - align_up(p)) {
			why = "truncated: a section runs past the end";
			goto bad;
		}
		p = align_up(p);
		s.data = buf + p;
		s.off = p;
		p += s.len;
		if (!(x->nsec & (x->nsec - 1)))	/* 0, 1, 2, 4, ...: doubled */
			x->sec = xreallocarray(x->sec, 2 * (size_t)x->nsec + 1, sizeof *x->sec);
		x->sec[x->nsec++] = s;
	}
	x->crc = (uint32_t)digest;
	/* A tag's last section counts; from the last back, in a map of the
	 * tags seen (a crafted file may hold a million sections). */
	struct u64map seen;
	u64map_init(&seen, 16);
	for (int i = x->nsec; i-- > 0;) {
		uint64_t any;
		if (u64map_get(&seen, (uint64_t)x->sec[i].tag + 1, &any))
			x->sec[i].state = SEC_OLD;
		else
			u64map_put(&seen, (uint64_t)x->sec[i].tag + 1, 1);
	}
	u64map_free(&seen);
	/* A seal (idx_vouch) says which sections were checked, and that the
	 * file has not changed since: their payloads' checksums are not read
	 * again. */
	struct seal sl;
	x->trusted = 0;
	if (check_crc && x->have_dump_st && seal_read(path, &sl) &&
	    same_stamp(&sl.file, &x->file_st) && same_stamp(&sl.dump, &x->dump_st) &&
	    sl.crc == x->crc)
		x->trusted = sl.mask;
	x->vouched = x->trusted;
	/* A damaged section is left out, the others used: at 36 GiB each is
	 * minutes of work (docs/out-of-core.md). Superseded ones are not read. */
	for (int i = 0; check_crc && i < x->nsec; i++) {
		struct section *s = &x->sec[i];
		if (s->state != SEC_LIVE || (x->trusted & tag_bit(s->tag)) ||
		    section_crc(s) == s->crc)
			continue;
		s->state = SEC_BAD;
		size_t at = strlen(x->note);
		snprintf(x->note + at, sizeof x->note - at, "%sindex %s: its %s is damaged "
			 "(checksum mismatch); it is computed again and replaced", at ? "; " : "",
			 path, section_name(s->tag));
	}
	return true;
bad:
	snprintf(x->note, sizeof x->note, "ignoring index %s: %s; it will be rebuilt", path, why);
	drop_sections(x);
	x->trusted = x->vouched = 0;
	return false;
}

struct idx *idx_open(const char *dump_path)
{
	struct idx *x = xcalloc(1, sizeof *x);
	x->fd = -1;
	x->path = xasprintf("%s.hsidx", dump_path);
	x->alt_path = cache_path(dump_path);
	x->dump_path = xstrdup(dump_path);
	clock_gettime(CLOCK_REALTIME, &x->dump_at);
	struct stat st;
	if ((x->have_dump_st = stat(dump_path, &st) == 0))
		x->dump_st = stamp_of(&st);
	x->have_key = dump_key(dump_path, &x->key);
	if (!x->have_key)
		return x;
	if (!load(x, x->path, -1, true) && !x->nsec) {
		char keep[512];
		memcpy(keep, x->note, sizeof keep);
		if (load(x, x->alt_path, -1, true)) {
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
	free(x->dump_path);
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

int idx_usage(const struct idx *x, uint32_t *tags, uint64_t *bytes, int cap, uint64_t *unused)
{
	int n = 0;
	*unused = 0;
	for (int i = 0; i < x->nsec; i++) {
		if (x->sec[i].state != SEC_LIVE) {
			*unused += x->sec[i].len;
			continue;
		}
		if (n < cap) {
			tags[n] = x->sec[i].tag;
			bytes[n] = x->sec[i].len;
		}
		n++;
	}
	return n;
}

const char *idx_section_name(uint32_t tag)
{
	return section_name(tag);
}

const void *idx_section(const struct idx *x, uint32_t tag, uint64_t *len)
{
	for (int i = 0; i < x->nsec; i++)
		if (x->sec[i].tag == tag && x->sec[i].state == SEC_LIVE) {
			*len = x->sec[i].len;
			return x->sec[i].data;
		}
	return NULL;
}

const void *idx_map_section(const struct idx *x, uint32_t tag, uint64_t *len,
			    struct idx_mapping *m)
{
	memset(m, 0, sizeof *m);
	for (int i = 0; i < x->nsec; i++) {
		const struct section *s = &x->sec[i];
		if (s->tag != tag || s->state != SEC_LIVE || x->fd < 0)
			continue;
		/* from the page the payload starts in (ALIGN is one on most systems) */
		long pg = sysconf(_SC_PAGESIZE);
		uint64_t page = pg > 0 ? (uint64_t)pg : ALIGN;
		uint64_t from = s->off / page * page;
		size_t maplen = (size_t)(s->off - from + s->len);
		void *p = mmap(NULL, maplen ? maplen : 1, PROT_READ, MAP_PRIVATE, x->fd, (off_t)from);
		if (p == MAP_FAILED)
			return NULL;
		fm_note_fd(p, maplen ? maplen : 1, from, x->fd);
		m->base = p;
		m->len = maplen ? maplen : 1;
		*len = s->len;
		return (const uint8_t *)p + (s->off - from);
	}
	return NULL;
}

void idx_unmap(struct idx_mapping *m)
{
	if (m && m->base) {
		fm_forget(m->base, m->len);
		munmap(m->base, m->len);
	}
	if (m)
		memset(m, 0, sizeof *m);
}

/* write_all: n bytes at p onto fd, their CRC-32 on *crc, *at moved past
 * them; in pieces of 64 MiB, the file's progress towards end said
 * (hs_progress: minutes at 36 GiB), and Ctrl-C heard between them (false,
 * errno EINTR). */
static bool write_all(int fd, const void *p, size_t n, uLong *crc, uint64_t *at, uint64_t end)
{
	const uint8_t *b = p;
	while (n) {
		if (hs_interrupted) {
			errno = EINTR;
			return false;
		}
		size_t k = n < ((size_t)64 << 20) ? n : (size_t)64 << 20;
		*crc = crc32_z(*crc, b, k);
		if (!io_write_full(fd, b, k))
			return false;
		*at += k;
		b += k;
		n -= k;
		hs_progress("written", *at, end);
	}
	return true;
}

/* header: the file's header for nsec sections, its checksum last. */
static void header(const struct idx *x, uint32_t nsec, uint8_t h[HEADER])
{
	uint32_t v = VERSION, bom = BOM;
	memcpy(h, MAGIC, 8);
	memcpy(h + 8, &v, 4);
	memcpy(h + 12, &bom, 4);
	memcpy(h + 16, &x->key, sizeof x->key);
	memcpy(h + 16 + sizeof x->key, &nsec, 4);
	uint32_t c = (uint32_t)crc32_z(0, h, HEADER - 4);
	memcpy(h + HEADER - 4, &c, 4);
}

/* rehome_part: part is a whole big array in a spill file, which writing it
 * to the index can move there (big_rehome). */
static bool rehome_part(const struct idx_part *part)
{
	uint64_t b = big_spilled_bytes(part->data);
	return b && b <= align_up(part->len);
}

/* section_bytes: the file's size with sections secs. */
static uint64_t file_bytes(const struct section *secs, int nsec)
{
	uint64_t at = HEADER;
	for (int i = 0; i < nsec; i++)
		at = align_up(at + RECORD) + secs[i].len;
	return at;
}

/* A part written at off that can be mapped from the file instead (big_rehome). */
struct move {
	const void *p;
	uint64_t off;
};

/*
 * write_section: section s's record and payload on fd, from *at on (the
 * file's position), *at moved past them; its checksum goes into its
 * record once the payload is written. A part that is a whole big array in
 * a spill file, written at a multiple of ALIGN, is to be mapped from fd
 * instead (big_rehome: the disk then holds it once): now, or, with moves,
 * listed there (room for s->nparts more at *nmoves) for when the file is
 * whole.
 */
static bool write_section(int fd, const struct section *s, uint64_t *at, uint64_t end,
			  struct move *moves, int *nmoves)
{
	static const uint8_t zeros[ALIGN];
	uint64_t rec = *at;
	uint32_t none = 0;
	uLong crc = record_crc(s->tag, s->len), skip = 0;
	bool ok = write_all(fd, &s->tag, 4, &skip, at, end) &&
		  write_all(fd, &s->len, 8, &skip, at, end) && write_all(fd, &none, 4, &skip, at, end) &&
		  write_all(fd, zeros, (size_t)(align_up(*at) - *at), &skip, at, end);
	if (!s->parts) {
		ok = ok && write_all(fd, s->data, s->len, &crc, at, end);
	} else {
		for (int k = 0; ok && k < s->nparts; k++) {
			uint64_t off = *at;
			ok = write_all(fd, s->parts[k].data, s->parts[k].len, &crc, at, end);
			if (!ok || off % ALIGN || !rehome_part(&s->parts[k]))
				continue;
			if (moves)
				moves[(*nmoves)++] = (struct move){s->parts[k].data, off};
			else
				big_rehome((void *)(uintptr_t)s->parts[k].data, fd, off);
		}
	}
	uint32_t c = (uint32_t)crc;
	return ok && pwrite(fd, &c, 4, (off_t)(rec + 12)) == 4;
}

/*
 * write_file: the sections into a new file at path, whole or not at all;
 * its descriptor (open for reading), or -1 with errno set.
 */
static int write_file(const struct idx *x, const struct section *secs, int nsec,
		      const char *path)
{
	/* The cache folder and its parents; fine if they exist. */
	char *dir = xstrdup(path);
	for (char *p = dir + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(dir, 0700);
			*p = '/';
		}
	char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
	/*
	 * An unnamed file in the folder (O_TMPFILE), named only once it is
	 * whole: a process killed while writing (kill -9, the OOM killer)
	 * leaves nothing behind, where a named temporary file could be
	 * gigabytes. Where the filesystem cannot, a named one.
	 */
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	int fd = open(slash ? (slash == dir ? "/" : dir) : ".", O_TMPFILE | O_RDWR | O_CLOEXEC,
		      0644);
	bool unnamed = fd >= 0;
	free(dir);
	if (!unnamed)
		fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		free(tmp);
		return -1;
	}
	uint8_t h[HEADER];
	header(x, (uint32_t)nsec, h);
	uLong skip = 0;
	uint64_t at = 0;
	uint64_t end = file_bytes(secs, nsec);
	bool ok = write_all(fd, h, HEADER, &skip, &at, end);
	/* rehomed as written: a failure leaves the file whole, if unnamed */
	for (int i = 0; ok && i < nsec; i++)
		ok = write_section(fd, &secs[i], &at, end, NULL, NULL);
	ok = ok && fsync(fd) == 0;
	if (ok && unnamed) {
		char proc[64];
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
		unlink(tmp);	/* a leftover of a process with this pid */
		ok = linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0;
	}
	if (ok && rename(tmp, path) != 0)
		ok = false;
	if (!ok) {
		int saved = errno;
		unlink(tmp);
		close(fd);
		errno = saved;
		fd = -1;
	}
	free(tmp);
	return fd;
}

/* take_mapping: x's sections and mapping are y's from now on, x's own gone. */
static void take_mapping(struct idx *x, const struct idx *y)
{
	drop_sections(x);
	x->sec = y->sec;
	x->nsec = y->nsec;
	x->map = y->map;
	x->maplen = y->maplen;
	x->fd = y->fd;
	x->file_st = y->file_st;
	x->crc = y->crc;
}

/*
 * remap: after the file at x->path was written on fd, map it and let the
 * sections point there, so that none is kept in memory; its first kept
 * sections are x's first ones (an append: the damaged stay ignored). False,
 * with x unchanged and fd closed, when the file cannot be mapped.
 */
static bool remap(struct idx *x, int fd, int nsec, int kept, uint32_t sane)
{
	struct idx y;
	memset(&y, 0, sizeof y);
	y.fd = -1;
	y.key = x->key;
	if (!load(&y, x->path, fd, false) || y.nsec != nsec) {
		drop_sections(&y);
		return false;
	}
	for (int i = 0; i < kept; i++)
		if (x->sec[i].state == SEC_BAD)
			y.sec[i].state = SEC_BAD;
	take_mapping(x, &y);
	/* written here: sane in the sections it made or had checked (sane),
	 * sealed as such unless others could write the file */
	x->from_disk = false;
	x->trusted = 0;
	x->vouched = sane;
	seal_write(x);
	return true;
}

/*
 * room_for: bytes free on the filesystem a file at path would be on: that
 * of its folder, or of the nearest folder above it that exists (the cache
 * folder is made only when written to); 0 if unknown. *dev: that folder's
 * device.
 */
static uint64_t room_for(const char *path, dev_t *dev)
{
	char *dir = xstrdup(path);
	const char *at = dir;
	struct stat st;
	for (;;) {
		char *slash = strrchr(dir, '/');
		if (!slash) {
			at = ".";
			break;
		}
		if (slash == dir) {
			at = "/";
			break;
		}
		*slash = 0;
		if (stat(dir, &st) == 0)
			break;
	}
	uint64_t have = big_disk_free(at);
	*dev = stat(at, &st) == 0 ? st.st_dev : (dev_t)-1;
	free(dir);
	return have;
}

/*
 * moved_bytes: what writing secs frees of the spill folder's disk as it
 * goes (rehome_part's arrays), less the largest (each is on disk twice for
 * a moment), when the spill folder is on device dev; else 0.
 */
static uint64_t moved_bytes(const struct section *secs, int nsec, dev_t dev)
{
	const char *spill = big_spill_dir();
	struct stat st;
	if (!spill || stat(spill, &st) != 0 || st.st_dev != dev)
		return 0;
	uint64_t sum = 0, largest = 0;
	for (int i = 0; i < nsec; i++)
		for (int k = 0; secs[i].parts && k < secs[i].nparts; k++)
			if (rehome_part(&secs[i].parts[k])) {
				uint64_t b = big_spilled_bytes(secs[i].parts[k].data);
				sum += b;
				largest = b > largest ? b : largest;
			}
	return sum - largest;
}

/*
 * lock_appends: the exclusive flock(2) of the index open on fd, which an
 * append holds until its header is written: waited for while another
 * session appends (an append can take minutes: LOCK_WAIT_S at most,
 * hs_progress saying so), Ctrl-C heard; 0 once held or where there are
 * no locks, else EINTR or EBUSY (waited too long).
 */
#define LOCK_WAIT_S 600
static int lock_appends(int fd)
{
	for (unsigned tick = 0;; tick++) {	/* ticks of 0.1 s */
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK)
			return 0;
		if (hs_interrupted)
			return EINTR;
		if (tick >= 10 * LOCK_WAIT_S)
			return EBUSY;
		hs_progress("waiting for another heapsh writing it", tick, 10 * LOCK_WAIT_S);
		struct timespec t = {0, 100 * 1000 * 1000};
		nanosleep(&t, NULL);
	}
}

/*
 * append: sections add[0 .. nadd) after the file's last one, in place: the
 * payloads first, then the header's count, so that a process opening the
 * file meanwhile sees it as it was or as it is now, and one that has it
 * open keeps what it mapped (the file only grows past it; a section of a
 * tag the file holds supersedes it, whose bytes stay as they were). A
 * crash leaves bytes after the last section the header counts, which are
 * not read, and written over by the next append. Only when the file is
 * the one x mapped, unchanged since (ESTALE: idx_put_parts maps it again
 * when another session appended to it, refresh), under the exclusive
 * flock(2) held until the header is written (lock_appends: two appends at
 * once would write at the same place). HS_OK with x mapping it
 * again (remap), else HS_ERR with errno and the file as it was (the caller
 * then rewrites it whole). The disk must have room for what is added,
 * with 1/16 to spare.
 */
static int append(struct idx *x, const struct section *add, int nadd, uint32_t sane)
{
	struct stat st;
	int fd = open(x->path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return HS_ERR;
	int why = lock_appends(fd);
	if (why) {
		close(fd);
		errno = why;
		return HS_ERR;
	}
	struct stamp now;
	if (fstat(fd, &st) < 0 || (now = stamp_of(&st), !same_stamp(&now, &x->file_st))) {
		close(fd);
		errno = ESTALE;
		return HS_ERR;
	}
	uint64_t old = (uint64_t)st.st_size;
	uint64_t end = x->nsec ? x->sec[x->nsec - 1].off + x->sec[x->nsec - 1].len : HEADER;
	uint64_t at = end, need = 0;
	for (int i = 0; i < nadd; i++)
		need = align_up(end + need + RECORD) + add[i].len - end;
	dev_t dev;
	uint64_t have = room_for(x->path, &dev);
	if (have && have + moved_bytes(add, nadd, dev) < need + (need >> 4)) {
		close(fd);
		errno = ENOSPC;
		return HS_ERR;
	}
	/* Arrays move into the file once the header counts them: before, a
	 * failure would take their bytes from under them, and the next append
	 * write over them. */
	int nparts = 0, nmoves = 0;
	for (int i = 0; i < nadd; i++)
		nparts += add[i].nparts;
	struct move *moves = xmallocarray((size_t)nparts + 1, sizeof *moves);
	bool ok = lseek(fd, (off_t)at, SEEK_SET) == (off_t)at;
	for (int i = 0; ok && i < nadd; i++)
		ok = write_section(fd, &add[i], &at, end + need, moves, &nmoves);
	uint8_t h[HEADER];
	header(x, (uint32_t)(x->nsec + nadd), h);
	ok = ok && fsync(fd) == 0 && pwrite(fd, h, HEADER, 0) == (ssize_t)HEADER && fsync(fd) == 0;
	if (!ok) {
		int saved = errno;
		if (at > old && ftruncate(fd, (off_t)old) != 0)
			saved = errno;	/* the header still counts only what was there */
		close(fd);
		free(moves);
		errno = saved;
		return HS_ERR;
	}
	(void)flock(fd, LOCK_UN);	/* fd stays open: x maps the file through it */
	for (int k = 0; k < nmoves; k++)
		big_rehome((void *)(uintptr_t)moves[k].p, fd, moves[k].off);
	free(moves);
	return remap(x, fd, x->nsec + nadd, x->nsec, sane) ? HS_OK : HS_ERR;
}

/*
 * refresh: x's file as it is now, mapped again, after another session
 * wrote to it since x mapped it (or found none): grown by an append (the
 * same inode, x's sections its first ones, unchanged), only the sections
 * added are checked against their checksums; another file in its place
 * (written whole), every section is (a damaged one is left out either
 * way). False, x unchanged, when there is no usable file. What the other
 * session wrote is not vouched for (idx_vouch) here.
 */
static bool refresh(struct idx *x)
{
	struct stat st;
	if (stat(x->path, &st) < 0)
		return false;
	bool grown = x->map && (uint64_t)st.st_dev == x->file_st.dev &&
		     (uint64_t)st.st_ino == x->file_st.ino &&
		     (uint64_t)st.st_size >= x->file_st.size;
	int known = grown ? x->nsec : 0;
	struct idx y;
	memset(&y, 0, sizeof y);
	y.fd = -1;
	y.key = x->key;
	bool ok = load(&y, x->path, -1, !grown) && y.nsec >= known;
	for (int i = 0; ok && i < known; i++)
		ok = y.sec[i].tag == x->sec[i].tag && y.sec[i].off == x->sec[i].off &&
		     y.sec[i].len == x->sec[i].len && y.sec[i].crc == x->sec[i].crc;
	if (!ok) {
		drop_sections(&y);
		return false;
	}
	uint32_t added = 0;
	for (int i = 0; i < y.nsec; i++) {
		struct section *t = &y.sec[i];
		if (i < known && x->sec[i].state == SEC_BAD)
			t->state = SEC_BAD;
		if (grown && i >= known && t->state == SEC_LIVE && section_crc(t) != t->crc)
			t->state = SEC_BAD;
		if (i >= known)
			added |= tag_bit(t->tag);
	}
	take_mapping(x, &y);
	x->trusted &= ~added;
	x->vouched &= ~added;
	return true;
}

/*
 * plan: the sections of x's file after puts: those in use and not
 * replaced, then the new (a new array, its count in *nsec, the old ones
 * in *nold); the bytes superseded (*dead) and in use (*live) if they are
 * appended; the tags known sane (*sane): those written now (made by this
 * process) and those carried over that it checked or a seal vouched for.
 */
static struct section *plan(const struct idx *x, const struct idx_put *puts, int nputs,
			    int *nsec_out, int *nold, uint64_t *dead_out, uint64_t *live_out,
			    uint32_t *sane_out)
{
	struct section *secs = xcalloc((size_t)x->nsec + (size_t)nputs, sizeof *secs);
	int nsec = 0;
	uint64_t dead = 0, live = 0;
	for (int i = 0; i < x->nsec; i++) {
		bool replaced = false;
		for (int k = 0; k < nputs; k++)
			replaced = replaced || puts[k].tag == x->sec[i].tag;
		if (!replaced && x->sec[i].state == SEC_LIVE) {
			secs[nsec++] = x->sec[i];
			live += x->sec[i].len;
		} else {
			dead += x->sec[i].len;
		}
	}
	*nold = nsec;
	for (int k = 0; k < nputs; k++) {
		struct section s = {.tag = puts[k].tag, .parts = puts[k].parts,
				    .nparts = puts[k].nparts};
		for (int j = 0; j < s.nparts; j++)
			s.len += s.parts[j].len;
		live += s.len;
		secs[nsec++] = s;
	}
	uint32_t sane = 0;
	for (int i = 0; i < nsec; i++)
		if (secs[i].parts || (x->vouched & tag_bit(secs[i].tag)))
			sane |= tag_bit(secs[i].tag);
	*nsec_out = nsec;
	*dead_out = dead;
	*live_out = live;
	*sane_out = sane;
	return secs;
}

int idx_put_parts(struct idx *x, const struct idx_put *puts, int nputs, struct hs_error *err)
{
	if (!x->have_key) {
		hs_error_set(err, -1, "cannot index: the dump file cannot be read for its key");
		return HS_ERR;
	}
	/*
	 * Appended to the file in place when it can be, new sections and
	 * replacements alike, while the bytes superseded stay at most those in
	 * use (the file at most about twice what it holds) and the sections
	 * are not too many to read at each open; else the file is written
	 * again with the sections in use only. A file another session has
	 * written since x mapped it (or made, where x found none) is mapped
	 * again first (refresh), so that what it added is kept.
	 */
	int nsec, nold;
	uint64_t dead, live;
	uint32_t sane;
	struct section *secs;
	int saved = 0;	/* why the last try failed */
	for (int tries = 0;; tries++) {
		secs = plan(x, puts, nputs, &nsec, &nold, &dead, &live, &sane);
		bool again;
		if (!x->map) {	/* none when x was opened: one may have come since */
			again = tries == 0 && refresh(x);
		} else if (dead > live || x->nsec + nputs > APPENDS_MAX) {
			again = false;
		} else {
			if (append(x, secs + nold, nputs, sane) == HS_OK) {
				free(secs);
				return HS_OK;
			}
			saved = errno;
			again = saved == ESTALE && tries == 0 && refresh(x);
		}
		if (!again)
			break;
		free(secs);
	}
	uint64_t need = file_bytes(secs, nsec);
	const char *where[2] = {x->path, x->alt_path};
	int st = HS_ERR, fd = -1;
	for (int w = 0; w < 2 && st != HS_OK && saved != EINTR; w++) {
		dev_t dev;
		uint64_t have = room_for(where[w], &dev);
		if (have && have + moved_bytes(secs, nsec, dev) < need + (need >> 4)) {
			saved = ENOSPC;
			continue;	/* it would not fit: do not fill the disk trying */
		}
		if ((fd = write_file(x, secs, nsec, where[w])) < 0) {
			saved = errno;
			continue;
		}
		if (w == 1) {
			x->path = (char *)where[1];
			x->alt_path = (char *)where[0];
		}
		st = HS_OK;
	}
	if (st == HS_OK && !remap(x, fd, nsec, 0, sane)) {
		saved = errno;
		st = HS_ERR;
	}
	free(secs);
	if (saved == EINTR) {	/* the file as it was, nothing left behind */
		hs_error_set(err, -1, "writing the index was interrupted; results are kept for "
			     "this session only");
		return HS_INTERRUPTED;
	}
	if (st != HS_OK) {
		char nb[32];
		fmt_bytes(nb, sizeof nb, need);
		hs_error_set(err, -1, "cannot write the index (%s) at %s or %s: %s; results are "
			     "kept for this session only", nb, x->path, x->alt_path,
			     saved ? strerror(saved) : "cannot map it");
	}
	return st;
}

int idx_put(struct idx *x, uint32_t tag, const void *data, uint64_t len, struct hs_error *err)
{
	struct idx_part part = {data, len};
	struct idx_put put = {tag, &part, 1};
	return idx_put_parts(x, &put, 1, err);
}
