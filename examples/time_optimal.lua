-- examples/time_optimal.lua — the simulated Stäubli RX130L runs a LIN and a PTP twice: as
-- programmed (the planner's profiles within the Cartesian and joint limits), then time-optimally
-- (TOPP-RA along the same line within the joints' velocity limits and 80 % of their torque
-- limits through the robot's dynamics — the rest is the drives' reserve for following — and the
-- tool's speed limit on the LIN; what `ptp`/`lin` with `time_optimal = true` run).
-- Every run is watched at each tick: reference velocity and acceleration, the model's torque
-- for the reference (what the drives are asked for), and the drives' measured torque.
--
--   morc run examples/time_optimal.lua
local rx = require "robots.rx130l"
local motion = require "stdlib.assemblies.motion"

local start = { -30, 10, 80, 0, 60, 0 }
local ptp_goal = { 60, -20, 110, 90, 30, 120 }
morc.use_robot(rx, { q0 = start })

-- The limits in SI, as the run's signals come (rad, rad/s, rad/s², N·m).
local vel, acc, torque = {}, {}, {}
for i, j in ipairs(rx.joints) do
  vel[i], acc[i], torque[i] = math.rad(j.limits.vel), math.rad(j.limits.acc), j.limits.torque
end

-- Runs `kind` from where the robot is; returns its duration and the largest share of each limit
-- it used (1 = at the limit).
local function run(kind, params, record)
  local a = motion(rx, kind, params, { name = kind, max_error = 2, record = record })
  for _, p in ipairs { "qd", "qdd", "tau_ref", "tau" } do a:add("p_" .. p, "probe", { n = 6 }) end
  a:connect("traj.qd", "p_qd.u"); a:connect("traj.qdd", "p_qdd.u")
  a:connect("ff.tau", "p_tau_ref.u"); a:connect("robot.tau", "p_tau.u")
  local r = morc.engine:run(a)
  assert(r.ok, ("%s: %s"):format(kind, tostring(r.reason)))
  local share = {}
  for _, p in ipairs { { "qd", vel }, { "qdd", acc }, { "tau_ref", torque }, { "tau", torque } } do
    local samples, m = r.data["p_" .. p[1] .. ".u"], 0
    for k = 1, #samples do
      local j = (k - 1) % 6 + 1
      m = math.max(m, math.abs(samples[k]) / p[2][j])
    end
    share[p[1]] = m
  end
  return r.data["traj.duration"], share, r
end

local function report(label, t, s)
  print(("%-18s %6.3f s   peak share of the limits: velocity %3.0f %%, torque asked %3.0f %%, measured %3.0f %%, acceleration %3.0f %%")
    :format(label, t, 100 * s.qd, 100 * s.tau_ref, 100 * s.tau, 100 * s.qdd))
end

-- The LIN: 900 mm across the front at a constant orientation.
local p0 = rx:fk(start)
local lin_goal = { pos = { p0.pos[1] + 300, p0.pos[2] + 850, p0.pos[3] - 100 }, rpy = p0.rpy }
local function back() morc.use_robot(rx, { q0 = start }) end

local lin_planned, s1 = run("lin", { target = lin_goal })
report("LIN as programmed", lin_planned, s1)
back()
local lin_optimal, s2 = run("time_optimal", { points = { start }, target = lin_goal, torque_scale = 0.8, acc_scale = 0 })
report("LIN time-optimal", lin_optimal, s2)
back()
local ptp_planned, s3 = run("ptp", { target = ptp_goal })
report("PTP as programmed", ptp_planned, s3)
back()
local ptp_optimal, s4, recorded = run("time_optimal", { points = { start, ptp_goal }, torque_scale = 0.8, acc_scale = 0 },
  { "traj.qd", "ff.tau", "traj.active" })
report("PTP time-optimal", ptp_optimal, s4)
-- As the paper's figures: velocities, torques and the limit ridden (traj.active: 100 + j velocity,
-- 300 + j torque of joint j) over time.
print("  plotted: " .. plot(recorded, { "traj.qd", "ff.tau", "traj.active" }))
back()
-- The same with a jerk limit: the path's acceleration ramps over 50 ms instead of switching.
local ptp_smooth, s5 = run("time_optimal", { points = { start, ptp_goal }, torque_scale = 0.8, acc_scale = 0, ramp = 0.05 })
report("  jerk-limited", ptp_smooth, s5)

-- Held: velocity and torque (asked and measured) everywhere; the acceleration limits where they
-- apply — the time-optimal motions give them up for the torque limits (acc_scale = 0), which
-- bound the accelerations through the dynamics: the paper's "dynamics as constraint".
local held = true
for k, s in ipairs { s1, s2, s3, s4, s5 } do
  held = held and s.qd <= 1.001 and s.tau_ref <= 1.001 and s.tau <= 1.001 and ((k ~= 1 and k ~= 3) or s.qdd <= 1.001)
end
assert(lin_optimal < lin_planned and ptp_optimal < ptp_planned, "the time-optimal motions must be faster")
print(("time-optimal: LIN %.2f s -> %.2f s, PTP %.2f s -> %.2f s, %s"):format(lin_planned, lin_optimal, ptp_planned, ptp_optimal,
  held and "all limits held" or "A LIMIT WAS EXCEEDED"))
