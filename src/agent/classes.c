/*
 * classes.c - what the agent's heap operations (histogram.c, snapshot.c,
 * instances.c) share on its JVMTI environment (ag_jvmti, agent.c's):
 * Deallocate, the loaded classes and the tags they are given, clearing
 * every object's tag, and JVMTI's numbering of instance fields
 * (ag_iface_fields, which lqheap.c uses too).
 */
#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ag.h"

void ag_dealloc(void *p)
{
	if (p)
		(*ag_jvmti)->Deallocate(ag_jvmti, p);
}

bool ag_load_classes(JNIEnv *env, struct classes *c)
{
	(void)env;
	c->n = 0;
	c->k = NULL;
	return (*ag_jvmti)->GetLoadedClasses(ag_jvmti, &c->n, &c->k) == JVMTI_ERROR_NONE;
}

void ag_drop_classes(JNIEnv *env, struct classes *c)
{
	for (jint i = 0; i < c->n; i++) {
		(*ag_jvmti)->SetTag(ag_jvmti, c->k[i], 0);
		(*env)->DeleteLocalRef(env, c->k[i]);
	}
	ag_dealloc(c->k);
	c->k = NULL;
	c->n = 0;
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

void ag_untag_all(void)
{
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.heap_iteration_callback = untag_cb;
	(*ag_jvmti)->IterateThroughHeap(ag_jvmti, JVMTI_HEAP_FILTER_UNTAGGED, NULL, &cb, NULL);
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

void ag_chain_fields(jvmtiEnv *e, JNIEnv *jni, jclass k, ag_field_fn f, void *ctx)
{
	jclass chain[64];
	int depth = 0;
	for (jclass c = (*jni)->NewLocalRef(jni, k); c && depth < 64;) {
		chain[depth++] = c;
		c = (*jni)->GetSuperclass(jni, c);
	}
	jclass seen[512];
	jint nseen = 0;
	jint index = (jint)ag_iface_fields(e, jni, k, seen, &nseen, 512);
	for (jint i = 0; i < nseen; i++)
		(*jni)->DeleteLocalRef(jni, seen[i]);
	for (int d = depth; d-- > 0;) {	/* java.lang.Object first */
		char *decl = NULL;
		(*e)->GetClassSignature(e, chain[d], &decl, NULL);
		jint nf = 0;
		jfieldID *fs = NULL;
		if ((*e)->GetClassFields(e, chain[d], &nf, &fs) != JVMTI_ERROR_NONE)
			nf = 0;
		for (jint i = 0; i < nf; i++, index++) {
			char *name = NULL, *sig = NULL;
			jint mods = 0;
			(*e)->GetFieldName(e, chain[d], fs[i], &name, &sig, NULL);
			(*e)->GetFieldModifiers(e, chain[d], fs[i], &mods);
			if (name && sig)
				f(ctx, index, fs[i], decl ? decl : "", name, sig, (mods & 0x0008) != 0);
			(*e)->Deallocate(e, (unsigned char *)name);
			(*e)->Deallocate(e, (unsigned char *)sig);
		}
		(*e)->Deallocate(e, (unsigned char *)fs);
		(*e)->Deallocate(e, (unsigned char *)decl);
		(*jni)->DeleteLocalRef(jni, chain[d]);
	}
}
