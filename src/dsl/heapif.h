/*
 * heapif.h - the heap-access interface the query language's evaluator
 * (src/dsl/eval*.c) reads a heap through: a heap view (struct hv), a
 * table of operations (struct hv_ops) that a backend fills, and the
 * inline functions hv_* the evaluator calls (issue 36, "One evaluator").
 *
 * Two backends:
 *   the dump backend (heapif_dump.[ch], prefix hvd_): the heap model of a
 *     dump or a snapshot (src/heap/heap.h), with the dominator tree and the
 *     dynamic-size engine of struct dsl_engine behind `retained` and
 *     `dynamic_size`. Its hot operations are called inline (v->dump set),
 *     the others through its table hvd_ops; it can also run every operation
 *     through the table (a view with v->dump NULL), as another backend does.
 *   the agent backend, inside the JVM (JNI, JVMTI): src/agent/heapif_agent.c
 *     and hva_settype.c (set types); the "Agent:" line of each operation
 *     below says what it calls. There `objects` is walked by callback
 *     (objects_each), a set type's owners and growth are asked of the
 *     backend, and every callback is guarded (eval_guarded) unless
 *     v->unwinds; tests/fuzz/walker.h is such a backend over a dump, for
 *     test_heapif and fuzz_query.
 *
 * HANDLES. An object, a class and a thread are uint32_t handles (what
 * struct value's V_OBJ, V_CLASS, V_THREAD and V_LOADER hold); HV_NONE is
 * none (the bootstrap loader, a null reference, a class without its
 * object). A class loader is the handle of its object.
 *   Dump: an object handle is the object's index in the heap model,
 *     0..nobjects-1 in increasing id order, every one an object (dense);
 *     a class handle is the class index (heap.classes), a thread handle the
 *     index into heap.threads. All stay valid as long as the heap.
 *   Agent: an object handle is an index into the request's table of
 *     objects it has met (its tag's entry), each a JNI local reference
 *     (freed with the request's frame, PushLocalFrame/PopLocalFrame) with
 *     its class index and array length; a class handle is the
 *     index into the request's class table (lq_classes: every loaded class,
 *     tagged LQ_TAG_CLASS | index + 1), a thread handle the index into
 *     GetAllThreads' list less the agent's own. Not dense: handles are
 *     handed out as objects are met, so nobjects is 0 and dense false.
 *   One handle per object: two object handles are equal exactly when they
 *     are the same object, so that the evaluator compares objects by handle
 *     (the agent finds a met object's handle by its tag).
 *   Transient handles: inside a JVMTI heap-walk callback
 *     (IterateThroughHeap, FollowReferences) no JNI call is allowed, so the
 *     object the walk is at has no JNI reference: its handle is transient
 *     (the bit HV_TRANSIENT set, the rest the walk's slot), and reads what
 *     the walk reported of it (class, size, array length, primitive fields,
 *     a String's text, the class and tag of what its reference fields
 *     hold). It is valid until the callback returns. hv_keep makes a kept
 *     handle of it: the agent backend tags the object (SetTag with a new
 *     entry, as lq_new_entry does) and, once the walk has returned, turns
 *     the tags into JNI references (GetObjectsWithTags) and the entries
 *     into handles of the table; until then the kept handle reads as the
 *     tag's entry. The evaluator calls hv_keep on a handle it stores
 *     beyond the callback (eval_keep: what a list member's step keeps of an
 *     object objects_each handed it); the dump backend's inline calls have
 *     none, and hv_keep is then the identity (inline, no call). A backend
 *     whose objects are not dense (v->dense false) hands out transient
 *     handles only to objects_each's callback, and an object that has a kept
 *     handle already gets that one there, not a transient one.
 *
 * FAILURES ("cannot answer here"). An operation marked "may fail" either
 * answers, or sets the view's sticky failure (v->fail, with v->why saying
 * what) and returns a neutral value (0, NULL with *count 0, HV_NONE, a
 * value of type HV_T_NONE); the caller looks at v->fail (hv_failed) before
 * it uses what it read since, and clears it (hv_clear). The failures:
 *   HV_CANNOT       this backend cannot answer this here (referrers or a
 *                   retained size inside the JVM, a reference field of an
 *                   object a heap walk is at). The evaluator ends the
 *                   snippet with a runtime error of its own kind
 *                   (dsl_cannot_here, eval.h), which a session takes as
 *                   "run it on a snapshot instead".
 *   HV_ERROR        a runtime error of the query; why is its whole message
 *                   ("retained sizes are not available ...").
 *   HV_INTERRUPTED  Ctrl-C (or a request's CANCEL) during a long operation.
 * Operations not marked "may fail" always answer, on every backend.
 *
 * OWNERSHIP. A view and what it hands out (names, arrays of handles) are
 * the backend's and live as long as the view, unless said otherwise
 * (hv_text and hv_thread_name return malloc'd strings the caller frees;
 * hv_find_classes a malloc'd array). No operation keeps a pointer the
 * caller passed beyond the call.
 *
 * UNITS. Sizes are bytes (shallow sizes by docs/heap-model.md's rules, on
 * both backends, so that a size inside the JVM is the size a dump shows).
 * Counts are numbers of objects.
 */
#ifndef HS_HEAPIF_H
#define HS_HEAPIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../heap/heap.h"

#define HV_NONE UINT32_MAX
#define HV_TRANSIENT 0x80000000u	/* an agent handle valid during one walk callback */

/* What an object is (the values of enum heap_kind, so the dump converts for free). */
enum hv_obj_kind {
	HV_INSTANCE = HEAP_INSTANCE,
	HV_OBJ_ARRAY = HEAP_OBJ_ARRAY,
	HV_PRIM_ARRAY = HEAP_PRIM_ARRAY,
	HV_CLASS_OBJECT = HEAP_CLASS	/* the object of a class (java.lang.Class) */
};

/* A field's, a static's or an array element's value. */
enum hv_type { HV_T_NONE, HV_T_OBJECT, HV_T_BOOLEAN, HV_T_CHAR, HV_T_INT, HV_T_FLOAT };
struct hv_value {
	uint8_t type;		/* enum hv_type; HV_T_NONE: no such value */
	union {
		uint32_t obj;	/* HV_T_OBJECT: handle, HV_NONE = null (or not in the heap) */
		int64_t i;	/* boolean, char (a UTF-16 unit), byte, short, int, long */
		double d;	/* float, double */
	} v;
};

/* Where the instances of a class hold a field (hv_field_locate): the backend's two numbers. */
struct hv_slot {
	uint32_t off;		/* dump: byte offset in the instance data; agent: field table index */
	uint8_t type;		/* dump: HPROF basic type; agent: JNI signature letter; 0: none */
};

/* An outgoing reference, described (hv_refs_each): heap_ref's kinds. */
enum hv_ref_kind {
	HV_REF_FIELD = HEAP_REF_FIELD, HV_REF_ELEMENT = HEAP_REF_ELEMENT,
	HV_REF_STATIC = HEAP_REF_STATIC, HV_REF_SUPER = HEAP_REF_SUPER,
	HV_REF_LOADER = HEAP_REF_LOADER, HV_REF_SIGNERS = HEAP_REF_SIGNERS,
	HV_REF_DOMAIN = HEAP_REF_DOMAIN, HV_REF_CONSTANT = HEAP_REF_CONSTANT
};
struct hv_ref {
	enum hv_ref_kind kind;
	const char *name;	/* the field's name, or NULL */
	uint32_t target;	/* object handle */
};

/* What a class is (hv_class_info), read from its metadata. */
struct hv_class {
	const char *name;	/* Java name: java.lang.String, byte[], a.B$C[] */
	uint32_t super;		/* class handle, HV_NONE for java.lang.Object (or none known) */
	uint32_t loader;	/* object handle, HV_NONE = the bootstrap loader */
	uint32_t object;	/* its class object (java.lang.Class instance), or HV_NONE */
	uint64_t id;		/* the class object's id (HotSpot: its address), 0 unknown */
	uint32_t inst_size;	/* shallow size of one instance; 0 for arrays */
	bool array;		/* an array class */
	uint16_t nstatics;	/* its own static fields */
};

enum hv_fail { HV_OK = 0, HV_CANNOT, HV_ERROR, HV_INTERRUPTED };

/*
 * What hv_grow grows (a set type's step 4, docs/dsl.md): ninst instances in
 * turn; instance k's members before growth are seeds[starts[k]..starts[k+1]),
 * its owner id ids[k]. The arrays are the caller's. fields: offer or joined
 * may read a member's fields or a String's text; if not, a backend that walks
 * may leave them unreported (a read is then HV_CANNOT).
 */
struct hv_growth {
	const uint32_t *seeds, *starts, *ids;
	uint32_t ninst;
	bool fields;
	bool (*offer)(void *ctx, uint32_t k, uint32_t referrer, uint32_t target,
		      enum hv_ref_kind kind);
	void (*joined)(void *ctx, uint32_t k, uint32_t obj);
	void *ctx;
};

struct hv;

/*
 * The operations. v is the view; obj an object handle, c a class handle,
 * t a thread handle. Each line "Dump:" says what the dump backend reads,
 * "Agent:" what the agent's backend calls.
 */
struct hv_ops {
	/* ---- objects ---- */
	/* class_of: obj's class. Dump: heap.cls. Agent: GetTag of its class (GetObjectClass
	 * outside walks), the walk's class_tag inside. */
	uint32_t (*class_of)(struct hv *v, uint32_t obj);
	/* kind: what obj is. Dump: heap_kind. Agent: the class table (elem, c_class). */
	enum hv_obj_kind (*kind)(struct hv *v, uint32_t obj);
	/* shallow: obj's shallow size in bytes. Dump: heap_shallow. Agent: lq_shallow (the
	 * model's rules; GetObjectSize or the walk's size once per class). */
	uint64_t (*shallow)(struct hv *v, uint32_t obj);
	/* id: obj's id (HotSpot: address). May fail. Dump: heap_id. Agent: lq_address of its JNI
	 * reference; HV_CANNOT for a transient handle. */
	uint64_t (*id)(struct hv *v, uint32_t obj);
	/* field_locate: where instances of class c hold instance field name (the nearest
	 * declaration, superclasses searched), into *slot; false if none. Dump:
	 * heap_field_locate. Agent: lq_field (GetClassFields, GetFieldName, GetFieldModifiers). */
	bool (*field_locate)(struct hv *v, uint32_t c, const char *name, struct hv_slot *slot);
	/* field_at: obj's field at slot (obj's class or a subclass of the one located), type
	 * HV_T_NONE if obj is not an instance or has no such data. May fail. Dump: heap_field_at.
	 * Agent: Get<Type>Field; a transient handle: the walk's slot (HV_CANNOT for a reference
	 * field IterateThroughHeap does not report, or one not reported yet). */
	struct hv_value (*field_at)(struct hv *v, uint32_t obj, struct hv_slot slot);
	/* field_names: every instance field's name of obj, its own class first (for messages).
	 * Dump: heap_fields_each. Agent: the class table's fields. */
	void (*field_names)(struct hv *v, uint32_t obj, void (*fn)(void *ctx, const char *name),
			    void *ctx);
	/* array_length: elements of array obj (0 otherwise). Dump: heap_array_length. Agent:
	 * GetArrayLength, or the walk's length. */
	uint32_t (*array_length)(struct hv *v, uint32_t obj);
	/* array_elem: element k < array_length of array obj. May fail. Dump: heap_array_elem.
	 * Agent: GetObjectArrayElement, Get<Type>ArrayRegion; HV_CANNOT in a walk. */
	struct hv_value (*array_elem)(struct hv *v, uint32_t obj, uint32_t k);
	/* text: the text of java.lang.String obj as UTF-8 (malloc'd, the caller frees), at most
	 * max_chars characters (0: all) with "..." when cut; NULL if not a String. May fail.
	 * Dump: heap_string. Agent: GetStringRegion, or the walk's string primitive callback. */
	char *(*text)(struct hv *v, uint32_t obj, size_t max_chars);
	/* refs_out: the objects obj references, *count of them, in the order of refs_each
	 * (valid as long as the view). May fail. Dump: heap_out. Agent: FollowReferences from
	 * obj (initial_object, a callback that visits no further), into the request's arena. */
	const uint32_t *(*refs_out)(struct hv *v, uint32_t obj, uint32_t *count);
	/* refs_in: the objects that reference obj, as refs_out. May fail. Dump: heap_in.
	 * Agent: HV_CANNOT (the whole graph is needed). */
	const uint32_t *(*refs_in)(struct hv *v, uint32_t obj, uint32_t *count);
	/* refs_each: obj's outgoing references described, in refs_out's order, until fn returns
	 * false. May fail. Dump: heap_refs. Agent: FollowReferences from obj, the reference kind
	 * and field index of jvmtiHeapReferenceInfo. */
	void (*refs_each)(struct hv *v, uint32_t obj, bool (*fn)(void *ctx, const struct hv_ref *r),
			  void *ctx);
	/* heap_name: the name of the heap obj is in (Android: app, zygote, image), or NULL.
	 * Dump: heap_android_heap. Agent: NULL. */
	const char *(*heap_name)(struct hv *v, uint32_t obj);
	/* retained: obj's retained size in bytes. May fail (HV_ERROR: no dominator tree).
	 * Dump: dom_retained over dsl_engine.dom. Agent: HV_CANNOT. */
	uint64_t (*retained)(struct hv *v, uint32_t obj);
	/* dynamic_size: obj's dynamic size in bytes (estimate: the engine's estimate where it
	 * has no exact one). May fail. Dump: dyn_comp, dyn_exact over dsl_engine.dyn.
	 * Agent: HV_CANNOT. */
	uint64_t (*dynamic_size)(struct hv *v, uint32_t obj, bool estimate);

	/* objects_each: every object of the heap, in increasing id (address) order, handed to fn
	 * until fn returns false; classes: NULL for all, else bits by class handle (only instances
	 * of classes whose bit is set). On a backend that walks, the handle fn gets may be
	 * transient (HANDLES); fn must not unwind (no longjmp past the backend: a JVMTI callback
	 * may be below it) unless v->unwinds. May fail. Dump: handles 0..nobjects-1. Agent:
	 * IterateThroughHeap (a heap filter of class tags), the walk's slot as a transient
	 * handle, its tag's entry if it has one. */
	void (*objects_each)(struct hv *v, const uint8_t *classes,
			     bool (*fn)(void *ctx, uint32_t obj), void *ctx);
	/* objects_visit: every object once (classes: NULL, or only instances of classes whose bit
	 * is set), in the backend's order (not id order), handed to fn once the walk has reported
	 * all of it: its primitive fields, a String's text, and its reference fields, whose
	 * objects read as far as a reference reports them (their class, owner, size and length,
	 * not their own fields); handles as objects_each's, and hv_keep works on each. For what
	 * needs an object's references but no order (a set type's step 3). May fail. Dump:
	 * objects_each. Agent: FollowReferences from the GC roots, every reference
	 * followed, each object of the classes tagged when the walk reaches it (a set type's step
	 * 3), so that it can be kept once all of it has come. */
	void (*objects_visit)(struct hv *v, const uint8_t *classes,
			      bool (*fn)(void *ctx, uint32_t obj), void *ctx);

	/* ---- classes ---- */
	/* class_info: what class c is, into *out. Dump: heap.classes. Agent: the class table
	 * (GetClassSignature, GetClassLoader, GetSuperclass, IsArrayClass). */
	void (*class_info)(struct hv *v, uint32_t c, struct hv_class *out);
	/* class_name: class c's Java name (hot: a key of group_by). Dump: heap.classes.name. */
	const char *(*class_name)(struct hv *v, uint32_t c);
	/* class_of_object: the class whose class object obj is, or HV_NONE. Dump:
	 * heap_class_of_object. Agent: the LQ_TAG_CLASS tag. */
	uint32_t (*class_of_object)(struct hv *v, uint32_t obj);
	/* class_totals: class c's instances (not subclasses') and their shallow bytes. May fail.
	 * Dump: heap_class.count, .shallow. Agent: one IterateThroughHeap counting every class
	 * at its first call; HV_CANNOT in a walk. */
	void (*class_totals)(struct hv *v, uint32_t c, uint64_t *count, uint64_t *bytes);
	/* instances: class c's instances (not subclasses'), ascending handles, valid as long as
	 * the view. May fail. Dump: heap_instances. Agent: IterateThroughHeap(klass = c)
	 * tagging each, then GetObjectsWithTags (lq_instances); HV_CANNOT in a walk. */
	const uint32_t *(*instances)(struct hv *v, uint32_t c, uint32_t *count);
	/* is_subclass: whether c is sup or inherits from it. Dump: heap_is_subclass. Agent:
	 * the class table's supers (lq_is_subclass). */
	bool (*is_subclass)(struct hv *v, uint32_t c, uint32_t sup);
	/* find_classes: classes whose name matches pattern (heap_find_classes' rules: exact,
	 * '*' wildcards, a simple or nested name), into *out (malloc'd, the caller frees);
	 * the count. Dump: heap_find_classes. Agent: the same rules over the class table. */
	uint32_t (*find_classes)(struct hv *v, const char *pattern, uint32_t **out);
	/* class_by_name: the first class with exactly this Java name, or HV_NONE. Dump:
	 * heap_class_by_name. Agent: the class table. */
	uint32_t (*class_by_name)(struct hv *v, const char *name);
	/* static_value: class c's own static field name into *out; false if none. May fail.
	 * Dump: heap_static. Agent: GetStatic<Type>Field; HV_CANNOT in a walk. */
	bool (*static_value)(struct hv *v, uint32_t c, const char *name, struct hv_value *out);
	/* static_names: class c's own static fields' names (for messages). Dump:
	 * heap_class.statics. Agent: the class table's statics. */
	void (*static_names)(struct hv *v, uint32_t c, void (*fn)(void *ctx, const char *name),
			     void *ctx);

	/* ---- threads and GC roots ---- */
	/* thread_object: thread t's java.lang.Thread object, or HV_NONE. Agent: GetAllThreads'. */
	uint32_t (*thread_object)(struct hv *v, uint32_t t);
	/* thread_name: thread t's name (malloc'd, the caller frees), or NULL. May fail. Dump:
	 * heap_thread_name. Agent: its name field's text (lq_thread_name); HV_CANNOT in a walk. */
	char *(*thread_name)(struct hv *v, uint32_t t);
	/* thread_frames: thread t's stack depth. Dump: heap_thread.nframes. Agent:
	 * GetFrameCount. */
	uint32_t (*thread_frames)(struct hv *v, uint32_t t);
	/* roots_each: every GC root's object, in the model's order, duplicates kept; thread
	 * (HV_NONE: all) keeps those thread t holds (frames, locals, JNI), not its Thread object.
	 * May fail. Dump: heap.roots. Agent: FollowReferences' root callbacks (kinds
	 * JVMTI_HEAP_REFERENCE_STACK_LOCAL, JNI_LOCAL, ... with the thread's tag);
	 * HV_CANNOT in a walk. */
	void (*roots_each)(struct hv *v, uint32_t thread, void (*fn)(void *ctx, uint32_t obj),
			   void *ctx);

	/* ---- set types (docs/dsl.md "Set types: semantics") ---- */
	/* owners: on: start an analysis' owner map, every object in no instance (may fail:
	 * HV_ERROR, no memory for it); off: forget it. Dump: a uint32 per object (big.h).
	 * Agent: the analysis' entries (kept objects) and class table. */
	void (*owners)(struct hv *v, bool on);
	/* owner: the instance (its 1-based id) obj was included in, 0 none. set_owner: obj
	 * joins instance id. May fail (set_owner: no memory). Agent: the object's entry (a
	 * transient handle is kept for it), a class object's class. */
	uint32_t (*owner)(struct hv *v, uint32_t obj);
	void (*set_owner)(struct hv *v, uint32_t obj, uint32_t id);
	/* grow: step 4 (struct hv_growth): instance after instance, from its members
	 * before growth, depth first, each reference a heap walk reports (HotSpot's
	 * FollowReferences: instance fields but the two reflection fields it hides, object
	 * array elements, a class object's superclass (not java.lang.Object), loader, signers,
	 * protection domain and declared statics; nothing from primitive arrays,
	 * java.lang.Class instances that are not classes, array classes) from a member of
	 * instance k to a target with no owner is offered: offer(ctx, k, referrer, target, kind)
	 * returns whether target joins k (it may read of target only what a reference
	 * reports: its class, size, array length); the backend makes ids[k] its owner and,
	 * once everything the walk reports of target has come (its fields, a String's text),
	 * calls joined(ctx, k, target) (on_inclusion, once per object that joined), and its
	 * references are offered in turn. The order is the backend's (depth first from each
	 * seed; the dump calls joined right after the offer, a JVMTI walk when it reaches the
	 * object). A backend that keeps no owner for what joined (the agent) may offer it
	 * again in the same call, as an object with no owner; what offer answers for it
	 * then changes nothing. After grow, what joined may read as having no owner there.
	 * offer and joined must not unwind unless v->unwinds; handles may be transient. May
	 * fail. Dump: the model's references in that order, an owner for each. Agent: one
	 * FollowReferences from an array of every instance's seeds, the first instance's on
	 * top of the walk's stack: each instance's growth is done before the next one's seeds
	 * are reached, and an object reached once is not visited again, so what joins needs
	 * no tag (millions of tags in one walk cost seconds). */
	void (*grow)(struct hv *v, const struct hv_growth *g);

	/* ---- handles ---- */
	/* keep: a handle that outlives the walk callback of transient handle obj (see
	 * HANDLES). May fail (HV_ERROR: out of the request's memory). Dump: the identity. */
	uint32_t (*keep)(struct hv *v, uint32_t obj);
};

/* A heap view: what the evaluator holds of a heap. The backend fills it. */
struct hv {
	const struct hv_ops *ops;	/* every operation */
	const struct heap *dump;	/* the dump backend's heap for the inline calls, or NULL */
	void *self;			/* the backend's own state */
	uint32_t nobjects;		/* dense: handles 0..nobjects-1 are every object; else 0 */
	bool dense;			/* the evaluator may index arrays by object handle */
	uint32_t nclasses;		/* class handles 0..nclasses-1 */
	uint32_t nthreads;		/* thread handles 0..nthreads-1 */
	uint32_t class_class;		/* java.lang.Class's class handle, or HV_NONE */
	uint32_t *owner_map;		/* a backend's owners (hv_owner) as an array by handle, or NULL */
	bool unwinds;			/* a callback may longjmp through the backend (the dump's:
					 * its walks hold nothing that would be lost) */
	enum hv_fail fail;		/* sticky: the first failure since hv_clear */
	char why[256];			/* what failed (HV_ERROR: the whole message) */
};

/*
 * HV_DUMP(v): the dump backend's heap for the inline calls below, or NULL.
 * A build that links no dump backend (the agent's: -DHV_NO_DUMP) makes it
 * NULL at compile time, so every call goes through v->ops and nothing
 * refers to src/heap's functions.
 */
#ifdef HV_NO_DUMP
#define HV_DUMP(v) ((const struct heap *)0)
#else
#define HV_DUMP(v) ((v)->dump)
#endif

/* hv_failed: whether an operation failed since the last hv_clear. hv_clear: forget it. */
static inline bool hv_failed(const struct hv *v)
{
	return v->fail != HV_OK;
}
static inline void hv_clear(struct hv *v)
{
	v->fail = HV_OK;
	v->why[0] = 0;
}
/*
 * hv_set_fail: for backends: fail f with the printf-style why (the first
 * failure is kept).
 */
void hv_set_fail(struct hv *v, enum hv_fail f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* hvd_value: a dump's field value as the interface's (inline: field reads are hot). */
static inline struct hv_value hvd_value(const struct heap *h, struct heap_value hv)
{
	struct hv_value r = {HV_T_NONE, {0}};
	switch (hv.type) {
	case 0: break;
	case HPROF_OBJECT:
		r.type = HV_T_OBJECT;
		r.v.obj = hv.v.id ? heap_index(h, hv.v.id) : HV_NONE;
		break;
	case HPROF_BOOLEAN: r.type = HV_T_BOOLEAN; r.v.i = hv.v.i; break;
	case HPROF_CHAR: r.type = HV_T_CHAR; r.v.i = hv.v.i; break;
	case HPROF_FLOAT: case HPROF_DOUBLE: r.type = HV_T_FLOAT; r.v.d = hv.v.d; break;
	default: r.type = HV_T_INT; r.v.i = hv.v.i; break;
	}
	return r;
}

/*
 * The calls. The dump backend's hot ones (what objects.filter, group_by
 * and sum do per object) are inline when v->dump is set; every other call
 * goes through v->ops.
 */
static inline uint32_t hv_class_of(struct hv *v, uint32_t obj)
{
	return HV_DUMP(v) ? v->dump->cls[obj] : v->ops->class_of(v, obj);
}
static inline enum hv_obj_kind hv_kind(struct hv *v, uint32_t obj)
{
	return HV_DUMP(v) ? (enum hv_obj_kind)heap_kind(v->dump, obj) : v->ops->kind(v, obj);
}
static inline uint64_t hv_shallow(struct hv *v, uint32_t obj)
{
	return HV_DUMP(v) ? heap_shallow(v->dump, obj) : v->ops->shallow(v, obj);
}
static inline uint64_t hv_id(struct hv *v, uint32_t obj)
{
	return HV_DUMP(v) ? heap_id(v->dump, obj) : v->ops->id(v, obj);
}
static inline bool hv_field_locate(struct hv *v, uint32_t c, const char *name,
				   struct hv_slot *slot)
{
	return v->ops->field_locate(v, c, name, slot);
}
static inline struct hv_value hv_field_at(struct hv *v, uint32_t obj, struct hv_slot slot)
{
	if (HV_DUMP(v))
		return hvd_value(v->dump, heap_field_at(v->dump, obj, slot.off, slot.type));
	return v->ops->field_at(v, obj, slot);
}
static inline void hv_field_names(struct hv *v, uint32_t obj,
				  void (*fn)(void *ctx, const char *name), void *ctx)
{
	v->ops->field_names(v, obj, fn, ctx);
}
static inline uint32_t hv_array_length(struct hv *v, uint32_t obj)
{
	return v->ops->array_length(v, obj);
}
static inline struct hv_value hv_array_elem(struct hv *v, uint32_t obj, uint32_t k)
{
	return v->ops->array_elem(v, obj, k);
}
static inline char *hv_text(struct hv *v, uint32_t obj, size_t max_chars)
{
	return v->ops->text(v, obj, max_chars);
}
static inline const uint32_t *hv_refs_out(struct hv *v, uint32_t obj, uint32_t *count)
{
	return HV_DUMP(v) ? heap_out(v->dump, obj, count) : v->ops->refs_out(v, obj, count);
}
static inline const uint32_t *hv_refs_in(struct hv *v, uint32_t obj, uint32_t *count)
{
	return v->ops->refs_in(v, obj, count);
}
static inline void hv_refs_each(struct hv *v, uint32_t obj,
				bool (*fn)(void *ctx, const struct hv_ref *r), void *ctx)
{
	v->ops->refs_each(v, obj, fn, ctx);
}
static inline const char *hv_heap_name(struct hv *v, uint32_t obj)
{
	return v->ops->heap_name(v, obj);
}
static inline uint64_t hv_retained(struct hv *v, uint32_t obj)
{
	return v->ops->retained(v, obj);
}
static inline uint64_t hv_dynamic_size(struct hv *v, uint32_t obj, bool estimate)
{
	return v->ops->dynamic_size(v, obj, estimate);
}
static inline void hv_objects_each(struct hv *v, const uint8_t *classes,
				   bool (*fn)(void *ctx, uint32_t obj), void *ctx)
{
	v->ops->objects_each(v, classes, fn, ctx);
}
static inline void hv_objects_visit(struct hv *v, const uint8_t *classes,
				    bool (*fn)(void *ctx, uint32_t obj), void *ctx)
{
	v->ops->objects_visit(v, classes, fn, ctx);
}
static inline void hv_class_info(struct hv *v, uint32_t c, struct hv_class *out)
{
	v->ops->class_info(v, c, out);
}
static inline const char *hv_class_name(struct hv *v, uint32_t c)
{
	return HV_DUMP(v) ? v->dump->classes[c].name : v->ops->class_name(v, c);
}
static inline uint32_t hv_class_of_object(struct hv *v, uint32_t obj)
{
	return v->ops->class_of_object(v, obj);
}
static inline void hv_class_totals(struct hv *v, uint32_t c, uint64_t *count, uint64_t *bytes)
{
	v->ops->class_totals(v, c, count, bytes);
}
static inline const uint32_t *hv_instances(struct hv *v, uint32_t c, uint32_t *count)
{
	return HV_DUMP(v) ? heap_instances(v->dump, c, count) : v->ops->instances(v, c, count);
}
static inline bool hv_is_subclass(struct hv *v, uint32_t c, uint32_t sup)
{
	return v->ops->is_subclass(v, c, sup);
}
static inline uint32_t hv_find_classes(struct hv *v, const char *pattern, uint32_t **out)
{
	return v->ops->find_classes(v, pattern, out);
}
static inline uint32_t hv_class_by_name(struct hv *v, const char *name)
{
	return v->ops->class_by_name(v, name);
}
static inline bool hv_static_value(struct hv *v, uint32_t c, const char *name,
				   struct hv_value *out)
{
	return v->ops->static_value(v, c, name, out);
}
static inline void hv_static_names(struct hv *v, uint32_t c,
				   void (*fn)(void *ctx, const char *name), void *ctx)
{
	v->ops->static_names(v, c, fn, ctx);
}
static inline uint32_t hv_thread_object(struct hv *v, uint32_t t)
{
	return v->ops->thread_object(v, t);
}
static inline char *hv_thread_name(struct hv *v, uint32_t t)
{
	return v->ops->thread_name(v, t);
}
static inline uint32_t hv_thread_frames(struct hv *v, uint32_t t)
{
	return v->ops->thread_frames(v, t);
}
static inline void hv_roots_each(struct hv *v, uint32_t thread,
				 void (*fn)(void *ctx, uint32_t obj), void *ctx)
{
	v->ops->roots_each(v, thread, fn, ctx);
}
static inline void hv_owners(struct hv *v, bool on)
{
	v->ops->owners(v, on);
}
static inline uint32_t hv_owner(struct hv *v, uint32_t obj)
{
	return v->owner_map ? v->owner_map[obj] : v->ops->owner(v, obj);
}
static inline void hv_set_owner(struct hv *v, uint32_t obj, uint32_t id)
{
	v->ops->set_owner(v, obj, id);
}
static inline void hv_grow(struct hv *v, const struct hv_growth *g)
{
	v->ops->grow(v, g);
}
static inline uint32_t hv_keep(struct hv *v, uint32_t obj)
{
	return HV_DUMP(v) ? obj : v->ops->keep(v, obj);
}

#endif
