/*
 * fuzz_jfr.c - libFuzzer harness for reading a JFR recording's allocation
 * events (src/alloc/jfr.c, alc_jfr_parse): the bundled reader's output,
 * which carries the recording's own strings (class and method names) and
 * numbers, as bad bytes; a recording that parses goes through the views
 * (per class, per site, the calling-context tree, folded stacks, the flame
 * graph page, the old object samples' paths).
 *
 * With HEAPSH_FUZZ_SEEDS=DIR, LLVMFuzzerInitialize writes a well-formed
 * reader output there (the corpus's seed) and exits.
 */
#include "fuzz.h"

#include "../../src/alloc/alloc.h"
#include "../../src/base/mem.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char SEED[] =
	"H\theapsh-jfr\t1\n"
	"M\t0\tJfrWork\tmain\t([Ljava/lang/String;)V\n"
	"M\t1\tJfrWork\tmake\t(J)Ljava/lang/Object;\n"
	"N\t0\t-1\t0\t30\n"
	"N\t1\t0\t1\t22\n"
	"C\t0\t[J\n"
	"C\t1\tJfrWork$Block\n"
	"K\t1\t0\t12\t123456\t0\t0\n"
	"K\t1\t1\t1\t4096\t0\t0\n"
	"K\t-1\t0\t1\t1024\t0\t0\n"
	"K\t0\t1\t0\t0\t2\t48\n"
	"P\t1\t0\t0\tThreads\tclass JfrWork\tKEPT\tjava.util.ArrayList\telementData\t[Ljava.lang.Object;\t[]\n"
	"P\t-1\t1\t3\tClass Loader Data\tjava.lang.Thread\tthreadLocals\t\t(3 links JFR left out)\n"
	"S\tevents\t16\n"
	"S\tsource\tjdk.ObjectAllocationSample\n"
	"S\tsample_events\t14\n"
	"S\ttlab_events\t0\n"
	"S\told_object_samples\t2\n"
	"S\ttruncated_stacks\t1\n"
	"S\tdepth\t2\n"
	"S\tstart_ms\t1790000000000\n"
	"S\tend_ms\t1790000003000\n"
	"S\tfirst_sample_threads\t1\n"
	"S\tfirst_sample_bytes\t100000\n"
	"S\tfirst_sample_max\t100000\n"
	"S\tfirst_sample_max_thread\tmain\\tthread\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *dir = getenv("HEAPSH_FUZZ_SEEDS");
	if (dir) {
		char path[4096];
		snprintf(path, sizeof path, "%s/reader-output", dir);
		FILE *f = fopen(path, "w");
		if (f) {
			fputs(SEED, f);
			fclose(f);
		}
		exit(0);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	struct alc_rec *r = NULL;
	char *notes = NULL;
	struct hs_error err;
	if (alc_jfr_parse(f, &r, &notes, &err) == HS_OK) {
		uint32_t n;
		free(alc_by_class(r, false, &n));
		free(alc_by_site(r, true, &n));
		free(alc_tree(r, 0, &n));
		free(alc_leaks(r, &n));
		FILE *sink = fopen("/dev/null", "w");
		if (sink) {
			alc_collapsed(r, sink, false, false);
			alc_flamegraph_html(r, sink, "fuzz");
			fclose(sink);
		}
		alc_free(alc_copy(r));
		alc_free(r);
	}
	free(notes);
	fclose(f);
	return 0;
}
