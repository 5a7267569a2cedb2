/*
 * plan.c - partial evaluation of memberships, and what a snippet needs
 * (plan.h).
 */
#include "plan.h"

#include <string.h>

#include "value.h"

bool pe_is_ident(const struct node *n, const char *name)
{
	return n && n->kind == N_IDENT && n->name && !strcmp(n->name, name);
}

/* refkind_of: the ref_kind a literal identifier names (root, field, ...), or -1. */
static int refkind_of(const struct node *n)
{
	static const char *const names[] = {"root", "field", "array", "static", "super",
					    "loader", "other", "none"};
	if (!n || n->kind != N_IDENT || !n->name)
		return -1;
	for (int k = 0; k < (int)(sizeof names / sizeof *names); k++)
		if (!strcmp(n->name, names[k]))
			return k;
	return -1;
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
