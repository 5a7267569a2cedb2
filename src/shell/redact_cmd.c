/*
 * redact_cmd.c - the front end of heapsh --redact IN OUT (src/hprof/redact.h):
 * its options, Ctrl-C, the error and the one-line summary on stderr.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sh.h"
#include "../heapsh.h"

static struct hs_ctx *redact_ctx;

static void on_int(int sig)
{
	(void)sig;
	hs_ctx_interrupt(redact_ctx);
}

static int redact_usage(FILE *f)
{
	fprintf(f,
		"usage: heapsh --redact IN OUT [--keep-lengths] [--keep PATTERN]...\n"
		"\n"
		"Write OUT, a copy of the heap dump IN without the application's data: the\n"
		"values of primitive fields, statics and arrays (String contents among them)\n"
		"zeroed; classes, field names, ids, references, sizes and GC roots kept, so\n"
		"every structural answer is the same on the copy (docs/manual.md, \"Redacting\n"
		"a dump\"). IN may be gzip'd; OUT is gzip'd (level 1) when it ends in .gz.\n"
		"\n"
		"  --keep-lengths    fill char[] and byte[] with 'x' instead of zeros\n"
		"  --keep PATTERN    keep the values of classes matching PATTERN (a glob on\n"
		"                    the Java name: 'java.lang.Thread*') and of the Strings\n"
		"                    and arrays their instances and statics reference\n"
		"  --gzip-level N    OUT.gz's gzip level, 1 (default) to 9\n");
	return f == stdout ? 0 : 2;
}

int sh_redact_main(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	const char **keep = xcalloc((size_t)argc + 1, sizeof *keep);
	struct hprof_redact_opts o = {0};
	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--keep-lengths")) {
			o.keep_lengths = true;
		} else if (!strcmp(argv[a], "--keep") && a + 1 < argc) {
			keep[o.nkeep++] = argv[++a];
		} else if (!strcmp(argv[a], "--gzip-level") && a + 1 < argc) {
			o.gzip_level = atoi(argv[++a]);
			if (o.gzip_level < 1 || o.gzip_level > 9) {
				fprintf(stderr, "heapsh: --gzip-level takes 1 to 9, not '%s'\n", argv[a]);
				free(keep);
				return 2;
			}
		} else if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help")) {
			free(keep);
			return redact_usage(stdout);
		} else if (argv[a][0] == '-' && argv[a][1]) {
			fprintf(stderr, "heapsh: --redact: unknown option '%s'\n", argv[a]);
			free(keep);
			return redact_usage(stderr);
		} else if (!in) {
			in = argv[a];
		} else if (!out) {
			out = argv[a];
		} else {
			fprintf(stderr, "heapsh: --redact takes IN and OUT; '%s' is extra\n", argv[a]);
			free(keep);
			return 2;
		}
	}
	if (!out) {
		free(keep);
		return redact_usage(stderr);
	}
	o.keep = keep;
	redact_ctx = hs_ctx_now();
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_int;
	sigemptyset(&sa.sa_mask);
	/* Ended by a signal, the copy's temporary file is removed (hprof_redact). */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct hprof_redact_stats s;
	struct hs_error err;
	hs_error_clear(&err);
	int st = hprof_redact(in, out, &o, &s, &err);
	free(keep);
	if (st == HS_INTERRUPTED) {
		fprintf(stderr, "heapsh: --redact interrupted; %s not written\n", out);
		return 2;
	}
	if (st != HS_OK) {
		if (err.offset >= 0)
			fprintf(stderr, "heapsh: --redact: %s (at byte %lld of %s, uncompressed); "
				"%s not written\n", err.msg, (long long)err.offset, in, out);
		else
			fprintf(stderr, "heapsh: --redact: %s; %s not written\n", err.msg, out);
		return 2;
	}
	if (o.nkeep && !s.kept_classes)
		fprintf(stderr, "heapsh: --redact: no class of the dump matched --keep; nothing was "
			"kept for it (patterns are globs on Java names: 'java.lang.Thread*')\n");
	else if (o.nkeep)
		fprintf(stderr, "heapsh: --redact: --keep matched %llu classes\n",
			(unsigned long long)s.kept_classes);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	fprintf(stderr, "heapsh: redacted %s to %s: %llu records, %llu objects, %llu value "
		"bytes zeroed, %llu kept, %d read passes (%.1f times the dump), %.2f s (%.0f MB/s)\n", in, out,
		(unsigned long long)s.records, (unsigned long long)s.objects,
		(unsigned long long)s.zeroed_bytes, (unsigned long long)s.kept_bytes, s.passes,
		s.in_bytes ? (double)s.read_bytes / (double)s.in_bytes : 0.0, secs, secs > 0 ? (double)s.in_bytes / 1e6 / secs : 0.0);
	return 0;
}
