/*
 * hdiff.c - two dumps of one program compared (hdiff.h; issue 38): by
 * class or package with exact retained sizes for the candidates, by
 * merged dominator path down to where growth accumulates, and the growth
 * conditions of heapsh diff --fail-if.
 */
#include "hdiff.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/big.h"
#include "../base/ctx.h"
#include "../base/u64map.h"
#include "../heap/heap.h"

#define MAX_STEPS 64	/* paths are cut there */
#define CHAIN_SHARE 0.8	/* a child carrying this share of its parent's growth continues the chain */

char *hdiff_class_key(const char *name, char *buf, size_t cap)
{
	size_t o = 0;
	if (!cap)
		return buf;
	for (const char *p = name; *p && o + 1 < cap;) {
		/* a hidden class's address: "/0x" (HPROF: "+0x") and hex digits */
		if ((p[0] == '/' || p[0] == '+') && p[1] == '0' && p[2] == 'x' &&
		    isxdigit((unsigned char)p[3])) {
			p += 3;
			while (isxdigit((unsigned char)*p))
				p++;
			continue;
		}
		/* a lambda's number: "$$Lambda$123" */
		if (!strncmp(p, "$$Lambda$", 9) && isdigit((unsigned char)p[9])) {
			size_t l = o + 8 < cap ? 8 : cap - 1 - o;
			memcpy(buf + o, p, l);
			o += l;
			p += 9;
			while (isdigit((unsigned char)*p))
				p++;
			continue;
		}
		buf[o++] = *p++;
	}
	buf[o] = 0;
	return buf;
}

static bool primitive(const char *name, size_t len)
{
	static const char *const prim[] = {"boolean", "byte", "char", "short", "int", "long",
					   "float", "double"};
	for (size_t k = 0; k < sizeof prim / sizeof *prim; k++)
		if (strlen(prim[k]) == len && !strncmp(prim[k], name, len))
			return true;
	return false;
}

char *hdiff_package(const char *name, char *buf, size_t cap)
{
	size_t len = strlen(name);
	bool array = false;
	while (len >= 2 && name[len - 2] == '[' && name[len - 1] == ']') {
		len -= 2;
		array = true;
	}
	const char *dot = NULL;
	for (size_t k = 0; k < len; k++)
		if (name[k] == '.')
			dot = name + k;
	if (array && primitive(name, len))
		snprintf(buf, cap, "%s", name);	/* a row per type: data, not a package */
	else if (!dot)
		snprintf(buf, cap, "<default package>");
	else
		snprintf(buf, cap, "%.*s", (int)(dot - name), name);
	return buf;
}

/* ---- strings by content: an open-addressing table of indices ---- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* A set of strings, each with an id (its place in str). */
struct strtab {
	char **str;
	uint64_t *hash;
	uint32_t n, cap;
	uint32_t *slot;		/* [nslot] id + 1, 0 empty */
	uint32_t nslot;
};

static uint32_t st_intern(struct strtab *t, const char *s)
{
	uint64_t h = u64_fnv1a(s, U64_FNV_BASIS);
	if ((uint64_t)(t->n + 1) * 2 > t->nslot) {
		uint32_t ns = t->nslot ? t->nslot * 2 : 256;
		uint32_t *slot = xcalloc(ns, sizeof *slot);
		for (uint32_t k = 0; k < t->n; k++) {
			uint32_t i = (uint32_t)(t->hash[k] & (ns - 1));
			while (slot[i])
				i = (i + 1) & (ns - 1);
			slot[i] = k + 1;
		}
		free(t->slot);
		t->slot = slot;
		t->nslot = ns;
	}
	uint32_t i = (uint32_t)(h & (t->nslot - 1));
	for (; t->slot[i]; i = (i + 1) & (t->nslot - 1)) {
		uint32_t k = t->slot[i] - 1;
		if (t->hash[k] == h && !strcmp(t->str[k], s))
			return k;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->str = xreallocarray(t->str, t->cap, sizeof *t->str);
		t->hash = xreallocarray(t->hash, t->cap, sizeof *t->hash);
	}
	t->str[t->n] = xstrdup(s);
	t->hash[t->n] = h;
	t->slot[i] = t->n + 1;
	return t->n++;
}

static void st_free(struct strtab *t)
{
	for (uint32_t k = 0; k < t->n; k++)
		free(t->str[k]);
	free(t->str);
	free(t->hash);
	free(t->slot);
	memset(t, 0, sizeof *t);
}

/* rows by their chain's growth, a chain together from its end up, then by name */
static int cmp_rows(const void *a, const void *b)
{
	const struct hdiff_row *x = a, *y = b;
	if (x->order != y->order)
		return x->order > y->order ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* finish: r's rows sorted, cut to top (0: all). */
static void finish(struct hdiff_result *r, uint32_t top)
{
	if (r->nrows)
		qsort(r->rows, r->nrows, sizeof *r->rows, cmp_rows);
	if (top && r->nrows > top) {
		for (uint32_t k = top; k < r->nrows; k++)
			free(r->rows[k].key);
		r->nrows = top;
	}
}

/* ---- by class and by package ---- */

struct grp {
	uint64_t count[2], shallow[2], approx[2], exact[2];
	uint32_t nobj[2];
	uint32_t *objs[2];
	bool cand;
	bool data;		/* a primitive array type: holds data, never where a chain ends */
	uint32_t pass;		/* the row it passes its growth on to, UINT32_MAX: none */
	uint32_t end, dist;	/* where its chain ends, and how many steps away */
};

static int64_t delta(const uint64_t v[2])
{
	return (int64_t)v[1] - (int64_t)v[0];
}

static uint64_t mag(int64_t d)
{
	return d < 0 ? (uint64_t)-d : (uint64_t)d;
}

/* A row and how much one measure of it changed, for choosing candidates. */
struct change {
	uint64_t mag;
	uint32_t row;
};

static int cmp_change(const void *a, const void *b)
{
	const struct change *x = a, *y = b;
	if (x->mag != y->mag)
		return x->mag > y->mag ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/* A flow: what instances of row b retain under instances of row a (their nearest such dominator). */
struct flow {
	uint32_t a, b;
	uint64_t bytes[2];
};

/*
 * chains: which candidate row passes its growth on to which (g[].pass):
 * row a passes to row b when the instances of b whose nearest dominator
 * among candidate rows' instances is of a retain 80% or more of a's
 * growth (a HashMap to its HashMap$Node[], a node to the leaking class),
 * and b's own growth is of the same sign; never to a row of primitive
 * arrays (the data of its holder). One climb
 * of each tree, 4 bytes per object while it runs.
 */
static int chains(struct dom_tree *t[2], struct grp *g, uint32_t ng, uint32_t *const cg[2])
{
	struct u64map at;
	struct flow *f = NULL;
	uint32_t nf = 0, capf = 0, *stack = NULL, caps = 0;
	int st = HS_OK;
	u64map_init(&at, 256);
	for (int d = 0; d < 2 && st == HS_OK; d++) {
		const struct heap *h = t[d]->h;
		uint32_t n = h->n;
		const uint32_t *idom = t[d]->idom;
		/* near[x]: 1 + the row of x's nearest proper dominator of a candidate row (1: none); 0 unknown */
		uint32_t *near = big_alloc((size_t)n + 1, sizeof *near);
		for (uint32_t v = 0; v < n && st == HS_OK; v++) {
			if (!(v & 0xfffff) && hs_interrupted)
				st = HS_INTERRUPTED;
			if (idom[v] == HEAP_NONE || near[v])
				continue;
			uint32_t sp = 0;
			for (uint32_t x = v; x != n && !near[x]; x = idom[x]) {
				if (sp == caps)
					stack = xreallocarray(stack, caps = caps ? caps * 2 : 1024, sizeof *stack);
				stack[sp++] = x;
			}
			while (sp) {
				uint32_t x = stack[--sp], up = idom[x];
				uint32_t ru = up == n ? UINT32_MAX : cg[d][h->cls[up]];
				near[x] = up == n ? 1 : g[ru].cand ? ru + 2 : near[up];
				uint32_t b = cg[d][h->cls[x]], a = near[x] - 2;
				if (near[x] < 2 || !g[b].cand || a == b)
					continue;
				uint64_t key = (uint64_t)a << 32 | b, k;
				if (!u64map_get(&at, key, &k)) {
					if (nf == capf)
						f = xreallocarray(f, capf = capf ? capf * 2 : 256, sizeof *f);
					f[nf] = (struct flow){a, b, {0, 0}};
					u64map_put(&at, key, k = nf++);
				}
				f[k].bytes[d] += dom_retained(t[d], x);
			}
		}
		big_free(near);
	}
	free(stack);
	u64map_free(&at);
	uint64_t *best = xcalloc((size_t)ng + 1, sizeof *best);	/* the growth a's pass carries */
	for (uint32_t k = 0; k < nf && st == HS_OK; k++) {
		struct grp *a = &g[f[k].a];
		int64_t ga = delta(a->exact), gf = delta(f[k].bytes), gb = delta(g[f[k].b].exact);
		if (g[f[k].b].data || !ga || (ga > 0) != (gf > 0) || (ga > 0) != (gb > 0) || !gb ||
		    (double)mag(gf) < CHAIN_SHARE * (double)mag(ga))
			continue;
		if (a->pass == UINT32_MAX || mag(gf) > best[f[k].a] ||
		    (mag(gf) == best[f[k].a] && f[k].b < a->pass)) {
			a->pass = f[k].b;
			best[f[k].a] = mag(gf);
		}
	}
	free(best);
	free(f);
	/* each row's chain end (a cycle, where shares add up so, ends where it closes) */
	for (uint32_t i = 0; i < ng; i++) {
		uint32_t e = i, steps = 0;
		while (g[e].pass != UINT32_MAX && steps < ng && g[e].pass != i) {
			e = g[e].pass;
			steps++;
		}
		g[i].end = e;
		g[i].dist = steps;
	}
	return st;
}

/* key_of: the row of class c of h, by class or package, into buf. */
static const char *key_of(const struct heap *h, uint32_t c, enum hdiff_by by, char *buf, size_t cap)
{
	char k[1024];
	hdiff_class_key(h->classes[c].name, k, sizeof k);
	if (by == HDIFF_PACKAGE)
		return hdiff_package(k, buf, cap);
	snprintf(buf, cap, "%s", k);
	return buf;
}

int hdiff_groups(struct dom_tree *t[2], enum hdiff_by by, uint32_t top, struct hdiff_result *r)
{
	struct strtab keys = {0};
	struct grp *g = NULL;
	uint32_t *cg[2] = {NULL, NULL}, *pick = NULL;
	uint64_t *own = NULL;
	int st = HS_OK;
	char buf[1100];
	memset(r, 0, sizeof *r);
	for (int d = 0; d < 2 && st == HS_OK; d++) {
		const struct heap *h = t[d]->h;
		own = xcalloc((size_t)h->nclasses + 1, sizeof *own);
		st = dom_class_retained_lower(t[d], own);
		cg[d] = xcalloc((size_t)h->nclasses + 1, sizeof *cg[d]);
		for (uint32_t c = 0; c < h->nclasses && st == HS_OK; c++) {
			uint32_t before = keys.n;
			uint32_t id = st_intern(&keys, key_of(h, c, by, buf, sizeof buf));
			if (keys.n != before) {
				g = xreallocarray(g, keys.cap, sizeof *g);
				memset(&g[id], 0, sizeof *g);
				g[id].pass = UINT32_MAX;
				size_t l = strlen(keys.str[id]);
				g[id].data = l > 2 && !strcmp(keys.str[id] + l - 2, "[]") &&
					     primitive(keys.str[id], l - 2);
			}
			cg[d][c] = id;
			g[id].count[d] += h->classes[c].count;
			g[id].shallow[d] += h->classes[c].shallow;
			g[id].approx[d] += own[c];
		}
		free(own);
		own = NULL;
	}
	if (st != HS_OK)
		goto done;
	/* the candidates: every changed row, or the most changed by each measure */
	pick = xcalloc((size_t)keys.n + 1, sizeof *pick);
	uint32_t nchanged = 0;
	for (uint32_t k = 0; k < keys.n; k++)
		if (delta(g[k].count) || delta(g[k].shallow) || delta(g[k].approx))
			pick[nchanged++] = k;
	if (!top || nchanged <= 8 * (uint64_t)top) {
		for (uint32_t k = 0; k < nchanged; k++)
			g[pick[k]].cand = true;
	} else {
		struct change *ch = xcalloc((size_t)nchanged + 1, sizeof *ch);
		for (int what = 0; what < 2; what++) {	/* approximate retained, then shallow */
			for (uint32_t k = 0; k < nchanged; k++)
				ch[k] = (struct change){mag(delta(what ? g[pick[k]].shallow : g[pick[k]].approx)),
							pick[k]};
			qsort(ch, nchanged, sizeof *ch, cmp_change);
			for (uint32_t k = 0; k < 4 * top; k++)
				g[ch[k].row].cand = true;
		}
		free(ch);
	}
	/* exact retained sizes of the candidates: their instances in each dump, one batch */
	for (int d = 0; d < 2 && st == HS_OK; d++) {
		const struct heap *h = t[d]->h;
		for (uint32_t c = 0; c < h->nclasses; c++) {
			uint32_t cnt;
			heap_instances(h, c, &cnt);
			if (g[cg[d][c]].cand)
				g[cg[d][c]].nobj[d] += cnt;
		}
		uint32_t k = 0;
		for (uint32_t i = 0; i < keys.n; i++) {
			if (!g[i].cand || !g[i].nobj[d])
				continue;
			g[i].objs[d] = xmallocarray(g[i].nobj[d], sizeof *g[i].objs[d]);
			g[i].nobj[d] = 0;	/* counted again as they are copied */
			k++;
		}
		for (uint32_t c = 0; c < h->nclasses; c++) {
			struct grp *x = &g[cg[d][c]];
			uint32_t cnt;
			const uint32_t *in = heap_instances(h, c, &cnt);
			if (x->cand && cnt) {
				memcpy(x->objs[d] + x->nobj[d], in, (size_t)cnt * sizeof *in);
				x->nobj[d] += cnt;
			}
		}
		const uint32_t **sets = xcalloc((size_t)k + 1, sizeof *sets);
		uint32_t *n = xcalloc((size_t)k + 1, sizeof *n), j = 0;
		uint64_t *bytes = xcalloc((size_t)k + 1, sizeof *bytes);
		for (uint32_t i = 0; i < keys.n; i++) {
			if (!g[i].cand || !g[i].nobj[d])
				continue;
			sets[j] = g[i].objs[d];
			n[j++] = g[i].nobj[d];
		}
		st = dom_retained_sets(t[d], k, sets, n, bytes);
		j = 0;
		for (uint32_t i = 0; i < keys.n; i++) {
			if (g[i].cand && g[i].nobj[d])
				g[i].exact[d] = bytes[j++];
			free(g[i].objs[d]);
			g[i].objs[d] = NULL;
		}
		free(sets);
		free(n);
		free(bytes);
	}
	if (st == HS_OK)
		st = chains(t, g, keys.n, cg);
	if (st != HS_OK)
		goto done;
	r->rows = xcalloc((size_t)keys.n + 1, sizeof *r->rows);
	for (uint32_t i = 0; i < keys.n; i++) {
		if (!g[i].cand)
			continue;
		r->candidates++;
		if (!delta(g[i].count) && !delta(g[i].exact))
			continue;
		struct hdiff_row *w = &r->rows[r->nrows++];
		w->key = xstrdup(keys.str[i]);
		for (int d = 0; d < 2; d++) {
			w->objects[d] = g[i].count[d];
			w->retained[d] = g[i].exact[d];
		}
		w->growth = delta(g[i].exact);
		w->order = delta(g[g[i].end].exact);
		w->end = g[i].end;
		w->dist = g[i].dist;
	}
	finish(r, top);
done:
	free(own);
	free(pick);
	free(cg[0]);
	free(cg[1]);
	free(g);
	st_free(&keys);
	return st;
}

/* ---- by merged dominator path ---- */

/* One merged path: its last step, in both dumps. */
struct pent {
	uint64_t hash;		/* the path's hash */
	uint32_t cls, label;	/* the step: strings of the path table (label UINT32_MAX: none) */
	uint32_t up;		/* the parent's entry, UINT32_MAX: none */
	uint32_t next;		/* the child continuing the chain, UINT32_MAX: none */
	bool data;		/* primitive arrays: the data of their holder, never a chain's end */
	uint32_t depth;		/* steps from the GC roots, 1 for the first */
	bool dead;		/* merged into another (moved) */
	uint64_t objects[2];	/* objects whose path this is */
	uint64_t shallow[2];	/* their shallow bytes */
	uint64_t retained[2];	/* shallow bytes of the objects of this path and those under it */
};

struct ptab {
	struct pent *e;
	uint32_t n, cap;
	struct u64map at;	/* hash -> entry */
	struct strtab str;	/* class keys and labels */
};

/* What one dump's walk needs (labels: the reference each object is dominated by). */
struct walk {
	const struct heap *h;
	const uint32_t *idom;
	uint32_t *label;	/* [n] label string + 1, 0: none */
	uint32_t from;
	struct strtab *str;
};

/* label_of: the label of reference r as text into buf (600 bytes). */
static void label_of(const struct heap_ref *r, char *buf)
{
	switch (r->kind) {
	case HEAP_REF_FIELD: snprintf(buf, 600, "%s", r->name ? r->name : "?"); break;
	case HEAP_REF_ELEMENT: snprintf(buf, 600, "[]"); break;
	case HEAP_REF_STATIC: snprintf(buf, 600, "static %s", r->name ? r->name : "?"); break;
	case HEAP_REF_SUPER: snprintf(buf, 600, "<super>"); break;
	case HEAP_REF_LOADER: snprintf(buf, 600, "<loader>"); break;
	case HEAP_REF_SIGNERS: snprintf(buf, 600, "<signers>"); break;
	case HEAP_REF_DOMAIN: snprintf(buf, 600, "<protection domain>"); break;
	default: snprintf(buf, 600, "<constant pool>"); break;
	}
}

static bool take_label(void *ctx, const struct heap_ref *r)
{
	struct walk *w = ctx;
	uint32_t x = r->target;
	if (x >= w->h->n || w->idom[x] != w->from || w->label[x])
		return true;
	char buf[600];
	label_of(r, buf);
	w->label[x] = st_intern(w->str, buf) + 1;
	return true;
}

/* find_ref: the first reference to f->target (heap_refs' callback). */
struct find {
	uint32_t target;
	struct heap_ref r;
	bool found;
};
static bool find_ref(void *ctx, const struct heap_ref *r)
{
	struct find *f = ctx;
	if (r->target != f->target)
		return true;
	f->r = *r;
	f->found = true;
	return false;
}

/* transient: a root of what a thread holds at the moment (a frame's local, a JNI local, a lock). */
static bool transient(uint8_t kind)
{
	return kind == HPROF_GC_ROOT_JAVA_FRAME || kind == HPROF_GC_ROOT_JNI_LOCAL ||
	       kind == HPROF_GC_ROOT_NATIVE_STACK || kind == HPROF_GC_ROOT_THREAD_BLOCK ||
	       kind == HPROF_GC_ROOT_MONITOR_USED || kind == HPROF_GC_ROOT_JNI_MONITOR;
}

/* step_of: object o's step, a string of p (cid: each class's, [2c] instances, [2c + 1] its class object). */
static uint32_t step_of(const struct heap *h, const uint32_t *cid, uint32_t o)
{
	if (heap_kind(h, o) == HEAP_CLASS) {
		uint32_t c = heap_class_of_object(h, o);
		if (c != HEAP_NONE)
			return cid[2 * c + 1];
	}
	return cid[2 * h->cls[o]];
}

/* sig: how an object of step cs is held: by an object of step ps, through label lab + 1 (0: none). */
static uint64_t sig(uint32_t ps, uint32_t lab, uint32_t cs)
{
	return mix(((uint64_t)ps << 32 | cs) ^ mix(lab + 0x9e3779b9ULL));
}

/* What placing objects the GC roots dominate needs (holder). */
struct place {
	const struct dom_tree *t;
	const uint32_t *cid;
	const uint8_t *held;	/* a bit per object: a root of what a thread holds */
	const struct u64map *held_as;	/* sig -> objects of the dump held so */
	struct strtab *str;
};

/*
 * holder: where x, an object the GC roots dominate (not a class object),
 * goes on its path, and the label to it (*lab, a string of p + 1; 0: none),
 * as it would be in the tree were it not for what threads hold at the
 * moment (a local variable of a running method that refers to it, or to
 * what refers to it: an open transaction). Of the objects that refer to x
 * (at most 64; more: widely shared, it stays at the roots), leaving out
 * those under x and those under an object the GC roots dominate that a
 * thread holds (a frame's local, a JNI local, a lock): the one through
 * whose field (or element, or static field) the most objects of x's step
 * are held elsewhere in the dump (a RootReference through an
 * AtomicReference's value, rather than an open transaction's snapshot);
 * when none is, their lowest common dominator. HEAP_NONE: x stays at the
 * roots. Cost: the referrers' chains of dominators and their references
 * (those of at most 4096).
 */
static uint32_t holder(const struct place *pl, uint32_t x, uint32_t *lab)
{
	const struct dom_tree *t = pl->t;
	const struct heap *h = t->h;
	uint32_t n = h->n, cnt, lca = HEAP_NONE, at = 0, best = HEAP_NONE, len = 0;
	uint64_t best_n = 0;
	*lab = 0;
	const uint32_t *in = heap_in(h, x, &cnt);
	if (cnt > 64)
		return HEAP_NONE;
	struct u64map chain;	/* the first referrer's dominators -> their place on its chain */
	u64map_init(&chain, 64);
	for (uint32_t k = 0; k < cnt; k++) {
		uint32_t y = in[k], z = y, top = y, steps = 0, outs;
		if (y == x || t->idom[y] == HEAP_NONE)
			continue;
		while (z != n && z != x && steps++ < 100000) {
			top = z;
			z = t->idom[z];
		}
		if (z != n || (pl->held[top >> 3] & (1u << (top & 7))))
			continue;	/* under x (or too deep to tell), or held by a thread */
		struct find f = {x, {0}, false};
		heap_out(h, y, &outs);
		if (outs <= 4096)
			heap_refs(h, y, find_ref, &f);
		if (f.found && (f.r.kind == HEAP_REF_FIELD || f.r.kind == HEAP_REF_ELEMENT ||
				f.r.kind == HEAP_REF_STATIC)) {
			char buf[600];
			label_of(&f.r, buf);
			uint32_t l = st_intern(pl->str, buf);
			uint64_t many = 0;
			u64map_get(pl->held_as, sig(step_of(h, pl->cid, y), l + 1, step_of(h, pl->cid, x)), &many);
			if (many > best_n) {
				best_n = many;
				best = y;
				*lab = l + 1;
			}
		}
		if (lca == HEAP_NONE) {
			for (z = y; z != n; z = t->idom[z])
				u64map_put(&chain, z, len++);
			u64map_put(&chain, n, len++);
			lca = y;
			at = 0;
			continue;
		}
		uint64_t pos;
		for (z = y; !u64map_get(&chain, z, &pos); z = t->idom[z])
			;
		if (pos > at) {
			at = (uint32_t)pos;
			lca = z;
		}
	}
	u64map_free(&chain);
	if (best != HEAP_NONE)
		return best;
	if (lca == HEAP_NONE || lca == n)
		return HEAP_NONE;
	struct find f = {x, {0}, false};	/* the label, when the dominator refers to x itself */
	uint32_t outs;
	heap_out(h, lca, &outs);
	if (outs <= 4096)
		heap_refs(h, lca, find_ref, &f);
	if (f.found) {
		char buf[600];
		label_of(&f.r, buf);
		*lab = st_intern(pl->str, buf) + 1;
	}
	return lca;
}

static uint32_t pt_find(const struct ptab *p, uint64_t hash)
{
	uint64_t v;
	return u64map_get(&p->at, hash, &v) ? (uint32_t)v : UINT32_MAX;
}

/*
 * pt_step: the path of an object of step (cls, label) whose dominator's path
 * is up (UINT32_MAX: the GC roots), hash its hash if new: an entry made
 * now, or the one of that hash, or, when cls is already a step of up's
 * path (a recursive structure: a tree's pages, a map in a map), that step.
 */
static uint32_t pt_step(struct ptab *p, uint32_t up, uint64_t hash, uint32_t cls, uint32_t label)
{
	uint32_t e = pt_find(p, hash);
	if (e != UINT32_MAX)
		return e;
	for (uint32_t a = up; a != UINT32_MAX; a = p->e[a].up)
		if (p->e[a].cls == cls)
			return a;
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 1024;
		p->e = xreallocarray(p->e, p->cap, sizeof *p->e);
	}
	p->e[p->n] = (struct pent){.hash = hash, .cls = cls, .label = label, .up = up, .next = UINT32_MAX,
				   .depth = up == UINT32_MAX ? 1 : p->e[up].depth + 1};
	u64map_put(&p->at, hash, p->n);
	return p->n++;
}

/* parent_of: x's parent on its path: its immediate dominator, or its holder (under). */
static uint32_t parent_of(const struct dom_tree *t, const struct u64map *under, uint32_t x)
{
	uint64_t y;
	uint32_t up = t->idom[x];
	if (up == t->h->n && u64map_get(under, x, &y))
		return (uint32_t)y;
	return up;
}

/* one_tree: dump d's objects into p's paths. */
static int one_tree(struct dom_tree *t, int d, struct ptab *p)
{
	const struct heap *h = t->h;
	uint32_t n = h->n;
	int st = HS_OK;
	/* each class's step as a string of p and its hash, for instances and for the class object */
	uint32_t *cid = xcalloc((size_t)h->nclasses * 2 + 1, sizeof *cid);
	uint64_t *chash = xcalloc((size_t)h->nclasses * 2 + 1, sizeof *chash);
	for (uint32_t c = 0; c < h->nclasses; c++) {
		char k[1024], co[1100];
		hdiff_class_key(h->classes[c].name, k, sizeof k);
		snprintf(co, sizeof co, "class %s", k);
		cid[2 * c] = st_intern(&p->str, k);
		cid[2 * c + 1] = st_intern(&p->str, co);
		chash[2 * c] = u64_fnv1a(k, U64_FNV_BASIS);
		chash[2 * c + 1] = u64_fnv1a(co, U64_FNV_BASIS);
	}
	/* the labels: the references of every object that dominates another */
	uint8_t *dominates = big_alloc((size_t)n / 8 + 1, 1);
	for (uint32_t v = 0; v < n; v++)
		if (t->idom[v] < n)
			dominates[t->idom[v] >> 3] |= (uint8_t)(1u << (t->idom[v] & 7));
	struct walk w = {h, t->idom, big_alloc((size_t)n + 1, sizeof(uint32_t)), 0, &p->str};
	for (uint32_t v = 0; v < n && st == HS_OK; v++) {
		if (!(v & 0xfffff) && hs_interrupted)
			st = HS_INTERRUPTED;
		if (dominates[v >> 3] & (1u << (v & 7))) {
			w.from = v;
			heap_refs(h, v, take_label, &w);
		}
	}
	big_free(dominates);
	/* objects the GC roots dominate but for class objects: under their holder */
	struct u64map under;
	u64map_init(&under, 1024);
	uint8_t *held = big_alloc((size_t)n / 8 + 1, 1);
	for (uint32_t k = 0; k < h->nroots; k++) {
		uint32_t o = h->roots[k].obj;
		if (o < n && transient(h->roots[k].kind))
			held[o >> 3] |= (uint8_t)(1u << (o & 7));
	}
	/* how objects of each step are held in this dump, to place those the roots dominate alike */
	struct u64map held_as;
	u64map_init(&held_as, 4096);
	for (uint32_t v = 0; v < n && st == HS_OK; v++) {
		uint32_t u = t->idom[v];
		if (u >= n)
			continue;
		uint64_t key = sig(step_of(h, cid, u), w.label[v], step_of(h, cid, v)), c = 0;
		u64map_get(&held_as, key, &c);
		u64map_put(&held_as, key, c + 1);
	}
	struct place pl = {t, cid, held, &held_as, &p->str};
	for (uint32_t v = 0; v < n && st == HS_OK; v++) {
		if (!(v & 0xfffff) && hs_interrupted)
			st = HS_INTERRUPTED;
		if (t->idom[v] != n || heap_kind(h, v) == HEAP_CLASS)
			continue;
		uint32_t lab, y = holder(&pl, v, &lab);
		if (y == HEAP_NONE)
			continue;
		u64map_put(&under, v, y);
		w.label[v] = lab;
	}
	u64map_free(&held_as);
	big_free(held);
	/* each object's path from its parent's (its immediate dominator, or that holder):
	 * climb to one known, then down; a circle of referrers is cut where it closes */
	uint32_t *pe = big_alloc((size_t)n + 1, sizeof *pe);	/* entry + 1; 0: not yet */
	uint32_t *stack = NULL, cap = 0;
#define BUSY UINT32_MAX
	for (uint32_t v = 0; v < n && st == HS_OK; v++) {
		if (!(v & 0xfffff) && hs_interrupted)
			st = HS_INTERRUPTED;
		if (t->idom[v] == HEAP_NONE || pe[v])
			continue;
		uint32_t sp = 0, x = v, cut = HEAP_NONE;
		for (; x != n && !pe[x]; x = parent_of(t, &under, x)) {
			if (sp == cap) {
				cap = cap ? cap * 2 : 1024;
				stack = xreallocarray(stack, cap, sizeof *stack);
			}
			stack[sp++] = x;
			pe[x] = BUSY;
		}
		if (x != n && pe[x] == BUSY)
			cut = stack[sp - 1];	/* its parent is on the stack: a circle */
		while (sp) {
			uint32_t o = stack[--sp], up = o == cut ? n : parent_of(t, &under, o);
			bool co = heap_kind(h, o) == HEAP_CLASS;
			uint32_t c = co ? heap_class_of_object(h, o) : h->cls[o];
			if (c == HEAP_NONE) {	/* a class object of no class: as java.lang.Class */
				co = false;
				c = h->cls[o];
			}
			uint32_t ck = 2 * c + co, e, ue = up == n ? UINT32_MAX : pe[up] - 1;
			if (ue != UINT32_MAX && (p->e[ue].depth >= MAX_STEPS || p->e[ue].cls == cid[ck])) {
				e = ue;	/* past the last step, or a run of one class: the dominator's path */
			} else {
				uint32_t lab = w.label[o];
				uint64_t parent = ue == UINT32_MAX ? 0 : p->e[ue].hash;
				uint64_t hsh = mix(parent * 0x9e3779b97f4a7c15ULL ^ mix(chash[ck] ^
						   mix(lab ? p->str.hash[lab - 1] : 0x5bd1e995)));
				e = pt_step(p, ue, hsh ? hsh : 1, cid[ck], lab ? lab - 1 : UINT32_MAX);
			}
			pe[o] = e + 1;
			p->e[e].data = heap_kind(h, o) == HEAP_PRIM_ARRAY;
			p->e[e].objects[d]++;
			p->e[e].shallow[d] += heap_shallow(h, o);
		}
	}
	free(stack);
	big_free(pe);
	big_free(w.label);
	u64map_free(&under);
	free(cid);
	free(chash);
	return st;
}

/* path_text: entry e's whole path, from the GC roots, as text (malloc'd). */
static char *path_text(const struct ptab *p, uint32_t e)
{
	uint32_t steps[MAX_STEPS + 2], k = 0;
	for (uint32_t x = e; x != UINT32_MAX && k < MAX_STEPS + 2; x = p->e[x].up)
		steps[k++] = x;
	size_t cap = 256, len = 0;
	char *buf = xmalloc(cap);
	buf[0] = 0;
	while (k--) {
		const struct pent *s = &p->e[steps[k]];
		const char *lab = s->label == UINT32_MAX ? NULL : p->str.str[s->label];
		char *piece = len == 0 ? xasprintf("%s", p->str.str[s->cls])
				       : lab ? xasprintf(" -%s-> %s", lab, p->str.str[s->cls])
					     : xasprintf(" -> %s", p->str.str[s->cls]);
		size_t pl = strlen(piece);
		while (len + pl + 1 > cap)
			buf = xrealloc(buf, cap *= 2);
		memcpy(buf + len, piece, pl + 1);
		len += pl;
		free(piece);
	}
	return buf;
}

/* kids: each live path's first child and next sibling, from the up links. */
static void kids(const struct ptab *p, uint32_t *kid, uint32_t *sib)
{
	for (uint32_t e = 0; e < p->n; e++)
		kid[e] = sib[e] = UINT32_MAX;
	for (uint32_t e = p->n; e-- > 0;)
		if (!p->e[e].dead && p->e[e].up != UINT32_MAX) {
			sib[e] = kid[p->e[e].up];
			kid[p->e[e].up] = e;
		}
}

/* merge: path x of dump d only into y (not in d): y takes x's objects, x's children merge or move. */
static void merge(struct ptab *p, uint32_t *kid, uint32_t *sib, uint32_t x, uint32_t y, int d,
		  unsigned level)
{
	p->e[y].objects[d] += p->e[x].objects[d];
	p->e[y].shallow[d] += p->e[x].shallow[d];
	p->e[x].objects[d] = p->e[x].shallow[d] = 0;
	p->e[x].dead = true;
	for (uint32_t c = kid[x], nc; c != UINT32_MAX; c = nc) {
		nc = sib[c];
		uint32_t m = UINT32_MAX;
		for (uint32_t k = kid[y]; k != UINT32_MAX && level < MAX_STEPS; k = sib[k])
			if (p->e[k].cls == p->e[c].cls && p->e[k].label == p->e[c].label && !p->e[k].objects[d]) {
				m = k;
				break;
			}
		if (m != UINT32_MAX) {
			merge(p, kid, sib, c, m, d, level + 1);
		} else {
			p->e[c].up = y;
			sib[c] = kid[y];
			kid[y] = c;
		}
	}
	kid[x] = UINT32_MAX;
}

/*
 * moved: a structure dominated by the GC roots in one dump only (a thread's
 * frame refers to it at the moment of that dump, say) and inside another
 * object in the other dump is the same structure, moved: each path of the
 * GC roots' found in dump d only is merged into the path of its class found
 * in the other dump only (the one of most objects), and its children
 * into that one's children of the same step, so that its growth is not a
 * row of all its bytes and a row of minus all of them.
 */
static void moved(struct ptab *p)
{
	uint32_t *kid = xcalloc((size_t)p->n + 1, sizeof *kid), *sib = xcalloc((size_t)p->n + 1, sizeof *sib);
	uint32_t *next = xcalloc((size_t)p->n + 1, sizeof *next);
	struct u64map first;	/* class string -> the first path of it below the roots, in one dump only */
	u64map_init(&first, 256);
	for (uint32_t e = p->n; e-- > 0;) {
		const struct pent *x = &p->e[e];
		next[e] = UINT32_MAX;
		if (x->up == UINT32_MAX || !x->objects[0] == !x->objects[1])
			continue;
		uint64_t f;
		if (u64map_get(&first, x->cls, &f))
			next[e] = (uint32_t)f;
		u64map_put(&first, x->cls, e);
	}
	kids(p, kid, sib);
	for (uint32_t r = 0; r < p->n; r++) {
		const struct pent *x = &p->e[r];
		if (x->up != UINT32_MAX || x->dead || !x->objects[0] == !x->objects[1])
			continue;
		int d = x->objects[1] > 0;
		uint64_t f;
		uint32_t best = UINT32_MAX;
		if (u64map_get(&first, x->cls, &f))
			for (uint32_t c = (uint32_t)f; c != UINT32_MAX; c = next[c])
				if (!p->e[c].dead && !p->e[c].objects[d] &&
				    (best == UINT32_MAX || p->e[c].objects[!d] > p->e[best].objects[!d]))
					best = c;
		if (best != UINT32_MAX)
			merge(p, kid, sib, r, best, d, 0);
	}
	u64map_free(&first);
	free(kid);
	free(sib);
	free(next);
}

int hdiff_paths(struct dom_tree *t[2], uint32_t top, struct hdiff_result *r)
{
	struct ptab p = {0};
	memset(r, 0, sizeof *r);
	u64map_init(&p.at, 1024);
	int st = HS_OK;
	for (int d = 0; d < 2 && st == HS_OK; d++)
		st = one_tree(t[d], d, &p);
	if (st != HS_OK)
		goto done;
	moved(&p);
	/* what each path retains: its objects and those of the paths under it (children after
	 * their parent in a breadth-first order, summed from the end) */
	uint32_t *kid = xcalloc((size_t)p.n + 1, sizeof *kid), *sib = xcalloc((size_t)p.n + 1, sizeof *sib);
	uint32_t *order = xcalloc((size_t)p.n + 1, sizeof *order), no = 0;
	kids(&p, kid, sib);
	for (uint32_t e = 0; e < p.n; e++)
		if (!p.e[e].dead && p.e[e].up == UINT32_MAX)
			order[no++] = e;
	for (uint32_t i = 0; i < no; i++)
		for (uint32_t c = kid[order[i]]; c != UINT32_MAX; c = sib[c])
			order[no++] = c;
	for (uint32_t i = no; i-- > 0;) {
		struct pent *e = &p.e[order[i]];
		for (int d = 0; d < 2; d++) {
			e->retained[d] += e->shallow[d];
			if (e->up != UINT32_MAX)
				p.e[e->up].retained[d] += e->retained[d];
		}
	}
	free(kid);
	free(sib);
	free(order);
	/* where each chain of growth goes on */
	int64_t *g = xcalloc((size_t)p.n + 1, sizeof *g);
	for (uint32_t e = 0; e < p.n; e++)
		g[e] = delta(p.e[e].retained);
	for (uint32_t e = 0; e < p.n; e++) {
		uint32_t u = p.e[e].up;
		if (u == UINT32_MAX || !g[u] || (g[e] > 0) != (g[u] > 0) || !g[e] || p.e[e].data ||
		    p.e[e].dead)
			continue;
		uint32_t b = p.e[u].next;
		if (b == UINT32_MAX || mag(g[e]) > mag(g[b]) || (mag(g[e]) == mag(g[b]) && e < b))
			p.e[u].next = e;
	}
	for (uint32_t e = 0; e < p.n; e++) {
		uint32_t b = p.e[e].next;
		if (b != UINT32_MAX && (double)mag(g[b]) < CHAIN_SHARE * (double)mag(g[e]))
			p.e[e].next = UINT32_MAX;
	}
	r->candidates = p.n;
	r->rows = xcalloc((size_t)p.n + 1, sizeof *r->rows);
	for (uint32_t e = 0; e < p.n; e++) {
		uint32_t u = p.e[e].up;
		if (!g[e] || p.e[e].dead || (u != UINT32_MAX && p.e[u].next == e))
			continue;	/* no growth, merged, or a link of its parent's chain */
		uint32_t a = e, steps = 0;
		while (p.e[a].next != UINT32_MAX && steps++ < MAX_STEPS + 2)
			a = p.e[a].next;
		struct hdiff_row *w = &r->rows[r->nrows++];
		w->key = path_text(&p, a);
		for (int d = 0; d < 2; d++) {
			w->objects[d] = p.e[a].objects[d];
			w->retained[d] = p.e[a].retained[d];
		}
		w->growth = w->order = g[a];
		w->end = a;
	}
	free(g);
	finish(r, top);
done:
	free(p.e);
	u64map_free(&p.at);
	st_free(&p.str);
	return st;
}

/* ---- --fail-if ---- */

int hdiff_cond_parse(const char *text, struct hdiff_cond *c, struct hs_error *err)
{
	memset(c, 0, sizeof *c);
	const char *colon = strrchr(text, ':');
	const char *forms = "PATTERN:+PCT% (com.acme.*:+20%) or PATTERN:+SIZE (com.acme.*:+50MB)";
	if (!colon || colon == text || colon[1] != '+' || !colon[2]) {
		hs_error_set(err, -1, "--fail-if '%s': want %s", text, forms);
		return HS_ERR;
	}
	const char *lim = colon + 2;
	size_t ll = strlen(lim);
	if (lim[ll - 1] == '%') {
		char *end;
		double v = strtod(lim, &end);
		if (end != lim + ll - 1 || !(v >= 0) || !isfinite(v)) {
			hs_error_set(err, -1, "--fail-if '%s': '%s' is not a percentage; want %s", text,
				     lim, forms);
			return HS_ERR;
		}
		c->pct = true;
		c->limit = v;
	} else {
		uint64_t b = strcmp(lim, "0") ? big_parse_size(lim) : 0;
		if (!b && strcmp(lim, "0")) {
			hs_error_set(err, -1, "--fail-if '%s': '%s' is not a size (512K, 50MB, 1.5G, "
				     "bytes) nor a percentage (20%%); want %s", text, lim, forms);
			return HS_ERR;
		}
		c->limit = (double)b;
	}
	c->text = xstrdup(text);
	c->pattern = xstrdup(text);
	c->pattern[colon - text] = 0;
	return HS_OK;
}

void hdiff_cond_free(struct hdiff_cond *c)
{
	free(c->text);
	free(c->pattern);
	c->text = c->pattern = NULL;
}

int hdiff_conds(struct dom_tree *t[2], struct hdiff_cond *c, uint32_t k, struct hs_error *err)
{
	int st = HS_OK;
	for (uint32_t j = 0; j < k; j++) {
		uint32_t *cls;
		c[j].classes[0] = heap_find_classes(t[0]->h, c[j].pattern, &cls);
		free(cls);
		c[j].classes[1] = heap_find_classes(t[1]->h, c[j].pattern, &cls);
		free(cls);
		if (!c[j].classes[0] && !c[j].classes[1]) {
			char sug[400];
			heap_suggest_class(t[1]->h, c[j].pattern, sug, sizeof sug);
			if (!*sug)
				heap_suggest_class(t[0]->h, c[j].pattern, sug, sizeof sug);
			hs_error_set(err, -1, "--fail-if '%s': no class in either dump is named '%s'%s",
				     c[j].text, c[j].pattern, sug);
			return HS_ERR;
		}
	}
	for (int d = 0; d < 2 && st == HS_OK; d++) {
		const struct heap *h = t[d]->h;
		uint32_t **sets = xcalloc((size_t)k + 1, sizeof *sets);
		uint32_t *n = xcalloc((size_t)k + 1, sizeof *n), *idx = xcalloc((size_t)k + 1, sizeof *idx);
		uint64_t *bytes = xcalloc((size_t)k + 1, sizeof *bytes);
		uint32_t m = 0;
		for (uint32_t j = 0; j < k; j++) {
			uint32_t *cls, nc = heap_find_classes(h, c[j].pattern, &cls), total = 0;
			for (uint32_t q = 0; q < nc; q++)
				total += h->inst_start[cls[q] + 1] - h->inst_start[cls[q]];
			if (total) {
				sets[m] = xmallocarray(total, sizeof **sets);
				for (uint32_t q = 0; q < nc; q++) {
					uint32_t cnt;
					const uint32_t *in = heap_instances(h, cls[q], &cnt);
					memcpy(sets[m] + n[m], in, (size_t)cnt * sizeof *in);
					n[m] += cnt;
				}
				idx[m++] = j;
			}
			free(cls);
		}
		st = dom_retained_sets(t[d], m, (const uint32_t *const *)sets, n, bytes);
		for (uint32_t q = 0; q < m; q++) {
			*(d ? &c[idx[q]].after : &c[idx[q]].before) = bytes[q];
			free(sets[q]);
		}
		free(sets);
		free(n);
		free(idx);
		free(bytes);
	}
	if (st != HS_OK)
		return st;
	for (uint32_t j = 0; j < k; j++) {
		c[j].growth = (int64_t)c[j].after - (int64_t)c[j].before;
		if (c[j].pct)
			c[j].failed = c[j].growth > 0 &&
				      (!c[j].before || (double)c[j].growth * 100.0 > c[j].limit * (double)c[j].before);
		else
			c[j].failed = c[j].growth > 0 && (double)c[j].growth > c[j].limit;
	}
	return HS_OK;
}

void hdiff_free(struct hdiff_result *r)
{
	for (uint32_t k = 0; k < r->nrows; k++)
		free(r->rows[k].key);
	free(r->rows);
	for (uint32_t k = 0; k < r->nconds; k++)
		hdiff_cond_free(&r->conds[k]);
	free(r->conds);
	memset(r, 0, sizeof *r);
}
