/* scc.c - Tarjan's strongly connected components and the SCC DAG; see scc.h. */
#include "scc.h"

#include "../base/big.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define UNSEEN UINT32_MAX
#define DONE (UINT32_MAX - 1)	/* index[] of a node already in a component */

struct frame {
	uint32_t v, pos;	/* node, next successor to look at */
};

/*
 * tarjan: comp[v] for every node, in completion order; returns the number
 * of components, or UINT32_MAX when interrupted. index[] holds DFS numbers
 * while a node is on the stack and DONE after; low[] becomes comp[].
 */
static uint32_t tarjan(const struct scc_graph *g, uint32_t *low)
{
	uint32_t n = g->n, next = 0, ncomp = 0, sp = 0, fp = 0;
	uint32_t *index = big_alloc((size_t)n + 1, sizeof *index);
	uint32_t *stack = big_alloc((size_t)n + 1, sizeof *stack);
	struct frame *call = big_alloc((size_t)n + 1, sizeof *call);
	memset(index, 0xff, (size_t)n * sizeof *index);
	uint64_t steps = 0;
	for (uint32_t r = 0; r < n && ncomp != UINT32_MAX; r++) {
		if (index[r] != UNSEEN)
			continue;
		index[r] = low[r] = next++;
		stack[sp++] = r;
		call[fp++] = (struct frame){r, 0};
		while (fp) {
			if ((++steps & 0xfffff) == 0)
				hs_progress("strongly connected components", next, g->n);
			if ((steps & 0xffff) == 0 && hs_interrupted) {
				ncomp = UINT32_MAX;
				break;
			}
			struct frame *f = &call[fp - 1];
			uint32_t v = f->v, cnt;
			const uint32_t *succ = g->succs(g->ctx, v, &cnt);
			bool descended = false;
			while (f->pos < cnt) {
				uint32_t w = succ[f->pos++];
				if (index[w] == UNSEEN) {
					index[w] = low[w] = next++;
					stack[sp++] = w;
					call[fp++] = (struct frame){w, 0};
					descended = true;
					break;
				}
				if (index[w] != DONE && index[w] < low[v])
					low[v] = index[w];	/* w is on the stack */
			}
			if (descended)
				continue;
			fp--;
			if (low[v] == index[v]) {
				uint32_t x;
				do {
					x = stack[--sp];
					index[x] = DONE;
					low[x] = ncomp;
				} while (x != v);
				ncomp++;
			} else if (low[v] < low[call[fp - 1].v]) {
				low[call[fp - 1].v] = low[v];	/* not a component root: fp > 0 */
			}
		}
	}
	big_free(index);
	big_free(stack);
	big_free(call);
	return ncomp;
}

int scc_build(const struct scc_graph *g, struct scc *s)
{
	memset(s, 0, sizeof *s);
	uint32_t n = g->n;
	s->n = n;
	s->comp = big_alloc((size_t)n + 1, sizeof *s->comp);
	uint32_t nc = tarjan(g, s->comp);
	if (nc == UINT32_MAX) {
		scc_free(s);
		return HS_INTERRUPTED;
	}
	s->ncomp = nc;
	s->size = big_alloc((size_t)nc + 1, sizeof *s->size);
	s->weight = big_alloc((size_t)nc + 1, sizeof *s->weight);
	for (uint32_t v = 0; v < n; v++) {
		s->size[s->comp[v]]++;
		s->weight[s->comp[v]] += g->weight(g->ctx, v);
	}
	/* Members grouped by component (a counting sort), then each component's
	 * distinct successor components. */
	uint32_t *mstart = big_alloc((size_t)nc + 1, sizeof *mstart);
	uint32_t *members = big_alloc((size_t)n + 1, sizeof *members);
	mstart[0] = 0;
	for (uint32_t c = 0; c < nc; c++)
		mstart[c + 1] = mstart[c] + s->size[c];
	for (uint32_t v = 0; v < n; v++)
		members[mstart[s->comp[v]]++] = v;
	for (uint32_t c = nc; c > 0; c--)
		mstart[c] = mstart[c - 1];
	mstart[0] = 0;
	uint32_t *mark = big_alloc((size_t)nc + 1, sizeof *mark);
	memset(mark, 0xff, (size_t)nc * sizeof *mark);
	size_t cap = (size_t)nc + 16, len = 0;
	s->out = big_alloc(cap, sizeof *s->out);
	s->out_start = big_alloc((size_t)nc + 1, sizeof *s->out_start);
	int st = HS_OK;
	for (uint32_t c = 0; c < nc; c++) {
		s->out_start[c] = (uint32_t)len;
		for (uint32_t k = mstart[c]; k < mstart[c + 1]; k++) {
			uint32_t cnt;
			const uint32_t *succ = g->succs(g->ctx, members[k], &cnt);
			s->nrefs += cnt;
			for (uint32_t j = 0; j < cnt; j++) {
				uint32_t d = s->comp[succ[j]];
				if (d == c || mark[d] == c)
					continue;
				mark[d] = c;
				if (len == cap) {
					cap += cap / 2;
					s->out = big_realloc(s->out, cap, sizeof *s->out);
				}
				s->out[len++] = d;
			}
		}
		if ((c & 0xffff) == 0 && hs_interrupted) {
			st = HS_INTERRUPTED;
			break;
		}
	}
	s->out_start[nc] = (uint32_t)len;
	big_free(mark);
	big_free(members);
	big_free(mstart);
	if (st != HS_OK) {
		scc_free(s);
		return st;
	}
	s->out = big_realloc(s->out, len + 1, sizeof *s->out);
	return HS_OK;
}

void scc_free(struct scc *s)
{
	big_free(s->comp);
	big_free(s->size);
	big_free(s->weight);
	big_free(s->out_start);
	big_free(s->out);
	memset(s, 0, sizeof *s);
}

void scc_preds(const struct scc *s, uint32_t **in_start, uint32_t **in)
{
	uint32_t nc = s->ncomp, m = s->out_start[nc];
	uint32_t *st = big_alloc((size_t)nc + 2, sizeof *st);
	uint32_t *e = big_alloc((size_t)m + 1, sizeof *e);
	for (uint32_t k = 0; k < m; k++)
		st[s->out[k] + 2]++;
	for (uint32_t c = 0; c < nc; c++)
		st[c + 2] += st[c + 1];
	/* st[d+1] is now where d's predecessors start; fill in ascending c. */
	for (uint32_t c = 0; c < nc; c++)
		for (uint32_t k = s->out_start[c]; k < s->out_start[c + 1]; k++)
			e[st[s->out[k] + 1]++] = c;
	*in_start = st;
	*in = e;
}
