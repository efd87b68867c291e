-- robots/stacker.lua — the dual-arm stacker of the admittance-control paper: a rotary platform
-- carrying two planar 2-DoF arms (shoulder and elbow pitch) on either side, which grasp a
-- box between them. Composed from primitives with morc.model.build.
--
-- GEOMETRY AND DYNAMICS ARE NOMINAL (a lab-scale stacker: platform Ø 600 mm, 500 mm upper
-- arms, 400 mm forearms), not measured on the paper's machine: put your machine's drawing
-- and identified parameters here before trusting model-based figures.
local model = morc.model.build {
  name = "dual-arm stacker",
  { "T",  parent = "universe", axis = { 0, 0, 1 }, xyz = { 0, 0, 400 },
    mass = 40, com = { 0, 0, 100 }, inertia = { 1.5, 1.5, 2.5, 0, 0, 0 } },
  { "L1", parent = "T",  axis = { 0, 1, 0 }, xyz = { 0, 300, 200 },
    mass = 8, com = { 0, 0, 250 }, inertia = { 0.18, 0.18, 0.01, 0, 0, 0 } },
  { "L2", parent = "L1", axis = { 0, 1, 0 }, xyz = { 0, 0, 500 },
    mass = 5, com = { 0, 0, 200 }, inertia = { 0.07, 0.07, 0.005, 0, 0, 0 } },
  { "R1", parent = "T",  axis = { 0, 1, 0 }, xyz = { 0, -300, 200 },
    mass = 8, com = { 0, 0, 250 }, inertia = { 0.18, 0.18, 0.01, 0, 0, 0 } },
  { "R2", parent = "R1", axis = { 0, 1, 0 }, xyz = { 0, 0, 500 },
    mass = 5, com = { 0, 0, 200 }, inertia = { 0.07, 0.07, 0.005, 0, 0, 0 } },
  frames = {
    { "left_tool", parent = "L2", xyz = { 0, 0, 400 } },
    { "right_tool", parent = "R2", xyz = { 0, 0, 400 } },
  },
}
local function axis(name, slave, gear, armature, pos, vel, acc, torque)
  return { name, drive = { slave = slave, gear = gear, counts = 2^17, armature = armature, viscous = 2, coulomb = 1 },
           limits = { pos = pos, vel = vel, acc = acc, torque = torque } }
end
return morc.robot {
  name = "dual-arm stacker",
  model = model,
  joints = {
    axis("T",  1, 100, 2.0, { -180, 180 }, 90,  180, 300),
    axis("L1", 2, 120, 1.0, { -120, 120 }, 120, 300, 200),
    axis("L2", 3, 100, 0.5, { -150, 150 }, 150, 400, 100),
    axis("R1", 4, 120, 1.0, { -120, 120 }, 120, 300, 200),
    axis("R2", 5, 100, 0.5, { -150, 150 }, 150, 400, 100),
  },
  home = { 0, 30, 60, 30, 60 },
}
