//! Dynamic identification (issue 14, item 3) as a person runs it: `morc run
//! examples/identification.lua` identifies the simulated RX130L with realistic torque noise and
//! validates on another trajectory within 5 %; `morc test skills/identify` runs the identify
//! skill; the inertial block of morc.dynid's regressor is Pinocchio's
//! computeJointTorqueRegressor when Pinocchio is importable. (tests/lua/identification.lua
//! checks the regressor against the simulated plant and the noise-free estimate against the
//! truth.)

use std::path::{Path, PathBuf};
use std::process::Command;

mod pinocchio_peer;

fn morc() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_morc"));
    c.env_remove("MORC_PATH").env_remove("MORC_LIB").env_remove("RUST_BACKTRACE");
    c
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_identification_example_identifies_the_rx130l_within_5_percent() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/identification.lua");
    let dir = scratch("identification_example");
    let out = morc().current_dir(&dir).args(["run", example.to_str().unwrap()]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let last = stdout.lines().last().unwrap_or_default();
    // "identification: B base parameters, condition number C, validation torque rms error E %"
    assert!(last.starts_with("identification: ") && last.ends_with(" %"), "{last}");
    let numbers: Vec<f64> = last.split(|c: char| !(c.is_ascii_digit() || c == '.')).filter_map(|w| w.parse().ok()).collect();
    let (b, c, e) = (numbers[0], numbers[1], numbers[2]);
    assert_eq!(b, 52.0, "{last}");
    assert!(c > 1.0 && c < 1000.0, "condition number {c}: {last}");
    assert!(e > 0.0 && e < 5.0, "validation error {e} %: {last}");
    // The parameters were saved beside the recordings, as a Lua file.
    assert!(dir.join("runs/rx130l.dynamics.lua").exists(), "{stdout}");
}

#[test]
fn morc_test_runs_the_identify_library() {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("skills/identify");
    let dir = scratch("identify_library");
    let out = morc().current_dir(&dir).arg("test").arg(&lib).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("2 passed, 0 failed"), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
}

/// A lab's robot module in its own folder: `identify` saves beside it (robots/NAME.dynamics.lua)
/// and, run again, never replaces that file.
#[test]
fn identify_saves_beside_the_robots_definition() {
    let dir = scratch("identify_lab");
    std::fs::create_dir_all(dir.join("robots")).unwrap();
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("robots/rx130l.lua"), dir.join("robots/lab_arm.lua")).unwrap();
    std::fs::write(
        dir.join("identify.lua"),
        r#"local arm = require "robots.lab_arm"
morc.use_robot(morc.dynid.perturbed(arm))
local identify = morc.lib.load("identify").skills.identify
local r = identify { robot_module = "robots.lab_arm", order = 3, frequency = 0.25, periods = 1, evaluations = 100 }
assert(r.ok, r.reason)
print(r.saved)"#,
    )
    .unwrap();
    let mut saved = Vec::new();
    for _ in 0..2 {
        let out = morc().current_dir(&dir).args(["run", "identify.lua"]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        saved.push(String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or_default().to_string());
    }
    assert_eq!(saved, ["./robots/lab_arm.dynamics.lua", "./robots/lab_arm.dynamics-001.lua"]);
    let text = std::fs::read_to_string(dir.join("robots/lab_arm.dynamics.lua")).unwrap();
    assert!(text.contains("robot = \"Stäubli RX130L\"") && text.matches("{ name = ").count() == 52, "{text}");
}

fn lua_list(x: &[f64]) -> String {
    x.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>().join(", ")
}

/// The regressor's first 10·links columns against Pinocchio's computeJointTorqueRegressor on
/// the UR5's URDF (the robot's own model, with its drive columns after them).
#[test]
fn the_inertial_block_of_the_regressor_is_pinocchios() {
    let dir = scratch("identification_pinocchio");
    let (q, v, a) = ([0.3, -1.1, 1.4, -0.5, 0.9, 0.2], [0.1, -0.2, 0.3, -0.4, 0.5, -0.6], [1.0, 0.5, -0.5, 0.25, -1.0, 2.0]);
    let program = dir.join("regressor.lua");
    std::fs::write(
        &program,
        format!(
            r#"local ur5 = require "robots.ur5"
local Y = morc.dynid.base(ur5):regressor({{ {q} }}, {{ {v} }}, {{ {a} }})
local rows = {{}}
for i = 1, Y.rows do
  local row = {{}}
  for j = 1, Y.cols do row[j] = ("%.17g"):format(Y:get(i, j)) end
  rows[i] = table.concat(row, " ")
end
print(table.concat(rows, "\n"))"#,
            q = lua_list(&q),
            v = lua_list(&v),
            a = lua_list(&a)
        ),
    )
    .unwrap();
    let out = morc().current_dir(env!("CARGO_MANIFEST_DIR")).args(["run", program.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ours: Vec<Vec<f64>> = String::from_utf8_lossy(&out.stdout).lines().map(|l| l.split(' ').map(|x| x.parse().unwrap()).collect()).collect();
    assert_eq!((ours.len(), ours[0].len()), (6, 78), "6 joints × (60 inertial + 18 drive) columns");
    let urdf = Path::new(env!("CARGO_MANIFEST_DIR")).join("robots/ur5/ur5_robot.urdf");
    let script = format!(
        "import numpy as np, pinocchio as pin\nm = pin.buildModelFromUrdf({urdf:?}); d = m.createData()\nY = pin.computeJointTorqueRegressor(m, d, np.array({q:?}), np.array({v:?}), np.array({a:?}))\nprint('\\n'.join(' '.join(repr(float(x)) for x in row) for row in Y))",
        urdf = urdf.display().to_string(),
        q = q.to_vec(),
        v = v.to_vec(),
        a = a.to_vec()
    );
    let Some(output) = pinocchio_peer::run(&script) else { return };
    let theirs: Vec<Vec<f64>> = String::from_utf8_lossy(&output).lines().map(|l| l.split(' ').map(|x| x.parse().unwrap()).collect()).collect();
    assert_eq!((theirs.len(), theirs[0].len()), (6, 60));
    let mut worst: f64 = 0.0;
    for (ro, rt) in ours.iter().zip(&theirs) {
        for (o, t) in ro.iter().zip(rt) {
            worst = worst.max((o - t).abs() / t.abs().max(1.0));
        }
    }
    println!("regressor's inertial block against Pinocchio: max error {worst:.3e}");
    assert!(worst <= 1e-9, "max error {worst:.3e}");
}
