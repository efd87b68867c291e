-- stdlib/ros/follow_joint_trajectory.lua — MoveIt drives morc: serves control_msgs/action/
-- FollowJointTrajectory goals (what MoveIt's simple controller manager sends a robot's
-- controller) with morc.ros.trajectory_server. Each goal is checked before the robot moves
-- (joint names, points, stamp, start state, position/velocity/acceleration limits: a goal that
-- fails is rejected with the action's error code), then runs as a monitored motion
-- (`joint_trajectory` through stdlib.assemblies.motion), with feedback; a cancel request, Ctrl-C
-- or hold stop it and the robot holds. The result's code says how it ended:
--   SUCCESSFUL               ran, and every joint ended within its goal tolerance
--   PATH_TOLERANCE_VIOLATED  stopped on the way: following error past the path tolerance, a limit, a fault
--   GOAL_TOLERANCE_VIOLATED  ran, but a joint ended outside its goal tolerance
-- Tolerances come from the goal (rad; m for prismatic joints); where it gives 0 for a joint the
-- defaults below hold, −1 turns the goal check off (the path is always monitored).
local motion_assembly = require "stdlib.assemblies.motion"
local command = require "stdlib.motion.command"

--- Following error (°; mm for prismatic joints) that stops a goal where it gives no path tolerance: the motion commands' default.
local DEFAULT_PATH_TOLERANCE = 2
--- Final error (°; mm) a goal must end within where it gives no goal tolerance: the motion commands' default.
local DEFAULT_GOAL_TOLERANCE = 0.01
--- Time after the last point before the final error is taken, where the goal gives no goal_time_tolerance (s).
local DEFAULT_SETTLE = 0.2

--- The path tolerance for the monitor (°; mm): the tightest the goal gives, else the default.
local function path_tolerance(plan, scale)
  local tightest
  for i, t in ipairs(plan.path_tolerance) do
    if t > 0 then
      local x = t * scale[i]
      tightest = tightest and math.min(tightest, x) or x
    end
  end
  return tightest or DEFAULT_PATH_TOLERANCE
end

--- The first joint outside its goal tolerance, as text; nil when all are within.
local function outside_goal(robot, plan, final_error, scale)
  for i, e in ipairs(final_error) do
    local t = plan.goal_tolerance[i]
    local limit = (t == 0) and DEFAULT_GOAL_TOLERANCE or t * scale[i]
    local err = math.abs(e * scale[i])
    if t ~= -1 and err > limit then
      local unit = " " .. robot.joints[i].unit
      return ("joint %s ended %.4g%s from its goal, outside its tolerance %.4g%s"):format(robot.joints[i].name, err, unit, limit, unit)
    end
  end
end

--- Runs one accepted goal; returns how it ended: end ("succeeded", "aborted", "canceled"), code, text.
local function execute(server, engine, robot, plan)
  local scale = command.scales(robot)
  local settle = plan.goal_time_tolerance > 0 and plan.goal_time_tolerance or DEFAULT_SETTLE
  local a = motion_assembly(robot, "joint_trajectory", {
    times = plan.times, positions = plan.positions, velocities = plan.velocities, accelerations = plan.accelerations, settle = settle,
  }, { name = "follow_joint_trajectory", max_error = path_tolerance(plan, scale) })
  local ok, r = pcall(engine.run, engine, a)
  if not ok then
    -- Ctrl-C (or an error) while it ran: the goal ends before the error goes on.
    server:finish("aborted", "PATH_TOLERANCE_VIOLATED", tostring(r))
    error(r, 0)
  end
  if server:cancel_requested() then return "canceled", "SUCCESSFUL", "cancelled: the robot holds" end
  if not r.ok then return "aborted", "PATH_TOLERANCE_VIOLATED", r.reason end
  local outside = outside_goal(robot, plan, r.data["mon.final_error"], scale)
  if outside then return "aborted", "GOAL_TOLERANCE_VIOLATED", outside end
  return "succeeded", "SUCCESSFUL", ("followed %d points in %.3f s"):format(#plan.times, plan.duration)
end

--- Serves goals until opts.goals have come or none came for opts.timeout seconds (default: serve
--- until Ctrl-C). opts: action, robot, goals, timeout, log (a function taking a line; default print).
--- Returns each goal's { id, status ("succeeded", "aborted", "canceled", "rejected"), code, text }.
return function(opts)
  opts = opts or {}
  if not morc.ros.status() and morc.checking then error("morc.ros.follow_joint_trajectory: morc check joins no ROS 2 network, so no goal can come: try the program with `morc --ros run`", 2) end
  if not morc.ros.status() then error("morc.ros.follow_joint_trajectory: morc is not on ROS 2: run `morc --ros run …` or call morc.ros.start() first", 2) end
  local robot = opts.robot or morc.current_robot
  if not robot then error("morc.ros.follow_joint_trajectory: no robot: morc.use_robot(require \"robots.kr16\") first", 2) end
  local engine = morc.engine
  local log = opts.log or print
  local server = morc.ros.trajectory_server { action = opts.action, robot = robot }
  log(("morc: FollowJointTrajectory on %s for robot %s"):format(server.action, robot.name))
  local results = {}
  while not opts.goals or #results < opts.goals do
    local goal = server:next(opts.timeout)
    if not goal then break end
    local plan, code, why = server:plan(command.joint_position(engine, robot))
    local result
    if not plan then
      result = { id = goal.id, status = "rejected", code = code, text = why }
    else
      server:accept()
      local status, c, text = execute(server, engine, robot, plan)
      server:finish(status, c, text)
      result = { id = goal.id, status = status, code = c, text = text }
    end
    results[#results + 1] = result
    log(("goal %s: %s, %s: %s"):format(result.id:sub(1, 8), result.status, result.code, result.text))
  end
  return results
end
