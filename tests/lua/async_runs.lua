-- engine:start(a) runs an assembly without blocking the program: the handle
-- waits, cancels and tells the status.
local T = require "morc.testing"
local engine = morc.engine

local function endless()
  local a = morc.assembly "endless"
  a:add("s", "sine", { n = 6, amplitude = 0.01 })
  a:connect("s.y", "robot.q_cmd")
  return a
end

T.test("start, status, cancel, wait", function()
  local t0 = engine:tick()
  local h = engine:start(endless())
  T.eq(h:status(), "running")
  repeat until engine:tick() > t0 + 10 -- it is really cycling
  T.raises(function() engine:run(endless()) end, "busy running 'endless'")
  h:cancel()
  local r = h:wait()
  T.eq(r.outcome, "cancelled")
  assert(r.ticks > 0, "it ran")
  T.eq(h:status(), "done")
  T.raises(function() h:wait() end, "already waited for")
end)

T.test("a started run that ends by itself", function()
  local a = endless()
  local h = engine:start(a, { duration = 0.05 })
  local r = h:wait()
  T.eq(r.ok, true)
  T.eq(r.ticks, 50)
  -- The engine is free again.
  T.eq(engine:run(a, { duration = 0.01 }).ticks, 10)
end)

T.test("a started run that faults says so in its status before wait()", function()
  local broken = morc.component { name = "broken", outputs = { "y" },
    step = function(self, inp, out, t) if t >= 0.01 then error("sensor out of range") end end }
  local a = morc.assembly { "faults", duration = 1 }
  a:add("b", broken)
  local h = engine:start(a)
  while h:status() == "running" do end
  T.eq(h:status(), "faulted")
  assert(tostring(h):find("fault", 1, true), tostring(h))
  local r = h:wait()
  T.eq(r.outcome, "fault")
  assert(r.reason:find("sensor out of range", 1, true), r.reason)
  T.eq(h:status(), "done")
end)

return T.summary()
