/*
 * instrument.c - exact allocation recordings by bytecode instrumentation
 * (docs/agent.md, "Allocation recordings"; the default of `:alloc start
 * --interval exact`).
 *
 * Seeds 001, 002 and 004 all count allocations by rewriting the program's
 * bytecode, which costs far less than an event per allocation: here the
 * transformer (src/agent/java/heapsh/agent/Instrument.java, built on ASM,
 * Debian's libasm-java) runs inside the JVM from this file's JVMTI
 * ClassFileLoadHook, for every class loaded while the recording runs and,
 * through RetransformClasses, for every class loaded before. Instrumented
 * allocation sites call Rt.record (a native method of this file, bound to
 * src/agent/java/heapsh/agent/Rt.java, which lives in the bootstrap class
 * loader so that every class can call it) with the new object, the site's
 * number and the memory account; methods of accounted classes keep a
 * per-thread account stack in Rt (seed 001's current account).
 *
 * Per allocation, record() finds the key of (site, account) from the site's
 * own small table (no lock once made), adds the object to the key's atomic
 * counters, and follows the object with a JNI weak global reference kept in
 * a table of the allocating thread's own. A thread sweeps its table of the
 * references the GC has cleared when it fills up after a GC (amortised: the
 * table doubles when less than half goes). A read (ALLOC_READ, MARK) runs a
 * full GC, then stops the recording threads at the door (freeze(): every
 * thread's table is then the reader's alone) and counts the references
 * still alive per key: exact live counts with no per-object JVMTI tag (the
 * tag table costs 0.4-1.4 us per object on JDK 17 and 25, a weak reference
 * about 0.1 us; docs/performance.md).
 *
 * With --depth above 1 each allocation also walks the stack for its calling
 * context (ag_rec_stack_key), like the JVMTI mechanism. Sites in the classes
 * Rt's account stack itself runs (ThreadLocal's) call Rt.recordWalking,
 * which finds the account by walking the stack.
 *
 * Stopping (halt) retransforms the instrumented classes back to their own
 * bytecode; Rt stays defined (a class of the bootstrap loader cannot be
 * unloaded) but does nothing, and a later recording defines nothing again.
 * The transformer's class loader is let go when the recording is discarded.
 *
 * What is not counted (docs/agent.md): objects the VM allocates itself
 * (exceptions it throws, class mirrors, constant-pool strings, stack
 * traces), objects made inside native methods (JNI), objects in the code of
 * classes JVMTI cannot modify (hidden classes: lambdas' own, method handles'
 * lambda forms) or that failed to transform, objects whose constructor
 * throws, and allocations of methods that were already running when the
 * recording started, until they return.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"

/* The class files built into the agent (classes.c, made by src/agent/java/embed.py). */
extern const unsigned char ag_classes[];
extern const unsigned long ag_classes_len;

/* Site kinds, as Instrument.java numbers them. */
enum { S_NEW, S_ARRAY, S_MULTI, S_DYNAMIC, S_DYNAMIC_MULTI, S_CLONE_VIRTUAL, S_CLONE_SPECIAL, S_KINDS };

#define RT_NAME "heapsh/agent/Rt"
#define MAX_MULTI 255		/* dimensions of an array made by multianewarray */
#define RETRANSFORM_BATCH 100
#define MAX_OWN 12
/* A JNINativeMethod; JNI's fields are not const but are never written. */
#define NATIVE(name, sig, fn) {(char *)(name), (char *)(sig), (void *)(fn)}


/* Element kinds of arrays, for their sizes (layout()). */
enum { E_NONE = -1, E_BOOLEAN, E_BYTE, E_CHAR, E_SHORT, E_INT, E_FLOAT, E_LONG, E_DOUBLE, E_REF, E_KINDS };

/* One class seen at a dynamic site (clone, reflection), with its keys. */
struct dyn {
	struct dyn *next;	/* all of the site's, newest first */
	jweak klass;
	int32_t hash;		/* the class's identity hash */
	uint32_t cls;
	int8_t elem;		/* arrays: the element kind; E_NONE: not an array */
	bool counts;		/* clone: the call ran Object.clone, so it is counted here */
	int64_t size;		/* not an array: bytes of an instance */
	_Atomic uint32_t key[];	/* per account (R.npat + 1), NONE until made */
};

/* A dynamic site's classes by identity hash (open addressing; replaced whole when it grows). */
struct dtab {
	uint32_t mask, n;
	struct dtab *retired;	/* the table this one replaced, freed with the site */
	_Atomic(struct dyn *) slot[];
};

struct site {
	uint32_t method, node, cls;	/* cls NONE: the object's class (dynamic sites) */
	int32_t line;
	uint8_t kind;
	int8_t elem;		/* cls is an array class of this element kind; E_NONE: not one */
	_Atomic int64_t size;	/* S_NEW: bytes of an instance once known, else 0 */
	_Atomic(struct dyn *) dyn;
	_Atomic(struct dtab *) tab;
	_Atomic uint32_t *key;	/* per account (R.npat + 1), NONE until made */
};

/* A recorded object followed until it dies. */
struct entry {
	jweak obj;		/* NULL: found dead and released */
	uint32_t key;
	uint32_t words;		/* size in 8-byte words */
};

/*
 * A thread's table of recorded objects. Its owner writes it only between
 * busy = 1 and busy = 0; a reader that has frozen the recording (freeze())
 * owns every table.
 */
struct tstate {
	_Atomic int busy;
	struct tstate *next;	/* the registry, newest first; never unlinked while recording */
	_Atomic int dead;	/* the thread has ended */
	struct entry *e;
	uint32_t n, cap;
	uint64_t gc_seen;	/* GCs counted at the last sweep */
	uint32_t live_after;	/* entries left by the last sweep */
};

static struct {
	jclass rt;		/* global; defined once for the JVM's life */
	jmethodID own[MAX_OWN];	/* Rt's methods: frames of the agent's own */
	int nown;
	jobject rt_module;	/* global */
	jobject loader;		/* the transformer's class loader (global), NULL: none */
	jclass instrument;	/* Instrument (global) */
	jmethodID transform;
	bool pending;		/* begun at start-up: the Java side waits for VMInit */
	atomic_int transforming;	/* the class-file hook rewrites classes */
	atomic_int hooks;	/* class-file hooks running */
	uint32_t gen;		/* the recording's generation, 1..127 */
	struct site *sites[MAX_SITE_CHUNKS];
	_Atomic uint32_t nsites;
	_Atomic uint64_t instrumented, failed;
	_Atomic uint64_t hook_ms;	/* time in the class-file hook (HEAPSH_AGENT_DEBUG only) */
	char **names;		/* classes instrumented (internal names), restored at halt */
	uint32_t nnames, capnames;
	char **later;		/* classes loaded inside the transformer, instrumented afterwards */
	uint32_t nlater, caplater;
	jobject *modules;	/* named modules made to read Rt's (global refs) */
	uint32_t nmodules;
	_Atomic(struct tstate *) threads;
	pthread_mutex_t dyn_lock;	/* adding to dynamic sites' tables (no JNI or JVMTI call held) */
	jclass system;		/* java.lang.System (global), for identity hashes */
	jclass object_array;	/* Object[] (global): arrays that may hold arrays */
	jmethodID identity_hash;
	int64_t base[E_KINDS], scale[E_KINDS], align;	/* array layout; align 0: unknown */
	atomic_int freeze;
	pthread_mutex_t freeze_mu;
	_Atomic uint64_t gcs;
	pthread_key_t tkey;
	bool tkey_made;
} B = {.freeze_mu = PTHREAD_MUTEX_INITIALIZER, .dyn_lock = PTHREAD_MUTEX_INITIALIZER};

static __thread struct tstate *me;
static __thread int in_hook;	/* the transformer runs on this thread: what it allocates is the agent's */

static bool debug(void)
{
	static int d = -1;
	if (d < 0)
		d = getenv("HEAPSH_AGENT_DEBUG") != NULL;
	return d;
}

static void dealloc(void *p)
{
	if (p && R.env)
		(*R.env)->Deallocate(R.env, p);
}

static void clear_exception(JNIEnv *jni, const char *what)
{
	if ((*jni)->ExceptionCheck(jni)) {
		if (debug()) {
			ag_log("exception in %s:", what);
			(*jni)->ExceptionDescribe(jni);
		}
		(*jni)->ExceptionClear(jni);
	}
}

/* dropped: an allocation not recorded (the tables are full, or JVMTI could not say what it is). */
static void dropped(int line)
{
	if (atomic_fetch_add(&R.dropped, 1) < 10 && debug())
		ag_log("an allocation not recorded (instrument.c:%d)", line);
}

static struct site *site_of(jint id)
{
	uint32_t u = (uint32_t)id, i = u & ((1u << SITE_BITS) - 1);
	if (u >> SITE_BITS != B.gen || i >= atomic_load_explicit(&B.nsites, memory_order_acquire))
		return NULL;
	return &B.sites[i / SITE_CHUNK][i % SITE_CHUNK];
}

/* ---- the threads' tables of recorded objects ---- */

static void thread_ended(void *p)
{
	struct tstate *t = p;
	if (t)
		atomic_store(&t->dead, 1);
}

/* tstate: this thread's table, made and registered on first use; NULL when out of memory. */
static struct tstate *tstate(void)
{
	if (me)
		return me;
	struct tstate *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->gc_seen = atomic_load(&B.gcs);
	struct tstate *head = atomic_load(&B.threads);
	do
		t->next = head;
	while (!atomic_compare_exchange_weak(&B.threads, &head, t));
	me = t;
	if (B.tkey_made)
		pthread_setspecific(B.tkey, t);
	return t;
}

/*
 * enter: this thread may now touch its table and the recording (busy);
 * waits while a reader has the recording frozen. NULL: no table.
 */
static struct tstate *enter(void)
{
	struct tstate *t = tstate();
	if (!t)
		return NULL;
	for (;;) {
		atomic_store(&t->busy, 1);
		if (!atomic_load(&B.freeze))
			return t;
		atomic_store(&t->busy, 0);
		pthread_mutex_lock(&B.freeze_mu);
		pthread_mutex_unlock(&B.freeze_mu);
	}
}

static void leave(struct tstate *t)
{
	atomic_store_explicit(&t->busy, 0, memory_order_release);
}

/* freeze: wait until no thread is busy, and keep them out until thaw. */
static void freeze(void)
{
	pthread_mutex_lock(&B.freeze_mu);
	atomic_store(&B.freeze, 1);
	for (struct tstate *t = atomic_load(&B.threads); t; t = t->next)
		while (atomic_load(&t->busy))
			sched_yield();
}

static void thaw(void)
{
	atomic_store(&B.freeze, 0);
	pthread_mutex_unlock(&B.freeze_mu);
}

/* sweep: release the references of t whose objects the GC has cleared, compacting the table. */
static void sweep(JNIEnv *jni, struct tstate *t)
{
	uint32_t j = 0;
	for (uint32_t i = 0; i < t->n; i++) {
		struct entry *x = &t->e[i];
		if (!x->obj)
			continue;
		if ((*jni)->IsSameObject(jni, x->obj, NULL)) {
			(*jni)->DeleteWeakGlobalRef(jni, x->obj);
			continue;
		}
		t->e[j++] = *x;
	}
	t->n = j;
	t->live_after = j;
	t->gc_seen = atomic_load(&B.gcs);
}

/* room: space for one more entry in t (sweeping after a GC, else growing); false: none. */
static bool room(JNIEnv *jni, struct tstate *t)
{
	if (t->n < t->cap)
		return true;
	if (t->gc_seen != atomic_load(&B.gcs) && t->n >= 2 * (uint64_t)t->live_after) {
		sweep(jni, t);
		if (t->n < t->cap / 2 + 1 && t->n < t->cap)
			return true;
	}
	uint32_t cap = t->cap ? t->cap * 2 : 1024;
	if (cap <= t->cap || !ag_rec_room((size_t)(cap - t->cap) * sizeof *t->e))
		return t->n < t->cap;
	struct entry *e = realloc(t->e, (size_t)cap * sizeof *e);
	if (!e) {
		R.bytes -= (size_t)(cap - t->cap) * sizeof *t->e;
		return t->n < t->cap;
	}
	t->e = e;
	t->cap = cap;
	return true;
}

/* track: follow obj (of key, size bytes) until it dies. */
static void track(JNIEnv *jni, struct tstate *t, jobject obj, uint32_t key, jlong size)
{
	if (!room(jni, t)) {
		atomic_fetch_add(&R.untracked, 1);
		return;
	}
	jweak w = (*jni)->NewWeakGlobalRef(jni, obj);
	if (!w) {
		clear_exception(jni, "NewWeakGlobalRef");
		atomic_fetch_add(&R.untracked, 1);
		return;
	}
	uint64_t words = (uint64_t)size / 8;
	t->e[t->n++] = (struct entry){w, key, words > UINT32_MAX ? UINT32_MAX : (uint32_t)words};
}

/*
 * unlink_ended: free the states of ended threads with empty tables; frozen.
 * A new thread may push itself on the list meanwhile (tstate() comes before
 * the door), so the first state is taken off only by compare-and-swap.
 */
static void unlink_ended(void)
{
	struct tstate *head = atomic_load(&B.threads), *prev = NULL;
	for (struct tstate *t = head, *nx; t; t = nx) {
		nx = t->next;
		bool gone = atomic_load(&t->dead) && !t->n;
		if (gone && !prev)
			gone = atomic_compare_exchange_strong(&B.threads, &head, nx);
		else if (gone)
			prev->next = nx;
		if (gone) {
			R.bytes -= (size_t)t->cap * sizeof *t->e;
			free(t->e);
			free(t);
		} else {
			prev = t;
		}
		if (!prev)
			head = atomic_load(&B.threads);
	}
}

/* release_all: every table emptied and freed, the ended threads' too; frozen. */
static void release_all(JNIEnv *jni)
{
	for (struct tstate *t = atomic_load(&B.threads); t; t = t->next) {
		for (uint32_t i = 0; i < t->n; i++)
			if (t->e[i].obj)
				(*jni)->DeleteWeakGlobalRef(jni, t->e[i].obj);
		R.bytes -= (size_t)t->cap * sizeof *t->e;
		free(t->e);
		t->e = NULL;
		t->n = t->cap = t->live_after = 0;
	}
	/* Ended threads' states go; a running thread keeps its own (me points to it). */
	unlink_ended();
}

/* ---- counting an allocation ---- */

/* elem_of: the element kind of arrays of class signature sig; E_NONE: not an array. */
static int elem_of(const char *sig)
{
	if (!sig || sig[0] != '[')
		return E_NONE;
	switch (sig[1]) {
	case 'Z': return E_BOOLEAN;
	case 'B': return E_BYTE;
	case 'C': return E_CHAR;
	case 'S': return E_SHORT;
	case 'I': return E_INT;
	case 'F': return E_FLOAT;
	case 'J': return E_LONG;
	case 'D': return E_DOUBLE;
	default: return E_REF;
	}
}

/*
 * layout: how big HotSpot makes arrays, learnt from GetObjectSize of arrays
 * of each element kind and of lengths 0 to 40 (the header, the element size
 * of references, the alignment depend on the VM's flags): size(n) =
 * align(base + n * scale). B.align stays 0 when no (base, scale) fits, and
 * every array's size is then asked of JVMTI.
 */
static void layout(JNIEnv *jni)
{
	if (B.align)
		return;
	enum { N = 41 };
	int64_t align = 0, base[E_KINDS], scale[E_KINDS];
	jclass obj = (*jni)->FindClass(jni, "java/lang/Object");
	for (int t = 0; t < E_KINDS; t++) {
		jlong size[N];
		for (int n = 0; n < N; n++) {
			jarray a = t == E_BOOLEAN ? (jarray)(*jni)->NewBooleanArray(jni, n)
				 : t == E_BYTE ? (jarray)(*jni)->NewByteArray(jni, n)
				 : t == E_CHAR ? (jarray)(*jni)->NewCharArray(jni, n)
				 : t == E_SHORT ? (jarray)(*jni)->NewShortArray(jni, n)
				 : t == E_INT ? (jarray)(*jni)->NewIntArray(jni, n)
				 : t == E_FLOAT ? (jarray)(*jni)->NewFloatArray(jni, n)
				 : t == E_LONG ? (jarray)(*jni)->NewLongArray(jni, n)
				 : t == E_DOUBLE ? (jarray)(*jni)->NewDoubleArray(jni, n)
				 : obj ? (jarray)(*jni)->NewObjectArray(jni, n, obj, NULL) : NULL;
			size[n] = 0;
			if (!a || (*R.env)->GetObjectSize(R.env, a, &size[n]) != JVMTI_ERROR_NONE)
				goto unknown;
			(*jni)->DeleteLocalRef(jni, a);
			if (n && size[n] > size[n - 1] && (!align || size[n] - size[n - 1] < align))
				align = size[n] - size[n - 1];
		}
		static const int64_t fixed[] = {1, 1, 2, 2, 4, 4, 8, 8, 0};
		base[t] = -1;
		for (int64_t sc = fixed[t] ? fixed[t] : 4; sc <= (fixed[t] ? fixed[t] : 8); sc *= 2)
			for (int64_t b = 8; b <= 32 && base[t] < 0; b++) {
				bool fits = align > 0;
				for (int n = 0; n < N && fits; n++)
					fits = (b + n * sc + align - 1) / align * align == size[n];
				if (fits) {
					base[t] = b;
					scale[t] = sc;
				}
			}
		if (base[t] < 0)
			goto unknown;
	}
	memcpy(B.base, base, sizeof base);
	memcpy(B.scale, scale, sizeof scale);
	B.align = align;
unknown:
	clear_exception(jni, "learning the array layout");
	if (obj)
		(*jni)->DeleteLocalRef(jni, obj);
}

/* array_size: the bytes of an array of elem kind and length len; 0: ask JVMTI. */
static jlong array_size(int elem, jint len)
{
	if (!B.align || elem < 0)
		return 0;
	return (B.base[elem] + (jlong)len * B.scale[elem] + B.align - 1) / B.align * B.align;
}

/* site_key: the key of (s, account), made on first use; NONE when full. */
static uint32_t site_key(struct site *s, _Atomic uint32_t *slot, uint32_t cls, uint32_t account)
{
	uint32_t k = atomic_load_explicit(slot, memory_order_acquire);
	if (k != NONE)
		return k;
	pthread_mutex_lock(&R.lock);
	k = ag_rec_key(s->node, cls, account);
	pthread_mutex_unlock(&R.lock);
	if (k != NONE)
		atomic_store_explicit(slot, k, memory_order_release);
	return k;
}

/* declares_clone: k declares clone()Ljava/lang/Object; itself (an override or its bridge). */
static bool declares_clone(jclass k)
{
	jint n = 0;
	jmethodID *ms = NULL;
	bool found = false;
	if ((*R.env)->GetClassMethods(R.env, k, &n, &ms) != JVMTI_ERROR_NONE)
		return false;
	for (jint i = 0; i < n && !found; i++) {
		char *name = NULL, *sig = NULL;
		if ((*R.env)->GetMethodName(R.env, ms[i], &name, &sig, NULL) == JVMTI_ERROR_NONE)
			found = name && sig && !strcmp(name, "clone") && !strcmp(sig, "()Ljava/lang/Object;");
		dealloc(name);
		dealloc(sig);
	}
	dealloc(ms);
	return found;
}

static bool class_named(jclass k, const char *sig)
{
	char *s = NULL;
	bool same = (*R.env)->GetClassSignature(R.env, k, &s, NULL) == JVMTI_ERROR_NONE && s &&
		    !strcmp(s, sig);
	dealloc(s);
	return same;
}

/*
 * clone_counts: whether a clone() call at site s that returned an object of
 * class k ran Object.clone (counted at the call), not an override (which
 * counts the object where it calls Object.clone itself). The method run is
 * the first declaration of clone() from k (a virtual call) or from the
 * caller's superclass (super.clone()) upwards.
 */
static bool clone_counts(JNIEnv *jni, struct site *s, jclass k, bool array)
{
	if (array)
		return true;	/* arrays' clone is Object.clone */
	jclass c = (*jni)->NewLocalRef(jni, k);
	if (s->kind == S_CLONE_SPECIAL) {
		pthread_mutex_lock(&R.lock);
		char *caller = strdup(R.methods[s->method].cls);
		pthread_mutex_unlock(&R.lock);
		while (c && caller && !class_named(c, caller)) {
			jclass up = (*jni)->GetSuperclass(jni, c);
			(*jni)->DeleteLocalRef(jni, c);
			c = up;
		}
		free(caller);
		if (!c)
			return true;	/* the caller is not a superclass: count it here */
		jclass up = (*jni)->GetSuperclass(jni, c);
		(*jni)->DeleteLocalRef(jni, c);
		c = up;
	}
	bool counts = true;
	while (c) {
		if (declares_clone(c)) {
			jclass up = (*jni)->GetSuperclass(jni, c);
			counts = up == NULL;	/* java.lang.Object declares it: that is Object.clone */
			if (up)
				(*jni)->DeleteLocalRef(jni, up);
			break;
		}
		jclass up = (*jni)->GetSuperclass(jni, c);
		(*jni)->DeleteLocalRef(jni, c);
		c = up;
	}
	if (c)
		(*jni)->DeleteLocalRef(jni, c);
	return counts;
}

/* dyn_find: the entry of class k (identity hash) at dynamic site s; NULL: not there yet. */
static struct dyn *dyn_find(JNIEnv *jni, struct site *s, jclass k, jint hash)
{
	struct dtab *t = atomic_load_explicit(&s->tab, memory_order_acquire);
	if (!t)
		return NULL;
	for (uint32_t i = (uint32_t)hash & t->mask;; i = (i + 1) & t->mask) {
		struct dyn *d = atomic_load_explicit(&t->slot[i], memory_order_acquire);
		if (!d)
			return NULL;
		if (d->hash == hash && (*jni)->IsSameObject(jni, d->klass, k))
			return d;
	}
}

/* dyn_insert: d into s's table (growing it); false when memory ran out. B.dyn_lock is held. */
static bool dyn_insert(struct site *s, struct dyn *d)
{
	struct dtab *t = atomic_load(&s->tab);
	if (!t || (t->n + 1) * 2 > t->mask + 1) {
		uint32_t cap = t ? (t->mask + 1) * 2 : 8;
		size_t size = sizeof *t + cap * sizeof t->slot[0];
		struct dtab *u = ag_rec_room(size) ? calloc(1, size) : NULL;
		if (!u)
			return false;
		u->mask = cap - 1;
		u->retired = t;
		for (uint32_t i = 0; t && i <= t->mask; i++) {
			struct dyn *x = atomic_load(&t->slot[i]);
			if (!x)
				continue;
			uint32_t j = (uint32_t)x->hash & u->mask;
			while (atomic_load(&u->slot[j]))
				j = (j + 1) & u->mask;
			atomic_store(&u->slot[j], x);
			u->n++;
		}
		atomic_store_explicit(&s->tab, u, memory_order_release);
		t = u;
	}
	uint32_t j = (uint32_t)d->hash & t->mask;
	while (atomic_load(&t->slot[j]))
		j = (j + 1) & t->mask;
	atomic_store_explicit(&t->slot[j], d, memory_order_release);
	t->n++;
	d->next = atomic_load(&s->dyn);
	atomic_store(&s->dyn, d);
	return true;
}

/* dyn_of: the entry of class k (identity hash) at dynamic site s, made when new; NULL when full. */
static struct dyn *dyn_of(JNIEnv *jni, struct site *s, jobject obj, jclass k, jint hash)
{
	struct dyn *d = dyn_find(jni, s, k, hash);
	if (d)
		return d;
	size_t size = sizeof *d + ((size_t)R.npat + 1) * sizeof d->key[0];
	bool array = false;
	uint32_t cls = ag_rec_class_of(R.env, k, &array);
	if (cls == NONE || !ag_rec_room(size) || !(d = malloc(size)))
		return NULL;
	pthread_mutex_lock(&R.lock);
	d->elem = (int8_t)(array ? elem_of(R.classes[cls]) : E_NONE);
	pthread_mutex_unlock(&R.lock);
	d->klass = (*jni)->NewWeakGlobalRef(jni, k);
	d->hash = hash;
	d->cls = cls;
	d->size = 0;
	if (!array && (*R.env)->GetObjectSize(R.env, obj, &d->size) != JVMTI_ERROR_NONE)
		d->size = 0;
	d->counts = s->kind == S_CLONE_VIRTUAL || s->kind == S_CLONE_SPECIAL
			    ? clone_counts(jni, s, k, array) : true;
	for (int a = 0; a <= R.npat; a++)
		atomic_init(&d->key[a], NONE);
	/* Two threads may add the same class at once: both entries count, under one key. */
	pthread_mutex_lock(&B.dyn_lock);
	bool ok = dyn_insert(s, d);
	pthread_mutex_unlock(&B.dyn_lock);
	if (!ok) {
		if (d->klass)
			(*jni)->DeleteWeakGlobalRef(jni, d->klass);
		free(d);
		return NULL;
	}
	return d;
}

static void count(JNIEnv *jni, struct tstate *t, jobject obj, struct site *s, uint32_t account,
		  bool walking, int depth, jclass k, jint hash);

/*
 * count_one: obj, of class cls (an array of elem kind, or E_NONE), allocated
 * at site s for account (NONE: found by walking the stack), counted under
 * its key and followed. slot: the key's cache, NULL when the calling context
 * decides the key (--depth above 1, or a walk). size: its bytes, 0 unknown.
 */
static void count_one(JNIEnv *jni, struct tstate *t, jobject obj, struct site *s, uint32_t cls,
		      int elem, uint32_t account, _Atomic uint32_t *slot, jlong size)
{
	uint32_t key = NONE;
	if (slot && account != NONE && R.depth == 1) {
		key = site_key(s, slot, cls, account);
	} else {
		int r = ag_rec_stack_key(R.env, jni, cls, account, B.own, B.nown, s->method, s->line,
					 &key);
		if (r > 0)
			return;	/* allocated by the agent's own code (Rt's thread-local slot) */
		if (r < 0)
			key = NONE;
	}
	if (key == NONE) {
		dropped(__LINE__);
		return;
	}
	jint len = elem >= 0 ? (*jni)->GetArrayLength(jni, (jarray)obj) : 0;
	if (elem >= 0)
		size = array_size(elem, len);
	if (!size && (*R.env)->GetObjectSize(R.env, obj, &size) != JVMTI_ERROR_NONE)
		size = 0;
	struct key *k = KEY(key);
	atomic_fetch_add_explicit(&k->n_objs, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&k->n_bytes, (uint64_t)size, memory_order_relaxed);
	if (len > 0)
		atomic_fetch_add_explicit(&k->n_elems, (uint64_t)len, memory_order_relaxed);
	track(jni, t, obj, key, size);
}

/* identity: the identity hash of object o (System.identityHashCode through JNI). */
static jint identity(JNIEnv *jni, jobject o)
{
	if (!B.system) {
		jclass c = (*jni)->FindClass(jni, "java/lang/System");
		B.identity_hash = c ? (*jni)->GetStaticMethodID(jni, c, "identityHashCode",
								"(Ljava/lang/Object;)I") : NULL;
		B.system = c && B.identity_hash ? (*jni)->NewGlobalRef(jni, c) : NULL;
		if (c)
			(*jni)->DeleteLocalRef(jni, c);
	}
	jint h = B.system ? (*jni)->CallStaticIntMethod(jni, B.system, B.identity_hash, o) : 0;
	clear_exception(jni, "identityHashCode");
	return h;
}

/* count_nested: the arrays inside a new multi-dimensional array (each a new array of its own). */
static void count_nested(JNIEnv *jni, struct tstate *t, jobject arr, struct site *s,
			 uint32_t account, bool walking, int depth)
{
	if (depth >= MAX_MULTI || !(*jni)->IsInstanceOf(jni, arr, B.object_array))
		return;
	jsize n = (*jni)->GetArrayLength(jni, (jarray)arr);
	jclass last = NULL;
	jint hash = 0;
	for (jsize i = 0; i < n; i++) {
		jobject el = (*jni)->GetObjectArrayElement(jni, (jobjectArray)arr, i);
		if (!el)
			continue;
		jclass k = (*jni)->GetObjectClass(jni, el);
		if (!last || !(*jni)->IsSameObject(jni, last, k)) {
			if (last)
				(*jni)->DeleteLocalRef(jni, last);
			last = (*jni)->NewLocalRef(jni, k);
			hash = identity(jni, k);
		}
		count(jni, t, el, s, account, walking, depth + 1, k, hash);
		(*jni)->DeleteLocalRef(jni, k);
		(*jni)->DeleteLocalRef(jni, el);
	}
	if (last)
		(*jni)->DeleteLocalRef(jni, last);
}

/*
 * count: obj allocated at site s, for account (NONE when walking finds it);
 * k and hash: its class and the class's identity hash, for a site whose
 * class is the object's (and the arrays inside a multi-dimensional one).
 */
static void count(JNIEnv *jni, struct tstate *t, jobject obj, struct site *s, uint32_t account,
		  bool walking, int depth, jclass k, jint hash)
{
	if (depth == 0 && s->kind <= S_MULTI) {
		jlong size = s->kind == S_NEW ? atomic_load_explicit(&s->size, memory_order_relaxed) : 0;
		if (s->kind == S_NEW && !size &&
		    (*R.env)->GetObjectSize(R.env, obj, &size) == JVMTI_ERROR_NONE)
			atomic_store_explicit(&s->size, size, memory_order_relaxed);
		count_one(jni, t, obj, s, s->cls, s->elem, account,
			  walking ? NULL : &s->key[account], size);
	} else {
		jclass own = NULL;
		if (!k) {
			k = own = (*jni)->GetObjectClass(jni, obj);
			hash = identity(jni, k);
		}
		struct dyn *d = k ? dyn_of(jni, s, obj, k, hash) : NULL;
		if (own)
			(*jni)->DeleteLocalRef(jni, own);
		if (!d) {
			dropped(__LINE__);
			return;
		}
		if (!d->counts)
			return;
		count_one(jni, t, obj, s, d->cls, d->elem, account,
			  walking ? NULL : &d->key[account], d->size);
	}
	if (s->kind == S_MULTI || s->kind == S_DYNAMIC_MULTI)
		count_nested(jni, t, obj, s, account, walking, depth);
}

/* record: the common part of Rt's natives. */
static void record(JNIEnv *jni, jobject obj, jint site, uint32_t account, bool walking, jclass k,
		   jint hash)
{
	if (!atomic_load_explicit(&R.on, memory_order_relaxed) || in_hook || ag_in_agent_thread || !obj)
		return;
	struct tstate *t = enter();
	if (!t) {
		dropped(__LINE__);
		return;
	}
	struct site *s = atomic_load(&R.on) ? site_of(site) : NULL;
	if (s)
		count(jni, t, obj, s, account, walking, 0, k, hash);
	leave(t);
}

/* account_arg: an account number from instrumented code (of an earlier recording: none). */
static uint32_t account_arg(jint account)
{
	return account < 0 || account > R.npat ? 0 : (uint32_t)account;
}

/* Rt.record(Object o, int site, int account): o was just allocated at site. */
static void JNICALL rt_record(JNIEnv *jni, jclass rt, jobject obj, jint site, jint account)
{
	(void)rt;
	record(jni, obj, site, account_arg(account), false, NULL, 0);
}

/* Rt.recordClass(Object o, int site, int account, Class c, int hash): the same, c = o's class. */
static void JNICALL rt_record_class(JNIEnv *jni, jclass rt, jobject obj, jint site, jint account,
				    jclass k, jint hash)
{
	(void)rt;
	record(jni, obj, site, account_arg(account), false, k, hash);
}

/* Rt.recordWalking(Object o, int site): the account found by walking the stack. */
static void JNICALL rt_record_walking(JNIEnv *jni, jclass rt, jobject obj, jint site)
{
	(void)rt;
	record(jni, obj, site, NONE, true, NULL, 0);
}

/* ---- what the transformer asks (Instrument's natives) ---- */

static char *utf(JNIEnv *jni, jstring s)
{
	if (!s)
		return NULL;
	const char *c = (*jni)->GetStringUTFChars(jni, s, NULL);
	char *d = c ? strdup(c) : NULL;
	if (c)
		(*jni)->ReleaseStringUTFChars(jni, s, c);
	return d;
}

/* Instrument.site(owner, method, desc, file, line, type, kind): a new site's number, -1 when full. */
static jint JNICALL in_site(JNIEnv *jni, jclass c, jstring owner, jstring method, jstring desc,
			    jstring file, jint line, jstring type, jint kind)
{
	(void)c;
	char *o = utf(jni, owner), *m = utf(jni, method), *d = utf(jni, desc), *f = utf(jni, file),
	     *ty = utf(jni, type), *sig = o ? malloc(strlen(o) + 3) : NULL;
	jint id = -1;
	if (!o || !m || !d || !sig || kind < 0 || kind >= S_KINDS || (kind <= S_MULTI && !ty))
		goto out;
	sprintf(sig, "L%s;", o);
	size_t keys = ((size_t)R.npat + 1) * sizeof(uint32_t);
	pthread_mutex_lock(&R.lock);
	uint32_t i = atomic_load(&B.nsites), ch = i / SITE_CHUNK;
	if (!atomic_load(&B.transforming) || ch >= MAX_SITE_CHUNKS)
		goto unlock;
	if (!B.sites[ch]) {
		if (!ag_rec_room((size_t)SITE_CHUNK * sizeof(struct site)))
			goto unlock;
		B.sites[ch] = calloc(SITE_CHUNK, sizeof(struct site));
		if (!B.sites[ch]) {
			R.bytes -= (size_t)SITE_CHUNK * sizeof(struct site);
			goto unlock;
		}
	}
	struct site *s = &B.sites[ch][i % SITE_CHUNK];
	uint32_t mi = ag_rec_method_named(sig, m, d, f);
	uint32_t node = mi == NONE ? NONE : ag_rec_node(NONE, mi, line < 0 ? -1 : line);
	uint32_t cls = ty ? ag_rec_class(ty) : NONE;
	_Atomic uint32_t *k = ag_rec_room(keys) ? malloc(keys) : NULL;
	if (node == NONE || (ty && cls == NONE) || !k) {
		if (k)
			R.bytes -= keys;
		free(k);
		goto unlock;
	}
	for (int a = 0; a <= R.npat; a++)
		atomic_init(&k[a], NONE);
	s->method = mi;
	s->node = node;
	s->cls = cls;
	s->line = line < 0 ? -1 : line;
	s->kind = (uint8_t)kind;
	s->elem = (int8_t)(kind <= S_MULTI ? elem_of(ty) : E_NONE);
	atomic_init(&s->size, 0);
	atomic_init(&s->dyn, NULL);
	atomic_init(&s->tab, NULL);
	s->key = k;
	atomic_store_explicit(&B.nsites, i + 1, memory_order_release);
	id = (jint)(B.gen << SITE_BITS | i);
unlock:
	pthread_mutex_unlock(&R.lock);
out:
	free(o);
	free(m);
	free(d);
	free(f);
	free(ty);
	free(sig);
	return id;
}

/* Instrument.account(owner): the account of the class's package, 0: none. */
static jint JNICALL in_account(JNIEnv *jni, jclass c, jstring owner)
{
	(void)c;
	char *o = utf(jni, owner), *sig = o ? malloc(strlen(o) + 3) : NULL;
	jint a = 0;
	if (sig) {
		sprintf(sig, "L%s;", o);
		a = (jint)ag_rec_account_of(sig);
	}
	free(o);
	free(sig);
	return a;
}

/* Instrument.failed(owner, why): a class left as it was. */
static void JNICALL in_failed(JNIEnv *jni, jclass c, jstring owner, jstring why)
{
	(void)c;
	atomic_fetch_add(&B.failed, 1);
	if (debug()) {
		char *o = utf(jni, owner), *w = utf(jni, why);
		ag_log("not instrumented: %s: %s", o ? o : "?", w ? w : "?");
		free(o);
		free(w);
	}
}

/* ---- the class-file hook ---- */

/* add_name: a copy of name appended to *list (locking); false when out of memory. */
static bool add_name(char ***list, uint32_t *n, uint32_t *cap, const char *name)
{
	char *copy = strdup(name);
	if (!copy)
		return false;
	pthread_mutex_lock(&R.lock);
	if (*n == *cap) {
		uint32_t c = *cap ? *cap * 2 : 1024;
		char **p = realloc(*list, (size_t)c * sizeof *p);
		if (!p) {
			pthread_mutex_unlock(&R.lock);
			free(copy);
			return false;
		}
		*list = p;
		*cap = c;
	}
	(*list)[(*n)++] = copy;
	pthread_mutex_unlock(&R.lock);
	return true;
}

/* remember: class name was instrumented (restored at halt). */
static void remember(const char *name)
{
	add_name(&B.names, &B.nnames, &B.capnames, name);
}

/* later: class name is to be instrumented once the transformer is done (catch_up). */
static void later(const char *name)
{
	if (!add_name(&B.later, &B.nlater, &B.caplater, name))
		atomic_fetch_add(&B.failed, 1);
}

static void free_names(char ***list, uint32_t *n, uint32_t *cap)
{
	for (uint32_t i = 0; i < *n; i++)
		free((*list)[i]);
	free(*list);
	*list = NULL;
	*n = *cap = 0;
}

/* reads_rt: the named module of a class being defined by loader reads Rt's module. */
static void reads_rt(JNIEnv *jni, jvmtiEnv *e, jobject loader, const char *name)
{
	const char *slash = strrchr(name, '/');
	if (!slash || !B.rt_module)
		return;
	char pkg[1024];
	size_t n = (size_t)(slash - name);
	if (n >= sizeof pkg)
		return;
	memcpy(pkg, name, n);
	pkg[n] = 0;
	jobject m = NULL;
	if ((*e)->GetNamedModule(e, loader, pkg, &m) != JVMTI_ERROR_NONE || !m)
		return;
	bool known = false;
	pthread_mutex_lock(&R.lock);
	for (uint32_t i = 0; i < B.nmodules && !known; i++)
		known = (*jni)->IsSameObject(jni, B.modules[i], m);	/* a JNI handle comparison: no safepoint wait */
	pthread_mutex_unlock(&R.lock);
	if (!known && (*e)->AddModuleReads(e, m, B.rt_module) == JVMTI_ERROR_NONE) {
		jobject g = (*jni)->NewGlobalRef(jni, m);
		pthread_mutex_lock(&R.lock);
		jobject *p = g ? realloc(B.modules, (B.nmodules + 1) * sizeof *p) : NULL;
		if (p) {
			B.modules = p;
			B.modules[B.nmodules++] = g;
		} else if (g) {
			pthread_mutex_unlock(&R.lock);
			(*jni)->DeleteGlobalRef(jni, g);
			pthread_mutex_lock(&R.lock);
		}
		pthread_mutex_unlock(&R.lock);
	}
	(*jni)->DeleteLocalRef(jni, m);
}

#define LOADER_TAG (1LL << 60)	/* a class loader's tag in R.env: Rt resolved through it */

/*
 * resolve_rt: make loader an initiating loader of Rt (Class.forName through
 * it), once per loader. Otherwise the first instrumented call in a class of
 * the loader would ask the loader for Rt from inside the program's frame,
 * and what the loader allocates then would be charged to the program.
 */
static void resolve_rt(JNIEnv *jni, jvmtiEnv *e, jobject loader)
{
	jlong tag = 0;
	if ((*e)->GetTag(e, loader, &tag) != JVMTI_ERROR_NONE || (tag & LOADER_TAG))
		return;
	(*e)->SetTag(e, loader, LOADER_TAG);
	static jclass cls;
	static jmethodID for_name;
	if (!cls) {
		jclass c = (*jni)->FindClass(jni, "java/lang/Class");
		for_name = c ? (*jni)->GetStaticMethodID(jni, c, "forName",
			"(Ljava/lang/String;ZLjava/lang/ClassLoader;)Ljava/lang/Class;") : NULL;
		cls = c && for_name ? (*jni)->NewGlobalRef(jni, c) : NULL;
		if (c)
			(*jni)->DeleteLocalRef(jni, c);
	}
	jstring n = cls ? (*jni)->NewStringUTF(jni, "heapsh.agent.Rt") : NULL;
	jobject k = n ? (*jni)->CallStaticObjectMethod(jni, cls, for_name, n, JNI_FALSE, loader) : NULL;
	clear_exception(jni, "resolving Rt");
	if (k)
		(*jni)->DeleteLocalRef(jni, k);
	if (n)
		(*jni)->DeleteLocalRef(jni, n);
}

static void JNICALL on_class_file(jvmtiEnv *e, JNIEnv *jni, jclass redefined, jobject loader,
				  const char *name, jobject pd, jint len, const unsigned char *data,
				  jint *new_len, unsigned char **new_data)
{
	(void)redefined;
	(void)pd;
	if (!atomic_load(&B.transforming) || !name || !strncmp(name, "heapsh/agent/", 13) ||
	    e != R.env)
		return;
	if (in_hook) {
		/*
		 * Loaded because the transformer needs it: transforming it now could
		 * need it again (ClassCircularityError). It is instrumented later
		 * (catch_up).
		 */
		later(name);
		return;
	}
	atomic_fetch_add(&B.hooks, 1);
	if (!atomic_load(&B.transforming) || !B.instrument ||
	    (loader && (*jni)->IsSameObject(jni, loader, B.loader))) {
		atomic_fetch_sub(&B.hooks, 1);
		return;
	}
	in_hook++;
	int64_t hook_t0 = debug() ? ag_now_ms() : 0;
	if (loader) {
		reads_rt(jni, e, loader, name);
		resolve_rt(jni, e, loader);
	}
	jstring n = (*jni)->NewStringUTF(jni, name);
	jbyteArray b = n ? (*jni)->NewByteArray(jni, len) : NULL;
	jbyteArray out = NULL;
	if (b) {
		(*jni)->SetByteArrayRegion(jni, b, 0, len, (const jbyte *)data);
		out = (*jni)->CallStaticObjectMethod(jni, B.instrument, B.transform, n, b,
						     (jboolean)(R.npat > 0));
	}
	if ((*jni)->ExceptionCheck(jni) || !b) {
		clear_exception(jni, "the transformer");
		atomic_fetch_add(&B.failed, 1);
		out = NULL;
	}
	if (out) {
		jsize olen = (*jni)->GetArrayLength(jni, out);
		unsigned char *p = NULL;
		if (olen > 0 && (*e)->Allocate(e, olen, &p) == JVMTI_ERROR_NONE) {
			(*jni)->GetByteArrayRegion(jni, out, 0, olen, (jbyte *)p);
			*new_len = olen;
			*new_data = p;
			atomic_fetch_add(&B.instrumented, 1);
			remember(name);
		}
		(*jni)->DeleteLocalRef(jni, out);
	}
	if (b)
		(*jni)->DeleteLocalRef(jni, b);
	if (n)
		(*jni)->DeleteLocalRef(jni, n);
	if (debug())
		atomic_fetch_add(&B.hook_ms, (uint64_t)(ag_now_ms() - hook_t0));
	in_hook--;
	atomic_fetch_sub(&B.hooks, 1);
}

static void JNICALL on_gc_finish(jvmtiEnv *e)
{
	(void)e;
	atomic_fetch_add(&B.gcs, 1);
}

/* ---- the Java side: Rt in the bootstrap loader, the transformer in a loader of its own ---- */

/* classfile: the embedded class file called name; false when absent. */
static bool classfile(const char *name, const unsigned char **bytes, uint32_t *len)
{
	const unsigned char *p = ag_classes, *end = ag_classes + ag_classes_len;
	while (end - p >= 8) {
		uint32_t nl = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
		if ((size_t)(end - p - 4) < nl + 4)
			return false;
		const unsigned char *nm = p + 4, *lp = nm + nl;
		uint32_t bl = (uint32_t)lp[0] << 24 | (uint32_t)lp[1] << 16 | (uint32_t)lp[2] << 8 | lp[3];
		if ((size_t)(end - lp - 4) < bl)
			return false;
		if (!name || (strlen(name) == nl && !memcmp(name, nm, nl))) {
			*bytes = lp + 4;
			*len = bl;
			return true;
		}
		p = lp + 4 + bl;
	}
	return false;
}

/* define_rt: Rt in the bootstrap loader (once for the JVM's life), its natives bound. */
static bool define_rt(JNIEnv *jni, char *why, size_t cap)
{
	if (B.rt)
		return true;
	const unsigned char *bytes;
	uint32_t len;
	if (!classfile(RT_NAME, &bytes, &len)) {
		snprintf(why, cap, "the agent was built without its Java classes");
		return false;
	}
	jclass k = (*jni)->DefineClass(jni, RT_NAME, NULL, (const jbyte *)bytes, (jsize)len);
	if (!k) {
		/* Defined already by an earlier copy of the agent in this JVM. */
		(*jni)->ExceptionClear(jni);
		k = (*jni)->FindClass(jni, RT_NAME);
	}
	if (!k) {
		clear_exception(jni, "defining Rt");
		snprintf(why, cap, "the JVM refused the agent's class %s", RT_NAME);
		return false;
	}
	JNINativeMethod nm[] = {
		NATIVE("record", "(Ljava/lang/Object;II)V", rt_record),
		NATIVE("recordWalking", "(Ljava/lang/Object;I)V", rt_record_walking),
		NATIVE("recordClass", "(Ljava/lang/Object;IILjava/lang/Class;I)V", rt_record_class),
	};
	if ((*jni)->RegisterNatives(jni, k, nm, 3) != 0) {
		clear_exception(jni, "RegisterNatives");
		snprintf(why, cap, "the JVM refused to bind %s's native methods", RT_NAME);
		return false;
	}
	const char *statics[][2] = {
		{"record", "(Ljava/lang/Object;II)V"}, {"recordWalking", "(Ljava/lang/Object;I)V"},
		{"allocated", "(Ljava/lang/Object;I)V"}, {"slot", "()[I"},
		{"dynamic", "(Ljava/lang/Object;II)V"}, {"allocatedDynamic", "(Ljava/lang/Object;I)V"},
		{"recordClass", "(Ljava/lang/Object;IILjava/lang/Class;I)V"},
	};
	B.nown = 0;
	for (size_t i = 0; i < sizeof statics / sizeof statics[0]; i++) {
		jmethodID m = (*jni)->GetStaticMethodID(jni, k, statics[i][0], statics[i][1]);
		if (m)
			B.own[B.nown++] = m;
		clear_exception(jni, "GetStaticMethodID");
	}
	jmethodID iv = (*jni)->GetMethodID(jni, k, "initialValue", "()[Ljava/lang/Object;");
	if (iv)
		B.own[B.nown++] = iv;
	clear_exception(jni, "GetMethodID");
	jobject mod = (*jni)->GetModule(jni, k);
	B.rt_module = mod ? (*jni)->NewGlobalRef(jni, mod) : NULL;
	B.rt = (*jni)->NewGlobalRef(jni, k);
	clear_exception(jni, "Rt");
	if (!B.rt || !B.rt_module) {
		snprintf(why, cap, "the agent's class %s is not as the agent expects", RT_NAME);
		return false;
	}
	return true;
}

/*
 * warm_up: run the transformer once over a class of its own (registering no
 * site: nothing is transforming yet), so that the classes it needs, ASM's
 * and the JDK's, are loaded before the hook can call it.
 */
static void warm_up(JNIEnv *jni)
{
	const unsigned char *bytes;
	uint32_t len;
	if (!classfile("heapsh/agent/Instrument", &bytes, &len))
		return;
	in_hook++;
	jstring n = (*jni)->NewStringUTF(jni, "heapsh_warm_up/Instrument");
	jbyteArray b = n ? (*jni)->NewByteArray(jni, (jsize)len) : NULL;
	if (b) {
		(*jni)->SetByteArrayRegion(jni, b, 0, (jsize)len, (const jbyte *)bytes);
		for (int accounts = 0; accounts < 2; accounts++) {
			jobject out = (*jni)->CallStaticObjectMethod(jni, B.instrument, B.transform, n, b,
								     (jboolean)accounts);
			if (out)
				(*jni)->DeleteLocalRef(jni, out);
		}
	}
	clear_exception(jni, "warming the transformer up");
	if (b)
		(*jni)->DeleteLocalRef(jni, b);
	if (n)
		(*jni)->DeleteLocalRef(jni, n);
	in_hook--;
}

/* define_transformer: a class loader of the agent's own with Instrument and ASM in it. */
static bool define_transformer(JNIEnv *jni, char *why, size_t cap)
{
	if (B.instrument)
		return true;
	jclass ucl = (*jni)->FindClass(jni, "java/net/URLClassLoader");
	jclass url = (*jni)->FindClass(jni, "java/net/URL");
	jmethodID ctor = ucl ? (*jni)->GetMethodID(jni, ucl, "<init>",
						   "([Ljava/net/URL;Ljava/lang/ClassLoader;)V") : NULL;
	jobjectArray none = url ? (*jni)->NewObjectArray(jni, 0, url, NULL) : NULL;
	jobject loader = ctor && none ? (*jni)->NewObject(jni, ucl, ctor, none, NULL) : NULL;
	if (!loader) {
		clear_exception(jni, "URLClassLoader");
		snprintf(why, cap, "cannot make a class loader for the transformer");
		return false;
	}
	/* Superclasses first: classes whose superclass is not defined yet wait for the next round. */
	uint32_t total = 0, defined = 0;
	for (const unsigned char *p = ag_classes; p < ag_classes + ag_classes_len; total++) {
		uint32_t nl = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
		const unsigned char *lp = p + 4 + nl;
		uint32_t bl = (uint32_t)lp[0] << 24 | (uint32_t)lp[1] << 16 | (uint32_t)lp[2] << 8 | lp[3];
		p = lp + 4 + bl;
	}
	bool *done = calloc(total + 1, 1);
	if (!done) {
		snprintf(why, cap, "out of memory in the agent");
		return false;
	}
	for (int round = 0; round < 64 && defined < total; round++) {
		uint32_t before = defined, i = 0;
		for (const unsigned char *p = ag_classes; p < ag_classes + ag_classes_len; i++) {
			uint32_t nl = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
			const unsigned char *lp = p + 4 + nl;
			uint32_t bl = (uint32_t)lp[0] << 24 | (uint32_t)lp[1] << 16 | (uint32_t)lp[2] << 8 |
				      lp[3];
			char name[512];
			if (!done[i] && nl < sizeof name) {
				memcpy(name, p + 4, nl);
				name[nl] = 0;
				if (!strcmp(name, RT_NAME)) {
					done[i] = true;
					defined++;
				} else {
					jclass k = (*jni)->DefineClass(jni, name, loader,
								       (const jbyte *)(lp + 4), (jsize)bl);
					if (k) {
						done[i] = true;
						defined++;
						(*jni)->DeleteLocalRef(jni, k);
					} else {
						(*jni)->ExceptionClear(jni);
					}
				}
			}
			p = lp + 4 + bl;
		}
		if (defined == before)
			break;
	}
	free(done);
	jclass ins = NULL;
	if (defined == total) {
		jclass lc = (*jni)->GetObjectClass(jni, loader);
		jmethodID load = (*jni)->GetMethodID(jni, lc, "loadClass",
						     "(Ljava/lang/String;)Ljava/lang/Class;");
		jstring nm = (*jni)->NewStringUTF(jni, "heapsh.agent.Instrument");
		ins = load && nm ? (*jni)->CallObjectMethod(jni, loader, load, nm) : NULL;
	}
	clear_exception(jni, "loading the transformer");
	JNINativeMethod nm[] = {
		NATIVE("site", "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;"
		       "Ljava/lang/String;ILjava/lang/String;I)I", in_site),
		NATIVE("account", "(Ljava/lang/String;)I", in_account),
		NATIVE("failed", "(Ljava/lang/String;Ljava/lang/String;)V", in_failed),
	};
	jmethodID tr = ins ? (*jni)->GetStaticMethodID(jni, ins, "transform",
							"(Ljava/lang/String;[BZ)[B") : NULL;
	if (!tr || (*jni)->RegisterNatives(jni, ins, nm, 3) != 0) {
		clear_exception(jni, "the transformer");
		snprintf(why, cap, "cannot load the agent's class transformer (%u of %u classes "
			 "defined)", defined, total);
		return false;
	}
	B.loader = (*jni)->NewGlobalRef(jni, loader);
	B.instrument = (*jni)->NewGlobalRef(jni, ins);
	B.transform = tr;
	warm_up(jni);
	return B.loader && B.instrument;
}

/* drop_transformer: let the transformer's class loader go (its classes may then be unloaded). */
static void drop_transformer(JNIEnv *jni)
{
	if (B.instrument)
		(*jni)->DeleteGlobalRef(jni, B.instrument);
	if (B.loader)
		(*jni)->DeleteGlobalRef(jni, B.loader);
	B.instrument = NULL;
	B.loader = NULL;
	B.transform = NULL;
}

/* reads_all: every named module now reads Rt's (the unnamed module of the bootstrap loader). */
static void reads_all(JNIEnv *jni)
{
	jint n = 0;
	jobject *mods = NULL;
	if ((*R.env)->GetAllModules(R.env, &n, &mods) != JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < n; i++) {
		(*R.env)->AddModuleReads(R.env, mods[i], B.rt_module);
		(*jni)->DeleteLocalRef(jni, mods[i]);
	}
	dealloc(mods);
}

/*
 * retransform: the given classes through the class-file hook (instrumented
 * while B.transforming, restored to their own bytecode when not), a batch
 * at a time; a batch the JVM refuses is retried class by class.
 */
static void retransform(JNIEnv *jni, jclass *k, jint n)
{
	for (jint i = 0; i < n; i += RETRANSFORM_BATCH) {
		jint m = n - i < RETRANSFORM_BATCH ? n - i : RETRANSFORM_BATCH;
		if ((*R.env)->RetransformClasses(R.env, m, k + i) == JVMTI_ERROR_NONE)
			continue;
		clear_exception(jni, "RetransformClasses");
		for (jint j = 0; j < m; j++) {
			jvmtiError err = (*R.env)->RetransformClasses(R.env, 1, k + i + j);
			clear_exception(jni, "RetransformClasses");
			if (err != JVMTI_ERROR_NONE) {
				atomic_fetch_add(&B.failed, 1);
				if (debug()) {
					char *sig = NULL;
					(*R.env)->GetClassSignature(R.env, k[i + j], &sig, NULL);
					ag_log("cannot retransform %s (JVMTI error %d)", sig ? sig : "?", err);
					dealloc(sig);
				}
			}
		}
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * loaded: the loaded classes to retransform: every modifiable one but the
 * agent's, or only those named in names[0..nnames) (sorted here) when names
 * is not NULL. *n set; JVMTI memory (release_classes).
 */
static jclass *loaded(JNIEnv *jni, char **names, uint32_t nnames, jint *n)
{
	bool restore = names != NULL;
	jint count = 0;
	jclass *k = NULL;
	*n = 0;
	if ((*R.env)->GetLoadedClasses(R.env, &count, &k) != JVMTI_ERROR_NONE)
		return NULL;
	if (restore)
		qsort(names, nnames, sizeof *names, cmp_str);
	jint m = 0;
	for (jint i = 0; i < count; i++) {
		jboolean ok = JNI_FALSE;
		char *sig = NULL;
		if ((*R.env)->IsModifiableClass(R.env, k[i], &ok) == JVMTI_ERROR_NONE && ok &&
		    (*R.env)->GetClassSignature(R.env, k[i], &sig, NULL) == JVMTI_ERROR_NONE && sig &&
		    sig[0] == 'L' && strncmp(sig, "Lheapsh/agent/", 14)) {
			jobject l = NULL;
			(*R.env)->GetClassLoader(R.env, k[i], &l);
			ok = !l || !B.loader || !(*jni)->IsSameObject(jni, l, B.loader);
			if (l)
				(*jni)->DeleteLocalRef(jni, l);
			if (ok && restore) {
				sig[strlen(sig) - 1] = 0;
				char *key = sig + 1;
				ok = bsearch(&key, names, nnames, sizeof *names, cmp_str) != NULL;
			}
		} else {
			ok = JNI_FALSE;
		}
		dealloc(sig);
		if (ok)
			k[m++] = k[i];
		else
			(*jni)->DeleteLocalRef(jni, k[i]);
	}
	*n = m;
	return k;
}

static void release_classes(JNIEnv *jni, jclass *k, jint n)
{
	for (jint i = 0; i < n; i++)
		(*jni)->DeleteLocalRef(jni, k[i]);
	dealloc(k);
}

/* catch_up: instrument the classes loaded inside the transformer meanwhile (later()). */
static void catch_up(JNIEnv *jni)
{
	for (int round = 0; round < 4 && atomic_load(&B.transforming); round++) {
		pthread_mutex_lock(&R.lock);
		char **names = B.later;
		uint32_t n = B.nlater, cap = B.caplater;
		B.later = NULL;
		B.nlater = B.caplater = 0;
		pthread_mutex_unlock(&R.lock);
		if (!n)
			return;
		jint m = 0;
		jclass *k = loaded(jni, names, n, &m);
		retransform(jni, k, m);
		release_classes(jni, k, m);
		free_names(&names, &n, &cap);
	}
}

/* start_java: the Java side ready, then every loaded class instrumented; why on failure. */
static bool start_java(JNIEnv *jni, char *why, size_t cap)
{
	if (!define_rt(jni, why, cap) || !define_transformer(jni, why, cap))
		return false;
	layout(jni);
	if (!B.object_array) {
		jclass c = (*jni)->FindClass(jni, "[Ljava/lang/Object;");
		B.object_array = c ? (*jni)->NewGlobalRef(jni, c) : NULL;
		clear_exception(jni, "Object[]");
		if (!B.object_array) {
			snprintf(why, cap, "cannot find the class Object[]");
			return false;
		}
	}
	reads_all(jni);
	atomic_store(&B.transforming, 1);
	atomic_store(&R.on, 1);
	jvmtiError err = (*R.env)->SetEventNotificationMode(R.env, JVMTI_ENABLE,
							     JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, NULL);
	if (err != JVMTI_ERROR_NONE) {
		atomic_store(&R.on, 0);
		atomic_store(&B.transforming, 0);
		snprintf(why, cap, "the JVM refused the class-file hook (JVMTI error %d)", err);
		return false;
	}
	jint n = 0;
	jclass *k = loaded(jni, NULL, 0, &n);
	int64_t t0 = ag_now_ms();
	retransform(jni, k, n);
	catch_up(jni);
	if (debug())
		ag_log("instrumented %llu of %d loaded classes in %lld ms (%llu left as they were)",
		       (unsigned long long)atomic_load(&B.instrumented), n,
		       (long long)(ag_now_ms() - t0), (unsigned long long)atomic_load(&B.failed));
	release_classes(jni, k, n);
	return true;
}

bool ag_bc_begin(JNIEnv *jni, char *why, size_t cap)
{
	jvmtiEnv *e = NULL;
	if (!R.vm || (*R.vm)->GetEnv(R.vm, (void **)&e, JVMTI_VERSION_11) != JNI_OK || !e) {
		snprintf(why, cap, "this JVM offers no JVMTI 11 environment (exact recordings "
			 "need JDK 11 or later)");
		return false;
	}
	R.env = e;
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof caps);
	caps.can_retransform_classes = 1;
	caps.can_generate_all_class_hook_events = 1;
	caps.can_tag_objects = 1;
	caps.can_get_line_numbers = 1;
	caps.can_get_source_file_name = 1;
	caps.can_generate_garbage_collection_events = 1;
	jvmtiError err = (*e)->AddCapabilities(e, &caps);
	if (err != JVMTI_ERROR_NONE) {
		snprintf(why, cap, "the JVM refused the capabilities of bytecode instrumentation "
			 "(JVMTI error %d); try --via jvmti", err);
		return false;
	}
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.ClassFileLoadHook = on_class_file;
	cb.GarbageCollectionFinish = on_gc_finish;
	(*e)->SetEventCallbacks(e, &cb, sizeof cb);
	(*e)->SetEventNotificationMode(e, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
	if (!B.tkey_made)
		B.tkey_made = pthread_key_create(&B.tkey, thread_ended) == 0;
	B.gen = B.gen % 127 + 1;
	atomic_store(&B.nsites, 0);
	R.exists = true;
	if (!jni) {
		B.pending = true;	/* at start-up: VMInit runs the rest */
		return true;
	}
	return start_java(jni, why, cap);
}

void ag_bc_vm_init(JNIEnv *jni)
{
	if (!B.pending)
		return;
	B.pending = false;
	char why[512] = "";
	if (!start_java(jni, why, sizeof why)) {
		ag_log("no allocation recording: %s", why);
		atomic_store(&R.on, 0);
		R.stopped_ms = ag_wall_ms();
	}
}

/* quiet: no class-file hook runs any more. */
static void quiet(void)
{
	atomic_store(&B.transforming, 0);
	for (int k = 0; k < 5000 && atomic_load(&B.hooks) > 0; k++)
		sched_yield();
}

/* forget_last: Rt's cache of the last thread's slot lets go of that thread. */
static void forget_last(JNIEnv *jni)
{
	jfieldID f = B.rt ? (*jni)->GetStaticFieldID(jni, B.rt, "last", "[Ljava/lang/Object;") : NULL;
	jclass oc = f ? (*jni)->FindClass(jni, "java/lang/Object") : NULL;
	jobjectArray none = oc ? (*jni)->NewObjectArray(jni, 2, oc, NULL) : NULL;
	if (none)
		(*jni)->SetStaticObjectField(jni, B.rt, f, none);
	clear_exception(jni, "Rt.last");
	if (none)
		(*jni)->DeleteLocalRef(jni, none);
	if (oc)
		(*jni)->DeleteLocalRef(jni, oc);
}

void ag_bc_halt(JNIEnv *jni)
{
	quiet();
	if (!jni || !R.env)
		return;
	forget_last(jni);
	(*R.env)->SetEventNotificationMode(R.env, JVMTI_DISABLE, JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, NULL);
	/* Back to their own bytecode: the hook, enabled again, leaves them alone now. */
	(*R.env)->SetEventNotificationMode(R.env, JVMTI_ENABLE, JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, NULL);
	jint n = 0;
	pthread_mutex_lock(&R.lock);
	char **names = B.names;
	uint32_t nnames = B.nnames;
	B.names = NULL;
	B.nnames = B.capnames = 0;
	pthread_mutex_unlock(&R.lock);
	jclass *k = loaded(jni, names ? names : (char *[]){NULL}, nnames, &n);
	retransform(jni, k, n);
	release_classes(jni, k, n);
	free_names(&names, &nnames, &(uint32_t){0});
	(*R.env)->SetEventNotificationMode(R.env, JVMTI_DISABLE, JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, NULL);
}

void ag_bc_discard(JNIEnv *jni)
{
	quiet();
	B.pending = false;
	if (jni) {
		freeze();
		release_all(jni);
		thaw();
	}
	pthread_mutex_lock(&R.lock);
	uint32_t ns = atomic_load(&B.nsites);
	for (uint32_t i = 0; i < ns; i++) {
		struct site *s = &B.sites[i / SITE_CHUNK][i % SITE_CHUNK];
		free((void *)s->key);
		for (struct dyn *d = atomic_load(&s->dyn), *nx; d; d = nx) {
			nx = d->next;
			if (jni && d->klass)
				(*jni)->DeleteWeakGlobalRef(jni, d->klass);
			free(d);
		}
		for (struct dtab *t = atomic_load(&s->tab), *nx; t; t = nx) {
			nx = t->retired;
			free(t);
		}
	}
	for (uint32_t c = 0; c < MAX_SITE_CHUNKS && B.sites[c]; c++) {
		free(B.sites[c]);
		B.sites[c] = NULL;
	}
	atomic_store(&B.nsites, 0);
	free_names(&B.names, &B.nnames, &B.capnames);
	free_names(&B.later, &B.nlater, &B.caplater);
	pthread_mutex_unlock(&R.lock);
	atomic_store(&B.instrumented, 0);
	atomic_store(&B.failed, 0);
	if (jni)
		drop_transformer(jni);
}

bool ag_bc_measure(JNIEnv *jni, struct walk_counts *w, char *why, size_t cap)
{
	(void)why;
	(void)cap;
	catch_up(jni);
	freeze();
	for (struct tstate *t = atomic_load(&B.threads); t; t = t->next) {
		sweep(jni, t);
		for (uint32_t i = 0; i < t->n; i++) {
			const struct entry *x = &t->e[i];
			if (x->key < w->n) {
				w->objs[x->key] += 1;
				w->bytes[x->key] += (double)x->words * 8;
				w->tracked++;
			}
		}
	}
	/* Ended threads whose objects have all died go (their tables nobody else sweeps). */
	unlink_ended();
	thaw();
	return true;
}

void ag_bc_vm_death(void)
{
	if (!debug())
		return;
	uint64_t objs = 0, dyn = 0, dynk = 0, maxk = 0;
	for (uint32_t k = 0; k < R.nkeys; k++)
		objs += atomic_load(&KEY(k)->n_objs);
	for (uint32_t i = 0; i < atomic_load(&B.nsites); i++) {
		struct site *s = &B.sites[i / SITE_CHUNK][i % SITE_CHUNK];
		uint64_t n = 0;
		for (struct dyn *d = atomic_load(&s->dyn); d; d = d->next, n++)
			for (int a = 0; a <= R.npat; a++)
				if (atomic_load(&d->key[a]) != NONE)
					dyn += atomic_load(&KEY(atomic_load(&d->key[a]))->n_objs);
		dynk += n;
		if (n > maxk)
			maxk = n;
	}
	ag_log("dynamic: %llu allocations, %llu classes at dynamic sites, at most %llu at one",
	       (unsigned long long)dyn, (unsigned long long)dynk, (unsigned long long)maxk);
	ag_log("%llu classes instrumented, %llu left as they were, %llu ms in the class-file "
	       "hook, %llu allocations, %u sites, %u keys", (unsigned long long)atomic_load(&B.instrumented),
	       (unsigned long long)atomic_load(&B.failed), (unsigned long long)atomic_load(&B.hook_ms),
	       (unsigned long long)objs, atomic_load(&B.nsites), R.nkeys);
}

void ag_bc_status(uint64_t *instrumented, uint64_t *failed)
{
	*instrumented = atomic_load(&B.instrumented);
	*failed = atomic_load(&B.failed);
}
