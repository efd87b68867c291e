-- morc.docs.luals: LuaLS annotation stubs (---@meta files) generated from the doc strings that
-- help() shows, so VS Code and Neovim complete and type-check robot programs and libraries.
--
-- Types come from the doc strings' signature lines, nothing else (no guessing). A line of a doc
-- string, leading blanks aside, is a signature line when it starts with one of
--   PATH(p: T, q?: T, ...: T) → R1, R2   a function; PATH is the value's own path (morc.lib.find),
--                                        or, in the doc of a function, any X.NAME with that function's
--                                        NAME (T.eq documents morc.testing.eq)
--   CLASS:method(p: T) → R               a method of objects of CLASS (assembly:add)
--   CLASS.name: T  /  CLASS.name?: T     a field of CLASS (result.ok); PATH.name: T types a module value
-- and the description follows after two blanks or " — ". Types are LuaLS's (string, number, integer,
-- boolean, table, function, any, nil, T?, T[], A|B, "literal", table<K, V>, fun(a: T): R, { k: T })
-- and the CLASS names of the doc strings. A second signature line of the same function is an overload.
-- A line showing a call with an untyped parameter (a:add(name, kind)) is prose, not a signature.
-- A documented function without a typed signature or a type that names no class is reported (the stubs still get written): the test requires none.

local morc = morc
local L = {}

local BUILTIN = {
  ["nil"] = true, any = true, boolean = true, string = true, number = true, integer = true, ["function"] = true,
  table = true, thread = true, userdata = true, lightuserdata = true, unknown = true, self = true, ["true"] = true, ["false"] = true,
}
local ARROW = "\u{2192}"
local DASH = " \u{2014}"
-- LuaLS class names: run_result → morc.RunResult, apart from a program's own classes and from
-- the values morc.assembly, morc.robot … (LuaLS convention: types are capitalised).
local function class_name(name)
  return "morc." .. name:gsub("^%l", string.upper):gsub("_(%w)", string.upper)
end

local function trim(s) return (s:gsub("^%s+", ""):gsub("%s+$", "")) end

-- Index just past the bracket that closes the one at `open` (s:sub(open, open) is an opening bracket),
-- skipping string literals; nil when it does not close.
local CLOSE = { ["("] = ")", ["{"] = "}", ["["] = "]", ["<"] = ">" }
local function scan(s, i, stop)
  -- Walks s from i at bracket depth 0 until stop(s, i) is true there; returns that index (or #s + 1).
  local depth, n = 0, #s
  while i <= n do
    local c = s:sub(i, i)
    if c == '"' then
      local j = s:find('"', i + 1, true)
      i = j or n
    elseif CLOSE[c] then
      depth = depth + 1
    elseif c == ")" or c == "}" or c == "]" or c == ">" then
      if depth == 0 then
        if stop(s, i) then return i end
      else
        depth = depth - 1
      end
    elseif depth == 0 and stop(s, i) then
      return i
    end
    i = i + 1
  end
  return n + 1
end

-- Splits s at the commas outside brackets and string literals.
local function split_top(s)
  local parts, start = {}, 1
  while start <= #s do
    local i = scan(s, start, function(t, k) return t:sub(k, k) == "," end)
    parts[#parts + 1] = trim(s:sub(start, i - 1))
    start = i + 1
  end
  return parts
end

-- Where a type ends: two blanks or " —" outside brackets, or the end of the line.
local function type_end(s, i)
  return scan(s, i, function(t, k) return t:sub(k, k + 1) == "  " or t:sub(k, k + #DASH - 1) == DASH end)
end

local function description(rest)
  rest = trim(rest)
  if rest:sub(1, #DASH - 1) == DASH:sub(2) then rest = trim(rest:sub(#DASH)) end
  return rest
end

--- Parses one line; returns nil, or { subject, method, field, optional, params, returns, type, desc }.
function L.signature(line)
  local s = line:gsub("^%s+", "")
  local subject = s:match("^[%a_][%w_]*")
  if not subject then return nil end
  local i = #subject + 1
  while true do
    local part = s:match("^%.[%a_][%w_]*", i)
    if not part then break end
    subject, i = subject .. part, i + #part
  end
  local method = s:match("^:([%a_][%w_]*)%(", i)
  if method then i = i + 1 + #method end
  if s:sub(i, i) == "(" then
    local close = scan(s, i + 1, function(t, k) return t:sub(k, k) == ")" end)
    if close > #s then return nil end
    local sig = { subject = subject, method = method, params = {}, returns = {}, untyped = {} }
    for _, p in ipairs(split_top(s:sub(i + 1, close - 1))) do
      local name, opt, ty = p:match("^([%a_][%w_]*)(%??)%s*:%s*(.+)$")
      if not name then
        name, ty = p:match("^(%.%.%.)%s*:%s*(.+)$")
        opt = ""
      end
      if name then
        sig.params[#sig.params + 1] = { name = name, optional = opt == "?", type = ty }
      elseif p ~= "" then
        sig.untyped[#sig.untyped + 1] = p
      end
    end
    -- Prose that shows a call (a:add(name, kind, { … })) is no signature: every parameter has a type.
    if #sig.untyped > 0 then return nil end
    local j = close + 1
    local after = s:match("^%s*" .. ARROW .. "%s*", j)
    if after then
      j = j + #after
      local e = type_end(s, j)
      sig.returns = split_top(s:sub(j, e - 1))
      j = e
    end
    sig.desc = description(s:sub(j))
    return sig
  end
  -- An index: CLASS[KEY]: T (data[string]: number), the type of every other key.
  local key = not method and s:match("^%[([%a_][%w_]*)%]: ", i)
  if key then
    local j = i + #key + 4
    local e = type_end(s, j)
    return { subject = subject .. "." .. "[" .. key .. "]", index = key, field = true, type = trim(s:sub(j, e - 1)), desc = description(s:sub(e)) }
  end
  -- A field: CLASS.name: T (the subject has a dot, so prose such as "kinds: …" is no field).
  if method or not subject:find(".", 1, true) then return nil end
  local opt, after = s:match("^(%??):( +)", i)
  if not opt then return nil end
  local j = i + #opt + 1 + #after
  local e = type_end(s, j)
  local ty = trim(s:sub(j, e - 1))
  if ty == "" then return nil end
  return { subject = subject, field = true, optional = opt == "?", type = ty, desc = description(s:sub(e)) }
end

-- Walks the type text, calling f(name) for each name in a type position (not a key, a parameter
-- name of fun(…), a string literal or `fun`); returns the text with each name replaced by f's result.
local function map_types(text, f)
  local out, i, n = {}, 1, #text
  while i <= n do
    local c = text:sub(i, i)
    if c == '"' or c == "'" then
      local j = text:find(c, i + 1, true) or n
      out[#out + 1] = text:sub(i, j)
      i = j + 1
    elseif c:match("[%a_]") then
      local name = text:match("^[%a_][%w_%.]*", i)
      local rest = text:sub(i + #name)
      if name == "fun" or rest:match("^%s*%??%s*:") then
        out[#out + 1] = name
      else
        out[#out + 1] = f(name)
      end
      i = i + #name
    elseif c == "[" and text:sub(i, i + 1) ~= "[]" then
      -- { [string]: T }: the key type is a type too; walk into it as usual.
      out[#out + 1] = c
      i = i + 1
    else
      out[#out + 1] = c
      i = i + 1
    end
  end
  return table.concat(out)
end
L.map_types = map_types

local function path_value(path)
  local v = _G
  for part in path:gmatch("[^%.]+") do
    if type(v) ~= "table" then return nil end
    v = v[part]
  end
  return v
end

-- Lua's own globals: LuaLS knows them; a doc string of morc's (pcall's, on error values) only adds classes.
local LUA_GLOBALS = {}
for name in ("assert collectgarbage dofile error getmetatable ipairs load loadfile next pairs pcall print rawequal rawget rawlen rawset require select setmetatable tonumber tostring type xpcall"):gmatch("%S+") do
  LUA_GLOBALS[name] = true
end

local function head(path) return path:match("^[^%.]+") end
local function last(path) return path:match("[^%.]+$") end
local function parent(path) return path:match("^(.*)%.[^%.]+$") end

local function comment(text)
  local out = {}
  for line in (text .. "\n"):gmatch("(.-)\n") do out[#out + 1] = "---" .. line end
  return table.concat(out, "\n")
end

-- LuaLS type text for a skill parameter's schema.
local SKILL_TYPES = { number = "number", integer = "integer", vector = "number[]", string = "string", boolean = "boolean", table = "table", ["function"] = "function" }
local function skill_param_type(s)
  if s.type == "string" and type(s.values) == "table" and #s.values > 0 then
    local lits = {}
    for i, v in ipairs(s.values) do lits[i] = ("%q"):format(v) end
    return table.concat(lits, "|")
  end
  return SKILL_TYPES[s.type] or "any"
end

-- Adds sig to a function's list; one with the same parameters as an earlier one completes it
-- (prose "engine:cancel()  ends the run" and a typed line "engine:cancel() → boolean" are one function).
local function same_params(a, b)
  if #a.params ~= #b.params then return false end
  for k, p in ipairs(a.params) do
    local q = b.params[k]
    if p.name ~= q.name or p.type ~= q.type or p.optional ~= q.optional then return false end
  end
  return true
end
local function add_sig(list, sig)
  for _, old in ipairs(list) do
    if same_params(old, sig) then
      if #old.returns == 0 then old.returns, old.where = sig.returns, sig.where end
      if (old.desc or "") == "" then old.desc = sig.desc end
      return
    end
  end
  list[#list + 1] = sig
end

local function sorted(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

local function is_ident(s)
  local KEYWORDS = { ["and"] = 1, ["break"] = 1, ["do"] = 1, ["else"] = 1, ["elseif"] = 1, ["end"] = 1, ["false"] = 1, ["for"] = 1, ["function"] = 1,
    ["goto"] = 1, ["if"] = 1, ["in"] = 1, ["local"] = 1, ["nil"] = 1, ["not"] = 1, ["or"] = 1, ["repeat"] = 1, ["return"] = 1, ["then"] = 1,
    ["true"] = 1, ["until"] = 1, ["while"] = 1 }
  return type(s) == "string" and s:match("^[%a_][%w_]*$") and not KEYWORDS[s]
end

-- The skills of every library in morc.lib.path (loaded as a program would, each in its sandbox),
-- and those loaded already; name → skill, and the library each came from.
local function all_skills()
  local found, from = {}, {}
  for _, s in ipairs(morc.skills()) do found[s.name] = s end
  for _, m in ipairs(morc.lib.list()) do
    if not m.error then
      local ok, lib = pcall(morc.lib.load, m.name)
      if ok then
        for name, s in pairs(lib.skills) do
          if not found[name] then found[name], from[name] = s, m.name end
        end
      end
    end
  end
  return found, from
end

--- The stubs: a list of { path, text } (path relative to the stub folder), and the problems found
--- (a documented function without a typed signature, an untyped parameter, a type naming no class).
function L.files()
  local problems = {}
  local function problem(fmt, ...) problems[#problems + 1] = fmt:format(...) end
  local sections = morc.docs.sections()

  -- 1. Every signature line of every doc string of the reference.
  local funcs, funcs_order = {}, {}   -- path → { sigs = {…}, doc, module }
  local values = {}                   -- module path → field sig (morc.engine: engine)
  local classes, class_order = {}, {} -- name → { fields = {…}, methods = { name → { sigs } }, order }
  local function class(name, entry)
    if not classes[name] then
      -- Documented where its first line is: the class's hover shows that doc's first line.
      classes[name] = { fields = {}, field_order = {}, methods = {}, method_order = {}, entry = entry }
      class_order[#class_order + 1] = name
    end
    return classes[name]
  end
  local function add_func(path, sig, doc)
    local f = funcs[path]
    if not f then
      f = { sigs = {}, doc = doc }
      funcs[path], funcs_order[#funcs_order + 1] = f, path
    end
    add_sig(f.sigs, sig)
    if doc and not f.doc then f.doc = doc end
  end
  for _, section in ipairs(sections) do
    for _, e in ipairs(section.entries) do
      if e.value ~= nil and type(e.doc) == "string" then
        local is_func = type(e.value) == "function"
        local typed = false
        for line in (e.doc .. "\n"):gmatch("(.-)\n") do
          -- A line may hold several signatures, each after the other's two blanks (a.x: T   a.y: T).
          local sigs, sig = {}, L.signature(line)
          while sig do
            sigs[#sigs + 1] = sig
            local next_sig = L.signature(sig.desc or "")
            if not next_sig then break end
            sig.desc, sig = "", next_sig
          end
          for _, sig in ipairs(sigs) do
            local where = ("doc of %s: %s"):format(e.name, trim(line))
            sig.where = where
            local global = _G[head(sig.subject)] ~= nil
            if sig.method then
              local c = class(sig.subject, e)
              if not c.methods[sig.method] then
                c.methods[sig.method] = { sigs = {} }
                c.method_order[#c.method_order + 1] = sig.method
              end
              add_sig(c.methods[sig.method].sigs, sig)
            elseif sig.field then
              if global then
                values[sig.subject] = values[sig.subject] or sig
              elseif sig.index then
                local c = class(sig.subject:match("^(.*)%.%["), e)
                local name = "[" .. sig.index .. "]"
                if not c.fields[name] then c.field_order[#c.field_order + 1] = name end
                c.fields[name] = c.fields[name] or sig
              else
                local c = class(parent(sig.subject), e)
                local name = last(sig.subject)
                if not c.fields[name] then c.field_order[#c.field_order + 1] = name end
                c.fields[name] = c.fields[name] or sig
              end
            elseif sig.subject == e.name or (is_func and not global and last(sig.subject) == last(e.name)) then
              add_func(e.name, sig, e.doc)
              typed = true
            elseif global then
              add_func(sig.subject, sig, nil)
            elseif sig.subject:find(".", 1, true) then
              -- X.f(…) of a class: a function stored in its objects (called with a dot).
              local c = class(parent(sig.subject), e)
              local name = last(sig.subject)
              if not c.methods[name] then
                c.methods[name] = { sigs = {}, dot = true }
                c.method_order[#c.method_order + 1] = name
              end
              add_sig(c.methods[name].sigs, sig)
            end
          end
        end
        if is_func and not typed and not LUA_GLOBALS[e.name] then
          problem("doc of %s: no typed signature line (e.g. %s(x: number) → string  what it does)", e.name, e.name)
        end
      end
    end
  end

  -- 2. Type text: class names get their prefix; a name that is neither a LuaLS type nor a class is a problem.
  local reported = {}
  local function ty(text, where)
    local unknown = {}
    local out = map_types(text, function(name)
      if BUILTIN[name] then return name end
      if classes[name] then return class_name(name) end
      unknown[#unknown + 1] = name
      return "any"
    end)
    if #unknown > 0 and not reported[where .. text] then
      reported[where .. text] = true
      problem("%s: type '%s' names %s, neither a Lua type nor a class of the doc strings (a CLASS:method or CLASS.field line defines one)", where, text, table.concat(unknown, ", "))
    end
    return out
  end
  local function param_lines(sig)
    local out = {}
    for _, p in ipairs(sig.params) do
      out[#out + 1] = ("---@param %s%s %s"):format(p.name, p.optional and "?" or "", ty(p.type, sig.where))
    end
    for _, r in ipairs(sig.returns) do out[#out + 1] = "---@return " .. ty(r, sig.where) end
    return out
  end
  local function fun_type(sig)
    local ps = {}
    for _, p in ipairs(sig.params) do ps[#ps + 1] = ("%s%s: %s"):format(p.name, p.optional and "?" or "", ty(p.type, sig.where)) end
    local rs = {}
    for _, r in ipairs(sig.returns) do rs[#rs + 1] = ty(r, sig.where) end
    return ("fun(%s)%s"):format(table.concat(ps, ", "), #rs > 0 and (": " .. table.concat(rs, ", ")) or "")
  end
  local function arg_names(sig)
    local names = {}
    for _, p in ipairs(sig.params) do names[#names + 1] = p.name end
    return table.concat(names, ", ")
  end
  -- A function's annotations: its doc, the first signature's params and returns, the others as overloads.
  local function function_block(doc, sigs)
    local out = {}
    if doc and doc ~= "" then out[#out + 1] = comment(doc) end
    for k = 2, #sigs do out[#out + 1] = "---@overload " .. fun_type(sigs[k]) end
    for _, l in ipairs(param_lines(sigs[1])) do out[#out + 1] = l end
    return out
  end

  -- 3. Module files: morc.lua (the global morc and the other documented globals) and one file per
  -- module that is only reachable with require (morc.testing).
  local modules = {} -- module path → { globals = bool, lines = {} }
  local module_order = {}
  local function module(path)
    if not modules[path] then
      modules[path] = { lines = {}, tables = {} }
      module_order[#module_order + 1] = path
    end
    return modules[path]
  end
  local function file_of(path)
    -- The module a path lives in: the global one when its parent table is reachable from _G.
    local p = parent(path)
    if p == nil or path_value(p) ~= nil then return "morc", nil end
    return p, p
  end
  local docs_of_tables = {}
  for _, section in ipairs(sections) do
    for _, e in ipairs(section.entries) do
      if type(e.value) == "table" and not getmetatable(e.value) then docs_of_tables[e.name] = e.doc end
    end
  end
  local function emit_tables(m, path, own)
    -- Assigns the module tables on the way to path (morc = {}, morc.lib = {}), once each.
    local parts, acc = {}, nil
    for part in path:gmatch("[^%.]+") do parts[#parts + 1] = part end
    for k = 1, #parts - 1 do
      acc = acc and (acc .. "." .. parts[k]) or parts[k]
      if not m.tables[acc] and not (own and acc == own) then
        m.tables[acc] = true
        if docs_of_tables[acc] then m.lines[#m.lines + 1] = comment(docs_of_tables[acc]) end
        m.lines[#m.lines + 1] = acc .. " = {}"
        m.lines[#m.lines + 1] = ""
      end
    end
  end
  module("morc")
  for _, path in ipairs(funcs_order) do
    local f = funcs[path]
    if LUA_GLOBALS[path] then goto continue end
    local name, own = file_of(path)
    local m = module(name)
    local local_path = own and ("M" .. path:sub(#own + 1)) or path
    if not own then emit_tables(m, path) end
    for _, l in ipairs(function_block(f.doc, f.sigs)) do m.lines[#m.lines + 1] = l end
    m.lines[#m.lines + 1] = ("function %s(%s) end"):format(local_path, arg_names(f.sigs[1]))
    m.lines[#m.lines + 1] = ""
    ::continue::
  end
  for _, path in ipairs(sorted(values)) do
    local sig = values[path]
    local m = module("morc")
    emit_tables(m, path)
    if sig.desc ~= "" then m.lines[#m.lines + 1] = comment(sig.desc) end
    m.lines[#m.lines + 1] = ("---@type %s%s"):format(ty(sig.type, sig.where), sig.optional and "?" or "")
    m.lines[#m.lines + 1] = path .. " = nil"
    m.lines[#m.lines + 1] = ""
  end

  -- 4. Skills of the libraries, as the globals morc.lib.use makes them: callable with a params
  -- table, or with the positional param alone and the rest in a second table.
  local skill_lines = { "---@meta", "-- The skills of the libraries in morc.lib.path; each is a global after morc.lib.use \"LIBRARY\".", "" }
  local found, from = all_skills()
  for _, name in ipairs(sorted(found)) do
    local s = found[name]
    if is_ident(name) then
      local cname = class_name("skill") .. "." .. name
      local req, opt = { "---@class " .. cname .. ".params" }, { "---@class " .. cname .. ".opts" }
      for _, pname in ipairs(sorted(s.params)) do
        local p = s.params[pname]
        local required = p.default == nil and not p.optional
        local text = (p.doc or "") .. (p.unit and (" (" .. p.unit .. ")") or "")
        text = text:gsub("\n", " ")
        req[#req + 1] = ("---@field %s%s %s %s"):format(pname, required and "" or "?", skill_param_type(p), text)
        opt[#opt + 1] = ("---@field %s? %s %s"):format(pname, skill_param_type(p), text)
      end
      for _, l in ipairs(req) do skill_lines[#skill_lines + 1] = l end
      skill_lines[#skill_lines + 1] = ""
      for _, l in ipairs(opt) do skill_lines[#skill_lines + 1] = l end
      skill_lines[#skill_lines + 1] = ""
      skill_lines[#skill_lines + 1] = comment(morc.doc_of(s) or s.doc)
      if from[name] then skill_lines[#skill_lines + 1] = ("---(library %s: morc.lib.use %q)"):format(from[name], from[name]) end
      local base = classes.skill and (": " .. class_name("skill")) or ""
      skill_lines[#skill_lines + 1] = ("---@class %s%s"):format(cname, base)
      local result = classes.skill_result and class_name("skill_result") or "table"
      skill_lines[#skill_lines + 1] = ("---@overload fun(p: %s.params): %s"):format(cname, result)
      if s.positional then
        skill_lines[#skill_lines + 1] = ("---@overload fun(%s: %s, p?: %s.opts): %s"):format(s.positional, skill_param_type(s.params[s.positional]), cname, result)
      end
      skill_lines[#skill_lines + 1] = name .. " = {}"
      skill_lines[#skill_lines + 1] = ""
    end
  end

  -- 5. Classes, one file each.
  local files = {}
  for _, name in ipairs(class_order) do
    local c = classes[name]
    local out = { "---@meta", "" }
    if c.entry and last(c.entry.name) == name then
      out[#out + 1] = comment(("%s\n(help(%s) says more)"):format(c.entry.doc:match("^[^\n]*"), c.entry.name))
    elseif c.entry then
      out[#out + 1] = comment(("Documented with %s: help(%s)."):format(c.entry.name, c.entry.name))
    end
    out[#out + 1] = "---@class " .. class_name(name)
    for _, fname in ipairs(c.field_order) do
      local sig = c.fields[fname]
      out[#out + 1] = ("---@field %s%s %s%s"):format(fname, sig.optional and "?" or "", ty(sig.type, sig.where), sig.desc ~= "" and (" " .. sig.desc) or "")
    end
    local var = "__" .. name
    out[#out + 1] = ("local %s = {}"):format(var)
    out[#out + 1] = ""
    for _, mname in ipairs(c.method_order) do
      local m = c.methods[mname]
      for _, l in ipairs(function_block(m.sigs[1].desc, m.sigs)) do out[#out + 1] = l end
      out[#out + 1] = ("function %s%s%s(%s) end"):format(var, m.dot and "." or ":", mname, arg_names(m.sigs[1]))
      out[#out + 1] = ""
    end
    files[#files + 1] = { path = "classes/" .. name .. ".lua", text = table.concat(out, "\n") }
  end

  local result = {}
  for _, name in ipairs(module_order) do
    local m = modules[name]
    local out = { "---@meta " .. name, "-- Generated by `morc doc --luals` from the doc strings help() shows; regenerate rather than edit.", "" }
    if name ~= "morc" then out[#out + 1] = "local M = {}" ; out[#out + 1] = "" end
    for _, l in ipairs(m.lines) do out[#out + 1] = l end
    out[#out + 1] = name == "morc" and "return morc" or "return M"
    result[#result + 1] = { path = name:gsub("%.", "/") .. ".lua", text = table.concat(out, "\n") .. "\n" }
  end
  result[#result + 1] = { path = "skills.lua", text = table.concat(skill_lines, "\n") .. "\n" }
  for _, f in ipairs(files) do
    f.text = f.text .. "\n"
    result[#result + 1] = f
  end
  return result, problems
end

return L
