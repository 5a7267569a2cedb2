/* out.c - table, CSV and JSON output; see out.h. */
#include "out.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"

enum out_mode out_mode = OUT_TABLE;

static FILE *redirected;	/* out_redirect's stream; NULL: stdout */

FILE *out_redirect(FILE *f)
{
	FILE *prev = redirected;
	redirected = f;
	return prev;
}

FILE *out_stream(void)
{
	return redirected ? redirected : stdout;
}

int out_mode_parse(const char *s)
{
	if (!strcmp(s, "table"))
		return OUT_TABLE;
	if (!strcmp(s, "csv"))
		return OUT_CSV;
	if (!strcmp(s, "json"))
		return OUT_JSON;
	return -1;
}

const char *out_mode_name(enum out_mode m)
{
	return m == OUT_CSV ? "csv" : m == OUT_JSON ? "json" : "table";
}

void out_printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(out_stream(), fmt, ap);
	va_end(ap);
}

void out_flush(void)
{
	fflush(out_stream());
}

struct cell {
	char *text;	/* NULL for a null cell */
	bool num;	/* a number: right-aligned, unquoted in JSON */
	bool json_num;	/* a number in JSON only: a value in a column of text */
};

struct out_table {
	int ncols;
	char **cols;
	struct cell *cells;
	size_t ncells, cap;
};

struct out_table *out_table_new(int ncols, const char *const *cols)
{
	struct out_table *t = xcalloc(1, sizeof *t);
	t->ncols = ncols;
	t->cols = xcalloc((size_t)ncols, sizeof *t->cols);
	for (int c = 0; c < ncols; c++)
		t->cols[c] = xstrdup(cols[c]);
	return t;
}

static void add(struct out_table *t, char *text, bool num)
{
	if (t->ncells == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->cells = xreallocarray(t->cells, t->cap, sizeof *t->cells);
	}
	t->cells[t->ncells++] = (struct cell){text, num, num};
}

void out_cell_str(struct out_table *t, const char *s)
{
	add(t, s ? xstrdup(s) : NULL, false);
}

void out_cell_u64(struct out_table *t, uint64_t v)
{
	add(t, xasprintf("%llu", (unsigned long long)v), true);
}

void out_cell_i64(struct out_table *t, int64_t v)
{
	add(t, xasprintf("%lld", (long long)v), true);
}

void out_cell_num(struct out_table *t, const char *text)
{
	add(t, xstrdup(text), true);
}

void out_cell_value(struct out_table *t, const char *text)
{
	bool number = text[0] != 0;
	for (const char *p = text + (text[0] == '-'); *p && number; p++)
		number = *p >= '0' && *p <= '9';
	add(t, xstrdup(text), false);
	t->cells[t->ncells - 1].json_num = number && text[text[0] == '-'] != 0 &&
					   strlen(text) < 19;
}

void out_cell_null(struct out_table *t)
{
	add(t, NULL, false);
}

void out_cell_fmt(struct out_table *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	add(t, s, false);
}

void out_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static void csv_field(FILE *f, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* Display width of UTF-8 text: one column per code point. */
static size_t width(const char *s)
{
	size_t w = 0;
	for (; s && *s; s++)
		w += ((unsigned char)*s & 0xC0) != 0x80;
	return w;
}

void out_table_end(struct out_table *t)
{
	FILE *f = out_stream();
	size_t nrows = t->ncells / (size_t)t->ncols;
	if (out_mode == OUT_CSV) {
		for (int c = 0; c < t->ncols; c++) {
			if (c)
				fputc(',', f);
			csv_field(f, t->cols[c]);
		}
		fputc('\n', f);
		for (size_t r = 0; r < nrows; r++) {
			for (int c = 0; c < t->ncols; c++) {
				if (c)
					fputc(',', f);
				csv_field(f, t->cells[r * (size_t)t->ncols + (size_t)c].text);
			}
			fputc('\n', f);
		}
	} else if (out_mode == OUT_JSON) {
		fputs("[", f);
		for (size_t r = 0; r < nrows; r++) {
			fputs(r ? ",\n {" : "\n {", f);
			for (int c = 0; c < t->ncols; c++) {
				struct cell *cl = &t->cells[r * (size_t)t->ncols + (size_t)c];
				if (c)
					fputs(", ", f);
				out_json_string(f, t->cols[c]);
				fputs(": ", f);
				if (!cl->text)
					fputs("null", f);
				else if (cl->json_num)
					fputs(cl->text, f);
				else
					out_json_string(f, cl->text);
			}
			fputc('}', f);
		}
		fputs(nrows ? "\n]\n" : "]\n", f);
	} else {
		size_t *w = xcalloc((size_t)t->ncols, sizeof *w);
		bool *num = xcalloc((size_t)t->ncols, sizeof *num);
		for (int c = 0; c < t->ncols; c++)
			w[c] = width(t->cols[c]);
		for (size_t r = 0; r < nrows; r++)
			for (int c = 0; c < t->ncols; c++) {
				struct cell *cl = &t->cells[r * (size_t)t->ncols + (size_t)c];
				size_t cw = cl->text ? width(cl->text) : 1;
				if (cw > w[c])
					w[c] = cw;
				if (cl->num)
					num[c] = true;
			}
		for (int pass = 0; pass < 2; pass++) {
			for (int c = 0; c < t->ncols; c++) {
				const char *s = t->cols[c];
				size_t pad = w[c] - width(s);
				if (c)
					fputs("  ", f);
				if (pass == 1) {
					for (size_t k = 0; k < w[c]; k++)
						fputc('-', f);
					continue;
				}
				if (num[c])
					for (size_t k = 0; k < pad; k++)
						fputc(' ', f);
				fputs(s, f);
				if (!num[c] && c + 1 < t->ncols)
					for (size_t k = 0; k < pad; k++)
						fputc(' ', f);
			}
			fputc('\n', f);
		}
		for (size_t r = 0; r < nrows; r++) {
			for (int c = 0; c < t->ncols; c++) {
				struct cell *cl = &t->cells[r * (size_t)t->ncols + (size_t)c];
				const char *s = cl->text ? cl->text : "-";
				size_t pad = w[c] - width(s);
				if (c)
					fputs("  ", f);
				if (num[c])
					for (size_t k = 0; k < pad; k++)
						fputc(' ', f);
				fputs(s, f);
				if (!num[c] && c + 1 < t->ncols)
					for (size_t k = 0; k < pad; k++)
						fputc(' ', f);
			}
			fputc('\n', f);
		}
		free(w);
		free(num);
	}
	for (size_t k = 0; k < t->ncells; k++)
		free(t->cells[k].text);
	free(t->cells);
	for (int c = 0; c < t->ncols; c++)
		free(t->cols[c]);
	free(t->cols);
	free(t);
}
