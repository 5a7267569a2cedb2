/*
 * values.c - query values as the shell shows them (tables of objects, of
 * structs, of values; one value) and query errors with a caret under their
 * column: what a query run on the heap (query.c) and one run inside the JVM
 * (live_query.c) both show. On core.c only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../out/out.h"
#include "sh.h"

struct dsl *sh_dsl(struct sh *sh)
{
	return hs_dsl(sh->ss);
}

/* Rows shown in table mode before "... N more". */

#define TABLE_ROWS 100

static bool all_objects(const struct list *l)
{
	if (l->kind != L_VALUES)
		return true;
	for (uint32_t k = 0; k < l->n; k++)
		if (l->v[k].k != V_OBJ)
			return false;
	return l->n > 0;
}

static uint32_t obj_at(const struct list *l, uint32_t k)
{
	return l->kind == L_OBJS ? l->objs[k] : l->kind == L_ALL ? k : l->v[k].u.idx;
}

static void cell(struct sh *sh, struct out_table *t, struct value v, void *arena)
{
	switch (v.k) {
	case V_NULL: out_cell_null(t); break;
	case V_INT: out_cell_i64(t, v.u.i); break;
	case V_FLOAT: out_cell_num(t, dsl_value_text(hs_dsl(sh->ss), v, arena)); break;
	case V_BOOL: out_cell_num(t, v.u.b ? "true" : "false"); break;
	default: out_cell_str(t, dsl_value_text(hs_dsl(sh->ss), v, arena)); break;
	}
}

static void show_objects(struct sh *sh, const struct list *l)
{
	const struct heap *h = hs_heap(sh->ss);
	struct dom_tree *d = sh_dom(sh, hs_get_options(sh->ss).no_weak);
	static const char *const cols[] = {"id", "class", "shallow_bytes", "retained_bytes"};
	struct out_table *t = out_table_new(4, cols);
	uint32_t limit = out_mode == OUT_TABLE && l->n > TABLE_ROWS ? TABLE_ROWS : l->n;
	uint64_t shallow = 0;
	for (uint32_t k = 0; k < l->n; k++) {
		uint32_t i = obj_at(l, k);
		shallow += heap_shallow(h, i);
		if (k >= limit)
			continue;
		sh_object_cells(t, h, i);
		out_cell_u64(t, heap_shallow(h, i));
		if (d)
			out_cell_u64(t, dom_retained(d, i));
		else
			out_cell_null(t);
	}
	out_table_end(t);
	if (out_mode == OUT_TABLE)
		out_printf("%s%u object%s, %" PRIu64 " shallow bytes\n",
			   limit < l->n ? "... " : "", l->n, l->n == 1 ? "" : "s", shallow);
}

void sh_show_value(struct sh *sh, struct value v, void *arena)
{
	if (v.k == V_LIST) {
		const struct list *l = v.u.l;
		if (all_objects(l)) {
			show_objects(sh, l);
			return;
		}
		bool structs = l->n > 0;
		for (uint32_t k = 0; k < l->n && structs; k++)
			structs = l->v[k].k == V_STRUCT;
		uint32_t limit = out_mode == OUT_TABLE && l->n > TABLE_ROWS ? TABLE_ROWS : l->n;
		if (structs) {
			const struct vstruct *s0 = l->v[0].u.st;
			struct out_table *t = out_table_new(s0->n, s0->names);
			for (uint32_t k = 0; k < limit; k++) {
				const struct vstruct *s = l->v[k].u.st;
				for (int c = 0; c < s0->n; c++)
					cell(sh, t, c < s->n ? s->vals[c] : (struct value){V_NULL, {0}},
					     arena);
			}
			out_table_end(t);
		} else {
			static const char *const cols[] = {"value"};
			struct out_table *t = out_table_new(1, cols);
			for (uint32_t k = 0; k < limit; k++)
				cell(sh, t, l->v[k], arena);
			out_table_end(t);
		}
		if (out_mode == OUT_TABLE && limit < l->n)
			out_printf("... %u rows\n", l->n);
		return;
	}
	if (v.k == V_STRUCT) {
		const struct vstruct *s = v.u.st;
		struct out_table *t = out_table_new(s->n, s->names);
		for (int c = 0; c < s->n; c++)
			cell(sh, t, s->vals[c], arena);
		out_table_end(t);
		return;
	}
	if (out_mode == OUT_JSON) {
		if (v.k == V_INT || v.k == V_FLOAT || v.k == V_BOOL || v.k == V_NULL)
			out_printf("%s\n", dsl_value_text(hs_dsl(sh->ss), v, arena));
		else {
			out_json_string(out_stream(), dsl_value_text(hs_dsl(sh->ss), v, arena));
			out_printf("\n");
		}
		return;
	}
	out_printf("%s\n", dsl_value_text(hs_dsl(sh->ss), v, arena));
}

/* report: the error with its location and a caret under the column. */
void sh_query_report(struct sh *sh, const char *text, const char *where, int first_line,
		     const struct hs_error *err)
{
	int line = err->line ? err->line : 1;
	char loc[600];
	if (!err->line) {
		/* no position in this text (the error is in code from earlier) */
		snprintf(loc, sizeof loc, "%s", where ? where : "query");
	} else if (where) {
		/* where is "file:N" for the snippet's first line: add the offset */
		const char *colon = strrchr(where, ':');
		if (colon && first_line)
			snprintf(loc, sizeof loc, "%.*s:%d:%d", (int)(colon - where), where,
				 first_line + line - 1, err->col);
		else
			snprintf(loc, sizeof loc, "%s:%d:%d", where, line, err->col);
	} else {
		snprintf(loc, sizeof loc, "%d:%d", line, err->col);
	}
	sh_error(sh, loc, "%s", err->msg);
	const char *p = text;
	for (int k = 1; k < line && p; k++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p || !err->col)
		return;
	int len = (int)strcspn(p, "\n");
	/* the caret line keeps the source line's tabs, so it lines up */
	fprintf(stderr, "  %.*s\n  ", len, p);
	for (int k = 0; k < err->col - 1 && k < len; k++)
		fputc(p[k] == '\t' ? '\t' : ' ', stderr);
	fputs("^\n", stderr);
}
