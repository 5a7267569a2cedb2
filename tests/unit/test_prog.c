/*
 * test_prog.c - query programs as bytes (src/dsl/prog.h) and what
 * src/dsl/plan.h decides from syntax trees: every statement kind and node
 * kind the agent runs survives encode, decode and encode again byte for
 * byte; what cannot go into the JVM is refused with a reason; the decoder
 * refuses every truncation, a forward reference, a tree deeper than
 * PROG_MAX_DEPTH, unknown kinds and trailing bytes; a fuzzing loop of byte
 * flips, insertions and cuts never crashes it, and what it accepts is a
 * well-formed tree; the partial evaluation of the paper's memberships.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/dsl/arena.h"
#include "../../src/dsl/parse.h"
#include "../../src/dsl/plan.h"
#include "../../src/dsl/prog.h"
#include "../../src/dsl/value.h"
#define XORSHIFT_SEED 0x5eed0014u
#include "xorshift.h"

static const char *const programs[] = {
	"1 + 2 * 3 - -4 / 2",
	"objects.filter([it | it is Order and it.status = 7]).map([o | o.id]).sum",
	"let x = #[1, 2.5, \"s\", true, null]  x.count([v | v != null and not (v = 2)])",
	"classes.first([c | c.name = \"Order\"]).instances.length",
	"set_type all:\n"
	"\troots <- threads\n"
	"\tmembership <- THIS in Unassigned and REFERRER in ENTITY\n"
	"\ton_inclusion <- [ nbObjects <- nbObjects + 1  nbSize <- nbSize + THIS.shallow_size ]\n"
	"\tnbObjects : int <- 0\n"
	"\tnbSize : int <- 0\n"
	"instances_for all have_names = \"all-jvm\"",
	"set_type Component:\n"
	"\troots <- classloaders.filter([it | it.id = ENTITY.name])\n"
	"\tmembership <- THIS in Unassigned and (\n"
	"\t\t(ref_kind = root and THIS.class.classloader in ENTITY) or\n"
	"\t\t(ref_kind != root and REFERRER in ENTITY))\n"
	"\ton_inclusion <- [ nbSize <- nbSize + THIS.shallow_size ]\n"
	"\tloader : string <- classloaders.first([it | it.id = ENTITY.name]).name\n"
	"\tnbSize : int <- 0\n"
	"instances_for Component have_names = classloaders.map([it | it.id])",
};

struct budget {
	size_t left;
	void *blocks[100000];
	size_t n;
};

static void *balloc(void *ctx, size_t n)
{
	struct budget *b = ctx;
	if (n > b->left || b->n == sizeof b->blocks / sizeof *b->blocks)
		return NULL;
	b->left -= n;
	void *p = calloc(1, n);
	b->blocks[b->n++] = p;
	return p;
}

static void bfree(struct budget *b)
{
	for (size_t k = 0; k < b->n; k++)
		free(b->blocks[k]);
	b->n = 0;
}

/* encode_text: the program of a snippet (its own statements only). */
static uint8_t *encode_text(const char *text, size_t *len, struct arena *a)
{
	struct stmt **st;
	int n;
	struct hs_error err;
	assert_int_equal(parse_snippet(text, a, &st, &n, &err), PARSE_OK);
	uint8_t *p = NULL;
	char why[200];
	assert_int_equal(prog_encode(st, n, n ? st[0]->snippet : NULL, &p, len, why, sizeof why), 0);
	return p;
}

static void test_round_trip(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof programs / sizeof *programs; k++) {
		struct arena a = {0};
		size_t len, len2;
		uint8_t *p = encode_text(programs[k], &len, &a);
		struct budget *b = calloc(1, sizeof *b);
		b->left = 1 << 20;
		struct prog pr;
		char why[200];
		assert_int_equal(prog_decode(p, len, balloc, b, &pr, why, sizeof why), 0);
		uint8_t *p2 = NULL;
		assert_int_equal(prog_encode(pr.stmts, pr.nstmts, NULL, &p2, &len2, why, sizeof why), 0);
		assert_int_equal(len, len2);
		assert_memory_equal(p, p2, len);
		free(p2);
		/* every truncation is refused, never read past */
		for (size_t cut = 0; cut < len; cut++) {
			uint8_t *c = malloc(cut + 1);
			memcpy(c, p, cut);
			assert_int_equal(prog_decode(c, cut, balloc, b, &pr, why, sizeof why), -1);
			assert_non_null(strstr(why, "malformed program"));
			free(c);
		}
		bfree(b);
		free(b);
		free(p);
		arena_free(&a);
	}
}

static void test_refusals(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"extern \"libm.so.6\" cos(float) : float",
		"T : struct a : int end",
	};
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
		struct arena a = {0};
		struct stmt **st;
		int n;
		struct hs_error err;
		assert_int_equal(parse_snippet(bad[k], &a, &st, &n, &err), PARSE_OK);
		uint8_t *p = NULL;
		size_t len;
		char why[200];
		assert_int_equal(prog_encode(st, n, NULL, &p, &len, why, sizeof why), -1);
		assert_non_null(strstr(why, "heapsh"));
		assert_non_null(plan_live_reason(st, n, why, sizeof why));
		arena_free(&a);
	}
	static const char *const snapshot_only[] = {
		"objects.filter([it | it is Order]).map([o | o.retained]).sum",
		"threads.first.roots", "allocations.count", "objects.first.refs",
	};
	for (size_t k = 0; k < sizeof snapshot_only / sizeof *snapshot_only; k++) {
		struct arena a = {0};
		struct stmt **st;
		int n;
		struct hs_error err;
		char why[200];
		assert_int_equal(parse_snippet(snapshot_only[k], &a, &st, &n, &err), PARSE_OK);
		assert_non_null(plan_live_reason(st, n, why, sizeof why));
		arena_free(&a);
	}
	/* more nodes than a program holds: a list literal of 20000 numbers */
	size_t cap = 20000 * 8 + 16;
	char *big = malloc(cap);
	size_t l = (size_t)snprintf(big, cap, "#[");
	for (int k = 0; k < 20000; k++)
		l += (size_t)snprintf(big + l, cap - l, "%s%d", k ? "," : "", k);
	snprintf(big + l, cap - l, "].count");
	struct arena a = {0};
	struct stmt **st;
	int n;
	struct hs_error err;
	assert_int_equal(parse_snippet(big, &a, &st, &n, &err), PARSE_OK);
	uint8_t *p = NULL;
	size_t len;
	char why[200];
	assert_int_equal(prog_encode(st, n, NULL, &p, &len, why, sizeof why), -1);
	assert_non_null(strstr(why, "1024 items"));
	arena_free(&a);
	free(big);
}

/* A hand-made program: nnodes NOT nodes over a BOOL. */
static size_t not_chain(uint8_t *p, int nodes, bool forward)
{
	size_t n = 0;
	const uint8_t head[] = {'H', 'S', 'Q', 'P', 0, 1, 0, 0, 0, 0};	/* no strings */
	memcpy(p, head, sizeof head);
	n += sizeof head;
	p[n++] = (uint8_t)(nodes >> 8);
	p[n++] = (uint8_t)nodes;
	for (int k = 0; k < nodes; k++) {
		uint8_t kind = k == 0 ? N_BOOL : N_NOT;
		unsigned a = k == 0 ? 0 : forward ? (unsigned)k + 1 : (unsigned)k;
		const uint8_t node[] = {kind, 0, 0, 0, 1, 0, 1, 0, 0, (uint8_t)(a >> 8), (uint8_t)a,
					0, 0, 0, 0};
		memcpy(p + n, node, sizeof node);
		n += sizeof node;
		if (kind == N_BOOL)
			p[n++] = 1;
		p[n++] = 0;	/* no items */
		p[n++] = 0;
	}
	/* one statement: S_EXPR at 1:1, no name, the last node, no type */
	const uint8_t stmt[] = {0, 1, S_EXPR, 0, 1, 0, 1, 0, 0, (uint8_t)(nodes >> 8), (uint8_t)nodes, 0, 0};
	memcpy(p + n, stmt, sizeof stmt);
	return n + sizeof stmt;
}

static void test_malformed(void **state)
{
	(void)state;
	static uint8_t p[1 << 16];
	struct budget *b = calloc(1, sizeof *b);
	b->left = 8 << 20;
	struct prog pr;
	char why[200];
	size_t n = not_chain(p, 100, false);
	assert_int_equal(prog_decode(p, n, balloc, b, &pr, why, sizeof why), 0);
	n = not_chain(p, 100, true);
	assert_int_equal(prog_decode(p, n, balloc, b, &pr, why, sizeof why), -1);
	assert_non_null(strstr(why, "does not come before it"));
	n = not_chain(p, PROG_MAX_DEPTH + 50, false);
	assert_int_equal(prog_decode(p, n, balloc, b, &pr, why, sizeof why), -1);
	assert_non_null(strstr(why, "deep"));
	n = not_chain(p, 10, false);
	p[n] = 0;
	assert_int_equal(prog_decode(p, n + 1, balloc, b, &pr, why, sizeof why), -1);
	assert_non_null(strstr(why, "follow the last statement"));
	n = not_chain(p, 10, false);
	p[12] = 99;	/* the first node's kind */
	assert_int_equal(prog_decode(p, n, balloc, b, &pr, why, sizeof why), -1);
	/* a tiny memory budget: refused, not crashed */
	bfree(b);
	b->left = 64;
	n = not_chain(p, 100, false);
	assert_int_equal(prog_decode(p, n, balloc, b, &pr, why, sizeof why), -1);
	assert_non_null(strstr(why, "memory"));
	bfree(b);
	free(b);
}

static int tree_ok(const struct node *n, int depth)
{
	if (!n)
		return 1;
	if (depth > PROG_MAX_DEPTH + 1 || n->kind > N_ASSIGN)
		return 0;
	if ((n->kind == N_BIN || n->kind == N_IN) && (!n->a || !n->b))
		return 0;
	if ((n->kind == N_MEMBER || n->kind == N_CALL || n->kind == N_IS) && (!n->name || !n->a))
		return 0;
	int ok = tree_ok(n->a, depth + 1) && tree_ok(n->b, depth + 1) &&
		 tree_ok(n->result, depth + 1);
	for (int k = 0; ok && k < n->nitems; k++)
		ok = n->items[k] && tree_ok(n->items[k], depth + 1);
	return ok;
}

static void test_fuzz(void **state)
{
	(void)state;
	struct arena a = {0};
	size_t lens[sizeof programs / sizeof *programs];
	uint8_t *base[sizeof programs / sizeof *programs];
	for (size_t k = 0; k < sizeof programs / sizeof *programs; k++)
		base[k] = encode_text(programs[k], &lens[k], &a);
	struct budget *b = calloc(1, sizeof *b);
	static uint8_t m[PROG_MAX_BYTES + 64];
	int accepted = 0;
	for (int round = 0; round < 30000; round++) {
		size_t k = rnd((uint32_t)(sizeof programs / sizeof *programs)), n = lens[k];
		memcpy(m, base[k], n);
		int edits = 1 + (int)(rnd((uint32_t)(4)));
		for (int e = 0; e < edits && n; e++) {
			size_t at = rnd((uint32_t)(n));
			switch (rnd((uint32_t)(4))) {
			case 0: m[at] ^= (uint8_t)(1u << (rnd((uint32_t)(8)))); break;
			case 1: m[at] = (uint8_t)rnd(256); break;
			case 2: if (n < sizeof m - 1) {
					memmove(m + at + 1, m + at, n - at);
					m[at] = (uint8_t)rnd(256);
					n++;
				}
				break;
			default: n = at; break;
			}
		}
		b->left = (size_t)1 << (10 + rnd((uint32_t)(12)));
		struct prog pr;
		char why[200];
		if (prog_decode(m, n, balloc, b, &pr, why, sizeof why) == 0) {
			accepted++;
			for (int s = 0; s < pr.nstmts; s++) {
				assert_non_null(pr.stmts[s]);
				assert_true(tree_ok(pr.stmts[s]->e, 0));
				for (int j = 0; j < pr.stmts[s]->nprops; j++)
					assert_true(tree_ok(pr.stmts[s]->props[j].value, 0));
			}
		} else {
			assert_non_null(strstr(why, "malformed program"));
		}
		bfree(b);
	}
	print_message("fuzz: %d of 30000 mutated programs accepted\n", accepted);
	for (size_t k = 0; k < sizeof programs / sizeof *programs; k++)
		free(base[k]);
	free(b);
	arena_free(&a);
}

static const struct node *membership_of(const char *text, struct arena *a)
{
	struct stmt **st;
	int n;
	struct hs_error err;
	assert_int_equal(parse_snippet(text, a, &st, &n, &err), PARSE_OK);
	for (int k = 0; k < st[0]->nprops; k++)
		if (st[0]->props[k].kind == P_MEMBERSHIP)
			return st[0]->props[k].value;
	return NULL;
}

static void test_partial_evaluation(void **state)
{
	(void)state;
	struct arena a = {0};
	const struct pe_ctx grow = {PE_REF_MEMBER, PE_RK_NOT_ROOT};
	const struct pe_ctx root = {PE_REF_NULL, RK_ROOT}, none = {PE_REF_NULL, RK_NONE};
	/* listing 3: grows, takes nothing without a referrer */
	const struct node *m = membership_of(programs[4], &a);
	assert_int_equal(pe_membership(m, &grow), TRI_TRUE);
	assert_int_equal(pe_membership(m, &root), TRI_FALSE);
	assert_int_equal(pe_membership(m, &none), TRI_FALSE);
	/* listing 5: grows; GC roots maybe (by their class's loader); other objects never */
	m = membership_of(programs[5], &a);
	assert_int_equal(pe_membership(m, &grow), TRI_TRUE);
	assert_int_equal(pe_membership(m, &root), TRI_UNKNOWN);
	assert_int_equal(pe_membership(m, &none), TRI_FALSE);
	/* listing 4's second case: an entry taken on its own */
	m = membership_of("set_type s:\n\tmembership <- (REFERRER in ENTITY and THIS in Unassigned) or "
			  "(THIS is Node and THIS.value in ENTITY)\ninstances_for s have_names = 1", &a);
	assert_int_equal(pe_membership(m, &grow), TRI_TRUE);
	assert_int_equal(pe_membership(m, &none), TRI_UNKNOWN);
	/* a condition on the edge stays unknown while growing; false is false */
	m = membership_of("set_type s:\n\tmembership <- REFERRER in ENTITY and ref_kind = array\n"
			  "instances_for s have_names = 1", &a);
	assert_int_equal(pe_membership(m, &grow), TRI_UNKNOWN);
	assert_int_equal(pe_membership(m, &root), TRI_FALSE);
	m = membership_of("set_type s:\n\tmembership <- false\ninstances_for s have_names = 1", &a);
	assert_int_equal(pe_membership(m, &grow), TRI_FALSE);
	/* an unknown left side keeps `and` unknown (it could fail) */
	m = membership_of("set_type s:\n\tmembership <- THIS.x = 1 and false\n"
			  "instances_for s have_names = 1", &a);
	assert_int_equal(pe_membership(m, &grow), TRI_UNKNOWN);
	arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_partial_evaluation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
