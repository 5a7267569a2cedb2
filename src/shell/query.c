/*
 * query.c - the query language in the shell: each snippet run where the
 * session routes it (hs_query: inside an attached JVM when it can, without
 * a heap when it needs none, else on the heap or a snapshot), its values
 * shown as tables (values.c, live.c, live_query.c), errors with a caret.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../out/out.h"
#include "sh.h"

int sh_query(struct sh *sh, const char *text, const char *where, int first_line,
	     bool *incomplete)
{
	*incomplete = false;
	if (sh_live_explain_pending())
		return sh_live_explain(sh, text, incomplete);
	struct hs_answer a;
	int ret = HS_OK;
	if (hs_query(sh->ss, text, 0, &a) != HS_OK) {
		ret = sh_error(sh, NULL, "%s", hs_errmsg(sh->ss));
	} else if (a.incomplete) {
		*incomplete = true;
	} else if (a.ran == HS_RAN_PUSHDOWN) {
		sh_show_pushdown(sh, &a.pd);
	} else if (a.ran == HS_RAN_JVM) {
		ret = sh_show_jvm(sh, text, where, first_line, &a);
	} else if (a.ran == HS_RAN_HEAP) {
		struct arena scratch = {NULL, 0};	/* texts made while printing */
		for (int k = 0; k < a.out.n; k++)
			sh_show_value(sh, a.out.vals[k], &scratch);
		out_flush();
		arena_free(&scratch);
		if (a.error) {
			sh_query_report(sh, text, where, first_line, &a.err);
			ret = HS_ERR;
		}
	}
	hs_answer_free(sh->ss, &a);
	hs_interrupted = 0;
	return ret;
}
