/*
 * heapif_agent.c - the agent's heap view (heapif_agent.h): the operations
 * of heapif.h over JNI and JVMTI, on the request's struct lq.
 */
#include "hva_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/classname.h"
#include "../base/ctx.h"
#include "ag.h"


static const struct hv_ops hva_ops;

/* ---- failures ---- */


/*
 * hva_caught: an lq_raise that a guard (LQ_TRY) of an operation caught, as the
 * view's failure; LQ_LIMIT and LQ_CANCELLED are kept for END.
 */
void hva_caught(struct hva *a)
{
	struct lq *q = a->q;
	enum hv_fail f = q->status == LQ_UNSUPPORTED ? HV_CANNOT
			 : q->status == LQ_CANCELLED ? HV_INTERRUPTED : HV_ERROR;
	if ((q->status == LQ_LIMIT || q->status == LQ_CANCELLED) && a->status == LQ_OK)
		a->status = q->status;
	hv_set_fail(&a->view, f, "%s", q->msg);
	q->status = LQ_OK;
}


void hva_cannot(struct hva *a, const char *what)
{
	hv_set_fail(&a->view, HV_CANNOT, "%s", what);
}

/* ---- the table of objects ---- */

/* hva_room: room for every entry of the analysis (lq_new_entry may have made more). */
void hva_room(struct hva *a)
{
	struct lq *q = a->q;
	if (q->nent <= a->cap)
		return;
	uint32_t cap = q->capent > q->nent ? q->capent : q->nent;
	size_t per = sizeof *a->refs + sizeof *a->ecls + sizeof *a->emirror + sizeof *a->elen;
	if (q->mem_used + (uint64_t)(cap - a->cap) * per > q->mem_limit)
		lq_raise(q, LQ_LIMIT, NULL, "the analysis holds more objects than the agent's memory "
			 "limit allows");
	jobject *r = realloc(a->refs, cap * sizeof *r);
	if (r)
		a->refs = r;
	uint32_t *c = realloc(a->ecls, cap * sizeof *c);
	if (c)
		a->ecls = c;
	uint32_t *m = realloc(a->emirror, cap * sizeof *m);
	if (m)
		a->emirror = m;
	int32_t *l = realloc(a->elen, cap * sizeof *l);
	if (l)
		a->elen = l;
	if (!r || !c || !m || !l)
		lq_raise(q, LQ_LIMIT, NULL, "the agent ran out of memory");
	for (uint32_t k = a->cap; k < cap; k++) {
		a->refs[k] = NULL;
		a->ecls[k] = LQ_NONE;
		a->emirror[k] = 0;
		a->elen[k] = -1;
	}
	q->mem_used += (uint64_t)(cap - a->cap) * per;
	a->cap = cap;
}

/* hva_new_handle: a new entry (not a tag yet) for an object of class c, length len. */
uint32_t hva_new_handle(struct hva *a, uint32_t c, int32_t len, jlong *tag)
{
	jlong t = lq_new_entry(a->q, 0, len, LE_ARRAY);
	uint32_t h = (uint32_t)(t & 0xffffffff) - 1;
	hva_room(a);
	a->ecls[h] = c;
	a->elen[h] = len;
	if (tag)
		*tag = t;
	return h;
}

/* hva_mirror_handle: the handle of class c's class object (no JNI: safe in a walk). */
uint32_t hva_mirror_handle(struct hva *a, uint32_t c)
{
	struct lq *q = a->q;
	if (a->mirror_h[c] == HV_NONE) {
		uint32_t h = hva_new_handle(a, q->c_class, -1, NULL);
		a->refs[h] = q->cls[c].ref;
		a->emirror[h] = c + 1;
		a->mirror_h[c] = h;
	}
	return a->mirror_h[c];
}

/* The reference of a handle kept in a walk until it is asked for (resolve). */
char hva_pending_ref;

/* hva_pend: h was kept in a walk; its reference comes when first needed (resolve). */
void hva_pend(struct hva *a, uint32_t h)
{
	struct lq *q = a->q;
	a->refs[h] = PENDING;
	if (a->npending == a->cappending) {
		uint32_t cap = a->cappending ? a->cappending * 2 : 256;
		if (q->mem_used + (uint64_t)(cap - a->cappending) * sizeof *a->pending > q->mem_limit)
			lq_raise(q, LQ_LIMIT, NULL, "the analysis keeps more objects than the agent's "
				 "memory limit allows");
		uint32_t *p = realloc(a->pending, cap * sizeof *p);
		if (!p)
			lq_raise(q, LQ_LIMIT, NULL, "the agent ran out of memory");
		q->mem_used += (uint64_t)(cap - a->cappending) * sizeof *p;
		a->pending = p;
		a->cappending = cap;
	}
	a->pending[a->npending++] = h;
}

/*
 * resolve: the reference of h, kept during a walk (not in a walk: JNI):
 * with those of every handle kept since, in one GetObjectsWithTags, when
 * the JVM's lookup of them all is quick enough (LQ_TAGGED_WORK_MAX), else
 * h's alone, so that a member that keeps many objects and reads few
 * (top, group_by's counts) reads only those. May lq_raise.
 */
void hva_resolve(struct hva *a, uint32_t h)
{
	struct lq *q = a->q;
	struct lq_mark mk;
	lq_mark(q, &mk);
	uint32_t n = 0;
	for (uint32_t k = 0; k < a->npending; k++)
		n += a->refs[a->pending[k]] == PENDING;
	if ((uint64_t)n * ((uint64_t)q->nent + q->ncls + 1) > LQ_TAGGED_WORK_MAX) {
		jlong want = LQ_TAG_ENTRY | (jlong)(h + 1);
		jobject got;
		lq_tagged_refs(q, NULL, &want, 1, &got);
		a->refs[h] = got;	/* NULL: collected meanwhile */
		lq_release(q, &mk);
		return;
	}
	jlong *want = lq_alloc(q, ((size_t)n + 1) * sizeof *want);
	jobject *got = lq_alloc(q, ((size_t)n + 1) * sizeof *got);
	uint32_t *hs = lq_alloc(q, ((size_t)n + 1) * sizeof *hs);
	n = 0;
	for (uint32_t k = 0; k < a->npending; k++)
		if (a->refs[a->pending[k]] == PENDING) {
			hs[n] = a->pending[k];
			want[n++] = LQ_TAG_ENTRY | (jlong)(a->pending[k] + 1);
		}
	lq_tagged_refs(q, NULL, want, n, got);
	for (uint32_t k = 0; k < n; k++)
		a->refs[hs[k]] = got[k];	/* NULL: collected meanwhile */
	a->npending = 0;
	lq_release(q, &mk);
}

/*
 * handle_of_ref: the handle of the object of local reference ref (taken:
 * deleted when the object has a handle already), HV_NONE for NULL. Not in
 * a walk (JNI). May lq_raise.
 */
static uint32_t handle_of_ref(struct hva *a, jobject ref)
{
	struct lq *q = a->q;
	JNIEnv *env = q->jni;
	if (!ref)
		return HV_NONE;
	jlong t = 0;
	(*q->jv)->GetTag(q->jv, ref, &t);
	if (t & LQ_TAG_CLASS) {
		uint32_t c = (uint32_t)(t & 0xffffffff) - 1;
		(*env)->DeleteLocalRef(env, ref);
		return c < q->ncls ? hva_mirror_handle(a, c) : HV_NONE;
	}
	if (lq_entry(q, t)) {
		uint32_t h = (uint32_t)(t & 0xffffffff) - 1;
		hva_room(a);
		if (a->refs[h] && a->refs[h] != PENDING) {
			(*env)->DeleteLocalRef(env, ref);
			return h;
		}
		a->refs[h] = ref;
		if (a->ecls[h] == LQ_NONE) {	/* an entry of lq's own (the agent's thread) */
			a->ecls[h] = lq_class_of_ref(q, ref);
			a->elen[h] = q->cls[a->ecls[h]].elem ? (*env)->GetArrayLength(env, ref) : -1;
		}
		return h;
	}
	uint32_t c = lq_class_of_ref(q, ref);
	int32_t len = q->cls[c].elem ? (*env)->GetArrayLength(env, ref) : -1;
	jlong nt;
	uint32_t h = hva_new_handle(a, c, len, &nt);
	(*q->jv)->SetTag(q->jv, ref, nt);
	a->refs[h] = ref;
	return h;
}

/* ---- objects ---- */


bool hva_get(struct hva *a, uint32_t obj, struct ob *o)
{
	struct walk *w = a->w;
	if (obj == HV_NONE) {
		hv_set_fail(&a->view, HV_ERROR, "null has no members");
		return false;
	}
	if (obj == TARGET && a->tg.live) {
		*o = (struct ob){a->tg.cls, a->tg.mirror, a->tg.length, NULL, true, true};
		return true;
	}
	if ((obj & HV_TRANSIENT) && obj != HV_NONE && (obj & ~HV_TRANSIENT) >= 2 && a->vw && w &&
	    w->live) {	/* what a reference field of the visited object holds */
		uint32_t ix = (obj & ~HV_TRANSIENT) - 2;
		if (ix >= w->w.nslots || w->w.slots[ix].gen != w->w.gen || !w->w.slots[ix].ref) {
			hv_set_fail(&a->view, HV_ERROR, "an object of a heap walk read after its step");
			return false;
		}
		const struct wslot *sl = &w->w.slots[ix];
		*o = (struct ob){sl->cls, 0, sl->length, NULL, true, true};
		return true;
	}
	if ((obj & HV_TRANSIENT) || (w && w->live && obj == w->kept)) {
		if (!w || !w->live) {
			hv_set_fail(&a->view, HV_ERROR, "an object of a heap walk read after its step");
			return false;
		}
		*o = (struct ob){w->cls, w->mirror, w->length, NULL, true, false};
		return true;
	}
	if (obj >= a->cap || a->ecls[obj] == LQ_NONE) {
		hv_set_fail(&a->view, HV_ERROR, "no object with handle %u", obj);
		return false;
	}
	if (a->refs[obj] == PENDING && !a->q->in_walk) {
		GUARD(a, g, false);
		hva_resolve(a, obj);
		UNGUARD(a, g);
	}
	jobject ref = a->refs[obj] == PENDING ? NULL : a->refs[obj];
	*o = (struct ob){a->ecls[obj], a->emirror[obj], a->elen[obj], ref, false, false};
	return true;
}

/* jni_ok: whether o can be read through JNI now; HV_CANNOT otherwise. */
static bool jni_ok(struct hva *a, const struct ob *o, const char *what)
{
	if (o->walk || a->q->in_walk) {
		hv_set_fail(&a->view, HV_CANNOT, "%s during a heap walk", what);
		return false;
	}
	if (!o->ref) {
		hv_set_fail(&a->view, HV_CANNOT, "%s of an object collected since it was met", what);
		return false;
	}
	return true;
}

static struct lobj as_lobj(const struct ob *o)
{
	struct lobj l = {o->ref, o->cls, o->mirror, o->length, 0};
	return l;
}

static uint32_t hva_class_of(struct hv *v, uint32_t obj)
{
	struct ob o;
	return hva_get(v->self, obj, &o) ? o.cls : 0;
}

static enum hv_obj_kind hva_kind(struct hv *v, uint32_t obj)
{
	struct hva *a = v->self;
	struct ob o;
	if (!hva_get(a, obj, &o))
		return HV_INSTANCE;
	char e = a->q->cls[o.cls].elem;
	return o.mirror ? HV_CLASS_OBJECT : !e ? HV_INSTANCE
	       : e == 'L' || e == '[' ? HV_OBJ_ARRAY : HV_PRIM_ARRAY;
}

static uint64_t hva_shallow(struct hv *v, uint32_t obj)
{
	struct hva *a = v->self;
	struct ob o;
	if (!hva_get(a, obj, &o))
		return 0;
	struct lobj l = as_lobj(&o);
	if (a->q->in_walk)
		l.ref = NULL;	/* no GetObjectSize in a walk: the class's size noted by it */
	GUARD(a, g, 0);
	uint64_t s = lq_shallow(a->q, &l);
	UNGUARD(a, g);
	return s;
}

static uint64_t hva_id(struct hv *v, uint32_t obj)
{
	struct hva *a = v->self;
	struct ob o;
	if (!hva_get(a, obj, &o))
		return 0;
	if (o.mirror)
		return a->q->cls[o.mirror - 1].id;
	if (o.walk || (!o.ref && a->q->in_walk)) {
		hva_cannot(a, "an object's id during a heap walk");
		return 0;
	}
	if (!o.ref) {
		hva_cannot(a, "the id of an object collected since it was met");
		return 0;
	}
	return lq_address(o.ref);
}

static bool hva_field_locate(struct hv *v, uint32_t c, const char *name, struct hv_slot *slot)
{
	struct hva *a = v->self;
	struct lq *q = a->q;
	GUARD(a, g, false);
	const struct lfield *f = lq_field(q, c, name);
	if (f && a->nslots == a->capslots) {
		uint32_t cap = a->capslots ? a->capslots * 2 : 64;
		const struct lfield **n = lq_alloc_keep(q, cap * sizeof *n);
		if (a->nslots)
			memcpy(n, a->slots, a->nslots * sizeof *n);
		a->slots = n;
		a->capslots = cap;
	}
	UNGUARD(a, g);
	if (!f)
		return false;
	slot->off = a->nslots;
	slot->type = (uint8_t)f->type;
	a->slots[a->nslots++] = f;
	return true;
}

/* from_jvalue: a value JNI read (of signature letter t) as the interface's; may lq_raise. */
static struct hv_value from_jvalue(struct hva *a, char t, jvalue x)
{
	struct hv_value r = {HV_T_INT, {0}};
	switch (t) {
	case 'Z': r.type = HV_T_BOOLEAN; r.v.i = x.z != 0; break;
	case 'B': r.v.i = x.b; break;
	case 'C': r.type = HV_T_CHAR; r.v.i = x.c; break;
	case 'S': r.v.i = x.s; break;
	case 'I': r.v.i = x.i; break;
	case 'J': r.v.i = x.j; break;
	case 'F': r.type = HV_T_FLOAT; r.v.d = x.f; break;
	case 'D': r.type = HV_T_FLOAT; r.v.d = x.d; break;
	case 'L': case '[': r.type = HV_T_OBJECT; r.v.obj = handle_of_ref(a, x.l); break;
	default: r.type = HV_T_NONE; break;
	}
	return r;
}

/*
 * visit_ref: reference field f of the object a visit delivers (all of it
 * reported: a field the walk did not report is null): the handle of what it
 * holds, if it has one with its reference, else a transient one that reads
 * what the reference reported (HV_TRANSIENT | 2 + the field's slot).
 */
static struct hv_value visit_ref(struct hva *a, const struct lfield *f)
{
	struct walk *w = a->w;
	struct lq *q = a->q;
	struct hv_value r = {HV_T_OBJECT, {.obj = HV_NONE}};
	uint32_t ix = f->jvmti_index;
	if (ix >= w->w.nslots || w->w.slots[ix].gen != w->w.gen || !w->w.slots[ix].ref)
		return r;	/* not reported: null */
	jlong t = w->w.slots[ix].tag;
	if (t & LQ_TAG_CLASS) {
		uint32_t c = (uint32_t)(t & 0xffffffff) - 1;
		if (c < q->ncls)
			r.v.obj = hva_mirror_handle(a, c);
		return r;
	}
	uint32_t h = lq_entry(q, t) ? (uint32_t)(t & 0xffffffff) - 1 : HV_NONE;
	if (h != HV_NONE && h < a->cap && a->ecls[h] != LQ_NONE && a->refs[h])
		r.v.obj = h;
	else
		r.v.obj = HV_TRANSIENT | (ix + 2);
	return r;
}

/* walk_field: field f of the object the walk is at, from what it reported. */
static struct hv_value walk_field(struct hva *a, const struct lfield *f)
{
	struct walk *w = a->w;
	struct hv_value none = {HV_T_NONE, {0}};
	const struct lclass *k = &a->q->cls[w->cls];
	if ((f->type == 'L' || f->type == '[') && a->vw)
		return visit_ref(a, f);
	if (f->type == 'L' || f->type == '[') {
		hv_set_fail(&a->view, HV_CANNOT, "the reference field %s of an object a heap "
			    "iteration is at (it reports primitive fields only)", f->name);
		return none;
	}
	for (uint32_t j = 0; j < k->nfields; j++)
		if (k->fields[j].id == f->id) {
			uint32_t ix = k->fields[j].jvmti_index;
			if (ix >= w->w.nslots || w->w.slots[ix].gen != w->w.gen)
				break;
			return from_jvalue(a, f->type, w->w.slots[ix].v);	/* a primitive: no JNI */
		}
	hv_set_fail(&a->view, HV_CANNOT, "field %s, which the heap iteration did not report",
		    f->name);
	return none;
}

static struct hv_value hva_field_at(struct hv *v, uint32_t obj, struct hv_slot slot)
{
	struct hva *a = v->self;
	struct hv_value none = {HV_T_NONE, {0}};
	struct ob o;
	if (!hva_get(a, obj, &o) || slot.off >= a->nslots)
		return none;
	if (o.mirror || a->q->cls[o.cls].elem)
		return none;
	const struct lfield *f = a->slots[slot.off];
	if (o.target) {
		hv_set_fail(v, HV_CANNOT, "field %s of an object a growth walk reaches before it "
			    "visits it (a set type's membership reading THIS's fields)", f->name);
		return none;
	}
	if (o.walk)
		return walk_field(a, f);
	if (!jni_ok(a, &o, "reading a field"))
		return none;
	GUARD(a, g, none);
	struct hv_value r = from_jvalue(a, f->type, lq_field_jvalue(a->q, NULL, o.ref, f));
	UNGUARD(a, g);
	return r;
}

static void hva_field_names(struct hv *v, uint32_t obj, void (*fn)(void *ctx, const char *name),
			    void *ctx)
{
	struct hva *a = v->self;
	struct ob o;
	if (!hva_get(a, obj, &o) || o.mirror)
		return;
	GUARD(a, g, );
	lq_class_fields(a->q, o.cls);
	UNGUARD(a, g);
	const struct lclass *k = &a->q->cls[o.cls];
	for (uint32_t f = 0; f < k->nfields; f++)
		fn(ctx, k->fields[f].name);
}

static uint32_t hva_array_length(struct hv *v, uint32_t obj)
{
	struct ob o;
	return hva_get(v->self, obj, &o) && o.length > 0 ? (uint32_t)o.length : 0;
}

static struct hv_value hva_array_elem(struct hv *v, uint32_t obj, uint32_t k)
{
	struct hva *a = v->self;
	struct lq *q = a->q;
	JNIEnv *env = q->jni;
	struct hv_value none = {HV_T_NONE, {0}};
	struct ob o;
	if (!hva_get(a, obj, &o) || o.mirror || !q->cls[o.cls].elem || o.length < 0 ||
	    k >= (uint32_t)o.length)
		return none;
	if (!jni_ok(a, &o, "an array's elements"))
		return none;
	char t = q->cls[o.cls].elem;
	jvalue x;
	jsize i = (jsize)k;
	switch (t) {
	case 'Z': (*env)->GetBooleanArrayRegion(env, o.ref, i, 1, &x.z); break;
	case 'B': (*env)->GetByteArrayRegion(env, o.ref, i, 1, &x.b); break;
	case 'C': (*env)->GetCharArrayRegion(env, o.ref, i, 1, &x.c); break;
	case 'S': (*env)->GetShortArrayRegion(env, o.ref, i, 1, &x.s); break;
	case 'I': (*env)->GetIntArrayRegion(env, o.ref, i, 1, &x.i); break;
	case 'J': (*env)->GetLongArrayRegion(env, o.ref, i, 1, &x.j); break;
	case 'F': (*env)->GetFloatArrayRegion(env, o.ref, i, 1, &x.f); break;
	case 'D': (*env)->GetDoubleArrayRegion(env, o.ref, i, 1, &x.d); break;
	default: x.l = (*env)->GetObjectArrayElement(env, o.ref, i); break;
	}
	if ((*env)->ExceptionCheck(env)) {
		(*env)->ExceptionClear(env);
		hv_set_fail(v, HV_ERROR, "the JVM failed while reading an array element");
		return none;
	}
	GUARD(a, g, none);
	struct hv_value r = from_jvalue(a, t, x);
	UNGUARD(a, g);
	return r;
}

/* cut: s (UTF-8) as a malloc'd string of at most max_chars characters (0: all), "..." when cut. */
static char *cut(const char *s, size_t max_chars)
{
	size_t n = strlen(s), chars = 0, k;
	for (k = 0; k < n; k++)
		if (((unsigned char)s[k] & 0xC0) != 0x80 && max_chars && chars++ == max_chars)
			break;
	char *r = malloc(k + 4);
	if (!r)
		return NULL;
	memcpy(r, s, k);
	strcpy(r + k, k < n ? "..." : "");
	return r;
}

static char *hva_text(struct hv *v, uint32_t obj, size_t max_chars)
{
	struct hva *a = v->self;
	struct lq *q = a->q;
	struct ob o;
	if (!hva_get(a, obj, &o) || o.mirror || o.cls != q->c_string)
		return NULL;
	if (o.target) {
		hva_cannot(a, "the text of a String a growth walk reaches before it visits it");
		return NULL;
	}
	if (o.walk) {
		if (!a->w->w.text) {
			hva_cannot(a, "a String's text the heap iteration did not report");
			return NULL;
		}
		return cut(a->w->w.text, max_chars);
	}
	if (!jni_ok(a, &o, "a String's text"))
		return NULL;
	struct lq_mark mk;
	lq_mark(q, &mk);
	GUARD(a, g, NULL);
	struct lobj l = as_lobj(&o);
	const char *t = lq_text(q, &l);
	UNGUARD(a, g);
	char *r = t ? cut(t, max_chars) : NULL;
	lq_release(q, &mk);
	return r;
}

static const uint32_t *hva_refs_out(struct hv *v, uint32_t obj, uint32_t *count)
{
	(void)obj;
	*count = 0;
	hva_cannot(v->self, "an object's references inside the JVM (not yet)");
	return NULL;
}

static const uint32_t *hva_refs_in(struct hv *v, uint32_t obj, uint32_t *count)
{
	(void)obj;
	*count = 0;
	hva_cannot(v->self, "the referrers of an object (the whole heap graph is needed)");
	return NULL;
}

static void hva_refs_each(struct hv *v, uint32_t obj, bool (*fn)(void *ctx, const struct hv_ref *r),
			  void *ctx)
{
	(void)obj;
	(void)fn;
	(void)ctx;
	hva_cannot(v->self, "an object's references inside the JVM (not yet)");
}

static const char *hva_heap_name(struct hv *v, uint32_t obj)
{
	(void)v;
	(void)obj;
	return NULL;	/* Android's heaps; a HotSpot JVM has one */
}

static uint64_t hva_retained(struct hv *v, uint32_t obj)
{
	(void)obj;
	hva_cannot(v->self, "a retained size (the dominator tree of the whole heap is needed)");
	return 0;
}

static uint64_t hva_dynamic_size(struct hv *v, uint32_t obj, bool estimate)
{
	(void)obj;
	(void)estimate;
	hva_cannot(v->self, "a dynamic size (the whole heap graph is needed)");
	return 0;
}

/* ---- heap walks ---- */

/* hva_walk_begin: the request's GC, the fields of every class (no JVMTI calls in callbacks). */
bool hva_walk_begin(struct hva *a)
{
	struct lq *q = a->q;
	if (q->in_walk) {
		hva_cannot(a, "a heap walk inside a heap walk");
		return false;
	}
	GUARD(a, g, false);
	lq_gc(q);
	for (uint32_t c = 0; c < q->ncls; c++)
		lq_class_fields(q, c);	/* arrays too: their class objects' sizes */
	UNGUARD(a, g);
	return true;
}

/*
 * hva_walk_from: FollowReferences with cb from initial (NULL: the GC roots), or
 * (follow false) IterateThroughHeap over the whole heap; klass: NULL, or
 * the one class whose instances are reported (exactly it: HotSpot's
 * is_filtered_by_klass_filter compares the klass, no subclass). The pause
 * counted.
 */
jvmtiError hva_walk_from(struct hva *a, const jvmtiHeapCallbacks *cb, void *ud, bool follow,
			    jobject initial, jclass klass)
{
	struct lq *q = a->q;
	int64_t t0 = ag_now_ms();
	q->in_walk = true;
	jvmtiError err = follow ? (*q->jv)->FollowReferences(q->jv, 0, klass, initial, cb, ud)
				: (*q->jv)->IterateThroughHeap(q->jv, 0, klass, cb, ud);
	q->in_walk = false;
	q->walks++;
	q->pause_ms += (uint64_t)(ag_now_ms() - t0);
	if (err != JVMTI_ERROR_NONE)
		hv_set_fail(&a->view, HV_ERROR, "a heap walk failed (JVMTI error %d)", err);
	return err;
}

/*
 * hva_walk_stops: whether the walk under way must stop (a callback then
 * returns JVMTI_VISIT_ABORT): it stopped already, or the request was
 * interrupted (CANCEL, the time or memory limit), which fails the view.
 */
bool hva_walk_stops(struct hva *a)
{
	if (a->w->stop)
		return true;
	if (*a->interrupted) {
		hv_set_fail(&a->view, HV_INTERRUPTED, "interrupted");
		a->w->stop = true;
	}
	return a->w->stop;
}

/* walk_run: walk_from the GC roots (follow) or over the whole heap. */
static jvmtiError walk_run(struct hva *a, const jvmtiHeapCallbacks *cb, void *ud, bool follow)
{
	return hva_walk_from(a, cb, ud, follow, NULL, NULL);
}

/* hva_class_index: the class of a JVMTI class tag, or LQ_NONE (a class loaded since the table). */
uint32_t hva_class_index(const struct lq *q, jlong class_tag)
{
	uint32_t c = (uint32_t)(class_tag & 0xffffffff) - 1;
	return (class_tag & LQ_TAG_CLASS) && c < q->ncls ? c : LQ_NONE;
}

/*
 * left_out: an object a dump of the JVM leaves out, which the view leaves
 * out too: the agent's own (LE_SELF), an object of a class loaded since
 * the class table was made, and a class object (java.lang.Class) of no
 * class of the table but int.class and the others (tagged LE_PRIM): what
 * HotSpot's heap dumper writes neither as a class nor as an instance.
 */
static bool left_out(const struct lq *q, uint32_t c, jlong tag, const struct lentry *e)
{
	return c == LQ_NONE || (e && (e->flags & LE_SELF)) ||
	       (c == q->c_class && !(tag & LQ_TAG_CLASS) && !e);
}

/* prims: class c's primitive instance fields (the walk reports each of them). */
static uint32_t prims(struct hva *a, uint32_t c)
{
	if (a->nprim[c] == 0xffff) {
		const struct lclass *k = &a->q->cls[c];
		uint32_t n = 0;
		for (uint32_t f = 0; f < k->nfields; f++)
			n += k->fields[f].type != 'L' && k->fields[f].type != '[';
		a->nprim[c] = (uint16_t)(n < 0xfffe ? n : 0xfffe);
	}
	return a->nprim[c];
}

/*
 * deliver: fn on the object the walk is at, with tag_ptr the callback's
 * (NULL when it comes after the object's last callback: it cannot be kept
 * then). A throw under fn (no memory) is caught here: no longjmp crosses
 * the VM.
 */
static void deliver(struct hva *a, jlong *tag_ptr)
{
	struct walk *w = a->w;
	w->pending = false;
	if (w->stop)
		return;
	w->tag_ptr = tag_ptr;
	w->live = true;
	struct hs_catch c;
	hs_catch_push(&c);
	if (setjmp(c.jb)) {
		hv_set_fail(&a->view, HV_ERROR, "%s", c.msg);
		w->live = false;
		w->stop = true;
		return;
	}
	bool go = w->fn(w->ctx, w->kept != HV_NONE ? w->kept : HV_TRANSIENT);
	hs_catch_pop(&c);
	w->live = false;
	if (!go || hv_failed(&a->view))
		w->stop = true;
}

static jint JNICALL on_object(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud)
{
	struct hva *a = ud;
	struct lq *q = a->q;
	struct walk *w = a->w;
	if (w->pending)
		deliver(a, NULL);	/* its last callback did not come: reported late */
	if (hva_walk_stops(a))
		return JVMTI_VISIT_ABORT;
	lq_note_size(q, class_tag, *tag_ptr, size);
	uint32_t c = hva_class_index(q, class_tag);
	jlong t = *tag_ptr;
	struct lentry *e = lq_entry(q, t);
	if (left_out(q, c, t, e))
		return 0;
	q->objects_seen++;
	w->cls = c;
	w->mirror = (t & LQ_TAG_CLASS) ? (uint32_t)(t & 0xffffffff) : 0;
	w->length = q->cls[c].elem ? length : -1;
	w->kept = w->mirror ? (w->mirror - 1 < q->ncls ? a->mirror_h[w->mirror - 1] : HV_NONE)
		  : e && (uint32_t)(t & 0xffffffff) - 1 < a->cap &&
			    a->ecls[(uint32_t)(t & 0xffffffff) - 1] != LQ_NONE
		  ? (uint32_t)(t & 0xffffffff) - 1 : HV_NONE;
	w->w.gen++;
	w->w.text = NULL;
	w->got = 0;
	/* a Class instance's primitive fields are reported as its class's statics
	 * (JVMTI_HEAP_REFERENCE_STATIC_FIELD), even one without a class tag (int.class) */
	w->expect = c != q->c_class && !q->cls[c].elem ? prims(a, c) : 0;
	w->want_text = !w->mirror && c == q->c_string;
	w->pending = true;
	if (!w->expect && !w->want_text)
		deliver(a, tag_ptr);
	return w->stop ? JVMTI_VISIT_ABORT : 0;
}

static jint JNICALL on_prim(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			    jlong object_class_tag, jlong *object_tag_ptr, jvalue value,
			    jvmtiPrimitiveType value_type, void *ud)
{
	(void)object_class_tag;
	(void)value_type;
	struct hva *a = ud;
	struct walk *w = a->w;
	if (w->stop)
		return JVMTI_VISIT_ABORT;
	if (!w->pending || kind != JVMTI_HEAP_REFERENCE_FIELD)
		return 0;
	uint32_t ix = (uint32_t)info->field.index;
	if (ix < w->w.nslots) {
		w->w.slots[ix].gen = w->w.gen;
		w->w.slots[ix].v = value;
	}
	if (++w->got == w->expect && !w->want_text)
		deliver(a, object_tag_ptr);
	return w->stop ? JVMTI_VISIT_ABORT : 0;
}

static jint JNICALL on_string(jlong class_tag, jlong size, jlong *tag_ptr, const jchar *value,
			      jint value_length, void *ud)
{
	(void)class_tag;
	(void)size;
	struct hva *a = ud;
	struct walk *w = a->w;
	if (w->stop)
		return JVMTI_VISIT_ABORT;
	if (!w->pending)
		return 0;
	GUARD(a, g, JVMTI_VISIT_ABORT);
	lq_wtext(a->q, &w->w, value, value_length > 0 ? (size_t)value_length : 0);
	UNGUARD(a, g);
	deliver(a, tag_ptr);
	return w->stop ? JVMTI_VISIT_ABORT : 0;
}

/*
 * single_class: the one class whose bit is set in classes, if no other is
 * and it is no array class, for IterateThroughHeap to filter (its callbacks
 * then come for those objects only); else NULL, and every object is handed.
 */
static jclass single_class(const struct lq *q, const uint8_t *classes)
{
	uint32_t found = LQ_NONE;
	for (uint32_t c = 0; classes && c < q->ncls; c++)
		if (classes[c / 8] & (1u << (c % 8))) {
			if (found != LQ_NONE)
				return NULL;
			found = c;
		}
	return found == LQ_NONE || q->cls[found].elem || found == q->c_class ? NULL
											 : q->cls[found].ref;
}

/*
 * objects_each: one IterateThroughHeap over every object after the
 * request's GC; each is handed to fn after its primitive fields (and a
 * String's text) were reported, which JVMTI does after its object callback.
 */
static void hva_objects_each(struct hv *v, const uint8_t *classes,
			     bool (*fn)(void *ctx, uint32_t obj), void *ctx)
{
	struct hva *a = v->self;
	struct lq *q = a->q;
	if (!hva_walk_begin(a))
		return;
	struct walk w;
	memset(&w, 0, sizeof w);
	w.fn = fn;
	w.ctx = ctx;
	w.kept = HV_NONE;
	uint32_t most = 0;
	for (uint32_t c = 0; c < q->ncls; c++)
		if (q->cls[c].nindex > most)
			most = q->cls[c].nindex;
	{
		GUARD(a, g, );
		w.w.nslots = most + 1;
		w.w.slots = lq_alloc(q, (size_t)w.w.nslots * sizeof *w.w.slots);
		UNGUARD(a, g);
	}
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.heap_iteration_callback = on_object;
	cb.primitive_field_callback = on_prim;
	cb.string_primitive_value_callback = on_string;
	a->w = &w;
	hva_walk_from(a, &cb, a, false, NULL, single_class(q, classes));
	if (w.pending)
		deliver(a, NULL);
	a->w = NULL;
	free(w.w.textbuf);	/* the handles it kept get their references when read (resolve) */
}

/* The totals of every class, one walk (class_totals). */
static jint JNICALL on_count(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud)
{
	struct hva *a = ud;
	struct lq *q = a->q;
	if (*a->interrupted)
		return JVMTI_VISIT_ABORT;
	lq_note_size(q, class_tag, *tag_ptr, size);
	uint32_t c = hva_class_index(q, class_tag);
	struct lentry *e = lq_entry(q, *tag_ptr);
	if (left_out(q, c, *tag_ptr, e))
		return 0;
	q->objects_seen++;
	uint32_t mirror = (*tag_ptr & LQ_TAG_CLASS) ? (uint32_t)(*tag_ptr & 0xffffffff) : 0;
	struct lobj o = {NULL, c, mirror, q->cls[c].elem ? length : -1, 0};
	GUARD(a, g, JVMTI_VISIT_ABORT);
	a->tot_count[c]++;
	a->tot_bytes[c] += lq_shallow(q, &o);	/* the fields read before: no JVMTI call */
	UNGUARD(a, g);
	return 0;
}

static void hva_class_totals(struct hv *v, uint32_t c, uint64_t *count, uint64_t *bytes)
{
	struct hva *a = v->self;
	struct lq *q = a->q;
	*count = *bytes = 0;
	if (!a->tot_count) {
		if (!hva_walk_begin(a))
			return;
		GUARD(a, g, );
		uint64_t *n = lq_alloc_keep(q, ((size_t)q->ncls + 1) * sizeof *n);
		uint64_t *b = lq_alloc_keep(q, ((size_t)q->ncls + 1) * sizeof *b);
		UNGUARD(a, g);
		a->tot_count = n;
		a->tot_bytes = b;
		jvmtiHeapCallbacks cb;
		memset(&cb, 0, sizeof cb);
		cb.heap_iteration_callback = on_count;
		walk_run(a, &cb, a, false);
		if (*a->interrupted)
			hv_set_fail(v, HV_INTERRUPTED, "interrupted");
		if (hv_failed(v)) {
			a->tot_count = a->tot_bytes = NULL;
			return;
		}
	}
	*count = a->tot_count[c];
	*bytes = a->tot_bytes[c];
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return a < b ? -1 : a > b;
}

static const uint32_t *hva_instances(struct hv *v, uint32_t c, uint32_t *count)
{
	struct hva *a = v->self;
	struct lq *q = a->q;
	*count = 0;
	if (q->in_walk) {
		hva_cannot(a, "a class's instances during a heap walk");
		return NULL;
	}
	if (a->inst[c]) {
		*count = a->ninst[c];
		return a->inst[c];
	}
	static const uint32_t none[1];
	if (a->tot_count && !a->tot_count[c])
		return none;	/* none: no walk */
	struct lq_mark mk;
	lq_mark(q, &mk);
	GUARD(a, g, NULL);
	uint32_t nl;
	struct lobj *l = lq_instances(q, c, &nl);
	uint32_t *h = lq_alloc_keep(q, ((size_t)nl + 1) * sizeof *h), n = 0;
	for (uint32_t k = 0; k < nl; k++) {
		struct lobj *o = &l[k];
		if (o->mirror) {
			h[n++] = hva_mirror_handle(a, o->mirror - 1);
			continue;
		}
		uint32_t e = (uint32_t)(o->tag & 0xffffffff) - 1;
		hva_room(a);
		if (a->refs[e] && a->refs[e] != PENDING)
			(*q->jni)->DeleteLocalRef(q->jni, o->ref);
		else
			a->refs[e] = o->ref;
		a->ecls[e] = o->cls;
		a->elen[e] = o->length;
		h[n++] = e;
	}
	UNGUARD(a, g);
	lq_release(q, &mk);
	qsort(h, n, sizeof *h, cmp_u32);
	a->inst[c] = h;
	a->ninst[c] = n;
	*count = n;
	return h;
}

/* ---- classes ---- */

static void hva_class_info(struct hv *v, uint32_t c, struct hv_class *out)
{
	struct hva *a = v->self;
	struct lq *q = a->q;
	const struct lclass *k = &q->cls[c];
	memset(out, 0, sizeof *out);
	out->name = k->name;
	out->super = k->super == LQ_NONE ? HV_NONE : k->super;
	out->loader = a->loader_h[k->loader];
	out->id = k->id;
	out->array = k->elem != 0;
	out->object = HV_NONE;
	GUARD(a, g, );
	out->object = hva_mirror_handle(a, c);
	lq_class_fields(q, c);
	UNGUARD(a, g);
	out->inst_size = k->elem ? 0 : k->jvm_size ? k->jvm_size : k->inst_size;
	out->nstatics = (uint16_t)k->nstatics;
}

static const char *hva_class_name(struct hv *v, uint32_t c)
{
	return ((struct hva *)v->self)->q->cls[c].name;
}

static uint32_t hva_class_of_object(struct hv *v, uint32_t obj)
{
	struct ob o;
	return hva_get(v->self, obj, &o) && o.mirror ? o.mirror - 1 : HV_NONE;
}

static bool hva_is_subclass(struct hv *v, uint32_t c, uint32_t sup)
{
	return lq_is_subclass(((struct hva *)v->self)->q, c, sup);
}

static uint32_t hva_find_classes(struct hv *v, const char *pattern, uint32_t **out)
{
	struct hva *a = v->self;
	struct lq *q = a->q;
	*out = malloc(((size_t)q->ncls + 1) * sizeof **out);
	if (!*out) {
		hv_set_fail(v, HV_ERROR, "the agent ran out of memory");
		return 0;
	}
	return cn_select(pattern, a->names, q->ncls, *out);
}

static uint32_t hva_class_by_name(struct hv *v, const char *name)
{
	struct lq *q = ((struct hva *)v->self)->q;
	for (uint32_t c = 0; c < q->ncls; c++)
		if (!strcmp(q->cls[c].name, name))
			return c;
	return HV_NONE;
}

static bool hva_static_value(struct hv *v, uint32_t c, const char *name, struct hv_value *out)
{
	struct hva *a = v->self;
	struct lq *q = a->q;
	out->type = HV_T_NONE;
	if (q->in_walk) {
		hva_cannot(a, "a static field during a heap walk");
		return false;
	}
	GUARD(a, g, false);
	lq_class_fields(q, c);
	const struct lclass *k = &q->cls[c];
	bool found = false;
	for (uint32_t s = 0; s < k->nstatics && !found; s++)
		if (!strcmp(k->statics[s].name, name)) {
			*out = from_jvalue(a, k->statics[s].type,
					   lq_static_jvalue(q, NULL, c, &k->statics[s]));
			found = true;
		}
	UNGUARD(a, g);
	return found;
}

static void hva_static_names(struct hv *v, uint32_t c, void (*fn)(void *ctx, const char *name),
			     void *ctx)
{
	struct hva *a = v->self;
	GUARD(a, g, );
	lq_class_fields(a->q, c);
	UNGUARD(a, g);
	const struct lclass *k = &a->q->cls[c];
	for (uint32_t s = 0; s < k->nstatics; s++)
		fn(ctx, k->statics[s].name);
}

/* ---- threads and GC roots ---- */

static uint32_t hva_thread_object(struct hv *v, uint32_t t)
{
	struct hva *a = v->self;
	return t < a->q->nthreads ? a->thread_h[t] : HV_NONE;
}

static char *hva_thread_name(struct hv *v, uint32_t t)
{
	struct hva *a = v->self;
	struct lq *q = a->q;
	if (q->in_walk) {
		hva_cannot(a, "a thread's name during a heap walk");
		return NULL;
	}
	struct lq_mark mk;
	lq_mark(q, &mk);
	GUARD(a, g, NULL);
	const char *s = lq_thread_name(q, t);
	UNGUARD(a, g);
	char *r = s ? strdup(s) : NULL;
	lq_release(q, &mk);
	return r;
}

static uint32_t hva_thread_frames(struct hv *v, uint32_t t)
{
	struct lq *q = ((struct hva *)v->self)->q;
	jint c = 0;
	if (q->in_walk || t >= q->nthreads ||
	    (*q->jv)->GetFrameCount(q->jv, q->threads[t], &c) != JVMTI_ERROR_NONE)
		c = 0;
	return (uint32_t)c;
}

/* The roots FollowReferences reports (roots_each). */
struct roots {
	struct hva *a;
	jlong thread_tag;	/* the thread whose roots are wanted; 0: every root */
	jlong self_tag;		/* the agent's thread: its locals are ours */
	jlong *tags;		/* each root's object's tag, in the order reported */
	uint32_t n, cap;
	bool failed;
};

static jint JNICALL on_root(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			   jlong class_tag, jlong referrer_class_tag, jlong size, jlong *tag_ptr,
			   jlong *referrer_tag_ptr, jint length, void *ud)
{
	(void)referrer_class_tag;
	(void)size;
	struct roots *r = ud;
	struct hva *a = r->a;
	struct lq *q = a->q;
	if (r->failed || *a->interrupted)
		return JVMTI_VISIT_ABORT;
	if (referrer_tag_ptr)
		return 0;	/* not a root */
	jlong tt = kind == JVMTI_HEAP_REFERENCE_STACK_LOCAL ? info->stack_local.thread_tag
		   : kind == JVMTI_HEAP_REFERENCE_JNI_LOCAL ? info->jni_local.thread_tag : 0;
	if (r->self_tag && tt == r->self_tag)
		return 0;
	if (r->thread_tag && tt != r->thread_tag)
		return 0;
	uint32_t c = hva_class_index(q, class_tag);
	struct lentry *e = lq_entry(q, *tag_ptr);
	if (left_out(q, c, *tag_ptr, e))
		return 0;
	GUARD(a, g, (r->failed = true, JVMTI_VISIT_ABORT));
	if (!(*tag_ptr & LQ_TAG_CLASS) && !e) {
		jlong nt;
		hva_pend(a, hva_new_handle(a, c, q->cls[c].elem ? length : -1, &nt));
		*tag_ptr = nt;
	} else if (e) {	/* an entry lq made (a primitive type's class object): a handle too */
		uint32_t h = (uint32_t)(*tag_ptr & 0xffffffff) - 1;
		hva_room(a);
		if (a->ecls[h] == LQ_NONE) {
			a->ecls[h] = c;
			a->elen[h] = q->cls[c].elem ? length : -1;
			hva_pend(a, h);
		}
	}
	if (r->n == r->cap) {
		uint32_t cap = r->cap ? r->cap * 2 : 1024;
		jlong *n = lq_alloc(q, cap * sizeof *n);
		if (r->n)
			memcpy(n, r->tags, r->n * sizeof *n);
		r->tags = n;
		r->cap = cap;
	}
	r->tags[r->n++] = *tag_ptr;
	UNGUARD(a, g);
	return 0;
}

static void hva_roots_each(struct hv *v, uint32_t thread, void (*fn)(void *ctx, uint32_t obj),
			   void *ctx)
{
	struct hva *a = v->self;
	struct lq *q = a->q;
	if (!hva_walk_begin(a))
		return;
	struct roots r;
	memset(&r, 0, sizeof r);
	r.a = a;
	if (thread != HV_NONE)
		r.thread_tag = thread < q->nthreads && a->thread_h[thread] != HV_NONE
				       ? LQ_TAG_ENTRY | (jlong)(a->thread_h[thread] + 1) : -1;
	if (q->self_thread)
		(*q->jv)->GetTag(q->jv, q->self_thread, &r.self_tag);
	struct lq_mark mk;
	lq_mark(q, &mk);
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.heap_reference_callback = on_root;
	walk_run(a, &cb, &r, true);
	if (*a->interrupted)
		hv_set_fail(v, HV_INTERRUPTED, "interrupted");
	for (uint32_t k = 0; k < r.n && !hv_failed(v); k++) {
		jlong t = r.tags[k];
		uint32_t c = (uint32_t)(t & 0xffffffff) - 1;
		fn(ctx, (t & LQ_TAG_CLASS) ? (c < q->ncls ? hva_mirror_handle(a, c) : HV_NONE) : c);
	}
	lq_release(q, &mk);
}

/* ---- handles ---- */

uint32_t hva_keep(struct hv *v, uint32_t obj)
{
	struct hva *a = v->self;
	struct walk *w = a->w;
	if (!(obj & HV_TRANSIENT))
		return obj;
	if (obj == TARGET && a->tg.live) {
		GUARD(a, g, HV_NONE);
		uint32_t h = hva_target_handle(a);
		if (!a->emirror[h] && !a->refs[h])
			hva_pend(a, h);
		UNGUARD(a, g);
		return h;
	}
	if (!w || !w->live) {
		hv_set_fail(v, HV_ERROR, "an object of a heap walk kept after its step");
		return HV_NONE;
	}
	if (w->kept != HV_NONE) {
		if (!a->emirror[w->kept] && !a->refs[w->kept]) {	/* met in a growth walk */
			GUARD(a, g, HV_NONE);
			hva_pend(a, w->kept);
			UNGUARD(a, g);
		}
		return w->kept;
	}
	if (!w->tag_ptr) {
		hva_cannot(a, "an object the heap iteration reported after its last callback");
		return HV_NONE;
	}
	GUARD(a, g, HV_NONE);
	uint32_t h;
	if (w->mirror) {
		h = hva_mirror_handle(a, w->mirror - 1);
	} else {
		jlong t;
		h = hva_new_handle(a, w->cls, w->length, &t);
		*w->tag_ptr = t;
		hva_pend(a, h);
	}
	UNGUARD(a, g);
	w->kept = h;
	return h;
}

static const struct hv_ops hva_ops = {
	.class_of = hva_class_of,
	.kind = hva_kind,
	.shallow = hva_shallow,
	.id = hva_id,
	.field_locate = hva_field_locate,
	.field_at = hva_field_at,
	.field_names = hva_field_names,
	.array_length = hva_array_length,
	.array_elem = hva_array_elem,
	.text = hva_text,
	.refs_out = hva_refs_out,
	.refs_in = hva_refs_in,
	.refs_each = hva_refs_each,
	.heap_name = hva_heap_name,
	.retained = hva_retained,
	.dynamic_size = hva_dynamic_size,
	.objects_each = hva_objects_each,
	.objects_visit = hva_objects_visit,
	.class_info = hva_class_info,
	.class_name = hva_class_name,
	.class_of_object = hva_class_of_object,
	.class_totals = hva_class_totals,
	.instances = hva_instances,
	.is_subclass = hva_is_subclass,
	.find_classes = hva_find_classes,
	.class_by_name = hva_class_by_name,
	.static_value = hva_static_value,
	.static_names = hva_static_names,
	.thread_object = hva_thread_object,
	.thread_name = hva_thread_name,
	.thread_frames = hva_thread_frames,
	.roots_each = hva_roots_each,
	.owners = hva_owners,
	.owner = hva_owner,
	.set_owner = hva_set_owner,
	.grow = hva_grow,
	.keep = hva_keep,
};

/* ---- the view ---- */

struct hva *hva_new(struct lq *q, volatile sig_atomic_t *interrupted)
{
	struct hva *a = lq_alloc_keep(q, sizeof *a);
	JNIEnv *env = q->jni;
	a->q = q;
	a->interrupted = interrupted;
	q->interrupted = interrupted;	/* lq_instances' walk stops on CANCEL too */
	a->view.ops = &hva_ops;
	a->view.self = a;
	a->view.nclasses = q->ncls;
	a->view.class_class = q->c_class;
	size_t n = (size_t)q->ncls + 1;
	a->mirror_h = lq_alloc_keep(q, n * sizeof *a->mirror_h);
	a->nprim = lq_alloc_keep(q, n * sizeof *a->nprim);
	a->inst = lq_alloc_keep(q, n * sizeof *a->inst);
	a->ninst = lq_alloc_keep(q, n * sizeof *a->ninst);
	a->names = lq_alloc_keep(q, n * sizeof *a->names);
	for (uint32_t c = 0; c < q->ncls; c++) {
		a->mirror_h[c] = HV_NONE;
		a->nprim[c] = 0xffff;
		a->names[c] = q->cls[c].name;
	}
	a->loader_h = lq_alloc_keep(q, ((size_t)q->nloaders + 1) * sizeof *a->loader_h);
	a->loader_h[0] = HV_NONE;
	for (uint32_t k = 1; k < q->nloaders; k++)
		a->loader_h[k] = handle_of_ref(a, (*env)->NewLocalRef(env, q->loaders[k].ref));
	lq_tag_primitive_classes(q);
	lq_threads(q);
	a->view.nthreads = q->nthreads;
	a->thread_h = lq_alloc_keep(q, ((size_t)q->nthreads + 1) * sizeof *a->thread_h);
	for (uint32_t t = 0; t < q->nthreads; t++)
		a->thread_h[t] = handle_of_ref(a, (*env)->NewLocalRef(env, q->threads[t]));
	return a;
}

struct hv *hva_view(struct hva *a)
{
	return &a->view;
}

enum lq_status hva_status(const struct hva *a)
{
	return a->status;
}

void hva_free(struct hva *a)
{
	if (!a)
		return;
	free(a->refs);
	free(a->ecls);
	free(a->emirror);
	free(a->elen);
	free(a->pending);
	/* the rest is the request's arena */
}
