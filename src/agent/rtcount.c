/*
 * rtcount.c - the counters an exact recording's rewritten code keeps in Java
 * (Rt.java: first, flush; the reads' fold) and the calling contexts of
 * --depth above 1 (Rt.firstCtx, Rt.seed): what the agent does when Rt calls
 * it once per key or per context rather than per object (docs/agent.md,
 * "Exact recordings by bytecode instrumentation"). sites.c has the sites and
 * the per-object natives; sites.h what the two share.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sites.h"

#define C_META 0		/* Rt's counters: int[] {generation, buffered} */
#define C_COUNTS 1		/* long[]: objects, bytes, elements per (site, account) */
#define C_BUF 2			/* Object[]: objects waiting to be followed */
#define C_KEYS 3		/* int[]: per buffered object, its counter index and size in words */
#define C_THREAD 4		/* WeakReference to the thread */
#define C_KIDS 7		/* calling contexts: int[] {used, then key and site per counter} */

/* The agent's map of a thread's counters of calling contexts (C_KIDS), copied. */
struct kids {
	jint *v;
	jsize n;
};

static jobject elem(JNIEnv *jni, jobjectArray a, jsize i)
{
	jobject o = (*jni)->GetObjectArrayElement(jni, a, i);
	ag_jni_clear(jni, "Rt's counters");
	return o;
}

/* kids_of: counters c's map of calling contexts, copied (v NULL: none, or out of memory). */
static struct kids kids_of(JNIEnv *jni, jobjectArray c)
{
	struct kids k = {NULL, 0};
	jintArray a = elem(jni, c, C_KIDS);
	jsize n = a ? (*jni)->GetArrayLength(jni, a) : 0;
	if (n > 0 && (k.v = malloc((size_t)n * sizeof *k.v))) {
		(*jni)->GetIntArrayRegion(jni, a, 0, n, k.v);
		k.n = n;
	}
	if (a)
		(*jni)->DeleteLocalRef(jni, a);
	return k;
}

/*
 * java_key: the key and site of Java counter index i (objects' counter),
 * through map k when the counters are of calling contexts; NONE: none.
 */
static uint32_t java_key(jlong i, const struct kids *ks, struct site **sp)
{
	if (ks && ks->v) {
		jlong t = i / 3;
		if (i < 0 || i % 3 || t >= ks->v[0] || 2 + 2 * t >= ks->n)
			return NONE;
		uint32_t key = (uint32_t)ks->v[1 + 2 * t], si = (uint32_t)ks->v[2 + 2 * t];
		if (si >= atomic_load(&S.nsites) || key >= R.nkeys)
			return NONE;
		*sp = &S.sites[si / SITE_CHUNK][si % SITE_CHUNK];
		return key;
	}
	uint32_t a = (uint32_t)R.npat + 1;
	jlong k = i / 3;
	if (i < 0 || i % 3 || (uint64_t)(k / a) >= atomic_load(&S.nsites))
		return NONE;
	uint32_t si = (uint32_t)(k / a), acct = (uint32_t)(k % a);
	struct site *s = &S.sites[si / SITE_CHUNK][si % SITE_CHUNK];
	*sp = s;
	return s->key ? atomic_load_explicit(&s->key[acct], memory_order_acquire) : NONE;
}

/*
 * drain: follow the objects buffered in counters c (Rt.flush, or a read on
 * behalf of a thread) and empty the buffer. A read drains another thread's
 * buffer while that thread may be adding to it: an object it adds at that
 * moment may go unfollowed (its live count is then low by one); nothing is
 * counted twice.
 */
static void drain(JNIEnv *jni, struct tstate *t, jobjectArray c, bool clear)
{
	jintArray meta = elem(jni, c, C_META);
	jobjectArray buf = elem(jni, c, C_BUF);
	jintArray keys = elem(jni, c, C_KEYS);
	jint mv[2] = {0, 0};
	if (meta)
		(*jni)->GetIntArrayRegion(jni, meta, 0, 2, mv);
	jsize cap = buf ? (*jni)->GetArrayLength(jni, buf) : 0;
	jint n = mv[1] < 0 ? 0 : mv[1] > cap ? cap : mv[1];
	jint *kv = n ? malloc((size_t)n * 2 * sizeof *kv) : NULL;
	if (kv && keys && (*jni)->GetArrayLength(jni, keys) >= 2 * n)
		(*jni)->GetIntArrayRegion(jni, keys, 0, 2 * n, kv);
	else
		n = 0;
	bool current = (mv[0] & ~CTX_BIT) == (jint)S.gen && S.java && (mv[0] & CTX_BIT ? S.ctx : !S.ctx);
	struct kids ks = current && S.ctx ? kids_of(jni, c) : (struct kids){NULL, 0};
	/* One local frame for the batch: its references go at once, not one by one. */
	bool framed = n && (*jni)->PushLocalFrame(jni, n + 4) == 0;
	for (jint j = 0; j < n; j++) {
		jobject o = elem(jni, buf, j);
		struct site *s = NULL;
		uint32_t key = current && (!S.ctx || ks.v) ? java_key(kv[2 * j], &ks, &s) : NONE;
		if (o && key != NONE) {
			uint32_t v = (uint32_t)kv[2 * j + 1], words = v & ~SAMPLED_BIT;
			jlong size = words ? (jlong)words * 8 : atomic_load_explicit(&s->size, memory_order_relaxed);
			ag_track(jni, t, o, key, size, (v & SAMPLED_BIT) != 0);
		} else if (o) {
			atomic_fetch_add(&R.untracked, 1);
		}
		if (o && !framed)
			(*jni)->DeleteLocalRef(jni, o);
	}
	if (framed)
		(*jni)->PopLocalFrame(jni, NULL);
	free(kv);
	free(ks.v);
	mv[1] = 0;
	if (meta)
		(*jni)->SetIntArrayRegion(jni, meta, 1, 1, &mv[1]);
	/* The thread overwrites its slots; a read lets go of them now, so that they die. */
	for (jsize j = 0; clear && j < cap; j++)
		(*jni)->SetObjectArrayElement(jni, buf, j, NULL);
	ag_jni_clear(jni, "draining Rt's buffer");
	if (meta)
		(*jni)->DeleteLocalRef(jni, meta);
	if (buf)
		(*jni)->DeleteLocalRef(jni, buf);
	if (keys)
		(*jni)->DeleteLocalRef(jni, keys);
}

/* Rt.flush(Object[] c): the thread's buffer is full. */
void JNICALL ag_rt_flush(JNIEnv *jni, jclass rt, jobjectArray c)
{
	(void)rt;
	atomic_fetch_add_explicit(&S.flushes, 1, memory_order_relaxed);
	struct tstate *t = ag_tenter();
	if (!t) {
		ag_sites_dropped(__LINE__);
		return;
	}
	drain(jni, t, c, false);
	ag_tleave(t);
}

/*
 * grow: Rt's counters in c made long enough for index i + 2, within the
 * recorder's bound; the array, or NULL when there is no room.
 */
static jlongArray grow(JNIEnv *jni, jobjectArray c, jlongArray counts, jlong i)
{
	jsize n = (*jni)->GetArrayLength(jni, counts);
	if (i + 2 < n)
		return counts;
	jlong want = n * 2 > i + 3 ? (jlong)n * 2 : i + 3 + 3 * 64;
	if (want > INT32_MAX / 2 || !ag_rec_room((size_t)(want - n) * 8))
		return NULL;
	jlongArray bigger = (*jni)->NewLongArray(jni, (jsize)want);
	jlong *old = n ? malloc((size_t)n * sizeof *old) : NULL;
	if (!bigger || (n && !old)) {
		ag_jni_clear(jni, "Rt's counters");
		R.bytes -= (size_t)(want - n) * 8;
		free(old);
		return NULL;
	}
	if (n) {
		(*jni)->GetLongArrayRegion(jni, counts, 0, n, old);
		(*jni)->SetLongArrayRegion(jni, bigger, 0, n, old);
		free(old);
	}
	(*jni)->SetObjectArrayElement(jni, c, C_COUNTS, bigger);
	S.java_bytes += (size_t)(want - n) * 8;
	return bigger;
}

/* first_size: the bytes of obj, the first object of a site of a known class (len: an array's length). */
static jlong first_size(struct site *s, jobject obj, jint len)
{
	if (s->kind != S_NEW)
		return array_size(s->elem, len);
	jlong size = atomic_load_explicit(&s->size, memory_order_relaxed);
	if (!size && (*R.env)->GetObjectSize(R.env, obj, &size) == JVMTI_ERROR_NONE)
		atomic_store_explicit(&s->size, size, memory_order_relaxed);
	return size;
}

/* let_go_counts: the local references to a thread's counters (room_: grown, maybe the same) let go. */
static void let_go_counts(JNIEnv *jni, jlongArray room_, jlongArray counts)
{
	ag_jni_clear(jni, "Rt's counters");
	if (room_ && room_ != counts)
		(*jni)->DeleteLocalRef(jni, room_);
	if (counts)
		(*jni)->DeleteLocalRef(jni, counts);
}

/*
 * Rt.first(Object o, int site, int account, int len, Object[] c): the first
 * object of its key on this thread (len: an array's length, -1: not an
 * array). Counted here; the key made, its size learnt and the counters in c
 * grown, so that Rt counts the next ones itself. Anything else (a site of
 * another recording, counters of another, --depth above 1, no room) is
 * counted by the natives as before.
 */
void JNICALL ag_rt_first(JNIEnv *jni, jclass rt, jobject obj, jint site, jint account, jint len,
			 jobjectArray c)
{
	(void)rt;
	uint32_t acct = account_arg(account);
	atomic_fetch_add_explicit(&S.firsts, 1, memory_order_relaxed);
	if (!atomic_load_explicit(&R.on, memory_order_relaxed) || ag_in_hook || ag_in_agent_thread || !obj)
		return;
	struct site *s = S.java ? site_of(site) : NULL;
	jintArray meta = s && c ? elem(jni, c, C_META) : NULL;
	jint g = -1;
	if (meta) {
		(*jni)->GetIntArrayRegion(jni, meta, 0, 1, &g);
		(*jni)->DeleteLocalRef(jni, meta);
	}
	if (!s || g != (jint)S.gen || (s->kind != S_NEW && s->kind != S_ARRAY) || R.depth != 1) {
		ag_record(jni, obj, site, acct, false, NULL, 0);
		return;
	}
	struct tstate *t = ag_tenter();
	if (!t) {
		ag_sites_dropped(__LINE__);
		return;
	}
	uint32_t key = ag_site_key(s, &s->key[acct], s->cls, acct);
	if (key == NONE) {
		ag_sites_dropped(__LINE__);
		ag_tleave(t);
		return;
	}
	jlong size = first_size(s, obj, len);
	jlong i = ((jlong)(site & ((1 << SITE_BITS) - 1)) * (R.npat + 1) + acct) * 3;
	jlongArray counts = elem(jni, c, C_COUNTS);
	jlongArray room_ = counts ? grow(jni, c, counts, i) : NULL;
	if (room_) {
		jlong v[3];
		(*jni)->GetLongArrayRegion(jni, room_, (jsize)i, 3, v);
		v[0]++;
		if (s->kind == S_ARRAY) {
			v[1] += size;
			v[2] += len;
		}
		(*jni)->SetLongArrayRegion(jni, room_, (jsize)i, 3, v);
	} else {
		ag_add_to_key(key, size, len);	/* no room for this thread's counters: counted here, every time */
	}
	let_go_counts(jni, room_, counts);
	ag_track(jni, t, obj, key, size, false);
	ag_tleave(t);
}

/*
 * ctx_key: the key of an object of class cls at site s for acct in the calling context
 * on the thread's stack of frames st (Rt.java: a header of CTX_HDR, then
 * per frame {method, line, hash, unused}; pushed: the allocating method's own
 * frame is its top): the site's node under its R.depth - 1 nearest callers.
 * Frames of another recording's methods are left out. NONE when full.
 */
uint32_t ag_ctx_key(JNIEnv *jni, jlongArray st, jint pushed, const struct site *s, uint32_t cls,
		    uint32_t acct)
{
	jsize len = st ? (*jni)->GetArrayLength(jni, st) : 0;
	jlong d = 0;
	if (len >= CTX_HDR)
		(*jni)->GetLongArrayRegion(jni, st, 0, 1, &d);
	if (d < 0 || d > CTX_CAP || CTX_HDR + 4 * d > len)
		d = 0;
	jlong hi = pushed ? d - 1 : d, want = (jlong)R.depth - 1;
	jlong lo = hi - want + 1 < 1 ? 1 : hi - want + 1;
	jlong n = hi >= lo ? hi - lo + 1 : 0;
	jlong *fr = n ? malloc((size_t)n * 4 * sizeof *fr) : NULL;
	if (n && !fr)
		return NONE;
	if (n)
		(*jni)->GetLongArrayRegion(jni, st, (jsize)(4 * lo + 4), (jsize)(4 * n), fr);
	ag_jni_clear(jni, "Rt's stack of frames");
	uint32_t key = NONE, parent = NONE;
	pthread_mutex_lock(&R.lock);
	for (jlong j = 0; j < n; j++) {
		uint64_t m = (uint64_t)fr[4 * j] & ~CTX_COMPUTED;
		uint32_t mi = (uint32_t)(m & ((1u << SITE_BITS) - 1));
		if (m >> SITE_BITS != S.gen || mi >= R.nmethods)
			continue;
		int32_t line = fr[4 * j + 1] > 0 && fr[4 * j + 1] <= INT32_MAX ? (int32_t)fr[4 * j + 1] : -1;
		if ((parent = ag_rec_node(parent, mi, line)) == NONE)
			goto out;
	}
	uint32_t node = ag_rec_node(parent, s->method, s->line);
	if (node != NONE)
		key = ag_rec_key(node, cls, acct);
out:
	pthread_mutex_unlock(&R.lock);
	free(fr);
	return key;
}

/*
 * kid: counter index i (of key and site index si) into counters c's map of
 * calling contexts (C_KIDS), grown within the recorder's bound; false when
 * there is no room.
 */
static bool kid(JNIEnv *jni, jobjectArray c, jint used, uint32_t key, uint32_t si)
{
	jintArray a = elem(jni, c, C_KIDS);
	jsize n = a ? (*jni)->GetArrayLength(jni, a) : 0;
	jsize need = 3 + 2 * used;
	if (need > n) {
		jsize want = n * 2 > need ? n * 2 : need + 2 * 64;
		if (want > INT32_MAX / 8 || !ag_rec_room((size_t)(want - n) * 4)) {
			if (a)
				(*jni)->DeleteLocalRef(jni, a);
			return false;
		}
		jintArray b = (*jni)->NewIntArray(jni, want);
		jint *old = n ? malloc((size_t)n * sizeof *old) : NULL;
		if (!b || (n && !old)) {
			ag_jni_clear(jni, "Rt's map of contexts");
			R.bytes -= (size_t)(want - n) * 4;
			free(old);
			if (a)
				(*jni)->DeleteLocalRef(jni, a);
			return false;
		}
		if (n) {
			(*jni)->GetIntArrayRegion(jni, a, 0, n, old);
			(*jni)->SetIntArrayRegion(jni, b, 0, n, old);
			free(old);
		}
		S.java_bytes += (size_t)(want - n) * 4;
		(*jni)->SetObjectArrayElement(jni, c, C_KIDS, b);
		if (a)
			(*jni)->DeleteLocalRef(jni, a);
		a = b;
	}
	jint v[2] = {(jint)key, (jint)si}, u = used + 1;
	(*jni)->SetIntArrayRegion(jni, a, 1 + 2 * used, 2, v);
	(*jni)->SetIntArrayRegion(jni, a, 0, 1, &u);
	ag_jni_clear(jni, "Rt's map of contexts");
	(*jni)->DeleteLocalRef(jni, a);
	return true;
}

/*
 * Rt.firstCtx(Object o, int site, int account, int len, Object[] c, long[]
 * stack, int pushed): the first object of its (site, account, calling
 * context) key on this thread, counted here; the key made from the frames
 * on stack (ctx_key), a counter for it in c, whose index is returned so
 * that Rt counts the next ones itself. -1: counted here for good (a site
 * of another recording, a dynamic one, no room).
 */
jint JNICALL ag_rt_first_ctx(JNIEnv *jni, jclass rt, jobject obj, jint site, jint account, jint len,
			     jobjectArray c, jlongArray st, jint pushed)
{
	(void)rt;
	uint32_t acct = account_arg(account);
	atomic_fetch_add_explicit(&S.ctx_firsts, 1, memory_order_relaxed);
	if (!atomic_load_explicit(&R.on, memory_order_relaxed) || ag_in_hook || ag_in_agent_thread || !obj)
		return -1;
	struct site *s = S.ctx ? site_of(site) : NULL;
	jintArray meta = s && c ? elem(jni, c, C_META) : NULL;
	jint mv[5] = {-1, 0, 0, 0, 0};
	if (meta && (*jni)->GetArrayLength(jni, meta) >= 5)
		(*jni)->GetIntArrayRegion(jni, meta, 0, 5, mv);
	if (meta)
		(*jni)->DeleteLocalRef(jni, meta);
	if (!s || mv[0] != (jint)(S.gen | CTX_BIT) || (s->kind != S_NEW && s->kind != S_ARRAY)) {
		ag_record(jni, obj, site, acct, false, NULL, 0);
		return -1;
	}
	struct tstate *t = ag_tenter();
	if (!t) {
		ag_sites_dropped(__LINE__);
		return -1;
	}
	/*
	 * Tables full: the context still gets a counter of the thread's, of no
	 * key, which the reads count as dropped, so that Rt asks no more.
	 */
	uint32_t key = ag_ctx_key(jni, st, pushed, s, s->cls, acct);
	jlong size = first_size(s, obj, len);
	/*
	 * The map's first int counts the counters in use (Rt's table knows them
	 * by key). Counter 0 is the thread's dropped one, of no key: a context
	 * the tables have no room for is counted there (and read as dropped), so
	 * that Rt does not ask again.
	 */
	jintArray ka = elem(jni, c, C_KIDS);
	jint used = 0;
	if (ka) {
		(*jni)->GetIntArrayRegion(jni, ka, 0, 1, &used);
		(*jni)->DeleteLocalRef(jni, ka);
	}
	jlong i = (jlong)used * 3;
	uint32_t si = (uint32_t)site & ((1u << SITE_BITS) - 1);
	jlongArray counts = elem(jni, c, C_COUNTS);
	if (used == 0 && counts) {
		jlongArray r = grow(jni, c, counts, 0);
		if (r && kid(jni, c, 0, NONE, 0)) {
			used = 1;
			i = 3;
		}
		if (r && r != counts) {
			(*jni)->DeleteLocalRef(jni, counts);
			counts = r;
		}
	}
	jlongArray room_ = counts && used > 0 && key != NONE ? grow(jni, c, counts, i) : NULL;
	if (room_ && !kid(jni, c, used, key, si)) {
		if (room_ != counts)
			(*jni)->DeleteLocalRef(jni, room_);
		room_ = NULL;
	}
	if (room_) {
		jlong v[3] = {1, s->kind == S_ARRAY ? size : 0, s->kind == S_ARRAY ? len : 0};
		(*jni)->SetLongArrayRegion(jni, room_, (jsize)i, 3, v);
	} else if (used > 0) {
		ag_sites_dropped(__LINE__);	/* no room: the context goes to counter 0 from now on */
		i = 0;
	} else if (key == NONE) {
		ag_sites_dropped(__LINE__);
	} else {
		ag_add_to_key(key, size, len);	/* no room for this thread's counters: counted here, every time */
	}
	let_go_counts(jni, room_, counts);
	if (key != NONE && (room_ || used == 0))
		ag_track(jni, t, obj, key, size, false);
	ag_tleave(t);
	return room_ || used > 0 ? (jint)i : -1;
}

/*
 * Rt.seed(Object[] known): the frames under the method whose entry (or
 * allocation) asks: methods running since before the recording, or not
 * instrumented, the bottom of a thread's stack of frames whenever it enters
 * instrumented code from code that is not. Returned as {generation, n, n
 * frames as the stack walk gave them (jmethodID, location), then the frames
 * outermost first as {method, line} pairs (at most R.depth)}; or the one
 * of the thread's earlier answers (known) the walk finds the same frames
 * in, which spares resolving them (a server's worker loop enters rewritten
 * code from the same few frames for every request). NULL: none.
 */
jlongArray JNICALL ag_rt_seed(JNIEnv *jni, jclass rt, jobjectArray known)
{
	(void)rt;
	if (!S.ctx || !atomic_load_explicit(&R.on, memory_order_relaxed) || ag_in_hook || ag_in_agent_thread)
		return NULL;
	int depth = R.depth < 256 ? (int)R.depth : 256, want = depth + MAX_OWN + 1, skip = 0;
	jvmtiFrameInfo *fr = malloc((size_t)want * sizeof *fr);
	jint count = 0;
	if (!fr || (*R.env)->GetStackTrace(R.env, NULL, 0, want, fr, &count) != JVMTI_ERROR_NONE)
		count = 0;
	for (bool own = true; own && skip < count; skip += own) {
		own = false;
		for (int i = 0; i < S.nown && !own; i++)
			own = S.own[i] == fr[skip].method;
	}
	skip++;		/* the method entering */
	int m = count - skip < depth ? count - skip : depth;
	if (m <= 0) {
		free(fr);
		return NULL;
	}
	/* The frames of an earlier answer: that answer. */
	jlong *raw = malloc((size_t)(2 + 2 * m) * sizeof *raw);
	jlong *old = malloc((size_t)(2 + 2 * m) * sizeof *old);
	jlongArray same = NULL;
	if (raw && old) {
		raw[0] = S.gen;
		raw[1] = m;
		for (int i = 0; i < m; i++) {
			raw[2 + 2 * i] = (jlong)(intptr_t)fr[skip + i].method;
			raw[3 + 2 * i] = fr[skip + i].location;
		}
		jsize nk = known ? (*jni)->GetArrayLength(jni, known) : 0;
		for (jsize k = 0; k < nk && !same; k++) {
			jlongArray x = (jlongArray)(*jni)->GetObjectArrayElement(jni, known, k);
			if (x && (*jni)->GetArrayLength(jni, x) >= 2 + 2 * m) {
				(*jni)->GetLongArrayRegion(jni, x, 0, 2 + 2 * m, old);
				if (!memcmp(old, raw, (size_t)(2 + 2 * m) * sizeof *raw))
					same = x;
			}
			if (x && !same)
				(*jni)->DeleteLocalRef(jni, x);
		}
		ag_jni_clear(jni, "Rt.seed");
	}
	free(old);
	atomic_fetch_add_explicit(same ? &S.seeds_same : &S.seeds, 1, memory_order_relaxed);
	if (same || !raw) {
		free(fr);
		free(raw);
		return same;
	}
	uint32_t *mi = malloc((size_t)m * sizeof *mi);
	int32_t *line = malloc((size_t)m * sizeof *line);
	jlongArray a = NULL;
	if (mi && line && ag_rec_frames(R.env, jni, fr + skip, m, mi, line))
		a = (*jni)->NewLongArray(jni, 2 + 4 * m);
	if (a) {
		(*jni)->SetLongArrayRegion(jni, a, 0, 2 + 2 * m, raw);
		for (int i = 0; i < m; i++) {
			int j = m - 1 - i;	/* outermost first */
			jlong v[2] = {mi[j] >> SITE_BITS ? 0 : (jlong)(S.gen << SITE_BITS | mi[j]), line[j]};
			(*jni)->SetLongArrayRegion(jni, a, 2 + 2 * m + 2 * i, 2, v);
		}
	}
	ag_jni_clear(jni, "Rt.seed");
	free(fr);
	free(raw);
	free(mi);
	free(line);
	return a;
}

/* alive: whether the thread of counters c still runs. */
static bool alive(JNIEnv *jni, jobjectArray c)
{
	jobject w = elem(jni, c, C_THREAD);
	jobject th = w ? (*jni)->CallObjectMethod(jni, w, S.weak_get) : NULL;
	bool on = th && (*jni)->CallBooleanMethod(jni, th, S.is_alive);
	ag_jni_clear(jni, "Rt's thread");
	if (th)
		(*jni)->DeleteLocalRef(jni, th);
	if (w)
		(*jni)->DeleteLocalRef(jni, w);
	return on;
}

/*
 * add: the counters of c into per-key totals (objs, bytes, elems, n keys),
 * or into the keys' own atomics when into_keys (a thread that has ended, or
 * the recording's end). Counters of another recording count nothing.
 */
static void add(JNIEnv *jni, jobjectArray c, double *objs, double *bytes, double *elems, uint32_t n,
		bool into_keys, uint64_t *dropped_now)
{
	jlongArray counts = elem(jni, c, C_COUNTS);
	jsize len = counts ? (*jni)->GetArrayLength(jni, counts) : 0;
	jlong *v = len ? malloc((size_t)len * sizeof *v) : NULL;
	if (v)
		(*jni)->GetLongArrayRegion(jni, counts, 0, len, v);
	struct kids ks = S.ctx && v ? kids_of(jni, c) : (struct kids){NULL, 0};
	for (jsize i = 0; v && i + 2 < len; i += 3) {
		if (!v[i])
			continue;
		struct site *s = NULL;
		uint32_t key = !S.ctx || ks.v ? java_key(i, &ks, &s) : NONE;
		if (key == NONE) {
			/* Dropped: for good when the counters end, else as of this fold. */
			if (into_keys)
				atomic_fetch_add(&R.dropped, (uint64_t)v[i]);
			else
				*dropped_now += (uint64_t)v[i];
			continue;
		}
		uint64_t b = s->kind == S_NEW ? (uint64_t)v[i] * (uint64_t)atomic_load(&s->size)
					      : (uint64_t)v[i + 1];
		if (into_keys) {
			struct key *k = KEY(key);
			atomic_fetch_add(&k->n_objs, (uint64_t)v[i]);
			atomic_fetch_add(&k->n_bytes, b);
			atomic_fetch_add(&k->n_elems, (uint64_t)v[i + 2]);
		} else if (key < n) {
			objs[key] += (double)v[i];
			bytes[key] += (double)b;
			elems[key] += (double)v[i + 2];
		}
	}
	free(v);
	free(ks.v);
	if (counts)
		(*jni)->DeleteLocalRef(jni, counts);
}

/* stale: counters c belong to no recording now (its thread makes new ones). */
static void stale(JNIEnv *jni, jobjectArray c)
{
	jintArray meta = elem(jni, c, C_META);
	jint none = -1;
	if (meta) {
		(*jni)->SetIntArrayRegion(jni, meta, 0, 1, &none);
		(*jni)->DeleteLocalRef(jni, meta);
	}
}

/* no_cache: Rt.dyn emptied (its classes let go). */
static void no_cache(JNIEnv *jni)
{
	jclass oc = (*jni)->FindClass(jni, "java/lang/Object");
	jobjectArray none = oc ? (*jni)->NewObjectArray(jni, 0, oc, NULL) : NULL;
	if (none)
		(*jni)->SetStaticObjectField(jni, S.rt, S.f_dyn, none);
	if (none)
		(*jni)->DeleteLocalRef(jni, none);
	if (oc)
		(*jni)->DeleteLocalRef(jni, oc);
	ag_jni_clear(jni, "Rt.dyn");
}

void ag_sites_fold(JNIEnv *jni, int how)
{
	if (!S.rt || !jni)
		return;
	if (how != FOLD_READ) {
		(*jni)->SetStaticIntField(jni, S.rt, S.f_off, 1);
		(*jni)->SetStaticIntField(jni, S.rt, S.f_gen, 0);
		(*jni)->SetStaticIntField(jni, S.rt, S.f_cgen, 0);
		no_cache(jni);
	}
	pthread_mutex_lock(&R.lock);
	uint32_t n = R.nkeys;
	pthread_mutex_unlock(&R.lock);
	double *t = calloc((size_t)n * 3 + 1, sizeof *t);
	uint64_t dropped_now = 0;
	struct tstate *ts = how == FOLD_DROP ? NULL : ag_tstate();
	if ((*jni)->MonitorEnter(jni, S.rt) != JNI_OK) {
		ag_jni_clear(jni, "Rt's lock");
		free(t);
		return;
	}
	jobjectArray all = (*jni)->GetStaticObjectField(jni, S.rt, S.f_all);
	jint nall = (*jni)->GetStaticIntField(jni, S.rt, S.f_nall), kept = 0;
	jsize cap = all ? (*jni)->GetArrayLength(jni, all) : 0;
	if (nall > cap)
		nall = cap;
	for (jint i = 0; i < nall; i++) {
		jobjectArray c = elem(jni, all, i);
		if (!c)
			continue;
		bool keep = how == FOLD_READ && alive(jni, c);
		if (how != FOLD_DROP) {
			if (R.live != LIVE_NONE && ts && S.java)
				drain(jni, ts, c, true);
			/* Out of memory for the totals: a running thread's counters wait for the next read. */
			if (!keep || t)
				add(jni, c, t, t ? t + n : NULL, t ? t + 2 * n : NULL, n, !keep, &dropped_now);
		}
		if (keep) {
			(*jni)->SetObjectArrayElement(jni, all, kept++, c);
		} else {
			stale(jni, c);
			jlongArray counts = elem(jni, c, C_COUNTS);
			size_t b = counts ? (size_t)(*jni)->GetArrayLength(jni, counts) * 8 : 0;
			b = b > S.java_bytes ? S.java_bytes : b;
			S.java_bytes -= b;
			R.bytes -= b;
			if (counts)
				(*jni)->DeleteLocalRef(jni, counts);
		}
		(*jni)->DeleteLocalRef(jni, c);
	}
	for (jint i = kept; i < nall; i++)
		(*jni)->SetObjectArrayElement(jni, all, i, NULL);
	(*jni)->SetStaticIntField(jni, S.rt, S.f_nall, kept);
	ag_jni_clear(jni, "folding Rt's counters");
	if (all)
		(*jni)->DeleteLocalRef(jni, all);
	(*jni)->MonitorExit(jni, S.rt);
	pthread_mutex_lock(&R.lock);
	if (t || how != FOLD_READ)
		R.j_dropped = dropped_now;
	/* Without totals (out of memory) a read keeps the last fold's; the end moved them all. */
	for (uint32_t k = 0; (t || how != FOLD_READ) && k < R.nkeys; k++) {
		struct key *key = KEY(k);
		key->j_objs = t && k < n ? (uint64_t)t[k] : 0;
		key->j_bytes = t && k < n ? (uint64_t)t[n + k] : 0;
		key->j_elems = t && k < n ? (uint64_t)t[2 * n + k] : 0;
	}
	pthread_mutex_unlock(&R.lock);
	free(t);
}

/*
 * java_on: Rt counts this recording's sites itself when the arrays' layout
 * is known, in their calling contexts with --depth above 1; its settings
 * set. The registry of an earlier recording is let go.
 */
void ag_sites_java(JNIEnv *jni)
{
	if (!S.rt)
		return;
	ag_sites_fold(jni, FOLD_DROP);
	S.java = S.align > 0 && S.f_gen;
	S.ctx = S.java && R.depth > 1;
	uint64_t pn = 1;	/* Rt.pn = P^(depth - 1), wrapping as Java's long does */
	for (uint32_t d = 1; d < R.depth; d++)
		pn *= CTX_P;
	jint base[E_KINDS], shift[E_KINDS];
	for (int k = 0; k < E_KINDS; k++) {
		base[k] = (jint)S.base[k];
		shift[k] = S.scale[k] == 8 ? 3 : S.scale[k] == 4 ? 2 : S.scale[k] == 2 ? 1 : 0;
	}
	jintArray b = (*jni)->GetStaticObjectField(jni, S.rt, S.f_base);
	jintArray sh = (*jni)->GetStaticObjectField(jni, S.rt, S.f_shift);
	if (b && sh && S.align) {
		(*jni)->SetIntArrayRegion(jni, b, 0, E_KINDS, base);
		(*jni)->SetIntArrayRegion(jni, sh, 0, E_KINDS, shift);
		(*jni)->SetStaticLongField(jni, S.rt, S.f_align, S.align);
	}
	(*jni)->SetStaticIntField(jni, S.rt, S.f_accounts, R.npat + 1);
	(*jni)->SetStaticIntField(jni, S.rt, S.f_live, R.live);
	(*jni)->SetStaticIntField(jni, S.rt, S.f_depth, (jint)R.depth);
	(*jni)->SetStaticLongField(jni, S.rt, S.f_pn, (jlong)pn);
	(*jni)->SetStaticIntField(jni, S.rt, S.f_cgen, S.ctx ? (jint)S.gen : 0);
	(*jni)->SetStaticIntField(jni, S.rt, S.f_gen, S.java && !S.ctx ? (jint)S.gen : 0);
	(*jni)->SetStaticIntField(jni, S.rt, S.f_off, 0);
	ag_jni_clear(jni, "Rt's settings");
	if (b)
		(*jni)->DeleteLocalRef(jni, b);
	if (sh)
		(*jni)->DeleteLocalRef(jni, sh);
}

