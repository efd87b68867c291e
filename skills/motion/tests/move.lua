-- `morc test skills/motion`
local T = require "morc.testing"
local move = morc.lib.load("motion").skills.move

T.test("moves to the target within tolerance, taking what the slowest axis needs", function()
  local r = move { 0, -90, 90, 0, 45, 0 }
  T.eq(r.ok, true, r.reason)
  T.near(r.move_time, 1.875 * 90 / 150, 1e-9, "move_time")
  assert(r.final_error < 0.01, r.final_error)
  assert(tostring(r):find("^move ✓  1.1%d s   final error"), tostring(r))
end)

T.test("moves from where the axes are; a slower speed takes longer", function()
  local r = move({ 0, -90, 90, 0, 0, 0 }, { speed = 50 })
  T.eq(r.ok, true, r.reason)
  T.near(r.move_time, 1.875 * 45 / 75, 1e-9, "move_time")
end)

T.test("a target out of range is refused before anything moves", function()
  T.raises(function() move { 0, 0, 400, 0, 0, 0 } end, "move: param 'q' element 3 = 400 deg is out of range [-360, 360] deg")
end)

T.test("morc.lib.use makes the skills globals", function()
  morc.lib.use "motion"
  T.eq(rawequal(_G.move, move), true)
end)

T.test("moves as many axes as the robot has joints; a target of another size is refused", function()
  -- A planar arm of three joints about vertical axes (no gravity torque).
  local link = { a = 300, alpha = 0, d = 0, mass = 2, com = { -150, 0, 0 }, inertia = { 0.01, 0.05, 0.05, 0, 0, 0 } }
  local model = morc.model.dh { link, link, link }
  local function axis(name, slave)
    return { name, drive = { slave = slave, gear = 100, counts = 2^17 }, limits = { pos = { -170, 170 }, vel = 200, acc = 1000, torque = 500 } }
  end
  morc.use_robot(morc.robot { name = "three", model = model, joints = { axis("A1", 1), axis("A2", 2), axis("A3", 3) } })
  -- The simulated drives follow the bare position command (move gives no feed-forward) with a
  -- lag of a few degrees at the end: the tolerance here is move's largest.
  local r = move({ 30, -20, 10 }, { tolerance = 10 })
  T.eq(r.ok, true, r.reason)
  T.near(r.move_time, 1.875 * 30 / 150, 1e-9, "move_time")
  -- Refused in the parameter check, naming q and its length.
  T.raises(function() move { 0, 0, 0, 0, 0, 0 } end, "param 'q' has 6 values, robot 'three' has 3 joints")
end)

return T.summary()
