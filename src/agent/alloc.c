/*
 * alloc.c - the agent's allocation recorder (docs/agent.md, "Allocation
 * recordings"; docs/protocol.md, ALLOC_*): who allocates what, per calling
 * context (seed 004, JP's method call tree), per allocation site (seed 002)
 * and per memory account (seed 001, ASGMemProf), with what stays alive.
 *
 * This file owns the recording itself: its settings and account patterns,
 * the tables every mechanism fills (methods, calling-context nodes, classes,
 * keys of (node, class, account) with their counters), the stack walk that
 * finds an allocation's calling context and account, reads of live counts,
 * and the ALLOC_* requests. How allocations are seen is a mechanism's
 * (recorder.h): JVMTI SampledObjectAlloc for sampled recordings and for
 * exact ones by events (alloc_jvmti.c), bytecode instrumentation of the
 * allocation sites for exact ones by default (instrument.c).
 *
 * Rules: no JVMTI or JNI call while R.lock is held (a thread in a JVMTI
 * call may wait for a safepoint while others wait for the lock); tables are
 * bounded (MAX_BYTES; past it allocations are counted as dropped); the
 * agent's own thread is never recorded; a recording outlives the connection
 * and the agent thread (detach), like a JFR recording.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "../base/u64map.h"
#include "recorder.h"

__thread int ag_in_agent_thread;

struct recorder R = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t events(void);

uint64_t ag_wall_ms(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
}

bool ag_rec_room(size_t n)
{
	size_t b = atomic_load(&R.bytes);
	do {
		if (n > MAX_BYTES || b > MAX_BYTES - n)
			return false;
	} while (!atomic_compare_exchange_weak(&R.bytes, &b, b + n));
	return true;
}

void *ag_rec_calloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	if (!ag_rec_room(n * size))
		return NULL;
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		R.bytes -= n * size;
	return p;
}

static void dealloc(jvmtiEnv *e, void *p)
{
	if (p)
		(*e)->Deallocate(e, p);
}

void ag_rec_free(void *p)
{
	if (p && R.env)
		(*R.env)->Deallocate(R.env, p);
}

bool ag_debug(void)
{
	static int d = -1;
	if (d < 0)
		d = getenv("HEAPSH_AGENT_DEBUG") != NULL;
	return d;
}

bool ag_debug_norewrite(void)
{
	static int d = -1;
	if (d < 0) {
		const char *v = getenv("HEAPSH_AGENT_DEBUG");
		d = v && !strcmp(v, "norewrite");
	}
	return d;
}

void ag_jni_clear(JNIEnv *jni, const char *what)
{
	if ((*jni)->ExceptionCheck(jni)) {
		if (ag_debug()) {
			ag_log("exception in %s:", what);
			(*jni)->ExceptionDescribe(jni);
		}
		(*jni)->ExceptionClear(jni);
	}
}

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

static uint64_t name_hash(const char *cls, const char *name, const char *sig)
{
	return u64_fnv1a(sig, u64_fnv1a(name, u64_fnv1a(cls, U64_FNV_BASIS) * 31) * 31);
}

/* ---- tables (the lock is held) ---- */

static uint64_t hash_of(const struct tab *t, uint32_t i)
{
	if (t == &R.tmethods)
		return mix((uint64_t)(uintptr_t)R.methods[i].id);
	if (t == &R.tnames)
		return name_hash(R.methods[i].cls, R.methods[i].name, R.methods[i].sig);
	if (t == &R.tnodes)
		return mix((uint64_t)R.nodes[i].parent << 32 ^ (uint64_t)R.nodes[i].method << 1 ^
			   (uint64_t)(uint32_t)R.nodes[i].line * 0x9e3779b97f4a7c15ULL);
	if (t == &R.tkeys)
		return mix((uint64_t)KEY(i)->node << 32 ^ (uint64_t)KEY(i)->cls * 0x9e3779b1u ^
			   (uint64_t)KEY(i)->account << 48);
	return u64_fnv1a(R.classes[i], U64_FNV_BASIS);
}

/* grow_tab: double t when it is half full; false when memory ran out. */
static bool grow_tab(struct tab *t)
{
	if (t->slot && (uint64_t)(t->n + 1) * 2 <= (uint64_t)t->mask + 1)
		return true;
	uint32_t cap = t->slot ? (t->mask + 1) * 2 : 1024;
	uint32_t *s = ag_rec_calloc(cap, 4);
	if (!s)
		return false;
	for (uint32_t k = 0; t->slot && k <= t->mask; k++)
		if (t->slot[k]) {
			uint32_t j = (uint32_t)hash_of(t, t->slot[k] - 1) & (cap - 1);
			while (s[j])
				j = (j + 1) & (cap - 1);
			s[j] = t->slot[k];
		}
	if (t->slot)
		R.bytes -= (size_t)(t->mask + 1) * 4;
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
	if (c <= *cap || !ag_rec_room((size_t)(c - *cap) * size))
		return false;
	void *p = realloc(*arr, (size_t)c * size);
	if (!p) {
		R.bytes -= (size_t)(c - *cap) * size;
		return false;
	}
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

static uint32_t method_by_name(const char *cls, const char *name, const char *sig)
{
	if (!R.tnames.slot)
		return NONE;
	for (uint32_t j = (uint32_t)name_hash(cls, name, sig) & R.tnames.mask;;
	     j = (j + 1) & R.tnames.mask) {
		uint32_t s = R.tnames.slot[j];
		if (!s)
			return NONE;
		const struct method *m = &R.methods[s - 1];
		if (!strcmp(m->cls, cls) && !strcmp(m->name, name) && !strcmp(m->sig, sig))
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

uint32_t ag_rec_node(uint32_t parent, uint32_t method, int32_t line)
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

uint32_t ag_rec_key(uint32_t node, uint32_t cls, uint32_t account)
{
	if (R.tkeys.slot) {
		uint64_t h = mix((uint64_t)node << 32 ^ (uint64_t)cls * 0x9e3779b1u ^
				 (uint64_t)account << 48);
		for (uint32_t j = (uint32_t)h & R.tkeys.mask;; j = (j + 1) & R.tkeys.mask) {
			uint32_t s = R.tkeys.slot[j];
			if (!s)
				break;
			const struct key *k = KEY(s - 1);
			if (k->node == node && k->cls == cls && k->account == account)
				return s - 1;
		}
	}
	/* Key indexes live in tags' low 32 bits, plus one. */
	uint32_t c = R.nkeys / KEY_CHUNK;
	if (c >= MAX_KEY_CHUNKS || !grow_tab(&R.tkeys))
		return NONE;
	if (!R.keys[c] && !(R.keys[c] = ag_rec_calloc(KEY_CHUNK, sizeof(struct key))))
		return NONE;
	struct key *k = KEY(R.nkeys);
	memset(k, 0, sizeof *k);
	k->node = node;
	k->cls = cls;
	k->account = account;
	insert(&R.tkeys, R.nkeys);
	return R.nkeys++;
}

uint32_t ag_rec_class(const char *sig)
{
	if (R.tclasses.slot)
		for (uint32_t j = (uint32_t)u64_fnv1a(sig, U64_FNV_BASIS) & R.tclasses.mask;;
		     j = (j + 1) & R.tclasses.mask) {
			uint32_t s = R.tclasses.slot[j];
			if (!s)
				break;
			if (!strcmp(R.classes[s - 1], sig))
				return s - 1;
		}
	size_t len = strlen(sig) + 1;
	if (R.nclasses >= 0x1fffffff || !grow_tab(&R.tclasses) ||
	    !grow_array((void **)&R.classes, R.nclasses, &R.capclasses, sizeof *R.classes))
		return NONE;
	if (!ag_rec_room(len))
		return NONE;
	char *c = malloc(len);
	if (!c) {
		R.bytes -= len;
		return NONE;
	}
	memcpy(c, sig, len);
	R.classes[R.nclasses] = c;
	insert(&R.tclasses, R.nclasses);
	return R.nclasses++;
}

static size_t method_bytes(const struct method *m)
{
	return strlen(m->cls) + strlen(m->name) + strlen(m->sig) + 4 +
	       (m->file ? strlen(m->file) : 0) + (size_t)m->nlines * sizeof *m->lines;
}

static void free_method(struct method *m)
{
	free(m->cls);
	free(m->name);
	free(m->sig);
	free(m->file);
	free(m->lines);
}

/* add_method: store m (its strings now the table's); NONE, m freed, when full. */
static uint32_t add_method(struct method *m)
{
	if (!ag_rec_room(method_bytes(m))) {
		free_method(m);
		return NONE;
	}
	if (!grow_tab(&R.tnames) || (m->id && !grow_tab(&R.tmethods)) ||
	    !grow_array((void **)&R.methods, R.nmethods, &R.capmethods, sizeof *R.methods)) {
		R.bytes -= method_bytes(m);
		free_method(m);
		return NONE;
	}
	R.methods[R.nmethods] = *m;
	insert(&R.tnames, R.nmethods);
	if (m->id)
		insert(&R.tmethods, R.nmethods);
	return R.nmethods++;
}

uint32_t ag_rec_method_named(const char *cls, const char *name, const char *sig, const char *file)
{
	uint32_t i = method_by_name(cls, name, sig);
	if (i != NONE)
		return i;
	struct method m = {0};
	m.cls = strdup(cls);
	m.name = strdup(name);
	m.sig = strdup(sig);
	m.file = file ? strdup(file) : NULL;
	if (!m.cls || !m.name || !m.sig || (file && !m.file)) {
		free_method(&m);
		return NONE;
	}
	m.account = ag_rec_account_of(m.cls);
	return add_method(&m);
}

static void free_tables(void)
{
	for (uint32_t i = 0; i < R.nmethods; i++)
		free_method(&R.methods[i]);
	for (uint32_t i = 0; i < R.nclasses; i++)
		free(R.classes[i]);
	for (uint32_t c = 0; c < MAX_KEY_CHUNKS && R.keys[c]; c++) {
		free(R.keys[c]);
		R.keys[c] = NULL;
	}
	free(R.methods);
	free(R.nodes);
	free(R.classes);
	free(R.tmethods.slot);
	free(R.tnames.slot);
	free(R.tnodes.slot);
	free(R.tkeys.slot);
	free(R.tclasses.slot);
	R.methods = NULL;
	R.nodes = NULL;
	R.classes = NULL;
	memset(&R.tmethods, 0, sizeof R.tmethods);
	memset(&R.tnames, 0, sizeof R.tnames);
	memset(&R.tnodes, 0, sizeof R.tnodes);
	memset(&R.tkeys, 0, sizeof R.tkeys);
	memset(&R.tclasses, 0, sizeof R.tclasses);
	R.nmethods = R.capmethods = R.nnodes = R.capnodes = 0;
	R.nkeys = R.nclasses = R.capclasses = 0;
	R.events = R.tracked = R.tagged = 0;
	R.freed = 0;
	R.counts_deaths = false;
	R.dropped = 0;
	R.j_dropped = 0;
	R.untracked = 0;
	R.has_mark = false;
	R.mark_ms = 0;
	R.bytes = 0;
}

/* ---- account patterns (seed 001, section 4) ---- */

static void free_patterns(void)
{
	ag_drop_patterns(R.pat, R.npat);
	R.npat = 0;
	free(R.accounts);
	R.accounts = NULL;
}


/*
 * account_of: the account of a class with JNI signature sig: the pattern
 * matching its package, an exact package pattern before a wildcard, a
 * longer wildcard before a shorter one, the first listed on ties; 0: none.
 */
uint32_t ag_rec_account_of(const char *sig)
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

/* ---- the stack of an allocation ---- */

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
	m->account = ag_rec_account_of(m->cls);
	return true;
}


/*
 * methods_of: the method indexes of n frames into mi. Called and returns
 * with the lock held; releases it to resolve methods seen for the first
 * time. A method already known by name (a bytecode site's) gets its id.
 * false when the tables are full.
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
			if (method_find(m[j].id) != NONE) {
				free_method(&m[j]);
				continue;
			}
			uint32_t named = method_by_name(m[j].cls, m[j].name, m[j].sig);
			if (named != NONE && !R.methods[named].id && grow_tab(&R.tmethods)) {
				/* A site's method: the same entry, now also found by id, with its lines. */
				struct method *k = &R.methods[named];
				k->id = m[j].id;
				insert(&R.tmethods, named);
				if (!k->lines && m[j].nlines > 0 &&
				    ag_rec_room((size_t)m[j].nlines * sizeof *m[j].lines)) {
					k->lines = m[j].lines;
					k->nlines = m[j].nlines;
					m[j].lines = NULL;
				}
				free_method(&m[j]);
				continue;
			}
			/* Another version of a known method (an obsolete one after a redefinition). */
			add_method(&m[j]);
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

bool ag_rec_frames(jvmtiEnv *e, JNIEnv *jni, const jvmtiFrameInfo *fr, int n, uint32_t *mi, int32_t *line)
{
	pthread_mutex_lock(&R.lock);
	bool ok = methods_of(e, jni, fr, n, mi);
	for (int i = 0; ok && i < n; i++)
		line[i] = line_of(&R.methods[mi[i]], fr[i].location);
	pthread_mutex_unlock(&R.lock);
	return ok;
}

static bool own_method(jmethodID id, const jmethodID *own, int nown)
{
	for (int i = 0; i < nown; i++)
		if (own[i] == id)
			return true;
	return false;
}

int ag_rec_stack_key(jvmtiEnv *e, JNIEnv *jni, uint32_t cls, uint32_t acct, const jmethodID *own,
		     int nown, uint32_t top_method, int32_t top_line, uint32_t *key)
{
	int depth = (int)R.depth, want = depth < 16 && R.npat && acct == NONE ? 16 : depth;
	jvmtiFrameInfo fr[want + 4];
	uint32_t mi[want + 4];
	jint count = 0, skip = 0;
	if ((*e)->GetStackTrace(e, NULL, 0, want + (nown ? 4 : 0), fr, &count) != JVMTI_ERROR_NONE)
		count = 0;
	while (skip < count && own_method(fr[skip].method, own, nown))
		skip++;
	for (jint i = skip; i < count; i++)
		if (own_method(fr[i].method, own, nown))
			return 1;
	jvmtiFrameInfo *f = fr + skip;
	count -= skip;
	bool full = count == want;	/* more frames may lie below */
	if (count > want)
		count = want;
	pthread_mutex_lock(&R.lock);
	if (!methods_of(e, jni, f, count, mi))
		goto full;
	bool search = acct == NONE;
	if (search)
		acct = 0;
	for (int i = 0; i < count && search && !acct; i++)
		acct = R.methods[mi[i]].account;
	/* The nearest accounted frame may be below the frames kept. */
	for (jint from = count + skip; search && !acct && R.npat && full && from < MAX_SEARCH;) {
		jvmtiFrameInfo more[CHUNK];
		uint32_t mm[CHUNK];
		jint got = 0;
		pthread_mutex_unlock(&R.lock);
		if ((*e)->GetStackTrace(e, NULL, from, CHUNK, more, &got) != JVMTI_ERROR_NONE)
			got = 0;
		pthread_mutex_lock(&R.lock);
		if (!methods_of(e, jni, more, got, mm))
			goto full;
		for (int i = 0; i < got && !acct; i++)
			acct = R.methods[mm[i]].account;
		if (got < CHUNK)
			break;
		from += got;
	}
	uint32_t parent = NONE;
	for (int i = (count < depth ? count : depth) - 1; i >= 0; i--) {
		uint32_t m = mi[i];
		int32_t line = line_of(&R.methods[m], f[i].location);
		if (i == 0 && top_method != NONE) {
			m = top_method;
			line = top_line;
		}
		parent = ag_rec_node(parent, m, line);
		if (parent == NONE)
			goto full;
	}
	if (!count && top_method != NONE && (parent = ag_rec_node(NONE, top_method, top_line)) == NONE)
		goto full;
	*key = ag_rec_key(parent, cls, acct);
	if (*key == NONE)
		goto full;
	pthread_mutex_unlock(&R.lock);
	return 0;
full:
	pthread_mutex_unlock(&R.lock);
	return -1;
}

#define CLASS_BIT (1LL << 62)	/* a class's tag in R.env: its class index */
#define ARRAY_BIT (1LL << 61)	/* ... of an array class */

uint32_t ag_rec_class_of(jvmtiEnv *e, jclass klass, bool *array)
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
	uint32_t c = ag_rec_class(sig);
	pthread_mutex_unlock(&R.lock);
	*array = sig[0] == '[';
	dealloc(e, sig);
	/* A Class object that is itself a recorded allocation keeps its object tag. */
	if (c != NONE && t == 0)
		(*e)->SetTag(e, klass, CLASS_BIT | (*array ? ARRAY_BIT : 0) | c);
	return c;
}

/* ---- starting and stopping ---- */

/* halt: stop recording allocations; the tables and what tracks live objects stay. */
static void halt(JNIEnv *jni)
{
	if (!atomic_load(&R.on))
		return;
	atomic_store(&R.on, 0);
	if (R.mech == M_BYTECODE)
		ag_bc_halt(jni);
	else
		ag_jvmti_halt();
	R.stopped_ms = ag_wall_ms();
}

/* on_gc: GarbageCollectionFinish (a GC thread; no JNI): counted, then the mechanism's own. */
static void JNICALL on_gc(jvmtiEnv *e)
{
	atomic_fetch_add(&R.gcs, 1);
	if (R.gc_next)
		R.gc_next(e);
}

bool ag_rec_env(const jvmtiCapabilities *caps, const jvmtiEventCallbacks *cb, const char *what,
		char *why, size_t cap)
{
	jvmtiEnv *e = NULL;
	if (!R.vm || (*R.vm)->GetEnv(R.vm, (void **)&e, JVMTI_VERSION_11) != JNI_OK || !e) {
		snprintf(why, cap, "this JVM offers no JVMTI 11 environment (%s needs JDK 11 or "
			 "later)", what);
		return false;
	}
	R.env = e;
	jvmtiError err = (*e)->AddCapabilities(e, caps);
	if (err != JVMTI_ERROR_NONE) {
		snprintf(why, cap, "the JVM refused the capabilities of %s (JVMTI error %d)", what, err);
		return false;
	}
	/* GCs are counted for the ages of the leak sample, the mechanism's own callback chained. */
	jvmtiCapabilities gc;
	memset(&gc, 0, sizeof gc);
	gc.can_generate_garbage_collection_events = 1;
	atomic_store(&R.gcs, 0);
	R.has_gcs = caps->can_generate_garbage_collection_events ||
		    (*e)->AddCapabilities(e, &gc) == JVMTI_ERROR_NONE;
	jvmtiEventCallbacks all = *cb;
	R.gc_next = cb->GarbageCollectionFinish;
	if (R.has_gcs)
		all.GarbageCollectionFinish = on_gc;
	(*e)->SetEventCallbacks(e, &all, sizeof all);
	if (R.has_gcs)
		(*e)->SetEventNotificationMode(e, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
	return true;
}

/* ---- the leak sample (recorder.h) ---- */

/* rnd: a thread's own xorshift64* (Vigna 2016); only the sample's choices depend on it. */
static uint64_t rnd(void)
{
	static __thread uint64_t x;
	if (!x)
		x = ((uint64_t)(uintptr_t)&x * 0x9e3779b97f4a7c15ULL) ^ ag_wall_ms() ^ 1;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	return x * 0x2545f4914f6cdd1dULL;
}

/*
 * offer_locked: under R.lock, r's dead objects let go when a GC came since
 * the last time (JNI under the lock, which cannot block: see ag_rsv_take),
 * then obj takes a free place if there is one. The weak reference is made
 * first and deleted when no place is free.
 */
static void offer_locked(JNIEnv *jni, struct rsv *r, jobject obj, uint32_t key, uint32_t gcs)
{
	jweak w = (*jni)->NewWeakGlobalRef(jni, obj);
	if (!w) {
		ag_jni_clear(jni, "NewWeakGlobalRef");
		return;
	}
	pthread_mutex_lock(&R.lock);
	if (atomic_load(&r->gen) != gcs) {
		for (uint32_t j = 0; j < RSV_K; j++)
			if (r->s[j].ref && (*jni)->IsSameObject(jni, r->s[j].ref, NULL)) {
				(*jni)->DeleteWeakGlobalRef(jni, r->s[j].ref);
				r->s[j].ref = NULL;
				atomic_fetch_add(&r->holes, 1);
			}
		atomic_store(&r->gen, gcs);
	}
	uint32_t j = 0;
	while (j < RSV_K && r->s[j].ref)
		j++;
	if (j < RSV_K) {
		r->s[j] = (struct rsv_slot){w, key, gcs};
		w = NULL;
	}
	uint32_t holes = 0;
	for (uint32_t k = 0; k < RSV_K; k++)
		holes += !r->s[k].ref;
	atomic_store(&r->holes, holes);
	pthread_mutex_unlock(&R.lock);
	if (w)
		(*jni)->DeleteWeakGlobalRef(jni, w);
}

void ag_rsv_offer(JNIEnv *jni, jobject obj, uint32_t key)
{
	uint32_t cls = KEY(key)->cls;
	if (cls >= RSV_CLASSES)
		return;
	struct rsv *chunk = atomic_load(&R.rsv[cls / RSV_CHUNK]);
	if (!chunk) {
		pthread_mutex_lock(&R.lock);
		chunk = atomic_load(&R.rsv[cls / RSV_CHUNK]);
		if (!chunk && (chunk = ag_rec_calloc(RSV_CHUNK, sizeof *chunk)))
			atomic_store(&R.rsv[cls / RSV_CHUNK], chunk);
		pthread_mutex_unlock(&R.lock);
		if (!chunk)
			return;
	}
	struct rsv *r = &chunk[cls % RSV_CHUNK];
	uint64_t n = atomic_fetch_add(&r->seen, 1) + 1;
	uint32_t gcs = atomic_load(&R.gcs);
	if (n <= RSV_K)
		atomic_fetch_add(&r->holes, 1);	/* a place never filled is free */
	if (atomic_load(&r->gen) != gcs || atomic_load(&r->holes))
		return offer_locked(jni, r, obj, key, gcs);
	uint64_t j = rnd() % n;
	if (j >= RSV_K)
		return;
	jweak w = (*jni)->NewWeakGlobalRef(jni, obj);
	if (!w) {
		ag_jni_clear(jni, "NewWeakGlobalRef");
		return;
	}
	pthread_mutex_lock(&R.lock);
	jweak old = r->s[j].ref;
	r->s[j] = (struct rsv_slot){w, key, gcs};
	pthread_mutex_unlock(&R.lock);
	if (old)
		(*jni)->DeleteWeakGlobalRef(jni, old);
}

uint32_t ag_rsv_take(JNIEnv *jni, uint32_t cls, jobject *objs, uint32_t *keys, uint32_t *ages,
		     uint32_t cap)
{
	struct rsv *chunk = cls < RSV_CLASSES ? atomic_load(&R.rsv[cls / RSV_CHUNK]) : NULL;
	if (!chunk)
		return 0;
	struct rsv_slot s[RSV_K];
	pthread_mutex_lock(&R.lock);
	memcpy(s, chunk[cls % RSV_CHUNK].s, sizeof s);
	uint32_t now = atomic_load(&R.gcs);
	/*
	 * JNI under R.lock, which cannot block: an offer deletes the reference it
	 * replaces only after taking the lock, so each one copied stays valid
	 * here; a thread waiting for the lock in an allocation hook is in native
	 * code and holds up no safepoint.
	 */
	uint32_t n = 0;
	for (uint32_t j = 0; j < RSV_K && n < cap; j++) {
		jobject o = s[j].ref ? (*jni)->NewLocalRef(jni, s[j].ref) : NULL;
		if (!o)
			continue;
		objs[n] = o;
		keys[n] = s[j].key;
		ages[n++] = now - s[j].gc;
	}
	pthread_mutex_unlock(&R.lock);
	return n;
}

void ag_rsv_drop(JNIEnv *jni)
{
	for (uint32_t c = 0; c < RSV_CLASSES / RSV_CHUNK; c++) {
		struct rsv *chunk = atomic_exchange(&R.rsv[c], NULL);
		if (!chunk)
			continue;
		for (uint32_t i = 0; jni && i < RSV_CHUNK; i++)
			for (uint32_t j = 0; j < RSV_K; j++)
				if (chunk[i].s[j].ref)
					(*jni)->DeleteWeakGlobalRef(jni, chunk[i].s[j].ref);
		free(chunk);
		atomic_fetch_sub(&R.bytes, RSV_CHUNK * sizeof *chunk);
	}
}

/* forget: the recording's environment and tables go (nothing records or follows any more). */
static void forget(void)
{
	if (R.env) {
		jvmtiEnv *e = R.env;
		R.env = NULL;
		(*e)->DisposeEnvironment(e);
	}
	/* An ObjectFree callback that began before the environment went ends before the tables do. */
	for (int k = 0; k < 2000 && atomic_load(&R.inflight) > 0; k++)
		usleep(1000);
	pthread_mutex_lock(&R.lock);
	free_tables();
	free(R.uncovered);
	R.uncovered = NULL;
	pthread_mutex_unlock(&R.lock);
	R.exists = false;
}

/* discard: drop the recording: what tracks its objects, its environment and its tables. */
static void discard(JNIEnv *jni)
{
	halt(jni);
	if (R.mech == M_BYTECODE)
		ag_bc_discard(jni);
	ag_rsv_drop(jni);
	forget();
}

/* begin: a new recording with the settings in R; why on failure. jni NULL: at start-up. */
static bool begin(JNIEnv *jni, char *why, size_t cap)
{
	R.started_ms = ag_wall_ms();
	R.stopped_ms = 0;
	bool ok = R.mech == M_BYTECODE ? ag_bc_begin(jni, why, cap) : ag_jvmti_begin(why, cap);
	if (!ok && R.mech == M_BYTECODE)
		ag_bc_discard(jni);
	if (!ok)
		forget();
	return ok;
}

bool ag_alloc_exists(void)
{
	return R.exists;
}

void ag_alloc_init(JavaVM *vm)
{
	R.vm = vm;
	R.start_fd = -1;
}

void ag_alloc_vm_init(JNIEnv *jni)
{
	if (R.exists && R.mech == M_BYTECODE)
		ag_bc_vm_init(jni);
}

void ag_alloc_vm_death(JNIEnv *jni)
{
	if (R.exists && R.mech == M_BYTECODE)
		ag_bc_vm_death(jni);
	if (R.exists && ag_debug()) {
		pthread_mutex_lock(&R.lock);
		uint64_t n = events();
		pthread_mutex_unlock(&R.lock);
		ag_log("recording: %llu %s recorded, %llu dropped, %llu bytes of tables, %u keys",
		       (unsigned long long)n, R.mech == M_SAMPLED ? "samples" : "allocations",
		       (unsigned long long)(atomic_load(&R.dropped) + R.j_dropped),
		       (unsigned long long)atomic_load(&R.bytes), R.nkeys);
	}
	if (atomic_load(&R.on)) {
		atomic_store(&R.on, 0);
		R.stopped_ms = ag_wall_ms();
	}
}


/*
 * configure: check the recording's settings and, when apply, make them the
 * recording's (no recording may be running then); why on error.
 */
static bool configure(enum mech mech, uint64_t interval, uint64_t depth, int live,
		      const char *accounts, char sep, bool apply, char *why, size_t cap)
{
	if (mech == M_SAMPLED && (interval < 1 || interval > 0x7fffffff)) {
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
	if (!ag_parse_patterns(accounts, sep, pat, &n, why, cap))
		return false;
	char *text = accounts && *accounts ? strdup(accounts) : NULL;
	if (!apply || (accounts && *accounts && !text)) {
		ag_drop_patterns(pat, n);
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
	R.mech = mech;
	R.interval = mech == M_SAMPLED ? interval : 0;
	R.depth = (uint32_t)depth;
	R.live = mech == M_BYTECODE ? live : live == LIVE_NONE ? LIVE_NONE : LIVE_ALL;
	return true;
}

bool ag_alloc_options(const char *opts)
{
	char *mode = ag_option(opts, "alloc");
	if (!mode)
		return true;
	char *acc = ag_option(opts, "accounts"), *dep = ag_option(opts, "depth"), *via = ag_option(opts, "via"),
	     *live = ag_option(opts, "live");
	uint64_t interval = 512 * 1024, depth = 0;
	char why[512] = "";
	enum mech mech = M_SAMPLED;
	bool ok = true;
	if (!strcmp(mode, "exact")) {
		mech = M_BYTECODE;
	} else if (!ag_parse_u64(mode, &interval)) {
		snprintf(why, sizeof why, "alloc=%s: say alloc=exact or alloc=BYTES (mean bytes "
			 "between samples, e.g. 512k)", mode);
		ok = false;
	}
	if (ok && via && mech == M_BYTECODE && !strcmp(via, "jvmti")) {
		mech = M_EVENTS;
	} else if (ok && via && (mech != M_BYTECODE || strcmp(via, "bytecode"))) {
		snprintf(why, sizeof why, "via=%s: say via=bytecode or via=jvmti, with alloc=exact", via);
		ok = false;
	}
	if (ok && dep && !ag_parse_u64(dep, &depth)) {
		snprintf(why, sizeof why, "depth=%s is not a number of frames", dep);
		ok = false;
	}
	int follow = LIVE_SAMPLED;
	if (ok && live && !strcmp(live, "all"))
		follow = LIVE_ALL;
	else if (ok && live && !strcmp(live, "no"))
		follow = LIVE_NONE;
	else if (ok && live && strcmp(live, "sampled")) {
		snprintf(why, sizeof why, "live=%s: say live=sampled, live=all or live=no", live);
		ok = false;
	}
	/* An exact recording counts sites by default; a sampled one keeps stacks (its walks are few). */
	if (ok && !dep)
		depth = mech == M_SAMPLED ? 64 : 1;
	R.start_fd = -1;
	ok = ok && configure(mech, interval, depth, follow, acc, ';', true, why,
			     sizeof why) &&
	     begin(NULL, why, sizeof why);
	if (!ok)
		ag_log("no allocation recording: %s", why);
	free(mode);
	free(acc);
	free(dep);
	free(via);
	free(live);
	return ok;
}

/* ---- reading ---- */

/*
 * measure: the live objects and bytes of every key, after a full GC: the
 * mechanism's walk over what tracks the recorded objects. Stores them in
 * the keys (and in the mark when mark). why on failure.
 */
static bool measure(JNIEnv *jni, bool mark, char *why, size_t cap)
{
	if (R.mech == M_BYTECODE)
		ag_sites_fold(jni, FOLD_READ);	/* buffered objects followed before the GC */
	(*R.env)->ForceGarbageCollection(R.env);
	pthread_mutex_lock(&R.lock);
	struct walk_counts w = {R.nkeys, NULL, NULL, 0};
	pthread_mutex_unlock(&R.lock);
	w.objs = calloc((size_t)w.n + 1, sizeof *w.objs);
	w.bytes = calloc((size_t)w.n + 1, sizeof *w.bytes);
	if (!w.objs || !w.bytes) {
		free(w.objs);
		free(w.bytes);
		snprintf(why, cap, "out of memory in the agent");
		return false;
	}
	bool ok = R.mech == M_BYTECODE ? ag_bc_measure(jni, &w, why, cap)
				       : ag_jvmti_measure(&w, why, cap);
	if (ok) {
		pthread_mutex_lock(&R.lock);
		for (uint32_t k = 0; k < R.nkeys; k++) {
			struct key *key = KEY(k);
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
			R.mark_ms = ag_wall_ms();
		}
		pthread_mutex_unlock(&R.lock);
	}
	free(w.objs);
	free(w.bytes);
	return ok;
}

/* events: allocations recorded, samples in sampled mode; the lock is held. */
static uint64_t events(void)
{
	uint64_t n = R.events;
	for (uint32_t k = 0; k < R.nkeys; k++)
		n += atomic_load_explicit(&KEY(k)->n_objs, memory_order_relaxed) + KEY(k)->j_objs;
	return n;
}

bool ag_rec_starting(uint32_t done, uint32_t total)
{
	if (R.start_fd < 0)
		return true;
	struct wire_w b = {0};
	wire_put32(&b, done);
	wire_put32(&b, total);
	bool ok = ag_send_frame(R.start_fd, T_DATA, &b);
	wire_w_free(&b);
	return ok && !ag_cancel_waiting(R.start_fd);
}

/* uncovered: R.uncovered made again from the threads' stacks now (bytecode, recording). */
static void uncovered(JNIEnv *jni)
{
	char *u = R.exists && R.mech == M_BYTECODE && atomic_load(&R.on) && jni ? ag_bc_uncovered(jni)
									     : NULL;
	pthread_mutex_lock(&R.lock);
	free(R.uncovered);
	R.uncovered = u;
	pthread_mutex_unlock(&R.lock);
}

/* put_status: the status fields (docs/protocol.md, ALLOC_STATUS); the lock is held. */
static void put_status(struct wire_w *b)
{
	uint64_t instrumented = 0, failed = 0;
	if (R.exists && R.mech == M_BYTECODE)
		ag_bc_status(&instrumented, &failed);
	wire_put8(b, (uint8_t)((R.exists ? 1 : 0) | (atomic_load(&R.on) ? 2 : 0) |
			       (R.exists && R.mech != M_SAMPLED ? 4 : 0) | (R.has_mark ? 8 : 0) |
			       (R.exists && R.mech == M_BYTECODE ? 16 : 0) |
			       (R.exists && R.live == LIVE_NONE ? 32 : 0) |
			       (R.exists && R.live == LIVE_SAMPLED ? 64 : 0)));
	wire_put64(b, R.interval);
	wire_put32(b, R.depth);
	wire_put64(b, R.started_ms);
	wire_put64(b, R.stopped_ms);
	wire_put64(b, events());
	wire_put64(b, atomic_load(&R.dropped) + R.j_dropped);
	wire_put64(b, atomic_load(&R.bytes));
	wire_put64(b, R.tracked);
	wire_put64(b, R.mark_ms);
	wire_put_str(b, R.exists ? R.accounts : NULL);
	wire_put64(b, instrumented);
	wire_put64(b, failed);
	wire_put64(b, atomic_load(&R.untracked));
	wire_put_str(b, R.exists ? R.uncovered : NULL);
	uint64_t missed = 0, seen = 0;
	if (R.exists && R.mech == M_BYTECODE)
		ag_bc_missed(&missed, &seen);
	wire_put64(b, missed);
	wire_put64(b, seen);
}

static bool send_status(int fd, uint8_t type)
{
	struct wire_w b = {0};
	pthread_mutex_lock(&R.lock);
	put_status(&b);
	pthread_mutex_unlock(&R.lock);
	bool ok = ag_send_frame(fd, type, &b);
	wire_w_free(&b);
	return ok;
}

enum { A_STATUS = 1, A_ACCOUNT, A_CLASS, A_METHOD, A_NODE, A_KEY };

/* send_recording: the whole recording as DATA frames and an END (docs/protocol.md, ALLOC_READ). */
static bool send_recording(int fd)
{
	struct wire_w b = {0};
	uint64_t records = 0;
	pthread_mutex_lock(&R.lock);
	wire_put8(&b, A_STATUS);
	put_status(&b);
	for (int i = 0; i < R.npat; i++, records++) {
		wire_put8(&b, A_ACCOUNT);
		wire_put_str(&b, R.pat[i].text);
	}
	for (uint32_t i = 0; i < R.nclasses; i++, records++) {
		wire_put8(&b, A_CLASS);
		wire_put_str(&b, R.classes[i]);
	}
	for (uint32_t i = 0; i < R.nmethods; i++, records++) {
		const struct method *m = &R.methods[i];
		wire_put8(&b, A_METHOD);
		wire_put_str(&b, m->cls);
		wire_put_str(&b, m->name);
		wire_put_str(&b, m->sig);
		wire_put_str(&b, m->file);
		wire_put32(&b, m->account);
	}
	for (uint32_t i = 0; i < R.nnodes; i++, records++) {
		wire_put8(&b, A_NODE);
		wire_put32(&b, R.nodes[i].parent);
		wire_put32(&b, R.nodes[i].method);
		wire_put32(&b, (uint32_t)R.nodes[i].line);
	}
	for (uint32_t i = 0; i < R.nkeys; i++, records++) {
		struct key *k = KEY(i);
		wire_put8(&b, A_KEY);
		wire_put32(&b, k->node);
		wire_put32(&b, k->cls);
		wire_put32(&b, k->account);
		wire_put_f64(&b, k->objs +
				 (double)atomic_load_explicit(&k->n_objs, memory_order_relaxed) +
				 (double)k->j_objs);
		wire_put_f64(&b, k->bytes +
				 (double)atomic_load_explicit(&k->n_bytes, memory_order_relaxed) +
				 (double)k->j_bytes);
		wire_put_f64(&b, k->live_objs);
		wire_put_f64(&b, k->live_bytes);
		wire_put_f64(&b, k->elems +
				 (double)atomic_load_explicit(&k->n_elems, memory_order_relaxed) +
				 (double)k->j_elems);
		wire_put_f64(&b, k->mark_objs);
		wire_put_f64(&b, k->mark_bytes);
	}
	pthread_mutex_unlock(&R.lock);
	if (b.err) {
		wire_w_free(&b);
		return ag_send_error(fd, "out of memory in the agent while sending the recording");
	}
	/* Sent outside the lock: a slow reader never holds up allocating threads. */
	bool ok = true;
	for (size_t off = 0; ok && off < b.len;) {
		size_t n = b.len - off < (1u << 20) ? b.len - off : (1u << 20);
		ok = ag_send_raw(fd, T_DATA, b.p + off, n);
		off += n;
	}
	wire_w_free(&b);
	if (!ok)
		return false;
	struct wire_w end = {0};
	wire_put64(&end, records + 1);
	ok = ag_send_frame(fd, T_END, &end);
	wire_w_free(&end);
	return ok;
}

bool ag_alloc_request(int fd, JNIEnv *env, uint8_t type, struct wire_r *r)
{
	char why[512] = "";
	if (type == T_ALLOC_START) {
		uint8_t flags = wire_get8(r);
		uint64_t interval = wire_get64(r);
		uint32_t depth = wire_get32(r);
		char *acc = wire_get_strdup(r, MAX_REQUEST);
		if (!wire_done(r)) {
			free(acc);
			return false;
		}
		enum mech mech = !(flags & 1) ? M_SAMPLED : (flags & 2) ? M_EVENTS : M_BYTECODE;
		/* Checked first: a typo neither meets "already running" nor costs a stopped recording. */
		int live = flags & 4 ? LIVE_NONE : flags & 16 ? LIVE_ALL : LIVE_SAMPLED;
		bool ok = configure(mech, interval, depth, live, acc, ',', false, why, sizeof why);
		if (ok && atomic_load(&R.on)) {
			free(acc);
			return ag_send_error(fd, "a recording is already running (:alloc stop "
					     "or :alloc reset first)");
		}
		if (ok) {
			discard(env);	/* a stopped recording gives way to the new one */
			R.start_fd = flags & 8 ? fd : -1;
			ok = configure(mech, interval, depth, live, acc, ',', true, why, sizeof why) &&
			     begin(env, why, sizeof why);
			R.start_fd = -1;
			if (ok)
				uncovered(env);
		}
		free(acc);
		return ok ? send_status(fd, T_ALLOC_START) : ag_send_error(fd, "%s", why);
	}
	if (wire_left(r))
		return false;
	if (R.exists && R.mech == M_BYTECODE && atomic_load(&R.on) && type == T_ALLOC_STATUS)
		ag_sites_fold(env, FOLD_READ);
	if (type == T_ALLOC_STATUS || type == T_ALLOC_READ || type == T_ALLOC_MARK)
		uncovered(env);
	if (type == T_ALLOC_STATUS)
		return send_status(fd, type);
	if (!R.exists)
		return ag_send_error(fd, "this JVM has no allocation recording; start one "
				     "with :alloc start");
	switch (type) {
	case T_ALLOC_STOP:
		halt(env);
		return send_status(fd, type);
	case T_ALLOC_RESET: {
		bool was_on = atomic_load(&R.on);
		discard(env);
		if (was_on && !begin(env, why, sizeof why))
			return ag_send_error(fd, "%s", why);
		return send_status(fd, type);
	}
	case T_ALLOC_MARK:
		if (!measure(env, true, why, sizeof why))
			return ag_send_error(fd, "%s", why);
		return send_status(fd, type);
	case T_ALLOC_READ:
		if (!measure(env, false, why, sizeof why))
			return ag_send_error(fd, "%s", why);
		return send_recording(fd);
	default:
		return false;
	}
}
