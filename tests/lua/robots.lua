-- The shipped robots: each loads, moves in simulation by PTP (and LIN/CIRC where it has a
-- 6-axis arm), comes home, and its kinematics hold together (IK inverts FK).
local T = require "morc.testing"
local motion = morc.lib.load("motion").skills

local function moves_and_comes_home(name)
  local r = require(name)
  morc.use_robot(r, { q0 = r.home })
  T.eq(morc.current_robot, r)
  local q = {}
  for i = 1, r.dof do q[i] = r.home[i] + (i % 2 == 0 and -8 or 12) end
  local m = motion.ptp(q)
  T.eq(m.ok, true, m.reason)
  assert(m.final_error < 0.01 and m.peak_error < 0.1, tostring(m))
  if r.dof == 6 then
    local p = r:fk(q)
    local l = motion.lin { pos = { p.pos[1] - 80, p.pos[2] + 60, p.pos[3] + 50 }, rpy = p.rpy }
    T.eq(l.ok, true, l.reason)
    assert(l.tool_error < 0.05, tostring(l))
    local c = motion.circ { via = { p.pos[1] - 40, p.pos[2] + 90, p.pos[3] + 25 }, to = p }
    T.eq(c.ok, true, c.reason)
    -- IK inverts FK at the target, nearest to the seed.
    local back = assert(r:ik(p, q))
    for i = 1, 6 do T.near(back[i], q[i], 1e-6, ("%s joint %d"):format(name, i)) end
  end
  local h = motion.home()
  T.eq(h.ok, true, h.reason)
  return r
end

T.test("KUKA KR 16-2 moves by PTP, LIN and CIRC", function() moves_and_comes_home("robots.kr16") end)
T.test("Stäubli RX130L moves by PTP, LIN and CIRC", function() moves_and_comes_home("robots.rx130l") end)
T.test("UR5 (URDF, no spherical wrist: damped least-squares IK) moves by PTP, LIN and CIRC", function() moves_and_comes_home("robots.ur5") end)

-- The elastic variants (stiffness from the strain-wave catalogue, robots/strain_wave.lua): the
-- drives measure the motors, so the skills' checks hold on the motor side as on the rigid arms.
T.test("the elastic KR 16, RX130L and UR5 move by PTP, LIN and CIRC", function()
  for _, name in ipairs { "robots.kr16_elastic", "robots.rx130l_elastic", "robots.ur5_elastic" } do
    local r = moves_and_comes_home(name)
    local elastic = 0
    for i = 1, r.dof do if r.joints[i].stiffness > 0 then elastic = elastic + 1 end end
    assert(elastic >= 3, name .. " has elastic gears")
  end
end)

T.test("the dual-arm stacker turns its platform and moves both arms", function()
  local r = moves_and_comes_home("robots.stacker")
  T.eq(r.dof, 5)
  -- Arms mirror each other: with the same joint values the wrists are on opposite sides.
  local left, right = r:fk({ 0, 300, 60, 300, 60 }, "left_tool"), r:fk({ 0, 300, 60, 300, 60 }, "right_tool")
  for i = 1, 2 do T.near(left.pos[i], -right.pos[i], 1e-9, "mirrored") end
  T.near(left.pos[3], 420, 1e-9, "d2 + d4")
  -- Turning the platform by 90° swings the right wrist's column from -x to -y.
  local turned = r:fk({ 90, 300, 0, 300, 0 }, "right_tool")
  T.near(turned.pos[2], -755, 1e-9, "turned right tool y")
  T.raises(function() motion.lin { 0, 0, 0, 0, 0, 0 }; error(tostring(motion.lin { 0, 0, 0, 0, 0, 0 }.reason)) end, "6 joints")
end)

-- A robot file written to a scratch folder, loaded: the error it raises (file:line is the file's).
local scratch = os.tmpname()
os.remove(scratch)
assert(os.execute("mkdir -p " .. scratch))
local function robot_file(name, joints, extra)
  local path = scratch .. "/" .. name .. ".lua"
  local f = assert(io.open(path, "w"))
  f:write(([[
local model = morc.model.build { name = "arm",
  { "theta1", parent = "universe", mass = 5, com = { 0, 0, 100 }, inertia = { 0.1, 0.1, 0.1, 0, 0, 0 } },
  { "d2", type = "prismatic", mass = 2, com = { 0, 0, 0 }, inertia = { 0.01, 0.01, 0.01, 0, 0, 0 } },
  { "theta3", xyz = { 100, 0, 0 }, mass = 1, com = { 50, 0, 0 }, inertia = { 0.01, 0.01, 0.01, 0, 0, 0 } },
}
local function axis(name, pos, more)
  local j = { name, drive = { gear = 10, counts = 2^17 }, limits = { pos = pos, vel = 100, acc = 500, torque = 50 } }
  for k, v in pairs(more or {}) do j[k] = v end
  return j
end
return morc.robot { name = "arm", model = model, %s
  joints = { %s } }
]]):format(extra or "", joints))
  f:close()
  return pcall(dofile, path)
end
local function robot_file_error(name, joints, extra)
  local ok, err = robot_file(name, joints, extra)
  assert(not ok, name .. ": expected an error")
  T.eq(err.kind, "robot", tostring(err))
  assert(tostring(err):find(name .. ".lua:11", 1, true), "names the robot file and line: " .. tostring(err))
  return err.message
end
local function has(text, ...)
  for _, part in ipairs({ ... }) do
    assert(text:find(part, 1, true), ("lacks %q: %s"):format(part, text))
  end
end
local right = [[axis("theta1", { -180, 180 }), axis("d2", { 0, 900 }), axis("theta3", { -90, 90 })]]

T.test("a robot file's joints are checked against its model: names, order, kinds and units", function()
  -- The file in the model's order, with kinds and units said, loads.
  local ok, r = robot_file("fine", [[axis("theta1", { -180, 180 }, { unit = "deg" }), axis("d2", { 0, 900 }, { kind = "prismatic", unit = "mm" }), axis("theta3", { -90, 90 }, { kind = "revolute" })]])
  T.eq(ok, true, tostring(r))
  T.eq(r.joints[2].unit, "mm")
  has(robot_file_error("swapped", [[axis("theta1", { -180, 180 }), axis("theta3", { -90, 90 }), axis("d2", { 0, 900 })]]),
    "joint theta3", "entry 2 is 'theta3', but the model's joint 2 is 'd2' (prismatic, mm) and 'theta3' is its joint 3 (revolute)", "model's order")
  has(robot_file_error("misspelt", [[axis("theta1", { -180, 180 }), axis("d_2", { 0, 900 }), axis("theta3", { -90, 90 })]]),
    "the model has no joint 'd_2' (its joint 2 is 'd2'); did you mean 'd2'?")
  has(robot_file_error("kind", [[axis("theta1", { -180, 180 }), axis("d2", { 0, 900 }, { kind = "revolute" }), axis("theta3", { -90, 90 })]]),
    "kind = \"revolute\", but the model's joint 2 ('d2') is prismatic")
  has(robot_file_error("units", [[axis("theta1", { -180, 180 }), axis("d2", { -90, 90 }, { limits = { pos = { -90, 90 }, vel = 100, acc = 500, torque = 50, unit = "deg" } }), axis("theta3", { -90, 90 })]]),
    "unit = \"deg\", but the model's joint 2 ('d2') is prismatic: its limits are in mm")
  has(robot_file_error("unit_rev", [[axis("theta1", { -180, 180 }, { unit = "mm" }), axis("d2", { 0, 900 }), axis("theta3", { -90, 90 })]]),
    "unit = \"mm\", but the model's joint 1 ('theta1') is revolute: its limits are in deg")
end)

T.test("keys a robot file gives that morc does not know are errors naming the nearest", function()
  has(robot_file_error("mode", [[axis("theta1", { -180, 180 }, { drive = { slave = 1, counts = 2^17, mode = "torque" } }), axis("d2", { 0, 900 }), axis("theta3", { -90, 90 })]]),
    "joint theta1: unknown drive mode 'torque': use \"csp\" (position), \"csv\" (velocity) or \"cst\" (torque)")
  has(robot_file_error("gaer", [[axis("theta1", { -180, 180 }, { drive = { slave = 1, gaer = 5 } }), axis("d2", { 0, 900 }), axis("theta3", { -90, 90 })]]),
    "unknown key 'gaer' in the drive of joint theta1; did you mean 'gear'?")
  has(robot_file_error("limit", [[axis("theta1", { -180, 180 }, { limits = { pos = { -1, 1 }, vel = 1, acc = 1, torque = 1, jerk = 5 } }), axis("d2", { 0, 900 }), axis("theta3", { -90, 90 })]]),
    "unknown key 'jerk' in the limits of joint theta1")
  has(robot_file_error("entry", [[axis("theta1", { -180, 180 }, { drvie = {} }), axis("d2", { 0, 900 }), axis("theta3", { -90, 90 })]]),
    "unknown key 'drvie' in joint theta1 of robot 'arm'; did you mean 'drive'?")
  has(robot_file_error("top", right, [[hoem = { 0, 0, 0 },]]), "unknown key 'hoem' in robot 'arm'; did you mean 'home'?")
  has(robot_file_error("tool", right, [[tool = { xyz = { 0, 0, 10 }, rpx = { 0, 0, 0 } },]]), "unknown key 'rpx' in the tool; did you mean 'rpy'?")
  has(robot_file_error("cart", right, [[cartesian = { vel = 100, rotvel = 10 },]]), "unknown key 'rotvel' in the cartesian limits of robot 'arm'; did you mean 'rot_vel'?")
end)

T.test("NaN and infinities in a robot file are refused, naming the key", function()
  has(robot_file_error("nan_gear", [[axis("theta1", { -180, 180 }, { drive = { slave = 1, gear = 0/0 } }), axis("d2", { 0, 900 }), axis("theta3", { -90, 90 })]]),
    "joint theta1: 'gear' is NaN: give a finite number")
  has(robot_file_error("inf_vel", [[axis("theta1", { -180, 180 }, { limits = { pos = { -1, 1 }, vel = math.huge, acc = 1, torque = 1 } }), axis("d2", { 0, 900 }), axis("theta3", { -90, 90 })]]),
    "joint theta1: 'vel' is inf: give a finite number")
  has(robot_file_error("nan_pos", [[axis("theta1", { -180, 0/0 }), axis("d2", { 0, 900 }), axis("theta3", { -90, 90 })]]),
    "element 2 is NaN")
  local ok, err = pcall(morc.model.dh, { { a = 0, d = 100, mass = 0/0 } })
  assert(not ok and tostring(err):find("'mass' is NaN", 1, true), tostring(err))
  ok, err = pcall(morc.model.dh, { { a = 0, d = 100, apha = 90 } })
  assert(not ok and tostring(err):find("unknown key 'apha' in row 1; did you mean 'alpha'?", 1, true), tostring(err))
end)

T.test("robot.joints read back defines the same robot (drive and limits beside the name)", function()
  local ur = require "robots.ur5"
  local again = morc.robot { name = "UR5 again", model = ur.model, joints = ur.joints, home = ur.home }
  for i, j in ipairs(again.joints) do
    T.eq(j.gear, ur.joints[i].gear, j.name .. " gear")
    T.eq(j.slave, ur.joints[i].slave, j.name .. " slave")
    T.eq(j.counts, ur.joints[i].counts, j.name .. " counts")
  end
end)

return T.summary()
