/*
 * lqheap.c - the JVM's side of an ANALYZE request (lq.h), as the agent's
 * heap view (heapif_agent.c) reads it: the classes and their fields, class
 * loaders and threads, objects through JNI, model sizes (docs/heap-model.md's
 * rules, so that a size inside the JVM is the size a dump of it shows), the
 * analysis' tags (entries), and the heap iteration behind a class's
 * instances.
 */
#include "../base/classname.h"
#include "lq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ag.h"

static void dealloc(struct lq *q, void *p)
{
	if (p)
		(*q->jv)->Deallocate(q->jv, p);
}

/* jni_check: a pending Java exception is cleared and fails the request. */
static void jni_check(struct lq *q, const struct node *at, const char *what)
{
	JNIEnv *env = q->jni;
	if ((*env)->ExceptionCheck(env)) {
		(*env)->ExceptionClear(env);
		lq_raise(q, LQ_ERROR, at, "the JVM failed while %s", what);
	}
}

/* ---- addresses ---- */

static bool addresses_ok = true;

/*
 * lq_address: the address of the object a JNI reference holds: a local or
 * global reference points at a slot that holds the object's address (the
 * low two bits tag the kind of reference), which is also the id a heap dump
 * taken at that moment gives it. Collectors with colored pointers (ZGC,
 * Shenandoah) store something else there: 0 (unknown) for them.
 */
uint64_t lq_address(jobject ref)
{
	if (!ref || !addresses_ok)
		return 0;
	uintptr_t slot = (uintptr_t)ref & ~(uintptr_t)3;
	return (uint64_t)*(volatile uintptr_t *)slot;
}

/* check_collector: addresses_ok false under ZGC or Shenandoah (their references carry colors). */
static void check_collector(struct lq *q)
{
	JNIEnv *env = q->jni;
	jclass mf = (*env)->FindClass(env, "java/lang/management/ManagementFactory");
	jmethodID gm = mf ? (*env)->GetStaticMethodID(env, mf, "getGarbageCollectorMXBeans",
						      "()Ljava/util/List;") : NULL;
	jobject list = gm ? (*env)->CallStaticObjectMethod(env, mf, gm) : NULL;
	if ((*env)->ExceptionCheck(env) || !list) {
		(*env)->ExceptionClear(env);
		return;
	}
	jclass lc = (*env)->FindClass(env, "java/util/List");
	jmethodID size = (*env)->GetMethodID(env, lc, "size", "()I");
	jmethodID get = (*env)->GetMethodID(env, lc, "get", "(I)Ljava/lang/Object;");
	jclass bc = (*env)->FindClass(env, "java/lang/management/MemoryManagerMXBean");
	jmethodID name = (*env)->GetMethodID(env, bc, "getName", "()Ljava/lang/String;");
	jint n = (*env)->CallIntMethod(env, list, size);
	for (jint k = 0; k < n && !(*env)->ExceptionCheck(env); k++) {
		jobject b = (*env)->CallObjectMethod(env, list, get, k);
		jstring s = b ? (*env)->CallObjectMethod(env, b, name) : NULL;
		const char *u = s ? (*env)->GetStringUTFChars(env, s, NULL) : NULL;
		if (u && (strstr(u, "ZGC") || strstr(u, "Shenandoah")))
			addresses_ok = false;
		if (u)
			(*env)->ReleaseStringUTFChars(env, s, u);
	}
	(*env)->ExceptionClear(env);
}

/* ---- classes ---- */

/* java_name: a JVMTI class signature's Java name (cn_java_name), in the request's arena. */
static char *java_name(struct lq *q, const char *sig)
{
	size_t n = cn_java_name(sig, true, NULL, 0);
	char *s = lq_alloc(q, n + 1);
	cn_java_name(sig, true, s, n + 1);
	return s;
}

uint32_t lq_class_of_ref(struct lq *q, jobject ref)
{
	JNIEnv *env = q->jni;
	jclass k = (*env)->GetObjectClass(env, ref);
	jlong t = 0;
	(*q->jv)->GetTag(q->jv, k, &t);
	(*env)->DeleteLocalRef(env, k);
	if ((t & LQ_TAG_CLASS) && (uint32_t)(t & 0xffffffff) - 1 < q->ncls)
		return (uint32_t)(t & 0xffffffff) - 1;
	lq_raise(q, LQ_UNSUPPORTED, NULL, "an object of a class loaded after the analysis began "
		 "(run the query again)");
}

struct by_addr {
	uint64_t id;
	uint32_t k;
};

static int cmp_addr(const void *a, const void *b)
{
	const struct by_addr *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id ? 1 : (x->k > y->k) - (x->k < y->k);
}

/*
 * lq_classes: every loaded class, tagged LQ_TAG_CLASS | index + 1, in the
 * order of their class objects' addresses (a dump's order); the loaders,
 * bootstrap first, then in address order.
 */
bool lq_classes(struct lq *q)
{
	JNIEnv *env = q->jni;
	jvmtiEnv *jv = q->jv;
	check_collector(q);
	jint n = 0;
	jclass *all = NULL;
	if ((*jv)->GetLoadedClasses(jv, &n, &all) != JVMTI_ERROR_NONE) {
		snprintf(q->msg, sizeof q->msg, "GetLoadedClasses failed");
		return false;
	}
	struct by_addr *order = lq_alloc(q, ((size_t)n + 1) * sizeof *order);
	for (jint k = 0; k < n; k++) {
		order[k].id = lq_address(all[k]);
		order[k].k = (uint32_t)k;
	}
	qsort(order, (size_t)n, sizeof *order, cmp_addr);
	q->ncls = (uint32_t)n;
	q->cls = lq_alloc(q, ((size_t)n + 1) * sizeof *q->cls);
	q->c_class = q->c_string = q->c_object = q->c_thread = LQ_NONE;
	for (jint j = 0; j < n; j++) {
		struct lclass *c = &q->cls[j];
		c->ref = all[order[j].k];
		c->id = order[j].id;
		c->super = LQ_NONE;
		char *sig = NULL;
		(*jv)->GetClassSignature(jv, c->ref, &sig, NULL);
		c->name = java_name(q, sig ? sig : "?");
		if (sig && sig[0] == '[')
			c->elem = sig[1];
		dealloc(q, sig);
		jboolean itf = 0;
		(*jv)->IsInterface(jv, c->ref, &itf);
		c->interface = itf;
		(*jv)->SetTag(jv, c->ref, LQ_TAG_CLASS | (jlong)(j + 1));
		if (!strcmp(c->name, "java.lang.Class"))
			q->c_class = (uint32_t)j;
		else if (!strcmp(c->name, "java.lang.String"))
			q->c_string = (uint32_t)j;
		else if (!strcmp(c->name, "java.lang.Object"))
			q->c_object = (uint32_t)j;
		else if (!strcmp(c->name, "java.lang.Thread"))
			q->c_thread = (uint32_t)j;
	}
	dealloc(q, all);
	if (q->c_class == LQ_NONE || q->c_string == LQ_NONE || q->c_object == LQ_NONE) {
		snprintf(q->msg, sizeof q->msg, "the JVM's basic classes are missing");
		return false;
	}
	/* superclasses; loaders */
	struct lloader *ld = lq_alloc(q, ((size_t)n + 2) * sizeof *ld);
	uint32_t nld = 1;
	uint32_t *cl = lq_alloc(q, ((size_t)n + 1) * sizeof *cl);
	for (uint32_t j = 0; j < q->ncls; j++) {
		struct lclass *c = &q->cls[j];
		jclass sup = (*env)->GetSuperclass(env, c->ref);
		if (sup) {
			jlong t = 0;
			(*jv)->GetTag(jv, sup, &t);
			if (t & LQ_TAG_CLASS)
				c->super = (uint32_t)(t & 0xffffffff) - 1;
			(*env)->DeleteLocalRef(env, sup);
		}
		jobject loader = NULL;
		(*jv)->GetClassLoader(jv, c->ref, &loader);
		cl[j] = 0;
		if (loader) {
			uint32_t k;
			for (k = 1; k < nld; k++)
				if ((*env)->IsSameObject(env, ld[k].ref, loader))
					break;
			if (k == nld) {
				ld[nld].ref = loader;
				ld[nld].id = lq_address(loader);
				nld++;
			} else {
				(*env)->DeleteLocalRef(env, loader);
			}
			cl[j] = k;
		}
	}
	/* loaders in address order; bootstrap first */
	uint32_t *newpos = lq_alloc(q, ((size_t)nld + 1) * sizeof *newpos);
	struct by_addr *lo = lq_alloc(q, ((size_t)nld + 1) * sizeof *lo);
	for (uint32_t k = 1; k < nld; k++) {
		lo[k - 1].id = ld[k].id;
		lo[k - 1].k = k;
	}
	qsort(lo, nld - 1, sizeof *lo, cmp_addr);
	q->loaders = lq_alloc(q, ((size_t)nld + 1) * sizeof *q->loaders);
	q->nloaders = nld;
	for (uint32_t k = 0; k + 1 < nld; k++) {
		q->loaders[k + 1] = ld[lo[k].k];
		newpos[lo[k].k] = k + 1;
	}
	for (uint32_t j = 0; j < q->ncls; j++)
		q->cls[j].loader = cl[j] ? newpos[cl[j]] : 0;
	/* the size of a reference: Object[2] is 8 bytes larger than Object[0] with 4-byte oops */
	jclass oc = q->cls[q->c_object].ref;
	jobjectArray a0 = (*env)->NewObjectArray(env, 0, oc, NULL);
	jobjectArray a2 = (*env)->NewObjectArray(env, 2, oc, NULL);
	jlong s0 = 0, s2 = 0;
	if (a0 && a2) {
		(*jv)->GetObjectSize(jv, a0, &s0);
		(*jv)->GetObjectSize(jv, a2, &s2);
	}
	(*env)->ExceptionClear(env);
	q->oop_size = s2 - s0 >= 16 ? 8 : 4;
	q->header_size = 8 + q->oop_size;	/* id size + oop size, docs/heap-model.md */
	if (a0)
		(*env)->DeleteLocalRef(env, a0);
	if (a2)
		(*env)->DeleteLocalRef(env, a2);
	return true;
}

bool lq_is_subclass(struct lq *q, uint32_t c, uint32_t sup)
{
	for (int depth = 0; c != LQ_NONE && depth < 4096; c = q->cls[c].super, depth++)
		if (c == sup)
			return true;
	return false;
}

static uint32_t type_size(struct lq *q, char t)
{
	switch (t) {
	case 'Z': case 'B': return 1;
	case 'C': case 'S': return 2;
	case 'I': case 'F': return 4;
	case 'J': case 'D': return 8;
	default: return (uint32_t)q->oop_size;
	}
}

/* declared: class c's own fields (GetClassFields order); *total counts statics too. */
static struct lfield *declared(struct lq *q, uint32_t c, uint32_t *n)
{
	jvmtiEnv *jv = q->jv;
	jint nf = 0;
	jfieldID *f = NULL;
	*n = 0;
	if ((*jv)->GetClassFields(jv, q->cls[c].ref, &nf, &f) != JVMTI_ERROR_NONE || nf <= 0)
		return NULL;
	struct lfield *out = lq_alloc_keep(q, (size_t)nf * sizeof *out);
	for (jint k = 0; k < nf; k++) {
		char *name = NULL, *sig = NULL;
		jint mods = 0;
		(*jv)->GetFieldName(jv, q->cls[c].ref, f[k], &name, &sig, NULL);
		(*jv)->GetFieldModifiers(jv, q->cls[c].ref, f[k], &mods);
		out[k].name = lq_strdup_keep(q, name ? name : "?", strlen(name ? name : "?"));
		out[k].type = sig ? sig[0] : '?';
		out[k].is_static = (mods & 0x0008) != 0;
		out[k].id = f[k];
		dealloc(q, name);
		dealloc(q, sig);
	}
	dealloc(q, f);
	*n = (uint32_t)nf;
	return out;
}

/*
 * lq_class_fields: class c's instance fields (own first, then the
 * superclasses'), its statics, the JVMTI index of each, the model size of an
 * instance and of its class object.
 */
void lq_class_fields(struct lq *q, uint32_t c)
{
	struct lclass *k = &q->cls[c];
	if (k->fields_read)
		return;
	if (q->in_walk)
		lq_raise(q, LQ_UNSUPPORTED, NULL, "reading a class during a heap walk");
	k->fields_read = true;
	/* the chain, top first */
	uint32_t chain[256], nchain = 0;
	for (uint32_t s = c; s != LQ_NONE && nchain < 256; s = q->cls[s].super)
		chain[nchain++] = s;
	jclass seen[512];
	jint nseen = 0;
	uint32_t base = k->interface ? 0 : ag_iface_fields(q->jv, q->jni, k->ref, seen, &nseen, 512);
	for (jint i = 0; i < nseen; i++)
		(*q->jni)->DeleteLocalRef(q->jni, seen[i]);
	struct lfield *decl[256];
	uint32_t ndecl[256], total = base, ninst = 0;
	for (uint32_t j = nchain; j-- > 0;) {
		decl[j] = declared(q, chain[j], &ndecl[j]);
		for (uint32_t f = 0; f < ndecl[j]; f++) {
			decl[j][f].jvmti_index = total + f;
			ninst += !decl[j][f].is_static;
		}
		total += ndecl[j];
	}
	k->nindex = total;
	k->fields = lq_alloc_keep(q, ((size_t)ninst + 1) * sizeof *k->fields);
	uint64_t size = (uint64_t)q->header_size;
	for (uint32_t j = 0; j < nchain; j++)	/* own class first */
		for (uint32_t f = 0; f < ndecl[j]; f++) {
			struct lfield *fd = &decl[j][f];
			if (fd->is_static)
				continue;
			k->fields[k->nfields++] = *fd;
			size += type_size(q, fd->type);
		}
	k->inst_size = (uint32_t)((size + 7) & ~7ULL);
	uint32_t ns = 0;
	for (uint32_t f = 0; nchain && f < ndecl[0]; f++)
		ns += decl[0][f].is_static;
	k->statics = lq_alloc_keep(q, ((size_t)ns + 1) * sizeof *k->statics);
	for (uint32_t f = 0; nchain && f < ndecl[0]; f++)
		if (decl[0][f].is_static)
			k->statics[k->nstatics++] = decl[0][f];
	/* the class object: java.lang.Class plus the declared statics (docs/heap-model.md) */
	uint64_t ms = 0;
	if (c != q->c_class) {
		lq_class_fields(q, q->c_class);
		ms = q->cls[q->c_class].inst_size;
	} else {
		ms = k->inst_size;
	}
	for (uint32_t s = 0; s < k->nstatics; s++)
		ms += type_size(q, k->statics[s].type);
	k->mirror_size = (uint32_t)((ms + 7) & ~7ULL);
}

struct lfield *lq_field(struct lq *q, uint32_t c, const char *name)
{
	lq_class_fields(q, c);
	struct lclass *k = &q->cls[c];
	for (uint32_t f = 0; f < k->nfields; f++)
		if (!strcmp(k->fields[f].name, name))
			return &k->fields[f];
	return NULL;
}

uint64_t lq_shallow(struct lq *q, const struct lobj *o)
{
	if (o->mirror) {
		lq_class_fields(q, o->mirror - 1);
		return q->cls[o->mirror - 1].mirror_size;
	}
	struct lclass *k = &q->cls[o->cls];
	if (k->elem) {
		uint64_t es = type_size(q, k->elem);
		return ((uint64_t)q->header_size + 4 + es * (uint64_t)(o->length < 0 ? 0 : o->length) +
			7) & ~7ULL;
	}
	/* The JVM's own size, as a dump's HotSpot layout gives it (injected
	 * fields, @Contended padding: docs/heap-model.md); one per class. */
	jlong js = 0;
	if (!k->jvm_size && o->ref && (*q->jv)->GetObjectSize(q->jv, o->ref, &js) == JVMTI_ERROR_NONE &&
	    js > 0 && js < (1 << 30))
		k->jvm_size = (uint32_t)js;
	if (k->jvm_size)
		return k->jvm_size;
	lq_class_fields(q, o->cls);
	return k->jvm_size ? k->jvm_size : k->inst_size;
}

/* ---- objects through JNI ---- */

static void put_utf8(char *buf, size_t *len, uint32_t c)
{
	if (c < 0x80) {
		buf[(*len)++] = (char)c;
	} else if (c < 0x800) {
		buf[(*len)++] = (char)(0xC0 | c >> 6);
		buf[(*len)++] = (char)(0x80 | (c & 0x3F));
	} else if (c < 0x10000) {
		buf[(*len)++] = (char)(0xE0 | c >> 12);
		buf[(*len)++] = (char)(0x80 | ((c >> 6) & 0x3F));
		buf[(*len)++] = (char)(0x80 | (c & 0x3F));
	} else {
		buf[(*len)++] = (char)(0xF0 | c >> 18);
		buf[(*len)++] = (char)(0x80 | ((c >> 12) & 0x3F));
		buf[(*len)++] = (char)(0x80 | ((c >> 6) & 0x3F));
		buf[(*len)++] = (char)(0x80 | (c & 0x3F));
	}
}

/* utf16_to_utf8: n UTF-16 units of s as UTF-8 into buf (3n bytes at most), surrogate
 * pairs joined (as heap_string); its length. */
static size_t utf16_to_utf8(char *buf, const jchar *s, size_t n)
{
	size_t len = 0;
	for (size_t k = 0; k < n; k++) {
		uint32_t c = s[k];
		if (c >= 0xD800 && c < 0xDC00 && k + 1 < n && s[k + 1] >= 0xDC00 && s[k + 1] < 0xE000) {
			c = 0x10000 + ((c - 0xD800) << 10) + (s[k + 1] - 0xDC00u);
			k++;
		}
		put_utf8(buf, &len, c);
	}
	return len;
}

void lq_wtext(struct lq *q, struct wobj *w, const jchar *s, size_t n)
{
	size_t need = n * 3 + 1;
	if (need > w->textcap) {
		if (need > q->mem_limit / 4)
			lq_raise(q, LQ_LIMIT, NULL, "a String longer than the agent's memory limit");
		char *b = realloc(w->textbuf, need);
		if (!b)
			lq_raise(q, LQ_LIMIT, NULL, "the agent ran out of memory");
		w->textbuf = b;
		w->textcap = need;
	}
	size_t len = utf16_to_utf8(w->textbuf, s, n);
	w->textbuf[len] = 0;
	w->text = w->textbuf;
}

const char *lq_text(struct lq *q, const struct lobj *o)
{
	if (o->mirror || o->cls != q->c_string)
		return NULL;
	if (!o->ref)
		lq_raise(q, LQ_UNSUPPORTED, NULL, "the text of a String a heap walk reports only "
			 "as a reference");
	if (q->in_walk)
		lq_raise(q, LQ_UNSUPPORTED, NULL, "a String's text during a heap walk");
	JNIEnv *env = q->jni;
	jsize n = (*env)->GetStringLength(env, (jstring)o->ref);
	if (n < 0)
		return "";
	if ((uint64_t)n * 5 > q->mem_limit)
		lq_raise(q, LQ_LIMIT, NULL, "a String longer than the agent's memory limit");
	jchar *buf = lq_alloc(q, ((size_t)n + 1) * sizeof *buf);
	(*env)->GetStringRegion(env, (jstring)o->ref, 0, n, buf);
	jni_check(q, NULL, "reading a String");
	char *text = lq_alloc(q, (size_t)n * 3 + 1);
	text[utf16_to_utf8(text, buf, (size_t)n)] = 0;
	return text;
}

jvalue lq_field_jvalue(struct lq *q, const struct node *at, jobject obj, const struct lfield *f)
{
	if (q->in_walk)
		lq_raise(q, LQ_UNSUPPORTED, at, "reading field %s during a heap walk", f->name);
	JNIEnv *env = q->jni;
	jvalue v;
	switch (f->type) {
	case 'Z': v.z = (*env)->GetBooleanField(env, obj, f->id); break;
	case 'B': v.b = (*env)->GetByteField(env, obj, f->id); break;
	case 'C': v.c = (*env)->GetCharField(env, obj, f->id); break;
	case 'S': v.s = (*env)->GetShortField(env, obj, f->id); break;
	case 'I': v.i = (*env)->GetIntField(env, obj, f->id); break;
	case 'J': v.j = (*env)->GetLongField(env, obj, f->id); break;
	case 'F': v.f = (*env)->GetFloatField(env, obj, f->id); break;
	case 'D': v.d = (*env)->GetDoubleField(env, obj, f->id); break;
	default: v.l = (*env)->GetObjectField(env, obj, f->id); break;
	}
	jni_check(q, at, "reading a field");
	return v;
}

jvalue lq_static_jvalue(struct lq *q, const struct node *at, uint32_t c, const struct lfield *f)
{
	if (q->in_walk)
		lq_raise(q, LQ_UNSUPPORTED, at, "static field %s during a heap walk", f->name);
	JNIEnv *env = q->jni;
	jclass k = q->cls[c].ref;
	jvalue v;
	switch (f->type) {
	case 'Z': v.z = (*env)->GetStaticBooleanField(env, k, f->id); break;
	case 'B': v.b = (*env)->GetStaticByteField(env, k, f->id); break;
	case 'C': v.c = (*env)->GetStaticCharField(env, k, f->id); break;
	case 'S': v.s = (*env)->GetStaticShortField(env, k, f->id); break;
	case 'I': v.i = (*env)->GetStaticIntField(env, k, f->id); break;
	case 'J': v.j = (*env)->GetStaticLongField(env, k, f->id); break;
	case 'F': v.f = (*env)->GetStaticFloatField(env, k, f->id); break;
	case 'D': v.d = (*env)->GetStaticDoubleField(env, k, f->id); break;
	default: v.l = (*env)->GetStaticObjectField(env, k, f->id); break;
	}
	jni_check(q, at, "reading a static field");
	return v;
}

/* ---- threads ---- */

void lq_threads(struct lq *q)
{
	if (q->threads)
		return;
	jint n = 0;
	jthread *t = NULL;
	if ((*q->jv)->GetAllThreads(q->jv, &n, &t) != JVMTI_ERROR_NONE)
		n = 0;
	q->threads = lq_alloc_keep(q, ((size_t)n + 1) * sizeof *q->threads);
	for (jint k = 0; k < n; k++) {
		if (q->self_thread && (*q->jni)->IsSameObject(q->jni, t[k], q->self_thread))
			continue;
		q->threads[q->nthreads++] = t[k];
	}
	dealloc(q, t);
}

char *lq_thread_name(struct lq *q, uint32_t t)
{
	if (t >= q->nthreads || q->c_thread == LQ_NONE)
		return NULL;
	struct lfield *f = lq_field(q, q->c_thread, "name");
	if (!f || f->type != 'L')
		return NULL;
	jobject s = (*q->jni)->GetObjectField(q->jni, q->threads[t], f->id);
	if (!s)
		return NULL;
	struct lobj o = {s, q->c_string, 0, -1, 0};
	return (char *)lq_text(q, &o);
}

/* ---- tags ---- */

jlong lq_new_entry(struct lq *q, uint32_t inst, int32_t length, uint8_t flags)
{
	if (q->nent == q->capent) {
		uint32_t cap = q->capent ? q->capent * 2 : 1024;
		if ((uint64_t)cap * sizeof *q->ent > q->mem_limit / 2)
			lq_raise(q, LQ_LIMIT, NULL, "the analysis tags more objects than the agent's "
				 "memory limit allows");
		struct lentry *e = malloc((size_t)cap * sizeof *e);
		if (!e)
			lq_raise(q, LQ_LIMIT, NULL, "the agent ran out of memory");
		if (q->nent)
			memcpy(e, q->ent, (size_t)q->nent * sizeof *e);
		free(q->ent);
		q->mem_used += (uint64_t)(cap - q->capent) * sizeof *e;
		q->ent = e;
		q->capent = cap;
	}
	q->ent[q->nent] = (struct lentry){inst, length, flags};
	return LQ_TAG_ENTRY | (jlong)++q->nent;
}

struct lentry *lq_entry(struct lq *q, jlong tag)
{
	if (!(tag & LQ_TAG_ENTRY) || (tag & LQ_TAG_CLASS))
		return NULL;
	uint64_t k = (uint64_t)(tag & 0xffffffff);
	return k && k <= q->nent ? &q->ent[k - 1] : NULL;
}

struct tagged {
	jlong tag;
	jobject o;
};

static int cmp_tagged(const void *a, const void *b)
{
	jlong x = ((const struct tagged *)a)->tag, y = ((const struct tagged *)b)->tag;
	return x < y ? -1 : x > y;
}

void lq_tagged_refs(struct lq *q, const struct node *at, const jlong *want, uint32_t n,
		    jobject *out)
{
	/*
	 * HotSpot's GetObjectsWithTags compares every tagged object with every
	 * tag asked for (JvmtiTagMap::get_objects_with_tags), in one call no
	 * cancel stops: 1 M hits took minutes. Past about half a second's
	 * worth, the list is left to a snapshot.
	 */
	if ((uint64_t)n * ((uint64_t)q->nent + q->ncls + 1) > LQ_TAGGED_WORK_MAX)
		lq_raise(q, LQ_LIMIT, at, "a list of %u objects is more than the agent can gather from "
			 "the JVM in time (its tag lookup compares each with all %u tagged)", n,
			 q->nent);
	jint cnt = 0;
	jobject *objs = NULL;
	jlong *tags = NULL;
	if (n && (*q->jv)->GetObjectsWithTags(q->jv, (jint)n, want, &cnt, &objs, &tags) !=
		  JVMTI_ERROR_NONE)
		lq_raise(q, LQ_ERROR, at, "GetObjectsWithTags failed");
	struct tagged *byt = lq_alloc(q, ((size_t)cnt + 1) * sizeof *byt);
	for (jint k = 0; k < cnt; k++) {
		byt[k].tag = tags[k];
		byt[k].o = objs[k];
	}
	qsort(byt, (size_t)cnt, sizeof *byt, cmp_tagged);
	dealloc(q, objs);
	dealloc(q, tags);
	for (uint32_t k = 0; k < n; k++) {
		/* binary search of the tag */
		size_t lo = 0, hi = (size_t)cnt;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (byt[mid].tag < want[k])
				lo = mid + 1;
			else
				hi = mid;
		}
		out[k] = lo < (size_t)cnt && byt[lo].tag == want[k] ? byt[lo].o : NULL;
	}
}

void lq_tag_primitive_classes(struct lq *q)
{
	static const char *const boxes[] = {"java/lang/Boolean", "java/lang/Byte",
		"java/lang/Character", "java/lang/Short", "java/lang/Integer", "java/lang/Long",
		"java/lang/Float", "java/lang/Double", "java/lang/Void"};
	JNIEnv *env = q->jni;
	for (size_t i = 0; i < sizeof boxes / sizeof *boxes; i++) {
		jclass b = (*env)->FindClass(env, boxes[i]);
		jfieldID f = b ? (*env)->GetStaticFieldID(env, b, "TYPE", "Ljava/lang/Class;") : NULL;
		jobject prim = f ? (*env)->GetStaticObjectField(env, b, f) : NULL;
		(*env)->ExceptionClear(env);
		jlong t = 0;
		if (prim && (*q->jv)->GetTag(q->jv, prim, &t) == JVMTI_ERROR_NONE && !t)
			(*q->jv)->SetTag(q->jv, prim, lq_new_entry(q, 0, -1, LE_PRIM));
		if (prim)
			(*env)->DeleteLocalRef(env, prim);
		if (b)
			(*env)->DeleteLocalRef(env, b);
	}
}

void lq_gc(struct lq *q)
{
	if (q->gc_done)
		return;
	int64_t t0 = ag_now_ms();
	(*q->jv)->ForceGarbageCollection(q->jv);
	q->gc_ms += (uint64_t)(ag_now_ms() - t0);
	q->gc_done = true;
}

/* ---- heap walks: the sizes they meet, a class's instances ---- */

void lq_note_size(struct lq *q, jlong class_tag, jlong tag, jlong size)
{
	if (!(class_tag & LQ_TAG_CLASS) || (tag & LQ_TAG_CLASS) || size <= 0 || size >= (1 << 30))
		return;
	uint32_t c = (uint32_t)(class_tag & 0xffffffff) - 1;
	if (c < q->ncls && !q->cls[c].elem && !q->cls[c].jvm_size && c != q->c_class)
		q->cls[c].jvm_size = (uint32_t)size;
}

#define HIT_MIRROR 0x80000000u	/* a hit that is a class object: HIT_MIRROR | its class index */

/* What lq_instances' walk met of class c. */
struct inst_walk {
	struct lq *q;
	uint32_t c;
	uint32_t *hits;		/* entry index, or HIT_MIRROR | class index */
	uint32_t nhits, caphits;
	uint64_t steps;		/* objects met, to look at the clock every 4096 */
	bool failed;		/* a callback caught an lq_raise: q->status and q->msg say what */
};

/*
 * on_instance: IterateThroughHeap's callback: an object of class c is a
 * hit, tagged with an entry if it has none (the agent's own are left out).
 * A failure (no memory, the time limit) aborts the walk, to be raised again
 * once the JVM has returned.
 */
static jint JNICALL on_instance(jlong class_tag, jlong size, jlong *tag_ptr, jint length,
				void *ud)
{
	struct inst_walk *iw = ud;
	struct lq *q = iw->q;
	if (iw->failed)
		return JVMTI_VISIT_ABORT;
	lq_note_size(q, class_tag, *tag_ptr, size);
	if (class_tag != (LQ_TAG_CLASS | (jlong)(iw->c + 1)))
		return 0;	/* another class: the JVM filters no array class */
	jlong t = *tag_ptr;
	struct lentry *e = lq_entry(q, t);
	if (e && (e->flags & LE_SELF))
		return 0;
	if (iw->c == q->c_class && !(t & LQ_TAG_CLASS) && !e)
		return 0;	/* a Class of no class of the table: no dump has it (left_out) */
	q->objects_seen++;
	struct lq_guard g;
	LQ_TRY(q, g) {
		LQ_CAUGHT(q, g);
		iw->failed = true;
		return JVMTI_VISIT_ABORT;
	}
	if ((++iw->steps & 0xfff) == 0 && (uint64_t)ag_now_ms() > q->deadline_ms)
		lq_raise(q, LQ_LIMIT, NULL, "the analysis reached its time limit");
	if (q->interrupted && *q->interrupted)
		lq_raise(q, LQ_CANCELLED, NULL, "cancelled");
	uint32_t hit;
	if (t & LQ_TAG_CLASS) {
		hit = HIT_MIRROR | ((uint32_t)(t & 0xffffffff) - 1);
	} else {
		if (!e)
			*tag_ptr = lq_new_entry(q, 0, q->cls[iw->c].elem ? length : -1, LE_ARRAY);
		hit = (uint32_t)(*tag_ptr & 0xffffffff) - 1;
	}
	if (iw->nhits == iw->caphits) {
		uint32_t cap = iw->caphits ? iw->caphits * 2 : 256;
		uint32_t *n = lq_alloc(q, (size_t)cap * sizeof *n);
		if (iw->nhits)
			memcpy(n, iw->hits, (size_t)iw->nhits * sizeof *n);
		iw->hits = n;
		iw->caphits = cap;
	}
	iw->hits[iw->nhits++] = hit;
	LQ_END(q, g);
	return 0;
}

struct lobj *lq_instances(struct lq *q, uint32_t c, uint32_t *n)
{
	struct inst_walk iw;
	memset(&iw, 0, sizeof iw);
	iw.q = q;
	iw.c = c;
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.heap_iteration_callback = on_instance;
	lq_gc(q);
	int64_t t0 = ag_now_ms();
	q->in_walk = true;
	/* klass filters exactly that class (HotSpot compares the klass); arrays by the callback */
	jvmtiError err = (*q->jv)->IterateThroughHeap(q->jv, 0, q->cls[c].elem ? NULL : q->cls[c].ref,
						      &cb, &iw);
	q->in_walk = false;
	q->walks++;
	q->pause_ms += (uint64_t)(ag_now_ms() - t0);
	if (iw.failed)
		longjmp(*q->fail, 1);	/* the callback's failure, in q->status and q->msg */
	if (err != JVMTI_ERROR_NONE)
		lq_raise(q, LQ_ERROR, NULL, "IterateThroughHeap failed (JVMTI error %d)", err);
	/* the references of the objects met, by their tags */
	jlong *want = lq_alloc(q, ((size_t)iw.nhits + 1) * sizeof *want);
	uint32_t nw = 0;
	for (uint32_t k = 0; k < iw.nhits; k++)
		if (!(iw.hits[k] & HIT_MIRROR))
			want[nw++] = LQ_TAG_ENTRY | (jlong)(iw.hits[k] + 1);
	jobject *refs = lq_alloc(q, ((size_t)nw + 1) * sizeof *refs);
	lq_tagged_refs(q, NULL, want, nw, refs);
	struct lobj *out = lq_alloc(q, ((size_t)iw.nhits + 1) * sizeof *out);
	uint32_t m = 0, w = 0;
	for (uint32_t k = 0; k < iw.nhits; k++) {
		uint32_t h = iw.hits[k];
		if (h & HIT_MIRROR) {
			uint32_t mc = h & ~HIT_MIRROR;
			out[m++] = (struct lobj){q->cls[mc].ref, q->c_class, mc + 1, -1, 0};
			continue;
		}
		jobject ref = refs[w];
		jlong tag = want[w++];
		if (!ref)
			continue;	/* collected meanwhile */
		out[m++] = (struct lobj){ref, c, 0, q->cls[c].elem ? q->ent[h].length : -1, tag};
	}
	*n = m;
	return out;
}
