/*
 * pushdown.h - recognising queries a live JVM can answer without a heap
 * snapshot (docs/agent.md, "Push-down"): a filter over the instances of
 * one class whose condition only compares the instance's own primitive or
 * String fields with literals, joined by and / or / not:
 *
 *   objects.filter([it | it is Order and it.status = 7])
 *   objects.exists([o | o is Order and (o.status = 7 or not o.paid)])
 *   objects.count([it | it is com.shop.Order and it.customer = "ACME"])
 *   objects.filter(...).count    objects.filter(...).first    .first(L)
 *
 * The shell sends such a condition to the agent, which evaluates it inside
 * the VM. Anything else is not recognised and runs on a snapshot.
 *
 * Ownership: dsl_pushdown fills a caller-owned struct whose memory
 * dsl_pushdown_free releases.
 */
#ifndef HS_PUSHDOWN_H
#define HS_PUSHDOWN_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"

struct stmt;

enum dsl_pred_op { DP_TRUE, DP_AND, DP_OR, DP_NOT, DP_CMP };
enum dsl_pred_cmp { DP_EQ, DP_NE, DP_LT, DP_LE, DP_GT, DP_GE };
enum dsl_pred_lit { DP_NULL, DP_LONG, DP_DOUBLE, DP_STRING, DP_BOOL };

struct dsl_pred {
	enum dsl_pred_op op;
	int n;
	struct dsl_pred **kids;
	const char *field;
	enum dsl_pred_cmp cmp;
	enum dsl_pred_lit lit;
	int64_t l;
	double d;
	const char *s;
};

enum dsl_pushdown_op { PD_FILTER, PD_EXISTS, PD_COUNT, PD_FIRST };

struct dsl_pushdown {
	enum dsl_pushdown_op op;
	const char *cls;	/* the class name after "is" */
	struct dsl_pred *pred;	/* the rest of the condition */
	struct arena arena;
};

/* dsl_pushdown: true when text is one query of the shapes above. */
bool dsl_pushdown(const char *text, struct dsl_pushdown *out);
/*
 * dsl_pushdown_stmts: the same for statements already parsed
 * (parse_snippet), whose tree must outlive *out (the predicate's field
 * names and strings are the tree's).
 */
bool dsl_pushdown_stmts(struct stmt *const *st, int ns, struct dsl_pushdown *out);
void dsl_pushdown_free(struct dsl_pushdown *pd);

#endif
