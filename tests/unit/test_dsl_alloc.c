/*
 * test_dsl_alloc.c - the query language's `allocations` list
 * (src/dsl/eval_allocations.c, docs/dsl.md "Allocations"): sessions whose engine hands
 * out a hand-built allocation recording (src/alloc/alloc.h) of known
 * contents, with and without a heap. Checks the members and their types
 * (ints in exact mode, floats in sampled mode), the stacks and site texts,
 * filters and sums, one read per snippet, the errors when there is no
 * recording or no heap, that the values outlive the recording, and which
 * snippets may run without a heap (dsl_heapless).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/dsl/eval.h"
#include "hprof_writer.h"

/* ---- a recording of known contents ---- */

enum { ACC_NONE, ACC_XML, ACC_WEB, NACC };
enum { C_NODE, C_BYTES, C_STRING, NCLS };
enum { M_RUN, M_HANDLE, M_PARSE, M_GROW, NMETH };
/* nodes: run <- handle <- parse <- grow (line unknown); handle <- grow:9 */
enum { N_RUN, N_HANDLE, N_PARSE, N_GROW_XML, N_GROW_WEB, NNODES };

/*
 * The keys, as a person would describe them: 100 Nodes allocated in
 * Parser.parse (account com.acme.xml); byte[] allocated by an unaccounted
 * helper Buf.grow called from the parser (charged to com.acme.xml) and
 * from the web handler (charged to com.acme.web.*); Strings allocated with
 * no Java frame (account "(none)"), all dead. Sampled mode gives the same
 * figures plus a half, so that they are not integers.
 */
static const struct {
	uint32_t node, cls, account;
	double objs, bytes, live_objs, live_bytes, elems;
} KEYS[] = {
	{N_PARSE, C_NODE, ACC_XML, 100, 2400, 40, 960, 0},
	{N_GROW_XML, C_BYTES, ACC_XML, 10, 10240, 5, 5120, 10000},
	{N_GROW_WEB, C_BYTES, ACC_WEB, 7, 700, 7, 700, 560},
	{ALC_NONE, C_STRING, ACC_NONE, 3, 72, 0, 0, 0},
};
#define NKEYS (sizeof KEYS / sizeof *KEYS)

static char *sdup(const char *s)
{
	char *d = strdup(s);
	assert_non_null(d);
	return d;
}

/*
 * rec_new: the recording, every part in its own malloc block as the
 * decoder makes it (alc_free frees them). fill, when not 0, replaces every
 * character of every name with it (same lengths): a record whose memory,
 * once freed, would show through values that were not copied.
 */
static struct alc_rec *rec_new(bool exact, char fill)
{
	struct alc_rec *r = calloc(1, sizeof *r);
	assert_non_null(r);
	r->st.exists = r->st.recording = true;
	r->st.exact = exact;
	r->st.interval = exact ? 0 : 512 * 1024;
	r->st.depth = 64;
	r->st.accounts = sdup("com.acme.xml,com.acme.web.*");
	static const char *const accounts[NACC] = {"(none)", "com.acme.xml", "com.acme.web.*"};
	static const char *const classes[NCLS] = {"com.acme.xml.Node", "byte[]",
						  "java.lang.String"};
	static const struct { const char *cls, *name, *sig, *file; uint32_t account; } meth[NMETH] = {
		{"java.lang.Thread", "run", "()V", "Thread.java", ACC_NONE},
		{"com.acme.web.Handler", "handle", "(Ljava/lang/String;)V", "Handler.java", ACC_WEB},
		{"com.acme.xml.Parser", "parse", "()Lcom/acme/xml/Node;", "Parser.java", ACC_XML},
		{"com.acme.util.Buf", "grow", "(I)V", "Buf.java", ACC_NONE},
	};
	static const struct alc_node nodes[NNODES] = {
		{ALC_NONE, M_RUN, 840}, {N_RUN, M_HANDLE, 17}, {N_HANDLE, M_PARSE, 42},
		{N_PARSE, M_GROW, -1}, {N_HANDLE, M_GROW, 9},
	};
	r->naccounts = NACC;
	r->accounts = calloc(NACC, sizeof *r->accounts);
	r->nclasses = NCLS;
	r->classes = calloc(NCLS, sizeof *r->classes);
	r->nmethods = NMETH;
	r->methods = calloc(NMETH, sizeof *r->methods);
	r->nnodes = NNODES;
	r->nodes = calloc(NNODES, sizeof *r->nodes);
	r->nkeys = NKEYS;
	r->keys = calloc(NKEYS, sizeof *r->keys);
	assert_true(r->accounts && r->classes && r->methods && r->nodes && r->keys);
	for (int k = 0; k < NACC; k++)
		r->accounts[k] = sdup(accounts[k]);
	for (int k = 0; k < NCLS; k++)
		r->classes[k] = sdup(classes[k]);
	for (int k = 0; k < NMETH; k++) {
		r->methods[k].cls = sdup(meth[k].cls);
		r->methods[k].name = sdup(meth[k].name);
		r->methods[k].sig = sdup(meth[k].sig);
		r->methods[k].file = sdup(meth[k].file);
		r->methods[k].account = meth[k].account;
	}
	memcpy(r->nodes, nodes, sizeof nodes);
	double extra = exact ? 0 : 0.5;
	for (size_t k = 0; k < NKEYS; k++) {
		struct alc_key *y = &r->keys[k];
		y->node = KEYS[k].node;
		y->cls = KEYS[k].cls;
		y->account = KEYS[k].account;
		y->objs = KEYS[k].objs + extra;
		y->bytes = KEYS[k].bytes + extra;
		y->live_objs = KEYS[k].live_objs + extra;
		y->live_bytes = KEYS[k].live_bytes + extra;
		y->elems = KEYS[k].elems + extra;
	}
	if (fill) {
		char **all[] = {r->accounts, r->classes};
		uint32_t nall[] = {NACC, NCLS};
		for (int a = 0; a < 2; a++)
			for (uint32_t k = 0; k < nall[a]; k++)
				memset(all[a][k], fill, strlen(all[a][k]));
		for (int k = 0; k < NMETH; k++) {
			memset(r->methods[k].cls, fill, strlen(r->methods[k].cls));
			memset(r->methods[k].name, fill, strlen(r->methods[k].name));
			memset(r->methods[k].file, fill, strlen(r->methods[k].file));
		}
	}
	return r;
}

/* ---- the engine: what the shell's callback would do, counted ---- */

struct fake {
	bool exact;
	bool none;		/* no recording: NULL with a message */
	char fill;		/* rec_new's fill */
	int calls;
};

static struct alc_rec *fetch(void *ctx, struct hs_error *err)
{
	struct fake *f = ctx;
	f->calls++;
	if (f->none) {
		hs_error_set(err, -1, "JVM 4242 has no allocation recording");
		return NULL;
	}
	return rec_new(f->exact, f->fill);
}

static struct dsl *session(const struct heap *h, struct fake *f)
{
	struct dsl_engine eng = {NULL, NULL, fetch, f};
	return dsl_new(h, &eng);
}

/* run1: text must run and give one value, returned in *out (freed by the caller). */
static struct value run1(struct dsl *d, const char *text, struct dsl_output *out)
{
	struct hs_error err;
	hs_error_clear(&err);
	enum parse_status st = dsl_run(d, text, out, &err);
	if (st != PARSE_OK)
		fail_msg("%s: %d:%d: %s", text, err.line, err.col, err.msg);
	if (out->n != 1)
		fail_msg("%s: %d values", text, out->n);
	return out->vals[0];
}

static int64_t run_int(struct dsl *d, const char *text)
{
	struct dsl_output out;
	struct value v = run1(d, text, &out);
	if (v.k != V_INT)
		fail_msg("%s: a %s, not an int", text, value_kind_name(v.k));
	int64_t i = v.u.i;
	dsl_output_done(d, &out);
	return i;
}

static double run_float(struct dsl *d, const char *text)
{
	struct dsl_output out;
	struct value v = run1(d, text, &out);
	if (v.k != V_FLOAT)
		fail_msg("%s: a %s, not a float", text, value_kind_name(v.k));
	double f = v.u.f;
	dsl_output_done(d, &out);
	return f;
}

/* run_str: the value as text (strings as they are, null as "null"). */
static void run_str(struct dsl *d, const char *text, const char *want)
{
	struct dsl_output out;
	struct value v = run1(d, text, &out);
	if (v.k != V_STR && v.k != V_NULL && v.k != V_BOOL)
		fail_msg("%s: a %s, not a string", text, value_kind_name(v.k));
	const char *got = v.k == V_STR ? v.u.s : dsl_value_text(d, v, out.priv);
	if (strcmp(got, want))
		fail_msg("%s: \"%s\", want \"%s\"", text, got, want);
	dsl_output_done(d, &out);
}

/* run_err: text must fail at line:col with exactly msg. */
static void run_err(struct dsl *d, const char *text, int line, int col, const char *msg)
{
	struct dsl_output out;
	struct hs_error err;
	hs_error_clear(&err);
	enum parse_status st = dsl_run(d, text, &out, &err);
	dsl_output_done(d, &out);
	if (st != PARSE_ERROR)
		fail_msg("%s: ran, want the error \"%s\"", text, msg);
	if (strcmp(err.msg, msg))
		fail_msg("%s: error \"%s\", want \"%s\"", text, err.msg, msg);
	assert_int_equal(err.line, line);
	assert_int_equal(err.col, col);
}

/* frame: alc_frame_text of node, for comparing with what the language shows. */
static const char *frame(uint32_t node, char *buf, size_t cap)
{
	struct alc_rec *r = rec_new(true, 0);
	alc_frame_text(r, node, buf, cap);
	alc_free(r);
	return buf;
}

/* ---- tests ---- */

static void members_exact(void **state)
{
	(void)state;
	struct fake f = {.exact = true};
	struct dsl *d = session(NULL, &f);
	assert_int_equal(run_int(d, "allocations.count"), 4);
	/* the request's example: live bytes of one account (5120 by the helper, charged to xml) */
	assert_int_equal(run_int(d, "allocations.filter([a | a.account = \"com.acme.xml\"])"
				    ".sum([a | a.live_bytes])"), 960 + 5120);
	assert_int_equal(run_int(d, "allocations.sum([a | a.bytes])"), 2400 + 10240 + 700 + 72);
	assert_int_equal(run_int(d, "allocations.sum([a | a.objects])"), 120);
	assert_int_equal(run_int(d, "allocations.sum([a | a.live_objects])"), 52);
	assert_int_equal(run_int(d, "allocations.sum([a | a.elements])"), 10560);

	/* one struct per key, in key order, members in the documented order */
	struct dsl_output out;
	struct value v = run1(d, "allocations.first", &out);
	assert_int_equal(v.k, V_STRUCT);
	assert_string_equal(v.u.st->type, "allocation");
	static const char *const names[] = {"class", "site", "method", "line", "account",
					    "stack", "objects", "bytes", "live_objects",
					    "live_bytes", "elements"};
	assert_int_equal(v.u.st->n, 11);
	for (int k = 0; k < 11; k++)
		assert_string_equal(v.u.st->names[k], names[k]);
	for (int k = 6; k < 11; k++)
		assert_int_equal(v.u.st->vals[k].k, V_INT);
	assert_int_equal(v.u.st->vals[3].k, V_INT);
	assert_int_equal(v.u.st->vals[5].k, V_LIST);
	dsl_output_done(d, &out);

	run_str(d, "allocations.first.class", "com.acme.xml.Node");
	run_str(d, "allocations.first.site", "com.acme.xml.Parser.parse(Parser.java:42)");
	run_str(d, "allocations.first.method", "com.acme.xml.Parser.parse");
	assert_int_equal(run_int(d, "allocations.first.line"), 42);
	run_str(d, "allocations.first.account", "com.acme.xml");
	assert_int_equal(run_int(d, "allocations.first.objects"), 100);
	assert_int_equal(run_int(d, "allocations.first.bytes"), 2400);
	assert_int_equal(run_int(d, "allocations.first.live_objects"), 40);
	assert_int_equal(run_int(d, "allocations.first.elements"), 0);

	/* the helper's byte[] in the parser's account: line unknown, -1 */
	const char *xml_bytes = "allocations.first([a | a.class = \"byte[]\" and "
				"a.account = \"com.acme.xml\"])";
	char q[300], buf[256];
	snprintf(q, sizeof q, "%s.line", xml_bytes);
	assert_int_equal(run_int(d, q), -1);
	snprintf(q, sizeof q, "%s.method", xml_bytes);
	run_str(d, q, "com.acme.util.Buf.grow");
	snprintf(q, sizeof q, "%s.site", xml_bytes);
	run_str(d, q, frame(N_GROW_XML, buf, sizeof buf));
	snprintf(q, sizeof q, "%s.elements", xml_bytes);
	assert_int_equal(run_int(d, q), 10000);
	snprintf(q, sizeof q, "%s.live_bytes", xml_bytes);
	assert_int_equal(run_int(d, q), 5120);

	/* no Java frame: the site says so, no method, line -1, an empty stack */
	run_str(d, "allocations.first([a | a.account = \"(none)\"]).site",
		frame(ALC_NONE, buf, sizeof buf));
	run_str(d, "allocations.first([a | a.account = \"(none)\"]).method", "null");
	assert_int_equal(run_int(d, "allocations.first([a | a.account = \"(none)\"]).line"), -1);
	assert_int_equal(run_int(d, "allocations.first([a | a.account = \"(none)\"]).stack.count"),
			 0);
	assert_int_equal(run_int(d, "allocations.first([a | a.account = \"(none)\"]).live_bytes"),
			 0);

	/* grouping by account and by site */
	assert_int_equal(run_int(d, "allocations.group_by([a | a.account]).count"), 3);
	assert_int_equal(run_int(d, "allocations.group_by([a | a.site]).count"), 4);
	assert_int_equal(run_int(d, "allocations.group_by([a | a.class]).filter([g | g.key = "
				    "\"byte[]\"]).first.items.sum([a | a.bytes])"), 10940);
	dsl_free(d);
}

static void stacks(void **state)
{
	(void)state;
	struct fake f = {.exact = true};
	struct dsl *d = session(NULL, &f);
	char q[400], buf[256];
	const char *xml_bytes = "allocations.first([a | a.class = \"byte[]\" and "
				"a.account = \"com.acme.xml\"]).stack";
	/* innermost first, to the outermost frame: grow, parse, handle, run */
	static const uint32_t want[] = {N_GROW_XML, N_PARSE, N_HANDLE, N_RUN};
	snprintf(q, sizeof q, "%s.count", xml_bytes);
	assert_int_equal(run_int(d, q), 4);
	struct dsl_output out;
	snprintf(q, sizeof q, "%s", xml_bytes);
	struct value v = run1(d, q, &out);
	assert_int_equal(v.k, V_LIST);
	assert_int_equal(v.u.l->n, 4);
	for (int k = 0; k < 4; k++) {
		assert_int_equal(v.u.l->v[k].k, V_STR);
		assert_string_equal(v.u.l->v[k].u.s, frame(want[k], buf, sizeof buf));
	}
	dsl_output_done(d, &out);
	/* the documented spelling of a frame with a line */
	run_str(d, "allocations.first.stack.first", "com.acme.xml.Parser.parse(Parser.java:42)");
	snprintf(q, sizeof q, "%s.contains(\"java.lang.Thread.run(Thread.java:840)\")", xml_bytes);
	run_str(d, q, "true");
	/* the web handler's byte[]: grow:9, handle, run */
	assert_int_equal(run_int(d, "allocations.first([a | a.account = \"com.acme.web.*\"])"
				    ".stack.count"), 3);
	run_str(d, "allocations.first([a | a.account = \"com.acme.web.*\"]).stack.first",
		"com.acme.util.Buf.grow(Buf.java:9)");
	/* every site is its stack's first frame */
	assert_int_equal(run_int(d, "allocations.count([a | a.stack.count > 0 and "
				    "a.stack.first = a.site])"), 3);
	dsl_free(d);
}

static void members_sampled(void **state)
{
	(void)state;
	struct fake f = {.exact = false};
	struct dsl *d = session(NULL, &f);
	/* estimates are floats, whatever their value */
	assert_true(run_float(d, "allocations.first.objects") == 100.5);
	assert_true(run_float(d, "allocations.first.bytes") == 2400.5);
	assert_true(run_float(d, "allocations.first.live_objects") == 40.5);
	assert_true(run_float(d, "allocations.first.live_bytes") == 960.5);
	assert_true(run_float(d, "allocations.first.elements") == 0.5);
	assert_true(run_float(d, "allocations.filter([a | a.account = \"com.acme.xml\"])"
				 ".sum([a | a.live_bytes])") == 960.5 + 5120.5);
	/* line stays an int */
	assert_int_equal(run_int(d, "allocations.first.line"), 42);
	assert_int_equal(run_int(d, "allocations.count"), 4);
	dsl_free(d);
}

/* number: an int or a float as a double (a struct's float field may hold an int). */
static double number(struct value v)
{
	if (v.k == V_INT)
		return (double)v.u.i;
	if (v.k != V_FLOAT)
		fail_msg("a %s, not a number", value_kind_name(v.k));
	return v.u.f;
}

/* The examples of docs/dsl.md, "Allocations", as written there. */
static void documented_examples(void **state)
{
	(void)state;
	struct fake f = {.exact = true};
	struct dsl *d = session(NULL, &f);
	assert_int_equal(run_int(d, "// live bytes charged to one account\n"
				    "allocations.filter([a | a.account = \"com.acme.xml\"])"
				    ".sum([a | a.live_bytes])"), 6080);
	struct dsl_output out;
	struct hs_error err;
	hs_error_clear(&err);
	const char *by_site =
		"let by_site = allocations.group_by([a | a.site])\n"
		"S : struct site : string, bytes : float, live : float end\n"
		"by_site.map([g | struct S g.key, g.items.sum([a | a.bytes]), "
		"g.items.sum([a | a.live_bytes]) end])\n"
		"       .top(10, [r | r.bytes])\n";
	if (dsl_run(d, by_site, &out, &err) != PARSE_OK)
		fail_msg("%d:%d: %s", err.line, err.col, err.msg);
	assert_int_equal(out.n, 1);
	struct value v = out.vals[0];
	assert_int_equal(v.k, V_LIST);
	assert_int_equal(v.u.l->n, 4);
	/* largest first: the helper's byte[] under the parser, then the Nodes */
	const struct vstruct *r0 = v.u.l->v[0].u.st, *r1 = v.u.l->v[1].u.st;
	char buf[256];
	assert_string_equal(r0->vals[0].u.s, frame(N_GROW_XML, buf, sizeof buf));
	assert_true(number(r0->vals[1]) == 10240);
	assert_true(number(r0->vals[2]) == 5120);
	assert_string_equal(r1->vals[0].u.s, "com.acme.xml.Parser.parse(Parser.java:42)");
	assert_true(number(r1->vals[1]) == 2400);
	dsl_output_done(d, &out);
	const char *callers =
		"// the byte[] that stay alive: where, and called from where\n"
		"allocations.filter([a | a.class = \"byte[]\" and a.live_bytes > 0])\n"
		"           .top(10, [a | a.live_bytes])\n"
		"           .map([a | a.site + \" <- \" + a.stack.first([f | f != a.site])])\n";
	v = run1(d, callers, &out);
	assert_int_equal(v.k, V_LIST);
	assert_int_equal(v.u.l->n, 2);
	char want[600];
	snprintf(want, sizeof want, "%s <- com.acme.xml.Parser.parse(Parser.java:42)",
		 frame(N_GROW_XML, buf, sizeof buf));
	assert_string_equal(v.u.l->v[0].u.s, want);
	assert_string_equal(v.u.l->v[1].u.s,
			    "com.acme.util.Buf.grow(Buf.java:9) <- "
			    "com.acme.web.Handler.handle(Handler.java:17)");
	dsl_output_done(d, &out);
	dsl_free(d);
}

static void one_read_per_snippet(void **state)
{
	(void)state;
	struct fake f = {.exact = true};
	struct dsl *d = session(NULL, &f);
	/* a read makes the JVM collect garbage: once per snippet, lambdas included */
	assert_int_equal(run_int(d, "allocations.count + allocations.map([a | "
				    "allocations.count]).sum"), 4 + 16);
	assert_int_equal(f.calls, 1);
	assert_int_equal(run_int(d, "allocations.count"), 4);
	assert_int_equal(f.calls, 2);
	/* a name is read when it is bound, not when it is used */
	struct dsl_output out;
	run1(d, "let a = allocations\na.count", &out);
	dsl_output_done(d, &out);
	assert_int_equal(f.calls, 3);
	assert_int_equal(run_int(d, "a.count"), 4);
	assert_int_equal(f.calls, 3);
	/* a snippet that does not mention it does not read */
	assert_int_equal(run_int(d, "1 + 2"), 3);
	assert_int_equal(f.calls, 3);
	dsl_free(d);
}

static void values_outlive_the_recording(void **state)
{
	(void)state;
	struct fake f = {.exact = true};
	struct dsl *d = session(NULL, &f);
	struct dsl_output out;
	run1(d, "let kept = allocations\nlet web = allocations.filter([a | "
		"a.account = \"com.acme.web.*\"]).first\n0", &out);
	dsl_output_done(d, &out);
	/*
	 * Later records of the same shapes full of 'X' take the freed memory
	 * (malloc hands freed blocks of a size back first): anything not
	 * copied would now read XXXX.
	 */
	f.fill = 'X';
	for (int k = 0; k < 3; k++) {
		run_str(d, "allocations.first.class", "XXXXXXXXXXXXXXXXX");
		run_str(d, "allocations.first.account", "XXXXXXXXXXXX");
	}
	run_str(d, "kept.first.class", "com.acme.xml.Node");
	run_str(d, "kept.first.site", "com.acme.xml.Parser.parse(Parser.java:42)");
	run_str(d, "kept.first.method", "com.acme.xml.Parser.parse");
	run_str(d, "kept.first.account", "com.acme.xml");
	run_str(d, "kept.first.stack.first", "com.acme.xml.Parser.parse(Parser.java:42)");
	run_str(d, "kept.first.stack.map([s | s]).sort_by([s | s]).first",
		"com.acme.web.Handler.handle(Handler.java:17)");
	run_str(d, "web.class", "byte[]");
	run_str(d, "web.account", "com.acme.web.*");
	run_str(d, "web.site", "com.acme.util.Buf.grow(Buf.java:9)");
	assert_int_equal(run_int(d, "web.elements"), 560);
	/* and a value in the output of a snippet that defines nothing: read after the run */
	f.fill = 0;
	struct value v = run1(d, "allocations.first", &out);
	f.fill = 'Y';
	struct dsl_output out2;
	run1(d, "allocations.first", &out2);
	dsl_output_done(d, &out2);
	assert_string_equal(v.u.st->vals[0].u.s, "com.acme.xml.Node");
	assert_string_equal(v.u.st->vals[1].u.s, "com.acme.xml.Parser.parse(Parser.java:42)");
	assert_string_equal(v.u.st->vals[4].u.s, "com.acme.xml");
	dsl_output_done(d, &out);
	dsl_free(d);
}

static void errors(void **state)
{
	(void)state;
	/* the engine has no recording: its reason, at the word */
	struct fake f = {.exact = true, .none = true};
	struct dsl *d = session(NULL, &f);
	run_err(d, "1 + allocations.count", 1, 5,
		"allocations need an attached JVM with a recording (:alloc start): JVM 4242 has no "
		"allocation recording");
	run_err(d, "let x = 1\n  allocations.filter([a | a.bytes > 0])", 2, 3,
		"allocations need an attached JVM with a recording (:alloc start): JVM 4242 has no "
		"allocation recording");
	dsl_free(d);
	/* no engine at all (a session on a dump) */
	d = dsl_new(NULL, NULL);
	run_err(d, "allocations.count", 1, 1,
		"allocations need an attached JVM with a recording (:alloc start)");
	dsl_free(d);
	/* members: a typo gets a suggestion */
	f.none = false;
	d = session(NULL, &f);
	run_err(d, "allocations.first.live_byte", 1, 19,
		"struct allocation has no field 'live_byte'; did you mean live_bytes?");
	run_err(d, "allocatons.count", 1, 1, "unknown name 'allocatons'; did you mean allocations?");
	/* without a heap, the heap's lists are errors, not crashes */
	run_err(d, "allocations.count + objects.count", 1, 21,
		"'objects' needs a heap, and this query runs without one (no dump is open and no "
		"snapshot of the JVM was taken)");
	run_err(d, "classes", 1, 1,
		"'classes' needs a heap, and this query runs without one (no dump is open and no "
		"snapshot of the JVM was taken)");
	run_err(d, "allocations.filter([a | a is Foo])", 1, 30,
		"'is' needs a heap, and this query runs without one (no dump is open and no "
		"snapshot of the JVM was taken)");
	dsl_free(d);
}

/* tiny_heap: a dump of three int[] arrays (written to a temporary file kept by w). */
static struct heap *tiny_heap(struct hw *w)
{
	hw_init(w, 8, 2, 0);
	hw_dump_begin(w, HPROF_HEAP_DUMP_SEGMENT);
	for (uint64_t k = 0; k < 3; k++)
		hw_prim_array(w, 0x1000 + 16 * k, HPROF_INT, 0, "");
	hw_dump_end(w);
	struct heap *h;
	struct hs_error err;
	hs_error_clear(&err);
	if (heap_load(hw_save(w), NULL, &h, &err) != HS_OK)
		fail_msg("heap_load: %s", err.msg);
	return h;
}

static void with_a_heap(void **state)
{
	(void)state;
	struct hw w;
	struct heap *h = tiny_heap(&w);
	struct fake f = {.exact = true};
	struct dsl *d = session(h, &f);
	assert_int_equal(run_int(d, "objects.count"), 3);
	assert_int_equal(f.calls, 0);
	assert_int_equal(run_int(d, "objects.count + allocations.count"), 7);
	assert_int_equal(f.calls, 1);
	dsl_free(d);

	/* a session begun without a heap keeps its names when it gets one */
	d = session(NULL, &f);
	assert_null(dsl_heap(d));
	struct dsl_output out;
	run1(d, "let n = allocations.count\nn", &out);
	dsl_output_done(d, &out);
	dsl_set_heap(d, h);
	assert_ptr_equal(dsl_heap(d), h);
	assert_int_equal(run_int(d, "objects.count * 10 + n"), 34);
	dsl_free(d);
	heap_free(h);
	hw_free(&w);
}

/* heapless: dsl_heapless(d, text) must be want. */
static void heapless_is(const struct dsl *d, const char *text, bool want)
{
	if (dsl_heapless(d, text) != want)
		fail_msg("dsl_heapless(%s, \"%s\") is %s", d ? "a session" : "NULL", text,
			 want ? "false" : "true");
}

static void which_snippets_need_no_heap(void **state)
{
	(void)state;
	/* allocation queries run without a heap */
	heapless_is(NULL, "allocations.filter([a | a.account = \"com.acme.xml\"])"
			  ".sum([a | a.live_bytes])", true);
	heapless_is(NULL, "let big = allocations.filter([a | a.bytes > 1000])", true);
	heapless_is(NULL, "allocations.group_by([a | a.site]).map([g | g.key])", true);
	/* anything of the heap, anywhere, needs one */
	heapless_is(NULL, "allocations.count + objects.count", false);
	heapless_is(NULL, "allocations.map([a | classes.count])", false);
	heapless_is(NULL, "allocations.filter([a | a is java.lang.String])", false);
	heapless_is(NULL, "allocations.count\nthreads", false);
	heapless_is(NULL, "classloaders.count + allocations.count", false);
	heapless_is(NULL, "set_type s:\n roots <- allocations\ninstances_for s have_names = \"x\"",
		    false);
	/* not about allocations: the heap as before */
	heapless_is(NULL, "1 + 2", false);
	heapless_is(NULL, "let x = 5", false);
	/* unfinished or wrong text: left to the usual path */
	heapless_is(NULL, "allocations.filter([a |", false);
	heapless_is(NULL, "allocations.count )", false);
	/* a session already without a heap goes on without one while it can (its names) */
	struct fake f = {.exact = true};
	struct dsl *d = session(NULL, &f);
	heapless_is(d, "1 + 2", true);
	heapless_is(d, "kept.count", true);
	heapless_is(d, "objects.count", false);
	dsl_free(d);
	/* and a session with a heap is not one without */
	struct hw w;
	struct heap *h = tiny_heap(&w);
	d = session(h, &f);
	heapless_is(d, "1 + 2", false);
	dsl_free(d);
	heap_free(h);
	hw_free(&w);
}

static void completion_knows_it(void **state)
{
	(void)state;
	bool found = false;
	for (int k = 0; parse_keywords[k]; k++)
		found |= !strcmp(parse_keywords[k], "allocations");
	assert_true(found);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(members_exact),
		cmocka_unit_test(stacks),
		cmocka_unit_test(members_sampled),
		cmocka_unit_test(documented_examples),
		cmocka_unit_test(one_read_per_snippet),
		cmocka_unit_test(values_outlive_the_recording),
		cmocka_unit_test(errors),
		cmocka_unit_test(with_a_heap),
		cmocka_unit_test(which_snippets_need_no_heap),
		cmocka_unit_test(completion_knows_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
