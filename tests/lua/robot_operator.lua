-- The operator's seat: robot:state() while the robot holds and while a motion runs, the speed
-- override (a slower motion, and a change while one runs that keeps the acceleration limits),
-- pause and resume on the path.
local T = require "morc.testing"
local kr16 = require "robots.kr16"

local home = { 0, -90, 90, 0, 45, 0 }
local target = { 40, -70, 100, 20, 30, 10 }

-- A PTP from where the robot is to `to`, with probes on the reference's velocity and acceleration.
local function ptp(to)
  local a = morc.assembly { "ptp-test" }
  a:add("traj", kr16:component("ptp"), { target = to, settle = 0.05 })
  kr16:add(a, "ff", "rnea")
  a:add("pv", "probe", { n = 6 })
  a:add("pa", "probe", { n = 6 })
  a:connect("robot.q", "traj.start")
  a:connect("traj.q", "robot.q_cmd")
  a:connect("traj.qd", "robot.qd_ff")
  a:connect("traj.q", "ff.q"); a:connect("traj.qd", "ff.qd"); a:connect("traj.qdd", "ff.qdd")
  a:connect("ff.tau", "robot.tau_ff")
  a:connect("traj.qd", "pv.u")
  a:connect("traj.qdd", "pa.u")
  return a
end

local function max_abs_diff(x, y)
  local d = 0
  for i = 1, #x do d = math.max(d, math.abs(x[i] - y[i])) end
  return d
end

T.test("state while holding: where the robot is, the tool there, nothing running", function()
  morc.use_robot(kr16, { q0 = home })
  local s = kr16:state()
  T.near(s.q, home, 1e-6, "q in degrees")
  T.eq(s.holding, true)
  T.eq(s.command, nil)
  local tool = kr16:fk(home)
  T.near(s.tool.pos, tool.pos, 1e-6, "tool position (mm)")
  T.near(s.tool.rpy, tool.rpy, 1e-6, "tool orientation (°)")
  T.eq(#s.qd, 6)
  T.eq(#s.tau, 6)
  T.eq(s.override, 100)
  T.eq(#s.faults, 0)
end)

T.test("state of a robot not on the engine is an error that says how", function()
  morc.start_engine {}
  local ok, e = pcall(kr16.state, kr16)
  T.eq(ok, false)
  assert(tostring(e):find("is not on the engine: morc.use_robot", 1, true), tostring(e))
end)

T.test("state while a motion runs: the command, its progress and what is commanded", function()
  morc.use_robot(kr16, { q0 = home, clock = "wall" })
  local h = morc.engine:start(ptp(target))
  local seen, last_progress = 0, -1
  while h:status() == "running" do
    local s = kr16:state()
    if s.command and s.command.progress then
      T.eq(s.command.name, "ptp-test")
      assert(s.command.progress >= last_progress, "progress goes forward")
      last_progress = s.command.progress
      T.eq(s.holding, false)
      T.eq(#s.commanded.q_cmd, 6)
      seen = seen + 1
    end
  end
  local r = h:wait()
  T.eq(r.ok, true, r.reason)
  assert(seen > 10, "state seen " .. seen .. " times while the motion ran")
  assert(last_progress > 0.9, "progress reached " .. last_progress)
  T.eq(kr16:state().command, nil)
  T.near(kr16:state().q, target, 0.01, "arrived")
end)

T.test("an override of 50 % takes twice the time, at half the speed", function()
  morc.use_robot(kr16, { q0 = home })
  local full = morc.engine:run(ptp(target))
  T.eq(full.ok, true, full.reason)
  morc.use_robot(kr16, { q0 = home })
  T.eq(kr16:override(50), 50)
  local half = morc.engine:run(ptp(target))
  kr16:override(100)
  T.eq(half.ok, true, half.reason)
  local settle = 0.05
  T.near((half.duration - settle) / (full.duration - settle), 2, 0.01, "motion time ratio")
  local peak = function(r) local m = 0 for _, v in ipairs(r.data["pv.u"]) do m = math.max(m, math.abs(v)) end return m end
  T.near(peak(half) / peak(full), 0.5, 1e-3, "peak velocity ratio")
  local ok, e = pcall(kr16.override, kr16, 120)
  T.eq(ok, false)
  assert(tostring(e):find("from 0 to 100", 1, true), tostring(e))
end)

T.test("a change of override while a motion runs is smooth and within the acceleration limits", function()
  morc.use_robot(kr16, { q0 = home, clock = "wall" })
  local h = morc.engine:start(ptp(target))
  local changed = false
  while h:status() == "running" do
    local s = kr16:state()
    if not changed and s.command and s.command.progress and s.command.progress > 0.3 then
      kr16:override(20)
      changed = true
    end
  end
  local r = h:wait()
  kr16:override(100)
  T.eq(r.ok, true, r.reason)
  assert(changed, "the override was changed during the motion")
  local v, a, dt = r.data["pv.u"], r.data["pa.u"], morc.engine.period
  local limits = {}
  for j, joint in ipairs(kr16.joints) do limits[j] = math.rad(joint.limits.acc) end
  for k = 7, #a do
    local j = (k - 1) % 6 + 1
    assert(math.abs(a[k]) <= limits[j] * (1 + 1e-9), ("joint %d: acceleration %.4g rad/s² over its limit %.4g at sample %d"):format(j, a[k], limits[j], k // 6))
    -- No jump in velocity: consecutive samples differ by at most one tick at the limit.
    assert(math.abs(v[k] - v[k - 6]) <= limits[j] * dt * (1 + 1e-6), ("joint %d: velocity jumps at sample %d"):format(j, k // 6))
  end
  T.near(kr16:state().q, target, 0.01, "arrived")
end)

T.test("pause stops the motion on its path; resume finishes it", function()
  morc.use_robot(kr16, { q0 = home, clock = "wall" })
  local h = morc.engine:start(ptp(target))
  local paused_at
  while h:status() == "running" do
    local s = kr16:state()
    if not paused_at and s.command and s.command.progress and s.command.progress > 0.4 then
      kr16:pause()
      paused_at = morc.engine:time()
    end
    if paused_at and morc.engine:time() > paused_at + 1.0 then break end
  end
  local s1 = kr16:state()
  T.eq(s1.paused, true)
  T.eq(h:status(), "running")
  T.near(s1.command.override, 0, 1e-9, "standing on the path")
  local progress = s1.command.progress
  assert(progress > 0.4 and progress < 1, "paused at " .. progress)
  local t0 = morc.engine:time()
  while morc.engine:time() < t0 + 0.2 do end
  T.near(kr16:state().q, s1.q, 1e-3, "still while paused")
  kr16:resume()
  local r = h:wait()
  T.eq(r.ok, true, r.reason)
  T.eq(kr16:state().paused, false)
  T.near(kr16:state().q, target, 0.01, "arrived after resuming")
end)

local function dist(a, b) return math.sqrt((a[1] - b[1]) ^ 2 + (a[2] - b[2]) ^ 2 + (a[3] - b[3]) ^ 2) end

-- Angles in degrees equal within tol, ±180° being the same.
local function angles_near(a, b, tol, what)
  for i = 1, #a do
    local d = (a[i] - b[i] + 180) % 360 - 180
    assert(math.abs(d) <= tol, ("%s[%d]: %.6g° vs %.6g°"):format(what, i, a[i], b[i]))
  end
end

T.test("jog a joint by increments, either way; the others stay", function()
  morc.use_robot(kr16, { q0 = home })
  local r = kr16:jog { joint = 1, step = 5 }
  T.eq(r.ok, true, r.reason)
  T.near(r.q, { 5, -90, 90, 0, 45, 0 }, 0.02, "A1 moved 5°")
  r = kr16:jog { joint = 2, step = -3 }
  T.near(r.q, { 5, -93, 90, 0, 45, 0 }, 0.02, "A2 moved −3°")
  T.eq(r.stopped, nil)
end)

T.test("jog the tool along a base axis and along a tool axis; the orientation stays", function()
  morc.use_robot(kr16, { q0 = home })
  local before = kr16:state().tool
  local r = kr16:jog { axis = "x", step = 20 }
  T.eq(r.ok, true, r.reason)
  T.near(r.tool.pos, { before.pos[1] + 20, before.pos[2], before.pos[3] }, 0.2, "20 mm along the base's x")
  angles_near(r.tool.rpy, before.rpy, 0.02, "orientation kept")
  local p = r.tool.pos
  r = kr16:jog { axis = "z", frame = "tool", step = 10 }
  T.near(dist(r.tool.pos, p), 10, 0.2, "10 mm along the tool's z")
  angles_near(r.tool.rpy, before.rpy, 0.02, "orientation kept")
end)

T.test("a held jog is limited to 250 mm/s at the tool", function()
  morc.use_robot(kr16, { q0 = home })
  local p0, t0 = kr16:state().tool.pos, morc.engine:time()
  local r = kr16:jog { axis = "y", speed = 100, time = 1 }
  T.eq(r.ok, true, r.reason)
  local moved, took = dist(r.tool.pos, p0), morc.engine:time() - t0
  assert(moved > 200 and moved <= 250 * 1.0 + 1, ("moved %.1f mm in 1 s of jogging (%.2f s with ramps)"):format(moved, took))
end)

T.test("a jog stops before a joint limit and near a singularity, and says so", function()
  morc.use_robot(kr16, { q0 = home })
  local r = kr16:jog { joint = 1, speed = 100, time = 30 }
  T.eq(r.ok, true, r.reason)
  T.eq(r.stopped, "joint A1 stops before its limit")
  local upper = kr16.joints[1].limits.pos[2]
  assert(r.q[1] < upper and r.q[1] > upper - 1, "A1 at " .. r.q[1] .. "°, its limit " .. upper .. "°")
  morc.use_robot(kr16, { q0 = home })
  r = kr16:jog { axis = "x", speed = 100, time = 30 }
  assert(r.stopped and r.stopped:find("singularity", 1, true), tostring(r.stopped))
  local ok, e = pcall(kr16.jog, kr16, { joint = 9, step = 1 })
  T.eq(ok, false)
  assert(tostring(e):find("joint 9: robot 'KR 16", 1, true) or tostring(e):find("joints 1 to 6", 1, true), tostring(e))
  ok, e = pcall(kr16.jog, kr16, { axis = "x" })
  T.eq(ok, false)
  assert(tostring(e):find("give step", 1, true), tostring(e))
end)

return T.summary()
