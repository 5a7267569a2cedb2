/*
 * hva_settype.c - a set type on the agent's heap view (hva_internal.h;
 * docs/dsl.md "Set types: semantics", docs/agent.md): owners in the
 * analysis' tags (an entry's inst, a class's owner), step 3's visit of
 * every object (one FollowReferences from the GC roots), and step 4's
 * growth (one FollowReferences from an array of every instance's members,
 * hva_grow).
 */
#include "hva_internal.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ag.h"

/* ---- set types ---- */

/* A growth walk under way (hva_grow). */
struct grow {
	const struct hv_growth *req;
	uint32_t seg;		/* the instance whose members the walk is at */
	bool grown;		/* it joined in this walk: joined() when its visit ends */
};


/*
 * target_handle: the handle of the object a growth's reference reaches: its
 * class object's, its entry's, or a new entry tagged through the
 * callback's tag_ptr. May lq_raise (LQ_LIMIT).
 */
uint32_t hva_target_handle(struct hva *a)
{
	struct lq *q = a->q;
	if (a->tg.mirror)
		return hva_mirror_handle(a, a->tg.mirror - 1);
	jlong t = *a->tg.tag_ptr;
	if (lq_entry(q, t)) {
		uint32_t h = (uint32_t)(t & 0xffffffff) - 1;
		hva_room(a);
		if (a->ecls[h] == LQ_NONE) {
			a->ecls[h] = a->tg.cls;
			a->elen[h] = a->tg.length;
		}
		return h;
	}
	jlong nt;
	uint32_t h = hva_new_handle(a, a->tg.cls, a->tg.length, &nt);
	*a->tg.tag_ptr = nt;
	return h;
}

/* owner_slot: where the owner of handle h is kept: its class's, or its entry's. */
static uint32_t *owner_slot(struct hva *a, uint32_t h)
{
	struct lq *q = a->q;
	if (a->emirror[h])
		return &q->cls[a->emirror[h] - 1].owner;
	return &q->ent[h].inst;
}

/* owners: every object in no instance (entries' inst, classes' owner), on and off alike. */
void hva_owners(struct hv *v, bool on)
{
	(void)on;
	struct hva *a = v->self;
	struct lq *q = a->q;
	for (uint32_t k = 0; k < q->nent; k++) {
		q->ent[k].inst = 0;
		q->ent[k].flags &= (uint8_t)~LE_GROWN;
	}
	for (uint32_t c = 0; c < q->ncls; c++) {
		q->cls[c].owner = 0;
		q->cls[c].flags &= (uint8_t)~LC_INCLUDE;
	}
}

uint32_t hva_owner(struct hv *v, uint32_t obj)
{
	struct hva *a = v->self;
	struct lq *q = a->q;
	struct walk *w = a->w;
	if (obj == TARGET && a->tg.live) {
		if (a->tg.mirror)
			return q->cls[a->tg.mirror - 1].owner;
		struct lentry *e = lq_entry(q, *a->tg.tag_ptr);
		return e ? e->inst : 0;
	}
	if ((obj & HV_TRANSIENT) && (obj & ~HV_TRANSIENT) >= 2 && a->vw && w) {
		uint32_t ix = (obj & ~HV_TRANSIENT) - 2;
		if (ix >= w->w.nslots)
			return 0;
		struct lentry *e = lq_entry(q, w->w.slots[ix].tag);
		return e ? e->inst : 0;
	}
	if (obj & HV_TRANSIENT) {
		struct ob o;
		if (!hva_get(a, obj, &o))
			return 0;
		if (o.mirror)
			return q->cls[o.mirror - 1].owner;
		if (w->kept != HV_NONE)
			return q->ent[w->kept].inst;
		/* in a growth, every object the walk visits is a member of the instance growing */
		return a->gw ? a->gw->req->ids[a->gw->seg] : 0;
	}
	if (obj >= a->cap || a->ecls[obj] == LQ_NONE)
		return 0;
	return *owner_slot(a, obj);
}

void hva_set_owner(struct hv *v, uint32_t obj, uint32_t id)
{
	struct hva *a = v->self;
	uint32_t h = obj;
	if (obj & HV_TRANSIENT) {
		h = hva_keep(v, obj);	/* a tag, so that the walk and later reads know it */
		if (h == HV_NONE)
			return;
	}
	if (h >= a->cap || a->ecls[h] == LQ_NONE) {
		hv_set_fail(v, HV_ERROR, "no object with handle %u", h);
		return;
	}
	*owner_slot(a, h) = id;
}

static enum hv_ref_kind ref_kind(jvmtiHeapReferenceKind kind)
{
	switch (kind) {
	case JVMTI_HEAP_REFERENCE_FIELD: return HV_REF_FIELD;
	case JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT: return HV_REF_ELEMENT;
	case JVMTI_HEAP_REFERENCE_STATIC_FIELD: return HV_REF_STATIC;
	case JVMTI_HEAP_REFERENCE_SUPERCLASS: return HV_REF_SUPER;
	case JVMTI_HEAP_REFERENCE_CLASS_LOADER: return HV_REF_LOADER;
	case JVMTI_HEAP_REFERENCE_SIGNERS: return HV_REF_SIGNERS;
	case JVMTI_HEAP_REFERENCE_PROTECTION_DOMAIN: return HV_REF_DOMAIN;
	default: return HV_REF_CONSTANT;	/* class, constant pool, interface: not followed */
	}
}

/* current: the handle an offer or joined() gets for the object the growth walk is at. */
static uint32_t current(struct hva *a)
{
	struct walk *w = a->w;
	if (w->kept != HV_NONE && (a->emirror[w->kept] || a->refs[w->kept]))
		return w->kept;	/* a seed, or met before with its reference */
	return HV_TRANSIENT;
}

/* grow_finish: the visit of the object the walk is at is over: its on_inclusion if it joined. */
static void grow_finish(struct hva *a)
{
	struct grow *g = a->gw;
	struct walk *w = a->w;
	if (!w->active)
		return;
	w->active = false;
	if (!g->grown || w->stop)
		return;
	w->live = true;
	w->tag_ptr = NULL;
	g->req->joined(g->req->ctx, g->seg, current(a));
	w->live = false;
	if (hv_failed(&a->view))
		w->stop = true;
}

/*
 * grow_begin: the walk visits the object tagged t, of class c (a class
 * object: m + 1). A seed of a later instance begins that instance's growth;
 * an object with no tag is visited only because it joined.
 */
static void grow_begin(struct hva *a, jlong t, uint32_t c, uint32_t mirror)
{
	struct lq *q = a->q;
	struct grow *g = a->gw;
	struct walk *w = a->w;
	const struct hv_growth *req = g->req;
	struct lentry *e = mirror ? NULL : lq_entry(q, t);
	struct lclass *mc = mirror && mirror - 1 < q->ncls ? &q->cls[mirror - 1] : NULL;
	uint32_t eh = e ? (uint32_t)(t & 0xffffffff) - 1 : HV_NONE;
	uint32_t h = mc ? hva_mirror_handle(a, mirror - 1)
		     : eh < a->cap && a->ecls[eh] != LQ_NONE ? eh : HV_NONE;	/* a handle */
	uint8_t cf = mc ? mc->flags : 0;
	uint8_t ef = e ? e->flags : 0;
	bool seed = mc ? (cf & LC_SEED) : (ef & LE_SEED);
	if (seed) {	/* the instance it belongs to (the seeds come instance by instance) */
		uint32_t id = mc ? mc->owner : e->inst;
		while (g->seg < req->ninst && req->ids[g->seg] != id)
			g->seg++;
	}
	w->cur_tag = t;
	g->grown = mc ? (cf & LC_INCLUDE) != 0 : e ? (ef & LE_GROWN) != 0 : !mirror;
	if (mc)
		mc->flags &= (uint8_t)~LC_INCLUDE;
	else if (e)
		e->flags &= (uint8_t)~LE_GROWN;
	/* only a seed or what joined is expanded (the seeds' array's class is visited too) */
	w->active = (g->grown || seed) && g->seg < req->ninst;
	w->cls = mirror ? q->c_class : c;
	w->mirror = mirror;
	w->kept = h;
	w->length = h != HV_NONE ? a->elen[h] : e && (ef & LE_ARRAY) ? e->length : -1;
	w->w.gen++;
	w->w.text = NULL;
	q->objects_seen++;
}

/* grow_begin_guarded: grow_begin, false (the walk stops) when it ran out of memory. */
static bool grow_begin_guarded(struct hva *a, jlong t, uint32_t c, uint32_t mirror)
{
	volatile jlong vt = t;	/* read after the guard's setjmp */
	volatile uint32_t vc = c, vm = mirror;
	GUARD(a, g, (a->w->stop = true, false));
	grow_begin(a, vt, vc, vm);
	UNGUARD(a, g);
	return true;
}

/*
 * join: the target of the reference at hand (tagged *tag_ptr, of class c,
 * length as the reference reports it) joins the instance growing. A class
 * object, or an object with an entry, keeps its owner there, and is marked
 * to have its on_inclusion when the walk visits it; an object array gets
 * an entry for its length (its visit does not report it); any other object
 * stays untagged: the walk visits it next, once (grow_begin). False: no
 * memory (the view failed).
 */
static bool join(struct hva *a, jlong *tag_ptr, uint32_t c, jint length)
{
	struct lq *q = a->q;
	struct grow *g = a->gw;
	uint32_t id = g->req->ids[g->seg];
	jlong t = *tag_ptr;
	struct lentry *e;
	if (t & LQ_TAG_CLASS) {
		struct lclass *mc = &q->cls[(t & 0xffffffff) - 1];
		mc->owner = id;
		mc->flags |= LC_INCLUDE;
	} else if ((e = lq_entry(q, t))) {
		e->inst = id;
		e->flags |= LE_GROWN;
	} else if (q->cls[c].elem == 'L' || q->cls[c].elem == '[') {
		volatile jint len = length;	/* read after the guard's setjmp */
		jlong *volatile tp = tag_ptr;
		GUARD(a, gd, false);
		*tp = lq_new_entry(q, id, len, LE_ARRAY | LE_GROWN);
		UNGUARD(a, gd);
	}
	return true;
}

static jint JNICALL g_ref(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			  jlong class_tag, jlong referrer_class_tag, jlong size, jlong *tag_ptr,
			  jlong *referrer_tag_ptr, jint length, void *ud)
{
	(void)info;
	struct hva *a = ud;
	struct lq *q = a->q;
	struct grow *g = a->gw;
	struct walk *w = a->w;
	if (hva_walk_stops(a))
		return JVMTI_VISIT_ABORT;
	lq_note_size(q, class_tag, *tag_ptr, size);
	if (!referrer_tag_ptr)
		return 0;	/* a GC root: the walk starts at the seeds' array instead */
	jlong rt = *referrer_tag_ptr;
	struct lentry *re = lq_entry(q, rt);
	bool cls_ref = kind == JVMTI_HEAP_REFERENCE_CLASS;
	if (re && (re->flags & LE_SELF))	/* the seeds' array: its elements are visited */
		return cls_ref ? 0 : JVMTI_VISIT_OBJECTS;
	if (cls_ref || ((rt & LQ_TAG_CLASS) && (!w->active || rt != w->cur_tag))) {
		grow_finish(a);
		if (w->stop)
			return JVMTI_VISIT_ABORT;
		uint32_t rc = hva_class_index(q, referrer_class_tag);
		uint32_t m = (rt & LQ_TAG_CLASS) ? (uint32_t)(rt & 0xffffffff) : 0;
		if (rc == LQ_NONE && !m)
			return 0;	/* a class loaded since the analysis began */
		if (!grow_begin_guarded(a, rt, rc, m))
			return JVMTI_VISIT_ABORT;
		if (cls_ref)
			return 0;
	}
	enum hv_ref_kind rk = ref_kind(kind);
	if (!w->active || rk == HV_REF_CONSTANT)
		return 0;
	uint32_t c = hva_class_index(q, class_tag);
	jlong t = *tag_ptr;
	uint32_t m = (t & LQ_TAG_CLASS) ? (uint32_t)(t & 0xffffffff) : 0;
	if (c == LQ_NONE || m > q->ncls)
		return 0;
	struct lentry *e = m ? NULL : lq_entry(q, t);
	if (e && (e->flags & (LE_SELF | LE_SENTINEL)))
		return 0;
	if (m ? q->cls[m - 1].owner : e ? e->inst : 0)
		return 0;	/* in an instance already */
	a->tg.live = true;
	a->tg.cls = m ? q->c_class : c;
	a->tg.mirror = m;
	a->tg.length = q->cls[c].elem && !m ? length : -1;
	a->tg.tag_ptr = tag_ptr;
	w->live = true;
	w->tag_ptr = NULL;
	bool joins = g->req->offer(g->req->ctx, g->seg, current(a), TARGET, rk);
	w->live = false;
	a->tg.live = false;
	if (!hv_failed(&a->view) && joins && !join(a, tag_ptr, c, length)) {
		w->stop = true;
		return JVMTI_VISIT_ABORT;
	}
	if (hv_failed(&a->view)) {
		w->stop = true;
		return JVMTI_VISIT_ABORT;
	}
	return joins ? JVMTI_VISIT_OBJECTS : 0;
}

/* f_prim, f_string, f_array: what a FollowReferences reports of the object it visits. */
static jint JNICALL f_prim(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			   jlong object_class_tag, jlong *object_tag_ptr, jvalue value,
			   jvmtiPrimitiveType value_type, void *ud)
{
	(void)object_class_tag;
	(void)value_type;
	struct hva *a = ud;
	struct walk *w = a->w;
	if (w->stop)
		return JVMTI_VISIT_ABORT;
	if (!a->w->active || *object_tag_ptr != a->w->cur_tag || kind != JVMTI_HEAP_REFERENCE_FIELD)
		return 0;
	uint32_t ix = (uint32_t)info->field.index;
	if (ix < w->w.nslots) {
		w->w.slots[ix].gen = w->w.gen;
		w->w.slots[ix].ref = false;
		w->w.slots[ix].v = value;
	}
	return 0;
}

static jint JNICALL f_string(jlong class_tag, jlong size, jlong *tag_ptr, const jchar *value,
			     jint value_length, void *ud)
{
	(void)class_tag;
	(void)size;
	struct hva *a = ud;
	struct walk *w = a->w;
	if (w->stop)
		return JVMTI_VISIT_ABORT;
	if (!a->w->active || *tag_ptr != a->w->cur_tag)
		return 0;
	GUARD(a, g, JVMTI_VISIT_ABORT);
	lq_wtext(a->q, &w->w, value, value_length > 0 ? (size_t)value_length : 0);
	UNGUARD(a, g);
	return 0;
}

static jint JNICALL f_array(jlong class_tag, jlong size, jlong *tag_ptr, jint element_count,
			    jvmtiPrimitiveType element_type, const void *elements, void *ud)
{
	(void)class_tag;
	(void)size;
	(void)element_type;
	(void)elements;
	struct hva *a = ud;
	struct walk *w = a->w;
	if (a->w->active && *tag_ptr == a->w->cur_tag) {
		w->length = element_count;
		if (w->kept != HV_NONE && w->kept < a->cap)
			a->elen[w->kept] = element_count;
	}
	return w->stop ? JVMTI_VISIT_ABORT : 0;
}

/* inst_of: the index of the instance whose id is id in req (ninst: none). */
static uint32_t inst_of(const struct hv_growth *req, uint32_t id)
{
	uint32_t k = 0;
	while (k < req->ninst && req->ids[k] != id)
		k++;
	return k;
}

/* joined_late: on_inclusion, through JNI, of what joined but the walk did not visit. */
static void joined_late(struct hva *a, struct grow *g)
{
	struct lq *q = a->q;
	const struct hv_growth *req = g->req;
	for (uint32_t c = 0; c < q->ncls && !hv_failed(&a->view); c++)
		if (q->cls[c].flags & LC_INCLUDE) {
			q->cls[c].flags &= (uint8_t)~LC_INCLUDE;
			uint32_t k = inst_of(req, q->cls[c].owner);
			if (k < req->ninst)
				req->joined(req->ctx, k, hva_mirror_handle(a, c));
		}
	for (uint32_t k = 0; k < q->nent && !hv_failed(&a->view); k++)
		if (q->ent[k].flags & LE_GROWN) {
			q->ent[k].flags &= (uint8_t)~LE_GROWN;
			{
				GUARD(a, gd, );
				hva_room(a);
				hva_pend(a, k);
				hva_resolve(a, k);
				UNGUARD(a, gd);
			}
			uint32_t ki = inst_of(req, q->ent[k].inst);
			if (a->refs[k] && a->refs[k] != PENDING && ki < req->ninst)
				req->joined(req->ctx, ki, k);
		}
}

/* A visit of every object (hva_objects_visit). */
struct visit_walk {
	bool (*fn)(void *ctx, uint32_t obj);
	void *ctx;
	const uint8_t *classes;
	jlong self_tag;		/* the agent's thread: its stack's roots are not followed */
};

/* visit_finish: the visit of the object the walk is at is over: fn on it. */
static void visit_finish(struct hva *a)
{
	struct visit_walk *vw = a->vw;
	struct walk *w = a->w;
	if (!w->active)
		return;
	w->active = false;
	if (w->stop)
		return;
	w->live = true;
	w->tag_ptr = NULL;
	bool go = vw->fn(vw->ctx, current(a));
	w->live = false;
	if (!go || hv_failed(&a->view))
		w->stop = true;
}

/*
 * visit_begin: the walk reaches the object tagged *tag_ptr, of class c (a
 * class object: m + 1): delivered when its visit is over if its class is
 * wanted, tagged now (the one callback whose tag_ptr is its own) so that it
 * can be kept then. May lq_raise (LQ_LIMIT).
 */
static void visit_begin(struct hva *a, jlong *tag_ptr, uint32_t c, uint32_t mirror)
{
	struct lq *q = a->q;
	struct visit_walk *vw = a->vw;
	struct walk *w = a->w;
	jlong t = *tag_ptr;
	struct lentry *e = mirror ? NULL : lq_entry(q, t);
	uint32_t cls = mirror ? q->c_class : c;
	w->cur_tag = t;
	w->active = !(e && (e->flags & (LE_SELF | LE_SENTINEL))) &&
		     (!vw->classes || (vw->classes[cls / 8] & (1u << (cls % 8))));
	if (!w->active)
		return;
	uint32_t h = HV_NONE;
	if (mirror) {
		h = hva_mirror_handle(a, mirror - 1);
	} else if (e) {
		h = (uint32_t)(t & 0xffffffff) - 1;
		hva_room(a);
		if (a->ecls[h] == LQ_NONE) {
			a->ecls[h] = c;
			a->elen[h] = -1;
		}
	} else {
		jlong nt;
		h = hva_new_handle(a, c, -1, &nt);
		*tag_ptr = nt;
		w->cur_tag = nt;
	}
	w->cls = cls;
	w->mirror = mirror;
	w->kept = h;
	w->length = a->elen[h];
	w->w.gen++;
	w->w.text = NULL;
	q->objects_seen++;
}

static bool visit_begin_guarded(struct hva *a, jlong *tag_ptr, uint32_t c, uint32_t mirror)
{
	jlong *volatile vt = tag_ptr;	/* read after the guard's setjmp */
	volatile uint32_t vc = c, vm = mirror;
	GUARD(a, g, (a->w->stop = true, false));
	visit_begin(a, vt, vc, vm);
	UNGUARD(a, g);
	return true;
}

static jint JNICALL v_ref(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			  jlong class_tag, jlong referrer_class_tag, jlong size, jlong *tag_ptr,
			  jlong *referrer_tag_ptr, jint length, void *ud)
{
	struct hva *a = ud;
	struct lq *q = a->q;
	struct visit_walk *vw = a->vw;
	struct walk *w = a->w;
	if (hva_walk_stops(a))
		return JVMTI_VISIT_ABORT;
	lq_note_size(q, class_tag, *tag_ptr, size);
	if (!referrer_tag_ptr) {	/* a GC root: followed, but the agent's own stack */
		jlong tt = kind == JVMTI_HEAP_REFERENCE_STACK_LOCAL ? info->stack_local.thread_tag
			   : kind == JVMTI_HEAP_REFERENCE_JNI_LOCAL ? info->jni_local.thread_tag : 0;
		return vw->self_tag && tt == vw->self_tag ? 0 : JVMTI_VISIT_OBJECTS;
	}
	jlong rt = *referrer_tag_ptr;
	struct lentry *re = lq_entry(q, rt);
	if (re && (re->flags & LE_SELF))
		return 0;	/* the agent's own objects */
	if (kind == JVMTI_HEAP_REFERENCE_CLASS || ((rt & LQ_TAG_CLASS) && rt != w->cur_tag)) {
		visit_finish(a);
		if (w->stop)
			return JVMTI_VISIT_ABORT;
		uint32_t rc = hva_class_index(q, referrer_class_tag);
		uint32_t m = (rt & LQ_TAG_CLASS) ? (uint32_t)(rt & 0xffffffff) : 0;
		if (rc == LQ_NONE && !m)
			return 0;	/* a class loaded since the analysis began */
		if (m > q->ncls)
			return JVMTI_VISIT_OBJECTS;
		if (!visit_begin_guarded(a, referrer_tag_ptr, rc, m))
			return JVMTI_VISIT_ABORT;
	}
	if (w->active && kind == JVMTI_HEAP_REFERENCE_FIELD && !w->mirror &&
	    (uint32_t)info->field.index < w->w.nslots) {
		struct wslot *sl = &w->w.slots[info->field.index];
		sl->gen = w->w.gen;
		sl->ref = true;
		uint32_t c = hva_class_index(q, class_tag);
		sl->cls = c == LQ_NONE ? q->c_object : c;
		sl->length = c != LQ_NONE && q->cls[c].elem ? length : -1;
		sl->tag = *tag_ptr;
	}
	return JVMTI_VISIT_OBJECTS;
}

static bool walk_slots(struct hva *a, struct walk *w);

/*
 * objects_visit: one FollowReferences from the GC roots, every reference
 * followed (after the request's GC every object is reached), each object of
 * the wanted classes tagged when it is reached and handed to fn when its
 * visit is over (its fields, its references, a String's text reported).
 */
void hva_objects_visit(struct hv *v, const uint8_t *classes,
			      bool (*fn)(void *ctx, uint32_t obj), void *ctx)
{
	struct hva *a = v->self;
	struct lq *q = a->q;
	if (!hva_walk_begin(a))
		return;
	struct walk w;
	memset(&w, 0, sizeof w);
	w.kept = HV_NONE;
	if (!walk_slots(a, &w))
		return;
	struct visit_walk vw = {fn, ctx, classes, 0};
	if (q->self_thread)
		(*q->jv)->GetTag(q->jv, q->self_thread, &vw.self_tag);
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.heap_reference_callback = v_ref;
	cb.primitive_field_callback = f_prim;
	cb.string_primitive_value_callback = f_string;
	cb.array_primitive_value_callback = f_array;
	a->w = &w;
	a->vw = &vw;
	hva_walk_from(a, &cb, a, true, NULL, NULL);
	if (!w.stop)
		visit_finish(a);
	a->w = NULL;
	a->vw = NULL;
	free(w.w.textbuf);	/* what was kept resolves when first read (get) */
}

/* walk_slots: w's slots for the fields of any class; false: no memory (the view failed). */
static bool walk_slots(struct hva *a, struct walk *w)
{
	struct lq *q = a->q;
	volatile uint32_t most = 0;	/* read after the guard's setjmp */
	for (uint32_t c = 0; c < q->ncls; c++)
		if (q->cls[c].nindex > most)
			most = q->cls[c].nindex;
	GUARD(a, g, false);
	w->w.nslots = most + 1;
	w->w.slots = lq_alloc(q, (size_t)w->w.nslots * sizeof *w->w.slots);
	UNGUARD(a, g);
	return true;
}

/* grow_prepare: the seeds' array tagged as the agent's own, the walk's slots; false: no memory. */
static bool grow_prepare(struct hva *a, jobject arr, uint32_t n, struct walk *w)
{
	struct lq *q = a->q;
	volatile uint32_t most = 0;	/* read after the guard's setjmp */
	for (uint32_t c = 0; c < q->ncls; c++)
		if (q->cls[c].nindex > most)
			most = q->cls[c].nindex;
	GUARD(a, g, false);
	(*q->jv)->SetTag(q->jv, arr, lq_new_entry(q, 0, (int32_t)n, LE_SELF));
	w->w.nslots = most + 1;
	w->w.slots = lq_alloc(q, (size_t)w->w.nslots * sizeof *w->w.slots);
	UNGUARD(a, g);
	return true;
}

/*
 * grow: one FollowReferences from an array of every instance's seeds, the
 * first instance's at the end (HotSpot pushes an array's elements in order
 * on the walk's stack: the last comes first), so that each instance's
 * growth is done, depth first, before the next instance's seeds are
 * reached. Each reference from an object the walk
 * visits (a seed, or one that joined) to one in no instance is offered;
 * what joins is visited in turn (JVMTI_VISIT_OBJECTS), and an object is
 * visited once, so that what joins needs no tag (join); joined() runs when
 * its visit is over (its primitive fields and a String's text reported), or
 * after the walk, through JNI, for what the walk did not visit.
 */
void hva_grow(struct hv *v, const struct hv_growth *req)
{
	struct hva *a = v->self;
	struct lq *q = a->q;
	JNIEnv *env = q->jni;
	uint32_t n = req->starts[req->ninst];
	const uint32_t *seeds = req->seeds;
	if (!n || !hva_walk_begin(a))
		return;
	for (uint32_t k = 0; k < n; k++)	/* the seeds' references (not in the walk) */
		if (seeds[k] < a->cap && a->refs[seeds[k]] == PENDING) {
			GUARD(a, g, );
			hva_resolve(a, seeds[k]);
			UNGUARD(a, g);
		}
	jobjectArray arr = (*env)->NewObjectArray(env, (jsize)n, q->cls[q->c_object].ref, NULL);
	if (!arr) {
		(*env)->ExceptionClear(env);
		hv_set_fail(v, HV_ERROR, "the JVM could not allocate an array of %u objects", n);
		return;
	}
	for (uint32_t k = 0; k < n; k++) {	/* marked seeds for the walk (grow_begin) */
		uint32_t h = seeds[k];
		jobject r = h < a->cap ? (a->emirror[h] ? q->cls[a->emirror[h] - 1].ref : a->refs[h])
				       : NULL;
		if (!r || r == PENDING)
			continue;
		(*env)->SetObjectArrayElement(env, arr, (jsize)(n - 1 - k), r);
		if (a->emirror[h])
			q->cls[a->emirror[h] - 1].flags |= LC_SEED;
		else
			q->ent[h].flags |= LE_SEED;
	}
	struct walk w;
	memset(&w, 0, sizeof w);
	w.kept = HV_NONE;
	struct grow g = {req, 0, false};
	if (!grow_prepare(a, arr, n, &w)) {
		(*env)->DeleteLocalRef(env, arr);
		return;
	}
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.heap_reference_callback = g_ref;
	if (req->fields) {	/* each is a callback, and a tag lookup, per field or String */
		cb.primitive_field_callback = f_prim;
		cb.string_primitive_value_callback = f_string;
	}
	cb.array_primitive_value_callback = f_array;	/* a primitive array's length */
	a->w = &w;
	a->gw = &g;
	hva_walk_from(a, &cb, a, true, arr, NULL);
	if (!w.stop)
		grow_finish(a);
	a->w = NULL;
	free(w.w.textbuf);
	(*env)->DeleteLocalRef(env, arr);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t h = seeds[k];
		if (h >= a->cap)
			continue;
		if (a->emirror[h])
			q->cls[a->emirror[h] - 1].flags &= (uint8_t)~LC_SEED;
		else
			q->ent[h].flags &= (uint8_t)~LE_SEED;
	}
	if (!w.stop && !hv_failed(v))
		joined_late(a, &g);
	a->gw = NULL;
}
