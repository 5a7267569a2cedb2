/*
 * serve.h - heapsh --serve, the exporter (docs/fleet.md): a front end on the
 * session library (src/session/session.h), next to the shell, that follows
 * the JVMs of its own user on one host and serves what it measured in them
 * as OpenMetrics text at /metrics (libmicrohttpd). Three files, one concern
 * each: serve.c (options, signals, HTTP, the metrics text), watch.c (the
 * watch file and durations), jvms.c (finding JVMs, one thread and one
 * session per JVM, the watchdog, the values each round leaves).
 *
 * Threads: one worker per JVM runs every library call on that JVM (its own
 * hs_session, entered with hs_enter); the HTTP handler and the watchdog
 * only read what the workers published, under srv_lock, and never call
 * into a JVM. The library's per-thread context (src/base/ctx.h) keeps one
 * JVM's interrupt, memory pool and catches from another's.
 *
 * Ownership: what srv_* return is the caller's to free where said; the
 * JVM table and its samples are jvms.c's, read under srv_lock.
 */
#ifndef HS_SERVE_H
#define HS_SERVE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* One watch query: a line "NAME: QUERY" of the watch file. */
struct srv_watch {
	char *name;		/* the label value query="NAME" */
	char *query;		/* the query language's text, one line */
	int line;		/* its line in the file, from 1 */
	char bad[512];		/* why it is not run (a syntax error, a duplicate name), or "" */
};

/* What the exporter was asked to do (srv_main's options). */
struct srv_config {
	char listen[300];	/* as given: "127.0.0.1:9400", "[::1]:9400" */
	const char *watch_path;	/* the watch file, or NULL */
	struct srv_watch *watch;	/* its queries (srv_watch_load), nwatch of them */
	int nwatch;
	uint64_t every_ms;	/* a round of analyses per JVM, and a rescan, this often */
	uint64_t limit_ms;	/* one analysis inside a JVM: its time limit */
	uint32_t top;		/* classes (and allocation rows) per JVM */
	bool all;		/* follow every JVM of this user, found anew every round */
	int *pids;		/* else these */
	int npids;
	char host[256];		/* the host label */
};

/* Why something failed, as the reason label of heapsh_errors_total. */
enum srv_reason {
	SRV_ATTACH,		/* the attach or the agent's connection failed */
	SRV_EXITED,		/* the JVM exited */
	SRV_TIMEOUT,		/* an analysis reached its time limit, or the watchdog stopped it */
	SRV_HEAP,		/* the JVM's heap figures could not be read */
	SRV_HISTOGRAM,		/* the class histogram failed */
	SRV_ALLOC,		/* the allocation recording could not be read */
	SRV_QUERY_SYNTAX,	/* a watch query does not parse (counted once per JVM) */
	SRV_QUERY_FAILED,	/* a watch query stopped with an error inside the JVM */
	SRV_QUERY_UNSUPPORTED,	/* only a snapshot could answer it, and none is taken */
	SRV_QUERY_NOT_NUMBER,	/* its value is not a number nor keys with numbers */
	SRV_NREASONS
};

/* srv_reason_name: the label value of r ("attach", "timeout", ...); static. */
const char *srv_reason_name(enum srv_reason r);

/* The metric families, in the order /metrics gives them. */
enum srv_family {
	SRV_F_JVMS, SRV_F_UP, SRV_F_LAST_SUCCESS, SRV_F_SCRAPE, SRV_F_ERRORS, SRV_F_PAUSE,
	SRV_F_HEAP_USED, SRV_F_HEAP_COMMITTED, SRV_F_HEAP_MAX,
	SRV_F_CLASS_INSTANCES, SRV_F_CLASS_BYTES,
	SRV_F_ALLOC_OBJECTS, SRV_F_ALLOC_BYTES, SRV_F_ALLOC_LIVE_OBJECTS, SRV_F_ALLOC_LIVE_BYTES,
	SRV_F_QUERY,
	SRV_NFAMILIES
};

/* A value of one series of a JVM, as its last round left it. */
struct srv_sample {
	uint8_t family;		/* enum srv_family */
	int part;		/* what made it: SRV_PART_* or SRV_PART_QUERY + the watch query's index */
	char *labels;		/* more labels, written and escaped: class="Order"; or "" */
	double v;
};
#define SRV_PART_HEAP 0
#define SRV_PART_HISTOGRAM 1
#define SRV_PART_ALLOC 2
#define SRV_PART_QUERY 3

/* A followed JVM, as the HTTP handler reads it (under srv_lock). */
struct srv_jvm {
	int pid;
	char name[256];		/* the jvm label: -Dheapsh.name=, else the main class, else "" */
	struct srv_sample *smp;	/* the last values, nsmp of them */
	uint32_t nsmp;
	bool up;		/* the last round reached the JVM */
	double last_success;	/* wall clock of the last round that reached it, s; 0: none */
	double scrape_s;	/* the last round's wall time */
	double pause_s;		/* the JVM's pauses heapsh caused, in all (a counter) */
	uint64_t errors[SRV_NREASONS];	/* counters */
	bool exited;		/* gone; still shown until forget_at */
	double forget_at;
	bool done;		/* its worker has ended: join and free it */
	struct srv_jvm_priv *priv;	/* the worker's own (jvms.c) */
};

/* The table of JVMs and the lock over it and everything they publish. */
extern pthread_mutex_t srv_lock;
extern struct srv_jvm **srv_jvms;
extern uint32_t srv_njvms;

/*
 * srv_log: a line on standard error, "heapsh: " then fmt; the exporter's
 * log (systemd's journal, kubectl logs). Any thread.
 */
void srv_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * srv_parse_duration: "500ms", "10s", "2m", "1h", or a bare number of
 * seconds, into *ms (milliseconds, at least 1); false when text is none of
 * those or is over a day.
 */
bool srv_parse_duration(const char *text, uint64_t *ms);

/*
 * srv_watch_load: read the watch file path into c->watch (lines "NAME:
 * QUERY", '#' comments, blank lines). Each query is parsed (hs_explain on a
 * session of no heap, which runs nothing); a line that is not "NAME: QUERY",
 * a duplicate name, or a query that does not parse is logged as
 * "PATH:LINE: ..." and kept with its reason in bad (the others are served).
 * false, with why (cap bytes), only when the file cannot be read.
 * srv_watch_free: what c->watch holds.
 */
bool srv_watch_load(struct srv_config *c, const char *path, char *why, size_t cap);
void srv_watch_free(struct srv_config *c);

/*
 * srv_jvms_start: the watchdog thread, and a worker for each of c's PIDs
 * (those of another user refused and logged). srv_jvms_tick: from the main
 * thread, about every second: workers that ended joined and forgotten, and,
 * with c->all, a rescan every c->every_ms for JVMs of this user not yet
 * followed. srv_jvms_stop: every worker interrupted and told to stop; each
 * detaches from its JVM (the agent removes its socket) and ends; waits up
 * to wait_ms for them, then frees the table (workers still stuck in a call
 * are left to the process's exit). c must outlive the workers.
 */
void srv_jvms_start(const struct srv_config *c);
void srv_jvms_tick(const struct srv_config *c);
void srv_jvms_stop(uint64_t wait_ms);

/*
 * srv_render: the metrics text of every followed JVM (and the exporter's
 * own), OpenMetrics 1.0 (openmetrics true: # TYPE, # UNIT, # HELP per
 * family, counters' samples with _total, ending in "# EOF") or the
 * Prometheus text format 0.0.4. Takes srv_lock. New memory (free()),
 * *len bytes.
 */
char *srv_render(const struct srv_config *c, bool openmetrics, size_t *len);

#endif
