-- Dynamic identification of a robot (`morc.lib.load "identify"`; the folder skills/ is in the
-- library path): an exciting trajectory (a Fourier series per joint, optimised for the condition
-- number of the base regressor within the joints' limits) runs on the robot and is recorded; the
-- base parameters are estimated by weighted least squares (morc.dynid) and saved beside the
-- robot's definition.
return {
  name = "identify",
  version = "0.1.0",
  morc = ">=0.1",
  depends = { motion = ">=0.2" },
  doc = "Dynamic identification: identify (excite, record, estimate, save), the fourier reference component and helpers.run (one exciting run, recorded).",
}
