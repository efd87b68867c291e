-- A robot program as a user writes it: with the stubs of `morc doc --luals`, a type checker finds
-- nothing wrong in it (tests/lua_luals.rs), and `morc check` runs it cleanly.
local kr16 = require "robots.kr16"
morc.use_robot(kr16, { q0 = kr16.home })
morc.lib.use "motion"

local moved = ptp { 0, -80, 100, 0, 70, 0 }
if not moved.ok then print("ptp: " .. tostring(moved.reason)) end
local slow = ptp({ 0, -70, 90, 0, 70, 0 }, { speed = 50 })
print(slow.duration)

local pose = kr16:fk { 0, -80, 100, 0, 70, 0 }
print(pose.pos[1] + 1.0, #kr16.joints, kr16.dof)
local ok, why = kr16:reachable { 0, 0, 0, 0, 0, 0 }
if not ok then print(why) end

-- The wiggle starts where the robot stands (the base refuses a jump to it).
ptp { 0, 0, 0, 0, 0, 0 }
local a = morc.assembly { "wiggle", duration = 0.05 }
a:add("ref", "sine", { n = 6, amplitude = 0.01, frequency = 1 })
a:connect("ref.y", "robot.q_cmd")
local r = morc.engine:run(a, { duration = 0.05 })
print(r.outcome, morc.engine:time() + morc.engine.period)
if not r.ok and r.error then print(r.error.kind .. ": " .. r.error.message) end
for _, k in ipairs(morc.components()) do
  if k.name == "sine" then
    for _, p in ipairs(morc.kind(k.name).params) do print(p.name, p.default) end
  end
end
