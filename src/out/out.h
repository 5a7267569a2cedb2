/*
 * out.h - the output modes the front ends share (docs/architecture.md):
 * every byte the shell and the Lua module's print_table show goes through
 * here, in one of three modes: an aligned table, CSV (RFC 4180 quoting) or
 * JSON (an array of objects, one per row). Tests capture stdout. Nothing
 * below the front ends (the session and the layers under it) prints.
 *
 * Ownership: out_table_new returns a table freed by out_table_end.
 */
#ifndef HS_OUT_H
#define HS_OUT_H

#include <stdint.h>
#include <stdio.h>

enum out_mode { OUT_TABLE, OUT_CSV, OUT_JSON };

extern enum out_mode out_mode;

/* out_mode_parse: "table", "csv", "json" -> mode; -1 if unknown. */
int out_mode_parse(const char *s);
const char *out_mode_name(enum out_mode m);

/* out_printf: formatted text to the shell's output (stdout, or out_redirect's stream). */
void out_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void out_flush(void);

/*
 * out_redirect: send the output (out_printf, tables, out_stream) to f
 * instead of stdout from now on, e.g. an open_memstream of heapsh --mcp,
 * which answers with a command's output; NULL goes back to stdout. Returns
 * the stream used before (NULL: stdout), to put back. f stays the caller's:
 * it must stay open while it is in use; out_flush flushes it.
 */
FILE *out_redirect(FILE *f);
/* out_stream: where the output goes now (stdout unless redirected). */
FILE *out_stream(void);

struct out_table;

/*
 * out_table_new: a table with ncols columns named cols[] (the CSV header
 * and JSON keys). Cells are added row by row, left to right.
 */
struct out_table *out_table_new(int ncols, const char *const *cols);
/* A text cell (quoted in JSON) and a numeric cell (bare in JSON, right-aligned). */
void out_cell_str(struct out_table *t, const char *s);
void out_cell_u64(struct out_table *t, uint64_t v);
void out_cell_i64(struct out_table *t, int64_t v);
void out_cell_num(struct out_table *t, const char *text);	/* already formatted */
/* out_cell_value: text as it is, but a JSON number when it is a whole number (as in :info). */
void out_cell_value(struct out_table *t, const char *text);
void out_cell_null(struct out_table *t);
void out_cell_fmt(struct out_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* out_table_end: print the table in the current mode and free it. */
void out_table_end(struct out_table *t);

/* out_json_string: s as a JSON string literal on f. */
void out_json_string(FILE *f, const char *s);

#endif
