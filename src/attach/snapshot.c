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

struct rd {
	const uint8_t *p, *end;
	bool short_;		/* the record goes on in the next frame */
};

static bool avail(struct rd *r, size_t n)
{
	if ((size_t)(r->end - r->p) < n)
		r->short_ = true;
	return !r->short_;
}
static uint8_t rd_u8(struct rd *r) { return avail(r, 1) ? *r->p++ : 0; }
static uint16_t rd_u16(struct rd *r)
{
	if (!avail(r, 2))
		return 0;
	uint16_t v = (uint16_t)(r->p[0] << 8 | r->p[1]);
	r->p += 2;
	return v;
}
static uint32_t rd_u32(struct rd *r)
{
	if (!avail(r, 4))
		return 0;
	uint32_t v = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 | (uint32_t)r->p[2] << 8 |
		     r->p[3];
	r->p += 4;
	return v;
}
static uint64_t rd_u64(struct rd *r)
{
	uint64_t hi = rd_u32(r);
	return hi << 32 | rd_u32(r);
}
/* rd_str: a new string, or NULL when short or over MAX_STR (*bad). */
static char *rd_str(struct rd *r, bool *bad)
{
	uint32_t n = rd_u32(r);
	if (n > MAX_STR) {
		*bad = true;
		return NULL;
	}
	if (!avail(r, n))
		return NULL;
	char *s = xstrndup((const char *)r->p, n);
	r->p += n;
	return s;
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

static void put_be(uint8_t *dst, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

/*
 * one_record: parse the record at r. 1: done; 0: it goes on in the next
 * frame (r->p unchanged by the caller); -1: malformed (err set).
 */
static int one_record(struct snap_builder *b, struct rd *r, struct hs_error *err)
{
	bool bad = false;
	uint8_t tag = rd_u8(r);
	switch (tag) {
	case R_CLASS: {
		struct sclass c = {0};
		c.id = rd_u64(r);
		c.super = rd_u64(r);
		c.loader = rd_u64(r);
		c.nif = rd_u32(r);
		c.sig = rd_str(r, &bad);
		c.nf = rd_u16(r);
		c.f = xcalloc((size_t)c.nf + 1, sizeof *c.f);
		for (unsigned k = 0; k < c.nf && !r->short_ && !bad; k++) {
			c.f[k].name = rd_str(r, &bad);
			c.f[k].sig = rd_str(r, &bad);
			c.f[k].is_static = rd_u8(r);
		}
		bool ok = !r->short_ && !bad && c.id == (uint64_t)b->ncls + 1;
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
		if (r->short_ && !bad)
			return 0;
		snprintf(err->msg, sizeof err->msg, "snapshot: a malformed CLASS record (class %llu)",
			 (unsigned long long)c.id);
		return -1;
	}
	case R_OBJECT: {
		uint64_t id = rd_u64(r), cls = rd_u64(r);
		rd_u64(r);
		int32_t len = (int32_t)rd_u32(r);
		if (r->short_)
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
		uint64_t from = rd_u64(r);
		uint8_t kind = rd_u8(r);
		int32_t index = (int32_t)rd_u32(r);
		uint64_t to = rd_u64(r);
		if (r->short_)
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
		uint8_t kind = rd_u8(r);
		uint64_t obj = rd_u64(r), thread = rd_u64(r);
		int32_t depth = (int32_t)rd_u32(r);
		if (r->short_)
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
		uint64_t obj = rd_u64(r);
		uint8_t kind = rd_u8(r);
		int32_t index = (int32_t)rd_u32(r);
		uint8_t type = rd_u8(r);
		uint64_t bits = rd_u64(r);
		if (r->short_)
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
		uint64_t id = rd_u64(r);
		uint8_t type = rd_u8(r);
		uint32_t count = rd_u32(r);
		size_t es = jvmti_prim_size(type);
		if (r->short_)
			return 0;
		if (!es || !array_fits(b, count, es) || !grow_objs(b, id)) {
			snprintf(err->msg, sizeof err->msg, "snapshot: a PRIMITIVE ARRAY record of "
				 "%u elements of type %u", count, type);
			return -1;
		}
		size_t bytes = (size_t)count * es;
		if (!avail(r, bytes))
			return 0;
		if (!b->arrays && !(b->arrays = tmpfile())) {
			snprintf(err->msg, sizeof err->msg, "snapshot: cannot create a temporary "
				 "file: %s", strerror(errno));
			return -1;
		}
		/* PRIM ARRAY DUMP: tag, id, stack serial, count, type, big-endian elements. */
		uint8_t h[1 + 8 + 4 + 4 + 1];
		h[0] = HPROF_GC_PRIM_ARRAY_DUMP;
		put_be(h + 1, id, 8);
		put_be(h + 9, 0, 4);
		put_be(h + 13, count, 4);
		h[17] = hprof_type_of((char)type);
		fwrite(h, 1, sizeof h, b->arrays);
		uint8_t buf[4096];
		for (size_t off = 0; off < bytes;) {
			size_t n = bytes - off < sizeof buf ? bytes - off : sizeof buf;
			n -= n % es;
			for (size_t k = 0; k < n; k += es)	/* the JVM's order to big-endian */
				for (size_t j = 0; j < es; j++)
					buf[k + j] = r->p[off + k + es - 1 - j];
			fwrite(buf, 1, n, b->arrays);
			off += n;
		}
		r->p += bytes;
		b->obj_parr[id] = 1;
		b->arrays_bytes += sizeof h + bytes;
		return 1;
	}
	case R_THREAD: {
		struct sthread t = {0};
		t.obj = rd_u64(r);
		t.serial = rd_u32(r);
		t.name = rd_str(r, &bad);
		t.nframes = rd_u32(r);
		if (t.nframes > 65536)
			bad = true;
		if (bad || r->short_)
			t.nframes = 0;	/* nothing read, nothing to free */
		t.fr = xcalloc((size_t)t.nframes + 1, sizeof *t.fr);
		for (uint32_t k = 0; k < t.nframes && !r->short_ && !bad; k++) {
			t.fr[k].cls = rd_str(r, &bad);
			t.fr[k].method = rd_str(r, &bad);
			t.fr[k].msig = rd_str(r, &bad);
		}
		if (!r->short_ && !bad && t.obj < UINT32_MAX - 1) {
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
		if (r->short_ && !bad)
			return 0;
		snprintf(err->msg, sizeof err->msg, "snapshot: a malformed THREAD record");
		return -1;
	}
	default:
		if (r->short_)
			return 0;
		snprintf(err->msg, sizeof err->msg, "snapshot: unknown record type %u", tag);
		return -1;
	}
}

int snap_feed(struct snap_builder *b, const uint8_t *p, size_t n, struct hs_error *err)
{
	const uint8_t *data = p, *end = p + n;
	if (b->carry_len) {	/* complete the cut record first */
		if (b->carry_len + n > b->carry_cap) {
			b->carry_cap = (b->carry_len + n) * 2;
			b->carry = xrealloc(b->carry, b->carry_cap);
		}
		memcpy(b->carry + b->carry_len, p, n);
		b->carry_len += n;
		data = b->carry;
		end = b->carry + b->carry_len;
	}
	struct rd r = {data, end, false};
	for (;;) {
		const uint8_t *at = r.p;
		if (at == end)
			break;
		int k = one_record(b, &r, err);
		if (k < 0)
			return HS_ERR;
		b->nrec += k == 1;
		if (k == 0) {
			r.p = at;
			break;
		}
	}
	size_t rest = (size_t)(end - r.p);
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
	return HS_OK;
}

/* ---- writing HPROF ---- */

struct hw {
	FILE *f;
	long seg_at;		/* file offset of the open segment's length field, or -1 */
	uint64_t seg_bytes;
	bool failed;
};

static void w(struct hw *o, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, o->f) != n)
		o->failed = true;
	o->seg_bytes += n;
}
static void w_u1(struct hw *o, uint8_t v) { w(o, &v, 1); }
static void w_u2(struct hw *o, uint16_t v)
{
	uint8_t x[2];
	put_be(x, v, 2);
	w(o, x, 2);
}
static void w_u4(struct hw *o, uint32_t v)
{
	uint8_t x[4];
	put_be(x, v, 4);
	w(o, x, 4);
}
static void w_id(struct hw *o, uint64_t v)
{
	uint8_t x[8];
	put_be(x, v, 8);
	w(o, x, 8);
}

static void record(struct hw *o, uint8_t tag, uint32_t len)
{
	w_u1(o, tag);
	w_u4(o, 0);
	w_u4(o, len);
}

static void utf8(struct hw *o, uint64_t sid, const char *s)
{
	size_t n = strlen(s);
	record(o, HPROF_UTF8, (uint32_t)(8 + n));
	w_id(o, sid);
	w(o, s, n);
}

static void seg_close(struct hw *o)
{
	if (o->seg_at < 0)
		return;
	long here = ftell(o->f);
	uint8_t x[4];
	put_be(x, o->seg_bytes, 4);
	if (fseek(o->f, o->seg_at, SEEK_SET) != 0 || fwrite(x, 1, 4, o->f) != 4 ||
	    fseek(o->f, here, SEEK_SET) != 0)
		o->failed = true;
	o->seg_at = -1;
}

/* seg_room: make sure the open segment can take n more bytes (segments stay under 1 GiB). */
static void seg_room(struct hw *o, uint64_t n)
{
	if (o->seg_at >= 0 && o->seg_bytes + n < (1u << 30))
		return;
	seg_close(o);
	w_u1(o, HPROF_HEAP_DUMP_SEGMENT);
	w_u4(o, 0);
	o->seg_at = ftell(o->f);
	w_u4(o, 0);
	o->seg_bytes = 0;
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
	put_be(vals + off, bits, hprof_size_of(type));
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
		w_u1(o, t);
		w_id(o, r->obj);
		switch (t) {
		case HPROF_GC_ROOT_JNI_GLOBAL:
			w_id(o, 0);
			break;
		case HPROF_GC_ROOT_JAVA_FRAME:
		case HPROF_GC_ROOT_JNI_LOCAL:
			w_u4(o, (uint32_t)serial);
			w_u4(o, r->depth < 0 ? UINT32_MAX : (uint32_t)r->depth);
			break;
		case HPROF_GC_ROOT_THREAD_OBJ:
			u64map_get(thread_serial, r->obj, &serial);
			w_u4(o, (uint32_t)serial);
			w_u4(o, (uint32_t)serial);
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
		w_u1(o, HPROF_GC_CLASS_DUMP);
		w_id(o, c->id);
		w_u4(o, 0);
		w_id(o, c->super);
		w_id(o, c->loader);
		w_id(o, signers);
		w_id(o, domain);
		w_id(o, 0);
		w_id(o, 0);
		w_u4(o, c->sig[0] == '[' ? 0 : c->bytes);
		w_u2(o, ncp);	/* resolved constants (strings, classes) */
		uint16_t done = 0;
		for (uint32_t k = id <= b->max_id ? rstart[id] : 0;
		     id <= b->max_id && k < rstart[id + 1] && done < ncp; k++) {
			const struct sref *r = &b->ref[rorder[k]];
			if (r->kind != K_CONSTANT)
				continue;
			w_u2(o, (uint16_t)r->index);
			w_u1(o, HPROF_OBJECT);
			w_id(o, r->to);
			done++;
		}
		w_u2(o, nstat);
		for (unsigned k = 0; k < c->nf; k++) {
			if (!c->f[k].is_static)
				continue;
			uint8_t t = hprof_type_of(c->f[k].sig[0]);
			w_id(o, sid + k);
			w_u1(o, t);
			uint8_t x[8];
			put_be(x, sv[k], hprof_size_of(t));
			w(o, x, hprof_size_of(t));
		}
		w_u2(o, ninst);
		for (unsigned k = 0; k < c->nf; k++) {
			if (c->f[k].is_static)
				continue;
			w_id(o, sid + k);
			w_u1(o, hprof_type_of(c->f[k].sig[0]));
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
			w_u1(o, HPROF_GC_PRIM_ARRAY_DUMP);
			w_id(o, id);
			w_u4(o, 0);
			w_u4(o, len);
			w_u1(o, t);
			uint8_t zero[256] = {0};
			for (size_t k = 0; k < bytes; k += sizeof zero)
				w(o, zero, bytes - k < sizeof zero ? bytes - k : sizeof zero);
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
					put_be(vals + (size_t)r->index * 8, r->to, 8);
			}
			seg_room(o, 1 + 8 + 4 + 4 + 8 + bytes);
			w_u1(o, HPROF_GC_OBJ_ARRAY_DUMP);
			w_id(o, id);
			w_u4(o, 0);
			w_u4(o, len);
			w_id(o, c->id);
			w(o, vals, bytes);
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
		w_u1(o, HPROF_GC_INSTANCE_DUMP);
		w_id(o, id);
		w_u4(o, 0);
		w_id(o, c->id);
		w_u4(o, c->bytes);
		w(o, vals, c->bytes);
	}
	free(vals);
}

int snap_write_hprof(struct snap_builder *b, const char *path, uint64_t objects,
		     struct hs_error *err)
{
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
	struct hw o = {fopen(path, "w"), -1, 0, false};
	if (!o.f) {
		snprintf(err->msg, sizeof err->msg, "cannot write %s: %s", path, strerror(errno));
		return HS_ERR;
	}
	setvbuf(o.f, NULL, _IOFBF, 1 << 20);
	grow_objs(b, b->max_id + 1);
	static const char head[] = "JAVA PROFILE 1.0.2";
	w(&o, head, sizeof head);
	w_u4(&o, 8);
	uint64_t ms = (uint64_t)time(NULL) * 1000;
	w_u4(&o, (uint32_t)(ms >> 32));
	w_u4(&o, (uint32_t)ms);
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
		w_u4(&o, i + 1);
		w_id(&o, b->cls[i].id);
		w_u4(&o, 0);
		w_id(&o, STRING_IDS + i);
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
			w_id(&o, frame_id++);
			w_id(&o, s_m);
			w_id(&o, s_sig);
			w_id(&o, 0);
			w_u4(&o, cserial);
			w_u4(&o, (uint32_t)-1);
		}
		record(&o, HPROF_TRACE, 12 + th->nframes * 8);
		w_u4(&o, th->serial);
		w_u4(&o, th->serial);
		w_u4(&o, th->nframes);
		for (uint64_t f = first; f < frame_id; f++)
			w_id(&o, f);
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
		for (uint64_t left = b->arrays_bytes; left && !o.failed;) {
			uint8_t h[18];
			if (fread(h, 1, sizeof h, b->arrays) != sizeof h) {
				o.failed = true;
				break;
			}
			uint32_t count = (uint32_t)h[13] << 24 | (uint32_t)h[14] << 16 |
					 (uint32_t)h[15] << 8 | h[16];
			uint64_t bytes = (uint64_t)count * hprof_size_of(h[17]);
			seg_room(&o, sizeof h + bytes);
			w(&o, h, sizeof h);
			for (uint64_t k = 0; k < bytes;) {
				size_t n = bytes - k < sizeof buf ? (size_t)(bytes - k) : sizeof buf;
				if (fread(buf, 1, n, b->arrays) != n) {
					o.failed = true;
					break;
				}
				w(&o, buf, n);
				k += n;
			}
			left -= sizeof h + bytes;
		}
	}
	seg_close(&o);
	record(&o, HPROF_HEAP_DUMP_END, 0);
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
