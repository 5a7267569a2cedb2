/*
 * test_retained.c - property tests of set retention (src/engine/domtree.c):
 * on random heaps written as HPROF dumps (object arrays referring to each
 * other: chains, cycles, shared objects, unreachable parts), the bytes
 * dom_retained_set and dom_retained_sets give for random sets equal the
 * definition by brute force: the shallow bytes of the reachable objects
 * that no longer are once the set's members are gone; and what a class's
 * instances keep each on their own (dom_class_retained_lower) equals its
 * definition and never exceeds the class's retained size.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "../../src/base/big.h"
#include "../../src/engine/domtree.h"
#include "hprof_writer.h"

#define XORSHIFT_SEED 0x9E3779B97F4A7C15ULL
#include "xorshift.h"

#define OBJECT_CLASS 0x100
#define ARRAY_CLASS 0x200
#define ID(k) (0x1000 + 16 * (uint64_t)(k))

/*
 * random_heap: nobj Object[] arrays. Shapes: 0 random edges; 1 a long
 * chain with a few side edges (deep dominator tree); 2 mostly forward edges
 * with shared children (DAG-like, joint retention everywhere). A few roots;
 * some objects unreachable.
 */
/* array classes the objects are spread over (1: all Object[]) */
static uint32_t narray_classes = 1;
#define ARRAY_CLASS_N(c) (ARRAY_CLASS + 0x100 * (uint64_t)(c))

static struct heap *random_heap(uint32_t nobj, int shape, struct hw *w)
{
	static const char *const names[] = {"[Ljava/lang/Object;", "[Ljava/lang/String;",
					    "[Ljava/lang/Thread;"};
	hw_init(w, 8, 2, 0);
	hw_utf8(w, 1, "java/lang/Object");
	hw_load_class(w, 1, OBJECT_CLASS, 0, 1);
	for (uint32_t c = 0; c < narray_classes; c++) {
		hw_utf8(w, 2 + c, names[c]);
		hw_load_class(w, 2 + c, ARRAY_CLASS_N(c), 0, 2 + c);
	}
	hw_dump_begin(w, HPROF_HEAP_DUMP);
	hw_class_dump(w, &(struct hw_class){.id = OBJECT_CLASS});
	for (uint32_t c = 0; c < narray_classes; c++)
		hw_class_dump(w, &(struct hw_class){.id = ARRAY_CLASS_N(c), .super = OBJECT_CLASS});
	uint32_t nroots = 1 + rnd(3);
	for (uint32_t r = 0; r < nroots; r++)
		hw_root_jni_global(w, ID(rnd(nobj)), 0x9000 + r);
	hw_root(w, HPROF_GC_ROOT_STICKY_CLASS, OBJECT_CLASS);
	hw_root(w, HPROF_GC_ROOT_STICKY_CLASS, ARRAY_CLASS);
	uint64_t elems[8];
	for (uint32_t k = 0; k < nobj; k++) {
		uint32_t len = rnd(5), n = 0;
		if (shape == 1 && k + 1 < nobj)
			elems[n++] = ID(k + 1);
		for (uint32_t e = 0; e < len; e++) {
			uint32_t to = rnd(nobj);
			if (shape == 2 && to < k && rnd(5))
				to = k + 1 + rnd(nobj - k > 4 ? 4 : nobj - k);
			if (shape == 1 && rnd(3))
				continue;
			elems[n++] = to < nobj ? ID(to) : 0;
		}
		hw_obj_array(w, ID(k), ARRAY_CLASS_N(rnd(narray_classes)), n, elems);
	}
	hw_dump_end(w);
	struct heap *h = NULL;
	struct hs_error err;
	if (heap_load(hw_save(w), NULL, &h, &err) != HS_OK)
		fail_msg("heap_load: %s", err.msg);
	return h;
}

/* brute: the definition: reach from the GC roots avoiding the set; sum what was lost. */
static uint64_t brute(struct dom_tree *t, const uint32_t *set, uint32_t n)
{
	uint32_t nn = t->h->n;
	uint8_t *seen = calloc(nn + 1, 1);
	uint32_t *stack = malloc((nn + 1) * sizeof *stack), sp = 0;
	for (uint32_t k = 0; k < n; k++)
		seen[set[k]] = 2;	/* gone */
	stack[sp++] = nn;
	seen[nn] = 1;
	while (sp) {
		uint32_t v = stack[--sp];
		struct dom_slices s;
		hg_succs(&t->g, v, &s);
		for (int i = 0; i < s.count; i++)
			for (uint32_t e = 0; e < s.n[i]; e++)
				if (!seen[s.a[i][e]]) {
					seen[s.a[i][e]] = 1;
					stack[sp++] = s.a[i][e];
				}
	}
	uint64_t lost = 0;
	for (uint32_t v = 0; v < nn; v++)
		if (t->idom[v] != HEAP_NONE && seen[v] != 1)
			lost += heap_shallow(t->h, v);
	free(stack);
	free(seen);
	return lost;
}

/*
 * random_set: a few random objects (always, when scattered), or an object
 * and some of its dominator subtree.
 */
static uint32_t random_set(struct dom_tree *t, uint32_t *set, bool scattered)
{
	uint32_t nn = t->h->n, n = 0;
	switch (scattered ? 1 : rnd(4)) {
	case 0:		/* empty, or one object */
		n = rnd(2);
		if (n)
			set[0] = rnd(nn);
		break;
	case 1:		/* scattered, duplicates allowed */
		n = 1 + rnd(6);
		for (uint32_t k = 0; k < n; k++)
			set[k] = rnd(nn);
		break;
	default: {	/* children of one object: local sets, joint retention */
		uint32_t v = rnd(nn);
		for (uint32_t w = 0; w < nn && n < 8; w++)
			if (t->idom[w] == v || (t->idom[w] != HEAP_NONE && t->idom[t->idom[w]] == v))
				if (rnd(2))
					set[n++] = w;
		break;
	}
	}
	return n;
}

static void check_heaps(uint32_t nobj, int rounds, uint32_t nsets, bool scattered)
{
	for (int iter = 0; iter < rounds; iter++) {
		struct hw w;
		struct heap *h = random_heap(nobj, iter % 3, &w);
		struct dom_tree *t;
		assert_int_equal(dom_tree_build(h, false, false, &t), HS_OK);
		uint32_t **sets = calloc(nsets, sizeof *sets), *n = calloc(nsets, sizeof *n);
		uint64_t *want = calloc(nsets, sizeof *want), *got = calloc(nsets, sizeof *got);
		for (uint32_t j = 0; j < nsets; j++) {
			sets[j] = malloc(8 * sizeof **sets);
			n[j] = random_set(t, sets[j], scattered);
			want[j] = brute(t, sets[j], n[j]);
			uint64_t one;
			assert_int_equal(dom_retained_set(t, sets[j], n[j], &one), HS_OK);
			if (one != want[j])
				fail_msg("heap %d, set %u: dom_retained_set %llu, by definition %llu",
					 iter, j, (unsigned long long)one, (unsigned long long)want[j]);
		}
		assert_int_equal(dom_retained_sets(t, nsets, (const uint32_t *const *)sets, n, got), HS_OK);
		for (uint32_t j = 0; j < nsets; j++)
			if (got[j] != want[j])
				fail_msg("heap %d, set %u of %u: dom_retained_sets %llu, by definition %llu",
					 iter, j, nsets, (unsigned long long)got[j],
					 (unsigned long long)want[j]);
		for (uint32_t j = 0; j < nsets; j++)
			free(sets[j]);
		free(sets);
		free(n);
		free(want);
		free(got);
		dom_tree_free(t);
		heap_free(h);
		hw_free(&w);
	}
}

/* Small heaps, a few sets each: most sets are wide (over 1/16 of the heap). */
static void small_heaps(void **state)
{
	(void)state;
	check_heaps(40, 600, 5, false);
}

/* Bigger heaps and 150 sets: local ones alone, the rest in one batch. */
static void local_and_wide(void **state)
{
	(void)state;
	check_heaps(600, 30, 150, false);
}

/* 150 scattered sets, nearly all wide: batches of 64, 64 and the rest. */
static void batches(void **state)
{
	(void)state;
	check_heaps(600, 30, 150, true);
}

/*
 * spill_during_build: with spill, the record positions go to a file while
 * the tree is built (on the thread that makes the referrer lists, during
 * the DFS, when there is one): afterwards they are in a file, and the tree
 * and every record read through them are what a build without spill gives.
 */
static void spill_during_build(void **state)
{
	(void)state;
	struct hw w;
	struct heap *a = random_heap(40000, 0, &w), *b;
	struct hs_error err;
	assert_int_equal(heap_load(w.path, NULL, &b, &err), HS_OK);	/* the same dump */
	struct dom_tree *ta, *tb;
	assert_int_equal(dom_tree_build(a, false, true, &ta), HS_OK);
	assert_int_equal(dom_tree_build(b, false, false, &tb), HS_OK);
	assert_true(big_spilled_bytes(a->pos_lo) >= (uint64_t)a->n * sizeof *a->pos_lo);
	assert_int_equal(big_spilled_bytes(b->pos_lo), 0);
	assert_memory_equal(ta->idom, tb->idom, ((size_t)a->n + 1) * sizeof *ta->idom);
	for (uint32_t v = 0; v <= a->n; v++)
		assert_true(dom_retained(ta, v) == dom_retained(tb, v));
	for (uint32_t v = 0; v < a->n; v++) {
		assert_true(heap_id(a, v) == heap_id(b, v));
		assert_int_equal(heap_array_length(a, v), heap_array_length(b, v));
	}
	dom_tree_free(ta);
	dom_tree_free(tb);
	heap_free(a);
	heap_free(b);
	hw_free(&w);
}

/*
 * children_top: dom_children_top's list is the start of dom_children's
 * (largest retained first, ties by index; random heaps have many ties),
 * its count all the children, for the super-root and some objects, before
 * and after the children index is built.
 */
static void children_top(void **state)
{
	(void)state;
	static const uint32_t limits[] = {1, 2, 3, 25, 1000};
	for (int iter = 0; iter < 30; iter++) {
		struct hw w;
		struct heap *h = random_heap(iter < 20 ? 40 : 600, iter % 3, &w);
		struct dom_tree *t;
		assert_int_equal(dom_tree_build(h, false, false, &t), HS_OK);
		for (int pass = 0; pass < 2; pass++) {
			if (pass == 1) {
				uint32_t c;
				dom_children_view(t, h->n, &c);	/* builds the index */
			}
			for (int j = 0; j < 8; j++) {
				uint32_t v = j == 0 ? h->n : rnd(h->n), n, m;
				uint32_t *all = dom_children(t, v, &n);
				for (size_t l = 0; l < sizeof limits / sizeof *limits; l++) {
					uint32_t *top = dom_children_top(t, v, limits[l], &m);
					assert_int_equal(m, n);
					uint32_t shown = n < limits[l] ? n : limits[l];
					for (uint32_t k = 0; k < shown; k++)
						if (top[k] != all[k])
							fail_msg("heap %d, node %u, limit %u: child %u is "
								 "%u, dom_children's %u", iter, v,
								 limits[l], k, top[k], all[k]);
					free(top);
				}
				free(all);
			}
		}
		dom_tree_free(t);
		heap_free(h);
		hw_free(&w);
	}
}

/*
 * class_lower_bound: on heaps of three array classes, each class's figure
 * from dom_class_retained_lower is, by its definition, the retained sizes
 * of the instances no other instance of the class dominates, added up; and
 * at most what all the instances retain together (brute force).
 */
static void class_lower_bound(void **state)
{
	(void)state;
	narray_classes = 3;
	for (int iter = 0; iter < 90; iter++) {
		struct hw w;
		struct heap *h = random_heap(iter < 60 ? 40 : 400, iter % 3, &w);
		struct dom_tree *t;
		assert_int_equal(dom_tree_build(h, false, false, &t), HS_OK);
		uint64_t *own = calloc(h->nclasses + 1, sizeof *own);
		assert_int_equal(dom_class_retained_lower(t, own), HS_OK);
		for (uint32_t c = 0; c < h->nclasses; c++) {
			uint32_t k;
			const uint32_t *inst = heap_instances(h, c, &k);
			uint64_t want = 0;
			for (uint32_t j = 0; j < k; j++) {
				uint32_t v = inst[j];
				if (t->idom[v] == HEAP_NONE)
					continue;
				bool under_another = false;
				for (uint32_t a = t->idom[v]; a != h->n && !under_another; a = t->idom[a])
					under_another = h->cls[a] == c;
				if (!under_another)
					want += dom_retained(t, v);
			}
			if (own[c] != want)
				fail_msg("heap %d, class %s: %llu, by definition %llu", iter,
					 h->classes[c].name, (unsigned long long)own[c],
					 (unsigned long long)want);
			uint64_t all = brute(t, inst, k);
			if (own[c] > all)
				fail_msg("heap %d, class %s: %llu on their own, more than %llu together",
					 iter, h->classes[c].name, (unsigned long long)own[c],
					 (unsigned long long)all);
		}
		free(own);
		dom_tree_free(t);
		heap_free(h);
		hw_free(&w);
	}
	narray_classes = 1;
}

/*
 * The tree's index section (dom_tree_save / dom_tree_load): read back,
 * copied or used where it lies in a read-only mapping, it is the same tree;
 * the layout before (u32 n, idom, u64 retained sizes) and a cut section
 * are stale; a cycle and a large-size pair below 4 GiB are refused.
 */
static void section_round_trip(void **state)
{
	(void)state;
	for (int iter = 0; iter < 12; iter++) {
		struct hw w;
		struct heap *h = random_heap(iter < 6 ? 40 : 400, iter % 3, &w);
		uint32_t n = h->n;
		struct dom_tree *t;
		assert_int_equal(dom_tree_build(h, false, false, &t), HS_OK);
		size_t len;
		uint8_t *sec = dom_tree_save(t, n, &len);
		assert_int_equal(len, 16 + 8 * ((size_t)n + 1));
		bool insane = true;
		struct dom_tree *copy = dom_tree_load(h, false, sec, len, NULL, 0, false, &insane);
		assert_non_null(copy);
		assert_false(insane);
		void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		assert_true(map != MAP_FAILED);
		memcpy(map, sec, len);
		assert_int_equal(mprotect(map, len, PROT_READ), 0);
		struct dom_tree *lent = dom_tree_load(h, false, map, len, map, len, false, &insane);
		assert_non_null(lent);
		assert_ptr_equal(lent->idom, (uint32_t *)((uint8_t *)map + 16));
		for (uint32_t v = 0; v <= n; v++) {
			assert_int_equal(copy->idom[v], t->idom[v]);
			assert_int_equal(lent->idom[v], t->idom[v]);
			assert_int_equal(dom_retained(copy, v), dom_retained(t, v));
			assert_int_equal(dom_retained(lent, v), dom_retained(t, v));
		}
		assert_int_equal(lent->nreach, t->nreach);
		dom_tree_free(copy);
		dom_tree_free(lent);	/* unmaps */

		/* the old layout: stale, not insane */
		size_t olen = 4 + 12 * ((size_t)n + 1);
		uint8_t *old = calloc(1, olen);
		memcpy(old, &n, 4);
		memcpy(old + 4, t->idom, 4 * ((size_t)n + 1));
		assert_null(dom_tree_load(h, false, old, olen, NULL, 0, false, &insane));
		assert_false(insane);
		free(old);
		assert_null(dom_tree_load(h, false, sec, len - 1, NULL, 0, false, &insane));
		assert_false(insane);

		/* a cycle between two reachable objects: refused, the mapping kept */
		uint32_t a = HEAP_NONE, b = HEAP_NONE;
		for (uint32_t v = 0; v < n && b == HEAP_NONE; v++)
			if (t->idom[v] != HEAP_NONE && t->idom[v] != n)
				a == HEAP_NONE ? (a = v) : (b = v);
		if (b != HEAP_NONE) {
			uint8_t *bad = mmap(NULL, len, PROT_READ | PROT_WRITE,
					    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			memcpy(bad, sec, len);
			memcpy(bad + 16 + 4 * (size_t)a, &b, 4);
			memcpy(bad + 16 + 4 * (size_t)b, &a, 4);
			assert_null(dom_tree_load(h, false, bad, len, bad, len, false, &insane));
			assert_true(insane);
			assert_int_equal(munmap(bad, len), 0);
		}
		/* a pair for a size below 4 GiB: refused */
		uint8_t *pair = calloc(1, len + 16);
		memcpy(pair, sec, len);
		uint64_t one = 1, kv[2] = {1, dom_retained(t, 0)};
		memcpy(pair + 8, &one, 8);
		uint32_t mark = DOM_RETAINED_BIG;
		memcpy(pair + 16 + 4 * ((size_t)n + 1), &mark, 4);
		memcpy(pair + len, kv, 16);
		assert_null(dom_tree_load(h, false, pair, len + 16, NULL, 0, false, &insane));
		assert_true(insane);
		free(pair);

		/* adopted (dom_tree_adopt): the tree built uses the section where
		 * it lies, with the same answers; another shape is refused and
		 * nothing changes */
		uint8_t *sec2 = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				     -1, 0);
		assert_true(sec2 != MAP_FAILED);
		memcpy(sec2, sec, len);
		uint32_t *idom0 = t->idom;
		assert_false(dom_tree_adopt(t, sec2, len - 1, sec2, len));
		uint32_t wrong = n + 1;
		memcpy(sec2 + 4, &wrong, 4);
		assert_false(dom_tree_adopt(t, sec2, len, sec2, len));
		assert_ptr_equal(t->idom, idom0);
		memcpy(sec2 + 4, &n, 4);
		assert_int_equal(mprotect(sec2, len, PROT_READ), 0);
		struct dom_tree *fresh;
		assert_int_equal(dom_tree_build(h, false, false, &fresh), HS_OK);
		assert_true(dom_tree_adopt(t, sec2, len, sec2, len));
		assert_ptr_equal(t->idom, (uint32_t *)(sec2 + 16));
		assert_false(dom_tree_adopt(t, sec2, len, sec2, len));	/* once */
		for (uint32_t v = 0; v <= n; v++) {
			assert_int_equal(t->idom[v], fresh->idom[v]);
			assert_int_equal(dom_retained(t, v), dom_retained(fresh, v));
		}
		dom_tree_free(fresh);
		big_free(sec);
		dom_tree_free(t);	/* unmaps sec2 */
		heap_free(h);
		hw_free(&w);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(class_lower_bound),
		cmocka_unit_test(children_top),
		cmocka_unit_test(spill_during_build),
		cmocka_unit_test(section_round_trip),
		cmocka_unit_test(small_heaps),
		cmocka_unit_test(local_and_wide),
		cmocka_unit_test(batches),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
