/*
 * dyn_dump_check.c - the dynamic-size engine on a real dump, against brute
 * force (run by tests/t_dyncheck.sh on dumps of tests/java programs).
 *
 *   dyn_dump_check DUMP [SAMPLES]
 *
 * The brute force is the thesis's simple per-object traversal (listing
 * 4.2) over references read by heap_refs, which decodes the records again:
 * instance fields, array elements, and statics of class objects (not
 * HotSpot's pseudo-statics such as <resolved_references>). For
 * SAMPLES objects (default: every object when the heap has at most 30000,
 * else 300 chosen at random) it checks dyn_exact, dyn_exact_many, and
 * dyn_exact_set on random sets. Then it measures the estimator against the
 * exact size of every component and prints how many estimates are within
 * 10%, 25% and 50%, failing when the share within 25% is below the Gamma
 * bound (dyn_est_miss) less 5 points. Exit status 0 when all holds.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/engine/dyn.h"

#define XORSHIFT_SEED 0x9E3779B97F4A7C15ULL
#include "xorshift.h"

struct bfs {
	const struct heap *h;
	uint8_t *seen;
	uint32_t *stack, sp;
};

static bool push_ref(void *ctx, const struct heap_ref *r)
{
	struct bfs *b = ctx;
	if (r->kind != HEAP_REF_FIELD && r->kind != HEAP_REF_ELEMENT && r->kind != HEAP_REF_STATIC)
		return true;
	/* HotSpot's pseudo-statics (<resolved_references>) are not program fields. */
	if (r->kind == HEAP_REF_STATIC && r->name && r->name[0] == '<')
		return true;
	if (r->target != HEAP_NONE && !b->seen[r->target]) {
		b->seen[r->target] = 1;
		b->stack[b->sp++] = r->target;
	}
	return true;
}

/* brute: the shallow bytes reached from starts[0..n), by plain traversal. */
static uint64_t brute(struct bfs *b, const uint32_t *starts, uint32_t n)
{
	const struct heap *h = b->h;
	memset(b->seen, 0, h->n);
	b->sp = 0;
	for (uint32_t k = 0; k < n; k++)
		if (!b->seen[starts[k]]) {
			b->seen[starts[k]] = 1;
			b->stack[b->sp++] = starts[k];
		}
	uint64_t sum = 0;
	while (b->sp) {
		uint32_t v = b->stack[--b->sp];
		sum += heap_shallow(h, v);
		heap_refs(h, v, push_ref, b);
	}
	return sum;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: dyn_dump_check DUMP [SAMPLES]\n");
		return 2;
	}
	struct heap *h;
	struct hs_error err;
	if (heap_load(argv[1], NULL, &h, &err) != HS_OK) {
		fprintf(stderr, "%s: %s\n", argv[1], err.msg);
		return 2;
	}
	struct dyn *d;
	if (dyn_build_heap(h, &d) != HS_OK || dyn_estimate(d) != HS_OK)
		return 2;
	/* What the engine knew exactly when it estimated, and its estimates. */
	uint32_t nc = d->s.ncomp;
	uint8_t *known = malloc((size_t)nc + 1);
	float *e = malloc(((size_t)nc + 1) * 4);
	for (uint32_t c = 0; c < nc; c++)
		known[c] = (d->flags[c] & DYN_EXACT) != 0;
	memcpy(e, d->est, (size_t)nc * 4);
	uint32_t n = h->n, samples = argc > 2 ? (uint32_t)atoi(argv[2]) : n <= 30000 ? n : 300;
	if (samples > n)
		samples = n;
	struct bfs b = {h, calloc(n + 1, 1), malloc(((size_t)n + 1) * 4), 0};
	uint32_t *objs = malloc(((size_t)samples + 1) * 4), *comps = malloc(((size_t)samples + 1) * 4);
	uint64_t *want = malloc(((size_t)samples + 1) * 8), *many = malloc(((size_t)samples + 1) * 8);
	for (uint32_t k = 0; k < samples; k++) {
		objs[k] = samples == n ? k : rnd(n);
		comps[k] = dyn_comp(d, objs[k]);
		want[k] = brute(&b, &objs[k], 1);
	}
	int bad = 0;
	/* 64 at a time first, on a fresh engine state, then one by one. */
	if (dyn_exact_many(d, comps, samples, many) != HS_OK)
		return 2;
	for (uint32_t k = 0; k < samples; k++) {
		uint64_t got;
		if (dyn_exact(d, comps[k], &got) != HS_OK)
			return 2;
		if (got != want[k] || many[k] != want[k]) {
			if (bad++ < 10)
				fprintf(stderr, "object 0x%" PRIx64 " (%s): brute force %" PRIu64
					", dyn_exact %" PRIu64 ", dyn_exact_many %" PRIu64 "\n",
					heap_id(h, objs[k]), heap_class_name(h, objs[k]), want[k], got,
					many[k]);
		}
	}
	/* Unions: random sets, and all instances of each of a few classes. */
	uint32_t sets = 0;
	for (int round = 0; round < 40; round++) {
		uint32_t k = 1 + rnd(round < 20 ? 8 : 200), *set = malloc((size_t)k * 4),
			 *cs = malloc((size_t)k * 4);
		if (round < 30) {
			for (uint32_t j = 0; j < k; j++)
				set[j] = rnd(n);
		} else {
			uint32_t c = rnd(h->nclasses), cnt;
			const uint32_t *inst = heap_instances(h, c, &cnt);
			k = cnt < k ? cnt : k;
			memcpy(set, inst, (size_t)k * 4);
		}
		for (uint32_t j = 0; j < k; j++)
			cs[j] = dyn_comp(d, set[j]);
		uint64_t got, w = brute(&b, set, k);
		if (k && dyn_exact_set(d, cs, k, &got) == HS_OK && got != w && bad++ < 10)
			fprintf(stderr, "a set of %u objects: brute force %" PRIu64 ", dyn_exact_set %"
				PRIu64 "\n", k, w, got);
		sets += k > 0;
		free(set);
		free(cs);
	}
	printf("%s: %u objects, %u components, %u DAPs; %u objects and %u sets checked against "
	       "brute force, %d wrong\n", argv[1], n, d->s.ncomp, d->stats.daps, samples, sets, bad);
	/* The estimator against every component's exact size. */
	uint32_t est = 0, w10 = 0, w25 = 0, w50 = 0;
	double sum_r = 0;
	uint32_t *all = malloc(((size_t)nc + 1) * 4);
	uint64_t *exact = malloc(((size_t)nc + 1) * 8);
	for (uint32_t c = 0; c < nc; c++)
		all[c] = c;
	if (dyn_exact_many(d, all, nc, exact) != HS_OK)
		return 2;
	for (uint32_t c = 0; c < nc; c++) {
		double r = e[c] / (double)exact[c];
		if (known[c] && (r < 0.999999 || r > 1.000001) && bad++ < 10)
			fprintf(stderr, "component %u: estimate %.0f is not its exact size %" PRIu64
				"\n", c, e[c], exact[c]);
		if (known[c])
			continue;
		est++;
		sum_r += r;
		w10 += r >= 0.9 && r <= 1.1;
		w25 += r >= 0.75 && r <= 1.25;
		w50 += r >= 0.5 && r <= 1.5;
	}
	double miss = dyn_est_miss(0.25);
	printf("estimates: %u of %u components estimated (the rest exact); within 10%%: %.1f%%, "
	       "within 25%%: %.1f%% (bound %.1f%%), within 50%%: %.1f%%; mean estimate/exact %.3f\n",
	       est, nc, est ? 100.0 * w10 / est : 100, est ? 100.0 * w25 / est : 100,
	       100 * (1 - miss), est ? 100.0 * w50 / est : 100, est ? sum_r / est : 1);
	if (est >= 100 && (double)w25 / est < 1 - miss - 0.05) {
		fprintf(stderr, "the estimator missed its bound\n");
		bad++;
	}
	free(all);
	free(exact);
	free(known);
	free(e);
	free(objs);
	free(comps);
	free(want);
	free(many);
	free(b.seen);
	free(b.stack);
	dyn_free(d);
	heap_free(h);
	return bad ? 1 : 0;
}
