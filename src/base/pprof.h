/*
 * pprof.h - writing profiles in pprof's format (profile.proto from
 * github.com/google/pprof, src/alloc/proto/), the format `go tool pprof`,
 * Grafana Pyroscope and other profilers read: samples, each a stack of
 * locations (innermost first) with one value per sample type. The message
 * is encoded by Debian's protobuf-c from the published profile.proto and
 * written gzip-compressed, as the format asks.
 *
 * The builder interns what it is given: strings (the profile's string
 * table), functions by (name, file), locations by (function, line), so a
 * caller may hand the same frame again and again. Values are int64 as the
 * format has them; units are the sample types' own (bytes unless named).
 *
 * Ownership: pprof_new returns a builder freed with pprof_free; strings
 * given to it are copied. Out of memory ends in the x* wrappers' report
 * (mem.h), as elsewhere in the library.
 */
#ifndef HS_PPROF_H
#define HS_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "mem.h"

struct pprof;

/*
 * pprof_new: a builder for profiles whose samples carry ntypes values, the
 * k-th of sample type types[k] in unit units[k] (pprof's names, such as
 * "alloc_space" / "bytes", "inuse_objects" / "count"). default_type is
 * the index of the type a viewer shows first.
 */
struct pprof *pprof_new(int ntypes, const char *const *types, const char *const *units,
			int default_type);
void pprof_free(struct pprof *p);

/*
 * pprof_function: the id (1-based) of the function called name (as the
 * profile shows it, e.g. "com.acme.Foo.parse"), with system_name (e.g. the
 * JVM descriptor; NULL: name) and file (a source path; NULL: none).
 * The same (name, system_name, file) gives the same id.
 */
uint64_t pprof_function(struct pprof *p, const char *name, const char *system_name,
			const char *file);

/* pprof_location: the id (1-based) of a location in function at line (0: unknown). */
uint64_t pprof_location(struct pprof *p, uint64_t function, int64_t line);

/*
 * pprof_sample: a sample whose stack is locs[0..nlocs) (ids from
 * pprof_location, innermost first, as pprof orders them) and whose values
 * are values[0..ntypes). A stack may be empty. labels holds nlabels
 * string labels as key, value pairs (2 * nlabels strings; what
 * `go tool pprof -tags` shows and `-tagfocus` selects); NULL when none.
 */
void pprof_sample(struct pprof *p, const uint64_t *locs, size_t nlocs, const int64_t *values,
		  const char *const *labels, size_t nlabels);

/*
 * The profile's header: when it was taken (ns since the epoch), how long
 * it covers (ns), the period between samples (in the unit of period_type,
 * e.g. "space" / "bytes" for sampled allocations; 0 leaves it unset), and
 * comments (one string each, shown by `go tool pprof -comments`).
 */
void pprof_time(struct pprof *p, int64_t time_ns, int64_t duration_ns);
void pprof_period(struct pprof *p, const char *type, const char *unit, int64_t period);
void pprof_comment(struct pprof *p, const char *text);

/*
 * pprof_write: the profile, gzip-compressed, to path (replaced when it
 * exists; written to a temporary file beside it first, so that a failed
 * write leaves no half file). HS_OK, or HS_ERR with err saying what failed
 * and where.
 */
int pprof_write(const struct pprof *p, const char *path, struct hs_error *err);

/* pprof_samples: the number of samples so far. */
size_t pprof_samples(const struct pprof *p);

#endif
