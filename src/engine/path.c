/* path.c - paths from GC roots; see path.h. */
#include "path.h"

#include "../base/big.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

struct step_ctx {
	uint32_t want;
	bool found;
	struct heap_ref r;
};

static bool find_step(void *ctx, const struct heap_ref *r)
{
	struct step_ctx *c = ctx;
	if (r->target != c->want)
		return true;
	c->r = *r;
	c->found = true;
	return false;
}

bool path_step(const struct heap *h, uint32_t from, uint32_t to, struct heap_ref *r)
{
	struct step_ctx c = {.want = to};
	heap_refs(h, from, find_step, &c);
	if (!c.found && h->classes[h->cls[from]].obj == to) {
		c.r = (struct heap_ref){.kind = HEAP_REF_SUPER, .name = "<class>", .target = to};
		c.found = true;
	}
	if (c.found)
		*r = c.r;
	return c.found;
}

void path_via(const struct heap *h, uint32_t from, uint32_t to, char *buf, size_t cap)
{
	struct heap_ref r;
	if (!path_step(h, from, to, &r))
		snprintf(buf, cap, "?");
	else if (r.kind == HEAP_REF_ELEMENT)
		snprintf(buf, cap, "[%u]", r.index);
	else if (r.kind == HEAP_REF_STATIC)
		snprintf(buf, cap, "static %s", r.name);
	else
		snprintf(buf, cap, "%s", r.name ? r.name : "?");
}

int path_to_roots(struct hgraph *g, uint32_t target, uint32_t max,
		  struct path **paths, uint32_t *npaths)
{
	const struct heap *h = g->h;
	uint32_t n = h->n;
	*paths = xcalloc(max + 1, sizeof **paths);
	*npaths = 0;
	/* next[v]: the neighbour one step closer to target; UINT32_MAX unseen */
	uint32_t *next = big_alloc((size_t)n + 1, sizeof *next);
	memset(next, 0xff, ((size_t)n + 1) * sizeof *next);
	uint32_t *queue = big_alloc((size_t)n + 1, sizeof *queue);
	uint32_t qh = 0, qt = 0;
	queue[qt++] = target;
	next[target] = target;
	struct dom_slices s;
	int st = HS_OK;
	while (qh < qt && *npaths < max) {
		uint32_t v = queue[qh++];
		hg_preds(g, v, &s);
		for (int i = 0; i < s.count && *npaths < max; i++)
			for (uint32_t e = 0; e < s.n[i] && *npaths < max; e++) {
				uint32_t u = s.a[i][e];
				if (u == g->root) {
					/* v is a GC root: one more path, v ... target */
					uint32_t len = 1;
					for (uint32_t x = v; x != target; x = next[x])
						len++;
					struct path *p = &(*paths)[(*npaths)++];
					p->len = len;
					p->nodes = xmallocarray(len, sizeof *p->nodes);
					uint32_t k = 0;
					for (uint32_t x = v; x != target; x = next[x])
						p->nodes[k++] = x;
					p->nodes[k] = target;
					break;
				}
				if (next[u] == UINT32_MAX) {
					next[u] = v;
					queue[qt++] = u;
				}
			}
		if ((qh & 0xfffff) == 0 && hs_interrupted) {
			st = HS_INTERRUPTED;
			break;
		}
	}
	big_free(next);
	big_free(queue);
	return st;
}

void path_free(struct path *paths, uint32_t npaths)
{
	for (uint32_t k = 0; k < npaths; k++)
		big_free(paths[k].nodes);
	big_free(paths);
}

struct mnode {
	uint32_t obj, parent, count;
};

static int by_parent_count(const void *a, const void *b)
{
	const struct mnode *x = a, *y = b;
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->obj < y->obj ? -1 : x->obj > y->obj;
}

/*
 * The merge key of an object on the paths: its class, apart for members of
 * the set; a class object is its own key (two classes are never one row).
 */
struct gkey {
	uint64_t key;
	uint32_t count;		/* the group's total, for ordering (set after sorting) */
	uint32_t k;		/* index into m */
};

/* the heap by_group reads class names from, per thread (qsort passes no context) */
static _Thread_local const struct heap *gsort_heap;

static int by_key(const void *a, const void *b)
{
	const struct gkey *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

static int by_group(const void *a, const void *b)
{
	const struct gkey *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;	/* larger groups first */
	if (x->key != y->key) {
		/* then by class name, as the rows read */
		uint32_t cx = (uint32_t)(x->key >> 2), cy = (uint32_t)(y->key >> 2);
		int c = (x->key & 2) || (y->key & 2) ? 0 :
			strcmp(gsort_heap->classes[cx].name, gsort_heap->classes[cy].name);
		if (c)
			return c;
		return x->key < y->key ? -1 : 1;
	}
	return x->k < y->k ? -1 : x->k > y->k;
}

/* group_list: keys of items[0..n), equal keys adjacent, groups largest first. */
static struct gkey *group_list(const struct heap *h, const struct mnode *m, const uint8_t *member,
			       const uint32_t *items, uint32_t n)
{
	struct gkey *keys = xmallocarray((size_t)n + 1, sizeof *keys);
	for (uint32_t j = 0; j < n; j++) {
		uint32_t obj = m[items[j]].obj;
		bool cls_obj = heap_kind(h, obj) == HEAP_CLASS;
		uint64_t base = cls_obj ? (uint64_t)obj : (uint64_t)h->cls[obj];
		keys[j] = (struct gkey){base << 2 | (cls_obj ? 2u : 0u) | (member[obj] ? 1u : 0u),
					0, items[j]};
	}
	qsort(keys, n, sizeof *keys, by_key);
	for (uint32_t a = 0; a < n;) {
		uint32_t b = a, total = 0;
		while (b < n && keys[b].key == keys[a].key)
			total += m[keys[b++].k].count;
		for (uint32_t j = a; j < b; j++)
			keys[j].count = total;
		a = b;
	}
	gsort_heap = h;
	qsort(keys, n, sizeof *keys, by_group);
	return keys;
}

int path_parents(struct hgraph *g, const uint8_t *wanted, uint32_t nwanted, uint32_t *parent)
{
	uint32_t N = g->h->n;
	memset(parent, 0xff, ((size_t)N + 1) * sizeof *parent);
	uint32_t *queue = big_alloc((size_t)N + 1, sizeof *queue);
	uint32_t qh = 0, qt = 0;
	queue[qt++] = g->root;
	parent[g->root] = g->root;
	struct dom_slices s;
	int st = HS_OK;
	while (qh < qt && (!wanted || nwanted)) {
		if ((qh & 0xffff) == 0 && hs_interrupted) {
			st = HS_INTERRUPTED;
			break;
		}
		uint32_t v = queue[qh++];
		if (wanted && v != g->root && wanted[v])
			nwanted--;
		hg_succs(g, v, &s);
		for (int i = 0; i < s.count; i++)
			for (uint32_t e = 0; e < s.n[i]; e++) {
				uint32_t w = s.a[i][e];
				if (parent[w] == UINT32_MAX) {
					parent[w] = v;
					queue[qt++] = w;
				}
			}
	}
	big_free(queue);
	return st;
}

int path_merged(struct hgraph *g, const uint32_t *objs, uint32_t n,
		struct path_row **rows, uint32_t *nrows, uint32_t *unreachable)
{
	const struct heap *h = g->h;
	uint32_t N = h->n;
	*rows = NULL;
	*nrows = 0;
	*unreachable = 0;
	/* Breadth-first from the super-root: parent[] is a shortest-path tree. */
	uint32_t *parent = big_alloc((size_t)N + 1, sizeof *parent);
	if (path_parents(g, NULL, 0, parent) != HS_OK) {
		big_free(parent);
		return HS_INTERRUPTED;
	}
	uint32_t *queue = big_alloc((size_t)N + 1, sizeof *queue);
	/* count[v]: members whose path passes v; reuse queue as the count array. */
	uint32_t *count = queue;
	memset(count, 0, ((size_t)N + 1) * sizeof *count);
	uint8_t *member = big_alloc((size_t)N + 1, 1);
	uint32_t nodes = 0;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t x = objs[k];
		if (parent[x] == UINT32_MAX) {
			(*unreachable)++;
			continue;
		}
		if (member[x])
			continue;
		member[x] = 1;
		for (; x != g->root; x = parent[x])
			if (count[x]++ == 0)
				nodes++;
	}
	struct mnode *m = xmallocarray((size_t)nodes + 1, sizeof *m);
	uint32_t nm = 0;
	for (uint32_t v = 0; v < N; v++)
		if (count[v])
			m[nm++] = (struct mnode){v, parent[v], count[v]};
	qsort(m, nm, sizeof *m, by_parent_count);
	/* Node k's children: the run m[lo[k] .. hi[k]) of the entries whose parent is m[k].obj. */
	uint32_t *lo = xmallocarray((size_t)nm + 1, sizeof *lo);
	uint32_t *hi = xmallocarray((size_t)nm + 1, sizeof *hi);
	for (uint32_t k = 0; k < nm; k++) {
		uint32_t a = 0, b = nm, o = m[k].obj;
		while (a < b) {
			uint32_t c = a + (b - a) / 2;
			if (m[c].parent < o)
				a = c + 1;
			else
				b = c;
		}
		lo[k] = a;
		while (a < nm && m[a].parent == o)
			a++;
		hi[k] = a;
	}
	/* the root's children: the objects whose parent is the super-root */
	uint32_t rlo = 0;
	while (rlo < nm && m[rlo].parent != g->root)
		rlo++;
	uint32_t rhi = rlo;
	while (rhi < nm && m[rhi].parent == g->root)
		rhi++;
	struct path_row *out = xmallocarray((size_t)nm + 1, sizeof *out);
	uint32_t no = 0;
	/*
	 * Depth-first over groups. A frame is a list of m indexes (siblings in
	 * the object tree, or the children of a merged group) at one depth; it
	 * is cut into groups of one class, largest count first, each emitted
	 * and expanded into the list of its objects' children.
	 */
	struct gframe {
		uint32_t *items, n, next, depth;
		struct gkey *keys;	/* sorted (key, index) of the list */
	};
	size_t cap = 64, sp = 0;
	struct gframe *st = xmallocarray(cap, sizeof *st);
	uint32_t *items = xmallocarray((size_t)(rhi - rlo) + 1, sizeof *items);
	for (uint32_t k = rlo; k < rhi; k++)
		items[k - rlo] = k;
	st[sp++] = (struct gframe){items, rhi - rlo, 0, 0, group_list(h, m, member, items,
								       rhi - rlo)};
	while (sp) {
		struct gframe *f = &st[sp - 1];
		if (f->next >= f->n) {
			big_free(f->items);
			big_free(f->keys);
			sp--;
			continue;
		}
		/* the group starting at f->next: equal keys are adjacent */
		uint32_t a = f->next, b = a + 1;
		while (b < f->n && f->keys[b].key == f->keys[a].key)
			b++;
		f->next = b;
		uint32_t k0 = f->keys[a].k;
		struct path_row row = {m[k0].obj, m[k0].parent, b - a, f->depth, 0, false};
		uint32_t nkids = 0;
		for (uint32_t j = a; j < b; j++) {
			uint32_t k = f->keys[j].k;
			row.count += m[k].count;
			row.member |= member[m[k].obj] != 0;
			if (m[k].obj < row.obj) {
				row.obj = m[k].obj;
				row.from = m[k].parent;
			}
			nkids += hi[k] - lo[k];
		}
		out[no++] = row;
		if (!nkids)
			continue;
		uint32_t *kids = xmallocarray((size_t)nkids + 1, sizeof *kids), nk = 0;
		for (uint32_t j = a; j < b; j++) {
			uint32_t k = f->keys[j].k;
			for (uint32_t c = lo[k]; c < hi[k]; c++)
				kids[nk++] = c;
		}
		uint32_t d = f->depth + 1;
		if (sp == cap) {
			cap *= 2;
			st = xreallocarray(st, cap, sizeof *st);
		}
		st[sp++] = (struct gframe){kids, nk, 0, d, group_list(h, m, member, kids, nk)};
	}
	big_free(st);
	big_free(lo);
	big_free(hi);
	big_free(m);
	big_free(member);
	big_free(parent);
	big_free(queue);
	*rows = out;
	*nrows = no;
	return HS_OK;
}
