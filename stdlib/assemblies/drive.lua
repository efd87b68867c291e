-- stdlib/assemblies/drive.lua — how an assembly drives the robot from a reference component
-- `source` (outputs q, qd, qdd): its position to the drives, its velocity as feed-forward where
-- the base takes it, and with `feed_forward` the model's torque for it (rnea, as "ff"), plus the
-- torque of the output `extra_tau` when given (e.g. an external force the drives should hold
-- against at once; "ff_sum" adds them).
local takes = require "stdlib.assemblies.base_inputs"

return function(a, robot, source, feed_forward, extra_tau)
  a:connect(source .. ".q", "robot.q_cmd")
  if takes("qd_ff") then a:connect(source .. ".qd", "robot.qd_ff") end
  if feed_forward then
    robot:add(a, "ff", "rnea")
    a:connect(source .. ".q", "ff.q")
    a:connect(source .. ".qd", "ff.qd")
    a:connect(source .. ".qdd", "ff.qdd")
    if extra_tau then
      a:add("ff_sum", "sum", { n = robot.dof, signs = "++" })
      a:connect("ff.tau", "ff_sum.u1")
      a:connect(extra_tau, "ff_sum.u2")
      a:connect("ff_sum.y", "robot.tau_ff")
    else
      a:connect("ff.tau", "robot.tau_ff")
    end
  end
end
