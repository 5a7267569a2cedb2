/*
 * eval_settype.c - set type analyses, the statement instances_for
 * (docs/dsl.md "Set types: semantics"): the instances and their
 * properties, the roots, the offers without a referrer, and the
 * depth-first growth along the heap's references, with THIS, REFERRER,
 * ENTITY and ref_kind set for the code of membership and on_inclusion.
 */
#include "eval_internal.h"

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
	struct node *membership, *on_inclusion, *at;
	struct value on_inclusion_fn;	/* evaluated once per analysis */
	bool walk;		/* objects come from a backend's walk: keep what stays */
	bool seeding;		/* steps 2 and 3: members are kept as step 4's seeds */
	uint32_t *members, *member_inst;	/* [nmembers] object, instance index */
	uint64_t nmembers, mcap;
	uint32_t *pending, *pending_inst;	/* step 3: included at its end */
	uint64_t npending, pcap;
	uint8_t *isroot;	/* step 3: a bit per object that is a GC root (numbered heaps) */
	uint32_t *roots;	/* step 3: the GC roots, sorted (heaps not numbered) */
	uint64_t nroots;
	uint8_t *isroot_done;	/* step 3: a bit per place in roots, offered already */
	struct by_id *order;	/* step 3: the offers that joined, by id */
	uint32_t *seeds;	/* step 4: the members before growth, by instance */
	uint32_t *starts, *ids;	/* step 4: where each instance's begin in seeds; their ids */
	/* on_inclusion as sums (plan_sums): property, literal or THIS's shallow size added
	 * (size: 1 as "shallow_size", 2 as "size") */
	struct { int prop; int64_t add; int size; } sums[8];
	int nsums;
	/* per name (shallow_size, size), per class: 0 not asked, 1 the built-in, 2 a field */
	uint8_t *shadow[2];
};


/* claim: obj joins instance k (its owner; a seed of step 4 in steps 2 and 3). */
static void claim(struct analysis *an, int k, uint32_t obj)
{
	struct ev *e = an->e;
	struct instance *in = an->insts[k];
	hv_set_owner(e->hv, obj, in->id);
	eval_hv_check(e, an->at);
	in->members++;
	if (an->seeding) {
		if (an->walk)
			obj = eval_keep(e, an->at, vidx(V_OBJ, obj), NULL).u.idx;
		an->members = xgrow(an->members, &an->mcap, an->nmembers + 1, sizeof *an->members);
		an->member_inst = xreallocarray(an->member_inst, (size_t)an->mcap,
						sizeof *an->member_inst);
		an->members[an->nmembers] = obj;
		an->member_inst[an->nmembers++] = (uint32_t)k;
	}
}

/*
 * plan_sums: whether on_inclusion is a lambda whose every statement is
 * "p <- p + N" (an integer) or "p <- p + THIS.shallow_size" ("size" too) on a
 * property p: then each inclusion adds, with no
 * evaluation (millions of objects join in a growth).
 */
static void plan_sums(struct analysis *an, const struct stmt *set)
{
	const struct node *fn = an->on_inclusion;
	an->nsums = 0;
	if (!fn || fn->kind != N_LAMBDA || fn->nparams || fn->result ||
	    fn->nitems > (int)(sizeof an->sums / sizeof *an->sums))
		return;
	for (int k = 0; k < fn->nitems; k++) {
		const struct node *s = fn->items[k], *v = s->a;
		if (s->kind != N_ASSIGN || v->kind != N_BIN || v->op != OP_ADD ||
		    !pe_is_ident(v->a, s->name))
			return;
		int prop = -1;
		for (int j = 0, u = 0; j < set->nprops; j++)
			if (set->props[j].kind == P_USER) {
				if (!strcmp(set->props[j].decl.name, s->name))
					prop = u;
				u++;
			}
		if (prop < 0)
			return;
		an->sums[k].prop = prop;
		if (v->b->kind == N_INT) {
			an->sums[k].add = v->b->i;
			an->sums[k].size = 0;
		} else if (v->b->kind == N_MEMBER && pe_is_ident(v->b->a, "THIS") &&
			   (!strcmp(v->b->name, "shallow_size") || !strcmp(v->b->name, "size"))) {
			an->sums[k].size = strcmp(v->b->name, "size") ? 1 : 2;
		} else {
			return;
		}
	}
	an->nsums = fn->nitems;
}

/*
 * sum_shadowed: whether a field of obj's class named as the built-in m (which
 * is sums' size 1 or 2) would be read instead (object_member).
 */
static bool sum_shadowed(struct analysis *an, const struct node *m, int size, uint32_t obj)
{
	struct hv *v = an->e->hv;
	uint32_t c = hv_class_of(v, obj);
	if (c >= v->nclasses)
		return true;
	uint8_t **sh = &an->shadow[size - 1];
	if (!*sh)
		*sh = xcalloc((size_t)v->nclasses + 1, 1);
	if (!(*sh)[c]) {
		struct hv_slot slot = {0, 0};
		(*sh)[c] = hv_kind(v, obj) == HV_INSTANCE && hv_field_locate(v, c, m->name, &slot)
			   ? 2 : 1;
	}
	return (*sh)[c] == 2;
}

/*
 * included_sums: plan_sums' additions for obj on instance in; false: evaluate
 * instead (which says what failed). Raises nothing: a walk's callback calls
 * it unguarded.
 */
static bool included_sums(struct analysis *an, struct instance *in, uint32_t obj)
{
	struct ev *e = an->e;
	int64_t add[8];
	for (int j = 0; j < an->nsums; j++) {
		if (in->props[an->sums[j].prop].k != V_INT)
			return false;	/* the evaluation says what is wrong */
		if (!an->sums[j].size) {
			add[j] = an->sums[j].add;
			continue;
		}
		const struct node *m = an->on_inclusion->items[j]->a->b;
		if (sum_shadowed(an, m, an->sums[j].size, obj))
			return false;
		add[j] = (int64_t)hv_shallow(e->hv, obj);
		if (hv_failed(e->hv))
			return false;
	}
	for (int j = 0; j < an->nsums; j++) {	/* Java's long arithmetic: wrap-around */
		struct value *p = &in->props[an->sums[j].prop];
		p->u.i = (int64_t)((uint64_t)p->u.i + (uint64_t)add[j]);
	}
	return true;
}

/* included: instance k's on_inclusion for obj, which joined it. */
static void included(struct analysis *an, int k, uint32_t obj)
{
	struct ev *e = an->e;
	struct instance *in = an->insts[k];
	if (an->nsums && included_sums(an, in, obj))
		return;
	if (an->on_inclusion) {
		struct arena_mark m;
		bool began = eval_step_begin(e, &m);
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
		/* the properties: out of the step (ours, or a stream's around us), what a walk is
		 * at kept */
		const struct arena *from = began || e->in_step ? &e->scratch : NULL;
		if (from || an->walk) {
			struct arena *a = e->a;
			e->a = e->run_a;
			for (int j = 0; j < in->nprops; j++)
				if (eval_keep_needed(in->props[j]))
					in->props[j] = eval_keep(e, an->on_inclusion, in->props[j], from);
			e->a = a;
		}
		eval_step_end(e, &m, began);
	}
}

/* include: obj joins instance k, with its on_inclusion. */
static void include(struct analysis *an, int k, uint32_t obj)
{
	claim(an, k, obj);
	included(an, k, obj);
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
	struct arena_mark m;
	bool began = eval_step_begin(e, &m);
	bool yes = eval_truth(e, an->membership, eval_expr(e, NULL, an->membership), "membership");
	eval_step_end(e, &m, began);
	e->cur = NULL;
	return yes;
}

/* step 3: obj, in no instance, offered with no referrer; the first instance that answers. */
static void offer_alone(struct analysis *an, uint32_t obj, enum refkind rk)
{
	for (int k = 0; k < an->ninst; k++)
		if (ask(an, k, HV_NONE, obj, rk)) {
			an->pending = xgrow(an->pending, &an->pcap, an->npending + 1,
					   sizeof *an->pending);
			an->pending_inst = xreallocarray(an->pending_inst, (size_t)an->pcap,
							 sizeof *an->pending_inst);
			/* the instance, and whether it was offered as a GC root (high bit) */
			if (an->walk)
				obj = eval_keep(an->e, an->membership, vidx(V_OBJ, obj), NULL).u.idx;
			an->pending[an->npending] = obj;
			an->pending_inst[an->npending++] = (uint32_t)k | (rk == RK_ROOT ? 1u << 31 : 0);
			return;
		}
}

/* step 4: referrer (a member of instance k) -> target, offered by the backend's walk (hv_grow). */
struct offer {
	struct analysis *an;
	int k;
	uint32_t referrer, target;
	enum hv_ref_kind kind;
	bool always;		/* the membership is true for every offer (plan.h): not asked */
};

/*
 * stop_on_error: after a guarded callback that caught an error (raised once
 * the walk returns), a failure of the view, so that the backend's walk
 * stops at once (an offer's false only means "not joined").
 */
static void stop_on_error(struct ev *e)
{
	if (e->caught)
		hv_set_fail(e->hv, HV_ERROR, "a step of the walk failed");
}

static bool offer_step(void *ctx)
{
	struct offer *o = ctx;
	static const enum refkind rk[] = {
		[HV_REF_FIELD] = RK_FIELD, [HV_REF_ELEMENT] = RK_ARRAY, [HV_REF_STATIC] = RK_STATIC,
		[HV_REF_SUPER] = RK_SUPER, [HV_REF_LOADER] = RK_LOADER, [HV_REF_SIGNERS] = RK_OTHER,
		[HV_REF_DOMAIN] = RK_OTHER, [HV_REF_CONSTANT] = RK_OTHER};
	struct analysis *an = o->an;
	eval_poll(an->e, an->at);
	return ask(an, o->k, o->referrer, o->target, rk[o->kind]);
}

/* offer_growth: the membership of instance k for target (the backend makes it a member). */
static bool offer_growth(void *ctx, uint32_t k, uint32_t referrer, uint32_t target,
			 enum hv_ref_kind kind)
{
	struct offer *o = ctx;
	if (o->always)
		return true;
	o->k = (int)k;
	o->referrer = referrer;
	o->target = target;
	o->kind = kind;
	bool joins = eval_guarded(o->an->e, offer_step, o);
	stop_on_error(o->an->e);
	return joins;
}

static bool joined_step(void *ctx)
{
	struct offer *o = ctx;
	o->an->insts[o->k]->members++;
	included(o->an, o->k, o->target);
	return true;
}

/* joined_growth: obj joined instance k in growth: counted, its on_inclusion. */
static void joined_growth(void *ctx, uint32_t k, uint32_t obj)
{
	struct offer *o = ctx;
	struct analysis *an = o->an;
	if (an->nsums && included_sums(an, an->insts[k], obj)) {	/* no guard needed */
		an->insts[k]->members++;
		return;
	}
	o->k = (int)k;
	o->target = obj;
	eval_guarded(o->an->e, joined_step, o);
	stop_on_error(o->an->e);
}

/* step 3's offers in the order of their ids. */
struct by_id {
	uint64_t id;
	uint32_t j;
};

static int cmp_by_id(const void *x, const void *y)
{
	const struct by_id *a = x, *b = y;
	return a->id < b->id ? -1 : a->id > b->id ? 1 : (a->j > b->j) - (a->j < b->j);
}

/* step 3's GC roots on a heap whose objects are not numbered: sorted handles. */
static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return a < b ? -1 : a > b;
}


static bool is_root(const struct analysis *an, uint32_t o)
{
	if (an->isroot)
		return an->isroot[o / 8] & (1u << (o % 8));
	return an->nroots && bsearch(&o, an->roots, (size_t)an->nroots, sizeof o, cmp_u32);
}

struct alone {
	struct analysis *an;
	uint32_t obj;
};

static bool alone_step(void *ctx)
{
	struct alone *a = ctx;
	struct analysis *an = a->an;
	eval_poll(an->e, an->membership);
	if (!hv_owner(an->e->hv, a->obj) && !is_root(an, a->obj))
		offer_alone(an, a->obj, RK_NONE);
	return true;
}

static bool alone_each(void *ctx, uint32_t obj)
{
	struct alone a = {ctx, obj};
	return eval_guarded(a.an->e, alone_step, &a);
}

void eval_analysis_free(struct analysis *an)
{
	free(an->members);
	free(an->member_inst);
	free(an->pending);
	free(an->pending_inst);
	free(an->isroot);
	free(an->roots);
	free(an->isroot_done);
	free(an->order);
	free(an->seeds);
	free(an->starts);
	free(an->ids);
	free(an->shadow[0]);
	free(an->shadow[1]);
	free(an);
}

/*
 * node_find: whether some node of the tree n is one fn finds: fn returns 1
 * (found), 0 (look at its operands) or -1 (not there, nor below).
 */
static bool node_find(const struct node *n, int (*fn)(const struct node *n))
{
	if (!n)
		return false;
	int r = fn(n);
	if (r)
		return r > 0;
	if (node_find(n->a, fn) || node_find(n->b, fn) || node_find(n->result, fn))
		return true;
	for (int k = 0; k < n->nitems; k++)
		if (node_find(n->items[k], fn))
			return true;
	return false;
}

/* asks_owner: 'in ENTITY', 'in Unassigned' (who owns an object). */
static int asks_owner(const struct node *n)
{
	return n->kind == N_IN || n->kind == N_IN_UNASSIGNED;
}

/* reads_edge: REFERRER or ref_kind (the reference an object joined by). */
static int reads_edge(const struct node *n)
{
	return pe_is_ident(n, "REFERRER") || pe_is_ident(n, "ref_kind");
}

/*
 * reads_fields: more of THIS or REFERRER than a heap walk's reference
 * reports (class, shallow size, kind): a field, a String's text, or the
 * object itself handed on.
 */
static int reads_fields(const struct node *n)
{
	bool obj = n->a && (pe_is_ident(n->a, "THIS") || pe_is_ident(n->a, "REFERRER"));
	if (n->kind == N_MEMBER && obj)	/* a field of that name would shadow the built-in */
		return !strcmp(n->name, "shallow_size") || !strcmp(n->name, "class") ||
		       !strcmp(n->name, "kind") ? -1 : 1;
	if ((n->kind == N_IS || n->kind == N_IN || n->kind == N_IN_UNASSIGNED) && obj)
		return node_find(n->b, reads_fields) ? 1 : -1;
	return pe_is_ident(n, "THIS") || pe_is_ident(n, "REFERRER");
}

struct stream {
	struct analysis *an;
};

static void stream_one(struct ev *e, void *ctx, struct value x)
{
	struct stream *st = ctx;
	st->an->insts[0]->members++;
	e->rk = RK_ROOT;
	e->referrer = VNULL;
	included(st->an, 0, x.u.idx);
}

/*
 * stream_roots: step 2 of a set type with one instance, whose membership
 * takes nothing (only its roots join: the paper's listings 1 and 2), whose
 * roots are objects.filter(f) and whose on_inclusion asks no owner: each
 * root joins as the walk over every object meets it, in the order of the
 * list it replaces (id order), instead of being gathered into a list first
 * (inside a JVM: no tag, no JNI reference per root). False when the shape
 * is another (the caller evaluates the roots as a list).
 */
static bool stream_roots(struct ev *e, struct analysis *an, struct stmt *set, struct node *roots)
{
	struct pe_ctx pg = {PE_REF_MEMBER, PE_RK_NOT_ROOT};
	struct pe_ctx pr = {PE_REF_NULL, RK_ROOT}, pn = {PE_REF_NULL, RK_NONE};
	(void)set;
	if (an->membership && (pe_membership(an->membership, &pg) != TRI_FALSE ||
			       pe_membership(an->membership, &pr) != TRI_FALSE ||
			       pe_membership(an->membership, &pn) != TRI_FALSE))
		return false;
	if (!roots || roots->kind != N_CALL || roots->nitems != 1 || !pe_is_ident(roots->a, "objects") ||
	    bi_id_of(roots->name, BI_R_LIST) != BI_LIST_FILTER || eval_global_find(e->d, "objects") ||
	    node_find(an->on_inclusion, asks_owner))
		return false;
	struct value f = eval_expr(e, NULL, roots->items[0]);
	if (f.k != V_LAMBDA)
		return false;
	struct stream st = {an};
	eval_filter_stream(e, roots, f, stream_one, &st);
	return true;
}

/*
 * candidates: the classes of the objects membership n may take under c (its
 * "THIS is C" tests, through and, and or where both sides may hold), as
 * bits by class handle, or NULL for every class.
 */
static const uint8_t *candidates(struct ev *e, struct node *n, const struct pe_ctx *c)
{
	if (!n)
		return NULL;
	if (n->kind == N_IS && pe_is_ident(n->a, "THIS"))
		return eval_resolve_class(e, n, n->name);
	if (n->kind != N_BIN || (n->op != OP_AND && n->op != OP_OR))
		return NULL;
	if (n->op == OP_OR) {
		if (pe_membership(n->a, c) == TRI_FALSE)
			return candidates(e, n->b, c);
		if (pe_membership(n->b, c) == TRI_FALSE)
			return candidates(e, n->a, c);
	}
	const uint8_t *x = candidates(e, n->a, c), *y = candidates(e, n->b, c);
	if (n->op == OP_AND && (!x || !y))
		return x ? x : y;
	if (n->op == OP_OR && (!x || !y))
		return NULL;
	size_t len = (size_t)e->hv->nclasses / 8 + 1;
	uint8_t *r = arena_alloc(e->a, len);
	for (size_t k = 0; k < len; k++)
		r[k] = n->op == OP_AND ? x[k] & y[k] : x[k] | y[k];
	return r;
}

/*
 * refuse_order: on a backend that walks (objects not numbered: the agent's),
 * objects join in the order of its walk, not the dump's: an on_inclusion
 * whose result depends on that order, or a membership that reads ENTITY's
 * properties (which change as objects join), cannot be answered there
 * (plan.h; "cannot answer here": the session takes a snapshot).
 */
static void refuse_order(struct ev *e, struct analysis *an, struct stmt *set)
{
	if (e->hv->dense || !an->membership)
		return;
	struct pe_ctx pg = {PE_REF_MEMBER, PE_RK_NOT_ROOT};
	struct pe_ctx pr = {PE_REF_NULL, RK_ROOT}, pn = {PE_REF_NULL, RK_NONE};
	if (pe_membership(an->membership, &pg) == TRI_FALSE &&
	    pe_membership(an->membership, &pr) == TRI_FALSE &&
	    pe_membership(an->membership, &pn) == TRI_FALSE)
		return;	/* only roots join: in the order of the roots' list */
	if (!plan_order_free(set, an->on_inclusion)) {
		hv_set_fail(e->hv, HV_CANNOT, "on_inclusion depends on the order objects join (only "
			    "sums, counts and flags can be computed during a heap walk)");
		eval_hv_check(e, an->on_inclusion);
	}
	if (plan_mentions_prop(set, an->membership)) {
		hv_set_fail(e->hv, HV_CANNOT, "the membership reads ENTITY's properties, which "
			    "change as objects join");
		eval_hv_check(e, an->membership);
	}
	if (pe_membership(an->membership, &pg) != TRI_FALSE && node_find(an->on_inclusion, reads_edge)) {
		hv_set_fail(e->hv, HV_CANNOT, "on_inclusion reads REFERRER or ref_kind, which a heap "
			    "walk no longer knows when it reaches what joined");
		eval_hv_check(e, an->on_inclusion);
	}
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
	plan_sums(anp, t->st);
	/* 1. The names: one instance per element (or one for a single value). */
	struct value names = eval_expr(e, NULL, s->e);
	uint32_t nn = names.k == V_LIST ? names.u.l->n : 1;
	anp->insts = arena_alloc(e->a, ((size_t)nn + 1) * sizeof *anp->insts);
	anp->at = s->e;
	anp->walk = !hv->dense;
	refuse_order(e, anp, t->st);
	anp->seeding = true;
	hv_owners(hv, true);
	e->owners = true;
	eval_hv_check(e, &at0);
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
		if (anp->ninst == 1 && stream_roots(e, anp, t->st, roots))
			break;
		struct value r = eval_expr(e, NULL, roots);
		if (r.k == V_LIST && r.u.l->kind == L_ALL && !hv->dense) {
			hv_set_fail(hv, HV_CANNOT, "every object as a set type's roots");
			eval_hv_check(e, roots);
		}
		uint32_t len = r.k == V_LIST ? r.u.l->n : 1;
		for (uint32_t j = 0; j < len; j++) {
			uint32_t o = to_object(e, roots, r.k == V_LIST ? list_get(r.u.l, j) : r);
			if (o == HV_NONE || hv_owner(hv, o))
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
	struct pe_ctx pr = {PE_REF_NULL, RK_ROOT}, pn = {PE_REF_NULL, RK_NONE};
	bool roots_may = anp->membership && pe_membership(anp->membership, &pr) != TRI_FALSE;
	bool others_may = anp->membership && pe_membership(anp->membership, &pn) != TRI_FALSE;
	if (anp->ninst && (roots_may || others_may)) {
		struct list *gc = eval_roots(e, anp->membership, HV_NONE).u.l;
		uint8_t *done = NULL;
		if (hv->dense) {
			anp->isroot = xcalloc((size_t)hv->nobjects / 8 + 1, 1);
		} else {	/* sorted, for is_root */
			anp->roots = xcalloc((size_t)gc->n + 1, sizeof *anp->roots);
			for (uint32_t r = 0; r < gc->n; r++)
				anp->roots[r] = list_get(gc, r).u.idx;
			qsort(anp->roots, gc->n, sizeof *anp->roots, cmp_u32);
			anp->nroots = gc->n;
			done = anp->isroot_done = xcalloc((size_t)gc->n / 8 + 1, 1);
		}
		for (uint32_t r = 0; r < gc->n; r++) {
			uint32_t o = list_get(gc, r).u.idx;
			if (anp->isroot) {
				if (anp->isroot[o / 8] & (1u << (o % 8)))
					continue;
				anp->isroot[o / 8] |= (uint8_t)(1u << (o % 8));
			} else {	/* once: by its first place in the sorted roots */
				const uint32_t *p = bsearch(&o, anp->roots, (size_t)anp->nroots,
							    sizeof o, cmp_u32);
				while (p > anp->roots && p[-1] == o)
					p--;
				uint64_t at = (uint64_t)(p - anp->roots);
				if (done[at / 8] & (1u << (at % 8)))
					continue;
				done[at / 8] |= (uint8_t)(1u << (at % 8));
			}
			if (roots_may && !hv_owner(hv, o)) {
				eval_poll(e, anp->membership);
				offer_alone(anp, o, RK_ROOT);
			}
		}
		const uint8_t *cand = others_may ? candidates(e, anp->membership, &pn) : NULL;
		if (others_may && hv->dense) {
			for (uint32_t o = 0; o < hv->nobjects; o++) {
				eval_poll(e, anp->membership);
				if ((!cand || has_bit(cand, hv_class_of(hv, o))) && !hv_owner(hv, o) &&
				    !is_root(anp, o))
					offer_alone(anp, o, RK_NONE);
			}
		} else if (others_may) {	/* no order needed: the offers join by id */
			hv_objects_visit(hv, cand, alone_each, anp);
			eval_raise_caught(e);
			eval_hv_check(e, anp->membership);
		}
		free(anp->isroot);
		anp->isroot = NULL;
		/* they join in the order of their ids (index order on a numbered heap) */
		struct by_id *order = anp->order = xcalloc((size_t)anp->npending + 1, sizeof *order);
		for (uint64_t j = 0; j < anp->npending; j++)
			order[j] = (struct by_id){hv->dense ? anp->pending[j] : hv_id(hv, anp->pending[j]),
						  (uint32_t)j};
		eval_hv_check(e, anp->membership);
		qsort(order, (size_t)anp->npending, sizeof *order, cmp_by_id);
		for (uint64_t j = 0; j < anp->npending; j++) {
			uint32_t p = order[j].j;
			uint32_t ki = anp->pending_inst[p];
			e->rk = ki >> 31 ? RK_ROOT : RK_NONE;
			e->referrer = VNULL;
			include(anp, (int)(ki & 0x7fffffffu), anp->pending[p]);
		}
		free(order);
		anp->order = NULL;
		free(anp->roots);
		anp->roots = NULL;
		free(anp->isroot_done);
		anp->isroot_done = NULL;
		anp->nroots = 0;
	}
	/*
	 * 4. Growth, instance by instance: from each member, depth first, the
	 * references to objects in no instance are offered to that instance's
	 * membership only.
	 */
	struct pe_ctx pg = {PE_REF_MEMBER, PE_RK_NOT_ROOT};
	anp->seeding = false;
	enum tri grows = anp->membership ? pe_membership(anp->membership, &pg) : TRI_FALSE;
	if (grows != TRI_FALSE && anp->ninst) {
		/* the members by instance, in inclusion order (a counting sort) */
		uint32_t ni = (uint32_t)anp->ninst;
		uint32_t *starts = anp->starts = xcalloc((size_t)ni + 1, sizeof *starts);
		uint32_t *ids = anp->ids = xcalloc(ni, sizeof *ids);
		anp->seeds = xcalloc((size_t)anp->nmembers + 1, sizeof *anp->seeds);
		for (uint64_t j = 0; j < anp->nmembers; j++)
			starts[anp->member_inst[j] + 1]++;
		for (uint32_t k = 0; k < ni; k++) {
			starts[k + 1] += starts[k];
			ids[k] = anp->insts[k]->id;
		}
		uint32_t *at = xcalloc(ni, sizeof *at);
		for (uint64_t j = 0; j < anp->nmembers; j++) {
			uint32_t k = anp->member_inst[j];
			anp->seeds[starts[k] + at[k]++] = anp->members[j];
		}
		free(at);
		/* "THIS in Unassigned and REFERRER in ENTITY": true of every offer, not asked
		 * (unless on_inclusion reads what the asking sets) */
		struct offer o = {anp, 0, HV_NONE, HV_NONE, HV_REF_FIELD,
				  grows == TRI_TRUE && !node_find(anp->on_inclusion, reads_edge)};
		struct hv_growth g = {anp->seeds, starts, ids, ni,
				      node_find(anp->membership, reads_fields) ||
					  node_find(anp->on_inclusion, reads_fields),
				      offer_growth, joined_growth, &o};
		hv_grow(hv, &g);
		eval_raise_caught(e);
		eval_hv_check(e, s->e);
	}
	e->in_trav = false;
	e->entity = NULL;
	hv_owners(hv, false);
	e->owners = false;
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
