-- morc's own motion skills: `morc.lib.load "motion"` (the folder skills/ is in the library path).
return {
  name = "motion",
  version = "0.1.0",
  morc = ">=0.1",
  depends = {},
  doc = "Motion commands that work on any robot with position inputs (robot.q, robot.q_cmd): move.",
}
