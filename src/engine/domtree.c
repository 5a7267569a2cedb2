/* domtree.c - dominator tree, retained sizes and set retention; see domtree.h. */
#include "domtree.h"

#include "../base/big.h"
#include "../base/filemap.h"
#include "../base/radix.h"
#include "../base/u64map.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static struct dom_tree *new_tree(const struct heap *h, bool no_weak)
{
	struct dom_tree *t = xcalloc(1, sizeof *t);
	t->h = h;
	hg_init(&t->g, h, no_weak, true);
	return t;
}

/*
 * set_retained: keep the retained sizes ret[0..n] as 32-bit values, with
 * the few of 4 GiB or more in a map: 4 bytes per object less than 64-bit
 * ones (docs/out-of-core.md).
 */
static void set_retained(struct dom_tree *t, const uint64_t *ret)
{
	uint32_t n = t->h->n;
	t->retained32 = big_alloc((size_t)n + 1, sizeof *t->retained32);
	u64map_init(&t->retained_big, 16);
	for (uint32_t v = 0; v <= n; v++) {
		if (ret[v] < DOM_RETAINED_BIG) {
			t->retained32[v] = (uint32_t)ret[v];
		} else {
			t->retained32[v] = DOM_RETAINED_BIG;
			u64map_put(&t->retained_big, (uint64_t)v + 1, ret[v]);
		}
	}
	/* The tree is read from now on: the next computation's arrays take
	 * memory before it (big_settle). */
	big_settle(t->retained32);
	big_settle(t->idom);
}

int dom_tree_build(struct heap *h, bool no_weak, bool spill, struct dom_tree **out)
{
	*out = NULL;
	/* The build's referrer lists are made first, before the build's own
	 * arrays, so they take memory first (big.h placement); they are given
	 * back after it. */
	struct dom_tree *t = new_tree(h, no_weak);
	uint32_t n = h->n;
	/*
	 * When the build's arrays all fit the budget, nothing is in files yet
	 * (the heap is in memory) and there are two cores, the referrer lists
	 * are made during the build's DFS (hg_dom_graph): its arrays (idom,
	 * order and dom_build's 16 bytes per object), the referrer lists and
	 * their counts, 36 bytes per object and 4 per reference.
	 */
	struct big_stats bs;
	big_stats(&bs);
	uint64_t over = 0;
	struct hs_error e;
	bool later = bs.files == 0 && sysconf(_SC_NPROCESSORS_ONLN) > 1 &&
		     big_plan(36 * ((uint64_t)n + 2) + 4 * (uint64_t)h->out_start[n], 0, &over,
			      &e) == HS_OK && over == 0;
	struct dom_graph dg = hg_dom_graph(&t->g, later);
	/* Objects of HEAP_SIZE_BIG bytes or more (large arrays) have their
	 * sizes in their records: read now, while the records are at hand. */
	struct u64map bigsize;
	u64map_init(&bigsize, 64);
	for (uint32_t v = 0; v < n; v++)
		if (h->size[v] == HEAP_SIZE_BIG)
			u64map_put(&bigsize, (uint64_t)v + 1, heap_shallow(h, v));
	t->idom = big_alloc((size_t)n + 1, sizeof *t->idom);
	uint32_t *order = big_alloc((size_t)n + 1, sizeof *order);
	uint32_t nreach = 0;
	/*
	 * The build and the sums read only references, classes, instance lists
	 * and sizes: record positions can go to disk (not with no_weak, which
	 * reads Reference.referent fields and would read them back at once):
	 * by the thread that makes the referrer lists during the DFS, after
	 * them, when there is one (10 ms of writing on big1 off the build's
	 * path), else now.
	 */
	if (spill && !no_weak && dg.prepare)
		t->g.spill = h;
	else if (spill && !no_weak)
		heap_spill(h);
	int st = dom_build(&dg, t->idom, order, &nreach);
	hg_dom_done(&t->g);
	if (st == HS_OK) {
		/* Bottom-up in reverse preorder: each subtree is done before its root. */
		uint64_t *ret = big_alloc((size_t)n + 1, sizeof *ret);
		for (uint32_t k = nreach; k-- > 1;) {
			if (k > 16) {
				uint32_t y = order[k - 16];
				__builtin_prefetch(&h->size[y]);
				__builtin_prefetch(&ret[y]);
				__builtin_prefetch(&t->idom[y]);
			}
			if (k > 8)
				__builtin_prefetch(&ret[t->idom[order[k - 8]]]);
			uint32_t v = order[k];
			uint64_t sz = h->size[v];
			if (sz == HEAP_SIZE_BIG)
				u64map_get(&bigsize, (uint64_t)v + 1, &sz);
			ret[v] += sz;
			ret[t->idom[v]] += ret[v];
		}
		set_retained(t, ret);
		big_free(ret);
	}
	big_free(order);
	u64map_free(&bigsize);
	if (st != HS_OK) {
		dom_tree_free(t);
		return HS_INTERRUPTED;
	}
	_Static_assert(DOM_NONE == HEAP_NONE, "dom_build's unreachable mark is the tree's");
	t->nreach = nreach - 1;
	*out = t;
	return HS_OK;
}

/*
 * is_tree: t's idom and retained sizes as dom_tree_build makes them: every
 * reachable object's chain of dominators ends at the super-root without a
 * cycle or an unreachable object; unreachable objects retain nothing; each
 * retained size is the object's shallow size plus its children's, without
 * overflow. O(n) time, 9 bytes per object: a chain is walked once to check
 * it and once more to mark it good.
 */
static bool is_tree(const struct dom_tree *t)
{
	const struct heap *h = t->h;
	const uint32_t *idom = t->idom;
	uint32_t n = h->n;
	if (idom[n] != n && idom[n] != HEAP_NONE)	/* the super-root: itself (as built) */
		return false;
	uint8_t *state = big_alloc((size_t)n + 1, 1);	/* 1 on the path, 2 known good */
	uint64_t *sum = big_alloc((size_t)n + 1, sizeof *sum);
	bool ok = true;
	state[n] = 2;
	for (uint32_t v = 0; ok && v < n; v++) {
		if (idom[v] == HEAP_NONE) {
			ok = dom_retained(t, v) == 0;
			continue;
		}
		uint32_t x = v;
		while (state[x] != 2) {
			if (state[x] == 1 || idom[x] == HEAP_NONE || idom[x] > n) {
				ok = false;	/* a cycle, or a chain to an unreachable object */
				break;
			}
			state[x] = 1;
			x = idom[x];
		}
		for (x = v; ok && state[x] == 1; x = idom[x])
			state[x] = 2;
		if (ok)
			ok = !__builtin_add_overflow(sum[idom[v]], dom_retained(t, v), &sum[idom[v]]);
	}
	for (uint32_t v = 0; ok && v < n; v++) {
		uint64_t want;
		if (idom[v] != HEAP_NONE)
			ok = !__builtin_add_overflow(sum[v], heap_shallow(h, v), &want) &&
			     want == dom_retained(t, v);
	}
	ok = ok && sum[n] == dom_retained(t, n);
	big_free(state);
	big_free(sum);
	return ok;
}

void dom_tree_free(struct dom_tree *t)
{
	if (!t)
		return;
	hg_free(&t->g);
	if (t->map) {
		fm_forget(t->map, t->maplen);
		munmap(t->map, t->maplen);
	} else {
		big_free(t->idom);
		big_free(t->retained32);
	}
	u64map_free(&t->retained_big);
	big_free(t->depth);
	big_free(t->pre);
	big_free(t->order);
	big_free(t->span);
	big_free(t->kid_first);
	big_free(t->kids);
	big_free(t);
}

/*
 * child_index: every node's children as one array, in index order: v's
 * are kids[first[v] .. first[v+1]) (first has n+2 entries, the super-root
 * h->n included). O(n), 8 bytes per object; the caller frees both.
 */
static void child_index(const struct dom_tree *t, uint32_t **firstp, uint32_t **kidsp)
{
	uint32_t n = t->h->n;
	uint32_t *first = big_alloc((size_t)n + 2, sizeof *first);
	for (uint32_t v = 0; v < n; v++)
		if (t->idom[v] != HEAP_NONE)
			first[t->idom[v]]++;
	for (uint32_t v = 0; v <= n; v++)	/* first[v]: where v's run ends */
		first[v + 1] += first[v];
	uint32_t *kids = big_alloc((size_t)first[n + 1] + 1, sizeof *kids);
	/* Filled from the end, so each run is in index order and first[v] ends at its start. */
	for (uint32_t v = n; v-- > 0;)
		if (t->idom[v] != HEAP_NONE)
			kids[--first[t->idom[v]]] = v;
	*firstp = first;
	*kidsp = kids;
}

/* the tree by_retained compares in, per thread (qsort passes no context) */
static _Thread_local const struct dom_tree *sort_tree;

/* by_retained: largest retained first; equal sizes by index (qsort's order is not stable). */
static int by_retained(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t rx = dom_retained(sort_tree, x), ry = dom_retained(sort_tree, y);
	if (rx != ry)
		return rx < ry ? 1 : -1;
	return x < y ? -1 : x > y;
}

static void sort_children(const struct dom_tree *t, uint32_t *a, uint32_t k)
{
	if (k > 4096) {
		/* Many children (the super-root's): a radix sort of keys that
		 * order by retained size, largest first, then by index; sizes
		 * of 4 GiB or more fall back to qsort. */
		uint64_t *keys = big_alloc((size_t)k * 2, sizeof *keys);
		uint32_t i = 0;
		for (; i < k && t->retained32[a[i]] != DOM_RETAINED_BIG; i++)
			keys[i] = (uint64_t)(UINT32_MAX - t->retained32[a[i]]) << 32 | a[i];
		if (i == k) {
			const uint64_t *sorted = radix_sort_u64(keys, keys + k, k, 0, 64);
			for (i = 0; i < k; i++)
				a[i] = (uint32_t)sorted[i];
			big_free(keys);
			return;
		}
		big_free(keys);
	}
	if (k > 16) {
		sort_tree = t;
		qsort(a, k, sizeof *a, by_retained);
		return;
	}
	/* Most nodes have a few children: insertion sort, by_retained's order. */
	for (uint32_t i = 1; i < k; i++) {
		uint32_t x = a[i], j = i;
		uint64_t rx = dom_retained(t, x);
		for (; j > 0; j--) {
			uint32_t y = a[j - 1];
			uint64_t ry = dom_retained(t, y);
			if (ry > rx || (ry == rx && y < x))
				break;
			a[j] = y;
		}
		a[j] = x;
	}
}

const uint32_t *dom_children_view(struct dom_tree *t, uint32_t v, uint32_t *count)
{
	if (!t->kids) {
		/* Made whole, then stored and kept (big_keep): t may be older
		 * than the call under way, and a throw must leave it no half
		 * cache. */
		uint32_t n = t->h->n, *first, *kids;
		child_index(t, &first, &kids);
		for (uint32_t w = 0; w <= n; w++)
			sort_children(t, kids + first[w], first[w + 1] - first[w]);
		t->kid_first = big_keep(first);
		t->kids = big_keep(kids);
	}
	*count = t->kid_first[v + 1] - t->kid_first[v];
	return t->kids + t->kid_first[v];
}

/* before: whether x comes before y in dom_children's order. */
static inline bool before(const struct dom_tree *t, uint32_t x, uint32_t y)
{
	uint64_t rx = dom_retained(t, x), ry = dom_retained(t, y);
	return rx != ry ? rx > ry : x < y;
}

/* sift: restore the heap a[0..k) (its root the last in order) from i down. */
static void sift(const struct dom_tree *t, uint32_t *a, uint32_t k, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		if (l < k && before(t, a[m], a[l]))
			m = l;
		if (l + 1 < k && before(t, a[m], a[l + 1]))
			m = l + 1;
		if (m == i)
			return;
		uint32_t x = a[i];
		a[i] = a[m];
		a[m] = x;
		i = m;
	}
}

uint32_t *dom_children_top(struct dom_tree *t, uint32_t v, uint32_t limit, uint32_t *count)
{
	if (t->kids || limit == 0) {
		uint32_t *all = dom_children(t, v, count);
		if (limit == 0)
			*count = 0;
		return all;
	}
	/* A scan of idom keeping the limit first in a heap whose root is the
	 * last of them: O(n + k log limit) against sorting all k children. */
	uint32_t n = t->h->n, k = 0, m = 0, cap = limit < 64 ? limit : 64;
	uint32_t *top = xmallocarray(cap, sizeof *top);
	for (uint32_t w = 0; w < n; w++) {
		if (t->idom[w] != v)
			continue;
		k++;
		if (m < limit) {
			if (m == cap) {
				cap = cap * 2 < limit ? cap * 2 : limit;
				top = xreallocarray(top, cap, sizeof *top);
			}
			top[m++] = w;
			if (m == limit)
				for (uint32_t i = m / 2; i-- > 0;)
					sift(t, top, m, i);
		} else if (before(t, w, top[0])) {
			top[0] = w;
			sift(t, top, m, 0);
		}
	}
	sort_children(t, top, m);
	*count = k;
	return top;
}

uint32_t *dom_children(struct dom_tree *t, uint32_t v, uint32_t *count)
{
	if (t->kids) {
		const uint32_t *view = dom_children_view(t, v, count);
		uint32_t *copy = xmallocarray((size_t)*count + 1, sizeof *copy);
		memcpy(copy, view, (size_t)*count * sizeof *copy);
		return copy;
	}
	/* A scan of idom: a few milliseconds per million objects, no index kept. */
	uint32_t n = t->h->n, k = 0, cap = 64;
	uint32_t *run = xmallocarray(cap, sizeof *run);
	for (uint32_t w = 0; w < n; w++)
		if (t->idom[w] == v) {
			if (k == cap) {
				cap *= 2;
				run = xreallocarray(run, cap, sizeof *run);
			}
			run[k++] = w;
		}
	sort_children(t, run, k);
	*count = k;
	return run;
}

static void ensure_depth(struct dom_tree *t)
{
	uint32_t n = t->h->n;
	if (t->depth)
		return;
	/* Made whole, then stored and kept, as dom_children_view's. */
	uint32_t *depth = big_alloc((size_t)n + 1, sizeof *depth);
	for (uint32_t v = 0; v <= n; v++)
		depth[v] = UINT32_MAX;
	depth[n] = 0;
	/* Walk up to a node of known depth, then fill the path on the way back. */
	uint32_t *stack = big_alloc((size_t)n + 1, sizeof *stack);
	for (uint32_t v = 0; v < n; v++) {
		if (depth[v] != UINT32_MAX || t->idom[v] == HEAP_NONE)
			continue;
		uint32_t sp = 0, x = v;
		while (depth[x] == UINT32_MAX) {
			stack[sp++] = x;
			x = t->idom[x];
		}
		while (sp) {
			uint32_t y = stack[--sp];
			depth[y] = depth[t->idom[y]] + 1;
		}
	}
	big_free(stack);
	t->depth = big_keep(depth);
}

/*
 * ensure_preorder: number the tree depth-first from the super-root: pre[v]
 * is v's place, order[] the inverse, span[v] the size of v's subtree, so
 * w lies under v exactly when pre[v] <= pre[w] < pre[v] + span[v].
 * Unreachable objects get pre UINT32_MAX. O(n) once, 12 bytes per object.
 */
static void ensure_preorder(struct dom_tree *t)
{
	uint32_t n = t->h->n;
	if (t->pre)
		return;
	uint32_t *first, *kids;
	child_index(t, &first, &kids);
	uint32_t nkids = first[n + 1];

	/* Made whole, then stored and kept, as dom_children_view's. */
	uint32_t *pre = big_alloc((size_t)n + 1, sizeof *pre);
	uint32_t *order = big_alloc((size_t)nkids + 1, sizeof *order);
	uint32_t *span = big_alloc((size_t)n + 1, sizeof *span);
	for (uint32_t v = 0; v <= n; v++)
		pre[v] = UINT32_MAX;
	uint32_t *stack = big_alloc((size_t)nkids + 1, sizeof *stack);
	uint32_t sp = 0, k = 0;
	stack[sp++] = n;
	while (sp) {
		uint32_t v = stack[--sp];
		pre[v] = k;
		order[k++] = v;
		span[v] = 1;
		for (uint32_t c = first[v + 1]; c-- > first[v];)
			stack[sp++] = kids[c];
	}
	/* subtree sizes bottom-up: reverse preorder finishes children first */
	for (uint32_t p = k; p-- > 1;)
		span[t->idom[order[p]]] += span[order[p]];
	big_free(stack);
	big_free(kids);
	big_free(first);
	t->order = big_keep(order);
	t->span = big_keep(span);
	t->npre = k;
	t->pre = big_keep(pre);	/* last: the cache is there when pre is */
}

static bool under(const struct dom_tree *t, uint32_t v, uint32_t w)
{
	return t->pre[v] <= t->pre[w] && t->pre[w] - t->pre[v] < t->span[v];
}

/*
 * set_top: the members' lowest common dominator (the super-root h->n when
 * it is none of the objects), or HEAP_NONE when no member is reachable:
 * the lowest ancestor of the first member in preorder whose subtree holds
 * the last one too.
 */
static uint32_t set_top(const struct dom_tree *t, const uint32_t *objs, uint32_t n)
{
	uint32_t lo = HEAP_NONE, hi = HEAP_NONE;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t v = objs[k];
		if (t->pre[v] == UINT32_MAX)
			continue;	/* unreachable */
		if (lo == HEAP_NONE || t->pre[v] < t->pre[lo])
			lo = v;
		if (hi == HEAP_NONE || t->pre[v] > t->pre[hi])
			hi = v;
	}
	if (lo == HEAP_NONE)
		return HEAP_NONE;
	uint32_t top = lo;
	while (!under(t, top, hi))
		top = t->idom[top];
	return top;
}

/*
 * retained_under: dom_retained_set for a set whose lowest common dominator
 * is top. Its marks are by preorder number inside top's subtree, so a call
 * costs the subtree, not the heap.
 */
static int retained_under(struct dom_tree *t, const uint32_t *objs, uint32_t n, uint32_t top,
			  uint64_t *bytes)
{
	const struct heap *h = t->h;
	*bytes = 0;
	if (top == HEAP_NONE)
		return HS_OK;
	for (uint32_t k = 0; k < n; k++)
		if (objs[k] == top) {
			*bytes = dom_retained(t, top);
			return HS_OK;
		}
	/* mark[pre - from]: 1 member, 3 under top, 2 reached */
	uint32_t from = t->pre[top], span = t->span[top];
	uint8_t *mark = big_alloc((size_t)span + 1, 1);
	for (uint32_t k = 0; k < n; k++)
		if (t->pre[objs[k]] - from < span)
			mark[t->pre[objs[k]] - from] = 1;
	/*
	 * Everything the members keep alive lies under top, and every path
	 * from a root to it passes top; so it is what top retains minus what
	 * top still reaches, inside its subtree, when the members are gone.
	 */
	for (uint32_t p = 1; p < span; p++)
		if (!mark[p])
			mark[p] = 3;
	uint32_t *queue = big_alloc((size_t)span + 1, sizeof *queue);
	uint32_t qh = 0, qt = 0;
	uint64_t still = 0;
	queue[qt++] = top;
	mark[0] = 2;
	struct dom_slices s;
	int st = HS_OK;
	while (qh < qt) {
		uint32_t v = queue[qh++];
		if (v != h->n)
			still += heap_shallow(h, v);
		hg_succs(&t->g, v, &s);
		for (int i = 0; i < s.count; i++)
			for (uint32_t e = 0; e < s.n[i]; e++) {
				uint32_t w = s.a[i][e], q = t->pre[w] - from;
				if (q < span && mark[q] == 3) {
					mark[q] = 2;
					queue[qt++] = w;
				}
			}
		if ((qh & 0xfffff) == 0 && hs_interrupted) {
			st = HS_INTERRUPTED;
			break;
		}
	}
	*bytes = dom_retained(t, top) - still;
	big_free(queue);
	big_free(mark);
	return st;
}

int dom_retained_set(struct dom_tree *t, const uint32_t *objs, uint32_t n, uint64_t *bytes)
{
	ensure_preorder(t);
	return retained_under(t, objs, n, set_top(t, objs, n), bytes);
}

/*
 * retained_batch: up to 64 sets at once over the whole reachable graph.
 * reach[v] bit j says v is still reachable from the GC roots when set j is
 * gone: a monotone data-flow problem, solved with a FIFO worklist from the
 * super-root (an object is visited again only when it gains bits). Set j
 * then retains the reachable objects without bit j.
 */
static int retained_batch(struct dom_tree *t, uint32_t k, const uint32_t *const *objs,
			  const uint32_t *n, const uint32_t *which, uint64_t *bytes)
{
	const struct heap *h = t->h;
	uint32_t nn = h->n;
	uint64_t all = k == 64 ? UINT64_MAX : (UINT64_C(1) << k) - 1;
	uint64_t *member = big_alloc((size_t)nn + 1, sizeof *member);
	uint64_t *reach = big_alloc((size_t)nn + 1, sizeof *reach);
	uint8_t *queued = big_alloc((size_t)nn + 1, 1);
	uint32_t *ring = big_alloc((size_t)nn + 1, sizeof *ring);
	for (uint32_t j = 0; j < k; j++)
		for (uint32_t e = 0; e < n[which[j]]; e++)
			member[objs[which[j]][e]] |= UINT64_C(1) << j;
	size_t cap = (size_t)nn + 1, head = 0, count = 0;
	reach[nn] = all;
	ring[0] = nn;
	queued[nn] = 1;
	count = 1;
	struct dom_slices s;
	int st = HS_OK;
	for (uint32_t pops = 1; count; pops++) {
		uint32_t v = ring[head];
		head = head + 1 == cap ? 0 : head + 1;
		count--;
		queued[v] = 0;
		uint64_t m = reach[v];
		hg_succs(&t->g, v, &s);
		for (int i = 0; i < s.count; i++)
			for (uint32_t e = 0; e < s.n[i]; e++) {
				uint32_t w = s.a[i][e];
				uint64_t add = m & ~member[w] & ~reach[w];
				if (!add)
					continue;
				reach[w] |= add;
				if (!queued[w]) {
					queued[w] = 1;
					size_t tail = head + count;
					ring[tail >= cap ? tail - cap : tail] = w;
					count++;
				}
			}
		if ((pops & 0xfffff) == 0 && hs_interrupted) {
			st = HS_INTERRUPTED;
			break;
		}
	}
	for (uint32_t j = 0; j < k; j++)
		bytes[which[j]] = 0;
	for (uint32_t v = 0; v < nn && st == HS_OK; v++) {
		if (t->pre[v] == UINT32_MAX)
			continue;
		uint64_t freed = all & ~reach[v];
		if (!freed)
			continue;
		uint64_t sz = heap_shallow(h, v);
		for (; freed; freed &= freed - 1)
			bytes[which[__builtin_ctzll(freed)]] += sz;
	}
	big_free(ring);
	big_free(queued);
	big_free(reach);
	big_free(member);
	return st;
}

int dom_retained_sets(struct dom_tree *t, uint32_t k, const uint32_t *const *objs,
		      const uint32_t *n, uint64_t *bytes)
{
	ensure_preorder(t);
	/* Sets under a small subtree alone (cheap); the rest 64 at a time. */
	uint32_t *wide = xmallocarray((size_t)k + 1, sizeof *wide), nwide = 0;
	int st = HS_OK;
	for (uint32_t j = 0; j < k && st == HS_OK; j++) {
		uint32_t top = set_top(t, objs[j], n[j]);
		if (top == HEAP_NONE || (top != t->h->n && t->span[top] < t->npre / 16))
			st = retained_under(t, objs[j], n[j], top, &bytes[j]);
		else
			wide[nwide++] = j;
	}
	for (uint32_t b = 0; b < nwide && st == HS_OK; b += 64)
		st = retained_batch(t, nwide - b < 64 ? nwide - b : 64, objs, n, wide + b, bytes);
	big_free(wide);
	return st;
}

int dom_class_retained_lower(struct dom_tree *t, uint64_t *own)
{
	ensure_preorder(t);
	const struct heap *h = t->h;
	memset(own, 0, ((size_t)h->nclasses + 1) * sizeof *own);
	uint32_t *active = xcalloc((size_t)h->nclasses + 1, sizeof *active);
	uint32_t *stack = big_alloc((size_t)t->npre + 1, sizeof *stack), sp = 0;
	int st = HS_OK;
	for (uint32_t p = 1; p < t->npre; p++) {
		if (!(p & 0xfffff) && hs_interrupted) {
			st = HS_INTERRUPTED;
			break;
		}
		uint32_t v = t->order[p];
		/* leave the subtrees that end before v */
		while (sp && p - t->pre[stack[sp - 1]] >= t->span[stack[sp - 1]])
			active[h->cls[stack[--sp]]]--;
		uint32_t c = h->cls[v];
		if (!active[c])
			own[c] += dom_retained(t, v);
		active[c]++;
		stack[sp++] = v;
	}
	big_free(stack);
	big_free(active);
	return st;
}

#define PATH_UNSET (UINT32_MAX - 1)	/* dom_class_paths: not reached yet */

int dom_class_paths(struct dom_tree *t, uint32_t max_depth, struct dom_cpath **paths,
		    uint32_t *n)
{
	const struct heap *h = t->h;
	uint32_t jlc = HEAP_NONE;	/* java.lang.Class */
	for (uint32_t c = 0; c < h->nclasses && jlc == HEAP_NONE; c++)
		if (h->classes[c].name && !strcmp(h->classes[c].name, "java.lang.Class"))
			jlc = c;
	uint32_t *path = big_alloc((size_t)h->n + 1, sizeof *path);
	for (uint32_t v = 0; v < h->n; v++)
		path[v] = PATH_UNSET;
	path[h->n] = UINT32_MAX;	/* the super-root: the empty path */
	struct u64map ids;	/* (parent + 1, class object?, class) + 1 -> path + 1 */
	u64map_init(&ids, 1024);
	struct dom_cpath *out = NULL;
	uint32_t np = 0, cap = 0, *stack = NULL, sp = 0, capstack = 0;
	int st = HS_OK;
	for (uint32_t v = 0; v < h->n && st == HS_OK; v++) {
		if (!(v & 0xfffff) && hs_interrupted)
			st = HS_INTERRUPTED;
		if (t->idom[v] == HEAP_NONE || path[v] != PATH_UNSET)
			continue;
		/* climb to a dominator whose path is known, then come down giving each its own */
		for (uint32_t x = v; path[x] == PATH_UNSET; x = t->idom[x]) {
			if (sp == capstack) {
				capstack = capstack ? capstack * 2 : 1024;
				stack = xreallocarray(stack, capstack, sizeof *stack);
			}
			stack[sp++] = x;
		}
		while (sp) {
			uint32_t x = stack[--sp], up = path[t->idom[x]];
			uint32_t c = h->cls[x];
			bool co = false;
			if (c == jlc) {
				uint32_t of = heap_class_of_object(h, x);
				if (of != HEAP_NONE) {
					c = of;
					co = true;
				}
			}
			uint32_t id = up;
			bool same = up != UINT32_MAX && out[up].cls == c && out[up].class_object == co;
			if (!same && (up == UINT32_MAX || out[up].depth < max_depth)) {
				uint64_t key = (((uint64_t)(up + 1) << 33 | (uint64_t)co << 32 | c) + 1), got;
				if (u64map_get(&ids, key, &got)) {
					id = (uint32_t)(got - 1);
				} else {
					if (np == cap) {
						cap = cap ? cap * 2 : 1024;
						out = xreallocarray(out, cap, sizeof *out);
					}
					id = np++;
					out[id] = (struct dom_cpath){up, c, co, up == UINT32_MAX ? 1 : out[up].depth + 1,
								     0, 0};
					u64map_put(&ids, key, (uint64_t)id + 1);
				}
			}
			path[x] = id;
			if (id != UINT32_MAX) {
				out[id].objects++;
				out[id].shallow += heap_shallow(h, x);
			}
		}
	}
	free(stack);
	big_free(path);
	u64map_free(&ids);
	if (st != HS_OK) {
		free(out);
		out = NULL;
		np = 0;
	}
	*paths = out;
	*n = np;
	return st;
}

void dom_tree_shape(struct dom_tree *t, uint32_t *height, uint32_t *width)
{
	uint32_t n = t->h->n, hmax = 0, wmax = 0;
	ensure_depth(t);
	for (uint32_t v = 0; v < n; v++)
		if (t->idom[v] != HEAP_NONE && t->depth[v] > hmax)
			hmax = t->depth[v];
	uint32_t *count = xcalloc((size_t)hmax + 1, sizeof *count);
	for (uint32_t v = 0; v < n; v++)
		if (t->idom[v] != HEAP_NONE && ++count[t->depth[v]] > wmax)
			wmax = count[t->depth[v]];
	big_free(count);
	*height = hmax;
	*width = wmax;
}

uint8_t *dom_tree_save(const struct dom_tree *t, uint32_t n, size_t *len)
{
	uint64_t nbig = 0;
	for (uint32_t v = 0; v <= n; v++)
		nbig += t->retained32[v] == DOM_RETAINED_BIG;
	size_t arrays = ((size_t)n + 1) * 4;
	*len = 16 + 2 * arrays + nbig * 16;
	uint8_t *buf = big_alloc(*len, 1);
	uint32_t head[2] = {DOM_SECTION_MAGIC, n};
	memcpy(buf, head, 8);
	memcpy(buf + 8, &nbig, 8);
	memcpy(buf + 16, t->idom, arrays);
	memcpy(buf + 16 + arrays, t->retained32, arrays);
	uint8_t *pair = buf + 16 + 2 * arrays;
	for (uint32_t v = 0; v <= n; v++)
		if (t->retained32[v] == DOM_RETAINED_BIG) {
			uint64_t kv[2] = {(uint64_t)v + 1, dom_retained(t, v)};
			memcpy(pair, kv, 16);
			pair += 16;
		}
	return buf;
}

/* shape_of: true when p (len bytes) is laid out as dom_tree_save writes a
 * tree of n objects; *nbig its count of sizes of 4 GiB or more. */
static bool shape_of(const uint8_t *p, uint64_t len, uint32_t n, uint64_t *nbig)
{
	uint32_t head[2];
	uint64_t arrays = ((uint64_t)n + 1) * 4;
	if (len < 16 + 2 * arrays)
		return false;
	memcpy(head, p, 8);
	memcpy(nbig, p + 8, 8);
	return head[0] == DOM_SECTION_MAGIC && head[1] == n &&
	       *nbig <= (len - 16 - 2 * arrays) / 16 && len == 16 + 2 * arrays + *nbig * 16;
}

bool dom_tree_adopt(struct dom_tree *t, const uint8_t *p, uint64_t len, void *map,
		    size_t maplen)
{
	uint32_t n = t->h->n;
	uint64_t nbig;
	size_t arrays = ((size_t)n + 1) * 4;
	if (t->map || !map || ((uintptr_t)p & 7) || !shape_of(p, len, n, &nbig) ||
	    nbig != t->retained_big.len)
		return false;
	big_free(t->idom);
	big_free(t->retained32);
	t->idom = (uint32_t *)(uintptr_t)(p + 16);
	t->retained32 = (uint32_t *)(uintptr_t)(p + 16 + arrays);
	t->map = map;
	t->maplen = maplen;
	return true;
}

struct dom_tree *dom_tree_load(const struct heap *h, bool no_weak, const uint8_t *p,
			       uint64_t len, void *map, size_t maplen, bool trusted,
			       bool *insane)
{
	uint32_t n = h->n;
	uint64_t nbig;
	size_t arrays = ((size_t)n + 1) * 4;
	*insane = false;
	if (!shape_of(p, len, n, &nbig))
		return NULL;	/* another layout, or another heap's */
	if (map && ((uintptr_t)p & 7))
		map = NULL;	/* not where its arrays can be used: copied */
	struct dom_tree *t = new_tree(h, no_weak);
	if (map) {
		t->idom = (uint32_t *)(uintptr_t)(p + 16);
		t->retained32 = (uint32_t *)(uintptr_t)(p + 16 + arrays);
	} else {
		t->idom = big_alloc((size_t)n + 1, sizeof *t->idom);
		t->retained32 = big_alloc((size_t)n + 1, sizeof *t->retained32);
		memcpy(t->idom, p + 16, arrays);
		memcpy(t->retained32, p + 16 + arrays, arrays);
	}
	u64map_init(&t->retained_big, nbig < 16 ? 16 : (size_t)nbig);
	bool ok = true;
	const uint8_t *pair = p + 16 + 2 * arrays;
	for (uint64_t k = 0; ok && k < nbig; k++, pair += 16) {
		uint64_t kv[2];
		memcpy(kv, pair, 16);
		/* each entry of a size in the map, once, and of 4 GiB or more */
		uint64_t seen;
		ok = kv[0] >= 1 && kv[0] <= (uint64_t)n + 1 && kv[1] >= DOM_RETAINED_BIG &&
		     t->retained32[kv[0] - 1] == DOM_RETAINED_BIG &&
		     !u64map_get(&t->retained_big, kv[0], &seen);
		if (ok)
			u64map_put(&t->retained_big, kv[0], kv[1]);
	}
	ok = ok && (trusted || is_tree(t));
	if (!ok) {
		*insane = true;
		if (map)	/* the mapping stays the caller's */
			t->idom = t->retained32 = NULL;
		dom_tree_free(t);
		return NULL;
	}
	t->map = map;
	t->maplen = maplen;
	for (uint32_t v = 0; v < n; v++)
		t->nreach += t->idom[v] != HEAP_NONE;
	t->from_index = true;
	t->trusted = trusted;
	big_settle(t->idom);	/* read from now on (when copied) */
	big_settle(t->retained32);
	return t;
}

int dom_classes_retained(struct dom_tree *t, const uint32_t *classes, uint32_t n, int hid,
			 uint64_t *ret)
{
	const struct heap *h = t->h;
	const uint32_t **inst = xmallocarray((size_t)n + 1, sizeof *inst);
	uint32_t *cnt = xmallocarray((size_t)n + 1, sizeof *cnt);
	uint32_t *own = NULL;	/* hid: the instances in that heap, class by class */
	if (hid >= 0)
		own = big_alloc((size_t)h->n + 1, sizeof *own);
	for (uint32_t k = 0, used = 0; k < n; k++) {
		inst[k] = heap_instances(h, classes[k], &cnt[k]);
		if (!own)
			continue;
		uint32_t m = 0;
		for (uint32_t j = 0; j < cnt[k]; j++)
			if (h->heap_of[inst[k][j]] == hid)
				own[used + m++] = inst[k][j];
		inst[k] = own + used;
		cnt[k] = m;
		used += m;
	}
	int st = dom_retained_sets(t, n, inst, cnt, ret);
	big_free(own);
	free(inst);
	free(cnt);
	return st;
}

void dom_sort_by_retained(uint32_t *classes, uint64_t *ret, uint32_t n)
{
	for (uint32_t a = 1; a < n; a++) {	/* insertion sort: stable, and n is a few thousand */
		uint64_t rk = ret[a];
		uint32_t vk = classes[a], b = a;
		while (b > 0 && ret[b - 1] < rk) {
			ret[b] = ret[b - 1];
			classes[b] = classes[b - 1];
			b--;
		}
		ret[b] = rk;
		classes[b] = vk;
	}
}

int dom_classes_by_retained(struct dom_tree *t, uint32_t *classes, uint32_t *n,
			    uint32_t candidates, uint64_t **ret)
{
	uint32_t m = *n;
	*ret = NULL;
	if (candidates && candidates < m) {
		uint64_t *own = xcalloc((size_t)t->h->nclasses + 1, sizeof *own);
		if (dom_class_retained_lower(t, own) != HS_OK) {
			free(own);
			return HS_INTERRUPTED;
		}
		uint64_t *lb = xmallocarray((size_t)m + 1, sizeof *lb);
		for (uint32_t k = 0; k < m; k++)
			lb[k] = own[classes[k]];
		free(own);
		dom_sort_by_retained(classes, lb, m);
		free(lb);
		m = candidates;
	}
	uint64_t *r = xcalloc((size_t)m + 1, sizeof *r);
	if (dom_classes_retained(t, classes, m, -1, r) != HS_OK) {
		free(r);
		return HS_INTERRUPTED;
	}
	dom_sort_by_retained(classes, r, m);
	*ret = r;
	*n = m;
	return HS_OK;
}
