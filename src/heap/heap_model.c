/*
 * heap_model.c - the heap model kept in the index file, so that reopening
 * a dump maps it instead of reading the dump again (heap.h, heap_model_save
 * and heap_model_load; docs/out-of-core.md, "The model in the index").
 *
 * The section is a header, the per-object and per-reference arrays as the
 * heap holds them (record offsets, classes, shallow sizes, outgoing
 * references, objects by class), then the small tables (classes and their
 * fields, GC roots, threads, frames) and their strings. Each array of 64
 * KiB or more starts at a multiple of a page, anything else at a multiple
 * of 8 bytes, so that the arrays are used where they lie in the mapping,
 * and so that the writer can map the index over the big arrays it writes
 * (big_rehome). The id directory is not kept: it is rebuilt from the ids, which
 * the load reads from the records anyway to check them (or, when a seal
 * spares the checks, once lookups need it: heap_index); the incoming
 * references are built on first use, as after heap_load.
 *
 * An index is input like a dump: the load checks every offset, index and
 * count against what the section and the dump hold before the heap is used
 * (a valid checksum proves a file undamaged, not sane).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../base/big.h"
#include "heap_internal.h"

#define MODEL_MAGIC 0x4c444f4d50414548ULL	/* "HEAPMODL" */
#define MODEL_VERSION 3u	/* 3: HotSpot's layout per JDK (issue 35) */
#define PAGE 4096u	/* big arrays start at multiples of this (array_align) */
#define NO_STR UINT32_MAX

struct mhdr {
	uint64_t magic;
	uint32_t version, id_size;
	uint64_t dump_size;		/* bytes of the (inflated) dump */
	uint64_t nrefs;
	uint32_t n, nclasses, nroots, nthreads, nframes, nheaps;
	uint32_t npos_far, nfields, nstatics, nthread_frames;
	uint32_t class_class, string_class, thread_class, loader_class;
	int32_t oop_size, header_size;
	uint8_t oop_size_forced, utf16_be, art_layout, has_heap_of;
	uint32_t ndumps, dump;
	uint32_t oop_source;		/* string offset, or NO_STR */
	uint8_t use_layout, layout_gen15, layout_forced, oops_conflict;
	int32_t layout_jdk, layout_header, layout_oop, layout_word, layout_align;
	uint32_t layout_misfits, pad_layout;
	uint32_t layout_source;		/* string offset, or NO_STR */
	uint32_t heap_names[HEAP_MAX_HEAPS];
	uint64_t dangling_refs, dangling_roots, duplicate_ids, unknown_class_objs;
	uint64_t total_shallow, unreachable_marks;
	uint64_t strings_len;
};

struct mclass {
	uint64_t id, count, shallow;
	uint32_t obj, super, loader, name;
	uint32_t hprof_size, inst_size, data_size;
	uint32_t fields, statics;	/* first entries in the field and static tables */
	uint16_t nfields, nstatics;
	uint8_t elem_type, obj_kind, pad[2];
};

struct mfield {
	uint32_t name;
	uint8_t type, pad[3];
};

struct mstatic {
	uint64_t value_pos;
	uint32_t name;
	uint8_t type, pad[3];
};

struct mroot {
	uint32_t obj, thread;
	int32_t frame;
	uint8_t kind, pad[3];
};

struct mthread {
	uint32_t obj, serial, nframes, frames;
};

struct mframe {
	uint64_t id;
	uint32_t method, signature, source, class_name;
	int32_t line, pad;
};

/* ---- saving ---- */

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static size_t put(struct buf *b, const void *p, size_t n)
{
	size_t at = (b->len + 7) & ~(size_t)7;
	if (at + n > b->cap) {
		b->cap = (at + n) * 2 + 4096;
		b->p = xrealloc(b->p, b->cap);
	}
	memset(b->p + b->len, 0, at - b->len);
	if (n)
		memcpy(b->p + at, p, n);
	b->len = at + n;
	return at;
}

struct strtab {
	struct buf b;
	struct u64map seen;	/* (uintptr_t) string -> offset + 1 */
};

static uint32_t str(struct strtab *t, const char *s)
{
	if (!s)
		return NO_STR;
	uint64_t at;
	if (u64map_get(&t->seen, (uint64_t)(uintptr_t)s, &at))
		return (uint32_t)(at - 1);
	size_t n = strlen(s) + 1;
	if (t->b.len + n > t->b.cap) {
		t->b.cap = (t->b.len + n) * 2 + 4096;
		t->b.p = xrealloc(t->b.p, t->b.cap);
	}
	memcpy(t->b.p + t->b.len, s, n);
	at = t->b.len;
	t->b.len += n;
	u64map_put(&t->seen, (uint64_t)(uintptr_t)s, at + 1);
	return at < NO_STR ? (uint32_t)at : NO_STR;
}

static const uint8_t zeros[PAGE];

/* part_at: p (len bytes) as the next part, at the next multiple of align. */
static void part_at(struct heap_model *m, const void *p, uint64_t len, uint64_t align)
{
	if (m->len % align) {
		m->parts[m->nparts++] = (struct heap_part){zeros, align - m->len % align};
		m->len += align - m->len % align;
	}
	m->parts[m->nparts++] = (struct heap_part){p, len};
	m->len += len;
}

/* array_align: where an array of len bytes starts: a multiple of a page
 * when it can be a big array (big.h), so that the index's writer can map
 * the file over one it has just written there (big_rehome) and the disk
 * holds it once; else of 8 bytes, as a table. */
static uint64_t array_align(uint64_t len)
{
	return len >= BIG_MIN ? PAGE : 8;
}

/* part: a table, at a multiple of 8 bytes. part_array: an array. */
static void part(struct heap_model *m, const void *p, uint64_t len)
{
	part_at(m, p, len, 8);
}

static void part_array(struct heap_model *m, const void *p, uint64_t len)
{
	part_at(m, p, len, array_align(len));
}

static int by_key(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int heap_model_save(const struct heap *h, struct heap_model *m)
{
	memset(m, 0, sizeof *m);
	if (h->damaged || h->ids || h->pos || !h->pos_lo)
		return HS_ERR;
	struct mhdr *hd = xcalloc(1, sizeof *hd);
	struct strtab st;
	memset(&st, 0, sizeof st);
	u64map_init(&st.seen, 1024);
	struct buf meta;
	memset(&meta, 0, sizeof meta);
	uint32_t n = h->n;
	hd->magic = MODEL_MAGIC;
	hd->version = MODEL_VERSION;
	hd->id_size = (uint32_t)h->hp->id_size;
	hd->dump_size = h->hp->size;
	hd->nrefs = h->nrefs;
	hd->n = n;
	hd->nclasses = h->nclasses;
	hd->nroots = h->nroots;
	hd->nthreads = h->nthreads;
	hd->nframes = h->nframes;
	hd->nheaps = h->nheaps;
	hd->class_class = h->class_class;
	hd->string_class = h->string_class;
	hd->thread_class = h->thread_class;
	hd->loader_class = h->loader_class;
	hd->oop_size = h->oop_size;
	hd->header_size = h->header_size;
	hd->oop_size_forced = h->oop_size_forced;
	hd->utf16_be = h->utf16_be;
	hd->art_layout = h->art_layout;
	hd->has_heap_of = h->heap_of != NULL;
	hd->ndumps = h->ndumps;
	hd->dump = h->dump;
	hd->oop_source = str(&st, h->oop_source);
	hd->use_layout = h->use_layout;
	hd->layout_gen15 = h->layout.gen15;
	hd->layout_forced = h->layout_forced;
	hd->layout_jdk = h->layout.jdk;
	hd->layout_header = h->layout.header;
	hd->layout_oop = h->layout.oop;
	hd->layout_word = h->layout.word;
	hd->layout_align = h->layout.align;
	hd->oops_conflict = h->oops_conflict;
	hd->layout_misfits = h->layout_misfits;
	hd->layout_source = str(&st, h->layout_source);
	for (uint32_t k = 0; k < HEAP_MAX_HEAPS; k++)
		hd->heap_names[k] = k < h->nheaps ? str(&st, h->heap_names[k]) : NO_STR;
	hd->dangling_refs = h->dangling_refs;
	hd->dangling_roots = h->dangling_roots;
	hd->duplicate_ids = h->duplicate_ids;
	hd->unknown_class_objs = h->unknown_class_objs;
	hd->total_shallow = h->total_shallow;
	hd->unreachable_marks = h->unreachable_marks;

	/* The small tables, into meta, in the order the load reads them; the
	 * far record offsets by object, so that the same heap saves the same. */
	uint64_t *far = xreallocarray(NULL, h->pos_far.len + 1, 16);
	for (size_t k = 0; k < h->pos_far.cap; k++)
		if (h->pos_far.keys[k] && hd->npos_far < h->pos_far.len) {
			far[2 * hd->npos_far] = h->pos_far.keys[k];
			far[2 * hd->npos_far++ + 1] = h->pos_far.vals[k];
		}
	qsort(far, hd->npos_far, 16, by_key);
	put(&meta, far, (size_t)hd->npos_far * 16);
	free(far);
	uint32_t nf = 0, ns = 0;
	for (uint32_t c = 0; c < h->nclasses; c++) {
		const struct heap_class *k = &h->classes[c];
		struct mclass mc = {
			.id = k->id, .count = k->count, .shallow = k->shallow, .obj = k->obj,
			.super = k->super, .loader = k->loader, .name = str(&st, k->name),
			.hprof_size = k->hprof_size, .inst_size = k->inst_size,
			.data_size = k->data_size, .fields = nf, .statics = ns,
			.nfields = k->nfields, .nstatics = k->nstatics,
			.elem_type = k->elem_type, .obj_kind = k->obj_kind};
		put(&meta, &mc, sizeof mc);
		nf += k->nfields;
		ns += k->nstatics;
	}
	for (uint32_t c = 0; c < h->nclasses; c++)
		for (uint32_t f = 0; f < h->classes[c].nfields; f++) {
			const struct heap_field *fd = &h->classes[c].fields[f];
			struct mfield mf = {.name = str(&st, fd->name), .type = fd->type};
			put(&meta, &mf, sizeof mf);
		}
	for (uint32_t c = 0; c < h->nclasses; c++)
		for (uint32_t s = 0; s < h->classes[c].nstatics; s++) {
			const struct heap_static *sd = &h->classes[c].statics[s];
			struct mstatic ms = {.value_pos = sd->value_pos, .name = str(&st, sd->name),
					     .type = sd->type};
			put(&meta, &ms, sizeof ms);
		}
	hd->nfields = nf;
	hd->nstatics = ns;
	for (uint32_t r = 0; r < h->nroots; r++) {
		const struct heap_root *rt = &h->roots[r];
		struct mroot mr = {.obj = rt->obj, .thread = rt->thread, .frame = rt->frame,
				   .kind = rt->kind};
		put(&meta, &mr, sizeof mr);
	}
	uint32_t ntf = 0;
	for (uint32_t t = 0; t < h->nthreads; t++) {
		const struct heap_thread *th = &h->threads[t];
		struct mthread mt = {th->obj, th->serial, th->nframes, ntf};
		put(&meta, &mt, sizeof mt);
		ntf += th->nframes;
	}
	uint32_t *tf = xreallocarray(NULL, (size_t)ntf + 1, sizeof *tf);
	for (uint32_t t = 0, k = 0; t < h->nthreads; k += h->threads[t++].nframes)
		memcpy(tf + k, h->threads[t].frames, (size_t)h->threads[t].nframes * sizeof *tf);
	put(&meta, tf, (size_t)ntf * sizeof *tf);	/* one array: put aligns each call */
	free(tf);
	hd->nthread_frames = ntf;
	for (uint32_t f = 0; f < h->nframes; f++) {
		const struct heap_frame *fr = &h->frames[f];
		struct mframe mf = {.id = fr->id, .method = str(&st, fr->method),
				    .signature = str(&st, fr->signature),
				    .source = str(&st, fr->source),
				    .class_name = str(&st, fr->class_name), .line = fr->line};
		put(&meta, &mf, sizeof mf);
	}
	put(&meta, NULL, 0);
	hd->strings_len = st.b.len;
	u64map_free(&st.seen);
	bool too_many = st.b.len >= NO_STR;

	size_t nblocks = ((size_t)n >> HEAP_POS_BLOCK_SHIFT) + 1;
	m->hdr = hd;
	m->meta = meta.p;
	m->strings = st.b.p;
	part(m, hd, sizeof *hd);
	part_array(m, h->pos_lo, ((uint64_t)n + 1) * 4);
	part_array(m, h->pos_base, (uint64_t)nblocks * 8);
	part_array(m, h->cls, (uint64_t)n * 4);
	part_array(m, h->size, (uint64_t)n * 2);
	part_array(m, h->out_start, ((uint64_t)n + 1) * 4);
	part_array(m, h->out, h->nrefs * 4);
	part_array(m, h->inst_start, ((uint64_t)h->nclasses + 1) * 4);
	part_array(m, h->inst, (uint64_t)n * 4);
	if (h->heap_of)
		part_array(m, h->heap_of, n);
	part(m, meta.p, meta.len);
	part(m, st.b.p, st.b.len);
	if (too_many) {
		heap_model_save_free(m);
		return HS_ERR;
	}
	return HS_OK;
}

void heap_model_save_free(struct heap_model *m)
{
	free(m->hdr);
	free(m->meta);
	free(m->strings);
	memset(m, 0, sizeof *m);
}

/* ---- loading ---- */

struct cur {
	const uint8_t *p;
	uint64_t len, at;
};

/* take_at: count items of size bytes at the next multiple of align, or NULL
 * when the section does not hold them. take: a table (8), take_array: an
 * array (part_array). */
static const void *take_at(struct cur *c, uint64_t count, uint64_t size, uint64_t align)
{
	uint64_t at = (c->at + align - 1) / align * align;
	if (at > c->len || (size && count > (c->len - at) / size))
		return NULL;
	c->at = at + count * size;
	return c->p + at;
}

static const void *take(struct cur *c, uint64_t count, uint64_t size)
{
	return take_at(c, count, size, 8);
}

static const void *take_array(struct cur *c, uint64_t count, uint64_t size)
{
	uint64_t len = size && count > UINT64_MAX / size ? UINT64_MAX : count * size;
	return take_at(c, count, size, array_align(len));
}

/* A string of the table, or NULL: *ok goes false when off is out of it.
 * The table ends with a NUL (checked), so every string in it is ended. */
static const char *sget(const char *tab, uint64_t len, uint32_t off, bool *ok)
{
	if (off == NO_STR)
		return NULL;
	if (off >= len) {
		*ok = false;
		return NULL;
	}
	return tab + off;
}

static bool kind_matches(uint8_t kind, uint8_t tag)
{
	switch (kind) {
	case HEAP_INSTANCE: return tag == HPROF_GC_INSTANCE_DUMP;
	case HEAP_OBJ_ARRAY: return tag == HPROF_GC_OBJ_ARRAY_DUMP;
	case HEAP_PRIM_ARRAY:
		return tag == HPROF_GC_PRIM_ARRAY_DUMP || tag == HPROF_GC_PRIM_ARRAY_NODATA;
	case HEAP_CLASS: return tag == HPROF_GC_CLASS_DUMP;
	default: return true;	/* mixed or none: heap_kind reads the record's tag */
	}
}

/* check_objects: every object's record in [from, to) is a whole object
 * record of the dump, of its class's kind, and the ids rise; h->ids gets
 * them. */
struct span {
	struct heap *h;
	uint32_t from, to;
	const char *why;
};

static void *check_objects(void *arg)
{
	struct span *w = arg;
	struct heap *h = w->h;
	const struct hprof *hp = h->hp;
	uint64_t prev = 0;
	for (uint32_t i = w->from; i < w->to; i++) {
		if (h->cls[i] >= h->nclasses) {
			w->why = "an object's class is out of range";
			return NULL;
		}
		size_t p = heap_pos(h, i), q = p;
		struct hprof_sub s;
		struct hs_error e;
		if (p >= hp->size || p < hp->body) {
			w->why = "a record offset is outside the dump";
			return NULL;
		}
		if (hprof_sub_next(hp, &q, hp->size, &s, &e) != 1) {
			w->why = "a record offset is not at a record of the dump";
			return NULL;
		}
		if (s.tag != HPROF_GC_INSTANCE_DUMP && s.tag != HPROF_GC_OBJ_ARRAY_DUMP &&
		    s.tag != HPROF_GC_PRIM_ARRAY_DUMP && s.tag != HPROF_GC_PRIM_ARRAY_NODATA &&
		    s.tag != HPROF_GC_CLASS_DUMP) {
			w->why = "a record offset is not at an object's record";
			return NULL;
		}
		if (!kind_matches(h->classes[h->cls[i]].obj_kind, s.tag)) {
			w->why = "an object's record is not of its class's kind";
			return NULL;
		}
		if (i > w->from && s.id <= prev) {
			w->why = "the objects' ids do not rise";
			return NULL;
		}
		h->ids[i] = prev = s.id;
	}
	return NULL;
}

static const char *check_refs(const struct heap *h)
{
	if (h->out_start[0] != 0 || h->out_start[h->n] != h->nrefs)
		return "the references' offsets do not span them";
	for (uint32_t i = 0; i < h->n; i++)
		if (h->out_start[i + 1] < h->out_start[i])
			return "the references' offsets fall";
	for (uint64_t k = 0; k < h->nrefs; k++)
		if (h->out[k] >= h->n)
			return "a reference's target is out of range";
	if (h->inst_start[0] != 0 || h->inst_start[h->nclasses] != h->n)
		return "the objects by class do not span them";
	for (uint32_t c = 0; c < h->nclasses; c++) {
		uint32_t from = h->inst_start[c], to = h->inst_start[c + 1];
		if (to < from || to > h->n)
			return "the objects by class fall";
		for (uint32_t k = from; k < to; k++)
			if (h->inst[k] >= h->n || h->cls[h->inst[k]] != c ||
			    (k > from && h->inst[k] <= h->inst[k - 1]))
				return "the objects by class are not the classes' objects";
	}
	return NULL;
}

static bool idx_ok(uint32_t v, uint32_t lim)
{
	return v == HEAP_NONE || v < lim;
}

/* small_tables: the classes, roots, threads and frames out of the meta part. */
static const char *small_tables(struct heap *h, const struct mhdr *hd, struct cur *c,
				const char *strs, uint64_t slen)
{
	const struct hprof *hp = h->hp;
	bool ok = true;
	const uint64_t *far = take(c, hd->npos_far, 16);
	const struct mclass *mc = take(c, hd->nclasses, sizeof *mc);
	const struct mfield *mf = take(c, hd->nfields, sizeof *mf);
	const struct mstatic *ms = take(c, hd->nstatics, sizeof *ms);
	const struct mroot *mr = take(c, hd->nroots, sizeof *mr);
	const struct mthread *mt = take(c, hd->nthreads, sizeof *mt);
	const uint32_t *tf = take(c, hd->nthread_frames, 4);
	const struct mframe *mfr = take(c, hd->nframes, sizeof *mfr);
	if (!far || !mc || !mf || !ms || !mr || !mt || !tf || !mfr)
		return "its tables run past its end";
	u64map_init(&h->pos_far, hd->npos_far + 64);
	for (uint32_t k = 0; k < hd->npos_far; k++) {
		if (!far[2 * k] || far[2 * k] > h->n)
			return "a far record offset is for no object";
		u64map_put(&h->pos_far, far[2 * k], far[2 * k + 1]);
	}
	h->classes = xcalloc((size_t)h->nclasses + 1, sizeof *h->classes);
	for (uint32_t k = 0; k < h->nclasses; k++) {
		const struct mclass *m = &mc[k];
		struct heap_class *cl = &h->classes[k];
		if (!idx_ok(m->obj, h->n) || !idx_ok(m->super, h->nclasses) ||
		    !idx_ok(m->loader, h->n) || m->obj_kind > HEAP_KIND_NONE ||
		    m->fields > hd->nfields || m->nfields > hd->nfields - m->fields ||
		    m->statics > hd->nstatics || m->nstatics > hd->nstatics - m->statics)
			return "a class is out of range";
		*cl = (struct heap_class){
			.id = m->id, .obj = m->obj, .super = m->super, .loader = m->loader,
			.name = sget(strs, slen, m->name, &ok), .hprof_size = m->hprof_size,
			.inst_size = m->inst_size, .data_size = m->data_size,
			.elem_type = m->elem_type, .obj_kind = m->obj_kind,
			.nfields = m->nfields, .nstatics = m->nstatics, .count = m->count,
			.shallow = m->shallow};
		if (!cl->name)
			return "a class has no name";
		cl->fields = xcalloc((size_t)m->nfields + 1, sizeof *cl->fields);
		for (uint32_t f = 0; f < m->nfields; f++) {
			const struct mfield *x = &mf[m->fields + f];
			cl->fields[f] = (struct heap_field){sget(strs, slen, x->name, &ok), x->type};
			if (!cl->fields[f].name)
				ok = false;
		}
		cl->statics = xcalloc((size_t)m->nstatics + 1, sizeof *cl->statics);
		for (uint32_t s = 0; s < m->nstatics; s++) {
			const struct mstatic *x = &ms[m->statics + s];
			uint64_t sz = (uint64_t)hprof_type_size(hp, x->type);
			if (!sz || x->value_pos > hp->size || sz > hp->size - x->value_pos)
				return "a static field's value is outside the dump";
			cl->statics[s] = (struct heap_static){sget(strs, slen, x->name, &ok), x->type,
							      (size_t)x->value_pos};
			if (!cl->statics[s].name)
				ok = false;
		}
	}
	/* heap_class_of_object finds a class by its object, by binary search:
	 * the loader's order, classes with objects first, by object */
	for (uint32_t k = 1; k < h->nclasses; k++) {
		uint32_t a = h->classes[k - 1].obj, b = h->classes[k].obj;
		if (b != HEAP_NONE && (a == HEAP_NONE || b <= a))
			return "the classes are out of order";
	}
	h->roots = xcalloc((size_t)h->nroots + 1, sizeof *h->roots);
	for (uint32_t r = 0; r < h->nroots; r++) {
		if (mr[r].obj >= h->n || !idx_ok(mr[r].thread, h->nthreads))
			return "a GC root is out of range";
		h->roots[r] = (struct heap_root){mr[r].obj, mr[r].kind, mr[r].thread, mr[r].frame};
	}
	h->threads = xcalloc((size_t)h->nthreads + 1, sizeof *h->threads);
	for (uint32_t t = 0; t < h->nthreads; t++) {
		const struct mthread *m = &mt[t];
		struct heap_thread *th = &h->threads[t];
		if (!idx_ok(m->obj, h->n) || m->frames > hd->nthread_frames ||
		    m->nframes > hd->nthread_frames - m->frames)
			return "a thread is out of range";
		*th = (struct heap_thread){m->obj, m->serial, m->nframes, NULL};
		th->frames = xcalloc((size_t)m->nframes + 1, sizeof *th->frames);
		for (uint32_t f = 0; f < m->nframes; f++) {
			if (tf[m->frames + f] >= h->nframes)
				return "a thread's frame is out of range";
			th->frames[f] = tf[m->frames + f];
		}
	}
	h->frames = xcalloc((size_t)h->nframes + 1, sizeof *h->frames);
	for (uint32_t f = 0; f < h->nframes; f++) {
		const struct mframe *m = &mfr[f];
		h->frames[f] = (struct heap_frame){
			m->id, sget(strs, slen, m->method, &ok), sget(strs, slen, m->signature, &ok),
			sget(strs, slen, m->source, &ok), sget(strs, slen, m->class_name, &ok),
			m->line};
		if (!h->frames[f].method || !h->frames[f].signature || !h->frames[f].source ||
		    !h->frames[f].class_name)
			ok = false;
	}
	return ok ? NULL : "a name is outside its strings";
}

/*
 * take_arrays: the per-object and per-reference arrays of a section of
 * header hd, in the order heap_model_save wrote them, into a's pointers
 * (the one place that reads the layout); false when the section is too
 * short for them.
 */
static bool take_arrays(struct cur *c, const struct mhdr *hd, struct heap *a)
{
	uint32_t n = hd->n;
	size_t nblocks = ((size_t)n >> HEAP_POS_BLOCK_SHIFT) + 1;
	a->pos_lo = (uint32_t *)take_array(c, (uint64_t)n + 1, 4);
	a->pos_base = (uint64_t *)take_array(c, nblocks, 8);
	a->cls = (uint32_t *)take_array(c, n, 4);
	a->size = (uint16_t *)take_array(c, n, 2);
	a->out_start = (uint32_t *)take_array(c, (uint64_t)n + 1, 4);
	a->out = (uint32_t *)take_array(c, hd->nrefs, 4);
	a->inst_start = (uint32_t *)take_array(c, (uint64_t)hd->nclasses + 1, 4);
	a->inst = (uint32_t *)take_array(c, n, 4);
	a->heap_of = hd->has_heap_of ? (uint8_t *)take_array(c, n, 1) : NULL;
	return a->pos_lo && a->pos_base && a->cls && a->size && a->out_start && a->out &&
	       a->inst_start && a->inst && (!hd->has_heap_of || a->heap_of);
}

int heap_model_adopt(struct heap *h, const struct heap_model_src *src)
{
	if (h->model_map || h->damaged || h->ids || h->pos || !h->pos_lo || !src->map)
		return HS_ERR;
	struct cur c = {src->data, src->len, 0};
	const struct mhdr *hd = take(&c, 1, sizeof *hd);
	uint32_t n = h->n;
	if (!hd || hd->magic != MODEL_MAGIC || hd->version != MODEL_VERSION || hd->n != n ||
	    hd->nrefs != h->nrefs || hd->nclasses != h->nclasses ||
	    hd->dump_size != h->hp->size || hd->has_heap_of != (h->heap_of != NULL))
		return HS_ERR;
	struct heap a;
	memset(&a, 0, sizeof a);
	if (!take_arrays(&c, hd, &a))
		return HS_ERR;
	big_free(h->pos_lo);
	big_free(h->pos_base);
	big_free(h->cls);
	big_free(h->size);
	big_free(h->out_start);
	big_free(h->out);
	free(h->inst_start);
	big_free(h->inst);
	big_free(h->heap_of);
	h->pos_lo = a.pos_lo;
	h->pos_base = a.pos_base;
	h->cls = a.cls;
	h->size = a.size;
	h->out_start = a.out_start;
	h->out = a.out;
	h->inst_start = a.inst_start;
	h->inst = a.inst;
	h->heap_of = a.heap_of;
	h->model_map = src->map;
	h->model_maplen = src->maplen;
	return HS_OK;
}

int heap_model_load(const char *path, const struct heap_load_opts *opts,
		    const struct heap_model_src *src, struct heap **out, const char **why)
{
	*out = NULL;
	*why = NULL;
	struct cur c = {src->data, src->len, 0};
	const struct mhdr *hd = take(&c, 1, sizeof *hd);
	if (!hd || hd->magic != MODEL_MAGIC || hd->version != MODEL_VERSION) {
		*why = "not a model this heapsh writes";
		return HS_ERR;
	}
	int want_oops = opts ? opts->oop_size : 0, want_layout = opts ? opts->layout_jdk : 0;
	if ((want_oops && (!hd->oop_size_forced || hd->oop_size != want_oops)) ||
	    (!want_oops && hd->oop_size_forced) || (opts && opts->dump > 1) || hd->dump > 1 ||
	    (want_layout && (!hd->layout_forced || hd->layout_jdk != want_layout)) ||
	    (!want_layout && hd->layout_forced)) {
		*why = "made with other options (--oops, --layout, --dump)";
		return HS_ERR;
	}
	struct hs_error err;
	struct heap *h = xcalloc(1, sizeof *h);
	h->names = xcalloc(1, sizeof *h->names);
	u64map_init(&h->names->interned, 16);
	u64map_init(&h->names->strings, 16);
	if (hprof_open(path, &h->hp, &err) != HS_OK) {
		*why = "the dump cannot be opened";
		goto fail;
	}
	if (h->hp->size != hd->dump_size || (uint32_t)h->hp->id_size != hd->id_size ||
	    hd->n >= UINT32_MAX - 1 || hd->nclasses >= UINT32_MAX - 1 ||
	    hd->nheaps > HEAP_MAX_HEAPS || (hd->oop_size != 4 && hd->oop_size != 8)) {
		*why = "it does not fit the dump";
		goto fail;
	}
	uint32_t n = hd->n;
	h->n = n;
	h->nrefs = hd->nrefs;
	h->nclasses = hd->nclasses;
	h->nroots = hd->nroots;
	h->nthreads = hd->nthreads;
	h->nframes = hd->nframes;
	h->model_map = src->map;	/* the arrays below are in it; heap_free knows */
	h->model_maplen = src->maplen;
	if (!take_arrays(&c, hd, h)) {
		*why = "its arrays run past its end";
		goto fail;
	}
	/* The strings are the section's last part; the tables come before. */
	uint64_t slen = hd->strings_len;
	if (!slen || slen > src->len || src->len - slen < c.at ||
	    src->data[src->len - 1] != 0) {
		*why = "its strings are not where they end it";
		goto fail;
	}
	const char *strs = (const char *)src->data + (src->len - slen);
	struct cur tabs = {src->data, src->len - slen, c.at};
	if ((*why = small_tables(h, hd, &tabs, strs, slen)))
		goto fail;
	bool ok = true;
	h->oop_source = sget(strs, slen, hd->oop_source, &ok);
	h->layout_source = sget(strs, slen, hd->layout_source, &ok);
	h->nheaps = hd->nheaps;
	for (uint32_t k = 0; k < hd->nheaps; k++)
		if (!(h->heap_names[k] = sget(strs, slen, hd->heap_names[k], &ok)))
			ok = false;
	if (!ok || !h->oop_source) {
		*why = "a name is outside its strings";
		goto fail;
	}
	if (h->heap_of && !src->trusted)
		for (uint32_t i = 0; i < n; i++)
			if (h->heap_of[i] >= (hd->nheaps ? hd->nheaps : 1)) {
				*why = "an object's heap is out of range";
				goto fail;
			}
	if (!idx_ok(hd->class_class, h->nclasses) || !idx_ok(hd->string_class, h->nclasses) ||
	    !idx_ok(hd->thread_class, h->nclasses) || !idx_ok(hd->loader_class, h->nclasses)) {
		*why = "a class is out of range";
		goto fail;
	}
	h->class_class = hd->class_class;
	h->string_class = hd->string_class;
	h->thread_class = hd->thread_class;
	h->loader_class = hd->loader_class;
	h->oop_size = hd->oop_size;
	h->header_size = hd->header_size;
	h->oop_size_forced = hd->oop_size_forced;
	h->utf16_be = hd->utf16_be;
	h->art_layout = hd->art_layout;
	h->use_layout = hd->use_layout;
	h->layout_forced = hd->layout_forced;
	h->oops_conflict = hd->oops_conflict != 0;
	h->layout_misfits = hd->layout_misfits;
	h->layout = (struct layout_cfg){hd->layout_gen15, hd->layout_jdk, hd->layout_header, hd->layout_oop,
					hd->layout_word, hd->layout_align};
	if (h->use_layout && ((h->layout.header != 8 && h->layout.header != 12 && h->layout.header != 16) ||
			      (h->layout.oop != 4 && h->layout.oop != 8) ||
			      (h->layout.word != 4 && h->layout.word != 8) || h->layout.align < 8 ||
			      h->layout.align > 256)) {
		*why = "it does not fit the dump";
		goto fail;
	}
	h->ndumps = hd->ndumps;
	h->dump = hd->dump;
	h->dangling_refs = hd->dangling_refs;
	h->dangling_roots = hd->dangling_roots;
	h->duplicate_ids = hd->duplicate_ids;
	h->unknown_class_objs = hd->unknown_class_objs;
	h->total_shallow = hd->total_shallow;
	h->unreachable_marks = hd->unreachable_marks;
	if (src->trusted) {
		/* checked by an earlier load, unchanged since (idx.h): nothing of
		 * O(objects) is read; the directory waits for lookups (heap_index) */
		h->id_min = n ? heap_id(h, 0) : 0;
		h->id_max = n ? heap_id(h, n - 1) : 0;
		goto done;
	}
	if ((*why = check_refs(h)))
		goto fail;
	/* The records, on two threads: they are most of the load's work. */
	h->ids = big_alloc((size_t)n + 1, sizeof *h->ids);
	struct span half[2] = {{h, 0, n / 2, NULL}, {h, n / 2, n, NULL}};
	heap_run2(check_objects, &half[0], &half[1], n >= 65536);
	if ((*why = half[0].why ? half[0].why : half[1].why))
		goto fail;
	if (n / 2 && n / 2 < n && h->ids[n / 2] <= h->ids[n / 2 - 1]) {
		*why = "the objects' ids do not rise";
		goto fail;
	}
	heap_build_directory(h);
	big_free(h->ids);
	h->ids = NULL;
done:
	if (opts && opts->progress)
		opts->progress(opts->progress_ctx, 1.0);
	*out = h;
	return HS_OK;
fail:
	h->model_map = NULL;	/* the caller keeps the mapping */
	if (!h->classes)
		h->nclasses = 0;
	if (!h->threads)
		h->nthreads = 0;
	heap_forget_mapped(h);
	heap_free(h);
	return HS_ERR;
}
