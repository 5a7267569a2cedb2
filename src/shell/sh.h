/*
 * sh.h - the shell: session state, input processing and the command table.
 * Output goes through out.h; errors go to stderr as "where: message" and
 * mark the session's exit status.
 */
#ifndef HS_SH_H
#define HS_SH_H

#include <stdbool.h>
#include <stdio.h>

#include "../heapsh.h"

#define HEAPSH_VERSION "0.1.0"

struct sh {
	struct hs_session *ss;	/* the session the shell runs on (src/session) */
	int status;		/* exit status: 0, or 2 after an error */
	bool quit;
	bool echo;		/* print each command before running it (tours) */
	bool timer;		/* :timer on: report each input's wall time on stderr */
	int depth;		/* :load nesting */
	char last_error[512];	/* the last sh_error message */
	char last_where[512];	/* and where it was ("file:line[:col]"), or "" */
	unsigned long nerrors;	/* sh_error calls so far (did a command say what went wrong?) */
	void *lua;		/* the Lua state (src/lua), made on first use */
	const char *where;	/* "file:line" of the input being run, or NULL */
	/*
	 * process_input: sh_process_input, and execute: sh_execute, set by
	 * main.c, so that :load (a command under it) runs a file's inputs, and
	 * heapsh --mcp (mcp.c, under it too) runs its tools' inputs, without
	 * calling up into it.
	 */
	int (*process_input)(struct sh *sh, FILE *f, const char *name);
	int (*execute)(struct sh *sh, const char *line, const char *where);
};

/* A command: name without the colon, handler, usage line, help text. */
struct sh_command {
	const char *name;
	int (*run)(struct sh *sh, int argc, char **argv);
	const char *usage;
	const char *help;
};

extern const struct sh_command sh_commands[];

/* Engine commands (engine_cmds.c), listed in sh_commands. */
int sh_cmd_dominators(struct sh *sh, int argc, char **argv);
int sh_cmd_retained(struct sh *sh, int argc, char **argv);
int sh_cmd_idom(struct sh *sh, int argc, char **argv);
int sh_cmd_path(struct sh *sh, int argc, char **argv);
/* :suspects (suspects_cmd.c). */
int sh_cmd_suspects(struct sh *sh, int argc, char **argv);
/* Comparing dumps (diff_cmd.c): :diff OLDER; sh_diff_main is `heapsh diff` (argv after "diff"),
 * returning the exit status: 0, 1 when a --fail-if condition failed, 2 on an error. */
int sh_cmd_diff(struct sh *sh, int argc, char **argv);
int sh_diff_main(struct sh *sh, int argc, char **argv);
/* Live JVM commands (live.c). */
int sh_cmd_attach(struct sh *sh, int argc, char **argv);
int sh_cmd_detach(struct sh *sh, int argc, char **argv);
int sh_cmd_refresh(struct sh *sh, int argc, char **argv);
int sh_cmd_dump(struct sh *sh, int argc, char **argv);
/* Dynamic-size commands (dyn_cmds.c). */
int sh_cmd_dynsize(struct sh *sh, int argc, char **argv);
int sh_cmd_top(struct sh *sh, int argc, char **argv);
int sh_cmd_graphstats(struct sh *sh, int argc, char **argv);
int sh_cmd_sizediff(struct sh *sh, int argc, char **argv);
/* Waste commands (waste_cmds.c): duplicate strings, empty and sparse collections. */
int sh_cmd_duplicates(struct sh *sh, int argc, char **argv);
int sh_cmd_collections(struct sh *sh, int argc, char **argv);
/*
 * The HTML report (report.c): sh_cmd_report is :report FILE.html;
 * sh_report writes the report of the open heap to path (heapsh --report).
 * HS_ERR is reported (sh_error).
 */
int sh_cmd_report(struct sh *sh, int argc, char **argv);
int sh_report(struct sh *sh, const char *path);

/*
 * sh_error: report an error at where ("file:line" or NULL for the command
 * line) to stderr and set the exit status to 2. Returns HS_ERR.
 */
/*
 * sh_progress_begin / sh_progress_end: around work that can take seconds:
 * on a terminal, label on stderr, then the engine's progress (hs_progress)
 * after it, rewritten in place, and the line erased at the end; elsewhere
 * nothing.
 */
void sh_progress_begin(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sh_progress_end(void);

int sh_error(struct sh *sh, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* sh_session_hooks: the session's notices, stages and progress shown as the shell shows them. */
void sh_session_hooks(struct sh *sh);
/* sh_open: load a dump into the session, replacing any current heap. */
int sh_open(struct sh *sh, const char *path);

/*
 * sh_execute: run one complete input (a command line). where names the
 * source for errors. Returns HS_OK or HS_ERR (already reported).
 */
int sh_execute(struct sh *sh, const char *line, const char *where);

/*
 * sh_process_input: read f (NULL = stdin through line editing) to the end,
 * running each input; name is used in "name:line" error locations.
 */
int sh_process_input(struct sh *sh, FILE *f, const char *name);

/* sh_complete: completion candidates for line editing (see le.h). */
int sh_complete(const char *line, int start, const char *word, char **out, int cap);
extern struct sh *sh_current;

/*
 * sh_dom: the dominator tree for the current heap (no_weak selects the
 * variant), from memory, the index file, or computed now. NULL after an
 * error or Ctrl-C (already reported).
 */
struct dom_tree *sh_dom(struct sh *sh, bool no_weak);

/*
 * sh_dyn: the dynamic-size engine for the current heap, from memory, the
 * index file, or built now; with estimates, also every component's
 * estimate. NULL after an error or Ctrl-C (already reported).
 */
struct dyn *sh_dyn(struct sh *sh, bool estimates);
/* sh_dyn_save: write the engine (and its memoized sizes) to the index if changed. */
void sh_dyn_save(struct sh *sh);

/*
 * sh_is_pid: s names a process rather than a file, as the DUMP|PID of the
 * command line does: digits only (at most 9), and no file of that name.
 */
bool sh_is_pid(const char *s);

/*
 * sh_mcp_serve (mcp.c, docs/manual.md "heapsh as an MCP server"): heapsh
 * --mcp. Speaks the Model Context Protocol (JSON-RPC 2.0, one message a
 * line) on the process's stdin and stdout until stdin ends, with the tools
 * open, run and help over sh's session (a dump or JVM given on the command
 * line is already open), running them through sh->execute and
 * sh->process_input. From the call on, fd 1 is stderr, so that nothing
 * but protocol messages reaches the client, and fd 0 is /dev/null. Bad
 * messages are answered with JSON-RPC errors, never end the server.
 * SIGTERM stops a command under way (through the shell's SIGINT handler,
 * which must be installed) and ends the server as the end of the input
 * does. Returns 0 at the end of the input or after SIGTERM, 2 when the
 * protocol streams could not be set up or written (said on stderr). The
 * caller closes the session.
 */
int sh_mcp_serve(struct sh *sh);

/* sh_looks_like_id: s starts as an object id does (a digit), not as a class name. */
bool sh_looks_like_id(const char *s);
/*
 * sh_target_set: the objects named by an id or a class pattern (all
 * instances of every matching class), in a new array the caller frees;
 * *label (also the caller's) says what they are. HS_ERR is reported.
 */
int sh_target_set(struct sh *sh, const char *target, uint32_t **objs, uint32_t *n,
		  char **label);
struct out_table;
/* sh_object_cells: an object's id and class as two table cells. */
void sh_object_cells(struct out_table *t, const struct heap *h, uint32_t i);

/*
 * Live JVMs (live.c). sh_attach: connect to the agent in JVM pid, loading
 * it first if needed. sh_need_heap: HS_OK when a heap is loaded, taking a
 * snapshot of the attached JVM if there is none; else reports an error.
 * sh_live_histogram: the class histogram of the attached JVM after a full
 * GC, from HotSpot's GC.class_histogram (via "vm") or the agent (via
 * "agent"); via NULL tries the VM first and falls back to the agent.
 * sh_show_pushdown: the answer of the agent's heap iteration to a filter
 * over one class (hs_query's HS_RAN_PUSHDOWN), as a snapshot's query would
 * show it, and its cost on stderr. sh_live_prompt: the prompt when attached
 * (caller frees), else NULL.
 */
int sh_attach(struct sh *sh, int pid);
bool sh_is_live(const struct sh *sh);
int sh_need_heap(struct sh *sh);
int sh_live_histogram(struct sh *sh, const char *pattern, bool count, long top, const char *via);
void sh_show_pushdown(struct sh *sh, const struct hs_pushdown_answer *q);
/*
 * Queries inside the JVM (live_query.c). sh_show_jvm: the answer of a
 * program the agent ran for snippet text (hs_query's HS_RAN_JVM) as a
 * snapshot's would be shown, the JVM's costs on stderr, or the query's
 * error with a caret (where, first_line as sh_query_report's); HS_ERR then.
 * sh_cmd_explain (:explain QUERY): where a query would run, and why;
 * ":explain" alone explains the next query (sh_live_explain_pending), which
 * may span lines: sh_live_explain(sh, text, &incomplete) explains it once
 * complete, runs nothing, and sets *incomplete (NULL: complete or an error).
 * sh_cmd_live (:live): turn it on or off, set its time and memory limits.
 */
int sh_show_jvm(struct sh *sh, const char *text, const char *where, int first_line,
		const struct hs_answer *a);
int sh_cmd_explain(struct sh *sh, int argc, char **argv);
bool sh_live_explain_pending(void);
int sh_live_explain(struct sh *sh, const char *text, bool *incomplete);
int sh_cmd_live(struct sh *sh, int argc, char **argv);
/*
 * query.c's display and error report, shared with live_query.c:
 * sh_show_value shows a value as a query's result; sh_query_report reports
 * err (a line and column in text) with a caret.
 */
struct value;
void sh_show_value(struct sh *sh, struct value v, void *arena);
void sh_query_report(struct sh *sh, const char *text, const char *where, int first_line,
		     const struct hs_error *err);
int sh_live_info(struct sh *sh);
char *sh_live_prompt(const struct sh *sh);
/*
 * sh_heap_label: what the loaded heap is, for a file that outlives the
 * session: "heap dump PATH", or for a snapshot "snapshot of JVM PID
 * (MAIN CLASS, VM) taken YYYY-MM-DD HH:MM:SS UTC" (not its temporary
 * file). New memory (free()).
 */
char *sh_heap_label(const struct sh *sh);
/*
 * sh_bytes_cell: a byte count as a cell: for a person in table mode
 * ("85.3 MB", fmt_bytes), the exact number in CSV and JSON.
 */
struct out_table;
void sh_bytes_cell(struct out_table *t, uint64_t n);
void sh_live_close(struct sh *sh);

/*
 * Allocation recordings (alloc_cmds.c, docs/agent.md): sh_cmd_alloc is the
 * :alloc command. sh_alloc_fetch reads the attached JVM's recording (after
 * a full GC, so that live counts are exact) into a new struct alc_rec the
 * caller frees with alc_free; HS_ERR (reported) when not attached, when
 * the JVM has no recording, or on a protocol error.
 */
struct alc_rec;
int sh_cmd_alloc(struct sh *sh, int argc, char **argv);
/*
 * sh_live_pid: the attached JVM's pid, 0 when not attached. sh_live_farewell: before the shell lets go of a JVM (exit,
 * :detach), say on stderr that its allocation recording goes on; true when
 * one is running.
 */
int sh_live_pid(const struct sh *sh);
/* sh_live_snapshots: snapshots taken of the attached JVM in this session (0: none, or not live). */
unsigned sh_live_snapshots(const struct sh *sh);
bool sh_live_farewell(struct sh *sh);
/*
 * sh_live_leave: the shell lets go of the attached JVM (exit, :open, :attach
 * elsewhere): the agent detaches (its thread and socket go) unless an
 * allocation recording lives in it, another shell uses it, it was loaded at
 * JVM start-up, or --keep-agent; the shell says which on standard error.
 * Then the connection is closed (sh->live is NULL).
 */
void sh_live_leave(struct sh *sh);
int sh_alloc_fetch(struct sh *sh, struct alc_rec **out);

/* sh_dsl: the query language session of the current heap, made on first use. */
struct dsl *sh_dsl(struct sh *sh);

/*
 * Lua (src/lua). sh_lua_run: run a chunk of Lua code in the session's Lua
 * state (name labels it in messages); sh_lua_file: run a script file with
 * argv[0..argc) as its `arg` table (argv[0] is the script) and
 * argv[own..argc) as heapsh.args(), the script's own words (own is 2 when
 * heapsh -l opened argv[1] as the dump, else 1). An error is reported
 * with a traceback and the session goes on. sh_lua_close: drop the state.
 */
int sh_lua_run(struct sh *sh, const char *code, const char *name);
int sh_lua_file(struct sh *sh, const char *path, int argc, char **argv, int own);
void sh_lua_close(struct sh *sh);
int sh_cmd_lua(struct sh *sh, int argc, char **argv);
int sh_cmd_luafile(struct sh *sh, int argc, char **argv);

/* sh_close_heap: drop the heap and everything computed from it. */
void sh_close_heap(struct sh *sh);

/*
 * sh_query: run a query-language snippet and show its values. where is
 * the input's name and first_line the snippet's first line in it (0 when
 * typed). *incomplete is set (and nothing run) when more text is needed.
 */
int sh_query(struct sh *sh, const char *text, const char *where, int first_line,
	     bool *incomplete);

/* sh_export_graph: write the engine graph of the heap as text to path. */
int sh_export_graph(struct sh *sh, const char *path);

/* sh_parse_id: "0x1a2b" or decimal -> object index; reports the error. */
int sh_parse_object(struct sh *sh, const char *s, uint32_t *obj);

/*
 * sh_redact_main: heapsh --redact IN OUT [options], argv[0] "--redact"
 * (redact_cmd.c): writes the redacted copy (src/hprof/redact.h), prints
 * the error or a one-line summary on stderr; returns the exit status, 0
 * or 2.
 */
int sh_redact_main(int argc, char **argv);

#endif
