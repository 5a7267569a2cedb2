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
and shallow bytes). The sets of objects are made by the query language
(`objects.group_by(...)`: one pass over the heap for the loaders, one for
the accounts), the class to account choice by this script;
the two must agree on every count, or the script stops with an error.

Limits: a snapshot knows which class an object has, not which code
allocated it, so an account here is "objects of these classes", not the
paper's "objects allocated by this module". Classes of one name defined by
several loaders are one class for an account. The accounts take one pass
through the C library's fnmatch, declared in the query language (`extern
"libc.so.6" fnmatch(...)`, so the session has a `fnmatch` afterwards);
without it, a pass each, a pattern other than "PREFIX*" then tested as a
list of class names (slow when it names hundreds of classes).
--]]

local USAGE = "usage: heapsh -l lua/classloaders.lua DUMP [PATTERN...]"

local h = heapsh.current()
if not h then
	error(USAGE .. "\n(no heap is open)", 0)
end

-- The script's own words: under `heapsh -l` the first is the dump (or a
-- JVM's pid); under :luafile it is not there.
local function script_args()
	local a = {}
	for i = 1, #arg do
		a[i] = arg[i]
	end
	local path = tostring(h):match("^<heap (.*): %d+ objects>$")
	if a[1] and (a[1] == path or a[1]:match("^%d+$")) then
		table.remove(a, 1)
	end
	return a
end

local patterns = script_args()
for _, p in ipairs(patterns) do
	if p:sub(1, 1) == "-" or p == "" then
		error("unknown option '" .. p .. "'\n" .. USAGE, 0)
	end
end

local function pct(part, whole)
	if whole == 0 then
		return 0.0
	end
	return math.floor(part * 1000 / whole + 0.5) / 10
end

-- query(text): the query's value, or a clear error.
local function query(text)
	local v, msg = h:query(text)
	if v == nil and msg then
		error("query failed: " .. msg .. "\n  " .. text, 0)
	end
	return v
end

-- A string literal of the query language.
local function lit(s)
	return '"' .. s:gsub('[\\"]', "\\%0"):gsub("\n", "\\n"):gsub("\t", "\\t") .. '"'
end

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
		e = {id = id, obj = l, classes = 0, instances = 0, shallow = 0}
		loaders[id] = e
		order[#order + 1] = e
	end
	e.classes = e.classes + 1
	e.instances = e.instances + c.count
	e.shallow = e.shallow + c.shallow
end

-- One pass: the objects of each loader's classes, as lists for h:retained.
for _, g in ipairs(query("objects.group_by([it | it.class.classloader.id])")) do
	local e = loaders[g.key]
	if not e or e.instances ~= g.count then
		error(string.format("internal: the query counts %d objects for loader id %s, the classes %s",
			g.count, tostring(g.key), e and tostring(e.instances) or "none"), 0)
	end
	e.retained = h:retained(g.items)
end

local rows = {}
table.sort(order, function(a, b)
	if (a.retained or 0) ~= (b.retained or 0) then
		return (a.retained or 0) > (b.retained or 0)
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
	rows[#rows + 1] = {kind = "loader", name = name, classes = e.classes, instances = e.instances,
		shallow_bytes = e.shallow, retained_bytes = e.retained or 0,
		heap_pct = pct(e.retained or 0, reachable),
		loader_retained = e.obj and e.obj.retained_size or nil}
end

---------------------------------------------------------------- accounts

-- How a class name matches, in Lua and in the query language (N is the
-- query's class name expression).
local N = "it.class.name"

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

-- The C library's fnmatch, declared once in the query language: false when
-- it cannot be (then each account takes a pass of its own).
local function declare_fnmatch()
	-- a declaration has no value: nil and a message is the failure
	local r = table.pack(h:query('extern "libc.so.6" fnmatch(string, string, int) : int'))
	return not (r[1] == nil and r[2]) and h:query('fnmatch("a*", "ab", 0)') == 0 and
		h:query('fnmatch("a*", "ba", 0)') == 1
end

-- F(pattern): 0 if the class name matches the fnmatch pattern, else 1; the
-- name is the lambda's local NAME.
local NAME = "hs_classloaders_name"
local function F(pattern)
	return "fnmatch(" .. lit(pattern) .. ", " .. NAME .. ", 0)"
end
local function fesc_lit(s)
	return (s:gsub("[%*%?%[%]\\]", "\\%0"))
end
local function fesc_glob(s)
	return (s:gsub("[%[%]\\]", "\\%0"))
end

-- prefix_range: "LIT*" as two string comparisons (no extern needed).
local function prefix_range(prefix)
	if prefix == "" then
		return "true"
	end
	local last = prefix:byte(-1)
	if last == 255 then
		return nil
	end
	local upper = prefix:sub(1, -2) .. string.char(last + 1)
	return N .. " >= " .. lit(prefix) .. " and " .. N .. " < " .. lit(upper)
end

-- names_expr: one equality per name (exact, slow for many names).
local function names_expr(names)
	local t = {}
	for _, n in ipairs(names) do
		t[#t + 1] = N .. " = " .. lit(n)
	end
	return #t > 0 and table.concat(t, " or ") or "false"
end

local accounts = {}
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

for k, p in ipairs(patterns) do
	local a = {pattern = p, pos = k}
	if p:find("[%*%?]") then
		local lp = glob_to_lua(p)
		a.match = function(n) return n:find(lp) ~= nil end
		a.weight = #p:gsub("[%*%?]", "")
		local prefix = p:match("^([^%*%?]*)%*$")
		a.expr = function(names) return prefix and prefix_range(prefix) or names_expr(names) end
		a.m = F(fesc_glob(p))
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
			a.expr = names_expr
			local t = {}
			for n in pairs(exact) do
				t[#t + 1] = F(fesc_lit(n))
			end
			table.sort(t)
			a.m = table.concat(t, " * ")
		else -- a package alone
			local pre = p .. "."
			a.match = function(n) return n:sub(1, #pre) == pre and not n:find(".", #pre + 1, true) end
			a.expr = names_expr
			a.m = "(1 - (1 - " .. F(fesc_lit(p) .. ".*") .. ") * " .. F(fesc_lit(p) .. ".*.*") .. ")"
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
for r, a in ipairs(ranked) do
	a.rank = r
end
local other = {pattern = "(other)", names = {}, classes = 0, instances = 0, shallow = 0}
for _, a in ipairs(accounts) do
	a.names, a.classes, a.instances, a.shallow = {}, 0, 0, 0
end
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
	acc.names[#acc.names + 1] = n
end
for _, c in ipairs(classes) do
	local a = account_of[c.name]
	a.classes = a.classes + 1
	a.instances = a.instances + c.count
	a.shallow = a.shallow + c.shallow
end

-- The objects of each account, as lists for h:retained. With fnmatch: one
-- pass, grouped by the rank of the first account that matches (1 + m1 +
-- m1*m2 + ..., each m 0 for a match and 1 for none; #accounts + 1 for
-- none at all). Without: a pass per account, its own test and no match of a
-- more specific account (those claim their classes first).
local function account_row(a, list)
	local n = list and #list or 0
	if n ~= a.instances then
		error(string.format("internal: the query finds %d objects for '%s', the classes %d",
			n, a.pattern, a.instances), 0)
	end
	local r = n > 0 and h:retained(list) or 0
	a.row = {kind = "account", name = a.pattern, classes = a.classes, instances = a.instances,
		shallow_bytes = a.shallow, retained_bytes = r, heap_pct = pct(r, reachable)}
end
if #accounts > 0 and declare_fnmatch() then
	-- [it | NAME <- it.class.name  M1 <- ...  M2 <- ...  ret 1 + M1 + M1 * M2 ...]
	local body, terms, prod = {NAME .. " <- " .. N}, {"1"}, {}
	for r, a in ipairs(ranked) do
		local m = "hs_classloaders_m" .. r
		body[#body + 1] = m .. " <- " .. a.m
		prod[r] = m
		terms[r + 1] = table.concat(prod, " * ")
	end
	body[#body + 1] = "ret " .. table.concat(terms, " + ")
	local lists = {}
	for _, g in ipairs(query("objects.group_by([it | " .. table.concat(body, "  ") .. "])")) do
		lists[g.key] = g.items
	end
	for r, a in ipairs(ranked) do
		account_row(a, lists[r])
	end
	account_row(other, lists[#ranked + 1])
elseif #accounts > 0 then
	local function own(a)
		return "(" .. a.expr(a.names) .. ")"
	end
	for _, a in ipairs(ranked) do
		local t = {own(a)}
		for r = 1, a.rank - 1 do
			t[#t + 1] = "not " .. own(ranked[r])
		end
		account_row(a, query("objects.filter([it | " .. table.concat(t, " and ") .. "])"))
	end
	local t = {}
	for _, a in ipairs(ranked) do
		t[#t + 1] = "not " .. own(a)
	end
	account_row(other, query("objects.filter([it | " .. table.concat(t, " and ") .. "])"))
end
for k = 1, #accounts do
	rows[#rows + 1] = accounts[k].row
end
if #accounts > 0 then
	rows[#rows + 1] = other.row
end

heapsh.print_table(rows, {"kind", "name", "classes", "instances", "shallow_bytes",
	"retained_bytes", "heap_pct", "loader_retained"})
