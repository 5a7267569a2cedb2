/*
 * core.c - the shell's core, under every command (docs/architecture.md):
 * errors (sh_error), progress on a terminal, opening a dump into the
 * session, the session's heap, engine and live connection as the commands
 * need them (reported errors instead of NULL), objects and sets of objects
 * named by the user, and the cells every table of objects shows. It calls
 * nothing else of the shell; values.c shows query values on top of it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/fmt.h"
#include "../out/out.h"
#include "sh.h"

int sh_error(struct sh *sh, const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(sh->last_error, sizeof sh->last_error, fmt, ap);
	va_end(ap);
	sh->status = 2;
	sh->nerrors++;
	out_flush();
	if (!where)
		where = sh->where;
	snprintf(sh->last_where, sizeof sh->last_where, "%s", where ? where : "");
	fprintf(stderr, "heapsh: %s%s%s\n", where ? where : "", where ? ": " : "", sh->last_error);
	return HS_ERR;
}

struct sh *sh_current;

/* The engine's progress after a label (sh_progress_begin): stderr, a terminal only. */

static char progress_label[160];

static int progress_pct = -1;

static void progress_step(void *ud, const char *what, uint64_t done, uint64_t total)
{
	(void)ud;
	int pct = total ? (int)(done >= total ? 100 : done * 100 / total) : 0;
	if (pct == progress_pct)
		return;
	progress_pct = pct;
	fprintf(stderr, "\r\033[K%s: %s %d%%", progress_label, what, pct);
	fflush(stderr);
}

void sh_progress_begin(const char *fmt, ...)
{
	if (!isatty(STDERR_FILENO))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(progress_label, sizeof progress_label, fmt, ap);
	va_end(ap);
	progress_pct = -1;
	fprintf(stderr, "%s...", progress_label);
	fflush(stderr);
	if (sh_current)
		hs_set_progress(sh_current->ss, progress_step, NULL);
}

void sh_progress_end(void)
{
	if (!isatty(STDERR_FILENO))
		return;
	if (sh_current)
		hs_set_progress(sh_current->ss, NULL, NULL);
	fprintf(stderr, "\r\033[K");
	fflush(stderr);
}

int sh_open(struct sh *sh, const char *path)
{
	int st = hs_open(sh->ss, path);
	hs_rest(sh->ss);	/* the loader's freed arrays are not kept */
	if (st != HS_OK) {
		if (isatty(STDERR_FILENO))	/* a progress line may be showing (sh_session_hooks) */
			fprintf(stderr, "\r\033[K");
		return sh_error(sh, NULL, "%s", hs_errmsg(sh->ss));
	}
	return HS_OK;
}

int sh_parse_object(struct sh *sh, const char *s, uint32_t *obj)
{
	char *end;
	errno = 0;
	unsigned long long id = strtoull(s, &end, 0);
	if (!*s || *end || errno) {
		sh_error(sh, NULL, "'%s' is not an object id; ids look like 0x7ff0a1b2c8", s);
		return HS_ERR;
	}
	uint32_t i = heap_index(hs_heap(sh->ss), id);
	if (i == HEAP_NONE && sh_live_snapshots(sh) > 1) {
		sh_error(sh, NULL, "no object with id 0x%llx in this snapshot: ids change from one "
			 "snapshot to the next (this is snapshot %u of this session); find the object "
			 "again with :histogram, :classes, :roots or a query", id,
			 sh_live_snapshots(sh));
		return HS_ERR;
	}
	if (i == HEAP_NONE) {
		sh_error(sh, NULL, "no object with id 0x%llx in this %s; find ids with "
			 ":histogram, :classes or :roots", id, sh_is_live(sh) ? "snapshot" : "dump");
		return HS_ERR;
	}
	*obj = i;
	return HS_OK;
}

void sh_bytes_cell(struct out_table *t, uint64_t n)
{
	if (out_mode != OUT_TABLE) {
		out_cell_u64(t, n);
		return;
	}
	char b[32];
	out_cell_str(t, fmt_bytes(b, sizeof b, n));
}

void sh_close_heap(struct sh *sh)
{
	hs_close_heap(sh->ss);
}

struct dom_tree *sh_dom(struct sh *sh, bool no_weak)
{
	struct dom_tree *t = hs_dom(sh->ss, no_weak);
	if (!t)
		sh_error(sh, NULL, "%s", hs_errmsg(sh->ss));
	return t;
}

bool sh_is_pid(const char *s)
{
	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 9)
		return false;
	struct stat st;
	return stat(s, &st) != 0;
}

bool sh_looks_like_id(const char *s)
{
	return s[0] >= '0' && s[0] <= '9';
}

int sh_target_set(struct sh *sh, const char *target, uint32_t **objs, uint32_t *n,
		      char **label)
{
	struct heap *h = hs_heap(sh->ss);
	if (sh_looks_like_id(target)) {
		uint32_t i;
		if (sh_parse_object(sh, target, &i))
			return HS_ERR;
		*objs = xmalloc(sizeof **objs);
		(*objs)[0] = i;
		*n = 1;
		*label = xasprintf("0x%" PRIx64 " %s", heap_id(h, i), heap_class_name(h, i));
		return HS_OK;
	}
	uint32_t *cls, nc = heap_find_classes(h, target, &cls);
	if (!nc) {
		free(cls);
		char sug[512];
		heap_suggest_class(h, target, sug, sizeof sug);
		return sh_error(sh, NULL, "no class matches '%s' (and it is not an object id)%s",
				target, sug);
	}
	uint32_t total = 0;
	for (uint32_t k = 0; k < nc; k++)
		total += (uint32_t)h->classes[cls[k]].count;
	*objs = xmallocarray((size_t)total + 1, sizeof **objs);
	*n = 0;
	for (uint32_t k = 0; k < nc; k++) {
		uint32_t cnt;
		const uint32_t *inst = heap_instances(h, cls[k], &cnt);
		memcpy(*objs + *n, inst, cnt * sizeof **objs);
		*n += cnt;
	}
	*label = nc == 1 && *n == 1 ? xasprintf("the one instance of %s", h->classes[cls[0]].name)
		 : nc == 1 ? xasprintf("all %u instances of %s", *n, h->classes[cls[0]].name)
			 : xasprintf("all %u instance%s of %u classes matching %s", *n, fmt_s(*n), nc,
				     target);
	free(cls);
	return HS_OK;
}

void sh_object_cells(struct out_table *t, const struct heap *h, uint32_t i)
{
	out_cell_fmt(t, "0x%" PRIx64, heap_id(h, i));
	if (out_mode == OUT_TABLE) {
		/* For people: a String's text, a thread's or class loader's name. */
		char *label = heap_object_label(h, i);
		out_cell_str(t, label);
		free(label);
	} else if (heap_kind(h, i) == HEAP_CLASS) {
		/* For programs: the class alone, so rows group by it (heap_object_label for more). */
		uint32_t c = heap_class_of_object(h, i);
		out_cell_fmt(t, "class %s", c != HEAP_NONE ? h->classes[c].name : "?");
	} else {
		out_cell_str(t, heap_class_name(h, i));
	}
}

unsigned sh_live_snapshots(const struct sh *sh)
{
	struct hs_live_info in;
	return hs_get_live(sh->ss, &in) ? in.snapshots : 0;
}

bool sh_is_live(const struct sh *sh)
{
	return hs_live_pid(sh->ss) != 0;
}

int sh_live_pid(const struct sh *sh)
{
	return hs_live_pid(sh->ss) ? hs_live_pid(sh->ss) : 0;
}

int sh_need_heap(struct sh *sh)
{
	if (hs_need_heap(sh->ss) != HS_OK)
		return sh_error(sh, NULL, "%s", hs_errmsg(sh->ss));
	return HS_OK;
}

char *sh_heap_label(const struct sh *sh)
{
	return hs_heap_label(sh->ss);
}
