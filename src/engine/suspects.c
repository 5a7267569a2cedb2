/*
 * suspects.c - leak suspects: the descent through the dominator tree, the
 * piles at accumulation points, the field chains that hold them, the
 * sentences, and the growth since a baseline. See suspects.h and
 * docs/leak-suspects.md.
 */
#include "suspects.h"

#include "../base/big.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/fmt.h"

/* The descent's state: the tree, its children lists, and the suspects so far. */
struct finder {
	struct dom_tree *t;
	const struct heap *h;
	uint32_t root;		/* the super-root, h->n */
	uint32_t *kstart;	/* [root+2] children of v: kids[kstart[v] .. kstart[v+1]) */
	uint32_t *kids;
	uint64_t limit;		/* threshold in bytes */
	double child;		/* child_pct / 100 */
	/* per class index, while grouping children by class */
	uint64_t *cbytes, *ccount;
	uint32_t *cfirst;	/* the largest child of that class */
	uint32_t *touched;
	uint32_t ntouched;
	struct suspect *s;
	uint32_t ns, cap;
};

/* One class of an object's children, classes of equal names merged. */
struct pile {
	const char *name;
	uint64_t bytes, count;
	uint32_t first;		/* its largest child */
};

/*
 * system_heap: an object of an Android dump's zygote or image heap: there
 * before the app started (preloaded classes, the boot image), so never a
 * suspect, as in Android Studio and Shark; it stays in the reachable heap.
 */
static bool system_heap(const struct heap *h, uint32_t v)
{
	const char *hp = h->heap_of ? heap_android_heap(h, v) : NULL;
	return hp && (!strcmp(hp, "zygote") || !strcmp(hp, "image"));
}

static bool is_class_obj(const struct finder *f, uint32_t v)
{
	return heap_kind(f->h, v) == HEAP_CLASS;
}

/* biggest: v's dominator child retaining the most, or HEAP_NONE. */
static uint32_t biggest(const struct finder *f, uint32_t v)
{
	uint32_t best = HEAP_NONE;
	for (uint32_t k = f->kstart[v]; k < f->kstart[v + 1]; k++) {
		uint32_t c = f->kids[k];
		if (best == HEAP_NONE || dom_retained(f->t, c) > dom_retained(f->t, best))
			best = c;
	}
	return best;
}

static bool same_class(const struct finder *f, uint32_t a, uint32_t b)
{
	if (is_class_obj(f, a) || is_class_obj(f, b))
		return false;
	const char *x = heap_class_name(f->h, a), *y = heap_class_name(f->h, b);
	return x == y || !strcmp(x, y);
}

/*
 * follow: from v down the chain of dominant children (each retaining
 * child_pct of its parent) to the accumulation point. A run of three or
 * more objects of one class, each dominating the next (a linked list),
 * stops the descent at the object holding the run: *run is its first
 * object and *runlen its length. Otherwise *run is HEAP_NONE.
 */
static uint32_t follow(const struct finder *f, uint32_t v, uint32_t *run, uint64_t *runlen)
{
	*run = HEAP_NONE;
	*runlen = 0;
	for (;;) {
		uint32_t k = biggest(f, v);
		if (k == HEAP_NONE || !dom_retained(f->t, k) || (double)dom_retained(f->t, k) < f->child * (double)dom_retained(f->t, v))
			return v;
		uint32_t k2 = biggest(f, k);
		if (k2 != HEAP_NONE && same_class(f, k, k2)) {
			uint32_t k3 = biggest(f, k2);
			if (k3 != HEAP_NONE && same_class(f, k2, k3)) {
				uint64_t len = 1;
				for (uint32_t x = k, y; (y = biggest(f, x)) != HEAP_NONE &&
				     same_class(f, x, y); x = y)
					len++;
				*run = k;
				*runlen = len;
				return v;
			}
		}
		v = k;
	}
}

static int cmp_pile(const void *a, const void *b)
{
	const struct pile *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->first > y->first) - (x->first < y->first);
}

/*
 * piles: v's children grouped by class name, skipping those at or above
 * skip_from bytes (suspects of their own) and, when no_class_objs, class
 * objects; class objects otherwise each stand alone. Returns the groups
 * (caller frees), largest first, and their count in *np.
 */
static struct pile *piles(struct finder *f, uint32_t v, uint64_t skip_from, bool no_class_objs,
			  uint32_t *np)
{
	const struct heap *h = f->h;
	uint32_t nk = f->kstart[v + 1] - f->kstart[v];
	struct pile *extra = xmallocarray(nk + 1, sizeof *extra);
	uint32_t nextra = 0;
	f->ntouched = 0;
	for (uint32_t k = f->kstart[v]; k < f->kstart[v + 1]; k++) {
		uint32_t c = f->kids[k];
		if (dom_retained(f->t, c) >= skip_from)
			continue;
		if (is_class_obj(f, c)) {
			if (!no_class_objs)
				extra[nextra++] = (struct pile){heap_class_name(h, c), dom_retained(f->t, c), 1, c};
			continue;
		}
		uint32_t ci = h->cls[c];
		if (!f->ccount[ci]++) {
			f->touched[f->ntouched++] = ci;
			f->cfirst[ci] = c;
		} else if (dom_retained(f->t, c) > dom_retained(f->t, f->cfirst[ci])) {
			f->cfirst[ci] = c;
		}
		f->cbytes[ci] += dom_retained(f->t, c);
	}
	struct pile *p = xmallocarray((size_t)f->ntouched + nextra + 1, sizeof *p);
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->ntouched; i++) {
		uint32_t ci = f->touched[i];
		p[n++] = (struct pile){h->classes[ci].name, f->cbytes[ci], f->ccount[ci], f->cfirst[ci]};
		f->cbytes[ci] = f->ccount[ci] = 0;
	}
	/* classes of one name (one class loaded by several loaders) are one pile */
	qsort(p, n, sizeof *p, cmp_pile);
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (m && !strcmp(p[m - 1].name, p[i].name)) {
			p[m - 1].bytes += p[i].bytes;
			p[m - 1].count += p[i].count;
			if (dom_retained(f->t, p[i].first) > dom_retained(f->t, p[m - 1].first))
				p[m - 1].first = p[i].first;
		} else {
			p[m++] = p[i];
		}
	}
	for (uint32_t i = 0; i < nextra; i++)
		p[m++] = extra[i];
	big_free(extra);
	/* largest first, ties by name */
	for (uint32_t i = 1; i < m; i++) {
		struct pile x = p[i];
		uint32_t j = i;
		while (j && (p[j - 1].bytes < x.bytes ||
			     (p[j - 1].bytes == x.bytes && strcmp(p[j - 1].name, x.name) > 0))) {
			p[j] = p[j - 1];
			j--;
		}
		p[j] = x;
	}
	*np = m;
	return p;
}

static struct suspect *add(struct finder *f)
{
	if (f->ns == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 16;
		f->s = xreallocarray(f->s, f->cap, sizeof *f->s);
	}
	struct suspect *s = &f->s[f->ns++];
	memset(s, 0, sizeof *s);
	s->holder = s->loader = s->largest = HEAP_NONE;
	return s;
}

/* is_jdk_loader: the JDK's own class loaders (application, platform, extension). */
static bool is_jdk_loader(const struct heap *h, uint32_t l)
{
	const char *c = heap_class_name(h, l);
	return !strncmp(c, "jdk.internal.loader.", 20) || !strncmp(c, "sun.misc.Launcher$", 18) ||
	       !strcmp(c, "dalvik.system.PathClassLoader") || !strcmp(c, "java.lang.BootClassLoader");
}

/*
 * holds_of: what the objects of class name among v's children each mostly
 * keep: the class of their dominant child (child_pct of them) when at
 * least half of the first 64 agree, else NULL.
 */
static const char *holds_of(struct finder *f, uint32_t v, const char *name)
{
	const struct heap *h = f->h;
	const char *cand[64];
	uint32_t votes[64], nc = 0, seen = 0;
	for (uint32_t k = f->kstart[v]; k < f->kstart[v + 1] && seen < 64; k++) {
		uint32_t c = f->kids[k];
		if (is_class_obj(f, c) || heap_kind(h, c) != HEAP_INSTANCE ||
		    strcmp(heap_class_name(h, c), name))
			continue;
		uint32_t d = biggest(f, c);
		if (d != HEAP_NONE && same_class(f, c, d))
			continue;	/* a hash bucket's chain: its next entry is bigger */
		seen++;
		if (d == HEAP_NONE || !dom_retained(f->t, d) || (double)dom_retained(f->t, d) < f->child * (double)dom_retained(f->t, c) ||
		    is_class_obj(f, d))
			continue;
		const char *dn = heap_class_name(h, d);
		uint32_t i = 0;
		while (i < nc && strcmp(cand[i], dn))
			i++;
		if (i == nc) {
			cand[nc] = dn;
			votes[nc++] = 0;
		}
		votes[i]++;
	}
	for (uint32_t i = 0; i < nc; i++)
		if (2 * votes[i] >= seen)
			return cand[i];
	return NULL;
}

/*
 * fill_pile: what piles up at s->acc (the pile given, or the run), what
 * each piled object holds, and the class loaders of their classes.
 */
static void fill_pile(struct finder *f, struct suspect *s, const struct pile *p, uint32_t run,
		      uint64_t runlen)
{
	const struct heap *h = f->h;
	uint32_t first;
	if (run != HEAP_NONE) {
		s->piled = heap_class_name(h, run);
		s->chain = true;
		s->npiled = runlen;
		s->piled_bytes = dom_retained(f->t, run);
		first = run;
	} else if (p) {
		s->piled = p->name;
		s->npiled = p->count;
		s->piled_bytes = p->bytes;
		first = p->first;
	} else {
		return;
	}
	if (!s->chain)
		s->holds = holds_of(f, s->acc, s->piled);
	uint32_t l = h->classes[h->cls[first]].loader;
	if (is_class_obj(f, first)) {
		uint32_t c = heap_class_of_object(h, first);
		l = c == HEAP_NONE ? HEAP_NONE : h->classes[c].loader;
	}
	if (l != HEAP_NONE && l < h->n && !is_jdk_loader(h, l)) {
		s->loader = l;
		s->nloaders = 1;
	}
}

/*
 * A pile of a class whose instances come from several loaders (a class
 * loader leak): count the loaders among acc's children of that name.
 */
static void count_loaders(struct finder *f, struct suspect *s)
{
	if (!s->piled || s->chain || s->loader == HEAP_NONE)
		return;
	const struct heap *h = f->h;
	uint32_t seen[64], nseen = 0;
	for (uint32_t k = f->kstart[s->acc]; k < f->kstart[s->acc + 1] && nseen < 64; k++) {
		uint32_t c = f->kids[k];
		if (is_class_obj(f, c) || strcmp(heap_class_name(h, c), s->piled))
			continue;
		uint32_t l = h->classes[h->cls[c]].loader;
		bool dup = false;
		for (uint32_t i = 0; i < nseen && !dup; i++)
			dup = seen[i] == l;
		if (!dup)
			seen[nseen++] = l;
	}
	if (nseen > 1)
		s->nloaders = nseen;
}

/*
 * object_suspect: the chain from v ends at an accumulation point: a
 * suspect when what it keeps (apart from suspects of its own below)
 * reaches the threshold and, below a branching point, something piles up.
 */
static void object_suspect(struct finder *f, uint32_t v, uint32_t acc, uint32_t run,
			   uint64_t runlen, uint64_t own, bool branched)
{
	struct pile *p = NULL;
	uint32_t np = 0;
	if (run == HEAP_NONE)
		p = piles(f, acc, f->limit, false, &np);
	/* One object keeps most of what acc keeps (a class's static array):
	 * the memory accumulates below it, not at acc. */
	while (!branched && run == HEAP_NONE && np && p[0].count == 1 && p[0].bytes >= f->limit &&
	       !is_class_obj(f, p[0].first) && 2 * p[0].bytes >= dom_retained(f->t, acc)) {
		acc = follow(f, p[0].first, &run, &runlen);
		big_free(p);
		p = NULL;
		np = 0;
		if (run == HEAP_NONE)
			p = piles(f, acc, f->limit, false, &np);
	}
	if (system_heap(f->h, acc)) {
		big_free(p);
		return;
	}
	bool piled = run != HEAP_NONE || (np && p[0].count > 1);
	if (own < f->limit || (branched && (!piled || (run == HEAP_NONE && p[0].bytes < f->limit)))) {
		big_free(p);
		return;
	}
	struct suspect *s = add(f);
	s->nmembers = 1;
	s->members = xmalloc(sizeof *s->members);
	s->accs = xmalloc(sizeof *s->accs);
	s->members[0] = v;
	s->accs[0] = s->acc = acc;
	s->retained = own;
	s->acc_retained = dom_retained(f->t, acc);
	/* one object is no pile: the sentence names acc's largest child instead */
	fill_pile(f, s, np && p[0].count > 1 ? &p[0] : NULL, run, runlen);
	count_loaders(f, s);
	s->largest = biggest(f, acc);
	if (s->largest != HEAP_NONE)
		s->largest_bytes = dom_retained(f->t, s->largest);
	big_free(p);
}

/* One object the GC roots dominate directly, as a candidate member of a group. */
struct member {
	uint32_t obj, acc, depth;	/* depth: dominator steps from obj down to acc */
	uint32_t run;
	uint64_t runlen;
	const char *piled;	/* what piles up at acc (or the run's class), or NULL */
	uint64_t npiled, piled_bytes;
	uint32_t first;		/* the pile's largest object */
};

static int cmp_member(const void *a, const void *b, void *ctx)
{
	const struct member *x = a, *y = b;
	const struct finder *f = ctx;
	int c = (x->piled != NULL) - (y->piled != NULL);
	if (!c && x->piled)
		c = strcmp(x->piled, y->piled);
	if (!c)
		c = strcmp(heap_class_name(f->h, x->acc), heap_class_name(f->h, y->acc));
	if (!c)
		c = (x->depth > y->depth) - (x->depth < y->depth);
	if (!c)
		c = (dom_retained(f->t, x->obj) < dom_retained(f->t, y->obj)) - (dom_retained(f->t, x->obj) > dom_retained(f->t, y->obj));
	return c;
}

static bool alike(const struct finder *f, const struct member *x, const struct member *y)
{
	return x->piled && y->piled && !strcmp(x->piled, y->piled) && x->depth == y->depth &&
	       (x->run == HEAP_NONE) == (y->run == HEAP_NONE) &&
	       !strcmp(heap_class_name(f->h, x->acc), heap_class_name(f->h, y->acc));
}

/*
 * root_groups: the children of the super-root below the threshold, by
 * class (class objects apart), each followed to its accumulation point;
 * those alike there (the same pile, holder class and depth) whose
 * retained sizes reach the threshold together are one group suspect.
 */
static void root_groups(struct finder *f)
{
	uint32_t np;
	struct pile *p = piles(f, f->root, f->limit, true, &np);
	for (uint32_t i = 0; i < np && p[i].bytes >= f->limit; i++) {
		if (p[i].count < 2)
			continue;
		struct member *m = xmallocarray(p[i].count, sizeof *m);
		uint32_t nm = 0;
		for (uint32_t k = f->kstart[f->root]; k < f->kstart[f->root + 1] && nm < p[i].count; k++) {
			uint32_t c = f->kids[k];
			if (dom_retained(f->t, c) >= f->limit || is_class_obj(f, c) ||
			    strcmp(heap_class_name(f->h, c), p[i].name) || system_heap(f->h, c))
				continue;
			struct member *x = &m[nm++];
			memset(x, 0, sizeof *x);
			x->obj = c;
			x->acc = follow(f, c, &x->run, &x->runlen);
			for (uint32_t a = x->acc; a != c && a < f->root; a = f->t->idom[a])
				x->depth++;
			if (x->run != HEAP_NONE) {
				x->piled = heap_class_name(f->h, x->run);
				x->npiled = x->runlen;
				x->piled_bytes = dom_retained(f->t, x->run);
			} else {
				uint32_t nq;
				struct pile *q = piles(f, x->acc, UINT64_MAX, false, &nq);
				if (nq && q[0].count > 1) {
					x->piled = q[0].name;
					x->npiled = q[0].count;
					x->piled_bytes = q[0].bytes;
					x->first = q[0].first;
				}
				big_free(q);
			}
		}
		qsort_r(m, nm, sizeof *m, cmp_member, f);
		for (uint32_t a = 0, b; a < nm; a = b) {
			uint64_t sum = dom_retained(f->t, m[a].obj);
			for (b = a + 1; b < nm && alike(f, &m[a], &m[b]); b++)
				sum += dom_retained(f->t, m[b].obj);
			if (b - a < 2 || sum < f->limit)
				continue;
			struct suspect *s = add(f);
			s->group = true;
			s->nmembers = b - a;
			s->members = xmallocarray(s->nmembers, sizeof *s->members);
			s->accs = xmallocarray(s->nmembers, sizeof *s->accs);
			s->retained = sum;
			for (uint32_t j = a; j < b; j++) {
				s->members[j - a] = m[j].obj;
				s->accs[j - a] = m[j].acc;
			}
			s->acc = m[a].acc;
			s->acc_retained = dom_retained(f->t, s->acc);
			if (m[a].run != HEAP_NONE) {
				fill_pile(f, s, NULL, m[a].run, m[a].runlen);
			} else if (m[a].piled) {
				struct pile first = {m[a].piled, m[a].piled_bytes, m[a].npiled, m[a].first};
				fill_pile(f, s, &first, HEAP_NONE, 0);
			}
			s->npiled = s->piled_bytes = 0;
			for (uint32_t j = a; j < b; j++) {
				s->npiled += m[j].npiled;
				s->piled_bytes += m[j].piled_bytes;
			}
		}
		big_free(m);
	}
	big_free(p);
}

/* explore: the descent from the super-root (suspects.h). */
static int explore(struct finder *f)
{
	uint32_t cap = 64, top = 0;
	uint32_t *stack = xmallocarray(cap, sizeof *stack);
	stack[top++] = f->root;
	while (top) {
		if (hs_interrupted) {
			big_free(stack);
			return HS_INTERRUPTED;
		}
		uint32_t v = stack[--top], run;
		uint64_t runlen;
		uint32_t acc = v == f->root ? v : follow(f, v, &run, &runlen);
		if (v == f->root)
			run = HEAP_NONE;
		uint64_t own = dom_retained(f->t, v);
		bool branched = false;
		if (run == HEAP_NONE)
			for (uint32_t k = f->kstart[acc]; k < f->kstart[acc + 1]; k++) {
				uint32_t c = f->kids[k];
				if (dom_retained(f->t, c) < f->limit)
					continue;
				if (top == cap) {
					cap *= 2;
					stack = xreallocarray(stack, cap, sizeof *stack);
				}
				stack[top++] = c;
				own -= dom_retained(f->t, c);
				branched = true;
			}
		if (v == f->root)
			root_groups(f);
		else
			object_suspect(f, v, acc, run, runlen, own, branched);
	}
	big_free(stack);
	return HS_OK;
}

/* ---- paths and field chains ---- */

/*
 * shortest_paths: one breadth-first search from the GC roots over g,
 * stopping when every wanted object is reached; the path to each into
 * paths[i] (len 0 when unreachable).
 */
static int shortest_paths(struct hgraph *g, const uint32_t *want, uint32_t nwant,
			  struct path *paths)
{
	uint32_t n = g->h->n;
	uint32_t *parent = big_alloc((size_t)n + 1, sizeof *parent);
	uint8_t *wanted = big_alloc((size_t)n + 1, 1);
	uint32_t left = 0;
	for (uint32_t i = 0; i < nwant; i++)
		if (!wanted[want[i]]) {
			wanted[want[i]] = 1;
			left++;
		}
	int st = path_parents(g, wanted, left, parent);
	for (uint32_t i = 0; i < nwant && st == HS_OK; i++) {
		uint32_t len = 0;
		if (parent[want[i]] != UINT32_MAX)
			for (uint32_t x = want[i]; x != g->root; x = parent[x])
				len++;
		paths[i].len = len;
		paths[i].nodes = xmallocarray(len + 1, sizeof *paths[i].nodes);
		uint32_t k = len;
		if (len)
			for (uint32_t x = want[i]; x != g->root; x = parent[x])
				paths[i].nodes[--k] = x;
	}
	big_free(parent);
	big_free(wanted);
	return st;
}

static const char *simple(const char *name)
{
	const char *d = strrchr(name, '.');
	return d ? d + 1 : name;
}

/* holder_at: the path's index of what holds the pile (the owner of a backing array). */
static uint32_t holder_at(const struct heap *h, const struct path *p)
{
	uint32_t k = p->len - 1;
	if (p->len >= 2 && heap_kind(h, p->nodes[k]) != HEAP_INSTANCE &&
	    heap_kind(h, p->nodes[k]) != HEAP_CLASS && heap_kind(h, p->nodes[k - 1]) == HEAP_INSTANCE)
		return k - 1;
	return k;
}

/* make_chain: the field chain of path p up to its holder. */
static void make_chain(const struct heap *h, const struct path *p, struct sus_chain *c)
{
	memset(c, 0, sizeof *c);
	if (!p->len)
		return;
	uint32_t end = holder_at(h, p), from = 0;
	/* A class held by another class's static field (LauncherHelper.appClass
	 * holds the main class): the chain starts at the held class's statics. */
	for (uint32_t j = 1; j < end; j++) {
		struct heap_ref in, out;
		if (heap_kind(h, p->nodes[j]) == HEAP_CLASS &&
		    path_step(h, p->nodes[j - 1], p->nodes[j], &in) && in.kind == HEAP_REF_STATIC &&
		    path_step(h, p->nodes[j], p->nodes[j + 1], &out) && out.kind == HEAP_REF_STATIC)
			from = j;
	}
	uint32_t r = p->nodes[from];
	c->steps = xmallocarray(end + 1, sizeof *c->steps);
	if (heap_kind(h, r) == HEAP_CLASS && heap_class_of_object(h, r) != HEAP_NONE) {
		c->start = SUS_STATIC;
		c->class_name = h->classes[heap_class_of_object(h, r)].name;
	} else if (h->thread_class != HEAP_NONE && heap_is_subclass(h, h->cls[r], h->thread_class)) {
		c->start = SUS_THREAD;
		c->class_name = heap_class_name(h, r);
		for (uint32_t t = 0; t < h->nthreads && !c->thread; t++)
			if (h->threads[t].obj == r)
				c->thread = heap_thread_name(h, t);
	} else {
		c->start = SUS_OBJECT;
		c->class_name = heap_class_name(h, r);
	}
	for (uint32_t k = from + 1; k <= end; k++) {
		struct heap_ref ref;
		if (!path_step(h, p->nodes[k - 1], p->nodes[k], &ref))
			ref = (struct heap_ref){.kind = HEAP_REF_FIELD, .name = "?"};
		c->steps[c->nsteps++] = (struct sus_step){ref.kind, ref.name, ref.index};
	}
}

/* chain_text: c as Java people write it; indexes that differ among the
 * chains (others) as [*]. Returns a new string. */
static char *chain_text(const struct sus_chain *c, const struct sus_chain *others, uint32_t nothers)
{
	size_t cap = 256, len = 0;
	char *buf = xmalloc(cap);
	buf[0] = 0;
#define PUT(...)                                                                          \
	do {                                                                              \
		int w_ = snprintf(buf + len, cap - len, __VA_ARGS__);                     \
		while (w_ >= 0 && (size_t)w_ >= cap - len) {                              \
			cap *= 2;                                                         \
			buf = xrealloc(buf, cap);                                         \
			w_ = snprintf(buf + len, cap - len, __VA_ARGS__);                 \
		}                                                                         \
		len += (size_t)(w_ > 0 ? w_ : 0);                                         \
	} while (0)
	if (!c->class_name) {
		PUT("(unreachable)");
		return buf;
	}
	uint32_t k = 0;
	if (c->start == SUS_STATIC && c->nsteps && c->steps[0].kind == HEAP_REF_STATIC) {
		PUT("static %s.%s", simple(c->class_name), c->steps[0].name);
		k = 1;
	} else {
		PUT("%s", simple(c->class_name));
	}
	for (; k < c->nsteps; k++) {
		const struct sus_step *s = &c->steps[k];
		if (s->kind == HEAP_REF_ELEMENT) {
			bool same = true;
			for (uint32_t o = 0; o < nothers && same; o++)
				same = others[o].nsteps != c->nsteps ||
				       others[o].steps[k].kind != HEAP_REF_ELEMENT ||
				       others[o].steps[k].index == s->index;
			if (same)
				PUT("[%u]", s->index);
			else
				PUT("[*]");
		} else if (s->kind == HEAP_REF_SUPER && s->name && !strcmp(s->name, "<class>")) {
			PUT(".getClass()");
		} else if (s->kind == HEAP_REF_LOADER) {
			PUT(".getClassLoader()");
		} else {
			PUT(".%s", s->name ? s->name : "?");
		}
	}
#undef PUT
	return buf;
}

static void free_chain(struct sus_chain *c)
{
	big_free(c->thread);
	big_free(c->steps);
}

/* root_kind: the first GC root kind of object r, or NULL. */
static const char *root_kind(const struct heap *h, uint32_t r)
{
	for (uint32_t k = 0; k < h->nroots; k++)
		if (h->roots[k].obj == r)
			return heap_root_kind_name(h->roots[k].kind);
	return NULL;
}

/* label: heap_object_label, short (no package) when asked. */
static char *label(const struct heap *h, uint32_t x, bool short_names)
{
	char *l = heap_object_label(h, x);
	if (!short_names)
		return l;
	/* the class name ends at the first space (a String's text, a thread's name follow) */
	char *sp = strchr(l, ' ');
	char *cls = l;
	if (!strncmp(l, "class ", 6)) {
		cls = l + 6;
		sp = strchr(cls, ' ');
	}
	size_t clen = sp ? (size_t)(sp - cls) : strlen(cls);
	char *dot = NULL;
	for (char *q = cls; q < cls + clen; q++)
		if (*q == '.')
			dot = q;
	if (dot)
		memmove(cls, dot + 1, strlen(dot + 1) + 1);
	return l;
}

/* ---- sentences ---- */

/*
 * map_entries: when s's pile is a map's entries (HashMap$Node,
 * LinkedHashMap$Entry, ...) and its holder a map with a size, that size.
 */
static uint64_t map_entries(const struct heap *h, const struct suspect *s)
{
	if (!s->piled || s->group)
		return 0;
	const char *d = strrchr(s->piled, '$');
	if (!d || (strcmp(d, "$Node") && strcmp(d, "$Entry") && strcmp(d, "$TreeNode") &&
		   strcmp(d, "$HashEntry")))
		return 0;
	struct heap_value v;
	if ((heap_field(h, s->holder, "size", &v) || heap_field(h, s->holder, "count", &v) ||
	     heap_field(h, s->holder, "baseCount", &v)) && v.type == HPROF_INT && v.v.i > 0)
		return (uint64_t)v.v.i;
	return 0;
}

static int cmp_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *describe(const struct heap *h, const struct suspect *s, uint64_t reachable)
{
	char b1[32], n1[32], n2[32], line[2048];
	double pct = reachable ? 100.0 * (double)s->retained / (double)reachable : 0;
	char *holder = label(h, s->holder, true);
	char loader[256] = "";
	if (s->loader != HEAP_NONE) {
		char *l = label(h, s->loader, true);
		if (s->loader_on_way)
			snprintf(loader, sizeof loader, ", through classes of %s (`%s`%s)",
				 s->nloaders > 1 ? "several class loaders" : "the class loader", l,
				 s->nloaders > 1 ? ", ..." : "");
		else if (s->nloaders > 1)
			snprintf(loader, sizeof loader, ", loaded by %u class loaders (`%s`, ...)",
				 s->nloaders, l);
		else
			snprintf(loader, sizeof loader, ", loaded by `%s`", l);
		big_free(l);
	}
	char holds[256] = "";
	if (s->holds)
		snprintf(holds, sizeof holds, ", each holding a `%s`", simple(s->holds));
	/* where: a chain of fields, or the holder itself being a GC root */
	char where[1024];
	if (s->path.len && s->nchains && s->chains[0].nsteps == 0 && s->chains[0].start != SUS_STATIC) {
		const char *rk = root_kind(h, s->path.nodes[0]);
		snprintf(where, sizeof where, ", a GC root (%s)", rk ? rk : "?");
	} else {
		snprintf(where, sizeof where, " in `%s`", s->where ? s->where : "?");
	}
	/* a pile's sentence says what the piled objects retain; others what the suspect does */
	char size[96];
	uint64_t said = s->piled && !s->group ? s->piled_bytes : s->retained;
	if (s->piled && !s->group)
		pct = reachable ? 100.0 * (double)said / (double)reachable : 0;
	snprintf(size, sizeof size, "%s (%.1f%% of the heap)", fmt_bytes(b1, sizeof b1, said), pct);
	if (s->group) {
		/* the members' names (threads, loaders), in order, the first three */
		char names[256] = "", *lab[64];
		uint32_t nlab = 0;
		for (uint32_t i = 0; i < s->nmembers && nlab < 64; i++) {
			char *l = heap_object_label(h, s->members[i]);
			char *q = strchr(l, '"');
			if (q)
				lab[nlab++] = xstrdup(q);
			big_free(l);
		}
		qsort(lab, nlab, sizeof *lab, cmp_text);
		size_t nl = 0;
		for (uint32_t i = 0; i < nlab; i++) {
			if (i < 3 && nl < sizeof names)
				nl += (size_t)snprintf(names + nl, sizeof names - nl, "%s%s",
						       i ? ", " : " (", lab[i]);
			big_free(lab[i]);
		}
		if (nl && nl < sizeof names)
			snprintf(names + nl, sizeof names - nl, "%s)", s->nmembers > 3 ? ", ..." : "");
		/* the chain from the member on, without its class */
		const char *through = s->where ? s->where : "";
		const char *dot = strchr(through, '.');
		if (s->nchains && s->chains[0].start != SUS_STATIC && dot)
			through = dot + 1;
		if (s->piled)
			snprintf(line, sizeof line,
				 "%s instances of `%s`%s hold %s through `%s`: %s %s`%s`%s in all%s",
				 fmt_count(n1, sizeof n1, s->nmembers), heap_class_name(h, s->members[0]),
				 names, size, through, fmt_count(n2, sizeof n2, s->npiled),
				 s->chain ? "chained " : "", simple(s->piled), holds, loader);
		else
			snprintf(line, sizeof line, "%s instances of `%s`%s hold %s, each a GC root",
				 fmt_count(n1, sizeof n1, s->nmembers), heap_class_name(h, s->members[0]),
				 names, size);
	} else if (s->piled && s->chain) {
		snprintf(line, sizeof line, "A chain of %s `%s`, %s, is held by `%s`%s%s",
			 fmt_count(n1, sizeof n1, s->npiled), simple(s->piled), size, holder, where,
			 loader);
	} else if (s->piled) {
		uint64_t entries = map_entries(h, s);
		if (entries)
			snprintf(line, sizeof line, "%s entr%s (`%s`)%s, %s, %s held by `%s`%s%s",
				 fmt_count(n1, sizeof n1, entries), entries == 1 ? "y" : "ies",
				 simple(s->piled), holds, size, entries == 1 ? "is" : "are", holder,
				 where, loader);
		else
			snprintf(line, sizeof line, "%s instance%s of `%s`%s, %s, %s held by `%s`%s%s",
				 s->npiled == 1 ? "One" : fmt_count(n1, sizeof n1, s->npiled),
				 fmt_s(s->npiled), simple(s->piled), holds, size,
				 s->npiled == 1 ? "is" : "are", holder, where, loader);
	} else {
		/* no pile: acc's largest part, by the field that holds it */
		char most[512] = "";
		struct heap_ref r;
		if (s->largest != HEAP_NONE && path_step(h, s->acc, s->largest, &r)) {
			char *l = label(h, s->largest, true);
			char field[300];
			if (r.kind == HEAP_REF_ELEMENT)
				snprintf(field, sizeof field, "[%u]", r.index);
			else
				snprintf(field, sizeof field, "%s", r.name ? r.name : "?");
			snprintf(most, sizeof most, ", the most through `%s` (`%s`, %s)", field, l,
				 fmt_bytes(b1, sizeof b1, s->largest_bytes));
			big_free(l);
		}
		if (heap_kind(h, s->acc) == HEAP_CLASS)
			snprintf(line, sizeof line, "The static fields of `%s` keep %s alive%s", holder,
				 size, most);
		else
			snprintf(line, sizeof line, "`%s` keeps %s alive%s, held%s", holder, size, most,
				 where);
	}
	big_free(holder);
	return xstrdup(line);
}

/*
 * loaders_on_the_way: a pile of JDK classes (byte[]) held through classes
 * of other class loaders (a plugin's static field): those loaders, from
 * the classes of the members and the class objects on the path.
 */
static void loaders_on_the_way(const struct heap *h, struct suspect *s)
{
	if (s->loader != HEAP_NONE)
		return;
	uint32_t seen[64], nseen = 0;
	for (uint32_t m = 0; m < s->nmembers + s->path.len && nseen < 64; m++) {
		uint32_t x = m < s->nmembers ? s->members[m] : s->path.nodes[m - s->nmembers];
		uint32_t c = heap_kind(h, x) == HEAP_CLASS ? heap_class_of_object(h, x) : h->cls[x];
		uint32_t l = c == HEAP_NONE ? HEAP_NONE : h->classes[c].loader;
		if (l == HEAP_NONE || l >= h->n || is_jdk_loader(h, l))
			continue;
		bool dup = false;
		for (uint32_t k = 0; k < nseen && !dup; k++)
			dup = seen[k] == l;
		if (!dup)
			seen[nseen++] = l;
	}
	if (nseen) {
		s->loader = seen[0];
		s->nloaders = nseen;
		s->loader_on_way = true;
	}
}

static int cmp_suspect(const void *a, const void *b)
{
	const struct suspect *x = a, *y = b;
	if (x->retained != y->retained)
		return x->retained < y->retained ? 1 : -1;
	return strcmp(x->description, y->description);
}

/* similar: two suspects to show as one: alike chains, the same piled class. */
static bool similar(const struct heap *h, const struct suspect *a, const struct suspect *b)
{
	if (!a->nchains || !b->nchains || !a->piled || !b->piled || strcmp(a->piled, b->piled))
		return false;
	if (strcmp(heap_class_name(h, a->members[0]), heap_class_name(h, b->members[0])))
		return false;
	const struct sus_chain *x = &a->chains[0], *y = &b->chains[0];
	if (x->start != y->start || x->nsteps != y->nsteps ||
	    strcmp(x->class_name, y->class_name))
		return false;
	for (uint32_t k = 0; k < x->nsteps; k++)
		if (x->steps[k].kind != y->steps[k].kind ||
		    (x->steps[k].name != y->steps[k].name &&
		     (!x->steps[k].name || !y->steps[k].name || strcmp(x->steps[k].name, y->steps[k].name))))
			return false;
	return true;
}

/* merge: b into a (a group of their members). */
static void merge(struct suspect *a, struct suspect *b)
{
	uint32_t n = a->nmembers + b->nmembers;
	a->members = xreallocarray(a->members, n, sizeof *a->members);
	a->accs = xreallocarray(a->accs, n, sizeof *a->accs);
	memcpy(a->members + a->nmembers, b->members, b->nmembers * sizeof *b->members);
	memcpy(a->accs + a->nmembers, b->accs, b->nmembers * sizeof *b->accs);
	a->nmembers = n;
	a->group = true;
	a->retained += b->retained;
	a->npiled += b->npiled;
	a->piled_bytes += b->piled_bytes;
	uint32_t room = SUS_CHAINS - a->nchains, take = b->nchains < room ? b->nchains : room;
	if (take) {
		a->chains = xreallocarray(a->chains, a->nchains + take, sizeof *a->chains);
		memcpy(a->chains + a->nchains, b->chains, take * sizeof *b->chains);
		a->nchains += take;
	}
	for (uint32_t i = take; i < b->nchains; i++)
		free_chain(&b->chains[i]);
	big_free(b->chains);
	big_free(b->members);
	big_free(b->accs);
	big_free(b->path.nodes);
	memset(b, 0, sizeof *b);
}

int sus_find(struct dom_tree *t, struct hgraph *g, const struct sus_opts *o,
	     struct suspect **out, uint32_t *n)
{
	const struct heap *h = t->h;
	*out = NULL;
	*n = 0;
	struct finder f = {.t = t, .h = h, .root = h->n};
	double th = o->threshold_pct > 0 ? o->threshold_pct : 10;
	f.limit = (uint64_t)((double)dom_retained(t, h->n) * th / 100.0);
	if (!f.limit)
		f.limit = 1;
	f.child = (o->child_pct > 0 ? o->child_pct : 80) / 100.0;
	/* children lists (counting sort by immediate dominator) */
	f.kstart = big_alloc((size_t)h->n + 3, sizeof *f.kstart);
	for (uint32_t v = 0; v < h->n; v++)
		if (t->idom[v] <= h->n)
			f.kstart[t->idom[v] + 2]++;
	for (uint32_t v = 2; v < h->n + 3; v++)
		f.kstart[v] += f.kstart[v - 1];
	f.kids = big_alloc((size_t)f.kstart[h->n + 2] + 1, sizeof *f.kids);
	for (uint32_t v = 0; v < h->n; v++) {
		if (!(v & 0xfffff) && hs_interrupted)
			break;
		if (t->idom[v] <= h->n)
			f.kids[f.kstart[t->idom[v] + 1]++] = v;
	}
	f.cbytes = xcalloc(h->nclasses + 1, sizeof *f.cbytes);
	f.ccount = xcalloc(h->nclasses + 1, sizeof *f.ccount);
	f.cfirst = xcalloc(h->nclasses + 1, sizeof *f.cfirst);
	f.touched = xcalloc(h->nclasses + 1, sizeof *f.touched);
	int st = hs_interrupted ? HS_INTERRUPTED : explore(&f);
	big_free(f.cbytes);
	big_free(f.ccount);
	big_free(f.cfirst);
	big_free(f.touched);
	if (st == HS_OK) {
		/* paths: each suspect's accumulation point, and the first members' */
		uint32_t nwant = 0;
		for (uint32_t i = 0; i < f.ns; i++)
			nwant += f.s[i].nmembers < SUS_CHAINS ? f.s[i].nmembers : SUS_CHAINS;
		uint32_t *want = xmallocarray(nwant + 1, sizeof *want);
		struct path *paths = xcalloc(nwant + 1, sizeof *paths);
		nwant = 0;
		for (uint32_t i = 0; i < f.ns; i++)
			for (uint32_t m = 0; m < f.s[i].nmembers && m < SUS_CHAINS; m++)
				want[nwant++] = f.s[i].accs[m];
		st = shortest_paths(g, want, nwant, paths);
		uint32_t w = 0;
		for (uint32_t i = 0; i < f.ns && st == HS_OK; i++) {
			struct suspect *s = &f.s[i];
			s->nchains = s->nmembers < SUS_CHAINS ? s->nmembers : SUS_CHAINS;
			s->chains = xcalloc(s->nchains, sizeof *s->chains);
			for (uint32_t m = 0; m < s->nchains; m++, w++) {
				make_chain(h, &paths[w], &s->chains[m]);
				if (paths[w].len) {
					uint32_t x = paths[w].nodes[holder_at(h, &paths[w])];
					s->chains[m].retained = dom_retained(t, x);
				}
				if (m)
					big_free(paths[w].nodes);
			}
			s->path = paths[w - s->nchains];
			s->holder = s->path.len ? s->path.nodes[holder_at(h, &s->path)] : s->acc;
		}
		big_free(paths);
		big_free(want);
	}
	big_free(f.kstart);
	big_free(f.kids);
	if (st != HS_OK) {
		sus_free(f.s, f.ns);
		return st;
	}
	/* similar suspects found apart are one group */
	uint32_t m = 0;
	for (uint32_t i = 0; i < f.ns; i++) {
		bool merged = false;
		for (uint32_t j = 0; j < m && !merged; j++)
			if (similar(h, &f.s[j], &f.s[i])) {
				merge(&f.s[j], &f.s[i]);
				merged = true;
			}
		if (!merged)
			f.s[m++] = f.s[i];
	}
	f.ns = m;
	for (uint32_t i = 0; i < f.ns; i++)
		loaders_on_the_way(h, &f.s[i]);
	for (uint32_t i = 0; i < f.ns; i++) {
		struct suspect *s = &f.s[i];
		if (heap_kind(h, s->holder) == HEAP_CLASS && !s->piled) {
			char *l = heap_object_label(h, s->holder);
			s->where = xasprintf("%s (static fields)", l);
			big_free(l);
		} else {
			s->where = chain_text(&s->chains[0], s->chains + 1, s->nchains - 1);
		}
		s->description = describe(h, s, dom_retained(t, h->n));
		s->growth = (int64_t)s->retained;
	}
	if (f.ns)
		qsort(f.s, f.ns, sizeof *f.s, cmp_suspect);
	*out = f.s;
	*n = f.ns;
	return HS_OK;
}

void sus_free(struct suspect *s, uint32_t n)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < n; i++) {
		big_free(s[i].members);
		big_free(s[i].accs);
		big_free(s[i].path.nodes);
		for (uint32_t c = 0; c < s[i].nchains; c++)
			free_chain(&s[i].chains[c]);
		big_free(s[i].chains);
		big_free(s[i].where);
		big_free(s[i].description);
	}
	big_free(s);
}

/* ---- growth since a baseline ---- */

static uint32_t ref_of(const struct heap *h, struct heap_value v)
{
	return v.type == HPROF_OBJECT && v.v.id ? heap_index(h, v.v.id) : HEAP_NONE;
}

/* resolve: the object chain c leads to in heap b, or HEAP_NONE. */
static uint32_t resolve(const struct heap *b, const struct dom_tree *bt, const struct sus_chain *c)
{
	uint32_t x = HEAP_NONE, k = 0;
	struct heap_value v;
	if (!c->class_name)
		return HEAP_NONE;
	if (c->start == SUS_STATIC) {
		uint32_t cls = heap_class_by_name(b, c->class_name);
		if (cls == HEAP_NONE || !c->nsteps || c->steps[0].kind != HEAP_REF_STATIC ||
		    !heap_static(b, cls, c->steps[0].name, &v))
			return HEAP_NONE;
		x = ref_of(b, v);
		k = 1;
	} else if (c->start == SUS_THREAD) {
		for (uint32_t t = 0; t < b->nthreads && x == HEAP_NONE && c->thread; t++) {
			char *name = heap_thread_name(b, t);
			if (name && !strcmp(name, c->thread))
				x = b->threads[t].obj;
			big_free(name);
		}
	} else {
		/* the GC root object of that class retaining the most */
		for (uint32_t r = 0; r < b->nroots; r++) {
			uint32_t o = b->roots[r].obj;
			if (o < b->n && !strcmp(heap_class_name(b, o), c->class_name) &&
			    (x == HEAP_NONE || dom_retained(bt, o) > dom_retained(bt, x)))
				x = o;
		}
	}
	for (; k < c->nsteps && x != HEAP_NONE && x < b->n; k++) {
		const struct sus_step *s = &c->steps[k];
		switch (s->kind) {
		case HEAP_REF_ELEMENT:
			x = heap_kind(b, x) == HEAP_OBJ_ARRAY && s->index < heap_array_length(b, x)
				    ? ref_of(b, heap_array_elem(b, x, s->index))
				    : HEAP_NONE;
			break;
		case HEAP_REF_SUPER:
		case HEAP_REF_STATIC:
		case HEAP_REF_LOADER: {
			uint32_t cls = heap_class_of_object(b, x);
			if (s->kind == HEAP_REF_SUPER && s->name && !strcmp(s->name, "<class>"))
				x = b->classes[b->cls[x]].obj;	/* the class link */
			else if (cls == HEAP_NONE)
				x = HEAP_NONE;
			else if (s->kind == HEAP_REF_LOADER)
				x = b->classes[cls].loader;
			else if (s->kind == HEAP_REF_SUPER)
				x = b->classes[cls].super == HEAP_NONE ? HEAP_NONE
								       : b->classes[b->classes[cls].super].obj;
			else
				x = heap_static(b, cls, s->name, &v) ? ref_of(b, v) : HEAP_NONE;
			break;
		}
		default:
			x = s->name && heap_field(b, x, s->name, &v) ? ref_of(b, v) : HEAP_NONE;
			break;
		}
	}
	return x < b->n ? x : HEAP_NONE;
}

static int cmp_growth(const void *a, const void *b)
{
	const struct suspect *x = a, *y = b;
	if (x->growth != y->growth)
		return x->growth < y->growth ? 1 : -1;
	return cmp_suspect(a, b);
}

void sus_baseline(struct suspect *s, uint32_t n, struct dom_tree *base)
{
	const struct heap *b = base->h;
	for (uint32_t i = 0; i < n; i++) {
		s[i].has_base = false;
		s[i].base_retained = 0;
		for (uint32_t c = 0; c < s[i].nchains; c++) {
			uint32_t x = resolve(b, base, &s[i].chains[c]);
			if (x != HEAP_NONE && base->idom[x] != HEAP_NONE) {
				s[i].has_base = true;
				s[i].base_retained += dom_retained(base, x);
			}
		}
		/* what the holders retain now, against then */
		uint64_t now = 0;
		for (uint32_t c = 0; c < s[i].nchains; c++)
			now += s[i].chains[c].retained;
		s[i].growth = (int64_t)now - (int64_t)s[i].base_retained;
	}
	if (n)
		qsort(s, n, sizeof *s, cmp_growth);
}

/* share: the piled bytes of the suspects naming class cls as piled or held (the split's whole). */
static uint64_t share(const struct suspect *s, uint32_t n, const char *cls)
{
	uint64_t all = 0;
	for (uint32_t i = 0; i < n; i++)
		if ((s[i].piled && !strcmp(s[i].piled, cls)) || (s[i].holds && !strcmp(s[i].holds, cls)))
			all += s[i].piled_bytes ? s[i].piled_bytes : 1;
	return all;
}

void sus_class_growth(struct suspect *s, uint32_t n, int64_t (*growth_of)(void *ctx, const char *cls),
		      void *ctx)
{
	int64_t *g = xcalloc((size_t)n + 1, sizeof *g);
	for (uint32_t i = 0; i < n; i++) {
		const char *cls[2] = {s[i].piled, s[i].holds && (!s[i].piled || strcmp(s[i].holds, s[i].piled))
							  ? s[i].holds : NULL};
		for (int k = 0; k < 2; k++) {
			if (!cls[k])
				continue;
			uint64_t mine = s[i].piled_bytes ? s[i].piled_bytes : 1, all = share(s, n, cls[k]);
			g[i] += (int64_t)((double)growth_of(ctx, cls[k]) * (double)mine / (double)(all ? all : 1));
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		s[i].has_base = s[i].piled != NULL;
		s[i].growth = g[i];
		s[i].base_retained = g[i] > 0 && (uint64_t)g[i] > s[i].retained
					     ? 0 : (uint64_t)((int64_t)s[i].retained - g[i]);
	}
	free(g);
	if (n)
		qsort(s, n, sizeof *s, cmp_growth);
}

void sus_growing(struct suspect *s, uint32_t *n, double threshold_pct, uint64_t reachable)
{
	uint64_t limit = (uint64_t)((double)reachable * threshold_pct / 100.0);
	uint32_t m = 0;
	for (uint32_t i = 0; i < *n; i++) {
		if (s[i].retained >= limit || s[i].growth > 0) {
			s[m++] = s[i];
		} else {
			struct suspect one = s[i];
			big_free(one.members);
			big_free(one.accs);
			big_free(one.path.nodes);
			for (uint32_t c = 0; c < one.nchains; c++)
				free_chain(&one.chains[c]);
			big_free(one.chains);
			big_free(one.where);
			big_free(one.description);
		}
	}
	*n = m;
}

void sus_under(const struct dom_tree *t, double threshold_pct, double low_pct,
	       struct sus_under *u)
{
	const struct heap *h = t->h;
	uint64_t all = dom_retained(t, h->n);
	uint64_t hi = (uint64_t)((double)all * threshold_pct / 100.0);
	uint64_t lo = (uint64_t)((double)all * low_pct / 100.0);
	if (!lo)
		lo = 1;
	memset(u, 0, sizeof *u);
	u->low_pct = low_pct;
	u->largest = HEAP_NONE;
	for (uint32_t v = 0; v < h->n; v++) {
		uint32_t d = t->idom[v];
		if (d == HEAP_NONE)
			continue;
		uint64_t r = dom_retained(t, v);
		if (r < lo || r >= hi || (d != h->n && dom_retained(t, d) < hi))
			continue;
		u->n++;
		u->bytes += r;
		if (r > u->largest_bytes) {
			u->largest_bytes = r;
			u->largest = v;
		}
	}
}

char *sus_path_text(const struct heap *h, const struct path *p, bool short_names,
		    uint32_t max_steps)
{
	if (!p->len)
		return xstrdup("(unreachable from the GC roots)");
	size_t cap = 256, len = 0;
	char *buf = xmalloc(cap);
	for (uint32_t k = 0; k < p->len; k++) {
		char piece[600], how[256];
		uint32_t x = p->nodes[k];
		if (max_steps && p->len > max_steps && k >= 2 && k < p->len - (max_steps - 3)) {
			if (k == 2)
				snprintf(piece, sizeof piece, " -> (%u more)",
					 p->len - 2 - (max_steps - 3));
			else
				continue;
		} else {
			char *l = label(h, x, short_names);
			if (!k) {
				const char *rk = root_kind(h, x);
				snprintf(piece, sizeof piece, "%s%s%s%s", rk ? "[" : "", rk ? rk : "",
					 rk ? "] " : "", l);
			} else {
				path_via(h, p->nodes[k - 1], x, how, sizeof how);
				snprintf(piece, sizeof piece, " -%s-> %s", how, l);
			}
			big_free(l);
		}
		size_t pl = strlen(piece);
		while (len + pl + 1 > cap) {
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		memcpy(buf + len, piece, pl + 1);
		len += pl;
	}
	return buf;
}
