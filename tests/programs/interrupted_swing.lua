-- The KR 16 swings A1 at its full 156 °/s; the test presses Ctrl-C at 120 °/s (SIGINT to morc,
-- as the terminal sends it); the program takes the interruption and stays up 1.5 s more,
-- so whoever watches (the operator page, the live view's /morc/state, ROS 2's /morc/state) sees
-- the arm brake and then stand still. Used by tests/robot_state_views.rs and tests/ros_robot.rs.
local kr16 = require "robots.kr16"
morc.use_robot(kr16, { q0 = kr16.home })
local watcher = os.getenv("MORC_TEST_WATCHER")
if watcher == "live" then
  assert(morc.live.wait_for_client(30), "the live view's client came")
elseif watcher == "ros" then
  assert(morc.ros.wait_for_subscribers("/morc/state", 1, 30), "the ROS 2 peer subscribed")
end
local a = morc.assembly { "swing" }
a:add("traj", kr16:component("ptp"), { target = { 170, -90, 90, 0, 45, 0 }, vel_scale = 1, acc_scale = 1 })
a:connect("robot.q", "traj.start"); a:connect("traj.q", "robot.q_cmd"); a:connect("traj.qd", "robot.qd_ff")
-- The test presses Ctrl-C (SIGINT) once A1 turns at 120 °/s.
local ok = morc.catch_interrupt(function() return morc.engine:run(a) end)
print("interrupted", not ok)
os.execute("sleep 1.5")
print("bye")
