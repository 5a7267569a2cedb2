/*
 * mcp.c - heapsh --mcp: the shell as a Model Context Protocol server on
 * stdin and stdout, so that an AI assistant can drive an investigation
 * (docs/manual.md, "heapsh as an MCP server").
 *
 * The protocol is the MCP specification's (modelcontextprotocol.io,
 * revisions 2025-06-18, 2025-03-26 and 2024-11-05): "Base Protocol"
 * (JSON-RPC 2.0 requests, responses and notifications), "Lifecycle"
 * (initialize and version negotiation: the client's version when it is one
 * of ours, else our latest; ping at any time), "Transports" (stdio: UTF-8
 * messages, one a line, nothing but messages on stdout, logging on stderr)
 * and "Server Features: Tools" (tools/list; tools/call, whose failures are
 * results with isError, while an unknown tool or bad arguments are JSON-RPC
 * errors). JSON is read and written with jansson.
 *
 * The tools are thin over the shell: open runs :open or :attach
 * (sh_execute), run runs its input as typed input (sh_process_input, which
 * serves the prompt, -f and :load) with the output captured (out_redirect)
 * in the output mode json, and help reads the command table that :help
 * reads (sh_commands). The first two are main.c's, over this file: they are
 * called through struct sh's hooks, as :load calls sh_process_input.
 * Requests are served one at a time, in order; a long one is not cancelled
 * (notifications/cancelled is ignored).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "../out/out.h"
#include "sh.h"

/* JSON-RPC 2.0's error codes (its section 5.1); -32000 is ours, in the servers' range. */
enum {
	RPC_PARSE_ERROR = -32700,
	RPC_INVALID_REQUEST = -32600,
	RPC_METHOD_NOT_FOUND = -32601,
	RPC_INVALID_PARAMS = -32602,
	RPC_INTERNAL_ERROR = -32603,
	RPC_NOT_INITIALIZED = -32000,
};

/* The protocol revisions served, newest first: the first is the answer to any other. */
static const char *const versions[] = {"2025-06-18", "2025-03-26", "2024-11-05", NULL};

/* What run returns at most unless its max_chars says otherwise (bytes of UTF-8). */
#define RUN_MAX_CHARS 60000

struct mcp {
	struct sh *sh;
	FILE *in;		/* the client's messages: the process's stdin as it was */
	FILE *out;		/* ours to the client: the process's stdout as it was */
	bool initialized;	/* initialize was answered */
	bool broken;		/* a write to the client failed: the server ends */
};

/* ---- JSON helpers ---- */

/*
 * utf8_clean: text[0..n) as valid UTF-8 (jansson takes nothing else; the
 * heap's strings and file names may hold any bytes): each byte that does
 * not begin a well-formed sequence (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF) becomes U+FFFD. New memory (free()).
 */
static char *utf8_clean(const char *text, size_t n, size_t *out_len)
{
	const unsigned char *s = (const unsigned char *)text;
	char *o = xmalloc(n * 3 + 1);
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
			   : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
		bool ok = len && i + len <= n;
		for (size_t j = 1; ok && j < len; j++)
			ok = (s[i + j] & 0xC0) == 0x80;
		if (ok && len == 3)
			ok = !(c == 0xE0 && s[i + 1] < 0xA0) && !(c == 0xED && s[i + 1] > 0x9F);
		if (ok && len == 4)
			ok = !(c == 0xF0 && s[i + 1] < 0x90) && !(c == 0xF4 && s[i + 1] > 0x8F);
		if (!ok) {
			memcpy(o + k, "\xEF\xBF\xBD", 3);
			k += 3;
			i++;
			continue;
		}
		memcpy(o + k, s + i, len);
		k += len;
		i += len;
	}
	o[k] = 0;
	*out_len = k;
	return o;
}

/* jstr: a JSON string of any bytes (utf8_clean). */
static json_t *jstr(const char *s, size_t n)
{
	size_t len;
	char *clean = utf8_clean(s, n, &len);
	json_t *j = json_stringn(clean, len);
	free(clean);
	return j;
}

/* vjstr: a JSON string of printf-formatted text. */
static json_t *vjstr(const char *fmt, va_list ap)
{
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	char *s = xmalloc(n > 0 ? (size_t)n + 1 : 1);
	vsnprintf(s, n > 0 ? (size_t)n + 1 : 1, fmt, again);
	va_end(again);
	json_t *j = jstr(s, strlen(s));
	free(s);
	return j;
}

static json_t *jstrf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_t *jstrf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	json_t *j = vjstr(fmt, ap);
	va_end(ap);
	return j;
}

/* ---- JSON-RPC messages ---- */

/* reply: one message on its own line to the client; the message is freed. */
static void reply(struct mcp *m, json_t *msg)
{
	char *text = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	if (!text) {
		fprintf(stderr, "heapsh: --mcp: a response could not be written as JSON "
			"(out of memory?); it is dropped\n");
		return;
	}
	if (fputs(text, m->out) == EOF || fputc('\n', m->out) == EOF || fflush(m->out) == EOF) {
		fprintf(stderr, "heapsh: --mcp: cannot write to the client (%s); ending\n",
			strerror(errno));
		m->broken = true;
	}
	free(text);
}

/* rpc_error: an error response to id (borrowed; NULL: null, as for unreadable messages). */
static json_t *rpc_error(json_t *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static json_t *rpc_error(json_t *id, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	json_t *text = vjstr(fmt, ap);
	va_end(ap);
	return json_pack("{s:s, s:O, s:{s:i, s:o}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
			 "error", "code", code, "message", text);
}

/* rpc_result: a result response to id (borrowed); result is stolen. */
static json_t *rpc_result(json_t *id, json_t *result)
{
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

/* ---- the tools ---- */

/*
 * tool_result: a tools/call result of text blocks (NULL ones skipped):
 * the output, then what went wrong, if anything.
 */
static json_t *tool_result(bool is_error, json_t *text1, json_t *text2)
{
	json_t *content = json_array();
	json_t *texts[2] = {text1, text2};
	for (int k = 0; k < 2; k++)
		if (texts[k])
			json_array_append_new(content, json_pack("{s:s, s:o}", "type", "text",
								 "text", texts[k]));
	return json_pack("{s:o, s:b}", "content", content, "isError", is_error);
}

/* A captured stretch of the shell's output (out_redirect into memory). */
struct capture {
	char *buf;
	size_t len;
	FILE *mem, *prev;
	unsigned long nerrors;	/* sh->nerrors at the start */
};

static bool capture_begin(struct mcp *m, struct capture *c)
{
	memset(c, 0, sizeof *c);
	c->mem = open_memstream(&c->buf, &c->len);
	if (!c->mem)
		return false;
	out_flush();
	c->prev = out_redirect(c->mem);
	c->nerrors = m->sh->nerrors;
	return true;
}

/* capture_end: the output so far in c->buf (c->len bytes; the caller frees c->buf). */
static void capture_end(struct capture *c)
{
	out_flush();
	out_redirect(c->prev);
	fclose(c->mem);
}

/* error_text: the shell's last error as it says it on stderr, when one was said since c began. */
static json_t *error_text(struct mcp *m, const struct capture *c)
{
	struct sh *sh = m->sh;
	if (sh->nerrors == c->nerrors)
		return jstrf("heapsh: the command failed without a message (see the server's "
			     "standard error)");
	return jstrf("heapsh: %s%s%s%s", sh->last_where, sh->last_where[0] ? ": " : "",
		     sh->last_error, sh->nerrors - c->nerrors > 1
		     ? " (and earlier errors: see the server's standard error)" : "");
}

/* arg_string: arguments' member name as a string, or NULL with *bad set (a message) when it is not one. */
static const char *arg_string(json_t *args, const char *name, bool required, const char **bad)
{
	json_t *v = json_object_get(args, name);
	if (!v) {
		if (required)
			*bad = "is missing";
		return NULL;
	}
	if (!json_is_string(v)) {
		*bad = "must be a string";
		return NULL;
	}
	return json_string_value(v);
}

/*
 * no_other_args: NULL when args has no member but the names in allowed[],
 * else the first other one (the schemas say additionalProperties: false,
 * so that a misspelt argument is not silently ignored).
 */
static const char *no_other_args(json_t *args, const char *const *allowed)
{
	const char *key;
	json_t *v;
	json_object_foreach(args, key, v) {
		(void)v;
		bool known = false;
		for (int k = 0; allowed[k] && !known; k++)
			known = !strcmp(key, allowed[k]);
		if (!known)
			return key;
	}
	return NULL;
}

/* tool_open: {target}: a dump's path or a pid: :open or :attach, as typed. */
static json_t *tool_open(struct mcp *m, json_t *id, json_t *args)
{
	static const char *const allowed[] = {"target", NULL};
	struct sh *sh = m->sh;
	const char *other = no_other_args(args, allowed);
	if (other)
		return rpc_error(id, RPC_INVALID_PARAMS, "open takes only 'target' (a heap dump's "
				 "path or a JVM's pid), not '%s'", other);
	json_t *t = json_object_get(args, "target");
	char *line;
	const char *path = NULL;
	if (json_is_integer(t)) {
		json_int_t pid = json_integer_value(t);
		if (pid <= 0 || pid > 999999999)
			return rpc_error(id, RPC_INVALID_PARAMS, "open: target %lld is not a process id",
					 (long long)pid);
		line = xasprintf(":attach %lld", (long long)pid);
	} else if (json_is_string(t) && json_string_value(t)[0]) {
		const char *s = json_string_value(t);
		if (sh_is_pid(s)) {
			line = xasprintf(":attach %s", s);
		} else if (strchr(s, '"') && strchr(s, '\'')) {
			return tool_result(true, jstrf("heapsh: cannot open '%s': a path with both "
						       "kinds of quote cannot be given to :open; "
						       "link or rename the file", s), NULL);
		} else {
			/* :open takes one word: the path quoted, and not taken for an option */
			char q = strchr(s, '"') ? '\'' : '"';
			path = s;
			line = xasprintf(":open %c%s%s%c", q, s[0] == '-' ? "./" : "", s, q);
		}
	} else {
		return rpc_error(id, RPC_INVALID_PARAMS, "open: 'target' %s: give a heap dump's path "
				 "(a string) or a JVM's pid", t ? "must be a non-empty string or a "
				 "pid" : "is missing");
	}
	struct capture c;
	if (!capture_begin(m, &c)) {
		free(line);
		return rpc_error(id, RPC_INTERNAL_ERROR, "cannot capture output: %s", strerror(errno));
	}
	int st = sh->execute(sh, line, NULL);
	capture_end(&c);
	free(line);
	json_t *out = c.len ? jstr(c.buf, c.len) : NULL;
	free(c.buf);
	if (st != HS_OK)
		return tool_result(true, out, error_text(m, &c));
	/* What is open now, as JSON. */
	json_t *what;
	struct hs_live_info in;
	const char *rec = NULL;
	const struct heap *h = hs_heap(sh->ss);
	if (!path && hs_get_live(sh->ss, &in)) {
		what = json_pack("{s:i, s:s, s:s}", "attached", in.pid, "vm", in.vm ? in.vm : "",
				 "note", "queries run inside the JVM when they can; a command or "
				 "query that needs the object graph takes a snapshot first");
	} else if (path && hs_recording(sh->ss, &rec) && rec && !strcmp(rec, path)) {
		what = json_pack("{s:o}", "recording", jstr(rec, strlen(rec)));
	} else if (h) {
		char *label = hs_heap_label(sh->ss);
		what = json_pack("{s:o, s:I, s:I}", "opened", jstr(label, strlen(label)), "objects",
				 (json_int_t)h->n, "classes", (json_int_t)h->nclasses);
		free(label);
	} else {
		what = json_pack("{s:O}", "opened", t);
	}
	char *text = json_dumps(what, JSON_COMPACT);
	json_decref(what);
	json_t *r = tool_result(false, out, text ? jstr(text, strlen(text)) : NULL);
	free(text);
	return r;
}

/* tool_run: {input, max_chars?}: a :command or query as typed at the prompt. */
static json_t *tool_run(struct mcp *m, json_t *id, json_t *args)
{
	static const char *const allowed[] = {"input", "max_chars", NULL};
	struct sh *sh = m->sh;
	const char *other = no_other_args(args, allowed), *bad = NULL;
	if (other)
		return rpc_error(id, RPC_INVALID_PARAMS, "run takes 'input' and 'max_chars', not '%s'",
				 other);
	const char *input = arg_string(args, "input", true, &bad);
	if (!input)
		return rpc_error(id, RPC_INVALID_PARAMS, "run: 'input' %s: give a :command or a query, "
				 "as typed at the heapsh prompt", bad);
	json_t *mc = json_object_get(args, "max_chars");
	size_t max = RUN_MAX_CHARS;
	if (mc) {
		if (!json_is_integer(mc) || json_integer_value(mc) < 1)
			return rpc_error(id, RPC_INVALID_PARAMS, "run: 'max_chars' must be a whole number "
					 "of at least 1");
		max = (size_t)json_integer_value(mc);
	}
	size_t len = strlen(input);
	if (!input[strspn(input, " \t\r\n")])
		return tool_result(true, jstrf("heapsh: the input is empty: give a :command (the "
					       "help tool lists them) or a query"), NULL);
	struct capture c;
	if (!capture_begin(m, &c))
		return rpc_error(id, RPC_INTERNAL_ERROR, "cannot capture output: %s", strerror(errno));
	/* The input is a little file of typed lines: a query may span lines, a
	 * :lua block ends at :end, as at the prompt. */
	FILE *f = fmemopen((void *)input, len, "r");
	int st = f ? sh->process_input(sh, f, "input") : HS_ERR;
	if (f)
		fclose(f);
	else
		sh_error(sh, NULL, "cannot read the input: %s", strerror(errno));
	capture_end(&c);
	json_t *err = NULL;
	if (sh->quit) {
		/* the client's end of the input ends the server, not :quit */
		sh->quit = false;
		st = HS_ERR;
		err = jstrf("heapsh: :quit does not end an MCP server: it ends when its client "
			    "closes its input");
	} else if (st != HS_OK) {
		err = error_text(m, &c);
	}
	json_t *out = NULL;
	if (c.len > max) {
		size_t cut = max;
		while (cut > 0 && ((unsigned char)c.buf[cut] & 0xC0) == 0x80)
			cut--;	/* not inside a character */
		char *note = xasprintf("%.*s\n... (cut at %zu of %zu bytes: ask for less, e.g. "
				       "list.top(N, f), --top N, or raise max_chars)", (int)cut,
				       c.buf, cut, c.len);
		out = jstr(note, strlen(note));
		free(note);
	} else if (c.len || !err) {
		out = c.len ? jstr(c.buf, c.len) : jstrf("(no output)");
	}
	free(c.buf);
	return tool_result(st != HS_OK, out, err);
}

/* tool_help: {command?}: the command table, or one command's usage and help. */
static json_t *tool_help(struct mcp *m, json_t *id, json_t *args)
{
	(void)m;
	static const char *const allowed[] = {"command", NULL};
	const char *other = no_other_args(args, allowed), *bad = NULL;
	if (other)
		return rpc_error(id, RPC_INVALID_PARAMS, "help takes only 'command', not '%s'", other);
	const char *name = arg_string(args, "command", false, &bad);
	if (bad)
		return rpc_error(id, RPC_INVALID_PARAMS, "help: 'command' %s (a command's name, "
				 "such as histogram)", bad);
	json_t *r;
	if (name) {
		if (name[0] == ':')
			name++;
		const struct sh_command *c = sh_commands;
		while (c->name && strcmp(c->name, name))
			c++;
		if (!c->name)
			return tool_result(true, jstrf("heapsh: no command ':%s'; help without a "
						       "command lists them", name), NULL);
		r = json_pack("{s:o, s:s, s:s}", "command", jstrf(":%s", c->name), "usage", c->usage,
			      "help", c->help);
	} else {
		r = json_array();
		for (const struct sh_command *c = sh_commands; c->name; c++) {
			size_t first = strcspn(c->help, "\n");
			json_array_append_new(r, json_pack("{s:o, s:s, s:o}", "command",
							   jstrf(":%s", c->name), "usage", c->usage,
							   "summary", jstr(c->help, first)));
		}
	}
	char *text = json_dumps(r, JSON_INDENT(1));
	json_decref(r);
	json_t *res = tool_result(false, text ? jstr(text, strlen(text)) : NULL, NULL);
	free(text);
	return res;
}

struct tool {
	const char *name;
	json_t *(*call)(struct mcp *m, json_t *id, json_t *args);
	const char *title, *description;
	const char *schema;	/* its inputSchema, as JSON text */
};

static const struct tool tools[] = {
	{"open", tool_open, "Open a heap dump or attach to a JVM",
	 "Open a Java heap dump (HPROF, gzip'd HPROF, Android's; a JFR recording for its "
	 "allocation events) or attach to a running HotSpot JVM (JDK 11+, same user) by "
	 "its pid, replacing what was open. The same as heapsh's :open DUMP and :attach "
	 "PID. Returns what is open now as JSON: the dump with its object and class counts, "
	 "or the JVM.",
	 "{\"type\": \"object\", \"properties\": {\"target\": {\"type\": \"string\", "
	 "\"description\": \"A heap dump's path (absolute, or relative to the server's working "
	 "folder), or the pid of a running JVM, such as \\\"12345\\\"\"}}, "
	 "\"required\": [\"target\"], \"additionalProperties\": false}"},
	{"run", tool_run, "Run a heapsh command or query",
	 "Run one input exactly as typed at the heapsh prompt on the open heap: a :command "
	 "(:info, :histogram PATTERN, :dominators, :suspects, :path ID, :show ID, "
	 ":duplicates, ...; the help tool lists them) or a query in heapsh's query language, "
	 "such as objects.count([it | it is Order and it.status = 7]) or "
	 "classes.top(10, [c | c.count]). Several lines run in turn. Tables come back as "
	 "JSON arrays of objects, one per row, and single values as JSON values (the output "
	 "mode is json; ':format csv' or ':format table' changes it for later runs). A "
	 "failure is a tool error with heapsh's message and where it is (input:LINE:COL "
	 "for a query). Long output is cut at max_chars.",
	 "{\"type\": \"object\", \"properties\": {\"input\": {\"type\": \"string\", "
	 "\"description\": \"A :command or a query, as typed at the heapsh prompt\"}, "
	 "\"max_chars\": {\"type\": \"integer\", \"minimum\": 1, \"description\": \"Cut the "
	 "output after this many bytes (default 60000)\"}}, \"required\": [\"input\"], "
	 "\"additionalProperties\": false}"},
	{"help", tool_help, "List heapsh's commands",
	 "heapsh's commands as JSON: without 'command', each command with its usage and a "
	 "one-line summary; with 'command' (such as histogram or :histogram), its usage and "
	 "full help. The same table as heapsh's :help.",
	 "{\"type\": \"object\", \"properties\": {\"command\": {\"type\": \"string\", "
	 "\"description\": \"A command's name, with or without the colon\"}}, "
	 "\"additionalProperties\": false}"},
	{NULL, NULL, NULL, NULL, NULL}
};

/* ---- methods ---- */

static json_t *initialize(struct mcp *m, json_t *id, json_t *params)
{
	if (m->initialized)
		return rpc_error(id, RPC_INVALID_REQUEST, "initialize was already done: a session "
				 "is initialized once");
	json_t *v = json_object_get(params, "protocolVersion");
	if (!json_is_string(v))
		return rpc_error(id, RPC_INVALID_PARAMS, "initialize: 'protocolVersion' %s",
				 v ? "must be a string" : "is missing");
	const char *version = versions[0];
	for (int k = 0; versions[k]; k++)
		if (!strcmp(versions[k], json_string_value(v)))
			version = versions[k];
	m->initialized = true;
	return rpc_result(id, json_pack(
		"{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", version,
		"capabilities", "tools", "listChanged", 0,
		"serverInfo", "name", "heapsh", "title", "heapsh, a shell for Java heaps",
		"version", HEAPSH_VERSION,
		"instructions",
		"heapsh explores Java heaps: heap dumps (.hprof) and running JVMs. Call open with a "
		"dump's path or a JVM's pid unless heapsh was started with one; then call run with "
		"heapsh commands (:info, :histogram, :dominators, :suspects for leak suspects, "
		":path ID for why an object is alive, :show ID; help lists them all) or queries "
		"in heapsh's query language (objects, classes and threads are lists; "
		"filter, map, count, sum, top(n, f), group_by take lambdas such as "
		"[it | it is java.util.HashMap and it.size > 100]). Results are JSON."));
}

static json_t *tools_list(void)
{
	json_t *list = json_array();
	for (const struct tool *t = tools; t->name; t++) {
		json_error_t e;
		json_t *schema = json_loads(t->schema, 0, &e);
		if (!schema) {
			/* a mistake in the table above, caught by tests/t_mcp.sh */
			fprintf(stderr, "heapsh: --mcp: the schema of tool %s is not JSON: %s\n",
				t->name, e.text);
			schema = json_pack("{s:s}", "type", "object");
		}
		json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:o}", "name", t->name,
						      "title", t->title, "description",
						      t->description, "inputSchema", schema));
	}
	return json_pack("{s:o}", "tools", list);
}

static json_t *tools_call(struct mcp *m, json_t *id, json_t *params)
{
	json_t *name = json_object_get(params, "name");
	json_t *args = json_object_get(params, "arguments");
	if (!json_is_string(name))
		return rpc_error(id, RPC_INVALID_PARAMS, "tools/call: 'name' %s: open, run or help",
				 name ? "must be a string" : "is missing");
	if (args && !json_is_object(args))
		return rpc_error(id, RPC_INVALID_PARAMS, "tools/call: 'arguments' must be an object");
	const struct tool *t = tools;
	while (t->name && strcmp(t->name, json_string_value(name)))
		t++;
	if (!t->name)
		return rpc_error(id, RPC_INVALID_PARAMS, "Unknown tool: %s (heapsh has open, run "
				 "and help)", json_string_value(name));
	json_t *none = json_object();
	json_t *r = t->call(m, id, args ? args : none);
	json_decref(none);
	/* a tool's result, or its own JSON-RPC error */
	return json_object_get(r, "jsonrpc") ? r : rpc_result(id, r);
}

/*
 * message: the response to one message (NULL: none, for a notification or
 * a response). in_batch: it came in a JSON-RPC batch (2025-03-26), where
 * initialize may not be.
 */
static json_t *message(struct mcp *m, json_t *msg, bool in_batch)
{
	if (!json_is_object(msg))
		return rpc_error(NULL, RPC_INVALID_REQUEST, "a message is a JSON object "
				 "(JSON-RPC 2.0), not %s", json_is_array(msg) ? "an array in a batch"
				 : "a bare value");
	json_t *id = json_object_get(msg, "id");
	json_t *method = json_object_get(msg, "method");
	json_t *params = json_object_get(msg, "params");
	bool valid_id = json_is_string(id) || json_is_number(id);
	if (id && !valid_id)
		return rpc_error(NULL, RPC_INVALID_REQUEST, "a request's 'id' is a string or a "
				 "number");
	if (!method) {
		if (id && (json_object_get(msg, "result") || json_object_get(msg, "error")))
			return NULL;	/* a response: heapsh sends no requests, so it answers none */
		return rpc_error(id, RPC_INVALID_REQUEST, "a request has a 'method'");
	}
	const char *jv = json_string_value(json_object_get(msg, "jsonrpc"));
	if (!jv || strcmp(jv, "2.0"))
		return id ? rpc_error(id, RPC_INVALID_REQUEST, "'jsonrpc' must be \"2.0\"") : NULL;
	if (!json_is_string(method))
		return id ? rpc_error(id, RPC_INVALID_REQUEST, "'method' must be a string") : NULL;
	const char *name = json_string_value(method);
	if (params && !json_is_object(params) && !json_is_array(params))
		return id ? rpc_error(id, RPC_INVALID_PARAMS, "'params' must be an object") : NULL;
	if (!id) {
		/* notifications: notifications/initialized, cancelled (serial here), others */
		return NULL;
	}
	json_t *none = json_object();
	json_t *p = json_is_object(params) ? params : none, *r;
	if (!strcmp(name, "initialize"))
		r = in_batch ? rpc_error(id, RPC_INVALID_REQUEST, "initialize may not be part of a "
					 "batch") : initialize(m, id, p);
	else if (!strcmp(name, "ping"))
		r = rpc_result(id, json_object());
	else if (!m->initialized)
		r = rpc_error(id, RPC_NOT_INITIALIZED, "the session is not initialized: send "
			      "initialize first (then notifications/initialized)");
	else if (!strcmp(name, "tools/list"))
		r = rpc_result(id, tools_list());
	else if (!strcmp(name, "tools/call"))
		r = tools_call(m, id, p);
	else
		r = rpc_error(id, RPC_METHOD_NOT_FOUND, "Method not found: %s (heapsh serves "
			      "initialize, ping, tools/list and tools/call)", name);
	json_decref(none);
	return r;
}

/* serve_line: one line of input: a message or a batch, answered. */
static void serve_line(struct mcp *m, const char *text, size_t n)
{
	if (!text[strspn(text, " \t\r\n")])
		return;
	json_error_t e;
	json_t *msg = json_loadb(text, n, JSON_REJECT_DUPLICATES, &e);
	if (!msg) {
		reply(m, rpc_error(NULL, RPC_PARSE_ERROR, "Parse error: not JSON at column %d: %s "
				  "(each message is one line of JSON)", e.column, e.text));
		return;
	}
	if (!json_is_array(msg)) {
		json_t *r = message(m, msg, false);
		if (r)
			reply(m, r);
	} else if (json_array_size(msg) == 0) {
		reply(m, rpc_error(NULL, RPC_INVALID_REQUEST, "an empty batch"));
	} else {
		json_t *answers = json_array();
		size_t k;
		json_t *v;
		json_array_foreach(msg, k, v) {
			json_t *r = message(m, v, true);
			if (r)
				json_array_append_new(answers, r);
		}
		if (json_array_size(answers))
			reply(m, answers);
		else
			json_decref(answers);
	}
	json_decref(msg);
}

/*
 * streams: the protocol's own copies of stdin and stdout; fd 1 becomes
 * stderr (Lua's io.write, anything printed by mistake: never the
 * protocol's stream) and fd 0 /dev/null (nothing run may read the
 * client's messages).
 */
static int streams(struct mcp *m)
{
	fflush(stdout);
	int in = dup(STDIN_FILENO), out = dup(STDOUT_FILENO);
	int null = open("/dev/null", O_RDONLY);
	if (in < 0 || out < 0 || null < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0 ||
	    dup2(null, STDIN_FILENO) < 0)
		goto fail;
	close(null);
	m->in = fdopen(in, "r");
	m->out = fdopen(out, "w");
	if (!m->in || !m->out)
		goto fail;
	return HS_OK;
fail:
	fprintf(stderr, "heapsh: --mcp: cannot set up stdin and stdout for the protocol: %s\n",
		strerror(errno));
	return HS_ERR;
}

/*
 * SIGTERM is how clients end a server that has not ended within a moment
 * of its input closing (the specification's "Lifecycle", "Shutdown",
 * stdio: close the input, wait, SIGTERM, wait, SIGKILL; the TypeScript
 * SDK's close() waits 2 s each time), or at all: heapsh then ends as at
 * the end of its input, letting go of an attached JVM as :quit does,
 * instead of dying with its agent still loaded. A command under way is
 * stopped as Ctrl-C stops it, by the shell's own SIGINT handler (main.c).
 * The client's input becomes /dev/null (fd 0 since streams()), so that a
 * read that was about to wait for it when the signal came ends at once.
 */
static volatile sig_atomic_t terminated;
static int input_fd = -1;	/* the client's input (struct mcp's in) */

static void on_sigterm(int sig)
{
	(void)sig;
	int saved = errno;
	terminated = 1;
	if (input_fd >= 0)
		dup2(STDIN_FILENO, input_fd);
	raise(SIGINT);
	errno = saved;
}

int sh_mcp_serve(struct sh *sh)
{
	struct mcp m = {.sh = sh};
	if (!sh->execute || !sh->process_input) {
		fprintf(stderr, "heapsh: --mcp: the shell's execute and process_input hooks are "
			"not set (main.c sets them before serving)\n");
		return 2;
	}
	if (streams(&m) != HS_OK)
		return 2;
	/* A client gone is a write error (and the end), not a SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	input_fd = fileno(m.in);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigterm;	/* no SA_RESTART: a getline waiting for input returns */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	out_mode = OUT_JSON;
	char *buf = NULL;
	size_t cap = 0;
	while (!m.broken && !terminated) {
		errno = 0;
		ssize_t n = getline(&buf, &cap, m.in);
		if (n < 0) {
			if (errno == EINTR && !feof(m.in) && !terminated) {
				/* Ctrl-C at the server's terminal: it stops a command, not the server */
				clearerr(m.in);
				continue;
			}
			break;
		}
		serve_line(&m, buf, (size_t)n);
	}
	if (terminated) {
		fprintf(stderr, "heapsh: --mcp: SIGTERM: ending as at the end of the input\n");
		hs_interrupted = 0;	/* it stopped the command; letting go of a JVM must not stop too */
	}
	free(buf);
	input_fd = -1;
	fclose(m.in);
	fclose(m.out);
	return m.broken ? 2 : 0;
}
