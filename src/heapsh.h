/*
 * heapsh.h - the heapsh library (build/libheapsh.a): everything below the
 * front ends, for the shell, the Lua module, the unit tests, and anyone
 * embedding heapsh (docs/architecture.md). The front ends include this
 * header and nothing else of the library (tests/t_layers.sh checks it).
 *
 * A program makes a session (session/session.h: an opaque struct
 * hs_session and its hs_* functions), opens a dump or attaches to a JVM
 * through it, and asks it for what it needs. These headers are the public
 * API, and this one includes them all:
 *   session/session.h   the session: opening, the attached JVM, queries routed
 *   heap/heap.h         the heap model: objects, classes, fields, GC roots
 *   engine/domtree.h    the dominator tree and retained sizes
 *   engine/dom_pprof.h  the dominator tree as a pprof profile
 *   engine/dyn.h        the dynamic-size engine
 *   engine/path.h       paths from GC roots
 *   engine/suspects.h   leak suspects
 *   engine/hdiff.h      two dumps compared (heapsh diff)
 *   engine/waste.h      duplicate strings and wasteful collections
 *   hprof/redact.h      a copy of a dump without its values (heapsh --redact)
 *   dsl/eval.h          the query language's values and session (hs_dsl)
 *   dsl/extern.h        native functions bound by name and signature
 *   alloc/alloc.h       allocation recordings and their views
 *   dsl/builtins.h      the language's built-in names (completion, :explain)
 *   base/mem.h          errors (struct hs_error), allocation wrappers
 *   base/ctx.h          the work context: Ctrl-C, progress, throw and catch
 *   base/classname.h    Java class names and patterns
 *   base/suggest.h      "did you mean" for names typed wrong
 * Some of their types come from headers they include in turn, which are
 * public for those types only: the graph the engine walks (engine/hgraph.h,
 * engine/scc.h), the dump file of a heap (hprof/hprof.h, heap/layout.h),
 * the query language's values and parse status (dsl/value.h, dsl/ast.h,
 * dsl/parse.h, dsl/arena.h). The rest (the index file, the wire protocol,
 * the query language's planner and programs, push-down, big arrays,
 * mapped files) is the library's own: a front end reaches it only through
 * the session's functions. Errors come back in the session (hs_errmsg);
 * nothing prints, nothing ends the process (a throw inside becomes the
 * call's HS_ERR, base/ctx.h), and Ctrl-C is hs_interrupt(s). Ownership is
 * said in each header.
 */
#ifndef HS_HEAPSH_H
#define HS_HEAPSH_H

#include "alloc/alloc.h"
#include "base/classname.h"
#include "base/ctx.h"
#include "base/mem.h"
#include "base/suggest.h"
#include "dsl/builtins.h"
#include "dsl/eval.h"
#include "dsl/extern.h"
#include "engine/dom_pprof.h"
#include "engine/domtree.h"
#include "engine/hdiff.h"
#include "engine/dyn.h"
#include "engine/path.h"
#include "engine/suspects.h"
#include "engine/waste.h"
#include "heap/heap.h"
#include "hprof/redact.h"
#include "session/session.h"

#endif
