/*
 * snapshot.h - turning the agent's snapshot records (docs/protocol.md,
 * SNAPSHOT) into an HPROF 1.0.2 file, so that a live heap is loaded into
 * the same heap model as a dump (heap_load).
 *
 * The records arrive in DATA frames cut anywhere; snap_feed keeps the tail
 * of a record until the next frame completes it. Objects, references and
 * primitive field values are kept (about 40 bytes per object) until
 * snap_write_hprof lays them out as HPROF records: field values in each
 * class's order, found from JVMTI's field indexes (interface fields first,
 * then java.lang.Object's fields down to the class's own).
 *
 * Ownership: snap_new returns a builder freed with snap_free.
 */
#ifndef HS_SNAPSHOT_H
#define HS_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "../base/mem.h"

struct snap_builder;

struct snap_builder *snap_new(void);
void snap_free(struct snap_builder *b);
/*
 * snap_heap_bound: the JVM's heap holds at most heap_bytes (INFO's heap
 * max, or committed): object ids, array lengths and element bytes beyond
 * what that heap can hold are malformed, so a broken or hostile agent
 * cannot make heapsh allocate or write more than the heap's size. 0: no
 * bound but the format's (4 billion objects, 2 GiB per array).
 */
void snap_heap_bound(struct snap_builder *b, uint64_t heap_bytes);

/* snap_feed: n more bytes of records. HS_ERR with err set when they are malformed. */
int snap_feed(struct snap_builder *b, const uint8_t *p, size_t n, struct hs_error *err);

/*
 * snap_write_hprof: write the HPROF file to path (replaced). objects is the
 * count the agent reported, checked against the records. HS_ERR with err
 * set on a write error or inconsistent records.
 */
int snap_write_hprof(struct snap_builder *b, const char *path, uint64_t objects,
		     struct hs_error *err);

/* snap_java_name: "Ljava/lang/String;" -> "java.lang.String", "[[I" -> "int[][]" (new string). */
char *snap_java_name(const char *signature);

#endif
