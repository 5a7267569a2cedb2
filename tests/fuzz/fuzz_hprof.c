/*
 * fuzz_hprof.c - libFuzzer harness for the HPROF reader and the heap model
 * (src/hprof, src/heap) and the engine on what they build (dominator tree,
 * dynamic sizes, paths from GC roots, leak suspects). The input is a dump file, plain or
 * gzip'd (hprof_open tells them apart by their magic). A malformed input
 * must end in an error from heap_load; a loaded heap must survive every
 * read the shell makes of it.
 */
#include "../../src/base/big.h"
#include "fuzz.h"
#include "tiny_heap.h"

#include "../../src/engine/domtree.h"
#include "../../src/engine/dyn.h"
#include "../../src/engine/hgraph.h"
#include "../../src/engine/path.h"
#include "../../src/engine/suspects.h"
#include "../../src/heap/heap.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * With HEAPSH_FUZZ_SEEDS=DIR: write the seeds there and exit: the tiny heap
 * with ids of 4 and 8 bytes, plain and gzip'd, as Android writes it, and
 * twice in one file.
 */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_quiet();
	const char *dir = getenv("HEAPSH_FUZZ_SEEDS");
	if (!dir)
		return 0;
	for (int ids = 4; ids <= 8; ids += 4) {
		struct hw w;
		char name[64];
		tiny_heap(&w, ids);
		snprintf(name, sizeof name, "tiny-%d.hprof", ids);
		fz_seed(dir, name, hw_save(&w));
		snprintf(name, sizeof name, "tiny-%d.hprof.gz", ids);
		fz_seed(dir, name, hw_save_gz(&w, 100));
		hw_free(&w);
	}
	static const char *const variants[] = {NULL, "tiny-android.hprof", "tiny-several.hprof"};
	for (int v = 1; v <= 2; v++) {
		struct hw w;
		tiny_heap_ex(&w, v == 1 ? 4 : 8, v);
		fz_seed(dir, variants[v], hw_save(&w));
		hw_free(&w);
	}
	exit(0);
}

static bool on_ref(void *ctx, const struct heap_ref *r)
{
	*(uint64_t *)ctx += r->target + r->index;
	return true;
}

static void on_field(void *ctx, uint32_t decl, const struct heap_field *f, struct heap_value v)
{
	*(uint64_t *)ctx += decl + f->type + v.v.id;
}

/* Everything the shell reads of one object. */
static uint64_t touch(const struct heap *h, uint32_t i)
{
	uint64_t sum = heap_shallow(h, i) + heap_class_of_object(h, i);
	const char *space = heap_android_heap(h, i);
	if (space)
		sum += strlen(space);
	sum += strlen(heap_class_name(h, i));
	heap_refs(h, i, on_ref, &sum);
	heap_fields_each(h, i, on_field, &sum);
	uint32_t len = heap_array_length(h, i);
	for (uint32_t k = 0; k < len && k < 16; k++)
		sum += heap_array_elem(h, i, k).v.id;
	char *s = heap_string(h, i, 80);
	if (s)
		sum += strlen(s);
	free(s);
	/* The id directory finds every object by its id, and nothing at the
	 * bytes around it (a bitmap chunk or a sub-directory). */
	uint64_t id = heap_id(h, i);
	if (heap_index(h, id) != i)
		abort();
	sum += heap_index(h, id + 4) + heap_index(h, id + 1) + heap_index(h, id - 1);
	uint32_t c;
	const uint32_t *in = heap_in(h, i, &c);
	for (uint32_t k = 0; k < c; k++)
		sum += in[k];
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct heap *h = NULL;
	struct hs_error err;
	const char *path = fz_file(data, size);
	if (heap_load(path, NULL, &h, &err) != HS_OK)
		return 0;
	if (h->ndumps > 1) {	/* a file of several heap dumps: the last one too */
		struct heap_load_opts opts = {0, NULL, NULL, h->ndumps, NULL, 0};
		struct heap *last = NULL;
		if (heap_load(path, &opts, &last, &err) == HS_OK) {
			if (last->dump != h->ndumps)
				abort();
			heap_free(last);
		}
	}
	volatile uint64_t sum = 0;
	for (uint32_t i = 0; i < h->n && i < 512; i++)
		sum += touch(h, i);
	for (uint32_t t = 0; t < h->nthreads; t++) {
		char *name = heap_thread_name(h, t);
		free(name);
	}
	char *v = heap_system_property(h, "java.version");
	free(v);
	for (uint32_t c = 0; c < h->nclasses && c < 64; c++) {
		uint32_t k;
		heap_instances(h, c, &k);
		struct heap_value sv;
		if (h->classes[c].nstatics)
			heap_static(h, c, h->classes[c].statics[0].name, &sv);
	}
	struct dom_tree *t = NULL;
	if (dom_tree_build(h, false, false, &t) == HS_OK && t) {
		uint32_t nk, height, width;
		free(dom_children(t, h->n, &nk));
		dom_tree_shape(t, &height, &width);
		size_t len;
		uint8_t *sec = dom_tree_save(t, h->n, &len);
		bool insane;
		struct dom_tree *back = dom_tree_load(h, false, sec, len, NULL, 0, false, &insane);
		if (!back || insane)
			abort();	/* a tree we built must pass our own check */
		dom_tree_free(back);
		big_free(sec);
		/* leak suspects at a low threshold (so that small inputs have some),
		 * their paths as text, and growth against the same heap */
		struct hgraph gs;
		hg_init(&gs, h, true, true);
		struct sus_opts so = {1, 80};
		struct suspect *sus;
		uint32_t ns;
		if (sus_find(t, &gs, &so, &sus, &ns) == HS_OK) {
			for (uint32_t i = 0; i < ns; i++) {
				free(sus_path_text(h, &sus[i].path, true, 9));
				if (!sus[i].description || !sus[i].where)
					abort();
			}
			sus_baseline(sus, ns, t);
			sus_free(sus, ns);
		}
		hg_free(&gs);
		dom_tree_free(t);
	}
	struct dyn *d = NULL;
	if (dyn_build_heap(h, &d) == HS_OK && d) {
		uint64_t bytes;
		if (h->n)
			dyn_exact(d, dyn_comp(d, 0), &bytes);
		dyn_free(d);
	}
	struct hgraph g;
	hg_init(&g, h, false, true);
	struct path *paths = NULL;
	uint32_t np = 0;
	if (h->n && path_to_roots(&g, h->n - 1, 3, &paths, &np) == HS_OK)
		path_free(paths, np);
	for (uint32_t c = 0; c < h->nclasses; c++) {	/* merged paths of the first class with objects */
		uint32_t k;
		const uint32_t *inst = heap_instances(h, c, &k);
		if (!k)
			continue;
		struct path_row *rows;
		uint32_t nrows, unreach;
		if (path_merged(&g, inst, k, &rows, &nrows, &unreach) == HS_OK)
			free(rows);
		break;
	}
	hg_free(&g);
	heap_free(h);
	(void)sum;
	return 0;
}
