/*
 * sites.h - what sites.c (the allocation sites, the natives Rt calls per
 * object, the threads' tables of followed objects) and rtcount.c (the
 * counters Rt keeps in Java and the calling contexts) share: private to the
 * two files. Everything here belongs to the recording (recorder.h).
 */
#ifndef HS_AGENT_SITES_H
#define HS_AGENT_SITES_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "recorder.h"

enum { S_NEW, S_ARRAY, S_MULTI, S_DYNAMIC, S_DYNAMIC_MULTI, S_CLONE_VIRTUAL, S_CLONE_SPECIAL, S_KINDS };

#define MAX_MULTI 255		/* dimensions of an array made by multianewarray */
#define MAX_OWN 96
#define CTX_BIT 0x40000000	/* Rt's counters of calling contexts: their generation's mark */
#define CTX_CAP 1024		/* Rt.CAP: frames kept per thread */
#define CTX_HDR 8		/* Rt.HDR: longs before the frames, 4 per frame */
#define CTX_COMPUTED (1ULL << 62)	/* Rt.COMPUTED: a frame's callers' hash is known */
/* Rt.P, the rolling hash's multiplier of calling contexts (Rt.java). */
#define CTX_P 0x9E3779B97F4A7C15ULL
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
	bool cached;		/* in Rt.dyn: Rt counts it under the site `pseudo` */
	jint pseudo;		/* a site of its own (kind S_NEW or S_ARRAY) for Rt's counters; -1 none */
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
	uint32_t words;		/* size in 8-byte words; top bit: one of a sample, stands for LIVE_RATE */
};
#define SAMPLED_BIT 0x80000000u

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

struct sites_state {
	jmethodID own[MAX_OWN];	/* Rt's methods: frames of the agent's own */
	int nown;
	uint32_t gen;		/* the recording's generation, 1..127 */
	struct site *sites[MAX_SITE_CHUNKS];
	_Atomic uint32_t nsites;
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
	/* Rt's Java counters (fold()): the class, its static fields, whether they count now. */
	jclass rt;
	jfieldID f_gen, f_accounts, f_live, f_base, f_shift, f_align, f_all, f_nall;
	jfieldID f_dyn, f_cgen, f_depth, f_pn, f_off;
	pthread_mutex_t cache_lock;	/* Rt.dyn's writers */
	jmethodID weak_get, is_alive;
	bool java;		/* Rt counts this recording's sites itself (Rt.gen == S.gen) */
	bool ctx;		/* ... in their calling contexts (Rt.cgen == S.gen, --depth above 1) */
	_Atomic uint64_t firsts, natives, flushes;	/* calls of Rt.first, the other natives, Rt.flush */
	_Atomic uint64_t ctx_firsts, seeds, seeds_same;	/* calls of Rt.firstCtx; of Rt.seed, walks that found new frames or the same */
	size_t java_bytes;	/* the threads' counter arrays, in R.bytes */
};

/* The recording's sites and threads (sites.c defines it). */
extern struct sites_state ag_sites_state;
#define S ag_sites_state

static inline struct site *site_of(jint id)
{
	uint32_t u = (uint32_t)id, i = u & ((1u << SITE_BITS) - 1);
	if (u >> SITE_BITS != S.gen || i >= atomic_load_explicit(&S.nsites, memory_order_acquire))
		return NULL;
	return &S.sites[i / SITE_CHUNK][i % SITE_CHUNK];
}

/* account_arg: an account number from instrumented code (of an earlier recording: none). */
static inline uint32_t account_arg(jint account)
{
	return account < 0 || account > R.npat ? 0 : (uint32_t)account;
}

/* array_size: the bytes of an array of elem kind and length len; 0: ask JVMTI. */
static inline jlong array_size(int elem, jint len)
{
	if (!S.align || elem < 0)
		return 0;
	return (S.base[elem] + (jlong)len * S.scale[elem] + S.align - 1) / S.align * S.align;
}

/* ag_sites_dropped: an allocation not recorded (tables full, or JVMTI could not say what it is); line: the caller's, for the debug log. */
void ag_sites_dropped(int line);
/* ag_tstate: this thread's table of followed objects, made on first use; NULL when out of memory. */
struct tstate *ag_tstate(void);
/* ag_tenter: the thread may touch its table and the recording (waits while a reader froze it); NULL: no table. ag_tleave ends that. */
struct tstate *ag_tenter(void);
void ag_tleave(struct tstate *t);
/* ag_track: follow obj (of key, size bytes; sampled: one of a sample) with a weak reference until it dies. */
void ag_track(JNIEnv *jni, struct tstate *t, jobject obj, uint32_t key, jlong size, bool sampled);
/* ag_site_key: the key of (s, account) in *slot, made on first use (class cls); NONE when the tables are full. */
uint32_t ag_site_key(struct site *s, _Atomic uint32_t *slot, uint32_t cls, uint32_t account);
/* ag_add_to_key: one object of size bytes (an array of len elements, else len 0) counted under key. */
void ag_add_to_key(uint32_t key, jlong size, jint len);
/*
 * ag_ctx_key: the key of an object of class cls at site s for acct under the
 * calling context on the thread's stack of frames st (rtcount.c); NONE when full.
 */
uint32_t ag_ctx_key(JNIEnv *jni, jlongArray st, jint pushed, const struct site *s, uint32_t cls,
		    uint32_t acct);
/* ag_record: count obj, made at site for account (walking: find the account by a stack walk). */
void ag_record(JNIEnv *jni, jobject obj, jint site, uint32_t account, bool walking, jclass k,
	       jint hash);

/* Rt's natives that rtcount.c implements; sites.c binds them all (ag_sites_bind). */
void JNICALL ag_rt_first(JNIEnv *jni, jclass rt, jobject obj, jint site, jint account, jint len,
			 jobjectArray c);
void JNICALL ag_rt_flush(JNIEnv *jni, jclass rt, jobjectArray c);
jint JNICALL ag_rt_first_ctx(JNIEnv *jni, jclass rt, jobject obj, jint site, jint account, jint len,
			     jobjectArray c, jlongArray st, jint pushed);
jlongArray JNICALL ag_rt_seed(JNIEnv *jni, jclass rt, jobjectArray known);

#endif
