/*
 * agent.c - libheapsh_agent.so, heapsh's JVMTI agent (docs/agent.md,
 * docs/protocol.md).
 *
 * Loaded at start-up (-agentpath:/path/libheapsh_agent.so) or into a running
 * JVM (Agent_OnAttach), it starts one agent thread that listens on a
 * Unix-domain socket in /tmp/.heapsh-PID (mode 0700) and serves heapsh's
 * requests, one at a time, from as many as 16 connections: info, a class histogram
 * (IterateThroughHeap with class tags: the thesis's "simple dump", chapter 3),
 * a snapshot of the reachable graph (FollowReferences: the "extended dump"),
 * a filter evaluated inside the VM, and detach.
 *
 * Rules it keeps: heap callbacks run while the VM is stopped, so they only
 * append to a temporary file or to memory, never touch the socket, JNI or
 * JVMTI; every socket operation has a timeout, so a client that stalls never
 * holds the JVM; every length and count a client sends is checked, and a bad
 * frame closes that connection only; tags are cleared after every request.
 * Capabilities: can_tag_objects only.
 */
#include <errno.h>
#include <fcntl.h>
#include <jvmti.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ag.h"
#include "../base/classname.h"
enum { R_CLASS = 1, R_OBJECT, R_REFERENCE, R_ROOT, R_PRIMITIVE, R_PRIMARRAY, R_THREAD };

static jvmtiEnv *jvmti;
static volatile int ag_running;	/* the agent thread is serving */
static volatile int ag_stop;	/* detach or VM death asked it to stop */
static char sock_dir[64], sock_path[96];

void ag_log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "heapsh agent: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

int64_t ag_now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- socket I/O with deadlines ---- */

/* ag_io_full: read or write all n bytes before the deadline; false on EOF, error or timeout. */
bool ag_io_full(int fd, void *p, size_t n, bool rd, int64_t deadline)
{
	uint8_t *b = p;
	while (n) {
		int64_t left = deadline - ag_now_ms();
		if (left <= 0 || ag_stop)
			return false;
		struct pollfd pf = {fd, rd ? POLLIN : POLLOUT, 0};
		int r = poll(&pf, 1, left > 500 ? 500 : (int)left);
		if (r < 0 && errno != EINTR)
			return false;
		if (r <= 0)
			continue;
		ssize_t k = rd ? recv(fd, b, n, 0) : send(fd, b, n, MSG_NOSIGNAL);
		if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN))
			return false;
		if (k > 0) {
			b += k;
			n -= (size_t)k;
		}
	}
	return true;
}

/* ---- reply buffers ---- */

void ag_bneed(struct buf *b, size_t n)
{
	if (b->oom || b->len + n <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n)
		cap *= 2;
	uint8_t *q = realloc(b->p, cap);
	if (!q) {
		b->oom = true;
		return;
	}
	b->p = q;
	b->cap = cap;
}

void ag_bput(struct buf *b, const void *src, size_t n)
{
	ag_bneed(b, n);
	if (b->oom)
		return;
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

void ag_bu8(struct buf *b, uint8_t v) { ag_bput(b, &v, 1); }
void ag_bu16(struct buf *b, uint16_t v)
{
	uint8_t x[2] = {(uint8_t)(v >> 8), (uint8_t)v};
	ag_bput(b, x, 2);
}
void ag_bu32(struct buf *b, uint32_t v)
{
	uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
	ag_bput(b, x, 4);
}
void ag_bu64(struct buf *b, uint64_t v)
{
	ag_bu32(b, (uint32_t)(v >> 32));
	ag_bu32(b, (uint32_t)v);
}
void ag_bstr(struct buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	ag_bu32(b, (uint32_t)n);
	ag_bput(b, s, n);
}

/* ag_send_frame: one frame of type t with payload b (which is emptied). */
bool ag_send_frame(int fd, uint8_t t, struct buf *b)
{
	if (b->oom) {
		b->len = 0;
		b->oom = false;
		struct buf e = {0};
		ag_bstr(&e, "out of memory in the agent");
		bool ok = !e.oom && ag_send_frame(fd, T_ERROR, &e);
		free(e.p);
		return ok;
	}
	uint8_t h[5] = {(uint8_t)((b->len + 1) >> 24), (uint8_t)((b->len + 1) >> 16),
			(uint8_t)((b->len + 1) >> 8), (uint8_t)(b->len + 1), t};
	int64_t dl = ag_now_ms() + WRITE_MS;
	bool ok = ag_io_full(fd, h, 5, false, dl) && ag_io_full(fd, b->p, b->len, false, dl);
	b->len = 0;
	return ok;
}

bool ag_send_error(int fd, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	struct buf b = {0};
	ag_bstr(&b, msg);
	bool ok = ag_send_frame(fd, T_ERROR, &b);
	free(b.p);
	return ok;
}

/* ---- JNI and JVMTI helpers (agent thread only) ---- */

static void dealloc(void *p)
{
	if (p)
		(*jvmti)->Deallocate(jvmti, p);
}

static char *system_property(JNIEnv *env, const char *key)
{
	char *val = NULL;
	if ((*jvmti)->GetSystemProperty(jvmti, key, &val) == JVMTI_ERROR_NONE && val) {
		char *s = strdup(val);
		dealloc(val);
		return s;
	}
	(void)env;
	return strdup("?");
}

static int64_t runtime_long(JNIEnv *env, const char *method)
{
	jclass rt = (*env)->FindClass(env, "java/lang/Runtime");
	if (!rt)
		goto fail;
	jmethodID get = (*env)->GetStaticMethodID(env, rt, "getRuntime", "()Ljava/lang/Runtime;");
	jmethodID m = (*env)->GetMethodID(env, rt, method, "()J");
	if (!get || !m)
		goto fail;
	jobject r = (*env)->CallStaticObjectMethod(env, rt, get);
	if (!r || (*env)->ExceptionCheck(env))
		goto fail;
	jlong v = (*env)->CallLongMethod(env, r, m);
	if ((*env)->ExceptionCheck(env))
		goto fail;
	return v;
fail:
	(*env)->ExceptionClear(env);
	return -1;
}

static bool do_info(int fd, JNIEnv *env)
{
	struct buf b = {0};
	char *name = system_property(env, "java.vm.name");
	char *ver = system_property(env, "java.vm.version");
	char *vendor = system_property(env, "java.vm.vendor");
	int64_t total = runtime_long(env, "totalMemory"), freem = runtime_long(env, "freeMemory");
	int64_t max = runtime_long(env, "maxMemory");
	jint nclasses = 0;
	jclass *classes = NULL;
	if ((*jvmti)->GetLoadedClasses(jvmti, &nclasses, &classes) == JVMTI_ERROR_NONE) {
		for (jint i = 0; i < nclasses; i++)
			(*env)->DeleteLocalRef(env, classes[i]);
		dealloc(classes);
	}
	ag_bstr(&b, name);
	ag_bstr(&b, ver);
	ag_bstr(&b, vendor);
	ag_bu64(&b, (uint64_t)getpid());
	ag_bu64(&b, total >= 0 && freem >= 0 ? (uint64_t)(total - freem) : 0);
	ag_bu64(&b, total >= 0 ? (uint64_t)total : 0);
	ag_bu64(&b, max >= 0 ? (uint64_t)max : 0);
	ag_bu32(&b, (uint32_t)nclasses);
	ag_bstr(&b, AG_VERSION);
	free(name);
	free(ver);
	free(vendor);
	bool ok = ag_send_frame(fd, T_INFO, &b);
	free(b.p);
	return ok;
}

/* ---- classes ---- */

struct classes {
	jint n;
	jclass *k;		/* JVMTI-allocated; local references */
};

static bool load_classes(JNIEnv *env, struct classes *c)
{
	(void)env;
	c->n = 0;
	c->k = NULL;
	return (*jvmti)->GetLoadedClasses(jvmti, &c->n, &c->k) == JVMTI_ERROR_NONE;
}

static void drop_classes(JNIEnv *env, struct classes *c)
{
	for (jint i = 0; i < c->n; i++) {
		(*jvmti)->SetTag(jvmti, c->k[i], 0);
		(*env)->DeleteLocalRef(env, c->k[i]);
	}
	dealloc(c->k);
	c->k = NULL;
	c->n = 0;
}

/* ---- HISTOGRAM ---- */

struct hist {
	jint n;
	uint64_t *count, *bytes;
};

static jint JNICALL hist_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud)
{
	struct hist *h = ud;
	(void)tag_ptr;
	(void)length;
	if (class_tag > 0 && class_tag <= h->n) {
		h->count[class_tag - 1]++;
		h->bytes[class_tag - 1] += (uint64_t)size;
	}
	return 0;
}

static bool do_histogram(int fd, JNIEnv *env, struct req *r)
{
	uint8_t flags = ag_ru8(r);
	if (r->bad || r->p != r->end)
		return false;
	if (flags & 1)
		(*jvmti)->ForceGarbageCollection(jvmti);
	struct classes c;
	if (!load_classes(env, &c))
		return ag_send_error(fd, "GetLoadedClasses failed");
	struct hist h = {c.n, calloc((size_t)c.n + 1, 8), calloc((size_t)c.n + 1, 8)};
	bool ok;
	if (!h.count || !h.bytes) {
		ok = ag_send_error(fd, "out of memory in the agent");
		goto done;
	}
	for (jint i = 0; i < c.n; i++)
		(*jvmti)->SetTag(jvmti, c.k[i], i + 1);
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.heap_iteration_callback = hist_cb;
	jvmtiError e = (*jvmti)->IterateThroughHeap(jvmti, 0, NULL, &cb, &h);
	if (e != JVMTI_ERROR_NONE) {
		ok = ag_send_error(fd, "IterateThroughHeap failed (JVMTI error %d)", e);
		goto done;
	}
	struct buf b = {0};
	uint32_t rows = 0;
	for (jint i = 0; i < c.n; i++)
		rows += h.count[i] > 0;
	ag_bu32(&b, rows);
	for (jint i = 0; i < c.n; i++) {
		if (!h.count[i])
			continue;
		char *sig = NULL;
		(*jvmti)->GetClassSignature(jvmti, c.k[i], &sig, NULL);
		ag_bstr(&b, sig ? sig : "?");
		dealloc(sig);
		ag_bu64(&b, h.count[i]);
		ag_bu64(&b, h.bytes[i]);
	}
	ok = ag_send_frame(fd, T_HISTOGRAM, &b);
	free(b.p);
done:
	drop_classes(env, &c);
	free(h.count);
	free(h.bytes);
	return ok;
}

/* ---- SNAPSHOT ---- */

#define PENDING (1LL << 62)	/* tagged before the walk, OBJECT record not yet written */
#define SKIPPED (1LL << 59)	/* has an id but no OBJECT record */

struct snap {
	FILE *f;
	jlong next;		/* next object id */
	jlong class_class;	/* the tag of java.lang.Class */
	jlong self;		/* the tag of the agent's own thread: its JNI locals are no roots */
	uint64_t objects, records;
	bool failed;
	size_t len;		/* bytes in buf */
	uint8_t buf[1 << 16];
};

/* w_flush: the buffered records to the file (stdio's per-call locking is too slow here). */
static void w_flush(struct snap *s)
{
	if (s->len && fwrite(s->buf, 1, s->len, s->f) != s->len)
		s->failed = true;
	s->len = 0;
}

static void w_bytes(struct snap *s, const void *p, size_t n)
{
	if (s->len + n > sizeof s->buf) {
		w_flush(s);
		if (n > sizeof s->buf) {
			if (fwrite(p, 1, n, s->f) != n)
				s->failed = true;
			return;
		}
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}
static void w_u8(struct snap *s, uint8_t v) { w_bytes(s, &v, 1); }
static void w_u16(struct snap *s, uint16_t v)
{
	uint8_t x[2] = {(uint8_t)(v >> 8), (uint8_t)v};
	w_bytes(s, x, 2);
}
static void w_u32(struct snap *s, uint32_t v)
{
	uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
	w_bytes(s, x, 4);
}
static void w_u64(struct snap *s, uint64_t v)
{
	w_u32(s, (uint32_t)(v >> 32));
	w_u32(s, (uint32_t)v);
}
static void w_str(struct snap *s, const char *p)
{
	size_t n = p ? strlen(p) : 0;
	w_u32(s, (uint32_t)n);
	w_bytes(s, p, n);
}

/*
 * object_id: the id for tag_ptr's object, writing its OBJECT record the
 * first time. A java.lang.Class instance that is not a loaded class (its
 * tag is 0: a class archived by CDS and not loaded yet) gets an id but no
 * record, as HotSpot's own heap dumper leaves such mirrors out.
 */
static jlong object_id(struct snap *s, jlong *tag_ptr, jlong class_tag, jlong size, jint length)
{
	jlong t = *tag_ptr;
	if (t && !(t & PENDING))
		return t & ~SKIPPED;
	if (!t && class_tag == s->class_class) {
		*tag_ptr = s->next++ | SKIPPED;
		return *tag_ptr & ~SKIPPED;
	}
	if (!t)
		t = s->next++;
	t &= ~PENDING;
	*tag_ptr = t;
	w_u8(s, R_OBJECT);
	w_u64(s, (uint64_t)t);
	w_u64(s, (uint64_t)(class_tag & ~PENDING));
	w_u64(s, (uint64_t)size);
	w_u32(s, (uint32_t)length);
	s->objects++;
	s->records++;
	return t;
}

static jint JNICALL snap_ref(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			     jlong class_tag, jlong referrer_class_tag, jlong size, jlong *tag_ptr,
			     jlong *referrer_tag_ptr, jint length, void *ud)
{
	struct snap *s = ud;
	(void)referrer_class_tag;
	jlong id = object_id(s, tag_ptr, class_tag, size, length);
	if (!referrer_tag_ptr && s->self &&
	    ((kind == JVMTI_HEAP_REFERENCE_JNI_LOCAL && (info->jni_local.thread_tag & ~PENDING) == s->self) ||
	     (kind == JVMTI_HEAP_REFERENCE_STACK_LOCAL &&
	      (info->stack_local.thread_tag & ~PENDING) == s->self)))
		return JVMTI_VISIT_OBJECTS;	/* the class references the agent holds right now */
	if (!referrer_tag_ptr) {
		uint64_t thread = 0;
		int32_t depth = -1;
		if (kind == JVMTI_HEAP_REFERENCE_STACK_LOCAL) {
			thread = (uint64_t)(info->stack_local.thread_tag & ~PENDING);
			depth = info->stack_local.depth;
		} else if (kind == JVMTI_HEAP_REFERENCE_JNI_LOCAL) {
			thread = (uint64_t)(info->jni_local.thread_tag & ~PENDING);
			depth = info->jni_local.depth;
		}
		w_u8(s, R_ROOT);
		w_u8(s, (uint8_t)kind);
		w_u64(s, (uint64_t)id);
		w_u64(s, thread);
		w_u32(s, (uint32_t)depth);
	} else {
		int32_t index = -1;
		if (kind == JVMTI_HEAP_REFERENCE_FIELD || kind == JVMTI_HEAP_REFERENCE_STATIC_FIELD)
			index = info->field.index;
		else if (kind == JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT)
			index = info->array.index;
		else if (kind == JVMTI_HEAP_REFERENCE_CONSTANT_POOL)
			index = info->constant_pool.index;
		w_u8(s, R_REFERENCE);
		w_u64(s, (uint64_t)(*referrer_tag_ptr & ~(PENDING | SKIPPED)));
		w_u8(s, (uint8_t)kind);
		w_u32(s, (uint32_t)index);
		w_u64(s, (uint64_t)id);
	}
	s->records++;
	return s->failed ? JVMTI_VISIT_ABORT : JVMTI_VISIT_OBJECTS;
}

static jint JNICALL snap_prim(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			      jlong object_class_tag, jlong *object_tag_ptr, jvalue value,
			      jvmtiPrimitiveType type, void *ud)
{
	struct snap *s = ud;
	(void)object_class_tag;
	uint64_t bits = 0;
	switch (type) {
	case JVMTI_PRIMITIVE_TYPE_BOOLEAN: bits = value.z; break;
	case JVMTI_PRIMITIVE_TYPE_BYTE: bits = (uint64_t)(int64_t)value.b; break;
	case JVMTI_PRIMITIVE_TYPE_CHAR: bits = value.c; break;
	case JVMTI_PRIMITIVE_TYPE_SHORT: bits = (uint64_t)(int64_t)value.s; break;
	case JVMTI_PRIMITIVE_TYPE_INT: bits = (uint64_t)(int64_t)value.i; break;
	case JVMTI_PRIMITIVE_TYPE_LONG: bits = (uint64_t)value.j; break;
	case JVMTI_PRIMITIVE_TYPE_FLOAT: memcpy(&bits, &value.f, 4); break;
	case JVMTI_PRIMITIVE_TYPE_DOUBLE: memcpy(&bits, &value.d, 8); break;
	}
	w_u8(s, R_PRIMITIVE);
	w_u64(s, (uint64_t)(*object_tag_ptr & ~(PENDING | SKIPPED)));
	w_u8(s, (uint8_t)kind);
	w_u32(s, (uint32_t)info->field.index);
	w_u8(s, (uint8_t)type);
	w_u64(s, bits);
	s->records++;
	return s->failed ? JVMTI_VISIT_ABORT : 0;
}

static size_t prim_size(jvmtiPrimitiveType t)
{
	switch (t) {
	case JVMTI_PRIMITIVE_TYPE_BOOLEAN: case JVMTI_PRIMITIVE_TYPE_BYTE: return 1;
	case JVMTI_PRIMITIVE_TYPE_CHAR: case JVMTI_PRIMITIVE_TYPE_SHORT: return 2;
	case JVMTI_PRIMITIVE_TYPE_INT: case JVMTI_PRIMITIVE_TYPE_FLOAT: return 4;
	default: return 8;
	}
}

static jint JNICALL snap_array(jlong class_tag, jlong size, jlong *tag_ptr, jint count,
			       jvmtiPrimitiveType type, const void *elements, void *ud)
{
	struct snap *s = ud;
	(void)class_tag;
	(void)size;
	w_u8(s, R_PRIMARRAY);
	w_u64(s, (uint64_t)(*tag_ptr & ~PENDING));
	w_u8(s, (uint8_t)type);
	w_u32(s, (uint32_t)count);
	w_bytes(s, elements, (size_t)count * prim_size(type));
	s->records++;
	return s->failed ? JVMTI_VISIT_ABORT : 0;
}

static jint JNICALL untag_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud)
{
	(void)class_tag;
	(void)size;
	(void)length;
	(void)ud;
	*tag_ptr = 0;
	return 0;
}

static void untag_all(void)
{
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.heap_iteration_callback = untag_cb;
	(*jvmti)->IterateThroughHeap(jvmti, JVMTI_HEAP_FILTER_UNTAGGED, NULL, &cb, NULL);
}

/* tag_pending: give o an id now (for classes' loaders and threads), written when met. */
static jlong tag_pending(struct snap *s, jobject o)
{
	jlong t = 0;
	if (!o || (*jvmti)->GetTag(jvmti, o, &t) != JVMTI_ERROR_NONE)
		return 0;
	if (!t) {
		t = s->next++;
		(*jvmti)->SetTag(jvmti, o, t | PENDING);
	}
	return t & ~PENDING;
}

uint32_t ag_iface_fields(jvmtiEnv *jv, JNIEnv *env, jclass klass, jclass *seen, jint *nseen,
			 jint cap)
{
	uint32_t total = 0;
	for (jclass k = (*env)->NewLocalRef(env, klass); k;) {
		jint ni = 0;
		jclass *ifs = NULL;
		if ((*jv)->GetImplementedInterfaces(jv, k, &ni, &ifs) == JVMTI_ERROR_NONE) {
			for (jint i = 0; i < ni; i++) {
				bool dup = false;
				for (jint j = 0; j < *nseen && !dup; j++)
					dup = (*env)->IsSameObject(env, seen[j], ifs[i]);
				if (dup || *nseen >= cap) {
					(*env)->DeleteLocalRef(env, ifs[i]);
					continue;
				}
				seen[(*nseen)++] = ifs[i];
				jint nf = 0;
				jfieldID *f = NULL;
				if ((*jv)->GetClassFields(jv, ifs[i], &nf, &f) == JVMTI_ERROR_NONE)
					total += (uint32_t)nf;
				if (f)
					(*jv)->Deallocate(jv, (unsigned char *)f);
				total += ag_iface_fields(jv, env, ifs[i], seen, nseen, cap);
			}
			if (ifs)
				(*jv)->Deallocate(jv, (unsigned char *)ifs);
		}
		jclass sup = (*env)->GetSuperclass(env, k);
		(*env)->DeleteLocalRef(env, k);
		k = sup;
	}
	return total;
}

/* tag_primitive_classes: int.class and the others, which are instances in a dump. */
static void tag_primitive_classes(struct snap *s, JNIEnv *env)
{
	static const char *const boxes[] = {"java/lang/Boolean", "java/lang/Byte",
		"java/lang/Character", "java/lang/Short", "java/lang/Integer", "java/lang/Long",
		"java/lang/Float", "java/lang/Double", "java/lang/Void"};
	for (size_t i = 0; i < sizeof boxes / sizeof *boxes; i++) {
		jclass b = (*env)->FindClass(env, boxes[i]);
		jfieldID f = b ? (*env)->GetStaticFieldID(env, b, "TYPE", "Ljava/lang/Class;") : NULL;
		jobject prim = f ? (*env)->GetStaticObjectField(env, b, f) : NULL;
		if (prim) {
			tag_pending(s, prim);
			(*env)->DeleteLocalRef(env, prim);
		}
		if (b)
			(*env)->DeleteLocalRef(env, b);
		(*env)->ExceptionClear(env);
	}
}

static void write_class(struct snap *s, JNIEnv *env, jclass k, jlong id)
{
	char *sig = NULL;
	(*jvmti)->GetClassSignature(jvmti, k, &sig, NULL);
	jclass sup = (*env)->GetSuperclass(env, k);
	jlong sup_id = 0;
	if (sup) {
		(*jvmti)->GetTag(jvmti, sup, &sup_id);
		(*env)->DeleteLocalRef(env, sup);
	}
	jobject loader = NULL;
	(*jvmti)->GetClassLoader(jvmti, k, &loader);
	jlong loader_id = tag_pending(s, loader);
	if (loader)
		(*env)->DeleteLocalRef(env, loader);
	jclass seen[512];
	jint nseen = 0;
	uint32_t nif = ag_iface_fields(jvmti, env, k, seen, &nseen, 512);
	for (jint i = 0; i < nseen; i++)
		(*env)->DeleteLocalRef(env, seen[i]);
	jint nf = 0;
	jfieldID *f = NULL;
	if ((*jvmti)->GetClassFields(jvmti, k, &nf, &f) != JVMTI_ERROR_NONE)
		nf = 0;
	w_u8(s, R_CLASS);
	w_u64(s, (uint64_t)id);
	w_u64(s, (uint64_t)(sup_id & ~PENDING));
	w_u64(s, (uint64_t)loader_id);
	w_u32(s, nif);
	w_str(s, sig ? sig : "?");
	w_u16(s, (uint16_t)nf);
	for (jint i = 0; i < nf; i++) {
		char *name = NULL, *fsig = NULL;
		jint mods = 0;
		(*jvmti)->GetFieldName(jvmti, k, f[i], &name, &fsig, NULL);
		(*jvmti)->GetFieldModifiers(jvmti, k, f[i], &mods);
		w_str(s, name ? name : "?");
		w_str(s, fsig ? fsig : "?");
		w_u8(s, (mods & 0x0008) != 0);
		dealloc(name);
		dealloc(fsig);
	}
	dealloc(f);
	dealloc(sig);
	s->records++;
}

static void write_threads(struct snap *s, JNIEnv *env)
{
	jint n = 0;
	jthread *th = NULL;
	if ((*jvmti)->GetAllThreads(jvmti, &n, &th) != JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < n; i++) {
		jvmtiThreadInfo ti;
		memset(&ti, 0, sizeof ti);
		(*jvmti)->GetThreadInfo(jvmti, th[i], &ti);
		jvmtiFrameInfo frames[256];
		jint nfr = 0;
		if ((*jvmti)->GetStackTrace(jvmti, th[i], 0, 256, frames, &nfr) != JVMTI_ERROR_NONE)
			nfr = 0;
		w_u8(s, R_THREAD);
		w_u64(s, (uint64_t)tag_pending(s, th[i]));
		w_u32(s, (uint32_t)i + 1);
		w_str(s, ti.name ? ti.name : "?");
		w_u32(s, (uint32_t)nfr);
		for (jint j = 0; j < nfr; j++) {
			char *mname = NULL, *msig = NULL, *csig = NULL;
			jclass dc = NULL;
			(*jvmti)->GetMethodName(jvmti, frames[j].method, &mname, &msig, NULL);
			if ((*jvmti)->GetMethodDeclaringClass(jvmti, frames[j].method, &dc) ==
			    JVMTI_ERROR_NONE && dc) {
				(*jvmti)->GetClassSignature(jvmti, dc, &csig, NULL);
				(*env)->DeleteLocalRef(env, dc);
			}
			w_str(s, csig ? csig : "?");
			w_str(s, mname ? mname : "?");
			w_str(s, msig ? msig : "?");
			dealloc(mname);
			dealloc(msig);
			dealloc(csig);
		}
		dealloc(ti.name);
		if (ti.thread_group)
			(*env)->DeleteLocalRef(env, ti.thread_group);
		if (ti.context_class_loader)
			(*env)->DeleteLocalRef(env, ti.context_class_loader);
		(*env)->DeleteLocalRef(env, th[i]);
		s->records++;
	}
	dealloc(th);
}

/* temp_file: an unlinked temporary file in the agent's private directory. */
static FILE *temp_file(void)
{
	char path[300];
	snprintf(path, sizeof path, "%s/snapshot-XXXXXX", sock_dir);
	int fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	unlink(path);
	FILE *f = fdopen(fd, "w+");
	if (!f)
		close(fd);
	else
		setvbuf(f, NULL, _IOFBF, 1 << 20);
	return f;
}

/*
 * snapshot_env: a JVMTI environment of its own for one snapshot, or NULL.
 * Tags live in a per-environment table that grows to one entry per object
 * and never shrinks: in the agent's own environment it would slow every
 * later heap iteration (a 10 M-object snapshot made the push-down's walk
 * 3.5 times slower). Disposing of this one frees its table at once, outside
 * any safepoint, instead of an untagging pass over the heap.
 */
static jvmtiEnv *snapshot_env(JNIEnv *env)
{
	JavaVM *vm = NULL;
	jvmtiEnv *e = NULL;
	if ((*env)->GetJavaVM(env, &vm) != JNI_OK || !vm ||
	    (*vm)->GetEnv(vm, (void **)&e, JVMTI_VERSION_1_2) != JNI_OK || !e)
		return NULL;
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof caps);
	caps.can_tag_objects = 1;
	if ((*e)->AddCapabilities(e, &caps) != JVMTI_ERROR_NONE) {
		(*e)->DisposeEnvironment(e);
		return NULL;
	}
	return e;
}

static bool do_snapshot(int fd, JNIEnv *env, struct req *r)
{
	if (r->p != r->end)
		return false;
	static struct snap s;	/* one snapshot at a time: the agent serves one client */
	memset(&s, 0, sizeof s);
	s.f = temp_file();
	s.next = 1;
	if (!s.f)
		return ag_send_error(fd, "cannot create a temporary file in %s: %s", sock_dir,
				  strerror(errno));
	/* Every jvmti call below goes to the snapshot's environment, when there is one. */
	jvmtiEnv *own = jvmti, *snap_env = snapshot_env(env);
	if (snap_env)
		jvmti = snap_env;
	struct classes c;
	bool ok;
	if (!load_classes(env, &c)) {
		fclose(s.f);
		if (snap_env) {
			jvmti = own;
			(*snap_env)->DisposeEnvironment(snap_env);
		}
		return ag_send_error(fd, "GetLoadedClasses failed");
	}
	for (jint i = 0; i < c.n; i++)
		(*jvmti)->SetTag(jvmti, c.k[i], s.next++);
	jclass cc = (*env)->FindClass(env, "java/lang/Class");
	if (cc) {
		(*jvmti)->GetTag(jvmti, cc, &s.class_class);
		(*env)->DeleteLocalRef(env, cc);
	}
	(*env)->ExceptionClear(env);
	tag_primitive_classes(&s, env);
	for (jint i = 0; i < c.n; i++)
		write_class(&s, env, c.k[i], i + 1);
	write_threads(&s, env);
	jthread self = NULL;
	if ((*jvmti)->GetCurrentThread(jvmti, &self) == JVMTI_ERROR_NONE && self) {
		(*jvmti)->GetTag(jvmti, self, &s.self);
		s.self &= ~PENDING;
		(*env)->DeleteLocalRef(env, self);
	}
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.heap_reference_callback = snap_ref;
	cb.primitive_field_callback = snap_prim;
	cb.array_primitive_value_callback = snap_array;
	jvmtiError e = (*jvmti)->FollowReferences(jvmti, 0, NULL, NULL, &cb, &s);
	drop_classes(env, &c);
	if (snap_env) {
		jvmti = own;
		(*snap_env)->DisposeEnvironment(snap_env);
	} else {
		untag_all();
	}
	w_flush(&s);
	if (e != JVMTI_ERROR_NONE || s.failed || fflush(s.f) != 0) {
		fclose(s.f);
		return ag_send_error(fd, e != JVMTI_ERROR_NONE ? "FollowReferences failed (JVMTI error %d)"
				  : "writing the snapshot failed (disk full?) %d", e);
	}
	rewind(s.f);
	struct buf b = {0};
	ag_bneed(&b, 1 << 20);
	ok = !b.oom;
	while (ok) {
		size_t k = fread(b.p, 1, 1 << 20, s.f);
		if (!k)
			break;
		b.len = k;
		ok = ag_send_frame(fd, T_DATA, &b);
	}
	fclose(s.f);
	if (ok) {
		ag_bu64(&b, s.objects);
		ag_bu64(&b, s.records);
		ok = ag_send_frame(fd, T_END, &b);
	}
	free(b.p);
	return ok;
}

/* ---- INSTANCES: a filter evaluated in the VM ---- */

struct pfield {
	char *name;
	char type;		/* JNI signature letter; 'T' for java.lang.String */
	jfieldID id;		/* for JNI reads */
	jint jvmti_index;	/* instance field index, per the JVMTI numbering */
};

/* Values of one object's fields; known[] says which were read. */
struct pvals {
	int n;
	uint64_t *bits;
	char **text;		/* strings: text, or NULL for null */
	bool *known;
};

enum { NO, YES, MAYBE };

static int cmp_result(int c, int cmp)
{
	switch (cmp) {
	case 0: return c == 0;
	case 1: return c != 0;
	case 2: return c < 0;
	case 3: return c <= 0;
	case 4: return c > 0;
	default: return c >= 0;
	}
}

static int peval(const struct pnode *p, const struct pfield *f, const struct pvals *v)
{
	switch (p->op) {
	case P_TRUE:
		return YES;
	case P_NOT: {
		int x = peval(p->kid[0], f, v);
		return x == MAYBE ? MAYBE : x == YES ? NO : YES;
	}
	case P_AND:
	case P_OR: {
		int res = p->op == P_AND ? YES : NO;
		for (int i = 0; i < p->n; i++) {
			int x = peval(p->kid[i], f, v);
			if (p->op == P_AND && x == NO)
				return NO;
			if (p->op == P_OR && x == YES)
				return YES;
			if (x == MAYBE)
				res = MAYBE;
		}
		return res;
	}
	}
	if (!v->known[p->slot])
		return MAYBE;
	char t = f[p->slot].type;
	uint64_t bits = v->bits[p->slot];
	if (t == 'T') {
		const char *s = v->text[p->slot];
		int eq = p->kind == K_NULL ? s == NULL
			 : p->kind == K_STRING && s ? strcmp(s, p->text) == 0 : 0;
		return (p->cmp == 0 ? eq : !eq) ? YES : NO;
	}
	int c;
	if (t == 'F' || t == 'D' || p->kind == K_DOUBLE) {
		double a, b;
		if (t == 'F') {
			float ff;
			uint32_t lo = (uint32_t)bits;
			memcpy(&ff, &lo, 4);
			a = ff;
		} else if (t == 'D') {
			memcpy(&a, &bits, 8);
		} else {
			a = (double)(int64_t)bits;
		}
		if (p->kind == K_DOUBLE)
			memcpy(&b, &p->bits, 8);
		else
			b = (double)(int64_t)p->bits;
		c = a < b ? -1 : a > b ? 1 : 0;
	} else {
		int64_t a = (int64_t)bits, b = (int64_t)p->bits;
		c = a < b ? -1 : a > b ? 1 : 0;
	}
	return cmp_result(c, p->cmp) ? YES : NO;
}

#define CAND_TAG (1LL << 61)	/* undecided in the walk (String fields): checked through JNI */
#define ROW_TAG (1LL << 60)	/* matches, and is one of the rows to return */

/*
 * The walk decides every object whose predicate needs only primitive fields
 * as soon as its last primitive field is reported (HotSpot reports one
 * object's fields together); only the rows to return and the undecided
 * objects are tagged, so nothing needs untagging but them.
 */
struct inst {
	int nclasses;
	int nslots;
	struct pfield *slots;	/* predicate fields: one set per wanted class */
	int *slot_of;		/* [nclasses * nslots]: jvmti index per class and slot */
	int *nprims;		/* [nclasses]: primitive instance fields of each class */
	struct pnode *pred;
	struct pvals v;
	int seen_prims;		/* fields of the current object seen so far */
	uint64_t examined, matched;
	uint32_t limit, rows;	/* rows wanted, rows tagged */
	bool first_only;	/* stop the walk at the first match */
	bool stop;
};

/* finish: all of an object's primitive fields are in: decide it. */
static void finish(struct inst *in, jlong *tag_ptr)
{
	int r = peval(in->pred, in->slots, &in->v);
	in->examined++;
	if (r == YES) {
		in->matched++;
		if (in->rows < in->limit) {
			*tag_ptr = ROW_TAG;
			in->rows++;
		}
		in->stop = in->first_only;
	} else if (r == MAYBE) {
		*tag_ptr = CAND_TAG;
	}
	for (int i = 0; i < in->v.n; i++)
		in->v.known[i] = false;
	in->seen_prims = 0;
}

/* An instance of a class with no primitive fields: undecided until JNI reads its Strings. */
static void no_prims(struct inst *in, jlong class_tag, jlong *tag_ptr)
{
	if (*tag_ptr == 0 && class_tag > 0 && class_tag <= in->nclasses &&
	    !in->nprims[class_tag - 1]) {
		in->examined++;
		*tag_ptr = CAND_TAG;
	}
}

static jint JNICALL inst_ref(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			     jlong class_tag, jlong referrer_class_tag, jlong size, jlong *tag_ptr,
			     jlong *referrer_tag_ptr, jint length, void *ud)
{
	struct inst *in = ud;
	(void)kind, (void)info, (void)referrer_class_tag, (void)size, (void)referrer_tag_ptr;
	(void)length;
	no_prims(in, class_tag, tag_ptr);
	return in->stop ? JVMTI_VISIT_ABORT : JVMTI_VISIT_OBJECTS;
}

static void inst_prim_value(struct inst *in, jlong class_tag, jint index, jvalue value)
{
	int c = (int)class_tag - 1;
	for (int s = 0; s < in->nslots; s++)
		if (in->slot_of[c * in->nslots + s] == index) {
			uint64_t bits = 0;
			switch (in->slots[s].type) {
			case 'Z': bits = value.z; break;
			case 'B': bits = (uint64_t)(int64_t)value.b; break;
			case 'C': bits = value.c; break;
			case 'S': bits = (uint64_t)(int64_t)value.s; break;
			case 'I': bits = (uint64_t)(int64_t)value.i; break;
			case 'J': bits = (uint64_t)value.j; break;
			case 'F': memcpy(&bits, &value.f, 4); break;
			case 'D': memcpy(&bits, &value.d, 8); break;
			}
			in->v.bits[s] = bits;
			in->v.known[s] = true;
		}
}

static jint JNICALL inst_prim(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			      jlong class_tag, jlong *tag_ptr, jvalue value, jvmtiPrimitiveType type,
			      void *ud)
{
	struct inst *in = ud;
	(void)type;
	if (kind != JVMTI_HEAP_REFERENCE_FIELD || class_tag <= 0 || class_tag > in->nclasses)
		return 0;
	inst_prim_value(in, class_tag, info->field.index, value);
	if (++in->seen_prims >= in->nprims[class_tag - 1])
		finish(in, tag_ptr);
	return in->stop ? JVMTI_VISIT_ABORT : 0;
}

/* The heap-walk variant: every instance, reachable or not yet collected. */
static jint JNICALL inst_iter(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud)
{
	struct inst *in = ud;
	(void)size, (void)length;
	no_prims(in, class_tag, tag_ptr);
	return in->stop ? JVMTI_VISIT_ABORT : 0;
}

static jint JNICALL inst_iter_prim(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
				   jlong class_tag, jlong *tag_ptr, jvalue value,
				   jvmtiPrimitiveType type, void *ud)
{
	return inst_prim(kind, info, class_tag, tag_ptr, value, type, ud);
}

/* field_table: the instance fields of k, with JVMTI indexes (see docs/protocol.md). */
struct ftab {
	int n;
	struct pfield *f;
};

static void ftab_free(struct ftab *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->f[i].name);
	free(t->f);
	t->f = NULL;
	t->n = 0;
}

static bool field_table(JNIEnv *env, jclass k, struct ftab *t)
{
	t->n = 0;
	t->f = NULL;
	jclass chain[64];
	int depth = 0;
	for (jclass c = (*env)->NewLocalRef(env, k); c && depth < 64;) {
		chain[depth++] = c;
		c = (*env)->GetSuperclass(env, c);
	}
	jclass seen[512];
	jint nseen = 0;
	jint index = (jint)ag_iface_fields(jvmti, env, k, seen, &nseen, 512);
	for (jint i = 0; i < nseen; i++)
		(*env)->DeleteLocalRef(env, seen[i]);
	for (int d = depth; d-- > 0;) {	/* java.lang.Object first */
		jint nf = 0;
		jfieldID *f = NULL;
		if ((*jvmti)->GetClassFields(jvmti, chain[d], &nf, &f) != JVMTI_ERROR_NONE)
			nf = 0;
		for (jint i = 0; i < nf; i++, index++) {
			char *name = NULL, *sig = NULL;
			jint mods = 0;
			(*jvmti)->GetFieldName(jvmti, chain[d], f[i], &name, &sig, NULL);
			(*jvmti)->GetFieldModifiers(jvmti, chain[d], f[i], &mods);
			if (!(mods & 0x0008) && name && sig) {
				struct pfield *g = realloc(t->f, (size_t)(t->n + 1) * sizeof *g);
				if (g) {
					t->f = g;
					g[t->n].name = strdup(name);
					g[t->n].type = !strcmp(sig, "Ljava/lang/String;") ? 'T' : sig[0];
					g[t->n].id = f[i];
					g[t->n].jvmti_index = index;
					t->n++;
				}
			}
			dealloc(name);
			dealloc(sig);
		}
		dealloc(f);
		(*env)->DeleteLocalRef(env, chain[d]);
	}
	return true;
}

static int collect_slots(struct pnode *p, struct inst *in, char *why, size_t cap)
{
	if (p->op != P_CMP) {
		for (int i = 0; i < p->n; i++)
			if (collect_slots(p->kid[i], in, why, cap))
				return -1;
		return 0;
	}
	for (int s = 0; s < in->nslots; s++)
		if (!strcmp(in->slots[s].name, p->field)) {
			p->slot = s;
			return 0;
		}
	struct pfield *g = realloc(in->slots, (size_t)(in->nslots + 1) * sizeof *g);
	if (!g) {
		snprintf(why, cap, "out of memory in the agent");
		return -1;
	}
	in->slots = g;
	memset(&g[in->nslots], 0, sizeof *g);
	g[in->nslots].name = strdup(p->field);
	p->slot = in->nslots++;
	return 0;
}

static char *java_name(const char *sig)
{
	/* Lcom/x/Y; -> com.x.Y ; arrays keep the JNI form. */
	size_t n = strlen(sig);
	char *s = malloc(n + 1);
	if (!s)
		return NULL;
	if (sig[0] == 'L' && n > 2) {
		memcpy(s, sig + 1, n - 2);
		s[n - 2] = 0;
	} else {
		memcpy(s, sig, n + 1);
	}
	for (char *q = s; *q; q++)
		if (*q == '/')
			*q = '.';
	return s;
}

/*
 * read_field: field f of o through JNI: primitives as value bits, a String
 * as a new copy of its text (*text; NULL for null). False on a JNI error.
 */
static bool read_field(JNIEnv *env, jobject o, const struct pfield *f, uint64_t *bits,
		       char **text)
{
	*bits = 0;
	*text = NULL;
	switch (f->type) {
	case 'Z': *bits = (*env)->GetBooleanField(env, o, f->id); break;
	case 'B': *bits = (uint64_t)(int64_t)(*env)->GetByteField(env, o, f->id); break;
	case 'C': *bits = (*env)->GetCharField(env, o, f->id); break;
	case 'S': *bits = (uint64_t)(int64_t)(*env)->GetShortField(env, o, f->id); break;
	case 'I': *bits = (uint64_t)(int64_t)(*env)->GetIntField(env, o, f->id); break;
	case 'J': *bits = (uint64_t)(*env)->GetLongField(env, o, f->id); break;
	case 'F': { float x = (*env)->GetFloatField(env, o, f->id); memcpy(bits, &x, 4); break; }
	case 'D': { double x = (*env)->GetDoubleField(env, o, f->id); memcpy(bits, &x, 8); break; }
	case 'T': {
		jobject str = (*env)->GetObjectField(env, o, f->id);
		if (str) {
			const char *u = (*env)->GetStringUTFChars(env, str, NULL);
			*text = strdup(u ? u : "");
			if (u)
				(*env)->ReleaseStringUTFChars(env, str, u);
			(*env)->DeleteLocalRef(env, str);
		}
		break;
	}
	default:
		return false;
	}
	return !(*env)->ExceptionCheck(env);
}

static void put_field_value(struct buf *b, JNIEnv *env, jobject o, const struct pfield *f)
{
	ag_bstr(b, f->name);
	if (f->type == 'L' || f->type == '[') {
		jobject r = (*env)->GetObjectField(env, o, f->id);
		if (!r) {
			ag_bu8(b, 'N');
			return;
		}
		jclass rc = (*env)->GetObjectClass(env, r);
		char *sig = NULL;
		(*jvmti)->GetClassSignature(jvmti, rc, &sig, NULL);
		ag_bu8(b, 'L');
		ag_bstr(b, sig ? sig : "?");
		dealloc(sig);
		(*env)->DeleteLocalRef(env, rc);
		(*env)->DeleteLocalRef(env, r);
		return;
	}
	uint64_t bits;
	char *text;
	read_field(env, o, f, &bits, &text);
	if (f->type == 'T') {
		if (text) {
			ag_bu8(b, 'T');
			ag_bstr(b, text);
			free(text);
		} else {
			ag_bu8(b, 'N');
		}
		return;
	}
	ag_bu8(b, (uint8_t)f->type);
	ag_bu64(b, bits);
}

static bool do_instances(int fd, JNIEnv *env, struct req *r)
{
	char *cname = ag_rstr(r);
	uint8_t flags = ag_ru8(r);
	uint32_t limit = ag_ru32(r);
	int budget = 256;
	struct pnode *pred = cname ? ag_pred_read(r, 0, &budget) : NULL;
	if (r->bad || r->p != r->end || !pred) {
		free(cname);
		ag_pred_free(pred);
		return false;
	}
	struct inst in;
	memset(&in, 0, sizeof in);
	in.pred = pred;
	struct classes c;
	struct ftab *tabs = NULL;
	jclass *wanted = NULL;
	char **names = NULL;
	uint32_t *picked = NULL;
	char why[300] = "";
	bool ok = false;
	if (!load_classes(env, &c)) {
		snprintf(why, sizeof why, "GetLoadedClasses failed");
		goto reply;
	}
	/* The classes the name names, by heapsh's one rule (src/base/classname.h). */
	names = calloc((size_t)c.n + 1, sizeof *names);
	picked = calloc((size_t)c.n + 1, sizeof *picked);
	wanted = calloc((size_t)c.n + 1, sizeof *wanted);
	if (!names || !picked || !wanted) {
		snprintf(why, sizeof why, "out of memory in the agent");
		goto reply;
	}
	for (jint i = 0; i < c.n; i++) {
		char *sig = NULL;
		(*jvmti)->GetClassSignature(jvmti, c.k[i], &sig, NULL);
		names[i] = sig && sig[0] == 'L' ? java_name(sig) : NULL;
		dealloc(sig);
		if (!names[i])
			names[i] = strdup("");
	}
	uint32_t np = cn_select(cname, (const char *const *)names, (uint32_t)c.n, picked);
	if (!np) {
		snprintf(why, sizeof why, "no loaded class is named %s", cname);
		goto reply;
	}
	for (uint32_t k = 1; k < np; k++)
		if (strcmp(names[picked[k]], names[picked[0]])) {
			size_t len = (size_t)snprintf(why, sizeof why, "'%s' is ambiguous: ", cname);
			for (uint32_t j = 0; j < np && len + 60 < sizeof why; j++)
				len += (size_t)snprintf(why + len, sizeof why - len, "%s%s", j ? ", " : "",
							names[picked[j]]);
			snprintf(why + len, sizeof why - len, "; write the full name");
			goto reply;
		}
	/* Every class of that name (one per class loader), and with subclasses their subclasses. */
	for (jint i = 0; i < c.n; i++)
		for (uint32_t k = 0; k < np; k++) {
			jclass b = c.k[picked[k]];
			if ((*env)->IsSameObject(env, c.k[i], b) ||
			    ((flags & 1) && (*env)->IsAssignableFrom(env, c.k[i], b))) {
				wanted[in.nclasses++] = c.k[i];
				break;
			}
		}
	if (collect_slots(pred, &in, why, sizeof why))
		goto reply;
	tabs = calloc((size_t)in.nclasses + 1, sizeof *tabs);
	in.slot_of = calloc((size_t)in.nclasses * (size_t)(in.nslots + 1) + 1, sizeof *in.slot_of);
	in.nprims = calloc((size_t)in.nclasses + 1, sizeof *in.nprims);
	in.v.n = in.nslots;
	in.v.bits = calloc((size_t)in.nslots + 1, 8);
	in.v.text = calloc((size_t)in.nslots + 1, sizeof *in.v.text);
	in.v.known = calloc((size_t)in.nslots + 1, 1);
	if (!tabs || !in.slot_of || !in.nprims || !in.v.bits || !in.v.text || !in.v.known) {
		snprintf(why, sizeof why, "out of memory in the agent");
		goto reply;
	}
	for (int k = 0; k < in.nclasses; k++) {
		field_table(env, wanted[k], &tabs[k]);
		for (int f = 0; f < tabs[k].n; f++)
			in.nprims[k] += tabs[k].f[f].type != 'L' && tabs[k].f[f].type != '[' &&
					tabs[k].f[f].type != 'T';
		for (int s = 0; s < in.nslots; s++) {
			in.slot_of[k * in.nslots + s] = -1;
			for (int f = 0; f < tabs[k].n; f++)
				if (!strcmp(tabs[k].f[f].name, in.slots[s].name)) {
					char t = tabs[k].f[f].type;
					if (t == 'L' || t == '[') {
						snprintf(why, sizeof why, "field %s of %s is neither "
							 "primitive nor a String: it cannot be "
							 "compared inside the VM", in.slots[s].name, cname);
						goto reply;
					}
					if (k == 0)
						in.slots[s].type = t;
					in.slot_of[k * in.nslots + s] =
						t == 'T' ? -2 : tabs[k].f[f].jvmti_index;
				}
			if (in.slot_of[k * in.nslots + s] == -1 && k == 0) {
				snprintf(why, sizeof why, "class %s has no instance field '%s'", cname,
					 in.slots[s].name);
				goto reply;
			}
		}
	}
	for (int k = 0; k < in.nclasses; k++)
		(*jvmti)->SetTag(jvmti, wanted[k], k + 1);
	in.limit = limit;
	in.first_only = (flags & 4) != 0;
	/* After a full GC every object left is live: the heap iteration is then exact. */
	if (flags & 8)
		(*jvmti)->ForceGarbageCollection(jvmti);
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	jvmtiError e;
	if (flags & 2) {
		cb.heap_iteration_callback = inst_iter;
		cb.primitive_field_callback = inst_iter_prim;
		e = (*jvmti)->IterateThroughHeap(jvmti, JVMTI_HEAP_FILTER_CLASS_UNTAGGED, NULL, &cb, &in);
	} else {
		cb.heap_reference_callback = inst_ref;
		cb.primitive_field_callback = inst_prim;
		e = (*jvmti)->FollowReferences(jvmti, JVMTI_HEAP_FILTER_CLASS_UNTAGGED, NULL, NULL, &cb,
					      &in);
	}
	for (int k = 0; k < in.nclasses; k++)
		(*jvmti)->SetTag(jvmti, wanted[k], 0);
	if (e != JVMTI_ERROR_NONE) {
		untag_all();
		snprintf(why, sizeof why, "the heap walk failed (JVMTI error %d)", e);
		goto reply;
	}
	/* The rows and the undecided objects, as JNI references; their tags go now. */
	jlong want_tags[2] = {ROW_TAG, CAND_TAG};
	jint nobj = 0;
	jobject *objs = NULL;
	jlong *otags = NULL;
	e = (*jvmti)->GetObjectsWithTags(jvmti, 2, want_tags, &nobj, &objs, &otags);
	if (e != JVMTI_ERROR_NONE) {
		untag_all();
		snprintf(why, sizeof why, "GetObjectsWithTags failed (JVMTI error %d)", e);
		goto reply;
	}
	struct buf rows = {0};
	uint32_t nrows = 0;
	for (jint i = 0; i < nobj; i++) {
		jobject o = objs[i];
		(*jvmti)->SetTag(jvmti, o, 0);
		jclass oc = (*env)->GetObjectClass(env, o);
		int k = 0;
		while (k < in.nclasses && !(*env)->IsSameObject(env, oc, wanted[k]))
			k++;
		(*env)->DeleteLocalRef(env, oc);
		if (k == in.nclasses)
			k = 0;
		bool row = otags[i] == ROW_TAG;
		if (!row) {	/* undecided: read the predicate's fields through JNI */
			for (int sl = 0; sl < in.nslots; sl++) {
				in.v.known[sl] = false;
				for (int f = 0; f < tabs[k].n; f++)
					if (!strcmp(tabs[k].f[f].name, in.slots[sl].name))
						in.v.known[sl] = read_field(env, o, &tabs[k].f[f],
									    &in.v.bits[sl], &in.v.text[sl]);
			}
			int res = peval(pred, in.slots, &in.v);
			for (int sl = 0; sl < in.nslots; sl++) {
				free(in.v.text[sl]);
				in.v.text[sl] = NULL;
			}
			if (res == YES)
				in.matched++;
			row = res == YES && nrows < limit;
		}
		if (row && nrows < limit) {
			jclass rc = (*env)->GetObjectClass(env, o);
			char *sig = NULL;
			(*jvmti)->GetClassSignature(jvmti, rc, &sig, NULL);
			ag_bstr(&rows, sig ? sig : "?");
			dealloc(sig);
			(*env)->DeleteLocalRef(env, rc);
			ag_bu16(&rows, (uint16_t)tabs[k].n);
			for (int f = 0; f < tabs[k].n; f++)
				put_field_value(&rows, env, o, &tabs[k].f[f]);
			nrows++;
		}
		(*env)->DeleteLocalRef(env, o);
		if ((*env)->ExceptionCheck(env))
			(*env)->ExceptionClear(env);
	}
	dealloc(objs);
	dealloc(otags);
	uint64_t matched = in.matched;
	struct buf b = {0};
	ag_bu64(&b, in.examined);
	ag_bu64(&b, matched);
	ag_bu32(&b, nrows);
	ag_bput(&b, rows.p, rows.len);
	free(rows.p);
	ok = ag_send_frame(fd, T_INSTANCES, &b);
	free(b.p);
	why[0] = 0;
reply:
	if (why[0])
		ok = ag_send_error(fd, "%s", why);
	for (int k = 0; tabs && k < in.nclasses; k++)
		ftab_free(&tabs[k]);
	free(tabs);
	for (int s = 0; s < in.nslots; s++)
		free(in.slots[s].name);
	free(in.slots);
	free(in.slot_of);
	free(in.nprims);
	free(in.v.bits);
	free(in.v.text);
	free(in.v.known);
	free(wanted);
	for (jint i = 0; names && i < c.n; i++)
		free(names[i]);
	free(names);
	free(picked);
	if (c.k)
		drop_classes(env, &c);
	ag_pred_free(pred);
	free(cname);
	return ok;
}

/* ---- the server ---- */

/* read_frame: the next request; false (close) on EOF, timeout or a bad length. */
static bool read_frame(int fd, uint8_t *type, uint8_t **payload, uint32_t *len)
{
	uint8_t h[5];
	/* Wait for the first byte with the idle timeout, the rest with the frame timeout. */
	if (!ag_io_full(fd, h, 1, true, ag_now_ms() + IDLE_MS) ||
	    !ag_io_full(fd, h + 1, 4, true, ag_now_ms() + FRAME_MS))
		return false;
	uint32_t n = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
	if (n < 1 || n > MAX_REQUEST)
		return false;
	*type = h[4];
	*len = n - 1;
	*payload = malloc(*len + 1);
	if (!*payload)
		return false;
	if (!ag_io_full(fd, *payload, *len, true, ag_now_ms() + FRAME_MS)) {
		free(*payload);
		return false;
	}
	return true;
}

/*
 * The shells using this agent (T_CLIENT, T_LEAVE): the agent serves one
 * connection at a time, but several shells may use it in turn; a shell that
 * leaves detaches the agent only when no other one (still alive) uses it, no
 * allocation recording lives in it, and it was not loaded at JVM start-up.
 */
#define MAX_CLIENTS 64
#define MAX_CONNS 16	/* connections served in turn */
static pid_t clients[MAX_CLIENTS];
static int nclients;
static bool loaded_at_start;

static void prune_clients(pid_t leaving)
{
	int m = 0;
	for (int k = 0; k < nclients; k++)
		if (clients[k] != leaving && (kill(clients[k], 0) == 0 || errno == EPERM))
			clients[m++] = clients[k];
	nclients = m;
}

/* do_client: a shell says who it is (u32 pid). */
static bool do_client(int fd, struct req *r)
{
	pid_t pid = (pid_t)ag_ru32(r);
	if (r->bad || r->p != r->end || pid <= 0)
		return false;
	prune_clients(pid);
	if (nclients < MAX_CLIENTS)
		clients[nclients++] = pid;
	struct buf b = {0};
	bool ok = ag_send_frame(fd, T_CLIENT, &b);
	free(b.p);
	return ok;
}

/*
 * do_leave: a shell leaves (u32 pid, u8 flags; bit 0: detach if nothing else
 * needs the agent). Reply: u8 outcome (0 detached, 1 kept: an allocation
 * recording, 2 kept: another shell uses it, 3 kept: loaded at start-up, 4
 * kept: not asked to detach), u32 the other shell's pid. *stop: detach now.
 */
static bool do_leave(int fd, struct req *r, bool *stop)
{
	pid_t pid = (pid_t)ag_ru32(r);
	uint8_t flags = ag_ru8(r);
	if (r->bad || r->p != r->end)
		return false;
	prune_clients(pid);
	uint8_t outcome = !(flags & 1) ? 4 : loaded_at_start ? 3 : ag_alloc_exists() ? 1
			  : nclients ? 2 : 0;
	struct buf b = {0};
	ag_bu8(&b, outcome);
	ag_bu32(&b, outcome == 2 ? (uint32_t)clients[0] : 0);
	bool ok = ag_send_frame(fd, T_LEAVE, &b);
	free(b.p);
	*stop = ok && outcome == 0;
	return ok;
}

/*
 * handle: one request of a connection (*hello: it said HELLO). Returns 1 to
 * go on, 0 to close the connection (a malformed or unexpected request), -1
 * when the agent detaches.
 */
static int handle(int fd, JNIEnv *env, bool *hello, uint8_t type, uint8_t *payload, uint32_t len)
{
	struct req r = {payload, payload + len, false};
	bool ok = true;
	int go = 1;
	if (!*hello && type != T_HELLO) {
		ok = false;
	} else if (type == T_HELLO) {
		uint32_t magic = ag_ru32(&r);
		uint16_t ver = ag_ru16(&r);
		if (r.bad || r.p != r.end || magic != AG_MAGIC) {
			ok = false;
		} else if (ver != AG_PROTO) {
			ag_send_error(fd, "protocol version %u is not supported; this agent "
				   "speaks version %d", ver, AG_PROTO);
			ok = false;
		} else {
			struct buf b = {0};
			ag_bu32(&b, AG_MAGIC);
			ag_bu16(&b, AG_PROTO);
			ag_bstr(&b, AG_VERSION);
			ag_bstr(&b, "can_tag_objects,alloc,dump,clients,analyze");
			ok = ag_send_frame(fd, T_HELLO, &b);
			free(b.p);
			*hello = true;
		}
	} else if (type == T_INFO) {
		ok = r.p == r.end && do_info(fd, env);
	} else if (type == T_HISTOGRAM) {
		ok = do_histogram(fd, env, &r);
	} else if (type == T_SNAPSHOT) {
		ok = do_snapshot(fd, env, &r);
	} else if (type == T_INSTANCES) {
		ok = do_instances(fd, env, &r);
	} else if (type >= T_ALLOC_START && type <= T_ALLOC_READ) {
		ok = ag_alloc_request(fd, env, type, &r);
	} else if (type == T_DUMP) {
		ok = ag_dump_request(fd, env, &r);
	} else if (type == T_ANALYZE) {
		JavaVM *vm = NULL;
		ok = (*env)->GetJavaVM(env, &vm) == 0 && ag_analyze_request(fd, env, vm, &r);
	} else if (type == T_CANCEL) {
		ok = r.p == r.end;	/* nothing running: nothing to cancel */
	} else if (type == T_CLIENT) {
		ok = do_client(fd, &r);
	} else if (type == T_LEAVE) {
		bool stop = false;
		ok = do_leave(fd, &r, &stop);
		if (stop)
			go = -1;
	} else if (type == T_DETACH) {
		struct buf b = {0};
		ok = r.p == r.end;
		if (ok) {
			ag_send_frame(fd, T_DETACH, &b);
			go = -1;
		}
	} else {
		ok = false;
	}
	free(payload);
	if ((*env)->ExceptionCheck(env))
		(*env)->ExceptionClear(env);
	return go < 0 ? -1 : ok ? 1 : 0;
}

/* make_dir: the private socket directory, refusing anything we do not own alone. */
static bool make_dir(void)
{
	snprintf(sock_dir, sizeof sock_dir, "/tmp/.heapsh-%d", (int)getpid());
	snprintf(sock_path, sizeof sock_path, "%s/agent.sock", sock_dir);
	if (mkdir(sock_dir, 0700) != 0 && errno != EEXIST) {
		ag_log("cannot create %s: %s", sock_dir, strerror(errno));
		return false;
	}
	struct stat st;
	if (lstat(sock_dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		ag_log("%s is not a private directory of this user; remove it and attach again",
		       sock_dir);
		return false;
	}
	unlink(sock_path);
	return true;
}

static void JNICALL server_main(jvmtiEnv *env_ti, JNIEnv *env, void *arg)
{
	(void)env_ti;
	(void)arg;
	ag_in_agent_thread = 1;
	int lfd = -1;
	if (!make_dir())
		goto out;
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof a.sun_path, "%s", sock_path);
	mode_t old = umask(077);
	bool bound = lfd >= 0 && bind(lfd, (struct sockaddr *)&a, sizeof a) == 0;
	umask(old);
	if (!bound || listen(lfd, 4) != 0) {
		ag_log("cannot listen on %s: %s", sock_path, strerror(errno));
		goto out;
	}
	/*
	 * Several shells may be connected at once; their requests are served
	 * one at a time, in turn. A connection idle for IDLE_MS is closed (the
	 * shell connects again when it next asks).
	 */
	struct conn {
		int fd;
		bool hello;
		int64_t last;	/* ag_now_ms of its last request */
	} cs[MAX_CONNS];
	int ncs = 0;
	while (!ag_stop) {
		struct pollfd pf[MAX_CONNS + 1];
		pf[0] = (struct pollfd){lfd, POLLIN, 0};
		for (int k = 0; k < ncs; k++)
			pf[k + 1] = (struct pollfd){cs[k].fd, POLLIN, 0};
		if (poll(pf, (nfds_t)ncs + 1, 500) < 0)
			continue;
		int64_t now = ag_now_ms();
		for (int k = 0; k < ncs && !ag_stop; k++) {
			bool close_it = now - cs[k].last > IDLE_MS;
			if (!close_it && (pf[k + 1].revents & (POLLIN | POLLHUP | POLLERR))) {
				uint8_t type, *payload;
				uint32_t len;
				int go = read_frame(cs[k].fd, &type, &payload, &len)
						 ? handle(cs[k].fd, env, &cs[k].hello, type, payload, len) : 0;
				cs[k].last = ag_now_ms();
				if (go < 0)
					ag_stop = 1;
				close_it = go <= 0;
			}
			if (close_it) {
				close(cs[k].fd);
				cs[k] = cs[--ncs];
				pf[k + 1] = pf[ncs + 1];
				k--;
			}
		}
		if (ag_stop || !(pf[0].revents & POLLIN))
			continue;
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		struct ucred cr;
		socklen_t cl = sizeof cr;
		if (ncs < MAX_CONNS && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) == 0 &&
		    (cr.uid == geteuid() || cr.uid == 0))
			cs[ncs++] = (struct conn){fd, false, ag_now_ms()};
		else
			close(fd);
	}
	for (int k = 0; k < ncs; k++)
		close(cs[k].fd);
out:
	if (lfd >= 0)
		close(lfd);
	unlink(sock_path);
	rmdir(sock_dir);
	if (ag_stop == 1) {	/* detached: give the environment back */
		jvmtiEnv *e = jvmti;
		jvmti = NULL;
		(*e)->DisposeEnvironment(e);
	}
	ag_running = 0;	/* last: Agent_OnAttach waits for it */
}

static int start_thread(JNIEnv *env)
{
	jclass tc = (*env)->FindClass(env, "java/lang/Thread");
	jmethodID init = tc ? (*env)->GetMethodID(env, tc, "<init>", "(Ljava/lang/String;)V") : NULL;
	ag_in_agent_thread = 1;	/* the agent's thread object is not the program's allocation */
	jstring name = init ? (*env)->NewStringUTF(env, "heapsh-agent") : NULL;
	jobject th = name ? (*env)->NewObject(env, tc, init, name) : NULL;
	ag_in_agent_thread = 0;
	if (!th) {
		(*env)->ExceptionClear(env);
		ag_log("cannot create the agent thread");
		return -1;
	}
	ag_stop = 0;
	ag_running = 1;
	if ((*jvmti)->RunAgentThread(jvmti, th, server_main, NULL, JVMTI_THREAD_NORM_PRIORITY) !=
	    JVMTI_ERROR_NONE) {
		ag_running = 0;
		ag_log("RunAgentThread failed");
		return -1;
	}
	return 0;
}

static void JNICALL on_vm_init(jvmtiEnv *e, JNIEnv *env, jthread thread)
{
	(void)e;
	(void)thread;
	ag_alloc_vm_init(env);
	start_thread(env);
}

static void JNICALL on_vm_death(jvmtiEnv *e, JNIEnv *env)
{
	(void)e;
	(void)env;
	ag_stop = 2;
	ag_alloc_vm_death();
	unlink(sock_path);
	rmdir(sock_dir);
}

/* setup: a JVMTI environment with can_tag_objects and the VM events. */
static int setup(JavaVM *vm, bool at_start)
{
	loaded_at_start = at_start;
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || !jvmti) {
		ag_log("this JVM offers no JVMTI 1.2 environment");
		return -1;
	}
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof caps);
	caps.can_tag_objects = 1;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
		ag_log("the JVM refused the can_tag_objects capability");
		return -1;
	}
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	(*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
	if (at_start)
		(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
	return 0;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	if (setup(vm, true))
		return JNI_ERR;
	ag_alloc_init(vm);
	/* A bad alloc= option is logged; the JVM starts all the same, without a recording. */
	ag_alloc_options(options);
	return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	(void)options;
	(void)reserved;
	/* Attached again right after a detach: let the old thread finish first. */
	for (int k = 0; k < 500 && ag_running && ag_stop == 1; k++)
		usleep(10000);
	if (ag_running)
		return JNI_OK;	/* already serving: heapsh just connects */
	if (!jvmti && setup(vm, false))
		return JNI_ERR;
	ag_alloc_init(vm);
	JNIEnv *env;
	if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK)
		return JNI_ERR;
	return start_thread(env) ? JNI_ERR : JNI_OK;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	(void)vm;
	ag_stop = 2;
}
