/*
 * fuzz_index.c - libFuzzer harness for the index file reader (src/engine/
 * idx.c) and what is loaded from it: the heap model (heap_model_load,
 * which checks it against the dump), the dominator trees (dom_tree_load,
 * which checks the tree, docs/engine.md) and the dynamic-size engine
 * (dyn_load), on the tiny heap (tiny_heap.h).
 *
 * The input is an index file whose checksums the harness sets (and the
 * dump's key into bytes 16..47): the header's, and each section's it can
 * find, so that mutations reach the sections instead of stopping at a
 * checksum (a valid checksum proves a file undamaged, not sane: issue 15,
 * finding 3). The layout: src/engine/idx.c, tests/index_file.py.
 * Then a section is put into the file, appended or written anew, and a
 * reopen must find it and every section that was read.
 * With HEAPSH_FUZZ_SEEDS=DIR, LLVMFuzzerInitialize writes the index heapsh
 * itself makes for the tiny heap there, as the corpus's seed, and exits.
 */
#include "../../src/base/big.h"
#include "fuzz.h"
#include "tiny_heap.h"

#include <sys/stat.h>
#include <zlib.h>

#include "../../src/engine/domtree.h"
#include "../../src/engine/dyn.h"
#include "../../src/engine/idx.h"
#include "../../src/heap/heap.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
/* use_model: what the shell asks of a heap, on one mapped from the index. */
static bool count_ref(void *ctx, const struct heap_ref *r)
{
	(void)r;
	++*(uint32_t *)ctx;
	return true;
}

static void use_model(struct heap *h)
{
	for (uint32_t i = 0; i < h->n; i++) {
		if (heap_index(h, heap_id(h, i)) != i)
			abort();	/* the load checked the ids: the directory must find them */
		heap_index(h, heap_id(h, i) + 1);
		uint32_t nr = 0, k;
		heap_refs(h, i, count_ref, &nr);
		heap_out(h, i, &k);
		heap_in(h, i, &k);
		heap_shallow(h, i);
		heap_kind(h, i);
		free(heap_object_label(h, i));
		free(heap_string(h, i, 20));
		if (heap_kind(h, i) != HEAP_INSTANCE)
			heap_array_length(h, i);
	}
	for (uint32_t c = 0; c < h->nclasses; c++) {
		uint32_t k;
		heap_instances(h, c, &k);
		struct heap_value v;
		for (uint32_t s = 0; s < h->classes[c].nstatics; s++)
			heap_static(h, c, h->classes[c].statics[s].name, &v);
	}
	for (uint32_t t = 0; t < h->nthreads; t++)
		free(heap_thread_name(h, t));
	struct dom_tree *dt;
	if (dom_tree_build(h, false, false, &dt) == HS_OK)
		dom_tree_free(dt);
	heap_free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], dump[96], idx_path[4096];
static struct heap *heap;
static uint8_t key[32];		/* the dump's key as idx.c writes it */
#define HEADER_BYTES 56		/* an index file's header (idx.c, version 5) */

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	uint8_t *b = malloc(1 << 22);
	*len = fread(b, 1, 1 << 22, f);
	fclose(f);
	return b;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_quiet();
	snprintf(dir, sizeof dir, "%s", fz_tmpdir("index"));
	snprintf(dump, sizeof dump, "%s/tiny.hprof", dir);
	/* No seal folder (idx.h): each input is written over the index in
	 * place, perhaps in the clock tick its writer sealed it in, and must
	 * be checked in full, never trusted. */
	unsetenv("HOME");
	setenv("XDG_CACHE_HOME", "", 1);
	struct hw w;
	tiny_heap(&w, 8);
	FILE *f = fopen(dump, "wb");
	if (!f || fwrite(w.b, 1, w.len, f) != w.len || fclose(f))
		abort();
	hw_free(&w);
	/* A fixed mtime, so the seed's key stays the dump's key in every run. */
	struct timespec t[2] = {{1700000000, 0}, {1700000000, 0}};
	utimensat(AT_FDCWD, dump, t, 0);
	struct hs_error err;
	if (heap_load(dump, NULL, &heap, &err) != HS_OK)
		abort();
	/* The index heapsh writes: the model, both trees and the dynamic-size engine. */
	struct idx *x = idx_open(dump);
	struct heap_model m;
	if (heap_model_save(heap, &m) != HS_OK)
		abort();
	struct idx_part parts[32];
	for (int k = 0; k < m.nparts; k++)
		parts[k] = (struct idx_part){m.parts[k].data, m.parts[k].len};
	struct idx_put mp = {IDX_MODEL, parts, m.nparts};
	if (idx_put_parts(x, &mp, 1, &err) != HS_OK)
		abort();
	heap_model_save_free(&m);
	for (int no_weak = 0; no_weak < 2; no_weak++) {
		struct dom_tree *dt;
		if (dom_tree_build(heap, no_weak, false, &dt) != HS_OK)
			abort();
		size_t len;
		uint8_t *sec = dom_tree_save(dt, heap->n, &len);
		idx_put(x, no_weak ? IDX_DOM_STRONG : IDX_DOM_ALL, sec, len, &err);
		big_free(sec);
		dom_tree_free(dt);
	}
	struct dyn *d;
	if (dyn_build_heap(heap, &d) != HS_OK)
		abort();
	dyn_estimate(d);
	uint64_t dlen;
	void *dsec = dyn_save(d, &dlen);
	idx_put(x, IDX_DYN, dsec, dlen, &err);
	big_free(dsec);
	/* and exact sizes found later, on their own (DYNX; its layout in
	 * dyn.h): the tiny heap's are all known once built, so three of them
	 * again, written by hand */
	struct {
		uint32_t magic, ncomp;
		uint64_t count, pairs[6];
	} dx = {0x31585944u, d->s.ncomp, 0, {0}};
	for (uint32_t c = 0; c < d->s.ncomp && dx.count < 3; c++)
		if (d->flags[c] & DYN_EXACT) {
			dx.pairs[2 * dx.count] = c;
			dx.pairs[2 * dx.count + 1] = d->exact[c];
			dx.count++;
		}
	idx_put(x, IDX_DYN_EXACT, &dx, 16 + 16 * dx.count, &err);
	dyn_free(d);
	size_t len = 0;
	uint8_t *file = slurp(idx_file(x), &len);
	if (!file || len < HEADER_BYTES)
		abort();
	memcpy(key, file + 16, sizeof key);
	snprintf(idx_path, sizeof idx_path, "%s", idx_file(x));
	const char *seeds = getenv("HEAPSH_FUZZ_SEEDS");
	if (seeds) {
		char out[4096];
		snprintf(out, sizeof out, "%s/tiny.hsidx", seeds);
		FILE *o = fopen(out, "wb");
		if (!o || fwrite(file, 1, len, o) != len || fclose(o))
			abort();
		free(file);
		idx_close(x);
		exit(0);
	}
	free(file);
	idx_close(x);
	return 0;
}

static void use_tree(bool no_weak, const uint8_t *p, uint64_t len)
{
	bool insane;
	/* As the session does: the section in a read-only mapping the tree
	 * uses where it lies and unmaps (a write to it would fault here). */
	size_t maplen = len ? (size_t)len : 1;
	void *map = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		abort();
	memcpy(map, p, len);
	mprotect(map, maplen, PROT_READ);
	struct dom_tree *t = dom_tree_load(heap, no_weak, map, len, map, maplen, false, &insane);
	if (getenv("HEAPSH_FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz_index: tree (%s): %s\n", no_weak ? "DOMS" : "DOMA",
			t ? "used" : insane ? "refused: not a tree of this heap" : "stale");
	if (!t) {
		munmap(map, maplen);
		return;
	}
	uint32_t n, height, width;
	free(dom_children(t, heap->n, &n));
	free(dom_children(t, 0, &n));
	for (uint32_t v = 0; v <= heap->n; v++)	/* the children index (Lua's walk) */
		dom_children_view(t, v, &n);
	dom_tree_shape(t, &height, &width);
	uint32_t objs[] = {0, 3, heap->n - 1};
	uint64_t bytes;
	dom_retained_set(t, objs, 3, &bytes);
	dom_tree_free(t);
}

/*
 * set_checksums: the key, then the checksums of every section record that
 * fits (each over its tag, length and payload) and the header's, as
 * idx.c writes them (16-byte records, each payload from the next multiple
 * of 4096).
 */
static void set_checksums(uint8_t *f, size_t size)
{
	if (size < HEADER_BYTES)
		return;
	memcpy(f + 16, key, sizeof key);
	uint32_t nsec;
	memcpy(&nsec, f + 48, 4);
	size_t p = HEADER_BYTES;
	for (uint32_t i = 0; i < nsec && size - p >= 16; i++) {
		uint64_t len;
		memcpy(&len, f + p + 4, 8);
		size_t data = (p + 16 + 4095) / 4096 * 4096;
		if (data > size || len > size - data)
			break;
		uLong crc = crc32_z(0, f + p, 12);
		uint32_t c = (uint32_t)crc32_z(crc, f + data, (size_t)len);
		memcpy(f + p + 12, &c, 4);
		p = data + (size_t)len;
	}
	uint32_t h = (uint32_t)crc32_z(0, f, HEADER_BYTES - 4);
	memcpy(f + HEADER_BYTES - 4, &h, 4);
}

/*
 * put_and_reopen: a section put into whatever file x read (appended, or
 * the file written again) is what the next open finds, and the sections
 * x used are still there, the same length (idx_put_parts; a tag's last
 * section counts).
 */
static void put_and_reopen(struct idx *x)
{
	static const uint32_t tags[] = {IDX_MODEL, IDX_DOM_ALL, IDX_DOM_STRONG};
	uint64_t had[3] = {0}, len;
	for (int k = 0; k < 3; k++)
		if (!idx_section(x, tags[k], &had[k]))
			had[k] = UINT64_MAX;
	static const char memo[] = "a dynamic-size section put by fuzz_index";
	struct hs_error err;
	if (idx_put(x, IDX_DYN, memo, sizeof memo, &err) != HS_OK)
		return;	/* no room: the file is left as it was */
	struct idx *y = idx_open(dump);
	const uint8_t *p = idx_section(y, IDX_DYN, &len);
	if (!p || len != sizeof memo || memcmp(p, memo, sizeof memo))
		abort();
	for (int k = 0; k < 3; k++)
		if (had[k] != UINT64_MAX && (!idx_section(y, tags[k], &len) || len != had[k]))
			abort();
	idx_close(y);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *file = malloc(size + 1);
	memcpy(file, data, size);
	set_checksums(file, size);
	FILE *f = fopen(idx_path, "wb");
	if (!f || fwrite(file, 1, size, f) != size || fclose(f))
		abort();
	free(file);
	struct idx *x = idx_open(dump);
	if (getenv("HEAPSH_FUZZ_VERBOSE") && idx_note(x))
		fprintf(stderr, "fuzz_index: %s\n", idx_note(x));
	uint64_t len;
	const uint8_t *p;
	struct idx_mapping map;
	struct heap_model_src src = {0};
	if ((src.data = idx_map_section(x, IDX_MODEL, &src.len, &map))) {
		src.map = map.base;
		src.maplen = map.len;
		struct heap *h2;
		const char *why;
		if (heap_model_load(dump, NULL, &src, &h2, &why) == HS_OK)
			use_model(h2);	/* frees h2 and the mapping */
		else
			idx_unmap(&map);
	}
	if ((p = idx_section(x, IDX_DOM_ALL, &len)))
		use_tree(false, p, len);
	if ((p = idx_section(x, IDX_DOM_STRONG, &len)))
		use_tree(true, p, len);
	if ((p = idx_section(x, IDX_DYN, &len))) {
		struct dyn *d = dyn_load(p, len, heap->n);
		if (getenv("HEAPSH_FUZZ_VERBOSE"))
			fprintf(stderr, "fuzz_index: dynamic sizes: %s\n", d ? "used" : "refused");
		if (d && (p = idx_section(x, IDX_DYN_EXACT, &len)) && !dyn_load_exact(d, p, len) &&
		    getenv("HEAPSH_FUZZ_VERBOSE"))
			fprintf(stderr, "fuzz_index: exact sizes found later: refused\n");
		if (d) {
			uint64_t bytes;
			for (uint32_t v = 0; v < heap->n; v++)
				dyn_exact(d, dyn_comp(d, v), &bytes);
			uint32_t comps[] = {dyn_comp(d, 0), dyn_comp(d, heap->n - 1)};
			dyn_exact_set(d, comps, 2, &bytes);
			dyn_estimate(d);
			dyn_free(d);
		}
	}
	put_and_reopen(x);
	idx_close(x);
	return 0;
}
