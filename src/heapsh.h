/*
 * heapsh.h - the heapsh library (build/libheapsh.a): everything below the
 * front ends, for the shell, the Lua module, the unit tests, and anyone
 * embedding heapsh (docs/architecture.md).
 *
 * A program makes a session (session/session.h), opens a dump or attaches
 * to a JVM through it, and asks it for what it needs: the heap model
 * (heap/heap.h: objects, classes, fields, GC roots), the dominator tree and
 * retained sizes (engine/domtree.h), the dynamic-size engine
 * (engine/dyn.h), paths from GC roots (engine/path.h), leak suspects
 * (engine/suspects.h), duplicate strings and wasteful collections
 * (engine/waste.h), queries (dsl/eval.h, through hs_dsl). Errors come back
 * in the session's struct hs_error (base/mem.h); nothing prints, nothing
 * ends the process (a throw inside becomes the call's HS_ERR, base/ctx.h),
 * and Ctrl-C is hs_interrupt(s). Ownership is said in each header.
 */
#ifndef HS_HEAPSH_H
#define HS_HEAPSH_H

#include "base/big.h"
#include "base/filemap.h"
#include "base/mem.h"
#include "dsl/eval.h"
#include "dsl/parse.h"
#include "engine/domtree.h"
#include "engine/dyn.h"
#include "engine/path.h"
#include "engine/suspects.h"
#include "engine/waste.h"
#include "heap/heap.h"
#include "session/session.h"

#endif
