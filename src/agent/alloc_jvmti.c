/*
 * alloc_jvmti.c - allocation recordings seen through JVMTI events
 * (docs/agent.md, "Allocation recordings"): the sampled mode, and the exact
 * mode by events (--via jvmti).
 *
 * Mechanism: JVMTI SampledObjectAlloc (JEP 331) in the recording's own
 * environment. In sampled mode the VM samples on average one allocation per
 * `interval` bytes of each thread; in exact mode the interval is 0, which
 * the VM documents as "sample every allocation", so every object the VM
 * allocates for Java code, reflection, clone, JNI or itself is seen. Each
 * event walks the allocating thread's stack (ag_rec_stack_key: calling
 * context and account) and counts the object under its key; the object is
 * then tagged with its key and size in the recording's environment.
 *
 * Live counts. Sampled mode counts deaths: each tagged object's weight is
 * added to its key when tagged and taken away by the JVM's ObjectFree event
 * when the object dies (the tag carries key and size), so a read is a full
 * GC and a flush of the pending events (SetEventNotificationMode on
 * ObjectFree posts them before it returns, JDK 16 and later: JDK-8212879),
 * with no pass over the heap; the events come after the GCs that free
 * tagged objects, from the VM or service thread, one per sampled object
 * (one in about 512 KB allocated at the default interval). Exact mode by
 * events tags every object, too many deaths to hear one by one: its read
 * is one walk over the tagged objects after the full GC (IterateThroughHeap,
 * tagged objects only). Both are exact at the moment of the read.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder.h"

#define CLASS_BIT (1LL << 62)	/* class tags (ag_rec_class_of) */
#define MAX_WORDS 0x1fffffffLL	/* object sizes kept in tags, in 8-byte words */

/* weight: how many objects one recorded object of size bytes stands for. */
static double weight(jlong size)
{
	if (R.mech != M_SAMPLED || size <= 0)
		return 1.0;
	/* A sample falls in an object of s bytes with probability 1 - exp(-s/interval). */
	return 1.0 / -expm1(-(double)size / (double)R.interval);
}

static void record(jvmtiEnv *e, JNIEnv *jni, jobject obj, jclass klass, jlong size)
{
	bool array = false;
	uint32_t cls = ag_rec_class_of(e, klass, &array), key = NONE;
	jint len = array ? (*jni)->GetArrayLength(jni, (jarray)obj) : 0;
	if (cls == NONE || ag_rec_stack_key(e, jni, cls, NONE, NULL, 0, NONE, 0, &key) != 0) {
		atomic_fetch_add(&R.dropped, 1);
		return;
	}
	double w = weight(size);
	jlong words = size / 8 > MAX_WORDS ? MAX_WORDS : size / 8;
	pthread_mutex_lock(&R.lock);
	struct key *k = KEY(key);
	k->objs += w;
	k->bytes += w * (double)size;
	k->elems += w * (double)len;
	if (R.counts_deaths) {
		/* as on_free will take it away: from the size the tag keeps */
		double wt = weight(words * 8);
		k->tagged_objs += wt;
		k->tagged_bytes += wt * (double)(words * 8);
		R.tagged++;
	}
	R.events++;
	pthread_mutex_unlock(&R.lock);
	if (R.live != LIVE_NONE) {
		(*e)->SetTag(e, obj, (jlong)key + 1 + (words << 32));
		ag_rsv_offer(jni, obj, key);
	}
}

static void JNICALL on_alloc(jvmtiEnv *e, JNIEnv *jni, jthread thread, jobject obj, jclass klass,
			     jlong size)
{
	(void)thread;
	if (ag_in_agent_thread || !atomic_load(&R.on))
		return;
	atomic_fetch_add(&R.inflight, 1);
	if (atomic_load(&R.on) && e == R.env)
		record(e, jni, obj, klass, size);
	atomic_fetch_sub(&R.inflight, 1);
}

/* add: *a += v, with no lock (ObjectFree comes from the VM or service thread). */
static void add(_Atomic double *a, double v)
{
	double old = atomic_load(a);
	while (!atomic_compare_exchange_weak(a, &old, old + v))
		;
}

/*
 * on_free: ObjectFree: a tagged object died; its weight leaves its key.
 * Runs on the VM thread (JDK 17), the service thread or the thread that
 * flushes the events (later JDKs): no JNI, no lock, no allocation.
 */
static void JNICALL on_free(jvmtiEnv *e, jlong tag)
{
	atomic_fetch_add(&R.inflight, 1);
	if (e == R.env && tag > 0 && !(tag & CLASS_BIT)) {
		uint32_t k = (uint32_t)(tag & 0xffffffff) - 1;
		jlong words = (tag >> 32) & MAX_WORDS;
		struct key *chunk = k / KEY_CHUNK < MAX_KEY_CHUNKS ? R.keys[k / KEY_CHUNK] : NULL;
		if (chunk) {
			double wt = weight(words * 8);
			add(&chunk[k % KEY_CHUNK].freed_objs, wt);
			add(&chunk[k % KEY_CHUNK].freed_bytes, wt * (double)(words * 8));
			atomic_fetch_add(&R.freed, 1);
		}
	}
	atomic_fetch_sub(&R.inflight, 1);
}

bool ag_jvmti_begin(char *why, size_t cap)
{
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof caps);
	caps.can_generate_sampled_object_alloc_events = 1;
	caps.can_tag_objects = 1;
	caps.can_get_line_numbers = 1;
	caps.can_get_source_file_name = 1;
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.SampledObjectAlloc = on_alloc;
	/* Sampled objects are few: their deaths are heard (on_free) rather than walked for. */
	bool deaths = R.mech == M_SAMPLED && R.live != LIVE_NONE;
	if (deaths) {
		caps.can_generate_object_free_events = 1;
		cb.ObjectFree = on_free;
	}
	if (!ag_rec_env(&caps, &cb, "allocation sampling", why, cap))
		return false;
	jvmtiEnv *e = R.env;
	R.counts_deaths = deaths && (*e)->SetEventNotificationMode(e, JVMTI_ENABLE, JVMTI_EVENT_OBJECT_FREE,
								   NULL) == JVMTI_ERROR_NONE;
	jvmtiError err = (*e)->SetHeapSamplingInterval(e, R.mech == M_SAMPLED ? (jint)R.interval : 0);
	if (err != JVMTI_ERROR_NONE) {
		snprintf(why, cap, "SetHeapSamplingInterval failed (JVMTI error %d)", err);
		return false;
	}
	R.exists = true;
	atomic_store(&R.on, 1);
	err = (*e)->SetEventNotificationMode(e, JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
	if (err != JVMTI_ERROR_NONE) {
		atomic_store(&R.on, 0);
		snprintf(why, cap, "the JVM refused SampledObjectAlloc events (JVMTI error %d)", err);
		return false;
	}
	return true;
}

void ag_jvmti_halt(void)
{
	if (R.env)
		(*R.env)->SetEventNotificationMode(R.env, JVMTI_DISABLE,
						   JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
	/* No event callback is running any more once this returns. */
	for (int k = 0; k < 2000 && atomic_load(&R.inflight) > 0; k++)
		usleep(1000);
}

static jint JNICALL walk_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud)
{
	struct walk_counts *w = ud;
	(void)class_tag;
	(void)length;
	jlong t = *tag_ptr;
	if (t <= 0 || (t & CLASS_BIT))
		return 0;
	uint32_t k = (uint32_t)(t & 0xffffffff) - 1;
	if (k < w->n) {
		double wt = weight(size);
		w->objs[k] += wt;
		w->bytes[k] += wt * (double)size;
		w->tracked++;
	}
	return 0;
}

bool ag_jvmti_measure(struct walk_counts *w, char *why, size_t cap)
{
	if (R.counts_deaths) {
		/* Enabling ObjectFree again posts the deaths the last GC left pending, then returns. */
		jvmtiError err = (*R.env)->SetEventNotificationMode(R.env, JVMTI_ENABLE, JVMTI_EVENT_OBJECT_FREE,
								   NULL);
		if (err != JVMTI_ERROR_NONE) {
			snprintf(why, cap, "the JVM refused to post ObjectFree events (JVMTI error %d)", err);
			return false;
		}
		pthread_mutex_lock(&R.lock);
		for (uint32_t k = 0; k < w->n && k < R.nkeys; k++) {
			struct key *key = KEY(k);
			double o = key->tagged_objs - atomic_load(&key->freed_objs);
			double b = key->tagged_bytes - atomic_load(&key->freed_bytes);
			w->objs[k] = o > 0.5 ? o : 0;	/* rounding of the sums */
			w->bytes[k] = o > 0.5 && b > 0 ? b : 0;
		}
		uint64_t freed = atomic_load(&R.freed);
		w->tracked = R.tagged > freed ? R.tagged - freed : 0;
		pthread_mutex_unlock(&R.lock);
		return true;
	}
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.heap_iteration_callback = walk_cb;
	jvmtiError err = (*R.env)->IterateThroughHeap(R.env, JVMTI_HEAP_FILTER_UNTAGGED, NULL, &cb, w);
	if (err != JVMTI_ERROR_NONE) {
		snprintf(why, cap, "the heap walk for live objects failed (JVMTI error %d)", err);
		return false;
	}
	return true;
}
