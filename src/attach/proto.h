/*
 * proto.h - the client side of heapsh's agent protocol (docs/protocol.md):
 * connect to libheapsh_agent.so in a running JVM, and ask it for VM facts,
 * a class histogram, a snapshot of the heap (written as an HPROF file that
 * heap_load reads like any dump), or the instances of a class that satisfy
 * a predicate evaluated inside the VM.
 *
 * Errors: every function returns HS_OK or HS_ERR with err->msg saying what
 * failed and what to do; a reply that breaks the protocol, a dead socket or
 * a JVM that went away are errors, never crashes. After an I/O error the
 * connection is closed (proto_alive says so).
 *
 * Ownership: proto_connect fills a caller-owned struct released with
 * proto_close; results are new memory released with the matching _free.
 */
#ifndef HS_PROTO_H
#define HS_PROTO_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/mem.h"
#include "attach.h"

#define PROTO_VERSION 1

struct proto_conn {
	int fd;			/* -1 when closed */
	int pid;		/* the JVM's pid as we see it */
	char agent[64];		/* the agent's version string */
	char caps[128];		/* what it offers, comma-separated (HELLO) */
};

/* proto_socket_path: where the agent of JVM pid listens (docs/protocol.md). */
void proto_socket_path(int pid, char *buf, size_t cap);

/*
 * proto_connect: connect to the agent of JVM pid and say HELLO. HS_ERR when
 * no agent listens (err says so; the caller may then load it).
 */
int proto_connect(int pid, struct proto_conn *c, struct hs_error *err);
void proto_close(struct proto_conn *c);
bool proto_alive(const struct proto_conn *c);
/*
 * proto_peer_closed: the agent has closed an open connection that waits for
 * no reply (it closes one idle for a minute, src/agent/ag.h IDLE_MS; or the
 * JVM went away): the next request would fail with a broken pipe, so the
 * caller closes it and connects again. Looks without waiting (poll, then a
 * peek of one byte); false for a closed c.
 */
bool proto_peer_closed(const struct proto_conn *c);

struct proto_info {
	char vm_name[128], vm_version[128], vm_vendor[128], agent[64];
	uint64_t pid, heap_used, heap_committed, heap_max;	/* bytes */
	uint32_t classes;
};
int proto_info(struct proto_conn *c, struct proto_info *out, struct hs_error *err);

/*
 * proto_histogram: one row per class with instances, from the agent's
 * IterateThroughHeap with class tags (bytes from GetObjectSize); gc runs a
 * full GC first. *rows is new memory: att_hist_free.
 */
int proto_histogram(struct proto_conn *c, bool gc, struct att_hist_row **rows, uint32_t *n,
		    struct hs_error *err);

/*
 * proto_snapshot: the heap reachable from the GC roots, written to path as
 * an HPROF 1.0.2 file. *pause_ms (may be NULL) gets the time from the
 * request to the first byte of the reply: the VM's pause and the agent's
 * writing. progress (may be NULL) is called with the bytes received.
 */
int proto_snapshot(struct proto_conn *c, const char *path, double *pause_ms,
		   void (*progress)(void *ctx, uint64_t bytes), void *ctx, struct hs_error *err);

/* A predicate for proto_instances: a tree of and/or/not over comparisons. */
enum proto_op { PROTO_TRUE, PROTO_AND, PROTO_OR, PROTO_NOT, PROTO_CMP };
enum proto_cmp { PROTO_EQ, PROTO_NE, PROTO_LT, PROTO_LE, PROTO_GT, PROTO_GE };
enum proto_lit { PROTO_NULL, PROTO_LONG, PROTO_DOUBLE, PROTO_STRING, PROTO_BOOL };

struct proto_pred {
	enum proto_op op;
	int n;				/* AND / OR / NOT children */
	struct proto_pred **kids;
	const char *field;		/* CMP */
	enum proto_cmp cmp;
	enum proto_lit lit;
	int64_t l;			/* PROTO_LONG, PROTO_BOOL */
	double d;
	const char *s;
};

struct proto_value {
	char *field;
	char kind;		/* Z B C S I J F D, T string, L object, N null */
	uint64_t bits;
	char *text;		/* T: the string; L: the object's class signature */
};

struct proto_row {
	char *cls;		/* class signature */
	int n;
	struct proto_value *v;
};

struct proto_instances {
	uint64_t examined, matched;
	uint32_t nrows;
	struct proto_row *rows;
};

/* How the agent finds the instances (docs/protocol.md, INSTANCES flags). */
enum proto_walk {
	PROTO_WALK_REFS,	/* FollowReferences from the GC roots: reachable objects only */
	PROTO_WALK_HEAP,	/* IterateThroughHeap: faster; may see garbage not yet collected */
	PROTO_WALK_GC_HEAP	/* a full GC, then IterateThroughHeap: reachable objects only */
};

/*
 * proto_instances: objects of class cls (subclasses too if asked) whose
 * fields satisfy pred, evaluated in the VM; at most limit rows, but matched
 * counts them all. walk says how the heap is visited: on big heaps
 * PROTO_WALK_GC_HEAP is several times faster than PROTO_WALK_REFS
 * (docs/performance.md). first_only stops at the first match (for exists:
 * matched is then 0 or 1).
 */
int proto_instances(struct proto_conn *c, const char *cls, bool subclasses, enum proto_walk walk,
		    bool first_only, uint32_t limit, const struct proto_pred *pred,
		    struct proto_instances *out, struct hs_error *err);
void proto_instances_free(struct proto_instances *r);

/*
 * Allocation recordings (docs/protocol.md, ALLOC_*; docs/agent.md). Each
 * call fills *st (st->accounts is new memory: alc_status_free) with the
 * recording's state after the request. proto_alloc_start starts a
 * recording: exact (every allocation, by bytecode instrumentation or, with
 * jvmti, by JVMTI events) or sampled every interval bytes on
 * average (1 to 2^31-1), depth frames kept per stack (1 to 1024), accounts
 * a comma-separated list of package patterns (a.b, a.b.*) or NULL; an
 * agent error (already recording, a bad pattern) is HS_ERR with its words.
 * While an exact recording rewrites the loaded classes, progress (when not
 * NULL) hears how many of how many are done; Ctrl-C (hs_interrupted) asks
 * the agent to cancel, which puts every class back and answers HS_ERR.
 * proto_alloc_control: stop, status, reset (drop what was recorded; a
 * running recording goes on afresh) or mark (live objects now, after a full
 * GC, kept for later diffs). proto_alloc_read: the whole recording, live
 * counts measured after a full GC, in a new struct alc_rec (alc_free); the
 * stream is checked record by record and bounded (1 GiB).
 */
struct alc_status;
struct alc_rec;
struct alc_opts;
enum proto_alloc_op { PROTO_ALLOC_STOP, PROTO_ALLOC_STATUS, PROTO_ALLOC_RESET, PROTO_ALLOC_MARK };
int proto_alloc_start(struct proto_conn *c, const struct alc_opts *o,
		      void (*progress)(void *ctx, uint32_t done, uint32_t total), void *ctx,
		      struct alc_status *st, struct hs_error *err);
int proto_alloc_control(struct proto_conn *c, enum proto_alloc_op op, struct alc_status *st,
			struct hs_error *err);
int proto_alloc_read(struct proto_conn *c, struct alc_rec **out, struct hs_error *err);
/*
 * proto_alloc_decode: the records of an ALLOC_READ stream (p, n bytes; the
 * END frame announced `records`) into a new struct alc_rec (alc_free).
 * Every index is checked against the records before it and every counter
 * for being a finite number from 0 to 1e19; HS_ERR with why (cap bytes)
 * saying which record is wrong. Used by proto_alloc_read; exposed for tests.
 */
int proto_alloc_decode(const uint8_t *p, size_t n, uint64_t records, struct alc_rec **out, char *why,
		       size_t cap);

/*
 * proto_alloc_leaks: paths from GC roots to the leak sample (up to 64 live
 * followed objects per class) of the recording's classes classes[0..n)
 * (the recorder's class numbers, as ALLOC_READ gives them; n <= 64; only
 * objects of the first known_keys keys, those the shell read), found
 * by the agent in one walk of the heap inside the JVM (docs/protocol.md,
 * ALLOC_LEAKS; docs/agent.md), within time_ms for the walk and mem bytes
 * of tags. Each sampled object is one path: its key, its age in GCs since
 * it was recorded, reached or not, links left out, the root's words and
 * the steps from the root (type as a JNI signature or "class NAME", field
 * name, "[]" for an array element, "" for none). hist[0..nhist): the
 * JVM's class histogram (att_class_histogram), taken after the read's full
 * GC, for the agent to prune its walk by (NULL: the agent counts the
 * instances itself, a pass over the heap; agents before 1.4 always do).
 * Ctrl-C sends CANCEL.
 * HS_ERR with the agent's words (no recording, --live none, cancelled) or
 * the connection's; out is new memory (proto_leaks_free).
 */
struct proto_leak {
	uint32_t key, age, skipped;
	bool reached;
	char *root;
	uint32_t nsteps;
	char **type, **field;
};
struct proto_leaks {
	struct proto_leak *v;
	uint32_t n;
	uint32_t reached, nodes, gcs;	/* sampled objects reached; objects tagged; GCs so far */
	uint64_t cut, refs;	/* objects left unwalked by the memory limit; references seen */
	uint64_t prep_ms, walk_ms;	/* classes and fixed point (JVM running); the walk (JVM paused) */
	bool timed_out, has_gcs;
	bool counted;		/* the agent counted the instances (no histogram given or taken) */
	uint64_t budget;	/* objects the walk could tag: 5 % of the heap's, within the memory limit */
	uint32_t nskipped;	/* classes asked but not searched: the objects that could hold them */
	uint32_t skipped_cls[64];	/* ... are over the budget: these classes, with that count */
	uint64_t skipped_cost[64];
};
int proto_alloc_leaks(struct proto_conn *c, const uint32_t *classes, uint32_t n, uint32_t known_keys,
		      const struct att_hist_row *hist, uint32_t nhist, uint64_t time_ms, uint64_t mem,
		      struct proto_leaks *out, struct hs_error *err);
void proto_leaks_free(struct proto_leaks *l);

/*
 * proto_dump: the agent has HotSpot's heap dumper (HotSpotDiagnosticMXBean)
 * write the JVM's live objects to path (absolute; a file that must not
 * exist); *ms: how long the dump took in the JVM. For JVMs whose attach
 * mechanism is off; errors as the others, the JVM's exception in err.
 */
int proto_dump(struct proto_conn *c, const char *path, double *ms, struct hs_error *err);

/*
 * proto_leave: this shell stops using the agent; with detach, the agent
 * stops and removes its socket unless something else needs it. *outcome:
 * PROTO_LEFT_* (docs/protocol.md, LEAVE), *other: the pid of another shell
 * using it (PROTO_KEPT_SHELL). Closes c when detached. An agent that does
 * not know LEAVE (an older heapsh's) is PROTO_KEPT_ASKED, nothing sent.
 */
enum { PROTO_DETACHED, PROTO_KEPT_RECORDING, PROTO_KEPT_SHELL, PROTO_KEPT_START, PROTO_KEPT_ASKED };
int proto_leave(struct proto_conn *c, bool detach, int *outcome, int *other, struct hs_error *err);

/*
 * proto_analyze: run a query program (src/dsl/prog.h; prog len bytes)
 * inside the JVM (docs/protocol.md, ANALYZE), with a time limit (ms) and a
 * memory limit for the agent (MiB; 0 for the agent's defaults). *out gets
 * the results, one per statement that produced a value, and the outcome:
 * status (PROTO_ANALYSIS_*), where it failed and why, and what it took.
 * Ctrl-C (hs_interrupted) sends CANCEL, and the agent's END then says
 * cancelled. HS_ERR is for the connection and the protocol only (err); the
 * analysis' own failures are in out. out is new memory:
 * proto_analysis_free. Results are bounded: 256 MiB, 50 M values, lists
 * nested at most 64 deep. flags: PROTO_ANALYZE_NO_GC, the agent makes no
 * full GC before its first walk (the client had one made just before; an
 * agent that cannot skip it, no "analyze-no-gc" in its HELLO, makes it).
 */
#define PROTO_ANALYZE_NO_GC 1u
enum { PROTO_ANALYSIS_OK, PROTO_ANALYSIS_UNSUPPORTED, PROTO_ANALYSIS_ERROR,
       PROTO_ANALYSIS_LIMIT, PROTO_ANALYSIS_CANCELLED };
enum proto_vk { PV_NULL, PV_BOOL, PV_INT, PV_FLOAT, PV_STR, PV_OBJ, PV_CLASS, PV_LOADER,
		PV_THREAD, PV_LIST, PV_STRUCT, PV_REFKIND, PV_LAMBDA };
struct proto_val {
	enum proto_vk k;
	bool b;
	int64_t i;		/* INT; REFKIND */
	double f;
	char *s;		/* STR; the class name of OBJ; the name of CLASS, LOADER, THREAD */
	uint64_t id;		/* OBJ, CLASS, LOADER, THREAD: the address (0 unknown) */
	uint64_t size;		/* OBJ: shallow bytes */
	uint8_t okind;		/* OBJ: 0 instance, 1 object array, 2 primitive array, 3 class */
	char *text;		/* OBJ: a String's text, else NULL */
	uint32_t n;		/* LIST, STRUCT */
	struct proto_val *items;
	char **names;		/* STRUCT */
};
struct proto_result {
	uint16_t stmt;
	uint8_t kind;		/* the statement: expression, let or instances_for (ast.h) */
	char *name;		/* a let's name */
	struct proto_val v;
};
struct proto_analysis {
	uint8_t status;
	uint16_t stmt, line, col;
	char *msg;
	uint64_t walks, pause_ms, gc_ms, total_ms, objects, agent_bytes;
	uint32_t nresults;
	struct proto_result *results;
};
int proto_analyze(struct proto_conn *c, const uint8_t *prog, size_t len, uint32_t time_ms,
		  uint32_t mem_mb, unsigned flags, struct proto_analysis *out, struct hs_error *err);
void proto_analysis_free(struct proto_analysis *a);

/* proto_detach: ask the agent to stop and remove its socket; closes c. */
int proto_detach(struct proto_conn *c, struct hs_error *err);

#endif
