//! `cargo bench --bench model`: nanoseconds per call of the model algorithms, beside
//! Pinocchio on the same models in the same run.
//!
//! Robots: the UR5 of the shared reference URDF, the KUKA KR 16-2 of `robots/kr16.lua` (its
//! DH model with estimated dynamics and drive trains), and a 6R industrial arm built from the
//! KR5 DH table with plausible link inertias ("KR5 (DH)"); the DH models are written to URDF
//! so that both libraries load the very same file. A second table times one step of morc's
//! trajectory generator (PTP, and LIN through closed-form or least-squares IK). Pinocchio is timed by `benches/pinocchio_peer.py` through its
//! Python bindings (`pip install pin`); those figures include the binding overhead.
//!
//! Environment: `MORC_BENCH_PYTHON` (interpreter, default `python3`), `MORC_BENCH_SECONDS`
//! (length of one timed run, default 0.02), `MORC_BENCH_NO_PEER=1` to skip Pinocchio.

use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use morc_model::{Data, DhTable, FrameIndex, Inertia, Model};
use nalgebra::{Matrix3, Vector3};
use serde_json::{json, Value};

const REPETITIONS: usize = 15;

/// CPU time of this thread in seconds: unlike wall time it stops while the thread is
/// preempted, which matters on a machine shared with other work.
fn thread_cpu_seconds() -> f64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid timespec to write into; the clock id is a constant Linux knows.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    if status != 0 {
        // No per-thread clock: fall back to wall time since the first call.
        static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        return START.get_or_init(Instant::now).elapsed().as_secs_f64();
    }
    now.tv_sec as f64 + now.tv_nsec as f64 * 1e-9
}

/// Median over [`REPETITIONS`] runs of the time per call, in ns; each run lasts about
/// `run_seconds` after a calibration that doubles as warm-up.
fn ns_per_call(run_seconds: f64, mut call: impl FnMut()) -> f64 {
    let mut iterations: u64 = 1;
    let calibration = loop {
        let start = thread_cpu_seconds();
        for _ in 0..iterations {
            call();
        }
        let elapsed = thread_cpu_seconds() - start;
        if elapsed >= 2e-3 {
            break elapsed;
        }
        iterations *= 2;
    };
    let per_call = calibration / iterations as f64;
    let iterations = ((run_seconds / per_call) as u64).max(1);
    let mut runs: Vec<f64> = (0..REPETITIONS)
        .map(|_| {
            let start = thread_cpu_seconds();
            for _ in 0..iterations {
                call();
            }
            (thread_cpu_seconds() - start) * 1e9 / iterations as f64
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    runs[REPETITIONS / 2]
}

/// The algorithms compared, in table order: (key in the peer's JSON, label).
const ALGORITHMS: [(&str, &str); 6] = [("rnea", "RNEA"), ("aba", "ABA"), ("crba", "CRBA"), ("fk_joints", "FK (joints)"), ("fk_frames", "FK (+ frames)"), ("frame_jacobian", "EE frame Jacobian")];

struct Robot {
    label: &'static str,
    urdf: PathBuf,
    model: Model,
    ee: FrameIndex,
    ee_name: &'static str,
    q: Vec<f64>,
    v: Vec<f64>,
    a: Vec<f64>,
    tau: Vec<f64>,
}

impl Robot {
    fn new(label: &'static str, urdf: PathBuf, ee_name: &'static str) -> Result<Robot, String> {
        let model = morc_model::load_urdf(&urdf).map_err(|e| e.to_string())?;
        let ee = model.frame_index(ee_name).ok_or_else(|| format!("{label}: no frame '{ee_name}'"))?;
        // A generic configuration: no zero angles, so no trigonometric shortcut applies.
        let q = vec![0.3, -1.1, 1.4, -0.5, 0.9, 0.2];
        let v = vec![0.1, -0.2, 0.3, -0.4, 0.5, -0.6];
        let a = vec![1.0, 0.5, -0.5, 0.25, -1.0, 2.0];
        if model.nv() != q.len() {
            return Err(format!("{label}: expected 6 joints, found {}", model.nv()));
        }
        let mut data = Data::new(&model);
        let tau = morc_model::rnea(&model, &mut data, &q, &v, &a).as_slice().to_vec();
        Ok(Robot { label, urdf, model, ee, ee_name, q, v, a, tau })
    }

    /// morc's ns per call for each of [`ALGORITHMS`].
    fn time_morc(&self, run_seconds: f64) -> Vec<f64> {
        let (m, ee) = (&self.model, self.ee);
        let mut d = Data::new(m);
        let (q, v, a, tau) = (&self.q[..], &self.v[..], &self.a[..], &self.tau[..]);
        vec![
            ns_per_call(run_seconds, || {
                black_box(morc_model::rnea(m, &mut d, black_box(q), black_box(v), black_box(a)));
            }),
            ns_per_call(run_seconds, || {
                black_box(morc_model::aba(m, &mut d, black_box(q), black_box(v), black_box(tau)));
            }),
            ns_per_call(run_seconds, || {
                black_box(morc_model::crba(m, &mut d, black_box(q)));
            }),
            ns_per_call(run_seconds, || {
                morc_model::forward_kinematics_joints(m, &mut d, black_box(q));
                black_box(&d.joint_placements);
            }),
            ns_per_call(run_seconds, || {
                morc_model::forward_kinematics_placements(m, &mut d, black_box(q));
                black_box(&d.frame_placements);
            }),
            ns_per_call(run_seconds, || {
                black_box(morc_model::compute_frame_jacobian(m, &mut d, black_box(q), black_box(ee)));
            }),
        ]
    }
}

/// The KR5 DH table with inertias of a KR5/KR16-class arm (rotating column, upper arm, arm
/// housing, forearm, wrist, flange). The toolbox carries none; these are rough estimates,
/// which is all a timing needs — but both libraries get exactly these numbers.
fn kr5_with_inertias(reference: &Path) -> Result<Model, String> {
    let mut table = DhTable::load_rtb_json(reference.join("kr5_dh.json"), "KR5").map_err(|e| e.to_string())?;
    // (mass kg, centre of mass in DH frame j m, principal moments about it kg m²)
    let links: [(f64, [f64; 3], [f64; 3]); 6] = [
        (35.0, [-0.09, 0.20, 0.0], [0.90, 0.70, 0.80]),
        (22.0, [-0.30, 0.0, 0.05], [0.10, 0.80, 0.80]),
        (12.0, [-0.06, 0.0, -0.05], [0.15, 0.15, 0.12]),
        (8.0, [0.0, 0.25, 0.0], [0.30, 0.04, 0.30]),
        (2.5, [0.0, 0.0, 0.02], [0.008, 0.008, 0.006]),
        (0.5, [0.0, 0.0, -0.01], [0.0005, 0.0005, 0.0008]),
    ];
    for (link, (mass, com, moments)) in table.links.iter_mut().zip(links) {
        link.inertia = Some(Inertia::new(mass, Vector3::from(com), Matrix3::from_diagonal(&Vector3::from(moments))));
    }
    table.to_model().map_err(|e| e.to_string())
}

/// A robot defined by a script of robots/, as a program loads it.
fn robot_script(name: &str) -> std::sync::Arc<morc_robot::Robot> {
    let lua = morc_lua::new_state().expect("a Lua state");
    let engine = morc_lua::start_engine(morc_kernel::EngineConfig::default()).expect("an engine");
    morc_lua::install(&lua, engine).expect("morc in Lua");
    let robot: mlua::AnyUserData = lua.load(format!("return require 'robots.{name}'")).eval().expect("the robot script loads");
    let robot = robot.borrow::<morc_lua::LuaRobot>().expect("a robot").0.clone();
    drop(lua);
    robot
}

/// `model` without its drive trains: Pinocchio's RNEA has no friction or armature terms, so
/// both sides compute the same rigid-body dynamics.
fn rigid_body_only(model: &Model) -> Model {
    let mut model = model.clone();
    for joint in 1..model.njoints() {
        model.set_drive_train(joint, morc_model::DriveTrain::default()).expect("a joint of the model");
    }
    model
}

fn kr16_script() -> std::sync::Arc<morc_robot::Robot> {
    robot_script("kr16")
}

/// ns per step of the trajectory generator: planned once, then stepped through its motion.
fn time_trajectory_steps(run_seconds: f64) {
    use morc_kernel::AssemblyData;
    use morc_kernel::Value;
    use morc_kernel::{Component, InitContext, Step, StepContext};
    use morc_motion::Kinematics;
    use morc_robot::components::MotionTrajectory;
    use morc_robot::RobotKinematics;
    println!();
    println!("Trajectory generator: ns per step (thread CPU time), reference q, qd, qdd, tool position");
    println!("{:<6} {:<34} {:>9}", "robot", "motion", "ns/step");
    for (name, q0) in [("kr16", [0.0, -1.4, 1.4, 0.0, 0.8, 0.0]), ("ur5", [0.0, -1.4, 1.4, -1.5, -1.5, 0.0])] {
        let robot = robot_script(name);
        let mut kinematics = RobotKinematics::new(robot.clone());
        let mut goal = kinematics.tool_pose(&q0);
        goal.translation.y += 0.2;
        let rpy = morc_model::rpy_from_rotation(&goal.rotation);
        let pose = vec![goal.translation.x, goal.translation.y, goal.translation.z, rpy.x, rpy.y, rpy.z];
        let target: Vec<f64> = q0.iter().map(|q| q + 0.3).collect();
        let cases = [("ptp", "ptp, trapezoid", Value::Vector(target.clone()), 0.0), ("ptp", "ptp, jerk-limited + Bessel filter", Value::Vector(target), 0.05), ("lin", "", Value::Vector(pose), 0.0)];
        for (kind, label, goal, ramp) in cases {
            let label = if kind == "lin" { format!("lin ({} IK)", kinematics.solver_name()) } else { label.to_string() };
            let mut traj = MotionTrajectory::new(robot.clone(), kind);
            traj.set_parameter("target", &goal).unwrap();
            traj.set_parameter("settle", &Value::Real(-1.0)).unwrap();
            if ramp > 0.0 {
                traj.set_parameter("ramp", &Value::Real(ramp)).unwrap();
                traj.set_parameter("filter", &Value::Real(10.0)).unwrap();
            }
            traj.configure().unwrap();
            let data = AssemblyData::new();
            let mut outputs: Vec<Value> = traj.info().outputs.iter().map(|p| Value::zero(p.ty)).collect();
            traj.initialize(&InitContext { name: "traj", period: 1e-3, base_period: 1e-3, data: &data, thread: &Default::default(), base_latency: 0 }, &mut outputs)
                .unwrap();
            let start = [Value::Vector(q0.to_vec())];
            let mut step = 0u64;
            let ns = ns_per_call(run_seconds, || {
                // Cycle through the motion (about 1 s), re-planning never: time wraps within it.
                let time = (step % 800) as f64 * 1e-3;
                let ctx = StepContext { step, time, period: 1e-3 };
                assert!(matches!(traj.step(&ctx, black_box(&start), &mut outputs), Step::Continue));
                step += 1;
            });
            println!("{:<6} {:<34} {:>9.0}", name.to_uppercase(), label, ns);
        }
    }
}

/// ns per call of the model and the linear algebra from Lua (issue 17, item 3): each figure
/// is a Lua loop of 100 calls timed as one, divided by 100, so it is the Lua-side cost of a
/// call (argument checks, userdata borrows, the algorithm) without the Rust→Lua entry.
fn time_lua_calls(run_seconds: f64) {
    let lua = morc_lua::new_state().expect("a Lua state");
    let engine = morc_lua::start_engine(morc_kernel::EngineConfig::default()).expect("an engine");
    morc_lua::install(&lua, engine).expect("morc in Lua");
    lua.load(
        r#"
        r = require "robots.ur5"
        m = morc.model "tests/data/reference/dynamics/ur5_robot.urdf"
        q, v, a = morc.vec { 0.3, -1.1, 1.4, -0.5, 0.9, 0.2 }, morc.vec { 0.1, -0.2, 0.3, -0.4, 0.5, -0.6 }, morc.vec { 1, 0.5, -0.5, 0.25, -1, 2 }
        qt = { 0.3, -1.1, 1.4, -0.5, 0.9, 0.2 }
        qdeg = { 17, -63, 80, -29, 52, 11 }
        tau, x, y = morc.vec(6), morc.vec(6), morc.vec(6)
        J, P = morc.mat(6, 6), morc.mat(6, 6)
        m:frame_jacobian_to(J, q, "tool0")
        cases = {
          { "model:rnea_to(tau, q, v, a)", function() m:rnea_to(tau, q, v, a) end },
          { "model:rnea_to, q a table", function() m:rnea_to(tau, qt, v, a) end },
          { "model:rnea(q, v, a) (new vec)", function() m:rnea(q, v, a) end },
          { "model:frame_jacobian_to", function() m:frame_jacobian_to(J, q, "tool0") end },
          { "J:pinv_to(P, 0.01) (6×6)", function() J:pinv_to(P, 0.01) end },
          { "y:gemv(J, x)", function() y:gemv(J, x) end },
          { "v[i] read + write (6 each)", function() for i = 1, 6 do y[i] = x[i] end end },
          { "robot:fk(q°, 'tool0')", function() r:fk(qdeg, "tool0") end },
          { "robot:fk(q°) (tool frame)", function() r:fk(qdeg) end },
        }
        function run(i, n) local f = cases[i][2]; for _ = 1, n do f() end end
    "#,
    )
    .exec()
    .expect("the Lua bench setup");
    let run: mlua::Function = lua.globals().get("run").expect("run");
    let cases: mlua::Table = lua.globals().get("cases").expect("cases");
    println!();
    println!("The model and linear algebra from Lua (UR5): ns per call inside a Lua loop (thread CPU time)");
    println!("{:<34} {:>9}", "call", "ns/call");
    for i in 1..=cases.raw_len() {
        let label: String = cases.get::<mlua::Table>(i).and_then(|c| c.get(1)).expect("a label");
        let ns = ns_per_call(run_seconds, || run.call::<()>((i, 100)).expect("the Lua call")) / 100.0;
        println!("{label:<34} {ns:>9.0}");
    }
    // The same robot's fk as Rust's Robot::fk does it (a workspace per call), for the before figure.
    let robot = robot_script("ur5");
    let q: Vec<f64> = [17.0f64, -63.0, 80.0, -29.0, 52.0, 11.0].iter().map(|d| d.to_radians()).collect();
    let ns = ns_per_call(run_seconds, || {
        black_box(robot.fk(black_box(&q)));
    });
    println!("{:<34} {ns:>9.0}", "Rust Robot::fk (Data per call)");
}

/// Runs the Python peer on `robots`; `Err` says why Pinocchio's figures are missing.
fn run_pinocchio_peer(robots: &[Robot], run_seconds: f64) -> Result<Value, String> {
    let python = std::env::var("MORC_BENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/pinocchio_peer.py");
    let request = json!({
        "target_seconds": run_seconds,
        "repeat": REPETITIONS,
        "robots": robots.iter().map(|r| json!({
            "label": r.label, "urdf": r.urdf, "ee_frame": r.ee_name,
            "q": r.q, "v": r.v, "a": r.a, "tau": r.tau,
        })).collect::<Vec<_>>(),
    });
    let mut child = Command::new(&python)
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run '{python}' ({e}); install Python 3 (or set MORC_BENCH_PYTHON)"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(request.to_string().as_bytes()).map_err(|e| format!("writing to the peer: {e}"))?;
    }
    let output = child.wait_with_output().map_err(|e| format!("waiting for the peer: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    match output.status.code() {
        Some(0) => serde_json::from_slice(&output.stdout).map_err(|e| format!("the peer's output is not JSON: {e}")),
        Some(3) => Err(stderr.trim().to_string()),
        _ => Err(format!("the peer failed ({}): {}", output.status, stderr.trim())),
    }
}

fn max_difference(ours: &[f64], theirs: Option<&Value>) -> Option<f64> {
    let theirs = theirs?.as_array()?;
    (theirs.len() == ours.len()).then(|| ours.iter().zip(theirs).map(|(x, y)| (x - y.as_f64().unwrap_or(f64::NAN)).abs()).fold(0.0, f64::max))
}

fn main() {
    let run_seconds: f64 = std::env::var("MORC_BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(0.02);
    let reference = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/reference/dynamics");
    let kr5_urdf = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kr5_dh.urdf");
    let kr16_urdf = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kr16.urdf");
    let robots = kr5_with_inertias(&reference)
        .and_then(|kr5| std::fs::write(&kr5_urdf, morc_model::to_urdf(&kr5)).map_err(|e| format!("{}: {e}", kr5_urdf.display())))
        .and_then(|()| std::fs::write(&kr16_urdf, morc_model::to_urdf(&rigid_body_only(&kr16_script().model))).map_err(|e| format!("{}: {e}", kr16_urdf.display())))
        .and_then(|()| Ok(vec![Robot::new("UR5", reference.join("ur5_robot.urdf"), "tool0")?, Robot::new("KR16", kr16_urdf.clone(), "tool")?, Robot::new("KR5 (DH)", kr5_urdf.clone(), "tool")?]));
    let robots = match robots {
        Ok(robots) => robots,
        Err(e) => {
            eprintln!("bench model: {e}");
            std::process::exit(1);
        }
    };

    let morc: Vec<Vec<f64>> = robots.iter().map(|r| r.time_morc(run_seconds)).collect();
    let peer = if std::env::var_os("MORC_BENCH_NO_PEER").is_some() { Err("skipped (MORC_BENCH_NO_PEER)".to_string()) } else { run_pinocchio_peer(&robots, run_seconds) };

    println!("Model algorithms: ns per call (thread CPU time), median of {REPETITIONS} runs of ~{:.0} ms each", run_seconds * 1e3);
    match &peer {
        Ok(p) => {
            println!(
                "Pinocchio {} through Python {} (timeit). Python-bound: each call includes the binding, which the",
                p["pinocchio_version"].as_str().unwrap_or("?"),
                p["python_version"].as_str().unwrap_or("?")
            );
            println!("reference README puts at ~0.1 µs; nothing is subtracted. 'binding floor' is the same Pinocchio call");
            println!("on a model without joints (nq = 0): the binding's own cost here, for scale.");
        }
        Err(e) => println!("Pinocchio not measured: {e}\n  (to compare: pip install pin)"),
    }
    println!();
    println!("{:<9} {:<18} {:>9} {:>11} {:>15} {:>14}", "robot", "algorithm", "morc ns", "Pinocchio", "morc/Pinocchio", "binding floor");
    for (robot, ours) in robots.iter().zip(&morc) {
        let theirs = peer.as_ref().ok().map(|p| &p["robots"][robot.label]);
        for ((key, label), ns) in ALGORITHMS.iter().zip(ours) {
            let timings = theirs.map(|t| &t["timings"]);
            let their_ns = timings.and_then(|t| t[*key].as_f64());
            let note = timings.and_then(|t| t[format!("{key}_convention")].as_str()).map(|c| format!(" ({c})")).unwrap_or_default();
            let (their_text, ratio) = match their_ns {
                Some(t) => (format!("{t:.0}"), format!("{:.2}", ns / t)),
                None => ("—".to_string(), "—".to_string()),
            };
            let floor = peer.as_ref().ok().and_then(|p| p["binding_floor"][*key].as_f64());
            let floor = floor.map(|f| format!("{f:.0}")).unwrap_or_else(|| "—".to_string());
            println!("{:<9} {:<18} {:>9.0} {:>11} {:>15} {:>14}{note}", robot.label, label, ns, their_text, ratio, floor);
        }
        if let Some(t) = theirs {
            let (tau_diff, ddq_diff) = (max_difference(&robot.tau, t.get("tau")), max_difference(&robot.a, t.get("ddq")));
            println!(
                "{:<9} same model? max |Δtau| {:.1e} N·m, max |Δddq| {:.1e} rad/s²; {} frames here, {} in Pinocchio",
                "",
                tau_diff.unwrap_or(f64::NAN),
                ddq_diff.unwrap_or(f64::NAN),
                robot.model.frames().len(),
                t["nframes"].as_u64().unwrap_or(0)
            );
        }
    }
    time_trajectory_steps(run_seconds);
    time_lua_calls(run_seconds);
}
