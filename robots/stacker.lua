-- robots/stacker.lua — the dual-arm stacker of the admittance-control paper (direct teaching
-- by hand guiding): a rotary platform (theta1) carrying two arms; each arm is a vertical
-- prismatic axis (d2, 0–940 mm) and a revolute joint about a vertical axis (theta3, ±90°),
-- the tool pointing down. q = { theta1 (°), d2 (mm), theta3 (°), d2r (mm), theta3r (°) }.
--
-- Geometry: the paper's Table 1 (standard DH, T = Rz(θ) Tz(d) Tx(a) Rx(α)):
--   link 1: θ1, d 0,  a 0,              α 0      (the platform)
--   link 2: θ 0, d2,  a1 = 105 mm,      α 0      (the vertical axis)
--   link 3: θ3, d 0,  a2 = 400 mm,      α 0      (the arm)
--   link 4: θ 0, d4 = 120 mm, a3 = 250 mm, α 180° (to the wrist flange, z down)
-- The second arm mirrors the first: its column stands on the platform's other side.
-- Masses are the paper's: m1 = 25 kg (the column with its actuator), m2 = 3.5 kg (the
-- carriage), m3 = 1.5 kg (link 3), m4 = 2.68 kg (the actuator at the end of link 3),
-- m5 = 3 kg (the gripper, behind the wrist F/T sensor).
-- ESTIMATED, not from the paper (replace with your machine's data): the centres of mass of
-- the column and carriage, every inertia (rods and point masses), the velocity and
-- acceleration limits of d2 and theta3, their force/torque limits, and the drive trains.
-- The platform's speed (300 °/s) and rated torque (239 N·m) are the paper's; its limit here is
-- the peak a servo drive gives, 3 × rated (estimated).

-- Link 3 carries link 3 itself (a 400 mm rod), the actuator at its end and the gripper
-- (650 mm out, 60 mm below the flange): one body, its centre of mass and inertia combined.
local arm_body = { mass = 1.5 + 2.68 + 3, com = { 462.7, 0, 25.1 }, inertia = { 0.02, 0.255, 0.249, 0, -0.034, 0 } }

local function arm(side, yaw)
  local lift, swing = side == "left" and "d2" or "d2r", side == "left" and "theta3" or "theta3r"
  return {
    { lift, parent = "theta1", type = "prismatic", axis = { 0, 0, 1 }, xyz = { 0, 0, 0 }, rpy = { 0, 0, yaw },
      mass = 3.5, com = { 105, 0, 0 }, inertia = { 0.01, 0.01, 0.01, 0, 0, 0 } },
    { swing, parent = lift, axis = { 0, 0, 1 }, xyz = { 105, 0, 0 },
      mass = arm_body.mass, com = arm_body.com, inertia = arm_body.inertia },
  }
end

local left, right = arm("left", 0), arm("right", 180)
local model = morc.model.build {
  name = "dual-arm stacker",
  { "theta1", parent = "universe", axis = { 0, 0, 1 }, xyz = { 0, 0, 0 },
    mass = 25, com = { 0, 0, 300 }, inertia = { 0.89, 0.89, 0.28, 0, 0, 0 } },
  left[1], left[2], right[1], right[2],
  frames = {
    -- The wrist flange (link 4's frame): z points down; the F/T sensor sits here.
    { "left_tool", parent = "theta3", xyz = { 650, 0, 120 }, rpy = { 180, 0, 0 } },
    { "right_tool", parent = "theta3r", xyz = { 650, 0, 120 }, rpy = { 180, 0, 0 } },
  },
}

-- A 10 mm ball screw: 2π/0.01 motor radians per metre of travel.
local screw = 2 * math.pi / 0.01
local function axis(name, slave, gear, armature, pos, vel, acc, torque)
  return { name, drive = { slave = slave, gear = gear, counts = 2^17, armature = armature, viscous = 2, coulomb = 1 },
           limits = { pos = pos, vel = vel, acc = acc, torque = torque } }
end
return morc.robot {
  name = "dual-arm stacker",
  model = model,
  joints = {
    axis("theta1",  1, 100,   0.5, { -180, 180 }, 300,  1200, 3 * 239),
    axis("d2",      2, screw, 2.0, { 0, 940 },    1000, 5000, 400),
    axis("theta3",  3, 80,    0.3, { -90, 90 },   180,  720, 250),
    axis("d2r",     4, screw, 2.0, { 0, 940 },    1000, 5000, 400),
    axis("theta3r", 5, 80,    0.3, { -90, 90 },   180,  720, 250),
  },
  -- Each arm as a group of its own, both sharing the platform.
  groups = {
    left = { joints = { "theta1", "d2", "theta3" }, tool = "left_tool" },
    right = { joints = { "theta1", "d2r", "theta3r" }, tool = "right_tool" },
  },
  -- The wrist F/T sensor of the left arm (ATI Delta in the paper), with what the simulated one
  -- measures besides the operator's hand: the gripper's weight, an offset, noise.
  ft = { frame = "left_tool", sim = { load = { mass = 3, com = { 0, 0, 60 } }, bias = { 4.2, -2.5, 6.0, 0.15, -0.08, 0.03 }, noise = { 0.05, 0.002 } } },
  home = { 0, 400, 60, 400, 60 },
}
