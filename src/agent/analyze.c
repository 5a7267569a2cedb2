/*
 * analyze.c - the ANALYZE request (docs/protocol.md): a query program
 * (src/dsl/prog.h) run inside the JVM by the query language's evaluator
 * (src/dsl/eval*.c) over the agent's heap view (heapif_agent.h), the
 * values of its statements sent back as RESULT records, then END. The
 * request's limits bound its time and the agent's memory; a CANCEL on the
 * connection stops it; a malformed program closes the connection.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/ctx.h"
#include "../dsl/eval.h"
#include "../dsl/value.h"
#include "ag.h"
#include "heapif_agent.h"
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

/* emit_record: a RESULT record's head: its statement, kind and name; its value follows. */
static void emit_record(struct out *o, int stmt, int kind, const char *name)
{
	wire_put8(&o->b, 1);	/* RESULT */
	wire_put16(&o->b, (uint16_t)stmt);
	wire_put8(&o->b, (uint8_t)kind);
	wire_put_str(&o->b, name ? name : "");
}

/*
 * put_value: the evaluator's value x as a record's value (docs/protocol.md),
 * read through the view v. A read the view cannot make here ends the
 * request with LQ_UNSUPPORTED.
 */
static void put_value(struct out *o, struct hv *v, struct value x, int depth)
{
	struct lq *q = o->q;
	struct wire_w *b = &o->b;
	if (depth > 64)
		lq_raise(q, LQ_LIMIT, NULL, "a result nests lists more than 64 deep");
	switch (x.k) {
	case V_NULL: wire_put8(b, V_TNULL); break;
	case V_BOOL: wire_put8(b, V_TBOOL); wire_put8(b, x.u.b); break;
	case V_INT: wire_put8(b, V_TINT); wire_put64(b, (uint64_t)x.u.i); break;
	case V_FLOAT: wire_put8(b, V_TFLOAT); wire_put_f64(b, x.u.f); break;
	case V_STR: wire_put8(b, V_TSTR); wire_put_str(b, x.u.s); break;
	case V_OBJ: {
		uint32_t obj = x.u.idx, mc = hv_class_of_object(v, obj);
		enum hv_obj_kind k = hv_kind(v, obj);
		uint64_t id = hv_id(v, obj), size = hv_shallow(v, obj);
		char *t = hv_text(v, obj, 0);
		if (hv_failed(v)) {
			free(t);
			lq_raise(q, LQ_UNSUPPORTED, NULL, "%s", v->why);
		}
		wire_put8(b, V_TOBJ);
		wire_put64(b, id);
		wire_put_str(b, hv_class_name(v, mc != HV_NONE ? mc : hv_class_of(v, obj)));
		wire_put64(b, size);
		wire_put8(b, k == HV_CLASS_OBJECT ? 3 : k == HV_INSTANCE ? 0 : k == HV_OBJ_ARRAY ? 1 : 2);
		wire_put8(b, t != NULL);
		if (t)
			wire_put_str(b, t);
		free(t);
		break;
	}
	case V_CLASS: {
		struct hv_class c;
		hv_class_info(v, x.u.idx, &c);
		wire_put8(b, V_TCLASS);
		wire_put64(b, c.id);
		wire_put_str(b, c.name);
		break;
	}
	case V_LOADER: {
		uint64_t id = x.u.idx == HV_NONE ? 0 : hv_id(v, x.u.idx);
		wire_put8(b, V_TLOADER);
		wire_put64(b, id);
		wire_put_str(b, x.u.idx == HV_NONE ? "<bootstrap>"
			     : hv_class_name(v, hv_class_of(v, x.u.idx)));
		break;
	}
	case V_THREAD: {
		uint32_t obj = hv_thread_object(v, x.u.idx);
		uint64_t id = obj == HV_NONE ? 0 : hv_id(v, obj);
		char *nm = hv_thread_name(v, x.u.idx);
		wire_put8(b, V_TTHREAD);
		wire_put64(b, id);
		wire_put_str(b, nm ? nm : "?");
		free(nm);
		break;
	}
	case V_LIST: {
		const struct list *l = x.u.l;
		if (l->kind == L_ALL)
			lq_raise(q, LQ_UNSUPPORTED, NULL, "the list of every object as a result");
		wire_put8(b, V_TLIST);
		wire_put32(b, l->n);
		for (uint32_t k = 0; k < l->n; k++) {
			struct value y = l->kind == L_VALUES ? l->v[k]
					 : (struct value){V_OBJ, {.idx = l->objs[k]}};
			put_value(o, v, y, depth + 1);
			if (depth == 0)
				flush(o, false);
		}
		break;
	}
	case V_STRUCT:
		wire_put8(b, V_TSTRUCT);
		wire_put16(b, (uint16_t)x.u.st->n);
		for (int k = 0; k < x.u.st->n; k++) {
			wire_put_str(b, x.u.st->names[k]);
			put_value(o, v, x.u.st->vals[k], depth + 1);
		}
		break;
	case V_REFKIND: wire_put8(b, V_TREFKIND); wire_put8(b, (uint8_t)x.u.rk); break;
	case V_ENTITY: put_value(o, v, x.u.ent->name, depth + 1); break;
	default: wire_put8(b, V_TLAMBDA); break;
	}
	if (hv_failed(v))
		lq_raise(q, LQ_UNSUPPORTED, NULL, "%s", v->why);
}

/*
 * The watch of an analysis: a thread that sets the work context's
 * interrupt flag (ctx.h, polled by the evaluator and the view's heap
 * walks) at the time limit, when the evaluator's arenas pass the memory
 * limit (checked every 10 ms: the bound is approximate), or on a CANCEL,
 * and says which.
 */
struct watch {
	pthread_t t;
	int fd;
	uint64_t deadline_ms;
	size_t mem_base, mem_limit;	/* arena_live_bytes before, and the bytes allowed over it */
	volatile sig_atomic_t *interrupted;
	volatile int stop;
	volatile enum lq_status why;	/* LQ_LIMIT or LQ_CANCELLED once it interrupted */
	volatile bool memory;		/* LQ_LIMIT: the memory limit, not the time limit */
};

static void *watch_run(void *p)
{
	struct watch *w = p;
	while (!w->stop) {
		if ((uint64_t)ag_now_ms() > w->deadline_ms) {
			w->why = LQ_LIMIT;
			break;
		}
		if (arena_live_bytes() > w->mem_base + w->mem_limit) {
			w->memory = true;
			w->why = LQ_LIMIT;
			break;
		}
		if (w->fd >= 0 && ag_cancel_waiting(w->fd)) {
			w->why = LQ_CANCELLED;
			break;
		}
		usleep(10000);
	}
	if (w->why != LQ_OK)
		*w->interrupted = 1;
	return NULL;
}

/* body: the message of a "cannot answer here" error without the evaluator's frame around it. */
static const char *body(char *msg)
{
	static const char pre[] = "cannot answer here: ", post[] = " (a snapshot of the heap can)";
	char *s = strncmp(msg, pre, sizeof pre - 1) ? msg : msg + sizeof pre - 1;
	size_t n = strlen(s);
	if (n >= sizeof post - 1 && !strcmp(s + n - (sizeof post - 1), post))
		s[n - (sizeof post - 1)] = 0;
	return s;
}

/*
 * run: q's program on the evaluator over the agent's view, each value of a
 * statement (an expression's, a let's, an instances statement's) sent as a
 * RESULT record. A failure ends it as lq_raise does (the request's
 * handler, status in q).
 */
static void run(struct lq *q, struct out *o)
{
	struct hs_ctx ctx;
	memset(&ctx, 0, sizeof ctx);
	struct hs_ctx *prev = hs_ctx_enter(&ctx);
	struct watch wt;
	memset(&wt, 0, sizeof wt);
	wt.fd = o->fd;
	wt.deadline_ms = q->deadline_ms;
	wt.mem_base = arena_live_bytes();
	wt.mem_limit = q->mem_limit;
	wt.interrupted = &ctx.interrupted;
	bool watching = pthread_create(&wt.t, NULL, watch_run, &wt) == 0;
	struct hva *volatile a = NULL;
	struct dsl *volatile d = NULL;
	volatile bool failed = false, threw = false;
	struct hs_catch hc;
	hs_catch_push(&hc);
	struct lq_guard g;
	if (setjmp(hc.jb)) {	/* no memory (xmalloc): popped already */
		LQ_END(q, g);
		threw = true;
		goto done;
	}
	LQ_TRY(q, g) {
		LQ_CAUGHT(q, g);
		hs_catch_pop(&hc);
		failed = true;
		goto done;
	}
	a = hva_new(q, &ctx.interrupted);
	d = dsl_new_on(hva_view(a), NULL);
	for (int k = 0; k < q->prog.nstmts; k++) {
		struct stmt *s = q->prog.stmts[k];
		q->stmt = k;
		struct arena none = {NULL, 0};
		struct dsl_output out;
		struct hs_error err;
		memset(&err, 0, sizeof err);
		if (dsl_run_parsed(d, &none, &s, 1, &out, &err) != PARSE_OK) {
			dsl_output_done(d, &out);
			enum lq_status st = dsl_cannot_here(d) ? LQ_UNSUPPORTED : LQ_ERROR;
			if (hva_status(a) != LQ_OK)
				st = hva_status(a);
			else if (ctx.interrupted)
				st = wt.why != LQ_OK ? wt.why : LQ_CANCELLED;
			struct node at;
			memset(&at, 0, sizeof at);
			at.line = err.line;
			at.col = err.col;
			if (st == LQ_LIMIT && wt.why == LQ_LIMIT && wt.memory)
				lq_raise(q, st, &at, "the analysis needs more than the agent's memory "
					 "limit of %" PRIu64 " MiB", q->mem_limit >> 20);
			lq_raise(q, st, &at, "%s", st == LQ_UNSUPPORTED ? body(err.msg)
						   : st == LQ_LIMIT && wt.why == LQ_LIMIT
						   ? "the analysis reached its time limit"
						   : st == LQ_CANCELLED ? "cancelled" : err.msg);
		}
		struct value v;
		if (s->kind == S_EXPR && out.n == 1) {
			emit_record(o, k, S_EXPR, "");
			put_value(o, hva_view(a), out.vals[0], 0);
			flush(o, false);
		} else if (s->kind == S_INSTANCES && out.n == 1) {
			emit_record(o, k, S_INSTANCES, s->name);
			put_value(o, hva_view(a), out.vals[0], 0);
			flush(o, false);
		} else if (s->kind == S_LET && dsl_global(d, s->name, &v)) {
			emit_record(o, k, S_LET, s->name);
			put_value(o, hva_view(a), v, 0);
			flush(o, false);
		}
		dsl_output_done(d, &out);
	}
	LQ_END(q, g);
	hs_catch_pop(&hc);
done:
	wt.stop = 1;
	if (watching)
		pthread_join(wt.t, NULL);
	dsl_free(d);
	hva_free(a);
	hs_ctx_enter(prev);
	if (threw)
		lq_raise(q, LQ_LIMIT, NULL, "%s", hc.msg);
	if (failed)
		longjmp(*q->fail, 1);	/* q->status, q->msg say what */
}

static void *prog_alloc(void *ctx, size_t n)
{
	struct lq *q = ctx;
	if (q->mem_used + n + 65536 > q->mem_limit)
		return NULL;
	return lq_alloc_keep(q, n);	/* the program lives as long as the request */
}

/*
 * ag_analyze_request: serve ANALYZE on fd. Request: u32 flags (bit 0,
 * PROTO_ANALYZE_NO_GC: make no full GC before the first walk; other bits
 * 0), u32 time limit (ms, 0 default), u32 memory limit (MiB, 0 default),
 * the program.
 * False closes the connection: a malformed request or program.
 */
bool ag_analyze_request(int fd, JNIEnv *env, JavaVM *vm, struct wire_r *r)
{
	uint32_t flags = wire_get32(r), tms = wire_get32(r), mmb = wire_get32(r);
	if (r->err || (flags & ~1u))
		return false;
	if (!tms || tms > MAX_TIME_MS)
		tms = tms ? MAX_TIME_MS : DEFAULT_TIME_MS;
	if (!mmb || mmb > MAX_MEM_MB)
		mmb = mmb ? MAX_MEM_MB : DEFAULT_MEM_MB;
	int64_t t0 = ag_now_ms();
	struct lq *q = calloc(1, sizeof *q);
	if (!q)
		return ag_send_error(fd, "the agent ran out of memory");
	q->jni = env;
	q->gc_done = (flags & 1u) != 0;	/* the client had a full GC made just before */
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
	run(q, &o);
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
		wire_put8(&e, 0);	/* earlier: nothing marks an error's place as an earlier
					 * snippet's any more; heapsh reads the byte, so it stays */
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
