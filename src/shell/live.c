/*
 * live.c - the shell on a running JVM (docs/agent.md): attaching (loading
 * libheapsh_agent.so through HotSpot's attach mechanism when it is not
 * there yet), :detach, :refresh, :dump, the live histogram, snapshots taken
 * when a command first needs the object graph, and queries pushed down to
 * the agent when no snapshot is loaded.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../base/fmt.h"
#include "../out/out.h"
#include "sh.h"

void sh_live_close(struct sh *sh)
{
	hs_live_close(sh->ss);
}

bool sh_live_farewell(struct sh *sh)
{
	return hs_live_farewell(sh->ss);
}

void sh_live_leave(struct sh *sh)
{
	hs_leave(sh->ss);
}

int sh_attach(struct sh *sh, int pid)
{
	if (hs_attach(sh->ss, pid) != HS_OK)
		return sh_error(sh, NULL, "%s", hs_errmsg(sh->ss));
	return HS_OK;
}

int sh_cmd_attach(struct sh *sh, int argc, char **argv)
{
	if (argc != 2)
		return sh_error(sh, NULL, "usage: :attach PID");
	char *end;
	long pid = strtol(argv[1], &end, 10);
	if (*end || pid <= 0 || pid > INT_MAX)
		return sh_error(sh, NULL, "'%s' is not a process id", argv[1]);
	return sh_attach(sh, (int)pid);
}

int sh_cmd_detach(struct sh *sh, int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		return sh_error(sh, NULL, "usage: :detach");
	int pid = sh_live_pid(sh);
	if (hs_detach(sh->ss) != HS_OK)
		return sh_error(sh, NULL, "%s", hs_errmsg(sh->ss));
	out_printf("detached from JVM %d; the agent stopped and removed its socket\n", pid);
	return HS_OK;
}

int sh_cmd_refresh(struct sh *sh, int argc, char **argv)
{
	const char *via = NULL;
	if (argc == 3 && !strcmp(argv[1], "--via") &&
	    (!strcmp(argv[2], "dump") || !strcmp(argv[2], "agent")))
		via = argv[2];
	else if (argc != 1)
		return sh_error(sh, NULL, "usage: :refresh [--via dump|agent]");
	if (!sh_is_live(sh))
		return sh_error(sh, NULL, "not attached to a JVM; :refresh takes a new snapshot of "
				"an attached JVM (:open reloads a dump)");
	if (hs_snapshot(sh->ss, via) != HS_OK)
		return sh_error(sh, NULL, "%s", hs_errmsg(sh->ss));
	return HS_OK;
}

int sh_cmd_dump(struct sh *sh, int argc, char **argv)
{
	if (argc != 2)
		return sh_error(sh, NULL, "usage: :dump FILE.hprof");
	if (!sh_is_live(sh))
		return sh_error(sh, NULL, "not attached to a JVM; :attach PID first");
	int st = hs_dump_heap(sh->ss, argv[1]);
	hs_rest(sh->ss);	/* as sh_open: the loader's freed arrays are not kept */
	if (st != HS_OK) {
		if (isatty(STDERR_FILENO))
			fprintf(stderr, "\r\033[K");	/* a progress line may be showing */
		return sh_error(sh, NULL, "%s", hs_errmsg(sh->ss));
	}
	/* Say what was written: it stays after heapsh exits. */
	const char *file = hs_dump_path(sh->ss);
	struct stat sb;
	long long bytes = stat(file, &sb) == 0 ? (long long)sb.st_size : 0;
	out_flush();	/* what came before it first, in one file too */
	fprintf(stderr, "wrote %s: %lld bytes, %u objects (the JVM's live heap, as jcmd "
		"GC.heap_dump writes it); the shell answers from it until :refresh\n", file,
		bytes, hs_heap(sh->ss)->n);
	return HS_OK;
}

/* ---- the live histogram ---- */

static int by_bytes(const void *a, const void *b)
{
	const struct hs_hist_row *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int by_count(const void *a, const void *b)
{
	const struct hs_hist_row *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->name, y->name);
}

int sh_live_histogram(struct sh *sh, const char *pattern, bool count, long top, const char *via)
{
	struct hs_histogram hist;
	if (hs_live_histogram(sh->ss, pattern, via, &hist) != HS_OK) {
		hs_histogram_free(&hist);
		return sh_error(sh, NULL, "%s", hs_errmsg(sh->ss));
	}
	struct hs_hist_row *rows = hist.rows;
	uint32_t m = hist.n;
	qsort(rows, m, sizeof *rows, count ? by_count : by_bytes);
	static const char *const cols[] = {"class", "instances", "shallow_bytes"};
	struct out_table *tb = out_table_new(3, cols);
	uint64_t tc = 0, tbytes = 0;
	uint32_t shown = top > 0 && (uint32_t)top < m ? (uint32_t)top : m;
	for (uint32_t k = 0; k < m; k++) {
		tc += rows[k].count;
		tbytes += rows[k].bytes;
		if (k >= shown)
			continue;
		out_cell_str(tb, rows[k].name);
		out_cell_u64(tb, rows[k].count);
		out_cell_u64(tb, rows[k].bytes);
	}
	if (out_mode == OUT_TABLE && m > 1) {
		out_cell_fmt(tb, "total (%u classes)", m);
		out_cell_u64(tb, tc);
		out_cell_u64(tb, tbytes);
	}
	out_table_end(tb);
	if (out_mode == OUT_TABLE)
		out_printf("live histogram of JVM %d after a full GC, from %s\n", hs_live_pid(sh->ss),
			   hist.from_vm ? "HotSpot's heap inspection (as jcmd GC.class_histogram)"
				   : "the agent's heap iteration (bytes as GetObjectSize)");
	if (hist.vm_failed[0]) {
		out_flush();	/* what came before it first, in one file too */
		fprintf(stderr, "heapsh: note: the attach mechanism could not run "
			"GC.class_histogram (%s); the agent counted instead\n", hist.vm_failed);
	}
	hs_histogram_free(&hist);
	return HS_OK;
}

/* ---- push-down ---- */

void sh_show_pushdown(struct sh *sh, const struct hs_pushdown_answer *r)
{
	if (r->op == HS_PD_EXISTS) {
		out_printf("%s\n", r->matched ? "true" : "false");
	} else if (r->op == HS_PD_COUNT) {
		out_printf("%" PRIu64 "\n", r->matched);
	} else if (r->nrows) {
		struct out_table *tb = out_table_new(r->ncols, r->cols);
		for (size_t i = 0; i < (size_t)r->nrows * (size_t)r->ncols; i++) {
			const struct hs_cell *c = &r->cells[i];
			if (c->kind == HS_CELL_NULL)
				out_cell_null(tb);
			else if (c->kind == HS_CELL_INT)
				out_cell_i64(tb, c->i);
			else
				out_cell_str(tb, c->text);
		}
		out_table_end(tb);
	} else {
		out_printf("%s\n", r->op == HS_PD_FIRST ? "null" : "#[]");
	}
	if (out_mode == OUT_TABLE && r->op == HS_PD_FILTER && r->matched > r->nrows)
		out_printf("... %" PRIu64 " more (the first %u shown)\n", r->matched - r->nrows,
			   r->nrows);
	if (out_mode == OUT_TABLE && (sh->timer || isatty(STDERR_FILENO))) {
		out_flush();	/* what came before it first, in one file too */
		fprintf(stderr, "evaluated inside JVM %d: %" PRIu64 " instance%s of %s examined, "
			"%" PRIu64 " matched%s; no snapshot taken\n", sh_live_pid(sh), r->examined,
			fmt_s(r->examined), r->cls, r->matched,
			r->op == HS_PD_EXISTS && r->matched ? " (stopped at the first)" : "");
	}
}

/* ---- the prompt and :info ---- */

char *sh_live_prompt(const struct sh *sh)
{
	struct hs_live_info l;
	if (!hs_get_live(sh->ss, &l))
		return NULL;
	if (!l.snap_time)
		return xasprintf("heapsh pid %d> ", l.pid);
	long age = (long)(time(NULL) - l.snap_time);
	if (age < 120)
		return xasprintf("heapsh pid %d (snapshot %lds old)> ", l.pid, age);
	return xasprintf("heapsh pid %d (snapshot %ldmin old)> ", l.pid, age / 60);
}

int sh_live_info(struct sh *sh)
{
	struct hs_jvm_info in;
	if (hs_jvm_info(sh->ss, &in) != HS_OK)
		return sh_error(sh, NULL, "%s", hs_errmsg(sh->ss));
	static const char *const cols[] = {"property", "value"};
	struct out_table *t = out_table_new(2, cols);
	out_cell_str(t, "jvm");
	out_cell_fmt(t, "pid %" PRIu64 ", %s %s (%s)", in.pid, in.vm_name, in.vm_version,
		     in.vm_vendor);
	out_cell_str(t, "heap used");
	sh_bytes_cell(t, in.heap_used);
	out_cell_str(t, "heap committed");
	sh_bytes_cell(t, in.heap_committed);
	out_cell_str(t, "heap max");
	sh_bytes_cell(t, in.heap_max);
	out_cell_str(t, "loaded classes");
	out_cell_u64(t, in.classes);
	out_cell_str(t, "agent");
	out_cell_str(t, in.agent);
	out_cell_str(t, "snapshot");
	struct hs_live_info l;
	if (hs_get_live(sh->ss, &l) && l.snap_time)
		out_cell_fmt(t, "taken %lds ago; :refresh takes a new one",
			     (long)(time(NULL) - l.snap_time));
	else
		out_cell_str(t, "none yet (the first command that needs the object graph takes it)");
	out_table_end(t);
	return HS_OK;
}
