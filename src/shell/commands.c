/*
 * commands.c - the shell's ':' commands. One table drives dispatch,
 * :help and completion.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/fmt.h"
#include "../out/out.h"
#include "sh.h"

static const char *usage(const char *name)
{
	for (const struct sh_command *c = sh_commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c->usage;
	return name;
}

static int need_heap(struct sh *sh)
{
	return sh_need_heap(sh);
}

/* A Java-like rendering of a primitive value. */
static void format_prim(char *buf, size_t cap, struct heap_value v)
{
	switch (v.type) {
	case HPROF_BOOLEAN: snprintf(buf, cap, "%s", v.v.i ? "true" : "false"); break;
	case HPROF_CHAR:
		if (v.v.i >= 32 && v.v.i < 127)
			snprintf(buf, cap, "'%c'", (int)v.v.i);
		else
			snprintf(buf, cap, "'\\u%04x'", (unsigned)v.v.i);
		break;
	case HPROF_FLOAT: case HPROF_DOUBLE:
		fmt_double(buf, cap, v.v.d, v.type == HPROF_FLOAT);
		break;
	default: snprintf(buf, cap, "%" PRId64, v.v.i); break;
	}
}

/* format_value: a value for display; object refs show class and string text. */
static char *format_value(const struct heap *h, struct heap_value v)
{
	if (v.type != HPROF_OBJECT) {
		char buf[64];
		format_prim(buf, sizeof buf, v);
		return xstrdup(buf);
	}
	if (!v.v.id)
		return xstrdup("null");
	uint32_t t = heap_index(h, v.v.id);
	if (t == HEAP_NONE)
		return xasprintf("0x%" PRIx64 " (no record in the dump)", v.v.id);
	char *s = heap_string(h, t, 60);
	char *r;
	if (s)
		r = xasprintf("0x%" PRIx64 " java.lang.String \"%s\"", v.v.id, s);
	else if (heap_kind(h, t) == HEAP_CLASS)
		r = xasprintf("0x%" PRIx64 " class %s", v.v.id,
			      h->classes[heap_class_of_object(h, t)].name);
	else
		r = xasprintf("0x%" PRIx64 " %s", v.v.id, heap_class_name(h, t));
	free(s);
	return r;
}

static const char *kind_name(enum heap_kind k)
{
	switch (k) {
	case HEAP_INSTANCE: return "instance";
	case HEAP_OBJ_ARRAY: return "object array";
	case HEAP_PRIM_ARRAY: return "primitive array";
	default: return "class";
	}
}

/* The name shown for object i: in tables, its class with a String's text, a
 * thread's or class loader's name (heap_object_label); in CSV and JSON the
 * class alone, so rows group by it; "class X" for class objects. */
static char *object_label(const struct heap *h, uint32_t i)
{
	if (out_mode == OUT_TABLE || heap_kind(h, i) == HEAP_CLASS)
		return heap_object_label(h, i);
	return xstrdup(heap_class_name(h, i));
}

/* ---- :info ---- */

static void kv(struct out_table *t, const char *k, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void kv(struct out_table *t, const char *k, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	out_cell_str(t, k);
	out_cell_value(t, buf);	/* counts are numbers in JSON */
}

/* index_usage: the row of what the index file holds, and what it holds no
 * longer (superseded or damaged; written over once past what is in use). */
static void index_usage(struct out_table *t, const struct hs_state *st)
{
	int n = st->nsections;
	uint64_t unused = st->index_unused, sum = 0;
	if (!n && !unused)
		return;
	char text[1024], b[32];
	size_t at = 0;
	for (int k = 0; k < n; k++) {
		sum += st->section_bytes[k];
		at += (size_t)snprintf(text + at, sizeof text - at, "%s%s %s", k ? ", " : "",
				       st->section[k], fmt_bytes(b, sizeof b, st->section_bytes[k]));
		if (at >= sizeof text)
			break;
	}
	char total[32];
	kv(t, "index", "%s in use (%s)%s%s%s", fmt_bytes(total, sizeof total, sum),
	   n ? text : "nothing", unused ? "; " : "", unused ? fmt_bytes(b, sizeof b, unused) : "",
	   unused ? " no longer used, given back when the file is next written whole" : "");
}

/* What :info adds for what a seal let the open trust (idx.h). */
#define TRUSTED "; not checked again: unchanged, as the dump, since heapsh wrote or checked it " \
	"(docs/out-of-core.md)"

static int cmd_info(struct sh *sh, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (sh_is_live(sh)) {
		if (sh_live_info(sh) != HS_OK)
			return HS_ERR;
		if (!hs_heap(sh->ss))
			return HS_OK;
	}
	if (need_heap(sh))
		return HS_ERR;
	struct heap *h = hs_heap(sh->ss);
	static const char *const cols[] = {"property", "value"};
	struct out_table *t = out_table_new(2, cols);
	kv(t, "file", "%s", h->hp->path);
	kv(t, "format", "JAVA PROFILE 1.0.%d%s", h->hp->minor, h->hp->gzip ? ", gzip" : "");
	if (h->ndumps > 1)
		kv(t, "heap dumps in the file", "%u; this is dump %u (--dump N for another)",
		   h->ndumps, h->dump);
	out_cell_str(t, "file bytes");
	sh_bytes_cell(t, h->hp->file_size);
	if (h->hp->gzip) {
		out_cell_str(t, "inflated bytes");
		sh_bytes_cell(t, h->hp->size);
	}
	kv(t, "id size", "%d", h->hp->id_size);
	time_t ts = (time_t)(h->hp->timestamp_ms / 1000);
	char when[64];
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", gmtime(&ts));
	kv(t, "dumped at", "%s", when);
	char *ver = heap_system_property(h, "java.runtime.version");
	if (!ver)
		ver = heap_system_property(h, "java.version");
	char *vm = heap_system_property(h, "java.vm.name");
	kv(t, "jdk", "%s%s%s", ver ? ver : "unknown", vm ? ", " : "", vm ? vm : "");
	free(ver);
	free(vm);
	uint64_t by_kind[4] = {0, 0, 0, 0};
	for (uint32_t i = 0; i < h->n; i++)
		by_kind[heap_kind(h, i)]++;
	kv(t, "objects", "%u", h->n);
	kv(t, "instances", "%" PRIu64, by_kind[HEAP_INSTANCE]);
	kv(t, "object arrays", "%" PRIu64, by_kind[HEAP_OBJ_ARRAY]);
	kv(t, "primitive arrays", "%" PRIu64, by_kind[HEAP_PRIM_ARRAY]);
	kv(t, "class objects", "%" PRIu64, by_kind[HEAP_CLASS]);
	kv(t, "classes", "%u", h->nclasses);
	kv(t, "references", "%" PRIu64, h->nrefs);
	kv(t, "gc roots", "%u", h->nroots);
	kv(t, "threads", "%u", h->nthreads);
	out_cell_str(t, "shallow bytes");
	sh_bytes_cell(t, h->total_shallow);
	kv(t, "object header", "%d bytes (oops %d bytes: %s)", h->header_size, h->oop_size,
	   h->oop_source);
	if (h->art_layout)
		kv(t, "object layout", "Android (instance sizes from the dump; arrays count "
		   "their elements, as Android Studio does)");
	else if (h->use_layout)
		kv(t, "object layout", "HotSpot, field layout of JDK %s, tables of JDK %d (%s): header %d "
		   "bytes, class pointers %s, references %d bytes, alignment %d; injected fields and "
		   "@Contended padding of that JDK's classes",
		   h->layout.gen15 ? "15+" : "6-14", h->layout.jdk,
		   h->layout_source ? h->layout_source : "?", h->layout.header,
		   h->layout.word == 4 ? "32-bit" : h->layout.header == 16 ? "64-bit" : "compressed",
		   h->layout.oop, h->layout.align);
	if (h->use_layout && h->layout_misfits)
		kv(t, "layout conflict", "%u classes are bigger under this layout than the space one of "
		   "their instances takes in the heap (the distance to the next object's address): the "
		   "dump's JVM laid objects out otherwise; try --layout JDK or --oops 4|8",
		   h->layout_misfits);
	if (h->oops_conflict)
		kv(t, "oops conflict", "8-byte references, but an object array lies closer to the next "
		   "object than they allow: compressed oops? try --oops 4");
	if (h->nheaps) {
		uint64_t cnt[HEAP_MAX_HEAPS] = {0}, bytes[HEAP_MAX_HEAPS] = {0};
		for (uint32_t i = 0; i < h->n; i++) {
			cnt[h->heap_of[i]]++;
			bytes[h->heap_of[i]] += heap_shallow(h, i);
		}
		for (uint32_t k = 0; k < h->nheaps; k++) {
			char key[64];
			snprintf(key, sizeof key, "heap %s", h->heap_names[k]);
			kv(t, key, "%" PRIu64 " objects, %" PRIu64 " shallow bytes", cnt[k], bytes[k]);
		}
	}
	if (h->unreachable_marks)
		kv(t, "unreachable marks", "%" PRIu64 " (Android's UNREACHABLE records; not GC "
		   "roots)", h->unreachable_marks);
	kv(t, "dangling references", "%" PRIu64, h->dangling_refs);
	kv(t, "dangling roots", "%" PRIu64, h->dangling_roots);
	if (h->duplicate_ids)
		kv(t, "duplicate ids", "%" PRIu64, h->duplicate_ids);
	if (h->unknown_class_objs)
		kv(t, "objects of unknown class", "%" PRIu64, h->unknown_class_objs);
	if (h->damaged)
		kv(t, "damage", "%s (%" PRIu64 " bytes lost)", h->damage, h->lost_bytes);
	struct hs_state ss;
	hs_get_state(sh->ss, &ss);
	kv(t, "model", "%s%s", ss.model_from_index ? "read from the index (mapped; the "
	   "dump's records are read when asked for)" : "read from the dump",
	   ss.model_trusted ? TRUSTED : "");
	for (int w = 0; w < 2; w++) {
		const struct dom_tree *d = ss.dom[w];
		const char *key = w ? "dominator tree (no weak)" : "dominator tree";
		if (d) {
			kv(t, key, "%s%s; %u objects reachable, %" PRIu64 " bytes",
			   d->from_index ? "read from the index" : "computed",
			   d->trusted ? TRUSTED : "", d->nreach, dom_retained(d, h->n));
			if (!w)
				kv(t, "unreachable", "%u objects, %" PRIu64 " bytes (no path from a GC "
				   "root in the dump; they retain nothing)", h->n - d->nreach,
				   h->total_shallow - dom_retained(d, h->n));
		}
		else if (!w)
			kv(t, key, "not computed yet (:dominators computes it)");
	}
	if (ss.dyn)
		kv(t, "dynamic-size engine", "%s; %u strongly connected components, %u dominating "
		   "articulation points; estimates %s", ss.dyn_from_index ? "read from the index"
		   : "computed", ss.dyn->s.ncomp, ss.dyn->stats.daps,
		   ss.dyn->est ? "ready" : "not computed yet");
	else
		kv(t, "dynamic-size engine", "not computed yet (:dynsize, :top or :graphstats "
		   "computes it)");
	if (ss.index_file) {
		kv(t, "index file", "%s", ss.index_file);
		index_usage(t, &ss);
	}
	char b1[32], b2[32], b3[32], b4[32], b5[32];
	kv(t, "memory budget", "%s (--memory; docs/out-of-core.md)",
	   fmt_bytes(b1, sizeof b1, ss.mem.budget));
	const struct hs_memory *m = &ss.mem;
	kv(t, "arrays", "%s in memory (peak %s), %s in files (peak %s)%s%s",
	   fmt_bytes(b2, sizeof b2, m->anon), fmt_bytes(b3, sizeof b3, m->anon_peak),
	   fmt_bytes(b4, sizeof b4, m->file), fmt_bytes(b5, sizeof b5, m->file_peak),
	   m->spill_dir && m->file_peak ? " under " : "", m->spill_dir && m->file_peak ? m->spill_dir : "");
	out_table_end(t);
	return HS_OK;
}

/* ---- :histogram and :classes ---- */

struct opt_parse {
	const char *pattern;
	const char *by;
	long top;
	bool retained, no_weak;
	const char *via;	/* live histogram: "vm", "agent", or NULL (either) */
	const char *heap;	/* an Android heap (app, zygote, image), or NULL for all */
};

static int parse_list_opts(struct sh *sh, int argc, char **argv, struct opt_parse *o,
			   const char *usage)
{
	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--by") && a + 1 < argc) {
			o->by = argv[++a];
		} else if (!strcmp(argv[a], "--top") && a + 1 < argc) {
			char *end;
			o->top = strtol(argv[++a], &end, 10);
			if (*end || o->top <= 0)
				return sh_error(sh, NULL, "--top wants a positive number, not '%s'",
						argv[a]);
		} else if (!strcmp(argv[a], "--retained") && strstr(usage, "--retained")) {
			o->retained = true;
		} else if (!strcmp(argv[a], "--no-weak") && strstr(usage, "--no-weak")) {
			o->no_weak = true;
		} else if (!strcmp(argv[a], "--via") && a + 1 < argc && strstr(usage, "--via")) {
			o->via = argv[++a];
			if (strcmp(o->via, "vm") && strcmp(o->via, "agent"))
				return sh_error(sh, NULL, "--via takes vm or agent, not '%s'", o->via);
		} else if (!strcmp(argv[a], "--heap") && a + 1 < argc && strstr(usage, "--heap")) {
			o->heap = argv[++a];
		} else if (argv[a][0] == '-' && argv[a][1] == '-') {
			return sh_error(sh, NULL, "unknown option '%s'; usage: %s", argv[a], usage);
		} else if (!o->pattern) {
			o->pattern = argv[a];
		} else {
			return sh_error(sh, NULL, "unexpected '%s'; usage: %s", argv[a], usage);
		}
	}
	return HS_OK;
}

static const struct heap *sort_heap;
static int sort_by_count;
static const uint64_t *sort_count, *sort_shallow;	/* per class: one heap's, or NULL */

static int cmp_classes(const void *a, const void *b)
{
	uint32_t ca = *(const uint32_t *)a, cb = *(const uint32_t *)b;
	const struct heap_class *x = &sort_heap->classes[ca];
	const struct heap_class *y = &sort_heap->classes[cb];
	uint64_t kx = sort_count ? (sort_by_count ? sort_count[ca] : sort_shallow[ca])
				 : sort_by_count ? x->count : x->shallow;
	uint64_t ky = sort_count ? (sort_by_count ? sort_count[cb] : sort_shallow[cb])
				 : sort_by_count ? y->count : y->shallow;
	if (kx != ky)
		return kx < ky ? 1 : -1;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* select_classes: classes matching pattern (all when NULL), sorted. */
static uint32_t select_classes(struct sh *sh, const char *pattern, bool by_count,
			       bool with_instances, uint32_t **out)
{
	struct heap *h = hs_heap(sh->ss);
	uint32_t n;
	uint32_t *v;
	if (pattern) {
		n = heap_find_classes(h, pattern, &v);
	} else {
		v = xmallocarray(h->nclasses + 1, sizeof *v);
		for (n = 0; n < h->nclasses; n++)
			v[n] = n;
	}
	uint32_t m = 0;
	for (uint32_t k = 0; k < n; k++)
		if (!with_instances || (sort_count ? sort_count[v[k]] : h->classes[v[k]].count))
			v[m++] = v[k];
	sort_heap = h;
	sort_by_count = by_count;
	qsort(v, m, sizeof *v, cmp_classes);
	*out = v;
	return m;
}

static int cmd_histogram(struct sh *sh, int argc, char **argv)
{
	struct opt_parse o = {NULL, "bytes", 0, false, hs_get_options(sh->ss).no_weak, NULL, NULL};
	if (parse_list_opts(sh, argc, argv, &o, usage("histogram")))
		return HS_ERR;
	if (strcmp(o.by, "bytes") && strcmp(o.by, "count") && strcmp(o.by, "retained"))
		return sh_error(sh, NULL, "--by takes count, bytes or retained, not '%s'", o.by);
	if (!strcmp(o.by, "retained"))
		o.retained = true;
	if (o.heap && sh_is_live(sh))
		return sh_error(sh, NULL, "--heap applies to Android dumps (app, zygote, image); "
				"a HotSpot JVM has one heap");
	/* On a live JVM the agent counts the heap as it is now, unless the graph is needed. */
	if (sh_is_live(sh) && !o.retained)
		return sh_live_histogram(sh, o.pattern, !strcmp(o.by, "count"), o.top, o.via);
	if (o.via)
		return sh_error(sh, NULL, "--via applies to the histogram of an attached JVM, "
				"without --retained");
	if (need_heap(sh))
		return HS_ERR;
	struct heap *h = hs_heap(sh->ss);
	/* --heap: one Android heap's objects (HEAP DUMP INFO), counted per class. */
	int hid = -1;
	uint64_t *hcount = NULL, *hshallow = NULL;
	if (o.heap) {
		if (!h->nheaps)
			return sh_error(sh, NULL, "this dump names no heaps; --heap applies to "
					"Android dumps (app, zygote, image)");
		if ((hid = heap_android_heap_index(h, o.heap)) < 0) {
			char names[256] = "";
			for (uint32_t k = 0; k < h->nheaps; k++)
				snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
					 k ? ", " : "", h->heap_names[k]);
			return sh_error(sh, NULL, "no heap '%s' in this dump; its heaps are %s",
					o.heap, names);
		}
		hcount = xcalloc((size_t)h->nclasses + 1, sizeof *hcount);
		hshallow = xcalloc((size_t)h->nclasses + 1, sizeof *hshallow);
		for (uint32_t i = 0; i < h->n; i++)
			if (h->heap_of[i] == hid) {
				hcount[h->cls[i]]++;
				hshallow[h->cls[i]] += heap_shallow(h, i);
			}
	}
	struct dom_tree *t = NULL;
	if (o.retained && !(t = sh_dom(sh, o.no_weak))) {
		free(hcount);
		free(hshallow);
		return HS_ERR;
	}
	uint32_t *v;
	sort_count = hcount;
	sort_shallow = hshallow;
	uint32_t n = select_classes(sh, o.pattern, !strcmp(o.by, "count"), true, &v);
	sort_count = sort_shallow = NULL;
	if (!n && (o.pattern || o.heap)) {
		free(v);
		free(hcount);
		free(hshallow);
		if (o.heap && o.pattern)
			return sh_error(sh, NULL, "no class with instances in heap %s matches '%s'",
					o.heap, o.pattern);
		if (o.heap)
			return sh_error(sh, NULL, "heap %s holds no objects", o.heap);
		char sug[512];
		heap_suggest_class(h, o.pattern, sug, sizeof sug);
		return sh_error(sh, NULL, "no class with instances matches '%s'%s", o.pattern, sug);
	}
	uint64_t *ret = NULL;
	uint32_t shown = o.top && (uint32_t)o.top < n ? (uint32_t)o.top : n;
	if (o.retained) {
		uint32_t todo = !strcmp(o.by, "retained") ? n : shown;
		ret = xcalloc(n + 1, sizeof *ret);
		if (dom_classes_retained(t, v, todo, hid, ret) != HS_OK) {
			free(ret);
			free(v);
			free(hcount);
			free(hshallow);
			return sh_error(sh, NULL, "interrupted");
		}
		if (!strcmp(o.by, "retained"))
			dom_sort_by_retained(v, ret, n);
	}
	static const char *const cols[] = {"class", "instances", "shallow_bytes", "retained_bytes"};
	struct out_table *tb = out_table_new(o.retained ? 4 : 3, cols);
	uint64_t tc = 0, tbytes = 0;
	for (uint32_t k = 0; k < n; k++) {
		const struct heap_class *c = &h->classes[v[k]];
		uint64_t count = hcount ? hcount[v[k]] : c->count;
		uint64_t shallow = hcount ? hshallow[v[k]] : c->shallow;
		tc += count;
		tbytes += shallow;
		if (k >= shown)
			continue;
		out_cell_str(tb, c->name);
		out_cell_u64(tb, count);
		out_cell_u64(tb, shallow);
		if (o.retained)
			out_cell_u64(tb, ret[k]);
	}
	if (out_mode == OUT_TABLE && n > 1) {
		out_cell_fmt(tb, "total (%u classes)", n);
		out_cell_u64(tb, tc);
		out_cell_u64(tb, tbytes);
		if (o.retained)
			out_cell_null(tb);
	}
	out_table_end(tb);
	free(ret);
	free(v);
	free(hcount);
	free(hshallow);
	return HS_OK;
}

static int cmd_classes(struct sh *sh, int argc, char **argv)
{
	if (need_heap(sh))
		return HS_ERR;
	struct opt_parse o = {NULL, "bytes", 0, false, false, NULL, NULL};
	if (parse_list_opts(sh, argc, argv, &o, usage("classes")))
		return HS_ERR;
	struct heap *h = hs_heap(sh->ss);
	uint32_t *v;
	uint32_t n = select_classes(sh, o.pattern, false, false, &v);
	if (o.pattern && !n) {
		free(v);
		char sug[512];
		heap_suggest_class(h, o.pattern, sug, sizeof sug);
		return sh_error(sh, NULL, "no class matches '%s'%s", o.pattern, sug);
	}
	static const char *const cols[] = {"id", "class", "instances", "instance_size",
					   "super", "loader"};
	struct out_table *t = out_table_new(6, cols);
	for (uint32_t k = 0; k < n && (!o.top || k < (uint32_t)o.top); k++) {
		const struct heap_class *c = &h->classes[v[k]];
		out_cell_fmt(t, "0x%" PRIx64, c->id);
		out_cell_str(t, c->name);
		out_cell_u64(t, c->count);
		if (c->elem_type)
			out_cell_null(t);
		else
			out_cell_u64(t, c->inst_size);
		if (c->super != HEAP_NONE)
			out_cell_str(t, h->classes[c->super].name);
		else
			out_cell_null(t);
		if (c->loader != HEAP_NONE)
			out_cell_fmt(t, "0x%" PRIx64 " %s", heap_id(h, c->loader),
				     heap_class_name(h, c->loader));
		else
			out_cell_str(t, "<bootstrap>");
	}
	out_table_end(t);
	free(v);
	return HS_OK;
}

/* ---- :show ---- */

struct show_ctx {
	const struct heap *h;
	struct out_table *t;
};

static void show_field(void *ctx, uint32_t decl, const struct heap_field *f,
		       struct heap_value v)
{
	struct show_ctx *s = ctx;
	out_cell_str(s->t, f->name);
	out_cell_str(s->t, hprof_type_name(f->type));
	char *text = format_value(s->h, v);
	out_cell_str(s->t, text);
	free(text);
	out_cell_str(s->t, s->h->classes[decl].name);
}

static int cmd_show(struct sh *sh, int argc, char **argv)
{
	if (need_heap(sh))
		return HS_ERR;
	if (argc < 2)
		return sh_error(sh, NULL, "usage: %s", usage("show"));
	uint32_t i;
	if (sh_parse_object(sh, argv[1], &i))
		return HS_ERR;
	long limit = 100;
	for (int a = 2; a < argc; a++) {
		if (!strcmp(argv[a], "--all"))
			limit = -1;
		else
			return sh_error(sh, NULL, "unexpected '%s'; usage: %s", argv[a],
					usage("show"));
	}
	struct heap *h = hs_heap(sh->ss);
	enum heap_kind k = heap_kind(h, i);
	static const char *const hcols[] = {"property", "value"};
	struct out_table *t = out_table_new(2, hcols);
	kv(t, "id", "0x%" PRIx64, heap_id(h, i));
	char *label = object_label(h, i);
	kv(t, "class", "%s", label);
	free(label);
	kv(t, "kind", "%s", kind_name(k));
	kv(t, "shallow size", "%" PRIu64, heap_shallow(h, i));
	if (heap_android_heap(h, i))
		kv(t, "heap", "%s", heap_android_heap(h, i));
	/* Android's PRIMITIVE ARRAY NODATA: a length, no values to show. */
	bool nodata = k == HEAP_PRIM_ARRAY && h->hp->data[heap_pos(h, i)] == HPROF_GC_PRIM_ARRAY_NODATA;
	if (k == HEAP_OBJ_ARRAY || k == HEAP_PRIM_ARRAY)
		kv(t, "length", "%u%s", heap_array_length(h, i),
		   nodata ? " (the dump holds no values: PRIMITIVE ARRAY NODATA)" : "");
	char *str = heap_string(h, i, 0);
	if (str)
		kv(t, "text", "\"%s\"", str);
	free(str);
	uint32_t nin, nout;
	heap_in(h, i, &nin);
	heap_out(h, i, &nout);
	kv(t, "references", "%u out, %u in", nout, nin);
	out_table_end(t);
	if (out_mode == OUT_TABLE)
		out_printf("\n");
	if (k == HEAP_INSTANCE) {
		static const char *const cols[] = {"field", "type", "value", "declared_in"};
		struct show_ctx s = {h, out_table_new(4, cols)};
		heap_fields_each(h, i, show_field, &s);
		out_table_end(s.t);
	} else if (k == HEAP_CLASS) {
		uint32_t c = heap_class_of_object(h, i);
		const struct heap_class *kc = &h->classes[c];
		static const char *const cols[] = {"static", "type", "value"};
		struct out_table *st = out_table_new(3, cols);
		for (unsigned s = 0; s < kc->nstatics; s++) {
			out_cell_str(st, kc->statics[s].name);
			out_cell_str(st, hprof_type_name(kc->statics[s].type));
			char *text = format_value(h, heap_read_value(h, kc->statics[s].type,
								     kc->statics[s].value_pos));
			out_cell_str(st, text);
			free(text);
		}
		out_table_end(st);
		if (out_mode == OUT_TABLE)
			out_printf("\n");
		static const char *const fcols[] = {"field", "type"};
		struct out_table *ft = out_table_new(2, fcols);
		for (unsigned f = 0; f < kc->nfields; f++) {
			out_cell_str(ft, kc->fields[f].name);
			out_cell_str(ft, hprof_type_name(kc->fields[f].type));
		}
		out_table_end(ft);
	} else if (!nodata) {
		static const char *const cols[] = {"index", "value"};
		struct out_table *et = out_table_new(2, cols);
		uint32_t len = heap_array_length(h, i);
		uint32_t shown = limit < 0 || len <= (uint32_t)limit ? len : (uint32_t)limit;
		for (uint32_t e = 0; e < shown; e++) {
			out_cell_u64(et, e);
			char *text = format_value(h, heap_array_elem(h, i, e));
			out_cell_str(et, text);
			free(text);
		}
		out_table_end(et);
		if (shown < len && out_mode == OUT_TABLE)
			out_printf("... %u more elements (:show %s --all)\n", len - shown, argv[1]);
	}
	return HS_OK;
}

/* ---- :refs and :referrers ---- */

static void ref_where(char *buf, size_t cap, const struct heap_ref *r)
{
	switch (r->kind) {
	case HEAP_REF_ELEMENT: snprintf(buf, cap, "[%u]", r->index); break;
	case HEAP_REF_STATIC: snprintf(buf, cap, "static %s", r->name); break;
	case HEAP_REF_CONSTANT: snprintf(buf, cap, "<constant pool #%u>", r->index); break;
	default: snprintf(buf, cap, "%s", r->name ? r->name : "?"); break;
	}
}

struct refs_ctx {
	const struct heap *h;
	struct out_table *t;
	uint32_t want;		/* referrers: the target; refs: HEAP_NONE */
	uint32_t src;
};

static bool ref_row(void *ctx, const struct heap_ref *r)
{
	struct refs_ctx *c = ctx;
	if (c->want != HEAP_NONE && r->target != c->want)
		return true;
	uint32_t o = c->want == HEAP_NONE ? r->target : c->src;
	char where[256];
	ref_where(where, sizeof where, r);
	out_cell_str(c->t, where);
	out_cell_fmt(c->t, "0x%" PRIx64, heap_id(c->h, o));
	char *label = object_label(c->h, o);
	out_cell_str(c->t, label);
	free(label);
	out_cell_u64(c->t, heap_shallow(c->h, o));
	return true;
}

static int cmd_refs(struct sh *sh, int argc, char **argv)
{
	if (need_heap(sh))
		return HS_ERR;
	if (argc != 2)
		return sh_error(sh, NULL, "usage: %s", usage("refs"));
	uint32_t i;
	if (sh_parse_object(sh, argv[1], &i))
		return HS_ERR;
	static const char *const cols[] = {"via", "id", "class", "shallow_bytes"};
	struct refs_ctx c = {hs_heap(sh->ss), out_table_new(4, cols), HEAP_NONE, i};
	heap_refs(hs_heap(sh->ss), i, ref_row, &c);
	out_table_end(c.t);
	return HS_OK;
}

static int cmd_referrers(struct sh *sh, int argc, char **argv)
{
	if (need_heap(sh))
		return HS_ERR;
	if (argc != 2)
		return sh_error(sh, NULL, "usage: %s", usage("referrers"));
	uint32_t i, n;
	if (sh_parse_object(sh, argv[1], &i))
		return HS_ERR;
	static const char *const cols[] = {"via", "id", "class", "shallow_bytes"};
	struct refs_ctx c = {hs_heap(sh->ss), out_table_new(4, cols), i, 0};
	const uint32_t *in = heap_in(hs_heap(sh->ss), i, &n);
	for (uint32_t k = 0; k < n; k++) {
		if (k && in[k] == in[k - 1])
			continue;	/* one source, several fields: rows come from heap_refs */
		c.src = in[k];
		heap_refs(hs_heap(sh->ss), in[k], ref_row, &c);
	}
	out_table_end(c.t);
	return HS_OK;
}

/* ---- :roots ---- */

static int cmd_roots(struct sh *sh, int argc, char **argv)
{
	if (need_heap(sh))
		return HS_ERR;
	struct heap *h = hs_heap(sh->ss);
	if (argc > 2)
		return sh_error(sh, NULL, "usage: %s", usage("roots"));
	if (argc == 1) {
		static const char *const cols[] = {"kind", "roots"};
		struct out_table *t = out_table_new(2, cols);
		uint64_t count[256] = {0};
		for (uint32_t r = 0; r < h->nroots; r++)
			count[h->roots[r].kind]++;
		for (int k = 0; k < 256; k++)
			if (count[k]) {
				int kind = k;
				char word[64];
				snprintf(word, sizeof word, "%s", heap_root_kind_name((uint8_t)kind));
				out_cell_str(t, word);
				out_cell_u64(t, count[k]);
			}
		out_table_end(t);
		return HS_OK;
	}
	int kind = -2;
	if (strcmp(argv[1], "all") && (kind = heap_root_kind_parse(argv[1])) < 0)
		return sh_error(sh, NULL, "unknown root kind '%s'; kinds: all, jni-global, "
				"jni-local, frame, native-stack, system-class, thread-block, "
				"monitor, thread, unknown", argv[1]);
	static const char *const cols[] = {"id", "kind", "class", "thread", "frame"};
	struct out_table *t = out_table_new(5, cols);
	for (uint32_t r = 0; r < h->nroots; r++) {
		const struct heap_root *rt = &h->roots[r];
		if (kind != -2 && rt->kind != kind)
			continue;
		out_cell_fmt(t, "0x%" PRIx64, heap_id(h, rt->obj));
		out_cell_str(t, heap_root_kind_name(rt->kind));
		char *label = object_label(h, rt->obj);
		out_cell_str(t, label);
		free(label);
		if (rt->thread != HEAP_NONE) {
			char *name = heap_thread_name(h, rt->thread);
			out_cell_str(t, name ? name : "?");
			free(name);
			const struct heap_thread *th = &h->threads[rt->thread];
			if (rt->frame >= 0 && (uint32_t)rt->frame < th->nframes) {
				const struct heap_frame *f = &h->frames[th->frames[rt->frame]];
				if (f->line > 0)
					out_cell_fmt(t, "%s.%s (%s:%d)", f->class_name, f->method,
						     f->source, f->line);
				else
					out_cell_fmt(t, "%s.%s (%s)", f->class_name, f->method,
						     f->source);
			} else {
				out_cell_null(t);
			}
		} else {
			out_cell_null(t);
			out_cell_null(t);
		}
	}
	out_table_end(t);
	return HS_OK;
}

/* ---- :threads ---- */

static int cmd_threads(struct sh *sh, int argc, char **argv)
{
	(void)argv;
	if (need_heap(sh))
		return HS_ERR;
	if (argc != 1)
		return sh_error(sh, NULL, "usage: %s", usage("threads"));
	struct heap *h = hs_heap(sh->ss);
	static const char *const cols[] = {"id", "name", "frames", "top_frame"};
	struct out_table *t = out_table_new(4, cols);
	for (uint32_t k = 0; k < h->nthreads; k++) {
		const struct heap_thread *th = &h->threads[k];
		if (th->obj == HEAP_NONE)
			out_cell_null(t);
		else
			out_cell_fmt(t, "0x%" PRIx64, heap_id(h, th->obj));
		char *name = heap_thread_name(h, k);
		out_cell_str(t, name ? name : "?");
		free(name);
		out_cell_u64(t, th->nframes);
		if (th->nframes) {
			const struct heap_frame *f = &h->frames[th->frames[0]];
			out_cell_fmt(t, "%s.%s", f->class_name, f->method);
		} else {
			out_cell_null(t);
		}
	}
	out_table_end(t);
	return HS_OK;
}

/* ---- session commands ---- */

static int cmd_format(struct sh *sh, int argc, char **argv)
{
	if (argc == 1) {
		out_printf("%s\n", out_mode_name(out_mode));
		return HS_OK;
	}
	int m = argc == 2 ? out_mode_parse(argv[1]) : -1;
	if (m < 0)
		return sh_error(sh, NULL, "usage: %s", usage("format"));
	out_mode = (enum out_mode)m;
	return HS_OK;
}

static int cmd_open(struct sh *sh, int argc, char **argv)
{
	const char *path = NULL;
	long dump = 0;
	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--dump") && a + 1 < argc) {
			char *end;
			dump = strtol(argv[++a], &end, 10);
			if (*end || dump < 1 || dump > 1000000)
				return sh_error(sh, NULL, "--dump takes the number of a heap dump in "
						"the file, from 1, not '%s'", argv[a]);
		} else if (!path && argv[a][0] != '-') {
			path = argv[a];
		} else {
			return sh_error(sh, NULL, "usage: :open DUMP [--dump N] | :open REC.jfr");
		}
	}
	if (!path)
		return sh_error(sh, NULL, "usage: :open DUMP [--dump N] | :open REC.jfr");
	bool live = sh_is_live(sh);
	struct hs_options o = hs_get_options(sh->ss);
	o.dump = (uint32_t)dump;
	hs_set_options(sh->ss, &o);
	int st = sh_open(sh, path);
	o.dump = 0;
	hs_set_options(sh->ss, &o);
	if (st == HS_OK && live)
		sh_live_leave(sh);	/* a dump replaces the JVM */
	return st;
}

static int cmd_load(struct sh *sh, int argc, char **argv)
{
	if (argc != 2)
		return sh_error(sh, NULL, "usage: :load FILE");
	if (sh->depth > 16)
		return sh_error(sh, NULL, ":load nested too deeply (a file loading itself?)");
	FILE *f = fopen(argv[1], "r");
	if (!f)
		return sh_error(sh, NULL, "cannot open '%s': %s", argv[1], strerror(errno));
	sh->depth++;
	int st = sh->process_input(sh, f, argv[1]);
	sh->depth--;
	fclose(f);
	return st;
}

static int cmd_timer(struct sh *sh, int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "on") && strcmp(argv[1], "off")))
		return sh_error(sh, NULL, "usage: :timer on|off");
	sh->timer = !strcmp(argv[1], "on");
	return HS_OK;
}

static int cmd_quit(struct sh *sh, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	sh->quit = true;
	return HS_OK;
}

static int cmd_help(struct sh *sh, int argc, char **argv)
{
	if (argc >= 2) {
		const char *name = argv[1][0] == ':' ? argv[1] + 1 : argv[1];
		for (const struct sh_command *c = sh_commands; c->name; c++)
			if (!strcmp(c->name, name)) {
				out_printf("usage: %s\n\n%s\n", c->usage, c->help);
				return HS_OK;
			}
		return sh_error(sh, NULL, "no command ':%s'; :help lists them", name);
	}
	out_printf("Commands (':help NAME' for details):\n");
	for (const struct sh_command *c = sh_commands; c->name; c++) {
		const char *nl = strchr(c->help, '\n');
		int len = nl ? (int)(nl - c->help) : (int)strlen(c->help);
		out_printf("  %-44s %.*s\n", c->usage, len, c->help);
	}
	return HS_OK;
}

const struct sh_command sh_commands[] = {
	{"info", cmd_info, ":info",
	 "Facts about the open dump: format, JDK, counts, totals, what was dropped."},
	{"histogram", cmd_histogram,
	 ":histogram [PATTERN] [--by count|bytes|retained] [--top N] [--retained] [--no-weak] "
	 "[--heap NAME] [--via vm|agent]",
	 "Instances and shallow bytes per class, largest first.\n"
	 "--retained adds the bytes freed if all instances of the class went away\n"
	 "together (exact; the rows shown, 64 classes per traversal of the heap).\n"
	 "PATTERN is a class name (java.util.HashMap$Node, HashMap.Node, Order) or a\n"
	 "glob with * and ?. One line per class object: two classes of one name from\n"
	 "different class loaders are two lines. CSV header: class,instances,shallow_bytes.\n"
	 "--heap NAME (Android dumps): only the objects of that heap: app, zygote, image.\n"
	 "On an attached JVM: the live heap after a full GC, from HotSpot's own heap\n"
	 "inspection (--via vm, as jcmd GC.class_histogram) or, when the attach\n"
	 "mechanism is off, from the agent's heap iteration (--via agent)."},
	{"classes", cmd_classes, ":classes [PATTERN] [--top N]",
	 "Classes with their id, instance count, instance size, superclass and loader."},
	{"show", cmd_show, ":show ID [--all]",
	 "One object: class, kind, shallow size, and its fields (instances), statics\n"
	 "(class objects) or elements (arrays; the first 100 unless --all)."},
	{"refs", cmd_refs, ":refs ID",
	 "The objects ID references, with the field, element or link that holds each."},
	{"referrers", cmd_referrers, ":referrers ID",
	 "The objects that reference ID, with the field or element that holds it."},
	{"roots", cmd_roots, ":roots [KIND|all]",
	 "Without KIND: GC roots counted by kind. With KIND (frame, jni-global,\n"
	 "system-class, thread, monitor, ... or all): the roots, with thread and frame."},
	{"threads", cmd_threads, ":threads",
	 "Threads of the dump with their stack depth and top frame."},
{"dominators", sh_cmd_dominators,
	 ":dominators [ID] [--top N] [--by-class] [--no-weak] | --pprof FILE.pb.gz",
	 "The dominator tree: objects dominated directly by the GC roots (or by ID),\n"
	 "largest retained size first (25 unless --top). --by-class groups them by\n"
	 "class. CSV header: id,class,shallow_bytes,retained_bytes.\n"
	 "--pprof writes the whole tree, merged by paths of classes (class objects as\n"
	 "\"class Foo\"), as a pprof profile (inuse_objects, inuse_space) for go tool\n"
	 "pprof or Pyroscope: a class's flat value is the shallow size of its reachable\n"
	 "instances, its cum what they retain together (MAT's approximate retained)."},
	{"retained", sh_cmd_retained, ":retained ID|CLASS [--no-weak]",
	 "Bytes freed if the object, or every instance of CLASS together, went away.\n"
	 "For a class this counts objects kept alive only by several instances."},
	{"suspects", sh_cmd_suspects,
	 ":suspects [--threshold PCT] [--child PCT] [--baseline OLDER.hprof|previous|mark|none] [--no-weak]",
	 "Leak suspects, as Eclipse MAT's report: where a large share of the heap\n"
	 "(10% unless --threshold) piles up in many similar objects, said as a\n"
	 "sentence with the field chain that holds them, the accumulation point and\n"
	 "the shortest path from the GC roots. Similar suspects are one group.\n"
	 "--baseline ranks them by growth since an older dump of the same program,\n"
	 "small ones included; in a running JVM, growth since the snapshot before this\n"
	 "one (:refresh keeps it; previous), or else since the allocation recording's\n"
	 "mark (its classes' live bytes; mark), unless --baseline none. What lies under\n"
	 "the threshold is always summed up.\n"
	 "CSV header: rank,description,retained_bytes,heap_pct,objects,\n"
	 "accumulation_point,holder,where,path[,base_retained_bytes,growth_bytes]."},
	{"diff", sh_cmd_diff,
	 ":diff OLDER|previous [--by class|package|path] [--top N] [--fail-if PATTERN:+PCT%|PATTERN:+SIZE] "
	 "[--mixed-jdk] [--no-weak]",
	 "What grew from the older dump OLDER (previous: the snapshot of the attached\n"
	 "JVM before this one) to the open heap, largest retained growth first; the\n"
	 "same as heapsh diff OLDER NEW on the command line (docs/manual.md, \"Comparing\n"
	 "dumps\"). --by class (default): classes matched by name (hidden classes'\n"
	 "and lambdas' numbers dropped), retained = all instances together, exact for\n"
	 "candidates: the 4N classes of most changed approximate retained size and the\n"
	 "4N of most changed shallow size (N = --top, 25; 0: every changed class);\n"
	 "a row whose growth is 80% that of what its instances hold follows that row\n"
	 "(the leaking class first, then its HashMap$Node, the array, the map).\n"
	 "--by package: the same by package (arrays by their element class; arrays of\n"
	 "primitives a row per type). --by path: the dominator trees merged by path of\n"
	 "classes and fields, each row where a chain of growth stops (no child\n"
	 "carrying 80% of it). --fail-if PATTERN:+PCT% or PATTERN:+SIZE (50MB): the\n"
	 "classes' retained bytes grew more than that (from 0: any growth fails a %);\n"
	 "failed ones are said on stderr. Dumps of different JDKs are refused unless\n"
	 "--mixed-jdk. CSV header: class|package|path,objects_before,objects_after,\n"
	 "retained_before,retained_after,retained_growth; JSON: heapsh-diff/1."},
	{"idom", sh_cmd_idom, ":idom ID [--no-weak]",
	 "The chain of immediate dominators from ID up to the GC roots."},
	{"lua", sh_cmd_lua, ":lua CODE",
	 "Run Lua 5.4 code with the heapsh module (docs/manual.md, \"Scripting\"):\n"
	 "heapsh.current() is this heap. :lua alone on a line starts a block that a line\n"
	 ":end finishes. Errors print a traceback; the shell goes on. Ctrl-C stops it."},
	{"luafile", sh_cmd_luafile, ":luafile FILE [ARGS...]",
	 "Run a Lua script (lua/ has ready ones) with ARGS as its arg table."},
	{"attach", sh_cmd_attach, ":attach PID",
	 "Attach to a running HotSpot JVM (JDK 11 or later, same user): load heapsh's\n"
	 "agent into it if needed and connect. :histogram then counts the live heap;\n"
	 "the first command that needs the object graph takes a snapshot; simple\n"
	 "filters over one class run inside the JVM. Also: heapsh PID."},
	{"detach", sh_cmd_detach, ":detach",
	 "Stop the agent in the attached JVM and forget the snapshot."},
	{"refresh", sh_cmd_refresh, ":refresh [--via dump|agent]",
	 "Take a new snapshot of the attached JVM: HotSpot's heap dumper writes its live\n"
	 "objects into a private temporary file (jcmd GC.heap_dump; through the agent when\n"
	 "the attach mechanism is off), heapsh loads it and removes it. The JVM pauses as\n"
	 "long as for jcmd GC.heap_dump (about 2 s per GB). --via agent: the agent's own\n"
	 "walk instead (JVMTI FollowReferences; several times longer on big heaps).\n"
	 "Object ids are the dump's (the objects' addresses): they change from one\n"
	 "snapshot to the next, as objects move; an id from an earlier snapshot names no\n"
	 "object, or another one. The agent's own thread is left out of the roots."},
	{"explain", sh_cmd_explain, ":explain QUERY",
	 "Where QUERY would run, and why: inside the attached JVM (no snapshot: the\n"
	 "agent evaluates it during its heap walks; for a set type, which walks), on a\n"
	 "snapshot (and why not inside the JVM), on the open dump, or in heapsh alone.\n"
	 "Nothing runs. :explain alone explains the next query instead of running it,\n"
	 "for one over several lines (a set_type and its instances_for)."},
	{"live", sh_cmd_live, ":live [on|off] [--time SECONDS] [--memory MiB]",
	 "Queries inside the attached JVM: on (the default: a query that can run there\n"
	 "takes no snapshot) or off; the time limit of one (default 60 s, then the agent\n"
	 "stops and heapsh takes a snapshot instead; Ctrl-C stops one at once) and the\n"
	 "memory the agent may use for it (default 256 MiB). :live alone shows them."},
	{"dump", sh_cmd_dump, ":dump FILE.hprof",
	 "Have the attached JVM write a heap dump (jcmd GC.heap_dump) and open it."},
	{"alloc", sh_cmd_alloc,
	 ":alloc start|stop|status|reset|mark|accounts|classes|sites|tree|diff|collapsed|"
	 "flamegraph|pprof|leaks [OPTIONS]",
	 "Allocation recording in the attached JVM (docs/agent.md): who allocates what,\n"
	 "and what of it is still alive.\n"
	 "  start [--interval BYTES|exact] [--accounts PATTERNS] [--depth N]\n"
	 "        [--live sampled|all|none] [--via bytecode|jvmti]\n"
	 "  stop | status | reset | mark\n"
	 "  accounts|classes|sites [--live] [--top N] | tree [--min PCT] | diff [--top N]\n"
	 "  collapsed FILE [--objects] [--live] | flamegraph FILE.html|FILE.svg |\n"
	 "  pprof FILE.pb.gz | leaks [--top N]\n"
	 "start samples about one allocation per --interval bytes per thread (default\n"
	 "512k; estimates, shown as ~N; no measurable cost) or, with exact, counts every\n"
	 "allocation per site by rewriting the allocation sites of every class (classes\n"
	 "rewritten N of M on a terminal; Ctrl-C cancels). Measured cost of exact\n"
	 "against none (docs/performance.md):\n"
	 ALLOC_COST_HELP
	 "--live: which objects exact counting follows for live counts: sampled (the\n"
	 "default: each site's first 256 per thread, then 1 in 64; live counts ~N),\n"
	 "all (exact live counts) or none. --via jvmti: a JVMTI event per object\n"
	 "instead (7-10x; it also sees what the VM and JNI allocate). Methods running\n"
	 "since before the start keep their old code: :alloc status names them.\n"
	 "--accounts a.b,c.d.* charges each allocation\n"
	 "to the nearest frame on the stack whose package a pattern matches (a.b: that\n"
	 "package; a.b.*: and its subpackages); others go to (none). --depth keeps N\n"
	 "frames per stack (default: 1, the site, when exact; 64 when sampled). The\n"
	 "recording lives in the JVM: it goes on after heapsh detaches or exits, and\n"
	 "any later heapsh PID reads it.\n"
	 "accounts: account,class,allocated_objects,allocated_bytes,live_objects,live_bytes.\n"
	 "classes, sites (Class.method(File:line)), tree (the calling-context tree, self\n"
	 "and total), mark then diff (live objects now against the mark, growth first),\n"
	 "collapsed (folded stacks for flame-graph tools), flamegraph (FILE.html: a page\n"
	 "to explore, with zoom, search and objects/bytes/live; FILE.svg: a picture),\n"
	 "pprof (a profile for go tool pprof, Pyroscope: alloc_objects, alloc_space,\n"
	 "inuse_objects, inuse_space; the class as the innermost frame), leaks (paths\n"
	 "from GC roots to a sample of the live objects of the sites that grew most since\n"
	 "the mark or the start, merged, with live, growth and age in GCs: found inside\n"
	 "the JVM without a heap dump, in one walk of what could hold them, within\n"
	 ":live --time/--memory; it pauses the JVM for a full GC, the JVM's class\n"
	 "histogram and the walk: on H2 in 1 GB, 0.2x a heap dump's pause on JDK 17\n"
	 "and 0.6x on JDK 25 (docs/performance.md);\n"
	 "mark first, then leaks; of a JFR recording made with path-to-gc-roots=true:\n"
	 "its old object samples').\n"
	 "Live counts are taken after a full GC; --live sorts by live bytes."},
	{"dynsize", sh_cmd_dynsize, ":dynsize ID|CLASS [--exact] [--top N]",
	 "Dynamic size: the shallow sizes of everything an object reaches (its fields,\n"
	 "array elements, and the statics of Class objects it refers to), shared or\n"
	 "not. For an ID, exact. For a CLASS, its instances largest first (exact up to\n"
	 "256 instances or with --exact, else estimates shown as ~N), and the exact size\n"
	 "of what they reach together.\n"
	 "CSV header: id,class,shallow_bytes,retained_bytes,dynamic_bytes."},
	{"top", sh_cmd_top, ":top [--by dynamic|retained|shallow] [--class C] [--top N]",
	 "The largest objects (of classes matching C) by dynamic, retained (the\n"
	 "default) or shallow size, 25 unless --top. By dynamic size the estimates\n"
	 "pick the candidates and the sizes shown are exact."},
	{"graphstats", sh_cmd_graphstats, ":graphstats",
	 "Statistics of the heap graph as in the thesis's tables 5.1 and 5.2: nodes,\n"
	 "references, strongly connected components, (dominating) articulation points,\n"
	 "heights and widths of the SCC DAG and of the dominator trees."},
	{"sizediff", sh_cmd_sizediff, ":sizediff [--exact]",
	 "How many objects have dynamic size minus retained size in each range (the\n"
	 "thesis's table 5.3): where sharing hides memory from retained sizes. Uses\n"
	 "estimates where exact sizes are not known yet, unless --exact."},
	{"duplicates", sh_cmd_duplicates, ":duplicates [--top N] [--min-count N] [--width N]",
	 "Strings with the same text: what each text costs and what its copies waste\n"
	 "(what String.intern() or a deduplicating cache would give back), most wasted\n"
	 "first; the 20 first unless --top (0: all), texts held by 2 Strings or more\n"
	 "unless --min-count, at most 40 characters of each shown unless --width.\n"
	 "Texts are compared whole; a value array several copies share counts once.\n"
	 "As lua/duplicate_strings.lua. CSV header:\n"
	 "text,length,count,copy_bytes,total_bytes,wasted_bytes."},
	{"collections", sh_cmd_collections, ":collections [--threshold PCT] [--all]",
	 "Empty and sparse collections per class (ArrayList, Vector, HashMap,\n"
	 "LinkedHashMap, HashSet, LinkedHashSet, ArrayDeque, ConcurrentHashMap and\n"
	 "their subclasses, each under its own name) and the bytes their unused slots\n"
	 "waste: sparse means filled under PCT% of the capacity (default 25); an empty\n"
	 "one wastes its backing array when nothing else refers to it. --all lists the\n"
	 "classes with no empty or sparse instance too. The last row is the total.\n"
	 "As lua/collections.lua. CSV header:\n"
	 "class,kind,instances,empty,sparse,unused_slots,wasted_bytes."},
	{"report", sh_cmd_report, ":report FILE.html",
	 "Write an HTML report of the heap to FILE.html: one self-contained page (no\n"
	 "network, no other files, no JavaScript) to attach to a ticket, with the\n"
	 "summary of :info, the top dominators as a pie chart, the leak suspects with\n"
	 "their paths (:suspects), the classes by retained size (:histogram --by\n"
	 "retained), duplicate strings (:duplicates) and wasteful collections\n"
	 "(:collections). Also: heapsh --report FILE.html DUMP."},
	{"path", sh_cmd_path, ":path ID|CLASS [--all N] [--merged] [--weak] [--no-weak]",
	 "Shortest path from a GC root to ID; --all N gives up to N paths from distinct\n"
	 "roots. For a CLASS (or with --merged): the shortest paths of all its\n"
	 "instances merged into one tree from the roots, with how many pass each node,\n"
	 "the objects of one class at each step in one row; through strong references\n"
	 "only, as Eclipse MAT merges them, unless --weak. --no-weak ignores\n"
	 "Reference.referent (weak, soft, phantom, final) links."},
	{"format", cmd_format, ":format [table|csv|json]",
	 "Show or set the output mode for results."},
	{"open", cmd_open, ":open DUMP [--dump N] | :open REC.jfr",
	 "Open another dump (HPROF, gzip'd HPROF, Android's). A file holding several\n"
	 "heap dumps (the old HPROF agent writes one per request) opens at its first;\n"
	 "--dump N opens the N-th. A JFR recording (REC.jfr) is read for its\n"
	 "allocation events, which the :alloc views and the query language's\n"
	 "allocations then show (the dump, if any, stays open); it needs a JDK's java."},
	{"load", cmd_load, ":load FILE", "Run the commands in FILE, one per line."},
	{"timer", cmd_timer, ":timer on|off",
	 "Report how long each command or query takes (wall time, on stderr)."},
	{"help", cmd_help, ":help [COMMAND]", "List the commands, or explain one."},
	{"quit", cmd_quit, ":quit", "Leave heapsh (Ctrl-D does the same)."},
	{NULL, NULL, NULL, NULL}
};
