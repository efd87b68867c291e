-- examples/hand_guiding.lua — the admittance-control paper's hand-guiding experiment on the
-- dual-arm stacker: the operator pushes the left arm's wrist with 10 N along x, lets go, then
-- pushes 10 N along z. The admittance law M_d dV/dt + D_d V = F with M_d = 1 kg, D_d = 50 N·s/m
-- (teach.admittance, a Lua component at the 1 kHz bus rate) should give a velocity settling at
-- F/D = 0.2 m/s with the time constant M/D = 20 ms, no overshoot, and the tool's orientation
-- held (null-space projection). The operator is simulated (r:sim_hand); the F/T sensor reads
-- its push with the gripper's weight, an offset and noise, all of which the component removes.
--
-- Measured on the arm as it moved (forward kinematics of the measured joints): the settled
-- velocity along the push (mean over its last 100 ms), the time constant (slope of
-- log(v_ss − v) over the 10–90 % rise) and the orientation's largest drift.
--
--   morc run examples/hand_guiding.lua
local r = require "robots.stacker"
local drive = require "stdlib.assemblies.drive"
local takes = require "stdlib.assemblies.base_inputs"
local cmd = require "stdlib.motion.command"
morc.lib.load "teach"

-- With its orientation held, the arm's wrist can move up and down, and sideways only on a
-- circle of radius a1 = 105 mm about the platform axis (the platform and the arm's joint turn
-- against each other): a push along x starts along the circle's tangent, which then turns
-- away at v/a1 ≈ 1.9 rad/s, so the velocity along x peaks and falls. The law's figures are
-- taken from the vertical push; the sideways one shows the orientation held.
local start = { 90, 400, -60, 400, 60 }
morc.use_robot(r, { q0 = start })

local has_ft = false
for _, port in ipairs(morc.engine.outputs) do has_ft = has_ft or port == "ft" end
if not has_ft then
  error("hand guiding needs the robot's wrist F/T sensor and handle as the engine's ports (ft, enable, button): the simulated robot has them; on --bus sim they are not wired to the robot yet (docs/teaching.md)", 0)
end

local F, PUSH, REST, ZERO = 10, 0.2, 0.3, 0.1
local M, D = 1, 50  -- the law's mass (kg) and damping (N·s/m)
local T = morc.engine.period
local duration = r:sim_hand {
  { release = true, enable = true, time = ZERO + 0.05 },   -- hands on the handle, not pushing: the sensor is zeroed
  { push = { F, 0, 0 }, time = PUSH },
  { release = true, enable = true, time = REST },
  { push = { 0, 0, F }, time = PUSH },
  { release = true, enable = true, time = REST },
}

local a = morc.assembly { "hand guiding", duration = duration }
a:add("adm", "teach.admittance", { n = r.dof, np = r.dof, robot = r, group = "left", mass = M, damping = D, zero_time = ZERO })
a:connect("robot.q", "adm.q")
a:connect("robot.ft", "adm.ft")
a:connect("robot.enable", "adm.enable")
a:connect("robot.button", "adm.button")
drive(a, r, "adm", takes("tau_ff"), "adm.tau")
a:add("pq", "probe", { n = r.dof }); a:connect("robot.q", "pq.u")
a:add("pf", "probe", { n = 3 }); a:connect("adm.f", "pf.u")
a:add("pv", "probe", { n = 3 }); a:connect("adm.v", "pv.u")
a:record { "robot.q", "robot.ft", "adm.*", notes = ("hand guiding: %g N along x, then z; M_d = %g, D_d = %g"):format(F, M, D) }
local run = morc.engine:run(a)
assert(run.ok, run.reason)

-- The wrist's path and orientation from the measured joints.
local q, n = run.data["pq.u"], r.dof
local steps = #q // n
-- The orientation's drift (°, largest roll/pitch/yaw change) at every step, measured.
local pos, drift, rpy0, drifts = {}, 0, nil, {}
for k = 1, steps do
  local qk = {}
  for i = 1, n do qk[i] = q[(k - 1) * n + i] end
  local p = r:fk(cmd.degrees(qk, r), "left_tool")
  pos[k] = p.pos
  rpy0 = rpy0 or p.rpy
  local dk = 0
  for i = 1, 3 do dk = math.max(dk, math.abs(p.rpy[i] - rpy0[i])) end
  drifts[k], drift = dk, math.max(drift, dk)
end

--- The push starting at t0 (s) along axis: the settled velocity (m/s, mean over the push's
--- last 30 ms, after 8τ), the time constant (ms: ln(v_ss − v) falls with slope −1/τ, least
--- squares over the 10–90 % rise) and the peak velocity.
local function response(t0, axis)
  local v = {}
  for k = math.floor(t0 / T + 0.5) + 1, math.floor((t0 + PUSH) / T + 0.5) do
    v[#v + 1] = (pos[k + 1][axis] - pos[k][axis]) / 1000 / T
  end
  local settled, count = 0, math.floor(0.03 / T)
  for k = #v - count + 1, #v do settled = settled + v[k] end
  settled = settled / count
  local sx, sy, sxx, sxy, m = 0, 0, 0, 0, 0
  for k = 1, #v do
    local share = v[k] / settled
    if share > 0.1 and share < 0.9 then
      local t, y = k * T, math.log(settled - v[k])
      sx, sy, sxx, sxy, m = sx + t, sy + y, sxx + t * t, sxy + t * y, m + 1
    end
  end
  local slope = (m * sxy - sx * sy) / (m * sxx - sx * sx)
  local peak = 0
  for k = 1, #v do peak = math.max(peak, v[k]) end
  return settled, -1000 / slope, peak
end

local vx, tx, px = response(ZERO + 0.05, 1)
local vz, tz, pz = response(ZERO + 0.05 + PUSH + REST, 3)
print(("push along x: v_ss %.4f m/s, tau %.2f ms, peak %.4f m/s"):format(vx, tx, px))
print(("push along z: v_ss %.4f m/s, tau %.2f ms, peak %.4f m/s"):format(vz, tz, pz))
-- The plot: the law's force and velocity, and the drift as measured (what the last line prints).
local time, lines = {}, function(probe) return { { "x", {} }, { "y", {} }, { "z", {} } }, run.data[probe] end
local f, fdata = lines("pf.u")
local v, vdata = lines("pv.u")
for k = 1, steps do
  time[k] = (k - 1) * T
  for i = 1, 3 do f[i][2][k], v[i][2][k] = fdata[(k - 1) * 3 + i], vdata[(k - 1) * 3 + i] end
end
local picture = plot({
  title = ("hand guiding: %g N along x, then z; M_d = %g kg, D_d = %g N·s/m"):format(F, M, D), x = time, x_label = "time [s]",
  panels = {
    { name = "adm.f", unit = "N", lines = f },
    { name = "adm.v", unit = "m/s", lines = v },
    { name = "orientation drift, measured", unit = "°", lines = { { "drift", drifts } } },
  },
}, (run.recordings[1]:gsub("%.%w+$", ".png")))  -- beside the recording, never over an earlier picture
print(("recorded to %s, plotted to %s"):format(run.recordings[1], picture))
-- The law's figures from the vertical push, where the arm can follow any velocity; the
-- sideways one runs on the circle (its velocity along x falls as the path turns away). The
-- law settles at F/D with the time constant M/D.
print(("hand guiding: v_ss %.3f m/s (expected %.3f), tau %.1f ms (expected %.1f), orientation drift %.4f deg"):format(vz, F / D, tz, 1000 * M / D, drift))
