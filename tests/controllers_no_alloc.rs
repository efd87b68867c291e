//! The controllers library's Lua components (stdlib/controllers: the P-PI cascade and the
//! Cartesian velocity law) and the native Cartesian law allocate nothing from the system
//! allocator in steady state on the engine's thread: a counting global allocator, armed and
//! disarmed from inside the assembly, sees no allocation on any thread.
//! One test in this binary, so no other test allocates concurrently.

use std::sync::Arc;

use morc_test_support::alloc::{all_thread_allocations, assert_allocated_nothing, counting_all_threads, reset_all_thread_allocations, CountingAllocator};
use morc_test_support::doubles::allocation_window;

use morc_kernel::*;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// The library's kinds and the UR5 its Cartesian law runs on, from a program's Lua state.
fn kinds() -> (Arc<morc_lua::LuaComponentDef>, Arc<morc_lua::LuaComponentDef>, Arc<morc_robot::Robot>) {
    let lua = morc_lua::new_state().unwrap();
    let engine = morc_lua::start_engine(EngineConfig::default()).unwrap();
    morc_lua::install(&lua, engine).unwrap();
    let (ppi, cartesian, robot): (mlua::AnyUserData, mlua::AnyUserData, mlua::AnyUserData) = lua
        .load(
            r#"morc.lib.load "controllers"
                 return require "lib.controllers.components.ppi", require "lib.controllers.components.cartesian_velocity", require "robots.ur5""#,
        )
        .set_name("=controllers_no_alloc")
        .eval()
        .unwrap();
    let def = |k: &mlua::AnyUserData| k.borrow::<morc_lua::LuaKind>().unwrap().0.clone();
    let robot_arc = robot.borrow::<morc_lua::LuaRobot>().unwrap().0.clone();
    (def(&ppi), def(&cartesian), robot_arc)
}

fn lua(a: &mut AssemblySpec, name: &str, def: &Arc<morc_lua::LuaComponentDef>, params: Vec<(String, Value)>, robot: Option<&Arc<morc_robot::Robot>>) {
    let (d, robot) = (def.clone(), robot.cloned());
    a.add(
        name,
        &def.kind,
        1,
        Arc::new(move || {
            let c = morc_lua::LuaComponent::new(d.clone());
            // The robot handed to the component (params = { robot = morc.ROBOT }), its model shared.
            Ok(Box::new(match &robot {
                Some(r) => c.with_robot("robot", r.clone()),
                None => c,
            }) as Box<dyn Component>)
        }),
    );
    a.components.last_mut().unwrap().params = params;
}

fn assembly(ppi: &Arc<morc_lua::LuaComponentDef>, cartesian: &Arc<morc_lua::LuaComponentDef>, robot: &Arc<morc_robot::Robot>) -> AssemblySpec {
    let mut a = AssemblySpec::new("controllers-steady");
    a.add("window", "window", 1, allocation_window(1000, 9000));
    let six = |v: f64| Value::Vector(vec![v; 6]);
    a.add_native("x_ref", "sine", 1, &[("n", Value::Integer(6)), ("amplitude", Value::Real(0.05)), ("frequency", Value::Real(0.5)), ("offset", Value::Vector(vec![0.4, 0.1, 0.4, 3.0, 0.1, 0.2]))]);
    a.add_native("v_ref", "sine", 1, &[("n", Value::Integer(6)), ("amplitude", Value::Real(0.1)), ("frequency", Value::Real(0.5))]);
    a.add_native("q_rest", "constant", 1, &[("n", Value::Integer(6)), ("value", six(0.3))]);
    lua(&mut a, "cart_lua", cartesian, vec![("damping".into(), Value::Real(0.05))], Some(robot));
    a.add("cart_rust", "cartesian_velocity", 1, morc_robot::components::factory(robot, "cartesian_velocity").unwrap());
    a.components.last_mut().unwrap().params = vec![("damping".into(), Value::Real(0.05))];
    for c in ["cart_lua", "cart_rust"] {
        a.connect("robot.q", &format!("{c}.q"))
            .connect("x_ref.y", &format!("{c}.x_ref"))
            .connect("v_ref.y", &format!("{c}.v_ref"))
            .connect("q_rest.y", &format!("{c}.q_rest"));
    }
    lua(&mut a, "ppi_lua", ppi, vec![("umax".into(), Value::Real(2.0)), ("umin".into(), Value::Real(-2.0))], None);
    a.connect("x_ref.y", "ppi_lua.q_ref").connect("v_ref.y", "ppi_lua.qd_ref").connect("robot.q", "ppi_lua.q").connect("cart_lua.qd", "ppi_lua.qd");
    a.add_native("probe", "probe", 1, &[("n", Value::Integer(6)), ("capacity", Value::Integer(20_000))]);
    a.add_native("probe_rust", "probe", 1, &[("n", Value::Integer(6)), ("capacity", Value::Integer(20_000))]);
    a.connect("cart_lua.qd", "probe.u").connect("cart_rust.qd", "probe_rust.u");
    a.duration = Some(10.0);
    a.memory = Some(4 << 20);
    a
}

#[test]
fn controllers_library_components_allocate_nothing_in_steady_state() {
    let period = 0.001;
    let config = EngineConfig { period, clock: ClockKind::Virtual, rt: rt::RtPolicy::default() };
    let mut engine = Engine::start(config, Box::new(IdealAxes::new(&[0.2, -1.2, 1.4, -1.6, -1.5, 0.3], period, 1.0))).unwrap();
    let (ppi, cartesian, robot) = kinds();
    // A first run warms up what blocking on channels caches per thread.
    let warm = engine.run(&assembly(&ppi, &cartesian, &robot), &AssemblyData::new()).unwrap();
    assert_eq!(warm.outcome, Outcome::Finished("duration".into()), "{:?}", warm.outcome);
    reset_all_thread_allocations();
    let r = engine.run(&assembly(&ppi, &cartesian, &robot), &AssemblyData::new()).unwrap();
    assert_eq!(r.outcome, Outcome::Finished("duration".into()), "{:?}", r.outcome);
    assert!(!counting_all_threads(), "the window closed");
    assert_allocated_nothing("8 000 steady-state ticks with the controllers' Lua components", all_thread_allocations());
    // Both laws ran and agreed.
    let (Some(Value::Vector(lua)), Some(Value::Vector(rust))) = (r.data.get("probe.u"), r.data.get("probe_rust.u")) else { panic!("probe samples") };
    assert_eq!(lua.len(), 60_000);
    let diff = lua.iter().zip(rust).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(diff <= 1e-12 && lua.iter().any(|x| x.abs() > 1e-3), "lua and rust differ by {diff}");
}
