-- Geometric calibration of the simulated RX130L against a hidden "true" robot whose geometry
-- differs from the nominal one (every placement off by up to 1 mm / 0.1°): the true robot runs
-- on the engine, the program moves it to measurement poses, a simulated tracker measures its tool
-- (10 µm noise), and the calibrated robot's IK then puts the real tool where it is asked.
local T = require "morc.testing"
local rx = require "robots.rx130l"
morc.lib.use "motion"

local seed = 12345
local function uniform()  -- deterministic, in [-1, 1)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 1073741824 - 1
end

local truth = rx:perturbed { seed = 7, length = 1, angle = 0.1 }
local function random_pose()
  local q = {}
  for j, joint in ipairs(rx.joints) do
    local lo, hi = joint.limits.pos[1], joint.limits.pos[2]
    q[j] = 0.5 * (lo + hi) + 0.35 * (hi - lo) * uniform()
  end
  return q
end
local function tracker(q)
  local p = truth:fk(q).pos
  return { p[1] + 0.01 * uniform(), p[2] + 0.01 * uniform(), p[3] + 0.01 * uniform() }
end
local function dist(a, b) return math.sqrt((a[1] - b[1]) ^ 2 + (a[2] - b[2]) ^ 2 + (a[3] - b[3]) ^ 2) end

T.test("calibrating from tracker measurements on the running true robot", function()
  morc.use_robot(truth)
  local poses, measured = {}, {}
  for i = 1, 30 do
    local r = ptp(random_pose())
    assert(r.ok, r.reason)
    local q = truth:state().q           -- where the encoders say it is
    poses[i], measured[i] = q, tracker(q)
  end
  local c = rx:calibrate { poses = poses, measured = measured }
  assert(c.rms_before > 0.5, ("the nominal model is off by %.3f mm RMS"):format(c.rms_before))
  assert(c.rms_after < 0.03, ("the calibrated model is off by %.4f mm RMS"):format(c.rms_after))
  assert(c.identified > 20 and c.identified < 39 and #c.dropped == 39 - c.identified, c.identified .. " identified")
  assert(c.errors["joint2 placement rx"] or next(c.errors), "errors by name")
  -- Poses it has not seen: the calibrated IK lands the real tool on the target, the nominal not.
  local worst_nominal, worst_calibrated = 0, 0
  for _ = 1, 10 do
    local q_true = random_pose()
    local target = truth:fk(q_true)
    local q_nominal = rx:ik(target, q_true)
    local q_calibrated = c.robot:ik(target, q_true)
    assert(q_nominal and q_calibrated, "both reach the target")
    worst_nominal = math.max(worst_nominal, dist(truth:fk(q_nominal).pos, target.pos))
    worst_calibrated = math.max(worst_calibrated, dist(truth:fk(q_calibrated).pos, target.pos))
  end
  assert(worst_nominal > 0.5, ("nominal IK misses by %.3f mm at worst"):format(worst_nominal))
  assert(worst_calibrated < 0.1, ("calibrated IK misses by %.4f mm at worst"):format(worst_calibrated))
end)

T.test("measurement poses chosen by remove-and-replace observe more than a linear scan", function()
  local candidates = {}
  for i = 1, 300 do candidates[i] = random_pose() end
  local s = rx:measurement_poses { candidates = candidates, n = 30, index = "O3" }
  T.eq(#s.poses, 30)
  assert(s.ratio > 1.5, ("σ_min %.3g against %.3g for a linear scan"):format(s.index, s.linear_scan_index))
  T.near(s.poses[1], candidates[s.chosen[1]], 1e-9, "poses are candidates")
  T.raises(function() rx:measurement_poses { candidates = candidates, index = "O9" } end, "give \"O1\"")
end)

T.test("bad calibration input says what is wrong", function()
  T.raises(function() rx:calibrate { poses = { { 0, 0, 0, 0, 0, 0 } } } end, "give measured")
  T.raises(function() rx:calibrate { poses = { { 0, 0, 0, 0, 0, 0 } }, measured = { { 1, 2 } } } end, "measured[1] must be three finite numbers")
  T.raises(function() rx:calibrate { poses = { { 0, 0, 0, 0, 0, 0 } }, measured = { { 1, 2, 3 } } } end, "measure more poses")
end)

return T.summary()
