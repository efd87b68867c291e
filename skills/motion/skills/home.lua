-- home: PTP to the robot's home position.
local cmd = require "stdlib.motion.command"

return morc.skill {
  name = "home",
  doc = [[moves the robot to its home position (robot.home, from its definition) by PTP
Measured: final_error and peak_error (deg; mm for prismatic joints), motion_time (s).]],
  params = cmd.params {},
  precondition = function(ctx, p) return cmd.precondition(ctx, p, { { "ptp", cmd.robot(ctx).home } }) end,
  execute = function(ctx, p) return cmd.execute(ctx, p, { { "ptp", cmd.robot(ctx).home } }, "home") end,
  evaluate = cmd.evaluate,
}
