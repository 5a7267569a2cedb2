/*
 * lqheap.c - what the agent's evaluator knows of the JVM (lq.h): the
 * classes and their fields, class loaders and threads, objects through JNI,
 * model sizes (docs/heap-model.md's rules, so that a size inside the JVM is
 * the size a dump of it shows), and the heap iteration behind `objects`.
 */
#include "../base/classname.h"
#include "lq.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dsl/value.h"
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

/* gc_has_plain_addresses: not ZGC nor Shenandoah (their references carry colors). */
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

static int cmp_loader(const void *a, const void *b)
{
	const struct lloader *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
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

/* loader_name: its `name` field's text, or its class's name (as eval_builtin.c's loader_member). */
static char *loader_name(struct lq *q, jobject loader)
{
	uint32_t c = lq_class_of_ref(q, loader);
	struct lfield *f = lq_field(q, c, "name");
	if (f && f->type == 'L') {
		jobject s = (*q->jni)->GetObjectField(q->jni, loader, f->id);
		if (s) {
			struct lobj o = {s, q->c_string, 0, -1, 0, NULL};
			const char *t = lq_text(q, &o);
			(*q->jni)->DeleteLocalRef(q->jni, s);
			if (t)
				return (char *)t;
		}
	}
	return q->cls[c].name;
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
		c->sig = lq_strdup(q, sig ? sig : "?", strlen(sig ? sig : "?"));
		dealloc(q, sig);
		c->name = java_name(q, c->sig);
		if (c->sig[0] == '[')
			c->elem = c->sig[1];
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
	q->loaders[0].name = (char *)"<bootstrap>";
	for (uint32_t k = 0; k + 1 < nld; k++) {
		q->loaders[k + 1] = ld[lo[k].k];
		newpos[lo[k].k] = k + 1;
	}
	for (uint32_t j = 0; j < q->ncls; j++)
		q->cls[j].loader = cl[j] ? newpos[cl[j]] : 0;
	(void)cmp_loader;
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
	for (uint32_t k = 1; k < q->nloaders; k++)
		q->loaders[k].name = loader_name(q, q->loaders[k].ref);
	return true;
}

void lq_loaders(struct lq *q)
{
	(void)q;	/* made with the classes */
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
		out[k].decl = c;
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
	k->by_index = lq_alloc_keep(q, ((size_t)total + 1) * sizeof *k->by_index);
	k->fields = lq_alloc_keep(q, ((size_t)ninst + 1) * sizeof *k->fields);
	uint64_t size = (uint64_t)q->header_size;
	for (uint32_t j = 0; j < nchain; j++)	/* own class first */
		for (uint32_t f = 0; f < ndecl[j]; f++) {
			struct lfield *fd = &decl[j][f];
			if (fd->is_static)
				continue;
			k->fields[k->nfields] = *fd;
			k->by_index[fd->jvmti_index] = &k->fields[k->nfields];
			k->nfields++;
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

struct lobj *lq_obj_of_ref(struct lq *q, jobject ref)
{
	JNIEnv *env = q->jni;
	struct lobj *o = lq_alloc(q, sizeof *o);
	o->ref = ref;
	o->length = -1;
	jlong t = 0;
	(*q->jv)->GetTag(q->jv, ref, &t);
	if (t & LQ_TAG_CLASS) {	/* a class object */
		o->mirror = (uint32_t)(t & 0xffffffff);
		o->cls = q->c_class;
		return o;
	}
	o->tag = t;
	o->cls = lq_class_of_ref(q, ref);
	if (q->cls[o->cls].elem)
		o->length = (*env)->GetArrayLength(env, (jarray)ref);
	return o;
}

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

static size_t utf16_to_utf8(char *buf, const jchar *s, size_t n);

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

/* lq_utf16: UTF-16 text as UTF-8 in the arena, surrogate pairs joined (as heap_string). */
const char *lq_utf16(struct lq *q, const jchar *s, size_t n)
{
	char *buf = lq_alloc(q, n * 3 + 1);
	size_t len = 0;
	for (size_t k = 0; k < n; k++) {
		uint32_t c = s[k];
		if (c >= 0xD800 && c < 0xDC00 && k + 1 < n && s[k + 1] >= 0xDC00 && s[k + 1] < 0xE000) {
			c = 0x10000 + ((c - 0xD800) << 10) + (s[k + 1] - 0xDC00u);
			k++;
		}
		put_utf8(buf, &len, c);
	}
	buf[len] = 0;
	return buf;
}

const char *lq_text(struct lq *q, const struct lobj *o)
{
	if (o->mirror || o->cls != q->c_string)
		return NULL;
	if (o->w) {
		if (!o->w->text)
			lq_raise(q, LQ_UNSUPPORTED, NULL, "a String's text before the walk reported it");
		return o->w->text;
	}
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
	return lq_utf16(q, buf, (size_t)n);
}

static struct lval char_value(struct lq *q, uint32_t c)
{
	char *s = lq_alloc(q, 8);
	size_t len = 0;
	put_utf8(s, &len, c < 0x10000 ? c : '?');
	struct lval v = {LK_STR, {.s = s}};
	return v;
}

static struct lval prim_value(struct lq *q, char t, jvalue v)
{
	struct lval r = {LK_INT, {0}};
	switch (t) {
	case 'Z': r.k = LK_BOOL; r.u.b = v.z != 0; break;
	case 'B': r.u.i = v.b; break;
	case 'C': return char_value(q, v.c);
	case 'S': r.u.i = v.s; break;
	case 'I': r.u.i = v.i; break;
	case 'J': r.u.i = v.j; break;
	case 'F': r.k = LK_FLOAT; r.u.f = v.f; break;
	case 'D': r.k = LK_FLOAT; r.u.f = v.d; break;
	default: r.k = LK_NULL; break;
	}
	return r;
}

struct lval lq_field_value(struct lq *q, const struct node *at, const struct lobj *o,
			   const struct lfield *f)
{
	struct lval r = {LK_NULL, {0}};
	if (o->w) {
		struct wslot *s = f->jvmti_index < o->w->nslots ? &o->w->slots[f->jvmti_index] : NULL;
		bool there = s && s->gen == o->w->gen;
		if (f->type != 'L' && f->type != '[') {
			if (!there)
				lq_raise(q, LQ_UNSUPPORTED, at, "field %s before the walk reported it",
					 f->name);
			return prim_value(q, f->type, s->v);
		}
		if (!o->w->has_refs)
			lq_raise(q, LQ_UNSUPPORTED, at, "the reference field %s (a heap iteration "
				 "reports primitive fields only)", f->name);
		if (!there) {
			if (!o->w->complete && !o->w->provisional)
				lq_raise(q, LQ_UNSUPPORTED, at, "field %s before the walk reported it",
					 f->name);
			return r;	/* never reported: null */
		}
		struct lobj *d = lq_alloc(q, sizeof *d);
		d->cls = s->cls;
		d->length = s->length;
		d->tag = s->tag;
		if (s->tag & LQ_TAG_CLASS) {
			d->mirror = (uint32_t)(s->tag & 0xffffffff);
			d->cls = q->c_class;
		}
		r.k = LK_OBJ;
		r.u.o = d;
		return r;
	}
	if (!o->ref)
		lq_raise(q, LQ_UNSUPPORTED, at, "field %s of an object a heap walk reports only as a "
			 "reference", f->name);
	jvalue v = lq_field_jvalue(q, at, o->ref, f);
	if (f->type == 'L' || f->type == '[') {
		if (!v.l)
			return r;
		r.k = LK_OBJ;
		r.u.o = lq_obj_of_ref(q, v.l);
		return r;
	}
	return prim_value(q, f->type, v);
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

struct lval lq_static_value(struct lq *q, const struct node *at, uint32_t c,
			    const struct lfield *f)
{
	struct lval r = {LK_NULL, {0}};
	jvalue v = lq_static_jvalue(q, at, c, f);
	if (f->type == 'L' || f->type == '[') {
		if (!v.l)
			return r;
		r.k = LK_OBJ;
		r.u.o = lq_obj_of_ref(q, v.l);
		return r;
	}
	return prim_value(q, f->type, v);
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
	struct lobj o = {s, q->c_string, 0, -1, 0, NULL};
	return (char *)lq_text(q, &o);
}

uint32_t lq_loader_of_ref(struct lq *q, jobject loader)
{
	if (!loader)
		return 0;
	for (uint32_t k = 1; k < q->nloaders; k++)
		if ((*q->jni)->IsSameObject(q->jni, q->loaders[k].ref, loader))
			return k;
	return 0;
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
	q->ent[q->nent] = (struct lentry){inst, 0, length, flags};
	return LQ_TAG_ENTRY | (jlong)++q->nent;
}

struct lentry *lq_entry(struct lq *q, jlong tag)
{
	if (!(tag & LQ_TAG_ENTRY) || (tag & LQ_TAG_CLASS))
		return NULL;
	uint64_t k = (uint64_t)(tag & 0xffffffff);
	return k && k <= q->nent ? &q->ent[k - 1] : NULL;
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

/* ---- the heap iteration behind `objects` ---- */

enum it_op { IT_COUNT, IT_FILTER, IT_EXISTS, IT_FIRST, IT_MAP, IT_SUM, IT_MIN, IT_MAX, IT_TAG,
	     IT_EACH };

#define HIT_MIRROR 0x80000000u	/* a hit that is a class object: the class index */

struct iter {
	struct lq *q;
	enum it_op op;
	struct node *at;
	struct lval fn;
	const uint8_t *bits;	/* class filter, NULL: every class */
	/* the object at hand */
	struct wobj w;
	struct lobj o;
	bool active, decided;
	uint32_t need, have;	/* primitive fields the lambda reads; how many came */
	bool need_text;
	uint8_t *needed;	/* per jvmti index of needed_cls: 1 if read */
	uint32_t needed_cls, needed_cap;
	/* the lambda's reads of its parameter's members, by name */
	const char **reads;
	int nreads;
	bool reads_text;
	/* results */
	struct lval *out;
	uint32_t nout, capout;
	uint32_t *hits;		/* entry index, or HIT_MIRROR | class index */
	uint32_t nhits, caphits;
	uint64_t count, bytes;
	struct lval acc;
	void (*each)(void *ctx, struct lval x);
	void *each_ctx;
	bool failed;
	struct lq_failure fail;	/* when failed: raised again after the walk */
};

static void collect_reads(struct iter *it, const struct node *n, const char *param, int depth)
{
	if (!n || depth > 400)
		return;
	if (n->kind == N_MEMBER && n->a && n->a->kind == N_IDENT && n->a->name &&
	    !strcmp(n->a->name, param) && it->nreads < 64) {
		it->reads[it->nreads++] = n->name;
		if (bi_id_of(n->name, BI_R_OBJECT) == BI_OBJ_TEXT)
			it->reads_text = true;
	}
	if ((n->kind == N_BIN || n->kind == N_IN) &&
	    ((n->a && n->a->kind == N_IDENT && n->a->name && !strcmp(n->a->name, param)) ||
	     (n->b && n->b->kind == N_IDENT && n->b->name && !strcmp(n->b->name, param))))
		it->reads_text = true;	/* the object itself compared: a String by its text */
	collect_reads(it, n->a, param, depth + 1);
	collect_reads(it, n->b, param, depth + 1);
	collect_reads(it, n->result, param, depth + 1);
	for (int k = 0; k < n->nitems; k++)
		collect_reads(it, n->items[k], param, depth + 1);
}

static void it_fail(struct iter *it)
{
	it->failed = true;
	lq_failure_keep(it->q, &it->fail);
}

static void add_hit(struct iter *it, uint32_t h)
{
	struct lq *q = it->q;
	if (it->nhits == it->caphits) {
		uint32_t cap = it->caphits ? it->caphits * 2 : 256;
		uint32_t *n = lq_alloc(q, (size_t)cap * sizeof *n);
		if (it->nhits)
			memcpy(n, it->hits, (size_t)it->nhits * sizeof *n);
		it->hits = n;
		it->caphits = cap;
	}
	it->hits[it->nhits++] = h;
}

/* decide: the lambda on the object at hand; tag_ptr is the current callback's. */
static jint decide(struct iter *it, jlong *tag_ptr)
{
	struct lq *q = it->q;
	if (it->decided || it->failed)
		return it->failed ? JVMTI_VISIT_ABORT : 0;
	it->decided = true;
	struct lq_guard g;
	LQ_TRY(q, g) {
		LQ_CAUGHT(q, g);
		it_fail(it);
		return JVMTI_VISIT_ABORT;
	}
	jint ret = 0;
	lq_poll(q, it->at);
	struct lval x = {LK_OBJ, {.o = &it->o}};
	struct lq_mark mk;
	lq_mark(q, &mk);
	struct lval r = it->fn.k == LK_LAMBDA ? lq_apply(q, it->at, it->fn, 1, &x) : x;
	if (it->op == IT_MAP || it->op == IT_MIN || it->op == IT_MAX)
		r = lq_keep_value(q, r, &mk);	/* results outlive the object */
	else if (it->op != IT_EACH)
		lq_release(q, &mk);
	bool keep = false;
	switch (it->op) {
	case IT_COUNT:
		if (it->fn.k != LK_LAMBDA || lq_truth(q, it->at, r, "the count's condition")) {
			it->count++;
			it->bytes += lq_shallow(q, &it->o);
		}
		break;
	case IT_TAG:
		keep = true;
		break;
	case IT_EACH: {
		bool yes = lq_truth(q, it->at, r, "the filter's result");
		lq_release(q, &mk);
		if (yes) {
			lq_mark(q, &mk);
			it->each(it->each_ctx, x);
			lq_release(q, &mk);
		}
		break;
	}
	case IT_FILTER: case IT_FIRST:
		keep = it->fn.k != LK_LAMBDA || lq_truth(q, it->at, r, "the filter's result");
		if (keep && it->op == IT_FIRST)
			ret = JVMTI_VISIT_ABORT;
		break;
	case IT_EXISTS:
		if (lq_truth(q, it->at, r, "the filter's result")) {
			it->count = 1;
			ret = JVMTI_VISIT_ABORT;
		}
		break;
	case IT_MAP: case IT_SUM: case IT_MIN: case IT_MAX:
		if (r.k == LK_OBJ || r.k == LK_LIST || r.k == LK_LAMBDA || r.k == LK_STRUCT ||
		    r.k == LK_ENTITY)
			lq_raise(q, LQ_UNSUPPORTED, it->at, "a member of the heap's objects whose "
				 "lambda gives %ss", lq_kind_name(r.k));
		if (it->op == IT_MAP) {
			if (it->nout == it->capout) {
				uint32_t cap = it->capout ? it->capout * 2 : 64;
				struct lval *nv = lq_alloc(q, cap * sizeof *nv);
				if (it->nout)
					memcpy(nv, it->out, it->nout * sizeof *nv);
				it->out = nv;
				it->capout = cap;
			}
			it->out[it->nout++] = r;
		} else if (it->op == IT_SUM) {
			if (r.k != LK_INT && r.k != LK_FLOAT)
				lq_raise(q, LQ_ERROR, it->at, "sum adds numbers, not %s",
					 lq_kind_name(r.k));
			if (it->acc.k == LK_INT && r.k == LK_INT) {
				it->acc.u.i = (int64_t)((uint64_t)it->acc.u.i + (uint64_t)r.u.i);
			} else {
				double a = it->acc.k == LK_INT ? (double)it->acc.u.i : it->acc.u.f;
				double b = r.k == LK_INT ? (double)r.u.i : r.u.f;
				it->acc.k = LK_FLOAT;
				it->acc.u.f = a + b;
			}
		} else if (it->acc.k == LK_NULL ||
			   (it->op == IT_MIN ? lq_compare(q, it->at, r, it->acc) < 0
					     : lq_compare(q, it->at, r, it->acc) > 0)) {
			it->acc = r;
		}
		break;
	}
	if (keep) {
		if (it->o.mirror) {
			add_hit(it, HIT_MIRROR | (it->o.mirror - 1));
		} else {
			struct lentry *e = lq_entry(q, *tag_ptr);
			if (!e)	/* an untagged object: tag it; a tagged one keeps its entry */
				*tag_ptr = lq_new_entry(q, 0, it->o.length, LE_ARRAY);
			add_hit(it, (uint32_t)(*tag_ptr & 0xffffffff) - 1);
		}
		it->count++;
	}
	LQ_END(q, g);
	return ret;
}

static void set_needed(struct iter *it, uint32_t c)
{
	struct lq *q = it->q;
	struct lclass *k = &q->cls[c];
	it->need = 0;
	it->need_text = it->reads_text && c == q->c_string;
	if (it->needed_cls != c + 1) {
		if (it->needed_cap < k->nindex + 1) {
			it->needed_cap = k->nindex + 1;
			it->needed = lq_alloc(q, it->needed_cap);
		} else {
			memset(it->needed, 0, it->needed_cap);
		}
		for (int r = 0; r < it->nreads; r++)
			for (uint32_t f = 0; f < k->nfields; f++)
				if (!strcmp(k->fields[f].name, it->reads[r])) {
					if (k->fields[f].type != 'L' && k->fields[f].type != '[')
						it->needed[k->fields[f].jvmti_index] = 1;
					break;
				}
		it->needed_cls = c + 1;
	}
	for (uint32_t j = 0; j < k->nindex; j++)
		it->need += it->needed[j];
}

void lq_note_size(struct lq *q, jlong class_tag, jlong tag, jlong size)
{
	if (!(class_tag & LQ_TAG_CLASS) || (tag & LQ_TAG_CLASS) || size <= 0 || size >= (1 << 30))
		return;
	uint32_t c = (uint32_t)(class_tag & 0xffffffff) - 1;
	if (c < q->ncls && !q->cls[c].elem && !q->cls[c].jvm_size && c != q->c_class)
		q->cls[c].jvm_size = (uint32_t)size;
}

static jint JNICALL it_object(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud)
{
	struct iter *it = ud;
	struct lq *q = it->q;
	if (it->failed)
		return JVMTI_VISIT_ABORT;
	lq_note_size(q, class_tag, *tag_ptr, size);
	it->active = false;
	if (!(class_tag & LQ_TAG_CLASS))
		return 0;	/* a class loaded since the table was made */
	uint32_t c = (uint32_t)(class_tag & 0xffffffff) - 1;
	if (c >= q->ncls)
		return 0;
	jlong t = *tag_ptr;
	struct lentry *e = lq_entry(q, t);
	if (e && (e->flags & LE_SELF))
		return 0;	/* the agent's own */
	if (it->bits && !(it->bits[c / 8] & (1u << (c % 8))))
		return 0;
	q->objects_seen++;
	memset(&it->o, 0, sizeof it->o);
	it->o.cls = c;
	it->o.length = q->cls[c].elem ? length : -1;
	it->o.tag = t;
	if (t & LQ_TAG_CLASS)
		it->o.mirror = (uint32_t)(t & 0xffffffff);
	it->w.gen++;
	it->w.text = NULL;
	it->w.has_refs = false;
	it->w.complete = false;
	it->o.w = &it->w;
	it->active = true;
	it->decided = false;
	it->have = 0;
	it->need = 0;
	it->need_text = false;
	if (!it->o.mirror && !q->cls[c].elem) {
		if (!q->cls[c].fields_read) {
			it->failed = true;
			memset(&it->fail, 0, sizeof it->fail);
			it->fail.status = LQ_UNSUPPORTED;
			snprintf(it->fail.msg, sizeof it->fail.msg, "objects of %s, a class the "
				 "analysis did not expect", q->cls[c].name);
			return JVMTI_VISIT_ABORT;
		}
		if (it->w.nslots < q->cls[c].nindex + 1) {
			it->w.nslots = q->cls[c].nindex + 1;
			it->w.slots = lq_alloc(q, it->w.nslots * sizeof *it->w.slots);
		}
		if (it->nreads || it->reads_text)
			set_needed(it, c);
	}
	if (!it->need && !it->need_text) {
		it->w.complete = true;
		return decide(it, tag_ptr);
	}
	return 0;
}

static jint JNICALL it_prim(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			    jlong object_class_tag, jlong *object_tag_ptr, jvalue value,
			    jvmtiPrimitiveType value_type, void *ud)
{
	(void)object_class_tag;
	(void)value_type;
	struct iter *it = ud;
	if (it->failed)
		return JVMTI_VISIT_ABORT;
	if (!it->active || it->decided || kind != JVMTI_HEAP_REFERENCE_FIELD)
		return 0;
	uint32_t ix = (uint32_t)info->field.index;
	if (ix >= it->w.nslots)
		return 0;
	struct wslot *s = &it->w.slots[ix];
	s->gen = it->w.gen;
	s->ref = false;
	s->v = value;
	if (ix < it->needed_cap && it->needed[ix] && ++it->have == it->need && !it->need_text) {
		it->w.complete = true;
		return decide(it, object_tag_ptr);
	}
	return 0;
}

static jint JNICALL it_string(jlong class_tag, jlong size, jlong *tag_ptr, const jchar *value,
			      jint value_length, void *ud)
{
	(void)class_tag;
	(void)size;
	struct iter *it = ud;
	if (it->failed)
		return JVMTI_VISIT_ABORT;
	if (!it->active || it->decided)
		return 0;
	struct lq *q = it->q;
	struct lq_guard g;
	LQ_TRY(q, g) {
		LQ_CAUGHT(q, g);
		it_fail(it);
		return JVMTI_VISIT_ABORT;
	}
	lq_wtext(q, &it->w, value, value_length > 0 ? (size_t)value_length : 0);
	LQ_END(q, g);
	it->w.complete = true;
	return decide(it, tag_ptr);
}

static bool pure(const struct node *n, int depth)
{
	if (!n || depth > 400)
		return true;
	if (n->kind == N_ASSIGN)
		return false;
	if (!pure(n->a, depth + 1) || !pure(n->b, depth + 1) || !pure(n->result, depth + 1))
		return false;
	for (int k = 0; k < n->nitems; k++)
		if (!pure(n->items[k], depth + 1))
			return false;
	return true;
}

/* class_filter: the class set of fn's leading `P is C` conjunct, or NULL (as eval_builtin.c). */
static const uint8_t *class_filter(struct lq *q, struct lval fn)
{
	if (fn.k != LK_LAMBDA || fn.u.fn->lam->nparams != 1 || fn.u.fn->lam->nitems)
		return NULL;
	const char *p = fn.u.fn->lam->params[0].name;
	struct node *r = fn.u.fn->lam->result;
	if (!r)
		return NULL;
	struct node *c = r;
	while (c->kind == N_BIN && c->op == OP_AND)
		c = c->a;
	if (c->kind == N_IS && c->a->kind == N_IDENT && !strcmp(c->a->name, p))
		return lq_class_set(q, c, c->name);
	if (r->kind == N_BIN && r->op == OP_AND && r->b->kind == N_IS && r->b->a->kind == N_IDENT &&
	    !strcmp(r->b->a->name, p))
		return lq_class_set(q, r->b, r->b->name);
	return NULL;
}

/* single_class: the one class in bits, if no other (IterateThroughHeap then filters). */
static jclass single_class(struct lq *q, const uint8_t *bits)
{
	uint32_t found = LQ_NONE;
	for (uint32_t c = 0; bits && c < q->ncls; c++)
		if (bits[c / 8] & (1u << (c % 8))) {
			if (found != LQ_NONE)
				return NULL;
			found = c;
		}
	return found == LQ_NONE || q->cls[found].elem ? NULL : q->cls[found].ref;
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

/* hits_list: the objects an iteration kept, as JNI objects, in its order. */
static struct lval hits_list(struct lq *q, const struct node *at, const struct iter *it)
{
	struct llist *l = lq_alloc(q, sizeof *l);
	l->v = lq_alloc(q, ((size_t)it->nhits + 1) * sizeof *l->v);
	struct lval out = {LK_LIST, {.l = l}};
	jlong *want = lq_alloc(q, ((size_t)it->nhits + 1) * sizeof *want);
	uint32_t nw = 0;
	for (uint32_t k = 0; k < it->nhits; k++)
		if (!(it->hits[k] & HIT_MIRROR))
			want[nw++] = LQ_TAG_ENTRY | (jlong)(it->hits[k] + 1);
	jobject *refs = lq_alloc(q, ((size_t)nw + 1) * sizeof *refs);
	lq_tagged_refs(q, at, want, nw, refs);
	uint32_t w = 0;
	for (uint32_t k = 0; k < it->nhits; k++) {
		struct lobj *o = lq_alloc(q, sizeof *o);
		o->length = -1;
		if (it->hits[k] & HIT_MIRROR) {
			uint32_t c = it->hits[k] & ~HIT_MIRROR;
			o->mirror = c + 1;
			o->cls = q->c_class;
			o->ref = q->cls[c].ref;
		} else {
			jlong t = LQ_TAG_ENTRY | (jlong)(it->hits[k] + 1);
			if (!refs[w++])
				continue;	/* collected meanwhile */
			o->ref = refs[w - 1];
			o->tag = t;
			o->cls = lq_class_of_ref(q, o->ref);
			if (q->cls[o->cls].elem)
				o->length = q->ent[it->hits[k]].length;
		}
		l->v[l->n].k = LK_OBJ;
		l->v[l->n++].u.o = o;
	}
	return out;
}

/* run_iteration: one IterateThroughHeap (after the request's GC); its failure re-raised. */
static void run_iteration(struct lq *q, struct iter *it, jclass klass, bool prims)
{
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.heap_iteration_callback = it_object;
	if (prims)
		cb.primitive_field_callback = it_prim;
	if (it->reads_text)
		cb.string_primitive_value_callback = it_string;
	lq_gc(q);
	int64_t t0 = ag_now_ms();
	q->in_walk = true;
	jvmtiError err = (*q->jv)->IterateThroughHeap(q->jv, 0, klass, &cb, it);
	q->in_walk = false;
	free(it->w.textbuf);
	it->w.textbuf = NULL;
	it->w.textcap = 0;
	q->walks++;
	q->pause_ms += (uint64_t)(ag_now_ms() - t0);
	if (it->failed)
		lq_failure_raise(q, &it->fail);
	if (err != JVMTI_ERROR_NONE)
		lq_raise(q, LQ_ERROR, it->at, "IterateThroughHeap failed (JVMTI error %d)", err);
}

void lq_prepare_classes(struct lq *q, const uint8_t *bits)
{
	for (uint32_t c = 0; c < q->ncls; c++)
		if ((!bits || (bits[c / 8] & (1u << (c % 8)))) && !q->cls[c].elem)
			lq_class_fields(q, c);
}

static void iter_init(struct lq *q, struct iter *it, enum it_op op, struct node *at,
		      const uint8_t *bits)
{
	memset(it, 0, sizeof *it);
	it->q = q;
	it->op = op;
	it->at = at;
	it->bits = bits;
	it->acc.k = op == IT_SUM ? LK_INT : LK_NULL;
}

static uint8_t *one_class(struct lq *q, uint32_t c)
{
	uint8_t *bits = lq_alloc(q, (size_t)q->ncls / 8 + 1);
	bits[c / 8] |= (uint8_t)(1u << (c % 8));
	return bits;
}

struct lval lq_instances(struct lq *q, const struct node *at, uint32_t c)
{
	struct iter it;
	iter_init(q, &it, IT_TAG, (struct node *)at, one_class(q, c));
	lq_prepare_classes(q, it.bits);
	run_iteration(q, &it, single_class(q, it.bits), false);
	return hits_list(q, at, &it);
}

void lq_class_count(struct lq *q, uint32_t c, uint64_t *count, uint64_t *bytes)
{
	struct iter it;
	iter_init(q, &it, IT_COUNT, NULL, one_class(q, c));
	lq_prepare_classes(q, it.bits);
	run_iteration(q, &it, single_class(q, it.bits), false);
	*count = it.count;
	*bytes = it.bytes;
}

/*
 * lq_objects: a member of `objects`. A pure lambda is first evaluated in one
 * heap iteration on what it reports of each object; if it needs more (a
 * reference field, a String's text through a field) and names a class (`it
 * is C and ...`), the instances of C and its subclasses come back as JNI
 * objects and the member runs over them.
 */
struct lval lq_objects(struct lq *q, struct node *at, const struct bi_row *r, int nargs,
		       struct lval *args)
{
	const char *m = r->name;
	struct lval fn = nargs ? args[nargs - 1] : (struct lval){LK_NULL, {0}};
	int op;
	switch (r->id) {	/* what one heap iteration can answer */
	case BI_LIST_COUNT: case BI_LIST_LENGTH: op = IT_COUNT; break;
	case BI_LIST_FILTER: op = IT_FILTER; break;
	case BI_LIST_EXISTS: op = IT_EXISTS; break;
	case BI_LIST_FIRST: op = IT_FIRST; break;
	case BI_LIST_MAP: op = IT_MAP; break;
	case BI_LIST_SUM: op = IT_SUM; break;
	case BI_LIST_MIN: op = IT_MIN; break;
	case BI_LIST_MAX: op = IT_MAX; break;
	default: op = -1; break;
	}
	bool lam = fn.k == LK_LAMBDA;
	/* those that take a lambda always (top's is its last argument) */
	if (r->lambda && r->min_args >= 1 && !lam)
		lq_raise(q, LQ_ERROR, at, "%s takes one lambda, e.g. %s([it | ...])", m, m);
	const uint8_t *bits = lam ? class_filter(q, fn) : NULL;
	/* a lambda that needed JNI once (it reads another object's fields) needs it again */
	bool walked_before = lam && (fn.u.fn->lam->ctx & 0x80);
	if (op >= 0 && !walked_before && (!lam || pure(fn.u.fn->lam, 0)) &&
	    !(op == IT_SUM && !lam) && !((op == IT_MIN || op == IT_MAX) && !lam)) {
		struct iter it;
		iter_init(q, &it, (enum it_op)op, at, bits);
		it.fn = fn;
		it.reads = lq_alloc(q, 64 * sizeof *it.reads);
		if (lam && fn.u.fn->lam->nparams == 1)
			collect_reads(&it, fn.u.fn->lam, fn.u.fn->lam->params[0].name, 0);
		lq_prepare_classes(q, bits);
		struct lq_ctx lc;
		LQ_SAVE(q, lc);
		jmp_buf jb, *save = q->fail;
		q->fail = &jb;
		if (!setjmp(jb)) {
			run_iteration(q, &it, single_class(q, bits), lam && it.nreads > 0);
			q->fail = save;
			switch (it.op) {
			case IT_COUNT: return (struct lval){LK_INT, {.i = (int64_t)it.count}};
			case IT_EXISTS: return (struct lval){LK_BOOL, {.b = it.count > 0}};
			case IT_FILTER: return hits_list(q, at, &it);
			case IT_FIRST: {
				struct lval l = hits_list(q, at, &it);
				return l.u.l->n ? l.u.l->v[0] : (struct lval){LK_NULL, {0}};
			}
			case IT_MAP: {
				struct llist *l = lq_alloc(q, sizeof *l);
				l->n = it.nout;
				l->v = it.out ? it.out : lq_alloc(q, sizeof *l->v);
				return (struct lval){LK_LIST, {.l = l}};
			}
			default: return it.acc;
			}
		}
		q->fail = save;
		LQ_RESTORE(q, lc);
		if (q->status != LQ_UNSUPPORTED || !bits)
			longjmp(*q->fail, 1);
		q->status = LQ_OK;
		if (lam)
			fn.u.fn->lam->ctx |= 0x80;
	}
	if (!bits)
		lq_raise(q, LQ_UNSUPPORTED, at, "'%s' over every object with a lambda that reads "
			 "more than an object's own primitive fields (start it with `it is C and "
			 "...`)", m);
	/* the instances of the class and its subclasses, as JNI objects, in address order */
	struct iter it;
	iter_init(q, &it, IT_TAG, at, bits);
	lq_prepare_classes(q, bits);
	run_iteration(q, &it, single_class(q, bits), false);
	struct lval all = hits_list(q, at, &it);
	return lq_list_member(q, at, r, all.u.l, nargs, args);
}

struct lval lq_heap_list(struct lq *q, const struct node *at, const struct bi_row *r)
{
	if (r->id == BI_OBJECTS) {
		if (q->allobjects.k != LK_LIST) {
			struct llist *l = lq_alloc_keep(q, sizeof *l);
			l->all = true;
			q->allobjects.k = LK_LIST;
			q->allobjects.u.l = l;
		}
		return q->allobjects;
	}
	if (q->in_walk && !(r->flags & BI_WALK))
		lq_raise(q, LQ_UNSUPPORTED, at, "'%s' during a heap walk", r->name);
	uint32_t n;
	uint8_t k;
	if (r->id == BI_CLASSES) {
		n = q->ncls;
		k = LK_CLASS;
	} else if (r->id == BI_THREADS) {
		lq_threads(q);
		n = q->nthreads;
		k = LK_THREAD;
	} else {
		lq_loaders(q);
		n = q->nloaders;
		k = LK_LOADER;
	}
	struct llist *l = lq_alloc(q, sizeof *l);
	l->n = n;
	l->v = lq_alloc(q, ((size_t)n + 1) * sizeof *l->v);
	for (uint32_t i = 0; i < n; i++)
		l->v[i] = (struct lval){k, {.idx = i}};
	return (struct lval){LK_LIST, {.l = l}};
}

void lq_stream(struct lq *q, struct node *at, struct lval fn, struct node *also,
	       void (*each)(void *ctx, struct lval x), void *ctx)
{
	if (fn.k != LK_LAMBDA || fn.u.fn->lam->nparams != 1)
		lq_raise(q, LQ_ERROR, at, "filter takes one lambda, e.g. filter([it | ...])");
	const uint8_t *bits = class_filter(q, fn);
	struct iter it;
	iter_init(q, &it, IT_EACH, at, bits);
	it.fn = fn;
	it.each = each;
	it.each_ctx = ctx;
	it.reads = lq_alloc(q, 64 * sizeof *it.reads);
	collect_reads(&it, fn.u.fn->lam, fn.u.fn->lam->params[0].name, 0);
	collect_reads(&it, also, "THIS", 0);
	lq_prepare_classes(q, bits);
	run_iteration(q, &it, single_class(q, bits), it.nreads > 0);
}
