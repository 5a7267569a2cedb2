/*
 * attach.c - HotSpot's dynamic attach protocol on Linux; see attach.h.
 *
 * Written from the protocol as OpenJDK implements it
 * (src/hotspot/os/linux/attachListener_linux.cpp, the listener;
 * src/jdk.attach/linux/classes/sun/tools/attach/VirtualMachineImpl.java, the
 * client) and as jattach documents it; no code is taken from either.
 */
#include "attach.h"
#include "attach_internal.h"
#include "snapshot.h"

#include "../base/io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define PROTOCOL_VERSION "1"
#define BADVERSION_STATUS 101	/* HotSpot's ATTACH_ERROR_BADVERSION */
#define SMALL_FILE_MAX (1u << 20)	/* cmdline / environ read at most, bytes */

/* What /proc tells about the target process. */
struct target {
	int pid;		/* as we see it */
	int nspid;		/* in its own pid namespace */
	uid_t uid;		/* effective */
	gid_t gid;		/* effective */
	char state;		/* first letter of the State line: R S D T t Z X ... */
	unsigned long long sigcgt, sigign;	/* caught / ignored signal masks */
	char comm[64];		/* the Name line */
	char tmp[64];		/* its /tmp as we can reach it */
};

/* Saved effective ids while we act as the JVM's user. */
struct creds {
	bool switched;
	uid_t uid;
	gid_t gid;
};

static const char *const kind_names[] = {
	[ATT_OK] = "ok",
	[ATT_NO_PROCESS] = "no-process",
	[ATT_NOT_JVM] = "not-jvm",
	[ATT_DISABLED] = "disabled",
	[ATT_OTHER_USER] = "other-user",
	[ATT_TIMEOUT] = "timeout",
	[ATT_EXITED] = "exited",
	[ATT_REFUSED] = "refused",
	[ATT_IO] = "io",
	[ATT_BAD_REQUEST] = "bad-request",
	[ATT_INTERRUPTED] = "interrupted",
};

const char *att_kind_name(enum att_kind kind)
{
	if ((unsigned)kind < sizeof kind_names / sizeof kind_names[0] && kind_names[kind])
		return kind_names[kind];
	return "unknown";
}

int att_fail(enum att_kind *kind, enum att_kind k, struct hs_error *err, const char *fmt, ...)
{
	if (kind)
		*kind = k;
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
		err->offset = -1;
		err->line = err->col = 0;
	}
	return k == ATT_INTERRUPTED ? HS_INTERRUPTED : HS_ERR;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int64_t ms)
{
	if (ms <= 0)
		return;
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* snippet: text on one line, trimmed, at most cap-1 bytes, for messages. */
static void snippet(const char *text, char *buf, size_t cap)
{
	size_t n = 0;
	bool space = false;
	if (!text)
		text = "";
	while (*text == ' ' || *text == '\t' || *text == '\n' || *text == '\r')
		text++;
	for (; *text && n + 1 < cap; text++) {
		unsigned char c = (unsigned char)*text;
		if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
			space = true;
			continue;
		}
		if (space && n + 2 < cap) {
			buf[n++] = ' ';
		}
		space = false;
		buf[n++] = c < 0x20 ? '?' : (char)c;
	}
	buf[n] = 0;
	if (*text && n > 3)
		memcpy(buf + n - 3, "...", 3);
}

/* ---- /proc ---- */

/* read_small: up to SMALL_FILE_MAX bytes of path, NUL-terminated; -1 with errno. */
static int read_small(const char *path, char **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t cap = 4096, n = 0;
	char *b = xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			if (cap >= SMALL_FILE_MAX)
				break;
			cap *= 2;
			b = xrealloc(b, cap + 1);
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(b);
			close(fd);
			errno = e;
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}

/* read_status: fill t from /proc/pid/status; -1 with errno when unreadable. */
static int read_status(int pid, struct target *t)
{
	char path[64], line[1024];
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	memset(t, 0, sizeof *t);
	t->pid = pid;
	t->nspid = pid;
	t->uid = (uid_t)-1;
	t->gid = (gid_t)-1;
	t->state = '?';
	bool any = false;
	while (fgets(line, sizeof line, f)) {
		char *v = strchr(line, ':');
		if (!v)
			continue;
		*v++ = 0;
		v += strspn(v, " \t");
		v[strcspn(v, "\n")] = 0;
		any = true;
		if (strcmp(line, "Name") == 0) {
			snprintf(t->comm, sizeof t->comm, "%s", v);
		} else if (strcmp(line, "State") == 0) {
			t->state = v[0] ? v[0] : '?';
		} else if (strcmp(line, "Uid") == 0 || strcmp(line, "Gid") == 0) {
			/* real, effective, saved, filesystem: the effective one counts */
			unsigned long r, e;
			if (sscanf(v, "%lu %lu", &r, &e) == 2) {
				if (line[0] == 'U')
					t->uid = (uid_t)e;
				else
					t->gid = (gid_t)e;
			}
		} else if (strcmp(line, "NSpid") == 0) {
			/* outermost first; the last is the innermost namespace */
			char *tok, *save = NULL;
			for (tok = strtok_r(v, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
				long n = strtol(tok, NULL, 10);
				if (n > 0 && n <= INT_MAX)
					t->nspid = (int)n;
			}
		} else if (strcmp(line, "SigCgt") == 0) {
			t->sigcgt = strtoull(v, NULL, 16);
		} else if (strcmp(line, "SigIgn") == 0) {
			t->sigign = strtoull(v, NULL, 16);
		}
	}
	fclose(f);
	if (!any) {
		errno = ESRCH;
		return -1;
	}
	return 0;
}

/* gone: the process no longer exists or is a zombie. */
static bool gone(int pid)
{
	struct target t;
	if (read_status(pid, &t) != 0)
		return errno == ENOENT || errno == ESRCH;
	return t.state == 'Z' || t.state == 'X';
}

bool att_same_mnt_ns(int pid)
{
	char path[64];
	struct stat self, other;
	snprintf(path, sizeof path, "/proc/%d/ns/mnt", pid);
	if (stat("/proc/self/ns/mnt", &self) != 0 || stat(path, &other) != 0)
		return true;
	return self.st_ino == other.st_ino && self.st_dev == other.st_dev;
}

int att_tmp_dir(int pid, char *buf, size_t cap)
{
	int n;
	if (att_same_mnt_ns(pid))
		n = snprintf(buf, cap, "/tmp");
	else
		n = snprintf(buf, cap, "/proc/%d/root/tmp", pid);
	return n >= 0 && (size_t)n < cap ? HS_OK : HS_ERR;
}

int att_nspid(int pid)
{
	struct target t;
	if (read_status(pid, &t) != 0)
		return pid;
	return t.nspid;
}

int att_read_ids(int pid, uid_t *uid, gid_t *gid)
{
	struct target t;
	if (read_status(pid, &t) != 0)
		return -1;
	*uid = t.uid;
	*gid = t.gid;
	return 0;
}

int att_which_vm(int pid)
{
	char path[64], line[4096 + 256];
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int vm = 0;
	bool midline = false;
	while (vm != 1 && fgets(line, sizeof line, f)) {
		bool start = !midline;
		size_t n = strlen(line);
		midline = n > 0 && line[n - 1] != '\n';
		if (!start)
			continue;
		/* address perms offset dev inode pathname: the path begins with '/' */
		char *p = strchr(line, '/');
		if (!p)
			continue;
		char *base = strrchr(p, '/') + 1;
		size_t blen = strcspn(base, " \n");
		if (blen == 9 && strncmp(base, "libjvm.so", 9) == 0)
			vm = 1;
		else if (strncmp(base, "libj9vm", 7) == 0)
			vm = 2;
	}
	int e = ferror(f) ? errno : 0;
	fclose(f);
	if (e) {
		errno = e;
		return -1;
	}
	return vm;
}

/* user_name: "name (uid N)" for messages. */
static void user_name(uid_t uid, char *buf, size_t cap)
{
	struct passwd pw, *res = NULL;
	char tmp[1024];
	if (getpwuid_r(uid, &pw, tmp, sizeof tmp, &res) == 0 && res)
		snprintf(buf, cap, "%s (uid %lu)", res->pw_name, (unsigned long)uid);
	else
		snprintf(buf, cap, "uid %lu", (unsigned long)uid);
}

/*
 * check_target: the process exists, we may talk to it, and it is a HotSpot
 * JVM. Fills t (with its namespace pid and /tmp). Sends nothing.
 */
static int check_target(int pid, struct target *t, enum att_kind *kind, struct hs_error *err)
{
	if (pid <= 0)
		return att_fail(kind, ATT_NO_PROCESS, err, "%d is not a process id: give the pid of a "
			    "running JVM (`jps -l` lists them)", pid);
	if (read_status(pid, t) != 0) {
		if (errno == ENOENT || errno == ESRCH)
			return att_fail(kind, ATT_NO_PROCESS, err, "no process %d (it may have exited): "
				    "give the pid of a running JVM (`jps -l` lists them)", pid);
		return att_fail(kind, ATT_IO, err, "cannot read /proc/%d/status: %s", pid, strerror(errno));
	}
	if (t->state == 'Z' || t->state == 'X')
		return att_fail(kind, ATT_NO_PROCESS, err, "process %d (%s) has exited", pid, t->comm);

	uid_t me = geteuid();
	if (me != 0 && (t->uid != me || t->gid != getegid())) {
		char them[128], us[128];
		user_name(t->uid, them, sizeof them);
		user_name(me, us, sizeof us);
		if (t->uid != me)
			return att_fail(kind, ATT_OTHER_USER, err, "process %d (%s) runs as %s and heapsh as %s: "
				    "a JVM accepts attach requests only from its own user or root; run heapsh "
				    "as that user (e.g. sudo -u '#%lu' heapsh ...)", pid, t->comm, them, us,
				    (unsigned long)t->uid);
		return att_fail(kind, ATT_OTHER_USER, err, "process %d (%s) runs with group id %lu and heapsh "
			    "with %lu: a JVM accepts attach requests only from its own user and group, or "
			    "root; run heapsh with the JVM's group (sg) or as root", pid, t->comm,
			    (unsigned long)t->gid, (unsigned long)getegid());
	}

	int vm = att_which_vm(pid);
	if (vm < 0) {
		if (errno == ENOENT || errno == ESRCH)
			return att_fail(kind, ATT_NO_PROCESS, err, "process %d exited", pid);
		return att_fail(kind, ATT_IO, err, "cannot read /proc/%d/maps (%s), so heapsh cannot tell "
			    "whether process %d (%s) is a JVM and sent it nothing", pid, strerror(errno),
			    pid, t->comm);
	}
	if (vm == 2)
		return att_fail(kind, ATT_NOT_JVM, err, "process %d (%s) is an OpenJ9 JVM: heapsh attaches to "
			    "HotSpot JVMs only (OpenJDK, Oracle, Temurin, ...); nothing was sent to it; "
			    "dump its heap with its own tools", pid, t->comm);
	if (vm == 0)
		return att_fail(kind, ATT_NOT_JVM, err, "process %d (%s) is not a HotSpot JVM (no libjvm.so "
			    "in its memory map); nothing was sent to it; give the pid of a java process "
			    "(`jps -l` lists them)", pid, t->comm);

	if (att_tmp_dir(pid, t->tmp, sizeof t->tmp) != HS_OK)
		return att_fail(kind, ATT_IO, err, "the path of process %d's /tmp is too long", pid);
	return HS_OK;
}

/*
 * Where a flag is set, in the order HotSpot applies the sources (a later one
 * overrides an earlier one): JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS (the java
 * launcher adds it before its arguments), the command line, _JAVA_OPTIONS.
 */
struct flags {
	int disable_attach;	/* -1 unset, 0 / 1 */
	const char *disable_where;	/* the source that set it last */
	bool xrs;		/* -Xrs or -XX:+ReduceSignalUsage */
};

static void flag(struct flags *fl, const char *tok, size_t n, const char *where)
{
	static const char on[] = "-XX:+DisableAttachMechanism", off[] = "-XX:-DisableAttachMechanism";
	if (n == sizeof on - 1 && memcmp(tok, on, n) == 0) {
		fl->disable_attach = 1;
		fl->disable_where = where;
	} else if (n == sizeof off - 1 && memcmp(tok, off, n) == 0) {
		fl->disable_attach = 0;
		fl->disable_where = where;
	} else if ((n == 4 && memcmp(tok, "-Xrs", 4) == 0) ||
		   (n == 22 && memcmp(tok, "-XX:+ReduceSignalUsage", 22) == 0)) {
		fl->xrs = true;
	}
}

/* env_flags: the whitespace-separated options of variable name in environ. */
static void env_flags(struct flags *fl, const char *env, size_t len, const char *name)
{
	size_t nl = strlen(name);
	for (size_t i = 0; i < len; i += strlen(env + i) + 1) {
		const char *e = env + i;
		if (strncmp(e, name, nl) != 0 || e[nl] != '=')
			continue;
		const char *p = e + nl + 1;
		while (*p) {
			p += strspn(p, " \t\n");
			size_t n = strcspn(p, " \t\n");
			if (n)
				flag(fl, p, n, name);
			p += n;
		}
	}
}

/* read_flags: the attach-related flags of JVM pid, as far as /proc shows them. */
static void read_flags(int pid, struct flags *fl)
{
	char path[64], *env = NULL, *cmd = NULL;
	size_t elen = 0, clen = 0;
	fl->disable_attach = -1;
	fl->disable_where = NULL;
	fl->xrs = false;
	snprintf(path, sizeof path, "/proc/%d/environ", pid);
	if (read_small(path, &env, &elen) == 0) {
		env_flags(fl, env, elen, "JAVA_TOOL_OPTIONS");
		env_flags(fl, env, elen, "JDK_JAVA_OPTIONS");
	}
	snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
	if (read_small(path, &cmd, &clen) == 0) {
		size_t first = strlen(cmd) + 1;	/* skip argv[0] */
		for (size_t i = first; i < clen; i += strlen(cmd + i) + 1)
			flag(fl, cmd + i, strlen(cmd + i), "its command line");
	}
	if (env)
		env_flags(fl, env, elen, "_JAVA_OPTIONS");
	free(env);
	free(cmd);
}

/* ---- credentials ---- */

/* become: as root, act as the JVM's user (effective ids only). */
static int become(const struct target *t, struct creds *saved, enum att_kind *kind, struct hs_error *err)
{
	saved->switched = false;
	saved->uid = geteuid();
	saved->gid = getegid();
	if (saved->uid != 0 || t->uid == 0 || t->uid == (uid_t)-1 || t->gid == (gid_t)-1)
		return HS_OK;
	if (setegid(t->gid) != 0)
		return att_fail(kind, ATT_IO, err, "cannot switch to group %lu of JVM %d: %s",
			    (unsigned long)t->gid, t->pid, strerror(errno));
	if (seteuid(t->uid) != 0) {
		int e = errno;
		if (setegid(saved->gid) != 0) {
			/* cannot happen while euid is still 0 */
		}
		return att_fail(kind, ATT_IO, err, "cannot switch to user %lu of JVM %d: %s",
			    (unsigned long)t->uid, t->pid, strerror(e));
	}
	saved->switched = true;
	return HS_OK;
}

/*
 * restore: back to the ids become() saved. Should that fail (it cannot while
 * the saved set-user-ID is root), heapsh runs on as the JVM's user: fewer
 * rights, not more, so it is an error for the front end to report
 * (ATT_IO), not a reason to end the process.
 */
static int restore(struct creds *saved, enum att_kind *kind, struct hs_error *err)
{
	if (!saved->switched)
		return HS_OK;
	if (seteuid(saved->uid) != 0 || setegid(saved->gid) != 0) {
		int e = errno;
		return att_fail(kind, ATT_IO, err, "cannot switch back to user %lu after attaching: %s; "
			    "heapsh now runs as user %lu and cannot attach to other users' JVMs; "
			    "start heapsh again", (unsigned long)saved->uid, strerror(e),
			    (unsigned long)geteuid());
	}
	saved->switched = false;
	return HS_OK;
}

/* ---- the socket ---- */

static bool is_socket(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* try_connect: a non-blocking, close-on-exec socket connected to path; -1 with errno. */
static int try_connect(const char *path, int64_t deadline)
{
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof a.sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(a.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	for (;;) {
		if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
			return fd;
		/* a full listen backlog: wait for the listener to accept others */
		if ((errno == EAGAIN || errno == EINTR) && now_ms() < deadline && !hs_interrupted) {
			sleep_ms(10);
			continue;
		}
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
}

/*
 * make_trigger: create .attach_pid<nspid> in the JVM's working directory,
 * else in its /tmp; path gets the one made. The file must end up owned by
 * us (some file systems map owners; HotSpot ignores a file it does not
 * trust). Returns -1 with errno when neither place works.
 */
static int make_trigger(const struct target *t, char *path, size_t cap)
{
	for (int where = 0; where < 2; where++) {
		if (where == 0)
			snprintf(path, cap, "/proc/%d/cwd/.attach_pid%d", t->pid, t->nspid);
		else
			snprintf(path, cap, "%s/.attach_pid%d", t->tmp, t->nspid);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0660);
		struct stat st;
		if (fd >= 0) {
			bool ours = fstat(fd, &st) == 0 && st.st_uid == geteuid();
			close(fd);
			if (ours)
				return 0;
			unlink(path);
		} else if (errno == EEXIST && lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
			   st.st_uid == geteuid()) {
			return 0;	/* a trigger left by an earlier attempt: ours */
		}
	}
	return -1;
}

/*
 * start_listener: make JVM t start its attach listener (trigger file +
 * SIGQUIT) and wait for its socket until deadline. Checks first that
 * SIGQUIT is safe and useful.
 */
static int start_listener(const struct target *t, const char *sock, int64_t deadline,
			  enum att_kind *kind, struct hs_error *err)
{
	struct flags fl;
	read_flags(t->pid, &fl);
	if (fl.disable_attach == 1)
		return att_fail(kind, ATT_DISABLED, err, "JVM %d was started with -XX:+DisableAttachMechanism "
			    "(in %s): it accepts no attach requests; restart it without that flag (or "
			    "start it with -agentpath:/path/to/libheapsh_agent.so)", t->pid, fl.disable_where);

	/* HotSpot catches SIGQUIT; one that does not would be killed by it. */
	unsigned long long quit = 1ull << (SIGQUIT - 1);
	if (!(t->sigcgt & quit) || (t->sigign & quit)) {
		if (fl.xrs)
			return att_fail(kind, ATT_DISABLED, err, "JVM %d was started with -Xrs, so it does not "
				    "handle SIGQUIT and its attach listener cannot be started on demand; "
				    "restart it without -Xrs, or with -XX:+StartAttachListener", t->pid);
		return att_fail(kind, ATT_DISABLED, err, "JVM %d does not handle SIGQUIT yet (still starting, or "
			    "started with -Xrs), so its attach listener cannot be started and SIGQUIT "
			    "would kill it; nothing was sent; try again in a moment", t->pid);
	}

	char trig[PATH_MAX];
	if (make_trigger(t, trig, sizeof trig) != 0)
		return att_fail(kind, ATT_IO, err, "cannot create the attach trigger file .attach_pid%d in the "
			    "working directory of JVM %d or in %s: %s", t->nspid, t->pid, t->tmp,
			    strerror(errno));
	if (kill(t->pid, SIGQUIT) != 0) {
		int e = errno;
		unlink(trig);
		if (e == ESRCH)
			return att_fail(kind, ATT_EXITED, err, "JVM %d exited before it could be attached", t->pid);
		return att_fail(kind, ATT_IO, err, "cannot signal JVM %d: %s", t->pid, strerror(e));
	}

	int64_t start = now_ms(), until = deadline, step = 20;
	if (until > start + ATT_START_TIMEOUT_MS)
		until = start + ATT_START_TIMEOUT_MS;
	int st = HS_OK;
	for (;;) {
		if (is_socket(sock))
			break;
		if (hs_interrupted) {
			st = att_fail(kind, ATT_INTERRUPTED, err, "interrupted while waiting for JVM %d", t->pid);
			break;
		}
		if (gone(t->pid)) {
			st = att_fail(kind, ATT_EXITED, err, "JVM %d exited while its attach listener was "
				  "starting", t->pid);
			break;
		}
		int64_t left = until - now_ms();
		if (left <= 0) {
			struct target now;
			bool stopped = read_status(t->pid, &now) == 0 && (now.state == 'T' || now.state == 't');
			if (stopped)
				st = att_fail(kind, ATT_TIMEOUT, err, "JVM %d is stopped (state %c), so it cannot "
					  "answer; resume it (kill -CONT %d) and try again", t->pid, now.state,
					  t->pid);
			else
				st = att_fail(kind, ATT_TIMEOUT, err, "JVM %d did not start its attach listener "
					  "within %lld ms (no socket %s): attach may be disabled "
					  "(-XX:+DisableAttachMechanism in a flags file), or the JVM is "
					  "busy or hung; try again, or check it with `jstack %d`",
					  t->pid, (long long)(now_ms() - start), sock, t->pid);
			break;
		}
		sleep_ms(step < left ? step : left);
		if (step < 500)
			step += 20;
	}
	unlink(trig);
	return st;
}

/*
 * open_socket: a connection to JVM t's attach listener, starting it when
 * needed. A socket file nobody listens on (left by an earlier process with
 * the same pid) is removed and the listener started anew.
 */
static int open_socket(const struct target *t, int64_t deadline, int *fdp,
		       enum att_kind *kind, struct hs_error *err)
{
	char sock[PATH_MAX];
	snprintf(sock, sizeof sock, "%s/.java_pid%d", t->tmp, t->nspid);
	*fdp = -1;
	struct stat ss;
	if (stat(sock, &ss) == 0 && S_ISSOCK(ss.st_mode)) {
		int fd = try_connect(sock, deadline);
		if (fd >= 0) {
			*fdp = fd;
			return HS_OK;
		}
		int e = errno;
		if (e != ECONNREFUSED && t->uid != (uid_t)-1 && ss.st_uid != t->uid)
			return att_fail(kind, ATT_IO, err, "cannot connect to JVM %d's attach socket %s: %s; "
				    "it belongs to uid %lu, not to the JVM's user (uid %lu), so it was left by "
				    "an earlier process with this pid, and the JVM cannot make its own while it "
				    "is there; remove it (as root) and try again", t->pid, sock, strerror(e),
				    (unsigned long)ss.st_uid, (unsigned long)t->uid);
		if (e != ECONNREFUSED)
			return att_fail(kind, ATT_IO, err, "cannot connect to JVM %d's attach socket %s: %s",
				    t->pid, sock, strerror(e));
		unlink(sock);
	}
	int st = start_listener(t, sock, deadline, kind, err);
	if (st != HS_OK)
		return st;
	int fd = try_connect(sock, deadline);
	if (fd < 0)
		return att_fail(kind, ATT_IO, err, "cannot connect to JVM %d's attach socket %s: %s",
			    t->pid, sock, strerror(errno));
	*fdp = fd;
	return HS_OK;
}

/*
 * remove_stale_socket: as root, remove an attach socket at JVM t's path that
 * another user owns. HotSpot makes its socket as the JVM's own user, so such a
 * socket was left by an earlier process with this pid (killed before it could
 * remove it), and while it is there the JVM cannot rename its own into place
 * (sticky /tmp). Not root: left alone, and open_socket says whose it is.
 * The folder is opened without following a symlink in its last step (a JVM
 * in a container owns its /tmp, and root must not be sent elsewhere), and
 * only a socket is removed.
 */
static void remove_stale_socket(const struct target *t)
{
	if (geteuid() != 0 || t->uid == (uid_t)-1)
		return;
	char parent[sizeof t->tmp], name[32];
	const char *slash = strrchr(t->tmp, '/');
	if (!slash || !slash[1])
		return;
	size_t plen = slash == t->tmp ? 1 : (size_t)(slash - t->tmp);
	memcpy(parent, t->tmp, plen);
	parent[plen] = 0;
	int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return;
	int dfd = openat(pfd, slash + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(pfd);
	if (dfd < 0)
		return;
	snprintf(name, sizeof name, ".java_pid%d", t->nspid);
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode) &&
	    st.st_uid != t->uid)
		unlinkat(dfd, name, 0);
	close(dfd);
}

/* ---- request and reply ---- */

int att_frame(const char *cmd, const char *arg1, const char *arg2, const char *arg3,
	      char **req, size_t *len, enum att_kind *kind, struct hs_error *err)
{
	const char *parts[5] = { PROTOCOL_VERSION, cmd, arg1, arg2, arg3 };
	*req = NULL;
	*len = 0;
	if (!cmd || !*cmd)
		return att_fail(kind, ATT_BAD_REQUEST, err, "no attach command given");
	if (strlen(cmd) > ATT_NAME_MAX)
		return att_fail(kind, ATT_BAD_REQUEST, err, "attach command name '%.40s%s' is longer than "
			    "HotSpot's limit of %d bytes", cmd, strlen(cmd) > 40 ? "..." : "", ATT_NAME_MAX);
	size_t total = 0;
	for (int i = 0; i < 5; i++) {
		size_t n = parts[i] ? strlen(parts[i]) : 0;
		if (i >= 2 && n > ATT_ARG_MAX)
			return att_fail(kind, ATT_BAD_REQUEST, err, "argument %d of attach command '%s' is %zu "
				    "bytes long, more than HotSpot's limit of %d (a shorter path?)",
				    i - 1, cmd, n, ATT_ARG_MAX);
		total += n + 1;
	}
	char *b = xmalloc(total), *p = b;
	for (int i = 0; i < 5; i++) {
		size_t n = parts[i] ? strlen(parts[i]) : 0;
		memcpy(p, parts[i] ? parts[i] : "", n);
		p[n] = 0;
		p += n + 1;
	}
	*req = b;
	*len = total;
	if (kind)
		*kind = ATT_OK;
	return HS_OK;
}

/* wait_fd: poll fd for events until deadline. 1 ready, 0 timeout, -1 Ctrl-C or error (errno). */
static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		if (hs_interrupted) {
			errno = EINTR;
			return -1;
		}
		int64_t left = deadline - now_ms();
		if (left <= 0)
			return 0;
		struct pollfd p = { .fd = fd, .events = events };
		/* wake at least every 200 ms to notice Ctrl-C even with SA_RESTART */
		int r = poll(&p, 1, left > 200 ? 200 : (int)left);
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

/* hangup: the peer went away; say whether the JVM exited or only hung up. */
static int hangup(int pid, const char *when, int e, enum att_kind *kind, struct hs_error *err)
{
	/* an exiting process closes its files a moment before it is a zombie */
	for (int i = 0; i < 20 && !gone(pid); i++)
		sleep_ms(10);
	if (gone(pid))
		return att_fail(kind, ATT_EXITED, err, "JVM %d exited %s", pid, when);
	if (e)
		return att_fail(kind, ATT_IO, err, "the connection to JVM %d failed %s: %s", pid, when,
			    strerror(e));
	return att_fail(kind, ATT_IO, err, "JVM %d closed the connection %s without answering (a JVM "
		    "does so when the caller's user or group is not its own)", pid, when);
}

int att_exchange(int fd, int pid, const char *req, size_t len, int timeout_ms,
		 char **reply, size_t *reply_len, enum att_kind *kind, struct hs_error *err)
{
	if (timeout_ms <= 0)
		timeout_ms = ATT_DEFAULT_TIMEOUT_MS;
	int64_t deadline = now_ms() + timeout_ms;
	char *b = NULL;
	size_t n = 0, cap = 0;
	int st;
	*reply = NULL;
	*reply_len = 0;

	for (size_t off = 0; off < len;) {
		int w = wait_fd(fd, POLLOUT, deadline);
		if (w == 0) {
			st = att_fail(kind, ATT_TIMEOUT, err, "JVM %d did not read the request within %d ms",
				  pid, timeout_ms);
			goto fail;
		}
		if (w < 0 && hs_interrupted) {
			st = att_fail(kind, ATT_INTERRUPTED, err, "interrupted while sending to JVM %d", pid);
			goto fail;
		}
		ssize_t s = w < 0 ? -1 : send(fd, req + off, len - off, MSG_NOSIGNAL);
		if (s < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (s < 0) {
			st = hangup(pid, "while the request was sent", errno, kind, err);
			goto fail;
		}
		off += (size_t)s;
	}

	for (;;) {
		if (cap - n < 4096) {
			if (cap >= ATT_REPLY_MAX) {
				st = att_fail(kind, ATT_IO, err, "the reply of JVM %d is longer than %u MiB",
					  pid, ATT_REPLY_MAX >> 20);
				goto fail;
			}
			cap = cap ? cap * 2 : 16384;
			b = xrealloc(b, cap + 1);
		}
		int w = wait_fd(fd, POLLIN, deadline);
		if (w == 0) {
			st = att_fail(kind, ATT_TIMEOUT, err, "JVM %d did not %s within %d ms; it may be busy "
				  "(a long GC or heap dump) or hung: give it more time, or check it "
				  "with `jstack %d`", pid, n ? "finish its reply" : "answer", timeout_ms, pid);
			goto fail;
		}
		if (w < 0 && hs_interrupted) {
			st = att_fail(kind, ATT_INTERRUPTED, err, "interrupted while waiting for JVM %d (the "
				  "command may still run there)", pid);
			goto fail;
		}
		ssize_t r = w < 0 ? -1 : recv(fd, b + n, cap - n, 0);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r < 0) {
			st = hangup(pid, n ? "while it was answering" : "before answering", errno, kind, err);
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n == 0) {
		st = hangup(pid, "before answering", 0, kind, err);
		goto fail;
	}
	b[n] = 0;
	*reply = b;
	*reply_len = n;
	if (kind)
		*kind = ATT_OK;
	return HS_OK;

fail:
	free(b);
	return st;
}

int att_parse_reply(const char *reply, size_t len, int *status, size_t *text_off,
		    enum att_kind *kind, struct hs_error *err)
{
	size_t i = 0;
	bool neg = false;
	long long v = 0;
	*status = 0;
	*text_off = 0;
	if (i < len && reply[i] == '-') {
		neg = true;
		i++;
	}
	size_t digits = i;
	while (i < len && reply[i] >= '0' && reply[i] <= '9' && i - digits < 10)
		v = v * 10 + (reply[i++] - '0');
	if (i == digits || (i < len && reply[i] != '\n') || v > INT_MAX) {
		char s[80];
		char *t = xstrndup(reply, len < 200 ? len : 200);
		snippet(t, s, sizeof s);
		free(t);
		return att_fail(kind, ATT_IO, err, "the reply does not start with a status line: '%s' "
			    "(not a HotSpot attach listener?)", s);
	}
	*status = neg ? -(int)v : (int)v;
	*text_off = i < len ? i + 1 : i;
	if (kind)
		*kind = ATT_OK;
	return HS_OK;
}

int att_load_return_code(const char *text, int *rc)
{
	const char *p = text;
	*rc = 0;
	p += strspn(p, " \t\r\n");
	if (!*p)
		return HS_OK;
	if (strncmp(p, "return code:", 12) == 0)
		p += 12;
	p += strspn(p, " \t");
	char *end;
	errno = 0;
	long v = strtol(p, &end, 10);
	if (end == p || errno || v < INT_MIN || v > INT_MAX || (*end && !strchr(" \t\r\n", *end)))
		return HS_ERR;
	*rc = (int)v;
	return HS_OK;
}

/* ---- the commands ---- */

int att_command(int pid, const char *cmd, const char *arg1, const char *arg2,
		const char *arg3, int timeout_ms, char **output,
		enum att_kind *kind, struct hs_error *err)
{
	enum att_kind k_unused;
	char *req = NULL, *reply = NULL;
	size_t req_len = 0, reply_len = 0, text_off = 0;
	int fd = -1, status = 0, st;
	struct target t;
	struct creds cr = { 0 };

	if (!kind)
		kind = &k_unused;
	*kind = ATT_OK;
	if (output)
		*output = NULL;
	hs_error_clear(err);
	if (timeout_ms <= 0)
		timeout_ms = ATT_DEFAULT_TIMEOUT_MS;
	int64_t deadline = now_ms() + timeout_ms;

	if ((st = att_frame(cmd, arg1, arg2, arg3, &req, &req_len, kind, err)) != HS_OK)
		goto fail;
	if ((st = check_target(pid, &t, kind, err)) != HS_OK)
		goto fail;
	remove_stale_socket(&t);
	/* as the JVM's user only while the trigger file is made and the socket connected */
	if ((st = become(&t, &cr, kind, err)) != HS_OK)
		goto fail;
	st = open_socket(&t, deadline, &fd, kind, err);
	if (st == HS_OK)
		st = restore(&cr, kind, err);
	if (st != HS_OK)
		goto fail;

	int64_t left = deadline - now_ms();
	if ((st = att_exchange(fd, pid, req, req_len, left > 1 ? (int)left : 1, &reply,
			       &reply_len, kind, err)) != HS_OK)
		goto fail;
	close(fd);
	fd = -1;
	if ((st = att_parse_reply(reply, reply_len, &status, &text_off, kind, err)) != HS_OK)
		goto fail;
	if (output)
		*output = xstrdup(reply + text_off);
	if (status != 0) {
		char s[320];
		snippet(reply + text_off, s, sizeof s);
		if (status == BADVERSION_STATUS)
			st = att_fail(kind, ATT_REFUSED, err, "JVM %d does not speak attach protocol version "
				  "%s (status %d)", pid, PROTOCOL_VERSION, status);
		else
			st = att_fail(kind, ATT_REFUSED, err, "JVM %d refused '%s%s%s' (status %d)%s%s", pid,
				  cmd, arg1 && *arg1 ? " " : "", arg1 ? arg1 : "", status,
				  *s ? ": " : "", s);
		goto fail;
	}
	free(req);
	free(reply);
	return HS_OK;

fail:
	if (cr.switched && restore(&cr, kind, err) != HS_OK)
		st = HS_ERR;	/* its message replaces the first: heapsh's own state changed */
	if (fd >= 0)
		close(fd);
	free(req);
	free(reply);
	return st;
}

int att_jcmd(int pid, const char *cmdline, int timeout_ms, char **output,
	     enum att_kind *kind, struct hs_error *err)
{
	if (output)
		*output = NULL;
	if (!cmdline || !*cmdline)
		return att_fail(kind, ATT_BAD_REQUEST, err, "no diagnostic command given (try 'help')");
	return att_command(pid, "jcmd", cmdline, NULL, NULL, timeout_ms, output, kind, err);
}

int att_heap_dump(int pid, const char *path, int timeout_ms, char **output,
		  enum att_kind *kind, struct hs_error *err)
{
	char *out = NULL, *cmd = xasprintf("GC.heap_dump %s", path), s[320];
	int st = att_jcmd(pid, cmd, timeout_ms, &out, kind, err);
	free(cmd);
	const char *bad = st == HS_OK && out ? strstr(out, "Dump file is incomplete") : NULL;
	if (bad) {
		snippet(bad, s, sizeof s);
		st = att_fail(kind, ATT_REFUSED, err, "JVM %d did not write the whole dump %s: %s", pid,
			      path, s);
	}
	if (output)
		*output = out;
	else
		free(out);
	return st;
}

/* same_bytes: files a and b (paths) hold the same bytes; false when either cannot be read. */
static bool same_bytes(const char *a, const char *b)
{
	enum { CHUNK = 1 << 16 };
	struct stat sa, sb;
	int fa = open(a, O_RDONLY | O_CLOEXEC), fb = open(b, O_RDONLY | O_CLOEXEC);
	bool same = fa >= 0 && fb >= 0 && fstat(fa, &sa) == 0 && fstat(fb, &sb) == 0 &&
		    S_ISREG(sa.st_mode) && S_ISREG(sb.st_mode) && sa.st_size == sb.st_size;
	char *buf = same ? xmalloc(2 * CHUNK) : NULL;
	for (off_t left = same ? sa.st_size : 0; same && left > 0;) {
		size_t n = left < CHUNK ? (size_t)left : CHUNK;
		same = io_read_full(fa, buf, n) && io_read_full(fb, buf + CHUNK, n) &&
		       !memcmp(buf, buf + CHUNK, n);
		left -= (off_t)n;
	}
	free(buf);
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return same;
}

/*
 * loaded_copy: the path, as JVM pid sees it, of a copy of lib an earlier
 * attach put in its /tmp that the JVM still has loaded: mapped, its file
 * removed ("/tmp/heapsh-agent-XXXXXX/NAME (deleted)" in /proc/PID/maps), and
 * with lib's bytes (read through /proc/PID/map_files, which only root may
 * open). Loading that path again gives the JVM the library it has, with no
 * file: glibc's dlopen matches a loaded library by the name it was loaded
 * by before it opens anything. So a JVM attached again and again (heapsh
 * -c in a loop) maps one copy, not one per attach. Into into (cap bytes);
 * false when there is none.
 */
static bool loaded_copy(int pid, const char *lib, char *into, size_t cap)
{
	static const char dir[] = "/tmp/heapsh-agent-", gone_tag[] = " (deleted)";
	const char *base = strrchr(lib, '/') + 1;
	char path[64], line[PATH_MAX + 256], tried[PATH_MAX] = "";
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool found = false;
	while (!found && fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		int off = 0;
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &off) < 2 || off <= 0)
			continue;
		char *name = line + off;
		name[strcspn(name, "\n")] = 0;
		size_t n = strlen(name), d = sizeof dir - 1, g = sizeof gone_tag - 1;
		/* /tmp/heapsh-agent- + 6 characters + / + base + " (deleted)" */
		if (n != d + 7 + strlen(base) + g || strncmp(name, dir, d) || name[d + 6] != '/' ||
		    strncmp(name + d + 7, base, strlen(base)) || strcmp(name + n - g, gone_tag) ||
		    strspn(name + d, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") < 6)
			continue;
		name[n - g] = 0;
		if (!strcmp(name, tried) || n - g >= cap)
			continue;	/* another mapping of a copy already compared */
		snprintf(tried, sizeof tried, "%s", name);
		snprintf(path, sizeof path, "/proc/%d/map_files/%lx-%lx", pid, lo, hi);
		if (same_bytes(path, lib)) {
			snprintf(into, cap, "%s", name);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/*
 * stage_agent: for JVM pid in another mount namespace, a path by which it
 * loads lib (att_load_agent): a copy in a private folder of its /tmp (*d),
 * else lib's own path when a file is there inside the container. into gets
 * the path as the JVM sees it.
 */
static int stage_agent(int pid, const char *lib, struct att_jvm_dir *d, char *into, size_t cap,
		       enum att_kind *kind, struct hs_error *err)
{
	const char *base = strrchr(lib, '/') + 1;
	struct statvfs vfs;
	struct stat inside;
	char seen[PATH_MAX + 64];
	int st = att_jvm_dir_make(pid, NULL, "heapsh-agent-", d, kind, err);
	if (st == HS_OK && fstatvfs(d->fd, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC)) {
		st = att_fail(kind, ATT_IO, err, "the /tmp of JVM %d is mounted noexec, so the JVM cannot "
			  "load a library from it", pid);
		att_jvm_dir_remove(d);
	}
	if (st == HS_OK && (st = att_jvm_dir_put(d, lib, base, kind, err)) != HS_OK)
		att_jvm_dir_remove(d);
	if (st == HS_OK) {
		snprintf(into, cap, "%s/%s", d->there, base);
		return HS_OK;
	}
	if (*kind == ATT_BAD_REQUEST || *kind == ATT_NO_PROCESS || *kind == ATT_INTERRUPTED ||
	    *kind == ATT_OTHER_USER)
		return st;	/* no library here, no JVM, or none of its files reachable */
	snprintf(seen, sizeof seen, "/proc/%d/root%s", pid, lib);
	if (stat(seen, &inside) == 0 && S_ISREG(inside.st_mode)) {
		snprintf(into, cap, "%s", lib);
		return HS_OK;
	}
	char why[sizeof err->msg];
	snprintf(why, sizeof why, "%s", err ? err->msg : "");
	return att_fail(kind, *kind, err, "JVM %d runs in another mount namespace (a container), which "
		    "cannot open heapsh's agent library %s, and heapsh could not copy it in: %s; %s"
		    "make the library visible inside the container at the same path (a shared "
		    "folder, or a copy; HEAPSH_AGENT names the path heapsh uses), or start the JVM "
		    "with -agentpath: and a copy of libheapsh_agent.so inside the container", pid, lib,
		    why, geteuid() != 0 ? "run heapsh as root, or " : "");
}

int att_load_agent(int pid, const char *lib, const char *options,
		   int timeout_ms, enum att_kind *kind, struct hs_error *err)
{
	enum att_kind k_unused;
	char *out = NULL, s[300], path[2 * PATH_MAX + 160], start_with[PATH_MAX + 96];
	struct stat st_lib;
	struct att_jvm_dir d = { .fd = -1, .parent_fd = -1 };
	int rc = 0, st;

	if (!kind)
		kind = &k_unused;
	if (!lib || lib[0] != '/')
		return att_fail(kind, ATT_BAD_REQUEST, err, "the agent library path '%s' is not absolute: the "
			    "JVM resolves it in its own working directory; give the full path",
			    lib ? lib : "");
	if (stat(lib, &st_lib) != 0)
		return att_fail(kind, ATT_BAD_REQUEST, err, "agent library %s: %s", lib, strerror(errno));
	if (!S_ISREG(st_lib.st_mode))
		return att_fail(kind, ATT_BAD_REQUEST, err, "agent library %s is not a regular file", lib);
	/* The JVM opens the path in its own mount namespace. */
	bool other_ns = pid > 0 && !att_same_mnt_ns(pid);
	snprintf(path, sizeof path, "%s", lib);
	snprintf(start_with, sizeof start_with, "-agentpath:%s", lib);
	bool reused = false;
	if (other_ns) {
		reused = loaded_copy(pid, lib, path, sizeof path);
		if (!reused && (st = stage_agent(pid, lib, &d, path, sizeof path, kind, err)) != HS_OK)
			return st;
		snprintf(start_with, sizeof start_with, "-agentpath: and a copy of libheapsh_agent.so "
			 "inside the container");
	}

	st = att_command(pid, "load", path, "true", options ? options : "", timeout_ms, &out,
			 kind, err);
	if (reused && st != HS_OK && *kind == ATT_REFUSED) {
		/* The JVM's dynamic linker looked for the removed file (not glibc's): a new copy. */
		free(out);
		out = NULL;
		if ((st = stage_agent(pid, lib, &d, path, sizeof path, kind, err)) != HS_OK)
			return st;
		st = att_command(pid, "load", path, "true", options ? options : "", timeout_ms, &out,
				 kind, err);
	}
	/* Loaded (or not) once the JVM answers: the copy is no longer needed. */
	att_jvm_dir_remove(&d);
	/* JDK 21+ refuses with status 0 and only a text, no return code. */
	if ((st != HS_OK && *kind == ATT_REFUSED) ||
	    (st == HS_OK && strstr(out ? out : "", "ynamic agent loading"))) {
		snippet(out, s, sizeof s);
		if (strstr(out ? out : "", "ynamic agent loading"))
			st = att_fail(kind, ATT_REFUSED, err, "JVM %d refuses to load agents while running "
				  "(%s); start it with -XX:+EnableDynamicAgentLoading, or with %s", pid, s,
				  start_with);
		else if (strcmp(path, lib))
			st = att_fail(kind, ATT_REFUSED, err, "JVM %d could not load the agent %s (heapsh's "
				  "%s, copied into its /tmp): %s; check that it matches the JVM's "
				  "platform, or start the JVM with %s", pid, path, lib,
				  *s ? s : "no reason given", start_with);
		else
			st = att_fail(kind, ATT_REFUSED, err, "JVM %d could not load the agent %s: %s; check "
				  "that the JVM's user can read it and that it matches the JVM's "
				  "platform, or start the JVM with %s", pid, path,
				  *s ? s : "no reason given", start_with);
		goto done;
	}
	if (st != HS_OK)
		goto done;
	if (att_load_return_code(out, &rc) != HS_OK) {
		snippet(out, s, sizeof s);
		st = att_fail(kind, ATT_IO, err, "JVM %d answered the load request with '%s', not a "
			  "return code", pid, s);
		goto done;
	}
	if (rc != 0) {
		st = att_fail(kind, ATT_REFUSED, err, "the agent %s was loaded into JVM %d but its "
			  "Agent_OnAttach returned %d: the JVM's standard error has the agent's "
			  "reason; or start the JVM with %s", path, pid, rc, start_with);
		goto done;
	}
	*kind = ATT_OK;
done:
	free(out);
	return st;
}

/* ---- GC.class_histogram ---- */

void att_hist_free(struct att_hist_row *rows, uint32_t n)
{
	for (uint32_t i = 0; rows && i < n; i++)
		free(rows[i].name);
	free(rows);
}

/* parse_u64: a decimal number at *p, skipping blanks first; false if none. */
static bool parse_u64(const char **p, uint64_t *v)
{
	const char *s = *p;
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return false;
	uint64_t x = 0;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (x > (UINT64_MAX - 9) / 10)
			return false;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*v = x;
	return true;
}

int att_class_histogram(int pid, bool all, int timeout_ms, struct att_hist_row **rows,
			uint32_t *n, enum att_kind *kind, struct hs_error *err)
{
	enum att_kind k_unused;
	char *out = NULL;
	*rows = NULL;
	*n = 0;
	if (!kind)
		kind = &k_unused;
	/* On as many of the GC's worker threads as this host has processors (JDK 16 and later). */
	char cmd[64];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	snprintf(cmd, sizeof cmd, "GC.class_histogram%s -parallel=%ld", all ? " -all" : "",
		 cpus > 0 && cpus < 1024 ? cpus : 1);
	int st = att_jcmd(pid, cmd, timeout_ms, &out, kind, err);
	if ((st == HS_ERR && *kind != ATT_EXITED && *kind != ATT_NO_PROCESS) ||
	    (st == HS_OK && (!out || !strstr(out, "\nTotal")))) {
		free(out);	/* a JVM before 16: no -parallel */
		out = NULL;
		st = att_jcmd(pid, all ? "GC.class_histogram -all" : "GC.class_histogram", timeout_ms,
			      &out, kind, err);
	}
	if (st)
		return st;
	/* "   1:       4000000      160000000  Order", then "Total N B" */
	size_t cap = 256;
	struct att_hist_row *v = xmallocarray(cap, sizeof *v);
	uint32_t m = 0;
	bool total = false;
	for (char *line = out, *next; line && *line; line = next) {	/* out may be NULL */
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		const char *p = line;
		uint64_t num, count, bytes;
		if (!strncmp(p, "Total", 5)) {
			total = true;
			break;
		}
		if (!parse_u64(&p, &num) || *p++ != ':' || !parse_u64(&p, &count) ||
		    !parse_u64(&p, &bytes))
			continue;	/* the header, the rule */
		while (*p == ' ' || *p == '\t')
			p++;
		size_t len = strcspn(p, " \t\r");
		if (!len)
			continue;
		if (m == cap) {
			cap *= 2;
			v = xreallocarray(v, cap, sizeof *v);
		}
		char *jname = xstrndup(p, len);
		v[m].name = jname[0] == '[' ? snap_java_name(jname) : xstrdup(jname);
		free(jname);
		/* A hidden class (Foo$$Lambda/0x...) as a heap dump names it (Foo$$Lambda+0x...). */
		char *slash = strstr(v[m].name, "/0x");
		if (slash)
			*slash = '+';
		v[m].count = count;
		v[m].bytes = bytes;
		m++;
	}
	if (!total) {
		if (!out)
			out = xstrdup("");
		size_t l = strcspn(out, "\n");
		att_fail(kind, ATT_IO, err, "JVM %d answered GC.class_histogram with no histogram: %.*s",
		     pid, (int)(l > 200 ? 200 : l), out);
		free(out);
		att_hist_free(v, m);
		return HS_ERR;
	}
	free(out);
	*rows = v;
	*n = m;
	return HS_OK;
}

bool att_main_class(int pid, char *buf, size_t cap)
{
	if (cap)
		buf[0] = 0;
	char path[64], args[8192];
	snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(args, 1, sizeof args - 1, f);
	fclose(f);
	args[n] = 0;
	/* the java launcher's options that take the next word as their value */
	static const char *const with_value[] = {"-cp", "-classpath", "--class-path", "-p",
						 "--module-path", "--add-modules", "--add-opens",
						 "--add-exports", "--add-reads", "--patch-module",
						 "--limit-modules", "--upgrade-module-path"};
	const char *p = args + strlen(args) + 1;	/* after the launcher */
	bool jar = false;
	for (; p < args + n; p += strlen(p) + 1) {
		if (!strcmp(p, "-jar")) {
			jar = true;
			continue;
		}
		if (!jar && p[0] == '-') {
			bool skip = false;
			for (size_t k = 0; k < sizeof with_value / sizeof *with_value; k++)
				skip |= !strcmp(p, with_value[k]);
			if (skip)
				p += strlen(p) + 1;
			continue;
		}
		if (!strcmp(p, "-m") || !strcmp(p, "--module"))
			continue;
		snprintf(buf, cap, "%s", p);
		return true;
	}
	return false;
}
