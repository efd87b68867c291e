//! Lua components on the real-time path allocate nothing from the system allocator in steady
//! state, even when every step creates a table: their Lua states allocate from their threads'
//! pools, and the collector, run in each thread's slack, keeps up. A counting global allocator,
//! armed and disarmed from inside the assembly, sees no allocation on any thread.
//! One test in this binary, so no other test allocates concurrently.

use std::sync::Arc;

use morc_test_support::alloc::{all_thread_allocations, assert_allocated_nothing, counting_all_threads, reset_all_thread_allocations, CountingAllocator};
use morc_test_support::doubles::allocation_window;

use morc_kernel::*;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// A Lua kind defined in a chunk (travels as bytecode): a gain that builds a fresh table of
/// six numbers every step (garbage for the collector) and writes its output in place.
fn garbage_gain() -> Arc<morc_lua::LuaComponentDef> {
    let lua = morc_lua::new_state().unwrap();
    let engine = morc_lua::start_engine(EngineConfig::default()).unwrap();
    morc_lua::install(&lua, engine).unwrap();
    let kind: mlua::AnyUserData = lua
        .load(
            r#"return morc.component { name = "garbage_gain", inputs = { "u[6]" }, outputs = { "y[6]" }, params = { k = 0.5 },
                 step = function(self, inp, out, t)
                   local scratch = { 1, 2, 3, 4, 5, 6, label = "step" }   -- a new table every step
                   for i = 1, 6 do out.y[i] = self.k * inp.u[i] + 0 * scratch[i] end
                 end }"#,
        )
        .set_name("=garbage_gain")
        .eval()
        .unwrap();
    let def = kind.borrow::<morc_lua::LuaKind>().unwrap().0.clone();
    drop(kind);
    def
}

fn assembly(def: &Arc<morc_lua::LuaComponentDef>) -> AssemblySpec {
    let mut a = AssemblySpec::new("lua-steady");
    a.add("window", "window", 1, allocation_window(1000, 19_000));
    let d = def.clone();
    a.add("fast", "garbage_gain", 1, Arc::new(move || Ok(Box::new(morc_lua::LuaComponent::new(d.clone())) as Box<dyn Component>)));
    let d = def.clone();
    // The same kind at a slower rate: a second stepping thread (an Updater) with a state of its own.
    a.add("slow", "garbage_gain", 4, Arc::new(move || Ok(Box::new(morc_lua::LuaComponent::new(d.clone())) as Box<dyn Component>)));
    a.add_native("probe", "probe", 1, &[("n", Value::Integer(6)), ("capacity", Value::Integer(30_000))]);
    a.connect("robot.q", "fast.u").connect("robot.q", "slow.u").connect("fast.y", "probe.u");
    a.duration = Some(20.0);
    a.memory = Some(4 << 20);
    a
}

#[test]
fn lua_components_allocate_nothing_in_steady_state() {
    let period = 0.001;
    let config = EngineConfig { period, clock: ClockKind::Virtual, rt: rt::RtPolicy::default() };
    let mut engine = Engine::start(config, Box::new(IdealAxes::new(&[0.1; 6], period, 1.0))).unwrap();
    let def = garbage_gain();
    // A first run warms up what blocking on channels caches per thread.
    let warm = engine.run(&assembly(&def), &AssemblyData::new()).unwrap();
    assert_eq!(warm.outcome, Outcome::Finished("duration".into()));
    reset_all_thread_allocations();
    let r = engine.run(&assembly(&def), &AssemblyData::new()).unwrap();
    assert_eq!(r.outcome, Outcome::Finished("duration".into()), "{:?}", r.outcome);
    assert!(!counting_all_threads(), "the window closed");
    assert_eq!(r.ticks, 20_000);
    assert_allocated_nothing("18 000 steady-state ticks with Lua components", all_thread_allocations());
    // The gain ran (0.5 · 0.1 on every axis) and the collector worked in the slack, keeping the
    // 4 MB pools from filling with the 20 000 tables each thread made.
    let Some(Value::Vector(y)) = r.data.get("probe.u") else { panic!("probe samples") };
    assert!((y[y.len() - 1] - 0.05).abs() < 1e-12, "gain output {}", y[y.len() - 1]);
    for c in ["fast", "slow"] {
        let steps = r.data.get(&format!("{c}.lua_gc_steps")).map(Value::integer).unwrap_or(0);
        let peak = r.data.get(&format!("{c}.lua_memory_peak")).map(Value::integer).unwrap_or(0);
        assert!(steps > 0, "{c}: the collector ran ({steps} steps)");
        assert!(peak > 0 && peak < 4 << 20, "{c}: pool peak {peak} bytes");
    }
}
