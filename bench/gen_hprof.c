/*
 * gen_hprof.c - a synthetic Java heap dump of any size, written as HPROF.
 *
 *   gen_hprof OUT.hprof --size 4G [--seed N] [--ids 8|4] [--classes N]
 *             [--segment BYTES] [--manifest FILE.csv]
 *
 * Writes a dump in the layout HotSpot's heapDumper.cpp writes (JDK 17):
 * the "JAVA PROFILE 1.0.2" header, UTF8 and LOAD CLASS records, STACK FRAME
 * and STACK TRACE records, then HEAP DUMP SEGMENT records (each at most
 * --segment bytes, default 1 GiB) holding the CLASS DUMPs, the objects and
 * the GC roots, and HEAP DUMP END. Record layouts: the HPROF manual
 * (hprof_b_spec.h in the JDK 6 demo sources) and tests/unit/hprof_writer.h.
 *
 * Nothing of the heap is kept in memory: objects are written as they are
 * made up. Object k (a global counter) has the id of an address,
 * obj_id(k): 8-byte aligned, increasing in k, with small jitter and a gap
 * every 16 Ki objects, so a reference needs only the target's k. The
 * choices come from one xorshift64* generator, so a seed gives the same
 * file byte for byte.
 *
 * The heap is a few JDK classes (Object, String with compact strings,
 * Class, ClassLoader, Thread, HashMap and HashMap$Node, ArrayList,
 * LinkedList and LinkedList$Node, byte[] int[] long[] Object[]
 * HashMap$Node[]) and --classes application classes app.pkgN.ClassM of 1 to
 * 8 fields of mixed types, and then "modules" until the size is reached.
 * Each module is a HashMap of String -> structure (HashMaps of String ->
 * application objects, ArrayLists, small object trees, rings of objects,
 * now and then a LinkedList thousands of nodes long), with Strings of
 * repeated texts (some sharing one byte[]), references to objects made
 * earlier (shared subgraphs), and some structures nothing refers to
 * (garbage). Module tops are kept by Object[] registries in static fields
 * of application classes (the classes are reachable from their class loader,
 * kept by ClassLoader.scl, a sticky class), by JNI globals and by Java
 * frames of four threads.
 *
 * A summary goes to stderr; --manifest writes per class the instances and
 * shallow bytes (as heapsh counts them: header of two ids, references of
 * an id, no compressed oops; docs/heap-model.md) as CSV. Its JDK classes
 * carry none of the fields that name a JDK (Class.module, classData), so
 * heapsh sizes them by VisualVM's rule, not by a JDK's layout.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* HPROF tags and basic types (the manual; src/hprof/hprof.h). */
enum {
	UTF8 = 0x01, LOAD_CLASS = 0x02, FRAME = 0x04, TRACE = 0x05,
	HEAP_DUMP_SEGMENT = 0x1C, HEAP_DUMP_END = 0x2C
};
enum {
	ROOT_JNI_GLOBAL = 0x01, ROOT_JAVA_FRAME = 0x03, ROOT_STICKY_CLASS = 0x05,
	ROOT_THREAD_OBJ = 0x08, CLASS_DUMP = 0x20, INSTANCE_DUMP = 0x21,
	OBJ_ARRAY_DUMP = 0x22, PRIM_ARRAY_DUMP = 0x23
};
enum { T_OBJ = 2, T_BOOL = 4, T_CHAR = 5, T_FLOAT = 6, T_DOUBLE = 7, T_BYTE = 8,
       T_SHORT = 9, T_INT = 10, T_LONG = 11 };

/* The JDK classes, in CLASS DUMP order; application classes follow. */
enum {
	C_OBJECT, C_STRING, C_CLASS, C_LOADER, C_APPLOADER, C_THREAD, C_ABSMAP, C_HASHMAP,
	C_HMNODE, C_ABSLIST, C_ARRAYLIST, C_LINKEDLIST, C_LLNODE, C_BYTES, C_INTS, C_LONGS,
	C_OBJS, C_NODES, N_JDK
};

#define MAX_FIELDS 8		/* own instance fields of a class */
#define MAX_ALL 16		/* with the superclass's */
#define NTHREADS 4
#define RING 4096		/* objects remembered for sharing */
#define VOCAB 4096		/* texts that repeat */
#define OUTBUF (8u << 20)

struct field {
	uint64_t name;		/* UTF8 id */
	uint8_t type;
};

struct cls {
	char *name;		/* JVM form: "java/lang/String", "[B" */
	uint64_t name_sid;
	int super;		/* class index, -1 for none */
	uint8_t elem;		/* arrays: element type */
	uint8_t nf;
	struct field f[MAX_FIELDS];
	uint8_t nall;		/* flattened: own fields, then the superclass's */
	uint8_t all[MAX_ALL];	/* their types */
	uint32_t vbytes;	/* bytes of an instance's values (CLASS DUMP instance size) */
	uint32_t shallow;	/* heapsh's shallow size of an instance */
	int registry;		/* index of the registry in static REGISTRY, or -1 */
	uint64_t count, bytes;	/* written: instances, shallow bytes */
};

struct gen {
	/* output */
	FILE *f;
	const char *path;
	uint8_t *buf;
	size_t len;
	uint64_t flushed;	/* file bytes before buf */
	uint64_t seg_len_at;	/* file offset of the open segment's length, 0: none */
	uint64_t seg_len, seg_max;
	uint64_t nsegs;
	int ids;
	/* id spaces */
	uint64_t sid_next, obj_base, class_base, frame_base;
	uint64_t next_k;	/* objects made so far */
	/* model */
	struct cls *c;
	int ncls, napp, nreg;
	int *ref_classes;	/* application classes with an own reference field */
	int nref_classes;
	uint64_t rng;
	uint64_t ring[RING];
	unsigned ring_n, ring_at;
	int garbage;		/* making garbage: remember nothing for sharing */
	uint64_t vocab_bytes[VOCAB];	/* k of the last byte[] of each repeated text, or 0 */
	uint64_t string_serial;
	/* counts */
	uint64_t ninst, nobjarr, nprimarr, nrefs, nroots;
};

static void die(struct gen *g, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "gen_hprof: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	if (g && g->f) {
		fclose(g->f);
		unlink(g->path);	/* a cut 30 GB file only takes the disk */
	}
	exit(1);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die(NULL, "out of memory (%zu bytes)", n);
	return p;
}

/* ------------------------------------------------------------ randomness */

static uint64_t rnd(struct gen *g)
{
	/* xorshift64* (Vigna, "An experimental exploration of Marsaglia's
	 * xorshift generators, scrambled", 2016) */
	g->rng ^= g->rng >> 12;
	g->rng ^= g->rng << 25;
	g->rng ^= g->rng >> 27;
	return g->rng * 0x2545F4914F6CDD1DULL;
}

static uint32_t below(struct gen *g, uint32_t n)
{
	return (uint32_t)(((rnd(g) >> 32) * n) >> 32);
}

/* Heavy-tailed sizes: mostly small, now and then up to max. */
static uint32_t tail_size(struct gen *g, uint32_t small, uint32_t max)
{
	uint32_t n = 1 + below(g, small);
	if (below(g, 5) == 0)
		n *= 1 + below(g, 32);
	if (below(g, 50) == 0)
		n = 500 + below(g, max);
	return n;
}

/* ------------------------------------------------------------ the writer */

static void flush(struct gen *g)
{
	if (g->len && fwrite(g->buf, 1, g->len, g->f) != g->len)
		die(g, "%s: write failed: %s", g->path, strerror(errno));
	g->flushed += g->len;
	g->len = 0;
}

static uint64_t offset(const struct gen *g)
{
	return g->flushed + g->len;
}

static uint8_t *reserve(struct gen *g, size_t n)
{
	if (OUTBUF - g->len < n) {
		flush(g);
		if (n > OUTBUF)
			die(g, "a record of %zu bytes is larger than the buffer", n);
	}
	uint8_t *p = g->buf + g->len;
	g->len += n;
	return p;
}

static inline uint8_t *be1(uint8_t *p, uint64_t v)
{
	p[0] = (uint8_t)v;
	return p + 1;
}

static inline uint8_t *be2(uint8_t *p, uint64_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return p + 2;
}

static inline uint8_t *be4(uint8_t *p, uint64_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

static inline uint8_t *be8(uint8_t *p, uint64_t v)
{
	return be4(be4(p, v >> 32), v);
}

static inline uint8_t *beid(const struct gen *g, uint8_t *p, uint64_t v)
{
	return g->ids == 8 ? be8(p, v) : be4(p, v);
}

static int type_size(const struct gen *g, uint8_t t)
{
	switch (t) {
	case T_OBJ: return g->ids;
	case T_BOOL: case T_BYTE: return 1;
	case T_CHAR: case T_SHORT: return 2;
	case T_FLOAT: case T_INT: return 4;
	default: return 8;
	}
}

/* A top-level record's header: u1 tag, u4 microseconds, u4 body length. */
static uint8_t *record(struct gen *g, uint8_t tag, size_t body)
{
	if (g->seg_len_at)
		die(g, "internal: record inside a segment");
	uint8_t *p = reserve(g, 9 + body);
	p = be1(p, tag);
	p = be4(p, 0);
	return be4(p, body);
}

static void seg_end(struct gen *g)
{
	if (!g->seg_len_at)
		return;
	uint8_t b[4];
	be4(b, g->seg_len);
	if (g->seg_len_at >= g->flushed) {
		memcpy(g->buf + (g->seg_len_at - g->flushed), b, 4);
	} else {	/* the length went out already: patch the file */
		if (fflush(g->f) || pwrite(fileno(g->f), b, 4, (off_t)g->seg_len_at) != 4)
			die(g, "%s: cannot patch a segment length (the output must be a "
			    "regular file): %s", g->path, strerror(errno));
	}
	g->seg_len_at = 0;
}

/* A heap dump sub-record of n bytes, in the open segment or a new one. */
static uint8_t *sub(struct gen *g, size_t n)
{
	if (!g->seg_len_at || g->seg_len + n > g->seg_max) {
		seg_end(g);
		uint8_t *p = reserve(g, 9);
		p = be1(p, HEAP_DUMP_SEGMENT);
		p = be4(p, 0);
		g->seg_len_at = offset(g) - 4;
		g->seg_len = 0;
		g->nsegs++;
	}
	g->seg_len += n;
	return reserve(g, n);
}

static uint64_t utf8(struct gen *g, const char *text)
{
	uint64_t sid = g->sid_next;
	g->sid_next += 8;
	size_t n = strlen(text);
	uint8_t *p = record(g, UTF8, (size_t)g->ids + n);
	p = beid(g, p, sid);
	memcpy(p, text, n);
	return sid;
}

/* ------------------------------------------------------------ ids */

/* Object k's id: an address, 8-byte aligned and increasing in k. */
static uint64_t obj_id(const struct gen *g, uint64_t k)
{
	uint64_t jitter = (k * 0x9E3779B97F4A7C15ULL) >> 62;	/* 0..3 */
	if (g->ids == 4)
		return g->obj_base + 8 * (k + (k >> 16));
	return g->obj_base + 8 * (5 * k + jitter + 64 * (k >> 14));
}

static uint64_t class_id(const struct gen *g, int c)
{
	return g->class_base + 128 * (uint64_t)c;
}

static uint64_t alloc_k(struct gen *g, uint64_t n)
{
	uint64_t k = g->next_k;
	g->next_k += n;
	if (g->ids == 4 && obj_id(g, g->next_k) > UINT32_MAX)
		die(g, "more objects than 4-byte ids can address; use --ids 8");
	return k;
}

/* ------------------------------------------------------------ objects */

static uint64_t align8(uint64_t n)
{
	return (n + 7) & ~7ULL;
}

static uint64_t array_shallow(const struct gen *g, int es, uint64_t n)
{
	return align8(2 * (uint64_t)g->ids + 4 + (uint64_t)es * n);
}

/* An INSTANCE DUMP of class c; v holds the values in the flattened order. */
static void put_instance(struct gen *g, uint64_t k, int c, const uint64_t *v)
{
	struct cls *cl = &g->c[c];
	size_t n = 1 + 2 * (size_t)g->ids + 8 + cl->vbytes;
	uint8_t *p = sub(g, n);
	p = be1(p, INSTANCE_DUMP);
	p = beid(g, p, obj_id(g, k));
	p = be4(p, 1);		/* stack trace serial: HotSpot's dummy trace */
	p = beid(g, p, class_id(g, c));
	p = be4(p, cl->vbytes);
	for (unsigned i = 0; i < cl->nall; i++) {
		switch (cl->all[i]) {
		case T_OBJ:
			p = beid(g, p, v[i]);
			g->nrefs += v[i] != 0;
			break;
		case T_BOOL: case T_BYTE: p = be1(p, v[i]); break;
		case T_CHAR: case T_SHORT: p = be2(p, v[i]); break;
		case T_FLOAT: case T_INT: p = be4(p, v[i]); break;
		default: p = be8(p, v[i]); break;
		}
	}
	cl->count++;
	cl->bytes += cl->shallow;
	g->ninst++;
}

static void put_obj_array(struct gen *g, uint64_t k, int c, uint32_t n, const uint64_t *ids)
{
	size_t sz = 1 + 2 * (size_t)g->ids + 8 + (size_t)n * (size_t)g->ids;
	uint8_t *p = sub(g, sz);
	p = be1(p, OBJ_ARRAY_DUMP);
	p = beid(g, p, obj_id(g, k));
	p = be4(p, 1);
	p = be4(p, n);
	p = beid(g, p, class_id(g, c));
	for (uint32_t i = 0; i < n; i++) {
		p = beid(g, p, ids[i]);
		g->nrefs += ids[i] != 0;
	}
	g->c[c].count++;
	g->c[c].bytes += array_shallow(g, g->ids, n);
	g->nobjarr++;
}

/* A PRIMITIVE ARRAY DUMP of n elements; data (n * size bytes, big-endian)
 * or, when NULL, a cheap pattern. */
static void put_prim_array(struct gen *g, uint64_t k, int c, uint32_t n, const uint8_t *data)
{
	int es = type_size(g, g->c[c].elem);
	size_t bytes = (size_t)n * (size_t)es;
	uint8_t *p = sub(g, 1 + (size_t)g->ids + 9 + bytes);
	p = be1(p, PRIM_ARRAY_DUMP);
	p = beid(g, p, obj_id(g, k));
	p = be4(p, 1);
	p = be4(p, n);
	p = be1(p, g->c[c].elem);
	if (data)
		memcpy(p, data, bytes);
	else
		for (size_t i = 0; i < bytes; i++)
			p[i] = (uint8_t)(i % (size_t)es == (size_t)es - 1 ? (k + i) & 0x7f : 0);
	g->c[c].count++;
	g->c[c].bytes += array_shallow(g, es, n);
	g->nprimarr++;
}

static void remember(struct gen *g, uint64_t k)
{
	g->ring[g->ring_at] = k;
	g->ring_at = (g->ring_at + 1) % RING;
	if (g->ring_n < RING)
		g->ring_n++;
}

/* An object made earlier, 0 when there is none yet. */
static uint64_t shared(struct gen *g)
{
	return g->ring_n ? obj_id(g, g->ring[below(g, g->ring_n)]) : 0;
}

/* ------------------------------------------------------------ strings */

static const char *const words[64] = {
	"id", "name", "status", "active", "pending", "order", "customer", "invoice",
	"account", "user", "session", "token", "price", "amount", "currency", "EUR",
	"USD", "country", "city", "address", "street", "email", "phone", "created",
	"updated", "deleted", "true", "false", "null", "default", "config", "cache",
	"service", "handler", "request", "response", "GET", "POST", "application/json",
	"text/html", "UTF-8", "en_US", "de_DE", "fr_FR", "error", "warning", "info",
	"debug", "trace", "http", "https", "localhost", "admin", "guest", "root",
	"item", "product", "category", "SELECT", "FROM", "WHERE", "UPDATE", "INSERT", "DELETE"
};

/* The text of a String into buf; returns its length and sets *vocab to the
 * repeated text's number, or -1 for a text of its own. */
static size_t make_text(struct gen *g, char *buf, size_t cap, int *vocab)
{
	uint32_t r = below(g, 100);
	*vocab = -1;
	if (r < 45) {	/* repeated texts, the first few far more often */
		uint32_t v = below(g, VOCAB);
		v = (uint32_t)((uint64_t)v * below(g, VOCAB) / VOCAB);
		*vocab = (int)v;
		return (size_t)snprintf(buf, cap, "%s.%s", words[v & 63], words[v >> 6]);
	}
	g->string_serial++;
	if (r < 85)
		return (size_t)snprintf(buf, cap, "%s-%" PRIx64, words[r & 63],
					g->string_serial * 2654435761u % 100000007u);
	if (r < 98)
		return (size_t)snprintf(buf, cap, "%s%" PRIu64 "@%s.example.com",
					words[below(g, 64)], g->string_serial, words[below(g, 64)]);
	/* now and then a long one: a query, a message */
	size_t n = 0, want = 100 + below(g, 900);
	while (n + 40 < cap && n < want)
		n += (size_t)snprintf(buf + n, cap - n, "%s ", words[below(g, 64)]);
	return n;
}

/* A String (value byte[], coder, hash) and, unless it shares one, its
 * byte[]; returns the String's id. */
static uint64_t new_string_text(struct gen *g, const char *text, size_t n, int vocab)
{
	uint64_t k = alloc_k(g, 1), kb;
	if (vocab >= 0 && g->vocab_bytes[vocab] && below(g, 3) == 0) {
		kb = g->vocab_bytes[vocab];	/* deduplicated: one byte[] for two Strings */
	} else {
		kb = alloc_k(g, 1);
		put_prim_array(g, kb, C_BYTES, (uint32_t)n, (const uint8_t *)text);
		if (vocab >= 0)
			g->vocab_bytes[vocab] = kb;
	}
	uint32_t hash = 0;
	if (below(g, 5) < 3)	/* String.hashCode() computed and cached */
		for (size_t i = 0; i < n; i++)
			hash = 31 * hash + (uint8_t)text[i];
	uint64_t v[3] = {obj_id(g, kb), 0 /* LATIN1 */, hash};
	put_instance(g, k, C_STRING, v);
	return obj_id(g, k);
}

static uint64_t new_string(struct gen *g)
{
	char buf[1100];
	int vocab;
	size_t n = make_text(g, buf, sizeof buf, &vocab);
	return new_string_text(g, buf, n, vocab);
}

/* ------------------------------------------------------------ structures */

static uint64_t app_object(struct gen *g, int c, int depth);
static uint64_t hashmap(struct gen *g, uint64_t k, uint32_t n, int depth);
static uint64_t arraylist(struct gen *g, uint32_t n, int depth, int strings);

static int app_class(struct gen *g)
{
	return N_JDK + (int)below(g, (uint32_t)g->napp);
}

/* A reference field's value: null, a new String, an object made earlier,
 * a new application object, array or small collection. */
static uint64_t field_value(struct gen *g, int depth)
{
	uint32_t r = below(g, 100);
	if (r < 8)
		return 0;
	if (r < 17)
		return new_string(g);
	if (r < 60)
		return shared(g);
	if (r < 84)
		return depth < 3 ? app_object(g, app_class(g), depth + 1) : shared(g);
	if (r < 88) {
		uint64_t k = alloc_k(g, 1);
		static const int prim[3] = {C_BYTES, C_INTS, C_LONGS};
		put_prim_array(g, k, prim[below(g, 3)], below(g, 48), NULL);
		return obj_id(g, k);
	}
	if (r < 95 && depth < 2)
		return arraylist(g, below(g, 12), depth + 1, 0);
	if (depth < 2)
		return hashmap(g, alloc_k(g, 1), below(g, 8), depth + 1);
	return shared(g);
}

/* An element of a collection: mostly new application objects. */
static uint64_t element(struct gen *g, int depth)
{
	uint32_t r = below(g, 100);
	if (r < 50)
		return app_object(g, app_class(g), depth + 1);
	if (r < 60)
		return new_string(g);
	return shared(g);
}

static uint64_t prim_value(struct gen *g, uint8_t t)
{
	uint64_t r = rnd(g);
	switch (t) {
	case T_BOOL: return r & 1;
	case T_INT: return (r & 7) ? r % 1000 : r;
	case T_LONG: return (r & 3) ? 1700000000000ULL + (r >> 44) : r;
	case T_FLOAT: return 0x3f800000u + (r & 0xffff);
	case T_DOUBLE: return 0x4059000000000000ULL + (r & 0xffffffffULL);
	default: return r;
	}
}

/* An instance of application class c and what its fields make. */
static uint64_t app_object(struct gen *g, int c, int depth)
{
	const struct cls *cl = &g->c[c];
	uint64_t k = alloc_k(g, 1), v[MAX_ALL];
	for (int i = 0; i < cl->nall; i++)
		v[i] = cl->all[i] == T_OBJ ? field_value(g, depth) : prim_value(g, cl->all[i]);
	put_instance(g, k, c, v);
	if (!g->garbage && below(g, 3) == 0)
		remember(g, k);
	return obj_id(g, k);
}

/* Java's String.hashCode() of a Latin-1 text, spread as HashMap.hash(). */
static uint32_t key_hash(const char *text, size_t n)
{
	uint32_t h = 0;
	for (size_t i = 0; i < n; i++)
		h = 31 * h + (uint8_t)text[i];
	return h ^ (h >> 16);
}

/* A java.util.HashMap (object k) of the n entries key -> val, laid out as
 * HashMap lays them out: a power-of-two table, collisions chained through
 * next in insertion order. */
static uint64_t put_map(struct gen *g, uint64_t k, uint32_t n, const uint64_t *key,
			const uint32_t *hash, const uint64_t *val)
{
	uint32_t cap = 16;
	while (cap / 4 * 3 < n)
		cap *= 2;
	uint64_t kt = alloc_k(g, 1), kn = alloc_k(g, n);
	uint64_t *head = calloc(cap, sizeof *head), *next = calloc((size_t)n + 1, sizeof *next);
	uint32_t *tail = calloc(cap, sizeof *tail);
	if (!head || !next || !tail)
		die(g, "out of memory");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t b = hash[i] & (cap - 1);
		if (head[b])
			next[tail[b]] = obj_id(g, kn + i);
		else
			head[b] = obj_id(g, kn + i);
		tail[b] = i;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t v[4] = {hash[i], key[i], val[i], next[i]};	/* hash, key, value, next */
		put_instance(g, kn + i, C_HMNODE, v);
	}
	uint64_t table = 0;
	if (n) {	/* HashMap makes its table at the first put */
		put_obj_array(g, kt, C_NODES, cap, head);
		table = obj_id(g, kt);
	}
	/* table, entrySet, size, modCount, threshold, loadFactor (0.75f); keySet, values */
	uint64_t v[8] = {table, 0, n, n, n ? cap / 4 * 3 : 0, 0x3f400000, 0, 0};
	put_instance(g, k, C_HASHMAP, v);
	free(head);
	free(next);
	free(tail);
	return obj_id(g, k);
}

/* A HashMap (object k) of n entries: String keys, elements as values. */
static uint64_t hashmap(struct gen *g, uint64_t k, uint32_t n, int depth)
{
	uint64_t *key = xmalloc(sizeof *key * n), *val = xmalloc(sizeof *val * n);
	uint32_t *hash = xmalloc(sizeof *hash * n);
	for (uint32_t i = 0; i < n; i++) {
		char buf[1100];
		int vocab;
		size_t len = make_text(g, buf, sizeof buf, &vocab);
		hash[i] = key_hash(buf, len);
		key[i] = new_string_text(g, buf, len, vocab);
		val[i] = element(g, depth);
	}
	uint64_t id = put_map(g, k, n, key, hash, val);
	free(key);
	free(val);
	free(hash);
	return id;
}

/* A java.util.ArrayList of n elements (Strings when strings), with spare
 * capacity as ArrayList grows it. */
static uint64_t arraylist(struct gen *g, uint32_t n, int depth, int strings)
{
	uint64_t k = alloc_k(g, 1), ka = alloc_k(g, 1);
	uint32_t cap = n <= 10 ? 10 : n + below(g, n / 2 + 1);
	uint64_t *e = calloc(cap, sizeof *e);
	if (!e)
		die(g, "out of memory");
	for (uint32_t i = 0; i < n; i++)
		e[i] = strings ? new_string(g) : element(g, depth);
	put_obj_array(g, ka, C_OBJS, cap, e);
	free(e);
	uint64_t v[3] = {obj_id(g, ka), n, n};	/* elementData, size; modCount */
	put_instance(g, k, C_ARRAYLIST, v);
	return obj_id(g, k);
}

/* A java.util.LinkedList of n nodes: a chain n long (and back, by prev). */
static uint64_t linkedlist(struct gen *g, uint32_t n)
{
	uint64_t k = alloc_k(g, 1), kn = alloc_k(g, n);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t r = below(g, 8);
		uint64_t item = r < 4 ? app_object(g, app_class(g), 2) : r < 7 ? shared(g) : new_string(g);
		uint64_t v[3] = {item, i + 1 < n ? obj_id(g, kn + i + 1) : 0,
				 i ? obj_id(g, kn + i - 1) : 0};
		put_instance(g, kn + i, C_LLNODE, v);
	}
	/* size, first, last; modCount */
	uint64_t v[4] = {n, n ? obj_id(g, kn) : 0, n ? obj_id(g, kn + n - 1) : 0, n};
	put_instance(g, k, C_LINKEDLIST, v);
	return obj_id(g, k);
}

/* A cycle of n application objects, each referring to the next. */
static uint64_t cycle(struct gen *g, uint32_t n)
{
	int c = g->ref_classes[below(g, (uint32_t)g->nref_classes)];
	int at = 0;
	while (g->c[c].all[at] != T_OBJ)
		at++;
	uint64_t k0 = alloc_k(g, n);
	for (uint32_t i = 0; i < n; i++) {
		const struct cls *cl = &g->c[c];
		uint64_t v[MAX_ALL];
		for (int j = 0; j < cl->nall; j++)
			v[j] = j == at ? obj_id(g, k0 + (i + 1) % n)
			       : cl->all[j] == T_OBJ ? field_value(g, 2) : prim_value(g, cl->all[j]);
		put_instance(g, k0 + i, c, v);
	}
	return obj_id(g, k0);
}

/* ------------------------------------------------------------ modules */

/* Which modules are rooted how: most by a registry, every 50th by a JNI
 * global only, and a few also by a thread's frame. */
static int jni_only(uint64_t j)
{
	return j % 50 == 49;
}

static int frame_thread(uint64_t j)
{
	return j % 97 < NTHREADS && j / 97 < 8 ? (int)(j % 97) : -1;
}

/* One module: structures until the file reaches end, then the module's
 * top map (object k_top) of "module-J/I" -> structure. */
static void module(struct gen *g, uint64_t j, uint64_t k_top, uint64_t end)
{
	size_t n = 0, cap = 64;
	uint64_t *roots = xmalloc(sizeof *roots * cap);
	while (offset(g) < end) {
		uint64_t left = end - offset(g), id;
		uint32_t r = below(g, 100);
		/* about 300 bytes per collection element, 100 per chain node */
		uint32_t most = (uint32_t)(left / 300 + 1);
		if (r < 30) {
			uint32_t m = tail_size(g, 16, 20000);
			id = hashmap(g, alloc_k(g, 1), m < most ? m : most, 0);
		} else if (r < 52) {
			uint32_t m = tail_size(g, 16, 20000);
			id = arraylist(g, m < most ? m : most, 0, 0);
		} else if (r < 57) {
			uint32_t m = tail_size(g, 32, 5000);
			id = arraylist(g, m < most ? m : most, 0, 1);
		} else if (r < 80) {
			id = app_object(g, app_class(g), 0);
		} else if (r < 89) {
			id = cycle(g, 2 + below(g, 63));
		} else if (r < 90) {
			uint32_t m = 1000 + below(g, 10000);
			most = (uint32_t)(left / 100 + 1);
			id = linkedlist(g, m < most ? m : most);
		} else {	/* garbage: made, and then nothing refers to it */
			g->garbage = 1;
			if (below(g, 2))
				app_object(g, app_class(g), 0);
			else
				hashmap(g, alloc_k(g, 1), below(g, 64), 1);
			g->garbage = 0;
			continue;
		}
		if (n == cap) {
			roots = realloc(roots, sizeof *roots * (cap *= 2));
			if (!roots)
				die(g, "out of memory");
		}
		roots[n++] = id;
	}
	uint64_t *key = xmalloc(sizeof *key * (n + 1));
	uint32_t *hash = xmalloc(sizeof *hash * (n + 1));
	for (size_t i = 0; i < n; i++) {
		char buf[48];
		size_t len = (size_t)snprintf(buf, sizeof buf, "module-%" PRIu64 "/%zu", j, i);
		hash[i] = key_hash(buf, len);
		key[i] = new_string_text(g, buf, len, -1);
	}
	put_map(g, k_top, (uint32_t)n, key, hash, roots);
	free(key);
	free(hash);
	free(roots);
}

/* ------------------------------------------------------------ classes */

struct names {
	const char *text[128];
	uint64_t sid[128];
	int n;
};

/* The UTF8 id of a field or method name, written once. */
static uint64_t name_sid(struct gen *g, struct names *nm, const char *text)
{
	for (int i = 0; i < nm->n; i++)
		if (!strcmp(nm->text[i], text))
			return nm->sid[i];
	if (nm->n == 128)
		die(g, "internal: too many names");
	nm->text[nm->n] = text;
	return nm->sid[nm->n++] = utf8(g, text);
}

static int add_class(struct gen *g, const char *name, int super, uint8_t elem)
{
	struct cls *c = &g->c[g->ncls];
	memset(c, 0, sizeof *c);
	c->name = strdup(name);
	if (!c->name)
		die(g, "out of memory");
	c->name_sid = utf8(g, name);
	c->super = super;
	c->elem = elem;
	c->registry = -1;
	return g->ncls++;
}

static void add_field(struct gen *g, struct names *nm, int c, const char *name, uint8_t type)
{
	struct cls *cl = &g->c[c];
	cl->f[cl->nf].name = name_sid(g, nm, name);
	cl->f[cl->nf++].type = type;
}

/* The flattened field list (own fields, then the superclass's, as an
 * INSTANCE DUMP holds them) and the sizes. */
static void finish_class(struct gen *g, int c)
{
	struct cls *cl = &g->c[c];
	cl->nall = 0;
	cl->vbytes = 0;
	for (int s = c; s >= 0; s = g->c[s].super)
		for (int i = 0; i < g->c[s].nf; i++) {
			if (cl->nall == MAX_ALL)
				die(g, "internal: class %s has too many fields", cl->name);
			cl->all[cl->nall++] = g->c[s].f[i].type;
			cl->vbytes += (uint32_t)type_size(g, g->c[s].f[i].type);
		}
	cl->shallow = (uint32_t)align8(2 * (uint64_t)g->ids + cl->vbytes);
}

static const char *const app_fields[32] = {
	"id", "name", "value", "next", "parent", "owner", "count", "flags", "data", "config",
	"cache", "state", "items", "size", "created", "updated", "handler", "listener", "key",
	"timestamp", "version", "children", "label", "priority", "enabled", "weight", "source",
	"target", "context", "options", "delegate", "metadata"
};

static void make_classes(struct gen *g, struct names *nm)
{
	static const struct {
		const char *name;
		int super;
		uint8_t elem;
		const char *fields;	/* "name:T ..." with T a basic type letter */
	} jdk[N_JDK] = {
		[C_OBJECT] = {"java/lang/Object", -1, 0, ""},
		[C_STRING] = {"java/lang/String", C_OBJECT, 0, "value:L coder:B hash:I"},
		[C_CLASS] = {"java/lang/Class", C_OBJECT, 0,
			     "cachedConstructor:L name:L classLoader:L "
			     "packageName:L componentType:L reflectionData:L "
			     "classRedefinedCount:I"},
		[C_LOADER] = {"java/lang/ClassLoader", C_OBJECT, 0, "parent:L name:L classes:L"},
		[C_APPLOADER] = {"jdk/internal/loader/ClassLoaders$AppClassLoader", C_LOADER, 0,
				 "ucp:L"},
		[C_THREAD] = {"java/lang/Thread", C_OBJECT, 0,
			      "name:L tid:J priority:I daemon:Z contextClassLoader:L"},
		[C_ABSMAP] = {"java/util/AbstractMap", C_OBJECT, 0, "keySet:L values:L"},
		[C_HASHMAP] = {"java/util/HashMap", C_ABSMAP, 0,
			       "table:L entrySet:L size:I modCount:I threshold:I loadFactor:F"},
		[C_HMNODE] = {"java/util/HashMap$Node", C_OBJECT, 0, "hash:I key:L value:L next:L"},
		[C_ABSLIST] = {"java/util/AbstractList", C_OBJECT, 0, "modCount:I"},
		[C_ARRAYLIST] = {"java/util/ArrayList", C_ABSLIST, 0, "elementData:L size:I"},
		[C_LINKEDLIST] = {"java/util/LinkedList", C_ABSLIST, 0, "size:I first:L last:L"},
		[C_LLNODE] = {"java/util/LinkedList$Node", C_OBJECT, 0, "item:L next:L prev:L"},
		[C_BYTES] = {"[B", C_OBJECT, T_BYTE, ""},
		[C_INTS] = {"[I", C_OBJECT, T_INT, ""},
		[C_LONGS] = {"[J", C_OBJECT, T_LONG, ""},
		[C_OBJS] = {"[Ljava/lang/Object;", C_OBJECT, T_OBJ, ""},
		[C_NODES] = {"[Ljava/util/HashMap$Node;", C_OBJECT, T_OBJ, ""},
	};
	for (int c = 0; c < N_JDK; c++) {
		add_class(g, jdk[c].name, jdk[c].super, jdk[c].elem);
		char buf[256];
		snprintf(buf, sizeof buf, "%s", jdk[c].fields);
		for (char *save = NULL, *f = strtok_r(buf, " ", &save); f;
		     f = strtok_r(NULL, " ", &save)) {
			char *colon = strchr(f, ':');
			*colon = 0;
			static const char letters[] = "LZCFDBSIJ";
			static const uint8_t types[] = {T_OBJ, T_BOOL, T_CHAR, T_FLOAT, T_DOUBLE,
							T_BYTE, T_SHORT, T_INT, T_LONG};
			uint8_t t = types[strchr(letters, colon[1]) - letters];
			/* buf is reused: the name pool keeps a copy */
			add_field(g, nm, c, strdup(f), t);
		}
	}
	g->ref_classes = xmalloc(sizeof *g->ref_classes * (size_t)g->napp);
	for (int a = 0; a < g->napp; a++) {
		char name[64];
		snprintf(name, sizeof name, "app/pkg%d/Class%d", a / 40, a);
		int super = C_OBJECT;
		if (a % 40 && below(g, 5) == 0) {
			int s = N_JDK + a - 1 - (int)below(g, (uint32_t)(a % 40 < 10 ? a % 40 : 10));
			if (g->c[s].super == C_OBJECT)
				super = s;
		}
		int c = add_class(g, name, super, 0);
		uint32_t nf = 1 + below(g, MAX_FIELDS), first = below(g, 32);
		for (uint32_t i = 0; i < nf; i++) {
			uint32_t r = below(g, 100);
			uint8_t t = r < 66 ? T_OBJ : r < 78 ? T_INT : r < 85 ? T_LONG : r < 90 ? T_BOOL
				    : r < 92 ? T_DOUBLE : r < 94 ? T_BYTE : r < 96 ? T_SHORT
				    : r < 98 ? T_CHAR : T_FLOAT;
			add_field(g, nm, c, app_fields[(first + i) % 32], t);
		}
	}
	for (int c = 0; c < g->ncls; c++) {
		finish_class(g, c);
		if (c >= N_JDK && memchr(g->c[c].all, T_OBJ, g->c[c].nall))
			g->ref_classes[g->nref_classes++] = c;
	}
	if (!g->nref_classes)
		die(g, "no application class has a reference field; try another --seed");
}

/* ------------------------------------------------------------ records */

static void class_dump(struct gen *g, int c, uint64_t loader, uint64_t scl, uint64_t reg_id,
		       uint64_t suid_sid, uint64_t reg_sid, uint64_t scl_sid)
{
	const struct cls *cl = &g->c[c];
	int ids = g->ids;
	uint64_t statics[2][3];	/* name, type, value */
	int ns = 0;
	if (c == C_LOADER)
		memcpy(statics[ns++], (uint64_t[3]){scl_sid, T_OBJ, scl}, sizeof statics[0]);
	if (reg_id)
		memcpy(statics[ns++], (uint64_t[3]){reg_sid, T_OBJ, reg_id}, sizeof statics[0]);
	if (c >= N_JDK && c % 3 == 0)
		memcpy(statics[ns++], (uint64_t[3]){suid_sid, T_LONG, 0x5EED0000ULL + (uint64_t)c},
		       sizeof statics[0]);
	size_t n = 1 + 7 * (size_t)ids + 4 + 4 + 2 + 2 + 2 + (size_t)cl->nf * ((size_t)ids + 1);
	for (int s = 0; s < ns; s++)
		n += (size_t)ids + 1 + (size_t)type_size(g, (uint8_t)statics[s][1]);
	uint8_t *p = sub(g, n);
	p = be1(p, CLASS_DUMP);
	p = beid(g, p, class_id(g, c));
	p = be4(p, 1);
	p = beid(g, p, cl->super >= 0 ? class_id(g, cl->super) : 0);
	p = beid(g, p, loader);
	p = beid(g, p, 0);	/* signers */
	p = beid(g, p, 0);	/* protection domain */
	p = beid(g, p, 0);	/* reserved */
	p = beid(g, p, 0);
	p = be4(p, cl->elem ? 0 : cl->vbytes);
	p = be2(p, 0);		/* constant pool */
	p = be2(p, (uint64_t)ns);
	for (int s = 0; s < ns; s++) {
		p = beid(g, p, statics[s][0]);
		p = be1(p, statics[s][1]);
		if (statics[s][1] == T_OBJ) {
			p = beid(g, p, statics[s][2]);
			g->nrefs += statics[s][2] != 0;
		} else {
			p = be8(p, statics[s][2]);
		}
	}
	p = be2(p, cl->nf);
	for (int i = 0; i < cl->nf; i++) {
		p = beid(g, p, cl->f[i].name);
		p = be1(p, cl->f[i].type);
	}
	g->nrefs += (cl->super >= 0) + (loader != 0);
}

static void root(struct gen *g, uint8_t tag, uint64_t id, int64_t a, int64_t b)
{
	size_t n = 1 + (size_t)g->ids + (tag == ROOT_JNI_GLOBAL ? (size_t)g->ids
					: tag == ROOT_STICKY_CLASS ? 0 : 8);
	uint8_t *p = sub(g, n);
	p = be1(p, tag);
	p = beid(g, p, id);
	if (tag == ROOT_JNI_GLOBAL)
		beid(g, p, (uint64_t)a);	/* the JNI global ref's own address */
	else if (tag != ROOT_STICKY_CLASS)
		be4(be4(p, (uint64_t)a), (uint64_t)b);
	g->nroots++;
}

/* ------------------------------------------------------------ main */

static uint64_t parse_size(const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	uint64_t mult = 1;
	switch (*end) {
	case 'k': case 'K': mult = 1ULL << 10; end++; break;
	case 'm': case 'M': mult = 1ULL << 20; end++; break;
	case 'g': case 'G': mult = 1ULL << 30; end++; break;
	case 't': case 'T': mult = 1ULL << 40; end++; break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (errno || end == s || *end || v <= 0 || v * (double)mult > 1e15)
		return 0;
	return (uint64_t)(v * (double)mult);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: gen_hprof OUT.hprof --size SIZE [--seed N] [--ids 8|4] [--classes N]\n"
		"                 [--segment SIZE] [--manifest FILE.csv]\n"
		"  SIZE: bytes, or with K, M, G, T (powers of 1024): 4G\n"
		"  --classes   application classes (default 2000 + one per 4 MiB, at most 20000)\n"
		"  --segment   largest HEAP DUMP SEGMENT (default 1G)\n"
		"  --manifest  write class,instances,shallow_bytes of what was written\n");
	exit(2);
}

/* heapsh's name of a class: "java.lang.String", "byte[]", "java.lang.Object[]". */
static void java_name(const char *jvm, char *out, size_t cap)
{
	static const char *const prim[][2] = {{"[B", "byte[]"}, {"[I", "int[]"}, {"[J", "long[]"}};
	for (size_t i = 0; i < 3; i++)
		if (!strcmp(jvm, prim[i][0])) {
			snprintf(out, cap, "%s", prim[i][1]);
			return;
		}
	if (jvm[0] == '[')
		snprintf(out, cap, "%.*s[]", (int)strlen(jvm) - 3, jvm + 2);
	else
		snprintf(out, cap, "%s", jvm);
	for (char *p = out; *p; p++)
		if (*p == '/')
			*p = '.';
}

int main(int argc, char **argv)
{
	const char *out = NULL, *manifest = NULL;
	uint64_t size = 0, seed = 1, seg = 1ULL << 30;
	long classes = -1;
	static struct gen G;
	struct gen *g = &G;
	g->ids = 8;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			usage();
		else if (a[0] != '-' && !out)
			out = a;
		else if (!v)
			usage();
		else if (!strcmp(a, "--size") && (size = parse_size(v)))
			i++;
		else if (!strcmp(a, "--segment") && (seg = parse_size(v)) && seg < (1ULL << 32))
			i++;
		else if (!strcmp(a, "--seed"))
			seed = strtoull(v, NULL, 0), i++;
		else if (!strcmp(a, "--ids") && (!strcmp(v, "8") || !strcmp(v, "4")))
			g->ids = atoi(v), i++;
		else if (!strcmp(a, "--classes") && (classes = atol(v)) >= 1 && classes <= 1000000)
			i++;
		else if (!strcmp(a, "--manifest"))
			manifest = v, i++;
		else
			usage();
	}
	if (!out || !size)
		usage();
	if (seg < 64 * 1024)
		die(NULL, "--segment must be at least 64K");
	if (classes < 0)
		classes = 2000 + (long)(size >> 22) < 20000 ? 2000 + (long)(size >> 22) : 20000;

	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	g->path = out;
	g->seg_max = seg;
	g->rng = seed * 0x9E3779B97F4A7C15ULL ^ 0xD1B54A32D192ED03ULL;
	if (!g->rng)
		g->rng = 1;
	for (int i = 0; i < 8; i++)
		rnd(g);
	g->napp = (int)classes;
	g->c = xmalloc(sizeof *g->c * (size_t)(N_JDK + g->napp));
	if (g->ids == 8) {	/* a 64-bit HotSpot's heap, metaspace and symbol table */
		g->sid_next = 0x00007f0000000000ULL;
		g->frame_base = 0x00007e0000000000ULL;
		g->class_base = 0x00000005f0000000ULL;
		g->obj_base = 0x0000000600000000ULL;
	} else {
		g->sid_next = 0x00001000;
		g->frame_base = 0x00000800;
		g->class_base = 0x00080000;
		g->obj_base = 0x01000000;
	}
	g->buf = xmalloc(OUTBUF);
	g->f = fopen(out, "wb");
	if (!g->f)
		die(NULL, "%s: %s", out, strerror(errno));
	setvbuf(g->f, NULL, _IOFBF, 1 << 20);

	/* header: magic, id size, dump time (fixed: the same seed, the same bytes) */
	uint8_t *p = reserve(g, 19 + 4 + 8);
	memcpy(p, "JAVA PROFILE 1.0.2", 19);
	be8(be4(p + 19, (uint64_t)g->ids), 1767225600000ULL);

	/* the plan: modules of 64 KiB to 2 MiB, their registries */
	uint64_t mod_bytes = size / 64 < (64 << 10) ? (64 << 10)
			     : size / 64 > (2 << 20) ? (2 << 20) : size / 64;
	uint64_t nmods = size / mod_bytes ? size / mod_bytes : 1;
	uint64_t nreg = ((uint64_t)g->napp + 9) / 10;
	if (nreg > (nmods + 7) / 8)
		nreg = (nmods + 7) / 8;
	uint64_t reg_stride = (uint64_t)g->napp / nreg, reg_len = (nmods + nreg - 1) / nreg;
	uint64_t k_loader = alloc_k(g, 1), k_list = alloc_k(g, 1), k_arr = alloc_k(g, 1);
	uint64_t k_threads = alloc_k(g, NTHREADS), k_regs = alloc_k(g, nreg);
	uint64_t k_tops = alloc_k(g, nmods);

	struct names nm = {.n = 0};
	make_classes(g, &nm);
	for (int c = 0; c < g->ncls; c++) {
		uint64_t a = (uint64_t)(c - N_JDK);
		if (c >= N_JDK && a % reg_stride == 0 && a / reg_stride < nreg)
			g->c[c].registry = (int)(a / reg_stride);
	}
	uint64_t suid_sid = name_sid(g, &nm, "serialVersionUID");
	uint64_t reg_sid = name_sid(g, &nm, "REGISTRY");
	uint64_t scl_sid = name_sid(g, &nm, "scl");
	for (int c = 0; c < g->ncls; c++) {
		p = record(g, LOAD_CLASS, 8 + 2 * (size_t)g->ids);
		p = be4(p, (uint64_t)c + 1);
		p = beid(g, p, class_id(g, c));
		p = be4(p, 1);
		beid(g, p, g->c[c].name_sid);
	}
	/* STACK TRACE 1: HotSpot's empty trace for objects; 2..: the threads' */
	p = record(g, TRACE, 12);
	be4(be4(be4(p, 1), 0), 0);
	static const char *const methods[3] = {"handle", "process", "run"};
	uint64_t msid[3], sig = utf8(g, "()V"), src = utf8(g, "Worker.java");
	for (int m = 0; m < 3; m++)
		msid[m] = utf8(g, methods[m]);
	for (int t = 0; t < NTHREADS; t++) {
		for (int f = 0; f < 3; f++) {
			p = record(g, FRAME, 4 * (size_t)g->ids + 8);
			p = beid(g, p, g->frame_base + 8 * (uint64_t)(3 * t + f));
			p = beid(g, p, msid[f]);
			p = beid(g, p, sig);
			p = beid(g, p, src);
			p = be4(p, (uint64_t)N_JDK + 1 + (uint64_t)t);	/* class serial */
			be4(p, 10 * (uint64_t)f + 42);
		}
		p = record(g, TRACE, 12 + 3 * (size_t)g->ids);
		p = be4(be4(be4(p, 2 + (uint64_t)t), 1 + (uint64_t)t), 3);
		for (int f = 0; f < 3; f++)
			p = beid(g, p, g->frame_base + 8 * (uint64_t)(3 * t + f));
	}

	/* CLASS DUMPs */
	for (int c = 0; c < g->ncls; c++)
		class_dump(g, c, c >= N_JDK ? obj_id(g, k_loader) : 0, obj_id(g, k_loader),
			   g->c[c].registry >= 0 ? obj_id(g, k_regs + (uint64_t)g->c[c].registry) : 0,
			   suid_sid, reg_sid, scl_sid);

	/* the application class loader, with its classes */
	uint64_t *e = xmalloc(sizeof *e * (size_t)(g->napp + reg_len + 1));
	for (int a = 0; a < g->napp; a++)
		e[a] = class_id(g, N_JDK + a);
	put_obj_array(g, k_arr, C_OBJS, (uint32_t)g->napp, e);
	uint64_t lv[3] = {obj_id(g, k_arr), (uint64_t)g->napp, (uint64_t)g->napp};
	put_instance(g, k_list, C_ARRAYLIST, lv);
	/* ucp; parent, name, classes */
	uint64_t ldr[4] = {0, 0, new_string_text(g, "app", 3, -1), obj_id(g, k_list)};
	put_instance(g, k_loader, C_APPLOADER, ldr);
	for (int t = 0; t < NTHREADS; t++) {
		char name[32];
		size_t n = (size_t)snprintf(name, sizeof name, t ? "worker-%d" : "main", t);
		/* name, tid, priority, daemon, contextClassLoader */
		uint64_t tv[5] = {new_string_text(g, name, n, -1), 1 + (uint64_t)t, 5, t > 0,
				  obj_id(g, k_loader)};
		put_instance(g, k_threads + (uint64_t)t, C_THREAD, tv);
	}
	/* registry r holds the tops of modules r, r + nreg, ... */
	for (uint64_t r = 0; r < nreg; r++) {
		for (uint64_t s = 0; s < reg_len; s++) {
			uint64_t j = r + s * nreg;
			e[s] = j < nmods && !jni_only(j) ? obj_id(g, k_tops + j) : 0;
		}
		put_obj_array(g, k_regs + r, C_OBJS, (uint32_t)reg_len, e);
	}
	free(e);

	/* the modules, up to what the roots and the end will take */
	uint64_t tail = 9 + 9;
	for (uint64_t j = 0; j < nmods; j++)
		tail += jni_only(j) ? 1 + 2 * (uint64_t)g->ids : 0;
	tail += (uint64_t)NTHREADS * 9 * (1 + (uint64_t)g->ids + 8);	/* thread and frame roots */
	tail += N_JDK * (1 + (uint64_t)g->ids);
	uint64_t start = offset(g), stop = size > start + tail ? size - tail : start;
	for (uint64_t j = 0; j < nmods; j++)
		module(g, j, k_tops + j, start + (stop - start) / nmods * (j + 1));

	/* GC roots */
	for (uint64_t j = 0; j < nmods; j++)
		if (jni_only(j))
			root(g, ROOT_JNI_GLOBAL, obj_id(g, k_tops + j), (int64_t)(g->frame_base / 2 + 8 * j), 0);
	for (int t = 0; t < NTHREADS; t++)
		root(g, ROOT_THREAD_OBJ, obj_id(g, k_threads + (uint64_t)t), 1 + t, 2 + t);
	for (uint64_t j = 0; j < nmods; j++)
		if (frame_thread(j) >= 0)
			root(g, ROOT_JAVA_FRAME, obj_id(g, k_tops + j), 1 + frame_thread(j), (int64_t)(j % 3));
	for (int c = 0; c < N_JDK; c++)
		root(g, ROOT_STICKY_CLASS, class_id(g, c), 0, 0);
	seg_end(g);
	record(g, HEAP_DUMP_END, 0);
	flush(g);
	if (fclose(g->f)) {
		g->f = NULL;
		die(NULL, "%s: %s", out, strerror(errno));
	}
	g->f = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

	uint64_t nobj = g->ninst + g->nobjarr + g->nprimarr + (uint64_t)g->ncls;
	fprintf(stderr, "gen_hprof: %s: %" PRIu64 " bytes, %" PRIu64 " segments, %d classes, "
		"%" PRIu64 " objects (%" PRIu64 " instances, %" PRIu64 " object arrays, %" PRIu64
		" primitive arrays, %d class objects), %" PRIu64 " references, %" PRIu64
		" gc roots, %" PRIu64 " modules; %.1f s, %.0f MB/s\n",
		out, offset(g), g->nsegs, g->ncls, nobj, g->ninst, g->nobjarr, g->nprimarr, g->ncls,
		g->nrefs, g->nroots, nmods, secs, (double)offset(g) / 1e6 / (secs > 0 ? secs : 1));
	if (manifest) {
		FILE *m = fopen(manifest, "w");
		if (!m)
			die(NULL, "%s: %s", manifest, strerror(errno));
		fprintf(m, "class,instances,shallow_bytes\n");
		for (int c = 0; c < g->ncls; c++) {
			char name[300];
			java_name(g->c[c].name, name, sizeof name);
			if (g->c[c].count)
				fprintf(m, "%s,%" PRIu64 ",%" PRIu64 "\n", name, g->c[c].count,
					g->c[c].bytes);
		}
		if (fclose(m))
			die(NULL, "%s: %s", manifest, strerror(errno));
	}
	return 0;
}
