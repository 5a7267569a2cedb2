/*
 * test_heapif.c - the heap-access interface (src/dsl/heapif.h): the
 * evaluator gives the same answers when every operation of the dump
 * backend goes through its table (as another backend's do) as when the
 * hot ones are called inline, for every query of tests/data/builtins.txt
 * and a few that print heap values; and an operation that fails with
 * "cannot answer here" ends the query with that error kind
 * (dsl_cannot_here), while a backend's own error stays a plain one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/heapsh.h"
#include "../../src/dsl/arena.h"
#include "../../src/dsl/heapif_dump.h"
#include "../../src/session/session.h"
#include "../fuzz/tiny_heap.h"
#include "../fuzz/walker.h"

static char dir[64], path[128];

static const char *tiny_path(void)
{
	strcpy(dir, "/tmp/heapsh-test-heapif-XXXXXX");
	assert_true(tiny_heap_file(dir, path));
	return path;
}

static struct dom_tree *dom_cb(void *ctx)
{
	return hs_dom(ctx, false);
}

static struct dyn *dyn_cb(void *ctx, bool estimates)
{
	return hs_dyn(ctx, estimates);
}

/* render: v as text, lists and structs element by element, into buf. */
static void render(struct dsl *d, struct value v, struct arena *a, char *buf, size_t cap)
{
	size_t len = strlen(buf);
	if (len + 200 > cap)
		return;
	if (v.k == V_LIST) {
		snprintf(buf + len, cap - len, "[");
		for (uint32_t k = 0; k < v.u.l->n; k++) {
			struct value x = v.u.l->kind == L_VALUES ? v.u.l->v[k]
				: (struct value){V_OBJ, {.idx = v.u.l->kind == L_OBJS ? v.u.l->objs[k] : k}};
			render(d, x, a, buf, cap);
			len = strlen(buf);
			snprintf(buf + len, cap - len, ",");
		}
		len = strlen(buf);
		snprintf(buf + len, cap - len, "]");
	} else if (v.k == V_STRUCT) {
		snprintf(buf + len, cap - len, "{");
		for (int k = 0; k < v.u.st->n; k++) {
			len = strlen(buf);
			snprintf(buf + len, cap - len, "%s:", v.u.st->names[k]);
			render(d, v.u.st->vals[k], a, buf, cap);
		}
		len = strlen(buf);
		snprintf(buf + len, cap - len, "}");
	} else {
		snprintf(buf + len, cap - len, "%s", dsl_value_text(d, v, a));
	}
}

/* run: text in session d, its values rendered into buf ("error: MSG" when it fails). */
static void run(struct dsl *d, const char *text, char *buf, size_t cap)
{
	struct dsl_output out;
	struct hs_error err;
	struct arena a = {0};
	buf[0] = 0;
	if (dsl_run(d, text, &out, &err) != PARSE_OK) {
		snprintf(buf, cap, "error: %s", err.msg);
		dsl_output_done(d, &out);
		return;
	}
	for (int k = 0; k < out.n; k++)
		render(d, out.vals[k], &a, buf, cap);
	dsl_output_done(d, &out);
	arena_free(&a);
}

static const char *const extra[] = {
	"objects.map([o | o.class.name + \" \" + o.size + \" \" + o.id + \" \" + o.kind])",
	"objects.filter([o | o is java.lang.String]).map([o | o.text])",
	"objects.filter([o | o.kind = \"object array\"]).map([o | o.elements])",
	"objects.group_by([o | o.class.name]).map([g | g.key + g.count])",
	"objects.map([o | o.refs.length + \" \" + o.referrers.length + \" \" + o.retained])",
	"classes.map([c | c.name + c.count + c.shallow + c.instance_size + c.super + c.object])",
	"classloaders.map([l | l.name + l.id + l.classes.length])",
	"threads.map([t | t.name + t.id + t.frames + t.roots])",
	"objects.sum([o | o.size])",
	"objects.first([o | o is java.lang.String]).nosuchfield",
	"set_type all:\n\troots <- threads\n\tmembership <- THIS in Unassigned and REFERRER in ENTITY\n"
	"\ton_inclusion <- [ n <- n + THIS.size ]\n\tn : int <- 0\ninstances_for all have_names = \"a\"",
};

/* open_tiny: a session on the tiny heap, without an index file. */
static struct hs_session *open_tiny(void)
{
	struct hs_session *s = hs_session_new();
	struct hs_options opt = hs_get_options(s);
	opt.no_index = true;
	hs_set_options(s, &opt);
	assert_int_equal(hs_open(s, tiny_path()), HS_OK);
	return s;
}

/* each_query: fn(text) for every query of tests/data/builtins.txt that runs on a dump, and extra[]. */
static int each_query(void (*fn)(void *ctx, const char *text), void *ctx)
{
	int n = 0;
	for (size_t k = 0; k < sizeof extra / sizeof *extra; k++, n++)
		fn(ctx, extra[k]);
	FILE *f = fopen("tests/data/builtins.txt", "r");
	assert_non_null(f);
	char line[2048];
	while (fgets(line, sizeof line, f)) {
		char recv[32], names[128], where[32];
		int off = 0;
		if (line[0] == '#' || line[0] == '\n' ||
		    sscanf(line, "%31s %127s %31s %n", recv, names, where, &off) != 3 ||
		    !strcmp(where, "heapsh"))
			continue;
		line[strcspn(line, "\n")] = 0;
		char *text = line + off, *o = text;
		for (char *p = text; *p; p++) {	/* \n and \t */
			if (p[0] == '\\' && (p[1] == 'n' || p[1] == 't'))
				*o++ = *++p == 'n' ? '\n' : '\t';
			else
				*o++ = *p;
		}
		*o = 0;
		fn(ctx, text);
		n++;
	}
	fclose(f);
	return n;
}

/* same_text: text answers the same, and something, in the two sessions d[0] and d[1]. */
static void same_text(void *ctx, const char *text)
{
	struct dsl **d = ctx;
	static char a[1 << 16], b[1 << 16];
	run(d[0], text, a, sizeof a);
	run(d[1], text, b, sizeof b);
	if (strcmp(a, b))
		fail_msg("%s:\ninline: %s\ntable:  %s", text, a, b);
	assert_true(strlen(a) > 0);
}

/* Every query answers the same through hvd_ops alone as with the inline calls. */
static void same_answers(void **state)
{
	(void)state;
	struct hs_session *s = open_tiny();
	struct dsl *inl = hs_dsl(s);
	struct dsl_engine eng = {dom_cb, dyn_cb, NULL, s};
	struct hvd table;
	hvd_init(&table, hs_heap(s), &eng, false);
	assert_null(table.view.dump);
	struct dsl *tab = dsl_new_on(&table.view, &eng);
	int n = each_query(same_text, (struct dsl *[]){inl, tab});
	assert_true(n > 50);
	dsl_free(tab);
	hs_session_free(s);
	unlink(path);
	rmdir(dir);
}

/* A backend that cannot answer referrers, as the agent's will not. */
static const uint32_t *no_refs_in(struct hv *v, uint32_t obj, uint32_t *count)
{
	(void)obj;
	*count = 0;
	hv_set_fail(v, HV_CANNOT, "referrers inside the JVM");
	return NULL;
}

static void cannot_answer_here(void **state)
{
	(void)state;
	struct hs_session *s = open_tiny();
	struct hv_ops ops = hvd_ops;
	ops.refs_in = no_refs_in;
	struct hvd jvm;
	hvd_init(&jvm, hs_heap(s), NULL, false);
	jvm.view.ops = &ops;
	struct dsl *d = dsl_new_on(&jvm.view, NULL);
	char buf[1024];
	run(d, "objects.first([o | o is java.lang.String]).referrers.length", buf, sizeof buf);
	assert_string_equal(buf, "error: cannot answer here: referrers inside the JVM (a snapshot "
			    "of the heap can)");
	assert_true(dsl_cannot_here(d));
	run(d, "objects.first([o | o is java.lang.String]).refs.length >= 0", buf, sizeof buf);
	assert_string_equal(buf, "true");
	assert_false(dsl_cannot_here(d));
	/* a backend's own error (no dominator tree here) is a plain runtime error */
	run(d, "objects.first([o | o is java.lang.String]).retained", buf, sizeof buf);
	assert_string_equal(buf, "error: retained sizes are not available (the dominator tree could "
			    "not be computed)");
	assert_false(dsl_cannot_here(d));
	dsl_free(d);
	hs_session_free(s);
	unlink(path);
	rmdir(dir);
}

struct pair {
	struct dsl *a;		/* the session on the numbered heap */
	const struct heap *h;
	struct dsl_engine *eng;
	int cannot;		/* queries the walked heap could not answer here */
	uint64_t transients, keeps;
};

static const char *const walk_queries[] = {
	"objects.length",
	"objects.count([o | o.size > 16])",
	"objects.filter([o | o.size > 16]).map([o | o.class.name])",
	"objects.first([o | o.size > 16]).class.name",
	"objects.first().id",
	"objects.exists([o | o.kind = \"object array\"])",
	"objects.sum([o | o.size]) + \" \" + objects.max([o | o.size]) + \" \" + objects.min([o | o.id])",
	"objects.top(3, [o | o.size]).map([o | o.id])",
	"objects.sort_by([o | o.id]).map([o | o.class.name])",
	"objects.group_by([o | o.class]).map([g | g.key.name + \" \" + g.count + \" \" + "
	"g.items.map([i | i.id])])",
	"objects.map([o | {o: o, n: o.refs.length}]).map([s | s.o.id + s.n])",
	"objects.map([o | [x | o]]).map([f | f(0).id])",
	"objects.filter([o | o.kind = \"object array\"]).map([a | a.elements.map([x | x.id])])",
	"objects.contains(objects.first([o | o is java.lang.String]))",
	"\"a\" in objects",
	"let big = objects.filter([o | o.size > 40])\nbig.map([o | o.id])",
	"objects.foreach([o | o.size])",
	"objects.group_by([o | o]).length",
	/* set types: step 3 over every object, GC roots, growth, a property holding THIS */
	"set_type strs:\n\tmembership <- THIS is java.lang.String and REFERRER = null\n"
	"\ton_inclusion <- [ n <- n + 1  b <- b + THIS.size ]\n\tn : int <- 0\n\tb : int <- 0\n"
	"instances_for strs have_names = #[\"a\", \"b\"]",
	"set_type r:\n\tmembership <- ref_kind = root and REFERRER = null\n"
	"\ton_inclusion <- [ n <- n + 1 ]\n\tn : int <- 0\ninstances_for r have_names = \"r\"",
	"set_type last:\n\troots <- threads\n\tmembership <- THIS in Unassigned and REFERRER in ENTITY\n"
	"\ton_inclusion <- [ l <- THIS.id  o <- THIS ]\n\tl : int <- 0\n\to : Object <- null\n"
	"instances_for last have_names = \"x\"",
	"set_type rootsonly:\n\troots <- objects.filter([o | o.kind = \"object array\"])\n"
	"\tmembership <- false\n\ton_inclusion <- [ o <- THIS ]\n\to : Object <- null\n"
	"instances_for rootsonly have_names = \"r\"",
	"set_type g:\n\troots <- objects.filter([o | o.kind = \"object array\"])\n"
	"\tmembership <- THIS in Unassigned and REFERRER in ENTITY\n"
	"\ton_inclusion <- [ n <- n + 1 ]\n\tn : int <- 0\ninstances_for g have_names = #[\"a\", \"b\"]",
	/* growth whose on_inclusion reads fields and text (the agent's walk then reports them) */
	"set_type fo:\n\troots <- objects.filter([o | o.kind = \"object array\"])\n"
	"\tmembership <- THIS in Unassigned and REFERRER in ENTITY and "
	"(THIS is shop.Order or THIS is java.lang.String)\n"
	"\ton_inclusion <- [ s <- s + #[THIS].filter([x | x is shop.Order]).map([x | x.status]).sum  "
	"n <- n + 1  t <- t + #[THIS].filter([x | x is java.lang.String]).map([x | x.text.length]).sum ]\n"
	"\ts : int <- 0\n\tn : int <- 0\n\tt : int <- 0\ninstances_for fo have_names = \"o\"",
	/* roots streamed (one instance, a membership that takes nothing), properties made in a step */
	"set_type st:\n\troots <- objects.filter([o | o is java.lang.String])\n\tmembership <- false\n"
	"\ton_inclusion <- [ n <- n + 1  t <- t + THIS.text + \",\"  b <- b + THIS.size ]\n"
	"\tn : int <- 0\n\tt : string <- \"\"\n\tb : int <- 0\ninstances_for st have_names = \"s\"",
	/* an error in a walk's step: the same message, the walk stopped */
	"set_type e:\n\troots <- threads\n\tmembership <- REFERRER in ENTITY and THIS.size / 0 = 1\n"
	"instances_for e have_names = \"e\"",
	"set_type f:\n\troots <- threads\n\tmembership <- THIS in Unassigned and REFERRER in ENTITY\n"
	"\ton_inclusion <- [ n <- n + 1  m <- 1 / (n - 3) ]\n\tn : int <- 0\n\tm : int <- 0\n"
	"instances_for f have_names = \"f\"",
	"objects.filter([o | o.size / (o.size - o.size) > 1])",
};

/* compare: text on the numbered heap, and on a new walked one (as each request of the agent's). */
static void compare(void *ctx, const char *text)
{
	struct pair *p = ctx;
	static char a[1 << 16], b[1 << 16];
	struct walker w;
	walker_init(&w, p->h, p->eng);
	struct dsl *d = dsl_new_on(&w.view, p->eng);
	run(p->a, text, a, sizeof a);
	run(d, text, b, sizeof b);
	p->transients += w.transients;
	p->keeps += w.keeps;
	if (dsl_cannot_here(d)) {	/* only what a walk's order changes */
		p->cannot++;
		if (!strstr(b, "depends on the order objects join") &&
		    !strstr(b, "reads ENTITY's properties"))
			fail_msg("%s: %s", text, b);
	} else if (strcmp(a, b)) {
		fail_msg("%s:\nnumbered: %s\nwalked:   %s", text, a, b);
	}
	if (getenv("HEAPIF_SHOW"))
		fprintf(stderr, "%s\n=> %s\n", text, a);
	dsl_free(d);
	walker_free(&w);
}

/* Every query answers the same on a backend whose objects are not numbered, walked by callback. */
static void walked_objects(void **state)
{
	(void)state;
	struct hs_session *s = open_tiny();
	struct dsl_engine eng = {dom_cb, dyn_cb, NULL, s};
	struct pair p = {hs_dsl(s), hs_heap(s), &eng, 0, 0, 0};
	int n = each_query(compare, &p);
	for (size_t k = 0; k < sizeof walk_queries / sizeof *walk_queries; k++)
		compare(&p, walk_queries[k]);
	assert_true(n > 50);
	assert_true(p.cannot <= 3);	/* the order-dependent set types */
	assert_true(p.transients > 300);
	assert_true(p.keeps > 100);
	/* every object as a result is what a walk cannot give */
	struct walker w;
	walker_init(&w, hs_heap(s), &eng);
	struct dsl *d = dsl_new_on(&w.view, &eng);
	char buf[256];
	run(d, "objects", buf, sizeof buf);
	assert_true(dsl_cannot_here(d));
	assert_non_null(strstr(buf, "the list of every object as a result"));
	/* on_inclusion reading the reference an object joined by: a walk has forgotten it */
	run(d, "set_type re:\n\troots <- threads\n\tmembership <- THIS in Unassigned and "
	    "REFERRER in ENTITY\n\ton_inclusion <- [ f <- f or ref_kind = array ]\n\tf : bool <- false\n"
	    "instances_for re have_names = \"r\"", buf, sizeof buf);
	assert_true(dsl_cannot_here(d));
	assert_non_null(strstr(buf, "on_inclusion reads REFERRER or ref_kind"));
	run(p.a, "set_type re:\n\troots <- threads\n\tmembership <- THIS in Unassigned and "
	    "REFERRER in ENTITY\n\ton_inclusion <- [ f <- f or ref_kind = array ]\n\tf : bool <- false\n"
	    "instances_for re have_names = \"r\"", buf, sizeof buf);
	assert_null(strstr(buf, "error"));	/* the numbered heap answers it */
	dsl_free(d);
	walker_free(&w);
	hs_session_free(s);
	unlink(path);
	rmdir(dir);
}

/* Roots streamed (one instance that takes nothing but its roots) as when they are listed. */
static void streamed_roots(void **state)
{
	(void)state;
	struct hs_session *s = open_tiny();
	struct dsl *d = hs_dsl(s);
	static const char stream[] =
		"set_type st:\n\troots <- objects.filter([o | o is java.lang.String])\n"
		"\tmembership <- false\n\ton_inclusion <- [ n <- n + 1  t <- t + THIS.text + \",\" ]\n"
		"\tn : int <- 0\n\tt : string <- \"\"\ninstances_for st have_names = \"s\"";
	/* the same, but its on_inclusion asks an owner: listed, not streamed */
	static const char listed[] =
		"set_type li:\n\troots <- objects.filter([o | o is java.lang.String])\n"
		"\tmembership <- false\n\ton_inclusion <- [ n <- n + 1  t <- t + THIS.text + \",\"  "
		"z <- z or THIS in Unassigned ]\n"
		"\tn : int <- 0\n\tt : string <- \"\"\n\tz : bool <- false\n"
		"instances_for li have_names = \"s\"";
	char a[4096], b[4096];
	run(d, stream, a, sizeof a);
	run(d, listed, b, sizeof b);
	char *z = strstr(b, "z:false");
	assert_non_null(z);
	memmove(z, z + 7, strlen(z + 7) + 1);
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "n:3"));
	hs_session_free(s);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_answers),
		cmocka_unit_test(cannot_answer_here),
		cmocka_unit_test(walked_objects),
		cmocka_unit_test(streamed_roots),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
