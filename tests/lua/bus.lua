-- The EtherCAT bus from Lua: the simulated cell through the real master, an e-stop that
-- ends a run with the reason, engine:reset_faults() after release, F/T and analog ports.
local T = require "morc.testing"

morc.start_engine { bus = "sim", drives = 2 }
local engine = morc.engine
local bus = engine.bus

local function hold(name, seconds)
  local a = morc.assembly(name)
  a:add("q", "sine", { n = 2, amplitude = 0.05, frequency = 0.5 })
  a:connect("q.y", "robot.q_cmd")
  return engine:run(a, { duration = seconds })
end

T.test("the bus is there, with its devices' ports", function()
  T.eq(engine.base, "robot")
  assert(bus, "engine.bus on a bus engine")
  T.eq(bus:faulted(), false)
  local r = hold("move", 0.3)
  T.eq(r.outcome, "finished")
  assert(bus:cycles() > 300, "it cycled")
end)

T.test("an e-stop ends the run naming the reason; reset after release", function()
  bus:sim { estop = true }
  local r = hold("pressed", 0.2)
  T.eq(r.outcome, "fault")
  assert(r.reason:find("safety PLC inhibits motion — e-stop pressed", 1, true), r.reason)
  T.eq(bus:faulted(), true)
  local ok, why = engine:reset_faults()
  T.eq(ok, false)
  assert(why:find("fault reset failed", 1, true) and why:find("e-stop pressed", 1, true), why)
  bus:sim { estop = false }
  ok, why = engine:reset_faults()
  T.eq(ok, true, why)
  T.eq(hold("released", 0.2).outcome, "finished")
end)

T.test("force/torque and analog inputs on the base's ports", function()
  bus:sim { load = { 1, 2, 3, 0.1, 0.2, 0.3 }, analog_in = { 2.5 } }
  local a = morc.assembly "read"
  a:add("q", "sine", { n = 2, amplitude = 0.05, frequency = 0.5 })
  a:connect("q.y", "robot.q_cmd")
  local r = engine:run(a, { duration = 0.01 })
  T.eq(r.outcome, "finished")
  bus:bias()
  T.eq(hold("after bias", 0.01).outcome, "finished")
  T.raises(function() bus:sim { speed = 3 } end, "unknown setting speed")
end)

T.test("help(engine.bus) has its doc", function()
  assert(bus.__doc:find("bus:sim", 1, true))
end)

return T.summary()
