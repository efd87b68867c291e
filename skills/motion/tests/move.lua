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

return T.summary()
