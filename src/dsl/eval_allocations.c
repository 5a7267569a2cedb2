/*
 * eval_allocations.c - the list `allocations` (docs/dsl.md "Allocations"):
 * an attached JVM's allocation recording (src/alloc/alloc.h), read from the
 * session's engine once per snippet and copied into a list of structs
 * "allocation" that outlives the recording.
 */
#include "eval_internal.h"

#include <math.h>
#include <string.h>

/* ---- allocations (src/alloc/alloc.h) ---- */

/* An allocation's members, in the order tables show them (docs/dsl.md). */
static const char *const alloc_members[] = {
	"class", "site", "method", "line", "account", "stack", "objects", "bytes",
	"live_objects", "live_bytes", "elements"};
#define ALLOC_MEMBERS ((int)(sizeof alloc_members / sizeof *alloc_members))

/*
 * What the elements share, made once per recording in the snippet's
 * arena: the text of each frame (node) and the stack list of each
 * allocating frame, and the class and account names.
 */
struct alloc_build {
	struct ev *e;
	const struct alc_rec *r;
	const char **frame;	/* [nnodes] alc_frame_text, NULL until needed */
	struct value *stack;	/* [nnodes] the stack from the node, V_NULL until needed */
	const char **cls;	/* [nclasses] */
	const char **account;	/* [naccounts] */
};

static const char *arena_str(struct ev *e, const char *s)
{
	return arena_strndup(e->a, s, strlen(s));
}

static const char *frame_text(struct alloc_build *b, uint32_t node)
{
	if (b->frame[node])
		return b->frame[node];
	char buf[1024];
	alc_frame_text(b->r, node, buf, sizeof buf);
	return b->frame[node] = arena_str(b->e, buf);
}

/* node_stack: the frames from node to its outermost kept caller, innermost first. */
static struct value node_stack(struct alloc_build *b, uint32_t node)
{
	if (b->stack[node].k == V_LIST)
		return b->stack[node];
	const struct alc_rec *r = b->r;
	uint32_t depth = 0;
	/* a recording's parents lead to the root; bounded all the same */
	for (uint32_t v = node; v != ALC_NONE && v < r->nnodes && depth < r->nnodes; depth++)
		v = r->nodes[v].parent;
	struct value l = eval_vlist(b->e, L_VALUES, depth);
	uint32_t v = node;
	for (uint32_t k = 0; k < depth; k++) {
		l.u.l->v[k] = vstr(frame_text(b, v));
		v = r->nodes[v].parent;
	}
	return b->stack[node] = l;
}

/* The name at index i of names[0..n), copied once into *memo; "?" out of range. */
static const char *memo_name(struct ev *e, const char **memo, char *const *names, uint32_t n,
			     uint32_t i)
{
	if (i >= n || !names[i])
		return "?";
	if (!memo[i])
		memo[i] = arena_str(e, names[i]);
	return memo[i];
}

/*
 * alloc_list: the recording as a list of structs "allocation", one per
 * key in key order. Counters are ints in exact mode and floats (the
 * estimates) in sampled mode. Everything is copied: the list outlives r.
 * No runtime error can happen here, so the caller frees r afterwards.
 */
static struct value alloc_list(struct ev *e, const struct alc_rec *r)
{
	struct alloc_build b = {e, r, NULL, NULL, NULL, NULL};
	b.frame = arena_alloc(e->a, ((size_t)r->nnodes + 1) * sizeof *b.frame);
	b.stack = arena_alloc(e->a, ((size_t)r->nnodes + 1) * sizeof *b.stack);
	b.cls = arena_alloc(e->a, ((size_t)r->nclasses + 1) * sizeof *b.cls);
	b.account = arena_alloc(e->a, ((size_t)r->naccounts + 1) * sizeof *b.account);
	bool exact = r->st.exact;
	struct value l = eval_vlist(e, L_VALUES, r->nkeys);
	struct value nostack = eval_vlist(e, L_VALUES, 0);
	for (uint32_t k = 0; k < r->nkeys; k++) {
		const struct alc_key *key = &r->keys[k];
		struct vstruct *st = arena_alloc(e->a, sizeof *st);
		st->type = "allocation";
		st->n = ALLOC_MEMBERS;
		st->names = (const char **)alloc_members;
		st->vals = arena_alloc(e->a, ALLOC_MEMBERS * sizeof *st->vals);
		struct value *v = st->vals;
		bool framed = key->node != ALC_NONE && key->node < r->nnodes;
		const struct alc_node *nd = framed ? &r->nodes[key->node] : NULL;
		v[0] = vstr(memo_name(e, b.cls, r->classes, r->nclasses, key->cls));
		if (framed) {
			v[1] = vstr(frame_text(&b, key->node));
			const struct alc_method *m = nd->method < r->nmethods ? &r->methods[nd->method]
									      : NULL;
			if (m) {
				const char *c = m->cls ? m->cls : "?", *nm = m->name ? m->name : "?";
				size_t lc = strlen(c), ln = strlen(nm);
				char *t = arena_alloc(e->a, lc + ln + 2);
				memcpy(t, c, lc);
				t[lc] = '.';
				memcpy(t + lc + 1, nm, ln);
				v[2] = vstr(t);
			} else {
				v[2] = vstr("?");
			}
			v[3] = vint(nd->line >= 0 ? nd->line : -1);
			v[5] = node_stack(&b, key->node);
		} else {
			char buf[256];
			alc_frame_text(r, ALC_NONE, buf, sizeof buf);
			v[1] = vstr(arena_str(e, buf));
			v[2] = VNULL;
			v[3] = vint(-1);
			v[5] = nostack;
		}
		v[4] = vstr(memo_name(e, b.account, r->accounts, r->naccounts, key->account));
		const double counters[] = {key->objs, key->bytes, key->live_objs, key->live_bytes,
					   key->elems};
		for (int c = 0; c < 5; c++)
			v[6 + c] = exact ? vint((int64_t)llround(counters[c])) : vfloat(counters[c]);
		l.u.l->v[k].k = V_STRUCT;
		l.u.l->v[k].u.st = st;
	}
	return l;
}

/*
 * allocations: the list `allocations`, read from the engine once per
 * snippet (a read makes the JVM collect garbage: the live counts are then
 * exact), the record freed as soon as it is copied.
 */
struct value eval_allocations(struct ev *e, const struct node *at)
{
	if (e->allocs.k == V_LIST)
		return e->allocs;
	struct hs_error aerr;
	hs_error_clear(&aerr);
	const struct dsl_engine *eng = &e->d->eng;
	struct alc_rec *r = eng->allocations ? eng->allocations(eng->ctx, &aerr) : NULL;
	if (!r)
		eval_rt_error(e, at, "allocations need an attached JVM with a recording (:alloc start)%s%s",
			 aerr.msg[0] ? ": " : "", aerr.msg);
	e->allocs = alloc_list(e, r);
	alc_free(r);
	return e->allocs;
}
