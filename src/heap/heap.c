/* heap.c - reading the heap model: lookups, fields, strings, names. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../base/classname.h"
#include "../base/io.h"
#include "../base/suggest.h"
#include "../base/big.h"
#include "../base/filemap.h"
#include "heap_internal.h"

const char *heap_keep(struct heap *h, char *s)
{
	struct heap_names *nm = h->names;
	if (nm->nallocs == nm->cap) {
		nm->cap = nm->cap ? nm->cap * 2 : 256;
		nm->allocs = xreallocarray(nm->allocs, nm->cap, sizeof *nm->allocs);
	}
	nm->allocs[nm->nallocs++] = s;
	return s;
}

const char *heap_name(struct heap *h, uint64_t sid)
{
	uint64_t v;
	if (u64map_get(&h->names->interned, sid, &v))
		return (const char *)(uintptr_t)v;
	uint64_t off;
	if (!u64map_get(&h->names->strings, sid, &off))
		return "?";
	size_t ids = (size_t)h->hp->id_size;
	uint32_t len = hprof_u4(h->hp->data + off + 5);
	const char *s = heap_keep(h, xstrndup((const char *)h->hp->data + off + 9 + ids,
					      len - ids));
	u64map_put(&h->names->interned, sid, (uint64_t)(uintptr_t)s);
	return s;
}

int heap_android_heap_index(const struct heap *h, const char *name)
{
	for (uint32_t k = 0; k < h->nheaps; k++)
		if (!strcmp(h->heap_names[k], name))
			return (int)k;
	return -1;
}

bool heap_spill(struct heap *h)
{
	if (!h->n || h->pos || h->ids || !h->pos_lo || h->model_map)
		return false;	/* still loading, or already in the index's file */
	uint32_t *moved = big_evict(h->pos_lo);
	if (!moved)
		return false;
	h->pos_lo = moved;
	return true;
}

void heap_forget_mapped(struct heap *h)
{
	h->pos_lo = NULL;
	h->pos_base = NULL;
	h->cls = NULL;
	h->size = NULL;
	h->out_start = NULL;
	h->out = NULL;
	h->inst_start = NULL;
	h->inst = NULL;
	h->heap_of = NULL;
}

void heap_free(struct heap *h)
{
	if (!h)
		return;
	if (h->model_map) {
		heap_forget_mapped(h);
		fm_forget(h->model_map, h->model_maplen);
		munmap(h->model_map, h->model_maplen);
	}
	for (uint32_t k = 0; k < h->nclasses; k++) {
		free(h->classes[k].fields);
		free(h->classes[k].statics);
		free(h->classes[k].ref_offsets);
	}
	free(h->classes);
	for (uint32_t t = 0; t < h->nthreads; t++)
		free(h->threads[t].frames);
	free(h->threads);
	free(h->frames);
	free(h->roots);
	big_free(h->heap_of);
	big_free(h->ids);
	big_free(h->pos);
	big_free(h->pos_lo);
	big_free(h->pos_base);
	u64map_free(&h->pos_far);
	big_free(h->cls);
	big_free(h->size);
	big_free(h->out_start);
	big_free(h->out);
	big_free(h->in_start);
	big_free(h->in);
	big_free(h->chunks);
	big_free(h->sub);
	big_free(h->idmap);
	free(h->inst_start);
	big_free(h->inst);
	if (h->names) {
		for (size_t k = 0; k < h->names->nallocs; k++)
			free(h->names->allocs[k]);
		free(h->names->allocs);
		u64map_free(&h->names->strings);
		u64map_free(&h->names->interned);
		free(h->names);
	}
	hprof_close(h->hp);
	free(h);
}

/*
 * The id directory of a trusted model (heap_model_load) is built when
 * lookups need it: until then each is a binary search of the objects,
 * which are in id order, reading log2(n) records; the directory reads all
 * n once. It is built once the searches have cost about that: after
 * n / log2(n) of them (ski rental: never more than twice the better of the
 * two). The lock guards the count and the build; a built directory is
 * published with its chunks, the lookups' first read.
 */
static pthread_mutex_t directory_lock = PTHREAD_MUTEX_INITIALIZER;

struct id_span {
	const struct heap *h;
	uint64_t *ids;
	uint32_t from, to;
};

static void *read_ids(void *arg)
{
	struct id_span *w = arg;
	for (uint32_t i = w->from; i < w->to; i++)
		w->ids[i] = heap_id(w->h, i);
	return NULL;
}

/* directory: true when h has its directory, built now if the searches
 * have come to cost as much. */
static bool directory(struct heap *h)
{
	pthread_mutex_lock(&directory_lock);
	struct hs_catch c;	/* a throw (no memory) gives the lock back first */
	hs_catch_push(&c);
	if (setjmp(c.jb)) {
		pthread_mutex_unlock(&directory_lock);
		hs_throw("%s", c.msg);
	}
	bool have = h->chunks != NULL;
	uint32_t lg = 1;
	while (lg < 32 && (1ULL << lg) < h->n)
		lg++;
	if (!have && ++h->searches >= h->n / lg + 64) {
		struct heap d;
		memset(&d, 0, sizeof d);
		d.n = h->n;
		d.ids = big_alloc((size_t)h->n + 1, sizeof *d.ids);
		struct id_span half[2] = {{h, d.ids, 0, h->n / 2}, {h, d.ids, h->n / 2, h->n}};
		heap_run2(read_ids, &half[0], &half[1], h->n >= 65536);
		heap_build_directory(&d);
		big_free(d.ids);
		/* h is older than the call under way: its cache outlives a
		 * throw later in the call (big_keep). */
		h->top_shift = d.top_shift;	/* id_min and id_max: the same */
		h->sub = big_keep(d.sub);
		h->idmap = big_keep(d.idmap);
		__atomic_store_n(&h->chunks, big_keep(d.chunks), __ATOMIC_RELEASE);
		have = true;
	}
	hs_catch_pop(&c);
	pthread_mutex_unlock(&directory_lock);
	return have;
}

static uint32_t index_by_search(const struct heap *h, uint64_t id)
{
	uint32_t lo = 0, hi = h->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint64_t at = heap_id(h, mid);
		if (at == id)
			return mid;
		if (at < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return HEAP_NONE;
}

uint32_t heap_index(const struct heap *h, uint64_t id)
{
	if (!h->n || id < h->id_min || id > h->id_max)
		return HEAP_NONE;	/* (a trusted model has these from the start) */
	const struct heap_chunk *chunks = __atomic_load_n(&h->chunks, __ATOMIC_ACQUIRE);
	if (!chunks) {
		if (!directory((struct heap *)h))	/* its cache, not its contents */
			return index_by_search(h, id);
		chunks = h->chunks;
	}
	uint64_t off = id - h->id_min;
	const struct heap_chunk *ch = &chunks[off >> h->top_shift];
	if (ch->bits == HEAP_CHUNK_BITMAP) {
		if (off & 7)
			return HEAP_NONE;
		uint64_t slot = (off & ((1ULL << h->top_shift) - 1)) >> 3;
		const struct heap_idmap *e = &h->idmap[ch->sub + (slot >> 6)];
		uint64_t below = 1ULL << (slot & 63);
		if (!(e->bits & below))
			return HEAP_NONE;
		return e->before + heap_popcount(e->bits & (below - 1));
	}
	uint32_t lo = ch->start, hi = ch->end;
	if (ch->bits) {
		uint64_t b = (off & ((1ULL << h->top_shift) - 1)) >> ch->shift;
		lo = h->sub[ch->sub + b];
		hi = h->sub[ch->sub + b + 1];
	}
	uint32_t lim = hi;	/* the answer is in [lo, hi], hi itself included */
	while (hi - lo > 8) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (heap_id(h, mid) < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < lim; lo++) {
		uint64_t at = heap_id(h, lo);
		if (at >= id)
			return at == id ? lo : HEAP_NONE;
	}
	return HEAP_NONE;
}

uint64_t heap_shallow(const struct heap *h, uint32_t i)
{
	if (h->size[i] != HEAP_SIZE_BIG)
		return h->size[i];
	return heap_record_shallow(h, i);	/* 64 KiB or more: mostly large arrays */
}

uint32_t heap_class_of_object(const struct heap *h, uint32_t i)
{
	uint32_t lo = 0, hi = h->nclasses;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (h->classes[mid].obj < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < h->nclasses && h->classes[lo].obj == i ? lo : HEAP_NONE;
}

struct heap_value heap_read_value(const struct heap *h, uint8_t t, size_t pos)
{
	const uint8_t *p = h->hp->data + pos;
	struct heap_value v;
	v.type = t;
	v.v.i = 0;
	switch (t) {
	case HPROF_OBJECT: v.v.id = hprof_id(h->hp, p); break;
	case HPROF_BOOLEAN: v.v.i = p[0] != 0; break;
	case HPROF_BYTE: v.v.i = (int8_t)p[0]; break;
	case HPROF_CHAR: v.v.i = hprof_u2(p); break;
	case HPROF_SHORT: v.v.i = (int16_t)hprof_u2(p); break;
	case HPROF_INT: v.v.i = (int32_t)hprof_u4(p); break;
	case HPROF_LONG: v.v.i = (int64_t)hprof_u8(p); break;
	case HPROF_FLOAT: {
		uint32_t bits = hprof_u4(p);
		float f;
		memcpy(&f, &bits, sizeof f);
		v.v.d = f;
		break;
	}
	case HPROF_DOUBLE: {
		uint64_t bits = hprof_u8(p);
		memcpy(&v.v.d, &bits, sizeof v.v.d);
		break;
	}
	default: v.type = 0; break;
	}
	return v;
}

void heap_fields_each(const struct heap *h, uint32_t i,
		      void (*fn)(void *ctx, uint32_t decl_class, const struct heap_field *f,
				 struct heap_value v),
		      void *ctx)
{
	if (heap_kind(h, i) != HEAP_INSTANCE)
		return;
	struct hprof_object_rec o;
	hprof_object_read(h->hp, heap_pos(h, i), &o);
	uint32_t off = 0, depth = 0;
	for (uint32_t c = h->cls[i]; c != HEAP_NONE && depth < 4096; c = h->classes[c].super, depth++)
		for (unsigned f = 0; f < h->classes[c].nfields; f++) {
			const struct heap_field *fd = &h->classes[c].fields[f];
			uint32_t sz = (uint32_t)hprof_type_size(h->hp, fd->type);
			if (off + sz > o.length)
				return;
			fn(ctx, c, fd, heap_read_value(h, fd->type, o.values + off));
			off += sz;
		}
}

bool heap_field(const struct heap *h, uint32_t i, const char *name, struct heap_value *v)
{
	if (heap_kind(h, i) != HEAP_INSTANCE)
		return false;
	struct hprof_object_rec o;
	hprof_object_read(h->hp, heap_pos(h, i), &o);
	uint32_t off = 0, depth = 0;
	for (uint32_t c = h->cls[i]; c != HEAP_NONE && depth < 4096; c = h->classes[c].super, depth++)
		for (unsigned f = 0; f < h->classes[c].nfields; f++) {
			const struct heap_field *fd = &h->classes[c].fields[f];
			uint32_t sz = (uint32_t)hprof_type_size(h->hp, fd->type);
			if (!strcmp(fd->name, name)) {
				if (off + sz > o.length)
					return false;
				*v = heap_read_value(h, fd->type, o.values + off);
				return true;
			}
			off += sz;
		}
	return false;
}

bool heap_field_locate(const struct heap *h, uint32_t c, const char *name, uint32_t *off,
		       uint8_t *type)
{
	uint32_t o = 0, depth = 0;
	for (; c != HEAP_NONE && depth < 4096; c = h->classes[c].super, depth++)
		for (unsigned f = 0; f < h->classes[c].nfields; f++) {
			const struct heap_field *fd = &h->classes[c].fields[f];
			if (!strcmp(fd->name, name)) {
				*off = o;
				*type = fd->type;
				return true;
			}
			o += (uint32_t)hprof_type_size(h->hp, fd->type);
		}
	return false;
}

struct heap_value heap_field_at(const struct heap *h, uint32_t i, uint32_t off, uint8_t type)
{
	struct heap_value v = {0, {0}};
	if (heap_kind(h, i) != HEAP_INSTANCE)
		return v;
	size_t ids = (size_t)h->hp->id_size, p = heap_pos(h, i);
	uint32_t len = hprof_u4(h->hp->data + p + 1 + 2 * ids + 4);
	if ((uint64_t)off + (uint64_t)hprof_type_size(h->hp, type) > len)
		return v;
	return heap_read_value(h, type, p + 1 + 2 * ids + 8 + off);
}

bool heap_static(const struct heap *h, uint32_t c, const char *name, struct heap_value *v)
{
	const struct heap_class *k = &h->classes[c];
	for (unsigned s = 0; s < k->nstatics; s++)
		if (!strcmp(k->statics[s].name, name)) {
			*v = heap_read_value(h, k->statics[s].type, k->statics[s].value_pos);
			return true;
		}
	return false;
}

uint32_t heap_array_length(const struct heap *h, uint32_t i)
{
	enum heap_kind k = heap_kind(h, i);
	if (k != HEAP_OBJ_ARRAY && k != HEAP_PRIM_ARRAY)
		return 0;
	struct hprof_object_rec o;
	hprof_object_read(h->hp, heap_pos(h, i), &o);
	return o.length;
}

struct heap_value heap_array_elem(const struct heap *h, uint32_t i, uint32_t k)
{
	struct heap_value v = {0, {0}};
	enum heap_kind kind = heap_kind(h, i);
	if (kind != HEAP_OBJ_ARRAY && kind != HEAP_PRIM_ARRAY)
		return v;
	struct hprof_object_rec o;
	hprof_object_read(h->hp, heap_pos(h, i), &o);
	if (k >= o.length || !o.values)
		return v;	/* past the end, or an Android NODATA array: no values */
	int es = hprof_type_size(h->hp, o.elem_type);
	return heap_read_value(h, o.elem_type, o.values + (size_t)k * (size_t)es);
}

static void put_utf8(char **buf, size_t *len, size_t *cap, uint32_t c)
{
	if (*len + 5 > *cap) {
		*cap = *cap * 2 + 16;
		*buf = xrealloc(*buf, *cap);
	}
	char *p = *buf + *len;
	if (c == 0) {	/* modified UTF-8, as Java: NUL never ends the text */
		p[0] = (char)0xC0;
		p[1] = (char)0x80;
		*len += 2;
	} else if (c < 0x80) {
		p[0] = (char)c;
		*len += 1;
	} else if (c < 0x800) {
		p[0] = (char)(0xC0 | c >> 6);
		p[1] = (char)(0x80 | (c & 0x3F));
		*len += 2;
	} else if (c < 0x10000) {
		p[0] = (char)(0xE0 | c >> 12);
		p[1] = (char)(0x80 | ((c >> 6) & 0x3F));
		p[2] = (char)(0x80 | (c & 0x3F));
		*len += 3;
	} else {
		p[0] = (char)(0xF0 | c >> 18);
		p[1] = (char)(0x80 | ((c >> 12) & 0x3F));
		p[2] = (char)(0x80 | ((c >> 6) & 0x3F));
		p[3] = (char)(0x80 | (c & 0x3F));
		*len += 4;
	}
}

static uint32_t utf16_at(const uint8_t *p, uint64_t k, bool big_endian)
{
	return big_endian ? (uint32_t)(p[2 * k] << 8 | p[2 * k + 1])
			  : (uint32_t)(p[2 * k + 1] << 8 | p[2 * k]);
}

char *heap_string(const struct heap *h, uint32_t i, size_t max_chars)
{
	if (heap_kind(h, i) != HEAP_INSTANCE || strcmp(heap_class_name(h, i), "java.lang.String"))
		return NULL;
	struct heap_value val, coder = {0, {0}}, off = {0, {0}}, cnt = {0, {0}};
	if (!heap_field(h, i, "value", &val) || val.type != HPROF_OBJECT)
		return NULL;
	bool has_coder = heap_field(h, i, "coder", &coder);
	bool has_off = heap_field(h, i, "offset", &off);
	bool has_cnt = heap_field(h, i, "count", &cnt);
	uint32_t a = val.v.id ? heap_index(h, val.v.id) : HEAP_NONE;
	if (a == HEAP_NONE)
		return val.v.id ? NULL : xstrdup("");
	struct hprof_object_rec o;
	hprof_object_read(h->hp, heap_pos(h, a), &o);
	if (o.tag != HPROF_GC_PRIM_ARRAY_DUMP)
		return NULL;
	const uint8_t *p = h->hp->data + o.values;
	uint64_t n;	/* characters */
	bool latin1 = o.elem_type == HPROF_BYTE && (!has_coder || coder.v.i == 0);
	if (o.elem_type == HPROF_CHAR)
		n = o.length;
	else if (o.elem_type == HPROF_BYTE)
		n = latin1 ? o.length : o.length / 2;
	else
		return NULL;
	uint64_t start = 0;
	if (has_off && has_cnt && o.elem_type == HPROF_CHAR &&
	    off.v.i >= 0 && cnt.v.i >= 0 && (uint64_t)off.v.i + (uint64_t)cnt.v.i <= n) {
		start = (uint64_t)off.v.i;	/* JDK 6 substrings share arrays */
		n = (uint64_t)cnt.v.i;
	}
	bool cut = max_chars && n > max_chars;
	if (cut)
		n = max_chars;
	size_t len = 0, cap = n + 8;
	char *buf = xmalloc(cap);
	for (uint64_t k = start; k < start + n; k++) {
		uint32_t c;
		if (latin1) {
			c = p[k];
		} else {
					/* char[] values are big-endian in HPROF; a byte[] is raw memory */
			c = utf16_at(p, k, o.elem_type == HPROF_CHAR || h->utf16_be);
			if (c >= 0xD800 && c < 0xDC00 && k + 1 < start + n) {
				uint32_t lo = utf16_at(p, k + 1, o.elem_type == HPROF_CHAR || h->utf16_be);
				if (lo >= 0xDC00 && lo < 0xE000) {
					c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
					k++;
				}
			}
		}
		put_utf8(&buf, &len, &cap, c);
	}
	if (cut) {
		put_utf8(&buf, &len, &cap, '.');
		put_utf8(&buf, &len, &cap, '.');
		put_utf8(&buf, &len, &cap, '.');
	}
	buf[len] = 0;
	return buf;
}

uint32_t heap_class_by_name(const struct heap *h, const char *name)
{
	for (uint32_t k = 0; k < h->nclasses; k++)
		if (!strcmp(h->classes[k].name, name))
			return k;
	return HEAP_NONE;
}

uint32_t heap_find_classes(const struct heap *h, const char *pattern, uint32_t **out)
{
	const char **names = xmallocarray(h->nclasses + 1, sizeof *names);
	for (uint32_t k = 0; k < h->nclasses; k++)
		names[k] = h->classes[k].name;
	*out = xmallocarray(h->nclasses + 1, sizeof **out);
	uint32_t n = cn_select(pattern, names, h->nclasses, *out);
	free(names);
	return n;
}

bool heap_is_subclass(const struct heap *h, uint32_t c, uint32_t sup)
{
	for (int depth = 0; c != HEAP_NONE && depth < 4096; c = h->classes[c].super, depth++)
		if (c == sup)
			return true;
	return false;
}

static uint32_t obj_field(const struct heap *h, uint32_t i, const char *name)
{
	struct heap_value v;
	if (i == HEAP_NONE || !heap_field(h, i, name, &v) || v.type != HPROF_OBJECT || !v.v.id)
		return HEAP_NONE;
	return heap_index(h, v.v.id);
}

/*
 * A hash table's entries (Hashtable, HashMap, ConcurrentHashMap). A real
 * table holds each entry in one chain once, so the whole search steps at
 * most once per object of the heap; a chain that comes back to itself
 * (Brent's cycle detection) or tables that share chains end it early
 * instead of looping (a crafted dump).
 */
static char *table_lookup(const struct heap *h, uint32_t table, const char *key,
			  const char *val_field)
{
	uint32_t n = heap_array_length(h, table);
	uint64_t budget = (uint64_t)h->n + 1;
	for (uint32_t k = 0; k < n && budget; k++) {
		struct heap_value e = heap_array_elem(h, table, k);
		uint32_t node = e.v.id ? heap_index(h, e.v.id) : HEAP_NONE;
		uint32_t mark = node, power = 1, lam = 0;
		for (; node != HEAP_NONE && budget; budget--) {
			uint32_t ko = obj_field(h, node, "key");
			char *ks = ko != HEAP_NONE ? heap_string(h, ko, 0) : NULL;
			bool hit = ks && !strcmp(ks, key);
			free(ks);
			if (hit) {
				uint32_t vo = obj_field(h, node, val_field);
				return vo != HEAP_NONE ? heap_string(h, vo, 0) : NULL;
			}
			node = obj_field(h, node, "next");
			if (node == mark)
				break;	/* a cycle */
			if (++lam == power) {
				mark = node;
				power *= 2;
				lam = 0;
			}
		}
	}
	return NULL;
}

static char *props_lookup(const struct heap *h, uint32_t props, const char *key, int depth)
{
	if (props == HEAP_NONE || depth > 8)
		return NULL;
	char *r = NULL;
	uint32_t t = obj_field(h, props, "table");
	if (t != HEAP_NONE) {
		r = table_lookup(h, t, key, "value");
	} else {
		uint32_t map = obj_field(h, props, "map");
		uint32_t mt = obj_field(h, map, "table");
		if (mt != HEAP_NONE)
			r = table_lookup(h, mt, key, "val");
	}
	if (!r)
		r = props_lookup(h, obj_field(h, props, "defaults"), key, depth + 1);
	return r;
}

char *heap_system_property(const struct heap *h, const char *key)
{
	uint32_t sys = heap_class_by_name(h, "java.lang.System");
	struct heap_value v;
	if (sys == HEAP_NONE)
		return NULL;
	if (!heap_static(h, sys, "props", &v) && !heap_static(h, sys, "systemProperties", &v))
		return NULL;
	if (v.type != HPROF_OBJECT || !v.v.id)
		return NULL;
	return props_lookup(h, heap_index(h, v.v.id), key, 0);
}

static const struct {
	uint8_t tag;
	const char *name, *word;
} root_kinds[] = {
	{HPROF_GC_ROOT_UNKNOWN, "unknown", "unknown"},
	{HPROF_GC_ROOT_JNI_GLOBAL, "JNI global", "jni-global"},
	{HPROF_GC_ROOT_JNI_LOCAL, "JNI local", "jni-local"},
	{HPROF_GC_ROOT_JAVA_FRAME, "Java frame", "frame"},
	{HPROF_GC_ROOT_NATIVE_STACK, "native stack", "native-stack"},
	{HPROF_GC_ROOT_STICKY_CLASS, "system class", "system-class"},
	{HPROF_GC_ROOT_THREAD_BLOCK, "thread block", "thread-block"},
	{HPROF_GC_ROOT_MONITOR_USED, "busy monitor", "monitor"},
	{HPROF_GC_ROOT_THREAD_OBJ, "thread", "thread"},
	{HPROF_GC_ROOT_INTERNED_STRING, "interned string", "interned-string"},
	{HPROF_GC_ROOT_FINALIZING, "finalizing", "finalizing"},
	{HPROF_GC_ROOT_DEBUGGER, "debugger", "debugger"},
	{HPROF_GC_ROOT_REFERENCE_CLEANUP, "reference cleanup", "reference-cleanup"},
	{HPROF_GC_ROOT_VM_INTERNAL, "VM internal", "vm-internal"},
	{HPROF_GC_ROOT_JNI_MONITOR, "JNI monitor", "jni-monitor"},
	{HPROF_GC_UNREACHABLE, "unreachable", "unreachable"},
};

const char *heap_root_kind_name(uint8_t kind)
{
	for (size_t k = 0; k < sizeof root_kinds / sizeof *root_kinds; k++)
		if (root_kinds[k].tag == kind)
			return root_kinds[k].name;
	return "?";
}

int heap_root_kind_parse(const char *name)
{
	for (size_t k = 0; k < sizeof root_kinds / sizeof *root_kinds; k++)
		if (!strcmp(root_kinds[k].word, name) || !strcmp(root_kinds[k].name, name))
			return root_kinds[k].tag;
	return -1;
}

char *heap_thread_name(const struct heap *h, uint32_t t)
{
	uint32_t name = obj_field(h, h->threads[t].obj, "name");
	return name != HEAP_NONE ? heap_string(h, name, 0) : NULL;
}

void heap_forget_thread(struct heap *h, uint32_t t)
{
	if (t >= h->nthreads)
		return;
	uint32_t obj = h->threads[t].obj, m = 0;
	for (uint32_t k = 0; k < h->nroots; k++) {
		struct heap_root r = h->roots[k];
		if (r.thread == t || (r.kind == HPROF_GC_ROOT_THREAD_OBJ && obj != HEAP_NONE &&
				      r.obj == obj))
			continue;
		if (r.thread != HEAP_NONE && r.thread > t)
			r.thread--;
		h->roots[m++] = r;
	}
	h->nroots = m;
	free(h->threads[t].frames);
	memmove(&h->threads[t], &h->threads[t + 1],
		(size_t)(h->nthreads - t - 1) * sizeof *h->threads);
	h->nthreads--;
}

/* heap_refs: must visit references in exactly pass2's order. */
void heap_refs(const struct heap *h, uint32_t i,
	       bool (*fn)(void *ctx, const struct heap_ref *r), void *ctx)
{
	const struct hprof *hp = h->hp;
	const uint8_t *d = hp->data;
	size_t ids = (size_t)hp->id_size, p = heap_pos(h, i);
	struct heap_ref r;
#define EMIT(kind_, name_, index_, id_) \
	do { \
		uint64_t id__ = (id_); \
		uint32_t t__ = id__ ? heap_index(h, id__) : HEAP_NONE; \
		if (t__ != HEAP_NONE) { \
			r.kind = (kind_); r.name = (name_); r.index = (index_); r.target = t__; \
			if (!fn(ctx, &r)) \
				return; \
		} \
	} while (0)
	switch (heap_kind(h, i)) {
	case HEAP_INSTANCE: {
		struct hprof_object_rec o;
		hprof_object_read(hp, p, &o);
		uint32_t off = 0, depth = 0;
		for (uint32_t c = h->cls[i]; c != HEAP_NONE && depth < 4096;
		     c = h->classes[c].super, depth++)
			for (unsigned f = 0; f < h->classes[c].nfields; f++) {
				const struct heap_field *fd = &h->classes[c].fields[f];
				uint32_t sz = (uint32_t)hprof_type_size(hp, fd->type);
				if (fd->type == HPROF_OBJECT && off + sz <= o.length)
					EMIT(HEAP_REF_FIELD, fd->name, 0, hprof_id(hp, d + o.values + off));
				off += sz;
			}
		break;
	}
	case HEAP_OBJ_ARRAY: {
		struct hprof_object_rec o;
		hprof_object_read(hp, p, &o);
		for (uint32_t k = 0; k < o.length; k++)
			EMIT(HEAP_REF_ELEMENT, NULL, k, hprof_id(hp, d + o.values + k * ids));
		break;
	}
	case HEAP_PRIM_ARRAY:
		break;
	case HEAP_CLASS: {
		struct hprof_class_dump cd;
		hprof_class_dump_read(hp, p, hp->size, &cd, NULL);
		EMIT(HEAP_REF_SUPER, "<super>", 0, cd.super_id);
		EMIT(HEAP_REF_LOADER, "<classloader>", 0, cd.loader_id);
		EMIT(HEAP_REF_SIGNERS, "<signers>", 0, cd.signers_id);
		EMIT(HEAP_REF_DOMAIN, "<protection domain>", 0, cd.domain_id);
		uint32_t c = heap_class_of_object(h, i);
		if (c != HEAP_NONE) {
			const struct heap_class *k = &h->classes[c];
			for (unsigned s = 0; s < k->nstatics; s++)
				if (k->statics[s].type == HPROF_OBJECT)
					EMIT(HEAP_REF_STATIC, k->statics[s].name, s,
					     hprof_id(hp, d + k->statics[s].value_pos));
		}
		size_t q = cd.cp;
		for (unsigned s = 0; s < cd.ncp; s++) {
			uint8_t t = d[q + 2];
			if (t == HPROF_OBJECT)
				EMIT(HEAP_REF_CONSTANT, "<constant pool>", hprof_u2(d + q),
				     hprof_id(hp, d + q + 3));
			q += 3 + (size_t)hprof_type_size(hp, t);
		}
		break;
	}
	}
#undef EMIT
}

void heap_suggest_class(const struct heap *h, const char *pattern, char *buf, size_t cap)
{
	buf[0] = 0;
	if (cap < 64)
		return;
	bool full = strchr(pattern, '.') != NULL;
	size_t best = 3;
	for (uint32_t c = 0; c < h->nclasses; c++) {
		const char *dot = full ? NULL : strrchr(h->classes[c].name, '.');
		size_t d = hs_edit_distance(pattern, dot ? dot + 1 : h->classes[c].name);
		if (d < best)
			best = d;
	}
	if (best >= 3)
		return;
	size_t len = 0, shown = 0;
	for (uint32_t c = 0; c < h->nclasses && shown < 4; c++) {
		const char *name = h->classes[c].name;
		const char *dot = full ? NULL : strrchr(name, '.');
		if (hs_edit_distance(pattern, dot ? dot + 1 : name) != best ||
		    len + strlen(name) + 24 >= cap || (len && strstr(buf, name)))
			continue;
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "; did you mean ",
					name);
		shown++;
	}
	if (len)
		snprintf(buf + len, cap - len, "?");
}

char *heap_object_label(const struct heap *h, uint32_t i)
{
	enum heap_kind k = heap_kind(h, i);
	if (k == HEAP_CLASS) {
		uint32_t c = heap_class_of_object(h, i);
		return xasprintf("class %s", c != HEAP_NONE ? h->classes[c].name : "?");
	}
	const char *cls = heap_class_name(h, i);
	if (k != HEAP_INSTANCE)
		return xstrdup(cls);
	uint32_t c = h->cls[i];
	char *text = NULL;
	if (c == h->string_class && c != HEAP_NONE)
		text = heap_string(h, i, 40);
	else if ((h->thread_class != HEAP_NONE && heap_is_subclass(h, c, h->thread_class)) ||
		 (h->loader_class != HEAP_NONE && heap_is_subclass(h, c, h->loader_class))) {
		uint32_t name = obj_field(h, i, "name");
		text = name != HEAP_NONE ? heap_string(h, name, 40) : NULL;
	}
	if (!text)
		return xstrdup(cls);
	/* Quotes and control characters inside are escaped so the label stays one line. */
	size_t n = strlen(text);
	char *q = xmalloc(strlen(cls) + 4 * n + 4);
	char *p = q + sprintf(q, "%s \"", cls);
	for (const unsigned char *t = (const unsigned char *)text; *t; t++) {
		if (*t == '"' || *t == '\\') {
			*p++ = '\\';
			*p++ = (char)*t;
		} else if (*t < 0x20) {
			p += sprintf(p, "\\x%02x", *t);
		} else {
			*p++ = (char)*t;
		}
	}
	*p++ = '"';
	*p = 0;
	free(text);
	return q;
}
