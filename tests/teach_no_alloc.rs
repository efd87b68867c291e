//! Hand guiding allocates nothing from the system allocator in steady state: the teach
//! library's admittance component (Lua, on the engine's thread) guiding the simulated stacker,
//! whose plant runs the simulated operator's hand and its wrist F/T sensor. A counting global
//! allocator, armed and disarmed from inside the assembly, sees no allocation on any thread.
//! One test in this binary, so no other test allocates concurrently.

use std::sync::Arc;

use morc_test_support::alloc::{all_thread_allocations, assert_allocated_nothing, counting_all_threads, reset_all_thread_allocations, CountingAllocator};
use morc_test_support::doubles::allocation_window;

use morc_kernel::*;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// The admittance kind and the stacker, with the hand's script published to it.
fn setup() -> (Arc<morc_lua::LuaComponentDef>, Arc<morc_robot::Robot>) {
    let lua = morc_lua::new_state().unwrap();
    let engine = morc_lua::start_engine(EngineConfig::default()).unwrap();
    morc_lua::install(&lua, engine).unwrap();
    let (adm, robot): (mlua::AnyUserData, mlua::AnyUserData) = lua
        .load(
            r#"morc.lib.load "teach"
               local r = require "robots.stacker"
               -- The tour goes back to where the wrist starts (on the circle it can move on with
               -- its orientation held), 40 mm above, then 20 mm above that.
               local p = r:fk({ 90, 400, -60, 400, 60 }, "left_tool").pos
               r:sim_hand {
                 { release = true, enable = true, time = 0.2 },
                 { push = { 10, 0, 0 }, time = 0.3 }, { release = true, enable = true, time = 0.5 },
                 { push = { 0, 0, -15 }, time = 0.5 }, { release = true, enable = false, time = 0.5 },
                 { tour = { { p[1], p[2], p[3] + 40 }, { p[1], p[2], p[3] + 60 } }, stiffness = 300, damping = 40, dwell = 0.2, time = 7 },
                 { release = true, time = 10 },
               }
               return require "lib.teach.components.admittance", r"#,
        )
        .set_name("=teach_no_alloc")
        .eval()
        .unwrap();
    let def = adm.borrow::<morc_lua::LuaKind>().unwrap().0.clone();
    let robot = robot.borrow::<morc_lua::LuaRobot>().unwrap().0.clone();
    (def, robot)
}

fn assembly(adm: &Arc<morc_lua::LuaComponentDef>) -> AssemblySpec {
    let mut a = AssemblySpec::new("guiding-steady");
    a.add("window", "window", 1, allocation_window(1000, 9000));
    let d = adm.clone();
    a.add("adm", &adm.kind, 1, Arc::new(move || Ok(Box::new(morc_lua::LuaComponent::new(d.clone())) as Box<dyn Component>)));
    a.components.last_mut().unwrap().params =
        vec![("n".into(), Value::Integer(5)), ("np".into(), Value::Integer(50)), ("robot".into(), Value::String("robots.stacker".into())), ("group".into(), Value::String("left".into()))];
    for p in ["q", "ft", "enable", "button"] {
        a.connect(&format!("robot.{p}"), &format!("adm.{p}"));
    }
    a.connect("adm.q", "robot.q_cmd").connect("adm.qd", "robot.qd_ff");
    a.add_native("probe", "probe", 1, &[("n", Value::Integer(3)), ("capacity", Value::Integer(20_000))]);
    a.connect("adm.v", "probe.u");
    a.duration = Some(10.0);
    a.memory = Some(4 << 20);
    a
}

#[test]
fn hand_guiding_allocates_nothing_in_steady_state() {
    let period = 0.001;
    let (adm, robot) = setup();
    let q0 = [90f64.to_radians(), 0.4, (-60f64).to_radians(), 0.4, 60f64.to_radians()];
    let config = EngineConfig { period, clock: ClockKind::Virtual, rt: rt::RtPolicy::default() };
    let base = morc_robot::SimulatedRobot::new(robot.clone(), &q0, period).unwrap();
    let mut engine = Engine::start(config, Box::new(base)).unwrap();
    // A first run warms up what blocking on channels caches per thread (the hand's script runs on).
    let warm = engine.run(&assembly(&adm), &AssemblyData::new()).unwrap();
    assert_eq!(warm.outcome, Outcome::Finished("duration".into()), "{:?}", warm.outcome);
    // The hand's script again, from the start, for the counted run.
    robot.hand.publish(robot.hand.current());
    reset_all_thread_allocations();
    let r = engine.run(&assembly(&adm), &AssemblyData::new()).unwrap();
    assert_eq!(r.outcome, Outcome::Finished("duration".into()), "{:?}", r.outcome);
    assert!(!counting_all_threads(), "the window closed");
    assert_allocated_nothing("8 000 steady-state ticks of hand guiding", all_thread_allocations());
    // It guided: the law's velocity reached F/D along x, then along −z (15 N: 0.3 m/s, limited to 0.25).
    let Some(Value::Vector(v)) = r.data.get("probe.u") else { panic!("probe samples") };
    let vx = v.chunks(3).map(|c| c[0]).fold(0.0, f64::max);
    let vz = v.chunks(3).map(|c| c[2]).fold(0.0, f64::min);
    assert!((vx - 0.2).abs() < 0.005 && (vz + 0.25).abs() < 1e-3, "vx {vx}, vz {vz}");
    assert_eq!(r.data.get("adm.taught"), Some(&Value::Integer(2)), "the tour's two points taught");
}
