/*
 * fuzz_reply.c - libFuzzer harness for the shell's side of the agent
 * protocol (src/attach/proto.c, snapshot.c; docs/protocol.md): the readers
 * of every reply a broken or hostile agent, or a JVM dying mid-stream, can
 * send. The first input byte picks the request (INFO, HISTOGRAM, SNAPSHOT,
 * INSTANCES, ALLOC_STATUS, ALLOC_READ, ANALYZE, LEAVE, ALLOC_START with its
 * progress frames, ALLOC_LEAKS); the rest is what
 * the "agent" answers, written by a thread into one end of a socket pair
 * and then closed, while the request runs on the other end as on a real
 * connection. A SNAPSHOT that reads whole becomes an HPROF file, which is
 * then loaded (heap_load) as the shell would.
 *
 * With HEAPSH_FUZZ_SEEDS=DIR, LLVMFuzzerInitialize writes a well-formed
 * reply for each request there (the corpus's seeds) and exits.
 */
#include "fuzz.h"

#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include "../../src/alloc/alloc.h"
#include "../../src/attach/proto.h"
#include "../../src/heap/heap.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { OP_INFO, OP_HISTOGRAM, OP_SNAPSHOT, OP_INSTANCES, OP_ALLOC_STATUS, OP_ALLOC_READ,
       OP_ANALYZE, OP_LEAVE, OP_ALLOC_START, OP_ALLOC_LEAKS, NOPS };

static char dir[64];

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

/* ---- seeds: well-formed replies ---- */

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
		/* Object, String (value: byte[]), one String "hi", a root, a thread. */
		u8(&p, 1); be(&p, 1, 8); be(&p, 0, 8); be(&p, 0, 8); be(&p, 0, 4);
		str(&p, "Ljava/lang/Object;"); be(&p, 0, 2);
		u8(&p, 1); be(&p, 2, 8); be(&p, 1, 8); be(&p, 0, 8); be(&p, 0, 4);
		str(&p, "Ljava/lang/String;"); be(&p, 2, 2);
		str(&p, "value"); str(&p, "[B"); u8(&p, 0);
		str(&p, "coder"); str(&p, "B"); u8(&p, 0);
		u8(&p, 1); be(&p, 3, 8); be(&p, 1, 8); be(&p, 0, 8); be(&p, 0, 4);
		str(&p, "[B"); be(&p, 0, 2);
		u8(&p, 2); be(&p, 4, 8); be(&p, 2, 8); be(&p, 24, 8); be(&p, 0xffffffff, 4);
		u8(&p, 2); be(&p, 5, 8); be(&p, 3, 8); be(&p, 24, 8); be(&p, 2, 4);
		/* types are JVMTI's primitive types, the JNI letters ('B' for byte) */
		u8(&p, 6); be(&p, 5, 8); u8(&p, 'B'); be(&p, 2, 4); u8(&p, 'h'); u8(&p, 'i');
		u8(&p, 3); be(&p, 4, 8); u8(&p, 8); be(&p, 0, 4); be(&p, 5, 8);
		u8(&p, 5); be(&p, 4, 8); u8(&p, 8); be(&p, 1, 4); u8(&p, 'B'); be(&p, 0, 8);
		u8(&p, 4); u8(&p, 21); be(&p, 4, 8); be(&p, 0, 8); be(&p, 0xffffffff, 4);
		u8(&p, 7); be(&p, 0, 8); be(&p, 1, 4); str(&p, "main"); be(&p, 1, 4);
		str(&p, "LMain;"); str(&p, "main"); str(&p, "([Ljava/lang/String;)V");
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

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_quiet();
	signal(SIGPIPE, SIG_IGN);
	snprintf(dir, sizeof dir, "%s", fz_tmpdir("reply"));
	const char *seeds = getenv("HEAPSH_FUZZ_SEEDS");
	if (seeds) {
		for (int op = 0; op < NOPS; op++) {
			struct out o = {.n = 0};
			seed(op, &o);
			char path[4096];
			snprintf(path, sizeof path, "%s/reply-%d", seeds, op);
			FILE *f = fopen(path, "wb");
			if (!f || fwrite(o.b, 1, o.n, f) != o.n || fclose(f))
				abort();
		}
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
		snprintf(path, sizeof path, "%s/snapshot.hprof", dir);
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
		if (proto_analyze(c, prog, sizeof prog, 1000, 0, &a, &err) == HS_OK)
			proto_analysis_free(&a);
		break;
	}
	case OP_ALLOC_START: {
		struct alc_status st;
		struct proto_alloc_opts o = {true, false, PROTO_LIVE_SAMPLED, 0, 1, "shop"};
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
		fprintf(stderr, "fuzz_reply: request %d: %s\n", op, err.msg[0] ? err.msg : "ok");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	int big = 1 << 20;
	setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
	struct feed f = {sv[1], data + 1, size - 1};
	pthread_t t;
	if (pthread_create(&t, NULL, writer, &f) != 0)
		abort();
	struct proto_conn c;
	memset(&c, 0, sizeof c);
	c.fd = sv[0];
	c.pid = 4242;
	snprintf(c.agent, sizeof c.agent, "heapsh-agent 1.2");
	snprintf(c.caps, sizeof c.caps, "can_tag_objects,alloc,dump,clients,analyze,leaks,leaks-histogram");
	request(data[0] % NOPS, &c);
	if (c.fd >= 0)
		shutdown(c.fd, SHUT_RDWR);	/* the writer stops if the reader stopped early */
	pthread_join(t, NULL);
	proto_close(&c);
	close(sv[1]);
	return 0;
}
