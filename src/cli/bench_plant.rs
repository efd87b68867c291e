//! `morc bench plant`: what the simulated robot costs per base period, rigid and with elastic
//! gears: the KR 16 of robots/kr16.lua holding a slow sine on every joint at 1 kHz, its drives'
//! servo loops and the arm's dynamics (one ABA per period when rigid; when elastic, the mass
//! matrix factored once per period and the substeps its springs need).

use morc_kernel::{human_ns, monotonic_ns, Base, Commands, Histogram, Value, ValueType};
use morc_robot::SimulatedRobot;

/// The KR 16 with elastic gears: stiffness (N·m/rad) and damping per joint, 0 for rigid. A1–A3 as
/// robots/kr16_elastic.lua (the strain-wave catalogue's K3, ζ = 0.1); the wrist's softer than the
/// catalogue's (which would need ~120 substeps), to show what elastic wrists cost.
const ELASTIC: &[(&str, [f64; 6], [f64; 6])] = &[
    ("rigid", [0.0; 6], [0.0; 6]),
    ("elastic A1–A3", [7.1e5, 7.1e5, 7.1e5, 0.0, 0.0, 0.0], [843.0, 843.0, 584.0, 0.0, 0.0, 0.0]),
    ("elastic A1–A6", [7.1e5, 7.1e5, 7.1e5, 5e4, 5e4, 2e4], [843.0, 843.0, 584.0, 50.0, 50.0, 20.0]),
];

/// Runs the benchmark for `seconds` of simulated time per variant.
pub fn plant(seconds: f64) -> Result<(), String> {
    let lua = morc_lua::new_state().map_err(|e| e.to_string())?;
    let engine = super::start_engine(morc_kernel::EngineConfig::default())?;
    morc_lua::install(&lua, engine).map_err(|e| e.to_string())?;
    let period = 1e-3;
    let ticks = ((seconds / period) as u64).max(100);
    println!("morc bench plant — the simulated KR 16 (robots/kr16.lua) and UR5 (robots/ur5_elastic.lua) at 1 kHz, {ticks} base periods per variant, a 0.5 Hz sine on every joint");
    println!("{:<16} | {:>8} | {:>9} {:>9} {:>9}", "drive trains", "substeps", "mean", "p99", "max");
    let mut robots = Vec::new();
    for (label, k, d) in ELASTIC {
        let robot: mlua::AnyUserData = lua
            .load(
                r#"local k, d = ...
                   local kr16 = require "robots.kr16"
                   local joints = {}
                   for i, j in ipairs(kr16.joints) do
                     joints[i] = { j.name, limits = j.limits, drive = { slave = j.slave, gear = j.gear, counts = j.counts,
                       armature = j.armature, viscous = j.viscous, coulomb = j.coulomb, stiffness = k[i], damping = d[i] } }
                   end
                   return morc.robot { name = kr16.name, model = kr16.model, joints = joints, home = kr16.home }"#,
            )
            .set_name("=bench plant")
            .call((k.to_vec(), d.to_vec()))
            .map_err(|e| e.to_string())?;
        robots.push((label.to_string(), robot.borrow::<morc_lua::LuaRobot>().map_err(|e| e.to_string())?.0.clone()));
    }
    // The shipped elastic UR5: all six strain-wave gears elastic, the catalogue's stiffness.
    let ur5: mlua::AnyUserData = lua.load(r#"return require "robots.ur5_elastic""#).set_name("=bench plant").eval().map_err(|e| e.to_string())?;
    robots.push(("UR5, all six".to_string(), ur5.borrow::<morc_lua::LuaRobot>().map_err(|e| e.to_string())?.0.clone()));
    for (label, robot) in robots {
        let home: Vec<f64> = robot.home.clone();
        let mut base = SimulatedRobot::new(robot.clone(), &home, period).map_err(|e| e.to_string())?;
        let mut sensed: Vec<Value> = base.info().outputs.iter().map(|p| Value::zero(p.ty)).collect();
        let mut commands = vec![Value::Vector(home.clone()), Value::zero(ValueType::Vector(6)), Value::zero(ValueType::Vector(6))];
        let driven = [true, true, false];
        let mut h = Histogram::new();
        for tick in 0..ticks {
            let t = tick as f64 * period;
            let w = std::f64::consts::PI;
            let (position, rest) = commands.split_at_mut(1);
            for (j, (c, v)) in position[0].as_mut_slice().iter_mut().zip(rest[0].as_mut_slice()).enumerate() {
                *c = home[j] + 0.1 * (w * t).sin();
                *v = 0.1 * w * (w * t).cos();
            }
            base.sense(tick, &mut sensed);
            let t0 = monotonic_ns();
            let step = base.actuate(tick, Some(Commands::new(&commands, &driven)));
            h.record(monotonic_ns() - t0);
            if step != morc_kernel::Step::Continue {
                return Err(format!("{label}: {step:?}"));
            }
        }
        let s = h.summary();
        let substeps = base.elastic_substeps().map_or("1 (ABA)".to_string(), |n| n.to_string());
        println!("{label:<16} | {substeps:>8} | {:>9} {:>9} {:>9}", human_ns(s.mean), human_ns(s.p99 as f64), human_ns(s.max as f64));
    }
    Ok(())
}
