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
 * heap, which must outlive it. A session may have no heap (an attached JVM
 * before its first snapshot): then only what needs no heap runs
 * (dsl_needs_heap), `allocations` among it.
 */
#ifndef HS_EVAL_H
#define HS_EVAL_H

#include "../alloc/alloc.h"
#include "../engine/domtree.h"
#include "../engine/dyn.h"
#include "../heap/heap.h"
#include "parse.h"
#include "value.h"

struct dsl;
struct hv;

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
 *
 * allocations, behind the list `allocations`: the attached JVM's
 * allocation recording (src/alloc/alloc.h) as read now, in a new struct
 * alc_rec that the evaluator owns from then on: it copies what it shows
 * (strings into the snippet's arena) and frees the record with alc_free
 * before the call that evaluated `allocations` returns. It is called at
 * most once per snippet (every `allocations` of a snippet is the same
 * list). NULL, with err->msg saying why, when there is no recording to
 * read; a NULL allocations (no JVM behind the session) is an error too.
 */
struct dsl_engine {
	struct dom_tree *(*dom)(void *ctx);
	struct dyn *(*dyn)(void *ctx, bool estimates);
	struct alc_rec *(*allocations)(void *ctx, struct hs_error *err);
	void *ctx;
};

/* dsl_new: a session on h (NULL: no heap yet); eng (copied) may be NULL. */
struct dsl *dsl_new(const struct heap *h, const struct dsl_engine *eng);
/*
 * dsl_new_on: a session that reads the heap through view (heapif.h; NULL:
 * no heap), which it borrows and which must outlive it; eng (copied, may
 * be NULL) serves only `allocations`: the view answers the rest.
 */
struct dsl *dsl_new_on(struct hv *view, const struct dsl_engine *eng);
void dsl_free(struct dsl *d);

/*
 * dsl_heap: the session's heap, NULL for none. dsl_set_heap gives a session
 * made without a heap the heap h, keeping its names: they hold no heap
 * values, so they stay valid (a session that has a heap keeps it: a new
 * heap needs a new session).
 */
const struct heap *dsl_heap(const struct dsl *d);
void dsl_set_heap(struct dsl *d, const struct heap *h);

/*
 * dsl_needs_heap: whether statements (as parse_snippet returns them) use
 * the heap: the lists objects, classes, classloaders and threads, `is`,
 * THIS, REFERRER, ENTITY, ref_kind, `in Unassigned`, set types. One that
 * does not (`allocations.filter(...).sum(...)`, `1 + 2`) can run in a
 * session without a heap; one that does fails there with an error saying
 * it needs a heap. dsl_mentions: whether they use the name name (an
 * identifier, not a member).
 */
bool dsl_needs_heap(struct stmt *const *stmts, int n);
bool dsl_mentions(struct stmt *const *stmts, int n, const char *name);

/*
 * dsl_heapless: whether a front end with no heap yet but a JVM to take
 * one from should run text without one: text parses, needs no heap, and
 * reads `allocations` or continues d, a session already without a heap
 * (whose names would be lost with a new session; d NULL: none yet). So
 * an allocation query takes no snapshot, and `1 + 2` alone still does.
 */
bool dsl_heapless(const struct dsl *d, const char *text);
/* dsl_heapless_stmts: dsl_heapless for statements already parsed (parse_snippet). */
bool dsl_heapless_stmts(const struct dsl *d, struct stmt *const *st, int n);

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
/*
 * dsl_cannot_here: whether the last dsl_run's error is "cannot answer
 * here": the heap it read through (a JVM's, heapif.h) cannot do what the
 * query asked there, and a snapshot's heap could; its message says what.
 */
bool dsl_cannot_here(const struct dsl *d);
/*
 * dsl_run_parsed: dsl_run for statements already parsed (parse_snippet
 * into *parsed, whose blocks become the session's or the output's: parsed
 * is left empty). PARSE_OK or PARSE_ERROR as dsl_run.
 */
enum parse_status dsl_run_parsed(struct dsl *d, struct arena *parsed, struct stmt **stmts, int n,
				 struct dsl_output *out, struct hs_error *err);

/*
 * dsl_set_type_stmt: the definition of set type name from an earlier
 * snippet (the session keeps it), or NULL. dsl_global: the value of the
 * session's name (let, <-), false if there is none. dsl_bind: set the
 * session's name to v, copied into the session (a query run elsewhere,
 * inside a JVM, binds its lets this way).
 */
struct stmt *dsl_set_type_stmt(struct dsl *d, const char *name);
bool dsl_global(struct dsl *d, const char *name, struct value *v);
void dsl_bind(struct dsl *d, const char *name, struct value v);
/* dsl_lambda_plain: v is a lambda that captured no values (its tree is all of it). */
bool dsl_lambda_plain(struct value v);

/* dsl_value_text: a value as text (lists summarised), in arena (a struct arena *). */
const char *dsl_value_text(struct dsl *d, struct value v, void *arena);

/* dsl_names: the session's named values, for completion (NULL-terminated, borrowed). */
const char **dsl_names(struct dsl *d, int *n);

#endif
