//! `morc bench teach`: the teach library's hand-guiding law (`teach.admittance`, Lua on the
//! engine's thread) guiding the simulated dual-arm stacker at 1 kHz on the wall clock, with the
//! simulated operator pushing along z and x in turn: the Lua step's cost beside the native
//! rigid-body feed-forward (rnea) of the same assembly.

use std::sync::Arc;

use morc_kernel::rt::RtPolicy;
use morc_kernel::{human_ns, AssemblyData, AssemblySpec, ClockKind, Component, Engine, EngineConfig, Outcome, Value};

/// Runs the benchmark for `seconds`; prints its figures, the admittance's on the last line.
pub fn teach(seconds: f64, policy: RtPolicy) -> Result<(), String> {
    let lua = morc_lua::new_state().map_err(|e| e.to_string())?;
    let engine = super::start_engine(EngineConfig::default())?;
    morc_lua::install(&lua, engine).map_err(|e| e.to_string())?;
    let (kind, robot): (mlua::AnyUserData, mlua::AnyUserData) = lua
        .load(
            r#"morc.lib.load "teach"
               local r = require "robots.stacker"
               local script = { { release = true, enable = true, time = 0.2 } }
               for k = 1, math.ceil(... + 1) do
                 local s = k % 2 == 0 and 1 or -1
                 script[#script + 1] = { push = { 0, 0, 10 * s }, time = 0.5 }
                 script[#script + 1] = { push = { 10 * s, 0, 0 }, time = 0.2 }
                 script[#script + 1] = { release = true, enable = true, time = 0.3 }
               end
               r:sim_hand(script)
               return require "lib.teach.components.admittance", r"#,
        )
        .set_name("=bench teach")
        .call((seconds,))
        .map_err(|e| e.to_string())?;
    let kind = kind.borrow::<morc_lua::LuaKind>().map_err(|e| e.to_string())?.0.clone();
    let robot = robot.borrow::<morc_lua::LuaRobot>().map_err(|e| e.to_string())?.0.clone();
    let period = 1e-3;
    let q0 = [90f64.to_radians(), 0.4, (-60f64).to_radians(), 0.4, 60f64.to_radians()];
    let base = morc_robot::SimulatedRobot::new(robot.clone(), &q0, period).map_err(|e| e.to_string())?;
    let mut engine = Engine::start(EngineConfig { period, clock: ClockKind::Wall, rt: policy }, Box::new(base)).map_err(|e| e.to_string())?;
    let mut spec = AssemblySpec::new("bench-teach");
    spec.duration = Some(seconds);
    let k = kind.clone();
    spec.add("adm", &kind.kind, 1, Arc::new(move || Ok(Box::new(morc_lua::LuaComponent::new(k.clone())) as Box<dyn Component>)));
    spec.components.last_mut().expect("added").params =
        vec![("n".into(), Value::Integer(5)), ("np".into(), Value::Integer(5)), ("robot".into(), Value::String("robots.stacker".into())), ("group".into(), Value::String("left".into()))];
    spec.add("ff", "rnea", 1, morc_robot::components::factory(&robot, "rnea").ok_or("no rnea")?);
    for p in ["q", "ft", "enable", "button"] {
        spec.connect(&format!("robot.{p}"), &format!("adm.{p}"));
    }
    spec.connect("adm.q", "robot.q_cmd").connect("adm.qd", "robot.qd_ff");
    spec.connect("adm.q", "ff.q").connect("adm.qd", "ff.qd").connect("adm.qdd", "ff.qdd").connect("ff.tau", "robot.tau_ff");
    println!("morc bench teach — hand guiding (teach.admittance, Lua) of the simulated stacker's left arm, wall clock 1 kHz, {seconds} s\n");
    let r = engine.run(&spec, &AssemblyData::new()).map_err(|e| e.to_string())?;
    if let Outcome::Fault(f) = &r.outcome {
        return Err(format!("{f:?}"));
    }
    let step = |name: &str| r.components.iter().find(|c| c.name == name).map(|c| c.exec).ok_or(format!("no figures of {name}"));
    let (adm, ff) = (step("adm")?, step("ff")?);
    println!("rnea (native)      step mean {:>9} p99 {:>9}", human_ns(ff.mean), human_ns(ff.p99 as f64));
    println!("tick work p99 {:>9}, late ticks {}", human_ns(r.engine.cycle.p99 as f64), r.engine.late_ticks);
    println!("admittance (Lua) step: mean {}, p99 {}, p99.9 {}, max {} over {} steps", human_ns(adm.mean), human_ns(adm.p99 as f64), human_ns(adm.p999 as f64), human_ns(adm.max as f64), adm.count);
    Ok(())
}
