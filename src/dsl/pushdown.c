/* pushdown.c - queries a live JVM answers by itself; see pushdown.h. */
#include "pushdown.h"

#include <string.h>

#include "ast.h"
#include "builtins.h"
#include "parse.h"

struct pd {
	struct arena *a;
	const char *var;	/* the lambda's parameter */
};

static struct dsl_pred *new_pred(struct pd *p, enum dsl_pred_op op, int n)
{
	struct dsl_pred *d = arena_alloc(p->a, sizeof *d);
	d->op = op;
	d->n = n;
	d->kids = n ? arena_alloc(p->a, (size_t)n * sizeof *d->kids) : NULL;
	return d;
}

/* field_of: "var.name" gives name; anything else NULL. */
static const char *field_of(const struct pd *p, const struct node *n)
{
	if (n->kind != N_MEMBER || !n->a || n->a->kind != N_IDENT || strcmp(n->a->name, p->var))
		return NULL;
	return n->name;
}

static bool literal(const struct node *n, struct dsl_pred *d)
{
	switch (n->kind) {
	case N_INT: d->lit = DP_LONG; d->l = n->i; return true;
	case N_FLOAT: d->lit = DP_DOUBLE; d->d = n->f; return true;
	case N_STR: d->lit = DP_STRING; d->s = n->s; return true;
	case N_BOOL: d->lit = DP_BOOL; d->l = n->i != 0; return true;
	case N_NULL: d->lit = DP_NULL; return true;
	case N_NEG:
		if (n->a->kind == N_INT) {
			d->lit = DP_LONG;
			d->l = -n->a->i;
			return true;
		}
		if (n->a->kind == N_FLOAT) {
			d->lit = DP_DOUBLE;
			d->d = -n->a->f;
			return true;
		}
		return false;
	default:
		return false;
	}
}

static const enum dsl_pred_cmp flip[] = {DP_EQ, DP_NE, DP_GT, DP_GE, DP_LT, DP_LE};

/* condition: the predicate for n, or NULL when it is not a simple condition. */
static struct dsl_pred *condition(struct pd *p, const struct node *n, int depth)
{
	if (depth > 30)
		return NULL;
	if (n->kind == N_NOT) {
		struct dsl_pred *k = condition(p, n->a, depth + 1);
		if (!k)
			return NULL;
		struct dsl_pred *d = new_pred(p, DP_NOT, 1);
		d->kids[0] = k;
		return d;
	}
	if (n->kind == N_MEMBER && field_of(p, n)) {	/* a boolean field on its own */
		struct dsl_pred *d = new_pred(p, DP_CMP, 0);
		d->field = field_of(p, n);
		d->cmp = DP_EQ;
		d->lit = DP_BOOL;
		d->l = 1;
		return d;
	}
	if (n->kind != N_BIN)
		return NULL;
	if (n->op == OP_AND || n->op == OP_OR) {
		struct dsl_pred *x = condition(p, n->a, depth + 1), *y = condition(p, n->b, depth + 1);
		if (!x || !y)
			return NULL;
		struct dsl_pred *d = new_pred(p, n->op == OP_AND ? DP_AND : DP_OR, 2);
		d->kids[0] = x;
		d->kids[1] = y;
		return d;
	}
	if (n->op < OP_EQ || n->op > OP_GE)
		return NULL;
	struct dsl_pred *d = new_pred(p, DP_CMP, 0);
	enum dsl_pred_cmp cmp = (enum dsl_pred_cmp)(n->op - OP_EQ);
	if ((d->field = field_of(p, n->a)) && literal(n->b, d)) {
		d->cmp = cmp;
	} else if ((d->field = field_of(p, n->b)) && literal(n->a, d)) {
		d->cmp = flip[cmp];
	} else {
		return NULL;
	}
	/* Strings and null compare only for equality in the agent. */
	if ((d->lit == DP_STRING || d->lit == DP_NULL) && d->cmp != DP_EQ && d->cmp != DP_NE)
		return NULL;
	return d;
}

/* conjuncts: the operands of a chain of "and" (left-associated or not). */
static void conjuncts(const struct node *n, const struct node **out, int *k, int cap)
{
	if (n->kind == N_BIN && n->op == OP_AND) {
		conjuncts(n->a, out, k, cap);
		conjuncts(n->b, out, k, cap);
	} else if (*k < cap) {
		out[(*k)++] = n;
	} else {
		*k = cap + 1;	/* too many: not pushed down */
	}
}

/*
 * lambda_filter: [v | v is C and c1 and c2 ...] with exactly one "v is C"
 * among the conjuncts and simple conditions for the rest.
 */
static bool lambda_filter(struct pd *p, const struct node *l, struct dsl_pushdown *out)
{
	if (l->kind != N_LAMBDA || l->nparams != 1 || l->nitems || !l->result)
		return false;
	p->var = l->params[0].name;
	const struct node *c[64];
	int n = 0, rest = 0;
	conjuncts(l->result, c, &n, 64);
	if (n > 64)
		return false;
	struct dsl_pred *all = new_pred(p, DP_AND, n);
	for (int k = 0; k < n; k++) {
		if (c[k]->kind == N_IS && c[k]->a->kind == N_IDENT && !strcmp(c[k]->a->name, p->var)) {
			if (out->cls)
				return false;	/* two class tests */
			if (!strcmp(c[k]->name, "java.lang.Class") || !strcmp(c[k]->name, "Class"))
				return false;	/* the agent's class-filtered iteration meets no class object */
			out->cls = c[k]->name;
			continue;
		}
		if (!(all->kids[rest++] = condition(p, c[k], 0)))
			return false;
	}
	all->n = rest;
	out->pred = rest ? all : new_pred(p, DP_TRUE, 0);
	return out->cls != NULL;
}

static bool is_objects(const struct node *n)
{
	return n->kind == N_IDENT && !strcmp(n->name, "objects");
}

bool dsl_pushdown(const char *text, struct dsl_pushdown *out)
{
	memset(out, 0, sizeof *out);
	struct stmt **st;
	int ns;
	struct hs_error err;
	struct arena parsed = {0};
	if (parse_snippet(text, &parsed, &st, &ns, &err) != PARSE_OK) {
		arena_free(&parsed);
		return false;
	}
	bool yes = dsl_pushdown_stmts(st, ns, out);
	arena_adopt(&out->arena, &parsed);	/* the predicate names the tree's strings */
	arena_free(&parsed);
	if (!yes)
		dsl_pushdown_free(out);
	return yes;
}

bool dsl_pushdown_stmts(struct stmt *const *st, int ns, struct dsl_pushdown *out)
{
	memset(out, 0, sizeof *out);
	if (ns != 1 || st[0]->kind != S_EXPR)
		goto no;
	struct pd p = {&out->arena, NULL};
	const struct node *e = st[0]->e;
	/* objects.filter(L).count / .length / .first (not length's alias size) */
	const struct bi_row *r = bi_lookup(e->name, BI_R_LIST);
	enum bi_id id = r ? r->id : BI_NIDS;
	if (e->kind == N_MEMBER && e->a->kind == N_CALL &&
	    bi_id_of(e->a->name, BI_R_LIST) == BI_LIST_FILTER &&
	    (id == BI_LIST_COUNT || id == BI_LIST_FIRST ||
	     (id == BI_LIST_LENGTH && !(r->flags & BI_ALIAS)))) {
		out->op = id == BI_LIST_FIRST ? PD_FIRST : PD_COUNT;
		e = e->a;
	} else if (e->kind == N_CALL) {
		switch (id) {
		case BI_LIST_FILTER: out->op = PD_FILTER; break;
		case BI_LIST_EXISTS: out->op = PD_EXISTS; break;
		case BI_LIST_COUNT: out->op = PD_COUNT; break;
		case BI_LIST_FIRST: out->op = PD_FIRST; break;
		default: goto no;
		}
	} else {
		goto no;
	}
	if (e->kind != N_CALL || !is_objects(e->a) || e->nitems != 1 ||
	    !lambda_filter(&p, e->items[0], out))
		goto no;
	return true;
no:
	arena_free(&out->arena);
	memset(out, 0, sizeof *out);
	return false;
}

void dsl_pushdown_free(struct dsl_pushdown *pd)
{
	arena_free(&pd->arena);
	memset(pd, 0, sizeof *pd);
}
