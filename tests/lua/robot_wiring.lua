-- A robot file's wiring, as the line has it: every wired drive gives its encoder's counts, each
-- joint has a slave of its own (none at 0, the coupler), and `--bus sim` puts each drive at the
-- slave the robot file names, so a wiring mistake fails in simulation as on the real line.
local T = require "morc.testing"
local kr16 = require "robots.kr16"
local motion = morc.lib.load("motion").skills

-- The KR 16's joints as robot.joints reads them back, with `change(i, joint)` applied.
local function kr16_with(name, change)
  local joints = kr16.joints
  for i, j in ipairs(joints) do
    change(i, j)
  end
  return morc.robot { name = name, model = kr16.model, joints = joints, home = kr16.home }
end

-- A joint as robot.joints reads it, without its drive's wiring (its drive train kept).
local function unwire(_, j)
  j.slave, j.gear, j.counts, j.offset, j.direction, j.mode = nil, nil, nil, nil, nil, nil
end

local function refused(name, change)
  local ok, err = pcall(kr16_with, name, change)
  assert(not ok, name .. ": expected an error")
  T.eq(err.kind, "robot", tostring(err))
  return err.message
end

local function has(message, text)
  assert(message:find(text, 1, true), ("expected %q in: %s"):format(text, message))
end

T.test("a wired drive without counts is refused, naming the joint and the usual values", function()
  local m = refused("no counts", function(i, j)
    if i == 3 then j.counts = nil end
  end)
  has(m, "joint A3")
  has(m, "counts")
  has(m, "2^20 = 1048576")
  -- A drive-train-only description (the simulation's armature) wires nothing: no counts needed.
  local sim_only = kr16_with("sim only", unwire)
  T.eq(sim_only.joints[1].counts, nil)
  T.eq(sim_only.joints[1].slave, nil)
  T.eq(sim_only.joints[1].armature, kr16.joints[1].armature)
end)

T.test("two joints at one slave, or a drive at slave 0, are refused naming the joints", function()
  local m = refused("twice", function(i, j)
    if i == 5 then j.slave = 2 end
  end)
  has(m, "joints A2 and A5 are both at drive slave 2")
  has(refused("zero", function(i, j)
    if i == 1 then j.slave = 0 end
  end), "joint A1: drive slave = 0")
end)

T.test("a robot without wired drives runs on the direct simulation, and the bus refuses it naming the joint", function()
  local r = kr16_with("unwired", unwire)
  morc.start_engine { robot = r, q0 = kr16.home, bus = false }
  T.eq(morc.engine.bus, nil)
  local ok, err = pcall(morc.start_engine, { robot = r, q0 = kr16.home, bus = "sim" })
  assert(not ok, "the bus takes a robot without drives")
  has(err.message, "robot 'unwired', joint A1: no drive is wired to it")
end)

-- Gravity torques at a pose, as the robot's own state reads them after a moment's rest.
local function resting_torques(robot, bus)
  local q0 = { 0, -60, 90, 0, 30, 0 }
  morc.start_engine { robot = robot, q0 = q0, bus = bus }
  local a = morc.assembly { "rest", duration = 0.2 }
  local rad = {}
  for i, q in ipairs(q0) do rad[i] = math.rad(q) end
  a:add("hold", "constant", { n = 6, value = rad })
  a:connect("hold.y", "robot.q_cmd")
  local r = morc.engine:run(a)
  T.eq(r.ok, true, tostring(r))
  return robot:state().tau
end

T.test("--bus sim puts each drive at the robot file's slave: a line wired in reverse reads each joint's own torque", function()
  local direct = resting_torques(kr16, false)
  -- A6's drive first on the line, A1's last.
  local reversed = kr16_with("KR 16 reversed", function(i, j) j.slave = 7 - i end)
  local on_bus = resting_torques(reversed, "sim")
  for i = 1, 6 do
    -- The bus reads torque in the drive's per-mille steps of its rated torque.
    assert(math.abs(on_bus[i] - direct[i]) < 0.02 * math.abs(direct[2]) + 0.5, ("A%d: %g N·m on the bus, %g directly"):format(i, on_bus[i], direct[i]))
  end
  assert(math.abs(direct[2]) > 10 * math.abs(direct[6]) + 1, "A2 carries far more than A6")
  local r = motion.ptp { 10, -70, 80, 5, 20, -5 }
  T.eq(r.ok, true, r.reason)
  -- A fault of A1's drive (the line's sixth drive, slave 6) names that slave.
  morc.engine.bus:sim { inject = { fault = "drive", position = 6 } }
  local f = motion.ptp { 0, -60, 90, 0, 30, 0 }
  T.eq(f.ok, false)
  has(f.reason, "6")
  assert(morc.engine:reset_faults())
end)

T.test("a gap in the drives' slaves is filled by the cell's terminals; a slave past the line is refused", function()
  local gap = kr16_with("KR 16 gap", function(i, j)
    if i == 6 then j.slave = 9 end
  end)
  morc.start_engine { robot = gap, q0 = kr16.home, bus = "sim" }
  T.eq(motion.ptp { 5, -85, 85, 0, 5, 5 }.ok, true)
  local far = kr16_with("KR 16 far", function(i, j)
    if i == 4 then j.slave = 40 end
  end)
  local ok, err = pcall(morc.start_engine, { robot = far, q0 = kr16.home, bus = "sim" })
  assert(not ok, "slave 40 on a line of 13")
  has(err.message, "joint A4: drive slave 40 is past the simulated line")
end)

return T.summary()
