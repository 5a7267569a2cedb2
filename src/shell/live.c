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
#include "../alloc/alloc.h"
#include "../heap/heap.h"
#include "../attach/attach.h"
#include "../attach/proto.h"
#include "../attach/snapshot.h"
#include "../base/classname.h"
#include "../dsl/pushdown.h"
#include "../out/out.h"
#include "sh.h"

#define ATTACH_MS 10000

struct sh_live {
	int pid;
	struct proto_conn conn;
	time_t snap_time;	/* when the loaded heap was taken; 0: none */
	unsigned snapshots;	/* taken in this session: ids of an earlier one may be stale */
	char vm[300];
};

unsigned sh_live_snapshots(const struct sh *sh)
{
	return sh->live ? sh->live->snapshots : 0;
}

bool sh_is_live(const struct sh *sh)
{
	return sh->live != NULL;
}

/* agent_path: libheapsh_agent.so next to the heapsh binary, or $HEAPSH_AGENT. */
static bool agent_path(char *buf, size_t cap)
{
	const char *env = getenv("HEAPSH_AGENT");
	if (env && *env) {
		if (!realpath(env, buf) && strlen(env) < cap)
			snprintf(buf, cap, "%s", env);
		return access(buf, R_OK) == 0;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return false;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = 0;
	static const char *const where[] = {"%s/libheapsh_agent.so", "%s/../lib/heapsh/libheapsh_agent.so",
					     "%s/../libheapsh_agent.so"};
	for (size_t k = 0; k < sizeof where / sizeof *where; k++) {
		char p[PATH_MAX + 64];
		snprintf(p, sizeof p, where[k], exe);
		if (realpath(p, buf) && access(buf, R_OK) == 0)
			return true;
	}
	return false;
}

void sh_live_close(struct sh *sh)
{
	if (!sh->live)
		return;
	proto_close(&sh->live->conn);
	free(sh->live);
	sh->live = NULL;
}

/* connected: the agent connection, reconnecting once if it was lost. */
static int connected(struct sh *sh)
{
	struct sh_live *l = sh->live;
	if (!l)
		return sh_error(sh, NULL, "not attached to a JVM; :attach PID first");
	if (proto_alive(&l->conn))
		return HS_OK;
	struct hs_error err;
	if (proto_connect(l->pid, &l->conn, &err) != HS_OK)
		return sh_error(sh, NULL, "%s", err.msg);
	return HS_OK;
}

struct proto_conn *sh_live_conn(struct sh *sh)
{
	return connected(sh) == HS_OK ? &sh->live->conn : NULL;
}

int sh_live_pid(const struct sh *sh)
{
	return sh->live ? sh->live->pid : 0;
}

bool sh_live_farewell(struct sh *sh)
{
	if (!sh->live || !proto_alive(&sh->live->conn))
		return false;
	struct alc_status st;
	struct hs_error err;
	if (proto_alloc_control(&sh->live->conn, PROTO_ALLOC_STATUS, &st, &err) != HS_OK)
		return false;
	bool running = st.recording;
	if (running)
		fprintf(stderr, "note: the allocation recording in JVM %d goes on without heapsh; "
			"'heapsh %d' reads it later, ':alloc stop' ends it\n", sh->live->pid,
			sh->live->pid);
	alc_status_free(&st);
	return running;
}

void sh_live_leave(struct sh *sh)
{
	if (!sh->live)
		return;
	struct sh_live *l = sh->live;
	int outcome = PROTO_KEPT_ASKED, other = 0;
	struct hs_error err;
	bool told = false;
	if (proto_alive(&l->conn)) {
		if (proto_leave(&l->conn, !sh->keep_agent, &outcome, &other, &err) != HS_OK)
			outcome = PROTO_KEPT_ASKED;
		told = true;
	}
	bool tty = isatty(STDERR_FILENO);
	switch (told ? outcome : PROTO_KEPT_ASKED) {
	case PROTO_DETACHED:
		if (tty)
			fprintf(stderr, "detached from JVM %d (the agent stopped and removed its "
				"socket)\n", l->pid);
		break;
	case PROTO_KEPT_RECORDING:
		/* The recording lives in the agent: a running one says it goes on. */
		if (!sh_live_farewell(sh))
			fprintf(stderr, "note: heapsh's agent stays in JVM %d for its stopped "
				"allocation recording ('heapsh %d' reads it, ':alloc reset' drops "
				"it)\n", l->pid, l->pid);
		break;
	case PROTO_KEPT_SHELL:
		fprintf(stderr, "note: heapsh's agent stays in JVM %d: heapsh pid %d is using it\n",
			l->pid, other);
		break;
	case PROTO_KEPT_START:
		if (tty)
			fprintf(stderr, "note: heapsh's agent stays in JVM %d, which loaded it at "
				"start-up (-agentpath)\n", l->pid);
		break;
	default:
		if (told && outcome == PROTO_KEPT_ASKED && proto_alive(&l->conn))
			sh_live_farewell(sh);
		break;
	}
	sh_live_close(sh);
}

int sh_attach(struct sh *sh, int pid)
{
	char proc[64];
	struct stat st;
	snprintf(proc, sizeof proc, "/proc/%d", pid);
	if (pid <= 0 || stat(proc, &st) != 0)
		return sh_error(sh, NULL, "no process %d: check the pid (jps or ps lists JVMs)", pid);
	struct sh_live *l = xcalloc(1, sizeof *l);
	l->pid = pid;
	l->conn.fd = -1;
	struct hs_error err;
	hs_error_clear(&err);
	if (proto_connect(pid, &l->conn, &err) != HS_OK) {
		/* No agent yet: load it through the attach mechanism. */
		char lib[PATH_MAX];
		if (!agent_path(lib, sizeof lib)) {
			free(l);
			return sh_error(sh, NULL, "libheapsh_agent.so was not found next to heapsh; "
					"build it with 'make' or set HEAPSH_AGENT to its path");
		}
		enum att_kind kind;
		if (att_load_agent(pid, lib, "", ATTACH_MS, &kind, &err) != HS_OK) {
			free(l);
			return sh_error(sh, NULL, "%s", err.msg);
		}
		/* The agent's thread opens the socket: wait for it. */
		int st2 = HS_ERR;
		for (int k = 0; k < 100 && st2 != HS_OK; k++) {
			st2 = proto_connect(pid, &l->conn, &err);
			if (st2 != HS_OK)
				usleep(50000);
		}
		if (st2 != HS_OK) {
			free(l);
			return sh_error(sh, NULL, "the agent was loaded into JVM %d but does not "
					"answer: %s (the JVM's standard error may say why)", pid,
					err.msg);
		}
	}
	struct proto_info info;
	if (proto_info(&l->conn, &info, &err) != HS_OK) {
		proto_close(&l->conn);
		free(l);
		return sh_error(sh, NULL, "%s", err.msg);
	}
	snprintf(l->vm, sizeof l->vm, "%s %s", info.vm_name, info.vm_version);
	if (sh->live && sh->live->pid != pid)
		sh_live_leave(sh);	/* another JVM: let go of the one before */
	sh_live_close(sh);
	sh_close_heap(sh);
	free(sh->dump_path);
	sh->dump_path = NULL;
	sh->live = l;
	if (isatty(STDERR_FILENO) || sh->echo)
		fprintf(stderr, "attached to JVM %d (%s); heap used %" PRIu64 " of %" PRIu64
			" bytes\n", pid, l->vm, info.heap_used, info.heap_max);
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
	if (!sh->live)
		return sh_error(sh, NULL, "not attached to a JVM");
	struct hs_error err;
	int pid = sh->live->pid;
	if (connected(sh) == HS_OK)
		sh_live_farewell(sh);
	int st = connected(sh) == HS_OK ? proto_detach(&sh->live->conn, &err) : HS_ERR;
	bool snapshot = sh->live->snap_time != 0;
	sh_live_close(sh);
	if (snapshot)
		sh_close_heap(sh);
	if (st != HS_OK)
		return sh_error(sh, NULL, "detached from JVM %d, but the agent did not confirm: %s",
				pid, err.msg);
	out_printf("detached from JVM %d; the agent stopped and removed its socket\n", pid);
	return HS_OK;
}

static void snap_progress(void *ctx, uint64_t bytes)
{
	(void)ctx;
	fprintf(stderr, "\rreceiving the snapshot: %" PRIu64 " MB", bytes >> 20);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * forget_agent: the agent's own thread is no GC root of the program's: its
 * Thread object, stack and JNI locals leave the snapshot's roots (docs/agent.md).
 */
static void forget_agent(struct heap *h)
{
	for (uint32_t t = 0; t < h->nthreads; t++) {
		char *name = heap_thread_name(h, t);
		bool ours = name && !strcmp(name, "heapsh-agent");
		free(name);
		if (ours) {
			heap_forget_thread(h, t);
			return;
		}
	}
}

/* open_snapshot: the dump at path becomes the heap, the connection kept; path is removed. */
static int open_snapshot(struct sh *sh, const char *path)
{
	struct sh_live *l = sh->live;
	sh->live = NULL;	/* sh_open closes the old heap, not the connection */
	int st = sh_open(sh, path);
	sh->live = l;
	unlink(path);		/* the mapping keeps it readable */
	if (st != HS_OK)
		return HS_ERR;
	forget_agent(sh->heap);
	l->snap_time = time(NULL);
	l->snapshots++;
	return HS_OK;
}

/* stream_snapshot: the agent's own snapshot (a FollowReferences walk), :refresh --via agent. */
static int stream_snapshot(struct sh *sh)
{
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/heapsh-live-%d-XXXXXX", tmp && *tmp ? tmp : "/tmp",
		 sh->live->pid);
	int fd = mkstemp(path);
	if (fd < 0)
		return sh_error(sh, NULL, "cannot create a temporary file for the snapshot in %s: %s "
				"(set TMPDIR)", tmp && *tmp ? tmp : "/tmp", strerror(errno));
	close(fd);
	bool tty = isatty(STDERR_FILENO);
	struct hs_error err;
	double pause = 0;
	hs_interrupted = 0;
	int st = proto_snapshot(&sh->live->conn, path, &pause, tty ? snap_progress : NULL, NULL,
				&err);
	if (tty)
		fprintf(stderr, "\r\033[K");
	if (st != HS_OK) {
		unlink(path);
		return sh_error(sh, NULL, "snapshot of JVM %d failed: %s", sh->live->pid, err.msg);
	}
	if (open_snapshot(sh, path) != HS_OK)
		return HS_ERR;
	if (tty || sh->timer)
		fprintf(stderr, "snapshot of JVM %d: %u objects, from the agent's walk (the JVM "
			"paused about %.0f ms)\n", sh->live->pid, sh->heap->n, pause);
	return HS_OK;
}

#define SNAPSHOT_NOTE_BYTES (256ull << 20)	/* heap used from which a snapshot says it pauses */

/*
 * take_snapshot: a new snapshot of the attached JVM replaces the heap:
 * HotSpot's own heap dumper writes the live objects into a private
 * directory (jcmd GC.heap_dump through the attach mechanism, or the agent's
 * HotSpotDiagnosticMXBean when attach is off), heapsh loads the dump and
 * removes it. It pauses the JVM no longer than jcmd GC.heap_dump, which it
 * is, and is several times faster than the agent's own walk, whose tags
 * make JVMTI slow on big heaps (docs/performance.md). via "agent": that walk.
 */
static int take_snapshot(struct sh *sh, const char *via)
{
	if (connected(sh))
		return HS_ERR;
	if (via && !strcmp(via, "agent"))
		return stream_snapshot(sh);
	int pid = sh->live->pid;
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX], path[PATH_MAX + 32];
	snprintf(dir, sizeof dir, "%s/heapsh-snap-%d-XXXXXX", tmp && *tmp ? tmp : "/tmp", pid);
	if (!mkdtemp(dir))
		return sh_error(sh, NULL, "cannot create a private directory for the snapshot in %s: "
				"%s (set TMPDIR)", tmp && *tmp ? tmp : "/tmp", strerror(errno));
	/* The JVM writes the dump: a JVM of another user (heapsh as root) gets the directory. */
	char proc[64];
	struct stat jvm;
	snprintf(proc, sizeof proc, "/proc/%d", pid);
	if (stat(proc, &jvm) == 0 && jvm.st_uid != geteuid() && chown(dir, jvm.st_uid, jvm.st_gid))
		(void)0;	/* a JVM that cannot write there says so below */
	snprintf(path, sizeof path, "%s/snapshot.hprof", dir);
	bool tty = isatty(STDERR_FILENO);
	struct hs_error err;
	struct proto_info info;
	if (tty && proto_info(&sh->live->conn, &info, &err) == HS_OK &&
	    info.heap_used >= SNAPSHOT_NOTE_BYTES)
		fprintf(stderr, "taking a snapshot of JVM %d (%" PRIu64 " MB of heap used) with "
			"HotSpot's heap dumper: the JVM pauses while it dumps, about 2 s per GB\n",
			pid, info.heap_used >> 20);
	hs_interrupted = 0;
	double t0 = now_s(), dump_ms = 0;
	char *cmd = xasprintf("GC.heap_dump %s", path), *output = NULL;
	enum att_kind kind = ATT_OK;
	int st = att_jcmd(pid, cmd, 600000, &output, &kind, &err);
	free(cmd);
	free(output);
	const char *how = "jcmd GC.heap_dump";
	if (st != HS_OK && kind == ATT_DISABLED) {
		/* -XX:+DisableAttachMechanism: the agent asks the dumper itself. */
		how = "HotSpotDiagnosticMXBean.dumpHeap, through the agent";
		st = proto_dump(&sh->live->conn, path, &dump_ms, &err);
	}
	struct stat sb;
	if (st != HS_OK || stat(path, &sb) != 0) {
		if (st == HS_OK)
			snprintf(err.msg, sizeof err.msg, "the JVM wrote no dump (it may not write in %.200s)", dir);
		unlink(path);
		rmdir(dir);
		return sh_error(sh, NULL, "snapshot of JVM %d failed: %s", pid, err.msg);
	}
	double dumped = now_s();
	st = open_snapshot(sh, path);
	rmdir(dir);
	if (st != HS_OK)
		return HS_ERR;
	if (tty || sh->timer)
		fprintf(stderr, "snapshot of JVM %d: %u objects, from HotSpot's heap dump (%s: "
			"%.1f s; loaded in %.1f s)\n", pid, sh->heap->n, how, dumped - t0,
			now_s() - dumped);
	return HS_OK;
}

int sh_need_heap(struct sh *sh)
{
	if (sh->heap)
		return HS_OK;
	if (sh->live)
		return take_snapshot(sh, NULL);
	return sh_error(sh, NULL, "no heap is open; open one with 'heapsh DUMP' or ':open DUMP', "
			"or attach to a JVM with ':attach PID'");
}

int sh_cmd_refresh(struct sh *sh, int argc, char **argv)
{
	const char *via = NULL;
	if (argc == 3 && !strcmp(argv[1], "--via") &&
	    (!strcmp(argv[2], "dump") || !strcmp(argv[2], "agent")))
		via = argv[2];
	else if (argc != 1)
		return sh_error(sh, NULL, "usage: :refresh [--via dump|agent]");
	if (!sh->live)
		return sh_error(sh, NULL, "not attached to a JVM; :refresh takes a new snapshot of "
				"an attached JVM (:open reloads a dump)");
	return take_snapshot(sh, via);
}

int sh_cmd_dump(struct sh *sh, int argc, char **argv)
{
	if (argc != 2)
		return sh_error(sh, NULL, "usage: :dump FILE.hprof");
	if (!sh->live)
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
	struct hs_error err;
	int st = att_jcmd(sh->live->pid, cmd, 600000, &output, &kind, &err);
	free(cmd);
	if (st != HS_OK) {
		free(output);
		return sh_error(sh, NULL, "%s", err.msg);
	}
	if (stat(file, &sb) != 0) {
		sh_error(sh, NULL, "the JVM did not write %s: %s", file,
			 output && *output ? output : "no reason given");
		free(output);
		return HS_ERR;
	}
	free(output);
	struct sh_live *l = sh->live;
	sh->live = NULL;
	st = sh_open(sh, file);
	sh->live = l;
	if (st == HS_OK) {
		l->snap_time = time(NULL);
		/* Say what was written: it stays after heapsh exits. */
		fprintf(stderr, "wrote %s: %lld bytes, %u objects (the JVM's live heap, as jcmd "
			"GC.heap_dump writes it); the shell answers from it until :refresh\n", file,
			(long long)sb.st_size, sh->heap->n);
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
	if (connected(sh))
		return HS_ERR;
	struct att_hist_row *rows = NULL;
	uint32_t n = 0;
	struct hs_error err;
	enum att_kind kind = ATT_OK;
	char vm_failed[sizeof err.msg] = "";
	hs_interrupted = 0;
	/*
	 * HotSpot's own inspection (GC.class_histogram through the attach
	 * socket) runs on the GC's worker threads; the agent's IterateThroughHeap
	 * runs on one and looks up each object's class tag, several times slower
	 * on big heaps. The agent's answers when attach is off or asked for.
	 */
	bool from_vm = !via || !strcmp(via, "vm");
	if (from_vm) {
		int st = att_class_histogram(sh->live->pid, false, 600000, &rows, &n, &kind, &err);
		if (st == HS_INTERRUPTED || kind == ATT_EXITED || kind == ATT_NO_PROCESS)
			return sh_error(sh, NULL, "live histogram of JVM %d failed: %s",
					sh->live->pid, err.msg);
		if (st != HS_OK) {
			if (via)
				return sh_error(sh, NULL, "live histogram of JVM %d through the attach "
						"mechanism failed: %s", sh->live->pid, err.msg);
			snprintf(vm_failed, sizeof vm_failed, "%s", err.msg);
			from_vm = false;
		}
	}
	if (!from_vm && proto_histogram(&sh->live->conn, true, &rows, &n, &err) != HS_OK)
		return sh_error(sh, NULL, "live histogram of JVM %d failed: %s", sh->live->pid,
				err.msg);
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
		out_printf("live histogram of JVM %d after a full GC, from %s\n", sh->live->pid,
			   from_vm ? "HotSpot's heap inspection (as jcmd GC.class_histogram)"
				   : "the agent's heap iteration (bytes as GetObjectSize)");
	if (vm_failed[0])
		fprintf(stderr, "heapsh: note: the attach mechanism could not run "
			"GC.class_histogram (%s); the agent counted instead\n", vm_failed);
	att_hist_free(rows, m);
	return HS_OK;
}

/* ---- push-down ---- */

static struct proto_pred *convert(const struct dsl_pred *d)
{
	struct proto_pred *p = xcalloc(1, sizeof *p);
	p->op = (enum proto_op)d->op;
	p->n = d->n;
	p->kids = d->n ? xcalloc((size_t)d->n, sizeof *p->kids) : NULL;
	for (int k = 0; k < d->n; k++)
		p->kids[k] = convert(d->kids[k]);
	p->field = d->field;
	p->cmp = (enum proto_cmp)d->cmp;
	p->lit = (enum proto_lit)d->lit;
	p->l = d->l;
	p->d = d->d;
	p->s = d->s;
	return p;
}

static void pred_free(struct proto_pred *p)
{
	for (int k = 0; k < p->n; k++)
		pred_free(p->kids[k]);
	free(p->kids);
	free(p);
}

static void value_cell(struct out_table *tb, const struct proto_value *v)
{
	double d;
	float f;
	uint32_t lo = (uint32_t)v->bits;
	switch (v->kind) {
	case 'N': out_cell_null(tb); break;
	case 'T': out_cell_str(tb, v->text); break;
	case 'L': {
		char *n = snap_java_name(v->text);
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

bool sh_live_pushdown_shape(const char *text)
{
	struct dsl_pushdown pd;
	if (!dsl_pushdown(text, &pd))
		return false;
	dsl_pushdown_free(&pd);
	return true;
}

int sh_live_pushdown(struct sh *sh, const char *text, bool *handled)
{
	*handled = false;
	if (!sh->live || sh->heap)
		return HS_OK;
	struct dsl_pushdown pd;
	if (!dsl_pushdown(text, &pd))
		return HS_OK;
	*handled = true;
	if (connected(sh)) {
		dsl_pushdown_free(&pd);
		return HS_ERR;
	}
	struct proto_pred *pred = convert(pd.pred);
	struct proto_instances r;
	struct hs_error err;
	uint32_t limit = pd.op == PD_FILTER ? 100 : pd.op == PD_FIRST ? 1 : 0;
	hs_interrupted = 0;
	int st = proto_instances(&sh->live->conn, pd.cls, true, PROTO_WALK_GC_HEAP,
				 pd.op == PD_EXISTS, limit, pred, &r, &err);
	pred_free(pred);
	if (st != HS_OK && st != HS_INTERRUPTED && !strncmp(err.msg, "the agent says: ", 16) &&
	    proto_alive(&sh->live->conn)) {
		/* What the agent cannot evaluate (a member that is not a field, ...) a snapshot can. */
		if (sh->timer || isatty(STDERR_FILENO))
			fprintf(stderr, "heapsh: the agent cannot evaluate this query in JVM %d (%s); "
				"taking a snapshot\n", sh->live->pid, err.msg + 16);
		dsl_pushdown_free(&pd);
		*handled = false;
		return HS_OK;
	}
	if (st != HS_OK) {
		dsl_pushdown_free(&pd);
		return sh_error(sh, NULL, "the query could not run in JVM %d: %s", sh->live->pid,
				err.msg);
	}
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
			char *cn = snap_java_name(r.rows[i].cls);
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
	if (out_mode == OUT_TABLE && (sh->timer || isatty(STDERR_FILENO)))
		fprintf(stderr, "evaluated inside JVM %d: %" PRIu64 " instance%s of %s examined, "
			"%" PRIu64 " matched%s; no snapshot taken\n", sh->live->pid, r.examined,
			fmt_s(r.examined), pd.cls, r.matched, pd.op == PD_EXISTS && r.matched ? " (stopped at the first)" : "");
	proto_instances_free(&r);
	dsl_pushdown_free(&pd);
	return HS_OK;
}

/* ---- the prompt and :info ---- */

char *sh_live_prompt(const struct sh *sh)
{
	const struct sh_live *l = sh->live;
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
	if (connected(sh))
		return HS_ERR;
	struct proto_info in;
	struct hs_error err;
	if (proto_info(&sh->live->conn, &in, &err) != HS_OK)
		return sh_error(sh, NULL, "%s", err.msg);
	static const char *const cols[] = {"property", "value"};
	struct out_table *t = out_table_new(2, cols);
	out_cell_str(t, "jvm");
	out_cell_fmt(t, "pid %" PRIu64 ", %s %s (%s)", in.pid, in.vm_name, in.vm_version,
		     in.vm_vendor);
	out_cell_str(t, "heap used");
	out_cell_u64(t, in.heap_used);
	out_cell_str(t, "heap committed");
	out_cell_u64(t, in.heap_committed);
	out_cell_str(t, "heap max");
	out_cell_u64(t, in.heap_max);
	out_cell_str(t, "loaded classes");
	out_cell_u64(t, in.classes);
	out_cell_str(t, "agent");
	out_cell_str(t, in.agent);
	out_cell_str(t, "snapshot");
	if (sh->live->snap_time)
		out_cell_fmt(t, "taken %lds ago; :refresh takes a new one",
			     (long)(time(NULL) - sh->live->snap_time));
	else
		out_cell_str(t, "none yet (the first command that needs the object graph takes it)");
	out_table_end(t);
	return HS_OK;
}
