/*
 * histogram.c - the agent's HISTOGRAM request (docs/protocol.md;
 * `:histogram --via agent`): instances and bytes per loaded class, from one
 * IterateThroughHeap counting by class tag (the thesis's "simple dump",
 * chapter 3; equal to jcmd GC.class_histogram), after a full GC when asked.
 */
#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ag.h"

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

bool ag_do_histogram(int fd, JNIEnv *env, struct wire_r *r)
{
	uint8_t flags = wire_get8(r);
	if (!wire_done(r))
		return false;
	if (flags & 1)
		(*ag_jvmti)->ForceGarbageCollection(ag_jvmti);
	struct classes c;
	if (!ag_load_classes(env, &c))
		return ag_send_error(fd, "GetLoadedClasses failed");
	struct hist h = {c.n, calloc((size_t)c.n + 1, 8), calloc((size_t)c.n + 1, 8)};
	bool ok;
	if (!h.count || !h.bytes) {
		ok = ag_send_error(fd, "out of memory in the agent");
		goto done;
	}
	for (jint i = 0; i < c.n; i++)
		(*ag_jvmti)->SetTag(ag_jvmti, c.k[i], i + 1);
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.heap_iteration_callback = hist_cb;
	jvmtiError e = (*ag_jvmti)->IterateThroughHeap(ag_jvmti, 0, NULL, &cb, &h);
	if (e != JVMTI_ERROR_NONE) {
		ok = ag_send_error(fd, "IterateThroughHeap failed (JVMTI error %d)", e);
		goto done;
	}
	struct wire_w b = {0};
	uint32_t rows = 0;
	for (jint i = 0; i < c.n; i++)
		rows += h.count[i] > 0;
	wire_put32(&b, rows);
	for (jint i = 0; i < c.n; i++) {
		if (!h.count[i])
			continue;
		char *sig = NULL;
		(*ag_jvmti)->GetClassSignature(ag_jvmti, c.k[i], &sig, NULL);
		wire_put_str(&b, sig ? sig : "?");
		ag_dealloc(sig);
		wire_put64(&b, h.count[i]);
		wire_put64(&b, h.bytes[i]);
	}
	ok = ag_send_frame(fd, T_HISTOGRAM, &b);
	wire_w_free(&b);
done:
	ag_drop_classes(env, &c);
	free(h.count);
	free(h.bytes);
	return ok;
}
