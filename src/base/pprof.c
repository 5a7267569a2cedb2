/*
 * pprof.c - the pprof profile builder (pprof.h): interning tables for the
 * profile's strings, functions and locations, samples in flat arrays, and
 * the encoding by protobuf-c's code generated from profile.proto.
 */
#include "pprof.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "u64map.h"
#include "u64map.h"

/* A set of byte strings: ids are indices into keys, found by an open-addressing hash of slots. */
struct strset {
	char **keys;
	size_t *lens;
	size_t n, cap;
	uint32_t *slots;	/* index + 1; 0 empty */
	size_t nslots;		/* a power of two, at least twice n */
};

struct func {
	int64_t name, system_name, file;	/* string ids */
};

struct pprof {
	int ntypes, default_type;
	int64_t *type_name, *type_unit;	/* string ids, ntypes each */
	struct strset strings;		/* the string table; [0] is "" */
	struct strset funckeys;		/* "name\0system\0file" of each function */
	struct func *funcs;		/* [funckeys.n] */
	struct u64map locmap;		/* (function << 32 | line) + 1 -> location id */
	uint64_t *loc_func;		/* [nlocs] */
	int64_t *loc_line;
	size_t nlocs, caplocs;
	uint64_t *stack;		/* every sample's locations, one after another */
	size_t nstack, capstack;
	size_t *stack_at;		/* [nsamples + 1] where each sample's locations start */
	int64_t *values;		/* [nsamples * ntypes] */
	int64_t *labels;		/* every sample's labels: key, value string ids */
	size_t nlabels, caplabels;	/* ... in pairs */
	size_t *labels_at;		/* [nsamples + 1] where each sample's labels start (pairs) */
	size_t nsamples, capsamples;
	int64_t time_ns, duration_ns, period;
	int64_t period_type, period_unit;	/* string ids; 0: no period */
	int64_t *comments;
	size_t ncomments;
};

static void strset_grow(struct strset *s)
{
	size_t nslots = s->nslots ? s->nslots * 2 : 64;
	uint32_t *slots = xcalloc(nslots, sizeof *slots);
	for (size_t i = 0; i < s->n; i++) {
		size_t j = (size_t)u64_fnv1a_n(s->keys[i], s->lens[i], U64_FNV_BASIS) & (nslots - 1);
		while (slots[j])
			j = (j + 1) & (nslots - 1);
		slots[j] = (uint32_t)(i + 1);
	}
	free(s->slots);
	s->slots = slots;
	s->nslots = nslots;
}

/* strset_id: the index of the n bytes at key, added (copied, NUL-terminated) when new. */
static size_t strset_id(struct strset *s, const char *key, size_t n)
{
	if (2 * (s->n + 1) > s->nslots)
		strset_grow(s);
	size_t j = (size_t)u64_fnv1a_n(key, n, U64_FNV_BASIS) & (s->nslots - 1);
	for (; s->slots[j]; j = (j + 1) & (s->nslots - 1)) {
		size_t i = s->slots[j] - 1;
		if (s->lens[i] == n && !memcmp(s->keys[i], key, n))
			return i;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->keys = xreallocarray(s->keys, s->cap, sizeof *s->keys);
		s->lens = xreallocarray(s->lens, s->cap, sizeof *s->lens);
	}
	char *copy = xmalloc(n + 1);
	memcpy(copy, key, n);
	copy[n] = 0;
	s->keys[s->n] = copy;
	s->lens[s->n] = n;
	s->slots[j] = (uint32_t)(s->n + 1);
	return s->n++;
}

static void strset_free(struct strset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->keys[i]);
	free(s->keys);
	free(s->lens);
	free(s->slots);
}

static int64_t str(struct pprof *p, const char *s)
{
	return (int64_t)strset_id(&p->strings, s ? s : "", s ? strlen(s) : 0);
}

struct pprof *pprof_new(int ntypes, const char *const *types, const char *const *units,
			int default_type)
{
	struct pprof *p = xcalloc(1, sizeof *p);
	str(p, "");
	p->ntypes = ntypes;
	p->default_type = default_type;
	p->type_name = xcalloc((size_t)ntypes, sizeof *p->type_name);
	p->type_unit = xcalloc((size_t)ntypes, sizeof *p->type_unit);
	for (int k = 0; k < ntypes; k++) {
		p->type_name[k] = str(p, types[k]);
		p->type_unit[k] = str(p, units[k]);
	}
	u64map_init(&p->locmap, 1024);
	p->stack_at = xcalloc(1, sizeof *p->stack_at);
	p->labels_at = xcalloc(1, sizeof *p->labels_at);
	return p;
}

void pprof_free(struct pprof *p)
{
	if (!p)
		return;
	free(p->type_name);
	free(p->type_unit);
	strset_free(&p->strings);
	strset_free(&p->funckeys);
	free(p->funcs);
	u64map_free(&p->locmap);
	free(p->loc_func);
	free(p->loc_line);
	free(p->stack);
	free(p->stack_at);
	free(p->values);
	free(p->labels);
	free(p->labels_at);
	free(p->comments);
	free(p);
}

uint64_t pprof_function(struct pprof *p, const char *name, const char *system_name,
			const char *file)
{
	if (!system_name)
		system_name = name;
	size_t a = strlen(name), b = strlen(system_name), c = file ? strlen(file) : 0;
	char *key = xmalloc(a + b + c + 2);
	memcpy(key, name, a + 1);
	memcpy(key + a + 1, system_name, b + 1);
	if (c)
		memcpy(key + a + b + 2, file, c);
	size_t before = p->funckeys.n;
	size_t id = strset_id(&p->funckeys, key, a + b + c + 2);
	free(key);
	if (p->funckeys.n != before) {
		p->funcs = xreallocarray(p->funcs, p->funckeys.cap, sizeof *p->funcs);
		p->funcs[id].name = str(p, name);
		p->funcs[id].system_name = str(p, system_name);
		p->funcs[id].file = str(p, file);
	}
	return (uint64_t)id + 1;
}

uint64_t pprof_location(struct pprof *p, uint64_t function, int64_t line)
{
	uint64_t key = (function << 32 | (uint32_t)line) + 1, id;
	if (u64map_get(&p->locmap, key, &id))
		return id;
	if (p->nlocs == p->caplocs) {
		p->caplocs = p->caplocs ? p->caplocs * 2 : 256;
		p->loc_func = xreallocarray(p->loc_func, p->caplocs, sizeof *p->loc_func);
		p->loc_line = xreallocarray(p->loc_line, p->caplocs, sizeof *p->loc_line);
	}
	p->loc_func[p->nlocs] = function;
	p->loc_line[p->nlocs] = line;
	id = ++p->nlocs;
	u64map_put(&p->locmap, key, id);
	return id;
}

void pprof_sample(struct pprof *p, const uint64_t *locs, size_t nlocs, const int64_t *values,
		  const char *const *labels, size_t nlabels)
{
	if (p->nlabels + nlabels > p->caplabels) {
		while (p->nlabels + nlabels > p->caplabels)
			p->caplabels = p->caplabels ? p->caplabels * 2 : 256;
		p->labels = xreallocarray(p->labels, p->caplabels, 2 * sizeof *p->labels);
	}
	for (size_t k = 0; k < nlabels; k++) {
		p->labels[2 * (p->nlabels + k)] = str(p, labels[2 * k]);
		p->labels[2 * (p->nlabels + k) + 1] = str(p, labels[2 * k + 1]);
	}
	p->nlabels += nlabels;
	if (p->nstack + nlocs > p->capstack) {
		while (p->nstack + nlocs > p->capstack)
			p->capstack = p->capstack ? p->capstack * 2 : 1024;
		p->stack = xreallocarray(p->stack, p->capstack, sizeof *p->stack);
	}
	if (nlocs)
		memcpy(p->stack + p->nstack, locs, nlocs * sizeof *locs);
	p->nstack += nlocs;
	if (p->nsamples == p->capsamples) {
		p->capsamples = p->capsamples ? p->capsamples * 2 : 256;
		p->stack_at = xreallocarray(p->stack_at, p->capsamples + 1, sizeof *p->stack_at);
		p->labels_at = xreallocarray(p->labels_at, p->capsamples + 1, sizeof *p->labels_at);
		p->values = xreallocarray(p->values, p->capsamples * (size_t)p->ntypes,
					  sizeof *p->values);
	}
	memcpy(p->values + p->nsamples * (size_t)p->ntypes, values,
	       (size_t)p->ntypes * sizeof *values);
	p->labels_at[p->nsamples + 1] = p->nlabels;
	p->stack_at[++p->nsamples] = p->nstack;
}

size_t pprof_samples(const struct pprof *p)
{
	return p->nsamples;
}

void pprof_time(struct pprof *p, int64_t time_ns, int64_t duration_ns)
{
	p->time_ns = time_ns;
	p->duration_ns = duration_ns;
}

void pprof_period(struct pprof *p, const char *type, const char *unit, int64_t period)
{
	p->period = period;
	p->period_type = period ? str(p, type) : 0;
	p->period_unit = period ? str(p, unit) : 0;
}

void pprof_comment(struct pprof *p, const char *text)
{
	p->comments = xreallocarray(p->comments, p->ncomments + 1, sizeof *p->comments);
	p->comments[p->ncomments++] = str(p, text);
}

/* pack: the profile as protobuf bytes, *len of them, in new memory (free()). */
static uint8_t *pack(const struct pprof *p, size_t *len)
{
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	size_t nt = (size_t)p->ntypes;
	Perftools__Profiles__ValueType *vt = xcalloc(nt, sizeof *vt), **vtp = xcalloc(nt, sizeof *vtp);
	for (size_t k = 0; k < nt; k++) {
		perftools__profiles__value_type__init(&vt[k]);
		vt[k].type = p->type_name[k];
		vt[k].unit = p->type_unit[k];
		vtp[k] = &vt[k];
	}
	prof.n_sample_type = nt;
	prof.sample_type = vtp;
	Perftools__Profiles__Sample *sm = xcalloc(p->nsamples + 1, sizeof *sm);
	Perftools__Profiles__Sample **smp = xcalloc(p->nsamples + 1, sizeof *smp);
	Perftools__Profiles__Label *lb = xcalloc(p->nlabels + 1, sizeof *lb);
	Perftools__Profiles__Label **lbp = xcalloc(p->nlabels + 1, sizeof *lbp);
	for (size_t i = 0; i < p->nlabels; i++) {
		perftools__profiles__label__init(&lb[i]);
		lb[i].key = p->labels[2 * i];
		lb[i].str = p->labels[2 * i + 1];
		lbp[i] = &lb[i];
	}
	for (size_t i = 0; i < p->nsamples; i++) {
		perftools__profiles__sample__init(&sm[i]);
		sm[i].n_label = p->labels_at[i + 1] - p->labels_at[i];
		sm[i].label = lbp + p->labels_at[i];
		sm[i].n_location_id = p->stack_at[i + 1] - p->stack_at[i];
		sm[i].location_id = p->stack + p->stack_at[i];
		sm[i].n_value = nt;
		sm[i].value = p->values + i * nt;
		smp[i] = &sm[i];
	}
	prof.n_sample = p->nsamples;
	prof.sample = smp;
	Perftools__Profiles__Line *ln = xcalloc(p->nlocs + 1, sizeof *ln);
	Perftools__Profiles__Line **lnp = xcalloc(p->nlocs + 1, sizeof *lnp);
	Perftools__Profiles__Location *lo = xcalloc(p->nlocs + 1, sizeof *lo);
	Perftools__Profiles__Location **lop = xcalloc(p->nlocs + 1, sizeof *lop);
	for (size_t i = 0; i < p->nlocs; i++) {
		perftools__profiles__line__init(&ln[i]);
		ln[i].function_id = p->loc_func[i];
		ln[i].line = p->loc_line[i];
		lnp[i] = &ln[i];
		perftools__profiles__location__init(&lo[i]);
		lo[i].id = i + 1;
		lo[i].n_line = 1;
		lo[i].line = &lnp[i];
		lop[i] = &lo[i];
	}
	prof.n_location = p->nlocs;
	prof.location = lop;
	size_t nf = p->funckeys.n;
	Perftools__Profiles__Function *fn = xcalloc(nf + 1, sizeof *fn);
	Perftools__Profiles__Function **fnp = xcalloc(nf + 1, sizeof *fnp);
	for (size_t i = 0; i < nf; i++) {
		perftools__profiles__function__init(&fn[i]);
		fn[i].id = i + 1;
		fn[i].name = p->funcs[i].name;
		fn[i].system_name = p->funcs[i].system_name;
		fn[i].filename = p->funcs[i].file;
		fnp[i] = &fn[i];
	}
	prof.n_function = nf;
	prof.function = fnp;
	prof.n_string_table = p->strings.n;
	prof.string_table = p->strings.keys;
	prof.time_nanos = p->time_ns;
	prof.duration_nanos = p->duration_ns;
	Perftools__Profiles__ValueType period_type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	if (p->period) {
		period_type.type = p->period_type;
		period_type.unit = p->period_unit;
		prof.period_type = &period_type;
		prof.period = p->period;
	}
	prof.n_comment = p->ncomments;
	prof.comment = p->comments;
	prof.default_sample_type = p->type_name[p->default_type];
	*len = perftools__profiles__profile__get_packed_size(&prof);
	uint8_t *buf = xmalloc(*len + 1);
	perftools__profiles__profile__pack(&prof, buf);
	free(vt);
	free(vtp);
	free(sm);
	free(smp);
	free(lb);
	free(lbp);
	free(ln);
	free(lnp);
	free(lo);
	free(lop);
	free(fn);
	free(fnp);
	return buf;
}

int pprof_write(const struct pprof *p, const char *path, struct hs_error *err)
{
	size_t len;
	uint8_t *buf = pack(p, &len);
	char *tmp = xasprintf("%s.XXXXXX", path);
	gzFile gz = NULL;
	int fd = mkstemp(tmp);
	if (fd < 0) {
		hs_error_set(err, -1, "cannot write %s: %s", path, strerror(errno));
		goto fail;
	}
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);	/* as a file the user creates, not mkstemp's 0600 */
	gz = gzdopen(fd, "wb");
	if (!gz) {
		close(fd);
		hs_error_set(err, -1, "cannot write %s: out of memory for gzip", path);
		goto fail;
	}
	for (size_t at = 0; at < len;) {
		unsigned chunk = len - at > (1u << 30) ? 1u << 30 : (unsigned)(len - at);
		int w = gzwrite(gz, buf + at, chunk);
		if (w <= 0) {
			int e;
			const char *why = gzerror(gz, &e);
			hs_error_set(err, -1, "cannot write %s: %s", path,
				     e == Z_ERRNO ? strerror(errno) : why);
			goto fail;
		}
		at += (size_t)w;
	}
	int rc = gzclose(gz);
	gz = NULL;
	if (rc != Z_OK) {
		hs_error_set(err, -1, "cannot write %s: %s", path,
			     rc == Z_ERRNO ? strerror(errno) : "gzip failed");
		goto fail;
	}
	if (rename(tmp, path)) {
		hs_error_set(err, -1, "cannot write %s: %s", path, strerror(errno));
		goto fail;
	}
	free(tmp);
	free(buf);
	return HS_OK;
fail:
	if (gz)
		gzclose(gz);
	if (fd >= 0)
		unlink(tmp);
	free(tmp);
	free(buf);
	return HS_ERR;
}
