/*
 * session_internal.h - what a session is made of (struct hs_session) and
 * the session's own functions between its files (the index, the
 * connection, queries inside the JVM and pushed down), for the .c files of
 * src/session and the unit tests that look inside one. Everyone else holds
 * a session as an opaque handle and goes through the functions of
 * session.h (tests/t_layers.sh checks that nothing else includes this
 * header). Ownership as in session.h.
 */
#ifndef HS_SESSION_INTERNAL_H
#define HS_SESSION_INTERNAL_H

#include "../attach/proto.h"
#include "../dsl/parse.h"
#include "../dsl/pushdown.h"
#include "../engine/idx.h"
#include "session.h"

/* The attached JVM. */
struct hs_live {
	int pid;
	struct proto_conn conn;
	time_t snap_time;	/* when the loaded heap was taken; 0: none */
	unsigned snapshots;	/* taken in this session: ids of an earlier one may be stale */
	unsigned snap_gen;	/* the session's gen when the last one became the heap */
	char vm[300];		/* "OpenJDK 64-Bit Server VM 17.0.15+6-..." */
};

struct hs_session {
	struct heap *heap;	/* the open dump or the latest snapshot, or NULL */
	char *dump_path;	/* the dump's path (NULL for a snapshot) */
	struct heap_load_opts load_opts;
	bool no_weak;		/* default for the engine: ignore Reference.referent */
	bool no_index;		/* do not read or write the index file */
	bool no_spill;		/* keep ids and positions in memory while the engine builds */
	bool keep_agent;	/* leaving a JVM does not detach its agent */
	struct dom_tree *dom[2];	/* [no_weak]: made on first use */
	struct dyn *dyn;	/* the dynamic-size engine, made on first use */
	bool dyn_from_index;
	struct idx *idx;
	bool idx_noted;		/* idx_note said (hs_index) */
	bool model_from_index;	/* the heap was mapped from the index (heap_model_load) */
	bool model_trusted;	/* without checking it again (idx_trusted) */
	uint8_t adopt;		/* HS_ADOPT_*: written to the index, to be used from there at rest */
	struct dsl *dsl;	/* the query language's session, made on first use */
	struct hs_live *live;	/* the attached JVM, or NULL */
	struct hs_prev {	/* the snapshot of the attached JVM before the heap (:suspects' baseline) */
		struct heap *heap;	/* NULL: none */
		struct dom_tree *dom[2];	/* [no_weak]: made on first use */
		time_t when;		/* when it was taken */
	} prev;
	struct alc_rec *recording;	/* an allocation recording read from a file (hs_open of a JFR), or NULL */
	char *recording_path;	/* its file */
	unsigned gen;		/* heaps closed so far */
	/* Queries inside the attached JVM (:live): off, and one analysis's time and agent memory limits. */
	bool live_off;
	uint32_t live_time_s, live_mem_mb;
	struct hs_error err;	/* the last error */
	struct hs_ctx work;	/* its work context: interrupt flag, progress, memory pool (hs_enter) */
	struct hs_session *volatile older;	/* hs_diff's session of the older dump while it works, or NULL */
	/* The front end's hooks; NULL: silent. */
	void (*notice)(void *ctx, enum hs_notice when, const char *text);
	void (*stage)(void *ctx, const char *label);	/* long work begins; NULL: it ended */
	void (*load_progress)(void *ctx, const char *path, double fraction);
	void (*snap_progress)(void *ctx, uint64_t bytes);
	void *ctx;
};

/* hs_index: the heap's index file, opened on first use; NULL with no_index, a snapshot or a damaged dump. */
struct idx *hs_index(struct hs_session *s);
/* hs_live_conn: the attached JVM's connection, reconnecting once if lost; NULL with s->err. */
struct proto_conn *hs_live_conn(struct hs_session *s);

/* A query answered inside the attached JVM (hs_query_jvm). */
struct hs_jvm_query {
	bool ran;		/* it ran there: the results below are its answer */
	struct proto_analysis an;	/* the agent's answer: results, status, where an error is, costs */
	bool has_analysis;	/* an is set (hs_jvm_query_free frees it) */
	int npre;		/* results of statements before this one are the session's names and set types */
	int failed_at;		/* the statement that failed (an.status not OK), else INT32_MAX */
	struct arena a;		/* the parsed snippet and the values made of results */
};

/*
 * hs_query_jvm: answer a snippet (its statements st[0..n), parsed) inside
 * the attached JVM, with no
 * snapshot (docs/agent.md, "Analyses inside the JVM"): compiled with the
 * session's names and set types it uses into a program the agent runs
 * within s->live_time_s and s->live_mem_mb (src/dsl/prog.h). HS_OK with
 * q->ran: the answer is q->an's results of statements npre to failed_at
 * (q->an.status says how it ended: OK, ERROR with a message and where,
 * CANCELLED), and the snippet's lets are bound in the session's DSL (their
 * values hold no object). HS_OK without q->ran: it cannot run there, and
 * why (cap bytes) says why; run it on a snapshot. HS_ERR: the JVM could not
 * be asked (s->err). q is the caller's, freed with hs_jvm_query_free in
 * every case. flags: hs_query's (HS_QUERY_NO_GC).
 */
int hs_query_jvm(struct hs_session *s, struct stmt **st, int n, unsigned flags,
		 struct hs_jvm_query *q, char *why, size_t cap);
void hs_jvm_query_free(struct hs_jvm_query *q);
/*
 * hs_jvm_compile: the program the agent would run for the parsed statements
 * st[0..n) of snippet (parse_snippet; their memory in a): lets for the
 * session's names they use and set types of earlier snippets first (*npre
 * of them). 0 with *prog (malloc'd, *len bytes; the caller frees); -1
 * with why (cap bytes) saying why it cannot run inside the JVM.
 */
int hs_jvm_compile(struct hs_session *s, struct stmt **st, int n, const char *snippet,
		   struct arena *a, uint8_t **prog, size_t *len, int *npre, char *why, size_t cap);
/* A filter over one class answered by the agent's heap iteration (hs_query_pushdown). */
struct hs_pushdown {
	bool ran;		/* the agent answered: pd and r below */
	struct dsl_pushdown pd;	/* the query's shape: class, operation, predicate */
	struct proto_instances r;	/* what the agent found: counts, the first rows */
	bool has_pd, has_r;	/* pd, r are set (hs_pushdown_free frees them) */
};

/*
 * hs_query_pushdown: answer a snippet (its statements st[0..n), parsed;
 * their tree outlives q), when it is a filter over one
 * class (objects.filter/count/exists/first over "it is C and ..."
 * comparisons of fields: dsl_pushdown), with the agent's heap iteration
 * after a GC (INSTANCES, docs/protocol.md): the fastest way, one pass
 * over one class. HS_OK with q->ran: the answer in q->r (the first 100
 * rows of a filter); HS_OK without q->ran: not such a query, or the agent
 * cannot evaluate it (why says so, cap bytes; else why is ""); HS_ERR:
 * the JVM could not be asked (s->err). q is freed with hs_pushdown_free in
 * every case. flags: hs_query's (HS_QUERY_NO_GC: no GC first).
 */
int hs_query_pushdown(struct hs_session *s, struct stmt **st, int n, unsigned flags,
		      struct hs_pushdown *q, char *why, size_t cap);
void hs_pushdown_free(struct hs_pushdown *q);
/*
 * hs_jvm_value: result v as the query language's value, in arena a (a
 * snapshot's evaluator would give the same, but objects, classes, loaders
 * and threads of the JVM become their text, hs_jvm_text, and set *objects).
 */
struct value hs_jvm_value(struct arena *a, const struct proto_val *v, bool *objects);
/* hs_jvm_text: result v as text ("0x1f2e3d Order", "class Foo", "42"), in arena a or static. */
const char *hs_jvm_text(struct arena *a, const struct proto_val *v);

/* What a struct hs_answer holds for the session (hs_query, hs_answer_free). */
struct hs_query_priv {
	struct hs_pushdown pd;		/* HS_RAN_PUSHDOWN */
	struct hs_jvm_query jvm;	/* HS_RAN_JVM */
	struct arena parsed;		/* the snippet's tree until the query language takes it */
	struct arena view;		/* the answer's results and rows as the front end reads them */
};

#endif
