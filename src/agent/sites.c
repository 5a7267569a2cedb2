/*
 * sites.c - what the code an exact recording rewrote calls (docs/agent.md,
 * "Exact recordings by bytecode instrumentation"): the natives of
 * heapsh.agent.Rt, the allocation sites the transformer registered, their
 * counters, and the weak references that follow the recorded objects until
 * they die. instrument.c owns the rewriting; alloc.c owns the recording.
 *
 * Per allocation, Rt.record finds the key of (site, account) in the site's
 * own small table (no lock once made; a site whose class is the object's,
 * clone or reflection, first finds the class by its identity hash), adds the
 * object to the key's atomic counters, and follows the object with a JNI weak
 * global reference kept in a table of the allocating thread's own. A thread
 * sweeps its table of the references the GC has cleared when it fills up
 * after a GC (amortised: the table doubles when less than half goes). A read
 * (ALLOC_READ, MARK) runs a full GC, then stops the recording threads at a
 * door (freeze(): every thread's table is then the reader's alone) and counts
 * the references still alive per key: exact live counts with no per-object
 * JVMTI tag (a tag costs 0.4-1.4 us per object on JDK 17 and 25, a weak
 * reference about 0.1 us; docs/performance.md).
 *
 * With --depth above 1 Rt counts each allocation under its calling context,
 * which the rewritten methods keep on the thread's stack of frames in Java
 * (Rt.java, "Calling contexts"); the first of a context on a thread comes
 * here (Rt.firstCtx, ctx_key reads the frames), as do the frames under the
 * first rewritten method a thread enters (Rt.seed, a stack walk) and the
 * objects of a site whose class only the agent can tell (Rt.recordCtx). Sites
 * in the classes Rt's account slot itself runs (ThreadLocal's) call
 * Rt.recordWalking, which finds the account and the context by walking the
 * stack (ag_rec_stack_key), like the JVMTI mechanism.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sites.h"

struct sites_state ag_sites_state = {.freeze_mu = PTHREAD_MUTEX_INITIALIZER, .dyn_lock = PTHREAD_MUTEX_INITIALIZER,
				      .cache_lock = PTHREAD_MUTEX_INITIALIZER};

static __thread struct tstate *me;
static __thread jint recording_site;	/* the site ag_record() counts at, for cache() */
/* recordCtx: the calling thread's stack of frames (Rt.java) and whether its top is the site's method. */
static __thread jlongArray recording_stack;
static __thread jint recording_pushed;
__thread int ag_in_hook;

/* dropped: an allocation not recorded (the tables are full, or JVMTI could not say what it is). */
void ag_sites_dropped(int line)
{
	if (atomic_fetch_add(&R.dropped, 1) < 10 && ag_debug())
		ag_log("an allocation not recorded (instrument.c:%d)", line);
}


/* ---- the threads' tables of recorded objects ---- */

static void thread_ended(void *p)
{
	struct tstate *t = p;
	if (t)
		atomic_store(&t->dead, 1);
}

/* tstate: this thread's table, made and registered on first use; NULL when out of memory. */
struct tstate *ag_tstate(void)
{
	if (me)
		return me;
	struct tstate *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->gc_seen = atomic_load(&S.gcs);
	struct tstate *head = atomic_load(&S.threads);
	do
		t->next = head;
	while (!atomic_compare_exchange_weak(&S.threads, &head, t));
	me = t;
	if (S.tkey_made)
		pthread_setspecific(S.tkey, t);
	return t;
}

/*
 * enter: this thread may now touch its table and the recording (busy);
 * waits while a reader has the recording frozen. NULL: no table.
 */
struct tstate *ag_tenter(void)
{
	struct tstate *t = ag_tstate();
	if (!t)
		return NULL;
	for (;;) {
		atomic_store(&t->busy, 1);
		if (!atomic_load(&S.freeze))
			return t;
		atomic_store(&t->busy, 0);
		pthread_mutex_lock(&S.freeze_mu);
		pthread_mutex_unlock(&S.freeze_mu);
	}
}

void ag_tleave(struct tstate *t)
{
	atomic_store_explicit(&t->busy, 0, memory_order_release);
}

/* freeze: wait until no thread is busy, and keep them out until thaw. */
static void freeze(void)
{
	pthread_mutex_lock(&S.freeze_mu);
	atomic_store(&S.freeze, 1);
	for (struct tstate *t = atomic_load(&S.threads); t; t = t->next)
		while (atomic_load(&t->busy))
			sched_yield();
}

static void thaw(void)
{
	atomic_store(&S.freeze, 0);
	pthread_mutex_unlock(&S.freeze_mu);
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
	t->gc_seen = atomic_load(&S.gcs);
}

/* room: space for one more entry in t (sweeping after a GC, else growing); false: none. */
static bool room(JNIEnv *jni, struct tstate *t)
{
	if (t->n < t->cap)
		return true;
	if (t->gc_seen != atomic_load(&S.gcs) && t->n >= 2 * (uint64_t)t->live_after) {
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
void ag_track(JNIEnv *jni, struct tstate *t, jobject obj, uint32_t key, jlong size, bool sampled)
{
	if (R.live == LIVE_NONE)
		return;
	if (!room(jni, t)) {
		atomic_fetch_add(&R.untracked, 1);
		return;
	}
	jweak w = (*jni)->NewWeakGlobalRef(jni, obj);
	if (!w) {
		ag_jni_clear(jni, "NewWeakGlobalRef");
		atomic_fetch_add(&R.untracked, 1);
		return;
	}
	uint64_t words = (uint64_t)size / 8;
	words = words >= SAMPLED_BIT ? SAMPLED_BIT - 1 : words;
	t->e[t->n++] = (struct entry){w, key, (uint32_t)words | (sampled ? SAMPLED_BIT : 0)};
	ag_rsv_offer(jni, obj, key);
}

/*
 * unlink_ended: free the states of ended threads with empty tables; frozen.
 * A new thread may push itself on the list meanwhile (ag_tstate() comes before
 * the door), so the first state is taken off only by compare-and-swap.
 */
static void unlink_ended(void)
{
	struct tstate *head = atomic_load(&S.threads), *prev = NULL;
	for (struct tstate *t = head, *nx; t; t = nx) {
		nx = t->next;
		bool gone = atomic_load(&t->dead) && !t->n;
		if (gone && !prev)
			gone = atomic_compare_exchange_strong(&S.threads, &head, nx);
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
			head = atomic_load(&S.threads);
	}
}

/* release_all: every table emptied and freed, the ended threads' too; frozen. */
static void release_all(JNIEnv *jni)
{
	for (struct tstate *t = atomic_load(&S.threads); t; t = t->next) {
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
 * align(base + n * scale). S.align stays 0 when no (base, scale) fits, and
 * every array's size is then asked of JVMTI.
 */
static void layout(JNIEnv *jni)
{
	if (S.align)
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
	memcpy(S.base, base, sizeof base);
	memcpy(S.scale, scale, sizeof scale);
	S.align = align;
unknown:
	ag_jni_clear(jni, "learning the array layout");
	if (obj)
		(*jni)->DeleteLocalRef(jni, obj);
}


/* site_key: the key of (s, account), made on first use; NONE when full. */
uint32_t ag_site_key(struct site *s, _Atomic uint32_t *slot, uint32_t cls, uint32_t account)
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
		ag_rec_free(name);
		ag_rec_free(sig);
	}
	ag_rec_free(ms);
	return found;
}

static bool class_named(jclass k, const char *sig)
{
	char *s = NULL;
	bool same = (*R.env)->GetClassSignature(R.env, k, &s, NULL) == JVMTI_ERROR_NONE && s &&
		    !strcmp(s, sig);
	ag_rec_free(s);
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

/* dyn_insert: d into s's table (growing it); false when memory ran out. S.dyn_lock is held. */
static bool dyn_insert(struct site *s, struct dyn *d)
{
	struct dtab *t = atomic_load(&s->tab);
	if (!t || (t->n + 1) * 2 > t->mask + 1) {
		uint32_t cap = t ? (t->mask + 1) * 2 : 8;
		size_t size = sizeof *t + cap * sizeof t->slot[0];
		struct dtab *u = ag_rec_calloc(1, size);
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
	if (cls == NONE || !(d = ag_rec_calloc(1, size)))
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
	d->pseudo = -1;
	for (int a = 0; a <= R.npat; a++)
		atomic_init(&d->key[a], NONE);
	/* Two threads may add the same class at once: both entries count, under one key. */
	pthread_mutex_lock(&S.dyn_lock);
	bool ok = dyn_insert(s, d);
	pthread_mutex_unlock(&S.dyn_lock);
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

/* add_to_key: one object of size bytes (an array of len elements, else len 0) counted under key. */
void ag_add_to_key(uint32_t key, jlong size, jint len)
{
	struct key *k = KEY(key);
	atomic_fetch_add_explicit(&k->n_objs, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&k->n_bytes, (uint64_t)size, memory_order_relaxed);
	if (len > 0)
		atomic_fetch_add_explicit(&k->n_elems, (uint64_t)len, memory_order_relaxed);
}

static jint new_site(uint32_t mi, jint line, uint32_t cls, jint kind, int elem);

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
		key = ag_site_key(s, slot, cls, account);
	} else if (recording_stack && account != NONE) {
		key = ag_ctx_key(jni, recording_stack, recording_pushed, s, cls, account);
	} else {
		int r = ag_rec_stack_key(R.env, jni, cls, account, S.own, S.nown, s->method, s->line,
					 &key);
		if (r > 0)
			return;	/* allocated by the agent's own code (Rt's thread-local slot) */
		if (r < 0)
			key = NONE;
	}
	if (key == NONE) {
		ag_sites_dropped(__LINE__);
		return;
	}
	jint len = elem >= 0 ? (*jni)->GetArrayLength(jni, (jarray)obj) : 0;
	if (elem >= 0)
		size = array_size(elem, len);
	if (!size && (*R.env)->GetObjectSize(R.env, obj, &size) != JVMTI_ERROR_NONE)
		size = 0;
	ag_add_to_key(key, size, len);
	ag_track(jni, t, obj, key, size, false);
}

/* identity: the identity hash of object o (System.identityHashCode through JNI). */
static jint identity(JNIEnv *jni, jobject o)
{
	if (!S.system) {
		jclass c = (*jni)->FindClass(jni, "java/lang/System");
		S.identity_hash = c ? (*jni)->GetStaticMethodID(jni, c, "identityHashCode",
								"(Ljava/lang/Object;)I") : NULL;
		S.system = c && S.identity_hash ? (*jni)->NewGlobalRef(jni, c) : NULL;
		if (c)
			(*jni)->DeleteLocalRef(jni, c);
	}
	jint h = S.system ? (*jni)->CallStaticIntMethod(jni, S.system, S.identity_hash, o) : 0;
	ag_jni_clear(jni, "identityHashCode");
	return h;
}

/* count_nested: the arrays inside a new multi-dimensional array (each a new array of its own). */
static void count_nested(JNIEnv *jni, struct tstate *t, jobject arr, struct site *s,
			 uint32_t account, bool walking, int depth)
{
	if (depth >= MAX_MULTI || !(*jni)->IsInstanceOf(jni, arr, S.object_array))
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
 * cache: let Rt count the objects of class k (d) at dynamic site s itself
 * (Rt.dynamic, ctxDynamic): d gets a site of its own, of a known class, and
 * the site's table in Rt.dyn the pair {k, int[] {that site, element kind
 * or -1, or -2: not counted here; k's identity hash}} (open addressing on
 * the identity hash, at most half full; replaced whole when it grows). A
 * site that sees more than WAYS classes stays with the natives for the
 * rest.
 */
static void cache(JNIEnv *jni, jint site, struct site *s, struct dyn *d, jclass k)
{
	enum { WAYS = 1024 };
	if (!S.java || !S.f_dyn || d->cached ||
	    (s->kind != S_DYNAMIC && s->kind != S_CLONE_VIRTUAL && s->kind != S_CLONE_SPECIAL))
		return;
	pthread_mutex_lock(&S.cache_lock);
	if (d->cached)
		goto out;
	d->cached = true;
	if (d->counts && d->pseudo < 0) {
		pthread_mutex_lock(&R.lock);
		d->pseudo = new_site(s->method, s->line, d->cls, d->elem >= 0 ? S_ARRAY : S_NEW, d->elem);
		if (d->pseudo >= 0) {
			struct site *p = site_of(d->pseudo);
			atomic_store(&p->size, d->size);
		}
		pthread_mutex_unlock(&R.lock);
		if (d->pseudo < 0)
			goto out;
	}
	uint32_t si = (uint32_t)site & ((1u << SITE_BITS) - 1);
	jobjectArray all = (*jni)->GetStaticObjectField(jni, S.rt, S.f_dyn);
	jsize n = all ? (*jni)->GetArrayLength(jni, all) : 0;
	if (all && (jsize)si >= n) {
		jsize want = (jsize)atomic_load(&S.nsites) + 1024;
		jclass oc = (*jni)->FindClass(jni, "java/lang/Object");
		jobjectArray bigger = oc ? (*jni)->NewObjectArray(jni, want, oc, NULL) : NULL;
		for (jsize j = 0; bigger && j < n; j++) {
			jobject e = (*jni)->GetObjectArrayElement(jni, all, j);
			if (e) {
				(*jni)->SetObjectArrayElement(jni, bigger, j, e);
				(*jni)->DeleteLocalRef(jni, e);
			}
		}
		if (oc)
			(*jni)->DeleteLocalRef(jni, oc);
		(*jni)->DeleteLocalRef(jni, all);
		all = bigger;
		if (bigger)
			(*jni)->SetStaticObjectField(jni, S.rt, S.f_dyn, bigger);
	}
	jobjectArray old = all ? (*jni)->GetObjectArrayElement(jni, all, (jsize)si) : NULL;
	jsize had = old ? (*jni)->GetArrayLength(jni, old) / 2 : 0, used = 0;
	for (jsize j = 0; j < had; j++) {
		jobject x = (*jni)->GetObjectArrayElement(jni, old, 2 * j);
		used += x != NULL;
		if (x)
			(*jni)->DeleteLocalRef(jni, x);
	}
	jsize cap = had ? had : 4;
	while (2 * (used + 1) > cap)
		cap *= 2;
	jclass oc = all && used < WAYS ? (*jni)->FindClass(jni, "java/lang/Object") : NULL;
	jobjectArray e = oc ? (*jni)->NewObjectArray(jni, 2 * cap, oc, NULL) : NULL;
	jintArray v = e ? (*jni)->NewIntArray(jni, 3) : NULL;
	if (v) {
		jint vv[3] = {d->pseudo, !d->counts ? -2 : d->elem >= 0 ? d->elem : -1, d->hash};
		(*jni)->SetIntArrayRegion(jni, v, 0, 3, vv);
		/* Every entry of the old table, then k, each at its hash's first free slot. */
		for (jsize j = 0; j <= had; j++) {
			jobject x = j < had ? (*jni)->GetObjectArrayElement(jni, old, 2 * j) : k;
			jintArray xv = j < had ? (*jni)->GetObjectArrayElement(jni, old, 2 * j + 1) : v;
			jint h = 0;
			if (x && xv)
				(*jni)->GetIntArrayRegion(jni, xv, 2, 1, &h);
			for (jsize q = h & (cap - 1); x && xv; q = (q + 1) & (cap - 1)) {
				jobject y = (*jni)->GetObjectArrayElement(jni, e, 2 * q);
				if (!y) {
					(*jni)->SetObjectArrayElement(jni, e, 2 * q, x);
					(*jni)->SetObjectArrayElement(jni, e, 2 * q + 1, xv);
					break;
				}
				(*jni)->DeleteLocalRef(jni, y);
			}
			if (j < had && x)
				(*jni)->DeleteLocalRef(jni, x);
			if (j < had && xv)
				(*jni)->DeleteLocalRef(jni, xv);
		}
		(*jni)->SetObjectArrayElement(jni, all, (jsize)si, e);
	}
	ag_jni_clear(jni, "Rt.dyn");
	if (v)
		(*jni)->DeleteLocalRef(jni, v);
	if (e)
		(*jni)->DeleteLocalRef(jni, e);
	if (oc)
		(*jni)->DeleteLocalRef(jni, oc);
	if (old)
		(*jni)->DeleteLocalRef(jni, old);
	if (all)
		(*jni)->DeleteLocalRef(jni, all);
out:
	pthread_mutex_unlock(&S.cache_lock);
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
		if (d && depth == 0 && !walking)
			cache(jni, recording_site, s, d, k);
		if (own)
			(*jni)->DeleteLocalRef(jni, own);
		if (!d) {
			ag_sites_dropped(__LINE__);
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
void ag_record(JNIEnv *jni, jobject obj, jint site, uint32_t account, bool walking, jclass k,
	       jint hash)
{
	atomic_fetch_add_explicit(&S.natives, 1, memory_order_relaxed);
	if (!atomic_load_explicit(&R.on, memory_order_relaxed) || ag_in_hook || ag_in_agent_thread || !obj)
		return;
	struct tstate *t = ag_tenter();
	if (!t) {
		ag_sites_dropped(__LINE__);
		return;
	}
	struct site *s = atomic_load(&R.on) ? site_of(site) : NULL;
	recording_site = site;
	if (s)
		count(jni, t, obj, s, account, walking, 0, k, hash);
	ag_tleave(t);
}


/* Rt.record(Object o, int site, int account): o was just allocated at site. */
static void JNICALL rt_record(JNIEnv *jni, jclass rt, jobject obj, jint site, jint account)
{
	(void)rt;
	ag_record(jni, obj, site, account_arg(account), false, NULL, 0);
}

/* Rt.recordClass(Object o, int site, int account, Class c, int hash): the same, c = o's class. */
static void JNICALL rt_record_class(JNIEnv *jni, jclass rt, jobject obj, jint site, jint account,
				    jclass k, jint hash)
{
	(void)rt;
	ag_record(jni, obj, site, account_arg(account), false, k, hash);
}

/* Rt.recordWalking(Object o, int site): the account found by walking the stack. */
static void JNICALL rt_record_walking(JNIEnv *jni, jclass rt, jobject obj, jint site)
{
	(void)rt;
	ag_record(jni, obj, site, NONE, true, NULL, 0);
}

/*
 * Rt.recordCtx(Object o, int site, int account, long[] stack, int pushed,
 * Class c, int hash): o (of class c, identity hash hash; null: o's own) was
 * just allocated at a site of no known class or with arrays inside
 * (clone, reflection, multianewarray), in the calling context on stack.
 */
static void JNICALL rt_record_ctx(JNIEnv *jni, jclass rt, jobject obj, jint site, jint account,
				  jlongArray st, jint pushed, jclass k, jint hash)
{
	(void)rt;
	recording_stack = S.ctx ? st : NULL;
	recording_pushed = pushed;
	ag_record(jni, obj, site, account_arg(account), false, k, hash);
	recording_stack = NULL;
}

/*
 * new_site: a new site of method mi at line, of class cls (NONE: the
 * object's) and kind; its number, -1 when the tables are full. R.lock is held.
 */
static jint new_site(uint32_t mi, jint line, uint32_t cls, jint kind, int elem)
{
	uint32_t i = atomic_load(&S.nsites), ch = i / SITE_CHUNK;
	if (ch >= MAX_SITE_CHUNKS)
		return -1;
	if (!S.sites[ch] && !(S.sites[ch] = ag_rec_calloc(SITE_CHUNK, sizeof(struct site))))
		return -1;
	struct site *s = &S.sites[ch][i % SITE_CHUNK];
	uint32_t node = mi == NONE ? NONE : ag_rec_node(NONE, mi, line < 0 ? -1 : line);
	_Atomic uint32_t *k = node == NONE ? NULL : ag_rec_calloc((size_t)R.npat + 1, sizeof *k);
	if (!k)
		return -1;
	for (int a = 0; a <= R.npat; a++)
		atomic_init(&k[a], NONE);
	s->method = mi;
	s->node = node;
	s->cls = cls;
	s->line = line < 0 ? -1 : line;
	s->kind = (uint8_t)kind;
	s->elem = (int8_t)elem;
	atomic_init(&s->size, 0);
	atomic_init(&s->dyn, NULL);
	atomic_init(&s->tab, NULL);
	s->key = k;
	atomic_store_explicit(&S.nsites, i + 1, memory_order_release);
	return (jint)(S.gen << SITE_BITS | i);
}

jint ag_sites_add(const char *sig, const char *method, const char *desc, const char *file,
		  jint line, const char *ty, jint kind)
{
	jint id = -1;
	if (kind < 0 || kind >= S_KINDS || (kind <= S_MULTI && !ty))
		return -1;
	pthread_mutex_lock(&R.lock);
	uint32_t mi = ag_rec_method_named(sig, method, desc, file);
	uint32_t cls = ty ? ag_rec_class(ty) : NONE;
	if (!ty || cls != NONE)
		id = new_site(mi, line, cls, kind, kind <= S_MULTI ? elem_of(ty) : E_NONE);
	pthread_mutex_unlock(&R.lock);
	return id;
}

jint ag_sites_method(const char *sig, const char *name, const char *desc, const char *file)
{
	pthread_mutex_lock(&R.lock);
	uint32_t mi = ag_rec_method_named(sig, name, desc, file);
	pthread_mutex_unlock(&R.lock);
	return mi == NONE || mi >> SITE_BITS ? -1 : (jint)(S.gen << SITE_BITS | mi);
}

/*
 * ag_sites_lines: the lines of the sites registered for method (class JNI
 * signature cls, name, descriptor sig) into lines[0..max), ascending and
 * distinct; how many.
 */
int ag_sites_lines(const char *cls, const char *name, const char *sig, int32_t *lines, int max)
{
	int n = 0;
	pthread_mutex_lock(&R.lock);
	uint32_t ns = atomic_load(&S.nsites);
	for (uint32_t i = 0; i < ns; i++) {
		const struct site *st = &S.sites[i / SITE_CHUNK][i % SITE_CHUNK];
		if (st->method >= R.nmethods)
			continue;
		const struct method *m = &R.methods[st->method];
		if (strcmp(m->name, name) || strcmp(m->sig, sig) || strcmp(m->cls, cls))
			continue;
		int j = 0;
		while (j < n && lines[j] < st->line)
			j++;
		if ((j < n && lines[j] == st->line) || n == max)
			continue;
		memmove(lines + j + 1, lines + j, (size_t)(n - j) * sizeof *lines);
		lines[j] = st->line;
		n++;
	}
	pthread_mutex_unlock(&R.lock);
	return n;
}

/* ---- a recording's sites ---- */

void ag_sites_begin(void)
{
	if (!S.tkey_made)
		S.tkey_made = pthread_key_create(&S.tkey, thread_ended) == 0;
	S.gen = S.gen % 127 + 1;
	atomic_store(&S.nsites, 0);
}

bool ag_sites_bind(JNIEnv *jni, jclass rt, char *why, size_t cap)
{
	JNINativeMethod nm[] = {
		NATIVE("record", "(Ljava/lang/Object;II)V", rt_record),
		NATIVE("recordWalking", "(Ljava/lang/Object;I)V", rt_record_walking),
		NATIVE("recordClass", "(Ljava/lang/Object;IILjava/lang/Class;I)V", rt_record_class),
		NATIVE("first", "(Ljava/lang/Object;III[Ljava/lang/Object;)V", ag_rt_first),
		NATIVE("flush", "([Ljava/lang/Object;)V", ag_rt_flush),
		NATIVE("firstCtx", "(Ljava/lang/Object;III[Ljava/lang/Object;[JI)I", ag_rt_first_ctx),
		NATIVE("seed", "([Ljava/lang/Object;)[J", ag_rt_seed),
		NATIVE("recordCtx", "(Ljava/lang/Object;II[JILjava/lang/Class;I)V", rt_record_ctx),
	};
	if ((*jni)->RegisterNatives(jni, rt, nm, 8) != 0) {
		ag_jni_clear(jni, "RegisterNatives");
		snprintf(why, cap, "the JVM refused to bind heapsh.agent.Rt's native methods");
		return false;
	}
	/*
	 * Every method of Rt is the agent's own: its frames are skipped in stack
	 * walks. Looking one up links the class, which GetClassMethods needs.
	 */
	(*jni)->GetStaticMethodID(jni, rt, "mine", "()[Ljava/lang/Object;");
	ag_jni_clear(jni, "Rt.mine");
	jint nm_ = 0;
	jmethodID *ms = NULL;
	S.nown = 0;
	if (R.env && (*R.env)->GetClassMethods(R.env, rt, &nm_, &ms) == JVMTI_ERROR_NONE) {
		for (jint i = 0; i < nm_ && S.nown < MAX_OWN; i++)
			S.own[S.nown++] = ms[i];
		ag_rec_free(ms);
	}
	if (S.nown == 0 || nm_ > MAX_OWN) {
		snprintf(why, cap, "cannot list the methods of the agent's class heapsh.agent.Rt");
		return false;
	}
	layout(jni);
	if (!S.rt) {
		S.f_gen = (*jni)->GetStaticFieldID(jni, rt, "gen", "I");
		S.f_accounts = (*jni)->GetStaticFieldID(jni, rt, "accounts", "I");
		S.f_live = (*jni)->GetStaticFieldID(jni, rt, "live", "I");
		S.f_base = (*jni)->GetStaticFieldID(jni, rt, "BASE", "[I");
		S.f_shift = (*jni)->GetStaticFieldID(jni, rt, "SHIFT", "[I");
		S.f_align = (*jni)->GetStaticFieldID(jni, rt, "align", "J");
		S.f_all = (*jni)->GetStaticFieldID(jni, rt, "all", "[Ljava/lang/Object;");
		S.f_nall = (*jni)->GetStaticFieldID(jni, rt, "nall", "I");
		S.f_dyn = (*jni)->GetStaticFieldID(jni, rt, "dyn", "[Ljava/lang/Object;");
		S.f_cgen = (*jni)->GetStaticFieldID(jni, rt, "cgen", "I");
		S.f_depth = (*jni)->GetStaticFieldID(jni, rt, "depth", "I");
		S.f_pn = (*jni)->GetStaticFieldID(jni, rt, "pn", "J");
		S.f_off = (*jni)->GetStaticFieldID(jni, rt, "off", "I");
		jclass w = (*jni)->FindClass(jni, "java/lang/ref/WeakReference");
		jclass th = (*jni)->FindClass(jni, "java/lang/Thread");
		S.weak_get = w ? (*jni)->GetMethodID(jni, w, "get", "()Ljava/lang/Object;") : NULL;
		S.is_alive = th ? (*jni)->GetMethodID(jni, th, "isAlive", "()Z") : NULL;
		ag_jni_clear(jni, "Rt's fields");
		if (!S.f_gen || !S.f_accounts || !S.f_live || !S.f_base || !S.f_shift || !S.f_align ||
		    !S.f_all || !S.f_nall || !S.f_dyn || !S.f_cgen || !S.f_depth || !S.f_pn || !S.f_off ||
		    !S.weak_get || !S.is_alive) {
			snprintf(why, cap, "the agent's class heapsh.agent.Rt is not as the agent expects");
			return false;
		}
		S.rt = (*jni)->NewGlobalRef(jni, rt);
	}
	if (!S.object_array) {
		jclass c = (*jni)->FindClass(jni, "[Ljava/lang/Object;");
		S.object_array = c ? (*jni)->NewGlobalRef(jni, c) : NULL;
		ag_jni_clear(jni, "Object[]");
		if (!S.object_array) {
			snprintf(why, cap, "cannot find the class Object[]");
			return false;
		}
	}
	return true;
}

void JNICALL ag_sites_on_gc(jvmtiEnv *e)
{
	(void)e;
	atomic_fetch_add(&S.gcs, 1);
}

void ag_sites_discard(JNIEnv *jni)
{
	ag_sites_fold(jni, FOLD_DROP);
	S.java = false;
	S.ctx = false;
	S.java_bytes = 0;
	if (jni) {
		freeze();
		release_all(jni);
		thaw();
	}
	pthread_mutex_lock(&R.lock);
	uint32_t ns = atomic_load(&S.nsites);
	for (uint32_t i = 0; i < ns; i++) {
		struct site *s = &S.sites[i / SITE_CHUNK][i % SITE_CHUNK];
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
	for (uint32_t c = 0; c < MAX_SITE_CHUNKS && S.sites[c]; c++) {
		free(S.sites[c]);
		S.sites[c] = NULL;
	}
	atomic_store(&S.nsites, 0);
	pthread_mutex_unlock(&R.lock);
}

void ag_sites_measure(JNIEnv *jni, struct walk_counts *w)
{
	freeze();
	for (struct tstate *t = atomic_load(&S.threads); t; t = t->next) {
		sweep(jni, t);
		for (uint32_t i = 0; i < t->n; i++) {
			const struct entry *x = &t->e[i];
			if (x->key < w->n) {
				double weight = x->words & SAMPLED_BIT ? LIVE_RATE : 1;
				w->objs[x->key] += weight;
				w->bytes[x->key] += (double)(x->words & ~SAMPLED_BIT) * 8 * weight;
				w->tracked++;
			}
		}
	}
	/* Ended threads whose objects have all died go (their tables nobody else sweeps). */
	unlink_ended();
	thaw();
}

void ag_sites_summary(void)
{
	uint64_t classes = 0, most = 0;
	uint32_t ns = atomic_load(&S.nsites);
	for (uint32_t i = 0; i < ns; i++) {
		struct site *s = &S.sites[i / SITE_CHUNK][i % SITE_CHUNK];
		uint64_t n = 0;
		for (struct dyn *d = atomic_load(&s->dyn); d; d = d->next)
			n++;
		classes += n;
		if (n > most)
			most = n;
	}
	ag_log("%u sites; %llu classes seen at sites whose class is the object's, at most %llu at one",
	       ns, (unsigned long long)classes, (unsigned long long)most);
	ag_log("Java counters %s; %llu first objects of a key on a thread, %llu objects counted by "
	       "the agent's natives, %llu buffers of objects followed", S.java ? "on" : "off",
	       (unsigned long long)atomic_load(&S.firsts), (unsigned long long)atomic_load(&S.natives),
	       (unsigned long long)atomic_load(&S.flushes));
	if (S.ctx)
		ag_log("calling contexts: %llu first objects of a key on a thread, %llu stack walks "
		       "for the frames under instrumented code (%llu found the frames of the last)",
		       (unsigned long long)atomic_load(&S.ctx_firsts),
		       (unsigned long long)(atomic_load(&S.seeds) + atomic_load(&S.seeds_same)),
		       (unsigned long long)atomic_load(&S.seeds_same));
}
