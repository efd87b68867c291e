-- Dynamic identification (morc.dynid) on the simulated RX130L against a hidden true robot: the
-- regressor with its drive columns is the simulated plant's torque, friction and motor inertia
-- included; noise-free, the identified base parameters are the truth's; bad input says what to do.
local T = require "morc.testing"
local rx = require "robots.rx130l"
morc.lib.load "identify"
local run = require "lib.identify.helpers.run"
morc.record_dir = (os.getenv("CARGO_TARGET_TMPDIR") or "/tmp") .. "/morc-lua-identification"

local truth = morc.dynid.perturbed(rx, { seed = 11, inertial = 0.1, drive = 0.2 })
morc.use_robot(truth)
local id = morc.dynid.base(rx)
-- A short excitation: 3 harmonics of 0.25 Hz, one 4 s period.
local e = id:excite { order = 3, frequency = 0.25, evaluations = 200, restarts = 1 }
local r = run(rx, e, { periods = 1 })
assert(r.ok, r.reason)
local data = morc.dynid.read(r.recording)

T.test("the base parameters of the RX130L: 52 of 78, the dropped ones named", function()
  T.eq(id.count, 52)
  T.eq(#id.standard_names, 6 * 10 + 6 * 3)
  local dropped = {}
  for _, d in ipairs(id.dropped) do dropped[d.name] = d end
  -- The first link turns about its own axis only: its mass and first moments act on nothing,
  -- the motor's inertia of A1 adds to its Izz.
  T.eq(dropped["link1.m"].combined, false)
  T.eq(dropped["J1.Ia"].combined, true)
  assert(id.names[1]:find("link1.Izz", 1, true) and id.names[1]:find("J1.Ia", 1, true), id.names[1])
end)

T.test("the regressor with the drive columns is the simulated plant's torque, friction included", function()
  -- Y_b·β of the true robot at every recorded sample against what its drives applied.
  local v = id:validate(id:parameters(truth), data)
  local worst, largest = 0, 0
  for k, t in ipairs(v.measured) do
    worst = math.max(worst, math.abs(v.predicted[k] - t))
    largest = math.max(largest, math.abs(t))
  end
  assert(worst <= 1e-9 * largest, ("%.3g N·m off (largest torque %.3g)"):format(worst, largest))
  -- Without the truth's friction and motor inertia the torques are not the plant's.
  local nominal = id:validate(id:parameters(rx), data)
  assert(nominal.rms_error > 0.5, nominal.rms_error)
  -- Y·π with π the full parameters, Coulomb friction's column the sign of the velocity.
  local Y = id:regressor({ 0.1, -0.2, 0.3, 0.4, -0.5, 0.6 }, { 0.5, -1, 0, 1, 0.2, -0.3 }, { 1, 2, 3, -1, -2, 0.5 })
  T.eq(Y.rows, 6); T.eq(Y.cols, 78)
  T.eq(Y:get(2, 60 + 3 * 1 + 3), -1); T.eq(Y:get(3, 60 + 3 * 2 + 3), 0); T.eq(Y:get(4, 60 + 3 * 3 + 1), -1)
end)

T.test("noise-free, the identified base parameters are the truth's within 1 %", function()
  local est = id:estimate(r.recording)
  local true_beta = id:parameters(truth)
  for i, b in ipairs(est.beta) do
    local t = true_beta[i]
    assert(math.abs(b - t) <= 0.01 * math.abs(t), ("%s: %.6g, true %.6g"):format(id.names[i], b, t))
  end
  assert(est.condition > 1 and est.condition < 1e5, est.condition)
end)

T.test("the exciting trajectory starts at rest within the limits", function()
  assert(e.condition > 1 and e.condition < 1e4, e.condition)
  T.near(id:condition(e), e.condition, 1e-6 * e.condition, "the condition number along it")
  for j, q in ipairs(e.start) do
    local l = rx.joints[j].limits.pos
    assert(q > l[1] and q < l[2], ("joint %d starts at %.1f°"):format(j, q))
  end
end)

T.test("parameters are saved, never over an existing file", function()
  local est = id:estimate(data, { every = 4, weighted = false })
  local path = os.tmpname()
  os.remove(path)
  path = path .. ".lua"
  T.eq(id:save(path, est), path)
  local second = id:save(path, est)
  T.eq(second, path:gsub("%.lua$", "-001.lua"))
  local saved = dofile(path)
  T.eq(saved.robot, rx.name)
  T.eq(#saved.parameters, id.count)
  T.eq(saved.parameters[1].name, id.names[1])
  T.near(saved.parameters[1].value, est.beta[1], 1e-12 * math.abs(est.beta[1]))
  os.remove(path); os.remove(second)
end)

T.test("bad input says what to give", function()
  T.raises(function() morc.dynid.base("rx130l") end, "morc.dynid.base: give a robot")
  T.raises(function() id:excite { order = 1 } end, "order 1: give 2 … 20 harmonics")
  T.raises(function() id:estimate({ q = { 0, 0, 0, 0, 0, 0 }, qd = { 0, 0, 0, 0, 0, 0 }, tau = { 0, 0, 0, 0, 0, 0 }, dt = 0.001 }) end,
    "record a longer run")
  T.raises(function() id:estimate({ q = {}, qd = {} }) end, "the data needs tau")
  T.raises(function() id:validate({ 1, 2 }, data) end, "2 base parameters given, robot 'Stäubli RX130L' has 52")
  T.raises(function() morc.dynid.read("no/such/file.h5") end, "morc.dynid.read")
  -- A run at rest excites nothing: the estimate names what is missing.
  local still = { q = {}, qd = {}, tau = {}, dt = 0.001 }
  for k = 1, 200 do for j = 1, 6 do still.q[#still.q + 1] = 0.1 * j; still.qd[#still.qd + 1] = 0; still.tau[#still.tau + 1] = j end end
  T.raises(function() id:estimate(still) end, "does not excite")
end)

os.remove(r.recording)
return T.summary()
