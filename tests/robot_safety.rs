//! Bad numbers never pass as ok (issue 11, item 3): a robot whose mass matrix is singular or
//! whose link inertia no body can have is refused when it is defined, naming the link; a NaN
//! a component writes to the robot faults the run naming the component and the port, on the
//! simulated robot and on the robot behind the simulated bus; a plant whose state stops being
//! finite faults naming the joint. Walked as a user would: `morc run` on a program.

mod robot_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use morc_kernel::AssemblyData;
use morc_kernel::AssemblySpec;
use morc_kernel::ClockKind;
use morc_kernel::Value;
use morc_robot::components::factory;
use morc_robot::{JointDrive, Limits, Robot, RobotJoint};
use robot_support::*;

fn data(file: &str) -> String {
    format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"))
}

/// Runs `code` as `prog.lua` with `morc [args] run`; (exit code, stdout + stderr).
fn morc_run(name: &str, args: &[&str], code: &str) -> (i32, String) {
    let dir: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("robot_safety_{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("prog.lua");
    std::fs::write(&prog, code).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_morc"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("MORC_PATH")
        .env_remove("MORC_LIB")
        .args(args)
        .arg("run")
        .arg(&prog)
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// A robot definition on URDF `file` with three joints (limits in degrees).
fn robot_on(file: &str) -> String {
    format!(
        r#"local robot = morc.robot {{ name = "arm", model = morc.model.urdf "{}",
  joints = {{ {{ "shoulder", limits = {{ pos = {{ -120, 120 }}, vel = 90, acc = 300 }} }},
             {{ "elbow", limits = {{ pos = {{ -120, 120 }}, vel = 90, acc = 300 }} }},
             {{ "wrist", limits = {{ pos = {{ -170, 170 }}, vel = 120, acc = 300 }} }} }} }}
print "defined"
"#,
        data(file)
    )
}

#[test]
fn a_massless_last_link_is_refused_naming_the_link() {
    let (code, out) = morc_run("massless", &[], &robot_on("massless_last_link.urdf"));
    assert_ne!(code, 0, "{out}");
    assert!(!out.contains("defined"), "{out}");
    assert!(out.contains("prog.lua:1") && out.contains("massless_last_link.urdf"), "{out}");
    assert!(out.contains("joint 'wrist' moves no mass or inertia") && out.contains("link 'tool_link'"), "{out}");
    assert!(out.contains("give link 'tool_link' its mass and inertia"), "{out}");
    // The sound arm is taken.
    let (code, out) = morc_run("sound", &[], &robot_on("tool_arm.urdf"));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("defined"), "{out}");
}

#[test]
fn inertias_no_body_can_have_are_refused_naming_the_link() {
    let (code, out) = morc_run("triangle", &[], &robot_on("triangle_inertia.urdf"));
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("triangle_inertia.urdf") && out.contains("<link name=\"tool_link\">") && out.contains("triangle inequality"), "{out}");
    let (code, out) = morc_run("negative", &[], &robot_on("negative_inertia.urdf"));
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("negative_inertia.urdf") && out.contains("<link name=\"tool_link\">") && out.contains("not positive definite"), "{out}");
    // The same from the other ways of defining a robot.
    let (code, out) = morc_run("build", &[], r#"local m = morc.model.build { name = "m", { "J1", parent = "universe", mass = 1, inertia = { 0.01, 0.01, 0.05, 0, 0, 0 } } }"#);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("prog.lua:1") && out.contains("joint 'J1'") && out.contains("triangle inequality"), "{out}");
    let (code, out) = morc_run("dh", &[], r#"local m = morc.model.dh { { a = 100, mass = 1, inertia = { 0.01, 0.01, 0.01, 0.05, 0, 0 } } }"#);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("prog.lua:1") && out.contains("link 1") && out.contains("not positive definite"), "{out}");
    let (code, out) = morc_run("payload", &[], r#"local r = require("robots.kr16"):with_payload { mass = 2, inertia = { 0.01, 0.01, 0.05, 0, 0, 0 } }"#);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("prog.lua:1") && out.contains("payload") && out.contains("triangle inequality"), "{out}");
    let (code, out) = morc_run("dh_massless", &[], "local m = morc.model.dh { { a = 100, mass = 2, com = { -50, 0, 0 } }, { a = 100 } }");
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("joint 'joint2' moves no mass or inertia") && out.contains("link 'link2'"), "{out}");
}

/// A program whose Lua component `bad` writes NaN to `robot.{port}` element 3 after 20 ms,
/// then prints what the run returned.
fn nan_program(robot: &str, port: &str, bus: bool) -> String {
    format!(
        r#"local robot = require "{robot}"
morc.start_engine {{ robot = robot{} }}
local bad = morc.component {{
  name = "nan_writer", inputs = {{ "q[6]" }}, outputs = {{ "y[6]" }},
  step = function(self, inp, out, t)
    for i = 1, 6 do out.y[i] = {} end
    if t > 0.02 then out.y[3] = 0 / 0 end
  end,
}}
local a = morc.assembly {{ "nan", duration = 1 }}
a:add("bad", bad)
a:connect("robot.q", "bad.q")
a:connect("bad.y", "robot.{port}")
local r = morc.engine:run(a)
print("ok=" .. tostring(r.ok), "outcome=" .. tostring(r.outcome), "ticks=" .. r.ticks)
print("reason=" .. tostring(r.reason))
"#,
        if bus { r#", bus = "sim""# } else { "" },
        if port == "q_cmd" { "inp.q[i]" } else { "0" }
    )
}

fn assert_nan_faults(out: &str, port: &str) {
    assert!(out.contains("ok=false") && out.contains("outcome=fault"), "{out}");
    assert!(out.contains(&format!("component 'bad' (output 'y') wrote NaN to robot.{port}[3]")), "{out}");
    // Detected in the tick it crossed: 20 ms at 1 ms, not a second later.
    let ticks: u64 = out.split("ticks=").nth(1).and_then(|s| s.split_whitespace().next()).and_then(|s| s.parse().ok()).unwrap();
    assert!((20..=23).contains(&ticks), "faulted after {ticks} ticks: {out}");
}

#[test]
fn a_nan_into_the_simulated_robot_faults_naming_component_and_port() {
    for port in ["q_cmd", "tau_ff"] {
        // (The program goes on after the faulted run; morc's exit code says a run faulted.)
        let (_, out) = morc_run(&format!("nan_{port}"), &[], &nan_program("robots.kr16", port, false));
        assert_nan_faults(&out, port);
    }
}

#[test]
fn a_nan_into_the_robot_on_the_simulated_bus_faults_naming_component_and_port() {
    let (_, out) = morc_run("nan_bus", &[], &nan_program("robots.kr16", "q_cmd", true));
    assert_nan_faults(&out, "q_cmd");
}

/// The plant's own check, behind the definition's: a robot whose model was swapped for one
/// with a massless last link (as a model built by hand could be) faults at the first step
/// that goes non-finite instead of reporting NaN positions as a finished run.
#[test]
fn a_plant_whose_state_goes_non_finite_faults_naming_the_joint() {
    let sound = morc_model::load_urdf(data("tool_arm.urdf")).unwrap();
    let joints = sound.joint_names()[1..]
        .iter()
        .enumerate()
        .map(|(i, name)| RobotJoint {
            name: name.clone(),
            drive: JointDrive { slave: i as u32 + 1, gear: 100.0, counts: Some(1.0 * 2f64.powi(17)), offset: 0.0, direction: 1.0, ..Default::default() },
            limits: Limits { lower: -2.0, upper: 2.0, velocity: 2.0, acceleration: 5.0, torque: 80.0 },
        })
        .collect();
    let robot = Robot::new("arm", sound, joints, "tests").unwrap();
    // The kinematics-only parser takes the massless file; the robot check would not.
    let massless = morc_model::load_urdf(data("massless_last_link.urdf")).unwrap();
    let e = Robot::new("arm", massless.clone(), robot.joints.clone(), "tests/arm.lua:3").unwrap_err();
    let e = e.to_string();
    assert!(e.contains("tests/arm.lua:3") && e.contains("link 'tool_link'"), "{e}");
    let robot = Arc::new(robot.loaded(massless, None));
    let mut engine = engine(&robot, &[0.0, 0.5, 0.5], ClockKind::Virtual);
    let mut a = AssemblySpec::new("ptp");
    a.add("traj", "ptp", 1, factory(&robot, "ptp").unwrap());
    a.components.last_mut().unwrap().params = vec![("target".into(), Value::Vector(vec![0.3, 0.2, 1.0]))];
    a.connect("robot.q", "traj.start").connect("traj.q", "robot.q_cmd");
    let r = engine.run(&a, &AssemblyData::new()).unwrap();
    let Some(m) = r.outcome.fault().map(|f| &f.message) else { panic!("a run on a singular plant ended {:?}", r.outcome) };
    assert!(m.contains("arm: the simulated arm's acceleration of joint") && m.contains("holding"), "{m}");
    assert!(m.contains("joint 'wrist' moves no mass or inertia") && m.contains("link 'tool_link'"), "{m}");
    assert!(r.ticks <= 2, "faulted after {} ticks: {m}", r.ticks);
}
