/*
 * suspects_cmd.c - :suspects, the leak suspects of the open heap
 * (src/engine/suspects.h) as a table: in table mode one block per suspect
 * wrapped to the terminal, in CSV and JSON one row each with the full text.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <time.h>

#include "../base/fmt.h"
#include "../out/out.h"
#include "sh.h"

static const char usage[] =
	":suspects [--threshold PCT] [--child PCT] [--baseline OLDER.hprof|previous|mark|none] [--no-weak]";

/* width: the terminal's columns, kept within 60..100; 80 when not a terminal. */
static int width(void)
{
	struct winsize ws;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col)
		return ws.ws_col < 60 ? 60 : ws.ws_col > 100 ? 100 : ws.ws_col;
	return 80;
}

/*
 * wrap: text after a first-line prefix, broken at spaces into lines of at
 * most cols columns, the lines after the first indented by indent spaces.
 */
static void wrap(const char *prefix, const char *text, int indent, int cols)
{
	int col = (int)strlen(prefix);
	out_printf("%s", prefix);
	const char *p = text;
	bool first = true;
	while (*p) {
		while (*p == ' ')
			p++;
		const char *e = p;
		while (*e && *e != ' ')
			e++;
		int w = (int)(e - p);
		if (!w)
			break;
		if (!first && col + 1 + w > cols) {
			out_printf("\n%*s", indent, "");
			col = indent;
		} else if (!first) {
			out_printf(" ");
			col++;
		}
		out_printf("%.*s", w, p);
		col += w;
		first = false;
		p = e;
	}
	out_printf("\n");
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

int sh_cmd_suspects(struct sh *sh, int argc, char **argv)
{
	struct sus_opts o = {10, 80};
	const char *base_path = NULL;
	bool no_weak = hs_get_options(sh->ss).no_weak;
	for (int a = 1; a < argc; a++) {
		const char *w = argv[a];
		if (!strcmp(w, "--threshold") || !strcmp(w, "--child")) {
			char *end;
			double v = a + 1 < argc ? strtod(argv[a + 1], &end) : 0;
			if (a + 1 >= argc || *end || !(v > 0 && v <= 100))
				return sh_error(sh, NULL, "%s wants a percentage above 0 and up to 100; "
						"usage: %s", w, usage);
			*(w[2] == 't' ? &o.threshold_pct : &o.child_pct) = v;
			a++;
		} else if (!strcmp(w, "--baseline")) {
			if (a + 1 >= argc)
				return sh_error(sh, NULL, "--baseline wants an older dump; usage: %s", usage);
			base_path = argv[++a];
		} else if (!strcmp(w, "--no-weak")) {
			no_weak = true;
		} else {
			return sh_error(sh, NULL, "unexpected '%s'; usage: %s", w, usage);
		}
	}
	/* In a running JVM, growth is known from the snapshot before this one. */
	/* In a running JVM, growth is known from the snapshot before this one, or else from the
	 * allocation recording's mark. */
	char since[96] = "since the baseline";
	uint64_t mark_ms = 0;
	struct hs_live_info li;
	hs_get_live(sh->ss, &li);
	if (base_path && !strcmp(base_path, "none"))
		base_path = NULL;
	else if ((!base_path && li.prev_time) || (base_path && !strcmp(base_path, "previous")))
		base_path = HS_PREVIOUS;
	else if ((!base_path || !strcmp(base_path, "mark")) && hs_alloc_marked(sh->ss, &mark_ms))
		base_path = HS_MARK;
	else if (base_path && !strcmp(base_path, "mark"))
		return sh_error(sh, NULL, "--baseline mark wants an attached JVM whose allocation "
				"recording has a mark (:alloc start, later :alloc mark)");
	struct tm tm;
	time_t when = base_path == HS_PREVIOUS ? li.prev_time : (time_t)(mark_ms / 1000);
	localtime_r(&when, &tm);
	if (base_path == HS_PREVIOUS)
		strftime(since, sizeof since, "since the snapshot of %H:%M:%S", &tm);
	else if (base_path == HS_MARK)
		strftime(since, sizeof since, "since the allocation recording's mark of %H:%M:%S", &tm);
	struct suspect *s;
	uint32_t n;
	struct sus_under under;
	if (hs_suspects(sh->ss, &o, no_weak, base_path, &s, &n, &under) != HS_OK)
		return sh_error(sh, NULL, "%s", hs_errmsg(sh->ss));
	const struct heap *h = hs_heap(sh->ss);
	struct dom_tree *t = hs_dom(sh->ss, no_weak);	/* made by hs_suspects */
	uint64_t reachable = dom_retained(t, h->n);
	if (out_mode != OUT_TABLE) {
		static const char *const cols[] = {"rank", "description", "retained_bytes", "heap_pct",
						   "objects", "accumulation_point", "holder", "where",
						   "path", "base_retained_bytes", "growth_bytes"};
		struct out_table *tb = out_table_new(base_path ? 11 : 9, cols);
		for (uint32_t i = 0; i < n; i++) {
			out_cell_u64(tb, i + 1);
			out_cell_str(tb, s[i].description);
			out_cell_u64(tb, s[i].retained);
			out_cell_fmt(tb, "%.1f", pct(s[i].retained, reachable));
			out_cell_u64(tb, s[i].npiled);
			char *l = heap_object_label(h, s[i].acc);
			out_cell_fmt(tb, "0x%" PRIx64 " %s", heap_id(h, s[i].acc), l);
			free(l);
			l = heap_object_label(h, s[i].holder);
			out_cell_fmt(tb, "0x%" PRIx64 " %s", heap_id(h, s[i].holder), l);
			free(l);
			out_cell_str(tb, s[i].where);
			char *p = sus_path_text(h, &s[i].path, false, 0);
			out_cell_str(tb, p);
			free(p);
			if (base_path) {
				if (s[i].has_base)
					out_cell_u64(tb, s[i].base_retained);
				else
					out_cell_null(tb);
				out_cell_i64(tb, s[i].growth);
			}
		}
		out_table_end(tb);
		sus_free(s, n);
		return HS_OK;
	}
	int cols = width();
	char b1[32], b2[32], head[192];
	for (uint32_t i = 0; i < n; i++) {
		snprintf(head, sizeof head, "%u. %s, %.1f%% of the heap", i + 1,
			 fmt_bytes(b1, sizeof b1, s[i].retained), pct(s[i].retained, reachable));
		if (base_path && pct(s[i].retained, reachable) < o.threshold_pct) {
			size_t l = strlen(head);
			snprintf(head + l, sizeof head - l, " (under the threshold)");
		}
		if (base_path) {
			size_t l = strlen(head);
			if (s[i].has_base)
				snprintf(head + l, sizeof head - l, "; %s%s %s",
					 s[i].growth < 0 ? "-" : "+",
					 fmt_bytes(b2, sizeof b2,
						   (uint64_t)(s[i].growth < 0 ? -s[i].growth : s[i].growth)),
					 since);
			else
				snprintf(head + l, sizeof head - l, "; not in the %s",
					 base_path == HS_PREVIOUS ? "previous snapshot"
					 : base_path == HS_MARK	  ? "allocation recording"
								  : "baseline");
		}
		out_printf("%s%s\n", i ? "\n" : "", head);
		wrap("   ", s[i].description, 3, cols);
		char *l = heap_object_label(h, s[i].acc);
		char *acc = xasprintf("0x%" PRIx64 " %s", heap_id(h, s[i].acc), l);
		free(l);
		wrap("   accumulation point: ", acc, 6, cols);
		free(acc);
		char *p = sus_path_text(h, &s[i].path, true, 9);
		wrap("   path: ", p, 9, cols);
		free(p);
	}
	char *last;
	uint32_t small = 0;
	for (uint32_t i = 0; i < n; i++)
		small += pct(s[i].retained, reachable) < o.threshold_pct;
	if (!n)
		last = xasprintf("no leak suspects: nothing keeps %g%% or more of the %s reachable",
				 o.threshold_pct, fmt_bytes(b1, sizeof b1, reachable));
	else if (base_path)
		last = xasprintf("%u suspect%s, largest growth %s first; %u of them "
				 "under %g%% of the %s reachable, listed as they grew (--format csv "
				 "for the full paths%s)", n, fmt_s(n), since, small, o.threshold_pct,
				 fmt_bytes(b1, sizeof b1, reachable),
				 base_path == HS_MARK ? "; growth estimated from the recording's classes, a "
							"class's shared among the suspects that pile it up; "
							"--baseline none: without growth"
				 : base_path == HS_PREVIOUS ? "; --baseline none: without growth" : "");
	else
		last = xasprintf("%u suspect%s; each keeps at least %g%% of the %s reachable "
				 "(--format csv for the full paths)",
				 n, fmt_s(n), o.threshold_pct, fmt_bytes(b1, sizeof b1, reachable));
	/* what lies under the threshold, and how to see it; how to see growth */
	const char *hint = base_path ? ""
			   : sh_is_live(sh) ? "; a later snapshot (:refresh), or an allocation recording's "
					      "mark (:alloc mark), ranks what grew since first, small ones included"
					    : "; --baseline OLDER.hprof ranks what grew first, small ones included";
	char *more;
	if (under.n) {
		char *l = heap_object_label(h, under.largest);
		more = xasprintf("%s. Under the %g%% threshold: %u place%s each keeping %g%% to %g%% "
				 "(%s together; the largest 0x%" PRIx64 " %s, %s): --threshold %g looks "
				 "at them%s", last, o.threshold_pct, under.n, fmt_s(under.n), under.low_pct,
				 o.threshold_pct, fmt_bytes(b2, sizeof b2, under.bytes),
				 heap_id(h, under.largest), l, fmt_bytes(b1, sizeof b1, under.largest_bytes),
				 under.low_pct, hint);
		free(l);
	} else {
		more = xasprintf("%s. Under the %g%% threshold nothing keeps %g%% or more on its own%s",
				 last, o.threshold_pct, under.low_pct, base_path ? "" : hint);
	}
	free(last);
	last = more;
	if (n)
		out_printf("\n");
	wrap("", last, 0, cols);
	free(last);
	sus_free(s, n);
	return HS_OK;
}
