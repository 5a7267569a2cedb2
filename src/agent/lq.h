/*
 * lq.h - the state of one ANALYZE request inside the JVM (docs/agent.md,
 * "Analyses inside the JVM"), which the agent's heap view
 * (heapif_agent.h) reads the JVM through; the query language's evaluator
 * (src/dsl/eval*.c) runs the request's program over that view (analyze.c).
 *
 * One struct lq serves one request: it owns a JVMTI environment of its
 * own (its tags go when it is disposed, so nothing is left in the JVM:
 * classes are tagged LQ_TAG_CLASS, other objects the analysis met with an
 * entry, LQ_TAG_ENTRY), a bounded arena (lq.c), the classes of the JVM as a
 * table with their fields and model sizes, its loaders and threads
 * (lqheap.c), and the request's limits (time, memory).
 *
 * Errors unwind with longjmp (lq_raise) to the innermost guard (LQ_TRY)
 * or to the request's handler in analyze.c; a heap walk's callbacks catch
 * them before returning to the VM (never longjmp across the VM).
 *
 * Ownership: everything the functions return lives in the request's arena
 * (freed with it, or at an lq_release) unless said otherwise; JNI local
 * references go with the request's local frame.
 */
#ifndef HS_LQ_H
#define HS_LQ_H

#include <jvmti.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "../dsl/ast.h"
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

struct lq;

/*
 * An object, as lq_shallow, lq_text and lq_instances see it. ref: a JNI
 * local reference, or NULL (what a heap walk reports). A class object has
 * cls = the index of java.lang.Class and mirror = the index of the class it
 * stands for, + 1.
 */
struct lobj {
	jobject ref;
	uint32_t cls;
	uint32_t mirror;
	int32_t length;		/* arrays; -1 otherwise */
	jlong tag;		/* lq_instances: its entry's tag; 0 otherwise */
};

/* An instance field or static field of a class. */
struct lfield {
	const char *name;
	char type;		/* JNI signature letter: Z B C S I J F D L [ */
	bool is_static;
	jfieldID id;
	uint32_t jvmti_index;	/* the index heap walks report it under */
};

struct lclass {
	jclass ref;		/* local reference, valid for the request */
	char *name;		/* Java name: java.lang.String, byte[], a.B$C[] */
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
	/* set types (hva_settype.c) */
	uint32_t owner;		/* instance id that holds its class object, 0 none */
	uint8_t flags;		/* LC_* */
};
#define LC_SEED 2		/* its class object is a member before growth */
#define LC_INCLUDE 4		/* included by growth: on_inclusion after the walk */

struct lloader {
	jobject ref;		/* NULL for the bootstrap loader */
	uint64_t id;		/* address, 0 for bootstrap */
};

/* Tagged objects of the analysis: the view's handles, seeds, sentinels, its own. */
struct lentry {
	uint32_t inst;		/* instance id that holds it, 0 none */
	int32_t length;		/* arrays: length, else -1 */
	uint8_t flags;		/* LE_* */
};
#define LE_SEED 1		/* a member before growth (step 2 or 3) */
#define LE_SENTINEL 2		/* a growth walk's sentinel: inst is the instance that follows */
#define LE_ARRAY 8		/* length is an array's length */
#define LE_SELF 16		/* the agent's own object (its thread, a walk's array) */
#define LE_PRIM 32		/* a primitive type's class object (int.class) */
#define LE_GROWN 64		/* joined a set type in the growth walk under way (hva_settype.c):
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

struct lq {
	jvmtiEnv *jv;		/* the analysis' own environment */
	JNIEnv *jni;
	uint64_t deadline_ms;	/* ag_now_ms */
	volatile sig_atomic_t *interrupted;	/* set on CANCEL (the request's watch), or NULL */
	uint64_t mem_limit, mem_used;
	struct lq_block *blocks;
	struct lq_block *kept;	/* lq_alloc_keep's memory: never released before the end */
	jmp_buf *fail;
	enum lq_status status;
	char msg[512];
	int line, col;		/* where in the program, for END */
	int stmt;		/* the statement under way, for END */
	bool in_walk;		/* inside JVMTI callbacks: no JNI */
	bool gc_done;
	/* classes */
	struct lclass *cls;
	uint32_t ncls;
	uint32_t c_class, c_string, c_object, c_thread;	/* indexes, LQ_NONE if absent */
	int oop_size, header_size;
	struct lloader *loaders;	/* [0] bootstrap */
	uint32_t nloaders;
	jobject *threads;	/* the program's threads (not the agent's) */
	uint32_t nthreads;
	jobject self_thread;
	/* tagged objects */
	struct lentry *ent;	/* malloc'd (lq_new_entry), freed at the request's end */
	uint32_t nent, capent;
	/* the request's program */
	struct prog prog;
	/* statistics, for END */
	uint64_t walks, pause_ms, objects_seen, gc_ms;
};

/*
 * Catching failures where lq_raise must not unwind further (a heap-walk
 * callback: JVMTI is below it; an operation of the heap view). LQ_TRY(q, g)
 * sets g as the handler; the block after it runs when an lq_raise came back
 * to it, and must begin with LQ_CAUGHT(q, g), which puts the outer handler
 * back (q->status and q->msg say what failed). LQ_END(q, g) puts the outer
 * handler back when nothing failed.
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
	jmp_buf jb, *outer;
};
#define LQ_TRY(q, g) (g).outer = (q)->fail; (q)->fail = &(g).jb; \
	if (setjmp((g).jb))
#define LQ_CAUGHT(q, g) ((q)->fail = (g).outer)
#define LQ_END(q, g) ((q)->fail = (g).outer)

/*
 * Arena marks: what is allocated after lq_mark is given back by
 * lq_release, so that an operation's scratch (a walk's buffers, a String's
 * text) does not stay for the rest of the request.
 */
struct lq_mark {
	struct lq_block *b;
	size_t used;
};
void lq_mark(struct lq *q, struct lq_mark *m);
void lq_release(struct lq *q, const struct lq_mark *m);
/* lq_alloc_keep, lq_strdup_keep: memory no mark releases (tables and caches). */
void *lq_alloc_keep(struct lq *q, size_t n);
char *lq_strdup_keep(struct lq *q, const char *s, size_t n);

/* ---- lq.c: failures and memory ---- */

/*
 * lq_raise: fail the request with status st and message fmt (longjmp to
 * the innermost guard); at: where in the program (its line and col go to
 * END), or NULL.
 */
void lq_raise(struct lq *q, enum lq_status st, const struct node *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5), noreturn));
/* lq_alloc: zeroed memory from the request's arena; LQ_LIMIT when the bound is reached. */
void *lq_alloc(struct lq *q, size_t n);
/* lq_free_arena: every block of the arena, kept ones too (the request's end). */
void lq_free_arena(struct lq *q);

/* ---- lqheap.c: the JVM's classes, objects and tags ---- */

bool lq_classes(struct lq *q);	/* the class table; false with q->msg on failure */
void lq_class_fields(struct lq *q, uint32_t c);
struct lfield *lq_field(struct lq *q, uint32_t c, const char *name);	/* nearest declaration */
bool lq_is_subclass(struct lq *q, uint32_t c, uint32_t sup);
uint64_t lq_shallow(struct lq *q, const struct lobj *o);
uint64_t lq_address(jobject ref);	/* the object's address, 0 unknown */
uint32_t lq_class_of_ref(struct lq *q, jobject ref);	/* class index by its tag */
const char *lq_text(struct lq *q, const struct lobj *o);	/* a String's text, or NULL */
/*
 * lq_field_jvalue, lq_static_jvalue: instance field f of obj, static field
 * f of class c, as JNI reads them (a reference: a new local reference, or
 * NULL). LQ_UNSUPPORTED during a heap walk; LQ_ERROR when the JVM throws.
 */
jvalue lq_field_jvalue(struct lq *q, const struct node *at, jobject obj, const struct lfield *f);
jvalue lq_static_jvalue(struct lq *q, const struct node *at, uint32_t c, const struct lfield *f);
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
void lq_threads(struct lq *q);	/* q->threads, once: every thread but the agent's */
char *lq_thread_name(struct lq *q, uint32_t t);	/* thread t's name field's text, or NULL */
jlong lq_new_entry(struct lq *q, uint32_t inst, int32_t length, uint8_t flags);
struct lentry *lq_entry(struct lq *q, jlong tag);	/* NULL if tag is not an entry */
/*
 * lq_instances: the instances of class c (not subclasses) in address
 * order, after the request's GC, by one IterateThroughHeap that gives each
 * an entry (LE_ARRAY) if it has none; *n of them, with their local
 * references, entry tags and lengths (a class object: its mirror, no tag).
 * An object collected meanwhile is left out, and so is a java.lang.Class
 * of no class of the table (a dump has none). The array is the arena's.
 * Raises (lq_raise) LQ_LIMIT past the deadline or the memory bound,
 * LQ_CANCELLED once q->interrupted is set.
 */
struct lobj *lq_instances(struct lq *q, uint32_t c, uint32_t *n);

#endif
