-- The manifest of the example library: `morc lib info examples/libs/sweep` shows it.
return {
  name = "sweep",
  version = "1.0.0",
  morc = ">=0.1",
  depends = {},
  doc = [[Frequency sweeps of one axis: how fast can it follow?
A chirp on one axis of the robot, both signals probed; the skill reports the tracking bandwidth
(the frequency from which the tracking error exceeds a tolerance) and the largest error.]],
}
