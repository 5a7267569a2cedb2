/*
 * test_alloc.c - the views of an allocation recording (src/alloc): exact
 * rows of every view on a small recording made by hand (a web handler
 * calling a repository from two lines, keys in three accounts, one with no
 * Java frame), folded stacks to the byte, the flame graph as XML, names and
 * frames as text; then properties on thousands of random recordings against
 * brute force (sums, grouping by name, orders), and a million keys and a
 * 100,000-frame chain for the time and the stack.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/alloc/alloc.h"
#include "../../src/base/mem.h"

#define XORSHIFT_SEED 0xD1B54A32D192ED03ULL
#include "xorshift.h"

/* ---- making recordings ---- */

static struct alc_rec *rec_new(void)
{
	return xcalloc(1, sizeof(struct alc_rec));
}

static uint32_t account(struct alc_rec *r, const char *name)
{
	r->accounts = xreallocarray(r->accounts, r->naccounts + 1, sizeof *r->accounts);
	r->accounts[r->naccounts] = xstrdup(name);
	return r->naccounts++;
}

static uint32_t klass(struct alc_rec *r, const char *name)
{
	r->classes = xreallocarray(r->classes, r->nclasses + 1, sizeof *r->classes);
	r->classes[r->nclasses] = xstrdup(name);
	return r->nclasses++;
}

static uint32_t method(struct alc_rec *r, const char *cls, const char *name, const char *sig,
	const char *file)
{
	r->methods = xreallocarray(r->methods, r->nmethods + 1, sizeof *r->methods);
	r->methods[r->nmethods] = (struct alc_method){xstrdup(cls), xstrdup(name), xstrdup(sig),
		file ? xstrdup(file) : NULL, 0};
	return r->nmethods++;
}

static uint32_t node(struct alc_rec *r, uint32_t parent, uint32_t m, int32_t line)
{
	r->nodes = xreallocarray(r->nodes, r->nnodes + 1, sizeof *r->nodes);
	r->nodes[r->nnodes] = (struct alc_node){parent, m, line};
	return r->nnodes++;
}

/* key: objs, bytes, live objs, live bytes, elements, objs and bytes at the mark. */
static void key(struct alc_rec *r, uint32_t n, uint32_t cls, uint32_t acct, double objs,
	double bytes, double lobjs, double lbytes, double elems, double mobjs, double mbytes)
{
	r->keys = xreallocarray(r->keys, r->nkeys + 1, sizeof *r->keys);
	r->keys[r->nkeys++] = (struct alc_key){n, cls, acct, objs, bytes, lobjs, lbytes, elems,
		mobjs, mbytes};
}

/*
 * The shop: Server.handle at lines 10 and 30 (roots) calls Repo.load at
 * line 20 (from both) and 25 (from line 10). Allocated 25 objects, 4,632
 * bytes.
 */
enum { H10, H30, L20A, L20B, L25 };
enum { STR, BYTES, ORDER };
enum { NONE_ACCT, DB, WEB };
#define SHOP_BYTES 4632.0

static struct alc_rec *shop(void)
{
	struct alc_rec *r = rec_new();
	account(r, "(none)");
	account(r, "db");
	account(r, "web");
	klass(r, "java.lang.String");
	klass(r, "byte[]");
	klass(r, "com.acme.Order");
	uint32_t handle = method(r, "com.acme.web.Server", "handle", "()V", "Server.java");
	uint32_t load = method(r, "com.acme.db.Repo", "load", "(I)V", "Repo.java");
	node(r, ALC_NONE, handle, 10);
	node(r, ALC_NONE, handle, 30);
	node(r, H10, load, 20);
	node(r, H30, load, 20);
	node(r, H10, load, 25);
	key(r, L20A, STR, DB, 10, 240, 2, 48, 0, 1, 24);
	key(r, L20B, STR, DB, 5, 120, 5, 120, 0, 0, 0);
	key(r, L20A, BYTES, DB, 4, 4096, 0, 0, 4000, 3, 3072);
	key(r, H10, ORDER, WEB, 2, 64, 2, 64, 0, 0, 0);
	key(r, L25, STR, WEB, 1, 24, 0, 0, 0, 0, 0);
	key(r, ALC_NONE, STR, NONE_ACCT, 2, 64, 2, 64, 0, 0, 0);
	key(r, L20A, STR, WEB, 1, 24, 1, 24, 0, 0, 0);
	return r;
}

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-6 * (1 + fabs(b));
}

#define assert_near(a, b) assert_true(near((a), (b)))
/* Pixels, written with two decimals. */
#define assert_px(a, b) assert_true(fabs((a) - (b)) < 0.011)

static void row_is(const struct alc_row *w, const char *acct, const char *cls, double objs,
	double bytes, double lobjs, double lbytes)
{
	if (acct)
		assert_string_equal(w->account, acct);
	else
		assert_null(w->account);
	assert_string_equal(w->cls, cls);
	assert_near(w->objs, objs);
	assert_near(w->bytes, bytes);
	assert_near(w->live_objs, lobjs);
	assert_near(w->live_bytes, lbytes);
}

static void frame_is(const struct alc_rec *r, uint32_t n, const char *want)
{
	char buf[256];
	alc_frame_text(r, n, buf, sizeof buf);
	assert_string_equal(buf, want);
}

/* ---- names and frames ---- */

static void name_is(const char *sig, size_t cap, const char *want)
{
	char buf[64];
	memset(buf, 'X', sizeof buf);
	alc_java_name(sig, buf, cap);
	assert_string_equal(buf, want);
	assert_true(strlen(buf) < cap);
	for (size_t i = cap; i < sizeof buf; i++)
		assert_int_equal(buf[i], 'X');	/* nothing written past cap */
}

static void java_names(void **state)
{
	(void)state;
	name_is("Ljava/lang/String;", 64, "java.lang.String");
	name_is("[I", 64, "int[]");
	name_is("[[Ljava/lang/Object;", 64, "java.lang.Object[][]");
	name_is("I", 64, "int");
	name_is("[J", 64, "long[]");
	name_is("[[[Z", 64, "boolean[][][]");
	name_is("B", 64, "byte");
	name_is("C", 64, "char");
	name_is("D", 64, "double");
	name_is("F", 64, "float");
	name_is("S", 64, "short");
	name_is("La/B$C;", 64, "a.B$C");
	/* Malformed: as is. */
	name_is("V", 64, "V");
	name_is("[V", 64, "[V");
	name_is("Ljava/lang/String", 64, "Ljava/lang/String");
	name_is("L;", 64, "L;");
	name_is("[", 64, "[");
	name_is("", 64, "");
	name_is("II", 64, "II");
	name_is("[Ljava/lang/String;x", 64, "[Ljava/lang/String;x");
	name_is("java.lang.String", 64, "java.lang.String");
	/* Cut short, terminated within cap. */
	name_is("Ljava/lang/String;", 5, "java");
	name_is("[[I", 6, "int[]");
	name_is("[[I", 8, "int[][]");
	name_is("Ljava/lang/String;", 1, "");
	name_is("[[[[[[[[[[Ljava/lang/Object;", 10, "java.lang");
	char buf[4] = "abc";
	alc_java_name("I", buf, 0);
	assert_string_equal(buf, "abc");
	alc_java_name(NULL, buf, sizeof buf);
	assert_string_equal(buf, "");
}

static void frame_texts(void **state)
{
	(void)state;
	struct alc_rec *r = rec_new();
	uint32_t a = method(r, "com.acme.Foo", "parse", "(I)V", "Foo.java");
	uint32_t b = method(r, "java.lang.Thread", "sleep0", "(J)V", NULL);
	node(r, ALC_NONE, a, 42);
	node(r, 0, a, -1);
	node(r, 1, b, -1);
	node(r, 1, b, 7);
	node(r, 1, 99, 3);	/* method out of range */
	frame_is(r, 0, "com.acme.Foo.parse(Foo.java:42)");
	frame_is(r, 1, "com.acme.Foo.parse(Foo.java)");
	frame_is(r, 2, "java.lang.Thread.sleep0(no source)");
	frame_is(r, 3, "java.lang.Thread.sleep0(line 7)");	/* a line, no file: as JFR frames */
	frame_is(r, 4, "?.?(no source)");
	frame_is(r, ALC_NONE, "(no Java frame)");
	frame_is(r, 1000, "(no Java frame)");
	char buf[12];
	alc_frame_text(r, 0, buf, sizeof buf);
	assert_string_equal(buf, "com.acme.Fo");
	alc_free(r);
}

static void free_partial(void **state)
{
	(void)state;
	alc_free(NULL);
	alc_status_free(NULL);
	struct alc_rec *r = rec_new();
	alc_free(r);
	/* Counts set, arrays zeroed or only partly filled, as a decoder failing midway leaves them. */
	r = rec_new();
	r->st.accounts = xstrdup("com.acme.db.*,com.acme.web.*");
	r->naccounts = 3;
	r->accounts = xcalloc(3, sizeof *r->accounts);
	r->accounts[0] = xstrdup("(none)");
	r->nclasses = 5;
	r->nmethods = 4;
	r->methods = xcalloc(4, sizeof *r->methods);
	r->methods[1].name = xstrdup("run");
	r->methods[1].file = xstrdup("Run.java");
	r->nnodes = 10;
	r->nkeys = 7;
	alc_free(r);
	struct alc_status st = {.accounts = xstrdup("a")};
	alc_status_free(&st);
	assert_null(st.accounts);
	alc_status_free(&st);
}

/* ---- the tabular views ---- */

static void by_class(void **state)
{
	(void)state;
	struct alc_rec *r = shop();
	uint32_t n;
	struct alc_row *w = alc_by_class(r, false, &n);
	assert_int_equal(n, 3);
	row_is(&w[0], NULL, "byte[]", 4, 4096, 0, 0);
	assert_near(w[0].elems, 4000);
	row_is(&w[1], NULL, "java.lang.String", 19, 472, 10, 256);
	row_is(&w[2], NULL, "com.acme.Order", 2, 64, 2, 64);
	assert_int_equal(w[0].node, ALC_NONE);
	free(w);
	w = alc_by_class(r, true, &n);
	assert_int_equal(n, 3);
	row_is(&w[0], NULL, "java.lang.String", 19, 472, 10, 256);
	row_is(&w[1], NULL, "com.acme.Order", 2, 64, 2, 64);
	row_is(&w[2], NULL, "byte[]", 4, 4096, 0, 0);
	free(w);
	alc_free(r);

	r = rec_new();
	w = alc_by_class(r, false, &n);
	assert_int_equal(n, 0);
	free(w);
	alc_free(r);
}

static void by_account(void **state)
{
	(void)state;
	struct alc_rec *r = shop();
	uint32_t n;
	struct alc_row *w = alc_by_account(r, false, &n);
	assert_int_equal(n, 5);
	row_is(&w[0], "db", "byte[]", 4, 4096, 0, 0);
	row_is(&w[1], "db", "java.lang.String", 15, 360, 7, 168);
	row_is(&w[2], "(none)", "java.lang.String", 2, 64, 2, 64);	/* ties: account name */
	row_is(&w[3], "web", "com.acme.Order", 2, 64, 2, 64);
	row_is(&w[4], "web", "java.lang.String", 2, 48, 1, 24);
	free(w);
	w = alc_by_account(r, true, &n);
	assert_int_equal(n, 5);
	row_is(&w[0], "db", "java.lang.String", 15, 360, 7, 168);
	row_is(&w[1], "(none)", "java.lang.String", 2, 64, 2, 64);
	row_is(&w[2], "web", "com.acme.Order", 2, 64, 2, 64);
	row_is(&w[3], "web", "java.lang.String", 2, 48, 1, 24);
	row_is(&w[4], "db", "byte[]", 4, 4096, 0, 0);
	free(w);
	alc_free(r);
}

static void by_site(void **state)
{
	(void)state;
	struct alc_rec *r = shop();
	uint32_t n;
	struct alc_row *w = alc_by_site(r, false, &n);
	assert_int_equal(n, 5);
	row_is(&w[0], NULL, "byte[]", 4, 4096, 0, 0);
	frame_is(r, w[0].node, "com.acme.db.Repo.load(Repo.java:20)");
	/* Repo.load:20 called from Server.handle:10 and :30: one site. */
	row_is(&w[1], NULL, "java.lang.String", 16, 384, 8, 192);
	assert_int_equal(w[1].node, L20A);
	row_is(&w[2], NULL, "com.acme.Order", 2, 64, 2, 64);	/* ties: class name */
	frame_is(r, w[2].node, "com.acme.web.Server.handle(Server.java:10)");
	row_is(&w[3], NULL, "java.lang.String", 2, 64, 2, 64);
	assert_int_equal(w[3].node, ALC_NONE);
	frame_is(r, w[3].node, "(no Java frame)");
	row_is(&w[4], NULL, "java.lang.String", 1, 24, 0, 0);
	frame_is(r, w[4].node, "com.acme.db.Repo.load(Repo.java:25)");
	free(w);
	w = alc_by_site(r, true, &n);
	assert_int_equal(n, 5);
	row_is(&w[0], NULL, "java.lang.String", 16, 384, 8, 192);
	row_is(&w[1], NULL, "com.acme.Order", 2, 64, 2, 64);
	row_is(&w[2], NULL, "java.lang.String", 2, 64, 2, 64);
	row_is(&w[3], NULL, "byte[]", 4, 4096, 0, 0);
	row_is(&w[4], NULL, "java.lang.String", 1, 24, 0, 0);
	frame_is(r, w[4].node, "com.acme.db.Repo.load(Repo.java:25)");
	free(w);
	alc_free(r);
}

/* Ties between sites: by frame, lines as numbers, no frame last. */
static void site_ties(void **state)
{
	(void)state;
	struct alc_rec *r = rec_new();
	account(r, "(none)");
	klass(r, "X");
	uint32_t bx = method(r, "b.Foo", "x", "()V", "Foo.java");
	uint32_t ay = method(r, "a.Foo", "y", "()V", "Foo.java");
	uint32_t ay2 = method(r, "a.Foo", "y", "()V", "Foo.java");	/* the same method again */
	node(r, ALC_NONE, bx, 7);
	node(r, ALC_NONE, ay, 10);
	node(r, ALC_NONE, ay, 9);
	node(r, 0, ay2, 9);
	key(r, ALC_NONE, 0, 0, 1, 16, 0, 0, 0, 0, 0);
	key(r, 0, 0, 0, 1, 16, 0, 0, 0, 0, 0);
	key(r, 1, 0, 0, 1, 16, 0, 0, 0, 0, 0);
	key(r, 2, 0, 0, 1, 8, 0, 0, 0, 0, 0);
	key(r, 3, 0, 0, 1, 8, 0, 0, 0, 0, 0);
	uint32_t n;
	struct alc_row *w = alc_by_site(r, false, &n);
	assert_int_equal(n, 4);
	frame_is(r, w[0].node, "a.Foo.y(Foo.java:9)");
	assert_near(w[0].bytes, 16);
	frame_is(r, w[1].node, "a.Foo.y(Foo.java:10)");
	frame_is(r, w[2].node, "b.Foo.x(Foo.java:7)");
	frame_is(r, w[3].node, "(no Java frame)");
	free(w);
	alc_free(r);
}

static void diff(void **state)
{
	(void)state;
	struct alc_rec *r = shop();
	uint32_t n;
	struct alc_row *w = alc_diff(r, &n);
	/* (web, Repo.load:25, String) had nothing live now or at the mark. */
	assert_int_equal(n, 5);
	row_is(&w[0], "db", "java.lang.String", 15, 360, 7, 168);
	assert_near(w[0].mark_objs, 1);
	assert_near(w[0].mark_bytes, 24);
	frame_is(r, w[0].node, "com.acme.db.Repo.load(Repo.java:20)");
	row_is(&w[1], "(none)", "java.lang.String", 2, 64, 2, 64);
	assert_int_equal(w[1].node, ALC_NONE);
	row_is(&w[2], "web", "com.acme.Order", 2, 64, 2, 64);
	row_is(&w[3], "web", "java.lang.String", 1, 24, 1, 24);
	frame_is(r, w[3].node, "com.acme.db.Repo.load(Repo.java:20)");
	row_is(&w[4], "db", "byte[]", 4, 4096, 0, 0);
	assert_near(w[4].mark_bytes, 3072);
	assert_near(w[4].mark_objs, 3);
	free(w);
	alc_free(r);
}

/* ---- the tree ---- */

static void tree_row_is(const struct alc_tree_row *t, int depth, uint32_t n, const char *cls,
	double sobjs, double sbytes, double tobjs, double tbytes, double lobjs, double lbytes)
{
	assert_int_equal(t->depth, depth);
	assert_int_equal(t->node, n);
	if (cls)
		assert_string_equal(t->cls, cls);
	else
		assert_null(t->cls);
	assert_near(t->self_objs, sobjs);
	assert_near(t->self_bytes, sbytes);
	assert_near(t->total_objs, tobjs);
	assert_near(t->total_bytes, tbytes);
	assert_near(t->live_objs, lobjs);
	assert_near(t->live_bytes, lbytes);
}

static void tree(void **state)
{
	(void)state;
	struct alc_rec *r = shop();
	uint32_t n;
	struct alc_tree_row *t = alc_tree(r, 0, &n);
	assert_int_equal(n, 12);
	tree_row_is(&t[0], 0, H10, NULL, 2, 64, 18, 4448, 5, 136);
	tree_row_is(&t[1], 1, ALC_NONE, "com.acme.Order", 2, 64, 2, 64, 2, 64);
	tree_row_is(&t[2], 1, L20A, NULL, 15, 4360, 15, 4360, 3, 72);
	tree_row_is(&t[3], 2, ALC_NONE, "byte[]", 4, 4096, 4, 4096, 0, 0);
	assert_near(t[3].elems, 4000);
	/* Two keys (accounts db and web) merged. */
	tree_row_is(&t[4], 2, ALC_NONE, "java.lang.String", 11, 264, 11, 264, 3, 72);
	tree_row_is(&t[5], 1, L25, NULL, 1, 24, 1, 24, 0, 0);
	tree_row_is(&t[6], 2, ALC_NONE, "java.lang.String", 1, 24, 1, 24, 0, 0);
	tree_row_is(&t[7], 0, H30, NULL, 0, 0, 5, 120, 5, 120);
	tree_row_is(&t[8], 1, L20B, NULL, 5, 120, 5, 120, 5, 120);
	tree_row_is(&t[9], 2, ALC_NONE, "java.lang.String", 5, 120, 5, 120, 5, 120);
	tree_row_is(&t[10], 0, ALC_NONE, NULL, 2, 64, 2, 64, 2, 64);	/* no Java frame */
	tree_row_is(&t[11], 1, ALC_NONE, "java.lang.String", 2, 64, 2, 64, 2, 64);
	free(t);

	/* 2% of 4,632 is 92.64: Repo.load:25 (24) and no frame (64) go. */
	t = alc_tree(r, 2, &n);
	assert_int_equal(n, 8);
	tree_row_is(&t[0], 0, H10, NULL, 2, 64, 18, 4448, 5, 136);
	tree_row_is(&t[2], 1, L20A, NULL, 15, 4360, 15, 4360, 3, 72);
	tree_row_is(&t[4], 2, ALC_NONE, "java.lang.String", 11, 264, 11, 264, 3, 72);
	tree_row_is(&t[5], 0, H30, NULL, 0, 0, 5, 120, 5, 120);
	tree_row_is(&t[6], 1, L20B, NULL, 5, 120, 5, 120, 5, 120);
	tree_row_is(&t[7], 2, ALC_NONE, "java.lang.String", 5, 120, 5, 120, 5, 120);
	free(t);
	t = alc_tree(r, 50, &n);
	assert_int_equal(n, 5);
	assert_int_equal(t[2].node, L20A);
	free(t);
	t = alc_tree(r, 100, &n);
	assert_int_equal(n, 0);
	free(t);
	alc_free(r);
}

/* A parent cycle (a decoder's bug) leaves those nodes out, and the rest is right. */
static void tree_cycle(void **state)
{
	(void)state;
	struct alc_rec *r = rec_new();
	account(r, "(none)");
	klass(r, "X");
	uint32_t m = method(r, "a.B", "c", "()V", "B.java");
	node(r, ALC_NONE, m, 1);
	node(r, 2, m, 2);
	node(r, 1, m, 3);
	key(r, 0, 0, 0, 1, 16, 0, 0, 0, 0, 0);
	key(r, 1, 0, 0, 1, 32, 0, 0, 0, 0, 0);
	uint32_t n;
	struct alc_tree_row *t = alc_tree(r, 0, &n);
	assert_int_equal(n, 2);
	tree_row_is(&t[0], 0, 0, NULL, 1, 16, 1, 16, 0, 0);
	free(t);
	char *out;
	size_t len;
	FILE *f = open_memstream(&out, &len);
	assert_int_equal(alc_collapsed(r, f, false, false), 0);
	fclose(f);
	assert_string_equal(out, "a.B.c:1;X_[i] 16\na.B.c:3;a.B.c:2;X_[i] 32\n");
	free(out);
	alc_free(r);
}

/* ---- folded stacks ---- */

static char *collapsed(const struct alc_rec *r, bool objects, bool live)
{
	char *out;
	size_t len;
	FILE *f = open_memstream(&out, &len);
	assert_non_null(f);
	assert_int_equal(alc_collapsed(r, f, objects, live), 0);
	fclose(f);
	return out;
}

static void folded(void **state)
{
	(void)state;
	struct alc_rec *r = shop();
	char *s = collapsed(r, false, false);
	assert_string_equal(s,
		"(no Java frame);java.lang.String_[i] 64\n"
		"com.acme.web.Server.handle:10;com.acme.Order_[i] 64\n"
		"com.acme.web.Server.handle:10;com.acme.db.Repo.load:20;byte[]_[i] 4096\n"
		"com.acme.web.Server.handle:10;com.acme.db.Repo.load:20;java.lang.String_[i] 264\n"
		"com.acme.web.Server.handle:10;com.acme.db.Repo.load:25;java.lang.String_[i] 24\n"
		"com.acme.web.Server.handle:30;com.acme.db.Repo.load:20;java.lang.String_[i] 120\n");
	free(s);
	s = collapsed(r, true, false);
	assert_string_equal(s,
		"(no Java frame);java.lang.String_[i] 2\n"
		"com.acme.web.Server.handle:10;com.acme.Order_[i] 2\n"
		"com.acme.web.Server.handle:10;com.acme.db.Repo.load:20;byte[]_[i] 4\n"
		"com.acme.web.Server.handle:10;com.acme.db.Repo.load:20;java.lang.String_[i] 11\n"
		"com.acme.web.Server.handle:10;com.acme.db.Repo.load:25;java.lang.String_[i] 1\n"
		"com.acme.web.Server.handle:30;com.acme.db.Repo.load:20;java.lang.String_[i] 5\n");
	free(s);
	s = collapsed(r, false, true);
	assert_string_equal(s,
		"(no Java frame);java.lang.String_[i] 64\n"
		"com.acme.web.Server.handle:10;com.acme.Order_[i] 64\n"
		"com.acme.web.Server.handle:10;com.acme.db.Repo.load:20;java.lang.String_[i] 72\n"
		"com.acme.web.Server.handle:30;com.acme.db.Repo.load:20;java.lang.String_[i] 120\n");
	free(s);
	s = collapsed(r, true, true);
	assert_non_null(strstr(s, "com.acme.web.Server.handle:30;com.acme.db.Repo.load:20;"
		"java.lang.String_[i] 5\n"));
	free(s);
	alc_free(r);
	r = rec_new();
	s = collapsed(r, false, false);
	assert_string_equal(s, "");
	free(s);
	alc_free(r);
}

/*
 * Names with ';' and line breaks, overloads on one line (one frame),
 * strcmp order where it differs from the names' ("f$1;" before "f;", a
 * frame's "p.A.f;" before its class "p.A_[i] "), sampled values rounded.
 */
static void folded_names(void **state)
{
	(void)state;
	struct alc_rec *r = rec_new();
	account(r, "(none)");
	uint32_t semi = klass(r, "a;b\nc");
	uint32_t pa = klass(r, "p.A");
	uint32_t f = method(r, "p.A", "f", "()V", "A.java");
	uint32_t f1 = method(r, "p.A", "f$1", "()V", "A.java");
	uint32_t g1 = method(r, "p.A", "g", "(I)V", NULL);
	uint32_t g2 = method(r, "p.A", "g", "(J)V", NULL);
	uint32_t odd = method(r, "q.B", "we;ird\nname", "()V", NULL);
	uint32_t root = node(r, ALC_NONE, odd, -1);
	uint32_t nf = node(r, root, f, -1);
	uint32_t nf1 = node(r, root, f1, -1);
	uint32_t ng1 = node(r, nf, g1, 5);
	uint32_t ng2 = node(r, nf, g2, 5);
	key(r, root, pa, 0, 1, 2.5, 0, 0, 0, 0, 0);
	key(r, nf, semi, 0, 1, 10, 0, 0, 0, 0, 0);
	key(r, nf1, pa, 0, 1, 0.4, 0, 0, 0, 0, 0);	/* rounds to 0: no line */
	key(r, nf1, semi, 0, 1, 7, 0, 0, 0, 0, 0);
	key(r, ng1, pa, 0, 1, 1.25, 0, 0, 0, 0, 0);
	key(r, ng2, pa, 0, 1, 1.25, 0, 0, 0, 0, 0);
	char *s = collapsed(r, false, false);
	assert_string_equal(s,
		"q.B.we_ird_name;p.A.f$1;a_b_c_[i] 7\n"
		"q.B.we_ird_name;p.A.f;a_b_c_[i] 10\n"
		"q.B.we_ird_name;p.A.f;p.A.g:5;p.A_[i] 3\n"
		"q.B.we_ird_name;p.A_[i] 3\n");
	free(s);
	alc_free(r);
}

static void write_errors(void **state)
{
	(void)state;
	FILE *f = fopen("/dev/full", "w");
	if (!f)
		skip();
	struct alc_rec *r = shop();
	assert_int_equal(alc_collapsed(r, f, false, false), -1);
	fclose(f);
	f = fopen("/dev/full", "w");
	assert_int_equal(alc_flamegraph(r, f, "shop"), -1);
	fclose(f);
	alc_free(r);
}

/* ---- the flame graph ---- */

static bool have_python(void)
{
	return system("command -v python3 >/dev/null 2>&1") == 0;
}

/* svg: the flame graph of r, written to a file (path into path) and read back. */
static char *svg(const struct alc_rec *r, const char *title, char path[64])
{
	strcpy(path, "/tmp/test_alloc_XXXXXX.svg");
	int fd = mkstemps(path, 4);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w+");
	assert_int_equal(alc_flamegraph(r, f, title), 0);
	long len = ftell(f);
	char *s = xmalloc((size_t)len + 1);
	rewind(f);
	assert_int_equal(fread(s, 1, (size_t)len, f), (size_t)len);
	s[len] = '\0';
	fclose(f);
	return s;
}

/* parses: python3's XML parser reads the file. */
static void parses(const char *path)
{
	if (!have_python())
		return;
	char cmd[256];
	snprintf(cmd, sizeof cmd, "python3 -c 'import sys, xml.dom.minidom; "
		"xml.dom.minidom.parse(sys.argv[1])' %s", path);
	assert_int_equal(system(cmd), 0);
}

struct box {
	double x, y, w;
	int rgb[3];
};

/* box_of: the rect after the frame title starting with title, false if none. */
static bool box_of(const char *s, const char *title, struct box *b)
{
	char want[300];
	snprintf(want, sizeof want, "<title>%s \xe2\x80\x94 ", title);
	const char *p = strstr(s, want);
	if (!p)
		return false;
	p = strstr(p, "<rect ");
	assert_non_null(p);
	assert_int_equal(sscanf(p, "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\"", &b->x, &b->y, &b->w), 3);
	p = strstr(p, "fill=\"rgb(");
	assert_int_equal(sscanf(p, "fill=\"rgb(%d,%d,%d)", &b->rgb[0], &b->rgb[1], &b->rgb[2]), 3);
	return true;
}

/* bottom: the frames of the lowest row: their count, widths' sum, widest, leftmost x, rightmost end. */
static uint32_t bottom(const char *s, double *sum, double *widest, double *left, double *right)
{
	double maxy = -1;
	for (int pass = 0; pass < 2; pass++) {
		uint32_t n = 0;
		*sum = *widest = 0;
		*left = 1e9;
		*right = -1;
		for (const char *p = s; (p = strstr(p, "<g><title>")); p++) {
			double x, y, w;
			const char *q = strstr(p, "<rect ");
			assert_int_equal(sscanf(q, "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\"", &x, &y, &w), 3);
			if (pass == 0 && y > maxy)
				maxy = y;
			if (pass == 1 && y == maxy) {
				n++;
				*sum += w;
				*widest = w > *widest ? w : *widest;
				*left = x < *left ? x : *left;
				*right = x + w > *right ? x + w : *right;
			}
		}
		if (pass == 1)
			return n;
	}
	return 0;
}

static void flamegraph(void **state)
{
	(void)state;
	char path[64];
	struct alc_rec *r = shop();
	char *s = svg(r, "Shop <allocations> & \"more\"", path);
	assert_memory_equal(s, "<svg", 4);
	assert_non_null(strstr(s, "xmlns=\"http://www.w3.org/2000/svg\""));
	/* The title element first, escaped; and the same as a visible heading. */
	const char *t = strstr(s, "<title>");
	assert_non_null(t);
	assert_ptr_equal(strchr(s + 1, '<'), t);
	const char *want = "<title>Shop &lt;allocations&gt; &amp; &quot;more&quot;</title>";
	assert_int_equal(strncmp(t, want, strlen(want)), 0);
	assert_non_null(strstr(s, ">Shop &lt;allocations&gt; &amp; &quot;more&quot;</text>"));
	assert_null(strstr(s, "<script"));
	assert_null(strstr(s, "href"));
	parses(path);

	/* Bottom-up: callers below callees, classes on top, widths from bytes. */
	struct box h10, l20, cls, h30, nf;
	assert_true(box_of(s, "com.acme.web.Server.handle:10", &h10));
	assert_true(box_of(s, "com.acme.db.Repo.load:20", &l20));
	assert_true(box_of(s, "byte[]", &cls));
	assert_true(box_of(s, "com.acme.web.Server.handle:30", &h30));
	assert_true(box_of(s, "(no Java frame)", &nf));
	assert_true(h10.y > l20.y && l20.y > cls.y);
	assert_true(h10.y == h30.y && h10.y == nf.y);
	assert_px(h10.w, 1180 * 4448 / SHOP_BYTES);
	/* Siblings in name order: "(no Java frame)", "...handle:10", "...handle:30". */
	assert_px(nf.x, 10);
	assert_px(h10.x, 10 + nf.w);
	assert_px(l20.x, h10.x + 1180 * 64 / SHOP_BYTES);	/* after com.acme.Order */
	assert_px(h30.x, h10.x + h10.w);
	assert_px(cls.w, 1180 * 4096 / SHOP_BYTES);
	/* Warm frames, blue classes. */
	assert_true(h10.rgb[0] >= 205 && h10.rgb[2] <= 55);
	assert_true(cls.rgb[2] > cls.rgb[0] && cls.rgb[2] >= 215);
	/* Colours follow names: both Repo.load:20 frames alike. */
	struct box l20b;
	const char *second = strstr(strstr(s, "<title>com.acme.db.Repo.load:20 ") + 1,
		"<title>com.acme.db.Repo.load:20 ");
	assert_non_null(second);
	assert_true(box_of(second, "com.acme.db.Repo.load:20", &l20b));
	assert_memory_equal(l20.rgb, l20b.rgb, sizeof l20.rgb);
	/* Figures in the frames' titles. */
	assert_non_null(strstr(s, "<title>byte[] \xe2\x80\x94 4,096 bytes (88.43%), 4 objects</title>"));
	assert_non_null(strstr(s, "<title>com.acme.web.Server.handle:10 \xe2\x80\x94 "
		"4,448 bytes (96.03%), 18 objects</title>"));
	/* The bottom row fills the width; text fits its box. */
	double sum, widest, left, right;
	assert_int_equal(bottom(s, &sum, &widest, &left, &right), 3);
	assert_true(fabs(sum - 1180) < 0.02 && fabs(right - 1190) < 0.02);
	assert_px(left, 10);
	assert_non_null(strstr(s, ">com.acme.web.Server.handle:10</text>"));
	assert_null(strstr(s, ">com.acme.web.Server.handle:30</text>"));	/* 30 px wide */
	free(s);
	unlink(path);
	alc_free(r);
}

static void flamegraph_shapes(void **state)
{
	(void)state;
	char path[64];
	/* One root: the widest bottom frame is the whole width; long names cut. */
	struct alc_rec *r = rec_new();
	account(r, "(none)");
	char longname[220];
	memset(longname, 'n', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	uint32_t big = klass(r, "Big<T> & 'quoted' \xff\xfe bad UTF-8 \xc3\xa9");
	uint32_t m = method(r, "a.Main", longname, "()V", "Main.java");
	uint32_t tiny = method(r, "tiny.T", "m", "()V", "T.java");
	uint32_t root = node(r, ALC_NONE, m, 3);
	uint32_t tn = node(r, root, tiny, 4);
	key(r, root, big, 0, 1, 1e9, 0, 0, 0, 0, 0);
	key(r, tn, big, 0, 1, 1, 0, 0, 0, 0, 0);	/* 1e-6 px: left out */
	char *s = svg(r, "one root", path);
	parses(path);
	double sum, widest, left, right;
	assert_int_equal(bottom(s, &sum, &widest, &left, &right), 1);
	assert_px(widest, 1180);
	assert_px(left, 10);
	assert_null(strstr(s, "tiny.T"));
	const char *text = strstr(s, "<text x=\"13.00\"");
	assert_non_null(text);
	text = strchr(text, '>') + 1;
	size_t shown = strcspn(text, "<");
	assert_true(shown <= (1180 - 6) / 7 && shown > 100);
	assert_memory_equal(text + shown - 2, "..", 2);
	assert_non_null(strstr(s, "Big&lt;T&gt; &amp; &#39;quoted&#39; ?? bad UTF-8 \xc3\xa9"));
	free(s);
	unlink(path);
	alc_free(r);

	/* Nothing allocated. */
	r = rec_new();
	s = svg(r, "empty", path);
	assert_memory_equal(s, "<svg", 4);
	assert_non_null(strstr(s, "<title>empty</title>"));
	assert_non_null(strstr(s, "no allocations recorded"));
	parses(path);
	free(s);
	unlink(path);
	alc_free(r);
}

/* ---- properties on random recordings ---- */

static char *random_name(void)
{
	static const char alphabet[] = "ab.$_;[]-";
	uint32_t len = 1 + rnd(4);
	char *s = xmalloc(len + 1);
	for (uint32_t i = 0; i < len; i++)
		s[i] = alphabet[rnd(i ? sizeof alphabet - 1 : 2)];
	s[len] = '\0';
	return s;
}

static struct alc_rec *random_rec(void)
{
	struct alc_rec *r = rec_new();
	uint32_t na = 1 + rnd(4), nc = 1 + rnd(6), nm = 1 + rnd(6), nn = rnd(30), nk = rnd(60);
	for (uint32_t i = 0; i < na; i++) {
		char *s = random_name();
		account(r, i ? s : "(none)");
		free(s);
	}
	for (uint32_t i = 0; i < nc; i++) {
		char *s = random_name();
		klass(r, s);
		free(s);
	}
	for (uint32_t i = 0; i < nm; i++) {
		char *c = random_name(), *n = random_name();
		method(r, c, n, rnd(2) ? "()V" : "(I)V", rnd(3) ? "F.java" : NULL);
		free(c);
		free(n);
	}
	/* A forest whose parents may come after their children. */
	uint32_t *perm = xmallocarray(nn + 1, sizeof *perm);
	for (uint32_t i = 0; i < nn; i++)
		perm[i] = i;
	for (uint32_t i = nn; i > 1; i--) {
		uint32_t j = rnd(i), t = perm[i - 1];
		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	for (uint32_t i = 0; i < nn; i++)
		node(r, ALC_NONE, rnd(nm), (int32_t)rnd(4) - 1);
	for (uint32_t i = 1; i < nn; i++)
		if (rnd(4))
			r->nodes[perm[i]].parent = perm[rnd(i)];
	free(perm);
	for (uint32_t i = 0; i < nk; i++) {
		double objs = rnd(5), size = 8 * (1 + rnd(4));
		double bytes = objs * size + (rnd(3) ? 0 : rnd(100) / 10.0);
		double lobjs = objs ? rnd((uint32_t)objs + 1) : 0;
		key(r, nn && rnd(8) ? rnd(nn) : ALC_NONE, rnd(nc), rnd(na), objs, bytes, lobjs,
			lobjs * size, rnd(3) ? 0 : rnd(50), rnd(3), rnd(3) * 16.0);
	}
	return r;
}

static bool same_frame(const struct alc_rec *r, uint32_t a, uint32_t b)
{
	if (a == ALC_NONE || b == ALC_NONE)
		return a == b;
	const struct alc_method *x = &r->methods[r->nodes[a].method], *y = &r->methods[r->nodes[b].method];
	return r->nodes[a].line == r->nodes[b].line && !strcmp(x->cls, y->cls) &&
		!strcmp(x->name, y->name) && !strcmp(x->sig, y->sig) &&
		!strcmp(x->file ? x->file : "", y->file ? y->file : "");
}

/* brute: the sum over keys matching row w (by account, frame, class as the view groups). */
static struct alc_row brute(const struct alc_rec *r, const struct alc_row *w, bool acct, bool site)
{
	struct alc_row s = {0};
	for (uint32_t i = 0; i < r->nkeys; i++) {
		const struct alc_key *k = &r->keys[i];
		if (strcmp(r->classes[k->cls], w->cls) ||
		    (acct && strcmp(r->accounts[k->account], w->account)) ||
		    (site && !same_frame(r, k->node, w->node)))
			continue;
		s.objs += k->objs;
		s.bytes += k->bytes;
		s.live_objs += k->live_objs;
		s.live_bytes += k->live_bytes;
		s.elems += k->elems;
		s.mark_objs += k->mark_objs;
		s.mark_bytes += k->mark_bytes;
	}
	return s;
}

/* check_table: each row the brute-force sum, no group twice, the order, the sums. */
static void check_table(const struct alc_rec *r, struct alc_row *w, uint32_t n, bool acct,
	bool site, int order, const struct alc_row *all)
{
	struct alc_row sum = {0};
	for (uint32_t i = 0; i < n; i++) {
		struct alc_row b = brute(r, &w[i], acct, site);
		assert_near(w[i].objs, b.objs);
		assert_near(w[i].bytes, b.bytes);
		assert_near(w[i].live_objs, b.live_objs);
		assert_near(w[i].live_bytes, b.live_bytes);
		assert_near(w[i].mark_bytes, b.mark_bytes);
		assert_near(w[i].elems, b.elems);
		sum.objs += w[i].objs;
		sum.bytes += w[i].bytes;
		sum.live_bytes += w[i].live_bytes;
		for (uint32_t j = 0; j < i; j++)
			assert_false(!strcmp(w[i].cls, w[j].cls) &&
				(!acct || !strcmp(w[i].account, w[j].account)) &&
				(!site || same_frame(r, w[i].node, w[j].node)));
		if (i) {
			double x = order == 0 ? w[i - 1].bytes : order == 1 ? w[i - 1].live_bytes
				: w[i - 1].live_bytes - w[i - 1].mark_bytes;
			double y = order == 0 ? w[i].bytes : order == 1 ? w[i].live_bytes
				: w[i].live_bytes - w[i].mark_bytes;
			assert_true(x >= y);
			if (x == y && acct)
				assert_true(strcmp(w[i - 1].account, w[i].account) <= 0);
			if (x == y && (!acct || !strcmp(w[i - 1].account, w[i].account)))
				assert_true(strcmp(w[i - 1].cls, w[i].cls) <= 0);
		}
	}
	if (order != 2) {
		/* Rows left out are all 0: nothing is lost. */
		assert_near(sum.objs, all->objs);
		assert_near(sum.bytes, all->bytes);
		assert_near(sum.live_bytes, all->live_bytes);
	}
}

/* under: whether node v is a, or a is on v's stack. */
static bool under(const struct alc_rec *r, uint32_t v, uint32_t a)
{
	for (; v != ALC_NONE; v = r->nodes[v].parent)
		if (v == a)
			return true;
	return false;
}

static void check_tree(const struct alc_rec *r, const struct alc_row *all, double min_pct)
{
	uint32_t n;
	struct alc_tree_row *t = alc_tree(r, min_pct, &n);
	double thr = min_pct / 100 * all->bytes, roots = 0, roots_objs = 0, roots_live = 0;
	uint32_t want = 0, nodes = 0;
	/* Which nodes must show: nonzero and over the threshold (their callers are larger). */
	for (uint32_t v = 0; v <= r->nnodes; v++) {
		double b = 0, o = 0, l = 0;
		for (uint32_t i = 0; i < r->nkeys; i++) {
			const struct alc_key *k = &r->keys[i];
			if (v == r->nnodes ? k->node == ALC_NONE : under(r, k->node, v)) {
				b += k->bytes;
				o += k->objs;
				l += k->live_objs;
			}
		}
		if ((b || o || l) && b >= thr)
			want++;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct alc_tree_row *x = &t[i];
		if (x->cls)
			continue;
		nodes++;
		assert_true(x->total_bytes >= thr);
		if (x->depth == 0) {
			roots += x->total_bytes;
			roots_objs += x->total_objs;
			roots_live += x->live_bytes;
		}
		/* Brute force: self, total; the class rows right under add up to self. */
		double sb = 0, tb = 0, to = 0;
		for (uint32_t k = 0; k < r->nkeys; k++) {
			const struct alc_key *y = &r->keys[k];
			bool here = x->node == ALC_NONE ? y->node == ALC_NONE : y->node == x->node;
			sb += here ? y->bytes : 0;
			if (x->node == ALC_NONE ? here : under(r, y->node, x->node)) {
				tb += y->bytes;
				to += y->objs;
			}
		}
		assert_near(x->self_bytes, sb);
		assert_near(x->total_bytes, tb);
		assert_near(x->total_objs, to);
		if (x->node != ALC_NONE && x->depth > 0)
			assert_true(r->nodes[x->node].parent != ALC_NONE);
		double cls = 0, kids = 0;
		uint32_t j = i + 1;
		for (; j < n && t[j].cls && t[j].depth == x->depth + 1; j++)
			cls += t[j].self_bytes;
		assert_near(cls, x->self_bytes);
		/* Children after the class rows, largest first; each one of ours. */
		double last = INFINITY;
		for (; j < n && t[j].depth > x->depth; j++) {
			if (t[j].depth != x->depth + 1 || t[j].cls)
				continue;
			assert_int_equal(r->nodes[t[j].node].parent, x->node);
			assert_true(t[j].total_bytes <= last);
			last = t[j].total_bytes;
			kids += t[j].total_bytes;
		}
		if (min_pct == 0)
			assert_near(x->total_bytes, x->self_bytes + kids);
	}
	assert_int_equal(nodes, want);
	if (min_pct == 0) {
		assert_near(roots, all->bytes);
		assert_near(roots_objs, all->objs);
		assert_near(roots_live, all->live_bytes);
	}
	free(t);
}

static void check_folded(const struct alc_rec *r, const struct alc_row *all, bool objects)
{
	char *s = collapsed(r, objects, false), *save = NULL, *prev = NULL;
	double sum = 0;
	uint32_t lines = 0;
	for (char *l = strtok_r(s, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		const char *sp = strrchr(l, ' ');
		assert_non_null(sp);
		sum += atof(sp + 1);
		assert_true(atof(sp + 1) >= 1);
		assert_non_null(strstr(l, "_[i] "));
		if (prev)
			assert_true(strcmp(prev, l) < 0);
		prev = l;
		lines++;
	}
	assert_true(lines <= r->nkeys);
	assert_true(fabs(sum - (objects ? all->objs : all->bytes)) <= 0.5 * r->nkeys + 1e-6);
	free(s);

	struct alc_fold *f = alc_fold(r);
	double roots = 0;
	for (uint32_t i = 0; i < f->n; i = f->frames[i].end)
		roots += f->frames[i].bytes;
	assert_near(roots, all->bytes);
	alc_fold_free(f);
}

static void random_recordings(void **state)
{
	(void)state;
	char path[64];
	for (int round = 0; round < 3000; round++) {
		struct alc_rec *r = random_rec();
		struct alc_row all = {0};
		for (uint32_t i = 0; i < r->nkeys; i++) {
			all.objs += r->keys[i].objs;
			all.bytes += r->keys[i].bytes;
			all.live_bytes += r->keys[i].live_bytes;
		}
		uint32_t n;
		struct alc_row *w;
		for (int live = 0; live < 2; live++) {
			w = alc_by_class(r, live, &n);
			check_table(r, w, n, false, false, live, &all);
			free(w);
			w = alc_by_account(r, live, &n);
			check_table(r, w, n, true, false, live, &all);
			free(w);
			w = alc_by_site(r, live, &n);
			check_table(r, w, n, false, true, live, &all);
			free(w);
		}
		w = alc_diff(r, &n);
		check_table(r, w, n, true, true, 2, &all);
		for (uint32_t i = 0; i < n; i++)
			assert_true(w[i].live_bytes || w[i].mark_bytes || w[i].live_objs || w[i].mark_objs);
		free(w);
		check_tree(r, &all, 0);
		check_tree(r, &all, rnd(30));
		check_folded(r, &all, false);
		check_folded(r, &all, true);
		if (round % 150 == 0) {
			char *s = svg(r, "random", path);
			parses(path);
			free(s);
			unlink(path);
		}
		alc_free(r);
	}
}

/* ---- scale ---- */

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * A million keys on 50,000 nodes (every view well under the seconds a
 * quadratic one would take), then a chain 100,000 frames deep (no
 * recursion: the tree and the fold walk it without the C stack).
 */
static void scale(void **state)
{
	(void)state;
	struct alc_rec *r = rec_new();
	account(r, "(none)");
	account(r, "app");
	char name[32];
	for (int i = 0; i < 500; i++) {
		snprintf(name, sizeof name, "c%d", i);
		klass(r, name);
	}
	for (int i = 0; i < 2000; i++) {
		snprintf(name, sizeof name, "m%d", i);
		method(r, "a.B", name, "()V", "B.java");
	}
	for (uint32_t i = 0; i < 50000; i++)
		node(r, i < 100 ? ALC_NONE : rnd(i), rnd(2000), (int32_t)rnd(100));
	r->keys = xmallocarray(1000000, sizeof *r->keys);
	for (uint32_t i = 0; i < 1000000; i++)
		r->keys[i] = (struct alc_key){rnd(50000), rnd(500), rnd(2), 1, 16, 1, 16, 0, 0, 0};
	r->nkeys = 1000000;
	double t0 = seconds();
	uint32_t n;
	free(alc_by_class(r, false, &n));
	free(alc_by_account(r, false, &n));
	free(alc_by_site(r, false, &n));
	free(alc_diff(r, &n));
	struct alc_tree_row *t = alc_tree(r, 0, &n);
	double roots = 0;
	for (uint32_t i = 0; i < n; i++)
		roots += t[i].depth == 0 && !t[i].cls ? t[i].total_bytes : 0;
	assert_near(roots, 16e6);
	free(t);
	FILE *f = fopen("/dev/null", "w");
	assert_int_equal(alc_collapsed(r, f, false, false), 0);
	assert_int_equal(alc_flamegraph(r, f, "scale"), 0);
	fclose(f);
	double took = seconds() - t0;
	print_message("a million keys: every view in %.2f s\n", took);
	assert_true(took < 60);
	alc_free(r);

	r = rec_new();
	account(r, "(none)");
	klass(r, "X");
	method(r, "a.B", "deep", "()V", "B.java");
	for (uint32_t i = 0; i < 100000; i++)
		node(r, i ? i - 1 : ALC_NONE, 0, (int32_t)i);
	key(r, 99999, 0, 0, 1, 16, 0, 0, 0, 0, 0);
	key(r, 50000, 0, 0, 1, 16, 0, 0, 0, 0, 0);
	t = alc_tree(r, 0, &n);
	assert_int_equal(n, 100002);
	assert_int_equal(t[n - 1].depth, 100000);
	assert_near(t[0].total_bytes, 32);
	free(t);
	struct alc_fold *fd = alc_fold(r);
	assert_int_equal(fd->n, 100002);
	assert_int_equal(fd->max_depth, 100000);
	assert_near(fd->frames[0].bytes, 32);
	alc_fold_free(fd);
	alc_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(java_names),      cmocka_unit_test(frame_texts),
		cmocka_unit_test(free_partial),    cmocka_unit_test(by_class),
		cmocka_unit_test(by_account),      cmocka_unit_test(by_site),
		cmocka_unit_test(site_ties),       cmocka_unit_test(diff),
		cmocka_unit_test(tree),            cmocka_unit_test(tree_cycle),
		cmocka_unit_test(folded),          cmocka_unit_test(folded_names),
		cmocka_unit_test(write_errors),    cmocka_unit_test(flamegraph),
		cmocka_unit_test(flamegraph_shapes), cmocka_unit_test(random_recordings),
		cmocka_unit_test(scale),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
