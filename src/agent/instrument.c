/*
 * instrument.c - exact allocation recordings by bytecode instrumentation
 * (docs/agent.md, "Allocation recordings"; the default of `:alloc start
 * --interval exact`): the rewriting of the program's classes.
 *
 * Seeds 001, 002 and 004 all count allocations by rewriting the program's
 * bytecode, which costs far less than an event per allocation: here the
 * transformer (src/agent/java/heapsh/agent/Instrument.java, built on ASM,
 * Debian's libasm-java) runs inside the JVM from this file's JVMTI
 * ClassFileLoadHook, for every class loaded while the recording runs and,
 * through RetransformClasses, for every class loaded before. Rewritten
 * allocation sites call heapsh.agent.Rt (src/agent/java/heapsh/agent/Rt.java,
 * which this file defines in the bootstrap class loader so that every class
 * can call it) with the new object, the site's number and the memory
 * account; Rt's natives and the sites' counters are sites.c's. Methods of
 * accounted classes keep a per-thread account slot in Rt (seed 001's
 * current account).
 *
 * Stopping (halt) retransforms the rewritten classes back to their own
 * bytecode; Rt stays defined (a class of the bootstrap loader cannot be
 * unloaded) but does nothing, and a later recording defines nothing again.
 * The transformer's class loader is let go when the recording is discarded.
 *
 * What is not counted (docs/agent.md): objects the VM allocates itself
 * (exceptions it throws, class mirrors, constant-pool strings, stack
 * traces), objects made inside native methods (JNI), objects in the code of
 * classes JVMTI cannot modify (hidden classes such as method handles' lambda
 * forms) or that failed to transform, objects whose constructor throws, and
 * allocations of methods that were already running when the recording
 * started, until they return.
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"
#include "../base/classname.h"

/* The class files built into the agent (classes.c, made by src/agent/java/embed.py). */
extern const unsigned char ag_classes[];
extern const unsigned long ag_classes_len;

#define RT_NAME "heapsh/agent/Rt"
#define RETRANSFORM_BATCH 100
/* A JNINativeMethod; JNI's fields are not const but are never written. */
#define NATIVE(name, sig, fn) {(char *)(name), (char *)(sig), (void *)(fn)}

static struct {
	jclass rt;		/* global; defined once for the JVM's life */
	jobject rt_module;	/* global */
	jobject loader;		/* the transformer's class loader (global), NULL: none */
	jclass instrument;	/* Instrument (global) */
	jmethodID transform;
	bool pending;		/* begun at start-up: the Java side waits for VMInit */
	atomic_int transforming;	/* the class-file hook rewrites classes */
	atomic_int hooks;	/* class-file hooks running */
	_Atomic uint64_t instrumented, failed;
	_Atomic uint64_t deferred;	/* classes left until linked (DEFER_TAG) */
	_Atomic uint64_t linked;	/* classes linked (link()) before they were put back */
	_Atomic uint64_t prepared;	/* ... and retransformed when linked (on_class_prepare) */
	_Atomic uint64_t hook_ms;	/* time in the class-file hook (HEAPSH_AGENT_DEBUG only) */
	char **names;		/* classes instrumented (internal names), restored at halt */
	uint32_t nnames, capnames;
	char **later;		/* classes loaded inside the transformer, instrumented afterwards */
	uint32_t nlater, caplater;
	jobject *modules;	/* named modules made to read Rt's (global refs) */
	uint32_t nmodules;
	_Atomic uint64_t seen_bytes, missed_bytes;	/* JVMTI samples: all, not seen by the rewritten code */
} B;

/* The JVM's own allocation samples that estimate what the rewritten code misses (MISS_INTERVAL bytes apart). */
#define MISS_INTERVAL (512 * 1024)

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

static char *sig_of(const char *owner)
{
	char *sig = owner ? malloc(strlen(owner) + 3) : NULL;
	if (sig)
		sprintf(sig, "L%s;", owner);
	return sig;
}

/* Instrument.site(owner, method, desc, file, line, type, kind): a new site's number, -1 when full. */
static jint JNICALL in_site(JNIEnv *jni, jclass c, jstring owner, jstring method, jstring desc,
			    jstring file, jint line, jstring type, jint kind)
{
	(void)c;
	char *o = utf(jni, owner), *m = utf(jni, method), *d = utf(jni, desc), *f = utf(jni, file),
	     *ty = utf(jni, type), *sig = sig_of(o);
	/* Only inside the hook, which discard waits for: the sites cannot go meanwhile. */
	jint id = sig && m && d && atomic_load(&B.transforming) ? ag_sites_add(sig, m, d, f, line, ty, kind)
								 : -1;
	free(o);
	free(m);
	free(d);
	free(f);
	free(ty);
	free(sig);
	return id;
}

/*
 * Instrument.method(owner, name, desc, file): the recorder's number of a
 * method whose frames calling contexts name (--depth above 1), -1 when full.
 */
static jint JNICALL in_method(JNIEnv *jni, jclass c, jstring owner, jstring name, jstring desc,
			      jstring file)
{
	(void)c;
	char *o = utf(jni, owner), *m = utf(jni, name), *d = utf(jni, desc), *f = utf(jni, file),
	     *sig = sig_of(o);
	jint id = -1;
	if (sig && m && d && atomic_load(&B.transforming))
		id = ag_sites_method(sig, m, d, f);
	free(o);
	free(m);
	free(d);
	free(f);
	free(sig);
	return id;
}

/* Instrument.account(owner): the account of the class's package, 0: none. */
static jint JNICALL in_account(JNIEnv *jni, jclass c, jstring owner)
{
	(void)c;
	char *o = utf(jni, owner), *sig = sig_of(o);
	jint a = sig ? (jint)ag_rec_account_of(sig) : 0;
	free(o);
	free(sig);
	return a;
}

/* Instrument.failed(owner, why): a class left as it was. */
static void JNICALL in_failed(JNIEnv *jni, jclass c, jstring owner, jstring why)
{
	(void)c;
	atomic_fetch_add(&B.failed, 1);
	if (ag_debug()) {
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
	ag_jni_clear(jni, "resolving Rt");
	if (k)
		(*jni)->DeleteLocalRef(jni, k);
	if (n)
		(*jni)->DeleteLocalRef(jni, n);
}

/* Classes the hook rewrote on this thread (a retransforming thread's own, for retransform_some). */
static __thread uint64_t rewritten_here;

static void JNICALL on_class_file(jvmtiEnv *e, JNIEnv *jni, jclass redefined, jobject loader,
				  const char *name, jobject pd, jint len, const unsigned char *data,
				  jint *new_len, unsigned char **new_data)
{
	(void)redefined;
	(void)pd;
	if (!atomic_load(&B.transforming) || !name || !strncmp(name, "heapsh/agent/", 13) ||
	    e != R.env)
		return;
	if (ag_in_hook) {
		/*
		 * Loaded because the transformer needs it: transforming it now could
		 * need it again (ClassCircularityError). It is instrumented later
		 * (catch_up).
		 */
		later(name);
		return;
	}
	atomic_fetch_add(&B.hooks, 1);
	if (!atomic_load(&B.transforming) || !B.instrument || ag_debug_norewrite() ||
	    (loader && (*jni)->IsSameObject(jni, loader, B.loader))) {
		atomic_fetch_sub(&B.hooks, 1);
		return;
	}
	ag_in_hook++;
	int64_t hook_t0 = ag_debug() ? ag_now_ms() : 0;
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
						     (jboolean)(R.npat > 0), (jint)R.depth);
	}
	if ((*jni)->ExceptionCheck(jni) || !b) {
		ag_jni_clear(jni, "the transformer");
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
			rewritten_here++;
			remember(name);
		}
		(*jni)->DeleteLocalRef(jni, out);
	}
	if (b)
		(*jni)->DeleteLocalRef(jni, b);
	if (n)
		(*jni)->DeleteLocalRef(jni, n);
	if (ag_debug())
		atomic_fetch_add(&B.hook_ms, (uint64_t)(ag_now_ms() - hook_t0));
	ag_in_hook--;
	atomic_fetch_sub(&B.hooks, 1);
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
		ag_jni_clear(jni, "defining Rt");
		snprintf(why, cap, "the JVM refused the agent's class %s", RT_NAME);
		return false;
	}
	if (!ag_sites_bind(jni, k, why, cap))
		return false;
	jobject mod = (*jni)->GetModule(jni, k);
	B.rt_module = mod ? (*jni)->NewGlobalRef(jni, mod) : NULL;
	B.rt = (*jni)->NewGlobalRef(jni, k);
	ag_jni_clear(jni, "Rt");
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
	ag_in_hook++;
	jstring n = (*jni)->NewStringUTF(jni, "heapsh_warm_up/Instrument");
	jbyteArray b = n ? (*jni)->NewByteArray(jni, (jsize)len) : NULL;
	if (b) {
		(*jni)->SetByteArrayRegion(jni, b, 0, (jsize)len, (const jbyte *)bytes);
		for (int accounts = 0; accounts < 4; accounts++) {
			jobject out = (*jni)->CallStaticObjectMethod(jni, B.instrument, B.transform, n, b,
								     (jboolean)(accounts & 1),
								     (jint)(accounts < 2 ? 1 : 2));
			if (out)
				(*jni)->DeleteLocalRef(jni, out);
		}
	}
	ag_jni_clear(jni, "warming the transformer up");
	if (b)
		(*jni)->DeleteLocalRef(jni, b);
	if (n)
		(*jni)->DeleteLocalRef(jni, n);
	ag_in_hook--;
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
		ag_jni_clear(jni, "URLClassLoader");
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
	ag_jni_clear(jni, "loading the transformer");
	JNINativeMethod nm[] = {
		NATIVE("site", "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;"
		       "Ljava/lang/String;ILjava/lang/String;I)I", in_site),
		NATIVE("account", "(Ljava/lang/String;)I", in_account),
		NATIVE("failed", "(Ljava/lang/String;Ljava/lang/String;)V", in_failed),
		NATIVE("method", "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;"
		       "Ljava/lang/String;)I", in_method),
	};
	jmethodID tr = ins ? (*jni)->GetStaticMethodID(jni, ins, "transform",
							"(Ljava/lang/String;[BZI)[B") : NULL;
	if (!tr || (*jni)->RegisterNatives(jni, ins, nm, 4) != 0) {
		ag_jni_clear(jni, "the transformer");
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
	ag_rec_free(mods);
}

/*
 * retransform_some: the m classes k through the class-file hook in one
 * RetransformClasses call; when the JVM refuses the call (one class it
 * cannot redefine, such as one that failed to link, fails the whole call),
 * each half again, down to the classes it refuses, which are counted in
 * B.failed. A call costs the JVM a pass over all its compiled code and
 * classes (about 6 ms on Jetty), so that halving (2 log2 m calls for one bad
 * class) is much cheaper than retrying each class alone.
 */
static void retransform_some(JNIEnv *jni, jclass *k, jint m)
{
	uint64_t before = rewritten_here;
	jvmtiError err = (*R.env)->RetransformClasses(R.env, m, k);
	ag_jni_clear(jni, "RetransformClasses");
	if (err == JVMTI_ERROR_NONE)
		return;
	/* The classes the hook rewrote in a refused call were not redefined. */
	atomic_fetch_sub(&B.instrumented, rewritten_here - before);
	rewritten_here = before;
	if (m > 1) {
		retransform_some(jni, k, m / 2);
		retransform_some(jni, k + m / 2, m - m / 2);
		return;
	}
	atomic_fetch_add(&B.failed, 1);
	if (ag_debug()) {
		char *sig = NULL;
		(*R.env)->GetClassSignature(R.env, k[0], &sig, NULL);
		ag_log("cannot retransform %s (JVMTI error %d)", sig ? sig : "?", err);
		ag_rec_free(sig);
	}
}

/*
 * retransform: the given classes through the class-file hook (instrumented
 * while B.transforming, restored to their own bytecode when not), a batch
 * at a time (retransform_some). When start is set, each batch is told to
 * the starting shell (ag_rec_starting), which may cancel: false then, with
 * the rest left as they are.
 */
static bool retransform(JNIEnv *jni, jclass *k, jint n, bool start)
{
	for (jint i = 0; i < n; i += RETRANSFORM_BATCH) {
		if (start && !ag_rec_starting((uint32_t)i, (uint32_t)n))
			return false;
		retransform_some(jni, k + i, n - i < RETRANSFORM_BATCH ? n - i : RETRANSFORM_BATCH);
	}
	return !start || ag_rec_starting((uint32_t)n, (uint32_t)n);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * code_allocates: whether bytecodes (n bytes, JVMS 6.5) hold new, newarray,
 * anewarray or multianewarray; true also for code it cannot walk (an
 * unknown opcode, a switch running past the end), to be safe.
 */
static bool code_allocates(const unsigned char *b, jint n)
{
	/* Instruction lengths of opcodes 0x00-0xc9 (0: tableswitch, lookupswitch, wide). */
	static const unsigned char len[0xca] = {
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		2, 3, 2, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3,
		3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 0, 0, 1, 1, 1, 1,
		1, 1, 3, 3, 3, 3, 3, 3, 3, 5, 5, 3, 2, 3, 1, 1,
		3, 3, 1, 1, 0, 4, 3, 3, 5, 5,
	};
	for (jint pc = 0; pc < n;) {
		unsigned op = b[pc];
		if (op == 0xbb || op == 0xbc || op == 0xbd || op == 0xc5)
			return true;
		if (op >= sizeof len)
			return true;
		jint l = len[op];
		if (op == 0xaa || op == 0xab) {		/* tableswitch, lookupswitch */
			jint q = (pc + 4) & ~3;
			if ((int64_t)q + 12 > n)
				return true;
			int32_t lo = (int32_t)((uint32_t)b[q + 4] << 24 | (uint32_t)b[q + 5] << 16 |
					       (uint32_t)b[q + 6] << 8 | b[q + 7]);
			int32_t hi = (int32_t)((uint32_t)b[q + 8] << 24 | (uint32_t)b[q + 9] << 16 |
					       (uint32_t)b[q + 10] << 8 | b[q + 11]);
			int64_t cases = op == 0xaa ? (int64_t)hi - lo + 1 : (int64_t)lo * 2;
			if (cases < 0 || cases > n)
				return true;
			l = (jint)(q - pc + (op == 0xaa ? 12 : 8) + cases * 4);
		} else if (op == 0xc4) {			/* wide */
			l = pc + 1 < n && b[pc + 1] == 0x84 ? 6 : 4;
		}
		pc += l;
	}
	return false;
}

/* ALLOCATING_CALLS: names of the calls Instrument.java counts at their sites. */
static const char *const ALLOCATING_CALLS[] = {"clone", "newArray", "multiNewArray",
	"allocateInstance", "newInstance0", "copyOf", "allocateUninitializedArray0"};

/*
 * worth: whether class k (JNI signature sig) has anything to rewrite: any
 * method when calling contexts are kept (--depth above 1), a method of an
 * accounted class, an allocating instruction in a method
 * (JVMTI GetBytecodes), or the name of a call counted at its site in its
 * constant pool (GetConstantPool); true when JVMTI cannot say. Classes with
 * none are not retransformed at the start, which saves the JVM redefining
 * them for nothing. The static initializer of a class already initialized
 * (JVMTI GetClassStatus) never runs again (JVMS 5.5), so that its
 * allocations do not count: enums, tables built once and the like are left.
 */
static bool worth(jclass k, const char *sig)
{
	if (R.depth > 1 || (R.npat && ag_rec_account_of(sig)))
		return true;
	jint cpn = 0, cplen = 0;
	unsigned char *cp = NULL;
	if ((*R.env)->GetConstantPool(R.env, k, &cpn, &cplen, &cp) != JVMTI_ERROR_NONE)
		return true;
	bool yes = false;
	for (size_t i = 0; i < sizeof ALLOCATING_CALLS / sizeof *ALLOCATING_CALLS && !yes; i++)
		yes = memmem(cp, (size_t)cplen, ALLOCATING_CALLS[i], strlen(ALLOCATING_CALLS[i])) != NULL;
	ag_rec_free(cp);
	jint nm = 0, status = 0;
	jmethodID *ms = NULL;
	if (!yes && (*R.env)->GetClassMethods(R.env, k, &nm, &ms) != JVMTI_ERROR_NONE)
		return true;
	bool initialized = (*R.env)->GetClassStatus(R.env, k, &status) == JVMTI_ERROR_NONE &&
			   (status & JVMTI_CLASS_STATUS_INITIALIZED);
	for (jint i = 0; i < nm && !yes; i++) {
		char *name = NULL;
		if (initialized && (*R.env)->GetMethodName(R.env, ms[i], &name, NULL, NULL) ==
		    JVMTI_ERROR_NONE && name && !strcmp(name, "<clinit>")) {
			ag_rec_free(name);
			continue;
		}
		ag_rec_free(name);
		jint bl = 0;
		unsigned char *bc = NULL;
		jvmtiError err = (*R.env)->GetBytecodes(R.env, ms[i], &bl, &bc);
		if (err == JVMTI_ERROR_NONE)
			yes = code_allocates(bc, bl);
		else if (err != JVMTI_ERROR_NATIVE_METHOD && err != JVMTI_ERROR_ABSENT_INFORMATION)
			yes = true;
		ag_rec_free(bc);
	}
	ag_rec_free(ms);
	return yes;
}

/*
 * Linking and retransformation race in the JVM (JDK-8277444: the class-file
 * reconstituter reads a method's bytecodes while the linking thread rewrites
 * them; a bad class, or a crash where the JVM does not verify), so that a
 * class not linked yet is never retransformed:
 * - at the start (and for classes loaded inside the transformer), it is left
 *   as it is, tagged DEFER_TAG in R.env, and retransformed when the JVM has
 *   linked it (on_class_prepare, JVMTI ClassPrepare), before any of its code
 *   runs: a third of H2's loaded classes are never linked, and cost nothing;
 * - when its classes are put back, it is linked first (link()).
 */
#define DEFER_TAG (1LL << 59)

/* linked: whether class k is linked (JVMTI GetClassStatus: PREPARED); true when JVMTI cannot say. */
static bool linked(jclass k)
{
	jint status = 0;
	return (*R.env)->GetClassStatus(R.env, k, &status) != JVMTI_ERROR_NONE ||
	       (status & (JVMTI_CLASS_STATUS_PREPARED | JVMTI_CLASS_STATUS_ERROR)) != 0;
}

/*
 * deferred: whether class k, not linked yet, is left for on_class_prepare
 * (tagged). A class linked meanwhile is not (retransformed now, and perhaps
 * by on_class_prepare too, which does no harm).
 */
static bool deferred(jclass k)
{
	if (linked(k))
		return false;
	jlong t = 0;
	if ((*R.env)->GetTag(R.env, k, &t) != JVMTI_ERROR_NONE ||
	    (*R.env)->SetTag(R.env, k, t | DEFER_TAG) != JVMTI_ERROR_NONE)
		return false;
	return !linked(k);
}

/*
 * link: class k linked, not initialized (Class.getDeclaredConstructors links
 * its class: jvm.cpp, get_class_declared_methods_helper); false when it
 * cannot be (a class it refers to is missing: then none of its code can run,
 * and the JVM would refuse to redefine it).
 */
static bool link(JNIEnv *jni, jclass k)
{
	static jmethodID ctors;
	if (!ctors) {
		jclass c = (*jni)->FindClass(jni, "java/lang/Class");
		ctors = c ? (*jni)->GetMethodID(jni, c, "getDeclaredConstructors",
						 "()[Ljava/lang/reflect/Constructor;") : NULL;
		if (c)
			(*jni)->DeleteLocalRef(jni, c);
		ag_jni_clear(jni, "Class.getDeclaredConstructors");
		if (!ctors)
			return false;
	}
	jobject a = (*jni)->CallObjectMethod(jni, k, ctors);
	bool thrown = (*jni)->ExceptionCheck(jni);
	if (thrown)
		(*jni)->ExceptionClear(jni);
	if (a)
		(*jni)->DeleteLocalRef(jni, a);
	return !thrown && linked(k);
}

/*
 * loaded: the loaded classes to retransform: every modifiable one but the
 * agent's that has something to rewrite (worth), or only those named in
 * names[0..nnames) (sorted here) when names is not NULL. With defer, those
 * not linked yet are left to on_class_prepare; without, they are linked
 * first and left out when they cannot be. *n set; JVMTI memory
 * (release_classes).
 */
static jclass *loaded(JNIEnv *jni, char **names, uint32_t nnames, bool defer, jint *n)
{
	bool named = names != NULL;
	jint count = 0;
	jclass *k = NULL;
	*n = 0;
	if ((*R.env)->GetLoadedClasses(R.env, &count, &k) != JVMTI_ERROR_NONE)
		return NULL;
	if (named)
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
			if (ok && named) {
				sig[strlen(sig) - 1] = 0;
				char *key = sig + 1;
				ok = bsearch(&key, names, nnames, sizeof *names, cmp_str) != NULL;
			}
			if (ok && defer && deferred(k[i])) {
				ok = JNI_FALSE;
				atomic_fetch_add(&B.deferred, 1);
			}
			else if (ok && !defer && !linked(k[i]) && (ok = link(jni, k[i])))
				atomic_fetch_add(&B.linked, 1);
			else if (ok && !named)
				ok = worth(k[i], sig);
		} else {
			ok = JNI_FALSE;
		}
		ag_rec_free(sig);
		if (ok)
			k[m++] = k[i];
		else
			(*jni)->DeleteLocalRef(jni, k[i]);
	}
	*n = m;
	return k;
}

/*
 * on_class_prepare (JVMTI ClassPrepare, R.env): a class left as it was at
 * the start because it was not linked is retransformed now, on the thread
 * that linked it, before any of its code runs: one RetransformClasses call
 * (a few ms, once per such class that the program ever uses).
 */
static void JNICALL on_class_prepare(jvmtiEnv *e, JNIEnv *jni, jthread thread, jclass klass)
{
	(void)thread;
	jlong t = 0;
	if (e != R.env || (*e)->GetTag(e, klass, &t) != JVMTI_ERROR_NONE || !(t & DEFER_TAG))
		return;
	(*e)->SetTag(e, klass, t & ~DEFER_TAG);
	if (!atomic_load(&B.transforming))
		return;
	char *sig = NULL;
	if ((*e)->GetClassSignature(e, klass, &sig, NULL) != JVMTI_ERROR_NONE || !sig || sig[0] != 'L') {
		ag_rec_free(sig);
		return;
	}
	if (ag_in_hook) {
		/* Linked inside the transformer: rewritten afterwards (catch_up), as a class loaded there is. */
		sig[strlen(sig) - 1] = 0;
		later(sig + 1);
	} else if (worth(klass, sig)) {
		atomic_fetch_add(&B.prepared, 1);
		retransform_some(jni, &klass, 1);
	}
	ag_rec_free(sig);
}

static void release_classes(JNIEnv *jni, jclass *k, jint n)
{
	for (jint i = 0; i < n; i++)
		(*jni)->DeleteLocalRef(jni, k[i]);
	ag_rec_free(k);
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
		jclass *k = loaded(jni, names, n, true, &m);
		retransform(jni, k, m, false);
		release_classes(jni, k, m);
		free_names(&names, &n, &cap);
	}
}

/* start_java: the Java side ready, then every loaded class instrumented; why on failure. */
static bool start_java(JNIEnv *jni, char *why, size_t cap)
{
	if (!define_rt(jni, why, cap) || !define_transformer(jni, why, cap))
		return false;
	ag_sites_java(jni);
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
	/* Before the classes are listed: none is linked unseen between the two (deferred). */
	(*R.env)->SetEventNotificationMode(R.env, JVMTI_ENABLE, JVMTI_EVENT_CLASS_PREPARE, NULL);
	jint n = 0;
	jclass *k = loaded(jni, NULL, 0, true, &n);
	int64_t t0 = ag_now_ms();
	bool go = retransform(jni, k, n, true);
	if (go)
		catch_up(jni);
	if (ag_debug())
		ag_log("instrumented %llu of %d loaded classes in %lld ms (%llu not linked yet, left until "
		       "linked; %llu left as they were, %llu ms in the class-file hook)%s",
		       (unsigned long long)atomic_load(&B.instrumented), n, (long long)(ag_now_ms() - t0),
		       (unsigned long long)atomic_load(&B.deferred), (unsigned long long)atomic_load(&B.failed),
		       (unsigned long long)atomic_load(&B.hook_ms), go ? "" : "; cancelled");
	release_classes(jni, k, n);
	if (go) {
		/* From now on: the JVM's samples estimate what the rewritten code does not see. */
		atomic_store(&B.seen_bytes, 0);
		atomic_store(&B.missed_bytes, 0);
		if ((*R.env)->SetHeapSamplingInterval(R.env, MISS_INTERVAL) == JVMTI_ERROR_NONE)
			(*R.env)->SetEventNotificationMode(R.env, JVMTI_ENABLE,
							   JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
	}
	if (!go) {
		/* Cancelled: every class rewritten so far goes back to its own bytecode. */
		atomic_store(&R.on, 0);
		ag_bc_halt(jni);
		snprintf(why, cap, "cancelled: no recording was started, and every class rewritten "
			 "so far was put back as it was");
		return false;
	}
	return true;
}

/*
 * counted_here: whether the allocation a sample caught at method m, bytecode
 * index loc (the top Java frame) is one the rewritten code counts: an
 * allocating instruction of a current (not obsolete) method of a class
 * JVMTI could rewrite, a call that returns a new object (the JIT's
 * intrinsics among them), or a native method the rewritten code counts at
 * its call sites (clone, reflection). Anything else (the VM's own objects,
 * JNI code, hidden classes, methods running since before the start) is not.
 */
static bool counted_here(jvmtiEnv *e, jmethodID m, jlocation loc)
{
	jboolean b = JNI_FALSE;
	if ((*e)->IsMethodObsolete(e, m, &b) != JVMTI_ERROR_NONE || b)
		return false;
	if ((*e)->IsMethodNative(e, m, &b) == JVMTI_ERROR_NONE && b) {
		char *name = NULL;
		bool yes = false;
		if ((*e)->GetMethodName(e, m, &name, NULL, NULL) == JVMTI_ERROR_NONE && name)
			for (size_t i = 0; i < sizeof ALLOCATING_CALLS / sizeof *ALLOCATING_CALLS && !yes; i++)
				yes = !strcmp(name, ALLOCATING_CALLS[i]);
		ag_rec_free(name);
		return yes;
	}
	jclass k = NULL;
	b = JNI_FALSE;
	if ((*e)->GetMethodDeclaringClass(e, m, &k) != JVMTI_ERROR_NONE ||
	    (*e)->IsModifiableClass(e, k, &b) != JVMTI_ERROR_NONE || !b)
		return false;
	jint n = 0;
	unsigned char *code = NULL;
	bool yes = false;
	if ((*e)->GetBytecodes(e, m, &n, &code) == JVMTI_ERROR_NONE && loc >= 0 && loc < n) {
		unsigned op = code[loc];
		yes = op == 0xbb || op == 0xbc || op == 0xbd || op == 0xc5 || (op >= 0xb6 && op <= 0xba);
	}
	ag_rec_free(code);
	return yes;
}

/* on_sample: one of the JVM's allocation samples, for the estimate of what is not counted. */
static void JNICALL on_sample(jvmtiEnv *e, JNIEnv *jni, jthread thread, jobject obj, jclass klass,
			      jlong size)
{
	(void)jni;
	(void)obj;
	(void)klass;
	if (!atomic_load(&R.on) || ag_in_hook || ag_in_agent_thread || e != R.env || size <= 0)
		return;
	/* A sample falls in an object of s bytes with probability 1 - exp(-s/interval). */
	uint64_t bytes = (uint64_t)((double)size / -expm1(-(double)size / MISS_INTERVAL));
	atomic_fetch_add(&B.seen_bytes, bytes);
	jmethodID m = NULL;
	jlocation loc = -1;
	if ((*e)->GetFrameLocation(e, thread, 0, &m, &loc) != JVMTI_ERROR_NONE || !m ||
	    !counted_here(e, m, loc))
		atomic_fetch_add(&B.missed_bytes, bytes);
}

bool ag_bc_begin(JNIEnv *jni, char *why, size_t cap)
{
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof caps);
	caps.can_retransform_classes = 1;
	caps.can_generate_all_class_hook_events = 1;
	caps.can_tag_objects = 1;
	caps.can_get_line_numbers = 1;
	caps.can_get_source_file_name = 1;
	caps.can_generate_garbage_collection_events = 1;
	caps.can_get_bytecodes = 1;
	caps.can_get_constant_pool = 1;
	caps.can_generate_sampled_object_alloc_events = 1;
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.ClassFileLoadHook = on_class_file;
	cb.SampledObjectAlloc = on_sample;
	cb.GarbageCollectionFinish = ag_sites_on_gc;
	cb.ClassPrepare = on_class_prepare;
	if (!ag_rec_env(&caps, &cb, "bytecode instrumentation (try --via jvmti)", why, cap))
		return false;
	jvmtiEnv *e = R.env;
	(*e)->SetEventNotificationMode(e, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
	ag_sites_begin();
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

/* quiet: no class-file hook runs any more, and no sample is taken. */
static void quiet(void)
{
	if (R.env) {
		(*R.env)->SetEventNotificationMode(R.env, JVMTI_DISABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC,
						   NULL);
		(*R.env)->SetEventNotificationMode(R.env, JVMTI_DISABLE, JVMTI_EVENT_CLASS_PREPARE, NULL);
	}
	atomic_store(&B.transforming, 0);
	for (int k = 0; k < 5000 && atomic_load(&B.hooks) > 0; k++)
		sched_yield();
}

/* forget_last: Rt's cache of the last thread's slot lets go of that thread. */
static void forget_last(JNIEnv *jni)
{
	jfieldID f = B.rt ? (*jni)->GetStaticFieldID(jni, B.rt, "last", "[Ljava/lang/Object;") : NULL;
	jclass oc = f ? (*jni)->FindClass(jni, "java/lang/Object") : NULL;
	jobjectArray none = oc ? (*jni)->NewObjectArray(jni, 5, oc, NULL) : NULL;
	if (none)
		(*jni)->SetStaticObjectField(jni, B.rt, f, none);
	ag_jni_clear(jni, "Rt.last");
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
	ag_sites_fold(jni, FOLD_FINAL);
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
	atomic_store(&B.linked, 0);
	jclass *k = loaded(jni, names ? names : (char *[]){NULL}, nnames, false, &n);
	retransform(jni, k, n, false);
	if (ag_debug())
		ag_log("put %d classes back as they were (%llu linked first)", n,
		       (unsigned long long)atomic_load(&B.linked));
	release_classes(jni, k, n);
	free_names(&names, &nnames, &(uint32_t){0});
	(*R.env)->SetEventNotificationMode(R.env, JVMTI_DISABLE, JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, NULL);
}

void ag_bc_discard(JNIEnv *jni)
{
	quiet();
	B.pending = false;
	ag_sites_discard(jni);
	pthread_mutex_lock(&R.lock);
	free_names(&B.names, &B.nnames, &B.capnames);
	free_names(&B.later, &B.nlater, &B.caplater);
	pthread_mutex_unlock(&R.lock);
	atomic_store(&B.instrumented, 0);
	atomic_store(&B.failed, 0);
	atomic_store(&B.prepared, 0);
	atomic_store(&B.deferred, 0);
	if (jni)
		drop_transformer(jni);
}

bool ag_bc_measure(JNIEnv *jni, struct walk_counts *w, char *why, size_t cap)
{
	(void)why;
	(void)cap;
	catch_up(jni);
	ag_sites_measure(jni, w);
	return true;
}

/* text: append to a growable string (*p, *len, *cap); false when out of memory. */
static bool text(char **p, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s);
	if (*len + n + 1 > *cap) {
		size_t c = (*len + n + 1) * 2;
		char *q = realloc(*p, c);
		if (!q)
			return false;
		*p = q;
		*cap = c;
	}
	memcpy(*p + *len, s, n + 1);
	*len += n;
	return true;
}

char *ag_bc_uncovered(JNIEnv *jni)
{
	enum { MAX_FRAMES = 512, MAX_LINES = 64, MAX_METHODS = 64 };
	jvmtiStackInfo *info = NULL;
	jint nthreads = 0;
	if (!R.env || (*R.env)->GetAllStackTraces(R.env, MAX_FRAMES, &info, &nthreads) != JVMTI_ERROR_NONE)
		return NULL;
	char *out = NULL, *tail = NULL;
	size_t len = 0, cap = 0, tlen = 0, tcap = 0;
	int methods = 0;
	for (jint t = 0; t < nthreads && methods < MAX_METHODS; t++) {
		for (jint f = 0; f < info[t].frame_count && methods < MAX_METHODS; f++) {
			jmethodID m = info[t].frame_buffer[f].method;
			jboolean old = JNI_FALSE;
			if ((*R.env)->IsMethodObsolete(R.env, m, &old) != JVMTI_ERROR_NONE || !old)
				continue;
			jclass k = NULL;
			char *name = NULL, *sig = NULL, *cls = NULL, *file = NULL;
			jvmtiThreadInfo ti = {0};
			if ((*R.env)->GetMethodDeclaringClass(R.env, m, &k) == JVMTI_ERROR_NONE &&
			    (*R.env)->GetMethodName(R.env, m, &name, &sig, NULL) == JVMTI_ERROR_NONE &&
			    (*R.env)->GetClassSignature(R.env, k, &cls, NULL) == JVMTI_ERROR_NONE) {
				(*R.env)->GetSourceFileName(R.env, k, &file);
				int32_t lines[MAX_LINES];
				int n = ag_sites_lines(cls, name, sig, lines, MAX_LINES);
				uint32_t acct = ag_rec_account_of(cls);
				if (n || acct) {
					(*R.env)->GetThreadInfo(R.env, info[t].thread, &ti);
					char java[512], buf[1024], *q = buf;
					cn_java_name(cls, true, java, sizeof java);
					q += snprintf(q, (size_t)(buf + sizeof buf - q), "%s.%s (%s%s%s", java, name,
						      file ? file : "no source file", n ? (n > 1 ? " lines " : " line ") : "",
						      "");
					for (int i = 0; i < n && q < buf + sizeof buf - 16; i++)
						q += snprintf(q, (size_t)(buf + sizeof buf - q), "%s%d", i ? ", " : "",
							      lines[i]);
					snprintf(q, (size_t)(buf + sizeof buf - q), ") on thread %s%s\n",
						 ti.name ? ti.name : "?", acct && !n ? ", which sets an account" : "");
					/*
					 * A method in several frames (recursion, threads) once per
					 * thread and line; the JDK's own after the program's.
					 */
					bool jdk = !strncmp(cls, "Ljava/", 6) || !strncmp(cls, "Ljdk/", 5) ||
						   !strncmp(cls, "Lsun/", 5) || !strncmp(cls, "Lcom/sun/", 9);
					char **o = jdk ? &tail : &out;
					size_t *l = jdk ? &tlen : &len, *c = jdk ? &tcap : &cap;
					if (!*o || !strstr(*o, buf)) {
						if (!text(o, l, c, buf))
							break;
						methods++;
					}
				}
			}
			ag_rec_free(name);
			ag_rec_free(sig);
			ag_rec_free(cls);
			ag_rec_free(file);
			ag_rec_free(ti.name);
			if (ti.thread_group)
				(*jni)->DeleteLocalRef(jni, ti.thread_group);
			if (ti.context_class_loader)
				(*jni)->DeleteLocalRef(jni, ti.context_class_loader);
			if (k)
				(*jni)->DeleteLocalRef(jni, k);
		}
	}
	ag_rec_free(info);
	if (tail && !text(&out, &len, &cap, tail)) {
		free(out);
		out = NULL;
	}
	free(tail);
	if (out && len)
		out[len - 1] = 0;	/* no newline after the last */
	return out;
}

void ag_bc_vm_death(JNIEnv *jni)
{
	if (!ag_debug())
		return;
	if (jni && atomic_load(&R.on))
		ag_sites_fold(jni, FOLD_READ);
	ag_log("%llu classes instrumented (%llu of them when linked), %llu left as they were, "
	       "%llu ms in the class-file hook", (unsigned long long)atomic_load(&B.instrumented),
	       (unsigned long long)atomic_load(&B.prepared),
	       (unsigned long long)atomic_load(&B.failed), (unsigned long long)atomic_load(&B.hook_ms));
	ag_sites_summary();
}

void ag_bc_status(uint64_t *instrumented, uint64_t *failed)
{
	*instrumented = atomic_load(&B.instrumented);
	*failed = atomic_load(&B.failed);
}

void ag_bc_missed(uint64_t *missed, uint64_t *seen)
{
	*missed = atomic_load(&B.missed_bytes);
	*seen = atomic_load(&B.seen_bytes);
}
