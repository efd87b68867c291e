-- examples/direct_teaching.lua — direct teaching on the dual-arm stacker, as in the
-- admittance-control paper: the operator (simulated: r:sim_hand) takes the left arm's handle
-- and guides the wrist through five points, pressing the teach button at each; the points are
-- saved to a file a person can edit, read back, and replayed — by trapezoidal PTP from point
-- to point, then as one continuous path of quintic segments.
--
--   morc run examples/direct_teaching.lua
local r = require "robots.stacker"
local teach = morc.lib.load("teach").skills
local points_file = require "lib.teach.helpers.points"

local start = { 90, 400, -60, 400, 60 }
morc.use_robot(r, { q0 = start })

-- Where the operator takes the wrist: five poses with the tool's orientation unchanged
-- (θ1 + θ3 = 30°), turned into the wrist positions the hand pulls towards.
local targets = {}
for _, q in ipairs { { 80, 450, -50 }, { 70, 520, -40 }, { 95, 480, -65 }, { 100, 380, -70 }, { 85, 420, -55 } } do
  targets[#targets + 1] = r:fk({ q[1], q[2], q[3], 400, 60 }, "left_tool").pos
end
r:sim_hand {
  { release = true, enable = true, time = 0.2 },   -- hands on, not pushing: the sensor is zeroed
  { tour = targets, stiffness = 400, damping = 60, max_force = 25, tolerance = 1, dwell = 0.3, time = 20 },
  { release = true, enable = false, time = 1 },     -- lets go of the switch: guiding ends
}

-- 1. Guide and teach.
local g = teach.guide { group = "left", record = true }
assert(g.ok, g.reason)
print(("guided: %d points taught, recorded to %s, plotted to %s"):format(g.taught, g.recording, plot(g.recording, { "adm.x", "adm.f", "adm.taught" })))

-- 2. Save them, as a person would keep them, and read them back: beside the recordings
-- (morc.record_dir), under the next free name when an earlier run's file is there.
local file = points_file.save(g.points, (morc.record_dir or "runs") .. "/taught_points.csv", r, "left")
local points = points_file.load(file, r)
print(("saved to %s and read back: %d points"):format(file, #points))

-- 3. Replay: PTP from point to point, then one continuous path.
local ptp = teach.replay { points, mode = "ptp", frame = "left_tool" }
assert(ptp.ok, ptp.reason)
print(("replay by PTP: %.2f s, max deviation %.4f mm"):format(ptp.motion_time, ptp.deviation))
morc.lib.load("motion").skills.ptp(start)
local path = teach.replay { points, mode = "path", frame = "left_tool" }
assert(path.ok, path.reason)
print(("replay as one quintic path: %.2f s, max deviation %.4f mm"):format(path.motion_time, path.deviation))
print(("direct teaching: %d points taught, replay max deviation %.3f mm"):format(#points, math.max(ptp.deviation, path.deviation)))
