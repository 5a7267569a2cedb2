/*
 * serve.c - heapsh --serve (docs/fleet.md): its options, its signals, the
 * HTTP endpoint (libmicrohttpd: GET /metrics and a small page at /, nothing
 * else) and the metrics text, OpenMetrics 1.0 (prometheus.io/docs/specs/om/
 * open_metrics_spec: "# TYPE", "# UNIT", "# HELP" per family, a counter's
 * sample named with _total, "# EOF" last) or, for a scraper whose Accept
 * asks only for it, the Prometheus text format 0.0.4. The handler reads
 * what the JVMs' workers published (jvms.c) and never calls into a JVM.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "../base/fmt.h"
#include "../heapsh.h"
#include "heapsh_serve.h"
#include "serve.h"

#define DEFAULT_PORT_TEXT "9400"
#define DEFAULT_EVERY_MS 60000
#define DEFAULT_LIMIT_MS 30000
#define DEFAULT_TOP 20

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void srv_log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&log_lock);
	fputs("heapsh: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	fflush(stderr);
	pthread_mutex_unlock(&log_lock);
	va_end(ap);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: heapsh --serve [ADDR:]PORT [--watch FILE] [--every DURATION] [--top N]\n"
		"                      [--time-limit DURATION] (--all | PID...)\n"
		"\n"
		"Serve metrics of running JVMs at http://ADDR:PORT/metrics (OpenMetrics text;\n"
		"Prometheus text 0.0.4 to a scraper that asks only for it), one exporter per\n"
		"host (docs/fleet.md). Per JVM (labels pid, jvm, host): heap used and\n"
		"committed, the top classes by instances and bytes, a running allocation\n"
		"recording's accounts (none is started), the watch queries' values, and\n"
		"heapsh's own health (up, errors by reason, the pauses it caused). Every\n"
		"analysis runs inside the JVM by heapsh's agent; no heap dump is ever taken.\n"
		"\n"
		"  [ADDR:]PORT         where to listen; ADDR is 127.0.0.1 when omitted\n"
		"                      ([::1]:PORT for IPv6, 0.0.0.0:PORT or :PORT for all)\n"
		"  --watch FILE        lines 'NAME: QUERY' ('#' comments), each query run inside\n"
		"                      every JVM each round: a number is heapsh_query{query=NAME},\n"
		"                      group_by's groups one series per key (label key)\n"
		"  --every DURATION    a round of analyses per JVM, and a rescan with --all,\n"
		"                      this often: 500ms, 10s, 2m, 1h (default 60s)\n"
		"  --top N             classes (by instances and by bytes) and allocation rows\n"
		"                      per JVM (default 20)\n"
		"  --time-limit DURATION  one analysis inside a JVM at most this long; a\n"
		"                      watchdog stops a call that hangs (default 30s)\n"
		"  --all               follow every JVM of this user, new ones as they come\n"
		"  PID...              follow these JVMs only\n"
		"\n"
		"Only GET /metrics and / are served; no query comes from HTTP. heapsh attaches\n"
		"only to JVMs of its own user (the same uid), even when it runs as root.\n"
		"SIGTERM or SIGINT: stop serving, detach from every JVM (the agent removes its\n"
		"socket), exit 0.\n");
}

/* ---- the metrics text ---- */

/* A family: its name (a counter's without _total), type, unit (NULL: none) and help. */
static const struct family {
	const char *name, *type, *unit, *help;
} families[SRV_NFAMILIES] = {
	[SRV_F_JVMS] = {"heapsh_jvms", "gauge", NULL,
		"JVMs the exporter follows now (an exited one until its series go)"},
	[SRV_F_UP] = {"heapsh_up", "gauge", NULL,
		"1 when heapsh's last round of analyses reached the JVM; 0 when it could not "
		"(attach, exited, time limit): the JVM's other series then keep their last values"},
	[SRV_F_LAST_SUCCESS] = {"heapsh_last_success_timestamp_seconds", "gauge", "seconds",
		"When the last round that reached the JVM ended (Unix time): time() minus it is "
		"the age of the values"},
	[SRV_F_SCRAPE] = {"heapsh_scrape_seconds", "gauge", "seconds",
		"Wall time of heapsh's last round of analyses of the JVM (heap, class histogram, "
		"allocation recording, watch queries)"},
	[SRV_F_ERRORS] = {"heapsh_errors", "counter", NULL,
		"Failures in the JVM by reason: attach, exited, timeout, heap, histogram, alloc, "
		"query_syntax (once per bad watch line), query_failed, query_unsupported (only a "
		"heap dump could answer), query_not_number"},
	[SRV_F_PAUSE] = {"heapsh_jvm_pause_seconds", "counter", "seconds",
		"Pauses heapsh caused in the JVM: the pause the agent reports for each watch query, "
		"plus the wall time of each class histogram and allocation read (a full GC and a "
		"heap inspection at a safepoint: an upper bound of their pause)"},
	[SRV_F_HEAP_USED] = {"heapsh_heap_used_bytes", "gauge", "bytes",
		"Java heap used, as the agent reads it"},
	[SRV_F_HEAP_COMMITTED] = {"heapsh_heap_committed_bytes", "gauge", "bytes",
		"Java heap committed, as the agent reads it"},
	[SRV_F_HEAP_MAX] = {"heapsh_heap_max_bytes", "gauge", "bytes",
		"Java heap maximum (-Xmx), as the agent reads it"},
	[SRV_F_CLASS_INSTANCES] = {"heapsh_class_instances", "gauge", NULL,
		"Live instances of the class after a full GC (the top classes by instances and "
		"by bytes; --top)"},
	[SRV_F_CLASS_BYTES] = {"heapsh_class_bytes", "gauge", "bytes",
		"Shallow bytes of the class's live instances after a full GC (the same classes)"},
	[SRV_F_ALLOC_OBJECTS] = {"heapsh_alloc_objects", "counter", NULL,
		"Objects allocated since the running allocation recording started, per account "
		"and class (estimates when it samples; top rows by bytes)"},
	[SRV_F_ALLOC_BYTES] = {"heapsh_alloc_bytes", "counter", "bytes",
		"Bytes allocated since the running allocation recording started, per account "
		"and class"},
	[SRV_F_ALLOC_LIVE_OBJECTS] = {"heapsh_alloc_live_objects", "gauge", NULL,
		"Objects of the recording still alive at the read (after a full GC)"},
	[SRV_F_ALLOC_LIVE_BYTES] = {"heapsh_alloc_live_bytes", "gauge", "bytes",
		"Bytes of the recording's objects still alive at the read"},
	[SRV_F_QUERY] = {"heapsh_query", "gauge", NULL,
		"A watch query's value, run inside the JVM (label key: one group of a group_by)"},
};

/* value: v as OpenMetrics writes numbers: integers without a point, NaN, +Inf, -Inf, else the shortest exact text. */
static void value(struct fmt_text *b, double v)
{
	if (isnan(v))
		fmt_appendf(b, "NaN");
	else if (isinf(v))
		fmt_appendf(b, v > 0 ? "+Inf" : "-Inf");
	else if (v == floor(v) && fabs(v) < 9007199254740992.0)
		fmt_appendf(b, "%.0f", v);
	else {
		char t[40];	/* the shortest text that reads back as v */
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(t, sizeof t, "%.*g", prec, v);
			if (strtod(t, NULL) == v)
				break;
		}
		fmt_appendf(b, "%s", t);
	}
}

/* sample: one line: name[_total]{jvm labels,more} value. */
static void sample(struct fmt_text *b, int f, const char *base, const char *more, double v)
{
	const struct family *fa = &families[f];
	bool counter = !strcmp(fa->type, "counter");
	fmt_appendf(b, "%s%s{%s%s%s} ", fa->name, counter ? "_total" : "", base, more && *more ? "," : "",
		more ? more : "");
	value(b, v);
	fmt_appendf(b, "\n");
}

/* base_labels: pid, jvm and host of j, escaped, into out. */
static void base_labels(const struct srv_jvm *j, const char *host_esc, char *out, size_t cap)
{
	char name[600];
	size_t k = 0;
	for (const char *p = j->name; *p && k + 3 < sizeof name; p++) {
		if (*p == '\\' || *p == '"')
			name[k++] = '\\';
		if (*p == '\n') {
			name[k++] = '\\';
			name[k++] = 'n';
			continue;
		}
		name[k++] = *p;
	}
	name[k] = 0;
	snprintf(out, cap, "pid=\"%d\",jvm=\"%s\",host=\"%s\"", j->pid, name, host_esc);
}

/* family_body: the samples of family f, for every JVM. */
static void family_body(struct fmt_text *b, int f, const char *host_esc)
{
	char base[2048];
	if (f == SRV_F_JVMS) {
		uint32_t n = 0;
		for (uint32_t k = 0; k < srv_njvms; k++)
			n += !srv_jvms[k]->exited;
		char h[700];	/* host="..." */
		snprintf(h, sizeof h, "host=\"%s\"", host_esc);
		fmt_appendf(b, "heapsh_jvms{%s} %u\n", h, n);
		return;
	}
	for (uint32_t k = 0; k < srv_njvms; k++) {
		const struct srv_jvm *j = srv_jvms[k];
		base_labels(j, host_esc, base, sizeof base);
		switch (f) {
		case SRV_F_UP:
			sample(b, f, base, NULL, j->up);
			continue;
		case SRV_F_LAST_SUCCESS:
			if (j->last_success > 0)
				sample(b, f, base, NULL, floor(j->last_success * 1000) / 1000);
			continue;
		case SRV_F_SCRAPE:
			if (j->last_success > 0)
				sample(b, f, base, NULL, j->scrape_s);
			continue;
		case SRV_F_ERRORS:
			for (int r = 0; r < SRV_NREASONS; r++) {
				char more[64];
				snprintf(more, sizeof more, "reason=\"%s\"", srv_reason_name((enum srv_reason)r));
				sample(b, f, base, more, (double)j->errors[r]);
			}
			continue;
		case SRV_F_PAUSE:
			sample(b, f, base, NULL, j->pause_s);
			continue;
		default:
			for (uint32_t i = 0; i < j->nsmp; i++)
				if (j->smp[i].family == f)
					sample(b, f, base, j->smp[i].labels, j->smp[i].v);
		}
	}
}

char *srv_render(const struct srv_config *c, bool openmetrics, size_t *len)
{
	struct fmt_text b = {NULL, 0, 0}, body = {NULL, 0, 0};
	char host[600];
	size_t k = 0;
	for (const char *p = c->host; *p && k + 3 < sizeof host; p++) {
		if (*p == '\\' || *p == '"')
			host[k++] = '\\';
		host[k++] = *p == '\n' ? ' ' : *p;
	}
	host[k] = 0;
	pthread_mutex_lock(&srv_lock);
	for (int f = 0; f < SRV_NFAMILIES; f++) {
		body.len = 0;
		family_body(&body, f, host);
		if (!body.len)
			continue;
		const struct family *fa = &families[f];
		bool counter = !strcmp(fa->type, "counter");
		if (openmetrics) {
			fmt_appendf(&b, "# TYPE %s %s\n", fa->name, fa->type);
			if (fa->unit)
				fmt_appendf(&b, "# UNIT %s %s\n", fa->name, fa->unit);
			fmt_appendf(&b, "# HELP %s %s\n", fa->name, fa->help);
		} else {
			fmt_appendf(&b, "# HELP %s%s %s\n", fa->name, counter ? "_total" : "", fa->help);
			fmt_appendf(&b, "# TYPE %s%s %s\n", fa->name, counter ? "_total" : "", fa->type);
		}
		fmt_appendf(&b, "%.*s", (int)body.len, body.s);
	}
	pthread_mutex_unlock(&srv_lock);
	if (openmetrics)
		fmt_appendf(&b, "# EOF\n");
	free(body.s);
	*len = b.len;
	return b.s;
}

/* ---- HTTP ---- */

/* wants_openmetrics: the scraper takes OpenMetrics, or does not ask only for text/plain. */
static bool wants_openmetrics(const char *accept)
{
	if (!accept || strstr(accept, "application/openmetrics-text"))
		return true;
	return !strstr(accept, "text/plain");
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *type,
			     char *body, size_t len, bool owned)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, owned ?
				 MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, "Allow", "GET, HEAD");
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	const struct srv_config *c = cls;
	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con_cls;
	static char not_allowed[] = "only GET and HEAD\n", not_found[] = "not found: try /metrics\n";
	static const char text[] = "text/plain; charset=utf-8";
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, text, not_allowed, strlen(not_allowed), false);
	if (!strcmp(url, "/metrics")) {
		const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept");
		bool om = wants_openmetrics(accept);
		size_t len;
		char *body = srv_render(c, om, &len);
		return reply(conn, MHD_HTTP_OK, om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
			     : "text/plain; version=0.0.4; charset=utf-8", body, len, true);
	}
	if (!strcmp(url, "/")) {
		char *page = xasprintf("<!DOCTYPE html>\n<html><head><title>heapsh exporter</title></head>"
				       "<body><h1>heapsh exporter</h1><p><a href=\"/metrics\">/metrics</a>: "
				       "the JVMs of this host's user, every %g s.</p></body></html>\n",
				       (double)c->every_ms / 1000.0);
		return reply(conn, MHD_HTTP_OK, "text/html; charset=utf-8", page, strlen(page), true);
	}
	return reply(conn, MHD_HTTP_NOT_FOUND, text, not_found, strlen(not_found), false);
}

/* listen_addr: [ADDR:]PORT into *ss; false with why. */
static bool listen_addr(const char *spec, struct sockaddr_storage *ss, socklen_t *sl, bool *v6,
			char *why, size_t cap)
{
	char host[256] = "127.0.0.1";
	const char *port = spec;
	const char *colon = strrchr(spec, ':');
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');
		if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof host) {
			snprintf(why, cap, "'%s' is not [ADDR]:PORT", spec);
			return false;
		}
		snprintf(host, sizeof host, "%.*s", (int)(close - spec - 1), spec + 1);
		port = close + 2;
	} else if (colon) {
		if ((size_t)(colon - spec) >= sizeof host) {
			snprintf(why, cap, "the address in '%s' is too long", spec);
			return false;
		}
		snprintf(host, sizeof host, "%.*s", (int)(colon - spec), spec);
		if (!host[0])
			snprintf(host, sizeof host, "0.0.0.0");
		port = colon + 1;
	}
	char *end;
	long p = strtol(port, &end, 10);
	if (!*port || *end || p < 1 || p > 65535) {
		snprintf(why, cap, "'%s' is not a port (1 to 65535)", port);
		return false;
	}
	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	int rc = getaddrinfo(host, port, &hints, &res);
	if (rc || !res) {
		snprintf(why, cap, "cannot use the address %s: %s", host, gai_strerror(rc));
		return false;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*sl = res->ai_addrlen;
	*v6 = res->ai_family == AF_INET6;
	freeaddrinfo(res);
	return true;
}

/* shown_addr: ss as the address to print, "127.0.0.1:9400" or "[::1]:9400" (numeric), into buf. */
static void shown_addr(const struct sockaddr_storage *ss, socklen_t sl, char *buf, size_t cap)
{
	char host[NI_MAXHOST], port[NI_MAXSERV];
	if (getnameinfo((const struct sockaddr *)ss, sl, host, sizeof host, port, sizeof port,
			NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		snprintf(buf, cap, "?");
	else
		snprintf(buf, cap, ss->ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

static bool is_number(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* options: argv after "--serve" into *c; 0, 1 (--help, done) or 2 (said why). */
static int options(int argc, char **argv, struct srv_config *c)
{
	c->every_ms = DEFAULT_EVERY_MS;
	c->limit_ms = DEFAULT_LIMIT_MS;
	c->top = DEFAULT_TOP;
	c->pids = xcalloc((size_t)argc + 1, sizeof *c->pids);
	for (int a = 1; a < argc; a++) {
		const char *o = argv[a];
		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			usage(stdout);
			return 1;
		} else if (!strcmp(o, "--watch") && a + 1 < argc) {
			c->watch_path = argv[++a];
		} else if ((!strcmp(o, "--every") || !strcmp(o, "--time-limit")) && a + 1 < argc) {
			uint64_t ms;
			if (!srv_parse_duration(argv[++a], &ms)) {
				fprintf(stderr, "heapsh: %s takes a duration such as 500ms, 10s, 2m or 1h "
					"(at most a day), not '%s'\n", o, argv[a]);
				return 2;
			}
			if (o[2] == 'e')
				c->every_ms = ms;
			else
				c->limit_ms = ms;
		} else if (!strcmp(o, "--top") && a + 1 < argc) {
			char *end;
			long n = strtol(argv[++a], &end, 10);
			if (*end || n < 1 || n > 10000) {
				fprintf(stderr, "heapsh: --top takes a number of classes, 1 to 10000, not "
					"'%s'\n", argv[a]);
				return 2;
			}
			c->top = (uint32_t)n;
		} else if (!strcmp(o, "--all")) {
			c->all = true;
		} else if (is_number(o) && a > 1) {
			long pid = strtol(o, NULL, 10);
			if (pid <= 0 || pid > 1 << 30) {
				fprintf(stderr, "heapsh: '%s' is not a pid\n", o);
				return 2;
			}
			c->pids[c->npids++] = (int)pid;
		} else if (a == 1 && o[0] != '-') {
			snprintf(c->listen, sizeof c->listen, "%s", o);
		} else {
			fprintf(stderr, "heapsh: --serve: unknown option '%s' (or its value is missing)\n", o);
			usage(stderr);
			return 2;
		}
	}
	if (!c->listen[0]) {
		fprintf(stderr, "heapsh: --serve needs [ADDR:]PORT first (e.g. --serve %s)\n",
			DEFAULT_PORT_TEXT);
		return 2;
	}
	if (c->all == (c->npids > 0)) {
		fprintf(stderr, "heapsh: --serve follows either --all or PIDs: give one of them\n");
		return 2;
	}
	return 0;
}

int srv_main(int argc, char **argv)
{
	struct srv_config c;
	memset(&c, 0, sizeof c);
	int st = options(argc, argv, &c);
	if (st) {
		free(c.pids);
		return st == 1 ? 0 : 2;
	}
	struct sockaddr_storage ss;
	socklen_t sl;
	bool v6 = false;
	char why[600];
	if (!listen_addr(c.listen, &ss, &sl, &v6, why, sizeof why)) {
		fprintf(stderr, "heapsh: --serve: %s\n", why);
		free(c.pids);
		return 2;
	}
	char shown[NI_MAXHOST + NI_MAXSERV + 4];	/* the address listened on, as printed */
	shown_addr(&ss, sl, shown, sizeof shown);
	if (gethostname(c.host, sizeof c.host - 1) != 0)
		snprintf(c.host, sizeof c.host, "localhost");
	if (c.watch_path && !srv_watch_load(&c, c.watch_path, why, sizeof why)) {
		fprintf(stderr, "heapsh: %s\n", why);
		free(c.pids);
		return 2;
	}
	/* Signals: SIGTERM and SIGINT wait for sigtimedwait here, in every thread made from now on. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	struct MHD_Daemon *d = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | (v6 ? MHD_USE_IPv6 : 0), 0, NULL, NULL, handle, &c,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
		MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "heapsh: --serve: cannot listen on %s: %s\n", shown,
			errno ? strerror(errno) : "libmicrohttpd refused");
		srv_watch_free(&c);
		free(c.pids);
		return 2;
	}
	srv_log("serving http://%s/metrics; %s every %g s (time limit %g s, top %u, %d watch "
		"queries)", shown, c.all ? "all JVMs of this user" : "the JVMs given",
		(double)c.every_ms / 1000.0, (double)c.limit_ms / 1000.0, c.top, c.nwatch);
	srv_jvms_start(&c);
	for (;;) {
		struct timespec ts = {1, 0};
		siginfo_t si;
		int sig = sigtimedwait(&set, &si, &ts);
		if (sig == SIGTERM || sig == SIGINT) {
			srv_log("%s from pid %d: stopping", sig == SIGTERM ? "SIGTERM" : "SIGINT",
				(int)si.si_pid);
			break;
		}
		srv_jvms_tick(&c);
	}
	MHD_stop_daemon(d);
	srv_jvms_stop(20000);
	srv_watch_free(&c);
	free(c.pids);
	srv_log("stopped");
	return 0;
}
