-- A first assembly: a sine reference tracked by the simulated axes,
-- with a slower supervisor, run on the engine's clock.
local a = morc.assembly { "first", duration = 2.0 }

a:add("ref",  "sine",  { n = 6, amplitude = 0.2, frequency = 0.5 })   -- every base period
a:add("gain", "gain",  { n = 6, k = 0.5 })
a:add("filt", "lowpass", { n = 6, fc = 5.0, every = 4 })              -- 4 base periods
a:connect("ref.y", "gain.u")
a:connect("gain.y", "robot.q_cmd")
a:connect("robot.q", "filt.u")

local r = morc.engine:run(a)
print(r)
assert(r.ok, r.reason)
