/*
 * recorder.h - the allocation recorder's state and tables, shared by its
 * three files inside libheapsh_agent.so (nothing here is exported):
 *
 *   alloc.c       the recording: settings, account patterns, the tables
 *                 (methods, calling-context nodes, classes, keys), reads and
 *                 the ALLOC_* requests (docs/protocol.md)
 *   alloc_jvmti.c sampled recordings, and exact ones by JVMTI events:
 *                 SampledObjectAlloc (JEP 331), a stack walk per event, a
 *                 JVMTI tag per recorded object
 *   instrument.c  exact recordings by bytecode instrumentation: the
 *                 rewriting of classes (Instrument.java, ASM, in the JVM)
 *   sites.c       ... and what the rewritten code calls: counters per site
 *                 and account, a JNI weak reference per recorded object
 *
 * The model is seed 004's method call tree (nodes), seed 002's allocation
 * sites (a key's node is the allocating frame) and seed 001's memory
 * accounts (a key's account is the nearest accounted frame's).
 *
 * Locking: R.lock guards the tables' growth and lookups. Keys and sites
 * live in chunks that never move, so the bytecode mechanism's hot path reads
 * them without the lock once it holds their index; their counters are
 * atomics there. No JVMTI or JNI call is made with R.lock held (a thread in
 * such a call may wait for a safepoint while others wait for the lock),
 * except where a comment says why it cannot block.
 */
#ifndef HS_RECORDER_H
#define HS_RECORDER_H

#include <pthread.h>
#include <stdatomic.h>

#include "ag.h"

#define NONE UINT32_MAX
#define MAX_DEPTH 1024		/* frames kept per stack */
#define MAX_SEARCH 4096		/* frames searched for an accounted one */
#define CHUNK 64		/* frames fetched at a time past the kept ones */
#define MAX_BYTES ((size_t)256 << 20)	/* the recorder's tables */
#define KEY_CHUNK 4096
#define MAX_KEY_CHUNKS 2048	/* 8 M keys, far past MAX_BYTES */
#define SITE_CHUNK 4096
#define SITE_BITS 24		/* a site number: generation << 24 | index */
#define MAX_SITE_CHUNKS ((1u << SITE_BITS) / SITE_CHUNK)

/*
 * Which objects an exact recording by bytecode follows for its live counts:
 * none; each (thread, key)'s first LIVE_FIRST objects and then one in
 * LIVE_RATE at random, each standing for LIVE_RATE (an unbiased estimate);
 * or every one. Sampled and JVMTI recordings follow every object they record.
 */
enum { LIVE_NONE, LIVE_SAMPLED, LIVE_ALL };
#define LIVE_FIRST 256
#define LIVE_RATE 64

/* How a recording sees allocations. */
enum mech { M_SAMPLED, M_EVENTS, M_BYTECODE };

struct method {
	jmethodID id;		/* NULL: known by name only (a site's, from the transformer) */
	char *cls, *name, *sig, *file;	/* cls: JNI signature; file NULL: unknown */
	uint32_t account;
	jint nlines;
	jvmtiLineNumberEntry *lines;	/* sorted by start_location */
};

struct node {
	uint32_t parent, method;
	int32_t line;
};

struct key {
	uint32_t node, cls, account;
	double objs, bytes, elems;	/* events and samples (under the lock) */
	_Atomic uint64_t n_objs, n_bytes, n_elems;	/* bytecode sites (no lock) */
	uint64_t j_objs, j_bytes, j_elems;	/* running threads' Java counters at the last fold */
	double live_objs, live_bytes;	/* at the last read */
	double tagged_objs, tagged_bytes;	/* sampled: followed objects tagged (under the lock) */
	_Atomic double freed_objs, freed_bytes;	/* sampled: of those, dead (ObjectFree, no lock) */
	double mark_objs, mark_bytes;
};

/* An open-addressing table of indexes (slot = index + 1, 0 empty). */
struct tab {
	uint32_t *slot;
	uint32_t mask, n;
};

struct site;			/* instrument.c's */

/*
 * The leak sample (leaks.c, ALLOC_LEAKS): per recorded class, RSV_K of the
 * objects the recording follows, each a JNI weak reference with its key and
 * the number of GCs finished when it was recorded (its age is the GCs
 * since). The sample keeps the survivors: after each GC the first offer of
 * the class lets its dead objects go, and a free place takes the next
 * object offered; with no free place, an object replaces one at random
 * with probability RSV_K / (objects offered) (reservoir sampling: Vitter
 * 1985, algorithm R), so that what stays long is what lives long, as in
 * JFR's old object sample. Classes past RSV_CLASSES have none.
 */
#define RSV_K 64
#define RSV_CHUNK 256
#define RSV_CLASSES (256 * RSV_CHUNK)
struct rsv {
	_Atomic uint64_t seen;	/* followed objects offered */
	_Atomic uint32_t gen;	/* R.gcs when its dead objects were last let go */
	_Atomic uint32_t holes;	/* free places */
	struct rsv_slot {
		jweak ref;	/* NULL: empty */
		uint32_t key, gc;
	} s[RSV_K];
};

extern struct recorder {
	JavaVM *vm;
	pthread_mutex_t lock;
	jvmtiEnv *env;		/* the recording's environment, NULL: no recording */
	atomic_int on;		/* allocations are being recorded */
	atomic_int inflight;	/* JVMTI event callbacks running */
	bool exists;
	enum mech mech;
	uint64_t interval;	/* M_SAMPLED: mean bytes between samples */
	uint32_t depth;
	int live;		/* LIVE_*: which recorded objects are followed until they die */
	char *uncovered;	/* bytecode: methods running old code (ag_bc_uncovered), NULL none */
	int start_fd;		/* the shell starting the recording hears progress, -1: none */
	struct pattern pat[MAX_PATTERNS];
	int npat;
	char *accounts;		/* the patterns as given */
	uint64_t started_ms, stopped_ms, mark_ms;
	bool has_mark;
	uint64_t events;	/* M_SAMPLED and M_EVENTS; bytecode keys count their own */
	_Atomic uint64_t dropped, untracked;
	uint64_t j_dropped;	/* running threads' Java counters of no key at the last fold (dropped too) */
	uint64_t tracked;	/* recorded objects alive at the last read */
	uint64_t tagged;	/* sampled: objects tagged (under the lock) */
	_Atomic uint64_t freed;	/* sampled: of those, dead */
	bool counts_deaths;	/* sampled: live counts kept by ObjectFree events, no heap pass */
	_Atomic size_t bytes;	/* memory of the tables below and of the tracking */
	struct method *methods;
	uint32_t nmethods, capmethods;
	struct node *nodes;
	uint32_t nnodes, capnodes;
	struct key *keys[MAX_KEY_CHUNKS];
	uint32_t nkeys;
	char **classes;
	uint32_t nclasses, capclasses;
	struct tab tmethods, tnames, tnodes, tkeys, tclasses;
	struct rsv *_Atomic rsv[RSV_CLASSES / RSV_CHUNK];	/* the leak sample, by class */
	_Atomic uint32_t gcs;	/* GCs finished since the recording's environment began */
	bool has_gcs;		/* the JVM sends GarbageCollectionFinish: gcs counts */
	jvmtiEventGarbageCollectionFinish gc_next;/* the mechanism's own GarbageCollectionFinish */
} R;

/*
 * ag_rsv_offer: obj, just followed under key, offered to its class's leak
 * sample (RSV_K kept; a weak reference made only for those kept). Takes
 * R.lock only when obj is kept. ag_rsv_take: the live objects of class
 * cls's sample as new local references into objs (with keys and ages in
 * GCs), at most cap; their count. ag_rsv_drop: every sample let go (the
 * weak references deleted; jni NULL: memory only).
 */
void ag_rsv_offer(JNIEnv *jni, jobject obj, uint32_t key);
uint32_t ag_rsv_take(JNIEnv *jni, uint32_t cls, jobject *objs, uint32_t *keys, uint32_t *ages,
		     uint32_t cap);
void ag_rsv_drop(JNIEnv *jni);

/* KEY: key i (i < R.nkeys); its chunk never moves. */
#define KEY(i) (&R.keys[(i) / KEY_CHUNK][(i) % KEY_CHUNK])

uint64_t ag_wall_ms(void);
/*
 * ag_rec_starting: done of total classes are rewritten by a starting
 * recording: told to the shell that started it (a progress frame, when it
 * asked for them); false when it cancelled (or went away).
 */
bool ag_rec_starting(uint32_t done, uint32_t total);
/* ag_debug: HEAPSH_AGENT_DEBUG is set: the agent logs what it does (docs/agent.md). */
bool ag_debug(void);
/*
 * ag_debug_norewrite: HEAPSH_AGENT_DEBUG=norewrite: the class-file hook of an
 * exact recording returns every class as it is, so that a start costs only
 * what the JVM's own RetransformClasses of the same classes costs
 * (bench/alloc_start.sh's "floor"; nothing is counted).
 */
bool ag_debug_norewrite(void);
/* ag_jni_clear: clear a pending Java exception (described on stderr when debugging) after what. */
void ag_jni_clear(JNIEnv *jni, const char *what);
/* ag_rec_free: give memory R.env allocated back (NULL is fine). */
void ag_rec_free(void *p);
/* ag_rec_room: may the tables grow by n bytes (MAX_BYTES); counts them when so. */
bool ag_rec_room(size_t n);
/* ag_rec_calloc: n zeroed elements of size bytes, counted in R.bytes; NULL past the bound. */
void *ag_rec_calloc(size_t n, size_t size);

/* Table lookups, made if new; NONE when the tables are full. R.lock is held. */
uint32_t ag_rec_node(uint32_t parent, uint32_t method, int32_t line);
uint32_t ag_rec_key(uint32_t node, uint32_t cls, uint32_t account);
uint32_t ag_rec_class(const char *sig);
/* ag_rec_method_named: the method (cls JNI signature, name, descriptor, file or NULL), by name. */
uint32_t ag_rec_method_named(const char *cls, const char *name, const char *sig, const char *file);
/* ag_rec_account_of: the account of a class with JNI signature sig (0: none). */
uint32_t ag_rec_account_of(const char *sig);

/*
 * ag_rec_class_of: the recorder's index of klass (tagging the class in
 * R.env to find it again), *array set for array classes; NONE on failure.
 * Takes R.lock itself.
 */
uint32_t ag_rec_class_of(jvmtiEnv *e, jclass klass, bool *array);

/*
 * ag_rec_frames: the methods (R.methods indexes, registered when new) and
 * lines of n frames of a stack trace into mi and line; false when the
 * tables are full. Takes R.lock.
 */
bool ag_rec_frames(jvmtiEnv *e, JNIEnv *jni, const jvmtiFrameInfo *fr, int n, uint32_t *mi, int32_t *line);
/*
 * ag_rec_stack_key: the key of an object of class cls allocated on the
 * current thread's stack, counted under the lock-held tables: the frames
 * are the calling context (R.depth kept); the account is acct, or, when
 * acct is NONE, the nearest accounted frame's (seed 001, definition 3,
 * searched up to MAX_SEARCH frames). Frames of the methods in own[0..nown)
 * at the top of the stack are skipped (the agent's own calls); when
 * top_method is not NONE, the innermost frame kept is (top_method,
 * top_line) instead of the frame's own method and line. Returns 0 with
 * *key set, 1 when an own method is found below other frames (the agent's
 * own allocation, not recorded), -1 when the tables are full. Called
 * without the lock.
 */
int ag_rec_stack_key(jvmtiEnv *e, JNIEnv *jni, uint32_t cls, uint32_t acct, const jmethodID *own,
		     int nown, uint32_t top_method, int32_t top_line, uint32_t *key);

/*
 * ag_rec_env: the recording's own JVMTI environment in R.env (disposed by
 * the recording's end), with caps and the event callbacks cb; what names
 * the mechanism in why when the JVM refuses.
 */
bool ag_rec_env(const jvmtiCapabilities *caps, const jvmtiEventCallbacks *cb, const char *what,
		char *why, size_t cap);

/* Live counts per key: objs[k], bytes[k] for k < n; tracked is their total objects. */
struct walk_counts {
	uint32_t n;
	double *objs, *bytes;
	uint64_t tracked;
};

/*
 * The mechanisms. *_begin: start recording with the settings in R, in the
 * new environment R.env (true), or say why not; *_halt: stop recording new
 * allocations, keeping what was recorded; *_measure: the live objects and
 * bytes of every key now (after a full GC the caller ran).
 */
bool ag_jvmti_begin(char *why, size_t cap);
void ag_jvmti_halt(void);
bool ag_jvmti_measure(struct walk_counts *w, char *why, size_t cap);

bool ag_bc_begin(JNIEnv *jni, char *why, size_t cap);
void ag_bc_halt(JNIEnv *jni);
void ag_bc_discard(JNIEnv *jni);
bool ag_bc_measure(JNIEnv *jni, struct walk_counts *w, char *why, size_t cap);
/* ag_bc_vm_init: finish a recording the agent's start-up options began (VMInit). */
void ag_bc_vm_init(JNIEnv *jni);
/*
 * The sites of a recording by bytecode instrumentation (sites.c).
 * ag_sites_begin: a new recording's sites (numbered in a new generation, so
 * that code rewritten for an earlier one counts nothing). ag_sites_bind:
 * Rt's natives bound, its methods known as the agent's own frames, the
 * arrays' layout learnt; why on failure. ag_sites_add: a new site of method
 * (class JNI signature sig, name, descriptor, file or NULL) at line, of
 * class signature ty (NULL for a site whose class is the object's) and kind
 * (Instrument.java's numbers); its number, -1 when the tables are full.
 * ag_sites_on_gc: the GarbageCollectionFinish event. ag_sites_measure: live
 * counts per key (after the caller's full GC). ag_sites_discard: every site
 * and every followed object let go (jni NULL: the VM is gone; memory only).
 * ag_sites_summary: a debug line. ag_in_hook: set while the transformer runs
 * on this thread (what it allocates is the agent's).
 */
void ag_sites_begin(void);
bool ag_sites_bind(JNIEnv *jni, jclass rt, char *why, size_t cap);
jint ag_sites_add(const char *sig, const char *method, const char *desc, const char *file,
		  jint line, const char *ty, jint kind);
void JNICALL ag_sites_on_gc(jvmtiEnv *e);
/*
 * ag_sites_java: Rt counts the new recording's sites of a known class and
 * arrays in Java counters per thread (with --depth 1 and a known array
 * layout), Rt's settings set from R; an earlier recording's counters let go.
 * ag_sites_fold: every thread's Java counters added up into the keys:
 * FOLD_READ (a status or a read: into each key's j_* figures; the buffered
 * objects followed, so that a full GC can tell which die; the counters of
 * ended threads moved into the keys' own), FOLD_FINAL (the recording
 * stops: Rt counts no more, everything moved into the keys' own),
 * FOLD_DROP (let go, counted nowhere).
 */
enum { FOLD_READ, FOLD_FINAL, FOLD_DROP };
int ag_sites_lines(const char *cls, const char *name, const char *sig, int32_t *lines, int max);
/*
 * ag_sites_method: the number calling contexts give method (class JNI
 * signature sig, name, descriptor desc, source file or NULL) in frames of
 * Rt's stacks (the recording's generation << 24 | its index in R.methods),
 * -1 when the tables are full. Takes R.lock.
 */
jint ag_sites_method(const char *sig, const char *name, const char *desc, const char *file);
/*
 * ag_bc_uncovered: what the rewritten code cannot count now, as text for
 * ALLOC_STATUS (one line per method, new memory; NULL: nothing): the
 * frames of every thread running a method's version from before the
 * recording (JVMTI IsMethodObsolete) whose method has allocation sites, or
 * sets an account, named with their lines and thread. They count nothing
 * until they return.
 */
char *ag_bc_uncovered(JNIEnv *jni);
/*
 * ag_bc_missed: bytes allocated since the start that the rewritten code
 * does not count (the VM's own objects, JNI code, hidden classes, methods
 * running since before the start), and all bytes allocated, both estimated
 * from the JVM's own allocation samples (SampledObjectAlloc, one per 512 KB
 * on average, weighted as the sampled mode weighs them).
 */
void ag_bc_missed(uint64_t *missed, uint64_t *seen);
void ag_sites_java(JNIEnv *jni);
void ag_sites_fold(JNIEnv *jni, int how);
void ag_sites_measure(JNIEnv *jni, struct walk_counts *w);
void ag_sites_discard(JNIEnv *jni);
void ag_sites_summary(void);
extern __thread int ag_in_hook;

/* ag_bc_vm_death: the VM ends (a debug summary, the threads' counters added up first). */
void ag_bc_vm_death(JNIEnv *jni);
/* ag_bc_status: classes instrumented and classes left as they were. */
void ag_bc_status(uint64_t *instrumented, uint64_t *failed);

#endif
