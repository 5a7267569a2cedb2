/*
 * instances.c - the agent's INSTANCES request (docs/protocol.md): a filter
 * evaluated in the VM, pushed down from heapsh. The instances of the class
 * the request names (with its subclasses when asked) are walked
 * (FollowReferences from the roots, or IterateThroughHeap after a full GC),
 * each is decided by the predicate tree (req.c reads it) from its primitive
 * fields as the walk reports them, the undecided ones (String fields) are
 * read through JNI after the walk, and the rows are sent with their fields'
 * values.
 */
#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ag.h"
#include "../base/classname.h"

struct pfield {
	char *name;
	char type;		/* JNI signature letter; 'T' for java.lang.String */
	jfieldID id;		/* for JNI reads */
	jint jvmti_index;	/* instance field index, per the JVMTI numbering */
};

/* Values of one object's fields; known[] says which were read. */
struct pvals {
	int n;
	uint64_t *bits;
	char **text;		/* strings: text, or NULL for null */
	bool *known;
};

enum { NO, YES, MAYBE };

static int cmp_result(int c, int cmp)
{
	switch (cmp) {
	case 0: return c == 0;
	case 1: return c != 0;
	case 2: return c < 0;
	case 3: return c <= 0;
	case 4: return c > 0;
	default: return c >= 0;
	}
}

static int peval(const struct pnode *p, const struct pfield *f, const struct pvals *v)
{
	switch (p->op) {
	case P_TRUE:
		return YES;
	case P_NOT: {
		int x = peval(p->kid[0], f, v);
		return x == MAYBE ? MAYBE : x == YES ? NO : YES;
	}
	case P_AND:
	case P_OR: {
		int res = p->op == P_AND ? YES : NO;
		for (int i = 0; i < p->n; i++) {
			int x = peval(p->kid[i], f, v);
			if (p->op == P_AND && x == NO)
				return NO;
			if (p->op == P_OR && x == YES)
				return YES;
			if (x == MAYBE)
				res = MAYBE;
		}
		return res;
	}
	}
	if (!v->known[p->slot])
		return MAYBE;
	char t = f[p->slot].type;
	uint64_t bits = v->bits[p->slot];
	if (t == 'T') {
		const char *s = v->text[p->slot];
		int eq = p->kind == K_NULL ? s == NULL
			 : p->kind == K_STRING && s ? strcmp(s, p->text) == 0 : 0;
		return (p->cmp == 0 ? eq : !eq) ? YES : NO;
	}
	int c;
	if (t == 'F' || t == 'D' || p->kind == K_DOUBLE) {
		double a, b;
		if (t == 'F') {
			float ff;
			uint32_t lo = (uint32_t)bits;
			memcpy(&ff, &lo, 4);
			a = ff;
		} else if (t == 'D') {
			memcpy(&a, &bits, 8);
		} else {
			a = (double)(int64_t)bits;
		}
		if (p->kind == K_DOUBLE)
			memcpy(&b, &p->bits, 8);
		else
			b = (double)(int64_t)p->bits;
		c = a < b ? -1 : a > b ? 1 : 0;
	} else {
		int64_t a = (int64_t)bits, b = (int64_t)p->bits;
		c = a < b ? -1 : a > b ? 1 : 0;
	}
	return cmp_result(c, p->cmp) ? YES : NO;
}

#define CAND_TAG (1LL << 61)	/* undecided in the walk (String fields): checked through JNI */
#define ROW_TAG (1LL << 60)	/* matches, and is one of the rows to return */

/*
 * The walk decides every object whose predicate needs only primitive fields
 * as soon as its last primitive field is reported (HotSpot reports one
 * object's fields together); only the rows to return and the undecided
 * objects are tagged, so nothing needs untagging but them.
 */
struct inst {
	int nclasses;
	int nslots;
	struct pfield *slots;	/* predicate fields: one set per wanted class */
	int *slot_of;		/* [nclasses * nslots]: jvmti index per class and slot */
	int *nprims;		/* [nclasses]: primitive instance fields of each class */
	struct pnode *pred;
	struct pvals v;
	int seen_prims;		/* fields of the current object seen so far */
	uint64_t examined, matched;
	uint32_t limit, rows;	/* rows wanted, rows tagged */
	bool first_only;	/* stop the walk at the first match */
	bool stop;
};

/* finish: all of an object's primitive fields are in: decide it. */
static void finish(struct inst *in, jlong *tag_ptr)
{
	int r = peval(in->pred, in->slots, &in->v);
	in->examined++;
	if (r == YES) {
		in->matched++;
		if (in->rows < in->limit) {
			*tag_ptr = ROW_TAG;
			in->rows++;
		}
		in->stop = in->first_only;
	} else if (r == MAYBE) {
		*tag_ptr = CAND_TAG;
	}
	for (int i = 0; i < in->v.n; i++)
		in->v.known[i] = false;
	in->seen_prims = 0;
}

/* An instance of a class with no primitive fields: undecided until JNI reads its Strings. */
static void no_prims(struct inst *in, jlong class_tag, jlong *tag_ptr)
{
	if (*tag_ptr == 0 && class_tag > 0 && class_tag <= in->nclasses &&
	    !in->nprims[class_tag - 1]) {
		in->examined++;
		*tag_ptr = CAND_TAG;
	}
}

static jint JNICALL inst_ref(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			     jlong class_tag, jlong referrer_class_tag, jlong size, jlong *tag_ptr,
			     jlong *referrer_tag_ptr, jint length, void *ud)
{
	struct inst *in = ud;
	(void)kind, (void)info, (void)referrer_class_tag, (void)size, (void)referrer_tag_ptr;
	(void)length;
	no_prims(in, class_tag, tag_ptr);
	return in->stop ? JVMTI_VISIT_ABORT : JVMTI_VISIT_OBJECTS;
}

static void inst_prim_value(struct inst *in, jlong class_tag, jint index, jvalue value)
{
	int c = (int)class_tag - 1;
	for (int s = 0; s < in->nslots; s++)
		if (in->slot_of[c * in->nslots + s] == index) {
			uint64_t bits = 0;
			switch (in->slots[s].type) {
			case 'Z': bits = value.z; break;
			case 'B': bits = (uint64_t)(int64_t)value.b; break;
			case 'C': bits = value.c; break;
			case 'S': bits = (uint64_t)(int64_t)value.s; break;
			case 'I': bits = (uint64_t)(int64_t)value.i; break;
			case 'J': bits = (uint64_t)value.j; break;
			case 'F': memcpy(&bits, &value.f, 4); break;
			case 'D': memcpy(&bits, &value.d, 8); break;
			}
			in->v.bits[s] = bits;
			in->v.known[s] = true;
		}
}

static jint JNICALL inst_prim(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			      jlong class_tag, jlong *tag_ptr, jvalue value, jvmtiPrimitiveType type,
			      void *ud)
{
	struct inst *in = ud;
	(void)type;
	if (kind != JVMTI_HEAP_REFERENCE_FIELD || class_tag <= 0 || class_tag > in->nclasses)
		return 0;
	inst_prim_value(in, class_tag, info->field.index, value);
	if (++in->seen_prims >= in->nprims[class_tag - 1])
		finish(in, tag_ptr);
	return in->stop ? JVMTI_VISIT_ABORT : 0;
}

/* The heap-walk variant: every instance, reachable or not yet collected. */
static jint JNICALL inst_iter(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud)
{
	struct inst *in = ud;
	(void)size, (void)length;
	no_prims(in, class_tag, tag_ptr);
	return in->stop ? JVMTI_VISIT_ABORT : 0;
}

static jint JNICALL inst_iter_prim(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
				   jlong class_tag, jlong *tag_ptr, jvalue value,
				   jvmtiPrimitiveType type, void *ud)
{
	return inst_prim(kind, info, class_tag, tag_ptr, value, type, ud);
}

/* field_table: the instance fields of k, with JVMTI indexes (see docs/protocol.md). */
struct ftab {
	int n;
	struct pfield *f;
};

static void ftab_free(struct ftab *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->f[i].name);
	free(t->f);
	t->f = NULL;
	t->n = 0;
}

static void table_field(void *ctx, jint index, jfieldID id, const char *declaring, const char *name,
			const char *sig, bool is_static)
{
	struct ftab *t = ctx;
	(void)declaring;
	if (is_static)
		return;
	struct pfield *g = realloc(t->f, (size_t)(t->n + 1) * sizeof *g);
	if (!g)
		return;
	t->f = g;
	g[t->n].name = strdup(name);
	g[t->n].type = !strcmp(sig, "Ljava/lang/String;") ? 'T' : sig[0];
	g[t->n].id = id;
	g[t->n].jvmti_index = index;
	t->n++;
}

static bool field_table(JNIEnv *env, jclass k, struct ftab *t)
{
	t->n = 0;
	t->f = NULL;
	ag_chain_fields(ag_jvmti, env, k, table_field, t);
	return true;
}

static int collect_slots(struct pnode *p, struct inst *in, char *why, size_t cap)
{
	if (p->op != P_CMP) {
		for (int i = 0; i < p->n; i++)
			if (collect_slots(p->kid[i], in, why, cap))
				return -1;
		return 0;
	}
	for (int s = 0; s < in->nslots; s++)
		if (!strcmp(in->slots[s].name, p->field)) {
			p->slot = s;
			return 0;
		}
	struct pfield *g = realloc(in->slots, (size_t)(in->nslots + 1) * sizeof *g);
	if (!g) {
		snprintf(why, cap, "out of memory in the agent");
		return -1;
	}
	in->slots = g;
	memset(&g[in->nslots], 0, sizeof *g);
	g[in->nslots].name = strdup(p->field);
	p->slot = in->nslots++;
	return 0;
}

/* java_name: Lcom/x/Y; -> com.x.Y (cn_java_name), malloc'd; NULL when out of memory. */
static char *java_name(const char *sig)
{
	size_t n = cn_java_name(sig, true, NULL, 0);
	char *s = malloc(n + 1);
	if (s)
		cn_java_name(sig, true, s, n + 1);
	return s;
}

/*
 * read_field: field f of o through JNI: primitives as value bits, a String
 * as a new copy of its text (*text; NULL for null). False on a JNI error.
 */
static bool read_field(JNIEnv *env, jobject o, const struct pfield *f, uint64_t *bits,
		       char **text)
{
	*bits = 0;
	*text = NULL;
	switch (f->type) {
	case 'Z': *bits = (*env)->GetBooleanField(env, o, f->id); break;
	case 'B': *bits = (uint64_t)(int64_t)(*env)->GetByteField(env, o, f->id); break;
	case 'C': *bits = (*env)->GetCharField(env, o, f->id); break;
	case 'S': *bits = (uint64_t)(int64_t)(*env)->GetShortField(env, o, f->id); break;
	case 'I': *bits = (uint64_t)(int64_t)(*env)->GetIntField(env, o, f->id); break;
	case 'J': *bits = (uint64_t)(*env)->GetLongField(env, o, f->id); break;
	case 'F': { float x = (*env)->GetFloatField(env, o, f->id); memcpy(bits, &x, 4); break; }
	case 'D': { double x = (*env)->GetDoubleField(env, o, f->id); memcpy(bits, &x, 8); break; }
	case 'T': {
		jobject str = (*env)->GetObjectField(env, o, f->id);
		if (str) {
			const char *u = (*env)->GetStringUTFChars(env, str, NULL);
			*text = strdup(u ? u : "");
			if (u)
				(*env)->ReleaseStringUTFChars(env, str, u);
			(*env)->DeleteLocalRef(env, str);
		}
		break;
	}
	default:
		return false;
	}
	return !(*env)->ExceptionCheck(env);
}

static void put_field_value(struct wire_w *b, JNIEnv *env, jobject o, const struct pfield *f)
{
	wire_put_str(b, f->name);
	if (f->type == 'L' || f->type == '[') {
		jobject r = (*env)->GetObjectField(env, o, f->id);
		if (!r) {
			wire_put8(b, 'N');
			return;
		}
		jclass rc = (*env)->GetObjectClass(env, r);
		char *sig = NULL;
		(*ag_jvmti)->GetClassSignature(ag_jvmti, rc, &sig, NULL);
		wire_put8(b, 'L');
		wire_put_str(b, sig ? sig : "?");
		ag_dealloc(sig);
		(*env)->DeleteLocalRef(env, rc);
		(*env)->DeleteLocalRef(env, r);
		return;
	}
	uint64_t bits;
	char *text;
	read_field(env, o, f, &bits, &text);
	if (f->type == 'T') {
		if (text) {
			wire_put8(b, 'T');
			wire_put_str(b, text);
			free(text);
		} else {
			wire_put8(b, 'N');
		}
		return;
	}
	wire_put8(b, (uint8_t)f->type);
	wire_put64(b, bits);
}

bool ag_do_instances(int fd, JNIEnv *env, struct wire_r *r)
{
	char *cname = wire_get_strdup(r, MAX_REQUEST);
	uint8_t flags = wire_get8(r);
	uint32_t limit = wire_get32(r);
	int budget = 256;
	struct pnode *pred = cname ? ag_pred_read(r, 0, &budget) : NULL;
	if (!wire_done(r) || !pred) {
		free(cname);
		ag_pred_free(pred);
		return false;
	}
	struct inst in;
	memset(&in, 0, sizeof in);
	in.pred = pred;
	struct classes c;
	struct ftab *tabs = NULL;
	jclass *wanted = NULL;
	char **names = NULL;
	uint32_t *picked = NULL;
	char why[300] = "";
	bool ok = false;
	if (!ag_load_classes(env, &c)) {
		snprintf(why, sizeof why, "GetLoadedClasses failed");
		goto reply;
	}
	/* The classes the name names, by heapsh's one rule (src/base/classname.h). */
	names = calloc((size_t)c.n + 1, sizeof *names);
	picked = calloc((size_t)c.n + 1, sizeof *picked);
	wanted = calloc((size_t)c.n + 1, sizeof *wanted);
	if (!names || !picked || !wanted) {
		snprintf(why, sizeof why, "out of memory in the agent");
		goto reply;
	}
	for (jint i = 0; i < c.n; i++) {
		char *sig = NULL;
		(*ag_jvmti)->GetClassSignature(ag_jvmti, c.k[i], &sig, NULL);
		names[i] = sig && sig[0] == 'L' ? java_name(sig) : NULL;
		ag_dealloc(sig);
		if (!names[i])
			names[i] = strdup("");
	}
	uint32_t np = cn_select(cname, (const char *const *)names, (uint32_t)c.n, picked);
	if (!np) {
		snprintf(why, sizeof why, "no loaded class is named %s", cname);
		goto reply;
	}
	for (uint32_t k = 1; k < np; k++)
		if (strcmp(names[picked[k]], names[picked[0]])) {
			size_t len = (size_t)snprintf(why, sizeof why, "'%s' is ambiguous: ", cname);
			for (uint32_t j = 0; j < np && len + 60 < sizeof why; j++)
				len += (size_t)snprintf(why + len, sizeof why - len, "%s%s", j ? ", " : "",
							names[picked[j]]);
			snprintf(why + len, sizeof why - len, "; write the full name");
			goto reply;
		}
	/* Every class of that name (one per class loader), and with subclasses their subclasses. */
	for (jint i = 0; i < c.n; i++)
		for (uint32_t k = 0; k < np; k++) {
			jclass b = c.k[picked[k]];
			if ((*env)->IsSameObject(env, c.k[i], b) ||
			    ((flags & 1) && (*env)->IsAssignableFrom(env, c.k[i], b))) {
				wanted[in.nclasses++] = c.k[i];
				break;
			}
		}
	if (collect_slots(pred, &in, why, sizeof why))
		goto reply;
	tabs = calloc((size_t)in.nclasses + 1, sizeof *tabs);
	in.slot_of = calloc((size_t)in.nclasses * (size_t)(in.nslots + 1) + 1, sizeof *in.slot_of);
	in.nprims = calloc((size_t)in.nclasses + 1, sizeof *in.nprims);
	in.v.n = in.nslots;
	in.v.bits = calloc((size_t)in.nslots + 1, 8);
	in.v.text = calloc((size_t)in.nslots + 1, sizeof *in.v.text);
	in.v.known = calloc((size_t)in.nslots + 1, 1);
	if (!tabs || !in.slot_of || !in.nprims || !in.v.bits || !in.v.text || !in.v.known) {
		snprintf(why, sizeof why, "out of memory in the agent");
		goto reply;
	}
	for (int k = 0; k < in.nclasses; k++) {
		field_table(env, wanted[k], &tabs[k]);
		for (int f = 0; f < tabs[k].n; f++)
			in.nprims[k] += tabs[k].f[f].type != 'L' && tabs[k].f[f].type != '[' &&
					tabs[k].f[f].type != 'T';
		for (int s = 0; s < in.nslots; s++) {
			in.slot_of[k * in.nslots + s] = -1;
			for (int f = 0; f < tabs[k].n; f++)
				if (!strcmp(tabs[k].f[f].name, in.slots[s].name)) {
					char t = tabs[k].f[f].type;
					if (t == 'L' || t == '[') {
						snprintf(why, sizeof why, "field %s of %s is neither "
							 "primitive nor a String: it cannot be "
							 "compared inside the VM", in.slots[s].name, cname);
						goto reply;
					}
					if (k == 0)
						in.slots[s].type = t;
					in.slot_of[k * in.nslots + s] =
						t == 'T' ? -2 : tabs[k].f[f].jvmti_index;
				}
			if (in.slot_of[k * in.nslots + s] == -1 && k == 0) {
				snprintf(why, sizeof why, "class %s has no instance field '%s'", cname,
					 in.slots[s].name);
				goto reply;
			}
		}
	}
	for (int k = 0; k < in.nclasses; k++)
		(*ag_jvmti)->SetTag(ag_jvmti, wanted[k], k + 1);
	in.limit = limit;
	in.first_only = (flags & 4) != 0;
	/* After a full GC every object left is live: the heap iteration is then exact. */
	if (flags & 8)
		(*ag_jvmti)->ForceGarbageCollection(ag_jvmti);
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	jvmtiError e;
	if (flags & 2) {
		cb.heap_iteration_callback = inst_iter;
		cb.primitive_field_callback = inst_iter_prim;
		e = (*ag_jvmti)->IterateThroughHeap(ag_jvmti, JVMTI_HEAP_FILTER_CLASS_UNTAGGED, NULL, &cb, &in);
	} else {
		cb.heap_reference_callback = inst_ref;
		cb.primitive_field_callback = inst_prim;
		e = (*ag_jvmti)->FollowReferences(ag_jvmti, JVMTI_HEAP_FILTER_CLASS_UNTAGGED, NULL, NULL, &cb,
					      &in);
	}
	for (int k = 0; k < in.nclasses; k++)
		(*ag_jvmti)->SetTag(ag_jvmti, wanted[k], 0);
	if (e != JVMTI_ERROR_NONE) {
		ag_untag_all();
		snprintf(why, sizeof why, "the heap walk failed (JVMTI error %d)", e);
		goto reply;
	}
	/* The rows and the undecided objects, as JNI references; their tags go now. */
	jlong want_tags[2] = {ROW_TAG, CAND_TAG};
	jint nobj = 0;
	jobject *objs = NULL;
	jlong *otags = NULL;
	e = (*ag_jvmti)->GetObjectsWithTags(ag_jvmti, 2, want_tags, &nobj, &objs, &otags);
	if (e != JVMTI_ERROR_NONE) {
		ag_untag_all();
		snprintf(why, sizeof why, "GetObjectsWithTags failed (JVMTI error %d)", e);
		goto reply;
	}
	struct wire_w rows = {0};
	uint32_t nrows = 0;
	for (jint i = 0; i < nobj; i++) {
		jobject o = objs[i];
		(*ag_jvmti)->SetTag(ag_jvmti, o, 0);
		jclass oc = (*env)->GetObjectClass(env, o);
		int k = 0;
		while (k < in.nclasses && !(*env)->IsSameObject(env, oc, wanted[k]))
			k++;
		(*env)->DeleteLocalRef(env, oc);
		if (k == in.nclasses)
			k = 0;
		bool row = otags[i] == ROW_TAG;
		if (!row) {	/* undecided: read the predicate's fields through JNI */
			for (int sl = 0; sl < in.nslots; sl++) {
				in.v.known[sl] = false;
				for (int f = 0; f < tabs[k].n; f++)
					if (!strcmp(tabs[k].f[f].name, in.slots[sl].name))
						in.v.known[sl] = read_field(env, o, &tabs[k].f[f],
									    &in.v.bits[sl], &in.v.text[sl]);
			}
			int res = peval(pred, in.slots, &in.v);
			for (int sl = 0; sl < in.nslots; sl++) {
				free(in.v.text[sl]);
				in.v.text[sl] = NULL;
			}
			if (res == YES)
				in.matched++;
			row = res == YES && nrows < limit;
		}
		if (row && nrows < limit) {
			jclass rc = (*env)->GetObjectClass(env, o);
			char *sig = NULL;
			(*ag_jvmti)->GetClassSignature(ag_jvmti, rc, &sig, NULL);
			wire_put_str(&rows, sig ? sig : "?");
			ag_dealloc(sig);
			(*env)->DeleteLocalRef(env, rc);
			wire_put16(&rows, (uint16_t)tabs[k].n);
			for (int f = 0; f < tabs[k].n; f++)
				put_field_value(&rows, env, o, &tabs[k].f[f]);
			nrows++;
		}
		(*env)->DeleteLocalRef(env, o);
		if ((*env)->ExceptionCheck(env))
			(*env)->ExceptionClear(env);
	}
	ag_dealloc(objs);
	ag_dealloc(otags);
	uint64_t matched = in.matched;
	struct wire_w b = {0};
	wire_put64(&b, in.examined);
	wire_put64(&b, matched);
	wire_put32(&b, nrows);
	wire_put_bytes(&b, rows.p, rows.len);
	wire_w_free(&rows);
	ok = ag_send_frame(fd, T_INSTANCES, &b);
	wire_w_free(&b);
	why[0] = 0;
reply:
	if (why[0])
		ok = ag_send_error(fd, "%s", why);
	for (int k = 0; tabs && k < in.nclasses; k++)
		ftab_free(&tabs[k]);
	free(tabs);
	for (int s = 0; s < in.nslots; s++)
		free(in.slots[s].name);
	free(in.slots);
	free(in.slot_of);
	free(in.nprims);
	free(in.v.bits);
	free(in.v.text);
	free(in.v.known);
	free(wanted);
	for (jint i = 0; names && i < c.n; i++)
		free(names[i]);
	free(names);
	free(picked);
	if (c.k)
		ag_drop_classes(env, &c);
	ag_pred_free(pred);
	free(cname);
	return ok;
}
