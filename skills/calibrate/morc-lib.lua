-- Geometric calibration of a robot (`morc.lib.load "calibrate"`; the folder skills/ is in the
-- library path): the poses to measure chosen for observability, the robot moved to each and the
-- tool measured (a tracker given as a Lua function, or a CSV of measurements made before), the
-- identifiable placement errors estimated and saved beside the robot's definition.
return {
  name = "calibrate",
  version = "0.1.0",
  morc = ">=0.1",
  depends = { motion = ">=0.2" },
  -- Reads the measurements of a CSV file wherever the lab keeps it.
  capabilities = { "io" },
  doc = "Geometric calibration: calibrate (choose poses, measure with a tracker function or read a CSV, fit, save).",
}
