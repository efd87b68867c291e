-- robots/rx130l.lua — Stäubli RX130L, a 6-axis arm with a spherical wrist (the long-arm RX130).
--
-- Kinematics: standard DH with Stäubli's zero (arm stretched vertically up at q = 0):
-- shoulder height 550 mm, upper arm 625 mm, forearm 900 mm (the L version's longer forearm),
-- wrist centre to flange 110 mm; axis ranges and speeds of the RX130 family data sheet.
-- These lengths were taken from the RX130 family's published dimensions as far as they could
-- be checked here; VERIFY THEM AGAINST STÄUBLI'S DRAWING OF YOUR ARM (and calibrate) before
-- trusting Cartesian positions on the real robot.
--
-- DYNAMIC PARAMETERS ARE ESTIMATED, not identified: ~205 kg split over the links by size,
-- inertias of boxes of the links' size, typical drive trains. Identify them before trusting
-- model-based control figures.
local model = morc.model.dh {
  name = "Stäubli RX130L", convention = "standard",
  { a = 0,   alpha = -90, d = 550,               mass = 70, com = { 0, 150, 0 },   inertia = { 2.0, 1.5, 2.0, 0, 0, 0 } },
  { a = 625, alpha = 0,   d = 0,   offset = -90, mass = 45, com = { -310, 0, 150 }, inertia = { 0.4, 2.0, 2.0, 0, 0, 0 } },
  { a = 0,   alpha = 90,  d = 0,   offset = 90,  mass = 25, com = { 0, -50, 0 },    inertia = { 0.3, 0.3, 0.3, 0, 0, 0 } },
  { a = 0,   alpha = -90, d = 900,               mass = 22, com = { 0, 350, 0 },    inertia = { 1.6, 0.1, 1.6, 0, 0, 0 } },
  { a = 0,   alpha = 90,  d = 0,                 mass = 4,  com = { 0, 0, 0 },      inertia = { 0.01, 0.01, 0.01, 0, 0, 0 } },
  { a = 0,   alpha = 0,   d = 110,               mass = 1,  com = { 0, 0, -20 },    inertia = { 0.002, 0.002, 0.002, 0, 0, 0 } },
}
local function axis(name, slave, gear, armature, viscous, coulomb, pos, vel, acc, torque)
  return { name, drive = { slave = slave, gear = gear, counts = 2^20, armature = armature, viscous = viscous, coulomb = coulomb },
           limits = { pos = pos, vel = vel, acc = acc, torque = torque } }
end
return morc.robot {
  name = "Stäubli RX130L",
  model = model,
  joints = {
    axis("J1", 1, 130.0, 18.0, 15.0, 12, { -160, 160 },   200, 400, 1500),
    axis("J2", 2, 130.0, 18.0, 15.0, 12, { -137.5, 137.5 }, 200, 400, 2200),
    axis("J3", 3, 100.0, 8.0,  10.0, 8,  { -142.5, 142.5 }, 255, 500, 1000),
    axis("J4", 4, 70.0,  1.0,  2.0,  2,  { -270, 270 },   315, 800, 200),
    axis("J5", 5, 80.0,  1.0,  2.0,  2,  { -105, 120 },   360, 800, 200),
    axis("J6", 6, 50.0,  0.3,  0.8,  1,  { -270, 270 },   870, 1500, 90),
  },
  home = { 0, 0, 90, 0, 45, 0 },
  cartesian = { vel = 1000, acc = 4000, rot_vel = 180, rot_acc = 720 },
}
