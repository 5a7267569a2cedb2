/*
 * live.c - a session's attached JVM (docs/agent.md): attaching (loading
 * libheapsh_agent.so through HotSpot's attach mechanism when it is not
 * there yet), the agent connection, leaving, snapshots (HotSpot's heap
 * dumper or the agent's own walk) that become the session's heap, and
 * reading an allocation recording. The shell's live commands (src/shell/
 * live.c) and the Lua module's heapsh.attach use these. See session.h.
 */
#include "session_internal.h"
#include "guard.h"

#include "../base/fmt.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../attach/attach.h"
#include "../attach/snapshot.h"
#include "../dsl/eval.h"

#define ATTACH_MS 10000

/*
 * agent_path: libheapsh_agent.so next to the heapsh binary, or $HEAPSH_AGENT:
 * a file of heapsh's, which att_load_agent copies into a JVM that runs in
 * another mount namespace.
 */
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

void hs_live_close(struct hs_session *s)
{
	if (!s->live)
		return;
	proto_close(&s->live->conn);
	free(s->live);
	s->live = NULL;
}

/*
 * fresh: a connection the agent closed while it was idle is closed here too,
 * to be opened again. Not when the JVM has gone: the request then fails
 * saying so, as it did before.
 */
static void fresh(struct hs_live *l)
{
	if (proto_peer_closed(&l->conn) && (kill(l->pid, 0) == 0 || errno == EPERM))
		proto_close(&l->conn);
}

struct proto_conn *hs_live_conn(struct hs_session *s)
{
	struct hs_live *l = s->live;
	if (!l) {
		hs_fail(s, "not attached to a JVM; :attach PID first");
		return NULL;
	}
	fresh(l);
	if (proto_alive(&l->conn))
		return &l->conn;
	struct hs_error err;
	if (proto_connect(l->pid, &l->conn, &err) != HS_OK) {
		hs_fail(s, "%s", err.msg);
		return NULL;
	}
	return &l->conn;
}

/* alloc_status: the attached JVM's recording status into *st (alc_status_free); false: none read. */
static bool alloc_status(struct hs_session *s, struct alc_status *st)
{
	struct hs_error err;
	return s->live && hs_live_conn(s) &&
	       proto_alloc_control(&s->live->conn, PROTO_ALLOC_STATUS, st, &err) == HS_OK;
}

bool hs_live_farewell(struct hs_session *s)
{
	struct alc_status st;
	if (!alloc_status(s, &st))
		return false;
	bool running = st.recording;
	if (running)
		hs_notify(s, HS_NOTICE_ALWAYS, "note: the allocation recording in JVM %d goes on "
			  "without heapsh; 'heapsh %d' reads it later, ':alloc stop' ends it",
			  s->live->pid, s->live->pid);
	alc_status_free(&st);
	return running;
}

void hs_leave(struct hs_session *s)
{
	if (!s->live)
		return;
	struct hs_live *l = s->live;
	int outcome = PROTO_KEPT_ASKED, other = 0;
	struct hs_error err;
	bool told = false;
	/* After a minute idle the agent has closed the connection: LEAVE on a new one. */
	fresh(l);
	if (!proto_alive(&l->conn))
		proto_connect(l->pid, &l->conn, &err);
	if (proto_alive(&l->conn)) {
		if (proto_leave(&l->conn, !s->keep_agent, &outcome, &other, &err) != HS_OK)
			outcome = PROTO_KEPT_ASKED;
		told = true;
	}
	switch (told ? outcome : PROTO_KEPT_ASKED) {
	case PROTO_DETACHED:
		hs_notify(s, HS_NOTICE_TTY, "detached from JVM %d (the agent stopped and removed "
			  "its socket)", l->pid);
		break;
	case PROTO_KEPT_RECORDING:
		/* The recording lives in the agent: a running one says it goes on. */
		if (!hs_live_farewell(s))
			hs_notify(s, HS_NOTICE_ALWAYS, "note: heapsh's agent stays in JVM %d for its "
				  "stopped allocation recording ('heapsh %d' reads it, ':alloc reset' "
				  "drops it)", l->pid, l->pid);
		break;
	case PROTO_KEPT_SHELL:
		hs_notify(s, HS_NOTICE_ALWAYS, "note: heapsh's agent stays in JVM %d: heapsh pid %d "
			  "is using it", l->pid, other);
		break;
	case PROTO_KEPT_START:
		hs_notify(s, HS_NOTICE_TTY, "note: heapsh's agent stays in JVM %d, which loaded it "
			  "at start-up (-agentpath)", l->pid);
		break;
	default:
		if (told && outcome == PROTO_KEPT_ASKED && proto_alive(&l->conn))
			hs_live_farewell(s);
		break;
	}
	hs_live_close(s);
}

static int p_attach(struct hs_session *s, int pid)
{
	char proc[64];
	struct stat st;
	snprintf(proc, sizeof proc, "/proc/%d", pid);
	if (pid <= 0 || stat(proc, &st) != 0)
		return hs_fail(s, "no process %d: check the pid (jps or ps lists JVMs)", pid);
	struct hs_live *l = xcalloc(1, sizeof *l);
	l->pid = pid;
	l->conn.fd = -1;
	struct hs_error err;
	hs_error_clear(&err);
	if (proto_connect(pid, &l->conn, &err) != HS_OK) {
		/* No agent yet: load it through the attach mechanism. */
		char lib[PATH_MAX];
		if (!agent_path(lib, sizeof lib)) {
			const char *env = getenv("HEAPSH_AGENT");
			free(l);
			if (env && *env)
				return hs_fail(s, "HEAPSH_AGENT names %s, which heapsh cannot read: point "
					       "it at libheapsh_agent.so, or unset it to use the one next "
					       "to heapsh", env);
			return hs_fail(s, "libheapsh_agent.so was not found next to heapsh; build it "
				       "with 'make' or set HEAPSH_AGENT to its path");
		}
		enum att_kind kind;
		if (att_load_agent(pid, lib, "", ATTACH_MS, &kind, &err) != HS_OK) {
			free(l);
			return hs_fail(s, "%s", err.msg);
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
			return hs_fail(s, "the agent was loaded into JVM %d but does not answer: %s "
				       "(the JVM's standard error may say why)", pid, err.msg);
		}
	}
	struct proto_info info;
	if (proto_info(&l->conn, &info, &err) != HS_OK) {
		proto_close(&l->conn);
		free(l);
		return hs_fail(s, "%s", err.msg);
	}
	snprintf(l->vm, sizeof l->vm, "%s %s", info.vm_name, info.vm_version);
	if (s->live && s->live->pid != pid)
		hs_leave(s);	/* another JVM: let go of the one before */
	hs_live_close(s);
	hs_drop_previous(s);
	hs_close_heap(s);
	free(s->dump_path);
	s->dump_path = NULL;
	s->live = l;
	char used[32], max[32];
	fmt_bytes(used, sizeof used, info.heap_used);
	fmt_bytes(max, sizeof max, info.heap_max);
	hs_notify(s, HS_NOTICE_ECHO, "attached to JVM %d (%s); heap used %s of %s", pid, l->vm,
		  used, max);
	return HS_OK;
}

int hs_attach(struct hs_session *s, int pid)
{
	GUARDED(s, HS_ERR, p_attach(s, pid));
}

static void snap_progress(void *ctx, uint64_t bytes)
{
	struct hs_session *s = ctx;
	s->snap_progress(s->ctx, bytes);
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
static int open_snapshot(struct hs_session *s, const char *path)
{
	struct hs_live *l = s->live;
	/* A snapshot of this JVM before it stays as :suspects' baseline (HS_PREVIOUS). */
	struct hs_prev prev = s->prev;
	memset(&s->prev, 0, sizeof s->prev);
	if (s->heap && l->snapshots > 0 && s->gen == l->snap_gen) {
		for (int k = 0; k < 2; k++)
			dom_tree_free(prev.dom[k]);
		heap_free(prev.heap);
		dsl_free(s->dsl);	/* it holds the heap's objects */
		s->dsl = NULL;
		prev = (struct hs_prev){s->heap, {s->dom[0], s->dom[1]}, l->snap_time};
		s->heap = NULL;
		s->dom[0] = s->dom[1] = NULL;
		hs_close_heap(s);	/* what else was made of it */
		s->gen++;
	}
	s->live = NULL;	/* hs_open closes the old heap, not the connection */
	bool no_index = s->no_index;
	s->no_index = true;	/* a snapshot is a temporary file: no index */
	int st = hs_open(s, path);
	s->no_index = no_index;
	s->live = l;
	s->prev = prev;
	unlink(path);		/* the mapping keeps it readable */
	if (st != HS_OK)
		return st;
	forget_agent(s->heap);
	l->snap_time = time(NULL);
	l->snapshots++;
	l->snap_gen = s->gen;
	return HS_OK;
}

/* stream_snapshot: the agent's own snapshot (a FollowReferences walk), :refresh --via agent. */
static int stream_snapshot(struct hs_session *s)
{
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/heapsh-live-%d-XXXXXX", tmp && *tmp ? tmp : "/tmp",
		 s->live->pid);
	int fd = mkstemp(path);
	if (fd < 0)
		return hs_fail(s, "cannot create a temporary file for the snapshot in %s: %s "
				"(set TMPDIR)", tmp && *tmp ? tmp : "/tmp", strerror(errno));
	close(fd);
	struct hs_error err;
	double pause = 0;
	hs_interrupted = 0;
	int st = proto_snapshot(&s->live->conn, path, &pause, s->snap_progress ? snap_progress : NULL,
				s, &err);
	if (s->snap_progress)
		s->snap_progress(s->ctx, UINT64_MAX);	/* done */
	if (st != HS_OK) {
		unlink(path);
		return hs_fail(s, "snapshot of JVM %d failed: %s", s->live->pid, err.msg);
	}
	if ((st = open_snapshot(s, path)) != HS_OK)
		return st;
	hs_notify(s, HS_NOTICE_TIMER, "snapshot of JVM %d: %u objects, from the agent's walk (the "
		  "JVM paused about %.0f ms)", s->live->pid, s->heap->n, pause);
	return HS_OK;
}

#define SNAPSHOT_NOTE_BYTES (256ull << 20)	/* heap used from which a snapshot says it pauses */

/*
 * hs_snapshot: a new snapshot of the attached JVM replaces the heap:
 * HotSpot's own heap dumper writes the live objects into a private
 * directory (jcmd GC.heap_dump through the attach mechanism, or the agent's
 * HotSpotDiagnosticMXBean when attach is off), heapsh loads the dump and
 * removes it. It pauses the JVM no longer than jcmd GC.heap_dump, which it
 * is, and is several times faster than the agent's own walk, whose tags
 * make JVMTI slow on big heaps (docs/performance.md). via "agent": that walk.
 */
static int p_snapshot(struct hs_session *s, const char *via)
{
	if (!hs_live_conn(s))
		return HS_ERR;
	if (via && !strcmp(via, "agent"))
		return stream_snapshot(s);
	int pid = s->live->pid;
	/*
	 * The JVM writes the dump into a private folder it can reach: in
	 * $TMPDIR, or in its own /tmp when it runs in another mount namespace (a
	 * container), which heapsh reads through /proc/PID/root.
	 */
	const char *tmp = getenv("TMPDIR");
	char prefix[48], path[sizeof ((struct att_jvm_dir *)0)->here + 32], there[sizeof path];
	struct att_jvm_dir dir;
	enum att_kind kind = ATT_OK;
	struct hs_error err;
	snprintf(prefix, sizeof prefix, "heapsh-snap-%d-", att_nspid(pid));
	if (att_jvm_dir_make(pid, tmp, prefix, &dir, &kind, &err) != HS_OK)
		return hs_fail(s, "snapshot of JVM %d failed: %s%s", pid, err.msg,
			       kind == ATT_IO && !dir.other_ns ? " (set TMPDIR)" : "");
	snprintf(path, sizeof path, "%s/snapshot.hprof", dir.here);
	snprintf(there, sizeof there, "%s/snapshot.hprof", dir.there);
	struct proto_info info;
	if (s->notice && proto_info(&s->live->conn, &info, &err) == HS_OK &&
	    info.heap_used >= SNAPSHOT_NOTE_BYTES)
		hs_notify(s, HS_NOTICE_TTY, "taking a snapshot of JVM %d (%" PRIu64 " MB of heap used) "
			  "with HotSpot's heap dumper: the JVM pauses while it dumps, about 2 s per GB",
			  pid, info.heap_used >> 20);
	hs_interrupted = 0;
	double t0 = now_s(), dump_ms = 0;
	int st = att_jvm_dir_dump(pid, &dir, "snapshot.hprof", 600000, &kind, &err);
	const char *how = "jcmd GC.heap_dump";
	if (st != HS_OK && kind == ATT_DISABLED) {
		/* -XX:+DisableAttachMechanism: the agent asks the dumper itself. */
		how = "HotSpotDiagnosticMXBean.dumpHeap, through the agent";
		st = proto_dump(&s->live->conn, there, &dump_ms, &err);
		if (st == HS_OK && !att_jvm_dir_has(&dir, "snapshot.hprof", NULL)) {
			snprintf(err.msg, sizeof err.msg, "the JVM wrote no dump (it may not write in "
				 "%.200s%s%.200s)", dir.there, dir.other_ns ? ", its own /tmp, which heapsh "
				 "reaches as " : "", dir.other_ns ? dir.here : "");
			st = HS_ERR;
		}
	}
	if (st != HS_OK) {
		att_jvm_dir_remove(&dir);
		return hs_fail(s, "snapshot of JVM %d failed: %s", pid, err.msg);
	}
	double dumped = now_s();
	/* Read through a descriptor opened without following links: the folder
	 * is the JVM user's, who could swap the file for a link (jvmdir.c). */
	int fd = att_jvm_dir_open(&dir, "snapshot.hprof", &kind, &err);
	if (fd < 0) {
		att_jvm_dir_remove(&dir);
		return hs_fail(s, "snapshot of JVM %d failed: %s", pid, err.msg);
	}
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	st = open_snapshot(s, path);
	close(fd);	/* the mapping keeps it readable */
	att_jvm_dir_remove(&dir);
	if (st != HS_OK)
		return st;
	hs_notify(s, HS_NOTICE_TIMER, "snapshot of JVM %d: %u objects, from HotSpot's heap dump "
		  "(%s: %.1f s; loaded in %.1f s)", pid, s->heap->n, how, dumped - t0,
		  now_s() - dumped);
	return HS_OK;
}

int hs_snapshot(struct hs_session *s, const char *via)
{
	GUARDED(s, HS_ERR, p_snapshot(s, via));
}

static int p_need_heap(struct hs_session *s)
{
	if (s->heap)
		return HS_OK;
	if (s->live)
		return hs_snapshot(s, NULL);
	return hs_fail(s, "no heap is open; open one with 'heapsh DUMP' or ':open DUMP', or attach "
		       "to a JVM with ':attach PID'");
}

int hs_need_heap(struct hs_session *s)
{
	GUARDED(s, HS_ERR, p_need_heap(s));
}

void hs_alloc_bounds(struct hs_session *s, const struct alc_status *st)
{
	if (st->dropped)
		hs_notify(s, HS_NOTICE_ALWAYS, "warning: %" PRIu64 " allocations were not recorded "
			  "because the agent's tables reached their bound; counts are low by that much",
			  st->dropped);
	if (st->untracked)
		hs_notify(s, HS_NOTICE_ALWAYS, "warning: %" PRIu64 " recorded objects are not followed "
			  "because the agent's tables reached their bound; live counts are low by up "
			  "to that much", st->untracked);
	if (st->uncovered) {
		unsigned n = 1;
		for (const char *p = st->uncovered; *p; p++)
			n += *p == '\n';
		const char *nl = strchr(st->uncovered, '\n');
		hs_notify(s, HS_NOTICE_ALWAYS, "warning: %u method%s running since before the recording "
			  "started run%s old code, whose own allocations are not counted until %s "
			  "(:alloc status lists them): %.*s%s", n, n == 1 ? "" : "s", n == 1 ? "s its" : " their",
			  n == 1 ? "it returns" : "they return",
			  nl ? (int)(nl - st->uncovered) : (int)strlen(st->uncovered), st->uncovered,
			  n > 1 ? ", ..." : "");
	}
	if (st->no_live && st->exists)
		hs_notify(s, HS_NOTICE_ALWAYS, "note: this recording does not follow its objects "
			  "(--live none): live counts are 0");
}

/* leak_notes: what a leak search did and left out, as notices. */
static void leak_notes(struct hs_session *s, const struct alc_rec *r, const struct hs_leak_search *st,
		       uint64_t time_ms, uint64_t mem)
{
	const char *since = r->st.has_mark ? "since the mark" : "since the start (:alloc mark sets a mark)";
	if (!st->classes) {
		hs_notify(s, HS_NOTICE_ALWAYS, "note: no allocation site has more live objects than %s: "
			  "nothing grew", r->st.has_mark ? "at the mark" : "at the start");
		return;
	}
	hs_notify(s, HS_NOTICE_ALWAYS, "note: paths to %u of %u sampled live objects of the %u classes "
		  "whose allocation sites grew most %s, found inside the JVM in one walk of its heap: "
		  "JVM paused %s%" PRIu64 " ms (%s), %u objects tagged%s",
		  st->reached, st->sampled, st->classes, since, st->hist_ms ? "at most " : "",
		  st->walk_ms + st->hist_ms, st->hist_ms ? "its class histogram and the walk" :
		  "a count of its objects and the walk", st->nodes,
		  st->has_gcs ? "; age_gcs: the GCs the samples survived, their mean" : "");
	if (st->reached < st->sampled)
		hs_notify(s, HS_NOTICE_ALWAYS, "note: %u sampled objects were not reached: dead since the "
			  "read, held only through a String or a weak reference, or through objects the "
			  "walk does not follow (docs/agent.md, \"Leaks in a running JVM\")%s",
			  st->sampled - st->reached, st->timed_out || st->cut ? ", or past the limits" : "");
	if (st->nskipped) {
		char *list = NULL;
		for (uint32_t i = 0; i < st->nskipped; i++) {
			char *t = xasprintf("%s%s%s (%" PRIu64 ")", list ? list : "", list ? ", " : "",
					    r->classes[st->skipped_cls[i]], st->skipped_cost[i]);
			free(list);
			list = t;
		}
		hs_notify(s, HS_NOTICE_ALWAYS, "note: not searched, as too many objects could hold them "
			  "(more than the %" PRIu64 " the walk may tag: 5%% of the heap's objects, within "
			  ":live --memory): %s", st->budget, list);
		free(list);
	}
	if (st->timed_out)
		hs_notify(s, HS_NOTICE_ALWAYS, "note: the walk stopped at the time limit (:live --time %" PRIu64
			  "): paths are missing", time_ms / 1000);
	if (st->cut)
		hs_notify(s, HS_NOTICE_ALWAYS, "note: the walk reached its budget of %" PRIu64 " objects "
			  "(5%% of the heap's, within :live --memory %" PRIu64 "): %" PRIu64 " more were "
			  "left unwalked, and paths through them are missing", st->budget, mem >> 20, st->cut);
}

static int p_alloc_leaks(struct hs_session *s, struct alc_rec *r, uint64_t time_ms, uint64_t mem,
		   struct hs_leak_search *st)
{
	memset(st, 0, sizeof *st);
	if (!s->live)
		return hs_fail(s, "no JVM is attached");
	struct proto_conn *c = hs_live_conn(s);
	if (!c)
		return HS_ERR;
	uint32_t ng = 0, classes[16];
	struct alc_growth *g = alc_growth(r, &ng);
	for (uint32_t i = 0; i < ng && st->classes < 16; i++) {
		bool seen = false;
		for (uint32_t k = 0; k < st->classes && !seen; k++)
			seen = classes[k] == g[i].cls;
		if (g[i].growth_bytes > 0 && !seen)
			classes[st->classes++] = g[i].cls;
	}
	free(g);
	if (!st->classes)
		return HS_OK;
	/*
	 * The JVM's own class histogram, which the agent prunes its walk by
	 * (HotSpot's parallel heap inspection: a fraction of the pause of the
	 * agent's own count, which looks up each object's tag); without it
	 * (attach off, JDK before 16 slower) the agent counts.
	 */
	struct att_hist_row *hist = NULL;
	uint32_t nhist = 0;
	enum att_kind kind = ATT_OK;
	struct hs_error err;
	double t0 = now_s();
	int hst = att_class_histogram(s->live->pid, true, (int)(time_ms < 600000 ? time_ms : 600000), &hist,
				      &nhist, &kind, &err);
	uint64_t hist_ms = (uint64_t)((now_s() - t0) * 1000);
	if (hst == HS_INTERRUPTED)
		return hs_fail(s, "interrupted");
	if (hst != HS_OK)
		hs_notify(s, HS_NOTICE_ALWAYS, "note: the JVM's class histogram failed (%s): the agent "
			  "counts the instances itself, a longer pause", err.msg);
	struct proto_leaks pl;
	int lst = proto_alloc_leaks(c, classes, st->classes, r->nkeys, hst == HS_OK ? hist : NULL, nhist,
				    time_ms, mem, &pl, &err);
	att_hist_free(hist, nhist);
	if (lst)
		return hs_fail(s, "%s", err.msg);
	for (uint32_t i = 0; r->leaks && i < r->nleaks; i++)
		free(r->leaks[i].path);
	free(r->leaks);
	r->leaks = xcalloc((size_t)pl.n + 1, sizeof *r->leaks);
	r->nleaks = 0;
	for (uint32_t i = 0; i < pl.n; i++) {
		const struct proto_leak *l = &pl.v[i];
		if (!l->reached)
			continue;
		const struct alc_key *k = l->key < r->nkeys ? &r->keys[l->key] : NULL;
		char *root = xasprintf("[%s]", l->root), *steps = NULL;
		for (uint32_t j = 0; j < l->nsteps; j++)
			alc_path_step(&steps, l->type[j], l->field[j]);
		char *path = alc_path_end(root, steps, k && k->cls < r->nclasses ? r->classes[k->cls] : "?");
		free(root);
		free(steps);
		r->leaks[r->nleaks++] = (struct alc_leak){k ? k->node : ALC_NONE, k ? k->cls : ALC_NONE,
							  l->skipped, pl.has_gcs ? l->age : ALC_NONE, path};
	}
	*st = (struct hs_leak_search){st->classes, pl.n, pl.reached, pl.nodes, pl.cut,
				      pl.prep_ms, pl.walk_ms, pl.counted ? 0 : hist_ms, pl.timed_out,
				      pl.has_gcs, pl.budget, 0, {0}, {0}};
	for (uint32_t i = 0; i < pl.nskipped && st->nskipped < 16; i++)
		if (pl.skipped_cls[i] < r->nclasses) {
			st->skipped_cls[st->nskipped] = pl.skipped_cls[i];
			st->skipped_cost[st->nskipped++] = pl.skipped_cost[i];
		}
	proto_leaks_free(&pl);
	leak_notes(s, r, st, time_ms, mem);
	return HS_OK;
}

int hs_alloc_leaks(struct hs_session *s, struct alc_rec *r, uint64_t time_ms, uint64_t mem,
		   struct hs_leak_search *st)
{
	GUARDED(s, HS_ERR, p_alloc_leaks(s, r, time_ms, mem, st));
}

bool hs_alloc_marked(struct hs_session *s, uint64_t *when)
{
	*when = 0;
	struct alc_status st;
	if (!alloc_status(s, &st))
		return false;
	bool marked = st.exists && st.has_mark && !st.no_live;
	*when = st.mark_ms;
	alc_status_free(&st);
	return marked;
}

static int p_alloc_fetch(struct hs_session *s, struct alc_rec **out)
{
	*out = NULL;
	if (!s->live && s->recording) {
		*out = alc_copy(s->recording);
		return HS_OK;
	}
	struct proto_conn *c = hs_live_conn(s);
	if (!c)
		return HS_ERR;
	struct hs_error err;
	if (proto_alloc_read(c, out, &err))
		return hs_fail(s, "%s", err.msg);
	hs_alloc_bounds(s, &(*out)->st);
	return HS_OK;
}

int hs_alloc_fetch(struct hs_session *s, struct alc_rec **out)
{
	GUARDED(s, HS_ERR, p_alloc_fetch(s, out));
}

