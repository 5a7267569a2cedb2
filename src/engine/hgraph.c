/* hgraph.c - the heap graph for the engine; see hgraph.h. */
#include "hgraph.h"

#include "../base/big.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(HEAP_NONE == DOM_NONE, "class_obj hands HEAP_NONE to dom_build as DOM_NONE");

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
	free(g->class_obj);
	hg_dom_done(g);
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

/* w's referrers in, less one edge from each Reference whose referent is
 * w (no_weak); the class object's instances and the super-root after. */
static void preds_of(struct hgraph *g, uint32_t w, const uint32_t *in, uint32_t n,
		     struct dom_slices *s)
{
	const struct heap *h = g->h;
	if (g->no_weak) {
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

void hg_preds(void *ctx, uint32_t w, struct dom_slices *s)
{
	struct hgraph *g = ctx;
	s->count = 0;
	if (w == g->root)
		return;
	uint32_t n;
	const uint32_t *in = heap_in(g->h, w, &n);
	preds_of(g, w, in, n, s);
}

/*
 * What dom_build needs of the referrers (dom.h): a GC root none (the
 * super-root is enough), an object with one referrer none (it is the DFS
 * parent), a class object all of its own. On big1 that leaves out 1.48 M
 * objects with one referrer and the 332 k references to 649 GC roots: the
 * lists keep 82% of the references, with 4 bytes per object of offsets.
 */
static bool dom_keeps(void *ctx, uint32_t i, uint32_t count)
{
	const struct hgraph *g = ctx;
	uint8_t b = g->bits[i];
	return !(b & HG_ROOT) && (count > 1 || (count == 1 && (b & HG_CLASS)));
}

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
	uint32_t lo = g->dom_start[w], n = g->dom_start[w + 1] - lo;
	if (n || (g->bits[w] & HG_CLASS))
		preds_of(g, w, g->dom_in + lo, n, s);
}

/* hg_dom_prepare: dom_graph.prepare, on one thread (hg_dom_graph). */
static void hg_dom_prepare(void *ctx)
{
	struct hgraph *g = ctx;
	if (!g->dom_start)
		heap_incoming_some(g->h, false, dom_keeps, g, &g->dom_start, &g->dom_in);
	if (g->spill)
		heap_spill(g->spill);
}

struct dom_graph hg_dom_graph(struct hgraph *g, bool later)
{
	const struct heap *h = g->h;
	if (!later && !g->dom_start)
		heap_incoming_some(h, true, dom_keeps, g, &g->dom_start, &g->dom_in);
	struct dom_graph d = {h->n + 1, g->root, g, hg_succs, hg_dom_preds,
			      later && !g->dom_start ? hg_dom_prepare : NULL, NULL};
	if (!g->no_weak) {	/* hg_succs's lists as they are in the heap */
		if (g->class_edges && !g->class_obj) {
			g->class_obj = xmallocarray((size_t)h->nclasses + 1, sizeof *g->class_obj);
			for (uint32_t c = 0; c < h->nclasses; c++)
				g->class_obj[c] = h->classes[c].obj;	/* HEAP_NONE is DOM_NONE */
		}
		g->csr = (struct dom_csr){h->out_start, h->out, g->class_edges ? h->cls : NULL,
					  g->class_obj, g->roots, g->nroots};
		d.csr = &g->csr;
	}
	return d;
}

void hg_dom_done(struct hgraph *g)
{
	big_free(g->dom_start);
	big_free(g->dom_in);
	g->dom_start = g->dom_in = NULL;
}
