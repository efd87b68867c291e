-- The monitor on a bus compares q with the reference delayed by the bus's known latency
-- (Base:latency, 2 cycles on the virtual segment), so its following error is the robot's, of
-- the same order as on the direct simulation, not the bus's delay (issue 25, item 7).
local T = require "morc.testing"
local kr16 = require("robots.kr16"):with_payload { mass = 16, com = { 0, 0, 100 } }
local motion_assembly = require "stdlib.assemblies.motion"

local start, target = { -5, -95, 85, 0, 0, 0 }, { 0, -90, 90, 0, 0, 0 }

-- The MoRC experiment's PTP with feed-forward on a fresh engine of `bus` ("sim", or nil: direct).
local function peak_with_feed_forward(bus)
  morc.use_robot(kr16, { q0 = start, bus = bus })
  local a = motion_assembly(kr16, "ptp", { target = target, settle = 0.3 }, { name = "ptp-ff", feed_forward = true, max_error = 2 })
  local r = morc.engine:run(a)
  T.eq(r.ok, true, tostring(r))
  return math.deg(r.data["mon.peak_error_max"]), r
end

T.test("the monitor's error on --bus sim is of the same order as on the direct simulation", function()
  local direct, rd = peak_with_feed_forward(nil)
  local on_bus, rb = peak_with_feed_forward("sim")
  -- Comparing with the current reference, the bus's 2 cycles read as ~17× the direct error.
  assert(on_bus < 3 * direct, ("peak error on the bus %.5f° vs %.5f° direct"):format(on_bus, direct))
  T.eq(rd.data["mon.error_delay"], 0)
  T.eq(rb.data["mon.error_delay"], 2)
end)

return T.summary()
