//! Robot definition scripts and robot programs: the shipped robots load from Lua, move in
//! simulation and hold; bad definitions name file and joint; the MoRC experiment runs and
//! rigid-body feed-forward reduces the peak tracking error, and elastic feed-forward leaves the
//! tool at least 3× less residual oscillation than rigid-body feed-forward.

mod robot_support;

use std::sync::Arc;

use morc_kernel::AssemblyData;
use morc_kernel::AssemblySpec;
use morc_kernel::ClockKind;
use morc_kernel::EngineConfig;
use morc_kernel::Value;
use morc_lua::LuaRobot;
use morc_robot::components::factory;
use morc_robot::Robot;
use robot_support::*;

fn lua() -> mlua::Lua {
    let lua = morc_lua::new_state().unwrap();
    morc_lua::install(&lua, morc_lua::start_engine(EngineConfig::default()).unwrap()).unwrap();
    lua
}

fn load(lua: &mlua::Lua, code: &str) -> Arc<Robot> {
    let ud: mlua::AnyUserData = lua.load(code).set_name("@test.lua").eval().unwrap();
    ud.borrow::<LuaRobot>().map(|r| r.0.clone()).unwrap()
}

fn ptp(robot: &Arc<Robot>, target: &[f64]) -> AssemblySpec {
    let mut a = AssemblySpec::new("ptp");
    a.add("traj", "ptp", 1, factory(robot, "ptp").unwrap());
    a.components.last_mut().unwrap().params = vec![("target".into(), Value::Vector(target.to_vec()))];
    a.add("ff", "rnea", 1, factory(robot, "rnea").unwrap());
    a.connect("robot.q", "traj.start").connect("traj.q", "robot.q_cmd").connect("traj.qd", "robot.qd_ff");
    a.connect("traj.q", "ff.q").connect("traj.qd", "ff.qd").connect("traj.qdd", "ff.qdd").connect("ff.tau", "robot.tau_ff");
    a
}

fn deg(v: &[f64]) -> Vec<f64> {
    v.iter().map(|x| x.to_radians()).collect()
}

/// Moves from `q0` to `target` (rad), checks arrival, then holds 2 s and checks the sag.
fn moves_and_holds(robot: &Arc<Robot>, q0: &[f64], target: &[f64]) {
    let mut engine = engine(robot, q0, ClockKind::Virtual);
    let r = engine.run(&ptp(robot, target), &AssemblyData::new()).unwrap();
    assert!(r.outcome.is_ok(), "{}", r.report());
    let (f, trace) = tracer(robot.dof());
    let mut watch = AssemblySpec::new("watch");
    watch.add("q", "trace", 1, f).connect("robot.q", "q.u");
    watch.duration = Some(2.0);
    engine.run(&watch, &AssemblyData::new()).unwrap();
    let samples = trace.lock().unwrap();
    let final_error = samples[0].iter().zip(target).fold(0.0f64, |m, (q, t)| m.max((q - t).abs()));
    assert!(final_error < 1e-3, "{}: final error {final_error} rad", robot.name);
    let sag = samples.iter().flat_map(|q| q.iter().zip(&samples[0]).map(|(a, b)| (a - b).abs())).fold(0.0, f64::max);
    assert!(sag < 1e-4, "{}: sagged {sag} rad while holding", robot.name);
    eprintln!("{}: final error {final_error:.2e} rad, sag while holding {sag:.2e} rad", robot.name);
}

#[test]
fn ur5_script_loads_moves_and_holds() {
    let lua = lua();
    let robot = load(&lua, "return require 'robots.ur5'");
    assert_eq!(robot.dof(), 6);
    assert_eq!(robot.joints[0].name, "shoulder_pan_joint");
    moves_and_holds(&robot, &[0.0, -1.2, 1.4, -0.5, 0.3, 0.0], &[0.4, -1.0, 1.1, -0.2, 0.6, 0.3]);
}

#[test]
fn kr16_script_loads_moves_and_holds_with_a_load() {
    let lua = lua();
    let (reachable, why): (bool, Option<String>) = lua.load("local r = require 'robots.kr16'; return r:reachable { 0, -90, 90, 0, 0, 0 }").eval().unwrap();
    assert!(reachable, "{why:?}");
    let (reachable, why): (bool, Option<String>) = lua.load("local r = require 'robots.kr16'; return r:reachable { 0, 40, 90, 0, 0, 0 }").eval().unwrap();
    assert!(!reachable && why.as_deref().unwrap().contains("A2"), "{why:?}");
    // Flange at KUKA's home: forearm horizontal, 260 + 670 + 158 mm forward, 675 + 680 + 35 mm up.
    let pos: Vec<f64> = lua.load("return require('robots.kr16'):fk { 0, -90, 90, 0, 0, 0 }.pos").eval().unwrap();
    assert!((pos[0] - 1088.0).abs() < 1e-6 && pos[1].abs() < 1e-6 && (pos[2] - 1390.0).abs() < 1e-6, "{pos:?}");
    let robot = load(&lua, "return require('robots.kr16'):with_payload { mass = 16, com = { 0, 0, 100 } }");
    moves_and_holds(&robot, &deg(&[-5.0, -95.0, 85.0, 0.0, 0.0, 0.0]), &deg(&[0.0, -90.0, 90.0, 0.0, 0.0, 0.0]));
}

#[test]
fn use_robot_restarts_the_engine_on_the_simulated_robot() {
    let lua = lua();
    let base: String = lua
        .load(
            r#"
            local kr16 = require "robots.kr16"
            morc.use_robot(kr16, { q0 = { 0, -90, 90, 0, 0, 0 } })
            local a = morc.assembly "move"
            kr16:add(a, "traj", "ptp", { target = { 10, -80, 80, 0, 10, 0 }, settle = 0.1 })
            kr16:add(a, "mon", "monitor", { tolerance = 0.01 })
            a:connect("robot.q", "traj.start")
            a:connect("traj.q", "robot.q_cmd")
            a:connect("traj.qd", "robot.qd_ff")
            a:connect("traj.q", "mon.q_ref")
            a:connect("robot.q", "mon.q")
            a:connect("traj.done", "mon.done")
            local r = morc.engine:run(a)
            assert(r.ok and r.reason:find "target reached", tostring(r))
            return morc.engine.base .. " " .. tostring(#morc.kind "gain".inputs >= 0)
        "#,
        )
        .set_name("@test.lua")
        .eval()
        .map_err(|e| e.to_string())
        .unwrap();
    assert_eq!(base, "robot true");
}

#[test]
fn bad_robot_definitions_name_file_and_joint() {
    let lua = lua();
    let err = |code: &str| lua.load(code).set_name("@robots/bad.lua").exec().unwrap_err().to_string();
    let e = err(r#"return morc.robot { name = "bad", model = morc.model.dh { { a = 100, mass = 1, com = { -50, 0, 0 } }, { a = 100, mass = 1, com = { -50, 0, 0 } } },
        joints = { { "J1", limits = { pos = { -90, 90 }, vel = 90, acc = 100, torque = 10 } },
                   { "J2", limits = { pos = { 90, -90 }, vel = 90, acc = 100, torque = 10 } } } }"#);
    assert!(e.contains("robots/bad.lua:1") && e.contains("joint J2") && e.contains("lower < upper"), "{e}");
    let e = err(r#"return morc.robot { name = "bad", model = morc.model.dh { { a = 100, mass = 1, com = { -50, 0, 0 } } },
        joints = { { "J1", limits = { pos = { -90, 90 }, vel = 90 } } } }"#);
    assert!(e.contains("robots/bad.lua:1") && e.contains("joint J1") && e.contains("acc"), "{e}");
    let e = err(r#"return morc.robot { name = "bad", model = morc.model.urdf "nowhere.urdf", joints = {} }"#);
    assert!(e.contains("robots/bad.lua:1") && e.contains("nowhere.urdf"), "{e}");
    let e = err(r#"return morc.robot { name = "bad", model = morc.model.dh { { a = 100, mass = 1, com = { -50, 0, 0 } }, { a = 100, mass = 1, com = { -50, 0, 0 } } },
        joints = { { "J1", limits = { pos = { -90, 90 }, vel = 90, acc = 100, torque = 10 } } } }"#);
    assert!(e.contains("lists 1 joints but its model has 2"), "{e}");
}

/// Runs the experiment in a fresh folder; its "result:" line and how many recordings it made.
fn run_experiment(clock: &str) -> (String, usize) {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("morc-experiment-{clock}-{}-{run}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let program = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/morc_experiment.lua");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_morc")).args(["--clock", clock, "run", program]).current_dir(&dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    eprintln!("{stdout}");
    let line = stdout.lines().find(|l| l.starts_with("result:")).expect("a result line").to_string();
    let files: Vec<_> = std::fs::read_dir(dir.join("runs")).unwrap().map(|e| e.unwrap().path()).collect();
    let recordings = files.len();
    // The recordings say which robot they were made on (h5py reads the attribute).
    let read = std::process::Command::new("python3")
        .args(["-c", "import h5py, sys; a = h5py.File(sys.argv[1]).attrs['robot']; print(a.decode() if isinstance(a, bytes) else a)"])
        .arg(&files[0])
        .output()
        .expect("python3 with h5py (scripts/setup --test installs it)");
    assert_eq!(String::from_utf8_lossy(&read.stdout).trim(), "KUKA KR 16-2 (elastic A1–A3) (simulated, 16 kg payload)", "{}", String::from_utf8_lossy(&read.stderr));
    // The last line is the experiment's verdict, its figures those of the result line.
    let last = stdout.lines().last().unwrap_or_default();
    let value = |key: &str| -> f64 { line.split_whitespace().find_map(|w| w.strip_prefix(key)).unwrap().parse().unwrap() };
    let (rigid, elastic) = (value("residual_rigid_mm="), value("residual_elastic_mm="));
    assert_eq!(last, format!("morc experiment: tool residual peak rigid {rigid:.3} mm, elastic {elastic:.3} mm ({:.1}× lower)", rigid / elastic), "{stdout}");
    std::fs::remove_dir_all(&dir).ok();
    (line, recordings)
}

#[test]
fn morc_experiment_gives_the_same_figures_on_the_wall_clock() {
    assert_eq!(run_experiment("virtual").0, run_experiment("wall").0);
}

#[test]
fn morc_experiment_feed_forward_reduces_the_peak_tracking_error() {
    let (line, recordings) = run_experiment("virtual");
    let value = |key: &str| -> f64 { line.split_whitespace().find_map(|w| w.strip_prefix(key)).unwrap().parse().unwrap() };
    let (with_ff, without_ff) = (value("peak_ff_deg="), value("peak_fb_deg="));
    assert!(with_ff > 0.0 && with_ff < 0.5 * without_ff, "feed-forward {with_ff}° vs feedback only {without_ff}°");
    // The paper's result, read back from the recordings: elastic feed-forward leaves the tool at
    // least 3× less residual oscillation than rigid-body feed-forward, which leaves less than none.
    let (none, rigid, elastic) = (value("residual_none_mm="), value("residual_rigid_mm="), value("residual_elastic_mm="));
    assert!(elastic > 0.0 && rigid >= 3.0 * elastic && none > rigid, "tool residual: none {none} mm, rigid {rigid} mm, elastic {elastic} mm");
    assert_eq!(recordings, 3, "the three runs recorded");
}

/// The same robot program on the direct simulation and, with `--bus sim`, through the real
/// EtherCAT master onto the virtual segment's drives (virtual commissioning).
#[test]
fn motion_tour_runs_directly_and_through_the_bus() {
    let dir = std::env::temp_dir().join(format!("morc-tour-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let program = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/motion_tour.lua");
    for args in [&["run", program][..], &["--bus", "sim", "run", program][..]] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_morc")).args(args).current_dir(&dir).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        for line in ["ptp ✓", "path ✓", "circ ✓", "lin ✗", "precondition", "home ✓"] {
            assert!(stdout.contains(line), "{args:?}: no '{line}' in\n{stdout}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The MoRC experiment, unchanged, through the EtherCAT master onto the virtual segment's
/// CiA 402 drives (`--bus sim`): the feed-forward torque reaches the drives as their torque
/// offset (0x60B2), their servo adds it, and it reduces the tracking error there too.
#[test]
fn morc_experiment_runs_through_the_bus_and_feed_forward_helps_there() {
    let dir = std::env::temp_dir().join(format!("morc-experiment-bus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let program = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/morc_experiment.lua");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_morc")).args(["--bus", "sim", "run", program]).current_dir(&dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    eprintln!("{stdout}");
    let line = stdout.lines().find(|l| l.starts_with("result:")).expect("a result line");
    let value = |key: &str| -> f64 { line.split_whitespace().find_map(|w| w.strip_prefix(key)).unwrap().parse().unwrap() };
    let (with_ff, without_ff) = (value("peak_ff_deg="), value("peak_fb_deg="));
    assert!(with_ff > 0.0 && with_ff < 0.5 * without_ff, "on the bus: feed-forward {with_ff}° vs feedback only {without_ff}°");
    let (rigid, elastic) = (value("residual_rigid_mm="), value("residual_elastic_mm="));
    assert!(elastic > 0.0 && rigid >= 3.0 * elastic, "on the bus: tool residual rigid {rigid} mm, elastic {elastic} mm");
    assert!(stdout.lines().last().unwrap_or_default().starts_with("morc experiment: tool residual peak rigid"), "{stdout}");
    std::fs::remove_dir_all(&dir).ok();
}
