/*
 * agent.c - libheapsh_agent.so, heapsh's JVMTI agent (docs/agent.md,
 * docs/protocol.md): the server and the protocol.
 *
 * Loaded at start-up (-agentpath:/path/libheapsh_agent.so) or into a running
 * JVM (Agent_OnAttach), it starts one agent thread that listens on a
 * Unix-domain socket in /tmp/.heapsh-PID (mode 0700) and serves heapsh's
 * requests, one at a time, from as many as 16 connections: info, a class histogram
 * (IterateThroughHeap with class tags: the thesis's "simple dump", chapter 3),
 * a snapshot of the reachable graph (FollowReferences: the "extended dump"),
 * a filter evaluated inside the VM, and detach.
 *
 * This file owns the agent's JVMTI environment (ag_jvmti: start-up, detach,
 * VM death), the agent thread, its socket and the connections, frames and
 * reply buffers, the dispatch of requests, HELLO, INFO, the shells using the
 * agent (CLIENT, LEAVE) and DETACH. Each operation has its own file:
 * HISTOGRAM histogram.c, SNAPSHOT snapshot.c, INSTANCES instances.c, DUMP
 * dump.c, ANALYZE analyze.c (with heapif_agent.c, hva_settype.c, lq.c, lqheap.c), ALLOC_* alloc.c
 * (recorder.h); classes.c has what the heap operations share, req.c the
 * readers of request payloads.
 *
 * Rules it keeps: heap callbacks run while the VM is stopped, so they only
 * append to a temporary file or to memory, never touch the socket, JNI or
 * JVMTI; every socket operation has a timeout, so a client that stalls never
 * holds the JVM; every length and count a client sends is checked, and a bad
 * frame closes that connection only; tags are cleared after every request.
 * Capabilities: can_tag_objects only.
 */
#include <errno.h>
#include <fcntl.h>
#include <jvmti.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ag.h"

jvmtiEnv *ag_jvmti;
static volatile int ag_running;	/* the agent thread is serving */
static volatile int ag_stop;	/* detach or VM death asked it to stop */
char ag_sock_dir[64];
static char sock_path[96];

void ag_log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "heapsh agent: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

int64_t ag_now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- socket I/O with deadlines ---- */

/* ag_io_full: read or write all n bytes before the deadline; false on EOF, error or timeout. */
bool ag_io_full(int fd, void *p, size_t n, bool rd, int64_t deadline)
{
	uint8_t *b = p;
	while (n) {
		int64_t left = deadline - ag_now_ms();
		if (left <= 0 || ag_stop)
			return false;
		struct pollfd pf = {fd, rd ? POLLIN : POLLOUT, 0};
		int r = poll(&pf, 1, left > 500 ? 500 : (int)left);
		if (r < 0 && errno != EINTR)
			return false;
		if (r <= 0)
			continue;
		ssize_t k = rd ? recv(fd, b, n, 0) : send(fd, b, n, MSG_NOSIGNAL);
		if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN))
			return false;
		if (k > 0) {
			b += k;
			n -= (size_t)k;
		}
	}
	return true;
}

/* ---- frames ---- */

bool ag_send_raw(int fd, uint8_t t, const uint8_t *p, size_t n)
{
	uint8_t h[5];
	wire_store32(h, (uint32_t)(n + 1));
	h[4] = t;
	int64_t dl = ag_now_ms() + WRITE_MS;
	return ag_io_full(fd, h, 5, false, dl) && ag_io_full(fd, (void *)p, n, false, dl);
}

bool ag_send_frame(int fd, uint8_t t, struct wire_w *b)
{
	if (b->err) {
		int err = b->err;
		wire_w_reset(b);
		return ag_send_error(fd, "%s in the agent while building a reply",
				     wire_strerror(err));
	}
	bool ok = ag_send_raw(fd, t, b->p, b->len);
	wire_w_reset(b);
	return ok;
}

bool ag_cancel_waiting(int fd)
{
	uint8_t h[5];
	ssize_t n = recv(fd, h, sizeof h, MSG_PEEK | MSG_DONTWAIT);
	if (n == 0)
		return true;	/* the shell went away */
	if (n < (ssize_t)sizeof h)
		return false;
	if (h[4] != T_CANCEL || wire_load32(h) != 1)
		return false;
	(void)!recv(fd, h, sizeof h, MSG_DONTWAIT);
	return true;
}

/* ag_send_error: an ERROR frame (u32 length, the message), built on the stack: no memory needed. */
bool ag_send_error(int fd, const char *fmt, ...)
{
	uint8_t msg[4 + 512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf((char *)msg + 4, sizeof msg - 4, fmt, ap);
	va_end(ap);
	size_t len = n < 0 ? 0 : (size_t)n < sizeof msg - 4 ? (size_t)n : sizeof msg - 5;
	wire_store32(msg, (uint32_t)len);
	return ag_send_raw(fd, T_ERROR, msg, 4 + len);
}

/* ---- JNI and JVMTI helpers (agent thread only) ---- */

static char *system_property(JNIEnv *env, const char *key)
{
	char *val = NULL;
	if ((*ag_jvmti)->GetSystemProperty(ag_jvmti, key, &val) == JVMTI_ERROR_NONE && val) {
		char *s = strdup(val);
		ag_dealloc(val);
		return s;
	}
	(void)env;
	return strdup("?");
}

static int64_t runtime_long(JNIEnv *env, const char *method)
{
	jclass rt = (*env)->FindClass(env, "java/lang/Runtime");
	if (!rt)
		goto fail;
	jmethodID get = (*env)->GetStaticMethodID(env, rt, "getRuntime", "()Ljava/lang/Runtime;");
	jmethodID m = (*env)->GetMethodID(env, rt, method, "()J");
	if (!get || !m)
		goto fail;
	jobject r = (*env)->CallStaticObjectMethod(env, rt, get);
	if (!r || (*env)->ExceptionCheck(env))
		goto fail;
	jlong v = (*env)->CallLongMethod(env, r, m);
	if ((*env)->ExceptionCheck(env))
		goto fail;
	return v;
fail:
	(*env)->ExceptionClear(env);
	return -1;
}

static bool do_info(int fd, JNIEnv *env)
{
	struct wire_w b = {0};
	char *name = system_property(env, "java.vm.name");
	char *ver = system_property(env, "java.vm.version");
	char *vendor = system_property(env, "java.vm.vendor");
	int64_t total = runtime_long(env, "totalMemory"), freem = runtime_long(env, "freeMemory");
	int64_t max = runtime_long(env, "maxMemory");
	jint nclasses = 0;
	jclass *classes = NULL;
	if ((*ag_jvmti)->GetLoadedClasses(ag_jvmti, &nclasses, &classes) == JVMTI_ERROR_NONE) {
		for (jint i = 0; i < nclasses; i++)
			(*env)->DeleteLocalRef(env, classes[i]);
		ag_dealloc(classes);
	}
	wire_put_str(&b, name);
	wire_put_str(&b, ver);
	wire_put_str(&b, vendor);
	wire_put64(&b, (uint64_t)getpid());
	wire_put64(&b, total >= 0 && freem >= 0 ? (uint64_t)(total - freem) : 0);
	wire_put64(&b, total >= 0 ? (uint64_t)total : 0);
	wire_put64(&b, max >= 0 ? (uint64_t)max : 0);
	wire_put32(&b, (uint32_t)nclasses);
	wire_put_str(&b, AG_VERSION);
	free(name);
	free(ver);
	free(vendor);
	bool ok = ag_send_frame(fd, T_INFO, &b);
	wire_w_free(&b);
	return ok;
}

/* ---- the server ---- */

/*
 * idle_ms: how long a connection may wait for its next request before the
 * agent closes it: IDLE_MS, or the JVM's HEAPSH_AGENT_IDLE_MS (100 ms to an
 * hour; for tests of what a client does then).
 */
static int64_t idle_ms(void)
{
	static int64_t ms = -1;
	if (ms < 0) {
		const char *v = getenv("HEAPSH_AGENT_IDLE_MS");
		long n = v ? strtol(v, NULL, 10) : 0;
		ms = n >= 100 && n <= 3600000 ? n : IDLE_MS;
	}
	return ms;
}

/* read_frame: the next request; false (close) on EOF, timeout or a bad length. */
static bool read_frame(int fd, uint8_t *type, uint8_t **payload, uint32_t *len)
{
	uint8_t h[5];
	/* Wait for the first byte with the idle timeout, the rest with the frame timeout. */
	if (!ag_io_full(fd, h, 1, true, ag_now_ms() + idle_ms()) ||
	    !ag_io_full(fd, h + 1, 4, true, ag_now_ms() + FRAME_MS))
		return false;
	uint32_t n = wire_load32(h);
	if (n < 1 || n > MAX_REQUEST)
		return false;
	*type = h[4];
	*len = n - 1;
	*payload = malloc(*len + 1);
	if (!*payload)
		return false;
	if (!ag_io_full(fd, *payload, *len, true, ag_now_ms() + FRAME_MS)) {
		free(*payload);
		return false;
	}
	return true;
}

/*
 * The shells using this agent (T_CLIENT, T_LEAVE): the agent serves one
 * connection at a time, but several shells may use it in turn; a shell that
 * leaves detaches the agent only when no other one (still alive) uses it, no
 * allocation recording lives in it, and it was not loaded at JVM start-up.
 */
#define MAX_CLIENTS 64
#define MAX_CONNS 16	/* connections served in turn */
static pid_t clients[MAX_CLIENTS];
static int nclients;
static bool loaded_at_start;

static void prune_clients(pid_t leaving)
{
	int m = 0;
	for (int k = 0; k < nclients; k++)
		if (clients[k] != leaving && (kill(clients[k], 0) == 0 || errno == EPERM))
			clients[m++] = clients[k];
	nclients = m;
}

/* do_client: a shell says who it is (u32 pid). */
static bool do_client(int fd, struct wire_r *r)
{
	pid_t pid = (pid_t)wire_get32(r);
	if (!wire_done(r) || pid <= 0)
		return false;
	prune_clients(pid);
	if (nclients < MAX_CLIENTS)
		clients[nclients++] = pid;
	struct wire_w b = {0};
	bool ok = ag_send_frame(fd, T_CLIENT, &b);
	wire_w_free(&b);
	return ok;
}

/*
 * do_leave: a shell leaves (u32 pid, u8 flags; bit 0: detach if nothing else
 * needs the agent). Reply: u8 outcome (0 detached, 1 kept: an allocation
 * recording, 2 kept: another shell uses it, 3 kept: loaded at start-up, 4
 * kept: not asked to detach), u32 the other shell's pid. *stop: detach now.
 */
static bool do_leave(int fd, struct wire_r *r, bool *stop)
{
	pid_t pid = (pid_t)wire_get32(r);
	uint8_t flags = wire_get8(r);
	if (!wire_done(r))
		return false;
	prune_clients(pid);
	uint8_t outcome = !(flags & 1) ? 4 : loaded_at_start ? 3 : ag_alloc_exists() ? 1
			  : nclients ? 2 : 0;
	struct wire_w b = {0};
	wire_put8(&b, outcome);
	wire_put32(&b, outcome == 2 ? (uint32_t)clients[0] : 0);
	bool ok = ag_send_frame(fd, T_LEAVE, &b);
	wire_w_free(&b);
	*stop = ok && outcome == 0;
	return ok;
}

/*
 * handle: one request of a connection (*hello: it said HELLO). Returns 1 to
 * go on, 0 to close the connection (a malformed or unexpected request), -1
 * when the agent detaches.
 */
static int handle(int fd, JNIEnv *env, bool *hello, uint8_t type, uint8_t *payload, uint32_t len)
{
	struct wire_r r = wire_reader(payload, len);
	bool ok = true;
	int go = 1;
	if (!*hello && type != T_HELLO) {
		ok = false;
	} else if (type == T_HELLO) {
		uint32_t magic = wire_get32(&r);
		uint16_t ver = wire_get16(&r);
		if (!wire_done(&r) || magic != AG_MAGIC) {
			ok = false;
		} else if (ver != AG_PROTO) {
			ag_send_error(fd, "protocol version %u is not supported; this agent "
				   "speaks version %d", ver, AG_PROTO);
			ok = false;
		} else {
			struct wire_w b = {0};
			wire_put32(&b, AG_MAGIC);
			wire_put16(&b, AG_PROTO);
			wire_put_str(&b, AG_VERSION);
			wire_put_str(&b, "can_tag_objects,alloc,dump,clients,analyze,leaks,leaks-histogram,analyze-no-gc");
			ok = ag_send_frame(fd, T_HELLO, &b);
			wire_w_free(&b);
			*hello = true;
		}
	} else if (type == T_INFO) {
		ok = !wire_left(&r) && do_info(fd, env);
	} else if (type == T_HISTOGRAM) {
		ok = ag_do_histogram(fd, env, &r);
	} else if (type == T_SNAPSHOT) {
		ok = ag_do_snapshot(fd, env, &r);
	} else if (type == T_INSTANCES) {
		ok = ag_do_instances(fd, env, &r);
	} else if (type >= T_ALLOC_START && type <= T_ALLOC_READ) {
		ok = ag_alloc_request(fd, env, type, &r);
	} else if (type == T_DUMP) {
		ok = ag_dump_request(fd, env, &r);
	} else if (type == T_ALLOC_LEAKS) {
		ok = ag_leaks_request(fd, env, &r);
	} else if (type == T_ANALYZE) {
		JavaVM *vm = NULL;
		ok = (*env)->GetJavaVM(env, &vm) == 0 && ag_analyze_request(fd, env, vm, &r);
	} else if (type == T_CANCEL) {
		ok = !wire_left(&r);	/* nothing running: nothing to cancel */
	} else if (type == T_CLIENT) {
		ok = do_client(fd, &r);
	} else if (type == T_LEAVE) {
		bool stop = false;
		ok = do_leave(fd, &r, &stop);
		if (stop)
			go = -1;
	} else if (type == T_DETACH) {
		struct wire_w b = {0};
		ok = !wire_left(&r);
		if (ok) {
			ag_send_frame(fd, T_DETACH, &b);
			go = -1;
		}
	} else {
		ok = false;
	}
	free(payload);
	if ((*env)->ExceptionCheck(env))
		(*env)->ExceptionClear(env);
	return go < 0 ? -1 : ok ? 1 : 0;
}

/* make_dir: the private socket directory, refusing anything we do not own alone. */
static bool make_dir(void)
{
	snprintf(ag_sock_dir, sizeof ag_sock_dir, "/tmp/.heapsh-%d", (int)getpid());
	snprintf(sock_path, sizeof sock_path, "%s/agent.sock", ag_sock_dir);
	if (mkdir(ag_sock_dir, 0700) != 0 && errno != EEXIST) {
		ag_log("cannot create %s: %s", ag_sock_dir, strerror(errno));
		return false;
	}
	struct stat st;
	if (lstat(ag_sock_dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		ag_log("%s is not a private directory of this user; remove it and attach again",
		       ag_sock_dir);
		return false;
	}
	unlink(sock_path);
	return true;
}

static void JNICALL server_main(jvmtiEnv *env_ti, JNIEnv *env, void *arg)
{
	(void)env_ti;
	(void)arg;
	ag_in_agent_thread = 1;
	int lfd = -1;
	if (!make_dir())
		goto out;
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof a.sun_path, "%s", sock_path);
	mode_t old = umask(077);
	bool bound = lfd >= 0 && bind(lfd, (struct sockaddr *)&a, sizeof a) == 0;
	umask(old);
	if (!bound || listen(lfd, 4) != 0) {
		ag_log("cannot listen on %s: %s", sock_path, strerror(errno));
		goto out;
	}
	/*
	 * Several shells may be connected at once; their requests are served
	 * one at a time, in turn. A connection idle for IDLE_MS is closed (the
	 * shell connects again when it next asks).
	 */
	struct conn {
		int fd;
		bool hello;
		int64_t last;	/* ag_now_ms of its last request */
	} cs[MAX_CONNS];
	int ncs = 0;
	while (!ag_stop) {
		struct pollfd pf[MAX_CONNS + 1];
		pf[0] = (struct pollfd){lfd, POLLIN, 0};
		for (int k = 0; k < ncs; k++)
			pf[k + 1] = (struct pollfd){cs[k].fd, POLLIN, 0};
		if (poll(pf, (nfds_t)ncs + 1, 500) < 0)
			continue;
		int64_t now = ag_now_ms();
		for (int k = 0; k < ncs && !ag_stop; k++) {
			bool close_it = now - cs[k].last > idle_ms();
			if (!close_it && (pf[k + 1].revents & (POLLIN | POLLHUP | POLLERR))) {
				uint8_t type, *payload;
				uint32_t len;
				int go = read_frame(cs[k].fd, &type, &payload, &len)
						 ? handle(cs[k].fd, env, &cs[k].hello, type, payload, len) : 0;
				cs[k].last = ag_now_ms();
				if (go < 0)
					ag_stop = 1;
				close_it = go <= 0;
			}
			if (close_it) {
				close(cs[k].fd);
				cs[k] = cs[--ncs];
				pf[k + 1] = pf[ncs + 1];
				k--;
			}
		}
		if (ag_stop || !(pf[0].revents & POLLIN))
			continue;
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		struct ucred cr;
		socklen_t cl = sizeof cr;
		if (ncs < MAX_CONNS && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) == 0 &&
		    (cr.uid == geteuid() || cr.uid == 0))
			cs[ncs++] = (struct conn){fd, false, ag_now_ms()};
		else
			close(fd);
	}
	for (int k = 0; k < ncs; k++)
		close(cs[k].fd);
out:
	if (lfd >= 0)
		close(lfd);
	unlink(sock_path);
	rmdir(ag_sock_dir);
	if (ag_stop == 1) {	/* detached: give the environment back */
		jvmtiEnv *e = ag_jvmti;
		ag_jvmti = NULL;
		(*e)->DisposeEnvironment(e);
	}
	ag_running = 0;	/* last: Agent_OnAttach waits for it */
}

static int start_thread(JNIEnv *env)
{
	jclass tc = (*env)->FindClass(env, "java/lang/Thread");
	jmethodID init = tc ? (*env)->GetMethodID(env, tc, "<init>", "(Ljava/lang/String;)V") : NULL;
	ag_in_agent_thread = 1;	/* the agent's thread object is not the program's allocation */
	jstring name = init ? (*env)->NewStringUTF(env, "heapsh-agent") : NULL;
	jobject th = name ? (*env)->NewObject(env, tc, init, name) : NULL;
	ag_in_agent_thread = 0;
	if (!th) {
		(*env)->ExceptionClear(env);
		ag_log("cannot create the agent thread");
		return -1;
	}
	ag_stop = 0;
	ag_running = 1;
	if ((*ag_jvmti)->RunAgentThread(ag_jvmti, th, server_main, NULL, JVMTI_THREAD_NORM_PRIORITY) !=
	    JVMTI_ERROR_NONE) {
		ag_running = 0;
		ag_log("RunAgentThread failed");
		return -1;
	}
	return 0;
}

static void JNICALL on_vm_init(jvmtiEnv *e, JNIEnv *env, jthread thread)
{
	(void)e;
	(void)thread;
	ag_alloc_vm_init(env);
	start_thread(env);
}

static void JNICALL on_vm_death(jvmtiEnv *e, JNIEnv *env)
{
	(void)e;
	ag_stop = 2;
	ag_alloc_vm_death(env);
	unlink(sock_path);
	rmdir(ag_sock_dir);
}

/* setup: a JVMTI environment with can_tag_objects and the VM events. */
static int setup(JavaVM *vm, bool at_start)
{
	loaded_at_start = at_start;
	if ((*vm)->GetEnv(vm, (void **)&ag_jvmti, JVMTI_VERSION_1_2) != JNI_OK || !ag_jvmti) {
		ag_log("this JVM offers no JVMTI 1.2 environment");
		return -1;
	}
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof caps);
	caps.can_tag_objects = 1;
	if ((*ag_jvmti)->AddCapabilities(ag_jvmti, &caps) != JVMTI_ERROR_NONE) {
		ag_log("the JVM refused the can_tag_objects capability");
		return -1;
	}
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	(*ag_jvmti)->SetEventCallbacks(ag_jvmti, &cb, sizeof cb);
	if (at_start)
		(*ag_jvmti)->SetEventNotificationMode(ag_jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
	(*ag_jvmti)->SetEventNotificationMode(ag_jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
	return 0;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	if (setup(vm, true))
		return JNI_ERR;
	ag_alloc_init(vm);
	/* A bad alloc= option is logged; the JVM starts all the same, without a recording. */
	ag_alloc_options(options);
	return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	(void)options;
	(void)reserved;
	/* Attached again right after a detach: let the old thread finish first. */
	for (int k = 0; k < 500 && ag_running && ag_stop == 1; k++)
		usleep(10000);
	if (ag_running)
		return JNI_OK;	/* already serving: heapsh just connects */
	if (!ag_jvmti && setup(vm, false))
		return JNI_ERR;
	ag_alloc_init(vm);
	JNIEnv *env;
	if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK)
		return JNI_ERR;
	return start_thread(env) ? JNI_ERR : JNI_OK;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	(void)vm;
	ag_stop = 2;
}
