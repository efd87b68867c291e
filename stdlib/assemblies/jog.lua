-- stdlib/assemblies/jog.lua — the assembly that jogs a robot: the jog component drives the
-- robot's position inputs (with velocity and rigid-body feed-forward where the base takes them),
-- following what robot:jog or the REPL's jog mode ask of the robot's operator.
--
--   local jog = require "stdlib.assemblies.jog"
--   local a = jog(robot, { until_still = true })
local takes = require "stdlib.assemblies.base_inputs"

return function(robot, params)
  local a = morc.assembly { "jog" }
  a:add("jog", robot:component("jog"), params or {})
  a:connect("robot.q", "jog.q")
  a:connect("jog.q", "robot.q_cmd")
  if takes("qd_ff") then a:connect("jog.qd", "robot.qd_ff") end
  if takes("tau_ff") then
    robot:add(a, "ff", "rnea")
    a:connect("jog.q", "ff.q")
    a:connect("jog.qd", "ff.qd")
    a:connect("jog.qdd", "ff.qdd")
    a:connect("ff.tau", "robot.tau_ff")
  end
  return a
end
