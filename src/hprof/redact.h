/*
 * redact.h - a copy of an HPROF heap dump without the application's data
 * (heapsh --redact; docs/manual.md, "Redacting a dump").
 *
 * The copy has the same records, at the same offsets, with the same
 * object ids, references, array lengths, class and field names and GC
 * roots; the values are gone: every primitive instance field, static
 * field, constant-pool entry and primitive array element is zeroed (or,
 * for char[] and byte[] with keep_lengths, filled with 'x'). What stays
 * on purpose, and why, is listed at hprof_redact.
 *
 * The input is read as a stream (zlib's gzread, so plain and gzip'd dumps
 * alike) through one buffer: memory holds the classes' field layouts, the
 * UTF8 names and a few ids, never the objects, so dumps larger than memory
 * are redacted at the speed of the disk. Several read passes over the
 * input (hprof_redact says which); one write pass.
 *
 * Ownership: nothing returned needs freeing; the options' strings stay the
 * caller's.
 */
#ifndef HS_REDACT_H
#define HS_REDACT_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/mem.h"

struct hprof_redact_opts {
	bool keep_lengths;	/* char[] and byte[] get 'x' filler, not zeros */
	const char *const *keep;	/* glob patterns of class names (fnmatch), "java.lang.Thread*" */
	int nkeep;
	int gzip_level;		/* .gz output's level, 1-9; 0 means 1 */
};

struct hprof_redact_stats {
	uint64_t records;	/* top-level records copied */
	uint64_t objects;	/* instances and arrays */
	uint64_t zeroed_bytes;	/* value bytes zeroed or filled */
	uint64_t kept_bytes;	/* value bytes kept (hprof_redact's list) */
	uint64_t in_bytes;	/* the dump's size, uncompressed */
	int passes;		/* read passes over the input, the writing one included */
	uint64_t read_bytes;	/* read in all passes (those after the first may stop early) */
	uint64_t kept_classes;	/* classes whose names match opts->keep */
};

/*
 * hprof_redact: write to out a copy of the HPROF dump at in without its
 * values. in is plain or gzip'd (any number of gzip members, as jcmd -gz
 * writes); out is gzip'd (level opts->gzip_level, 1 by default, near disk
 * speed) when its name ends in ".gz", plain otherwise. The copy is written
 * to "OUT.tmp-redact-PID" in out's folder and renamed to out only when it
 * is complete; on any failure it is removed and out is left as it was.
 *
 * Kept, because heapsh's model of the heap reads them (docs/manual.md):
 *  - String.coder (one bit per String: Latin-1 or UTF-16), so a String's
 *    length reads right;
 *  - the int fields size, count and baseCount that classes of java.util
 *    declare (HashMap.size, Hashtable.count, ConcurrentHashMap.baseCount):
 *    a collection's entry count, which leak suspects tell;
 *  - the primitive statics of java.lang.Class$Atomic and
 *    java.util.concurrent.FutureTask (Unsafe field offsets: the reference
 *    size, when the dump says it nowhere else);
 *  - the System properties java.vm.compressedOopsMode, sun.cpu.endian,
 *    java.version, java.runtime.version and java.vm.name, keys and values
 *    (the reference size, the byte order of UTF-16 strings, the JDK);
 *  - with opts->keep: the primitive fields and statics of the classes whose
 *    names match a pattern, and the Strings (fields and contents) and
 *    primitive arrays that those instances and statics reference directly.
 * Every record other than INSTANCE DUMP, CLASS DUMP and PRIMITIVE ARRAY
 * DUMP is copied as is (names, stack traces, roots, ids, lengths); an
 * unknown record or sub-record tag is an error, since its bytes could hold
 * anything.
 *
 * Algorithm: pass 1 reads the UTF8 names, LOAD CLASS and the CLASS DUMPs'
 * field layouts (a class may come after its instances: JDK 21's parallel
 * dumps, Android); the objects to keep are then found by following
 * references from System.props and from kept classes, a pass per step
 * back in the file (most dumps need none or one); the last pass writes.
 *
 * Returns HS_OK with *st filled (st may be NULL); HS_ERR with err set
 * (message and err->offset, the byte offset in the uncompressed dump, or
 * -1) for a file that cannot be read or written, a non-HPROF file, a
 * truncated or malformed dump; HS_INTERRUPTED on Ctrl-C (hs_interrupted).
 */
int hprof_redact(const char *in, const char *out, const struct hprof_redact_opts *opts,
		 struct hprof_redact_stats *st, struct hs_error *err);

#endif
