-- Changing the tool while the engine runs (issue 29, item 5): robot:change_tool cuts the last
-- tool off and connects another, mass and geometry; the running plant and the feed-forward carry
-- it from their next step, without restarting the engine.
local T = require "morc.testing"

--- robot.tau (the drives' torques) after `seconds` at rest, and rnea's torque at rest, at q.
local function at_rest(r, q, seconds)
  local a = morc.assembly { "rest", duration = seconds }
  a:add("q", "constant", { n = 6, value = q })
  a:add("zero", "constant", { n = 6, value = 0 })
  r:add(a, "ff", "rnea")
  a:connect("q.y", "ff.q"); a:connect("zero.y", "ff.qd"); a:connect("zero.y", "ff.qdd")
  a:add("tau", "probe", { n = 6 }); a:connect("robot.tau", "tau.u")
  a:add("ff_tau", "probe", { n = 6 }); a:connect("ff.tau", "ff_tau.u")
  local res = morc.engine:run(a)
  assert(res.ok, res.reason)
  local n = res.data["tau.samples"]
  local last = function(u) local t = {} for j = 1, 6 do t[j] = u[(n - 1) * 6 + j] end return t end
  return last(res.data["tau.u"]), last(res.data["ff_tau.u"])
end

T.test("a heavier tool weighs on the plant and the feed-forward at once, and a motion still tracks", function()
  local kr16 = require "robots.kr16"
  local r = morc.robot { name = "KR 16 (tool change)", model = kr16.model, joints = kr16.joints, home = kr16.home }
  morc.use_robot(r, { q0 = r.home })
  local home = {}
  for j = 1, 6 do home[j] = math.rad(r.home[j]) end
  local before_tau, before_ff = at_rest(r, home, 0.5)
  local fk_before = r:fk(r.home)

  local tool = { xyz = { 0, 0, 200 }, mass = 12, com = { 0, 0, 120 } }
  r:change_tool(tool)
  local after_tau, after_ff = at_rest(r, home, 1.0)
  -- What 12 kg at 120 mm from the flange adds to gravity, by the model with the same body as payload.
  local g_with = kr16:with_payload { mass = 12, com = { 0, 0, 120 } }.model:gravity(home)
  local g_without = kr16.model:gravity(home)
  for j = 1, 6 do
    local added = g_with[j] - g_without[j]
    T.near(after_ff[j] - before_ff[j], added, 1e-9 * math.max(1, math.abs(added)), "rnea's torque of joint " .. j)
    T.near(after_tau[j] - before_tau[j], added, 0.05 * math.abs(added) + 0.5, "the plant's held torque of joint " .. j .. " (within the drives' friction)")
  end
  assert(math.abs(after_ff[2] - before_ff[2]) > 50, "A2 carries the tool: " .. (after_ff[2] - before_ff[2]))
  -- The tool frame moved with it: 200 mm further out along the flange's axis.
  local fk_after = r:fk(r.home)
  local d = math.sqrt((fk_after.pos[1] - fk_before.pos[1]) ^ 2 + (fk_after.pos[2] - fk_before.pos[2]) ^ 2 + (fk_after.pos[3] - fk_before.pos[3]) ^ 2)
  T.near(d, 200, 1e-6, "the tool point moved (mm)")

  local motion = require "stdlib.assemblies.motion"
  local m = morc.engine:run(motion(r, "ptp", { target = { 20, -80, 100, 0, 45, 0 } }))
  assert(m.ok, m.reason)
  local peak = math.deg(m.data["mon.peak_error_max"])
  assert(peak < 0.05, ("the motion with the new tool tracks within 0.05°: %.4f°"):format(peak))

  -- Cut it off again: back to the arm without a tool.
  r:change_tool { xyz = { 0, 0, 0 } }
  local _, off_ff = at_rest(r, home, 0.1)
  for j = 1, 6 do T.near(off_ff[j], before_ff[j], 1e-9 * math.max(1, math.abs(before_ff[j])), "rnea without the tool, joint " .. j) end
end)

T.test("a tool that is no body is refused, naming the robot", function()
  local r = require "robots.kr16"
  T.raises(function() r:change_tool { mass = -1 } end, "change_tool", "KR 16")
  T.raises(function() r:change_tool { mas = 1 } end, "unknown key 'mas'")
end)

return T.summary()
