/* big.c - arrays under a memory budget, file-backed beyond it; see big.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "big.h"
#include "filemap.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "fmt.h"

#define TMPFS_MAGIC_ 0x01021994
#define RAMFS_MAGIC_ 0x858458f6
/* Anonymous arrays of this size or more ask for transparent huge pages: the
 * engine reads them in random order, where 4 KiB pages miss the TLB, and a
 * fault fills 2 MiB at once (docs/history/performance-journal.md, "A faster
 * whole index"). */
#ifndef HUGE_MIN
#define HUGE_MIN (2u << 20)
#endif

/* One big array: its mapping and, when file-backed, the file. */
struct region {
	void *p;
	size_t bytes;		/* mapped length */
	bool in_file;		/* a mapping of an unlinked file, else anonymous memory */
	uint64_t settled;	/* 0, or when big_settle marked it (1, 2, ...): first to a file */
	struct big_pool *pool;	/* the pool it counts in */
	uint64_t born;		/* big_mark's count when it was made; 0: kept (big_keep) */
	bool given_back;	/* by big_pool_release: addresses kept, no memory, no file */
};

/*
 * Spares: freed anonymous arrays kept for the next big_alloc, which takes
 * one (cut to its size, or grown) and zeroes what was used, instead of the
 * kernel faulting in and clearing fresh pages: on this 2-core machine that
 * clearing was a third of an open with the whole index
 * (docs/history/performance-journal.md, "Where open + the whole index goes in
 * memory" and "Stop 30"). Spares count in their pool's budget and go first
 * when room is needed; big_trim releases them all.
 */
#define SPARE_MIN ((size_t)1 << 20)
#define SPARE_MAX 8

/* A memory pool: one session's budget, spill folder, counts and spares (ctx.h). */
struct big_pool {
	uint64_t budget;	/* 0 until the first use: then the default */
	char *dir;		/* configured or chosen spill folder, or NULL */
	bool dir_chosen;
	uint64_t anon, anon_peak, file, file_peak;
	struct region spares[SPARE_MAX];
	size_t nspares;
	uint64_t spare_bytes;
	uint64_t kept;		/* arrays born up to this count are kept (big_pool_keep) */
};

/* One lock for every pool: the regions are one table. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct region *regions;
static size_t nregions, capregions;
static struct big_pool process_pool;
static uint64_t settle_seq;	/* big_settle calls so far: the order settled arrays leave in */
uint64_t big_made;		/* big arrays made so far, in every pool: their born (big.h) */

/* The pool of the context on this thread. */
static struct big_pool *pool_now(void)
{
	struct big_pool *p = hs_ctx_now()->pool;
	return p ? p : &process_pool;
}

static void drop_spare(struct big_pool *P, size_t k);

static uint64_t read_limit(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char buf[64] = "";
	uint64_t v = 0;
	if (fgets(buf, sizeof buf, f))
		v = strtoull(buf, NULL, 10);	/* "max" reads as 0: no limit */
	fclose(f);
	return v;
}

/*
 * cgroup_limit: the memory limit of this process's cgroup (v2 memory.max,
 * or v1 memory.limit_in_bytes of the memory controller's group), 0 if none.
 */
static uint64_t cgroup_limit(void)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	if (!f)
		return 0;
	char line[4096];
	uint64_t best = 0;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = 0;
		const char *ctl = c1 + 1, *path = c2 + 1;
		char fname[4200];
		if (!*ctl)	/* "0::/path": the unified hierarchy */
			snprintf(fname, sizeof fname, "/sys/fs/cgroup%s/memory.max",
				 strcmp(path, "/") ? path : "");
		else if (strstr(ctl, "memory"))
			snprintf(fname, sizeof fname, "/sys/fs/cgroup/memory%s/memory.limit_in_bytes",
				 strcmp(path, "/") ? path : "");
		else
			continue;
		uint64_t v = read_limit(fname);
		if (v && (!best || v < best))
			best = v;
	}
	fclose(f);
	return best;
}

uint64_t big_default_budget(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t phys = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize
					       : (uint64_t)4 << 30;
	/* A container's limit is the machine heapsh really has. */
	uint64_t lim = cgroup_limit();
	if (lim && lim < phys)
		phys = lim;
	return phys / 2;
}

uint64_t big_parse_size(const char *text)
{
	if (!text || !*text)
		return 0;
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (errno || end == text || !(v > 0))
		return 0;
	double unit = 1;
	switch (*end) {
	case 'k': case 'K': unit = 1024.0; end++; break;
	case 'm': case 'M': unit = 1024.0 * 1024; end++; break;
	case 'g': case 'G': unit = 1024.0 * 1024 * 1024; end++; break;
	case 't': case 'T': unit = 1024.0 * 1024 * 1024 * 1024; end++; break;
	default: break;
	}
	if (*end == 'i')
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return 0;
	double bytes = v * unit;
	if (bytes < 1 || bytes > 9.0e18)
		return 0;
	return (uint64_t)bytes;
}

static void configure(struct big_pool *P, uint64_t bytes, const char *folder)
{
	char *d = folder && *folder ? xstrdup(folder) : NULL;
	pthread_mutex_lock(&lock);
	while (P->nspares)	/* kept under the old budget */
		drop_spare(P, P->nspares - 1);
	P->budget = bytes ? bytes : big_default_budget();
	free(P->dir);
	P->dir = d;
	P->dir_chosen = d != NULL;
	pthread_mutex_unlock(&lock);
}

void big_configure(uint64_t bytes, const char *folder)
{
	configure(pool_now(), bytes, folder);
}

struct big_pool *big_pool_new(uint64_t bytes, const char *folder)
{
	struct big_pool *P = xcalloc(1, sizeof *P);
	configure(P, bytes, folder);
	return P;
}

void big_pool_configure(struct big_pool *P, uint64_t bytes, const char *folder)
{
	configure(P ? P : &process_pool, bytes, folder);
}

void big_pool_free(struct big_pool *P)
{
	if (!P)
		return;
	pthread_mutex_lock(&lock);
	while (P->nspares)
		drop_spare(P, P->nspares - 1);
	/* Arrays still in it (a front end's, or given back after a failed
	 * call and never freed) move to the process's pool. */
	for (size_t k = 0; k < nregions; k++)
		if (regions[k].pool == P) {
			regions[k].pool = &process_pool;
			if (regions[k].given_back)
				continue;
			if (regions[k].in_file)
				process_pool.file += regions[k].bytes;
			else
				process_pool.anon += regions[k].bytes;
		}
	pthread_mutex_unlock(&lock);
	free(P->dir);
	free(P);
}

static bool in_memory_fs(const char *path)
{
	struct statfs fs;
	if (statfs(path, &fs) != 0)
		return false;
	return (unsigned long)fs.f_type == TMPFS_MAGIC_ ||
	       (unsigned long)fs.f_type == RAMFS_MAGIC_;
}

/* The spill folder of P: the configured one, else the first usable of
 * $TMPDIR, /var/tmp and /tmp that is not memory itself. Called with lock held. */
static const char *choose_dir(struct big_pool *P)
{
	if (P->dir_chosen)
		return P->dir;
	const char *env = getenv("TMPDIR");
	const char *cands[] = {env && *env ? env : NULL, "/var/tmp", "/tmp"};
	const char *pick = NULL;
	for (size_t k = 0; k < sizeof cands / sizeof *cands; k++) {
		if (!cands[k] || access(cands[k], W_OK | X_OK) != 0)
			continue;
		if (!pick)
			pick = cands[k];	/* a tmpfs is still better than nothing */
		if (!in_memory_fs(cands[k])) {
			pick = cands[k];
			break;
		}
	}
	P->dir = strdup(pick ? pick : "/tmp");
	P->dir_chosen = P->dir != NULL;
	return P->dir ? P->dir : "/tmp";
}

const char *big_spill_dir(void)
{
	pthread_mutex_lock(&lock);
	const char *d = choose_dir(pool_now());
	pthread_mutex_unlock(&lock);
	return d;
}

static uint64_t free_bytes(const char *path)
{
	struct statvfs vfs;
	if (statvfs(path, &vfs) != 0)
		return 0;
	return (uint64_t)vfs.f_bavail * (uint64_t)vfs.f_frsize;
}

uint64_t big_disk_free(const char *path)
{
	return free_bytes(path);
}

/* die: called with the lock held, which it releases: throw saying why a
 * big array of bytes could not be made or moved in pool P, and what to do. */
static void die(struct big_pool *P, const char *what, size_t bytes, const char *why)
	__attribute__((noreturn));
static void die(struct big_pool *P, const char *what, size_t bytes, const char *why)
{
	char b[32], f[32], m[32], d[512], w[200];
	fmt_bytes(b, sizeof b, bytes);
	fmt_bytes(m, sizeof m, P->budget);
	snprintf(d, sizeof d, "%s", P->dir ? P->dir : "/tmp");
	snprintf(w, sizeof w, "%s", why);
	pthread_mutex_unlock(&lock);
	fmt_bytes(f, sizeof f, free_bytes(d));
	hs_throw("cannot %s a %s array: the memory budget (--memory %s) is used, and %s in %s "
		 "(%s free); free space there, choose another folder with --spill-dir, or "
		 "raise --memory", what, b, m, w, d, f);
}

/* note: r joins the table (the lock held; released if it throws). */
static void note(struct region r)
{
	if (nregions == capregions) {
		size_t cap = capregions ? capregions * 2 : 64;
		struct region *n = realloc(regions, cap * sizeof *regions);
		if (!n) {
			pthread_mutex_unlock(&lock);
			hs_throw("out of memory for the table of big arrays (%zu of them)", cap);
		}
		regions = n;
		capregions = cap;
	}
	regions[nregions++] = r;
	struct big_pool *P = r.pool;
	if (!r.in_file) {
		P->anon += r.bytes;
		if (P->anon + P->spare_bytes > P->anon_peak)
			P->anon_peak = P->anon + P->spare_bytes;
	} else {
		P->file += r.bytes;
		if (P->file > P->file_peak)
			P->file_peak = P->file;
	}
}

/* uncount: r's bytes leave its pool's counts (the lock held). */
static void uncount(const struct region *r)
{
	if (r->given_back)
		return;
	if (!r->in_file)
		r->pool->anon -= r->bytes;
	else
		r->pool->file -= r->bytes;
}

static void forget(size_t k)
{
	uncount(&regions[k]);
	regions[k] = regions[--nregions];
}

static ssize_t find(const void *p)
{
	for (size_t k = nregions; k-- > 0;)
		if (regions[k].p == p)
			return (ssize_t)k;
	return -1;
}

/*
 * A file of bytes zeroed bytes in the spill folder, reserved on disk; -1
 * with *why set when it cannot be made.
 */
static int try_make_file(struct big_pool *P, size_t bytes, const char **why)
{
	const char *d = choose_dir(P);
	char path[4200];
	if (snprintf(path, sizeof path, "%s/heapsh-big-XXXXXX", d) >= (int)sizeof path) {
		*why = "the folder's name is too long";
		return -1;
	}
	int fd = mkstemp(path);
	if (fd < 0) {
		*why = strerror(errno);
		return -1;
	}
	unlink(path);
	int e = posix_fallocate(fd, 0, (off_t)bytes);
	if (e) {
		close(fd);
		*why = e == ENOSPC ? "there is no room for it" : strerror(e);
		return -1;
	}
	return fd;
}

/* try_make_file, or throw with a message saying what to do (die). */
static int make_file(struct big_pool *P, size_t bytes)
{
	const char *why = NULL;
	int fd = try_make_file(P, bytes, &why);
	if (fd < 0)
		die(P, "make", bytes, why);
	return fd;
}

static void count_moved(struct big_pool *P, size_t bytes)
{
	P->anon -= bytes;
	P->file += bytes;
	if (P->file > P->file_peak)
		P->file_peak = P->file;
}

/*
 * move_in_place: regions[k] (anonymous; the lock held) becomes a mapping of
 * a new file at the same address, with the same contents: the file is
 * written from the array, then mapped over it (MAP_FIXED replaces the
 * anonymous pages in one step). False, with the region unchanged, when no
 * file could be made or written.
 */
static bool move_in_place(size_t k)
{
	struct region *r = &regions[k];
	const char *why = NULL;
	int fd = try_make_file(r->pool, r->bytes, &why);
	if (fd < 0)
		return false;
	for (size_t off = 0; off < r->bytes;) {
		ssize_t w = pwrite(fd, (const char *)r->p + off, r->bytes - off, (off_t)off);
		if (w <= 0) {
			close(fd);
			return false;
		}
		off += (size_t)w;
	}
	void *q = mmap(r->p, r->bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
	int e = errno;
	close(fd);
	if (q == MAP_FAILED)	/* the old pages may be gone: nothing to go back to */
		die(r->pool, "move (the heap's arrays may be damaged: close it and open it again)",
		    r->bytes, strerror(e));
	r->in_file = true;
	count_moved(r->pool, r->bytes);
	return true;
}

/*
 * make_room: before bytes more of anonymous memory past the budget, move
 * settled arrays (big_settle) to files, the first settled first, until
 * the budget has the room or none is left in memory.
 */
static void drop_spare(struct big_pool *P, size_t k)
{
	munmap(P->spares[k].p, P->spares[k].bytes);
	P->spare_bytes -= P->spares[k].bytes;
	P->spares[k] = P->spares[--P->nspares];
}

static void make_room(struct big_pool *P, size_t bytes)
{
	while (P->nspares && P->anon + P->spare_bytes + bytes > P->budget) {
		size_t big = 0;	/* the largest first: fewest unmapped */
		for (size_t k = 1; k < P->nspares; k++)
			if (P->spares[k].bytes > P->spares[big].bytes)
				big = k;
		drop_spare(P, big);
	}
	while (P->anon + bytes > P->budget) {
		ssize_t first = -1;
		for (size_t k = 0; k < nregions; k++)
			if (regions[k].pool == P && regions[k].settled && !regions[k].in_file &&
			    (first < 0 || regions[k].settled < regions[first].settled))
				first = (ssize_t)k;
		if (first < 0 || !move_in_place((size_t)first))
			return;
	}
}

/*
 * A new region of bytes: anonymous while the budget allows (settled arrays
 * leaving for files to make room), else a file.
 * The file's descriptor is closed once it is mapped (the mapping keeps the
 * file), so any number of arrays can live in files.
 */
static struct region map_new(struct big_pool *P, size_t bytes)
{
	if (!P->budget)
		P->budget = big_default_budget();
	struct region r = {.bytes = bytes, .pool = P};
	make_room(P, bytes);
	if (P->anon + bytes <= P->budget) {
		r.p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (r.p != MAP_FAILED) {
			if (bytes >= HUGE_MIN)
				madvise(r.p, bytes, MADV_HUGEPAGE);
			return r;
		}
	}
	int fd = make_file(P, bytes);
	r.in_file = true;
	r.p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int e = errno;
	close(fd);
	if (r.p == MAP_FAILED)
		die(P, "map", bytes, strerror(e));
	return r;
}

static size_t product(size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size)
		hs_throw("an array of %zu items of %zu bytes is larger than this machine can "
			 "address", count, size);
	size_t bytes = count * size;
	return bytes ? bytes : 1;
}

/*
 * from_spare: a region of bytes made of a spare (the lock held), or one
 * with p NULL when there is none to use. The smallest spare that holds
 * bytes is cut to them (the rest stays a spare, or is unmapped when small);
 * else the largest is grown (mremap keeps its pages; the new ones are
 * fresh) when the budget has room. *used: how many leading bytes the
 * caller must zero.
 */
static struct region from_spare(struct big_pool *P, size_t bytes, size_t *used)
{
	struct region r = {.pool = P};
	struct region *spares = P->spares;
	ssize_t fit = -1, big = -1;
	for (size_t k = 0; k < P->nspares; k++) {
		if (spares[k].bytes >= bytes && (fit < 0 || spares[k].bytes < spares[fit].bytes))
			fit = (ssize_t)k;
		if (big < 0 || spares[k].bytes > spares[big].bytes)
			big = (ssize_t)k;
	}
	if (fit >= 0) {
		struct region s = spares[fit];
		size_t page = bytes >= HUGE_MIN ? HUGE_MIN : (size_t)sysconf(_SC_PAGESIZE);
		size_t take = (bytes + page - 1) / page * page;
		if (take > s.bytes)
			take = s.bytes;
		P->spare_bytes -= s.bytes;
		spares[fit] = spares[--P->nspares];
		size_t rest = s.bytes - take;
		if (rest >= SPARE_MIN) {
			spares[P->nspares++] = (struct region){.p = (char *)s.p + take, .bytes = rest,
							       .pool = P};
			P->spare_bytes += rest;
		} else if (rest) {
			munmap((char *)s.p + take, rest);
		}
		r.p = s.p;
		r.bytes = take;
		*used = bytes;
		return r;
	}
	if (big < 0 || P->anon + P->spare_bytes + (bytes - spares[big].bytes) > P->budget)
		return r;
	struct region s = spares[big];
	void *q = mremap(s.p, s.bytes, bytes, MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		return r;
	P->spare_bytes -= s.bytes;
	spares[big] = spares[--P->nspares];
	r.p = q;
	r.bytes = bytes;
	*used = s.bytes;
	return r;
}

void *big_alloc(size_t count, size_t size)
{
	size_t bytes = product(count, size);
	if (bytes < BIG_MIN)
		return xcalloc(1, bytes);
	struct big_pool *P = pool_now();
	pthread_mutex_lock(&lock);
	size_t used = 0;
	struct region r = from_spare(P, bytes, &used);
	if (!r.p)
		r = map_new(P, bytes);
	r.born = __atomic_add_fetch(&big_made, 1, __ATOMIC_RELAXED);
	note(r);
	pthread_mutex_unlock(&lock);
	if (used)	/* a spare's pages: what its last array left */
		memset(r.p, 0, used);
	return r.p;
}

void *big_realloc(void *p, size_t count, size_t size)
{
	size_t bytes = product(count, size);
	if (!p)
		return big_alloc(count, size);
	pthread_mutex_lock(&lock);
	ssize_t k = find(p);
	if (k < 0) {
		pthread_mutex_unlock(&lock);
		if (bytes < BIG_MIN)
			return xrealloc(p, bytes);
		size_t old = malloc_usable_size(p);
		void *q = big_alloc(count, size);
		memcpy(q, p, old < bytes ? old : bytes);
		free(p);
		return q;
	}
	if (regions[k].given_back) {
		pthread_mutex_unlock(&lock);
		hs_throw("an array given back after a failed call is used again: a bug in heapsh; "
			 "please report it");
	}
	struct region r = regions[k];
	forget((size_t)k);
	fm_forget(r.p, r.bytes);	/* when rehomed into an index */
	/* Anonymous memory grows in place within the budget; either kind
	 * shrinks in place (a file keeps its blocks until the array goes);
	 * a file-backed array grows into a new file, copied. */
	void *q = MAP_FAILED;
	if (bytes <= r.bytes || (!r.in_file && r.pool->anon + bytes <= r.pool->budget))
		q = mremap(r.p, r.bytes, bytes, MREMAP_MAYMOVE);
	if (q != MAP_FAILED) {
		r.p = q;
		r.bytes = bytes;
		note(r);
		pthread_mutex_unlock(&lock);
		return q;
	}
	/* Past the budget (or mremap refused): a new region, then copy. */
	struct region n = map_new(r.pool, bytes);
	n.settled = r.settled;
	n.born = r.born;	/* the same array, for big_pool_release */
	memcpy(n.p, r.p, r.bytes < bytes ? r.bytes : bytes);
	munmap(r.p, r.bytes);
	note(n);
	pthread_mutex_unlock(&lock);
	return n.p;
}

/*
 * to_file: move regions[k] (anonymous; the lock held) into a new file.
 * Returns the new mapping, or NULL with the region unchanged and *why set
 * when no file could be made or mapped.
 */
static void *to_file(size_t k, const char **why)
{
	struct region r = regions[k];
	int fd = try_make_file(r.pool, r.bytes, why);
	if (fd < 0)
		return NULL;
	struct region n = r;	/* the same array, elsewhere */
	n.in_file = true;
	n.p = mmap(NULL, r.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int e = errno;
	close(fd);
	if (n.p == MAP_FAILED) {
		*why = strerror(e);
		return NULL;
	}
	memcpy(n.p, r.p, r.bytes);
	munmap(r.p, r.bytes);
	forget(k);
	note(n);
	return n.p;
}

void *big_demote(void *p, uint64_t need)
{
	if (!p)
		return p;
	pthread_mutex_lock(&lock);
	ssize_t k = find(p);
	if (k < 0 || regions[k].in_file || regions[k].given_back ||
	    regions[k].pool->anon + need <= regions[k].pool->budget) {
		pthread_mutex_unlock(&lock);
		return p;
	}
	const char *why = NULL;
	size_t bytes = regions[k].bytes;
	struct big_pool *P = regions[k].pool;
	void *n = to_file((size_t)k, &why);
	if (!n)
		die(P, "move", bytes, why);
	pthread_mutex_unlock(&lock);
	return n;
}

void *big_evict(void *p)
{
	if (!p)
		return NULL;
	pthread_mutex_lock(&lock);
	ssize_t k = find(p);
	void *n = NULL;
	const char *why = NULL;
	if (k >= 0 && !regions[k].given_back)
		n = regions[k].in_file ? p : to_file((size_t)k, &why);
	if (n) {
		/* Shared file pages: dropped from this process, kept by the
		 * file (the kernel writes them back), read again on touch. */
		k = find(n);
		madvise(n, regions[k].bytes, MADV_DONTNEED);
	}
	pthread_mutex_unlock(&lock);
	return n;
}

uint64_t big_spilled_bytes(const void *p)
{
	if (!p)
		return 0;
	pthread_mutex_lock(&lock);
	ssize_t k = find(p);
	uint64_t bytes = k >= 0 && regions[k].in_file ? regions[k].bytes : 0;
	pthread_mutex_unlock(&lock);
	return bytes;
}

bool big_rehome(void *p, int fd, uint64_t off)
{
	long page = sysconf(_SC_PAGESIZE);
	if (!p || fd < 0 || page <= 0 || off % (uint64_t)page)
		return false;
	pthread_mutex_lock(&lock);
	ssize_t k = find(p);
	if (k < 0 || !regions[k].in_file) {
		pthread_mutex_unlock(&lock);
		return false;
	}
	/* MAP_FIXED replaces the spill file's mapping in one step: its last
	 * reference, so the unlinked file and its blocks go. */
	void *q = mmap(p, regions[k].bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd,
		       (off_t)off);
	if (q == MAP_FAILED)	/* the old pages may be gone: nothing to go back to */
		die(regions[k].pool, "move (the heap's arrays may be damaged: close it and open "
		    "it again)", regions[k].bytes, strerror(errno));
	fm_note_fd(p, regions[k].bytes, off, fd);
	pthread_mutex_unlock(&lock);
	return true;
}

void big_settle(void *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&lock);
	ssize_t k = find(p);
	if (k >= 0 && !regions[k].settled && !regions[k].given_back)
		regions[k].settled = ++settle_seq;
	pthread_mutex_unlock(&lock);
}

void big_free(void *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&lock);
	ssize_t k = find(p);
	if (k < 0) {
		pthread_mutex_unlock(&lock);
		free(p);
		return;
	}
	struct region r = regions[k];
	forget((size_t)k);
	struct big_pool *P = r.pool;
	if (!r.in_file && !r.given_back && r.bytes >= SPARE_MIN) {
		if (P->nspares == SPARE_MAX) {	/* the smallest goes */
			size_t small = 0;
			for (size_t j = 1; j < P->nspares; j++)
				if (P->spares[j].bytes < P->spares[small].bytes)
					small = j;
			if (P->spares[small].bytes >= r.bytes)
				goto unmap;
			drop_spare(P, small);
		}
		P->spares[P->nspares++] = (struct region){.p = r.p, .bytes = r.bytes, .pool = P};
		P->spare_bytes += r.bytes;
		pthread_mutex_unlock(&lock);
		return;
	}
unmap:
	pthread_mutex_unlock(&lock);
	fm_forget(r.p, r.bytes);
	munmap(r.p, r.bytes);
}

void big_trim(void)
{
	struct big_pool *P = pool_now();
	pthread_mutex_lock(&lock);
	while (P->nspares)
		drop_spare(P, P->nspares - 1);
	pthread_mutex_unlock(&lock);
}

void *big_keep(void *p)
{
	if (!p)
		return p;
	pthread_mutex_lock(&lock);
	ssize_t k = find(p);
	if (k >= 0)
		regions[k].born = 0;
	pthread_mutex_unlock(&lock);
	return p;
}

void big_pool_keep(struct big_pool *P)
{
	/* No lock: guarded calls that made arrays end here. The count only rises. */
	P = P ? P : &process_pool;
	uint64_t now = big_mark();
	uint64_t was = __atomic_load_n(&P->kept, __ATOMIC_RELAXED);
	while (was < now && !__atomic_compare_exchange_n(&P->kept, &was, now, true,
							  __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void big_pool_release(struct big_pool *P, uint64_t mark)
{
	P = P ? P : &process_pool;
	pthread_mutex_lock(&lock);
	uint64_t kept = __atomic_load_n(&P->kept, __ATOMIC_RELAXED);
	uint64_t after = mark > kept ? mark : kept;
	for (size_t k = 0; k < nregions; k++) {
		struct region *r = &regions[k];
		if (r->pool != P || r->given_back || r->born <= after)
			continue;
		/* An anonymous mapping with no access over it, in one step: the
		 * pages go, and so does the spill file with its blocks (this was
		 * its last reference); the addresses stay taken until big_free. */
		fm_forget(r->p, r->bytes);	/* when rehomed into an index */
		void *q = mmap(r->p, r->bytes, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
		if (q == MAP_FAILED)
			continue;	/* the array stays as it is */
		uncount(r);
		r->given_back = true;
		r->in_file = false;
		r->settled = 0;
	}
	pthread_mutex_unlock(&lock);
}

void big_stats(struct big_stats *st)
{
	struct big_pool *P = pool_now();
	pthread_mutex_lock(&lock);
	if (!P->budget)
		P->budget = big_default_budget();
	st->budget = P->budget;
	st->anon = P->anon + P->spare_bytes;
	st->anon_peak = P->anon_peak;
	st->file = P->file;
	st->file_peak = P->file_peak;
	st->files = 0;
	for (size_t k = 0; k < nregions; k++)
		st->files += regions[k].pool == P && regions[k].in_file && !regions[k].given_back;
	st->dir = P->dir_chosen ? P->dir : NULL;
	pthread_mutex_unlock(&lock);
}

int big_plan(uint64_t need, uint64_t counted, uint64_t *spill, struct hs_error *err)
{
	struct big_pool *P = pool_now();
	pthread_mutex_lock(&lock);
	if (!P->budget)
		P->budget = big_default_budget();
	uint64_t budget = P->budget;
	uint64_t others = P->anon > counted ? P->anon - counted : 0;
	uint64_t room = others < budget ? budget - others : 0;
	*spill = need > room ? need - room : 0;
	int st = HS_OK;
	if (*spill) {
		const char *d = choose_dir(P);
		uint64_t avail = free_bytes(d);
		if (avail < *spill) {
			char s[32], a[32], m[32];
			fmt_bytes(s, sizeof s, *spill);
			fmt_bytes(a, sizeof a, avail);
			fmt_bytes(m, sizeof m, budget);
			hs_error_set(err, -1, "this heap needs about %s of disk in %s for what does "
				     "not fit the memory budget (--memory %s), and %s has %s free; "
				     "free space there, choose another folder with --spill-dir, "
				     "or raise --memory", s, d, m, d, a);
			st = HS_ERR;
		}
	}
	pthread_mutex_unlock(&lock);
	return st;
}
