-- Direct teaching: hand guiding by admittance control, teach-in and playback
-- (`morc.lib.load "teach"`; the folder skills/ is in the library path). After the dual-arm
-- stacker paper: M_d dV/dt + D_d V = F_ext at the bus rate, the orientation held by projecting
-- the translation Jacobian into the null space of the rotation Jacobian.
return {
  name = "teach",
  version = "0.1.0",
  morc = ">=0.1",
  depends = { motion = ">=0.2" },
  -- Points are saved to files; an admittance given its robot by module name ("robots.stacker"
  -- rather than the robot) loads it (robots/*.lua read their URDF files).
  capabilities = { "io" },
  doc = "Hand guiding (teach.admittance, a Lua component at the bus rate), teach-in with a button or a call, replay by PTP or one quintic path, points in a file a person can edit.",
}
