/*
 * prog.h - a query program as bytes: what the shell sends heapsh's agent to
 * run inside the JVM (docs/protocol.md, "ANALYZE"), and the agent's decoder.
 *
 * A program is the statements of one snippet (expressions, lets, set type
 * definitions, instances_for) together with the definitions they use from
 * earlier snippets, as syntax trees (ast.h) flattened: a string table,
 * then the nodes, each after its children, then the statements.
 *
 *   u32 magic "HSQP", u16 version (1), u16 flags (0)
 *   u16 nstrings, nstrings x (u16 length, bytes: UTF-8, no NUL)
 *   u16 nnodes, nnodes x node
 *   u16 nstmts, nstmts x statement
 *
 * A node: u8 kind (enum node_kind), u8 op (enum bin_op, for N_BIN),
 * u8 flags (bit 0: from an earlier snippet), u16 line, u16 col,
 * u16 name, u16 a, u16 b, u16 result, then for N_INT an i64, N_FLOAT an
 * f64 (IEEE bits), N_STR a u16 string, N_BOOL a u8; then u16 nitems and
 * the items; for N_LAMBDA a u8 nparams and nparams x (u16 name, u16 type).
 * Strings and nodes are referred to by index + 1, 0 meaning none; a node
 * may refer only to nodes before it, so trees have no cycles.
 *
 * A statement: u8 kind (enum stmt_kind: S_EXPR, S_LET, S_SET_TYPE or
 * S_INSTANCES), u16 line, u16 col, u16 name, u16 expression, u16 type,
 * and for S_SET_TYPE u8 nprops, nprops x (u8 kind, u16 name, u16 type,
 * u16 value, u16 line, u16 col).
 *
 * All integers are big-endian. The decoder checks every count, index,
 * kind and length against the bytes it has and the limits below, and the
 * depth of every tree, so no input makes it read out of bounds, loop,
 * allocate more than its allocator allows or nest deeper than
 * PROG_MAX_DEPTH. Externs, struct types and struct literals are not part
 * of the form: they run in heapsh, never in the JVM.
 */
#ifndef HS_PROG_H
#define HS_PROG_H

#include <stddef.h>
#include <stdint.h>

#include "ast.h"

#define PROG_MAGIC 0x48535150u	/* "HSQP" */
#define PROG_VERSION 1
#define PROG_MAX_BYTES 65000	/* a request frame holds it */
#define PROG_MAX_NODES 16384
#define PROG_MAX_STRINGS 8192
#define PROG_MAX_STMTS 256
#define PROG_MAX_ITEMS 1024	/* items of one node */
#define PROG_MAX_PROPS 64
#define PROG_MAX_PARAMS 16
#define PROG_MAX_DEPTH 200	/* the evaluators nest at most 500 deep */

/* Node flags. */
#define PROG_EARLIER 1		/* the node comes from an earlier snippet */

struct prog {
	struct stmt **stmts;
	int nstmts;
};

/*
 * prog_encode: the statements stmts[0..n) as a program (malloc'd into
 * *out, *len bytes; the caller frees). Nodes whose snippet is not
 * `snippet` are marked PROG_EARLIER. Returns 0, or -1 with why (a
 * sentence, cap bytes) when the statements cannot be encoded: a kind the
 * form lacks, or a limit passed.
 */
int prog_encode(struct stmt *const *stmts, int n, const char *snippet, uint8_t **out,
		size_t *len, char *why, size_t cap);

/*
 * prog_decode: the program in p[0..len) as syntax trees in memory from
 * alloc (which returns zeroed memory or NULL when its bound is reached).
 * Returns 0, or -1 with why (what is wrong, and at which byte). Node
 * flags end up in node->ctx's high bit: PROG_NODE_EARLIER(n).
 */
int prog_decode(const uint8_t *p, size_t len, void *(*alloc)(void *ctx, size_t n), void *ctx,
		struct prog *out, char *why, size_t cap);

/*
 * The snippet of a decoded node or statement: prog_earlier_snippet for
 * code from an earlier snippet (PROG_EARLIER), prog_this_snippet for the
 * program's own, so that the evaluator's errors say which (eval_rt_error).
 */
extern const char prog_this_snippet[], prog_earlier_snippet[];
#define PROG_NODE_EARLIER(n) ((n)->snippet == prog_earlier_snippet)

#endif
