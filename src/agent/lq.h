/*
 * lq.h - the agent's evaluator of query programs (docs/agent.md, "Analyses
 * inside the JVM"; the language of docs/dsl.md, the semantics of
 * src/dsl/eval.c, which it mirrors for what it supports).
 *
 * One struct lq serves one ANALYZE request: it owns a JVMTI environment
 * of its own (its tags go when it is disposed, so nothing is left in the
 * JVM), a bounded arena, the classes of the JVM as a table, and the
 * request's limits (time, memory, a CANCEL on the connection).
 *
 * Objects are either JNI local references (lists built with JNI: roots,
 * class instances, filters that read references) or what a heap walk
 * reports of the object it is at (class, size, primitive fields, a
 * String's text, the class and tag of what its reference fields hold).
 * Walk objects live only during the walk's callbacks, where no JNI call
 * is allowed: reading from a walk object what the walk does not report,
 * or anything that needs JNI there, raises LQ_UNSUPPORTED, and heapsh
 * then takes a snapshot.
 *
 * Errors unwind with longjmp to the innermost lq_try; JVMTI callbacks
 * catch them before returning to the VM (never longjmp across the VM).
 */
#ifndef HS_LQ_H
#define HS_LQ_H

#include <jvmti.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

#include "../dsl/ast.h"
#include "../dsl/builtins.h"
#include "../dsl/prog.h"

/* Outcomes (END's status, docs/protocol.md). */
enum lq_status {
	LQ_OK = 0,
	LQ_UNSUPPORTED = 1,	/* cannot run inside the JVM: heapsh uses a snapshot */
	LQ_ERROR = 2,		/* a runtime error of the query */
	LQ_LIMIT = 3,		/* time or memory limit reached */
	LQ_CANCELLED = 4
};

#define LQ_NONE UINT32_MAX

enum lk {
	LK_NULL, LK_BOOL, LK_INT, LK_FLOAT, LK_STR, LK_OBJ, LK_CLASS, LK_LOADER, LK_THREAD,
	LK_LIST, LK_STRUCT, LK_LAMBDA, LK_ENTITY, LK_REFKIND
};

struct lq;
struct llist;
struct lstruct;
struct lclosure;
struct linst;
struct wobj;

/*
 * An object. ref: a JNI local reference, or NULL for what a walk reports.
 * A class object has cls = the index of java.lang.Class and mirror = the
 * index of the class it stands for, + 1.
 */
struct lobj {
	jobject ref;
	uint32_t cls;
	uint32_t mirror;
	int32_t length;		/* arrays; -1 otherwise */
	jlong tag;		/* its tag in the analysis' environment (walks) */
	struct wobj *w;		/* the walk's buffer when this is the object it is at */
};

struct lval {
	uint8_t k;
	union {
		bool b;
		int64_t i;
		double f;
		const char *s;
		struct lobj *o;
		uint32_t idx;	/* CLASS, LOADER (0 = bootstrap), THREAD */
		struct llist *l;
		struct lstruct *st;
		struct lclosure *fn;
		struct linst *ent;
		int rk;
	} u;
};

/* A list; all objects of the heap when all is set (then v is NULL). */
struct llist {
	uint32_t n;
	bool all;
	struct lval *v;
};

struct lstruct {
	int n;
	const char **names;
	struct lval *vals;
};

struct lframe {
	struct lframe *up;
	int n, cap;
	const char **names;
	struct lval *vals;
};

struct lclosure {
	struct node *lam;
	struct lframe *env;
};

/* A set type's instance. */
struct linst {
	struct lval name;
	int nprops;
	const char **prop_names;
	struct lval *props;
	uint64_t members;
	uint32_t id;		/* 1-based */
};

/* An instance field or static field of a class. */
struct lfield {
	const char *name;
	char type;		/* JNI signature letter: Z B C S I J F D L [ */
	bool is_static;
	jfieldID id;
	uint32_t decl;		/* declaring class index */
	uint32_t jvmti_index;	/* the index heap walks report it under */
};

struct lclass {
	jclass ref;		/* local reference, valid for the request */
	char *name;		/* Java name: java.lang.String, byte[], a.B$C[] */
	char *sig;		/* JNI signature */
	uint32_t super;		/* class index, or LQ_NONE */
	uint32_t loader;	/* loader index, 0 = bootstrap */
	char elem;		/* arrays: the element's signature letter; 0 otherwise */
	bool interface;
	uint64_t id;		/* the class object's address, 0 unknown */
	uint32_t mirror_size;	/* model size of the class object */
	/* fields, read on first use */
	bool fields_read;
	uint32_t inst_size;	/* model size of an instance (VisualVM's rule) */
	uint32_t jvm_size;	/* an instance's size as the JVM gives it (GetObjectSize, a walk's
				 * callback), once one was met; 0: not yet */
	uint32_t nfields;	/* every instance field, own class first */
	struct lfield *fields;
	uint32_t nstatics;
	struct lfield *statics;
	uint32_t nindex;	/* jvmti indexes 0..nindex-1 */
	struct lfield **by_index;	/* instance fields by jvmti index (NULL: not one) */
	/* analysis state */
	uint32_t owner;		/* instance id that holds its class object, 0 none */
	uint32_t pend;		/* step 3: the instance it joins at the step's end */
	uint8_t flags;		/* LC_* */
};
#define LC_ROOT 1		/* its class object is a GC root (explore walk) */
#define LC_SEED 2		/* its class object is a member before growth */
#define LC_INCLUDE 4		/* included by growth: on_inclusion after the walk */

struct lloader {
	jobject ref;		/* NULL for the bootstrap loader */
	uint64_t id;		/* address, 0 for bootstrap */
	char *name;
	jlong tag;		/* its entry once an analysis tagged it */
};

/* Tagged objects of the analysis: seeds, sentinels, arrays with their length. */
struct lentry {
	uint32_t inst;		/* instance id that holds it, 0 none */
	uint32_t pend;		/* step 3: the instance it joins at the step's end */
	int32_t length;		/* arrays: length, else -1 */
	uint8_t flags;		/* LE_* */
};
#define LE_SEED 1		/* a member before growth (step 2 or 3) */
#define LE_SENTINEL 2		/* a growth walk's sentinel: inst is the instance that follows */
#define LE_ROOT 4		/* a GC root (explore walk) */
#define LE_ARRAY 8		/* length is an array's length */
#define LE_SELF 16		/* the agent's own object (its thread, a walk's array) */
#define LE_PRIM 32		/* a primitive type's class object (int.class) */
#define LE_GROWN 64		/* joined a set type in the growth walk under way (heapif_agent.c):
				 * its on_inclusion once the walk has visited it */

/* Tags of the analysis' environment. */
#define LQ_TAG_CLASS ((jlong)1 << 62)	/* | class index + 1 */
#define LQ_TAG_ENTRY ((jlong)1 << 61)	/* | entry index + 1 */

/* One slot of a walk object's buffer: a field as the walk reported it. */
struct wslot {
	uint32_t gen;
	bool ref;
	jvalue v;		/* primitives */
	uint32_t cls;		/* references: the referee's class index */
	int32_t length;
	jlong tag;
};

/* What a walk reports of the object it is at. */
struct wobj {
	uint32_t gen;		/* slots with another gen are not there */
	struct wslot *slots;	/* by jvmti index */
	uint32_t nslots;
	const char *text;	/* a String's text, NULL until reported */
	bool has_refs;		/* FollowReferences: reference fields are reported */
	bool complete;		/* every callback of the object has come */
	bool provisional;	/* read missing references as null for now */
	char *textbuf;		/* text's memory, reused from object to object (malloc) */
	size_t textcap;
};
/*
 * lq_note_size: a heap walk met an object of class_tag (its tag tag) of
 * size bytes (JVMTI's, the JVM's own): the class's jvm_size, if not yet
 * known (instances only; class objects keep the model's size).
 */
void lq_note_size(struct lq *q, jlong class_tag, jlong tag, jlong size);

/* lq_wtext: a String's text as a walk reports it, into w's own buffer. */
void lq_wtext(struct lq *q, struct wobj *w, const jchar *s, size_t n);

#define LQ_MAX_FRAMES 1000	/* lambdas calling lambdas */

struct lq {
	jvmtiEnv *jv;		/* the analysis' own environment */
	JNIEnv *jni;
	int fd;			/* the connection: polled for CANCEL */
	uint64_t deadline_ms;	/* ag_now_ms */
	uint64_t mem_limit, mem_used;
	struct lq_block *blocks;
	struct lq_block *kept;	/* lq_persist's memory: never released before the end */
	jmp_buf *fail;
	enum lq_status status;
	char msg[512];
	int line, col;
	bool earlier;
	int stmt;
	uint64_t steps;
	bool in_walk;		/* inside JVMTI callbacks: no JNI */
	bool order_free;	/* on_inclusion of growth: no float sums into properties */
	bool gc_done;
	/* classes */
	struct lclass *cls;
	uint32_t ncls;
	uint32_t c_class, c_string, c_object, c_thread;	/* indexes, LQ_NONE if absent */
	int oop_size, header_size;
	struct lloader *loaders;	/* [0] bootstrap */
	uint32_t nloaders;
	jobject *threads;	/* the program's threads (not the agent's) */
	jlong *thread_tags;	/* their entries once an analysis tagged them */
	uint32_t nthreads;
	jobject self_thread;
	/* tagged objects */
	struct lentry *ent;
	uint32_t nent, capent;
	/* program */
	struct prog prog;
	struct lbind *globals;
	struct lstmt_set *sets;
	/* evaluation context */
	int calls;
	struct linst *cur;	/* whose properties names refer to */
	bool in_trav;
	struct lval this_v, referrer, entity;
	int rk;
	struct linst **insts;	/* the running analysis' instances */
	int ninst;
	/* statistics, for END */
	uint64_t walks, pause_ms, objects_seen, gc_ms;
	struct lval allobjects;	/* the list `objects` */
};

/*
 * The evaluation context a failure unwinds through: saved before a
 * setjmp that catches failures and goes on, put back when it catches one.
 */
struct lq_ctx {
	int calls;
	struct linst *cur;
	struct lval this_v, referrer, entity;
	int rk;
	bool in_trav;
};
#define LQ_SAVE(q, c) ((c).calls = (q)->calls, (c).cur = (q)->cur, (c).this_v = (q)->this_v, \
		       (c).referrer = (q)->referrer, (c).entity = (q)->entity, (c).rk = (q)->rk, \
		       (c).in_trav = (q)->in_trav)
#define LQ_RESTORE(q, c) ((q)->calls = (c).calls, (q)->cur = (c).cur, (q)->this_v = (c).this_v, \
			  (q)->referrer = (c).referrer, (q)->entity = (c).entity, (q)->rk = (c).rk, \
			  (q)->in_trav = (c).in_trav)

/*
 * Catching failures where lq_raise must not unwind further (a heap-walk
 * callback: JVMTI is below it). LQ_TRY(q, g) saves the context and sets g
 * as the handler; the block after it runs when an lq_raise came back to it,
 * and must begin with LQ_CAUGHT(q, g), which puts the context and the outer
 * handler back. LQ_END(q, g) puts the outer handler back when nothing failed.
 *
 *	struct lq_guard g;
 *	LQ_TRY(q, g) {
 *		LQ_CAUGHT(q, g);
 *		walk_fail(w);
 *		return JVMTI_VISIT_ABORT;
 *	}
 *	... what may raise ...
 *	LQ_END(q, g);
 */
struct lq_guard {
	struct lq_ctx lc;
	jmp_buf jb, *outer;
};
#define LQ_TRY(q, g) LQ_SAVE((q), (g).lc); (g).outer = (q)->fail; (q)->fail = &(g).jb; \
	if (setjmp((g).jb))
#define LQ_CAUGHT(q, g) ((q)->fail = (g).outer, LQ_RESTORE((q), (g).lc))
#define LQ_END(q, g) ((q)->fail = (g).outer)

/*
 * A failure caught inside a heap walk, kept until the walk has returned:
 * lq_failure_keep copies q's status, message and place into f;
 * lq_failure_raise raises it again in q (it does not return).
 */
struct lq_failure {
	enum lq_status status;
	char msg[512];
	int line, col;
	bool earlier;
};
void lq_failure_keep(const struct lq *q, struct lq_failure *f);
void lq_failure_raise(struct lq *q, const struct lq_failure *f) __attribute__((noreturn));

/*
 * Arena marks: what an evaluation allocates after lq_mark is given back by
 * lq_release, so that a walk over millions of objects, or a list member
 * over a long list, runs in memory bounded by what one step needs. A value
 * that outlives the step is copied out first (lq_keep_value: into memory
 * allocated before the mark, after the release).
 */
struct lq_mark {
	struct lq_block *b;
	size_t used;
	uint64_t mem;
};
void lq_mark(struct lq *q, struct lq_mark *m);
void lq_release(struct lq *q, const struct lq_mark *m);
/* lq_keep_value: v (made since m) copied to survive lq_release(m), which it does. */
struct lval lq_keep_value(struct lq *q, struct lval v, const struct lq_mark *m);
/* lq_alloc_keep, lq_strdup_keep: memory no mark releases (tables and caches). */
void *lq_alloc_keep(struct lq *q, size_t n);
char *lq_strdup_keep(struct lq *q, const char *s, size_t n);
/* lq_persist: v copied into memory no mark releases (a property's or an outer name's value). */
struct lval lq_persist(struct lq *q, struct lval v);

/* ---- lq.c: evaluation ---- */

/* lq_raise: fail the request with status st (longjmp to the innermost lq_try). */
void lq_raise(struct lq *q, enum lq_status st, const struct node *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5), noreturn));
/* lq_alloc: zeroed memory from the request's arena; LQ_LIMIT when the bound is reached. */
void *lq_alloc(struct lq *q, size_t n);
char *lq_strdup(struct lq *q, const char *s, size_t n);
/* lq_poll: every few thousand steps, the time limit and CANCEL. */
void lq_poll(struct lq *q, const struct node *at);

struct lval lq_eval(struct lq *q, struct lframe *f, struct node *n);
struct lval lq_apply(struct lq *q, const struct node *at, struct lval fn, int nargs,
		     const struct lval *args);
bool lq_truth(struct lq *q, const struct node *at, struct lval v, const char *what);
int lq_compare(struct lq *q, const struct node *at, struct lval a, struct lval b);
const char *lq_utf16(struct lq *q, const jchar *s, size_t n);
const char *lq_kind_name(int k);
const uint8_t *lq_class_set(struct lq *q, struct node *at, const char *name);
/* lq_list_member: list member r (builtins.h; NULL: none of n->name, an error) of l. */
struct lval lq_list_member(struct lq *q, struct node *n, const struct bi_row *r,
			   struct llist *l, int nargs, struct lval *args);
struct lval lq_typed(struct lq *q, int line, int col, const char *name, const char *type,
		     struct lval v);
struct stmt *lq_set_type(struct lq *q, const char *name);
const char *lq_value_text(struct lq *q, struct lval v);
void lq_free_arena(struct lq *q);
/* lq_run: every statement of the program; results appended to out (analyze.c's encoder). */
void lq_run(struct lq *q, void (*emit)(void *ctx, int stmt, int kind, struct lval v,
				       const char *name), void *ctx);

/* ---- lqheap.c: the JVM's classes, objects and heap walks ---- */

bool lq_classes(struct lq *q);	/* the class table; false with q->msg on failure */
void lq_class_fields(struct lq *q, uint32_t c);
struct lfield *lq_field(struct lq *q, uint32_t c, const char *name);	/* nearest declaration */
bool lq_is_subclass(struct lq *q, uint32_t c, uint32_t sup);
uint64_t lq_shallow(struct lq *q, const struct lobj *o);
uint64_t lq_address(jobject ref);	/* the object's address, 0 unknown */
uint32_t lq_class_of_ref(struct lq *q, jobject ref);	/* class index by its tag */
struct lobj *lq_obj_of_ref(struct lq *q, jobject ref);	/* a new JNI object value */
const char *lq_text(struct lq *q, const struct lobj *o);	/* a String's text, or NULL */
struct lval lq_field_value(struct lq *q, const struct node *at, const struct lobj *o,
			   const struct lfield *f);
struct lval lq_static_value(struct lq *q, const struct node *at, uint32_t c,
			    const struct lfield *f);
/*
 * lq_field_jvalue, lq_static_jvalue: instance field f of obj, static field
 * f of class c, as JNI reads them (a reference: a new local reference, or
 * NULL). LQ_UNSUPPORTED during a heap walk; LQ_ERROR when the JVM throws.
 */
jvalue lq_field_jvalue(struct lq *q, const struct node *at, jobject obj, const struct lfield *f);
jvalue lq_static_jvalue(struct lq *q, const struct node *at, uint32_t c, const struct lfield *f);
/* lq_prepare_classes: the fields of every class in bits (NULL: all), read before a walk. */
void lq_prepare_classes(struct lq *q, const uint8_t *bits);
/*
 * lq_tagged_refs: the objects tagged want[0..n) (GetObjectsWithTags), as
 * local references into out[0..n), NULL for a tag no object holds now.
 * LQ_LIMIT when the JVM's lookup would take more than about half a second:
 * n times the tagged objects (entries and classes) over LQ_TAGGED_WORK_MAX.
 */
#define LQ_TAGGED_WORK_MAX (1ull << 29)
void lq_tagged_refs(struct lq *q, const struct node *at, const jlong *want, uint32_t n,
		    jobject *out);
/*
 * lq_tag_primitive_classes: int.class and the others (the boxes' TYPE),
 * objects without a class of their own, tagged with entries LE_PRIM.
 */
void lq_tag_primitive_classes(struct lq *q);
void lq_gc(struct lq *q);	/* once per request: a full GC, so the heap holds live objects */
void lq_loaders(struct lq *q);
void lq_threads(struct lq *q);
char *lq_thread_name(struct lq *q, uint32_t t);
uint32_t lq_loader_of_ref(struct lq *q, jobject loader);	/* 0 for NULL */
jlong lq_new_entry(struct lq *q, uint32_t inst, int32_t length, uint8_t flags);
struct lentry *lq_entry(struct lq *q, jlong tag);	/* NULL if tag is not an entry */

/*
 * lq_objects: apply the list member r (a row of builtins.h: filter, exists,
 * count, first, map, sum, min, max, foreach, sort_by, top, contains,
 * group_by, length) to every object of the heap, in address order (docs/dsl.md's
 * `objects`), after a full GC. By one IterateThroughHeap when fn can be
 * evaluated from what it reports; by JNI over the instances of the class
 * fn's leading `it is C` names otherwise. Returns the member's value.
 */
struct lval lq_objects(struct lq *q, struct node *at, const struct bi_row *r, int nargs,
		       struct lval *args);
/*
 * lq_heap_list: the heap's list r (a global row of builtins.h: objects,
 * classes, classloaders, threads); `objects` is a list marked all, which the
 * list members hand to lq_objects.
 */
struct lval lq_heap_list(struct lq *q, const struct node *at, const struct bi_row *r);
/* lq_instances: the instances of class c (not subclasses), as JNI objects. */
struct lval lq_instances(struct lq *q, const struct node *at, uint32_t c);
/*
 * lq_stream: every object of the heap that lambda fn accepts, in address
 * order, handed to each as the heap iteration meets it (a walk object:
 * each runs during the iteration, without JNI). also: an expression
 * (on_inclusion) whose THIS.f reads count as fields to wait for.
 */
void lq_stream(struct lq *q, struct node *at, struct lval fn, struct node *also,
	       void (*each)(void *ctx, struct lval x), void *ctx);
/* lq_class_count: instances and shallow bytes of class c (not subclasses). */
void lq_class_count(struct lq *q, uint32_t c, uint64_t *count, uint64_t *bytes);

/* ---- lqset.c: set types (docs/dsl.md steps 2-4 in the JVM) ---- */
struct lval lq_run_instances(struct lq *q, struct stmt *set, struct stmt *inst);

#endif
