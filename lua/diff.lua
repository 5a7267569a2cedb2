--[[
diff.lua - two or more dumps of the same program compared class by class:
instances, shallow bytes and retained bytes in each dump, what changed from
the first to the last, and which classes grew at every step: the leak
candidates of a series of snapshots (the thesis's section 1.5: "if the size
needed by all objects of a class is growing each dump, this class is a
candidate for a memory leak").

For two dumps, `heapsh diff OLD NEW` (docs/manual.md, "Comparing dumps") is
the built-in comparison: exact retained sizes, rows by package or merged
dominator path, --fail-if checks for CI and a versioned JSON schema. This
script stays for series of three dumps or more and their trends.

Usage:
  heapsh -l lua/diff.lua DUMP1 DUMP2 [DUMP3...] [--top N] [--all] [--no-retained]
  :luafile lua/diff.lua [DUMP1] DUMP2 [...] [OPTIONS]
      (in the shell, the current heap is the first dump unless DUMP1 is given)

  --top N         the first N classes of the order below (default 10; 0: all)
  --all           every class, changed or not (same as --top 0)
  --no-retained   leave out the retained sizes (each costs a pass over the heap)

Output (heapsh.print_table, so `heapsh --format csv|json` applies), one row
per class; for dump k (1 = the first on the command line):
  class          the class name (classes of one name in several loaders are
                 one row)
  count_k        instances in dump k
  shallow_k      their shallow bytes
  retained_k     what they retain together in dump k (h:retained on the
                 class); "-" with --no-retained
  count_delta    count in the last dump minus count in the first
  shallow_delta  the same for shallow bytes
  retained_delta the same for retained bytes
  trend          of the instance counts: "grows" (more at every step),
                 "shrinks" (fewer at every step), "flat" (the same in every
                 dump), "mixed"
  shallow_trend  the same of the shallow bytes (the thesis's criterion: it
                 also catches an array that grows while the count stays)
The order: the classes whose count grows, the most added instances first;
then those whose shallow bytes grow, the most added bytes first; then the
others, the largest change of shallow bytes (either way) first; then the
most shallow bytes in the last dump; then by name.
The dumps' numbers and files go to stderr first ("dump 1: FILE").

How it decides: each dump is opened on its own (heapsh.open; the first may
be the shell's heap), and every class's instances counted and added up by
name. Retained sizes are computed for the rows shown only: exact set
retention per class (as `:retained CLASS`).

Limits: classes are matched by name, so a class that was unloaded and loaded
again is one row; hidden classes (lambdas, whose names end in an address)
match nothing in another dump. Each dump is held in memory (and its
dominator tree built, or read from DUMP.hsidx) at once. Retained sizes are
computed for the rows shown, all of a dump's in one h:retained call (up to 64
classes per pass over the heap: about 0.5 s on a 2.5-million-object heap);
--top bounds them, --no-retained drops them.
--]]

local USAGE = "usage: heapsh -l lua/diff.lua DUMP1 DUMP2 [DUMP3...] [--top N] [--all] [--no-retained]"

-- Every word is the script's: the first is also the dump heapsh -l opened.
local script = require("lib.script")
local opts, paths = script.options(USAGE, {["--top"] = "count", ["--all"] = "flag",
	["--no-retained"] = "flag", words = true}, table.move(arg, 1, #arg, 1, {}))
local top, want_retained = opts.all and 0 or opts.top or 10, not opts.no_retained

-- The heaps: the shell's heap serves the dump it was opened from (or the
-- JVM, a pid first); without DUMP1 under :luafile, it is the first.
local cur = heapsh.current()
local cur_path = cur and tostring(cur):match("^<heap (.*): %d+ objects>$")
local heaps = {}
if cur and #paths == 1 and paths[1] ~= cur_path then
	table.insert(paths, 1, cur_path)
end
if #paths < 2 then
	error("diff needs two dumps or more\n" .. USAGE, 0)
end
local used_cur = false
for k, p in ipairs(paths) do
	if cur and not used_cur and (p == cur_path or (k == 1 and p:match("^%d+$"))) then
		heaps[k], used_cur = cur, true
	else
		local h, msg = heapsh.open(p)
		if not h then
			error("cannot open dump " .. k .. ": " .. msg, 0)
		end
		heaps[k] = h
	end
	io.stderr:write(string.format("dump %d: %s\n", k, p))
end
local n = #heaps

-- name -> {classes = {[k] = {class...}}, count = {}, shallow = {}}
local by_name, all_names = {}, {}
for k, h in ipairs(heaps) do
	for _, c in ipairs(h:classes()) do
		local e = by_name[c.name]
		if not e then
			e = {name = c.name, classes = {}, count = {}, shallow = {}}
			by_name[c.name] = e
			all_names[#all_names + 1] = e
		end
		e.classes[k] = e.classes[k] or {}
		table.insert(e.classes[k], c)
		e.count[k] = (e.count[k] or 0) + c.count
		e.shallow[k] = (e.shallow[k] or 0) + c.shallow
	end
end

local function trend(v)
	local up, down, same = true, true, true
	for k = 2, n do
		local a, b = v[k - 1], v[k]
		up = up and b > a
		down = down and b < a
		same = same and b == a
	end
	return up and "grows" or down and "shrinks" or same and "flat" or "mixed"
end

local rows = {}
for _, e in ipairs(all_names) do
	local r = {class = e.name, e = e}
	local counts, bytes = {}, {}
	for k = 1, n do
		counts[k], bytes[k] = e.count[k] or 0, e.shallow[k] or 0
		r["count_" .. k] = counts[k]
		r["shallow_" .. k] = bytes[k]
	end
	r.count_delta = r["count_" .. n] - r.count_1
	r.shallow_delta = r["shallow_" .. n] - r.shallow_1
	r.trend = trend(counts)
	r.shallow_trend = trend(bytes)
	rows[#rows + 1] = r
end
table.sort(rows, function(a, b)
	local ga, gb = a.trend == "grows", b.trend == "grows"
	if ga ~= gb then
		return ga
	end
	if ga and a.count_delta ~= b.count_delta then
		return a.count_delta > b.count_delta
	end
	local sa, sb = a.shallow_trend == "grows", b.shallow_trend == "grows"
	if sa ~= sb then
		return sa
	end
	if sa and a.shallow_delta ~= b.shallow_delta then
		return a.shallow_delta > b.shallow_delta
	end
	local da, db = math.abs(a.shallow_delta), math.abs(b.shallow_delta)
	if da ~= db then
		return da > db
	end
	local la, lb = a["shallow_" .. n], b["shallow_" .. n]
	if la ~= lb then
		return la > lb
	end
	return a.class < b.class
end)
script.top(rows, top)

-- Per dump, what the instances of each shown row's classes retain together:
-- one h:retained call with a set per row.
for k = 1, n do
	local sets, at = {}, {}
	for _, r in ipairs(rows) do
		local cls = r.e.classes[k]
		if want_retained and cls and (r.e.count[k] or 0) > 0 then
			sets[#sets + 1] = cls
			at[#sets] = r
		end
		r["retained_" .. k] = want_retained and 0 or "-"
	end
	if #sets > 0 then
		local bytes = {heaps[k]:retained(table.unpack(sets))}
		for j, r in ipairs(at) do
			r["retained_" .. k] = bytes[j]
		end
	end
end
for _, r in ipairs(rows) do
	r.retained_delta = want_retained and r["retained_" .. n] - r.retained_1 or "-"
end

local cols = {"class"}
for _, what in ipairs{"count", "shallow", "retained"} do
	for k = 1, n do
		cols[#cols + 1] = what .. "_" .. k
	end
end
for _, c in ipairs{"count_delta", "shallow_delta", "retained_delta", "trend", "shallow_trend"} do
	cols[#cols + 1] = c
end
heapsh.print_table(rows, cols)
for k = 1, n do
	if heaps[k] ~= cur then
		heaps[k]:close()
	end
end
