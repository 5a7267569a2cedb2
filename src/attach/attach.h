/*
 * attach.h - HotSpot's dynamic attach protocol (Linux), spoken directly:
 * no Java helper, no jcmd. heapsh uses it to load its JVMTI agent into a
 * running JVM (the "load" command) and to run diagnostic commands
 * ("jcmd GC.heap_dump FILE", "jcmd GC.class_histogram").
 *
 * The protocol (OpenJDK attachListener_linux.cpp, VirtualMachineImpl.java):
 * the JVM listens on the Unix socket <tmp>/.java_pid<nspid>, where <tmp> is
 * /tmp as the JVM sees it and <nspid> its pid in its own pid namespace. The
 * listener starts on demand: the client creates the trigger file
 * .attach_pid<nspid> in the JVM's working directory (or <tmp>) and sends the
 * JVM SIGQUIT. A request is "1\0" (protocol version), the command name "\0",
 * then exactly three arguments, each "\0"-terminated (empty when unused). The
 * reply is a decimal status line (0 = success) then text, until the JVM
 * closes the connection.
 *
 * Containers: for a JVM in another mount namespace, <tmp> is reached as
 * /proc/PID/root/tmp (att_tmp_dir), and the files heapsh and the JVM pass
 * each other (the agent library, heap dumps) go through a private folder
 * there (struct att_jvm_dir), named by the path the JVM sees.
 *
 * Safety: SIGQUIT's default action kills a process, so it is sent only to a
 * process that has libjvm.so mapped, catches SIGQUIT (not -Xrs, not still
 * starting) and was not started with -XX:+DisableAttachMechanism. Sockets are
 * non-blocking and close-on-exec; every connect, write and read has a
 * deadline; writes use MSG_NOSIGNAL, so a JVM that goes away cannot raise
 * SIGPIPE in the caller. Ctrl-C (hs_interrupted) ends a wait with
 * HS_INTERRUPTED.
 *
 * Credentials: HotSpot only accepts a peer whose effective uid and gid are
 * the JVM's, or root. A non-root caller asking for another user's JVM gets
 * ATT_OTHER_USER at once. A root caller switches its effective gid and uid
 * to the JVM's while it creates the trigger file and connects (older JDKs
 * trust only a trigger file owned by the JVM's user), then switches back;
 * glibc applies seteuid/setegid to every thread of the process meanwhile.
 *
 * Errors: every function that can fail returns HS_OK or HS_ERR (or
 * HS_INTERRUPTED), fills the caller's struct hs_error (may be NULL) with what
 * happened and what to do, and sets *kind (may be NULL) so callers can tell
 * failures apart without reading the text. err->offset is -1.
 *
 * Ownership: *output, *req and *reply are new memory the caller frees with
 * free(); they are set to NULL or to a string on every return, failures
 * included (a command the JVM refused still has its text in *output).
 */
#ifndef HS_ATTACH_H
#define HS_ATTACH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../base/mem.h"

enum att_kind {
	ATT_OK = 0,
	ATT_NO_PROCESS,		/* no such process, or it already exited */
	ATT_NOT_JVM,		/* the process is not a HotSpot JVM; nothing was sent */
	ATT_DISABLED,		/* -XX:+DisableAttachMechanism, or SIGQUIT not handled (-Xrs) */
	ATT_OTHER_USER,		/* another user's JVM and we are not root */
	ATT_TIMEOUT,		/* the socket did not appear, or no reply in time */
	ATT_EXITED,		/* the JVM exited during the request */
	ATT_REFUSED,		/* the JVM answered with a failure (status or agent return code) */
	ATT_IO,			/* a system call failed, or the reply is not the protocol */
	ATT_BAD_REQUEST,	/* the request itself is invalid (too long, relative path) */
	ATT_INTERRUPTED		/* Ctrl-C */
};

#define ATT_DEFAULT_TIMEOUT_MS 30000	/* when timeout_ms <= 0 */
#define ATT_START_TIMEOUT_MS 10000	/* at most this long for the listener to start */
#define ATT_NAME_MAX 16			/* HotSpot's limit on the command name, bytes */
#define ATT_ARG_MAX 1024		/* HotSpot's limit on each argument, bytes */
#define ATT_REPLY_MAX (256u << 20)	/* longer replies are an error, bytes */

/* att_kind_name: a short stable name ("ok", "no-process", "not-jvm", ...). */
const char *att_kind_name(enum att_kind kind);

/*
 * att_command: send one attach request to JVM pid and read its reply.
 *   cmd: the command name ("jcmd", "load", "properties", "threaddump", ...);
 *   arg1..arg3: its arguments, NULL for empty;
 *   timeout_ms: deadline for the whole request (<= 0: ATT_DEFAULT_TIMEOUT_MS);
 *     starting the listener takes at most ATT_START_TIMEOUT_MS of it;
 *   *output (may be NULL): the reply's text after the status line.
 * Returns HS_OK when the status is 0; HS_ERR with ATT_REFUSED and the JVM's
 * text when it is not; HS_ERR with another kind when no reply was had.
 */
int att_command(int pid, const char *cmd, const char *arg1, const char *arg2,
		const char *arg3, int timeout_ms, char **output,
		enum att_kind *kind, struct hs_error *err);

/*
 * att_jcmd: run a diagnostic command, as `jcmd pid CMDLINE` does (the whole
 * command line, e.g. "GC.heap_dump /tmp/x.hprof", is one argument).
 * *output: its text. Errors as att_command; an unknown command or bad option
 * is ATT_REFUSED with the JVM's explanation.
 */
int att_jcmd(int pid, const char *cmdline, int timeout_ms, char **output,
	     enum att_kind *kind, struct hs_error *err);

/*
 * att_heap_dump: HotSpot writes the live heap of JVM pid to path, a path as
 * the JVM sees it (the diagnostic command GC.heap_dump, which `jcmd PID
 * GC.heap_dump PATH` runs: a full GC, then the dump; an existing file is
 * refused). *output (may be NULL) gets HotSpot's reply. Errors as att_jcmd,
 * and ATT_REFUSED with HotSpot's words when it says the file is incomplete
 * (a full disk: "Dump file is incomplete: No space left on device"); the
 * partial file is left where HotSpot wrote it.
 */
int att_heap_dump(int pid, const char *path, int timeout_ms, char **output,
		  enum att_kind *kind, struct hs_error *err);

/* One row of a class histogram: the shape proto_histogram returns too. */
struct att_hist_row {
	char *name;		/* Java name: java.lang.String, int[], a.B[] */
	uint64_t count, bytes;	/* instances; bytes as the JVM sizes objects */
};

/*
 * att_class_histogram: HotSpot's own class histogram of JVM pid (the
 * diagnostic command GC.class_histogram, which `jcmd PID GC.class_histogram`
 * runs: a full GC first unless all, then the VM's heap inspection on as
 * many GC worker threads as this host has processors, -parallel, JDK 16 on;
 * one thread before, asked again without it),
 * parsed into *rows (*n of them; the JVM's order, largest bytes first).
 * Array names are turned into Java's ("[B" -> byte[], "[Lx.Y;" -> x.Y[]);
 * the module suffix " (java.base@17)" is dropped.
 * Errors as att_jcmd; a reply with no histogram line is ATT_IO with the
 * reply's first line in err. *rows is new memory: att_hist_free.
 */
int att_class_histogram(int pid, bool all, int timeout_ms, struct att_hist_row **rows,
			uint32_t *n, enum att_kind *kind, struct hs_error *err);
void att_hist_free(struct att_hist_row *rows, uint32_t n);

/*
 * att_load_agent: load the JVMTI agent library lib (an absolute path in
 * heapsh's file system) into JVM pid, passing options (NULL for none) to its
 * Agent_OnAttach.
 *
 * A JVM in another mount namespace (a container) cannot open heapsh's
 * files: lib is copied into a private folder of its own /tmp
 * (att_jvm_dir_make, prefix "heapsh-agent-"), owned by the JVM's user, and
 * the JVM loads it by the path it sees (/tmp/heapsh-agent-XXXXXX/NAME).
 * HotSpot's load is done when the reply comes (dlopen, then
 * Agent_OnAttach), so the folder and the copy are removed as soon as the
 * JVM answers, loaded or not: a loaded library stays mapped. A JVM that
 * still has such a copy of lib mapped (attached before, by heapsh as root,
 * which may read it through /proc/PID/map_files to compare) is given that
 * copy's path again instead, which its dynamic linker resolves to the
 * loaded library without a file, so attaching again maps no new copy (a
 * new copy is made when the JVM refuses that path). When the copy cannot
 * be made (a noexec, read-only or full /tmp) but lib's path holds a
 * file inside the container too (a folder shared with it, or a copy put
 * there by hand at the same path), that path is loaded as it is.
 *
 * Fails with ATT_REFUSED when the JVM could not load it (err has the JVM's
 * text and says how to start the JVM instead: -agentpath or
 * -XX:+EnableDynamicAgentLoading) or when Agent_OnAttach returned non-zero;
 * ATT_BAD_REQUEST when lib is relative or missing; ATT_OTHER_USER or ATT_IO
 * (err says which file and why) when a container's /tmp cannot be reached.
 */
int att_load_agent(int pid, const char *lib, const char *options,
		   int timeout_ms, enum att_kind *kind, struct hs_error *err);

/*
 * struct att_jvm_dir: a private folder where heapsh and a JVM pass each
 * other files (the agent library the JVM loads, the heap dumps it writes).
 * For a JVM in heapsh's mount namespace it is made in a folder heapsh
 * chooses (local_base: $TMPDIR or /tmp), as any temporary folder; for a JVM
 * in another mount namespace (a container), in that JVM's own /tmp, reached
 * through /proc/PID/root/tmp, since heapsh's /tmp is not the JVM's. Mode
 * 0700; given to the JVM's effective user and group when heapsh runs as
 * root and the JVM does not (otherwise it is heapsh's, which is then the
 * JVM's user: attaching asks for that). Below /proc/PID/root no symbolic
 * link is followed (a container owns its /tmp, and root must not be sent to
 * the host's files): the folder and every file in it are reached through
 * open directory descriptors.
 *
 * Ownership: the struct is the caller's; att_jvm_dir_remove closes its
 * descriptors and removes the folder with what is in it, and may be called
 * on a struct att_jvm_dir_make failed to fill, or twice.
 */
struct att_jvm_dir {
	int fd;			/* the folder, open; -1 when there is none */
	int parent_fd;		/* the folder it is in ($TMPDIR, /tmp, the JVM's /tmp) */
	bool other_ns;		/* the JVM runs in another mount namespace */
	uid_t uid;		/* the JVM's effective ids: the owner of what is made */
	gid_t gid;
	char name[64];		/* its name: PREFIX + 6 random characters */
	char here[PATH_MAX + 64];	/* the folder as heapsh opens it: /proc/PID/root/tmp/NAME */
	char there[PATH_MAX + 64];	/* the same folder as the JVM sees it: /tmp/NAME */
};

/*
 * att_jvm_dir_make: make d, a new private folder PREFIX-XXXXXX for JVM pid
 * (see struct att_jvm_dir). local_base (NULL or "": /tmp) is used only when
 * the JVM shares heapsh's mount namespace. prefix: at most 40 bytes, no '/'.
 * Errors: ATT_NO_PROCESS, ATT_OTHER_USER when /proc/PID/root cannot be
 * opened (another user's process and heapsh not root), ATT_IO when the
 * folder cannot be made (err names it and says why); d is then empty.
 */
int att_jvm_dir_make(int pid, const char *local_base, const char *prefix, struct att_jvm_dir *d,
		     enum att_kind *kind, struct hs_error *err);

/*
 * att_jvm_dir_put: copy the file src (a path in heapsh's file system) into
 * d as name (a new file, mode 0500, owned as the folder). ATT_BAD_REQUEST
 * when src cannot be read or is not a regular file; ATT_IO when the copy
 * fails (the partial file is removed).
 */
int att_jvm_dir_put(struct att_jvm_dir *d, const char *src, const char *name,
		    enum att_kind *kind, struct hs_error *err);

/*
 * att_jvm_dir_open: open the file name of d (written by the JVM) for
 * reading, through d's folder descriptor and without following a symbolic
 * link, so a process of the JVM's user cannot swap it for a link to a file
 * heapsh may read and it may not. Returns the descriptor (the caller closes
 * it), or -1 with ATT_IO when it cannot be opened or is not a regular file.
 */
int att_jvm_dir_open(const struct att_jvm_dir *d, const char *name, enum att_kind *kind,
		     struct hs_error *err);

/*
 * att_jvm_dir_get: copy the file name of d (written by the JVM) to dest, a
 * path in heapsh's file system that must not exist yet (made with the
 * file's permission bits, owned by heapsh). Ctrl-C (hs_interrupted) stops
 * it with HS_INTERRUPTED; on any failure dest is removed. ATT_IO otherwise.
 */
int att_jvm_dir_get(const struct att_jvm_dir *d, const char *name, const char *dest,
		    enum att_kind *kind, struct hs_error *err);

/*
 * att_jvm_dir_dump: HotSpot writes the live heap of JVM pid into the file
 * name of d (att_heap_dump, given the path as the JVM sees it; timeout_ms as
 * there). When it fails, or writes no file, err says what HotSpot said and
 * how much room the folder's file system had left (a container's /tmp is
 * often small), and a partial file is removed. Errors as att_heap_dump;
 * ATT_IO when HotSpot answered but wrote no file.
 */
int att_jvm_dir_dump(int pid, struct att_jvm_dir *d, const char *name, int timeout_ms,
		     enum att_kind *kind, struct hs_error *err);

/*
 * att_jvm_dir_has: name is a regular file in d (not a symbolic link), with
 * *bytes (may be NULL) its size.
 */
bool att_jvm_dir_has(const struct att_jvm_dir *d, const char *name, uint64_t *bytes);

/* att_jvm_dir_remove: remove the files in d and the folder, close it; d is then empty. */
void att_jvm_dir_remove(struct att_jvm_dir *d);

/*
 * att_tmp_dir: the target's /tmp as a path we can use: "/proc/PID/root/tmp"
 * when the process is in another mount namespace, else "/tmp". buf gets at
 * most cap bytes. Returns HS_ERR only when cap is too small.
 */
int att_tmp_dir(int pid, char *buf, size_t cap);

/*
 * att_same_mnt_ns: whether process pid shares heapsh's mount namespace, so
 * that a path means the same file to both (true when /proc cannot tell).
 */
bool att_same_mnt_ns(int pid);

/* att_nspid: pid's pid in its own (innermost) pid namespace, from the NSpid
 * line of /proc/PID/status; pid itself when that line is missing or unreadable. */
int att_nspid(int pid);

/*
 * att_which_vm: which JVM process pid is, from the libraries in
 * /proc/pid/maps (what jps's /proc fallback looks for): 1 for HotSpot
 * (libjvm.so), 2 for OpenJ9 (libj9vm*.so), 0 for neither, -1 with errno
 * (ENOENT: no such process). Reads the map only; sends pid nothing.
 */
int att_which_vm(int pid);

/*
 * att_main_class: what the JVM pid runs, as jps names it: its main class
 * (com.acme.Main), or the jar given to -jar, read from /proc/pid/cmdline
 * (the first word after the JVM's options and their values). Into buf
 * (cap bytes, cut short, NUL-terminated); false, with buf "", when it
 * cannot be read.
 */
bool att_main_class(int pid, char *buf, size_t cap);

/* ---- the pieces att_command is made of, exported for tests ---- */

/*
 * att_frame: the request bytes for cmd and up to three arguments (NULL =
 * empty): "1\0" cmd "\0" arg1 "\0" arg2 "\0" arg3 "\0". *req (caller frees)
 * and *len get them. ATT_BAD_REQUEST when cmd is empty or a string is too
 * long for HotSpot (ATT_NAME_MAX, ATT_ARG_MAX).
 */
int att_frame(const char *cmd, const char *arg1, const char *arg2, const char *arg3,
	      char **req, size_t *len, enum att_kind *kind, struct hs_error *err);

/*
 * att_exchange: on a connected stream socket fd (left open), send req[len]
 * and read the reply until the peer closes it, within timeout_ms. pid is
 * the JVM's, only to tell a JVM that exited (ATT_EXITED) from one that hung
 * up (ATT_IO). *reply (caller frees, NUL-terminated) and *reply_len get the
 * raw reply. ATT_TIMEOUT when the deadline passes.
 */
int att_exchange(int fd, int pid, const char *req, size_t len, int timeout_ms,
		 char **reply, size_t *reply_len, enum att_kind *kind,
		 struct hs_error *err);

/*
 * att_parse_reply: the status line at the start of reply[len]: an optional
 * '-', decimal digits, then '\n' or the end. *status gets the number,
 * *text_off where the text after the line starts. ATT_IO when the reply is
 * empty or does not start with a status line.
 */
int att_parse_reply(const char *reply, size_t len, int *status, size_t *text_off,
		    enum att_kind *kind, struct hs_error *err);

/*
 * att_load_return_code: the agent's return code in the text of a successful
 * "load" reply: "return code: N" (JDK 9 and later) or a bare "N" (JDK 8);
 * empty text counts as 0. HS_ERR when the text is neither.
 */
int att_load_return_code(const char *text, int *rc);

#endif
