//! Assemblies on ROS 2 as a lab meets them: `ros.subscribe` and `ros.publish` components in a Lua
//! program run with `morc --ros run`, against ROS 2's own Python client (rclpy on Fast DDS, from
//! PyPI; tests/python/ros_pubsub_peer.py):
//! - an rclpy publisher's Twist, JointState (picked by joint name, the messages of other joints
//!   counted and dropped) and JointTrajectory reach the program's components;
//! - a program's Float64 and WrenchStamped reach an rclpy subscriber with their values, frame
//!   and UTC stamps (the run's start plus the time of the step that sent them);
//! - a silent topic is held, zeroed or faults (naming the topic) as `stale` says;
//! - bad parameters, and a program not on ROS 2, are errors that name the component and what is
//!   known.
//!
//! Programs wait for what they need on the wall clock with a generous time-out (discovery between
//! RustDDS and Fast DDS takes from milliseconds to seconds) rather than sleeping fixed times, and
//! peers tell the program when they have enough. Every test runs on a loopback of its own
//! (tests/ros_support): needs root and the peers scripts/setup --test installs.

mod ros_support;

use std::path::Path;
use std::process::{Child, Output};

use ros_support::{report, scratch, RosNet};

/// Runs `program` with `morc [args] run prog.lua` in the namespace; its output.
fn run_morc(net: &RosNet, dir: &Path, args: &[&str], program: &str) -> Output {
    std::fs::write(dir.join("prog.lua"), program).unwrap();
    net.morc().current_dir(dir).args(args).args(["run", "prog.lua"]).output().unwrap()
}

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).to_string(), String::from_utf8_lossy(&out.stderr).to_string())
}

/// A peer that runs until stopped.
fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

fn numbers_after(text: &str, key: &str) -> Vec<f64> {
    let line = text.lines().find_map(|l| l.split_once(key).map(|(_, rest)| rest)).unwrap_or_else(|| panic!("no '{key}' in {text}"));
    line.split_whitespace().map_while(|x| x.parse().ok()).collect()
}

/// Waits (60 s at most, on the wall clock) until the three subscriptions have each taken a few
/// messages, then ends the run with what they hold.
const LISTEN: &str = r#"
local a = morc.assembly { "listen", duration = 60 }
a:add("cmd", "ros.subscribe", { topic = "/cmd_vel", type = "geometry_msgs/msg/Twist" })
a:add("js", "ros.subscribe", { topic = "/joints", type = "sensor_msgs/msg/JointState", names = "j1,j2,j3" })
a:add("traj", "ros.subscribe", { topic = "/traj", type = "trajectory_msgs/msg/JointTrajectory", names = "j1, j2, j3" })
local watch = morc.component {
  name = "watch",
  inputs = { "linear[3]", "angular[3]", "cmd_age:integer", "q[3]", "qd[3]", "tau[3]", "js_age:integer", "p[3]", "v[3]", "tfs", "traj_age:integer" },
  init = function(self) self.fresh = { cmd = 0, js = 0, traj = 0 } end,
  step = function(self, inp, out, t)
    local f = self.fresh
    if inp.cmd_age == 0 then f.cmd = f.cmd + 1 end
    if inp.js_age == 0 then f.js = f.js + 1 end
    if inp.traj_age == 0 then f.traj = f.traj + 1 end
    if f.cmd >= 3 and f.js >= 3 and f.traj >= 3 then
      local function list(v) return string.format("%.17g %.17g %.17g", v[1], v[2], v[3]) end
      return "twist " .. list(inp.linear) .. " " .. list(inp.angular) .. " joints " .. list(inp.q) .. " " .. list(inp.qd) .. " " .. list(inp.tau)
        .. " traj " .. list(inp.p) .. " " .. list(inp.v) .. " " .. inp.tfs
    end
  end,
}
a:add("watch", watch)
for from, to in pairs { ["cmd.linear"] = "linear", ["cmd.angular"] = "angular", ["cmd.age"] = "cmd_age", ["js.position"] = "q",
  ["js.velocity"] = "qd", ["js.effort"] = "tau", ["js.age"] = "js_age", ["traj.positions"] = "p", ["traj.velocities"] = "v",
  ["traj.time_from_start"] = "tfs", ["traj.age"] = "traj_age" } do
  a:connect(from, "watch." .. to)
end
local r = morc.engine:run(a)
assert(r.ok and r.outcome == "finished" and r.reason:find("twist"), "nothing came: " .. tostring(r.reason))
print(r.reason)
print(string.format("joints received %d dropped %d", r.data["js.received"], r.data["js.dropped"]))
"#;

#[test]
fn an_rclpy_publishers_messages_reach_the_assembly() {
    let dir = scratch("pubsub-listen");
    let net = RosNet::new(11);
    let peer = net.peer("ros_pubsub_peer.py", &["talk", "120"]);
    let out = run_morc(&net, &dir, &["--ros"], LISTEN);
    stop(peer);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "morc failed: {stdout}\n{stderr}");
    assert_eq!(numbers_after(&stdout, "twist "), [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], "{stdout}");
    // Picked by name out of j3 j1 j2; no efforts read as zeros.
    assert_eq!(numbers_after(&stdout, "joints "), [1.0, 2.0, 3.0, 10.0, 20.0, 30.0, 0.0, 0.0, 0.0], "{stdout}");
    assert_eq!(numbers_after(&stdout, "traj "), [1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.5], "{stdout}");
    // Three good messages came in order, so the two naming only j1 j2 between them came too.
    let counts = numbers_after(&stdout, "joints received ");
    let dropped = numbers_after(&stdout, "dropped ");
    assert!(counts[0] >= 3.0 && dropped[0] >= 2.0, "{stdout}");
    assert!(stderr.contains("/joints was dropped: it names no joint 'j3'"), "the first drop is told once: {stderr}");
}

/// Publishes run time t as a Float64 and a WrenchStamped (force t 2t 3t, torque -t 0.5 7) 100
/// times a second until the peer has acknowledged 5 times (60 s at most).
const TALK: &str = r#"
local source = morc.component {
  name = "source", outputs = { "t", "force[3]", "torque[3]" },
  step = function(self, inp, out, t)
    out.t = t
    out.force[1], out.force[2], out.force[3] = t, 2 * t, 3 * t
    out.torque[1], out.torque[2], out.torque[3] = -t, 0.5, 7
  end,
}
local until_acked = morc.component {
  name = "until_acked", inputs = { "ack:boolean", "age:integer" },
  init = function(self) self.acks = 0 end,
  step = function(self, inp, out, t)
    if inp.age == 0 and inp.ack then self.acks = self.acks + 1 end
    if self.acks >= 5 then return "acknowledged" end
  end,
}
local a = morc.assembly { "talk", duration = 60 }
a:add("src", source)
a:add("value", "ros.publish", { topic = "/value", type = "std_msgs/msg/Float64", rate = 100 })
a:add("wrench", "ros.publish", { topic = "/wrench", type = "geometry_msgs/msg/WrenchStamped", qos = "sensor_data", rate = 100, frame_id = "tool0" })
a:add("ack", "ros.subscribe", { topic = "/ack", type = "std_msgs/msg/Bool" })
a:add("until", until_acked)
a:connect("src.t", "value.data")
a:connect("src.force", "wrench.force")
a:connect("src.torque", "wrench.torque")
a:connect("ack.data", "until.ack")
a:connect("ack.age", "until.age")
local r = morc.engine:run(a)
assert(r.ok and r.reason:find("acknowledged"), "no acknowledgement: " .. tostring(r.reason))
print(string.format("sent %d %d dropped %d %d", r.data["value.sent"], r.data["wrench.sent"], r.data["value.dropped"], r.data["wrench.dropped"]))
"#;

#[test]
fn the_assemblys_messages_reach_an_rclpy_subscriber() {
    let dir = scratch("pubsub-talk");
    let net = RosNet::new(12);
    let peer = net.peer("ros_pubsub_peer.py", &["listen", "120"]);
    let started = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let out = run_morc(&net, &dir, &["--ros"], TALK);
    let ended = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let got = report(peer);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "morc failed: {stdout}\n{stderr}");
    let sent = numbers_after(&stdout, "sent ");

    // Float64: run times on the 100 Hz grid, in order.
    let values: Vec<f64> = got["value"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert!(values.len() >= 20 && values.len() as f64 <= sent[0], "{} values, {} sent", values.len(), sent[0]);
    for w in values.windows(2) {
        let steps = (w[1] - w[0]) * 100.0;
        assert!(steps >= 0.999 && (steps - steps.round()).abs() < 1e-6, "{} then {}: not the next messages at 100 Hz", w[0], w[1]);
    }
    assert!(values.iter().all(|v| (v * 100.0 - (v * 100.0).round()).abs() < 1e-6), "{values:?}");

    // WrenchStamped: the values of one step, in frame tool0, stamped the run's start plus that step's time.
    let wrenches = got["wrench"].as_array().unwrap();
    assert!(wrenches.len() >= 20, "{} wrenches", wrenches.len());
    let mut epoch = None;
    let mut last_stamp = 0;
    for w in wrenches {
        let stamp = w[0].as_u64().unwrap();
        assert_eq!(w[1], "tool0");
        let x: Vec<f64> = (2..8).map(|i| w[i].as_f64().unwrap()).collect();
        let t = x[0];
        assert_eq!(x, [t, 2.0 * t, 3.0 * t, -t, 0.5, 7.0], "one step's wrench");
        assert!((t * 100.0 - (t * 100.0).round()).abs() < 1e-6, "t = {t} is not on the 100 Hz grid");
        let start = stamp as i128 - (t * 1e9).round() as i128;
        let epoch = *epoch.get_or_insert(start);
        assert!((start - epoch).abs() <= 1, "stamp {stamp} for t = {t}: the run's start moved from {epoch} to {start}");
        assert!(stamp > last_stamp, "stamps increase");
        last_stamp = stamp;
    }
    // UTC: the run started while morc ran.
    let epoch = epoch.unwrap() as u64;
    assert!(started <= epoch && epoch <= ended, "the run's start {epoch} is not between {started} and {ended}");
    assert!(wrenches.len() as f64 <= sent[1]);
}

/// Two runs against the echo peer (which publishes /level 42.0 while /enable is true): one with
/// a held and a zeroed subscription, one whose subscription faults; each asks for the data,
/// waits until it came, asks for silence, and waits until the input is stale.
const STALE: &str = r#"
local phases = morc.component {
  name = "phases", inputs = { "hold", "hold_age:integer", "zero", "zero_age:integer" }, outputs = { "on:boolean" },
  init = function(self, out) self.phase = "wait"; out.on = true end,
  step = function(self, inp, out, t)
    if self.phase == "wait" and inp.hold_age < 50 and inp.zero_age < 50 then
      self.phase, self.fresh = "quiet", string.format("%g %g", inp.hold, inp.zero)
    end
    out.on = self.phase == "wait"
    if self.phase == "quiet" and inp.hold_age >= 50 and inp.zero_age >= 50 then
      return string.format("fresh %s stale %g %g", self.fresh, inp.hold, inp.zero)
    end
  end,
}
local a = morc.assembly { "stale", duration = 60 }
a:add("enable", "ros.publish", { topic = "/enable", type = "std_msgs/msg/Bool", rate = 50 })
a:add("hold", "ros.subscribe", { topic = "/level", type = "std_msgs/msg/Float64", stale = "hold", stale_after = 50 })
a:add("zero", "ros.subscribe", { topic = "/level", type = "std_msgs/msg/Float64", stale = "zero", stale_after = 50 })
a:add("phases", phases)
a:connect("hold.data", "phases.hold")
a:connect("hold.age", "phases.hold_age")
a:connect("zero.data", "phases.zero")
a:connect("zero.age", "phases.zero_age")
a:connect("phases.on", "enable.data")
local r = morc.engine:run(a)
assert(r.ok and r.reason:find("stale"), "did not go stale: " .. tostring(r.reason))
print(r.reason)

local once = morc.component {
  name = "once", inputs = { "age:integer" }, outputs = { "on:boolean" },
  init = function(self, out) self.came = false; out.on = true end,
  step = function(self, inp, out, t)
    if inp.age < 50 then self.came = true end
    out.on = not self.came
  end,
}
local b = morc.assembly { "stale_fault", duration = 60 }
b:add("enable", "ros.publish", { topic = "/enable", type = "std_msgs/msg/Bool", rate = 50 })
b:add("level", "ros.subscribe", { topic = "/level", type = "std_msgs/msg/Float64", stale = "fault", stale_after = 50 })
b:add("once", once)
b:connect("level.age", "once.age")
b:connect("once.on", "enable.data")
local r = morc.engine:run(b)
assert(not r.ok and r.outcome == "fault", "no fault: " .. tostring(r.reason))
print("fault: " .. r.reason)
"#;

#[test]
fn a_silent_topic_is_held_zeroed_or_faults() {
    let dir = scratch("pubsub-stale");
    let net = RosNet::new(13);
    let peer = net.peer("ros_pubsub_peer.py", &["echo", "150"]);
    let out = run_morc(&net, &dir, &["--ros"], STALE);
    stop(peer);
    let (stdout, stderr) = text(&out);
    assert!(stderr.contains("on ROS 2 as node /morc in domain 13"), "{stderr}");
    assert!(out.status.code() == Some(0) || out.status.code() == Some(3), "morc failed: {stdout}\n{stderr}");
    // Fresh, both read the peer's 42; stale, hold keeps it and zero outputs 0.
    assert_eq!(numbers_after(&stdout, "fresh "), [42.0, 42.0], "{stdout}");
    assert_eq!(numbers_after(&stdout, "stale "), [42.0, 0.0], "{stdout}");
    let fault = stdout.lines().find(|l| l.starts_with("fault: ")).unwrap_or_else(|| panic!("no fault line in {stdout}\n{stderr}"));
    assert!(fault.contains("ros.subscribe 'level': nothing came on /level for 50 steps (0.050 s; stale_after = 50); the last came at t = "), "{fault}");
}

/// Adds components with bad parameters; prints each error.
const BAD: &str = r#"
local a = morc.assembly "bad"
local function try(kind, params)
  local ok, e = pcall(a.add, a, "c", kind, params)
  assert(not ok, "accepted")
  print("error: " .. tostring(e))
end
try("ros.subscribe", { topic = "/x", type = "geometry_msgs/msg/Twist", stale_aftr = 10 })
try("ros.publish", { topic = "/x", type = "std_msgs/msg/Float64", colour = "red" })
try("ros.publish", { topic = "/x", type = "nav_msgs/msg/Odometry" })
try("ros.subscribe", { topic = "/x", type = "std_msgs/msg/Float64", qos = "best" })
try("ros.subscribe", { topic = "/x", type = "std_msgs/msg/Float64", stale = "keep" })
try("ros.publish", { topic = "/bad topic", type = "std_msgs/msg/Float64" })
if morc.ros.status() then
  -- Arrays without a size, and no robot to take the joint count from: an error at run, naming the component.
  local b = morc.assembly { "sizes", duration = 0.01 }
  b:add("js", "ros.subscribe", { topic = "/js", type = "sensor_msgs/msg/JointState" })
  local ok, e = pcall(morc.engine.run, morc.engine, b)
  print("run: " .. tostring(ok and e.reason or e))
end
"#;

#[test]
fn bad_parameters_and_no_ros_2_are_clear_errors() {
    let dir = scratch("pubsub-bad");
    let net = RosNet::new(14);
    let out = run_morc(&net, &dir, &["--ros"], BAD);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "morc failed: {stdout}\n{stderr}");
    let errors: Vec<&str> = stdout.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 6, "{stdout}");
    assert!(errors.iter().all(|e| e.contains("component 'c': ")), "each names the component: {errors:#?}");
    assert!(errors[0].contains("unknown parameter 'stale_aftr' of ros.subscribe; did you mean 'stale_after'?"), "{}", errors[0]);
    assert!(errors[1].contains("unknown parameter 'colour' of ros.publish; known: frame_id, names, qos, rate, size, topic, type"), "{}", errors[1]);
    assert!(errors[2].contains("unknown message type 'nav_msgs/msg/Odometry' for a ROS 2 topic; known: ") && errors[2].contains("geometry_msgs/msg/Twist"), "{}", errors[2]);
    assert!(errors[3].contains("unknown QoS profile 'best' for a ROS 2 topic; known: default, sensor_data, transient_local"), "{}", errors[3]);
    assert!(errors[4].contains("unknown stale policy 'keep' (stale = …); known: fault, hold, zero"), "{}", errors[4]);
    assert!(errors[5].contains("'/bad topic' is not a ROS 2 topic name"), "{}", errors[5]);
    let run = stdout.lines().find(|l| l.starts_with("run: ")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(run.contains("component 'js' (ros.subscribe)") && run.contains("give their size (size = 6)"), "{run}");

    // Not on ROS 2: adding one says how to get there.
    let no_ros = r#"
local a = morc.assembly "x"
local ok, e = pcall(a.add, a, "cmd", "ros.subscribe", { topic = "/cmd_vel", type = "geometry_msgs/msg/Twist" })
print(e)
"#;
    let out = run_morc(&net, &dir, &[], no_ros);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("component 'cmd': ros.subscribe needs morc on ROS 2, and it is not: run the program with `morc --ros run prog.lua`, or call morc.ros.start()"), "{stdout}");
}
