/*
 * fuzz_redact.c - libFuzzer harness for heapsh --redact's streaming
 * rewriter (src/hprof/redact.c). The input is a dump file, plain or
 * gzip'd; its size picks the options (none, --keep-lengths, --keep). A
 * malformed input must end in an error that leaves no file behind; a
 * redacted copy must be as long as the (inflated) input, and redacting it
 * again must give the same bytes (what is zeroed stays zeroed, what is
 * kept is kept again).
 */
#include <dirent.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "tiny_heap.h"
#include "../unit/props_heap.h"

#include "../../src/hprof/redact.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *dir;

/*
 * With HEAPSH_FUZZ_SEEDS=DIR: write the seeds there and exit: the tiny
 * heap with ids of 4 and 8 bytes, plain and gzip'd, Android's, and
 * several dumps in one file; System.props (props_heap.h).
 */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_quiet();
	dir = fz_tmpdir("redact");
	const char *to = getenv("HEAPSH_FUZZ_SEEDS");
	if (!to)
		return 0;
	for (int v = 0; v <= 2; v++)
		for (int ids = 4; ids <= 8; ids += 4) {
			struct hw w;
			char name[64];
			tiny_heap_ex(&w, ids, v);
			snprintf(name, sizeof name, "tiny-%d-%d.hprof", v, ids);
			fz_seed(to, name, hw_save(&w));
			snprintf(name, sizeof name, "tiny-%d-%d.hprof.gz", v, ids);
			fz_seed(to, name, hw_save_gz(&w, 100));
			hw_free(&w);
		}
	for (int k = 0; k < 4; k++) {	/* System.props in both orders */
		struct hw w;
		char name[64];
		props_heap(&w, k & 1 ? 4 : 8, false, k >> 1);
		snprintf(name, sizeof name, "props-%d-%d.hprof", k & 1 ? 4 : 8, k >> 1);
		fz_seed(to, name, hw_save(&w));
		hw_free(&w);
	}
	exit(0);
}

/* files: how many files dir holds. */
static int files(void)
{
	DIR *d = opendir(dir);
	int n = 0;
	if (!d)
		abort();
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		abort();
	struct stat st;
	if (fstat(fileno(f), &st) != 0)
		abort();
	uint8_t *b = malloc((size_t)st.st_size + 1);
	if (!b || fread(b, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
		abort();
	fclose(f);
	*n = (size_t)st.st_size;
	return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keep[] = {"java.lang.Thread*", "Order", "*"};
	struct hprof_redact_opts o = {0};
	o.keep_lengths = size % 3 == 1;
	if (size % 3 == 2) {
		o.keep = keep + size / 3 % 2;
		o.nkeep = 2;
	}
	char out[128], again[128];
	snprintf(out, sizeof out, "%s/copy.hprof%s", dir, size % 2 ? ".gz" : "");
	snprintf(again, sizeof again, "%s/again.hprof", dir);
	struct hs_error err;
	struct hprof_redact_stats st;
	const char *in = fz_file(data, size);
	if (hprof_redact(in, out, &o, &st, &err) != HS_OK) {
		if (files() != 0)	/* a failed run leaves nothing */
			abort();
		return 0;
	}
	if (hprof_redact(out, again, &o, NULL, &err) != HS_OK)
		abort();	/* the copy of a dump is a dump */
	size_t n1, n2;
	uint8_t *a = slurp(again, &n2);
	if (n2 != st.in_bytes)
		abort();	/* every record in place */
	if (!(size % 2)) {
		uint8_t *c = slurp(out, &n1);
		if (n1 != n2 || memcmp(a, c, n1))
			abort();	/* redacting twice changes nothing */
		free(c);
	}
	free(a);
	unlink(out);
	unlink(again);
	return 0;
}
