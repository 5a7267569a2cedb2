--[[
classloaders.lua - memory per class loader and per memory account: the
"top components" view of a heap (Eclipse MAT), and the memory accounts of
"Aggregated accounting of memory usage in Java" (package patterns that
modules are charged by), taken for one heap snapshot.

Usage:
  heapsh -l lua/classloaders.lua DUMP [PATTERN...]
  :luafile lua/classloaders.lua [PATTERN...]

  PATTERN  a memory account: the objects whose classes it names.
           - a glob over full class names ('*' any run of characters, '?'
             one): 'java.util.*' (the package and its subpackages, as the
             paper's a.b.*), 'Order*', '*Node';
           - a plain name: the classes of that name as :histogram takes
             them ('Order', 'java.util.HashMap', 'HashMap.Node'), or, if no
             class has that name, the package alone without its subpackages
             (the paper's a.b): 'java.util'.
           Quote globs in the shell.

Output (heapsh.print_table, so `heapsh --format csv|json` applies): one row
per class loader that defined classes, largest retained first, then one row
per PATTERN in the order given, then "(other)": the objects of no account.
  kind             "loader" or "account"
  name             the loader: "0xID Class" and its name in parentheses
                   when it has one ("<bootstrap>" for the bootstrap loader);
                   the account: its pattern
  classes          classes it defined / classes the account charges
  instances        objects of those classes (class objects themselves are
                   instances of java.lang.Class, defined by the bootstrap
                   loader)
  shallow_bytes    their shallow sizes added up
  retained_bytes   what they retain together: the bytes freed if all of them
                   went away at once (h:retained on the list of them; not the
                   sum of their retained sizes)
  heap_pct         retained_bytes as a percentage of the reachable heap
  loader_retained  loaders: what the loader object itself retains

How it decides: an object is charged to the loader that defined its class.
Each class is charged to one account only, the most specific pattern that
names it (a plain name or package before any glob, then the one with the
most characters besides wildcards, then the earlier on the command line), as
the paper charges an allocation to the closest account: with 'java.util' and
'java.util.*', java.util.HashMap goes to the first and
java.util.concurrent.ConcurrentHashMap to the second;
the loader rows and the account rows each add up to the whole heap (counts
and shallow bytes). Each row's retained bytes are what all instances of the
classes it charges retain together (h:retained over them; the loaders in one
call, the accounts in another).

Limits: a snapshot knows which class an object has, not which code
allocated it, so an account here is "objects of these classes", not the
paper's "objects allocated by this module". Classes of one name defined by
several loaders are one class for an account.
--]]

local USAGE = "usage: heapsh -l lua/classloaders.lua DUMP [PATTERN...]"

local h = heapsh.current() or error(USAGE .. "\n(no heap is open)", 0)

local script = require("lib.script")
local _, patterns = script.options(USAGE, {words = true})

local pct = script.pct

local classes = h:classes()
local reachable = 0
for o in h:dominators():iter() do
	reachable = reachable + o.retained_size
end

---------------------------------------------------------------- loaders

local loaders, order = {}, {}
for _, c in ipairs(classes) do
	local l = c.loader
	local id = l and l.object_id or 0
	local e = loaders[id]
	if not e then
		e = {id = id, obj = l, members = {}, instances = 0, shallow = 0}
		loaders[id] = e
		order[#order + 1] = e
	end
	e.members[#e.members + 1] = c
	e.instances = e.instances + c.count
	e.shallow = e.shallow + c.shallow
end

-- retained_each(groups): each group's h:retained over its classes, in one call.
local function retained_each(groups)
	local sets = {}
	for j, g in ipairs(groups) do
		sets[j] = g.members
	end
	local bytes = {h:retained(table.unpack(sets))}
	for j, g in ipairs(groups) do
		g.retained = bytes[j]
	end
end
retained_each(order)

local rows = {}
table.sort(order, function(a, b)
	if a.retained ~= b.retained then
		return a.retained > b.retained
	end
	return a.id < b.id
end)
for _, e in ipairs(order) do
	local name = "<bootstrap>"
	if e.obj then
		name = tostring(e.obj)
		local n = e.obj:field("name")
		if n and n.text then
			name = name .. " (" .. n.text .. ")"
		end
	end
	rows[#rows + 1] = {kind = "loader", name = name, classes = #e.members, instances = e.instances,
		shallow_bytes = e.shallow, retained_bytes = e.retained,
		heap_pct = pct(e.retained, reachable),
		loader_retained = e.obj and e.obj.retained_size or nil}
end

---------------------------------------------------------------- accounts

local function glob_to_lua(p)
	return "^" .. p:gsub("[%^%$%(%)%%%.%[%]%+%-]", "%%%0"):gsub("%*", ".*"):gsub("%?", ".") .. "$"
end

-- tail_match as heapsh's class patterns: name ends with tail at a package or
-- nesting boundary, a '.' in tail also matching '$'.
local function tail_match(name, tail)
	if #tail > #name then
		return false
	end
	local s = #name - #tail
	for k = 1, #tail do
		local a, b = name:sub(s + k, s + k), tail:sub(k, k)
		if a ~= b and not (b == "." and a == "$") then
			return false
		end
	end
	local before = name:sub(s, s)
	return s == 0 or before == "." or before == "$"
end

local names_of = {} -- distinct class names
do
	local seen = {}
	for _, c in ipairs(classes) do
		if not seen[c.name] then
			seen[c.name] = true
			names_of[#names_of + 1] = c.name
		end
	end
end

-- Each pattern's test on a class name, and its weight (most specific first).
local accounts = {}
for k, p in ipairs(patterns) do
	local a = {pattern = p, pos = k}
	if p:find("[%*%?]") then
		local lp = glob_to_lua(p)
		a.match = function(n) return n:find(lp) ~= nil end
		a.weight = #p:gsub("[%*%?]", "")
	else
		local exact = {}
		for _, n in ipairs(names_of) do
			if n == p then
				exact[n] = true
			end
		end
		if not next(exact) then
			for _, n in ipairs(names_of) do
				if tail_match(n, p) then
					exact[n] = true
				end
			end
		end
		if next(exact) then
			a.match = function(n) return exact[n] == true end
		else -- a package alone
			local pre = p .. "."
			a.match = function(n) return n:sub(1, #pre) == pre and not n:find(".", #pre + 1, true) end
		end
		a.weight = 1e6 + #p -- a name or package beats every glob
	end
	accounts[k] = a
end

-- Each class name to the most specific account that matches it.
local ranked = {}
for k, a in ipairs(accounts) do
	ranked[k] = a
end
table.sort(ranked, function(a, b)
	if a.weight ~= b.weight then
		return a.weight > b.weight
	end
	return a.pos < b.pos
end)
local other = {pattern = "(other)"}
for _, a in ipairs(accounts) do
	a.members, a.instances, a.shallow = {}, 0, 0
end
other.members, other.instances, other.shallow = {}, 0, 0
local account_of = {}
for _, n in ipairs(names_of) do
	local acc = other
	for _, a in ipairs(ranked) do
		if a.match(n) then
			acc = a
			break
		end
	end
	account_of[n] = acc
end
for _, c in ipairs(classes) do
	local a = account_of[c.name]
	a.members[#a.members + 1] = c
	a.instances = a.instances + c.count
	a.shallow = a.shallow + c.shallow
end

if #accounts > 0 then
	accounts[#accounts + 1] = other
end
if #accounts > 0 then
	retained_each(accounts)
end
for _, a in ipairs(accounts) do
	rows[#rows + 1] = {kind = "account", name = a.pattern, classes = #a.members,
		instances = a.instances, shallow_bytes = a.shallow, retained_bytes = a.retained,
		heap_pct = pct(a.retained, reachable)}
end

heapsh.print_table(rows, {"kind", "name", "classes", "instances", "shallow_bytes",
	"retained_bytes", "heap_pct", "loader_retained"})
