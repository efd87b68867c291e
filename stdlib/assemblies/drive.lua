-- stdlib/assemblies/drive.lua — how an assembly drives the robot from a reference component
-- `source` (outputs q, qd, qdd): its position to the drives, its velocity as feed-forward where
-- the base takes it, and with `feed_forward` the model's torque for it (rnea, as "ff").
local takes = require "stdlib.assemblies.base_inputs"

return function(a, robot, source, feed_forward)
  a:connect(source .. ".q", "robot.q_cmd")
  if takes("qd_ff") then a:connect(source .. ".qd", "robot.qd_ff") end
  if feed_forward then
    robot:add(a, "ff", "rnea")
    a:connect(source .. ".q", "ff.q")
    a:connect(source .. ".qd", "ff.qd")
    a:connect(source .. ".qdd", "ff.qdd")
    a:connect("ff.tau", "robot.tau_ff")
  end
end
