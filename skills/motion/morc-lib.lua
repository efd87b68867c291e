-- morc's own motion skills: `morc.lib.load "motion"` (the folder skills/ is in the library path).
return {
  name = "motion",
  version = "0.3.0",
  morc = ">=0.1",
  depends = {},
  doc = "Motion commands for the robot the engine runs on: ptp, lin, circ, home, path (blended sequences), topp (time-optimal through waypoints); move for any six position axes.",
}
