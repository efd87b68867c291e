-- Skills: params checked before anything moves, precondition → execute → evaluate, composition.
local T = require "morc.testing"

local runs = 0
local function hold_assembly(duration)
  local a = morc.assembly { "hold", duration = duration }
  a:add("c", "constant", { n = 6, value = 0 })
  a:add("p", "probe", { n = 6 })
  a:connect("c.y", "robot.q_cmd")
  a:connect("robot.q", "p.u")
  return a
end

local move = morc.skill {
  name = "move_test", doc = "moves all axes to q (test skill)\nsecond line",
  params = {
    q = { type = "vector", size = 6, unit = "rad", range = { -3, 3 }, doc = "target" },
    speed = { type = "number", unit = "%", default = 100, range = { 1, 100 } },
    mode = { type = "string", default = "joint", values = { "joint", "linear" } },
    reach = { type = "boolean", default = true },
  },
  positional = "q",
  precondition = function(ctx, p) return p.reach, "target not reachable" end,
  execute = function(ctx, p)
    runs = runs + 1
    ctx.data.moves = (ctx.data.moves or 0) + 1
    local a = morc.assembly { "move", duration = 0.05 }
    a:add("c", "constant", { n = 6, value = p.q })
    a:add("p", "probe", { n = 6 })
    a:connect("c.y", "robot.q_cmd")
    a:connect("robot.q", "p.u")
    local r = ctx.engine:run(a)
    local u = r.data["p.u"]
    r.final_error = math.abs(u[#u] - p.q[6])
    return r
  end,
  evaluate = function(ctx, p, r) return r.final_error < 1e-9, ("final error %.2g rad"):format(r.final_error) end,
}

T.test("a call runs precondition → execute → evaluate and returns a result", function()
  local r = move { q = { 0.1, 0, 0, 0, 0, 0.1 }, speed = 50 }
  T.eq(r.ok, true, r.reason)
  T.near(r.duration, 0.05, 1e-12, "duration")
  T.eq(r.final_error < 1e-9, true, "measured value")
  T.eq(r.params.speed, 50)
  T.eq(r.params.mode, "joint", "default filled")
  assert(tostring(r):find("^move_test ✓  0.05 s   final error"), tostring(r))
end)

T.test("the positional param may be given alone, as a list, with named params", function()
  T.eq(move({ 0, 0, 0, 0, 0, 0.2 }).ok, true)
  T.eq(move({ 0, 0, 0, 0, 0, 0.3, speed = 10 }).params.speed, 10)
  T.eq(move({ 0, 0, 0, 0, 0, 0 }, { mode = "linear" }).params.mode, "linear")
end)

T.test("bad params are errors naming the call site, skill and param, before anything runs", function()
  local before = runs
  local line = debug.getinfo(1, "l").currentline
  T.raises(function() move { q = { 0, 0, 0 } } end, "skills.lua:" .. (line + 1), "move_test: param 'q' must have 6 elements, got 3")
  T.raises(function() move { q = { 0, 0, 0, 0, 0, 9 } } end, "param 'q' element 6 = 9 rad is out of range [-3, 3] rad")
  T.raises(function() move { q = { 0, 0, 0, 0, 0, 0 }, speed = 150 } end, "param 'speed' = 150 % is out of range [1, 100] %")
  T.raises(function() move { q = { 0, 0, 0, 0, 0, 0 }, sped = 5 } end, "unknown key 'sped' in move_test's options; did you mean 'speed'?")
  T.raises(function() move({ 0, 0, 0, 0, 0, 0 }, { sped = 5 }) end, "unknown key 'sped' in move_test's options; did you mean 'speed'?")
  T.raises(function() move({ 0, 0, 0, 0, 0, 0 }, { colour = "red" }) end, "unknown key 'colour' in move_test's options; known: mode, q, reach, speed")
  T.raises(function() move { speed = 5 } end, "param 'q' is required")
  T.raises(function() move { q = "home" } end, "param 'q' must be a vector")
  T.raises(function() move { q = { 0, 0, 0, 0, 0, 0 }, mode = "circle" } end, "is not one of joint, linear")
  T.eq(runs, before, "nothing ran")
end)

T.test("a failed precondition runs nothing", function()
  local before = runs
  local r = move { q = { 0, 0, 0, 0, 0, 0 }, reach = false }
  T.eq(r.ok, false); T.eq(r.stage, "precondition"); T.eq(r.reason, "precondition: target not reachable")
  T.eq(runs, before)
  assert(tostring(r):find("✗", 1, true))
end)

T.test("an error in execute is caught with file:line", function()
  local broken = morc.skill { name = "broken", doc = "fails", execute = function(ctx, p) local x = nil; return x.y end }
  local r = broken()
  T.eq(r.ok, false); T.eq(r.stage, "execute")
  assert(r.reason:find("skills.lua:%d+:"), r.reason)
  assert(r.traceback:find("traceback", 1, true))
end)

T.test("skills compose and share ctx; durations add up", function()
  local seen
  local twice = morc.skill {
    name = "twice", doc = "moves twice",
    execute = function(ctx, p)
      local a = move { 0, 0, 0, 0, 0, 0.1 }
      local b = move { 0, 0, 0, 0, 0, 0 }
      seen = ctx.data.moves
      return { first = a.ok, second = b.ok }
    end,
  }
  local r = twice()
  T.eq(r.ok, true, r.reason)
  T.eq(seen, 2, "ctx.data shared")
  T.near(r.duration, 0.1, 1e-12)
  T.eq(r.first, true)
end)

T.test("schema errors point at the definition", function()
  T.raises(function() morc.skill { name = "x", doc = "d", params = { a = { type = "float" } }, execute = function() end } end, "param 'a' has type float")
  T.raises(function() morc.skill { name = "x", doc = "d", params = { a = { type = "number", default = 5, range = { 0, 1 } } }, execute = function() end } end, "default of x: param 'a' = 5")
  T.raises(function() morc.skill { name = "x", execute = function() end } end, "skills.lua:", "needs a doc string")
end)

T.test("skills() lists, help documents, a recording's path is in the result", function()
  local names = {}
  for _, s in ipairs(morc.skills()) do names[#names + 1] = s.name end
  T.eq(table.concat(names, ","), "broken,move_test,twice")
  local doc = morc.doc_of(move)
  assert(doc:find("speed         number     %    default 100 range [1, 100]", 1, true), doc)
  assert(doc:find("(required)", 1, true), doc)
  local dir = (os.getenv("CARGO_TARGET_TMPDIR") or "/tmp") .. "/morc-lua-skills"
  morc.record_dir = dir
  local rec = morc.skill { name = "rec", doc = "records", execute = function(ctx)
    local a = hold_assembly(0.01); a:record { "robot.q" }; return ctx.engine:run(a) end }
  local r = rec()
  T.eq(r.ok, true, r.reason)
  assert(r.recording and r.recording:find(dir, 1, true), tostring(r.recording))
  assert(tostring(r):find("recorded " .. r.recording, 1, true))
end)

T.test("the only required param is positional by default", function()
  local s = morc.skill { name = "pos", doc = "d", params = { q = { type = "vector" }, speed = { type = "number", default = 1 } },
    execute = function(ctx, p) return { n = #p.q } end }
  T.eq(s.positional, "q")
  T.eq(s({ 1, 2, 3 }).n, 3)
  local named = morc.skill { name = "named", doc = "d", params = { a = { type = "number" }, b = { type = "number" } }, execute = function() end }
  T.raises(function() named(1) end, "named: takes named params only")
end)

T.test("the async form: start, status, cancel, wait", function()
  local hold_still = morc.skill {
    name = "hold_still", doc = "runs an assembly until its duration ends (or forever)",
    params = { seconds = { type = "number", default = -1 } },
    execute = function(ctx, p)
      local a = morc.assembly "still"
      a:add("c", "constant", { n = 6, value = 0 })
      a:connect("c.y", "robot.q_cmd")
      return ctx.engine:run(a, p.seconds > 0 and { duration = p.seconds } or nil)
    end,
    evaluate = function(ctx, p, r) return r.ok, r.reason end,
  }
  T.raises(function() hold_still:start { seconds = "x" } end, "seconds")
  local h = hold_still:start {}
  T.eq(h:status(), "running")
  h:cancel()
  local r = h:wait()
  T.eq(r.ok, false)
  T.eq(h:status(), "done")
  local h2 = hold_still:start { seconds = 0.02 }
  local r2 = h2:wait()
  T.eq(r2.ok, true, r2.reason)
  T.near(r2.duration, 0.02, 1e-9, "duration")
end)

T.test("NaN and infinities in params are refused at the call, naming the param, as the positional one's are", function()
  local before = runs
  local q = { 0, 0, 0, 0, 0, 0 }
  T.raises(function() move(q, { speed = 0/0 }) end, "move_test: param 'speed' is NaN: give a finite number (%)")
  T.raises(function() move { q = q, speed = math.huge } end, "move_test: param 'speed' is inf: give a finite number (%)")
  T.raises(function() move { 0, 0, 0/0, 0, 0, 0 } end, "move_test: param 'q' element 3 is NaN: give finite numbers (rad)")
  local posed = morc.skill { name = "posed", doc = "takes a pose", params = { to = { type = "table" } }, execute = function() runs = runs + 1 end }
  T.raises(function() posed { to = { pos = { 0, -math.huge, 0 } } } end, "posed: param 'to' has -inf at .pos[2]: give finite numbers")
  T.eq(runs, before, "nothing ran")
end)

return T.summary()
