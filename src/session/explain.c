/*
 * explain.c - where a query would run, and why, without running it
 * (:explain; docs/agent.md, "Analyses inside the JVM"): on the loaded heap,
 * in heapsh without one, on a snapshot for a reason, or inside the attached
 * JVM as a program of so many bytes, with how each set type's instances
 * would be found there (src/dsl/plan.h). The routing itself is hs_query's
 * (query.c). See session.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/fmt.h"
#include "../dsl/eval.h"
#include "../dsl/plan.h"
#include "../dsl/prog.h"
#include "session_internal.h"
#include "guard.h"

/* explain_set: how a set type's instances would be found inside the JVM (plan_set_type). */
static void explain_set(const struct stmt *set, char *buf, size_t cap)
{
	struct set_plan p;
	plan_set_type(set, &p);
	size_t l = 0;
	if (!p.later) {
		l += (size_t)snprintf(buf + l, cap - l, "the membership is false for certain: the "
				      "roots are all; %s", p.roots_filter ? "one instance's roots "
				      "stream from one heap iteration (no tags), several instances' "
				      "are found and tagged one by one" : "the roots are found through "
				      "JNI");
		return;
	}
	if (!p.order_free) {
		snprintf(buf, cap, "on a snapshot: objects join in the order of the JVM's walk, and "
			 "on_inclusion is not only sums, counts and flags");
		return;
	}
	if (p.membership_reads_props) {
		snprintf(buf, cap, "on a snapshot: the membership reads ENTITY's properties, which "
			 "change as objects join");
		return;
	}
	l += (size_t)snprintf(buf + l, cap - l, "roots through JNI");
	if (p.s3root != TRI_FALSE || p.s3none != TRI_FALSE)
		l += (size_t)snprintf(buf + l, cap - l, "; step 3: one walk of the whole heap (the "
				      "membership may take %s without a referrer)",
				      p.s3none != TRI_FALSE ? "objects" : "GC roots");
	if (p.grow != TRI_FALSE)
		l += (size_t)snprintf(buf + l, cap - l, "; growth: one walk from the members%s",
				      p.grow == TRI_TRUE ? " (every reference from a member is "
				      "followed)" : " (the membership is asked per reference)");
}

/* where: the lines of hs_explain for the parsed statements st[0..n) (their memory in a). */
static void where(struct hs_session *s, struct stmt **st, int n, struct arena *a, struct fmt_text *t)
{
	char why[400];
	if (s->heap) {
		fmt_appendf(t, "on the %s: %s is loaded, so every query runs on it\n",
		    s->live ? "snapshot" : "dump", s->live ? "a snapshot of the JVM" : "a heap dump");
		return;
	}
	if (!s->live) {
		fmt_appendf(t, "nowhere: no dump is open and no JVM is attached\n");
		return;
	}
	if (!dsl_needs_heap(st, n)) {
		fmt_appendf(t, "in heapsh: it needs no heap (no snapshot is taken)\n");
		return;
	}
	if (s->live_off) {
		fmt_appendf(t, "on a snapshot: :live off\n");
		return;
	}
	uint8_t *prog = NULL;
	size_t plen = 0;
	int npre = 0;
	if (hs_jvm_compile(s, st, n, n ? st[0]->snippet : NULL, a, &prog, &plen, &npre, why,
			   sizeof why)) {
		fmt_appendf(t, "on a snapshot: %s\n", why);
		return;
	}
	free(prog);
	struct dsl_pushdown pd;
	bool pushdown = n == 1 && st[0]->kind == S_EXPR && dsl_pushdown_stmts(st, n, &pd);
	if (pushdown)
		dsl_pushdown_free(&pd);
	fmt_appendf(t, "inside JVM %d%s: the program is %zu bytes\n", s->live->pid,
	    pushdown ? " (a filter pushed down: one heap iteration)" : "", plen);
	for (int k = 0; k < n; k++) {
		const struct stmt *x = st[k];
		if (x->kind != S_INSTANCES)
			continue;
		struct stmt *set = NULL;
		for (int j = 0; j < k; j++)
			if (st[j]->kind == S_SET_TYPE && !strcmp(st[j]->name, x->name))
				set = st[j];
		if (!set)
			set = dsl_set_type_stmt(hs_dsl(s), x->name);
		if (!set)
			continue;
		explain_set(set, why, sizeof why);
		fmt_appendf(t, "  instances_for %s: %s\n", x->name, why);
	}
	fmt_appendf(t, "  (the agent may still find something it cannot do, such as a field only a "
	    "snapshot has; heapsh then says so and takes a snapshot)\n");
}

static int p_explain(struct hs_session *s, const char *text, bool *incomplete, char **out)
{
	*out = NULL;
	*incomplete = false;
	struct arena a = {0};
	struct stmt **st;
	int n;
	struct hs_error perr;
	enum parse_status ps = parse_snippet(text, &a, &st, &n, &perr);
	int rc = HS_OK;
	if (ps == PARSE_INCOMPLETE) {
		*incomplete = true;
	} else if (ps != PARSE_OK) {
		s->err = perr;
		rc = HS_ERR;
	} else {
		struct fmt_text t = {NULL, 0, 0};
		where(s, st, n, &a, &t);
		*out = t.s;
	}
	arena_free(&a);
	return rc;
}

int hs_explain(struct hs_session *s, const char *text, bool *incomplete, char **out)
{
	GUARDED(s, HS_ERR, p_explain(s, text, incomplete, out));
}
