/*
 * snapshot.c - the agent's SNAPSHOT request (docs/protocol.md; `:refresh
 * --via agent`): the agent's own walk of the reachable graph
 * (FollowReferences: the thesis's "extended dump"), following what HotSpot's
 * heap dumper does (docs/agent.md, "Snapshots"). Its records (classes,
 * threads and their frames, objects, references, GC roots, primitive fields
 * and arrays) go to an unlinked temporary file in the agent's private
 * directory while the VM is stopped, and to the client as DATA frames after
 * the walk; heapsh makes them an HPROF file (src/attach/snapshot.c). The
 * other way to a snapshot, HotSpot's own dumper, is dump.c's.
 */
#include <errno.h>
#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ag.h"

enum { R_CLASS = 1, R_OBJECT, R_REFERENCE, R_ROOT, R_PRIMITIVE, R_PRIMARRAY, R_THREAD };

#define PENDING (1LL << 62)	/* tagged before the walk, OBJECT record not yet written */
#define SKIPPED (1LL << 59)	/* has an id but no OBJECT record */

struct snap {
	FILE *f;
	jlong next;		/* next object id */
	jlong class_class;	/* the tag of java.lang.Class */
	jlong self;		/* the tag of the agent's own thread: its JNI locals are no roots */
	uint64_t objects, records;
	struct wire_w w;	/* records, drained to f 64 KiB at a time (stdio locks per call) */
};

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
	wire_put8(&s->w, R_OBJECT);
	wire_put64(&s->w, (uint64_t)t);
	wire_put64(&s->w, (uint64_t)(class_tag & ~PENDING));
	wire_put64(&s->w, (uint64_t)size);
	wire_put32(&s->w, (uint32_t)length);
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
		wire_put8(&s->w, R_ROOT);
		wire_put8(&s->w, (uint8_t)kind);
		wire_put64(&s->w, (uint64_t)id);
		wire_put64(&s->w, thread);
		wire_put32(&s->w, (uint32_t)depth);
	} else {
		int32_t index = -1;
		if (kind == JVMTI_HEAP_REFERENCE_FIELD || kind == JVMTI_HEAP_REFERENCE_STATIC_FIELD)
			index = info->field.index;
		else if (kind == JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT)
			index = info->array.index;
		else if (kind == JVMTI_HEAP_REFERENCE_CONSTANT_POOL)
			index = info->constant_pool.index;
		wire_put8(&s->w, R_REFERENCE);
		wire_put64(&s->w, (uint64_t)(*referrer_tag_ptr & ~(PENDING | SKIPPED)));
		wire_put8(&s->w, (uint8_t)kind);
		wire_put32(&s->w, (uint32_t)index);
		wire_put64(&s->w, (uint64_t)id);
	}
	s->records++;
	return s->w.err ? JVMTI_VISIT_ABORT : JVMTI_VISIT_OBJECTS;
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
	wire_put8(&s->w, R_PRIMITIVE);
	wire_put64(&s->w, (uint64_t)(*object_tag_ptr & ~(PENDING | SKIPPED)));
	wire_put8(&s->w, (uint8_t)kind);
	wire_put32(&s->w, (uint32_t)info->field.index);
	wire_put8(&s->w, (uint8_t)type);
	wire_put64(&s->w, bits);
	s->records++;
	return s->w.err ? JVMTI_VISIT_ABORT : 0;
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
	wire_put8(&s->w, R_PRIMARRAY);
	wire_put64(&s->w, (uint64_t)(*tag_ptr & ~PENDING));
	wire_put8(&s->w, (uint8_t)type);
	wire_put32(&s->w, (uint32_t)count);
	wire_put_bytes(&s->w, elements, (size_t)count * prim_size(type));
	s->records++;
	return s->w.err ? JVMTI_VISIT_ABORT : 0;
}

/* tag_pending: give o an id now (for classes' loaders and threads), written when met. */
static jlong tag_pending(struct snap *s, jobject o)
{
	jlong t = 0;
	if (!o || (*ag_jvmti)->GetTag(ag_jvmti, o, &t) != JVMTI_ERROR_NONE)
		return 0;
	if (!t) {
		t = s->next++;
		(*ag_jvmti)->SetTag(ag_jvmti, o, t | PENDING);
	}
	return t & ~PENDING;
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
	(*ag_jvmti)->GetClassSignature(ag_jvmti, k, &sig, NULL);
	jclass sup = (*env)->GetSuperclass(env, k);
	jlong sup_id = 0;
	if (sup) {
		(*ag_jvmti)->GetTag(ag_jvmti, sup, &sup_id);
		(*env)->DeleteLocalRef(env, sup);
	}
	jobject loader = NULL;
	(*ag_jvmti)->GetClassLoader(ag_jvmti, k, &loader);
	jlong loader_id = tag_pending(s, loader);
	if (loader)
		(*env)->DeleteLocalRef(env, loader);
	jclass seen[512];
	jint nseen = 0;
	uint32_t nif = ag_iface_fields(ag_jvmti, env, k, seen, &nseen, 512);
	for (jint i = 0; i < nseen; i++)
		(*env)->DeleteLocalRef(env, seen[i]);
	jint nf = 0;
	jfieldID *f = NULL;
	if ((*ag_jvmti)->GetClassFields(ag_jvmti, k, &nf, &f) != JVMTI_ERROR_NONE)
		nf = 0;
	wire_put8(&s->w, R_CLASS);
	wire_put64(&s->w, (uint64_t)id);
	wire_put64(&s->w, (uint64_t)(sup_id & ~PENDING));
	wire_put64(&s->w, (uint64_t)loader_id);
	wire_put32(&s->w, nif);
	wire_put_str(&s->w, sig ? sig : "?");
	wire_put16(&s->w, (uint16_t)nf);
	for (jint i = 0; i < nf; i++) {
		char *name = NULL, *fsig = NULL;
		jint mods = 0;
		(*ag_jvmti)->GetFieldName(ag_jvmti, k, f[i], &name, &fsig, NULL);
		(*ag_jvmti)->GetFieldModifiers(ag_jvmti, k, f[i], &mods);
		wire_put_str(&s->w, name ? name : "?");
		wire_put_str(&s->w, fsig ? fsig : "?");
		wire_put8(&s->w, (mods & 0x0008) != 0);
		ag_dealloc(name);
		ag_dealloc(fsig);
	}
	ag_dealloc(f);
	ag_dealloc(sig);
	s->records++;
}

static void write_threads(struct snap *s, JNIEnv *env)
{
	jint n = 0;
	jthread *th = NULL;
	if ((*ag_jvmti)->GetAllThreads(ag_jvmti, &n, &th) != JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < n; i++) {
		jvmtiThreadInfo ti;
		memset(&ti, 0, sizeof ti);
		(*ag_jvmti)->GetThreadInfo(ag_jvmti, th[i], &ti);
		jvmtiFrameInfo frames[256];
		jint nfr = 0;
		if ((*ag_jvmti)->GetStackTrace(ag_jvmti, th[i], 0, 256, frames, &nfr) != JVMTI_ERROR_NONE)
			nfr = 0;
		wire_put8(&s->w, R_THREAD);
		wire_put64(&s->w, (uint64_t)tag_pending(s, th[i]));
		wire_put32(&s->w, (uint32_t)i + 1);
		wire_put_str(&s->w, ti.name ? ti.name : "?");
		wire_put32(&s->w, (uint32_t)nfr);
		for (jint j = 0; j < nfr; j++) {
			char *mname = NULL, *msig = NULL, *csig = NULL;
			jclass dc = NULL;
			(*ag_jvmti)->GetMethodName(ag_jvmti, frames[j].method, &mname, &msig, NULL);
			if ((*ag_jvmti)->GetMethodDeclaringClass(ag_jvmti, frames[j].method, &dc) ==
			    JVMTI_ERROR_NONE && dc) {
				(*ag_jvmti)->GetClassSignature(ag_jvmti, dc, &csig, NULL);
				(*env)->DeleteLocalRef(env, dc);
			}
			wire_put_str(&s->w, csig ? csig : "?");
			wire_put_str(&s->w, mname ? mname : "?");
			wire_put_str(&s->w, msig ? msig : "?");
			ag_dealloc(mname);
			ag_dealloc(msig);
			ag_dealloc(csig);
		}
		ag_dealloc(ti.name);
		if (ti.thread_group)
			(*env)->DeleteLocalRef(env, ti.thread_group);
		if (ti.context_class_loader)
			(*env)->DeleteLocalRef(env, ti.context_class_loader);
		(*env)->DeleteLocalRef(env, th[i]);
		s->records++;
	}
	ag_dealloc(th);
}

/* temp_file: an unlinked temporary file in the agent's private directory. */
static FILE *temp_file(void)
{
	char path[300];
	snprintf(path, sizeof path, "%s/snapshot-XXXXXX", ag_sock_dir);
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

bool ag_do_snapshot(int fd, JNIEnv *env, struct wire_r *r)
{
	if (wire_left(r))
		return false;
	struct snap s;
	memset(&s, 0, sizeof s);
	s.f = temp_file();
	s.next = 1;
	if (!s.f)
		return ag_send_error(fd, "cannot create a temporary file in %s: %s", ag_sock_dir,
				  strerror(errno));
	if (!wire_w_sink(&s.w, 1 << 16, wire_file_sink, s.f)) {
		fclose(s.f);
		return ag_send_error(fd, "out of memory in the agent");
	}
	/* Every jvmti call below goes to the snapshot's environment, when there is one. */
	jvmtiEnv *own = ag_jvmti, *snap_env = snapshot_env(env);
	if (snap_env)
		ag_jvmti = snap_env;
	struct classes c;
	bool ok;
	if (!ag_load_classes(env, &c)) {
		wire_w_free(&s.w);
		fclose(s.f);
		if (snap_env) {
			ag_jvmti = own;
			(*snap_env)->DisposeEnvironment(snap_env);
		}
		return ag_send_error(fd, "GetLoadedClasses failed");
	}
	for (jint i = 0; i < c.n; i++)
		(*ag_jvmti)->SetTag(ag_jvmti, c.k[i], s.next++);
	jclass cc = (*env)->FindClass(env, "java/lang/Class");
	if (cc) {
		(*ag_jvmti)->GetTag(ag_jvmti, cc, &s.class_class);
		(*env)->DeleteLocalRef(env, cc);
	}
	(*env)->ExceptionClear(env);
	tag_primitive_classes(&s, env);
	for (jint i = 0; i < c.n; i++)
		write_class(&s, env, c.k[i], i + 1);
	write_threads(&s, env);
	jthread self = NULL;
	if ((*ag_jvmti)->GetCurrentThread(ag_jvmti, &self) == JVMTI_ERROR_NONE && self) {
		(*ag_jvmti)->GetTag(ag_jvmti, self, &s.self);
		s.self &= ~PENDING;
		(*env)->DeleteLocalRef(env, self);
	}
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.heap_reference_callback = snap_ref;
	cb.primitive_field_callback = snap_prim;
	cb.array_primitive_value_callback = snap_array;
	jvmtiError e = (*ag_jvmti)->FollowReferences(ag_jvmti, 0, NULL, NULL, &cb, &s);
	ag_drop_classes(env, &c);
	if (snap_env) {
		ag_jvmti = own;
		(*snap_env)->DisposeEnvironment(snap_env);
	} else {
		ag_untag_all();
	}
	wire_w_drain(&s.w);
	bool wrote = !s.w.err;
	wire_w_free(&s.w);
	if (e != JVMTI_ERROR_NONE || !wrote || fflush(s.f) != 0) {
		fclose(s.f);
		return ag_send_error(fd, e != JVMTI_ERROR_NONE ? "FollowReferences failed (JVMTI error %d)"
				  : "writing the snapshot failed (disk full?) %d", e);
	}
	rewind(s.f);
	uint8_t *chunk = malloc(1 << 20);
	ok = chunk != NULL;
	while (ok) {
		size_t k = fread(chunk, 1, 1 << 20, s.f);
		if (!k)
			break;
		ok = ag_send_raw(fd, T_DATA, chunk, k);
	}
	free(chunk);
	fclose(s.f);
	if (ok) {
		struct wire_w b = {0};
		wire_put64(&b, s.objects);
		wire_put64(&b, s.records);
		ok = ag_send_frame(fd, T_END, &b);
		wire_w_free(&b);
	}
	return ok;
}
