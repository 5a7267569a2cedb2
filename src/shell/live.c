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
#include "../heapsh.h"
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
		return sh_error(sh, NULL, "%s", hs_err(sh->ss)->msg);
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
	if (!hs_live_jvm(sh->ss))
		return sh_error(sh, NULL, "not attached to a JVM");
	int pid = hs_live_jvm(sh->ss)->pid;
	if (sh_live_conn(sh))
		sh_live_farewell(sh);
	int st = sh_live_conn(sh) ? hs_detach(sh->ss) : HS_ERR;
	bool snapshot = hs_live_jvm(sh->ss)->snap_time != 0;
	sh_live_close(sh);
	if (snapshot)
		sh_close_heap(sh);
	if (st != HS_OK)
		return sh_error(sh, NULL, "detached from JVM %d, but the agent did not confirm: %s",
				pid, hs_err(sh->ss)->msg);
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
	if (!hs_live_jvm(sh->ss))
		return sh_error(sh, NULL, "not attached to a JVM; :refresh takes a new snapshot of "
				"an attached JVM (:open reloads a dump)");
	if (hs_snapshot(sh->ss, via) != HS_OK)
		return sh_error(sh, NULL, "%s", hs_err(sh->ss)->msg);
	return HS_OK;
}

int sh_cmd_dump(struct sh *sh, int argc, char **argv)
{
	if (argc != 2)
		return sh_error(sh, NULL, "usage: :dump FILE.hprof");
	if (!hs_live_jvm(sh->ss))
		return sh_error(sh, NULL, "not attached to a JVM; :attach PID first");
	char abs[2 * PATH_MAX + 2];
	const char *file = argv[1];
	if (file[0] != '/') {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof cwd))
			return sh_error(sh, NULL, "cannot find the current directory: %s",
					strerror(errno));
		snprintf(abs, sizeof abs, "%s/%s", cwd, file);
		file = abs;
	}
	struct stat sb;
	if (stat(file, &sb) == 0)
		return sh_error(sh, NULL, "%s already exists; HotSpot does not overwrite a dump: "
				"remove it or choose another name", file);
	char *cmd = xasprintf("GC.heap_dump %s", file), *output = NULL;
	enum att_kind kind;
	int st = hs_jcmd(sh->ss, cmd, &output, &kind);
	free(cmd);
	if (st != HS_OK) {
		free(output);
		return sh_error(sh, NULL, "%s", hs_err(sh->ss)->msg);
	}
	if (stat(file, &sb) != 0) {
		sh_error(sh, NULL, "the JVM did not write %s: %s", file,
			 output && *output ? output : "no reason given");
		free(output);
		return HS_ERR;
	}
	free(output);
	st = hs_open_jvm_dump(sh->ss, file);
	hs_rest(sh->ss);	/* the loader's freed arrays are not kept */
	if (st != HS_OK)
		return sh_error(sh, NULL, "%s", hs_err(sh->ss)->msg);
	{
		/* Say what was written: it stays after heapsh exits. */
		out_flush();	/* what came before it first, in one file too */
		fprintf(stderr, "wrote %s: %lld bytes, %u objects (the JVM's live heap, as jcmd "
			"GC.heap_dump writes it); the shell answers from it until :refresh\n", file,
			(long long)sb.st_size, hs_heap(sh->ss)->n);
	}
	return st;
}

/* ---- the live histogram ---- */

static int by_bytes(const void *a, const void *b)
{
	const struct att_hist_row *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int by_count(const void *a, const void *b)
{
	const struct att_hist_row *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->name, y->name);
}

int sh_live_histogram(struct sh *sh, const char *pattern, bool count, long top, const char *via)
{
	if (!sh_live_conn(sh))
		return HS_ERR;
	struct att_hist_row *rows = NULL;
	uint32_t n = 0;
	enum att_kind kind = ATT_OK;
	char vm_failed[sizeof hs_err(sh->ss)->msg] = "";
	hs_interrupted = 0;
	/*
	 * HotSpot's own inspection (GC.class_histogram through the attach
	 * socket) runs on the GC's worker threads; the agent's IterateThroughHeap
	 * runs on one and looks up each object's class tag, several times slower
	 * on big heaps. The agent's answers when attach is off or asked for.
	 */
	bool from_vm = !via || !strcmp(via, "vm");
	if (from_vm) {
		int st = hs_jvm_histogram(sh->ss, false, &rows, &n, &kind);
		if (st == HS_INTERRUPTED || kind == ATT_EXITED || kind == ATT_NO_PROCESS)
			return sh_error(sh, NULL, "live histogram of JVM %d failed: %s",
					hs_live_jvm(sh->ss)->pid, hs_err(sh->ss)->msg);
		if (st != HS_OK) {
			if (via)
				return sh_error(sh, NULL, "live histogram of JVM %d through the attach "
						"mechanism failed: %s", hs_live_jvm(sh->ss)->pid,
						hs_err(sh->ss)->msg);
			snprintf(vm_failed, sizeof vm_failed, "%s", hs_err(sh->ss)->msg);
			from_vm = false;
		}
	}
	if (!from_vm && hs_jvm_histogram(sh->ss, true, &rows, &n, &kind) != HS_OK)
		return sh_error(sh, NULL, "live histogram of JVM %d failed: %s", hs_live_jvm(sh->ss)->pid,
				hs_err(sh->ss)->msg);
	/* The same classes as a dump's :histogram PATTERN (src/base/classname.h). */
	uint32_t m = n;
	if (pattern) {
		const char **names = xcalloc((size_t)n + 1, sizeof *names);
		uint32_t *pick = xcalloc((size_t)n + 1, sizeof *pick);
		for (uint32_t k = 0; k < n; k++)
			names[k] = rows[k].name;
		m = cn_select(pattern, names, n, pick);
		bool *keep = xcalloc((size_t)n + 1, 1);
		for (uint32_t k = 0; k < m; k++)
			keep[pick[k]] = true;
		for (uint32_t k = 0, j = 0; k < n; k++) {
			if (keep[k])
				rows[j++] = rows[k];
			else
				free(rows[k].name);
		}
		free(keep);
		free(pick);
		free(names);
	}
	if (pattern && !m) {
		att_hist_free(rows, 0);
		return sh_error(sh, NULL, "no class with instances matches '%s'", pattern);
	}
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
		out_printf("live histogram of JVM %d after a full GC, from %s\n", hs_live_jvm(sh->ss)->pid,
			   from_vm ? "HotSpot's heap inspection (as jcmd GC.class_histogram)"
				   : "the agent's heap iteration (bytes as GetObjectSize)");
	if (vm_failed[0]) {
		out_flush();	/* what came before it first, in one file too */
		fprintf(stderr, "heapsh: note: the attach mechanism could not run "
			"GC.class_histogram (%s); the agent counted instead\n", vm_failed);
	}
	att_hist_free(rows, m);
	return HS_OK;
}

/* ---- push-down ---- */

static void value_cell(struct out_table *tb, const struct proto_value *v)
{
	double d;
	float f;
	uint32_t lo = (uint32_t)v->bits;
	switch (v->kind) {
	case 'N': out_cell_null(tb); break;
	case 'T': out_cell_str(tb, v->text); break;
	case 'L': {
		char *n = xmalloc(CN_JAVA_NAME_MAX(v->text));
		cn_java_name(v->text, true, n, CN_JAVA_NAME_MAX(v->text));
		out_cell_fmt(tb, "<%s>", n);
		free(n);
		break;
	}
	case 'Z': out_cell_str(tb, v->bits ? "true" : "false"); break;
	case 'C': out_cell_fmt(tb, "%c", (int)(v->bits & 0x7f)); break;
	case 'F': memcpy(&f, &lo, 4); out_cell_fmt(tb, "%g", f); break;
	case 'D': memcpy(&d, &v->bits, 8); out_cell_fmt(tb, "%g", d); break;
	default: out_cell_i64(tb, (int64_t)v->bits); break;
	}
}

void sh_show_pushdown(struct sh *sh, const struct hs_pushdown *q)
{
	const struct dsl_pushdown pd = q->pd;
	const struct proto_instances r = q->r;
	if (pd.op == PD_EXISTS) {
		out_printf("%s\n", r.matched ? "true" : "false");
	} else if (pd.op == PD_COUNT) {
		out_printf("%" PRIu64 "\n", r.matched);
	} else if (r.nrows) {
		int nc = r.rows[0].n + 1;
		const char **cols = xcalloc((size_t)nc, sizeof *cols);
		cols[0] = "class";
		for (int k = 1; k < nc; k++)
			cols[k] = r.rows[0].v[k - 1].field;
		struct out_table *tb = out_table_new(nc, cols);
		for (uint32_t i = 0; i < r.nrows; i++) {
			char *cn = xmalloc(CN_JAVA_NAME_MAX(r.rows[i].cls));
			cn_java_name(r.rows[i].cls, true, cn, CN_JAVA_NAME_MAX(r.rows[i].cls));
			out_cell_str(tb, cn);
			free(cn);
			for (int k = 1; k < nc; k++) {
				if (k - 1 < r.rows[i].n)
					value_cell(tb, &r.rows[i].v[k - 1]);
				else
					out_cell_null(tb);
			}
		}
		out_table_end(tb);
		free(cols);
	} else {
		out_printf("%s\n", pd.op == PD_FIRST ? "null" : "#[]");
	}
	if (out_mode == OUT_TABLE && pd.op == PD_FILTER && r.matched > r.nrows)
		out_printf("... %" PRIu64 " more (the first %u shown)\n", r.matched - r.nrows,
			   r.nrows);
	if (out_mode == OUT_TABLE && (sh->timer || isatty(STDERR_FILENO))) {
		out_flush();	/* what came before it first, in one file too */
		fprintf(stderr, "evaluated inside JVM %d: %" PRIu64 " instance%s of %s examined, "
			"%" PRIu64 " matched%s; no snapshot taken\n", hs_live_jvm(sh->ss)->pid, r.examined,
			fmt_s(r.examined), pd.cls, r.matched, pd.op == PD_EXISTS && r.matched ? " (stopped at the first)" : "");
	}
}

/* ---- the prompt and :info ---- */

char *sh_live_prompt(const struct sh *sh)
{
	const struct hs_live *l = hs_live_jvm(sh->ss);
	if (!l)
		return NULL;
	if (!l->snap_time)
		return xasprintf("heapsh pid %d> ", l->pid);
	long age = (long)(time(NULL) - l->snap_time);
	if (age < 120)
		return xasprintf("heapsh pid %d (snapshot %lds old)> ", l->pid, age);
	return xasprintf("heapsh pid %d (snapshot %ldmin old)> ", l->pid, age / 60);
}

int sh_live_info(struct sh *sh)
{
	if (!sh_live_conn(sh))
		return HS_ERR;
	struct proto_info in;
	if (hs_jvm_info(sh->ss, &in) != HS_OK)
		return sh_error(sh, NULL, "%s", hs_err(sh->ss)->msg);
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
	if (hs_live_jvm(sh->ss)->snap_time)
		out_cell_fmt(t, "taken %lds ago; :refresh takes a new one",
			     (long)(time(NULL) - hs_live_jvm(sh->ss)->snap_time));
	else
		out_cell_str(t, "none yet (the first command that needs the object graph takes it)");
	out_table_end(t);
	return HS_OK;
}
