-- circ: the tool on a circular arc.
local cmd = require "stdlib.motion.command"

return morc.skill {
  name = "circ",
  doc = [[moves the tool on the circular arc from where it is through via {x, y, z} (mm) to the pose to
The orientation turns from start to target by the shortest rotation; refused before moving when the
three points are on one line or the arc leaves the workspace.
Measured: final_error and peak_error (deg; mm for prismatic joints), tool_error (mm), motion_time (s).]],
  params = cmd.params {
    via = { type = "table", doc = "a point of the arc (mm)" },
    to = { type = "table", doc = "target pose of the tool" },
    time_optimal = { type = "boolean", default = false, doc = "as fast as the joints' velocity and torque limits and the tool's speed limit allow (TOPP-RA with the robot's dynamics) along the same arc" },
  },
  precondition = function(ctx, p) return cmd.precondition(ctx, p, { { "circ", p.via, p.to } }) end,
  execute = function(ctx, p) return cmd.execute(ctx, p, { { "circ", p.via, p.to } }, "circ") end,
  evaluate = cmd.evaluate,
}
