-- morc.motion: planning in Lua with morc-motion's types (SI units), checked against values known
-- by hand: profile end points and durations, splines through their points, timed points at their
-- times, the identify library's Fourier formula, Cartesian paths, sequences on a robot and a model.
local T = require "morc.testing"
local M = morc.motion
local kr16 = require "robots.kr16"
local DEG = math.pi / 180

-- T.near with morc vectors too.
local function near(a, b, tol, what)
  local function plain(x) return type(x) == "userdata" and x:totable() or x end
  T.near(plain(a), plain(b), tol, what)
end

T.test("a profile runs from rest to rest over its length within its limits", function()
  -- Trapezoid: 2 at ≤ 1 and ≤ 2: 0.5 s ramps, 1.5 s cruise.
  local p = M.profile(2, 1, 2)
  near(p.duration, 2.5, 1e-12, "duration")
  near(p.ramp, 0.5, 1e-12, "ramp")
  T.eq(p.length, 2)
  -- A trapezoid starts with its full acceleration (no jerk limit).
  local s, sd, sdd = p:sample(0)
  near({ s, sd, sdd }, { 0, 0, 2 }, 0, "start")
  s, sd, sdd = p:sample(p.duration)
  near({ s, sd, sdd }, { 2, 0, 0 }, 0, "end")
  s, sd, sdd = p:sample(1.25)
  near({ s, sd, sdd }, { 1, 1, 0 }, 1e-12, "cruising halfway")
  near({ p:sample(0.25) }, { 0.0625, 0.5, 2 }, 1e-12, "accelerating")
  near({ p:peaks() }, { 1, 2 }, 1e-12, "peaks")
  -- Out of range clamps: at rest at either end.
  near({ p:sample(-1) }, { 0, 0, 0 }, 0, "before")
  near({ p:sample(100) }, { 2, 0, 0 }, 0, "after")
  -- Triangle: too short to cruise.
  near(M.profile(0.1, 1, 2).duration, 2 * math.sqrt(0.05), 1e-12, "triangle")
  -- Double S (Biagiotti & Melchiorri, example 3.9): v = 5, a = 10, j = 30, L = 10.
  local ds = M.profile(10, 5, 10, 30)
  near(ds.duration, 10 / 5 + 1 / 3 + 0.5, 1e-12, "double S")
  near(ds:stretched(2).duration, 2 * ds.duration, 1e-12, "stretched")
  local s2, sd2 = ds:stretched(2):sample(ds.duration)
  local s1, sd1 = ds:sample(ds.duration / 2)
  near({ s2, sd2 }, { s1, sd1 / 2 }, 1e-12, "stretched halfway: as far, half as fast")
  T.eq(M.profile(0, 1, 1).duration, 0)
end)

T.test("a profile says what is wrong with its arguments", function()
  T.raises(function() M.profile(-1, 1, 1) end, "length is -1, must be ≥ 0")
  T.raises(function() M.profile(1, 0, 1) end, "v is 0, must be a finite number > 0")
  T.raises(function() M.profile(1, 1, 1, 0 / 0) end, "j is", "> 0")
  T.raises(function() M.profile(1 / 0, 1, 1) end, "length must be a finite number")
  T.raises(function() M.profile(1, 1, 1):sample(0 / 0) end, "profile:sample(t): t must be a finite number")
  T.raises(function() M.profile(1, "fast", 1) end, "v must be a number, got a string")
end)

T.test("a one-piece spline is the minimum-jerk quintic; via points are passed", function()
  local sp = M.spline(1, { { 1 } }):plan({ 0 }, 1, 100)
  -- Peak velocity 1.875·d/T at ≤ 1: T = 1.875 s.
  near(sp.duration, 1.875, 1e-9, "duration")
  local q, qd, qdd = morc.vec(1), morc.vec(1), morc.vec(1)
  sp:sample_to(q, qd, qdd, sp.duration / 2)
  near({ q[1], qd[1], qdd[1] }, { 0.5, 1, 0 }, 1e-9, "halfway")
  sp:sample_to(q, qd, qdd, sp.duration)
  near({ q[1], qd[1], qdd[1] }, { 1, 0, 0 }, 0, "end")
  sp:sample_to(q, qd, qdd, -3)
  near({ q[1], qd[1] }, { 0, 0 }, 0, "before the start")
  -- Through 1 and on to 2 (equal pieces, stretched alike): the via point halfway, moving.
  local two = M.spline(1, { { 1 }, { 2 } }):plan({ 0 }, 1, 100)
  local t = {}
  two:sample_to(t, nil, nil, two.duration / 2)
  near(t[1], 1, 1e-12, "via point")
  -- Two joints, tables as destinations, per-joint limits: ends where the last point is.
  local sp2 = M.spline(2, { { 1, 0 }, { 2, 1 }, { 0.5, 0.5 } }):plan(morc.vec { 0, 0 }, { 1, 2 }, { 3, 3 })
  T.eq(sp2.pieces, 3)
  local a, b, c = { 0, 0 }, { 0, 0 }, { 0, 0 }
  sp2:sample_to(a, b, c, sp2.duration)
  near(a, { 0.5, 0.5 }, 0, "end")
  near(sp2.first, { 0, 0 }, 0, "first")
  near(sp2.last, { 0.5, 0.5 }, 0, "last")
  -- Within its limits all along.
  for k = 0, 200 do
    sp2:sample_to(a, b, c, sp2.duration * k / 200)
    assert(math.abs(b[1]) <= 1 + 1e-6 and math.abs(b[2]) <= 2 + 1e-6, ("velocity %g %g at %d"):format(b[1], b[2], k))
  end
end)

T.test("a spline says what is wrong", function()
  T.raises(function() M.spline(2, { { 1, 2, 3 } }) end, "points[1] has 3 entries, needs 2")
  T.raises(function() M.spline(0, { { 1 } }) end, "dof must be a whole number ≥ 1")
  T.raises(function() M.spline(1, {}) end, "needs one point at least")
  T.raises(function() M.spline(1, { { 0 / 0 } }) end, "points[1][1] = ", "not a finite number")
  local sp = M.spline(2, { { 1, 1 } })
  T.raises(function() sp:sample_to({}, {}, {}, 0) end, "spline:sample_to(q, qd, qdd, t): not planned yet: call sp:plan(start, v, a) first")
  T.raises(function() return sp.duration end, "not planned yet")
  T.raises(function() sp:plan({ 0 }, 1, 1) end, "start has 1 entries, needs 2")
  T.raises(function() sp:plan({ 0, 0 }, { 1, 0 }, 1) end, "v: limit 2 is 0, must be a finite number > 0")
  sp:plan({ 0, 0 }, 1, 1)
  T.raises(function() sp:sample_to(morc.vec(3), nil, nil, 0) end, "q has 3 entries, needs 2")
  T.raises(function() sp:sample_to("q", nil, nil, 0) end, "q must be a morc vector, a table or nil")
end)

T.test("a timed trajectory passes each point at its time with its derivatives", function()
  local tr = M.timed {
    { time = 0, q = { 0, 1 } },
    { time = 0.5, q = { 0.3, 0.8 }, qd = { 0.9, -0.2 }, qdd = { 0.5, 0.1 } },
    { time = 1.2, q = morc.vec { 1, 0.5 } },
  }
  T.eq(tr.dof, 2)
  T.eq(tr.duration, 1.2)
  local q, qd, qdd = morc.vec(2), morc.vec(2), morc.vec(2)
  tr:sample_to(q, qd, qdd, 0.5)
  near(q, { 0.3, 0.8 }, 1e-12, "q")
  near(qd, { 0.9, -0.2 }, 1e-9, "qd")
  near(qdd, { 0.5, 0.1 }, 1e-9, "qdd")
  tr:sample_to(q, qd, nil, 5)
  near(q, { 1, 0.5 }, 0, "after the end")
  near(tr.first, { 0, 1 }, 0, "first")
  near(tr.last, { 1, 0.5 }, 0, "last")
  T.raises(function() M.timed { { time = 0, q = { 0, 0 } }, { time = 0, q = { 1, 0 } } } end, "point 2 is at 0 s, not after point 1")
  T.raises(function() M.timed { { time = 0, q = { 0, 0 } }, { time = 1, q = { 1 } } } end, "point 2 has 1 positions, the joints are 2")
  T.raises(function() M.timed { { time = 0, q = { 0 } }, { time = 1, q = { 1 }, qd = { 1, 2 } } } end, "points[2].qd has 2 entries, needs 1")
  T.raises(function() M.timed { { time = 0, q = { 0 } }, { t = 1, q = { 1 } } } end, "unknown key 't'")
  T.raises(function() M.timed { { time = 0, q = { 0 } } } end, "two points at least")
end)

-- The identify library's Fourier component before morc.motion, kept here to check against.
local function old_fourier(e, n, order, t)
  local q, qd, qdd = {}, {}, {}
  local stop = e.periods * 2 * math.pi / e.omega
  local tt = math.min(t, stop)
  for j = 1, n do
    local p, v, acc = e.q0[j], 0, 0
    for l = 1, order do
      local a, b, lw = e.a[(j - 1) * order + l], e.b[(j - 1) * order + l], l * e.omega
      local s, c = math.sin(lw * tt), math.cos(lw * tt)
      p = p + (a * s - b * c) / lw
      v = v + a * c + b * s
      acc = acc + lw * (b * c - a * s)
    end
    if tt >= stop then v, acc = 0, 0 end
    q[j], qd[j], qdd[j] = p, v, acc
  end
  return q, qd, qdd
end

T.test("a Fourier excitation is the identify library's series, at rest at its start and after its periods", function()
  -- Order 3, two joints, at rest at t = 0: a_1 = −(a_2 + a_3), b_1 = −(2·b_2 + 3·b_3).
  local a2, a3, b2, b3 = { 0.2, -0.1 }, { 0.05, 0.3 }, { -0.1, 0.15 }, { 0.2, -0.05 }
  local e = { omega = 2 * math.pi * 0.25, q0 = { 0.4, -0.7 }, periods = 2, a = {}, b = {} }
  for j = 1, 2 do
    local a, b = { -(a2[j] + a3[j]), a2[j], a3[j] }, { -(2 * b2[j] + 3 * b3[j]), b2[j], b3[j] }
    for l = 1, 3 do e.a[(j - 1) * 3 + l], e.b[(j - 1) * 3 + l] = a[l], b[l] end
  end
  local f = M.fourier(e)
  T.eq(f.dof, 2); T.eq(f.order, 3); T.eq(f.periods, 2)
  near(f.period, 4, 1e-12, "period")
  near(f.duration, 8, 1e-12, "duration")
  local q, qd, qdd = { 0, 0 }, { 0, 0 }, { 0, 0 }
  for _, t in ipairs { 0, 0.37, 1.5, 3.99, 4, 6.2, 7.999, 8, 9, 100 } do
    f:sample_to(q, qd, qdd, t)
    local oq, oqd, oqdd = old_fourier(e, 2, 3, t)
    near(q, oq, 1e-14, "q at " .. t)
    near(qd, oqd, 1e-14, "qd at " .. t)
    near(qdd, oqdd, 1e-13, "qdd at " .. t)
  end
  f:sample_to(q, qd, qdd, 0)
  near(qd, { 0, 0 }, 1e-15, "rest at 0")
  near(qdd, { 0, 0 }, 1e-15, "no acceleration at 0")
  near(f.first, q, 0, "first")
  near(f.last, q, 1e-12, "back where it started after whole periods")
  -- id:excite's result as it comes (its other keys are ignored; its order checked).
  e.order, e.condition, e.period = 3, 12.5, 4
  T.eq(M.fourier(e).order, 3)
  e.order = 2
  T.raises(function() M.fourier(e) end, "order = 2, but a and b hold 3 coefficients per joint")
  T.raises(function() M.fourier { omega = 1, q0 = { 0, 0 }, a = { 1, 2, 3 }, b = { 1, 2, 3 } } end, "a and b need order × 2 coefficients each; a has 3, b has 3")
  T.raises(function() M.fourier { omega = 0, q0 = { 0 }, a = { 1 }, b = { 1 } } end, "omega must be a finite number > 0")
  T.raises(function() M.fourier { omega = 1, q0 = { 0 }, a = { 1 }, b = { 1 }, periods = -1 } end, "periods must be a finite number > 0")
  T.raises(function() M.fourier { omega = 1, q0 = { 0 }, a = { 1 }, b = { 1 }, period = 1, peroids = 2 } end, "unknown key 'peroids'", "did you mean 'periods'")
end)

T.test("Cartesian paths: a line and an arc through their points", function()
  local line = M.line({ pos = { 0.5, 0, 0.5 } }, { pos = { 0.5, 0.3, 0.1 }, rpy = { 0, 0, 1 } })
  near(line.length, 0.5, 1e-12, "length")
  near(line.angle, 1, 1e-12, "angle")
  local mid = line:pose(0.5)
  near(mid.pos, { 0.5, 0.15, 0.3 }, 1e-12, "halfway")
  near(mid.rot:get(1, 1), math.cos(0.5), 1e-12, "rotated halfway")
  local pos, rot = morc.vec(3), morc.mat(3, 3)
  line:pose_to(pos, rot, 2) -- clamped to the end
  near(pos, { 0.5, 0.3, 0.1 }, 1e-12, "end")
  near(rot:get(2, 1), math.sin(1), 1e-12, "end rotation")
  local arc = M.arc({ 1, 0, 0.2, 0, 0, 0 }, { 0, 1, 0.2 }, { pos = { -1, 0, 0.2 }, rot = morc.eye(3) })
  near(arc.length, math.pi, 1e-12, "half circle")
  local p = {}
  arc:pose_to(p, nil, 0.5)
  near(p, { 0, 1, 0.2 }, 1e-12, "through via")
  T.raises(function() M.arc({ 1, 0, 0, 0, 0, 0 }, { 0, 0, 0 }, { -1, 0, 0, 0, 0, 0 }) end, "morc.motion.arc(from, via, to)", "use lin")
  T.raises(function() M.line({ 1, 2, 3 }, { 1, 2, 3, 0, 0, 0 }) end, "from: a pose is")
  T.raises(function() M.line({ pos = { 0, 0, 0 }, rot = morc.mat(3, 3) }, { 0, 0, 0, 0, 0, 0 }) end, "rot is not a rotation matrix")
  T.raises(function() M.line({ pos = { 0, 0, 0 }, rpy = { 0, 0, 0 }, rot = morc.eye(3) }, { 0, 0, 0, 0, 0, 0 }) end, "give rot or rpy, not both")
end)

-- KR 16's limits in SI.
local function kr16_limits(key)
  local l = {}
  for i, j in ipairs(kr16.joints) do l[i] = j.limits[key] * DEG end
  return l
end

T.test("a sequence on a robot: a PTP takes the synchronised profile's time and ends at its target", function()
  local start = { 0, -90 * DEG, 90 * DEG, 0, 45 * DEG, 0 }
  local target = { 30 * DEG, -60 * DEG, 80 * DEG, 20 * DEG, 30 * DEG, -40 * DEG }
  local seq = M.sequence(kr16, { { "ptp", target } }):plan(start)
  T.eq(#seq, 1); T.eq(seq.dof, 6)
  -- s ∈ [0, 1] with the tightest of every joint's limits over its distance.
  local vel, acc = kr16_limits("vel"), kr16_limits("acc")
  local v, a = math.huge, math.huge
  for i = 1, 6 do
    local d = math.abs(target[i] - start[i])
    v, a = math.min(v, vel[i] / d), math.min(a, acc[i] / d)
  end
  near(seq.duration, M.profile(1, v, a).duration, 1e-12, "duration")
  local q, qd, qdd = morc.vec(6), morc.vec(6), morc.vec(6)
  seq:sample_to(q, qd, qdd, seq.duration)
  near(q, target, 1e-12, "end")
  near(qd, { 0, 0, 0, 0, 0, 0 }, 0, "at rest")
  seq:sample_to(q, qd, qdd, 0)
  near(q, start, 0, "start")
  near({ seq:timing(1) }, { 0, seq.duration }, 1e-12, "timing")
end)

T.test("a sequence on a robot: LIN reaches its pose, blending saves time", function()
  local start = { 0, -90 * DEG, 90 * DEG, 0, 45 * DEG, 0 }
  local at = kr16:fk { 0, -90, 90, 0, 45, 0 } -- mm, degrees
  local pos = { at.pos[1] / 1000, at.pos[2] / 1000 + 0.2, at.pos[3] / 1000 - 0.1 }
  local goal = { pos = pos, rpy = { at.rpy[1] * DEG, at.rpy[2] * DEG, at.rpy[3] * DEG } }
  local seq = M.sequence(kr16, { { "lin", goal } }):plan(start)
  local q = {}
  seq:sample_to(q, nil, nil, seq.duration)
  local reached = kr16:fk { q[1] / DEG, q[2] / DEG, q[3] / DEG, q[4] / DEG, q[5] / DEG, q[6] / DEG }
  near(reached.pos, { pos[1] * 1000, pos[2] * 1000, pos[3] * 1000 }, 1e-6, "tool position (mm)")
  -- Two PTPs: with a 50 mm blend the second starts before the first ends.
  local via = { 20 * DEG, -80 * DEG, 85 * DEG, 0, 40 * DEG, 0 }
  local target = { 40 * DEG, -70 * DEG, 80 * DEG, 0, 35 * DEG, 0 }
  local stop = M.sequence(kr16, { { "ptp", via }, { "ptp", target } }):plan(start)
  local blend = M.sequence(kr16, { { "ptp", via, blend = 0.05 }, { "ptp", target } }):plan(start)
  assert(blend.duration < stop.duration - 0.01, ("blended %g s, stopping %g s"):format(blend.duration, stop.duration))
  near(blend.last, target, 1e-12, "blended end")
  local second = select(1, blend:timing(2))
  assert(second < select(2, blend:timing(1)), "overlap")
  -- Slower at speed = 50 % (a long move, that cruises).
  local far = { 150 * DEG, -90 * DEG, 90 * DEG, 0, 45 * DEG, 0 }
  local slow = M.sequence(kr16, { { "ptp", far, speed = 50 } }):plan(start)
  local fast = M.sequence(kr16, { { "ptp", far } }):plan(start)
  assert(slow.duration > fast.duration, "speed 50 % is slower")
end)

T.test("a sequence on a model: its tool frame, the limits it is given", function()
  local model = kr16.model
  local start = { 0, -90 * DEG, 90 * DEG, 0, 45 * DEG, 0 }
  local target = { 10 * DEG, -80 * DEG, 85 * DEG, 0, 40 * DEG, 10 * DEG }
  local seq = M.sequence(model, { { "ptp", target }, { "spline", { 0, -90 * DEG, 90 * DEG, 0, 45 * DEG, 0 } } }, { velocity = 1, acceleration = 2 })
  seq:plan(morc.vec(start))
  local q = morc.vec(6)
  seq:sample_to(q, nil, nil, seq.duration)
  near(q, start, 1e-12, "back at the start")
  seq:sample_to(q, nil, nil, select(1, seq:timing(2)))
  near(q, target, 1e-12, "at the first target")
  -- A line of the tool on the model's kinematics.
  local p = model:frame_placement(start, "tool")
  local goal = { pos = { p.pos[1], p.pos[2] - 0.1, p.pos[3] }, rot = p.rot }
  local lin = M.sequence(model, { { "lin", goal } }, { velocity = 1, acceleration = 2, linear = { 0.5, 1 }, angular = { 1, 2 } }):plan(start)
  lin:sample_to(q, nil, nil, lin.duration)
  near(model:frame_placement(q, "tool").pos, goal.pos, 1e-9, "tool at the goal")
  near(lin.duration, M.profile(0.1, 0.5, 1).duration, 1e-9, "the tool's own profile")
end)

T.test("a sequence says what is wrong", function()
  local model = kr16.model
  local start = { 0, -90 * DEG, 90 * DEG, 0, 45 * DEG, 0 }
  T.raises(function() M.sequence(model, { { "ptp", start } }) end, "the model gives no joint", "limits: give")
  T.raises(function() M.sequence(model, { { "lin", { 1, 0, 1, 0, 0, 0 } } }, { velocity = 1, acceleration = 1 }) end, "lin and circ moves on a model need the tool's limits: linear")
  T.raises(function() M.sequence(kr16, { { "ptp", { 1, 2, 3 } } }) end, "move 1 (ptp) target has 3 entries, needs 6")
  T.raises(function() M.sequence(kr16, { { "jump", start } }) end, "unknown move kind 'jump'")
  T.raises(function() M.sequence(kr16, { { "ptp", start, blnd = 0.1 } }) end, "unknown key 'blnd'", "did you mean 'blend'")
  T.raises(function() M.sequence(kr16, { { "ptp", start, speed = 0 } }) end, "speed in (0, 100] %")
  T.raises(function() M.sequence(kr16, {}) end, "moves is empty")
  T.raises(function() M.sequence("kr16", { { "ptp", start } }) end, "arm must be a robot", "or a model")
  T.raises(function() M.sequence(kr16, { { "ptp", start } }, { velcity = 1 }) end, "unknown key 'velcity'", "did you mean 'velocity'")
  T.raises(function() M.sequence(model, { { "ptp", start } }, { velocity = 1, acceleration = 1, tool = "hand" }) end, "has no frame 'hand'")
  local seq = M.sequence(kr16, { { "ptp", start } })
  T.raises(function() seq:sample_to({}, {}, {}, 0) end, "not planned yet: call seq:plan(start) first")
  T.raises(function() seq:plan { 0, 0 } end, "start has 2 entries, needs 6")
  -- Out of reach: the error names the move.
  local far = M.sequence(kr16, { { "ptp", start }, { "lin", { 5, 0, 1, 0, 0, 0 } } })
  -- (it leaves the arm's reach past the stretched arm, a singularity, where the walk stops)
  T.raises(function() far:plan(start) end, "sequence:plan(start): move 2 (lin): joint 3 jumps", "singularity")
  T.raises(function() M.sequence(kr16, { { "ptp", start } }):plan(start):timing(2) end, "k must be a move's number, 1 to 1")
end)

return T.summary()
