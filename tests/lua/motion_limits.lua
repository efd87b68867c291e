-- Full-speed motions keep the limits the monitor checks, and after a fault or a stop the next
-- command starts from a robot at rest (issue 11, item 5).
local T = require "morc.testing"
local motion = morc.lib.load("motion").skills

-- Large moves at 100 % speed and acceleration, plain, jerk-limited and filtered: the measured
-- velocity stays within the limit the monitor faults on.
local function full_speed(name, targets, variants)
  local r = require(name)
  morc.use_robot(r, { q0 = r.home })
  for _, opts in ipairs(variants or { {} }) do
    for i, q in ipairs(targets) do
      local m = motion.ptp(q, opts)
      T.eq(m.ok, true, ("%s move %d %s: %s"):format(name, i, next(opts) or "plain", tostring(m.reason)))
    end
  end
end

T.test("the UR5 moves at full speed without tripping its velocity limit", function()
  full_speed("robots.ur5", { { 90, -45, 45, -90, -90, 90 }, { -90, -120, 120, -90, -90, -90 }, { 0, -90, 90, -90, -90, 0 } }, { {}, { ramp = 0.05 }, { filter = 10 } })
end)
T.test("the KR 16 moves at full speed without tripping its velocity limit", function()
  full_speed("robots.kr16", { { 150, -100, 120, 170, 100, 300 }, { -150, -60, 80, -170, -100, -300 }, { 0, -90, 90, 0, 0, 0 } })
end)
T.test("the RX130L moves at full speed without tripping its velocity limit", function()
  full_speed("robots.rx130l", { { 120, -40, 100, 150, 60, 200 }, { -120, 40, 60, -150, -60, -200 }, { 0, 0, 90, 0, 45, 0 } })
end)

-- A fault in the middle of a fast move: the robot brakes to a standstill before the result
-- comes back, so the next command starts clean instead of faulting at the torque limit.
T.test("after a fault mid-motion the next command starts from a robot at rest", function()
  local r = require "robots.ur5"
  morc.use_robot(r, { q0 = r.home })
  local m = motion.ptp({ 90, -45, 45, -90, -90, 90 }, { max_error = 0.001 })
  T.eq(m.ok, false)
  assert(tostring(m.reason):find("following error", 1, true), tostring(m.reason))
  local probe = morc.assembly { "still?", duration = 0.002 }
  probe:add("p", "probe", { n = 6 })
  probe:connect("robot.qd", "p.u")
  local still = morc.engine:run(probe)
  for i, v in ipairs(still.data["p.u"]) do
    -- Standstill is 0.5 % of the joint's velocity limit (the UR5's: 3.15 rad/s), held 20 ms.
    assert(math.abs(v) < 0.016, ("joint %d still moves at %.4f rad/s after the fault"):format(i, v))
  end
  for _, q in ipairs { { -90, -120, 120, -90, -90, -90 }, r.home } do
    local n = motion.ptp(q)
    T.eq(n.ok, true, n.reason)
  end
end)

return T.summary()
