/*
 * alloc.c - the agent's allocation recorder (docs/agent.md, "Allocation
 * recordings"; docs/protocol.md, ALLOC_*): who allocates what, per calling
 * context (seed 004, JP's method call tree), per allocation site (seed 002)
 * and per memory account (seed 001, ASGMemProf), with what stays alive.
 *
 * Mechanism: JVMTI SampledObjectAlloc (JEP 331) in a JVMTI environment of
 * the recorder's own. In sampled mode the VM samples on average one
 * allocation per `interval` bytes of each thread; in exact mode the interval
 * is 0, which the VM documents as "sample every allocation", so every object
 * the VM allocates for Java code, reflection, clone, JNI or itself is seen.
 * Each event takes the allocating thread's stack (GetStackTrace), finds the
 * nearest frame whose class's package an account pattern matches (seed 001,
 * definition 3, searching past the kept depth when needed), adds the kept
 * frames to the calling-context tree, and counts the object under its key
 * (context node, class, account). The object is then tagged with its key
 * and size in the recorder's environment: the live counts of a read are
 * one walk over the tagged objects after a full GC (IterateThroughHeap,
 * tagged objects only), exact at the moment of the read, with no per-death
 * event (ObjectFree would cost a VM operation after every GC).
 *
 * Rules: no JVMTI or JNI call while the recorder's lock is held (a thread
 * in a JVMTI call may wait for a safepoint while others wait for the lock);
 * tables are bounded (MAX_BYTES; past it events are counted as dropped);
 * the agent's own thread is never recorded; a recording outlives the
 * connection and the agent thread (detach), like a JFR recording.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "ag.h"

#define NONE UINT32_MAX
#define MAX_DEPTH 1024		/* frames kept per stack */
#define MAX_SEARCH 4096		/* frames searched for an accounted one */
#define CHUNK 64		/* frames fetched at a time past the kept ones */
#define MAX_PATTERNS 64
#define MAX_BYTES ((size_t)256 << 20)	/* the recorder's tables */
#define CLASS_BIT (1LL << 62)	/* a class's tag: its class index */
#define ARRAY_BIT (1LL << 61)	/* ... of an array class */
#define MAX_WORDS 0x1fffffffLL	/* object sizes kept in tags, in 8-byte words */

__thread int ag_in_agent_thread;

struct method {
	jmethodID id;
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
	double objs, bytes, elems;
	double live_objs, live_bytes;	/* at the last read */
	double mark_objs, mark_bytes;
};

struct pattern {
	char *text;		/* as given: a.b or a.b.* */
	char *pkg;		/* in JNI form: a/b */
	size_t len;
	bool wild;
};

/* An open-addressing table of indexes (slot = index + 1, 0 empty). */
struct tab {
	uint32_t *slot;
	uint32_t mask, n;
};

static struct {
	JavaVM *vm;
	pthread_mutex_t lock;
	jvmtiEnv *env;		/* the recorder's environment, NULL: no recording */
	atomic_int on;		/* allocations are being recorded */
	atomic_int inflight;	/* event callbacks running */
	bool exists;
	bool exact;
	uint64_t interval;
	uint32_t depth;
	struct pattern pat[MAX_PATTERNS];
	int npat;
	char *accounts;		/* the patterns as given */
	uint64_t started_ms, stopped_ms, mark_ms;
	bool has_mark;
	uint64_t events, dropped, tracked;
	size_t bytes;		/* memory of the tables below */
	struct method *methods;
	uint32_t nmethods, capmethods;
	struct node *nodes;
	uint32_t nnodes, capnodes;
	struct key *keys;
	uint32_t nkeys, capkeys;
	char **classes;
	uint32_t nclasses, capclasses;
	struct tab tmethods, tnodes, tkeys, tclasses;
} R = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t wall_ms(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
}

static void dealloc(jvmtiEnv *e, void *p)
{
	if (p)
		(*e)->Deallocate(e, p);
}

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	return h;
}

/* ---- tables (the lock is held) ---- */

static uint64_t hash_of(const struct tab *t, uint32_t i)
{
	if (t == &R.tmethods)
		return mix((uint64_t)(uintptr_t)R.methods[i].id);
	if (t == &R.tnodes)
		return mix((uint64_t)R.nodes[i].parent << 32 ^ (uint64_t)R.nodes[i].method << 1 ^
			   (uint64_t)(uint32_t)R.nodes[i].line * 0x9e3779b97f4a7c15ULL);
	if (t == &R.tkeys)
		return mix((uint64_t)R.keys[i].node << 32 ^ (uint64_t)R.keys[i].cls * 0x9e3779b1u ^
			   (uint64_t)R.keys[i].account << 48);
	return str_hash(R.classes[i]);
}

/* grow_tab: double t when it is half full; false when memory ran out. */
static bool grow_tab(struct tab *t)
{
	if (t->slot && (uint64_t)(t->n + 1) * 2 <= (uint64_t)t->mask + 1)
		return true;
	uint32_t cap = t->slot ? (t->mask + 1) * 2 : 1024;
	if (R.bytes + (size_t)cap * 4 > MAX_BYTES)
		return false;
	uint32_t *s = calloc(cap, 4);
	if (!s)
		return false;
	for (uint32_t k = 0; t->slot && k <= t->mask; k++)
		if (t->slot[k]) {
			uint32_t j = (uint32_t)hash_of(t, t->slot[k] - 1) & (cap - 1);
			while (s[j])
				j = (j + 1) & (cap - 1);
			s[j] = t->slot[k];
		}
	R.bytes += (size_t)cap * 4 - (t->slot ? (size_t)(t->mask + 1) * 4 : 0);
	free(t->slot);
	t->slot = s;
	t->mask = cap - 1;
	return true;
}

/* grow_array: room for one more element in *arr (cap *cap of size each). */
static bool grow_array(void **arr, uint32_t n, uint32_t *cap, size_t size)
{
	if (n < *cap)
		return true;
	uint32_t c = *cap ? *cap * 2 : 256;
	if (c <= *cap || R.bytes + (size_t)(c - *cap) * size > MAX_BYTES)
		return false;
	void *p = realloc(*arr, (size_t)c * size);
	if (!p)
		return false;
	R.bytes += (size_t)(c - *cap) * size;
	*arr = p;
	*cap = c;
	return true;
}

static uint32_t method_find(jmethodID id)
{
	if (!R.tmethods.slot)
		return NONE;
	for (uint32_t j = (uint32_t)mix((uint64_t)(uintptr_t)id) & R.tmethods.mask;;
	     j = (j + 1) & R.tmethods.mask) {
		uint32_t s = R.tmethods.slot[j];
		if (!s)
			return NONE;
		if (R.methods[s - 1].id == id)
			return s - 1;
	}
}

/* insert: put index i (already stored in its array) into t. */
static void insert(struct tab *t, uint32_t i)
{
	uint32_t j = (uint32_t)hash_of(t, i) & t->mask;
	while (t->slot[j])
		j = (j + 1) & t->mask;
	t->slot[j] = i + 1;
	t->n++;
}

/* node_get: the node (parent, method, line), made if new; NONE when full. */
static uint32_t node_get(uint32_t parent, uint32_t method, int32_t line)
{
	struct node k = {parent, method, line};
	if (R.tnodes.slot) {
		uint64_t h = mix((uint64_t)parent << 32 ^ (uint64_t)method << 1 ^
				 (uint64_t)(uint32_t)line * 0x9e3779b97f4a7c15ULL);
		for (uint32_t j = (uint32_t)h & R.tnodes.mask;; j = (j + 1) & R.tnodes.mask) {
			uint32_t s = R.tnodes.slot[j];
			if (!s)
				break;
			const struct node *n = &R.nodes[s - 1];
			if (n->parent == parent && n->method == method && n->line == line)
				return s - 1;
		}
	}
	if (R.nnodes == NONE - 1 || !grow_tab(&R.tnodes) ||
	    !grow_array((void **)&R.nodes, R.nnodes, &R.capnodes, sizeof *R.nodes))
		return NONE;
	R.nodes[R.nnodes] = k;
	insert(&R.tnodes, R.nnodes);
	return R.nnodes++;
}

/* key_get: the key (node, cls, account), made if new; NONE when full. */
static uint32_t key_get(uint32_t node, uint32_t cls, uint32_t account)
{
	if (R.tkeys.slot) {
		uint64_t h = mix((uint64_t)node << 32 ^ (uint64_t)cls * 0x9e3779b1u ^
				 (uint64_t)account << 48);
		for (uint32_t j = (uint32_t)h & R.tkeys.mask;; j = (j + 1) & R.tkeys.mask) {
			uint32_t s = R.tkeys.slot[j];
			if (!s)
				break;
			const struct key *k = &R.keys[s - 1];
			if (k->node == node && k->cls == cls && k->account == account)
				return s - 1;
		}
	}
	/* Key indexes live in tags' low 32 bits, plus one. */
	if (R.nkeys >= 0x7ffffffe || !grow_tab(&R.tkeys) ||
	    !grow_array((void **)&R.keys, R.nkeys, &R.capkeys, sizeof *R.keys))
		return NONE;
	memset(&R.keys[R.nkeys], 0, sizeof *R.keys);
	R.keys[R.nkeys].node = node;
	R.keys[R.nkeys].cls = cls;
	R.keys[R.nkeys].account = account;
	insert(&R.tkeys, R.nkeys);
	return R.nkeys++;
}

/* class_get: the index of class signature sig (copied when new); NONE when full. */
static uint32_t class_get(const char *sig)
{
	if (R.tclasses.slot)
		for (uint32_t j = (uint32_t)str_hash(sig) & R.tclasses.mask;;
		     j = (j + 1) & R.tclasses.mask) {
			uint32_t s = R.tclasses.slot[j];
			if (!s)
				break;
			if (!strcmp(R.classes[s - 1], sig))
				return s - 1;
		}
	size_t len = strlen(sig) + 1;
	if (R.nclasses >= 0x1fffffff || R.bytes + len > MAX_BYTES || !grow_tab(&R.tclasses) ||
	    !grow_array((void **)&R.classes, R.nclasses, &R.capclasses, sizeof *R.classes))
		return NONE;
	char *c = malloc(len);
	if (!c)
		return NONE;
	memcpy(c, sig, len);
	R.bytes += len;
	R.classes[R.nclasses] = c;
	insert(&R.tclasses, R.nclasses);
	return R.nclasses++;
}

static void free_tables(void)
{
	for (uint32_t i = 0; i < R.nmethods; i++) {
		struct method *m = &R.methods[i];
		free(m->cls);
		free(m->name);
		free(m->sig);
		free(m->file);
		free(m->lines);
	}
	for (uint32_t i = 0; i < R.nclasses; i++)
		free(R.classes[i]);
	free(R.methods);
	free(R.nodes);
	free(R.keys);
	free(R.classes);
	free(R.tmethods.slot);
	free(R.tnodes.slot);
	free(R.tkeys.slot);
	free(R.tclasses.slot);
	R.methods = NULL;
	R.nodes = NULL;
	R.keys = NULL;
	R.classes = NULL;
	memset(&R.tmethods, 0, sizeof R.tmethods);
	memset(&R.tnodes, 0, sizeof R.tnodes);
	memset(&R.tkeys, 0, sizeof R.tkeys);
	memset(&R.tclasses, 0, sizeof R.tclasses);
	R.nmethods = R.capmethods = R.nnodes = R.capnodes = 0;
	R.nkeys = R.capkeys = R.nclasses = R.capclasses = 0;
	R.events = R.dropped = R.tracked = 0;
	R.has_mark = false;
	R.mark_ms = 0;
	R.bytes = 0;
}

/* ---- account patterns (seed 001, section 4) ---- */

static void drop_patterns(struct pattern *pat, int n)
{
	for (int i = 0; i < n; i++) {
		free(pat[i].text);
		free(pat[i].pkg);
	}
}

static void free_patterns(void)
{
	drop_patterns(R.pat, R.npat);
	R.npat = 0;
	free(R.accounts);
	R.accounts = NULL;
}

/*
 * parse_patterns: "a.b,c.d.*" (sep is the separator) into pat[0..*n); a
 * pattern is a package name, dot-separated Java identifiers, optionally
 * ending in ".*" for its subpackages too. On error, why says which, nothing
 * is kept, and false.
 */
static bool parse_patterns(const char *text, char sep, struct pattern *pat, int *n, char *why,
			   size_t cap)
{
	*n = 0;
	for (const char *p = text; p && *p;) {
		const char *end = strchr(p, sep);
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (*n == MAX_PATTERNS) {
			snprintf(why, cap, "at most %d account patterns", MAX_PATTERNS);
			goto fail;
		}
		char *t = strndup(p, len);
		if (!t) {
			snprintf(why, cap, "out of memory in the agent");
			goto fail;
		}
		bool wild = len >= 2 && !strcmp(t + len - 2, ".*");
		size_t plen = wild ? len - 2 : len;
		bool ok = plen > 0;
		bool start = true;	/* at the start of an identifier */
		for (size_t k = 0; k < plen && ok; k++) {
			char c = t[k];
			if (c == '.') {
				ok = !start;
				start = true;
			} else if (c == '_' || c == '$' || (c >= 'a' && c <= 'z') ||
				   (c >= 'A' && c <= 'Z') || (unsigned char)c >= 0x80 ||
				   (!start && c >= '0' && c <= '9')) {
				start = false;
			} else {
				ok = false;
			}
		}
		if (!ok || start) {
			snprintf(why, cap, "bad account pattern '%s': a package name (a.b) or a "
				 "package and its subpackages (a.b.*)", t);
			free(t);
			goto fail;
		}
		struct pattern *pt = &pat[(*n)++];
		pt->text = t;
		pt->pkg = strndup(t, plen);
		if (!pt->pkg) {
			snprintf(why, cap, "out of memory in the agent");
			goto fail;
		}
		for (char *q = pt->pkg; *q; q++)
			if (*q == '.')
				*q = '/';
		pt->len = plen;
		pt->wild = wild;
		p = end ? end + 1 : p + len;
		if (end && !*p) {
			snprintf(why, cap, "empty account pattern at the end of '%s'", text);
			goto fail;
		}
	}
	return true;
fail:
	drop_patterns(pat, *n);
	*n = 0;
	return false;
}

/*
 * account_of: the account of a class with JNI signature sig: the pattern
 * matching its package, an exact package pattern before a wildcard, a
 * longer wildcard before a shorter one, the first listed on ties; 0: none.
 */
static uint32_t account_of(const char *sig)
{
	if (!R.npat || sig[0] != 'L')
		return 0;
	const char *pkg = sig + 1, *slash = strrchr(pkg, '/');
	size_t plen = slash ? (size_t)(slash - pkg) : 0;
	int best = -1;
	size_t best_len = 0;
	bool best_exact = false;
	for (int i = 0; i < R.npat; i++) {
		const struct pattern *p = &R.pat[i];
		bool exact = plen == p->len && !strncmp(pkg, p->pkg, plen);
		bool sub = p->wild && plen > p->len && !strncmp(pkg, p->pkg, p->len) &&
			   pkg[p->len] == '/';
		if (!exact && !sub)
			continue;
		bool as_exact = exact && !p->wild;
		if (best < 0 || (as_exact && !best_exact) ||
		    (as_exact == best_exact && p->len > best_len)) {
			best = i;
			best_len = p->len;
			best_exact = as_exact;
		}
	}
	return best < 0 ? 0 : (uint32_t)best + 1;
}

/* ---- one allocation ---- */

static int cmp_line(const void *a, const void *b)
{
	const jvmtiLineNumberEntry *x = a, *y = b;
	return x->start_location < y->start_location ? -1 : x->start_location > y->start_location;
}

/* resolve: a method's names, file, line table and account, through JVMTI (no lock held). */
static bool resolve(jvmtiEnv *e, JNIEnv *jni, jmethodID id, struct method *m)
{
	memset(m, 0, sizeof *m);
	m->id = id;
	jclass k = NULL;
	char *csig = NULL, *name = NULL, *msig = NULL, *file = NULL;
	jvmtiLineNumberEntry *lines = NULL;
	/* A method JVMTI cannot place still gets an entry ("?"), so its stacks are recorded. */
	if ((*e)->GetMethodDeclaringClass(e, id, &k) != JVMTI_ERROR_NONE)
		k = NULL;
	if (k)
		(*e)->GetClassSignature(e, k, &csig, NULL);
	(*e)->GetMethodName(e, id, &name, &msig, NULL);
	if (!k || (*e)->GetSourceFileName(e, k, &file) != JVMTI_ERROR_NONE)
		file = NULL;
	if ((*e)->GetLineNumberTable(e, id, &m->nlines, &lines) != JVMTI_ERROR_NONE) {
		lines = NULL;
		m->nlines = 0;
	}
	m->cls = strdup(csig ? csig : "?");
	m->name = strdup(name ? name : "?");
	m->sig = strdup(msig ? msig : "");
	m->file = file ? strdup(file) : NULL;
	if (m->nlines > 0) {
		m->lines = malloc((size_t)m->nlines * sizeof *lines);
		if (m->lines) {
			memcpy(m->lines, lines, (size_t)m->nlines * sizeof *lines);
			qsort(m->lines, (size_t)m->nlines, sizeof *lines, cmp_line);
		} else {
			m->nlines = 0;
		}
	}
	dealloc(e, csig);
	dealloc(e, name);
	dealloc(e, msig);
	dealloc(e, file);
	dealloc(e, lines);
	if (k)
		(*jni)->DeleteLocalRef(jni, k);
	if (!m->cls || !m->name || !m->sig || (file && !m->file)) {
		free(m->cls);
		free(m->name);
		free(m->sig);
		free(m->file);
		free(m->lines);
		return false;
	}
	m->account = account_of(m->cls);
	return true;
}

static size_t method_bytes(const struct method *m)
{
	return strlen(m->cls) + strlen(m->name) + strlen(m->sig) + 4 +
	       (m->file ? strlen(m->file) : 0) + (size_t)m->nlines * sizeof *m->lines;
}

/*
 * methods_of: the method indexes of n frames into mi. Called and returns
 * with the lock held; releases it to resolve methods seen for the first
 * time. false when the tables are full.
 */
static bool methods_of(jvmtiEnv *e, JNIEnv *jni, const jvmtiFrameInfo *fr, int n, uint32_t *mi)
{
	int missing = 0;
	for (int i = 0; i < n; i++)
		missing += (mi[i] = method_find(fr[i].method)) == NONE;
	/* New methods are resolved CHUNK at a time, each batch outside the lock. */
	while (missing) {
		pthread_mutex_unlock(&R.lock);
		struct method m[CHUNK];
		int got = 0, tried = 0;
		for (int i = 0; i < n && tried < CHUNK; i++) {
			if (mi[i] != NONE)
				continue;
			bool dup = false;
			for (int j = 0; j < got && !dup; j++)
				dup = m[j].id == fr[i].method;
			if (dup)
				continue;
			tried++;
			if (resolve(e, jni, fr[i].method, &m[got]))
				got++;
		}
		pthread_mutex_lock(&R.lock);
		for (int j = 0; j < got; j++) {
			size_t b = method_bytes(&m[j]);
			if (method_find(m[j].id) != NONE || R.bytes + b > MAX_BYTES ||
			    !grow_tab(&R.tmethods) ||
			    !grow_array((void **)&R.methods, R.nmethods, &R.capmethods,
					sizeof *R.methods)) {
				free(m[j].cls);
				free(m[j].name);
				free(m[j].sig);
				free(m[j].file);
				free(m[j].lines);
				continue;
			}
			R.bytes += b;
			R.methods[R.nmethods] = m[j];
			insert(&R.tmethods, R.nmethods++);
		}
		int before = missing;
		missing = 0;
		for (int i = 0; i < n; i++)
			if (mi[i] == NONE)
				missing += (mi[i] = method_find(fr[i].method)) == NONE;
		/* Nothing resolved in a whole batch: a method JVMTI cannot name, or full tables. */
		if (missing && (missing == before || !got))
			return false;
	}
	return true;
}

/* line_of: the source line of bytecode index bci in method m; -1 unknown. */
static int32_t line_of(const struct method *m, jlocation bci)
{
	if (bci < 0 || m->nlines <= 0)
		return -1;
	jint lo = 0, hi = m->nlines - 1, best = -1;
	while (lo <= hi) {
		jint mid = (lo + hi) / 2;
		if (m->lines[mid].start_location <= bci) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return best < 0 ? m->lines[0].line_number : m->lines[best].line_number;
}

/* weight: how many objects one recorded object of size bytes stands for. */
static double weight(jlong size)
{
	if (R.exact || size <= 0)
		return 1.0;
	/* A sample falls in an object of s bytes with probability 1 - exp(-s/interval). */
	return 1.0 / -expm1(-(double)size / (double)R.interval);
}

/* class_of: the recorder's index of klass, tagging the class with it; NONE on failure. */
static uint32_t class_of(jvmtiEnv *e, jclass klass, bool *array)
{
	jlong t = 0;
	if ((*e)->GetTag(e, klass, &t) == JVMTI_ERROR_NONE && (t & CLASS_BIT)) {
		*array = (t & ARRAY_BIT) != 0;
		return (uint32_t)t;
	}
	char *sig = NULL;
	if ((*e)->GetClassSignature(e, klass, &sig, NULL) != JVMTI_ERROR_NONE || !sig)
		return NONE;
	pthread_mutex_lock(&R.lock);
	uint32_t c = class_get(sig);
	pthread_mutex_unlock(&R.lock);
	*array = sig[0] == '[';
	dealloc(e, sig);
	/* A Class object that is itself a recorded allocation keeps its object tag. */
	if (c != NONE && t == 0)
		(*e)->SetTag(e, klass, CLASS_BIT | (*array ? ARRAY_BIT : 0) | c);
	return c;
}

static void record(jvmtiEnv *e, JNIEnv *jni, jobject obj, jclass klass, jlong size)
{
	bool array = false;
	uint32_t cls = class_of(e, klass, &array);
	jint len = array ? (*jni)->GetArrayLength(jni, (jarray)obj) : 0;
	int depth = (int)R.depth, want = depth < 16 && R.npat ? 16 : depth;
	jvmtiFrameInfo fr[want];
	uint32_t mi[want];
	jint count = 0;
	if ((*e)->GetStackTrace(e, NULL, 0, want, fr, &count) != JVMTI_ERROR_NONE)
		count = 0;
	pthread_mutex_lock(&R.lock);
	uint32_t key = NONE, acc = 0;
	if (cls == NONE || !methods_of(e, jni, fr, count, mi))
		goto full;
	for (int i = 0; i < count && !acc; i++)
		acc = R.methods[mi[i]].account;
	/* The nearest accounted frame may be below the frames kept. */
	for (jint from = count; !acc && R.npat && count == want && from < MAX_SEARCH;) {
		jvmtiFrameInfo more[CHUNK];
		uint32_t mm[CHUNK];
		jint got = 0;
		pthread_mutex_unlock(&R.lock);
		if ((*e)->GetStackTrace(e, NULL, from, CHUNK, more, &got) != JVMTI_ERROR_NONE)
			got = 0;
		pthread_mutex_lock(&R.lock);
		if (!methods_of(e, jni, more, got, mm))
			goto full;
		for (int i = 0; i < got && !acc; i++)
			acc = R.methods[mm[i]].account;
		if (got < CHUNK)
			break;
		from += got;
	}
	uint32_t parent = NONE;
	for (int i = (count < depth ? count : depth) - 1; i >= 0; i--) {
		parent = node_get(parent, mi[i], line_of(&R.methods[mi[i]], fr[i].location));
		if (parent == NONE)
			goto full;
	}
	key = key_get(parent, cls, acc);
	if (key == NONE)
		goto full;
	double w = weight(size);
	struct key *k = &R.keys[key];
	k->objs += w;
	k->bytes += w * (double)size;
	k->elems += w * (double)len;
	R.events++;
	pthread_mutex_unlock(&R.lock);
	jlong words = size / 8 > MAX_WORDS ? MAX_WORDS : size / 8;
	(*e)->SetTag(e, obj, (jlong)key + 1 + (words << 32));
	return;
full:
	R.dropped++;
	pthread_mutex_unlock(&R.lock);
}

static void JNICALL on_alloc(jvmtiEnv *e, JNIEnv *jni, jthread thread, jobject obj, jclass klass,
			     jlong size)
{
	(void)thread;
	if (ag_in_agent_thread || !atomic_load(&R.on))
		return;
	atomic_fetch_add(&R.inflight, 1);
	if (atomic_load(&R.on) && e == R.env)
		record(e, jni, obj, klass, size);
	atomic_fetch_sub(&R.inflight, 1);
}

/* ---- starting and stopping ---- */

/* quiesce: no event callback is running any more (events are off). */
static void quiesce(void)
{
	for (int k = 0; k < 2000 && atomic_load(&R.inflight) > 0; k++)
		usleep(1000);
}

/* halt: stop recording allocations; the tables and tags stay. */
static void halt(void)
{
	if (!atomic_load(&R.on))
		return;
	atomic_store(&R.on, 0);
	if (R.env)
		(*R.env)->SetEventNotificationMode(R.env, JVMTI_DISABLE,
						   JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
	quiesce();
	R.stopped_ms = wall_ms();
}

/* discard: drop the recording: its environment (and with it every tag) and its tables. */
static void discard(void)
{
	halt();
	if (R.env) {
		jvmtiEnv *e = R.env;
		R.env = NULL;
		(*e)->DisposeEnvironment(e);
	}
	pthread_mutex_lock(&R.lock);
	free_tables();
	pthread_mutex_unlock(&R.lock);
	R.exists = false;
}

/* begin: a new recording with R.exact, R.interval, R.depth, R.pat; why on failure. */
static bool begin(char *why, size_t cap)
{
	jvmtiEnv *e = NULL;
	if (!R.vm || (*R.vm)->GetEnv(R.vm, (void **)&e, JVMTI_VERSION_11) != JNI_OK || !e) {
		snprintf(why, cap, "this JVM offers no JVMTI 11 environment (allocation "
			 "sampling needs JDK 11 or later)");
		return false;
	}
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof caps);
	caps.can_generate_sampled_object_alloc_events = 1;
	caps.can_tag_objects = 1;
	caps.can_get_line_numbers = 1;
	caps.can_get_source_file_name = 1;
	jvmtiError err = (*e)->AddCapabilities(e, &caps);
	if (err != JVMTI_ERROR_NONE) {
		snprintf(why, cap, "the JVM refused the allocation sampling capabilities "
			 "(JVMTI error %d)", err);
		(*e)->DisposeEnvironment(e);
		return false;
	}
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.SampledObjectAlloc = on_alloc;
	(*e)->SetEventCallbacks(e, &cb, sizeof cb);
	err = (*e)->SetHeapSamplingInterval(e, R.exact ? 0 : (jint)R.interval);
	if (err != JVMTI_ERROR_NONE) {
		snprintf(why, cap, "SetHeapSamplingInterval failed (JVMTI error %d)", err);
		(*e)->DisposeEnvironment(e);
		return false;
	}
	R.env = e;
	R.exists = true;
	R.started_ms = wall_ms();
	R.stopped_ms = 0;
	atomic_store(&R.on, 1);
	err = (*e)->SetEventNotificationMode(e, JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
	if (err != JVMTI_ERROR_NONE) {
		snprintf(why, cap, "the JVM refused SampledObjectAlloc events (JVMTI error %d)", err);
		discard();
		return false;
	}
	return true;
}

void ag_alloc_init(JavaVM *vm)
{
	R.vm = vm;
}

void ag_alloc_vm_death(void)
{
	if (atomic_load(&R.on)) {
		atomic_store(&R.on, 0);
		R.stopped_ms = wall_ms();
	}
}

/* option: the value of key=VALUE in a comma-separated option string, new memory; NULL absent. */
static char *option(const char *opts, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = opts; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n > kl && !strncmp(p, key, kl) && p[kl] == '=')
			return strndup(p + kl + 1, n - kl - 1);
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

/* parse_u64: a whole decimal number with an optional k, m or g (binary) suffix. */
static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || errno || *s == '-')
		return false;
	uint64_t mul = 1;
	if (*end == 'k' || *end == 'K')
		mul = 1024, end++;
	else if (*end == 'm' || *end == 'M')
		mul = 1024 * 1024, end++;
	else if (*end == 'g' || *end == 'G')
		mul = 1024 * 1024 * 1024, end++;
	if (*end || (v && mul > UINT64_MAX / v))
		return false;
	*out = v * mul;
	return true;
}

/*
 * configure: check the recording's settings and, when apply, make them the
 * recording's (no recording may be running then); why on error.
 */
static bool configure(bool exact, uint64_t interval, uint64_t depth, const char *accounts,
		      char sep, bool apply, char *why, size_t cap)
{
	if (!exact && (interval < 1 || interval > 0x7fffffff)) {
		snprintf(why, cap, "the sampling interval must be 1 to 2147483647 bytes, not %llu",
			 (unsigned long long)interval);
		return false;
	}
	if (depth < 1 || depth > MAX_DEPTH) {
		snprintf(why, cap, "the stack depth must be 1 to %d frames, not %llu", MAX_DEPTH,
			 (unsigned long long)depth);
		return false;
	}
	struct pattern pat[MAX_PATTERNS];
	int n = 0;
	if (!parse_patterns(accounts, sep, pat, &n, why, cap))
		return false;
	char *text = accounts && *accounts ? strdup(accounts) : NULL;
	if (!apply || (accounts && *accounts && !text)) {
		drop_patterns(pat, n);
		free(text);
		if (apply)
			snprintf(why, cap, "out of memory in the agent");
		return !apply;
	}
	for (char *q = text; q && *q; q++)
		if (*q == sep)
			*q = ',';
	free_patterns();
	memcpy(R.pat, pat, (size_t)n * sizeof *pat);
	R.npat = n;
	R.accounts = text;
	R.exact = exact;
	R.interval = exact ? 0 : interval;
	R.depth = (uint32_t)depth;
	return true;
}

bool ag_alloc_options(const char *opts)
{
	char *mode = option(opts, "alloc");
	if (!mode)
		return true;
	char *acc = option(opts, "accounts"), *dep = option(opts, "depth");
	uint64_t interval = 512 * 1024, depth = 64;
	char why[512] = "";
	bool exact = !strcmp(mode, "exact"), ok = true;
	if (!exact && !parse_u64(mode, &interval)) {
		snprintf(why, sizeof why, "alloc=%s: say alloc=exact or alloc=BYTES (mean bytes "
			 "between samples, e.g. 512k)", mode);
		ok = false;
	}
	if (ok && dep && !parse_u64(dep, &depth)) {
		snprintf(why, sizeof why, "depth=%s is not a number of frames", dep);
		ok = false;
	}
	ok = ok && configure(exact, interval, depth, acc, ';', true, why, sizeof why) &&
	     begin(why, sizeof why);
	if (!ok)
		ag_log("no allocation recording: %s", why);
	free(mode);
	free(acc);
	free(dep);
	return ok;
}

/* ---- reading ---- */

struct walk {
	uint32_t n;
	double *objs, *bytes;
	uint64_t tracked;
};

static jint JNICALL walk_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud)
{
	struct walk *w = ud;
	(void)class_tag;
	(void)length;
	jlong t = *tag_ptr;
	if (t <= 0 || (t & CLASS_BIT))
		return 0;
	uint32_t k = (uint32_t)(t & 0xffffffff) - 1;
	if (k < w->n) {
		double wt = weight(size);
		w->objs[k] += wt;
		w->bytes[k] += wt * (double)size;
		w->tracked++;
	}
	return 0;
}

/*
 * measure: the live objects and bytes of every key, after a full GC when
 * gc: one IterateThroughHeap over the recorder's tagged objects. Stores
 * them in the keys (and in the mark when mark). why on failure.
 */
static bool measure(bool gc, bool mark, char *why, size_t cap)
{
	jvmtiEnv *e = R.env;
	if (gc)
		(*e)->ForceGarbageCollection(e);
	pthread_mutex_lock(&R.lock);
	struct walk w = {R.nkeys, NULL, NULL, 0};
	pthread_mutex_unlock(&R.lock);
	w.objs = calloc((size_t)w.n + 1, sizeof *w.objs);
	w.bytes = calloc((size_t)w.n + 1, sizeof *w.bytes);
	if (!w.objs || !w.bytes) {
		free(w.objs);
		free(w.bytes);
		snprintf(why, cap, "out of memory in the agent");
		return false;
	}
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.heap_iteration_callback = walk_cb;
	jvmtiError err = (*e)->IterateThroughHeap(e, JVMTI_HEAP_FILTER_UNTAGGED, NULL, &cb, &w);
	if (err == JVMTI_ERROR_NONE) {
		pthread_mutex_lock(&R.lock);
		for (uint32_t k = 0; k < R.nkeys; k++) {
			struct key *key = &R.keys[k];
			key->live_objs = k < w.n ? w.objs[k] : 0;
			key->live_bytes = k < w.n ? w.bytes[k] : 0;
			if (mark) {
				key->mark_objs = key->live_objs;
				key->mark_bytes = key->live_bytes;
			}
		}
		R.tracked = w.tracked;
		if (mark) {
			R.has_mark = true;
			R.mark_ms = wall_ms();
		}
		pthread_mutex_unlock(&R.lock);
	} else {
		snprintf(why, cap, "the heap walk for live objects failed (JVMTI error %d)", err);
	}
	free(w.objs);
	free(w.bytes);
	return err == JVMTI_ERROR_NONE;
}

/* put_status: the status fields (docs/protocol.md, ALLOC_STATUS); the lock is held. */
static void put_status(struct buf *b)
{
	ag_bu8(b, (uint8_t)((R.exists ? 1 : 0) | (atomic_load(&R.on) ? 2 : 0) |
			    (R.exact ? 4 : 0) | (R.has_mark ? 8 : 0)));
	ag_bu64(b, R.interval);
	ag_bu32(b, R.depth);
	ag_bu64(b, R.started_ms);
	ag_bu64(b, R.stopped_ms);
	ag_bu64(b, R.events);
	ag_bu64(b, R.dropped);
	ag_bu64(b, R.bytes);
	ag_bu64(b, R.tracked);
	ag_bu64(b, R.mark_ms);
	ag_bstr(b, R.exists ? R.accounts : NULL);
}

static bool send_status(int fd, uint8_t type)
{
	struct buf b = {0};
	pthread_mutex_lock(&R.lock);
	put_status(&b);
	pthread_mutex_unlock(&R.lock);
	bool ok = ag_send_frame(fd, type, &b);
	free(b.p);
	return ok;
}

static void put_f64(struct buf *b, double v)
{
	uint64_t bits;
	memcpy(&bits, &v, 8);
	ag_bu64(b, bits);
}

enum { A_STATUS = 1, A_ACCOUNT, A_CLASS, A_METHOD, A_NODE, A_KEY };

/* send_recording: the whole recording as DATA frames and an END (docs/protocol.md, ALLOC_READ). */
static bool send_recording(int fd)
{
	struct buf b = {0};
	uint64_t records = 0;
	pthread_mutex_lock(&R.lock);
	ag_bu8(&b, A_STATUS);
	put_status(&b);
	for (int i = 0; i < R.npat; i++, records++) {
		ag_bu8(&b, A_ACCOUNT);
		ag_bstr(&b, R.pat[i].text);
	}
	for (uint32_t i = 0; i < R.nclasses; i++, records++) {
		ag_bu8(&b, A_CLASS);
		ag_bstr(&b, R.classes[i]);
	}
	for (uint32_t i = 0; i < R.nmethods; i++, records++) {
		const struct method *m = &R.methods[i];
		ag_bu8(&b, A_METHOD);
		ag_bstr(&b, m->cls);
		ag_bstr(&b, m->name);
		ag_bstr(&b, m->sig);
		ag_bstr(&b, m->file);
		ag_bu32(&b, m->account);
	}
	for (uint32_t i = 0; i < R.nnodes; i++, records++) {
		ag_bu8(&b, A_NODE);
		ag_bu32(&b, R.nodes[i].parent);
		ag_bu32(&b, R.nodes[i].method);
		ag_bu32(&b, (uint32_t)R.nodes[i].line);
	}
	for (uint32_t i = 0; i < R.nkeys; i++, records++) {
		const struct key *k = &R.keys[i];
		ag_bu8(&b, A_KEY);
		ag_bu32(&b, k->node);
		ag_bu32(&b, k->cls);
		ag_bu32(&b, k->account);
		put_f64(&b, k->objs);
		put_f64(&b, k->bytes);
		put_f64(&b, k->live_objs);
		put_f64(&b, k->live_bytes);
		put_f64(&b, k->elems);
		put_f64(&b, k->mark_objs);
		put_f64(&b, k->mark_bytes);
	}
	pthread_mutex_unlock(&R.lock);
	if (b.oom) {
		free(b.p);
		return ag_send_error(fd, "out of memory in the agent while sending the recording");
	}
	/* Sent outside the lock: a slow reader never holds up allocating threads. */
	bool ok = true;
	for (size_t off = 0; ok && off < b.len;) {
		size_t n = b.len - off < (1u << 20) ? b.len - off : (1u << 20);
		struct buf d = {b.p + off, n, n, false};
		uint8_t h[5] = {(uint8_t)((n + 1) >> 24), (uint8_t)((n + 1) >> 16),
				(uint8_t)((n + 1) >> 8), (uint8_t)(n + 1), T_DATA};
		int64_t dl = ag_now_ms() + WRITE_MS;
		ok = ag_io_full(fd, h, 5, false, dl) && ag_io_full(fd, d.p, d.len, false, dl);
		off += n;
	}
	free(b.p);
	if (!ok)
		return false;
	struct buf end = {0};
	ag_bu64(&end, records + 1);
	ok = ag_send_frame(fd, T_END, &end);
	free(end.p);
	return ok;
}

bool ag_alloc_request(int fd, JNIEnv *env, uint8_t type, struct req *r)
{
	(void)env;
	char why[512] = "";
	if (type == T_ALLOC_START) {
		uint8_t flags = ag_ru8(r);
		uint64_t interval = ag_ru64(r);
		uint32_t depth = ag_ru32(r);
		char *acc = ag_rstr(r);
		if (r->bad || r->p != r->end) {
			free(acc);
			return false;
		}
		/* Checked first: a typo neither meets "already running" nor costs a stopped recording. */
		bool ok = configure(flags & 1, interval, depth, acc, ',', false, why, sizeof why);
		if (ok && atomic_load(&R.on)) {
			free(acc);
			return ag_send_error(fd, "a recording is already running (:alloc stop "
					     "or :alloc reset first)");
		}
		if (ok) {
			discard();	/* a stopped recording gives way to the new one */
			ok = configure(flags & 1, interval, depth, acc, ',', true, why, sizeof why) &&
			     begin(why, sizeof why);
		}
		free(acc);
		return ok ? send_status(fd, T_ALLOC_START) : ag_send_error(fd, "%s", why);
	}
	if (r->p != r->end)
		return false;
	if (type == T_ALLOC_STATUS)
		return send_status(fd, type);
	if (!R.exists)
		return ag_send_error(fd, "this JVM has no allocation recording; start one "
				     "with :alloc start");
	switch (type) {
	case T_ALLOC_STOP:
		halt();
		return send_status(fd, type);
	case T_ALLOC_RESET: {
		bool was_on = atomic_load(&R.on);
		discard();
		if (was_on && !begin(why, sizeof why))
			return ag_send_error(fd, "%s", why);
		return send_status(fd, type);
	}
	case T_ALLOC_MARK:
		if (!measure(true, true, why, sizeof why))
			return ag_send_error(fd, "%s", why);
		return send_status(fd, type);
	case T_ALLOC_READ:
		if (!measure(true, false, why, sizeof why))
			return ag_send_error(fd, "%s", why);
		return send_recording(fd);
	default:
		return false;
	}
}
