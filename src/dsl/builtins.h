/*
 * builtins.h - the query language's built-in names in one table, as jq's
 * function_list[] (src/builtin.c): the heap's lists and the names of a set
 * type's traversal (a "global" receiver), and the members of every kind of
 * value (docs/dsl.md, "Values and members"). One row per name and receiver:
 * arity, whether it takes a lambda, where it can run, and the id the
 * evaluator switches on.
 *
 * Readers: the evaluator (eval.c, eval_builtin.c; on a dump, a snapshot,
 * and inside the JVM, where the agent links it), the planner (plan.c: what
 * cannot run inside a JVM, for :explain and the note of a snapshot),
 * push-down (pushdown.c), and the shell's completion.
 *
 * A Java field shadows an object's member of the same name and a class's
 * statics come after its members: the evaluators look fields up themselves;
 * this table holds only the built-ins. Programs sent to a JVM carry member
 * names as strings (prog.c), not these ids, so the ids may change freely.
 *
 * Everything here is static and read-only; nothing allocates.
 */
#ifndef HS_BUILTINS_H
#define HS_BUILTINS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a row applies to: a kind of value, or nothing (a name on its own). */
enum bi_recv {
	BI_R_GLOBAL,	/* objects, classes, ..., THIS, REFERRER, ENTITY, ref_kind */
	BI_R_LIST,
	BI_R_OBJECT,
	BI_R_CLASS,
	BI_R_LOADER,
	BI_R_THREAD,
	BI_R_ENTITY,	/* a set type's instance (ENTITY) */
	BI_R_STRING,
	BI_NRECV
};

/* Where a row can run. */
enum bi_where {
	BI_ANYWHERE,	/* on a dump or a snapshot, and inside an attached JVM */
	BI_DUMP,	/* needs the whole object graph: a dump or a snapshot only */
	BI_HEAPSH	/* reads what heapsh itself holds (the allocation recording) */
};

/* Row flags. */
#define BI_ALIAS 1	/* another name of the row before it: not listed in messages */
#define BI_WALK 2	/* inside a JVM also during a heap walk, where no JNI call is
			 * allowed (the agent checks this for classes' members and the
			 * lists; an object's members check what the walk reported) */
#define BI_HEAP 4	/* a global whose value needs a heap (dsl_needs_heap) */

/* What a row does: the evaluators switch on it. Aliases share their row's id. */
enum bi_id {
	/* globals */
	BI_OBJECTS, BI_CLASSES, BI_CLASSLOADERS, BI_THREADS, BI_ALLOCATIONS,
	BI_THIS, BI_REFERRER, BI_ENTITY, BI_REF_KIND,	/* in this order: eval's ctx 1..4 */
	/* lists */
	BI_LIST_FILTER, BI_LIST_MAP, BI_LIST_EXISTS, BI_LIST_FOREACH, BI_LIST_COUNT,
	BI_LIST_SUM, BI_LIST_MIN, BI_LIST_MAX, BI_LIST_SORT_BY, BI_LIST_TOP, BI_LIST_FIRST,
	BI_LIST_GROUP_BY, BI_LIST_CONTAINS, BI_LIST_LENGTH,
	/* objects */
	BI_OBJ_CLASS, BI_OBJ_SIZE, BI_OBJ_ID, BI_OBJ_RETAINED, BI_OBJ_DYNAMIC_SIZE,
	BI_OBJ_DYNAMIC_SIZE_EST, BI_OBJ_REFS, BI_OBJ_REFERRERS, BI_OBJ_LENGTH, BI_OBJ_ELEMENTS,
	BI_OBJ_TEXT, BI_OBJ_KIND, BI_OBJ_HEAP,
	/* classes */
	BI_CLASS_NAME, BI_CLASS_LOADER, BI_CLASS_SUPER, BI_CLASS_INSTANCES, BI_CLASS_COUNT,
	BI_CLASS_OBJECT, BI_CLASS_ID, BI_CLASS_INSTANCE_SIZE, BI_CLASS_SHALLOW,
	/* class loaders */
	BI_LOADER_ID, BI_LOADER_NAME, BI_LOADER_CLASSES, BI_LOADER_OBJECT,
	/* threads */
	BI_THREAD_NAME, BI_THREAD_OBJECT, BI_THREAD_ROOTS, BI_THREAD_ID, BI_THREAD_FRAMES,
	/* ENTITY */
	BI_ENTITY_NAME, BI_ENTITY_MEMBERS,
	/* strings */
	BI_STR_LENGTH,
	BI_NIDS
};

struct bi_row {
	const char *name;
	enum bi_recv recv;
	enum bi_id id;
	int8_t min_args, max_args;	/* arguments of a call; 0, 0 for a member read
					 * without parentheses (see below) */
	bool lambda;		/* its last argument is a lambda */
	enum bi_where where;
	uint8_t flags;		/* BI_ALIAS, BI_WALK, BI_HEAP */
};

/*
 * Arity: a member called with more arguments than its row's max_args fails
 * (bi_arity: "'size' takes no arguments"); a list member that takes exactly
 * one lambda fails "NAME takes one lambda, e.g. NAME([it | ...])" called
 * with another count; `top` and `contains` say what they take.
 */

/*
 * bi_lookup: the row of name for receiver r, or NULL when r has no built-in
 * of that name. A linear scan of the table (some 60 rows): an evaluator
 * keeps a node's row in the node (bi_of).
 */
const struct bi_row *bi_lookup(const char *name, enum bi_recv r);

/*
 * bi_of: bi_lookup(n->name, r) for a member or call node n, kept in n (its
 * bi and bi_recv1) until n is asked for another receiver kind.
 */
struct node;
const struct bi_row *bi_of(struct node *n, enum bi_recv r);

/*
 * bi_arity: NULL when row r (NULL: no row) may be called with nargs
 * arguments, else the message ("'size' takes no arguments", "'count' takes
 * at most 1 argument") in buf (cap bytes).
 */
const char *bi_arity(const struct bi_row *r, int nargs, char *buf, size_t cap);

/* bi_id_of: bi_lookup's row's id, or BI_NIDS when there is none. */
enum bi_id bi_id_of(const char *name, enum bi_recv r);

/*
 * bi_member_where: where member name (of any receiver: a planner does not
 * know the receiver's kind) can run: the narrowest where of the member rows
 * of that name, BI_ANYWHERE when there is none (a Java field).
 */
enum bi_where bi_member_where(const char *name);

/* bi_rows: the whole table, *n rows, globals first, then member rows by receiver. */
const struct bi_row *bi_rows(int *n);

/*
 * bi_names: the names of r's rows that are not aliases, in the table's
 * order, into out (at most cap); returns how many (for suggestions).
 */
int bi_names(enum bi_recv r, const char **out, int cap);

/*
 * bi_list: the same names as "a, b, c" into buf (cap bytes, always
 * terminated), for the messages of an unknown member; returns buf.
 */
const char *bi_list(enum bi_recv r, char *buf, size_t cap);

/* bi_recv_name: "list", "object", ... for tests and messages. */
const char *bi_recv_name(enum bi_recv r);

/* bi_where_name: "anywhere", "dump", "heapsh" (tests/queries/builtins.txt's words). */
const char *bi_where_name(enum bi_where w);

/*
 * The values of ref_kind (docs/dsl.md, "Set types"), in the order of enum
 * refkind (value.h): bi_refkind_name(k) is k's name ("?" out of range);
 * bi_refkind_of(name) the value a name stands for, or -1.
 */
const char *bi_refkind_name(int k);
int bi_refkind_of(const char *name);

#endif
