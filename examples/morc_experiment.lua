-- examples/morc_experiment.lua — the MoRC experiment as the paper ran it, on the simulated
-- KR 16-2 with elastic gears on A1–A3 (robots/kr16_elastic.lua) and a 16 kg load: a 5° PTP of
-- A1–A3 ending at {0, -90, 90, 0, 0, 0}°, Bessel-filtered, run once per feed-forward variant —
-- none, rigid-body (rnea) and elastic (elastic_feed_forward) — each its own assembly, swapped in
-- on the running engine (the robot holds between them). A simulated laser tracker measures the
-- tool; every run is recorded, and the comparison is read back from the recordings: the tool's
-- residual oscillation after the reference has arrived, plotted as the paper's Fig. 8.
--
--   morc run examples/morc_experiment.lua          (and unchanged: morc --bus sim run …)
local robot = require("robots.kr16_elastic"):with_payload { mass = 16, com = { 0, 0, 100 } }

local target = { 0, -90, 90, 0, 0, 0 }
local start = { -5, -95, 85, 0, 0, 0 }
local FILTER = 8        -- the reference's Bessel low-pass (Hz): smooth to its 4th derivative
local SETTLE = 0.6      -- how long each run goes on after the reference arrived (s)
local TRACKER = { rate = 1000, noise = 0.005, seed = 1 }  -- 1 kHz, σ = 5 µm per axis
morc.use_robot(robot, { q0 = start })
print(("%s on %s"):format(robot.name, tostring(morc.engine)))

local motion_assembly = require "stdlib.assemblies.motion"
local takes = require "stdlib.assemblies.base_inputs"  -- on the bus the drives derive their velocity feed-forward
local RECORD = { "trk.pos", "traj.tcp", "robot.q", "mon.error" }

--- The PTP to `goal` with feed-forward `ff` ("none", "rigid", "elastic"), the tracker, recorded.
local function experiment(ff, goal)
  local ptp = { target = goal, filter = FILTER, settle = SETTLE }
  local a
  if ff == "elastic" then
    -- The links' reference through the inverse elastic model to the motors (the drives' side).
    a = morc.assembly { "ptp-elastic-ff" }
    robot:add(a, "traj", "ptp", ptp)
    robot:add(a, "ff", "elastic_feed_forward")
    robot:add(a, "mon", "monitor", { max_error = 2 })
    -- Planned in the links' space: from where the links rest (the motors read, the gears' sag off).
    robot:add(a, "links", "elastic_links")
    a:connect("robot.q", "links.theta")
    a:connect("links.q", "traj.start")
    for _, p in ipairs { "q", "qd", "qdd" } do a:connect("traj." .. p, "ff." .. p) end
    a:connect("ff.q", "robot.q_cmd")
    if takes("qd_ff") then a:connect("ff.qd", "robot.qd_ff") end
    a:connect("ff.tau", "robot.tau_ff")
    a:connect("ff.q", "mon.q_ref")
    a:connect("robot.q", "mon.q")
    a:connect("robot.qd", "mon.qd")
    a:connect("robot.tau", "mon.tau")
  else
    a = motion_assembly(robot, "ptp", ptp, { name = ff == "rigid" and "ptp-rigid-ff" or "ptp-no-ff", feed_forward = ff == "rigid", max_error = 2 })
  end
  robot:add(a, "trk", "tracker", TRACKER)
  a:connect("robot.q_link", "trk.q")
  local signals = { table.unpack(RECORD) }
  signals[#signals + 1] = "robot.q_link"
  signals.notes = "MoRC experiment, feed-forward: " .. ff
  a:record(signals)
  return a
end

local function run(a)
  local r = morc.engine:run(a)
  assert(r.ok, tostring(r))
  return r
end

local back = motion_assembly(robot, "ptp", { target = start }, { name = "return", feed_forward = true })
local variants = { "none", "rigid", "elastic" }
local runs = {}
for _, ff in ipairs(variants) do
  local r = run(experiment(ff, target))
  runs[ff] = r
  print(("%-8s %s  %s"):format(ff, r.reason, r.recordings[1] or "(not recorded)"))
  run(back)  -- back to the start for the next run
end

--- From a recording: time from the reference's arrival (s), how far the tool's way to rest is
--- from the reference's way to its end (mm), and A1's motor and link angles from the target (°).
local function read_back(path)
  local rec = morc.read_recording(path, { "trk.pos", "traj.tcp", "robot.q", "robot.q_link" })
  local s, time = rec.signals, rec.time
  local n = #time
  local pos, ref = s["trk.pos"].columns, s["traj.tcp"].columns
  -- The reference arrived when its tool came within 0.1 mm of its end.
  local arrival = n
  for k = n, 1, -1 do
    local d = math.sqrt((ref[1][k] - ref[1][n]) ^ 2 + (ref[2][k] - ref[2][n]) ^ 2 + (ref[3][k] - ref[3][n]) ^ 2)
    if d > 1e-4 then break end
    arrival = k
  end
  -- Where the tool came to rest: the mean of the tracker's last 100 ms.
  local rest, m = { 0, 0, 0 }, 0
  for k = n - 99, n do
    m = m + 1
    for i = 1, 3 do rest[i] = rest[i] + pos[i][k] end
  end
  for i = 1, 3 do rest[i] = rest[i] / m end
  local out = { t = {}, distance = {}, motor = {}, link = {}, residual = 0, arrival = time[arrival] - time[1] }
  for k = 1, n do
    -- The tool's way to its rest against the reference's way to its end: the oscillation, the
    -- gears' static sag (which only elastic feed-forward corrects) left out.
    local e = {}
    for i = 1, 3 do e[i] = (pos[i][k] - rest[i]) - (ref[i][k] - ref[i][n]) end
    local d = 1e3 * math.sqrt(e[1] ^ 2 + e[2] ^ 2 + e[3] ^ 2)
    out.t[k] = time[k] - time[arrival]
    out.distance[k] = d
    out.motor[k] = math.deg(s["robot.q"].columns[1][k]) - target[1]
    out.link[k] = math.deg(s["robot.q_link"].columns[1][k]) - target[1]
    if k >= arrival then out.residual = math.max(out.residual, d) end
  end
  return out
end

local read = {}
for _, ff in ipairs(variants) do read[ff] = read_back(runs[ff].recordings[1]) end

print("tool after the reference arrived (tracker, read back from the recordings):")
for _, ff in ipairs(variants) do
  print(("  %-8s residual peak %.3f mm   (arrived %.3f s into the run)"):format(ff, read[ff].residual, read[ff].arrival))
end
-- On a bus the monitor compares q with the reference of the bus's latency earlier (docs/robots.md).
local delay = runs.rigid.data["mon.error_delay"]
if delay > 0 then print(("(tracking error against the reference %d cycles earlier: the bus's latency)"):format(delay)) end
local peak_ff, peak_fb = math.deg(runs.rigid.data["mon.peak_error_max"]), math.deg(runs.none.data["mon.peak_error_max"])
print(("rigid-body feed-forward reduces the peak tracking error of the motors %.1f×: %.5f° → %.5f°"):format(peak_fb / peak_ff, peak_fb, peak_ff))

-- Fig. 8: near the end of the motion, the tool's way to rest against the reference's, and A1's
-- motor and link angles (from the target), per variant, on one time axis from the arrival.
local x, lines_distance, lines_a1 = {}, {}, {}
local first = read.none.arrival - 0.15
local function window(r)
  local picked = {}
  for k, t in ipairs(r.t) do if t >= -0.1 and t <= SETTLE - 0.1 then picked[#picked + 1] = k end end
  return picked
end
local picked = { none = window(read.none), rigid = window(read.rigid), elastic = window(read.elastic) }
local len = math.min(#picked.none, #picked.rigid, #picked.elastic)
for i = 1, len do x[i] = read.none.t[picked.none[i]] end
for _, ff in ipairs(variants) do
  local d, motor, link = {}, {}, {}
  for i = 1, len do
    local k = picked[ff][i]
    d[i], motor[i], link[i] = read[ff].distance[k], read[ff].motor[k], read[ff].link[k]
  end
  lines_distance[#lines_distance + 1] = { ff, d }
  if ff ~= "none" then
    lines_a1[#lines_a1 + 1] = { ff .. " motor", motor }
    lines_a1[#lines_a1 + 1] = { ff .. " link", link }
  end
end
local _ = first
local picture = plot({
  title = "MoRC experiment: KR 16-2 (elastic A1–A3), 16 kg, 5° PTP on A1–A3, Bessel " .. FILTER .. " Hz",
  x = x, x_label = "time from the reference's arrival [s]",
  panels = {
    { name = "tool's way to rest against the reference's (tracker)", unit = "mm", lines = lines_distance },
    { name = "A1 from the target", unit = "°", lines = lines_a1 },
  },
}, "morc_experiment.png")
print("plotted: " .. picture)

local none, rigid, elastic = read.none.residual, read.rigid.residual, read.elastic.residual
print(("result: residual_none_mm=%.9g residual_rigid_mm=%.9g residual_elastic_mm=%.9g peak_ff_deg=%.9g peak_fb_deg=%.9g"):format(none, rigid, elastic, peak_ff, peak_fb))
print(("morc experiment: tool residual peak rigid %.3f mm, elastic %.3f mm (%.1f× lower)"):format(rigid, elastic, rigid / elastic))
