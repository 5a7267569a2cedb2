/*
 * dom_pprof.h - the dominator tree of a heap written as a pprof profile
 * (src/base/pprof.h), for `go tool pprof`, Grafana Pyroscope and other
 * profile viewers.
 */
#ifndef HS_DOM_PPROF_H
#define HS_DOM_PPROF_H

#include "domtree.h"

struct hs_error;

/* Steps of a path kept (dom_class_paths' max_depth); deeper objects count at this depth. */
#define DOM_PPROF_DEPTH 256

/*
 * dom_pprof: the paths of dom_class_paths (t, DOM_PPROF_DEPTH) as a pprof
 * profile, gzip'd, written to path: one sample per path whose objects
 * are at its end, its stack the path's classes innermost first (a class
 * object as "class com.acme.Foo"), its values inuse_objects (count) and
 * inuse_space (bytes, the objects' shallow sizes). pprof's total is the
 * reachable heap, a class's flat value its reachable instances' shallow
 * bytes, and its cumulative value what its instances retain together
 * (those under another instance of the class counted once: Eclipse MAT's
 * approximate retained size of a class, dom_class_retained_lower).
 * comment (NULL: none) goes into the profile's comments. HS_OK; HS_ERR with
 * err set when the file cannot be written; HS_INTERRUPTED on Ctrl-C.
 */
int dom_pprof(struct dom_tree *t, const char *path, const char *comment, struct hs_error *err);

#endif
