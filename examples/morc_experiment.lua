-- examples/morc_experiment.lua — the MoRC experiment on the simulated KR 16-2 with a 16 kg load:
-- a PTP of axes A1–A3 by 5° ending at {0, -90, 90, 0, 0, 0}°, once with rigid-body
-- feed-forward and once without, both recorded; the tracking errors are compared.
-- Two assemblies in one program, swapped on the running engine (the robot holds between them).
--
--   morc run examples/morc_experiment.lua
local kr16 = require("robots.kr16"):with_payload { mass = 16, com = { 0, 0, 100 } }

local target = { 0, -90, 90, 0, 0, 0 }
local start = { -5, -95, 85, 0, 0, 0 }
morc.use_robot(kr16, { q0 = start })
print(("%s on %s"):format(kr16.name, tostring(morc.engine)))

-- A PTP to `goal` in morc's standard motion assembly (trajectory → drives, monitor); with
-- `feed_forward` the model's torque for the reference goes to the drives too.
local motion_assembly = require "stdlib.assemblies.motion"
local function motion(name, goal, feed_forward, record)
  return motion_assembly(kr16, "ptp", { target = goal, settle = 0.3 },
    { name = name, feed_forward = feed_forward, max_error = 2, record = record, notes = name })
end

local function run(a)
  local r = morc.engine:run(a)
  assert(r.ok, tostring(r))
  return r
end

local with_ff = motion("ptp-feedforward", target, true, true)
local without_ff = motion("ptp-feedback-only", target, false, true)
local back = motion("return", start, true, false)

local results = {}
for _, a in ipairs { with_ff, without_ff } do
  local r = run(a)
  results[a.name] = r
  print(("%-18s %s  %.3f s  %s"):format(a.name, r.reason, r.duration, r.recordings[1] or "(not recorded)"))
  run(back)  -- back to the start for the next run
end

local function peak(r, axis) return math.deg(r.data["mon.peak_error"][axis]) end
local ff, fb = results["ptp-feedforward"], results["ptp-feedback-only"]
print("peak tracking error (°)          A1        A2        A3        A4        A5        A6")
for _, row in ipairs { { "with feed-forward", ff }, { "feedback only", fb } } do
  local cells = {}
  for axis = 1, 6 do cells[axis] = ("%9.5f"):format(peak(row[2], axis)) end
  print(("  %-22s %s"):format(row[1], table.concat(cells, " ")))
end
-- On a bus the monitor compares q with the reference of the bus's latency earlier (docs/robots.md).
local delay = ff.data["mon.error_delay"]
if delay > 0 then print(("(tracking error against the reference %d cycles earlier: the bus's latency)"):format(delay)) end
local peak_ff, peak_fb = math.deg(ff.data["mon.peak_error_max"]), math.deg(fb.data["mon.peak_error_max"])
print(("feed-forward reduces the peak tracking error %.1f×: %.5f° → %.5f°"):format(peak_fb / peak_ff, peak_fb, peak_ff))
print(("result: peak_ff_deg=%.9g peak_fb_deg=%.9g"):format(peak_ff, peak_fb))
