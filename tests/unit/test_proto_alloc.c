/*
 * test_proto_alloc.c - the client's decoder of an agent's allocation
 * recording (docs/protocol.md, ALLOC_READ; proto_alloc_decode): a stream
 * written here record by record decodes to exactly what was written; every
 * kind of bad record (an index forward or out of range, a counter that is
 * not a finite count, a second status, an unknown tag, a wrong record
 * count, every truncation) is an error that names it; and mutated streams
 * (a fuzzing loop over byte flips, insertions and cuts) never crash and,
 * when accepted, always give a recording whose indexes are all in range.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/alloc/alloc.h"
#include "../../src/attach/proto.h"
#define XORSHIFT_SEED 0x5eed0413u
#include "xorshift.h"

struct w {
	uint8_t p[4096];
	size_t n;
	uint64_t records;
};

static void u8(struct w *w, uint8_t v) { w->p[w->n++] = v; }
static void u32(struct w *w, uint32_t v)
{
	for (int k = 3; k >= 0; k--)
		u8(w, (uint8_t)(v >> (8 * k)));
}
static void u64(struct w *w, uint64_t v)
{
	u32(w, (uint32_t)(v >> 32));
	u32(w, (uint32_t)v);
}
static void str(struct w *w, const char *s)
{
	u32(w, (uint32_t)strlen(s));
	memcpy(w->p + w->n, s, strlen(s));
	w->n += strlen(s);
}
static void f64(struct w *w, double v)
{
	uint64_t b;
	memcpy(&b, &v, 8);
	u64(w, b);
}

enum { A_STATUS = 1, A_ACCOUNT, A_CLASS, A_METHOD, A_NODE, A_KEY };

static void status(struct w *w)
{
	u8(w, A_STATUS);
	u8(w, 1 | 2 | 4 | 16 | 64);	/* exists, recording, exact, by bytecode, live counts sampled */
	u64(w, 0);
	u32(w, 64);
	u64(w, 1700000000000ULL);
	u64(w, 0);
	u64(w, 1234);
	u64(w, 0);
	u64(w, 4096);
	u64(w, 10);
	u64(w, 0);
	str(w, "com.acme.web,com.acme.xml.*");
	u64(w, 812);	/* classes instrumented */
	u64(w, 3);	/* classes left as they were */
	u64(w, 0);	/* objects not followed */
	str(w, "Main.main (Main.java lines 3, 4) on thread main\nLoop.run (Loop.java line 9) on thread w");
	u64(w, 4096);	/* bytes not seen by the rewritten code */
	u64(w, 1 << 20);	/* bytes allocated in all */
	w->records++;
}
static void method(struct w *w, const char *cls, const char *name, const char *file, uint32_t acc)
{
	u8(w, A_METHOD);
	str(w, cls);
	str(w, name);
	str(w, "()V");
	str(w, file);
	u32(w, acc);
	w->records++;
}
static void node(struct w *w, uint32_t parent, uint32_t m, int32_t line)
{
	u8(w, A_NODE);
	u32(w, parent);
	u32(w, m);
	u32(w, (uint32_t)line);
	w->records++;
}
static void key(struct w *w, uint32_t nd, uint32_t cls, uint32_t acc, double objs, double bytes)
{
	u8(w, A_KEY);
	u32(w, nd);
	u32(w, cls);
	u32(w, acc);
	f64(w, objs);
	f64(w, bytes);
	f64(w, objs / 2);
	f64(w, bytes / 2);
	f64(w, 0);
	f64(w, 0);
	f64(w, 0);
	w->records++;
}

/* valid: a small recording: two accounts, two classes, main > handle > make. */
static void valid(struct w *w)
{
	memset(w, 0, sizeof *w);
	status(w);
	u8(w, A_ACCOUNT);
	str(w, "com.acme.web");
	u8(w, A_ACCOUNT);
	str(w, "com.acme.xml.*");
	w->records += 2;
	u8(w, A_CLASS);
	str(w, "Lcom/acme/web/Session;");
	u8(w, A_CLASS);
	str(w, "[I");
	w->records += 2;
	method(w, "LMain;", "main", "Main.java", 0);
	method(w, "Lcom/acme/web/WebHandler;", "handle", "WebHandler.java", 1);
	method(w, "Lcom/acme/util/Pool;", "make", "", 0);
	node(w, UINT32_MAX, 0, 10);
	node(w, 0, 1, 40);
	node(w, 1, 2, -1);
	key(w, 1, 0, 1, 1000, 24000);
	key(w, 2, 1, 1, 100, 16800);
	key(w, UINT32_MAX, 1, 0, 3, 48);
}

static int decode(const struct w *w, struct alc_rec **r, char *why)
{
	return proto_alloc_decode(w->p, w->n, w->records, r, why, 200);
}

static void test_valid(void **state)
{
	(void)state;
	struct w w;
	valid(&w);
	struct alc_rec *r;
	char why[200] = "";
	assert_int_equal(decode(&w, &r, why), 0);
	assert_true(r->st.exists && r->st.recording && r->st.exact);
	assert_int_equal(r->st.depth, 64);
	assert_int_equal(r->st.events, 1234);
	assert_string_equal(r->st.accounts, "com.acme.web,com.acme.xml.*");
	assert_true(r->st.bytecode);
	assert_int_equal(r->st.classes_instrumented, 812);
	assert_int_equal(r->st.classes_failed, 3);
	assert_int_equal(r->st.untracked, 0);
	assert_true(r->st.live_sampled && !r->st.no_live);
	assert_string_equal(r->st.uncovered,
			    "Main.main (Main.java lines 3, 4) on thread main\nLoop.run (Loop.java line 9) on thread w");
	assert_int_equal(r->st.missed_bytes, 4096);
	assert_int_equal(r->st.seen_bytes, 1 << 20);
	assert_int_equal(r->naccounts, 3);
	assert_string_equal(r->accounts[0], "(none)");
	assert_string_equal(r->accounts[2], "com.acme.xml.*");
	assert_int_equal(r->nclasses, 2);
	assert_string_equal(r->classes[0], "com.acme.web.Session");
	assert_string_equal(r->classes[1], "int[]");
	assert_int_equal(r->nmethods, 3);
	assert_string_equal(r->methods[1].cls, "com.acme.web.WebHandler");
	assert_string_equal(r->methods[1].file, "WebHandler.java");
	assert_null(r->methods[2].file);	/* "" is unknown */
	assert_int_equal(r->methods[1].account, 1);
	assert_int_equal(r->nnodes, 3);
	assert_int_equal(r->nodes[0].parent, ALC_NONE);
	assert_int_equal(r->nodes[2].line, -1);
	assert_int_equal(r->nkeys, 3);
	assert_true(r->keys[0].objs == 1000 && r->keys[0].live_bytes == 12000);
	assert_int_equal(r->keys[2].node, ALC_NONE);
	alc_free(r);
}

/* bad: w with the 4-byte field at offset off replaced by v must fail, naming what. */
static void bad(const struct w *w0, size_t off, uint32_t v, const char *needle)
{
	struct w w = *w0;
	w.p[off] = (uint8_t)(v >> 24);
	w.p[off + 1] = (uint8_t)(v >> 16);
	w.p[off + 2] = (uint8_t)(v >> 8);
	w.p[off + 3] = (uint8_t)v;
	struct alc_rec *r = NULL;
	char why[200] = "";
	assert_int_not_equal(decode(&w, &r, why), 0);
	assert_null(r);
	if (!strstr(why, needle))
		fail_msg("expected '%s' in '%s'", needle, why);
}

static void test_bad_records(void **state)
{
	(void)state;
	struct w w;
	valid(&w);
	/* The same records again, noting where each starts. */
	struct w v;
	memset(&v, 0, sizeof v);
	status(&v);
	u8(&v, A_ACCOUNT);
	str(&v, "com.acme.web");
	u8(&v, A_ACCOUNT);
	str(&v, "com.acme.xml.*");
	u8(&v, A_CLASS);
	str(&v, "Lcom/acme/web/Session;");
	u8(&v, A_CLASS);
	str(&v, "[I");
	method(&v, "LMain;", "main", "Main.java", 0);
	size_t m1 = v.n;
	method(&v, "Lcom/acme/web/WebHandler;", "handle", "WebHandler.java", 1);
	method(&v, "Lcom/acme/util/Pool;", "make", "", 0);
	size_t n0 = v.n;
	node(&v, UINT32_MAX, 0, 10);
	size_t n1 = v.n;
	node(&v, 0, 1, 40);
	node(&v, 1, 2, -1);
	size_t k0 = v.n;
	assert_memory_equal(v.p, w.p, v.n);
	/* METHOD 0's account is its last field. */
	bad(&w, m1 - 4, 3, "method 0 names account 3 of 3");
	/* NODE 1: a parent that is not before it, a method out of range. */
	bad(&w, n1 + 1, 1, "node 1 names parent 1");
	bad(&w, n1 + 1, 7, "node 1 names parent 7");
	bad(&w, n0 + 5, 3, "node 0 names parent 4294967295 and method 3");
	/* KEY 0: node, class and account out of range. */
	bad(&w, k0 + 1, 3, "key 0 names node 3");
	bad(&w, k0 + 5, 2, "key 0 names node 1, class 2");
	bad(&w, k0 + 9, 3, "account 3");
	/* Counters: NaN, infinity, negative, absurd. */
	double vals[] = {NAN, INFINITY, -1, 1e300};
	for (size_t k = 0; k < sizeof vals / sizeof *vals; k++) {
		uint64_t b;
		memcpy(&b, &vals[k], 8);
		bad(&w, k0 + 13, (uint32_t)(b >> 32), "key 0 has a counter of");
	}
	/* An unknown tag, a second status, a wrong record count. */
	struct w x = w;
	x.p[k0] = 9;
	struct alc_rec *r = NULL;
	char why[200] = "";
	assert_int_not_equal(decode(&x, &r, why), 0);
	assert_non_null(strstr(why, "record type 9"));
	x = w;
	status(&x);
	x.records--;
	assert_int_not_equal(decode(&x, &r, why), 0);
	assert_non_null(strstr(why, "record type 1"));
	x = w;
	x.records++;
	assert_int_not_equal(decode(&x, &r, why), 0);
	assert_non_null(strstr(why, "announced"));
	/* No status at all. */
	struct w y;
	memset(&y, 0, sizeof y);
	node(&y, UINT32_MAX, 0, 1);
	assert_int_not_equal(decode(&y, &r, why), 0);
	assert_null(r);
}

static void test_truncations(void **state)
{
	(void)state;
	struct w w;
	valid(&w);
	for (size_t n = 0; n < w.n; n++) {
		struct w x = w;
		x.n = n;
		struct alc_rec *r = NULL;
		char why[200] = "";
		if (decode(&x, &r, why) == 0)
			fail_msg("a stream cut at byte %zu of %zu was accepted", n, w.n);
		assert_null(r);
		assert_true(why[0] != 0);
	}
}

/* sane: every index of an accepted recording is in range, every parent before its node. */
static void sane(const struct alc_rec *r)
{
	assert_true(r->naccounts >= 1);
	for (uint32_t i = 0; i < r->nmethods; i++)
		assert_true(r->methods[i].account < r->naccounts);
	for (uint32_t i = 0; i < r->nnodes; i++) {
		assert_true(r->nodes[i].parent == ALC_NONE || r->nodes[i].parent < i);
		assert_true(r->nodes[i].method < r->nmethods);
	}
	for (uint32_t i = 0; i < r->nkeys; i++) {
		const struct alc_key *k = &r->keys[i];
		assert_true(k->node == ALC_NONE || k->node < r->nnodes);
		assert_true(k->cls < r->nclasses && k->account < r->naccounts);
		assert_true(isfinite(k->objs) && k->objs >= 0 && isfinite(k->live_bytes));
	}
	/* The views must take whatever the decoder accepts. */
	uint32_t n;
	free(alc_by_site(r, false, &n));
	free(alc_tree(r, 0, &n));
}

static void test_fuzz(void **state)
{
	(void)state;
	struct w w;
	valid(&w);
	int accepted = 0;
	for (int it = 0; it < 20000; it++) {
		struct w x = w;
		int edits = 1 + (int)(rnd(4));
		for (int e = 0; e < edits; e++) {
			size_t at = (size_t)rnd((uint32_t)x.n);
			switch (rnd(4)) {
			case 0:	/* flip a byte */
				x.p[at] ^= (uint8_t)(1 + rnd(255));
				break;
			case 1:	/* a byte in or out of a length or an index's high end */
				x.p[at] = (uint8_t)(rnd(2) ? 0xff : 0);
				break;
			case 2:	/* cut */
				x.n = at;
				break;
			default:	/* insert a byte */
				if (x.n < sizeof x.p) {
					memmove(x.p + at + 1, x.p + at, x.n - at);
					x.p[at] = (uint8_t)rnd(256);
					x.n++;
				}
			}
			if (x.n == 0)
				break;
		}
		struct alc_rec *r = NULL;
		char why[200] = "";
		if (proto_alloc_decode(x.p, x.n, x.records, &r, why, sizeof why) == 0) {
			accepted++;
			sane(r);
			alc_free(r);
		} else {
			assert_null(r);
			assert_true(why[0] != 0);
		}
	}
	/* Flips inside strings and counters keep a stream valid: some must be accepted. */
	assert_true(accepted > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_fuzz),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
