/*
 * plan.h - what a query needs, read from its syntax tree alone.
 *
 * 1. Partial evaluation of a set type's membership: its value when only
 *    what the traversal knows at a step is known (docs/dsl.md, "Set types:
 *    semantics"): in step 3 (offers without a referrer) REFERRER is null
 *    and ref_kind is root or none; in step 4 (growth) REFERRER is a member
 *    of the growing instance and ref_kind is not root. The snapshot's
 *    evaluator skips what is false for certain; the agent decides which
 *    heap walks an analysis takes.
 *
 * 2. Whether a snippet can be answered inside an attached JVM (src/agent/
 *    analyze.c), and if not, why: a sentence for :explain and for the note
 *    that says a snapshot is taken instead (docs/agent.md, "Analyses inside
 *    the JVM").
 *
 * Both are shared by the shell and the agent. Nothing here allocates, and
 * nothing evaluates: the answers depend on the tree only.
 */
#ifndef HS_PLAN_H
#define HS_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "ast.h"

enum tri { TRI_FALSE, TRI_TRUE, TRI_UNKNOWN };

enum pe_referrer {
	PE_REF_NULL,	/* REFERRER is null (roots, step 3) */
	PE_REF_MEMBER,	/* REFERRER is a member of ENTITY (step 4) */
	PE_REF_ANY	/* nothing known */
};

#define PE_RK_ANY (-1)		/* ref_kind unknown */
#define PE_RK_NOT_ROOT (-2)	/* ref_kind is a reference's kind, not root nor none */

struct pe_ctx {
	enum pe_referrer referrer;
	int rk;			/* an enum refkind, PE_RK_ANY or PE_RK_NOT_ROOT */
};

/*
 * pe_membership: the value of the membership expression n for an object
 * that is in no instance yet (an offer skips assigned objects before it
 * asks, so `THIS in Unassigned` is true), under c. TRI_FALSE or TRI_TRUE
 * only when evaluation would certainly give that value without a runtime
 * error; TRI_UNKNOWN otherwise. `a and b` is false as soon as a is; an
 * unknown a keeps the whole unknown (a might fail).
 */
enum tri pe_membership(const struct node *n, const struct pe_ctx *c);

/* pe_is_ident: n is the identifier name (THIS, REFERRER, ENTITY, ref_kind, ...). */
bool pe_is_ident(const struct node *n, const char *name);

/*
 * plan_live_reason: why statements cannot run inside a JVM whatever the
 * heap (a member only a heap dump has: retained, dynamic sizes, refs,
 * referrers, a thread's roots, array elements; `allocations`, which heapsh
 * reads itself; a native function, a struct type): a sentence in why,
 * returned; NULL when nothing stands in the way.
 */
const char *plan_live_reason(struct stmt *const *stmts, int n, char *why, size_t cap);

/*
 * What a set type's analysis needs inside a JVM (docs/agent.md): which
 * steps may include objects (partial evaluation), whether on_inclusion
 * gives the same result in any order of inclusion (only `p <- p + e`,
 * `p <- p or e`, `p <- p and e` and `p <- literal`, e reading no property),
 * and whether the membership reads properties. Steps 3 and 4 run in the
 * order of the JVM's heap walk, so they need both.
 */
struct set_plan {
	enum tri grow, s3root, s3none;
	bool later;		/* step 3 or 4 may include objects */
	bool order_free;
	bool membership_reads_props;
	bool roots_filter;	/* roots <- objects.filter(L), L reading no property */
};
void plan_set_type(const struct stmt *set, struct set_plan *p);
/* plan_mentions_prop: n reads a property of set, or ENTITY's members or properties. */
bool plan_mentions_prop(const struct stmt *set, const struct node *n);
/* plan_order_free: on_inclusion fn (a lambda or an expression) does not depend on order. */
bool plan_order_free(const struct stmt *set, const struct node *fn);

#endif
