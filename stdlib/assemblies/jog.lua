-- stdlib/assemblies/jog.lua — the assembly that jogs a robot: the jog component drives the
-- robot's position inputs (with velocity and rigid-body feed-forward where the base takes them),
-- following what robot:jog or the REPL's jog mode ask of the robot's operator.
--
--   local jog = require "stdlib.assemblies.jog"
--   local a = jog(robot, { until_still = true })
local takes = require "stdlib.assemblies.base_inputs"
local drive = require "stdlib.assemblies.drive"

return function(robot, params)
  local a = morc.assembly { "jog" }
  a:add("jog", robot:component("jog"), params or {})
  a:connect("robot.q", "jog.q")
  drive(a, robot, "jog", takes("tau_ff"))
  return a
end
