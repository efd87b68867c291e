-- stdlib/assemblies/motion.lua — the assembly a motion command runs: a trajectory of the
-- robot drives its position inputs, rigid-body feed-forward adds the model's torque, and a
-- monitor watches following error and limits.
--
--   local motion = require "stdlib.assemblies.motion"
--   local a = motion(robot, "lin", { target = pose }, { max_error = 1, record = true })
--
-- opts: name, feed_forward (default: when the base takes qd_ff and tau_ff), max_error (°,
-- default 2), record (true or a list of signal patterns), notes, trajectory (a component kind to
-- run as "traj" instead of the robot's `kind`: a library's reference, say). The trajectory is "traj", the
-- monitor "mon", feed-forward "ff". On the simulated robot the base takes position, velocity and
-- torque feed-forward; on the EtherCAT bus the drives take the position (CSP) and close their
-- own loops.
local takes = require "stdlib.assemblies.base_inputs"
local drive = require "stdlib.assemblies.drive"

return function(robot, kind, params, opts)
  opts = opts or {}
  local feed_forward = opts.feed_forward
  if feed_forward == nil then feed_forward = takes("tau_ff") end
  local a = morc.assembly { opts.name or kind }
  a:add("traj", opts.trajectory or robot:component(kind), params)
  robot:add(a, "mon", "monitor", { max_error = opts.max_error or 2 })
  a:connect("robot.q", "traj.start")
  a:connect("traj.q", "mon.q_ref")
  a:connect("robot.q", "mon.q")
  a:connect("robot.qd", "mon.qd")
  a:connect("robot.tau", "mon.tau")
  drive(a, robot, "traj", feed_forward)
  if opts.record then
    local signals = type(opts.record) == "table" and opts.record or { "robot.*", "traj.*", "mon.error" }
    signals.notes = opts.notes or kind
    a:record(signals)
  end
  return a
end
