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
 * (engine/waste.h), queries (dsl/eval.h, through hs_dsl; the language's
 * names, dsl/builtins.h; native functions, dsl/extern.h), allocation
 * recordings (alloc/alloc.h), the attached JVM's data (attach/attach.h,
 * attach/proto.h: its histogram rows, its answers), and the utilities a
 * front end shows them with (base/classname.h, base/suggest.h, base/big.h's
 * statistics, base/filemap.h's file of a fault, engine/idx.h's index
 * sections). These headers are the library's API: the front ends include
 * this one and no other of the library's (tests/t_layers.sh); the rest
 * (the parser's internals, programs for the agent, the planner, push-down,
 * the snapshot reader, the wire codec) the session uses for them.
 * Errors come back
 * in the session's struct hs_error (base/mem.h); nothing prints, nothing
 * ends the process (a throw inside becomes the call's HS_ERR, base/ctx.h),
 * and Ctrl-C is hs_interrupt(s). Ownership is said in each header.
 */
#ifndef HS_HEAPSH_H
#define HS_HEAPSH_H

#include "alloc/alloc.h"
#include "attach/attach.h"
#include "attach/proto.h"
#include "base/big.h"
#include "base/classname.h"
#include "base/ctx.h"
#include "base/filemap.h"
#include "base/mem.h"
#include "base/suggest.h"
#include "dsl/builtins.h"
#include "dsl/eval.h"
#include "dsl/extern.h"
#include "dsl/parse.h"
#include "engine/dom_pprof.h"
#include "engine/domtree.h"
#include "engine/dyn.h"
#include "engine/idx.h"
#include "engine/path.h"
#include "engine/suspects.h"
#include "engine/waste.h"
#include "heap/heap.h"
#include "session/session.h"

#endif
