//! `load:compensate_to(out, rot, raw)` allocates nothing once warm, with morc vectors and
//! matrices or plain tables (so a Lua admittance component can call it at every step), and
//! `sim:set_load` neither. A single test in its own binary, counting this thread's allocations.

use morc_test_support::alloc::{allocations_during, assert_allocated_no_more, control_allocation, CountingAllocator};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

const SETUP: &str = r#"
local load = morc.ft.load { mass = 1.5, com = { 0.01, 0.02, 0.08 }, bias = { 1, 2, 3, 0.1, 0.2, 0.3 } }
local R = morc.mat { { 1, 0, 0 }, { 0, 0, -1 }, { 0, 1, 0 } }
local Rt = { { 1, 0, 0 }, { 0, 0, -1 }, { 0, 1, 0 } }
local raw, out, outt = morc.vec { 5, 4, 3, 2, 1, 0 }, morc.vec(6), { 0, 0, 0, 0, 0, 0 }
local rawt = { 5, 4, 3, 2, 1, 0 }
local sim = morc.sim.netft { rate = 1000 }
function step(n)
  for i = 1, n do
    load:compensate_to(out, R, raw)
    load:compensate_to(outt, Rt, rawt)
    rawt[1] = i * 0.001
    sim:set_load(rawt)
  end
  return out[1] + outt[1]
end
"#;

#[test]
fn compensate_to_allocates_nothing_when_warm() {
    let engine = morc_lua::start_engine(morc_kernel::EngineConfig::default()).unwrap();
    let lua = morc_lua::new_state().unwrap();
    morc_lua::install(&lua, engine).unwrap();
    lua.load(SETUP).exec().unwrap();
    let step: mlua::Function = lua.globals().get("step").unwrap();
    for _ in 0..3 {
        step.call::<f64>(100).unwrap();
    }
    let empty = allocations_during(|| {
        step.call::<f64>(0).unwrap();
    });
    let count = allocations_during(|| {
        control_allocation();
        assert!(step.call::<f64>(1000).unwrap().is_finite());
    });
    assert_allocated_no_more("1000 iterations of compensate_to and set_load", count, empty);
}
