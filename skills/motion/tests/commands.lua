-- `morc test skills/motion`: the motion commands on the simulated KR 16-2.
local T = require "morc.testing"
local motion = morc.lib.load("motion").skills
local kr16 = require "robots.kr16"
morc.use_robot(kr16, { q0 = kr16.home })

T.test("ptp arrives within tolerance and says how well", function()
  local r = motion.ptp { 10, -80, 80, 0, 30, 0 }
  T.eq(r.ok, true, r.reason)
  assert(r.final_error < 0.01 and r.peak_error > 0 and r.motion_time > 0, tostring(r))
  assert(tostring(r):find("^ptp ✓"), tostring(r))
end)

T.test("lin and circ move the tool; the final tool error is in mm", function()
  local p = kr16:fk { 10, -80, 80, 0, 30, 0 }
  local goal = { pos = { p.pos[1], p.pos[2] + 150, p.pos[3] }, rpy = p.rpy }
  local r = motion.lin(goal)
  T.eq(r.ok, true, r.reason)
  assert(r.tool_error < 0.1, r.tool_error)
  local c = motion.circ { via = { p.pos[1] + 75, p.pos[2] + 75, p.pos[3] }, to = { pos = p.pos, rpy = p.rpy } }
  T.eq(c.ok, true, c.reason)
end)

T.test("time_optimal: ptp and lin faster on the same line, arriving as precisely", function()
  local from = { 10, -80, 80, 0, 30, 0 }
  motion.ptp(from)
  local to = { 60, -60, 100, 40, 60, 90 }
  local planned = motion.ptp(to)
  motion.ptp(from)
  local fast = motion.ptp(to, { time_optimal = true })
  T.eq(fast.ok, true, fast.reason)
  assert(fast.motion_time < planned.motion_time, ("time-optimal %.3f s, planned %.3f s"):format(fast.motion_time, planned.motion_time))
  assert(fast.final_error < 0.01, tostring(fast))
  local p = kr16:fk(to)
  local goal = { pos = { p.pos[1], p.pos[2] - 300, p.pos[3] + 100 }, rpy = p.rpy }
  local l = motion.lin(goal, { time_optimal = true })
  T.eq(l.ok, true, l.reason)
  assert(l.tool_error < 0.1, l.tool_error)
  -- circ: the same arc, faster.
  local c0 = kr16:fk(to)
  local arc = { via = { c0.pos[1] + 100, c0.pos[2] - 100, c0.pos[3] }, to = { pos = { c0.pos[1], c0.pos[2] - 200, c0.pos[3] }, rpy = c0.rpy } }
  motion.ptp(to)
  local c_planned = motion.circ(arc)
  motion.ptp(to)
  local c_fast = motion.circ { via = arc.via, to = arc.to, time_optimal = true }
  T.eq(c_fast.ok, true, c_fast.reason)
  assert(c_fast.motion_time < c_planned.motion_time and c_fast.tool_error < 0.1, ("%.3f s vs %.3f s, %s"):format(c_fast.motion_time, c_planned.motion_time, tostring(c_fast)))
  -- topp: through waypoints, faster than the path planner's spline through them.
  motion.ptp(from)
  local via = { { 40, -70, 90, 20, 45, 45 }, to }
  local spline = motion.path { { "spline", table.unpack(via) } }   -- a list of one move
  motion.ptp(from)
  local t = motion.topp(via)
  T.eq(t.ok, true, t.reason)
  assert(t.motion_time < spline.motion_time, ("topp %.3f s, spline %.3f s"):format(t.motion_time, spline.motion_time))
  assert(t.final_error < 0.01, tostring(t))
  -- With a jerk limit: the ramp's time longer, still faster than planned, as precise.
  motion.ptp(from)
  local smooth = motion.ptp(to, { time_optimal = true, ramp = 0.1 })
  T.eq(smooth.ok, true, smooth.reason)
  T.near(smooth.motion_time, fast.motion_time + 0.1, 0.02, "ramp 0.1 s")
  assert(smooth.final_error < 0.01, tostring(smooth))
  -- A param that would be ignored is refused instead.
  local filtered = motion.ptp(from, { time_optimal = true, filter = 10 })
  T.eq(filtered.stage, "precondition")
  assert(filtered.reason:find("filter does not apply"), filtered.reason)
end)

T.test("a target out of reach is refused before anything moves", function()
  local r = motion.lin { 3000, 0, 0, 0, 0, 0 }
  T.eq(r.ok, false)
  T.eq(r.stage, "precondition")
  assert(r.reason:find("out of reach"), r.reason)
  local q = motion.ptp { 0, 0, 400, 0, 0, 0 }
  T.eq(q.stage, "precondition")
  assert(q.reason:find("A3"), q.reason)
end)

T.test("a blended path and home", function()
  local p = kr16:fk(kr16.home)
  local r = motion.path {
    { "lin", { pos = { p.pos[1], p.pos[2] + 100, p.pos[3] }, rpy = p.rpy }, blend = 30 },
    { "lin", { pos = { p.pos[1] + 100, p.pos[2] + 100, p.pos[3] }, rpy = p.rpy }, blend = 30 },
    { "ptp", { 0, -80, 80, 0, 45, 0 } },
  }
  T.eq(r.ok, true, r.reason)
  local h = motion.home()
  T.eq(h.ok, true, h.reason)
end)

return T.summary()
