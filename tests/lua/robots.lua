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

return T.summary()
