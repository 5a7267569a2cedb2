/* snapshot.c - the agent's snapshot records as an HPROF file; see snapshot.h. */
#include "snapshot.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../base/classname.h"
#include "../base/u64map.h"
#include "../base/wire.h"
#include "../hprof/hprof.h"

enum { R_CLASS = 1, R_OBJECT, R_REFERENCE, R_ROOT, R_PRIMITIVE, R_PRIMARRAY, R_THREAD };

/* JVMTI reference kinds (jvmti.h) the converter uses. */
enum {
	K_FIELD = 2, K_ELEMENT = 3, K_SIGNERS = 5, K_DOMAIN = 6, K_STATIC = 8, K_CONSTANT = 9,
	K_JNI_GLOBAL = 21, K_SYSTEM_CLASS = 22, K_MONITOR = 23, K_STACK_LOCAL = 24,
	K_JNI_LOCAL = 25, K_THREAD = 26
};

#define MAX_STR (1u << 20)
#define STRING_IDS (1ULL << 40)	/* HPROF string ids, apart from object ids */
#define FRAME_IDS (2ULL << 40)

struct sfield {
	char *name, *sig;
	uint8_t is_static;
};

struct sclass {
	uint64_t id, super, loader;
	uint32_t nif;		/* fields of the interfaces it implements */
	char *sig;
	uint16_t nf;
	struct sfield *f;
	/* Layout, made when first needed: */
	int32_t *slot_off;	/* [all fields of the chain] offset in the values, -1 static */
	uint8_t *slot_type;	/* HPROF type */
	uint32_t nslots, bytes;	/* chain fields; bytes of instance values */
};

struct sframe {
	char *cls, *method, *msig;
};

struct sthread {
	uint64_t obj;
	uint32_t serial;
	char *name;
	uint32_t nframes;
	struct sframe *fr;
};

struct sref {
	uint32_t from, to;
	int32_t index;
	uint8_t kind;
};

struct sroot {
	uint32_t obj, thread;
	int32_t depth;
	uint8_t kind;
};

struct sprim {
	uint32_t obj;
	int32_t index;
	uint8_t kind, type;
	uint64_t bits;
};

struct snap_builder {
	uint8_t *carry;		/* a record cut by the end of a frame */
	size_t carry_len, carry_cap;
	size_t carry_need;	/* bytes the carry holds before its record is read again */
	struct sclass *cls;	/* by id - 1 (classes are ids 1..ncls) */
	uint32_t ncls;
	struct sthread *th;
	uint32_t nth;
	uint32_t *obj_cls;	/* [id] class id, 0 = no OBJECT record */
	int32_t *obj_len;	/* [id] array length, -1 */
	uint8_t *obj_parr;	/* [id] 1 when its PRIMITIVE ARRAY record came */
	uint32_t nobj_cap, max_id;
	uint64_t nrec;		/* records read so far */
	uint64_t nobjects;
	struct sref *ref;
	size_t nref, ref_cap;
	struct sroot *root;
	size_t nroot, root_cap;
	struct sprim *prim;
	size_t nprim, prim_cap;
	FILE *arrays;		/* PRIMITIVE ARRAY DUMP sub-records, written as they come */
	uint64_t arrays_bytes;
	uint64_t heap_bytes;	/* snap_heap_bound; 0: unbounded */
};

void snap_heap_bound(struct snap_builder *b, uint64_t heap_bytes)
{
	b->heap_bytes = heap_bytes;
}

/* The most objects a heap of b->heap_bytes holds (8 bytes each at least), plus the classes. */
/*
 * max_objects: the largest id a record may name now. The agent numbers
 * objects as its walk meets them, writing a record each time (docs/
 * protocol.md), and tags at most the loaders and threads ahead of their
 * records: so an id beyond twice the records read, plus room for those, is
 * malformed whatever heap size INFO claimed, and what heapsh allocates for
 * ids grows with the bytes received, not with what a record says.
 */
#define ID_SLACK (1u << 20)
static uint64_t max_objects(const struct snap_builder *b)
{
	uint64_t by_heap = b->heap_bytes ? b->heap_bytes / 8 + b->ncls + 1024 : UINT32_MAX;
	uint64_t by_stream = b->ncls + 2 * b->nrec + ID_SLACK;
	return by_heap < by_stream ? by_heap : by_stream;
}

/* Whether an array of len elements of es bytes fits in the heap. */
static bool array_fits(const struct snap_builder *b, uint64_t len, uint64_t es)
{
	return len * es <= (1ULL << 31) && (!b->heap_bytes || len * es <= b->heap_bytes);
}

struct snap_builder *snap_new(void)
{
	return xcalloc(1, sizeof(struct snap_builder));
}

void snap_free(struct snap_builder *b)
{
	if (!b)
		return;
	for (uint32_t i = 0; i < b->ncls; i++) {
		struct sclass *c = &b->cls[i];
		for (unsigned k = 0; k < c->nf; k++) {
			free(c->f[k].name);
			free(c->f[k].sig);
		}
		free(c->f);
		free(c->sig);
		free(c->slot_off);
		free(c->slot_type);
	}
	for (uint32_t i = 0; i < b->nth; i++) {
		for (uint32_t k = 0; k < b->th[i].nframes; k++) {
			free(b->th[i].fr[k].cls);
			free(b->th[i].fr[k].method);
			free(b->th[i].fr[k].msig);
		}
		free(b->th[i].fr);
		free(b->th[i].name);
	}
	free(b->th);
	free(b->cls);
	free(b->carry);
	free(b->obj_cls);
	free(b->obj_len);
	free(b->obj_parr);
	free(b->ref);
	free(b->root);
	free(b->prim);
	if (b->arrays)
		fclose(b->arrays);
	free(b);
}

char *snap_java_name(const char *sig)
{
	char *out = xmalloc(CN_JAVA_NAME_MAX(sig));
	cn_java_name(sig, true, out, CN_JAVA_NAME_MAX(sig));
	return out;
}

/* ---- reading records ---- */

/* cut: the record read so far goes on in the next frame (the reader's only error then). */
static bool cut(const struct wire_r *r)
{
	return r->err == WIRE_SHORT;
}

static size_t jvmti_prim_size(uint8_t t)
{
	switch (t) {
	case 'Z': case 'B': return 1;
	case 'C': case 'S': return 2;
	case 'I': case 'F': return 4;
	case 'J': case 'D': return 8;
	default: return 0;
	}
}

static uint8_t hprof_type_of(char t)
{
	switch (t) {
	case 'Z': return HPROF_BOOLEAN;
	case 'B': return HPROF_BYTE;
	case 'C': return HPROF_CHAR;
	case 'S': return HPROF_SHORT;
	case 'I': return HPROF_INT;
	case 'J': return HPROF_LONG;
	case 'F': return HPROF_FLOAT;
	case 'D': return HPROF_DOUBLE;
	default: return HPROF_OBJECT;
	}
}

static size_t hprof_size_of(uint8_t t)
{
	switch (t) {
	case HPROF_BOOLEAN: case HPROF_BYTE: return 1;
	case HPROF_CHAR: case HPROF_SHORT: return 2;
	case HPROF_INT: case HPROF_FLOAT: return 4;
	default: return 8;
	}
}

static bool grow_objs(struct snap_builder *b, uint64_t id)
{
	if (id >= UINT32_MAX - 1 || id > max_objects(b))
		return false;
	if (id < b->nobj_cap)
		return true;
	uint32_t cap = b->nobj_cap ? b->nobj_cap : 1024;
	while (cap <= id)
		cap = cap > UINT32_MAX / 2 ? UINT32_MAX - 1 : cap * 2;
	b->obj_cls = xreallocarray(b->obj_cls, cap, sizeof *b->obj_cls);
	b->obj_len = xreallocarray(b->obj_len, cap, sizeof *b->obj_len);
	b->obj_parr = xreallocarray(b->obj_parr, cap, 1);
	memset(b->obj_cls + b->nobj_cap, 0, (size_t)(cap - b->nobj_cap) * sizeof *b->obj_cls);
	memset(b->obj_parr + b->nobj_cap, 0, cap - b->nobj_cap);
	b->nobj_cap = cap;
	return true;
}

#define PUSH(arr, n, cap, val)                                               \
	do {                                                                 \
		if ((n) == (cap)) {                                          \
			(cap) = (cap) ? (cap) * 2 : 4096;                    \
			(arr) = xreallocarray((arr), (cap), sizeof *(arr));  \
		}                                                            \
		(arr)[(n)++] = (val);                                        \
	} while (0)

/*
 * one_record: parse the record at r. 1: done; 0: it goes on in the next
 * frame (the caller reads it again from its start); -1: malformed (err set).
 */
static int one_record(struct snap_builder *b, struct wire_r *r, struct hs_error *err)
{
	bool bad = false;
	uint8_t tag = wire_get8(r);
	switch (tag) {
	case R_CLASS: {
		struct sclass c = {0};
		c.id = wire_get64(r);
		c.super = wire_get64(r);
		c.loader = wire_get64(r);
		c.nif = wire_get32(r);
		c.sig = wire_get_strdup(r, MAX_STR);
		c.nf = wire_get16(r);
		c.f = xcalloc((size_t)c.nf + 1, sizeof *c.f);
		for (unsigned k = 0; k < c.nf && !r->err && !bad; k++) {
			c.f[k].name = wire_get_strdup(r, MAX_STR);
			c.f[k].sig = wire_get_strdup(r, MAX_STR);
			c.f[k].is_static = wire_get8(r);
		}
		bool ok = !r->err && !bad && c.id == (uint64_t)b->ncls + 1;
		if (ok) {
			b->cls = xreallocarray(b->cls, b->ncls + 1, sizeof *b->cls);
			b->cls[b->ncls++] = c;
			for (unsigned k = 0; k < c.nf; k++)
				if (!c.f[k].name || !c.f[k].sig)
					bad = true;
			if (!bad)
				return 1;
			b->ncls--;
		}
		for (unsigned k = 0; k < c.nf; k++) {
			free(c.f[k].name);
			free(c.f[k].sig);
		}
		free(c.f);
		free(c.sig);
		if (cut(r) && !bad)
			return 0;
		snprintf(err->msg, sizeof err->msg, "snapshot: a malformed CLASS record (class %llu)",
			 (unsigned long long)c.id);
		return -1;
	}
	case R_OBJECT: {
		uint64_t id = wire_get64(r), cls = wire_get64(r);
		wire_get64(r);
		int32_t len = (int32_t)wire_get32(r);
		if (cut(r))
			return 0;
		if (!id || !cls || cls > b->ncls || !grow_objs(b, id) ||
		    (len > 0 && !array_fits(b, (uint64_t)len, 4))) {
			snprintf(err->msg, sizeof err->msg, "snapshot: an OBJECT record with id %llu, "
				 "class %llu and length %d (the JVM's heap holds %llu bytes)",
				 (unsigned long long)id, (unsigned long long)cls, len,
				 (unsigned long long)b->heap_bytes);
			return -1;
		}
		b->obj_cls[id] = (uint32_t)cls;
		b->obj_len[id] = len;
		if (id > b->max_id)
			b->max_id = (uint32_t)id;
		b->nobjects++;
		return 1;
	}
	case R_REFERENCE: {
		uint64_t from = wire_get64(r);
		uint8_t kind = wire_get8(r);
		int32_t index = (int32_t)wire_get32(r);
		uint64_t to = wire_get64(r);
		if (cut(r))
			return 0;
		if (from >= UINT32_MAX - 1 || to >= UINT32_MAX - 1) {
			snprintf(err->msg, sizeof err->msg, "snapshot: more than 4 billion objects");
			return -1;
		}
		struct sref x = {(uint32_t)from, (uint32_t)to, index, kind};
		PUSH(b->ref, b->nref, b->ref_cap, x);
		return 1;
	}
	case R_ROOT: {
		uint8_t kind = wire_get8(r);
		uint64_t obj = wire_get64(r), thread = wire_get64(r);
		int32_t depth = (int32_t)wire_get32(r);
		if (cut(r))
			return 0;
		if (obj >= UINT32_MAX - 1 || thread >= UINT32_MAX - 1) {
			snprintf(err->msg, sizeof err->msg, "snapshot: more than 4 billion objects");
			return -1;
		}
		struct sroot x = {(uint32_t)obj, (uint32_t)thread, depth, kind};
		PUSH(b->root, b->nroot, b->root_cap, x);
		return 1;
	}
	case R_PRIMITIVE: {
		uint64_t obj = wire_get64(r);
		uint8_t kind = wire_get8(r);
		int32_t index = (int32_t)wire_get32(r);
		uint8_t type = wire_get8(r);
		uint64_t bits = wire_get64(r);
		if (cut(r))
			return 0;
		if (obj >= UINT32_MAX - 1 || !jvmti_prim_size(type)) {
			snprintf(err->msg, sizeof err->msg, "snapshot: a PRIMITIVE record of type %u",
				 type);
			return -1;
		}
		struct sprim x = {(uint32_t)obj, index, kind, type, bits};
		PUSH(b->prim, b->nprim, b->prim_cap, x);
		return 1;
	}
	case R_PRIMARRAY: {
		uint64_t id = wire_get64(r);
		uint8_t type = wire_get8(r);
		uint32_t count = wire_get32(r);
		size_t es = jvmti_prim_size(type);
		if (cut(r))
			return 0;
		if (!es || !array_fits(b, count, es) || !grow_objs(b, id)) {
			snprintf(err->msg, sizeof err->msg, "snapshot: a PRIMITIVE ARRAY record of "
				 "%u elements of type %u", count, type);
			return -1;
		}
		size_t bytes = (size_t)count * es;
		const uint8_t *el = wire_get_bytes(r, bytes);
		if (!el)
			return 0;
		if (!b->arrays && !(b->arrays = tmpfile())) {
			snprintf(err->msg, sizeof err->msg, "snapshot: cannot create a temporary "
				 "file: %s", strerror(errno));
			return -1;
		}
		/* PRIM ARRAY DUMP: tag, id, stack serial, count, type, big-endian elements. */
		uint8_t h[1 + 8 + 4 + 4 + 1];
		h[0] = HPROF_GC_PRIM_ARRAY_DUMP;
		wire_store64(h + 1, id);
		wire_store32(h + 9, 0);
		wire_store32(h + 13, count);
		h[17] = hprof_type_of((char)type);
		fwrite(h, 1, sizeof h, b->arrays);
		uint8_t buf[4096];
		for (size_t off = 0; off < bytes;) {
			size_t n = bytes - off < sizeof buf ? bytes - off : sizeof buf;
			n -= n % es;
			for (size_t k = 0; k < n; k += es)	/* the JVM's order to big-endian */
				for (size_t j = 0; j < es; j++)
					buf[k + j] = el[off + k + es - 1 - j];
			fwrite(buf, 1, n, b->arrays);
			off += n;
		}
		b->obj_parr[id] = 1;
		b->arrays_bytes += sizeof h + bytes;
		return 1;
	}
	case R_THREAD: {
		struct sthread t = {0};
		t.obj = wire_get64(r);
		t.serial = wire_get32(r);
		t.name = wire_get_strdup(r, MAX_STR);
		t.nframes = wire_get32(r);
		if (t.nframes > 65536)
			bad = true;
		if (bad || r->err)
			t.nframes = 0;	/* nothing read, nothing to free */
		t.fr = xcalloc((size_t)t.nframes + 1, sizeof *t.fr);
		for (uint32_t k = 0; k < t.nframes && !r->err && !bad; k++) {
			t.fr[k].cls = wire_get_strdup(r, MAX_STR);
			t.fr[k].method = wire_get_strdup(r, MAX_STR);
			t.fr[k].msig = wire_get_strdup(r, MAX_STR);
		}
		if (!r->err && !bad && t.obj < UINT32_MAX - 1) {
			b->th = xreallocarray(b->th, b->nth + 1, sizeof *b->th);
			b->th[b->nth++] = t;
			return 1;
		}
		for (uint32_t k = 0; k < t.nframes && t.fr; k++) {
			free(t.fr[k].cls);
			free(t.fr[k].method);
			free(t.fr[k].msig);
		}
		free(t.fr);
		free(t.name);
		if (cut(r) && !bad)
			return 0;
		snprintf(err->msg, sizeof err->msg, "snapshot: a malformed THREAD record");
		return -1;
	}
	default:
		if (cut(r))
			return 0;
		snprintf(err->msg, sizeof err->msg, "snapshot: unknown record type %u", tag);
		return -1;
	}
}

/*
 * parse: the whole records of data[0..n); what follows them, a record cut
 * by the end of a frame, is kept in the carry (data may be the carry). A
 * cut record is read again only once the carry has doubled (carry_need),
 * or at the end of the stream: a record arriving in many small frames is
 * then read a logarithmic number of times, not once a frame.
 */
static int parse(struct snap_builder *b, const uint8_t *data, size_t n, struct hs_error *err)
{
	struct wire_r r = wire_reader(data, n);
	while (wire_left(&r)) {
		struct wire_r rec = r;	/* a record cut short is read again whole */
		int k = one_record(b, &rec, err);
		if (k < 0 && rec.err == WIRE_NOMEM)
			snprintf(err->msg, sizeof err->msg, "snapshot: out of memory for a record's "
				 "strings");
		if (k < 0)
			return HS_ERR;
		if (k == 0)
			break;
		b->nrec++;
		r = rec;
	}
	size_t rest = wire_left(&r);
	if (rest && data != b->carry) {
		if (rest > b->carry_cap) {
			b->carry_cap = rest * 2;
			b->carry = xrealloc(b->carry, b->carry_cap);
		}
		memcpy(b->carry, r.p, rest);
	} else if (rest) {
		memmove(b->carry, r.p, rest);
	}
	b->carry_len = rest;
	b->carry_need = 2 * rest;
	return HS_OK;
}

int snap_feed(struct snap_builder *b, const uint8_t *p, size_t n, struct hs_error *err)
{
	if (!b->carry_len)
		return parse(b, p, n, err);
	/* Complete the cut record first. */
	if (b->carry_len + n > b->carry_cap) {
		b->carry_cap = (b->carry_len + n) * 2;
		b->carry = xrealloc(b->carry, b->carry_cap);
	}
	if (n)
		memcpy(b->carry + b->carry_len, p, n);
	b->carry_len += n;
	return b->carry_len < b->carry_need ? HS_OK : parse(b, b->carry, b->carry_len, err);
}

/* ---- writing HPROF ---- */

/* The HPROF file being written, through the codec's writer drained to f. */
struct hw {
	FILE *f;
	struct wire_w w;
	int64_t seg_at;		/* file offset of the open segment's length field, or -1 */
	bool failed;		/* a seek or read failed (the writer's own errors are w.err) */
};

static void record(struct hw *o, uint8_t tag, uint32_t len)
{
	wire_put8(&o->w, tag);
	wire_put32(&o->w, 0);
	wire_put32(&o->w, len);
}

static void utf8(struct hw *o, uint64_t sid, const char *s)
{
	size_t n = strlen(s);
	record(o, HPROF_UTF8, (uint32_t)(8 + n));
	wire_put64(&o->w, sid);
	wire_put_bytes(&o->w, s, n);
}

/* seg_bytes: the open segment's bytes after its length field. */
static uint64_t seg_bytes(const struct hw *o)
{
	return wire_w_pos(&o->w) - (uint64_t)o->seg_at - 4;
}

static void seg_close(struct hw *o)
{
	if (o->seg_at < 0)
		return;
	uint8_t x[4];
	wire_store32(x, (uint32_t)seg_bytes(o));
	/* Drained first: the file then holds every byte and ends where the writer is. */
	if (!wire_w_drain(&o->w) || fseek(o->f, o->seg_at, SEEK_SET) != 0 ||
	    fwrite(x, 1, 4, o->f) != 4 || fseek(o->f, 0, SEEK_END) != 0)
		o->failed = true;
	o->seg_at = -1;
}

/* seg_room: make sure the open segment can take n more bytes (segments stay under 1 GiB). */
static void seg_room(struct hw *o, uint64_t n)
{
	if (o->seg_at >= 0 && seg_bytes(o) + n < (1u << 30))
		return;
	seg_close(o);
	wire_put8(&o->w, HPROF_HEAP_DUMP_SEGMENT);
	wire_put32(&o->w, 0);
	o->seg_at = (int64_t)wire_w_pos(&o->w);
	wire_put32(&o->w, 0);
}

/* internal: "Ljava/lang/String;" -> "java/lang/String"; arrays stay signatures. */
static char *internal_name(const char *sig)
{
	size_t n = strlen(sig);
	if (sig[0] == 'L' && n >= 2 && sig[n - 1] == ';')
		return xstrndup(sig + 1, n - 2);
	return xstrdup(sig);
}

static struct sclass *cls_of(struct snap_builder *b, uint64_t id)
{
	return id >= 1 && id <= b->ncls ? &b->cls[id - 1] : NULL;
}

/*
 * layout: where each field of c's chain goes in an INSTANCE DUMP. Slot s
 * is JVMTI index nif + s: the chain's fields from java.lang.Object down to
 * c, each class's in declaration order. HPROF puts c's own fields first.
 */
static void layout(struct snap_builder *b, struct sclass *c)
{
	if (c->slot_off)
		return;
	struct sclass *chain[256];
	int depth = 0;
	for (struct sclass *k = c; k && depth < 256; k = cls_of(b, k->super))
		chain[depth++] = k;
	uint32_t nslots = 0, bytes = 0;
	for (int d = 0; d < depth; d++)
		nslots += chain[d]->nf;
	c->slot_off = xmallocarray((size_t)nslots + 1, sizeof *c->slot_off);
	c->slot_type = xmallocarray((size_t)nslots + 1, 1);
	/* Offsets: c's own instance fields first, then its superclass's. */
	uint32_t *own_off = xmallocarray((size_t)depth + 1, sizeof *own_off);
	for (int d = 0; d < depth; d++) {
		own_off[d] = bytes;
		for (unsigned k = 0; k < chain[d]->nf; k++)
			if (!chain[d]->f[k].is_static)
				bytes += (uint32_t)hprof_size_of(hprof_type_of(chain[d]->f[k].sig[0]));
	}
	uint32_t s = 0;
	for (int d = depth; d-- > 0;) {
		uint32_t off = own_off[d];
		for (unsigned k = 0; k < chain[d]->nf; k++, s++) {
			const struct sfield *f = &chain[d]->f[k];
			c->slot_type[s] = hprof_type_of(f->sig[0]);
			if (f->is_static) {
				c->slot_off[s] = -1;
			} else {
				c->slot_off[s] = (int32_t)off;
				off += (uint32_t)hprof_size_of(c->slot_type[s]);
			}
		}
	}
	free(own_off);
	c->nslots = nslots;
	c->bytes = bytes;
}

/* by_owner: counting sort of items by their object (CSR start[] over ids). */
static uint32_t *by_owner(uint32_t max_id, size_t n, const void *items, size_t stride,
			  uint32_t **order)
{
	uint32_t *start = xcalloc((size_t)max_id + 2, sizeof *start);
	for (size_t i = 0; i < n; i++) {
		uint32_t o = *(const uint32_t *)((const uint8_t *)items + i * stride);
		if (o <= max_id)
			start[o + 1]++;
	}
	for (uint32_t i = 0; i <= max_id; i++)
		start[i + 1] += start[i];
	uint32_t *fill = xmallocarray((size_t)max_id + 2, sizeof *fill);
	memcpy(fill, start, ((size_t)max_id + 2) * sizeof *fill);
	*order = xmallocarray(n + 1, sizeof **order);
	for (size_t i = 0; i < n; i++) {
		uint32_t o = *(const uint32_t *)((const uint8_t *)items + i * stride);
		if (o <= max_id)
			(*order)[fill[o]++] = (uint32_t)i;
	}
	free(fill);
	return start;
}

static void value_at(uint8_t *vals, int32_t off, uint8_t type, uint64_t bits)
{
	wire_store_be(vals + off, bits, hprof_size_of(type));
}

static uint8_t root_tag(uint8_t kind)
{
	switch (kind) {
	case K_JNI_GLOBAL: return HPROF_GC_ROOT_JNI_GLOBAL;
	case K_SYSTEM_CLASS: return HPROF_GC_ROOT_STICKY_CLASS;
	case K_MONITOR: return HPROF_GC_ROOT_MONITOR_USED;
	case K_STACK_LOCAL: return HPROF_GC_ROOT_JAVA_FRAME;
	case K_JNI_LOCAL: return HPROF_GC_ROOT_JNI_LOCAL;
	case K_THREAD: return HPROF_GC_ROOT_THREAD_OBJ;
	default: return HPROF_GC_ROOT_UNKNOWN;
	}
}

static void write_roots(struct snap_builder *b, struct hw *o, struct u64map *thread_serial)
{
	for (size_t i = 0; i < b->nroot; i++) {
		const struct sroot *r = &b->root[i];
		uint64_t serial = 0;
		u64map_get(thread_serial, r->thread, &serial);
		uint8_t t = root_tag(r->kind);
		seg_room(o, 1 + 8 + 8);
		wire_put8(&o->w, t);
		wire_put64(&o->w, r->obj);
		switch (t) {
		case HPROF_GC_ROOT_JNI_GLOBAL:
			wire_put64(&o->w, 0);
			break;
		case HPROF_GC_ROOT_JAVA_FRAME:
		case HPROF_GC_ROOT_JNI_LOCAL:
			wire_put32(&o->w, (uint32_t)serial);
			wire_put32(&o->w, r->depth < 0 ? UINT32_MAX : (uint32_t)r->depth);
			break;
		case HPROF_GC_ROOT_THREAD_OBJ:
			u64map_get(thread_serial, r->obj, &serial);
			wire_put32(&o->w, (uint32_t)serial);
			wire_put32(&o->w, (uint32_t)serial);
			break;
		default:
			break;
		}
	}
}

static void write_class_dumps(struct snap_builder *b, struct hw *o, const uint32_t *rstart,
			      const uint32_t *rorder, const uint32_t *pstart, const uint32_t *porder,
			      uint64_t sid_base)
{
	uint64_t sid = sid_base;
	for (uint32_t ci = 0; ci < b->ncls; ci++) {
		struct sclass *c = &b->cls[ci];
		layout(b, c);
		uint64_t signers = 0, domain = 0;
		uint32_t id = (uint32_t)c->id;
		/* Static values: by JVMTI index, c's own fields being the chain's last. */
		uint32_t own0 = c->nslots - c->nf;
		uint64_t *sv = xcalloc((size_t)c->nf + 1, sizeof *sv);
		for (uint32_t k = id <= b->max_id ? rstart[id] : 0; id <= b->max_id && k < rstart[id + 1]; k++) {
			const struct sref *r = &b->ref[rorder[k]];
			if (r->kind == K_SIGNERS)
				signers = r->to;
			else if (r->kind == K_DOMAIN)
				domain = r->to;
			else if (r->kind == K_STATIC && r->index >= (int32_t)(c->nif + own0) &&
				 r->index < (int32_t)(c->nif + c->nslots))
				sv[r->index - c->nif - own0] = r->to;
		}
		for (uint32_t k = id <= b->max_id ? pstart[id] : 0; id <= b->max_id && k < pstart[id + 1]; k++) {
			const struct sprim *p = &b->prim[porder[k]];
			if (p->kind == K_STATIC && p->index >= (int32_t)(c->nif + own0) &&
			    p->index < (int32_t)(c->nif + c->nslots))
				sv[p->index - c->nif - own0] = p->bits;
		}
		uint16_t nstat = 0, ninst = 0, ncp = 0;
		for (unsigned k = 0; k < c->nf; k++)
			nstat += c->f[k].is_static, ninst += !c->f[k].is_static;
		for (uint32_t k = id <= b->max_id ? rstart[id] : 0; id <= b->max_id && k < rstart[id + 1]; k++)
			ncp += b->ref[rorder[k]].kind == K_CONSTANT && ncp < UINT16_MAX;
		seg_room(o, 1 + 7 * 8 + 4 + 4 + 2 + 2 + (uint64_t)c->nf * (8 + 1 + 8) + 2 +
			    (uint64_t)ncp * (2 + 1 + 8));
		wire_put8(&o->w, HPROF_GC_CLASS_DUMP);
		wire_put64(&o->w, c->id);
		wire_put32(&o->w, 0);
		wire_put64(&o->w, c->super);
		wire_put64(&o->w, c->loader);
		wire_put64(&o->w, signers);
		wire_put64(&o->w, domain);
		wire_put64(&o->w, 0);
		wire_put64(&o->w, 0);
		wire_put32(&o->w, c->sig[0] == '[' ? 0 : c->bytes);
		wire_put16(&o->w, ncp);	/* resolved constants (strings, classes) */
		uint16_t done = 0;
		for (uint32_t k = id <= b->max_id ? rstart[id] : 0;
		     id <= b->max_id && k < rstart[id + 1] && done < ncp; k++) {
			const struct sref *r = &b->ref[rorder[k]];
			if (r->kind != K_CONSTANT)
				continue;
			wire_put16(&o->w, (uint16_t)r->index);
			wire_put8(&o->w, HPROF_OBJECT);
			wire_put64(&o->w, r->to);
			done++;
		}
		wire_put16(&o->w, nstat);
		for (unsigned k = 0; k < c->nf; k++) {
			if (!c->f[k].is_static)
				continue;
			uint8_t t = hprof_type_of(c->f[k].sig[0]);
			wire_put64(&o->w, sid + k);
			wire_put8(&o->w, t);
			uint8_t *x = wire_w_at(&o->w, hprof_size_of(t));
			if (x)
				wire_store_be(x, sv[k], hprof_size_of(t));
		}
		wire_put16(&o->w, ninst);
		for (unsigned k = 0; k < c->nf; k++) {
			if (c->f[k].is_static)
				continue;
			wire_put64(&o->w, sid + k);
			wire_put8(&o->w, hprof_type_of(c->f[k].sig[0]));
		}
		sid += c->nf;
		free(sv);
	}
}

static void write_objects(struct snap_builder *b, struct hw *o, const uint32_t *rstart,
			  const uint32_t *rorder, const uint32_t *pstart, const uint32_t *porder)
{
	uint8_t *vals = NULL;
	size_t vcap = 0;
	for (uint32_t id = 1; id <= b->max_id; id++) {
		if (!b->obj_cls[id] || id <= b->ncls)
			continue;
		struct sclass *c = cls_of(b, b->obj_cls[id]);
		if (c->sig[0] == '[' && c->sig[1] != 'L' && c->sig[1] != '[') {
			if (b->obj_parr[id])
				continue;	/* written as it came */
			/* An array the walk gave no elements for: zeros of its length. */
			uint8_t t = hprof_type_of(c->sig[1]);
			uint32_t len = b->obj_len[id] > 0 ? (uint32_t)b->obj_len[id] : 0;
			size_t bytes = (size_t)len * hprof_size_of(t);
			seg_room(o, 18 + bytes);
			wire_put8(&o->w, HPROF_GC_PRIM_ARRAY_DUMP);
			wire_put64(&o->w, id);
			wire_put32(&o->w, 0);
			wire_put32(&o->w, len);
			wire_put8(&o->w, t);
			uint8_t zero[256] = {0};
			for (size_t k = 0; k < bytes; k += sizeof zero)
				wire_put_bytes(&o->w, zero, bytes - k < sizeof zero ? bytes - k : sizeof zero);
			continue;
		}
		if (c->sig[0] == '[') {
			uint32_t len = b->obj_len[id] > 0 ? (uint32_t)b->obj_len[id] : 0;
			size_t bytes = (size_t)len * 8;
			if (bytes > vcap) {
				vcap = bytes * 2;
				vals = xrealloc(vals, vcap);
			}
			if (bytes)
				memset(vals, 0, bytes);
			for (uint32_t k = rstart[id]; k < rstart[id + 1]; k++) {
				const struct sref *r = &b->ref[rorder[k]];
				if (r->kind == K_ELEMENT && r->index >= 0 && (uint32_t)r->index < len)
					wire_store64(vals + (size_t)r->index * 8, r->to);
			}
			seg_room(o, 1 + 8 + 4 + 4 + 8 + bytes);
			wire_put8(&o->w, HPROF_GC_OBJ_ARRAY_DUMP);
			wire_put64(&o->w, id);
			wire_put32(&o->w, 0);
			wire_put32(&o->w, len);
			wire_put64(&o->w, c->id);
			wire_put_bytes(&o->w, vals, bytes);
			continue;
		}
		layout(b, c);
		if (c->bytes > vcap) {
			vcap = (size_t)c->bytes * 2 + 64;
			vals = xrealloc(vals, vcap);
		}
		if (c->bytes)
			memset(vals, 0, c->bytes);
		for (uint32_t k = rstart[id]; k < rstart[id + 1]; k++) {
			const struct sref *r = &b->ref[rorder[k]];
			int64_t s = (int64_t)r->index - c->nif;
			if (r->kind == K_FIELD && s >= 0 && s < c->nslots && c->slot_off[s] >= 0 &&
			    c->slot_type[s] == HPROF_OBJECT)
				value_at(vals, c->slot_off[s], HPROF_OBJECT, r->to);
		}
		for (uint32_t k = pstart[id]; k < pstart[id + 1]; k++) {
			const struct sprim *p = &b->prim[porder[k]];
			int64_t s = (int64_t)p->index - c->nif;
			if (p->kind == K_FIELD && s >= 0 && s < c->nslots && c->slot_off[s] >= 0 &&
			    c->slot_type[s] == hprof_type_of((char)p->type))
				value_at(vals, c->slot_off[s], c->slot_type[s], p->bits);
		}
		seg_room(o, 1 + 8 + 4 + 8 + 4 + c->bytes);
		wire_put8(&o->w, HPROF_GC_INSTANCE_DUMP);
		wire_put64(&o->w, id);
		wire_put32(&o->w, 0);
		wire_put64(&o->w, c->id);
		wire_put32(&o->w, c->bytes);
		wire_put_bytes(&o->w, vals, c->bytes);
	}
	free(vals);
}

int snap_write_hprof(struct snap_builder *b, const char *path, uint64_t objects,
		     struct hs_error *err)
{
	if (b->carry_len && parse(b, b->carry, b->carry_len, err))
		return HS_ERR;	/* what the carry held, read now that no more comes */
	if (b->carry_len) {
		snprintf(err->msg, sizeof err->msg, "snapshot: the stream ended inside a record");
		return HS_ERR;
	}
	if (objects != b->nobjects) {
		snprintf(err->msg, sizeof err->msg, "snapshot: the agent counted %llu objects, the "
			 "records hold %llu", (unsigned long long)objects,
			 (unsigned long long)b->nobjects);
		return HS_ERR;
	}
	struct hw o = {fopen(path, "w"), {0}, -1, false};
	if (!o.f) {
		snprintf(err->msg, sizeof err->msg, "cannot write %s: %s", path, strerror(errno));
		return HS_ERR;
	}
	if (!wire_w_sink(&o.w, 1 << 20, wire_file_sink, o.f)) {
		fclose(o.f);
		unlink(path);
		snprintf(err->msg, sizeof err->msg, "cannot write %s: out of memory", path);
		return HS_ERR;
	}
	grow_objs(b, b->max_id + 1);
	static const char head[] = "JAVA PROFILE 1.0.2";
	wire_put_bytes(&o.w, head, sizeof head);
	wire_put32(&o.w, 8);
	uint64_t ms = (uint64_t)time(NULL) * 1000;
	wire_put32(&o.w, (uint32_t)(ms >> 32));
	wire_put32(&o.w, (uint32_t)ms);
	/* Strings and LOAD CLASS: class names, then field names, then frames. */
	uint64_t sid = STRING_IDS;
	for (uint32_t i = 0; i < b->ncls; i++) {
		char *n = internal_name(b->cls[i].sig);
		utf8(&o, sid++, n);
		free(n);
	}
	uint64_t field_sids = sid;
	for (uint32_t i = 0; i < b->ncls; i++)
		for (unsigned k = 0; k < b->cls[i].nf; k++)
			utf8(&o, sid++, b->cls[i].f[k].name);
	for (uint32_t i = 0; i < b->ncls; i++) {
		record(&o, HPROF_LOAD_CLASS, 4 + 8 + 4 + 8);
		wire_put32(&o.w, i + 1);
		wire_put64(&o.w, b->cls[i].id);
		wire_put32(&o.w, 0);
		wire_put64(&o.w, STRING_IDS + i);
	}
	struct u64map serial;
	u64map_init(&serial, b->nth + 16);
	uint64_t frame_id = FRAME_IDS;
	for (uint32_t t = 0; t < b->nth; t++) {
		const struct sthread *th = &b->th[t];
		u64map_put(&serial, th->obj, th->serial);
		uint64_t first = frame_id;
		for (uint32_t k = 0; k < th->nframes; k++) {
			uint64_t s_m = sid++, s_sig = sid++;
			utf8(&o, s_m, th->fr[k].method);
			utf8(&o, s_sig, th->fr[k].msig);
			uint32_t cserial = 0;
			for (uint32_t i = 0; i < b->ncls && !cserial; i++)
				if (!strcmp(b->cls[i].sig, th->fr[k].cls))
					cserial = i + 1;
			record(&o, HPROF_FRAME, 4 * 8 + 4 + 4);
			wire_put64(&o.w, frame_id++);
			wire_put64(&o.w, s_m);
			wire_put64(&o.w, s_sig);
			wire_put64(&o.w, 0);
			wire_put32(&o.w, cserial);
			wire_put32(&o.w, (uint32_t)-1);
		}
		record(&o, HPROF_TRACE, 12 + th->nframes * 8);
		wire_put32(&o.w, th->serial);
		wire_put32(&o.w, th->serial);
		wire_put32(&o.w, th->nframes);
		for (uint64_t f = first; f < frame_id; f++)
			wire_put64(&o.w, f);
	}
	/* The heap: roots, classes, objects, then the primitive arrays already written. */
	uint32_t *rorder, *porder;
	uint32_t *rstart = by_owner(b->max_id + 1, b->nref, b->ref, sizeof *b->ref, &rorder);
	uint32_t *pstart = by_owner(b->max_id + 1, b->nprim, b->prim, sizeof *b->prim, &porder);
	write_roots(b, &o, &serial);
	write_class_dumps(b, &o, rstart, rorder, pstart, porder, field_sids);
	write_objects(b, &o, rstart, rorder, pstart, porder);
	free(rstart);
	free(rorder);
	free(pstart);
	free(porder);
	u64map_free(&serial);
	if (b->arrays) {
		rewind(b->arrays);
		uint8_t buf[1 << 16];
		/* Copy whole sub-records so that none is split between segments. */
		for (uint64_t left = b->arrays_bytes; left && !o.failed && !o.w.err;) {
			uint8_t h[18];
			if (fread(h, 1, sizeof h, b->arrays) != sizeof h) {
				o.failed = true;
				break;
			}
			uint32_t count = wire_load32(h + 13);
			uint64_t bytes = (uint64_t)count * hprof_size_of(h[17]);
			seg_room(&o, sizeof h + bytes);
			wire_put_bytes(&o.w, h, sizeof h);
			for (uint64_t k = 0; k < bytes;) {
				size_t n = bytes - k < sizeof buf ? (size_t)(bytes - k) : sizeof buf;
				if (fread(buf, 1, n, b->arrays) != n) {
					o.failed = true;
					break;
				}
				wire_put_bytes(&o.w, buf, n);
				k += n;
			}
			left -= sizeof h + bytes;
		}
	}
	seg_close(&o);
	record(&o, HPROF_HEAP_DUMP_END, 0);
	if (!wire_w_drain(&o.w))
		o.failed = true;
	wire_w_free(&o.w);
	if (fclose(o.f) != 0)
		o.failed = true;
	if (o.failed) {
		snprintf(err->msg, sizeof err->msg, "writing %s failed: %s (disk full?)", path,
			 strerror(errno));
		unlink(path);
		return HS_ERR;
	}
	return HS_OK;
}
