/*
 * fuzz_agent.c - libFuzzer harness for the agent's readers of what a
 * client sends (docs/protocol.md), without a JVM: the request readers and
 * the INSTANCES predicate (src/agent/req.c) and the ANALYZE program reader
 * (prog_decode, src/dsl/prog.c), built exactly as in libheapsh_agent.so.
 * The first input byte picks what is read (modulo 4: INSTANCES, ANALYZE,
 * ALLOC_START with its account patterns, the agent's start-up options as
 * -agentpath gives them); the rest is the payload or the option text. A
 * malformed payload must set the reader's error or fail prog_decode, never read past
 * the frame or allocate beyond the agent's bound (the allocator here
 * refuses past 64 MiB, as the agent's memory limit would).
 */
#include "fuzz.h"

#include "../../src/agent/ag.h"
#include "../../src/dsl/prog.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- seeds: INSTANCES requests as heapsh sends them (src/attach/proto.c) ---- */

struct seed {
	uint8_t b[512];
	size_t n;
};
static void u8(struct seed *s, uint64_t v) { s->b[s->n++] = (uint8_t)v; }
static void be(struct seed *s, uint64_t v, int bytes)
{
	for (int k = bytes - 1; k >= 0; k--)
		u8(s, v >> (8 * k));
}
static void str(struct seed *s, const char *t)
{
	be(s, strlen(t), 4);
	memcpy(s->b + s->n, t, strlen(t));
	s->n += strlen(t);
}
static void cmp(struct seed *s, const char *field, int op, int kind, uint64_t bits,
		const char *text)
{
	u8(s, P_CMP);
	str(s, field);
	u8(s, (uint64_t)op);
	u8(s, (uint64_t)kind);
	if (kind == K_LONG || kind == K_DOUBLE)
		be(s, bits, 8);
	else if (kind == K_BOOL)
		u8(s, bits);
	else if (kind == K_STRING)
		str(s, text);
}

/*
 * With HEAPSH_FUZZ_SEEDS=DIR: write INSTANCES requests there (TRUE; status
 * = 7; status = 7 and not (name = "x" or amount < 2.5 or flag); next =
 * null), ALLOC_START requests with account patterns, start-up options, and
 * exit. The ANALYZE seeds come from fuzz_query.
 */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *dir = getenv("HEAPSH_FUZZ_SEEDS");
	if (!dir)
		return 0;
	for (int k = 0; k < 4; k++) {
		struct seed s = {.n = 0};
		u8(&s, 0);	/* INSTANCES (an even first byte) */
		str(&s, k == 3 ? "com.shop.Order" : "Order");
		u8(&s, (uint64_t)(k & 3));
		be(&s, 100, 4);
		if (k == 0) {
			u8(&s, P_TRUE);
		} else if (k == 1) {
			cmp(&s, "status", 0, K_LONG, 7, NULL);
		} else if (k == 2) {
			u8(&s, P_AND);
			u8(&s, 2);
			cmp(&s, "status", 0, K_LONG, 7, NULL);
			u8(&s, P_NOT);
			u8(&s, P_OR);
			u8(&s, 3);
			cmp(&s, "name", 0, K_STRING, 0, "x");
			double d = 2.5;
			uint64_t bits;
			memcpy(&bits, &d, 8);
			cmp(&s, "amount", 2, K_DOUBLE, bits, NULL);
			cmp(&s, "flag", 0, K_BOOL, 1, NULL);
		} else {
			cmp(&s, "next", 0, K_NULL, 0, NULL);
		}
		char path[4096];
		snprintf(path, sizeof path, "%s/instances-%d", dir, k);
		FILE *f = fopen(path, "wb");
		if (!f || fwrite(s.b, 1, s.n, f) != s.n || fclose(f))
			abort();
	}
	static const char *const accounts[] = {"", "com.shop", "com.shop.*,org.example.xml",
					       "a.b.c.*,x,y.z"};
	for (int k = 0; k < 4; k++) {
		struct seed s = {.n = 0};
		u8(&s, 2);	/* ALLOC_START */
		u8(&s, (uint64_t)(k & 3));
		be(&s, 512 * 1024, 8);
		be(&s, 64, 4);
		str(&s, accounts[k]);
		char path[4096];
		snprintf(path, sizeof path, "%s/alloc-start-%d", dir, k);
		FILE *f = fopen(path, "wb");
		if (!f || fwrite(s.b, 1, s.n, f) != s.n || fclose(f))
			abort();
	}
	static const char *const options[] = {"alloc=exact,accounts=com.shop;org.*,depth=32,live=all",
					      "alloc=512k,via=jvmti", "port=1,alloc=1g,depth=1024"};
	for (int k = 0; k < 3; k++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/options-%d", dir, k);
		FILE *f = fopen(path, "wb");
		if (!f || fputc(3, f) == EOF || fputs(options[k], f) == EOF || fclose(f))
			abort();
	}
	exit(0);
}

struct pool {
	void **blocks;
	size_t n, cap, bytes;
};

/* The agent's prog_alloc: zeroed memory, NULL past the bound. */
static void *pool_alloc(void *ctx, size_t n)
{
	struct pool *p = ctx;
	if (n > (64u << 20) - p->bytes)
		return NULL;
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 64;
		p->blocks = realloc(p->blocks, p->cap * sizeof *p->blocks);
		if (!p->blocks)
			abort();
	}
	void *b = calloc(1, n ? n : 1);
	if (!b)
		abort();
	p->bytes += n;
	return p->blocks[p->n++] = b;
}

static void pool_free(struct pool *p)
{
	for (size_t k = 0; k < p->n; k++)
		free(p->blocks[k]);
	free(p->blocks);
}

/* Walk a predicate as the agent's evaluation would, touching every node. */
static size_t pred_walk(const struct pnode *p)
{
	size_t k = 1 + (p->field ? strlen(p->field) : 0) + (p->text ? strlen(p->text) : 0);
	for (int i = 0; i < p->n; i++)
		k += pred_walk(p->kid[i]);
	return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > MAX_REQUEST)
		return 0;	/* the agent refuses longer frames before reading them */
	struct wire_r r = wire_reader(data + 1, size - 1);
	char why[512];
	if (data[0] % 4 == 2) {
		/* ALLOC_START: u8 flags, u64 interval, u32 depth, str accounts (as ag_alloc_request). */
		(void)wire_get8(&r);
		(void)wire_get64(&r);
		(void)wire_get32(&r);
		char *acc = wire_get_strdup(&r, MAX_REQUEST);
		struct pattern pat[MAX_PATTERNS];
		int n = 0;
		if (wire_done(&r) && ag_parse_patterns(acc, ',', pat, &n, why, sizeof why))
			ag_drop_patterns(pat, n);
		free(acc);
		return 0;
	}
	if (data[0] % 4 == 3) {
		/* Start-up options: "alloc=512k,depth=64,accounts=a.b;c.*,via=jvmti" (ag_alloc_options). */
		char *opts = fz_text(data + 1, size - 1);
		static const char *const keys[] = {"alloc", "depth", "accounts", "via"};
		for (size_t k = 0; k < 4; k++) {
			char *v = ag_option(opts, keys[k]);
			uint64_t u;
			struct pattern pat[MAX_PATTERNS];
			int n = 0;
			if (v && k < 2)
				(void)ag_parse_u64(v, &u);
			else if (v && k == 2 && ag_parse_patterns(v, ';', pat, &n, why, sizeof why))
				ag_drop_patterns(pat, n);
			free(v);
		}
		free(opts);
		return 0;
	}
	if (data[0] % 4 == 1) {
		/* ANALYZE: u32 flags, u32 time limit (ms), u32 memory limit (MiB), program. */
		(void)wire_get32(&r);
		(void)wire_get32(&r);
		(void)wire_get32(&r);
		if (r.err)
			return 0;
		struct pool pool = {0};
		struct prog prog;
		prog_decode(r.p, wire_left(&r), pool_alloc, &pool, &prog, why, sizeof why);
		pool_free(&pool);
		return 0;
	}
	/* INSTANCES: str class, u8 flags, u32 limit, predicate (as do_instances). */
	char *cname = wire_get_strdup(&r, MAX_REQUEST);
	(void)wire_get8(&r);
	(void)wire_get32(&r);
	int budget = 256;
	struct pnode *pred = cname ? ag_pred_read(&r, 0, &budget) : NULL;
	volatile size_t k = pred && !r.err ? pred_walk(pred) : 0;
	(void)k;
	ag_pred_free(pred);
	free(cname);
	return 0;
}
