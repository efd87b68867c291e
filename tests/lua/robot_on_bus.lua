-- A robot program through the real master: the KR 16-2's joints are the simulated drives of the
-- virtual EtherCAT segment (CiA 402, CSP), moving the same simulated arm; the robot definition
-- scales counts ⇄ joint angles. The same motion commands as on the direct simulation.
local T = require "morc.testing"
local kr16 = require "robots.kr16"
local motion = morc.lib.load("motion").skills

morc.start_engine { bus = "sim", robot = kr16 }
local engine, bus = morc.engine, morc.engine.bus

T.test("the engine runs the robot over the bus", function()
  assert(bus, "a bus engine")
  T.eq(morc.current_robot, kr16)
  assert(engine.description:find("KUKA KR 16%-2"), engine.description)
  T.eq(engine.inputs[1], "q_cmd")
end)

T.test("ptp, lin and home move the arm through the drives", function()
  local r = motion.ptp { 10, -80, 80, 0, 30, 0 }
  T.eq(r.ok, true, r.reason)
  assert(r.final_error < 0.01, tostring(r))
  local p = kr16:fk { 10, -80, 80, 0, 30, 0 }
  local l = motion.lin { pos = { p.pos[1], p.pos[2] + 150, p.pos[3] }, rpy = p.rpy }
  T.eq(l.ok, true, l.reason)
  assert(l.tool_error < 0.1, tostring(l))
  T.eq(motion.home().ok, true)
end)

T.test("an e-stop stops a motion naming the reason; after release and reset the robot moves again", function()
  bus:sim { estop = true }
  local r = motion.ptp { 0, -85, 85, 0, 40, 0 }
  T.eq(r.ok, false)
  assert(r.reason:find("e-stop pressed", 1, true), r.reason)
  bus:sim { estop = false }
  local ok, why = engine:reset_faults()
  T.eq(ok, true, why)
  local again = motion.ptp { 0, -85, 85, 0, 40, 0 }
  T.eq(again.ok, true, again.reason)
end)

return T.summary()
