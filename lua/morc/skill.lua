-- morc.skill: a robot command with a parameter schema, checked before anything moves,
-- and a precondition → execute → evaluate cycle that returns a result table.
-- Loaded by the runtime after the prelude (compiled in; `require "morc.skill"` gives it too).

local morc = morc
local S = {}

local registry = {}       -- name → skill; a redefinition replaces (reloading in the REPL)
local SkillMT = {}
local ResultMT = {}
local TYPES = { number = true, integer = true, vector = true, string = true, boolean = true, table = true, ["function"] = true }

-- file:line of the Lua code `level` frames above the caller, skipping C frames.
-- The user's line: the first with a line number outside morc's own Lua (lua/morc/), else the
-- first with one.
local function where(level)
  local first
  for l = level + 1, level + 16 do
    local info = debug.getinfo(l, "Sl")
    if not info then break end
    if info.currentline and info.currentline > 0 then
      local place = ("%s:%d"):format(info.short_src, info.currentline)
      if not info.short_src:find("^lua/morc/") then return place end
      first = first or place
    end
  end
  return first or "?"
end

local function show(v)
  if type(v) == "table" then
    local parts = {}
    for i = 1, math.min(#v, 8) do parts[i] = tostring(v[i]) end
    if #v > 8 then parts[#parts + 1] = "…" end
    return "{ " .. table.concat(parts, ", ") .. " }"
  elseif type(v) == "string" then
    return ("%q"):format(v)
  elseif v ~= v then
    return "NaN"   -- not "-nan" or "nan" as the C library has it
  end
  return tostring(v)
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

-- One line per parameter, for help(skill) and the generated reference.
local function describe_param(name, s)
  local ty = s.type == "vector" and s.size and ("vector[%s]"):format(s.size) or s.type
  local line = ("  %-13s %-10s %-4s"):format(name, ty, s.unit or "")
  if s.default ~= nil then line = line .. " default " .. show(s.default) end
  if s.range then line = line .. (" range [%s, %s]"):format(show(s.range[1]), show(s.range[2])) end
  if s.values then line = line .. " one of " .. table.concat(s.values, "|") end
  if s.default == nil and not s.optional then line = line .. " (required)" end
  if s.doc then line = line .. " — " .. s.doc end
  return line
end

local function full_doc(skill)
  local lines = { ("%s — %s"):format(skill.name, skill.doc) }
  local names = sorted_keys(skill.params)
  if #names > 0 then
    lines[#lines + 1] = ("params%s:"):format(skill.positional and (" (%s may be given alone: %s(value))"):format(skill.positional, skill.name) or "")
    for _, n in ipairs(names) do lines[#lines + 1] = describe_param(n, skill.params[n]) end
  else
    lines[#lines + 1] = "no params"
  end
  return table.concat(lines, "\n")
end

-- NaN and infinities are refused with the param that carries them, before anything moves:
-- a NaN compares false with every bound and would slip past range checks.
local function finite(x) return x == x and x ~= math.huge and x ~= -math.huge end

-- The path ("[2]", ".pos[1]") and value of the first NaN or infinity in a table param
-- (a pose, a list of moves), or nil.
local function non_finite_in(t, path, seen)
  seen = seen or {}
  if seen[t] then return nil end
  seen[t] = true
  for k, v in pairs(t) do
    local at = type(k) == "number" and ("%s[%s]"):format(path, tostring(k)) or ("%s.%s"):format(path, tostring(k))
    if type(v) == "number" and not finite(v) then return at, v end
    if type(v) == "table" and getmetatable(v) == nil then
      local inner, x = non_finite_in(v, at, seen)
      if inner then return inner, x end
    end
  end
end

-- Checks one value against its schema; returns the (copied) value or nil, error text.
local function check_value(skill, name, s, v)
  local function bad(fmt, ...)
    return nil, ("%s: param '%s' " .. fmt):format(skill.name, name, ...)
  end
  local unit = s.unit and (" " .. s.unit) or ""
  local function in_range(x, i)
    if not s.range then return true end
    local lo, hi = s.range[1], s.range[2]
    if type(lo) == "table" then lo = lo[i] end
    if type(hi) == "table" then hi = hi[i] end
    return (lo == nil or x >= lo) and (hi == nil or x <= hi), lo, hi
  end
  if s.type == "number" or s.type == "integer" then
    if type(v) ~= "number" then return bad("must be a number%s, got %s", unit, type(v)) end
    if not finite(v) then return bad("is %s: give a finite number%s", show(v), s.unit and (" (" .. s.unit .. ")") or "") end
    if s.type == "integer" then
      local i = math.tointeger(v)
      if not i then return bad("must be a whole number, got %s", show(v)) end
      v = i
    end
    local ok, lo, hi = in_range(v)
    if not ok then return bad("= %s%s is out of range [%s, %s]%s", show(v), unit, show(lo), show(hi), unit) end
    return v
  elseif s.type == "vector" then
    if type(v) ~= "table" then return bad("must be a vector (a list of numbers%s), got %s", unit, type(v)) end
    if s.size == "joints" then
      -- One per joint of the robot on the engine (any length on the ideal axes).
      local robot = morc.current_robot
      if robot and #v ~= robot.dof then
        return bad("has %d values, robot '%s' has %d joints: give one per joint (%s)", #v, robot.name, robot.dof, s.unit or "")
      end
    elseif s.size and #v ~= s.size then return bad("must have %d elements, got %d", s.size, #v) end
    local copy = {}
    for i = 1, #v do
      local x = v[i]
      if type(x) ~= "number" then return bad("element %d must be a number, got %s", i, type(x)) end
      if not finite(x) then return bad("element %d is %s: give finite numbers%s", i, show(x), s.unit and (" (" .. s.unit .. ")") or "") end
      local ok, lo, hi = in_range(x, i)
      if not ok then return bad("element %d = %s%s is out of range [%s, %s]%s", i, show(x), unit, show(lo), show(hi), unit) end
      copy[i] = x
    end
    return copy
  else
    if type(v) ~= s.type then return bad("must be a %s, got %s", s.type, type(v)) end
    if s.type == "table" then
      local at, x = non_finite_in(v, "")
      if at then return bad("has %s at %s: give finite numbers", show(x), at) end
    end
    if s.values then
      for _, allowed in ipairs(s.values) do
        if v == allowed then return v end
      end
      return bad("= %s is not one of %s", show(v), table.concat(s.values, ", "))
    end
    return v
  end
end

-- The arguments of a call, as named params: `skill { q = …, speed = 50 }`, `skill(value)`,
-- `skill { 1, 2, 3, speed = 50 }` (the list is the positional param) or `skill(value, { speed = 50 })`.
local function named_args(skill, arg, more)
  local named = {}
  local positional
  local ps = skill.positional and skill.params[skill.positional]
  local function foreign_keys(t)
    for k in pairs(t) do
      if type(k) == "string" and skill.params[k] == nil then return true end
    end
    return false
  end
  if ps and ps.type == "table" and type(arg) == "table" and getmetatable(arg) == nil and foreign_keys(arg) then
    -- A table param given alone with keys of its own (a pose { pos = …, rpy = … }): the whole table is the value.
    positional = arg
  elseif type(arg) == "table" and getmetatable(arg) == nil then
    for k, v in pairs(arg) do
      if type(k) == "string" then named[k] = v end
    end
    if #arg > 0 then
      -- One element alone is the value itself, unless the param is a list (path's moves): then a
      -- list of one.
      positional = (ps and (ps.type == "vector" or ps.list)) and { table.unpack(arg) } or (#arg == 1 and arg[1] or { table.unpack(arg) })
    end
  elseif arg ~= nil then
    positional = arg
  end
  if positional ~= nil then
    if not skill.positional then
      return nil, ("%s: takes named params only: %s { name = value, … }"):format(skill.name, skill.name)
    end
    if named[skill.positional] ~= nil then
      return nil, ("%s: param '%s' given twice (positionally and by name)"):format(skill.name, skill.positional)
    end
    named[skill.positional] = positional
  end
  if more ~= nil then
    if type(more) ~= "table" then return nil, ("%s: the second argument is a table of named params, got %s"):format(skill.name, type(more)) end
    for k, v in pairs(more) do named[k] = v end
  end
  return named
end

--- Checks a call's arguments against the skill's schema and fills defaults; raises on error.
local function check_params(skill, arg, more)
  local named, err = named_args(skill, arg, more)
  if not named then return nil, err end
  local unknown = {}
  for k in pairs(named) do
    if type(k) ~= "string" or not skill.params[k] then unknown[#unknown + 1] = tostring(k) end
  end
  if #unknown > 0 then
    table.sort(unknown)   -- the same key named whatever order pairs gives
    return nil, morc.unknown_key(unknown[1], sorted_keys(skill.params), ("in %s's options"):format(skill.name))
  end
  local p = {}
  for name, s in pairs(skill.params) do
    local v = named[name]
    if v == nil then v = s.default end
    if v == nil then
      if not s.optional then
        return nil, ("%s: param '%s' is required (%s)"):format(skill.name, name, describe_param(name, s):gsub("^%s+", ""))
      end
    else
      local value, verr = check_value(skill, name, s, v)
      if verr then return nil, verr end
      p[name] = value
    end
  end
  return p
end

-- Call context: shared by a skill and the skills it calls. ctx.engine forwards to
-- morc.engine and adds each run's duration and recording to every skill on the stack.
local stack = {}
local current_ctx

local function engine_proxy(async)
  local engine = morc.engine
  local proxy = {}
  function proxy.run(_, assembly, opts)
    local r
    if async and coroutine.isyieldable() then
      -- An async skill: start the run, hand its handle to the caller, and go on
      -- when resumed. The call context is put aside meanwhile, so that skills the
      -- program calls in between are not taken for nested ones.
      local run = engine:start(assembly, opts)
      local saved_ctx, saved_stack = current_ctx, stack
      current_ctx, stack = nil, {}
      coroutine.yield(run)
      current_ctx, stack = saved_ctx, saved_stack
      r = run:wait()
    else
      r = engine:run(assembly, opts)
    end
    for _, frame in ipairs(stack) do
      frame.duration = frame.duration + (r.duration or 0)
      for _, path in ipairs(r.recordings or {}) do frame.recordings[#frame.recordings + 1] = path end
    end
    return r
  end
  return setmetatable(proxy, {
    __index = function(_, key)
      local v = engine[key]
      if type(v) == "function" then
        return function(_, ...) return v(engine, ...) end
      end
      return v
    end,
    __tostring = function() return tostring(engine) end,
  })
end

local function new_context(async)
  return { engine = engine_proxy(async), robot = morc.current_robot, data = {} }
end

-- A failed result the program never looks at fails `morc check` and makes `morc run` exit 4:
-- its `ok` is kept out of the table and reading it (r.ok) marks the failure as handled.
local failed = setmetatable({}, { __mode = "k" })   -- failed results (check mode)
local unread = {}                                   -- failed results not looked at, in order
local function keep_failure(result, call_site)
  failed[result] = true
  rawset(result, "ok", nil)
  unread[#unread + 1] = { result = result, text = ("%s: %s"):format(call_site, tostring(result)) }
end
ResultMT.__index = function(r, key)
  if key == "ok" and failed[r] then
    for i, u in ipairs(unread) do
      if u.result == r then table.remove(unread, i) break end
    end
    return false
  end
end

--- The failures no one looked at (morc check, morc run): "file:line: skill ✗ … reason", in order.
function S.unread_failures()
  local list = {}
  for i, u in ipairs(unread) do list[i] = u.text end
  return list
end

local RESERVED = { ok = true, reason = true, duration = true, recording = true, recordings = true, skill = true, params = true, stage = true, summary = true, traceback = true }

local function merge(result, values)
  if type(values) ~= "table" then return end
  for k, v in pairs(values) do
    if type(k) == "string" and not RESERVED[k] and result[k] == nil then result[k] = v end
  end
end

-- precondition → execute → evaluate, each guarded: an error becomes ok = false with file:line.
local function run_skill(skill, p, call_site, async)
  local result = setmetatable({ skill = skill.name, ok = false, params = p, duration = 0 }, ResultMT)
  local top = current_ctx == nil
  if top then current_ctx = new_context(async) end
  local ctx = current_ctx
  local frame = { duration = 0, recordings = {} }
  stack[#stack + 1] = frame
  local function finish()
    stack[#stack] = nil
    if top then current_ctx = nil end
    result.duration = frame.duration
    result.recordings = frame.recordings
    result.recording = frame.recordings[#frame.recordings]
    if rawget(result, "ok") == false then keep_failure(result, call_site) end
    return result
  end
  local function guarded(stage, fn, ...)
    local packed = table.pack(xpcall(fn, debug.traceback, ...))
    if not packed[1] then
      local msg = tostring(packed[2])
      result.stage = stage
      result.reason = ("%s: %s failed: %s"):format(skill.name, stage, (msg:match("^[^\n]*")))
      result.traceback = msg
      -- The error itself: a program reacts to result.error.kind (see help(pcall)). A string
      -- error came back with the traceback appended (the handler is C, so Ctrl-C's line hook
      -- cannot fire in it): its first line is the error.
      result.error = type(packed[2]) == "string" and msg:match("^[^\n]*") or packed[2]
      return nil
    end
    return table.unpack(packed, 2, packed.n)
  end

  if skill.precondition then
    local packed = table.pack(guarded("precondition", skill.precondition, ctx, p))
    if result.stage then return finish() end
    if not packed[1] then
      result.stage = "precondition"
      result.reason = ("precondition: %s"):format(packed[2] or "not met")
      return finish()
    end
  end

  local r = guarded("execute", skill.execute, ctx, p)
  if result.stage then return finish() end
  result.value = r
  merge(result, r)
  if type(r) == "table" and r.ok == false then
    result.stage = "execute"
    result.reason = tostring(r.reason or "execute reported failure")
    return finish()
  end

  if skill.evaluate then
    local ok, text, measured = guarded("evaluate", skill.evaluate, ctx, p, r)
    if result.stage then return finish() end
    merge(result, measured)
    result.summary = text
    result.ok = ok and true or false
    if not ok then
      result.stage = "evaluate"
      result.reason = text or "evaluation failed"
    end
  else
    result.ok = true
  end
  return finish()
end

SkillMT.__index = SkillMT
SkillMT.__call = function(skill, arg, more)
  local call_site = where(2)
  local p, err = check_params(skill, arg, more)
  if not p then error(("%s: %s"):format(call_site, err), 0) end
  return run_skill(skill, p, call_site)
end
SkillMT.__tostring = function(skill) return ("skill '%s'"):format(skill.name) end

local AsyncMT = {}
AsyncMT.__index = AsyncMT

--- h:wait() — waits for an async skill to end and returns its result.
function AsyncMT:wait()
  while coroutine.status(self.co) ~= "dead" do
    local ok, v = coroutine.resume(self.co)
    if not ok then error(v, 0) end
    if coroutine.status(self.co) ~= "dead" then self.run = v else self.result = v end
  end
  return self.result
end

--- h:cancel() — ends the assembly the skill is running (the robot holds); h:wait() then returns its result.
function AsyncMT:cancel()
  self.cancelled = true
  morc.engine:cancel()
end

--- h:status() — "running" while the skill runs, "finished" when h:wait() will not block, "done" after it.
function AsyncMT:status()
  if coroutine.status(self.co) == "dead" then return "done" end
  local run = self.run and self.run:status()
  if run == "finished" or run == "faulted" or run == "cancelled" then return "finished" end
  return "running"
end

AsyncMT.__tostring = function(h) return ("%s (async, %s)"):format(h.skill, h:status()) end

--- skill:start(params) — the async form: checks the params, starts the skill and returns a
--- handle at its first assembly run: h:wait() → result, h:cancel(), h:status().
function SkillMT.start(skill, arg, more)
  local call_site = where(2)
  local p, err = check_params(skill, arg, more)
  if not p then error(("%s: %s"):format(call_site, err), 0) end
  if current_ctx ~= nil then error(("%s: start a skill asynchronously from the program, not from inside a skill"):format(call_site), 0) end
  local h = setmetatable({ skill = skill.name }, AsyncMT)
  h.co = coroutine.create(function() return run_skill(skill, p, call_site, true) end)
  local ok, v = coroutine.resume(h.co)
  if not ok then error(v, 0) end
  if coroutine.status(h.co) == "dead" then h.result = v else h.run = v end
  return h
end

ResultMT.__tostring = function(r)
  -- rawget: printing a result is not looking at whether it failed (see keep_failure).
  local ok = rawget(r, "ok")
  local line = ("%s %s  %.3g s"):format(r.skill, ok and "✓" or "✗", r.duration or 0)
  if ok then
    if r.summary and r.summary ~= "" then line = line .. "   " .. r.summary end
  else
    line = line .. "   " .. tostring(r.reason)
  end
  if r.recording then line = line .. "   recorded " .. r.recording end
  return line
end

--- morc.skill { name, doc, params, precondition, execute, evaluate } — defines a skill (see help(morc.skill)).
function S.skill(def)
  local site = where(2)
  local function fail(fmt, ...) error(("%s: morc.skill: " .. fmt):format(site, ...), 0) end
  if type(def) ~= "table" then fail("expects a table { name, doc, params, precondition, execute, evaluate }") end
  if type(def.name) ~= "string" or def.name == "" then fail("a skill needs a name: morc.skill { name = \"ptp\", … }") end
  if type(def.doc) ~= "string" or def.doc == "" then fail("skill '%s' needs a doc string: doc = \"what it does\"", def.name) end
  if type(def.execute) ~= "function" then fail("skill '%s' needs execute = function(ctx, p) … end", def.name) end
  for _, k in ipairs({ "precondition", "evaluate" }) do
    if def[k] ~= nil and type(def[k]) ~= "function" then fail("skill '%s': %s must be a function", def.name, k) end
  end
  local params = {}
  for name, s in pairs(def.params or {}) do
    if type(name) ~= "string" or type(s) ~= "table" then fail("skill '%s': params is a table name = { type = …, … }", def.name) end
    if not TYPES[s.type] then
      fail("skill '%s': param '%s' has type %s; use one of number, integer, vector, string, boolean, table, function", def.name, name, tostring(s.type))
    end
    if s.range and (type(s.range) ~= "table" or #s.range ~= 2) then fail("skill '%s': param '%s': range is { lo, hi }", def.name, name) end
    params[name] = s
  end
  local skill = setmetatable({
    name = def.name, doc = def.doc, params = params, origin = site,
    precondition = def.precondition, execute = def.execute, evaluate = def.evaluate,
  }, SkillMT)
  -- Defaults must pass their own schema: a wrong default would fail every call.
  for name, s in pairs(params) do
    if s.default ~= nil then
      local _, err = check_value(skill, name, s, s.default)
      if err then fail("default of %s", err) end
    end
  end
  -- The param that may be given alone: declared, else the only one, else the only required one.
  local names, required = sorted_keys(params), {}
  for _, n in ipairs(names) do
    if params[n].default == nil and not params[n].optional then required[#required + 1] = n end
  end
  if def.positional then
    if not params[def.positional] then fail("skill '%s': positional = '%s' is not one of its params", def.name, def.positional) end
    skill.positional = def.positional
  elseif #names == 1 then
    skill.positional = names[1]
  elseif #required == 1 then
    skill.positional = required[1]
  end
  registry[skill.name] = skill
  morc.doc(skill, full_doc(skill))
  return skill
end

--- The loaded skills, sorted by name.
function S.list()
  local list = {}
  for _, name in ipairs(sorted_keys(registry)) do list[#list + 1] = registry[name] end
  return list
end

--- One line per loaded skill: name — first line of its doc.
function S.summary()
  local lines = {}
  for _, s in ipairs(S.list()) do lines[#lines + 1] = ("%-12s — %s"):format(s.name, s.doc:match("^[^\n]*")) end
  if #lines == 0 then return "no skills loaded (morc.lib.load \"name\" loads a library's skills)" end
  return table.concat(lines, "\n")
end

morc.skill = S.skill
morc.skills = S.list
function skills() print(S.summary()) end

morc.doc(morc.skill, [[morc.skill { name, doc, params, precondition, execute, evaluate, positional } — defines a skill, a callable robot command.
  params       = { q = { type = "vector", size = 6, unit = "deg", default = {…}, range = { lo, hi }, doc = "…" },
                   speed = { type = "number", unit = "%", default = 100, range = { 1, 100 } } }
                 types: number, integer, vector (size: a count, or "joints": one per joint of the robot on
                 the engine), string (values = {…}), boolean, table, function;
                 a param without a default is required unless optional = true; a table param with
                 list = true is a list even given one element (path { { "lin", pose } })
  precondition = function(ctx, p) return ok, reason end          -- false: nothing runs, result.ok = false
  execute      = function(ctx, p) return ctx.engine:run(a) end     -- a result table; its fields are measured values
  evaluate     = function(ctx, p, r) return ok, text [, measured] end
  positional   = "q"   the param given alone (default: the only param, else the only required one)
ctx = { engine, robot, data } is shared with the skills a skill calls. Calling it — skill { … }, skill(value),
skill(value, { speed = 50 }) — checks params (errors name the skill and param, before anything moves), then runs
precondition → execute → evaluate; errors inside are caught. The result: ok, reason, stage (where it failed),
error (the error caught, or the run's r.error: error.kind, see help(pcall)), duration (s of assembly runs), recording (path of the last recording), summary (evaluate's text), value
(execute's return) and the measured values; tostring(result) is one line.
The async form, skill:start { … }, checks the params the same way and returns at the skill's first assembly run:
a handle h; h:cancel() stops it (the robot holds). Their types:
  morc.skill(def: skill_def) → skill
  skill_def.name: string   skill_def.doc: string   skill_def.params?: table<string, skill_param>   skill_def.positional?: string
  skill_def.precondition?: fun(ctx: skill_ctx, p: table): boolean, string?
  skill_def.execute: fun(ctx: skill_ctx, p: table): any
  skill_def.evaluate?: fun(ctx: skill_ctx, p: table, r: any): boolean, string?, table?
  skill_param.type: "number"|"integer"|"vector"|"string"|"boolean"|"table"|"function"   skill_param.size?: integer|"joints"
  skill_param.unit?: string   skill_param.default?: any   skill_param.range?: table   skill_param.values?: string[]
  skill_param.optional?: boolean   skill_param.doc?: string
  skill_ctx.engine: engine   skill_ctx.robot: robot?   skill_ctx.data: data?
  skill:start(p: any, more?: table) → skill_handle   skill.name: string   skill.doc: string
  skill.params: table<string, skill_param>   skill.positional: string?
  skill_handle:wait() → skill_result   skill_handle:cancel()   skill_handle:status() → "running"|"finished"|"done"
  skill_result.ok: boolean   skill_result.reason: string?   skill_result.stage: string?   skill_result.error: error_value|string?
  skill_result.duration: number   skill_result.recording: string?   skill_result.recordings: string[]
  skill_result.summary: string?   skill_result.value: any   skill_result.skill: string   skill_result.params: table
  skill_result[string]: any]])
morc.doc(morc.skills, "morc.skills() → skill[] — the loaded skills (skill objects, with name, doc and params), sorted by name.")
morc.doc(skills, "skills() — prints the loaded skills, one line each: name — doc.")

return S
