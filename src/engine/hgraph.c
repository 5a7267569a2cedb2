/* hgraph.c - the heap graph for the engine; see hgraph.h. */
#include "hgraph.h"

#include "../base/big.h"

#include <stdlib.h>
#include <string.h>

void hg_init(struct hgraph *g, const struct heap *h, bool no_weak, bool class_edges)
{
	memset(g, 0, sizeof *g);
	g->h = h;
	g->root = h->n;
	g->no_weak = no_weak;
	g->class_edges = class_edges;
	g->bits = big_alloc((size_t)h->n + 1, 1);
	for (uint32_t r = 0; r < h->nroots; r++)
		g->bits[h->roots[r].obj] |= HG_ROOT;
	g->roots = xmallocarray((size_t)h->nroots + 1, sizeof *g->roots);
	for (uint32_t i = 0; i < h->n; i++)
		if (g->bits[i] & HG_ROOT)
			g->roots[g->nroots++] = i;
	for (uint32_t c = 0; c < h->nclasses; c++)
		if (h->classes[c].obj != HEAP_NONE)
			g->bits[h->classes[c].obj] |= HG_CLASS;
	g->ref_class = xcalloc((size_t)h->nclasses + 1, 1);
	uint32_t ref = heap_class_by_name(h, "java.lang.ref.Reference");
	if (ref != HEAP_NONE)
		for (uint32_t c = 0; c < h->nclasses; c++)
			g->ref_class[c] = heap_is_subclass(h, c, ref);
}

void hg_free(struct hgraph *g)
{
	big_free(g->bits);
	big_free(g->roots);
	big_free(g->ref_class);
	big_free(g->scratch);
	big_free(g->scratch2);
	memset(g, 0, sizeof *g);
}

uint32_t hg_referent(const struct hgraph *g, uint32_t i)
{
	struct heap_value v;
	if (!g->ref_class[g->h->cls[i]] || !heap_field(g->h, i, "referent", &v) ||
	    v.type != HPROF_OBJECT || !v.v.id)
		return HEAP_NONE;
	return heap_index(g->h, v.v.id);
}

static uint32_t *grow(uint32_t **buf, uint32_t *cap, uint32_t need)
{
	if (need > *cap) {
		*cap = need + need / 2 + 16;
		big_free(*buf);
		*buf = xmallocarray(*cap, sizeof **buf);
	}
	return *buf;
}

void hg_succs(void *ctx, uint32_t v, struct dom_slices *s)
{
	struct hgraph *g = ctx;
	const struct heap *h = g->h;
	s->count = 0;
	if (v == g->root) {
		s->a[0] = g->roots;
		s->n[0] = g->nroots;
		s->count = 1;
		return;
	}
	if (g->class_edges) {
		const uint32_t *cobj = &h->classes[h->cls[v]].obj;
		if (*cobj != HEAP_NONE) {
			s->a[s->count] = cobj;
			s->n[s->count++] = 1;
		}
	}
	uint32_t n;
	const uint32_t *out = heap_out(h, v, &n);
	if (g->no_weak && g->ref_class[h->cls[v]]) {
		uint32_t referent = hg_referent(g, v), m = 0;
		uint32_t *buf = grow(&g->scratch, &g->scratch_cap, n);
		bool dropped = false;
		for (uint32_t k = 0; k < n; k++) {
			if (!dropped && out[k] == referent) {
				dropped = true;
				continue;
			}
			buf[m++] = out[k];
		}
		out = buf;
		n = m;
	}
	s->a[s->count] = out;
	s->n[s->count++] = n;
}

void hg_preds(void *ctx, uint32_t w, struct dom_slices *s)
{
	struct hgraph *g = ctx;
	const struct heap *h = g->h;
	s->count = 0;
	if (w == g->root)
		return;
	uint32_t n;
	const uint32_t *in = heap_in(h, w, &n);
	if (g->no_weak) {
		/* Drop one edge from each Reference whose referent is w. */
		uint32_t *buf = NULL, m = 0;
		for (uint32_t k = 0; k < n; k++) {
			uint32_t u = in[k];
			bool drop = g->ref_class[h->cls[u]] && (k == 0 || in[k - 1] != u) &&
				    hg_referent(g, u) == w;
			if (drop && !buf) {
				buf = grow(&g->scratch2, &g->scratch2_cap, n);
				memcpy(buf, in, k * sizeof *buf);
				m = k;
				continue;
			}
			if (buf && !drop)
				buf[m++] = u;
		}
		if (buf) {
			in = buf;
			n = m;
		}
	}
	s->a[s->count] = in;
	s->n[s->count++] = n;
	uint32_t c = g->class_edges && (g->bits[w] & HG_CLASS) ? heap_class_of_object(h, w)
								: HEAP_NONE;
	if (c != HEAP_NONE) {
		uint32_t cnt;
		const uint32_t *inst = heap_instances(h, c, &cnt);
		s->a[s->count] = inst;
		s->n[s->count++] = cnt;
	}
	if (g->bits[w] & HG_ROOT) {
		s->a[s->count] = &g->root;
		s->n[s->count++] = 1;
	}
}

/*
 * hg_dom_preds: hg_preds less what dom_build does not need (dom.h): a GC
 * root gets the super-root alone, an object with one referrer none. Most
 * objects of a heap have one referrer, and the instances of a sticky
 * (bootstrap) class are many: on big1 this leaves 2.3 M of the 10.7 M
 * predecessors to read, and halves the semidominator pass.
 */
static void hg_dom_preds(void *ctx, uint32_t w, struct dom_slices *s)
{
	struct hgraph *g = ctx;
	s->count = 0;
	if (w == g->root)
		return;
	if (g->bits[w] & HG_ROOT) {
		s->a[0] = &g->root;
		s->n[0] = 1;
		s->count = 1;
		return;
	}
	uint32_t n;
	(void)heap_in(g->h, w, &n);
	if (n == 1 && !(g->bits[w] & HG_CLASS))
		return;
	hg_preds(ctx, w, s);
}

struct dom_graph hg_dom_graph(struct hgraph *g)
{
	struct dom_graph d = {g->h->n + 1, g->root, g, hg_succs, hg_dom_preds};
	return d;
}
