-- lin: the tool on a straight line.
local cmd = require "stdlib.motion.command"

return morc.skill {
  name = "lin",
  doc = [[moves the tool in a straight line to a pose {x, y, z, a, b, c} (mm, ° roll-pitch-yaw) or { pos = {…}, rpy = {…} }
The orientation turns from start to target by the shortest rotation. Within the robot's Cartesian limits
and its joint limits (slower where a joint needs it); refused before moving when the line leaves the
workspace, crosses a singularity or needs another arm configuration.
Measured: final_error and peak_error (deg; mm for prismatic joints), tool_error (mm), motion_time (s).]],
  positional = "to",
  params = cmd.params {
    to = { type = "table", doc = "target pose of the tool" },
    time_optimal = { type = "boolean", default = false, doc = "as fast as the joints' velocity, acceleration and torque limits and the tool's speed limit allow (TOPP-RA with the robot's dynamics) along the same line" },
  },
  precondition = function(ctx, p) return cmd.precondition(ctx, p, { { "lin", p.to } }) end,
  execute = function(ctx, p) return cmd.execute(ctx, p, { { "lin", p.to } }, "lin") end,
  evaluate = cmd.evaluate,
}
