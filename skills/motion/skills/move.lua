-- move: a minimum-jerk joint move from where the axes are to q.
local units = morc.units

-- Where the axes are: one tick with a probe on robot.q.
local function current_position(ctx)
  local a = morc.assembly { "where", duration = ctx.engine.period, internal = true }
  a:add("p", "probe", { n = 6 })
  a:connect("robot.q", "p.u")
  local r = ctx.engine:run(a)
  assert(r.ok, r.reason)
  return r.data["p.u"]
end

return morc.skill {
  name = "move",
  doc = [[moves the six axes to q along a minimum-jerk profile in joint space
Starts where the axes are; the duration is what the slowest axis needs at speed % of max_velocity.
Measured: final_error (deg, the largest axis error at the end), move_time (s).]],
  params = {
    q = { type = "vector", size = 6, unit = "deg", range = { -360, 360 }, doc = "target joint positions" },
    speed = { type = "number", unit = "%", default = 100, range = { 1, 100 }, doc = "share of max_velocity at the peak" },
    max_velocity = { type = "number", unit = "deg/s", default = 150, range = { 1, 1000 }, doc = "peak joint velocity at speed 100 %" },
    tolerance = { type = "number", unit = "deg", default = 0.01, range = { 0, 10 }, doc = "largest final error that counts as arrived" },
  },
  execute = function(ctx, p)
    local q0 = current_position(ctx)
    local q1, distance = units.to_si(p.q, "deg"), 0
    for i = 1, 6 do distance = math.max(distance, math.abs(q1[i] - q0[i])) end
    -- A quintic's peak velocity is 1.875·distance/T.
    local v = units.to_si(p.max_velocity, "deg/s") * p.speed / 100
    local T = math.max(1.875 * distance / v, 0.01)
    local settle = 0.02
    local a = morc.assembly { "move", duration = T + settle }
    a:add("path", "trajectory", { n = 6, q0 = q0, q1 = q1, duration = T })
    a:add("p", "probe", { n = 6 })
    a:connect("path.q", "robot.q_cmd")
    a:connect("robot.q", "p.u")
    local r = ctx.engine:run(a)
    if not r.ok then return r end
    local u = r.data["p.u"]
    local final_error = 0
    for i = 1, 6 do final_error = math.max(final_error, units.from_si(math.abs(u[#u - 6 + i] - q1[i]), "deg")) end
    return { ok = true, final_error = final_error, move_time = T }
  end,
  evaluate = function(ctx, p, r)
    return r.final_error <= p.tolerance, ("final error %.2g°"):format(r.final_error)
  end,
}
