//! `morc bench topp`: morc's time-optimal planning beside the planners labs use, in one run
//! on the same cases: TOPP-RA (`morc_motion::toppra`) against `toppra` (PyPI) on random 6-DoF
//! spline paths of the UR5, with joint velocity and acceleration limits and then with torque
//! limits too; the jerk-limited PTP (the `ptp` kind's synchronised double-S) against `ruckig`
//! (PyPI) on random start/goal pairs. Durations are compared case by case; compute times are
//! the best of a few repeats on each side (the peers' Python start and imports left out).
//! The peers run in `tests/peers/motion_peers.py` (`scripts/setup --test` installs them).

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use morc_motion::toppra::{parameterize, spline_path, PathLimits};
use morc_motion::{MotionLimits, Move, MoveSpec, Sequence};
use morc_robot::{Noise, Robot, RobotKinematics};
use serde_json::{json, Value as Json};

/// Random paths per TOPP configuration, start/goal pairs for the PTP.
const TOPP_CASES: usize = 10;
const PTP_CASES: usize = 100;
/// Grid points of each path (toppra's examples use a few hundred to a thousand).
const GRID_POINTS: usize = 1001;
/// Waypoints per random path.
const WAYPOINTS: usize = 5;
/// Repeats per case; the best is kept on each side.
const REPEATS: usize = 3;
/// In the torque-limited configuration the acceleration limits are this many times the UR5's,
/// so that its torque limits are what binds (a lower torque limit cannot hold every random pose).
const TORQUE_CASE_ACCELERATION: f64 = 10.0;
/// The PTP's jerk limit as the time to reach full acceleration (the `ptp` kind's `ramp`).
const RAMP: f64 = 0.1;

/// Runs the benchmark; its last line is the TOPP comparison's summary.
pub fn topp() -> Result<(), String> {
    let robot = ur5()?;
    let urdf = morc_lua::home().join("robots/ur5/ur5_robot.urdf");
    let cases = Cases::random(&robot, 7);
    println!(
        "morc bench topp — UR5 (6 DoF): {TOPP_CASES} random spline paths through {WAYPOINTS} waypoints ({GRID_POINTS} grid points) per configuration, {PTP_CASES} PTP start/goal pairs; best of {REPEATS}\n"
    );
    let peer = run_peers(&robot, &cases, &urdf)?;
    let mut summary = String::new();
    for (label, torque) in [("velocity + acceleration", false), ("velocity + torque (acceleration limits ×10)", true)] {
        let mut worst = 0.0f64;
        let (mut morc_s, mut peer_s) = (0.0, 0.0);
        println!("TOPP-RA, {label}:");
        println!("  case   morc duration   toppra duration   difference   morc compute   toppra compute");
        for (k, waypoints) in cases.paths.iter().enumerate() {
            let (duration, seconds) = morc_topp(&robot, waypoints, torque)?;
            let answer = &peer["topp"][k + if torque { cases.paths.len() } else { 0 }];
            let (peer_duration, peer_seconds) = (number(answer, "duration")?, number(answer, "seconds")?);
            let difference = (duration - peer_duration) / peer_duration;
            worst = worst.max(difference.abs());
            morc_s += seconds;
            peer_s += peer_seconds;
            println!("  {k:>4}   {duration:>11.4} s   {peer_duration:>13.4} s   {:>+9.3} %   {:>9.2} ms   {:>11.2} ms", difference * 100.0, seconds * 1e3, peer_seconds * 1e3);
        }
        let n = cases.paths.len() as f64;
        let line =
            format!("topp vs toppra ({label}): durations within {:.3} %, compute {:.2} ms vs {:.2} ms per path ({:.0}× less)", worst * 100.0, morc_s / n * 1e3, peer_s / n * 1e3, peer_s / morc_s);
        println!("  {line}\n");
        summary = line;
    }
    ptp_comparison(&robot, &cases, &peer)?;
    println!("{summary}");
    Ok(())
}

/// The random cases (seeded: the same every run).
struct Cases {
    paths: Vec<Vec<Vec<f64>>>,
    ptp: Vec<(Vec<f64>, Vec<f64>)>,
}

impl Cases {
    fn random(robot: &Robot, seed: u64) -> Cases {
        let mut noise = Noise::new(seed);
        // Within ±π (the UR5's ±2π would make every path a long one) and its own limits.
        let pose = |noise: &mut Noise| -> Vec<f64> {
            robot
                .joints
                .iter()
                .map(|j| {
                    let (lo, hi) = (j.limits.lower.max(-std::f64::consts::PI), j.limits.upper.min(std::f64::consts::PI));
                    lo + (hi - lo) * noise.uniform()
                })
                .collect()
        };
        let paths = (0..TOPP_CASES).map(|_| (0..WAYPOINTS).map(|_| pose(&mut noise)).collect()).collect();
        let ptp = (0..PTP_CASES).map(|_| (pose(&mut noise), pose(&mut noise))).collect();
        Cases { paths, ptp }
    }
}

fn ur5() -> Result<Arc<Robot>, String> {
    let lua = morc_lua::new_state().map_err(|e| e.to_string())?;
    let engine = super::start_engine(morc_kernel::EngineConfig::default())?;
    morc_lua::install(&lua, engine).map_err(|e| e.to_string())?;
    let robot: mlua::AnyUserData = lua.load(r#"return require "robots.ur5""#).set_name("=bench topp").eval().map_err(|e| e.to_string())?;
    let robot = robot.borrow::<morc_lua::LuaRobot>().map_err(|e| e.to_string())?.0.clone();
    Ok(robot)
}

fn path_limits(robot: &Robot, torque: bool) -> PathLimits {
    PathLimits {
        velocity: robot.joints.iter().map(|j| j.limits.velocity).collect(),
        acceleration: robot.joints.iter().map(|j| j.limits.acceleration * if torque { TORQUE_CASE_ACCELERATION } else { 1.0 }).collect(),
        torque: if torque { robot.joints.iter().map(|j| j.limits.torque).collect() } else { vec![] },
        path_speed: None,
    }
}

/// morc's TOPP-RA on one path: its duration and the best compute time (path and timing).
fn morc_topp(robot: &Robot, waypoints: &[Vec<f64>], torque: bool) -> Result<(f64, f64), String> {
    let limits = path_limits(robot, torque);
    let model = torque.then_some(&*robot.model);
    let (mut best, mut duration) = (f64::INFINITY, 0.0);
    for _ in 0..REPEATS {
        let started = Instant::now();
        let (grid, path) = spline_path(waypoints, GRID_POINTS)?;
        let timed = parameterize(&grid, &path, &limits, model)?;
        best = best.min(started.elapsed().as_secs_f64());
        duration = timed.duration();
    }
    Ok((duration, best))
}

fn ptp_limits(robot: &Robot) -> MotionLimits {
    let acceleration: Vec<f64> = robot.joints.iter().map(|j| j.limits.acceleration).collect();
    MotionLimits {
        velocity: robot.joints.iter().map(|j| j.limits.velocity).collect(),
        jerk: acceleration.iter().map(|a| a / RAMP).collect(),
        acceleration,
        linear: [1.0, 1.0, 1.0],
        angular: [1.0, 1.0, 1.0],
    }
}

/// The PTP's duration planned as the `ptp` kind plans it, and the best compute time.
fn morc_ptp(robot: &Arc<Robot>, start: &[f64], goal: &[f64]) -> Result<(f64, f64), String> {
    let mut arm = RobotKinematics::new(robot.clone());
    let (mut best, mut duration) = (f64::INFINITY, 0.0);
    for _ in 0..REPEATS {
        let started = Instant::now();
        let mut sequence = Sequence::new(vec![MoveSpec { motion: Move::Ptp { target: goal.to_vec() }, blend: 0.0, velocity_scale: 1.0 }], ptp_limits(robot));
        sequence.plan(&mut arm, start)?;
        best = best.min(started.elapsed().as_secs_f64());
        duration = sequence.duration();
    }
    Ok((duration, best))
}

fn ptp_comparison(robot: &Arc<Robot>, cases: &Cases, peer: &Json) -> Result<(), String> {
    let (mut same, mut fallback, mut ratio_sum, mut ratio_max) = (0, 0, 0.0, 0.0f64);
    let (mut morc_s, mut peer_s) = (0.0, 0.0);
    for (k, (start, goal)) in cases.ptp.iter().enumerate() {
        let (duration, seconds) = morc_ptp(robot, start, goal)?;
        let answer = &peer["ptp"][k];
        let (phase, time, peer_seconds) = (number(answer, "phase")?, number(answer, "time")?, number(answer, "seconds")?);
        // Where ruckig keeps the straight line it must take morc's time; where it cannot keep
        // it, its answer is the time-synchronised one.
        if ((duration - phase) / phase).abs() < 1e-9 {
            same += 1;
        } else if ((time - phase) / phase).abs() < 1e-9 {
            fallback += 1;
        }
        ratio_sum += duration / time;
        ratio_max = ratio_max.max(duration / time);
        morc_s += seconds;
        peer_s += peer_seconds;
    }
    let n = cases.ptp.len() as f64;
    println!("PTP, jerk-limited (ramp {RAMP} s), rest to rest, {PTP_CASES} pairs:");
    println!(
        "  morc against ruckig with phase synchronisation (a straight line in joint space, as morc's PTP): the same duration (to 1e-9) in {same} of {PTP_CASES}; ruckig's time-synchronised answer in {fallback} (it drops the line there); {} other",
        PTP_CASES - same - fallback
    );
    println!("  morc against ruckig with time synchronisation (each joint its own shape): duration ratio mean {:.3}, max {:.3} (the straight line's price)", ratio_sum / n, ratio_max);
    println!("  compute per motion: morc {:.2} µs, ruckig {:.2} µs (from Python)\n", morc_s / n * 1e6, peer_s / n * 1e6);
    Ok(())
}

fn number(answer: &Json, key: &str) -> Result<f64, String> {
    answer[key].as_f64().ok_or_else(|| format!("the peers' answer has no number '{key}': {answer}"))
}

/// Runs toppra and ruckig on every case in one Python process.
fn run_peers(robot: &Robot, cases: &Cases, urdf: &std::path::Path) -> Result<Json, String> {
    let limits = ptp_limits(robot);
    let mut topp = Vec::new();
    for torque in [false, true] {
        for waypoints in &cases.paths {
            let l = path_limits(robot, torque);
            let mut case = json!({ "waypoints": waypoints, "grid_points": GRID_POINTS, "vlim": l.velocity, "alim": l.acceleration });
            if torque {
                case["torque"] = json!({ "urdf": urdf, "tau": l.torque });
            }
            topp.push(case);
        }
    }
    let ptp: Vec<Json> = cases.ptp.iter().map(|(s, g)| json!({ "start": s, "goal": g, "v": limits.velocity, "a": limits.acceleration, "j": limits.jerk })).collect();
    peers(&json!({ "topp": topp, "ptp": ptp, "repeats": REPEATS }))
}

/// The peer script's answer to `request`; a missing peer says how to install it.
fn peers(request: &Json) -> Result<Json, String> {
    let script = morc_lua::home().join("tests/peers/motion_peers.py");
    let mut child = Command::new("python3")
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run python3 {}: {e} (install the peers with scripts/setup --test)", script.display()))?;
    child.stdin.take().expect("piped").write_all(request.to_string().as_bytes()).map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("{} failed (scripts/setup --test installs toppra, ruckig and pin): {}", script.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("{}: unreadable answer: {e}", script.display()))
}
