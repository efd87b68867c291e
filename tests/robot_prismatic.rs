//! Prismatic joints speak millimetres (issue 11, item 8): a finger that slides 0–0.04 m is
//! defined, shown, limited, commanded and reported in mm, its revolute neighbours in degrees.
//! Walked as a user would: `morc run` on a program with an arm whose URDF has a finger
//! (tests/data/finger_arm.urdf, Panda's finger limits).

use std::path::Path;
use std::process::Command;

fn run(name: &str, code: &str) -> (i32, String) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("robot_prismatic_{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("prog.lua");
    std::fs::write(&prog, code).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_morc"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("MORC_PATH")
        .env_remove("MORC_LIB")
        .arg("run")
        .arg(&prog)
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

fn arm(extra: &str) -> String {
    format!(
        r#"local arm = morc.robot {{ name = "finger arm", model = morc.model.urdf "{}/tests/data/finger_arm.urdf",
  joints = {{ {{ "shoulder", limits = {{ acc = 300 }} }}, {{ "elbow", limits = {{ acc = 300 }} }}, {{ "wrist", limits = {{ acc = 300 }} }},
             {{ "finger_joint", limits = {{ acc = 1000 {extra} }} }} }},
  home = {{ 0, 30, 30, 20 }} }}
"#,
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The line of `out` starting with `key`, its words after the key.
fn line<'a>(out: &'a str, key: &str) -> Vec<&'a str> {
    out.lines().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("no line '{key}' in:\n{out}")).split_whitespace().skip(1).collect()
}

fn number(word: &str) -> f64 {
    word.parse().unwrap_or_else(|_| panic!("{word} is no number"))
}

#[test]
fn a_prismatic_finger_is_shown_and_limited_in_mm() {
    let code = arm("")
        + r#"local f = arm.joints[4]
print("finger", f.kind, f.unit, f.limits.pos[1], f.limits.pos[2], f.limits.vel, f.limits.acc)
local s = arm.joints[1]
print("shoulder", s.kind, s.unit, s.limits.pos[2], s.limits.vel)
print("home", table.concat(arm.home, " "))
print("inside", arm:reachable { 0, 0, 0, 35 })
print("outside", arm:reachable { 0, 0, 0, 50 })
"#;
    let (code, out) = run("limits", &code);
    assert_eq!(code, 0, "{out}");
    // From the URDF: 0 to 0.04 m, 0.2 m/s; acc given in the script as mm/s².
    let f = line(&out, "finger");
    assert_eq!(&f[..2], &["prismatic", "mm"], "{out}");
    assert_eq!([number(f[2]), number(f[3]), number(f[4]), number(f[5])], [0.0, 40.0, 200.0, 1000.0], "{out}");
    let s = line(&out, "shoulder");
    assert_eq!(&s[..2], &["revolute", "deg"], "{out}");
    assert!((number(s[2]) - 2.5f64.to_degrees()).abs() < 1e-9 && (number(s[3]) - 2f64.to_degrees()).abs() < 1e-9, "{out}");
    assert!((number(line(&out, "home")[3]) - 20.0).abs() < 1e-12, "{out}");
    assert_eq!(line(&out, "inside")[0], "true", "{out}");
    assert!(out.contains("outside\tfalse\tjoint finger_joint at 50.000 mm is outside [0.0 mm, 40.0 mm]"), "{out}");

    // Limits the script gives are mm too; a bad one is said in mm.
    let (code, out) = run("given", &(arm(", pos = { 0, 30 }, vel = 100") + "print('given', table.concat(arm.joints[4].limits.pos, ' '), arm.joints[4].limits.vel)\n"));
    assert_eq!(code, 0, "{out}");
    assert_eq!(line(&out, "given").iter().map(|w| number(w)).collect::<Vec<_>>(), [0.0, 30.0, 100.0], "{out}");
    let (code, out) = run("inverted", &arm(", pos = { 30, 10 }"));
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("joint finger_joint") && out.contains("{30 mm, 10 mm}"), "{out}");
}

#[test]
fn a_prismatic_finger_is_commanded_and_reported_in_mm() {
    let code = arm("")
        + r#"morc.use_robot(arm)
local motion = morc.lib.load("motion").skills
local r = motion.ptp { 10, 20, 30, 35 }
print("ptp", r.ok, r.final_error, r.peak_error)
print("text", tostring(r))
local a = morc.assembly { "where", duration = morc.engine.period }
a:add("p", "probe", { n = 4 })
a:connect("robot.q", "p.u")
local q = morc.engine:run(a).data["p.u"]
print("at", q[1], q[4])
local far = motion.ptp { 10, 20, 30, 45 }
print("far", far.ok, far.reason)
"#;
    let (code, out) = run("ptp", &code);
    assert_eq!(code, 0, "{out}");
    let p = line(&out, "ptp");
    assert_eq!(p[0], "true", "{out}");
    // The finger moved 15 mm: its errors are a small number of mm, not of degrees of a metre.
    assert!(number(p[1]) < 0.01 && number(p[2]) > 0.0, "{out}");
    assert!(out.contains("° / mm"), "the report names both units: {out}");
    let at = line(&out, "at");
    assert!((number(at[0]) - 10f64.to_radians()).abs() < 1e-4, "{out}");
    assert!((number(at[1]) - 0.035).abs() < 1e-5, "the finger is at {} m, not 0.035: {out}", at[1]);
    assert!(out.contains("far\tfalse\tprecondition: joint finger_joint at 45.000 mm is outside [0.0 mm, 40.0 mm]"), "{out}");
}

#[test]
fn a_prismatic_axis_composed_with_model_build_speaks_mm() {
    let code = r#"local m = morc.model.build { name = "gantry",
  { "X", parent = "universe", type = "prismatic", axis = { 1, 0, 0 }, mass = 20, inertia = { 0.5, 0.5, 0.5, 0, 0, 0 } },
  { "C", parent = "X", axis = { 0, 0, 1 }, xyz = { 0, 0, -200 }, mass = 3, com = { 100, 0, 0 }, inertia = { 0.01, 0.01, 0.01, 0, 0, 0 } } }
local g = morc.robot { name = "gantry", model = m,
  joints = { { "X", limits = { pos = { -500, 500 }, vel = 1000, acc = 2000, torque = 500 } },
             { "C", limits = { pos = { -180, 180 }, vel = 180, acc = 360, torque = 50 } } } }
print("units", g.joints[1].unit, g.joints[2].unit, g.joints[1].limits.pos[2], g.joints[2].limits.pos[2])
print("fk", table.concat(g:fk { 250, 90 }.pos, " "))
"#;
    let (code, out) = run("build", code);
    assert_eq!(code, 0, "{out}");
    let u = line(&out, "units");
    assert_eq!(&u[..2], &["mm", "deg"], "{out}");
    assert_eq!([number(u[2]), number(u[3])], [500.0, 180.0], "{out}");
    // The carriage moved 250 mm along x: the tool frame (on C) is there.
    let fk = line(&out, "fk");
    assert!((number(fk[0]) - 250.0).abs() < 1e-9 && (number(fk[2]) + 200.0).abs() < 1e-9, "{out}");
}

#[test]
fn a_prismatic_joints_ports_declare_m_and_n_and_its_recording_and_plot_show_them() {
    // Issue 25, item 6: each joint's element of q, qd, tau in its own unit and named after it.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("robot_prismatic_units");
    let _ = std::fs::remove_dir_all(&dir);
    let h5 = dir.join("units.h5");
    let code = arm("")
        + &format!(
            r#"morc.use_robot(arm)
local a = morc.assembly {{ "still", duration = 10 * morc.engine.period }}
a:record {{ "robot.q", "robot.tau", path = "{}" }}
print("run", morc.engine:run(a).ok)
"#,
            h5.display()
        );
    let (code, out) = run("units", &code);
    assert_eq!(code, 0, "{out}");
    let file = hdf5_metno::File::open(&h5).unwrap();
    let strings = |ds: &str, attr: &str| -> Vec<String> {
        let a = file.dataset(ds).unwrap().attr(attr).unwrap_or_else(|e| panic!("{ds} has no attribute {attr}: {e}"));
        a.read_raw::<hdf5_metno::types::VarLenUnicode>().unwrap().iter().map(|s| s.to_string()).collect()
    };
    assert_eq!(strings("robot.q", "element_units"), ["rad", "rad", "rad", "m"]);
    assert_eq!(strings("robot.tau", "element_units"), ["N·m", "N·m", "N·m", "N"]);
    assert_eq!(strings("robot.q", "element_names"), ["shoulder", "elbow", "wrist", "finger_joint"]);
    // Through MCAP and back, they stay.
    let (mcap, back) = (dir.join("units.mcap"), dir.join("back.h5"));
    morc_record::convert::convert(&h5, &mcap).unwrap();
    morc_record::convert::convert(&mcap, &back).unwrap();
    let back = hdf5_metno::File::open(&back).unwrap();
    let attr = back.dataset("robot.tau").unwrap().attr("element_units").unwrap();
    let units: Vec<String> = attr.read_raw::<hdf5_metno::types::VarLenUnicode>().unwrap().iter().map(|s| s.to_string()).collect();
    assert_eq!(units, ["N·m", "N·m", "N·m", "N"]);
    // A plot gives each unit its own axis, the lines named after the joints.
    let svg = dir.join("units.svg");
    let summary = morc_record::plot::plot(&h5, &["robot.q"], &svg, &Default::default()).unwrap();
    let panels: Vec<(&str, Vec<&str>)> = summary.panels.iter().map(|(axis, lines)| (axis.as_str(), lines.iter().map(String::as_str).collect())).collect();
    assert_eq!(panels, [("robot.q [rad]", vec!["shoulder", "elbow", "wrist"]), ("robot.q [m]", vec!["finger_joint"])]);
}
