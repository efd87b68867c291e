-- The sweep library's tests: `morc test examples/libs/sweep` (virtual clock, simulated axes).
local T = require "morc.testing"
local lib = morc.lib.load "sweep"
local sweep = lib.skills.sweep

T.test("the library loads with its manifest and skill", function()
  T.eq(lib.name, "sweep")
  T.eq(lib.version, "1.0.0")
  T.eq(rawequal(require "lib.sweep", lib), true, "require gives the same library")
  T.eq(morc.skills()[1].name, "sweep")
end)

T.test("the bandwidth is where the velocity limit bites: 2π·f·a = v_max", function()
  -- The simulated axes move at most 3 rad/s: with a = 0.1 rad that is 4.77 Hz.
  local r = sweep { axis = 2, amplitude = 0.1, f0 = 0.5, f1 = 10, duration = 4 }
  T.eq(r.ok, true, r.reason)
  local limit = 3 / (2 * math.pi * 0.1)
  -- Clipping starts at the limit; the error then takes a little while to exceed 0.01 rad.
  assert(r.bandwidth > limit and r.bandwidth < 1.25 * limit, ("bandwidth %g Hz, limit %g Hz"):format(r.bandwidth, limit))
  local strict = sweep { axis = 2, amplitude = 0.1, f0 = 0.5, f1 = 10, duration = 4, tolerance = 1e-9 }
  -- The first clipped sample comes at the first velocity peak (zero crossing) past the limit.
  T.near(strict.bandwidth, limit, 0.15, "bandwidth at the first clipped sample")
  T.eq(r.samples, 4000)
  T.near(r.duration, 4.5, 1e-9, "duration: settling and the sweep")
  assert(tostring(r):find("^sweep ✓  4.5 s   bandwidth [45]%.%d%d Hz"), tostring(r))
end)

T.test("a small amplitude follows the whole sweep", function()
  local r = sweep { amplitude = 0.01, f1 = 5, duration = 1 }
  T.eq(r.ok, true, r.reason)
  T.eq(r.bandwidth, nil)
end)

T.test("below the required bandwidth the skill fails in evaluate", function()
  local r = sweep { amplitude = 0.5, min_bandwidth = 5, duration = 2 }
  T.eq(r.ok, false)
  T.eq(r.stage, "evaluate")
end)

T.test("params and precondition are checked before anything moves", function()
  T.raises(function() sweep { axis = 7 } end, "sweep: param 'axis' = 7 is out of range [1, 6]")
  local r = sweep { f0 = 5, f1 = 2 }
  T.eq(r.stage, "precondition")
end)

return T.summary()
