-- identify_load: the tool's load on the wrist F/T sensor (mass, centre of mass) and the sensor's
-- offset, from the readings at a few static poses (morc.ft.identify: least squares).
local cmd = require "stdlib.motion.command"

return morc.skill {
  name = "identify_load",
  doc = [[moves the robot to each of `poses` (whole-robot joints, ° / mm), waits `settle` s, averages the wrist F/T
sensor's raw reading over `average` s, and identifies the tool's load on it: mass (kg), centre of mass (mm, sensor
frame) and the sensor's offset. The poses must turn the sensor about two horizontal axes (a robot that only turns it
about the vertical cannot tell the mass from the offset: the error says what cannot be determined). Hands off while
it measures. Measured: mass, com, bias, residual = { force N, torque N·m }, load (for teach.guide's load_mass/load_com
or load:compensate_to).]],
  positional = "poses",
  params = {
    poses = { type = "table", doc = "at least 3 poses, ° / mm" },
    settle = { type = "number", unit = "s", default = 0.3, range = { 0, 10 }, doc = "wait after arriving" },
    average = { type = "number", unit = "s", default = 0.2, range = { 0.001, 10 }, doc = "averaging time per pose" },
  },
  precondition = function(ctx, p)
    local robot = cmd.robot(ctx)
    if not robot.ft then return false, ("robot '%s' has no F/T sensor (ft = { frame = … } in its definition)"):format(robot.name) end
    if #p.poses < 3 then return false, ("%d poses: the load needs at least 3 orientations"):format(#p.poses) end
    for k, q in ipairs(p.poses) do
      local ok, why = robot:reachable(q)
      if not ok then return false, ("pose %d: %s"):format(k, why) end
    end
    return true
  end,
  execute = function(ctx, p)
    local robot = cmd.robot(ctx)
    local motion = morc.lib.load("motion").skills
    local samples = {}
    for k, q in ipairs(p.poses) do
      -- Still is what counts here, not where exactly: the orientation is read back from the joints.
      local m = motion.ptp({ table.unpack(q, 1, robot.dof) }, { settle = p.settle, tolerance = 0.5 })
      if not m.ok then return m end
      local a = morc.assembly { "F/T reading", duration = p.average }
      a:add("ft_mean", "probe", { n = 6 })
      a:connect("robot.ft", "ft_mean.u")
      local r = ctx.engine:run(a)
      if not r.ok then return r end
      local w, data = { 0, 0, 0, 0, 0, 0 }, r.data["ft_mean.u"]
      local count = #data // 6
      for s = 1, count do
        for i = 1, 6 do w[i] = w[i] + data[(s - 1) * 6 + i] / count end
      end
      local si = morc.units.to_si(robot:state().q, robot)
      samples[k] = { rot = robot.model:frame_placement(si, robot.ft.frame).rot, wrench = w }
    end
    local ok, load = pcall(morc.ft.identify, samples)
    if not ok then return { ok = false, reason = tostring(load) } end
    local com = load.com
    return { ok = true, mass = load.mass, com = { com[1] * 1000, com[2] * 1000, com[3] * 1000 }, bias = load.bias, residual = load.residual, load = load }
  end,
  evaluate = function(ctx, p, r)
    return true, ("mass %.3f kg, centre of mass { %.1f, %.1f, %.1f } mm, residual %.3g N"):format(r.mass, r.com[1], r.com[2], r.com[3], r.residual.force)
  end,
}
