/*
 * builtins.c - the table of the query language's built-in names
 * (builtins.h): one row per name and receiver, and its lookups.
 *
 * Where a row can run is what the agent's heap view does
 * (src/agent/heapif_agent.c): a row marked BI_ANYWHERE is evaluated inside
 * the JVM, a BI_DUMP row is "cannot answer here" there (and plan.c sends
 * the query to a snapshot before it gets there). tests/queries/builtins.txt has one query per row;
 * test_builtins checks it against this table and runs it on a dump, and
 * t_live.sh runs the BI_ANYWHERE ones inside a JVM.
 */
#include "builtins.h"

#include "ast.h"

#include <stdio.h>
#include <string.h>

#define ANY BI_ANYWHERE
#define DUMP BI_DUMP
#define W BI_WALK
#define A BI_ALIAS

/* Within a receiver, the order of the names in messages and suggestions. */
static const struct bi_row rows[] = {
	/* globals: the heap's lists, the allocation recording, a traversal's names */
	{"objects", BI_R_GLOBAL, BI_OBJECTS, 0, 0, false, ANY, W | BI_HEAP},
	{"classes", BI_R_GLOBAL, BI_CLASSES, 0, 0, false, ANY, BI_HEAP},
	{"classloaders", BI_R_GLOBAL, BI_CLASSLOADERS, 0, 0, false, ANY, BI_HEAP},
	{"threads", BI_R_GLOBAL, BI_THREADS, 0, 0, false, ANY, BI_HEAP},
	{"allocations", BI_R_GLOBAL, BI_ALLOCATIONS, 0, 0, false, BI_HEAPSH, 0},
	{"THIS", BI_R_GLOBAL, BI_THIS, 0, 0, false, ANY, W | BI_HEAP},
	{"REFERRER", BI_R_GLOBAL, BI_REFERRER, 0, 0, false, ANY, W | BI_HEAP},
	{"ENTITY", BI_R_GLOBAL, BI_ENTITY, 0, 0, false, ANY, W | BI_HEAP},
	{"ref_kind", BI_R_GLOBAL, BI_REF_KIND, 0, 0, false, ANY, W | BI_HEAP},
	/* lists */
	{"filter", BI_R_LIST, BI_LIST_FILTER, 1, 1, true, ANY, W},
	{"map", BI_R_LIST, BI_LIST_MAP, 1, 1, true, ANY, W},
	{"exists", BI_R_LIST, BI_LIST_EXISTS, 1, 1, true, ANY, W},
	{"foreach", BI_R_LIST, BI_LIST_FOREACH, 1, 1, true, ANY, W},
	{"count", BI_R_LIST, BI_LIST_COUNT, 0, 1, true, ANY, W},
	{"sum", BI_R_LIST, BI_LIST_SUM, 0, 1, true, ANY, W},
	{"min", BI_R_LIST, BI_LIST_MIN, 0, 1, true, ANY, W},
	{"max", BI_R_LIST, BI_LIST_MAX, 0, 1, true, ANY, W},
	{"sort_by", BI_R_LIST, BI_LIST_SORT_BY, 1, 1, true, ANY, W},
	{"top", BI_R_LIST, BI_LIST_TOP, 2, 2, true, ANY, W},
	{"first", BI_R_LIST, BI_LIST_FIRST, 0, 1, true, ANY, W},
	{"group_by", BI_R_LIST, BI_LIST_GROUP_BY, 1, 1, true, ANY, W},
	{"contains", BI_R_LIST, BI_LIST_CONTAINS, 1, 1, false, ANY, W},
	{"length", BI_R_LIST, BI_LIST_LENGTH, 0, 1, true, ANY, W},
	{"size", BI_R_LIST, BI_LIST_LENGTH, 0, 1, true, ANY, W | A},
	/* objects (after their Java fields) */
	{"class", BI_R_OBJECT, BI_OBJ_CLASS, 0, 0, false, ANY, W},
	{"size", BI_R_OBJECT, BI_OBJ_SIZE, 0, 0, false, ANY, W},
	{"shallow_size", BI_R_OBJECT, BI_OBJ_SIZE, 0, 0, false, ANY, W | A},
	{"id", BI_R_OBJECT, BI_OBJ_ID, 0, 0, false, ANY, W},
	{"object_id", BI_R_OBJECT, BI_OBJ_ID, 0, 0, false, ANY, W | A},
	{"retained", BI_R_OBJECT, BI_OBJ_RETAINED, 0, 0, false, DUMP, 0},
	{"retained_size", BI_R_OBJECT, BI_OBJ_RETAINED, 0, 0, false, DUMP, A},
	{"dynamic_size", BI_R_OBJECT, BI_OBJ_DYNAMIC_SIZE, 0, 0, false, DUMP, 0},
	{"dynamic_size_est", BI_R_OBJECT, BI_OBJ_DYNAMIC_SIZE_EST, 0, 0, false, DUMP, 0},
	{"refs", BI_R_OBJECT, BI_OBJ_REFS, 0, 0, false, DUMP, 0},
	{"referrers", BI_R_OBJECT, BI_OBJ_REFERRERS, 0, 0, false, DUMP, 0},
	{"length", BI_R_OBJECT, BI_OBJ_LENGTH, 0, 0, false, ANY, W},
	{"elements", BI_R_OBJECT, BI_OBJ_ELEMENTS, 0, 0, false, DUMP, 0},
	{"text", BI_R_OBJECT, BI_OBJ_TEXT, 0, 0, false, ANY, W},
	{"toString", BI_R_OBJECT, BI_OBJ_TEXT, 0, 0, false, ANY, W | A},
	{"kind", BI_R_OBJECT, BI_OBJ_KIND, 0, 0, false, ANY, W},
	{"heap", BI_R_OBJECT, BI_OBJ_HEAP, 0, 0, false, ANY, W},
	/* classes (before their static fields) */
	{"name", BI_R_CLASS, BI_CLASS_NAME, 0, 0, false, ANY, W},
	{"classloader", BI_R_CLASS, BI_CLASS_LOADER, 0, 0, false, ANY, W},
	{"loader", BI_R_CLASS, BI_CLASS_LOADER, 0, 0, false, ANY, W | A},
	{"super", BI_R_CLASS, BI_CLASS_SUPER, 0, 0, false, ANY, W},
	{"instances", BI_R_CLASS, BI_CLASS_INSTANCES, 0, 0, false, ANY, 0},
	{"count", BI_R_CLASS, BI_CLASS_COUNT, 0, 0, false, ANY, 0},
	{"object", BI_R_CLASS, BI_CLASS_OBJECT, 0, 0, false, ANY, 0},
	{"id", BI_R_CLASS, BI_CLASS_ID, 0, 0, false, ANY, W},
	{"instance_size", BI_R_CLASS, BI_CLASS_INSTANCE_SIZE, 0, 0, false, ANY, 0},
	{"shallow", BI_R_CLASS, BI_CLASS_SHALLOW, 0, 0, false, ANY, 0},
	/* class loaders */
	{"id", BI_R_LOADER, BI_LOADER_ID, 0, 0, false, ANY, 0},
	{"name", BI_R_LOADER, BI_LOADER_NAME, 0, 0, false, ANY, 0},
	{"classes", BI_R_LOADER, BI_LOADER_CLASSES, 0, 0, false, ANY, 0},
	{"object", BI_R_LOADER, BI_LOADER_OBJECT, 0, 0, false, ANY, 0},
	/* threads */
	{"name", BI_R_THREAD, BI_THREAD_NAME, 0, 0, false, ANY, 0},
	{"object", BI_R_THREAD, BI_THREAD_OBJECT, 0, 0, false, ANY, 0},
	{"roots", BI_R_THREAD, BI_THREAD_ROOTS, 0, 0, false, DUMP, 0},
	{"id", BI_R_THREAD, BI_THREAD_ID, 0, 0, false, ANY, 0},
	{"frames", BI_R_THREAD, BI_THREAD_FRAMES, 0, 0, false, ANY, 0},
	/* ENTITY (before its properties) */
	{"name", BI_R_ENTITY, BI_ENTITY_NAME, 0, 0, false, ANY, W},
	{"members", BI_R_ENTITY, BI_ENTITY_MEMBERS, 0, 0, false, ANY, W},
	{"count", BI_R_ENTITY, BI_ENTITY_MEMBERS, 0, 0, false, ANY, W | A},
	/* strings */
	{"length", BI_R_STRING, BI_STR_LENGTH, 0, 0, false, ANY, W},
};

#define NROWS ((int)(sizeof rows / sizeof *rows))

const struct bi_row *bi_lookup(const char *name, enum bi_recv r)
{
	if (!name)
		return NULL;
	for (int k = 0; k < NROWS; k++)
		if (rows[k].recv == r && !strcmp(rows[k].name, name))
			return &rows[k];
	return NULL;
}

enum bi_id bi_id_of(const char *name, enum bi_recv r)
{
	const struct bi_row *row = bi_lookup(name, r);
	return row ? row->id : BI_NIDS;
}

enum bi_where bi_member_where(const char *name)
{
	enum bi_where w = BI_ANYWHERE;
	for (int k = 0; name && k < NROWS; k++)
		if (rows[k].recv != BI_R_GLOBAL && rows[k].where > w && !strcmp(rows[k].name, name))
			w = rows[k].where;
	return w;
}

const struct bi_row *bi_rows(int *n)
{
	*n = NROWS;
	return rows;
}

int bi_names(enum bi_recv r, const char **out, int cap)
{
	int n = 0;
	for (int k = 0; k < NROWS && n < cap; k++)
		if (rows[k].recv == r && !(rows[k].flags & BI_ALIAS))
			out[n++] = rows[k].name;
	return n;
}

const char *bi_list(enum bi_recv r, char *buf, size_t cap)
{
	const char *names[NROWS];
	int n = bi_names(r, names, NROWS);
	size_t len = 0;
	buf[0] = 0;
	for (int k = 0; k < n && len < cap; k++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", k ? ", " : "", names[k]);
	return buf;
}

const char *bi_recv_name(enum bi_recv r)
{
	static const char *const names[] = {"global", "list", "object", "class", "classloader",
					    "thread", "entity", "string"};
	return r < BI_NRECV ? names[r] : "?";
}

const char *bi_where_name(enum bi_where w)
{
	return w == BI_ANYWHERE ? "anywhere" : w == BI_DUMP ? "dump" : "heapsh";
}

const struct bi_row *bi_of(struct node *n, enum bi_recv r)
{
	if (n->bi_recv1 != r + 1) {
		n->bi = bi_lookup(n->name, r);
		n->bi_recv1 = (uint8_t)(r + 1);
	}
	return n->bi;
}

static const char *const refkinds[] = {"root", "field", "array", "static", "super",
				       "loader", "other", "none"};

const char *bi_refkind_name(int k)
{
	return k >= 0 && k < (int)(sizeof refkinds / sizeof *refkinds) ? refkinds[k] : "?";
}

int bi_refkind_of(const char *name)
{
	for (int k = 0; k < (int)(sizeof refkinds / sizeof *refkinds); k++)
		if (!strcmp(name, refkinds[k]))
			return k;
	return -1;
}

const char *bi_arity(const struct bi_row *r, int nargs, char *buf, size_t cap)
{
	if (!r || nargs <= r->max_args)
		return NULL;
	if (!r->max_args)
		snprintf(buf, cap, "'%s' takes no arguments", r->name);
	else if (r->min_args == r->max_args)
		snprintf(buf, cap, "'%s' takes %d argument%s", r->name, r->max_args,
			 r->max_args == 1 ? "" : "s");
	else
		snprintf(buf, cap, "'%s' takes at most %d argument%s", r->name, r->max_args,
			 r->max_args == 1 ? "" : "s");
	return buf;
}
