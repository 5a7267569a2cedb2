/*
 * test_attach.c - the HotSpot attach client (src/attach/attach.c) without a
 * JVM: request framing, reply parsing, the exchange over a socketpair, the
 * checks that keep SIGQUIT away from processes it would kill, and the whole
 * attach sequence against a fake JVM.
 *
 * The fake JVM is this program run again as "test_attach --fake-jvm ...": it
 * maps a file named libjvm.so (so /proc/PID/maps looks like a JVM's), and,
 * like HotSpot, on SIGQUIT looks for the trigger file .attach_pid<pid> in its
 * working directory or /tmp, then listens on /tmp/.java_pid<pid> and answers
 * requests. It reports every SIGQUIT on a pipe ("Q1" when the trigger file
 * existed and was owned by its user, "Q0" when not), so tests can tell
 * whether, and how, it was signalled.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/attach/attach.h"

#define NOBODY_UID 65534

static char fake_dir[64];		/* holds libjvm.so; the fakes' working directory */
static char fake_lib[128];

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* dead_pid: the pid of a child that exited and was reaped. */
static int dead_pid(void)
{
	pid_t p = fork();
	assert_true(p >= 0);
	if (p == 0)
		_exit(0);
	assert_int_equal(waitpid(p, NULL, 0), p);
	return (int)p;
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* assert_msg: err.msg contains needle, or the test fails showing it. */
#define assert_msg(err, needle) do { \
	if (!strstr((err).msg, (needle))) \
		fail_msg("message lacks '%s': %s", (needle), (err).msg); \
} while (0)

/* ---- the fake JVM (runs in a child process) ---- */

static volatile sig_atomic_t quits;

static void on_quit(int sig)
{
	(void)sig;
	quits++;
}

/* read_request: up to 5 NUL-terminated strings; returns bytes read, -1 on error. */
static ssize_t read_request(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	int nuls = 0;
	while (nuls < 5 && n < cap) {
		ssize_t r = read(fd, buf + n, 1);
		if (r <= 0)
			return r < 0 ? -1 : (ssize_t)n;
		if (buf[n++] == 0)
			nuls++;
	}
	return (ssize_t)n;
}

/* fake_reply: "echo" answers with the request; otherwise the text with '|' as newline. */
static void fake_reply(int c, const char *reply, const char *req, size_t n)
{
	char out[4096];
	if (strcmp(reply, "echo") == 0) {
		struct ucred cr;
		socklen_t len = sizeof cr;
		memset(&cr, 0, sizeof cr);
		getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &len);
		const char *s[5] = { "", "", "", "", "" };
		size_t off = 0;
		for (int i = 0; i < 5 && off < n; i++) {
			s[i] = req + off;
			off += strlen(req + off) + 1;
		}
		snprintf(out, sizeof out, "0\nversion=%s cmd=%s a1=%s a2=%s a3=%s peer=%u/%u\n",
			 s[0], s[1], s[2], s[3], s[4], (unsigned)cr.uid, (unsigned)cr.gid);
	} else {
		snprintf(out, sizeof out, "%s", reply);
		for (char *p = out; *p; p++)
			if (*p == '|')
				*p = '\n';
	}
	ssize_t w = write(c, out, strlen(out));
	(void)w;
}

/*
 * fake_main: test_attach --fake-jvm MODE REPORT_FD LIB REPLY [ignored flags...]
 * MODE: serve (answer up to 8 connections), silent (catch SIGQUIT, never
 * listen), nocatch (SIGQUIT's default action), exit (read one request, then
 * exit without answering).
 */
static int fake_main(int argc, char **argv)
{
	if (argc < 6)
		return 2;
	const char *mode = argv[2], *lib = argv[4], *reply = argv[5];
	int report = atoi(argv[3]);
	struct rlimit no_core = { 0, 0 };
	setrlimit(RLIMIT_CORE, &no_core);
	alarm(30);		/* never outlive a broken test */

	int lf = open(lib, O_RDONLY);
	if (lf < 0 || mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, lf, 0) == MAP_FAILED)
		return 3;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = strcmp(mode, "nocatch") == 0 ? SIG_DFL : on_quit;
	sigaction(SIGQUIT, &sa, NULL);
	if (write(report, "R", 1) != 1)
		return 4;

	char trig_cwd[64], trig_tmp[64], sock[64];
	snprintf(trig_cwd, sizeof trig_cwd, ".attach_pid%d", (int)getpid());
	snprintf(trig_tmp, sizeof trig_tmp, "/tmp/.attach_pid%d", (int)getpid());
	snprintf(sock, sizeof sock, "/tmp/.java_pid%d", (int)getpid());
	int seen = 0, lsock = -1, served = 0;
	for (;;) {
		if (quits > seen) {
			seen = quits;
			struct stat st;
			bool trig = (stat(trig_cwd, &st) == 0 || stat(trig_tmp, &st) == 0) &&
				    st.st_uid == geteuid();
			if (write(report, trig ? "Q1" : "Q0", 2) != 2)
				return 4;
			if (trig && lsock < 0 && strcmp(mode, "silent") != 0) {
				/* as HotSpot: listen on a temporary name, then rename it into
				 * place, so the socket never appears before it accepts */
				struct sockaddr_un a;
				memset(&a, 0, sizeof a);
				a.sun_family = AF_UNIX;
				snprintf(a.sun_path, sizeof a.sun_path, "%s.tmp", sock);
				unlink(a.sun_path);
				lsock = socket(AF_UNIX, SOCK_STREAM, 0);
				if (lsock < 0 || bind(lsock, (struct sockaddr *)&a, sizeof a) != 0 ||
				    listen(lsock, 5) != 0 || rename(a.sun_path, sock) != 0)
					return 5;
			}
		}
		if (lsock >= 0) {
			struct pollfd p = { .fd = lsock, .events = POLLIN };
			if (poll(&p, 1, 20) == 1) {
				int c = accept(lsock, NULL, NULL);
				if (c < 0)
					continue;
				char req[4200];
				ssize_t n = read_request(c, req, sizeof req);
				if (strcmp(mode, "exit") == 0) {
					unlink(sock);
					_exit(0);
				}
				if (n > 0)
					fake_reply(c, reply, req, (size_t)n);
				close(c);
				if (++served == 8)
					break;
			}
		} else {
			usleep(10000);
		}
	}
	unlink(sock);
	return 0;
}

/* ---- driving fakes from the tests ---- */

struct fake {
	pid_t pid;
	int report;		/* read end of the report pipe */
};

/*
 * spawn: run a fake JVM; extra (NULL-terminated, may be NULL) are more
 * arguments (for its /proc/PID/cmdline), env_add (may be NULL) is one more
 * environment entry, uid (-1: ours) the user it runs as.
 */
static struct fake spawn(const char *mode, const char *reply, const char *const *extra,
			 const char *env_add, int uid)
{
	struct fake f;
	int p[2];
	assert_int_equal(pipe(p), 0);
	char fdnum[16];
	snprintf(fdnum, sizeof fdnum, "%d", p[1]);
	const char *argv[16] = { "test_attach", "--fake-jvm", mode, fdnum, fake_lib, reply };
	int argc = 6;
	for (int i = 0; extra && extra[i] && argc < 15; i++)
		argv[argc++] = extra[i];
	argv[argc] = NULL;

	f.pid = fork();
	assert_true(f.pid >= 0);
	if (f.pid == 0) {
		close(p[0]);
		if (env_add)
			putenv((char *)env_add);
		if (chdir(fake_dir) != 0)
			_exit(6);
		if (uid >= 0 && (setgid((gid_t)uid) != 0 || setuid((uid_t)uid) != 0))
			_exit(7);
		execv("/proc/self/exe", (char *const *)argv);
		_exit(8);
	}
	close(p[1]);
	f.report = p[0];
	struct pollfd pf = { .fd = f.report, .events = POLLIN };
	char r = 0;
	assert_int_equal(poll(&pf, 1, 5000), 1);
	assert_int_equal(read(f.report, &r, 1), 1);
	assert_int_equal(r, 'R');
	fcntl(f.report, F_SETFL, O_NONBLOCK);
	return f;
}

/* reports: what the fake reported so far ("Q1Q1..."). */
static void reports(struct fake *f, char *buf, size_t cap)
{
	size_t n = 0;
	usleep(50000);		/* let it report a signal it just received */
	for (;;) {
		ssize_t r = read(f->report, buf + n, cap - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = 0;
}

static bool alive(pid_t pid)
{
	return waitpid(pid, NULL, WNOHANG) == 0;
}

static void reap(struct fake *f)
{
	kill(f->pid, SIGKILL);
	waitpid(f->pid, NULL, 0);
	close(f->report);
	char sock[64];
	snprintf(sock, sizeof sock, "/tmp/.java_pid%d", (int)f->pid);
	unlink(sock);
	snprintf(sock, sizeof sock, "/tmp/.java_pid%d.tmp", (int)f->pid);
	unlink(sock);
}

/* stale_socket: a Unix socket at path, owned by us, that nobody listens on. */
static void stale_socket(const char *path)
{
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	unlink(path);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(s >= 0);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
	close(s);
	chmod(path, 0600);
}

static void assert_no_trigger(int pid)
{
	char path[128];
	snprintf(path, sizeof path, "%s/.attach_pid%d", fake_dir, pid);
	assert_false(exists(path));
	snprintf(path, sizeof path, "/tmp/.attach_pid%d", pid);
	assert_false(exists(path));
	snprintf(path, sizeof path, ".attach_pid%d", pid);
	assert_false(exists(path));
}

/* ---- framing and parsing ---- */

static void test_kind_names(void **state)
{
	(void)state;
	for (int i = ATT_OK; i <= ATT_INTERRUPTED; i++) {
		assert_string_not_equal(att_kind_name((enum att_kind)i), "unknown");
		for (int j = ATT_OK; j < i; j++)
			assert_string_not_equal(att_kind_name((enum att_kind)i),
						att_kind_name((enum att_kind)j));
	}
	assert_string_equal(att_kind_name(ATT_NOT_JVM), "not-jvm");
	assert_string_equal(att_kind_name((enum att_kind)99), "unknown");
}

static void test_frame_exact_bytes(void **state)
{
	(void)state;
	char *req;
	size_t len;
	enum att_kind k = ATT_IO;
	assert_int_equal(att_frame("jcmd", "VM.version", NULL, NULL, &req, &len, &k, NULL), HS_OK);
	assert_int_equal(k, ATT_OK);
	static const char want[] = "1\0jcmd\0VM.version\0\0";	/* + the literal's NUL */
	assert_int_equal(len, sizeof want);
	assert_memory_equal(req, want, sizeof want);
	free(req);

	assert_int_equal(att_frame("load", "/a/lib.so", "true", "x=1,y", &req, &len, NULL, NULL), HS_OK);
	static const char want2[] = "1\0load\0/a/lib.so\0true\0x=1,y";
	assert_int_equal(len, sizeof want2);
	assert_memory_equal(req, want2, sizeof want2);
	free(req);

	assert_int_equal(att_frame("properties", NULL, NULL, NULL, &req, &len, NULL, NULL), HS_OK);
	assert_int_equal(len, 2 + 11 + 3);
	free(req);
}

static void test_frame_limits(void **state)
{
	(void)state;
	char *req = (char *)1, big[ATT_ARG_MAX + 2];
	size_t len = 7;
	enum att_kind k = ATT_OK;
	struct hs_error err;

	assert_int_equal(att_frame("", NULL, NULL, NULL, &req, &len, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_BAD_REQUEST);
	assert_null(req);
	assert_int_equal(len, 0);
	assert_int_equal(att_frame(NULL, NULL, NULL, NULL, &req, &len, &k, &err), HS_ERR);
	assert_int_equal(att_frame("abcdefghijklmnopq", NULL, NULL, NULL, &req, &len, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_BAD_REQUEST);
	assert_msg(err, "16");

	memset(big, 'a', ATT_ARG_MAX);
	big[ATT_ARG_MAX] = 0;
	assert_int_equal(att_frame("jcmd", big, NULL, NULL, &req, &len, &k, &err), HS_OK);
	assert_int_equal(len, 2 + 5 + ATT_ARG_MAX + 1 + 2);
	free(req);
	big[ATT_ARG_MAX] = 'a';
	big[ATT_ARG_MAX + 1] = 0;
	k = ATT_OK;
	assert_int_equal(att_frame("jcmd", NULL, NULL, big, &req, &len, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_BAD_REQUEST);
	assert_msg(err, "argument 3");
	assert_null(req);
}

static void test_parse_reply(void **state)
{
	(void)state;
	int status = 99;
	size_t off = 99;
	enum att_kind k = ATT_IO;
	struct hs_error err;

	assert_int_equal(att_parse_reply("0\nhello\n", 8, &status, &off, &k, &err), HS_OK);
	assert_int_equal(status, 0);
	assert_int_equal(off, 2);
	assert_int_equal(k, ATT_OK);
	assert_int_equal(att_parse_reply("-1\nboom", 7, &status, &off, &k, &err), HS_OK);
	assert_int_equal(status, -1);
	assert_int_equal(off, 3);
	assert_int_equal(att_parse_reply("0", 1, &status, &off, &k, &err), HS_OK);
	assert_int_equal(status, 0);
	assert_int_equal(off, 1);
	assert_int_equal(att_parse_reply("101\n", 4, &status, &off, &k, &err), HS_OK);
	assert_int_equal(status, 101);
	/* the length counts, not a NUL */
	assert_int_equal(att_parse_reply("7\nxyz", 1, &status, &off, &k, &err), HS_OK);
	assert_int_equal(status, 7);

	const char *bad[] = { "", "abc\n", "12x\n", "-\n", "\n0\n", "99999999999\n", " 0\n" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		k = ATT_OK;
		assert_int_equal(att_parse_reply(bad[i], strlen(bad[i]), &status, &off, &k, &err), HS_ERR);
		assert_int_equal(k, ATT_IO);
		assert_msg(err, "status line");
	}
}

static void test_load_return_code(void **state)
{
	(void)state;
	int rc = 42;
	assert_int_equal(att_load_return_code("return code: 0\n", &rc), HS_OK);
	assert_int_equal(rc, 0);
	assert_int_equal(att_load_return_code("return code: -1\n", &rc), HS_OK);
	assert_int_equal(rc, -1);
	assert_int_equal(att_load_return_code("return code: 7", &rc), HS_OK);
	assert_int_equal(rc, 7);
	assert_int_equal(att_load_return_code("3\n", &rc), HS_OK);	/* JDK 8 */
	assert_int_equal(rc, 3);
	assert_int_equal(att_load_return_code("", &rc), HS_OK);
	assert_int_equal(rc, 0);
	assert_int_equal(att_load_return_code("Agent failed", &rc), HS_ERR);
	assert_int_equal(att_load_return_code("return code: 5x", &rc), HS_ERR);
	assert_int_equal(att_load_return_code("return code: ", &rc), HS_ERR);
}

/* ---- the exchange, against a listener in a thread ---- */

struct server {
	int fd;
	const char *reply;	/* written in two halves */
	size_t reply_len;
	char got[256];		/* the request it read */
	ssize_t got_len;
};

static void *serve_once(void *arg)
{
	struct server *s = arg;
	s->got_len = read_request(s->fd, s->got, sizeof s->got);
	size_t half = s->reply_len / 2;
	ssize_t w = write(s->fd, s->reply, half);
	usleep(20000);
	w = write(s->fd, s->reply + half, s->reply_len - half);
	(void)w;
	close(s->fd);
	return NULL;
}

static void test_exchange_reply(void **state)
{
	(void)state;
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	struct server s = { .fd = sv[1], .reply = "0\nline one\nline two\n" };
	s.reply_len = strlen(s.reply);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, serve_once, &s), 0);

	char *req, *reply;
	size_t len, rlen;
	enum att_kind k = ATT_IO;
	struct hs_error err;
	assert_int_equal(att_frame("jcmd", "GC.class_histogram", NULL, NULL, &req, &len, NULL, NULL), HS_OK);
	assert_int_equal(att_exchange(sv[0], getpid(), req, len, 5000, &reply, &rlen, &k, &err), HS_OK);
	pthread_join(th, NULL);
	assert_int_equal(k, ATT_OK);
	assert_int_equal(s.got_len, (ssize_t)len);
	assert_memory_equal(s.got, req, len);
	assert_int_equal(rlen, s.reply_len);
	assert_string_equal(reply, s.reply);

	int status;
	size_t off;
	assert_int_equal(att_parse_reply(reply, rlen, &status, &off, NULL, NULL), HS_OK);
	assert_int_equal(status, 0);
	assert_string_equal(reply + off, "line one\nline two\n");
	free(req);
	free(reply);
	close(sv[0]);
}

static void test_exchange_large_reply(void **state)
{
	(void)state;
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	size_t n = 3u << 20;
	char *big = malloc(n);
	assert_non_null(big);
	memset(big, 'x', n);
	memcpy(big, "0\n", 2);
	big[n - 1] = '\n';
	struct server s = { .fd = sv[1], .reply = big, .reply_len = n };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, serve_once, &s), 0);
	char *reply;
	size_t rlen;
	assert_int_equal(att_exchange(sv[0], getpid(), "1\0x\0\0\0", 7, 5000, &reply, &rlen, NULL, NULL),
			 HS_OK);
	pthread_join(th, NULL);
	assert_int_equal(rlen, n);
	assert_memory_equal(reply, big, n);
	assert_int_equal(reply[n], 0);
	free(reply);
	free(big);
	close(sv[0]);
}

static void test_exchange_timeout(void **state)
{
	(void)state;
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	char *reply = (char *)1;
	size_t rlen = 1;
	enum att_kind k = ATT_OK;
	struct hs_error err;
	int64_t t0 = now_ms();
	/* nobody answers: the request fits in the socket buffer, the reply never comes */
	assert_int_equal(att_exchange(sv[0], getpid(), "1\0x\0\0\0", 7, 200, &reply, &rlen, &k, &err),
			 HS_ERR);
	int64_t took = now_ms() - t0;
	assert_int_equal(k, ATT_TIMEOUT);
	assert_null(reply);
	assert_int_equal(rlen, 0);
	assert_true(took >= 190 && took < 2000);
	assert_msg(err, "200 ms");
	close(sv[0]);
	close(sv[1]);
}

static void test_exchange_hangup(void **state)
{
	(void)state;
	int sv[2];
	char *reply;
	size_t rlen;
	enum att_kind k;
	struct hs_error err;

	/* the peer is gone before we write: EPIPE, and no SIGPIPE kills us */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	close(sv[1]);
	k = ATT_OK;
	assert_int_equal(att_exchange(sv[0], getpid(), "1\0x\0\0\0", 7, 2000, &reply, &rlen, &k, &err),
			 HS_ERR);
	assert_int_equal(k, ATT_IO);	/* we are alive, so the "JVM" did not exit */
	assert_null(reply);
	close(sv[0]);

	/* the peer reads the request and closes without a word */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	struct server s = { .fd = sv[1], .reply = "", .reply_len = 0 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, serve_once, &s), 0);
	k = ATT_OK;
	assert_int_equal(att_exchange(sv[0], getpid(), "1\0x\0\0\0", 7, 2000, &reply, &rlen, &k, &err),
			 HS_ERR);
	pthread_join(th, NULL);
	assert_int_equal(k, ATT_IO);
	assert_msg(err, "without answering");
	close(sv[0]);

	/* the same, when the process on the other side no longer exists */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	close(sv[1]);
	k = ATT_OK;
	assert_int_equal(att_exchange(sv[0], dead_pid(), "1\0x\0\0\0", 7, 2000, &reply, &rlen, &k, &err),
			 HS_ERR);
	assert_int_equal(k, ATT_EXITED);
	assert_msg(err, "exited");
	close(sv[0]);
}

/* ---- targets that must not be signalled ---- */

static void test_not_jvm_self(void **state)
{
	(void)state;
	/* were SIGQUIT sent, the handler would count it instead of killing us */
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_quit;
	sigaction(SIGQUIT, &sa, &old);
	quits = 0;

	char *out = (char *)1;
	enum att_kind k = ATT_OK;
	struct hs_error err;
	assert_int_equal(att_jcmd(getpid(), "VM.version", 2000, &out, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_NOT_JVM);
	assert_null(out);
	assert_msg(err, "not a HotSpot JVM");
	assert_msg(err, "nothing was sent");
	assert_int_equal(att_load_agent(getpid(), fake_lib, NULL, 2000, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_NOT_JVM);
	usleep(20000);
	assert_int_equal(quits, 0);
	char path[64];
	snprintf(path, sizeof path, "/tmp/.attach_pid%d", (int)getpid());
	assert_false(exists(path));
	snprintf(path, sizeof path, ".attach_pid%d", (int)getpid());
	assert_false(exists(path));
	sigaction(SIGQUIT, &old, NULL);
}

static void test_no_process(void **state)
{
	(void)state;
	char *out = (char *)1;
	enum att_kind k = ATT_OK;
	struct hs_error err;
	int pids[] = { dead_pid(), 0, -5 };
	for (size_t i = 0; i < 3; i++) {
		k = ATT_OK;
		assert_int_equal(att_jcmd(pids[i], "VM.version", 2000, &out, &k, &err), HS_ERR);
		assert_int_equal(k, ATT_NO_PROCESS);
		assert_null(out);
		assert_msg(err, "process");
	}
	k = ATT_OK;
	assert_int_equal(att_command(dead_pid(), "properties", NULL, NULL, NULL, 0, NULL, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_NO_PROCESS);
	/* kind and err may be NULL */
	assert_int_equal(att_command(dead_pid(), "properties", NULL, NULL, NULL, 0, NULL, NULL, NULL), HS_ERR);
}

static void test_bad_requests(void **state)
{
	(void)state;
	enum att_kind k = ATT_OK;
	struct hs_error err;
	char *out = (char *)1;
	assert_int_equal(att_jcmd(getpid(), "", 1000, &out, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_BAD_REQUEST);
	assert_null(out);
	assert_int_equal(att_load_agent(getpid(), "libheapsh_agent.so", NULL, 1000, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_BAD_REQUEST);
	assert_msg(err, "not absolute");
	assert_int_equal(att_load_agent(getpid(), "/nonexistent/libx.so", NULL, 1000, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_BAD_REQUEST);
	assert_msg(err, "/nonexistent/libx.so");
}

static void test_nspid_and_tmp_dir(void **state)
{
	(void)state;
	char buf[64];
	assert_int_equal(att_nspid(getpid()), getpid());
	assert_int_equal(att_tmp_dir(getpid(), buf, sizeof buf), HS_OK);
	assert_string_equal(buf, "/tmp");
	assert_int_equal(att_tmp_dir(getpid(), buf, 3), HS_ERR);
	int gone = dead_pid();
	assert_int_equal(att_nspid(gone), gone);
}

/*
 * A private folder for a JVM in our mount namespace (att_jvm_dir): made in
 * the base given, mode 0700; a file put in and taken out unchanged; a name
 * taken already is refused; removal leaves nothing, even with a file the
 * "JVM" left in it. (tests/t_container.sh covers another mount namespace.)
 */
static void test_jvm_dir(void **state)
{
	(void)state;
	char base[] = "/tmp/heapsh-unit-XXXXXX", src[64], dest[64], *back = NULL;
	assert_non_null(mkdtemp(base));
	snprintf(src, sizeof src, "%s/src.bin", base);
	snprintf(dest, sizeof dest, "%s/dest.bin", base);
	FILE *f = fopen(src, "w");
	assert_non_null(f);
	for (int i = 0; i < 100000; i++)
		fputc(i * 7, f);
	fclose(f);

	struct att_jvm_dir d;
	enum att_kind k = ATT_IO;
	struct hs_error err;
	assert_int_equal(att_jvm_dir_make(getpid(), base, "heapsh-t-", &d, &k, &err), HS_OK);
	assert_int_equal(k, ATT_OK);
	assert_false(d.other_ns);
	assert_string_equal(d.here, d.there);
	assert_int_equal(strncmp(d.here, base, strlen(base)), 0);
	assert_int_equal(strncmp(d.name, "heapsh-t-", 9), 0);
	assert_int_equal(strlen(d.name), 9 + 6);
	struct stat st;
	assert_int_equal(stat(d.here, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);

	uint64_t bytes = 0;
	assert_false(att_jvm_dir_has(&d, "lib.so", NULL));
	assert_int_equal(att_jvm_dir_put(&d, src, "lib.so", &k, &err), HS_OK);
	assert_true(att_jvm_dir_has(&d, "lib.so", &bytes));
	assert_int_equal(bytes, 100000);
	assert_int_equal(att_jvm_dir_put(&d, src, "lib.so", &k, &err), HS_ERR);	/* O_EXCL */
	assert_int_equal(k, ATT_IO);
	assert_int_equal(att_jvm_dir_put(&d, "/nonexistent/x.so", "y.so", &k, &err), HS_ERR);
	assert_int_equal(k, ATT_BAD_REQUEST);
	assert_msg(err, "/nonexistent/x.so");

	assert_int_equal(att_jvm_dir_get(&d, "lib.so", dest, &k, &err), HS_OK);
	size_t n1 = 0, n2 = 0;
	char *a = NULL;
	FILE *fa = fopen(src, "r"), *fb = fopen(dest, "r");
	assert_non_null(fa);
	assert_non_null(fb);
	a = malloc(200000);
	back = malloc(200000);
	n1 = fread(a, 1, 200000, fa);
	n2 = fread(back, 1, 200000, fb);
	fclose(fa);
	fclose(fb);
	assert_int_equal(n1, 100000);
	assert_int_equal(n2, 100000);
	assert_memory_equal(a, back, n1);
	free(a);
	free(back);
	assert_int_equal(att_jvm_dir_get(&d, "lib.so", dest, &k, &err), HS_ERR);	/* dest exists */
	assert_msg(err, dest);

	/* a leftover of the JVM's, and a symbolic link that must not count as a file */
	char left[PATH_MAX + 80];
	snprintf(left, sizeof left, "%s/left.tmp", d.here);
	close(open(left, O_WRONLY | O_CREAT, 0600));
	snprintf(left, sizeof left, "%s/link", d.here);
	assert_int_equal(symlink(src, left), 0);
	assert_false(att_jvm_dir_has(&d, "link", NULL));
	char here[sizeof d.here];
	snprintf(here, sizeof here, "%s", d.here);
	att_jvm_dir_remove(&d);
	assert_int_equal(d.fd, -1);
	assert_int_not_equal(stat(here, &st), 0);
	att_jvm_dir_remove(&d);	/* twice: nothing happens */

	unlink(src);
	unlink(dest);
	assert_int_equal(rmdir(base), 0);	/* nothing else was left in base */
}

/* ---- the whole sequence against fake JVMs ---- */

static void test_fake_jvm_attach(void **state)
{
	(void)state;
	/* a stale socket file from an earlier process with that pid must not stop us */
	struct fake f = spawn("serve", "echo", NULL, NULL, -1);
	char sock[64], rep[64], want[256];
	snprintf(sock, sizeof sock, "/tmp/.java_pid%d", (int)f.pid);
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
	int stale = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(stale, (struct sockaddr *)&a, sizeof a), 0);
	close(stale);

	char *out = NULL;
	enum att_kind k = ATT_IO;
	struct hs_error err;
	assert_int_equal(att_jcmd(f.pid, "GC.heap_dump /tmp/x y.hprof", 5000, &out, &k, &err), HS_OK);
	assert_int_equal(k, ATT_OK);
	snprintf(want, sizeof want, "version=1 cmd=jcmd a1=GC.heap_dump /tmp/x y.hprof a2= a3= peer=%u/%u\n",
		 (unsigned)geteuid(), (unsigned)getegid());
	assert_string_equal(out, want);
	free(out);
	reports(&f, rep, sizeof rep);
	assert_string_equal(rep, "Q1");		/* one SIGQUIT, with the trigger file there */
	assert_no_trigger(f.pid);

	/* the listener is up: the second request connects without a signal */
	assert_int_equal(att_command(f.pid, "threaddump", "a", NULL, "c", 5000, &out, &k, &err), HS_OK);
	snprintf(want, sizeof want, "version=1 cmd=threaddump a1=a a2= a3=c peer=%u/%u\n",
		 (unsigned)geteuid(), (unsigned)getegid());
	assert_string_equal(out, want);
	free(out);
	reports(&f, rep, sizeof rep);
	assert_string_equal(rep, "");
	reap(&f);
}

static void test_fake_jvm_refuses(void **state)
{
	(void)state;
	struct fake f = spawn("serve", "-1|java.lang.IllegalArgumentException: Unknown diagnostic command|",
			      NULL, NULL, -1);
	char *out = NULL;
	enum att_kind k = ATT_OK;
	struct hs_error err;
	assert_int_equal(att_jcmd(f.pid, "No.such", 5000, &out, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_REFUSED);
	assert_string_equal(out, "java.lang.IllegalArgumentException: Unknown diagnostic command\n");
	assert_msg(err, "status -1");
	assert_msg(err, "Unknown diagnostic command");
	free(out);
	reap(&f);

	f = spawn("serve", "101|", NULL, NULL, -1);
	assert_int_equal(att_jcmd(f.pid, "VM.version", 5000, &out, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_REFUSED);
	assert_msg(err, "protocol version");
	free(out);
	reap(&f);

	f = spawn("serve", "garbage", NULL, NULL, -1);
	assert_int_equal(att_jcmd(f.pid, "VM.version", 5000, &out, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_IO);
	assert_null(out);
	reap(&f);
}

static void test_fake_jvm_load(void **state)
{
	(void)state;
	enum att_kind k = ATT_IO;
	struct hs_error err;
	struct fake f = spawn("serve", "0|return code: 0|", NULL, NULL, -1);
	assert_int_equal(att_load_agent(f.pid, fake_lib, "port=1", 5000, &k, &err), HS_OK);
	assert_int_equal(k, ATT_OK);
	reap(&f);

	f = spawn("serve", "0|return code: 7|", NULL, NULL, -1);
	assert_int_equal(att_load_agent(f.pid, fake_lib, NULL, 5000, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_REFUSED);
	assert_msg(err, "returned 7");
	reap(&f);

	f = spawn("serve", "-1|Dynamic agent loading is not enabled. Use -XX:+EnableDynamicAgentLoading "
		  "to launch target VM.|", NULL, NULL, -1);
	assert_int_equal(att_load_agent(f.pid, fake_lib, NULL, 5000, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_REFUSED);
	assert_msg(err, "-XX:+EnableDynamicAgentLoading");
	assert_msg(err, "-agentpath:");
	reap(&f);

	f = spawn("serve", "-1|/x/lib.so was not loaded.|/x/lib.so: cannot open shared object file|",
		  NULL, NULL, -1);
	assert_int_equal(att_load_agent(f.pid, fake_lib, NULL, 5000, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_REFUSED);
	assert_msg(err, "cannot open shared object file");
	assert_msg(err, "-agentpath:");
	reap(&f);

	f = spawn("serve", "0|what?|", NULL, NULL, -1);
	assert_int_equal(att_load_agent(f.pid, fake_lib, NULL, 5000, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_IO);
	reap(&f);
}

static void test_fake_jvm_no_sigquit_handler(void **state)
{
	(void)state;
	struct fake f = spawn("nocatch", "echo", NULL, NULL, -1);
	enum att_kind k = ATT_OK;
	struct hs_error err;
	char *out = (char *)1;
	assert_int_equal(att_jcmd(f.pid, "VM.version", 2000, &out, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_DISABLED);
	assert_null(out);
	assert_msg(err, "SIGQUIT");
	usleep(50000);
	assert_true(alive(f.pid));	/* SIGQUIT's default action would have ended it */
	assert_no_trigger(f.pid);
	reap(&f);
}

static void test_fake_jvm_disabled(void **state)
{
	(void)state;
	enum att_kind k = ATT_OK;
	struct hs_error err;
	char rep[64];
	const char *const flags[] = { "-Xmx64m", "-XX:+DisableAttachMechanism", NULL };
	struct fake f = spawn("serve", "echo", flags, NULL, -1);
	assert_int_equal(att_jcmd(f.pid, "VM.version", 2000, NULL, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_DISABLED);
	assert_msg(err, "-XX:+DisableAttachMechanism");
	assert_msg(err, "command line");
	reports(&f, rep, sizeof rep);
	assert_string_equal(rep, "");	/* not signalled */
	assert_no_trigger(f.pid);
	reap(&f);

	f = spawn("serve", "echo", NULL, "JAVA_TOOL_OPTIONS=-Xss1m  -XX:+DisableAttachMechanism", -1);
	assert_int_equal(att_jcmd(f.pid, "VM.version", 2000, NULL, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_DISABLED);
	assert_msg(err, "JAVA_TOOL_OPTIONS");
	reap(&f);

	/* the command line overrides JAVA_TOOL_OPTIONS */
	const char *const enable[] = { "-XX:-DisableAttachMechanism", NULL };
	f = spawn("serve", "echo", enable, "JAVA_TOOL_OPTIONS=-XX:+DisableAttachMechanism", -1);
	assert_int_equal(att_jcmd(f.pid, "VM.version", 5000, NULL, &k, &err), HS_OK);
	reap(&f);

	/* and _JAVA_OPTIONS overrides the command line */
	f = spawn("serve", "echo", enable, "_JAVA_OPTIONS=-XX:+DisableAttachMechanism", -1);
	assert_int_equal(att_jcmd(f.pid, "VM.version", 5000, NULL, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_DISABLED);
	assert_msg(err, "_JAVA_OPTIONS");
	reap(&f);
}

static void test_fake_jvm_timeout(void **state)
{
	(void)state;
	struct fake f = spawn("silent", "echo", NULL, NULL, -1);
	enum att_kind k = ATT_OK;
	struct hs_error err;
	char rep[64];
	int64_t t0 = now_ms();
	assert_int_equal(att_jcmd(f.pid, "VM.version", 300, NULL, &k, &err), HS_ERR);
	int64_t took = now_ms() - t0;
	assert_int_equal(k, ATT_TIMEOUT);
	assert_true(took >= 290 && took < 3000);
	assert_msg(err, "did not start its attach listener");
	reports(&f, rep, sizeof rep);
	assert_string_equal(rep, "Q1");
	assert_no_trigger(f.pid);
	assert_true(alive(f.pid));

	/* a stopped JVM cannot answer, and the message says so */
	kill(f.pid, SIGSTOP);
	usleep(20000);
	assert_int_equal(att_jcmd(f.pid, "VM.version", 300, NULL, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_TIMEOUT);
	assert_msg(err, "stopped");
	assert_no_trigger(f.pid);
	kill(f.pid, SIGCONT);
	reap(&f);
}

static void test_fake_jvm_exits(void **state)
{
	(void)state;
	struct fake f = spawn("exit", "echo", NULL, NULL, -1);
	enum att_kind k = ATT_OK;
	struct hs_error err;
	char *out = (char *)1;
	assert_int_equal(att_jcmd(f.pid, "GC.heap_dump /tmp/never.hprof", 5000, &out, &k, &err), HS_ERR);
	assert_int_equal(k, ATT_EXITED);
	assert_null(out);
	assert_msg(err, "exited");
	reap(&f);
}

/* as root, attach to another user's JVM as that user, and come back */
static void test_fake_jvm_other_user_as_root(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	struct fake f = spawn("serve", "echo", NULL, NULL, NOBODY_UID);
	char *out = NULL, rep[64], want[128];
	enum att_kind k = ATT_IO;
	struct hs_error err;
	/* a root-owned socket an earlier process with this pid left behind */
	char stale[64];
	snprintf(stale, sizeof stale, "/tmp/.java_pid%d", (int)f.pid);
	stale_socket(stale);
	if (att_jcmd(f.pid, "VM.version", 5000, &out, &k, &err) != HS_OK)
		fail_msg("attach as root to a JVM of uid %u failed (%s): %s", NOBODY_UID,
			 att_kind_name(k), err.msg);
	snprintf(want, sizeof want, "peer=%u/%u\n", NOBODY_UID, NOBODY_UID);
	assert_non_null(strstr(out, want));
	free(out);
	reports(&f, rep, sizeof rep);
	assert_string_equal(rep, "Q1");		/* the trigger file was the JVM user's */
	assert_int_equal(geteuid(), 0);
	assert_int_equal(getegid(), 0);
	assert_no_trigger(f.pid);
	reap(&f);
}

/*
 * jcmd_as_nobody: att_jcmd VM.version on pid from a child running as
 * nobody; its outcome in buf as "STATUS KIND MESSAGE".
 */
static void jcmd_as_nobody(pid_t pid, char *buf, size_t cap)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		enum att_kind k = ATT_OK;
		struct hs_error err;
		if (setgid(NOBODY_UID) != 0 || setuid(NOBODY_UID) != 0)
			_exit(1);
		int st = att_jcmd(pid, "VM.version", 2000, NULL, &k, &err);
		char msg[900];
		snprintf(msg, sizeof msg, "%d %s %s", st, att_kind_name(k), err.msg);
		ssize_t w = write(p[1], msg, strlen(msg));
		_exit(w > 0 ? 0 : 1);
	}
	close(p[1]);
	ssize_t n = read(p[0], buf, cap - 1);
	buf[n > 0 ? n : 0] = 0;
	close(p[0]);
	waitpid(c, NULL, 0);
}

/* not root: a stale socket of another user at our JVM's path is named, not removed */
static void test_stale_socket_not_root(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	struct fake f = spawn("serve", "echo", NULL, NULL, NOBODY_UID);
	char stale[64];
	snprintf(stale, sizeof stale, "/tmp/.java_pid%d", (int)f.pid);
	stale_socket(stale);
	char buf[900];
	jcmd_as_nobody(f.pid, buf, sizeof buf);
	if (!strstr(buf, "-1 io ") || !strstr(buf, "belongs to uid 0, not to the JVM's user") ||
	    !strstr(buf, "remove it (as root)"))
		fail_msg("unexpected outcome: %s", buf);
	assert_true(exists(stale));	/* not ours to remove */
	unlink(stale);
	reap(&f);
}

/* not root: another user's JVM is refused before anything is sent */
static void test_other_user_not_root(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	struct fake f = spawn("serve", "echo", NULL, NULL, -1);	/* ours: root's */
	char buf[900];
	jcmd_as_nobody(f.pid, buf, sizeof buf);
	assert_non_null(strstr(buf, "-1 other-user "));
	assert_non_null(strstr(buf, "run heapsh as that user"));
	char rep[64];
	reports(&f, rep, sizeof rep);
	assert_string_equal(rep, "");
	reap(&f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(fake_dir, sizeof fake_dir, "/tmp/test_attach.XXXXXX");
	if (!mkdtemp(fake_dir))
		return -1;
	chmod(fake_dir, 0777);	/* a fake running as nobody makes its trigger here */
	snprintf(fake_lib, sizeof fake_lib, "%s/libjvm.so", fake_dir);
	FILE *f = fopen(fake_lib, "w");
	if (!f)
		return -1;
	for (int i = 0; i < 4096; i++)
		fputc(0, f);
	fclose(f);
	chmod(fake_lib, 0644);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(fake_lib);
	rmdir(fake_dir);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--fake-jvm") == 0)
		return fake_main(argc, argv);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kind_names),
		cmocka_unit_test(test_frame_exact_bytes),
		cmocka_unit_test(test_frame_limits),
		cmocka_unit_test(test_parse_reply),
		cmocka_unit_test(test_load_return_code),
		cmocka_unit_test(test_exchange_reply),
		cmocka_unit_test(test_exchange_large_reply),
		cmocka_unit_test(test_exchange_timeout),
		cmocka_unit_test(test_exchange_hangup),
		cmocka_unit_test(test_not_jvm_self),
		cmocka_unit_test(test_no_process),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_nspid_and_tmp_dir),
		cmocka_unit_test(test_fake_jvm_attach),
		cmocka_unit_test(test_fake_jvm_refuses),
		cmocka_unit_test(test_fake_jvm_load),
		cmocka_unit_test(test_fake_jvm_no_sigquit_handler),
		cmocka_unit_test(test_fake_jvm_disabled),
		cmocka_unit_test(test_fake_jvm_timeout),
		cmocka_unit_test(test_fake_jvm_exits),
		cmocka_unit_test(test_fake_jvm_other_user_as_root),
		cmocka_unit_test(test_stale_socket_not_root),
		cmocka_unit_test(test_other_user_not_root),
		cmocka_unit_test(test_jvm_dir),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
