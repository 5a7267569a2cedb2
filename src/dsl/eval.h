/*
 * eval.h - evaluating the query language against a heap (docs/dsl.md).
 *
 * A session (struct dsl) keeps named values, declared types and set types
 * between snippets. dsl_run parses and runs one snippet; what it produced
 * (the values of its expressions and the tables of its analyses) is handed
 * back in a struct dsl_output that stays valid until dsl_output_done.
 *
 * Semantics of set types: the paper's three routines (seed 000,
 * "include_in_subgraph", "calculate_value_for_subgraph" and the
 * initialization listing), with the traversal order defined in docs/dsl.md.
 *
 * Ownership: dsl_new returns a session freed with dsl_free; it borrows the
 * heap, which must outlive it.
 */
#ifndef HS_EVAL_H
#define HS_EVAL_H

#include "../engine/domtree.h"
#include "../engine/dyn.h"
#include "../heap/heap.h"
#include "parse.h"
#include "value.h"

struct dsl;

struct dsl_output {
	int n;
	struct value *vals;	/* one per expression or analysis, in order */
	const char **labels;	/* what each value is ("instances_for all", an expression's text) */
	void *priv;		/* the snippet's arena */
};

/*
 * The engine behind `retained`, `dynamic_size` and `dynamic_size_est`:
 * dom returns the dominator tree and dyn the dynamic-size engine (with
 * every estimate when estimates is true), each computed on first use.
 * Either may be NULL or return NULL, which is a runtime error.
 */
struct dsl_engine {
	struct dom_tree *(*dom)(void *ctx);
	struct dyn *(*dyn)(void *ctx, bool estimates);
	void *ctx;
};

/* dsl_new: a session on h; eng (copied) may be NULL. */
struct dsl *dsl_new(const struct heap *h, const struct dsl_engine *eng);
void dsl_free(struct dsl *d);

/*
 * dsl_run: parse text and, if it is complete, run it. PARSE_OK: *out holds
 * the results. PARSE_INCOMPLETE: nothing ran; read more text. PARSE_ERROR:
 * a parse or runtime error, with err->line/col/msg; results of statements
 * before the failing one are in *out (and named values they set are kept).
 * Ctrl-C (hs_interrupted) stops evaluation with an error "interrupted".
 */
enum parse_status dsl_run(struct dsl *d, const char *text, struct dsl_output *out,
			  struct hs_error *err);
void dsl_output_done(struct dsl *d, struct dsl_output *out);

/* dsl_value_text: a value as text (lists summarised), in the output's arena. */
const char *dsl_value_text(struct dsl *d, struct value v, void *arena);

/* dsl_names: the session's named values, for completion (NULL-terminated, borrowed). */
const char **dsl_names(struct dsl *d, int *n);

#endif
