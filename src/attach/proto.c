/* proto.c - the agent protocol, client side; see proto.h and docs/protocol.md. */
#include "proto.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../alloc/alloc.h"
#include "../base/wire.h"
#include "attach.h"
#include "snapshot.h"

#define MAGIC 0x48534147u
#define MAX_REPLY ((16u << 20) + 1)
#define REPLY_MS 30000		/* a small reply */
#define WALK_MS 600000		/* a heap walk of a big heap */

enum {
	T_HELLO = 1, T_INFO, T_HISTOGRAM, T_SNAPSHOT, T_INSTANCES, T_DETACH,
	T_ALLOC_START, T_ALLOC_STOP, T_ALLOC_STATUS, T_ALLOC_RESET, T_ALLOC_MARK, T_ALLOC_READ,
	T_DUMP, T_CLIENT, T_LEAVE, T_ANALYZE, T_CANCEL, T_ALLOC_LEAKS,
	T_DATA = 0x40, T_END = 0x41, T_ERROR = 0x7f
};
#define MAX_RECORDING ((size_t)1 << 30)	/* bytes of one ALLOC_READ stream */
#define MAX_RESULTS ((size_t)256 << 20)	/* bytes of one ANALYZE's records */
#define CANCEL_MS 15000		/* after CANCEL, the agent has this long to END */

static void seterr(struct hs_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void seterr(struct hs_error *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	err->offset = 0;
	err->line = err->col = 0;
}

void proto_socket_path(int pid, char *buf, size_t cap)
{
	char tmp[256];
	att_tmp_dir(pid, tmp, sizeof tmp);
	snprintf(buf, cap, "%s/.heapsh-%d/agent.sock", tmp, att_nspid(pid));
}

bool proto_alive(const struct proto_conn *c)
{
	return c->fd >= 0;
}

bool proto_peer_closed(const struct proto_conn *c)
{
	if (c->fd < 0)
		return false;
	struct pollfd p = {c->fd, POLLIN | POLLRDHUP, 0};
	if (poll(&p, 1, 0) <= 0)
		return false;
	if (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL))
		return true;
	char b;
	return recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

void proto_close(struct proto_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* exited: the process is gone or a zombie, waiting up to 300 ms for a dying one. */
static bool exited(int pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	for (int k = 0; k < 30; k++) {
		FILE *f = fopen(path, "r");
		if (!f)
			return true;
		char buf[512];
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = 0;
		const char *rp = strrchr(buf, ')');	/* the state follows the command name */
		if (rp && (rp[2] == 'Z' || rp[2] == 'X'))
			return true;
		usleep(10000);
	}
	return false;
}

/* gone: why the connection failed, checking whether the JVM still exists. */
static int gone(struct proto_conn *c, struct hs_error *err, const char *what)
{
	int saved = errno;
	bool alive = !exited(c->pid);
	errno = saved;
	proto_close(c);
	if (!alive)
		seterr(err, "the JVM (pid %d) exited %s; the connection is closed", c->pid, what);
	else
		seterr(err, "lost the connection to the agent in JVM %d %s (%s); :attach %d "
		       "connects again", c->pid, what, errno ? strerror(errno) : "closed", c->pid);
	return HS_ERR;
}

static bool io_full(int fd, void *p, size_t n, bool rd, int64_t deadline)
{
	uint8_t *b = p;
	while (n) {
		int64_t left = deadline - now_ms();
		if (left <= 0) {
			errno = ETIMEDOUT;
			return false;
		}
		struct pollfd pf = {fd, rd ? POLLIN : POLLOUT, 0};
		int r = poll(&pf, 1, left > 200 ? 200 : (int)left);
		if (r < 0 && errno != EINTR)
			return false;
		if (hs_interrupted) {
			errno = EINTR;
			return false;
		}
		if (r <= 0)
			continue;
		ssize_t k = rd ? recv(fd, b, n, 0) : send(fd, b, n, MSG_NOSIGNAL);
		if (k == 0) {
			errno = 0;
			return false;
		}
		if (k < 0 && errno != EINTR && errno != EAGAIN)
			return false;
		if (k > 0) {
			b += k;
			n -= (size_t)k;
		}
	}
	return true;
}

/* ---- requests ---- */

/* send_req: a request of type with payload b (NULL: none), built by the codec (src/base/wire.h). */
static int send_req(struct proto_conn *c, uint8_t type, const struct wire_w *b, struct hs_error *err)
{
	if (c->fd < 0) {
		seterr(err, "not connected to an agent; :attach PID first");
		return HS_ERR;
	}
	if (b && b->err) {
		seterr(err, "cannot build the request to the agent: %s", wire_strerror(b->err));
		return HS_ERR;
	}
	size_t len = b ? b->len : 0;
	uint8_t h[5];
	wire_store32(h, (uint32_t)(len + 1));
	h[4] = type;
	int64_t dl = now_ms() + REPLY_MS;
	if (!io_full(c->fd, h, 5, false, dl) || (len && !io_full(c->fd, b->p, len, false, dl)))
		return gone(c, err, "while sending a request");
	return HS_OK;
}

/* ---- replies ---- */

struct reply {
	uint8_t type;
	uint8_t *p;		/* payload (owned) */
	uint32_t len;
	struct wire_r in;	/* the payload's reader */
};

/* error_frame: an ERROR frame's message (str) into err, the frame freed; HS_ERR. */
static int error_frame(struct reply *r, struct hs_error *err)
{
	uint32_t k = r->len >= 4 ? wire_load32(r->p) : 0;
	if (k > r->len - 4)
		k = r->len >= 4 ? r->len - 4 : 0;
	seterr(err, "the agent says: %.*s", (int)k, (const char *)r->p + 4);
	free(r->p);
	r->p = NULL;
	return HS_ERR;
}

/*
 * frame_body: the payload of the frame whose 5-byte header is h into r
 * (new memory), read within REPLY_MS; a length the protocol does not allow
 * closes the connection. finish: a Ctrl-C meanwhile waits for the frame's
 * end (hs_interrupted kept for the caller) instead of cutting it short.
 */
static int frame_body(struct proto_conn *c, const uint8_t h[5], struct reply *r, bool finish,
		      struct hs_error *err)
{
	uint32_t n = wire_load32(h);
	if (n < 1 || n > MAX_REPLY) {
		proto_close(c);
		seterr(err, "the agent sent a frame of %u bytes, which the protocol does not allow; "
		       "the connection is closed", n);
		return HS_ERR;
	}
	r->type = h[4];
	r->len = n - 1;
	r->p = xmalloc((size_t)r->len + 1);
	int saved = hs_interrupted;
	if (finish)
		hs_interrupted = 0;
	bool ok = io_full(c->fd, r->p, r->len, true, now_ms() + REPLY_MS);
	if (finish)
		hs_interrupted = hs_interrupted || saved;
	if (!ok) {
		free(r->p);
		r->p = NULL;
		return gone(c, err, "in the middle of a reply");
	}
	r->in = wire_reader(r->p, r->len);
	return HS_OK;
}

/*
 * recv_reply: the next frame within ms; an ERROR frame becomes HS_ERR with
 * the agent's message (the connection stays open).
 */
static int recv_reply(struct proto_conn *c, struct reply *r, int ms, struct hs_error *err)
{
	memset(r, 0, sizeof *r);
	uint8_t h[5];
	if (!io_full(c->fd, h, 5, true, now_ms() + ms))
		return gone(c, err, errno == ETIMEDOUT ? "(no reply in time)"
				    : errno == EINTR ? "(interrupted)" : "while waiting for a reply");
	if (frame_body(c, h, r, false, err))
		return HS_ERR;
	if (r->type == T_ERROR)
		return error_frame(r, err);
	return HS_OK;
}

/* get_str: a string of a reply as new memory (caller frees); "" when malformed (r->err set). */
static char *get_str(struct wire_r *r)
{
	size_t n;
	const char *s = wire_get_str(r, &n);
	return s ? xstrndup(s, n) : xstrdup("");
}
/* get_str_into: a string of a reply into buf (cap bytes, cut to fit). */
static void get_str_into(struct wire_r *r, char *buf, size_t cap)
{
	size_t n;
	const char *s = wire_get_str(r, &n);
	snprintf(buf, cap, "%.*s", s ? (int)n : 0, s ? s : "");
}

/* check_reply: the reply has the expected type and was read exactly. */
static int check_reply(struct proto_conn *c, struct reply *r, uint8_t type, struct hs_error *err)
{
	bool ok = r->type == type && wire_done(&r->in);
	free(r->p);
	r->p = NULL;
	if (ok)
		return HS_OK;
	proto_close(c);
	seterr(err, "the agent's reply (type %u, %u bytes) does not follow the protocol; the "
	       "connection is closed (is the agent from another heapsh version?)", r->type, r->len);
	return HS_ERR;
}

static bool has_cap(const struct proto_conn *c, const char *cap);

int proto_connect(int pid, struct proto_conn *c, struct hs_error *err)
{
	memset(c, 0, sizeof *c);
	c->fd = -1;
	c->pid = pid;
	char path[300];
	proto_socket_path(pid, path, sizeof path);
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof a.sun_path) {
		seterr(err, "the agent's socket path %s is too long for a Unix socket", path);
		return HS_ERR;
	}
	memcpy(a.sun_path, path, strlen(path) + 1);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&a, sizeof a) != 0) {
		seterr(err, "no heapsh agent listens in JVM %d (%s: %s)", pid, path, strerror(errno));
		proto_close(c);
		return HS_ERR;
	}
	struct wire_w b = {0};
	wire_put32(&b, MAGIC);
	wire_put16(&b, PROTO_VERSION);
	int st = send_req(c, T_HELLO, &b, err);
	wire_w_free(&b);
	struct reply r;
	if (st || recv_reply(c, &r, REPLY_MS, err)) {
		proto_close(c);
		return HS_ERR;
	}
	uint32_t magic = wire_get32(&r.in);
	uint16_t ver = wire_get16(&r.in);
	get_str_into(&r.in, c->agent, sizeof c->agent);
	get_str_into(&r.in, c->caps, sizeof c->caps);
	if (magic != MAGIC || ver != PROTO_VERSION) {
		free(r.p);
		proto_close(c);
		seterr(err, "the agent in JVM %d speaks protocol %u, heapsh speaks %d; detach it "
		       "with a matching heapsh, or restart the JVM", pid, ver, PROTO_VERSION);
		return HS_ERR;
	}
	if (check_reply(c, &r, T_HELLO, err))
		return HS_ERR;
	if (!has_cap(c, "clients"))
		return HS_OK;
	/* Who uses the agent, so that a shell leaving does not detach it from another. */
	b = (struct wire_w){0};
	wire_put32(&b, (uint32_t)getpid());
	st = send_req(c, T_CLIENT, &b, err);
	wire_w_free(&b);
	if (st || recv_reply(c, &r, REPLY_MS, err)) {
		proto_close(c);
		return HS_ERR;
	}
	return check_reply(c, &r, T_CLIENT, err);
}

/* has_cap: the agent offers cap (a whole word of its HELLO's list). */
static bool has_cap(const struct proto_conn *c, const char *cap)
{
	size_t n = strlen(cap);
	for (const char *p = c->caps; (p = strstr(p, cap)); p += n)
		if ((p == c->caps || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

int proto_leave(struct proto_conn *c, bool detach, int *outcome, int *other, struct hs_error *err)
{
	*outcome = PROTO_KEPT_ASKED;
	*other = 0;
	if (!has_cap(c, "clients"))
		return HS_OK;
	struct wire_w b = {0};
	wire_put32(&b, (uint32_t)getpid());
	wire_put8(&b, detach ? 1 : 0);
	struct reply r;
	int st = send_req(c, T_LEAVE, &b, err);
	wire_w_free(&b);
	if (st || recv_reply(c, &r, REPLY_MS, err))
		return HS_ERR;
	*outcome = wire_get8(&r.in);
	*other = (int)wire_get32(&r.in);
	st = check_reply(c, &r, T_LEAVE, err);
	if (st == HS_OK && *outcome == PROTO_DETACHED)
		proto_close(c);
	return st;
}

int proto_info(struct proto_conn *c, struct proto_info *out, struct hs_error *err)
{
	struct reply r;
	if (send_req(c, T_INFO, NULL, err) || recv_reply(c, &r, REPLY_MS, err))
		return HS_ERR;
	memset(out, 0, sizeof *out);
	get_str_into(&r.in, out->vm_name, sizeof out->vm_name);
	get_str_into(&r.in, out->vm_version, sizeof out->vm_version);
	get_str_into(&r.in, out->vm_vendor, sizeof out->vm_vendor);
	out->pid = wire_get64(&r.in);
	out->heap_used = wire_get64(&r.in);
	out->heap_committed = wire_get64(&r.in);
	out->heap_max = wire_get64(&r.in);
	out->classes = wire_get32(&r.in);
	get_str_into(&r.in, out->agent, sizeof out->agent);
	return check_reply(c, &r, T_INFO, err);
}

int proto_histogram(struct proto_conn *c, bool gc, struct att_hist_row **rows, uint32_t *n,
		    struct hs_error *err)
{
	struct wire_w b = {0};
	wire_put8(&b, gc);
	int st = send_req(c, T_HISTOGRAM, &b, err);
	wire_w_free(&b);
	struct reply r;
	if (st || recv_reply(c, &r, WALK_MS, err))
		return HS_ERR;
	uint32_t k = wire_get32(&r.in);
	if (k > r.len / 20)	/* each row takes at least 20 bytes */
		wire_r_fail(&r.in, WIRE_BAD);
	*rows = xcalloc(r.in.err ? 1 : (size_t)k + 1, sizeof **rows);
	*n = 0;
	for (uint32_t i = 0; i < k && !r.in.err; i++) {
		char *sig = get_str(&r.in);
		(*rows)[i].name = snap_java_name(sig);
		free(sig);
		(*rows)[i].count = wire_get64(&r.in);
		(*rows)[i].bytes = wire_get64(&r.in);
		*n = i + 1;
	}
	if (check_reply(c, &r, T_HISTOGRAM, err)) {
		att_hist_free(*rows, *n);
		*rows = NULL;
		*n = 0;
		return HS_ERR;
	}
	return HS_OK;
}

int proto_snapshot(struct proto_conn *c, const char *path, double *pause_ms,
		   void (*progress)(void *ctx, uint64_t bytes), void *ctx, struct hs_error *err)
{
	/* the heap's size bounds what the records may claim (snap_heap_bound) */
	struct proto_info info;
	if (proto_info(c, &info, err))
		return HS_ERR;
	int64_t t0 = now_ms();
	if (send_req(c, T_SNAPSHOT, NULL, err))
		return HS_ERR;
	struct snap_builder *sb = snap_new();
	snap_heap_bound(sb, info.heap_max > info.heap_committed ? info.heap_max
								: info.heap_committed);
	uint64_t got = 0;
	bool first = true;
	for (;;) {
		struct reply r;
		if (recv_reply(c, &r, first ? WALK_MS : REPLY_MS, err)) {
			snap_free(sb);
			return HS_ERR;
		}
		if (first && pause_ms)
			*pause_ms = (double)(now_ms() - t0);
		first = false;
		if (r.type == T_DATA) {
			got += r.len;
			int st = snap_feed(sb, r.p, r.len, err);
			free(r.p);
			if (st) {
				/* The rest of the stream is unusable: drop the connection. */
				proto_close(c);
				snap_free(sb);
				return HS_ERR;
			}
			if (progress)
				progress(ctx, got);
			continue;
		}
		uint64_t objects = wire_get64(&r.in);
		wire_get64(&r.in);
		if (check_reply(c, &r, T_END, err)) {
			snap_free(sb);
			return HS_ERR;
		}
		int st = snap_write_hprof(sb, path, objects, err);
		snap_free(sb);
		return st;
	}
}

static void put_pred(struct wire_w *b, const struct proto_pred *p)
{
	wire_put8(b, (uint8_t)p->op);
	switch (p->op) {
	case PROTO_TRUE:
		break;
	case PROTO_AND:
	case PROTO_OR:
		wire_put8(b, (uint8_t)p->n);
		for (int i = 0; i < p->n; i++)
			put_pred(b, p->kids[i]);
		break;
	case PROTO_NOT:
		put_pred(b, p->kids[0]);
		break;
	case PROTO_CMP:
		wire_put_str(b, p->field);
		wire_put8(b, (uint8_t)p->cmp);
		wire_put8(b, (uint8_t)p->lit);
		if (p->lit == PROTO_LONG)
			wire_put64(b, (uint64_t)p->l);
		else if (p->lit == PROTO_DOUBLE)
			wire_put_f64(b, p->d);
		else if (p->lit == PROTO_BOOL)
			wire_put8(b, (uint8_t)(p->l != 0));
		else if (p->lit == PROTO_STRING)
			wire_put_str(b, p->s);
		break;
	}
}

int proto_instances(struct proto_conn *c, const char *cls, bool subclasses, enum proto_walk walk,
		    bool first_only, uint32_t limit, const struct proto_pred *pred,
		    struct proto_instances *out, struct hs_error *err)
{
	memset(out, 0, sizeof *out);
	struct wire_w b = {0};
	wire_put_str(&b, cls);
	wire_put8(&b, (uint8_t)(subclasses | (walk != PROTO_WALK_REFS) << 1 | first_only << 2 |
				(walk == PROTO_WALK_GC_HEAP) << 3));
	wire_put32(&b, limit);
	put_pred(&b, pred);
	if (b.len > 65535) {
		wire_w_free(&b);
		seterr(err, "the predicate is too large to send to the agent");
		return HS_ERR;
	}
	int st = send_req(c, T_INSTANCES, &b, err);
	wire_w_free(&b);
	struct reply r;
	if (st || recv_reply(c, &r, WALK_MS, err))
		return HS_ERR;
	out->examined = wire_get64(&r.in);
	out->matched = wire_get64(&r.in);
	uint32_t k = wire_get32(&r.in);
	if (k > r.len / 6)
		wire_r_fail(&r.in, WIRE_BAD);
	out->rows = xcalloc(r.in.err ? 1 : (size_t)k + 1, sizeof *out->rows);
	for (uint32_t i = 0; i < k && !r.in.err; i++) {
		struct proto_row *row = &out->rows[i];
		out->nrows = i + 1;
		row->cls = get_str(&r.in);
		row->n = wire_get16(&r.in);
		if ((size_t)row->n > wire_left(&r.in) / 5) {
			wire_r_fail(&r.in, WIRE_BAD);
			row->n = 0;
		}
		row->v = xcalloc((size_t)row->n + 1, sizeof *row->v);
		for (int f = 0; f < row->n && !r.in.err; f++) {
			struct proto_value *v = &row->v[f];
			v->field = get_str(&r.in);
			v->kind = (char)wire_get8(&r.in);
			if (v->kind == 'T' || v->kind == 'L')
				v->text = get_str(&r.in);
			else if (v->kind != 'N')
				v->bits = wire_get64(&r.in);
			if (!strchr("ZBCSIJFDTLN", v->kind) || !v->kind)
				wire_r_fail(&r.in, WIRE_BAD);
		}
	}
	if (check_reply(c, &r, T_INSTANCES, err)) {
		proto_instances_free(out);
		return HS_ERR;
	}
	return HS_OK;
}

void proto_instances_free(struct proto_instances *r)
{
	for (uint32_t i = 0; r->rows && i < r->nrows; i++) {
		for (int f = 0; f < r->rows[i].n; f++) {
			free(r->rows[i].v[f].field);
			free(r->rows[i].v[f].text);
		}
		free(r->rows[i].v);
		free(r->rows[i].cls);
	}
	free(r->rows);
	memset(r, 0, sizeof *r);
}

int proto_dump(struct proto_conn *c, const char *path, double *ms, struct hs_error *err)
{
	struct wire_w b = {0};
	wire_put_str(&b, path);
	struct reply r;
	int st = send_req(c, T_DUMP, &b, err);
	wire_w_free(&b);
	if (st || recv_reply(c, &r, WALK_MS, err))
		return HS_ERR;
	*ms = (double)wire_get64(&r.in);
	return check_reply(c, &r, T_DUMP, err);
}

int proto_detach(struct proto_conn *c, struct hs_error *err)
{
	struct reply r;
	if (send_req(c, T_DETACH, NULL, err) || recv_reply(c, &r, REPLY_MS, err))
		return HS_ERR;
	int st = check_reply(c, &r, T_DETACH, err);
	proto_close(c);
	return st;
}

static int send_cancel(struct proto_conn *c)
{
	uint8_t h[5] = {0, 0, 0, 1, T_CANCEL};
	return io_full(c->fd, h, 5, false, now_ms() + 2000) ? 0 : -1;
}

/*
 * wait_frame: the next frame into r, waiting until *wait_until; on Ctrl-C
 * (hs_interrupted) a CANCEL is sent once (*cancel_sent) and the wait is
 * bounded by CANCEL_MS from then, for the agent to say how it stopped.
 * HS_ERR (the connection closed, err set) when the agent went away, did
 * not answer in time or broke the framing. An ERROR frame is returned as
 * one, for the caller.
 */
static int wait_frame(struct proto_conn *c, struct reply *r, int64_t *wait_until, bool *cancel_sent,
		      struct hs_error *err)
{
	uint8_t h[5];
	size_t got = 0;
	memset(r, 0, sizeof *r);
	while (got < 5) {
		if (hs_interrupted && !*cancel_sent) {
			hs_interrupted = 0;
			if (send_cancel(c))
				return gone(c, err, "while cancelling");
			*cancel_sent = true;
			*wait_until = now_ms() + CANCEL_MS;
		}
		if (now_ms() > *wait_until) {
			errno = ETIMEDOUT;
			return gone(c, err, *cancel_sent ? "(it did not stop in time after the cancel)"
							 : "(no reply in time)");
		}
		struct pollfd pf = {c->fd, POLLIN, 0};
		int pr = poll(&pf, 1, 200);
		if (pr < 0 && errno != EINTR)
			return gone(c, err, "while waiting for a reply");
		if (pr <= 0)
			continue;
		ssize_t k = recv(c->fd, h + got, 5 - got, 0);
		if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN)) {
			if (k == 0)
				errno = 0;
			return gone(c, err, "while waiting for a reply");
		}
		if (k > 0)
			got += (size_t)k;
	}
	return frame_body(c, h, r, true, err);
}

/* ---- allocation recordings (ALLOC_*) ---- */

/*
 * get_status: the status fields of ALLOC_* replies into st (st->accounts,
 * st->uncovered: new memory). reply: the status ends the payload, and an
 * agent from before the uncovered methods leaves them out.
 */
static void get_status(struct wire_r *r, struct alc_status *st, bool reply)
{
	memset(st, 0, sizeof *st);
	uint8_t f = wire_get8(r);
	st->exists = f & 1;
	st->recording = (f & 2) != 0;
	st->exact = (f & 4) != 0;
	st->has_mark = (f & 8) != 0;
	st->bytecode = (f & 16) != 0;
	st->no_live = (f & 32) != 0;
	st->live_sampled = (f & 64) != 0;
	st->interval = wire_get64(r);
	st->depth = wire_get32(r);
	st->started_ms = wire_get64(r);
	st->stopped_ms = wire_get64(r);
	st->events = wire_get64(r);
	st->dropped = wire_get64(r);
	st->agent_bytes = wire_get64(r);
	st->tracked = wire_get64(r);
	st->mark_ms = wire_get64(r);
	char *acc = get_str(r);
	if (*acc) {
		st->accounts = acc;
	} else {
		free(acc);
		st->accounts = NULL;
	}
	st->classes_instrumented = wire_get64(r);
	st->classes_failed = wire_get64(r);
	st->untracked = wire_get64(r);
	char *u = !reply || wire_left(r) ? get_str(r) : NULL;
	if (u && *u) {
		st->uncovered = u;
	} else {
		free(u);
		st->uncovered = NULL;
	}
	if (!reply || wire_left(r)) {
		st->missed_bytes = wire_get64(r);
		st->seen_bytes = wire_get64(r);
	}
}

/* alloc_call: send a request of type t with payload b and read a status reply. */
static int alloc_call(struct proto_conn *c, uint8_t t, const struct wire_w *b, int ms,
		      struct alc_status *st, struct hs_error *err)
{
	struct reply r;
	if (send_req(c, t, b, err) || recv_reply(c, &r, ms, err))
		return HS_ERR;
	get_status(&r.in, st, true);
	if (check_reply(c, &r, t, err)) {
		alc_status_free(st);
		return HS_ERR;
	}
	return HS_OK;
}

int proto_alloc_start(struct proto_conn *c, const struct alc_opts *o,
		      void (*progress)(void *ctx, uint32_t done, uint32_t total), void *ctx,
		      struct alc_status *st, struct hs_error *err)
{
	memset(st, 0, sizeof *st);
	struct wire_w b = {0};
	/* Bit 3: this heapsh reads progress frames and may send CANCEL. */
	wire_put8(&b, (o->exact ? 1 : 0) | (o->exact && o->jvmti ? 2 : 0) |
			  (o->live == ALC_LIVE_NONE ? 4 : 0) | 8 | (o->live == ALC_LIVE_ALL ? 16 : 0));
	wire_put64(&b, o->exact ? 0 : o->interval);
	wire_put32(&b, o->depth);
	wire_put_str(&b, o->accounts ? o->accounts : "");
	int rc = send_req(c, T_ALLOC_START, &b, err);
	wire_w_free(&b);
	if (rc)
		return HS_ERR;
	/* An exact recording's start rewrites every loaded class first: seconds in a big program. */
	bool cancel_sent = false;
	int64_t wait_until = now_ms() + (o->exact ? WALK_MS : REPLY_MS);
	for (;;) {
		struct reply r;
		if (wait_frame(c, &r, &wait_until, &cancel_sent, err))
			return HS_ERR;
		if (r.type == T_DATA) {
			uint32_t done = wire_get32(&r.in), total = wire_get32(&r.in);
			bool bad = !wire_done(&r.in);
			free(r.p);
			if (bad) {
				proto_close(c);
				seterr(err, "the agent's progress frame does not follow the protocol; the "
				       "connection is closed");
				return HS_ERR;
			}
			if (progress)
				progress(ctx, done, total);
			if (!cancel_sent)
				wait_until = now_ms() + WALK_MS;
			continue;
		}
		if (r.type == T_ERROR)
			return error_frame(&r, err);
		get_status(&r.in, st, true);
		if (check_reply(c, &r, T_ALLOC_START, err)) {
			alc_status_free(st);
			return HS_ERR;
		}
		if (cancel_sent)
			hs_interrupted = 1;	/* it finished before the cancel came: still stop */
		return HS_OK;
	}
}

int proto_alloc_control(struct proto_conn *c, enum proto_alloc_op op, struct alc_status *st,
			struct hs_error *err)
{
	static const uint8_t type[] = {T_ALLOC_STOP, T_ALLOC_STATUS, T_ALLOC_RESET, T_ALLOC_MARK};
	/*
	 * A mark walks the heap after a full GC; stopping or resetting an exact
	 * recording puts every rewritten class back (and a reset rewrites them again).
	 */
	return alloc_call(c, type[op], NULL, op == PROTO_ALLOC_STATUS ? REPLY_MS : WALK_MS, st, err);
}

enum { A_STATUS = 1, A_ACCOUNT, A_CLASS, A_METHOD, A_NODE, A_KEY };


#define GROW(arr, n, cap)                                                             \
	do {                                                                          \
		if ((n) == (cap)) {                                                   \
			(cap) = (cap) ? (cap) * 2 : 64;                               \
			(arr) = xreallocarray((arr), (cap), sizeof *(arr));           \
		}                                                                     \
	} while (0)

/*
 * decode: the records of an ALLOC_READ stream into rec, checking every
 * index against what came before it (a node's parent and a key's node
 * come earlier, so the tree has no cycle). false with why on a bad record.
 */
static bool decode(struct wire_r *r, struct alc_rec *rec, char *why, size_t cap)
{
	uint32_t capa = 0, capc = 0, capm = 0, capn = 0, capk = 0;
	bool status = false;
	rec->accounts = xcalloc(1, sizeof *rec->accounts);
	rec->accounts[0] = xstrdup("(none)");
	rec->naccounts = capa = 1;
	while (wire_left(r) && !r->err) {
		uint8_t t = wire_get8(r);
		if (t == A_STATUS && !status) {
			get_status(r, &rec->st, false);
			status = true;
		} else if (t == A_ACCOUNT) {
			GROW(rec->accounts, rec->naccounts, capa);
			rec->accounts[rec->naccounts++] = get_str(r);
		} else if (t == A_CLASS) {
			GROW(rec->classes, rec->nclasses, capc);
			char *sig = get_str(r);
			char name[1024];
			alc_java_name(sig, name, sizeof name);
			free(sig);
			rec->classes[rec->nclasses++] = xstrdup(name);
		} else if (t == A_METHOD) {
			GROW(rec->methods, rec->nmethods, capm);
			struct alc_method *m = &rec->methods[rec->nmethods++];
			char *sig = get_str(r), name[1024];
			alc_java_name(sig, name, sizeof name);
			free(sig);
			m->cls = xstrdup(name);
			m->name = get_str(r);
			m->sig = get_str(r);
			m->file = get_str(r);
			if (!*m->file) {
				free(m->file);
				m->file = NULL;
			}
			m->account = wire_get32(r);
			if (m->account >= rec->naccounts) {
				snprintf(why, cap, "method %u names account %u of %u",
					 rec->nmethods - 1, m->account, rec->naccounts);
				return false;
			}
		} else if (t == A_NODE) {
			GROW(rec->nodes, rec->nnodes, capn);
			struct alc_node *n = &rec->nodes[rec->nnodes];
			n->parent = wire_get32(r);
			n->method = wire_get32(r);
			n->line = (int32_t)wire_get32(r);
			if ((n->parent != ALC_NONE && n->parent >= rec->nnodes) ||
			    n->method >= rec->nmethods) {
				snprintf(why, cap, "node %u names parent %u and method %u", rec->nnodes,
					 n->parent, n->method);
				return false;
			}
			rec->nnodes++;
		} else if (t == A_KEY) {
			GROW(rec->keys, rec->nkeys, capk);
			struct alc_key *k = &rec->keys[rec->nkeys];
			k->node = wire_get32(r);
			k->cls = wire_get32(r);
			k->account = wire_get32(r);
			k->objs = wire_get_f64(r);
			k->bytes = wire_get_f64(r);
			k->live_objs = wire_get_f64(r);
			k->live_bytes = wire_get_f64(r);
			k->elems = wire_get_f64(r);
			k->mark_objs = wire_get_f64(r);
			k->mark_bytes = wire_get_f64(r);
			if ((k->node != ALC_NONE && k->node >= rec->nnodes) || k->cls >= rec->nclasses ||
			    k->account >= rec->naccounts) {
				snprintf(why, cap, "key %u names node %u, class %u, account %u",
					 rec->nkeys, k->node, k->cls, k->account);
				return false;
			}
			double v[] = {k->objs, k->bytes, k->live_objs, k->live_bytes, k->elems,
				      k->mark_objs, k->mark_bytes};
			for (size_t j = 0; j < sizeof v / sizeof *v; j++)
				if (!isfinite(v[j]) || v[j] < 0 || v[j] > 1e19) {
					snprintf(why, cap, "key %u has a counter of %g", rec->nkeys,
						 v[j]);
					return false;
				}
			rec->nkeys++;
		} else {
			snprintf(why, cap, "record type %u at byte %zu", t,
				 wire_offset(r) - 1);
			return false;
		}
	}
	if (r->err || !status) {
		snprintf(why, cap, r->err ? "a record is cut short" : "no status record");
		return false;
	}
	return true;
}

int proto_alloc_decode(const uint8_t *p, size_t n, uint64_t records, struct alc_rec **out, char *why,
		       size_t cap)
{
	*out = NULL;
	if (n > MAX_RECORDING) {
		snprintf(why, cap, "%zu bytes of records", n);
		return HS_ERR;
	}
	struct wire_r d = wire_reader(p, n);	/* p is NULL when no DATA frame came */
	struct alc_rec *rec = xcalloc(1, sizeof *rec);
	bool ok = decode(&d, rec, why, cap);
	uint64_t got = (uint64_t)rec->naccounts - 1 + rec->nclasses + rec->nmethods + rec->nnodes +
		       rec->nkeys + 1;
	if (ok && got != records) {
		snprintf(why, cap, "%llu records announced, %llu received",
			 (unsigned long long)records, (unsigned long long)got);
		ok = false;
	}
	if (!ok) {
		alc_free(rec);
		return HS_ERR;
	}
	*out = rec;
	return HS_OK;
}

int proto_alloc_read(struct proto_conn *c, struct alc_rec **out, struct hs_error *err)
{
	*out = NULL;
	if (send_req(c, T_ALLOC_READ, NULL, err))
		return HS_ERR;
	struct wire_w all = {0};
	for (bool first = true;; first = false) {
		struct reply r;
		if (recv_reply(c, &r, first ? WALK_MS : REPLY_MS, err)) {
			wire_w_free(&all);
			return HS_ERR;
		}
		if (r.type == T_DATA) {
			if (all.len + r.len > MAX_RECORDING) {
				free(r.p);
				wire_w_free(&all);
				proto_close(c);
				seterr(err, "the agent's recording is over %zu MiB; the connection "
				       "is closed", MAX_RECORDING >> 20);
				return HS_ERR;
			}
			wire_put_bytes(&all, r.p, r.len);
			free(r.p);
			continue;
		}
		uint64_t records = wire_get64(&r.in);
		if (check_reply(c, &r, T_END, err)) {
			wire_w_free(&all);
			return HS_ERR;
		}
		char why[200] = "";
		struct alc_rec *rec = NULL;
		int st = proto_alloc_decode(all.p, all.len, records, &rec, why, sizeof why);
		wire_w_free(&all);
		if (st) {
			proto_close(c);
			seterr(err, "the agent's recording does not follow the protocol (%s); the "
			       "connection is closed", why);
			return HS_ERR;
		}
		*out = rec;
		return HS_OK;
	}
}

/*
 * call_stream: request type with payload b (freed), and its reply, which may
 * take time_ms and more (a walk): its DATA frames gathered in *all (new
 * memory; at most MAX_RESULTS bytes, what naming them in the error), then
 * its last frame in *last (HS_OK). Ctrl-C (hs_interrupted) sends CANCEL once
 * (*cancel_sent). HS_ERR with err, all freed: the request not sent, an ERROR
 * frame (the connection stays), a lost connection, too much.
 */
static int call_stream(struct proto_conn *c, uint8_t type, struct wire_w *b, uint64_t time_ms,
		       const char *what, struct wire_w *all, struct reply *last, bool *cancel_sent,
		       struct hs_error *err)
{
	*cancel_sent = false;
	int sent = send_req(c, type, b, err);
	wire_w_free(b);
	if (sent)
		return HS_ERR;
	int64_t wait_until = now_ms() + (int64_t)time_ms + WALK_MS;
	for (;;) {
		int st = wait_frame(c, last, &wait_until, cancel_sent, err);
		if (!st && last->type == T_ERROR)
			st = error_frame(last, err);
		if (!st && last->type == T_DATA && all->len + last->len > MAX_RESULTS) {
			free(last->p);
			proto_close(c);
			seterr(err, "the agent's %s are over %zu MiB; the connection is closed", what,
			       MAX_RESULTS >> 20);
			st = HS_ERR;
		}
		if (st) {
			wire_w_free(all);
			return HS_ERR;
		}
		if (last->type != T_DATA)
			return HS_OK;
		wire_put_bytes(all, last->p, last->len);
		free(last->p);
	}
}

/* ---- ALLOC_LEAKS ---- */

#define MAX_LEAK_STEPS 1024	/* the agent sends at most 256 */

void proto_leaks_free(struct proto_leaks *l)
{
	for (uint32_t i = 0; l->v && i < l->n; i++) {
		struct proto_leak *p = &l->v[i];
		free(p->root);
		for (uint32_t k = 0; k < p->nsteps; k++) {
			free(p->type[k]);
			free(p->field[k]);
		}
		free(p->type);
		free(p->field);
	}
	free(l->v);
	memset(l, 0, sizeof *l);
}

/* decode_leaks: the records of an ALLOC_LEAKS stream into out; false when malformed. */
static bool decode_leaks(const uint8_t *p, size_t n, uint64_t records, struct proto_leaks *out)
{
	struct wire_r d = wire_reader(p, n);
	if (records > n / 17)	/* a record takes at least 17 bytes */
		return false;
	out->v = xcalloc((size_t)records + 1, sizeof *out->v);
	for (uint64_t i = 0; i < records && !d.err; i++) {
		struct proto_leak *l = &out->v[out->n++];
		l->key = wire_get32(&d);
		l->age = wire_get32(&d);
		l->reached = wire_get8(&d) != 0;
		l->skipped = wire_get32(&d);
		l->root = get_str(&d);
		uint32_t ns = wire_get32(&d);
		if (ns > MAX_LEAK_STEPS || !wire_need(&d, (size_t)ns * 8))
			return false;
		l->type = xcalloc((size_t)ns + 1, sizeof *l->type);
		l->field = xcalloc((size_t)ns + 1, sizeof *l->field);
		for (; l->nsteps < ns && !d.err; l->nsteps++) {
			l->type[l->nsteps] = get_str(&d);
			l->field[l->nsteps] = get_str(&d);
		}
	}
	return wire_done(&d);
}

/* The agent's bound on a request (MAX_REQUEST in src/agent/ag.h), less its frame header. */
#define LEAKS_REQUEST_MAX ((4u << 20) - 8)

int proto_alloc_leaks(struct proto_conn *c, const uint32_t *classes, uint32_t n, uint32_t known_keys,
		      const struct att_hist_row *hist, uint32_t nhist, uint64_t time_ms, uint64_t mem,
		      struct proto_leaks *out, struct hs_error *err)
{
	memset(out, 0, sizeof *out);
	if (n > 64) {
		seterr(err, "at most 64 classes a leak search");
		return HS_ERR;
	}
	if (!has_cap(c, "leaks")) {
		seterr(err, "the agent in JVM %d is older than this heapsh and cannot find leaks "
		       "(:detach, then attach again to load this heapsh's agent)", c->pid);
		return HS_ERR;
	}
	struct wire_w b = {0};
	wire_put32(&b, n);
	for (uint32_t i = 0; i < n; i++)
		wire_put32(&b, classes[i]);
	wire_put64(&b, time_ms);
	wire_put64(&b, mem);
	wire_put32(&b, known_keys);
	if (hist && nhist && has_cap(c, "leaks-histogram")) {
		struct wire_w h = {0};
		wire_put32(&h, nhist);
		for (uint32_t i = 0; i < nhist; i++) {
			wire_put_str(&h, hist[i].name);
			wire_put64(&h, hist[i].count);
		}
		if (b.len + h.len < LEAKS_REQUEST_MAX)	/* else the agent counts */
			wire_put_bytes(&b, h.p, h.len);
		wire_w_free(&h);
	}
	struct wire_w all = {0};
	struct reply r;
	bool cancel_sent;
	if (call_stream(c, T_ALLOC_LEAKS, &b, time_ms, "leak paths", &all, &r, &cancel_sent, err))
		return HS_ERR;
	uint64_t records = wire_get64(&r.in);
	out->reached = wire_get32(&r.in);
	out->nodes = wire_get32(&r.in);
	out->cut = wire_get64(&r.in);
	out->refs = wire_get64(&r.in);
	out->prep_ms = wire_get64(&r.in);
	out->walk_ms = wire_get64(&r.in);
	uint8_t flags = wire_get8(&r.in);
	out->gcs = wire_get32(&r.in);
	out->timed_out = flags & 1;
	out->has_gcs = (flags & 4) != 0;
	out->counted = !(flags & 8);
	out->budget = wire_get64(&r.in);
	out->nskipped = wire_get32(&r.in);
	if (out->nskipped > n)
		wire_r_fail(&r.in, WIRE_BAD);
	for (uint32_t i = 0; i < out->nskipped && !r.in.err; i++) {
		out->skipped_cls[i] = wire_get32(&r.in);
		out->skipped_cost[i] = wire_get64(&r.in);
	}
	if (check_reply(c, &r, T_END, err)) {
		wire_w_free(&all);
		return HS_ERR;
	}
	bool ok = decode_leaks(all.p, all.len, records, out);
	wire_w_free(&all);
	if (!ok || out->reached > out->n) {
		proto_leaks_free(out);
		proto_close(c);
		seterr(err, "the agent's leak paths do not follow the protocol; the connection "
		       "is closed");
		return HS_ERR;
	}
	return HS_OK;
}

/* ---- ANALYZE ---- */

static void val_free(struct proto_val *v)
{
	free(v->s);
	free(v->text);
	for (uint32_t k = 0; k < v->n; k++) {
		if (v->items)
			val_free(&v->items[k]);
		if (v->names)
			free(v->names[k]);
	}
	free(v->items);
	free(v->names);
	memset(v, 0, sizeof *v);
}

/*
 * read_val: one value of an ANALYZE result into v; *budget bounds the
 * values of the whole reply (nesting and counts), which a malformed one
 * passing sets r's error.
 */
static void read_val(struct wire_r *r, uint64_t *budget, struct proto_val *v, int depth)
{
	memset(v, 0, sizeof *v);
	if (depth > 66 || !*budget) {
		wire_r_fail(r, WIRE_BAD);
		return;
	}
	(*budget)--;
	uint8_t k = wire_get8(r);
	if (r->err)
		return;
	switch (k) {
	case PV_NULL: case PV_LAMBDA: break;
	case PV_BOOL: v->b = wire_get8(r) != 0; break;
	case PV_INT: v->i = (int64_t)wire_get64(r); break;
	case PV_FLOAT: v->f = wire_get_f64(r); break;
	case PV_STR: v->s = get_str(r); break;
	case PV_OBJ:
		v->id = wire_get64(r);
		v->s = get_str(r);
		v->size = wire_get64(r);
		v->okind = wire_get8(r);
		if (wire_get8(r))
			v->text = get_str(r);
		if (v->okind > 3)
			wire_r_fail(r, WIRE_BAD);
		break;
	case PV_CLASS: case PV_LOADER: case PV_THREAD:
		v->id = wire_get64(r);
		v->s = get_str(r);
		break;
	case PV_LIST: {
		uint32_t n = wire_get32(r);
		if (r->err || n > wire_left(r)) {	/* at least a byte each */
			wire_r_fail(r, WIRE_BAD);
			break;
		}
		v->items = xcalloc((size_t)n + 1, sizeof *v->items);
		for (uint32_t j = 0; j < n && !r->err; j++, v->n++)
			read_val(r, budget, &v->items[j], depth + 1);
		break;
	}
	case PV_STRUCT: {
		uint16_t n = wire_get16(r);
		v->items = xcalloc((size_t)n + 1, sizeof *v->items);
		v->names = xcalloc((size_t)n + 1, sizeof *v->names);
		for (uint16_t j = 0; j < n && !r->err; j++, v->n++) {
			v->names[j] = get_str(r);
			read_val(r, budget, &v->items[j], depth + 1);
		}
		break;
	}
	case PV_REFKIND: v->i = wire_get8(r); break;
	default: wire_r_fail(r, WIRE_BAD); break;
	}
	v->k = (enum proto_vk)k;
}

void proto_analysis_free(struct proto_analysis *a)
{
	for (uint32_t k = 0; k < a->nresults; k++) {
		free(a->results[k].name);
		val_free(&a->results[k].v);
	}
	free(a->results);
	free(a->msg);
	memset(a, 0, sizeof *a);
}

/* decode_results: the records of the DATA frames. */
static bool decode_results(const uint8_t *p, size_t n, struct proto_analysis *a)
{
	if (!n)
		return true;	/* no DATA frame came (p may be NULL) */
	struct wire_r r = wire_reader(p, n);
	uint64_t budget = 50000000;	/* values in all */
	uint32_t cap = 0;
	while (wire_left(&r) && !r.err) {
		if (wire_get8(&r) != 1) {
			wire_r_fail(&r, WIRE_BAD);
			break;
		}
		if (a->nresults == cap) {
			cap = cap ? cap * 2 : 8;
			a->results = xreallocarray(a->results, cap, sizeof *a->results);
		}
		struct proto_result *res = &a->results[a->nresults];
		memset(res, 0, sizeof *res);
		res->stmt = wire_get16(&r);
		res->kind = wire_get8(&r);
		res->name = get_str(&r);
		read_val(&r, &budget, &res->v, 0);
		a->nresults++;
	}
	return !r.err;
}

int proto_analyze(struct proto_conn *c, const uint8_t *prog, size_t len, uint32_t time_ms,
		  uint32_t mem_mb, unsigned flags, struct proto_analysis *out, struct hs_error *err)
{
	memset(out, 0, sizeof *out);
	if (!has_cap(c, "analyze")) {
		seterr(err, "the agent in JVM %d is older than this heapsh and cannot run "
		       "queries (:detach, then attach again to load this heapsh's agent)", c->pid);
		return HS_ERR;
	}
	struct wire_w b = {0};
	wire_put32(&b, has_cap(c, "analyze-no-gc") ? flags & PROTO_ANALYZE_NO_GC : 0);
	wire_put32(&b, time_ms);
	wire_put32(&b, mem_mb);
	wire_put_bytes(&b, prog, len);
	struct wire_w all = {0};
	struct reply r;
	bool cancel_sent;
	if (call_stream(c, T_ANALYZE, &b, time_ms, "results", &all, &r, &cancel_sent, err))
		return HS_ERR;
	out->status = wire_get8(&r.in);
	out->stmt = wire_get16(&r.in);
	out->line = wire_get16(&r.in);
	out->col = wire_get16(&r.in);
	(void)wire_get8(&r.in);	/* earlier: 0 (the message says where in an earlier snippet) */
	out->msg = get_str(&r.in);
	out->walks = wire_get64(&r.in);
	out->pause_ms = wire_get64(&r.in);
	out->gc_ms = wire_get64(&r.in);
	out->total_ms = wire_get64(&r.in);
	out->objects = wire_get64(&r.in);
	out->agent_bytes = wire_get64(&r.in);
	bool bad = out->status > PROTO_ANALYSIS_CANCELLED;
	if (bad || check_reply(c, &r, T_END, err)) {
		wire_w_free(&all);
		if (bad) {
			free(r.p);	/* check_reply, which frees it, did not run */
			proto_close(c);
			seterr(err, "the agent's END does not follow the protocol; the "
			       "connection is closed");
		}
		proto_analysis_free(out);
		return HS_ERR;
	}
	bool dec = decode_results(all.p, all.len, out);
	wire_w_free(&all);
	if (!dec) {
		proto_analysis_free(out);
		proto_close(c);
		seterr(err, "the agent's results do not follow the protocol; the connection "
		       "is closed");
		return HS_ERR;
	}
	if (cancel_sent && out->status == PROTO_ANALYSIS_OK)
		hs_interrupted = 1;	/* it finished before the cancel came: still stop */
	return HS_OK;
}
