-- Lua components: own Lua state, own thread, ports by name, errors with file:line.
local T = require "morc.testing"
local engine = morc.engine
local here = "tests/lua/lua_components.lua:"

local accumulate = morc.component {
  name = "accumulate", doc = "y = running sum of u·k",
  inputs = { "u" }, outputs = { "y", "v[2]" }, params = { k = 2 },
  init = function(self, out) self.sum = 0; out.y = -1 end,
  step = function(self, inp, out, t)
    self.sum = self.sum + inp.u * self.k
    out.y = self.sum
    out.v[1], out.v[2] = t, -t
  end,
  terminate = function(self) return { sum = self.sum } end,
}

T.test("a Lua component computes, sees time, and returns results", function()
  local a = morc.assembly { "lua", duration = 0.01 }
  a:add("one", "constant", { value = 1.5 })
  a:add("acc", accumulate, { k = 3 })
  a:add("p", "probe")
  a:add("pv", "probe", { n = 2 })
  a:connect("one.y", "acc.u")
  a:connect("acc.y", "p.u")
  a:connect("acc.v", "pv.u")
  local r = engine:run(a)
  T.eq(r.ok, true, r.reason)
  T.eq(r.ticks, 10, "ticks")
  local y = r.data["p.u"]
  for i = 1, 10 do T.near(y[i], 4.5 * i, 1e-12, "acc.y") end
  T.near(r.data["acc.sum"], 45, 1e-12, "result")
  local v = r.data["pv.u"]
  T.near(v[19], 0.009, 1e-15, "time at step 9"); T.near(v[20], -0.009, 1e-15)
end)

T.test("initial outputs are seen by delayed readers", function()
  local a = morc.assembly { "init", duration = 0.002 }
  a:add("one", "constant", { value = 1 })
  a:add("acc", accumulate)
  a:add("p", "probe")
  a:connect("one.y", "acc.u")
  a:connect("acc.y", "p.u", { delay = true })
  local r = engine:run(a)
  T.near(r.data["p.u"], { -1, 2 }, 0, "delayed acc.y")
end)

T.test("captured locals are refused with a way out", function()
  local gain = 3
  T.raises(function()
    morc.component { name = "bad", inputs = { "u" }, outputs = { "y" },
      step = function(self, inp, out) out.y = gain * inp.u end }
  end, here, "uses the local variable 'gain'", "self.gain")
end)

T.test("a Lua error in step faults the run with file:line, robot held", function()
  local broken = morc.component { name = "broken", inputs = { "u" }, outputs = { "y" },
    step = function(self, inp, out, t)
      if t >= 0.005 then error("sensor out of range") end
      out.y = inp.u
    end }
  local a = morc.assembly { "broken", duration = 1 }
  a:add("b", broken)
  a:connect("robot.q", "b.u") -- size mismatch would be caught; use a scalar source instead
  T.raises(function() engine:check(a) end, "type mismatch")
  a = morc.assembly { "broken", duration = 1 }
  a:add("one", "constant", { value = 1 })
  a:add("b", broken)
  a:connect("one.y", "b.u")
  local r = engine:run(a)
  T.eq(r.ok, false)
  T.eq(r.outcome, "fault")
  assert(r.reason:find("component 'b' (broken)", 1, true), r.reason)
  assert(r.reason:find("sensor out of range", 1, true), r.reason)
  assert(r.reason:find(here, 1, true), r.reason)
  T.eq(r.ticks, 5, "ticks completed before the fault (it came at t = 0.005 s)")
  assert(r.reason:find("at t = 0.005 s", 1, true), r.reason)
end)

T.test("a step that returns a string ends the assembly with that reason", function()
  local done = morc.component { name = "done_after", outputs = { "y" }, params = { n = 3 },
    step = function(self, inp, out, t)
      self.count = (self.count or 0) + 1
      if self.count >= self.n then return "target reached" end
    end }
  local a = morc.assembly "finish"
  a:add("d", done, { n = 4 })
  local r = engine:run(a)
  T.eq(r.ok, true)
  T.eq(r.reason, "d: target reached")
  T.eq(r.ticks, 4)
end)

T.test("an error in init stops preparation with the component named", function()
  local bad = morc.component { name = "bad_init", outputs = { "y" },
    init = function(self) error("calibration file missing") end,
    step = function() end }
  local a = morc.assembly "badinit"
  a:add("x", bad)
  T.raises(function() engine:run(a) end, "component 'x' (bad_init) failed to initialise", "calibration file missing")
end)

T.test("list and record parameters stay structured, in the component and in help", function()
  local weigh = morc.component {
    name = "weigh", doc = "y = the sum of each point's weight times its x",
    outputs = { "y" }, params = { gains = { k = 1, offset = 0 }, points = { { x = 1, w = 1 } } },
    step = function(self, inp, out)
      local y = self.gains.offset
      for _, p in ipairs(self.points) do y = y + self.gains.k * p.w * p.x end
      out.y = y
    end,
    terminate = function(self) return { first = self.points[1], gains = self.gains } end,
  }
  local a = morc.assembly { "weigh", duration = 0.001 }
  a:add("w", weigh, { gains = { k = 2, offset = 0.5 }, points = { { x = 1, w = 3 }, { x = 10, w = 0.5 } } })
  a:add("p", "probe")
  a:connect("w.y", "p.u")
  local r = engine:run(a)
  T.eq(r.ok, true, r.reason)
  T.near(r.data["p.u"][1], 0.5 + 2 * (3 + 5), 1e-12, "y")
  T.eq(r.data["w.first"].w, 3); T.eq(r.data["w.gains"].k, 2)
  -- A record where the kind has a list, or numbers where it has a record, is refused.
  T.raises(function() a:add("w2", weigh, { points = { k = 1 } }) end, "expected list, got record")
  T.raises(function() a:add("w3", weigh, { gains = { 1, 2 } }) end, "expected record, got vector[2]")
  local shown = {}
  local print0 = print
  print = function(s) shown[#shown + 1] = s end
  help(select(2, morc.register(weigh, "prog.weigh")))
  print = print0
  T.eq(shown[1]:find("param  gains        = { k = 1, offset = 0 }", 1, true) ~= nil, true, shown[1])
  T.eq(shown[1]:find("param  points       = { { w = 1, x = 1 } }", 1, true) ~= nil, true, shown[1])
end)

T.test("port declarations are checked", function()
  T.raises(function() morc.component { name = "p", inputs = { "u:complex" }, step = function() end } end, "unknown type 'complex'")
  T.raises(function() morc.component { name = "p", inputs = { "u[0]" }, step = function() end } end, "at least one element")
  T.raises(function() morc.component { name = "p" } end, "needs a step function")
end)

return T.summary()
