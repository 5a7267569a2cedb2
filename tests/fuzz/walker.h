/*
 * walker.h - a heap-access backend (src/dsl/heapif.h) whose objects are
 * not numbered, over a dump's: what the agent's backend is to the
 * evaluator, without a JVM, for the unit tests (test_heapif) and the query
 * harness (fuzz_query). Handles are handed out in the order objects are
 * met (not the dump's indexes, so that an evaluator that indexes by handle
 * answers wrong); objects_each and grow hand out transient handles (an
 * object that has a kept handle gets that one); a transient handle used
 * after its callback returned, or a handle never handed out, aborts.
 *
 * walker_init(w, h, eng): w a view of heap h (which it borrows) with the
 * engine eng (may be NULL); walker_free(w) frees what it holds. w.view is
 * the view to give dsl_new_on.
 */
#ifndef HS_TEST_WALKER_H
#define HS_TEST_WALKER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/dsl/heapif_dump.h"

struct walker {
	struct hvd in;		/* the dump backend, every operation through its table */
	struct hv view;		/* view.self points here */
	uint32_t *kept_of;	/* dump index -> kept handle + 1 (0: none yet) */
	uint32_t *index_of;	/* kept handle -> dump index */
	uint32_t nkept;
	uint32_t at[2];		/* what a walk's callback is at (object, or referrer and target) */
	uint32_t slot[2];	/* their transient handles' slots; UINT32_MAX none */
	uint32_t gen;
	uint32_t **lists;	/* what refs_out, refs_in and instances handed out */
	uint32_t nlists;
	uint64_t transients, keeps;
	bool no_fields;		/* a growth that said it reads no field: a read is HV_CANNOT */
};

static struct walker *W(struct hv *v)
{
	return v->self;
}

/* ix: the dump index of handle h. */
static uint32_t ix(struct hv *v, uint32_t h)
{
	struct walker *w = W(v);
	if (h == HV_NONE)
		return h;
	if (h & HV_TRANSIENT) {
		for (int k = 0; k < 2; k++)
			if (w->slot[k] != UINT32_MAX && (h & ~HV_TRANSIENT) == w->slot[k])
				return w->at[k];
		fprintf(stderr, "transient handle %#x used after its callback returned\n", h);
		abort();
	}
	if (h >= w->nkept) {
		fprintf(stderr, "handle %#x was never handed out\n", h);
		abort();
	}
	return w->index_of[h];
}

/* out: the kept handle of dump index i (made when first met). */
static uint32_t out(struct hv *v, uint32_t i)
{
	struct walker *w = W(v);
	if (i == HV_NONE)
		return i;
	if (!w->kept_of[i]) {
		w->index_of[w->nkept] = i;
		w->kept_of[i] = ++w->nkept;
	}
	return w->kept_of[i] - 1;
}

static struct hv_value outv(struct hv *v, struct hv_value x)
{
	if (x.type == HV_T_OBJECT)
		x.v.obj = out(v, x.v.obj);
	return x;
}

static const uint32_t *out_list(struct hv *v, const uint32_t *l, uint32_t n)
{
	struct walker *w = W(v);
	uint32_t *c = malloc(((size_t)n + 1) * sizeof *c);
	for (uint32_t k = 0; k < n; k++)
		c[k] = out(v, l[k]);
	w->lists = realloc(w->lists, (w->nlists + 1) * sizeof *w->lists);
	w->lists[w->nlists++] = c;
	return c;
}

#define IN(v) (&W(v)->in.view)
#define INOPS hvd_ops

static uint32_t w_class_of(struct hv *v, uint32_t o) { return INOPS.class_of(IN(v), ix(v, o)); }
static enum hv_obj_kind w_kind(struct hv *v, uint32_t o) { return INOPS.kind(IN(v), ix(v, o)); }
static uint64_t w_shallow(struct hv *v, uint32_t o) { return INOPS.shallow(IN(v), ix(v, o)); }
static uint64_t w_id(struct hv *v, uint32_t o) { return INOPS.id(IN(v), ix(v, o)); }
static bool w_field_locate(struct hv *v, uint32_t c, const char *name, struct hv_slot *slot)
{
	return INOPS.field_locate(IN(v), c, name, slot);
}
static struct hv_value w_field_at(struct hv *v, uint32_t o, struct hv_slot slot)
{
	if (W(v)->no_fields) {	/* the agent's growth walk does not report them then */
		hv_set_fail(v, HV_CANNOT, "a field in a growth that reads none");
		return (struct hv_value){HV_T_NONE, {0}};
	}
	return outv(v, INOPS.field_at(IN(v), ix(v, o), slot));
}
static void w_field_names(struct hv *v, uint32_t o, void (*fn)(void *, const char *), void *c)
{
	INOPS.field_names(IN(v), ix(v, o), fn, c);
}
static uint32_t w_array_length(struct hv *v, uint32_t o)
{
	return INOPS.array_length(IN(v), ix(v, o));
}
static struct hv_value w_array_elem(struct hv *v, uint32_t o, uint32_t k)
{
	return outv(v, INOPS.array_elem(IN(v), ix(v, o), k));
}
static char *w_text(struct hv *v, uint32_t o, size_t max)
{
	if (W(v)->no_fields) {
		hv_set_fail(v, HV_CANNOT, "a String's text in a growth that reads none");
		return NULL;
	}
	return INOPS.text(IN(v), ix(v, o), max);
}
static const uint32_t *w_refs_out(struct hv *v, uint32_t o, uint32_t *n)
{
	const uint32_t *l = INOPS.refs_out(IN(v), ix(v, o), n);
	return out_list(v, l, *n);
}
static const uint32_t *w_refs_in(struct hv *v, uint32_t o, uint32_t *n)
{
	const uint32_t *l = INOPS.refs_in(IN(v), ix(v, o), n);
	return out_list(v, l, *n);
}
struct each_ref {
	struct hv *v;
	bool (*fn)(void *ctx, const struct hv_ref *r);
	void *ctx;
};
static bool w_ref(void *ctx, const struct hv_ref *r)
{
	struct each_ref *x = ctx;
	struct hv_ref c = *r;
	c.target = out(x->v, r->target);
	return x->fn(x->ctx, &c);
}
static void w_refs_each(struct hv *v, uint32_t o, bool (*fn)(void *, const struct hv_ref *),
			void *ctx)
{
	struct each_ref x = {v, fn, ctx};
	INOPS.refs_each(IN(v), ix(v, o), w_ref, &x);
}
static const char *w_heap_name(struct hv *v, uint32_t o)
{
	return INOPS.heap_name(IN(v), ix(v, o));
}
static uint64_t w_retained(struct hv *v, uint32_t o)
{
	uint64_t r = INOPS.retained(IN(v), ix(v, o));
	if (hv_failed(IN(v))) {
		hv_set_fail(v, IN(v)->fail, "%s", IN(v)->why);
		hv_clear(IN(v));
	}
	return r;
}
static uint64_t w_dynamic_size(struct hv *v, uint32_t o, bool est)
{
	uint64_t r = INOPS.dynamic_size(IN(v), ix(v, o), est);
	if (hv_failed(IN(v))) {
		hv_set_fail(v, IN(v)->fail, "%s", IN(v)->why);
		hv_clear(IN(v));
	}
	return r;
}
struct each_obj {
	struct hv *v;
	bool (*fn)(void *ctx, uint32_t obj);
	void *ctx;
};
/* transient: what the walk is at, as place k of the callback: its kept handle, else a new slot. */
static uint32_t transient(struct walker *w, int k, uint32_t i)
{
	if (w->kept_of[i])
		return w->kept_of[i] - 1;
	w->at[k] = i;
	w->slot[k] = ++w->gen & 0xffffff;
	w->transients++;
	return HV_TRANSIENT | w->slot[k];
}

static void end_callback(struct walker *w)
{
	w->slot[0] = w->slot[1] = UINT32_MAX;
}

static bool w_obj(void *ctx, uint32_t i)
{
	struct each_obj *x = ctx;
	struct walker *w = W(x->v);
	bool go = x->fn(x->ctx, transient(w, 0, i));
	end_callback(w);
	return go;
}
static void w_objects_each(struct hv *v, const uint8_t *classes,
			   bool (*fn)(void *, uint32_t), void *ctx)
{
	struct each_obj x = {v, fn, ctx};
	INOPS.objects_each(IN(v), classes, w_obj, &x);
}
static void w_objects_visit(struct hv *v, const uint8_t *classes, bool (*fn)(void *, uint32_t),
			    void *ctx)
{
	w_objects_each(v, classes, fn, ctx);
}
static void w_class_info(struct hv *v, uint32_t c, struct hv_class *o)
{
	INOPS.class_info(IN(v), c, o);
	o->loader = out(v, o->loader);
	o->object = out(v, o->object);
}
static const char *w_class_name(struct hv *v, uint32_t c) { return INOPS.class_name(IN(v), c); }
static uint32_t w_class_of_object(struct hv *v, uint32_t o)
{
	return INOPS.class_of_object(IN(v), ix(v, o));
}
static void w_class_totals(struct hv *v, uint32_t c, uint64_t *n, uint64_t *b)
{
	INOPS.class_totals(IN(v), c, n, b);
}
static const uint32_t *w_instances(struct hv *v, uint32_t c, uint32_t *n)
{
	const uint32_t *l = INOPS.instances(IN(v), c, n);
	return out_list(v, l, *n);
}
static bool w_is_subclass(struct hv *v, uint32_t c, uint32_t s)
{
	return INOPS.is_subclass(IN(v), c, s);
}
static uint32_t w_find_classes(struct hv *v, const char *p, uint32_t **o)
{
	return INOPS.find_classes(IN(v), p, o);
}
static uint32_t w_class_by_name(struct hv *v, const char *n)
{
	return INOPS.class_by_name(IN(v), n);
}
static bool w_static_value(struct hv *v, uint32_t c, const char *n, struct hv_value *o)
{
	bool r = INOPS.static_value(IN(v), c, n, o);
	*o = outv(v, *o);
	return r;
}
static void w_static_names(struct hv *v, uint32_t c, void (*fn)(void *, const char *), void *x)
{
	INOPS.static_names(IN(v), c, fn, x);
}
static uint32_t w_thread_object(struct hv *v, uint32_t t)
{
	return out(v, INOPS.thread_object(IN(v), t));
}
static char *w_thread_name(struct hv *v, uint32_t t) { return INOPS.thread_name(IN(v), t); }
static uint32_t w_thread_frames(struct hv *v, uint32_t t)
{
	return INOPS.thread_frames(IN(v), t);
}
struct each_root {
	struct hv *v;
	void (*fn)(void *ctx, uint32_t obj);
	void *ctx;
};
static void w_root(void *ctx, uint32_t i)
{
	struct each_root *x = ctx;
	x->fn(x->ctx, out(x->v, i));
}
static void w_roots_each(struct hv *v, uint32_t t, void (*fn)(void *, uint32_t), void *ctx)
{
	struct each_root x = {v, fn, ctx};
	INOPS.roots_each(IN(v), t, w_root, &x);
}
static void w_owners(struct hv *v, bool on)
{
	INOPS.owners(IN(v), on);
	if (hv_failed(IN(v))) {
		hv_set_fail(v, IN(v)->fail, "%s", IN(v)->why);
		hv_clear(IN(v));
	}
}
static uint32_t w_owner(struct hv *v, uint32_t o) { return INOPS.owner(IN(v), ix(v, o)); }
static void w_set_owner(struct hv *v, uint32_t o, uint32_t id)
{
	INOPS.set_owner(IN(v), ix(v, o), id);
}
struct each_offer {
	struct hv *v;
	const struct hv_growth *req;
};
/* w_offer: what joins is offered twice, as the agent's walk may (it keeps no owner). */
static bool w_offer(void *ctx, uint32_t k, uint32_t referrer, uint32_t target,
		    enum hv_ref_kind kind)
{
	struct each_offer *x = ctx;
	struct walker *w = W(x->v);
	uint32_t r = transient(w, 0, referrer), t = transient(w, 1, target);
	bool joined = x->req->offer(x->req->ctx, k, r, t, kind);
	end_callback(w);
	if (joined) {
		r = transient(w, 0, referrer);
		t = transient(w, 1, target);
		x->req->offer(x->req->ctx, k, r, t, kind);
		end_callback(w);
	}
	return joined;
}
static void w_joined(void *ctx, uint32_t k, uint32_t obj)
{
	struct each_offer *x = ctx;
	struct walker *w = W(x->v);
	x->req->joined(x->req->ctx, k, transient(w, 0, obj));
	end_callback(w);
}
static void w_grow(struct hv *v, const struct hv_growth *req)
{
	uint32_t n = req->starts[req->ninst];
	uint32_t *in = malloc(((size_t)n + 1) * sizeof *in);
	for (uint32_t k = 0; k < n; k++)
		in[k] = ix(v, req->seeds[k]);
	struct each_offer x = {v, req};
	struct hv_growth g = *req;
	g.seeds = in;
	g.offer = w_offer;
	g.joined = w_joined;
	g.ctx = &x;
	W(v)->no_fields = !req->fields;
	INOPS.grow(IN(v), &g);
	W(v)->no_fields = false;
	free(in);
}
static uint32_t w_keep(struct hv *v, uint32_t o)
{
	W(v)->keeps += (o & HV_TRANSIENT) != 0;
	return out(v, ix(v, o));
}

static const struct hv_ops walker_ops = {
	w_class_of, w_kind, w_shallow, w_id, w_field_locate, w_field_at, w_field_names,
	w_array_length, w_array_elem, w_text, w_refs_out, w_refs_in, w_refs_each, w_heap_name,
	w_retained, w_dynamic_size, w_objects_each, w_objects_visit, w_class_info, w_class_name,
	w_class_of_object, w_class_totals, w_instances, w_is_subclass, w_find_classes,
	w_class_by_name, w_static_value, w_static_names, w_thread_object, w_thread_name,
	w_thread_frames, w_roots_each, w_owners, w_owner, w_set_owner, w_grow, w_keep,
};

static inline void walker_init(struct walker *w, const struct heap *h, const struct dsl_engine *eng)
{
	memset(w, 0, sizeof *w);
	hvd_init(&w->in, h, eng, false);
	w->view = w->in.view;	/* its counts */
	w->view.ops = &walker_ops;
	w->view.self = w;
	w->view.dense = false;
	w->view.unwinds = false;	/* as a JVMTI walk: callbacks must not longjmp through it */
	w->view.owner_map = NULL;
	w->view.nobjects = 0;
	w->view.class_class = w->in.view.class_class;
	w->kept_of = calloc((size_t)h->n + 1, sizeof *w->kept_of);
	w->index_of = calloc((size_t)h->n + 1, sizeof *w->index_of);
	end_callback(w);
}

static inline void walker_free(struct walker *w)
{
	for (uint32_t k = 0; k < w->nlists; k++)
		free(w->lists[k]);
	free(w->lists);
	free(w->kept_of);
	free(w->index_of);
}

#endif
