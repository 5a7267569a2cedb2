/*
 * redact.c - heapsh --redact: a streaming rewrite of an HPROF dump that
 * zeroes its values and keeps its structure; see redact.h.
 *
 * The input goes through one buffer (struct pass); a record is parsed in
 * place in the buffer, its value bytes overwritten there, and the buffer is
 * written out as it is consumed, so the copy has every byte where the
 * original had it. Object records bigger than the buffer (only arrays can
 * be) are streamed in chunks.
 */
#include "redact.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "../base/u64map.h"
#include "hprof.h"

/* The buffer: a whole CLASS DUMP or INSTANCE DUMP must fit (a class has at
 * most 65 535 fields and statics of at most 17 bytes each: 2.3 MB). */
#define BUF_SIZE (8u << 20)
#define CHUNK (1u << 20)
#define MAX_PASSES 32

/* What a wanted object is to the search for objects to keep. */
enum want {
	W_PROPS = 1,	/* a java.util.Properties: follow map/table, defaults */
	W_MAP,		/* its ConcurrentHashMap: follow table */
	W_TABLE,	/* a hash table's array: follow every element */
	W_NODE,		/* a table entry: follow key, val, next */
	W_KEYSTR,	/* an entry's key String (aux: the entry) */
	W_KEYARR,	/* that String's value array (aux: the entry) */
	W_VALSTR,	/* an entry's value String (aux: the entry): kept if its key is listed */
	W_VALARR,	/* that String's value array (aux: the entry): the same */
	W_KEEPREF,	/* referenced by a kept object: a String or array is kept */
	W_KEEP,		/* a primitive array to keep */
	W_KEPT_CLASS	/* not wanted: an instance of a kept class (follow) */
};

struct want_ent {
	uint64_t aux;	/* W_KEYSTR, W_KEYARR, W_VALSTR, W_VALARR: the entry */
	uint64_t at;	/* the offset of the record that wanted it */
	int pass;	/* the pass that wanted it */
	uint8_t kind;
	uint8_t done;	/* met (the object read) */
	uint8_t listed;	/* W_NODE: its key is a listed property's */
};

struct fld {
	uint64_t name;	/* UTF8 id */
	uint8_t type;
};

struct cls {
	uint64_t id, super;
	uint32_t first, nfields;	/* its own instance fields, in r->flds */
	int32_t bytes;		/* instance field bytes with the supers'; -1 not known yet */
	int8_t kept;		/* -1 not decided (name unknown yet), 0, 1: matches opts->keep */
	bool is_string, model_statics, system;
	bool collection;	/* in java.util: its size, count, baseCount are kept */
	char *name;		/* Java name ("java.lang.Thread"), or NULL */
	uint32_t *runs;		/* pairs (offset, length) of value bytes to zero */
	uint32_t nruns;
	uint32_t kept_bytes;	/* value bytes of an instance not zeroed */
	bool runs_made;
	bool kept_chain;	/* it or a super class is kept: follow its instances */
};

struct redactor {
	const struct hprof_redact_opts *o;
	struct hprof_redact_stats *st;
	struct hs_error *err;
	const char *path;
	int ids;
	/* pass 1's metadata */
	struct u64map utf8;	/* id -> (offset << 16 | length) in names */
	char *names;
	uint64_t names_len, names_cap;
	struct u64map load;	/* class id -> name id (LOAD CLASS) */
	struct u64map used;	/* UTF8 ids some record names something with */
	struct u64map classes;	/* class id -> index in cls */
	struct cls *cls;
	uint64_t ncls, capcls;
	struct fld *flds;
	uint64_t nflds, capflds;
	/* the objects to keep */
	struct u64map wanted;	/* id -> index in want */
	struct want_ent *want;
	uint64_t nwant, capwant, progress;
	uint64_t at;		/* the offset of the sub-record being read */
	uint64_t added_undone;	/* wanted in this pass and not met yet */
	uint64_t limit;		/* a scanning pass may stop here (see hprof_redact) */
	bool stopped;		/* it did */
	bool again;		/* something could not be decided this pass */
	int pass;
	bool writing;
};

/* One read pass over the input, writing when out is set. */
struct pass {
	gzFile in, out;
	uint64_t written;	/* bytes given to out */
	uint8_t *buf;
	size_t pos, len;	/* parse position, bytes held */
	uint64_t base;		/* input offset of buf[0] */
	bool eof;
	struct redactor *r;
};

static uint64_t at_off(const struct pass *p)
{
	return p->base + p->pos;
}

static int gz_fail(struct pass *p)
{
	int zerr = Z_OK;
	const char *m = gzerror(p->in, &zerr);
	if (zerr == Z_BUF_ERROR)
		hs_error_set(p->r->err, (int64_t)(p->base + p->len), "%s: the gzip stream ends "
			     "early (the file is truncated): redact a complete dump", p->r->path);
	else
		hs_error_set(p->r->err, (int64_t)(p->base + p->len), "%s: cannot read: %s",
			     p->r->path, zerr == Z_ERRNO ? strerror(errno) : m);
	return HS_ERR;
}

static int put(struct pass *p, const uint8_t *b, size_t n)
{
	if (!p->out || !n)
		return HS_OK;
	p->written += n;
	if (gzwrite(p->out, b, (unsigned)n) != (int)n) {
		int zerr = Z_OK;
		const char *m = gzerror(p->out, &zerr);
		hs_error_set(p->r->err, -1, "cannot write the redacted copy: %s",
			     zerr == Z_ERRNO ? strerror(errno) : m);
		return HS_ERR;
	}
	return HS_OK;
}

/*
 * have: make n bytes from the parse position available (n <= BUF_SIZE),
 * writing out what was consumed. Returns 1, 0 when the input ends first
 * (fewer than n bytes: p->len - p->pos say how many), HS_ERR.
 */
static int have(struct pass *p, size_t n)
{
	if (p->len - p->pos >= n)
		return 1;
	if (put(p, p->buf, p->pos) != HS_OK)
		return HS_ERR;
	memmove(p->buf, p->buf + p->pos, p->len - p->pos);
	p->base += p->pos;
	p->len -= p->pos;
	p->pos = 0;
	while (p->len < n && !p->eof) {
		int got = gzread(p->in, p->buf + p->len, (unsigned)(BUF_SIZE - p->len));
		if (got < 0)
			return gz_fail(p);
		if (got == 0) {
			p->eof = true;
			int zerr = Z_OK;
			gzerror(p->in, &zerr);
			if (zerr != Z_OK)
				return gz_fail(p);
		}
		p->len += (size_t)got;
	}
	return p->len >= n;
}

/* need: n bytes of the record starting at start, ending at end, or an error. */
static int need(struct pass *p, uint64_t start, uint64_t end, size_t n, const char *what)
{
	if (at_off(p) + n > end) {
		hs_error_set(p->r->err, (int64_t)start, "%s runs past the end of its record "
			     "(a damaged dump)", what);
		return HS_ERR;
	}
	if (n > BUF_SIZE) {
		hs_error_set(p->r->err, (int64_t)start, "%s of %zu bytes is larger than any "
			     "the JVM writes (a damaged dump)", what, n);
		return HS_ERR;
	}
	int h = have(p, n);
	if (h == 0)
		hs_error_set(p->r->err, (int64_t)start, "%s is cut off: the dump ends at "
			     "byte %llu (it is truncated): redact a complete dump", what,
			     (unsigned long long)(p->base + p->len));
	return h == 1 ? HS_OK : HS_ERR;
}

enum fill { F_COPY, F_ZERO, F_FILL1, F_FILL2 };

/*
 * stream: pass n bytes (of the record at start, ending at end), copied,
 * zeroed or filled with 'x' (F_FILL1 bytes, F_FILL2 big-endian chars).
 */
static int stream(struct pass *p, uint64_t start, uint64_t end, uint64_t n, enum fill f,
		  const char *what)
{
	if (at_off(p) + n > end || at_off(p) + n < n) {
		hs_error_set(p->r->err, (int64_t)start, "%s runs past the end of its record "
			     "(a damaged dump)", what);
		return HS_ERR;
	}
	uint64_t done = 0;
	while (done < n) {
		size_t k = n - done > CHUNK ? CHUNK : (size_t)(n - done);
		if (need(p, start, end, k, what) != HS_OK)
			return HS_ERR;
		uint8_t *b = p->buf + p->pos;
		if (p->r->writing) {
			if (f == F_ZERO)
				memset(b, 0, k);
			else if (f == F_FILL1)
				memset(b, 'x', k);
			else if (f == F_FILL2)
				for (size_t i = 0; i < k; i++)	/* chunks are even: CHUNK is */
					b[i] = (done + i) & 1 ? 'x' : 0;
		}
		p->pos += k;
		done += k;
	}
	return HS_OK;
}

static uint64_t rd_id(const struct redactor *r, const uint8_t *b)
{
	return r->ids == 8 ? hprof_u8(b) : hprof_u4(b);
}

static int type_size(const struct redactor *r, uint8_t t)
{
	switch (t) {
	case HPROF_OBJECT: return r->ids;
	case HPROF_BOOLEAN: case HPROF_BYTE: return 1;
	case HPROF_CHAR: case HPROF_SHORT: return 2;
	case HPROF_FLOAT: case HPROF_INT: return 4;
	case HPROF_DOUBLE: case HPROF_LONG: return 8;
	default: return 0;
	}
}

/* name: the UTF8 record id's text (*len bytes, not NUL-terminated), or NULL. */
static const char *name(const struct redactor *r, uint64_t id, size_t *len)
{
	uint64_t v;
	if (!id || !u64map_get(&r->utf8, id, &v))
		return NULL;
	*len = (size_t)(v & 0xffff);
	return r->names + (v >> 16);
}

static bool name_is(const struct redactor *r, uint64_t id, const char *s)
{
	size_t n;
	const char *t = name(r, id, &n);
	return t && n == strlen(s) && !memcmp(t, s, n);
}

static struct cls *find_class(struct redactor *r, uint64_t id)
{
	uint64_t k;
	return u64map_get(&r->classes, id, &k) ? &r->cls[k] : NULL;
}

/*
 * decide: the class's Java name and what it is to the redactor, once its
 * LOAD CLASS and name have been read; false while they are not known.
 */
static bool decide(struct redactor *r, struct cls *c)
{
	if (c->kept >= 0)
		return true;
	uint64_t nid;
	size_t n;
	const char *t = u64map_get(&r->load, c->id, &nid) ? name(r, nid, &n) : NULL;
	if (!t)
		return false;
	c->name = xstrndup(t, n);
	for (char *s = c->name; *s; s++)
		if (*s == '/')
			*s = '.';
	c->is_string = !strcmp(c->name, "java.lang.String");
	c->system = !strcmp(c->name, "java.lang.System");
	c->collection = !strncmp(c->name, "java.util.", 10);
	c->model_statics = !strcmp(c->name, "java.lang.Class$Atomic") ||
			   !strcmp(c->name, "java.util.concurrent.FutureTask");
	c->kept = 0;
	for (int i = 0; i < r->o->nkeep; i++)
		if (!fnmatch(r->o->keep[i], c->name, 0))
			c->kept = 1;
	r->st->kept_classes += (uint64_t)c->kept;
	return true;
}

/* use: the UTF8 record id names something (pass 1): its text is kept. */
static void use(struct redactor *r, uint64_t id)
{
	if (id && r->pass == 1)
		u64map_put(&r->used, id, 1);
}

/* want: look for the object id as kind (once). */
static void want(struct redactor *r, uint64_t id, uint8_t kind, uint64_t aux)
{
	uint64_t k;
	if (!id || u64map_get(&r->wanted, id, &k))
		return;
	r->want = xgrow(r->want, &r->capwant, r->nwant + 1, sizeof *r->want);
	r->want[r->nwant] = (struct want_ent){.aux = aux, .at = r->at, .pass = r->pass, .kind = kind};
	u64map_put(&r->wanted, id, r->nwant++);
	r->progress++;
	r->added_undone++;
}

/* met: the wanted object w has been read. */
static void met(struct redactor *r, struct want_ent *w)
{
	w->done = 1;
	r->progress++;
	if (w->pass == r->pass)
		r->added_undone--;
}

static struct want_ent *wanted(struct redactor *r, uint64_t id)
{
	uint64_t k;
	return u64map_get(&r->wanted, id, &k) ? &r->want[k] : NULL;
}

/*
 * layout: the instance field bytes of class c with its supers', in HPROF's
 * order (the class's own fields, then its super's...); -1 when a class of
 * the chain has no CLASS DUMP, -2 for a chain that loops.
 */
static int32_t layout(struct redactor *r, struct cls *c)
{
	if (c->bytes >= 0)
		return c->bytes;
	uint64_t sum = 0;
	int depth = 0;
	for (struct cls *s = c; s; depth++) {
		if (depth > 4096)
			return -2;
		for (uint32_t f = 0; f < s->nfields; f++)
			sum += (uint64_t)type_size(r, r->flds[s->first + f].type);
		if (!s->super)
			break;
		s = find_class(r, s->super);
		if (!s)
			return -1;
	}
	c->bytes = sum > INT32_MAX ? -2 : (int32_t)sum;
	return c->bytes;
}

/*
 * make_runs: the byte ranges of c's instances to zero: the primitive fields
 * but String.coder and those declared by a kept class.
 */
static void make_runs(struct redactor *r, struct cls *c)
{
	uint32_t off = 0, cap = 0;
	c->nruns = 0;
	c->kept_bytes = 0;
	c->kept_chain = false;
	for (struct cls *s = c; s; s = s->super ? find_class(r, s->super) : NULL) {
		decide(r, s);
		c->kept_chain |= s->kept == 1;
		for (uint32_t f = 0; f < s->nfields; f++) {
			const struct fld *fd = &r->flds[s->first + f];
			uint32_t sz = (uint32_t)type_size(r, fd->type);
			bool zero = fd->type != HPROF_OBJECT && s->kept != 1 &&
				    !(s->is_string && name_is(r, fd->name, "coder")) &&
				    !(s->collection && fd->type == HPROF_INT &&
				      (name_is(r, fd->name, "size") || name_is(r, fd->name, "count") ||
				       name_is(r, fd->name, "baseCount")));
			if (fd->type != HPROF_OBJECT && !zero)
				c->kept_bytes += sz;
			if (zero) {
				if (c->nruns && c->runs[2 * c->nruns - 2] + c->runs[2 * c->nruns - 1] == off) {
					c->runs[2 * c->nruns - 1] += sz;
				} else {
					if (c->nruns == cap) {
						cap = cap ? 2 * cap : 4;
						c->runs = xreallocarray(c->runs, 2 * (size_t)cap, sizeof *c->runs);
					}
					c->runs[2 * c->nruns] = off;
					c->runs[2 * c->nruns + 1] = sz;
					c->nruns++;
				}
			}
			off += sz;
		}
	}
	c->runs_made = true;
}

/* The System properties whose keys and values are kept (redact.h). */
static const char *const model_props[] = {
	"java.vm.compressedOopsMode", "sun.cpu.endian", "java.version",
	"java.runtime.version", "java.vm.name"
};

/* listed_key: the array's contents (Latin-1 byte[] or char[]) are a listed property key. */
static bool listed_key(const uint8_t *b, uint8_t type, uint32_t len)
{
	char s[64];
	uint32_t n = len;
	if (n >= sizeof s)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		unsigned ch = type == HPROF_CHAR ? hprof_u2(b + 2 * i) : b[i];
		if (!ch || ch > 127)
			return false;
		s[i] = (char)ch;
	}
	s[n] = 0;
	for (size_t k = 0; k < sizeof model_props / sizeof *model_props; k++)
		if (!strcmp(s, model_props[k]))
			return true;
	return false;
}

/*
 * follow: what a wanted instance (class c, field bytes v) leads to: the
 * references the search follows from it (enum want).
 */
static void follow(struct redactor *r, struct want_ent *w, uint64_t id, struct cls *c,
		   const uint8_t *v)
{
	/* want() may move r->want: w is not read after the first. */
	uint8_t kind = w->kind;
	uint64_t aux = w->aux;
	uint32_t off = 0;
	for (struct cls *s = c; s; s = s->super ? find_class(r, s->super) : NULL) {
		for (uint32_t f = 0; f < s->nfields; f++) {
			const struct fld *fd = &r->flds[s->first + f];
			int sz = type_size(r, fd->type);
			if (fd->type == HPROF_OBJECT) {
				uint64_t ref = rd_id(r, v + off);
				switch (kind) {
				case W_PROPS:
					if (name_is(r, fd->name, "map"))
						want(r, ref, W_MAP, 0);
					else if (name_is(r, fd->name, "table"))
						want(r, ref, W_TABLE, 0);
					else if (name_is(r, fd->name, "defaults"))
						want(r, ref, W_PROPS, 0);
					break;
				case W_MAP:
					if (name_is(r, fd->name, "table"))
						want(r, ref, W_TABLE, 0);
					break;
				case W_NODE:
					if (name_is(r, fd->name, "key"))
						want(r, ref, W_KEYSTR, id);
					else if (name_is(r, fd->name, "next"))
						want(r, ref, W_NODE, 0);
					else if (name_is(r, fd->name, "val") || name_is(r, fd->name, "value"))
						want(r, ref, W_VALSTR, id);
					break;
				case W_KEYSTR:
					if (c->is_string && name_is(r, fd->name, "value"))
						want(r, ref, W_KEYARR, aux);
					break;
				case W_VALSTR:
					if (c->is_string && name_is(r, fd->name, "value"))
						want(r, ref, W_VALARR, aux);
					break;
				case W_KEEPREF:
					if (c->is_string && name_is(r, fd->name, "value"))
						want(r, ref, W_KEEP, 0);
					break;
				case W_KEPT_CLASS:	/* the fields a kept class declares */
					if (s->kept == 1)
						want(r, ref, W_KEEPREF, 0);
					break;
				default:
					break;
				}
			}
			off += (uint32_t)sz;
		}
	}
}

/*
 * listed: a property's value (W_VALSTR, W_VALARR) whose key is listed: kept.
 * Known once every wanted object has been met: in the writing pass.
 */
static bool listed(struct redactor *r, const struct want_ent *w)
{
	const struct want_ent *node;
	if (!w || (w->kind != W_VALSTR && w->kind != W_VALARR))
		return false;
	node = wanted(r, w->aux);
	return node && node->kind == W_NODE && node->listed;
}

/* ---- the records ---- */

static int class_dump(struct pass *p, uint64_t end)
{
	struct redactor *r = p->r;
	uint64_t start = at_off(p);
	size_t ids = (size_t)r->ids, n = 1 + 7 * ids + 4 + 4 + 2;
	const char *what = "CLASS DUMP";
	if (need(p, start, end, n, what) != HS_OK)
		return HS_ERR;
	const uint8_t *d = p->buf + p->pos;
	uint64_t id = rd_id(r, d + 1), super = rd_id(r, d + 1 + ids + 4);
	unsigned ncp = hprof_u2(d + n - 2);
	size_t cp = n;
	for (unsigned i = 0; i < ncp; i++) {
		if (need(p, start, end, n + 3, what) != HS_OK)
			return HS_ERR;
		int sz = type_size(r, p->buf[p->pos + n + 2]);
		if (!sz)
			goto badtype;
		n += 3 + (size_t)sz;
	}
	if (need(p, start, end, n + 2, what) != HS_OK)
		return HS_ERR;
	unsigned nstatics = hprof_u2(p->buf + p->pos + n);
	n += 2;
	size_t statics = n;
	for (unsigned i = 0; i < nstatics; i++) {
		if (need(p, start, end, n + ids + 1, what) != HS_OK)
			return HS_ERR;
		int sz = type_size(r, p->buf[p->pos + n + ids]);
		if (!sz) {
			n += ids;
			goto badtype;
		}
		n += ids + 1 + (size_t)sz;
	}
	if (need(p, start, end, n + 2, what) != HS_OK)
		return HS_ERR;
	unsigned nfields = hprof_u2(p->buf + p->pos + n);
	n += 2;
	size_t fields = n;
	if (need(p, start, end, n + nfields * (ids + 1), what) != HS_OK)
		return HS_ERR;
	for (unsigned i = 0; i < nfields; i++)
		if (!type_size(r, p->buf[p->pos + n + i * (ids + 1) + ids])) {
			n += i * (ids + 1) + ids;
			goto badtype;
		}
	n += nfields * (ids + 1);
	uint8_t *b = p->buf + p->pos;

	struct cls *c = find_class(r, id);
	if (r->pass == 1 && c) {
		/* Files of several dumps (heapsh --dump N) dump a class again: the same one. */
		bool same = c->super == super && c->nfields == nfields;
		for (unsigned i = 0; same && i < nfields; i++)
			same = r->flds[c->first + i].type == b[fields + i * (ids + 1) + ids];
		if (!same) {
			hs_error_set(r->err, (int64_t)start, "a second CLASS DUMP of class 0x%llx "
				     "with other fields (a damaged dump)", (unsigned long long)id);
			return HS_ERR;
		}
	} else if (r->pass == 1) {
		r->cls = xgrow(r->cls, &r->capcls, r->ncls + 1, sizeof *r->cls);
		c = &r->cls[r->ncls];
		memset(c, 0, sizeof *c);
		c->id = id;
		c->super = super;
		c->bytes = -1;
		c->kept = -1;
		c->first = (uint32_t)r->nflds;
		c->nfields = nfields;
		r->flds = xgrow(r->flds, &r->capflds, r->nflds + nfields, sizeof *r->flds);
		for (unsigned i = 0; i < nfields; i++) {
			const uint8_t *f = b + fields + i * (ids + 1);
			r->flds[r->nflds++] = (struct fld){rd_id(r, f), f[ids]};
			use(r, rd_id(r, f));
		}
		u64map_put(&r->classes, id, r->ncls++);
	}
	if (!c) {
		hs_error_set(r->err, (int64_t)start, "CLASS DUMP of class 0x%llx was not there "
			     "in the first pass: the file changed while it was read",
			     (unsigned long long)id);
		return HS_ERR;
	}
	if (!decide(r, c) && r->pass == 1)
		r->again = true;	/* the name may come later */
	struct want_ent *w = wanted(r, id);
	if (w && !w->done)
		met(r, w);	/* a class object: nothing to follow */
	bool keep = c->kept == 1 || c->model_statics;
	/* The constant pool's and the statics' values. */
	for (unsigned i = 0; i < ncp; i++) {
		uint8_t *e = b + cp;
		int sz = type_size(r, e[2]);
		if (e[2] != HPROF_OBJECT) {
			if (keep) {
				r->st->kept_bytes += r->writing ? (uint64_t)sz : 0;
			} else if (r->writing) {
				memset(e + 3, 0, (size_t)sz);
				r->st->zeroed_bytes += (uint64_t)sz;
			}
		}
		cp += 3 + (size_t)sz;
	}
	for (unsigned i = 0; i < nstatics; i++) {
		uint8_t *e = b + statics;
		int sz = type_size(r, e[ids]);
		use(r, rd_id(r, e));
		if (e[ids] == HPROF_OBJECT) {
			uint64_t ref = rd_id(r, e + ids + 1);
			if (c->system && (name_is(r, rd_id(r, e), "props") ||
					  name_is(r, rd_id(r, e), "systemProperties")))
				want(r, ref, W_PROPS, 0);
			else if (c->kept == 1)
				want(r, ref, W_KEEPREF, 0);
		} else if (keep) {
			r->st->kept_bytes += r->writing ? (uint64_t)sz : 0;
		} else if (r->writing) {
			memset(e + ids + 1, 0, (size_t)sz);
			r->st->zeroed_bytes += (uint64_t)sz;
		}
		statics += ids + 1 + (size_t)sz;
	}
	p->pos += n;
	return HS_OK;
badtype:
	hs_error_set(r->err, (int64_t)(start + n), "CLASS DUMP has an invalid basic type %u "
		     "(a damaged dump)", p->buf[p->pos + n]);
	return HS_ERR;
}

static int instance_dump(struct pass *p, uint64_t end)
{
	struct redactor *r = p->r;
	uint64_t start = at_off(p);
	size_t ids = (size_t)r->ids, head = 1 + 2 * ids + 8;
	const char *what = "INSTANCE DUMP";
	if (need(p, start, end, head, what) != HS_OK)
		return HS_ERR;
	uint8_t *b = p->buf + p->pos;
	uint64_t id = rd_id(r, b + 1), cid = rd_id(r, b + 1 + ids + 4);
	uint32_t len = hprof_u4(b + 1 + 2 * ids + 4);
	if (need(p, start, end, head + (size_t)len, what) != HS_OK)
		return HS_ERR;
	b = p->buf + p->pos;
	uint8_t *v = b + head;
	r->st->objects += r->writing;
	struct cls *c = find_class(r, cid);
	int32_t bytes = c ? layout(r, c) : -1;
	if (bytes == -1 || bytes == -2 || (uint32_t)bytes != len) {
		if (r->pass == 1 && bytes == -1) {
			r->again = true;	/* its class may come later: told after pass 1 */
			goto skip;
		}
		if (!c || bytes == -1)
			hs_error_set(r->err, (int64_t)start, "INSTANCE DUMP of object 0x%llx: "
				     "its class 0x%llx (or a super class) has no CLASS DUMP, so "
				     "its references cannot be told from its values",
				     (unsigned long long)id, (unsigned long long)cid);
		else if (bytes == -2)
			hs_error_set(r->err, (int64_t)start, "INSTANCE DUMP of object 0x%llx: "
				     "the super classes of class 0x%llx loop (a damaged dump)",
				     (unsigned long long)id, (unsigned long long)cid);
		else
			hs_error_set(r->err, (int64_t)start, "INSTANCE DUMP of object 0x%llx has "
				     "%u field bytes; its class 0x%llx lays out %d (a damaged dump)",
				     (unsigned long long)id, len, (unsigned long long)cid, bytes);
		return HS_ERR;
	}
	struct want_ent *w = wanted(r, id);
	if (w && !w->done) {
		met(r, w);
		follow(r, w, id, c, v);
	}
	/* Classes and names are all known after pass 1: layouts are made then. */
	if (r->pass == 1) {
		if (r->o->nkeep)
			r->again = true;
		goto skip;
	}
	if (!c->runs_made)
		make_runs(r, c);
	if (c->kept_chain) {
		struct want_ent kept = {.kind = W_KEPT_CLASS, .done = 1};
		follow(r, &kept, id, c, v);
	}
	if (r->writing) {
		w = wanted(r, id);	/* follow may have moved it */
		bool keep = c->is_string && w && (w->kind == W_KEEPREF || listed(r, w));
		for (uint32_t k = 0; k < c->nruns; k++) {
			if (!keep)
				memset(v + c->runs[2 * k], 0, c->runs[2 * k + 1]);
			*(keep ? &r->st->kept_bytes : &r->st->zeroed_bytes) += c->runs[2 * k + 1];
		}
		r->st->kept_bytes += c->kept_bytes;
	}
skip:
	p->pos += head + len;
	return HS_OK;
}

static int obj_array_dump(struct pass *p, uint64_t end)
{
	struct redactor *r = p->r;
	uint64_t start = at_off(p);
	size_t ids = (size_t)r->ids, head = 1 + 2 * ids + 8;
	const char *what = "OBJECT ARRAY DUMP";
	if (need(p, start, end, head, what) != HS_OK)
		return HS_ERR;
	uint64_t id = rd_id(r, p->buf + p->pos + 1);
	uint64_t n = hprof_u4(p->buf + p->pos + 1 + ids + 4);
	r->st->objects += r->writing;
	p->pos += head;
	struct want_ent *w = wanted(r, id);
	if (w && !w->done && w->kind != W_TABLE)
		met(r, w);
	if (!w || w->done)
		return stream(p, start, end, n * ids, F_COPY, what);
	met(r, w);
	for (uint64_t i = 0; i < n; i++) {
		if (need(p, start, end, ids, what) != HS_OK)
			return HS_ERR;
		want(r, rd_id(r, p->buf + p->pos), W_NODE, 0);
		p->pos += ids;
	}
	return HS_OK;
}

static int prim_array_dump(struct pass *p, uint64_t end)
{
	struct redactor *r = p->r;
	uint64_t start = at_off(p);
	size_t ids = (size_t)r->ids, head = 1 + ids + 9;
	const char *what = "PRIMITIVE ARRAY DUMP";
	if (need(p, start, end, head, what) != HS_OK)
		return HS_ERR;
	const uint8_t *b = p->buf + p->pos;
	uint64_t id = rd_id(r, b + 1);
	uint32_t n = hprof_u4(b + 1 + ids + 4);
	uint8_t type = b[1 + ids + 8];
	int sz = type_size(r, type);
	if (!sz || type == HPROF_OBJECT) {
		hs_error_set(r->err, (int64_t)(start + 1 + ids + 8), "PRIMITIVE ARRAY DUMP has "
			     "an invalid element type %u (a damaged dump)", type);
		return HS_ERR;
	}
	r->st->objects += r->writing;
	bool nodata = b[0] == HPROF_GC_PRIM_ARRAY_NODATA;
	p->pos += head;
	if (nodata)
		return HS_OK;
	uint64_t bytes = (uint64_t)n * (uint64_t)sz;
	struct want_ent *w = wanted(r, id);
	if (w && !w->done) {
		met(r, w);
		if (w->kind == W_KEEPREF)
			w->kind = W_KEEP;
		if (w->kind == W_KEYARR && bytes < 256 && (type == HPROF_BYTE || type == HPROF_CHAR)) {
			if (need(p, start, end, (size_t)bytes, what) != HS_OK)
				return HS_ERR;
			struct want_ent *node = wanted(r, w->aux);
			if (node && listed_key(p->buf + p->pos, type, n)) {
				node->listed = 1;
				w->kind = W_KEEP;
			}
		}
	}
	enum fill f = F_ZERO;
	if (w && (w->kind == W_KEEP || listed(r, w)))
		f = F_COPY;
	else if (r->o->keep_lengths && type == HPROF_BYTE)
		f = F_FILL1;
	else if (r->o->keep_lengths && type == HPROF_CHAR)
		f = F_FILL2;
	if (r->writing)
		*(f == F_COPY ? &r->st->kept_bytes : &r->st->zeroed_bytes) += bytes;
	return stream(p, start, end, bytes, r->writing ? f : F_COPY, what);
}

/* heap_dump: the sub-records of a HEAP DUMP or HEAP DUMP SEGMENT ending at end. */
static int heap_dump(struct pass *p, uint64_t end)
{
	struct redactor *r = p->r;
	size_t ids = (size_t)r->ids;
	uint64_t count = 0;
	while (at_off(p) < end) {
		if ((++count & 4095) == 0 && hs_interrupted)
			return HS_INTERRUPTED;
		uint64_t start = at_off(p);
		if (!r->writing && start >= r->limit && !r->added_undone) {
			r->stopped = true;
			return HS_OK;
		}
		r->at = start;
		if (need(p, start, end, 1, "heap dump sub-record") != HS_OK)
			return HS_ERR;
		uint8_t tag = p->buf[p->pos];
		size_t n;
		switch (tag) {
		case HPROF_GC_ROOT_UNKNOWN: case HPROF_GC_ROOT_STICKY_CLASS:
		case HPROF_GC_ROOT_MONITOR_USED: case HPROF_GC_ROOT_INTERNED_STRING:
		case HPROF_GC_ROOT_FINALIZING: case HPROF_GC_ROOT_DEBUGGER:
		case HPROF_GC_ROOT_REFERENCE_CLEANUP: case HPROF_GC_ROOT_VM_INTERNAL:
		case HPROF_GC_UNREACHABLE:
			n = ids;
			break;
		case HPROF_GC_ROOT_JNI_GLOBAL:
			n = 2 * ids;
			break;
		case HPROF_GC_ROOT_JNI_LOCAL: case HPROF_GC_ROOT_JAVA_FRAME:
		case HPROF_GC_ROOT_THREAD_OBJ: case HPROF_GC_ROOT_JNI_MONITOR:
			n = ids + 8;
			break;
		case HPROF_GC_ROOT_NATIVE_STACK: case HPROF_GC_ROOT_THREAD_BLOCK:
			n = ids + 4;
			break;
		case HPROF_GC_HEAP_DUMP_INFO:	/* Android: heap type, heap name id */
			n = 4 + ids;
			if (need(p, start, end, 1 + n, "HEAP DUMP INFO") != HS_OK)
				return HS_ERR;
			use(r, rd_id(r, p->buf + p->pos + 5));
			break;
		case HPROF_GC_CLASS_DUMP:
			if (class_dump(p, end) != HS_OK)
				return HS_ERR;
			continue;
		case HPROF_GC_INSTANCE_DUMP:
			if (instance_dump(p, end) != HS_OK)
				return HS_ERR;
			continue;
		case HPROF_GC_OBJ_ARRAY_DUMP:
			if (obj_array_dump(p, end) != HS_OK)
				return HS_ERR;
			continue;
		case HPROF_GC_PRIM_ARRAY_DUMP: case HPROF_GC_PRIM_ARRAY_NODATA:
			if (prim_array_dump(p, end) != HS_OK)
				return HS_ERR;
			continue;
		default:
			hs_error_set(r->err, (int64_t)start, "unknown heap dump sub-record tag "
				     "0x%02x: heapsh --redact copies only records it knows hold no "
				     "values (it could hold anything)", tag);
			return HS_ERR;
		}
		if (need(p, start, end, 1 + n, "GC root") != HS_OK)
			return HS_ERR;
		p->pos += 1 + n;
	}
	return HS_OK;
}

/* one_pass: read the whole dump once (writing the copy to out when set). */
static int one_pass(struct redactor *r, gzFile out)
{
	struct pass p = {0};
	p.r = r;
	p.out = out;
	int st = HS_ERR;
	p.in = gzopen(r->path, "rb");
	if (!p.in) {
		hs_error_set(r->err, -1, "%s: cannot open: %s", r->path,
			     errno ? strerror(errno) : "out of memory");
		return HS_ERR;
	}
	gzbuffer(p.in, 1 << 20);
	p.buf = xmalloc(BUF_SIZE);
	/* The header: "JAVA PROFILE 1.0.x", NUL, u4 identifier size, u8 time. */
	static const char profile[] = "JAVA PROFILE 1.0.";
	size_t hl = sizeof profile + 1 + 12;
	int h = have(&p, hl);
	if (h == HS_ERR)
		goto done;
	if (h == 0 || memcmp(p.buf, profile, sizeof profile - 1) || p.buf[hl - 14] < '1' ||
	    p.buf[hl - 14] > '3' || p.buf[hl - 13]) {
		hs_error_set(r->err, 0, "%s: not an HPROF heap dump (no \"JAVA PROFILE 1.0.x\" "
			     "header); make one with 'jcmd PID GC.heap_dump FILE'", r->path);
		goto done;
	}
	int ids = (int)hprof_u4(p.buf + hl - 12);
	if (ids != 4 && ids != 8) {
		hs_error_set(r->err, (int64_t)(hl - 12), "%s: identifier size %d is not "
			     "supported (HPROF uses 4 or 8)", r->path, ids);
		goto done;
	}
	r->ids = ids;
	p.pos = hl;
	for (;;) {
		if (hs_interrupted) {
			st = HS_INTERRUPTED;
			goto done;
		}
		h = have(&p, 1);
		if (h == HS_ERR)
			goto done;
		if (h == 0)
			break;
		uint64_t start = at_off(&p);
		h = have(&p, 9);
		if (h != 1) {
			if (h == 0)
				hs_error_set(r->err, (int64_t)start, "record header cut off after "
					     "%zu of 9 bytes (the dump is truncated): redact a "
					     "complete dump", p.len - p.pos);
			goto done;
		}
		uint8_t tag = p.buf[p.pos];
		uint32_t len = hprof_u4(p.buf + p.pos + 5);
		uint64_t end = start + 9 + len;
		r->st->records += r->writing;
		p.pos += 9;
		switch (tag) {
		case HPROF_HEAP_DUMP: case HPROF_HEAP_DUMP_SEGMENT:
			if ((st = heap_dump(&p, end)) != HS_OK)
				goto done;
			if (r->stopped)
				goto done;
			st = HS_ERR;
			continue;
		case HPROF_UTF8:
			if (r->writing && len >= (uint32_t)ids) {
				/* Text no record names anything with (a string literal's
				 * symbol, say: HotSpot dumps its whole symbol table) is zeroed. */
				if (need(&p, start, end, (size_t)ids, "UTF8 record") != HS_OK)
					goto done;
				uint64_t v;
				bool keep = u64map_get(&r->used, rd_id(r, p.buf + p.pos), &v);
				p.pos += (size_t)ids;
				*(keep ? &r->st->kept_bytes : &r->st->zeroed_bytes) += len - (uint32_t)ids;
				if (stream(&p, start, end, len - (uint32_t)ids, keep ? F_COPY : F_ZERO,
					   "UTF8 record") != HS_OK)
					goto done;
				continue;
			}
			if (r->pass == 1 && len >= (uint32_t)ids && len - (uint32_t)ids <= 0xffff) {
				if (need(&p, start, end, len, "UTF8 record") != HS_OK)
					goto done;
				uint64_t id = rd_id(r, p.buf + p.pos);
				size_t n = len - (size_t)ids;
				r->names = xgrow(r->names, &r->names_cap, r->names_len + n + 1, 1);
				memcpy(r->names + r->names_len, p.buf + p.pos + ids, n);
				if (id)
					u64map_put(&r->utf8, id, r->names_len << 16 | n);
				r->names_len += n;
				p.pos += len;
				continue;
			}
			break;
		case HPROF_LOAD_CLASS:
			if (r->pass == 1) {
				if (len < 8 + 2 * (uint32_t)ids) {
					hs_error_set(r->err, (int64_t)start, "LOAD CLASS record of %u "
						     "bytes is too short (a damaged dump)", len);
					goto done;
				}
				if (need(&p, start, end, len, "LOAD CLASS record") != HS_OK)
					goto done;
				const uint8_t *b = p.buf + p.pos;
				uint64_t cid = rd_id(r, b + 4), nid = rd_id(r, b + 8 + ids);
				if (cid)
					u64map_put(&r->load, cid, nid);
				use(r, nid);
			}
			break;
		case HPROF_FRAME:	/* frame id, method name, signature, source file ids */
			if (r->pass == 1 && len >= 4 * (uint32_t)ids) {
				if (need(&p, start, end, 4 * (size_t)ids, "STACK FRAME record") != HS_OK)
					goto done;
				for (int k = 1; k < 4; k++)
					use(r, rd_id(r, p.buf + p.pos + k * ids));
			}
			break;
		case HPROF_START_THREAD:	/* serial, object, trace serial, three names */
			if (r->pass == 1 && len >= 8 + 4 * (uint32_t)ids) {
				if (need(&p, start, end, 8 + 4 * (size_t)ids, "START THREAD record") != HS_OK)
					goto done;
				for (int k = 0; k < 3; k++)
					use(r, rd_id(r, p.buf + p.pos + 8 + (1 + k) * ids));
			}
			break;
		/* Names, stack traces, threads and the old HPROF agent's statistics: no values. */
		case HPROF_UNLOAD_CLASS: case HPROF_TRACE:
		case HPROF_ALLOC_SITES: case HPROF_HEAP_SUMMARY:
		case HPROF_END_THREAD: case HPROF_CPU_SAMPLES: case HPROF_CONTROL_SETTINGS:
		case HPROF_HEAP_DUMP_END:
			break;
		default:
			hs_error_set(r->err, (int64_t)start, "unknown record tag 0x%02x: heapsh "
				     "--redact copies only records it knows hold no values (this "
				     "one could hold anything)", tag);
			goto done;
		}
		if (stream(&p, start, end, len, F_COPY, "record") != HS_OK)
			goto done;
	}
	r->st->in_bytes = p.base + p.len;
	st = put(&p, p.buf, p.len);
	/* The copy has every byte of the dump, or it is no copy. */
	if (st == HS_OK && out && p.written != r->st->in_bytes) {
		hs_error_set(r->err, (int64_t)p.written, "internal error: the copy has %llu "
			     "bytes, the dump %llu", (unsigned long long)p.written,
			     (unsigned long long)r->st->in_bytes);
		st = HS_ERR;
	}
done:
	r->st->read_bytes += p.base + p.pos;
	free(p.buf);
	gzclose(p.in);
	return st;
}

static void redactor_free(struct redactor *r)
{
	u64map_free(&r->utf8);
	u64map_free(&r->load);
	u64map_free(&r->used);
	u64map_free(&r->classes);
	u64map_free(&r->wanted);
	for (uint64_t i = 0; i < r->ncls; i++) {
		free(r->cls[i].name);
		free(r->cls[i].runs);
	}
	free(r->cls);
	free(r->flds);
	free(r->names);
	free(r->want);
}

/* undone: wanted objects not yet met. */
static uint64_t undone(const struct redactor *r)
{
	uint64_t n = 0;
	for (uint64_t i = 0; i < r->nwant; i++)
		n += !r->want[i].done;
	return n;
}

int hprof_redact(const char *in, const char *out, const struct hprof_redact_opts *opts,
		 struct hprof_redact_stats *stats, struct hs_error *err)
{
	struct hprof_redact_opts defaults = {0};
	struct hprof_redact_stats local;
	struct redactor r;
	memset(&r, 0, sizeof r);
	r.o = opts ? opts : &defaults;
	r.st = stats ? stats : &local;
	memset(r.st, 0, sizeof *r.st);
	r.err = err;
	r.path = in;
	char *tmp = NULL;
	gzFile gz = NULL;
	int st = HS_ERR;
	u64map_init(&r.utf8, 1 << 12);
	u64map_init(&r.load, 1 << 10);
	u64map_init(&r.used, 1 << 12);
	u64map_init(&r.classes, 1 << 10);
	u64map_init(&r.wanted, 64);

	struct stat si, so;
	if (stat(in, &si) != 0) {
		hs_error_set(err, -1, "%s: cannot open: %s", in, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(si.st_mode)) {
		hs_error_set(err, -1, "%s: not a regular file", in);
		goto fail;
	}
	if (!strcmp(in, out) || (stat(out, &so) == 0 && so.st_dev == si.st_dev &&
				 so.st_ino == si.st_ino)) {
		hs_error_set(err, -1, "%s: the copy cannot replace the dump it is made from; "
			     "name another OUT", out);
		goto fail;
	}
	/* The copy's file first: a folder that is not there fails before any reading. */
	size_t ol = strlen(out);
	tmp = xasprintf("%s.tmp-redact-%ld", out, (long)getpid());
	bool gzip = ol >= 3 && !strcmp(out + ol - 3, ".gz");
	char mode[8];
	int level = r.o->gzip_level >= 1 && r.o->gzip_level <= 9 ? r.o->gzip_level : 1;
	snprintf(mode, sizeof mode, gzip ? "wb%d" : "wbT", level);
	errno = 0;
	gz = gzopen(tmp, mode);
	if (!gz) {
		hs_error_set(err, -1, "%s: cannot create the copy: %s", out,
			     errno ? strerror(errno) : "out of memory");
		goto fail;
	}
	gzbuffer(gz, 1 << 20);
	/*
	 * Pass 1, and more while objects to keep are being found. An object
	 * wanted at offset X and not met by the end of that pass is before X
	 * (or nowhere): the next pass may stop at the last such X, unless
	 * what it wants in turn is not met by then. Past MAX_PASSES, what was
	 * not found is zeroed: the side to err on.
	 */
	r.limit = UINT64_MAX;
	for (r.pass = 1; ; r.pass++) {
		r.progress = 0;
		r.added_undone = 0;
		r.stopped = false;
		r.again = false;
		if ((st = one_pass(&r, NULL)) != HS_OK)
			goto fail;
		st = HS_ERR;
		if (r.pass >= MAX_PASSES - 1 || !((r.progress && undone(&r)) || r.again))
			break;
		r.limit = 0;
		for (uint64_t i = 0; i < r.nwant; i++)
			if (!r.want[i].done && r.want[i].at >= r.limit)
				r.limit = r.want[i].at + 1;
		if (r.again)
			r.limit = UINT64_MAX;
	}
	r.pass++;
	r.writing = true;
	r.stopped = false;
	r.limit = UINT64_MAX;
	if ((st = one_pass(&r, gz)) != HS_OK)
		goto fail;
	st = HS_ERR;
	if (r.stopped) {
		hs_error_set(err, -1, "internal error: the writing pass stopped early");
		goto fail;
	}
	r.st->passes = r.pass;
	int zst = gzclose(gz);
	gz = NULL;
	if (zst != Z_OK) {
		hs_error_set(err, -1, "%s: cannot write: %s", tmp, strerror(errno));
		goto fail;
	}
	if (rename(tmp, out) != 0) {
		hs_error_set(err, -1, "%s: cannot rename to %s: %s", tmp, out, strerror(errno));
		goto fail;
	}
	free(tmp);
	redactor_free(&r);
	return HS_OK;
fail:
	if (gz)
		gzclose(gz);
	if (tmp)
		unlink(tmp);
	free(tmp);
	redactor_free(&r);
	return st;
}
