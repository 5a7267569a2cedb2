/*
 * ast.h - the syntax tree of the query language (docs/dsl.md; the DSL of
 * ../shared/seeds/000, figure "DSL syntax", in an ASCII spelling).
 * Nodes live in the arena of the snippet that was parsed.
 */
#ifndef HS_AST_H
#define HS_AST_H

#include <stdbool.h>
#include <stdint.h>

struct bi_row;

enum node_kind {
	N_INT, N_FLOAT, N_STR, N_BOOL, N_NULL,
	N_IDENT,	/* name */
	N_LIST,		/* #[ items ] */
	N_STRUCT,	/* struct name items end */
	N_LAMBDA,	/* [ params | body ret result ] */
	N_MEMBER,	/* a.name */
	N_CALL,		/* a.name(args) */
	N_NEG, N_NOT,
	N_BIN,		/* a op b */
	N_IS,		/* a is name (instanceof) */
	N_IN_UNASSIGNED,	/* a in Unassigned */
	N_IN,		/* a in b (ENTITY or a list) */
	N_ASSIGN,	/* name <- a (in lambda bodies) */
	N_EXTERN_CALL	/* name(args): a native function declared with extern */
};

enum bin_op { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
	      OP_AND, OP_OR };

struct decl {
	const char *name;
	const char *type;	/* int, bool, string, float, a type name, or NULL */
	int line, col;
};

struct node {
	enum node_kind kind;
	int line, col;		/* where it starts in the snippet */
	const char *snippet;	/* the text it was parsed from (arena) */
	const char *name;	/* IDENT, MEMBER, CALL, IS, ASSIGN, STRUCT, EXTERN_CALL */
	struct node *a, *b;	/* operands; MEMBER/CALL: a is the receiver */
	enum bin_op op;
	int64_t i;
	double f;
	const char *s;		/* STR */
	struct node **items;	/* LIST, STRUCT, CALL and EXTERN_CALL args, LAMBDA body */
	int nitems;
	struct decl *params;	/* LAMBDA */
	int nparams;
	struct node *result;	/* LAMBDA: ret expression, or NULL */
	uint8_t *class_bits;	/* IS: resolved on first use, a bit per class */
	uint32_t cache_cls1;	/* MEMBER: class index + 1 the lookup below is for */
	uint32_t cache_off;	/* MEMBER: the field's offset in the instance data */
	uint8_t cache_type;	/* MEMBER: its basic type, 0 = not a field (a built-in) */
	uint8_t ctx;		/* IDENT: 1..4 THIS, REFERRER, ENTITY, ref_kind; 5 other */
	uint8_t bi_recv1;	/* MEMBER, CALL: the receiver kind + 1 bi is for (builtins.h) */
	const struct bi_row *bi;	/* MEMBER, CALL: its built-in for that kind, or NULL */
};

enum stmt_kind {
	S_EXPR,		/* an expression: its value is shown */
	S_LET,		/* let name = e, or name <- e, or name : T <- e */
	S_TYPE,		/* name : table-of T | name : struct decls end */
	S_SET_TYPE,	/* set_type name: properties */
	S_INSTANCES,	/* instances_for name have_names = e */
	S_EXTERN	/* extern "lib" name(types) : type */
};

struct property {
	enum { P_ROOTS, P_MEMBERSHIP, P_ON_INCLUSION, P_USER } kind;
	struct decl decl;	/* P_USER: name and type */
	struct node *value;
};

struct stmt {
	enum stmt_kind kind;
	int line, col;
	const char *snippet;	/* the text it was parsed from (arena) */
	const char *name;
	struct node *e;
	const char *type;	/* S_LET with a declared type; S_TYPE table-of T */
	struct decl *fields;	/* S_TYPE struct */
	int nfields;
	bool is_struct;
	struct property *props;	/* S_SET_TYPE */
	int nprops;
	struct decl lib;	/* S_EXTERN: the library as written (name) and where */
	int name_line, name_col;	/* S_EXTERN: where the function's name is */
	const char *sig;	/* S_EXTERN: the signature in extern.h's syntax */
};

#endif
