//! `morc ros fmu MODEL.fmu` as a lab meets it: an FMU as a ROS 2 node, as fmi_adapter makes
//! one, driven by ROS 2's own Python client (rclpy on Fast DDS, from PyPI;
//! tests/python/ros_fmu_peer.py): inputs published and outputs received as std_msgs, parameters
//! got and set through the node's parameter services (what `ros2 param get/set` call), the input
//! interpolated between stamped samples, FMI 2 and 3, co-simulation and model exchange, the wall
//! and the virtual clock, Ctrl-C ending the node and the node leaving the graph.
//!
//! The FMUs are morc's C test FMUs (tests/fmu_support/c): feedthrough2.c after the Modelica
//! Reference FMUs' Feedthrough, feedthrough3.c (every FMI 3 type), dinput2.c and bounce3.c
//! (model exchange). Every test runs on a loopback of its own (tests/ros_support), in a domain of
//! its own. Needs root, a C compiler and the peers scripts/setup --test installs.

mod fmu_support;
mod ros_support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ros_support::{report, scratch, RosNet};
use serde_json::Value as Json;

fn fmu(stem: &str) -> PathBuf {
    fmu_support::build_c_fmu(stem, &format!("{{morc-{stem}-token}}"), &format!("{stem}.fmu"))
}

/// `morc ros fmu FILE ARGS` in the namespace, its output piped.
fn start_node(net: &RosNet, file: &Path, args: &[&str]) -> Child {
    net.morc()
        .args(["ros", "fmu", file.to_str().unwrap()])
        .args(args)
        .env("MORC_FMU_CACHE", fmu_support::scratch().join("cache"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits (generously) for the peer to write `done`, then ends the nodes with Ctrl-C; returns
/// each node's exit code and standard error.
fn stop_when_done(done: &Path, nodes: Vec<Child>) -> Vec<(Option<i32>, String)> {
    let end = Instant::now() + Duration::from_secs(240);
    while !done.exists() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(100));
    }
    nodes
        .into_iter()
        .map(|child| {
            // `ip netns exec` runs morc in its own process: the signal goes to morc itself.
            // SAFETY: kill with a pid of our own child.
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            let out = child.wait_with_output().unwrap();
            (out.status.code(), String::from_utf8_lossy(&out.stderr).to_string())
        })
        .collect()
}

fn ok(got: &Json, key: &str) -> bool {
    got[key][0] == Json::Bool(true)
}

fn refused_saying(got: &Json, key: &str, words: &str) {
    assert_eq!(got[key][0], Json::Bool(false), "{key} was not refused: {}", got[key]);
    let reason = got[key][1].as_str().unwrap_or_default();
    assert!(reason.contains(words), "{key}: the reason '{reason}' does not say '{words}'");
}

/// Every node ended by Ctrl-C as a node should: exit 130, the FMU freed, the graph left.
fn ended_cleanly(ends: &[(Option<i32>, String)], names: &[&str]) {
    for ((code, stderr), name) in ends.iter().zip(names) {
        assert_eq!(*code, Some(130), "{name}: {stderr}");
        assert!(stderr.contains("stopped by signal 2") && stderr.contains(&format!("the FMU is freed and /{name} has left ROS 2")), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn an_fmi_2_co_simulation_fmu_is_a_ros_2_node() {
    let path = fmu("feedthrough2");
    let dir = scratch("fmu-feedthrough2");
    let done = dir.join("done");
    let net = RosNet::new(31);
    let peer = net.peer("ros_fmu_peer.py", &["feedthrough2", "150", done.to_str().unwrap()]);
    let node = start_node(&net, &path, &["--param", "Float64_fixed_parameter=0.5"]);
    let ends = stop_when_done(&done, vec![node]);
    let got = report(peer);
    assert_eq!(got["errors"], serde_json::json!([]), "{got}\nmorc: {}", ends[0].1);
    ended_cleanly(&ends, &["feedthrough2"]);
    assert!(ends[0].1.contains("on ROS 2 as node /feedthrough2 in domain 31 (wall clock, step 0.001 s, update every 0.01 s)"), "{}", ends[0].1);
    assert!(got["nodes_while_running"].as_array().unwrap().iter().any(|n| n == "feedthrough2"), "{got}");
    assert_eq!(got["left_graph"], Json::Bool(true), "the node stayed in the graph after Ctrl-C");

    // Topics named after the variables, of the variables' types.
    let topics = &got["topics"];
    for (topic, ty) in [
        ("/Float64_continuous_input", "std_msgs/msg/Float64"),
        ("/Int32_input", "std_msgs/msg/Int32"),
        ("/Boolean_input", "std_msgs/msg/Bool"),
        ("/scaled_y", "std_msgs/msg/Float64"),
        ("/Int32_output", "std_msgs/msg/Int32"),
        ("/Boolean_output", "std_msgs/msg/Bool"),
    ] {
        assert_eq!(topics[topic][0], ty, "{topic}: {topics}");
    }
    // Before any sample, the start values: outputs equal them.
    assert_eq!(got["first"]["/Float64_continuous_output"], 0.0);
    assert_eq!(got["first"]["/Boolean_output"], false);
    // Outputs equal the inputs, of every type.
    assert_eq!(got["echo"], serde_json::json!({"/Float64_continuous_output": 1.25, "/Float64_discrete_output": -3.5, "/Int32_output": 42, "/Boolean_output": true}));

    // Parameters: step_size and update_period as fmi_adapter names them, the FMU's from its
    // variables (the fixed one as --param gave it).
    let p = &got["parameters"];
    assert_eq!(p["step_size"], 0.001, "the default experiment's step: {p}");
    assert_eq!(p["update_period"], 0.01);
    assert_eq!(p["Float64_fixed_parameter"], 0.5);
    assert_eq!(p["Float64_tunable_parameter"], 0.0);
    assert_eq!(p["String_parameter"], "Set me!");
    assert!(ok(&got, "set_tunable"), "{}", got["set_tunable"]);
    assert_eq!(got["scaled_y"], 2.0 * 1.25 + 0.5, "scaled.y = tunable * input + fixed after the set");
    refused_saying(&got, "set_fixed", "fixed parameter");
    refused_saying(&got, "set_step_size", "--step-size");
    assert_eq!(got["set_wrong_type"][0], false, "an integer for a double parameter: {}", got["set_wrong_type"]);
    assert_eq!(got["after_sets"], serde_json::json!({"Float64_fixed_parameter": 0.5, "Float64_tunable_parameter": 2.0, "step_size": 0.001}));

    // Interpolation: the ramp 0 → 2 → 0 between three stamped samples integrates to the
    // trapezoid (1.5 s · 1), not to the held samples' 2 · 0.5 s.
    assert!(ok(&got, "set_slow") && ok(&got, "set_fast"));
    let i = &got["interpolation"];
    assert_eq!(i["quiet_while_slow"], true, "no update while update_period was 60 s: {i}");
    let (gain, trapezoid, held) = (i["integral_gain"].as_f64().unwrap(), i["trapezoid"].as_f64().unwrap(), i["held"].as_f64().unwrap());
    assert!((gain - trapezoid).abs() < 0.05, "integral grew by {gain}, the interpolated input's integral is {trapezoid} (held samples: {held})");
    assert!((gain - held).abs() > 0.3, "{i}");
}

#[test]
fn fmi_3_integers_and_booleans_on_the_virtual_clock() {
    let path = fmu("feedthrough3");
    let dir = scratch("fmu-feedthrough3");
    let done = dir.join("done");
    let net = RosNet::new(32);
    let peer = net.peer("ros_fmu_peer.py", &["feedthrough3", "150", done.to_str().unwrap()]);
    let node = start_node(&net, &path, &["--clock", "virtual", "--param", "offset=5", "--update-period", "0.05"]);
    let ends = stop_when_done(&done, vec![node]);
    let got = report(peer);
    assert_eq!(got["errors"], serde_json::json!([]), "{got}\nmorc: {}", ends[0].1);
    ended_cleanly(&ends, &["feedthrough3"]);
    assert!(ends[0].1.contains("(virtual clock, step 0.01 s, update every 0.05 s)"), "{}", ends[0].1);
    // Strings and arrays are said to be left out.
    assert!(ends[0].1.contains("not on ROS 2: s_in (a string or binary)") && ends[0].1.contains("not on ROS 2: arr_in (an array)"), "{}", ends[0].1);
    let topics = &got["topics"];
    for (topic, ty) in [
        ("/f32_in", "Float64"),
        ("/i8_out", "Int32"),
        ("/u16_in", "Int32"),
        ("/i32_in", "Int32"),
        ("/u32_in", "Int64"),
        ("/i64_out", "Int64"),
        ("/u64_in", "Int64"),
        ("/enum_out", "Int64"),
        ("/b_out", "Bool"),
    ] {
        assert_eq!(topics[topic][0], format!("std_msgs/msg/{ty}"), "{topic}: {topics}");
    }
    assert_eq!(got["echo"], got["want"], "outputs equal the inputs (i16 plus offset 5, b negated)");
    assert_eq!(got["parameters"], serde_json::json!({"offset": 5, "gain": 1.0, "step_size": 0.01}));
    refused_saying(&got, "set_fixed", "--param offset=VALUE");
}

#[test]
fn model_exchange_fmus_of_fmi_2_and_3_are_nodes() {
    let (dinput, bounce) = (fmu("dinput2"), fmu("bounce3"));
    let dir = scratch("fmu-me");
    let done = dir.join("done");
    let net = RosNet::new(33);
    let peer = net.peer("ros_fmu_peer.py", &["me", "150", done.to_str().unwrap()]);
    let nodes = vec![start_node(&net, &dinput, &["--step-size", "0.01"]), start_node(&net, &bounce, &["--step-size", "0.001"])];
    let ends = stop_when_done(&done, nodes);
    let got = report(peer);
    assert_eq!(got["errors"], serde_json::json!([]), "{got}\nmorc: {}\n{}", ends[0].1, ends[1].1);
    ended_cleanly(&ends, &["dinput2", "bounce3"]);
    assert_eq!(got["topics"]["/n"][0], "std_msgs/msg/Int32");
    assert_eq!(got["topics"]["/h"][0], "std_msgs/msg/Float64");
    // der(x) = n + u: x grows while n = 3 and u = 0.5; the discrete output follows n.
    let d = &got["dinput2"];
    assert_eq!(d["m"], 3, "{d}");
    // (An update that wakes late may find no step due yet: the outputs go out again unchanged.)
    assert_eq!(d["x_never_decreasing"], true, "{d}");
    assert!(d["x_gain"].as_f64().unwrap() > 0.0 && d["x_samples"].as_u64().unwrap() > 5, "{d}");
    // A tunable parameter changes in event mode; a fixed one is refused.
    assert_eq!(got["bounce3_before"], serde_json::json!({"e": 0.7, "g": -9.81}));
    assert!(ok(&got, "set_e"), "{}", got["set_e"]);
    refused_saying(&got, "set_g", "fixed parameter");
    assert_eq!(got["bounce3_after"], serde_json::json!({"e": 0.5, "g": -9.81}));
    let h = &got["h"];
    assert!(h["count"].as_u64().unwrap() > 5 && h["min"].as_f64().unwrap() >= -1e-6 && h["max"].as_f64().unwrap() <= 1.0 + 1e-9, "the ball stays between the floor and where it fell from: {h}");
}

/// A run on the virtual clock to --duration: every step taken, faster than the wall clock.
#[test]
fn the_virtual_clock_runs_to_the_duration_without_waiting() {
    let path = fmu("feedthrough2");
    let net = RosNet::new(34);
    let started = Instant::now();
    let out = net
        .morc()
        .args(["ros", "fmu", path.to_str().unwrap(), "--clock", "virtual", "--duration", "100", "--step-size", "0.01", "--update-period", "1"])
        .output()
        .unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("done: 10000 steps to t = 100 s;"), "{stderr}");
    // 100 s of the FMU's time; the node does not wait for the wall clock (it has 50 s to spare
    // however slow the machine: no step waits).
    assert!(took < Duration::from_secs(50), "{took:?}");
    // Published every update_period of wall time and at the end: the last outputs at least.
    let published: u64 = stderr.split(" messages published").next().and_then(|s| s.rsplit(' ').next()).and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!((6..=600).contains(&published) && published.is_multiple_of(6), "{stderr}");
}

#[test]
fn bad_fmus_and_arguments_are_named() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_morc")).args(["ros", "fmu"]).args(args).env("MORC_FMU_CACHE", fmu_support::scratch().join("cache")).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    let (code, e) = run(&["/no/such/model.fmu"]);
    assert_eq!(code, Some(2), "{e}");
    assert!(e.contains("/no/such/model.fmu: no such file"), "{e}");
    let dir = scratch("fmu-bad");
    let broken = dir.join("broken.fmu");
    std::fs::write(&broken, b"not a zip").unwrap();
    let (code, e) = run(&[broken.to_str().unwrap()]);
    assert_eq!(code, Some(3), "{e}");
    assert!(e.contains("broken.fmu") && e.contains("not an FMU"), "{e}");
    let path = fmu("feedthrough2");
    let p = path.to_str().unwrap();
    let (code, e) = run(&[p, "--param", "nope=1"]);
    assert_eq!(code, Some(2), "{e}");
    assert!(e.contains("nope") && e.contains("Float64_tunable_parameter"), "{e}");
    let (code, e) = run(&[p, "--param", "Float64_fixed_parameter=abc"]);
    assert_eq!(code, Some(2), "{e}");
    assert!(e.contains("Float64_fixed_parameter=abc: expected"), "{e}");
    let (code, e) = run(&[p, "--update-period", "0"]);
    assert_eq!(code, Some(2), "{e}");
    assert!(e.contains("--update-period 0"), "{e}");
    let (code, e) = run(&[p, "--clock", "sundial"]);
    assert_eq!(code, Some(2), "{e}");
    assert!(e.contains("--clock"), "{e}");
    for (code, e) in [run(&[p, "--step-size", "-1"]), run(&[p, "--duration", "nan"])] {
        assert_eq!(code, Some(2), "{e}");
    }
    assert!(!e.contains("panicked"));
}
