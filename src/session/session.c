/*
 * session.c - a session's heap and what is made of it: opening and closing
 * dumps, the index file, the dominator trees and the dynamic-size engine
 * (from memory, the index, or computed), and the query language's session
 * with its engine callbacks. The attached JVM is session/live.c's. See
 * session.h.
 */
#include "session_internal.h"
#include "guard.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../base/big.h"
#include "../base/fmt.h"
#include "../dsl/eval.h"

struct hs_session *hs_session_new(void)
{
	struct hs_session *s = xcalloc(1, sizeof *s);
	hs_error_clear(&s->err);
	/* A session made inside another's work (Lua's heapsh.open in the
	 * shell) starts with that one's budget and folder. */
	struct big_stats now;
	big_stats(&now);
	s->work.pool = big_pool_new(now.budget, now.dir);
	s->live_time_s = 60;
	s->live_mem_mb = 256;
	return s;
}

const char HS_PREVIOUS[] = "(the previous snapshot)";
const char HS_MARK[] = "(the allocation recording's mark)";

/* mark_growth: sus_class_growth's growth_of over a recording (ctx), by class name. */
static int64_t mark_growth(void *ctx, const char *cls)
{
	const struct alc_rec *r = ctx;
	double g = 0;
	for (uint32_t k = 0; k < r->nkeys; k++) {
		const struct alc_key *key = &r->keys[k];
		if (key->cls < r->nclasses && r->classes[key->cls] && !strcmp(r->classes[key->cls], cls))
			g += key->live_bytes - key->mark_bytes;
	}
	return (int64_t)llround(g);
}

void hs_drop_previous(struct hs_session *s)
{
	for (int k = 0; k < 2; k++) {
		dom_tree_free(s->prev.dom[k]);
		s->prev.dom[k] = NULL;
	}
	heap_free(s->prev.heap);
	s->prev.heap = NULL;
}

static void p_session_free(struct hs_session *s)
{
	hs_live_close(s);
	hs_drop_previous(s);
	hs_close_heap(s);
	alc_free(s->recording);
	free(s->recording_path);
	dsl_free(s->dsl);
	free(s->dump_path);
}

static void session_free_guarded(struct hs_session *s)
{
	GUARDED_VOID(s, p_session_free(s));
}

void hs_session_free(struct hs_session *s)
{
	if (!s)
		return;
	session_free_guarded(s);
	if (hs_ctx_now() == &s->work)
		hs_ctx_enter(NULL);
	big_pool_free(s->work.pool);
	free(s);
}

struct hs_ctx *guard_enter(struct hs_session *s)
{
	return hs_ctx_enter(&s->work);
}

void guard_caught(struct hs_session *s, struct hs_ctx *prev, const struct hs_catch *c,
		  uint64_t mark)
{
	big_pool_release(s->work.pool, mark);
	hs_ctx_enter(prev);
	hs_error_set(&s->err, -1, "%s", c->msg);
	if (s->stage)
		s->stage(s->ctx, NULL);
}

void guard_keep(struct hs_session *s)
{
	big_pool_keep(s->work.pool);
}

struct hs_ctx *hs_enter(struct hs_session *s)
{
	return hs_ctx_enter(&s->work);
}

void hs_interrupt(struct hs_session *s)
{
	hs_ctx_interrupt(&s->work);
	struct hs_session *older = s->older;	/* hs_diff reading the older dump: it stops too */
	if (older)
		hs_ctx_interrupt(&older->work);
}

void hs_set_progress(struct hs_session *s,
		     void (*fn)(void *ud, const char *what, uint64_t done, uint64_t total), void *ud)
{
	s->work.progress = fn;
	s->work.progress_ud = ud;
}

void hs_set_memory(struct hs_session *s, uint64_t budget, const char *dir)
{
	big_pool_configure(s->work.pool, budget, dir);
}

int hs_fail(struct hs_session *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->err.msg, sizeof s->err.msg, fmt, ap);
	va_end(ap);
	s->err.offset = -1;
	s->err.line = s->err.col = 0;
	return HS_ERR;
}

void hs_notify(struct hs_session *s, enum hs_notice when, const char *fmt, ...)
{
	if (!s->notice)
		return;
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	s->notice(s->ctx, when, text);
}

static void stage(struct hs_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void stage(struct hs_session *s, const char *fmt, ...)
{
	if (!s->stage)
		return;
	char label[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(label, sizeof label, fmt, ap);
	va_end(ap);
	s->stage(s->ctx, label);
}

static void stage_end(struct hs_session *s)
{
	if (s->stage)
		s->stage(s->ctx, NULL);
}

/* ---- the heap ---- */

static void p_close_heap(struct hs_session *s)
{
	if (s->heap) {
		/* a query session begun before any heap holds nothing of one: it stays (hs_dsl) */
		dsl_free(s->dsl);
		s->dsl = NULL;
	}
	for (int k = 0; k < 2; k++) {
		dom_tree_free(s->dom[k]);
		s->dom[k] = NULL;
	}
	hs_dyn_save(s);
	dyn_free(s->dyn);
	s->dyn = NULL;
	idx_close(s->idx);
	s->idx = NULL;
	s->adopt = 0;
	if (s->heap)
		s->gen++;
	heap_free(s->heap);
	s->heap = NULL;
}

void hs_close_heap(struct hs_session *s)
{
	GUARDED_VOID(s, p_close_heap(s));
}

struct load_ctx {
	struct hs_session *s;
	const char *path;
};

static void load_progress(void *ctx, double fraction)
{
	struct load_ctx *c = ctx;
	c->s->load_progress(c->s->ctx, c->path, fraction);
}

/*
 * index_room: what the index with the model will take next to the dump at
 * path, and whether there is room for it beside spill bytes of files in
 * spill_dir ("" when no index is written).
 */
static void index_room(const struct hs_session *s, const char *path, uint64_t objects,
		       uint64_t refs, uint64_t spill, const char *spill_dir, char *out, size_t cap)
{
	out[0] = 0;
	if (s->no_index || s->live || s->load_opts.dump > 1)
		return;
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = 0;	/* the root folder */
	else if (slash)
		*slash = 0;
	const char *where = slash ? dir : ".";
	uint64_t ix = heap_index_bytes(objects, refs), have = big_disk_free(where);
	/* The model's arrays that are in spill files by then move into the
	 * index as it is written (idx_put_parts): at most the model, 18 bytes
	 * per object and 4 per reference, at most the spill. */
	uint64_t model = ix - 8 * objects, moved = spill < model ? spill : model;
	struct stat a, b;
	bool shared = stat(where, &a) == 0 && stat(spill_dir, &b) == 0 && a.st_dev == b.st_dev;
	char ib[32], hb[32];
	fmt_bytes(ib, sizeof ib, ix);
	fmt_bytes(hb, sizeof hb, have);
	if (shared)
		snprintf(out, cap, "; the index, with the heap model, takes about %s more there%s", ib,
			 have && spill + ix - moved > have ? ", more than is left: it may be written "
							     "without the model" : "");
	else
		snprintf(out, cap, "; the index, with the heap model, takes about %s in %s (%s free)",
			 ib, where, hb);
	free(dir);
}

/* Past the memory budget: say so, with the disk it takes, before the wait. */
static void load_plan(void *ctx, uint64_t objects, uint64_t refs, uint64_t need, uint64_t spill)
{
	struct load_ctx *c = ctx;
	if (!spill)
		return;
	struct big_stats bs;
	big_stats(&bs);
	const char *dir = big_spill_dir();
	char nb[32], sb[32], bb[32], fb[32];
	fmt_bytes(nb, sizeof nb, need);
	fmt_bytes(sb, sizeof sb, spill);
	fmt_bytes(bb, sizeof bb, bs.budget);
	fmt_bytes(fb, sizeof fb, big_disk_free(dir));
	char ix[256];
	index_room(c->s, c->path, objects, refs, spill, dir, ix, sizeof ix);
	hs_notify(c->s, HS_NOTICE_ALWAYS, "heapsh: %s: %llu objects; the heap and its dominator "
		  "tree need about %s, more than the memory budget (%s, --memory): about %s go "
		  "to files in %s (%s free there; --spill-dir to change)%s", c->path,
		  (unsigned long long)objects, nb, bb, sb, dir, fb, ix);
}

static void model_to_index(struct hs_session *s);

/* is_jfr: whether the file at path starts as a JFR recording ("FLR\0", JFR's chunk header). */
static bool is_jfr(const char *path)
{
	unsigned char m[4];
	FILE *f = fopen(path, "rb");
	bool yes = f && fread(m, 1, 4, f) == 4 && !memcmp(m, "FLR\0", 4);
	if (f)
		fclose(f);
	return yes;
}

static int p_open_recording(struct hs_session *s, const char *path)
{
	struct hs_error err;
	hs_error_clear(&err);
	struct alc_rec *r;
	char *notes = NULL;
	hs_interrupted = 0;
	stage(s, "reading the JFR recording");
	int st = alc_read_jfr(path, &r, &notes, &err);
	stage_end(s);
	if (st != HS_OK) {
		hs_fail(s, "%s", err.msg);
		return st;
	}
	alc_free(s->recording);
	free(s->recording_path);
	s->recording = r;
	s->recording_path = xstrdup(path);
	guard_keep(s);	/* the session's now, whatever the notes do */
	for (char *line = notes, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		hs_notify(s, HS_NOTICE_ALWAYS, "%s", line);
		if (!next)
			break;
	}
	free(notes);
	return HS_OK;
}

int hs_open_recording(struct hs_session *s, const char *path)
{
	GUARDED(s, HS_ERR, p_open_recording(s, path));
}

static int p_open(struct hs_session *s, const char *path)
{
	if (is_jfr(path))
		return hs_open_recording(s, path);
	struct hs_error err;
	hs_error_clear(&err);
	struct heap *h;
	struct load_ctx lc = {s, path};
	s->load_opts.progress = s->load_progress ? load_progress : NULL;
	s->load_opts.progress_ctx = &lc;
	s->load_opts.plan = load_plan;
	hs_interrupted = 0;
	/* The model in the index, when there is one: no need to read the dump. */
	struct idx *x = NULL;
	int st = HS_ERR;
	bool src_trusted = false;
	if (!s->no_index && !s->live && s->load_opts.dump <= 1) {
		x = idx_open(path);	/* its note, if any, waits for hs_index */
		struct idx_mapping m;
		struct heap_model_src src = {0};
		if ((src.data = idx_map_section(x, IDX_MODEL, &src.len, &m))) {
			src.map = m.base;
			src.maplen = m.len;
			src.trusted = idx_trusted(x, IDX_MODEL);
			const char *why;
			stage(s, "reading the heap model from the index");
			st = heap_model_load(path, &s->load_opts, &src, &h, &why);
			stage_end(s);
			if (st == HS_OK && !src.trusted)
				idx_vouch(x, IDX_MODEL);
			src_trusted = src.trusted;
			if (st != HS_OK) {
				idx_unmap(&m);
				hs_notify(s, HS_NOTICE_ALWAYS, "heapsh: the index's heap model is not "
					  "usable (%s: %s); reading the dump, whose model the index "
					  "then keeps instead (--no-index skips it)",
					  idx_file(x), why);
			}
		}
	}
	bool from_index = st == HS_OK;
	if (!from_index)
		st = heap_load(path, &s->load_opts, &h, &err);
	s->load_opts.plan = NULL;
	s->load_opts.progress = NULL;
	s->load_opts.progress_ctx = NULL;
	if (st != HS_OK || h->damaged || h->dump > 1) {
		idx_close(x);	/* no index for these (hs_index) */
		x = NULL;
	}
	if (st == HS_INTERRUPTED) {
		hs_fail(s, "loading %s interrupted", path);
		return HS_INTERRUPTED;
	}
	if (st != HS_OK) {
		if (err.offset >= 0)
			hs_fail(s, "%s (byte offset %lld)", err.msg, (long long)err.offset);
		else
			hs_fail(s, "%s", err.msg);
		s->err.offset = err.offset;
		return HS_ERR;
	}
	if (h->damaged)
		hs_notify(s, HS_NOTICE_ERROR, "warning: %s: %s; about %llu bytes were not read. The "
			  "rest of the heap is usable; take a new dump for complete results",
			  path, h->damage, (unsigned long long)h->lost_bytes);
	hs_drop_previous(s);
	hs_close_heap(s);
	free(s->dump_path);
	s->heap = h;
	s->dump_path = xstrdup(path);
	s->idx = x;
	s->idx_noted = false;
	s->model_from_index = from_index;
	s->model_trusted = from_index && src_trusted;
	guard_keep(s);	/* the heap is the session's: a throw in what follows leaves it */
	/* An index with a tree but no usable model (refused, damaged, or no
	 * room for it then) gets this one now, so the next open maps it
	 * instead of reading the dump; without a tree, dom_to_index adds it. */
	uint64_t len;
	if (x && !from_index && (idx_section(x, IDX_DOM_ALL, &len) ||
				 idx_section(x, IDX_DOM_STRONG, &len)))
		model_to_index(s);
	if (h->ndumps > 1)
		hs_notify(s, HS_NOTICE_ALWAYS, "heapsh: %s holds %u heap dumps; this is dump %u (open "
			  "another with --dump N, or :open %s --dump N)", path, h->ndumps, h->dump,
			  path);
	return HS_OK;
}

int hs_open(struct hs_session *s, const char *path)
{
	GUARDED(s, HS_ERR, p_open(s, path));
}

enum { HS_ADOPT_MODEL = 1, HS_ADOPT_DOM = 2 /* << no_weak */ };

/* adopt: the heap model and trees dom_to_index wrote, used from the index. */
static void adopt(struct hs_session *s)
{
	struct idx_mapping m;
	if ((s->adopt & HS_ADOPT_MODEL) && s->heap && s->idx) {
		struct heap_model_src src = {0};
		if ((src.data = idx_map_section(s->idx, IDX_MODEL, &src.len, &m))) {
			src.map = m.base;
			src.maplen = m.len;
			if (heap_model_adopt(s->heap, &src) == HS_OK)
				s->model_from_index = true;
			else
				idx_unmap(&m);
		}
	}
	for (int w = 0; w < 2; w++) {
		uint64_t len;
		const uint8_t *p;
		if (!(s->adopt & (HS_ADOPT_DOM << w)) || !s->dom[w] || !s->idx ||
		    !(p = idx_map_section(s->idx, w ? IDX_DOM_STRONG : IDX_DOM_ALL, &len, &m)))
			continue;
		if (!dom_tree_adopt(s->dom[w], p, len, m.base, m.len))
			idx_unmap(&m);
	}
	s->adopt = 0;
}

void hs_adopt(struct hs_session *s)
{
	if (s->adopt)
		adopt(s);
}

static void p_rest(struct hs_session *s)
{
	hs_adopt(s);
	big_trim();	/* the session's pool's */
}

void hs_rest(struct hs_session *s)
{
	GUARDED_VOID(s, p_rest(s));
}

/* ---- the index file and the engine ---- */

static struct idx *p_index(struct hs_session *s)
{
	if (s->live)
		return NULL;	/* a snapshot is a temporary file */
	/* One index per file: it is the first heap dump's (a file may hold several). */
	if (!s->no_index && !s->idx && s->heap && !s->heap->damaged && s->heap->dump <= 1) {
		s->idx = idx_open(s->dump_path);
		idx_dump_read_earlier(s->idx);	/* the heap was read before */
		s->idx_noted = false;
	}
	if (s->idx && !s->idx_noted) {
		/* said when the engine first needs the index, not at every open */
		s->idx_noted = true;
		if (idx_note(s->idx))
			hs_notify(s, HS_NOTICE_ALWAYS, "heapsh: %s", idx_note(s->idx));
	}
	return s->idx;
}

struct idx *hs_index(struct hs_session *s)
{
	GUARDED(s, NULL, p_index(s));
}

static struct dom_tree *dom_from_index(struct hs_session *s, bool no_weak)
{
	uint64_t len;
	struct idx_mapping m;
	/* mapped on its own: the tree uses its arrays where they lie, and a
	 * later rewrite of the index does not take them away */
	const uint8_t *p = idx_map_section(s->idx, no_weak ? IDX_DOM_STRONG : IDX_DOM_ALL,
					   &len, &m);
	if (!p)
		return NULL;
	bool insane = false;
	uint32_t tag = no_weak ? IDX_DOM_STRONG : IDX_DOM_ALL;
	bool trusted = idx_trusted(s->idx, tag);
	struct dom_tree *t = dom_tree_load(s->heap, no_weak, p, len, m.base, m.len, trusted, &insane);
	if (!t)
		idx_unmap(&m);
	else if (!trusted)
		idx_vouch(s->idx, tag);
	if (insane)
		hs_notify(s, HS_NOTICE_ALWAYS, "heapsh: warning: the index's dominator tree is not a "
			  "tree of this heap; computing it again");
	return t;
}

/*
 * model_put: unless the heap was mapped from the index, its model
 * (heap_model_save, into *m) as puts[*nputs], its parts in parts[0 .. 32),
 * *nputs counting it; nothing when the heap cannot be saved.
 */
static void model_put(struct hs_session *s, struct heap_model *m, struct idx_part *parts,
		      struct idx_put *puts, int *nputs)
{
	if (s->model_from_index || heap_model_save(s->heap, m) != HS_OK)
		return;
	for (int k = 0; k < m->nparts; k++)
		parts[k] = (struct idx_part){m->parts[k].data, m->parts[k].len};
	puts[(*nputs)++] = (struct idx_put){IDX_MODEL, parts, m->nparts};
}

/* model_not_kept: say that the model (len bytes) is not in the index, and why. */
static void model_not_kept(struct hs_session *s, uint64_t len, const char *why)
{
	char mb[32];
	fmt_bytes(mb, sizeof mb, len);
	hs_notify(s, HS_NOTICE_ALWAYS, "heapsh: the heap model (%s) is not kept in the index: "
		  "%s; a reopen reads the dump", mb, why);
}

/* model_to_index: the heap model read from the dump into the index, which
 * holds a tree (hs_open): appended, or replacing one that was refused. */
static void model_to_index(struct hs_session *s)
{
	struct heap_model m = {0};
	struct idx_part parts[32];
	struct idx_put put;
	int nputs = 0;
	hs_index(s);	/* its note first: a damaged model is why, often */
	model_put(s, &m, parts, &put, &nputs);
	struct hs_error err;
	if (nputs) {
		stage(s, "keeping the heap model in the index");
		int st = idx_put_parts(s->idx, &put, 1, &err);
		stage_end(s);
		if (st == HS_OK)
			s->adopt |= HS_ADOPT_MODEL;
		else
			model_not_kept(s, m.len, err.msg);
	}
	heap_model_save_free(&m);
}

/*
 * dom_to_index: the tree into the index and, unless the heap was mapped from it,
 * the heap model with it, in one write: the next open maps the model
 * instead of reading the dump (heap_model_save).
 */
static void dom_to_index(struct hs_session *s, const struct dom_tree *t, bool no_weak)
{
	size_t len;
	uint8_t *buf = dom_tree_save(t, s->heap->n, &len);
	struct hs_error err;
	struct idx_part parts[33] = {{buf, len}};
	struct idx_put puts[2] = {{no_weak ? IDX_DOM_STRONG : IDX_DOM_ALL, parts, 1}};
	int nputs = 1;
	struct heap_model m = {0};
	model_put(s, &m, parts + 1, puts, &nputs);	/* a model refused (or none) is replaced */
	char sz[32];
	stage(s, "writing the index (%s)", fmt_bytes(sz, sizeof sz, len + m.len));
	int st = idx_put_parts(s->idx, puts, nputs, &err);
	stage_end(s);
	if (st == HS_OK)
		s->adopt |= (uint8_t)((HS_ADOPT_DOM << no_weak) | (nputs > 1 ? HS_ADOPT_MODEL : 0));
	if (st == HS_ERR && nputs > 1) {
		/* no room for the model, say: the tree alone is worth keeping */
		model_not_kept(s, m.len, err.msg);
		st = idx_put_parts(s->idx, puts, 1, &err);
		if (st == HS_OK)
			s->adopt |= (uint8_t)(HS_ADOPT_DOM << no_weak);
	}
	if (st != HS_OK)
		hs_notify(s, HS_NOTICE_ALWAYS, "heapsh: warning: %s", err.msg);
	heap_model_save_free(&m);
	big_free(buf);
}

static struct dom_tree *p_dom(struct hs_session *s, bool no_weak)
{
	if (hs_need_heap(s))
		return NULL;
	struct dom_tree **slot = &s->dom[no_weak];
	if (*slot)
		return *slot;
	if (hs_index(s) && (*slot = dom_from_index(s, no_weak)))
		return *slot;
	stage(s, "computing the dominator tree of %u objects", s->heap->n);
	int st = dom_tree_build(s->heap, no_weak, !s->no_spill, slot);
	stage_end(s);
	if (st != HS_OK) {
		hs_fail(s, "dominator tree computation interrupted");
		return NULL;
	}
	guard_keep(s);	/* the tree is the session's: a throw writing the index leaves it */
	if (s->idx)
		dom_to_index(s, *slot, no_weak);
	return *slot;
}

struct dom_tree *hs_dom(struct hs_session *s, bool no_weak)
{
	GUARDED(s, NULL, p_dom(s, no_weak));
}

/* baseline_tree: the dominator tree of the older dump at path, with its
 * heap (*bh), from its index when it has one. */
static int baseline_tree(struct hs_session *s, const char *path, bool no_weak, struct heap **bh,
			 struct dom_tree **bt)
{
	struct hs_error err;
	*bt = NULL;
	stage(s, "reading the baseline %s", path);
	int st = heap_load(path, &s->load_opts, bh, &err);
	stage_end(s);
	if (st == HS_INTERRUPTED) {
		hs_fail(s, "reading the baseline %s interrupted", path);
		return HS_INTERRUPTED;
	}
	if (st != HS_OK)
		return hs_fail(s, "--baseline %s: %s", path, err.msg);
	struct idx *ix = s->no_index || (*bh)->damaged ? NULL : idx_open(path);
	uint64_t len;
	const uint8_t *p = ix ? idx_section(ix, no_weak ? IDX_DOM_STRONG : IDX_DOM_ALL, &len) : NULL;
	bool insane = false;
	if (p)
		*bt = dom_tree_load(*bh, no_weak, p, len, NULL, 0, false, &insane);
	if (!*bt) {
		stage(s, "computing the baseline's dominator tree of %u objects", (*bh)->n);
		st = dom_tree_build(*bh, no_weak, !s->no_spill, bt);
		stage_end(s);
	}
	idx_close(ix);
	if (st != HS_OK) {
		heap_free(*bh);
		*bh = NULL;
		hs_fail(s, "the baseline's dominator tree: interrupted");
		return HS_INTERRUPTED;
	}
	return HS_OK;
}

static int p_suspects(struct hs_session *s, const struct sus_opts *o, bool no_weak,
		const char *baseline, struct suspect **out, uint32_t *n, struct sus_under *under)
{
	*out = NULL;
	*n = 0;
	struct dom_tree *t = hs_dom(s, no_weak);
	if (!t)
		return HS_ERR;
	struct heap *bh = NULL;
	struct dom_tree *bt = NULL;
	bool prev = baseline == HS_PREVIOUS, mark = baseline == HS_MARK;
	int st = HS_OK;
	if (prev && !s->prev.heap)
		return hs_fail(s, "no earlier snapshot of this JVM to compare with");
	struct alc_rec *rec = NULL;
	if (mark && (hs_alloc_fetch(s, &rec) != HS_OK || !rec->st.has_mark)) {
		if (rec) {
			alc_free(rec);
			hs_fail(s, "the allocation recording has no mark (:alloc mark)");
		}
		return HS_ERR;
	}
	if (prev && !s->prev.dom[no_weak]) {
		stage(s, "computing the previous snapshot's dominator tree of %u objects", s->prev.heap->n);
		st = dom_tree_build(s->prev.heap, no_weak, !s->no_spill, &s->prev.dom[no_weak]);
		stage_end(s);
		if (st != HS_OK)
			return hs_fail(s, "the previous snapshot's dominator tree: interrupted");
		guard_keep(s);	/* the session's now: a throw in the search leaves it */
	}
	if (prev)
		bt = s->prev.dom[no_weak];
	else if (baseline && !mark)
		st = baseline_tree(s, baseline, no_weak, &bh, &bt);
	if (st != HS_OK)
		return st;
	struct hgraph g;
	hg_init(&g, s->heap, true, true);	/* paths through strong references, as MAT's */
	/* growth known: look closer, so that small growing candidates are seen too */
	struct sus_opts closer = *o;
	if (bt || rec)
		closer.threshold_pct = o->threshold_pct / 10;
	st = sus_find(t, &g, &closer, out, n);
	hg_free(&g);
	if (st != HS_OK) {
		hs_fail(s, "leak suspects: interrupted");
	} else if (bt || rec) {
		if (rec)
			sus_class_growth(*out, *n, mark_growth, rec);
		else
			sus_baseline(*out, *n, bt);
		sus_growing(*out, n, o->threshold_pct, dom_retained(t, s->heap->n));
	}
	alc_free(rec);
	if (st == HS_OK && under)
		sus_under(t, o->threshold_pct, o->threshold_pct / 10, under);
	if (bt && !prev)
		dom_tree_free(bt);
	heap_free(bh);
	return st;
}

int hs_suspects(struct hs_session *s, const struct sus_opts *o, bool no_weak,
		const char *baseline, struct suspect **out, uint32_t *n, struct sus_under *under)
{
	GUARDED(s, HS_ERR, p_suspects(s, o, no_weak, baseline, out, n, under));
}

/*
 * dyn_to_index: the dynamic-size engine into the index: the exact sizes
 * found since it was saved whole, on their own (DYNX, which supersedes
 * the last), when that is enough (dyn_save_exact); else whole (DYNA),
 * with an empty DYNX when the index holds one, so that none is left to
 * apply to the new whole.
 */
static void dyn_to_index(struct hs_session *s)
{
	uint64_t len, elen = 0, had;
	struct hs_error err;
	void *buf = dyn_save_exact(s->dyn, &len);
	int st;
	if (buf) {
		st = idx_put(s->idx, IDX_DYN_EXACT, buf, len, &err);
	} else {
		buf = dyn_save(s->dyn, &len);
		dyn_saved(s->dyn);	/* taken back below if the write fails */
		void *empty = idx_section(s->idx, IDX_DYN_EXACT, &had)
				      ? dyn_save_exact(s->dyn, &elen) : NULL;
		struct idx_part parts[2] = {{buf, len}, {empty, elen}};
		struct idx_put puts[2] = {{IDX_DYN, parts, 1}, {IDX_DYN_EXACT, parts + 1, 1}};
		char sz[32];
		stage(s, "writing the index (%s)", fmt_bytes(sz, sizeof sz, len));
		st = idx_put_parts(s->idx, puts, empty ? 2 : 1, &err);
		stage_end(s);
		big_free(empty);
		if (st != HS_OK) {
			big_free(s->dyn->saved_flags);
			s->dyn->saved_flags = NULL;	/* the next save is whole */
		}
	}
	if (st != HS_OK)
		hs_notify(s, HS_NOTICE_ALWAYS, "heapsh: warning: %s", err.msg);
	big_free(buf);
	s->dyn->dirty = false;
}

static void p_dyn_save(struct hs_session *s)
{
	if (s->dyn && s->dyn->dirty && s->idx)
		dyn_to_index(s);
}

void hs_dyn_save(struct hs_session *s)
{
	GUARDED_VOID(s, p_dyn_save(s));
}

static struct dyn *p_dyn(struct hs_session *s, bool estimates)
{
	if (hs_need_heap(s))
		return NULL;
	if (!s->dyn) {
		uint64_t len;
		const void *p = hs_index(s) ? idx_section(s->idx, IDX_DYN, &len) : NULL;
		if (p && (s->dyn = dyn_load(p, len, s->heap->n))) {
			guard_keep(s);	/* the session's now */
			s->dyn_from_index = true;
			/* the exact sizes found after it was saved whole */
			if ((p = idx_section(s->idx, IDX_DYN_EXACT, &len)) &&
			    !dyn_load_exact(s->dyn, p, len))
				hs_notify(s, HS_NOTICE_ALWAYS, "heapsh: warning: the index's exact "
					  "dynamic sizes (%s) do not fit its engine; they are "
					  "computed again when asked for", idx_file(s->idx));
		} else {
			stage(s, "computing the strongly connected components and dominating "
			      "articulation points of %u objects", s->heap->n);
			int st = dyn_build_heap(s->heap, &s->dyn);
			stage_end(s);
			if (st != HS_OK) {
				hs_fail(s, "dynamic-size engine interrupted");
				return NULL;
			}
			guard_keep(s);	/* the session's: a throw writing the index leaves it */
			s->dyn_from_index = false;
			if (s->idx)
				dyn_to_index(s);
		}
	}
	if (estimates && !s->dyn->est) {
		stage(s, "estimating the dynamic size of %u components", s->dyn->s.ncomp);
		int st = dyn_estimate(s->dyn);
		stage_end(s);
		if (st != HS_OK) {
			hs_fail(s, "dynamic-size estimation interrupted");
			return NULL;
		}
		guard_keep(s);	/* the estimates (dyn_estimate keeps them too) */
		if (s->idx)
			dyn_to_index(s);
	}
	return s->dyn;
}

struct dyn *hs_dyn(struct hs_session *s, bool estimates)
{
	GUARDED(s, NULL, p_dyn(s, estimates));
}

/* ---- the query language ---- */

static struct dom_tree *dom_cb(void *ctx)
{
	struct hs_session *s = ctx;
	return hs_dom(s, s->no_weak);
}

static struct dyn *dyn_cb(void *ctx, bool estimates)
{
	return hs_dyn(ctx, estimates);
}

/*
 * alloc_cb: the attached JVM's recording for `allocations` (the language
 * frees it). Why there is none goes into the query's error, with its
 * caret, rather than on its own.
 */
static struct alc_rec *alloc_cb(void *ctx, struct hs_error *err)
{
	struct hs_session *s = ctx;
	if (!s->live && s->recording)
		return alc_copy(s->recording);
	if (!s->live) {
		hs_error_set(err, -1, "%s", s->heap ? "this is a heap dump, not a running JVM "
			     "(heapsh PID attaches to one)" : "not attached to a JVM");
		return NULL;
	}
	struct alc_rec *r = NULL;
	if (hs_alloc_fetch(s, &r) != HS_OK || !r) {
		hs_error_set(err, -1, "%s", s->err.msg);
		return NULL;
	}
	return r;
}

struct dsl *hs_dsl(struct hs_session *s)
{
	struct dsl_engine eng = {dom_cb, dyn_cb, alloc_cb, s};
	if (!s->dsl)
		s->dsl = dsl_new(s->heap, &eng);
	else if (s->heap && !dsl_heap(s->dsl))
		dsl_set_heap(s->dsl, s->heap);
	return s->dsl;
}
