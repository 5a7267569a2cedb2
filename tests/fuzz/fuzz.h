/*
 * fuzz.h - what the libFuzzer harnesses share (docs/fuzzing.md).
 *
 * fz_file: the input as a file at a path the readers open (a memfd, named
 * through /proc/self/fd, so no disk is touched per input); the same file
 * is rewritten for each input. fz_quiet: send the stdout of the
 * code under test to /dev/null (libFuzzer reports on stderr), so a log
 * stays readable (set HEAPSH_FUZZ_VERBOSE=1 to keep it).
 *
 * Header-only (static) because each harness is built alone against the
 * library objects, as the unit tests are.
 */
#ifndef HS_FUZZ_H
#define HS_FUZZ_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static inline const char *fz_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("heapsh-fuzz", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	return path;
}

static inline void fz_quiet(void)
{
	const char *v = getenv("HEAPSH_FUZZ_VERBOSE");
	if (v && *v == '1')
		return;
	int null = open("/dev/null", O_WRONLY);
	if (null < 0)
		return;
	fflush(stdout);
	dup2(null, STDOUT_FILENO);
	close(null);
}

/*
 * fz_tmpdir: a new temporary folder (path in dir, cap >= 64), removed with
 * what is in it when the process exits, so a campaign's many processes
 * leave nothing behind.
 */
static char fz_dir[64];
static inline void fz_rmdir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", fz_dir);
	if (fz_dir[0] && system(cmd) != 0)
		fz_dir[0] = 0;
}
static inline const char *fz_tmpdir(const char *name)
{
	snprintf(fz_dir, sizeof fz_dir, "/tmp/heapsh-fuzz-%s-XXXXXX", name);
	if (!mkdtemp(fz_dir))
		abort();
	atexit(fz_rmdir);
	return fz_dir;
}

/*
 * fuzz_wire's first input byte, modulo FZ_WIRE_MODES: which reader the rest
 * of the input is for (tests/fuzz/fuzz_wire.c says what each reads).
 * fuzz_query writes its ANALYZE seeds with FZ_WIRE_ANALYZE.
 */
enum fz_wire_mode {
	FZ_WIRE_REPLY = 0,	/* 0 to 9: a request; the rest, its reply stream */
	FZ_WIRE_INSTANCES = 10,
	FZ_WIRE_ANALYZE,
	FZ_WIRE_ALLOC_START,
	FZ_WIRE_OPTIONS,
	FZ_WIRE_SNAPSHOT,
	FZ_WIRE_CODEC,
	FZ_WIRE_MODES
};

/* fz_text: the input as a NUL-terminated string (caller frees). */
static inline char *fz_text(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = 0;
	return s;
}

/* fz_seed: copy the file at from to DIR/name (a seed's corpus file); aborts if it cannot. */
static inline void fz_seed(const char *dir, const char *name, const char *from)
{
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "cp '%s' '%s/%s'", from, dir, name);
	if (system(cmd) != 0)
		abort();
}

#endif
