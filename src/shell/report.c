/*
 * report.c - the HTML report (:report FILE.html, heapsh --report): one
 * self-contained page to attach to a ticket, with the heap's summary, where
 * the memory is (the top dominators as an SVG pie chart), the leak suspects
 * with their paths, the classes by retained size, duplicate strings and
 * wasteful collections. No network, no external files, no JavaScript: CSS
 * and SVG inline. This file only formats; the figures come from the engine
 * (domtree.h, suspects.h, waste.h, path.h) and the shell's own commands.
 * Every text from the heap is HTML-escaped.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../base/fmt.h"
#include "../out/out.h"
#include "sh.h"

#define TOP_DOMINATORS 10	/* pie slices, then "other" */
#define TOP_CLASSES 20
/* the classes measured exactly: one traversal of the heap measures 64 (dom_retained_sets) */
#define REPORT_CANDIDATES 64
#define TOP_STRINGS 20
#define TEXT_WIDTH 80		/* characters of a duplicate text shown */

/* Slice colours (Tableau 10, cyan for its grey); "other" is grey. */
static const char *const palette[TOP_DOMINATORS] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#17becf",
};
static const char other_colour[] = "#c7c7c7";

/* esc: s as HTML text or attribute value; C0 controls but tab and newline as U+FFFD. */
static void esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
				fputs("&#xfffd;", f);
			else
				fputc(c, f);
		}
	}
}

/* esc_code: as esc, with `...` spans (the suspects' sentences) as <code>. */
static void esc_code(FILE *f, const char *s)
{
	size_t ticks = 0;
	for (const char *p = s; *p; p++)
		ticks += *p == '`';
	if (ticks % 2) {
		esc(f, s);
		return;
	}
	bool open = false;
	for (const char *p = s; *p;) {
		const char *q = strchr(p, '`');
		size_t n = q ? (size_t)(q - p) : strlen(p);
		char *part = xstrndup(p, n);
		esc(f, part);
		free(part);
		if (!q)
			break;
		fputs(open ? "</code>" : "<code>", f);
		open = !open;
		p = q + 1;
	}
}

/* bytes: a byte count as people read it, the exact count in its tooltip. */
static void bytes(FILE *f, uint64_t n)
{
	char b[32];
	fprintf(f, "<span title=\"%" PRIu64 " bytes\">%s</span>", n, fmt_bytes(b, sizeof b, n));
}

static void count(FILE *f, uint64_t n)
{
	char b[32];
	fputs(fmt_count(b, sizeof b, n), f);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* object: "0x... label" for object i, escaped, the id in <code>. */
static void object(FILE *f, const struct heap *h, uint32_t i)
{
	char *l = heap_object_label(h, i);
	fprintf(f, "<code>0x%" PRIx64 "</code> ", heap_id(h, i));
	esc(f, l);
	free(l);
}

/* ---- sections ---- */

static const char style[] =
	"body{font:14px/1.45 system-ui,-apple-system,'DejaVu Sans',sans-serif;color:#222;"
	"margin:0 auto;max-width:1100px;padding:16px 24px}"
	"h1{font-size:22px;margin:8px 0 2px}h2{font-size:18px;margin:28px 0 8px;"
	"border-bottom:2px solid #4e79a7;padding-bottom:3px}"
	".sub{color:#666;margin:0 0 10px}nav a{margin-right:14px;color:#4e79a7}"
	"table{border-collapse:collapse;width:100%}th,td{padding:4px 8px;vertical-align:top;"
	"border-bottom:1px solid #e4e4e4;text-align:left}th{background:#f3f5f8}"
	"td.n,th.n{text-align:right;white-space:nowrap}"
	"table.kv{width:auto}table.kv th{background:none;font-weight:600;padding-right:24px}"
	"code{font:12.5px 'DejaVu Sans Mono',monospace;background:#f3f3f3;padding:0 2px;"
	"overflow-wrap:anywhere}"
	".chart{display:flex;gap:28px;align-items:flex-start;flex-wrap:wrap}"
	".chart svg{flex:none}.chart table{flex:1;min-width:420px}"
	".sw{display:inline-block;width:12px;height:12px;border-radius:2px;"
	"vertical-align:-1px;margin-right:6px}"
	"ol.path{margin:6px 0 0;padding-left:22px;color:#333}ol.path li{margin:1px 0}"
	".acc{margin-top:4px;color:#444}.none{color:#666;font-style:italic}"
	"tr.total td{font-weight:600;border-top:2px solid #ccc}"
	"footer{margin-top:32px;color:#888;font-size:12px}";

/* The facts :info shows that a reader of a ticket needs. */
static void summary(FILE *f, struct sh *sh, struct dom_tree *t)
{
	const struct heap *h = hs_heap(sh->ss);
	fputs("<section id=\"summary\"><h2>Summary</h2><table class=\"kv\">\n", f);
	struct hs_live_info li;
	if (!hs_get_live(sh->ss, &li) || !li.snap_time) {
		fputs("<tr><th>File</th><td><code>", f);
		esc(f, h->hp->path);
		fputs("</code></td></tr>\n", f);
	} else {
		/* a snapshot's file is a temporary one, gone when the session ends: name the JVM */
		char *label = sh_heap_label(sh);
		fputs("<tr><th>Heap</th><td>", f);
		esc(f, label);
		fputs("</td></tr>\n", f);
		free(label);
	}
	fputs("<tr><th>Dump size</th><td>", f);
	bytes(f, h->hp->file_size);
	if (h->hp->gzip) {
		fputs(" (gzip; ", f);
		bytes(f, h->hp->size);
		fputs(" inflated)", f);
	}
	fprintf(f, "</td></tr>\n<tr><th>Format</th><td>JAVA PROFILE 1.0.%d", h->hp->minor);
	if (h->ndumps > 1)
		fprintf(f, "; heap dump %u of the %u in the file", h->dump, h->ndumps);
	time_t ts = (time_t)(h->hp->timestamp_ms / 1000);
	char when[64];
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", gmtime(&ts));
	fprintf(f, "</td></tr>\n<tr><th>Dumped at</th><td>%s</td></tr>\n", when);
	char *ver = heap_system_property(h, "java.runtime.version");
	if (!ver)
		ver = heap_system_property(h, "java.version");
	char *vm = heap_system_property(h, "java.vm.name");
	fputs("<tr><th>JDK</th><td>", f);
	esc(f, ver ? ver : "unknown");
	if (vm) {
		fputs(", ", f);
		esc(f, vm);
	}
	free(ver);
	free(vm);
	fputs("</td></tr>\n<tr><th>Objects</th><td>", f);
	count(f, h->n);
	fputs("</td></tr>\n<tr><th>Classes</th><td>", f);
	count(f, h->nclasses);
	fputs("</td></tr>\n<tr><th>GC roots</th><td>", f);
	count(f, h->nroots);
	fputs("</td></tr>\n<tr><th>Threads</th><td>", f);
	count(f, h->nthreads);
	fputs("</td></tr>\n<tr><th>Shallow bytes</th><td>", f);
	bytes(f, h->total_shallow);
	fputs(" (every object in the dump)</td></tr>\n<tr><th>Reachable</th><td>", f);
	bytes(f, dom_retained(t, h->n));
	fputs(" in ", f);
	count(f, t->nreach);
	fputs(" objects: what the GC roots retain</td></tr>\n<tr><th>Unreachable</th><td>", f);
	bytes(f, h->total_shallow - dom_retained(t, h->n));
	fputs(" in ", f);
	count(f, h->n - t->nreach);
	fputs(" objects (garbage the dump still held)</td></tr>\n", f);
	fprintf(f, "<tr><th>Object header</th><td>%d bytes (references %d bytes: ",
		h->header_size, h->oop_size);
	esc(f, h->oop_source);
	fputs(")</td></tr>\n", f);
	if (h->art_layout)
		fputs("<tr><th>Object layout</th><td>Android</td></tr>\n", f);
	if (h->dangling_refs || h->dangling_roots) {
		fputs("<tr><th>Dangling</th><td>", f);
		count(f, h->dangling_refs);
		fputs(" references and ", f);
		count(f, h->dangling_roots);
		fputs(" GC roots to objects missing from the dump</td></tr>\n", f);
	}
	if (h->damaged) {
		fputs("<tr><th>Damage</th><td>", f);
		esc(f, h->damage);
		fputs(" (", f);
		bytes(f, h->lost_bytes);
		fputs(" lost)</td></tr>\n", f);
	}
	fprintf(f, "<tr><th>Dominator tree</th><td>%s%s</td></tr>\n",
		t->from_index ? "read from the index file" : "computed for this report",
		hs_get_options(sh->ss).no_weak ? "; Reference.referent links ignored (--no-weak)" : "");
	fputs("</table></section>\n", f);
}

/* pie: the slices (bytes each, of total) as an SVG pie chart, class "slice" each. */
static void pie(FILE *f, const uint64_t *part, const char *const *colour, char **title,
		uint32_t n, uint64_t total)
{
	const double cx = 160, cy = 160, r = 150;
	fputs("<svg width=\"320\" height=\"320\" "
	      "viewBox=\"0 0 320 320\" role=\"img\" aria-label=\"retained bytes of the top "
	      "dominators\">\n", f);
	double a0 = -M_PI / 2;
	for (uint32_t k = 0; k < n; k++) {
		double frac = total ? (double)part[k] / (double)total : 0;
		double a1 = a0 + frac * 2 * M_PI;
		if (frac >= 0.9999) {
			fprintf(f, "<circle class=\"slice\" cx=\"%.0f\" cy=\"%.0f\" r=\"%.0f\" "
				"fill=\"%s\" stroke=\"#fff\">", cx, cy, r, colour[k]);
			fputs("<title>", f);
			esc(f, title[k]);
			fputs("</title></circle>\n", f);
		} else {
			fprintf(f, "<path class=\"slice\" d=\"M%.2f %.2fL%.2f %.2fA%.0f %.0f 0 %d 1 "
				"%.2f %.2fZ\" fill=\"%s\" stroke=\"#fff\" stroke-width=\"1\">",
				cx, cy, cx + r * cos(a0), cy + r * sin(a0), r, r, frac > 0.5,
				cx + r * cos(a1), cy + r * sin(a1), colour[k]);
			fputs("<title>", f);
			esc(f, title[k]);
			fputs("</title></path>\n", f);
		}
		a0 = a1;
	}
	fputs("</svg>\n", f);
}

static void dominators(FILE *f, const struct heap *h, struct dom_tree *t)
{
	uint32_t n;
	uint32_t *ch = dom_children_top(t, h->n, TOP_DOMINATORS, &n);
	uint64_t total = dom_retained(t, h->n), shown = 0;
	uint32_t top = n < TOP_DOMINATORS ? n : TOP_DOMINATORS;
	uint64_t part[TOP_DOMINATORS + 1];
	const char *colour[TOP_DOMINATORS + 1];
	char *title[TOP_DOMINATORS + 1];
	char b[32];
	for (uint32_t k = 0; k < top; k++) {
		part[k] = dom_retained(t, ch[k]);
		shown += part[k];
		colour[k] = palette[k];
		char *l = heap_object_label(h, ch[k]);
		title[k] = xasprintf("%s: %s (%.1f%%)", l, fmt_bytes(b, sizeof b, part[k]),
				     pct(part[k], total));
		free(l);
	}
	uint32_t slices = top;
	if (n > top) {
		part[slices] = total - shown;
		colour[slices] = other_colour;
		title[slices] = xasprintf("%u other objects: %s (%.1f%%)", n - top,
					  fmt_bytes(b, sizeof b, total - shown), pct(total - shown, total));
		slices++;
	}
	fputs("<section id=\"dominators\"><h2>Where the memory is</h2>\n<p class=\"sub\">The "
	      "objects the GC roots dominate directly, largest retained size first: each "
	      "keeps alive what the collector would free if it went away. ", f);
	count(f, n);
	fputs(" objects retain the ", f);
	bytes(f, total);
	fputs(" reachable.</p>\n<div class=\"chart\">\n", f);
	pie(f, part, colour, title, slices, total);
	fputs("<table id=\"dominator-legend\"><tr><th>Object</th><th class=\"n\">Retained</th>"
	      "<th class=\"n\">% of heap</th></tr>\n", f);
	for (uint32_t k = 0; k < slices; k++) {
		fprintf(f, "<tr class=\"legend\"><td><span class=\"sw\" style=\"background:%s\">"
			"</span>", colour[k]);
		if (k < top)
			object(f, h, ch[k]);
		else
			fprintf(f, "%u other objects", n - top);
		fputs("</td><td class=\"n\">", f);
		bytes(f, part[k]);
		fprintf(f, "</td><td class=\"n\">%.1f%%</td></tr>\n", pct(part[k], total));
		free(title[k]);
	}
	fputs("</table>\n</div></section>\n", f);
	free(ch);
}

/* root_kind: the kind of the first GC root naming object i, or NULL. */
static const char *root_kind(const struct heap *h, uint32_t i)
{
	for (uint32_t r = 0; r < h->nroots; r++)
		if (h->roots[r].obj == i)
			return heap_root_kind_name(h->roots[r].kind);
	return NULL;
}

static void suspects(FILE *f, const struct heap *h, struct dom_tree *t, struct suspect *s,
		     uint32_t n, const struct sus_opts *o)
{
	uint64_t total = dom_retained(t, h->n);
	char how[256];
	fputs("<section id=\"suspects\"><h2>Leak suspects</h2>\n<p class=\"sub\">", f);
	fprintf(f, "Where %.0f%% or more of the reachable heap piles up in many similar objects "
		"(as Eclipse MAT's leak suspects), with the accumulation point and the "
		"shortest path to it from a GC root.</p>\n", o->threshold_pct);
	if (!n) {
		fprintf(f, "<p class=\"none\">No leak suspects: nothing keeps %.0f%% or more of the "
			"heap.</p></section>\n", o->threshold_pct);
		return;
	}
	fputs("<table id=\"suspects-table\"><tr><th class=\"n\">#</th><th>Suspect</th>"
	      "<th class=\"n\">Retained</th><th class=\"n\">% of heap</th></tr>\n", f);
	for (uint32_t k = 0; k < n; k++) {
		fprintf(f, "<tr class=\"suspect\"><td class=\"n\">%u</td><td>", k + 1);
		esc_code(f, s[k].description);
		fputs("<div class=\"acc\">Accumulation point: ", f);
		object(f, h, s[k].acc);
		fputs("</div>", f);
		const struct path *p = &s[k].path;
		if (p->len) {
			fputs("<ol class=\"path\">", f);
			for (uint32_t j = 0; j < p->len; j++) {
				fputs("<li>", f);
				if (j) {
					path_via(h, p->nodes[j - 1], p->nodes[j], how, sizeof how);
					fputs("<code>", f);
					esc(f, how);
					fputs("</code> &rarr; ", f);
				}
				object(f, h, p->nodes[j]);
				const char *rk = j ? NULL : root_kind(h, p->nodes[j]);
				if (rk) {
					fputs(" <em>(GC root: ", f);
					esc(f, rk);
					fputs(")</em>", f);
				}
				fputs("</li>", f);
			}
			fputs("</ol>", f);
		}
		fputs("</td><td class=\"n\">", f);
		bytes(f, s[k].retained);
		fprintf(f, "</td><td class=\"n\">%.1f%%</td></tr>\n", pct(s[k].retained, total));
	}
	fputs("</table></section>\n", f);
}

static void classes(FILE *f, const struct heap *h, struct dom_tree *t, const uint32_t *cls,
		    const uint64_t *ret, uint32_t n)
{
	uint64_t total = dom_retained(t, h->n);
	fprintf(f, "<section id=\"classes\"><h2>Classes by retained size</h2>\n<p class=\"sub\">What "
	      "all the instances of a class keep alive together (as <code>:histogram --by "
	      "retained</code>), measured for the %d classes whose instances keep the most each "
	      "on their own.</p>\n<table id=\"classes-table\"><tr><th>Class</th>"
	      "<th class=\"n\">Instances</th><th class=\"n\">Shallow</th>"
	      "<th class=\"n\">Retained</th><th class=\"n\">%% of heap</th></tr>\n", REPORT_CANDIDATES);
	for (uint32_t k = 0; k < n && k < TOP_CLASSES; k++) {
		const struct heap_class *c = &h->classes[cls[k]];
		fputs("<tr class=\"class\"><td><code>", f);
		esc(f, c->name);
		fputs("</code></td><td class=\"n\">", f);
		count(f, c->count);
		fputs("</td><td class=\"n\">", f);
		bytes(f, c->shallow);
		fputs("</td><td class=\"n\">", f);
		bytes(f, ret[k]);
		fprintf(f, "</td><td class=\"n\">%.1f%%</td></tr>\n", pct(ret[k], total));
	}
	fputs("</table></section>\n", f);
}

static void duplicates(FILE *f, const struct waste_dup *d, uint32_t n)
{
	uint64_t wasted = 0;
	for (uint32_t k = 0; k < n; k++)
		wasted += d[k].wasted_bytes;
	fputs("<section id=\"duplicates\"><h2>Duplicate strings</h2>\n<p class=\"sub\">", f);
	count(f, n);
	fprintf(f, " text%s held by two or more <code>java.lang.String</code> objects waste ",
		fmt_s(n));
	bytes(f, wasted);
	fputs(" in all (what interning them would give back); the most wasteful first "
	      "(as <code>:duplicates</code>).</p>\n", f);
	if (!n) {
		fputs("</section>\n", f);
		return;
	}
	fputs("<table id=\"duplicates-table\"><tr><th>Text</th><th class=\"n\">Length</th>"
	      "<th class=\"n\">Copies</th><th class=\"n\">One copy</th>"
	      "<th class=\"n\">Wasted</th></tr>\n", f);
	for (uint32_t k = 0; k < n && k < TOP_STRINGS; k++) {
		char *text = waste_text_show(d[k].text, TEXT_WIDTH);
		fputs("<tr class=\"dup\"><td><code>", f);
		esc(f, text);
		free(text);
		fputs("</code></td><td class=\"n\">", f);
		count(f, d[k].length);
		fputs("</td><td class=\"n\">", f);
		count(f, d[k].count);
		fputs("</td><td class=\"n\">", f);
		bytes(f, d[k].copy_bytes);
		fputs("</td><td class=\"n\">", f);
		bytes(f, d[k].wasted_bytes);
		fputs("</td></tr>\n", f);
	}
	fputs("</table></section>\n", f);
}

static void collections(FILE *f, const struct waste_coll *c, uint32_t n,
			const struct waste_coll *total)
{
	fputs("<section id=\"collections\"><h2>Wasteful collections</h2>\n<p class=\"sub\">Empty "
	      "collections, and sparse ones (filled under 25% of their capacity), per class, "
	      "with the slots they leave unused and the bytes those cost (as "
	      "<code>:collections</code>).</p>\n", f);
	if (!n) {
		fputs("<p class=\"none\">None.</p></section>\n", f);
		return;
	}
	fputs("<table id=\"collections-table\"><tr><th>Class</th><th>Kind</th>"
	      "<th class=\"n\">Instances</th><th class=\"n\">Empty</th><th class=\"n\">Sparse</th>"
	      "<th class=\"n\">Unused slots</th><th class=\"n\">Wasted</th></tr>\n", f);
	for (uint32_t k = 0; k <= n; k++) {
		const struct waste_coll *r = k < n ? &c[k] : total;
		fputs(k < n ? "<tr class=\"coll\"><td><code>" : "<tr class=\"total\"><td>", f);
		esc(f, r->name);
		fputs(k < n ? "</code></td><td>" : "</td><td>", f);
		esc(f, r->kind);
		fputs("</td><td class=\"n\">", f);
		count(f, r->instances);
		fputs("</td><td class=\"n\">", f);
		count(f, r->empty);
		fputs("</td><td class=\"n\">", f);
		count(f, r->sparse);
		fprintf(f, "</td><td class=\"n\">%" PRId64 "</td><td class=\"n\">", r->unused_slots);
		bytes(f, r->wasted_bytes > 0 ? (uint64_t)r->wasted_bytes : 0);
		fputs("</td></tr>\n", f);
	}
	fputs("</table></section>\n", f);
}

/* by_bytes: class indices by shallow bytes, largest first, then by name and id (as :histogram). */
static const struct heap *sort_heap;
static int by_bytes(const void *a, const void *b)
{
	const struct heap_class *x = &sort_heap->classes[*(const uint32_t *)a];
	const struct heap_class *y = &sort_heap->classes[*(const uint32_t *)b];
	if (x->shallow != y->shallow)
		return x->shallow < y->shallow ? 1 : -1;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->id > y->id) - (x->id < y->id);
}

/*
 * classes_by_retained: the classes with instances, each with the bytes
 * freed if all its instances went away together, largest first, in two
 * new arrays of *n the caller frees; only the candidates classes whose
 * instances keep the most each on their own are measured
 * (dom_classes_by_retained). HS_INTERRUPTED (not reported) on Ctrl-C.
 */
static int classes_by_retained(const struct heap *h, struct dom_tree *t, uint32_t candidates,
			       uint32_t **classes, uint64_t **retained, uint32_t *n)
{
	uint32_t *v = xmallocarray((size_t)h->nclasses + 1, sizeof *v), m = 0;
	for (uint32_t c = 0; c < h->nclasses; c++)
		if (h->classes[c].count)
			v[m++] = c;
	sort_heap = h;
	qsort(v, m, sizeof *v, by_bytes);
	*classes = NULL;
	*retained = NULL;
	*n = 0;
	if (dom_classes_by_retained(t, v, &m, candidates, retained) != HS_OK) {
		free(v);
		return HS_INTERRUPTED;
	}
	*classes = v;
	*n = m;
	return HS_OK;
}

/* ---- the page ---- */

int sh_report(struct sh *sh, const char *path)
{
	if (sh_need_heap(sh))
		return HS_ERR;
	/* The file first: an unwritable path fails before minutes of work. */
	FILE *f = fopen(path, "w");
	if (!f)
		return sh_error(sh, NULL, "cannot write the report to '%s': %s", path,
				strerror(errno));
	struct suspect *sus = NULL;
	uint32_t nsus = 0, ncls = 0, ndup = 0, ncoll = 0;
	uint32_t *cls = NULL;
	uint64_t *ret = NULL;
	struct waste_dup *dup = NULL;
	struct waste_coll *coll = NULL, total;
	struct sus_opts so = {10, 80};
	int st = hs_suspects(sh->ss, &so, hs_get_options(sh->ss).no_weak, NULL, &sus, &nsus, NULL);
	if (st == HS_ERR) {
		sh_error(sh, NULL, "%s", hs_errmsg(sh->ss));
		goto fail;
	}
	if (st != HS_OK)
		goto interrupted;
	struct dom_tree *t = hs_dom(sh->ss, hs_get_options(sh->ss).no_weak);	/* made by hs_suspects */
	const struct heap *h = hs_heap(sh->ss);
	sh_progress_begin("retained sizes per class");
	st = classes_by_retained(hs_heap(sh->ss), t, REPORT_CANDIDATES, &cls, &ret, &ncls);
	sh_progress_end();
	if (st != HS_OK || waste_dup_strings(h, 2, &dup, &ndup) != HS_OK ||
	    waste_collections(h, 25, false, &coll, &ncoll, &total) != HS_OK)
		goto interrupted;

	/* a dump's file name; a snapshot's is temporary: the JVM it was taken of */
	struct hs_live_info li;
	char *label = hs_get_live(sh->ss, &li) && li.snap_time ? sh_heap_label(sh) : NULL;
	const char *base = strrchr(h->hp->path, '/');
	base = label ? label : base ? base + 1 : h->hp->path;
	time_t now = time(NULL);
	char when[64];
	strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>Heap report: ", f);
	esc(f, base);
	fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<header><h1>Heap report: <code>",
		style);
	esc(f, base);
	fprintf(f, "</code></h1><p class=\"sub\">Written by heapsh %s on %s.</p>\n"
		"<nav><a href=\"#summary\">Summary</a><a href=\"#dominators\">Where the memory "
		"is</a><a href=\"#suspects\">Leak suspects</a><a href=\"#classes\">Classes</a>"
		"<a href=\"#duplicates\">Duplicate strings</a><a href=\"#collections\">"
		"Collections</a></nav></header>\n", HEAPSH_VERSION, when);
	free(label);
	summary(f, sh, t);
	dominators(f, h, t);
	suspects(f, h, t, sus, nsus, &so);
	classes(f, h, t, cls, ret, ncls);
	duplicates(f, dup, ndup);
	collections(f, coll, ncoll, &total);
	fputs("<footer>Sizes are shallow sizes as HotSpot lays objects out; retained sizes come "
	      "from the dominator tree of the object graph. heapsh's manual explains each "
	      "figure.</footer>\n</body>\n</html>\n", f);
	sus_free(sus, nsus);
	free(cls);
	free(ret);
	waste_dup_free(dup, ndup);
	free(coll);
	if (ferror(f) | (fclose(f) != 0)) {
		int e = errno;
		unlink(path);
		return sh_error(sh, NULL, "cannot write the report to '%s': %s", path, strerror(e));
	}
	if (out_mode == OUT_TABLE)
		out_printf("report written to %s\n", path);
	return HS_OK;
interrupted:
	sh_error(sh, NULL, "interrupted; no report written");
fail:
	if (sus)
		sus_free(sus, nsus);
	free(cls);
	free(ret);
	waste_dup_free(dup, ndup);
	free(coll);
	fclose(f);
	unlink(path);
	return HS_ERR;
}

int sh_cmd_report(struct sh *sh, int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-')
		return sh_error(sh, NULL, "usage: :report FILE.html");
	return sh_report(sh, argv[1]);
}
