//! MoveIt drives morc: `morc.ros.follow_joint_trajectory` serves
//! `control_msgs/action/FollowJointTrajectory` and a client that speaks the action as MoveIt's
//! controller manager does (Eclipse Cyclone DDS with control_msgs' types from its IDL, since
//! control_msgs is not on PyPI: tests/python/ros_trajectory_client.py) sends it goals: a planned
//! trajectory is followed through its points at their times, with feedback and a SUCCESSFUL
//! result; goals that name other joints, break a limit or start elsewhere are rejected before
//! anything moves; a cancel stops the arm, which holds; the same goal runs on the EtherCAT bus.
//!
//! Every test runs on a loopback of its own (tests/ros_support). Needs root and the peers
//! scripts/setup --test installs.

mod ros_support;

use std::io::Read;
use std::path::Path;
use std::process::{Child, Stdio};

use ros_support::{report, scratch, RosNet};
use serde_json::{json, Value as Json};

/// The KR 16's joints as its URDF (and /joint_states) names them.
const JOINTS: [&str; 6] = ["joint1", "joint2", "joint3", "joint4", "joint5", "joint6"];
const HOME: [f64; 6] = [0.0, -90.0, 90.0, 0.0, 45.0, 0.0];

/// Serves `goals` goals, then prints each result and where the arm is (rad).
fn program(goals: usize) -> String {
    format!(
        r#"
local kr16 = require "robots.kr16"
morc.use_robot(kr16, {{ q0 = kr16.home }})
local results = morc.ros.follow_joint_trajectory {{ goals = {goals}, timeout = 120 }}
for _, r in ipairs(results) do print(("result %s %s %s"):format(r.status, r.code, r.text)) end
local q = require("stdlib.motion.command").joint_position(morc.engine, kr16)
local out = {{}}
for i, x in ipairs(q) do out[i] = ("%.9f"):format(x) end
print("q " .. table.concat(out, " "))
"#
    )
}

fn start_morc(net: &RosNet, dir: &Path, goals: usize, bus: bool) -> Child {
    std::fs::write(dir.join("serve.lua"), program(goals)).unwrap();
    let mut cmd = net.morc();
    cmd.current_dir(dir).arg("--ros");
    if bus {
        cmd.args(["--bus", "sim"]);
    }
    cmd.args(["run", "serve.lua"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

fn finish_morc(mut child: Child) -> String {
    let status = child.wait().unwrap();
    let (mut out, mut err) = (String::new(), String::new());
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(status.success(), "morc failed: {out}\n{err}");
    out
}

/// Sends `goal` (cancelling it after `cancel_after` s); returns the client's report.
fn send(net: &RosNet, dir: &Path, name: &str, goal: &Json, cancel_after: Option<f64>) -> Json {
    let file = dir.join(format!("{name}.json"));
    std::fs::write(&file, goal.to_string()).unwrap();
    let mut args = vec!["/joint_trajectory_controller/follow_joint_trajectory".to_string(), file.display().to_string()];
    args.extend(cancel_after.map(|c| c.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    report(net.peer("ros_trajectory_client.py", &args))
}

/// A rest-to-rest quintic from `from` to `to` (degrees) over `t` seconds, sampled every 0.1 s
/// with positions, velocities and accelerations (rad), its joints in `order`: a plan as MoveIt's
/// time parameterisation hands one over.
fn planned(from: &[f64; 6], to: &[f64; 6], t: f64, order: &[usize]) -> Json {
    let steps = (t / 0.1).round() as usize;
    let points: Vec<Json> = (0..=steps)
        .map(|k| {
            let s = k as f64 / steps as f64;
            let (p, v, a) = (10.0 * s.powi(3) - 15.0 * s.powi(4) + 6.0 * s.powi(5), (30.0 * s * s - 60.0 * s.powi(3) + 30.0 * s.powi(4)) / t, (60.0 * s - 180.0 * s * s + 120.0 * s.powi(3)) / (t * t));
            let at = |f: &dyn Fn(usize) -> f64| -> Vec<f64> { order.iter().map(|&j| f(j)).collect() };
            let d = |j: usize| (to[j] - from[j]).to_radians();
            json!({
                "positions": at(&|j| from[j].to_radians() + d(j) * p),
                "velocities": at(&|j| d(j) * v),
                "accelerations": at(&|j| d(j) * a),
                "time_from_start": k as f64 * 0.1,
            })
        })
        .collect();
    json!({ "joint_names": order.iter().map(|&j| JOINTS[j]).collect::<Vec<_>>(), "points": points })
}

fn numbers_after(text: &str, key: &str) -> Vec<f64> {
    let line = text.lines().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("no '{key}' in {text}"));
    line[key.len()..].split_whitespace().map(|x| x.parse().unwrap()).collect()
}

fn follows_a_planned_trajectory(bus: bool) {
    let dir = scratch(if bus { "fjt-bus" } else { "fjt" });
    let net = RosNet::new(3);
    let morc = start_morc(&net, &dir, 1, bus);
    let target = [10.0, -80.0, 100.0, 5.0, 60.0, -20.0];
    // MoveIt lists the joints in its group's order, not necessarily the robot's.
    let order = [2, 0, 1, 5, 4, 3];
    let mut goal = planned(&HOME, &target, 2.0, &order);
    goal["path_tolerance"] = json!({ "joint2": 0.02 });
    goal["goal_tolerance"] = json!({ "joint1": 0.001, "joint2": 0.001 });
    goal["goal_time_tolerance"] = json!(0.5);
    let got = send(&net, &dir, "goal", &goal, None);
    let out = finish_morc(morc);

    assert_eq!(got["accepted"], true, "{got}\n{out}");
    assert_eq!(got["status"], 4, "succeeded: {got}\n{out}");
    assert_eq!(got["error_code"], 0, "{got}");
    assert!(got["error_string"].as_str().unwrap().contains("followed 21 points in 2.000 s"), "{got}");
    assert_eq!(got["statuses"].as_array().unwrap().last().unwrap(), 4, "{got}");
    assert!(out.contains("result succeeded SUCCESSFUL"), "{out}");
    // The arm is where the plan ends.
    let q = numbers_after(&out, "q ");
    for j in 0..6 {
        assert!((q[j] - target[j].to_radians()).abs() < 1e-3f64.to_radians() * 10.0, "joint {j}: {} rad, the plan ends at {}", q[j], target[j].to_radians());
    }
    // Feedback while it ran, in the robot's joint order: the reference and the measurement.
    let fb = &got["feedback"];
    assert_eq!(fb["joint_names"], json!(JOINTS), "{fb}");
    assert!(fb["count"].as_u64().unwrap() >= 20, "{} feedback messages in a 2 s motion at 20 Hz", fb["count"]);
    let last = &fb["last"];
    for j in 0..6 {
        let desired = last["desired"]["positions"][j].as_f64().unwrap();
        let actual = last["actual"]["positions"][j].as_f64().unwrap();
        let error = last["error"]["positions"][j].as_f64().unwrap();
        assert!((desired - actual - error).abs() < 1e-12, "error = desired − actual");
        assert!(error.abs() < 0.02, "joint {j} follows within the path tolerance: {error}");
    }
    let desired_end: Vec<f64> = last["desired"]["positions"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    for j in 0..6 {
        assert!((desired_end[j] - target[j].to_radians()).abs() < 1e-9, "the last feedback is at the plan's end");
    }
}

#[test]
fn moveit_s_trajectory_is_followed_with_feedback_and_a_result() {
    follows_a_planned_trajectory(false);
}

#[test]
fn the_same_goal_runs_on_the_ethercat_bus() {
    follows_a_planned_trajectory(true);
}

#[test]
fn goals_the_robot_cannot_follow_are_rejected_before_it_moves() {
    let dir = scratch("fjt-reject");
    let net = RosNet::new(4);
    let morc = start_morc(&net, &dir, 4, false);
    let all = [0, 1, 2, 3, 4, 5];
    // Another robot's joint names.
    let mut other = planned(&HOME, &HOME, 1.0, &all);
    other["joint_names"] = json!(["shoulder_pan_joint", "joint2", "joint3", "joint4", "joint5", "joint6"]);
    // A1 by 90° in 0.5 s: its velocity limit is 156°/s.
    let fast = planned(&HOME, &[90.0, -90.0, 90.0, 0.0, 45.0, 0.0], 0.5, &all);
    // A first point at time 0 that is not where the arm is.
    let mut elsewhere = planned(&[20.0, -90.0, 90.0, 0.0, 45.0, 0.0], &[30.0, -90.0, 90.0, 0.0, 45.0, 0.0], 1.0, &all);
    elsewhere["points"][0]["time_from_start"] = json!(0.0);
    // A stamp so old that the whole trajectory is over.
    let mut old = planned(&HOME, &HOME, 1.0, &all);
    old["stamp_offset"] = json!(-30.0);
    for (name, goal) in [("other", &other), ("fast", &fast), ("elsewhere", &elsewhere), ("old", &old)] {
        let got = send(&net, &dir, name, goal, None);
        assert_eq!(got["accepted"], false, "{name}: {got}");
    }
    let out = finish_morc(morc);
    let results: Vec<&str> = out.lines().filter(|l| l.starts_with("result ")).collect();
    assert_eq!(results.len(), 4, "{out}");
    assert!(results[0].starts_with("result rejected INVALID_JOINTS joint shoulder_pan_joint is not one of robot"), "{}", results[0]);
    assert!(results[1].starts_with("result rejected INVALID_GOAL joint A1 moves at") && results[1].contains("over its velocity limit 156.000°/s"), "{}", results[1]);
    assert!(results[2].starts_with("result rejected INVALID_GOAL it starts with joint joint1 at 20.00°, the robot is at 0.00°"), "{}", results[2]);
    assert!(results[3].starts_with("result rejected OLD_HEADER_TIMESTAMP"), "{}", results[3]);
    // Nothing moved.
    let q = numbers_after(&out, "q ");
    for j in 0..6 {
        assert!((q[j] - HOME[j].to_radians()).abs() < 1e-4, "joint {j} moved: {} rad", q[j]);
    }
}

#[test]
fn a_cancelled_goal_stops_the_arm_which_holds() {
    let dir = scratch("fjt-cancel");
    let net = RosNet::new(5);
    let morc = start_morc(&net, &dir, 1, false);
    let far = [60.0, -90.0, 90.0, 0.0, 45.0, 0.0];
    let goal = planned(&HOME, &far, 6.0, &[0, 1, 2, 3, 4, 5]);
    let got = send(&net, &dir, "slow", &goal, Some(1.5));
    let out = finish_morc(morc);
    assert_eq!(got["accepted"], true, "{got}");
    assert_eq!(got["cancel_return_code"], 0, "the cancel was taken: {got}");
    assert_eq!(got["status"], 5, "canceled: {got}\n{out}");
    assert!(out.contains("result canceled SUCCESSFUL cancelled: the robot holds"), "{out}");
    let statuses: Vec<i64> = got["statuses"].as_array().unwrap().iter().map(|s| s.as_i64().unwrap()).collect();
    // Executing, then (canceling, when the client's status reader caught it) canceled.
    assert!(statuses.first() == Some(&2) && statuses.last() == Some(&5), "{statuses:?}");
    // It stopped on the way: A1 well short of 60°.
    let a1 = numbers_after(&out, "q ")[0].to_degrees();
    assert!(a1 > 0.5 && a1 < 45.0, "A1 at {a1}° after a cancel 1.5 s into a 6 s move to 60°");
}
