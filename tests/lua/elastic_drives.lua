-- Elastic drive trains (issue 29, item 1): a drive with a stiffness makes the simulated arm's
-- gear a spring between motor and link. The drives measure the motors (robot.q), the links are
-- robot.q_link; at rest the links sag from the motors by the springs' deflection g(q)/K; a stiff
-- enough gear moves as the rigid arm does; a rigid robot has no link outputs and moves as before.
local T = require "morc.testing"
local kr16 = require "robots.kr16"
local motion = require "stdlib.assemblies.motion"
-- Recordings go to a scratch folder, not into the working directory.
morc.record_dir = (os.getenv("CARGO_TARGET_TMPDIR") or "/tmp") .. "/morc-lua-elastic"

--- The KR 16 with elastic gears of stiffness k (N·m/rad) and damping d on A1–A3 (k nil: rigid).
local function kr16_with(k, d)
  local joints = {}
  for i, j in ipairs(kr16.joints) do
    local drive = { slave = j.slave, gear = j.gear, counts = j.counts, armature = j.armature, viscous = j.viscous, coulomb = j.coulomb }
    if k and i <= 3 then drive.stiffness, drive.damping = k, d end
    joints[i] = { j.name, drive = drive, limits = j.limits }
  end
  return morc.robot { name = "KR 16 (k = " .. tostring(k) .. ")", model = kr16.model, joints = joints, home = kr16.home }
end

--- Runs a PTP to `target` (°) on `robot` from home; returns the probe's samples of `signal` and their count.
local function ptp_run(robot, target, signal)
  morc.use_robot(robot, { q0 = robot.home })
  local a = motion(robot, "ptp", { target = target }, { max_error = 5 })
  a:add("p", "probe", { n = robot.dof })
  a:connect(signal, "p.u")
  local r = morc.engine:run(a)
  assert(r.ok, r.reason)
  return r.data["p.u"], r.data["p.samples"]
end

T.test("a robot file's drive takes stiffness and damping, and reads them back", function()
  local r = kr16_with(4e5, 300)
  T.eq(r.joints[2].stiffness, 4e5); T.eq(r.joints[2].damping, 300); T.eq(r.joints[5].stiffness, 0)
  T.raises(function()
    morc.robot { name = "bad", model = kr16.model, joints = { { "A1", drive = { stiffness = 1e5 } }, "A2", "A3", "A4", "A5", "A6" } }
  end, "", "an elastic drive (stiffness) needs the motor's inertia")
  T.raises(function()
    morc.robot { name = "bad", model = kr16.model, joints = { { "A1", drive = { armature = 1, stiffness = -1 } }, "A2", "A3", "A4", "A5", "A6" } }
  end, "", "stiffness and damping must be finite and ≥ 0")
end)

T.test("at rest the links hang from the motors by the springs' deflection", function()
  local k = 4e5
  local r = kr16_with(k, 300)
  morc.use_robot(r, { q0 = r.home })
  local a = morc.assembly { "rest", duration = 0.2 }
  a:add("m", "probe", { n = 6 }); a:connect("robot.q", "m.u")
  a:add("l", "probe", { n = 6 }); a:connect("robot.q_link", "l.u")
  local res = morc.engine:run(a)
  local n = res.data["m.samples"]
  local q_link, q_motor = {}, {}
  for j = 1, 6 do q_link[j] = res.data["l.u"][(n - 1) * 6 + j]; q_motor[j] = res.data["m.u"][(n - 1) * 6 + j] end
  local g = r.model:gravity(q_link)
  for j = 1, 6 do
    T.near(q_motor[j], math.rad(r.home[j]), 2e-5, "motor " .. j .. " holds home (within the drives' friction dither)")
    local expected = j <= 3 and q_motor[j] - g[j] / k or q_motor[j]
    T.near(q_link[j], expected, 1e-6, "link " .. j .. " hangs by g/K")
  end
  assert(math.abs(q_link[2] - q_motor[2]) > 1e-4, "A2 carries the arm: it deflects visibly")
end)

T.test("a stiff gear moves the links as the rigid arm moves", function()
  local target = { 30, -80, 100, 0, 45, 0 }
  local rigid, n = ptp_run(kr16_with(nil), target, "robot.q")
  local stiff, m = ptp_run(kr16_with(1e8, 2e4), target, "robot.q_link")
  T.eq(m, n)
  local worst = 0
  for i = 1, n * 6 do worst = math.max(worst, math.abs(stiff[i] - rigid[i])) end
  assert(math.deg(worst) < 0.05, ("links of a 1e8 N·m/rad gear differ from the rigid arm by %.4f°"):format(math.deg(worst)))
end)

T.test("a rigid robot has no link outputs", function()
  morc.use_robot(kr16, { q0 = kr16.home })
  for _, name in ipairs(morc.engine.outputs) do assert(name ~= "q_link", "a rigid robot shows q_link") end
end)

T.test("a tracker measures the tool at its rate, with its noise, where the links put it", function()
  local k = 4e5
  local r = kr16_with(k, 300)
  morc.use_robot(r, { q0 = r.home })
  local a = morc.assembly { "measure", duration = 1 }
  r:add(a, "link", "tracker", { rate = 100, noise = 0.02, seed = 7 })
  a:connect("robot.q_link", "link.q")
  r:add(a, "motor", "tracker", { rate = 1000, noise = 0 })
  a:connect("robot.q", "motor.q")
  a:add("p", "probe", { n = 3 }); a:connect("link.pos", "p.u")
  a:add("m", "probe", { n = 3 }); a:connect("motor.pos", "m.u")
  local res = morc.engine:run(a)
  T.eq(res.data["link.measurements"], 100, "a measurement every 10 ms for 1 s")
  T.eq(res.data["motor.measurements"], 1000)
  -- Where the links put the tool, noise averaged out; the motors' angles (the encoders) put it elsewhere.
  local n, u = res.data["p.samples"], res.data["p.u"]
  local mean, var = { 0, 0, 0 }, { 0, 0, 0 }
  for t = 1, n, 10 do for i = 1, 3 do mean[i] = mean[i] + u[(t - 1) * 3 + i] / 100 end end
  for t = 1, n, 10 do for i = 1, 3 do var[i] = var[i] + (u[(t - 1) * 3 + i] - mean[i]) ^ 2 / 99 end end
  local m = res.data["m.u"]
  local motor_pos = { m[(n - 1) * 3 + 1], m[(n - 1) * 3 + 2], m[(n - 1) * 3 + 3] }
  local sag = math.sqrt((mean[1] - motor_pos[1]) ^ 2 + (mean[2] - motor_pos[2]) ^ 2 + (mean[3] - motor_pos[3]) ^ 2)
  assert(sag > 1e-4, ("the tracker sees the gears' deflection: %.4f mm"):format(sag * 1e3))
  for i = 1, 3 do
    local sigma = math.sqrt(var[i])
    assert(sigma > 0.01e-3 and sigma < 0.03e-3, ("axis %d: σ = %.4f mm, set 0.02 mm"):format(i, sigma * 1e3))
  end
  -- Held between measurements.
  T.eq(u[1], u[4]); T.eq(u[2], u[5])
end)

T.test("elastic feed-forward keeps the tool on its path at least 3× better than rigid-body feed-forward", function()
  -- The MoRC experiment's motion: a Bessel-filtered 5° PTP on A1–A3 ending at {0, −90, 90, 0, 0, 0}°, 16 kg.
  local r = kr16_with(5e5, 1000):with_payload { mass = 16, com = { 0, 0, 100 } }
  local peaks = {}
  for _, variant in ipairs { "rigid", "elastic" } do
    morc.use_robot(r, { q0 = { -5, -95, 85, 0, 0, 0 } })
    local a = morc.assembly { variant }
    r:add(a, "traj", "ptp", { target = { 0, -90, 90, 0, 0, 0 }, filter = 8, settle = 0.6 })
    a:connect("robot.q", "traj.start")
    r:add(a, "ff", variant == "rigid" and "rnea" or "elastic_feed_forward")
    for _, p in ipairs { "q", "qd", "qdd" } do a:connect("traj." .. p, "ff." .. p) end
    if variant == "rigid" then
      a:connect("traj.q", "robot.q_cmd"); a:connect("traj.qd", "robot.qd_ff")
    else
      a:connect("ff.q", "robot.q_cmd"); a:connect("ff.qd", "robot.qd_ff")
    end
    a:connect("ff.tau", "robot.tau_ff")
    r:add(a, "trk", "tracker", { noise = 0 })
    a:connect("robot.q_link", "trk.q")
    a:add("p", "probe", { n = 3 }); a:connect("trk.pos", "p.u")
    a:add("c", "probe", { n = 3 }); a:connect("traj.tcp", "c.u")
    local res = morc.engine:run(a)
    assert(res.ok, res.reason)
    local u, c, peak = res.data["p.u"], res.data["c.u"], 0
    for t = 0, res.data["p.samples"] - 1 do
      peak = math.max(peak, math.sqrt((u[t * 3 + 1] - c[t * 3 + 1]) ^ 2 + (u[t * 3 + 2] - c[t * 3 + 2]) ^ 2 + (u[t * 3 + 3] - c[t * 3 + 3]) ^ 2))
    end
    peaks[variant] = peak
  end
  print(("tool error peak: rigid %.2f mm, elastic %.2f mm"):format(peaks.rigid * 1e3, peaks.elastic * 1e3))
  assert(peaks.rigid > 3 * peaks.elastic, ("tool error peak: rigid %.3f mm, elastic %.3f mm"):format(peaks.rigid * 1e3, peaks.elastic * 1e3))
end)

T.test("the gears' stiffness is fitted from a run that measured the links, and said unseen without them", function()
  local r = require("robots.kr16_elastic"):with_payload { mass = 16, com = { 0, 0, 100 } }
  morc.use_robot(r, { q0 = { -5, -95, 85, 0, 0, 0 } })
  local function recorded(target, signals)
    local a = motion(r, "ptp", { target = target }, { record = signals })
    local res = morc.engine:run(a)
    assert(res.ok, res.reason)
    return res.recordings[1]
  end
  local fits = morc.dynid.stiffness(r, recorded({ 10, -75, 100, 0, 0, 0 }, { "robot.q", "robot.q_link" }))
  T.eq(#fits, 3, "A1–A3 are elastic")
  for i, f in ipairs(fits) do
    local true_k, true_d = r.joints[i].stiffness, r.joints[i].damping
    T.eq(f.joint, r.joints[i].name)
    print(("%s: K %.4g (gear %.4g, %+.2f %%), D %.4g (gear %.4g, %+.2f %%)"):format(f.joint, f.stiffness, true_k,
      100 * (f.stiffness / true_k - 1), f.damping, true_d, 100 * (f.damping / true_d - 1)))
    assert(math.abs(f.stiffness - true_k) < 0.01 * true_k, ("%s: K %.4g, the gear's %.4g"):format(f.joint, f.stiffness, true_k))
    assert(math.abs(f.damping - true_d) < 0.05 * true_d, ("%s: D %.4g, the gear's %.4g"):format(f.joint, f.damping, true_d))
  end
  local no_links = recorded({ -5, -95, 85, 0, 0, 0 }, { "robot.q" })
  T.raises(function() morc.dynid.stiffness(r, no_links) end, "no link-side measurement (robot.q_link)", "A1, A2, A3 cannot be seen")
  T.raises(function() morc.dynid.stiffness(require "robots.kr16", no_links) end, "has no elastic gears")
end)

T.test("the strain-wave catalogue picks the smallest gear for a joint's torque and ratio", function()
  local sw = require "robots.strain_wave"
  local function pick(torque, ratio)
    local k, size, beyond = sw.stiffness_for(torque, ratio)
    return ("%g N·m/rad, size %d%s"):format(k, size, beyond and ", beyond" or "")
  end
  -- The UR5's URDF torque limits at 101:1 are sizes 25 and 14 exactly (157 and 28 N·m at 100:1).
  T.eq(pick(150, 101), "57000 N·m/rad, size 25")
  T.eq(pick(28, 101), "7100 N·m/rad, size 14")
  T.eq(pick(29, 101), "16000 N·m/rad, size 17", "a newton-metre over size 14 takes size 17")
  -- The ratio picks the column: 1500 N·m at 121:1 reads 120:1, where size 50 gives 1080 N·m only.
  T.eq(pick(1500, 121), "710000 N·m/rad, size 58")
  T.eq(pick(1100, 121), "710000 N·m/rad, size 58")
  T.eq(pick(1000, 160), "440000 N·m/rad, size 50", "at 160:1 size 50 gives 1180 N·m")
  T.eq(pick(2000, 147), "710000 N·m/rad, size 58, beyond", "beyond the catalogue: its largest, a lower bound")
  T.raises(function() sw.stiffness_for(100, 30) end, "ratios above 50")
  T.raises(function() sw.stiffness_for(-1, 100) end, "positive number")
  T.near(sw.damping_for(7.1e5, 25), 2 * 0.1 * math.sqrt(7.1e5 * 25), 1e-9)
end)

return T.summary()
