-- A mixed interpreter workload for cstrace's benchmarks: string building and
-- pattern matching, table churn with the garbage collector, sorting with a Lua
-- comparator (calls from C back into Lua), closures and recursion.
-- Usage: lua interp.lua [ROUNDS [SIZE]]   (SIZE: words per round, default 2000)
local rounds = tonumber(arg[1]) or 20
local size = tonumber(arg[2]) or 2000

local function words(n)
  local t = {}
  for i = 1, n do
    t[i] = string.format("w%05d_%s", (i * 7919) % 100000, string.rep("x", i % 7))
  end
  return t
end

local function count_patterns(t)
  local hits = 0
  for _, w in ipairs(t) do
    if w:match("^w%d%d[13579]") then hits = hits + 1 end
    local a, b = w:find("_x+")
    if a then hits = hits + (b - a) end
  end
  return hits
end

local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end

local function churn(n)
  local m = {}
  for i = 1, n do m["k" .. (i % 997)] = { i, tostring(i), { i * 2 } } end
  local s = 0
  for k, v in pairs(m) do s = s + v[1] + #k end
  return s
end

local total = 0
for r = 1, rounds do
  local t = words(size)
  table.sort(t, function(a, b) return a > b end)
  total = total + count_patterns(t) + fib(16) + churn(size * 3 // 2)
  local parts = {}
  for i = 1, size // 4 do parts[#parts + 1] = t[i]:upper():sub(2, 6) end
  total = total + #table.concat(parts, ",")
end
print(total)
