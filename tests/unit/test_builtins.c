/*
 * test_builtins.c - the table of the query language's built-ins
 * (src/dsl/builtins.h): one row per (name, receiver), lookups, the names
 * the messages list, and tests/data/builtins.txt, one query per row, which
 * must name every row with its "where"; its queries run on the tiny heap
 * (tests/fuzz/tiny_heap.h), so that every row has a case in the dump
 * evaluator, and plan_live_reason sends exactly the dump-only and
 * heapsh-only ones away from a JVM (t_live.sh runs the others inside one).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/heapsh.h"
#include "../../src/dsl/arena.h"
#include "../../src/dsl/builtins.h"
#include "../../src/dsl/parse.h"
#include "../../src/dsl/plan.h"
#include "../fuzz/tiny_heap.h"

/* Every (name, receiver) once; ids in range; an alias follows its row. */
static void table(void **state)
{
	(void)state;
	int n;
	const struct bi_row *r = bi_rows(&n);
	assert_true(n > 60);
	for (int k = 0; k < n; k++) {
		assert_true(r[k].recv < BI_NRECV);
		assert_true(r[k].id < BI_NIDS);
		assert_true(r[k].min_args <= r[k].max_args);
		assert_ptr_equal(bi_lookup(r[k].name, r[k].recv), &r[k]);
		assert_int_equal(bi_id_of(r[k].name, r[k].recv), r[k].id);
		for (int j = 0; j < k; j++)
			if (r[j].recv == r[k].recv && !strcmp(r[j].name, r[k].name))
				fail_msg("two rows for %s of a %s", r[k].name, bi_recv_name(r[k].recv));
		if (r[k].flags & BI_ALIAS) {
			int j = k - 1;
			while (j >= 0 && (r[j].flags & BI_ALIAS))
				j--;
			assert_true(j >= 0);
			assert_int_equal(r[j].id, r[k].id);
			assert_int_equal(r[j].recv, r[k].recv);
			assert_int_equal(r[j].where, r[k].where);
		}
		if (k)	/* grouped by receiver */
			assert_true(r[k - 1].recv <= r[k].recv);
	}
	/* every id has a row */
	for (int id = 0; id < BI_NIDS; id++) {
		bool found = false;
		for (int k = 0; k < n && !found; k++)
			found = (int)r[k].id == id;
		if (!found)
			fail_msg("id %d has no row", id);
	}
	assert_null(bi_lookup("nosuch", BI_R_LIST));
	assert_null(bi_lookup("retained", BI_R_LIST));
	assert_null(bi_lookup(NULL, BI_R_LIST));
	assert_int_equal(bi_id_of("nosuch", BI_R_OBJECT), BI_NIDS);
	assert_int_equal(bi_lookup("size", BI_R_LIST)->id, BI_LIST_LENGTH);
	assert_int_equal(bi_lookup("size", BI_R_OBJECT)->id, BI_OBJ_SIZE);
	assert_int_equal(bi_member_where("retained"), BI_DUMP);
	assert_int_equal(bi_member_where("roots"), BI_DUMP);
	assert_int_equal(bi_member_where("count"), BI_ANYWHERE);
	assert_int_equal(bi_member_where("customer"), BI_ANYWHERE);	/* a Java field */
}

/* The fuzzer's dictionary (tests/fuzz/query.dict) holds every name of the table. */
static void dictionary(void **state)
{
	(void)state;
	FILE *f = fopen("tests/fuzz/query.dict", "r");
	assert_non_null(f);
	static char dict[1 << 16];
	size_t len = fread(dict, 1, sizeof dict - 1, f);
	fclose(f);
	dict[len] = 0;
	int n;
	const struct bi_row *r = bi_rows(&n);
	for (int k = 0; k < n; k++) {
		char quoted[64];
		snprintf(quoted, sizeof quoted, "\n\"%s\"\n", r[k].name);
		if (!strstr(dict, quoted))
			fail_msg("tests/fuzz/query.dict lacks \"%s\"", r[k].name);
	}
}

/* The names the messages of an unknown member list, as they always read. */
static void lists(void **state)
{
	(void)state;
	char b[300];
	assert_string_equal(bi_list(BI_R_LIST, b, sizeof b),
			    "filter, map, exists, foreach, count, sum, min, max, sort_by, top, "
			    "first, group_by, contains, length");
	assert_string_equal(bi_list(BI_R_LOADER, b, sizeof b), "id, name, classes, object");
	assert_string_equal(bi_list(BI_R_THREAD, b, sizeof b), "name, object, roots, id, frames");
	assert_string_equal(bi_list(BI_R_OBJECT, b, sizeof b),
			    "class, size, id, retained, dynamic_size, dynamic_size_est, refs, "
			    "referrers, length, elements, text, kind, heap");
	assert_string_equal(bi_list(BI_R_CLASS, b, sizeof b),
			    "name, classloader, super, instances, count, object, id, instance_size, "
			    "shallow");
	assert_string_equal(bi_list(BI_R_GLOBAL, b, sizeof b),
			    "objects, classes, classloaders, threads, allocations, THIS, REFERRER, "
			    "ENTITY, ref_kind");
	char small[12];
	bi_list(BI_R_LIST, small, sizeof small);
	assert_string_equal(small, "filter, map");
}

static enum bi_recv recv_of(const char *s)
{
	for (int r = 0; r < BI_NRECV; r++)
		if (!strcmp(bi_recv_name((enum bi_recv)r), s))
			return (enum bi_recv)r;
	fail_msg("builtins.txt: no receiver kind '%s'", s);
	return BI_NRECV;
}

/* unescape: \n and \t of builtins.txt, in place. */
static void unescape(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (s[0] == '\\' && (s[1] == 'n' || s[1] == 't')) {
			*o++ = s[1] == 'n' ? '\n' : '\t';
			s++;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

/* tiny_path: the tiny heap written to a file in a fresh directory (dir). */
static char dir[64];
static const char *tiny_path(void)
{
	static char path[128];
	strcpy(dir, "/tmp/heapsh-test-builtins-XXXXXX");
	assert_true(tiny_heap_file(dir, path));
	return path;
}

/* One query per row, with its where; each runs on a dump; the planner agrees. */
static void listing(void **state)
{
	(void)state;
	FILE *f = fopen("tests/data/builtins.txt", "r");
	assert_non_null(f);
	int n;
	const struct bi_row *rows = bi_rows(&n);
	int *seen = calloc((size_t)n, sizeof *seen);
	const char *path = tiny_path();
	struct hs_session *s = hs_session_new();
	struct hs_options opt = hs_get_options(s);
	opt.no_index = true;
	hs_set_options(s, &opt);
	assert_int_equal(hs_open(s, path), HS_OK);
	struct dsl *q = hs_dsl(s);
	char line[2048];
	int lines = 0;
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		line[strcspn(line, "\n")] = 0;
		char recv[32], names[128], where[32];
		int off = 0;
		assert_int_equal(sscanf(line, "%31s %127s %31s %n", recv, names, where, &off), 3);
		char *text = line + off;
		unescape(text);
		enum bi_recv r = recv_of(recv);
		for (char *nm = strtok(names, ","); nm; nm = strtok(NULL, ",")) {
			const struct bi_row *row = bi_lookup(nm, r);
			if (!row)
				fail_msg("builtins.txt: %s of a %s is not in the table", nm, recv);
			if (strcmp(bi_where_name(row->where), where))
				fail_msg("builtins.txt: %s of a %s runs %s, the table says %s", nm, recv,
					 where, bi_where_name(row->where));
			seen[row - rows]++;
		}
		/* the planner: what cannot run inside a JVM, and why */
		struct arena a = {0};
		struct stmt **st;
		int ns;
		struct hs_error err;
		assert_int_equal(parse_snippet(text, &a, &st, &ns, &err), PARSE_OK);
		char why[300];
		const char *reason = plan_live_reason(st, ns, why, sizeof why);
		if (!strcmp(where, "anywhere") && reason)
			fail_msg("%s: sent to a snapshot: %s", text, reason);
		if (strcmp(where, "anywhere") && !reason)
			fail_msg("%s: not sent to a snapshot", text);
		if (!strcmp(where, "dump"))
			assert_non_null(strstr(reason, "which needs the whole object graph"));
		arena_free(&a);
		/* the dump evaluator has a case for it */
		if (strcmp(where, "heapsh")) {
			struct dsl_output out;
			if (dsl_run(q, text, &out, &err) != PARSE_OK)
				fail_msg("%s: %s", text, err.msg);
			assert_true(out.n > 0);
			dsl_output_done(q, &out);
		}
		lines++;
	}
	fclose(f);
	assert_true(lines > 40);
	for (int k = 0; k < n; k++)
		if (seen[k] != 1)
			fail_msg("builtins.txt names %s of a %s %d times", rows[k].name,
				 bi_recv_name(rows[k].recv), seen[k]);
	free(seen);
	hs_session_free(s);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table),
		cmocka_unit_test(lists),
		cmocka_unit_test(dictionary),
		cmocka_unit_test(listing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
