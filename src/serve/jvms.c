/*
 * jvms.c - the JVMs the exporter follows (docs/fleet.md): found by pid or
 * by a scan of /proc (--all: processes of this user with libjvm.so
 * mapped), each on a worker thread of its own with a session of its own,
 * which attaches and, every round, reads the heap, the class histogram, a
 * running allocation recording and the watch queries' values inside the
 * JVM (never a snapshot: HS_QUERY_JVM_ONLY); a watchdog interrupts a call
 * that outlives its time limit, so a hung JVM holds up only its own
 * series. What a round found is published under srv_lock for the HTTP
 * handler (serve.c); a part that failed keeps its last values. See serve.h.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../heapsh.h"
#include "serve.h"

#define GRACE_MS 2000		/* the watchdog waits this long past a call's limit */
#define ATTACH_LIMIT_MS 15000	/* an attach (loading the agent) may take this long at least */
#define MAX_KEYS 1000		/* series per watch query with keys */

pthread_mutex_t srv_lock = PTHREAD_MUTEX_INITIALIZER;
struct srv_jvm **srv_jvms;
uint32_t srv_njvms;
static uint32_t capjvms;
static pthread_cond_t wake;	/* workers between rounds and the watchdog wait on it */
static bool stopping;		/* under srv_lock */
static pthread_t watchdog_thread;
static bool watchdog_started;
static uint64_t next_scan_ms;

/* What a worker keeps of its JVM. */
struct srv_jvm_priv {
	pthread_t t;
	bool thread;		/* t was started */
	const struct srv_config *c;
	struct hs_session *s;	/* the worker's session while it runs (srv_lock; the watchdog's) */
	uint64_t start_ticks;	/* /proc/PID/stat's starttime: a new process under the pid is another */
	uint64_t step_ms;	/* monotonic start of the library call under way, 0: none (srv_lock) */
	uint64_t step_limit_ms;	/* its limit */
	bool fired;		/* the watchdog interrupted it (srv_lock) */
	bool attached;
	bool syntax_counted;	/* the watch file's bad lines were counted for this JVM */
	bool gc_fresh;		/* this round's class histogram made a full GC: the queries make none */
	int nparts;		/* SRV_PART_QUERY + the watch queries */
	bool *failed;		/* [part]: failed this round, its last values stay */
	char **last_err;	/* [part]: the error last logged, NULL: fine (a change is logged once) */
	char *last_notice;	/* the session's notice last logged */
	struct srv_sample *smp;	/* this round's values, being made */
	uint32_t nsmp, cap;
};

static uint64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static double wall_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

const char *srv_reason_name(enum srv_reason r)
{
	static const char *const names[SRV_NREASONS] = {
		"attach", "exited", "timeout", "heap", "histogram", "alloc", "query_syntax",
		"query_failed", "query_unsupported", "query_not_number"};
	return r < SRV_NREASONS ? names[r] : "?";
}

/* ---- processes ---- */

/* proc_start: pid's start time in clock ticks since boot (/proc/PID/stat, field 22); 0: gone (or a zombie). */
static uint64_t proc_start(int pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');	/* the command name may hold spaces and parentheses */
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')	/* field 3, the state: dead, not reaped yet */
		return 0;
	int field = 2;
	for (p++; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	return strtoull(p, NULL, 10);
}

/* alive: the JVM j followed is still running (the same process, not a reused pid). */
static bool alive(const struct srv_jvm *j)
{
	uint64_t t = proc_start(j->pid);
	return t && t == j->priv->start_ticks;
}

/* owner: the uid of pid's process; false when there is none. */
static bool owner(int pid, uid_t *uid)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%d", pid);
	if (stat(path, &st) != 0)
		return false;
	*uid = st.st_uid;
	return true;
}

/* property_name: the value of -Dheapsh.name= on pid's command line, into buf; false: none. */
static bool property_name(int pid, char *buf, size_t cap)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	char *arg = NULL;
	size_t acap = 0;
	bool found = false;
	static const char key[] = "-Dheapsh.name=";
	while (getdelim(&arg, &acap, 0, f) > 0)
		if (!strncmp(arg, key, sizeof key - 1)) {
			snprintf(buf, cap, "%s", arg + sizeof key - 1);
			found = true;	/* the last one wins, as in the JVM */
		}
	free(arg);
	fclose(f);
	return found;
}

/* ---- a round's values ---- */

/* esc: text as an OpenMetrics label value (backslash, quote and newline escaped); new memory. */
static char *esc(const char *s)
{
	size_t n = strlen(s);
	char *o = xmalloc(2 * n + 1), *q = o;
	for (; *s; s++) {
		if (*s == '\\' || *s == '"') {
			*q++ = '\\';
			*q++ = *s;
		} else if (*s == '\n') {
			*q++ = '\\';
			*q++ = 'n';
		} else {
			*q++ = *s;
		}
	}
	*q = 0;
	return o;
}

/* add: a value of this round; labels (new memory) becomes the sample's. */
static void add(struct srv_jvm *j, int family, int part, char *labels, double v)
{
	struct srv_jvm_priv *p = j->priv;
	if (p->nsmp == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 64;
		p->smp = xreallocarray(p->smp, p->cap, sizeof *p->smp);
	}
	p->smp[p->nsmp++] = (struct srv_sample){(uint8_t)family, part, labels, v};
}

/* label2: k1="v1",k2="v2" (k2 NULL: the first alone), escaped; new memory. */
static char *label2(const char *k1, const char *v1, const char *k2, const char *v2)
{
	char *a = esc(v1), *b = k2 ? esc(v2) : NULL;
	char *r = k2 ? xasprintf("%s=\"%s\",%s=\"%s\"", k1, a, k2, b) : xasprintf("%s=\"%s\"", k1, a);
	free(a);
	free(b);
	return r;
}

/*
 * publish: this round's values become the JVM's; the parts that failed
 * (all of them when the JVM was not reached) keep their last ones.
 */
static void publish(struct srv_jvm *j, bool up, uint64_t t0)
{
	struct srv_jvm_priv *p = j->priv;
	if (!up)
		memset(p->failed, 1, (size_t)p->nparts * sizeof *p->failed);
	pthread_mutex_lock(&srv_lock);
	for (uint32_t k = 0; k < j->nsmp; k++) {
		struct srv_sample *x = &j->smp[k];
		if (x->part < p->nparts && p->failed[x->part])
			add(j, x->family, x->part, x->labels, x->v);
		else
			free(x->labels);
	}
	free(j->smp);
	j->smp = p->smp;
	j->nsmp = p->nsmp;
	p->smp = NULL;
	p->nsmp = p->cap = 0;
	j->up = up;
	if (up) {
		j->last_success = wall_s();
		j->scrape_s = (double)(now_ms() - t0) / 1000.0;
	}
	pthread_mutex_unlock(&srv_lock);
}

/* fail_part: part failed for reason: counted, logged when it says something new, its values kept. */
static void fail_part(struct srv_jvm *j, int part, enum srv_reason r, const char *what, const char *msg)
{
	struct srv_jvm_priv *p = j->priv;
	pthread_mutex_lock(&srv_lock);
	j->errors[r]++;
	pthread_mutex_unlock(&srv_lock);
	p->failed[part] = true;
	if (p->last_err[part] && !strcmp(p->last_err[part], msg))
		return;
	free(p->last_err[part]);
	p->last_err[part] = xstrdup(msg);
	srv_log("JVM %d (%s): %s: %s [%s]", j->pid, j->name, what, msg, srv_reason_name(r));
}

/* ok_part: part answered; a failure logged before is said to be over. */
static void ok_part(struct srv_jvm *j, int part, const char *what)
{
	struct srv_jvm_priv *p = j->priv;
	if (!p->last_err[part])
		return;
	srv_log("JVM %d (%s): %s: answers again", j->pid, j->name, what);
	free(p->last_err[part]);
	p->last_err[part] = NULL;
}

static void add_pause(struct srv_jvm *j, double s)
{
	pthread_mutex_lock(&srv_lock);
	j->pause_s += s;
	pthread_mutex_unlock(&srv_lock);
}

/*
 * step_begin: a library call on the JVM begins, which the watchdog
 * interrupts past limit_ms (and GRACE_MS); false when the exporter is
 * stopping (the round ends). step_end: it returned; true when the
 * watchdog had interrupted it. The session's interrupt flag is clear
 * after each, so that one call's interrupt does not stop the next.
 */
static bool step_begin(struct srv_jvm *j, uint64_t limit_ms)
{
	struct srv_jvm_priv *p = j->priv;
	pthread_mutex_lock(&srv_lock);
	bool go = !stopping;
	if (go) {
		p->step_ms = now_ms();
		p->step_limit_ms = limit_ms;
		p->fired = false;
		hs_interrupted = 0;
	}
	pthread_mutex_unlock(&srv_lock);
	return go;
}

/*
 * halted: the exporter is stopping (srv_jvms_stop interrupted the call that
 * just failed): no failure of the JVM's, nothing counted or logged, and the
 * connection kept as it is, for the worker's hs_detach to leave the JVM
 * cleanly (it connects again when the interrupt cut the connection).
 */
static bool halted(void)
{
	pthread_mutex_lock(&srv_lock);
	bool s = stopping;
	pthread_mutex_unlock(&srv_lock);
	return s;
}

static bool step_end(struct srv_jvm *j)
{
	struct srv_jvm_priv *p = j->priv;
	pthread_mutex_lock(&srv_lock);
	bool fired = p->fired;
	p->step_ms = 0;
	if (!stopping)
		hs_interrupted = 0;
	pthread_mutex_unlock(&srv_lock);
	return fired;
}

/* gone: the JVM exited: counted once, said, shown for two rounds more, then forgotten. */
static void gone(struct srv_jvm *j)
{
	struct srv_jvm_priv *p = j->priv;
	double keep = 2.0 * (double)p->c->every_ms / 1000.0;
	pthread_mutex_lock(&srv_lock);
	bool first = !j->exited;
	if (first) {
		j->exited = true;
		j->up = false;
		j->errors[SRV_EXITED]++;
		j->forget_at = wall_s() + (keep < 2 ? 2 : keep);
	}
	pthread_mutex_unlock(&srv_lock);
	if (first)
		srv_log("JVM %d (%s) exited; its series go in %.0f s", j->pid, j->name, keep < 2 ? 2 : keep);
	hs_live_close(p->s);
	p->attached = false;
}

/*
 * part_failed: after a part's library call failed (fired: the watchdog
 * stopped it): false when the exporter is stopping or the JVM is gone
 * (the round ends); else the failure counted under reason (or timeout)
 * and logged, and true (the round goes on to the next part).
 */
static bool part_failed(struct srv_jvm *j, int part, bool fired, enum srv_reason reason,
			const char *what)
{
	if (halted())
		return false;
	if (!alive(j)) {
		gone(j);
		return false;
	}
	fail_part(j, part, fired ? SRV_TIMEOUT : reason, what, hs_errmsg(j->priv->s));
	return true;
}

/* ---- the parts of a round; each returns false when the round cannot go on ---- */

static bool attach(struct srv_jvm *j)
{
	struct srv_jvm_priv *p = j->priv;
	uint64_t lim = p->c->limit_ms > ATTACH_LIMIT_MS ? p->c->limit_ms : ATTACH_LIMIT_MS;
	if (!step_begin(j, lim))
		return false;
	int rc = hs_attach(p->s, j->pid);
	bool fired = step_end(j);
	if (rc != HS_OK) {
		part_failed(j, SRV_PART_HEAP, fired, SRV_ATTACH, "attach");
		return false;
	}
	p->attached = true;
	ok_part(j, SRV_PART_HEAP, "attach");
	srv_log("following JVM %d (%s)", j->pid, j->name);
	return true;
}

static bool heap(struct srv_jvm *j)
{
	struct srv_jvm_priv *p = j->priv;
	struct hs_jvm_info in;
	if (!step_begin(j, p->c->limit_ms))
		return false;
	int rc = hs_jvm_info(p->s, &in);
	bool fired = step_end(j);
	if (rc != HS_OK) {
		if (part_failed(j, SRV_PART_HEAP, fired, SRV_HEAP, "heap")) {
			hs_live_close(p->s);	/* attach again next round */
			p->attached = false;
		}
		return false;
	}
	ok_part(j, SRV_PART_HEAP, "heap");
	add(j, SRV_F_HEAP_USED, SRV_PART_HEAP, xstrdup(""), (double)in.heap_used);
	add(j, SRV_F_HEAP_COMMITTED, SRV_PART_HEAP, xstrdup(""), (double)in.heap_committed);
	add(j, SRV_F_HEAP_MAX, SRV_PART_HEAP, xstrdup(""), (double)in.heap_max);
	return true;
}

static int by_count(const void *a, const void *b, void *rows)
{
	const struct hs_hist_row *r = rows;
	uint64_t x = r[*(const uint32_t *)a].count, y = r[*(const uint32_t *)b].count;
	return x < y ? 1 : x > y ? -1 : 0;
}

static int by_bytes(const void *a, const void *b, void *rows)
{
	const struct hs_hist_row *r = rows;
	uint64_t x = r[*(const uint32_t *)a].bytes, y = r[*(const uint32_t *)b].bytes;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* histogram: the top classes by bytes and by instances (the union, up to 2 x top). */
static bool histogram(struct srv_jvm *j)
{
	struct srv_jvm_priv *p = j->priv;
	struct hs_histogram h;
	memset(&h, 0, sizeof h);
	if (!step_begin(j, p->c->limit_ms))
		return false;
	uint64_t t0 = now_ms();
	int rc = hs_live_histogram(p->s, NULL, NULL, &h);
	uint64_t took = now_ms() - t0;
	bool fired = step_end(j);
	if (rc != HS_OK) {
		hs_histogram_free(&h);
		return part_failed(j, SRV_PART_HISTOGRAM, fired, SRV_HISTOGRAM, "class histogram");
	}
	ok_part(j, SRV_PART_HISTOGRAM, "class histogram");
	p->gc_fresh = true;	/* hs_live_histogram's, HotSpot's or the agent's, follows a full GC */
	add_pause(j, (double)took / 1000.0);
	uint32_t *bb = xcalloc((size_t)h.n + 1, sizeof *bb), *bc = xcalloc((size_t)h.n + 1, sizeof *bc);
	bool *pick = xcalloc((size_t)h.n + 1, sizeof *pick);
	for (uint32_t k = 0; k < h.n; k++)
		bb[k] = bc[k] = k;
	qsort_r(bb, h.n, sizeof *bb, by_bytes, h.rows);
	qsort_r(bc, h.n, sizeof *bc, by_count, h.rows);
	uint32_t top = p->c->top;
	for (uint32_t k = 0; k < h.n && k < top; k++)
		pick[bb[k]] = pick[bc[k]] = true;
	for (uint32_t k = 0; k < h.n; k++) {
		if (!pick[k])
			continue;
		add(j, SRV_F_CLASS_INSTANCES, SRV_PART_HISTOGRAM, label2("class", h.rows[k].name, NULL, NULL),
		    (double)h.rows[k].count);
		add(j, SRV_F_CLASS_BYTES, SRV_PART_HISTOGRAM, label2("class", h.rows[k].name, NULL, NULL),
		    (double)h.rows[k].bytes);
	}
	free(bb);
	free(bc);
	free(pick);
	hs_histogram_free(&h);
	return true;
}

/* alloc: a running allocation recording's accounts, top rows by allocated bytes; none is started. */
static bool alloc(struct srv_jvm *j)
{
	struct srv_jvm_priv *p = j->priv;
	struct alc_status st;
	memset(&st, 0, sizeof st);
	if (!step_begin(j, p->c->limit_ms))
		return false;
	int rc = hs_alloc_control(p->s, HS_ALLOC_STATUS, &st);
	bool fired = step_end(j);
	bool running = rc == HS_OK && st.recording;
	alc_status_free(&st);
	if (rc != HS_OK)
		return part_failed(j, SRV_PART_ALLOC, fired, SRV_ALLOC, "allocation recording");
	if (!running) {
		ok_part(j, SRV_PART_ALLOC, "allocation recording");
		return true;
	}
	struct alc_rec *r = NULL;
	if (!step_begin(j, p->c->limit_ms))
		return false;
	uint64_t t0 = now_ms();
	rc = hs_alloc_fetch(p->s, &r);
	uint64_t took = now_ms() - t0;
	fired = step_end(j);
	if (rc != HS_OK) {
		alc_free(r);
		return part_failed(j, SRV_PART_ALLOC, fired, SRV_ALLOC, "allocation recording");
	}
	ok_part(j, SRV_PART_ALLOC, "allocation recording");
	add_pause(j, (double)took / 1000.0);
	uint32_t n = 0;
	struct alc_row *rows = alc_by_account(r, false, &n);
	for (uint32_t k = 0; k < n && k < p->c->top; k++) {
		const struct alc_row *w = &rows[k];
		add(j, SRV_F_ALLOC_OBJECTS, SRV_PART_ALLOC, label2("account", w->account, "class", w->cls),
		    w->objs);
		add(j, SRV_F_ALLOC_BYTES, SRV_PART_ALLOC, label2("account", w->account, "class", w->cls),
		    w->bytes);
		if (r->st.no_live)
			continue;
		add(j, SRV_F_ALLOC_LIVE_OBJECTS, SRV_PART_ALLOC, label2("account", w->account, "class", w->cls),
		    w->live_objs);
		add(j, SRV_F_ALLOC_LIVE_BYTES, SRV_PART_ALLOC, label2("account", w->account, "class", w->cls),
		    w->live_bytes);
	}
	free(rows);
	alc_free(r);
	return true;
}

/* number: v as a number (int, float, bool); false when it is not one. */
static bool number(struct value v, double *d)
{
	switch (v.k) {
	case V_INT: *d = (double)v.u.i; return true;
	case V_FLOAT: *d = v.u.f; return true;
	case V_BOOL: *d = v.u.b; return true;
	default: return false;
	}
}

/* key_text: a group's key as a label value, into buf; false when it is not a plain value. */
static bool key_text(struct value v, char *buf, size_t cap)
{
	switch (v.k) {
	case V_STR: snprintf(buf, cap, "%s", v.u.s); return true;
	case V_INT: snprintf(buf, cap, "%" PRId64, v.u.i); return true;
	case V_FLOAT: snprintf(buf, cap, "%.17g", v.u.f); return true;
	case V_BOOL: snprintf(buf, cap, "%s", v.u.b ? "true" : "false"); return true;
	case V_NULL: snprintf(buf, cap, "null"); return true;
	default: return false;
	}
}

/*
 * keyed: one item of a list as key and number: a struct with a field key
 * (group_by's groups: key, count, items) and a number in value, else
 * count, else its first other numeric field; or a list [key, number].
 */
static bool keyed(struct value v, char *key, size_t cap, double *d)
{
	if (v.k == V_LIST && v.u.l->kind == L_VALUES && v.u.l->n == 2)
		return key_text(v.u.l->v[0], key, cap) && number(v.u.l->v[1], d);
	if (v.k != V_STRUCT)
		return false;
	const struct vstruct *st = v.u.st;
	int ki = -1, vi = -1;
	for (int k = 0; k < st->n; k++)
		if (!strcmp(st->names[k], "key"))
			ki = k;
	for (int k = 0; k < st->n && vi < 0; k++)
		if (!strcmp(st->names[k], "value"))
			vi = k;
	for (int k = 0; k < st->n && vi < 0; k++)
		if (!strcmp(st->names[k], "count"))
			vi = k;
	for (int k = 0; k < st->n && vi < 0; k++)
		if (k != ki && number(st->vals[k], d))
			vi = k;
	return ki >= 0 && vi >= 0 && key_text(st->vals[ki], key, cap) && number(st->vals[vi], d);
}

/*
 * query_values: a watch query's value as series: a number as one; a list
 * of groups (keyed) or a struct of numbers as one per key. false with why
 * when it is neither.
 */
static bool query_values(struct srv_jvm *j, int part, const char *name, struct value v, char *why,
			 size_t cap)
{
	double d;
	char key[512];
	if (number(v, &d)) {
		add(j, SRV_F_QUERY, part, label2("query", name, NULL, NULL), d);
		return true;
	}
	uint32_t before = j->priv->nsmp;
	if (v.k == V_LIST && v.u.l->kind == L_VALUES) {
		uint32_t n = v.u.l->n;
		for (uint32_t k = 0; k < n && k < MAX_KEYS; k++) {
			if (!keyed(v.u.l->v[k], key, sizeof key, &d)) {
				snprintf(why, cap, "item %u of its list is not a group (a struct with key "
					 "and a number: group_by's) nor [key, number]", k + 1);
				goto undo;
			}
			add(j, SRV_F_QUERY, part, label2("query", name, "key", key), d);
		}
		if (n > MAX_KEYS)
			srv_log("JVM %d (%s): query %s: %u keys; the first %d are exported", j->pid,
				j->name, name, n, MAX_KEYS);
		return true;
	}
	if (v.k == V_STRUCT) {
		const struct vstruct *st = v.u.st;
		for (int k = 0; k < st->n; k++) {
			if (!number(st->vals[k], &d)) {
				snprintf(why, cap, "its field %s is not a number", st->names[k]);
				goto undo;
			}
			add(j, SRV_F_QUERY, part, label2("query", name, "key", st->names[k]), d);
		}
		return true;
	}
	snprintf(why, cap, "its value is %s, not a number nor keys with numbers",
		 v.k == V_LIST ? "a list of objects" : value_kind_name(v.k));
	return false;
undo:
	while (j->priv->nsmp > before)
		free(j->priv->smp[--j->priv->nsmp].labels);
	return false;
}

static bool queries(struct srv_jvm *j)
{
	struct srv_jvm_priv *p = j->priv;
	const struct srv_config *c = p->c;
	for (int k = 0; k < c->nwatch; k++) {
		const struct srv_watch *w = &c->watch[k];
		int part = SRV_PART_QUERY + k;
		char what[300], why[600];
		snprintf(what, sizeof what, "query %s (%s:%d)", w->name, c->watch_path, w->line);
		if (w->bad[0]) {
			if (!p->syntax_counted) {
				pthread_mutex_lock(&srv_lock);
				j->errors[SRV_QUERY_SYNTAX]++;
				pthread_mutex_unlock(&srv_lock);
			}
			continue;
		}
		struct hs_answer a;
		if (!step_begin(j, c->limit_ms))
			return false;
		/* One full GC a round: the histogram's, just before, serves every query. */
		int rc = hs_query(p->s, w->query,
				  HS_QUERY_JVM_ONLY | (p->gc_fresh ? HS_QUERY_NO_GC : 0), &a);
		bool fired = step_end(j);
		if (a.has_costs)
			add_pause(j, (double)a.pause_ms / 1000.0);
		if ((rc != HS_OK || a.cancelled) && halted()) {
			hs_answer_free(p->s, &a);
			return false;
		}
		if (rc != HS_OK) {
			bool gone_now = !alive(j);
			enum srv_reason r = fired || a.at_limit || a.cancelled ? SRV_TIMEOUT :
					    a.why_jvm[0] || a.why_pushdown[0] ? SRV_QUERY_UNSUPPORTED :
					    SRV_QUERY_FAILED;
			snprintf(why, sizeof why, "%s", hs_errmsg(p->s));
			hs_answer_free(p->s, &a);
			if (gone_now) {
				gone(j);
				return false;
			}
			fail_part(j, part, r, what, why);
			continue;
		}
		bool ok = false, have = false;
		enum srv_reason r = SRV_QUERY_FAILED;
		struct value v = {.k = V_NULL};
		why[0] = 0;
		if (a.cancelled || fired) {
			r = SRV_TIMEOUT;
			snprintf(why, sizeof why, "stopped at the time limit (%" PRIu64 " ms)", c->limit_ms);
		} else if (a.incomplete || a.error) {
			snprintf(why, sizeof why, "%s", a.incomplete ? "the query is not complete" :
				 a.err.msg);
		} else if (a.ran == HS_RAN_PUSHDOWN) {
			have = a.pd.op == HS_PD_COUNT || a.pd.op == HS_PD_EXISTS;
			v = a.pd.op == HS_PD_COUNT ? (struct value){.k = V_INT, .u.i = (int64_t)a.pd.matched}
						   : (struct value){.k = V_BOOL, .u.b = a.pd.matched > 0};
		} else if (a.ran == HS_RAN_JVM && a.nresults) {
			have = true;
			v = a.results[a.nresults - 1].v;
		} else if (a.ran == HS_RAN_HEAP && a.has_out && a.out.n) {
			have = true;	/* a query that needs no heap, answered in heapsh */
			v = a.out.vals[a.out.n - 1];
		}
		if (!why[0]) {
			r = SRV_QUERY_NOT_NUMBER;
			if (!have)
				snprintf(why, sizeof why, "it gave no value");
			else if ((ok = query_values(j, part, w->name, v, why, sizeof why)))
				ok_part(j, part, what);
		}
		hs_answer_free(p->s, &a);
		if (!ok)
			fail_part(j, part, r, what, why);
	}
	p->syntax_counted = true;
	return true;
}

/* one_round: attach if need be, then every part; the values published. */
static void one_round(struct srv_jvm *j)
{
	struct srv_jvm_priv *p = j->priv;
	uint64_t t0 = now_ms();
	memset(p->failed, 0, (size_t)p->nparts * sizeof *p->failed);
	p->gc_fresh = false;
	if (!alive(j)) {
		gone(j);
		return;
	}
	bool up = (p->attached || attach(j)) && heap(j);
	if (up)
		up = histogram(j) && alloc(j) && queries(j);
	if (!j->exited)
		publish(j, up, t0);
}

/* notice: what the session says that a person should hear, logged once while it repeats. */
static void notice(void *ctx, enum hs_notice when, const char *text)
{
	struct srv_jvm *j = ctx;
	struct srv_jvm_priv *p = j->priv;
	if (when != HS_NOTICE_ALWAYS && when != HS_NOTICE_ERROR)
		return;
	if (p->last_notice && !strcmp(p->last_notice, text))
		return;
	free(p->last_notice);
	p->last_notice = xstrdup(text);
	srv_log("JVM %d (%s): %s", j->pid, j->name, text);
}

static void *worker(void *arg)
{
	struct srv_jvm *j = arg;
	struct srv_jvm_priv *p = j->priv;
	const struct srv_config *c = p->c;
	struct hs_session *s = hs_session_new();
	hs_enter(s);	/* this thread's context: s's interrupt flag, pool and catches */
	struct hs_callbacks cb = {notice, NULL, NULL, NULL, j};
	hs_set_callbacks(s, &cb);
	struct hs_options o = hs_get_options(s);
	o.live_time_s = (uint32_t)((c->limit_ms + 999) / 1000);
	o.keep_agent = false;
	hs_set_options(s, &o);
	pthread_mutex_lock(&srv_lock);
	p->s = s;
	pthread_mutex_unlock(&srv_lock);
	/*
	 * The first round at once; the second one a share of --every later,
	 * from the pid, so that JVMs found together (at start-up, --all) spread
	 * their rounds, and their pauses, over the interval instead of all
	 * pausing in the same second on the same cores.
	 */
	uint64_t shift = (uint64_t)((uint32_t)j->pid * 2654435761u) % c->every_ms;
	for (;;) {
		uint64_t start = now_ms();
		struct hs_catch ct;
		hs_catch_push(&ct);
		if (setjmp(ct.jb))
			srv_log("JVM %d (%s): %s", j->pid, j->name, ct.msg);	/* out of memory */
		else {
			one_round(j);
			hs_catch_pop(&ct);
		}
		pthread_mutex_lock(&srv_lock);
		for (;;) {
			double left_ms = j->exited ? (j->forget_at - wall_s()) * 1000.0
						   : (double)(start + c->every_ms + shift) - (double)now_ms();
			if (stopping || left_ms <= 0)
				break;
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)(left_ms * 1e6);
			ts.tv_sec += (time_t)(ns / 1000000000u);
			ts.tv_nsec = (long)(ns % 1000000000u);
			pthread_cond_timedwait(&wake, &srv_lock, &ts);
		}
		bool stop = stopping || j->exited;
		pthread_mutex_unlock(&srv_lock);
		shift = 0;
		if (stop)
			break;
	}
	if (p->attached) {
		hs_interrupted = 0;
		if (hs_detach(s) == HS_OK)
			srv_log("detached from JVM %d (%s)", j->pid, j->name);
		else
			srv_log("JVM %d (%s): %s", j->pid, j->name, hs_errmsg(s));
	}
	pthread_mutex_lock(&srv_lock);
	p->s = NULL;
	pthread_mutex_unlock(&srv_lock);
	hs_ctx_enter(NULL);
	hs_session_free(s);
	pthread_mutex_lock(&srv_lock);
	j->done = true;
	pthread_mutex_unlock(&srv_lock);
	return NULL;
}

/* watchdog: interrupts a worker's call that outlived its limit (and GRACE_MS). */
static void *watchdog(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&srv_lock);
	while (!stopping) {
		uint64_t now = now_ms();
		for (uint32_t k = 0; k < srv_njvms; k++) {
			struct srv_jvm_priv *p = srv_jvms[k]->priv;
			if (p->s && p->step_ms && now - p->step_ms > p->step_limit_ms + GRACE_MS) {
				hs_interrupt(p->s);	/* again each time: a call may clear it */
				p->fired = true;
			}
		}
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 200000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&wake, &srv_lock, &ts);
	}
	pthread_mutex_unlock(&srv_lock);
	return NULL;
}

/* ---- the table ---- */

static bool followed(int pid)
{
	pthread_mutex_lock(&srv_lock);
	bool yes = false;
	for (uint32_t k = 0; k < srv_njvms && !yes; k++)
		yes = srv_jvms[k]->pid == pid;
	pthread_mutex_unlock(&srv_lock);
	return yes;
}

static void jvm_free(struct srv_jvm *j)
{
	struct srv_jvm_priv *p = j->priv;
	for (uint32_t k = 0; k < j->nsmp; k++)
		free(j->smp[k].labels);
	free(j->smp);
	for (int k = 0; k < p->nparts; k++)
		free(p->last_err[k]);
	free(p->last_err);
	free(p->failed);
	free(p->last_notice);
	free(p);
	free(j);
}

/* follow: a worker for JVM pid (of this user; checked by the caller). */
static void follow(const struct srv_config *c, int pid)
{
	struct srv_jvm *j = xcalloc(1, sizeof *j);
	struct srv_jvm_priv *p = j->priv = xcalloc(1, sizeof *p);
	j->pid = pid;
	p->c = c;
	p->start_ticks = proc_start(pid);
	p->nparts = SRV_PART_QUERY + c->nwatch;
	p->failed = xcalloc((size_t)p->nparts, sizeof *p->failed);
	p->last_err = xcalloc((size_t)p->nparts, sizeof *p->last_err);
	/* The jvm label, fixed from the first round, attached or not (a label that changed would be another series). */
	if (!property_name(pid, j->name, sizeof j->name))
		hs_jvm_name(pid, j->name, sizeof j->name);
	pthread_mutex_lock(&srv_lock);
	if (srv_njvms == capjvms) {
		capjvms = capjvms ? 2 * capjvms : 16;
		srv_jvms = xreallocarray(srv_jvms, capjvms, sizeof *srv_jvms);
	}
	srv_jvms[srv_njvms++] = j;
	p->thread = pthread_create(&p->t, NULL, worker, j) == 0;
	if (!p->thread) {
		j->done = true;
		srv_log("JVM %d: no thread for it: %s", pid, strerror(errno));
	}
	pthread_mutex_unlock(&srv_lock);
}

/* same_user: pid is a process of this effective user; else logged (once per pid, by the caller). */
static bool same_user(int pid, bool say)
{
	uid_t uid;
	if (!owner(pid, &uid)) {
		if (say)
			srv_log("no process %d: not followed", pid);
		return false;
	}
	if (uid != geteuid()) {
		if (say)
			srv_log("JVM %d belongs to uid %u: heapsh --serve follows only the JVMs of its own "
				"user (uid %u), even as root; not followed", pid, (unsigned)uid,
				(unsigned)geteuid());
		return false;
	}
	return true;
}

/* scan: JVMs of this user not followed yet (a /proc scan: processes with libjvm.so mapped). */
static void scan(const struct srv_config *c)
{
	DIR *d = opendir("/proc");
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == getpid())
			continue;
		if (same_user((int)pid, false) && !followed((int)pid) && hs_is_jvm((int)pid))
			follow(c, (int)pid);
	}
	closedir(d);
}

void srv_jvms_start(const struct srv_config *c)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&wake, &ca);
	pthread_condattr_destroy(&ca);
	watchdog_started = pthread_create(&watchdog_thread, NULL, watchdog, NULL) == 0;
	if (!watchdog_started)
		srv_log("no watchdog thread (%s): a hung JVM keeps its worker", strerror(errno));
	for (int k = 0; k < c->npids; k++)
		if (same_user(c->pids[k], true) && !followed(c->pids[k]))
			follow(c, c->pids[k]);
	if (c->all) {
		scan(c);
		next_scan_ms = now_ms() + c->every_ms;
	}
}

void srv_jvms_tick(const struct srv_config *c)
{
	for (;;) {
		struct srv_jvm *j = NULL;
		pthread_mutex_lock(&srv_lock);
		for (uint32_t k = 0; k < srv_njvms && !j; k++)
			if (srv_jvms[k]->done) {
				j = srv_jvms[k];
				srv_jvms[k] = srv_jvms[--srv_njvms];
			}
		pthread_mutex_unlock(&srv_lock);
		if (!j)
			break;
		if (j->priv->thread)
			pthread_join(j->priv->t, NULL);
		jvm_free(j);
	}
	if (c->all && now_ms() >= next_scan_ms) {
		scan(c);
		next_scan_ms = now_ms() + c->every_ms;
	}
}

void srv_jvms_stop(uint64_t wait_ms)
{
	pthread_mutex_lock(&srv_lock);
	stopping = true;
	for (uint32_t k = 0; k < srv_njvms; k++)
		if (srv_jvms[k]->priv->s)
			hs_interrupt(srv_jvms[k]->priv->s);
	pthread_cond_broadcast(&wake);
	pthread_mutex_unlock(&srv_lock);
	if (watchdog_started)
		pthread_join(watchdog_thread, NULL);
	uint64_t until = now_ms() + wait_ms;
	bool all_done = false;
	while (!all_done && now_ms() < until) {
		pthread_mutex_lock(&srv_lock);
		all_done = true;
		for (uint32_t k = 0; k < srv_njvms; k++)
			all_done &= srv_jvms[k]->done;
		pthread_mutex_unlock(&srv_lock);
		if (!all_done)
			usleep(50000);
	}
	pthread_mutex_lock(&srv_lock);
	uint32_t kept = 0;
	for (uint32_t k = 0; k < srv_njvms; k++) {
		struct srv_jvm *j = srv_jvms[k];
		if (!j->done) {
			srv_log("JVM %d (%s): its worker is still in a call; left to the exit", j->pid,
				j->name);
			srv_jvms[kept++] = j;
			continue;
		}
		if (j->priv->thread)
			pthread_join(j->priv->t, NULL);
		jvm_free(j);
	}
	srv_njvms = kept;
	pthread_mutex_unlock(&srv_lock);
}
