/*
 * alloc.h - an allocation recording as heapsh reads it from the agent
 * (docs/protocol.md, ALLOC_READ), and the views the shell, the query
 * language and Lua show of it: per memory account and class, per class,
 * per allocation site, the calling-context tree, live objects against a
 * mark, folded stacks and a flame graph.
 *
 * The model (seed 004, JP: the method call tree; seed 001, ASGMemProf:
 * memory accounts; seed 002, DuckTracks: counts per allocation site):
 * - a node is one frame of a calling context: a method and the line being
 *   executed in it; its parent is its caller (ALC_NONE for the outermost
 *   frame kept). A key's node is the allocating frame (the allocation site
 *   in that context), so the path from a node to its root is the stack,
 *   innermost first, cut at the recording's depth.
 * - a key is one (node, class, account) with its counters. The account is
 *   the nearest accounted frame's on the whole stack, not only the kept
 *   part (seed 001, definition 3); account 0 is "(none)".
 * - counters are numbers of objects and bytes; in sampled mode they are
 *   estimates (each sample of an object of s bytes counts 1/p objects,
 *   p = 1 - exp(-s / interval)), so they are doubles, exact integers in
 *   exact mode.
 *
 * Ownership: alc_free releases a recording and everything in it; the row
 * arrays the views return are new memory freed with free() (strings in
 * rows are borrowed from the recording).
 *
 * The views expect what the decoder checks: indices in range and parents
 * forming a forest. They do not crash on worse: a key's node out of range
 * counts as ALC_NONE, a class or method out of range reads "?", and nodes
 * on a parent cycle are not reached from any root (the tree leaves them out;
 * the folded stacks cut the cycle).
 */
#ifndef HS_ALLOC_H
#define HS_ALLOC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define ALC_NONE UINT32_MAX

struct alc_method {
	char *cls;		/* declaring class, Java name: com.acme.Foo, or "?" */
	char *name;		/* method name: parse, <init> */
	char *sig;		/* JVM method descriptor: (I)V */
	char *file;		/* source file name (Foo.java), or NULL */
	uint32_t account;	/* the account of the method's package, 0: none */
};

struct alc_node {
	uint32_t parent;	/* caller's node, ALC_NONE: the outermost frame kept */
	uint32_t method;	/* index into methods */
	int32_t line;		/* source line, -1 unknown (native, no line table) */
};

struct alc_key {
	uint32_t node;		/* the allocating frame, ALC_NONE: no Java frame */
	uint32_t cls;		/* index into classes */
	uint32_t account;	/* index into accounts; 0 is "(none)" */
	double objs, bytes;	/* allocated since the start (or reset) */
	double live_objs, live_bytes;	/* still alive at the read */
	double elems;		/* arrays: elements allocated (sum of lengths) */
	double mark_objs, mark_bytes;	/* live at the mark; 0 without one */
};

/* How a recording is made (docs/agent.md; proto_alloc_start, hs_alloc_start). */
struct alc_opts {
	bool exact;		/* every allocation; else sampled every interval bytes on average */
	bool jvmti;		/* exact by JVMTI events, not bytecode instrumentation */
	enum alc_live {
		ALC_LIVE_SAMPLED,	/* exact: the default; live counts estimated from a sample */
		ALC_LIVE_NONE,		/* no live counts, less cost */
		ALC_LIVE_ALL		/* every recorded object followed: exact live counts */
	} live;
	uint64_t interval;	/* bytes, sampled: 1 to 2^31-1 */
	uint32_t depth;		/* frames kept per stack, 1 to 1024 */
	const char *accounts;	/* package patterns (a.b, a.b.*), comma-separated, or NULL */
};

struct alc_status {
	bool recording;		/* allocations are being recorded now */
	bool exists;		/* a recording exists (running or stopped) */
	bool exact;		/* every allocation, not samples */
	bool bytecode;		/* exact by bytecode instrumentation (else by JVMTI events) */
	bool no_live;		/* recorded objects are not followed: no live counts (--live none) */
	bool live_sampled;	/* exact counts, live counts estimated from a sample (--live sampled) */
	uint64_t interval;	/* mean bytes between samples (sampled mode) */
	uint32_t depth;		/* frames kept per stack */
	uint64_t started_ms;	/* wall clock of the start, ms since the epoch */
	uint64_t stopped_ms;	/* wall clock of the stop, 0 while recording */
	uint64_t events;	/* allocations recorded (samples in sampled mode) */
	uint64_t frees;		/* recorded objects seen dying */
	uint64_t dropped;	/* allocations not recorded: the agent's tables were full */
	uint64_t agent_bytes;	/* memory the recording's tables use in the agent */
	uint64_t tracked;	/* recorded objects alive (tagged) now */
	bool has_mark;
	uint64_t mark_ms;	/* wall clock of the mark */
	char *accounts;		/* the patterns as given, comma-separated, or NULL */
	uint64_t classes_instrumented;	/* bytecode: classes rewritten */
	uint64_t classes_failed;	/* bytecode: classes left as they were (not instrumentable) */
	uint64_t untracked;	/* objects counted but not followed (tables full): live counts low */
	char *uncovered;	/* methods running code from before the start, one a line, or NULL */
	uint64_t missed_bytes;	/* bytecode: allocated since the start and not counted (estimate) */
	uint64_t seen_bytes;	/* bytecode: allocated since the start in all (estimate); 0 unknown */
};

/*
 * What an allocation recording costs the JVM, as measured (docs/performance.md,
 * "Allocation recordings"; bench/alloc.sh and bench/alloc_server.sh): the
 * words :help alloc and :alloc status show, kept here so that they say the
 * same. Each is one configuration of :alloc start.
 */
#define ALC_COST_SAMPLED "no measurable CPU (under 1 %)"
#define ALC_COST_EXACT "1.3x CPU per request (Jetty, steady; 1.25-1.43), 1.35x and 1.45x (whole javac, H2 runs); 1.7-2.0x with accounts"
#define ALC_COST_NO_LIVE "1.26x CPU per request (Jetty), 1.33-1.34x (whole javac, H2 runs)"
#define ALC_COST_LIVE_ALL "4.6x CPU per request (Jetty): a weak reference per object"
#define ALC_COST_DEPTH "2.3x CPU per request (Jetty, steady; 2.1-2.5), 3.3x CPU (whole H2 runs; 2.6-3.8) at --depth 64; contexts past 262,144 a thread are dropped (javac: 91 %)"
#define ALC_COST_JVMTI "7-10x (an event, a stack walk and a tag per object)"
#define ALLOC_COST_HELP \
	"  default (--live sampled): " ALC_COST_EXACT "\n" \
	"  --live none: " ALC_COST_NO_LIVE "\n" \
	"  --live all: " ALC_COST_LIVE_ALL "\n" \
	"  --depth N above 1: " ALC_COST_DEPTH "\n"

/* alc_cost: the measured cost of the recording st describes (ALC_COST_*). */
const char *alc_cost(const struct alc_status *st);

/*
 * A sampled live object's path from a GC root: JFR's jdk.OldObjectSample
 * with path-to-gc-roots, or the agent's leak search (ALLOC_LEAKS).
 */
struct alc_leak {
	uint32_t node;		/* its allocation site's frame, ALC_NONE: no stack */
	uint32_t cls;		/* index into classes */
	uint64_t skipped;	/* links of the chain left out */
	uint32_t age;		/* GCs it survived since it was recorded, ALC_NONE: unknown */
	char *path;		/* "[root] class Foo.CACHE -> java.util.HashMap.table -> ... -> Foo$Entry" */
};

/*
 * alc_path_step: one step of a leak path appended to *b (new memory, the
 * old freed): " → " and type as a Java name (a JNI signature or JFR's
 * name converted; "class Foo" and "(...)" kept as they are), then ".field"
 * unless field is "" or "[]". alc_path_end: the path's last step, its
 * object's class cls, after root ("[root] steps → cls"); new memory.
 */
void alc_path_step(char **b, const char *type, const char *field);
char *alc_path_end(const char *root, const char *steps, const char *cls);

struct alc_rec {
	struct alc_status st;
	char **accounts;	/* [0] "(none)", then the patterns in order */
	uint32_t naccounts;
	char **classes;		/* Java names: java.lang.String, int[] */
	uint32_t nclasses;
	struct alc_method *methods;
	uint32_t nmethods;
	struct alc_node *nodes;
	uint32_t nnodes;
	struct alc_key *keys;
	uint32_t nkeys;
	struct alc_leak *leaks;	/* read from a JFR recording; none from an agent */
	uint32_t nleaks;
};

/*
 * alc_free: free r itself (allocated, as sh_alloc_fetch does, with
 * x[c]alloc) and everything in it: the strings of the methods, classes and
 * accounts, the arrays, st.accounts. r may be NULL, and may be partly filled
 * (NULL strings and arrays). alc_status_free frees what s holds
 * (s->accounts, then NULL), not s; s may be NULL.
 */
void alc_free(struct alc_rec *r);
/* alc_copy: a deep copy of r, freed with alc_free. */
struct alc_rec *alc_copy(const struct alc_rec *r);
void alc_status_free(struct alc_status *s);

/*
 * A row of the tabular views; fields a view does not fill are NULL / 0,
 * except node, ALC_NONE in the views without a frame.
 */
struct alc_row {
	const char *account;
	const char *cls;
	uint32_t node;		/* sites, diff: the allocating frame (ALC_NONE: no frame) */
	double objs, bytes, live_objs, live_bytes, elems;
	double mark_objs, mark_bytes;	/* diff: live at the mark */
};

/*
 * The tabular views. Each returns *n rows in a new array (free()), sorted
 * as the shell shows them:
 * - alc_by_account: one row per (account, class); largest allocated bytes
 *   first, or live bytes first when by_live; ties by account then class.
 * - alc_by_class: one row per class, the same order.
 * - alc_by_site: one row per (allocation site, class), a site being the
 *   allocating frame's method and line whatever the calling context;
 *   largest allocated bytes first (live bytes with by_live). node is one of
 *   the nodes of that site (for alc_frame_text).
 * - alc_diff: one row per (account, site, class) with live objects now and
 *   at the mark; growth (live bytes now - at the mark) first. Rows where
 *   both are 0 are left out; the allocated counters are filled too.
 * Rows are merged by name: two accounts or classes of one name, or two
 * methods of one class, name, file and descriptor, are one. Rows whose
 * counters are all 0 are left out. Ties go by account name, class name,
 * then frame: the method's class, name and file, then the line as a number;
 * keys with no Java frame form the site "(no Java frame)", last in ties.
 * Time O(k log k) for k keys.
 */
struct alc_row *alc_by_account(const struct alc_rec *r, bool by_live, uint32_t *n);
struct alc_row *alc_by_class(const struct alc_rec *r, bool by_live, uint32_t *n);
struct alc_row *alc_by_site(const struct alc_rec *r, bool by_live, uint32_t *n);
struct alc_row *alc_diff(const struct alc_rec *r, uint32_t *n);

/*
 * alc_frame_text: a frame as a person reads it, into buf:
 * "com.acme.Foo.parse(Foo.java:42)", "(Foo.java)" when the line is
 * unknown, "(line 42)" when the file is (JFR recordings name none), "(Native Method)"-style "(no source)" when the file is; node
 * ALC_NONE gives "(no Java frame)". Cut short to fit cap bytes, always
 * NUL-terminated when cap > 0.
 */
void alc_frame_text(const struct alc_rec *r, uint32_t node, char *buf, size_t cap);

/*
 * The calling-context tree (seed 004's MCT), outermost frames at the top:
 * one row per node that allocated (itself or below), depth-first, children
 * by total bytes, largest first; then, under a node, one row per class it
 * allocated itself. Nodes whose total bytes are under min_pct percent of
 * all allocated bytes are left out (with their subtrees).
 *
 * In detail: a node row (cls NULL) comes first, then its class rows (cls
 * set, node ALC_NONE, depth one more, the class's figures in that frame
 * merged over accounts, largest bytes first, total_* equal to self_*),
 * then its children. Keys with no Java frame hang under a pseudo root: a
 * depth-0 row with node ALC_NONE and cls NULL ("(no Java frame)"), among
 * the roots by its total like any other. Siblings tie by frame as in the
 * tabular views. min_pct prunes node rows only (a kept node shows all its
 * class rows); with min_pct 0 every node with a nonzero counter is kept.
 * The root rows' totals add up to all allocated bytes. Time O((n + k) log
 * (n + k)) for n nodes and k keys; no recursion.
 */
struct alc_tree_row {
	int depth;		/* 0 for outermost frames */
	uint32_t node;		/* the frame, or ALC_NONE for a class row */
	const char *cls;	/* class rows: the class allocated */
	double self_objs, self_bytes;	/* allocated in this frame itself */
	double total_objs, total_bytes;	/* in this frame and everything it called */
	double live_objs, live_bytes;	/* of total (class rows: of self) */
	double elems;		/* class rows of arrays: elements */
};
struct alc_tree_row *alc_tree(const struct alc_rec *r, double min_pct, uint32_t *n);

/*
 * alc_collapsed: the recording as folded stacks (Brendan Gregg's format,
 * what flamegraph.pl and speedscope read): one line per calling context
 * and class, "outer;...;inner;Class value", value allocated bytes (or
 * objects when objects is true; live when live is true), rounded.
 * Returns 0, or -1 when writing f failed.
 *
 * The lines are the leaves of alc_fold: a frame reads
 * "com.acme.Foo.parse:42" (no ":line" when unknown), keys with no Java
 * frame are under "(no Java frame)", the class is the last frame with
 * async-profiler's suffix for allocated types, "java.lang.String_[i]".
 * ';' and control characters in names become '_'. Lines whose value rounds
 * to 0 are left out; the lines are in strcmp order.
 */
int alc_collapsed(const struct alc_rec *r, FILE *f, bool objects, bool live);

/*
 * alc_flamegraph: a self-contained SVG flame graph of allocated bytes (no
 * external files, no network): outermost frames at the bottom, each frame
 * as wide as the bytes allocated in it and below, the allocated classes as
 * the top frames; a title per frame with its figures. Returns 0, or -1
 * when writing f failed.
 *
 * 1200 px wide, 16 px a frame, as high as the deepest stack drawn; title
 * (NULL: "Allocations") as the SVG's <title> and as a heading. Frames come
 * from alc_fold; those narrower than 0.1 px are left out with everything
 * above them. Frames are warm, classes blue, "(no Java frame)" grey, the
 * colour a hash of the name. A recording with nothing allocated gives a
 * small SVG saying "no allocations recorded".
 */
int alc_flamegraph(const struct alc_rec *r, FILE *f, const char *title);

/*
 * alc_flamegraph_html: the flame graph as one self-contained HTML page (no
 * file or network fetched) that a person explores: the frames of alc_fold
 * as data, laid out by the page's script to the window's width and to the
 * height of the deepest stack shown; click-to-zoom (ancestors kept, dimmed,
 * below), a reset, a search (a regular expression, or the text as it is)
 * that colours the matching frames and says their share of the total,
 * the value switchable (allocated bytes or objects, live bytes or objects),
 * and labels that fit their box: the whole name, else the package cut to
 * initials ("o.a.d.i.s.r.StoredPage.read:42"), else class and method, else
 * cut with an ellipsis. Names are written as JSON (bad UTF-8 as '?').
 * Returns 0, or -1 when writing f failed.
 */
int alc_flamegraph_html(const struct alc_rec *r, FILE *f, const char *title);

/*
 * alc_pprof: the recording as a pprof profile (github.com/google/pprof,
 * profile.proto; src/base/pprof.h), gzip-compressed, written to path: one
 * sample per key with the values alloc_objects (count), alloc_space
 * (bytes), inuse_objects (count) and inuse_space (bytes), the live ones
 * 0 without live counts; sampled recordings' estimates rounded, their
 * period the sampling interval (space, bytes). A sample's stack is, innermost
 * first, the allocated class (a frame of its own, as async-profiler writes
 * allocation profiles), then the key's frames: function "com.acme.Foo.parse",
 * system name with the descriptor, file "com/acme/Foo.java", the line (0
 * unknown); "(no Java frame)" for keys without one. With accounts, each
 * sample carries the label account. comment (NULL: none) goes into the
 * profile's comments. HS_OK, or HS_ERR with err set (the file is then not
 * written).
 */
struct hs_error;
int alc_pprof(const struct alc_rec *r, const char *path, const char *comment,
	      struct hs_error *err);

/*
 * alc_read_jfr: the allocation events of the JFR recording at path as a
 * recording (*out, alc_free): jdk.ObjectAllocationSample events (or, in a
 * recording without them, jdk.ObjectAllocationInNewTLAB / OutsideTLAB),
 * one key per (stack trace, class) with objects = events and bytes = the
 * sum of their weights (the sample's weight; the TLAB's size; the object's
 * size outside a TLAB); jdk.OldObjectSample events as live objects (and
 * bytes where the JDK records objectSize). Frames are the stack traces'
 * methods and lines (no source file names: JFR has none); one account,
 * "(none)"; st.exact false (estimates), st.no_live without old object
 * samples. The file is read by the JDK's jdk.jfr.consumer API in heapsh's
 * bundled reader (src/alloc/java/heapsh/jfr/JfrAlloc.java) run with
 * $JAVA_HOME/bin/java or java on PATH (JDK 11 or later), its class file
 * written to a folder of its own in $TMPDIR (or /tmp) and removed after.
 * *notes (NULL: not wanted) gets lines for a person (free()): where the
 * numbers come from, the first samples' weight, cut stacks, live counts.
 * HS_OK; HS_ERR with err set (no JDK, not a JFR file or a damaged one, with
 * the JDK's own words); HS_INTERRUPTED on Ctrl-C (the reader is stopped).
 */
int alc_read_jfr(const char *path, struct alc_rec **out, char **notes, struct hs_error *err);
/*
 * alc_jfr_parse: the bundled reader's output (f; its format is in
 * JfrAlloc.java's opening comment) as a recording, as alc_read_jfr makes it;
 * what alc_read_jfr runs on the reader's standard output, and what
 * tests/fuzz/fuzz_jfr.c feeds bad bytes. Ids must come in order, parents
 * and methods before the frames naming them, counts within int64; a line
 * out of place gives HS_ERR naming it, an "E" line the reader's error.
 */
int alc_jfr_parse(FILE *f, struct alc_rec **out, char **notes, struct hs_error *err);

/*
 * alc_leaks: the recording's sampled live objects with paths (r->leaks)
 * merged by class, path and allocation site: one row per (class, path,
 * site) with how many samples
 * took it, most first (ties by class, then path); *n rows in a new array
 * (free()), pointing into r. Time O(k log k) for k samples.
 */
struct alc_leak_row {
	const char *cls;
	const char *path;
	uint32_t node;		/* the samples' allocation site */
	uint64_t samples;
	uint64_t skipped;	/* links left out of the samples' chains, in all */
	uint64_t age_sum;	/* GCs survived, added up over the samples of known age */
	uint64_t aged;		/* samples of known age */
};
struct alc_leak_row *alc_leaks(const struct alc_rec *r, uint32_t *n);

/*
 * alc_growth: per allocation site (class and allocating frame, accounts
 * merged), the live objects and bytes of the recording's keys at the read
 * and their growth: since the mark when there is one (live minus live at
 * the mark), else since the start (all of it). Sites with live objects
 * only, largest growth in bytes first (ties: live bytes, then class name,
 * then frame); *n rows in a new array (free()). Time O(k log k).
 */
struct alc_growth {
	uint32_t cls;
	uint32_t node;		/* the allocating frame, ALC_NONE: none */
	const char *name;	/* r's class name */
	double live_objs, live_bytes;
	double growth_objs, growth_bytes;
};
struct alc_growth *alc_growth(const struct alc_rec *r, uint32_t *n);

/*
 * alc_fold: the recording as the tree folded stacks and flame graphs show:
 * frames named by text (alc_collapsed's), frames of one name under one
 * caller merged whatever their nodes, the classes allocated as leaves on
 * top. frames is in preorder, siblings in the folded lines' order (strcmp
 * of "name;" for frames, "name_[i] " for classes), each frame's figures
 * those of it and everything above it. Names are cleaned as alc_collapsed
 * says. Leaves whose counters are all 0 are left out. The result and its names are freed with alc_fold_free (NULL is
 * fine). Time O((n + k) log (n + k)); no recursion.
 */
struct alc_fold_frame {
	const char *name;	/* "com.acme.Foo.parse:42", "java.lang.String", "(no Java frame)" */
	uint32_t depth;		/* 0: outermost frames */
	uint32_t end;		/* one past the last frame of this frame's subtree */
	bool is_class;		/* an allocated class: a leaf */
	double objs, bytes, live_objs, live_bytes;
};
struct alc_fold {
	struct alc_fold_frame *frames;
	uint32_t n;
	uint32_t max_depth;	/* the largest depth of a frame; 0 when n is 0 */
	char **names;		/* owned strings the frames' names point into */
	uint32_t nnames;
};
struct alc_fold *alc_fold(const struct alc_rec *r);
void alc_fold_free(struct alc_fold *f);

/*
 * alc_java_name: a JNI class signature ("Ljava/lang/String;", "[[I") as a
 * Java name ("java.lang.String", "int[][]"), into buf of cap bytes (cut
 * short, always NUL-terminated when cap > 0). A malformed signature is
 * copied as it is; NULL gives "".
 */
void alc_java_name(const char *sig, char *buf, size_t cap);

#endif
