/*
 * ag.h - what the agent's files share (hidden inside
 * libheapsh_agent.so, nothing here is exported): the protocol's constants
 * (docs/protocol.md), framed socket I/O with deadlines, the agent's JVMTI
 * environment and what the heap operations share on it (classes.c), the
 * requests' entry points, and the allocation recorder's (alloc.c;
 * recorder.h has the recorder's own).
 *
 * Ownership: replies are struct wire_w writers (wire_w_free); strings read
 * from a request (wire_get_strdup) are new memory the caller frees.
 */
#ifndef HS_AG_H
#define HS_AG_H

#include <jvmti.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/wire.h"

#define AG_VERSION "heapsh-agent 1.4"
#define AG_MAGIC 0x48534147u
#define AG_PROTO 1
#define MAX_REQUEST (4u << 20)	/* ALLOC_LEAKS carries a class histogram */
#define MAX_REPLY (16u << 20)
#define IDLE_MS 60000
#define FRAME_MS 10000
#define WRITE_MS 30000

/* Message types (docs/protocol.md). */
enum {
	T_HELLO = 1, T_INFO, T_HISTOGRAM, T_SNAPSHOT, T_INSTANCES, T_DETACH,
	T_ALLOC_START, T_ALLOC_STOP, T_ALLOC_STATUS, T_ALLOC_RESET, T_ALLOC_MARK, T_ALLOC_READ,
	T_DUMP, T_CLIENT, T_LEAVE, T_ANALYZE, T_CANCEL, T_ALLOC_LEAKS,
	T_DATA = 0x40, T_END = 0x41, T_ERROR = 0x7f
};

void ag_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* ag_now_ms: a monotonic clock in milliseconds. */
int64_t ag_now_ms(void);
/* ag_io_full: read (rd) or write all n bytes before deadline (ag_now_ms); false on EOF, error, timeout. */
bool ag_io_full(int fd, void *p, size_t n, bool rd, int64_t deadline);

/*
 * Replies are built in a growable writer (src/base/wire.h) and requests
 * read with a bounds-checked reader of their payload: a malformed or
 * hostile request sets the reader's error instead of reading past its
 * frame.
 *
 * ag_send_frame: one frame of type t with payload b (emptied after); a
 * writer whose error is set (out of memory) sends an ERROR frame instead.
 * ag_send_raw: one frame of type t with payload p[0..n). Both false when
 * the write failed or took more than WRITE_MS.
 */
bool ag_send_frame(int fd, uint8_t t, struct wire_w *b);
bool ag_send_raw(int fd, uint8_t t, const uint8_t *p, size_t n);
bool ag_send_error(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * ag_cancel_waiting: a CANCEL frame waits on fd (taken off the socket), or
 * the shell went away; never blocks.
 */
bool ag_cancel_waiting(int fd);

/* An account pattern of an allocation recording (seed 001, section 4). */
#define MAX_PATTERNS 64
struct pattern {
	char *text;		/* as given: a.b or a.b.* */
	char *pkg;		/* in JNI form: a/b */
	size_t len;
	bool wild;
};

/*
 * Settings readers (req.c, JVM-free so the fuzz harness runs them):
 * ag_parse_patterns: "a.b,c.d.*" (sep separates) into pat[0..*n), at most
 * MAX_PATTERNS; false with why (cap bytes) and nothing kept when one is not
 * a package name (a.b) or a package and its subpackages (a.b.*).
 * ag_drop_patterns frees them. ag_option: the value of key=VALUE in a
 * comma-separated option string (new memory), NULL when absent.
 * ag_parse_u64: a whole decimal number with an optional k, m or g suffix.
 */
bool ag_parse_patterns(const char *text, char sep, struct pattern *pat, int *n, char *why,
		       size_t cap);
void ag_drop_patterns(struct pattern *pat, int n);
char *ag_option(const char *opts, const char *key);
bool ag_parse_u64(const char *s, uint64_t *out);


/*
 * The INSTANCES filter (req.c): a predicate tree over an instance's fields.
 * ag_pred_read reads one node and its children (depth at most 32, budget
 * nodes in all); NULL with r->err set when malformed. ag_pred_free frees a
 * tree (NULL is fine).
 */
enum { P_TRUE, P_AND, P_OR, P_NOT, P_CMP };
enum { K_NULL, K_LONG, K_DOUBLE, K_STRING, K_BOOL };

/* P_CMP: field cmp (0..5) a literal of kind; P_AND, P_OR: n kids; P_NOT: one. */
struct pnode {
	uint8_t op, n, cmp, kind;
	struct pnode **kid;
	char *field;
	int slot;		/* index into the field slots */
	uint64_t bits;		/* long / double bits / boolean */
	char *text;		/* string literal */
};
struct pnode *ag_pred_read(struct wire_r *r, int depth, int *budget);
void ag_pred_free(struct pnode *p);

/*
 * The allocation recorder (alloc.c; seeds 001, 002 and 004, docs/agent.md).
 * ag_alloc_init: remember the VM (every load and attach calls it).
 * ag_alloc_options: start a recording from the agent's start-up options
 * ("alloc=exact|BYTES,accounts=P;P,depth=N"; other options are ignored);
 * false after logging a bad option. ag_alloc_vm_init: finish what the
 * start-up options began that needs Java (VMInit). ag_alloc_request: serve one of the
 * T_ALLOC_* requests on fd; false closes the connection. ag_alloc_vm_death:
 * stop recording as the VM ends. ag_in_agent_thread is set on the agent's
 * own thread, whose allocations are never recorded.
 */
void ag_alloc_init(JavaVM *vm);
bool ag_alloc_options(const char *options);
void ag_alloc_vm_init(JNIEnv *jni);
bool ag_alloc_request(int fd, JNIEnv *env, uint8_t type, struct wire_r *r);
void ag_alloc_vm_death(JNIEnv *jni);
/* ag_alloc_exists: a recording (running or stopped) lives in the agent. */
bool ag_alloc_exists(void);
/*
 * ag_leaks_request (leaks.c): ALLOC_LEAKS on fd: paths from GC roots to the
 * leak sample of the classes asked, in one walk in an environment of its
 * own (docs/protocol.md); false closes the connection.
 */
bool ag_leaks_request(int fd, JNIEnv *jni, struct wire_r *r);

/*
 * ag_dump_request: serve DUMP on fd (dump.c): HotSpot's heap dumper writes
 * the live objects to the absolute path the request names; false closes the
 * connection (a malformed request).
 */
bool ag_dump_request(int fd, JNIEnv *env, struct wire_r *r);
/*
 * ag_analyze_request: serve ANALYZE on fd (analyze.c): a query program run
 * inside the JVM, its results as DATA records and an END; false closes the
 * connection (a malformed request or program).
 */
bool ag_analyze_request(int fd, JNIEnv *env, JavaVM *vm, struct wire_r *r);
extern __thread int ag_in_agent_thread;

/*
 * The heap requests, served on fd from the agent thread with their payload
 * r; a failure of the JVM is sent as an ERROR; false closes the connection
 * (a malformed request, or the client gone). ag_do_histogram: HISTOGRAM
 * (histogram.c). ag_do_snapshot: SNAPSHOT, its records as DATA frames and
 * an END (snapshot.c). ag_do_instances: INSTANCES, the filter r carries
 * evaluated in the VM (instances.c).
 */
bool ag_do_histogram(int fd, JNIEnv *env, struct wire_r *r);
bool ag_do_snapshot(int fd, JNIEnv *env, struct wire_r *r);
bool ag_do_instances(int fd, JNIEnv *env, struct wire_r *r);

/*
 * ag_jvmti: the agent's JVMTI environment (agent.c: can_tag_objects), NULL
 * once the agent detached; ag_do_snapshot points it at an environment of
 * its own while it walks. ag_sock_dir: the agent's private directory
 * (/tmp/.heapsh-PID), which holds the socket and the snapshot's temporary
 * file.
 */
extern jvmtiEnv *ag_jvmti;
extern char ag_sock_dir[64];

/*
 * On ag_jvmti, from the agent thread (classes.c). ag_dealloc: Deallocate p
 * (NULL is fine). ag_load_classes: the loaded classes into c (local
 * references); false when GetLoadedClasses fails. ag_drop_classes: clears
 * their tags, deletes the references and frees c's array. ag_untag_all:
 * clears the tag of every tagged object (one IterateThroughHeap).
 */
struct classes {
	jint n;
	jclass *k;		/* JVMTI-allocated; local references */
};
void ag_dealloc(void *p);
bool ag_load_classes(JNIEnv *env, struct classes *c);
void ag_drop_classes(JNIEnv *env, struct classes *c);
void ag_untag_all(void);

/*
 * ag_iface_fields (classes.c): how many fields the interfaces klass
 * implements declare, each interface once (seen[0..*nseen), at most cap;
 * the caller deletes the local references it holds): the first JVMTI field
 * indexes of an instance (jvmtiHeapReferenceInfoField). jv: the JVMTI
 * environment asking.
 */
uint32_t ag_iface_fields(jvmtiEnv *jv, JNIEnv *env, jclass klass, jclass *seen, jint *nseen,
			 jint cap);

/*
 * ag_chain_fields (classes.c): every field of k's class chain in JVMTI index
 * order (jvmtiHeapReferenceInfoField: the interfaces' fields first, counted
 * only; then java.lang.Object's down to k's own, static and instance alike),
 * each given to f with its index, its jfieldID, the declaring class's
 * signature, its name and signature, and whether it is static. e: the JVMTI
 * environment asking. At most 64 classes deep.
 */
typedef void (*ag_field_fn)(void *ctx, jint index, jfieldID id, const char *declaring,
			    const char *name, const char *sig, bool is_static);
void ag_chain_fields(jvmtiEnv *e, JNIEnv *jni, jclass k, ag_field_fn f, void *ctx);

#endif
