--[[
collections.lua - empty and sparsely filled collections, and the bytes their
unused slots waste, per collection class.

Usage:
  heapsh -l lua/collections.lua DUMP [--threshold PCT] [--all]
  :luafile lua/collections.lua [OPTIONS]

  --threshold PCT  a collection is sparse when it is filled under PCT% of
                   its capacity (default 25)
  --all            also the classes with no empty or sparse instance

Output (heapsh.print_table, so `heapsh --format csv|json` applies), one row
per collection class (subclasses included, each under its own name), most
wasted bytes first, and a last row "total":
  class          the collection's class
  kind           the JDK class whose layout it has: the class itself or
                 its nearest superclass among those below
  instances      its instances
  empty          those of size 0
  sparse         those not empty and filled under the threshold
  unused_slots   the unused slots (capacity - size) of the empty and sparse
                 ones
  wasted_bytes   unused slots x the reference size, for the sparse ones;
                 for the empty ones, their whole backing array (its shallow
                 size; an array that other objects also reference, such as
                 the JDK's shared empty arrays, counts 0)

How it decides (the fields of the JDK's classes, JDK 8 to 21):
  java.util.ArrayList          size / elementData.length
  java.util.Vector             elementCount / elementData.length
  java.util.HashMap, LinkedHashMap   size / table.length
  java.util.HashSet, LinkedHashSet   its map's size / map.table.length
  java.util.ArrayDeque         (tail - head) mod elements.length / elements.length
  java.util.concurrent.ConcurrentHashMap       baseCount + the counterCells'
                               values / table.length
A table or array that is null (not allocated yet) is a capacity of 0: such a
collection is empty, and wastes nothing. The reference size (4 with
compressed oops, 8 without) is read from the size of an object array.

Limits: a HashMap's table is never more than 75% full by design, so even a
healthy map shows unused slots; the threshold is what tells sparse from
normal. Hash table entries (HashMap$Node) are not counted as waste. Other
collections (LinkedList, TreeMap, IdentityHashMap, Hashtable, ...) are not
examined.
--]]

local USAGE = "usage: heapsh -l lua/collections.lua DUMP [--threshold PCT] [--all]"

local h = heapsh.current() or error(USAGE .. "\n(no heap is open)", 0)

local script = require("lib.script")
local opts = script.options(USAGE, {["--threshold"] = "percent", ["--all"] = "flag"})
local threshold, all = opts.threshold or 25, opts.all or false

-- An int field, 0 when missing (a layout of another JDK).
local function int(o, name)
	local v = o:field(name)
	return math.type(v) == "integer" and v or 0
end

local function array(o, name)
	local v = o:field(name)
	if v and v.length then
		return v
	end
	return nil
end

-- Each kind: size(o), backing array(o) (or nil).
local function hashmap_size(m)
	return int(m, "size")
end
local function chm_size(m)
	local n = int(m, "baseCount")
	local cells = array(m, "counterCells")
	if cells then
		for k = 1, cells.length do
			local c = cells[k]
			if c then
				n = n + int(c, "value")
			end
		end
	end
	return n
end
local KINDS = {
	["java.util.ArrayList"] = {
		size = function(o) return int(o, "size") end,
		array = function(o) return array(o, "elementData") end},
	["java.util.Vector"] = {
		size = function(o) return int(o, "elementCount") end,
		array = function(o) return array(o, "elementData") end},
	["java.util.HashMap"] = {
		size = hashmap_size,
		array = function(o) return array(o, "table") end},
	["java.util.HashSet"] = {
		size = function(o)
			local m = o:field("map")
			return m and hashmap_size(m) or 0
		end,
		array = function(o)
			local m = o:field("map")
			return m and array(m, "table")
		end},
	["java.util.LinkedHashMap"] = "java.util.HashMap",
	["java.util.LinkedHashSet"] = "java.util.HashSet",
	["java.util.ArrayDeque"] = {
		size = function(o)
			local e = array(o, "elements")
			local n = e and e.length or 0
			return n > 0 and (int(o, "tail") - int(o, "head")) % n or 0
		end,
		array = function(o) return array(o, "elements") end},
	["java.util.concurrent.ConcurrentHashMap"] = {
		size = chm_size,
		array = function(o) return array(o, "table") end},
}

for name, k in pairs(KINDS) do
	if type(k) == "string" then
		KINDS[name] = KINDS[k]
	end
end

-- The kind of every class: itself or its nearest listed superclass.
local function kind_of(c)
	local depth = 0
	while c and depth < 100 do
		if KINDS[c.name] then
			return c.name
		end
		c, depth = c.super, depth + 1
	end
	return nil
end

-- The reference size, from an object array: align8(header + 4 + n x ref),
-- header 12 with compressed oops (ref 4), 16 without (ref 8).
local ref_size
local function note_ref_size(arr)
	if not ref_size and arr.kind == "object array" then
		ref_size = arr.shallow_size >= 24 + 8 * arr.length and 8 or 4
	end
	return ref_size
end

local rows = {}
local total = {class = "total", kind = "", instances = 0, empty = 0, sparse = 0, unused_slots = 0,
	wasted_bytes = 0}
for _, c in ipairs(h:classes()) do
	local kind = c.count > 0 and kind_of(c)
	if kind then
		local k = KINDS[kind]
		local r = {class = c.name, kind = kind:match("[^.]*$"), instances = c.count, empty = 0,
			sparse = 0, unused_slots = 0, wasted_bytes = 0}
		local sparse_slots = 0
		for o in h:objects(c) do
			local size, arr = k.size(o), k.array(o)
			local cap = arr and arr.length or 0
			if arr then
				note_ref_size(arr)
			end
			if size == 0 then
				r.empty = r.empty + 1
				r.unused_slots = r.unused_slots + cap
				-- only an array of this collection alone is its waste
				if arr and #arr:referrers() == 1 then
					r.wasted_bytes = r.wasted_bytes + arr.shallow_size
				end
			elseif size * 100 < threshold * cap then
				r.sparse = r.sparse + 1
				r.unused_slots = r.unused_slots + (cap - size)
				sparse_slots = sparse_slots + (cap - size)
			end
		end
		r.sparse_slots = sparse_slots
		if all or r.empty + r.sparse > 0 then
			rows[#rows + 1] = r
		end
	end
end
-- Sparse slots in bytes once the reference size is known.
for _, r in ipairs(rows) do
	r.wasted_bytes = r.wasted_bytes + r.sparse_slots * (ref_size or 4)
	for _, f in ipairs{"instances", "empty", "sparse", "unused_slots", "wasted_bytes"} do
		total[f] = total[f] + r[f]
	end
end
table.sort(rows, function(a, b)
	if a.wasted_bytes ~= b.wasted_bytes then
		return a.wasted_bytes > b.wasted_bytes
	end
	return a.class < b.class
end)
rows[#rows + 1] = total
heapsh.print_table(rows, {"class", "kind", "instances", "empty", "sparse", "unused_slots",
	"wasted_bytes"})
