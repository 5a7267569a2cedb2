/*
 * jvm.c - what a front end asks of the attached JVM for one command, done
 * here so that the front end only shows the answer: the JVM's information,
 * its class histogram (HotSpot's or the agent's), a heap dump written by
 * HotSpot, detaching, and the allocation recording's start and control.
 * Attaching, the connection and snapshots are live.c's. See session.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../base/classname.h"
#include "session_internal.h"
#include "guard.h"

static int p_jvm_info(struct hs_session *s, struct hs_jvm_info *out)
{
	memset(out, 0, sizeof *out);
	struct proto_conn *c = hs_live_conn(s);
	if (!c)
		return HS_ERR;
	struct proto_info in;
	struct hs_error err;
	if (proto_info(c, &in, &err) != HS_OK)
		return hs_fail(s, "%s", err.msg);
	out->pid = in.pid;
	snprintf(out->vm_name, sizeof out->vm_name, "%s", in.vm_name);
	snprintf(out->vm_version, sizeof out->vm_version, "%s", in.vm_version);
	snprintf(out->vm_vendor, sizeof out->vm_vendor, "%s", in.vm_vendor);
	snprintf(out->agent, sizeof out->agent, "%s", in.agent);
	out->heap_used = in.heap_used;
	out->heap_committed = in.heap_committed;
	out->heap_max = in.heap_max;
	out->classes = in.classes;
	return HS_OK;
}

int hs_jvm_info(struct hs_session *s, struct hs_jvm_info *out)
{
	GUARDED(s, HS_ERR, p_jvm_info(s, out));
}

static int p_detach(struct hs_session *s)
{
	if (!s->live)
		return hs_fail(s, "not attached to a JVM");
	int pid = s->live->pid;
	struct hs_error err;
	struct proto_conn *c = hs_live_conn(s);
	if (c) {
		hs_live_farewell(s);
		if (proto_detach(c, &err) != HS_OK)
			c = NULL;
	} else {
		err = s->err;
	}
	bool snapshot = s->live->snap_time != 0;
	hs_live_close(s);
	if (snapshot)
		hs_close_heap(s);
	if (!c)
		return hs_fail(s, "detached from JVM %d, but the agent did not confirm: %s", pid,
			       err.msg);
	return HS_OK;
}

int hs_detach(struct hs_session *s)
{
	GUARDED(s, HS_ERR, p_detach(s));
}

/* open_dumped: the dump the JVM wrote at file is opened (its index written), the JVM kept attached. */
static int open_dumped(struct hs_session *s, const char *file)
{
	struct hs_live *l = s->live;
	s->live = NULL;
	int st = hs_open(s, file);
	s->live = l;
	if (st == HS_OK)
		l->snap_time = time(NULL);
	return st;
}

/*
 * dump_across: :dump FILE for a JVM in another mount namespace (a
 * container). FILE is a path of heapsh's, which the JVM cannot see (or, in
 * the container, is another file): the JVM writes the dump into a private
 * folder of its own /tmp (struct att_jvm_dir), heapsh copies it to FILE,
 * then removes the folder.
 */
static int dump_across(struct hs_session *s, const char *file)
{
	int pid = s->live->pid;
	char prefix[48];
	struct att_jvm_dir dir;
	enum att_kind kind;
	struct hs_error err;
	snprintf(prefix, sizeof prefix, "heapsh-dump-%d-", att_nspid(pid));
	if (att_jvm_dir_make(pid, NULL, prefix, &dir, &kind, &err) != HS_OK)
		return hs_fail(s, "cannot dump JVM %d into %s: %s", pid, file, err.msg);
	int st = att_jvm_dir_dump(pid, &dir, "heap.hprof", 600000, &kind, &err);
	if (st == HS_OK) {
		hs_notify(s, HS_NOTICE_TTY, "JVM %d runs in another mount namespace (a container): it "
			  "wrote the dump into its own %s; heapsh copies it to %s", pid, dir.there, file);
		st = att_jvm_dir_get(&dir, "heap.hprof", file, &kind, &err);
	}
	att_jvm_dir_remove(&dir);
	if (st != HS_OK)
		return hs_fail(s, "%s", err.msg);
	return open_dumped(s, file);
}

static int p_dump_heap(struct hs_session *s, const char *path)
{
	if (!s->live)
		return hs_fail(s, "not attached to a JVM; :attach PID first");
	char abs[2 * PATH_MAX + 2];
	const char *file = path;
	if (file[0] != '/') {	/* the JVM's working folder is not ours */
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof cwd))
			return hs_fail(s, "cannot find the current directory: %s", strerror(errno));
		snprintf(abs, sizeof abs, "%s/%s", cwd, file);
		file = abs;
	}
	struct stat sb;
	if (stat(file, &sb) == 0)
		return hs_fail(s, "%s already exists; HotSpot does not overwrite a dump: remove it "
			       "or choose another name", file);
	int pid = s->live->pid;
	if (!att_same_mnt_ns(pid))
		return dump_across(s, file);
	char *output = NULL;
	enum att_kind kind;
	struct hs_error err;
	int st = att_heap_dump(pid, file, 600000, &output, &kind, &err);
	if (st != HS_OK) {
		free(output);
		return hs_fail(s, "%s%s", err.msg, kind == ATT_REFUSED && stat(file, &sb) == 0 ?
			       " (HotSpot leaves the partial file there)" : "");
	}
	if (stat(file, &sb) != 0) {
		hs_fail(s, "the JVM did not write %s: %s", file,
			output && *output ? output : "no reason given");
		free(output);
		return HS_ERR;
	}
	free(output);
	return open_dumped(s, file);
}

int hs_dump_heap(struct hs_session *s, const char *path)
{
	GUARDED(s, HS_ERR, p_dump_heap(s, path));
}

void hs_histogram_free(struct hs_histogram *h)
{
	for (uint32_t k = 0; k < h->n; k++)
		free(h->rows[k].name);
	free(h->rows);
	h->rows = NULL;
	h->n = 0;
}

static int p_live_histogram(struct hs_session *s, const char *pattern, const char *via,
		      struct hs_histogram *h)
{
	memset(h, 0, sizeof *h);
	if (!hs_live_conn(s))
		return HS_ERR;
	struct att_hist_row *rows = NULL;
	uint32_t n = 0;
	struct hs_error err;
	enum att_kind kind = ATT_OK;
	int pid = s->live->pid;
	hs_interrupted = 0;
	/*
	 * HotSpot's own inspection (GC.class_histogram through the attach
	 * socket) runs on the GC's worker threads; the agent's IterateThroughHeap
	 * runs on one and looks up each object's class tag, several times slower
	 * on big heaps. The agent's answers when attach is off or asked for.
	 */
	h->from_vm = !via || !strcmp(via, "vm");
	if (h->from_vm) {
		int st = att_class_histogram(pid, false, 600000, &rows, &n, &kind, &err);
		if (st == HS_INTERRUPTED || kind == ATT_EXITED || kind == ATT_NO_PROCESS)
			return hs_fail(s, "live histogram of JVM %d failed: %s", pid, err.msg);
		if (st != HS_OK) {
			if (via)
				return hs_fail(s, "live histogram of JVM %d through the attach "
					       "mechanism failed: %s", pid, err.msg);
			snprintf(h->vm_failed, sizeof h->vm_failed, "%s", err.msg);
			h->from_vm = false;
		}
	}
	if (!h->from_vm && proto_histogram(&s->live->conn, true, &rows, &n, &err) != HS_OK)
		return hs_fail(s, "live histogram of JVM %d failed: %s", pid, err.msg);
	/* The same classes as a dump's :histogram PATTERN (src/base/classname.h). */
	bool *keep = xcalloc((size_t)n + 1, 1);
	uint32_t m = n;
	if (pattern) {
		const char **names = xcalloc((size_t)n + 1, sizeof *names);
		uint32_t *pick = xcalloc((size_t)n + 1, sizeof *pick);
		for (uint32_t k = 0; k < n; k++)
			names[k] = rows[k].name;
		m = cn_select(pattern, names, n, pick);
		for (uint32_t k = 0; k < m; k++)
			keep[pick[k]] = true;
		free(pick);
		free(names);
	} else {
		memset(keep, 1, n);
	}
	h->rows = xcalloc((size_t)m + 1, sizeof *h->rows);
	for (uint32_t k = 0; k < n; k++) {
		if (keep[k])
			h->rows[h->n++] = (struct hs_hist_row){rows[k].name, rows[k].count, rows[k].bytes};
		else
			free(rows[k].name);
	}
	free(keep);
	free(rows);	/* the names went to h->rows or were freed */
	if (pattern && !m) {
		hs_histogram_free(h);
		return hs_fail(s, "no class with instances matches '%s'", pattern);
	}
	return HS_OK;
}

int hs_live_histogram(struct hs_session *s, const char *pattern, const char *via,
		      struct hs_histogram *h)
{
	GUARDED(s, HS_ERR, p_live_histogram(s, pattern, via, h));
}

/* alloc_conn: the connection for an allocation recording's request, or NULL with s->err. */
static struct proto_conn *alloc_conn(struct hs_session *s)
{
	if (!s->live)
		return hs_fail(s, "not attached to a JVM; :attach PID first"), NULL;
	return hs_live_conn(s);
}

static int p_alloc_start(struct hs_session *s, const struct alc_opts *o,
			 void (*progress)(void *ctx, uint32_t done, uint32_t total), void *ctx,
			 struct alc_status *st)
{
	struct proto_conn *c = alloc_conn(s);
	if (!c)
		return HS_ERR;
	struct hs_error err;
	if (proto_alloc_start(c, o, progress, ctx, st, &err))
		return hs_fail(s, "%s", err.msg);
	return HS_OK;
}

int hs_alloc_start(struct hs_session *s, const struct alc_opts *o,
		   void (*progress)(void *ctx, uint32_t done, uint32_t total), void *ctx,
		   struct alc_status *st)
{
	GUARDED(s, HS_ERR, p_alloc_start(s, o, progress, ctx, st));
}

static int p_alloc_control(struct hs_session *s, enum hs_alloc_op op, struct alc_status *st)
{
	static const enum proto_alloc_op ops[] = {
		[HS_ALLOC_STOP] = PROTO_ALLOC_STOP, [HS_ALLOC_STATUS] = PROTO_ALLOC_STATUS,
		[HS_ALLOC_RESET] = PROTO_ALLOC_RESET, [HS_ALLOC_MARK] = PROTO_ALLOC_MARK};
	struct proto_conn *c = alloc_conn(s);
	if (!c)
		return HS_ERR;
	struct hs_error err;
	if (proto_alloc_control(c, ops[op], st, &err))
		return hs_fail(s, "%s", err.msg);
	return HS_OK;
}

int hs_alloc_control(struct hs_session *s, enum hs_alloc_op op, struct alc_status *st)
{
	GUARDED(s, HS_ERR, p_alloc_control(s, op, st));
}

char *hs_recording_label(const struct hs_session *s)
{
	const struct hs_live *l = s->live;
	if (!l)
		return xasprintf("heapsh: allocation events of the JFR recording %s",
				 s->recording_path ? s->recording_path : "?");
	char main_class[512] = "";
	att_main_class(l->pid, main_class, sizeof main_class);
	return xasprintf("heapsh allocation recording of JVM %d (%s%s%s)", l->pid, main_class,
			 main_class[0] ? ", " : "", l->vm);
}
