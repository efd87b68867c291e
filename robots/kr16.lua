-- robots/kr16.lua — KUKA KR 16-2, the arm of the MoRC testbed.
--
-- Kinematics: from KUKA's data sheet (KR 16-2 specification): A1 height 675 mm, A1–A2 offset
-- 260 mm, upper arm 680 mm, A3–A4 offset 35 mm, forearm 670 mm, wrist to flange 158 mm
-- (reach 260 + 680 + 670 = 1610 mm). Standard DH with KUKA's joint angles: at
-- {0, -90, 90, 0, 0, 0}° the upper arm is vertical and the forearm horizontal; A1, A4 and A6
-- count clockwise (flip). Axis ranges and speeds are the data sheet's.
--
-- DYNAMIC PARAMETERS ARE ESTIMATED, not identified: link masses split the data sheet's
-- 235 kg by the size of each part, centres of mass and inertias are those of boxes of the
-- parts' size, and the drive trains (reflected motor inertia, friction) are typical values
-- for 2–3 kW servo motors behind ~150:1 gears. Accelerations and torque limits are
-- estimates too. Identify them on the real arm before trusting model-based control figures.
--
-- A load goes on with robot:with_payload { mass = 16, com = { 0, 0, 100 } } (kg, mm in the flange frame).
local model = morc.model.dh {
  name = "KUKA KR 16-2", convention = "standard",
  --       a (mm)    alpha (°)  d (mm)   offset (°)   mass (kg), com (mm, DH frame j), inertia {ixx, iyy, izz, ixy, ixz, iyz} kg·m²
  { a = 260, alpha = -90, d = 675, flip = true, mass = 80, com = { -100, 200, 0 }, inertia = { 3.0, 2.0, 3.0, 0, 0, 0 } },
  { a = 680, alpha = 0,   d = 0,                mass = 45, com = { -340, 0, 120 },  inertia = { 0.4, 2.0, 2.0, 0, 0, 0 } },
  { a = 35,  alpha = -90, d = 0,  offset = -90, mass = 30, com = { -20, 0, 80 },    inertia = { 0.6, 0.6, 0.4, 0, 0, 0 } },
  { a = 0,   alpha = 90,  d = 670, flip = true, mass = 20, com = { 0, -250, 0 },    inertia = { 0.6, 0.1, 0.6, 0, 0, 0 } },
  { a = 0,   alpha = -90, d = 0,                mass = 5,  com = { 0, 0, 0 },       inertia = { 0.02, 0.02, 0.02, 0, 0, 0 } },
  { a = 0,   alpha = 0,   d = 158, flip = true, mass = 1,  com = { 0, 0, -20 },     inertia = { 0.002, 0.002, 0.002, 0, 0, 0 } },
}
-- armature: reflected motor inertia J_motor·gear² (kg·m²); viscous N·m·s/rad; coulomb N·m.
local function axis(name, slave, gear, armature, viscous, coulomb, pos, vel, acc, torque)
  return { name, drive = { slave = slave, gear = gear, counts = 2^20, armature = armature, viscous = viscous, coulomb = coulomb },
         limits = { pos = pos, vel = vel, acc = acc, torque = torque } }
end
return morc.robot {
  name = "KUKA KR 16-2",
  model = model,
  home = { 0, -90, 90, 0, 45, 0 },
  -- The data sheet's largest TCP speed is 2 m/s; a lab's default stays below.
  cartesian = { vel = 1000, acc = 4000, rot_vel = 180, rot_acc = 720 },
  joints = {
    axis("A1", 1, 147.0, 25.0, 20.0, 15, { -185, 185 }, 156, 300, 2000),
    axis("A2", 2, 153.0, 25.0, 20.0, 15, { -155, 35 },  156, 300, 2500),
    axis("A3", 3, 121.0, 12.0, 12.0, 10, { -130, 154 }, 156, 300, 1500),
    axis("A4", 4, 70.0,  1.5,  3.0,  3, { -350, 350 }, 330, 600, 250),
    axis("A5", 5, 80.0,  1.5,  3.0,  3, { -130, 130 }, 330, 600, 250),
    axis("A6", 6, 50.0,  0.5,  1.0,  1, { -350, 350 }, 615, 900, 120),
  },
}
