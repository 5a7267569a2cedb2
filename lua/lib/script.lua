--[[
lib/script.lua - what the ready scripts in lua/ share: reading their
options, percentages, cutting a sorted list to its top rows.

  local script = require("lib.script")

require finds it in ./lua/, next to the heapsh binary (lua/ of a build
tree) and in the installed share/heapsh/lua/ (docs/manual.md, "Scripting").
--]]

local M = {}

--[[
M.options(usage, spec [, words]) -> options, rest
  words  the script's words (default heapsh.args(): those after the dump)
  spec   option -> kind: "flag" (true when given), "percent" (the next word,
         a number from 0 to 100), "count" (the next word, a whole number
         >= 0); spec.words = true lets other words through (as rest, in
         order), else each is an error.
Returns the options given, by name without the leading dashes and with
'_' for '-' ("--max-depth" -> options.max_depth), and the other words. A
bad value or an unknown word raises an error naming it, followed by usage.
--]]
function M.options(usage, spec, words)
	words = words or heapsh.args()
	local got, rest, i = {}, {}, 1
	while i <= #words do
		local w = words[i]
		local kind = spec[w]
		local key = w:gsub("^%-%-", ""):gsub("%-", "_")
		if kind == "flag" then
			got[key] = true
		elseif kind == "percent" or kind == "count" then
			local v = tonumber(words[i + 1])
			if kind == "percent" and not (v and v >= 0 and v <= 100) then
				error(w .. " takes a percentage (0 to 100)\n" .. usage, 0)
			elseif kind == "count" and not (v and v >= 0 and v % 1 == 0) then
				error(w .. " takes a whole number\n" .. usage, 0)
			end
			got[key] = kind == "count" and math.tointeger(v) or v
			i = i + 1
		elseif spec.words and w ~= "" and w:sub(1, 1) ~= "-" then
			rest[#rest + 1] = w
		else
			error("unknown argument '" .. w .. "'\n" .. usage, 0)
		end
		i = i + 1
	end
	return got, rest
end

-- M.pct(part, whole) -> part as a percentage of whole, to one decimal (0 when whole is 0).
function M.pct(part, whole)
	if whole == 0 then
		return 0.0
	end
	return math.floor(part * 1000 / whole + 0.5) / 10
end

-- M.top(rows, n): keep the first n rows of the list (all of them when n is 0).
function M.top(rows, n)
	if n > 0 then
		for k = #rows, n + 1, -1 do
			rows[k] = nil
		end
	end
	return rows
end

return M
