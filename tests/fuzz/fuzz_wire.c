/*
 * fuzz_wire.c - libFuzzer harness for every reader built on the codec
 * (src/base/wire.h; docs/protocol.md): what a broken or hostile agent, or
 * a JVM dying mid-stream, can send the shell; what any local process can
 * send the agent; the query programs the agent runs; the snapshot records
 * heapsh makes an HPROF file of; and the codec itself. The first input byte
 * picks the reader (modulo 16, enum fz_wire_mode in fuzz.h):
 *
 *   0-9  the shell's side of the protocol (src/attach/proto.c, snapshot.c):
 *        a request (INFO, HISTOGRAM, SNAPSHOT, INSTANCES, ALLOC_STATUS,
 *        ALLOC_READ, ANALYZE, LEAVE, ALLOC_START with its progress frames,
 *        ALLOC_LEAKS) whose reply stream is the rest, written by a thread
 *        into one end of a socket pair and then closed, while the request
 *        runs on the other end as on a real connection. A SNAPSHOT that
 *        reads whole becomes an HPROF file, which is then loaded
 *        (heap_load) as the shell would.
 *   10   the agent's INSTANCES request and its predicate (src/agent/req.c)
 *   11   the agent's ANALYZE request: three u32 limits and a program
 *        (prog_decode, src/dsl/prog.c), decoded with the agent's bound
 *   12   the agent's ALLOC_START request and its account patterns
 *   13   the agent's start-up options as -agentpath gives them (text)
 *   14   snapshot records straight into snap_feed: a byte for the frame
 *        size they are cut into, the object count END would give (u64),
 *        the records; a stream that reads whole is written as HPROF and
 *        loaded
 *   15   the codec: a byte choosing the writer (growable, bounded, or a
 *        small buffer drained to a sink), then writes (a byte naming one,
 *        its operand); what was written must read back the same
 *
 * The agent's readers are built from its sources as in libheapsh_agent.so,
 * without a JVM. A malformed input must end in an error, never read past
 * its bytes or allocate beyond a bound (the program decoder's allocator
 * here refuses past 64 MiB, as the agent's memory limit would).
 *
 * With HEAPSH_FUZZ_SEEDS=DIR, LLVMFuzzerInitialize writes well-formed
 * inputs for every mode there (the corpus's seeds; fuzz_query adds every
 * query's program as an ANALYZE request) and exits.
 */
#include "fuzz.h"

#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include "../../src/agent/ag.h"
#include "../../src/alloc/alloc.h"
#include "../../src/attach/proto.h"
#include "../../src/attach/snapshot.h"
#include "../../src/base/wire.h"
#include "../../src/dsl/prog.h"
#include "../../src/heap/heap.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { OP_INFO, OP_HISTOGRAM, OP_SNAPSHOT, OP_INSTANCES, OP_ALLOC_STATUS, OP_ALLOC_READ,
       OP_ANALYZE, OP_LEAVE, OP_ALLOC_START, OP_ALLOC_LEAKS, NOPS };

static char tmp[64];	/* the harness's temporary folder */

_Static_assert(NOPS == FZ_WIRE_INSTANCES, "replies are modes 0 to NOPS - 1");

struct feed {
	int fd;
	const uint8_t *p;
	size_t n;
};

static void *writer(void *arg)
{
	struct feed *f = arg;
	size_t off = 0;
	while (off < f->n) {
		ssize_t k = send(f->fd, f->p + off, f->n - off, MSG_NOSIGNAL);
		if (k <= 0)
			break;	/* the reader closed: it has stopped reading */
		off += (size_t)k;
	}
	shutdown(f->fd, SHUT_WR);
	return NULL;
}

/* ---- seeds ---- */

struct out {
	uint8_t b[8192];
	size_t n;
};
static void u8(struct out *o, uint64_t v) { o->b[o->n++] = (uint8_t)v; }
static void be(struct out *o, uint64_t v, int bytes)
{
	for (int k = bytes - 1; k >= 0; k--)
		u8(o, v >> (8 * k));
}
static void str(struct out *o, const char *s)
{
	be(o, strlen(s), 4);
	memcpy(o->b + o->n, s, strlen(s));
	o->n += strlen(s);
}
/* frame: wrap p (a payload being built in its own struct out) as a frame of type t. */
static void frame(struct out *o, uint8_t t, const struct out *p)
{
	be(o, p->n + 1, 4);
	u8(o, t);
	memcpy(o->b + o->n, p->b, p->n);
	o->n += p->n;
}

static void info(struct out *o)
{
	struct out p = {.n = 0};
	str(&p, "OpenJDK 64-Bit Server VM");
	str(&p, "17.0.15");
	str(&p, "Debian");
	be(&p, 4242, 8);
	be(&p, 1 << 20, 8);
	be(&p, 2 << 20, 8);
	be(&p, 4 << 20, 8);
	be(&p, 3, 4);
	str(&p, "heapsh-agent 1.2");
	frame(o, 2, &p);
}

static void status(struct out *p)
{
	u8(p, 0x1f);
	be(p, 0, 8);
	be(p, 16, 4);
	be(p, 1700000000000ULL, 8);
	be(p, 0, 8);
	be(p, 12, 8);
	be(p, 0, 8);
	be(p, 4096, 8);
	be(p, 3, 8);
	be(p, 1700000000500ULL, 8);
	str(p, "shop");
	be(p, 2, 8);
	be(p, 0, 8);
	be(p, 0, 8);
	str(p, "shop.Main.main (Main.java lines 3, 4) on thread main\nshop.Loop.run (Loop.java line 9) on thread worker");
	be(p, 4096, 8);
	be(p, 1 << 20, 8);
}

/* snapshot_records: Object, String (value: byte[]), one String "hi", a root, a thread. */
static void snapshot_records(struct out *p)
{
	u8(p, 1); be(p, 1, 8); be(p, 0, 8); be(p, 0, 8); be(p, 0, 4);
	str(p, "Ljava/lang/Object;"); be(p, 0, 2);
	u8(p, 1); be(p, 2, 8); be(p, 1, 8); be(p, 0, 8); be(p, 0, 4);
	str(p, "Ljava/lang/String;"); be(p, 2, 2);
	str(p, "value"); str(p, "[B"); u8(p, 0);
	str(p, "coder"); str(p, "B"); u8(p, 0);
	u8(p, 1); be(p, 3, 8); be(p, 1, 8); be(p, 0, 8); be(p, 0, 4);
	str(p, "[B"); be(p, 0, 2);
	u8(p, 2); be(p, 4, 8); be(p, 2, 8); be(p, 24, 8); be(p, 0xffffffff, 4);
	u8(p, 2); be(p, 5, 8); be(p, 3, 8); be(p, 24, 8); be(p, 2, 4);
	/* types are JVMTI's primitive types, the JNI letters ('B' for byte) */
	u8(p, 6); be(p, 5, 8); u8(p, 'B'); be(p, 2, 4); u8(p, 'h'); u8(p, 'i');
	u8(p, 3); be(p, 4, 8); u8(p, 8); be(p, 0, 4); be(p, 5, 8);
	u8(p, 5); be(p, 4, 8); u8(p, 8); be(p, 1, 4); u8(p, 'B'); be(p, 0, 8);
	u8(p, 4); u8(p, 21); be(p, 4, 8); be(p, 0, 8); be(p, 0xffffffff, 4);
	u8(p, 7); be(p, 0, 8); be(p, 1, 4); str(p, "main"); be(p, 1, 4);
	str(p, "LMain;"); str(p, "main"); str(p, "([Ljava/lang/String;)V");
}

static void seed(int op, struct out *o)
{
	struct out p = {.n = 0};
	u8(o, (uint8_t)op);
	switch (op) {
	case OP_INFO:
		info(o);
		break;
	case OP_HISTOGRAM:
		be(&p, 2, 4);
		str(&p, "Ljava/lang/String;");
		be(&p, 10, 8);
		be(&p, 240, 8);
		str(&p, "[I");
		be(&p, 3, 8);
		be(&p, 96, 8);
		frame(o, 3, &p);
		break;
	case OP_SNAPSHOT:
		info(o);
		snapshot_records(&p);
		frame(o, 0x40, &p);
		p.n = 0;
		be(&p, 2, 8);
		be(&p, 10, 8);
		frame(o, 0x41, &p);
		break;
	case OP_INSTANCES:
		be(&p, 3, 8);
		be(&p, 1, 8);
		be(&p, 1, 4);
		str(&p, "Lshop/Order;");
		be(&p, 3, 2);
		str(&p, "status"); u8(&p, 'I'); be(&p, 7, 8);
		str(&p, "name"); u8(&p, 'T'); str(&p, "alpha");
		str(&p, "next"); u8(&p, 'L'); str(&p, "Lshop/Order;");
		frame(o, 5, &p);
		break;
	case OP_ALLOC_STATUS:
		status(&p);
		frame(o, 9, &p);
		break;
	case OP_ALLOC_READ:
		u8(&p, 1); status(&p);
		u8(&p, 2); str(&p, "shop");
		u8(&p, 3); str(&p, "Lshop/Order;");
		u8(&p, 4); str(&p, "Lshop/Server;"); str(&p, "handle"); str(&p, "()V");
		str(&p, "Server.java"); be(&p, 1, 4);
		u8(&p, 5); be(&p, 0xffffffff, 4); be(&p, 0, 4); be(&p, 42, 4);
		u8(&p, 6); be(&p, 0, 4); be(&p, 0, 4); be(&p, 1, 4);
		for (int k = 0; k < 7; k++) {
			double v = 10.0 * (k + 1);
			uint64_t bits;
			memcpy(&bits, &v, 8);
			be(&p, bits, 8);
		}
		frame(o, 0x40, &p);
		p.n = 0;
		be(&p, 6, 8);
		frame(o, 0x41, &p);
		break;
	case OP_ANALYZE:
		/* one result: a list of an int, a string and an object with text */
		u8(&p, 1); be(&p, 0, 2); u8(&p, 0); str(&p, "");
		u8(&p, 9); be(&p, 3, 4);
		u8(&p, 2); be(&p, 7, 8);
		u8(&p, 4); str(&p, "seven");
		u8(&p, 5); be(&p, 0x7000, 8); str(&p, "java.lang.String"); be(&p, 24, 8);
		u8(&p, 0); u8(&p, 1); str(&p, "alpha");
		frame(o, 0x40, &p);
		p.n = 0;
		u8(&p, 0); be(&p, 0, 2); be(&p, 0, 2); be(&p, 0, 2); u8(&p, 0); str(&p, "");
		for (int k = 0; k < 6; k++)
			be(&p, (uint64_t)k, 8);
		frame(o, 0x41, &p);
		break;
	case OP_LEAVE:
		u8(&p, 2);
		be(&p, 777, 4);
		frame(o, 0x0f, &p);
		break;
	case OP_ALLOC_START:
		be(&p, 100, 4);
		be(&p, 250, 4);
		frame(o, 0x40, &p);
		p.n = 0;
		be(&p, 250, 4);
		be(&p, 250, 4);
		frame(o, 0x40, &p);
		p.n = 0;
		status(&p);
		frame(o, 7, &p);
		break;
	case OP_ALLOC_LEAKS:
		be(&p, 0, 4); be(&p, 3, 4); u8(&p, 1); be(&p, 0, 4); str(&p, "static field");
		be(&p, 2, 4);
		str(&p, "class shop.Server"); str(&p, "CACHE");
		str(&p, "Ljava/util/HashMap;"); str(&p, "table");
		frame(o, 0x40, &p);
		p.n = 0;
		be(&p, 1, 8); be(&p, 1, 4); be(&p, 10, 4); be(&p, 0, 8); be(&p, 100, 8);
		be(&p, 1, 8); be(&p, 2, 8); u8(&p, 4); be(&p, 5, 4); be(&p, 100000, 8);
		be(&p, 1, 4); be(&p, 1, 4); be(&p, 77, 8);
		frame(o, 0x41, &p);
		break;
	}
}

static void cmp(struct out *s, const char *field, int op, int kind, uint64_t bits,
		const char *text)
{
	u8(s, P_CMP);
	str(s, field);
	u8(s, (uint64_t)op);
	u8(s, (uint64_t)kind);
	if (kind == K_LONG || kind == K_DOUBLE)
		be(s, bits, 8);
	else if (kind == K_BOOL)
		u8(s, bits);
	else if (kind == K_STRING)
		str(s, text);
}

/* instances: an INSTANCES request as heapsh sends it (src/attach/proto.c): k picks the predicate. */
static void instances(int k, struct out *s)
{
	u8(s, FZ_WIRE_INSTANCES);
	str(s, k == 3 ? "com.shop.Order" : "Order");
	u8(s, (uint64_t)(k & 3));
	be(s, 100, 4);
	if (k == 0) {
		u8(s, P_TRUE);
	} else if (k == 1) {
		cmp(s, "status", 0, K_LONG, 7, NULL);
	} else if (k == 2) {	/* status = 7 and not (name = "x" or amount < 2.5 or flag) */
		u8(s, P_AND);
		u8(s, 2);
		cmp(s, "status", 0, K_LONG, 7, NULL);
		u8(s, P_NOT);
		u8(s, P_OR);
		u8(s, 3);
		cmp(s, "name", 0, K_STRING, 0, "x");
		double d = 2.5;
		uint64_t bits;
		memcpy(&bits, &d, 8);
		cmp(s, "amount", 2, K_DOUBLE, bits, NULL);
		cmp(s, "flag", 0, K_BOOL, 1, NULL);
	} else {
		cmp(s, "next", 0, K_NULL, 0, NULL);
	}
}

/* codec: writes of every kind (mode 15), into the writer config picks. */
static void codec(uint8_t config, struct out *s)
{
	u8(s, FZ_WIRE_CODEC);
	u8(s, config);
	for (int k = 0; k < 8; k++) {
		u8(s, (uint64_t)k);
		if (k < 4) {
			be(s, 0x0102030405060708ULL, 1 << k);
		} else if (k == 4) {
			be(s, 0x400921fb54442d18ULL, 8);	/* pi */
		} else {
			u8(s, 5);
			memcpy(s->b + s->n, "Order", 5);
			s->n += 5;
		}
	}
}

static void save(const char *dir, const char *name, const struct out *o)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(o->b, 1, o->n, f) != o->n || fclose(f))
		abort();
}

/* seeds: well-formed inputs of every mode into dir. */
static void seeds(const char *dir)
{
	char name[64];
	for (int op = 0; op < NOPS; op++) {
		struct out o = {.n = 0};
		seed(op, &o);
		snprintf(name, sizeof name, "reply-%d", op);
		save(dir, name, &o);
	}
	for (int k = 0; k < 4; k++) {
		struct out o = {.n = 0};
		instances(k, &o);
		snprintf(name, sizeof name, "instances-%d", k);
		save(dir, name, &o);
	}
	static const char *const accounts[] = {"", "com.shop", "com.shop.*,org.example.xml",
					       "a.b.c.*,x,y.z"};
	for (int k = 0; k < 4; k++) {
		struct out o = {.n = 0};
		u8(&o, FZ_WIRE_ALLOC_START);
		u8(&o, (uint64_t)(k & 3));
		be(&o, 512 * 1024, 8);
		be(&o, 64, 4);
		str(&o, accounts[k]);
		snprintf(name, sizeof name, "alloc-start-%d", k);
		save(dir, name, &o);
	}
	static const char *const options[] = {"alloc=exact,accounts=com.shop;org.*,depth=32,live=all",
					      "alloc=512k,via=jvmti", "port=1,alloc=1g,depth=1024"};
	for (int k = 0; k < 3; k++) {
		struct out o = {.n = 0};
		u8(&o, FZ_WIRE_OPTIONS);
		memcpy(o.b + o.n, options[k], strlen(options[k]));
		o.n += strlen(options[k]);
		snprintf(name, sizeof name, "options-%d", k);
		save(dir, name, &o);
	}
	for (int k = 0; k < 3; k++) {	/* frames of 1 byte, 64 and 16 KiB */
		struct out o = {.n = 0};
		u8(&o, FZ_WIRE_SNAPSHOT);
		u8(&o, k == 0 ? 0 : k == 1 ? 63 : 255);
		be(&o, 2, 8);
		snapshot_records(&o);
		snprintf(name, sizeof name, "snapshot-%d", k);
		save(dir, name, &o);
	}
	static const uint8_t configs[] = {0, 1, 7, 20, 255};	/* growable, sinks, bounded */
	for (size_t k = 0; k < sizeof configs; k++) {
		struct out o = {.n = 0};
		codec(configs[k], &o);
		snprintf(name, sizeof name, "codec-%zu", k);
		save(dir, name, &o);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_quiet();
	signal(SIGPIPE, SIG_IGN);
	snprintf(tmp, sizeof tmp, "%s", fz_tmpdir("wire"));
	const char *dir = getenv("HEAPSH_FUZZ_SEEDS");
	if (dir) {
		seeds(dir);
		exit(0);
	}
	return 0;
}

static void request(int op, struct proto_conn *c)
{
	struct hs_error err;
	hs_error_clear(&err);
	switch (op) {
	case OP_INFO: {
		struct proto_info in;
		proto_info(c, &in, &err);
		break;
	}
	case OP_HISTOGRAM: {
		struct att_hist_row *rows = NULL;
		uint32_t n = 0;
		if (proto_histogram(c, false, &rows, &n, &err) == HS_OK)
			att_hist_free(rows, n);
		break;
	}
	case OP_SNAPSHOT: {
		char path[128];
		snprintf(path, sizeof path, "%s/snapshot.hprof", tmp);
		if (proto_snapshot(c, path, NULL, NULL, NULL, &err) == HS_OK) {
			struct heap *h;
			if (heap_load(path, NULL, &h, &err) == HS_OK)
				heap_free(h);
		}
		unlink(path);
		break;
	}
	case OP_INSTANCES: {
		struct proto_pred pred;
		memset(&pred, 0, sizeof pred);
		pred.op = PROTO_TRUE;
		struct proto_instances r;
		if (proto_instances(c, "shop.Order", true, PROTO_WALK_HEAP, false, 100, &pred, &r,
				    &err) == HS_OK)
			proto_instances_free(&r);
		break;
	}
	case OP_ALLOC_STATUS: {
		struct alc_status st;
		memset(&st, 0, sizeof st);
		if (proto_alloc_control(c, PROTO_ALLOC_STATUS, &st, &err) == HS_OK)
			alc_status_free(&st);
		break;
	}
	case OP_ALLOC_READ: {
		struct alc_rec *rec = NULL;
		if (proto_alloc_read(c, &rec, &err) == HS_OK)
			alc_free(rec);
		break;
	}
	case OP_ANALYZE: {
		static const uint8_t prog[] = {0};
		struct proto_analysis a;
		if (proto_analyze(c, prog, sizeof prog, 1000, 0, 0, &a, &err) == HS_OK)
			proto_analysis_free(&a);
		break;
	}
	case OP_ALLOC_START: {
		struct alc_status st;
		struct alc_opts o = {true, false, ALC_LIVE_SAMPLED, 0, 1, "shop"};
		if (proto_alloc_start(c, &o, NULL, NULL, &st, &err) == HS_OK)
			alc_status_free(&st);
		break;
	}
	case OP_ALLOC_LEAKS: {
		static const uint32_t classes[] = {0, 1};
		static char b[] = "byte[]", shop[] = "Shop";
		const struct att_hist_row hist[] = {{b, 10, 160}, {shop, 2, 32}};
		struct proto_leaks l;
		if (proto_alloc_leaks(c, classes, 2, 10, hist, 2, 1000, 1 << 20, &l, &err) == HS_OK)
			proto_leaks_free(&l);
		break;
	}
	case OP_LEAVE: {
		int outcome, other;
		err.msg[0] = 0;
		proto_leave(c, false, &outcome, &other, &err);
		break;
	}
	}
	if (getenv("HEAPSH_FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz_wire: request %d: %s\n", op, err.msg[0] ? err.msg : "ok");
}

/* reply: request op on a connection whose agent sends p[0..n) and closes. */
static void reply(int op, const uint8_t *p, size_t n)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	int big = 1 << 20;
	setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
	struct feed f = {sv[1], p, n};
	pthread_t t;
	if (pthread_create(&t, NULL, writer, &f) != 0)
		abort();
	struct proto_conn c;
	memset(&c, 0, sizeof c);
	c.fd = sv[0];
	c.pid = 4242;
	snprintf(c.agent, sizeof c.agent, "heapsh-agent 1.2");
	snprintf(c.caps, sizeof c.caps, "can_tag_objects,alloc,dump,clients,analyze,leaks,leaks-histogram");
	request(op, &c);
	if (c.fd >= 0)
		shutdown(c.fd, SHUT_RDWR);	/* the writer stops if the reader stopped early */
	pthread_join(t, NULL);
	proto_close(&c);
	close(sv[1]);
}

/* ---- the agent's readers (as ag_do_instances, ag_analyze_request, ag_alloc_request) ---- */

struct pool {
	void **blocks;
	size_t n, cap, bytes;
};

/* The agent's prog_alloc: zeroed memory, NULL past the bound. */
static void *pool_alloc(void *ctx, size_t n)
{
	struct pool *p = ctx;
	if (n > (64u << 20) - p->bytes)
		return NULL;
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 64;
		p->blocks = realloc(p->blocks, p->cap * sizeof *p->blocks);
		if (!p->blocks)
			abort();
	}
	void *b = calloc(1, n ? n : 1);
	if (!b)
		abort();
	p->bytes += n;
	return p->blocks[p->n++] = b;
}

static void pool_free(struct pool *p)
{
	for (size_t k = 0; k < p->n; k++)
		free(p->blocks[k]);
	free(p->blocks);
}

/* Walk a predicate as the agent's evaluation would, touching every node. */
static size_t pred_walk(const struct pnode *p)
{
	size_t k = 1 + (p->field ? strlen(p->field) : 0) + (p->text ? strlen(p->text) : 0);
	for (int i = 0; i < p->n; i++)
		k += pred_walk(p->kid[i]);
	return k;
}

static void agent_request(int mode, const uint8_t *p, size_t n)
{
	if (n > MAX_REQUEST)
		return;	/* the agent refuses longer frames before reading them */
	struct wire_r r = wire_reader(p, n);
	char why[512];
	if (mode == FZ_WIRE_ALLOC_START) {
		/* u8 flags, u64 interval, u32 depth, str accounts */
		(void)wire_get8(&r);
		(void)wire_get64(&r);
		(void)wire_get32(&r);
		char *acc = wire_get_strdup(&r, MAX_REQUEST);
		struct pattern pat[MAX_PATTERNS];
		int np = 0;
		if (wire_done(&r) && ag_parse_patterns(acc, ',', pat, &np, why, sizeof why))
			ag_drop_patterns(pat, np);
		free(acc);
	} else if (mode == FZ_WIRE_OPTIONS) {
		/* "alloc=512k,depth=64,accounts=a.b;c.*,via=jvmti" (ag_alloc_options) */
		char *opts = fz_text(p, n);
		static const char *const keys[] = {"alloc", "depth", "accounts", "via"};
		for (size_t k = 0; k < 4; k++) {
			char *v = ag_option(opts, keys[k]);
			uint64_t u;
			struct pattern pat[MAX_PATTERNS];
			int np = 0;
			if (v && k < 2)
				(void)ag_parse_u64(v, &u);
			else if (v && k == 2 && ag_parse_patterns(v, ';', pat, &np, why, sizeof why))
				ag_drop_patterns(pat, np);
			free(v);
		}
		free(opts);
	} else if (mode == FZ_WIRE_ANALYZE) {
		/* u32 flags, u32 time limit (ms), u32 memory limit (MiB), program */
		(void)wire_get32(&r);
		(void)wire_get32(&r);
		(void)wire_get32(&r);
		if (r.err)
			return;
		struct pool pool = {0};
		struct prog prog;
		prog_decode(r.p, wire_left(&r), pool_alloc, &pool, &prog, why, sizeof why);
		pool_free(&pool);
	} else {
		/* INSTANCES: str class, u8 flags, u32 limit, predicate */
		char *cname = wire_get_strdup(&r, MAX_REQUEST);
		(void)wire_get8(&r);
		(void)wire_get32(&r);
		int budget = 256;
		struct pnode *pred = cname ? ag_pred_read(&r, 0, &budget) : NULL;
		volatile size_t k = pred && !r.err ? pred_walk(pred) : 0;
		(void)k;
		ag_pred_free(pred);
		free(cname);
	}
}

/* ---- snapshot records, without a connection ---- */

/* snapshot: p[0] the frame size (1 + 64 p[0] bytes), p[1..9) the object count, then records. */
static void snapshot(const uint8_t *p, size_t n)
{
	if (n < 9)
		return;
	size_t cut = 1 + (size_t)p[0] * 64;
	uint64_t objects = wire_load64(p + 1);
	p += 9;
	n -= 9;
	struct snap_builder *b = snap_new();
	snap_heap_bound(b, 1 << 20);	/* a small JVM: arrays of zeros stay small */
	struct hs_error err;
	hs_error_clear(&err);
	int st = HS_OK;
	for (size_t off = 0; off < n && st == HS_OK; off += cut)
		st = snap_feed(b, p + off, n - off < cut ? n - off : cut, &err);
	char path[128];
	snprintf(path, sizeof path, "%s/records.hprof", tmp);
	hs_error_clear(&err);
	if (st == HS_OK && snap_write_hprof(b, path, objects, &err) == HS_OK) {
		struct heap *h;
		if (heap_load(path, NULL, &h, &err) == HS_OK)
			heap_free(h);
	}
	unlink(path);
	snap_free(b);
	if (getenv("HEAPSH_FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz_wire: records in frames of %zu: %s\n", cut,
			err.msg[0] ? err.msg : "ok");
}

/* ---- the codec: what is written reads back ---- */

struct sunk {
	uint8_t *p;
	size_t n, cap;
};

static bool to_sunk(void *ctx, const void *p, size_t n)
{
	struct sunk *k = ctx;
	if (k->n + n > k->cap) {
		k->cap = (k->n + n) * 2;
		k->p = realloc(k->p, k->cap);
		if (!k->p)
			abort();
	}
	memcpy(k->p + k->n, p, n);
	k->n += n;
	return true;
}

/* One write of the script: kind (0-2 u8..u32, 3 u64, 4 f64, 5 str, 6 str16, 7 bytes). */
struct wop {
	uint8_t kind;
	uint64_t v;
	const uint8_t *s;	/* into the input */
	size_t len;
};

/*
 * codec: p[0] picks the writer (bit 0: a sink behind a buffer of 64 +
 * p[0] / 2 bytes; else a bound of p[0] / 2 * 8 bytes, 0 none), then a
 * script of writes, read with the codec's reader. The writes before the
 * first error must read back exactly, and with no error every byte.
 */
static void codec_check(const uint8_t *p, size_t n)
{
	if (n < 1)
		return;
	struct wire_w w = {0};
	struct sunk sunk = {NULL, 0, 0};
	bool sink = p[0] & 1;
	if (sink && !wire_w_sink(&w, 64 + (size_t)(p[0] >> 1), to_sunk, &sunk))
		abort();
	if (!sink)
		w.max = (size_t)(p[0] >> 1) * 8;
	struct wop *ops = calloc(n + 1, sizeof *ops);
	if (!ops)
		abort();
	size_t nops = 0, done = SIZE_MAX;
	struct wire_r in = wire_reader(p + 1, n - 1);
	char text[256];
	while (wire_left(&in)) {
		struct wop o = {wire_get8(&in) % 8, 0, NULL, 0};
		double d;
		switch (o.kind) {
		case 0: o.v = wire_get8(&in); wire_put8(&w, (uint8_t)o.v); break;
		case 1: o.v = wire_get16(&in); wire_put16(&w, (uint16_t)o.v); break;
		case 2: o.v = wire_get32(&in); wire_put32(&w, (uint32_t)o.v); break;
		case 3: o.v = wire_get64(&in); wire_put64(&w, o.v); break;
		case 4:
			o.v = wire_get64(&in);
			memcpy(&d, &o.v, sizeof d);
			wire_put_f64(&w, d);
			break;
		default:
			o.len = wire_get8(&in);
			o.s = wire_get_bytes(&in, o.len);
			if (!o.s) {
				o.s = (const uint8_t *)"";
				o.len = 0;
			}
			if (o.kind == 5) {	/* a C string: up to a NUL */
				memcpy(text, o.s, o.len);
				text[o.len] = 0;
				o.len = strlen(text);
				wire_put_str(&w, text);
			} else if (o.kind == 6) {
				wire_put_str16(&w, (const char *)o.s, o.len);
			} else {
				wire_put_bytes(&w, o.s, o.len);
			}
			break;
		}
		ops[nops++] = o;
		if (w.err && done == SIZE_MAX)
			done = nops - 1;
		if (in.err)
			break;	/* the script's last write was cut: written with what was there */
	}
	if (done == SIZE_MAX)
		done = nops;
	/* Only a bound can stop these writes: no string is over 255 bytes, the sink takes all. */
	if ((w.err && (sink || !w.max || w.err != WIRE_LIMIT)) || (w.max && w.len > w.max))
		abort();
	const uint8_t *bytes = w.p;
	size_t nbytes = w.len;
	if (sink) {
		if (!wire_w_drain(&w) || w.len)
			abort();
		bytes = sunk.p;
		nbytes = sunk.n;
	}
	if (wire_w_pos(&w) != (sink ? sunk.n : w.len))
		abort();
	struct wire_r r = wire_reader(bytes, nbytes);
	for (size_t k = 0; k < done; k++) {
		const struct wop *o = &ops[k];
		uint64_t v = 0;
		size_t len = 0;
		const void *s = NULL;
		char *copy = NULL;
		double d;
		switch (o->kind) {
		case 0: v = wire_get8(&r); break;
		case 1: v = wire_get16(&r); break;
		case 2: v = wire_get32(&r); break;
		case 3: v = wire_get64(&r); break;
		case 4:
			d = wire_get_f64(&r);
			memcpy(&v, &d, sizeof v);
			break;
		case 5:
			if (k & 1) {	/* both ways of reading a u32-length string */
				s = copy = wire_get_strdup(&r, 255);
				len = copy ? strlen(copy) : 0;
			} else {
				s = wire_get_str(&r, &len);
			}
			break;
		case 6: s = wire_get_str16(&r, &len); break;
		default:
			s = wire_get_bytes(&r, o->len);
			len = o->len;
			break;
		}
		bool same = o->kind < 5 ? v == o->v
			    : s && len == o->len && (!len || !memcmp(s, o->s, len));
		free(copy);
		if (!same || r.err)
			abort();
	}
	if (!w.err && !wire_done(&r))
		abort();
	free(ops);
	free(sunk.p);
	wire_w_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int mode = data[0] % FZ_WIRE_MODES;
	if (mode < NOPS)
		reply(mode, data + 1, size - 1);
	else if (mode == FZ_WIRE_SNAPSHOT)
		snapshot(data + 1, size - 1);
	else if (mode == FZ_WIRE_CODEC)
		codec_check(data + 1, size - 1);
	else
		agent_request(mode, data + 1, size - 1);
	return 0;
}
