/*
 * query.c - the query language in the shell: running snippets, showing
 * their values as tables, and reporting errors with a caret. On an
 * attached JVM with no snapshot yet, a snippet runs inside the JVM when it
 * can (push-down), without a heap when it needs none (allocations), and
 * otherwise after a snapshot.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../dsl/eval.h"
#include "../dsl/parse.h"
#include "../out/out.h"
#include "sh.h"

int sh_query(struct sh *sh, const char *text, const char *where, int first_line,
	     bool *incomplete)
{
	*incomplete = false;
	if (sh_live_explain_pending())
		return sh_live_explain(sh, text, incomplete);
	bool heapless = false;	/* run with no snapshot: the snippet needs no heap */
	if (!sh->ss->heap && (sh_is_live(sh) || sh->ss->recording)) {
		/*
		 * Finish reading it first; then maybe the JVM can answer it without
		 * a snapshot, or it needs no heap (allocations of a JVM or of a
		 * recording read from a file).
		 */
		struct arena a = {0};
		struct stmt **st;
		int ns;
		struct hs_error perr;
		enum parse_status ps = parse_snippet(text, &a, &st, &ns, &perr);
		arena_free(&a);
		if (ps == PARSE_INCOMPLETE) {
			*incomplete = true;
			return HS_OK;
		}
		/* a query that does not parse needs no snapshot to say so */
		heapless = ps == PARSE_ERROR || dsl_heapless(sh_dsl(sh), text);
		bool handled = false;
		int r = heapless || !sh_is_live(sh) ? HS_OK : sh_live_pushdown(sh, text, &handled);
		if (handled)
			return r;
		r = heapless || !sh_is_live(sh) ? HS_OK
						: sh_live_analyze(sh, text, where, first_line, &handled);
		if (handled)
			return r;
	}
	if (!sh->ss->heap && !heapless && sh_need_heap(sh))
		return HS_ERR;
	struct dsl *d = sh_dsl(sh);
	struct dsl_output out;
	struct hs_error err;
	hs_error_clear(&err);
	hs_interrupted = 0;
	enum parse_status st = dsl_run(d, text, &out, &err);
	if (st == PARSE_INCOMPLETE) {
		*incomplete = true;
		dsl_output_done(d, &out);
		return HS_OK;
	}
	struct arena scratch = {NULL, 0};	/* texts made while printing */
	for (int k = 0; k < out.n; k++)
		sh_show_value(sh, out.vals[k], &scratch);
	out_flush();
	arena_free(&scratch);
	dsl_output_done(d, &out);
	if (st == PARSE_ERROR) {
		sh_query_report(sh, text, where, first_line, &err);
		hs_interrupted = 0;
		return HS_ERR;
	}
	return HS_OK;
}
