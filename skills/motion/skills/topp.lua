-- topp: through joint waypoints as fast as the robot's limits and dynamics allow.
local cmd = require "stdlib.motion.command"

return morc.skill {
  name = "topp",
  doc = [[moves the joints through waypoints { q1, q2, … } (degrees; mm for prismatic joints) as fast as the robot allows
A natural spline from where the robot is through the points, timed by TOPP-RA within the joints' velocity
limits and 80 % of their torque limits through the robot's dynamics, friction included (acc < 100 % adds the
acceleration limits, scaled). ramp > 0 limits the jerk: the path's acceleration ramps over ramp seconds
instead of switching at once (the motion takes that much longer; every limit is checked on the result).
Measured: final_error and peak_error (deg; mm for prismatic joints), tool_error (mm), motion_time (s).]],
  positional = "points",
  params = cmd.params {
    points = { type = "table", list = true, doc = "the joint waypoints, in order (the robot's position comes first by itself)" },
  },
  precondition = function(ctx, p)
    if #p.points == 0 then return false, "points: give one waypoint at least, { { q° … }, … }" end
    local robot = cmd.robot(ctx)
    for i, q in ipairs(p.points) do
      local ok, why = robot:reachable(q)
      if not ok then return false, ("waypoint %d: %s"):format(i, why) end
    end
    p.time_optimal = true
    return cmd.precondition(ctx, p, { { "spline", table.unpack(p.points) } })
  end,
  execute = function(ctx, p)
    p.time_optimal = true
    return cmd.execute(ctx, p, { { "spline", table.unpack(p.points) } }, "topp")
  end,
  evaluate = cmd.evaluate,
}
