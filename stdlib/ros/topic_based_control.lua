-- stdlib/ros/topic_based_control.lua — morc as a ros2_control system's hardware, by the
-- topic_based_ros2_control convention (its TopicBasedSystem plugin): ros2_control sends the
-- joints' commands as sensor_msgs/msg/JointState on /robot_joint_commands and reads the robot's
-- state from /robot_joint_states. Here morc is that robot:
--
--   cmd    ros.subscribe  /robot_joint_commands  the joints by name (position; rad, m)
--   traj   joint_stream   follows the commands from where the robot is, within its limits
--   mon    monitor        following error and limits, as in every motion
--   state  ros.publish    /robot_joint_states    position, velocity, effort of the robot
--
-- The commands are a target, never the drives' command: the robot holds until the first comes,
-- then follows sample to sample within its velocity and acceleration limits; a command outside
-- a joint's limits or more than max_jump from the robot stops the run, naming the joint (the
-- plugin sends zeros at start unless use_initial_states_as_initial_commands is true). It runs
-- until Ctrl-C, a fault, options.duration seconds, or no command for options.idle seconds; the
-- robot then holds.
local motion_assembly = require "stdlib.assemblies.motion"

local KEYS = { robot = true, commands = true, states = true, rate = true, max_jump = true, max_error = true, duration = true, idle = true, log = true }

--- Runs the robot as ros2_control's hardware; returns the run's result (ok, reason, data).
--- opts: robot, commands (topic), states (topic), rate (states per second, default every
--- step), max_jump (°, default 5), max_error (following error, °, default 2), duration (s), idle (s: end once
--- no command came for this long and the robot stands at the last; default never), log.
return function(opts)
  opts = opts or {}
  for k in pairs(opts) do
    if not KEYS[k] then error(("morc.ros.topic_based_control: unknown option '%s' (robot, commands, states, rate, max_jump, max_error, duration, idle, log)"):format(tostring(k)), 2) end
  end
  -- Under morc check the topics run without a network (the commands never come; the run ends at the check's limit).
  if not morc.ros.status() and not morc.checking then error("morc.ros.topic_based_control: morc is not on ROS 2: run `morc --ros run …` or call morc.ros.start() first", 2) end
  local robot = opts.robot or morc.current_robot
  if not robot then error("morc.ros.topic_based_control: no robot: morc.use_robot(require \"robots.kr16\") first", 2) end
  local commands = opts.commands or "/robot_joint_commands"
  local states = opts.states or "/robot_joint_states"
  local a = motion_assembly(robot, "joint_stream", { max_jump = opts.max_jump or 5, idle = opts.idle or 0 }, { name = "topic_based_control", max_error = opts.max_error })
  a:add("cmd", "ros.subscribe", { topic = commands, type = "sensor_msgs/msg/JointState", stale = "hold" })
  a:connect("cmd.position", "traj.target")
  a:connect("cmd.age", "traj.age")
  a:add("state", "ros.publish", { topic = states, type = "sensor_msgs/msg/JointState", rate = opts.rate or 0 })
  a:connect("robot.q", "state.position")
  a:connect("robot.qd", "state.velocity")
  a:connect("robot.tau", "state.effort")
  a.duration = opts.duration
  local log = opts.log or print
  log(("morc: ros2_control hardware for robot %s: commands on %s, states on %s"):format(robot.name, commands, states))
  return morc.engine:run(a)
end
