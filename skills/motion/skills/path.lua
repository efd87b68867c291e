-- path: a motion sequence with blending.
local cmd = require "stdlib.motion.command"

return morc.skill {
  name = "path",
  doc = [[runs a sequence of moves without stopping at points given an approximation radius
moves = { { "ptp", q }, { "lin", pose, blend = mm }, { "circ", via, pose }, { "spline", q1, q2, … }, … }
(degrees, mm; speed = % per move). A move with blend = r hands over to the next when the tool is r mm
from its end point: the corner is cut within about r and the robot does not stop there.
Measured: final_error and peak_error (deg; mm for prismatic joints), tool_error (mm), motion_time (s).]],
  positional = "moves",
  params = cmd.params {
    moves = { type = "table", list = true, doc = "the moves, in order" },
  },
  precondition = function(ctx, p) return cmd.precondition(ctx, p, p.moves) end,
  execute = function(ctx, p) return cmd.execute(ctx, p, p.moves, "path") end,
  evaluate = cmd.evaluate,
}
