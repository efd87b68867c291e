-- ptp: point-to-point in joint space, all axes arriving together.
local cmd = require "stdlib.motion.command"

return morc.skill {
  name = "ptp",
  doc = [[moves the robot's joints to q (degrees; mm for prismatic joints) on a synchronised PTP: all axes start and arrive together
The profile is trapezoidal, or jerk-limited with ramp > 0; rigid-body feed-forward, monitored.
Measured: final_error and peak_error (deg; mm for prismatic joints), tool_error (mm), motion_time (s).]],
  positional = "q",
  params = cmd.params {
    q = { type = "vector", size = "joints", unit = "deg", doc = "target joint positions, one per joint (mm for prismatic joints)" },
    time_optimal = { type = "boolean", default = false, doc = "as fast as the joints' velocity, acceleration and torque limits allow (TOPP-RA with the robot's dynamics) along the same line" },
  },
  precondition = function(ctx, p)
    local robot = cmd.robot(ctx)
    local ok, why = robot:reachable(p.q)
    if not ok then return false, why end
    return cmd.precondition(ctx, p, { { "ptp", p.q } })
  end,
  execute = function(ctx, p) return cmd.execute(ctx, p, { { "ptp", p.q } }, "ptp") end,
  evaluate = cmd.evaluate,
}
