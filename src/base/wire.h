/*
 * wire.h - the one codec for the bytes heapsh writes and reads itself: the
 * agent protocol (docs/protocol.md), query programs (src/dsl/prog.h) and
 * the agent's snapshot records and the HPROF file heapsh makes of them
 * (src/agent/snapshot.c, src/attach/snapshot.c). After zstd's
 * lib/common/mem.h: every integer is big-endian and goes through the
 * loads and stores below; a writer and a reader carry a sticky error, so a
 * caller writes or reads a whole message and checks once at its end.
 *
 * A writer (struct wire_w) grows as it is written to, up to its max bytes,
 * or, given a sink (wire_w_sink), keeps a fixed buffer that it hands to the
 * sink whenever it fills. Out of memory, over max, a length its field
 * cannot hold, or a failed sink sets w->err; from then on writes are
 * dropped. A reader (struct wire_r) reads a byte range it borrows: a read
 * past the end returns 0 and sets r->err (WIRE_SHORT), with r->err_at the
 * byte offset of the read, for messages; strings are bounded by the bytes
 * left. The first error stays; later reads return 0.
 *
 * The per-field calls are static inline, so that the protocol and
 * snapshots cost what hand-written code did; what grows a buffer, drains
 * it or copies a string is in wire.c. Nothing here prints, exits or
 * aborts.
 *
 * Ownership: a writer owns its buffer (wire_w_free frees it; w->p may be
 * taken by the caller, who then frees it). A reader borrows its bytes,
 * and wire_get_str's view points into them; wire_get_strdup returns
 * memory the caller frees.
 */
#ifndef HS_WIRE_H
#define HS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A writer's or a reader's error; the first one stays. */
enum wire_err {
	WIRE_OK = 0,
	WIRE_SHORT,	/* reader: a read past the end of its bytes */
	WIRE_BAD,	/* reader: the caller found the bytes malformed (wire_r_fail) */
	WIRE_NOMEM,	/* out of memory */
	WIRE_LIMIT,	/* writer: over its max bytes, or a length its field cannot hold */
	WIRE_IO		/* writer: its sink failed */
};

/* wire_strerror: err as a phrase ("it ends early", "out of memory"; static text). */
const char *wire_strerror(int err);

/* ---- loads and stores: big-endian integers at p (no bounds: the caller checked) ---- */

static inline uint16_t wire_load16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}
static inline uint32_t wire_load32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t wire_load64(const uint8_t *p)
{
	return (uint64_t)wire_load32(p) << 32 | wire_load32(p + 4);
}
static inline void wire_store16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static inline void wire_store32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}
static inline void wire_store64(uint8_t *p, uint64_t v)
{
	wire_store32(p, (uint32_t)(v >> 32));
	wire_store32(p + 4, (uint32_t)v);
}
/* wire_store_be: the low n bytes of v (n from 1 to 8), big-endian: an HPROF value of its type's size. */
static inline void wire_store_be(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

/* ---- the writer ---- */

/*
 * A writer. Zeroed ({0}) it is an empty growable writer with no bound;
 * set max before the first write to bound it. p[0..len) are the bytes
 * written (and not yet drained to a sink).
 */
struct wire_w {
	uint8_t *p;		/* the buffer (owned) */
	size_t len, cap;	/* bytes written into it; bytes allocated */
	size_t max;		/* growable: the most bytes it may hold, 0 for no bound */
	int err;		/* enum wire_err, sticky: later writes are dropped */
	bool (*sink)(void *ctx, const void *p, size_t n);	/* true when all n were taken */
	void *ctx;		/* the sink's */
	uint64_t drained;	/* bytes handed to the sink so far */
};

/*
 * wire_w_sink: make w (zeroed or freed) a writer of a fixed buffer of cap
 * bytes (at least 64) that hands its bytes to sink(ctx, p, n) when full,
 * on wire_w_drain, and writes longer than the buffer straight through.
 * False (w->err WIRE_NOMEM) when the buffer cannot be allocated.
 */
bool wire_w_sink(struct wire_w *w, size_t cap, bool (*sink)(void *ctx, const void *p, size_t n),
		 void *ctx);
/* wire_file_sink: a sink writing to the stdio FILE ctx. */
bool wire_file_sink(void *ctx, const void *p, size_t n);

/*
 * wire_w_room: make room for n more bytes at p + len: grow the buffer, or
 * drain it to the sink. False with w->err set when it cannot (or an error
 * came before). The inline writers below call it only when the buffer is full.
 */
bool wire_w_room(struct wire_w *w, size_t n);
/* wire_w_drain: hand the bytes written to the sink now (a writer without one keeps them). */
bool wire_w_drain(struct wire_w *w);
/* wire_w_reset: empty w and clear its error, keeping its memory (a reply buffer reused). */
void wire_w_reset(struct wire_w *w);
/* wire_w_free: free w's buffer; w is zeroed (an empty growable writer again). */
void wire_w_free(struct wire_w *w);
/* wire_w_pos: bytes written in all, drained and buffered: the offset of the next byte. */
static inline uint64_t wire_w_pos(const struct wire_w *w)
{
	return w->drained + w->len;
}

/* wire_w_at: n bytes at the end of w to fill, or NULL (w->err set). */
static inline uint8_t *wire_w_at(struct wire_w *w, size_t n)
{
	if (w->err || w->cap - w->len < n) {
		if (!wire_w_room(w, n))
			return NULL;
	}
	uint8_t *q = w->p + w->len;
	w->len += n;
	return q;
}

/*
 * wire_put8 .. wire_put64: v big-endian at the end of w; dropped when
 * w->err is set, or gets set because there is no room (see wire_w_room).
 */
static inline void wire_put8(struct wire_w *w, uint8_t v)
{
	uint8_t *q = wire_w_at(w, 1);
	if (q)
		*q = v;
}
static inline void wire_put16(struct wire_w *w, uint16_t v)
{
	uint8_t *q = wire_w_at(w, 2);
	if (q)
		wire_store16(q, v);
}
static inline void wire_put32(struct wire_w *w, uint32_t v)
{
	uint8_t *q = wire_w_at(w, 4);
	if (q)
		wire_store32(q, v);
}
static inline void wire_put64(struct wire_w *w, uint64_t v)
{
	uint8_t *q = wire_w_at(w, 8);
	if (q)
		wire_store64(q, v);
}

/* wire_put_f64: a double as its IEEE 754 bits (the protocol's and programs' floats). */
static inline void wire_put_f64(struct wire_w *w, double v)
{
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	wire_put64(w, bits);
}

/* wire_put_bytes_slow: wire_put_bytes when the buffer is full (wire.c). */
void wire_put_bytes_slow(struct wire_w *w, const void *src, size_t n);
/* wire_put_bytes: n raw bytes (src may be NULL when n is 0). */
static inline void wire_put_bytes(struct wire_w *w, const void *src, size_t n)
{
	if (!n)
		return;
	if (w->err || w->cap - w->len < n) {
		wire_put_bytes_slow(w, src, n);
		return;
	}
	memcpy(w->p + w->len, src, n);
	w->len += n;
}

/*
 * wire_put_str: s as a u32 byte length and its bytes, no NUL (the
 * protocol's and the snapshot records' string); NULL as "". Longer than
 * 4 GiB: WIRE_LIMIT.
 */
void wire_put_str(struct wire_w *w, const char *s);
/* wire_put_str16: s[0..n) as a u16 length and the bytes (a program's string table); n over 65535: WIRE_LIMIT. */
void wire_put_str16(struct wire_w *w, const char *s, size_t n);

/* ---- the reader ---- */

/* A reader over [start, end). */
struct wire_r {
	const uint8_t *p;	/* the next byte */
	const uint8_t *start, *end;
	int err;		/* enum wire_err, sticky: reads return 0 from then on */
	size_t err_at;		/* the byte offset (from start) where the first error was found */
};

/* wire_reader: a reader of p[0..n) (p may be NULL when n is 0). */
static inline struct wire_r wire_reader(const void *p, size_t n)
{
	static const uint8_t none[1];
	const uint8_t *b = p ? (const uint8_t *)p : none;	/* no NULL + 0 */
	struct wire_r r = {b, b, b + n, WIRE_OK, 0};
	return r;
}
/* wire_offset: the byte offset of the next read. */
static inline size_t wire_offset(const struct wire_r *r)
{
	return (size_t)(r->p - r->start);
}
/* wire_left: bytes not read yet. */
static inline size_t wire_left(const struct wire_r *r)
{
	return (size_t)(r->end - r->p);
}
/* wire_done: no error, and every byte was read (a message read exactly). */
static inline bool wire_done(const struct wire_r *r)
{
	return !r->err && r->p == r->end;
}
/* wire_r_fail: set r's error (err, at the next read's offset) unless it has one. */
static inline void wire_r_fail(struct wire_r *r, int err)
{
	if (!r->err) {
		r->err = err;
		r->err_at = wire_offset(r);
	}
}
/* wire_need: n more bytes are there to read (else WIRE_SHORT); false after any error. */
static inline bool wire_need(struct wire_r *r, size_t n)
{
	if (!r->err && wire_left(r) >= n)
		return true;
	wire_r_fail(r, WIRE_SHORT);
	return false;
}

/* wire_get_bytes: the next n bytes (a view into the reader's), or NULL. */
static inline const uint8_t *wire_get_bytes(struct wire_r *r, size_t n)
{
	if (!wire_need(r, n))
		return NULL;
	const uint8_t *q = r->p;
	r->p += n;
	return q;
}
/*
 * wire_get8 .. wire_get64, wire_get_f64: the next big-endian integer (a
 * double: its IEEE 754 bits), or 0 with r->err WIRE_SHORT when fewer bytes
 * are left, or when an error came before; a failed read takes no bytes.
 */
static inline uint8_t wire_get8(struct wire_r *r)
{
	return wire_need(r, 1) ? *r->p++ : 0;
}
static inline uint16_t wire_get16(struct wire_r *r)
{
	const uint8_t *q = wire_get_bytes(r, 2);
	return q ? wire_load16(q) : 0;
}
static inline uint32_t wire_get32(struct wire_r *r)
{
	const uint8_t *q = wire_get_bytes(r, 4);
	return q ? wire_load32(q) : 0;
}
static inline uint64_t wire_get64(struct wire_r *r)
{
	const uint8_t *q = wire_get_bytes(r, 8);
	return q ? wire_load64(q) : 0;
}
static inline double wire_get_f64(struct wire_r *r)
{
	uint64_t bits = wire_get64(r);
	double v;
	memcpy(&v, &bits, sizeof v);
	return v;
}

/*
 * wire_get_str: a u32-length string as a view of its bytes (*n of them, no
 * NUL after them), or NULL (and *n 0) when the bytes left do not hold it.
 */
const char *wire_get_str(struct wire_r *r, size_t *n);
/* wire_get_str16: the same for a u16-length string. */
const char *wire_get_str16(struct wire_r *r, size_t *n);
/*
 * wire_get_strdup: a u32-length string as a new NUL-terminated copy (the
 * caller frees), or NULL with r->err set: WIRE_BAD when it claims more
 * than max bytes (checked before the bytes are), WIRE_SHORT, WIRE_NOMEM.
 */
char *wire_get_strdup(struct wire_r *r, size_t max);

#endif
