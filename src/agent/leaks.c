/*
 * leaks.c - the agent's ALLOC_LEAKS request (docs/protocol.md; `:alloc leaks`
 * in a running JVM): paths from GC roots to the leak sample of chosen
 * classes (recorder.h: the recording's followed objects ag_rsv_offer kept),
 * found inside the JVM without a heap dump, in one FollowReferences walk.
 *
 * Why one walk, and what it walks (docs/agent.md, "Leaks in a running
 * JVM"). Between callbacks JVMTI knows an object only by a tag, and a tag
 * costs 1-2 us: tagging the 10.6 M objects of a 1 GB heap took 12 s on JDK
 * 17 and 24 s on JDK 25, where HotSpot's heap dump paused it 1.8 s and a
 * walk that tags nothing 0.6-0.8 s. A search backwards from the sampled
 * objects needs a whole walk per link. So the one walk tags, with the link
 * it came by, only objects that can lie on a path to a sampled object, and
 * does not go past the others: an object can when its class declares an
 * instance field (or, for an array class, an element type) whose type
 * admits a class that can, or a sampled class itself (a least fixed point
 * over the loaded classes' declared field types, from the sampled classes
 * up), kept near the objects that matter by the heap's instance counts
 * (closure()). Class objects are always walked (their static fields start paths);
 * java.lang.String is not (its byte[] is no leak's holder), nor the
 * referent of a java.lang.ref.Reference (it holds nothing alive). The
 * first path the walk meets to a sampled object is its path (HotSpot walks
 * depth first: a path, not always the shortest, as MAT's "merge shortest
 * paths" would give). The tags live in an environment of the request's own,
 * disposed at the end: nothing is left in the JVM.
 *
 * Bounds: nodes (tagged objects) by a budget, 5 % of the heap's objects
 * within the request's memory limit, the classes searched by what could
 * hold them (ag_leaks_request); the walk's time by its time limit (the
 * walk is aborted, a pause no longer than it),
 * Ctrl-C (CANCEL) looked for every 65,536 references; a path is kept up to
 * MAX_STEPS links from its object, the rest counted as left out.
 */
#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"
#include "../base/classname.h"
#include "../base/u64map.h"

#define CLS_BIT (1LL << 62)	/* a class's tag: CLS_BIT | index + 1 */
#define NODE_BIT (1LL << 61)	/* a walked object's tag: NODE_BIT | node + 1 */
#define SELF_TAG (1LL << 60)	/* the agent's own thread */
#define LOW(t) ((uint32_t)((t) & 0xffffffffLL))

#define UNSET 0xffffffffu	/* a sampled object not reached (yet) */
#define P_UNKNOWN 0xfffffffeu	/* reached from an object walked without a tag */
#define P_CLASS 0x80000000u	/* | class: a static field of that class */
#define P_ROOT 0x40000000u	/* | root: a GC root (roots[]) */
#define MAX_NODES (1u << 30)
#define MAX_ROOTS (1u << 20)
#define MAX_STEPS 256
#define MAX_CLASSES_ASKED 64
#define NODE_COST 96		/* bytes a node costs: ours and the JVM's tag map entry */

/* A loaded class, as the fixed point and the paths need it. */
struct lcls {
	jclass k;		/* local reference */
	char *sig;		/* JNI signature (a copy) */
	uint32_t sid;		/* its signature's number */
	uint32_t *sup, nsup;	/* signatures it is assignable to (itself included) */
	uint32_t *ft, nft;	/* declared types of its instance reference fields (arrays: element) */
	int32_t referent;	/* JVMTI index of Reference.referent, -1: not a Reference */
	bool reach;		/* an instance can lie on a path to a sampled object */
	bool iface;		/* an interface */
	uint64_t live;		/* instances in the heap (count_cb), UINT64_MAX: not counted */
	char **names;		/* field names by JVMTI index (made for the paths), NULL: not yet */
	uint32_t nnames;
};

/* A walked (tagged) object: the link it was reached by. */
struct lnode {
	uint32_t parent;	/* node, P_CLASS | class, P_ROOT | root, P_UNKNOWN, UNSET */
	uint32_t cls;		/* its class, UINT32_MAX: a class loaded after the walk began */
	int32_t index;		/* field index or array index of the link; -1 */
	uint8_t kind;		/* jvmtiHeapReferenceKind of the link */
};

struct lroot {
	uint8_t kind;
	jmethodID method;	/* stack and JNI locals: the frame's method, or NULL */
};

struct walk {
	int fd;
	struct lcls *c;
	uint32_t nc, class_class;	/* java.lang.Class's index */
	uint32_t string_class;
	struct lnode *nodes;
	uint32_t n, cap;	/* nodes; the first ntarget are the sampled objects */
	uint32_t ntarget, reached;
	struct lroot *roots;
	uint32_t nroots;
	uint64_t refs, cut;	/* references seen; objects not walked for the memory limit */
	int64_t deadline;
	int stop;		/* 0, or why the walk was aborted: 1 time, 2 cancelled */
	bool oom;
};

/* ---- signatures ---- */

struct sigtab {
	char **s;		/* by number */
	uint32_t n, cap;
	uint32_t *slot;		/* open addressing: number + 1, 0 empty */
	uint32_t mask;
};

/* sig_id: the number of signature s (copied when new); UINT32_MAX when out of memory. */
static uint32_t sig_id(struct sigtab *t, const char *s)
{
	if (2 * (t->n + 1) > t->mask) {
		uint32_t m = t->mask ? 2 * t->mask + 1 : 1023;
		uint32_t *slot = calloc((size_t)m + 1, sizeof *slot);
		if (!slot)
			return UINT32_MAX;
		for (uint32_t i = 0; i < t->n; i++) {
			uint32_t h = (uint32_t)u64_fnv1a(t->s[i], U64_FNV_BASIS) & m;
			while (slot[h])
				h = (h + 1) & m;
			slot[h] = i + 1;
		}
		free(t->slot);
		t->slot = slot;
		t->mask = m;
	}
	uint32_t h = (uint32_t)u64_fnv1a(s, U64_FNV_BASIS) & t->mask;
	for (; t->slot[h]; h = (h + 1) & t->mask)
		if (!strcmp(t->s[t->slot[h] - 1], s))
			return t->slot[h] - 1;
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 1024;
		char **g = realloc(t->s, (size_t)cap * sizeof *g);
		if (!g)
			return UINT32_MAX;
		t->s = g;
		t->cap = cap;
	}
	char *copy = strdup(s);
	if (!copy)
		return UINT32_MAX;
	t->s[t->n] = copy;
	t->slot[h] = t->n + 1;
	return t->n++;
}

/* sig_find: the number of signature s, UINT32_MAX when it has none. */
static uint32_t sig_find(const struct sigtab *t, const char *s)
{
	if (!t->mask)
		return UINT32_MAX;
	for (uint32_t h = (uint32_t)u64_fnv1a(s, U64_FNV_BASIS) & t->mask; t->slot[h]; h = (h + 1) & t->mask)
		if (!strcmp(t->s[t->slot[h] - 1], s))
			return t->slot[h] - 1;
	return UINT32_MAX;
}

static void sig_free(struct sigtab *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->slot);
}

/* add_id: v to the set a (n used, *cap room) unless there; false when out of memory. */
/*
 * hidden_suffix: name with a hidden class's suffix written one way
 * (Foo$$Lambda+0x01: the heap dump's and the shell's histogram's; JVMTI
 * signatures give Foo$$Lambda.0x01), changed in place; name.
 */
static char *hidden_suffix(char *name)
{
	char *x = strstr(name, ".0x");
	if (!x)
		x = strstr(name, "/0x");
	if (x)
		*x = '+';
	return name;
}

static bool add_id(uint32_t **a, uint32_t *n, uint32_t *cap, uint32_t v)
{
	for (uint32_t i = 0; i < *n; i++)
		if ((*a)[i] == v)
			return true;
	if (*n == *cap) {
		uint32_t c = *cap ? 2 * *cap : 8;
		uint32_t *g = realloc(*a, (size_t)c * sizeof *g);
		if (!g)
			return false;
		*a = g;
		*cap = c;
	}
	(*a)[(*n)++] = v;
	return true;
}

/* ---- the loaded classes: supertypes and declared field types ---- */

/* supers_of: the signatures k (not an array) is assignable to, into c->sup. */
static bool supers_of(jvmtiEnv *e, JNIEnv *jni, struct sigtab *st, struct lcls *c)
{
	uint32_t cap = 0;
	jclass todo[256];
	int nt = 0;
	todo[nt++] = (*jni)->NewLocalRef(jni, c->k);
	bool ok = true;
	while (nt > 0 && ok) {
		jclass k = todo[--nt];
		char *sig = NULL;
		if ((*e)->GetClassSignature(e, k, &sig, NULL) == JVMTI_ERROR_NONE && sig) {
			uint32_t id = sig_id(st, sig);
			ok = id != UINT32_MAX && add_id(&c->sup, &c->nsup, &cap, id);
			(*e)->Deallocate(e, (unsigned char *)sig);
		}
		jclass s = (*jni)->GetSuperclass(jni, k);
		if (s && nt < 256)
			todo[nt++] = s;
		jint ni = 0;
		jclass *ifs = NULL;
		if ((*e)->GetImplementedInterfaces(e, k, &ni, &ifs) == JVMTI_ERROR_NONE) {
			for (jint i = 0; i < ni; i++) {
				if (nt < 256)
					todo[nt++] = ifs[i];
				else
					(*jni)->DeleteLocalRef(jni, ifs[i]);
			}
			(*e)->Deallocate(e, (unsigned char *)ifs);
		}
		(*jni)->DeleteLocalRef(jni, k);
	}
	while (nt > 0)
		(*jni)->DeleteLocalRef(jni, todo[--nt]);
	uint32_t obj = sig_id(st, "Ljava/lang/Object;");	/* interfaces are Objects too */
	return ok && obj != UINT32_MAX && add_id(&c->sup, &c->nsup, &cap, obj);
}

struct ftctx {
	struct sigtab *st;
	struct lcls *c;
	uint32_t cap;
	bool ok;
};

static void field_type(void *ctx, jint index, jfieldID fid, const char *declaring, const char *name,
		       const char *sig, bool is_static)
{
	(void)fid;
	struct ftctx *x = ctx;
	if (is_static || (sig[0] != 'L' && sig[0] != '['))
		return;
	if (!strcmp(declaring, "Ljava/lang/ref/Reference;") && !strcmp(name, "referent")) {
		x->c->referent = index;
		return;
	}
	uint32_t id = sig_id(x->st, sig);
	x->ok = x->ok && id != UINT32_MAX && add_id(&x->c->ft, &x->c->nft, &x->cap, id);
}

struct ntctx {
	struct lcls *c;
};

static void field_name(void *ctx, jint index, jfieldID fid, const char *declaring, const char *name,
		       const char *sig, bool is_static)
{
	struct lcls *c = ((struct ntctx *)ctx)->c;
	(void)fid;
	(void)declaring;
	(void)sig;
	(void)is_static;
	if (index < 0 || (uint32_t)index >= c->nnames)
		return;
	free(c->names[index]);
	c->names[index] = strdup(name);
}

/* name_of: the name of field index of class c ("?" when unknown); made on first use. */
static const char *name_of(jvmtiEnv *e, JNIEnv *jni, struct lcls *c, int32_t index)
{
	if (!c->names) {
		c->nnames = 4096;
		c->names = calloc(c->nnames, sizeof *c->names);
		if (!c->names)
			return "?";
		struct ntctx x = {c};
		ag_chain_fields(e, jni, c->k, field_name, &x);
	}
	return index >= 0 && (uint32_t)index < c->nnames && c->names[index] ? c->names[index] : "?";
}

/*
 * classes: the loaded classes into w->c, tagged CLS_BIT | index + 1 in e,
 * with supertypes and field types; false (why) when the JVM or memory fails.
 */
static bool classes(jvmtiEnv *e, JNIEnv *jni, struct walk *w, struct sigtab *st, char *why, size_t cap)
{
	jint n = 0;
	jclass *ks = NULL;
	if ((*e)->GetLoadedClasses(e, &n, &ks) != JVMTI_ERROR_NONE) {
		snprintf(why, cap, "GetLoadedClasses failed");
		return false;
	}
	w->c = calloc((size_t)n + 1, sizeof *w->c);
	if (!w->c) {
		for (jint i = 0; i < n; i++)
			(*jni)->DeleteLocalRef(jni, ks[i]);
		(*e)->Deallocate(e, (unsigned char *)ks);
		snprintf(why, cap, "out of memory in the agent");
		return false;
	}
	w->nc = (uint32_t)n;
	w->class_class = w->string_class = UINT32_MAX;
	bool ok = true;
	for (uint32_t i = 0; i < w->nc; i++) {
		struct lcls *c = &w->c[i];
		c->k = ks[i];
		c->referent = -1;
		(*e)->SetTag(e, c->k, CLS_BIT | (i + 1));
		char *sig = NULL;
		if ((*e)->GetClassSignature(e, c->k, &sig, NULL) != JVMTI_ERROR_NONE || !sig)
			continue;
		c->sig = strdup(sig);
		(*e)->Deallocate(e, (unsigned char *)sig);
		if (!c->sig) {
			ok = false;
			continue;
		}
		c->sid = sig_id(st, c->sig);
		jint mods = 0;
		c->iface = (*e)->GetClassModifiers(e, c->k, &mods) == JVMTI_ERROR_NONE && (mods & 0x0200);
		ok = ok && c->sid != UINT32_MAX;
		if (!strcmp(c->sig, "Ljava/lang/Class;"))
			w->class_class = i;
		else if (!strcmp(c->sig, "Ljava/lang/String;"))
			w->string_class = i;
	}
	(*e)->Deallocate(e, (unsigned char *)ks);
	/* Plain classes first: an array's supertypes follow its element's. */
	for (uint32_t i = 0; ok && i < w->nc; i++) {
		struct lcls *c = &w->c[i];
		if (!c->sig || c->sig[0] == '[')
			continue;
		ok = supers_of(e, jni, st, c);
		struct ftctx x = {st, c, 0, true};
		ag_chain_fields(e, jni, c->k, field_type, &x);
		ok = ok && x.ok;
	}
	/* Arrays, fewest dimensions first: [X is assignable to Object, Cloneable,
	 * Serializable and [S for each S that X is assignable to (JLS 4.10.3). */
	for (int dims = 1; ok && dims < 256; dims++) {
		bool any = false;
		for (uint32_t i = 0; ok && i < w->nc; i++) {
			struct lcls *c = &w->c[i];
			if (!c->sig || strspn(c->sig, "[") != (size_t)dims)
				continue;
			any = true;
			uint32_t scap = 0, fcap = 0;
			static const char *const base[] = {"Ljava/lang/Object;", "Ljava/lang/Cloneable;",
							   "Ljava/io/Serializable;"};
			ok = add_id(&c->sup, &c->nsup, &scap, c->sid);
			for (int b = 0; ok && b < 3; b++) {
				uint32_t id = sig_id(st, base[b]);
				ok = id != UINT32_MAX && add_id(&c->sup, &c->nsup, &scap, id);
			}
			const char *elem = c->sig + 1;
			if (elem[0] != 'L' && elem[0] != '[')
				continue;	/* a primitive array holds no reference */
			uint32_t eid = sig_id(st, elem);
			ok = ok && eid != UINT32_MAX && add_id(&c->ft, &c->nft, &fcap, eid);
			for (uint32_t j = 0; ok && j < w->nc; j++) {
				struct lcls *x = &w->c[j];
				if (!x->sig || x->sid != eid)
					continue;
				for (uint32_t s = 0; ok && s < x->nsup; s++) {
					const char *ss = st->s[x->sup[s]];
					size_t len = strlen(ss);
					char *arr = malloc(len + 2);
					if (!arr) {
						ok = false;
						break;
					}
					arr[0] = '[';
					memcpy(arr + 1, ss, len + 1);
					uint32_t id = sig_id(st, arr);
					free(arr);
					ok = id != UINT32_MAX && add_id(&c->sup, &c->nsup, &scap, id);
				}
				break;
			}
		}
		if (!any)
			break;
	}
	if (!ok)
		snprintf(why, cap, "out of memory in the agent");
	return ok;
}

/* count_cb: IterateThroughHeap: one more instance of its class. */
static jint JNICALL count_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud)
{
	struct walk *w = ud;
	(void)size;
	(void)tag_ptr;
	(void)length;
	if ((class_tag & CLS_BIT) && LOW(class_tag) - 1 < w->nc)
		w->c[LOW(class_tag) - 1].live++;
	return 0;
}

/*
 * closure: which classes' instances can lie on a path to an instance of
 * the class with signature sid, into in[] (one byte per class; weight[],
 * one per signature, is scratch): the least fixed point of "has instances
 * and declares a reference field (arrays: an element type) that can hold an
 * object of a class that can, or of the sampled class"; java.lang.String
 * is left out. Two uses of the instance counts (count_cb) keep the closure
 * near the objects that matter: a class with no instance holds nothing,
 * whatever its fields say (a database's unused value types); and a field
 * of a named class type (not Object, an interface or an array of those:
 * generic[]) counts only when the objects it could point to are at least a
 * hundredth as many as the class's instances, so that two million values
 * sharing a hundred type descriptors are not walked for the descriptors'
 * sake (the descriptors are reached from elsewhere; when they are not,
 * their objects are reported not reached). weight[s]: the instances of
 * the classes in the closure assignable to signature s. The closure of
 * several classes is the union of theirs.
 */
static void closure(const struct walk *w, const struct sigtab *st, uint32_t sid, const uint8_t *generic,
		    uint8_t *in, uint64_t *weight)
{
	memset(in, 0, w->nc);
	memset(weight, 0, st->n * sizeof *weight);
	for (uint32_t i = 0; i < w->nc; i++)
		if (w->c[i].sig && w->c[i].sid == sid)
			for (uint32_t s = 0; s < w->c[i].nsup; s++)
				weight[w->c[i].sup[s]] += w->c[i].live == UINT64_MAX ? 1 : w->c[i].live + 1;
	for (bool changed = true; changed;) {
		changed = false;
		for (uint32_t i = 0; i < w->nc; i++) {
			const struct lcls *c = &w->c[i];
			if (in[i] || !c->sig || i == w->string_class || !c->live)
				continue;
			uint64_t need = c->live == UINT64_MAX ? 1 : c->live / 100 + 1;
			for (uint32_t f = 0; f < c->nft && !in[i]; f++)
				in[i] = weight[c->ft[f]] && (generic[c->ft[f]] || weight[c->ft[f]] >= need);
			if (!in[i])
				continue;
			changed = true;
			for (uint32_t s = 0; s < c->nsup; s++)
				weight[c->sup[s]] += c->live == UINT64_MAX ? 1 : c->live;
		}
	}
}

/* debug_closure: the five classes of most instances in a closure (HEAPSH_AGENT_DEBUG). */
static void debug_closure(const struct walk *w, const char *sig, const uint8_t *in, uint64_t cost)
{
	uint32_t top[5];
	int nt = 0;
	for (uint32_t i = 0; i < w->nc; i++) {
		if (!in[i] || w->c[i].live == UINT64_MAX)
			continue;
		int k;
		if (nt < 5)
			k = nt++;
		else if (w->c[top[4]].live < w->c[i].live)
			k = 4;
		else
			continue;
		top[k] = i;
		for (; k > 0 && w->c[top[k - 1]].live < w->c[top[k]].live; k--) {
			uint32_t t = top[k];
			top[k] = top[k - 1];
			top[k - 1] = t;
		}
	}
	char line[1024];
	int len = snprintf(line, sizeof line, "leaks: %s: %llu objects could hold it:", sig,
			   (unsigned long long)cost);
	for (int k = 0; k < nt && len > 0 && (size_t)len < sizeof line; k++)
		len += snprintf(line + len, sizeof line - (size_t)len, " %s %llu", w->c[top[k]].sig,
				(unsigned long long)w->c[top[k]].live);
	ag_log("%s", line);
}

/* ---- the walk ---- */

static bool over(struct walk *w)
{
	if (w->stop)
		return true;
	if (ag_now_ms() > w->deadline)
		w->stop = 1;
	else if ((w->refs & 65535) == 0 && ag_cancel_waiting(w->fd))
		w->stop = 2;
	return w->stop != 0;
}

/* link: node nd was reached by this reference: its parent and the link's kind and index. */
static void link(struct walk *w, struct lnode *nd, jvmtiHeapReferenceKind kind,
		 const jvmtiHeapReferenceInfo *info, const jlong *referrer_tag_ptr)
{
	nd->kind = (uint8_t)kind;
	nd->index = kind == JVMTI_HEAP_REFERENCE_FIELD || kind == JVMTI_HEAP_REFERENCE_STATIC_FIELD
			    ? info->field.index
		    : kind == JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT ? info->array.index
								  : -1;
	if (!referrer_tag_ptr) {
		if (w->nroots >= MAX_ROOTS) {
			nd->parent = P_UNKNOWN;
			return;
		}
		if ((w->nroots & (w->nroots - 1)) == 0 && w->nroots >= 64) {
			struct lroot *g = realloc(w->roots, (size_t)w->nroots * 2 * sizeof *g);
			if (!g) {
				nd->parent = P_UNKNOWN;
				return;
			}
			w->roots = g;
		}
		jmethodID m = kind == JVMTI_HEAP_REFERENCE_STACK_LOCAL ? info->stack_local.method
			      : kind == JVMTI_HEAP_REFERENCE_JNI_LOCAL ? info->jni_local.method
								       : NULL;
		w->roots[w->nroots] = (struct lroot){(uint8_t)kind, m};
		nd->parent = P_ROOT | w->nroots++;
		return;
	}
	jlong rt = *referrer_tag_ptr;
	if ((rt & CLS_BIT) && LOW(rt) - 1 < w->nc)
		nd->parent = P_CLASS | (LOW(rt) - 1);
	else if ((rt & NODE_BIT) && LOW(rt) - 1 < w->n)
		nd->parent = LOW(rt) - 1;
	else
		nd->parent = P_UNKNOWN;
}

/*
 * on_stack: parent is a thread's stack or JNI local. HotSpot reports the
 * threads' stacks with the roots, before it walks, so an object a running
 * method holds in a local is first met from there; met again from a static
 * field, as a root of another kind (a thread, a JNI global), or from an
 * object whose own chain starts so (off_stack), it takes that link: what
 * holds it for longer than the method runs.
 */
static bool on_stack(const struct walk *w, uint32_t parent)
{
	if (parent == UNSET || parent == P_UNKNOWN || (parent & P_CLASS) || !(parent & P_ROOT))
		return false;
	uint8_t k = w->roots[parent & ~P_ROOT].kind;
	return k == JVMTI_HEAP_REFERENCE_STACK_LOCAL || k == JVMTI_HEAP_REFERENCE_JNI_LOCAL;
}

/*
 * off_stack: node p's chain starts at a static field or at a root other
 * than a thread's local, and does not pass through node self (a link from
 * p to self then makes no cycle). At most 256 links are followed.
 */
static bool off_stack(const struct walk *w, uint32_t p, uint32_t self)
{
	for (int k = 0; k < 256; k++) {
		if (p == self || p == UNSET || p == P_UNKNOWN)
			return false;
		if (p & P_CLASS)
			return true;
		if (p & P_ROOT)
			return !on_stack(w, p);
		if (p >= w->n)
			return false;
		p = w->nodes[p].parent;
	}
	return false;
}

static jint JNICALL on_ref(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			   jlong class_tag, jlong referrer_class_tag, jlong size, jlong *tag_ptr,
			   jlong *referrer_tag_ptr, jint length, void *ud)
{
	struct walk *w = ud;
	(void)size;
	(void)length;
	if ((++w->refs & 4095) == 0 && over(w))
		return JVMTI_VISIT_ABORT;
	jlong tag = *tag_ptr;
	if (tag & CLS_BIT)
		return JVMTI_VISIT_OBJECTS;	/* a Class: its static fields start paths */
	if ((kind == JVMTI_HEAP_REFERENCE_JNI_LOCAL && info->jni_local.thread_tag == SELF_TAG) ||
	    (kind == JVMTI_HEAP_REFERENCE_STACK_LOCAL && info->stack_local.thread_tag == SELF_TAG))
		return 0;	/* what the agent holds right now */
	uint32_t ci = (class_tag & CLS_BIT) && LOW(class_tag) - 1 < w->nc ? LOW(class_tag) - 1 : UINT32_MAX;
	if (ci != UINT32_MAX && ci == w->class_class)
		return JVMTI_VISIT_OBJECTS;	/* a class loaded after the walk began */
	if (kind == JVMTI_HEAP_REFERENCE_FIELD && (referrer_class_tag & CLS_BIT) &&
	    LOW(referrer_class_tag) - 1 < w->nc &&
	    w->c[LOW(referrer_class_tag) - 1].referent == info->field.index)
		return 0;	/* a weak, soft or phantom reference's referent */
	bool walks = ci == UINT32_MAX || w->c[ci].reach;
	if (tag & NODE_BIT) {
		uint32_t id = LOW(tag) - 1;
		if (id < w->n && on_stack(w, w->nodes[id].parent)) {
			bool better = kind == JVMTI_HEAP_REFERENCE_STATIC_FIELD ||
				      (!referrer_tag_ptr ? kind != JVMTI_HEAP_REFERENCE_STACK_LOCAL &&
							   kind != JVMTI_HEAP_REFERENCE_JNI_LOCAL
							 : (*referrer_tag_ptr & NODE_BIT) &&
							   off_stack(w, LOW(*referrer_tag_ptr) - 1, id));
			if (better)	/* a static field, a thread, or an object held so, first */
				link(w, &w->nodes[id], kind, info, referrer_tag_ptr);
		}
		if (id >= w->ntarget || id >= w->n || w->nodes[id].parent != UNSET)
			return 0;	/* met before: walked or about to be */
		link(w, &w->nodes[id], kind, info, referrer_tag_ptr);
		w->reached++;
		return walks ? JVMTI_VISIT_OBJECTS : 0;
	}
	if (tag || !walks)
		return 0;
	if (w->n >= w->cap) {
		w->cut++;
		return 0;
	}
	uint32_t id = w->n++;
	w->nodes[id] = (struct lnode){UNSET, ci, -1, 0};
	link(w, &w->nodes[id], kind, info, referrer_tag_ptr);
	*tag_ptr = NODE_BIT | (id + 1);
	return JVMTI_VISIT_OBJECTS;
}

/* ---- the reply ---- */

static const char *root_name(uint8_t kind)
{
	switch (kind) {
	case JVMTI_HEAP_REFERENCE_JNI_GLOBAL: return "JNI global";
	case JVMTI_HEAP_REFERENCE_SYSTEM_CLASS: return "system class";
	case JVMTI_HEAP_REFERENCE_MONITOR: return "busy monitor";
	case JVMTI_HEAP_REFERENCE_STACK_LOCAL: return "Java local";
	case JVMTI_HEAP_REFERENCE_JNI_LOCAL: return "JNI local";
	case JVMTI_HEAP_REFERENCE_THREAD: return "thread";
	default: return "other root";
	}
}

/* root_label: what a path starts from, into out. */
static void root_label(jvmtiEnv *e, JNIEnv *jni, const struct walk *w, uint32_t parent, char *out, size_t cap)
{
	if (parent == P_UNKNOWN) {
		snprintf(out, cap, "unknown holder");
	} else if (parent & P_CLASS) {
		snprintf(out, cap, "static field");
	} else {
		const struct lroot *r = &w->roots[parent & ~P_ROOT];
		char *name = NULL, *csig = NULL;
		jclass k = NULL;
		if (r->method && (*e)->GetMethodName(e, r->method, &name, NULL, NULL) == JVMTI_ERROR_NONE &&
		    (*e)->GetMethodDeclaringClass(e, r->method, &k) == JVMTI_ERROR_NONE)
			(*e)->GetClassSignature(e, k, &csig, NULL);
		if (name && csig) {
			char jn[512];
			cn_java_name(csig, true, jn, sizeof jn);
			snprintf(out, cap, "%s in %s.%s", root_name(r->kind), jn, name);
		} else {
			snprintf(out, cap, "%s", root_name(r->kind));
		}
		(*e)->Deallocate(e, (unsigned char *)name);
		(*e)->Deallocate(e, (unsigned char *)csig);
		if (k)
			(*jni)->DeleteLocalRef(jni, k);
	}
}

/*
 * put_path: sampled object t's record (docs/protocol.md, ALLOC_LEAKS): key,
 * age, reached, links left out, root, then (type, field) steps root first.
 */
static void put_path(jvmtiEnv *e, JNIEnv *jni, struct walk *w, struct wire_w *b, uint32_t t, uint32_t key,
		     uint32_t age)
{
	uint32_t chain[MAX_STEPS + 1];
	uint32_t n = 0, skipped = 0, top = t;
	if (w->nodes[t].parent != UNSET) {
		for (uint32_t p = w->nodes[t].parent; p < P_ROOT && p < w->n; p = w->nodes[p].parent) {
			if (n < MAX_STEPS)
				chain[n++] = p;
			else
				skipped++;
			if (skipped > w->n)
				break;	/* a cycle cannot be, but the loop stays bounded */
		}
		top = n ? chain[n - 1] : t;
	}
	wire_put32(b, key);
	wire_put32(b, age);
	wire_put8(b, w->nodes[t].parent != UNSET);
	wire_put32(b, skipped);
	char label[600];
	uint32_t rootp = w->nodes[top].parent;
	if (w->nodes[t].parent == UNSET)
		snprintf(label, sizeof label, "not reached");
	else if (skipped)
		snprintf(label, sizeof label, "%u links left out", skipped);
	else
		root_label(e, jni, w, rootp, label, sizeof label);
	wire_put_str(b, label);
	bool from_class = !skipped && w->nodes[t].parent != UNSET && (rootp & P_CLASS) && rootp != P_UNKNOWN;
	wire_put32(b, w->nodes[t].parent == UNSET ? 0 : n + from_class);
	if (w->nodes[t].parent == UNSET)
		return;
	/* Each step: a holder's type, and the field (or element) by which it holds the next. */
	if (from_class) {
		struct lcls *c = &w->c[rootp & ~P_CLASS];
		char jn[1024], ty[1100];
		cn_java_name(c->sig ? c->sig : "?", true, jn, sizeof jn);
		snprintf(ty, sizeof ty, "class %s", jn);
		wire_put_str(b, ty);
		wire_put_str(b, name_of(e, jni, c, w->nodes[top].index));
	}
	for (uint32_t i = n; i-- > 0;) {
		const struct lnode *h = &w->nodes[chain[i]];
		const struct lnode *next = &w->nodes[i ? chain[i - 1] : t];
		struct lcls *c = h->cls < w->nc ? &w->c[h->cls] : NULL;
		wire_put_str(b, c && c->sig ? c->sig : "?");
		if (next->kind == JVMTI_HEAP_REFERENCE_FIELD && c)
			wire_put_str(b, name_of(e, jni, c, next->index));
		else
			wire_put_str(b, next->kind == JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT ? "[]" : "");
	}
}

static void free_walk(JNIEnv *jni, struct walk *w)
{
	for (uint32_t i = 0; w->c && i < w->nc; i++) {
		struct lcls *c = &w->c[i];
		if (c->k)
			(*jni)->DeleteLocalRef(jni, c->k);
		free(c->sig);
		free(c->sup);
		free(c->ft);
		for (uint32_t j = 0; c->names && j < c->nnames; j++)
			free(c->names[j]);
		free(c->names);
	}
	free(w->c);
	free(w->nodes);
	free(w->roots);
}

static bool leaks(int fd, JNIEnv *jni, const uint32_t *asked, uint32_t nasked, uint64_t time_ms,
		  uint64_t mem, uint32_t known, const struct sigtab *hist, const uint64_t *hcount);

bool ag_leaks_request(int fd, JNIEnv *jni, struct wire_r *r)
{
	uint32_t nasked = wire_get32(r);
	if (r->err || nasked > MAX_CLASSES_ASKED)
		return false;
	uint32_t asked[MAX_CLASSES_ASKED];
	for (uint32_t i = 0; i < nasked; i++)
		asked[i] = wire_get32(r);
	uint64_t time_ms = wire_get64(r), mem = wire_get64(r);
	uint32_t known = wire_get32(r);	/* keys the shell has read: later ones it cannot name */
	/* The JVM's class histogram, when the shell has it: instances by Java name. */
	struct sigtab hist = {0};
	uint64_t *hcount = NULL;
	uint32_t nh = wire_left(r) ? wire_get32(r) : 0;
	if (nh > (uint64_t)wire_left(r) / 13 || !(hcount = calloc((size_t)nh + 1, sizeof *hcount)))
		wire_r_fail(r, WIRE_BAD);
	for (uint32_t i = 0; i < nh && !r->err; i++) {
		char *name = wire_get_strdup(r, MAX_REQUEST);
		uint64_t count = wire_get64(r);
		uint32_t id = name ? sig_id(&hist, hidden_suffix(name)) : UINT32_MAX;
		if (id == UINT32_MAX)
			wire_r_fail(r, WIRE_BAD);
		else
			hcount[id] += count;	/* one name, several loaders */
		free(name);
	}
	if (!wire_done(r)) {
		sig_free(&hist);
		free(hcount);
		return false;
	}
	bool ok = leaks(fd, jni, asked, nasked, time_ms, mem, known, nh ? &hist : NULL, hcount);
	sig_free(&hist);
	free(hcount);
	return ok;
}

/*
 * leaks: ALLOC_LEAKS once its request is read; hist and hcount: instances
 * by Java name from the JVM's class histogram, or NULL: counted here.
 */
static bool leaks(int fd, JNIEnv *jni, const uint32_t *asked, uint32_t nasked, uint64_t time_ms,
		  uint64_t mem, uint32_t known, const struct sigtab *hist, const uint64_t *hcount)
{
	if (!R.exists)
		return ag_send_error(fd, "this JVM has no allocation recording; start one with :alloc start");
	if (R.live == LIVE_NONE)
		return ag_send_error(fd, "this recording does not follow its objects (--live none): "
				     "start one that does to find leaks");
	/* The sample, as local references, before anything is tagged. */
	uint32_t cap = nasked * RSV_K;
	jobject *objs = calloc((size_t)cap + 1, sizeof *objs);
	uint32_t *keys = calloc((size_t)cap + 1, sizeof *keys), *ages = calloc((size_t)cap + 1, sizeof *ages);
	struct walk w = {.fd = fd};
	struct sigtab st = {0};
	char why[256] = "";
	jvmtiEnv *e = NULL;
	bool ok = false, sent = false;
	if (!objs || !keys || !ages || (*jni)->PushLocalFrame(jni, (jint)cap + 16) != 0) {
		ag_jni_clear(jni, "PushLocalFrame");
		snprintf(why, sizeof why, "out of memory in the agent");
		free(objs);
		free(keys);
		free(ages);
		return ag_send_error(fd, "%s", why);
	}
	uint32_t nt = 0, first[MAX_CLASSES_ASKED + 1];
	for (uint32_t i = 0; i < nasked; i++) {
		pthread_mutex_lock(&R.lock);
		uint32_t nclasses = R.nclasses;
		pthread_mutex_unlock(&R.lock);
		first[i] = nt;
		if (asked[i] < nclasses)
			nt += ag_rsv_take(jni, asked[i], objs + nt, keys + nt, ages + nt, cap - nt);
	}
	first[nasked] = nt;
	if ((*R.vm)->GetEnv(R.vm, (void **)&e, JVMTI_VERSION_11) != JNI_OK || !e) {
		snprintf(why, sizeof why, "this JVM offers no JVMTI 11 environment");
		goto out;
	}
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof caps);
	caps.can_tag_objects = 1;
	if ((*e)->AddCapabilities(e, &caps) != JVMTI_ERROR_NONE) {
		snprintf(why, sizeof why, "the JVM refused to tag objects");
		goto out;
	}
	int64_t t0 = ag_now_ms();
	if (!classes(e, jni, &w, &st, why, sizeof why))
		goto out;
	/* The class signatures asked for, and the fixed point over the loaded classes. */
	uint32_t sids[MAX_CLASSES_ASKED];
	uint32_t ns = nasked;
	uint64_t skipped_cost[MAX_CLASSES_ASKED] = {0};
	pthread_mutex_lock(&R.lock);
	for (uint32_t i = 0; i < nasked; i++)
		sids[i] = asked[i] < R.nclasses ? sig_id(&st, R.classes[asked[i]]) : UINT32_MAX;
	pthread_mutex_unlock(&R.lock);
	/*
	 * Instances per class: from the JVM's class histogram the shell took
	 * just before (HotSpot's parallel heap inspection, no tag looked up),
	 * else one iteration over the heap here (the JVM paused), nothing tagged.
	 */
	int64_t tc = ag_now_ms();
	if (hist) {
		for (uint32_t i = 0; i < w.nc; i++) {
			char name[4096];
			if (!w.c[i].sig || CN_JAVA_NAME_MAX(w.c[i].sig) > sizeof name) {
				w.c[i].live = UINT64_MAX;
				continue;
			}
			cn_java_name(w.c[i].sig, true, name, sizeof name);
			uint32_t id = sig_find(hist, hidden_suffix(name));
			w.c[i].live = id == UINT32_MAX ? 0 : hcount[id];	/* not listed: no instance */
		}
	} else {
		jvmtiHeapCallbacks cc;
		memset(&cc, 0, sizeof cc);
		cc.heap_iteration_callback = count_cb;
		if ((*e)->IterateThroughHeap(e, JVMTI_HEAP_FILTER_CLASS_UNTAGGED, NULL, &cc, &w) != JVMTI_ERROR_NONE)
			for (uint32_t i = 0; i < w.nc; i++)
				w.c[i].live = UINT64_MAX;	/* not counted: every class may hold */
	}
	int64_t count_ms = hist ? 0 : ag_now_ms() - tc;
	/*
	 * The budget: the walk tags at most 5 % of the heap's objects (at least
	 * 100,000), within the memory limit. The classes searched, in the order
	 * asked (most growth first), each while the instances of the classes in
	 * the union of their closures stay within the budget (those are every
	 * object that could hold one: the walk tags at most those, so it is
	 * never cut short, where one class whose holders all hang from the roots
	 * would spend the budget of all: a database's rows on H2, bench/leaks.sh).
	 * The others are reported with that count.
	 */
	uint64_t total = 0, used = 0;
	for (uint32_t i = 0; i < w.nc; i++)
		total += w.c[i].live == UINT64_MAX ? 0 : w.c[i].live;
	uint64_t budget = total / 20 < 100000 ? 100000 : total / 20;
	if (budget > mem / NODE_COST)
		budget = mem / NODE_COST;
	uint8_t *in = calloc((size_t)w.nc + 1, 1), *generic = calloc((size_t)st.n + 1, 1);
	uint64_t *weight = calloc((size_t)st.n + 1, sizeof *weight);
	if (!in || !generic || !weight) {
		free(in);
		free(generic);
		free(weight);
		snprintf(why, sizeof why, "out of memory in the agent");
		goto out;
	}
	/* Generic types: Object, the interfaces, and arrays of them. */
	for (uint32_t i = 0; i < w.nc; i++)
		if (w.c[i].sig && w.c[i].iface)
			generic[w.c[i].sid] = 1;
	uint32_t object = sig_find(&st, "Ljava/lang/Object;");
	if (object != UINT32_MAX)
		generic[object] = 1;
	for (uint32_t g = 0; g < st.n; g++) {
		uint32_t el = st.s[g][0] == '[' ? sig_find(&st, st.s[g] + strspn(st.s[g], "[")) : UINT32_MAX;
		if (el != UINT32_MAX && generic[el] && st.s[el][0] != '[')
			generic[g] = 1;
	}
	bool searched[MAX_CLASSES_ASKED] = {false};
	for (uint32_t a = 0; a < ns; a++) {
		closure(&w, &st, sids[a], generic, in, weight);
		uint64_t extra = 0;
		for (uint32_t i = 0; i < w.nc; i++)
			if (in[i] && !w.c[i].reach)
				extra += w.c[i].live == UINT64_MAX ? 0 : w.c[i].live;
		skipped_cost[a] = extra;
		if (ag_debug())
			debug_closure(&w, a < ns && sids[a] < st.n ? st.s[sids[a]] : "?", in, extra);
		if (used + extra > budget)
			continue;
		searched[a] = true;
		used += extra;
		for (uint32_t i = 0; i < w.nc; i++)
			w.c[i].reach = w.c[i].reach || in[i];
	}
	free(in);
	free(generic);
	free(weight);
	uint64_t cap_nodes = budget + nt;
	w.cap = cap_nodes > MAX_NODES ? MAX_NODES : (uint32_t)cap_nodes;
	w.nodes = malloc((size_t)w.cap * sizeof *w.nodes);
	w.roots = malloc(64 * sizeof *w.roots);
	if (!w.nodes || !w.roots) {
		snprintf(why, sizeof why, "out of memory in the agent (%u nodes)", w.cap);
		goto out;
	}
	/* The sampled objects of the classes searched are the first nodes; the agent's own
	 * references to them go. */
	uint32_t kept = 0;
	for (uint32_t a = 0; a < nasked; a++)
		for (uint32_t i = first[a]; i < first[a + 1]; i++) {
			if ((!searched[a] || keys[i] >= known) && objs[i]) {
				(*jni)->DeleteLocalRef(jni, objs[i]);
				objs[i] = NULL;
				continue;
			}
			objs[kept] = objs[i];
			keys[kept] = keys[i];
			ages[kept++] = ages[i];
			if (kept - 1 != i)
				objs[i] = NULL;
		}
	nt = kept;
	for (uint32_t i = 0; i < nt; i++) {
		jclass k = (*jni)->GetObjectClass(jni, objs[i]);
		jlong ct = 0;
		if (k)
			(*e)->GetTag(e, k, &ct);
		w.nodes[i] = (struct lnode){UNSET, (ct & CLS_BIT) ? LOW(ct) - 1 : UINT32_MAX, -1, 0};
		(*e)->SetTag(e, objs[i], NODE_BIT | (i + 1));
		(*jni)->DeleteLocalRef(jni, k);
		(*jni)->DeleteLocalRef(jni, objs[i]);
		objs[i] = NULL;
	}
	w.n = w.ntarget = nt;
	jthread self = NULL;
	if ((*e)->GetCurrentThread(e, &self) == JVMTI_ERROR_NONE && self)
		(*e)->SetTag(e, self, SELF_TAG);
	int64_t prep_ms = ag_now_ms() - t0 - count_ms;
	w.deadline = ag_now_ms() + (int64_t)time_ms;
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.heap_reference_callback = on_ref;
	int64_t t1 = ag_now_ms();
	jvmtiError err = nt ? (*e)->FollowReferences(e, 0, NULL, NULL, &cb, &w) : JVMTI_ERROR_NONE;
	int64_t walk_ms = ag_now_ms() - t1;
	if (err != JVMTI_ERROR_NONE) {
		snprintf(why, sizeof why, "FollowReferences failed (JVMTI error %d)", err);
		goto out;
	}
	if (w.stop == 2) {
		snprintf(why, sizeof why, "cancelled");
		goto out;
	}
	/* The paths, as DATA frames of up to 64 KiB. */
	struct wire_w b = {0};
	uint64_t records = 0;
	ok = true;
	for (uint32_t i = 0; ok && i < nt; i++) {
		put_path(e, jni, &w, &b, i, keys[i], ages[i]);
		records++;
		if (b.len > 65536)
			ok = ag_send_frame(fd, T_DATA, &b);
	}
	if (ok && b.len)
		ok = ag_send_frame(fd, T_DATA, &b);
	wire_w_free(&b);
	struct wire_w end = {0};
	wire_put64(&end, records);
	wire_put32(&end, w.reached);
	wire_put32(&end, w.n - w.ntarget);
	wire_put64(&end, w.cut);
	wire_put64(&end, w.refs);
	wire_put64(&end, (uint64_t)prep_ms);
	wire_put64(&end, (uint64_t)(walk_ms + count_ms));
	wire_put8(&end, (uint8_t)((w.stop == 1) | (w.cut ? 2 : 0) | (R.has_gcs ? 4 : 0) | (hist ? 8 : 0)));
	wire_put32(&end, atomic_load(&R.gcs));
	wire_put64(&end, budget);
	uint32_t nskip = 0;
	for (uint32_t a = 0; a < nasked; a++)
		nskip += !searched[a];
	wire_put32(&end, nskip);
	for (uint32_t a = 0; a < nasked; a++)
		if (!searched[a]) {
			wire_put32(&end, asked[a]);
			wire_put64(&end, skipped_cost[a]);
		}
	ok = ok && ag_send_frame(fd, T_END, &end);
	wire_w_free(&end);
	sent = true;
out:
	if (e)
		(*e)->DisposeEnvironment(e);	/* every tag of the walk goes with it */
	for (uint32_t i = 0; i < nt; i++)
		if (objs[i])
			(*jni)->DeleteLocalRef(jni, objs[i]);
	free_walk(jni, &w);
	sig_free(&st);
	(*jni)->PopLocalFrame(jni, NULL);
	free(objs);
	free(keys);
	free(ages);
	if (!sent)
		return ag_send_error(fd, "%s", why[0] ? why : "the leak search failed");
	return ok;
}
