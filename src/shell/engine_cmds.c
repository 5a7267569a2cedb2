/*
 * engine_cmds.c - the shell's engine commands: :dominators, :retained,
 * :idom, :path, and the engine results cache (sh_dom).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/fmt.h"
#include "../out/out.h"
#include "sh.h"

/* ---- argument helpers ---- */

struct eopts {
	const char *target;
	long top;
	long all;
	bool by_class, no_weak, merged, weak;
	const char *pprof;	/* --pprof FILE */
};

static int parse_eopts(struct sh *sh, int argc, char **argv, struct eopts *o,
		       const char *usage, const char *allowed)
{
	memset(o, 0, sizeof *o);
	o->no_weak = hs_get_options(sh->ss).no_weak;
	for (int a = 1; a < argc; a++) {
		const char *w = argv[a];
		bool ok = strstr(allowed, w) != NULL && w[0] == '-';
		if (ok && (!strcmp(w, "--top") || !strcmp(w, "--all"))) {
			if (a + 1 >= argc)
				return sh_error(sh, NULL, "%s wants a number; usage: %s", w, usage);
			char *end;
			long v = strtol(argv[++a], &end, 10);
			if (*end || v <= 0)
				return sh_error(sh, NULL, "%s wants a positive number, not '%s'", w,
						argv[a]);
			*(w[2] == 't' ? &o->top : &o->all) = v;
		} else if (ok && !strcmp(w, "--pprof")) {
			if (a + 1 >= argc)
				return sh_error(sh, NULL, "--pprof wants a file name; usage: %s", usage);
			o->pprof = argv[++a];
		} else if (ok && !strcmp(w, "--by-class")) {
			o->by_class = true;
		} else if (ok && !strcmp(w, "--no-weak")) {
			o->no_weak = true;
		} else if (ok && !strcmp(w, "--merged")) {
			o->merged = true;
		} else if (ok && !strcmp(w, "--weak")) {
			o->weak = true;
		} else if (w[0] == '-' && w[1] == '-') {
			return sh_error(sh, NULL, "unknown option '%s'; usage: %s", w, usage);
		} else if (!o->target) {
			o->target = w;
		} else {
			return sh_error(sh, NULL, "unexpected '%s'; usage: %s", w, usage);
		}
	}
	return HS_OK;
}

/* ---- :dominators ---- */

struct cls_row {
	uint32_t cls;
	uint64_t count, shallow, retained;
};

static int by_row_retained(const void *a, const void *b)
{
	const struct cls_row *x = a, *y = b;
	if (x->retained != y->retained)
		return x->retained < y->retained ? 1 : -1;
	return x->cls < y->cls ? -1 : x->cls > y->cls;
}

int sh_cmd_dominators(struct sh *sh, int argc, char **argv)
{
	static const char usage[] =
		":dominators [ID] [--top N] [--by-class] [--no-weak] | --pprof FILE.pb.gz [--no-weak]";
	struct eopts o;
	if (parse_eopts(sh, argc, argv, &o, usage, "--top --by-class --no-weak --pprof"))
		return HS_ERR;
	if (o.pprof && (o.target || o.top || o.by_class))
		return sh_error(sh, NULL, "--pprof writes the whole tree: no ID, --top or --by-class; "
				"usage: %s", usage);
	struct dom_tree *t = sh_dom(sh, o.no_weak);
	if (!t)
		return HS_ERR;
	const struct heap *h = hs_heap(sh->ss);
	if (o.pprof) {
		struct hs_error err;
		char *note = sh_heap_label(sh);
		int rc = dom_pprof(t, o.pprof, note, &err);
		free(note);
		if (rc != HS_OK)
			return sh_error(sh, NULL, "%s", err.msg);
		out_printf("wrote %s (pprof: go tool pprof -top %s; a class's cum is what its "
			   "instances retain)\n", o.pprof, o.pprof);
		return HS_OK;
	}
	uint32_t v = h->n;
	if (o.target) {
		if (sh_parse_object(sh, o.target, &v))
			return HS_ERR;
		if (t->idom[v] == HEAP_NONE)
			return sh_error(sh, NULL, "0x%" PRIx64 " is unreachable from the GC roots "
					"(garbage): it dominates nothing", heap_id(h, v));
	}
	uint32_t n;
	uint32_t limit = o.top ? (uint32_t)o.top : 25;
	/* by class sums all the children; else the first limit of them are shown */
	uint32_t *ch = o.by_class ? dom_children(t, v, &n) : dom_children_top(t, v, limit, &n);
	if (o.by_class) {
		struct cls_row *rows = xcalloc(h->nclasses + 1, sizeof *rows);
		for (uint32_t c = 0; c < h->nclasses; c++)
			rows[c].cls = c;
		for (uint32_t k = 0; k < n; k++) {
			struct cls_row *r = &rows[h->cls[ch[k]]];
			r->count++;
			r->shallow += heap_shallow(h, ch[k]);
			r->retained += dom_retained(t, ch[k]);
		}
		qsort(rows, h->nclasses, sizeof *rows, by_row_retained);
		static const char *const cols[] = {"class", "objects", "shallow_bytes",
						   "retained_bytes"};
		struct out_table *tb = out_table_new(4, cols);
		for (uint32_t k = 0; k < h->nclasses && k < limit && rows[k].count; k++) {
			out_cell_str(tb, h->classes[rows[k].cls].name);
			out_cell_u64(tb, rows[k].count);
			out_cell_u64(tb, rows[k].shallow);
			out_cell_u64(tb, rows[k].retained);
		}
		out_table_end(tb);
		free(rows);
	} else {
		static const char *const cols[] = {"id", "class", "shallow_bytes", "retained_bytes"};
		struct out_table *tb = out_table_new(4, cols);
		for (uint32_t k = 0; k < n && k < limit; k++) {
			sh_object_cells(tb, h, ch[k]);
			out_cell_u64(tb, heap_shallow(h, ch[k]));
			out_cell_u64(tb, dom_retained(t, ch[k]));
		}
		out_table_end(tb);
	}
	if (out_mode == OUT_TABLE) {
		uint64_t total = dom_retained(t, h->n);
		out_printf("%u %s dominated directly by %s; %" PRIu64 " bytes retained",
			   n, n == 1 ? "object is" : "objects are",
			   v == h->n ? "the GC roots" : o.target, dom_retained(t, v));
		if (total)
			out_printf(" (%.1f%% of the %" PRIu64 " reachable bytes)",
				   100.0 * (double)dom_retained(t, v) / (double)total, total);
		out_printf("\n");
	}
	free(ch);
	return HS_OK;
}

/*
 * target_tree: the prologue of commands taking a target and --no-weak:
 * parse, require the target, and get the matching dominator tree (NULL
 * after an error, already reported).
 */
static struct dom_tree *target_tree(struct sh *sh, int argc, char **argv, const char *usage,
				    struct eopts *o)
{
	if (parse_eopts(sh, argc, argv, o, usage, "--no-weak"))
		return NULL;
	if (!o->target) {
		sh_error(sh, NULL, "usage: %s", usage);
		return NULL;
	}
	return sh_dom(sh, o->no_weak);
}

/* ---- :retained ---- */

int sh_cmd_retained(struct sh *sh, int argc, char **argv)
{
	struct eopts o;
	struct dom_tree *t = target_tree(sh, argc, argv, ":retained ID|CLASS [--no-weak]", &o);
	if (!t)
		return HS_ERR;
	uint32_t *objs, n;
	char *label;
	if (sh_target_set(sh, o.target, &objs, &n, &label))
		return HS_ERR;
	uint64_t shallow = 0, bytes;
	for (uint32_t k = 0; k < n; k++)
		shallow += heap_shallow(hs_heap(sh->ss), objs[k]);
	int st = dom_retained_set(t, objs, n, &bytes);
	free(objs);
	if (st != HS_OK) {
		free(label);
		return sh_error(sh, NULL, "interrupted");
	}
	static const char *const cols[] = {"objects", "what", "shallow_bytes", "retained_bytes"};
	struct out_table *tb = out_table_new(4, cols);
	out_cell_u64(tb, n);
	out_cell_str(tb, label);
	out_cell_u64(tb, shallow);
	out_cell_u64(tb, bytes);
	out_table_end(tb);
	free(label);
	return HS_OK;
}

/* ---- :idom ---- */

int sh_cmd_idom(struct sh *sh, int argc, char **argv)
{
	struct eopts o;
	struct dom_tree *t = target_tree(sh, argc, argv, ":idom ID [--no-weak]", &o);
	uint32_t v;
	if (!t || sh_parse_object(sh, o.target, &v))
		return HS_ERR;
	const struct heap *h = hs_heap(sh->ss);
	if (t->idom[v] == HEAP_NONE)
		return sh_error(sh, NULL, "0x%" PRIx64 " is unreachable from the GC roots (garbage)",
				heap_id(h, v));
	static const char *const cols[] = {"depth", "id", "class", "shallow_bytes",
					   "retained_bytes"};
	struct out_table *tb = out_table_new(5, cols);
	uint32_t d = 0;
	for (uint32_t x = v; x != h->n; x = t->idom[x], d++) {
		out_cell_u64(tb, d);
		sh_object_cells(tb, h, x);
		out_cell_u64(tb, heap_shallow(h, x));
		out_cell_u64(tb, dom_retained(t, x));
	}
	out_table_end(tb);
	if (out_mode == OUT_TABLE)
		out_printf("the last line is dominated directly by the GC roots\n");
	return HS_OK;
}

/* ---- :path ---- */

static const char *root_kinds_of(const struct heap *h, uint32_t obj, char *buf, size_t cap)
{
	buf[0] = 0;
	for (uint32_t r = 0; r < h->nroots; r++)
		if (h->roots[r].obj == obj) {
			const char *k = heap_root_kind_name(h->roots[r].kind);
			if (!strstr(buf, k)) {
				size_t l = strlen(buf);
				snprintf(buf + l, cap - l, "%s%s", l ? ", " : "", k);
			}
		}
	return buf;
}

int sh_cmd_path(struct sh *sh, int argc, char **argv)
{
	static const char usage[] = ":path ID|CLASS [--all N] [--merged] [--weak] [--no-weak]";
	struct eopts o;
	if (parse_eopts(sh, argc, argv, &o, usage, "--all --merged --weak --no-weak"))
		return HS_ERR;
	if (!o.target)
		return sh_error(sh, NULL, "usage: %s", usage);
	if (sh_need_heap(sh))
		return HS_ERR;
	const struct heap *h = hs_heap(sh->ss);
	struct hgraph g;
	char kinds[256], how[256];
	if (o.merged || !sh_looks_like_id(o.target)) {
		uint32_t *objs, n, nrows, unreach;
		char *label;
		if (sh_target_set(sh, o.target, &objs, &n, &label))
			return HS_ERR;
		/* As MAT merges them: through strong references unless --weak asks for all. */
		bool strong = o.no_weak || !o.weak;
		hg_init(&g, h, strong, true);
		struct path_row *rows;
		int st = path_merged(&g, objs, n, &rows, &nrows, &unreach);
		hg_free(&g);
		free(objs);
		if (st != HS_OK) {
			free(label);
			return sh_error(sh, NULL, "interrupted");
		}
		/* One row per node of the merged tree; objects of one class at one step are one row. */
		static const char *const cols[] = {"depth", "via", "id", "class", "merged",
						   "objects", "gc_root"};
		struct out_table *tb = out_table_new(7, cols);
		uint32_t limit = o.all ? (uint32_t)o.all : 200;
		for (uint32_t k = 0; k < nrows && k < limit; k++) {
			const struct path_row *r = &rows[k];
			out_cell_u64(tb, r->depth);
			if (r->depth) {
				path_via(h, r->from, r->obj, how, sizeof how);
				if (r->nobjs > 1 && how[0] == '[')
					snprintf(how, sizeof how, "[*]");	/* elements, not one index */
				out_cell_str(tb, how);
			} else {
				out_cell_null(tb);
			}
			if (r->nobjs == 1) {
				sh_object_cells(tb, h, r->obj);
			} else {
				out_cell_fmt(tb, "0x%" PRIx64 "...", heap_id(h, r->obj));
				out_cell_fmt(tb, "%u x %s", r->nobjs, heap_class_name(h, r->obj));
			}
			out_cell_u64(tb, r->nobjs);
			out_cell_u64(tb, r->count);
			if (r->depth == 0)
				out_cell_str(tb, root_kinds_of(h, r->obj, kinds, sizeof kinds));
			else
				out_cell_null(tb);
		}
		out_table_end(tb);
		if (out_mode == OUT_TABLE) {
			out_printf("merged shortest paths from the GC roots to %s", label);
			if (nrows > limit)
				out_printf("; %u of %u rows shown (--all N for more)", limit, nrows);
			if (unreach)
				out_printf("; %u unreachable", unreach);
			if (strong && !o.no_weak)
				out_printf("; through strong references (--weak to follow weak and soft "
					   "ones too)");
			out_printf("\n");
		}
		free(rows);
		free(label);
		return HS_OK;
	}
	uint32_t v, np;
	if (sh_parse_object(sh, o.target, &v))
		return HS_ERR;
	hg_init(&g, h, o.no_weak, true);
	struct path *paths;
	int st = path_to_roots(&g, v, o.all ? (uint32_t)o.all : 1, &paths, &np);
	hg_free(&g);
	if (st != HS_OK) {
		path_free(paths, np);
		return sh_error(sh, NULL, "interrupted");
	}
	if (!np) {
		path_free(paths, np);
		return sh_error(sh, NULL, "0x%" PRIx64 " is unreachable from the GC roots%s",
				heap_id(h, v), o.no_weak ? " through strong references" : "");
	}
	static const char *const cols[] = {"path", "step", "via", "id", "class", "gc_root"};
	struct out_table *tb = out_table_new(6, cols);
	for (uint32_t p = 0; p < np; p++)
		for (uint32_t k = 0; k < paths[p].len; k++) {
			uint32_t x = paths[p].nodes[k];
			out_cell_u64(tb, p + 1);
			out_cell_u64(tb, k);
			if (k) {
				path_via(h, paths[p].nodes[k - 1], x, how, sizeof how);
				out_cell_str(tb, how);
			} else {
				out_cell_null(tb);
			}
			sh_object_cells(tb, h, x);
			if (k == 0)
				out_cell_str(tb, root_kinds_of(h, x, kinds, sizeof kinds));
			else
				out_cell_null(tb);
		}
	out_table_end(tb);
	path_free(paths, np);
	return HS_OK;
}


/*
 * sh_export_graph: the engine's graph as text, for checking with other
 * tools (docs/engine.md): "root R", then "node INDEX ID SHALLOW CLASS" for
 * every object, then "edge FROM TO" for every edge, the super-root R's
 * edges to the GC roots included.
 */
int sh_export_graph(struct sh *sh, const char *path)
{
	if (!hs_heap(sh->ss))
		return sh_error(sh, NULL, "no heap is open");
	FILE *f = fopen(path, "w");
	if (!f)
		return sh_error(sh, NULL, "cannot write '%s': %s", path, strerror(errno));
	const struct heap *h = hs_heap(sh->ss);
	struct hgraph g;
	hg_init(&g, h, hs_get_options(sh->ss).no_weak, true);
	fprintf(f, "# heapsh graph: nodes %u, super-root %u%s\n", h->n + 1, h->n,
		hs_get_options(sh->ss).no_weak ? ", no weak referents" : "");
	fprintf(f, "root %u\n", h->n);
	for (uint32_t i = 0; i < h->n; i++)
		fprintf(f, "node %u 0x%" PRIx64 " %" PRIu64 " %s\n", i, heap_id(h, i),
			heap_shallow(h, i), heap_class_name(h, i));
	struct dom_slices s;
	for (uint32_t v = 0; v <= h->n; v++) {
		hg_succs(&g, v, &s);
		for (int k = 0; k < s.count; k++)
			for (uint32_t e = 0; e < s.n[k]; e++)
				fprintf(f, "edge %u %u\n", v, s.a[k][e]);
	}
	hg_free(&g);
	if (fclose(f) != 0)
		return sh_error(sh, NULL, "cannot write '%s': %s", path, strerror(errno));
	return HS_OK;
}
