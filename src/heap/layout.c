/*
 * layout.c - HotSpot's object layout, so that an instance's shallow size is
 * the JVM's own (issue 35; docs/heap-model.md, "Shallow sizes"). HPROF lists
 * each class's declared instance fields but not their offsets, nor the
 * fields the VM injects, nor @Contended padding; this file lays the fields
 * out as the HotSpot generation that wrote the dump did:
 *
 * - before JDK 15: classFileParser.cpp layout_fields (JDK 6-14), field
 *   allocation style 1 with compact fields: a class's fields start where its
 *   superclass's end, rounded up to the reference size; longs and doubles
 *   first (the 4-byte gap before the first filled by an int, else shorts,
 *   bytes, a reference), then ints, shorts, bytes, references; style 0
 *   (references first, no gap filled) for the boot classes whose offsets
 *   the VM hard-codes;
 * - from JDK 15: fieldLayoutBuilder.cpp (JDK-8237767): the superclass's
 *   layout with its holes, each new field (primitives largest first, then
 *   references) in the smallest hole that fits it aligned, else at the end;
 *   @Contended classes and field groups padded by 128 bytes
 *   (ContendedPaddingWidth) before and at the end.
 *
 * Injected fields (javaClasses.hpp, ALL_INJECTED_FIELDS) and the JDK's
 * @Contended fields come from tables per JDK generation below, checked
 * against `jcmd GC.class_histogram` of OpenJDK 17.0.15 and Temurin 25.0.3
 * (tests/t_layout.sh).
 */
#include "heap.h"
#include "layout.h"

#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"

#define PAD 128			/* ContendedPaddingWidth */
#define MAX_LAYOUT_FIELDS 70000	/* JVMS 4.1: 65 535 declared, plus injected */

/* A field the VM injects: declaring class, name, HPROF type (J I S B Z L). */
struct injected {
	int from, to;		/* JDK versions (inclusive) */
	const char *cls;
	const char *fields;	/* "J I Z": one letter a field */
};

/*
 * From javaClasses.hpp's *_INJECTED_FIELDS: JDK 8 (hotspot 8u), JDK 9-16
 * (as JDK 11), JDK 17-18 (jdk17u), JDK 19 on (as JDK 25: Thread's and
 * VirtualThread's fields came with virtual threads). java.lang.Class is left
 * out: a class mirror's size is its static fields' too (heap_class_object_size).
 */
static const struct injected injected[] = {
	{8, 8, "java.lang.ClassLoader", "J"},
	{8, 8, "java.lang.invoke.MemberName", "L J J"},
	{9, 99, "java.lang.ClassLoader", "J"},
	{9, 99, "java.lang.invoke.MemberName", "J"},
	{9, 18, "java.lang.invoke.ResolvedMethodName", "L J"},
	{19, 99, "java.lang.invoke.ResolvedMethodName", "J"},
	{9, 18, "java.lang.invoke.MethodHandleNatives$CallSiteContext", "J J"},
	{19, 99, "java.lang.invoke.CallSite", "J J"},
	{9, 99, "java.lang.StackFrameInfo", "S"},
	{9, 99, "java.lang.Module", "J"},
	{17, 99, "java.lang.String", "B"},
	{17, 99, "java.lang.InternalError", "Z"},
	{19, 99, "java.lang.Thread", "J I Z S"},
	{19, 99, "java.lang.VirtualThread", "J"},
};

/*
 * The JDK's @Contended: from JDK 15, @jdk.internal.vm.annotation.Contended as
 * the class files of 17.0.15 and 25.0.3 have it (checked by t_layout.sh);
 * JDK 8-14 (@sun.misc.Contended in 8) from the JDK sources, unchecked (no
 * such JDK here): Thread's "tlr" group, ConcurrentHashMap's CounterCell and
 * Striped64's Cell in all, Exchanger's Node, ForkJoinPool and its WorkQueue
 * (class-level) in 8.
 */
struct contended {
	int from, to;
	const char *cls;
	bool whole;		/* class-level */
	const char *group;	/* a named group's fields, space-separated; NULL: none */
};
static const struct contended contended[] = {
	{8, 18, "java.lang.Thread", false,
	 "threadLocalRandomSeed threadLocalRandomProbe threadLocalRandomSecondarySeed"},
	{8, 99, "java.util.concurrent.ConcurrentHashMap$CounterCell", true, NULL},
	{8, 99, "java.util.concurrent.atomic.Striped64$Cell", true, NULL},
	{8, 8, "java.util.concurrent.Exchanger$Node", true, NULL},
	{8, 8, "java.util.concurrent.ForkJoinPool", true, NULL},
	{8, 8, "java.util.concurrent.ForkJoinPool$WorkQueue", true, NULL},
	{15, 18, "java.util.concurrent.Exchanger$Node", true, NULL},
	{19, 99, "java.util.concurrent.Exchanger$Slot", true, NULL},
	{15, 18, "java.util.concurrent.ForkJoinPool", false, "ctl"},
	{19, 99, "java.util.concurrent.ForkJoinPool", false, "ctl parallelism"},
	{15, 18, "java.util.concurrent.ForkJoinPool$WorkQueue", false, "top source nsteals"},
	{19, 99, "java.util.concurrent.ForkJoinPool$WorkQueue", false,
	 "top phase stackPred source nsteals parking"},
	{15, 99, "java.util.concurrent.SubmissionPublisher$BufferedSubscription", true, "demand waiting"},
};

/* Boot classes laid out references first, not compacted (JDK 6-14: classFileParser.cpp). */
static const char *const style0[] = {
	"java.lang.AssertionStatusDirectives", "java.lang.Class", "java.lang.ClassLoader",
	"java.lang.ref.Reference", "java.lang.ref.SoftReference", "java.lang.StackTraceElement",
	"java.lang.String", "java.lang.Throwable", "java.lang.Boolean", "java.lang.Character",
	"java.lang.Float", "java.lang.Double", "java.lang.Byte", "java.lang.Short",
	"java.lang.Integer", "java.lang.Long"};

/* A placed field, or a hole (JDK 15 on). */
struct block {
	uint32_t off, size;
};

/* The layout of one class, as its subclasses build on it. */
struct klayout {
	bool done;
	uint32_t end;		/* JDK 15 on: end of the last field; before: the field block's end */
	uint32_t size;		/* instance size */
	bool contended;		/* it or a superclass has @Contended padding */
	struct block *used;	/* JDK 15 on: every field's place, the header's too */
	uint32_t nused;
};

struct fld {
	uint32_t size;
	bool ref;		/* a reference */
	int group;		/* 0: regular; 1: the class's contended group */
};

static uint32_t up(uint32_t v, uint32_t a)
{
	return a ? (v + a - 1) / a * a : v;
}

static uint32_t field_size(const struct heap *h, const struct layout_cfg *cfg, uint8_t t)
{
	return t == HPROF_OBJECT ? (uint32_t)cfg->oop : (uint32_t)hprof_type_size(h->hp, t);
}

static uint32_t letter_size(const struct layout_cfg *cfg, char c)
{
	switch (c) {
	case 'J': return 8;
	case 'I': return 4;
	case 'S': return 2;
	case 'B': case 'Z': return 1;
	default: return (uint32_t)cfg->oop;
	}
}

static bool in_words(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && *p;) {
		size_t w = strcspn(p, " ");
		if (w == n && !strncmp(p, name, n))
			return true;
		p += w + (p[w] == ' ');
	}
	return false;
}

/* own_fields: class k's declared and injected instance fields, with their contended group. */
static uint32_t own_fields(const struct heap *h, const struct layout_cfg *cfg, uint32_t k,
			   struct fld **out, bool *whole)
{
	const struct heap_class *c = &h->classes[k];
	const struct contended *ct = NULL;
	*whole = false;
	bool boot = c->loader == HEAP_NONE;
	for (size_t i = 0; boot && i < sizeof contended / sizeof *contended; i++)
		if (cfg->jdk >= contended[i].from && cfg->jdk <= contended[i].to &&
		    !strcmp(c->name, contended[i].cls))
			ct = &contended[i];
	const char *inj = NULL;
	for (size_t i = 0; boot && i < sizeof injected / sizeof *injected; i++)
		if (cfg->jdk >= injected[i].from && cfg->jdk <= injected[i].to &&
		    !strcmp(c->name, injected[i].cls))
			inj = injected[i].fields;
	uint32_t n = c->nfields + (inj ? (uint32_t)(strlen(inj) + 1) / 2 : 0);
	struct fld *f = xcalloc((size_t)n + 1, sizeof *f);
	uint32_t m = 0;
	for (unsigned i = 0; i < c->nfields; i++) {
		const char *name = c->fields[i].name;
		f[m].size = field_size(h, cfg, c->fields[i].type);
		f[m].ref = c->fields[i].type == HPROF_OBJECT;
		f[m].group = ct && name && in_words(ct->group, name) ? 1 : 0;
		m++;
	}
	for (const char *p = inj; p && *p; p += p[1] ? 2 : 1)
		f[m++] = (struct fld){letter_size(cfg, *p), *p == 'L', 0};
	*whole = ct && ct->whole;
	*out = f;
	return m;
}

/* ---- before JDK 15 ---- */

static bool is_style0(const struct heap_class *c)
{
	if (c->loader != HEAP_NONE)
		return false;
	for (size_t i = 0; i < sizeof style0 / sizeof *style0; i++)
		if (!strcmp(c->name, style0[i]))
			return true;
	return false;
}

static void layout_pre15(const struct heap *h, const struct layout_cfg *cfg, uint32_t k,
			 struct klayout *L, const struct klayout *sup)
{
	uint32_t oop = (uint32_t)cfg->oop;
	uint32_t start = sup ? sup->end : (uint32_t)cfg->header;
	struct fld *f;
	bool whole;
	uint32_t n = own_fields(h, cfg, k, &f, &whole);
	uint32_t longs = 0, ints = 0, shorts = 0, bytes = 0, oops = 0, ngroup = 0;
	if (whole)
		start += PAD;	/* a contended class: padding before all its fields */
	for (uint32_t i = 0; i < n; i++) {
		if (f[i].group) {
			ngroup++;	/* laid out after the others */
			continue;
		}
		if (f[i].ref)
			oops++;
		else if (f[i].size == 8)
			longs++;
		else if (f[i].size == 4)
			ints++;
		else if (f[i].size == 2)
			shorts++;
		else
			bytes++;
	}
	uint32_t end;
	if (is_style0(&h->classes[k])) {
		uint32_t o = start + oops * oop;
		end = (longs ? up(o, 8) : o) + longs * 8 + ints * 4 + shorts * 2 + bytes;
	} else {
		uint32_t d = start;
		if (longs && (d = up(start, 8)) > start) {
			/* compact fields: the gap before the first long (4 bytes) */
			uint32_t len = d - start;
			if (ints) {
				ints--;
				len -= 4;
			}
			while (len >= 2 && shorts) {
				shorts--;
				len -= 2;
			}
			while (len > 0 && bytes) {
				bytes--;
				len--;
			}
			if (len >= oop && oops) {
				oops--;
				len -= oop;
			}
		}
		end = d + longs * 8 + ints * 4 + shorts * 2 + bytes;
		if (oops)
			end = up(end, oop) + oops * oop;
	}
	if (n == ngroup)
		end = start;
	if (ngroup) {
		/* The contended group after padding, each field aligned to its size,
		 * in declaration order (HPROF lists a class's fields backwards up to
		 * JDK 17), padding after the group. */
		end += PAD;
		for (uint32_t i = n; i-- > 0;)
			if (f[i].group)
				end = up(end, f[i].size) + f[i].size;
		end += PAD;
	}
	if (whole)
		end += PAD;	/* and after them */
	free(f);
	/* nonstatic_field_size counts heapOopSize units: the next class starts aligned to it */
	L->end = up(end, oop);
	L->size = up(up(end, (uint32_t)cfg->word), (uint32_t)cfg->align);
	L->contended = false;
}

/* ---- JDK 15 on ---- */

struct lay {
	struct block *used;	/* placed fields, header first */
	uint32_t nused, capused;
	struct block *holes;	/* empty blocks */
	uint32_t nholes, capholes;
	uint32_t end;
	bool append;		/* the layout's start is its end block: no hole is used (fieldLayoutBuilder's
				 * start = last_block(), after which no EMPTY block ever lies) */
};

static void push(struct block **v, uint32_t *n, uint32_t *cap, uint32_t off, uint32_t size)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*v = xreallocarray(*v, *cap, sizeof **v);
	}
	(*v)[(*n)++] = (struct block){off, size};
}

static int by_off(const void *a, const void *b)
{
	const struct block *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* place: a field of size bytes (aligned to its size) in the smallest hole at or after start, else at the end. */
static void place(struct lay *l, uint32_t size, bool *last_appended, uint32_t *last_size)
{
	int best = -1;
	if (!l->append && !(*last_appended && *last_size == size))
		for (uint32_t i = 0; i < l->nholes; i++) {
			struct block *b = &l->holes[i];
			if (!b->size)
				continue;
			uint32_t a = up(b->off, size);
			if (a + size > b->off + b->size)
				continue;
			if (best < 0 || b->size < l->holes[best].size)
				best = (int)i;
		}
	*last_size = size;
	if (best >= 0) {
		struct block h = l->holes[best];
		uint32_t a = up(h.off, size);
		l->holes[best].size = 0;
		if (a > h.off)
			push(&l->holes, &l->nholes, &l->capholes, h.off, a - h.off);
		if (a + size < h.off + h.size)
			push(&l->holes, &l->nholes, &l->capholes, a + size, h.off + h.size - a - size);
		push(&l->used, &l->nused, &l->capused, a, size);
		*last_appended = false;
		return;
	}
	uint32_t a = up(l->end, size);
	if (a > l->end)
		push(&l->holes, &l->nholes, &l->capholes, l->end, a - l->end);
	push(&l->used, &l->nused, &l->capused, a, size);
	l->end = a + size;
	*last_appended = true;
}

static int by_size_desc(const void *a, const void *b)
{
	const struct fld *x = a, *y = b;
	return x->size > y->size ? -1 : x->size < y->size;
}

static void layout_15(const struct heap *h, const struct layout_cfg *cfg, uint32_t k, struct klayout *L,
		      const struct klayout *sup)
{
	struct lay l = {0};
	uint32_t hdr = (uint32_t)cfg->header;
	bool sup_contended = sup && sup->contended;
	if (sup && sup->nused) {
		for (uint32_t i = 0; i < sup->nused; i++)
			push(&l.used, &l.nused, &l.capused, sup->used[i].off, sup->used[i].size);
		qsort(l.used, l.nused, sizeof *l.used, by_off);
		uint32_t at = 0;
		for (uint32_t i = 0; i < l.nused; i++) {
			if (l.used[i].off > at && !sup_contended)
				push(&l.holes, &l.nholes, &l.capholes, at, l.used[i].off - at);
			if (l.used[i].off + l.used[i].size > at)
				at = l.used[i].off + l.used[i].size;
		}
		l.end = at;
		if (sup_contended) {
			l.end += PAD;
			l.append = true;
		}
	} else {
		push(&l.used, &l.nused, &l.capused, 0, hdr);
		l.end = hdr;
	}
	struct fld *f;
	bool whole;
	uint32_t n = own_fields(h, cfg, k, &f, &whole);
	uint32_t oop = (uint32_t)cfg->oop;
	struct fld *prim = xcalloc((size_t)n + 1, sizeof *prim);
	bool tail = false;
	if (whole) {
		l.append = true;
		l.end += PAD;
		tail = true;
	}
	/* The regular fields, then the contended group (padded before; one pad at the end). */
	for (int g = 0; g <= 1; g++) {
		uint32_t np = 0, nr = 0;
		for (uint32_t i = 0; i < n; i++)
			if (f[i].group == g && !f[i].ref)
				prim[np++] = f[i];
		for (uint32_t i = 0; i < n; i++)
			nr += f[i].group == g && f[i].ref;
		if (!np && !nr)
			continue;
		if (g) {
			l.append = true;
			l.end += PAD;
			tail = true;
		}
		qsort(prim, np, sizeof *prim, by_size_desc);
		bool app = false;
		uint32_t last = 0;
		for (uint32_t i = 0; i < np; i++)
			place(&l, prim[i].size, &app, &last);
		app = false;
		last = 0;
		for (uint32_t i = 0; i < nr; i++)
			place(&l, oop, &app, &last);
	}
	if (tail)
		l.end += PAD;
	free(prim);
	free(f);
	L->end = l.end;
	L->size = up(up(l.end, cfg->word), (uint32_t)cfg->align);
	L->contended = sup_contended || tail;
	L->used = l.used;
	L->nused = l.nused;
	free(l.holes);
}

/* ---- the classes ---- */

static void layout_class(const struct heap *h, const struct layout_cfg *cfg, struct klayout *all, uint32_t k,
			 uint32_t depth)
{
	struct klayout *L = &all[k];
	if (L->done)
		return;
	L->done = true;		/* a cycle of superclasses ends here */
	uint32_t s = h->classes[k].super;
	const struct klayout *sup = NULL;
	if (s != HEAP_NONE && s < h->nclasses && depth < 4096) {
		layout_class(h, cfg, all, s, depth + 1);
		sup = &all[s];
	}
	if (cfg->gen15)
		layout_15(h, cfg, k, L, sup);
	else
		layout_pre15(h, cfg, k, L, sup);
}

void layout_sizes(const struct heap *h, const struct layout_cfg *cfg, uint32_t *size)
{
	struct klayout *all = xcalloc((size_t)h->nclasses + 1, sizeof *all);
	for (uint32_t k = 0; k < h->nclasses; k++) {
		const struct heap_class *c = &h->classes[k];
		if (c->elem_type || c->obj == HEAP_NONE) {
			size[k] = 0;
			continue;
		}
		layout_class(h, cfg, all, k, 0);
		size[k] = all[k].size;
	}
	for (uint32_t k = 0; k < h->nclasses; k++)
		free(all[k].used);
	free(all);
}

uint64_t layout_array_size(const struct layout_cfg *cfg, uint32_t elem_size, uint64_t len)
{
	uint32_t lo = (uint32_t)cfg->header + 4, base;
	if (cfg->jdk >= 22)
		base = up(lo, elem_size);	/* JDK-8139457 */
	else
		base = up(lo, elem_size == 8 ? 8 : (uint32_t)cfg->word);
	return (base + (uint64_t)elem_size * len + (uint64_t)cfg->align - 1) / (uint64_t)cfg->align *
	       (uint64_t)cfg->align;
}
