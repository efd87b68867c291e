-- replay: runs taught points, by PTP from point to point or as one continuous quintic path.
local cmd = require "stdlib.motion.command"
local motion_assembly = require "stdlib.assemblies.motion"

return morc.skill {
  name = "replay",
  doc = [[runs taught points (whole-robot joints, ° / mm, as guide or a points file gives them): mode "ptp" stops at
each with a trapezoidal synchronised PTP; "path" runs one continuous path of quintic segments through them
(position, velocity and acceleration continuous, at rest only at the ends). Measured: deviation (mm: the
wrist of `frame` at each point against where it was taught; for "path", the path's closest approach), motion_time (s).]],
  positional = "points",
  params = cmd.params {
    points = { type = "table", doc = "the points, in order" },
    mode = { type = "string", default = "ptp", values = { "ptp", "path" }, doc = "stop at each point, or pass through" },
    frame = { type = "string", default = "", doc = "the frame whose deviation is measured (\"\": the robot's tool)" },
  },
  precondition = function(ctx, p)
    local robot = cmd.robot(ctx)
    if #p.points == 0 then return false, "no points to replay" end
    for k, q in ipairs(p.points) do
      if #q ~= robot.dof then return false, ("point %s has %d values, robot '%s' %d joints"):format(q.name or k, #q, robot.name, robot.dof) end
      local ok, why = robot:reachable(q)
      if not ok then return false, ("point %s: %s"):format(q.name or k, why) end
    end
    return true
  end,
  execute = function(ctx, p)
    local robot = cmd.robot(ctx)
    local frame = p.frame ~= "" and p.frame or nil
    local motion = morc.lib.load("motion").skills
    local common = { speed = p.speed, acc = p.acc, ramp = p.ramp, settle = p.settle, max_error = p.max_error, tolerance = p.tolerance }
    local deviation, time = 0, 0
    local function far(q, reached)
      local a, b = robot:fk(q, frame).pos, robot:fk(reached, frame).pos
      return math.sqrt((a[1] - b[1]) ^ 2 + (a[2] - b[2]) ^ 2 + (a[3] - b[3]) ^ 2)
    end
    if p.mode == "ptp" then
      for _, q in ipairs(p.points) do
        local r = motion.ptp({ table.unpack(q, 1, robot.dof) }, common)
        if not r.ok then return r end
        time = time + r.motion_time
        deviation = math.max(deviation, far(q, robot:state().q))
      end
      return { ok = true, deviation = deviation, motion_time = time, points = #p.points }
    end
    -- One path through all, the robot's joints probed: each point's closest approach.
    local moves = { { "spline" } }
    for _, q in ipairs(p.points) do moves[1][#moves[1] + 1] = q end
    local a = motion_assembly(robot, "path", { moves = moves, vel_scale = p.speed / 100, acc_scale = p.acc / 100, ramp = p.ramp, settle = p.settle },
      { name = "replay", max_error = p.max_error })
    a:add("replay_q", "probe", { n = robot.dof, capacity = 1000000 })
    a:connect("robot.q", "replay_q.u")
    local r = ctx.engine:run(a)
    if not r.ok then return r end
    local flat, n = r.data["replay_q.u"], robot.dof
    local wrist = {}
    for k = 1, #flat // n do
      local q = {}
      for i = 1, n do q[i] = flat[(k - 1) * n + i] end
      wrist[#wrist + 1] = robot:fk(cmd.degrees(q, robot), frame).pos
    end
    for _, q in ipairs(p.points) do
      local want, best = robot:fk(q, frame).pos, math.huge
      for _, w in ipairs(wrist) do
        best = math.min(best, (want[1] - w[1]) ^ 2 + (want[2] - w[2]) ^ 2 + (want[3] - w[3]) ^ 2)
      end
      deviation = math.max(deviation, math.sqrt(best))
    end
    return { ok = true, deviation = deviation, motion_time = r.data["traj.duration"], points = #p.points }
  end,
  evaluate = function(ctx, p, r) return r.deviation < 1, ("%d points, max deviation %.3f mm"):format(r.points, r.deviation) end,
}
