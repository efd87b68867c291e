-- A linear chirp f0 → f1 Hz on one axis (the others hold 0), the command and the
-- measured positions probed. Native blocks only: it runs at the bus rate.
return function(p)
  local amplitude = { 0, 0, 0, 0, 0, 0 }
  amplitude[p.axis] = p.amplitude
  local a = morc.assembly { "sweep_axis" .. p.axis, duration = p.duration }
  a:add("chirp", "chirp", { n = 6, amplitude = amplitude, f0 = p.f0, f1 = p.f1, duration = p.duration })
  a:add("command", "probe", { n = 6 })
  a:add("measured", "probe", { n = 6 })
  a:connect("chirp.y", "robot.q_cmd")
  a:connect("chirp.y", "command.u")
  a:connect("robot.q", "measured.u")
  if p.record then a:record { "robot.q", "chirp.y" } end
  return a
end
