/*
 * dump.c - the agent's DUMP request (docs/protocol.md): HotSpot's own heap
 * dumper, asked through the platform's HotSpotDiagnosticMXBean from the agent
 * thread. heapsh takes snapshots with the dumper (docs/agent.md, "Snapshots"):
 * through the attach mechanism (jcmd GC.heap_dump) when it can, through the
 * agent when the JVM runs with -XX:+DisableAttachMechanism.
 */
#include <jni.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ag.h"

/* why_failed: a pending Java exception as "Class: message" in why (cleared). */
static void why_failed(JNIEnv *env, char *why, size_t cap)
{
	jthrowable t = (*env)->ExceptionOccurred(env);
	(*env)->ExceptionClear(env);
	snprintf(why, cap, "an exception in HotSpotDiagnosticMXBean.dumpHeap");
	if (!t)
		return;
	jclass oc = (*env)->FindClass(env, "java/lang/Object");
	jmethodID ts = oc ? (*env)->GetMethodID(env, oc, "toString", "()Ljava/lang/String;") : NULL;
	jstring s = ts ? (jstring)(*env)->CallObjectMethod(env, t, ts) : NULL;
	const char *c = s ? (*env)->GetStringUTFChars(env, s, NULL) : NULL;
	if (c) {
		snprintf(why, cap, "%s", c);
		(*env)->ReleaseStringUTFChars(env, s, c);
	}
	(*env)->ExceptionClear(env);
}

/*
 * dump_heap: HotSpot writes the live objects' heap dump to path (a file
 * that must not exist). false with why on failure.
 */
static bool dump_heap(JNIEnv *env, const char *path, char *why, size_t cap)
{
	jclass mf = (*env)->FindClass(env, "java/lang/management/ManagementFactory");
	jclass bean = mf ? (*env)->FindClass(env, "com/sun/management/HotSpotDiagnosticMXBean") : NULL;
	jmethodID get = bean ? (*env)->GetStaticMethodID(env, mf, "getPlatformMXBean",
		"(Ljava/lang/Class;)Ljava/lang/management/PlatformManagedObject;") : NULL;
	jmethodID dump = get ? (*env)->GetMethodID(env, bean, "dumpHeap", "(Ljava/lang/String;Z)V") : NULL;
	if (!dump) {
		(*env)->ExceptionClear(env);
		snprintf(why, cap, "this JVM has no HotSpotDiagnosticMXBean (the jdk.management module)");
		return false;
	}
	jobject mx = (*env)->CallStaticObjectMethod(env, mf, get, bean);
	jstring p = mx ? (*env)->NewStringUTF(env, path) : NULL;
	if (p)
		(*env)->CallVoidMethod(env, mx, dump, p, JNI_TRUE);
	if (!p || (*env)->ExceptionCheck(env)) {
		why_failed(env, why, cap);
		return false;
	}
	return true;
}

bool ag_dump_request(int fd, JNIEnv *env, struct wire_r *r)
{
	char *path = wire_get_strdup(r, MAX_REQUEST);
	if (!wire_done(r) || !path || path[0] != '/') {
		free(path);
		return false;
	}
	char why[1024];
	int64_t t0 = ag_now_ms();
	bool ok = dump_heap(env, path, why, sizeof why);
	free(path);
	if (!ok)
		return ag_send_error(fd, "%s", why);
	struct wire_w b = {0};
	wire_put64(&b, (uint64_t)(ag_now_ms() - t0));
	ok = ag_send_frame(fd, T_DUMP, &b);
	wire_w_free(&b);
	return ok;
}
