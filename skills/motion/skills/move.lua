-- move: a minimum-jerk joint move from where the axes are to q.
local units = morc.units

--- How many axes the engine moves: its robot's joints, else (six ideal axes, no robot) as many
--- as the target gives.
local function axes(ctx, p)
  local robot = ctx.robot or morc.current_robot
  return robot and robot.dof or #p.q, robot
end

-- Where the axes are: one tick with a probe on robot.q.
local function current_position(ctx, n)
  local a = morc.assembly { "where", duration = ctx.engine.period, internal = true }
  a:add("p", "probe", { n = n })
  a:connect("robot.q", "p.u")
  local r = ctx.engine:run(a)
  assert(r.ok, r.reason)
  return r.data["p.u"]
end

return morc.skill {
  name = "move",
  doc = [[moves the axes (the robot's joints) to q along a minimum-jerk profile in joint space
Starts where the axes are; the duration is what the slowest axis needs at speed % of max_velocity.
Measured: final_error (deg, the largest axis error at the end), move_time (s).]],
  params = {
    q = { type = "vector", size = "joints", unit = "deg", range = { -360, 360 }, doc = "target joint positions, one per axis" },
    speed = { type = "number", unit = "%", default = 100, range = { 1, 100 }, doc = "share of max_velocity at the peak" },
    max_velocity = { type = "number", unit = "deg/s", default = 150, range = { 1, 1000 }, doc = "peak joint velocity at speed 100 %" },
    tolerance = { type = "number", unit = "deg", default = 0.01, range = { 0, 10 }, doc = "largest final error that counts as arrived" },
  },
  precondition = function(ctx, p)
    local n, robot = axes(ctx, p)
    if #p.q ~= n then return false, ("q has %d positions, robot '%s' has %d joints"):format(#p.q, robot.name, n) end
    return true
  end,
  execute = function(ctx, p)
    local n = axes(ctx, p)
    local q0 = current_position(ctx, n)
    local q1 = units.to_si(p.q, "deg")
    -- One rest-to-rest quintic piece (minimum jerk) within the velocity alone: its peak is
    -- 1.875·distance/T, so T is what the slowest axis needs.
    local v = units.to_si(p.max_velocity, "deg/s") * p.speed / 100
    local T = math.max(morc.motion.spline(n, { q1 }):plan(q0, v, math.huge).duration, 0.01)
    local settle = 0.02
    local a = morc.assembly { "move", duration = T + settle }
    a:add("path", "trajectory", { n = n, q0 = q0, q1 = q1, duration = T })
    a:add("p", "probe", { n = n })
    a:connect("path.q", "robot.q_cmd")
    a:connect("robot.q", "p.u")
    local r = ctx.engine:run(a)
    if not r.ok then return r end
    local u = r.data["p.u"]
    local final_error = 0
    for i = 1, n do final_error = math.max(final_error, units.from_si(math.abs(u[#u - n + i] - q1[i]), "deg")) end
    return { ok = true, final_error = final_error, move_time = T }
  end,
  evaluate = function(ctx, p, r)
    return r.final_error <= p.tolerance, ("final error %.2g°"):format(r.final_error)
  end,
}
