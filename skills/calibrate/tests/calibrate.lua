-- `morc test skills/calibrate`: calibrating the simulated RX130L against a hidden true robot.
local T = require "morc.testing"
local calibrate = morc.lib.load("calibrate").skills.calibrate
local rx = require "robots.rx130l"
local truth = rx:perturbed { seed = 7, length = 1, angle = 0.1 }
morc.use_robot(truth, { q0 = rx.home })

local seed = 3
local function uniform()
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 1073741824 - 1
end
local candidates = {}
while #candidates < 60 do
  local q = {}
  for j, joint in ipairs(rx.joints) do
    local lo, hi = joint.limits.pos[1], joint.limits.pos[2]
    q[j] = 0.5 * (lo + hi) + 0.3 * (hi - lo) * uniform()
  end
  local p = rx:fk(q).pos
  if p[3] > 300 and p[1] > 0 then candidates[#candidates + 1] = q end
end
local function tracker(q)
  local p = truth:fk(q).pos
  return { p[1] + 0.01 * uniform(), p[2] + 0.01 * uniform(), p[3] + 0.01 * uniform() }
end
local dir = os.tmpname(); os.remove(dir)
local file = dir .. "-rx130l.calibration.lua"

T.test("calibrate measures, fits, saves beside, never over a file; calibrated() reads it back", function()
  -- The engine runs the truth; the skill calibrates what the program believes: rx.
  local r = calibrate { tracker = tracker, candidates = candidates, n = 20, save = file, robot_module = "robots.rx130l" }
  T.eq(r.ok, true, r.reason)
  assert(r.rms_before > 1 and r.rms_after < 0.05, tostring(r))
  T.eq(r.saved, file)
  local again = calibrate { tracker = tracker, candidates = candidates, n = 20, save = file, robot_module = "robots.rx130l" }
  T.eq(again.saved, (file:gsub("%.lua$", "-001.lua")))
  local loaded = rx:calibrated(dofile(file).errors)
  local q = candidates[1]
  local a, b, t = loaded:fk(q).pos, r.robot:fk(q).pos, truth:fk(q).pos
  for i = 1, 3 do
    T.near(a[i], b[i], 1e-6, "the saved calibration is the fitted one")
    T.near(a[i], t[i], 0.1, "and close to the truth")
  end
  os.remove(file); os.remove((file:gsub("%.lua$", "-001.lua")))
end)

T.test("calibrate reads measurements from a CSV, and says what is wrong with one", function()
  local csv = dir .. "-measured.csv"
  local f = assert(io.open(csv, "w"))
  f:write("q1,q2,q3,q4,q5,q6,x,y,z\n")
  for i = 1, 20 do
    local q = candidates[i]
    local m = tracker(q)
    f:write(table.concat(q, ",") .. "," .. table.concat(m, ",") .. "\n")
  end
  f:close()
  local r = calibrate { csv = csv, save = "-", robot_module = "robots.rx130l" }
  T.eq(r.ok, true, r.reason)
  assert(r.rms_after < 0.05 and r.saved == nil, tostring(r))
  f = assert(io.open(csv, "a")); f:write("1,2,3\n"); f:close()
  local bad = calibrate { csv = csv, save = "-", robot_module = "robots.rx130l" }
  T.eq(bad.ok, false)
  assert(tostring(bad.reason):find("measured.csv:22: 3 values", 1, true), tostring(bad.reason))
  local neither = calibrate { save = "-" }
  T.eq(neither.stage, "precondition")
  os.remove(csv)
end)

T.test("every pose and the count are checked before the robot moves: limits, numbers, enough for the fit", function()
  local before = truth:state().time
  local function refused(params, want)
    params.tracker, params.save, params.robot_module = tracker, "-", params.robot_module or "robots.rx130l"
    local r = calibrate(params)
    T.eq(r.ok, false)
    T.eq(r.stage, "precondition", r.reason)
    assert(tostring(r.reason):find(want, 1, true), tostring(r.reason))
  end
  -- A candidate the robot cannot reach: J1 = 1000°, named with its index, joint and value.
  local far = { table.unpack(candidates) }
  far[5] = { 1000, 0, 90, 0, 45, 0 }
  refused({ candidates = far, n = 20 }, "candidate 5: joint J1 at 1000.000° is outside its limits [-160.0°, 160.0°]")
  -- Not a number: named, not a panic in the fit.
  local nan = { table.unpack(candidates) }
  nan[7] = { 0, 0 / 0, 90, 0, 45, 0 }
  T.raises(function() calibrate { candidates = nan, n = 20, tracker = tracker, save = "-", robot_module = "robots.rx130l" } end,
    "param 'candidates' has NaN at [7][2]")
  -- n = 6 is in the param's range but too few for the parameters these candidates identify.
  refused({ candidates = candidates, n = 6 }, "n = 6 poses are too few")
  -- In simulation the engine runs the truth: without robot_module it would calibrate it against itself.
  refused({ candidates = candidates, n = 20, robot_module = "" }, "give robot_module")
  T.eq(truth:state().time, before, "nothing ran")
  -- robot:calibrate names a pose that is not a number rather than panicking in the SVD.
  local poses, measured = {}, {}
  for i = 1, 20 do poses[i], measured[i] = candidates[i], tracker(candidates[i]) end
  poses[3] = { 0, 0, 0 / 0, 0, 45, 0 }
  T.raises(function() rx:calibrate { poses = poses, measured = measured } end, "pose 3", "element 3 is NaN")
end)

return T.summary()
