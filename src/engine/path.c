/* path.c - paths from GC roots; see path.h. */
#include "path.h"

#include <stdlib.h>
#include <string.h>

int path_to_roots(struct hgraph *g, uint32_t target, uint32_t max,
		  struct path **paths, uint32_t *npaths)
{
	const struct heap *h = g->h;
	uint32_t n = h->n;
	*paths = xcalloc(max + 1, sizeof **paths);
	*npaths = 0;
	/* next[v]: the neighbour one step closer to target; UINT32_MAX unseen */
	uint32_t *next = xmallocarray((size_t)n + 1, sizeof *next);
	memset(next, 0xff, ((size_t)n + 1) * sizeof *next);
	uint32_t *queue = xmallocarray((size_t)n + 1, sizeof *queue);
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
	free(next);
	free(queue);
	return st;
}

void path_free(struct path *paths, uint32_t npaths)
{
	for (uint32_t k = 0; k < npaths; k++)
		free(paths[k].nodes);
	free(paths);
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

int path_merged(struct hgraph *g, const uint32_t *objs, uint32_t n,
		struct path_row **rows, uint32_t *nrows, uint32_t *unreachable)
{
	const struct heap *h = g->h;
	uint32_t N = h->n;
	*rows = NULL;
	*nrows = 0;
	*unreachable = 0;
	/* Breadth-first from the super-root: parent[] is a shortest-path tree. */
	uint32_t *parent = xmallocarray((size_t)N + 1, sizeof *parent);
	memset(parent, 0xff, ((size_t)N + 1) * sizeof *parent);
	uint32_t *queue = xmallocarray((size_t)N + 1, sizeof *queue);
	uint32_t qh = 0, qt = 0;
	queue[qt++] = g->root;
	parent[g->root] = g->root;
	struct dom_slices s;
	while (qh < qt) {
		uint32_t v = queue[qh++];
		hg_succs(g, v, &s);
		for (int i = 0; i < s.count; i++)
			for (uint32_t e = 0; e < s.n[i]; e++) {
				uint32_t w = s.a[i][e];
				if (parent[w] == UINT32_MAX) {
					parent[w] = v;
					queue[qt++] = w;
				}
			}
		if ((qh & 0xfffff) == 0 && hs_interrupted) {
			free(parent);
			free(queue);
			return HS_INTERRUPTED;
		}
	}
	/* count[v]: members whose path passes v; reuse queue as the count array. */
	uint32_t *count = queue;
	memset(count, 0, ((size_t)N + 1) * sizeof *count);
	uint8_t *member = xcalloc((size_t)N + 1, 1);
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
	/* Depth-first output: children of a node are a run in m (sorted by parent). */
	struct path_row *out = xmallocarray((size_t)nm + 1, sizeof *out);
	uint32_t no = 0;
	uint32_t *stack = xmallocarray((size_t)nm + 1, sizeof *stack);
	uint32_t *depth = xmallocarray((size_t)nm + 1, sizeof *depth);
	uint32_t sp = 0;
	/* first child run of parent p: binary search */
	#define RUN_START(p, lo_) do { uint32_t a_ = 0, b_ = nm; \
		while (a_ < b_) { uint32_t c_ = a_ + (b_ - a_) / 2; \
			if (m[c_].parent < (p)) a_ = c_ + 1; else b_ = c_; } (lo_) = a_; } while (0)
	uint32_t lo;
	RUN_START(g->root, lo);
	for (uint32_t k = nm; k-- > lo;)
		if (m[k].parent == g->root) {
			stack[sp] = k;
			depth[sp++] = 0;
		}
	while (sp) {
		uint32_t k = stack[--sp], d = depth[sp];
		out[no++] = (struct path_row){m[k].obj, d, m[k].count, member[m[k].obj] != 0};
		RUN_START(m[k].obj, lo);
		uint32_t hi = lo;
		while (hi < nm && m[hi].parent == m[k].obj)
			hi++;
		for (uint32_t c = hi; c-- > lo;) {
			stack[sp] = c;
			depth[sp++] = d + 1;
		}
	}
	#undef RUN_START
	free(stack);
	free(depth);
	free(m);
	free(member);
	free(parent);
	free(queue);
	*rows = out;
	*nrows = no;
	return HS_OK;
}
