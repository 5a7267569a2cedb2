/*
 * jfr.c - a JFR recording's allocation events as an allocation recording
 * (alc_read_jfr). The recording is read by the JDK's own jdk.jfr.consumer
 * API in a small Java program heapsh carries (src/alloc/java/heapsh/jfr/
 * JfrAlloc.java, embedded at build time as the agent's classes are), run
 * with the JDK's java; this file starts it and reads its summary, a line
 * per method, frame, class and (frame, class) total.
 */
#include "alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../base/mem.h"

/* The reader's class files (embed.py --name=alc_jfr_classes). */
extern const unsigned char alc_jfr_classes[];
extern const unsigned long alc_jfr_classes_len;

#define MAX_LINE (1u << 20)	/* a line longer than this is not the reader's */
#define MAX_IDS 100000000u	/* methods, frames, classes or keys: more is not a recording's */

/* find_java: $JAVA_HOME/bin/java, else java on PATH; a new string, or NULL. */
static char *find_java(void)
{
	const char *home = getenv("JAVA_HOME");
	if (home && *home) {
		char *p = xasprintf("%s/bin/java", home);
		if (access(p, X_OK) == 0)
			return p;
		free(p);
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);
		char *p = xasprintf("%.*s/java", (int)n, path);
		if (n && access(p, X_OK) == 0)
			return p;
		free(p);
		path += n + (end ? 1 : 0);
	}
	return NULL;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* write_classes: the embedded class files under dir (heapsh/jfr/...); false on failure. */
static bool write_classes(const char *dir)
{
	const unsigned char *p = alc_jfr_classes, *end = p + alc_jfr_classes_len;
	while (end - p >= 8) {
		uint32_t nl = be32(p);
		if ((size_t)(end - p - 4) < (size_t)nl + 4)
			return false;
		const unsigned char *lp = p + 4 + nl;
		uint32_t bl = be32(lp);
		if ((size_t)(end - lp - 4) < bl)
			return false;
		char *file = xasprintf("%s/%.*s.class", dir, (int)nl, (const char *)(p + 4));
		for (char *s = file + strlen(dir) + 1; (s = strchr(s, '/')); s++) {
			*s = 0;
			mkdir(file, 0700);
			*s = '/';
		}
		FILE *f = fopen(file, "wb");
		bool ok = f && fwrite(lp + 4, 1, bl, f) == bl;
		if (f && fclose(f) != 0)
			ok = false;
		free(file);
		if (!ok)
			return false;
		p = lp + 4 + bl;
	}
	return true;
}

static int remove_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(p);
	return 0;
}

/* remove_tree: dir and everything under it (the class files written there). */
static void remove_tree(const char *dir)
{
	nftw(dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* unesc: the reader's escapes (\t \n \r \\) undone in place. */
static void unesc(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (*s == '\\' && s[1]) {
			s++;
			*o++ = *s == 't' ? '\t' : *s == 'n' ? '\n' : *s == 'r' ? '\r' : *s;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

/* fields: split line at tabs into at most cap fields; their number. */
static int fields(char *line, char **f, int cap)
{
	int n = 0;
	while (n < cap) {
		f[n++] = line;
		char *t = strchr(line, '\t');
		if (!t)
			break;
		*t = 0;
		line = t + 1;
	}
	return n;
}

static bool num(const char *s, long long lo, long long hi, long long *v)
{
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (errno || end == s || *end || x < lo || x > hi)
		return false;
	*v = x;
	return true;
}

/* grow: room for index i in *a of *cap elements of size sz. */
static void grow(void **a, uint32_t *cap, uint32_t i, size_t sz)
{
	if (i < *cap)
		return;
	uint32_t c = *cap ? *cap : 64;
	while (c <= i)
		c *= 2;
	*a = xreallocarray(*a, c, sz);
	memset((char *)*a + (size_t)*cap * sz, 0, (size_t)(c - *cap) * sz);
	*cap = c;
}

/*
 * leak: a P line's fields (after "P\t": node, class, skipped, root, then
 * type and field pairs, root first) as a path of r->leaks. HS_ERR when the
 * line is not as the reader writes it.
 */
static int leak(struct alc_rec *r, uint32_t *cap, char *line)
{
	size_t nf = 1;
	for (const char *p = line; (p = strchr(p, '\t')); p++)
		nf++;
	char **f = xmallocarray(nf, sizeof *f);
	int n = 0;
	for (char *p = line;;) {
		f[n++] = p;
		char *t = strchr(p, '\t');
		if (!t)
			break;
		*t = 0;
		p = t + 1;
	}
	long long node, cls, skipped;
	if (n < 6 || (n - 4) % 2 || r->nleaks >= MAX_IDS || !num(f[0], -1, (long long)r->nnodes - 1, &node) ||
	    !num(f[1], 0, (long long)r->nclasses - 1, &cls) || !num(f[2], 0, INT64_MAX, &skipped)) {
		free(f);
		return HS_ERR;
	}
	for (int k = 3; k < n; k++)
		unesc(f[k]);
	char *b = xasprintf("[%s]", f[3]), *text = NULL;
	for (int k = 4; k + 1 < n; k += 2)
		alc_path_step(&text, f[k], f[k + 1]);
	char *all = alc_path_end(b, text, r->classes[cls]);
	free(b);
	free(text);
	free(f);
	grow((void **)&r->leaks, cap, r->nleaks, sizeof *r->leaks);
	r->leaks[r->nleaks++] = (struct alc_leak){node < 0 ? ALC_NONE : (uint32_t)node, (uint32_t)cls,
						  (uint64_t)skipped, ALC_NONE, all};
	return HS_OK;
}

struct facts {
	long long events, sample_events, tlab_events, old, truncated, depth, start_ms, end_ms;
	long long first_threads, first_bytes, first_max;
	char source[128], first_thread[256];
};

/*
 * parse: the reader's output (f) into r; HS_OK, or HS_ERR with err naming
 * the line (the reader's own error, "E", is passed on as it is).
 */
static int parse(FILE *f, struct alc_rec *r, struct facts *fa, struct hs_error *err)
{
	uint32_t capm = 0, capn = 0, capc = 0, capk = 0, capl = 0;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	long lineno = 0;
	bool header = false;
	int st = HS_OK;
	while ((len = getline(&line, &lcap, f)) >= 0) {
		lineno++;
		if (hs_interrupted) {
			hs_error_set(err, -1, "interrupted");
			st = HS_INTERRUPTED;
			break;
		}
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = 0;
		if ((size_t)len > MAX_LINE || strlen(line) != (size_t)len)
			goto bad;
		if (header && line[0] == 'P' && line[1] == '\t') {
			if (leak(r, &capl, line + 2) != HS_OK)
				goto bad;
			continue;
		}
		char *fl[8];
		int n = fields(line, fl, 8);
		for (int k = 0; k < n; k++)
			unesc(fl[k]);
		long long a, b, c, d, e, g;
		if (!header) {
			if (n != 3 || strcmp(fl[0], "H") || strcmp(fl[1], "heapsh-jfr") || strcmp(fl[2], "1"))
				goto bad;
			header = true;
		} else if (!strcmp(fl[0], "E") && n == 2) {
			hs_error_set(err, -1, "%s", fl[1]);
			st = HS_ERR;
			break;
		} else if (!strcmp(fl[0], "M") && n == 5) {
			if (!num(fl[1], r->nmethods, r->nmethods, &a) || r->nmethods >= MAX_IDS)
				goto bad;
			grow((void **)&r->methods, &capm, r->nmethods, sizeof *r->methods);
			struct alc_method *m = &r->methods[r->nmethods++];
			m->cls = xstrdup(fl[2]);
			m->name = xstrdup(fl[3]);
			m->sig = xstrdup(fl[4]);
		} else if (!strcmp(fl[0], "N") && n == 5) {
			if (!num(fl[1], r->nnodes, r->nnodes, &a) || r->nnodes >= MAX_IDS ||
			    !num(fl[2], -1, (long long)r->nnodes - 1, &b) ||
			    !num(fl[3], 0, (long long)r->nmethods - 1, &c) || !num(fl[4], -1, INT32_MAX, &d))
				goto bad;
			grow((void **)&r->nodes, &capn, r->nnodes, sizeof *r->nodes);
			r->nodes[r->nnodes++] = (struct alc_node){b < 0 ? ALC_NONE : (uint32_t)b,
								  (uint32_t)c, (int32_t)d};
		} else if (!strcmp(fl[0], "C") && n == 3) {
			if (!num(fl[1], r->nclasses, r->nclasses, &a) || r->nclasses >= MAX_IDS)
				goto bad;
			grow((void **)&r->classes, &capc, r->nclasses, sizeof *r->classes);
			/* JFR names arrays as the JVM does ("[I", "[Ljava.lang.String;") */
			size_t cap = 2 * strlen(fl[2]) + 16;
			char *name = xmalloc(cap);
			alc_java_name(fl[2], name, cap);
			r->classes[r->nclasses++] = name;
		} else if (!strcmp(fl[0], "K") && n == 7) {
			if (r->nkeys >= MAX_IDS || !num(fl[1], -1, (long long)r->nnodes - 1, &a) ||
			    !num(fl[2], 0, (long long)r->nclasses - 1, &b) || !num(fl[3], 0, INT64_MAX, &c) ||
			    !num(fl[4], 0, INT64_MAX, &d) || !num(fl[5], 0, INT64_MAX, &e) ||
			    !num(fl[6], 0, INT64_MAX, &g))
				goto bad;
			grow((void **)&r->keys, &capk, r->nkeys, sizeof *r->keys);
			struct alc_key *k = &r->keys[r->nkeys++];
			memset(k, 0, sizeof *k);
			k->node = a < 0 ? ALC_NONE : (uint32_t)a;
			k->cls = (uint32_t)b;
			k->objs = (double)c;
			k->bytes = (double)d;
			k->live_objs = (double)e;
			k->live_bytes = (double)g;
		} else if (!strcmp(fl[0], "S") && n == 3) {
			static const struct {
				const char *key;
				size_t off;
			} nums[] = {{"events", offsetof(struct facts, events)},
				    {"sample_events", offsetof(struct facts, sample_events)},
				    {"tlab_events", offsetof(struct facts, tlab_events)},
				    {"old_object_samples", offsetof(struct facts, old)},
				    {"truncated_stacks", offsetof(struct facts, truncated)},
				    {"depth", offsetof(struct facts, depth)},
				    {"start_ms", offsetof(struct facts, start_ms)},
				    {"end_ms", offsetof(struct facts, end_ms)},
				    {"first_sample_threads", offsetof(struct facts, first_threads)},
				    {"first_sample_bytes", offsetof(struct facts, first_bytes)},
				    {"first_sample_max", offsetof(struct facts, first_max)}};
			bool known = false;
			for (size_t k = 0; k < sizeof nums / sizeof *nums && !known; k++)
				if (!strcmp(fl[1], nums[k].key)) {
					known = true;
					if (!num(fl[2], INT64_MIN, INT64_MAX, (long long *)((char *)fa + nums[k].off)))
						goto bad;
				}
			if (!strcmp(fl[1], "source"))
				snprintf(fa->source, sizeof fa->source, "%s", fl[2]);
			else if (!strcmp(fl[1], "first_sample_max_thread"))
				snprintf(fa->first_thread, sizeof fa->first_thread, "%s", fl[2]);
		} else {
			goto bad;
		}
		continue;
bad:
		hs_error_set(err, -1, "the JFR reader's output is not as heapsh expects at its line %ld: "
			     "heapsh and its reader do not match (rebuild heapsh)", lineno);
		st = HS_ERR;
		break;
	}
	free(line);
	if (st == HS_OK && !header) {
		hs_error_set(err, -1, "the JFR reader printed nothing");
		st = HS_ERR;
	}
	return st;
}

/* finish: the recording's account and status from the reader's facts. */
static void finish(struct alc_rec *r, const struct facts *fa)
{
	r->naccounts = 1;
	r->accounts = xcalloc(1, sizeof *r->accounts);
	r->accounts[0] = xstrdup("(none)");
	r->st.exists = true;
	r->st.exact = false;
	r->st.no_live = fa->old == 0;
	r->st.depth = fa->depth > 0 && fa->depth < UINT32_MAX ? (uint32_t)fa->depth : 0;
	r->st.events = fa->events > 0 ? (uint64_t)fa->events : 0;
	r->st.started_ms = fa->start_ms > 0 ? (uint64_t)fa->start_ms : 0;
	r->st.stopped_ms = fa->end_ms > 0 ? (uint64_t)fa->end_ms : 0;
}

static char *notes_of(const struct facts *fa, const struct alc_rec *r);

int alc_jfr_parse(FILE *f, struct alc_rec **out, char **notes, struct hs_error *err)
{
	struct alc_rec *r = xcalloc(1, sizeof *r);
	struct facts fa = {0};
	*out = NULL;
	if (notes)
		*notes = NULL;
	int st = parse(f, r, &fa, err);
	if (st != HS_OK) {
		alc_free(r);
		return st;
	}
	finish(r, &fa);
	if (notes)
		*notes = notes_of(&fa, r);
	*out = r;
	return HS_OK;
}

/* notes: what a person should know about numbers read from a recording. */
static char *notes_of(const struct facts *fa, const struct alc_rec *r)
{
	char *s = xasprintf("note: %lld allocation events from %s: objects are events (samples), "
			    "bytes the sum of their weights (JFR's estimates, as jfr print shows them)",
			    fa->sample_events + fa->tlab_events, fa->source);
	if (fa->sample_events && fa->first_threads && r) {
		double total = 0;
		for (uint32_t i = 0; i < r->nkeys; i++)
			total += r->keys[i].bytes;
		char *t = xasprintf("%s\nnote: the first sample of each of %lld threads weighs %lld bytes "
				    "(%.1f%% of the total; the largest %lld bytes, thread \"%s\"): it carries "
				    "what the thread allocated since its last sample, before the recording "
				    "began too", s, fa->first_threads, fa->first_bytes,
				    total > 0 ? 100.0 * (double)fa->first_bytes / total : 0.0,
				    fa->first_max, fa->first_thread);
		free(s);
		s = t;
	}
	if (fa->truncated) {
		char *t = xasprintf("%s\nnote: %lld stack traces were cut at JFR's stack depth "
				    "(stackdepth=%lld): their outer frames are missing", s, fa->truncated,
				    fa->depth);
		free(s);
		s = t;
	}
	char *t = fa->old ? xasprintf("%s\nnote: live objects: %lld jdk.OldObjectSample events "
				      "(objects sampled alive at the recording's end, not all of them)",
				      s, fa->old)
			  : xasprintf("%s\nnote: no jdk.OldObjectSample events: live counts unknown "
				      "(shown as 0)", s);
	free(s);
	return t;
}

int alc_read_jfr(const char *path, struct alc_rec **out, char **notes, struct hs_error *err)
{
	*out = NULL;
	if (notes)
		*notes = NULL;
	if (access(path, R_OK) != 0) {
		hs_error_set(err, -1, "cannot read %s: %s", path, strerror(errno));
		return HS_ERR;
	}
	char *java = find_java();
	if (!java) {
		hs_error_set(err, -1, "reading %s needs a JDK's java (11 or later, with jdk.jfr): set "
			     "JAVA_HOME or put java on PATH", path);
		return HS_ERR;
	}
	const char *tmp = getenv("TMPDIR");
	char *dir = xasprintf("%s/heapsh-jfr-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	struct alc_rec *r = NULL;
	char *facts = NULL;	/* the notes */
	int st = HS_ERR;
	FILE *f = NULL;
	pid_t pid = -1;
	if (!mkdtemp(dir)) {
		hs_error_set(err, -1, "cannot make a folder for the JFR reader in %s: %s",
			     tmp && *tmp ? tmp : "/tmp", strerror(errno));
		free(dir);
		dir = NULL;
		goto done;
	}
	if (!write_classes(dir)) {
		hs_error_set(err, -1, "cannot write the JFR reader into %s: %s", dir, strerror(errno));
		goto done;
	}
	int pfd[2];
	if (pipe(pfd) != 0) {
		hs_error_set(err, -1, "cannot start the JFR reader: %s", strerror(errno));
		goto done;
	}
	char *errfile = xasprintf("%s/reader.log", dir);
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		close(pfd[0]);
		close(pfd[1]);
		int e = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (e >= 0)
			dup2(e, STDERR_FILENO);
		signal(SIGINT, SIG_IGN);	/* heapsh stops it on Ctrl-C */
		char *argv[] = {java, (char *)"-XX:+UseSerialGC", (char *)"-Xshare:auto",
				(char *)"-cp", dir, (char *)"heapsh.jfr.JfrAlloc", (char *)path, NULL};
		execv(java, argv);
		_exit(127);
	}
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		hs_error_set(err, -1, "cannot start the JFR reader: %s", strerror(errno));
		free(errfile);
		goto done;
	}
	f = fdopen(pfd[0], "r");
	if (!f) {
		close(pfd[0]);
		hs_error_set(err, -1, "cannot read the JFR reader: %s", strerror(errno));
	} else {
		st = alc_jfr_parse(f, &r, &facts, err);
		fclose(f);
	}
	if (st != HS_OK)
		kill(pid, SIGKILL);
	int ws = 0;
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (st == HS_ERR && !strncmp(err->msg, "the JFR reader printed nothing", 30)) {
		/* the JVM did not start or died: what it said */
		char said[400] = "";
		FILE *ef = fopen(errfile, "r");
		if (ef) {
			size_t n = fread(said, 1, sizeof said - 1, ef);
			said[n] = 0;
			fclose(ef);
		}
		for (char *c = said; *c; c++)
			if (*c == '\n')
				*c = ' ';
		hs_error_set(err, -1, "the JFR reader (%s) did not run%s%s%s", java,
			     WIFEXITED(ws) && WEXITSTATUS(ws) == 127 ? ": cannot execute it" : "",
			     said[0] ? ": " : "", said);
	} else if (st == HS_ERR && err->msg[0] && !strstr(err->msg, "heapsh expects")) {
		char *m = xasprintf("cannot read %s as a JFR recording: %s", path, err->msg);
		hs_error_set(err, -1, "%s", m);
		free(m);
	}
	free(errfile);
	if (st == HS_OK && (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)) {
		hs_error_set(err, -1, "the JFR reader stopped before the end of %s", path);
		st = HS_ERR;
	}
done:
	if (dir)
		remove_tree(dir);
	free(dir);
	free(java);
	if (st != HS_OK) {
		alc_free(r);
		free(facts);
		return st;
	}
	if (notes)
		*notes = facts;
	else
		free(facts);
	*out = r;
	return HS_OK;
}
