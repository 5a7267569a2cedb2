/*
 * session_internal.h - the fields of a session (src/session only, and the
 * white-box unit tests): the front ends see struct hs_session as opaque
 * and read it through session.h's functions (issue 36; tests/t_layers.sh).
 */
#ifndef HS_SESSION_INTERNAL_H
#define HS_SESSION_INTERNAL_H

#include "session.h"

struct hs_session {
	struct heap *heap;	/* the open dump or the latest snapshot, or NULL */
	char *dump_path;	/* the dump's path (NULL for a snapshot) */
	struct hs_options opt;	/* what the front end chose (hs_options) */
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
	struct hs_error err;	/* the last error */
	struct hs_ctx work;	/* its work context: interrupt flag, progress, memory pool (hs_enter) */
	/* The front end's hooks; NULL: silent. */
	void (*notice)(void *ctx, enum hs_notice when, const char *text);
	void (*stage)(void *ctx, const char *label);	/* long work begins; NULL: it ended */
	void (*load_progress)(void *ctx, const char *path, double fraction);
	void (*snap_progress)(void *ctx, uint64_t bytes);
	void *ctx;
};

#endif
