-- morc.units: Lua's numbers (degrees, mm and their rates) and SI, one table for morc's own
-- conversions and for Lua code; per joint, the unit follows the joint (deg or mm).
local T = require "morc.testing"
local units = morc.units

T.test("to_si and from_si convert numbers and lists, and round trip", function()
  T.near(units.to_si(180, "deg"), math.pi, 1e-15)
  T.near(units.to_si(250, "mm/s"), 0.25, 1e-15)
  T.near(units.to_si(90, "°/s"), math.pi / 2, 1e-15, "° is deg")
  T.near(units.to_si(2000, "mm/s2"), 2, 1e-15, "s2 is s²")
  T.eq(units.to_si(1.5, "rad"), 1.5)
  T.near(units.from_si(0.25, "mm/s"), 250, 1e-12)
  T.near(units.from_si(math.pi, "deg/s²"), 180, 1e-12)
  for _, u in ipairs(units.list()) do
    for _, x in ipairs { -123.25, 0, 1e-3, 42 } do T.near(units.from_si(units.to_si(x, u), u), x, 1e-12, u) end
  end
  local q = units.to_si({ 90, -45, 0 }, "deg")
  T.near(q[1], math.pi / 2, 1e-15); T.near(q[2], -math.pi / 4, 1e-15); T.eq(q[3], 0)
  local mixed = units.to_si({ 90, 500 }, { "deg", "mm" })
  T.near(mixed[1], math.pi / 2, 1e-15); T.near(mixed[2], 0.5, 1e-15)
  local si, f = units.si("deg/s")
  T.eq(si, "rad/s"); T.near(f, math.pi / 180, 1e-18)
end)

T.test("an unknown unit is an error naming the known ones", function()
  T.raises(function() units.to_si(1, "furlong") end, "unknown unit \"furlong\"", "known: deg, deg/s, deg/s², mm", "rad")
  T.raises(function() units.from_si(1, "inch") end, "morc.units.from_si", "unknown unit \"inch\"")
  T.raises(function() units.si("parsec") end, "unknown unit \"parsec\"")
  T.raises(function() units.to_si({ 1, 2 }, { "deg" }) end, "2 numbers for 1 units")
  T.raises(function() units.to_si("ten", "deg") end, "expected a number or a list of numbers")
end)

T.test("per joint, the unit follows the joint: degrees, mm for a prismatic one", function()
  local arm = morc.robot { name = "finger arm", model = morc.model.urdf "tests/data/finger_arm.urdf",
    joints = { { "shoulder", limits = { acc = 300 } }, { "elbow", limits = { acc = 300 } }, { "wrist", limits = { acc = 300 } },
               { "finger_joint", limits = { acc = 1000 } } } }
  local u = units.joint_units(arm)
  T.eq(table.concat(u, " "), "deg deg deg mm")
  for i, j in ipairs(arm.joints) do T.eq(u[i], j.unit) end
  local s = units.joint_scales(arm)
  T.near(s[1], 180 / math.pi, 1e-12); T.near(s[4], 1000, 1e-12)
  local q = units.to_si({ 10, 20, 30, 35 }, arm)
  T.near(q[1], math.rad(10), 1e-15); T.near(q[4], 0.035, 1e-15)
  local back = units.from_si(q, arm)
  for i, x in ipairs { 10, 20, 30, 35 } do T.near(back[i], x, 1e-12) end
  T.raises(function() units.to_si({ 1, 2 }, arm) end, "2 numbers for 4 units")
  T.raises(function() units.joint_units(arm.model) end, "expects a robot")
end)

return T.summary()
