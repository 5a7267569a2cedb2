/*
 * heap_sort.c - the loader's objects in id order, and the id -> index
 * directory (heap.h): HotSpot ids are addresses, written region by region.
 * See loader.h.
 */
#include <stdlib.h>
#include <string.h>

#include "../base/big.h"
#include "../base/radix.h"
#include "loader.h"

struct run {
	size_t start, len;
};

static int by_first_id(const void *a, const void *b, void *ctx)
{
	const struct objpos *o = ctx;
	uint64_t x = o[((const struct run *)a)->start].id, y = o[((const struct run *)b)->start].id;
	return x < y ? -1 : x > y;
}

/*
 * sort_runs: HotSpot writes each heap region in address order, regions in
 * any order. If the ascending runs do not overlap, ordering the runs is
 * the whole sort. Returns false (nothing changed) when they overlap.
 */
static bool sort_runs(struct loader *L)
{
	size_t n = L->nobjs, nruns = 1;
	for (size_t i = 1; i < n; i++)
		nruns += L->objs[i - 1].id > L->objs[i].id;
	if (nruns == 1)
		return true;
	if (nruns > n / 64 + 16)
		return false;	/* not region runs: leave it to the radix sort */
	struct run *runs = xmallocarray(nruns, sizeof *runs);
	size_t r = 0;
	runs[0].start = 0;
	for (size_t i = 1; i < n; i++)
		if (L->objs[i - 1].id > L->objs[i].id) {
			runs[r].len = i - runs[r].start;
			runs[++r].start = i;
		}
	runs[r].len = n - runs[r].start;
	qsort_r(runs, nruns, sizeof *runs, by_first_id, L->objs);
	for (size_t k = 1; k < nruns; k++)
		if (L->objs[runs[k - 1].start + runs[k - 1].len - 1].id >= L->objs[runs[k].start].id) {
			free(runs);
			return false;
		}
	struct objpos *out = big_alloc(n, sizeof *out);
	size_t o = 0;
	for (size_t k = 0; k < nruns; k++) {
		memcpy(out + o, L->objs + runs[k].start, runs[k].len * sizeof *out);
		o += runs[k].len;
	}
	big_free(L->objs);
	L->objs = out;
	free(runs);
	return true;
}

/* Sort objs by id: region runs, else an LSD radix sort (11 bits a pass). */
static void sort_objs(struct loader *L)
{
	size_t n = L->nobjs;
	if (sort_runs(L))
		return;
	struct objpos *tmp = big_alloc(n, sizeof *tmp);
	size_t *count = xmallocarray(2048, sizeof *count);
	uint64_t all_or = 0, all_and = ~0ULL;
	for (size_t i = 0; i < n; i++) {
		all_or |= L->objs[i].id;
		all_and &= L->objs[i].id;
	}
	uint64_t varying = all_or ^ all_and;
	for (int shift = 0; shift < 64; shift += 11) {
		if (!((varying >> shift) & 2047))
			continue;
		memset(count, 0, 2048 * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[(L->objs[i].id >> shift) & 2047]++;
		size_t sum = 0;
		for (int d = 0; d < 2048; d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[(L->objs[i].id >> shift) & 2047]++] = L->objs[i];
		struct objpos *t = L->objs;
		L->objs = tmp;
		tmp = t;
	}
	big_free(tmp);
	free(count);
}

void heap_join_objs(struct loader *L)
{
	if (!L->nobjs2)
		return;
	size_t n1 = L->nobjs - L->nobjs2;
	L->objs = big_realloc(L->objs, L->nobjs, sizeof *L->objs);
	memcpy(L->objs + n1, L->objs2, L->nobjs2 * sizeof *L->objs);
	L->capobjs = L->nobjs;
	big_free(L->objs2);
	L->objs2 = NULL;
	L->nobjs2 = L->capobjs2 = 0;
}

/* Half of sort_packed's keys: made, then laid out on one thread. */
struct radix_half {
	const struct objpos *objs, *objs2;	/* record i: objs[i], or objs2[i - n1] */
	size_t n1;		/* records in objs */
	uint64_t lo;		/* the lowest id */
	size_t from, n;		/* objs[from .. from + n) */
	uint64_t *key;		/* keys: key[from .. from + n) are this half's */
	bool sorted;		/* the half's keys came in order */
	uint64_t *ids;		/* layout: ids[i] and key[i] = position, for i in the half */
	size_t dups;		/* layout: ids equal to the one before, within the half */
};

/* record: pass 1's record i, in either of its arrays. */
static inline const struct objpos *record(const struct radix_half *w, size_t i)
{
	return i < w->n1 ? &w->objs[i] : &w->objs2[i - w->n1];
}

/* key_work: make one half's keys. */
static void *key_work(void *arg)
{
	struct radix_half *w = arg;
	bool sorted = true;
	for (size_t i = w->from; i < w->from + w->n; i++) {
		w->key[i] = ((record(w, i)->id - w->lo) >> 3) << 32 | i;
		sorted = sorted && (i == w->from || w->key[i - 1] <= w->key[i]);
	}
	w->sorted = sorted;
	return NULL;
}

/* layout_work: ids and positions from one half of the sorted keys (in place). */
static void *layout_work(void *arg)
{
	struct radix_half *w = arg;
	for (size_t i = w->from; i < w->from + w->n; i++) {
		uint64_t id = w->lo + ((w->key[i] >> 32) << 3);
		w->dups += i > w->from && w->ids[i - 1] == id;
		w->ids[i] = id;
		w->key[i] = record(w, w->key[i] & 0xffffffffu)->pos;
	}
	return NULL;
}

/*
 * Natural merging (merge_keys): HotSpot writes a region's objects in
 * address order, so the keys come in long ascending runs: the whole heap
 * in one (JDK 17's dumper), or one per region or dumping thread. The class
 * objects come first, in no order: short runs. The short runs' keys are
 * pooled and radix sorted, then merged with the long runs: two sequential
 * passes over the keys instead of the radix sort's three to four.
 */
#define RUN_MIN 1024	/* shorter runs go to the pool */
#define RUNS_MAX 32	/* more long runs than this: the radix sort */

/* One source of the merge: keys a[0 .. n). */
struct source {
	const uint64_t *a;
	size_t n;
};

/* The sources' keys merged into out (a heap of the sources by head). */
struct merge_part {
	struct source src[RUNS_MAX + 1];
	int nsrc;
	uint64_t *out;
};

static void sift_down(struct source *h, int n, int i)
{
	for (;;) {
		int l = 2 * i + 1, m = i;
		if (l < n && h[l].a[0] < h[m].a[0])
			m = l;
		if (l + 1 < n && h[l + 1].a[0] < h[m].a[0])
			m = l + 1;
		if (m == i)
			return;
		struct source t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void *merge_work(void *arg)
{
	struct merge_part *w = arg;
	struct source h[RUNS_MAX + 1];
	int n = 0;
	for (int s = 0; s < w->nsrc; s++)
		if (w->src[s].n)
			h[n++] = w->src[s];
	for (int i = n / 2; i-- > 0;)
		sift_down(h, n, i);
	uint64_t *o = w->out;
	while (n > 1) {
		*o++ = *h[0].a++;
		if (!--h[0].n)
			h[0] = h[--n];
		sift_down(h, n, 0);
	}
	if (n)
		memcpy(o, h[0].a, h[0].n * sizeof *o);
	return NULL;
}

/* lower_bound: the first of a[0 .. n) not below v. */
static size_t lower_bound(const uint64_t *a, size_t n, uint64_t v)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * merge_keys: key[n] (distinct) sorted into tmp[n] by natural merging, on
 * two threads (each merging the keys on its side of one splitter) when
 * threads; false, nothing changed, when the keys are not mostly long runs
 * (more than RUNS_MAX of them, or over an eighth in short ones).
 */
static bool merge_keys(uint64_t *key, uint64_t *tmp, size_t n, bool threads)
{
	struct merge_part part[2];
	struct source *src = part[0].src;
	int nsrc = 0;
	size_t pooled = 0, start = 0;
	for (size_t i = 1; i <= n; i++) {
		if (i < n && key[i] > key[i - 1])
			continue;
		if (i - start < RUN_MIN) {
			pooled += i - start;
		} else {
			if (nsrc == RUNS_MAX)
				return false;
			src[nsrc++] = (struct source){key + start, i - start};
		}
		start = i;
	}
	if (pooled > n / 8)
		return false;
	uint64_t *pool = NULL;
	if (pooled) {	/* the short runs, in their order, then sorted */
		pool = big_alloc(2 * pooled, sizeof *pool);
		size_t m = 0;
		start = 0;
		for (size_t i = 1; i <= n; i++) {
			if (i < n && key[i] > key[i - 1])
				continue;
			if (i - start < RUN_MIN) {
				memcpy(pool + m, key + start, (i - start) * sizeof *pool);
				m += i - start;
			}
			start = i;
		}
		uint64_t *sorted = radix_sort_u64(pool, pool + pooled, pooled, 0, 64);
		src[nsrc++] = (struct source){sorted, pooled};
	}
	part[0].nsrc = part[1].nsrc = nsrc;
	part[0].out = tmp;
	if (!threads) {
		merge_work(&part[0]);
	} else {
		/* the splitter: the middle key of the longest source */
		int big = 0;
		for (int s = 1; s < nsrc; s++)
			if (src[s].n > src[big].n)
				big = s;
		uint64_t v = src[big].a[src[big].n / 2];
		size_t below = 0;
		for (int s = 0; s < nsrc; s++) {
			size_t cut = lower_bound(src[s].a, src[s].n, v);
			part[1].src[s] = (struct source){src[s].a + cut, src[s].n - cut};
			src[s].n = cut;
			below += cut;
		}
		part[1].out = tmp + below;
		heap_run2(merge_work, &part[0], &part[1], true);
	}
	big_free(pool);
	return true;
}

/*
 * sort_packed: the usual case, ids 8-byte aligned within 32 GiB of each
 * other: sort 8-byte keys ((id - min) / 8 << 32 | file order) instead of
 * 16-byte pairs, then lay out ids and positions from them. The sort is
 * stable, so of two records with one id the first in the file comes first.
 * Each half of the records is keyed on its own thread, the keys sorted
 * on both unless they came in order (merged when they come in long runs,
 * merge_keys, else radix sorted, radix_sort_u64_2), and each half of the
 * result laid out on its own thread. Returns false, with
 * nothing changed, when the ids do not fit.
 */
static bool sort_packed(struct loader *L)
{
	struct heap *h = L->h;
	size_t n = L->nobjs;
	if (!n || n >= UINT32_MAX)
		return false;
	/* pass 1 noted the lowest and highest ids, and whether every id is the
	 * same modulo 8 ((id - lo) & 7 == 0): their OR and AND agree there */
	uint64_t lo = L->ids.lo, hi = L->ids.hi;
	if (((L->ids.or_ ^ L->ids.and_) & 7) || lo > hi || ((hi - lo) >> 3) >= UINT32_MAX)
		return false;
	/* The radix sort writes its two key buffers all over; the records are
	 * read in order from here on: past the budget, the buffers get the
	 * memory and the records the file (a 30 GiB dump stalled on key
	 * buffers in files, docs/history/performance-journal.md, "A 30 GiB dump on
	 * the whole 24 GiB machine"). */
	L->objs = big_demote(L->objs, 2 * (uint64_t)n * sizeof(uint64_t));
	if (L->objs2)
		L->objs2 = big_demote(L->objs2, 2 * (uint64_t)n * sizeof(uint64_t));
	uint64_t *key = big_alloc(n, sizeof *key);
	size_t mid = n / 2, n1 = n - L->nobjs2;
	bool threads = n > 100000;
	struct radix_half w[2] = {{L->objs, L->objs2, n1, lo, 0, mid, key, false, NULL, 0},
				  {L->objs, L->objs2, n1, lo, mid, n - mid, key, false, NULL, 0}};
	heap_run2(key_work, &w[0], &w[1], threads);
	if (!(w[0].sorted && w[1].sorted && (!mid || mid == n || key[mid - 1] <= key[mid]))) {
		uint64_t *tmp = big_alloc(n, sizeof *tmp);
		uint64_t *sorted = merge_keys(key, tmp, n, threads) ? tmp
				   : threads ? radix_sort_u64_2(key, tmp, n, 32, 64)
					     : radix_sort_u64(key, tmp, n, 32, 64);
		if (sorted != key) {
			big_free(key);
			key = tmp;
		} else {
			big_free(tmp);
		}
	}
	/* ids from the keys; positions overwrite the keys in place */
	h->ids = big_alloc(n + 1, sizeof *h->ids);
	for (int k = 0; k < 2; k++) {
		w[k].key = key;
		w[k].ids = h->ids;
	}
	heap_run2(layout_work, &w[0], &w[1], threads);
	size_t m = n;
	if (w[0].dups || w[1].dups || (mid && mid < n && h->ids[mid - 1] == h->ids[mid])) {
		/* duplicates go: the first of each id stays (stable sort) */
		m = 0;
		for (size_t i = 0; i < n; i++) {
			if (m && h->ids[m - 1] == h->ids[i]) {
				h->duplicate_ids++;
				continue;
			}
			h->ids[m] = h->ids[i];
			key[m++] = key[i];
		}
	}
	big_free(L->objs);
	big_free(L->objs2);
	L->objs = L->objs2 = NULL;
	h->ids = big_realloc(h->ids, m + 1, sizeof *h->ids);
	h->pos = big_realloc(key, m + 1, sizeof *h->pos);
	h->n = (uint32_t)m;
	return true;
}

/*
 * bitmap_fits: whether chunk ch's directory can be a bitmap (heap.h,
 * heap_idmap): it holds objects, all its ids are multiples of 8 from the
 * lowest, and it has at most 16 slots of 8 bytes per object, so the bitmap
 * takes at most 4 bytes per object (16 bytes per 64 slots). HotSpot's
 * objects are 8-byte aligned and packed within their regions.
 */
static bool bitmap_fits(const struct heap *h, const struct heap_chunk *ch)
{
	uint32_t cnt = ch->end - ch->start;
	uint64_t slots = (uint64_t)1 << (h->top_shift - 3);
	if (!cnt || slots > 16 * (uint64_t)cnt)
		return false;
	for (uint32_t k = ch->start; k < ch->end; k++)
		if ((h->ids[k] - h->id_min) & 7)
			return false;
	return true;
}

void heap_order_objects(struct loader *L)
{
	struct heap *h = L->h;
	size_t n;
	if (sort_packed(L)) {
		n = h->n;
	} else {
		heap_join_objs(L);
		sort_objs(L);
		n = 0;
		for (size_t i = 0; i < L->nobjs; i++) {
			if (n && L->objs[n - 1].id == L->objs[i].id) {
				h->duplicate_ids++;
				continue;
			}
			L->objs[n++] = L->objs[i];
		}
		h->n = (uint32_t)n;
		h->ids = big_alloc(n + 1, sizeof *h->ids);
		for (size_t i = 0; i < n; i++)
			h->ids[i] = L->objs[i].id;
		/* The positions are packed into the front of objs, which then shrinks. */
		uint64_t *pos = (uint64_t *)L->objs;
		for (size_t i = 0; i < n; i++)
			pos[i] = L->objs[i].pos;
		h->pos = big_realloc(L->objs, n + 1, sizeof *h->pos);
		L->objs = NULL;
	}
	heap_build_directory(h);
}

void heap_build_directory(struct heap *h)
{
	size_t n = h->n;
	/*
	 * Directory. HotSpot ids are addresses: dense inside heap regions,
	 * with wide gaps between them. The id range is cut into at most n/8
	 * chunks; a chunk holding many objects gets a sub-directory of about
	 * one bucket per four objects, so a lookup scans a handful of ids
	 * whatever the gaps. Memory: about 2 bytes per object.
	 */
	h->id_min = n ? h->ids[0] : 0;
	h->id_max = n ? h->ids[n - 1] : 0;
	uint64_t span = h->id_max - h->id_min;
	uint64_t max_chunks = n / 8 + 16;
	h->top_shift = 12;
	while ((span >> h->top_shift) + 1 > max_chunks)
		h->top_shift++;
	uint64_t nchunks = (span >> h->top_shift) + 1;
	h->chunks = big_alloc(nchunks + 1, sizeof *h->chunks);
	size_t i = 0, nsub = 0, nmap = 0;
	for (uint64_t c = 0; c < nchunks; c++) {
		struct heap_chunk *ch = &h->chunks[c];
		ch->start = (uint32_t)i;
		while (i < n && ((h->ids[i] - h->id_min) >> h->top_shift) == c)
			i++;
		ch->end = (uint32_t)i;
		uint32_t cnt = ch->end - ch->start;
		if (bitmap_fits(h, ch)) {
			ch->bits = HEAP_CHUNK_BITMAP;
			ch->sub = (uint32_t)nmap;
			nmap += (size_t)1 << (h->top_shift - 9);	/* 64 slots of 8 bytes an entry */
			continue;
		}
		int bits = 0;
		while ((1u << bits) * 4 < cnt && bits < h->top_shift - 3)
			bits++;
		ch->bits = (uint8_t)bits;
		ch->shift = (uint8_t)(h->top_shift - bits);
		if (bits) {
			ch->sub = (uint32_t)nsub;
			nsub += (1u << bits) + 1;
		}
	}
	h->sub = big_alloc(nsub + 1, sizeof *h->sub);
	h->idmap = big_alloc(nmap + 1, sizeof *h->idmap);
	for (uint64_t c = 0; c < nchunks; c++) {
		struct heap_chunk *ch = &h->chunks[c];
		if (ch->bits == HEAP_CHUNK_BITMAP) {
			struct heap_idmap *m = h->idmap + ch->sub;
			uint64_t base = c << h->top_shift;
			for (uint32_t k = ch->start; k < ch->end; k++) {
				uint64_t slot = (h->ids[k] - h->id_min - base) >> 3;
				m[slot >> 6].bits |= 1ULL << (slot & 63);
			}
			uint32_t before = ch->start;
			for (size_t e = 0; e < (size_t)1 << (h->top_shift - 9); e++) {
				m[e].before = before;
				before += heap_popcount(m[e].bits);
			}
			continue;
		}
		if (!ch->bits)
			continue;
		uint32_t nb = 1u << ch->bits, k = ch->start;
		uint64_t base = c << h->top_shift;
		for (uint32_t b = 0; b <= nb; b++) {
			while (k < ch->end && ((h->ids[k] - h->id_min - base) >> ch->shift) < b)
				k++;
			h->sub[ch->sub + b] = k;
		}
	}
}
