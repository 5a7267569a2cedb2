/*
 * plan.c - partial evaluation of memberships, and what a snippet needs
 * (plan.h).
 */
#include "plan.h"

#include <stdio.h>
#include <string.h>

#include "builtins.h"
#include "value.h"

bool pe_is_ident(const struct node *n, const char *name)
{
	return n && n->kind == N_IDENT && n->name && !strcmp(n->name, name);
}

/* refkind_of: the ref_kind a literal identifier names (root, field, ...), or -1. */
static int refkind_of(const struct node *n)
{
	if (!n || n->kind != N_IDENT || !n->name)
		return -1;
	return bi_refkind_of(n->name);
}

/* rk_equals: ref_kind = literal k under c. */
static enum tri rk_equals(int known, int k)
{
	if (known == PE_RK_ANY)
		return TRI_UNKNOWN;
	if (known == PE_RK_NOT_ROOT)
		return k == RK_ROOT || k == RK_NONE ? TRI_FALSE : TRI_UNKNOWN;
	return known == k ? TRI_TRUE : TRI_FALSE;
}

static enum tri tri_not(enum tri t)
{
	return t == TRI_UNKNOWN ? t : t == TRI_TRUE ? TRI_FALSE : TRI_TRUE;
}

static enum tri compare(const struct node *n, const struct pe_ctx *c)
{
	const struct node *a = n->a, *b = n->b;
	enum tri eq = TRI_UNKNOWN;
	/* ref_kind = root, root = ref_kind */
	if (pe_is_ident(b, "ref_kind")) {
		const struct node *t = a;
		a = b;
		b = t;
	}
	if (pe_is_ident(a, "ref_kind") && refkind_of(b) >= 0)
		eq = rk_equals(c->rk, refkind_of(b));
	/* REFERRER = null */
	if (b && b->kind == N_NULL && pe_is_ident(a, "REFERRER"))
		eq = c->referrer == PE_REF_NULL ? TRI_TRUE : c->referrer == PE_REF_MEMBER
				? TRI_FALSE : TRI_UNKNOWN;
	if (a && a->kind == N_NULL && pe_is_ident(b, "REFERRER"))
		eq = c->referrer == PE_REF_NULL ? TRI_TRUE : c->referrer == PE_REF_MEMBER
				? TRI_FALSE : TRI_UNKNOWN;
	return n->op == OP_EQ ? eq : tri_not(eq);
}

enum tri pe_membership(const struct node *n, const struct pe_ctx *c)
{
	if (!n)
		return TRI_UNKNOWN;
	switch (n->kind) {
	case N_BOOL:
		return n->i ? TRI_TRUE : TRI_FALSE;
	case N_NOT:
		return tri_not(pe_membership(n->a, c));
	case N_BIN:
		if (n->op == OP_AND) {
			enum tri a = pe_membership(n->a, c);
			if (a != TRI_TRUE)
				return a;
			return pe_membership(n->b, c);
		}
		if (n->op == OP_OR) {
			enum tri a = pe_membership(n->a, c);
			if (a != TRI_FALSE)
				return a;
			return pe_membership(n->b, c);
		}
		if (n->op == OP_EQ || n->op == OP_NE)
			return compare(n, c);
		return TRI_UNKNOWN;
	case N_IN_UNASSIGNED:
		/* an offer skips objects in an instance before it asks */
		if (pe_is_ident(n->a, "THIS"))
			return TRI_TRUE;
		if (pe_is_ident(n->a, "REFERRER"))
			return c->referrer == PE_REF_ANY ? TRI_UNKNOWN : TRI_FALSE;
		return TRI_UNKNOWN;
	case N_IN:
		if (!pe_is_ident(n->b, "ENTITY"))
			return TRI_UNKNOWN;
		if (pe_is_ident(n->a, "THIS"))
			return TRI_FALSE;
		if (pe_is_ident(n->a, "REFERRER"))
			return c->referrer == PE_REF_NULL ? TRI_FALSE : c->referrer == PE_REF_MEMBER
					? TRI_TRUE : TRI_UNKNOWN;
		return TRI_UNKNOWN;
	case N_IS:
		/* null is C is false */
		if (pe_is_ident(n->a, "REFERRER") && c->referrer == PE_REF_NULL)
			return TRI_FALSE;
		return TRI_UNKNOWN;
	default:
		return TRI_UNKNOWN;
	}
}

/* ---- what can run inside a JVM ---- */

/*
 * node_reason: where the table of built-ins (builtins.h) says a member or a
 * name of n's tree can run. The receiver's kind is not known here: a member
 * that some receiver has only on a dump counts (a Java field of that name
 * shadows it at run time, but the tree cannot tell).
 */
static const char *node_reason(const struct node *n, int depth, char *why, size_t cap)
{
	if (!n || depth > 400)
		return NULL;
	if ((n->kind == N_MEMBER || n->kind == N_CALL) && bi_member_where(n->name) == BI_DUMP) {
		snprintf(why, cap, "it reads '%s', which needs the whole object graph (a heap dump)",
			 n->name);
		return why;
	}
	const struct bi_row *g = n->kind == N_IDENT ? bi_lookup(n->name, BI_R_GLOBAL) : NULL;
	if (g && g->where == BI_HEAPSH) {	/* allocations */
		snprintf(why, cap, "it reads the allocation recording, which heapsh reads itself");
		return why;
	}
	if (n->kind == N_EXTERN_CALL) {
		snprintf(why, cap, "it calls the native function %s, which runs in heapsh",
			 n->name ? n->name : "?");
		return why;
	}
	if (n->kind == N_STRUCT) {
		snprintf(why, cap, "it makes a struct %s, a type declared in heapsh",
			 n->name ? n->name : "");
		return why;
	}
	const char *r;
	if ((r = node_reason(n->a, depth + 1, why, cap)) || (r = node_reason(n->b, depth + 1, why, cap)) ||
	    (r = node_reason(n->result, depth + 1, why, cap)))
		return r;
	for (int k = 0; k < n->nitems; k++)
		if ((r = node_reason(n->items[k], depth + 1, why, cap)))
			return r;
	return NULL;
}

const char *plan_live_reason(struct stmt *const *stmts, int n, char *why, size_t cap)
{
	for (int k = 0; k < n; k++) {
		const struct stmt *s = stmts[k];
		const char *r = NULL;
		switch (s->kind) {
		case S_TYPE:
			snprintf(why, cap, "it declares the type %s, which lives in heapsh", s->name);
			return why;
		case S_EXTERN:
			snprintf(why, cap, "it declares the native function %s, which runs in heapsh",
				 s->name);
			return why;
		case S_SET_TYPE:
			for (int j = 0; j < s->nprops && !r; j++)
				r = node_reason(s->props[j].value, 0, why, cap);
			break;
		default:
			r = node_reason(s->e, 0, why, cap);
			break;
		}
		if (r)
			return r;
	}
	return NULL;
}

bool plan_mentions_prop(const struct stmt *set, const struct node *n)
{
	if (!n)
		return false;
	if (n->kind == N_IDENT && n->name)
		for (int k = 0; k < set->nprops; k++)
			if (set->props[k].kind == P_USER && set->props[k].decl.name &&
			    !strcmp(set->props[k].decl.name, n->name))
				return true;
	if (n->kind == N_MEMBER && pe_is_ident(n->a, "ENTITY") &&
	    bi_id_of(n->name, BI_R_ENTITY) != BI_ENTITY_NAME)
		return true;
	if (plan_mentions_prop(set, n->a) || plan_mentions_prop(set, n->b) ||
	    plan_mentions_prop(set, n->result))
		return true;
	for (int k = 0; k < n->nitems; k++)
		if (plan_mentions_prop(set, n->items[k]))
			return true;
	return false;
}

static bool literal(const struct node *v)
{
	return v->kind == N_INT || v->kind == N_FLOAT || v->kind == N_STR || v->kind == N_BOOL ||
	       v->kind == N_NULL;
}

bool plan_order_free(const struct stmt *set, const struct node *fn)
{
	if (!fn)
		return true;
	if (fn->kind != N_LAMBDA)
		return !plan_mentions_prop(set, fn);
	for (int k = 0; k < fn->nitems; k++) {
		const struct node *s = fn->items[k];
		if (s->kind != N_ASSIGN) {
			if (plan_mentions_prop(set, s))
				return false;
			continue;
		}
		const struct node *v = s->a;
		if (literal(v))
			continue;
		if (v->kind == N_BIN && (v->op == OP_ADD || v->op == OP_OR || v->op == OP_AND) &&
		    pe_is_ident(v->a, s->name) && !plan_mentions_prop(set, v->b))
			continue;
		return false;
	}
	return !fn->result || !plan_mentions_prop(set, fn->result);
}

void plan_set_type(const struct stmt *set, struct set_plan *p)
{
	memset(p, 0, sizeof *p);
	const struct node *roots = NULL, *membership = NULL, *on_inclusion = NULL;
	for (int k = 0; k < set->nprops; k++) {
		const struct property *pr = &set->props[k];
		if (pr->kind == P_ROOTS)
			roots = pr->value;
		else if (pr->kind == P_MEMBERSHIP)
			membership = pr->value;
		else if (pr->kind == P_ON_INCLUSION)
			on_inclusion = pr->value;
	}
	p->grow = p->s3root = p->s3none = TRI_FALSE;
	if (membership) {
		struct pe_ctx pg = {PE_REF_MEMBER, PE_RK_NOT_ROOT};
		struct pe_ctx pr = {PE_REF_NULL, RK_ROOT}, pn = {PE_REF_NULL, RK_NONE};
		p->grow = pe_membership(membership, &pg);
		p->s3root = pe_membership(membership, &pr);
		p->s3none = pe_membership(membership, &pn);
	}
	p->later = p->grow != TRI_FALSE || p->s3root != TRI_FALSE || p->s3none != TRI_FALSE;
	p->order_free = plan_order_free(set, on_inclusion);
	p->membership_reads_props = plan_mentions_prop(set, membership);
	p->roots_filter = roots && roots->kind == N_CALL &&
			  bi_id_of(roots->name, BI_R_LIST) == BI_LIST_FILTER && roots->nitems == 1 &&
			  pe_is_ident(roots->a, "objects") && !plan_mentions_prop(set, roots);
}
