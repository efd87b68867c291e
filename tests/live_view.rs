//! The live view as a user meets it: `morc --live ADDR run prog.lua` serves
//! the run over the Foxglove WebSocket protocol, and a client written from
//! the published spec in Python (`websockets`, tests/python/live_client.py)
//! subscribes, decodes the JSON messages and finds the run in them: the
//! published signals equal the recording of the same run sample for sample,
//! the joint states are the robot's, the frames and tool pose are there, the
//! run's statistics and a log line arrive, and nothing was dropped. The robot's URDF comes as the
//! `/robot_description` parameter and topic, and its links are where /tf puts the frames
//! (tests/python/urdf_vs_tf.py: the URDF's own kinematics with xml.etree); the engine's statistics
//! come while the run goes, and under `--bus sim` the bus with every device in OP.
//!
//! Needs python3 with websockets (scripts/setup --test).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value as Json;

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("morc-live-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn python() -> String {
    std::env::var("MORC_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// The KR 16 follows a sine for 1 s on the wall clock once a client is there; robot.q and
/// ref.y are published and recorded. wave.h5 exists already: the recorder warns (a log line).
const PROGRAM: &str = r#"
local kr16 = require "robots.kr16"
morc.use_robot(kr16, { q0 = { 0, 0, 0, 0, 0, 0 } })
assert(morc.live.address(), "the live view is on")
-- A first short run puts the robot on the live view: its description is there when the client comes.
assert(morc.engine:run(morc.assembly { "settle", duration = 0.01 }).ok)
assert(morc.live.wait_for_client(60), "no client came")
local a = morc.assembly { "wave", duration = 1.0 }
-- 0.2·(1 − cos 2πt): from where the robot stands, at rest (the base refuses a jump).
  a:add("ref", "sine", { n = 6, amplitude = 0.2, frequency = 1, phase = -math.pi / 2, offset = 0.2 })
a:connect("ref.y", "robot.q_cmd")
a:publish { "robot.q", "ref.y" }
a:record { "robot.q", "ref.y", path = "wave.h5" }
local r = morc.engine:run(a)
assert(r.ok, r.reason)
print("recorded " .. r.recordings[1])
"#;

#[test]
fn a_foxglove_client_sees_the_run_as_it_happens() {
    let dir = scratch("run");
    std::fs::write(dir.join("wave.lua"), PROGRAM).unwrap();
    std::fs::write(dir.join("wave.h5"), b"taken").unwrap();
    let mut morc = Command::new(env!("CARGO_BIN_EXE_morc"))
        .current_dir(&dir)
        .args(["--clock", "wall", "--live=127.0.0.1:0", "run", "wave.lua"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // "live view on ws://127.0.0.1:PORT …" comes first on stderr.
    let mut stderr = BufReader::new(morc.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    let url = first.split_whitespace().find(|w| w.starts_with("ws://")).unwrap_or_else(|| panic!("no address said: {first}")).to_string();
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/live_client.py");
    let topics = ["robot.q", "ref.y", "/joint_states", "/tf", "/tool_pose", "/morc/run", "/morc/live", "/morc/log", "/morc/stats", "/morc/bus", "/robot_description"];
    let client = Command::new(python()).arg(script).arg(&url).arg("foxglove.sdk.v1").arg("60").args(topics).output().unwrap_or_else(|e| panic!("python3: {e}"));
    let out = morc.wait_with_output().unwrap();
    let said = rest.join().unwrap();
    assert!(client.status.success(), "the client failed: {}\nmorc said: {said}", String::from_utf8_lossy(&client.stderr));
    assert!(out.status.success(), "morc failed: {said}");
    let got: Json = serde_json::from_slice(&client.stdout).unwrap();
    assert_eq!(got["subprotocol"], "foxglove.sdk.v1");
    assert_eq!(got["server"], "morc");
    for t in topics {
        assert_eq!(got["channels"][t]["encoding"], "json", "{t}: {}", got["channels"]);
    }
    assert_eq!(got["channels"]["/tf"]["schemaName"], "foxglove.FrameTransforms");
    assert_eq!(got["channels"]["/tool_pose"]["schemaName"], "foxglove.PoseInFrame");
    assert!(got["channels"].get("robot.qd").is_none(), "only what is published gets a channel: {}", got["channels"]);
    let messages = &got["messages"];

    // The recording of the same run (wave-001.h5: wave.h5 was taken).
    let recording = morc_record::plot::load(&dir.join("wave-001.h5"), &["robot.q", "ref.y"]).unwrap();
    let at = |t: f64| recording.time.iter().position(|x| *x == t).unwrap_or_else(|| panic!("no sample at {t} in the recording"));
    let column = |name: &str, i: usize| -> Vec<f64> { recording.signals.iter().find(|s| s.name == name).unwrap().columns.iter().map(|c| c[i]).collect() };
    let q_messages = messages["robot.q"].as_array().unwrap();
    // 100 samples a second for 1 s; the first few may go before the client subscribed.
    assert!(q_messages.len() >= 80, "{} robot.q messages", q_messages.len());
    for m in q_messages {
        let i = at(m["time"].as_f64().unwrap());
        let value: Vec<f64> = m["value"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        assert_eq!(value, column("robot.q", i), "robot.q at {}", m["time"]);
    }
    for m in messages["ref.y"].as_array().unwrap() {
        let i = at(m["time"].as_f64().unwrap());
        let value: Vec<f64> = m["value"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        assert_eq!(value, column("ref.y", i));
    }
    // Joint states: the KR 16's joints, positions as robot.q.
    let js = messages["/joint_states"].as_array().unwrap();
    assert!(js.len() >= 80);
    for m in js {
        assert_eq!(m["name"].as_array().unwrap().len(), 6);
        let i = at(m["time"].as_f64().unwrap());
        let pos: Vec<f64> = m["position"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        assert_eq!(pos, column("robot.q", i));
        assert_eq!(m["velocity"].as_array().unwrap().len(), 6);
        assert_eq!(m["effort"].as_array().unwrap().len(), 6);
    }
    // Frames of every link in "world", with unit quaternions; the tool pose is one of them.
    let tf = messages["/tf"].as_array().unwrap().last().unwrap()["transforms"].as_array().unwrap().clone();
    assert!(tf.len() >= 7, "{} frames", tf.len());
    for f in &tf {
        assert_eq!(f["parent_frame_id"], "world");
        let r = &f["rotation"];
        let n: f64 = ["x", "y", "z", "w"].iter().map(|k| r[k].as_f64().unwrap().powi(2)).sum();
        assert!((n - 1.0).abs() < 1e-9, "{f}");
    }
    let pose = &messages["/tool_pose"].as_array().unwrap().last().unwrap()["pose"]["position"];
    assert!(tf.iter().any(|f| f["translation"] == *pose), "the tool pose {pose} is a frame's");
    // The reach of a KR 16 from its base: about a metre or more, and not 0 (FK ran).
    let reach = (pose["x"].as_f64().unwrap().powi(2) + pose["z"].as_f64().unwrap().powi(2)).sqrt();
    assert!((0.5..3.0).contains(&reach), "{pose}");
    // The run's statistics once it ended, and the tap's counts.
    let run = &messages["/morc/run"][0];
    assert_eq!(run["assembly"], "wave");
    assert_eq!(run["outcome"], "finished");
    assert_eq!(run["ticks"], 1000);
    assert!(run["late_ticks"].is_u64());
    let live = run["components"].as_array().unwrap().iter().find(|c| c["name"] == "live").unwrap_or_else(|| panic!("{run}"));
    assert!(live["p99"].as_f64().unwrap() > 0.0);
    assert_eq!(messages["/morc/live"].as_array().unwrap().last().unwrap()["dropped"], 0);
    // The recorder's warning went out as a log line too.
    let logs = messages["/morc/log"].as_array().unwrap();
    assert!(logs.iter().any(|l| l["message"].as_str().unwrap_or_default().contains("wave.h5 exists") && l["level"] == 3), "{logs:?}");

    // The engine's statistics while the run went: ticks growing, the components timed.
    let stats = messages["/morc/stats"].as_array().unwrap();
    assert!(stats.len() >= 2, "{} /morc/stats messages in a 1 s run: {stats:?}", stats.len());
    let ticks: Vec<u64> = stats.iter().map(|m| m["ticks"].as_u64().unwrap()).collect();
    // Two messages may carry the same count when the sender catches up on a loaded machine.
    assert!(ticks.windows(2).all(|w| w[1] >= w[0]) && ticks[0] > 0 && ticks.last() > ticks.first() && *ticks.last().unwrap() <= 1000, "{ticks:?}");
    for m in stats {
        assert_eq!(m["assembly"], "wave");
        assert!(m["late_ticks"].is_u64() && m["dropped"] == 0, "{m}");
        let names: Vec<&str> = m["components"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert!(names.contains(&"ref") && names.contains(&"live"), "{names:?}");
        let reference = m["components"].as_array().unwrap().iter().find(|c| c["name"] == "ref").unwrap();
        // Copied a component a tick, then the engine's counts: the sine steps every tick.
        let steps = reference["steps"].as_u64().unwrap();
        assert!(steps > 0 && steps <= m["ticks"].as_u64().unwrap(), "{m}");
        assert_eq!(reference["exec"]["count"], reference["steps"], "{m}");
        assert!(reference["exec"]["p99"].as_f64().unwrap() > 0.0 && reference["exec"]["p99"].as_f64().unwrap() <= reference["exec"]["max"].as_f64().unwrap(), "{m}");
    }
    // No bus under the simulated robot; no faults.
    let bus = messages["/morc/bus"].as_array().unwrap().last().unwrap();
    assert!(bus["bus"].is_null() && bus["faults"] == serde_json::json!([]), "{bus}");

    // The robot's description: the same URDF as parameter and topic, its links where /tf puts them.
    assert!(got["capabilities"].as_array().unwrap().iter().any(|c| c == "parameters"), "{}", got["capabilities"]);
    let urdf = got["parameters"]["/robot_description"].as_str().unwrap_or_else(|| panic!("no /robot_description parameter: {}", got["parameters"]));
    let topic = messages["/robot_description"].as_array().unwrap();
    assert_eq!(topic.len(), 1, "sent once, as the client subscribed");
    assert_eq!(topic[0]["data"], urdf);
    assert_eq!(got["channels"]["/robot_description"]["schemaName"], "std_msgs/msg/String");
    let check = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/urdf_vs_tf.py");
    let mut fk = Command::new(python()).arg(check).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    std::io::Write::write_all(&mut fk.stdin.take().unwrap(), &client.stdout).unwrap();
    let fk = fk.wait_with_output().unwrap();
    assert!(fk.status.success(), "urdf_vs_tf.py: {}", String::from_utf8_lossy(&fk.stderr));
    let fk: Json = serde_json::from_slice(&fk.stdout).unwrap();
    assert_eq!(fk["links"], fk["frames"], "one link per /tf frame, named alike");
    assert_eq!(fk["compared"].as_u64().unwrap(), tf.len() as u64);
    assert_eq!(fk["joints"], fk["state_joints"], "the URDF's moving joints are those of /joint_states");
    assert!(fk["max_translation_error"].as_f64().unwrap() < 1e-9 && fk["max_rotation_error"].as_f64().unwrap() < 1e-9, "{fk}");
    assert!(fk["time"].as_f64().unwrap() > 0.1, "compared away from the start pose: {fk}");
    assert!(fk["visuals"].as_u64().unwrap() >= 6, "{fk}");
}

/// Under `--bus sim` the KR 16 runs through the EtherCAT master: `/morc/bus` shows every device
/// of the simulated segment in OP, no working-counter error and no fault, and its cycles go on.
#[test]
fn under_the_simulated_bus_the_live_view_shows_the_devices_in_op() {
    let dir = scratch("bus");
    let program = r#"
local kr16 = require "robots.kr16"
morc.use_robot(kr16)
assert(morc.live.wait_for_client(60), "no client came")
-- The robot holds on its drives while the live view watches the bus.
local r = morc.engine:run(morc.assembly { "on the bus", duration = 1.2 })
assert(r.ok, r.reason)
"#;
    std::fs::write(dir.join("bus.lua"), program).unwrap();
    let mut morc = Command::new(env!("CARGO_BIN_EXE_morc"))
        .current_dir(&dir)
        .args(["--bus", "sim", "--clock", "wall", "--live=127.0.0.1:0", "run", "bus.lua"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(morc.stderr.take().unwrap());
    let mut said = String::new();
    let url = loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            panic!("morc said no address: {said}");
        }
        said.push_str(&line);
        if let Some(u) = line.split_whitespace().find(|w| w.starts_with("ws://")) {
            break u.to_string();
        }
    };
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/live_client.py");
    let client = Command::new(python()).arg(script).arg(&url).arg("foxglove.sdk.v1").arg("60").args(["/morc/bus", "/morc/stats", "/morc/run"]).output().unwrap();
    let out = morc.wait_with_output().unwrap();
    let said = rest.join().unwrap();
    assert!(client.status.success(), "the client failed: {}\nmorc said: {said}", String::from_utf8_lossy(&client.stderr));
    assert!(out.status.success(), "morc failed: {said}");
    let got: Json = serde_json::from_slice(&client.stdout).unwrap();
    let bus = got["messages"]["/morc/bus"].as_array().unwrap_or_else(|| panic!("no /morc/bus: {}", got["messages"]));
    assert!(bus.len() >= 2, "{bus:?}");
    for m in bus {
        let b = &m["bus"];
        let devices = b["devices"].as_array().unwrap();
        assert!(devices.len() >= 6, "six drives at least: {b}");
        assert!(devices.iter().all(|d| d["state"] == "OP" && d["name"].is_string() && d["position"].is_u64()), "{b}");
        assert_eq!((b["faulted"].as_bool(), b["working_counter_errors"].as_u64(), b["lost_frames"].as_u64()), (Some(false), Some(0), Some(0)), "{b}");
        assert!(b["fault"].is_null() && m["faults"] == serde_json::json!([]), "{m}");
    }
    let cycles: Vec<u64> = bus.iter().map(|m| m["bus"]["cycles"].as_u64().unwrap()).collect();
    assert!(cycles.windows(2).all(|w| w[1] > w[0]), "{cycles:?}");
    let stats = got["messages"]["/morc/stats"].as_array().unwrap();
    assert!(stats.iter().all(|m| m["assembly"] == "on the bus"), "{stats:?}");
    assert_eq!(got["messages"]["/morc/run"][0]["outcome"], "finished");
}

#[test]
fn without_the_live_view_publishing_costs_nothing_and_bad_addresses_are_refused() {
    let dir = scratch("off");
    let program = r#"
local a = morc.assembly { "quiet", duration = 0.05 }
a:add("ref", "sine", { n = 6 })
a:publish { "ref.y" }
local r = morc.engine:run(a)
assert(r.ok, r.reason)
assert(not tostring(r):find("live%s+live"), "no tap while the live view is off:\n" .. tostring(r))
assert(morc.live.address() == nil)
print(morc.live.start("127.0.0.1:0"))
local r2 = morc.engine:run(a)
assert(tostring(r2):find("live%s+live"), tostring(r2))
morc.live.stop()
assert(morc.live.address() == nil)
local ok, err = pcall(a.publish, a, {})
assert(not ok and tostring(err):find("needs signals"), tostring(err))
"#;
    std::fs::write(dir.join("off.lua"), program).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_morc")).current_dir(&dir).args(["run", "off.lua"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("127.0.0.1:"));

    for (address, says) in [("nonsense", "give host:port"), ("127.0.0.1:99999", "not a number from 0 to 65535")] {
        let out = Command::new(env!("CARGO_BIN_EXE_morc")).current_dir(&dir).args([format!("--live={address}").as_str(), "run", "off.lua"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{address}");
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(e.contains(address) && e.contains(says), "{e}");
    }
}

/// README's command line as written: `morc --live run prog.lua` serves on the default address
/// (the optional address once took `run` for itself: "unrecognized subcommand 'prog.lua'").
#[test]
fn live_without_an_address_serves_on_the_default_one() {
    let dir = scratch("default_address");
    std::fs::write(dir.join("prog.lua"), "print('live at ' .. tostring(morc.live.address()))\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_morc")).current_dir(&dir).args(["--live", "run", "prog.lua"]).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains(&format!("live at {}", morc_live::DEFAULT_ADDRESS)), "{stdout}\n{stderr}");
}
