-- Motion on the simulated KR 16-2: PTP, LIN, CIRC, splines and blended paths from Lua, in
-- degrees and millimetres; the reference's tool path is checked against the geometry.
local T = require "morc.testing"
local kr16 = require "robots.kr16"

local home = { 0, -90, 90, 0, 45, 0 }
morc.use_robot(kr16, { q0 = home })

-- Runs kind with params from where the robot is; returns the result and the tool path (mm).
local function move(kind, params)
  local a = morc.assembly { kind }
  params.settle = params.settle or 0.05
  a:add("traj", kr16:component(kind), params)
  kr16:add(a, "mon", "monitor", { max_error = 1 })
  kr16:add(a, "ff", "rnea")
  a:add("p", "probe", { n = 3 })
  a:connect("robot.q", "traj.start")
  a:connect("traj.q", "robot.q_cmd")
  a:connect("traj.qd", "robot.qd_ff")
  a:connect("traj.q", "ff.q"); a:connect("traj.qd", "ff.qd"); a:connect("traj.qdd", "ff.qdd")
  a:connect("ff.tau", "robot.tau_ff")
  a:connect("traj.q", "mon.q_ref"); a:connect("robot.q", "mon.q"); a:connect("robot.qd", "mon.qd"); a:connect("robot.tau", "mon.tau")
  a:connect("traj.tcp", "p.u")
  local r = morc.engine:run(a)
  T.eq(r.ok, true, r.reason)
  local u, path = r.data["p.u"], {}
  for i = 1, #u, 3 do path[#path + 1] = { u[i] * 1e3, u[i + 1] * 1e3, u[i + 2] * 1e3 } end
  return r, path
end

local function dist(a, b) return math.sqrt((a[1] - b[1]) ^ 2 + (a[2] - b[2]) ^ 2 + (a[3] - b[3]) ^ 2) end

local start_pose = kr16:fk(home)

T.test("lin moves the tool along a straight line and keeps the orientation", function()
  local p = start_pose.pos
  local goal = { p[1] + 200, p[2] - 150, p[3] - 100 }
  local r, path = move("lin", { target = { pos = goal, rpy = start_pose.rpy } })
  local a, b = path[1], path[#path]
  T.near(dist(b, goal), 0, 1e-6, "end point")
  local worst = 0
  for _, x in ipairs(path) do
    -- distance of x from the line a-b
    local ab, ax = { b[1] - a[1], b[2] - a[2], b[3] - a[3] }, { x[1] - a[1], x[2] - a[2], x[3] - a[3] }
    local c = { ab[2] * ax[3] - ab[3] * ax[2], ab[3] * ax[1] - ab[1] * ax[3], ab[1] * ax[2] - ab[2] * ax[1] }
    worst = math.max(worst, math.sqrt(c[1] ^ 2 + c[2] ^ 2 + c[3] ^ 2) / dist(a, b))
  end
  assert(worst < 1e-6, ("off the line by %.3g mm"):format(worst))
  local q = assert(kr16:ik({ pos = goal, rpy = start_pose.rpy }, home))
  local now = kr16:fk(q)
  for i = 1, 3 do T.near(now.rpy[i], start_pose.rpy[i], 1e-6, "orientation") end
  assert(r.data["traj.duration"] > 0.2)
end)

T.test("circ passes its via point on a circle", function()
  move("ptp", { target = home })
  local p = kr16:fk(home).pos
  local via = { p[1] + 100, p[2] + 100, p[3] }
  local goal = { p[1] + 200, p[2], p[3] }
  local _, path = move("circ", { via = via, target = { pos = goal, rpy = start_pose.rpy } })
  -- centre (p + 100, p2, p3), radius 100 in the horizontal plane
  local centre, nearest_via = { p[1] + 100, p[2], p[3] }, math.huge
  for _, x in ipairs(path) do
    T.near(dist(x, centre), 100, 0.05, "radius (the arc starts where the robot is, within its settling error)")
    nearest_via = math.min(nearest_via, dist(x, via))
  end
  assert(nearest_via < 1, nearest_via)
  T.near(dist(path[#path], goal), 0, 1e-6, "end point")
end)

T.test("a blended path does not stop at its corners and cuts them within the radius", function()
  move("ptp", { target = home })
  local p = start_pose.pos
  local c1 = { pos = { p[1], p[2] + 200, p[3] }, rpy = start_pose.rpy }
  local c2 = { pos = { p[1] + 200, p[2] + 200, p[3] }, rpy = start_pose.rpy }
  local moves = { { "lin", c1 }, { "lin", c2 }, { "ptp", home } }
  local exact = move("path", { moves = moves })
  moves[1].blend, moves[2].blend = 50, 50
  local blended, path = move("path", { moves = moves })
  assert(blended.data["traj.duration"] < exact.data["traj.duration"] - 0.1,
    ("blending saves time: %.3f s vs %.3f s"):format(blended.data["traj.duration"], exact.data["traj.duration"]))
  -- Near corner 1 the tool passes within the radius but does not reach it.
  local nearest = math.huge
  for _, x in ipairs(path) do nearest = math.min(nearest, dist(x, c1.pos)) end
  assert(nearest > 1 and nearest < 50, ("closest approach to the corner %.2f mm"):format(nearest))
  -- Back home.
  T.near(dist(path[#path], p), 0, 1e-6, "end")
end)

T.test("jerk-limited and filtered profiles take longer and arrive", function()
  local target = { 20, -80, 80, 10, 40, 10 }
  local plain = move("ptp", { target = target })
  local smooth = move("ptp", { target = home, ramp = 0.1, filter = 10 })
  assert(smooth.data["traj.duration"] > 0 and plain.data["traj.duration"] > 0)
  local spline = move("spline", { points = { target, { 0, -80, 80, 0, 45, 0 }, home } })
  T.eq(spline.ok, true)
end)

T.test("planning reports reach, limits and singularity distance before anything moves", function()
  local ok = kr16:plan(home, { { "lin", { pos = { start_pose.pos[1] + 100, start_pose.pos[2], start_pose.pos[3] }, rpy = start_pose.rpy } } })
  T.eq(ok.ok, true, ok.reason)
  assert(ok.duration > 0 and ok.singularity > 0)
  local far = kr16:plan(home, { { "lin", { pos = { 3000, 0, 500 }, rpy = start_pose.rpy } } })
  T.eq(far.ok, false)
  assert(far.reason:find("out of reach"), far.reason)
  T.raises(function() kr16:add(morc.assembly { "x" }, "t", "ptp", { target = { 0, 0, 400, 0, 0, 0 } }) end, "outside its limits")
  T.raises(function() kr16:plan(home, { { "jump", home } }) end, "unknown move kind 'jump'")
end)

T.test("time_optimal runs a spline through waypoints as fast as the limits allow, from the first waypoint", function()
  morc.use_robot(kr16, { q0 = home })
  local last = { 20, -80, 95, -10, 40, 0 }
  local points = { home, { 30, -70, 100, 20, 30, 10 }, { 60, -100, 80, 0, 60, 40 }, last }
  local r = move("time_optimal", { points = points })
  T.eq(r.ok, true, r.reason)
  assert(r.data["traj.duration"] > 0.5 and r.data["traj.duration"] < 5, "duration " .. r.data["traj.duration"])
  local a = morc.assembly { "where" }
  a:add("p", "probe", { n = 6 }); a:connect("robot.q", "p.u"); a.duration = morc.engine.period
  local q = morc.engine:run(a).data["p.u"]
  -- Measured 50 ms after the reference arrived (a time-optimal motion brakes at the limit).
  for j = 1, 6 do T.near(math.deg(q[j]), last[j], 0.05, "arrived at the last waypoint") end
  -- Not starting at the first waypoint is a fault that says so.
  local b = morc.assembly { "bad" }
  b:add("traj", kr16:component("time_optimal"), { points = { home, last } })
  b:connect("robot.q", "traj.start"); b:connect("traj.q", "robot.q_cmd")
  local rb = morc.engine:run(b)
  T.eq(rb.ok, false)
  assert(rb.reason:find("not at the first waypoint", 1, true), rb.reason)
end)

return T.summary()
