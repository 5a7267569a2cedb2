/*
 * prog.c - query programs as bytes (prog.h): the shell's encoder and the
 * agent's bounds-checked decoder.
 */
#include "prog.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/wire.h"

/* ---- encoding ---- */

struct enc {
	struct wire_w w;	/* the program, at most PROG_MAX_BYTES */
	/* strings: text -> index */
	const char **str;
	int nstr, capstr;
	/* nodes: pointer -> index, in emission order */
	const struct node **nodes;
	int nnodes, capnodes;
	/* open addressing: slot -> index + 1 (0 empty), PROG_MAX * 4 slots */
	uint16_t *str_slot, *node_slot;
	const char *snippet;
	char *why;
	size_t whycap;
	bool failed;
};

static void fail(struct enc *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct enc *e, const char *fmt, ...)
{
	if (e->failed)
		return;
	e->failed = true;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->why, e->whycap, fmt, ap);
	va_end(ap);
}

static unsigned clamp16(int v)
{
	return v < 0 ? 0 : v > 65535 ? 65535 : (unsigned)v;
}

#define STR_SLOTS (PROG_MAX_STRINGS * 4)
#define NODE_SLOTS (PROG_MAX_NODES * 4)

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static uint32_t hash_ptr(const void *p)
{
	uint64_t v = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ULL;
	return (uint32_t)(v >> 32);
}

/* string: index + 1 of s in the table, 0 for NULL. */
static unsigned string(struct enc *e, const char *s)
{
	if (!s || e->failed)
		return 0;
	uint32_t h = hash_str(s) % STR_SLOTS;
	while (e->str_slot[h]) {
		if (!strcmp(e->str[e->str_slot[h] - 1], s))
			return e->str_slot[h];
		h = (h + 1) % STR_SLOTS;
	}
	if (strlen(s) > 65535) {
		fail(e, "a string of the program is longer than 65535 bytes");
		return 0;
	}
	if (e->nstr >= PROG_MAX_STRINGS) {
		fail(e, "the program has more than %d distinct names and strings", PROG_MAX_STRINGS);
		return 0;
	}
	if (e->nstr == e->capstr) {
		e->capstr = e->capstr ? e->capstr * 2 : 64;
		const char **n = realloc(e->str, (size_t)e->capstr * sizeof *n);
		if (!n) {
			fail(e, "out of memory");
			return 0;
		}
		e->str = n;
	}
	e->str[e->nstr++] = s;
	e->str_slot[h] = (uint16_t)e->nstr;
	return (unsigned)e->nstr;
}

/*
 * Pass 1 collects strings and orders nodes children first; pass 2 writes.
 * node_index: the index + 1 a node was given in pass 1.
 */
static unsigned node_index(struct enc *e, const struct node *n)
{
	if (!n)
		return 0;
	for (uint32_t h = hash_ptr(n) % NODE_SLOTS; e->node_slot[h]; h = (h + 1) % NODE_SLOTS)
		if (e->nodes[e->node_slot[h] - 1] == n)
			return e->node_slot[h];
	return 0;
}

static void collect(struct enc *e, const struct node *n, int depth)
{
	if (!n || e->failed || node_index(e, n))
		return;
	if (depth > PROG_MAX_DEPTH) {
		fail(e, "an expression nests more than %d deep", PROG_MAX_DEPTH);
		return;
	}
	if (n->kind == N_EXTERN_CALL) {
		fail(e, "it calls the native function %s, which runs in heapsh, not in the JVM",
		     n->name ? n->name : "?");
		return;
	}
	if (n->kind == N_STRUCT) {
		fail(e, "it makes a struct %s, a type declared in heapsh", n->name ? n->name : "");
		return;
	}
	if (n->nitems > PROG_MAX_ITEMS) {
		fail(e, "a list or call has more than %d items", PROG_MAX_ITEMS);
		return;
	}
	if (n->kind == N_LAMBDA && n->nparams > PROG_MAX_PARAMS) {
		fail(e, "a lambda has more than %d parameters", PROG_MAX_PARAMS);
		return;
	}
	collect(e, n->a, depth + 1);
	collect(e, n->b, depth + 1);
	collect(e, n->result, depth + 1);
	for (int k = 0; k < n->nitems; k++)
		collect(e, n->items[k], depth + 1);
	string(e, n->name);
	if (n->kind == N_STR)
		string(e, n->s);
	for (int k = 0; n->kind == N_LAMBDA && k < n->nparams; k++) {
		string(e, n->params[k].name);
		string(e, n->params[k].type);
	}
	if (e->failed)
		return;
	if (e->nnodes >= PROG_MAX_NODES) {
		fail(e, "the program has more than %d nodes", PROG_MAX_NODES);
		return;
	}
	if (e->nnodes == e->capnodes) {
		e->capnodes = e->capnodes ? e->capnodes * 2 : 256;
		const struct node **nn = realloc(e->nodes, (size_t)e->capnodes * sizeof *nn);
		if (!nn) {
			fail(e, "out of memory");
			return;
		}
		e->nodes = nn;
	}
	e->nodes[e->nnodes++] = n;
	uint32_t h = hash_ptr(n) % NODE_SLOTS;
	while (e->node_slot[h])
		h = (h + 1) % NODE_SLOTS;
	e->node_slot[h] = (uint16_t)e->nnodes;
}

static void write_node(struct enc *e, const struct node *n)
{
	wire_put8(&e->w, n->kind);
	wire_put8(&e->w, n->kind == N_BIN ? n->op : 0);
	wire_put8(&e->w, e->snippet && n->snippet && n->snippet != e->snippet ? PROG_EARLIER : 0);
	wire_put16(&e->w, clamp16(n->line));
	wire_put16(&e->w, clamp16(n->col));
	wire_put16(&e->w, string(e, n->name));
	wire_put16(&e->w, node_index(e, n->a));
	wire_put16(&e->w, node_index(e, n->b));
	wire_put16(&e->w, node_index(e, n->result));
	switch (n->kind) {
	case N_INT: wire_put64(&e->w, (uint64_t)n->i); break;
	case N_FLOAT: wire_put_f64(&e->w, n->f); break;
	case N_STR: wire_put16(&e->w, string(e, n->s)); break;
	case N_BOOL: wire_put8(&e->w, n->i != 0); break;
	default: break;
	}
	wire_put16(&e->w, (unsigned)n->nitems);
	for (int k = 0; k < n->nitems; k++)
		wire_put16(&e->w, node_index(e, n->items[k]));
	if (n->kind == N_LAMBDA) {
		wire_put8(&e->w, (unsigned)n->nparams);
		for (int k = 0; k < n->nparams; k++) {
			wire_put16(&e->w, string(e, n->params[k].name));
			wire_put16(&e->w, string(e, n->params[k].type));
		}
	}
}

int prog_encode(struct stmt *const *stmts, int n, const char *snippet, uint8_t **out,
		size_t *len, char *why, size_t cap)
{
	struct enc e;
	memset(&e, 0, sizeof e);
	e.w.max = PROG_MAX_BYTES;
	e.snippet = snippet;
	e.why = why;
	e.whycap = cap;
	e.str_slot = calloc(STR_SLOTS, sizeof *e.str_slot);
	e.node_slot = calloc(NODE_SLOTS, sizeof *e.node_slot);
	if (!e.str_slot || !e.node_slot)
		fail(&e, "out of memory");
	if (n > PROG_MAX_STMTS)
		fail(&e, "the program has more than %d statements", PROG_MAX_STMTS);
	for (int k = 0; k < n && !e.failed; k++) {
		const struct stmt *s = stmts[k];
		switch (s->kind) {
		case S_EXPR: case S_LET: case S_INSTANCES:
			collect(&e, s->e, 0);
			string(&e, s->name);
			string(&e, s->type);
			break;
		case S_SET_TYPE:
			if (s->nprops > PROG_MAX_PROPS)
				fail(&e, "set type %s has more than %d properties", s->name,
				     PROG_MAX_PROPS);
			string(&e, s->name);
			for (int j = 0; j < s->nprops && !e.failed; j++) {
				collect(&e, s->props[j].value, 0);
				string(&e, s->props[j].decl.name);
				string(&e, s->props[j].decl.type);
			}
			break;
		case S_TYPE:
			fail(&e, "it declares the type %s, which lives in heapsh", s->name);
			break;
		case S_EXTERN:
			fail(&e, "it declares the native function %s, which runs in heapsh", s->name);
			break;
		}
	}
	if (!e.failed) {
		wire_put32(&e.w, PROG_MAGIC);
		wire_put16(&e.w, PROG_VERSION);
		wire_put16(&e.w, 0);
		wire_put16(&e.w, (unsigned)e.nstr);
		for (int k = 0; k < e.nstr; k++)
			wire_put_str16(&e.w, e.str[k], strlen(e.str[k]));
		wire_put16(&e.w, (unsigned)e.nnodes);
		for (int k = 0; k < e.nnodes; k++)
			write_node(&e, e.nodes[k]);
		wire_put16(&e.w, (unsigned)n);
		for (int k = 0; k < n; k++) {
			const struct stmt *s = stmts[k];
			wire_put8(&e.w, s->kind);
			wire_put16(&e.w, clamp16(s->line));
			wire_put16(&e.w, clamp16(s->col));
			wire_put16(&e.w, string(&e, s->name));
			wire_put16(&e.w, node_index(&e, s->e));
			wire_put16(&e.w, string(&e, s->type));
			if (s->kind == S_SET_TYPE) {
				wire_put8(&e.w, (unsigned)s->nprops);
				for (int j = 0; j < s->nprops; j++) {
					const struct property *p = &s->props[j];
					wire_put8(&e.w, p->kind);
					wire_put16(&e.w, string(&e, p->decl.name));
					wire_put16(&e.w, string(&e, p->decl.type));
					wire_put16(&e.w, node_index(&e, p->value));
					wire_put16(&e.w, clamp16(p->decl.line));
					wire_put16(&e.w, clamp16(p->decl.col));
				}
			}
		}
	}
	if (e.w.err == WIRE_LIMIT)
		fail(&e, "the program is larger than %d bytes", PROG_MAX_BYTES);
	else if (e.w.err)
		fail(&e, "out of memory");
	free(e.str);
	free(e.nodes);
	free(e.str_slot);
	free(e.node_slot);
	if (e.failed) {
		wire_w_free(&e.w);
		return -1;
	}
	*out = e.w.p;
	*len = e.w.len;
	return 0;
}

/* ---- decoding ---- */

struct dec {
	struct wire_r r;	/* the program; its error is the decoder's (dfail) */
	void *(*alloc)(void *ctx, size_t n);
	void *ctx;
	char *why;
	size_t cap;
	const char **str;
	unsigned nstr;
	struct node **nodes;
	unsigned nnodes;
	uint16_t *depth;
};

/* dfail: the first error, at the reading position, into why. */
static void dfail(struct dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void dfail(struct dec *d, const char *fmt, ...)
{
	if (d->r.err)
		return;
	wire_r_fail(&d->r, WIRE_BAD);
	char msg[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(d->why, d->cap, "malformed program at byte %zu: %s", d->r.err_at, msg);
}

/* failed: -1, with why said for a program that ended early (dfail said the others). */
static int failed(struct dec *d)
{
	if (d->r.err == WIRE_SHORT)
		snprintf(d->why, d->cap, "malformed program at byte %zu: %s", d->r.err_at,
			 wire_strerror(WIRE_SHORT));
	return -1;
}

static void *dalloc(struct dec *d, size_t n)
{
	if (d->r.err)
		return NULL;
	void *m = d->alloc(d->ctx, n ? n : 1);
	if (!m)
		dfail(d, "it needs more memory than the agent allows");
	return m;
}

/* A string reference: index + 1, 0 for none (allowed only when optional). */
static const char *gstr(struct dec *d, bool optional)
{
	unsigned i = wire_get16(&d->r);
	if (d->r.err)
		return NULL;
	if (!i) {
		if (!optional)
			dfail(d, "a name is missing");
		return NULL;
	}
	if (i > d->nstr) {
		dfail(d, "string %u of %u", i, d->nstr);
		return NULL;
	}
	return d->str[i - 1];
}

/* A node reference to a node before `before` (index + 1, 0 none). */
static struct node *gnode(struct dec *d, unsigned before, bool optional, unsigned *depth)
{
	unsigned i = wire_get16(&d->r);
	if (d->r.err)
		return NULL;
	if (!i) {
		if (!optional)
			dfail(d, "an operand is missing");
		return NULL;
	}
	if (i > before) {
		dfail(d, "node %u refers to node %u, which does not come before it", before + 1, i);
		return NULL;
	}
	if (d->depth[i - 1] + 1u > *depth)
		*depth = d->depth[i - 1] + 1u;
	return d->nodes[i - 1];
}

const char prog_this_snippet[] = "this", prog_earlier_snippet[] = "earlier";

static void decode_node(struct dec *d, unsigned k)
{
	struct node *n = dalloc(d, sizeof *n);
	if (!n)
		return;
	unsigned kind = wire_get8(&d->r), op = wire_get8(&d->r), flags = wire_get8(&d->r);
	if (!d->r.err && (kind > N_ASSIGN || kind == N_STRUCT)) {
		dfail(d, "node %u has kind %u, which a program does not hold", k + 1, kind);
		return;
	}
	if (!d->r.err && (op > OP_OR || flags > PROG_EARLIER)) {
		dfail(d, "node %u has operator %u, flags %u", k + 1, op, flags);
		return;
	}
	n->kind = (enum node_kind)kind;
	n->op = (enum bin_op)op;
	n->snippet = flags & PROG_EARLIER ? prog_earlier_snippet : prog_this_snippet;
	n->line = (int)wire_get16(&d->r);
	n->col = (int)wire_get16(&d->r);
	unsigned depth = 1;
	n->name = gstr(d, true);
	n->a = gnode(d, k, true, &depth);
	n->b = gnode(d, k, true, &depth);
	n->result = gnode(d, k, true, &depth);
	switch (n->kind) {
	case N_INT: n->i = (int64_t)wire_get64(&d->r); break;
	case N_FLOAT: n->f = wire_get_f64(&d->r); break;
	case N_STR: n->s = gstr(d, false); break;
	case N_BOOL: n->i = wire_get8(&d->r) != 0; break;
	default: break;
	}
	unsigned ni = wire_get16(&d->r);
	if (!d->r.err && ni > PROG_MAX_ITEMS) {
		dfail(d, "node %u has %u items", k + 1, ni);
		return;
	}
	n->nitems = (int)ni;
	if (ni) {
		n->items = dalloc(d, ni * sizeof *n->items);
		for (unsigned j = 0; j < ni && !d->r.err; j++)
			n->items[j] = gnode(d, k, false, &depth);
	}
	if (n->kind == N_LAMBDA) {
		unsigned np = wire_get8(&d->r);
		if (!d->r.err && np > PROG_MAX_PARAMS) {
			dfail(d, "a lambda has %u parameters", np);
			return;
		}
		n->nparams = (int)np;
		if (np) {
			n->params = dalloc(d, np * sizeof *n->params);
			for (unsigned j = 0; j < np && !d->r.err; j++) {
				n->params[j].name = gstr(d, false);
				n->params[j].type = gstr(d, true);
			}
		}
	}
	if (d->r.err)
		return;
	/* What each kind must have. */
	bool ok = true;
	switch (n->kind) {
	case N_IDENT: case N_ASSIGN: case N_EXTERN_CALL:
		ok = n->name != NULL && (n->kind != N_ASSIGN || n->a);
		break;
	case N_MEMBER: case N_CALL: case N_IS:
		ok = n->name && n->a;
		break;
	case N_NEG: case N_NOT: case N_IN_UNASSIGNED:
		ok = n->a != NULL;
		break;
	case N_BIN: case N_IN:
		ok = n->a && n->b;
		break;
	default:
		break;
	}
	if (n->kind == N_EXTERN_CALL)
		ok = false;
	if (!ok) {
		dfail(d, "node %u (kind %u) lacks an operand or name, or is not allowed", k + 1,
		      kind);
		return;
	}
	if (depth > PROG_MAX_DEPTH) {
		dfail(d, "node %u nests %u deep (at most %d)", k + 1, depth, PROG_MAX_DEPTH);
		return;
	}
	d->depth[k] = (uint16_t)depth;
	d->nodes[k] = n;
}

int prog_decode(const uint8_t *p, size_t len, void *(*alloc)(void *ctx, size_t n), void *ctx,
		struct prog *out, char *why, size_t cap)
{
	struct dec d;
	memset(&d, 0, sizeof d);
	d.r = wire_reader(p, len);
	d.alloc = alloc;
	d.ctx = ctx;
	d.why = why;
	d.cap = cap;
	memset(out, 0, sizeof *out);
	if (len > PROG_MAX_BYTES) {
		dfail(&d, "%zu bytes (at most %d)", len, PROG_MAX_BYTES);
		return -1;
	}
	uint32_t magic = wire_get32(&d.r);
	unsigned version = wire_get16(&d.r);
	unsigned flags = wire_get16(&d.r);
	if (d.r.err)
		return failed(&d);
	if (magic != PROG_MAGIC) {
		dfail(&d, "not a program (magic 0x%08x)", magic);
		return -1;
	}
	if (version != PROG_VERSION || flags) {
		dfail(&d, "version %u, flags %u (this agent reads version %d)", version, flags,
		      PROG_VERSION);
		return -1;
	}
	d.nstr = wire_get16(&d.r);
	if (d.nstr > PROG_MAX_STRINGS)
		dfail(&d, "%u strings", d.nstr);
	d.str = dalloc(&d, (d.nstr + 1u) * sizeof *d.str);
	for (unsigned k = 0; k < d.nstr && !d.r.err; k++) {
		unsigned l = wire_get16(&d.r);
		if (!wire_need(&d.r, l))
			break;
		if (memchr(d.r.p, 0, l)) {	/* said at the string's first byte */
			dfail(&d, "string %u holds a NUL byte", k + 1);
			break;
		}
		char *s = dalloc(&d, (size_t)l + 1);
		if (!s)
			break;
		memcpy(s, wire_get_bytes(&d.r, l), l);
		d.str[k] = s;
	}
	d.nnodes = wire_get16(&d.r);
	if (d.nnodes > PROG_MAX_NODES)
		dfail(&d, "%u nodes", d.nnodes);
	d.nodes = dalloc(&d, (d.nnodes + 1u) * sizeof *d.nodes);
	d.depth = dalloc(&d, (d.nnodes + 1u) * sizeof *d.depth);
	for (unsigned k = 0; k < d.nnodes && !d.r.err; k++)
		decode_node(&d, k);
	unsigned ns = wire_get16(&d.r);
	if (!d.r.err && ns > PROG_MAX_STMTS)
		dfail(&d, "%u statements", ns);
	out->stmts = dalloc(&d, (ns + 1u) * sizeof *out->stmts);
	for (unsigned k = 0; k < ns && !d.r.err; k++) {
		struct stmt *s = dalloc(&d, sizeof *s);
		if (!s)
			break;
		unsigned kind = wire_get8(&d.r);
		if (!d.r.err && kind != S_EXPR && kind != S_LET && kind != S_SET_TYPE &&
		    kind != S_INSTANCES) {
			dfail(&d, "statement %u has kind %u", k + 1, kind);
			break;
		}
		s->kind = (enum stmt_kind)kind;
		s->snippet = prog_this_snippet;
		s->line = (int)wire_get16(&d.r);
		s->col = (int)wire_get16(&d.r);
		s->name = gstr(&d, true);
		unsigned depth = 0;
		s->e = gnode(&d, d.nnodes, true, &depth);
		s->type = gstr(&d, true);
		if (d.r.err)
			break;
		if ((s->kind == S_EXPR || s->kind == S_INSTANCES) && !s->e) {
			dfail(&d, "statement %u has no expression", k + 1);
			break;
		}
		if ((s->kind != S_EXPR) && !s->name) {
			dfail(&d, "statement %u has no name", k + 1);
			break;
		}
		if (s->kind == S_SET_TYPE) {
			unsigned np = wire_get8(&d.r);
			if (!d.r.err && np > PROG_MAX_PROPS) {
				dfail(&d, "a set type has %u properties", np);
				break;
			}
			s->nprops = (int)np;
			s->props = dalloc(&d, (np + 1u) * sizeof *s->props);
			for (unsigned j = 0; j < np && !d.r.err; j++) {
				struct property *pr = &s->props[j];
				unsigned pk = wire_get8(&d.r);
				if (!d.r.err && pk > P_USER) {
					dfail(&d, "a property has kind %u", pk);
					break;
				}
				pr->kind = pk == 0 ? P_ROOTS : pk == 1 ? P_MEMBERSHIP
						: pk == 2 ? P_ON_INCLUSION : P_USER;
				pr->decl.name = gstr(&d, pr->kind != P_USER);
				pr->decl.type = gstr(&d, true);
				pr->value = gnode(&d, d.nnodes, pr->kind == P_USER, &depth);
				pr->decl.line = (int)wire_get16(&d.r);
				pr->decl.col = (int)wire_get16(&d.r);
				if (!d.r.err && pr->kind == P_USER && !pr->decl.name)
					dfail(&d, "a property has no name");
			}
		}
		out->stmts[k] = s;
	}
	if (!d.r.err && wire_left(&d.r))
		dfail(&d, "%zu bytes follow the last statement", wire_left(&d.r));
	if (d.r.err) {
		memset(out, 0, sizeof *out);
		return failed(&d);
	}
	out->nstmts = (int)ns;
	return 0;
}
