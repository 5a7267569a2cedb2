/*
 * analyze.c - the ANALYZE request (docs/protocol.md): a query program
 * (src/dsl/prog.h) run inside the JVM by the evaluator of lq.c, its
 * results sent back as records. The request's limits bound its time and
 * the agent's memory; a CANCEL on the connection stops it; a malformed
 * program closes the connection.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dsl/value.h"
#include "ag.h"
#include "lq.h"

bool ag_debug(void);	/* recorder.h, whose struct node is another */

#define DEFAULT_TIME_MS 60000u
#define MAX_TIME_MS 3600000u
#define DEFAULT_MEM_MB 256u
#define MAX_MEM_MB 4096u
#define MAX_RESULT (256u << 20)	/* bytes of records, all frames together */
#define FLUSH_AT (1u << 20)

enum { V_TNULL, V_TBOOL, V_TINT, V_TFLOAT, V_TSTR, V_TOBJ, V_TCLASS, V_TLOADER, V_TTHREAD,
       V_TLIST, V_TSTRUCT, V_TREFKIND, V_TLAMBDA };

struct out {
	struct lq *q;
	int fd;
	struct wire_w b;
	uint64_t sent;
	bool io_failed;
};

static void flush(struct out *o, bool force)
{
	if (o->io_failed || (!force && o->b.len < FLUSH_AT) || !o->b.len)
		return;
	o->sent += o->b.len;
	if (o->b.err)
		lq_raise(o->q, LQ_LIMIT, NULL, "the agent ran out of memory for the results");
	if (!ag_send_frame(o->fd, T_DATA, &o->b))
		o->io_failed = true;
	if (o->sent > MAX_RESULT)
		lq_raise(o->q, LQ_LIMIT, NULL, "the results are larger than %u MiB", MAX_RESULT >> 20);
}

static void put_value(struct out *o, struct lval v, int depth)
{
	struct lq *q = o->q;
	struct wire_w *b = &o->b;
	if (depth > 64)
		lq_raise(q, LQ_LIMIT, NULL, "a result nests lists more than 64 deep");
	switch (v.k) {
	case LK_NULL: wire_put8(b, V_TNULL); break;
	case LK_BOOL: wire_put8(b, V_TBOOL); wire_put8(b, v.u.b); break;
	case LK_INT: wire_put8(b, V_TINT); wire_put64(b, (uint64_t)v.u.i); break;
	case LK_FLOAT: wire_put8(b, V_TFLOAT); wire_put_f64(b, v.u.f); break;
	case LK_STR: wire_put8(b, V_TSTR); wire_put_str(b, v.u.s); break;
	case LK_OBJ: {
		struct lobj *x = v.u.o;
		wire_put8(b, V_TOBJ);
		uint64_t id = x->mirror ? q->cls[x->mirror - 1].id : lq_address(x->ref);
		wire_put64(b, id);
		wire_put_str(b, x->mirror ? q->cls[x->mirror - 1].name : q->cls[x->cls].name);
		wire_put64(b, lq_shallow(q, x));
		char elem = x->mirror ? 0 : q->cls[x->cls].elem;
		wire_put8(b, x->mirror ? 3 : !elem ? 0 : elem == 'L' || elem == '[' ? 1 : 2);
		const char *t = x->ref || x->w ? lq_text(q, x) : NULL;
		wire_put8(b, t != NULL);
		if (t)
			wire_put_str(b, t);
		break;
	}
	case LK_CLASS:
		wire_put8(b, V_TCLASS);
		wire_put64(b, q->cls[v.u.idx].id);
		wire_put_str(b, q->cls[v.u.idx].name);
		break;
	case LK_LOADER:
		wire_put8(b, V_TLOADER);
		wire_put64(b, q->loaders[v.u.idx].id);
		wire_put_str(b, v.u.idx ? q->cls[lq_class_of_ref(q, q->loaders[v.u.idx].ref)].name
				     : "<bootstrap>");
		break;
	case LK_THREAD: {
		char *nm = lq_thread_name(q, v.u.idx);
		wire_put8(b, V_TTHREAD);
		wire_put64(b, lq_address(q->threads[v.u.idx]));
		wire_put_str(b, nm ? nm : "?");
		break;
	}
	case LK_LIST:
		if (v.u.l->all)
			lq_raise(q, LQ_UNSUPPORTED, NULL, "the list of every object as a result");
		wire_put8(b, V_TLIST);
		wire_put32(b, v.u.l->n);
		for (uint32_t k = 0; k < v.u.l->n; k++) {
			put_value(o, v.u.l->v[k], depth + 1);
			if (depth == 0)
				flush(o, false);
		}
		break;
	case LK_STRUCT:
		wire_put8(b, V_TSTRUCT);
		wire_put16(b, (uint16_t)v.u.st->n);
		for (int k = 0; k < v.u.st->n; k++) {
			wire_put_str(b, v.u.st->names[k]);
			put_value(o, v.u.st->vals[k], depth + 1);
		}
		break;
	case LK_REFKIND: wire_put8(b, V_TREFKIND); wire_put8(b, (uint8_t)v.u.rk); break;
	case LK_ENTITY: put_value(o, v.u.ent->name, depth + 1); break;
	default: wire_put8(b, V_TLAMBDA); break;
	}
}

static void emit(void *ctx, int stmt, int kind, struct lval v, const char *name)
{
	struct out *o = ctx;
	wire_put8(&o->b, 1);	/* RESULT */
	wire_put16(&o->b, (uint16_t)stmt);
	wire_put8(&o->b, (uint8_t)kind);
	wire_put_str(&o->b, name ? name : "");
	put_value(o, v, 0);
	flush(o, false);
}

static void *prog_alloc(void *ctx, size_t n)
{
	struct lq *q = ctx;
	if (q->mem_used + n + 65536 > q->mem_limit)
		return NULL;
	return lq_alloc_keep(q, n);	/* the program lives as long as the request */
}

/*
 * ag_analyze_request: serve ANALYZE on fd. Request: u32 flags (0), u32 time
 * limit (ms, 0 default), u32 memory limit (MiB, 0 default), the program.
 * False closes the connection: a malformed request or program.
 */
bool ag_analyze_request(int fd, JNIEnv *env, JavaVM *vm, struct wire_r *r)
{
	uint32_t flags = wire_get32(r), tms = wire_get32(r), mmb = wire_get32(r);
	if (r->err || flags)
		return false;
	if (!tms || tms > MAX_TIME_MS)
		tms = tms ? MAX_TIME_MS : DEFAULT_TIME_MS;
	if (!mmb || mmb > MAX_MEM_MB)
		mmb = mmb ? MAX_MEM_MB : DEFAULT_MEM_MB;
	int64_t t0 = ag_now_ms();
	struct lq *q = calloc(1, sizeof *q);
	if (!q)
		return ag_send_error(fd, "the agent ran out of memory");
	q->fd = fd;
	q->jni = env;
	q->deadline_ms = (uint64_t)t0 + tms;
	q->mem_limit = (uint64_t)mmb << 20;
	struct out o;
	memset(&o, 0, sizeof o);
	o.q = q;
	o.fd = fd;
	volatile bool keep_conn = true, pushed = false;
	jmp_buf jb;
	q->fail = &jb;
	if (setjmp(jb))
		goto end;
	char why[300];
	if (prog_decode(r->p, (size_t)wire_left(r), prog_alloc, q, &q->prog, why,
			sizeof why) != 0) {
		if (ag_debug())
			ag_log("ANALYZE: %s; closing the connection", why);
		keep_conn = false;	/* a malformed program: the connection closes */
		goto cleanup;
	}
	if ((*vm)->GetEnv(vm, (void **)&q->jv, JVMTI_VERSION_1_2) != JNI_OK || !q->jv)
		lq_raise(q, LQ_ERROR, NULL, "no JVMTI environment for the analysis");
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof caps);
	caps.can_tag_objects = 1;
	if ((*q->jv)->AddCapabilities(q->jv, &caps) != JVMTI_ERROR_NONE)
		lq_raise(q, LQ_ERROR, NULL, "the JVM refuses the capability to tag objects");
	if ((*env)->PushLocalFrame(env, 256) != 0) {
		(*env)->ExceptionClear(env);
		lq_raise(q, LQ_LIMIT, NULL, "no room for JNI references");
	}
	pushed = true;
	if (!lq_classes(q))
		lq_raise(q, LQ_ERROR, NULL, "%s", q->msg);
	jthread self = NULL;
	if ((*q->jv)->GetCurrentThread(q->jv, &self) == JVMTI_ERROR_NONE && self) {
		q->self_thread = self;
		(*q->jv)->SetTag(q->jv, self, lq_new_entry(q, 0, -1, LE_SELF));
	}
	lq_run(q, emit, &o);
	q->status = LQ_OK;
end:;
	jmp_buf jb2;
	q->fail = &jb2;
	if (setjmp(jb2)) {	/* the results could not be sent in full */
		keep_conn = false;
		goto cleanup;
	}
	if (o.io_failed) {
		keep_conn = false;
		goto cleanup;
	}
	if (q->status != LQ_OK)
		wire_w_reset(&o.b);	/* a failed analysis sends no partial values after this */
	if (!o.io_failed)
		flush(&o, true);
	{
		struct wire_w e = {0};
		wire_put8(&e, (uint8_t)q->status);
		wire_put16(&e, (uint16_t)q->stmt);
		wire_put16(&e, (uint16_t)(q->line < 0 ? 0 : q->line > 65535 ? 65535 : q->line));
		wire_put16(&e, (uint16_t)(q->col < 0 ? 0 : q->col > 65535 ? 65535 : q->col));
		wire_put8(&e, q->earlier);
		wire_put_str(&e, q->status == LQ_OK ? "" : q->msg);
		wire_put64(&e, q->walks);
		wire_put64(&e, q->pause_ms);
		wire_put64(&e, q->gc_ms);
		wire_put64(&e, (uint64_t)(ag_now_ms() - t0));
		wire_put64(&e, q->objects_seen);
		wire_put64(&e, q->mem_used);
		if (!ag_send_frame(fd, T_END, &e))
			keep_conn = false;
		wire_w_free(&e);
	}
cleanup:
	(*env)->ExceptionClear(env);
	if (pushed)
		(*env)->PopLocalFrame(env, NULL);
	if (q->jv)
		(*q->jv)->DisposeEnvironment(q->jv);	/* every tag of the analysis goes */
	wire_w_free(&o.b);
	free(q->ent);
	lq_free_arena(q);
	if (ag_debug())
		ag_log("analysis: status %d, %" PRIu64 " walks, %" PRIu64 " ms paused, %" PRIu64
	       " ms in GC, %" PRIu64 " objects, %" PRIu64 " ms in all", (int)q->status, q->walks,
	       q->pause_ms, q->gc_ms, q->objects_seen, (uint64_t)(ag_now_ms() - t0));
	free(q);
	return keep_conn;
}
