--[[
leak_suspects.lua - leak suspects in the manner of Eclipse MAT, from Lua:
the rows of the shell's `:suspects` (src/engine/suspects.h), from
h:suspects(), for scripts that want to go on from there (see the end of this
file for an example that walks each suspect's path).

Usage:
  heapsh -l lua/leak_suspects.lua DUMP [--threshold PCT] [--child PCT]
  :luafile lua/leak_suspects.lua [OPTIONS]

  --threshold PCT  a suspect keeps at least PCT% of the reachable heap
                   (default 10)
  --child PCT      a dominator child keeping PCT% of its parent continues
                   the chain down to the accumulation point (default 80)

Output (heapsh.print_table, so `heapsh --format csv|json` applies), one row
per suspect, largest first, the columns of `:suspects` in CSV:
  rank                1, 2, ...
  description         one sentence: what piles up, how much, what holds it
                      and the field chain from a static field or a thread
  retained_bytes      what the suspect keeps alive (a group: its members
                      together; suspects listed on their own below it are
                      not counted)
  heap_pct            retained_bytes as a percentage of the reachable heap
  objects             how many objects pile up at the accumulation point
  accumulation_point  "0xID label" of the object where the memory fans out
  holder              "0xID label" of what holds the pile (the collection
                      whose backing array is the accumulation point)
  where               the field chain: "static LeakShop.BUS.listeners",
                      "Thread.threadLocals.table[*].value.auditTrail"
  path                the shortest path from a GC root to the accumulation
                      point through strong references, with field names

docs/leak-suspects.md says how suspects are found, grouped and described.
Android dumps: objects of the zygote and image heaps are never suspects.
--]]

local USAGE = "usage: heapsh -l lua/leak_suspects.lua DUMP [--threshold PCT] [--child PCT]"

local h = heapsh.current() or error(USAGE .. "\n(no heap is open)", 0)

local script = require("lib.script")
local opts = script.options(USAGE, {["--threshold"] = "percent", ["--child"] = "percent"})

local suspects = assert(h:suspects({threshold = opts.threshold, child = opts.child}))

local function label(o)
	return string.format("0x%x %s", o.object_id, o.label)
end

local rows = {}
for i, s in ipairs(suspects) do
	rows[i] = {
		rank = s.rank,
		description = s.description,
		retained_bytes = s.retained_bytes,
		heap_pct = string.format("%.1f", s.heap_pct),
		objects = s.objects,
		accumulation_point = label(s.accumulation_point),
		holder = label(s.holder),
		where = s.where,
		path = s.path_text,
	}
end

heapsh.print_table(rows, {"rank", "description", "retained_bytes", "heap_pct", "objects",
	"accumulation_point", "holder", "where", "path"})
if #rows == 0 then
	io.stderr:write(string.format("no leak suspects: nothing keeps %g%% or more of the " ..
		"reachable heap (try --threshold with a lower figure)\n", opts.threshold or 10))
end
