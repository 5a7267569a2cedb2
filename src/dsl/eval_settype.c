/*
 * eval_settype.c - set type analyses, the statement instances_for
 * (docs/dsl.md "Set types: semantics"): the instances and their
 * properties, the roots, the offers without a referrer, and the
 * depth-first growth along the heap's references, with THIS, REFERRER,
 * ENTITY and ref_kind set for the code of membership and on_inclusion.
 */
#include "eval_internal.h"
#include "../base/big.h"

#include "plan.h"

#include <stdlib.h>
#include <string.h>

/* ---- set types ---- */

/* to_object: the object behind a root value (objects, classes, loaders, threads). */
static uint32_t to_object(struct ev *e, const struct node *at, struct value v)
{
	switch (v.k) {
	case V_OBJ: return v.u.idx;
	case V_CLASS: {
		struct hv_class c;
		hv_class_info(e->hv, v.u.idx, &c);
		return c.object;
	}
	case V_LOADER: return v.u.idx;
	case V_THREAD: return hv_thread_object(e->hv, v.u.idx);
	case V_NULL: return HV_NONE;
	default:
		eval_rt_error(e, at, "roots must be objects, classes, classloaders or threads, not %s",
			 value_kind_name(v.k));
	}
}

/*
 * An analysis under way (docs/dsl.md, "Set types: semantics"): the
 * members in inclusion order with their instances, and the stack of
 * step 4's depth-first growth.
 */
struct analysis {
	struct ev *e;
	struct stmt *st;
	struct instance **insts;
	int ninst;
	struct node *membership, *on_inclusion;
	struct value on_inclusion_fn;	/* evaluated once per analysis */
	uint32_t *members, *member_inst;	/* [nmembers] object, instance index */
	uint64_t nmembers, mcap;
	uint32_t *stack;
	uint64_t sp, scap;
	uint32_t *pending, *pending_inst;	/* step 3: included at its end */
	uint64_t npending, pcap;
	uint8_t *isroot;	/* step 3: a bit per object that is a GC root */
	uint64_t *order;	/* step 3: the offers that joined, by id */
	uint8_t *tclass;	/* per class: TC_* (what step 4 follows from its objects) */
	uint32_t object_mirror;	/* java.lang.Object's class object, or HV_NONE */
	/* trav_refs: the references of one object, described, before they are offered */
	uint32_t *refs;
	uint8_t *ref_kinds;	/* enum refkind of each */
	uint64_t nrefs, rcap;
};

/* What step 4 follows from an object of a class (see trav_refs). */
enum { TC_FIELDS, TC_NONE, TC_FILTERED };

static void *grow(void *p, uint64_t *cap, uint64_t need, size_t size)
{
	if (need <= *cap)
		return p;
	uint64_t c = *cap ? *cap * 2 : 1024;
	while (c < need)
		c *= 2;
	*cap = c;
	return xreallocarray(p, (size_t)c, size);
}

static void include(struct analysis *an, int k, uint32_t obj)
{
	struct ev *e = an->e;
	struct instance *in = an->insts[k];
	e->owner[obj] = in->id;
	in->members++;
	an->members = grow(an->members, &an->mcap, an->nmembers + 1, sizeof *an->members);
	an->member_inst = xreallocarray(an->member_inst, (size_t)an->mcap, sizeof *an->member_inst);
	an->members[an->nmembers] = obj;
	an->member_inst[an->nmembers++] = (uint32_t)k;
	if (an->on_inclusion) {
		struct instance *save = e->cur;
		e->cur = in;
		e->entity = in;
		e->this_v = vidx(V_OBJ, obj);
		struct value fn = an->on_inclusion_fn;
		if (fn.k != V_LAMBDA)	/* not a lambda: an expression evaluated each time */
			fn = eval_expr(e, NULL, an->on_inclusion);
		if (fn.k == V_LAMBDA)
			eval_apply(e, an->on_inclusion, fn, fn.u.fn->lam->nparams ? 1 : 0, &e->this_v);
		e->cur = save;
	}
}

/* ask: instance k's membership for THIS = obj, REFERRER, ref_kind. */
static bool ask(struct analysis *an, int k, uint32_t referrer, uint32_t obj, enum refkind rk)
{
	struct ev *e = an->e;
	struct instance *in = an->insts[k];
	e->this_v = vidx(V_OBJ, obj);
	e->referrer = referrer == HV_NONE ? VNULL : vidx(V_OBJ, referrer);
	e->rk = rk;
	e->entity = in;
	e->cur = in;
	bool yes = eval_truth(e, an->membership, eval_expr(e, NULL, an->membership), "membership");
	e->cur = NULL;
	return yes;
}

/* step 3: obj, in no instance, offered with no referrer; the first instance that answers. */
static void offer_alone(struct analysis *an, uint32_t obj, enum refkind rk)
{
	for (int k = 0; k < an->ninst; k++)
		if (ask(an, k, HV_NONE, obj, rk)) {
			an->pending = grow(an->pending, &an->pcap, an->npending + 1,
					   sizeof *an->pending);
			an->pending_inst = xreallocarray(an->pending_inst, (size_t)an->pcap,
							 sizeof *an->pending_inst);
			/* the instance, and whether it was offered as a GC root (high bit) */
			an->pending[an->npending] = obj;
			an->pending_inst[an->npending++] = (uint32_t)k | (rk == RK_ROOT ? 1u << 31 : 0);
			return;
		}
}

static int cmp_pending(const void *x, const void *y)
{
	const uint64_t *a = x, *b = y;
	return *a < *b ? -1 : *a > *b;
}

/* step 4: referrer (a member of instance k) -> obj. */
static void offer_growth(struct analysis *an, int k, uint32_t referrer, uint32_t obj,
			 enum refkind rk)
{
	if (an->e->owner[obj] || !ask(an, k, referrer, obj, rk))
		return;
	include(an, k, obj);
	an->stack = grow(an->stack, &an->scap, an->sp + 1, sizeof *an->stack);
	an->stack[an->sp++] = obj;
}

struct trav_ctx {
	struct analysis *an;
	int k;
	uint32_t from;
	bool filtered;		/* an instance of a class HotSpot hides two fields of */
};

static bool trav_ref(void *ctx, const struct hv_ref *r)
{
	struct trav_ctx *t = ctx;
	enum refkind rk;
	switch (r->kind) {
	case HV_REF_FIELD:
		if (t->filtered && r->name &&
		    (!strcmp(r->name, "constantPoolOop") || !strcmp(r->name, "base")))
			return true;
		rk = RK_FIELD;
		break;
	case HV_REF_ELEMENT: rk = RK_ARRAY; break;
	case HV_REF_STATIC:
		if (r->name && r->name[0] == '<')	/* <resolved_references>, <init_lock> */
			return true;
		rk = RK_STATIC;
		break;
	case HV_REF_SUPER:
		if (r->target == t->an->object_mirror)
			return true;
		rk = RK_SUPER;
		break;
	case HV_REF_LOADER: rk = RK_LOADER; break;
	case HV_REF_SIGNERS: case HV_REF_DOMAIN: rk = RK_OTHER; break;
	default: return true;	/* constant pool entries */
	}
	/* offered once the walk is over: a backend's walk runs no query code */
	struct analysis *an = t->an;
	an->refs = grow(an->refs, &an->rcap, an->nrefs + 1, sizeof *an->refs);
	an->ref_kinds = xreallocarray(an->ref_kinds, (size_t)an->rcap, sizeof *an->ref_kinds);
	an->refs[an->nrefs] = r->target;
	an->ref_kinds[an->nrefs++] = (uint8_t)rk;
	return true;
}

/* described_refs: what hv_refs_each describes of v, offered to instance k. */
static void described_refs(struct analysis *an, const struct node *at, struct trav_ctx *t,
			   uint32_t v)
{
	an->nrefs = 0;
	hv_refs_each(an->e->hv, v, trav_ref, t);
	eval_hv_check(an->e, at);
	for (uint64_t j = 0; j < an->nrefs; j++)
		offer_growth(an, t->k, v, an->refs[j], (enum refkind)an->ref_kinds[j]);
}

/*
 * trav_refs: offer what step 4 follows from v, a member of instance k
 * (docs/dsl.md, "The traversal's graph", which is what HotSpot's heap walk
 * reports): instance fields (but not the two reflection fields HotSpot
 * hides from it), object array elements, and for a class object that is
 * not an array class its superclass (unless java.lang.Object), loader,
 * signers, protection domain and declared static fields. Primitive-type
 * class objects (instances of java.lang.Class in the dump) have none.
 */
static void trav_refs(struct analysis *an, const struct node *at, int k, uint32_t v)
{
	struct ev *e = an->e;
	struct hv *hv = e->hv;
	enum hv_obj_kind kind = hv_kind(hv, v);
	struct trav_ctx t = {an, k, v, false};
	switch (kind) {
	case HV_PRIM_ARRAY:
		return;
	case HV_CLASS_OBJECT: {
		uint32_t c = hv_class_of_object(hv, v);
		struct hv_class ci;
		if (c == HV_NONE || (hv_class_info(hv, c, &ci), ci.array))
			return;
		described_refs(an, at, &t, v);
		return;
	}
	case HV_INSTANCE: {
		uint8_t tc = an->tclass[hv_class_of(hv, v)];
		if (tc == TC_NONE)
			return;
		if (tc == TC_FILTERED) {
			t.filtered = true;
			described_refs(an, at, &t, v);
			return;
		}
		break;
	}
	default:
		break;
	}
	uint32_t cnt;
	const uint32_t *out = hv_refs_out(hv, v, &cnt);
	eval_hv_check(e, at);
	enum refkind rk = kind == HV_OBJ_ARRAY ? RK_ARRAY : RK_FIELD;
	for (uint32_t j = 0; j < cnt; j++)
		offer_growth(an, k, v, out[j], rk);
}

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
		fc[k] = hv_class_by_name(v, filtered[k]);
	for (uint32_t c = 0; c < v->nclasses; c++) {
		if (c == v->class_class)
			tc[c] = TC_NONE;
		for (int k = 0; k < 4; k++)
			if (fc[k] != HV_NONE && hv_is_subclass(v, c, fc[k]))
				tc[c] = TC_FILTERED;
	}
	return tc;
}

void eval_analysis_free(struct analysis *an)
{
	free(an->members);
	free(an->member_inst);
	free(an->stack);
	free(an->pending);
	free(an->pending_inst);
	free(an->tclass);
	free(an->refs);
	free(an->ref_kinds);
	free(an->isroot);
	free(an->order);
	free(an);
}

struct value eval_run_instances(struct ev *e, struct stmt *s)
{
	struct settype *t;
	for (t = e->d->sets; t && strcmp(t->name, s->name); t = t->next)
		;
	if (!t) {
		struct node at;
		memset(&at, 0, sizeof at);
		at.line = s->line;
		at.col = s->col;
		eval_rt_error(e, &at, "no set type named '%s' (define it with 'set_type %s: ...')",
			 s->name, s->name);
	}
	struct node at0;
	memset(&at0, 0, sizeof at0);
	at0.line = s->line;
	at0.col = s->col;
	eval_need_heap(e, &at0, "a set type's instances");
	struct hv *hv = e->hv;
	if (!hv->dense) {
		/* PLAN (issue 36 step 2): the owner of an object in a JVMTI tag, not an array */
		hv_set_fail(hv, HV_CANNOT, "a set type over a heap whose objects are not numbered");
		eval_hv_check(e, &at0);
	}
	/* on the heap, so that a runtime error (a longjmp) can still free it */
	struct analysis *anp = xcalloc(1, sizeof *anp);
	e->an = anp;
	anp->e = e;
	anp->st = t->st;
	struct node *roots = NULL;
	int nuser = 0;
	for (int k = 0; k < t->st->nprops; k++) {
		struct property *p = &t->st->props[k];
		if (p->kind == P_ROOTS)
			roots = p->value;
		else if (p->kind == P_MEMBERSHIP)
			anp->membership = p->value;
		else if (p->kind == P_ON_INCLUSION)
			anp->on_inclusion = p->value;
		else
			nuser++;
	}
	if (anp->on_inclusion && anp->on_inclusion->kind == N_LAMBDA)
		anp->on_inclusion_fn = eval_expr(e, NULL, anp->on_inclusion);
	/* 1. The names: one instance per element (or one for a single value). */
	struct value names = eval_expr(e, NULL, s->e);
	uint32_t nn = names.k == V_LIST ? names.u.l->n : 1;
	anp->insts = arena_alloc(e->a, ((size_t)nn + 1) * sizeof *anp->insts);
	e->owner = big_alloc((size_t)hv->nobjects + 1, sizeof *e->owner);
	anp->tclass = classify(hv);
	uint32_t oc = hv_class_by_name(hv, "java.lang.Object");
	anp->object_mirror = HV_NONE;
	if (oc != HV_NONE) {
		struct hv_class ci;
		hv_class_info(hv, oc, &ci);
		anp->object_mirror = ci.object;
	}
	e->in_trav = true;
	for (uint32_t k = 0; k < nn; k++) {
		struct instance *in = arena_alloc(e->a, sizeof *in);
		in->name = names.k == V_LIST ? list_get(names.u.l, k) : names;
		in->id = k + 1;
		in->nprops = 0;
		in->prop_names = arena_alloc(e->a, ((size_t)nuser + 1) * sizeof *in->prop_names);
		in->props = arena_alloc(e->a, ((size_t)nuser + 1) * sizeof *in->props);
		e->entity = in;
		e->cur = in;
		for (int j = 0; j < t->st->nprops; j++) {
			struct property *p = &t->st->props[j];
			if (p->kind != P_USER)
				continue;
			in->prop_names[in->nprops] = p->decl.name;
			struct value pv = eval_expr(e, NULL, p->value);
			if (p->decl.type)
				pv = eval_typed(e, p->decl.line, p->decl.col, p->decl.name, p->decl.type, pv);
			in->props[in->nprops++] = pv;
		}
		e->cur = NULL;
		anp->insts[anp->ninst++] = in;
	}
	/* 2. Roots, instance by instance (an object joins the first that claims it). */
	for (int k = 0; k < anp->ninst; k++) {
		if (!roots)
			break;
		struct instance *in = anp->insts[k];
		e->entity = in;
		e->this_v = VNULL;
		e->referrer = VNULL;
		e->rk = RK_ROOT;
		struct value r = eval_expr(e, NULL, roots);
		uint32_t len = r.k == V_LIST ? r.u.l->n : 1;
		for (uint32_t j = 0; j < len; j++) {
			uint32_t o = to_object(e, roots, r.k == V_LIST ? list_get(r.u.l, j) : r);
			if (o == HV_NONE || e->owner[o])
				continue;
			e->rk = RK_ROOT;
			e->referrer = VNULL;
			include(anp, k, o);
			eval_poll(e, roots);
		}
	}
	/*
	 * 3. Offers without a referrer: the GC roots (ref_kind root), then every
	 * other object (ref_kind none), each once, against the instances as
	 * step 2 left them; what they include joins at the end. Skipped where
	 * the membership is false for certain (plan.h).
	 */
	if (anp->membership && anp->ninst) {
		struct pe_ctx pr = {PE_REF_NULL, RK_ROOT}, pn = {PE_REF_NULL, RK_NONE};
		bool roots_may = pe_membership(anp->membership, &pr) != TRI_FALSE;
		bool others_may = pe_membership(anp->membership, &pn) != TRI_FALSE;
		uint8_t *isroot = anp->isroot = xcalloc((size_t)hv->nobjects / 8 + 1, 1);
		struct list *gc = eval_roots(e, anp->membership, HV_NONE).u.l;
		for (uint32_t r = 0; r < gc->n; r++) {
			uint32_t o = list_get(gc, r).u.idx;
			if (isroot[o / 8] & (1u << (o % 8)))
				continue;
			isroot[o / 8] |= (uint8_t)(1u << (o % 8));
			if (roots_may && !e->owner[o]) {
				eval_poll(e, anp->membership);
				offer_alone(anp, o, RK_ROOT);
			}
		}
		for (uint32_t o = 0; others_may && o < hv->nobjects; o++) {
			eval_poll(e, anp->membership);
			if (!e->owner[o] && !(isroot[o / 8] & (1u << (o % 8))))
				offer_alone(anp, o, RK_NONE);
		}
		free(isroot);
		anp->isroot = NULL;
		/* they join in the order of their ids (index order) */
		uint64_t *order = anp->order = xcalloc((size_t)anp->npending + 1, sizeof *order);
		for (uint64_t j = 0; j < anp->npending; j++)
			order[j] = (uint64_t)anp->pending[j] << 32 | j;
		qsort(order, (size_t)anp->npending, sizeof *order, cmp_pending);
		for (uint64_t j = 0; j < anp->npending; j++) {
			uint32_t p = (uint32_t)order[j];
			uint32_t ki = anp->pending_inst[p];
			e->rk = ki >> 31 ? RK_ROOT : RK_NONE;
			e->referrer = VNULL;
			include(anp, (int)(ki & 0x7fffffffu), anp->pending[p]);
		}
		free(order);
		anp->order = NULL;
	}
	/*
	 * 4. Growth, instance by instance: from each member, depth first, the
	 * references to objects in no instance are offered to that instance's
	 * membership only.
	 */
	struct pe_ctx pg = {PE_REF_MEMBER, PE_RK_NOT_ROOT};
	if (anp->membership && pe_membership(anp->membership, &pg) != TRI_FALSE) {
		uint64_t n0 = anp->nmembers;
		for (int k = 0; k < anp->ninst; k++) {
			for (uint64_t j = 0; j < n0; j++) {
				if (anp->member_inst[j] != (uint32_t)k)
					continue;
				anp->stack = grow(anp->stack, &anp->scap, anp->sp + 1,
						  sizeof *anp->stack);
				anp->stack[anp->sp++] = anp->members[j];
				while (anp->sp) {
					uint32_t v = anp->stack[--anp->sp];
					eval_poll(e, s->e);
					trav_refs(anp, s->e, k, v);
				}
			}
		}
	}
	e->in_trav = false;
	e->entity = NULL;
	big_free(e->owner);
	e->owner = NULL;
	e->an = NULL;
	/* The result: a row per instance, its name and its properties. */
	struct value out = eval_vlist(e, L_VALUES, (uint32_t)anp->ninst);
	for (int k = 0; k < anp->ninst; k++) {
		struct instance *in = anp->insts[k];
		struct vstruct *st = arena_alloc(e->a, sizeof *st);
		st->type = t->name;
		st->n = in->nprops + 1;
		st->names = arena_alloc(e->a, (size_t)st->n * sizeof *st->names);
		st->vals = arena_alloc(e->a, (size_t)st->n * sizeof *st->vals);
		st->names[0] = "name";
		st->vals[0] = in->name;
		for (int j = 0; j < in->nprops; j++) {
			st->names[j + 1] = in->prop_names[j];
			st->vals[j + 1] = in->props[j];
		}
		out.u.l->v[k].k = V_STRUCT;
		out.u.l->v[k].u.st = st;
	}
	eval_analysis_free(anp);
	return out;
}
