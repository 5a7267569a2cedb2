/*
 * waste_cmds.c - :duplicates and :collections, the engine's waste analyses
 * (src/engine/waste.h) as tables with the columns of the Lua scripts they
 * replace (lua/duplicate_strings.lua, lua/collections.lua), so that their
 * CSV and JSON are the scripts' own.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../base/fmt.h"
#include "../out/out.h"
#include "sh.h"

/* whole: s, the value of option opt, as a whole number >= 0 into *v; reports the error. */
static int whole(struct sh *sh, const char *opt, const char *s, uint32_t *v)
{
	char *end;
	errno = 0;
	unsigned long x = strtoul(s, &end, 10);
	if (!*s || *end || errno || x > UINT32_MAX || s[0] == '-')
		return sh_error(sh, NULL, "%s takes a whole number, not '%s'", opt, s);
	*v = (uint32_t)x;
	return HS_OK;
}

int sh_cmd_duplicates(struct sh *sh, int argc, char **argv)
{
	static const char usage[] = ":duplicates [--top N] [--min-count N] [--width N]";
	uint32_t top = 20, min_count = 2, width = 40;
	for (int a = 1; a < argc; a += 2) {	/* every option takes a value */
		uint32_t *v = !strcmp(argv[a], "--top") ? &top
			      : !strcmp(argv[a], "--min-count") ? &min_count
			      : !strcmp(argv[a], "--width") ? &width : NULL;
		if (!v)
			return sh_error(sh, NULL, "unknown argument '%s'; usage: %s", argv[a], usage);
		if (a + 1 >= argc)
			return sh_error(sh, NULL, "%s takes a whole number; usage: %s", argv[a], usage);
		if (whole(sh, argv[a], argv[a + 1], v))
			return HS_ERR;
	}
	if (sh_need_heap(sh))
		return HS_ERR;
	struct waste_dup *rows;
	uint32_t n;
	if (waste_dup_strings(hs_heap(sh->ss), min_count, &rows, &n) != HS_OK)
		return sh_error(sh, NULL, "interrupted");
	static const char *const cols[] = {"text", "length", "count", "copy_bytes", "total_bytes",
					   "wasted_bytes"};
	struct out_table *t = out_table_new(6, cols);
	uint32_t shown = top && top < n ? top : n;
	uint64_t wasted = 0;
	for (uint32_t k = 0; k < n; k++) {
		wasted += rows[k].wasted_bytes;
		if (k >= shown)
			continue;
		char *text = waste_text_show(rows[k].text, width);
		out_cell_str(t, text);
		free(text);
		out_cell_u64(t, rows[k].length);
		out_cell_u64(t, rows[k].count);
		out_cell_u64(t, rows[k].copy_bytes);
		out_cell_u64(t, rows[k].total_bytes);
		out_cell_u64(t, rows[k].wasted_bytes);
	}
	out_table_end(t);
	if (out_mode == OUT_TABLE) {
		char cnt[32], bytes[32];
		out_printf("%s text%s held by %u or more Strings waste %s in all",
			   fmt_count(cnt, sizeof cnt, n), fmt_s(n), min_count > 1 ? min_count : 1,
			   fmt_bytes(bytes, sizeof bytes, wasted));
		if (shown < n)
			out_printf("; the first %u shown (--top 0 for all)", shown);
		out_printf("\n");
	}
	waste_dup_free(rows, n);
	return HS_OK;
}

int sh_cmd_collections(struct sh *sh, int argc, char **argv)
{
	static const char usage[] = ":collections [--threshold PCT] [--all]";
	double threshold = 25;
	bool all = false;
	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--all")) {
			all = true;
		} else if (!strcmp(argv[a], "--threshold")) {
			if (a + 1 >= argc)
				return sh_error(sh, NULL, "--threshold takes a percentage (0 to 100); "
						"usage: %s", usage);
			char *end;
			const char *s = argv[++a];
			threshold = strtod(s, &end);
			if (!*s || *end || !(threshold >= 0 && threshold <= 100))
				return sh_error(sh, NULL, "--threshold takes a percentage (0 to 100), "
						"not '%s'", s);
		} else {
			return sh_error(sh, NULL, "unknown argument '%s'; usage: %s", argv[a], usage);
		}
	}
	if (sh_need_heap(sh))
		return HS_ERR;
	struct waste_coll *rows, total;
	uint32_t n;
	if (waste_collections(hs_heap(sh->ss), threshold, all, &rows, &n, &total) != HS_OK)
		return sh_error(sh, NULL, "interrupted");
	static const char *const cols[] = {"class", "kind", "instances", "empty", "sparse",
					   "unused_slots", "wasted_bytes"};
	struct out_table *t = out_table_new(7, cols);
	for (uint32_t k = 0; k <= n; k++) {
		const struct waste_coll *r = k < n ? &rows[k] : &total;
		out_cell_str(t, r->name);
		out_cell_str(t, r->kind);
		out_cell_u64(t, r->instances);
		out_cell_u64(t, r->empty);
		out_cell_u64(t, r->sparse);
		out_cell_i64(t, r->unused_slots);
		out_cell_i64(t, r->wasted_bytes);
	}
	out_table_end(t);
	free(rows);
	return HS_OK;
}
