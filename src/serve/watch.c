/*
 * watch.c - the exporter's watch file (docs/fleet.md, "Watch queries"):
 * lines "NAME: QUERY" read and checked once at start, and the durations of
 * its options (--every, --time-limit). See serve.h.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../heapsh.h"
#include "serve.h"

bool srv_parse_duration(const char *text, uint64_t *ms)
{
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (end == text || errno || v < 0)
		return false;
	double scale;
	if (!strcmp(end, "ms"))
		scale = 1;
	else if (!*end || !strcmp(end, "s"))
		scale = 1000;
	else if (!strcmp(end, "m"))
		scale = 60000;
	else if (!strcmp(end, "h"))
		scale = 3600000;
	else
		return false;
	double r = v * scale;
	if (r > 86400000.0)
		return false;
	*ms = r < 1 ? 1 : (uint64_t)r;
	return true;
}

/* valid_name: a watch query's name: letters, digits, '_', '.', '-'. */
static bool valid_name(const char *s, size_t n)
{
	if (!n || n > 200)
		return false;
	for (size_t k = 0; k < n; k++)
		if (!isalnum((unsigned char)s[k]) && s[k] != '_' && s[k] != '.' && s[k] != '-')
			return false;
	return true;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

bool srv_watch_load(struct srv_config *c, const char *path, char *why, size_t cap)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(why, cap, "cannot read the watch file %s: %s", path, strerror(errno));
		return false;
	}
	/* A session with no heap and no JVM: hs_explain parses, and runs nothing. */
	struct hs_session *s = hs_session_new();
	char *line = NULL;
	size_t lcap = 0;
	int lineno = 0, cw = 0;
	while (getline(&line, &lcap, f) > 0) {
		lineno++;
		char *t = trim(line);
		if (!*t || *t == '#')
			continue;
		char *colon = strchr(t, ':'), *name_end = colon;
		while (name_end && name_end > t && isspace((unsigned char)name_end[-1]))
			name_end--;
		if (c->nwatch == cw) {
			cw = cw ? 2 * cw : 8;
			c->watch = xreallocarray(c->watch, (size_t)cw, sizeof *c->watch);
		}
		struct srv_watch *w = &c->watch[c->nwatch++];
		memset(w, 0, sizeof *w);
		w->line = lineno;
		if (!colon || !valid_name(t, (size_t)(name_end - t))) {
			w->name = xasprintf("line%d", lineno);
			w->query = xstrdup(t);
			snprintf(w->bad, sizeof w->bad, "not NAME: QUERY (a name of letters, digits, "
				 "'_', '.' and '-', a colon, then the query)");
		} else {
			w->name = xstrndup(t, (size_t)(name_end - t));
			w->query = xstrdup(trim(colon + 1));
			for (int k = 0; k < c->nwatch - 1 && !w->bad[0]; k++)
				if (!strcmp(c->watch[k].name, w->name))
					snprintf(w->bad, sizeof w->bad, "the name %s is already used on "
						 "line %d", w->name, c->watch[k].line);
			bool incomplete = false;
			char *where = NULL;
			if (!w->bad[0] && !*w->query)
				snprintf(w->bad, sizeof w->bad, "no query after the colon");
			else if (!w->bad[0] && hs_explain(s, w->query, &incomplete, &where) != HS_OK)
				snprintf(w->bad, sizeof w->bad, "syntax error: %s", hs_errmsg(s));
			else if (!w->bad[0] && incomplete)
				snprintf(w->bad, sizeof w->bad, "syntax error: the query is not complete "
					 "(a watch query is one line)");
			free(where);
		}
		if (w->bad[0])
			srv_log("%s:%d: %s: %s; the other queries are served", path, lineno, w->name,
				w->bad);
	}
	free(line);
	fclose(f);
	hs_session_free(s);
	return true;
}

void srv_watch_free(struct srv_config *c)
{
	for (int k = 0; k < c->nwatch; k++) {
		free(c->watch[k].name);
		free(c->watch[k].query);
	}
	free(c->watch);
	c->watch = NULL;
	c->nwatch = 0;
}
