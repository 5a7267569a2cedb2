/*
 * heap_load.c - building the heap model from an HPROF file.
 *
 * Pass 1 walks the top-level records: UTF8 strings, LOAD CLASS names,
 * stack frames and traces, and every HEAP DUMP (SEGMENT) sub-record, noting
 * each object's id and record position and each GC root. The objects are
 * then put in id order (heap_sort.c), classes decoded (heap_classes.c),
 * and pass 2 visits every object once for its class, shallow size and
 * outgoing references. Incoming references are the transpose, built by
 * counting; then GC roots, threads and the positions' final form.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/big.h"
#include "loader.h"

static void progress(struct loader *L, size_t at)
{
	if (!L->opts || !L->opts->progress || at < L->next_progress)
		return;
	L->next_progress = at + (L->hp->size >> 6) + 1;
	L->opts->progress(L->opts->progress_ctx, (double)at / (double)L->hp->size * 0.7);
}

/* damage: note what was lost; the first cause is the one reported. */
static void damage(struct heap *h, uint64_t lost, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void damage(struct heap *h, uint64_t lost, const char *fmt, ...)
{
	if (!h->damaged) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(h->damage, sizeof h->damage, fmt, ap);
		va_end(ap);
	}
	h->damaged = true;
	h->lost_bytes += lost;
}

/* A HEAP DUMP (SEGMENT) body of the dump being read, to be walked. */
struct segment {
	size_t body, end;
};

/* The last segment, when the file ends inside it: what its record lacks. */
struct cut {
	uint64_t lost;		/* bytes the record says it has that the file lacks */
	struct hs_error err;
};

/*
 * What walking a run of segments gathers: pass 1 walks the first half of
 * the segments (by bytes) and the second half on two threads, each into
 * its own walk, and joins them in file order (join_walks), so the lists
 * come out as one walk would make them.
 */
struct walk {
	struct loader *L;
	const struct segment *seg;
	size_t nseg;
	const struct segment *cut_seg;	/* the cut segment (NULL: none) */
	const struct cut *cut;
	bool reports;		/* this walk reports progress (the calling thread's) */
	struct objpos *objs;
	size_t nobjs, capobjs;
	uint64_t ref_slots;	/* id-sized slots of instance fields and object arrays */
	size_t *classpos;	/* CLASS DUMP positions */
	size_t nclasspos, capclasspos;
	struct rawroot *roots;
	size_t nroots, caproots;
	struct rawthread *threads;
	size_t nthreads, capthreads;
	struct heapmark *marks;
	size_t nmarks, capmarks;
	uint64_t unreachable_marks;
	struct idstats ids;	/* of its objects' ids */
	/* damage(), kept here until the join: the first cause and the bytes lost */
	bool damaged;
	char damage[sizeof ((struct heap *)0)->damage];
	uint64_t lost_bytes;
	struct hs_error err;	/* grow_objs's refusal */
	int st;
};

static void walk_damage(struct walk *w, uint64_t lost, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void walk_damage(struct walk *w, uint64_t lost, const char *fmt, ...)
{
	if (!w->damaged) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(w->damage, sizeof w->damage, fmt, ap);
		va_end(ap);
	}
	w->damaged = true;
	w->lost_bytes += lost;
}

/*
 * grow_objs: half as much room again for object records. The array is a
 * big array (big.h): in memory it grows in place; past the budget it moves
 * to a file, and grows there by copying. False,
 * with w->err set, when the growth would pass the memory budget and the
 * spill folder has no room for it: the records come before the plan
 * (heap_load), so this is where a dump too big for memory and disk stops.
 */
static bool grow_objs(struct walk *w)
{
	size_t more = w->capobjs / 2 + 4096;
	uint64_t spill;
	/* past the budget the whole array moves to a file: plan for all of it */
	if (big_plan((uint64_t)(w->capobjs + more) * sizeof *w->objs,
		     (uint64_t)w->capobjs * sizeof *w->objs, &spill, &w->err) != HS_OK)
		return false;
	w->capobjs += more;
	w->objs = big_realloc(w->objs, w->capobjs, sizeof *w->objs);
	return true;
}

static inline void note_id(struct walk *w, uint64_t id)
{
	w->ids.lo = id < w->ids.lo ? id : w->ids.lo;
	w->ids.hi = id > w->ids.hi ? id : w->ids.hi;
	w->ids.or_ |= id;
	w->ids.and_ &= id;
}

/*
 * object_len: the length of the INSTANCE, OBJECT ARRAY or PRIMITIVE ARRAY
 * DUMP at p that ends by end, with in *slots its id-sized slots after the
 * header (walk.ref_slots); 0 for any other record, or one that does not fit
 * or is malformed: hprof_sub_next then reads it (or says what is wrong).
 * Most of a dump is these records: read here, inline, without the call.
 */
static inline size_t object_len(const struct hprof *hp, size_t p, size_t end, uint64_t *slots)
{
	const uint8_t *d = hp->data + p;
	size_t ids = (size_t)hp->id_size, left = end - p, len;
	switch (d[0]) {
	case HPROF_GC_INSTANCE_DUMP:	/* tag, id, serial, class id, u4 bytes */
		if (left < 1 + 2 * ids + 8)
			return 0;
		len = hprof_u4(d + 1 + 2 * ids + 4);
		*slots = len / ids;
		len += 1 + 2 * ids + 8;
		break;
	case HPROF_GC_OBJ_ARRAY_DUMP:	/* tag, id, serial, u4 count, class id */
		if (left < 1 + 2 * ids + 8)
			return 0;
		*slots = hprof_u4(d + 1 + ids + 4);
		len = 1 + 2 * ids + 8 + *slots * ids;
		break;
	case HPROF_GC_PRIM_ARRAY_DUMP: {	/* tag, id, serial, u4 count, u1 type */
		if (left < 1 + ids + 9)
			return 0;
		int sz = hprof_type_size(hp, d[1 + ids + 8]);
		if (!sz || d[1 + ids + 8] == HPROF_OBJECT)
			return 0;
		*slots = 0;
		len = 1 + ids + 9 + (size_t)hprof_u4(d + 1 + ids + 4) * (size_t)sz;
		break;
	}
	default:
		return 0;
	}
	return len <= left ? len : 0;
}

/* walk_segment: the sub-records of one HEAP DUMP (SEGMENT) body. */
static int walk_segment(struct walk *w, const struct segment *g)
{
	struct loader *L = w->L;
	struct hprof_sub s;
	struct hs_error e;
	size_t p = g->body, end = g->end, from = p;
	bool cut = g == w->cut_seg;
	int r;
	if (cut)
		walk_damage(w, w->cut->lost, "the dump is truncated: %s (at byte offset %lld); "
			    "the complete objects of that segment were loaded", w->cut->err.msg,
			    (long long)w->cut->err.offset);
	for (;;) {
		uint64_t slots;
		size_t len = p < end ? object_len(L->hp, p, end, &slots) : 0;
		if (len) {
			if (w->nobjs == w->capobjs && !grow_objs(w))
				return HS_ERR;
			uint64_t id = hprof_id(L->hp, L->hp->data + p + 1);
			w->objs[w->nobjs++] = (struct objpos){id, p};
			note_id(w, id);
			w->ref_slots += slots;
			p += len;
			goto next;
		}
		if ((r = hprof_sub_next(L->hp, &p, end, &s, &e)) != 1)
			break;
		switch (s.tag) {
		case HPROF_GC_INSTANCE_DUMP: case HPROF_GC_OBJ_ARRAY_DUMP:
		case HPROF_GC_PRIM_ARRAY_DUMP: case HPROF_GC_PRIM_ARRAY_NODATA:
			if (w->nobjs == w->capobjs && !grow_objs(w))
				return HS_ERR;
			w->objs[w->nobjs++] = (struct objpos){s.id, s.off};
			note_id(w, s.id);
			if (s.tag == HPROF_GC_INSTANCE_DUMP || s.tag == HPROF_GC_OBJ_ARRAY_DUMP) {
				/* after tag, id, serial, class id and a u4 count */
				size_t head = 1 + 2 * (size_t)L->hp->id_size + 8;
				if (s.end - s.off > head)
					w->ref_slots += (s.end - s.off - head) / L->hp->id_size;
			}
			break;
		case HPROF_GC_CLASS_DUMP:
			if (w->nobjs == w->capobjs && !grow_objs(w))
				return HS_ERR;
			w->objs[w->nobjs++] = (struct objpos){s.id, s.off};
			note_id(w, s.id);
			PUSH(w->classpos, w->nclasspos, w->capclasspos);
			w->classpos[w->nclasspos++] = s.off;
			break;
		case HPROF_GC_HEAP_DUMP_INFO: {
			const uint8_t *b = L->hp->data + s.off + 1;
			PUSH(w->marks, w->nmarks, w->capmarks);
			w->marks[w->nmarks++] = (struct heapmark){
				s.off, hprof_u4(b), hprof_id(L->hp, b + 4)};
			break;
		}
		case HPROF_GC_UNREACHABLE:
			/* Android marks objects no root reaches; they are no GC roots. */
			w->unreachable_marks++;
			break;
		default:	/* a GC root */
			if (s.tag == HPROF_GC_ROOT_THREAD_OBJ) {
				PUSH(w->threads, w->nthreads, w->capthreads);
				w->threads[w->nthreads++] = (struct rawthread){
					s.id, s.thread_serial, s.trace_serial};
			}
			PUSH(w->roots, w->nroots, w->caproots);
			w->roots[w->nroots++] = (struct rawroot){
				s.id, s.tag, s.thread_serial, s.frame};
			break;
		}
next:
		if ((w->nobjs & 0xffff) == 0) {
			uint64_t done = atomic_fetch_add(&L->walked, p - from) + (p - from);
			from = p;
			if (w->reports)
				progress(L, L->hp->body + done);
			if (hs_interrupted)
				return HS_INTERRUPTED;
		}
	}
	atomic_fetch_add(&L->walked, p - from);
	if (r == HS_ERR) {
		/* Keep what came before; the rest of this record is lost. */
		if (cut)
			walk_damage(w, end - (size_t)e.offset, "the dump is truncated: %s (at byte "
				    "offset %lld); the objects before it were loaded", e.msg,
				    (long long)e.offset);
		else
			walk_damage(w, end - (size_t)e.offset, "malformed heap dump record: %s (at "
				    "byte offset %lld); the rest of that record was skipped",
				    e.msg, (long long)e.offset);
	}
	return HS_OK;
}

/* walk_work: walk w's segments in order (heap_run2). */
static void *walk_work(void *arg)
{
	struct walk *w = arg;
	w->st = HS_OK;
	w->ids = (struct idstats){UINT64_MAX, 0, 0, UINT64_MAX};
	if (w->nseg || w->reports) {
		w->capobjs = 1 << 12;
		w->objs = big_alloc(w->capobjs, sizeof *w->objs);
	}
	for (size_t k = 0; k < w->nseg && w->st == HS_OK; k++)
		w->st = walk_segment(w, &w->seg[k]);
	return NULL;
}

/* append: b's n items of size bytes after a's *na (a has room for *ca). */
static void *append(void *a, size_t *na, size_t *ca, const void *b, size_t n, size_t size)
{
	if (!n)
		return a;
	if (*na + n > *ca) {
		*ca = *na + n;
		a = xreallocarray(a, *ca, size);
	}
	memcpy((char *)a + *na * size, b, n * size);
	*na += n;
	return a;
}

/*
 * join_walks: b's lists after a's, b's damage after a's; b's object
 * records stay in b's array, which L takes (L->objs2: the sort reads both,
 * the copy's memory and time saved), and the rest of b is freed.
 */
static void join_walks(struct walk *a, struct walk *b)
{
	a->ref_slots += b->ref_slots;
	a->unreachable_marks += b->unreachable_marks;
	a->ids.lo = b->ids.lo < a->ids.lo ? b->ids.lo : a->ids.lo;
	a->ids.hi = b->ids.hi > a->ids.hi ? b->ids.hi : a->ids.hi;
	a->ids.or_ |= b->ids.or_;
	a->ids.and_ &= b->ids.and_;
	a->classpos = append(a->classpos, &a->nclasspos, &a->capclasspos, b->classpos,
			     b->nclasspos, sizeof *a->classpos);
	a->roots = append(a->roots, &a->nroots, &a->caproots, b->roots, b->nroots,
			  sizeof *a->roots);
	a->threads = append(a->threads, &a->nthreads, &a->capthreads, b->threads, b->nthreads,
			    sizeof *a->threads);
	a->marks = append(a->marks, &a->nmarks, &a->capmarks, b->marks, b->nmarks,
			  sizeof *a->marks);
	if (b->damaged && !a->damaged)
		memcpy(a->damage, b->damage, sizeof a->damage);
	a->damaged = a->damaged || b->damaged;
	a->lost_bytes += b->lost_bytes;
}

static void walk_free(struct walk *w)
{
	big_free(w->objs);
	free(w->classpos);
	free(w->roots);
	free(w->threads);
	free(w->marks);
	memset(w, 0, sizeof *w);
}

/*
 * walk_dump: every segment (the last one cut when cut is not NULL), on two
 * threads when there are several and their objects' records fit the
 * memory budget with half as much again (each thread's array grows by
 * half); the result into L, the second thread's records in L->objs2. Past
 * the budget one thread walks them all: the sorts that cannot read two
 * arrays would copy them into one (heap_join_objs), as much disk again.
 */
static int walk_dump(struct loader *L, const struct segment *seg, size_t nseg,
		     const struct cut *cut)
{
	uint64_t total = 0, half = 0;
	for (size_t k = 0; k < nseg; k++)
		total += seg[k].end - seg[k].body;
	size_t split = nseg;
	uint64_t spill = 0;
	struct hs_error e;
	/* an object record is at least 14 bytes; its objpos is 16 */
	if (nseg > 1 &&
	    big_plan(total / 14 * sizeof(struct objpos) * 3 / 2, 0, &spill, &e) == HS_OK &&
	    !spill)
		for (split = 0; split < nseg && half < total / 2; split++)
			half += seg[split].end - seg[split].body;
	atomic_store(&L->walked, 0);
	const struct segment *cut_seg = cut && nseg ? &seg[nseg - 1] : NULL;
	struct walk w[2] = {
		{.L = L, .seg = seg, .nseg = split, .cut_seg = cut_seg, .cut = cut,
		 .reports = true},
		{.L = L, .seg = seg ? seg + split : NULL, .nseg = nseg - split, .cut_seg = cut_seg,
		 .cut = cut}};
	heap_run2(walk_work, &w[0], &w[1], split < nseg);
	int st = w[0].st != HS_OK ? w[0].st : w[1].st;
	if (st == HS_OK)
		join_walks(&w[0], &w[1]);
	if (st == HS_ERR)
		*L->err = w[0].st != HS_ERR && w[1].st == HS_ERR ? w[1].err : w[0].err;
	struct heap *h = L->h;
	if (w[0].damaged)
		damage(h, w[0].lost_bytes, "%s", w[0].damage);
	h->unreachable_marks += w[0].unreachable_marks;
	L->objs = w[0].objs;
	L->capobjs = w[0].capobjs;
	if (st == HS_OK) {
		L->objs2 = w[1].objs;
		L->nobjs2 = w[1].nobjs;
		L->capobjs2 = w[1].capobjs;
		w[1].objs = NULL;
	}
	L->nobjs = w[0].nobjs + L->nobjs2;
	L->ref_slots = w[0].ref_slots;
	L->ids = w[0].ids;
	L->classpos = w[0].classpos;
	L->nclasspos = w[0].nclasspos;
	L->roots = w[0].roots;
	L->nroots = w[0].nroots;
	L->threads = w[0].threads;
	L->nthreads = w[0].nthreads;
	L->marks = w[0].marks;
	L->nmarks = w[0].nmarks;
	walk_free(&w[1]);
	return st;
}

static int pass1(struct loader *L, struct hs_error *err)
{
	struct hprof *hp = L->hp;
	struct heap *h = L->h;
	size_t ids = (size_t)hp->id_size, pos = hp->body;
	struct hprof_rec r;
	struct hs_error e;
	int got;
	u64map_init(&h->names->strings, 1 << 14);
	u64map_init(&L->class_names, 1 << 12);
	u64map_init(&L->class_serials, 1 << 12);
	u64map_init(&L->traces, 64);
	/* The heap dump's segments are walked after the other records, two at
	 * once (walk_dump); grow_objs makes room as objects come: no guess from
	 * the dump's size takes memory or disk before the plan (heap_load). */
	struct segment *seg = NULL;
	size_t nseg = 0, capseg = 0;
	bool in_segments = false, ended = false, cut_last = false;
	struct cut end = {0};
	L->want_dump = L->opts && L->opts->dump ? L->opts->dump : 1;
	while ((got = hprof_record_next(hp, &pos, &r, &e)) != 0) {
		bool cut = false;
		if (got == HS_ERR) {
			/* A record that runs past the end: read what is there. */
			if (hp->size - pos < 9) {
				ended = true;	/* reported after the segments before it */
				end.lost = hp->size - pos;
				end.err = e;
				break;
			}
			r.tag = hp->data[pos];
			r.off = pos;
			r.body = pos + 9;
			r.len = (uint32_t)(hp->size - r.body);
			uint32_t want = hprof_u4(hp->data + pos + 5);
			if (r.tag != HPROF_HEAP_DUMP && r.tag != HPROF_HEAP_DUMP_SEGMENT) {
				ended = true;
				end.lost = hp->size - pos;
				end.err = e;
				break;
			}
			cut = true;	/* walk_segment says so, in its turn */
			end.lost = want - r.len;
			end.err = e;
			pos = hp->size;
		}
		const uint8_t *b = hp->data + r.body;
		switch (r.tag) {
		case HPROF_UTF8:
			if (r.len >= ids)
				u64map_put(&h->names->strings, hprof_id(hp, b), r.off);
			break;
		case HPROF_LOAD_CLASS:
			if (r.len >= 8 + 2 * ids) {
				uint64_t cid = hprof_id(hp, b + 4);
				uint64_t dummy;
				/* A class loaded twice keeps its first name. */
				if (!u64map_get(&L->class_names, cid, &dummy))
					u64map_put(&L->class_names, cid, hprof_id(hp, b + 8 + ids));
				u64map_put(&L->class_serials, hprof_u4(b), cid);
			}
			break;
		case HPROF_FRAME:
			if (r.len >= 4 * ids + 8) {
				PUSH(L->frames, L->nframes, L->capframes);
				L->frames[L->nframes++] = (struct rawframe){
					hprof_id(hp, b), hprof_id(hp, b + ids),
					hprof_id(hp, b + 2 * ids), hprof_id(hp, b + 3 * ids),
					hprof_u4(b + 4 * ids), (int32_t)hprof_u4(b + 4 * ids + 4)};
			}
			break;
		case HPROF_TRACE:
			if (r.len >= 12)
				u64map_put(&L->traces, hprof_u4(b) + 1ULL, r.off);
			break;
		case HPROF_HEAP_DUMP: case HPROF_HEAP_DUMP_SEGMENT: {
			/* A heap dump is one HEAP DUMP record, or SEGMENTs up to a HEAP DUMP END. */
			if (r.tag == HPROF_HEAP_DUMP || !in_segments)
				h->ndumps++;
			in_segments = r.tag == HPROF_HEAP_DUMP_SEGMENT;
			if (h->ndumps != L->want_dump)
				break;
			PUSH(seg, nseg, capseg);
			seg[nseg++] = (struct segment){r.body, r.body + r.len};
			cut_last = cut;
			break;
		}
		case HPROF_HEAP_DUMP_END:
			in_segments = false;
			break;
		default:
			break;
		}
		if (hs_interrupted) {
			free(seg);
			return HS_INTERRUPTED;
		}
	}
	int st = walk_dump(L, seg, nseg, cut_last ? &end : NULL);
	free(seg);
	if (st != HS_OK)
		return st;
	if (ended)
		damage(h, end.lost, "the dump is truncated: %s (at byte offset %lld)",
		       end.err.msg, (long long)end.err.offset);
	if (hp->truncated)
		damage(h, 0, "the gzip stream is truncated: %s (at byte offset %lld of "
		       "the inflated data)", "the compressed file ends early",
		       (long long)hp->size);
	h->dump = L->want_dump;
	if (L->want_dump > h->ndumps && h->ndumps) {
		hs_error_set(err, -1, "%s holds %u heap dump%s; there is no dump %u (choose one "
			     "with --dump 1..%u)", hp->path, h->ndumps, h->ndumps == 1 ? "" : "s",
			     L->want_dump, h->ndumps);
		return HS_ERR;
	}
	if (L->nobjs == 0 && L->nroots == 0 && L->nclasspos == 0) {
		if (h->damaged)
			hs_error_set(err, (int64_t)hp->body, "%s: no objects could be read: %s",
				     hp->path, h->damage);
		else
			hs_error_set(err, (int64_t)hp->body, "%s: the dump holds no heap dump "
				     "records (no objects); was it written with "
				     "'jcmd PID GC.heap_dump'?", hp->path);
		return HS_ERR;
	}
	return HS_OK;
}

void heap_run2(void *(*fn)(void *), void *a, void *b, bool threads)
{
	hs_run_pair(fn, a, fn, b, threads);
}

/* What one pass-2 worker produces for its range of objects. */
struct p2 {
	struct loader *L;
	uint32_t from, to;
	uint32_t *edges;	/* its references, in object order (a big array) */
	uint64_t nedges, capedges;
	uint64_t *count, *shallow;	/* per class */
	uint64_t total, dangling, unknown;
	uint8_t *kind;		/* per class: the kind of its objects seen here, when
				 * pass 2 assigns the classes (!L->assigned) */
	uint64_t misses;	/* objects left without a class (assign_missing) */
	int status;
};

static inline void edge2(const struct heap *h, struct p2 *w, uint64_t id)
{
	if (!id)
		return;
	uint32_t t = heap_index(h, id);
	if (t == HEAP_NONE) {
		w->dangling++;
		return;
	}
	if (w->nedges == w->capedges) {
		w->capedges += w->capedges / 2 + 65536;
		w->edges = big_realloc(w->edges, w->capedges, sizeof *w->edges);
	}
	w->edges[w->nedges++] = t;
}

/*
 * pass2_range: sizes and references of objects [from, to). The edge buffer
 * is a big array that grows as references are found.
 */
static void *pass2_range(void *arg)
{
	struct p2 *w = arg;
	struct loader *L = w->L;
	struct heap *h = L->h;
	struct hprof *hp = L->hp;
	const uint8_t *d = hp->data;
	size_t ids = (size_t)hp->id_size;
	w->count = xcalloc(h->nclasses + 1, sizeof *w->count);
	w->shallow = xcalloc(h->nclasses + 1, sizeof *w->shallow);
	uint32_t next_class = 0, lo = 0, hi = h->nclasses;
	while (lo < hi) {	/* first class object at or after from */
		uint32_t mid = lo + (hi - lo) / 2;
		if (h->classes[mid].obj < w->from)
			lo = mid + 1;
		else
			hi = mid;
	}
	next_class = lo;
	uint64_t last_cid = 0;
	uint32_t last_c = HEAP_NONE;
	for (uint32_t i = w->from; i < w->to; i++) {
		h->out_start[i] = (uint32_t)w->nedges;	/* relative; fixed up after */
		size_t p = h->pos[i];
		uint64_t sz = 0;
		uint32_t c;
		if (L->assigned) {
			c = h->cls[i];
		} else {
			uint8_t kind;
			c = heap_record_class(L, p, &last_cid, &last_c, &kind);
			h->cls[i] = c;
			if (c == HEAP_NONE)
				w->misses++;
			else
				heap_note_kind(w->kind, c, kind);
		}
		/* An object without a class yet gets a nameless one (assign_missing),
		 * which has no CLASS DUMP: unknown, without fields. */
		switch (d[p]) {
		case HPROF_GC_INSTANCE_DUMP: {
			uint32_t len = hprof_u4(d + p + 1 + 2 * ids + 4);
			if (c == HEAP_NONE) {
				w->unknown++;
				sz = ((uint64_t)h->header_size + len + 7) & ~7ULL;
				break;
			}
			const struct heap_class *k = &h->classes[c];
			if (k->obj == HEAP_NONE)
				w->unknown++;
			const uint8_t *vals = d + p + 1 + 2 * ids + 8;
			for (uint32_t r = 0; r < k->nref_offsets; r++)
				if (k->ref_offsets[r] + ids <= len)
					edge2(h, w, hprof_id(hp, vals + k->ref_offsets[r]));
			sz = k->obj == HEAP_NONE && !k->inst_size
				     ? ((uint64_t)h->header_size + len + 7) & ~7ULL
				     : k->inst_size;
			break;
		}
		case HPROF_GC_OBJ_ARRAY_DUMP: {
			uint32_t len = hprof_u4(d + p + 1 + ids + 4);
			if (c == HEAP_NONE || h->classes[c].obj == HEAP_NONE)
				w->unknown++;
			const uint8_t *e = d + p + 1 + 2 * ids + 8;
			for (uint32_t k = 0; k < len; k++, e += ids)
				edge2(h, w, hprof_id(hp, e));
			sz = heap_array_size(h, HPROF_OBJECT, len);
			break;
		}
		case HPROF_GC_PRIM_ARRAY_DUMP: case HPROF_GC_PRIM_ARRAY_NODATA: {
			uint32_t len = hprof_u4(d + p + 1 + ids + 4);
			sz = heap_array_size(h, d[p + 1 + ids + 8], len);
			break;
		}
		default: {	/* CLASS DUMP */
			while (next_class < h->nclasses && h->classes[next_class].obj < i)
				next_class++;
			const struct heap_class *k = &h->classes[next_class];
			struct hprof_class_dump cd;
			hprof_class_dump_read(hp, p, hp->size, &cd, NULL);
			edge2(h, w, cd.super_id);
			edge2(h, w, cd.loader_id);
			edge2(h, w, cd.signers_id);
			edge2(h, w, cd.domain_id);
			for (unsigned s = 0; s < k->nstatics; s++)
				if (k->statics[s].type == HPROF_OBJECT)
					edge2(h, w, hprof_id(hp, d + k->statics[s].value_pos));
			size_t q = cd.cp;
			for (unsigned s = 0; s < cd.ncp; s++) {
				uint8_t t = d[q + 2];
				if (t == HPROF_OBJECT)
					edge2(h, w, hprof_id(hp, d + q + 3));
				q += 3 + (size_t)hprof_type_size(hp, t);
			}
			sz = heap_class_object_size(h, k);
			break;
		}
		}
		h->size[i] = sz >= HEAP_SIZE_BIG ? HEAP_SIZE_BIG : (uint16_t)sz;
		if (c != HEAP_NONE) {
			w->count[c]++;
			w->shallow[c] += sz;
		}
		w->total += sz;
		if ((i & 0xffff) == 0 && hs_interrupted) {
			w->status = HS_INTERRUPTED;
			return NULL;
		}
	}
	return NULL;
}

static int pass2(struct loader *L, struct hs_error *err)
{
	struct heap *h = L->h;
	uint32_t n = h->n;
	h->size = big_alloc(n + 1, sizeof *h->size);
	h->out_start = big_alloc((size_t)n + 2, sizeof *h->out_start);
	/* Two workers on the two halves of the objects (machines here have two cores). */
	struct p2 w[2];
	memset(w, 0, sizeof w);
	uint32_t mid = n / 2;
	w[0] = (struct p2){.L = L, .from = 0, .to = mid, .status = HS_OK};
	w[1] = (struct p2){.L = L, .from = mid, .to = n, .status = HS_OK};
	uint32_t nc = h->nclasses;
	for (int t = 0; t < 2; t++) {
		/* a first guess: about 2 references per object */
		w[t].capedges = (uint64_t)(w[t].to - w[t].from) * 2 + 1024;
		w[t].edges = big_alloc(w[t].capedges, sizeof *w[t].edges);
		if (!L->assigned) {
			w[t].kind = xmalloc(nc + 1);
			memset(w[t].kind, HEAP_KIND_NONE, nc + 1);
		}
	}
	heap_run2(pass2_range, &w[0], &w[1], n > 100000);
	int st = w[0].status != HS_OK ? w[0].status : w[1].status;
	uint64_t total = w[0].nedges + w[1].nedges;
	if (st == HS_OK && total >= UINT32_MAX) {
		hs_error_set(err, -1, "%s: %llu references; heapsh handles fewer than 2^32",
			     L->hp->path, (unsigned long long)total);
		st = HS_ERR;
	}
	if (st == HS_OK) {
		for (uint32_t i = mid; i < n; i++)
			h->out_start[i] += (uint32_t)w[0].nedges;
		h->out_start[n] = (uint32_t)total;
		h->nrefs = total;
		h->out = big_realloc(w[0].edges, total + 1, sizeof *h->out);
		memcpy(h->out + w[0].nedges, w[1].edges, w[1].nedges * sizeof *h->out);
		w[0].edges = NULL;
		for (int t = 0; t < 2; t++) {
			for (uint32_t k = 0; k < h->nclasses; k++) {
				h->classes[k].count += w[t].count[k];
				h->classes[k].shallow += w[t].shallow[k];
			}
			h->total_shallow += w[t].total;
			h->dangling_refs += w[t].dangling;
			h->unknown_class_objs += w[t].unknown;
		}
		if (!L->assigned) {
			heap_merge_kinds(h, nc, w[0].kind, w[1].kind);
			if (w[0].misses + w[1].misses)
				heap_assign_missing(L, true);
			heap_layout_added(h);
			L->assigned = true;
		}
	}
	for (int t = 0; t < 2; t++) {
		big_free(w[t].edges);
		free(w[t].count);
		free(w[t].shallow);
		free(w[t].kind);
	}
	return st;
}

struct incoming_half {
	const struct heap *h;
	uint32_t from, to;	/* sources */
	uint32_t *cnt;		/* counts per target, then write cursors (NO_LIST: left out) */
	uint32_t *in;		/* filled in phase 1 */
	int phase;		/* 0 count, 1 fill */
};

#define NO_LIST UINT32_MAX

static void *incoming_work(void *arg)
{
	struct incoming_half *w = arg;
	const struct heap *h = w->h;
	uint32_t lo = h->out_start[w->from], hi = h->out_start[w->to];
	if (w->phase == 0) {
		for (uint32_t e = lo; e < hi; e++)
			w->cnt[h->out[e]]++;
	} else {
		for (uint32_t i = w->from; i < w->to; i++)
			for (uint32_t e = h->out_start[i]; e < h->out_start[i + 1]; e++) {
				uint32_t *c = &w->cnt[h->out[e]];
				if (*c != NO_LIST)
					w->in[(*c)++] = i;
			}
	}
	return NULL;
}

/*
 * The transpose of the outgoing CSR, or the part keep accepts. Each half
 * of the sources counts and then fills on its own thread; the first half's
 * sources come first in every target's list, so lists stay ascending.
 */
uint64_t heap_incoming_some(const struct heap *h, bool threads, heap_keep_fn *keep, void *ctx,
			    uint32_t **start, uint32_t **in)
{
	uint32_t n = h->n, mid = n / 2;
	threads = threads && n > 100000;
	if (!threads)
		mid = n;	/* one half: all of them */
	struct incoming_half w[2] = {
		{h, 0, mid, big_alloc((size_t)n + 1, sizeof(uint32_t)), NULL, 0},
		{h, mid, n, threads ? big_alloc((size_t)n + 1, sizeof(uint32_t)) : NULL, NULL, 0}};
	if (threads)
		heap_run2(incoming_work, &w[0], &w[1], true);
	else
		incoming_work(&w[0]);
	*start = big_alloc((size_t)n + 2, sizeof **start);
	uint32_t sum = 0;
	for (uint32_t t = 0; t < n; t++) {
		(*start)[t] = sum;
		uint32_t c0 = w[0].cnt[t], c1 = threads ? w[1].cnt[t] : 0;
		if (keep && !keep(ctx, t, c0 + c1)) {
			w[0].cnt[t] = NO_LIST;
			if (threads)
				w[1].cnt[t] = NO_LIST;
			continue;
		}
		w[0].cnt[t] = sum;	/* cursors: the first half writes first */
		if (threads)
			w[1].cnt[t] = sum + c0;
		sum += c0 + c1;
	}
	(*start)[n] = sum;
	*in = w[0].in = w[1].in = big_alloc((size_t)sum + 1, sizeof **in);
	w[0].phase = w[1].phase = 1;
	if (threads)
		heap_run2(incoming_work, &w[0], &w[1], true);
	else
		incoming_work(&w[0]);
	big_free(w[0].cnt);
	big_free(w[1].cnt);
	big_settle(*start);	/* only read from now on */
	big_settle(*in);
	return sum;
}

void heap_build_incoming(struct heap *h)
{
	if (h->in)
		return;
	/* Made whole, then stored and kept (big_keep): h is older than the
	 * call under way, and a throw must leave it no half lists. */
	uint32_t *start, *in;
	heap_incoming_some(h, true, NULL, NULL, &start, &in);
	h->in_start = big_keep(start);
	h->in = big_keep(in);
}

void heap_free_incoming(struct heap *h)
{
	big_free(h->in_start);
	big_free(h->in);
	h->in_start = h->in = NULL;
}

/* Objects grouped by class: the instance lists queries and the engine use. */
static void *build_instances(void *arg)
{
	struct heap *h = arg;
	h->inst_start = xcalloc(h->nclasses + 2, sizeof *h->inst_start);
	h->inst = big_alloc(h->n + 1, sizeof *h->inst);
	for (uint32_t i = 0; i < h->n; i++)
		h->inst_start[h->cls[i] + 1]++;
	for (uint32_t c = 0; c < h->nclasses; c++)
		h->inst_start[c + 1] += h->inst_start[c];
	uint32_t *fill = xmallocarray(h->nclasses + 1, sizeof *fill);
	memcpy(fill, h->inst_start, h->nclasses * sizeof *fill);
	for (uint32_t i = 0; i < h->n; i++)
		h->inst[fill[h->cls[i]]++] = i;
	free(fill);
	return NULL;
}

static void build_threads_and_roots(struct loader *L)
{
	struct heap *h = L->h;
	struct hprof *hp = L->hp;
	size_t ids = (size_t)hp->id_size;
	struct u64map frame_index, thread_index;
	u64map_init(&frame_index, L->nframes + 1);
	h->frames = xcalloc(L->nframes + 1, sizeof *h->frames);
	for (size_t k = 0; k < L->nframes; k++) {
		struct rawframe *f = &L->frames[k];
		struct heap_frame *o = &h->frames[k];
		o->id = f->id;
		o->method = heap_name(h, f->method);
		o->signature = heap_name(h, f->sig);
		o->source = heap_name(h, f->source);
		uint64_t cid;
		o->class_name = u64map_get(&L->class_serials, f->class_serial, &cid)
					? heap_class_name_for(L, cid) : "?";
		o->line = f->line;
		u64map_put(&frame_index, f->id ? f->id : ~0ULL, k);
	}
	h->nframes = (uint32_t)L->nframes;

	u64map_init(&thread_index, L->nthreads + 1);
	h->threads = xcalloc(L->nthreads + 1, sizeof *h->threads);
	for (size_t k = 0; k < L->nthreads; k++) {
		struct heap_thread *t = &h->threads[k];
		t->obj = heap_index(h, L->threads[k].id);
		t->serial = L->threads[k].serial;
		u64map_put(&thread_index, t->serial + 1ULL, k);
		uint64_t toff;
		if (!u64map_get(&L->traces, L->threads[k].trace + 1ULL, &toff))
			continue;
		const uint8_t *b = hp->data + toff + 9;
		uint32_t len = hprof_u4(hp->data + toff + 5);
		uint32_t nf = hprof_u4(b + 8);
		if ((uint64_t)nf * ids > len - 12)
			continue;
		t->frames = xcalloc(nf + 1, sizeof *t->frames);
		for (uint32_t f = 0; f < nf; f++) {
			uint64_t fi;
			uint64_t fid = hprof_id(hp, b + 12 + f * ids);
			if (u64map_get(&frame_index, fid ? fid : ~0ULL, &fi))
				t->frames[t->nframes++] = (uint32_t)fi;
		}
	}
	h->nthreads = (uint32_t)L->nthreads;

	h->roots = xcalloc(L->nroots + 1, sizeof *h->roots);
	for (size_t k = 0; k < L->nroots; k++) {
		struct rawroot *r = &L->roots[k];
		uint32_t o = heap_index(h, r->id);
		if (o == HEAP_NONE) {
			h->dangling_roots++;
			continue;
		}
		uint64_t ti;
		struct heap_root *out = &h->roots[h->nroots++];
		out->obj = o;
		out->kind = r->tag;
		out->thread = r->thread_serial &&
			      u64map_get(&thread_index, r->thread_serial + 1ULL, &ti)
				      ? (uint32_t)ti : HEAP_NONE;
		out->frame = r->frame;
	}
	u64map_free(&frame_index);
	u64map_free(&thread_index);
}

/*
 * assign_heaps: each object's Android heap, from the last HEAP DUMP INFO
 * before its record (marks are in file order; so are the segments).
 */
static void assign_heaps(struct loader *L)
{
	struct heap *h = L->h;
	if (!L->nmarks)
		return;
	uint8_t *of_mark = xmallocarray(L->nmarks + 1, 1);
	for (size_t m = 0; m < L->nmarks; m++) {
		const char *name = heap_name(h, L->marks[m].name);
		char fallback[24];
		if (!name || !*name || !strcmp(name, "?")) {
			snprintf(fallback, sizeof fallback, "heap %u", L->marks[m].type);
			name = heap_keep(h, xstrdup(fallback));
		}
		uint32_t k = 0;
		while (k < h->nheaps && strcmp(h->heap_names[k], name))
			k++;
		if (k == h->nheaps && h->nheaps < HEAP_MAX_HEAPS)
			h->heap_names[h->nheaps++] = name;
		of_mark[m] = (uint8_t)(k < h->nheaps ? k : h->nheaps - 1);
	}
	/* Objects before the first mark are in the first named heap, as Android tools take them. */
	h->heap_of = big_alloc((size_t)h->n + 1, 1);
	for (uint32_t i = 0; i < h->n; i++) {
		size_t lo = 0, hi = L->nmarks;	/* the last mark at or before pos[i] */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (L->marks[mid].off <= h->pos[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		h->heap_of[i] = of_mark[lo ? lo - 1 : 0];
	}
	free(of_mark);
}

static void loader_free(struct loader *L)
{
	free(L->marks);
	big_free(L->objs);
	big_free(L->objs2);
	free(L->classpos);
	free(L->roots);
	free(L->frames);
	free(L->threads);
	u64map_free(&L->class_names);
	u64map_free(&L->class_serials);
	u64map_free(&L->traces);
	u64map_free(&L->class_index);
}

/*
 * settle_positions, then settle: the model at rest. The ids go (heap_id
 * reads them from the records) and the 64-bit record offsets become a
 * base per block of HEAP_POS_BLOCK objects and a 32-bit offset from it:
 * 12 bytes per object less. settle_positions only reads h->pos (it runs
 * beside build_instances), settle frees it. The base is the block's lowest offset of a record that is not a
 * CLASS DUMP (class records come first in a HotSpot dump, far from the
 * objects that share their ids' neighbourhood); a record more than 4 GiB
 * from its base goes to the pos_far map.
 */
static void *settle_positions(void *arg)
{
	struct heap *h = arg;
	uint32_t n = h->n, kc = 0;
	size_t nblocks = ((size_t)n >> HEAP_POS_BLOCK_SHIFT) + 1;
	h->pos_base = big_alloc(nblocks, sizeof *h->pos_base);
	h->pos_lo = big_alloc((size_t)n + 1, sizeof *h->pos_lo);
	u64map_init(&h->pos_far, 64);
	for (size_t b = 0; b < nblocks; b++) {
		uint32_t from = (uint32_t)(b << HEAP_POS_BLOCK_SHIFT);
		uint32_t to = from + HEAP_POS_BLOCK < from || from + HEAP_POS_BLOCK > n
				      ? n : from + HEAP_POS_BLOCK;
		uint64_t base = UINT64_MAX;
		for (uint32_t i = from; i < to; i++) {
			/* class objects are read_classes's, in object order: no record is read */
			while (kc < h->nclasses && h->classes[kc].obj < i)
				kc++;
			bool is_class = kc < h->nclasses && h->classes[kc].obj == i;
			if (!is_class && h->pos[i] < base)
				base = h->pos[i];
		}
		if (base == UINT64_MAX)
			base = 0;
		h->pos_base[b] = base;
		for (uint32_t i = from; i < to; i++) {
			uint64_t p = h->pos[i];
			if (p >= base && p - base < HEAP_POS_FAR) {
				h->pos_lo[i] = (uint32_t)(p - base);
			} else {
				h->pos_lo[i] = HEAP_POS_FAR;
				u64map_put(&h->pos_far, (uint64_t)i + 1, p);
			}
		}
	}
	return NULL;
}

/* settle: the ids and the 64-bit offsets go; the model is settled (big.h). */
static void settle(struct heap *h)
{
	big_free(h->pos);
	h->pos = NULL;
	big_free(h->ids);
	h->ids = NULL;
	/* From now on the model is only read: when the engine's arrays need
	 * the memory, these go to files first, the least used first (big.h). */
	void *model[] = {h->heap_of, h->idmap, h->sub, h->chunks, h->pos_base, h->pos_lo,
			 h->inst, h->cls, h->size, h->out_start, h->out};
	for (size_t k = 0; k < sizeof model / sizeof *model; k++)
		big_settle(model[k]);
}

uint64_t heap_estimate_bytes(uint64_t n, uint64_t r)
{
	return (36 + 33 - 16) * n + 8 * r;
}

uint64_t heap_index_bytes(uint64_t n, uint64_t r)
{
	return (18 + 8) * n + 4 * r;
}

int heap_load(const char *path, const struct heap_load_opts *opts,
	      struct heap **out, struct hs_error *err)
{
	struct loader L;
	memset(&L, 0, sizeof L);
	*out = NULL;
	struct heap *h = xcalloc(1, sizeof *h);
	h->names = xcalloc(1, sizeof *h->names);
	u64map_init(&h->names->interned, 1024);
	h->class_class = HEAP_NONE;
	int st = hprof_open(path, &h->hp, err);
	if (st != HS_OK)
		goto fail;
	L.h = h;
	L.hp = h->hp;
	L.opts = opts;
	L.err = err;
	if ((st = pass1(&L, err)) != HS_OK)
		goto fail;
	if (L.nobjs >= (size_t)UINT32_MAX - 1) {
		/* docs/format-limits.md: the model numbers objects in 32 bits */
		hs_error_set(err, -1, "%s holds %zu object records; heapsh handles fewer than "
			     "2^32 - 1 (docs/format-limits.md)", path, L.nobjs);
		st = HS_ERR;
		goto fail;
	}
	/* References are counted in pass 2: guess 3/4 of the slots that could
	 * hold one (docs/out-of-core.md, "Saying how much disk"). */
	uint64_t refs = L.ref_slots / 4 * 3;
	uint64_t need = heap_estimate_bytes(L.nobjs, refs), spill = 0;
	if ((st = big_plan(need, (uint64_t)(L.capobjs + L.capobjs2) * sizeof *L.objs, &spill,
			   err)) != HS_OK)
		goto fail;
	if (opts && opts->plan)
		opts->plan(opts->progress_ctx, L.nobjs, refs, need, spill);
	heap_order_objects(&L);
	heap_read_classes(&L);
	heap_layout_classes(h);
	heap_prepare_classes(&L);
	heap_size_classes(&L);
	if ((st = pass2(&L, err)) != HS_OK)
		goto fail;
	/* Both only read what pass 2 made; settle_positions keeps h->pos for now. */
	hs_run_pair(build_instances, h, settle_positions, h, h->n > 100000);
	build_threads_and_roots(&L);
	assign_heaps(&L);
	h->string_class = heap_class_by_name(h, "java.lang.String");
	h->thread_class = heap_class_by_name(h, "java.lang.Thread");
	h->loader_class = heap_class_by_name(h, "java.lang.ClassLoader");
	/* Compact UTF-16 strings are in the dumped machine's byte order. */
	char *endian = heap_system_property(h, "sun.cpu.endian");
	h->utf16_be = endian && !strcmp(endian, "big");
	free(endian);
	settle(h);
	if (opts && opts->progress)
		opts->progress(opts->progress_ctx, 1.0);
	loader_free(&L);
	*out = h;
	return HS_OK;
fail:
	loader_free(&L);
	heap_free(h);
	return st == HS_OK ? HS_ERR : st;
}
