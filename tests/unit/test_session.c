/*
 * test_session.c - the session API (src/heapsh.h) without the shell: a
 * session opens the tiny heap (tests/fuzz/tiny_heap.h), makes the engine's
 * results on demand (from memory, then from the index file a second
 * session finds), runs queries, and reports every failure in its error
 * (struct hs_error) and every remark through its callbacks, never by
 * printing.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/heapsh.h"
#include "../../src/base/big.h"
#include "../../src/session/session_internal.h"
#include "../fuzz/tiny_heap.h"

/* What a front end heard. */
struct heard {
	int notices[5];
	char last[1024];
	int stages, stage_ends;
};

static void notice(void *ctx, enum hs_notice when, const char *text)
{
	struct heard *h = ctx;
	h->notices[when]++;
	snprintf(h->last, sizeof h->last, "%s", text);
}

static void stage(void *ctx, const char *label)
{
	struct heard *h = ctx;
	if (label)
		h->stages++;
	else
		h->stage_ends++;
}

static struct hs_session *listening(struct heard *h)
{
	memset(h, 0, sizeof *h);
	struct hs_session *s = hs_session_new();
	struct hs_callbacks cb = {notice, stage, NULL, NULL, h};
	hs_set_callbacks(s, &cb);
	return s;
}

/* dump_path: dump w written as name in a fresh directory (dir), freed. */
static char dir[64];
static const char *dump_path(struct hw *w, const char *name)
{
	static char path[128];
	strcpy(dir, "/tmp/heapsh-test-session-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(w->b, 1, w->len, f), w->len);
	fclose(f);
	hw_free(w);
	return path;
}

/* tiny_path: the tiny heap written to a file of its own. */
static const char *tiny_path(int variant)
{
	struct hw w;
	tiny_heap_ex(&w, 8, variant);
	return dump_path(&w, "tiny.hprof");
}

static void cleanup(const char *path)
{
	char idx[160];
	snprintf(idx, sizeof idx, "%s.hsidx", path);
	unlink(idx);
	unlink(path);
	rmdir(dir);
}

/* chain_path: a chain of n Nodes (each the next's referrer) from a JNI
 * global root, written to a file of its own in a fresh directory. */
static const char *chain_path(uint32_t n)
{
	struct hw w, body;
	hw_init(&w, 8, 2, 1700000000000ULL);
	hw_utf8(&w, 1, "java/lang/Object");
	hw_utf8(&w, 2, "Node");
	hw_utf8(&w, 3, "next");
	hw_load_class(&w, 1, 0x100, 0, 1);
	hw_load_class(&w, 2, 0x101, 0, 2);
	hw_init_body(&body, 8);
	struct hw_field nf[] = {{3, HPROF_OBJECT}};
	struct hw_class object = {0x100, 0, 0, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL};
	struct hw_class node = {0x101, 0x100, 0, 0, 0, 8, 0, 0, 1, NULL, NULL, nf};
	hw_class_dump(&body, &object);
	hw_class_dump(&body, &node);
	hw_root_jni_global(&body, 0x10000, 0x77);
	for (uint32_t i = 0; i < n; i++)
		hw_instance(&body, 0x10000 + 16 * (uint64_t)i, 0x101, 1,
			    (struct hw_value[]){HW_OBJ(i + 1 < n ? 0x10000 + 16 * (uint64_t)(i + 1) : 0)});
	hw_record_from(&w, HPROF_HEAP_DUMP_SEGMENT, &body);
	hw_dump_end_record(&w);
	hw_free(&body);
	return dump_path(&w, "chain.hprof");
}

/* mapped_file: the file the mapping holding p maps ("" for none) and its
 * inode (0 for none), from /proc/self/maps. */
static unsigned long mapped_file(const void *p, char *out, size_t cap)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	unsigned long ino = 0;
	out[0] = 0;
	while (f && fgets(line, sizeof line, f)) {
		unsigned long lo, hi, i;
		int at = 0;
		if (sscanf(line, "%lx-%lx %*s %*s %*s %lu %n", &lo, &hi, &i, &at) >= 3 &&
		    (unsigned long)p >= lo && (unsigned long)p < hi) {
			snprintf(out, cap, "%s", line + at);
			out[strcspn(out, "\n")] = 0;
			ino = i;
			break;
		}
	}
	if (f)
		fclose(f);
	return ino;
}

/*
 * moved_and_same: the model arrays that were in spill files (was[k]) are
 * mapped from the file of inode ino now, and heap hp and tree t answer as
 * the reference session's (no index) ref and rt.
 */
static void moved_and_same(void *const arrays[6], const bool was[6], unsigned long ino,
			   const struct heap *hp, struct dom_tree *t, const struct heap *ref,
			   struct dom_tree *rt)
{
	char where[1024];
	for (int k = 0; k < 6; k++)
		if (was[k])	/* moved: the index's pages now (a file written unnamed,
				 * O_TMPFILE, keeps that name in the maps) */
			assert_true(mapped_file(arrays[k], where, sizeof where) == ino);
	for (uint32_t v = 0; v <= hp->n; v++)
		assert_true(dom_retained(t, v) == dom_retained(rt, v));
	for (uint32_t i = 0; i < hp->n; i++) {
		uint32_t c1, c2;
		const uint32_t *o1 = heap_out(hp, i, &c1), *o2 = heap_out(ref, i, &c2);
		assert_int_equal(c1, c2);
		assert_memory_equal(o1, o2, c1 * sizeof *o1);
		assert_int_equal(hp->cls[i], ref->cls[i]);
		assert_true(heap_shallow(hp, i) == heap_shallow(ref, i));
	}
}

/*
 * Past the memory budget, the model's arrays that are in spill files when
 * the index is written move into it (idx_put_parts, big_rehome): mapped
 * from the index from then on, their spill files gone, every answer the
 * same as a session's without the index, and as after the session adopts
 * the index (hs_rest).
 */
static void index_moves_spilled_arrays(void **state)
{
	(void)state;
	const uint32_t n = 60000;
	const char *path = chain_path(n);
	big_configure(256u << 10, dir);	/* 256 KiB: the model goes to files */
	struct heard h;
	struct hs_session *ref = listening(&h);
	ref->no_index = true;
	assert_int_equal(hs_open(ref, path), HS_OK);
	struct dom_tree *rt = hs_dom(ref, false);
	assert_non_null(rt);
	struct hs_session *s = listening(&h);
	assert_int_equal(hs_open(s, path), HS_OK);
	struct heap *hp = s->heap;
	assert_false(s->model_from_index);
	void *arrays[] = {hp->pos_lo, hp->cls, hp->size, hp->out_start, hp->out, hp->inst};
	char where[1024];
	int spilled = 0;
	bool was[6];
	for (int k = 0; k < 6; k++) {
		was[k] = big_spilled_bytes(arrays[k]) > 0;
		spilled += was[k];
		mapped_file(arrays[k], where, sizeof where);
		if (was[k])
			assert_non_null(strstr(where, "heapsh-big-"));
	}
	assert_true(spilled >= 2);
	struct dom_tree *t = hs_dom(s, false);	/* computes it and writes the index */
	assert_non_null(t);
	char ixpath[160];
	snprintf(ixpath, sizeof ixpath, "%s.hsidx", path);
	struct stat ix;
	assert_int_equal(stat(ixpath, &ix), 0);
	moved_and_same(arrays, was, (unsigned long)ix.st_ino, hp, t, ref->heap, rt);
	hs_rest(s);	/* adopts the index's sections */
	assert_true(s->model_from_index);
	for (uint32_t i = 0; i < s->heap->n; i++)
		assert_int_equal(heap_index(s->heap, heap_id(ref->heap, i)), i);
	hs_session_free(s);
	hs_session_free(ref);
	big_configure(0, NULL);
	cleanup(path);
}

/*
 * Appending to the index moves spilled arrays too, once the header counts
 * them: an index holding only a tree (written here through idx.h) gets the
 * --no-weak tree and the heap model appended (the same inode), and the
 * model's arrays that were in spill files are then mapped from it, every
 * answer the same as without the index.
 */
static void append_moves_spilled_arrays(void **state)
{
	(void)state;
	const uint32_t n = 60000;
	const char *path = chain_path(n);
	struct heard h;
	struct hs_session *ref = listening(&h);
	ref->no_index = true;
	assert_int_equal(hs_open(ref, path), HS_OK);
	struct dom_tree *rt = hs_dom(ref, true);
	assert_non_null(rt);
	struct idx *x = idx_open(path);	/* an index of one tree, no model */
	size_t len;
	uint8_t *sec = dom_tree_save(hs_dom(ref, false), ref->heap->n, &len);
	struct hs_error err;
	assert_int_equal(idx_put(x, IDX_DOM_ALL, sec, len, &err), HS_OK);
	big_free(sec);
	idx_close(x);
	char ixpath[160];
	snprintf(ixpath, sizeof ixpath, "%s.hsidx", path);
	struct stat before, after;
	assert_int_equal(stat(ixpath, &before), 0);
	big_configure(256u << 10, dir);	/* 256 KiB: the model goes to files */
	struct hs_session *s = listening(&h);
	assert_int_equal(hs_open(s, path), HS_OK);
	assert_false(s->model_from_index);
	struct heap *hp = s->heap;
	void *arrays[] = {hp->pos_lo, hp->cls, hp->size, hp->out_start, hp->out, hp->inst};
	bool was[6];
	int spilled = 0;
	for (int k = 0; k < 6; k++)
		spilled += was[k] = big_spilled_bytes(arrays[k]) > 0;
	assert_true(spilled >= 2);
	/* the index holds a tree: the open appended the model, moving them */
	assert_int_equal(stat(ixpath, &after), 0);
	assert_true(after.st_ino == before.st_ino && after.st_size > before.st_size);
	before = after;
	struct dom_tree *t = hs_dom(s, true);	/* computed and appended */
	assert_non_null(t);
	assert_int_equal(stat(ixpath, &after), 0);
	assert_true(after.st_ino == before.st_ino && after.st_size > before.st_size);
	moved_and_same(arrays, was, (unsigned long)after.st_ino, hp, t, ref->heap, rt);
	hs_session_free(s);
	big_configure(0, NULL);
	s = listening(&h);	/* a reopen maps the model and reads both trees */
	assert_int_equal(hs_open(s, path), HS_OK);
	assert_true(s->model_from_index);
	assert_non_null(hs_dom(s, true));
	assert_non_null(hs_dom(s, false));
	assert_true(dom_retained(s->dom[1], n / 2) == dom_retained(rt, n / 2));
	hs_session_free(s);
	hs_session_free(ref);
	cleanup(path);
}

/* put: section tag of len bytes, each byte fill, into x. */
static void put(struct idx *x, uint32_t tag, size_t len, uint8_t fill)
{
	uint8_t *b = malloc(len);
	assert_non_null(b);
	memset(b, fill, len);
	struct hs_error err;
	assert_int_equal(idx_put(x, tag, b, len, &err), HS_OK);
	free(b);
}

/* holds: x's section tag is len bytes of fill. */
static void holds(const struct idx *x, uint32_t tag, size_t len, uint8_t fill)
{
	uint64_t n;
	const uint8_t *p = idx_section(x, tag, &n);
	assert_non_null(p);
	assert_true(n == len);
	for (size_t i = 0; i < len; i++)
		assert_int_equal(p[i], fill);
}

/* index_at: the index file at path's inode and size. */
static void index_at(const char *path, struct stat *st)
{
	char ixpath[160];
	snprintf(ixpath, sizeof ixpath, "%s.hsidx", path);
	assert_int_equal(stat(ixpath, st), 0);
}

/*
 * A section the index holds is replaced by appending one of its tag, which
 * supersedes it: the file keeps its inode and a mapping of the old one
 * stays good, while the bytes superseded stay at most those in use; past
 * that the file is written again with the sections in use only. A damaged
 * section is left out, the others used; the next put of its tag replaces
 * it. (idx.h, idx_put; the superseded bytes are not read or checked.)
 */
static void index_replaces_in_place(void **state)
{
	(void)state;
	const char *path = tiny_path(0);	/* any file: the index is keyed by it */
	char ixpath[160];
	snprintf(ixpath, sizeof ixpath, "%s.hsidx", path);
	struct stat a, b;
	struct idx *x = idx_open(path);
	put(x, IDX_DOM_ALL, 40000, 1);	/* a new file */
	put(x, IDX_DYN, 3000, 2);	/* appended */
	index_at(path, &a);
	struct idx_mapping m;
	uint64_t n;
	const uint8_t *old = idx_map_section(x, IDX_DYN, &n, &m);
	assert_non_null(old);
	put(x, IDX_DYN, 5000, 3);	/* replaced: appended */
	index_at(path, &b);
	assert_true(b.st_ino == a.st_ino && b.st_size > a.st_size);
	holds(x, IDX_DYN, 5000, 3);
	holds(x, IDX_DOM_ALL, 40000, 1);
	assert_true(n == 3000 && old[0] == 2 && old[2999] == 2);	/* the old one's bytes stay */
	idx_unmap(&m);
	idx_close(x);
	x = idx_open(path);	/* a reopen reads the last of a tag */
	assert_null(idx_note(x));
	holds(x, IDX_DYN, 5000, 3);
	holds(x, IDX_DOM_ALL, 40000, 1);
	idx_close(x);

	/* the last DYN damaged: left out (not the one it superseded), the tree used */
	FILE *f = fopen(ixpath, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)b.st_size - 10, SEEK_SET), 0);
	fputc(0x55, f);
	fclose(f);
	x = idx_open(path);
	assert_non_null(idx_note(x));
	assert_non_null(strstr(idx_note(x), "dynamic-size engine is damaged"));
	assert_null(idx_section(x, IDX_DYN, &n));
	holds(x, IDX_DOM_ALL, 40000, 1);
	index_at(path, &a);
	put(x, IDX_DYN, 6000, 4);	/* replaces the damaged one, appended */
	index_at(path, &b);
	assert_true(b.st_ino == a.st_ino);
	holds(x, IDX_DYN, 6000, 4);
	idx_close(x);
	x = idx_open(path);
	assert_null(idx_note(x));
	holds(x, IDX_DYN, 6000, 4);

	/* superseded bytes past those in use: the file is written again */
	put(x, IDX_DOM_ALL, 40000, 5);	/* dead 3000 + 5000 + 6000... + 40000 */
	index_at(path, &a);
	assert_true(a.st_ino != b.st_ino);
	assert_true((uint64_t)a.st_size < 2 * 4096 + 40000 + 6000 + 4096);
	holds(x, IDX_DOM_ALL, 40000, 5);
	holds(x, IDX_DYN, 6000, 4);
	idx_close(x);
	x = idx_open(path);
	assert_null(idx_note(x));
	holds(x, IDX_DOM_ALL, 40000, 5);
	holds(x, IDX_DYN, 6000, 4);
	idx_close(x);
	cleanup(path);
}

/* sigusr1: the Ctrl-C of index_append_while_locked's second holder. */
static void sigusr1(int sig)
{
	(void)sig;
	hs_interrupted = 1;
}

/*
 * holder: a child process that holds the index's lock (another session
 * appending): from before it writes to *locked until ms milliseconds
 * later, then, with hit, sends the parent SIGUSR1 and holds it until the
 * parent closes done. Returns its pid.
 */
static pid_t holder(const char *ixpath, int locked[2], int done[2], int ms, bool hit)
{
	pid_t child = fork();
	assert_true(child >= 0);
	if (child)
		return child;
	close(done[1]);	/* so that the read ends if the parent goes */
	int fd = open(ixpath, O_RDWR);
	char c = 0;
	if (fd < 0 || flock(fd, LOCK_EX) != 0 || write(locked[1], &c, 1) != 1)
		_exit(1);
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&t, NULL);
	if (hit) {
		kill(getppid(), SIGUSR1);
		_exit(read(done[0], &c, 1) < 0);
	}
	_exit(0);	/* the lock goes with it */
}

/*
 * Two sessions appending to one index at once would write at the same
 * place: while another process holds the file's lock (an append in
 * progress), a put waits for it (lock_appends), then appends; Ctrl-C while
 * it waits gives up, the file as it was.
 */
static void index_append_while_locked(void **state)
{
	(void)state;
	const char *path = tiny_path(0);
	char ixpath[160];
	snprintf(ixpath, sizeof ixpath, "%s.hsidx", path);
	struct idx *x = idx_open(path);
	put(x, IDX_DOM_ALL, 40000, 1);
	struct stat a, b;
	index_at(path, &a);
	int locked[2], done[2], status;
	assert_int_equal(pipe(locked), 0);
	assert_int_equal(pipe(done), 0);
	pid_t child = holder(ixpath, locked, done, 400, false);
	char c;
	assert_int_equal(read(locked[0], &c, 1), 1);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	put(x, IDX_DYN, 3000, 2);	/* waited for, then appended */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 >= 300);
	index_at(path, &b);
	assert_true(b.st_ino == a.st_ino && b.st_size > a.st_size);
	holds(x, IDX_DYN, 3000, 2);
	holds(x, IDX_DOM_ALL, 40000, 1);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Ctrl-C while waiting */
	void (*was)(int) = signal(SIGUSR1, sigusr1);
	child = holder(ixpath, locked, done, 200, true);
	assert_int_equal(read(locked[0], &c, 1), 1);
	uint8_t buf[4000];
	memset(buf, 3, sizeof buf);
	struct hs_error err;
	assert_int_equal(idx_put(x, IDX_DYN, buf, sizeof buf, &err), HS_INTERRUPTED);
	hs_interrupted = 0;
	signal(SIGUSR1, was);
	index_at(path, &a);
	assert_true(a.st_ino == b.st_ino && a.st_size == b.st_size);
	holds(x, IDX_DYN, 3000, 2);
	assert_int_equal(write(done[1], &c, 1), 1);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	put(x, IDX_DYN, 4000, 4);	/* no lock held: appended at once */
	index_at(path, &b);
	assert_true(a.st_ino == b.st_ino);
	idx_close(x);
	for (int k = 0; k < 2; k++) {
		close(locked[k]);
		close(done[k]);
	}
	cleanup(path);
}

/*
 * Two sessions with the same index open, each adding a result: the second
 * to write finds the file grown by the first's append, maps it again and
 * appends after it, so that both results are kept (idx.c, refresh); a
 * section the other damaged is left out. The same when the first made the
 * file, or wrote it whole again, after the second opened it.
 */
static void index_two_sessions_append(void **state)
{
	(void)state;
	const char *path = tiny_path(0);
	struct idx *x = idx_open(path);
	put(x, IDX_DOM_ALL, 40000, 1);
	idx_close(x);
	struct stat a, b;
	index_at(path, &a);
	struct idx *one = idx_open(path), *two = idx_open(path);
	put(one, IDX_DYN, 3000, 2);
	put(two, IDX_DOM_STRONG, 5000, 3);	/* after one's, in place */
	index_at(path, &b);
	assert_true(b.st_ino == a.st_ino);
	holds(two, IDX_DYN, 3000, 2);
	holds(two, IDX_DOM_STRONG, 5000, 3);
	holds(two, IDX_DOM_ALL, 40000, 1);
	x = idx_open(path);
	assert_null(idx_note(x));
	holds(x, IDX_DYN, 3000, 2);
	holds(x, IDX_DOM_STRONG, 5000, 3);
	holds(x, IDX_DOM_ALL, 40000, 1);
	idx_close(x);
	/* one appends again; its section is damaged before two writes */
	put(one, IDX_DYN, 6000, 4);
	char ixpath[160];
	snprintf(ixpath, sizeof ixpath, "%s.hsidx", path);
	index_at(path, &a);
	FILE *f = fopen(ixpath, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)a.st_size - 10, SEEK_SET), 0);
	fputc(0x55, f);
	fclose(f);
	struct timespec t[2] = {a.st_atim, a.st_mtim};
	utimensat(AT_FDCWD, ixpath, t, 0);
	put(two, IDX_DOM_STRONG, 5000, 5);	/* dead 5000 + 3000 + 6000 < live 45000: appended */
	index_at(path, &b);
	assert_true(b.st_ino == a.st_ino);
	uint64_t n;
	assert_null(idx_section(two, IDX_DYN, &n));	/* damaged: left out */
	holds(two, IDX_DOM_STRONG, 5000, 5);
	holds(two, IDX_DOM_ALL, 40000, 1);
	idx_close(one);
	idx_close(two);
	cleanup(path);

	/* both opened before there was a file: the second appends to the first's */
	path = tiny_path(0);
	one = idx_open(path);
	two = idx_open(path);
	put(one, IDX_DOM_ALL, 40000, 1);
	index_at(path, &a);
	put(two, IDX_DOM_STRONG, 5000, 2);
	index_at(path, &b);
	assert_true(b.st_ino == a.st_ino && b.st_size > a.st_size);
	holds(two, IDX_DOM_ALL, 40000, 1);
	holds(two, IDX_DOM_STRONG, 5000, 2);
	/* one writes the file whole (past what it superseded): two, with the
	 * old file mapped, reads the new one, checked, and appends to it */
	put(one, IDX_DOM_ALL, 40000, 3);
	put(one, IDX_DOM_ALL, 40000, 4);	/* superseded 80000 > 45000 in use: whole */
	index_at(path, &a);
	assert_true(a.st_ino != b.st_ino);
	put(two, IDX_DYN, 3000, 5);
	index_at(path, &b);
	assert_true(b.st_ino == a.st_ino);
	x = idx_open(path);
	assert_null(idx_note(x));
	holds(x, IDX_DOM_ALL, 40000, 4);
	holds(x, IDX_DOM_STRONG, 5000, 2);
	holds(x, IDX_DYN, 3000, 5);
	idx_close(x);
	idx_close(one);
	idx_close(two);
	cleanup(path);
}

/* slurp_index: the index file of the dump at path, whole (caller frees). */
static uint8_t *slurp_index(const char *path, size_t *len)
{
	char ixpath[160];
	snprintf(ixpath, sizeof ixpath, "%s.hsidx", path);
	FILE *f = fopen(ixpath, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(*len + 1);
	assert_int_equal(fread(b, 1, *len, f), *len);
	fclose(f);
	return b;
}

/*
 * Ctrl-C while the index is written (hs_interrupted, heard between pieces
 * of 64 MiB): HS_INTERRUPTED, the file as it was, byte for byte, whether
 * the put would have appended or written the file whole; the next put
 * goes through.
 */
static void index_write_interrupted(void **state)
{
	(void)state;
	const char *path = tiny_path(0);
	struct idx *x = idx_open(path);
	put(x, IDX_DOM_ALL, 40000, 1);
	size_t alen, blen;
	uint8_t *before = slurp_index(path, &alen);
	struct stat a, b;
	index_at(path, &a);
	uint8_t buf[3000];
	memset(buf, 2, sizeof buf);
	struct hs_error err;
	hs_interrupted = 1;
	assert_int_equal(idx_put(x, IDX_DYN, buf, sizeof buf, &err), HS_INTERRUPTED);	/* an append */
	assert_non_null(strstr(err.msg, "interrupted"));
	uint8_t big[50000];
	memset(big, 3, sizeof big);
	assert_int_equal(idx_put(x, IDX_DOM_ALL, big, sizeof big, &err), HS_INTERRUPTED);	/* whole */
	hs_interrupted = 0;
	uint8_t *after = slurp_index(path, &blen);
	index_at(path, &b);
	assert_true(a.st_ino == b.st_ino && alen == blen);
	assert_memory_equal(before, after, alen);
	holds(x, IDX_DOM_ALL, 40000, 1);
	put(x, IDX_DYN, 3000, 2);
	holds(x, IDX_DYN, 3000, 2);
	free(before);
	free(after);
	idx_close(x);
	cleanup(path);
}

/* Open, the engine on demand, the index for the next session, close. */
static void open_engine_index(void **state)
{
	(void)state;
	const char *path = tiny_path(0);
	struct heard h;
	struct hs_session *s = listening(&h);
	assert_int_equal(hs_open(s, path), HS_OK);
	assert_non_null(s->heap);
	assert_true(s->heap->n >= 17);	/* its 17 objects and the class objects */
	assert_int_equal(h.notices[HS_NOTICE_ALWAYS] + h.notices[HS_NOTICE_ERROR], 0);
	struct dom_tree *t = hs_dom(s, false);
	assert_non_null(t);
	assert_ptr_equal(hs_dom(s, false), t);	/* made once */
	assert_int_equal(h.stages, 2);		/* computed, written: said so, and done */
	assert_int_equal(h.stage_ends, 2);
	assert_true(dom_retained(t, s->heap->n) > 0);
	uint64_t reachable = dom_retained(t, s->heap->n);
	struct dyn *d = hs_dyn(s, false);
	assert_non_null(d);
	unsigned gen = s->gen;
	hs_close_heap(s);
	assert_null(s->heap);
	assert_int_equal(s->gen, gen + 1);
	hs_session_free(s);

	/* a second session reads the tree from the index the first wrote */
	s = listening(&h);
	assert_int_equal(hs_open(s, path), HS_OK);
	assert_true(s->model_from_index);	/* the heap model went in with the tree */
	assert_int_equal(h.stages, 1);		/* mapping it is the one stage */
	t = hs_dom(s, false);
	assert_non_null(t);
	assert_true(t->from_index);
	assert_int_equal(h.stages, 1);		/* the tree is read, not computed */
	assert_int_equal(dom_retained(t, s->heap->n), reachable);
	hs_session_free(s);

	/* no_index: computed again, nothing read */
	s = listening(&h);
	s->no_index = true;
	assert_int_equal(hs_open(s, path), HS_OK);
	assert_false(s->model_from_index);
	t = hs_dom(s, false);
	assert_false(t->from_index);
	assert_null(hs_index(s));
	hs_session_free(s);
	cleanup(path);
}

/* A query through the session's query language. */
static void query(void **state)
{
	(void)state;
	const char *path = tiny_path(0);
	struct heard h;
	struct hs_session *s = listening(&h);
	s->no_index = true;
	assert_int_equal(hs_open(s, path), HS_OK);
	struct dsl *q = hs_dsl(s);
	assert_non_null(q);
	assert_ptr_equal(hs_dsl(s), q);
	struct dsl_output out;
	struct hs_error err;
	assert_int_equal(dsl_run(q, "objects.filter([it | it is shop.Order]).size()", &out, &err),
			 PARSE_OK);
	assert_int_equal(out.n, 1);
	assert_string_equal(dsl_value_text(q, out.vals[0], out.priv), "4");
	dsl_output_done(q, &out);
	/* a bad query: line and column in the error */
	assert_int_equal(dsl_run(q, "objects.filter(", &out, &err), PARSE_INCOMPLETE);
	assert_int_equal(dsl_run(q, "objects.nosuch()", &out, &err), PARSE_ERROR);
	assert_true(err.line == 1 && err.col > 0);
	dsl_output_done(q, &out);
	hs_session_free(s);
	cleanup(path);
}

/* pool_bytes: s's big arrays now (memory and files), spares released first. */
static uint64_t pool_bytes(struct hs_session *s)
{
	hs_rest(s);
	struct hs_ctx *prev = hs_enter(s);
	struct big_stats st;
	big_stats(&st);
	hs_ctx_enter(prev);
	return st.anon + st.file;
}

/* no_room_after: at the end of the first stage (the tree's build), s's
 * spill folder goes: what follows in the call has no room. */
struct no_room {
	struct hs_session *s;
	int ends;
};

static void no_room_after(void *ctx, const char *label)
{
	struct no_room *r = ctx;
	if (!label && ++r->ends == 1)
		hs_set_memory(r->s, 1, "/nonexistent/heapsh-spill");
}

/*
 * A call that fails for want of room gives back the big arrays it made
 * (src/session/guard.h): a dominator tree whose build fails leaves the
 * session's arrays as they were. What the call had stored in the session
 * before it failed stays, whole: a tree built, then not written to the
 * index (its buffer finds no room), is the session's and reads as it
 * should.
 */
static void failed_call_gives_back(void **state)
{
	(void)state;
	const uint32_t n = 60000;
	const char *path = chain_path(n);
	struct heard h;
	struct hs_session *ref = listening(&h);
	ref->no_index = true;
	assert_int_equal(hs_open(ref, path), HS_OK);
	struct dom_tree *rt = hs_dom(ref, false);
	assert_non_null(rt);

	struct hs_session *s = listening(&h);
	assert_int_equal(hs_open(s, path), HS_OK);
	uint64_t before = pool_bytes(s);
	/* room for the first of the build's arrays only, and no folder for the rest */
	hs_set_memory(s, before + (512u << 10), "/nonexistent/heapsh-spill");
	assert_null(hs_dom(s, false));
	assert_non_null(strstr(hs_errmsg(s), "cannot make a"));
	assert_null(s->dom[0]);
	assert_int_equal(pool_bytes(s), before);

	/* the build fits; writing the tree to the index then fails */
	hs_set_memory(s, 0, NULL);
	struct no_room r = {s, 0};
	struct hs_callbacks cb = {notice, no_room_after, NULL, NULL, &r};
	hs_set_callbacks(s, &cb);
	assert_null(hs_dom(s, false));
	assert_int_equal(r.ends, 2);	/* the build's stage, then the failed call's */
	assert_non_null(strstr(hs_errmsg(s), "/nonexistent/heapsh-spill"));
	struct dom_tree *t = s->dom[0];
	assert_non_null(t);
	hs_set_memory(s, 0, NULL);
	assert_true(hs_dom(s, false) == t);	/* kept, not computed again */
	for (uint32_t v = 0; v <= n; v++)
		assert_true(dom_retained(t, v) == dom_retained(rt, v));
	hs_session_free(s);
	hs_session_free(ref);
	cleanup(path);
}

/* Every failure is in s->err, with what and where; nothing is printed. */
static void errors(void **state)
{
	(void)state;
	struct heard h;
	struct hs_session *s = listening(&h);
	assert_int_equal(hs_open(s, "/nonexistent/dir/x.hprof"), HS_ERR);
	assert_non_null(strstr(s->err.msg, "/nonexistent/dir/x.hprof"));
	assert_null(s->heap);
	assert_null(hs_dom(s, false));
	assert_non_null(strstr(s->err.msg, "no heap is open"));
	assert_int_equal(hs_need_heap(s), HS_ERR);
	assert_int_equal(hs_attach(s, -5), HS_ERR);
	assert_non_null(strstr(s->err.msg, "no process -5"));
	assert_null(hs_live_conn(s));
	assert_non_null(strstr(s->err.msg, "not attached to a JVM"));
	assert_int_equal(h.notices[0] + h.notices[1] + h.notices[2] + h.notices[3] + h.notices[4], 0);

	/* a file that is not a dump: what, and the byte offset */
	char bad[] = "/tmp/heapsh-test-session-bad-XXXXXX";
	int fd = mkstemp(bad);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "JAVA PROFILE 9.9\0garbage", 24), 24);
	close(fd);
	assert_int_equal(hs_open(s, bad), HS_ERR);
	assert_true(strlen(s->err.msg) > 0);
	unlink(bad);
	hs_session_free(s);
}

/* A front end's view: only the functions of heapsh.h, none of the session's fields. */
static void outside(void **state)
{
	(void)state;
	const char *path = tiny_path(0);
	struct heard h;
	struct hs_session *s = listening(&h);
	struct hs_options o = hs_get_options(s);
	assert_int_equal(o.live_time_s, 60);
	assert_int_equal(o.live_mem_mb, 256);
	assert_false(o.no_weak || o.no_index || o.live_off);
	o.no_weak = true;
	o.live_mem_mb = 64;
	hs_set_options(s, &o);
	o = hs_get_options(s);
	assert_true(o.no_weak);
	assert_int_equal(o.live_mem_mb, 64);

	assert_string_equal(hs_errmsg(s), "");
	assert_null(hs_heap(s));
	struct hs_live_info li;
	assert_false(hs_get_live(s, &li));
	assert_int_equal(hs_live_pid(s), 0);
	assert_null(hs_recording(s, NULL));
	bool more;
	char *text;
	assert_int_equal(hs_explain(s, "objects.size()", &more, &text), HS_OK);
	assert_non_null(strstr(text, "nowhere"));
	free(text);

	assert_int_equal(hs_open(s, path), HS_OK);
	assert_non_null(hs_heap(s));
	assert_string_equal(hs_dump_path(s), path);
	char *label = hs_heap_label(s);
	assert_non_null(strstr(label, "heap dump "));
	free(label);
	struct hs_state st;
	hs_get_state(s, &st);
	assert_null(st.dom[0]);
	assert_null(st.dom[1]);
	struct dom_tree *t = hs_dom(s, true);
	hs_get_state(s, &st);
	assert_ptr_equal(st.dom[1], t);
	assert_non_null(st.index_file);
	assert_true(st.nsections > 0);
	assert_true(st.mem.budget > 0);

	/* a query on the heap, and one with an error: its line and column */
	struct hs_answer a;
	assert_int_equal(hs_query(s, "objects.filter([it | it is shop.Order]).size()", 0, &a), HS_OK);
	assert_int_equal(a.ran, HS_RAN_HEAP);
	assert_false(a.error);
	assert_int_equal(a.out.n, 1);
	hs_answer_free(s, &a);
	assert_int_equal(hs_query(s, "objects.filter(", 0, &a), HS_OK);
	assert_true(a.incomplete);
	hs_answer_free(s, &a);
	assert_int_equal(hs_query(s, "1 +\nobjects.nosuch()", 0, &a), HS_OK);
	assert_true(a.error);
	assert_int_equal(a.err.line, 2);
	hs_answer_free(s, &a);
	assert_int_equal(hs_explain(s, "objects.size()", &more, &text), HS_OK);
	assert_non_null(strstr(text, "on the dump"));
	free(text);
	assert_int_equal(hs_explain(s, "objects.filter(", &more, &text), HS_OK);
	assert_true(more);
	assert_null(text);
	assert_int_equal(hs_explain(s, "objects.(", &more, &text), HS_ERR);
	assert_true(strlen(hs_errmsg(s)) > 0);

	uint64_t *keys = hs_array(s, hs_heap(s)->n, sizeof *keys);
	assert_true(keys[hs_heap(s)->n - 1] == 0);
	hs_array_free(s, keys);
	unsigned gen = hs_gen(s);
	hs_close_heap(s);
	assert_int_equal(hs_gen(s), gen + 1);
	assert_int_equal(hs_detach(s), HS_ERR);
	assert_non_null(strstr(hs_errmsg(s), "not attached"));
	hs_session_free(s);
	cleanup(path);
}

/* A file of several dumps opens at the first and says so, as a notice. */
static void notices(void **state)
{
	(void)state;
	const char *path = tiny_path(2);
	struct heard h;
	struct hs_session *s = listening(&h);
	s->no_index = true;
	assert_int_equal(hs_open(s, path), HS_OK);
	assert_int_equal(h.notices[HS_NOTICE_ALWAYS], 1);
	assert_non_null(strstr(h.last, "holds 2 heap dumps; this is dump 1"));
	hs_session_free(s);
	/* a silent session (no callbacks) just works */
	s = hs_session_new();
	s->no_index = true;
	assert_int_equal(hs_open(s, path), HS_OK);
	assert_non_null(hs_dom(s, true));
	hs_session_free(s);
	cleanup(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(open_engine_index),
		cmocka_unit_test(index_moves_spilled_arrays),
		cmocka_unit_test(append_moves_spilled_arrays),
		cmocka_unit_test(index_replaces_in_place),
		cmocka_unit_test(index_append_while_locked),
		cmocka_unit_test(index_two_sessions_append),
		cmocka_unit_test(index_write_interrupted),
		cmocka_unit_test(query),
		cmocka_unit_test(failed_call_gives_back),
		cmocka_unit_test(errors),
		cmocka_unit_test(notices),
		cmocka_unit_test(outside),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
