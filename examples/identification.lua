-- examples/identification.lua — dynamic identification of the simulated Stäubli RX130L, as a lab
-- would do it on the real arm, against a hidden "true" robot whose masses, centres of mass,
-- inertias (±10 %, 2 cm, 0.1 rad) and drive trains (motor inertia, viscous and Coulomb friction,
-- ±20 %) are off the nominal ones:
--   1. the base parameters of the RX130L's model (10 per link + 3 per drive, regrouped by QR);
--   2. an exciting trajectory: 5 harmonics of 0.1 Hz per joint, optimised for the condition
--      number of the base regressor within 80 % of the joint, speed, acceleration and torque
--      limits, every joint above the floor;
--   3. it runs twice over on the true robot (the engine's), recorded; the drives' torques get
--      measurement noise (0.25 % of each joint's torque limit, Gaussian);
--   4. weighted least squares; the parameters are saved beside the recordings;
--   5. validation on a different trajectory: the predicted torque against the measured one.
--
--   morc run examples/identification.lua
local rx = require "robots.rx130l"
morc.lib.use "motion"
morc.lib.load "identify"
local run = require "lib.identify.helpers.run"

local truth = morc.dynid.perturbed(rx, { seed = 2026, inertial = 0.1, drive = 0.2 })  -- what the lab does not know
morc.use_robot(truth)

local seed = 7
local function uniform()  -- deterministic, in (0, 1]
  seed = (seed * 1103515245 + 12345) % 2147483648
  return (seed + 1) / 2147483648
end
local function gaussian() return math.sqrt(-2 * math.log(uniform())) * math.cos(2 * math.pi * uniform()) end

-- The recording's drive torques with the current measurement's noise.
local function measured(recording)
  local d = morc.dynid.read(recording)
  for k = 1, #d.tau do
    local j = (k - 1) % d.n + 1
    d.tau[k] = d.tau[k] + 0.0025 * rx.joints[j].limits.torque * gaussian()
  end
  return d
end

-- 1. Base parameters.
local id = morc.dynid.base(rx)
local combined, inert = 0, 0
for _, d in ipairs(id.dropped) do if d.combined then combined = combined + 1 else inert = inert + 1 end end
print(("base parameters: %d of %d (%d combined into others, %d act on no torque)"):format(id.count, #id.standard_names, combined, inert))

-- 2. Exciting trajectory.
local e = id:excite { order = 5, frequency = 0.1, evaluations = 3000, restarts = 3, margin = 0.8 }
print(("exciting trajectory: %.0f s period, condition number %.1f after %d evaluations"):format(e.period, e.condition, e.evaluations))

-- 3. Run and record.
local r = run(rx, e, { periods = 2 })
assert(r.ok, r.reason)

-- 4. Estimate and save.
local est = id:estimate(measured(r.recording), { every = 2 })
local true_beta = id:parameters(truth)
print(("estimate from %d samples: torque residual σ per joint %s N·m"):format(est.samples,
  table.concat((function() local s = {} for j, x in ipairs(est.sigma) do s[j] = ("%.2f"):format(x) end return s end)(), ", ")))
-- The parameters that carry most of the torque, against the truth.
local order = {}
for i = 1, id.count do order[i] = i end
table.sort(order, function(a, b) return math.abs(true_beta[a]) > math.abs(true_beta[b]) end)
for k = 1, 8 do
  local i = order[k]
  print(("  %10.4f  (true %10.4f, σ %5.2f %%)  %s"):format(est.beta[i], true_beta[i], est.relative_std[i], id.names[i]))
end
-- Beside the recording (runs/ by default): never over an existing file.
local saved = id:save((r.recording:match("^(.*)/[^/]*$") or ".") .. "/rx130l.dynamics.lua", est)
print("parameters saved to " .. saved)

-- 5. Validate on a different trajectory.
local other = id:excite { order = 4, frequency = 0.15, evaluations = 300, restarts = 1, seed = 99, margin = 0.7 }
local rv = run(rx, other, { periods = 1 })
assert(rv.ok, rv.reason)
local v = id:validate(est, measured(rv.recording))
local joints = {}
for j, x in ipairs(v.joints) do joints[j] = ("%.1f"):format(x) end
print(("validation on a %.1f s trajectory: torque rms error per joint %s %%"):format(other.period, table.concat(joints, ", ")))
-- Measured against predicted torque, a panel per joint (the paper's validation figure).
local x, panels = {}, {}
for k = 1, v.samples do x[k] = (k - 1) * morc.engine.period end
for j = 1, rx.dof do
  local measured_j, predicted_j = {}, {}
  for k = 1, v.samples do
    measured_j[k], predicted_j[k] = v.measured[(k - 1) * rx.dof + j], v.predicted[(k - 1) * rx.dof + j]
  end
  panels[j] = { name = rx.joints[j].name .. " torque", unit = "N·m", lines = { { "measured", measured_j }, { "predicted", predicted_j } } }
end
-- Named after the validation run's recording, so a later run never draws over this picture.
local picture = rv.recording:gsub("%.[^./]*$", "") .. "-torque.png"
print("plotted: " .. plot({ title = "RX130L: measured and predicted torque on the validation trajectory", x = x, x_label = "time [s]", panels = panels }, picture))
print(("identification: %d base parameters, condition number %.1f, validation torque rms error %.2f %%"):format(id.count, e.condition, v.rms_error))
