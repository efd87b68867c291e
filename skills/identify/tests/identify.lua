-- `morc test skills/identify`
local T = require "morc.testing"
local identify = morc.lib.load("identify").skills.identify
local rx = require "robots.rx130l"
-- The runs' recordings go to a scratch folder, not the caller's runs/.
morc.record_dir = (os.getenv("TMPDIR") or "/tmp") .. "/morc-identify-tests"

local truth = morc.dynid.perturbed(rx, { seed = 5 })
morc.use_robot(truth)

local function tmp()
  local path = os.tmpname()
  os.remove(path)
  return path .. ".lua"
end

T.test("identify excites, records, estimates and saves the robot's base parameters", function()
  local path = tmp()
  local quick = { robot_module = "robots.rx130l", order = 3, frequency = 0.25, periods = 1, evaluations = 150, save = path }
  local r = identify(quick)
  T.eq(r.ok, true, r.reason)
  T.eq(r.count, 52)
  -- Noise-free on the simulated plant: the model fits the measured torque to rounding.
  assert(r.residual < 1e-6, r.residual)
  T.eq(r.saved, path)
  local saved = dofile(path)
  T.eq(#saved.parameters, 52)
  assert(tostring(r):find("52 base parameters, condition number", 1, true), tostring(r))
  -- Identifying again never replaces the file: the next free name beside it.
  local again = identify(quick)
  T.eq(again.saved, (path:gsub("%.lua$", "-001.lua")))
  os.remove(path); os.remove(again.saved); os.remove(r.recording); os.remove(again.recording)
end)

T.test("an unknown robot module is refused before anything moves", function()
  local r = identify { robot_module = "robots.nope", save = "-" }
  T.eq(r.ok, false)
  assert(tostring(r.reason):find("cannot load robot module 'robots.nope'", 1, true), tostring(r.reason))
end)

return T.summary()
