//! morc as ros2_control's hardware: `morc.ros.topic_based_control` takes JointState commands on
//! /robot_joint_commands and publishes the robot's JointState on /robot_joint_states, the
//! topic_based_ros2_control convention. The peer speaks it as that plugin does, on Eclipse
//! Cyclone DDS (tests/python/ros2_control_peer.py): commands streamed at 100 Hz with the joints
//! in another order are followed to where they end; a first command of zeros (the plugin's
//! default start) stops the run naming a joint, and the arm does not move.
//!
//! Every test runs on a loopback of its own (tests/ros_support). Needs root and the peers
//! scripts/setup --test installs.

mod ros_support;

use std::io::Read;
use std::path::Path;
use std::process::{Child, Stdio};

use ros_support::{report, scratch, RosNet};
use serde_json::Value as Json;

/// The KR 16 at home, serving as ros2_control's hardware for `seconds` at most (or until the
/// commands stopped 2 s ago); prints how the run ended and where the arm is (rad).
fn start_morc(net: &RosNet, dir: &Path, seconds: f64) -> Child {
    let program = format!(
        r#"
local kr16 = require "robots.kr16"
morc.use_robot(kr16, {{ q0 = kr16.home }})
local r = morc.ros.topic_based_control {{ duration = {seconds}, idle = 2 }}
print(("ended ok=%s reason=%s samples=%d"):format(tostring(r.ok), tostring(r.reason), r.data["traj.samples"] or -1))
local q = require("stdlib.motion.command").joint_position(morc.engine, kr16)
local out = {{}}
for i, x in ipairs(q) do out[i] = ("%.9f"):format(x) end
print("q " .. table.concat(out, " "))
"#
    );
    std::fs::write(dir.join("hardware.lua"), program).unwrap();
    net.morc().current_dir(dir).args(["--ros", "run", "hardware.lua"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

fn finish_morc(mut child: Child) -> (String, String) {
    let status = child.wait().unwrap();
    let (mut out, mut err) = (String::new(), String::new());
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(status.success(), "morc failed: {out}\n{err}");
    (out, err)
}

fn numbers(v: &Json) -> Vec<f64> {
    v.as_array().unwrap_or_else(|| panic!("not an array: {v}")).iter().map(|x| x.as_f64().unwrap()).collect()
}

fn numbers_after(text: &str, key: &str) -> Vec<f64> {
    let line = text.lines().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("no '{key}' in {text}"));
    line[key.len()..].split_whitespace().map(|x| x.parse().unwrap()).collect()
}

#[test]
fn streamed_commands_are_followed_to_where_they_end() {
    let dir = scratch("topic-based-ramp");
    let net = RosNet::new(4);
    // The stream ends the run (no command for 2 s, the arm standing at the last), however long
    // discovery took; the duration is only a backstop.
    let morc = start_morc(&net, &dir, 120.0);
    let got = report(net.peer("ros2_control_peer.py", &["ramp", "5", "1.0"]));
    let (out, err) = finish_morc(morc);
    assert!(got.get("error").is_none(), "{got}\n{out}\n{err}");
    assert!(out.contains("ended ok=true") && out.contains("the stream is over"), "the run ended when the commands stopped: {out}\n{err}");

    // The states name the robot's joints as its URDF does, in the robot's order.
    assert_eq!(got["names"], serde_json::json!(["joint1", "joint2", "joint3", "joint4", "joint5", "joint6"]), "{got}");
    let (first, target, last) = (numbers(&got["first"]), numbers(&got["target"]), numbers(&got["last"]));
    let home = [0.0f64, -90.0, 90.0, 0.0, 45.0, 0.0];
    for j in 0..6 {
        assert!((first[j] - home[j].to_radians()).abs() < 1e-3, "joint {j} starts at home: {first:?}");
        assert!((target[j] - first[j] - 5f64.to_radians()).abs() < 1e-9, "the ramp's end: {target:?}");
        // The last state published, and where the program reads the arm, is the last command.
        assert!((last[j] - target[j]).abs() < 0.01f64.to_radians(), "joint {j}: the state ends at {} rad, the commands at {} rad", last[j], target[j]);
    }
    let q = numbers_after(&out, "q ");
    for j in 0..6 {
        assert!((q[j] - target[j]).abs() < 0.01f64.to_radians(), "joint {j} ends at {} rad, not the last command's {}", q[j], target[j]);
    }
    // It followed the stream on the way (at 100 Hz, about 100 commands), not only its end.
    let samples = out.split("samples=").nth(1).and_then(|s| s.split_whitespace().next()).and_then(|s| s.parse::<i64>().ok()).unwrap();
    assert!(samples >= 50, "the stream's commands taken: {samples}\n{out}");
    assert!(got["states"].as_u64().unwrap() > 100, "states at the base rate, best effort: {got}");
    eprintln!("largest distance between a state and the command sent 10 ms before it: {:.4}°", got["max_lag"].as_f64().unwrap().to_degrees());
}

#[test]
fn a_first_command_of_zeros_stops_the_run_and_the_arm_stays() {
    let dir = scratch("topic-based-zeros");
    let net = RosNet::new(5);
    let morc = start_morc(&net, &dir, 30.0);
    let got = report(net.peer("ros2_control_peer.py", &["zeros"]));
    let (out, err) = finish_morc(morc);
    assert!(got.get("error").is_none(), "{got}\n{out}\n{err}");
    // The run faulted on the command, naming the joint and what to set; it did not wait out its 30 s.
    assert!(out.contains("ended ok=false"), "{out}\n{err}");
    assert!(out.contains("joint A2") && out.contains("max_jump") && out.contains("use_initial_states_as_initial_commands"), "{out}");
    let first = numbers(&got["first"]);
    let last = numbers(&got["last"]);
    let q = numbers_after(&out, "q ");
    for j in 0..6 {
        assert!((last[j] - first[j]).abs() < 1e-4 && (q[j] - first[j]).abs() < 1e-4, "joint {j} moved (more than the servo settling, 0.006°): {} → {} (program reads {})", first[j], last[j], q[j]);
    }
}
