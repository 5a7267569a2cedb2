--[[
duplicate_strings.lua - java.lang.String objects with identical text: what
each text costs and what its copies waste (what String.intern() or a
deduplicating cache would give back).

Usage:
  heapsh -l lua/duplicate_strings.lua DUMP [--top N] [--min-count N] [--width N]
  :luafile lua/duplicate_strings.lua [OPTIONS]

  --top N        the N texts that waste the most (default 20; 0: all)
  --min-count N  texts with at least N copies (default 2)
  --width N      show at most N characters of a text (default 40)

Output (heapsh.print_table, so `heapsh --format csv|json` applies), one row
per text, most wasted bytes first (then most copies, then the text):
  text          the text, at most --width characters, "..." after a cut;
                control characters as \n, \t, \r, \xHH
  length        the text's length in characters
  count         String objects with this text
  copy_bytes    the bytes of one copy: the String and its value array
  total_bytes   the bytes of all copies (a value array shared by several
                copies counted once)
  wasted_bytes  total_bytes - copy_bytes: freed if one copy served all

How it decides: every instance of java.lang.String (subclasses cannot
exist) is read with its text (`o.text`) and its value array (`o.value`);
texts are compared exactly, whole (not only the shown part).

Limits: the texts of all Strings are held in Lua while the script runs
(memory about the size of the texts); a String of more than a million
characters is compared by its first million. Strings inside other
structures (char[] or byte[] used as text) are not considered.
--]]

local USAGE = "usage: heapsh -l lua/duplicate_strings.lua DUMP [--top N] [--min-count N] [--width N]"

local h = heapsh.current() or error(USAGE .. "\n(no heap is open)", 0)

local script = require("lib.script")
local opts = script.options(USAGE, {["--top"] = "count", ["--min-count"] = "count", ["--width"] = "count"})
local top, min_count, width = opts.top or 20, math.max(opts.min_count or 2, 1), opts.width or 40

local cls = h:class("java.lang.String")
if not cls then
	heapsh.print_table({}, {"text", "length", "count", "copy_bytes", "total_bytes", "wasted_bytes"})
	return
end

-- text -> {count, copy (bytes of the first copy), total, arrays = {id = true}}
local by_text = {}
for s in h:objects(cls) do
	local text = s.text or ""
	local e = by_text[text]
	local arr = s.value
	local asize = arr and arr.shallow_size or 0
	local ssize = s.shallow_size
	if not e then
		e = {count = 0, copy = ssize + asize, total = 0, arrays = {}}
		by_text[text] = e
	end
	e.count = e.count + 1
	e.total = e.total + ssize
	if arr then
		local id = arr.object_id
		if not e.arrays[id] then
			e.arrays[id] = true
			e.total = e.total + asize
		end
	end
end

-- show(text): at most width characters, control characters escaped.
local function show(text)
	local n = utf8.len(text)
	local cut = text
	if n and n > width then
		cut = text:sub(1, utf8.offset(text, width + 1) - 1) .. "..."
	elseif not n and #text > width then -- not UTF-8: cut bytes
		cut = text:sub(1, width) .. "..."
	end
	return (cut:gsub("[%c]", function(c)
		local named = {["\n"] = "\\n", ["\t"] = "\\t", ["\r"] = "\\r"}
		return named[c] or string.format("\\x%02X", c:byte())
	end))
end

local rows = {}
for text, e in pairs(by_text) do
	if e.count >= min_count then
		rows[#rows + 1] = {text = text, length = utf8.len(text) or #text, count = e.count,
			copy_bytes = e.copy, total_bytes = e.total, wasted_bytes = e.total - e.copy}
	end
end
table.sort(rows, function(a, b)
	if a.wasted_bytes ~= b.wasted_bytes then
		return a.wasted_bytes > b.wasted_bytes
	end
	if a.count ~= b.count then
		return a.count > b.count
	end
	return a.text < b.text
end)
script.top(rows, top)
for _, r in ipairs(rows) do
	r.text = show(r.text)
end
heapsh.print_table(rows, {"text", "length", "count", "copy_bytes", "total_bytes", "wasted_bytes"})
