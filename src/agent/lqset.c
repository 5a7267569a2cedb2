/*
 * lqset.c - set types inside the JVM: the steps of docs/dsl.md ("Set types:
 * semantics") done with JNI and JVMTI heap walks, so that a running JVM
 * gives what a snapshot of it gives.
 *
 *  1. Instances and their properties: the evaluator, through JNI.
 *  2. Roots: each instance's roots become JNI objects and are tagged with
 *     an entry naming the instance (a few tags). A single instance whose
 *     membership is false for certain instead streams its roots from one
 *     heap iteration, without tags (the paper's listings 1 and 2).
 *  3. Offers without a referrer, when the membership may hold for a GC root
 *     or an object alone: one FollowReferences from the GC roots over the
 *     whole heap; each object's membership is evaluated from what the walk
 *     reports of it (its fields, what its references hold, whether it is a
 *     GC root); what it takes is tagged and joins at the walk's end.
 *  4. Growth: one FollowReferences from an array of the members, with a
 *     fresh sentinel object before each instance's: HotSpot's walk is depth
 *     first (a stack), so everything expanded between two sentinels is
 *     reached from that instance's members through objects no earlier
 *     instance took, which is the instance's growth. Only objects the
 *     membership accepts are followed, so every object the walk expands is
 *     a member; nothing but object arrays (for their length), sentinels and
 *     members are tagged.
 *
 * The walks run while the VM is stopped; their callbacks make no JNI call.
 * A step whose result would depend on the walk's order (an on_inclusion
 * that is not a sum, a count or a flag; a membership that reads properties)
 * is refused with LQ_UNSUPPORTED: heapsh then runs it on a snapshot.
 */
#include "lq.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dsl/plan.h"
#include "../dsl/value.h"
#include "ag.h"

struct an {
	struct lq *q;
	struct stmt *set, *inst;
	struct node *roots, *membership, *on_inclusion;
	struct lval on_inclusion_fn;
	struct linst **insts;
	int ninst;
	/* members before growth, as JNI objects, per instance in inclusion order */
	struct lobj **seeds;
	uint32_t *seed_inst;
	uint32_t nseeds, capseeds;
	/* the fast on_inclusion: p <- p + 1 / + THIS.shallow_size */
	bool fast;
	int nfast;
	struct { int prop; int64_t add; bool size; } fastv[16];
};

static void on_inclusion(struct an *a, struct linst *in, struct lval thisv)
{
	struct lq *q = a->q;
	if (!a->on_inclusion)
		return;
	if (a->fast) {
		for (int k = 0; k < a->nfast; k++) {
			struct lval *p = &in->props[a->fastv[k].prop];
			int64_t add = a->fastv[k].size ? (int64_t)lq_shallow(q, thisv.u.o)
						       : a->fastv[k].add;
			p->u.i = (int64_t)((uint64_t)p->u.i + (uint64_t)add);
		}
		return;
	}
	struct linst *save = q->cur;
	struct lval se = q->entity, st = q->this_v;
	q->cur = in;
	q->entity = (struct lval){LK_ENTITY, {.ent = in}};
	q->this_v = thisv;
	struct lq_mark mk;
	lq_mark(q, &mk);
	struct lval fn = a->on_inclusion_fn;
	if (fn.k != LK_LAMBDA)
		fn = lq_eval(q, NULL, a->on_inclusion);
	if (fn.k == LK_LAMBDA)
		lq_apply(q, a->on_inclusion, fn, fn.u.fn->lam->nparams ? 1 : 0, &thisv);
	lq_release(q, &mk);
	q->cur = save;
	q->entity = se;
	q->this_v = st;
}

static void add_seed(struct an *a, struct lobj *o, uint32_t k)
{
	struct lq *q = a->q;
	if (a->nseeds == a->capseeds) {
		uint32_t cap = a->capseeds ? a->capseeds * 2 : 64;
		struct lobj **n = lq_alloc(q, cap * sizeof *n);
		uint32_t *ni = lq_alloc(q, cap * sizeof *ni);
		if (a->nseeds) {
			memcpy(n, a->seeds, a->nseeds * sizeof *n);
			memcpy(ni, a->seed_inst, a->nseeds * sizeof *ni);
		}
		a->seeds = n;
		a->seed_inst = ni;
		a->capseeds = cap;
	}
	a->seeds[a->nseeds] = o;
	a->seed_inst[a->nseeds++] = k;
}

/* owner_of: the instance id holding a JNI object (or class object), 0 none. */
static uint32_t owner_of(struct lq *q, const struct lobj *o)
{
	if (o->mirror)
		return q->cls[o->mirror - 1].owner;
	jlong t = 0;
	(*q->jv)->GetTag(q->jv, o->ref, &t);
	struct lentry *e = lq_entry(q, t);
	return e ? e->inst : 0;
}

/* claim: o joins instance id k (step 2): tagged, or its class's owner set. */
static void claim(struct lq *q, struct lobj *o, uint32_t k)
{
	if (o->mirror) {
		q->cls[o->mirror - 1].owner = k;
		q->cls[o->mirror - 1].flags |= LC_SEED;
		return;
	}
	jlong t = 0;
	(*q->jv)->GetTag(q->jv, o->ref, &t);
	struct lentry *e = lq_entry(q, t);
	if (e) {
		e->inst = k;
		e->flags |= LE_SEED;
	} else {
		t = lq_new_entry(q, k, o->length, LE_SEED);
		(*q->jv)->SetTag(q->jv, o->ref, t);
	}
	o->tag = t;
}

/* to_object: the object behind a root value, NULL for null or the bootstrap loader. */
static struct lobj *to_object(struct lq *q, const struct node *at, struct lval v)
{
	switch (v.k) {
	case LK_OBJ:
		if (!v.u.o->ref && !v.u.o->mirror)
			lq_raise(q, LQ_UNSUPPORTED, at, "a root a heap walk reports");
		return v.u.o;
	case LK_CLASS: {
		struct lobj *o = lq_alloc(q, sizeof *o);
		o->ref = q->cls[v.u.idx].ref;
		o->mirror = v.u.idx + 1;
		o->cls = q->c_class;
		o->length = -1;
		return o;
	}
	case LK_LOADER:
		return v.u.idx ? lq_obj_of_ref(q, q->loaders[v.u.idx].ref) : NULL;
	case LK_THREAD:
		return lq_obj_of_ref(q, q->threads[v.u.idx]);
	case LK_NULL:
		return NULL;
	default:
		lq_raise(q, LQ_ERROR, at, "roots must be objects, classes, classloaders or threads, "
			 "not %s", lq_kind_name(v.k));
	}
}

/* ---- what the program asks of the walks ---- */

/* fast_path: on_inclusion is only `p <- p + N` and `p <- p + THIS.shallow_size` on int properties. */
static void fast_path(struct an *a)
{
	const struct node *fn = a->on_inclusion;
	a->fast = false;
	if (!fn || fn->kind != N_LAMBDA || fn->result || fn->nparams || fn->nitems > 16)
		return;
	for (int k = 0; k < fn->nitems; k++) {
		const struct node *s = fn->items[k], *v = s->a;
		if (s->kind != N_ASSIGN || v->kind != N_BIN || v->op != OP_ADD ||
		    !pe_is_ident(v->a, s->name))
			return;
		int prop = -1;
		struct linst *in = a->insts[0];
		for (int j = 0; j < in->nprops; j++)
			if (!strcmp(in->prop_names[j], s->name))
				prop = j;
		if (prop < 0)
			return;
		for (int i = 0; i < a->ninst; i++)
			if (a->insts[i]->props[prop].k != LK_INT)
				return;
		a->fastv[k].prop = prop;
		if (v->b->kind == N_INT) {
			a->fastv[k].add = v->b->i;
		} else if (v->b->kind == N_MEMBER && pe_is_ident(v->b->a, "THIS") &&
			   !strcmp(v->b->name, "shallow_size")) {
			a->fastv[k].size = true;
		} else {
			return;
		}
	}
	a->nfast = fn->nitems;
	a->fast = true;
}

/* A walk over the heap: the object at hand and what the callbacks reported of it. */
struct walk {
	struct an *a;
	struct lq *q;
	bool failed;
	struct lq_failure fail;	/* when failed: raised again after the walk */
	/* the object being expanded */
	bool active;
	jlong cur_tag;		/* its tag when the expansion began (class objects: their tag) */
	struct wobj w;
	struct lobj o;
	/* growth */
	uint32_t segment;	/* the instance id whose members are being expanded, 0 none */
	int cur_role;		/* 0 nothing, 1 a new member (on_inclusion at the end), 2 a seed */
	bool need_lengths;
	enum tri member_pe;	/* the membership, partially evaluated for growth */
	/* explore (step 3) */
	bool cand;		/* the object at hand may be taken */
	uint32_t decision;	/* the instance it was given so far, 0 none */
	bool tagged_now;	/* it carries an entry we can change later */
	struct lentry *cur_ent;
	uint8_t *cls_may;	/* per class: 0 unknown, 1 may be taken, 2 never */
	jlong self_thread_tag;
	bool roots_only;	/* step 3 takes GC roots only: the walk goes no deeper */
};

static void walk_fail(struct walk *w)
{
	w->failed = true;
	lq_failure_keep(w->q, &w->fail);
}

static void walk_rethrow(struct lq *q, struct walk *w)
{
	if (w->failed)
		lq_failure_raise(q, &w->fail);
}

static int refkind(jvmtiHeapReferenceKind kind)
{
	switch (kind) {
	case JVMTI_HEAP_REFERENCE_FIELD: return RK_FIELD;
	case JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT: return RK_ARRAY;
	case JVMTI_HEAP_REFERENCE_STATIC_FIELD: return RK_STATIC;
	case JVMTI_HEAP_REFERENCE_SUPERCLASS: return RK_SUPER;
	case JVMTI_HEAP_REFERENCE_CLASS_LOADER: return RK_LOADER;
	case JVMTI_HEAP_REFERENCE_SIGNERS: case JVMTI_HEAP_REFERENCE_PROTECTION_DOMAIN:
		return RK_OTHER;
	default: return -1;	/* class, constant pool, interface: not followed */
	}
}

/* begin_object: a new expansion: object of class c (class objects: class index m + 1). */
static void begin_object(struct walk *w, uint32_t c, jlong tag, int32_t length)
{
	struct lq *q = w->q;
	memset(&w->o, 0, sizeof w->o);
	w->o.cls = c;
	w->o.length = length;
	w->o.tag = tag;
	if (tag & LQ_TAG_CLASS) {
		w->o.mirror = (uint32_t)(tag & 0xffffffff);
		w->o.cls = q->c_class;
	}
	w->w.gen++;
	w->w.text = NULL;
	w->w.has_refs = true;
	w->w.complete = false;
	w->w.provisional = false;
	if (!w->o.mirror && c < q->ncls && !q->cls[c].elem) {
		uint32_t need = q->cls[c].nindex + 1;
		if (w->w.nslots < need) {
			w->w.nslots = need;
			w->w.slots = lq_alloc(q, need * sizeof *w->w.slots);
		}
	}
	w->o.w = &w->w;
	w->cur_tag = tag;
	w->active = true;
}

static void store_ref(struct walk *w, jint index, jlong class_tag, jlong tag, jint length)
{
	struct lq *q = w->q;
	if (!w->active || index < 0 || (uint32_t)index >= w->w.nslots)
		return;
	struct wslot *s = &w->w.slots[index];
	s->gen = w->w.gen;
	s->ref = true;
	s->cls = (class_tag & LQ_TAG_CLASS) ? (uint32_t)(class_tag & 0xffffffff) - 1 : LQ_NONE;
	if (s->cls >= q->ncls)
		s->cls = LQ_NONE;
	s->length = length;
	s->tag = tag;
}

static void store_prim(struct walk *w, jint index, jvalue v)
{
	if (!w->active || index < 0 || (uint32_t)index >= w->w.nslots)
		return;
	struct wslot *s = &w->w.slots[index];
	s->gen = w->w.gen;
	s->ref = false;
	s->v = v;
}

/* ---- step 3: offers without a referrer (one walk over the heap) ---- */

/* may_take: whether membership may hold for objects of class c (a cheap pre-filter). */
static bool may_take(struct walk *w, uint32_t c)
{
	if (c >= w->q->ncls)
		return false;
	return w->cls_may[c] != 2;
}

/* explore_eval: the membership of the object at hand; its decision kept in w. */
static void explore_eval(struct walk *w, jlong *tag_ptr)
{
	struct an *a = w->a;
	struct lq *q = w->q;
	if (!w->cand)
		return;
	struct lq_guard g;
	LQ_TRY(q, g) {
		LQ_CAUGHT(q, g);
		walk_fail(w);
		return;
	}
	bool root = w->o.mirror ? (q->cls[w->o.mirror - 1].flags & LC_ROOT) != 0
				: (w->cur_ent && (w->cur_ent->flags & LE_ROOT));
	q->this_v = (struct lval){LK_OBJ, {.o = &w->o}};
	q->referrer = (struct lval){LK_NULL, {0}};
	q->rk = root ? RK_ROOT : RK_NONE;
	uint32_t got = 0;
	struct lq_mark mk;
	lq_mark(q, &mk);
	for (int k = 0; k < a->ninst && !got; k++) {
		q->entity = (struct lval){LK_ENTITY, {.ent = a->insts[k]}};
		q->cur = a->insts[k];
		if (lq_truth(q, a->membership, lq_eval(q, NULL, a->membership), "membership"))
			got = a->insts[k]->id;
		q->cur = NULL;
	}
	lq_release(q, &mk);
	LQ_END(q, g);
	w->decision = got;
	if (w->o.mirror) {
		q->cls[w->o.mirror - 1].pend = got;
		return;
	}
	if (got && !w->cur_ent) {
		if (!tag_ptr) {
			q->status = LQ_UNSUPPORTED;
			snprintf(q->msg, sizeof q->msg, "the membership takes an object of %s only once "
				 "all of its callbacks are in (a null field decides)",
				 q->cls[w->o.cls].name);
			q->line = a->membership->line;
			q->col = a->membership->col;
			q->earlier = false;
			walk_fail(w);
			return;
		}
		*tag_ptr = lq_new_entry(q, 0, w->o.length, 0);
		w->cur_ent = lq_entry(q, *tag_ptr);
	}
	if (w->cur_ent)
		w->cur_ent->pend = got;
}

static void explore_finish(struct walk *w)
{
	if (!w->active)
		return;
	w->active = false;
	if (w->cand) {
		w->w.complete = true;
		w->w.provisional = false;
		explore_eval(w, NULL);
	}
}

static void explore_begin(struct walk *w, uint32_t c, jlong *tag_ptr, int32_t length)
{
	struct lq *q = w->q;
	explore_finish(w);
	jlong tag = *tag_ptr;
	begin_object(w, c, tag, length);
	w->cur_ent = lq_entry(q, tag);
	w->decision = 0;
	uint32_t cls = w->o.mirror ? q->c_class : c;
	if (w->o.mirror)
		w->cand = !q->cls[w->o.mirror - 1].owner && may_take(w, cls) &&
			  (!w->roots_only || (q->cls[w->o.mirror - 1].flags & LC_ROOT));
	else
		w->cand = !(w->cur_ent && (w->cur_ent->inst || (w->cur_ent->flags & (LE_SELF |
									    LE_SENTINEL)))) &&
			  may_take(w, cls) &&
			  (!w->roots_only || (w->cur_ent && (w->cur_ent->flags & LE_ROOT)));
	if (w->cand) {
		/* evaluate at once, reading what is missing as null; again as fields come */
		w->w.provisional = true;
		explore_eval(w, tag_ptr);
	}
}

static jint JNICALL x_ref(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			  jlong class_tag, jlong referrer_class_tag, jlong size, jlong *tag_ptr,
			  jlong *referrer_tag_ptr, jint length, void *ud)
{
	struct walk *w = ud;
	struct lq *q = w->q;
	if (w->failed)
		return JVMTI_VISIT_ABORT;
	lq_note_size(q, class_tag, *tag_ptr, size);
	if (!referrer_tag_ptr) {
		/* a GC root: the kinds a heap dump has (docs/dsl.md), not the agent's own */
		jlong thread_tag = 0;
		if (kind == JVMTI_HEAP_REFERENCE_STACK_LOCAL)
			thread_tag = info->stack_local.thread_tag;
		else if (kind == JVMTI_HEAP_REFERENCE_JNI_LOCAL)
			thread_tag = info->jni_local.thread_tag;
		if ((thread_tag && thread_tag == w->self_thread_tag) ||
		    (kind == JVMTI_HEAP_REFERENCE_THREAD && *tag_ptr == w->self_thread_tag))
			return 0;
		bool root = kind == JVMTI_HEAP_REFERENCE_THREAD ||
			    kind == JVMTI_HEAP_REFERENCE_STACK_LOCAL ||
			    kind == JVMTI_HEAP_REFERENCE_JNI_LOCAL ||
			    kind == JVMTI_HEAP_REFERENCE_JNI_GLOBAL ||
			    kind == JVMTI_HEAP_REFERENCE_MONITOR;
		jlong t = *tag_ptr;
		if (kind == JVMTI_HEAP_REFERENCE_SYSTEM_CLASS && (t & LQ_TAG_CLASS)) {
			/* a dump's sticky classes: the instance classes of the bootstrap loader */
			uint32_t m = (uint32_t)(t & 0xffffffff) - 1;
			root = m < q->ncls && !q->cls[m].loader && !q->cls[m].elem;
		}
		if (root) {
			if (t & LQ_TAG_CLASS) {
				uint32_t m = (uint32_t)(t & 0xffffffff) - 1;
				if (m < q->ncls)
					q->cls[m].flags |= LC_ROOT;
			} else {
				struct lentry *e = lq_entry(q, t);
				if (!e) {
					struct lq_guard g;
					LQ_TRY(q, g) {
						LQ_CAUGHT(q, g);
						walk_fail(w);
						return JVMTI_VISIT_ABORT;
					}
					*tag_ptr = lq_new_entry(q, 0, length, LE_ROOT);
					LQ_END(q, g);
				} else {
					e->flags |= LE_ROOT;
				}
			}
		}
		return JVMTI_VISIT_OBJECTS;
	}
	jlong rt = *referrer_tag_ptr;
	if (kind == JVMTI_HEAP_REFERENCE_CLASS) {
		uint32_t c = (referrer_class_tag & LQ_TAG_CLASS)
				     ? (uint32_t)(referrer_class_tag & 0xffffffff) - 1 : LQ_NONE;
		/* length of an object array: not reported; only its entry knows it */
		struct lentry *e = lq_entry(q, rt);
		explore_begin(w, c, referrer_tag_ptr, e ? e->length : -1);
		q->objects_seen++;
		return w->failed ? JVMTI_VISIT_ABORT : w->roots_only ? 0 : JVMTI_VISIT_OBJECTS;
	}
	if ((rt & LQ_TAG_CLASS) && (!w->active || rt != w->cur_tag)) {
		explore_begin(w, q->c_class, referrer_tag_ptr, -1);
		q->objects_seen++;
	}
	if (kind == JVMTI_HEAP_REFERENCE_FIELD && w->active && !w->o.mirror && w->cand) {
		store_ref(w, info->field.index, class_tag, *tag_ptr, length);
		explore_eval(w, referrer_tag_ptr);
	}
	if (w->failed)
		return JVMTI_VISIT_ABORT;
	/* GC roots only: their own fields are what counts, not what they reach */
	return w->roots_only ? 0 : JVMTI_VISIT_OBJECTS;
}

static jint JNICALL x_prim(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			   jlong object_class_tag, jlong *object_tag_ptr, jvalue value,
			   jvmtiPrimitiveType value_type, void *ud)
{
	(void)object_class_tag;
	(void)value_type;
	struct walk *w = ud;
	if (w->failed)
		return JVMTI_VISIT_ABORT;
	if (kind == JVMTI_HEAP_REFERENCE_FIELD && w->active && !w->o.mirror && w->cand) {
		store_prim(w, info->field.index, value);
		explore_eval(w, object_tag_ptr);
	}
	return w->failed ? JVMTI_VISIT_ABORT : 0;
}

static jint JNICALL x_string(jlong class_tag, jlong size, jlong *tag_ptr, const jchar *value,
			     jint value_length, void *ud)
{
	(void)class_tag;
	(void)size;
	struct walk *w = ud;
	struct lq *q = w->q;
	if (w->failed)
		return JVMTI_VISIT_ABORT;
	if (!w->active || !w->cand)
		return 0;
	struct lq_guard g;
	LQ_TRY(q, g) {
		LQ_CAUGHT(q, g);
		walk_fail(w);
		return JVMTI_VISIT_ABORT;
	}
	lq_wtext(q, &w->w, value, value_length > 0 ? (size_t)value_length : 0);
	LQ_END(q, g);
	explore_eval(w, tag_ptr);
	return w->failed ? JVMTI_VISIT_ABORT : 0;
}

static jint JNICALL x_array(jlong class_tag, jlong size, jlong *tag_ptr, jint element_count,
			    jvmtiPrimitiveType element_type, const void *elements, void *ud)
{
	(void)class_tag;
	(void)size;
	(void)element_type;
	(void)elements;
	struct walk *w = ud;
	if (w->failed)
		return JVMTI_VISIT_ABORT;
	if (!w->active)
		return 0;
	w->o.length = element_count;
	if (w->cand)
		explore_eval(w, tag_ptr);
	return w->failed ? JVMTI_VISIT_ABORT : 0;
}

/* class_may: classes for which the membership, without a referrer, may hold. */
static const uint8_t *needs_class(struct lq *q, struct node *n, const struct pe_ctx *c)
{
	if (!n)
		return NULL;
	if (n->kind == N_IS && pe_is_ident(n->a, "THIS"))
		return lq_class_set(q, n, n->name);
	if (n->kind == N_BIN && n->op == OP_AND) {
		const uint8_t *x = needs_class(q, n->a, c), *y = needs_class(q, n->b, c);
		if (!x)
			return y;
		if (!y)
			return x;
		uint8_t *r = lq_alloc(q, (size_t)q->ncls / 8 + 1);
		for (uint32_t k = 0; k <= q->ncls / 8; k++)
			r[k] = x[k] & y[k];
		return r;
	}
	if (n->kind == N_BIN && n->op == OP_OR) {
		enum tri ta = pe_membership(n->a, c), tb = pe_membership(n->b, c);
		if (ta == TRI_FALSE)
			return needs_class(q, n->b, c);
		if (tb == TRI_FALSE)
			return needs_class(q, n->a, c);
		const uint8_t *x = needs_class(q, n->a, c), *y = needs_class(q, n->b, c);
		if (!x || !y)
			return NULL;
		uint8_t *r = lq_alloc(q, (size_t)q->ncls / 8 + 1);
		for (uint32_t k = 0; k <= q->ncls / 8; k++)
			r[k] = x[k] | y[k];
		return r;
	}
	return NULL;
}

static struct lq *sort_lq;

/* cmp_obj_addr: by address (class objects by their class object's address). */
static int cmp_obj_addr(const void *x, const void *y)
{
	const struct lobj *const *a = x, *const *b = y;
	uint64_t p = (*a)->mirror ? sort_lq->cls[(*a)->mirror - 1].id : lq_address((*a)->ref);
	uint64_t r = (*b)->mirror ? sort_lq->cls[(*b)->mirror - 1].id : lq_address((*b)->ref);
	return p < r ? -1 : p > r;
}

static void step3(struct an *a, bool roots_only)
{
	struct lq *q = a->q;
	struct walk w;
	memset(&w, 0, sizeof w);
	w.a = a;
	w.q = q;
	jlong st = 0;
	if (q->self_thread)
		(*q->jv)->GetTag(q->jv, q->self_thread, &st);
	w.self_thread_tag = st;
	w.roots_only = roots_only;
	/* the pre-filter: classes the membership needs THIS to be */
	struct pe_ctx pn = {PE_REF_NULL, roots_only ? RK_ROOT : PE_RK_ANY};
	const uint8_t *need = needs_class(q, a->membership, &pn);
	w.cls_may = lq_alloc(q, (size_t)q->ncls + 1);
	for (uint32_t c = 0; c < q->ncls; c++) {
		w.cls_may[c] = need && !(need[c / 8] & (1u << (c % 8))) ? 2 : 1;
		if (!q->cls[c].elem)
			lq_class_fields(q, c);
	}
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.heap_reference_callback = x_ref;
	cb.primitive_field_callback = x_prim;
	cb.string_primitive_value_callback = x_string;
	cb.array_primitive_value_callback = x_array;
	lq_gc(q);
	int64_t t0 = ag_now_ms();
	q->in_walk = true;
	q->in_trav = true;
	jvmtiError err = (*q->jv)->FollowReferences(q->jv, 0, NULL, NULL, &cb, &w);
	if (!w.failed)
		explore_finish(&w);
	q->in_walk = false;
	free(w.w.textbuf);
	q->walks++;
	q->pause_ms += (uint64_t)(ag_now_ms() - t0);
	walk_rethrow(q, &w);
	if (err != JVMTI_ERROR_NONE)
		lq_raise(q, LQ_ERROR, a->membership, "FollowReferences failed (JVMTI error %d)", err);
	/* what the step took joins now: tagged objects and class objects */
	jlong *want = lq_alloc(q, ((size_t)q->nent + 1) * sizeof *want);
	uint32_t nw = 0;
	for (uint32_t k = 0; k < q->nent; k++)
		if (q->ent[k].pend && !q->ent[k].inst)
			want[nw++] = LQ_TAG_ENTRY | (jlong)(k + 1);
	struct lobj **took = lq_alloc(q, ((size_t)nw + q->ncls + 1) * sizeof *took);
	uint32_t nt = 0;
	jint cnt = 0;
	jobject *objs = NULL;
	jlong *tags = NULL;
	if (nw && (*q->jv)->GetObjectsWithTags(q->jv, (jint)nw, want, &cnt, &objs, &tags) !=
		  JVMTI_ERROR_NONE)
		lq_raise(q, LQ_ERROR, a->membership, "GetObjectsWithTags failed");
	for (jint k = 0; k < cnt; k++) {
		struct lobj *o = lq_obj_of_ref(q, objs[k]);
		took[nt++] = o;
	}
	if (objs)
		(*q->jv)->Deallocate(q->jv, (unsigned char *)objs);
	if (tags)
		(*q->jv)->Deallocate(q->jv, (unsigned char *)tags);
	uint32_t nobj = nt;
	for (uint32_t c = 0; c < q->ncls; c++)
		if (q->cls[c].pend && !q->cls[c].owner) {
			struct lobj *o = lq_alloc(q, sizeof *o);
			o->ref = q->cls[c].ref;
			o->mirror = c + 1;
			o->cls = q->c_class;
			o->length = -1;
			took[nt++] = o;
		}
	(void)nobj;
	/* in the order of the objects' ids (docs/dsl.md) */
	sort_lq = q;
	qsort(took, nt, sizeof *took, cmp_obj_addr);
	q->in_walk = false;
	for (uint32_t k = 0; k < nt; k++) {
		struct lobj *o = took[k];
		uint32_t id;
		bool root;
		if (o->mirror) {
			id = q->cls[o->mirror - 1].pend;
			q->cls[o->mirror - 1].pend = 0;
			root = (q->cls[o->mirror - 1].flags & LC_ROOT) != 0;
		} else {
			struct lentry *e = lq_entry(q, o->tag);
			if (!e)
				continue;
			id = e->pend;
			e->pend = 0;
			root = (e->flags & LE_ROOT) != 0;
		}
		if (!id)
			continue;
		claim(q, o, id);
		if (getenv("HEAPSH_LQ_TRACE"))
			ag_log("step 3: %s %" PRIu64 " bytes to instance %u", o->mirror ? "class object"
			       : q->cls[o->cls].name, lq_shallow(q, o), id);
		a->insts[id - 1]->members++;
		q->rk = root ? RK_ROOT : RK_NONE;
		q->referrer = (struct lval){LK_NULL, {0}};
		on_inclusion(a, a->insts[id - 1], (struct lval){LK_OBJ, {.o = o}});
		add_seed(a, o, id);
	}
}

/* ---- step 4: growth ---- */

struct memo {
	uint64_t key;
	uint8_t val;		/* 1 no, 2 yes */
};

static bool grow_member(struct walk *w, int rk, uint32_t cls, uint32_t mirror, int32_t length,
			jlong tag)
{
	struct an *a = w->a;
	struct lq *q = w->q;
	if (w->member_pe == TRI_TRUE)
		return true;
	if (w->member_pe == TRI_FALSE)
		return false;
	/* the membership reads the edge: evaluate with THIS and REFERRER as the walk names them */
	struct lobj t = {NULL, cls, mirror, length, tag, NULL};
	struct lobj r = w->o;
	r.w = NULL;
	q->this_v = (struct lval){LK_OBJ, {.o = &t}};
	q->referrer = (struct lval){LK_OBJ, {.o = &r}};
	q->rk = rk;
	struct linst *in = a->insts[w->segment - 1];
	q->entity = (struct lval){LK_ENTITY, {.ent = in}};
	q->cur = in;
	struct lq_mark mk;
	lq_mark(q, &mk);
	bool yes = lq_truth(q, a->membership, lq_eval(q, NULL, a->membership), "membership");
	lq_release(q, &mk);
	q->cur = NULL;
	return yes;
}

static void grow_finish(struct walk *w)
{
	struct lq *q = w->q;
	if (!w->active)
		return;
	w->active = false;
	if (w->cur_role != 1)
		return;
	w->w.complete = true;
	struct linst *in = w->a->insts[w->segment - 1];
	q->rk = RK_FIELD;
	on_inclusion(w->a, in, (struct lval){LK_OBJ, {.o = &w->o}});
}

static jint guarded_finish(struct walk *w)
{
	struct lq *q = w->q;
	if (w->a->fast || !w->active || w->cur_role != 1) {
		grow_finish(w);	/* no evaluation: nothing can fail */
		return 0;
	}
	struct lq_guard g;
	LQ_TRY(q, g) {
		LQ_CAUGHT(q, g);
		walk_fail(w);
		return JVMTI_VISIT_ABORT;
	}
	grow_finish(w);
	LQ_END(q, g);
	return 0;
}

static void grow_begin(struct walk *w, uint32_t c, jlong tag, int32_t length)
{
	struct lq *q = w->q;
	begin_object(w, c, tag, length);
	w->cur_role = 0;
	if (tag & LQ_TAG_CLASS) {
		uint32_t m = (uint32_t)(tag & 0xffffffff) - 1;
		if (m < q->ncls && q->cls[m].owner)
			w->cur_role = 2;	/* its on_inclusion ran or runs after the walk */
		if (m < q->ncls && q->cls[m].owner && q->cls[m].owner != w->segment)
			w->cur_role = 0;
		return;
	}
	struct lentry *e = lq_entry(q, tag);
	if (e && (e->flags & LE_SENTINEL)) {
		w->segment = e->inst;
		return;
	}
	if (e && (e->flags & LE_SELF))
		return;
	if (!w->segment)
		return;
	if (e && e->inst) {
		w->cur_role = e->inst == w->segment ? 2 : 0;
		return;
	}
	if (e)
		e->inst = w->segment;
	w->cur_role = 1;
	w->a->insts[w->segment - 1]->members++;
}

static jint JNICALL g_ref(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			  jlong class_tag, jlong referrer_class_tag, jlong size, jlong *tag_ptr,
			  jlong *referrer_tag_ptr, jint length, void *ud)
{
	struct walk *w = ud;
	struct lq *q = w->q;
	if (w->failed)
		return JVMTI_VISIT_ABORT;
	lq_note_size(q, class_tag, *tag_ptr, size);
	if (!referrer_tag_ptr)
		return 0;	/* no GC roots: the walk starts at the members' array */
	jlong rt = *referrer_tag_ptr;
	struct lentry *re = lq_entry(q, rt);
	if (re && (re->flags & LE_SELF))
		return JVMTI_VISIT_OBJECTS;	/* the array of members and sentinels */
	if (kind == JVMTI_HEAP_REFERENCE_CLASS) {
		if (guarded_finish(w))
			return JVMTI_VISIT_ABORT;
		uint32_t c = (referrer_class_tag & LQ_TAG_CLASS)
				     ? (uint32_t)(referrer_class_tag & 0xffffffff) - 1 : LQ_NONE;
		if (c >= q->ncls) {
			q->status = LQ_UNSUPPORTED;
			snprintf(q->msg, sizeof q->msg, "an object of a class loaded after the "
				 "analysis began (run the query again)");
			walk_fail(w);
			return JVMTI_VISIT_ABORT;
		}
		grow_begin(w, c, rt, re ? re->length : -1);
		q->objects_seen++;
		return 0;
	}
	if ((rt & LQ_TAG_CLASS) && (!w->active || rt != w->cur_tag)) {
		if (guarded_finish(w))
			return JVMTI_VISIT_ABORT;
		grow_begin(w, q->c_class, rt, -1);
		q->objects_seen++;
	}
	if (!w->active || !w->cur_role)
		return 0;
	if (kind == JVMTI_HEAP_REFERENCE_FIELD && !w->o.mirror && !w->a->fast)
		store_ref(w, info->field.index, class_tag, *tag_ptr, length);
	int rk = refkind(kind);
	if (rk < 0)
		return 0;
	jlong t = *tag_ptr;
	uint32_t cls = (class_tag & LQ_TAG_CLASS) ? (uint32_t)(class_tag & 0xffffffff) - 1 : LQ_NONE;
	if (cls >= q->ncls)
		return 0;
	uint32_t mirror = 0;
	struct lentry *e = NULL;
	if (t & LQ_TAG_CLASS) {
		mirror = (uint32_t)(t & 0xffffffff);
		if (mirror > q->ncls || q->cls[mirror - 1].owner)
			return 0;
	} else if ((e = lq_entry(q, t)) && (e->inst || (e->flags & (LE_SELF | LE_SENTINEL)))) {
		return 0;
	}
	struct lq_guard g;
	LQ_TRY(q, g) {
		LQ_CAUGHT(q, g);
		walk_fail(w);
		return JVMTI_VISIT_ABORT;
	}
	bool yes = grow_member(w, rk, mirror ? q->c_class : cls, mirror,
			       q->cls[cls].elem ? length : -1, t);
	if (yes && mirror) {
		/* a class object: known by its tag, joins now; on_inclusion after the walk */
		q->cls[mirror - 1].owner = w->segment;
		q->cls[mirror - 1].flags |= LC_INCLUDE;
		w->a->insts[w->segment - 1]->members++;
	} else if (yes && e && (e->flags & LE_PRIM)) {
		e->inst = w->segment;
		e->flags |= LE_SEED;	/* on_inclusion after the walk (no references) */
		w->a->insts[w->segment - 1]->members++;
		yes = false;
	} else if (yes && !e && w->need_lengths && (q->cls[cls].elem == 'L' ||
						     q->cls[cls].elem == '[')) {
		*tag_ptr = lq_new_entry(q, 0, length, LE_ARRAY);
	}
	LQ_END(q, g);
	return yes ? JVMTI_VISIT_OBJECTS : 0;
}

static jint JNICALL g_prim(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			   jlong object_class_tag, jlong *object_tag_ptr, jvalue value,
			   jvmtiPrimitiveType value_type, void *ud)
{
	(void)object_class_tag;
	(void)object_tag_ptr;
	(void)value_type;
	struct walk *w = ud;
	if (w->failed)
		return JVMTI_VISIT_ABORT;
	if (kind == JVMTI_HEAP_REFERENCE_FIELD && w->active && !w->o.mirror)
		store_prim(w, info->field.index, value);
	return 0;
}

static jint JNICALL g_string(jlong class_tag, jlong size, jlong *tag_ptr, const jchar *value,
			     jint value_length, void *ud)
{
	(void)class_tag;
	(void)size;
	(void)tag_ptr;
	struct walk *w = ud;
	struct lq *q = w->q;
	if (w->failed)
		return JVMTI_VISIT_ABORT;
	if (!w->active || w->cur_role != 1)
		return 0;
	struct lq_guard g;
	LQ_TRY(q, g) {
		LQ_CAUGHT(q, g);
		walk_fail(w);
		return JVMTI_VISIT_ABORT;
	}
	lq_wtext(q, &w->w, value, value_length > 0 ? (size_t)value_length : 0);
	LQ_END(q, g);
	return 0;
}

static jint JNICALL g_array(jlong class_tag, jlong size, jlong *tag_ptr, jint element_count,
			    jvmtiPrimitiveType element_type, const void *elements, void *ud)
{
	(void)class_tag;
	(void)size;
	(void)tag_ptr;
	(void)element_type;
	(void)elements;
	struct walk *w = ud;
	if (w->active)
		w->o.length = element_count;
	return w->failed ? JVMTI_VISIT_ABORT : 0;
}

static void step4(struct an *a, enum tri pe)
{
	struct lq *q = a->q;
	JNIEnv *env = q->jni;
	/* every class's fields: the callbacks make no JNI call */
	for (uint32_t c = 0; c < q->ncls; c++)
		if (!q->cls[c].elem)
			lq_class_fields(q, c);
	/* the array: the first instance's sentinel on top of the stack, then its members */
	uint32_t nsent = (uint32_t)a->ninst;
	uint32_t total = a->nseeds + nsent;
	jobjectArray arr = (*env)->NewObjectArray(env, (jsize)total, q->cls[q->c_object].ref, NULL);
	if (!arr) {
		(*env)->ExceptionClear(env);
		lq_raise(q, LQ_LIMIT, a->membership, "the JVM could not allocate an array of %u "
			 "members", total);
	}
	(*q->jv)->SetTag(q->jv, arr, lq_new_entry(q, 0, (int32_t)total, LE_SELF));
	/* pushed in index order, popped last first: fill from the end */
	jsize pos = (jsize)total;
	for (int k = 0; k < a->ninst; k++) {
		jobject s = (*env)->AllocObject(env, q->cls[q->c_object].ref);
		if (!s) {
			(*env)->ExceptionClear(env);
			lq_raise(q, LQ_LIMIT, a->membership, "the JVM could not allocate a sentinel");
		}
		(*q->jv)->SetTag(q->jv, s, lq_new_entry(q, a->insts[k]->id, -1, LE_SENTINEL));
		(*env)->SetObjectArrayElement(env, arr, --pos, s);
		(*env)->DeleteLocalRef(env, s);
		for (uint32_t j = 0; j < a->nseeds; j++)
			if (a->seed_inst[j] == a->insts[k]->id)
				(*env)->SetObjectArrayElement(env, arr, --pos, a->seeds[j]->ref);
	}
	struct walk w;
	memset(&w, 0, sizeof w);
	w.a = a;
	w.q = q;
	w.member_pe = pe;
	w.need_lengths = true;
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.heap_reference_callback = g_ref;
	cb.array_primitive_value_callback = g_array;
	if (!a->fast) {
		cb.primitive_field_callback = g_prim;
		cb.string_primitive_value_callback = g_string;
	}
	lq_gc(q);
	int64_t t0 = ag_now_ms();
	q->in_walk = true;
	q->in_trav = true;
	q->order_free = true;
	jvmtiError err = (*q->jv)->FollowReferences(q->jv, 0, NULL, arr, &cb, &w);
	if (!w.failed)
		guarded_finish(&w);
	q->order_free = false;
	q->in_walk = false;
	free(w.w.textbuf);
	q->walks++;
	q->pause_ms += (uint64_t)(ag_now_ms() - t0);
	(*env)->DeleteLocalRef(env, arr);
	walk_rethrow(q, &w);
	if (err != JVMTI_ERROR_NONE)
		lq_raise(q, LQ_ERROR, a->membership, "FollowReferences failed (JVMTI error %d)", err);
	/* class objects and primitive-type class objects that joined: on_inclusion now */
	q->order_free = true;
	for (uint32_t c = 0; c < q->ncls; c++)
		if (q->cls[c].flags & LC_INCLUDE) {
			q->cls[c].flags &= (uint8_t)~LC_INCLUDE;
			struct lobj *o = lq_alloc(q, sizeof *o);
			o->ref = q->cls[c].ref;
			o->mirror = c + 1;
			o->cls = q->c_class;
			o->length = -1;
			on_inclusion(a, a->insts[q->cls[c].owner - 1], (struct lval){LK_OBJ, {.o = o}});
		}
	for (uint32_t k = 0; k < q->nent; k++)
		if ((q->ent[k].flags & LE_PRIM) && q->ent[k].inst && (q->ent[k].flags & LE_SEED)) {
			q->ent[k].flags &= (uint8_t)~LE_SEED;
			jlong t = LQ_TAG_ENTRY | (jlong)(k + 1);
			jint cnt = 0;
			jobject *objs = NULL;
			if ((*q->jv)->GetObjectsWithTags(q->jv, 1, &t, &cnt, &objs, NULL) ==
				    JVMTI_ERROR_NONE && cnt == 1)
				on_inclusion(a, a->insts[q->ent[k].inst - 1],
					     (struct lval){LK_OBJ, {.o = lq_obj_of_ref(q, objs[0])}});
			if (objs)
				(*q->jv)->Deallocate(q->jv, (unsigned char *)objs);
		}
	q->order_free = false;
}

/* ---- the whole analysis ---- */

/* stream_each: a root of the only instance, met by the heap iteration. */
static void stream_each(void *ctx, struct lval x)
{
	struct an *a = ctx;
	struct lq *q = a->q;
	a->insts[0]->members++;
	q->rk = RK_ROOT;
	q->referrer = (struct lval){LK_NULL, {0}};
	on_inclusion(a, a->insts[0], x);
	q->entity = (struct lval){LK_ENTITY, {.ent = a->insts[0]}};
}

/* streamable: roots `objects.filter(L)` of a single instance, membership false. */
static bool streamable(struct an *a)
{
	struct node *r = a->roots;
	return a->ninst == 1 && r && r->kind == N_CALL &&
	       bi_id_of(r->name, BI_R_LIST) == BI_LIST_FILTER &&
	       r->nitems == 1 && pe_is_ident(r->a, "objects");
}

struct lval lq_run_instances(struct lq *q, struct stmt *set, struct stmt *inst)
{
	struct an a;
	memset(&a, 0, sizeof a);
	a.q = q;
	a.set = set;
	a.inst = inst;
	int nuser = 0;
	for (int k = 0; k < set->nprops; k++) {
		struct property *p = &set->props[k];
		if (p->kind == P_ROOTS)
			a.roots = p->value;
		else if (p->kind == P_MEMBERSHIP)
			a.membership = p->value;
		else if (p->kind == P_ON_INCLUSION)
			a.on_inclusion = p->value;
		else
			nuser++;
	}
	if (a.on_inclusion && a.on_inclusion->kind == N_LAMBDA)
		a.on_inclusion_fn = lq_eval(q, NULL, a.on_inclusion);
	/* 1. instances */
	struct lval names = lq_eval(q, NULL, inst->e);
	uint32_t nn = names.k == LK_LIST && !names.u.l->all ? names.u.l->n : 1;
	if (names.k == LK_LIST && names.u.l->all)
		lq_raise(q, LQ_UNSUPPORTED, inst->e, "an instance per object of the heap");
	a.insts = lq_alloc(q, ((size_t)nn + 1) * sizeof *a.insts);
	q->insts = a.insts;
	q->in_trav = true;
	for (uint32_t k = 0; k < nn; k++) {
		struct linst *in = lq_alloc(q, sizeof *in);
		in->name = names.k == LK_LIST ? names.u.l->v[k] : names;
		in->id = k + 1;
		in->prop_names = lq_alloc(q, ((size_t)nuser + 1) * sizeof *in->prop_names);
		in->props = lq_alloc(q, ((size_t)nuser + 1) * sizeof *in->props);
		q->entity = (struct lval){LK_ENTITY, {.ent = in}};
		q->cur = in;
		for (int j = 0; j < set->nprops; j++) {
			struct property *p = &set->props[j];
			if (p->kind != P_USER)
				continue;
			in->prop_names[in->nprops] = p->decl.name;
			struct lval pv = p->value ? lq_eval(q, NULL, p->value) : (struct lval){LK_NULL, {0}};
			if (p->decl.type)
				pv = lq_typed(q, p->decl.line, p->decl.col, p->decl.name, p->decl.type, pv);
			in->props[in->nprops++] = pv;
		}
		q->cur = NULL;
		a.insts[a.ninst++] = in;
	}
	q->ninst = a.ninst;
	/* which steps may include anything */
	enum tri grow = TRI_FALSE, s3root = TRI_FALSE, s3none = TRI_FALSE;
	if (a.membership) {
		struct pe_ctx pg = {PE_REF_MEMBER, PE_RK_NOT_ROOT};
		struct pe_ctx pr = {PE_REF_NULL, RK_ROOT}, pn = {PE_REF_NULL, RK_NONE};
		grow = pe_membership(a.membership, &pg);
		s3root = pe_membership(a.membership, &pr);
		s3none = pe_membership(a.membership, &pn);
	}
	bool later = a.ninst && (grow != TRI_FALSE || s3root != TRI_FALSE || s3none != TRI_FALSE);
	if (later && !plan_order_free(set, a.on_inclusion))
		lq_raise(q, LQ_UNSUPPORTED, a.on_inclusion, "on_inclusion depends on the order "
			 "objects join (only sums, counts and flags can be computed during a heap "
			 "walk)");
	if (later && plan_mentions_prop(set, a.membership))
		lq_raise(q, LQ_UNSUPPORTED, a.membership, "the membership reads ENTITY's "
			 "properties, which change as objects join");
	if (a.ninst)
		fast_path(&a);
	/* 2. roots */
	if (a.roots && !later && streamable(&a) && !plan_mentions_prop(set, a.roots)) {
		/* stream: on_inclusion on each match, in address order, no tags */
		struct linst *in = a.insts[0];
		struct lval *save = lq_alloc(q, ((size_t)in->nprops + 1) * sizeof *save);
		memcpy(save, in->props, (size_t)in->nprops * sizeof *save);
		struct lq_ctx lc;
		LQ_SAVE(q, lc);
		jmp_buf jb, *outer = q->fail;
		q->fail = &jb;
		if (!setjmp(jb)) {
			q->entity = (struct lval){LK_ENTITY, {.ent = in}};
			q->rk = RK_ROOT;
			q->referrer = (struct lval){LK_NULL, {0}};
			struct lval fn = lq_eval(q, NULL, a.roots->items[0]);
			lq_stream(q, a.roots, fn, a.on_inclusion, stream_each, &a);
			q->fail = outer;
			goto rows;
		}
		q->fail = outer;
		LQ_RESTORE(q, lc);
		if (q->status != LQ_UNSUPPORTED)
			longjmp(*q->fail, 1);
		memcpy(in->props, save, (size_t)in->nprops * sizeof *save);
		in->members = 0;
		q->status = LQ_OK;
	}
	for (int k = 0; k < a.ninst && a.roots; k++) {
		struct linst *in = a.insts[k];
		q->entity = (struct lval){LK_ENTITY, {.ent = in}};
		q->this_v = (struct lval){LK_NULL, {0}};
		q->referrer = (struct lval){LK_NULL, {0}};
		q->rk = RK_ROOT;
		struct lval r = lq_eval(q, NULL, a.roots);
		uint32_t len = r.k == LK_LIST ? r.u.l->n : 1;
		if (r.k == LK_LIST && r.u.l->all)
			lq_raise(q, LQ_UNSUPPORTED, a.roots, "every object of the heap as roots");
		for (uint32_t j = 0; j < len; j++) {
			struct lobj *o = to_object(q, a.roots, r.k == LK_LIST ? r.u.l->v[j] : r);
			if (!o || owner_of(q, o))
				continue;
			claim(q, o, in->id);
			in->members++;
			q->rk = RK_ROOT;
			q->referrer = (struct lval){LK_NULL, {0}};
			on_inclusion(&a, in, (struct lval){LK_OBJ, {.o = o}});
			add_seed(&a, o, in->id);
			lq_poll(q, a.roots);
		}
	}
	/* loaders and threads that joined: their tags, for `in ENTITY` during the walks */
	for (uint32_t k = 1; k < q->nloaders; k++)
		(*q->jv)->GetTag(q->jv, q->loaders[k].ref, &q->loaders[k].tag);
	if (q->threads) {
		q->thread_tags = lq_alloc(q, ((size_t)q->nthreads + 1) * sizeof *q->thread_tags);
		for (uint32_t k = 0; k < q->nthreads; k++)
			(*q->jv)->GetTag(q->jv, q->threads[k], &q->thread_tags[k]);
	}
	if (later)
		lq_tag_primitive_classes(q);
	/* 3. offers without a referrer */
	if (s3root != TRI_FALSE || s3none != TRI_FALSE)
		step3(&a, s3none == TRI_FALSE);
	/* 4. growth */
	if (grow != TRI_FALSE && a.nseeds)
		step4(&a, grow);
rows:
	q->in_trav = false;
	q->entity = (struct lval){LK_NULL, {0}};
	struct builder_rows { struct lval *v; } br;
	br.v = lq_alloc(q, ((size_t)a.ninst + 1) * sizeof *br.v);
	for (int k = 0; k < a.ninst; k++) {
		struct linst *in = a.insts[k];
		struct lstruct *st = lq_alloc(q, sizeof *st);
		st->n = in->nprops + 1;
		st->names = lq_alloc(q, (size_t)st->n * sizeof *st->names);
		st->vals = lq_alloc(q, (size_t)st->n * sizeof *st->vals);
		st->names[0] = "name";
		st->vals[0] = in->name;
		for (int j = 0; j < in->nprops; j++) {
			st->names[j + 1] = in->prop_names[j];
			st->vals[j + 1] = in->props[j];
		}
		br.v[k].k = LK_STRUCT;
		br.v[k].u.st = st;
	}
	struct llist *l = lq_alloc(q, sizeof *l);
	l->n = (uint32_t)a.ninst;
	l->v = br.v;
	return (struct lval){LK_LIST, {.l = l}};
}
