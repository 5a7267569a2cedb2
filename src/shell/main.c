/*
 * main.c - heapsh's entry point: options, loading, and one
 * sh_process_input for typed input, -f FILE, :load and -c.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "le.h"
#include "../out/out.h"
#include "sh.h"
#include "../base/big.h"
#include "../serve/heapsh_serve.h"

static volatile sig_atomic_t at_prompt;

static void on_sigint(int sig)
{
	(void)sig;
	if (sh_current && sh_current->ss)
		hs_interrupt(sh_current->ss);
	hs_ctx_interrupt(hs_ctx_now());	/* a Lua heap's session, while a script runs */
	if (at_prompt)
		le_interrupt();
}

/*
 * on_sigbus: a read of a mapped dump or index past its end, because the
 * file was cut short or is being rewritten in place since heapsh mapped
 * it (src/base/filemap.h): say which file and stop (exit status 2), not
 * crash. Any other SIGBUS is a fault of heapsh's: the default action
 * (SA_RESETHAND restored it) when the read is tried again.
 */
static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	static char msg[HS_FAULT_TEXT];
	if (!hs_fault_text(si->si_addr, msg, sizeof msg))
		return;
	ssize_t w = write(STDERR_FILENO, msg, strlen(msg));
	(void)w;
	_exit(2);
}

/* The progress bar of loading a dump: stderr only, and only when it is a terminal. */
static void load_progress(void *ctx, const char *path, double f)
{
	(void)ctx;
	int w = 30, done = (int)(f * w);
	char bar[64];
	for (int k = 0; k < w; k++)
		bar[k] = k < done ? '#' : ' ';
	bar[w] = 0;
	fprintf(stderr, "\rloading %s [%s] %3d%%", path, bar, (int)(f * 100));
	if (f >= 1.0)
		fprintf(stderr, "\r\033[K");
	fflush(stderr);
}

/* snap_progress: a snapshot arriving from the agent; UINT64_MAX when it is in. */
static void snap_progress(void *ctx, uint64_t bytes)
{
	(void)ctx;
	if (bytes == UINT64_MAX)
		fprintf(stderr, "\r\033[K");
	else
		fprintf(stderr, "\rreceiving the snapshot: %" PRIu64 " MB", bytes >> 20);
}

/* stage: long work in the session, shown as progress (sh_progress_begin). */
static void stage(void *ctx, const char *label)
{
	(void)ctx;
	if (label)
		sh_progress_begin("%s", label);
	else
		sh_progress_end();
}

/* notice: what the session has to say, shown as the shell's modes ask. */
static void notice(void *ctx, enum hs_notice when, const char *text)
{
	struct sh *sh = ctx;
	bool tty = isatty(STDERR_FILENO);
	switch (when) {
	case HS_NOTICE_ERROR: sh_error(sh, NULL, "%s", text); return;
	case HS_NOTICE_TTY: if (!tty) return; break;
	case HS_NOTICE_ECHO: if (!tty && !sh->echo) return; break;
	case HS_NOTICE_TIMER: if (!tty && !sh->timer) return; break;
	case HS_NOTICE_ALWAYS: break;
	}
	out_flush();
	fprintf(stderr, "%s\n", text);
}

void sh_session_hooks(struct sh *sh)
{
	bool tty = isatty(STDERR_FILENO);
	struct hs_callbacks cb = {notice, stage, tty ? load_progress : NULL,
				  tty ? snap_progress : NULL, sh};
	hs_set_callbacks(sh->ss, &cb);
}

/* split: words separated by blanks; "..." and '...' group. */
static int split(char *line, char **argv, int cap)
{
	int argc = 0;
	char *p = line, *o;
	while (*p) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		if (argc == cap - 1)
			break;
		argv[argc++] = o = p;
		while (*p && *p != ' ' && *p != '\t') {
			if (*p == '"' || *p == '\'') {
				char q = *p++;
				while (*p && *p != q)
					*o++ = *p++;
				if (*p)
					p++;
			} else {
				*o++ = *p++;
			}
		}
		if (*p)
			p++;
		*o = 0;
	}
	argv[argc] = NULL;
	return argc;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int timed_query(struct sh *sh, const char *text, const char *where, int first,
		       bool *incomplete)
{
	double t0 = now_ms();
	int st = sh_query(sh, text, where, first, incomplete);
	if (sh->timer && !*incomplete) {
		out_flush();	/* what came before it first, in one file too */
		fprintf(stderr, "time: %.1f ms\n", now_ms() - t0);
	}
	return st;
}

static int execute(struct sh *sh, const char *line, const char *where);

int sh_execute(struct sh *sh, const char *line, const char *where)
{
	/* What the library cannot go on with (no memory, no disk for a big
	 * array) in a command's own calls of the engine ends the command with
	 * its message; the session's calls say it themselves (hs_enter). */
	const char *outer = sh->where;
	struct hs_catch c;
	hs_catch_push(&c);
	int st;
	if (setjmp(c.jb)) {
		sh->where = outer;
		sh_progress_end();
		st = sh_error(sh, where, "%s", c.msg);
	} else {
		st = execute(sh, line, where);
		hs_catch_pop(&c);
	}
	hs_enter(sh->ss);
	hs_rest(sh->ss);	/* what the command freed is not kept while the shell waits */
	return st;
}

static int execute(struct sh *sh, const char *line, const char *where)
{
	{
		const char *t = line;
		while (*t == ' ' || *t == '\t')
			t++;
		if (!strncmp(t, ":lua ", 5) || !strncmp(t, ":lua\t", 5)) {
			const char *saved = sh->where;
			sh->where = where;
			int st = sh_lua_run(sh, t + 5, where ? where : ":lua");
			sh->where = saved;
			return st;
		}
	}
	while (*line == ' ' || *line == '\t')
		line++;
	if (!*line || !strncmp(line, "//", 2) || (*line == '#' && line[1] != '['))
		return HS_OK;
	if (*line != ':') {
		bool incomplete;
		int st = timed_query(sh, line, where, 0, &incomplete);
		if (incomplete)
			return sh_error(sh, where, "the query is incomplete (an open bracket, a "
					"dangling operator, or a set_type without instances_for)");
		return st;
	}
	char *copy = xstrdup(line + 1);
	char *argv[64];
	int argc = split(copy, argv, 64);
	int st = HS_ERR;
	if (argc == 0) {
		sh_error(sh, where, "empty command; :help lists the commands");
		goto done;
	}
	const struct sh_command *c;
	for (c = sh_commands; c->name; c++)
		if (!strcmp(c->name, argv[0]) || (!strcmp(argv[0], "exit") && !strcmp(c->name, "quit")))
			break;
	if (!c->name) {
		const char *names[128];
		int n = 0;
		for (const struct sh_command *k = sh_commands; k->name && n < 128; k++)
			names[n++] = k->name;
		char sug[256];
		hs_suggest(sug, sizeof sug, argv[0], names, n, ":");
		sh_error(sh, where, "unknown command ':%s'%s%s:help lists the commands%s", argv[0], sug,
			 sug[0] ? " (" : "; ", sug[0] ? ")" : "");
		goto done;
	}
	hs_interrupted = 0;
	const char *outer = sh->where;
	sh->where = where;
	double t0 = now_ms();
	unsigned long errors = sh->nerrors;
	st = c->run(sh, argc, argv);
	if (sh->timer && strcmp(c->name, "timer")) {
		out_flush();	/* what came before it first, in one file too */
		fprintf(stderr, "time: %.1f ms\n", now_ms() - t0);
	}
	sh->where = outer;
	/* One line per Ctrl-C: the command's own "interrupted", or this one. */
	if (hs_interrupted && sh->nerrors == errors) {
		out_flush();	/* what came before it first, in one file too */
		fprintf(stderr, "heapsh: interrupted; back at the prompt\n");
	}
	hs_interrupted = 0;
	out_flush();
done:
	free(copy);
	return st;
}

/* is_command: a ':' command or a comment, rather than query text. */
static bool is_command(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == ':' || (*s == '#' && s[1] != '[');
}

/* append_line: text and a newline at the end of *buf (*len bytes so far). */
static void append_line(char **buf, size_t *len, const char *text)
{
	size_t tl = strlen(text);
	*buf = xrealloc(*buf, *len + tl + 2);
	memcpy(*buf + *len, text, tl);
	*len += tl;
	(*buf)[(*len)++] = '\n';
	(*buf)[*len] = 0;
}

/* is_lua_start: a line ":lua" alone opens a block of Lua code ended by ":end". */
static bool is_lua_start(const char *text)
{
	while (*text == ' ' || *text == '\t')
		text++;
	if (strncmp(text, ":lua", 4))
		return false;
	for (text += 4; *text; text++)
		if (*text != ' ' && *text != '\t')
			return false;
	return true;
}

int sh_process_input(struct sh *sh, FILE *f, const char *name)
{
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0, st = HS_OK, first = 0;
	bool tty = !f && isatty(STDIN_FILENO);
	char *pending = NULL;	/* query text waiting for its end */
	char *lua_block = NULL;	/* a :lua block waiting for :end */
	size_t lua_len = 0;
	int lua_first = 0;
	size_t plen = 0;
	char where[512];
	while (!sh->quit) {
		char *text;
		if (f) {
			ssize_t n = getline(&line, &cap, f);
			if (n < 0)
				break;
			if (n && line[n - 1] == '\n')
				line[--n] = 0;
			text = line;
		} else {
			at_prompt = 1;
			char *prompt;
			if (lua_block)
				prompt = xstrdup("   lua> ");
			else if (pending)
				prompt = xstrdup("   ...> ");
			else if (sh_is_live(sh))
				prompt = sh_live_prompt(sh);
			else if (hs_heap(sh->ss))
				prompt = xasprintf("heapsh %s> ", strrchr(hs_dump_path(sh->ss), '/')
						   ? strrchr(hs_dump_path(sh->ss), '/') + 1 : hs_dump_path(sh->ss));
			else
				prompt = xstrdup("heapsh> ");
			text = le_readline(prompt);
			free(prompt);
			at_prompt = 0;
			if (!text) {
				if (tty)
					out_printf("\n");
				break;
			}
			if (hs_interrupted && pending) {
				/* Ctrl-C at a continuation prompt drops the unfinished query */
				free(pending);
				pending = NULL;
				plen = 0;
			}
			le_add_history(text);
			free(line);
			line = text;
			hs_interrupted = 0;
		}
		lineno++;
		if (lua_block) {
			const char *t = text;
			while (*t == ' ' || *t == '\t')
				t++;
			if (strcmp(t, ":end")) {
				append_line(&lua_block, &lua_len, text);
				continue;
			}
			snprintf(where, sizeof where, "%s:%d", name, lua_first);
			if (sh_lua_run(sh, lua_block, where) != HS_OK)
				st = HS_ERR;
			free(lua_block);
			lua_block = NULL;
			continue;
		}
		if (!pending && is_lua_start(text)) {
			lua_block = xstrdup("");
			lua_len = 0;
			lua_first = lineno + 1;
			if (sh->echo)
				out_printf("heapsh> %s\n", text);
			continue;
		}
		if (!pending && is_command(text)) {
			snprintf(where, sizeof where, "%s:%d", name, lineno);
			if (sh->echo && text[0] != '#')
				out_printf("heapsh> %s\n", text);
			if (sh_execute(sh, text, tty ? NULL : where) != HS_OK)
				st = HS_ERR;
			if (sh->echo && text[0] != '#')
				out_printf("\n");
			continue;
		}
		if (!pending) {
			const char *t = text;
			while (*t == ' ' || *t == '\t')
				t++;
			if (!*t)
				continue;
			first = lineno;
		}
		append_line(&pending, &plen, text);
		if (sh->echo)
			out_printf("%s %s\n", first == lineno ? "heapsh>" : "   ...>", text);
		bool incomplete;
		snprintf(where, sizeof where, "%s:%d", name, first);
		if (timed_query(sh, pending, tty ? NULL : where, tty ? 0 : first, &incomplete) != HS_OK)
			st = HS_ERR;
		if (incomplete)
			continue;
		if (sh->echo)
			out_printf("\n");
		free(pending);
		pending = NULL;
		plen = 0;
	}
	if (lua_block) {
		snprintf(where, sizeof where, "%s:%d", name, lua_first);
		sh_error(sh, where, "the input ends inside a :lua block (finish it with a line :end)");
		st = HS_ERR;
		free(lua_block);
	}
	if (pending) {
		snprintf(where, sizeof where, "%s:%d", name, first);
		sh_error(sh, where, "the input ends inside an unfinished query (an open "
			 "bracket, a dangling operator, or a set_type without instances_for)");
		st = HS_ERR;
		free(pending);
	}
	free(line);
	return st;
}

/* add_cand: one completion candidate, skipping duplicates. */
static void add_cand(char **out, int *n, int cap, char *s)
{
	for (int j = 0; j < *n; j++)
		if (!strcmp(out[j], s)) {
			free(s);
			return;
		}
	if (*n < cap)
		out[(*n)++] = s;
	else
		free(s);
}

/*
 * class_of_var: the class a query names for var with "var is C" earlier
 * in the line, so that "it.<Tab>" can offer C's fields; HEAP_NONE if none.
 */
static uint32_t class_of_var(const struct heap *h, const char *line, const char *var)
{
	size_t vl = strlen(var);
	uint32_t found = HEAP_NONE;
	for (const char *p = strstr(line, var); p; p = strstr(p + 1, var)) {
		if ((p > line && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) ||
		    strncmp(p + vl, " is ", 4))
			continue;
		const char *c = p + vl + 4;
		while (*c == ' ')
			c++;
		size_t cl = 0;
		while (isalnum((unsigned char)c[cl]) || c[cl] == '_' || c[cl] == '$' || c[cl] == '.')
			cl++;
		char name[512];
		snprintf(name, sizeof name, "%.*s", (int)cl, c);
		uint32_t *m, n = heap_find_classes(h, name, &m);
		if (n)
			found = m[0];
		free(m);
	}
	return found;
}

/*
 * complete_option: a command's options, and the values of an option
 * written "--by a|b|c" in its usage line, from the command table.
 */
static int complete_option(const char *line, int start, const char *word, char **out, int cap)
{
	size_t nl = strcspn(line + 1, " "), wl = strlen(word);
	const struct sh_command *c = sh_commands;
	while (c->name && (strlen(c->name) != nl || strncmp(c->name, line + 1, nl)))
		c++;
	if (!c->name)
		return 0;
	/* The word before this one, if it is an option taking one of a|b|c. */
	int p = start;
	while (p > 0 && line[p - 1] == ' ')
		p--;
	int q = p;
	while (q > 0 && line[q - 1] != ' ')
		q--;
	int n = 0;
	const char *u = c->usage;
	if (word[0] != '-' && p - q == 6 && !strncmp(line + q, "--heap", 6)) {
		/* an Android dump's heaps (HEAP DUMP INFO) */
		const struct heap *h = sh_current ? hs_heap(sh_current->ss) : NULL;
		for (uint32_t k = 0; h && k < h->nheaps && n < cap; k++)
			if (!strncmp(h->heap_names[k], word, wl))
				out[n++] = xstrdup(h->heap_names[k]);
		return n;
	}
	if (word[0] != '-' && p > q && line[q] == '-') {
		char opt[64];
		snprintf(opt, sizeof opt, "%.*s ", p - q, line + q);
		const char *at = strstr(u, opt);
		if (!at || !strchr(at + strlen(opt), '|'))
			return 0;
		at += strlen(opt);
		while (*at && *at != ' ' && *at != ']' && n < cap) {
			size_t len = strcspn(at, "| ]");
			if (!strncmp(at, word, wl) && len >= wl)
				out[n++] = xstrndup(at, len);
			at += len + (at[len] == '|');
		}
		return n;
	}
	if (word[0] != '-')
		return 0;
	for (const char *at = strstr(u, "--"); at && n < cap; at = strstr(at + 2, "--")) {
		size_t len = strcspn(at, " ]|");
		if (!strncmp(at, word, wl) && len >= wl)
			add_cand(out, &n, cap, xstrndup(at, len));
	}
	return n;
}

int sh_complete(const char *line, int start, const char *word, char **out, int cap)
{
	int n = 0;
	size_t wl = strlen(word);
	int first = 0;
	while (line[first] == ' ')
		first++;
	if (start == first && word[0] == ':') {
		for (const struct sh_command *c = sh_commands; c->name && n < cap; c++)
			if (!strncmp(c->name, word + 1, wl - 1))
				out[n++] = xasprintf(":%s", c->name);
		return n;
	}
	if (line[first] == ':' && !strncmp(line + first, ":help", 5)) {
		for (const struct sh_command *c = sh_commands; c->name && n < cap; c++)
			if (!strncmp(c->name, word, wl))
				out[n++] = xstrdup(c->name);
		return n;
	}
	if (line[first] == ':' && !strncmp(line + first, ":format", 7)) {
		static const char *const modes[] = {"table", "csv", "json"};
		for (int k = 0; k < 3; k++)
			if (!strncmp(modes[k], word, wl))
				out[n++] = xstrdup(modes[k]);
		return n;
	}
	if (line[first] == ':' && (n = complete_option(line + first, start - first, word, out, cap)))
		return n;
	struct heap *h = sh_current ? hs_heap(sh_current->ss) : NULL;
	if (!h || word[0] == '-')
		return 0;
	bool query = line[first] != ':';
	const char *dot = strrchr(word, '.');
	if (query && dot) {
		/* "it.sta": fields of the class "it is C" names, then built-in members */
		char var[256];
		snprintf(var, sizeof var, "%.*s", (int)(dot - word), word);
		uint32_t c = class_of_var(h, line, var);
		const char *part = dot + 1;
		size_t pl = strlen(part);
		for (int depth = 0; c != HEAP_NONE && depth < 64; c = h->classes[c].super, depth++)
			for (unsigned f = 0; f < h->classes[c].nfields; f++)
				if (!strncmp(h->classes[c].fields[f].name, part, pl))
					add_cand(out, &n, cap, xasprintf("%s.%s", var,
									 h->classes[c].fields[f].name));
		/* the members of every kind of value (src/dsl/builtins.h), each name once */
		int nrows;
		const struct bi_row *rows = bi_rows(&nrows);
		if (class_of_var(h, line, var) != HEAP_NONE || !strchr(var, '.'))
			for (int k = 0; k < nrows; k++) {
				const char *m = rows[k].name;
				bool listed = rows[k].recv != BI_R_GLOBAL && !(rows[k].flags & BI_ALIAS);
				for (int j = 0; j < k && listed; j++)
					listed = rows[j].recv == BI_R_GLOBAL || (rows[j].flags & BI_ALIAS) ||
						 strcmp(rows[j].name, m);
				if (listed && !strncmp(m, part, pl))
					add_cand(out, &n, cap, xasprintf("%s.%s", var, m));
			}
		if (n)
			return n;
	}
	if (query) {
		for (int k = 0; parse_keywords[k]; k++)
			if (!strncmp(parse_keywords[k], word, wl))
				add_cand(out, &n, cap, xstrdup(parse_keywords[k]));
		int nn;
		const char **names = dsl_names(hs_dsl(sh_current->ss), &nn);
		for (int k = 0; k < nn; k++)
			if (!strncmp(names[k], word, wl))
				add_cand(out, &n, cap, xstrdup(names[k]));
	}
	for (uint32_t k = 0; k < h->nclasses && n < cap; k++) {
		const char *name = h->classes[k].name;
		if (!strncmp(name, word, wl)) {
			add_cand(out, &n, cap, xstrdup(name));
			continue;
		}
		/* Simple names, as commands and queries take them: Order for com.shop.Order,
		 * Server$Session; commands also take nested names with a dot: Server.Session. */
		const char *simple = strrchr(name, '.');
		if (!simple || !wl)
			continue;
		simple++;
		if (!strncmp(simple, word, wl) && (!query || !strchr(word, '.'))) {
			add_cand(out, &n, cap, xstrdup(simple));
		} else if (!query && strchr(simple, '$')) {
			char *dotted = xstrdup(simple);
			for (char *c = dotted; *c; c++)
				if (*c == '$')
					*c = '.';
			if (!strncmp(dotted, word, wl))
				add_cand(out, &n, cap, dotted);
			else
				free(dotted);
		}
	}
	return n;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: heapsh [options] DUMP|PID\n"
		"       heapsh --export-graph DUMP OUT\n"
		"       heapsh [options] -c COMMAND DUMP|PID\n"
		"       heapsh [options] -f FILE DUMP|PID\n"
		"       heapsh [options] -l SCRIPT.lua [DUMP|PID] [ARGS...]\n"
		"       heapsh [options] --report FILE.html DUMP|PID\n"
		"       heapsh [options] --mcp [DUMP|PID]\n"
		"       heapsh --redact IN OUT [--keep-lengths] [--keep PATTERN]...\n"
		"       heapsh --serve [ADDR:]PORT [--watch FILE] [--every DURATION] [--top N]\n"
		"              [--time-limit DURATION] (--all | PID...)\n"
		"       heapsh [options] diff OLD NEW [--by class|package|path] [--top N]\n"
		"              [--fail-if PATTERN:+PCT%%|PATTERN:+SIZE ...] [--mixed-jdk]\n"
		"\n"
		"Explore a Java heap dump (HPROF, as written by 'jcmd PID GC.heap_dump', gzip'd\n"
		"or not) in an interactive shell. Type :help inside for the commands. A JFR\n"
		"recording (REC.jfr) in place of DUMP opens its allocation events (:alloc).\n"
		"\n"
		"options:\n"
		"  -c COMMAND        run a command and exit; several -c and -f run in turn,\n"
		"                    and the exit status is 2 if any of them failed\n"
		"  -f FILE           run the commands in FILE and exit\n"
		"  -l SCRIPT [ARGS]  run a Lua script (arg[0] = SCRIPT, arg[1..] = ARGS; a\n"
		"                    first ARG that is a dump or pid is opened) and exit\n"
		"  --report FILE.html  write an HTML report of the heap (summary, top\n"
		"                    dominators, leak suspects, classes, duplicate strings,\n"
		"                    wasteful collections) and exit\n"
		"  --mcp             serve the Model Context Protocol on stdin and stdout\n"
		"                    (JSON-RPC, one message a line) for an AI assistant: tools\n"
		"                    open, run (a command or query; JSON results) and help\n"
		"  --format MODE     output mode: table (default), csv or json\n"
		"  --oops 4|8        reference size; detected from the dump when omitted\n"
		"  --layout JDK      lay objects out as that JDK's HotSpot does (8, 11, 17, 25...);\n"
		"                    detected from the dump when omitted\n"
		"  --dump N          a file holding several heap dumps: open the N-th (default 1)\n"
		"  --echo            print each command of -f FILE before its output\n"
		"  --no-weak         engine commands ignore Reference.referent links\n"
		"  --no-index        neither read nor write the index file (DUMP.hsidx)\n"
		"  --keep-agent      on a JVM: leave heapsh's agent loaded when heapsh exits\n"
		"  --no-spill        keep record positions in memory while the dominator tree\n"
		"                    is built (by default they wait in a file under $TMPDIR)\n"
		"  --memory SIZE     memory budget for the heap's and engine's arrays (8G,\n"
		"                    512M; default half the memory, or of the cgroup's limit);\n"
		"                    what does not fit goes to file-backed arrays\n"
		"                    (docs/out-of-core.md); also $HEAPSH_MEMORY\n"
		"  --spill-dir DIR   where those files go (default $TMPDIR, /var/tmp or /tmp,\n"
		"                    not a tmpfs); also $HEAPSH_SPILL_DIR\n"
		"  --serve [ADDR:]PORT  serve metrics of this user's JVMs at /metrics\n"
		"                    (OpenMetrics, for Prometheus; docs/fleet.md);\n"
		"                    heapsh --serve --help lists its options\n"
		"  --redact IN OUT   write a copy of the dump without its values (strings,\n"
		"                    primitive fields and arrays), structure kept; heapsh\n"
		"                    --redact --help lists its options\n"
		"  --export-graph DUMP OUT\n"
		"                    write the engine's graph as text (docs/engine.md) and exit\n"
		"  --version         print the version and exit\n"
		"  -h, --help        this text\n"
		"\n"
		"heapsh diff: what grew from OLD to NEW, largest retained growth first, by\n"
		"class (default), package or merged dominator path, options before or after\n"
		"the dumps (docs/manual.md, \"Comparing dumps\"; :help diff). --fail-if\n"
		"'com.acme.*:+20%%' or ':+50MB': exit 1 when those classes' retained bytes grew\n"
		"more than that. Exit 0, 1 when a condition failed, 2 on an error.\n"
		"\n"
		"Exit status: 0 on success, 2 when the dump cannot be read, is damaged, or a\n"
		"command fails.\n");
}

static void finish(struct sh *sh)
{
	sh_lua_close(sh);
	sh_live_leave(sh);
	hs_session_free(sh->ss);
	sh->ss = NULL;
}

int main(int argc, char **argv);	/* declared: the fuzz build renames it (Makefile) */
int main(int argc, char **argv)
{
	struct sh sh;
	memset(&sh, 0, sizeof sh);
	sh.ss = hs_session_new();
	/* The shell's one session is this thread's context from here on: the
	 * engine's work it starts counts in the session's memory budget and
	 * hears the session's Ctrl-C (hs_enter). */
	hs_enter(sh.ss);
	sh.process_input = sh_process_input;
	sh.execute = sh_execute;
	sh_session_hooks(&sh);
	struct hs_options opt = hs_get_options(sh.ss);
	sh_current = &sh;
	/*
	 * A fixed threshold: big arrays always get their own mappings and go
	 * back to the system when freed, instead of glibc raising the threshold
	 * and keeping freed engine buffers in the heap.
	 */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	const char *dump = NULL, *export_to = NULL, *script = NULL, *report = NULL;
	bool mcp = false;
	int diff_at = 0;	/* heapsh diff: where its arguments begin */
	const char *spill_dir = getenv("HEAPSH_SPILL_DIR");
	uint64_t memory = big_parse_size(getenv("HEAPSH_MEMORY"));
	/* -c COMMAND and -f FILE, in the order given, each run in turn (as psql does) */
	struct action {
		char kind;	/* 'c' or 'f' */
		const char *arg;
	} *actions = xcalloc((size_t)argc + 1, sizeof *actions);
	int nactions = 0;
	int script_argc = 0, script_own = 1;
	char **script_argv = NULL;
	for (int a = 1; a < argc; a++) {
		const char *o = argv[a];
		if (!strcmp(o, "--serve")) {
			/* The exporter: a front end of its own, its options after --serve. */
			return srv_main(argc - a, argv + a);
		} else if (!strcmp(o, "--redact")) {
			/* A front end of its own too (redact_cmd.c): IN OUT and its options. */
			return sh_redact_main(argc - a, argv + a);
		} else if (!strcmp(o, "-l") && a + 1 < argc) {
			script = argv[++a];
			script_argc = argc - a;
			script_argv = argv + a;
			/* The first argument after the script may be the dump or pid to open. */
			if (a + 1 < argc && argv[a + 1][0] != '-') {
				dump = argv[a + 1];
				script_own = 2;
			}
			break;
		} else if ((!strcmp(o, "-c") || !strcmp(o, "-f")) && a + 1 < argc) {
			actions[nactions++] = (struct action){o[1], argv[++a]};
		} else if (!strcmp(o, "--report") && a + 1 < argc) {
			report = argv[++a];
		} else if (!strcmp(o, "--mcp")) {
			mcp = true;
		} else if (!strcmp(o, "--format") && a + 1 < argc) {
			int m = out_mode_parse(argv[++a]);
			if (m < 0) {
				fprintf(stderr, "heapsh: --format takes table, csv or json, not '%s'\n",
					argv[a]);
				return 2;
			}
			out_mode = (enum out_mode)m;
		} else if (!strcmp(o, "--oops") && a + 1 < argc) {
			opt.oop_size = atoi(argv[++a]);
			if (opt.oop_size != 4 && opt.oop_size != 8) {
				fprintf(stderr, "heapsh: --oops takes 4 or 8, not '%s'\n", argv[a]);
				return 2;
			}
		} else if (!strcmp(o, "--layout") && a + 1 < argc) {
			char *end;
			long v = strtol(argv[++a], &end, 10);
			if (*end || v < 6 || v > 99) {
				fprintf(stderr, "heapsh: --layout takes the JDK whose object layout the "
					"dump's JVM used (6 to 99: 8, 11, 17, 21, 25...), not '%s'\n", argv[a]);
				return 2;
			}
			opt.layout_jdk = (int)v;
		} else if (!strcmp(o, "--dump") && a + 1 < argc) {
			char *end;
			long n = strtol(argv[++a], &end, 10);
			if (*end || n < 1 || n > 1000000) {
				fprintf(stderr, "heapsh: --dump takes the number of a heap dump in the "
					"file, from 1, not '%s'\n", argv[a]);
				return 2;
			}
			opt.dump = (uint32_t)n;
		} else if (!strcmp(o, "--no-weak")) {
			opt.no_weak = true;
		} else if (!strcmp(o, "--no-index")) {
			opt.no_index = true;
		} else if (!strcmp(o, "--keep-agent")) {
			opt.keep_agent = true;
		} else if (!strcmp(o, "--no-spill")) {
			opt.no_spill = true;
		} else if (!strcmp(o, "--memory") && a + 1 < argc) {
			memory = big_parse_size(argv[++a]);
			if (memory < ((uint64_t)1 << 20)) {
				fprintf(stderr, "heapsh: --memory takes a size of at least 1M, such as "
					"8G or 512M, not '%s'\n", argv[a]);
				return 2;
			}
		} else if (!strcmp(o, "--spill-dir") && a + 1 < argc) {
			spill_dir = argv[++a];
			struct stat sd;
			if (stat(spill_dir, &sd) != 0 || !S_ISDIR(sd.st_mode) ||
			    access(spill_dir, W_OK | X_OK) != 0) {
				fprintf(stderr, "heapsh: --spill-dir %s is not a folder heapsh can write "
					"to\n", spill_dir);
				return 2;
			}
		} else if (!strcmp(o, "--export-graph") && a + 2 < argc) {
			dump = argv[a + 1];
			export_to = argv[a + 2];
			a += 2;
		} else if (!strcmp(o, "--echo")) {
			sh.echo = true;
		} else if (!strcmp(o, "--version")) {
			printf("heapsh %s\n", HEAPSH_VERSION);
			return 0;
		} else if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			usage(stdout);
			return 0;
		} else if (o[0] == '-' && o[1]) {
			fprintf(stderr, "heapsh: unknown option '%s' (or its value is missing)\n", o);
			usage(stderr);
			return 2;
		} else if (!dump && !strcmp(o, "diff")) {
			diff_at = a + 1;	/* heapsh diff OLD NEW ...: its own options follow */
			break;
		} else if (!dump) {
			dump = o;
		} else {
			fprintf(stderr, "heapsh: one dump at a time; '%s' is extra\n", o);
			return 2;
		}
	}
	if (diff_at && (mcp || report || export_to || nactions)) {
		fprintf(stderr, "heapsh: diff compares two dumps; it does not go with -c, -f, "
			"--mcp, --report or --export-graph\n");
		return 2;
	}
	if (mcp && (script || report || export_to || nactions)) {
		fprintf(stderr, "heapsh: --mcp serves requests on stdin; it does not go with "
			"-c, -f, -l, --report or --export-graph\n");
		return 2;
	}
	hs_set_memory(sh.ss, memory, spill_dir);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = NULL;
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigaction(SIGBUS, &sa, NULL);

	hs_set_options(sh.ss, &opt);
	if (diff_at) {
		int st = sh_diff_main(&sh, argc - diff_at, argv + diff_at);
		free(actions);
		finish(&sh);
		return st;
	}
	if (dump && sh_is_pid(dump)) {
		if (sh_attach(&sh, atoi(dump)) != HS_OK)
			return 2;
	} else if (dump && sh_open(&sh, dump) != HS_OK && !hs_heap(sh.ss)) {
		return 2;
	}
	opt.dump = 0;	/* --dump was for DUMP; later :open and snapshots start at 1 */
	hs_set_options(sh.ss, &opt);
	int damaged = sh.status;
	if (mcp) {
		int st = sh_mcp_serve(&sh);
		free(actions);
		finish(&sh);
		return st;
	}
	if (export_to) {
		int st = sh_export_graph(&sh, export_to);
		finish(&sh);
		return st == HS_OK ? damaged : 2;
	}
	if (report) {
		/* The report and nothing else; 2 when it could not be written. */
		int st = dump ? sh_report(&sh, report)
			      : sh_error(&sh, NULL, "--report needs a dump or a pid");
		out_flush();
		free(actions);
		finish(&sh);
		return st != HS_OK ? 2 : damaged;
	}
	if (script) {
		int st = sh_lua_file(&sh, script, script_argc, script_argv, script_own);
		out_flush();
		finish(&sh);
		return st != HS_OK || sh.status ? 2 : damaged;
	}
	if (nactions) {
		/* Each in turn, whatever failed before; the status says whether any failed. */
		bool failed = false;
		for (int k = 0; k < nactions; k++) {
			if (actions[k].kind == 'c') {
				sh_execute(&sh, actions[k].arg, NULL);
				out_flush();
				continue;
			}
			FILE *f = fopen(actions[k].arg, "r");
			if (!f) {
				fprintf(stderr, "heapsh: cannot open '%s': %s\n", actions[k].arg,
					strerror(errno));
				failed = true;
				continue;
			}
			failed |= sh_process_input(&sh, f, actions[k].arg) != HS_OK;
			fclose(f);
			out_flush();
		}
		free(actions);
		finish(&sh);
		return failed || sh.status ? 2 : damaged;
	}
	free(actions);
	char *hist = NULL;
	const char *home = getenv("HOME");
	if (home && isatty(STDIN_FILENO))
		hist = xasprintf("%s/.heapsh_history", home);
	le_init(hist, sh_complete);
	free(hist);
	if (isatty(STDIN_FILENO) && hs_heap(sh.ss))
		printf("heapsh %s: %u objects, %u classes. Type :help for commands.\n",
		       HEAPSH_VERSION, hs_heap(sh.ss)->n, hs_heap(sh.ss)->nclasses);
	int st = sh_process_input(&sh, NULL, "<stdin>");
	le_finish();
	out_flush();
	finish(&sh);
	return isatty(STDIN_FILENO) ? 0 : (st != HS_OK ? 2 : damaged);
}
