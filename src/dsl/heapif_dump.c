/*
 * heapif_dump.c - the dump backend of the heap-access interface
 * (heapif_dump.h): every operation of struct hv_ops over the heap model
 * (src/heap/heap.h) and the engine's dominator tree and dynamic sizes
 * (src/engine/domtree.h, dyn.h). Handles are the model's indexes. Only
 * `retained` and `dynamic_size` can fail (no engine, or Ctrl-C).
 */
#include "heapif_dump.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/big.h"
#include "../base/ctx.h"
#include "../base/mem.h"
#include "../engine/domtree.h"
#include "../engine/dyn.h"


static const struct heap *H(const struct hv *v)
{
	return ((const struct hvd *)v->self)->h;
}

/* ---- objects ---- */

static uint32_t d_class_of(struct hv *v, uint32_t obj)
{
	return H(v)->cls[obj];
}

static enum hv_obj_kind d_kind(struct hv *v, uint32_t obj)
{
	return (enum hv_obj_kind)heap_kind(H(v), obj);
}

static uint64_t d_shallow(struct hv *v, uint32_t obj)
{
	return heap_shallow(H(v), obj);
}

static uint64_t d_id(struct hv *v, uint32_t obj)
{
	return heap_id(H(v), obj);
}

static bool d_field_locate(struct hv *v, uint32_t c, const char *name, struct hv_slot *slot)
{
	return heap_field_locate(H(v), c, name, &slot->off, &slot->type);
}

static struct hv_value d_field_at(struct hv *v, uint32_t obj, struct hv_slot slot)
{
	return hvd_value(H(v), heap_field_at(H(v), obj, slot.off, slot.type));
}

struct names_ctx {
	void (*fn)(void *ctx, const char *name);
	void *ctx;
};

static void field_name(void *ctx, uint32_t decl, const struct heap_field *f, struct heap_value val)
{
	struct names_ctx *n = ctx;
	(void)decl;
	(void)val;
	n->fn(n->ctx, f->name);
}

static void d_field_names(struct hv *v, uint32_t obj, void (*fn)(void *ctx, const char *name),
			  void *ctx)
{
	struct names_ctx n = {fn, ctx};
	heap_fields_each(H(v), obj, field_name, &n);
}

static uint32_t d_array_length(struct hv *v, uint32_t obj)
{
	return heap_array_length(H(v), obj);
}

static struct hv_value d_array_elem(struct hv *v, uint32_t obj, uint32_t k)
{
	return hvd_value(H(v), heap_array_elem(H(v), obj, k));
}

static char *d_text(struct hv *v, uint32_t obj, size_t max_chars)
{
	return heap_string(H(v), obj, max_chars);
}

static const uint32_t *d_refs_out(struct hv *v, uint32_t obj, uint32_t *count)
{
	return heap_out(H(v), obj, count);
}

static const uint32_t *d_refs_in(struct hv *v, uint32_t obj, uint32_t *count)
{
	return heap_in(H(v), obj, count);
}

struct refs_ctx {
	bool (*fn)(void *ctx, const struct hv_ref *r);
	void *ctx;
};

static bool ref_each(void *ctx, const struct heap_ref *r)
{
	struct refs_ctx *c = ctx;
	struct hv_ref x = {(enum hv_ref_kind)r->kind, r->name, r->target};
	return c->fn(c->ctx, &x);
}

static void d_refs_each(struct hv *v, uint32_t obj, bool (*fn)(void *ctx, const struct hv_ref *r),
			void *ctx)
{
	struct refs_ctx c = {fn, ctx};
	heap_refs(H(v), obj, ref_each, &c);
}

static const char *d_heap_name(struct hv *v, uint32_t obj)
{
	return heap_android_heap(H(v), obj);
}

static uint64_t d_retained(struct hv *v, uint32_t obj)
{
	const struct hvd *d = v->self;
	struct dom_tree *t = d->dom ? d->dom(d->ctx) : NULL;
	if (!t) {
		hv_set_fail(v, HV_ERROR, "retained sizes are not available (the dominator tree "
			    "could not be computed)");
		return 0;
	}
	return dom_retained(t, obj);
}

static uint64_t d_dynamic_size(struct hv *v, uint32_t obj, bool estimate)
{
	const struct hvd *d = v->self;
	struct dyn *dy = d->dyn ? d->dyn(d->ctx, estimate) : NULL;
	if (!dy) {
		hv_set_fail(v, HV_ERROR, "dynamic sizes are not available (the engine could not "
			    "be built)");
		return 0;
	}
	uint32_t sc = dyn_comp(dy, obj);
	if (estimate && !(dy->flags[sc] & DYN_EXACT))
		return (uint64_t)((double)dy->est[sc] + 0.5);
	uint64_t bytes;
	if (dyn_exact(dy, sc, &bytes) != HS_OK) {
		hv_set_fail(v, HV_INTERRUPTED, "interrupted");
		return 0;
	}
	return bytes;
}

static void d_objects_each(struct hv *v, const uint8_t *classes,
			   bool (*fn)(void *ctx, uint32_t obj), void *ctx)
{
	const struct heap *h = H(v);
	for (uint32_t o = 0; o < h->n; o++)
		if (!classes || (classes[h->cls[o] / 8] & (1u << (h->cls[o] % 8))))
			if (!fn(ctx, o))
				return;
}

static void d_objects_visit(struct hv *v, const uint8_t *classes,
			    bool (*fn)(void *ctx, uint32_t obj), void *ctx)
{
	d_objects_each(v, classes, fn, ctx);
}

/* ---- classes ---- */

static void d_class_info(struct hv *v, uint32_t c, struct hv_class *out)
{
	const struct heap_class *k = &H(v)->classes[c];
	out->name = k->name;
	out->super = k->super;
	out->loader = k->loader;
	out->object = k->obj;
	out->id = k->id;
	out->inst_size = k->inst_size;
	out->array = k->elem_type != 0;
	out->nstatics = k->nstatics;
}

static const char *d_class_name(struct hv *v, uint32_t c)
{
	return H(v)->classes[c].name;
}

static uint32_t d_class_of_object(struct hv *v, uint32_t obj)
{
	return heap_class_of_object(H(v), obj);
}

static void d_class_totals(struct hv *v, uint32_t c, uint64_t *count, uint64_t *bytes)
{
	*count = H(v)->classes[c].count;
	*bytes = H(v)->classes[c].shallow;
}

static const uint32_t *d_instances(struct hv *v, uint32_t c, uint32_t *count)
{
	return heap_instances(H(v), c, count);
}

static bool d_is_subclass(struct hv *v, uint32_t c, uint32_t sup)
{
	return heap_is_subclass(H(v), c, sup);
}

static uint32_t d_find_classes(struct hv *v, const char *pattern, uint32_t **out)
{
	return heap_find_classes(H(v), pattern, out);
}

static uint32_t d_class_by_name(struct hv *v, const char *name)
{
	return heap_class_by_name(H(v), name);
}

static bool d_static_value(struct hv *v, uint32_t c, const char *name, struct hv_value *out)
{
	struct heap_value hv;
	if (!heap_static(H(v), c, name, &hv))
		return false;
	*out = hvd_value(H(v), hv);
	return true;
}

static void d_static_names(struct hv *v, uint32_t c, void (*fn)(void *ctx, const char *name),
			   void *ctx)
{
	const struct heap_class *k = &H(v)->classes[c];
	for (unsigned s = 0; s < k->nstatics; s++)
		fn(ctx, k->statics[s].name);
}

/* ---- threads and GC roots ---- */

static uint32_t d_thread_object(struct hv *v, uint32_t t)
{
	return H(v)->threads[t].obj;
}

static char *d_thread_name(struct hv *v, uint32_t t)
{
	return heap_thread_name(H(v), t);
}

static uint32_t d_thread_frames(struct hv *v, uint32_t t)
{
	return H(v)->threads[t].nframes;
}

static void d_roots_each(struct hv *v, uint32_t thread, void (*fn)(void *ctx, uint32_t obj),
			 void *ctx)
{
	const struct heap *h = H(v);
	for (uint32_t r = 0; r < h->nroots; r++)
		if (thread == HV_NONE ||
		    (h->roots[r].thread == thread && h->roots[r].kind != HPROF_GC_ROOT_THREAD_OBJ))
			fn(ctx, h->roots[r].obj);
}

/* ---- set types ---- */

static void growth_free(struct growth *g);

static void d_owners(struct hv *v, bool on)
{
	struct hvd *d = v->self;
	big_free(v->owner_map);
	v->owner_map = NULL;
	free(d->tclass);
	d->tclass = NULL;
	growth_free(d->growth);
	d->growth = NULL;
	/* not kept (big_keep): a call that throws during the analysis gives it back, and the
	 * next analysis frees the pointer left here before it reads anything */
	if (on)
		v->owner_map = big_alloc((size_t)H(v)->n + 1, sizeof *v->owner_map);
}

static uint32_t d_owner(struct hv *v, uint32_t obj)
{
	return v->owner_map[obj];
}

static void d_set_owner(struct hv *v, uint32_t obj, uint32_t id)
{
	v->owner_map[obj] = id;
}

/* What a heap walk follows from an object of a class (classify, grow_refs). */
enum { TC_FIELDS, TC_NONE, TC_FILTERED };

/* classify: TC_* for every class of the heap. */
static uint8_t *classify(struct hv *v)
{
	uint8_t *tc = xcalloc((size_t)v->nclasses + 1, 1);
	static const char *const filtered[] = {
		"jdk.internal.reflect.ConstantPool", "sun.reflect.ConstantPool",
		"jdk.internal.reflect.UnsafeStaticFieldAccessorImpl",
		"sun.reflect.UnsafeStaticFieldAccessorImpl"};
	uint32_t fc[4];
	for (int k = 0; k < 4; k++)
		fc[k] = heap_class_by_name(H(v), filtered[k]);
	for (uint32_t c = 0; c < v->nclasses; c++) {
		if (c == v->class_class)
			tc[c] = TC_NONE;
		for (int k = 0; k < 4; k++)
			if (fc[k] != HV_NONE && heap_is_subclass(H(v), c, fc[k]))
				tc[c] = TC_FILTERED;
	}
	return tc;
}

/*
 * A growth under way: its stack, and the references of one object before
 * they are offered. The view's (d->growth, freed with its owners), so that
 * an offer that unwinds loses nothing (v->unwinds).
 */
struct growth {
	struct hv *v;
	const struct hv_growth *req;
	uint32_t k;		/* the instance growing */
	uint32_t *stack;
	uint64_t sp, scap;
	struct heap_ref *refs;	/* described (grow_ref) */
	uint64_t nrefs, rcap;
	bool filtered;		/* an instance of a class HotSpot hides two fields of */
	uint32_t object_mirror;	/* java.lang.Object's class object, or HV_NONE */
};


static void offer(struct growth *g, uint32_t referrer, uint32_t target, enum hv_ref_kind kind)
{
	const struct hv_growth *q = g->req;
	if (g->v->owner_map[target] || !q->offer(q->ctx, g->k, referrer, target, kind))
		return;
	g->v->owner_map[target] = q->ids[g->k];
	q->joined(q->ctx, g->k, target);
	g->stack = xgrow(g->stack, &g->scap, g->sp + 1, sizeof *g->stack);
	g->stack[g->sp++] = target;
}

/* grow_ref: keeps what the walk reports of one described reference (offered after heap_refs). */
static bool grow_ref(void *ctx, const struct heap_ref *r)
{
	struct growth *g = ctx;
	switch (r->kind) {
	case HEAP_REF_FIELD:
		if (g->filtered && r->name &&
		    (!strcmp(r->name, "constantPoolOop") || !strcmp(r->name, "base")))
			return true;
		break;
	case HEAP_REF_ELEMENT: case HEAP_REF_LOADER: case HEAP_REF_SIGNERS: case HEAP_REF_DOMAIN:
		break;
	case HEAP_REF_STATIC:
		if (r->name && r->name[0] == '<')	/* <resolved_references>, <init_lock> */
			return true;
		break;
	case HEAP_REF_SUPER:
		if (r->target == g->object_mirror)
			return true;
		break;
	default:
		return true;	/* constant pool entries */
	}
	g->refs = xgrow(g->refs, &g->rcap, g->nrefs + 1, sizeof *g->refs);
	g->refs[g->nrefs++] = *r;
	return true;
}

static void described(struct growth *g, uint32_t obj)
{
	g->nrefs = 0;
	heap_refs(H(g->v), obj, grow_ref, g);
	for (uint64_t j = 0; j < g->nrefs; j++)
		offer(g, obj, g->refs[j].target, (enum hv_ref_kind)g->refs[j].kind);
}

/* grow_refs: offer what a heap walk follows from obj (see hv_ops.grow). */
static void grow_refs(struct growth *g, const uint8_t *tclass, uint32_t obj)
{
	const struct heap *h = H(g->v);
	enum heap_kind kind = heap_kind(h, obj);
	g->filtered = false;
	switch (kind) {
	case HEAP_PRIM_ARRAY:
		return;
	case HEAP_CLASS: {
		uint32_t c = heap_class_of_object(h, obj);
		if (c == HV_NONE || h->classes[c].elem_type)
			return;
		described(g, obj);
		return;
	}
	case HEAP_INSTANCE:
		if (tclass[h->cls[obj]] == TC_NONE)
			return;
		if (tclass[h->cls[obj]] == TC_FILTERED) {
			g->filtered = true;
			described(g, obj);
			return;
		}
		break;
	default:
		break;
	}
	uint32_t cnt;
	const uint32_t *out = heap_out(h, obj, &cnt);
	enum hv_ref_kind rk = kind == HEAP_OBJ_ARRAY ? HV_REF_ELEMENT : HV_REF_FIELD;
	for (uint32_t j = 0; j < cnt; j++)
		offer(g, obj, out[j], rk);
}

static void growth_free(struct growth *g)
{
	if (!g)
		return;
	free(g->stack);
	free(g->refs);
	free(g);
}

static void d_grow(struct hv *v, const struct hv_growth *req)
{
	struct hvd *d = v->self;
	if (!d->tclass)
		d->tclass = classify(v);
	if (!d->growth)
		d->growth = xcalloc(1, sizeof *d->growth);
	struct growth *g = d->growth;
	uint32_t oc = heap_class_by_name(H(v), "java.lang.Object");
	g->v = v;
	g->req = req;
	g->sp = g->nrefs = 0;
	g->object_mirror = oc != HV_NONE ? H(v)->classes[oc].obj : HV_NONE;
	for (g->k = 0; g->k < req->ninst; g->k++)
		for (uint32_t j = req->starts[g->k]; j < req->starts[g->k + 1]; j++) {
			g->stack = xgrow(g->stack, &g->scap, g->sp + 1, sizeof *g->stack);
			g->stack[g->sp++] = req->seeds[j];
			while (g->sp) {
				if (hs_interrupted) {
					hv_set_fail(v, HV_INTERRUPTED, "interrupted");
					return;
				}
				grow_refs(g, d->tclass, g->stack[--g->sp]);
			}
		}
}

static uint32_t d_keep(struct hv *v, uint32_t obj)
{
	(void)v;
	return obj;
}

const struct hv_ops hvd_ops = {
	.class_of = d_class_of,
	.kind = d_kind,
	.shallow = d_shallow,
	.id = d_id,
	.field_locate = d_field_locate,
	.field_at = d_field_at,
	.field_names = d_field_names,
	.array_length = d_array_length,
	.array_elem = d_array_elem,
	.text = d_text,
	.refs_out = d_refs_out,
	.refs_in = d_refs_in,
	.refs_each = d_refs_each,
	.heap_name = d_heap_name,
	.retained = d_retained,
	.dynamic_size = d_dynamic_size,
	.objects_each = d_objects_each,
	.objects_visit = d_objects_visit,
	.class_info = d_class_info,
	.class_name = d_class_name,
	.class_of_object = d_class_of_object,
	.class_totals = d_class_totals,
	.instances = d_instances,
	.is_subclass = d_is_subclass,
	.find_classes = d_find_classes,
	.class_by_name = d_class_by_name,
	.static_value = d_static_value,
	.static_names = d_static_names,
	.thread_object = d_thread_object,
	.thread_name = d_thread_name,
	.thread_frames = d_thread_frames,
	.roots_each = d_roots_each,
	.owners = d_owners,
	.owner = d_owner,
	.set_owner = d_set_owner,
	.grow = d_grow,
	.keep = d_keep,
};

void hvd_set_heap(struct hvd *d, const struct heap *h, bool inline_calls)
{
	struct hv *v = &d->view;
	d->h = h;
	v->dump = inline_calls ? h : NULL;
	v->nobjects = h ? h->n : 0;
	v->dense = true;
	v->nclasses = h ? h->nclasses : 0;
	v->nthreads = h ? h->nthreads : 0;
	v->class_class = h ? h->class_class : HV_NONE;
}

void hvd_init(struct hvd *d, const struct heap *h, const struct dsl_engine *eng,
	      bool inline_calls)
{
	struct hv *v = &d->view;
	v->ops = &hvd_ops;
	v->self = d;
	v->owner_map = NULL;
	v->unwinds = true;
	d->tclass = NULL;
	d->growth = NULL;
	hv_clear(v);
	d->dom = eng ? eng->dom : NULL;
	d->dyn = eng ? eng->dyn : NULL;
	d->ctx = eng ? eng->ctx : NULL;
	hvd_set_heap(d, h, inline_calls);
}
