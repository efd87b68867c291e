//! MCAP recordings ROS 2 tools read: a run of the simulated KR 16 recorded with
//! `--record-format mcap` holds ROS 2 messages (CDR, ros2msg schemas) that
//! rosbags' AnyReader decodes from the file alone — a channel per component,
//! `/joint_states`, `/tf` along the URDF's joints and `/robot_description` —
//! and they agree with what morc's own reader gives (the file converted to
//! HDF5 by `morc rec convert`). tests/python/check_ros_mcap.py does the reading.
//!
//! Needs python3 with rosbags, h5py and numpy (scripts/setup --test).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value as Json;

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("morc-record-ros-mcap-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn morc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_morc")).current_dir(dir).args(args).output().unwrap()
}

fn ok(out: &Output, what: &str) -> String {
    let (o, e) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{what} failed ({:?}):\n{o}\n{e}", out.status);
    format!("{o}{e}")
}

fn python() -> String {
    let python = std::env::var("MORC_PYTHON").unwrap_or_else(|_| "python3".into());
    match Command::new(&python).args(["-c", "import rosbags, h5py, numpy"]).output() {
        Ok(o) if o.status.success() => python,
        _ => panic!("this test reads recordings with Python's rosbags and h5py: run scripts/setup --test (pip install rosbags h5py numpy)"),
    }
}

/// The KR 16 following a wave from where it stands (the base refuses a jump); the robot's q and
/// the reference recorded.
const PROGRAM: &str = r#"
local kr16 = require "robots.kr16"
morc.use_robot(kr16, { q0 = { 0, 0, 0, 0, 0, 0 } })
local a = morc.assembly { "wave", duration = 0.3 }
a:add("ref", "sine", { n = 6, amplitude = 0.1, frequency = 3, phase = -math.pi / 2, offset = 0.1 })
a:add("st", "step", { time = 0.1, final = 2.5 })
a:connect("ref.y", "robot.q_cmd")
a:record { "robot.q", "ref.y", "st.y" }
local r = morc.engine:run(a)
assert(r.ok, r.reason)
print("recorded " .. r.data["rec.path"] .. " " .. r.data["rec.samples"])
"#;

#[test]
fn rosbags_reads_joint_states_tf_and_components_as_morc_does() {
    let dir = scratch("kr16");
    std::fs::write(dir.join("wave.lua"), PROGRAM).unwrap();
    let said = ok(&morc(&dir, &["--record-format", "mcap", "--record", "runs", "run", "wave.lua"]), "morc run");
    assert!(said.contains(" 300"), "{said}");
    let file = std::fs::read_dir(dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "mcap"))
        .expect("an MCAP recording");
    let h5 = dir.join("as_read.h5");
    ok(&morc(&dir, &["rec", "convert", file.to_str().unwrap(), h5.to_str().unwrap()]), "morc rec convert");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/check_ros_mcap.py");
    let out = Command::new(python()).arg(script).arg(&file).arg(&h5).output().unwrap();
    assert!(out.status.success(), "check_ros_mcap.py: {}", String::from_utf8_lossy(&out.stderr));
    let found: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(found["samples"], 300, "{found}");
    assert_eq!(found["joints"].as_array().map(Vec::len), Some(6), "the URDF's six moving joints: {found}");
    // At most 100 Hz for the robot's topics: a viewer's rate, the components keep every row.
    assert_eq!(found["joint_states"], 30, "{found}");
    assert_eq!(found["tf"], 30, "{found}");
    assert_eq!(found["topics"]["/morc/ref"], "morc_msgs/msg/Ref", "{found}");
    assert_eq!(found["topics"]["/morc/robot"], "morc_msgs/msg/Robot", "{found}");

    // morc's own view of the file: the recorded signals only, as before.
    let info = ok(&morc(&dir, &["rec", "info", file.to_str().unwrap()]), "morc rec info");
    assert!(info.contains("robot.q") && info.contains("ref.y") && info.contains("samples          300"), "{info}");
    assert!(!info.contains("robot.qd"), "robot.qd is read for /joint_states but not recorded as a signal: {info}");
    // And plots it, as an HDF5 recording.
    let svg = dir.join("q.svg");
    ok(&morc(&dir, &["rec", "plot", file.to_str().unwrap(), "robot.q", "-o", svg.to_str().unwrap()]), "morc rec plot");
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.contains("robot.q [rad]") && picture.contains("assembly &apos;wave&apos;"), "the plot's axis and title");
}
