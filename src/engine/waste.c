/*
 * waste.c - duplicate strings and empty or sparse collections (waste.h):
 * lua/duplicate_strings.lua and lua/collections.lua in C, rule for rule,
 * so that both give the same rows.
 */
#include "waste.h"

#include <stdlib.h>
#include <string.h>

#include "../base/u64map.h"

/* ---- Lua's view of a text ---- */

/*
 * utf8_next: the byte after the character at s[0], or NULL when it is not
 * one by Lua 5.4's strict rule (lutf8lib.c, utf8_decode with strict): no
 * overlong forms (so not Java's C0 80 for U+0000), no surrogates, nothing
 * past U+10FFFF.
 */
static const char *utf8_next(const char *s)
{
	static const uint32_t limits[] = {~(uint32_t)0, 0x80, 0x800, 0x10000u, 0x200000u,
					  0x4000000u};
	unsigned c = (unsigned char)s[0];
	uint32_t res = 0;
	if (c < 0x80)
		return s + 1;
	int count = 0;
	for (; c & 0x40; c <<= 1) {
		unsigned cc = (unsigned char)s[++count];
		if ((cc & 0xC0) != 0x80)
			return NULL;
		res = (res << 6) | (cc & 0x3F);
	}
	if (count > 5)
		return NULL;
	res |= (uint32_t)(c & 0x7F) << (count * 5);
	if (res > 0x7FFFFFFFu || res < limits[count])
		return NULL;
	if (res > 0x10FFFFu || (res >= 0xD800u && res <= 0xDFFFu))
		return NULL;
	return s + count + 1;
}

/* utf8_len: characters in s, or -1 when it is not strict UTF-8 (Lua's utf8.len). */
static int64_t utf8_len(const char *s)
{
	int64_t n = 0;
	while (*s) {
		if (!(s = utf8_next(s)))
			return -1;
		n++;
	}
	return n;
}

char *waste_text_show(const char *text, uint32_t width)
{
	size_t len = strlen(text), keep = len;
	bool cut = false;
	int64_t chars = utf8_len(text);
	if (chars >= 0 && (uint64_t)chars > width) {
		const char *p = text;
		for (uint32_t k = 0; k < width; k++)
			p = utf8_next(p);
		keep = (size_t)(p - text);
		cut = true;
	} else if (chars < 0 && len > width) {
		keep = width;
		cut = true;
	}
	char *out = xmalloc(keep * 4 + 4), *o = out;
	for (size_t k = 0; k < keep; k++) {
		unsigned char c = (unsigned char)text[k];
		if (c == '\n' || c == '\t' || c == '\r') {
			*o++ = '\\';
			*o++ = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
		} else if (c < 32 || c == 127) {
			static const char hex[] = "0123456789ABCDEF";
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		} else {
			*o++ = (char)c;
		}
	}
	if (cut)
		memcpy(o, "...", 3), o += 3;
	*o = 0;
	return out;
}

/* ---- duplicate strings ---- */

struct text_ent {
	char *text;
	size_t len;		/* bytes */
	uint32_t next;		/* the next entry of the same hash, or UINT32_MAX */
	uint32_t example;
	uint64_t count, copy, total;
};

/* FNV-1a, 64 bits; 0 (the map's empty key) becomes 1. */
static uint64_t text_hash(const char *s, size_t len)
{
	uint64_t x = u64_fnv1a_n(s, len, U64_FNV_BASIS);
	return x ? x : 1;
}

static int by_wasted(const void *a, const void *b)
{
	const struct waste_dup *x = a, *y = b;
	if (x->wasted_bytes != y->wasted_bytes)
		return x->wasted_bytes < y->wasted_bytes ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->text, y->text);
}

int waste_dup_strings(const struct heap *h, uint32_t min_count, struct waste_dup **out,
		      uint32_t *n)
{
	*out = NULL;
	*n = 0;
	if (min_count < 1)
		min_count = 1;
	/* h:class("java.lang.String"): the first class of that exact name. */
	uint32_t sc = heap_class_by_name(h, "java.lang.String");
	if (sc == HEAP_NONE)
		return HS_OK;
	uint32_t ns;
	const uint32_t *strs = heap_instances(h, sc, &ns);
	uint32_t voff = 0;
	uint8_t vtype = 0;
	bool has_value = heap_field_locate(h, sc, "value", &voff, &vtype) && vtype == HPROF_OBJECT;

	struct u64map by_hash, shared;	/* hash -> first entry; (entry, array) pairs seen */
	u64map_init(&by_hash, 1024);
	u64map_init(&shared, 64);
	size_t nent = 0, cap = 1024;
	struct text_ent *ent = xmallocarray(cap, sizeof *ent);
	int st = HS_OK;
	for (uint32_t k = 0; k < ns; k++) {
		if ((k & 0xfff) == 0 && hs_interrupted) {
			st = HS_INTERRUPTED;
			goto fail;
		}
		uint32_t s = strs[k];
		char *text = heap_string(h, s, WASTE_TEXT_MAX);
		if (!text)
			text = xstrdup("");	/* `s.text or ""` */
		size_t len = strlen(text);
		uint64_t hash = text_hash(text, len), head;
		uint32_t e = UINT32_MAX;
		if (u64map_get(&by_hash, hash, &head))
			for (e = (uint32_t)head; e != UINT32_MAX; e = ent[e].next)
				if (ent[e].len == len && !memcmp(ent[e].text, text, len))
					break;
		/* s.value: the array, when the field names an object of the dump */
		uint32_t arr = HEAP_NONE;
		if (has_value && heap_kind(h, s) == HEAP_INSTANCE) {
			struct heap_value v = heap_field_at(h, s, voff, vtype);
			if (v.type == HPROF_OBJECT && v.v.id)
				arr = heap_index(h, v.v.id);
		}
		uint64_t ssize = heap_shallow(h, s), asize = arr != HEAP_NONE ? heap_shallow(h, arr) : 0;
		if (e == UINT32_MAX) {
			if (nent == cap)
				ent = xreallocarray(ent, cap *= 2, sizeof *ent);
			e = (uint32_t)nent++;
			ent[e] = (struct text_ent){text, len, UINT32_MAX, s, 0, ssize + asize, 0};
			if (u64map_get(&by_hash, hash, &head))
				ent[e].next = (uint32_t)head;
			u64map_put(&by_hash, hash, e);
		} else {
			free(text);
		}
		ent[e].count++;
		ent[e].total += ssize;
		if (arr == HEAP_NONE)
			continue;
		/* An array only this String refers to is new to its text; others are looked up. */
		uint32_t nin;
		const uint32_t *in = heap_in(h, arr, &nin);
		if (nin == 1 && in[0] == s) {
			ent[e].total += asize;
		} else {
			uint64_t key = ((uint64_t)e + 1) << 32 | arr, seen;
			if (!u64map_get(&shared, key, &seen)) {
				u64map_put(&shared, key, 1);
				ent[e].total += asize;
			}
		}
	}
	struct waste_dup *rows = xmallocarray(nent + 1, sizeof *rows);
	uint32_t m = 0;
	for (size_t e = 0; e < nent; e++) {
		if (ent[e].count < min_count) {
			free(ent[e].text);
			continue;
		}
		int64_t chars = utf8_len(ent[e].text);
		rows[m++] = (struct waste_dup){
			.text = ent[e].text,
			.length = chars >= 0 ? (uint64_t)chars : ent[e].len,
			.count = ent[e].count,
			.copy_bytes = ent[e].copy,
			.total_bytes = ent[e].total,
			.wasted_bytes = ent[e].total - ent[e].copy,
			.example = ent[e].example,
		};
	}
	qsort(rows, m, sizeof *rows, by_wasted);
	*out = rows;
	*n = m;
	nent = 0;	/* the texts now belong to the rows */
fail:
	for (size_t e = 0; e < nent; e++)
		free(ent[e].text);
	free(ent);
	u64map_free(&by_hash);
	u64map_free(&shared);
	return st;
}

void waste_dup_free(struct waste_dup *rows, uint32_t n)
{
	for (uint32_t k = 0; rows && k < n; k++)
		free(rows[k].text);
	free(rows);
}

/* ---- collections ---- */

enum layout { LAY_LIST, LAY_VECTOR, LAY_MAP, LAY_SET, LAY_DEQUE, LAY_CHM };

static const struct {
	const char *name;
	enum layout layout;
} kinds[] = {
	{"java.util.ArrayList", LAY_LIST},
	{"java.util.Vector", LAY_VECTOR},
	{"java.util.HashMap", LAY_MAP},
	{"java.util.LinkedHashMap", LAY_MAP},
	{"java.util.HashSet", LAY_SET},
	{"java.util.LinkedHashSet", LAY_SET},
	{"java.util.ArrayDeque", LAY_DEQUE},
	{"java.util.concurrent.ConcurrentHashMap", LAY_CHM},
};
#define NKINDS (sizeof kinds / sizeof *kinds)

/* kind_of: the listed class c is or inherits from (at most 100 steps up), or -1. */
static int kind_of(const struct heap *h, uint32_t c)
{
	for (int depth = 0; c != HEAP_NONE && depth < 100; c = h->classes[c].super, depth++)
		for (size_t k = 0; k < NKINDS; k++)
			if (!strcmp(h->classes[c].name, kinds[k].name))
				return (int)k;
	return -1;
}

/* An integral field (byte, short, int, long); 0 when missing or of another type. */
static int64_t int_field(const struct heap *h, uint32_t o, const char *name)
{
	struct heap_value v;
	if (!heap_field(h, o, name, &v))
		return 0;
	switch (v.type) {
	case HPROF_BYTE: case HPROF_SHORT: case HPROF_INT: case HPROF_LONG: return v.v.i;
	default: return 0;
	}
}

/* An object field: the object, or HEAP_NONE for null, a missing record or no field. */
static uint32_t obj_field(const struct heap *h, uint32_t o, const char *name)
{
	struct heap_value v;
	if (!heap_field(h, o, name, &v) || v.type != HPROF_OBJECT || !v.v.id)
		return HEAP_NONE;
	return heap_index(h, v.v.id);
}

/* An object field that holds an array (object or primitive), else HEAP_NONE. */
static uint32_t array_field(const struct heap *h, uint32_t o, const char *name)
{
	uint32_t a = obj_field(h, o, name);
	if (a == HEAP_NONE)
		return HEAP_NONE;
	enum heap_kind k = heap_kind(h, a);
	return k == HEAP_OBJ_ARRAY || k == HEAP_PRIM_ARRAY ? a : HEAP_NONE;
}

/* size and backing array of collection o of layout l. */
static int64_t coll_size(const struct heap *h, uint32_t o, enum layout l, uint32_t *arr)
{
	switch (l) {
	case LAY_LIST:
		*arr = array_field(h, o, "elementData");
		return int_field(h, o, "size");
	case LAY_VECTOR:
		*arr = array_field(h, o, "elementData");
		return int_field(h, o, "elementCount");
	case LAY_MAP:
		*arr = array_field(h, o, "table");
		return int_field(h, o, "size");
	case LAY_SET: {
		uint32_t m = obj_field(h, o, "map");
		*arr = m != HEAP_NONE ? array_field(h, m, "table") : HEAP_NONE;
		return m != HEAP_NONE ? int_field(h, m, "size") : 0;
	}
	case LAY_DEQUE: {
		*arr = array_field(h, o, "elements");
		int64_t len = *arr != HEAP_NONE ? heap_array_length(h, *arr) : 0;
		if (len <= 0)
			return 0;
		int64_t d = (int64_t)((uint64_t)int_field(h, o, "tail") - (uint64_t)int_field(h, o, "head"));
		return (d % len + len) % len;	/* Lua's % rounds toward minus infinity */
	}
	case LAY_CHM: {
		*arr = array_field(h, o, "table");
		int64_t n = int_field(h, o, "baseCount");
		uint32_t cells = array_field(h, o, "counterCells");
		if (cells == HEAP_NONE)
			return n;
		uint32_t len = heap_array_length(h, cells);
		for (uint32_t k = 0; k < len; k++) {
			struct heap_value v = heap_array_elem(h, cells, k);
			uint32_t c;
			if (v.type == HPROF_OBJECT && v.v.id && (c = heap_index(h, v.v.id)) != HEAP_NONE)
				n += int_field(h, c, "value");
		}
		return n;
	}
	}
	return 0;
}

static int by_coll_wasted(const void *a, const void *b)
{
	const struct waste_coll *x = a, *y = b;
	if (x->wasted_bytes != y->wasted_bytes)
		return x->wasted_bytes < y->wasted_bytes ? 1 : -1;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->cls < y->cls ? -1 : x->cls > y->cls;
}

int waste_collections(const struct heap *h, double threshold_pct, bool all,
		      struct waste_coll **out, uint32_t *n, struct waste_coll *total)
{
	struct waste_coll *rows = xmallocarray((size_t)h->nclasses + 1, sizeof *rows);
	int64_t *sparse_slots = xmallocarray((size_t)h->nclasses + 1, sizeof *sparse_slots);
	int ref_size = 0;	/* from the first object array met */
	uint32_t m = 0;
	*out = NULL;
	*n = 0;
	for (uint32_t c = 0; c < h->nclasses; c++) {
		int k = h->classes[c].count ? kind_of(h, c) : -1;
		if (k < 0)
			continue;
		const char *dot = strrchr(kinds[k].name, '.');
		struct waste_coll r = {c, h->classes[c].name, dot + 1, h->classes[c].count, 0, 0, 0, 0};
		int64_t slots = 0;
		uint32_t cnt;
		const uint32_t *inst = heap_instances(h, c, &cnt);
		for (uint32_t j = 0; j < cnt; j++) {
			if ((j & 0xfff) == 0 && hs_interrupted) {
				free(rows);
				free(sparse_slots);
				return HS_INTERRUPTED;
			}
			uint32_t o = inst[j], arr = HEAP_NONE;
			int64_t size = coll_size(h, o, kinds[k].layout, &arr);
			int64_t capacity = arr != HEAP_NONE ? heap_array_length(h, arr) : 0;
			if (arr != HEAP_NONE && !ref_size && heap_kind(h, arr) == HEAP_OBJ_ARRAY)
				ref_size = heap_shallow(h, arr) >= 24 + 8 * (uint64_t)capacity ? 8 : 4;
			if (size == 0) {
				r.empty++;
				r.unused_slots += capacity;
				/* only an array of this collection alone is its waste */
				uint32_t nin;
				if (arr != HEAP_NONE && (heap_in(h, arr, &nin), nin == 1))
					r.wasted_bytes += (int64_t)heap_shallow(h, arr);
			} else if ((double)size * 100 < threshold_pct * (double)capacity) {
				r.sparse++;
				r.unused_slots += capacity - size;
				slots += capacity - size;
			}
		}
		if (all || r.empty + r.sparse > 0) {
			sparse_slots[m] = slots;
			rows[m++] = r;
		}
	}
	*total = (struct waste_coll){HEAP_NONE, "total", "", 0, 0, 0, 0, 0};
	for (uint32_t k = 0; k < m; k++) {
		rows[k].wasted_bytes += sparse_slots[k] * (ref_size ? ref_size : 4);
		total->instances += rows[k].instances;
		total->empty += rows[k].empty;
		total->sparse += rows[k].sparse;
		total->unused_slots += rows[k].unused_slots;
		total->wasted_bytes += rows[k].wasted_bytes;
	}
	free(sparse_slots);
	qsort(rows, m, sizeof *rows, by_coll_wasted);
	*out = rows;
	*n = m;
	return HS_OK;
}
