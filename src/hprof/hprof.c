/* hprof.c - HPROF file access and record decoding; see hprof.h. */
#include "hprof.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "../base/big.h"
#include "../base/filemap.h"

/* NEED: fail unless n bytes remain between cur and lim. */
#define NEED(cur, lim, n) ((cur) <= (lim) && (lim) - (cur) >= (size_t)(n))

/*
 * inflate_file: read a gzip file (possibly many concatenated members, as
 * HotSpot's -gz writes) into one big array (big.h: past the memory budget,
 * a file-backed one). A stream that ends early
 * keeps what was inflated and sets *truncated.
 */
static int inflate_file(const char *path, uint8_t **data, size_t *size,
			bool *truncated, struct hs_error *err)
{
	gzFile gz = gzopen(path, "rb");
	if (!gz) {
		hs_error_set(err, -1, "%s: cannot open: %s", path, strerror(errno));
		return HS_ERR;
	}
	gzbuffer(gz, 1 << 20);
	size_t cap = 1 << 24, n = 0;
	uint8_t *buf = big_alloc(cap, 1);
	for (;;) {
		if (cap - n < (1u << 20)) {
			cap *= 2;
			buf = big_realloc(buf, cap, 1);
		}
		int got = gzread(gz, buf + n, (unsigned)(cap - n > (1u << 30) ? (1u << 30) : cap - n));
		if (got > 0) {
			n += (size_t)got;
			continue;
		}
		if (got < 0) {
			int zerr;
			gzerror(gz, &zerr);
			if (n == 0 && zerr != Z_BUF_ERROR) {
				hs_error_set(err, -1, "%s: not a readable gzip file", path);
				big_free(buf);
				gzclose(gz);
				return HS_ERR;
			}
			*truncated = true;
		} else if (!gzeof(gz)) {
			*truncated = true;
		}
		break;
	}
	/* zlib reports a cut-off stream as EOF with an error code. */
	int zerr = Z_OK;
	gzerror(gz, &zerr);
	if (zerr == Z_BUF_ERROR || zerr == Z_DATA_ERROR)
		*truncated = true;
	gzclose(gz);
	*data = buf;
	*size = n;
	return HS_OK;
}

int hprof_open(const char *path, struct hprof **out, struct hs_error *err)
{
	struct hprof *h = xcalloc(1, sizeof *h);
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		hs_error_set(err, -1, "%s: cannot open: %s", path, strerror(errno));
		goto fail;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		hs_error_set(err, -1, "%s: not a regular file", path);
		goto fail;
	}
	h->file_size = (size_t)st.st_size;
	h->path = xstrdup(path);
	uint8_t magic[2] = {0, 0};
	if (st.st_size >= 2 && pread(fd, magic, 2, 0) != 2)
		magic[0] = 0;
	if (magic[0] == 0x1f && magic[1] == 0x8b) {
		uint8_t *buf;
		if (inflate_file(path, &buf, &h->size, &h->truncated, err) != HS_OK)
			goto fail;
		h->data = buf;
		h->gzip = true;
	} else if (st.st_size > 0) {
		void *m = mmap(NULL, h->file_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			hs_error_set(err, -1, "%s: cannot map: %s", path, strerror(errno));
			goto fail;
		}
		madvise(m, h->file_size, MADV_SEQUENTIAL);
		fm_note(m, h->file_size, 0, path);
		h->data = m;
		h->size = h->file_size;
	}
	close(fd);
	fd = -1;

	/* 1.0.1 and 1.0.2 (HotSpot, the old HPROF agent), 1.0.3 (Android's ART and Dalvik). */
	static const char profile[] = "JAVA PROFILE 1.0.";
	size_t ml = sizeof profile + 1;	/* the minor digit, then the NUL the format has */
	if (h->size < ml + 12 || memcmp(h->data, profile, sizeof profile - 1) ||
	    h->data[ml - 2] < '1' || h->data[ml - 2] > '3' || h->data[ml - 1]) {
		hs_error_set(err, 0, "%s: not an HPROF heap dump (no \"JAVA PROFILE 1.0.x\" "
			     "header); make one with 'jcmd PID GC.heap_dump FILE'", path);
		goto fail;
	}
	h->minor = h->data[ml - 2] - '0';
	h->id_size = (int)hprof_u4(h->data + ml);
	if (h->id_size != 4 && h->id_size != 8) {
		hs_error_set(err, (int64_t)ml, "%s: identifier size %d is not supported "
			     "(HPROF uses 4 or 8)", path, h->id_size);
		goto fail;
	}
	h->timestamp_ms = hprof_u8(h->data + ml + 4);
	h->body = ml + 12;
	*out = h;
	return HS_OK;
fail:
	if (fd >= 0)
		close(fd);
	hprof_close(h);
	*out = NULL;
	return HS_ERR;
}

void hprof_close(struct hprof *h)
{
	if (!h)
		return;
	if (h->data) {
		if (h->gzip) {
			big_free((void *)h->data);
		} else {
			fm_forget(h->data, h->size);
			munmap((void *)h->data, h->size);
		}
	}
	free(h->path);
	free(h);
}

int hprof_type_size(const struct hprof *h, int t)
{
	switch (t) {
	case HPROF_OBJECT: return h->id_size;
	case HPROF_BOOLEAN: case HPROF_BYTE: return 1;
	case HPROF_CHAR: case HPROF_SHORT: return 2;
	case HPROF_FLOAT: case HPROF_INT: return 4;
	case HPROF_DOUBLE: case HPROF_LONG: return 8;
	default: return 0;
	}
}

const char *hprof_type_name(int t)
{
	switch (t) {
	case HPROF_OBJECT: return "object";
	case HPROF_BOOLEAN: return "boolean";
	case HPROF_CHAR: return "char";
	case HPROF_FLOAT: return "float";
	case HPROF_DOUBLE: return "double";
	case HPROF_BYTE: return "byte";
	case HPROF_SHORT: return "short";
	case HPROF_INT: return "int";
	case HPROF_LONG: return "long";
	default: return "?";
	}
}

int hprof_record_next(const struct hprof *h, size_t *pos,
		      struct hprof_rec *r, struct hs_error *err)
{
	size_t p = *pos;
	if (p >= h->size)
		return 0;
	if (!NEED(p, h->size, 9)) {
		hs_error_set(err, (int64_t)p, "record header cut off after %zu of 9 bytes "
			     "(the dump is truncated)", h->size - p);
		return HS_ERR;
	}
	r->tag = h->data[p];
	r->off = p;
	r->len = hprof_u4(h->data + p + 5);
	r->body = p + 9;
	if (!NEED(r->body, h->size, r->len)) {
		hs_error_set(err, (int64_t)p, "record (tag 0x%02x) of %u bytes runs %zu bytes "
			     "past the end of the file (the dump is truncated)",
			     r->tag, r->len, r->len - (h->size - r->body));
		return HS_ERR;
	}
	*pos = r->body + r->len;
	return 1;
}

int hprof_class_dump_read(const struct hprof *h, size_t off, size_t end,
			  struct hprof_class_dump *cd, struct hs_error *err)
{
	const uint8_t *d = h->data;
	size_t ids = (size_t)h->id_size, p = off + 1;
	if (!NEED(p, end, 7 * ids + 4 + 4 + 2))
		goto cut;
	cd->id = hprof_id(h, d + p);
	p += ids + 4;	/* id, stack trace serial */
	cd->super_id = hprof_id(h, d + p); p += ids;
	cd->loader_id = hprof_id(h, d + p); p += ids;
	cd->signers_id = hprof_id(h, d + p); p += ids;
	cd->domain_id = hprof_id(h, d + p); p += ids;
	p += 2 * ids;	/* two reserved ids */
	cd->instance_size = hprof_u4(d + p); p += 4;
	cd->ncp = hprof_u2(d + p); p += 2;
	cd->cp = p;
	for (unsigned i = 0; i < cd->ncp; i++) {
		if (!NEED(p, end, 3))
			goto cut;
		int sz = hprof_type_size(h, d[p + 2]);
		if (!sz)
			goto badtype;
		if (!NEED(p, end, 3 + (size_t)sz))
			goto cut;
		p += 3 + (size_t)sz;
	}
	if (!NEED(p, end, 2))
		goto cut;
	cd->nstatics = hprof_u2(d + p); p += 2;
	cd->statics = p;
	for (unsigned i = 0; i < cd->nstatics; i++) {
		if (!NEED(p, end, ids + 1))
			goto cut;
		int sz = hprof_type_size(h, d[p + ids]);
		if (!sz)
			goto badtype;
		if (!NEED(p, end, ids + 1 + (size_t)sz))
			goto cut;
		p += ids + 1 + (size_t)sz;
	}
	if (!NEED(p, end, 2))
		goto cut;
	cd->nfields = hprof_u2(d + p); p += 2;
	cd->fields = p;
	if (!NEED(p, end, (ids + 1) * cd->nfields))
		goto cut;
	for (unsigned i = 0; i < cd->nfields; i++)
		if (!hprof_type_size(h, d[p + i * (ids + 1) + ids])) {
			p += i * (ids + 1) + ids;
			goto badtype;
		}
	p += (ids + 1) * cd->nfields;
	cd->end = p;
	return HS_OK;
cut:
	hs_error_set(err, (int64_t)off, "CLASS DUMP runs past the end of its record");
	return HS_ERR;
badtype:
	hs_error_set(err, (int64_t)p, "CLASS DUMP has an invalid basic type %u", d[p]);
	return HS_ERR;
}

int hprof_sub_next(const struct hprof *h, size_t *pos, size_t end,
		   struct hprof_sub *s, struct hs_error *err)
{
	const uint8_t *d = h->data;
	size_t p = *pos, ids = (size_t)h->id_size;
	if (p >= end)
		return 0;
	s->tag = d[p];
	s->off = p;
	s->thread_serial = 0;
	s->frame = -1;
	s->trace_serial = 0;
	s->extra_id = 0;
	p++;
	size_t need;	/* bytes after the tag, id included */
	switch (s->tag) {
	case HPROF_GC_ROOT_UNKNOWN: case HPROF_GC_ROOT_STICKY_CLASS:
	case HPROF_GC_ROOT_MONITOR_USED: case HPROF_GC_ROOT_INTERNED_STRING:
	case HPROF_GC_ROOT_FINALIZING: case HPROF_GC_ROOT_DEBUGGER:
	case HPROF_GC_ROOT_REFERENCE_CLEANUP: case HPROF_GC_ROOT_VM_INTERNAL:
	case HPROF_GC_UNREACHABLE:
		need = ids;
		break;
	case HPROF_GC_ROOT_JNI_GLOBAL:
		need = 2 * ids;
		break;
	case HPROF_GC_ROOT_JNI_LOCAL: case HPROF_GC_ROOT_JAVA_FRAME:
	case HPROF_GC_ROOT_THREAD_OBJ: case HPROF_GC_ROOT_JNI_MONITOR:
		need = ids + 8;
		break;
	case HPROF_GC_ROOT_NATIVE_STACK: case HPROF_GC_ROOT_THREAD_BLOCK:
		need = ids + 4;
		break;
	case HPROF_GC_HEAP_DUMP_INFO:
		need = 4 + ids;
		break;
	case HPROF_GC_CLASS_DUMP: {
		struct hprof_class_dump cd;
		if (hprof_class_dump_read(h, s->off, end, &cd, err) != HS_OK)
			return HS_ERR;
		s->id = cd.id;
		s->end = *pos = cd.end;
		return 1;
	}
	case HPROF_GC_INSTANCE_DUMP:
		if (!NEED(p, end, 2 * ids + 8))
			goto cut;
		need = 2 * ids + 8 + hprof_u4(d + p + 2 * ids + 4);
		break;
	case HPROF_GC_OBJ_ARRAY_DUMP:
		if (!NEED(p, end, ids + 8))
			goto cut;
		need = 2 * ids + 8 + (size_t)hprof_u4(d + p + ids + 4) * ids;
		break;
	case HPROF_GC_PRIM_ARRAY_DUMP: case HPROF_GC_PRIM_ARRAY_NODATA: {
		if (!NEED(p, end, ids + 9))
			goto cut;
		int sz = hprof_type_size(h, d[p + ids + 8]);
		if (!sz || d[p + ids + 8] == HPROF_OBJECT) {
			hs_error_set(err, (int64_t)(p + ids + 8),
				     "PRIMITIVE ARRAY %s has invalid element type %u",
				     s->tag == HPROF_GC_PRIM_ARRAY_DUMP ? "DUMP" : "NODATA",
				     d[p + ids + 8]);
			return HS_ERR;
		}
		/* NODATA (Android): the length and type only, no elements follow. */
		need = ids + 9 + (s->tag == HPROF_GC_PRIM_ARRAY_NODATA
					  ? 0 : (size_t)hprof_u4(d + p + ids + 4) * (size_t)sz);
		break;
	}
	default:
		hs_error_set(err, (int64_t)s->off, "unknown heap dump sub-record tag 0x%02x",
			     s->tag);
		return HS_ERR;
	}
	if (!NEED(p, end, need))
		goto cut;
	s->id = hprof_id(h, d + p);
	switch (s->tag) {
	case HPROF_GC_ROOT_JNI_GLOBAL:
		s->extra_id = hprof_id(h, d + p + ids);
		break;
	case HPROF_GC_ROOT_JNI_LOCAL: case HPROF_GC_ROOT_JAVA_FRAME:
	case HPROF_GC_ROOT_JNI_MONITOR:
		s->thread_serial = hprof_u4(d + p + ids);
		s->frame = (int32_t)hprof_u4(d + p + ids + 4);
		break;
	case HPROF_GC_ROOT_THREAD_OBJ:
		s->thread_serial = hprof_u4(d + p + ids);
		s->trace_serial = hprof_u4(d + p + ids + 4);
		break;
	case HPROF_GC_ROOT_NATIVE_STACK: case HPROF_GC_ROOT_THREAD_BLOCK:
		s->thread_serial = hprof_u4(d + p + ids);
		break;
	default:
		break;
	}
	s->end = *pos = p + need;
	return 1;
cut:
	hs_error_set(err, (int64_t)s->off, "heap dump sub-record (tag 0x%02x) runs past "
		     "the end of its record", s->tag);
	return HS_ERR;
}

void hprof_object_read(const struct hprof *h, size_t off, struct hprof_object_rec *o)
{
	const uint8_t *d = h->data + off;
	size_t ids = (size_t)h->id_size;
	o->tag = d[0];
	o->id = hprof_id(h, d + 1);
	o->class_id = 0;
	o->length = 0;
	o->elem_type = 0;
	o->values = 0;
	switch (o->tag) {
	case HPROF_GC_INSTANCE_DUMP:
		o->class_id = hprof_id(h, d + 1 + ids + 4);
		o->length = hprof_u4(d + 1 + 2 * ids + 4);
		o->values = off + 1 + 2 * ids + 8;
		break;
	case HPROF_GC_OBJ_ARRAY_DUMP:
		o->length = hprof_u4(d + 1 + ids + 4);
		o->class_id = hprof_id(h, d + 1 + ids + 8);
		o->elem_type = HPROF_OBJECT;
		o->values = off + 1 + 2 * ids + 8;
		break;
	case HPROF_GC_PRIM_ARRAY_DUMP:
		o->length = hprof_u4(d + 1 + ids + 4);
		o->elem_type = d[1 + ids + 8];
		o->values = off + 1 + ids + 9;
		break;
	case HPROF_GC_PRIM_ARRAY_NODATA:	/* Android: the length and type, no elements */
		o->length = hprof_u4(d + 1 + ids + 4);
		o->elem_type = d[1 + ids + 8];
		break;
	default:
		break;
	}
}
