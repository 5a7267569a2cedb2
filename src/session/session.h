/*
 * session.h - a heapsh session: everything one heap investigation holds,
 * below the front ends (docs/architecture.md). A session owns the open
 * dump or the attached JVM (its connection and snapshots), the engine's
 * results made on demand (dominator trees, the dynamic-size engine: from
 * memory, the index file, or computed), the index file, and the query
 * language's session. The shell (src/shell) and the Lua module (src/lua)
 * are two clients of it; it calls neither. struct hs_session is opaque
 * (session_internal.h): a front end sees functions, not fields.
 *
 * Errors: a function that fails returns HS_ERR or HS_INTERRUPTED (or NULL)
 * and leaves what went wrong in the session's error, "s->err" below
 * (struct hs_error: the message, where, what to do; hs_errmsg reads it),
 * which the front end formats. Nothing here prints:
 * what a user should hear (a warning, a note, a status line) goes to the
 * notice callback, with when to show it; long work names itself to the
 * stage callback, and the engine's progress goes through hs_progress
 * (src/base/mem.h). A session with no callbacks is silent.
 *
 * Ownership: hs_session_new returns a session freed with
 * hs_session_free, which closes everything it holds. Pointers it hands out
 * (the heap, trees, the engine) live until the heap is closed or replaced;
 * hs_gen counts the heaps closed, so a front end can tell a stale object.
 */
#ifndef HS_SESSION_H
#define HS_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "../alloc/alloc.h"
#include "../base/mem.h"
#include "../dsl/arena.h"
#include "../dsl/eval.h"
#include "../dsl/value.h"
#include "../engine/domtree.h"
#include "../engine/dyn.h"
#include "../engine/hdiff.h"
#include "../engine/suspects.h"
#include "../heap/heap.h"

struct dsl;

/* When a notice is shown: the front end decides, knowing its terminal and modes. */
enum hs_notice {
	HS_NOTICE_ALWAYS,	/* a warning or a note: always */
	HS_NOTICE_ERROR,	/* a problem that did not stop the operation: as an error */
	HS_NOTICE_TTY,		/* a status line: on a terminal only */
	HS_NOTICE_ECHO,		/* on a terminal, or when inputs are echoed */
	HS_NOTICE_TIMER		/* on a terminal, or when timing */
};

struct hs_session;	/* opaque: session_internal.h, for src/session alone */

/*
 * hs_session_new: a session with nothing open, its memory budget and spill
 * folder those of the context it is made under (the process's, or the
 * session whose work makes it). hs_session_free: everything it holds goes.
 */
struct hs_session *hs_session_new(void);
void hs_session_free(struct hs_session *s);

/*
 * The session's context (src/base/ctx.h): its Ctrl-C flag, its progress
 * callback and its memory pool (the budget and spill folder of its big
 * arrays, src/base/big.h). Every call of the session runs under it and
 * guarded: where the library cannot go on (out of memory, no disk for what
 * does not fit the budget) the call returns HS_ERR (or NULL) with the error
 * saying what and what to do; the session stays usable, and the big arrays
 * that call had made go back, memory and spill files, but for what it had
 * stored in the session before it failed (the heap it opened, say, before
 * the tree it was computing); src/session/guard.h.
 * hs_enter: s's context becomes this thread's, for a front end that also
 * calls the library's other functions (the engine's, the heap model's) on
 * s's heap: their big arrays then count in s's budget and hs_interrupt
 * stops them; returns the context it replaces (give it back with
 * hs_ctx_enter). hs_interrupt: stop s's work under way as soon as it polls
 * (async-signal-safe: for a SIGINT handler). hs_set_progress: fn(ud, what,
 * done, total) hears how far s's long work is (NULL: nothing).
 * hs_set_memory: s's memory budget in bytes (0: half the machine's memory
 * or cgroup limit) and spill folder (NULL: $TMPDIR, /var/tmp, /tmp), for
 * arrays made from now on.
 */
struct hs_ctx *hs_enter(struct hs_session *s);
void hs_interrupt(struct hs_session *s);
void hs_set_progress(struct hs_session *s,
		     void (*fn)(void *ud, const char *what, uint64_t done, uint64_t total), void *ud);
void hs_set_memory(struct hs_session *s, uint64_t budget, const char *dir);

/*
 * The session seen from outside (session/state.c): its settings, the front
 * end's hooks, and what it holds. Strings and pointers returned live as
 * long as what they describe (the heap: until it is closed or replaced;
 * the attached JVM: until it is left); none is the caller's to free.
 */

/* Settings of a session (hs_get_options, hs_set_options). */
struct hs_options {
	int oop_size;		/* loading a dump: 4 or 8 to force; 0 to detect */
	int layout_jdk;		/* loading a dump: the JDK whose object layout to use; 0 to detect */
	uint32_t dump;		/* loading a dump: which of a file's dumps, from 1; 0 the first */
	bool no_weak;		/* default for the engine: ignore Reference.referent */
	bool no_index;		/* do not read or write the index file */
	bool no_spill;		/* keep ids and positions in memory while the engine builds */
	bool keep_agent;	/* leaving a JVM does not detach its agent */
	bool live_off;		/* no queries inside the attached JVM (:live off) */
	uint32_t live_time_s;	/* one analysis inside the JVM: its time limit */
	uint32_t live_mem_mb;	/* and the agent's memory limit, MiB */
};

/*
 * hs_get_options: the session's settings (a new session's: all 0 and false
 * but live_time_s 60 and live_mem_mb 256). hs_set_options: replace them
 * all; they apply from the next operation (a dump opened, a tree made).
 */
struct hs_options hs_get_options(const struct hs_session *s);
void hs_set_options(struct hs_session *s, const struct hs_options *o);

/* The front end's hooks (hs_set_callbacks); a NULL one is not called. */
struct hs_callbacks {
	/* what a user should hear, with when to show it (text: valid during the call) */
	void (*notice)(void *ctx, enum hs_notice when, const char *text);
	/* long work begins (label: valid during the call); NULL: it ended */
	void (*stage)(void *ctx, const char *label);
	/* loading a dump: the fraction read, 0 to 1 */
	void (*load_progress)(void *ctx, const char *path, double fraction);
	/* a snapshot arriving from the agent: the bytes so far; UINT64_MAX once in */
	void (*snap_progress)(void *ctx, uint64_t bytes);
	void *ctx;		/* passed to each */
};

/* hs_set_callbacks: the session calls cb's hooks from now on (copied; NULL: none, silent). */
void hs_set_callbacks(struct hs_session *s, const struct hs_callbacks *cb);

/*
 * hs_heap: the loaded heap (the open dump or the latest snapshot; heap.h),
 * or NULL; it lives until hs_close_heap or the next hs_open or snapshot.
 * hs_dump_path: the open dump's path, NULL for a snapshot.
 * hs_gen: heaps closed so far, so that a front end can tell an object of a
 * heap that is gone. hs_errmsg: the message of the last error (s's
 * struct hs_error; "" before any).
 */
struct heap *hs_heap(const struct hs_session *s);
const char *hs_dump_path(const struct hs_session *s);
unsigned hs_gen(const struct hs_session *s);
const char *hs_errmsg(const struct hs_session *s);

/* The attached JVM (hs_get_live). */
struct hs_live_info {
	int pid;
	const char *vm;		/* "OpenJDK 64-Bit Server VM 17.0.15+6-...", or "" */
	time_t snap_time;	/* when the loaded heap was taken of it; 0: no heap of it */
	unsigned snapshots;	/* taken in this session: ids of an earlier one may be stale */
	time_t prev_time;	/* when the previous snapshot (HS_PREVIOUS) was taken; 0: none */
};

/*
 * hs_get_live: true with *in filled when a JVM is attached, else false
 * (and *in zeroed). hs_live_pid: its pid, 0 when none is attached.
 */
bool hs_get_live(const struct hs_session *s, struct hs_live_info *in);
int hs_live_pid(const struct hs_session *s);

/*
 * hs_jvm_name: what the process pid runs, as jps names it: its main class
 * (com.acme.Main) or the jar given to -jar, read from /proc/PID/cmdline
 * without attaching (a JVM that cannot be attached to is named too). Into
 * buf (cap bytes, cut short, NUL-terminated); false, with buf "", when it
 * cannot be read. Needs no session.
 */
bool hs_jvm_name(int pid, char *buf, size_t cap);

/*
 * hs_is_jvm: whether process pid is a HotSpot JVM heapsh can attach to
 * (libjvm.so in its memory map, att_which_vm), without sending it
 * anything; false when it is not, or its map cannot be read. Needs no
 * session.
 */
bool hs_is_jvm(int pid);

/*
 * hs_recording: the allocation recording read from a file (hs_open of a
 * JFR recording; alloc.h), and its path in *path (NULL: not wanted); NULL
 * when none was read.
 */
const struct alc_rec *hs_recording(const struct hs_session *s, const char **path);

/*
 * hs_heap_label: what the loaded heap is, for a file that outlives the
 * session: "heap dump PATH", or for a snapshot "snapshot of JVM PID (MAIN
 * CLASS, VM) taken YYYY-MM-DD HH:MM:SS UTC" (not its temporary file; the
 * main class asked of the JVM). New memory, the caller's (free()).
 */
char *hs_heap_label(const struct hs_session *s);

/*
 * hs_array: an array of n elements of size bytes, for work as big as the
 * heap (a key per object), within the memory budget (in memory, or in a
 * file past it; docs/out-of-core.md); zeroed. The caller frees it with
 * hs_array_free (NULL is fine). Never NULL (as big_alloc).
 */
void *hs_array(struct hs_session *s, size_t n, size_t size);
void hs_array_free(struct hs_session *s, void *p);

/*
 * hs_fault_text: when addr (a SIGBUS's si_addr) lies in a file the library
 * has mapped (a dump, an index, a spill file), what happened for the user
 * in buf (cap bytes, HS_FAULT_TEXT is enough; NUL-terminated): the file,
 * the byte offset read, and what to do; true. False when addr is in none.
 * Async-signal safe: it takes no lock and allocates nothing.
 */
#define HS_FAULT_TEXT 1024
bool hs_fault_text(const void *addr, char *buf, size_t cap);

/* What the session holds and where each came from (hs_get_state), for :info. */
struct hs_state {
	bool model_from_index;	/* the heap model was mapped from the index file */
	bool model_trusted;	/* ... without checking it again (a seal: idx.h) */
	const struct dom_tree *dom[2];	/* [no_weak]: the dominator trees made so far, or NULL */
	const struct dyn *dyn;	/* the dynamic-size engine, if made */
	bool dyn_from_index;
	const char *index_file;	/* the index file, when opened; else NULL */
	int nsections;		/* the index's sections in use, in file order: */
	const char *section[8];	/* what each holds, for people */
	uint64_t section_bytes[8];	/* its payload bytes */
	uint64_t index_unused;	/* payload bytes superseded or damaged */
	struct hs_memory {	/* big arrays (docs/out-of-core.md), bytes: */
		uint64_t budget;	/* the budget in force */
		uint64_t anon, anon_peak;	/* in memory, now and at most */
		uint64_t file, file_peak;	/* in files past the budget, now and at most */
		const char *spill_dir;	/* where the files go, or NULL before the first */
	} mem;
};

/* hs_get_state: fill *st; nothing is made or opened for it. */
void hs_get_state(const struct hs_session *s, struct hs_state *st);

/*
 * hs_open: load the dump at path (HPROF, plain or gzip'd; load_opts.dump
 * chooses among several) as the session's heap, replacing the one before
 * (the attached JVM, if any, stays). HS_ERR with s->err ("what (byte
 * offset N)"), or HS_INTERRUPTED; a damaged dump that still gave a heap is
 * HS_OK with an HS_NOTICE_ERROR notice.
 */
int hs_open(struct hs_session *s, const char *path);
/*
 * hs_open_recording: read the allocation events of the JFR recording at
 * path (alc_read_jfr) as the session's recording, replacing the one before;
 * the heap and the attached JVM, if any, stay. hs_open calls it for a file
 * that starts as a JFR recording does ("FLR\0"). Notes about the numbers go
 * to the front end (HS_NOTICE_ALWAYS). HS_ERR with s->err, or
 * HS_INTERRUPTED.
 */
int hs_open_recording(struct hs_session *s, const char *path);
/* hs_close_heap: the heap and everything made of it go (the index is saved first). */
void hs_close_heap(struct hs_session *s);
/*
 * hs_rest: the front end has finished a command and may now wait. What the
 * command wrote to the index (the heap model, a dominator tree) is used
 * from there from now on, its memory and spill files given back
 * (hs_adopt). The arrays freed during the command and kept for reuse
 * (big.h, big_free) are released, so memory at rest holds only what the
 * session keeps.
 * hs_adopt: that first part alone, for a front end between two calls (the
 * Lua module: the spares stay for the next): the heap model and the trees
 * the session wrote to the index are used from there (heap_model_adopt,
 * dom_tree_adopt); nothing when it wrote none. Pointers into the heap's or
 * the trees' arrays taken before do not survive either (a tree's children
 * index, dom_children_view, does).
 */
void hs_rest(struct hs_session *s);
void hs_adopt(struct hs_session *s);

/*
 * hs_dom: the dominator tree (no_weak: without Reference.referent edges),
 * from memory, the index file, or computed now (thesis ../shared/seeds/003,
 * chapter 4; docs/engine.md) and written to the index. Takes a snapshot of
 * an attached JVM first when no heap is loaded. NULL with s->err on an
 * error or Ctrl-C.
 */
struct dom_tree *hs_dom(struct hs_session *s, bool no_weak);
/* hs_dyn: the dynamic-size engine, the same way; with estimates, every component's estimate too. */
struct dyn *hs_dyn(struct hs_session *s, bool estimates);
/* hs_dyn_save: write the engine (and its memoized sizes) to the index if it changed. */
void hs_dyn_save(struct hs_session *s);
/*
 * hs_suspects: the leak suspects of the heap (sus_find; Eclipse MAT's
 * Leak Suspects, docs/leak-suspects.md) in its dominator tree (no_weak:
 * without Reference.referent edges; hs_dom), with their paths through
 * strong references, as MAT's. With baseline (NULL: none), the path of an
 * older dump of the same program: each suspect's retained size there and
 * its growth (sus_baseline), that dump's tree read from its index file or
 * computed (not written); the suspects are then looked for down to a tenth
 * of the threshold, and those under it that grew are kept (sus_growing):
 * growing candidates first, small ones included. *out and *n: the
 * suspects, largest first (with a baseline: largest growth first), freed
 * with sus_free, pointing into the heap. under (NULL: not wanted): what
 * lies between a tenth of the threshold and the threshold (sus_under).
 * HS_ERR with s->err (the baseline cannot be read), HS_INTERRUPTED.
 */
int hs_suspects(struct hs_session *s, const struct sus_opts *o, bool no_weak,
		const char *baseline, struct suspect **out, uint32_t *n, struct sus_under *under);
/*
 * HS_PREVIOUS: hs_suspects' baseline meaning the previous snapshot of the
 * attached JVM (s->prev: a new snapshot keeps the one before it, its
 * unlinked file mapped, until a newer one, another heap or JVM, or the
 * session's end; hs_drop_previous lets it go).
 */
extern const char HS_PREVIOUS[];
/*
 * HS_MARK: hs_suspects' baseline meaning the mark of the attached JVM's
 * allocation recording: the recording is read (a full GC) and each
 * suspect's growth is its classes' recorded live bytes now less at the mark
 * (sus_class_growth). hs_alloc_marked: the attached JVM has a recording with
 * a mark (*when: the mark's wall clock, ms since the epoch); one status call.
 */
extern const char HS_MARK[];
bool hs_alloc_marked(struct hs_session *s, uint64_t *when);
void hs_drop_previous(struct hs_session *s);
/* hs_dsl: the query language's session, made on first use (it may precede the heap). */
struct dsl *hs_dsl(struct hs_session *s);

/*
 * Live JVMs (session/live.c, docs/agent.md). hs_attach: connect to the
 * agent in JVM pid, loading libheapsh_agent.so through HotSpot's attach
 * mechanism first when it is not there; leaves a JVM attached before, and
 * closes the heap. hs_need_heap: HS_OK when a heap is loaded, taking a
 * snapshot of the attached JVM when none is. hs_snapshot: a new snapshot
 * (via "agent": the agent's own walk; NULL: HotSpot's heap dumper).
 * hs_leave: let go of the JVM as the user asked (keep_agent), with
 * a notice of what became of the agent. hs_live_close: drop the
 * connection without a word.
 */
int hs_attach(struct hs_session *s, int pid);
int hs_need_heap(struct hs_session *s);
int hs_snapshot(struct hs_session *s, const char *via);

/* Where hs_query ran a query. */
enum hs_ran {
	HS_RAN_NOTHING,		/* incomplete: read more text */
	HS_RAN_HEAP,		/* the query language on the heap (or with none when it needs none) */
	HS_RAN_PUSHDOWN,	/* the agent's heap iteration over one class: pd */
	HS_RAN_JVM		/* a program the agent ran: results */
};

#define HS_QUERY_NO_PUSHDOWN 1u	/* hs_query: not through the heap iteration (its rows are not values) */
/*
 * HS_QUERY_JVM_ONLY: hs_query never takes a snapshot (a front end that must
 * not pause the JVM for a heap dump: the exporter, src/serve): a query that
 * neither the heap iteration nor a program inside the attached JVM can
 * answer is HS_ERR with s->err saying why ("this query cannot run inside
 * JVM PID: REASON; no snapshot taken"), a->at_limit set when the reason is
 * the analysis's time or memory limit (live_time_s, live_mem_mb). A query
 * that needs no heap still runs in heapsh; with no JVM attached and no
 * heap loaded it is HS_ERR.
 */
#define HS_QUERY_JVM_ONLY 2u
/*
 * HS_QUERY_NO_GC: the caller had the attached JVM make a full GC just
 * before (a class histogram through HotSpot, hs_live_histogram): the heap
 * iteration and the program inside the JVM make none of their own, so the
 * query may count objects that became unreachable since that GC. The
 * exporter's watch queries, right after its histogram (docs/fleet.md).
 */
#define HS_QUERY_NO_GC 4u

/* A cell of a row the agent's heap iteration found (struct hs_pushdown_answer). */
struct hs_cell {
	enum hs_cell_kind { HS_CELL_NULL, HS_CELL_TEXT, HS_CELL_INT } kind;
	const char *text;	/* TEXT: a string, a number or character as text, "<java.lang.Foo>" */
	int64_t i;		/* INT */
};

/* The answer of the agent's heap iteration to a filter over one class (HS_RAN_PUSHDOWN). */
struct hs_pushdown_answer {
	enum hs_pd_op { HS_PD_FILTER, HS_PD_EXISTS, HS_PD_COUNT, HS_PD_FIRST } op;
	const char *cls;	/* the class after "is" */
	uint64_t examined, matched;	/* instances looked at; matching (EXISTS: stops at 1) */
	uint32_t nrows;		/* FILTER, FIRST: the first rows found (FILTER: up to 100) */
	int ncols;		/* "class", then the first row's fields */
	const char **cols;
	const struct hs_cell *cells;	/* row r's cell c: cells[r * ncols + c] */
};

/* An object of the JVM in an answer from inside it (struct hs_jvm_result). */
struct hs_jvm_obj {
	uint64_t id;		/* its address (0: unknown) */
	const char *name;	/* its class's name; for a class object, that class's */
	bool is_class;		/* a class object */
	uint64_t size;		/* shallow bytes */
};

/* A value a program inside the JVM gave (HS_RAN_JVM). */
struct hs_jvm_result {
	struct value v;		/* as a snapshot's evaluator would give it, but objects, classes,
				 * loaders and threads of the JVM as their text ("0x1f2e3d Order") */
	bool has_objects;	/* v holds some of those */
	const struct hs_jvm_obj *objs;	/* when v is a list of objects and nothing else: them */
	uint32_t nobjs;
};

struct hs_query_priv;

/* A query's answer (hs_query): where it ran, and what came back; the memory is the answer's. */
struct hs_answer {
	enum hs_ran ran;
	bool incomplete;		/* the text is not finished (nothing ran) */
	char why_pushdown[400];		/* on a JVM, why the heap iteration could not answer ("": not tried or not such a query) */
	char why_jvm[400];		/* on a JVM, why no program could answer inside it ("": not tried) */
	bool error;			/* HEAP, JVM: the query stopped at err (values before it are given) */
	struct hs_error err;		/* its message, line and column (0: in an earlier snippet's code) */
	struct dsl_output out;		/* HS_RAN_HEAP: the values (dsl_run) */
	bool has_out;
	struct hs_pushdown_answer pd;	/* HS_RAN_PUSHDOWN */
	/* HS_RAN_JVM: the values to show, and what the JVM spent (has_costs: a program ran) */
	const struct hs_jvm_result *results;
	uint32_t nresults;
	bool cancelled;			/* Ctrl-C stopped the program inside the JVM */
	bool at_limit;			/* HS_QUERY_JVM_ONLY: it failed at the analysis's time or memory limit */
	bool has_costs;
	uint64_t walks, pause_ms, gc_ms, total_ms;	/* heap walks; the JVM paused, of it a full GC; in all */
	struct hs_query_priv *priv;	/* the session's */
};

/*
 * hs_query: run snippet text where it runs best (docs/agent.md, "Analyses
 * inside the JVM"): on an attached JVM with no snapshot, a query that
 * needs no heap (allocations) runs without one; a filter over one class in
 * the agent's heap iteration (unless flags has HS_QUERY_NO_PUSHDOWN);
 * anything else the agent can evaluate as a program inside the JVM (:live
 * off: not), within the session's live_time_s and live_mem_mb; the rest on
 * the heap, after a snapshot (hs_need_heap) when there is none. HS_OK:
 * a->ran says where (HS_RAN_NOTHING with a->incomplete: read more text),
 * with why the JVM did not answer in a->why_* (also told as notices, when
 * it happens). HS_ERR: it could not run anywhere (s->err); with
 * HS_QUERY_JVM_ONLY, also when only a snapshot could answer it. a is freed
 * with hs_answer_free in every case.
 */
int hs_query(struct hs_session *s, const char *text, unsigned flags, struct hs_answer *a);
void hs_answer_free(struct hs_session *s, struct hs_answer *a);

/*
 * hs_explain: where hs_query would run text, and why, running nothing
 * (docs/agent.md; :explain): HS_OK with *out a new string of lines (the
 * caller frees); HS_OK with *out NULL and *incomplete set when the text is
 * not finished; HS_ERR with s->err when it does not parse.
 */
int hs_explain(struct hs_session *s, const char *text, bool *incomplete, char **out);
bool hs_live_farewell(struct hs_session *s);
void hs_leave(struct hs_session *s);
void hs_live_close(struct hs_session *s);
/*
 * Commands to the attached JVM (session/jvm.c); each HS_ERR leaves why in
 * s->err (not attached, the connection lost, the JVM's or agent's words).
 *
 * hs_jvm_info: what the JVM is and how its heap stands, into *out.
 * hs_detach: say farewell (a running allocation recording goes on), ask the
 * agent to stop and remove its socket, drop the connection and the
 * snapshot of this JVM if one is the heap; HS_ERR when the agent did not
 * confirm (the JVM is left all the same). hs_dump_heap: at path (a relative path
 * is the front end's working folder's, not the JVM's): HotSpot writes the
 * JVM's live heap there (GC.heap_dump; an existing file is refused; a JVM
 * in a container writes into its own /tmp, and the dump is copied to path),
 * and the session opens it as its heap, staying attached.
 */
struct hs_jvm_info {
	uint64_t pid;
	char vm_name[128], vm_version[128], vm_vendor[128];
	char agent[64];		/* the agent's version and mode */
	uint64_t heap_used, heap_committed, heap_max;	/* bytes */
	uint32_t classes;	/* loaded */
};
int hs_jvm_info(struct hs_session *s, struct hs_jvm_info *out);
int hs_detach(struct hs_session *s);
int hs_dump_heap(struct hs_session *s, const char *path);

/* The attached JVM's class histogram after a full GC (hs_live_histogram). */
struct hs_histogram {
	struct hs_hist_row {
		char *name;	/* Java name: java.lang.String, int[], a.B[] */
		uint64_t count, bytes;	/* instances; bytes as the JVM sizes objects */
	} *rows;		/* in the JVM's order */
	uint32_t n;
	bool from_vm;		/* HotSpot's heap inspection; false: the agent's heap iteration */
	char vm_failed[512];	/* why HotSpot's could not be had (the agent counted), or "" */
};

/*
 * hs_live_histogram: the classes with instances of the attached JVM whose
 * names match pattern (NULL: all; as a dump's :histogram PATTERN,
 * classname.h), from HotSpot's GC.class_histogram (via "vm"), the agent
 * (via "agent"), or (via NULL) HotSpot's and the agent's if that fails.
 * *h is the caller's, freed with hs_histogram_free (also after HS_ERR).
 * HS_ERR with s->err, also when no class matches.
 */
int hs_live_histogram(struct hs_session *s, const char *pattern, const char *via,
		      struct hs_histogram *h);
void hs_histogram_free(struct hs_histogram *h);

enum hs_alloc_op { HS_ALLOC_STOP, HS_ALLOC_STATUS, HS_ALLOC_RESET, HS_ALLOC_MARK };

/*
 * hs_alloc_start: start a recording in the attached JVM as o says (alloc.h); while an
 * exact one rewrites the loaded classes, progress (NULL: none) hears how
 * many of how many are done, and Ctrl-C (hs_interrupted) cancels it.
 * hs_alloc_control: stop, status, reset (drop what was recorded; a running
 * recording goes on afresh) or mark (live objects now, after a full GC, for
 * later diffs). Each fills *st with the recording's state after it
 * (alc_status_free). HS_ERR with s->err (the agent's words: already
 * recording, a bad pattern, cancelled).
 * hs_recording_label: what the recording is (of JVM PID (MAIN CLASS, VM),
 * or the JFR file's), for a file that outlives the session; new memory.
 */
int hs_alloc_start(struct hs_session *s, const struct alc_opts *o,
		   void (*progress)(void *ctx, uint32_t done, uint32_t total), void *ctx,
		   struct alc_status *st);
int hs_alloc_control(struct hs_session *s, enum hs_alloc_op op, struct alc_status *st);
char *hs_recording_label(const struct hs_session *s);

/*
 * hs_alloc_fetch: the attached JVM's allocation recording, read now (after
 * a full GC), in *out (alc_free); notices when the agent's tables
 * reached their bounds. Without a JVM, a copy of the recording read from a
 * file (hs_open_recording). HS_ERR with s->err.
 */
int hs_alloc_fetch(struct hs_session *s, struct alc_rec **out);
/*
 * hs_alloc_leaks: paths from GC roots to the leak sample of the classes of
 * the allocation sites that grew most, up to 16 classes (alc_growth; r read
 * from the attached JVM by hs_alloc_fetch), found by the agent inside the JVM in one walk, without a
 * heap dump (proto_alloc_leaks; docs/agent.md, "Leaks in a running JVM"),
 * within time_ms of walk and mem bytes of the agent's memory. The paths
 * become r->leaks (replacing any), one per sampled object reached, with
 * its allocation site and age; *st says what the search did. HS_ERR with
 * s->err (no JVM, no recording, --live none, cancelled, connection lost).
 */
struct hs_leak_search {
	uint32_t classes, sampled, reached;	/* classes searched; their sampled objects; reached */
	uint32_t nodes;		/* objects the walk tagged */
	uint64_t cut;		/* objects not walked for the memory limit */
	uint64_t prep_ms, walk_ms;	/* the JVM running; the JVM paused (the agent's count too) */
	uint64_t hist_ms;	/* the JVM's class histogram, wall time (0: the agent counted) */
	bool timed_out, has_gcs;
	uint64_t budget;	/* objects the walk could tag */
	uint32_t nskipped;	/* classes not searched: more objects could hold them than the budget */
	uint32_t skipped_cls[16];	/* r's class numbers */
	uint64_t skipped_cost[16];	/* the objects that could hold each */
};
int hs_alloc_leaks(struct hs_session *s, struct alc_rec *r, uint64_t time_ms, uint64_t mem,
		   struct hs_leak_search *st);
/* hs_alloc_bounds: notices of what the agent's bounds left out of a recording (st). */
void hs_alloc_bounds(struct hs_session *s, const struct alc_status *st);

/*
 * Comparing dumps (session/diff.c; engine/hdiff.h; docs/manual.md,
 * "Comparing dumps"): heapsh diff OLD NEW and :diff OLDER.
 */
struct hs_diff_opts {
	enum hdiff_by by;	/* rows: classes, packages or merged dominator paths */
	uint32_t top;		/* rows kept, largest growth first; 0: all (hdiff_groups, hdiff_paths) */
	bool no_weak;		/* the trees without Reference.referent edges */
	bool mixed_jdk;		/* dumps of different JDKs: a warning, not an error */
	const char *const *fail_if;	/* --fail-if conditions as typed (hdiff_cond_parse) */
	uint32_t nfail_if;
};
/* One dump of a comparison. */
struct hs_diff_side {
	char *file;		/* its path, or what the snapshot was (hs_heap_label) */
	uint64_t objects, reachable_bytes;
	int jdk;		/* the JDK's feature version (java.version, else the layout's), 0: unknown */
	char *java_version;	/* java.version as the dump holds it, or NULL */
};
struct hs_diff {
	struct hs_diff_side side[2];	/* [0] older, [1] newer */
	struct hdiff_result r;	/* rows and conditions */
};
/*
 * hs_diff: what grew from the dump at older (HS_PREVIOUS: the previous
 * snapshot of the attached JVM) to the session's heap (a snapshot is
 * taken of an attached JVM with none), by o->by, with o's conditions
 * evaluated. The older dump is opened in a session of its own, with this
 * one's options, reading and writing its index file as hs_open and hs_dom
 * do (a second comparison starts from both indexes), and closed before
 * the call returns; both heaps and trees are in memory meanwhile. HS_ERR
 * with s->err: a condition that does not parse or names no class, a dump
 * that cannot be read or is damaged (cut short: growth would be what was
 * lost), dumps of different identifier sizes, or of different JDKs unless
 * o->mixed_jdk (then a notice); HS_INTERRUPTED. *d is freed with
 * hs_diff_free in every case.
 */
int hs_diff(struct hs_session *s, const char *older, const struct hs_diff_opts *o, struct hs_diff *d);
void hs_diff_free(struct hs_diff *d);

/* hs_fail: set s->err to a message (no byte offset) and return HS_ERR. */
int hs_fail(struct hs_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* hs_notify: a notice to the front end, if it listens. */
void hs_notify(struct hs_session *s, enum hs_notice when, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
