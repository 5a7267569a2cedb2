/*
 * hva_internal.h - what the files of the agent's heap view share
 * (heapif_agent.c: objects, classes, threads, walks over every object, the
 * view; hva_settype.c: a set type's owners, growth and step 3 walk). Not for
 * other files: heapif_agent.h is the view's API.
 */
#ifndef HS_HVA_INTERNAL_H
#define HS_HVA_INTERNAL_H

#include <signal.h>

#include "heapif_agent.h"

/* What a walk reports of the object it is at (objects_each). */
struct walk {
	bool (*fn)(void *ctx, uint32_t obj);
	void *ctx;
	struct wobj w;		/* primitive fields by JVMTI index, a String's text (lq.h) */
	uint32_t cls;		/* class index (java.lang.Class's for a class object) */
	uint32_t mirror;	/* a class object: its class index + 1 */
	int32_t length;		/* arrays; -1 otherwise */
	uint32_t kept;		/* its handle if it has one (kept), else HV_NONE */
	jlong *tag_ptr;		/* the callback's, where hv_keep tags it; NULL: too late to tag */
	uint32_t expect, got;	/* primitive instance fields it has, reported so far */
	bool want_text;		/* a String: its text comes last */
	bool pending;		/* met, not handed to fn yet */
	bool live;		/* fn is running on it: its handles read the walk */
	bool active;		/* FollowReferences (hva_settype.c): at an object whose fields count */
	jlong cur_tag;		/* ... that object's tag */
	bool stop;
};

struct hva {
	struct hv view;
	struct lq *q;
	volatile sig_atomic_t *interrupted;
	enum lq_status status;	/* the first LQ_LIMIT or LQ_CANCELLED met */
	/* objects, by handle (= entry index) */
	jobject *refs;		/* PENDING: kept in a walk, not resolved yet; NULL: collected */
	uint32_t *ecls;		/* class index */
	uint32_t *emirror;	/* a class object: its class index + 1; else 0 */
	int32_t *elen;		/* arrays: length; else -1 */
	uint32_t cap;
	uint32_t *mirror_h;	/* class index -> its class object's handle, HV_NONE: none yet */
	uint32_t *loader_h;	/* loader index -> handle ([0], bootstrap: HV_NONE) */
	uint32_t *thread_h;	/* thread index -> its Thread object's handle */
	uint16_t *nprim;	/* class index -> primitive instance fields, 0xffff: not counted */
	/* the fields located, by hv_slot.off */
	const struct lfield **slots;
	uint32_t nslots, capslots;
	/* class_totals, all classes in one walk; instances, per class */
	uint64_t *tot_count, *tot_bytes;
	const uint32_t **inst;
	uint32_t *ninst;
	const char **names;	/* class names, for cn_select */
	/* handles kept during a walk, their references to get after it */
	uint32_t *pending;
	uint32_t npending, cappending;
	struct walk *w;		/* the walk under way, or NULL */
	/* a set type's growth under way (hva_grow): the reference it is at */
	struct grow *gw;
	/* a visit of every object under way (hva_objects_visit) */
	struct visit_walk *vw;
	struct {
		bool live;	/* an offer is reading it: HV_TRANSIENT | 1 */
		uint32_t cls, mirror;
		int32_t length;
		jlong *tag_ptr;
	} tg;
};

/* The target of the reference a growth walk offers (hva_grow), as a transient handle. */
#define TARGET (HV_TRANSIENT | 1u)

/* A kept handle's reference is PENDING until it is first read (hva_resolve). */
extern char hva_pending_ref;
#define PENDING ((jobject)&hva_pending_ref)

/* Guards: an operation's calls of lq (which may lq_raise) between GUARD and UNGUARD. */
#define GUARD(a, g, ret) \
	struct lq_guard g; \
	LQ_TRY((a)->q, g) { \
		LQ_CAUGHT((a)->q, g); \
		hva_caught(a); \
		return ret; \
	}
#define UNGUARD(a, g) LQ_END((a)->q, g)

/* What the operations know of an object. */
struct ob {
	uint32_t cls, mirror;
	int32_t length;
	jobject ref;		/* NULL: none (in a walk, or not resolved) */
	bool walk;		/* the object the walk is at: read what it reported */
	bool target;		/* a growth's target: its class, size and length only */
};

/*
 * The shared operations of heapif_agent.c (each says what it does there):
 * failures, the table of objects, reading an object, heap walks.
 */
void hva_caught(struct hva *a);
void hva_cannot(struct hva *a, const char *what);
void hva_room(struct hva *a);
uint32_t hva_new_handle(struct hva *a, uint32_t c, int32_t len, jlong *tag);
uint32_t hva_mirror_handle(struct hva *a, uint32_t c);
void hva_pend(struct hva *a, uint32_t h);
void hva_resolve(struct hva *a, uint32_t h);
bool hva_get(struct hva *a, uint32_t obj, struct ob *o);
bool hva_walk_begin(struct hva *a);
jvmtiError hva_walk_from(struct hva *a, const jvmtiHeapCallbacks *cb, void *ud, bool follow,
			 jobject initial, jclass klass);
uint32_t hva_class_index(const struct lq *q, jlong class_tag);
bool hva_walk_stops(struct hva *a);
uint32_t hva_keep(struct hv *v, uint32_t obj);
/* hva_target_handle (hva_settype.c): the handle of a growth's target, tagged if it has none. */
uint32_t hva_target_handle(struct hva *a);

/* hva_settype.c: the set type operations of struct hv_ops (heapif.h). */
void hva_owners(struct hv *v, bool on);
uint32_t hva_owner(struct hv *v, uint32_t obj);
void hva_set_owner(struct hv *v, uint32_t obj, uint32_t id);
void hva_grow(struct hv *v, const struct hv_growth *req);
void hva_objects_visit(struct hv *v, const uint8_t *classes,
		       bool (*fn)(void *ctx, uint32_t obj), void *ctx);

#endif
