/*
 * dom_pprof.c - the dominator tree as a pprof profile (dom_pprof): the
 * paths of dom_class_paths as stacks, so that pprof's flat value of a
 * class is the shallow size of its instances reachable from the GC roots
 * and its cumulative value what they retain together.
 */
#include "dom_pprof.h"

#include <stdlib.h>

#include "../base/mem.h"
#include "../base/pprof.h"

int dom_pprof(struct dom_tree *t, const char *path, const char *comment, struct hs_error *err)
{
	struct dom_cpath *cp;
	uint32_t n;
	if (dom_class_paths(t, DOM_PPROF_DEPTH, &cp, &n) != HS_OK) {
		hs_error_set(err, -1, "interrupted: %s not written", path);
		return HS_INTERRUPTED;
	}
	static const char *const types[] = {"inuse_objects", "inuse_space"};
	static const char *const units[] = {"count", "bytes"};
	struct pprof *p = pprof_new(2, types, units, 1);
	if (comment)
		pprof_comment(p, comment);
	pprof_comment(p, "the dominator tree merged by paths of classes: a class's flat value is "
			 "the shallow size of its reachable instances, its cumulative value what "
			 "they retain together");
	const struct heap *h = t->h;
	uint64_t *loc = xmallocarray((size_t)n + 1, sizeof *loc);
	uint64_t *stack = xmallocarray(DOM_PPROF_DEPTH + 1, sizeof *stack);
	for (uint32_t i = 0; i < n; i++) {
		const char *name = cp[i].cls < h->nclasses && h->classes[cp[i].cls].name
				   ? h->classes[cp[i].cls].name : "?";
		char *text = cp[i].class_object ? xasprintf("class %s", name) : NULL;
		loc[i] = pprof_location(p, pprof_function(p, text ? text : name, NULL, NULL), 0);
		free(text);
	}
	for (uint32_t i = 0; i < n; i++) {
		if (!cp[i].objects)
			continue;
		size_t k = 0;
		for (uint32_t x = i; x != UINT32_MAX && k <= DOM_PPROF_DEPTH; x = cp[x].parent)
			stack[k++] = loc[x];
		int64_t v[2] = {(int64_t)cp[i].objects, (int64_t)cp[i].shallow};
		pprof_sample(p, stack, k, v, NULL, 0);
	}
	free(stack);
	free(loc);
	free(cp);
	int rc = pprof_write(p, path, err);
	pprof_free(p);
	return rc;
}
