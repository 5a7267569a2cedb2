/*
 * value.h - values of the query language. Lists of objects are arrays of
 * object indexes (or the virtual list of all objects), never copies of
 * the objects. Values live in the arena of the snippet that made them.
 */
#ifndef HS_VALUE_H
#define HS_VALUE_H

#include <stdbool.h>
#include <stdint.h>

#include "ast.h"

enum vkind {
	V_NULL, V_BOOL, V_INT, V_FLOAT, V_STR,
	V_OBJ,		/* an object of the heap (index) */
	V_CLASS,	/* a class (class index) */
	V_LOADER,	/* a class loader (object index; HEAP_NONE = bootstrap) */
	V_THREAD,	/* a thread (index into heap.threads) */
	V_LIST, V_STRUCT, V_LAMBDA,
	V_ENTITY,	/* a set type instance (ENTITY) */
	V_REFKIND	/* ref_kind values: root, field, array, static, ... */
};

enum refkind { RK_ROOT, RK_FIELD, RK_ARRAY, RK_STATIC, RK_SUPER, RK_LOADER, RK_OTHER, RK_NONE };

struct list;
struct vstruct;
struct closure;
struct instance;

struct value {
	enum vkind k;
	union {
		bool b;
		int64_t i;
		double f;
		const char *s;
		uint32_t idx;	/* OBJ, CLASS, LOADER, THREAD */
		struct list *l;
		struct vstruct *st;
		struct closure *fn;
		struct instance *ent;
		enum refkind rk;
	} u;
};

enum list_kind {
	L_VALUES,	/* v[0..n) */
	L_OBJS,		/* objs[0..n): object indexes */
	L_ALL		/* every object of the heap, 0..n-1 */
};

struct list {
	enum list_kind kind;
	uint32_t n;
	struct value *v;
	uint32_t *objs;
};

struct vstruct {
	const char *type;	/* the declared struct type, or NULL */
	int n;
	const char **names;
	struct value *vals;
};

struct closure {
	struct node *lam;
	struct frame *env;	/* captured scope */
};

/* One instance of a set type during (and after) an analysis. */
struct instance {
	struct value name;
	int nprops;
	const char **prop_names;
	struct value *props;	/* user-defined properties */
	uint64_t members;	/* objects included */
	uint32_t id;		/* 1-based, in creation order */
};

const char *value_kind_name(enum vkind k);
const char *refkind_name(enum refkind k);

#endif
