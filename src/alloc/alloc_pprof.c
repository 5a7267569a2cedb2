/*
 * alloc_pprof.c - an allocation recording as a pprof profile (alc_pprof),
 * the format `go tool pprof`, Grafana Pyroscope and speedscope read, laid
 * out as Go's own heap profiles are (runtime/pprof: alloc_objects,
 * alloc_space, inuse_objects, inuse_space) with the allocated class as the
 * innermost frame, as async-profiler's converter writes Java allocation
 * profiles.
 */
#include "alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/pprof.h"

static const char *str(const char *s)
{
	return s ? s : "?";
}

/* source_path: "com/acme/Foo.java" for class com.acme.Foo and file Foo.java; NULL without a file. */
static char *source_path(const struct alc_method *m)
{
	if (!m->file)
		return NULL;
	const char *cls = str(m->cls), *dot = strrchr(cls, '.');
	if (!dot)
		return xstrdup(m->file);
	char *p = xasprintf("%.*s/%s", (int)(dot - cls), cls, m->file);
	for (char *c = p; *c && c < p + (dot - cls); c++)
		if (*c == '.')
			*c = '/';
	return p;
}

/* frame: the location of node's frame (method and line), interned in p. */
static uint64_t frame(struct pprof *p, const struct alc_rec *r, uint32_t node)
{
	const struct alc_node *n = &r->nodes[node];
	if (n->method >= r->nmethods || !r->methods)
		return pprof_location(p, pprof_function(p, "?", NULL, NULL), 0);
	const struct alc_method *m = &r->methods[n->method];
	char *name = xasprintf("%s.%s", str(m->cls), str(m->name));
	char *sys = xasprintf("%s.%s%s", str(m->cls), str(m->name), m->sig ? m->sig : "");
	char *file = source_path(m);
	uint64_t fn = pprof_function(p, name, sys, file);
	free(name);
	free(sys);
	free(file);
	return pprof_location(p, fn, n->line > 0 ? n->line : 0);
}

static int64_t value(double v)
{
	return v > 0 && v < 9.2e18 ? (int64_t)llround(v) : 0;
}

int alc_pprof(const struct alc_rec *r, const char *path, const char *comment, struct hs_error *err)
{
	static const char *const types[] = {"alloc_objects", "alloc_space", "inuse_objects",
					    "inuse_space"};
	static const char *const units[] = {"count", "bytes", "count", "bytes"};
	struct pprof *p = pprof_new(4, types, units, 1);
	const struct alc_status *st = &r->st;
	if (st->started_ms) {
		uint64_t end = st->stopped_ms ? st->stopped_ms : 0;
		pprof_time(p, (int64_t)st->started_ms * 1000000,
			   end > st->started_ms ? (int64_t)(end - st->started_ms) * 1000000 : 0);
	}
	if (!st->exact && st->interval)
		pprof_period(p, "space", "bytes", (int64_t)st->interval);
	if (comment)
		pprof_comment(p, comment);
	pprof_comment(p, st->exact ? "exact: every allocation counted"
			  : "sampled: counts are estimates from the JVM's allocation samples");
	if (st->no_live)
		pprof_comment(p, "recorded with --live none: inuse_objects and inuse_space are 0");
	uint64_t none = pprof_location(p, pprof_function(p, "(no Java frame)", NULL, NULL), 0);
	uint64_t *stack = xmallocarray((size_t)r->nnodes + 2, sizeof *stack);
	for (uint32_t i = 0; i < r->nkeys; i++) {
		const struct alc_key *k = &r->keys[i];
		int64_t v[4] = {value(k->objs), value(k->bytes), value(k->live_objs),
				value(k->live_bytes)};
		if (!v[0] && !v[1] && !v[2] && !v[3])
			continue;
		size_t n = 0;
		const char *cls = k->cls < r->nclasses && r->classes ? str(r->classes[k->cls]) : "?";
		stack[n++] = pprof_location(p, pprof_function(p, cls, NULL, NULL), 0);
		if (k->node >= r->nnodes)
			stack[n++] = none;
		/* at most nnodes frames: a parent cycle in a bad reply ends there */
		for (uint32_t x = k->node; x < r->nnodes && n < (size_t)r->nnodes + 1; x = r->nodes[x].parent)
			stack[n++] = frame(p, r, x);
		const char *account = k->account < r->naccounts && r->accounts
				      ? str(r->accounts[k->account]) : "?";
		const char *labels[2] = {"account", account};
		pprof_sample(p, stack, n, v, labels, r->naccounts > 1 ? 1 : 0);
	}
	free(stack);
	int rc = pprof_write(p, path, err);
	pprof_free(p);
	return rc;
}
