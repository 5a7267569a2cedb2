/*
 * fuzz_query.c - libFuzzer harness for the query language (src/dsl): the
 * input is a snippet, parsed and evaluated on the tiny heap (tiny_heap.h)
 * with its dominator tree and dynamic sizes, in a new session each time
 * (so an input means the same whatever ran before it); then the snippet's
 * statements are encoded as the program heapsh sends a JVM (prog_encode)
 * and decoded again (prog_decode): what heapsh encodes, the agent must
 * read; and the decoded program runs as the agent runs it, on a heap whose
 * objects are not numbered (walker.h: handles met in a walk valid only
 * during its callback), where every answer must be the dump's.
 */
#include "fuzz.h"
#include "tiny_heap.h"
#include "walker.h"

#include "../../src/dsl/arena.h"
#include "../../src/dsl/eval.h"
#include "../../src/dsl/prog.h"

#include <dirent.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct heap *heap;
static struct dom_tree *tree;
static struct dyn *dyn;

static struct dom_tree *eng_dom(void *ctx)
{
	(void)ctx;
	return tree;
}

static struct dyn *eng_dyn(void *ctx, bool estimates)
{
	(void)ctx;
	(void)estimates;
	return dyn;
}

static struct alc_rec *eng_alloc(void *ctx, struct hs_error *err)
{
	(void)ctx;
	hs_error_set(err, -1, "no allocation recording in the fuzz harness");
	return NULL;
}

/*
 * With HEAPSH_FUZZ_SEEDS=DIR and a folder of queries as the last argument:
 * write the program of each query that encodes as an ANALYZE request
 * (fuzz_wire's input: FZ_WIRE_ANALYZE, three u32 limits, the program) to
 * DIR; exit.
 */
static void agent_seeds(const char *out, const char *queries)
{
	DIR *dp = opendir(queries);
	if (!dp)
		abort();
	struct dirent *e;
	while ((e = readdir(dp))) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", queries, e->d_name);
		FILE *f = e->d_name[0] != '.' ? fopen(path, "rb") : NULL;
		if (!f)
			continue;
		static char text[1 << 16];
		size_t n = fread(text, 1, sizeof text - 1, f);
		fclose(f);
		text[n] = 0;
		struct arena a;
		memset(&a, 0, sizeof a);
		struct stmt **stmts;
		int ns;
		struct hs_error err;
		uint8_t *prog;
		size_t len;
		char why[300];
		if (parse_snippet(text, &a, &stmts, &ns, &err) == PARSE_OK &&
		    prog_encode(stmts, ns, text, &prog, &len, why, sizeof why) == 0) {
			snprintf(path, sizeof path, "%s/analyze-%s", out, e->d_name);
			FILE *o = fopen(path, "wb");
			static const uint8_t head[13] = {FZ_WIRE_ANALYZE, 0, 0, 0, 0, 0, 0, 0x03, 0xe8};
			if (!o || fwrite(head, 1, 13, o) != 13 || fwrite(prog, 1, len, o) != len ||
			    fclose(o))
				abort();
			free(prog);
		}
		arena_free(&a);
	}
	closedir(dp);
	exit(0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	struct hw w;
	tiny_heap(&w, 8);
	static char path[64];
	snprintf(path, sizeof path, "%s", hw_save(&w));
	struct hs_error err;
	if (heap_load(path, NULL, &heap, &err) != HS_OK ||
	    dom_tree_build(heap, false, false, &tree) != HS_OK ||
	    dyn_build_heap(heap, &dyn) != HS_OK || dyn_estimate(dyn) != HS_OK)
		abort();
	hw_free(&w);	/* deletes the file; the heap keeps its mapping */
	const char *seeds = getenv("HEAPSH_FUZZ_SEEDS");
	if (seeds && *argc > 1)
		agent_seeds(seeds, (*argv)[*argc - 1]);
	return 0;
}

static void *dec_alloc(void *ctx, size_t n)
{
	struct arena *a = ctx;
	return n > (1u << 20) ? NULL : arena_alloc(a, n);
}

/*
 * run_walked: the decoded program (its memory the arena b, which the run
 * adopts) on the walker's view of the heap; when the dump's run (ok, its
 * values' texts) and this one both answer, the same texts.
 */
static void run_walked(struct arena *b, struct prog *p, bool ok, const char **texts, int n)
{
	struct dsl_engine eng = {eng_dom, eng_dyn, eng_alloc, NULL};
	struct walker w;
	walker_init(&w, heap, &eng);
	struct dsl *d = dsl_new_on(&w.view, &eng);
	struct dsl_output out;
	struct hs_error err;
	bool wok = dsl_run_parsed(d, b, p->stmts, p->nstmts, &out, &err) == PARSE_OK;
	struct arena scratch = {NULL, 0};
	if (ok && wok) {
		if (out.n != n)
			abort();
		for (int k = 0; k < n; k++)
			if (strcmp(texts[k], dsl_value_text(d, out.vals[k], &scratch)))
				abort();	/* the walked heap answered otherwise */
	}
	arena_free(&scratch);
	dsl_output_done(d, &out);
	dsl_free(d);
	walker_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fz_text(data, size);
	struct dsl_engine eng = {eng_dom, eng_dyn, eng_alloc, NULL};
	struct dsl *d = dsl_new(heap, &eng);
	struct dsl_output out;
	struct hs_error err;
	bool ok = dsl_run(d, text, &out, &err) == PARSE_OK;
	struct arena scratch = {NULL, 0};	/* texts made while showing, as the shell's */
	const char **texts = calloc((size_t)out.n + 1, sizeof *texts);
	for (int k = 0; k < out.n; k++)
		texts[k] = dsl_value_text(d, out.vals[k], &scratch);
	int nout = out.n;

	struct arena a;
	memset(&a, 0, sizeof a);
	struct stmt **stmts;
	int n;
	if (parse_snippet(text, &a, &stmts, &n, &err) == PARSE_OK) {
		uint8_t *prog;
		size_t len;
		char why[300];
		if (prog_encode(stmts, n, text, &prog, &len, why, sizeof why) == 0) {
			struct arena b;
			memset(&b, 0, sizeof b);
			struct prog back;
			if (prog_decode(prog, len, dec_alloc, &b, &back, why, sizeof why) != 0)
				abort();	/* our own program must read back */
			run_walked(&b, &back, ok, texts, nout);
			arena_free(&b);
			free(prog);
		}
	}
	arena_free(&a);
	free(texts);
	arena_free(&scratch);
	dsl_output_done(d, &out);
	dsl_free(d);
	free(text);
	return 0;
}
