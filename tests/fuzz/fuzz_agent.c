/*
 * fuzz_agent.c - libFuzzer harness for the agent's readers of what a
 * client sends (docs/protocol.md), without a JVM: the request readers and
 * the INSTANCES predicate (src/agent/req.c) and the ANALYZE program reader
 * (prog_decode, src/dsl/prog.c), built exactly as in libheapsh_agent.so.
 * The first input byte picks the request; the rest is its payload. A
 * malformed payload must set req.bad or fail prog_decode, never read past
 * the frame or allocate beyond the agent's bound (the allocator here
 * refuses past 64 MiB, as the agent's memory limit would).
 */
#include "fuzz.h"

#include "../../src/agent/ag.h"
#include "../../src/dsl/prog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	struct req r = {data + 1, data + size, false};
	if (data[0] & 1) {
		/* ANALYZE: u32 flags, u32 time limit (ms), u32 memory limit (MiB), program. */
		(void)ag_ru32(&r);
		(void)ag_ru32(&r);
		(void)ag_ru32(&r);
		if (r.bad)
			return 0;
		struct pool pool = {0};
		struct prog prog;
		char why[300];
		prog_decode(r.p, (size_t)(r.end - r.p), pool_alloc, &pool, &prog, why, sizeof why);
		pool_free(&pool);
		return 0;
	}
	/* INSTANCES: str class, u8 flags, u32 limit, predicate (as do_instances). */
	char *cname = ag_rstr(&r);
	(void)ag_ru8(&r);
	(void)ag_ru32(&r);
	int budget = 256;
	struct pnode *pred = cname ? ag_pred_read(&r, 0, &budget) : NULL;
	volatile size_t k = pred && !r.bad ? pred_walk(pred) : 0;
	(void)k;
	ag_pred_free(pred);
	free(cname);
	return 0;
}
