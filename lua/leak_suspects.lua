--[[
leak_suspects.lua - leak suspects in the manner of Eclipse MAT: the objects
that keep a large share of the heap alive, where inside each the memory
piles up (its accumulation point), and how a GC root reaches it.

Usage:
  heapsh -l lua/leak_suspects.lua DUMP [--threshold PCT] [--child PCT] [--max-depth N] [--all]
  :luafile lua/leak_suspects.lua [OPTIONS]

  --threshold PCT  a suspect retains at least PCT% of the reachable heap
                   (default 10)
  --child PCT      descend to a dominator child holding at least PCT% of its
                   parent's retained size (default 80)
  --max-depth N    stop descending after N steps (default 500)
  --all            suspects among all objects, not only among those the GC
                   roots dominate directly

Output (heapsh.print_table, so `heapsh --format csv|json` applies), one row
per suspect, largest first:
  rank              1, 2, ...
  suspect           "0xID Class" of the suspect, or "N x Class" for a group
  kind              "object", or "class" for a group of objects of one class
                    that the GC roots dominate directly (each alone below the
                    threshold, together at or above it)
  depth             the suspect's depth in the dominator tree (1: dominated
                    directly by the GC roots)
  retained_bytes    what the suspect keeps alive (a group: its members' sum)
  heap_pct          retained_bytes as a percentage of the reachable heap
  accumulation      "0xID Class" of the accumulation point
  acc_depth         dominator-tree steps from the suspect down to it
                    ("N+" when --max-depth stopped the descent)
  acc_retained      what the accumulation point keeps alive
  acc_pct           acc_retained as a percentage of the reachable heap
  children          the class of the accumulation point's largest dominator
                    children: "Class xCOUNT" (those of that class together
                    retaining the most; class objects as java.lang.Class),
                    and their share of what it retains
  path              the shortest path from a GC root to the accumulation
                    point: "[root kind] Class -> Class -> ...", class objects
                    as "class Name", a run of N objects of one class (a
                    linked list) as "Class xN"; a path of more than 12 such
                    steps keeps its first 3 and last 8, "(N more)" between

Android dumps: objects of the zygote and image heaps (HEAP DUMP INFO) are
never suspects, nor counted in a group; they stay in the reachable heap.

How it decides: the reachable heap is what the objects the GC roots dominate
directly retain together (`:dominators` says the same figure). Suspects are
those objects retaining at least the threshold (with --all: every object of
the dominator tree that does, parents and children alike), and the groups of
directly dominated objects of one class, each below the threshold, whose
retained sizes add up to it (their retained sets are disjoint, so the sum is
exact; class objects are grouped as java.lang.Class, as `:dominators
--by-class` does). From a
suspect the dominator tree is followed down while the largest child retains
at least --child percent of its parent; the last object reached is the
accumulation point (the suspect itself if no child is that large). For a
group, the descent starts at its largest member.

Limits: the path names classes, not fields (the Lua API has no field names
of a reference); the path is the shortest one, not necessarily the one that
matters. Each step of the descent calls h:dominators(object), a scan of the
whole dominator tree (the Lua API has no immediate dominator of an object):
about 0.3 ms per million objects, so a descent along a long linked list is
slow; --max-depth bounds it. Retained sizes follow the engine's choice about
weak references (`heapsh --no-weak`).
--]]

local USAGE = "usage: heapsh -l lua/leak_suspects.lua DUMP [--threshold PCT] [--child PCT] " ..
	"[--max-depth N] [--all]"

local h = heapsh.current() or error(USAGE .. "\n(no heap is open)", 0)

local script = require("lib.script")
local opts = script.options(USAGE, {["--threshold"] = "percent", ["--child"] = "percent",
	["--max-depth"] = "count", ["--all"] = "flag"})
local threshold, child_pct = opts.threshold or 10, opts.child or 80
local all, max_depth = opts.all or false, opts.max_depth or 500

-- "0xID Class" (class objects: "0xID class Name"), and the name alone.
local function label(o)
	return tostring(o)
end
local function name(o)
	return (tostring(o):match("^%S+ (.*)$"))
end

local pct = script.pct

-- Android dumps: objects of the zygote and image heaps were there before
-- the app started (preloaded classes and the boot image); they are no
-- suspects, as Android Studio and Shark leave them out.
local function system_heap(o)
	local hp = o.android_heap
	return hp == "zygote" or hp == "image"
end

-- The reachable heap, and the directly dominated objects by class (the
-- grouping of `:dominators --by-class`: class objects are java.lang.Class).
local top = assert(h:dominators())
local reachable = 0
local groups = {}
for o in top:iter() do
	local r = o.retained_size
	reachable = reachable + r
	local c = system_heap(o) and "(system heap)" or o.class
	local g = groups[c]
	if not g then
		g = {count = 0, bytes = 0}
		groups[c] = g
	end
	g.count = g.count + 1
	g.bytes = g.bytes + r
end
local limit = reachable * threshold / 100

-- The suspects: rows of {o, kind, depth, retained, what}. The list is
-- largest first, so the objects over the limit come first; the groups are
-- what is left of each class below the limit.
local suspects = {}
local function visit(list, depth)
	-- --all: down the tree, as far as the objects are big enough (a child
	-- never retains more than its parent).
	for o in list:iter() do
		local r = o.retained_size
		if r < limit then
			break
		end
		if not system_heap(o) then
			suspects[#suspects + 1] = {o = o, kind = "object", depth = depth, retained = r,
				what = label(o)}
		end
		visit(h:dominators(o), depth + 1)
	end
end
local wanted, nwanted = nil, 0
for o in top:iter() do
	local r = o.retained_size
	if system_heap(o) then
		-- neither a suspect nor in a group; --all still looks below it
		if all and r >= limit then
			visit(h:dominators(o), 2)
		end
	elseif r >= limit then
		local g = groups[o.class]
		g.count, g.bytes = g.count - 1, g.bytes - r
		suspects[#suspects + 1] = {o = o, kind = "object", depth = 1, retained = r, what = label(o)}
		if all then
			visit(h:dominators(o), 2)
		end
	else
		if not wanted then
			wanted = {}
			for c, g in pairs(groups) do
				if c ~= "(system heap)" and g.count > 1 and g.bytes >= limit then
					wanted[c] = g
					nwanted = nwanted + 1
				end
			end
		end
		local g = wanted[o.class]
		if g and not g.first then
			g.first = o
			suspects[#suspects + 1] = {o = o, kind = "class", depth = 1, retained = g.bytes,
				what = g.count .. " x " .. o.class}
			nwanted = nwanted - 1
		end
		if nwanted == 0 then
			break
		end
	end
end
table.sort(suspects, function(a, b)
	if a.retained ~= b.retained then
		return a.retained > b.retained
	end
	return a.what < b.what
end)

-- The GC root kind of each root object, for the paths.
local root_kind = {}
for _, r in ipairs(h:roots()) do
	local id = r.object.object_id
	root_kind[id] = root_kind[id] or r.kind
end

-- children_of(o, kids): "Class xN (P%)" for the class of o's dominator
-- children (kids) that together retain the most (grouped as
-- `:dominators --by-class` does), or "(none)".
local function children_of(o, kids)
	local by = {}
	for k in kids:iter() do
		local c = k.class
		local e = by[c] or {n = 0, bytes = 0}
		by[c] = e
		e.n = e.n + 1
		e.bytes = e.bytes + k.retained_size
	end
	local best, bc
	for c, e in pairs(by) do
		if not best or e.bytes > best.bytes or (e.bytes == best.bytes and c < bc) then
			best, bc = e, c
		end
	end
	if not best then
		return "(none)"
	end
	return string.format("%s x%d (%.1f%%)", bc, best.n, pct(best.bytes, o.retained_size))
end

-- accumulation(o): the accumulation point under o, its depth below o ("N+"
-- when --max-depth stopped the descent), and its children.
local function accumulation(o)
	local depth = 0
	while true do
		local kids = h:dominators(o)
		local big = kids[1]
		local holds = big and big.retained_size > 0 and
			big.retained_size * 100 >= child_pct * o.retained_size
		if holds and depth < max_depth then
			o, depth = big, depth + 1
		else
			return o, holds and depth .. "+" or depth, children_of(o, kids)
		end
	end
end

local MAX_STEPS = 12 -- longer paths keep their first 3 and last 8 steps

local function path_of(o)
	local p, msg = h:path(o)
	if not p then
		return "(" .. msg .. ")"
	end
	-- runs of one class (a linked list) as one step "Class xN"
	local steps, last, n = {}, nil, 0
	local function flush()
		if last then
			steps[#steps + 1] = n > 1 and last .. " x" .. n or last
		end
	end
	for s in p:iter() do
		local c = name(s)
		if c == last then
			n = n + 1
		else
			flush()
			last, n = c, 1
		end
	end
	flush()
	if #steps > MAX_STEPS then
		local keep = {}
		for i = 1, 3 do
			keep[#keep + 1] = steps[i]
		end
		keep[#keep + 1] = string.format("(%d more)", #steps - MAX_STEPS + 1)
		for i = #steps - MAX_STEPS + 5, #steps do
			keep[#keep + 1] = steps[i]
		end
		steps = keep
	end
	local kind = #p > 0 and root_kind[p[1].object_id]
	return (kind and "[" .. kind .. "] " or "") .. table.concat(steps, " -> ")
end

local rows = {}
for rank, s in ipairs(suspects) do
	local acc, d, children = accumulation(s.o)
	rows[rank] = {
		rank = rank,
		suspect = s.what,
		kind = s.kind,
		depth = s.depth,
		retained_bytes = s.retained,
		heap_pct = pct(s.retained, reachable),
		accumulation = label(acc),
		acc_depth = d,
		acc_retained = acc.retained_size,
		acc_pct = pct(acc.retained_size, reachable),
		children = children,
		path = path_of(acc),
	}
end

heapsh.print_table(rows, {"rank", "suspect", "kind", "depth", "retained_bytes", "heap_pct",
	"accumulation", "acc_depth", "acc_retained", "acc_pct", "children", "path"})
if #rows == 0 then
	io.stderr:write(string.format("no object retains %g%% or more of the %d reachable bytes " ..
		"(try --threshold with a lower figure)\n", threshold, reachable))
end
