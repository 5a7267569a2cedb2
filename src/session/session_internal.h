/*
 * session_internal.h - what a session is made of (struct hs_session), for
 * the session's own files (the .c files of src/session) and the unit tests that look
 * inside one. Everyone else holds a session as an opaque handle and goes
 * through the functions of session.h (tests/t_layers.sh checks that nothing
 * else includes this header).
 */
#ifndef HS_SESSION_INTERNAL_H
#define HS_SESSION_INTERNAL_H

#include "../attach/proto.h"
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

#endif
