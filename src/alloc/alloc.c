/*
 * alloc.c - the views of an allocation recording (see alloc.h): freeing the
 * model, class signatures and frames as text, the tables per account, class,
 * site and against the mark, the calling-context tree, and the folded
 * stacks with the frame-name tree they and the flame graph (flame.c) share.
 *
 * Everything groups by sorting or hashing, never by pairwise search:
 * recordings reach about a million keys (each view takes under a second on
 * one). Names are ranked once (equal names share a rank), so the sorts
 * compare integers, and sort small records, the figures kept apart.
 */
#include "alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/u64map.h"

#define NO_FRAME "(no Java frame)"
#define CLASS_END "_[i] "	/* what follows a class in a folded line */
#define FRAME_END ";"		/* what follows a frame in a folded line */

/* ---- the model ---- */

void alc_status_free(struct alc_status *s)
{
	if (!s)
		return;
	free(s->accounts);
	s->accounts = NULL;
	free(s->uncovered);
	s->uncovered = NULL;
}

const char *alc_cost(const struct alc_status *st)
{
	if (!st->exact)
		return ALC_COST_SAMPLED;
	if (!st->bytecode)
		return ALC_COST_JVMTI;
	if (st->depth > 1)
		return ALC_COST_DEPTH;
	return st->no_live ? ALC_COST_NO_LIVE : st->live_sampled ? ALC_COST_EXACT : ALC_COST_LIVE_ALL;
}

static void free_strings(char **v, uint32_t n)
{
	if (!v)
		return;
	for (uint32_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void alc_free(struct alc_rec *r)
{
	if (!r)
		return;
	alc_status_free(&r->st);
	free_strings(r->accounts, r->naccounts);
	free_strings(r->classes, r->nclasses);
	if (r->methods) {
		for (uint32_t i = 0; i < r->nmethods; i++) {
			free(r->methods[i].cls);
			free(r->methods[i].name);
			free(r->methods[i].sig);
			free(r->methods[i].file);
		}
	}
	free(r->methods);
	free(r->nodes);
	free(r->keys);
	for (uint32_t i = 0; r->leaks && i < r->nleaks; i++)
		free(r->leaks[i].path);
	free(r->leaks);
	free(r);
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static char **dup_strings(char *const *v, uint32_t n)
{
	if (!v)
		return NULL;
	char **c = xcalloc((size_t)n + 1, sizeof *c);
	for (uint32_t i = 0; i < n; i++)
		c[i] = dup_or_null(v[i]);
	return c;
}

static void *dup_array(const void *a, size_t n, size_t size)
{
	if (!a || !n)
		return NULL;
	void *c = xmallocarray(n, size);
	memcpy(c, a, n * size);
	return c;
}

struct alc_rec *alc_copy(const struct alc_rec *r)
{
	struct alc_rec *c = xcalloc(1, sizeof *c);
	c->st = r->st;
	c->st.accounts = dup_or_null(r->st.accounts);
	c->st.uncovered = dup_or_null(r->st.uncovered);
	c->accounts = dup_strings(r->accounts, r->naccounts);
	c->naccounts = r->accounts ? r->naccounts : 0;
	c->classes = dup_strings(r->classes, r->nclasses);
	c->nclasses = r->classes ? r->nclasses : 0;
	if (r->methods && r->nmethods) {
		c->methods = xcalloc(r->nmethods, sizeof *c->methods);
		for (uint32_t i = 0; i < r->nmethods; i++) {
			c->methods[i] = r->methods[i];
			c->methods[i].cls = dup_or_null(r->methods[i].cls);
			c->methods[i].name = dup_or_null(r->methods[i].name);
			c->methods[i].sig = dup_or_null(r->methods[i].sig);
			c->methods[i].file = dup_or_null(r->methods[i].file);
		}
		c->nmethods = r->nmethods;
	}
	c->nodes = dup_array(r->nodes, r->nnodes, sizeof *r->nodes);
	c->nnodes = c->nodes ? r->nnodes : 0;
	c->keys = dup_array(r->keys, r->nkeys, sizeof *r->keys);
	c->nkeys = c->keys ? r->nkeys : 0;
	c->leaks = dup_array(r->leaks, r->nleaks, sizeof *r->leaks);
	c->nleaks = c->leaks ? r->nleaks : 0;
	for (uint32_t i = 0; i < c->nleaks; i++)
		c->leaks[i].path = dup_or_null(r->leaks[i].path);
	return c;
}

static int by_class_path(const void *a, const void *b)
{
	const struct alc_leak_row *x = a, *y = b;
	int c = strcmp(x->cls, y->cls);
	if (!c)
		c = strcmp(x->path, y->path);
	return c ? c : x->node < y->node ? -1 : x->node > y->node;
}

static int by_samples(const void *a, const void *b)
{
	const struct alc_leak_row *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return by_class_path(a, b);
}

struct alc_leak_row *alc_leaks(const struct alc_rec *r, uint32_t *n)
{
	struct alc_leak_row *rows = xcalloc((size_t)r->nleaks + 1, sizeof *rows);
	for (uint32_t i = 0; i < r->nleaks; i++) {
		const struct alc_leak *l = &r->leaks[i];
		rows[i] = (struct alc_leak_row){
			l->cls < r->nclasses && r->classes && r->classes[l->cls] ? r->classes[l->cls] : "?",
			l->path ? l->path : "?", l->node, 1, l->skipped,
			l->age != ALC_NONE ? l->age : 0, l->age != ALC_NONE};
	}
	qsort(rows, r->nleaks, sizeof *rows, by_class_path);
	uint32_t m = 0;
	for (uint32_t i = 0; i < r->nleaks; i++) {
		if (m && !by_class_path(&rows[m - 1], &rows[i])) {
			rows[m - 1].samples++;
			rows[m - 1].skipped += rows[i].skipped;
			rows[m - 1].age_sum += rows[i].age_sum;
			rows[m - 1].aged += rows[i].aged;
		} else {
			rows[m++] = rows[i];
		}
	}
	qsort(rows, m, sizeof *rows, by_samples);
	*n = m;
	return rows;
}

static int by_site(const void *a, const void *b)
{
	const struct alc_growth *x = a, *y = b;
	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

static int by_growth(const void *a, const void *b)
{
	const struct alc_growth *x = a, *y = b;
	if (x->growth_bytes != y->growth_bytes)
		return x->growth_bytes < y->growth_bytes ? 1 : -1;
	if (x->live_bytes != y->live_bytes)
		return x->live_bytes < y->live_bytes ? 1 : -1;
	int c = strcmp(x->name, y->name);
	return c ? c : by_site(a, b);
}

struct alc_growth *alc_growth(const struct alc_rec *r, uint32_t *n)
{
	struct alc_growth *g = xcalloc((size_t)r->nkeys + 1, sizeof *g);
	uint32_t m = 0;
	for (uint32_t k = 0; k < r->nkeys; k++) {
		const struct alc_key *key = &r->keys[k];
		if (key->cls >= r->nclasses)
			continue;
		double mo = r->st.has_mark ? key->mark_objs : 0, mb = r->st.has_mark ? key->mark_bytes : 0;
		g[m++] = (struct alc_growth){key->cls, key->node, r->classes[key->cls] ? r->classes[key->cls] : "?",
					     key->live_objs, key->live_bytes, key->live_objs - mo,
					     key->live_bytes - mb};
	}
	qsort(g, m, sizeof *g, by_site);
	uint32_t u = 0;
	for (uint32_t i = 0; i < m; i++) {
		if (u && !by_site(&g[u - 1], &g[i])) {
			g[u - 1].live_objs += g[i].live_objs;
			g[u - 1].live_bytes += g[i].live_bytes;
			g[u - 1].growth_objs += g[i].growth_objs;
			g[u - 1].growth_bytes += g[i].growth_bytes;
		} else {
			g[u++] = g[i];
		}
	}
	m = 0;
	for (uint32_t i = 0; i < u; i++)
		if (g[i].live_objs > 0)
			g[m++] = g[i];
	qsort(g, m, sizeof *g, by_growth);
	*n = m;
	return g;
}

void alc_path_step(char **b, const char *type, const char *field)
{
	size_t cap = 2 * strlen(type) + 16;
	char *name = xmalloc(cap);
	if (!strncmp(type, "class ", 6) || type[0] == '(')
		snprintf(name, cap, "%s", type);
	else
		alc_java_name(type, name, cap);
	bool has_field = field[0] && strcmp(field, "[]");
	char *t = xasprintf("%s%s%s%s%s", *b ? *b : "", *b ? " \xe2\x86\x92 " : "", name,
			    has_field ? "." : "", has_field ? field : "");
	free(name);
	free(*b);
	*b = t;
}

char *alc_path_end(const char *root, const char *steps, const char *cls)
{
	return xasprintf("%s %s \xe2\x86\x92 %s", root, steps ? steps : "", cls);
}

/* ---- names ---- */

static const char *primitive(char c)
{
	switch (c) {
	case 'B': return "byte";
	case 'C': return "char";
	case 'D': return "double";
	case 'F': return "float";
	case 'I': return "int";
	case 'J': return "long";
	case 'S': return "short";
	case 'Z': return "boolean";
	}
	return NULL;
}

/*
 * element: the element type of a JNI signature after its dims '[': into
 * *base and *len (a class name still with '/'); false when malformed (JVMS
 * 4.3.2: a primitive letter, or L, a nonempty name and ';' at the end).
 */
static bool element(const char *s, const char **base, size_t *len)
{
	if (s[0] == 'L') {
		const char *semi = strchr(s, ';');
		if (!semi || semi[1] || semi == s + 1)
			return false;
		*base = s + 1;
		*len = (size_t)(semi - s - 1);
		return true;
	}
	const char *p = primitive(s[0]);
	if (!p || s[1])
		return false;
	*base = p;
	*len = strlen(p);
	return true;
}

void alc_java_name(const char *sig, char *buf, size_t cap)
{
	if (!cap)
		return;
	if (!sig)
		sig = "";
	size_t dims = 0, len, o = 0;
	while (sig[dims] == '[')
		dims++;
	const char *base;
	if (!element(sig + dims, &base, &len)) {
		snprintf(buf, cap, "%s", sig);
		return;
	}
	for (size_t i = 0; i < len && o + 1 < cap; i++)
		buf[o++] = base[i] == '/' ? '.' : base[i];
	for (size_t d = 0; d < dims && o + 2 < cap; d++) {
		buf[o++] = '[';
		buf[o++] = ']';
	}
	buf[o] = '\0';
}

static const char *str(const char *s)
{
	return s ? s : "?";
}

/* method: node's method, NULL when node or its method is out of range. */
static const struct alc_method *method(const struct alc_rec *r, uint32_t node)
{
	if (node >= r->nnodes || r->nodes[node].method >= r->nmethods)
		return NULL;
	return &r->methods[r->nodes[node].method];
}

void alc_frame_text(const struct alc_rec *r, uint32_t node, char *buf, size_t cap)
{
	if (!cap)
		return;
	if (node >= r->nnodes) {
		snprintf(buf, cap, "%s", NO_FRAME);
		return;
	}
	const struct alc_method *m = method(r, node);
	const char *cls = str(m ? m->cls : NULL), *name = str(m ? m->name : NULL);
	int32_t line = r->nodes[node].line;
	if (m && m->file && line >= 0)
		snprintf(buf, cap, "%s.%s(%s:%d)", cls, name, m->file, (int)line);
	else if (m && m->file)
		snprintf(buf, cap, "%s.%s(%s)", cls, name, m->file);
	else if (m && line >= 0)
		snprintf(buf, cap, "%s.%s(line %d)", cls, name, (int)line);	/* JFR: no file names */
	else
		snprintf(buf, cap, "%s.%s(no source)", cls, name);
}

static const char *account_name(const struct alc_rec *r, uint32_t a)
{
	return a < r->naccounts && r->accounts ? str(r->accounts[a]) : "?";
}

static const char *class_name(const struct alc_rec *r, uint32_t c)
{
	return c < r->nclasses && r->classes ? str(r->classes[c]) : "?";
}

static uint32_t key_node(const struct alc_rec *r, const struct alc_key *k)
{
	return k->node < r->nnodes ? k->node : ALC_NONE;
}

static uint32_t parent_of(const struct alc_rec *r, uint32_t node)
{
	uint32_t p = r->nodes[node].parent;
	return p < r->nnodes ? p : ALC_NONE;
}

/*
 * joincmp: strcmp of the strings a + as and b + bs, without making them:
 * the order of folded lines, whose frames end in ';' and classes in "_[i] ".
 */
static int joincmp(const char *a, const char *as, const char *b, const char *bs)
{
	for (;;) {
		if (!*a) {
			a = as;
			as = "";
		}
		if (!*b) {
			b = bs;
			bs = "";
		}
		unsigned char ca = (unsigned char)*a, cb = (unsigned char)*b;
		if (ca != cb || !ca)
			return (ca > cb) - (ca < cb);
		a++;
		b++;
	}
}

struct names {
	char *const *v;		/* may be NULL: every name reads "?" */
	const char *end;	/* compared as if after each name */
};

static const char *name_at(const struct names *ns, uint32_t i)
{
	return ns->v ? str(ns->v[i]) : "?";
}

static int by_name(const void *a, const void *b, void *ctx)
{
	const struct names *ns = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	int c = joincmp(name_at(ns, i), ns->end, name_at(ns, j), ns->end);
	return c ? c : (i > j) - (i < j);
}

/*
 * rank: a new array of each name's rank in the order of name + end, equal
 * names sharing one. v may be NULL.
 */
static uint32_t *rank(char *const *v, uint32_t n, const char *end)
{
	struct names ns = {v, end};
	uint32_t *order = xmallocarray((size_t)n + 1, sizeof *order);
	uint32_t *rk = xmallocarray((size_t)n + 1, sizeof *rk);
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof *order, by_name, &ns);
	uint32_t next = 0;
	for (uint32_t k = 0; k < n; k++) {
		if (k && strcmp(name_at(&ns, order[k]), name_at(&ns, order[k - 1])))
			next++;
		rk[order[k]] = next;
	}
	free(order);
	return rk;
}

static int strcmp0(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int by_method(const void *a, const void *b, void *ctx)
{
	const struct alc_method *m = ctx, *x = &m[*(const uint32_t *)a], *y = &m[*(const uint32_t *)b];
	int c = strcmp0(x->cls, y->cls);
	if (!c)
		c = strcmp0(x->name, y->name);
	if (!c)
		c = strcmp0(x->file, y->file);
	if (!c)
		c = strcmp0(x->sig, y->sig);
	return c;
}

/* method_ranks: ranks by class, name, file and descriptor; one rank for equal methods. */
static uint32_t *method_ranks(const struct alc_rec *r)
{
	uint32_t n = r->methods ? r->nmethods : 0;
	uint32_t *order = xmallocarray((size_t)n + 1, sizeof *order);
	uint32_t *rk = xmallocarray((size_t)r->nmethods + 1, sizeof *rk);
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof *order, by_method, r->methods);
	uint32_t next = 0;
	for (uint32_t k = 0; k < n; k++) {
		if (k && by_method(&order[k], &order[k - 1], r->methods))
			next++;
		rk[order[k]] = next;
	}
	free(order);
	return rk;
}

/* ---- the tabular views ---- */

/* The ranks the views group and order by; out of range reads last. */
struct ranks {
	const struct alc_rec *r;
	uint32_t *acct, *cls, *meth;
};

static void ranks_init(struct ranks *k, const struct alc_rec *r)
{
	k->r = r;
	k->acct = rank(r->accounts, r->naccounts, "");
	k->cls = rank(r->classes, r->nclasses, "");
	k->meth = method_ranks(r);
}

static void ranks_free(struct ranks *k)
{
	free(k->acct);
	free(k->cls);
	free(k->meth);
}

static uint32_t acct_rank(const struct ranks *k, uint32_t a)
{
	return a < k->r->naccounts ? k->acct[a] : ALC_NONE;
}

static uint32_t cls_rank(const struct ranks *k, uint32_t c)
{
	return c < k->r->nclasses ? k->cls[c] : ALC_NONE;
}

/* frame_rank: a frame's method's rank; a bad method before no frame at all, both last. */
static uint32_t frame_rank(const struct ranks *k, uint32_t node)
{
	if (node == ALC_NONE)
		return ALC_NONE;
	uint32_t m = k->r->nodes[node].method;
	return m < k->r->nmethods ? k->meth[m] : ALC_NONE - 1;
}

static int32_t frame_line(const struct alc_rec *r, uint32_t node)
{
	return node == ALC_NONE ? 0 : r->nodes[node].line;
}

enum { BY_ACCOUNT = 1, BY_SITE = 2 };
enum order { ALLOCATED, LIVE, GROWTH };

/* Small, for the sorts' sake: the rows' figures are kept apart. */
struct grp {
	double order;			/* what the view sorts by, largest first */
	uint32_t acct, frame, cls;	/* ranks of what the view groups by, else 0 */
	int32_t line;			/* of the site, else 0 */
	uint32_t key;			/* the key; once merged, the group's row */
};

static int cmp_u32(uint32_t a, uint32_t b)
{
	return (a > b) - (a < b);
}

static bool same_group(const struct grp *x, const struct grp *y)
{
	return x->acct == y->acct && x->frame == y->frame && x->line == y->line && x->cls == y->cls;
}

static int by_group(const void *a, const void *b)
{
	const struct grp *x = a, *y = b;
	int c = cmp_u32(x->acct, y->acct);
	if (!c)
		c = cmp_u32(x->frame, y->frame);
	if (!c)
		c = (x->line > y->line) - (x->line < y->line);
	if (!c)
		c = cmp_u32(x->cls, y->cls);
	return c ? c : cmp_u32(x->key, y->key);
}

/* by_order: largest order first, then account, class, frame, line names. */
static int by_order(const void *a, const void *b)
{
	const struct grp *x = a, *y = b;
	int c = (x->order < y->order) - (x->order > y->order);
	if (c)
		return c;
	c = cmp_u32(x->acct, y->acct);
	if (!c)
		c = cmp_u32(x->cls, y->cls);
	if (!c)
		c = cmp_u32(x->frame, y->frame);
	if (!c)
		c = (x->line > y->line) - (x->line < y->line);
	return c ? c : cmp_u32(x->key, y->key);
}

static void add_key(struct alc_row *row, const struct alc_key *k)
{
	row->objs += k->objs;
	row->bytes += k->bytes;
	row->live_objs += k->live_objs;
	row->live_bytes += k->live_bytes;
	row->elems += k->elems;
	row->mark_objs += k->mark_objs;
	row->mark_bytes += k->mark_bytes;
}

static bool shown(const struct alc_row *row, enum order ord)
{
	if (ord == GROWTH)
		return row->live_objs || row->live_bytes || row->mark_objs || row->mark_bytes;
	return row->objs || row->bytes || row->live_objs || row->live_bytes || row->elems;
}

/* table: the keys grouped by class and what by says, in the view's order. */
static struct alc_row *table(const struct alc_rec *r, int by, enum order ord, uint32_t *n)
{
	struct ranks rk;
	ranks_init(&rk, r);
	uint32_t nk = r->keys ? r->nkeys : 0, m = 0;
	struct grp *g = xmallocarray((size_t)nk + 1, sizeof *g);
	for (uint32_t i = 0; i < nk; i++) {
		const struct alc_key *k = &r->keys[i];
		uint32_t node = key_node(r, k);
		g[i] = (struct grp){
			.acct = by & BY_ACCOUNT ? acct_rank(&rk, k->account) : 0,
			.frame = by & BY_SITE ? frame_rank(&rk, node) : 0,
			.line = by & BY_SITE ? frame_line(r, node) : 0,
			.cls = cls_rank(&rk, k->cls),
			.key = i,
		};
	}
	qsort(g, nk, sizeof *g, by_group);
	struct alc_row *sum = xmallocarray((size_t)nk + 1, sizeof *sum);
	for (uint32_t i = 0, j; i < nk; i = j) {
		struct grp out = g[i];
		const struct alc_key *first = &r->keys[out.key];
		struct alc_row *row = &sum[m];
		*row = (struct alc_row){
			.account = by & BY_ACCOUNT ? account_name(r, first->account) : NULL,
			.cls = class_name(r, first->cls),
			.node = by & BY_SITE ? key_node(r, first) : ALC_NONE,
		};
		for (j = i; j < nk && same_group(&g[j], &out); j++)
			add_key(row, &r->keys[g[j].key]);
		if (!shown(row, ord))
			continue;
		out.order = ord == ALLOCATED ? row->bytes : ord == LIVE ? row->live_bytes
			: row->live_bytes - row->mark_bytes;
		out.key = m;
		g[m++] = out;
	}
	qsort(g, m, sizeof *g, by_order);
	struct alc_row *rows = xmallocarray((size_t)m + 1, sizeof *rows);
	for (uint32_t i = 0; i < m; i++)
		rows[i] = sum[g[i].key];
	free(sum);
	free(g);
	ranks_free(&rk);
	*n = m;
	return rows;
}

struct alc_row *alc_by_account(const struct alc_rec *r, bool by_live, uint32_t *n)
{
	return table(r, BY_ACCOUNT, by_live ? LIVE : ALLOCATED, n);
}

struct alc_row *alc_by_class(const struct alc_rec *r, bool by_live, uint32_t *n)
{
	return table(r, 0, by_live ? LIVE : ALLOCATED, n);
}

struct alc_row *alc_by_site(const struct alc_rec *r, bool by_live, uint32_t *n)
{
	return table(r, BY_SITE, by_live ? LIVE : ALLOCATED, n);
}

struct alc_row *alc_diff(const struct alc_rec *r, uint32_t *n)
{
	return table(r, BY_ACCOUNT | BY_SITE, GROWTH, n);
}

/* ---- the calling-context tree ---- */

struct sums {
	double objs, bytes, live_objs, live_bytes;
};

static void sums_add(struct sums *s, const struct sums *t)
{
	s->objs += t->objs;
	s->bytes += t->bytes;
	s->live_objs += t->live_objs;
	s->live_bytes += t->live_bytes;
}

static bool sums_nonzero(const struct sums *s)
{
	return s->objs || s->bytes || s->live_objs || s->live_bytes;
}

/*
 * A class a node allocated itself (one per node and class name, over
 * accounts); the pseudo root of keys with no Java frame is node nnodes.
 * Sorted small: a key first, then its figures' index in a struct sum.
 */
struct own {
	uint32_t node, cls, key;	/* cls: rank; key: a key, once merged its sum */
	double bytes;
};

struct sum {
	struct sums s;
	double elems;
	uint32_t cls;		/* the class's index (its name) */
};

static int by_node_class(const void *a, const void *b)
{
	const struct own *x = a, *y = b;
	int c = cmp_u32(x->node, y->node);
	if (!c)
		c = cmp_u32(x->cls, y->cls);
	return c ? c : cmp_u32(x->key, y->key);
}

static int by_node_bytes(const void *a, const void *b)
{
	const struct own *x = a, *y = b;
	int c = cmp_u32(x->node, y->node);
	if (!c)
		c = (x->bytes < y->bytes) - (x->bytes > y->bytes);
	return c ? c : cmp_u32(x->cls, y->cls);
}

struct tctx {
	const struct ranks *rk;
	const struct sums *tot;
	uint32_t nnodes;
};

/* by_total: siblings, largest total bytes first, then by frame; the pseudo root last in ties. */
static int by_total(const void *a, const void *b, void *ctx)
{
	const struct tctx *t = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = (t->tot[x].bytes < t->tot[y].bytes) - (t->tot[x].bytes > t->tot[y].bytes);
	if (c)
		return c;
	uint32_t nx = x == t->nnodes ? ALC_NONE : x, ny = y == t->nnodes ? ALC_NONE : y;
	c = cmp_u32(frame_rank(t->rk, nx), frame_rank(t->rk, ny));
	if (!c) {
		int32_t lx = frame_line(t->rk->r, nx), ly = frame_line(t->rk->r, ny);
		c = (lx > ly) - (lx < ly);
	}
	return c ? c : cmp_u32(x, y);
}

/*
 * owns: the classes each node allocated itself, grouped and sorted by node
 * then bytes, into *out (count returned) with their figures in *sums;
 * *start (nnodes + 2 entries) the first of each node's.
 */
static uint32_t owns(const struct alc_rec *r, const struct ranks *rk, struct own **out,
	struct sum **sums, uint32_t **start)
{
	uint32_t nk = r->keys ? r->nkeys : 0, nn = r->nnodes, m = 0;
	struct own *o = xmallocarray((size_t)nk + 1, sizeof *o);
	struct sum *s = xmallocarray((size_t)nk + 1, sizeof *s);
	for (uint32_t i = 0; i < nk; i++) {
		uint32_t node = key_node(r, &r->keys[i]);
		o[i] = (struct own){node == ALC_NONE ? nn : node, cls_rank(rk, r->keys[i].cls), i, 0};
	}
	qsort(o, nk, sizeof *o, by_node_class);
	for (uint32_t i = 0, j; i < nk; i = j) {
		struct own g = o[i];
		struct sum t = {{0, 0, 0, 0}, 0, r->keys[g.key].cls};
		for (j = i; j < nk && o[j].node == g.node && o[j].cls == g.cls; j++) {
			const struct alc_key *k = &r->keys[o[j].key];
			sums_add(&t.s, &(struct sums){k->objs, k->bytes, k->live_objs, k->live_bytes});
			t.elems += k->elems;
		}
		if (!sums_nonzero(&t.s) && !t.elems)
			continue;
		g.key = m;
		g.bytes = t.s.bytes;
		s[m] = t;
		o[m++] = g;
	}
	qsort(o, m, sizeof *o, by_node_bytes);
	uint32_t *st = xcalloc((size_t)nn + 2, sizeof *st);
	for (uint32_t i = 0; i < m; i++)
		st[o[i].node + 1]++;
	for (uint32_t v = 0; v <= nn; v++)
		st[v + 1] += st[v];
	*out = o;
	*sums = s;
	*start = st;
	return m;
}

struct alc_tree_row *alc_tree(const struct alc_rec *r, double min_pct, uint32_t *n)
{
	struct ranks rk;
	ranks_init(&rk, r);
	uint32_t nn = r->nnodes, nk = r->keys ? r->nkeys : 0;
	uint32_t pseudo = nn, roots = nn + 1;	/* node slots: nodes, pseudo root, the roots' parent */
	struct sums *self = xcalloc((size_t)nn + 1, sizeof *self);
	struct sums *tot = xcalloc((size_t)nn + 1, sizeof *tot);
	double all = 0;
	for (uint32_t i = 0; i < nk; i++) {
		const struct alc_key *k = &r->keys[i];
		uint32_t v = key_node(r, k);
		sums_add(&self[v == ALC_NONE ? pseudo : v],
			&(struct sums){k->objs, k->bytes, k->live_objs, k->live_bytes});
		all += k->bytes;
	}

	/* Children of each slot, contiguous (CSR), the pseudo root among the roots. */
	uint32_t *start = xcalloc((size_t)nn + 3, sizeof *start);
	uint32_t *child = xmallocarray((size_t)nn + 1, sizeof *child);
	uint32_t *up = xmallocarray((size_t)nn + 1, sizeof *up);
	for (uint32_t v = 0; v <= nn; v++) {
		uint32_t p = v == pseudo ? ALC_NONE : parent_of(r, v);
		up[v] = p == ALC_NONE ? roots : p;
		start[up[v] + 1]++;
	}
	for (uint32_t s = 0; s <= roots; s++)
		start[s + 1] += start[s];
	uint32_t *fill = xmallocarray((size_t)nn + 2, sizeof *fill);
	memcpy(fill, start, ((size_t)nn + 2) * sizeof *fill);
	for (uint32_t v = 0; v <= nn; v++)
		child[fill[up[v]]++] = v;
	free(fill);

	/* Totals: preorder from the roots (nodes on a cycle are never reached), then back up. */
	uint32_t *pre = xmallocarray((size_t)nn + 1, sizeof *pre), npre = 0;
	uint32_t *stack = xmallocarray((size_t)nn + 2, sizeof *stack), sp = 0;
	for (uint32_t c = start[roots]; c < start[roots + 1]; c++)
		stack[sp++] = child[c];
	while (sp) {
		uint32_t v = stack[--sp];
		pre[npre++] = v;
		tot[v] = self[v];
		for (uint32_t c = start[v]; c < start[v + 1]; c++)
			stack[sp++] = child[c];
	}
	for (uint32_t i = npre; i-- > 0;)
		if (up[pre[i]] != roots)
			sums_add(&tot[up[pre[i]]], &tot[pre[i]]);
	struct tctx tc = {&rk, tot, nn};
	for (uint32_t s = 0; s <= roots; s++)
		qsort_r(child + start[s], start[s + 1] - start[s], sizeof *child, by_total, &tc);

	struct own *own;
	struct sum *osum;
	uint32_t *ostart, nown = owns(r, &rk, &own, &osum, &ostart);
	double thr = min_pct > 0 ? min_pct / 100 * all : 0;
	struct alc_tree_row *rows = xmallocarray((size_t)npre + nown + 1, sizeof *rows);
	int *depth = xmallocarray((size_t)nn + 1, sizeof *depth);
	uint32_t m = 0;
	sp = 0;
	for (uint32_t c = start[roots + 1]; c-- > start[roots];) {
		stack[sp++] = child[c];
		depth[child[c]] = 0;
	}
	while (sp) {
		uint32_t v = stack[--sp];
		if (!sums_nonzero(&tot[v]) || tot[v].bytes < thr)
			continue;
		rows[m++] = (struct alc_tree_row){depth[v], v == pseudo ? ALC_NONE : v, NULL,
			self[v].objs, self[v].bytes, tot[v].objs, tot[v].bytes,
			tot[v].live_objs, tot[v].live_bytes, 0};
		for (uint32_t i = ostart[v]; i < ostart[v + 1]; i++) {
			const struct sum *o = &osum[own[i].key];
			rows[m++] = (struct alc_tree_row){depth[v] + 1, ALC_NONE,
				class_name(r, o->cls), o->s.objs, o->s.bytes,
				o->s.objs, o->s.bytes, o->s.live_objs, o->s.live_bytes, o->elems};
		}
		for (uint32_t c = start[v + 1]; c-- > start[v];) {
			stack[sp++] = child[c];
			depth[child[c]] = depth[v] + 1;
		}
	}
	free(depth);
	free(own);
	free(osum);
	free(ostart);
	free(pre);
	free(stack);
	free(up);
	free(child);
	free(start);
	free(self);
	free(tot);
	ranks_free(&rk);
	*n = m;
	return rows;
}

/* ---- folded stacks ---- */

/* clean: what would break a folded line (';', line breaks, control characters) as '_'. */
static char *clean(char *s)
{
	for (char *p = s; *p; p++)
		if (*p == ';' || (unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '_';
	return s;
}

/* fold_text: a frame as a folded line shows it, "com.acme.Foo.parse:42"; a new string. */
static char *fold_text(const struct alc_rec *r, uint32_t node)
{
	const struct alc_method *m = method(r, node);
	const char *cls = str(m ? m->cls : NULL), *name = str(m ? m->name : NULL);
	int32_t line = r->nodes[node].line;
	if (line >= 0)
		return clean(xasprintf("%s.%s:%d", cls, name, (int)line));
	return clean(xasprintf("%s.%s", cls, name));
}

/* An element of the folded tree before it is laid out: a frame or a leaf (class). */
struct item {
	uint32_t parent;	/* the canonical frame below; their count for a root */
	uint32_t rank;		/* of the name, among frames or among classes */
	uint32_t id;		/* canonical frame, or leaf */
	bool leaf;
	const char *name;
};

static int by_sibling(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int c = cmp_u32(x->parent, y->parent);
	if (c)
		return c;
	if (x->leaf == y->leaf) {
		c = cmp_u32(x->rank, y->rank);
		return c ? c : cmp_u32(x->id, y->id);
	}
	return joincmp(x->name, x->leaf ? CLASS_END : FRAME_END,
		y->name, y->leaf ? CLASS_END : FRAME_END);
}

struct leaf {
	uint32_t frame, cls, ix;	/* canonical frame, class rank, class index */
	uint32_t key;			/* a key; once merged, the leaf's figures in lsum */
};

static int by_frame_class(const void *a, const void *b)
{
	const struct leaf *x = a, *y = b;
	int c = cmp_u32(x->frame, y->frame);
	if (!c)
		c = cmp_u32(x->cls, y->cls);
	if (!c)
		c = cmp_u32(x->ix, y->ix);
	return c ? c : cmp_u32(x->key, y->key);
}

/* The frames of one name under one frame, merged: the folded tree's inner nodes. */
struct canon {
	struct u64map map;	/* (parent + 1) << 32 | (name rank + 1) -> frame */
	uint32_t *parent, *rank, n, cap;
};

static uint32_t canon_get(struct canon *c, uint32_t parent, uint32_t rk)
{
	uint64_t key = ((uint64_t)(parent == ALC_NONE ? 0 : parent + 1) << 32) | ((uint64_t)rk + 1);
	uint64_t id;
	if (u64map_get(&c->map, key, &id))
		return (uint32_t)id;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		c->parent = xreallocarray(c->parent, c->cap, sizeof *c->parent);
		c->rank = xreallocarray(c->rank, c->cap, sizeof *c->rank);
	}
	c->parent[c->n] = parent;
	c->rank[c->n] = rk;
	u64map_put(&c->map, key, c->n);
	return c->n++;
}

#define UNSET ALC_NONE
#define VISITING (ALC_NONE - 1)

struct alc_fold *alc_fold(const struct alc_rec *r)
{
	uint32_t nn = r->nnodes, nk = r->keys ? r->nkeys : 0;
	uint32_t ncls = r->classes ? r->nclasses : 0;
	struct alc_fold *f = xcalloc(1, sizeof *f);

	/* Names: one per distinct (method, line), then the pseudo root's, then the classes'. */
	struct u64map seen;
	u64map_init(&seen, nn);
	uint32_t *text = xmallocarray((size_t)nn + 1, sizeof *text), ntext = 0;
	char **names = xmallocarray((size_t)nn + ncls + 2, sizeof *names);
	for (uint32_t v = 0; v < nn; v++) {
		uint64_t m = r->nodes[v].method < r->nmethods ? r->nodes[v].method : r->nmethods;
		uint64_t key = (m + 1) << 32 | (uint32_t)r->nodes[v].line, id;
		if (!u64map_get(&seen, key, &id)) {
			id = ntext;
			names[ntext++] = fold_text(r, v);
			u64map_put(&seen, key, id);
		}
		text[v] = (uint32_t)id;
	}
	u64map_free(&seen);
	uint32_t no_frame = ntext;
	names[ntext++] = xstrdup(NO_FRAME);
	uint32_t *frank = rank(names, ntext, FRAME_END);
	for (uint32_t c = 0; c < ncls; c++)
		names[ntext + c] = clean(xstrdup(str(r->classes[c])));
	names[ntext + ncls] = xstrdup("?");	/* a class out of range */
	uint32_t *crank = rank(names + ntext, ncls + 1, CLASS_END);
	f->names = names;
	f->nnames = ntext + ncls + 1;

	/* Canonical frames of the keys' stacks, a node's from its parent's (cycles cut). */
	struct canon cn = {0};
	u64map_init(&cn.map, 64);
	uint32_t *canon = xmallocarray((size_t)nn + 1, sizeof *canon);
	uint32_t *stack = xmallocarray((size_t)nn + 1, sizeof *stack);
	for (uint32_t v = 0; v < nn; v++)
		canon[v] = UNSET;
	struct leaf *lv = xmallocarray((size_t)nk + 1, sizeof *lv);
	struct sums *lsum = xmallocarray((size_t)nk + 1, sizeof *lsum);
	uint32_t nl = 0;
	for (uint32_t i = 0; i < nk; i++) {
		const struct alc_key *k = &r->keys[i];
		struct sums s = {k->objs, k->bytes, k->live_objs, k->live_bytes};
		if (!sums_nonzero(&s))
			continue;
		uint32_t v = key_node(r, k), sp = 0, pc;
		if (v == ALC_NONE) {
			pc = canon_get(&cn, ALC_NONE, frank[no_frame]);
		} else {
			uint32_t u = v;
			while (u != ALC_NONE && canon[u] == UNSET) {
				canon[u] = VISITING;
				stack[sp++] = u;
				u = parent_of(r, u);
			}
			pc = u == ALC_NONE || canon[u] == VISITING ? ALC_NONE : canon[u];
			while (sp) {
				u = stack[--sp];
				pc = canon[u] = canon_get(&cn, pc, frank[text[u]]);
			}
			pc = canon[v];
		}
		uint32_t c = k->cls < ncls ? k->cls : ncls;
		lv[nl++] = (struct leaf){pc, crank[c], c, i};
	}
	free(stack);
	free(canon);
	u64map_free(&cn.map);

	/* Leaves: one per canonical frame and class name. */
	qsort(lv, nl, sizeof *lv, by_frame_class);
	uint32_t nleaf = 0;
	for (uint32_t i = 0, j; i < nl; i = j) {
		struct leaf g = lv[i];
		struct sums t = {0, 0, 0, 0};
		for (j = i; j < nl && lv[j].frame == g.frame && lv[j].cls == g.cls; j++) {
			const struct alc_key *k = &r->keys[lv[j].key];
			sums_add(&t, &(struct sums){k->objs, k->bytes, k->live_objs, k->live_bytes});
		}
		g.key = nleaf;
		lsum[nleaf] = t;
		lv[nleaf++] = g;
	}

	/* A name per canonical frame: the first text of its rank. */
	const char **by_rank = xcalloc((size_t)ntext + 1, sizeof *by_rank);
	for (uint32_t t = ntext; t-- > 0;)
		by_rank[frank[t]] = names[t];
	uint32_t nit = cn.n + nleaf;
	struct item *it = xmallocarray((size_t)nit + 1, sizeof *it);
	for (uint32_t c = 0; c < cn.n; c++)
		it[c] = (struct item){cn.parent[c] == ALC_NONE ? cn.n : cn.parent[c], cn.rank[c], c,
			false, by_rank[cn.rank[c]]};
	for (uint32_t l = 0; l < nleaf; l++)
		it[cn.n + l] = (struct item){lv[l].frame, lv[l].cls, l, true, names[ntext + lv[l].ix]};
	qsort(it, nit, sizeof *it, by_sibling);
	uint32_t *first = xcalloc((size_t)cn.n + 2, sizeof *first);
	for (uint32_t i = 0; i < nit; i++)
		first[it[i].parent + 1]++;
	for (uint32_t c = 0; c <= cn.n; c++)
		first[c + 1] += first[c];

	/* Preorder, then each frame's figures and subtree end from the back. */
	struct alc_fold_frame *fr = xmallocarray((size_t)nit + 1, sizeof *fr);
	uint32_t *up = xmallocarray((size_t)nit + 1, sizeof *up);
	struct todo { uint32_t item, depth, up; } *todo = xmallocarray((size_t)nit + 1, sizeof *todo);
	uint32_t sp = 0, n = 0;
	for (uint32_t i = first[cn.n + 1]; i-- > first[cn.n];)
		todo[sp++] = (struct todo){i, 0, ALC_NONE};
	while (sp) {
		struct todo t = todo[--sp];
		const struct item *x = &it[t.item];
		const struct sums *s = x->leaf ? &lsum[lv[x->id].key] : &(struct sums){0, 0, 0, 0};
		up[n] = t.up;
		fr[n] = (struct alc_fold_frame){x->name, t.depth, n + 1, x->leaf,
			s->objs, s->bytes, s->live_objs, s->live_bytes};
		if (t.depth > f->max_depth)
			f->max_depth = t.depth;
		if (!x->leaf)
			for (uint32_t i = first[x->id + 1]; i-- > first[x->id];)
				todo[sp++] = (struct todo){i, t.depth + 1, n};
		n++;
	}
	for (uint32_t i = n; i-- > 0;) {
		if (up[i] == ALC_NONE)
			continue;
		struct alc_fold_frame *p = &fr[up[i]];
		p->objs += fr[i].objs;
		p->bytes += fr[i].bytes;
		p->live_objs += fr[i].live_objs;
		p->live_bytes += fr[i].live_bytes;
		if (fr[i].end > p->end)
			p->end = fr[i].end;
	}
	f->frames = fr;
	f->n = n;
	free(todo);
	free(up);
	free(first);
	free(it);
	free(by_rank);
	free(lv);
	free(lsum);
	free(cn.parent);
	free(cn.rank);
	free(crank);
	free(frank);
	free(text);
	return f;
}

void alc_fold_free(struct alc_fold *f)
{
	if (!f)
		return;
	free_strings(f->names, f->nnames);
	free(f->frames);
	free(f);
}

int alc_collapsed(const struct alc_rec *r, FILE *f, bool objects, bool live)
{
	struct alc_fold *fd = alc_fold(r);
	const char **path = xmallocarray((size_t)fd->max_depth + 1, sizeof *path);
	for (uint32_t i = 0; i < fd->n; i++) {
		const struct alc_fold_frame *x = &fd->frames[i];
		path[x->depth] = x->name;
		if (!x->is_class)
			continue;
		double v = objects ? (live ? x->live_objs : x->objs) : (live ? x->live_bytes : x->bytes);
		long long q = llround(v);
		if (q <= 0)
			continue;
		for (uint32_t d = 0; d < x->depth; d++) {
			fputs(path[d], f);
			fputc(';', f);
		}
		fprintf(f, "%s_[i] %lld\n", x->name, q);
	}
	free(path);
	alc_fold_free(fd);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}
