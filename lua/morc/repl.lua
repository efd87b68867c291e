-- REPL helpers: pretty printing of results and tab completion.
-- Loaded by the REPL (src/cli/repl.rs); returns { pretty = f, complete = f }.

local MAX_DEPTH, MAX_ITEMS, MAX_WIDTH = 3, 20, 100

local function has_tostring(v)
  local mt = getmetatable(v)
  return type(mt) == "table" and mt.__tostring ~= nil
end

local function is_identifier(k)
  return type(k) == "string" and k:match("^[%a_][%w_]*$") ~= nil
end

-- Keys sorted: numbers first (in order), then strings, then anything else by its text.
local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  local rank = { number = 1, string = 2 }
  table.sort(keys, function(a, b)
    local ra, rb = rank[type(a)] or 3, rank[type(b)] or 3
    if ra ~= rb then return ra < rb end
    if ra == 1 or ra == 2 then return a < b end
    return tostring(a) < tostring(b)
  end)
  return keys
end

-- A list of numbers (a vector) reads best on one line.
local function is_vector(t)
  local n = #t
  if n == 0 then return false end
  local count = 0
  for k, v in pairs(t) do
    count = count + 1
    if type(k) ~= "number" or type(v) ~= "number" then return false end
  end
  return count == n
end

local function scalar(v)
  if type(v) == "string" then return ("%q"):format(v) end
  if type(v) == "number" and math.type(v) == "float" then
    local text = ("%.6g"):format(v)
    -- Keep floats recognisable: 1.0, not 1.
    if text:match("^-?%d+$") then text = text .. ".0" end
    return text
  end
  return tostring(v)
end

local function pretty(v, indent, depth, seen)
  indent, depth, seen = indent or "", depth or 0, seen or {}
  if type(v) ~= "table" or has_tostring(v) then
    if type(v) == "table" or type(v) == "userdata" then return tostring(v) end
    return scalar(v)
  end
  if seen[v] then return "<cycle>" end
  if next(v) == nil then return "{}" end
  if depth >= MAX_DEPTH then return "{…}" end
  seen[v] = true
  if is_vector(v) then
    local parts = {}
    for i = 1, math.min(#v, MAX_ITEMS) do parts[i] = scalar(v[i]) end
    if #v > MAX_ITEMS then parts[#parts + 1] = ("… (%d)"):format(#v) end
    seen[v] = nil
    return "{ " .. table.concat(parts, ", ") .. " }"
  end
  local keys = sorted_keys(v)
  local inner = indent .. "  "
  local items = {}
  for i, k in ipairs(keys) do
    if i > MAX_ITEMS then
      items[#items + 1] = ("… %d more"):format(#keys - MAX_ITEMS)
      break
    end
    local key
    if type(k) == "number" and k == i then key = ""
    elseif is_identifier(k) then key = k .. " = "
    else key = "[" .. scalar(k) .. "] = " end
    items[#items + 1] = key .. pretty(v[k], inner, depth + 1, seen)
  end
  seen[v] = nil
  -- Short tables on one line, longer ones one entry a line.
  local one_line = "{ " .. table.concat(items, ", ") .. " }"
  if #one_line + #indent <= MAX_WIDTH and not one_line:find("\n") then return one_line end
  return "{\n" .. inner .. table.concat(items, ",\n" .. inner) .. "\n" .. indent .. "}"
end

-- The string keys of a table, following __index tables.
local function table_names(t, out, depth)
  if depth > 4 then return end
  for k in pairs(t) do
    if is_identifier(k) then out[k] = true end
  end
  local mt = getmetatable(t)
  if type(mt) == "table" and type(mt.__index) == "table" then table_names(mt.__index, out, depth + 1) end
end

-- The names a userdata answers to: its metatable's __index table or, when
-- __index is a generated function, the tables it closes over (fields and methods).
local function userdata_names(u, out)
  -- mlua protects userdata metatables (__metatable = false); debug sees through.
  local mt = (debug and debug.getmetatable or getmetatable)(u)
  if type(mt) ~= "table" then return end
  local index = mt.__index
  if type(index) == "table" then table_names(index, out, 0) return end
  if type(index) == "function" and debug and debug.getupvalue then
    for i = 1, 10 do
      local name, value = debug.getupvalue(index, i)
      if name == nil then break end
      if type(value) == "table" then table_names(value, out, 0) end
    end
  end
end

local keywords = { "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
  "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while" }

-- Completes the identifier chain at the end of `text` ("morc.as", "a:con", "pri").
-- Returns the byte offset (0-based) where the completed word starts, and the candidates.
local function complete(text)
  local chain = text:match("[%a_][%w_%.:]*$")
  if chain == nil then return #text, {} end
  local path, sep, word = chain:match("^(.*)([%.:])([%w_]*)$")
  local names, value = {}, nil
  if path == nil then
    word = chain
    table_names(_G, names, 0)
    for _, k in ipairs(keywords) do names[k] = true end
  else
    value = _G
    for part in path:gmatch("[^%.:]+") do
      local ok, next_value = pcall(function() return value[part] end)
      if not ok or next_value == nil then return #text, {} end
      value = next_value
    end
    if type(value) == "table" then
      table_names(value, names, 0)
    elseif type(value) == "userdata" then
      userdata_names(value, names)
    elseif type(value) == "string" then
      table_names(string, names, 0)
    end
  end
  -- After `:` only what can be called as a method: a function (a field such as robot.dof is
  -- not a method, nor robot.joints).
  local function callable(name)
    if sep ~= ":" then return true end
    local ok, v = pcall(function() return value[name] end)
    return ok and type(v) == "function"
  end
  local found = {}
  for name in pairs(names) do
    if name:sub(1, #word) == word and not name:match("^__") and callable(name) then found[#found + 1] = name end
  end
  table.sort(found)
  return #text - #word, found
end

--- reload() — the REPL's way of changing a controller on a live arm: the assembly started with
--- morc.engine:start(a) is prepared afresh (its Lua component modules read again from their
--- files) and swapped in at a tick boundary, no cycle missed. Typing `reload` alone does it too.
function reload()
  local old = morc.engine:swap()
  print(("reloaded '%s': the new code carries on from t = %.3f s (the old ran %d ticks)"):format(old.assembly, old.t_end, old.ticks))
end
morc.doc(reload, [[reload() — (REPL) prepares the assembly started with morc.engine:start(a) afresh, its Lua component
modules read again from their files, and swaps it in at a tick boundary with no missed cycle (engine:swap()).
Edit a controller's module, type reload, and the new code runs. Typing `reload` alone does the same.
Bumpless: time t goes on; each Lua component's state carries over (see morc.component's migrate); a first
command that would move a joint past its velocity or acceleration limit faults instead, and the robot holds.]])

return { pretty = pretty, complete = complete }
