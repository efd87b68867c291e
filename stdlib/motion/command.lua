-- stdlib/motion/command.lua — what the motion skills (ptp, lin, circ, home, path) share:
-- where the robot is, the planning precondition, running the motion assembly and measuring
-- the result. A skill library builds its commands from these.
local motion_assembly = require "stdlib.assemblies.motion"

local M = {}

--- The share of the torque limits a time-optimal motion plans with: the rest is the drives'
--- reserve for following the reference (friction is in the plan; the feedback is not).
local TIME_OPTIMAL_TORQUE = 0.8

--- The robot the engine runs on, or an error saying how to get one.
function M.robot(ctx)
  local robot = ctx.robot or morc.current_robot
  if not robot then error("no robot: start the engine on one with morc.use_robot(require \"robots.kr16\")", 0) end
  return robot
end

--- Whether the engine runs a simulation (the simulated robot, or its drives on the virtual
--- EtherCAT segment) rather than a real robot: its base says so in its description.
function M.simulated(ctx)
  return (ctx.engine.description or ""):find("simulated", 1, true) ~= nil
end

--- The robot a command works on: `module`'s (as require names it) when given, else the engine's;
--- nil and why when the module cannot be loaded or has another number of joints than the engine's.
function M.robot_of(ctx, module)
  local robot = M.robot(ctx)
  if module == nil or module == "" then return robot end
  local ok, r = pcall(require, module)
  if not ok then return nil, ("cannot load robot module '%s': %s"):format(module, tostring(r)) end
  if r.dof ~= robot.dof then return nil, ("robot module '%s' has %d joints, the engine's robot %d"):format(module, r.dof, robot.dof) end
  return r
end

--- The file that defines `robot`: `module`'s file on the package path, else where the robot says it
--- was defined (origin "…/robots/NAME.lua:LINE"); nil when neither tells. Results are saved beside it.
function M.definition(robot, module)
  local path = module and module ~= "" and package.searchpath and package.searchpath(module, package.path)
  if path then return path end
  return robot.origin:match("([^%s]+%.lua):%d+$")
end

--- Where a command saves its results: `save` itself, or with "" the robot's definition with
--- `suffix` for ".lua" (robots/NAME.calibration.lua); nil when not saving ("-"); false and why
--- when "" and it cannot tell where the robot was defined.
function M.save_path(robot, module, save, suffix)
  if save == "-" then return nil end
  if save ~= "" then return save end
  local file = M.definition(robot, module)
  if not file then return false, ("cannot tell where robot '%s' was defined (%s): give save = \"file.lua\""):format(robot.name, robot.origin) end
  return (file:gsub("%.lua$", suffix))
end

--- Per joint, the factor from SI to Lua's numbers: degrees for a revolute joint, mm for a prismatic one.
M.scales = morc.units.joint_scales

--- The unit of the errors a robot's motion reports: "°", "mm", or "° / mm" when it has both kinds of joint.
local function error_unit(robot)
  local units = {}
  for _, j in ipairs(robot.joints) do units[j.unit] = true end
  if units.mm and units.deg then return "° / mm" end
  return units.mm and " mm" or "°"
end

--- Where the robot is, in SI (rad; m for prismatic joints): one tick of `engine` with a probe on robot.q.
function M.joint_position(engine, robot)
  local a = morc.assembly { "where", duration = engine.period, internal = true }
  a:add("p", "probe", { n = robot.dof })
  a:connect("robot.q", "p.u")
  local r = engine:run(a)
  if not r.ok then error("cannot read the robot's position: " .. tostring(r.reason), 0) end
  return r.data["p.u"]
end

--- Where the robot is (degrees; mm for prismatic joints).
function M.position(ctx, robot)
  return M.degrees(M.joint_position(ctx.engine, robot), robot)
end

--- The precondition of a motion: plans `moves` from where the robot is and checks reach,
--- joint limits on the way and the distance to singularities (smallest singular value of the
--- tool Jacobian, at least p.singularity). Keeps the plan in ctx for execute.
function M.precondition(ctx, p, moves)
  local robot = M.robot(ctx)
  local start = M.position(ctx, robot)
  local plan = robot:plan(start, moves, { vel_scale = p.speed / 100, acc_scale = p.acc / 100, ramp = p.ramp })
  if not plan.ok then return false, plan.reason end
  if p.time_optimal and p.filter > 0 then
    -- A low-pass would lag the reference behind a timing that already rides the limits.
    return false, "filter does not apply to a time-optimal motion (it rides the limits; a low-pass would lag it): leave filter at 0, or use ramp for a jerk limit"
  end
  local cartesian = false
  for _, m in ipairs(moves) do cartesian = cartesian or m[1] == "lin" or m[1] == "circ" end
  -- Joint-space moves pass singularities unharmed; the tool's path near one needs huge joint speeds.
  if cartesian and p.singularity and plan.singularity < p.singularity then
    return false, ("the motion comes within %.3g of a singularity (smallest singular value of the tool Jacobian; at least %.3g asked)"):format(plan.singularity, p.singularity)
  end
  ctx.plan = plan
  return true
end

--- Runs a `path` of `moves` with the common params (speed, acc, ramp, filter, max_error, record).
--- With p.time_optimal (a single ptp, lin, circ or spline), the move runs time-optimally instead (kind
--- time_optimal): its path timed by TOPP-RA within the joints' velocity limits and
--- TIME_OPTIMAL_TORQUE of their torque limits through the robot's dynamics (the accelerations are
--- what the torque allows; acc < 100 % keeps the acceleration limits, scaled), and on a lin the
--- tool's Cartesian speed limit; p.ramp > 0 averages it over that time (a jerk limit, checked
--- against every limit).
function M.execute(ctx, p, moves, name)
  local robot = M.robot(ctx)
  local kind, params = "path", {
    moves = moves, vel_scale = p.speed / 100, acc_scale = p.acc / 100, ramp = p.ramp, filter = p.filter, settle = p.settle,
  }
  if p.time_optimal then
    local move = moves[1]
    kind, params = "time_optimal", {
      points = { M.position(ctx, robot) }, vel_scale = p.speed / 100, acc_scale = p.acc < 100 and p.acc / 100 or 0,
      -- A stop at the torque limits, without a jerk limit, rings longer before the final error is taken.
      torque_scale = TIME_OPTIMAL_TORQUE, ramp = p.ramp, settle = math.max(p.settle, 0.5),
    }
    if move[1] == "lin" then
      params.target = move[2]
    elseif move[1] == "circ" then
      params.via, params.target = move[2], move[3]
    else -- ptp to one point, or a spline through several
      for i = 2, #move do params.points[i] = move[i] end
    end
  end
  local a = motion_assembly(robot, kind, params, { name = name, max_error = p.max_error, record = p.record, notes = name })
  local r = ctx.engine:run(a)
  if not r.ok then return r end
  -- Final and peak following errors in degrees (mm for prismatic joints); the tool's final
  -- position error in mm.
  local scale, final, peak = M.scales(robot), 0, 0
  local q_end, reached, peaks = r.data["traj.end"], {}, r.data["mon.peak_error"]
  for i, e in ipairs(r.data["mon.final_error"]) do
    final = math.max(final, math.abs(e * scale[i]))
    peak = math.max(peak, math.abs(peaks[i] * scale[i]))
    reached[i] = (q_end[i] - e) * scale[i]
  end
  local out = { ok = true, final_error = final, peak_error = peak, unit = error_unit(robot), motion_time = r.data["traj.duration"] }
  if robot.dof == 6 then
    local want, got = robot:fk(M.degrees(q_end, robot)), robot:fk(reached)
    local d = 0
    for i = 1, 3 do d = d + (want.pos[i] - got.pos[i]) ^ 2 end
    out.tool_error = math.sqrt(d)
  end
  return out
end

--- Joint positions from SI to Lua's numbers: degrees, or mm for the prismatic joints of `robot`.
function M.degrees(q, robot)
  return morc.units.from_si(q, robot or "deg")
end

--- The evaluation: final joint error within tolerance (°, mm for prismatic joints).
function M.evaluate(ctx, p, r)
  local u = r.unit or "°"
  local text = ("final error %.2g%s  peak following error %.2g%s"):format(r.final_error, u, r.peak_error, u)
  if r.tool_error then text = text .. ("  tool %.2g mm"):format(r.tool_error) end
  return r.final_error <= p.tolerance, text
end

--- The params every motion command takes.
function M.params(extra)
  local params = {
    speed = { type = "number", unit = "%", default = 100, range = { 0.1, 100 }, doc = "share of the velocity limits" },
    acc = { type = "number", unit = "%", default = 100, range = { 0.1, 100 }, doc = "share of the acceleration limits" },
    ramp = { type = "number", unit = "s", default = 0, range = { 0, 2 }, doc = "jerk limit: time to reach full acceleration (0: trapezoid)" },
    filter = { type = "number", unit = "Hz", default = 0, range = { 0, 100 }, doc = "Bessel low-pass of the reference (0: none)" },
    settle = { type = "number", unit = "s", default = 0.2, range = { 0, 10 }, doc = "time after arrival before the final error is taken" },
    tolerance = { type = "number", unit = "deg", default = 0.01, range = { 0, 10 }, doc = "largest final joint error that counts as arrived (mm for prismatic joints)" },
    max_error = { type = "number", unit = "deg", default = 2, range = { 0.001, 90 }, doc = "following error that stops the motion (mm for prismatic joints)" },
    singularity = { type = "number", default = 0.005, range = { 0, 1 }, doc = "smallest singular value of the tool Jacobian allowed on the way" },
    record = { type = "boolean", default = false, doc = "record the run to HDF5" },
  }
  for k, v in pairs(extra) do params[k] = v end
  return params
end

return M
