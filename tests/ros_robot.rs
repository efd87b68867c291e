//! morc on ROS 2 as a lab meets it: `morc --ros run prog.lua` joins ROS 2 with no ROS install,
//! and ROS 2's own Python client (rclpy on Fast DDS, from PyPI; tests/python/ros_robot_peer.py)
//! finds the node `/morc` in the graph, receives `/joint_states` (sensor_msgs/msg/JointState,
//! the robot's joint names, SI units, UTC stamps) as the arm moves and the latched
//! `/robot_description`; Eclipse Cyclone DDS (tests/python/ros_tf_peer.py, types from IDL since
//! tf2_msgs is not on PyPI) receives `/tf` and `/tf_static`, whose transforms rebuild the URDF's
//! link tree.
//!
//! Every test runs on a loopback of its own (tests/ros_support), in domain 7. Needs root and the peers
//! scripts/setup --test installs.

mod ros_support;

use std::path::Path;

use ros_support::{report, scratch, RosNet};

/// The KR 16 moves to a pose and back on the wall clock; prints where it went, in rad.
const PROGRAM: &str = r#"
local kr16 = require "robots.kr16"
morc.use_robot(kr16, { q0 = kr16.home })
morc.lib.use "motion"
assert(morc.ros.status(), "on ROS 2")
-- Both peers (rclpy, Cyclone DDS) listen before the arm moves.
assert(morc.ros.wait_for_subscribers("/joint_states", 1, 30), "the rclpy peer subscribed")
assert(morc.ros.wait_for_subscribers("/tf", 1, 30), "the Cyclone DDS peer subscribed")
local target = { 10, -80, 100, 5, 60, -20 }
assert(ptp(target).ok)
local rad = {}
for i, x in ipairs(target) do rad[i] = string.format("%.12f", math.rad(x)) end
print("target " .. table.concat(rad, " "))
local s = morc.ros.status()
print(string.format("status %s %d %d %d", s.node, s.domain, s.published, s.dropped))
"#;

fn run_morc(net: &RosNet, dir: &Path, domain: &str) -> String {
    std::fs::write(dir.join("prog.lua"), PROGRAM).unwrap();
    let out = net.morc().current_dir(dir).args(["--ros", "run", "prog.lua"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "morc failed: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("on ROS 2 as node /morc in domain {domain}")), "{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

fn numbers_after(text: &str, key: &str) -> Vec<f64> {
    let line = text.lines().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("no '{key}' in {text}"));
    line[key.len()..].split_whitespace().map(|x| x.parse().unwrap()).collect()
}

#[test]
fn ros_2_peers_see_the_arm_move() {
    let dir = scratch("robot");
    let net = RosNet::new(7);
    let domain = "7";
    let rclpy = net.peer("ros_robot_peer.py", &["90"]);
    let cyclone = net.peer("ros_tf_peer.py", &["90"]);
    let stdout = run_morc(&net, &dir, domain);
    let got = report(rclpy);
    let tf = report(cyclone);

    let nodes = got["nodes"].as_array().unwrap();
    assert!(nodes.iter().any(|n| n[0] == "morc" && n[1] == "/"), "node /morc not in the graph: {nodes:?}");
    assert_eq!(got["topics"]["/joint_states"][0], "sensor_msgs/msg/JointState", "{}", got["topics"]);
    assert_eq!(got["topics"]["/tf"][0], "tf2_msgs/msg/TFMessage", "{}", got["topics"]);

    let states = &got["joint_states"];
    let names: Vec<&str> = states["name"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    let description = got["description"].as_str().expect("the latched /robot_description came");
    // The names are the URDF's moving joints, in order.
    let urdf_joints: Vec<&str> = description.split("<joint name=\"").skip(1).filter(|j| !j.contains("type=\"fixed\"")).map(|j| j.split('"').next().unwrap()).collect();
    let urdf_moving: Vec<&str> = urdf_joints.iter().copied().filter(|j| !j.ends_with("_fixed")).collect();
    assert_eq!(names, urdf_moving, "{description}");
    assert_eq!(names.len(), 6);

    // The arm went where the program sent it: the last state is the target, in rad.
    let target = numbers_after(&stdout, "target ");
    let last: Vec<f64> = states["last"]["position"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    for (i, (a, b)) in last.iter().zip(&target).enumerate() {
        assert!((a - b).abs() < 1e-4, "joint {i}: {a} rad on /joint_states, the program sent {b} rad (the simulated arm settles within 0.006°)");
    }
    assert_eq!(states["last"]["velocity"].as_array().unwrap().len(), 6);
    assert_eq!(states["last"]["effort"].as_array().unwrap().len(), 6);
    // A 1-2 s move at 100 Hz, all of it.
    let count = states["count"].as_u64().unwrap();
    assert!(count >= 50, "{count} joint states");
    // UTC stamps of now, increasing.
    let (first, last_stamp) = (states["stamps"][0].as_u64().unwrap(), states["stamps"][1].as_u64().unwrap());
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    assert!(first < last_stamp && now.abs_diff(last_stamp) < 120_000_000_000, "stamps {first}..{last_stamp}, now {now}");
    let status = stdout.lines().find(|l| l.starts_with("status ")).unwrap();
    assert!(status.starts_with(&format!("status /morc {domain} ")) && status.ends_with(" 0"), "{status}");

    // /tf (Cyclone DDS): each moving joint's child link in its parent link, as the URDF's own
    // kinematics places it at the last joint state; /tf_static: the fixed joints.
    let model = morc_model::parse_urdf(description, "robot_description").unwrap();
    let mut data = morc_model::Data::new(&model);
    morc_model::forward_kinematics_placements(&model, &mut data, &last);
    let moving = tf["tf"]["last"].as_array().expect("/tf came");
    assert_eq!(moving.len(), 6, "{moving:?}");
    assert!(tf["tf"]["count"].as_u64().unwrap() >= 50);
    for t in moving {
        let (parent, child) = (t[0].as_str().unwrap(), t[1].as_str().unwrap());
        let j = (1..model.njoints())
            .find(|&j| model.frames().iter().any(|f| f.name == child && f.parent_joint == j))
            .unwrap_or_else(|| panic!("/tf child {child} is no link the URDF's joints move"));
        assert!(model.frames().iter().any(|f| f.name == parent && f.parent_joint == model.parent(j)), "{parent} is not the parent link of {child}");
        let want = &data.local_placements[j];
        let xyz: Vec<f64> = t[2].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        let quat: Vec<f64> = t[3].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        assert!((nalgebra::Vector3::new(xyz[0], xyz[1], xyz[2]) - want.translation).norm() < 1e-9, "{child}: {xyz:?} vs {}", want.translation);
        let q = nalgebra::UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(quat[3], quat[0], quat[1], quat[2]));
        assert!((q.to_rotation_matrix().into_inner() - want.rotation).norm() < 1e-9, "{child}: rotation");
    }
    let fixed = tf["tf_static"].as_array().expect("the latched /tf_static came");
    let urdf_fixed = description.matches("type=\"fixed\"").count();
    assert_eq!(fixed.len(), urdf_fixed, "{fixed:?}");
    assert!(fixed.iter().all(|t| t[1].as_str().is_some_and(|c| description.contains(&format!("<link name=\"{c}\"/>")))), "{fixed:?}");
}

#[path = "support/state_story.rs"]
mod state_story;

#[test]
fn on_ros_2_the_state_says_stopping_while_the_arm_brakes_then_idle() {
    use std::io::{BufRead, Read};
    let dir = scratch("state");
    let net = RosNet::new(7);
    let peer = net.peer("ros_state_peer.py", &["90", "idle"]);
    let program = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/interrupted_swing.lua");
    let mut morc = net
        .morc()
        .current_dir(&dir)
        .env("MORC_TEST_WATCHER", "ros")
        .args(["--clock", "wall", "--ros", "--live=127.0.0.1:0", "run"])
        .arg(&program)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(morc.stderr.take().unwrap());
    let mut head = String::new();
    let page = loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "morc did not say where its page is: {head}");
        head.push_str(&line);
        if let Some(url) = line.trim().strip_prefix("operator page: http://") {
            break url.to_string();
        }
    };
    let said = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let (address, token) = page.split_once("/?token=").unwrap();
    let pid = morc.id();
    // The page is in the test's network namespace: its poller thread enters it.
    std::thread::scope(|scope| {
        scope.spawn(|| {
            net.enter();
            state_story::watch_page_and_press_ctrl_c(address, token, pid)
        });
    });
    let out = morc.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("interrupted\ttrue"), "morc: {stdout}\n{}", said.join().unwrap());
    let got = report(peer);
    // The words: /joint_states comes from the run's tap, which does not step while the base
    // brakes after the run was stopped, so the braking's speeds are the page's and /morc/state's
    // of the live view (tests/robot_state_views.rs), not ROS 2's yet.
    let seen: Vec<(String, f64)> = got["states"]
        .as_array()
        .unwrap_or_else(|| panic!("{got}"))
        .iter()
        .map(|s| (s["state"].as_str().unwrap_or("?").to_string(), s["speed"].as_f64().unwrap_or(f64::NAN).to_degrees()))
        .collect();
    state_story::check_story("ROS 2's /morc/state", &seen, false);
    println!("ROS 2 /morc/state: {seen:?}");
}
