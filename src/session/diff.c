/*
 * diff.c - comparing two dumps of one program (hs_diff, session.h): the
 * older dump opened in a session of its own, the two checked to be
 * comparable, and the engine's comparison (engine/hdiff.h) run on both
 * dominator trees.
 */
#include "session_internal.h"
#include "guard.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* jdk_of: the feature version of h's JDK and, in *version, java.version (malloc'd) or NULL. */
static int jdk_of(const struct heap *h, char **version)
{
	*version = heap_system_property(h, "java.version");
	if (*version) {
		const char *v = *version;
		if (!strncmp(v, "1.", 2))	/* 1.8.0_412: JDK 8 */
			v += 2;
		int f = atoi(v);
		if (f > 0)
			return f;
	}
	return h->use_layout && !h->layout_forced ? h->layout.jdk : 0;
}

static void side(struct hs_diff_side *sd, const char *file, const struct dom_tree *t)
{
	const struct heap *h = t->h;
	sd->file = xstrdup(file);
	sd->objects = h->n;
	sd->reachable_bytes = dom_retained(t, h->n);
	sd->jdk = jdk_of(h, &sd->java_version);
}

/* comparable: HS_OK when the dumps can be compared (or, with mixed, a notice says why not quite). */
static int comparable(struct hs_session *s, struct hs_diff *d, const struct heap *h[2], bool mixed)
{
	if (h[0]->hp->id_size != h[1]->hp->id_size)
		return hs_fail(s, "OLD %s has %d-byte identifiers and NEW %s %d-byte ones: dumps of "
			       "different JVMs (32- and 64-bit) cannot be compared",
			       d->side[0].file, h[0]->hp->id_size, d->side[1].file, h[1]->hp->id_size);
	int a = d->side[0].jdk, b = d->side[1].jdk;
	if (a && b && a != b) {
		char what[600];
		snprintf(what, sizeof what, "OLD %s is of JDK %d%s%s%s and NEW %s of JDK %d%s%s%s: object "
			 "sizes and the JDK's own classes differ between JDKs, so growth would mix "
			 "the program's with the JDK's", d->side[0].file, a,
			 d->side[0].java_version ? " (" : "",
			 d->side[0].java_version ? d->side[0].java_version : "",
			 d->side[0].java_version ? ")" : "", d->side[1].file, b,
			 d->side[1].java_version ? " (" : "",
			 d->side[1].java_version ? d->side[1].java_version : "",
			 d->side[1].java_version ? ")" : "");
		if (!mixed)
			return hs_fail(s, "%s; compare dumps of one JDK (--mixed-jdk compares anyway)",
				       what);
		hs_notify(s, HS_NOTICE_ALWAYS, "heapsh: warning: %s", what);
	} else if (h[0]->oop_size != h[1]->oop_size) {
		hs_notify(s, HS_NOTICE_ALWAYS, "heapsh: warning: OLD has %d-byte references and NEW "
			  "%d-byte ones (compressed oops on in one JVM only): sizes differ by that too",
			  h[0]->oop_size, h[1]->oop_size);
	}
	return HS_OK;
}

static int p_diff(struct hs_session *s, struct hs_session **os, const char *older,
		  const struct hs_diff_opts *o, struct hs_diff *d)
{
	struct hs_error err;
	hs_error_clear(&err);
	/* the conditions first: a typo in one costs no load */
	d->r.conds = xcalloc((size_t)o->nfail_if + 1, sizeof *d->r.conds);
	for (uint32_t k = 0; k < o->nfail_if; k++) {
		if (hdiff_cond_parse(o->fail_if[k], &d->r.conds[k], &err) != HS_OK)
			return hs_fail(s, "%s", err.msg);
		d->r.nconds++;
	}
	struct dom_tree *t[2];
	if (hs_need_heap(s) != HS_OK)
		return HS_ERR;
	if (s->heap->damaged)
		return hs_fail(s, "NEW %s is damaged (cut short or malformed): what was lost would "
			       "count as shrinkage; compare whole dumps",
			       s->dump_path ? s->dump_path : "the heap");
	if (!(t[1] = hs_dom(s, o->no_weak)))
		return HS_ERR;
	bool snapshot = s->live && s->live->snap_time;
	char *label = snapshot || !s->dump_path ? hs_heap_label(s) : xstrdup(s->dump_path);
	side(&d->side[1], label, t[1]);
	free(label);
	if (older == HS_PREVIOUS) {
		if (!s->prev.heap)
			return hs_fail(s, "no earlier snapshot of this JVM to compare with");
		if (!s->prev.dom[o->no_weak]) {
			int st = dom_tree_build(s->prev.heap, o->no_weak, !s->no_spill,
						&s->prev.dom[o->no_weak]);
			if (st != HS_OK)
				return hs_fail(s, "the previous snapshot's dominator tree: interrupted");
			guard_keep(s);
		}
		t[0] = s->prev.dom[o->no_weak];
		char when[64];
		struct tm tm;
		strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&s->prev.when, &tm));
		char *prev = xasprintf("the previous snapshot (taken %s)", when);
		side(&d->side[0], prev, t[0]);
		free(prev);
	} else {
		/* the older dump in a session of its own, with this one's settings and hooks */
		struct hs_session *q = *os = hs_session_new();
		struct hs_options opt = hs_get_options(s);
		opt.dump = 0;
		hs_set_options(q, &opt);
		q->notice = s->notice;
		q->stage = s->stage;
		q->load_progress = s->load_progress;
		q->ctx = s->ctx;
		hs_set_progress(q, s->work.progress, s->work.progress_ud);
		s->older = q;	/* Ctrl-C (hs_interrupt(s)) stops its work too */
		if (hs_open(q, older) != HS_OK)
			return hs_fail(s, "OLD: %s", hs_errmsg(q));
		if (q->heap->damaged)
			return hs_fail(s, "OLD %s is damaged (cut short or malformed): what was lost "
				       "would count as growth; compare whole dumps", older);
		if (!(t[0] = hs_dom(q, o->no_weak)))
			return hs_fail(s, "OLD %s: %s", older, hs_errmsg(q));
		side(&d->side[0], older, t[0]);
	}
	const struct heap *h[2] = {t[0]->h, t[1]->h};
	if (comparable(s, d, h, o->mixed_jdk) != HS_OK)
		return HS_ERR;
	int st = hdiff_conds(t, d->r.conds, d->r.nconds, &err);
	if (st == HS_ERR)
		return hs_fail(s, "%s", err.msg);
	if (st == HS_OK) {
		struct hdiff_result rows;
		st = o->by == HDIFF_PATH ? hdiff_paths(t, o->top, &rows)
					 : hdiff_groups(t, o->by, o->top, &rows);
		d->r.rows = rows.rows;
		d->r.nrows = rows.nrows;
		d->r.candidates = rows.candidates;
	}
	if (st != HS_OK)
		return hs_fail(s, "comparing the dumps: interrupted");
	return HS_OK;
}

static int diff_guarded(struct hs_session *s, struct hs_session **os, const char *older,
			const struct hs_diff_opts *o, struct hs_diff *d)
{
	GUARDED(s, HS_ERR, p_diff(s, os, older, o, d));
}

int hs_diff(struct hs_session *s, const char *older, const struct hs_diff_opts *o, struct hs_diff *d)
{
	memset(d, 0, sizeof *d);
	struct hs_session *os = NULL;
	int st = diff_guarded(s, &os, older, o, d);
	s->older = NULL;
	hs_session_free(os);	/* the older dump's index is written by now */
	return st;
}

void hs_diff_free(struct hs_diff *d)
{
	for (int k = 0; k < 2; k++) {
		free(d->side[k].file);
		free(d->side[k].java_version);
	}
	hdiff_free(&d->r);
	memset(d, 0, sizeof *d);
}
